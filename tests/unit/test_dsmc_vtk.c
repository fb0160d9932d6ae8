/* The VTK XML files of kedr dsmc read back: the cell fields (.vti) and surfaces (.vtp) written
 * as appended binary data (zlib-compressed where kedr has zlib) are parsed here from their
 * header, their blocks inflated, and every value compared bit for bit with what was written;
 * the text format is read back to its 9 digits. Fields and surfaces are made up here (NaN in
 * solid cells, cells without molecules, sizes that end on and off a compression block). */
#include "test_util.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef KEDR_HAVE_ZLIB
#include <zlib.h>
#endif

static char dir[256];

/* ---- a small reader of what the writers write ------------------------------------------- */

typedef struct {
    char *text;
    size_t len;
    const unsigned char *base; /* the appended data, after its '_' */
    int compressed;
} vtk_file;

static int read_file(const char *path, vtk_file *v)
{
    memset(v, 0, sizeof *v);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    v->len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    v->text = malloc(v->len + 1);
    size_t got = fread(v->text, 1, v->len, f);
    fclose(f);
    v->text[got] = 0;
    v->compressed = strstr(v->text, "compressor=\"vtkZLibDataCompressor\"") != NULL;
    char *app = strstr(v->text, "<AppendedData encoding=\"raw\">");
    char *u = app ? strchr(app, '_') : NULL;
    v->base = u ? (const unsigned char *)u + 1 : NULL;
    return got == v->len;
}

