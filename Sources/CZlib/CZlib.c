#include "CZlib.h"
#include <zlib.h>
#include <pthread.h>

uint32_t czlib_crc32(uint32_t crc, const void *buf, size_t len) {
    /* zlib takes a uInt length; feed it in chunks. */
    const unsigned char *p = (const unsigned char *)buf;
    uLong c = crc;
    while (len > 0) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        c = crc32(c, p, n);
        p += n;
        len -= n;
    }
    return (uint32_t)c;
}

static uint32_t crc32c_table[256];
static pthread_once_t crc32c_table_once = PTHREAD_ONCE_INIT;

static void crc32c_init_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : (c >> 1);
        crc32c_table[i] = c;
    }
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p, size_t len) {
    uint64_t c = ~crc;
    while (len >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
#endif

uint32_t czlib_crc32c(uint32_t crc, const void *buf, size_t len) {
    const unsigned char *p = (const unsigned char *)buf;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2")) return crc32c_hw(crc, p, len);
#endif
    pthread_once(&crc32c_table_once, crc32c_init_table);
    uint32_t c = ~crc;
    while (len--) c = crc32c_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

size_t czlib_compress_bound(size_t len) { return (size_t)compressBound((uLong)len); }

int czlib_compress(void *out, size_t *out_len, const void *in, size_t len, int level) {
    uLongf dest_len = (uLongf)*out_len;
    int rc = compress2((Bytef *)out, &dest_len, (const Bytef *)in, (uLong)len, level);
    *out_len = (size_t)dest_len;
    return rc == Z_OK ? 0 : rc;
}
