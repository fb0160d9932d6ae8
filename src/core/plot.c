/* PNG plots (include/kedr/plot.h), drawn with PLplot's pngcairo device when kedr is built with
 * PLplot. Each figure is drawn on a PLplot stream of its own into FILE.tmp, which is checked and
 * renamed to FILE only when complete. PLplot keeps global state: calls must not run concurrently
 * from several threads. */
#include "kedr/plot.h"

#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KEDR_HAVE_PLOT
#include <plplot.h>
#endif

/* Figure size in pixels. */
#define PLOT_WIDTH KEDR_PLOT_WIDTH
#define PLOT_HEIGHT KEDR_PLOT_HEIGHT

static kedr_status check_path(const char *fn, const char *path)
{
    if (!path || !path[0])
        return kedr_fail(KEDR_ERR_INVALID, "%s: path is %s", fn, path ? "empty" : "NULL");
    if (strlen(path) > 900)
        return kedr_fail(KEDR_ERR_INVALID, "%s: path is longer than 900 characters", fn);
    return KEDR_OK;
}

#ifndef KEDR_HAVE_PLOT

kedr_status kedr_plot_available(void)
{
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "PNG plots are not built into this kedr: install "
                     "PLplot's development files and cairo driver (Debian: libplplot-dev "
                     "plplot-driver-cairo) and rebuild");
}

kedr_status kedr_plot_series(const char *path, const kedr_plot_axes *axes, size_t n,
                             const double *x, const double *y)
{
    (void)axes, (void)n, (void)x, (void)y;
    KEDR_TRY(check_path("kedr_plot_series", path));
    return kedr_plot_available();
}

kedr_status kedr_plot_map(const char *path, const char *title, const char *label, int nx, int ny,
                          const double lo[2], const double hi[2], const double *values,
                          int log_scale)
{
    (void)title, (void)label, (void)nx, (void)ny, (void)lo, (void)hi, (void)values, (void)log_scale;
    KEDR_TRY(check_path("kedr_plot_map", path));
    return kedr_plot_available();
}

kedr_status kedr_plot_map_rgb(unsigned char *rgb, int nx, int ny, const double lo[2],
                              const double hi[2], const double *values, int log_scale)
{
    (void)rgb, (void)nx, (void)ny, (void)lo, (void)hi, (void)values, (void)log_scale;
    return kedr_plot_available();
}

#else

kedr_status kedr_plot_available(void)
{
    return KEDR_OK;
}

/* PLplot calls exit() on a fatal error unless the handler returns 0; the message is kept so
 * the figure's caller sees it. */
static char plot_error[256];

static int on_plplot_exit(const char *msg)
{
    snprintf(plot_error, sizeof plot_error, "%s", msg ? msg : "PLplot error");
    return 0;
}

/* Opens a new stream drawing to the PNG file tmp, or (tmp NULL) into the RGB buffer rgb of
 * PLOT_WIDTH x PLOT_HEIGHT pixels through the same cairo renderer: white background, black axes,
 * a blue-to-red colour map. */
static kedr_status begin(const char *fn, const char *tmp, unsigned char *rgb)
{
    if (tmp) {
        FILE *probe = fopen(tmp, "wb"); /* PLplot would not say clearly why it cannot write */
        if (!probe)
            return kedr_fail(KEDR_ERR_IO, "%s: cannot write %s: %s", fn, tmp, strerror(errno));
        fclose(probe);
    }
    plot_error[0] = 0;
    plsexit(on_plplot_exit);
    PLINT strm = 0;
    plmkstrm(&strm);
    if (tmp) {
        plsdev("pngcairo");
        plsfnam(tmp);
    } else {
        memset(rgb, 255, (size_t)PLOT_WIDTH * PLOT_HEIGHT * 3);
        plsdev("memcairo");
        plsmem(PLOT_WIDTH, PLOT_HEIGHT, rgb);
    }
    plspage(0, 0, PLOT_WIDTH, PLOT_HEIGHT, 0, 0);
    plscolbg(255, 255, 255);
    plinit();
    plscol0(1, 0, 0, 0);        /* axes and text */
    plscol0(15, 170, 170, 170); /* cells without data */
    /* HLS from blue (240) through cyan, green and yellow to red (0). */
    PLFLT pos[2] = {0, 1}, hue[2] = {240, 0}, light[2] = {0.5, 0.5}, sat[2] = {1, 1};
    PLINT rev[1] = {0};
    plscmap1n(256);
    plscmap1l(0, 2, pos, hue, light, sat, rev);
    plcol0(1);
    plschr(0, 1.1);
    return KEDR_OK;
}