/* The attribute `name` of the tag starting at tag (up to its '>'), or "" */
static void attribute(const char *tag, const char *name, char *out, size_t size)
{
    out[0] = 0;
    const char *end = strchr(tag, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(tag, key);
    if (!p || (end && p > end))
        return;
    p += strlen(key);
    size_t n = 0;
    while (p[n] && p[n] != '"' && n + 1 < size)
        n++;
    memcpy(out, p, n);
    out[n] = 0;
}

/* The <DataArray> named name (NULL: the first without a Name, the points). */
static const char *find_array(const vtk_file *v, const char *name)
{
    for (const char *p = strstr(v->text, "<DataArray"); p; p = strstr(p + 1, "<DataArray")) {
        char got[64];
        attribute(p, "Name", got, sizeof got);
        if (name ? strcmp(got, name) == 0 : got[0] == 0)
            return p;
    }
    return NULL;
}

static uint64_t u64_at(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* An appended array's bytes (malloc'ed), *bytes their count; NULL when malformed. */
static unsigned char *appended(const vtk_file *v, const char *tag, size_t *bytes)
{
    char off[32];
    attribute(tag, "offset", off, sizeof off);
    if (!v->base || !off[0])
        return NULL;
    const unsigned char *p = v->base + strtoull(off, NULL, 10);
    if (!v->compressed) {
        *bytes = u64_at(p);
        unsigned char *out = malloc(*bytes + 1);
        memcpy(out, p + 8, *bytes);
        return out;
    }
#ifdef KEDR_HAVE_ZLIB
    uint64_t nb = u64_at(p), bs = u64_at(p + 8), last = u64_at(p + 16);
    *bytes = nb == 0 ? 0 : (nb - 1) * bs + (last ? last : bs);
    unsigned char *out = malloc(*bytes + 1);
    const unsigned char *data = p + 8 * (3 + nb);
    size_t at = 0;
    for (uint64_t b = 0; b < nb; b++) {
        uLongf want = (uLongf)(b + 1 == nb && last ? last : bs);
        uLong clen = (uLong)u64_at(p + 8 * (3 + b));
        if (uncompress(out + at, &want, data, clen) != Z_OK) {
            free(out);
            return NULL;
        }
        at += want;
        data += clen;
    }
    if (at != *bytes) {
        free(out);
        return NULL;
    }
    return out;
#else
    return NULL; /* compressed, yet this build has no zlib */
#endif
}

/* The text values of an ASCII array, parsed into doubles (*n of them). */
static double *ascii_values(const char *tag, size_t *n)
{
    const char *p = strchr(tag, '>') + 1, *end = strstr(p, "</DataArray>");
    size_t cap = 1024;
    double *v = malloc(cap * sizeof *v);
    *n = 0;
    while (p < end) {
        char *next;
        double x = strtod(p, &next);
        if (next == p || next > end)
            break;
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[(*n)++] = x;
        p = next;
    }
    return v;
}

/* Compares array `name` of the file with want[count]: bit for bit when binary, to 9 digits
 * (NaN as NaN) when text. */
static void check_array(const vtk_file *v, const char *name, const char *type, int ncomp,
                        const void *want, size_t count, size_t elem, const char *what)
{
    const char *tag = find_array(v, name);
    TU_CHECK(tag != NULL, "%s: no array %s", what, name ? name : "(points)");
    if (!tag)
        return;
    char t[32], nc[16], format[32];
    attribute(tag, "type", t, sizeof t);
    attribute(tag, "NumberOfComponents", nc, sizeof nc);
    attribute(tag, "format", format, sizeof format);
    TU_CHECK(strcmp(t, type) == 0 && (ncomp == 1 ? nc[0] == 0 : atoi(nc) == ncomp),
             "%s %s: type %s, %s components", what, name ? name : "points", t, nc);
    if (strcmp(format, "appended") == 0) {
        size_t bytes = 0;
        unsigned char *got = appended(v, tag, &bytes);
        TU_CHECK(got && bytes == count * elem && memcmp(got, want, bytes) == 0,
                 "%s %s: %zu bytes read back (want %zu), values differ", what, name, bytes,
                 count * elem);
        free(got);
        return;
    }
    TU_CHECK(strcmp(format, "ascii") == 0, "%s %s: format %s", what, name, format);
    size_t n = 0;
    double *got = ascii_values(tag, &n);
    size_t bad = count;
    for (size_t i = 0; i < count && i < n && bad == count; i++) {
        double w = strcmp(type, "Float64") == 0   ? ((const double *)want)[i]
                   : strcmp(type, "Int64") == 0 ? (double)((const int64_t *)want)[i]
                                                : (double)((const int32_t *)want)[i];
        if (isnan(w) ? !isnan(got[i]) : !(fabs(got[i] - w) <= 1e-8 * fabs(w)))
            bad = i;
    }
    TU_CHECK(n == count && bad == count, "%s %s: %zu text values (want %zu), value %zu differs",
             what, name, n, count, bad);
    free(got);
}

/* ---- cell fields -------------------------------------------------------------------------- */

/* Made-up fields: random values, some cells without molecules, some inside a body (NaN); a
 * mixture's species densities and fractions for ns species (0: none). */
static void make_fields(kedr_dsmc_fields *f, int nx, int ny, int nz, int ns, uint64_t seed)
{
    size_t nc = (size_t)nx * ny * nz;
    memset(f, 0, sizeof *f);
    f->nx = nx;
    f->ny = ny;
    f->nz = nz;
    f->samples = 7;
    const int ncols = 12 + 2 * ns;
    double *block = malloc((size_t)ncols * nc * sizeof *block);
    double **cols[12 + 2 * KEDR_DSMC_MAX_SPECIES] = {
        &f->number_density, &f->density,  &f->ux,   &f->uy,        &f->uz,
        &f->temperature,    &f->temperature_rot,    &f->temperature_overall,
        &f->pressure,       &f->mach,     &f->particles, &f->mfp_ratio};
    f->nspecies = ns;
    for (int k = 0; k < ns; k++) {
        cols[12 + k] = &f->species_density[k];
        cols[12 + ns + k] = &f->mole_fraction[k];
    }
    for (int k = 0; k < ncols; k++) {
        *cols[k] = block + (size_t)k * nc;
        for (size_t i = 0; i < nc; i++)
            (*cols[k])[i] = (tu_uniform(&seed) - 0.25) * pow(10.0, k - 3);
    }
    for (size_t i = 0; i < nc; i++) {
        double u = tu_uniform(&seed);
        if (u < 0.1) /* no molecule entered: fields 0, particles 0 */
            for (int k = 0; k < ncols; k++)
                (*cols[k])[i] = 0;
        else if (u < 0.2) /* inside a body */
            for (int k = 0; k < ncols; k++)
                (*cols[k])[i] = NAN;
        else
            f->particles[i] = 1 + 40 * u;
    }
}

/* What the file must hold for a field: NaN where the cell has no data. */
static double expected(const kedr_dsmc_fields *f, const double *col, size_t i)
{
    if (col == f->particles || f->particles[i] > 0)
        return col[i];
    return NAN;
}

static void check_vti(const kedr_dsmc_case *c, const kedr_dsmc_fields *f, const char *what)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.vti", dir, what);
    TU_OK(kedr_dsmc_write_vti(c, f, path));
    vtk_file v;
    TU_CHECK(read_file(path, &v), "%s: cannot read %s", what, path);
    int binary = c->vtk_format != KEDR_DSMC_VTK_ASCII;
    int zip = c->vtk_format == KEDR_DSMC_VTK_BINARY && kedr_dsmc_vtk_compressed();
    TU_CHECK(!binary || (v.base && v.compressed == zip), "%s: appended data %p, compressed %d "
             "(want %d)", what, (const void *)v.base, v.compressed, zip);
    TU_CHECK(binary || !strstr(v.text, "AppendedData"), "%s: text file with appended data", what);
    char extent[64];
    snprintf(extent, sizeof extent, "WholeExtent=\"0 %d 0 %d 0 %d\"", f->nx, f->ny,
             c->dims == 3 ? f->nz : 0);
    TU_CHECK(strstr(v.text, extent) != NULL, "%s: no %s", what, extent);
    TU_CHECK(v.len > 12 && strcmp(v.text + v.len - 11, "</VTKFile>\n") == 0, "%s: end", what);
    size_t nc = (size_t)f->nx * f->ny * f->nz;
    double *want = malloc(3 * nc * sizeof *want);
    struct {
        const char *name;
        const double *v;
    } scalars[] = {{"number_density", f->number_density}, {"density", f->density},
                   {"temperature", f->temperature},       {"temperature_rot", f->temperature_rot},
                   {"temperature_overall", f->temperature_overall},
                   {"pressure", f->pressure},             {"mach", f->mach},
                   {"particles_per_cell", f->particles},  {"mfp_over_cell", f->mfp_ratio}};
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
        for (size_t i = 0; i < nc; i++)
            want[i] = expected(f, scalars[k].v, i);
        check_array(&v, scalars[k].name, "Float64", 1, want, nc, 8, what);
    }
    for (size_t i = 0; i < nc; i++) {
        want[3 * i] = expected(f, f->ux, i);
        want[3 * i + 1] = expected(f, f->uy, i);
        want[3 * i + 2] = expected(f, f->uz, i);
    }
    check_array(&v, "velocity", "Float64", 3, want, 3 * nc, 8, what);
    for (int k = 0; k < 2 * f->nspecies; k++) { /* a mixture's n_NAME, then x_NAME */
        int sp = k % f->nspecies;
        const double *col = k < f->nspecies ? f->species_density[sp] : f->mole_fraction[sp];
        char name[48];
        snprintf(name, sizeof name, "%s_%s", k < f->nspecies ? "n" : "x", c->species[sp].name);
        for (size_t i = 0; i < nc; i++)
            want[i] = expected(f, col, i);
        check_array(&v, name, "Float64", 1, want, nc, 8, what);
    }
    TU_CHECK((strstr(v.text, "Name=\"n_") != NULL) == (f->nspecies > 0), "%s: species arrays "
             "in a file of %d species", what, f->nspecies);
    free(want);
    free(v.text);
}

