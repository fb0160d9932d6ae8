/* PNG plots (include/kedr/plot.h), drawn with PLplot's pngcairo device when kedr is built with
 * PLplot. Each figure is drawn on a PLplot stream of its own into FILE.tmp (made by
 * kedr_file_begin, which refuses a FILE that is a device, FIFO or directory), which is checked and
 * renamed over FILE only when complete. PLplot keeps global state: calls must not run
 * concurrently from several threads. */
#include "kedr/plot.h"

#include "internal.h"

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

/* Opens a new stream drawing to the PNG file w->tmp, made here (w NULL: into the RGB buffer rgb
 * of PLOT_WIDTH x PLOT_HEIGHT pixels) through the same cairo renderer: white background, black
 * axes, a blue-to-red colour map. PLplot writes the file by name, so kedr_file_begin makes it
 * first: it refuses targets that are not regular files and says clearly why it cannot write. */
static kedr_status begin(const char *path, kedr_file_writer *w, unsigned char *rgb)
{
    if (w)
        KEDR_TRY(kedr_file_begin(w, path));
    const char *tmp = w ? w->tmp : NULL;
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
    plscol0(15, 170, 170, 170); /* cells outside the data (inside a body) */
    plscol0(14, 255, 255, 255); /* cells of the domain without data */
    /* HLS from blue (240) through cyan, green and yellow to red (0). */
    PLFLT pos[2] = {0, 1}, hue[2] = {240, 0}, light[2] = {0.5, 0.5}, sat[2] = {1, 1};
    PLINT rev[1] = {0};
    plscmap1n(256);
    plscmap1l(0, 2, pos, hue, light, sat, rev);
    plcol0(1);
    plschr(0, 1.1);
    return KEDR_OK;
}

/* Ends the stream and renames w->tmp over the target once it holds a PNG (kedr_file_commit
 * syncs what PLplot wrote, through the writer's own descriptor of the same file). */
static kedr_status finish(const char *fn, kedr_file_writer *w)
{
    plend1();
    unsigned char sig[8] = {0};
    FILE *f = fopen(w->tmp, "rb");
    size_t got = f ? fread(sig, 1, 8, f) : 0;
    if (f)
        fclose(f);
    if (plot_error[0] || got != 8 || memcmp(sig, "\x89PNG\r\n\x1a\n", 8) != 0) {
        kedr_status s = kedr_fail(KEDR_ERR_IO, "%s: %s: PLplot wrote no PNG%s%s", fn, w->path,
                                  plot_error[0] ? ": " : "", plot_error);
        kedr_file_abort(w);
        return s;
    }
    return kedr_file_commit(w);
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
    kedr_file_writer w;
    kedr_status s = begin(path, &w, NULL);
    if (s == KEDR_OK) {
        plenv(x0 - mx, x1 + mx, y0 - my, y1 + my, 0, log_y ? 20 : 2);
        pllab(axes && axes->xlabel ? axes->xlabel : "", axes && axes->ylabel ? axes->ylabel : "",
              axes && axes->title ? axes->title : "");
        plcol0(9); /* blue */
        plline(m, px, py);
        plpoin(m, px, py, 17);
        s = finish(fn, &w);
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

/* A map's cells for PLplot (rows[i][j], x index i) and its colour range. */
typedef struct {
    PLFLT *block, **rows;
    double z0, z1, all0, all1; /* the colour range (percentiles) and the data's whole range */
    size_t no_data;            /* cells of the domain without data (infinite values) */
    int clipped, empty;
} map_cells;

static void map_free(map_cells *m)
{
    free(m->block);
    free(m->rows);
}

/* Cells outside the data (NaN, or <= 0 on a log scale) and without data (infinite) stay NaN,
 * which plimagefr leaves undrawn over the grey background. The colours span the data's range:
 * plimage would take the range from every entry, so a marker value for the cells without data
 * would squeeze the data into part of the colour map (it did: a sphere's 200 K freestream came
 * out green against a bar that read 2500 K there). */
static kedr_status map_prepare(const char *fn, int nx, int ny, const double *values,
                               int log_scale, map_cells *m)
{
    size_t cells = (size_t)nx * (size_t)ny, nfin = 0;
    memset(m, 0, sizeof *m);
    m->block = malloc(cells * sizeof *m->block);
    m->rows = malloc((size_t)nx * sizeof *m->rows);
    double *sorted = malloc(cells * sizeof *sorted);
    if (!m->block || !m->rows || !sorted) {
        map_free(m);
        free(sorted);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu cells)", fn, cells);
    }
    for (int i = 0; i < nx; i++) {
        m->rows[i] = m->block + (size_t)i * ny;
        for (int j = 0; j < ny; j++) {
            double v = values[(size_t)i + (size_t)nx * j];
            m->no_data += isinf(v) != 0;
            if (log_scale)
                v = v > 0 ? log10(v) : NAN;
            m->rows[i][j] = isfinite(v) ? v : NAN;
            if (isfinite(v))
                sorted[nfin++] = v;
        }
    }
    /* The colour range: the 0.5th to the 99.5th percentile of the cells' values. */
    m->z0 = HUGE_VAL, m->z1 = -HUGE_VAL;
    if (nfin) {
        qsort(sorted, nfin, sizeof *sorted, cmp_double);
        m->all0 = sorted[0];
        m->all1 = sorted[nfin - 1];
        m->z0 = sorted[(size_t)(0.005 * (double)(nfin - 1))];
        m->z1 = sorted[(size_t)ceil(0.995 * (double)(nfin - 1))];
    }
    free(sorted);
    m->clipped = nfin && (m->all0 < m->z0 || m->all1 > m->z1);
    m->empty = !(m->z1 >= m->z0);
    if (m->empty)
        m->z0 = 0, m->z1 = 1;
    else if (m->z1 == m->z0)
        m->z1 = m->z0 + (m->z0 != 0 ? 1e-6 * fabs(m->z0) : 1.0);
    return KEDR_OK;
}

/* The cells without data in white, a rectangle per run of them along x. */
static void map_no_data(int nx, int ny, const double lo[2], const double hi[2],
                        const double *values)
{
    double dx = (hi[0] - lo[0]) / nx, dy = (hi[1] - lo[1]) / ny;
    plcol0(14);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx;) {
            if (!isinf(values[(size_t)i + (size_t)nx * j])) {
                i++;
                continue;
            }
            int e = i;
            while (e < nx && isinf(values[(size_t)e + (size_t)nx * j]))
                e++;
            PLFLT x[4] = {lo[0] + i * dx, lo[0] + e * dx, lo[0] + e * dx, lo[0] + i * dx};
            PLFLT y[4] = {lo[1] + j * dy, lo[1] + j * dy, lo[1] + (j + 1) * dy,
                          lo[1] + (j + 1) * dy};
            plfill(4, x, y);
            i = e;
        }
}

