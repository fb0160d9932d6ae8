/* Outputs of the ADI solver: VTK ImageData (point data: the fields live on the nodes), the
 * per-step statistics as CSV, and a PNG map of the speed on one x-y plane. Each file is written
 * whole through kedr_file_begin/commit. */
#include "adi/adi_internal.h"
#include "kedr/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The four host fields of the current step on rank 0 (free fields[0]; NULL on other ranks).
 * Collective. */
static kedr_status host_fields(kedr_adi *s, double *f[4])
{
    size_t n = s->gnodes;
    double *all = NULL;
    kedr_status st = KEDR_OK;
    if (s->rank == 0 && !(all = malloc(4 * n * sizeof *all)))
        st = kedr_fail(KEDR_ERR_NOMEM, "adi output: out of host memory (%zu bytes)",
                       4 * n * sizeof *all);
    for (int v = 0; v < 4; v++)
        f[v] = all ? all + v * n : NULL;
    KEDR_TRY(kedr_comm_agree(s->comm, st));
    st = kedr_adi_get_fields(s, f[0], f[1], f[2], f[3]);
    if (st != KEDR_OK)
        free(all);
    return st;
}

static kedr_status write_vti(kedr_adi *s, const char *path, double *f[4]);

kedr_status kedr_adi_write_vti(kedr_adi *s, const char *path)
{
    double *f[4];
    KEDR_TRY(host_fields(s, f));
    kedr_status st = s->rank == 0 ? write_vti(s, path, f) : KEDR_OK;
    free(f[0]);
    return kedr_comm_agree(s->comm, st);
}

static kedr_status write_vti(kedr_adi *s, const char *path, double *f[4])
{
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *out = KEDR_FILE(&w);
    const kedr_adi_case *c = &s->c;
    fprintf(out, "<?xml version=\"1.0\"?>\n"
                 "<VTKFile type=\"ImageData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                 "  <ImageData WholeExtent=\"0 %d 0 %d 0 %d\" Origin=\"0 0 0\" "
                 "Spacing=\"%.17g %.17g %.17g\">\n"
                 "    <Piece Extent=\"0 %d 0 %d 0 %d\">\n"
                 "      <!-- step %lld, t = %.17g; nan: a solid node -->\n"
                 "      <PointData Scalars=\"temperature\" Vectors=\"velocity\">\n",
            c->nx - 1, c->ny - 1, c->nz - 1, c->h, c->h, c->h, c->nx - 1, c->ny - 1, c->nz - 1,
            (long long)s->st.step, s->st.time);
    fprintf(out, "        <DataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\" "
                 "format=\"ascii\">\n");
    for (size_t n = 0; n < s->gnodes; n++)
        fprintf(out, "%.9g %.9g %.9g\n", f[0][n], f[1][n], f[2][n]);
    fprintf(out, "        </DataArray>\n"
                 "        <DataArray type=\"Float64\" Name=\"temperature\" format=\"ascii\">\n");
    for (size_t n = 0; n < s->gnodes; n++)
        fprintf(out, "%.9g\n", f[3][n]);
    fprintf(out, "        </DataArray>\n"
                 "        <DataArray type=\"UInt8\" Name=\"solid\" format=\"ascii\">\n");
    for (size_t n = 0; n < s->gnodes; n++)
        fprintf(out, "%d\n", s->mask_host[n] == ADI_SOLID);
    fprintf(out, "        </DataArray>\n      </PointData>\n    </Piece>\n  </ImageData>\n"
                 "</VTKFile>\n");
    return kedr_file_commit(&w);
}

static kedr_status write_csv(const kedr_adi *s, const char *path);

kedr_status kedr_adi_write_csv(const kedr_adi *s, const char *path)
{
    return kedr_comm_agree(s->comm, s->rank == 0 ? write_csv(s, path) : KEDR_OK);
}

static kedr_status write_csv(const kedr_adi *s, const char *path)
{
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *out = KEDR_FILE(&w);
    fprintf(out, "step,time,global_iterations,change,continuity_rms,continuity_max,max_speed,"
                 "kinetic_energy\n");
    for (size_t k = 0; k < s->nhistory; k++) {
        const kedr_adi_stats *h = &s->history[k];
        fprintf(out, "%lld,%.9g,%d,%.6g,%.6g,%.6g,%.9g,%.9g\n", (long long)h->step, h->time,
                h->global_iterations, h->change, h->continuity_rms, h->continuity_max,
                h->max_speed, h->kinetic_energy);
    }
    return kedr_file_commit(&w);
}

static kedr_status write_png(kedr_adi *s, const char *path, double *f[4]);

kedr_status kedr_adi_write_png(kedr_adi *s, const char *path)
{
    KEDR_TRY(kedr_plot_available());
    double *f[4];
    KEDR_TRY(host_fields(s, f));
    kedr_status st = s->rank == 0 ? write_png(s, path, f) : KEDR_OK;
    free(f[0]);
    return kedr_comm_agree(s->comm, st);
}

static kedr_status write_png(kedr_adi *s, const char *path, double *f[4])
{
    const kedr_adi_case *c = &s->c;
    size_t plane = (size_t)c->nx * c->ny, k = (size_t)s->c.slice;
    double *v = malloc(plane * sizeof *v);
    kedr_status st = v ? KEDR_OK : kedr_fail(KEDR_ERR_NOMEM, "adi png: out of host memory");
    /* Nodes drawn as cells of side h centred on them. */
    double lo[2] = {-0.5 * c->h, -0.5 * c->h};
    double hi[2] = {(c->nx - 0.5) * c->h, (c->ny - 0.5) * c->h};
    if (st == KEDR_OK) {
        for (size_t n = 0; n < plane; n++) {
            size_t m = n + k * plane;
            v[n] = sqrt(f[0][m] * f[0][m] + f[1][m] * f[1][m] + f[2][m] * f[2][m]);
        }
        char title[256];
        snprintf(title, sizeof title, "%s: speed at z = %.4g, step %lld", c->name,
                 (double)k * c->h, (long long)s->st.step);
        st = kedr_plot_map(path, title, "|u|", c->nx, c->ny, lo, hi, v, 0);
    }
    free(v);
    return st;
}
