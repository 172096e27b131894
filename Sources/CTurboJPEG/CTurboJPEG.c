#include "CTurboJPEG.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int code;
    char message[JMSG_LENGTH_MAX];
} cj_error;

static void cj_error_exit(j_common_ptr cinfo) {
    cj_error *err = (cj_error *)cinfo->err;
    if (err->code == CJ_OK) {
        err->code = err->base.msg_code == JERR_INPUT_EMPTY ? CJ_TRUNCATED : CJ_CORRUPT;
        err->base.format_message(cinfo, err->message);
    }
    longjmp(err->jump, 1);
}

static void cj_emit_message(j_common_ptr cinfo, int level) {
    cj_error *err = (cj_error *)cinfo->err;
    /* A premature end of data is only a warning to libjpeg (it pads with grey); here it ends the decode. */
    if (level < 0 && err->base.msg_code == JWRN_JPEG_EOF) {
        err->code = CJ_TRUNCATED;
        err->base.format_message(cinfo, err->message);
        longjmp(err->jump, 1);
    }
    if (level < 0) err->base.num_warnings++;
}

static void cj_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void cj_error_init(cj_error *err) {
    jpeg_std_error(&err->base);
    err->base.error_exit = cj_error_exit;
    err->base.emit_message = cj_emit_message;
    err->base.output_message = cj_output_message;
    err->code = CJ_OK;
    err->message[0] = 0;
}

/* A file source with a large buffer: libjpeg-turbo's fast Huffman path needs a few KiB of buffered input ahead,
   which the 4 KiB stdio source rarely has. */
typedef struct {
    struct jpeg_source_mgr pub;
    FILE *file;
    JOCTET *buffer;
    size_t capacity;
    boolean at_start;
} cj_file_source;

enum { CJ_FILE_BUFFER = 1 << 18 };

static void cj_file_init(j_decompress_ptr cinfo) { ((cj_file_source *)cinfo->src)->at_start = TRUE; }

static boolean cj_file_fill(j_decompress_ptr cinfo) {
    cj_file_source *src = (cj_file_source *)cinfo->src;
    size_t n = fread(src->buffer, 1, src->capacity, src->file);
    if (n == 0) {
        if (src->at_start) ERREXIT(cinfo, JERR_INPUT_EMPTY);
        WARNMS(cinfo, JWRN_JPEG_EOF);
        src->buffer[0] = (JOCTET)0xFF;
        src->buffer[1] = (JOCTET)JPEG_EOI;
        n = 2;
    }
    src->pub.next_input_byte = src->buffer;
    src->pub.bytes_in_buffer = n;
    src->at_start = FALSE;
    return TRUE;
}

static void cj_file_skip(j_decompress_ptr cinfo, long count) {
    struct jpeg_source_mgr *src = cinfo->src;
    if (count <= 0) return;
    while (count > (long)src->bytes_in_buffer) {
        count -= (long)src->bytes_in_buffer;
        (void)src->fill_input_buffer(cinfo);
    }
    src->next_input_byte += (size_t)count;
    src->bytes_in_buffer -= (size_t)count;
}

static void cj_file_term(j_decompress_ptr cinfo) { (void)cinfo; }

struct cj_decoder {
    struct jpeg_decompress_struct cinfo;
    cj_error err;
    cj_file_source source;
    FILE *file;
    int created;
    int header_read;
    int started;
};

static cj_decoder *cj_decoder_new(void) {
    cj_decoder *d = calloc(1, sizeof(cj_decoder));
    if (!d) return NULL;
    cj_error_init(&d->err);
    d->cinfo.err = &d->err.base;
    if (setjmp(d->err.jump)) {
        jpeg_destroy_decompress(&d->cinfo);
        free(d);
        return NULL;
    }
    jpeg_create_decompress(&d->cinfo);
    d->created = 1;
    return d;
}

cj_decoder *cj_decoder_create_memory(const uint8_t *data, size_t length) {
    cj_decoder *d = cj_decoder_new();
    if (!d) return NULL;
    jpeg_mem_src(&d->cinfo, data, (unsigned long)length);
    return d;
}

