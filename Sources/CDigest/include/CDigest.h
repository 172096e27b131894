#ifndef CDIGEST_H
#define CDIGEST_H

#include <stddef.h>
#include <stdint.h>

/* MD5 of up to 16 independent messages at once, one per 32-bit lane of an AVX-512 register: MD5 is a chain
   of dependent steps, so one message keeps a core's ALUs mostly idle, while sixteen in lock step cost little
   more than one. Messages of different lengths share the steps of the shortest; the lanes of those that are
   done are masked out until the longest is. */

/* 1 when this CPU runs cdigest_md5_x16 (AVX-512F), else 0. */
int cdigest_md5_x16_available(void);

/* The MD5 digests of `count` (1...16) messages: 16 bytes per message into `digests`, in order.
   Only when cdigest_md5_x16_available() returned 1. */
void cdigest_md5_x16(const uint8_t *const *messages, const size_t *lengths, size_t count, uint8_t *digests);

#endif
