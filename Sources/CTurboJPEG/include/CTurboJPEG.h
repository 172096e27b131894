#ifndef CTURBOJPEG_H
#define CTURBOJPEG_H

#include <stddef.h>
#include <stdint.h>

/* Typed wrappers around libjpeg(-turbo)'s scanline API. Every libjpeg error is caught by a setjmp inside these
   functions (error_exit longjmps back into the same C frame), so no longjmp ever crosses a Swift frame.

   Results: CJ_OK, CJ_TRUNCATED (the data ended before the image did: libjpeg's premature-end warning is
   treated as an error), CJ_CORRUPT (any other libjpeg error; the message is in cj_*_message). After an
   error the object may only be destroyed. */
enum { CJ_OK = 0, CJ_TRUNCATED = 1, CJ_CORRUPT = 2, CJ_NOMEM = 3, CJ_IO = 4 };

typedef struct cj_decoder cj_decoder;

/* A decoder reading from memory (the bytes must outlive it) or from a file (NULL when it cannot be opened). */
cj_decoder *cj_decoder_create_memory(const uint8_t *data, size_t length);
cj_decoder *cj_decoder_create_file(const char *path);
void cj_decoder_destroy(cj_decoder *decoder);
const char *cj_decoder_message(const cj_decoder *decoder);

/* Reads the headers up to the first scan: the stored size and the component count. Allocates no pixels. */
int cj_decoder_read_header(cj_decoder *decoder, int *width, int *height, int *components);
/* Starts decompression to RGBA8 (alpha 255) at scale 1/scale_denom (1, 2, 4 or 8); reports the output size. */
int cj_decoder_start(cj_decoder *decoder, int scale_denom, int *out_width, int *out_height);
/* Reads the next scanlines into rows of `stride` bytes; *rows_read is 0 only at the end of the image. */
int cj_decoder_read_rows(cj_decoder *decoder, uint8_t *buffer, size_t stride, int max_rows, int *rows_read);

/* Starts decompression at full size to RGB8 (`components` 3) or RGBA8 (4), decoding only the columns
   [*x_offset, *x_offset + *width) (libjpeg-turbo's jpeg_crop_scanline). libjpeg widens them to iMCU boundaries:
   on return *x_offset and *width are the columns each row holds, which contain the ones asked for. */
int cj_decoder_start_columns(cj_decoder *decoder, int components, int *x_offset, int *width, int *out_height);
/* Skips the next `count` scanlines without their inverse DCT (jpeg_skip_scanlines); *skipped says how many. */
int cj_decoder_skip_rows(cj_decoder *decoder, int count, int *skipped);

typedef struct cj_encoder cj_encoder;

/* A baseline JPEG encoder to memory from RGBA8 rows (alpha ignored), 4:2:0, optionally with an APP1 segment
   (`app1` is its whole payload, e.g. "Exif\0\0" + TIFF, at most 65533 bytes). NULL when out of memory. */
cj_encoder *cj_encoder_create(void);
/* The same encoder writing to `fd` (not closed by it) through a 256 KiB buffer; a failed write is CJ_IO.
   cj_encoder_finish then gives NULL bytes and the total length written. */
cj_encoder *cj_encoder_create_fd(int fd);
/* cj_encoder_start for rows of RGB8 (`components` 3) or RGBA8 (4). */
int cj_encoder_start_components(cj_encoder *encoder, int width, int height, int quality, int components,
                                const uint8_t *app1, size_t app1_length);
int cj_encoder_start(cj_encoder *encoder, int width, int height, int quality, const uint8_t *app1,
                     size_t app1_length);
int cj_encoder_write_rows(cj_encoder *encoder, const uint8_t *rows, size_t stride, int row_count);
/* Finishes the file; the bytes stay owned by the encoder until it is destroyed. */
int cj_encoder_finish(cj_encoder *encoder, const uint8_t **bytes, size_t *length);
const char *cj_encoder_message(const cj_encoder *encoder);
void cj_encoder_destroy(cj_encoder *encoder);

#endif
