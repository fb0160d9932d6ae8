/* Shared by both builds of the harnesses: a private directory for readers that take a path. */
#define _XOPEN_SOURCE 700
#include "fuzz.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[4096];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_dir(void) { nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

const char *kedr_fuzz_dir(void)
{
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/kedr-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            dir[0] = 0;
            return NULL;
        }
        atexit(remove_dir);
    }
    return dir;
}

const char *kedr_fuzz_write(const char *name, const void *data, size_t size)
{
    static char path[4200];
    if (!kedr_fuzz_dir())
        return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t w = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || w != size)
        return NULL;
    return path;
}
