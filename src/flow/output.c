/* Output of the flow's cell fields (CSV, VTK XML ImageData, PNG maps) and the checkpoints. Every
 * file is written to PATH.tmp and renamed over PATH (kedr_file_begin/commit). */
#include "core/internal.h"
#include "flow/ibm.h"
#include "flow/sim.h"
#include "kedr/comm.h"
#include "kedr/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kedr_status finish(kedr_file_writer *w, const char *path)
{
    if (ferror(KEDR_FILE(w))) {
        kedr_file_abort(w);
        return kedr_fail(KEDR_ERR_IO, "%s: write failed (disk full?)", path);
    }
    return kedr_file_commit(w);
}

kedr_status kedr_flow_write_csv(const kedr_flow_fields *fl, const char *path)
{
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *fp = KEDR_FILE(&w);
    int three = fl->dims == 3;
    fprintf(fp, three ? "x,y,z,u,v,w,p,vorticity\n" : "x,y,u,v,p,vorticity\n");
    for (int k = 0; k < fl->n[2]; k++)
        for (int j = 0; j < fl->n[1]; j++)
            for (int i = 0; i < fl->n[0]; i++) {
                size_t c = i + (size_t)fl->n[0] * (j + (size_t)fl->n[1] * k);
                fprintf(fp, "%.8g,%.8g,", (i + 0.5) * fl->h[0], (j + 0.5) * fl->h[1]);
                if (three)
                    fprintf(fp, "%.8g,", (k + 0.5) * fl->h[2]);
                fprintf(fp, "%.10g,%.10g,", fl->u[c], fl->v[c]);
                if (three)
                    fprintf(fp, "%.10g,", fl->w[c]);
                fprintf(fp, "%.10g,%.10g\n", fl->p[c], fl->vorticity[c]);
            }
    return finish(&w, path);
}

kedr_status kedr_flow_write_vti(const kedr_flow_fields *fl, const char *path)
{
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *fp = KEDR_FILE(&w);
    fprintf(fp, "<?xml version=\"1.0\"?>\n"
            "<VTKFile type=\"ImageData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
            "  <ImageData WholeExtent=\"0 %d 0 %d 0 %d\" Origin=\"0 0 0\" "
            "Spacing=\"%.17g %.17g %.17g\">\n"
            "    <Piece Extent=\"0 %d 0 %d 0 %d\">\n"
            "      <FieldData>\n"
            "        <DataArray type=\"Float64\" Name=\"TIME\" NumberOfTuples=\"1\" "
            "format=\"ascii\">%.17g</DataArray>\n"
            "      </FieldData>\n"
            "      <CellData Scalars=\"p\" Vectors=\"velocity\">\n",
            fl->n[0], fl->n[1], fl->dims == 3 ? fl->n[2] : 0, fl->h[0], fl->h[1],
            fl->dims == 3 ? fl->h[2] : 0.0, fl->n[0], fl->n[1], fl->dims == 3 ? fl->n[2] : 0,
            fl->time);
    size_t N = (size_t)fl->n[0] * fl->n[1] * fl->n[2];
    fprintf(fp, "        <DataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\" "
            "format=\"ascii\">\n");
    for (size_t c = 0; c < N; c++)
        fprintf(fp, "%.10g %.10g %.10g\n", fl->u[c], fl->v[c], fl->w ? fl->w[c] : 0.0);
    fprintf(fp, "        </DataArray>\n");
    const char *names[2] = {"p", "vorticity"};
    const double *data[2] = {fl->p, fl->vorticity};
    for (int a = 0; a < 2; a++) {
        fprintf(fp, "        <DataArray type=\"Float64\" Name=\"%s\" format=\"ascii\">\n",
                names[a]);
        for (size_t c = 0; c < N; c++)
            fprintf(fp, "%.10g\n", data[a][c]);
        fprintf(fp, "        </DataArray>\n");
    }
    fprintf(fp, "      </CellData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n");
    return finish(&w, path);
}

