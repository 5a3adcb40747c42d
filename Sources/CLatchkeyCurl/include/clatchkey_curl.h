#ifndef CLATCHKEY_CURL_H
#define CLATCHKEY_CURL_H

#include <stddef.h>
#include <stdint.h>

/// libcurl's easy interface, loaded with dlopen on the first request, so that no command pays
/// for loading it (or OpenSSL) at start-up and building needs no curl headers. Each function is
/// a typed stand-in for one libcurl entry point (`curl_easy_setopt` is variadic, which Swift
/// cannot call). Call `lk_curl_load` first; the others assume it succeeded.
///
/// The numbers below are libcurl's ABI (SONAME libcurl.so.4): an option is its type base
/// (long 0, pointer 10000, function 20000, curl_off_t 30000) plus a fixed index, and neither
/// options nor error codes are ever renumbered. docs/libcurl-abi.md lists where each comes from.

/// An easy handle (`CURL *`).
typedef struct lk_curl lk_curl;
/// A header list (`struct curl_slist *`).
typedef struct lk_curl_slist lk_curl_slist;

/// `CURLoption` values used by Latchkey.
typedef enum {
    LK_CURLOPT_WRITEDATA = 10001,
    LK_CURLOPT_URL = 10002,
    LK_CURLOPT_ERRORBUFFER = 10010,
    LK_CURLOPT_CUSTOMREQUEST = 10036,
    LK_CURLOPT_WRITEFUNCTION = 20011,
    LK_CURLOPT_USERAGENT = 10018,
    LK_CURLOPT_HTTPHEADER = 10023,
    LK_CURLOPT_HEADERDATA = 10029,
    LK_CURLOPT_NOPROGRESS = 43,
    LK_CURLOPT_POST = 47,
    LK_CURLOPT_NETRC = 51,
    LK_CURLOPT_FOLLOWLOCATION = 52,
    LK_CURLOPT_XFERINFODATA = 10057,
    LK_CURLOPT_SSL_VERIFYPEER = 64,
    LK_CURLOPT_HEADERFUNCTION = 20079,
    LK_CURLOPT_HTTPGET = 80,
    LK_CURLOPT_SSL_VERIFYHOST = 81,
    LK_CURLOPT_NOSIGNAL = 99,
    LK_CURLOPT_TIMEOUT_MS = 155,
    LK_CURLOPT_CONNECTTIMEOUT_MS = 156,
    LK_CURLOPT_COPYPOSTFIELDS = 10165,
    LK_CURLOPT_NOPROXY = 10177,
    LK_CURLOPT_PROTOCOLS = 181,
    LK_CURLOPT_MAXFILESIZE_LARGE = 30117,
    LK_CURLOPT_POSTFIELDSIZE_LARGE = 30120,
    LK_CURLOPT_XFERINFOFUNCTION = 20219,
    /// Since 7.85.0; older libraries answer LK_CURLE_UNKNOWN_OPTION and take LK_CURLOPT_PROTOCOLS.
    LK_CURLOPT_PROTOCOLS_STR = 10318,
} lk_curl_option;

/// `CURLINFO` values used by Latchkey (CURLINFO_LONG is 0x200000).
typedef enum {
    LK_CURLINFO_RESPONSE_CODE = 0x200002,
} lk_curl_info;

/// `CURLcode` values Latchkey tells apart (every function returning `int` returns one).
#define LK_CURLE_OK 0
#define LK_CURLE_WRITE_ERROR 23
#define LK_CURLE_OPERATION_TIMEDOUT 28
#define LK_CURLE_SSL_CONNECT_ERROR 35
#define LK_CURLE_ABORTED_BY_CALLBACK 42
#define LK_CURLE_UNKNOWN_OPTION 48
#define LK_CURLE_PEER_FAILED_VERIFICATION 60
#define LK_CURLE_FILESIZE_EXCEEDED 63
#define LK_CURLE_SSL_CACERT_BADFILE 77

/// `CURLPROTO_HTTP | CURLPROTO_HTTPS`, for LK_CURLOPT_PROTOCOLS.
#define LK_CURLPROTO_HTTP_AND_HTTPS 3L
/// `CURL_ERROR_SIZE`: the size LK_CURLOPT_ERRORBUFFER's buffer must have.
#define LK_CURL_ERROR_SIZE 256

/// `curl_write_callback`, for the body (LK_CURLOPT_WRITEFUNCTION) and the header lines
/// (LK_CURLOPT_HEADERFUNCTION): returning anything but `size * count` aborts the transfer.
typedef size_t (*lk_curl_write_callback)(char *data, size_t size, size_t count, void *context);
/// `curl_xferinfo_callback`: called often during a transfer (about once a second when idle);
/// a non-zero return aborts it with LK_CURLE_ABORTED_BY_CALLBACK.
typedef int (*lk_curl_progress_callback)(void *context, int64_t download_total, int64_t downloaded, int64_t upload_total,
                                         int64_t uploaded);

/// Loads libcurl from `path` and initialises it: 1 when it is usable; else 0 and `*error`
/// points to a message saying what failed. `path` is absolute, found and checked by the caller
/// (`SystemLibrary.locate`): a bare name would be searched for in the program's run path and
/// `LD_LIBRARY_PATH`. Call it once per process, before any other function here.
int lk_curl_load(const char *path, const char **error);

/// `curl_version()`: "libcurl/7.88.1 OpenSSL/3.0.15 ...".
const char *lk_curl_version(void);

lk_curl *lk_curl_easy_init(void);
void lk_curl_easy_cleanup(lk_curl *handle);
int lk_curl_easy_perform(lk_curl *handle);
const char *lk_curl_easy_strerror(int code);

int lk_curl_setopt_long(lk_curl *handle, lk_curl_option option, long value);
/// libcurl copies string options (since 7.17.0), so `value` need not outlive the call.
int lk_curl_setopt_string(lk_curl *handle, lk_curl_option option, const char *value);
/// Pointers libcurl keeps as given: callback contexts, the error buffer, header lists.
int lk_curl_setopt_pointer(lk_curl *handle, lk_curl_option option, void *value);
int lk_curl_setopt_offset(lk_curl *handle, lk_curl_option option, int64_t value);
int lk_curl_setopt_write_callback(lk_curl *handle, lk_curl_option option, lk_curl_write_callback callback);
int lk_curl_setopt_progress_callback(lk_curl *handle, lk_curl_progress_callback callback);

int lk_curl_getinfo_long(lk_curl *handle, lk_curl_info info, long *value);

lk_curl_slist *lk_curl_slist_append(lk_curl_slist *list, const char *line);
void lk_curl_slist_free_all(lk_curl_slist *list);

#endif
