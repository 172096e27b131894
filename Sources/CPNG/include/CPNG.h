#ifndef CPNG_H
#define CPNG_H

#include <stddef.h>
#include <stdint.h>

/* Typed wrappers around libpng's row API. libpng errors are caught by a setjmp inside these functions, so no
   longjmp crosses a Swift frame. Results: CPNG_OK, CPNG_TRUNCATED (the data ended early), CPNG_CORRUPT (any
   other libpng error; the message is in cpng_*_message). After an error the object may only be destroyed. */
enum { CPNG_OK = 0, CPNG_TRUNCATED = 1, CPNG_CORRUPT = 2 };

typedef struct cpng_decoder cpng_decoder;

/* A decoder reading from memory (the bytes must outlive it) or a file (NULL when it cannot be opened). */
cpng_decoder *cpng_decoder_create_memory(const uint8_t *data, size_t length);
cpng_decoder *cpng_decoder_create_file(const char *path);
void cpng_decoder_destroy(cpng_decoder *decoder);
const char *cpng_decoder_message(const cpng_decoder *decoder);

/* Reads the chunks up to the image data and sets the transforms to RGBA8 (palette, grey, 16-bit and tRNS
   expanded; opaque images get alpha 255). Allocates no pixels. *passes is 1, or 7 for an interlaced image. */
int cpng_decoder_read_info(cpng_decoder *decoder, uint32_t *width, uint32_t *height, int *passes);
/* Non-interlaced images: reads the next `row_count` RGBA8 rows into rows of `stride` bytes. */
int cpng_decoder_read_rows(cpng_decoder *decoder, uint8_t *buffer, size_t stride, uint32_t row_count);
/* Interlaced images: reads every pass into the whole image (height rows of `stride` bytes). */
int cpng_decoder_read_image(cpng_decoder *decoder, uint8_t *buffer, size_t stride);

/* Encodes RGBA8 rows as an 8-bit RGBA PNG in memory, Adam7-interlaced when `interlaced` is not 0 (*bytes is
   malloc'd; free it with cpng_free). */
int cpng_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int interlaced,
                     uint8_t **bytes, size_t *length, char *message, size_t message_capacity);
void cpng_free(void *pointer);

#endif
