/* A progress line for long runs, drawn only on a terminal. */
#include "internal.h"

#include <stdio.h>
#include <unistd.h>

static void format_duration(double s, char *buf, size_t len)
{
    if (s < 0 || s > 1e8)
        snprintf(buf, len, "--");
    else if (s < 60)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

void kedr_progress_begin(kedr_progress *p, const char *label, const char *unit, double total)
{
    p->label = label;
    p->unit = unit;
    p->total = total;
    p->start = p->last_draw = kedr_wall_seconds();
    p->enabled = isatty(fileno(stderr));
}

static void draw(kedr_progress *p, double done, double now)
{
    double elapsed = now - p->start;
    double rate = elapsed > 0 ? done / elapsed : 0;
    char eta[32];
    format_duration(rate > 0 && p->total > 0 ? (p->total - done) / rate : -1, eta, sizeof eta);
    if (p->total > 0)
        fprintf(stderr, "\r%s  %.0f/%.0f %s (%.1f%%)  %.3g %s/s  ETA %s   ", p->label, done,
                p->total, p->unit, 100.0 * done / p->total, rate, p->unit, eta);
    else
        fprintf(stderr, "\r%s  %.0f %s  %.3g %s/s   ", p->label, done, p->unit, rate, p->unit);
    fflush(stderr);
}

void kedr_progress_update(kedr_progress *p, double done)
{
    if (!p->enabled)
        return;
    double now = kedr_wall_seconds();
    if (now - p->last_draw < 0.25)
        return;
    p->last_draw = now;
    draw(p, done, now);
}

void kedr_progress_end(kedr_progress *p)
{
    if (p->enabled)
        fprintf(stderr, "\r\033[K");
}
