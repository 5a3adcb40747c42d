#include "internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

// MARK: - Initialisation

static pthread_once_t initialisation = PTHREAD_ONCE_INIT;
static int initialised;

static void initialise(void) {
    // NO_LOAD_CONFIG: no openssl.cnf, whatever OPENSSL_CONF says, and so no provider or engine a
    // configuration would name (OPENSSL_MODULES and OPENSSL_ENGINES are only read to find those).
    // The default provider is built into libcrypto. NO_ATEXIT: nothing to free at exit, and no
    // cleanup racing a thread still hashing while the process ends.
    initialised = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL) == 1;
    ERR_clear_error();
}

lk_crypto_status lk_crypto_initialise(void) {
    if (pthread_once(&initialisation, initialise) != 0) return LK_CRYPTO_FAILED;
    return initialised ? LK_CRYPTO_OK : LK_CRYPTO_FAILED;
}

lk_crypto_status lk_crypto_random(uint8_t *out, size_t count) {
    LK_START();
    while (count > 0) {
        int chunk = count > INT_MAX ? INT_MAX : (int)count;
        if (RAND_bytes(out, chunk) != 1) return lk_finish(LK_CRYPTO_FAILED);
        out += chunk;
        count -= (size_t)chunk;
    }
    return LK_CRYPTO_OK;
}

void lk_crypto_cleanse(void *bytes, size_t count) {
    if (bytes && count) OPENSSL_cleanse(bytes, count);
}

void lk_crypto_free(uint8_t *bytes, size_t count) { OPENSSL_clear_free(bytes, count); }

int lk_crypto_equal(const void *a, const void *b, size_t count) { return count == 0 || CRYPTO_memcmp(a, b, count) == 0; }

// MARK: - Algorithms, fetched once
//
// OpenSSL 3 looks an algorithm up in the provider on every use of a legacy EVP_sha256()-style
// handle; an explicitly fetched one is looked up once. Each is fetched the first time it is
// needed, so a process that only hashes fetches no cipher.

/// Stores `fetched` in `slot` unless another thread got there first; returns what the slot holds.
#define LK_KEEP_FETCHED(slot, fetched, free_function)                                                                               \
    do {                                                                                                                            \
        __typeof__(fetched) expected = NULL;                                                                                        \
        if (!atomic_compare_exchange_strong(&(slot), &expected, (fetched))) {                                                       \
            free_function(fetched);                                                                                                 \
            return expected;                                                                                                        \
        }                                                                                                                           \
        return fetched;                                                                                                             \
    } while (0)

static const char *hash_name(lk_crypto_hash hash) {
    switch (hash) {
    case LK_CRYPTO_SHA1: return "SHA1";
    case LK_CRYPTO_SHA256: return "SHA2-256";
    case LK_CRYPTO_SHA384: return "SHA2-384";
    case LK_CRYPTO_SHA512: return "SHA2-512";
    }
    return NULL;
}

size_t lk_crypto_hash_size(lk_crypto_hash hash) {
    switch (hash) {
    case LK_CRYPTO_SHA1: return 20;
    case LK_CRYPTO_SHA256: return 32;
    case LK_CRYPTO_SHA384: return 48;
    case LK_CRYPTO_SHA512: return 64;
    }
    return 0;
}

const EVP_MD *lk_crypto_md(lk_crypto_hash hash) {
    static _Atomic(EVP_MD *) fetched_mds[LK_CRYPTO_SHA512 + 1];
    const char *name = hash_name(hash);
    if (!name) return NULL;
    EVP_MD *md = atomic_load(&fetched_mds[hash]);
    if (md) return md;
    md = EVP_MD_fetch(NULL, name, NULL);
    if (!md) return NULL;
    LK_KEEP_FETCHED(fetched_mds[hash], md, EVP_MD_free);
}

static EVP_MAC *hmac_algorithm(void) {
    static _Atomic(EVP_MAC *) fetched_mac;
    EVP_MAC *mac = atomic_load(&fetched_mac);
    if (mac) return mac;
    mac = EVP_MAC_fetch(NULL, OSSL_MAC_NAME_HMAC, NULL);
    if (!mac) return NULL;
    LK_KEEP_FETCHED(fetched_mac, mac, EVP_MAC_free);
}

