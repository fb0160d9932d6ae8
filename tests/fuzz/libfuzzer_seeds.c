/* In the libFuzzer build: an empty corpus directory named first on the command line is filled
 * with the harness's seeds before the campaign starts. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static const char *corpus;
static int written;

static void write_seed(const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%03d", corpus, written++);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    for (int i = 1; i < *argc; i++) {
        const char *a = (*argv)[i];
        if (a[0] == '-')
            continue;
        DIR *d = opendir(a);
        if (!d)
            return 0;
        int empty = 1;
        for (struct dirent *e; (e = readdir(d));)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                empty = 0;
        closedir(d);
        if (empty) {
            corpus = a;
            kedr_fuzz_seeds(write_seed);
        }
        return 0;
    }
    return 0;
}
