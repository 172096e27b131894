#ifndef CZLIB_H
#define CZLIB_H

#include <stddef.h>
#include <stdint.h>

/* zlib's CRC-32 (the checksum S3 calls CRC32), and a CRC-32C (Castagnoli)
   that uses the SSE4.2 instruction when the CPU has it. */
uint32_t czlib_crc32(uint32_t crc, const void *buf, size_t len);
uint32_t czlib_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
