#define _GNU_SOURCE
#include "include/clatchkey_sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#ifndef CLOSE_RANGE_CLOEXEC
#include <linux/close_range.h>
#endif

int lk_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int lk_open_entry(int dirfd, const char *name) { return openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC); }

int lk_exec_descriptor(int fd, char *const argv[]) {
    fexecve(fd, argv, environ);
    return errno;
}

/// What the caller gave this process, captured by `lk_remember_inherited_state` before the
/// runtime, the vault or the network opened anything, so that `lk_exec` hands exactly that on.
static int inherited_remembered;
static sigset_t inherited_mask;
static sigset_t inherited_ignored;
enum { INHERITED_FD_LIMIT = 1024 };
static unsigned char inherited_fds[INHERITED_FD_LIMIT];

static void remember_inherited_fd(int fd) {
    if (fd < 0 || fd >= INHERITED_FD_LIMIT) return;
    int flags = fcntl(fd, F_GETFD);
    inherited_fds[fd] = flags >= 0 && !(flags & FD_CLOEXEC);
}

/// Only the descriptors that are open, listed by /proc/self/fd: asking fcntl about each of the
/// 1,024 possible ones cost every start of latchkey-cli a thousand system calls.
static void remember_inherited_fds(void) {
    DIR *listing = opendir("/proc/self/fd");
    if (listing == NULL) {
        for (int fd = 0; fd < INHERITED_FD_LIMIT; fd++) remember_inherited_fd(fd);
        return;
    }
    int own = dirfd(listing);
    for (struct dirent *entry; (entry = readdir(listing)) != NULL;) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        int fd = atoi(entry->d_name);
        if (fd != own) remember_inherited_fd(fd);
    }
    closedir(listing);
}

void lk_remember_inherited_state(void) {
    pthread_sigmask(SIG_SETMASK, NULL, &inherited_mask);
    sigemptyset(&inherited_ignored);
    for (int number = 1; number < NSIG; number++) {
        struct sigaction current;
        if (sigaction(number, NULL, &current) == 0 && current.sa_handler == SIG_IGN) sigaddset(&inherited_ignored, number);
    }
    remember_inherited_fds();
    inherited_remembered = 1;
}

int lk_exec(const char *file, char *const argv[], char *const envp[]) {
    if (!inherited_remembered) {
        sigemptyset(&inherited_mask);
        sigemptyset(&inherited_ignored);
    }
    // Descriptors opened since start-up (the runtime's, the vault lock's) stay behind; those the
    // caller passed on (`3<file`) go on to the command.
    if (close_range(INHERITED_FD_LIMIT, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        // Kernels before 5.11: mark each open descriptor up to the limit.
        long limit = sysconf(_SC_OPEN_MAX);
        if (limit < 0 || limit > 65536) limit = 65536;
        for (int fd = INHERITED_FD_LIMIT; fd < limit; fd++) {
            int flags = fcntl(fd, F_GETFD);
            if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        }
    }
    for (int fd = 3; fd < INHERITED_FD_LIMIT; fd++) {
        if (inherited_remembered && inherited_fds[fd]) continue;
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
    // exec resets caught signals to their default itself; ignored ones carry over, so each is set
    // back to what the caller gave (`nohup` ignores SIGHUP; the runtime may ignore SIGPIPE).
    for (int number = 1; number < NSIG; number++) {
        struct sigaction current;
        if (sigaction(number, NULL, &current) != 0) continue;
        int wanted_ignored = sigismember(&inherited_ignored, number) == 1;
        if ((current.sa_handler == SIG_IGN) == wanted_ignored) continue;
        struct sigaction wanted = {0};
        wanted.sa_handler = wanted_ignored ? SIG_IGN : SIG_DFL;
        sigemptyset(&wanted.sa_mask);
        sigaction(number, &wanted, NULL);
    }
    pthread_sigmask(SIG_SETMASK, &inherited_mask, NULL);
    execvpe(file, argv, envp);
    return errno;
}

int lk_spawn(const char *path, char *const argv[], char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd, pid_t *pid) {
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_t actions;
    sigset_t empty, all;
    int result = posix_spawnattr_init(&attributes);
    if (result != 0) return result;
    result = posix_spawn_file_actions_init(&actions);
    if (result != 0) {
        posix_spawnattr_destroy(&attributes);
        return result;
    }
    sigemptyset(&empty);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

    int fds[3] = {stdin_fd, stdout_fd, stderr_fd};
    for (int target = 0; target < 3; target++) {
        if (fds[target] >= 0) {
            posix_spawn_file_actions_adddup2(&actions, fds[target], target);
        } else {
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
        }
    }
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);

    result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return result;
}
