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
    /* Bodies of type stl (mesh.c): the host arrays of dsmc_mesh (tri, start, list, solid) and
     * of dsmc_params.mesh_cut (cut), each triangle's vertices while the simulator is built
     * (vert, 9 a triangle), and the context copies of the five (ctx_*; on the cpu too, as the
     * back end's own). */
    double *mesh_tri, *mesh_vert;
    uint32_t *mesh_start, *mesh_list;
    uint8_t *mesh_solid, *mesh_cut;
    size_t mesh_ntri;
    void *ctx_tri, *ctx_start, *ctx_list, *ctx_solid, *ctx_cut;
    /* 2D bodies of type outline (lines.c): the host arrays of dsmc_lines (seg, elem, start,
     * list, cls) and their context copies. */
    double *line_seg;
    uint32_t *line_elem, *line_start, *line_list;
    uint8_t *line_cls;
    size_t line_nseg;
    void *ctx_lseg, *ctx_lelem, *ctx_lstart, *ctx_llist, *ctx_lcls;
} dsmc_geometry;

struct kedr_dsmc;

/* Area of the part of the polygon (n points, x y pairs; simple, either orientation) inside the
 * rectangle [x0, x1] x [y0, y1] (Sutherland & Hodgman 1974 clipping, then the shoelace area). */
/* (a - o) x (b - o), the z of the 2D cross product. */
double dsmc_cross3(const double *o, const double *a, const double *b);
/* Whether segments pq and rs share a point (touching counts). */
int dsmc_segments_meet(const double *p, const double *q, const double *r, const double *s);
double dsmc_polygon_rect_area(const double *xy, int n, double x0, double y0, double x1, double y1);
/* The same two steps at a time, for polygons of any size (the outline bodies): the polygon
 * clipped to the column x0 <= x <= x1 into col (its vertex count; col and scratch of 2 (4n + 16)
 * doubles each), then that column's part in y0 <= y <= y1: its area, or with moment set its
 * integral of y (a and b scratch, as col). The same operations in the same order as
 * dsmc_polygon_rect_area and dsmc_polygon_rect_moment, so the same bits. */
int dsmc_polygon_clip_column(const double *xy, int n, double x0, double x1, double *col,
                             double *scratch);
double dsmc_polygon_column_cell(const double *col, int m, double y0, double y1, int moment,
                                double *a, double *b);
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

/* Bodies of type stl (mesh.c). dsmc_stl_body_box: the body's file read, checked and placed,
 * its bounding box; on a problem writes why to msg and returns -1. dsmc_mesh_add: solid j from
 * the file, its triangles appended (solid_elem, solid_n and the box of p->solid[j] set, *ne
 * grown by its triangle count); dsmc_mesh_elements: its surface elements; dsmc_mesh_finish,
 * once all are added: the triangles binned into cells, the cells classed and the gas volume of
 * the cut ones taken off, p->mesh and p->mesh_host set. */
int dsmc_stl_body_box(const kedr_dsmc_body *b, double box[6], char *msg, size_t size);
kedr_status dsmc_mesh_add(struct kedr_dsmc *sim, int j, size_t *ne);
void dsmc_mesh_elements(struct kedr_dsmc *sim, int j);
kedr_status dsmc_mesh_finish(struct kedr_dsmc *sim, int *cut);
void dsmc_mesh_free(struct kedr_dsmc *sim);

/* Bodies of type outline (lines.c). dsmc_outline_body_box: the body's file read, checked and
 * placed (axi: an axisymmetric case), its bounding box lo x y, hi x y; on a problem writes why
 * to msg and returns -1. dsmc_lines_add: body j's outline appended to the segments (outline
 * body p->nlbodies, its segments' surface elements numbered from *ne on, ceil(length / size)
 * each, none for a segment on the axis); dsmc_lines_elements: their geometry; dsmc_lines_finish,
 * after the built-in bodies' gas volumes: the segments binned, the bins classed, the gas volume
 * of the cells of outline bodies taken off (*cut set when any), p->lines and p->lines_host set. */
int dsmc_outline_body_box(const kedr_dsmc_body *b, int axi, double box[4], char *msg,
                          size_t size);
kedr_status dsmc_lines_add(struct kedr_dsmc *sim, int j, size_t *ne, double size);
void dsmc_lines_elements(struct kedr_dsmc *sim, int q);
kedr_status dsmc_lines_finish(struct kedr_dsmc *sim, int *cut);
void dsmc_lines_free(struct kedr_dsmc *sim);

/* Reads every [body], [body2], ... section of a case file into c (case_body.c); the wall
 * models' names of [wall] model and a body's wall key, in kedr_dsmc_wall order. */
struct kedr_ini;
kedr_status dsmc_case_read_bodies(struct kedr_ini *ini, kedr_dsmc_case *c);
extern const char *const dsmc_wall_names[];

/* Clears the addresses of this run's buffers in p (gas volumes, surface sums, the stl
 * triangles and their bins, in the back end's memory and on the host): what is left describes
 * the case alone, as a checkpoint's case hash needs it. */
void dsmc_params_clear_addresses(dsmc_params *p);

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
