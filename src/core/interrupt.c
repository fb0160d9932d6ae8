/* Ctrl-C and SIGTERM as a request to stop at the next safe point: the first signal sets a flag
 * that long runs poll between steps (to save a checkpoint and outputs); a second one ends the
 * program at once, as the user then plainly wants. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t received;

static void on_signal(int sig)
{
    if (received) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    received = sig;
    static const char msg[] = "\nkedr: stopping after this step and saving (again to stop now)\n";
    ssize_t r = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)r;
}

void kedr_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int kedr_interrupted(void) { return received; }

void kedr_interrupt_clear(void) { received = 0; }
