/* Output of DSMC cell fields: CSV and VTK XML ImageData (.vti, text or appended binary). Files are
 * written to PATH.tmp and renamed over PATH (kedr_file_begin), so a reader never sees half a
 * file. Cells without data are missing values: empty in CSV, NaN in VTK (docs/dsmc.md, Output). */
#include "kedr/dsmc.h"
#include "vtk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[40]; /* n_ or x_ and a species name of at most 31 characters */
    const double *v;
} field_col;

#define NBASE 13 /* the fields before a mixture's species */
#define NCOLS (NBASE + 2 * KEDR_DSMC_MAX_SPECIES)

/* The fields' columns; temperature_vib only for a vibrating gas (NULL otherwise), then in a
 * mixture n_NAME and x_NAME for each species. */
static int columns(const kedr_dsmc_case *c, const kedr_dsmc_fields *f, field_col cols[NCOLS])
{
    field_col all[NBASE] = {{"number_density", f->number_density}, {"density", f->density},
                        {"ux", f->ux},
                        {"uy", f->uy},
                        {"uz", f->uz},
                        {"temperature", f->temperature},
                        {"temperature_rot", f->temperature_rot},
                        {"temperature_vib", f->temperature_vib},
                        {"temperature_overall", f->temperature_overall},
                        {"pressure", f->pressure},
                        {"mach", f->mach},
                        {"particles_per_cell", f->particles},
                        {"mfp_over_cell", f->mfp_ratio}};
    int n = 0;
    for (int k = 0; k < NBASE; k++)
        if (all[k].v)
            cols[n++] = all[k];
    for (int k = 0; k < f->nspecies; k++) {
        cols[n].v = f->species_density[k];
        snprintf(cols[n++].name, sizeof cols->name, "n_%s", c->species[k].name);
    }
    for (int k = 0; k < f->nspecies; k++) {
        cols[n].v = f->mole_fraction[k];
        snprintf(cols[n++].name, sizeof cols->name, "x_%s", c->species[k].name);
    }
    return n;
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
    if (f->nspecies && (f->nspecies != c->nspecies || c->nspecies < 2)) /* 0: none written */
        return kedr_fail(KEDR_ERR_INVALID, "%s: fields of %d species densities for a case of %d "
                         "species (a simple gas has none)", fn, f->nspecies, c->nspecies);
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
    int nc = columns(c, f, cols);
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

int kedr_dsmc_vtk_compressed(void)
{
    return dsmc_vtk_compresses(KEDR_DSMC_VTK_BINARY);
}

/* The VTK arrays: the fields in column order, ux, uy and uz as one 3-component velocity. */
static int vtk_arrays(const field_col *cols, int nc, int index[NCOLS])
{
    int n = 0;
    for (int k = 0; k < nc; k++)
        if (strcmp(cols[k].name, "uy") != 0 && strcmp(cols[k].name, "uz") != 0)
            index[n++] = k;
    return n;
}

/* Each array's values, encoded as a block of the appended data. */
static kedr_status encode_fields(const kedr_dsmc_fields *f, kedr_dsmc_vtk_format format,
                                 const field_col *cols, const int *index, int na, size_t ncells,
                                 dsmc_vtk_array *arr)
{
    double *v = malloc(3 * ncells * sizeof *v + 1);
    if (!v)
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_dsmc_write_vti: out of host memory (%zu cells)",
                         ncells);
    kedr_status s = KEDR_OK;
    for (int a = 0; a < na && s == KEDR_OK; a++) {
        const field_col *col = &cols[index[a]];
        int vec = strcmp(col->name, "ux") == 0;
        arr[a] = (dsmc_vtk_array){vec ? "velocity" : col->name, "Float64", vec ? 3 : 1, NULL, 0};
        for (size_t i = 0; i < ncells; i++)
            for (int d = 0; d < arr[a].ncomp; d++)
                v[i * arr[a].ncomp + d] = value_of(f, col + d, i);
        s = dsmc_vtk_encode(&arr[a], format, v, ncells * arr[a].ncomp * sizeof *v);
    }
    free(v);
    return s;
}

