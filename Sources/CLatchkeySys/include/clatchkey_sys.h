#ifndef CLATCHKEY_SYS_H
#define CLATCHKEY_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/file.h>

/// flock(2): imported fine, but wrapped so the core never depends on Glibc's overlay spelling.
static inline int lk_flock(int fd, int operation) { return flock(fd, operation); }

#endif
