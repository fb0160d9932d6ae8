/* The appended binary blocks of the VTK XML files kedr dsmc writes (vtk.h). */
#include "vtk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef KEDR_HAVE_ZLIB
#include <zlib.h>
#endif

static void put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8); /* the host's byte order, which the file's byte_order names */
}

/* A raw block: its byte count, then the bytes. */
static kedr_status encode_raw(dsmc_vtk_array *a, const void *data, size_t bytes)
{
    a->blob = malloc(8 + bytes);
    if (!a->blob)
        return kedr_fail(KEDR_ERR_NOMEM, "VTK output: out of host memory (%zu bytes)", bytes);
    put_u64(a->blob, bytes);
    if (bytes)
        memcpy(a->blob + 8, data, bytes);
    a->bytes = 8 + bytes;
    return KEDR_OK;
}

int dsmc_vtk_compresses(kedr_dsmc_vtk_format format)
{
#ifdef KEDR_HAVE_ZLIB
    return format == KEDR_DSMC_VTK_BINARY;
#else
    (void)format;
    return 0;
#endif
}

#ifdef KEDR_HAVE_ZLIB
/* zlib level 1: on the fields of seed test 2 level 6 saved 2% more and took 1.6 times as long
 * (docs/dsmc.md). */
#define DSMC_VTK_LEVEL 1

kedr_status dsmc_vtk_encode(dsmc_vtk_array *a, kedr_dsmc_vtk_format format, const void *data,
                            size_t bytes)
{
    if (!dsmc_vtk_compresses(format))
        return encode_raw(a, data, bytes);
    size_t nb = (bytes + DSMC_VTK_BLOCK - 1) / DSMC_VTK_BLOCK;
    uLong bound = compressBound((uLong)DSMC_VTK_BLOCK);
    unsigned char *work = malloc(nb * bound + 1);
    uLongf *len = malloc((nb + 1) * sizeof *len);
    a->blob = NULL;
    if (!work || !len) {
        free(work);
        free(len);
        return kedr_fail(KEDR_ERR_NOMEM, "VTK output: out of host memory (%zu bytes)", bytes);
    }
    int failed = 0;
    /* the blocks are independent: compressed at once, each into its own slot */
#pragma omp parallel for schedule(dynamic) reduction(| : failed) if (nb > 1)
    for (long b = 0; b < (long)nb; b++) {
        size_t at = (size_t)b * DSMC_VTK_BLOCK;
        size_t n = bytes - at < DSMC_VTK_BLOCK ? bytes - at : DSMC_VTK_BLOCK;
        len[b] = bound;
        failed |= compress2(work + (size_t)b * bound, &len[b], (const Bytef *)data + at,
                            (uLong)n, DSMC_VTK_LEVEL) != Z_OK;
    }
    size_t total = 8 * (3 + nb);
    for (size_t b = 0; b < nb; b++)
        total += len[b];
    a->blob = failed ? NULL : malloc(total);
    if (!a->blob) {
        free(work);
        free(len);
        return failed ? kedr_fail(KEDR_ERR_IO, "VTK output: zlib failed to compress")
                      : kedr_fail(KEDR_ERR_NOMEM, "VTK output: out of host memory (%zu bytes)",
                                  total);
    }
    put_u64(a->blob, nb);
    put_u64(a->blob + 8, DSMC_VTK_BLOCK);
    put_u64(a->blob + 16, bytes % DSMC_VTK_BLOCK); /* 0: the last block is full */
    unsigned char *p = a->blob + 8 * (3 + nb);
    for (size_t b = 0; b < nb; b++) {
        put_u64(a->blob + 8 * (3 + b), len[b]);
        memcpy(p, work + b * bound, len[b]);
        p += len[b];
    }
    a->bytes = total;
    free(work);
    free(len);
    return KEDR_OK;
}
#else
kedr_status dsmc_vtk_encode(dsmc_vtk_array *a, kedr_dsmc_vtk_format format, const void *data,
                            size_t bytes)
{
    (void)format;
    return encode_raw(a, data, bytes);
}
#endif

void dsmc_vtk_file_attributes(FILE *out, kedr_dsmc_vtk_format format)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    fprintf(out, " byte_order=\"%s\" header_type=\"UInt64\"", first ? "LittleEndian" : "BigEndian");
    if (dsmc_vtk_compresses(format))
        fprintf(out, " compressor=\"vtkZLibDataCompressor\"");
}

void dsmc_vtk_tag(FILE *out, const dsmc_vtk_array *a, size_t *offset, const char *indent)
{
    fprintf(out, "%s<DataArray type=\"%s\"", indent, a->type);
    if (a->name)
        fprintf(out, " Name=\"%s\"", a->name);
    if (a->ncomp > 1)
        fprintf(out, " NumberOfComponents=\"%d\"", a->ncomp);
    fprintf(out, " format=\"appended\" offset=\"%zu\"/>\n", *offset);
    *offset += a->bytes;
}

void dsmc_vtk_appended(FILE *out, const dsmc_vtk_array *a, int n)
{
    fprintf(out, "  <AppendedData encoding=\"raw\">\n   _");
    for (int k = 0; k < n; k++)
        fwrite(a[k].blob, 1, a[k].bytes, out);
    fprintf(out, "\n  </AppendedData>\n");
}

void dsmc_vtk_free(dsmc_vtk_array *a, int n)
{
    for (int k = 0; k < n; k++) {
        free(a[k].blob);
        a[k].blob = NULL;
    }
}
