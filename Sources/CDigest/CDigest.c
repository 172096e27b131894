#include "CDigest.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

int cdigest_md5_x16_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? 1 : 0;
}

/* One MD5 step for all lanes: a = b + rotl(a + f(b, c, d) + k + m, s), f given as a ternary-logic table
   (F 0xCA: b ? c : d; G 0xE4: d ? b : c; H 0x96: b ^ c ^ d; I 0x39: c ^ (b | ~d)). */
#define STEP(table, a, b, c, d, m, k, s)                                                          \
    do {                                                                                         \
        __m512i f = _mm512_ternarylogic_epi32(b, c, d, table);                                   \
        a = _mm512_add_epi32(a, _mm512_add_epi32(f, _mm512_add_epi32(m, _mm512_set1_epi32((int)(k))))); \
        a = _mm512_add_epi32(b, _mm512_rol_epi32(a, s));                                         \
    } while (0)

/* Rows (one 64-byte block per lane) into columns (one message word for all lanes). */
__attribute__((target("avx512f"))) static void transpose16(__m512i r[16], __m512i w[16]) {
    __m512i t[16], u[16];
    for (int p = 0; p < 8; p++) {
        t[2 * p] = _mm512_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
    }
    for (int q = 0; q < 4; q++) {
        u[4 * q] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
        u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
        u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
        u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
    }
    /* u[4q + j] holds, in 128-bit chunk c, word 4c + j of lanes 4q...4q+3. */
    for (int j = 0; j < 4; j++) {
        __m512i a = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x88);
        __m512i b = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xDD);
        __m512i c = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x88);
        __m512i d = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xDD);
        w[j] = _mm512_shuffle_i32x4(a, c, 0x88);
        w[8 + j] = _mm512_shuffle_i32x4(a, c, 0xDD);
        w[4 + j] = _mm512_shuffle_i32x4(b, d, 0x88);
        w[12 + j] = _mm512_shuffle_i32x4(b, d, 0xDD);
    }
}

