/* VTK XML files with appended binary data (docs/dsmc.md, Output): each array is one block after
 * the XML, raw (a UInt64 byte count, then the bytes) or, where kedr has zlib, compressed in
 * vtkZLibDataCompressor's layout (UInt64 block count, block size, last block's size, each
 * block's compressed size, then the deflated blocks). Values in the host's byte order, which
 * the file names. */
#ifndef DSMC_VTK_H
#define DSMC_VTK_H

#include "kedr/dsmc.h"

#include <stdio.h>

/* One array: its XML attributes and its encoded block. */
typedef struct {
    const char *name; /* NULL: no Name attribute (Points) */
    const char *type; /* Float64, Int64, Int32 */
    int ncomp;
    unsigned char *blob;
    size_t bytes;
} dsmc_vtk_array;

/* Bytes of uncompressed data in a zlib block (VTK's readers take any size). */
#define DSMC_VTK_BLOCK ((size_t)1 << 18)

/* 1 when files of this format are compressed: KEDR_DSMC_VTK_BINARY where kedr has zlib. */
int dsmc_vtk_compresses(kedr_dsmc_vtk_format format);
/* Encodes bytes of data into a->blob, compressed when the format is. */
kedr_status dsmc_vtk_encode(dsmc_vtk_array *a, kedr_dsmc_vtk_format format, const void *data,
                            size_t bytes);
/* The attributes of <VTKFile> after type and version: byte order, header type, compressor. */
void dsmc_vtk_file_attributes(FILE *out, kedr_dsmc_vtk_format format);
/* <DataArray ... format="appended" offset="..."/> for a, at *offset, which it advances. */
void dsmc_vtk_tag(FILE *out, const dsmc_vtk_array *a, size_t *offset, const char *indent);
/* <AppendedData encoding="raw">_ and every array's block, in order. */
void dsmc_vtk_appended(FILE *out, const dsmc_vtk_array *a, int n);
void dsmc_vtk_free(dsmc_vtk_array *a, int n);

#endif
