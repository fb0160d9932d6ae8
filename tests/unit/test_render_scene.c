/* render scenes and files: every bad scene or OBJ file is refused with its file, line and what
 * was expected; NaN/inf and zero-area faces are skipped and counted; zero-area lights refused;
 * the built-in meshes have the sizes they should; PNG files are well formed (chunk CRCs,
 * stored deflate blocks that give back the image, Adler-32). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "kedr/render.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        exit(1);
}

#define HEAD "[camera]\neye = 0 0 5\nlook_at = 0 0 0\n[material.m]\n"

/* Loading NAME with TEXT must fail with status want and a message holding each of the words. */
static void refused(const char *what, const char *text, kedr_status want, const char *w1,
                    const char *w2)
{
    char path[256];
    put("s.ini", text);
    snprintf(path, sizeof path, "%s/s.ini", dir);
    kedr_render_scene *s = NULL;
    kedr_status st = kedr_render_scene_load(path, &s);
    const char *e = kedr_last_error();
    TU_CHECK(st == want && !s && strstr(e, w1) && (!w2 || strstr(e, w2)),
             "%s: got %s '%s', expected %s naming '%s' and '%s'", what, kedr_status_name(st), e,
             kedr_status_name(want), w1, w2 ? w2 : "");
    kedr_render_scene_destroy(s);
}

static kedr_render_scene *loaded(const char *text)
{
    char path[256];
    put("s.ini", text);
    snprintf(path, sizeof path, "%s/s.ini", dir);
    kedr_render_scene *s = NULL;
    TU_OK(kedr_render_scene_load(path, &s));
    return s;
}

static void check_errors(void)
{
    char missing[256];
    snprintf(missing, sizeof missing, "%s/none.ini", dir);
    kedr_render_scene *s = NULL;
    TU_CHECK(kedr_render_scene_load(missing, &s) == KEDR_ERR_IO && strstr(kedr_last_error(),
             "none.ini"), "a missing scene named: %s", kedr_last_error());
    refused("no camera", "[material.m]\n", KEDR_ERR_PARSE, "camera", NULL);
    refused("bad vector", HEAD "[sphere.a]\ncenter = 1 2\nradius = 1\nmaterial = m\n",
            KEDR_ERR_PARSE, "s.ini:6", "expected 3");
    refused("unknown key", HEAD "colr = 1\n", KEDR_ERR_PARSE, "s.ini:5", "colr");
    refused("unknown material", HEAD "[sphere.a]\ncenter = 0 0 0\nradius = 1\nmaterial = q\n",
            KEDR_ERR_PARSE, "s.ini:8", "material.q");
    refused("negative radius", HEAD "[sphere.a]\ncenter = 0 0 0\nradius = -1\nmaterial = m\n",
            KEDR_ERR_PARSE, "s.ini:7", "radius");
    refused("zero-area light", HEAD "[light.a]\ncorner = 0 1 0\nedge1 = 1 0 0\nedge2 = 2 0 0\n",
            KEDR_ERR_PARSE, "s.ini:8", "zero area");
    refused("camera along up", "[camera]\neye = 0 0 0\nlook_at = 0 5 0\n", KEDR_ERR_PARSE,
            "camera", "parallel");
    refused("energy", HEAD "reflection = 0.7\ntransmission = 0.5\n", KEDR_ERR_PARSE, "s.ini:6",
            "at most 1");
    refused("unknown section", HEAD "[cube.a]\n", KEDR_ERR_PARSE, "s.ini:5", "unknown section");
    refused("missing OBJ", HEAD "[mesh.a]\nfile = gone.obj\nmaterial = m\n", KEDR_ERR_PARSE,
            "s.ini:6", "gone.obj");
    put("bad1.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n");
    refused("vertex out of range", HEAD "[mesh.a]\nfile = bad1.obj\nmaterial = m\n",
            KEDR_ERR_PARSE, "bad1.obj:4", "vertex 4");
    put("bad2.obj", "# a comment\nv 0 0\n");
    refused("short vertex", HEAD "[mesh.a]\nfile = bad2.obj\nmaterial = m\n", KEDR_ERR_PARSE,
            "bad2.obj:2", "v x y z");
    put("bad3.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n");
    refused("short face", HEAD "[mesh.a]\nfile = bad3.obj\nmaterial = m\n", KEDR_ERR_PARSE,
            "bad3.obj:3", "fewer than 3");
    put("bad4.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl gold\nf 1 2 3\n");
    refused("usemtl unknown", HEAD "[mesh.a]\nfile = bad4.obj\nmaterial = m\n", KEDR_ERR_PARSE,
            "bad4.obj:4", "material.gold");
    put("bad5.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/x 2 3\n");
    refused("bad reference", HEAD "[mesh.a]\nfile = bad5.obj\nmaterial = m\n", KEDR_ERR_PARSE,
            "bad5.obj:4", "malformed");
}

