#define _GNU_SOURCE
#include "include/clatchkey_agent.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/// Fills `address` for `path`; -ENAMETOOLONG when it does not fit (with its NUL).
static int unix_address(const char *path, struct sockaddr_un *address) {
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof address->sun_path) return -ENAMETOOLONG;
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    memcpy(address->sun_path, path, length);
    return 0;
}

int lk_unix_listen(const char *path, int backlog) {
    struct sockaddr_un address;
    int problem = unix_address(path, &address);
    if (problem != 0) return problem;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    // The socket file gets 0777 & ~umask: never, not even for an instant, more than 0600.
    mode_t previous = umask(0177);
    int bound = bind(fd, (struct sockaddr *)&address, sizeof address);
    int bind_error = errno;
    umask(previous);
    if (bound != 0 || listen(fd, backlog) != 0) {
        int error = bound != 0 ? bind_error : errno;
        close(fd);
        return -error;
    }
    return fd;
}

int lk_unix_connect(const char *path) {
    struct sockaddr_un address;
    int problem = unix_address(path, &address);
    if (problem != 0) return problem;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int result;
    do {
        result = connect(fd, (struct sockaddr *)&address, sizeof address);
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int lk_unix_accept(int listener) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int lk_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    if (length != sizeof credentials) return -EPROTO;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int lk_send_all(int fd, const void *bytes, size_t length) {
    const char *next = bytes;
    while (length > 0) {
        ssize_t sent = send(fd, next, length, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        next += sent;
        length -= (size_t)sent;
    }
    return 0;
}

ssize_t lk_send_some(int fd, const void *bytes, size_t length) {
    ssize_t sent = send(fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT);
    return sent < 0 ? -errno : sent;
}

ssize_t lk_receive(int fd, void *buffer, size_t capacity, int timeout_ms) {
    struct pollfd wanted = {.fd = fd, .events = POLLIN};
    for (;;) {
        int ready = poll(&wanted, 1, timeout_ms);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (ready == 0) return -ETIMEDOUT;
        ssize_t count = recv(fd, buffer, capacity, 0);
        if (count < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -errno;
        }
        return count;
    }
}
