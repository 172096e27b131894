#include "CVideo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>

#include <dlfcn.h>
#include <pthread.h>

/* libavformat and libavcodec link most of Debian's codec libraries (x264, x265, vpx, dav1d, ...): they are loaded
   on first use, so a process that never meets a video does not map them. Every call below goes through a
   pointer resolved once, from the libraries whose major versions the headers name. */
#define CVIDEO_FORMAT_FUNCTIONS(X)                                                                                 \
    X(av_find_best_stream)                                                                                         \
    X(av_read_frame)                                                                                               \
    X(av_seek_frame)                                                                                               \
    X(av_stream_get_side_data)                                                                                     \
    X(avformat_alloc_context)                                                                                      \
    X(avformat_close_input)                                                                                        \
    X(avformat_find_stream_info)                                                                                   \
    X(avformat_free_context)                                                                                       \
    X(avformat_open_input)                                                                                         \
    X(avio_alloc_context)                                                                                          \
    X(avio_context_free)
#define CVIDEO_CODEC_FUNCTIONS(X)                                                                                  \
    X(av_packet_alloc)                                                                                             \
    X(av_packet_free)                                                                                              \
    X(av_packet_unref)                                                                                             \
    X(avcodec_alloc_context3)                                                                                      \
    X(avcodec_find_decoder)                                                                                        \
    X(avcodec_free_context)                                                                                        \
    X(avcodec_open2)                                                                                               \
    X(avcodec_parameters_to_context)                                                                               \
    X(avcodec_receive_frame)                                                                                       \
    X(avcodec_send_packet)
#define CVIDEO_UTIL_FUNCTIONS(X)                                                                                   \
    X(av_display_rotation_get)                                                                                     \
    X(av_frame_alloc)                                                                                              \
    X(av_frame_free)                                                                                               \
    X(av_free)                                                                                                     \
    X(av_log_set_level)                                                                                            \
    X(av_malloc)
#define CVIDEO_SCALE_FUNCTIONS(X)                                                                                  \
    X(sws_freeContext)                                                                                             \
    X(sws_getContext)                                                                                              \
    X(sws_scale)

#define CVIDEO_POINTER(name) static __typeof__(&name) cv_##name;
CVIDEO_FORMAT_FUNCTIONS(CVIDEO_POINTER)
CVIDEO_CODEC_FUNCTIONS(CVIDEO_POINTER)
CVIDEO_UTIL_FUNCTIONS(CVIDEO_POINTER)
CVIDEO_SCALE_FUNCTIONS(CVIDEO_POINTER)

#define CVIDEO_TEXT(x) #x
#define CVIDEO_SONAME(name, major) "lib" name ".so." CVIDEO_TEXT(major)

static int cvideo_loaded;
static char cvideo_load_error[160];
static pthread_once_t cvideo_once = PTHREAD_ONCE_INIT;

static void *cvideo_open_library(const char *soname) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!library) snprintf(cvideo_load_error, sizeof cvideo_load_error, "%s could not be loaded", soname);
    return library;
}

static void cvideo_load_once(void) {
    void *util = cvideo_open_library(CVIDEO_SONAME("avutil", LIBAVUTIL_VERSION_MAJOR));
    void *codec = util ? cvideo_open_library(CVIDEO_SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR)) : NULL;
    void *format = codec ? cvideo_open_library(CVIDEO_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR)) : NULL;
    void *scale = format ? cvideo_open_library(CVIDEO_SONAME("swscale", LIBSWSCALE_VERSION_MAJOR)) : NULL;
    if (!scale) return;
#define CVIDEO_RESOLVE_IN(library, name)                                                                          \
    cv_##name = (__typeof__(&name))dlsym(library, #name);                                                          \
    if (!cv_##name) {                                                                                              \
        snprintf(cvideo_load_error, sizeof cvideo_load_error, "FFmpeg's %s is missing", #name);                  \
        return;                                                                                                    \
    }
#define CVIDEO_RESOLVE_FORMAT(name) CVIDEO_RESOLVE_IN(format, name)
#define CVIDEO_RESOLVE_CODEC(name) CVIDEO_RESOLVE_IN(codec, name)
#define CVIDEO_RESOLVE_UTIL(name) CVIDEO_RESOLVE_IN(util, name)
#define CVIDEO_RESOLVE_SCALE(name) CVIDEO_RESOLVE_IN(scale, name)
    CVIDEO_FORMAT_FUNCTIONS(CVIDEO_RESOLVE_FORMAT)
    CVIDEO_CODEC_FUNCTIONS(CVIDEO_RESOLVE_CODEC)
    CVIDEO_UTIL_FUNCTIONS(CVIDEO_RESOLVE_UTIL)
    CVIDEO_SCALE_FUNCTIONS(CVIDEO_RESOLVE_SCALE)
    /* The libraries write nothing to the process's stderr: every failure is returned. */
    cv_av_log_set_level(AV_LOG_QUIET);
    cvideo_loaded = 1;
}

