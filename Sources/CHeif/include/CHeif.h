#ifndef CHEIF_H
#define CHEIF_H

#include <stddef.h>
#include <stdint.h>

/* Typed wrappers around libheif. Results: CHEIF_OK, CHEIF_ERROR (the message is in the object or buffer). */
enum { CHEIF_OK = 0, CHEIF_ERROR = 1, CHEIF_UNSUPPORTED = 2 };

typedef struct cheif_file cheif_file;

/* Opens a HEIF file from memory (the bytes must outlive it) or a path; reads the boxes, not the pixels.
   Returns NULL and fills `message` on failure. */
cheif_file *cheif_open_memory(const uint8_t *data, size_t length, char *message, size_t message_capacity);
cheif_file *cheif_open_path(const char *path, char *message, size_t message_capacity);
/* Opens from the first `available` bytes of a file of `file_length` bytes (its boxes must lie in them; reads
   past them give zeros). The bytes must outlive the object. When it fails, *needed is as cheif_prefix_needed
   would have said: libheif may have failed on the zeros. */
cheif_file *cheif_open_prefix(const uint8_t *data, size_t available, size_t file_length, size_t *needed,
                              char *message, size_t message_capacity);
/* For a file opened with cheif_open_prefix: 0 when every read so far (libheif reads metadata items while
   opening) lay inside the prefix; otherwise how many leading bytes of the file those reads need (the bytes past
   the prefix were read as zeros). */
size_t cheif_prefix_needed(const cheif_file *file);
void cheif_close(cheif_file *file);

/* The primary image's size as displayed (libheif applies irot/imir/clap). */
void cheif_primary_size(const cheif_file *file, int *width, int *height);
/* The primary image's size as its ispe property declares it, before the transforms (0 x 0 without one). */
void cheif_primary_stored_size(const cheif_file *file, int *width, int *height);
/* The first Exif metadata block of the primary image, raw: a 4-byte big-endian offset to the TIFF header, then
   the data. cheif_exif_size is 0 when there is none. */
size_t cheif_exif_size(const cheif_file *file);
int cheif_exif_copy(const cheif_file *file, uint8_t *buffer, size_t capacity);


/* Decodes the primary image to interleaved RGBA8 (transforms applied). The pixels belong to the returned
   image object: read them with cheif_image_pixels and free with cheif_image_free. A grid or overlay canvas may
   be no larger on either side than the primary image's declared sizes (else an error, before it is allocated). */
typedef struct cheif_image cheif_image;
cheif_image *cheif_decode_primary(cheif_file *file, char *message, size_t message_capacity);
const uint8_t *cheif_image_pixels(const cheif_image *image, int *width, int *height, int *stride);
void cheif_image_free(cheif_image *image);

/* 1 when this libheif has an HEVC encoder. */
int cheif_can_encode(void);
/* Encodes RGBA8 (alpha ignored) as HEIC at quality 0-100, with an Exif item holding `exif` (a TIFF payload)
   when it is not NULL; *bytes is malloc'd (free with cheif_free). */
int cheif_encode_rgba(const uint8_t *pixels, int width, int height, size_t stride, int quality, const uint8_t *exif,
                      size_t exif_length, uint8_t **bytes, size_t *length, char *message, size_t message_capacity);
void cheif_free(void *pointer);

#endif
