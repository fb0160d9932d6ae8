/* PNG plots: with PLplot, maps and series are PNG files of a plausible size, written atomically
 * (no FILE.tmp left), and a map drawn into memory by the same renderer has its colour map spread
 * over the data (the smallest value blue, the largest red, cells without data grey); without
 * PLplot every call says plots are unavailable. Bad arguments are refused either way. Host
 * only. */
#include "core/internal.h"
#include "test_util.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

/* Size of a file that must be a PNG, or -1. */
static long png_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char sig[8] = {0};
    size_t got = fread(sig, 1, 8, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    return got == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0 ? size : -1;
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static void test_available(void)
{
    double lo[2] = {0, 0}, hi[2] = {2, 1};
    int nx = 40, ny = 20;
    double *v = malloc(sizeof(double) * nx * ny);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            v[i + nx * j] = 300 + 10 * i + j;
    for (int j = 8; j < 12; j++) /* a body without data */
        v[20 + nx * j] = NAN;
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s/map.png", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    TU_OK(kedr_plot_map(path, "temperature", "T [K]", nx, ny, lo, hi, v, 0));
    long size = png_size(path);
    TU_CHECK(size > 5000 && size < 5000000, "map.png: size %ld", size);
    TU_CHECK(!exists(tmp), "map.png.tmp left behind");

    /* Log scale with a zero and a negative cell (drawn grey), and a constant map. */
    v[0] = 0;
    v[1] = -5;
    snprintf(path, sizeof path, "%s/log.png", dir);
    TU_OK(kedr_plot_map(path, "density", "rho [kg/m^3]", nx, ny, lo, hi, v, 1));
    TU_CHECK(png_size(path) > 5000, "log.png");
    for (int k = 0; k < nx * ny; k++)
        v[k] = 7;
    snprintf(path, sizeof path, "%s/const.png", dir);
    TU_OK(kedr_plot_map(path, NULL, NULL, nx, ny, lo, hi, v, 0));
    TU_CHECK(png_size(path) > 1000, "const.png");
    for (int k = 0; k < nx * ny; k++)
        v[k] = NAN;
    snprintf(path, sizeof path, "%s/nan.png", dir);
    TU_OK(kedr_plot_map(path, "empty", "x", nx, ny, lo, hi, v, 0));
    TU_CHECK(png_size(path) > 1000, "nan.png");
    /* One cell. */
    snprintf(path, sizeof path, "%s/one.png", dir);
    TU_OK(kedr_plot_map(path, "one", "x", 1, 1, lo, hi, v, 0));
    TU_CHECK(png_size(path) > 1000, "one.png");

    /* A series on a log axis, with points that cannot be drawn. */
    double x[50], y[50];
    for (int i = 0; i < 50; i++) {
        x[i] = i;
        y[i] = exp(0.3 * i);
    }
    y[3] = 0;
    y[4] = NAN;
    kedr_plot_axes ax = {"growth", "s", "F(s)", 1};
    snprintf(path, sizeof path, "%s/series.png", dir);
    TU_OK(kedr_plot_series(path, &ax, 50, x, y));
    TU_CHECK(png_size(path) > 3000, "series.png");
    snprintf(path, sizeof path, "%s/series1.png", dir);
    TU_OK(kedr_plot_series(path, NULL, 1, x, y));
    TU_CHECK(png_size(path) > 1000, "series1.png");

    /* Nothing drawable, and an unwritable place: errors, no file. */
    double bad[2] = {-1, 0};
    snprintf(path, sizeof path, "%s/bad.png", dir);
    TU_CHECK(kedr_plot_series(path, &ax, 2, x, bad) == KEDR_ERR_INVALID, "all y <= 0 on log");
    TU_CHECK(!exists(path), "bad.png written");
    snprintf(path, sizeof path, "%s/no/such/dir/x.png", dir);
    TU_CHECK(kedr_plot_map(path, "t", "l", nx, ny, lo, hi, v, 0) == KEDR_ERR_IO, "bad dir");
    TU_CHECK(strstr(kedr_last_error(), "no/such/dir") != NULL, "message: %s", kedr_last_error());
    free(v);
}

/* Pixels within 8 of (r, g, b) in each channel. */
static long count_colour(const unsigned char *rgb, int r, int g, int b)
{
    long n = 0;
    for (long k = 0; k < (long)KEDR_PLOT_WIDTH * KEDR_PLOT_HEIGHT; k++)
        n += abs(rgb[3 * k] - r) <= 8 && abs(rgb[3 * k + 1] - g) <= 8 &&
             abs(rgb[3 * k + 2] - b) <= 8;
    return n;
}

/* Eight columns of cells valued 0 to 7 (one cell without data): the column of 0 is drawn in the
 * colour map's first colour (blue), the column of 7 in its last (red), each over a large area;
 * the colour bar alone shows either in a sliver. A map whose cells without data stretched the
 * colour range drew no cell blue. */
static void test_map_colours(void)
{
    double lo[2] = {0, 0}, hi[2] = {2, 1}, v[8 * 4];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 8; i++)
            v[i + 8 * j] = i;
    v[3 + 8 * 2] = NAN;
    unsigned char *rgb = malloc((size_t)KEDR_PLOT_WIDTH * KEDR_PLOT_HEIGHT * 3);
    TU_OK(kedr_plot_map_rgb(rgb, 8, 4, lo, hi, v, 0));
    long total = (long)KEDR_PLOT_WIDTH * KEDR_PLOT_HEIGHT;
    long blue = count_colour(rgb, 0, 0, 255), red = count_colour(rgb, 255, 0, 0);
    long grey = count_colour(rgb, 170, 170, 170);
    printf("  map colours: %.2f%% blue, %.2f%% red, %.2f%% grey pixels\n", 100.0 * blue / total,
           100.0 * red / total, 100.0 * grey / total);
    TU_CHECK(blue > total / 100 && red > total / 100, "cells of the smallest and largest value "
             "drawn over %ld (blue) and %ld (red) of %ld pixels", blue, red, total);
    TU_CHECK(grey > total / 1000 && grey < total / 50, "the cell without data: %ld grey pixels",
             grey);
    /* 40 columns valued 0 to 39 and one cell of 10^6: the colours span the percentiles, so the
     * high columns are still red (the data's full range would leave every column but the
     * outlier's blue). */
    double *w = malloc(sizeof(double) * 40 * 20);
    for (int j = 0; j < 20; j++)
        for (int i = 0; i < 40; i++)
            w[i + 40 * j] = i;
    w[5 + 40 * 7] = 1e6;
    TU_OK(kedr_plot_map_rgb(rgb, 40, 20, lo, hi, w, 0));
    red = count_colour(rgb, 255, 0, 0);
    printf("  map with an outlier: %.2f%% red pixels\n", 100.0 * red / total);
    TU_CHECK(red > total / 200, "an outlying cell flattened the colours: %ld red pixels", red);
    /* Cells of the domain without data (KEDR_PLOT_NO_DATA) are white, not grey like a body, and
     * stay out of the colour range: a block of them turns white pixels that were drawn in the
     * map's colours, and the smallest column is still blue. */
    TU_OK(kedr_plot_map_rgb(rgb, 40, 20, lo, hi, w, 0));
    long white0 = count_colour(rgb, 255, 255, 255), grey0 = count_colour(rgb, 170, 170, 170);
    for (int j = 5; j < 15; j++)
        for (int i = 10; i < 30; i++)
            w[i + 40 * j] = KEDR_PLOT_NO_DATA;
    TU_OK(kedr_plot_map_rgb(rgb, 40, 20, lo, hi, w, 0));
    long white = count_colour(rgb, 255, 255, 255), grey1 = count_colour(rgb, 170, 170, 170);
    blue = count_colour(rgb, 0, 0, 255);
    printf("  map with cells without data: %.2f%% more white pixels\n",
           100.0 * (white - white0) / total);
    TU_CHECK(white - white0 > total / 20 && grey1 <= grey0 + total / 1000 && blue > total / 200,
             "cells without data: %ld more white pixels, %ld more grey, %ld blue", white - white0,
             grey1 - grey0, blue);
    free(w);
    free(rgb);
}