kedr_status kedr_flow_write_png(const kedr_flow_fields *fl, const char *dir, const char *name)
{
    KEDR_TRY(kedr_plot_available());
    size_t nc = (size_t)fl->n[0] * fl->n[1];
    size_t slice = (size_t)(fl->n[2] / 2) * nc; /* 3D: the x-y plane of cells k = nz / 2 */
    double *v = malloc(nc * sizeof *v);
    if (!v)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_write_png: %zu cells", nc);
    double lo[2] = {0, 0}, hi[2] = {fl->n[0] * fl->h[0], fl->n[1] * fl->h[1]};
    const char *what[3] = {"speed", "pressure", "vorticity"};
    const char *label[3] = {"|u| [m/s]", "p [Pa]", fl->dims == 3 ? "|curl u| [1/s]"
                                                                  : "omega#dz#u [1/s]"};
    kedr_status s = KEDR_OK;
    for (int m = 0; m < 3 && s == KEDR_OK; m++) {
        for (size_t i = 0; i < nc; i++) {
            size_t c = slice + i;
            if (m == 0) {
                double w = fl->w ? fl->w[c] : 0;
                v[i] = sqrt(fl->u[c] * fl->u[c] + fl->v[c] * fl->v[c] + w * w);
            } else {
                v[i] = m == 1 ? fl->p[c] : fl->vorticity[c];
            }
        }
        size_t len = strlen(dir) + strlen(name) + strlen(what[m]) + 8;
        char *path = malloc(len), title[300];
        if (!path) {
            s = kedr_fail(KEDR_ERR_NOMEM, "kedr_flow_write_png: out of host memory");
            break;
        }
        snprintf(path, len, "%s/%s-%s.png", dir, name, what[m]);
        snprintf(title, sizeof title, "%s: %s, t = %.4g s%s", name, what[m], fl->time,
                 fl->dims == 3 ? " (mid-plane z)" : "");
        s = kedr_plot_map(path, title, label[m], fl->n[0], fl->n[1], lo, hi, v, 0);
        free(path);
    }
    free(v);
    return s;
}

/* ---- checkpoints ---------------------------------------------------------------------------
 * "KEDRFLW1", then int32 dims, n[3], have_old; int64 step; float64 time, dt_old, length[3], nu;
 * then the padded arrays q[a], Hold[a] (a < dims) and the compact P, all little-endian
 * float64 as in memory; with immersed bodies, a float64 1 or 0 (whether a force was solved) and
 * the points' forces g[a] (the next solve's start); last, a 64-bit FNV-1a of everything before
 * it. */

#define CHK_MAGIC "KEDRFLW1"

typedef struct {
    int32_t dims, n[3], have_old, pad;
    int64_t step;
    double time, dt_old, length[3], nu;
} chk_header;

static size_t chk_bytes(const struct kedr_flow *f)
{
    size_t ibm = f->ibm ? 1 + (size_t)f->dims * f->ibm->N : 0;
    return 8 + sizeof(chk_header) + (2 * (size_t)f->dims * f->padded + f->cells + ibm) * 8 + 8;
}

kedr_status kedr_flow_write_checkpoint(const kedr_flow *f, const char *path)
{
    chk_header h;
    memset(&h, 0, sizeof h);
    h.dims = f->dims;
    for (int a = 0; a < 3; a++) {
        h.n[a] = f->n[a];
        h.length[a] = f->c.length[a];
    }
    h.have_old = f->have_old;
    h.step = f->step;
    h.time = f->time;
    h.dt_old = f->dt_old;
    h.nu = f->c.nu;
    flow_host hv;
    KEDR_TRY(flow_host_get(f, &hv));
    kedr_file_writer w;
    kedr_status st = kedr_file_begin(&w, path);
    if (st != KEDR_OK) {
        flow_host_free(&hv);
        return st;
    }
    FILE *fp = KEDR_FILE(&w);
    uint64_t sum = KEDR_FNV_START;
    sum = kedr_fnv1a(sum, CHK_MAGIC, 8);
    fwrite(CHK_MAGIC, 1, 8, fp);
    sum = kedr_fnv1a(sum, &h, sizeof h);
    fwrite(&h, sizeof h, 1, fp);
    for (int a = 0; a < f->dims; a++)
        for (int t = 0; t < 2; t++) {
            const double *v = t ? hv.Hold[a] : hv.q[a];
            sum = kedr_fnv1a(sum, v, f->padded * 8);
            fwrite(v, 8, f->padded, fp);
        }
    sum = kedr_fnv1a(sum, hv.P, f->cells * 8);
    fwrite(hv.P, 8, f->cells, fp);
    if (f->ibm) {
        double have = f->ibm->have_force;
        size_t n = (size_t)f->dims * f->ibm->N;
        sum = kedr_fnv1a(sum, &have, 8);
        fwrite(&have, 8, 1, fp);
        sum = kedr_fnv1a(sum, f->ibm->gh, n * 8);
        fwrite(f->ibm->gh, 8, n, fp);
    }
    fwrite(&sum, 8, 1, fp);
    flow_host_free(&hv);
    return finish(&w, path);
}