/* Ends the stream and moves tmp to path once it holds a PNG. */
static kedr_status finish(const char *fn, const char *path, const char *tmp)
{
    plend1();
    unsigned char sig[8] = {0};
    FILE *f = fopen(tmp, "rb");
    size_t got = f ? fread(sig, 1, 8, f) : 0;
    if (f)
        fclose(f);
    if (plot_error[0] || got != 8 || memcmp(sig, "\x89PNG\r\n\x1a\n", 8) != 0) {
        remove(tmp);
        return kedr_fail(KEDR_ERR_IO, "%s: %s: PLplot wrote no PNG%s%s", fn, path,
                         plot_error[0] ? ": " : "", plot_error);
    }
    if (rename(tmp, path) != 0) {
        kedr_status s = kedr_fail(KEDR_ERR_IO, "%s: cannot rename %s to %s: %s", fn, tmp, path,
                                  strerror(errno));
        remove(tmp);
        return s;
    }
    return KEDR_OK;
}

kedr_status kedr_plot_series(const char *path, const kedr_plot_axes *axes, size_t n,
                             const double *x, const double *y)
{
    const char *fn = "kedr_plot_series";
    KEDR_TRY(check_path(fn, path));
    if (n == 0)
        return kedr_fail(KEDR_ERR_INVALID, "%s: n = 0: nothing to plot", fn);
    KEDR_TRY(kedr_check_ptr(x, n, fn, "x"));
    KEDR_TRY(kedr_check_ptr(y, n, fn, "y"));
    if (n > (size_t)1 << 30)
        return kedr_fail(KEDR_ERR_INVALID, "%s: n = %zu: at most 2^30 points", fn, n);
    int log_y = axes && axes->log_y;
    PLFLT *px = malloc(n * sizeof *px), *py = malloc(n * sizeof *py);
    if (!px || !py) {
        free(px);
        free(py);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu points)", fn, n);
    }
    /* Points that cannot be drawn (non-finite, or <= 0 on a log axis) are left out. */
    PLINT m = 0;
    double x0 = HUGE_VAL, x1 = -HUGE_VAL, y0 = HUGE_VAL, y1 = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        double yi = log_y ? (y[i] > 0 ? log10(y[i]) : NAN) : y[i];
        if (!isfinite(x[i]) || !isfinite(yi))
            continue;
        px[m] = x[i];
        py[m++] = yi;
        x0 = fmin(x0, x[i]);
        x1 = fmax(x1, x[i]);
        y0 = fmin(y0, yi);
        y1 = fmax(y1, yi);
    }
    if (m == 0) {
        free(px);
        free(py);
        return kedr_fail(KEDR_ERR_INVALID, "%s: none of the %zu points can be drawn (non-finite%s)",
                         fn, n, log_y ? ", or y <= 0 on the log axis" : "");
    }
    /* A degenerate range gets a margin, so PLplot is not asked for an empty window. */
    double mx = x1 > x0 ? 0.02 * (x1 - x0) : fmax(1e-12, 0.5 * fabs(x0)) + 0.5;
    double my = y1 > y0 ? 0.05 * (y1 - y0) : fmax(1e-12, 0.5 * fabs(y0)) + 0.5;
    char tmp[1000];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    kedr_status s = begin(fn, tmp, NULL);
    if (s == KEDR_OK) {
        plenv(x0 - mx, x1 + mx, y0 - my, y1 + my, 0, log_y ? 20 : 2);
        pllab(axes && axes->xlabel ? axes->xlabel : "", axes && axes->ylabel ? axes->ylabel : "",
              axes && axes->title ? axes->title : "");
        plcol0(9); /* blue */
        plline(m, px, py);
        plpoin(m, px, py, 17);
        s = finish(fn, path, tmp);
    }
    free(px);
    free(py);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Cell corner (i, j) in the world: data = {x0, y0, dx, dy}. Without it plimagefr would put the
 * corners i at x0 + i (x1 - x0) / (nx - 1), stretching the cells and pushing the last column
 * and row out of the window. */
