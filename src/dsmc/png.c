/* PNG maps of the DSMC cell fields (temperature, density, Mach number, and in a mixture each
 * species' mole fraction), like Fig. 6 of Kashkovsky, Shershnev & Ivanov (2012), drawn through
 * kedr/plot.h. */
#include "kedr/dsmc.h"
#include "kedr/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kedr_status kedr_dsmc_write_png(const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                                const char *dir)
{
    const char *fn = "kedr_dsmc_write_png";
    if (!c || !f || !dir)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL", fn, !c ? "c" : !f ? "f" : "dir");
    int nz = c->dims == 3 ? c->nz : 1;
    if (f->nx != c->nx || f->ny != c->ny || (f->nz > 1 ? f->nz : 1) != nz || !f->temperature ||
        !f->particles)
        return kedr_fail(KEDR_ERR_INVALID, "%s: fields (%d x %d x %d) do not match the case grid "
                         "(%d x %d x %d)", fn, f->nx, f->ny, f->nz, c->nx, c->ny, nz);
    KEDR_TRY(kedr_plot_available());
    size_t nc = (size_t)c->nx * (size_t)c->ny;
    size_t slice = (size_t)(nz / 2) * nc; /* 3D: the x-y plane of cells k = nz / 2 */
    double *v = malloc(nc * sizeof *v);
    if (!v)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory (%zu cells)", fn, nc);
    struct {
        char what[48], title[64], label[48];
        const double *data;
        int log_scale;
    } maps[3 + KEDR_DSMC_MAX_SPECIES] = {
        {"temperature", "translational temperature", "T [K]", f->temperature, 0},
        {"density", "density", "rho [kg/m#u3#d]", f->density, 1},
        {"mach", "Mach number", "Ma", f->mach, 0},
    };
    int nmaps = 3;
    /* a mixture: each species' mole fraction, NAME-x_SPECIES.png */
    for (int k = 0; k < f->nspecies && k < c->nspecies && f->mole_fraction[k]; k++, nmaps++) {
        const char *sp = c->species[k].name;
        snprintf(maps[nmaps].what, sizeof maps[nmaps].what, "x_%s", sp);
        snprintf(maps[nmaps].title, sizeof maps[nmaps].title, "mole fraction of %s", sp);
        snprintf(maps[nmaps].label, sizeof maps[nmaps].label, "x_%s", sp);
        maps[nmaps].data = f->mole_fraction[k];
        maps[nmaps].log_scale = 0;
    }
    kedr_status s = KEDR_OK;
    for (int k = 0; k < nmaps && s == KEDR_OK; k++) {
        /* Cells inside bodies (NaN) are grey; gas cells that no molecule entered while
         * sampling have no value (white), rather than a 0 that would stretch the colours. */
        for (size_t i = 0; i < nc; i++) {
            double n = f->particles[slice + i];
            v[i] = isnan(n) ? NAN : n > 0 && f->samples > 0 ? maps[k].data[slice + i]
                                                             : KEDR_PLOT_NO_DATA;
        }
        char title[300];
        size_t len = strlen(dir) + strlen(c->name) + strlen(maps[k].what) + 7;
        char *path = malloc(len); /* DIR/NAME-WHAT.png, never cut short */
        if (!path) {
            s = kedr_fail(KEDR_ERR_NOMEM, "%s: out of host memory", fn);
            break;
        }
        snprintf(path, len, "%s/%s-%s.png", dir, c->name, maps[k].what);
        if (nz > 1)
            snprintf(title, sizeof title, "%s: %s, z = %.4g m", c->name, maps[k].title,
                     c->lo[2] + (nz / 2 + 0.5) * (c->hi[2] - c->lo[2]) / nz);
        else
            snprintf(title, sizeof title, "%s: %s", c->name, maps[k].title);
        s = kedr_plot_map(path, title, maps[k].label, c->nx, c->ny, c->lo, c->hi, v,
                          maps[k].log_scale);
        free(path);
    }
    free(v);
    return s;
}
