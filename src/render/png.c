/* render: 8-bit RGB PNG files (the PNG specification, ISO/IEC 15948:2004) written without a
 * compression library: the image data go in stored (uncompressed) deflate blocks (RFC 1951,
 * section 3.2.4) inside a zlib stream (RFC 1950), with CRC-32 per chunk and Adler-32 over the
 * data. Files are about 3 bytes a pixel. */
#include "core/internal.h"
#include "kedr/render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t crc_table[256];

static void crc_init(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A chunk: length, type, data, CRC of type and data. */
static int chunk(FILE *f, const char *type, const unsigned char *data, size_t n)
{
    unsigned char head[8];
    put32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    uint32_t crc = crc_update(0xFFFFFFFFu, head + 4, 4);
    crc = crc_update(crc, data, n) ^ 0xFFFFFFFFu;
    unsigned char tail[4];
    put32(tail, crc);
    return fwrite(head, 1, 8, f) == 8 && (n == 0 || fwrite(data, 1, n, f) == n) &&
           fwrite(tail, 1, 4, f) == 4;
}

static unsigned char encode(float c)
{
    if (!(c > 0))
        return 0;
    if (c >= 1)
        return 255;
    float s = c <= 0.0031308f ? 12.92f * c : 1.055f * powf(c, 1 / 2.4f) - 0.055f; /* sRGB */
    return (unsigned char)(s * 255 + 0.5f);
}

kedr_status kedr_render_write_png(const char *path, const float *rgb, int width, int height)
{
    if (!path || !rgb || width < 1 || height < 1 || width > 65536 || height > 65536)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_render_write_png: a NULL argument or a size "
                         "%dx%d outside 1..65536", width, height);
    crc_init();
    size_t row = (size_t)width * 3 + 1, raw = row * height;
    size_t blocks = (raw + 65534) / 65535;
    size_t n = 2 + raw + blocks * 5 + 4;
    unsigned char *data = malloc(n), *img = malloc(raw);
    if (!data || !img) {
        free(data);
        free(img);
        return kedr_fail(KEDR_ERR_NOMEM, "kedr_render_write_png: out of host memory (%zu bytes)",
                         n + raw);
    }
    for (int y = 0; y < height; y++) {
        unsigned char *r = img + (size_t)y * row;
        r[0] = 0; /* filter: none */
        for (size_t i = 0; i < (size_t)width * 3; i++)
            r[1 + i] = encode(rgb[(size_t)y * width * 3 + i]);
    }
    size_t k = 0;
    data[k++] = 0x78; /* zlib: deflate, 32 KB window; 0x7801 is a multiple of 31 */
    data[k++] = 0x01;
    uint32_t a = 1, b = 0;
    for (size_t off = 0; off < raw; off += 65535) {
        size_t len = raw - off < 65535 ? raw - off : 65535;
        data[k++] = off + len == raw; /* BFINAL, BTYPE = 00 */
        data[k++] = (unsigned char)len;
        data[k++] = (unsigned char)(len >> 8);
        data[k++] = (unsigned char)~len;
        data[k++] = (unsigned char)(~len >> 8);
        memcpy(data + k, img + off, len);
        for (size_t i = 0; i < len; i++) {
            a = (a + img[off + i]) % 65521;
            b = (b + a) % 65521;
        }
        k += len;
    }
    put32(data + k, b << 16 | a);
    k += 4;
    unsigned char ihdr[13];
    put32(ihdr, (uint32_t)width);
    put32(ihdr + 4, (uint32_t)height);
    ihdr[8] = 8;  /* bits per sample */
    ihdr[9] = 2;  /* truecolour */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    kedr_file_writer w;
    kedr_status st = kedr_file_begin(&w, path);
    if (st == KEDR_OK) {
        FILE *f = KEDR_FILE(&w);
        static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
        if (fwrite(sig, 1, 8, f) != 8 || !chunk(f, "IHDR", ihdr, 13) ||
            !chunk(f, "IDAT", data, k) || !chunk(f, "IEND", NULL, 0)) {
            kedr_file_abort(&w);
            st = kedr_fail(KEDR_ERR_IO, "%s: write failed", path);
        } else {
            st = kedr_file_commit(&w);
        }
    }
    free(data);
    free(img);
    return st;
}