/* A map or series is never written over something that is not a regular file: a FIFO and a
 * directory are refused before PLplot starts, and are left as they were. */
static void test_special_targets(void)
{
    double lo[2] = {0, 0}, hi[2] = {1, 1}, v[4] = {1, 2, 3, 4}, x[4] = {0, 1, 2, 3};
    char fifo[512], sub[512], tmp[600];
    snprintf(fifo, sizeof fifo, "%s/fifo.png", dir);
    snprintf(sub, sizeof sub, "%s/sub.png", dir);
    TU_CHECK(mkfifo(fifo, 0600) == 0 && mkdir(sub, 0700) == 0, "mkfifo / mkdir");
    const char *targets[2] = {fifo, sub};
    for (int k = 0; k < 2; k++) {
        TU_CHECK(kedr_plot_map(targets[k], "t", "l", 2, 2, lo, hi, v, 0) == KEDR_ERR_IO &&
                     strstr(kedr_last_error(), targets[k]),
                 "map onto %s: %s", targets[k], kedr_last_error());
        TU_CHECK(kedr_plot_series(targets[k], NULL, 4, x, v) == KEDR_ERR_IO,
                 "series onto %s: %s", targets[k], kedr_last_error());
        snprintf(tmp, sizeof tmp, "%s.tmp", targets[k]);
        struct stat st;
        TU_CHECK(stat(targets[k], &st) == 0 && (k ? S_ISDIR(st.st_mode) : S_ISFIFO(st.st_mode)) &&
                     !exists(tmp),
                 "%s was replaced or left a .tmp", targets[k]);
    }
    unlink(fifo);
    rmdir(sub);
}

