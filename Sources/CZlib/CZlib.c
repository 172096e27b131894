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

/* GF(2) arithmetic modulo the (reflected) CRC-32C polynomial, to combine CRCs of adjacent blocks:
   crc(A || B) = crc(A) * x^(8 * |B|) + crc(B)  (for the pre- and post-inverted CRCs). */
#define CRC32C_POLY 0x82F63B78u

static uint32_t crc32c_multmodp(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return p;
}

/* x^(8 * len) modulo the polynomial, by square-and-multiply. */
static uint32_t crc32c_x8nmodp(size_t len) {
    uint32_t power = 1u << 30; /* x^1 */
    uint32_t result = 1u << 31; /* x^0 */
    size_t bits = len * 8;
    while (bits) {
        if (bits & 1) result = crc32c_multmodp(power, result);
        power = crc32c_multmodp(power, power);
        bits >>= 1;
    }
    return result;
}

#if defined(__x86_64__)
/* Three independent streams over adjacent blocks keep the CPU's crc32 unit busy (one result per cycle instead
   of one per three), then the block CRCs are combined. */
#define CRC32C_BLOCK 8192
static uint32_t crc32c_block_shift;
static pthread_once_t crc32c_shift_once = PTHREAD_ONCE_INIT;
static void crc32c_init_shift(void) { crc32c_block_shift = crc32c_x8nmodp(CRC32C_BLOCK); }

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw_serial(uint64_t c, const unsigned char *p, size_t len) {
    while (len >= 8) {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const unsigned char *p, size_t len) {
    uint32_t result = crc;
    if (len >= 3 * CRC32C_BLOCK) {
        pthread_once(&crc32c_shift_once, crc32c_init_shift);
        while (len >= 3 * CRC32C_BLOCK) {
            uint64_t a = ~result, b = 0xFFFFFFFFu, c = 0xFFFFFFFFu;
            const unsigned char *pa = p, *pb = p + CRC32C_BLOCK, *pc = p + 2 * CRC32C_BLOCK;
            for (size_t i = 0; i < CRC32C_BLOCK; i += 8) {
                uint64_t va, vb, vc;
                __builtin_memcpy(&va, pa + i, 8);
                __builtin_memcpy(&vb, pb + i, 8);
                __builtin_memcpy(&vc, pc + i, 8);
                a = __builtin_ia32_crc32di(a, va);
                b = __builtin_ia32_crc32di(b, vb);
                c = __builtin_ia32_crc32di(c, vc);
            }
            uint32_t ca = ~(uint32_t)a, cb = ~(uint32_t)b, cc = ~(uint32_t)c;
            result = crc32c_multmodp(crc32c_block_shift, ca) ^ cb;
            result = crc32c_multmodp(crc32c_block_shift, result) ^ cc;
            p += 3 * CRC32C_BLOCK;
            len -= 3 * CRC32C_BLOCK;
        }
    }
    return ~crc32c_hw_serial(~result, p, len);
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

int czlib_uncompress(void *out, size_t *out_len, const void *in, size_t len) {
    uLongf dest_len = (uLongf)*out_len;
    uLong source_len = (uLong)len;
    int rc = uncompress2((Bytef *)out, &dest_len, (const Bytef *)in, &source_len);
    *out_len = (size_t)dest_len;
    return rc == Z_OK && source_len == (uLong)len ? 0 : (rc == Z_OK ? Z_DATA_ERROR : rc);
}
