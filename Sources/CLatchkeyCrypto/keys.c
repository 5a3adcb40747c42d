#include "internal.h"

#include <limits.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#define LK_KEY(key) ((EVP_PKEY *)(key))

void lk_crypto_key_free(lk_crypto_key *key) { EVP_PKEY_free(LK_KEY(key)); }

int lk_crypto_key_bits(const lk_crypto_key *key) { return key ? EVP_PKEY_get_bits(LK_KEY(key)) : 0; }

// MARK: - Building keys from their numbers

/// A key of `type` ("EC", "RSA") from `parameters` (EVP_PKEY_fromdata); `selection` says whether
/// the private half is among them.
static EVP_PKEY *key_from_parameters(const char *type, OSSL_PARAM_BLD *builder, int selection) {
    OSSL_PARAM *parameters = OSSL_PARAM_BLD_to_param(builder);
    EVP_PKEY_CTX *context = parameters ? EVP_PKEY_CTX_new_from_name(NULL, type, NULL) : NULL;
    EVP_PKEY *key = NULL;
    if (!context || EVP_PKEY_fromdata_init(context) != 1 || EVP_PKEY_fromdata(context, &key, selection, parameters) != 1) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    // Private numbers were pushed as secure BIGNUMs, which OSSL_PARAM_free clears.
    OSSL_PARAM_free(parameters);
    return key;
}

// MARK: - Elliptic curves

static const char *curve_name(lk_crypto_curve curve) {
    switch (curve) {
    case LK_CRYPTO_P256: return SN_X9_62_prime256v1;
    case LK_CRYPTO_P384: return SN_secp384r1;
    }
    return NULL;
}

static int curve_nid(lk_crypto_curve curve) {
    switch (curve) {
    case LK_CRYPTO_P256: return NID_X9_62_prime256v1;
    case LK_CRYPTO_P384: return NID_secp384r1;
    }
    return NID_undef;
}

static size_t curve_size(lk_crypto_curve curve) {
    switch (curve) {
    case LK_CRYPTO_P256: return 32;
    case LK_CRYPTO_P384: return 48;
    }
    return 0;
}

/// The byte size of an EC key's coordinates and scalar, from its order's bits.
static size_t ec_key_size(const EVP_PKEY *key) { return EVP_PKEY_is_a(key, "EC") ? ((size_t)EVP_PKEY_get_bits(key) + 7) / 8 : 0; }

lk_crypto_status lk_crypto_ec_generate(lk_crypto_curve curve, lk_crypto_key **key) {
    LK_START();
    const char *name = curve_name(curve);
    if (!name) return LK_CRYPTO_INVALID_INPUT;
    EVP_PKEY *generated = EVP_EC_gen(name);
    if (!generated) return lk_finish(LK_CRYPTO_FAILED);
    *key = (lk_crypto_key *)generated;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_ec_private_key(lk_crypto_curve curve, const uint8_t *scalar, size_t count, lk_crypto_key **key) {
    LK_START();
    const char *name = curve_name(curve);
    if (!name || count != curve_size(curve)) return LK_CRYPTO_INVALID_INPUT;
    lk_crypto_status status = LK_CRYPTO_FAILED;
    EC_GROUP *group = EC_GROUP_new_by_curve_name(curve_nid(curve));
    BN_CTX *numbers = BN_CTX_secure_new();
    BIGNUM *d = BN_secure_new();
    EC_POINT *point = group ? EC_POINT_new(group) : NULL;
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    uint8_t encoded[1 + 2 * 48];
    size_t encoded_count = 0;
    EVP_PKEY *made = NULL;
    if (!group || !numbers || !d || !point || !builder || !BN_bin2bn(scalar, (int)count, d)) goto done;
    // 0 < d < n, as SEC 1 §3.2.1 asks of a private key.
    if (BN_is_zero(d) || BN_cmp(d, EC_GROUP_get0_order(group)) >= 0) {
        status = LK_CRYPTO_INVALID_INPUT;
        goto done;
    }
    // The public point Q = d·G: OpenSSL does not derive it from the private scalar on import.
    if (EC_POINT_mul(group, point, d, NULL, NULL, numbers) != 1
        || (encoded_count = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, encoded, sizeof encoded, numbers)) == 0)
        goto done;
    if (OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, name, 0) != 1
        || OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_PRIV_KEY, d) != 1
        || OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, encoded, encoded_count) != 1)
        goto done;
    made = key_from_parameters("EC", builder, EVP_PKEY_KEYPAIR);
    if (made) {
        *key = (lk_crypto_key *)made;
        status = LK_CRYPTO_OK;
    }