kedr_status kedr_dsmc_write_vti(const kedr_dsmc_case *c, const kedr_dsmc_fields *f,
                                const char *path)
{
    KEDR_TRY(check_args("kedr_dsmc_write_vti", c, f, path));
    int binary = c->vtk_format != KEDR_DSMC_VTK_ASCII;
    field_col cols[NCOLS];
    int nc = columns(c, f, cols), index[NCOLS], na = vtk_arrays(cols, nc, index);
    size_t ncells = (size_t)c->nx * c->ny * (size_t)(c->dims == 3 ? c->nz : 1);
    dsmc_vtk_array arr[NCOLS] = {{0}};
    if (binary) {
        kedr_status s = encode_fields(f, c->vtk_format, cols, index, na, ncells, arr);
        if (s != KEDR_OK) {
            dsmc_vtk_free(arr, na);
            return s;
        }
    }
    kedr_file_writer w;
    kedr_status s = kedr_file_begin(&w, path);
    if (s != KEDR_OK) {
        dsmc_vtk_free(arr, na);
        return s;
    }
    FILE *out = KEDR_FILE(&w);
    double dx = (c->hi[0] - c->lo[0]) / c->nx, dy = (c->hi[1] - c->lo[1]) / c->ny;
    int three = c->dims == 3, nz = three ? c->nz : 0;
    double z0 = three ? c->lo[2] : 0, dz = three ? (c->hi[2] - c->lo[2]) / c->nz : 1;
    /* Points span 0..nx x 0..ny (x 0..nz in 3D); the fields are cell data, one value per cell,
     * x fastest. */
    fprintf(out, "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"%s\"",
            binary ? "1.0" : "0.1");
    if (binary)
        dsmc_vtk_file_attributes(out, c->vtk_format);
    else
        fprintf(out, " byte_order=\"LittleEndian\"");
    fprintf(out, ">\n  <ImageData WholeExtent=\"0 %d 0 %d 0 %d\" Origin=\"%.17g %.17g %.17g\" "
                 "Spacing=\"%.17g %.17g %.17g\">\n"
                 "    <Piece Extent=\"0 %d 0 %d 0 %d\">\n"
                 "      <CellData Scalars=\"temperature\">\n",
            c->nx, c->ny, nz, c->lo[0], c->lo[1], z0, dx, dy, dz, c->nx, c->ny, nz);
    fprintf(out, "      <!-- nan: no data (a cell inside a body, or one that no molecule entered "
                 "while sampling: its particles_per_cell is 0) -->\n");
    size_t offset = 0;
    for (int a = 0; a < na; a++) {
        if (binary) {
            dsmc_vtk_tag(out, &arr[a], &offset, "        ");
            continue;
        }
        const field_col *col = &cols[index[a]];
        if (strcmp(col->name, "ux") == 0) {
            fprintf(out, "        <DataArray type=\"Float64\" Name=\"velocity\" "
                         "NumberOfComponents=\"3\" format=\"ascii\">\n");
            for (size_t i = 0; i < ncells; i++)
                fprintf(out, "%.9g %.9g %.9g\n", value_of(f, col, i), value_of(f, col + 1, i),
                        value_of(f, col + 2, i));
        } else {
            fprintf(out, "        <DataArray type=\"Float64\" Name=\"%s\" format=\"ascii\">\n",
                    col->name);
            for (size_t i = 0; i < ncells; i++)
                fprintf(out, "%.9g\n", value_of(f, col, i));
        }
        fprintf(out, "        </DataArray>\n");
    }
    fprintf(out, "      </CellData>\n    </Piece>\n  </ImageData>\n");
    if (binary)
        dsmc_vtk_appended(out, arr, na);
    fprintf(out, "</VTKFile>\n");
    dsmc_vtk_free(arr, na);
    return kedr_file_commit(&w);
}