cj_decoder *cj_decoder_create_file(const char *path) {
    FILE *f = fopen(path, "rbe");
    if (!f) return NULL;
    cj_decoder *d = cj_decoder_new();
    if (!d) {
        fclose(f);
        return NULL;
    }
    d->source.buffer = malloc(CJ_FILE_BUFFER);
    if (!d->source.buffer) {
        fclose(f);
        cj_decoder_destroy(d);
        return NULL;
    }
    d->file = f;
    d->source.file = f;
    d->source.capacity = CJ_FILE_BUFFER;
    d->source.pub.init_source = cj_file_init;
    d->source.pub.fill_input_buffer = cj_file_fill;
    d->source.pub.skip_input_data = cj_file_skip;
    d->source.pub.resync_to_restart = jpeg_resync_to_restart;
    d->source.pub.term_source = cj_file_term;
    d->cinfo.src = &d->source.pub;
    return d;
}

void cj_decoder_destroy(cj_decoder *d) {
    if (!d) return;
    if (d->created) jpeg_destroy_decompress(&d->cinfo);
    if (d->file) fclose(d->file);
    free(d->source.buffer);
    free(d);
}

const char *cj_decoder_message(const cj_decoder *d) { return d->err.message; }

int cj_decoder_read_header(cj_decoder *d, int *width, int *height, int *components) {
    if (setjmp(d->err.jump)) return d->err.code;
    if (jpeg_read_header(&d->cinfo, TRUE) != JPEG_HEADER_OK) {
        snprintf(d->err.message, sizeof d->err.message, "no image in the JPEG data");
        d->err.code = CJ_CORRUPT;
        return CJ_CORRUPT;
    }
    d->header_read = 1;
    *width = (int)d->cinfo.image_width;
    *height = (int)d->cinfo.image_height;
    *components = d->cinfo.num_components;
    return CJ_OK;
}

int cj_decoder_start(cj_decoder *d, int scale_denom, int *out_width, int *out_height) {
    if (setjmp(d->err.jump)) return d->err.code;
    d->cinfo.out_color_space = JCS_EXT_RGBA;
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = (unsigned int)scale_denom;
    d->cinfo.dct_method = JDCT_ISLOW;
    /* Scaled decodes are averaged down further by the caller: smooth chroma upsampling buys nothing there. */
    d->cinfo.do_fancy_upsampling = scale_denom > 1 ? FALSE : TRUE;
    jpeg_start_decompress(&d->cinfo);
    d->started = 1;
    *out_width = (int)d->cinfo.output_width;
    *out_height = (int)d->cinfo.output_height;
    return CJ_OK;
}

int cj_decoder_read_rows(cj_decoder *d, uint8_t *buffer, size_t stride, int max_rows, int *rows_read) {
    *rows_read = 0;
    if (setjmp(d->err.jump)) return d->err.code;
    int done = 0;
    while (done < max_rows && d->cinfo.output_scanline < d->cinfo.output_height) {
        JSAMPROW rows[16];
        int want = max_rows - done;
        if (want > 16) want = 16;
        for (int i = 0; i < want; i++) rows[i] = buffer + (size_t)(done + i) * stride;
        JDIMENSION got = jpeg_read_scanlines(&d->cinfo, rows, (JDIMENSION)want);
        if (got == 0) break;
        done += (int)got;
        *rows_read = done;
    }
    return CJ_OK;
}

int cj_decoder_start_columns(cj_decoder *d, int components, int *x_offset, int *width, int *out_height) {
    if (setjmp(d->err.jump)) return d->err.code;
    d->cinfo.out_color_space = components == 3 ? JCS_RGB : JCS_EXT_RGBA;
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = 1;
    d->cinfo.dct_method = JDCT_ISLOW;
    d->cinfo.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&d->cinfo);
    d->started = 1;
    if (*x_offset < 0 || *width <= 0 || (JDIMENSION)*x_offset + (JDIMENSION)*width > d->cinfo.output_width) {
        snprintf(d->err.message, sizeof d->err.message, "columns %d+%d outside an image %u wide", *x_offset, *width,
                 d->cinfo.output_width);
        d->err.code = CJ_CORRUPT;
        return CJ_CORRUPT;
    }
    if (*x_offset > 0 || (JDIMENSION)*width < d->cinfo.output_width) {
        JDIMENSION offset = (JDIMENSION)*x_offset;
        JDIMENSION columns = (JDIMENSION)*width;
        jpeg_crop_scanline(&d->cinfo, &offset, &columns);
        *x_offset = (int)offset;
        *width = (int)columns;
    } else {
        *x_offset = 0;
        *width = (int)d->cinfo.output_width;
    }
    *out_height = (int)d->cinfo.output_height;
    return CJ_OK;
}