static const kedr_dsmc_vtk_format formats[3] = {KEDR_DSMC_VTK_ASCII, KEDR_DSMC_VTK_BINARY,
                                                KEDR_DSMC_VTK_RAW};
static const char *const format_name[3] = {"ascii", "binary", "raw"};

static void test_vti(void)
{
    char what[64];
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "fields");
    /* 2D, 256 x 128: each scalar array exactly one compression block (the last block full),
     * the velocity three */
    c.dims = 2;
    c.nx = 256;
    c.ny = 128;
    c.lo[0] = -1;
    c.hi[0] = 2;
    c.hi[1] = 0.5;
    kedr_dsmc_fields f;
    make_fields(&f, c.nx, c.ny, 1, 0, 11);
    for (int k = 0; k < 3; k++) {
        c.vtk_format = formats[k];
        snprintf(what, sizeof what, "%s-2d", format_name[k]);
        check_vti(&c, &f, what);
    }
    kedr_dsmc_fields_free(&f);
    /* 3D, 41 x 29 x 37 cells: blocks end off a block boundary */
    c.dims = 3;
    c.nx = 41;
    c.ny = 29;
    c.nz = 37;
    c.lo[2] = -0.3;
    c.hi[2] = 0.4;
    c.nspecies = 3; /* a mixture: its species' densities and fractions too */
    const char *names[3] = {"N2", "O", "NO"};
    for (int k = 0; k < c.nspecies; k++)
        snprintf(c.species[k].name, sizeof c.species[k].name, "%s", names[k]);
    make_fields(&f, c.nx, c.ny, c.nz, c.nspecies, 12);
    for (int k = 0; k < 3; k++) {
        c.vtk_format = formats[k];
        snprintf(what, sizeof what, "%s-3d", format_name[k]);
        check_vti(&c, &f, what);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/mismatch.vti", dir);
    f.nspecies = 2; /* fields of another gas */
    TU_CHECK(kedr_dsmc_write_vti(&c, &f, path) == KEDR_ERR_INVALID &&
                 strstr(kedr_last_error(), "fields of 2 species densities for a case of 3"),
             "fields of 2 species for a case of 3 refused: %s", kedr_last_error());
    f.nspecies = 3;
    /* before any sample every field is missing */
    f.samples = 0;
    c.vtk_format = KEDR_DSMC_VTK_BINARY;
    snprintf(path, sizeof path, "%s/none.vti", dir);
    TU_OK(kedr_dsmc_write_vti(&c, &f, path));
    vtk_file v;
    read_file(path, &v);
    size_t bytes = 0;
    const char *tag = find_array(&v, "particles_per_cell");
    double *got = tag ? (double *)appended(&v, tag, &bytes) : NULL;
    size_t nan = 0;
    for (size_t i = 0; got && i < bytes / 8; i++)
        nan += isnan(got[i]) != 0;
    TU_CHECK(got && bytes == 8 * (size_t)41 * 29 * 37 && nan == bytes / 8,
             "no samples: %zu of %zu values NaN", nan, bytes / 8);
    free(got);
    free(v.text);
    kedr_dsmc_fields_free(&f);
}

