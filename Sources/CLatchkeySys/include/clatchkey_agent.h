#ifndef CLATCHKEY_AGENT_H
#define CLATCHKEY_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// The agent's Unix sockets: `struct sockaddr_un` and `struct ucred` are awkward or hidden
// (_GNU_SOURCE) in Swift, so the few calls that need them live here.

/// Binds and listens on a new Unix stream socket at `path`, created mode 0600 (the umask is set
/// around bind(2), since the socket's mode is the file's). Non-blocking and close-on-exec.
/// Returns the descriptor, or -errno (-ENAMETOOLONG for a path that does not fit sun_path).
int lk_unix_listen(const char *path, int backlog);

/// Connects a new Unix stream socket (close-on-exec, blocking) to `path`. Returns the
/// descriptor, or -errno (-ENOENT: nothing there; -ECONNREFUSED: a socket nobody listens on).
int lk_unix_connect(const char *path);

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC. Returns the descriptor, or -errno.
int lk_unix_accept(int listener);

/// SO_PEERCRED: the process, user and group that connected. Returns 0, or -errno.
int lk_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// Writes all `length` bytes to a blocking socket without raising SIGPIPE (MSG_NOSIGNAL): a
/// peer that went away is an error, not a signal. Returns 0, or -errno.
int lk_send_all(int fd, const void *bytes, size_t length);

/// send(2) with MSG_NOSIGNAL | MSG_DONTWAIT: what a non-blocking socket takes now. Returns the
/// count written, or -errno.
ssize_t lk_send_some(int fd, const void *bytes, size_t length);

/// Reads what is there within `timeout_ms` (-1: no limit) into `buffer`. Returns the count read
/// (0 at the end of the stream), or -errno (-ETIMEDOUT when nothing came in time).
ssize_t lk_receive(int fd, void *buffer, size_t capacity, int timeout_ms);

#endif
