#ifndef CLATCHKEY_SYS_H
#define CLATCHKEY_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/file.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>

// Named here, not only found in this directory: a build that compiled the module before the
// agent's header existed would otherwise keep its cached module without it.
#include "clatchkey_agent.h"
#include "clatchkey_tcp.h"
#include <sys/resource.h>

/// pipe2(2) with O_CLOEXEC: no child started meanwhile by another thread inherits either end.
int lk_pipe_cloexec(int fds[2]);

/// posix_spawn(3) of `path` in a clean state, whatever the calling thread looks like: an empty
/// signal mask and default dispositions for every signal (a worker thread's blocked SIGTERM must
/// not make the child immune to it), its own process group (so the whole group, grandchildren
/// included, can be killed at a deadline), stdin/stdout/stderr from the given descriptors (-1:
/// /dev/null) and every other descriptor closed. Returns 0 and sets `*pid`, or an errno value.
int lk_spawn(const char *path, char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd, pid_t *pid);

/// Remembers the signal mask, the ignored signals and the open descriptors this process was
/// started with, for `lk_exec`. Call first thing in `main`, before any thread or file is opened.
void lk_remember_inherited_state(void);

/// execvpe(3) of `file` with `envp`, replacing this process, with what the caller gave this one
/// (as `lk_remember_inherited_state` saw it): its signal mask, its ignored signals (and no others:
/// the runtime's SIGPIPE), and its descriptors; every descriptor opened since is close-on-exec.
/// Returns only on failure, with the errno value.
int lk_exec(const char *file, char *const argv[], char *const envp[]);

/// openat(2) of `name` in the directory `dirfd` with O_PATH | O_NOFOLLOW | O_CLOEXEC: a handle on
/// the entry itself (a symbolic link is not followed), to fstat, readlinkat or execute, that
/// reads nothing (O_PATH is GNU-only, so Swift cannot spell it). `name` "/" opens the root.
int lk_open_entry(int dirfd, const char *name);

/// fexecve(3): runs the file open as `fd` (from `lk_open_entry`) with this process's environment,
/// replacing this process. Returns only on failure, with the errno value.
int lk_exec_descriptor(int fd, char *const argv[]);

/// Keeps secrets out of core files and away from same-user debuggers that lack CAP_SYS_PTRACE:
/// not dumpable (no core, no ptrace attach by unprivileged processes, /proc/PID/mem closed) and
/// a zero core size limit. Returns 0, or -1 when either call failed.
static inline int lk_harden_process(void) {
    struct rlimit none = {0, 0};
    int dumpable = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    int core = setrlimit(RLIMIT_CORE, &none);
    return dumpable == 0 && core == 0 ? 0 : -1;
}

/// flock(2), wrapped so the core does not depend on how Glibc's overlay spells it.
static inline int lk_flock(int fd, int operation) { return flock(fd, operation); }

// The kernel key retention service. syscall(2) is variadic, which Swift cannot call.

/// The user keyring: shared by every process of this user, outliving any one session.
static inline int32_t lk_user_keyring(void) { return KEY_SPEC_USER_KEYRING; }

/// add_key(2) of a "user" key into `keyring`; replaces a key with the same description.
static inline long lk_add_user_key(const char *description, const void *payload, size_t length, int32_t keyring) {
    return syscall(SYS_add_key, "user", description, payload, length, keyring);
}

/// add_key(2) of an empty keyring into `keyring`; an older keyring with the same description is
/// unlinked (and so, with everything in it, destroyed once nothing else links it).
static inline long lk_add_keyring(const char *description, int32_t keyring) {
    return syscall(SYS_add_key, "keyring", description, NULL, (size_t)0, keyring);
}

/// KEYCTL_SEARCH for a keyring.
static inline long lk_search_keyring(int32_t keyring, const char *description) {
    return syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, "keyring", description, 0);
}

/// KEYCTL_SEARCH for a "user" key; -1 with errno ENOKEY when absent or expired.
static inline long lk_search_user_key(int32_t keyring, const char *description) {
    return syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, "user", description, 0);
}

/// KEYCTL_READ: copies at most `length` bytes; returns the payload's full size.
static inline long lk_read_key(int32_t key, void *buffer, size_t length) {
    return syscall(SYS_keyctl, KEYCTL_READ, key, buffer, length);
}

/// KEYCTL_SET_TIMEOUT: the kernel destroys the key after `seconds`.
static inline long lk_set_key_timeout(int32_t key, unsigned seconds) {
    return syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, key, seconds);
}

/// KEYCTL_SETPERM: possessor all; same user view, read, search (nobody else anything).
static inline long lk_restrict_key(int32_t key) {
    return syscall(SYS_keyctl, KEYCTL_SETPERM, key, (uint32_t)0x3f0b0000);
}

/// KEYCTL_INVALIDATE: the key disappears at once.
static inline long lk_invalidate_key(int32_t key) {
    return syscall(SYS_keyctl, KEYCTL_INVALIDATE, key);
}

/// Saves the settings of the terminal `fd` so that they come back whatever ends what is reading
/// it: until `lk_terminal_unguard`, SIGINT, SIGTERM, SIGHUP and SIGQUIT restore them before the
/// signal does what it would have done (an ignored one stays ignored), and so does exit(), which
/// a command may reach while another thread still waits in a read. One guard at a time; returns
/// 0, or -1 when `fd` is not a terminal or a guard is active.
int lk_terminal_guard(int fd);

/// Restores the saved settings now and puts the signal actions back.
void lk_terminal_unguard(void);

#endif