__attribute__((target("avx512f"))) void cdigest_md5_x16(
    const uint8_t *const *messages, const size_t *lengths, size_t count, uint8_t *digests) {
    static const uint8_t zero_block[64];
    /* The last one or two blocks of each message: its tail, 0x80, zeros, the length in bits. */
    uint8_t tails[16][128];
    size_t full[16], total[16], steps = 0;
    if (count > 16) count = 16;
    for (size_t i = 0; i < count; i++) {
        size_t rest = lengths[i] % 64;
        full[i] = lengths[i] / 64;
        size_t tail_len = rest < 56 ? 64 : 128;
        memset(tails[i], 0, tail_len);
        if (rest) memcpy(tails[i], messages[i] + full[i] * 64, rest);
        tails[i][rest] = 0x80;
        uint64_t bits = (uint64_t)lengths[i] * 8;
        memcpy(tails[i] + tail_len - 8, &bits, 8); /* little-endian, as MD5 wants */
        total[i] = full[i] + tail_len / 64;
        if (total[i] > steps) steps = total[i];
    }
    __m512i a = _mm512_set1_epi32(0x67452301), b = _mm512_set1_epi32((int)0xefcdab89);
    __m512i c = _mm512_set1_epi32((int)0x98badcfe), d = _mm512_set1_epi32(0x10325476);
    for (size_t s = 0; s < steps; s++) {
        __m512i r[16], m[16];
        __mmask16 active = 0;
        for (size_t i = 0; i < 16; i++) {
            const uint8_t *block = zero_block;
            if (i < count && s < total[i]) {
                block = s < full[i] ? messages[i] + s * 64 : tails[i] + (s - full[i]) * 64;
                active |= (__mmask16)(1u << i);
            }
            r[i] = _mm512_loadu_si512((const void *)block);
        }
        transpose16(r, m);
        __m512i aa = a, bb = b, cc = c, dd = d;
        STEP(0xCA, a, b, c, d, m[0], 0xd76aa478, 7);
        STEP(0xCA, d, a, b, c, m[1], 0xe8c7b756, 12);
        STEP(0xCA, c, d, a, b, m[2], 0x242070db, 17);
        STEP(0xCA, b, c, d, a, m[3], 0xc1bdceee, 22);
        STEP(0xCA, a, b, c, d, m[4], 0xf57c0faf, 7);
        STEP(0xCA, d, a, b, c, m[5], 0x4787c62a, 12);
        STEP(0xCA, c, d, a, b, m[6], 0xa8304613, 17);
        STEP(0xCA, b, c, d, a, m[7], 0xfd469501, 22);
        STEP(0xCA, a, b, c, d, m[8], 0x698098d8, 7);
        STEP(0xCA, d, a, b, c, m[9], 0x8b44f7af, 12);
        STEP(0xCA, c, d, a, b, m[10], 0xffff5bb1, 17);
        STEP(0xCA, b, c, d, a, m[11], 0x895cd7be, 22);
        STEP(0xCA, a, b, c, d, m[12], 0x6b901122, 7);
        STEP(0xCA, d, a, b, c, m[13], 0xfd987193, 12);
        STEP(0xCA, c, d, a, b, m[14], 0xa679438e, 17);
        STEP(0xCA, b, c, d, a, m[15], 0x49b40821, 22);

        STEP(0xE4, a, b, c, d, m[1], 0xf61e2562, 5);
        STEP(0xE4, d, a, b, c, m[6], 0xc040b340, 9);
        STEP(0xE4, c, d, a, b, m[11], 0x265e5a51, 14);
        STEP(0xE4, b, c, d, a, m[0], 0xe9b6c7aa, 20);
        STEP(0xE4, a, b, c, d, m[5], 0xd62f105d, 5);
        STEP(0xE4, d, a, b, c, m[10], 0x02441453, 9);
        STEP(0xE4, c, d, a, b, m[15], 0xd8a1e681, 14);
        STEP(0xE4, b, c, d, a, m[4], 0xe7d3fbc8, 20);
        STEP(0xE4, a, b, c, d, m[9], 0x21e1cde6, 5);
        STEP(0xE4, d, a, b, c, m[14], 0xc33707d6, 9);
        STEP(0xE4, c, d, a, b, m[3], 0xf4d50d87, 14);
        STEP(0xE4, b, c, d, a, m[8], 0x455a14ed, 20);
        STEP(0xE4, a, b, c, d, m[13], 0xa9e3e905, 5);
        STEP(0xE4, d, a, b, c, m[2], 0xfcefa3f8, 9);
        STEP(0xE4, c, d, a, b, m[7], 0x676f02d9, 14);
        STEP(0xE4, b, c, d, a, m[12], 0x8d2a4c8a, 20);

        STEP(0x96, a, b, c, d, m[5], 0xfffa3942, 4);
        STEP(0x96, d, a, b, c, m[8], 0x8771f681, 11);
        STEP(0x96, c, d, a, b, m[11], 0x6d9d6122, 16);
        STEP(0x96, b, c, d, a, m[14], 0xfde5380c, 23);
        STEP(0x96, a, b, c, d, m[1], 0xa4beea44, 4);
        STEP(0x96, d, a, b, c, m[4], 0x4bdecfa9, 11);
        STEP(0x96, c, d, a, b, m[7], 0xf6bb4b60, 16);
        STEP(0x96, b, c, d, a, m[10], 0xbebfbc70, 23);
        STEP(0x96, a, b, c, d, m[13], 0x289b7ec6, 4);
        STEP(0x96, d, a, b, c, m[0], 0xeaa127fa, 11);
        STEP(0x96, c, d, a, b, m[3], 0xd4ef3085, 16);
        STEP(0x96, b, c, d, a, m[6], 0x04881d05, 23);
        STEP(0x96, a, b, c, d, m[9], 0xd9d4d039, 4);
        STEP(0x96, d, a, b, c, m[12], 0xe6db99e5, 11);
        STEP(0x96, c, d, a, b, m[15], 0x1fa27cf8, 16);
        STEP(0x96, b, c, d, a, m[2], 0xc4ac5665, 23);

        STEP(0x39, a, b, c, d, m[0], 0xf4292244, 6);
        STEP(0x39, d, a, b, c, m[7], 0x432aff97, 10);
        STEP(0x39, c, d, a, b, m[14], 0xab9423a7, 15);
        STEP(0x39, b, c, d, a, m[5], 0xfc93a039, 21);
        STEP(0x39, a, b, c, d, m[12], 0x655b59c3, 6);
        STEP(0x39, d, a, b, c, m[3], 0x8f0ccc92, 10);
        STEP(0x39, c, d, a, b, m[10], 0xffeff47d, 15);
        STEP(0x39, b, c, d, a, m[1], 0x85845dd1, 21);
        STEP(0x39, a, b, c, d, m[8], 0x6fa87e4f, 6);
        STEP(0x39, d, a, b, c, m[15], 0xfe2ce6e0, 10);
        STEP(0x39, c, d, a, b, m[6], 0xa3014314, 15);
        STEP(0x39, b, c, d, a, m[13], 0x4e0811a1, 21);
        STEP(0x39, a, b, c, d, m[4], 0xf7537e82, 6);
        STEP(0x39, d, a, b, c, m[11], 0xbd3af235, 10);
        STEP(0x39, c, d, a, b, m[2], 0x2ad7d2bb, 15);
        STEP(0x39, b, c, d, a, m[9], 0xeb86d391, 21);

        /* Lanes whose message is done keep their state. */
        a = _mm512_mask_add_epi32(aa, active, aa, a);
        b = _mm512_mask_add_epi32(bb, active, bb, b);
        c = _mm512_mask_add_epi32(cc, active, cc, c);
        d = _mm512_mask_add_epi32(dd, active, dd, d);
    }
    uint32_t out[4][16];
    _mm512_storeu_si512((void *)out[0], a);
    _mm512_storeu_si512((void *)out[1], b);
    _mm512_storeu_si512((void *)out[2], c);
    _mm512_storeu_si512((void *)out[3], d);
    for (size_t i = 0; i < count; i++) {
        for (int j = 0; j < 4; j++) memcpy(digests + i * 16 + j * 4, &out[j][i], 4);
    }
}

#else

int cdigest_md5_x16_available(void) { return 0; }

void cdigest_md5_x16(const uint8_t *const *messages, const size_t *lengths, size_t count, uint8_t *digests) {
    (void)messages;
    (void)lengths;
    (void)count;
    (void)digests;
}

#endif
