#define _GNU_SOURCE
#include "include/clatchkey_sys.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <termios.h>

/// The settings `lk_terminal_guard` saved, and the signal actions it replaced. Written only
/// while no guard is active; read by the handler and at exit, which need nothing but these.
static volatile sig_atomic_t guard_active;
static int guard_fd = -1;
static struct termios guard_saved;
static const int guard_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define GUARD_SIGNAL_COUNT (sizeof guard_signals / sizeof guard_signals[0])
static struct sigaction guard_previous[GUARD_SIGNAL_COUNT];
static int guard_installed[GUARD_SIGNAL_COUNT];
static pthread_once_t guard_exit_once = PTHREAD_ONCE_INIT;

/// tcsetattr(3) is async-signal-safe: the handler and exit() may both call this.
static void guard_restore_terminal(void) {
    if (guard_active) tcsetattr(guard_fd, TCSANOW, &guard_saved);
}

static void guard_restore_actions(void) {
    for (size_t i = 0; i < GUARD_SIGNAL_COUNT; i++) {
        if (guard_installed[i]) sigaction(guard_signals[i], &guard_previous[i], NULL);
        guard_installed[i] = 0;
    }
}

/// Restores the terminal, puts back what the signal would have done, and lets it do that: the
/// signal is blocked while its handler runs, so the raise takes effect when this returns.
static void guard_on_signal(int number) {
    guard_restore_terminal();
    guard_active = 0;
    guard_restore_actions();
    raise(number);
}

static void guard_register_exit(void) { atexit(guard_restore_terminal); }

int lk_terminal_guard(int fd) {
    if (guard_active) return -1;
    if (tcgetattr(fd, &guard_saved) != 0) return -1;
    guard_fd = fd;
    pthread_once(&guard_exit_once, guard_register_exit);
    struct sigaction action = {0};
    action.sa_handler = guard_on_signal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < GUARD_SIGNAL_COUNT; i++) {
        guard_installed[i] = 0;
        if (sigaction(guard_signals[i], NULL, &guard_previous[i]) != 0) continue;
        // An ignored signal stays ignored (nohup): nothing it would do needs a restored terminal.
        if (guard_previous[i].sa_handler == SIG_IGN) continue;
        if (sigaction(guard_signals[i], &action, NULL) == 0) guard_installed[i] = 1;
    }
    guard_active = 1;
    return 0;
}

void lk_terminal_unguard(void) {
    if (!guard_active) return;
    guard_restore_terminal();
    guard_active = 0;
    guard_restore_actions();
}
