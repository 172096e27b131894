#ifndef CZLIB_H
#define CZLIB_H

#include <stddef.h>
#include <stdint.h>

/* zlib's CRC-32 (the checksum S3 calls CRC32), and a CRC-32C (Castagnoli)
   that uses the SSE4.2 instruction when the CPU has it. */
uint32_t czlib_crc32(uint32_t crc, const void *buf, size_t len);
uint32_t czlib_crc32c(uint32_t crc, const void *buf, size_t len);

/* zlib's compress2 (a zlib stream: header, deflate data, Adler-32).
   czlib_compress_bound gives the worst-case output size for len input bytes.
   czlib_compress returns 0 on success and sets *out_len to the bytes written. */
size_t czlib_compress_bound(size_t len);
int czlib_compress(void *out, size_t *out_len, const void *in, size_t len, int level);
/* zlib's uncompress2: *out_len is the room in out on entry, the bytes written on return. Returns 0 when the
   whole input was one complete zlib stream that fit, a zlib error code otherwise. */
int czlib_uncompress(void *out, size_t *out_len, const void *in, size_t len);

#endif
