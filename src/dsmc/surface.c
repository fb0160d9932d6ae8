/* Surface sampling results: per element pressure, shear and heat flux and their coefficients,
 * body forces, and the surface files (CSV and VTK PolyData). */
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kedr_dsmc_surface_free(kedr_dsmc_surface *s)
{
    if (!s)
        return;
    free(s->x); /* one block holds every array */
    memset(s, 0, sizeof *s);
}

/* Drag along the freestream velocity (x when it is zero), lift that turned by +90 degrees. */
static void directions(const kedr_dsmc_case *c, double d[2], double l[2])
{
    double u = hypot(c->velocity[0], c->velocity[1]);
    d[0] = u > 0 ? c->velocity[0] / u : 1.0;
    d[1] = u > 0 ? c->velocity[1] / u : 0.0;
    l[0] = -d[1];
    l[1] = d[0];
}

/* 3D: drag along the freestream velocity (x when it is zero), lift along z x drag (y when the
 * drag is along z). */
static void directions3(const kedr_dsmc_case *c, double d[3], double l[3])
{
    double u = sqrt(c->velocity[0] * c->velocity[0] + c->velocity[1] * c->velocity[1] +
                    c->velocity[2] * c->velocity[2]);
    for (int k = 0; k < 3; k++)
        d[k] = u > 0 ? c->velocity[k] / u : k == 0;
    double h = hypot(d[0], d[1]);
    l[0] = h > 1e-12 ? -d[1] / h : 0.0;
    l[1] = h > 1e-12 ? d[0] / h : 1.0;
    l[2] = 0;
}

/* 3D: a body's area seen along the drag direction d. */
static double frontal_area(const kedr_dsmc_body *b, const double d[3])
{
    if (b->type == KEDR_DSMC_BODY_SPHERE)
        return M_PI * b->radius * b->radius;
    if (b->type == KEDR_DSMC_BODY_CUBOID)
        return fabs(d[0]) * b->size[1] * b->size[2] + fabs(d[1]) * b->size[0] * b->size[2] +
               fabs(d[2]) * b->size[0] * b->size[1];
    double r = b->length * tan(b->half_angle * M_PI / 180.0); /* cone: its base */
    return M_PI * r * r;
}

/* Axisymmetric: a body of revolution's area seen along the axis, pi r_max^2. */
static double frontal_disc(const kedr_dsmc_case *c, const kedr_dsmc_body *b)
{
    double r = b->type == KEDR_DSMC_BODY_CIRCLE ? b->radius : 0;
    for (int k = b->first; k < b->first + b->count && b->type != KEDR_DSMC_BODY_CIRCLE; k++)
        r = fmax(r, fmax(c->segment[k][1], c->segment[k][3]));
    return M_PI * r * r;
}

/* A body's extent across the flow (along the lift direction). */
static double frontal_height(const kedr_dsmc_case *c, const kedr_dsmc_body *b, const double l[2])
{
    if (b->type == KEDR_DSMC_BODY_CIRCLE)
        return 2.0 * b->radius;
    double lo = INFINITY, hi = -INFINITY;
    for (int k = b->first; k < b->first + b->count; k++)
        for (int e = 0; e < 2; e++) {
            double h = c->segment[k][2 * e] * l[0] + c->segment[k][2 * e + 1] * l[1];
            lo = fmin(lo, h);
            hi = fmax(hi, h);
        }
    return hi - lo;
}

