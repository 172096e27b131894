#ifndef CVIDEO_H
#define CVIDEO_H

#include <stddef.h>
#include <stdint.h>

/* One decoded frame of a video, through FFmpeg's libavformat and libavcodec (Debian's libav* libraries, loaded
   with dlopen on first use). The container is read through `read`, which the caller answers from a file or from
   byte ranges of a remote object: libavformat asks for the bytes it needs and no more. */

/* Results of cvideo_poster. */
enum {
    CVIDEO_OK = 0,
    /* The libraries could not be loaded (message says which). */
    CVIDEO_UNAVAILABLE = 1,
    /* The bytes are not a video libavformat reads, hold no video stream, or do not decode. */
    CVIDEO_CORRUPT = 2,
    /* The frame is larger than max_pixels (nothing was allocated for it). */
    CVIDEO_TOO_LARGE = 3,
    /* `read` failed (its error is the caller's to keep), or `is_cancelled` answered 1. */
    CVIDEO_READ_FAILED = 4,
    /* Memory could not be had. */
    CVIDEO_NO_MEMORY = 5,
};

typedef struct {
    void *context;
    /* Fills `buffer` with up to `length` bytes at `offset`; returns how many (0 only at the end), or -1 when the
       bytes cannot be had. Called on the thread that called cvideo_poster. */
    int64_t (*read)(void *context, int64_t offset, uint8_t *buffer, int64_t length);
    /* 1 to stop (checked between reads and packets). */
    int (*is_cancelled)(void *context);
    int64_t size;
} cvideo_source;

typedef struct cvideo_frame cvideo_frame;

/* 1 when the libraries are loaded (loading them the first time), 0 when they cannot be. */
int cvideo_available(void);

/* Decodes the first frame shown at or after `seconds` (0: the first frame) of the first video stream, as RGBA8
   at its coded size, with the stream's display rotation (0, 90, 180, 270, clockwise). At most `max_packets`
   packets are decoded. *width and *height are the stream's declared size once known (0 before), for the
   caller's message when the result is CVIDEO_TOO_LARGE. */
int cvideo_poster(const cvideo_source *source, double seconds, int64_t max_pixels, int max_packets,
                  cvideo_frame **frame, int *width, int *height, char *message, size_t message_capacity);
const uint8_t *cvideo_frame_pixels(const cvideo_frame *frame, int *width, int *height, int *stride,
                                   int *rotation);
void cvideo_frame_free(cvideo_frame *frame);

#endif
