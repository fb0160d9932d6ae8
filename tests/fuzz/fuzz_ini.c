/* The case-file parser on any text: sections, keys, values, comments, every typed getter on
 * whatever keys the text holds, required names that may be absent or misspelled, and now and then
 * the same text read back from a file. Seeds include many keys and long lines. */
#include "fuzz.h"

#include "kedr/ini.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every getter on the names a module would ask for, some required, then the unused-name check. */
static void use(kedr_ini *ini)
{
    static const char *const names[] = {"inflow", "outflow", "wall", NULL};
    double d, list[8];
    int64_t v;
    int b, k, n;
    const char *s;
    for (int i = 0; i < kedr_ini_sections(ini); i++) {
        const char *sec = kedr_ini_section(ini, i);
        kedr_ini_double(ini, sec, "x", 0, -1e300, 1e300, &d);
        kedr_ini_int(ini, sec, "n", 0, -100, 100, &v);
        kedr_ini_bool(ini, sec, "flag", 0, &b);
        kedr_ini_string(ini, sec, "name", 0, &s);
        kedr_ini_choice(ini, sec, "kind", 0, names, &k);
        kedr_ini_doubles(ini, sec, "points", 0, -1e9, 1e9, list, 8, &n);
        kedr_ini_double(ini, sec, "temperature", KEDR_INI_REQUIRED, 0, 1e9, &d);
        kedr_ini_line(ini, sec, "velocity_x");
    }
    kedr_ini_has_section(ini, "grid");
    kedr_ini_int(ini, "freestream", "number_density", KEDR_INI_REQUIRED, 0, 100, &v);
    kedr_ini_fail(ini, "freestream", "velocity_x", "checked across keys");
    kedr_ini_finish(ini);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    kedr_ini *ini = NULL;
    if (kedr_ini_parse(text, "fuzz.ini", &ini) == KEDR_OK) {
        use(ini);
        kedr_ini_free(ini);
    }
    /* One input in 16 also through a file, so that kedr_ini_load sees NUL bytes and the rest. */
    const char *path = size % 16 == 0 ? kedr_fuzz_write("case.ini", data, size) : NULL;
    if (path && kedr_ini_load(path, &ini) == KEDR_OK) {
        use(ini);
        kedr_ini_free(ini);
    }
    free(text);
    return 0;
}

/* A case of many keys in many sections, and one of long lines (a key, a value, a comment). */
static void add_large(void (*add)(const void *data, size_t size))
{
    static char many[40000], lines[40000];
    size_t len = 0;
    for (int i = 0; i < 1000 && len + 64 < sizeof many; i++)
        len += (size_t)snprintf(many + len, sizeof many - len, "%s[s%d]\nkey_%d = %d.5\n",
                                i % 25 ? "" : "\n", i / 25 * 1000 + i, i, i);
    add(many, len);
    len = (size_t)snprintf(lines, sizeof lines, "[a]\npoints = ");
    while (len + 100 < sizeof lines / 2)
        len += (size_t)snprintf(lines + len, sizeof lines - len, "%zu, ", len);
    len += (size_t)snprintf(lines + len, sizeof lines - len, "\n# ");
    while (len + 100 < sizeof lines)
        lines[len++] = 'k';
    len += (size_t)snprintf(lines + len, sizeof lines - len, "\nx = 1\n");
    add(lines, len);
}

void kedr_fuzz_seeds(void (*add)(const void *data, size_t size))
{
    static const char *texts[] = {
        "[a]\nx = 1.5\nn = 3\nflag = true\nname = hello\nkind = outflw\npoints = 1 2, 3\n",
        "# comment\n[b]\nx = 1e-3 ; trailing\n[c]\nname = \"quoted value\"\nn = -7\n",
        "[grid]\nnx = 50\nny = 25\n[run]\ndt = 2e-6\nsteps = 200\n",
        "[freestrem]\nnumber_density = 1\n[b]\ntemperatur = 300\nvelocity_y = 2\n",
        "[freestream]\nnumber_densty = 1\n[grid]\ntemperature = 3\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        add(texts[i], strlen(texts[i]));
    add_large(add);
}