kedr_status kedr_dsmc_get_surface(kedr_dsmc *sim, kedr_dsmc_surface *s)
{
    if (!sim || !s)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_dsmc_get_surface: %s is NULL", sim ? "s" : "sim");
    memset(s, 0, sizeof *s);
    const dsmc_geometry *g = &sim->geo;
    const kedr_dsmc_case *c = &sim->c;
    size_t ne = g->nelem;
    int three = sim->p.dims == 3;
    s->nelem = ne;
    s->nbodies = g->nbodies;
    s->dims = three ? 3 : 2;
    s->axisymmetric = c->axisymmetric;
    s->steps = g->surf_steps;
    double rho = 0;
    for (int k = 0; k < c->nspecies; k++)
        rho += c->number_density * c->fraction[k] * c->species[k].mass;
    double u2 = c->velocity[0] * c->velocity[0] + c->velocity[1] * c->velocity[1] +
                c->velocity[2] * c->velocity[2];
    s->q_inf = 0.5 * rho * u2;
    s->p_inf = c->number_density * KEDR_BOLTZMANN * c->temperature;
    double inv_q = s->q_inf > 0 ? 1.0 / s->q_inf : NAN;
    double inv_e = s->q_inf > 0 ? 1.0 / (s->q_inf * sqrt(u2)) : NAN;
    double d[3] = {0, 0, 0}, l[3] = {0, 0, 0};
    if (three)
        directions3(c, d, l);
    else
        directions(c, d, l);
    for (int b = 0; b < g->nbodies; b++) {
        if (three)
            s->reference_length[b] = c->reference_area > 0 ? c->reference_area
                                                           : frontal_area(&g->body[b], d);
        else if (c->axisymmetric)
            s->reference_length[b] = c->reference_area > 0 ? c->reference_area
                                                           : frontal_disc(c, &g->body[b]);
        else
            s->reference_length[b] = c->reference_length > 0 ? c->reference_length
                                                             : frontal_height(c, &g->body[b], l);
        s->cd[b] = s->cl[b] = NAN;
    }
    if (ne == 0)
        return KEDR_OK;
    double *sum = malloc(ne * DSMC_NSURF * sizeof(double));
    double *block = malloc(ne * ((14 + (three ? 12 : 0)) * sizeof(double) + sizeof(int)));
    if (!sum || !block) {
        free(sum);
        free(block);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_get_surface: out of host memory (%zu "
                         "elements)", ne);
    }
    kedr_status st = kedr_download(sim->ctx, sum, g->surf, ne * DSMC_NSURF * sizeof(double));
    if (st == KEDR_OK) /* each rank's particles hit the surface */
        st = dsmc_sum_ranks(sim, KEDR_F64, sum, ne * DSMC_NSURF);
    if (st != KEDR_OK) {
        free(sum);
        free(block);
        return st;
    }
    double **cols[14] = {&s->x, &s->y, &s->nx, &s->ny, &s->length, &s->hits, &s->pressure,
                         &s->shear, &s->heat_flux, &s->cp, &s->cf, &s->ch, &s->z, &s->nz};
    for (int k = 0; k < 14; k++)
        *cols[k] = block + (size_t)k * ne;
    s->corners = three ? block + 14 * ne : NULL;
    s->body = (int *)(block + (three ? 26 : 14) * ne);
    memcpy(s->x, g->ex, ne * sizeof(double));
    memcpy(s->y, g->ey, ne * sizeof(double));
    memcpy(s->z, g->ez, ne * sizeof(double));
    memcpy(s->nx, g->enx, ne * sizeof(double));
    memcpy(s->ny, g->eny, ne * sizeof(double));
    memcpy(s->nz, g->enz, ne * sizeof(double));
    if (three)
        memcpy(s->corners, g->corners, ne * 12 * sizeof(double));
    memcpy(s->length, g->elen, ne * sizeof(double));
    memcpy(s->body, g->ebody, ne * sizeof(int));
    /* Sums of simulated molecules over the sampled time: times the weight, per time and area. */
    double time = (double)g->surf_steps * c->dt, w = c->weight;
    double fx[KEDR_DSMC_MAX_BODIES] = {0}, fy[KEDR_DSMC_MAX_BODIES] = {0};
    double fz[KEDR_DSMC_MAX_BODIES] = {0};
    for (size_t e = 0; e < ne; e++) {
        const double *r = sum;
        double per = time > 0 ? w / (time * g->elen[e]) : NAN;
        s->hits[e] = g->surf_steps > 0 ? r[DSMC_SURF_HITS * ne + e] / (double)g->surf_steps : NAN;
        s->pressure[e] = (r[DSMC_SURF_PIN * ne + e] + r[DSMC_SURF_POUT * ne + e]) * per;
        s->shear[e] = r[DSMC_SURF_SHEAR * ne + e] * per;
        if (three) {
            /* the tangential part of the force on the element, along the drag direction
             * projected on the element's plane */
            double f[3] = {r[DSMC_SURF_FX * ne + e], r[DSMC_SURF_FY * ne + e],
                           r[DSMC_SURF_FZ * ne + e]};
            double n[3] = {g->enx[e], g->eny[e], g->enz[e]}, t[3];
            double fn = f[0] * n[0] + f[1] * n[1] + f[2] * n[2];
            double dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2], tl = 0, ft = 0;
            for (int k = 0; k < 3; k++) {
                t[k] = d[k] - dn * n[k];
                tl += t[k] * t[k];
            }
            tl = sqrt(tl);
            for (int k = 0; k < 3 && tl > 1e-9; k++)
                ft += (f[k] - fn * n[k]) * t[k] / tl;
            s->shear[e] = ft * per;
        }
        s->heat_flux[e] = (r[DSMC_SURF_EIN * ne + e] - r[DSMC_SURF_EOUT * ne + e]) * per;
        s->cp[e] = (s->pressure[e] - s->p_inf) * inv_q;
        s->cf[e] = s->shear[e] * inv_q;
        s->ch[e] = s->heat_flux[e] * inv_e;
        fx[g->ebody[e]] += r[DSMC_SURF_FX * ne + e];
        fy[g->ebody[e]] += r[DSMC_SURF_FY * ne + e];
        fz[g->ebody[e]] += r[DSMC_SURF_FZ * ne + e];
    }
    for (int b = 0; b < g->nbodies; b++) {
        double fxb = time > 0 ? fx[b] * w / time : NAN, fyb = time > 0 ? fy[b] * w / time : NAN;
        double fzb = time > 0 ? fz[b] * w / time : NAN;
        s->drag[b] = fxb * d[0] + fyb * d[1];
        s->lift[b] = fxb * l[0] + fyb * l[1];
        if (c->axisymmetric) /* radial forces cancel over the revolution (the drag is along x) */
            s->lift[b] = 0;
        if (three) {
            s->drag[b] += fzb * d[2];
            s->lift[b] += fzb * l[2];
        }
        s->cd[b] = s->drag[b] * inv_q / s->reference_length[b];
        s->cl[b] = s->lift[b] * inv_q / s->reference_length[b];
    }
    free(sum);
    return KEDR_OK;
}