int cvideo_available(void) {
    pthread_once(&cvideo_once, cvideo_load_once);
    return cvideo_loaded;
}

struct cvideo_frame {
    uint8_t *pixels;
    int width;
    int height;
    int stride;
    int rotation;
};

/* The AVIO side of a source: a position over the caller's read function. */
typedef struct {
    const cvideo_source *source;
    int64_t position;
    int failed;
} cvideo_io;

static int cvideo_read_packet(void *opaque, uint8_t *buffer, int size) {
    cvideo_io *io = opaque;
    if (io->failed) return AVERROR(EIO);
    if (io->source->is_cancelled && io->source->is_cancelled(io->source->context)) {
        io->failed = 1;
        return AVERROR_EXIT;
    }
    if (io->position >= io->source->size) return AVERROR_EOF;
    int64_t want = size;
    if (want > io->source->size - io->position) want = io->source->size - io->position;
    int64_t got = io->source->read(io->source->context, io->position, buffer, want);
    if (got < 0 || got > want) {
        io->failed = 1;
        return AVERROR(EIO);
    }
    if (got == 0) return AVERROR_EOF;
    io->position += got;
    return (int)got;
}

static int64_t cvideo_seek(void *opaque, int64_t offset, int whence) {
    cvideo_io *io = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return io->source->size;
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = io->position; break;
    case SEEK_END: base = io->source->size; break;
    default: return AVERROR(EINVAL);
    }
    if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0) return AVERROR(EINVAL);
    io->position = base + offset;
    return io->position;
}

static int cvideo_interrupt(void *opaque) {
    const cvideo_source *source = opaque;
    return source->is_cancelled ? source->is_cancelled(source->context) : 0;
}

static void cvideo_message(char *message, size_t capacity, const char *text) {
    if (capacity) snprintf(message, capacity, "%s", text);
}

/* The stream's display rotation, clockwise, snapped to a quarter turn. */
static int cvideo_rotation(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *matrix = cv_av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!matrix || size < 9 * sizeof(int32_t)) return 0;
    double degrees = cv_av_display_rotation_get((const int32_t *)matrix);
    if (degrees != degrees) return 0; /* NaN: a degenerate matrix */
    /* av_display_rotation_get answers the counterclockwise angle in [-180, 180]. */
    int quarters = (int)floor(-degrees / 90.0 + 0.5);
    return ((quarters % 4) + 4) % 4 * 90;
}

/* Converts a decoded frame to RGBA8 at its size. */
static int cvideo_convert(const AVFrame *decoded, int64_t max_pixels, int rotation, cvideo_frame **out,
                          char *message, size_t capacity) {
    int width = decoded->width, height = decoded->height;
    if (width <= 0 || height <= 0 || decoded->format < 0) {
        cvideo_message(message, capacity, "the decoder gave a frame without a size or format");
        return CVIDEO_CORRUPT;
    }
    if ((int64_t)width * height > max_pixels) {
        if (capacity) snprintf(message, capacity, "a frame of %dx%d is more than %lld pixels", width, height,
                 (long long)max_pixels);
        return CVIDEO_TOO_LARGE;
    }
    struct SwsContext *scale = cv_sws_getContext(width, height, decoded->format, width, height, AV_PIX_FMT_RGBA,
                                                 SWS_BILINEAR, NULL, NULL, NULL);
    if (!scale) {
        cvideo_message(message, capacity, "the frame's pixel format cannot be converted");
        return CVIDEO_CORRUPT;
    }
    cvideo_frame *frame = calloc(1, sizeof(cvideo_frame));
    /* A row padded to 16 bytes, with 16 more at the end: sws_scale may write past the last pixel with SIMD. */
    int stride = (width * 4 + 15) & ~15;
    uint8_t *pixels = frame ? malloc((size_t)stride * (size_t)height + 64) : NULL;
    if (!pixels) {
        free(frame);
        cv_sws_freeContext(scale);
        cvideo_message(message, capacity, "out of memory");
        return CVIDEO_NO_MEMORY;
    }
    uint8_t *planes[4] = {pixels, NULL, NULL, NULL};
    int strides[4] = {stride, 0, 0, 0};
    int rows = cv_sws_scale(scale, (const uint8_t *const *)decoded->data, decoded->linesize, 0, height, planes,
                            strides);
    cv_sws_freeContext(scale);
    if (rows != height) {
        free(pixels);
        free(frame);
        cvideo_message(message, capacity, "the frame could not be converted to RGBA");
        return CVIDEO_CORRUPT;
    }
    frame->pixels = pixels;
    frame->width = width;
    frame->height = height;
    frame->stride = stride;
    frame->rotation = rotation;
    *out = frame;
    return CVIDEO_OK;
}

