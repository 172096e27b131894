#include "CHeif.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libheif/heif.h>

#include <dlfcn.h>
#include <pthread.h>

/* libheif, and the codecs it links (x265, libde265, aom, dav1d), are loaded on first use rather than at process
   start: a process that never meets a HEIF file does not map and relocate them. Every libheif call below goes
   through a pointer resolved once. */
#define CHEIF_FUNCTIONS(X) \
    X(heif_context_add_exif_metadata) \
    X(heif_context_alloc) \
    X(heif_context_encode_image) \
    X(heif_context_free) \
    X(heif_context_get_encoder_descriptors) \
    X(heif_context_get_encoder_for_format) \
    X(heif_context_get_primary_image_handle) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_read_from_reader) \
    X(heif_context_set_maximum_image_size_limit) \
    X(heif_context_write) \
    X(heif_decode_image) \
    X(heif_encoder_release) \
    X(heif_encoder_set_lossy_quality) \
    X(heif_image_add_plane) \
    X(heif_image_create) \
    X(heif_image_get_height) \
    X(heif_image_get_plane) \
    X(heif_image_get_plane_readonly) \
    X(heif_image_get_width) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_ispe_height) \
    X(heif_image_handle_get_ispe_width) \
    X(heif_image_handle_get_list_of_metadata_block_IDs) \
    X(heif_image_handle_get_metadata) \
    X(heif_image_handle_get_metadata_size) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_release) \
    X(heif_image_release)

#define CHEIF_POINTER(name) static __typeof__(&name) cheif_##name;
CHEIF_FUNCTIONS(CHEIF_POINTER)

static int cheif_loaded;
static pthread_once_t cheif_once = PTHREAD_ONCE_INIT;