static EVP_CIPHER *chacha20_poly1305(void) {
    static _Atomic(EVP_CIPHER *) fetched_cipher;
    EVP_CIPHER *cipher = atomic_load(&fetched_cipher);
    if (cipher) return cipher;
    cipher = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL);
    if (!cipher) return NULL;
    LK_KEEP_FETCHED(fetched_cipher, cipher, EVP_CIPHER_free);
}

// MARK: - Hashes

lk_crypto_status lk_crypto_hash_oneshot(lk_crypto_hash hash, const uint8_t *data, size_t count, uint8_t *out) {
    LK_START();
    const EVP_MD *md = lk_crypto_md(hash);
    if (!md) return lk_finish(LK_CRYPTO_INVALID_INPUT);
    return lk_finish(EVP_Digest(lk_nonnull(data), count, out, NULL, md, NULL) == 1 ? LK_CRYPTO_OK : LK_CRYPTO_FAILED);
}

lk_crypto_status lk_crypto_hash_new(lk_crypto_hash hash, lk_crypto_hash_state **state) {
    LK_START();
    const EVP_MD *md = lk_crypto_md(hash);
    if (!md) return lk_finish(LK_CRYPTO_INVALID_INPUT);
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (!context || EVP_DigestInit_ex2(context, md, NULL) != 1) {
        EVP_MD_CTX_free(context);
        return lk_finish(LK_CRYPTO_FAILED);
    }
    *state = (lk_crypto_hash_state *)context;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_hash_copy(const lk_crypto_hash_state *state, lk_crypto_hash_state **copy) {
    LK_START();
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (!context || EVP_MD_CTX_copy_ex(context, (const EVP_MD_CTX *)state) != 1) {
        EVP_MD_CTX_free(context);
        return lk_finish(LK_CRYPTO_FAILED);
    }
    *copy = (lk_crypto_hash_state *)context;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_hash_update(lk_crypto_hash_state *state, const uint8_t *data, size_t count) {
    LK_START();
    return lk_finish(EVP_DigestUpdate((EVP_MD_CTX *)state, lk_nonnull(data), count) == 1 ? LK_CRYPTO_OK : LK_CRYPTO_FAILED);
}

lk_crypto_status lk_crypto_hash_final(const lk_crypto_hash_state *state, uint8_t *out) {
    lk_crypto_hash_state *copy = NULL;
    lk_crypto_status status = lk_crypto_hash_copy(state, &copy);
    if (status != LK_CRYPTO_OK) return status;
    status = EVP_DigestFinal_ex((EVP_MD_CTX *)copy, out, NULL) == 1 ? LK_CRYPTO_OK : LK_CRYPTO_FAILED;
    EVP_MD_CTX_free((EVP_MD_CTX *)copy);
    return lk_finish(status);
}

void lk_crypto_hash_free(lk_crypto_hash_state *state) { EVP_MD_CTX_free((EVP_MD_CTX *)state); }

// MARK: - HMAC

lk_crypto_status lk_crypto_hmac(lk_crypto_hash hash, const uint8_t *key, size_t key_count, const uint8_t *data, size_t count,
    uint8_t *out) {
    LK_START();
    const char *name = hash_name(hash);
    EVP_MAC *mac = hmac_algorithm();
    if (!name) return lk_finish(LK_CRYPTO_INVALID_INPUT);
    if (!mac) return lk_finish(LK_CRYPTO_FAILED);
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)name, 0),
        OSSL_PARAM_construct_end(),
    };
    size_t size = lk_crypto_hash_size(hash), written = 0;
    // A key pointer even for an empty key: HMAC's init takes NULL as "keep the old key".
    int ok = context && EVP_MAC_init(context, lk_nonnull(key), key_count, parameters) == 1
        && EVP_MAC_update(context, lk_nonnull(data), count) == 1 && EVP_MAC_final(context, out, &written, size) == 1 && written == size;
    EVP_MAC_CTX_free(context);
    return lk_finish(ok ? LK_CRYPTO_OK : LK_CRYPTO_FAILED);
}

// MARK: - ChaCha20-Poly1305

enum { chacha_key_size = 32, chacha_nonce_size = 12, poly1305_tag_size = 16 };