kedr_status kedr_flow_restart(kedr_ctx *ctx, const kedr_flow_case *c, const char *path,
                              kedr_flow **out)
{
    return kedr_flow_restart_on(ctx, NULL, c, path, out);
}

kedr_status kedr_flow_restart_on(kedr_ctx *ctx, kedr_comm *comm, const kedr_flow_case *c,
                                 const char *path, kedr_flow **out)
{
    *out = NULL;
    struct kedr_flow *f;
    KEDR_TRY(flow_alloc(ctx, comm, c, &f));
    size_t want = chk_bytes(f), len = 0;
    char *data = NULL;
    kedr_status s = kedr_file_read(path, want, &data, &len);
    if (s != KEDR_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", kedr_last_error());
        kedr_flow_destroy(f);
        return kedr_fail(s, "%s (a checkpoint of this case's grid has %zu bytes)", why, want);
    }
    chk_header h;
    const char *bad = NULL;
    if (len != want || memcmp(data, CHK_MAGIC, 8) != 0)
        bad = "not a flow checkpoint of this case's grid (size or magic differs)";
    if (!bad) {
        memcpy(&h, data + 8, sizeof h);
        uint64_t sum = kedr_fnv1a(KEDR_FNV_START, data, len - 8), stored;
        memcpy(&stored, data + len - 8, 8);
        if (sum != stored)
            bad = "its checksum does not match: the file is damaged";
        else if (h.dims != c->dims || h.n[0] != f->n[0] || h.n[1] != f->n[1] ||
                 h.n[2] != f->n[2])
            bad = "written for another grid";
        else if (h.length[0] != c->length[0] || h.length[1] != c->length[1] ||
                 (c->dims == 3 && h.length[2] != c->length[2]))
            bad = "written for another domain size";
        else if (h.step < 0 || !(h.time >= 0) || (h.have_old && !(h.dt_old > 0)))
            bad = "its step, time or dt is out of range";
    }
    if (bad) {
        free(data);
        kedr_flow_destroy(f);
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s", path, bad);
    }
    const char *p = data + 8 + sizeof h;
    flow_host hv;
    s = flow_host_get(f, &hv);
    if (s == KEDR_OK) {
        for (int a = 0; a < f->dims; a++)
            for (int t = 0; t < 2; t++) {
                memcpy(t ? hv.Hold[a] : hv.q[a], p, f->padded * 8);
                p += f->padded * 8;
            }
        memcpy(hv.P, p, f->cells * 8);
        p += f->cells * 8;
        s = flow_host_put(f, &hv);
        flow_host_free(&hv);
    }
    if (s == KEDR_OK && f->ibm) {
        double have;
        memcpy(&have, p, 8);
        f->ibm->have_force = have != 0;
        memcpy(f->ibm->gh, p + 8, (size_t)f->dims * f->ibm->N * 8);
        for (int a = 0; a < f->dims && s == KEDR_OK; a++)
            s = kedr_upload(ctx, f->ibm->g[a], f->ibm->gh + (size_t)a * f->ibm->N,
                            f->ibm->N * sizeof(double));
    }
    free(data);
    f->step = h.step;
    f->time = h.time;
    f->have_old = h.have_old != 0;
    f->dt_old = h.dt_old;
    f->last_dt = h.dt_old;
    if (s == KEDR_OK)
        s = flow_ibm_place(f, f->time);
    if (s == KEDR_OK)
        s = flow_fill_bc(f, f->q);
    if (s == KEDR_OK)
        s = flow_umax(f, f->q, f->umax);
    if (s != KEDR_OK) {
        kedr_flow_destroy(f);
        return s;
    }
    *out = f;
    return KEDR_OK;
}
