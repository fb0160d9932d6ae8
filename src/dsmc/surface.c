/* Surface sampling results: per element pressure, shear and heat flux and their coefficients,
 * body forces, and the surface files (CSV and VTK PolyData). */
#include "sim.h"
#include "vtk.h"

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

/* 3D: a body's area seen along the drag direction d; an stl body's from its elements (half the
 * sum of |n.d| times their areas: exact for a convex body, more than the silhouette's area for
 * a concave one). */
static double frontal_area(const dsmc_geometry *g, int body, const double d[3])
{
    const kedr_dsmc_body *b = &g->body[body];
    if (b->type == KEDR_DSMC_BODY_STL) {
        double a = 0;
        for (size_t e = 0; e < g->nelem; e++)
            if (g->ebody[e] == body)
                a += fabs(g->enx[e] * d[0] + g->eny[e] * d[1] + g->enz[e] * d[2]) * g->elen[e];
        return 0.5 * a;
    }
    if (b->type == KEDR_DSMC_BODY_SPHERE)
        return M_PI * b->radius * b->radius;
    if (b->type == KEDR_DSMC_BODY_CUBOID)
        return fabs(d[0]) * b->size[1] * b->size[2] + fabs(d[1]) * b->size[0] * b->size[2] +
               fabs(d[2]) * b->size[0] * b->size[1];
    double r = b->length * tan(b->half_angle * M_PI / 180.0); /* cone: its base */
    return M_PI * r * r;
}

/* The ends of the segments of outline body `body` (host arrays of lines.c): its points. */
static void outline_range(const kedr_dsmc *sim, int body, const double l[2], double *lo,
                          double *hi)
{
    const dsmc_params *p = &sim->p;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int q = 0; q < p->nlbodies; q++)
        for (uint32_t k = 0; p->lb_body[q] == body && k < p->lb_count[q]; k++) {
            const double *s = sim->geo.line_seg + 4 * (size_t)(p->lb_first[q] + k);
            double h = s[0] * l[0] + s[1] * l[1];
            *lo = fmin(*lo, h);
            *hi = fmax(*hi, h);
        }
}

/* Axisymmetric: a body of revolution's area seen along the axis, pi r_max^2. */
static double frontal_disc(const kedr_dsmc *sim, const kedr_dsmc_case *c, int body)
{
    const kedr_dsmc_body *b = &sim->geo.body[body];
    if (b->type == KEDR_DSMC_BODY_OUTLINE) {
        double lo, hi;
        outline_range(sim, body, (const double[2]){0, 1}, &lo, &hi);
        return M_PI * hi * hi;
    }
    double r = b->type == KEDR_DSMC_BODY_CIRCLE ? b->radius : 0;
    for (int k = b->first; k < b->first + b->count && b->type != KEDR_DSMC_BODY_CIRCLE; k++)
        r = fmax(r, fmax(c->segment[k][1], c->segment[k][3]));
    return M_PI * r * r;
}

