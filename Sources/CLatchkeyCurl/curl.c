#include "include/clatchkey_curl.h"

#include <dlfcn.h>
#include <stdio.h>

// The libcurl entry points used, with their ABI signatures (docs/libcurl-abi.md): handles and
// lists are opaque, CURLcode is an int-sized enum, curl_off_t is 64 bits on every platform
// Latchkey builds for.
static struct {
    int (*global_init)(long flags);
    const char *(*version)(void);
    lk_curl *(*easy_init)(void);
    void (*easy_cleanup)(lk_curl *);
    int (*easy_perform)(lk_curl *);
    const char *(*easy_strerror)(int);
    int (*easy_setopt)(lk_curl *, int, ...);
    int (*easy_getinfo)(lk_curl *, int, ...);
    lk_curl_slist *(*slist_append)(lk_curl_slist *, const char *);
    void (*slist_free_all)(lk_curl_slist *);
} lib;

static char load_error_text[512];

/// `CURL_GLOBAL_DEFAULT`: SSL (and, on Windows, Winsock) initialisation.
static const long global_default = 3;

int lk_curl_load(const char *path, const char **error) {
    void *curl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!curl) {
        const char *reason = dlerror();
        snprintf(load_error_text, sizeof load_error_text, "%s", reason ? reason : path);
        *error = load_error_text;
        return 0;
    }
    *(void **)&lib.global_init = dlsym(curl, "curl_global_init");
    *(void **)&lib.version = dlsym(curl, "curl_version");
    *(void **)&lib.easy_init = dlsym(curl, "curl_easy_init");
    *(void **)&lib.easy_cleanup = dlsym(curl, "curl_easy_cleanup");
    *(void **)&lib.easy_perform = dlsym(curl, "curl_easy_perform");
    *(void **)&lib.easy_strerror = dlsym(curl, "curl_easy_strerror");
    *(void **)&lib.easy_setopt = dlsym(curl, "curl_easy_setopt");
    *(void **)&lib.easy_getinfo = dlsym(curl, "curl_easy_getinfo");
    *(void **)&lib.slist_append = dlsym(curl, "curl_slist_append");
    *(void **)&lib.slist_free_all = dlsym(curl, "curl_slist_free_all");
    if (!lib.global_init || !lib.version || !lib.easy_init || !lib.easy_cleanup || !lib.easy_perform || !lib.easy_strerror
        || !lib.easy_setopt || !lib.easy_getinfo || !lib.slist_append || !lib.slist_free_all) {
        *error = "the libcurl found lacks part of the easy interface (7.32 or newer is needed)";
        return 0;
    }
    // Once, before any handle: curl_easy_init would otherwise do it, racily on old libraries.
    if (lib.global_init(global_default) != 0) {
        *error = "libcurl could not initialise its TLS library";
        return 0;
    }
    return 1;
}

const char *lk_curl_version(void) { return lib.version(); }

lk_curl *lk_curl_easy_init(void) { return lib.easy_init(); }

void lk_curl_easy_cleanup(lk_curl *handle) { lib.easy_cleanup(handle); }

int lk_curl_easy_perform(lk_curl *handle) { return lib.easy_perform(handle); }

const char *lk_curl_easy_strerror(int code) { return lib.easy_strerror(code); }

int lk_curl_setopt_long(lk_curl *handle, lk_curl_option option, long value) { return lib.easy_setopt(handle, option, value); }

int lk_curl_setopt_string(lk_curl *handle, lk_curl_option option, const char *value) {
    return lib.easy_setopt(handle, option, value);
}

int lk_curl_setopt_pointer(lk_curl *handle, lk_curl_option option, void *value) { return lib.easy_setopt(handle, option, value); }

int lk_curl_setopt_offset(lk_curl *handle, lk_curl_option option, int64_t value) {
    return lib.easy_setopt(handle, option, value);
}

int lk_curl_setopt_write_callback(lk_curl *handle, lk_curl_option option, lk_curl_write_callback callback) {
    return lib.easy_setopt(handle, option, callback);
}

int lk_curl_setopt_progress_callback(lk_curl *handle, lk_curl_progress_callback callback) {
    return lib.easy_setopt(handle, LK_CURLOPT_XFERINFOFUNCTION, callback);
}

int lk_curl_getinfo_long(lk_curl *handle, lk_curl_info info, long *value) { return lib.easy_getinfo(handle, info, value); }

lk_curl_slist *lk_curl_slist_append(lk_curl_slist *list, const char *line) { return lib.slist_append(list, line); }

void lk_curl_slist_free_all(lk_curl_slist *list) { lib.slist_free_all(list); }