static void cheif_load_once(void) {
    void *library = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define CHEIF_RESOLVE(name)                                                                                          \
    cheif_##name = (__typeof__(&name))dlsym(library, #name);                                                        \
    if (!cheif_##name) return;
    CHEIF_FUNCTIONS(CHEIF_RESOLVE)
    cheif_loaded = 1;
}

/* 1 once libheif is loaded (loading it the first time), 0 when it cannot be. */
static int cheif_load(void) {
    pthread_once(&cheif_once, cheif_load_once);
    return cheif_loaded;
}

#define heif_context_add_exif_metadata cheif_heif_context_add_exif_metadata
#define heif_context_alloc cheif_heif_context_alloc
#define heif_context_encode_image cheif_heif_context_encode_image
#define heif_context_free cheif_heif_context_free
#define heif_context_get_encoder_descriptors cheif_heif_context_get_encoder_descriptors
#define heif_context_get_encoder_for_format cheif_heif_context_get_encoder_for_format
#define heif_context_get_primary_image_handle cheif_heif_context_get_primary_image_handle
#define heif_context_read_from_memory_without_copy cheif_heif_context_read_from_memory_without_copy
#define heif_context_read_from_reader cheif_heif_context_read_from_reader
#define heif_context_set_maximum_image_size_limit cheif_heif_context_set_maximum_image_size_limit
#define heif_context_write cheif_heif_context_write
#define heif_decode_image cheif_heif_decode_image
#define heif_encoder_release cheif_heif_encoder_release
#define heif_encoder_set_lossy_quality cheif_heif_encoder_set_lossy_quality
#define heif_image_add_plane cheif_heif_image_add_plane
#define heif_image_create cheif_heif_image_create
#define heif_image_get_height cheif_heif_image_get_height
#define heif_image_get_plane cheif_heif_image_get_plane
#define heif_image_get_plane_readonly cheif_heif_image_get_plane_readonly
#define heif_image_get_width cheif_heif_image_get_width
#define heif_image_handle_get_height cheif_heif_image_handle_get_height
#define heif_image_handle_get_ispe_height cheif_heif_image_handle_get_ispe_height
#define heif_image_handle_get_ispe_width cheif_heif_image_handle_get_ispe_width
#define heif_image_handle_get_list_of_metadata_block_IDs cheif_heif_image_handle_get_list_of_metadata_block_IDs
#define heif_image_handle_get_metadata cheif_heif_image_handle_get_metadata
#define heif_image_handle_get_metadata_size cheif_heif_image_handle_get_metadata_size
#define heif_image_handle_get_width cheif_heif_image_handle_get_width
#define heif_image_handle_release cheif_heif_image_handle_release
#define heif_image_release cheif_heif_image_release

typedef struct {
    const uint8_t *data;
    size_t available;
    size_t file_length;
    size_t position;
    /* One past the furthest byte libheif asked for beyond `available`; 0 when it never did. */
    size_t needed;
} cheif_prefix;

/* A file read through a descriptor of our own, opened close-on-exec (libheif's own file reader opens it without,
   and keeps it open while the context lives: a child the app spawns meanwhile would inherit it). */
typedef struct {
    int fd;
    int64_t length;
    int64_t position;
} cheif_source;

struct cheif_file {
    struct heif_context *context;
    struct heif_image_handle *primary;
    cheif_prefix *prefix;
    cheif_source *source;
};

static int64_t cheif_prefix_position(void *userdata) { return (int64_t)((cheif_prefix *)userdata)->position; }

/* Reads inside the file but past the prefix are answered with zeros and remembered in `needed` (libheif
   asserts that a read it checked against the file size succeeds, so failing it would abort the process). */
static int cheif_prefix_read(void *data, size_t size, void *userdata) {
    cheif_prefix *p = userdata;
    if (p->position > p->file_length || size > p->file_length - p->position) return 1;
    size_t have = p->position < p->available ? p->available - p->position : 0;
    if (have > size) have = size;
    if (have) memcpy(data, p->data + p->position, have);
    if (have < size) {
        memset((uint8_t *)data + have, 0, size - have);
        if (p->position + size > p->needed) p->needed = p->position + size;
    }
    p->position += size;
    return 0;
}

static int cheif_prefix_seek(int64_t position, void *userdata) {
    cheif_prefix *p = userdata;
    if (position < 0 || (uint64_t)position > p->file_length) return 1;
    p->position = (size_t)position;
    return 0;
}

static enum heif_reader_grow_status cheif_prefix_wait(int64_t target_size, void *userdata) {
    cheif_prefix *p = userdata;
    return target_size >= 0 && (uint64_t)target_size <= p->file_length ? heif_reader_grow_status_size_reached
                                                                         : heif_reader_grow_status_size_beyond_eof;
}

static const struct heif_reader cheif_prefix_reader = {
    1, cheif_prefix_position, cheif_prefix_read, cheif_prefix_seek, cheif_prefix_wait,
};

static int64_t cheif_source_position(void *userdata) { return ((cheif_source *)userdata)->position; }

/* A read inside the length the file had when opened; bytes it no longer has (truncated meanwhile) read as zeros,
   for the reason given at the prefix reader. */
static int cheif_source_read(void *data, size_t size, void *userdata) {
    cheif_source *s = userdata;
    if (s->position < 0 || s->position > s->length || (int64_t)size > s->length - s->position) return 1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(s->fd, (uint8_t *)data + done, size - done, (off_t)(s->position + (int64_t)done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    if (done < size) memset((uint8_t *)data + done, 0, size - done);
    s->position += (int64_t)size;
    return 0;
}

static int cheif_source_seek(int64_t position, void *userdata) {
    cheif_source *s = userdata;
    if (position < 0 || position > s->length) return 1;
    s->position = position;
    return 0;
}

static enum heif_reader_grow_status cheif_source_wait(int64_t target_size, void *userdata) {
    cheif_source *s = userdata;
    return target_size >= 0 && target_size <= s->length ? heif_reader_grow_status_size_reached
                                                         : heif_reader_grow_status_size_beyond_eof;
}

static const struct heif_reader cheif_source_reader = {
    1, cheif_source_position, cheif_source_read, cheif_source_seek, cheif_source_wait,
};

struct cheif_image {
    struct heif_image *image;
};

static void cheif_message(char *message, size_t capacity, const char *text) {
    if (capacity) snprintf(message, capacity, "%s", text ? text : "libheif error");
}

static cheif_file *cheif_finish_open(struct heif_context *context, struct heif_error err, char *message,
                                     size_t capacity) {
    if (err.code != heif_error_Ok) {
        cheif_message(message, capacity, err.message);
        heif_context_free(context);
        return NULL;
    }
    struct heif_image_handle *primary = NULL;
    err = heif_context_get_primary_image_handle(context, &primary);
    if (err.code != heif_error_Ok) {
        cheif_message(message, capacity, err.message);
        heif_context_free(context);
        return NULL;
    }
    cheif_file *file = calloc(1, sizeof(cheif_file));
    if (!file) {
        heif_image_handle_release(primary);
        heif_context_free(context);
        cheif_message(message, capacity, "out of memory");
        return NULL;
    }
    file->context = context;
    file->primary = primary;
    return file;
}

/* A new libheif context, loading libheif first; NULL (and the reason in `message`) when it cannot be had. */
static struct heif_context *cheif_new_context(char *message, size_t capacity) {
    if (!cheif_load()) {
        cheif_message(message, capacity, "libheif (libheif1) could not be loaded");
        return NULL;
    }
    struct heif_context *context = heif_context_alloc();
    if (!context) cheif_message(message, capacity, "out of memory");
    return context;
}

cheif_file *cheif_open_memory(const uint8_t *data, size_t length, char *message, size_t capacity) {
    struct heif_context *context = cheif_new_context(message, capacity);
    if (!context) return NULL;
    struct heif_error err = heif_context_read_from_memory_without_copy(context, data, length, NULL);
    return cheif_finish_open(context, err, message, capacity);
}

cheif_file *cheif_open_path(const char *path, char *message, size_t capacity) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cheif_message(message, capacity, strerror(errno));
        return NULL;
    }
    struct stat info;
    cheif_source *source = calloc(1, sizeof(cheif_source));
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || !source) {
        cheif_message(message, capacity, source ? "not a regular file" : "out of memory");
        free(source);
        close(fd);
        return NULL;
    }
    source->fd = fd;
    source->length = (int64_t)info.st_size;
    struct heif_context *context = cheif_new_context(message, capacity);
    cheif_file *file = NULL;
    if (context) {
        struct heif_error err = heif_context_read_from_reader(context, &cheif_source_reader, source, NULL);
        file = cheif_finish_open(context, err, message, capacity);
    }
    if (!file) {
        close(fd);
        free(source);
        return NULL;
    }
    file->source = source;
    return file;
}

