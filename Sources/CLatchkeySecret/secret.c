#include "include/clatchkey_secret.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// Minimal declarations of the GLib and libsecret ABI used here (stable since libsecret 0.18),
// so building needs neither libsecret-1-dev nor GLib headers.
typedef struct { unsigned int domain; int code; char *message; } LkGError;
typedef struct { const char *name; int type; } LkSchemaAttribute;
typedef struct {
    const char *name;
    int flags;
    LkSchemaAttribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} LkSecretSchema;

typedef unsigned int (*LkHashFunc)(const void *);
typedef int (*LkEqualFunc)(const void *, const void *);

static struct {
    int loaded;
    void *(*hash_table_new)(LkHashFunc, LkEqualFunc);
    int (*hash_table_insert)(void *, void *, void *);
    void (*hash_table_unref)(void *);
    LkHashFunc str_hash;
    LkEqualFunc str_equal;
    void (*error_free)(LkGError *);
    char *(*lookupv_sync)(const LkSecretSchema *, void *, void *, LkGError **);
    int (*storev_sync)(const LkSecretSchema *, void *, const char *, const char *, const char *, void *, LkGError **);
    int (*clearv_sync)(const LkSecretSchema *, void *, void *, LkGError **);
    void (*password_free)(char *);
} lib;

static const LkSecretSchema schema = {
    "org.latchkey.VaultKey", 0,
    { { "application", 0 }, { "vault", 0 }, { NULL, 0 } },
    0, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

static void set_error(char **error, const char *message) {
    if (error) *error = strdup(message ? message : "unknown error");
}

static int take_gerror(LkGError *gerror, char **error) {
    set_error(error, gerror && gerror->message ? gerror->message : "the Secret Service failed");
    if (gerror) lib.error_free(gerror);
    return -1;
}

int lk_secret_load(const char *path, char **error) {
    if (lib.loaded) return 1;
    void *secret = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!secret) {
        const char *reason = dlerror();
        set_error(error, reason ? reason : path);
        return 0;
    }
    // GLib is libsecret's own dependency: a handle's dlsym searches it too, so GLib is never
    // looked up by name (and so never in a run path or LD_LIBRARY_PATH).
    *(void **)&lib.hash_table_new = dlsym(secret, "g_hash_table_new");
    *(void **)&lib.hash_table_insert = dlsym(secret, "g_hash_table_insert");
    *(void **)&lib.hash_table_unref = dlsym(secret, "g_hash_table_unref");
    *(void **)&lib.str_hash = dlsym(secret, "g_str_hash");
    *(void **)&lib.str_equal = dlsym(secret, "g_str_equal");
    *(void **)&lib.error_free = dlsym(secret, "g_error_free");
    *(void **)&lib.lookupv_sync = dlsym(secret, "secret_password_lookupv_sync");
    *(void **)&lib.storev_sync = dlsym(secret, "secret_password_storev_sync");
    *(void **)&lib.clearv_sync = dlsym(secret, "secret_password_clearv_sync");
    *(void **)&lib.password_free = dlsym(secret, "secret_password_free");
    if (!lib.hash_table_new || !lib.hash_table_insert || !lib.hash_table_unref || !lib.str_hash || !lib.str_equal
        || !lib.error_free || !lib.lookupv_sync || !lib.storev_sync || !lib.clearv_sync || !lib.password_free) {
        set_error(error, "libsecret is too old (0.18 or newer is needed)");
        return 0;
    }
    lib.loaded = 1;
    return 1;
}

static int loaded(char **error) {
    if (!lib.loaded) set_error(error, "libsecret is not loaded");
    return lib.loaded;
}

static void *attributes_for(const char *vault) {
    void *table = lib.hash_table_new(lib.str_hash, lib.str_equal);
    lib.hash_table_insert(table, (void *)"application", (void *)"latchkey");
    lib.hash_table_insert(table, (void *)"vault", (void *)vault);
    return table;
}

int lk_secret_lookup(const char *vault, char **secret, char **error) {
    if (!loaded(error)) return -1;
    LkGError *gerror = NULL;
    void *attributes = attributes_for(vault);
    char *found = lib.lookupv_sync(&schema, attributes, NULL, &gerror);
    lib.hash_table_unref(attributes);
    if (gerror) return take_gerror(gerror, error);
    if (!found) return 1;
    *secret = strdup(found);
    lib.password_free(found);
    return 0;
}

int lk_secret_store(const char *vault, const char *label, const char *secret, char **error) {
    if (!loaded(error)) return -1;
    LkGError *gerror = NULL;
    void *attributes = attributes_for(vault);
    int stored = lib.storev_sync(&schema, attributes, "default", label, secret, NULL, &gerror);
    lib.hash_table_unref(attributes);
    if (gerror || !stored) return take_gerror(gerror, error);
    return 0;
}

int lk_secret_clear(const char *vault, char **error) {
    if (!loaded(error)) return -1;
    LkGError *gerror = NULL;
    void *attributes = attributes_for(vault);
    lib.clearv_sync(&schema, attributes, NULL, &gerror);
    lib.hash_table_unref(attributes);
    if (gerror) return take_gerror(gerror, error);
    return 0;
}

void lk_secret_free(char *secret) {
    if (!secret) return;
    volatile char *p = secret;
    while (*p) *p++ = 0;
    free(secret);
}
