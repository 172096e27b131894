// A C target needs a source file; the functions used are libcrypto's own (include/CLibCrypto.h).
#include "CLibCrypto.h"