static void cell_corner(PLFLT i, PLFLT j, PLFLT *x, PLFLT *y, PLPointer data)
{
    const double *g = (const double *)data;
    *x = g[0] + i * g[2];
    *y = g[1] + j * g[3];
}

/* kedr_plot_map into the file path, or (path NULL) into the buffer rgb. */
static kedr_status plot_map(const char *fn, const char *path, unsigned char *rgb,
                            const char *title, const char *label, int nx, int ny,
                            const double lo[2], const double hi[2], const double *values,
                            int log_scale)
{
    if (nx < 1 || ny < 1 || (int64_t)nx * ny > ((int64_t)1 << 28))
        return kedr_fail(KEDR_ERR_INVALID, "%s: %d x %d cells: expected 1 to 2^28 cells", fn, nx,
                         ny);
    if (!lo || !hi)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL", fn, lo ? "hi" : "lo");
    if (!(hi[0] > lo[0]) || !(hi[1] > lo[1]) || !isfinite(hi[0] - lo[0]) ||
        !isfinite(hi[1] - lo[1]))
        return kedr_fail(KEDR_ERR_INVALID, "%s: the rectangle [%g, %g] x [%g, %g] is empty", fn,
                         lo[0], hi[0], lo[1], hi[1]);
    size_t cells = (size_t)nx * (size_t)ny;
    KEDR_TRY(kedr_check_ptr(values, cells, fn, "values"));
    /* PLplot wants idata[i][j] with x index i; cells without data (NaN, or <= 0 on a log scale)
     * stay NaN, which plimagefr leaves undrawn over the grey background. The colours span the
     * data's range: plimage would take the range from every entry, so a marker value for the
     * cells without data would squeeze the data into part of the colour map (it did: a sphere's
     * 200 K freestream came out green against a bar that read 2500 K there). */
    PLFLT *block = malloc(cells * sizeof *block);
    PLFLT **rows = malloc((size_t)nx * sizeof *rows);
    if (!block || !rows) {
        free(block);
        free(rows);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu cells)", fn, cells);
    }
    double *sorted = malloc(cells * sizeof *sorted);
    if (!sorted) {
        free(block);
        free(rows);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu cells)", fn, cells);
    }
    size_t nfin = 0;
    for (int i = 0; i < nx; i++) {
        rows[i] = block + (size_t)i * ny;
        for (int j = 0; j < ny; j++) {
            double v = values[(size_t)i + (size_t)nx * j];
            if (log_scale)
                v = v > 0 ? log10(v) : NAN;
            rows[i][j] = isfinite(v) ? v : NAN;
            if (isfinite(v))
                sorted[nfin++] = v;
        }
    }
    /* The colour range: the 0.5th to the 99.5th percentile of the cells' values. */
    double z0 = HUGE_VAL, z1 = -HUGE_VAL, all0 = 0, all1 = 0;
    if (nfin) {
        qsort(sorted, nfin, sizeof *sorted, cmp_double);
        all0 = sorted[0];
        all1 = sorted[nfin - 1];
        z0 = sorted[(size_t)(0.005 * (double)(nfin - 1))];
        z1 = sorted[(size_t)ceil(0.995 * (double)(nfin - 1))];
    }
    free(sorted);
    int clipped = nfin && (all0 < z0 || all1 > z1);
    int empty = !(z1 >= z0);
    if (empty)
        z0 = 0, z1 = 1;
    else if (z1 == z0)
        z1 = z0 + (z0 != 0 ? 1e-6 * fabs(z0) : 1.0);
    char tmp[1000];
    if (path)
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
    kedr_status s = begin(fn, path ? tmp : NULL, rgb);
    if (s == KEDR_OK) {
        pladv(0);
        /* Equal scales in x and y; the right of the page is left for the colour bar. */
        plvpor(0.1, 0.84, 0.13, 0.9);
        plvpas(0.1, 0.84, 0.13, 0.9, (hi[1] - lo[1]) / (hi[0] - lo[0]));
        plwind(lo[0], hi[0], lo[1], hi[1]);
        PLFLT gx[4] = {lo[0], hi[0], hi[0], lo[0]}, gy[4] = {lo[1], lo[1], hi[1], hi[1]};
        plcol0(15);
        plfill(4, gx, gy);
        double grid[4] = {lo[0], lo[1], (hi[0] - lo[0]) / nx, (hi[1] - lo[1]) / ny};
        if (!empty) /* every finite cell drawn, the colours over [z0, z1] */
            plimagefr((PLFLT_MATRIX)rows, nx, ny, lo[0], hi[0], lo[1], hi[1], fmin(all0, z0),
                      fmax(all1, z1), z0, z1, cell_corner, grid);
        plcol0(1);
        plbox("bcnst", 0, 0, "bcnstv", 0, 0);
        pllab("x [m]", "y [m]", title ? title : "");
        char bar_label[160];
        snprintf(bar_label, sizeof bar_label, "%s%s%s", log_scale ? "log#d10#u " : "",
                 label ? label : "", empty ? " (no data)"
                                           : clipped ? " (percentiles 0.5 to 99.5)" : "");
        const char *labels[1] = {bar_label}, *axis_opts[1] = {"bcvtm"};
        PLINT label_opts[1] = {PL_COLORBAR_LABEL_RIGHT}, sub_ticks[1] = {0}, n_values[1] = {2};
        PLFLT ticks[1] = {0}, range[2] = {z0, z1};
        const PLFLT *values_list[1] = {range};
        PLFLT bar_w = 0, bar_h = 0;
        plcolorbar(&bar_w, &bar_h, PL_COLORBAR_IMAGE, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE |
                   PL_POSITION_VIEWPORT, 0.02, 0, 0.03, 0.8, 0, 1, 1, 0, 0, 0, 0, 1, label_opts,
                   labels, 1, axis_opts, ticks, sub_ticks, n_values, values_list);
        if (path) {
            s = finish(fn, path, tmp);
        } else {
            plend1();
            if (plot_error[0])
                s = kedr_fail(KEDR_ERR_IO, "%s: PLplot: %s", fn, plot_error);
        }
    }
    free(rows);
    free(block);
    return s;
}

kedr_status kedr_plot_map(const char *path, const char *title, const char *label, int nx, int ny,
                          const double lo[2], const double hi[2], const double *values,
                          int log_scale)
{
    KEDR_TRY(check_path("kedr_plot_map", path));
    return plot_map("kedr_plot_map", path, NULL, title, label, nx, ny, lo, hi, values, log_scale);
}

kedr_status kedr_plot_map_rgb(unsigned char *rgb, int nx, int ny, const double lo[2],
                              const double hi[2], const double *values, int log_scale)
{
    KEDR_TRY(kedr_check_ptr(rgb, (size_t)PLOT_WIDTH * PLOT_HEIGHT * 3, "kedr_plot_map_rgb", "rgb"));
    return plot_map("kedr_plot_map_rgb", NULL, rgb, NULL, NULL, nx, ny, lo, hi, values,
                    log_scale);
}

#endif
