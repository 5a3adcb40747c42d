#define NCURSES_WIDECHAR 1
#include <curses.h>