int cj_decoder_skip_rows(cj_decoder *d, int count, int *skipped) {
    *skipped = 0;
    if (setjmp(d->err.jump)) return d->err.code;
    if (count > 0) *skipped = (int)jpeg_skip_scanlines(&d->cinfo, (JDIMENSION)count);
    return CJ_OK;
}

struct cj_encoder {
    struct jpeg_compress_struct cinfo;
    cj_error err;
    struct jpeg_destination_mgr dest;
    unsigned char *out;
    size_t out_capacity;
    size_t out_length;
    int fd; /* >= 0: the destination is this file descriptor (out is then a fixed-size buffer) */
    int created;
    int started;
};

/* A growing memory destination owned by the encoder (freed only by cj_encoder_destroy). */
static void cj_dest_init(j_compress_ptr cinfo) {
    cj_encoder *e = (cj_encoder *)cinfo->client_data;
    if (!e->out) {
        e->out_capacity = 65536;
        e->out = malloc(e->out_capacity);
        if (!e->out) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    }
    e->out_length = 0;
    e->dest.next_output_byte = e->out;
    e->dest.free_in_buffer = e->out_capacity;
}

static boolean cj_dest_empty(j_compress_ptr cinfo) {
    cj_encoder *e = (cj_encoder *)cinfo->client_data;
    size_t capacity = e->out_capacity * 2;
    unsigned char *grown = realloc(e->out, capacity);
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 11);
    e->out = grown;
    e->dest.next_output_byte = grown + e->out_capacity;
    e->dest.free_in_buffer = capacity - e->out_capacity;
    e->out_capacity = capacity;
    return TRUE;
}

static void cj_dest_term(j_compress_ptr cinfo) {
    cj_encoder *e = (cj_encoder *)cinfo->client_data;
    e->out_length = e->out_capacity - e->dest.free_in_buffer;
}

/* A file descriptor destination: a fixed buffer flushed with write(2); a failed write ends the encode (CJ_IO). */
enum { CJ_FD_BUFFER = 1 << 18 };

static void cj_fd_flush(j_compress_ptr cinfo, size_t count) {
    cj_encoder *e = (cj_encoder *)cinfo->client_data;
    size_t done = 0;
    while (done < count) {
        ssize_t n = write(e->fd, e->out + done, count - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (e->err.code == CJ_OK) {
                e->err.code = CJ_IO;
                snprintf(e->err.message, sizeof e->err.message, "write failed: %s", strerror(n < 0 ? errno : EIO));
            }
            longjmp(e->err.jump, 1);
        }
        done += (size_t)n;
    }
    e->out_length += count;
}

static void cj_fd_init(j_compress_ptr cinfo) {
    cj_encoder *e = (cj_encoder *)cinfo->client_data;
    e->out_length = 0;
    e->dest.next_output_byte = e->out;
    e->dest.free_in_buffer = e->out_capacity;
}

static boolean cj_fd_empty(j_compress_ptr cinfo) {
    cj_encoder *e = (cj_encoder *)cinfo->client_data;
    cj_fd_flush(cinfo, e->out_capacity);
    e->dest.next_output_byte = e->out;
    e->dest.free_in_buffer = e->out_capacity;
    return TRUE;
}

static void cj_fd_term(j_compress_ptr cinfo) {
    cj_encoder *e = (cj_encoder *)cinfo->client_data;
    cj_fd_flush(cinfo, e->out_capacity - e->dest.free_in_buffer);
    e->dest.next_output_byte = e->out;
    e->dest.free_in_buffer = e->out_capacity;
}

