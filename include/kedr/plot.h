/* kedr plot: PNG figures for a quick look at results, drawn with PLplot when kedr is built with
 * it (CMake option KEDR_PLOT; kedr_plot_available tells). Files are written atomically (FILE.tmp,
 * then renamed), so a failed plot never leaves a half-written PNG. */
#ifndef KEDR_PLOT_H
#define KEDR_PLOT_H

#include "kedr/core.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* KEDR_OK when PNG output is built in; KEDR_ERR_UNSUPPORTED (with a message saying how to get
 * it: install PLplot's development files and rebuild) otherwise. */
kedr_status kedr_plot_available(void);

typedef struct {
    const char *title;  /* above the plot (may be NULL) */
    const char *xlabel; /* may be NULL */
    const char *ylabel; /* may be NULL */
    int log_y;          /* logarithmic y axis; values <= 0 are left out */
} kedr_plot_axes;

/* One series y(x) of n points drawn as points joined by lines, e.g. a growth function F(s).
 * KEDR_ERR_INVALID for n = 0 or NULL arrays; KEDR_ERR_IO names the file when it cannot be written. */
kedr_status kedr_plot_series(const char *path, const kedr_plot_axes *axes, size_t n,
                             const double *x, const double *y);

/* A map of cell values over the rectangle [lo[0], hi[0]] x [lo[1], hi[1]] divided into nx x ny
 * cells (values[i + nx * j], x fastest), with a colour bar labelled `label`; NaN marks cells
 * outside the data (inside a body), drawn in grey, and KEDR_PLOT_NO_DATA (any infinity) cells of
 * the domain that have no value (a DSMC cell no molecule entered), drawn in white and left out of
 * the colour range. log_scale colours by log10 of the value (values <= 0 are grey). The
 * colours span the cells' values from the 0.5th to the 99.5th percentile, so that a few
 * outlying cells (a nearly empty DSMC cell's temperature) do not flatten the rest; cells beyond
 * take the end colours, and the bar's label then says "(percentiles 0.5 to 99.5)". */
#define KEDR_PLOT_NO_DATA HUGE_VAL
kedr_status kedr_plot_map(const char *path, const char *title, const char *label, int nx, int ny,
                          const double lo[2], const double hi[2], const double *values,
                          int log_scale);

#ifdef __cplusplus
}
#endif
#endif
