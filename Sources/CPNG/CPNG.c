#include "CPNG.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

struct cpng_decoder {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t length;
    size_t position;
    FILE *file;
    int code;
    char message[200];
};

static void cpng_error(png_structp png, png_const_charp message) {
    cpng_decoder *d = png_get_error_ptr(png);
    if (d->code == CPNG_OK) {
        d->code = CPNG_CORRUPT;
        snprintf(d->message, sizeof d->message, "%s", message);
    }
    png_longjmp(png, 1);
}

static void cpng_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void cpng_read(png_structp png, png_bytep out, size_t count) {
    cpng_decoder *d = png_get_io_ptr(png);
    if (d->file) {
        if (fread(out, 1, count, d->file) != count) {
            d->code = CPNG_TRUNCATED;
            snprintf(d->message, sizeof d->message, "the PNG data ends early");
            png_error(png, "the PNG data ends early");
        }
        return;
    }
    if (count > d->length - d->position) {
        d->code = CPNG_TRUNCATED;
        snprintf(d->message, sizeof d->message, "the PNG data ends early");
        png_error(png, "the PNG data ends early");
    }
    memcpy(out, d->data + d->position, count);
    d->position += count;
}

static cpng_decoder *cpng_decoder_new(void) {
    cpng_decoder *d = calloc(1, sizeof(cpng_decoder));
    if (!d) return NULL;
    d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, cpng_error, cpng_warning);
    if (!d->png) {
        free(d);
        return NULL;
    }
    d->info = png_create_info_struct(d->png);
    if (!d->info) {
        png_destroy_read_struct(&d->png, NULL, NULL);
        free(d);
        return NULL;
    }
    png_set_read_fn(d->png, d, cpng_read);
    /* Decoded-size limits are the caller's (checked before any pixel allocation); chunk memory stays bounded. */
    png_set_user_limits(d->png, 0x7fffffff, 0x7fffffff);
    png_set_chunk_malloc_max(d->png, 8u << 20);
    /* The ancillary chunks the pixels do not need are skipped unread: libpng's own handler for eXIf allocates the
       length a chunk declares (256 MiB from a file of a few hundred bytes) without the limit above. Metadata is
       read by ImageMetadata; tRNS stays (transparency). */
    static const png_byte skipped[] = "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0pHYs\0sBIT\0sCAL\0"
                                      "sPLT\0sRGB\0tEXt\0tIME\0zTXt";
    png_set_keep_unknown_chunks(d->png, PNG_HANDLE_CHUNK_NEVER, skipped, (int)(sizeof skipped / 5));
    return d;
}

cpng_decoder *cpng_decoder_create_memory(const uint8_t *data, size_t length) {
    cpng_decoder *d = cpng_decoder_new();
    if (!d) return NULL;
    d->data = data;
    d->length = length;
    return d;
}

cpng_decoder *cpng_decoder_create_file(const char *path) {
    FILE *f = fopen(path, "rbe");
    if (!f) return NULL;
    cpng_decoder *d = cpng_decoder_new();
    if (!d) {
        fclose(f);
        return NULL;
    }
    d->file = f;
    return d;
}

void cpng_decoder_destroy(cpng_decoder *d) {
    if (!d) return;
    png_destroy_read_struct(&d->png, &d->info, NULL);
    if (d->file) fclose(d->file);
    free(d);
}

const char *cpng_decoder_message(const cpng_decoder *d) { return d->message; }

int cpng_decoder_read_info(cpng_decoder *d, uint32_t *width, uint32_t *height, int *passes) {
    if (setjmp(png_jmpbuf(d->png))) return d->code;
    png_read_info(d->png, d->info);
    png_uint_32 w = 0, h = 0;
    int depth = 0, color = 0, interlace = 0;
    png_get_IHDR(d->png, d->info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(d->png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(d->png);
    if (png_get_valid(d->png, d->info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(d->png);
    if (depth == 16) png_set_strip_16(d->png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(d->png);
    png_set_filler(d->png, 0xFF, PNG_FILLER_AFTER);
    *passes = png_set_interlace_handling(d->png);
    png_read_update_info(d->png, d->info);
    if (png_get_rowbytes(d->png, d->info) != (size_t)w * 4) {
        d->code = CPNG_CORRUPT;
        snprintf(d->message, sizeof d->message, "unexpected PNG row layout");
        return CPNG_CORRUPT;
    }
    *width = w;
    *height = h;
    return CPNG_OK;
}

int cpng_decoder_read_rows(cpng_decoder *d, uint8_t *buffer, size_t stride, uint32_t row_count) {
    if (setjmp(png_jmpbuf(d->png))) return d->code;
    for (uint32_t i = 0; i < row_count; i++) png_read_row(d->png, buffer + (size_t)i * stride, NULL);
    return CPNG_OK;
}

int cpng_decoder_read_image(cpng_decoder *d, uint8_t *buffer, size_t stride) {
    if (setjmp(png_jmpbuf(d->png))) return d->code;
    png_uint_32 h = png_get_image_height(d->png, d->info);
    int passes = png_set_interlace_handling(d->png);
    for (int pass = 0; pass < passes; pass++)
        for (png_uint_32 y = 0; y < h; y++) png_read_row(d->png, buffer + (size_t)y * stride, NULL);
    return CPNG_OK;
}

typedef struct {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
    int failed;
    char *message;
    size_t message_capacity;
} cpng_sink;

static void cpng_write(png_structp png, png_bytep data, size_t count) {
    cpng_sink *s = png_get_io_ptr(png);
    if (count > s->capacity - s->length) {
        size_t capacity = s->capacity ? s->capacity : 65536;
        while (count > capacity - s->length) capacity *= 2;
        uint8_t *grown = realloc(s->bytes, capacity);
        if (!grown) png_error(png, "out of memory");
        s->bytes = grown;
        s->capacity = capacity;
    }
    memcpy(s->bytes + s->length, data, count);
    s->length += count;
}

static void cpng_flush(png_structp png) { (void)png; }

static void cpng_write_error(png_structp png, png_const_charp message) {
    cpng_sink *s = png_get_error_ptr(png);
    if (s->message_capacity) snprintf(s->message, s->message_capacity, "%s", message);
    png_longjmp(png, 1);
}

int cpng_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int interlaced,
                     uint8_t **bytes, size_t *length, char *message, size_t message_capacity) {
    cpng_sink sink = {0};
    sink.message = message;
    sink.message_capacity = message_capacity;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, cpng_write_error, cpng_warning);
    if (!png) return CPNG_CORRUPT;
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(sink.bytes);
        return CPNG_CORRUPT;
    }
    png_set_write_fn(png, &sink, cpng_write, cpng_flush);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB_ALPHA,
                 interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    int passes = interlaced ? png_set_interlace_handling(png) : 1;
    for (int pass = 0; pass < passes; pass++)
        for (uint32_t y = 0; y < height; y++) png_write_row(png, pixels + (size_t)y * stride);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *bytes = sink.bytes;
    *length = sink.length;
    return CPNG_OK;
}

void cpng_free(void *pointer) { free(pointer); }
