/* The DSMC case loader on any text: the input is written as case.ini beside a copy of the shipped
 * species.ini and loaded; a case that loads is checked again and its work estimated (nothing
 * runs). Seeds: every shipped case file. */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include "kedr/dsmc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CASES KEDR_SOURCE_DIR "/cases/dsmc"

/* Writes the shipped species file into the fuzz directory once; 0 when it cannot. */
static int species_ready(void)
{
    static int ready = -1;
    if (ready >= 0)
        return ready;
    char *text = NULL;
    size_t len = 0;
    ready = kedr_file_read(CASES "/species.ini", (size_t)1 << 20, &text, &len) == KEDR_OK &&
            kedr_fuzz_write("species.ini", text, len) != NULL;
    free(text);
    return ready;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kedr_log_set_level(KEDR_LOG_ERROR); /* dt warnings of the mutants are not findings */
    if (!species_ready())
        return 0;
    const char *path = kedr_fuzz_write("case.ini", data, size);
    kedr_dsmc_case c;
    if (!path || kedr_dsmc_case_load(path, &c) != KEDR_OK)
        return 0;
    kedr_dsmc_work w;
    if (kedr_dsmc_case_check(&c) == KEDR_OK && kedr_dsmc_estimate(&c, &w) == KEDR_OK &&
        !(w.particles >= 0 && w.candidates >= 0 && w.bytes_cpu >= 0))
        abort(); /* an estimate of a checked case is a number */
    kedr_dsmc_steady_window(&c);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* In name order, so that input I of seed S is the same on every machine. */
void kedr_fuzz_seeds(void (*add)(const void *data, size_t size))
{
    DIR *dir = opendir(CASES);
    if (!dir)
        return;
    char *names[64];
    int count = 0;
    for (struct dirent *e; count < 64 && (e = readdir(dir)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".ini") == 0 && strcmp(e->d_name, "species.ini"))
            names[count++] = strdup(e->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)count, sizeof *names, by_name);
    for (int i = 0; i < count; i++) {
        char path[1024], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", CASES, names[i]);
        if (names[i] && kedr_file_read(path, (size_t)1 << 20, &text, &len) == KEDR_OK)
            add(text, len);
        free(text);
        free(names[i]);
    }
}