done:
    OSSL_PARAM_BLD_free(builder);
    EC_POINT_free(point);
    BN_clear_free(d);
    BN_CTX_free(numbers);
    EC_GROUP_free(group);
    return lk_finish(status);
}

lk_crypto_status lk_crypto_ec_public_key(lk_crypto_curve curve, const uint8_t *xy, size_t count, lk_crypto_key **key) {
    LK_START();
    const char *name = curve_name(curve);
    if (!name || count != 2 * curve_size(curve)) return LK_CRYPTO_INVALID_INPUT;
    // SEC 1 §2.3.3: an uncompressed point is 0x04 ‖ x ‖ y.
    uint8_t encoded[1 + 2 * 48];
    encoded[0] = POINT_CONVERSION_UNCOMPRESSED;
    memcpy(encoded + 1, xy, count);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    if (!builder || OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, name, 0) != 1
        || OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, encoded, count + 1) != 1) {
        OSSL_PARAM_BLD_free(builder);
        return lk_finish(LK_CRYPTO_FAILED);
    }
    // The import refuses a point that is not on the curve; the check refuses the point at infinity too.
    EVP_PKEY *made = key_from_parameters("EC", builder, EVP_PKEY_PUBLIC_KEY);
    OSSL_PARAM_BLD_free(builder);
    EVP_PKEY_CTX *check = made ? EVP_PKEY_CTX_new_from_pkey(NULL, made, NULL) : NULL;
    int valid = check && EVP_PKEY_public_check(check) == 1;
    EVP_PKEY_CTX_free(check);
    if (!valid) {
        EVP_PKEY_free(made);
        return lk_finish(LK_CRYPTO_INVALID_INPUT);
    }
    *key = (lk_crypto_key *)made;
    return LK_CRYPTO_OK;
}

/// The BIGNUM parameter `name` of `key`, written big-endian into exactly `count` bytes.
static lk_crypto_status write_number(const EVP_PKEY *key, const char *name, uint8_t *out, size_t count) {
    BIGNUM *number = NULL;
    if (count > INT_MAX || EVP_PKEY_get_bn_param(key, name, &number) != 1) return lk_finish(LK_CRYPTO_INVALID_INPUT);
    int ok = BN_bn2binpad(number, out, (int)count) == (int)count;
    BN_clear_free(number);
    return lk_finish(ok ? LK_CRYPTO_OK : LK_CRYPTO_INVALID_INPUT);
}

lk_crypto_status lk_crypto_ec_scalar(const lk_crypto_key *key, uint8_t *out, size_t count) {
    LK_START();
    if (count != ec_key_size(LK_KEY(key))) return LK_CRYPTO_INVALID_INPUT;
    return write_number(LK_KEY(key), OSSL_PKEY_PARAM_PRIV_KEY, out, count);
}

lk_crypto_status lk_crypto_ec_point(const lk_crypto_key *key, uint8_t *out, size_t count) {
    LK_START();
    size_t size = ec_key_size(LK_KEY(key));
    if (size == 0 || count != 2 * size) return LK_CRYPTO_INVALID_INPUT;
    lk_crypto_status status = write_number(LK_KEY(key), OSSL_PKEY_PARAM_EC_PUB_X, out, size);
    return status == LK_CRYPTO_OK ? write_number(LK_KEY(key), OSSL_PKEY_PARAM_EC_PUB_Y, out + size, size) : status;
}