static void test_unavailable(void)
{
    double lo[2] = {0, 0}, hi[2] = {1, 1}, v[1] = {1}, x[1] = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/none.png", dir);
    TU_CHECK(kedr_plot_map(path, "t", "l", 1, 1, lo, hi, v, 0) == KEDR_ERR_UNSUPPORTED, "map");
    TU_CHECK(strstr(kedr_last_error(), "PLplot") != NULL, "message: %s", kedr_last_error());
    TU_CHECK(kedr_plot_series(path, NULL, 1, x, v) == KEDR_ERR_UNSUPPORTED, "series");
    TU_CHECK(!exists(path), "a file was written");
}

static void test_bad_arguments(void)
{
    double lo[2] = {0, 0}, hi[2] = {1, 1}, flat[2] = {1, 0}, v[4] = {1, 2, 3, 4}, x[2] = {0, 1};
    char path[512];
    snprintf(path, sizeof path, "%s/args.png", dir);
    TU_CHECK(kedr_plot_map(NULL, "t", "l", 2, 2, lo, hi, v, 0) == KEDR_ERR_INVALID, "NULL path");
    TU_CHECK(strstr(kedr_last_error(), "path") != NULL, "%s", kedr_last_error());
    if (kedr_plot_available() != KEDR_OK)
        return; /* the rest is only checked where plots are drawn */
    TU_CHECK(kedr_plot_map(path, "t", "l", 2, 2, lo, hi, NULL, 0) == KEDR_ERR_INVALID, "NULL v");
    TU_CHECK(strstr(kedr_last_error(), "values") != NULL, "%s", kedr_last_error());
    TU_CHECK(kedr_plot_map(path, "t", "l", 0, 2, lo, hi, v, 0) == KEDR_ERR_INVALID, "nx = 0");
    TU_CHECK(kedr_plot_map(path, "t", "l", 2, -1, lo, hi, v, 0) == KEDR_ERR_INVALID, "ny < 0");
    TU_CHECK(kedr_plot_map(path, "t", "l", 2, 2, lo, flat, v, 0) == KEDR_ERR_INVALID, "empty box");
    TU_CHECK(strstr(kedr_last_error(), "empty") != NULL, "%s", kedr_last_error());
    TU_CHECK(kedr_plot_map(path, "t", "l", 2, 2, NULL, hi, v, 0) == KEDR_ERR_INVALID, "NULL lo");
    TU_CHECK(kedr_plot_series(path, NULL, 0, x, v) == KEDR_ERR_INVALID, "n = 0");
    TU_CHECK(kedr_plot_series(path, NULL, 2, NULL, v) == KEDR_ERR_INVALID, "NULL x");
    TU_CHECK(strstr(kedr_last_error(), "x") != NULL, "%s", kedr_last_error());
    TU_CHECK(kedr_plot_series(path, NULL, 2, x, NULL) == KEDR_ERR_INVALID, "NULL y");
    TU_CHECK(!exists(path), "a file was written");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr-test-plot-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    if (kedr_plot_available() == KEDR_OK) {
        printf("PLplot present: drawing\n");
        test_available();
        test_map_colours();
        test_special_targets();
    } else {
        TU_CHECK(strstr(kedr_last_error(), "PLplot") != NULL, "%s", kedr_last_error());
        test_unavailable();
    }
    test_bad_arguments();
    tu_remove_dir(dir);
    return tu_finish("test_plot");
}
