/* Private: triangulated surfaces from STL files (ASCII and binary), for the 3D bodies of type
 * stl: the reader, the checks a DSMC body needs (closed, consistently oriented, outward,
 * without degenerate triangles) and the case's transform. */
#ifndef DSMC_STL_H
#define DSMC_STL_H

#include "kedr/core.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A triangle soup: 9 doubles per triangle, its vertices a, b, c (x y z each), counter-clockwise
 * seen from outside (the outward normal along (b - a) x (c - a)). */
typedef struct {
    size_t ntri;
    double *v;
} dsmc_stl_mesh;

/* Reads path as binary STL when it is one (84 + 50 n bytes for the n triangles its header
 * counts, or any file that is not text starting with "solid"), else as ASCII STL. Every error
 * names the file and the triangle (counted from 1; ASCII: also the line) and what was expected:
 * a truncated file, a count that disagrees with the size, a word or number out of place, a
 * coordinate that is not finite, no triangle at all. The facet normals in the file are read
 * and ignored: the vertex order gives the orientation. */
kedr_status dsmc_stl_read(const char *path, dsmc_stl_mesh *m);

/* A path ending in .obj (any case) is read as Wavefront OBJ instead: dsmc_obj_parse takes its
 * text (obj.c): the vertices (v x y z) and faces (f i j k ..., items i, i/t, i//n or i/t/n,
 * negative i counting back from the last vertex read), a face of n vertices as n - 2 triangles
 * (a fan from its first vertex), numbered in the file's order; other statements are skipped.
 * Errors name the file, the line and the vertex or face item. */
kedr_status dsmc_obj_parse(const char *path, const char *text, dsmc_stl_mesh *m);

/* The checks of a body's surface: no degenerate (zero-area) triangle; closed (each edge,
 * between vertices of identical coordinates, shared by exactly two triangles); consistently
 * oriented (the two run the edge in opposite directions); enclosing a positive volume
 * (normals outward). An error names the file, the triangles and the edge. */
kedr_status dsmc_stl_check(const char *path, const dsmc_stl_mesh *m);

/* x -> R (scale x) + translate, R the rotation by rotate[0] degrees about x, then rotate[1]
 * about y, then rotate[2] about z (fixed axes, right-handed). */
void dsmc_stl_transform(dsmc_stl_mesh *m, double scale, const double rotate[3],
                        const double translate[3]);

/* Read, check and transform: the mesh of a body of type stl. */
kedr_status dsmc_stl_load(const char *path, double scale, const double rotate[3],
                          const double translate[3], dsmc_stl_mesh *m);

/* Bounding box lo x y z, hi x y z; the enclosed volume (divergence theorem); the area seen along
 * the unit direction d, half the sum of |n.d| times each triangle's area (exact for a convex
 * body, an upper bound otherwise). */
void dsmc_stl_box(const dsmc_stl_mesh *m, double box[6]);
double dsmc_stl_volume(const dsmc_stl_mesh *m);
double dsmc_stl_projected_area(const dsmc_stl_mesh *m, const double d[3]);

/* Writes m as binary STL (tests and tools: a body made in code to a file). */
kedr_status dsmc_stl_write_binary(const char *path, const dsmc_stl_mesh *m);

void dsmc_stl_free(dsmc_stl_mesh *m);

#ifdef __cplusplus
}
#endif
#endif
