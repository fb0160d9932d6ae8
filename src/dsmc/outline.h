/* Private: closed outlines of 2D and axisymmetric bodies from files, for the bodies of type
 * outline: the readers (a plain list of points, or SPARTA's 2D surface file of points and
 * lines), the case's transform (scale, rotate about z, translate) and the checks a DSMC body
 * needs (at least 3 points, no repeated consecutive point, no crossing, no fold, a non-zero
 * area, nothing below the axis of an axisymmetric case). */
#ifndef DSMC_OUTLINE_H
#define DSMC_OUTLINE_H

#include "kedr/core.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A closed polygon: n points (x y pairs), segment k from point k to point (k + 1) mod n; line[k]
 * the line of the file that gave point k (for messages). */
typedef struct {
    size_t n;
    double *xy;
    int *line;
} dsmc_outline;

/* Reads path: SPARTA's 2D surface format when a line (after the first, a title, as SPARTA
 * skips it) reads "N points" (then "M lines", sections Points ("id x y") and Lines ("id p1 p2"
 * or "id type p1 p2"), the lines joined into one closed loop), else a list of points, "x y" a
 * line. '#' starts a comment. A last point equal to the first is dropped (the outline closes
 * itself). Every error names the file, the line and what was expected. */
kedr_status dsmc_outline_read(const char *path, dsmc_outline *o);

/* x -> R (scale x) + translate, R the rotation by rotate degrees about z. */
void dsmc_outline_transform(dsmc_outline *o, double scale, double rotate, const double translate[2]);

/* The checks (after the transform): at least 3 points; no two consecutive points equal; no
 * segment folding back on the next; no two segments meeting elsewhere (the first such pair
 * named); a non-zero area; axisymmetric (axi): no point below the axis (y < 0). */
kedr_status dsmc_outline_check(const char *path, const dsmc_outline *o, int axi);

/* Read, transform, check: the outline of a body of type outline. */
kedr_status dsmc_outline_load(const char *path, double scale, double rotate,
                              const double translate[2], int axi, dsmc_outline *o);

/* Signed area (> 0: counter-clockwise) and the bounding box lo x, lo y, hi x, hi y. */
double dsmc_outline_area(const dsmc_outline *o);
void dsmc_outline_box(const dsmc_outline *o, double box[4]);

void dsmc_outline_free(dsmc_outline *o);

#ifdef __cplusplus
}
#endif
#endif