/* PATH.tmp, renamed over PATH when complete (kedr_file_begin: never onto a device or FIFO). */
static kedr_status open_tmp(const char *fn, const kedr_dsmc_surface *s, const char *path,
                            kedr_file_writer *w)
{
    if (!s || !path)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL", fn, s ? "path" : "s");
    if (s->nelem > 0 && !s->x)
        return kedr_fail(KEDR_ERR_INVALID, "%s: the surface has no arrays", fn);
    return kedr_file_begin(w, path);
}

kedr_status kedr_dsmc_write_surface_csv(const kedr_dsmc_surface *s, const char *path)
{
    kedr_file_writer w;
    KEDR_TRY(open_tmp("kedr_dsmc_write_surface_csv", s, path, &w));
    FILE *out = KEDR_FILE(&w);
    if (s->dims == 3) {
        fprintf(out, "element,body,x,y,z,nx,ny,nz,area,hits_per_step,pressure,shear,heat_flux,cp,"
                     "cf,ch\n");
        for (size_t e = 0; e < s->nelem; e++)
            fprintf(out, "%zu,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,"
                    "%.9g\n", e, s->body[e] + 1, s->x[e], s->y[e], s->z[e], s->nx[e], s->ny[e],
                    s->nz[e], s->length[e], s->hits[e], s->pressure[e], s->shear[e],
                    s->heat_flux[e], s->cp[e], s->cf[e], s->ch[e]);
        return kedr_file_commit(&w);
    }
    fprintf(out, "element,body,x,y,nx,ny,%s,hits_per_step,pressure,shear,heat_flux,cp,cf,ch\n",
            s->axisymmetric ? "area" : "length");
    for (size_t e = 0; e < s->nelem; e++)
        fprintf(out, "%zu,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", e,
                s->body[e] + 1, s->x[e], s->y[e], s->nx[e], s->ny[e], s->length[e], s->hits[e],
                s->pressure[e], s->shear[e], s->heat_flux[e], s->cp[e], s->cf[e], s->ch[e]);
    return kedr_file_commit(&w);
}

