#ifndef CLATCHKEY_CRYPTO_INTERNAL_H
#define CLATCHKEY_CRYPTO_INTERNAL_H

// Only OpenSSL 3's current interfaces: anything deprecated in 3.0 is hidden, so using it fails
// the build.
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1

#include <openssl/err.h>
#include <openssl/evp.h>

#include "include/clatchkey_crypto.h"

/// Initialises OpenSSL (without its configuration) before anything else, or fails.
#define LK_START()                                                                                                                  \
    do {                                                                                                                            \
        if (lk_crypto_initialise() != LK_CRYPTO_OK) return LK_CRYPTO_FAILED;                                                        \
    } while (0)

/// Returns `status` with OpenSSL's error queue emptied: nothing of a failure outlives the call.
static inline lk_crypto_status lk_finish(lk_crypto_status status) {
    if (status != LK_CRYPTO_OK) ERR_clear_error();
    return status;
}

/// The digest fetched once from the default provider; NULL for an unknown `hash`.
const EVP_MD *lk_crypto_md(lk_crypto_hash hash);

/// A pointer to read `count` bytes from that is never NULL (OpenSSL refuses NULL even for 0 bytes
/// in some calls; Swift hands NULL for an empty buffer).
static inline const uint8_t *lk_nonnull(const uint8_t *bytes) {
    static const uint8_t empty[1] = {0};
    return bytes ? bytes : empty;
}

#endif