/* ---- surfaces ----------------------------------------------------------------------------- */

static void make_surface(kedr_dsmc_surface *s, size_t ne, int three, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->nelem = ne;
    s->dims = three ? 3 : 2;
    s->nbodies = 2;
    double *block = malloc(ne * (26 * sizeof(double) + sizeof(int)) + 8);
    double **cols[14] = {&s->x, &s->y, &s->nx, &s->ny, &s->length, &s->hits, &s->pressure,
                         &s->shear, &s->heat_flux, &s->cp, &s->cf, &s->ch, &s->z, &s->nz};
    for (int k = 0; k < 14; k++) {
        *cols[k] = block + (size_t)k * ne;
        for (size_t e = 0; e < ne; e++)
            (*cols[k])[e] = tu_uniform(&seed) * 3 - 1;
    }
    s->corners = three ? block + 14 * ne : NULL;
    for (size_t i = 0; three && i < 12 * ne; i++)
        s->corners[i] = tu_uniform(&seed);
    for (size_t e = 0; !three && e < ne; e++)
        s->z[e] = s->nz[e] = 0;
    s->body = (int *)(block + 26 * ne);
    for (size_t e = 0; e < ne; e++)
        s->body[e] = e % 3 == 0;
    if (ne > 2)
        s->cp[1] = NAN; /* q_inf = 0 makes coefficients NaN */
}