cheif_file *cheif_open_prefix(const uint8_t *data, size_t available, size_t file_length, size_t *needed,
                              char *message, size_t capacity) {
    *needed = 0;
    struct heif_context *context = cheif_new_context(message, capacity);
    if (!context) return NULL;
    cheif_prefix *prefix = calloc(1, sizeof(cheif_prefix));
    if (!prefix) {
        heif_context_free(context);
        cheif_message(message, capacity, "out of memory");
        return NULL;
    }
    prefix->data = data;
    prefix->available = available;
    prefix->file_length = file_length;
    struct heif_error err = heif_context_read_from_reader(context, &cheif_prefix_reader, prefix, NULL);
    cheif_file *file = cheif_finish_open(context, err, message, capacity);
    *needed = prefix->needed;
    if (!file) {
        free(prefix);
        return NULL;
    }
    file->prefix = prefix;
    return file;
}

size_t cheif_prefix_needed(const cheif_file *file) { return file->prefix ? file->prefix->needed : 0; }

void cheif_close(cheif_file *file) {
    if (!file) return;
    heif_image_handle_release(file->primary);
    heif_context_free(file->context);
    free(file->prefix);
    if (file->source) close(file->source->fd);
    free(file->source);
    free(file);
}

void cheif_primary_size(const cheif_file *file, int *width, int *height) {
    *width = heif_image_handle_get_width(file->primary);
    *height = heif_image_handle_get_height(file->primary);
}

void cheif_primary_stored_size(const cheif_file *file, int *width, int *height) {
    *width = heif_image_handle_get_ispe_width(file->primary);
    *height = heif_image_handle_get_ispe_height(file->primary);
}

static heif_item_id cheif_exif_id(const cheif_file *file, int *found) {
    heif_item_id id = 0;
    *found = heif_image_handle_get_list_of_metadata_block_IDs(file->primary, "Exif", &id, 1) > 0;
    return id;
}

size_t cheif_exif_size(const cheif_file *file) {
    int found = 0;
    heif_item_id id = cheif_exif_id(file, &found);
    if (!found) return 0;
    return heif_image_handle_get_metadata_size(file->primary, id);
}

int cheif_exif_copy(const cheif_file *file, uint8_t *buffer, size_t capacity) {
    int found = 0;
    heif_item_id id = cheif_exif_id(file, &found);
    if (!found || heif_image_handle_get_metadata_size(file->primary, id) > capacity) return CHEIF_ERROR;
    struct heif_error err = heif_image_handle_get_metadata(file->primary, id, buffer);
    return err.code == heif_error_Ok ? CHEIF_OK : CHEIF_ERROR;
}

