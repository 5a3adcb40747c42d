#ifndef CLATCHKEY_CRYPTO_H
#define CLATCHKEY_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

// The few operations Latchkey needs from OpenSSL 3's libcrypto, as plain C functions the Swift
// module LatchkeyCrypto wraps. No OpenSSL type or header reaches Swift: keys and hash states are
// opaque pointers that Swift owns (one class each, whose deinit frees them).
//
// Every function starts by initialising OpenSSL once without its configuration file
// (lk_crypto_initialise), so no OPENSSL_CONF, OPENSSL_MODULES or OPENSSL_ENGINES in the
// environment can make this process load a provider, engine or setting. Every function returns a
// status (below); on failure it leaves OpenSSL's error queue empty and never prints.

/// What a function returns.
typedef enum {
    LK_CRYPTO_OK = 0,
    /// OpenSSL failed where it should not (memory, random source, library initialisation).
    LK_CRYPTO_FAILED = 1,
    /// A key, size or parameter the operation cannot take.
    LK_CRYPTO_INVALID_INPUT = 2,
    /// A tag or a signature that does not verify.
    LK_CRYPTO_NOT_AUTHENTIC = 3,
} lk_crypto_status;

typedef enum {
    LK_CRYPTO_SHA1 = 1,
    LK_CRYPTO_SHA256 = 2,
    LK_CRYPTO_SHA384 = 3,
    LK_CRYPTO_SHA512 = 4,
} lk_crypto_hash;

typedef enum {
    LK_CRYPTO_P256 = 1,
    LK_CRYPTO_P384 = 2,
} lk_crypto_curve;

/// What a PEM private key must be.
typedef enum {
    LK_CRYPTO_KEY_P256 = 1,
    LK_CRYPTO_KEY_RSA = 2,
} lk_crypto_key_kind;

/// An EVP_PKEY.
typedef struct lk_crypto_key lk_crypto_key;
/// An EVP_MD_CTX.
typedef struct lk_crypto_hash_state lk_crypto_hash_state;

/// Initialises OpenSSL once per process (pthread_once) with OPENSSL_INIT_NO_LOAD_CONFIG and
/// OPENSSL_INIT_NO_ATEXIT. Whoever initialises OpenSSL first decides whether a configuration is
/// read, so a process that shares libcrypto with another library (latchkey-cli with libcurl's
/// libssl) calls this before that library starts.
lk_crypto_status lk_crypto_initialise(void);

/// `count` bytes from OpenSSL's CSPRNG (RAND_bytes).
lk_crypto_status lk_crypto_random(uint8_t *out, size_t count);

/// Overwrites `count` bytes at `bytes` in a way the compiler keeps (OPENSSL_cleanse).
void lk_crypto_cleanse(void *bytes, size_t count);

/// Frees a buffer a function below allocated, overwriting it first (OPENSSL_clear_free).
void lk_crypto_free(uint8_t *bytes, size_t count);

// MARK: Hashes (FIPS 180-4) and HMAC (RFC 2104)

/// The digest size of `hash` in bytes, 0 for an unknown one.
size_t lk_crypto_hash_size(lk_crypto_hash hash);
/// `out` gets lk_crypto_hash_size(hash) bytes.
lk_crypto_status lk_crypto_hash_oneshot(lk_crypto_hash hash, const uint8_t *data, size_t count, uint8_t *out);
lk_crypto_status lk_crypto_hash_new(lk_crypto_hash hash, lk_crypto_hash_state **state);
lk_crypto_status lk_crypto_hash_copy(const lk_crypto_hash_state *state, lk_crypto_hash_state **copy);
lk_crypto_status lk_crypto_hash_update(lk_crypto_hash_state *state, const uint8_t *data, size_t count);
/// The digest of what `state` has seen, computed on a copy: `state` can go on.
lk_crypto_status lk_crypto_hash_final(const lk_crypto_hash_state *state, uint8_t *out);
void lk_crypto_hash_free(lk_crypto_hash_state *state);

/// HMAC over `hash` (EVP_MAC "HMAC"); `out` gets lk_crypto_hash_size(hash) bytes.
lk_crypto_status lk_crypto_hmac(lk_crypto_hash hash, const uint8_t *key, size_t key_count, const uint8_t *data, size_t count,
    uint8_t *out);

/// Whether `count` bytes at `a` and `b` are equal, in time that depends only on `count`
/// (CRYPTO_memcmp). 1 when equal.
int lk_crypto_equal(const void *a, const void *b, size_t count);

// MARK: ChaCha20-Poly1305 (RFC 8439 §2.8): 32-byte key, 12-byte nonce, 16-byte tag

lk_crypto_status lk_crypto_chacha20_poly1305_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_count,
    const uint8_t *plaintext, size_t count, uint8_t *ciphertext, uint8_t *tag);
/// LK_CRYPTO_NOT_AUTHENTIC when the tag does not verify; `plaintext` is then all zeros.
lk_crypto_status lk_crypto_chacha20_poly1305_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_count,
    const uint8_t *ciphertext, size_t count, const uint8_t *tag, uint8_t *plaintext);

// MARK: scrypt (RFC 7914)

