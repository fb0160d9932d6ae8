/* Output of DSMC cell fields: CSV and VTK XML ImageData (.vti). Files are written to PATH.tmp and
 * renamed over PATH (kedr_file_begin), so a reader never sees half a file. Cells without data are
 * missing values: empty in CSV, NaN in VTK (docs/dsmc.md, Output). */
#include "kedr/dsmc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    const double *v;
} field_col;

#define NCOLS 12

static int columns(const kedr_dsmc_fields *f, field_col cols[NCOLS])
{
    field_col all[NCOLS] = {{"number_density", f->number_density}, {"density", f->density},
                        {"ux", f->ux},
                        {"uy", f->uy},
                        {"uz", f->uz},
                        {"temperature", f->temperature},
                        {"temperature_rot", f->temperature_rot},
                        {"temperature_overall", f->temperature_overall},
                        {"pressure", f->pressure},
                        {"mach", f->mach},
                        {"particles_per_cell", f->particles},
                        {"mfp_over_cell", f->mfp_ratio}};
    memcpy(cols, all, sizeof all);
    return NCOLS;
}

static kedr_status check_args(const char *fn, const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                              const char *path)
{
    if (!c || !f || !path)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL", fn, !c ? "c" : !f ? "f" : "path");
    int nz = c->dims == 3 ? c->nz : 1;
    if (f->nx != c->nx || f->ny != c->ny || (f->nz > 1 ? f->nz : 1) != nz || !f->number_density)
        return kedr_fail(KEDR_ERR_INVALID, "%s: fields (%d x %d x %d) do not match the case grid "
                         "(%d x %d x %d)", fn, f->nx, f->ny, f->nz, c->nx, c->ny, nz);
    return KEDR_OK;
}

/* Cell c's value in column col, NaN where the cell has none: inside a body (NaN already), and in
 * gas cells that no molecule entered while sampling, whose zeros would read as vacuum at 0 K.
 * Those keep their particle count, 0, which says why; before the first sample nothing has one. */
static double value_of(const kedr_dsmc_fields *f, const field_col *col, size_t c)
{
    if (f->samples <= 0)
        return NAN;
    if (col->v == f->particles || f->particles[c] > 0)
        return col->v[c];
    return NAN;
}

kedr_status kedr_dsmc_write_csv(const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                                const char *path)
{
    KEDR_TRY(check_args("kedr_dsmc_write_csv", c, f, path));
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *out = KEDR_FILE(&w);
    field_col cols[NCOLS];
    int nc = columns(f, cols);
    int three = c->dims == 3, nz = three ? c->nz : 1;
    fprintf(out, three ? "i,j,k,x,y,z" : "i,j,x,y");
    for (int k = 0; k < nc; k++)
        fprintf(out, ",%s", cols[k].name);
    fputc('\n', out);
    double dx = (c->hi[0] - c->lo[0]) / c->nx, dy = (c->hi[1] - c->lo[1]) / c->ny;
    double dz = three ? (c->hi[2] - c->lo[2]) / c->nz : 0;
    for (int l = 0; l < nz; l++)
        for (int j = 0; j < c->ny; j++)
            for (int i = 0; i < c->nx; i++) {
                size_t cell = ((size_t)l * c->ny + j) * c->nx + i;
                if (three)
                    fprintf(out, "%d,%d,%d,%.9g,%.9g,%.9g", i, j, l, c->lo[0] + (i + 0.5) * dx,
                            c->lo[1] + (j + 0.5) * dy, c->lo[2] + (l + 0.5) * dz);
                else
                    fprintf(out, "%d,%d,%.9g,%.9g", i, j, c->lo[0] + (i + 0.5) * dx,
                            c->lo[1] + (j + 0.5) * dy);
                for (int k = 0; k < nc; k++) { /* an empty field is a missing value */
                    double v = value_of(f, &cols[k], cell);
                    if (isfinite(v))
                        fprintf(out, ",%.9g", v);
                    else
                        fputc(',', out);
                }
                fputc('\n', out);
            }
    return kedr_file_commit(&w);
}

kedr_status kedr_dsmc_write_vti(const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                                const char *path)
{
    KEDR_TRY(check_args("kedr_dsmc_write_vti", c, f, path));
    kedr_file_writer w;
    KEDR_TRY(kedr_file_begin(&w, path));
    FILE *out = KEDR_FILE(&w);
    double dx = (c->hi[0] - c->lo[0]) / c->nx, dy = (c->hi[1] - c->lo[1]) / c->ny;
    /* Points span 0..nx x 0..ny (x 0..nz in 3D); the fields are cell data, one value per cell,
     * x fastest. */
    if (c->dims == 3) {
        double dz = (c->hi[2] - c->lo[2]) / c->nz;
        fprintf(out, "<?xml version=\"1.0\"?>\n"
                     "<VTKFile type=\"ImageData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                     "  <ImageData WholeExtent=\"0 %d 0 %d 0 %d\" Origin=\"%.17g %.17g %.17g\" "
                     "Spacing=\"%.17g %.17g %.17g\">\n"
                     "    <Piece Extent=\"0 %d 0 %d 0 %d\">\n"
                     "      <CellData Scalars=\"temperature\">\n",
                c->nx, c->ny, c->nz, c->lo[0], c->lo[1], c->lo[2], dx, dy, dz, c->nx, c->ny,
                c->nz);
    } else {
        fprintf(out, "<?xml version=\"1.0\"?>\n"
                     "<VTKFile type=\"ImageData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                     "  <ImageData WholeExtent=\"0 %d 0 %d 0 0\" Origin=\"%.17g %.17g 0\" "
                     "Spacing=\"%.17g %.17g 1\">\n"
                     "    <Piece Extent=\"0 %d 0 %d 0 0\">\n"
                     "      <CellData Scalars=\"temperature\">\n",
                c->nx, c->ny, c->lo[0], c->lo[1], dx, dy, c->nx, c->ny);
    }
    field_col cols[NCOLS];
    int nc = columns(f, cols);
    size_t ncells = (size_t)c->nx * c->ny * (size_t)(c->dims == 3 ? c->nz : 1);
    fprintf(out, "      <!-- nan: no data (a cell inside a body, or one that no molecule entered "
                 "while sampling: its particles_per_cell is 0) -->\n");
    for (int k = 0; k < nc; k++) {
        if (strcmp(cols[k].name, "uy") == 0 || strcmp(cols[k].name, "uz") == 0)
            continue; /* written with ux (the next two columns) as the velocity vector */
        if (strcmp(cols[k].name, "ux") == 0) {
            fprintf(out, "        <DataArray type=\"Float64\" Name=\"velocity\" "
                         "NumberOfComponents=\"3\" format=\"ascii\">\n");
            for (size_t i = 0; i < ncells; i++)
                fprintf(out, "%.9g %.9g %.9g\n", value_of(f, &cols[k], i),
                        value_of(f, &cols[k + 1], i), value_of(f, &cols[k + 2], i));
        } else {
            fprintf(out, "        <DataArray type=\"Float64\" Name=\"%s\" format=\"ascii\">\n",
                    cols[k].name);
            for (size_t i = 0; i < ncells; i++)
                fprintf(out, "%.9g\n", value_of(f, &cols[k], i));
        }
        fprintf(out, "        </DataArray>\n");
    }
    fprintf(out, "      </CellData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n");
    return kedr_file_commit(&w);
}