/* A body's extent across the flow (along the lift direction). */
static double frontal_height(const kedr_dsmc *sim, const kedr_dsmc_case *c, int body,
                             const double l[2])
{
    const kedr_dsmc_body *b = &sim->geo.body[body];
    if (b->type == KEDR_DSMC_BODY_CIRCLE)
        return 2.0 * b->radius;
    double lo = INFINITY, hi = -INFINITY;
    if (b->type == KEDR_DSMC_BODY_OUTLINE) {
        outline_range(sim, body, l, &lo, &hi);
        return hi - lo;
    }
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
    s->vtk_format = c->vtk_format;
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
                                                           : frontal_area(g, b, d);
        else if (c->axisymmetric)
            s->reference_length[b] = c->reference_area > 0 ? c->reference_area
                                                           : frontal_disc(sim, c, b);
        else
            s->reference_length[b] = c->reference_length > 0 ? c->reference_length
                                                             : frontal_height(sim, c, b, l);
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

/* Element e's points (x y z each): its 2 ends in 2D, its 4 corners in 3D, 3 for a triangle (a
 * NaN 4th corner); returns how many. */
static int element_points(const kedr_dsmc_surface *s, int three, size_t e, double *p)
{
    if (three) {
        memcpy(p, s->corners + 12 * e, 12 * sizeof *p);
        return isnan(p[9]) ? 3 : 4;
    }
    /* axisymmetric: length is the band's area, 2 pi y times its meridional length (for a
     * sphere's zone, the chord's) */
    double len = s->axisymmetric ? s->length[e] / (2.0 * M_PI * s->y[e]) : s->length[e];
    double tx = -s->ny[e] * 0.5 * len, ty = s->nx[e] * 0.5 * len;
    double q[6] = {s->x[e] - tx, s->y[e] - ty, 0, s->x[e] + tx, s->y[e] + ty, 0};
    memcpy(p, q, sizeof q);
    return 2;
}

/* The points of all elements. */
static size_t total_points(const kedr_dsmc_surface *s, int three)
{
    size_t n = 0;
    for (size_t e = 0; e < s->nelem; e++)
        n += !three ? 2 : isnan(s->corners[12 * e + 9]) ? 3 : 4;
    return n;
}

/* The cell data of the .vtp, in file order (normal and body follow). */
#define VTP_SCALARS 7
static void vtp_scalars(const kedr_dsmc_surface *s, const char *name[VTP_SCALARS],
                        const double *v[VTP_SCALARS])
{
    const char *n[VTP_SCALARS] = {"cp", "cf", "ch", "pressure", "shear", "heat_flux",
                                  "hits_per_step"};
    const double *d[VTP_SCALARS] = {s->cp, s->cf, s->ch, s->pressure, s->shear, s->heat_flux,
                                    s->hits};
    memcpy(name, n, sizeof n);
    memcpy(v, d, sizeof d);
}

/* The arrays of the binary .vtp: points, connectivity, offsets, the scalars, normal, body. */
#define VTP_ARRAYS (3 + VTP_SCALARS + 2)
static kedr_status encode_vtp(const kedr_dsmc_surface *s, int three, dsmc_vtk_array *arr)
{
    size_t ne = s->nelem, per = three ? 4 : 2, points = 0;
    size_t bytes = ne * per * 3 * sizeof(double) + 1;
    double *v = malloc(bytes);
    int64_t *ids = malloc(ne * sizeof *ids + 1);
    int32_t *body = malloc(ne * sizeof *body + 1);
    kedr_status st = KEDR_OK;
    if (!v || !ids || !body)
        st = kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_write_surface_vtp: out of host memory (%zu "
                       "elements)", ne);
    const char *name[VTP_SCALARS];
    const double *col[VTP_SCALARS];
    vtp_scalars(s, name, col);
    for (int k = 0; k < VTP_ARRAYS && st == KEDR_OK; k++) {
        dsmc_vtk_array *a = &arr[k];
        *a = (dsmc_vtk_array){NULL, "Float64", 1, NULL, 0};
        if (k == 0) { /* points */
            a->ncomp = 3;
            for (size_t e = 0; e < ne; e++)
                ids[e] = (int64_t)(points += (size_t)element_points(s, three, e, v + 3 * points));
            st = dsmc_vtk_encode(a, s->vtk_format, v, points * 3 * sizeof *v);
        } else if (k == 2) { /* offsets: each cell's end, kept in ids since the points */
            a->name = "offsets";
            a->type = "Int64";
            st = dsmc_vtk_encode(a, s->vtk_format, ids, ne * sizeof *ids);
        } else if (k == 1) { /* connectivity: the points in order, in their own array */
            a->name = "connectivity";
            a->type = "Int64";
            int64_t *con = malloc(points * sizeof *con + 1);
            for (size_t i = 0; con && i < points; i++)
                con[i] = (int64_t)i;
            st = con ? dsmc_vtk_encode(a, s->vtk_format, con, points * sizeof *con)
                     : kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_write_surface_vtp: out of host "
                                 "memory (%zu points)", points);
            free(con);
        } else if (k < 3 + VTP_SCALARS) {
            a->name = name[k - 3];
            st = dsmc_vtk_encode(a, s->vtk_format, col[k - 3], ne * sizeof(double));
        } else if (k == 3 + VTP_SCALARS) {
            a->name = "normal";
            a->ncomp = 3;
            for (size_t e = 0; e < ne; e++) {
                v[3 * e] = s->nx[e];
                v[3 * e + 1] = s->ny[e];
                v[3 * e + 2] = s->nz ? s->nz[e] : 0.0;
            }
            st = dsmc_vtk_encode(a, s->vtk_format, v, ne * 3 * sizeof *v);
        } else {
            a->name = "body";
            a->type = "Int32";
            for (size_t e = 0; e < ne; e++)
                body[e] = s->body[e] + 1;
            st = dsmc_vtk_encode(a, s->vtk_format, body, ne * sizeof *body);
        }
    }
    free(v);
    free(ids);
    free(body);
    return st;
}