/// Feeds `count` bytes to the cipher (`out` NULL: as associated data), in pieces an int can count.
static int cipher_update(EVP_CIPHER_CTX *context, int encrypting, uint8_t *out, const uint8_t *in, size_t count) {
    while (count > 0) {
        int chunk = count > INT_MAX / 2 ? INT_MAX / 2 : (int)count, written = 0;
        int ok = encrypting ? EVP_EncryptUpdate(context, out, &written, in, chunk) : EVP_DecryptUpdate(context, out, &written, in, chunk);
        if (ok != 1 || (out && written != chunk)) return 0;
        in += chunk;
        if (out) out += chunk;
        count -= (size_t)chunk;
    }
    return 1;
}

static EVP_CIPHER_CTX *chacha_context(int encrypting, const uint8_t *key, const uint8_t *nonce) {
    EVP_CIPHER *cipher = chacha20_poly1305();
    EVP_CIPHER_CTX *context = cipher ? EVP_CIPHER_CTX_new() : NULL;
    if (!context) return NULL;
    // The cipher's default nonce length is RFC 8439's 12 bytes.
    int ok = encrypting ? EVP_EncryptInit_ex2(context, cipher, key, nonce, NULL) : EVP_DecryptInit_ex2(context, cipher, key, nonce, NULL);
    if (ok != 1 || EVP_CIPHER_CTX_get_iv_length(context) != chacha_nonce_size || EVP_CIPHER_CTX_get_key_length(context) != chacha_key_size) {
        EVP_CIPHER_CTX_free(context);
        return NULL;
    }
    return context;
}

lk_crypto_status lk_crypto_chacha20_poly1305_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_count,
    const uint8_t *plaintext, size_t count, uint8_t *ciphertext, uint8_t *tag) {
    LK_START();
    EVP_CIPHER_CTX *context = chacha_context(1, key, nonce);
    if (!context) return lk_finish(LK_CRYPTO_FAILED);
    int written = 0;
    int ok = cipher_update(context, 1, NULL, aad, aad_count) && cipher_update(context, 1, ciphertext, plaintext, count)
        && EVP_EncryptFinal_ex(context, ciphertext + count, &written) == 1 && written == 0
        && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, poly1305_tag_size, tag) == 1;
    EVP_CIPHER_CTX_free(context);
    return lk_finish(ok ? LK_CRYPTO_OK : LK_CRYPTO_FAILED);
}

lk_crypto_status lk_crypto_chacha20_poly1305_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_count,
    const uint8_t *ciphertext, size_t count, const uint8_t *tag, uint8_t *plaintext) {
    LK_START();
    EVP_CIPHER_CTX *context = chacha_context(0, key, nonce);
    if (!context) return lk_finish(LK_CRYPTO_FAILED);
    lk_crypto_status status = LK_CRYPTO_FAILED;
    int written = 0;
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, poly1305_tag_size, (void *)tag) == 1
        && cipher_update(context, 0, NULL, aad, aad_count) && cipher_update(context, 0, plaintext, ciphertext, count)) {
        // Final is where the tag is compared: anything but success is a box that was not ours.
        status = EVP_DecryptFinal_ex(context, plaintext + count, &written) == 1 && written == 0 ? LK_CRYPTO_OK : LK_CRYPTO_NOT_AUTHENTIC;
    }
    EVP_CIPHER_CTX_free(context);
    if (status != LK_CRYPTO_OK) lk_crypto_cleanse(plaintext, count);
    return lk_finish(status);
}

// MARK: - scrypt

lk_crypto_status lk_crypto_scrypt(const uint8_t *password, size_t password_count, const uint8_t *salt, size_t salt_count, uint64_t n,
    uint64_t r, uint64_t p, uint64_t max_memory, uint8_t *out, size_t out_count) {
    LK_START();
    // RFC 7914 §2: N a power of two greater than 1, r and p positive (OpenSSL checks the rest).
    if (n < 2 || (n & (n - 1)) != 0 || r == 0 || p == 0 || out_count == 0) return LK_CRYPTO_INVALID_INPUT;
    int ok = EVP_PBE_scrypt((const char *)lk_nonnull(password), password_count, lk_nonnull(salt), salt_count, n, r, p, max_memory, out,
        out_count);
    // 0 is parameters OpenSSL refuses (among them more memory than max_memory allows).
    return lk_finish(ok == 1 ? LK_CRYPTO_OK : LK_CRYPTO_INVALID_INPUT);
}
