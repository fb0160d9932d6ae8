/* PNG plots (include/kedr/plot.h). Placeholder until the PLplot implementation lands: every call
 * reports that plots are not available. */
#include "kedr/plot.h"

kedr_status kedr_plot_available(void)
{
    return kedr_fail(KEDR_ERR_UNSUPPORTED, "PNG plots are not built into this kedr");
}

kedr_status kedr_plot_series(const char *path, const kedr_plot_axes *axes, size_t n,
                             const double *x, const double *y)
{
    (void)path, (void)axes, (void)n, (void)x, (void)y;
    return kedr_plot_available();
}

kedr_status kedr_plot_map(const char *path, const char *title, const char *label, int nx, int ny,
                          const double lo[2], const double hi[2], const double *values,
                          int log_scale)
{
    (void)path, (void)title, (void)label, (void)nx, (void)ny, (void)lo, (void)hi, (void)values,
        (void)log_scale;
    return kedr_plot_available();
}
