#ifndef CLATCHKEY_TCP_H
#define CLATCHKEY_TCP_H

// TCP on loopback for the one HTTP/1.1 server (LoopbackHTTP): `struct sockaddr_in6` and
// `inet_pton` are clumsy from Swift, so the few calls that need them live here.

/// Binds and listens on `address` (a numeric IPv4 or IPv6 address, such as 127.0.0.1 or ::1)
/// at `port` (0: any free one), close-on-exec, SO_REUSEADDR set and, for IPv6, IPV6_V6ONLY, so
/// the two families are bound apart. Blocking: each accept waits. Stores the port bound in
/// `bound_port`. Returns the descriptor, or -errno (-EINVAL for an address that is not numeric).
int lk_tcp_listen(const char *address, int port, int backlog, int *bound_port);

/// Accepts the next connection, close-on-exec and blocking; -errno when the listener was shut
/// down (EINVAL) or the call failed.
int lk_tcp_accept(int listener);

/// Stops reads and writes on `fd` in both directions, waking a thread blocked in accept, recv
/// or send on it, before it is closed.
void lk_tcp_shutdown(int fd);

#endif