/* Everything one poster decode holds, freed by cvideo_release. */
typedef struct {
    AVFormatContext *format;
    AVIOContext *avio;
    AVCodecContext *codec;
    AVPacket *packet;
    AVFrame *decoded;
} cvideo_state;

static void cvideo_release(cvideo_state *state) {
    if (state->decoded) cv_av_frame_free(&state->decoded);
    if (state->packet) cv_av_packet_free(&state->packet);
    if (state->codec) cv_avcodec_free_context(&state->codec);
    if (state->format) cv_avformat_close_input(&state->format);
    if (state->avio) {
        cv_av_free(state->avio->buffer);
        cv_avio_context_free(&state->avio);
    }
}

/* Sends packets of `stream` to the decoder until it gives a frame at or after `target` (in the stream's time
   base); flushes it at the end of the file. */
static int cvideo_decode(cvideo_state *s, const cvideo_io *io, int stream, int64_t target, int max_packets,
                         char *message, size_t capacity) {
    int sent = 0, flushed = 0;
    for (;;) {
        int got = cv_avcodec_receive_frame(s->codec, s->decoded);
        if (got == 0) {
            int64_t when = s->decoded->best_effort_timestamp;
            if (when == AV_NOPTS_VALUE || when >= target || flushed) return CVIDEO_OK;
            continue;
        }
        if (got != AVERROR(EAGAIN)) {
            cvideo_message(message, capacity, flushed ? "the video ended before a frame was decoded"
                                                      : "the video's frames do not decode");
            return CVIDEO_CORRUPT;
        }
        if (sent >= max_packets) {
            cvideo_message(message, capacity, "no frame was decoded from the packets read");
            return CVIDEO_CORRUPT;
        }
        int read = cv_av_read_frame(s->format, s->packet);
        if (read < 0) {
            if (io->failed) {
                cvideo_message(message, capacity, "the video's bytes could not be read");
                return CVIDEO_READ_FAILED;
            }
            if (flushed) {
                cvideo_message(message, capacity, "the video ended before a frame was decoded");
                return CVIDEO_CORRUPT;
            }
            cv_avcodec_send_packet(s->codec, NULL);
            flushed = 1;
            continue;
        }
        if (s->packet->stream_index == stream) {
            sent++;
            int accepted = cv_avcodec_send_packet(s->codec, s->packet);
            if (accepted < 0 && accepted != AVERROR(EAGAIN) && accepted != AVERROR_INVALIDDATA) {
                cv_av_packet_unref(s->packet);
                cvideo_message(message, capacity, "the decoder refused the video's packets");
                return CVIDEO_CORRUPT;
            }
        }
        cv_av_packet_unref(s->packet);
    }
}