/// r ‖ s (each `half` bytes) as an ECDSA_SIG.
static ECDSA_SIG *signature_from_raw(const uint8_t *rs, size_t half) {
    ECDSA_SIG *signature = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(rs, (int)half, NULL), *s = BN_bin2bn(rs + half, (int)half, NULL);
    if (!signature || !r || !s || ECDSA_SIG_set0(signature, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(signature);
        return NULL;
    }
    return signature;
}

/// Writes an ECDSA_SIG's r and s, each padded to `half` bytes.
static int signature_to_raw(const ECDSA_SIG *signature, uint8_t *rs, size_t half) {
    const BIGNUM *r = NULL, *s = NULL;
    ECDSA_SIG_get0(signature, &r, &s);
    return r && s && BN_bn2binpad(r, rs, (int)half) == (int)half && BN_bn2binpad(s, rs + half, (int)half) == (int)half;
}

lk_crypto_status lk_crypto_ecdsa_sign(const lk_crypto_key *key, const uint8_t *digest, size_t digest_count, uint8_t *rs, size_t rs_count) {
    LK_START();
    size_t size = ec_key_size(LK_KEY(key));
    if (size == 0 || rs_count != 2 * size || digest_count == 0) return LK_CRYPTO_INVALID_INPUT;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_pkey(NULL, LK_KEY(key), NULL);
    size_t der_count = 0;
    uint8_t *der = NULL;
    ECDSA_SIG *signature = NULL;
    int ok = context && EVP_PKEY_sign_init(context) == 1 && EVP_PKEY_sign(context, NULL, &der_count, digest, digest_count) == 1
        && (der = OPENSSL_malloc(der_count)) && EVP_PKEY_sign(context, der, &der_count, digest, digest_count) == 1;
    if (ok) {
        const uint8_t *cursor = der;
        signature = d2i_ECDSA_SIG(NULL, &cursor, (long)der_count);
        ok = signature && signature_to_raw(signature, rs, size);
    }
    ECDSA_SIG_free(signature);
    OPENSSL_free(der);
    EVP_PKEY_CTX_free(context);
    return lk_finish(ok ? LK_CRYPTO_OK : LK_CRYPTO_FAILED);
}

lk_crypto_status lk_crypto_ecdsa_verify(const lk_crypto_key *key, const uint8_t *digest, size_t digest_count, const uint8_t *rs,
    size_t rs_count) {
    LK_START();
    size_t size = ec_key_size(LK_KEY(key));
    if (size == 0 || rs_count != 2 * size || digest_count == 0) return LK_CRYPTO_INVALID_INPUT;
    ECDSA_SIG *signature = signature_from_raw(rs, size);
    uint8_t *der = NULL;
    int der_count = signature ? i2d_ECDSA_SIG(signature, &der) : -1;
    EVP_PKEY_CTX *context = der_count > 0 ? EVP_PKEY_CTX_new_from_pkey(NULL, LK_KEY(key), NULL) : NULL;
    // 1 is a valid signature; 0 a wrong one, below 0 one OpenSSL could not even check (r or s
    // zero or out of range): none of those verify.
    int verified = context && EVP_PKEY_verify_init(context) == 1
        && EVP_PKEY_verify(context, der, (size_t)der_count, digest, digest_count) == 1;
    EVP_PKEY_CTX_free(context);
    OPENSSL_free(der);
    ECDSA_SIG_free(signature);
    return lk_finish(verified ? LK_CRYPTO_OK : LK_CRYPTO_NOT_AUTHENTIC);
}

lk_crypto_status lk_crypto_ecdsa_der_from_raw(const uint8_t *rs, size_t rs_count, uint8_t **der, size_t *der_count) {
    LK_START();
    if (rs_count == 0 || rs_count % 2 != 0 || rs_count > 2 * 66) return LK_CRYPTO_INVALID_INPUT;
    ECDSA_SIG *signature = signature_from_raw(rs, rs_count / 2);
    uint8_t *encoded = NULL;
    int count = signature ? i2d_ECDSA_SIG(signature, &encoded) : -1;
    ECDSA_SIG_free(signature);
    if (count <= 0) return lk_finish(LK_CRYPTO_FAILED);
    *der = encoded;
    *der_count = (size_t)count;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_ecdsa_raw_from_der(const uint8_t *der, size_t der_count, uint8_t *rs, size_t rs_count) {
    LK_START();
    if (rs_count == 0 || rs_count % 2 != 0 || der_count > LONG_MAX) return LK_CRYPTO_INVALID_INPUT;
    const uint8_t *cursor = der;
    ECDSA_SIG *signature = d2i_ECDSA_SIG(NULL, &cursor, (long)der_count);
    // The whole input, and nothing after the structure.
    int ok = signature && cursor == der + der_count && signature_to_raw(signature, rs, rs_count / 2);
    ECDSA_SIG_free(signature);
    return lk_finish(ok ? LK_CRYPTO_OK : LK_CRYPTO_INVALID_INPUT);
}

// MARK: - RSA

lk_crypto_status lk_crypto_rsa_generate(unsigned bits, lk_crypto_key **key) {
    LK_START();
    if (bits < 1024 || bits > 16384) return LK_CRYPTO_INVALID_INPUT;
    EVP_PKEY *generated = EVP_RSA_gen(bits);
    if (!generated) return lk_finish(LK_CRYPTO_FAILED);
    *key = (lk_crypto_key *)generated;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_rsa_public_key(const uint8_t *n, size_t n_count, const uint8_t *e, size_t e_count, lk_crypto_key **key) {
    LK_START();
    if (n_count == 0 || n_count > 16384 / 8 + 1 || e_count == 0 || e_count > 16) return LK_CRYPTO_INVALID_INPUT;
    lk_crypto_status status = LK_CRYPTO_INVALID_INPUT;
    BIGNUM *modulus = BN_bin2bn(n, (int)n_count, NULL), *exponent = BN_bin2bn(e, (int)e_count, NULL);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    EVP_PKEY *made = NULL;
    if (!modulus || !exponent || !builder) {
        status = LK_CRYPTO_FAILED;
        goto done;
    }
    if (!BN_is_odd(modulus) || BN_num_bits(modulus) > 16384 || !BN_is_odd(exponent) || BN_num_bits(exponent) > 33
        || BN_get_word(exponent) < 3 || BN_cmp(exponent, modulus) >= 0)
        goto done;
    if (OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, modulus) != 1
        || OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, exponent) != 1) {
        status = LK_CRYPTO_FAILED;
        goto done;
    }
    made = key_from_parameters("RSA", builder, EVP_PKEY_PUBLIC_KEY);
    if (made) {
        *key = (lk_crypto_key *)made;
        status = LK_CRYPTO_OK;
    }
done:
    OSSL_PARAM_BLD_free(builder);
    BN_free(modulus);
    BN_free(exponent);
    return lk_finish(status);
}

lk_crypto_status lk_crypto_rsa_component(const lk_crypto_key *key, char which, uint8_t **out, size_t *count) {
    LK_START();
    const char *name = which == 'n' ? OSSL_PKEY_PARAM_RSA_N : which == 'e' ? OSSL_PKEY_PARAM_RSA_E : NULL;
    BIGNUM *number = NULL;
    if (!name || !EVP_PKEY_is_a(LK_KEY(key), "RSA") || EVP_PKEY_get_bn_param(LK_KEY(key), name, &number) != 1)
        return lk_finish(LK_CRYPTO_INVALID_INPUT);
    int size = BN_num_bytes(number);
    uint8_t *bytes = OPENSSL_malloc(size > 0 ? (size_t)size : 1);
    int ok = bytes && BN_bn2bin(number, bytes) == size;
    BN_free(number);
    if (!ok) {
        OPENSSL_free(bytes);
        return lk_finish(LK_CRYPTO_FAILED);
    }
    *out = bytes;
    *count = (size_t)size;
    return LK_CRYPTO_OK;
}

/// A context for RSASSA-PKCS1-v1_5 with `hash`, for signing or verifying.
static EVP_PKEY_CTX *pkcs1_context(const lk_crypto_key *key, lk_crypto_hash hash, int signing) {
    const EVP_MD *md = lk_crypto_md(hash);
    if (!md || !EVP_PKEY_is_a(LK_KEY(key), "RSA")) return NULL;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_pkey(NULL, LK_KEY(key), NULL);
    int ok = context && (signing ? EVP_PKEY_sign_init(context) : EVP_PKEY_verify_init(context)) == 1
        && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1 && EVP_PKEY_CTX_set_signature_md(context, md) == 1;
    if (!ok) {
        EVP_PKEY_CTX_free(context);
        return NULL;
    }
    return context;
}

lk_crypto_status lk_crypto_rsa_sign(const lk_crypto_key *key, lk_crypto_hash hash, const uint8_t *digest, size_t digest_count,
    uint8_t *signature, size_t capacity, size_t *signature_count) {
    LK_START();
    if (digest_count != lk_crypto_hash_size(hash)) return LK_CRYPTO_INVALID_INPUT;
    EVP_PKEY_CTX *context = pkcs1_context(key, hash, 1);
    if (!context) return lk_finish(LK_CRYPTO_INVALID_INPUT);
    size_t count = capacity;
    int ok = EVP_PKEY_sign(context, signature, &count, digest, digest_count) == 1;
    EVP_PKEY_CTX_free(context);
    if (!ok) return lk_finish(LK_CRYPTO_FAILED);
    *signature_count = count;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_rsa_verify(const lk_crypto_key *key, lk_crypto_hash hash, const uint8_t *digest, size_t digest_count,
    const uint8_t *signature, size_t signature_count) {
    LK_START();
    if (digest_count != lk_crypto_hash_size(hash)) return LK_CRYPTO_INVALID_INPUT;
    EVP_PKEY_CTX *context = pkcs1_context(key, hash, 0);
    if (!context) return lk_finish(LK_CRYPTO_INVALID_INPUT);
    // A signature of another length than the modulus is refused by OpenSSL (below 1): not valid.
    int verified = EVP_PKEY_verify(context, lk_nonnull(signature), signature_count, digest, digest_count) == 1;
    EVP_PKEY_CTX_free(context);
    return lk_finish(verified ? LK_CRYPTO_OK : LK_CRYPTO_NOT_AUTHENTIC);
}

// MARK: - PEM and DER

/// The passphrase callback: there is none, so an encrypted key is refused rather than asked
/// about on the terminal (OpenSSL's default callback would prompt).
static int no_passphrase(char *buffer, int size, int writing, void *context) {
    (void)buffer, (void)size, (void)writing, (void)context;
    return -1;
}

static int is_kind(const EVP_PKEY *key, lk_crypto_key_kind kind) {
    switch (kind) {
    case LK_CRYPTO_KEY_RSA: return EVP_PKEY_is_a(key, "RSA");
    case LK_CRYPTO_KEY_P256: {
        char group[64] = {0};
        if (!EVP_PKEY_is_a(key, "EC")
            || EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, NULL) != 1)
            return 0;
        return strcmp(group, SN_X9_62_prime256v1) == 0 || strcmp(group, "P-256") == 0;
    }
    }
    return 0;
}

lk_crypto_status lk_crypto_private_key_from_pem(const uint8_t *pem, size_t count, lk_crypto_key_kind kind, lk_crypto_key **key) {
    LK_START();
    if (count == 0 || count > INT_MAX) return LK_CRYPTO_INVALID_INPUT;
    BIO *input = BIO_new_mem_buf(pem, (int)count);
    EVP_PKEY *read = input ? PEM_read_bio_PrivateKey(input, NULL, no_passphrase, NULL) : NULL;
    BIO_free(input);
    if (!read || !is_kind(read, kind)) {
        EVP_PKEY_free(read);
        return lk_finish(LK_CRYPTO_INVALID_INPUT);
    }
    *key = (lk_crypto_key *)read;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_private_key_pem(const lk_crypto_key *key, uint8_t **pem, size_t *count) {
    LK_START();
    // A memory BIO whose buffer is cleared when freed.
    BIO *output = BIO_new(BIO_s_secmem());
    char *text = NULL;
    long length = 0;
    uint8_t *copy = NULL;
    int ok = output && PEM_write_bio_PrivateKey(output, LK_KEY(key), NULL, NULL, 0, NULL, NULL) == 1
        && (length = BIO_get_mem_data(output, &text)) > 0 && (copy = OPENSSL_malloc((size_t)length));
    if (ok) memcpy(copy, text, (size_t)length);
    BIO_free(output);
    if (!ok) return lk_finish(LK_CRYPTO_FAILED);
    *pem = copy;
    *count = (size_t)length;
    return LK_CRYPTO_OK;
}

lk_crypto_status lk_crypto_public_key_der(const lk_crypto_key *key, uint8_t **der, size_t *count) {
    LK_START();
    uint8_t *encoded = NULL;
    int length = i2d_PUBKEY(LK_KEY(key), &encoded);
    if (length <= 0) return lk_finish(LK_CRYPTO_FAILED);
    *der = encoded;
    *count = (size_t)length;
    return LK_CRYPTO_OK;
}