/* Each element a line cell from its start to its end point (z = 0) in 2D (axisymmetric: in the
 * meridional plane, which ParaView's Rotational Extrusion turns into the body of revolution), a
 * quadrilateral of its 4 corners in 3D. */
kedr_status kedr_dsmc_write_surface_vtp(const kedr_dsmc_surface *s, const char *path)
{
    kedr_file_writer w;
    KEDR_TRY(open_tmp("kedr_dsmc_write_surface_vtp", s, path, &w));
    FILE *out = KEDR_FILE(&w);
    size_t ne = s->nelem;
    int three = s->dims == 3 && s->corners;
    size_t per = three ? 4 : 2; /* points per cell */
    fprintf(out, "<?xml version=\"1.0\"?>\n"
                 "<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                 "  <PolyData>\n"
                 "    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"0\" NumberOfLines=\"%zu\" "
                 "NumberOfStrips=\"0\" NumberOfPolys=\"%zu\">\n"
                 "      <Points>\n"
                 "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n",
            per * ne, three ? (size_t)0 : ne, three ? ne : (size_t)0);
    for (size_t e = 0; e < ne; e++) {
        if (three) {
            const double *q = s->corners + 12 * e;
            for (int k = 0; k < 4; k++)
                fprintf(out, "%.9g %.9g %.9g\n", q[3 * k], q[3 * k + 1], q[3 * k + 2]);
            continue;
        }
        /* axisymmetric: length is the band's area, 2 pi y times its meridional length (for a
         * sphere's zone, the chord's) */
        double len = s->axisymmetric ? s->length[e] / (2.0 * M_PI * s->y[e]) : s->length[e];
        double tx = -s->ny[e] * 0.5 * len, ty = s->nx[e] * 0.5 * len;
        fprintf(out, "%.9g %.9g 0\n%.9g %.9g 0\n", s->x[e] - tx, s->y[e] - ty, s->x[e] + tx,
                s->y[e] + ty);
    }
    fprintf(out, "        </DataArray>\n      </Points>\n      <%s>\n"
                 "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
            three ? "Polys" : "Lines");
    for (size_t e = 0; e < ne; e++) {
        if (three)
            fprintf(out, "%zu %zu %zu %zu\n", 4 * e, 4 * e + 1, 4 * e + 2, 4 * e + 3);
        else
            fprintf(out, "%zu %zu\n", 2 * e, 2 * e + 1);
    }
    fprintf(out, "        </DataArray>\n"
                 "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n");
    for (size_t e = 0; e < ne; e++)
        fprintf(out, "%zu\n", per * e + per);
    fprintf(out, "        </DataArray>\n      </%s>\n      <CellData Scalars=\"cp\">\n",
            three ? "Polys" : "Lines");
    struct {
        const char *name;
        const double *v;
    } cols[] = {{"cp", s->cp},       {"cf", s->cf},         {"ch", s->ch},
                {"pressure", s->pressure}, {"shear", s->shear}, {"heat_flux", s->heat_flux},
                {"hits_per_step", s->hits}};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
        fprintf(out, "        <DataArray type=\"Float64\" Name=\"%s\" format=\"ascii\">\n",
                cols[k].name);
        for (size_t e = 0; e < ne; e++)
            fprintf(out, "%.9g\n", cols[k].v[e]);
        fprintf(out, "        </DataArray>\n");
    }
    fprintf(out, "        <DataArray type=\"Float64\" Name=\"normal\" NumberOfComponents=\"3\" "
                 "format=\"ascii\">\n");
    for (size_t e = 0; e < ne; e++)
        fprintf(out, "%.9g %.9g %.9g\n", s->nx[e], s->ny[e], s->nz ? s->nz[e] : 0.0);
    fprintf(out, "        </DataArray>\n        <DataArray type=\"Int32\" Name=\"body\" "
                 "format=\"ascii\">\n");
    for (size_t e = 0; e < ne; e++)
        fprintf(out, "%d\n", s->body[e] + 1);
    fprintf(out, "        </DataArray>\n      </CellData>\n    </Piece>\n  </PolyData>\n"
                 "</VTKFile>\n");
    return kedr_file_commit(&w);
}