static void check_skips(void)
{
    /* a quad (2 triangles), a triangle with a NaN vertex, one with an infinite vertex, a
     * collinear one; negative indices and v/vt/vn references */
    put("ok.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv nan 0 0\nv 0 inf 0\nv 2 0 0\n"
                  "vt 0 0\nvn 0 0 1\nf 1/1/1 2/1/1 3/1/1 4/1/1\nf 1 2 5\nf -7 -6 -2\n"
                  "f 1//1 2//1 7//1\ng rest\ns off\n");
    kedr_render_scene *s = loaded(HEAD "[mesh.a]\nfile = ok.obj\nmaterial = m\n");
    if (s) {
        kedr_render_scene_info si;
        kedr_render_scene_get_info(s, &si);
        TU_CHECK(si.triangles == 2 && si.skipped_nonfinite == 2 && si.skipped_degenerate == 1,
                 "OBJ: %zu triangles, %zu non-finite and %zu degenerate skipped (want 2, 2, 1)",
                 si.triangles, si.skipped_nonfinite, si.skipped_degenerate);
        kedr_render_scene_destroy(s);
    }
    s = loaded(HEAD "[mesh.t]\nbuiltin = teapot\nlevel = 4\nmaterial = m\n"
                    "[light.a]\ncorner = 0 1 0\nedge1 = 1 0 0\nedge2 = 0 0 1\nsamples = 3\n"
                    "[light.b]\nposition = 1 2 3\n"
                    "[render]\nwidth = 64\nheight = 32\naccel = grid\n");
    if (s) {
        kedr_render_scene_info si;
        kedr_render_scene_get_info(s, &si);
        /* 32 patches of 4 x 4 quads, less the triangles the collapsed patch edges leave empty:
         * the lid's and the bottom's 4 + 4 patches each lose one triangle per quad on that edge */
        TU_CHECK(si.triangles == 32 * 32 - 8 * 4 && si.lights == 10 && si.width == 64 &&
                 si.height == 32 && si.accel == KEDR_ACCEL_GRID,
                 "teapot level 4: %zu triangles (want %d), %zu lights, %dx%d", si.triangles,
                 32 * 32 - 8 * 4, si.lights, si.width, si.height);
        kedr_render_scene_destroy(s);
    }
    s = loaded(HEAD "[mesh.t]\nbuiltin = terrain\ntriangles = 5000\nmaterial = m\n"
                    "[mesh.u]\nbuiltin = stadium\nsegments = 16\nmaterial = m\n");
    if (s) {
        kedr_render_scene_info si;
        kedr_render_scene_get_info(s, &si);
        size_t m = (size_t)sqrt(5000 / 2.0) + 1;
        TU_CHECK(si.triangles == 2 * (m - 1) * (m - 1) + 16 * 30 * 4,
                 "terrain + stadium: %zu triangles", si.triangles);
        kedr_render_scene_destroy(s);
    }
}

static uint32_t crc(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void check_png(void)
{
    const int w = 300, h = 231; /* rows of 901 bytes: the data span several 65535-byte blocks */
    float *rgb = tu_host_alloc((size_t)w * h * 3 * sizeof(float));
    for (int i = 0; i < w * h * 3; i++)
        rgb[i] = (float)(i % 97) / 96.0f * 1.2f - 0.1f;
    char path[256];
    snprintf(path, sizeof path, "%s/img.png", dir);
    TU_OK(kedr_render_write_png(path, rgb, w, h));
    FILE *f = fopen(path, "rb");
    unsigned char *b = tu_host_alloc(2000000);
    size_t n = f ? fread(b, 1, 2000000, f) : 0;
    if (f)
        fclose(f);
    TU_CHECK(n > 33 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0, "PNG signature");
    size_t at = 8, raw = 0, rows = (size_t)w * 3 + 1;
    int chunks = 0, crc_ok = 1, data_ok = 1;
    unsigned char *img = tu_host_alloc(rows * h);
    while (at + 12 <= n) {
        uint32_t len = be32(b + at);
        if (at + 12 + len > n)
            break;
        crc_ok &= crc(b + at + 4, len + 4) == be32(b + at + 8 + len);
        if (memcmp(b + at + 4, "IDAT", 4) == 0) {
            const unsigned char *z = b + at + 8;
            size_t k = 2;
            for (int last = 0; !last && k + 5 <= len;) {
                last = z[k] & 1;
                size_t l = z[k + 1] | z[k + 2] << 8, nl = z[k + 3] | z[k + 4] << 8;
                data_ok &= (z[k] & 6) == 0 && (l ^ nl) == 0xFFFF && raw + l <= rows * h;
                if (!data_ok)
                    break;
                memcpy(img + raw, z + k + 5, l);
                raw += l;
                k += 5 + l;
            }
            uint32_t a = 1, bb = 0;
            for (size_t i = 0; i < raw; i++) {
                a = (a + img[i]) % 65521;
                bb = (bb + a) % 65521;
            }
            data_ok &= k + 4 == len && be32(z + k) == (bb << 16 | a);
        }
        at += 12 + len;
        chunks++;
    }
    TU_CHECK(chunks == 3 && at == n && crc_ok, "PNG chunks: %d, CRCs %s", chunks,
             crc_ok ? "ok" : "wrong");
    TU_CHECK(data_ok && raw == rows * h, "PNG data: %zu of %zu bytes", raw, rows * h);
    /* pixel (x, y) channel c went through the sRGB curve */
    int bad = 0;
    for (int y = 0; y < h && data_ok; y++)
        for (int i = 0; i < w * 3; i++) {
            float c = rgb[(size_t)y * w * 3 + i];
            double s = c <= 0 ? 0 : c >= 1 ? 1 : c <= 0.0031308 ? 12.92 * c
                                                   : 1.055 * pow(c, 1 / 2.4) - 0.055;
            bad += abs(img[(size_t)y * rows + 1 + i] - (int)lround(s * 255)) > 1 ||
                   img[(size_t)y * rows] != 0;
        }
    TU_CHECK(bad == 0, "PNG pixels: %d wrong", bad);
    TU_CHECK(kedr_render_write_png(path, rgb, 0, 5) == KEDR_ERR_INVALID, "a 0 x 5 image refused");
    free(img);
    free(b);
    free(rgb);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kedr_render_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    kedr_log_set_level(KEDR_LOG_ERROR);
    check_errors();
    check_skips();
    check_png();
    tu_remove_dir(dir);
    return tu_finish("test_render_scene");
}