/* The binary .vtp: the XML with each array's offset, then the appended blocks. */
static kedr_status write_vtp_binary(const kedr_dsmc_surface *s, int three, kedr_file_writer *w)
{
    dsmc_vtk_array arr[VTP_ARRAYS] = {{0}};
    kedr_status st = encode_vtp(s, three, arr);
    if (st != KEDR_OK) {
        dsmc_vtk_free(arr, VTP_ARRAYS);
        kedr_file_abort(w);
        return st;
    }
    FILE *out = KEDR_FILE(w);
    size_t ne = s->nelem, offset = 0;
    const char *cells = three ? "Polys" : "Lines";
    fprintf(out, "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\"");
    dsmc_vtk_file_attributes(out, s->vtk_format);
    fprintf(out, ">\n  <PolyData>\n"
                 "    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"0\" NumberOfLines=\"%zu\" "
                 "NumberOfStrips=\"0\" NumberOfPolys=\"%zu\">\n      <Points>\n",
            total_points(s, three), three ? (size_t)0 : ne, three ? ne : (size_t)0);
    dsmc_vtk_tag(out, &arr[0], &offset, "        ");
    fprintf(out, "      </Points>\n      <%s>\n", cells);
    dsmc_vtk_tag(out, &arr[1], &offset, "        ");
    dsmc_vtk_tag(out, &arr[2], &offset, "        ");
    fprintf(out, "      </%s>\n      <CellData Scalars=\"cp\">\n", cells);
    for (int k = 3; k < VTP_ARRAYS; k++)
        dsmc_vtk_tag(out, &arr[k], &offset, "        ");
    fprintf(out, "      </CellData>\n    </Piece>\n  </PolyData>\n");
    dsmc_vtk_appended(out, arr, VTP_ARRAYS);
    fprintf(out, "</VTKFile>\n");
    dsmc_vtk_free(arr, VTP_ARRAYS);
    return kedr_file_commit(w);
}

/* Each element a line cell from its start to its end point (z = 0) in 2D (axisymmetric: in the
 * meridional plane, which ParaView's Rotational Extrusion turns into the body of revolution), a
 * quadrilateral of its 4 corners in 3D, a triangle for the triangles of an stl body. */
kedr_status kedr_dsmc_write_surface_vtp(const kedr_dsmc_surface *s, const char *path)
{
    kedr_file_writer w;
    KEDR_TRY(open_tmp("kedr_dsmc_write_surface_vtp", s, path, &w));
    int three = s->dims == 3 && s->corners;
    if (s->vtk_format != KEDR_DSMC_VTK_ASCII)
        return write_vtp_binary(s, three, &w);
    FILE *out = KEDR_FILE(&w);
    size_t ne = s->nelem, points = total_points(s, three);
    fprintf(out, "<?xml version=\"1.0\"?>\n"
                 "<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                 "  <PolyData>\n"
                 "    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"0\" NumberOfLines=\"%zu\" "
                 "NumberOfStrips=\"0\" NumberOfPolys=\"%zu\">\n"
                 "      <Points>\n"
                 "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n",
            points, three ? (size_t)0 : ne, three ? ne : (size_t)0);
    for (size_t e = 0; e < ne; e++) {
        double q[12];
        for (int k = 0, np = element_points(s, three, e, q); k < np; k++)
            fprintf(out, "%.9g %.9g %.9g\n", q[3 * k], q[3 * k + 1], q[3 * k + 2]);
    }
    fprintf(out, "        </DataArray>\n      </Points>\n      <%s>\n"
                 "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
            three ? "Polys" : "Lines");
    size_t *ends = malloc(ne * sizeof *ends + 1);
    if (!ends) {
        kedr_file_abort(&w);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_write_surface_vtp: out of host memory (%zu "
                         "elements)", ne);
    }
    for (size_t e = 0, at = 0; e < ne; e++) {
        double q[12];
        size_t np = (size_t)element_points(s, three, e, q);
        for (size_t k = 0; k < np; k++)
            fprintf(out, k + 1 < np ? "%zu " : "%zu\n", at + k);
        ends[e] = at += np;
    }
    fprintf(out, "        </DataArray>\n"
                 "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n");
    for (size_t e = 0; e < ne; e++)
        fprintf(out, "%zu\n", ends[e]);
    free(ends);
    fprintf(out, "        </DataArray>\n      </%s>\n      <CellData Scalars=\"cp\">\n",
            three ? "Polys" : "Lines");
    const char *name[VTP_SCALARS];
    const double *col[VTP_SCALARS];
    vtp_scalars(s, name, col);
    for (int k = 0; k < VTP_SCALARS; k++) {
        fprintf(out, "        <DataArray type=\"Float64\" Name=\"%s\" format=\"ascii\">\n",
                name[k]);
        for (size_t e = 0; e < ne; e++)
            fprintf(out, "%.9g\n", col[k][e]);
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
