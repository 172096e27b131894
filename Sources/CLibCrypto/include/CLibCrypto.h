#ifndef CLIBCRYPTO_H
#define CLIBCRYPTO_H
// OpenSSL's message digests (libcrypto, already linked by libcurl's OpenSSL build): MD5, SHA-1 and SHA-256 for
// the Hashing module. Debian's libssl-dev.
#include <openssl/evp.h>
#endif