/* The colour bar right of the map, its label saying what the colours leave out. */
static void map_bar(const char *label, int log_scale, const map_cells *m)
{
    char bar_label[200];
    snprintf(bar_label, sizeof bar_label, "%s%s%s%s", log_scale ? "log#d10#u " : "",
             label ? label : "", m->empty ? " (no data)"
                                          : m->clipped ? " (percentiles 0.5 to 99.5)" : "",
             m->no_data && !m->empty ? " (white: no data)" : "");
    const char *labels[1] = {bar_label}, *axis_opts[1] = {"bcvtm"};
    PLINT label_opts[1] = {PL_COLORBAR_LABEL_RIGHT}, sub_ticks[1] = {0}, n_values[1] = {2};
    PLFLT ticks[1] = {0}, range[2] = {m->z0, m->z1};
    const PLFLT *values_list[1] = {range};
    PLFLT bar_w = 0, bar_h = 0;
    plcolorbar(&bar_w, &bar_h, PL_COLORBAR_IMAGE, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE |
               PL_POSITION_VIEWPORT, 0.02, 0, 0.03, 0.8, 0, 1, 1, 0, 0, 0, 0, 1, label_opts,
               labels, 1, axis_opts, ticks, sub_ticks, n_values, values_list);
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
    KEDR_TRY(kedr_check_ptr(values, (size_t)nx * (size_t)ny, fn, "values"));
    map_cells m;
    KEDR_TRY(map_prepare(fn, nx, ny, values, log_scale, &m));
    kedr_file_writer w;
    kedr_status s = begin(path, path ? &w : NULL, rgb);
    if (s == KEDR_OK) {
        pladv(0);
        /* Equal scales in x and y; the right of the page is left for the colour bar. */
        plvpor(0.1, 0.84, 0.13, 0.9);
        plvpas(0.1, 0.84, 0.13, 0.9, (hi[1] - lo[1]) / (hi[0] - lo[0]));
        plwind(lo[0], hi[0], lo[1], hi[1]);
        PLFLT gx[4] = {lo[0], hi[0], hi[0], lo[0]}, gy[4] = {lo[1], lo[1], hi[1], hi[1]};
        plcol0(15);
        plfill(4, gx, gy);
        if (m.no_data)
            map_no_data(nx, ny, lo, hi, values);
        double grid[4] = {lo[0], lo[1], (hi[0] - lo[0]) / nx, (hi[1] - lo[1]) / ny};
        if (!m.empty) /* every finite cell drawn, the colours over [z0, z1] */
            plimagefr((PLFLT_MATRIX)m.rows, nx, ny, lo[0], hi[0], lo[1], hi[1],
                      fmin(m.all0, m.z0), fmax(m.all1, m.z1), m.z0, m.z1, cell_corner, grid);
        plcol0(1);
        plbox("bcnst", 0, 0, "bcnstv", 0, 0);
        pllab("x [m]", "y [m]", title ? title : "");
        map_bar(label, log_scale, &m);
        if (path) {
            s = finish(fn, &w);
        } else {
            plend1();
            if (plot_error[0])
                s = kedr_fail(KEDR_ERR_IO, "%s: PLplot: %s", fn, plot_error);
        }
    }
    map_free(&m);
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
