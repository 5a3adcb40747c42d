#ifndef CNCURSESW_SHIM_H
#define CNCURSESW_SHIM_H

// ncursesw for Swift 6 (see docs/ncurses-from-swift.md). SwiftPM drops pkg-config's -D
// flags and a C target's cSettings .define does not reach the Swift importer, so the wide API is
// requested here, before curses.h.
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <wchar.h>
#include <curses.h>

// MARK: - Globals (reading a C global `var` is an error in Swift 6 mode)

static inline WINDOW *nc_stdscr(void) { return stdscr; }
static inline int nc_lines(void) { return LINES; }
static inline int nc_cols(void) { return COLS; }
static inline int nc_colors(void) { return COLORS; }

// MARK: - Function-like macros Swift cannot import

static inline attr_t nc_color_pair(short n) { return (attr_t)COLOR_PAIR(n); }
static inline attr_t nc_a_normal(void) { return (attr_t)A_NORMAL; }
static inline attr_t nc_a_bold(void) { return (attr_t)A_BOLD; }
static inline attr_t nc_a_reverse(void) { return (attr_t)A_REVERSE; }
static inline attr_t nc_a_dim(void) { return (attr_t)A_DIM; }
static inline attr_t nc_a_underline(void) { return (attr_t)A_UNDERLINE; }
static inline void nc_getmaxyx(const WINDOW *w, int *y, int *x) {
    int yy, xx;
    getmaxyx(w, yy, xx);
    *y = yy;
    *x = xx;
}
static inline int nc_wattrset(WINDOW *w, attr_t a) { return wattrset(w, (int)a); }

// MARK: - Locale and character width

// wcwidth: <wchar.h> declares it only under _XOPEN_SOURCE, which Swift's Glibc module lacks.
extern int wcwidth(wchar_t c);
static inline int nc_wcwidth(wchar_t c) { return wcwidth(c); }
/// The current LC_CTYPE character set, such as "UTF-8" or "ANSI_X3.4-1968".
static inline const char *nc_codeset(void) { return nl_langinfo(CODESET); }

// MARK: - Raw output next to ncurses (OSC 8 / OSC 52) and pty tests

static inline int nc_write_raw(FILE *f, const char *bytes) {
    int rc = fputs(bytes, f);
    fflush(f);
    return rc;
}
/// Sets a terminal's window size (ioctl is variadic, so Swift cannot call it).
static inline int nc_set_winsize(int fd, unsigned short rows, unsigned short cols) {
    struct winsize ws = { rows, cols, 0, 0 };
    return ioctl(fd, TIOCSWINSZ, &ws);
}
#endif