cheif_image *cheif_decode_primary(cheif_file *file, char *message, size_t capacity) {
    /* A grid or overlay image is composed on a canvas of the size its own descriptor gives, which libheif does
       not check against the item's ispe: the canvas may be no larger than the declared sizes on either side. */
    int side = heif_image_handle_get_width(file->primary);
    int sizes[3] = {heif_image_handle_get_height(file->primary), heif_image_handle_get_ispe_width(file->primary),
                    heif_image_handle_get_ispe_height(file->primary)};
    for (int i = 0; i < 3; i++)
        if (sizes[i] > side) side = sizes[i];
    if (side > 0 && side < 32767) heif_context_set_maximum_image_size_limit(file->context, side + 1);
    struct heif_image *image = NULL;
    struct heif_error err =
        heif_decode_image(file->primary, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, NULL);
    if (err.code != heif_error_Ok) {
        cheif_message(message, capacity, err.message);
        return NULL;
    }
    cheif_image *result = calloc(1, sizeof(cheif_image));
    if (!result) {
        heif_image_release(image);
        cheif_message(message, capacity, "out of memory");
        return NULL;
    }
    result->image = image;
    return result;
}

const uint8_t *cheif_image_pixels(const cheif_image *image, int *width, int *height, int *stride) {
    *width = heif_image_get_width(image->image, heif_channel_interleaved);
    *height = heif_image_get_height(image->image, heif_channel_interleaved);
    return heif_image_get_plane_readonly(image->image, heif_channel_interleaved, stride);
}

void cheif_image_free(cheif_image *image) {
    if (!image) return;
    heif_image_release(image->image);
    free(image);
}

int cheif_can_encode(void) {
    if (!cheif_load()) return 0;
    const struct heif_encoder_descriptor *descriptor = NULL;
    return heif_context_get_encoder_descriptors(NULL, heif_compression_HEVC, NULL, &descriptor, 1) > 0;
}

typedef struct {
    uint8_t *bytes;
    size_t length;
} cheif_sink;

static struct heif_error cheif_write(struct heif_context *context, const void *data, size_t size, void *userdata) {
    (void)context;
    cheif_sink *sink = userdata;
    struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "ok"};
    struct heif_error failed = {heif_error_Encoding_error, heif_suberror_Cannot_write_output_data, "out of memory"};
    sink->bytes = malloc(size ? size : 1);
    if (!sink->bytes) return failed;
    memcpy(sink->bytes, data, size);
    sink->length = size;
    return ok;
}

int cheif_encode_rgba(const uint8_t *pixels, int width, int height, size_t stride, int quality, const uint8_t *exif,
                      size_t exif_length, uint8_t **bytes, size_t *length, char *message, size_t capacity) {
    if (!cheif_load()) {
        cheif_message(message, capacity, "libheif (libheif1) could not be loaded");
        return CHEIF_UNSUPPORTED;
    }
    struct heif_context *context = heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_image_handle *handle = NULL;
    int result = CHEIF_ERROR;
    cheif_sink sink = {0};
    if (!context) {
        cheif_message(message, capacity, "out of memory");
        return CHEIF_ERROR;
    }
    struct heif_error err = heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder);
    if (err.code != heif_error_Ok) {
        cheif_message(message, capacity, err.message);
        result = CHEIF_UNSUPPORTED;
        goto done;
    }
    heif_encoder_set_lossy_quality(encoder, quality);
    err = heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
    if (err.code != heif_error_Ok) goto fail;
    err = heif_image_add_plane(image, heif_channel_interleaved, width, height, 8);
    if (err.code != heif_error_Ok) goto fail;
    int plane_stride = 0;
    uint8_t *plane = heif_image_get_plane(image, heif_channel_interleaved, &plane_stride);
    for (int y = 0; y < height; y++) {
        const uint8_t *in = pixels + (size_t)y * stride;
        uint8_t *out = plane + (size_t)y * (size_t)plane_stride;
        for (int x = 0; x < width; x++) {
            out[3 * x] = in[4 * x];
            out[3 * x + 1] = in[4 * x + 1];
            out[3 * x + 2] = in[4 * x + 2];
        }
    }
    err = heif_context_encode_image(context, image, encoder, NULL, &handle);
    if (err.code != heif_error_Ok) goto fail;
    if (exif && exif_length > 0) {
        err = heif_context_add_exif_metadata(context, handle, exif, (int)exif_length);
        if (err.code != heif_error_Ok) goto fail;
    }
    struct heif_writer writer = {1, cheif_write};
    err = heif_context_write(context, &writer, &sink);
    if (err.code != heif_error_Ok) goto fail;
    *bytes = sink.bytes;
    *length = sink.length;
    sink.bytes = NULL;
    result = CHEIF_OK;
    goto done;
fail:
    cheif_message(message, capacity, err.message);
done:
    free(sink.bytes);
    if (handle) heif_image_handle_release(handle);
    if (image) heif_image_release(image);
    if (encoder) heif_encoder_release(encoder);
    heif_context_free(context);
    return result;
}

void cheif_free(void *pointer) { free(pointer); }