/// EVP_PBE_scrypt: `n` a power of two, `max_memory` the most it may allocate (0: OpenSSL's 32 MiB).
lk_crypto_status lk_crypto_scrypt(const uint8_t *password, size_t password_count, const uint8_t *salt, size_t salt_count, uint64_t n,
    uint64_t r, uint64_t p, uint64_t max_memory, uint8_t *out, size_t out_count);

// MARK: Keys

void lk_crypto_key_free(lk_crypto_key *key);
/// The key's size in bits (the modulus for RSA, the order for EC); 0 if unknown.
int lk_crypto_key_bits(const lk_crypto_key *key);

/// A new EC key pair on `curve` (EVP_EC_gen).
lk_crypto_status lk_crypto_ec_generate(lk_crypto_curve curve, lk_crypto_key **key);
/// The key pair of the private scalar `scalar` (big-endian, exactly the curve's size, 0 < d < n):
/// the public point is computed from it.
lk_crypto_status lk_crypto_ec_private_key(lk_crypto_curve curve, const uint8_t *scalar, size_t count, lk_crypto_key **key);
/// The public key of the point x ‖ y (each the curve's size); a point off the curve is refused.
lk_crypto_status lk_crypto_ec_public_key(lk_crypto_curve curve, const uint8_t *xy, size_t count, lk_crypto_key **key);
/// The private scalar, big-endian, padded to `count` (the curve's size).
lk_crypto_status lk_crypto_ec_scalar(const lk_crypto_key *key, uint8_t *out, size_t count);
/// The public point x ‖ y, each padded to `count` / 2.
lk_crypto_status lk_crypto_ec_point(const lk_crypto_key *key, uint8_t *out, size_t count);
/// ECDSA over a digest already computed; `rs` gets r ‖ s, each padded to `rs_count` / 2.
lk_crypto_status lk_crypto_ecdsa_sign(const lk_crypto_key *key, const uint8_t *digest, size_t digest_count, uint8_t *rs, size_t rs_count);
/// LK_CRYPTO_OK when r ‖ s is a valid signature of `digest` under `key`, else LK_CRYPTO_NOT_AUTHENTIC.
lk_crypto_status lk_crypto_ecdsa_verify(const lk_crypto_key *key, const uint8_t *digest, size_t digest_count, const uint8_t *rs,
    size_t rs_count);
/// r ‖ s as a DER ECDSA-Sig-Value (RFC 3279 §2.2.3); free `*der` with lk_crypto_free.
lk_crypto_status lk_crypto_ecdsa_der_from_raw(const uint8_t *rs, size_t rs_count, uint8_t **der, size_t *der_count);
/// A DER ECDSA-Sig-Value as r ‖ s, each padded to `rs_count` / 2 (refused if either is longer).
lk_crypto_status lk_crypto_ecdsa_raw_from_der(const uint8_t *der, size_t der_count, uint8_t *rs, size_t rs_count);

/// A new RSA key pair of `bits` bits, public exponent 65537 (EVP_RSA_gen).
lk_crypto_status lk_crypto_rsa_generate(unsigned bits, lk_crypto_key **key);
/// The public key (n, e), both unsigned big-endian. Refused: n even or over 16,384 bits, e even,
/// below 3 or over 33 bits (what BoringSSL, which Latchkey used before, refuses too).
lk_crypto_status lk_crypto_rsa_public_key(const uint8_t *n, size_t n_count, const uint8_t *e, size_t e_count, lk_crypto_key **key);
/// n (`which` = 'n') or e ('e'), unsigned big-endian without leading zeros; free with lk_crypto_free.
lk_crypto_status lk_crypto_rsa_component(const lk_crypto_key *key, char which, uint8_t **out, size_t *count);
/// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2) of a `hash` digest; `signature` has room for the modulus.
lk_crypto_status lk_crypto_rsa_sign(const lk_crypto_key *key, lk_crypto_hash hash, const uint8_t *digest, size_t digest_count,
    uint8_t *signature, size_t capacity, size_t *signature_count);
/// LK_CRYPTO_OK when `signature` verifies, else LK_CRYPTO_NOT_AUTHENTIC.
lk_crypto_status lk_crypto_rsa_verify(const lk_crypto_key *key, lk_crypto_hash hash, const uint8_t *digest, size_t digest_count,
    const uint8_t *signature, size_t signature_count);

/// A private key of `kind` from PEM (PKCS #8, SEC 1 or PKCS #1; never an encrypted one: no
/// passphrase is asked for). LK_CRYPTO_INVALID_INPUT for anything else.
lk_crypto_status lk_crypto_private_key_from_pem(const uint8_t *pem, size_t count, lk_crypto_key_kind kind, lk_crypto_key **key);
/// The private key as unencrypted PKCS #8 PEM; free `*pem` with lk_crypto_free.
lk_crypto_status lk_crypto_private_key_pem(const lk_crypto_key *key, uint8_t **pem, size_t *count);
/// The public key as a DER SubjectPublicKeyInfo (RFC 5280 §4.1); free `*der` with lk_crypto_free.
lk_crypto_status lk_crypto_public_key_der(const lk_crypto_key *key, uint8_t **der, size_t *count);

#endif