int cvideo_poster(const cvideo_source *source, double seconds, int64_t max_pixels, int max_packets,
                  cvideo_frame **frame, int *width, int *height, char *message, size_t capacity) {
    *frame = NULL;
    *width = 0;
    *height = 0;
    if (!cvideo_available()) {
        cvideo_message(message, capacity, cvideo_load_error[0] ? cvideo_load_error : "FFmpeg could not be loaded");
        return CVIDEO_UNAVAILABLE;
    }
    cvideo_io io = {source, 0, 0};
    cvideo_state s = {0};
    int result = CVIDEO_CORRUPT;
    const int buffer_size = 64 << 10;
    uint8_t *buffer = cv_av_malloc(buffer_size);
    s.avio = buffer ? cv_avio_alloc_context(buffer, buffer_size, 0, &io, cvideo_read_packet, NULL, cvideo_seek)
                    : NULL;
    s.format = s.avio ? cv_avformat_alloc_context() : NULL;
    if (!s.format) {
        if (!s.avio && buffer) cv_av_free(buffer);
        cvideo_release(&s);
        cvideo_message(message, capacity, "out of memory");
        return CVIDEO_NO_MEMORY;
    }
    s.format->pb = s.avio;
    s.format->flags |= AVFMT_FLAG_CUSTOM_IO;
    s.format->interrupt_callback.callback = cvideo_interrupt;
    s.format->interrupt_callback.opaque = (void *)source;
    /* Probe from the first 64 KiB: enough for every container libavformat reads by its header. */
    s.format->probesize = 64 << 10;
    AVFormatContext *opened = s.format;
    if (cv_avformat_open_input(&opened, NULL, NULL, NULL) < 0) {
        s.format = NULL; /* freed by avformat_open_input */
        result = io.failed ? CVIDEO_READ_FAILED : CVIDEO_CORRUPT;
        cvideo_message(message, capacity,
                       io.failed ? "the video's bytes could not be read" : "not a container FFmpeg reads");
        goto done;
    }
    const AVCodec *decoder = NULL;
    int stream = cv_av_find_best_stream(s.format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (stream >= 0 && s.format->streams[stream]->codecpar->width <= 0) {
        /* A container whose header leaves the size to the stream (MPEG-TS, some Matroska): read a little. */
        if (cv_avformat_find_stream_info(s.format, NULL) >= 0)
            stream = cv_av_find_best_stream(s.format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    }
    if (stream < 0 || !decoder) {
        result = io.failed ? CVIDEO_READ_FAILED : CVIDEO_CORRUPT;
        cvideo_message(message, capacity, stream < 0 ? "no video stream" : "no decoder for the video's codec");
        goto done;
    }
    AVStream *video = s.format->streams[stream];
    *width = video->codecpar->width;
    *height = video->codecpar->height;
    int64_t declared = (int64_t)video->codecpar->width * video->codecpar->height;
    if (declared > max_pixels) {
        result = CVIDEO_TOO_LARGE;
        if (capacity) snprintf(message, capacity, "a video of %dx%d is more than %lld pixels", video->codecpar->width,
                 video->codecpar->height, (long long)max_pixels);
        goto done;
    }
    for (unsigned i = 0; i < s.format->nb_streams; i++)
        if ((int)i != stream) s.format->streams[i]->discard = AVDISCARD_ALL;
    s.codec = cv_avcodec_alloc_context3(decoder);
    s.packet = cv_av_packet_alloc();
    s.decoded = cv_av_frame_alloc();
    if (!s.codec || !s.packet || !s.decoded || cv_avcodec_parameters_to_context(s.codec, video->codecpar) < 0) {
        result = CVIDEO_NO_MEMORY;
        cvideo_message(message, capacity, "out of memory");
        goto done;
    }
    /* One thread: the caller bounds how many decodes run at once. */
    s.codec->thread_count = 1;
    if (cv_avcodec_open2(s.codec, decoder, NULL) < 0) {
        cvideo_message(message, capacity, "the video's decoder does not open");
        goto done;
    }
    int64_t target = AV_NOPTS_VALUE;
    if (seconds > 0) {
        AVRational base = video->time_base;
        target = (int64_t)(seconds * base.den / (base.num > 0 ? base.num : 1));
        if (video->start_time != AV_NOPTS_VALUE) target += video->start_time;
        if (cv_av_seek_frame(s.format, stream, target, AVSEEK_FLAG_BACKWARD) < 0) target = AV_NOPTS_VALUE;
    }
    if (target == AV_NOPTS_VALUE) target = INT64_MIN;
    result = cvideo_decode(&s, &io, stream, target, max_packets, message, capacity);
    if (result == CVIDEO_OK) {
        *width = s.decoded->width;
        *height = s.decoded->height;
        result = cvideo_convert(s.decoded, max_pixels, cvideo_rotation(video), frame, message, capacity);
    }
done:
    cvideo_release(&s);
    return result;
}

const uint8_t *cvideo_frame_pixels(const cvideo_frame *frame, int *width, int *height, int *stride,
                                   int *rotation) {
    *width = frame->width;
    *height = frame->height;
    *stride = frame->stride;
    *rotation = frame->rotation;
    return frame->pixels;
}

void cvideo_frame_free(cvideo_frame *frame) {
    if (!frame) return;
    free(frame->pixels);
    free(frame);
}