static void check_vtp(kedr_dsmc_surface *s, const char *what)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.vtp", dir, what);
    TU_OK(kedr_dsmc_write_surface_vtp(s, path));
    vtk_file v;
    TU_CHECK(read_file(path, &v), "%s: cannot read %s", what, path);
    int three = s->dims == 3;
    size_t ne = s->nelem, per = three ? 4 : 2;
    char count[96];
    snprintf(count, sizeof count, "NumberOfPoints=\"%zu\"", per * ne);
    TU_CHECK(strstr(v.text, count) && strstr(v.text, three ? "<Polys>" : "<Lines>"),
             "%s: no %s or cells", what, count);
    int zip = s->vtk_format == KEDR_DSMC_VTK_BINARY && kedr_dsmc_vtk_compressed();
    TU_CHECK(v.compressed == zip && (s->vtk_format == KEDR_DSMC_VTK_ASCII) == !v.base,
             "%s: compressed %d, appended data %p", what, v.compressed, (const void *)v.base);
    double *pts = malloc((3 * per * ne + 1) * sizeof *pts);
    int64_t *ids = malloc((per * ne + 1) * sizeof *ids);
    int32_t *body = malloc((ne + 1) * sizeof *body);
    for (size_t e = 0; e < ne; e++) {
        if (three) {
            memcpy(pts + 12 * e, s->corners + 12 * e, 12 * sizeof *pts);
            continue;
        }
        double tx = -s->ny[e] * 0.5 * s->length[e], ty = s->nx[e] * 0.5 * s->length[e];
        double q[6] = {s->x[e] - tx, s->y[e] - ty, 0, s->x[e] + tx, s->y[e] + ty, 0};
        memcpy(pts + 6 * e, q, sizeof q);
    }
    check_array(&v, NULL, "Float64", 3, pts, 3 * per * ne, 8, what);
    for (size_t i = 0; i < per * ne; i++)
        ids[i] = (int64_t)i;
    check_array(&v, "connectivity", "Int64", 1, ids, per * ne, 8, what);
    for (size_t e = 0; e < ne; e++)
        ids[e] = (int64_t)(per * (e + 1));
    check_array(&v, "offsets", "Int64", 1, ids, ne, 8, what);
    struct {
        const char *name;
        const double *v;
    } cols[] = {{"cp", s->cp},       {"cf", s->cf},         {"ch", s->ch},
                {"pressure", s->pressure}, {"shear", s->shear}, {"heat_flux", s->heat_flux},
                {"hits_per_step", s->hits}};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
        check_array(&v, cols[k].name, "Float64", 1, cols[k].v, ne, 8, what);
    for (size_t e = 0; e < ne; e++) {
        pts[3 * e] = s->nx[e];
        pts[3 * e + 1] = s->ny[e];
        pts[3 * e + 2] = three ? s->nz[e] : 0;
        body[e] = s->body[e] + 1;
    }
    check_array(&v, "normal", "Float64", 3, pts, 3 * ne, 8, what);
    check_array(&v, "body", "Int32", 1, body, ne, 4, what);
    free(pts);
    free(ids);
    free(body);
    free(v.text);
}

static void test_vtp(void)
{
    kedr_dsmc_surface s;
    size_t sizes[3] = {0, 1, 20001}; /* 20001 elements: points past one compression block */
    for (int k = 0; k < 3; k++)
        for (int three = 0; three < 2; three++) {
            make_surface(&s, sizes[k], three, 20 + k);
            char what[64];
            for (int f = 0; f < 3; f++) {
                s.vtk_format = formats[f];
                snprintf(what, sizeof what, "%s-%dd-%zu", format_name[f], three ? 3 : 2,
                         sizes[k]);
                check_vtp(&s, what);
            }
            kedr_dsmc_surface_free(&s);
        }
}

/* The reader above must see a changed value: a test that cannot fail is no test. */
static void test_reader_catches(void)
{
    kedr_dsmc_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "flip");
    c.dims = 2;
    c.nx = 9;
    c.ny = 4;
    c.hi[0] = c.hi[1] = 1;
    c.vtk_format = KEDR_DSMC_VTK_BINARY;
    kedr_dsmc_fields f;
    make_fields(&f, c.nx, c.ny, 1, 0, 5);
    char path[512];
    snprintf(path, sizeof path, "%s/flip.vti", dir);
    TU_OK(kedr_dsmc_write_vti(&c, &f, path));
    vtk_file v;
    read_file(path, &v);
    const char *tag = find_array(&v, "particles_per_cell");
    size_t bytes = 0;
    double *got = tag ? (double *)appended(&v, tag, &bytes) : NULL;
    double changed = f.particles[3];
    f.particles[3] = nextafter(changed, INFINITY); /* one ulp */
    TU_CHECK(got && bytes == 8 * 36 && memcmp(got, f.particles, bytes) != 0 &&
                 (f.particles[3] = changed, memcmp(got, f.particles, bytes) == 0),
             "the reader does not tell one ulp apart");
    free(got);
    free(v.text);
    kedr_dsmc_fields_free(&f);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr_test_dsmc_vtk_%d", (int)getpid());
    TU_CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    test_vti();
    test_vtp();
    test_reader_catches();
    tu_remove_dir(dir);
    return tu_finish("test_dsmc_vtk");
}
