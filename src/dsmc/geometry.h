/* Private: bodies of a DSMC case (circles and segments), the gas volume of cut cells, and the
 * surface elements with their sums. */
#ifndef DSMC_GEOMETRY_H
#define DSMC_GEOMETRY_H

#include "dsmc_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int nbodies;
    kedr_dsmc_body body[KEDR_DSMC_MAX_BODIES]; /* with the implicit body of bare segments */
    size_t nelem;
    /* Per element, host memory (one block): centre, normal into the gas, length (3D: area),
     * body; 3D: 4 corners (x y z each) per element in a block of their own. */
    double *ex, *ey, *ez, *enx, *eny, *enz, *elen;
    int *ebody;
    double *corners;
    double *gas_host;     /* per cell gas volume */
    double *gas;          /* the same in context memory (NULL when no cell is cut) */
    double *surf;         /* DSMC_NSURF x nelem sums, context memory */
    double *surf_threads; /* cpu: one set of sums per thread, added into surf after a move */
    int threads;
    int64_t surf_steps;   /* steps whose wall hits are in surf */
} dsmc_geometry;

struct kedr_dsmc;

/* Area of the part of the polygon (n points, x y pairs; simple, either orientation) inside the
 * rectangle [x0, x1] x [y0, y1] (Sutherland & Hodgman 1974 clipping, then the shoelace area). */
double dsmc_polygon_rect_area(const double *xy, int n, double x0, double y0, double x1, double y1);
/* Area of the part of the disc inside the rectangle, exact: the integral of the clipped chord
 * over x, split where the circle crosses y0 or y1, each piece in closed form. */
double dsmc_circle_rect_area(double cx, double cy, double r, double x0, double y0, double x1,
                             double y1);
/* The integral of y over the same parts: the gas volume a body takes from a ring cell of an
 * axisymmetric case is 2 pi times it (Pappus). */
double dsmc_polygon_rect_moment(const double *xy, int n, double x0, double y0, double x1,
                                double y1);
double dsmc_circle_rect_moment(double cx, double cy, double r, double x0, double y0, double x1,
                               double y1);
/* A cell's volume without bodies: dx dy (dz), in an axisymmetric case its ring's. */
double dsmc_cell_full_volume(const dsmc_params *p, size_t cell);
/* Whether a body type is a 3D solid; its bounding box lo x y z, hi x y z. */
int dsmc_solid_body(kedr_dsmc_body_type t);
void dsmc_solid_box(const kedr_dsmc_body *b, double box[6]);
/* Checks the bodies of a case: on a problem, writes why to msg and returns the body's index
 * (the case's nbodies when it concerns bare segments), else -1. */
int dsmc_body_problem(const kedr_dsmc_case *c, char *msg, size_t size);

/* Sets the body fields of sim->p and builds sim->geo (gas volumes, elements, sums). */
kedr_status dsmc_geometry_build(struct kedr_dsmc *sim);
void dsmc_geometry_free(struct kedr_dsmc *sim);
kedr_status dsmc_surface_reset(struct kedr_dsmc *sim);
/* Cells inside bodies have no data: every field NaN. */
void dsmc_fields_mask_solid(const struct kedr_dsmc *sim, kedr_dsmc_fields *f);

#ifdef __cplusplus
}
#endif
#endif