static cj_encoder *cj_encoder_new(void) {
    cj_encoder *e = calloc(1, sizeof(cj_encoder));
    if (!e) return NULL;
    cj_error_init(&e->err);
    e->cinfo.err = &e->err.base;
    if (setjmp(e->err.jump)) {
        jpeg_destroy_compress(&e->cinfo);
        free(e);
        return NULL;
    }
    jpeg_create_compress(&e->cinfo);
    e->created = 1;
    e->cinfo.client_data = e;
    e->fd = -1;
    e->dest.init_destination = cj_dest_init;
    e->dest.empty_output_buffer = cj_dest_empty;
    e->dest.term_destination = cj_dest_term;
    return e;
}

cj_encoder *cj_encoder_create(void) { return cj_encoder_new(); }

cj_encoder *cj_encoder_create_fd(int fd) {
    cj_encoder *e = cj_encoder_new();
    if (!e) return NULL;
    e->out = malloc(CJ_FD_BUFFER);
    if (!e->out) {
        cj_encoder_destroy(e);
        return NULL;
    }
    e->out_capacity = CJ_FD_BUFFER;
    e->fd = fd;
    e->dest.init_destination = cj_fd_init;
    e->dest.empty_output_buffer = cj_fd_empty;
    e->dest.term_destination = cj_fd_term;
    return e;
}

int cj_encoder_start(cj_encoder *e, int width, int height, int quality, const uint8_t *app1, size_t app1_length) {
    return cj_encoder_start_components(e, width, height, quality, 4, app1, app1_length);
}

int cj_encoder_start_components(cj_encoder *e, int width, int height, int quality, int components,
                                const uint8_t *app1, size_t app1_length) {
    if (setjmp(e->err.jump)) return e->err.code;
    if (app1_length > 65533) {
        snprintf(e->err.message, sizeof e->err.message, "APP1 payload of %zu bytes exceeds 65533", app1_length);
        e->err.code = CJ_CORRUPT;
        return CJ_CORRUPT;
    }
    e->cinfo.dest = &e->dest;
    e->cinfo.image_width = (JDIMENSION)width;
    e->cinfo.image_height = (JDIMENSION)height;
    e->cinfo.input_components = components == 3 ? 3 : 4;
    e->cinfo.in_color_space = components == 3 ? JCS_RGB : JCS_EXT_RGBA;
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, quality, TRUE);
    e->cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_compress(&e->cinfo, TRUE);
    e->started = 1;
    if (app1 && app1_length > 0) jpeg_write_marker(&e->cinfo, JPEG_APP0 + 1, app1, (unsigned int)app1_length);
    return CJ_OK;
}

int cj_encoder_write_rows(cj_encoder *e, const uint8_t *rows, size_t stride, int row_count) {
    if (setjmp(e->err.jump)) return e->err.code;
    int done = 0;
    while (done < row_count) {
        JSAMPROW ptrs[16];
        int n = row_count - done;
        if (n > 16) n = 16;
        for (int i = 0; i < n; i++) ptrs[i] = (JSAMPROW)(rows + (size_t)(done + i) * stride);
        JDIMENSION wrote = jpeg_write_scanlines(&e->cinfo, ptrs, (JDIMENSION)n);
        if (wrote == 0) {
            snprintf(e->err.message, sizeof e->err.message, "more rows than the image height");
            e->err.code = CJ_CORRUPT;
            return CJ_CORRUPT;
        }
        done += (int)wrote;
    }
    return CJ_OK;
}

int cj_encoder_finish(cj_encoder *e, const uint8_t **bytes, size_t *length) {
    if (setjmp(e->err.jump)) return e->err.code;
    jpeg_finish_compress(&e->cinfo);
    *bytes = e->fd >= 0 ? NULL : e->out;
    *length = e->out_length;
    return CJ_OK;
}

const char *cj_encoder_message(const cj_encoder *e) { return e->err.message; }

void cj_encoder_destroy(cj_encoder *e) {
    if (!e) return;
    if (e->created) jpeg_destroy_compress(&e->cinfo);
    free(e->out);
    free(e);
}
