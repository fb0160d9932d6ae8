/* The case-file parser on any text: sections, keys, values, comments, and every typed getter
 * on whatever keys the text holds. */
#include "fuzz.h"

#include "kedr/ini.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    kedr_ini *ini = NULL;
    if (kedr_ini_parse(text, "fuzz.ini", &ini) == KEDR_OK) {
        for (int i = 0; i < kedr_ini_sections(ini); i++) {
            const char *sec = kedr_ini_section(ini, i);
            double d, list[8];
            int64_t v;
            int b, k, n;
            const char *s;
            static const char *const names[] = {"inflow", "outflow", "wall", NULL};
            kedr_ini_double(ini, sec, "x", 0, -1e300, 1e300, &d);
            kedr_ini_int(ini, sec, "n", 0, -100, 100, &v);
            kedr_ini_bool(ini, sec, "flag", 0, &b);
            kedr_ini_string(ini, sec, "name", 0, &s);
            kedr_ini_choice(ini, sec, "kind", 0, names, &k);
            kedr_ini_doubles(ini, sec, "points", 0, -1e9, 1e9, list, 8, &n);
        }
        kedr_ini_finish(ini);
        kedr_ini_free(ini);
    }
    free(text);
    return 0;
}

void kedr_fuzz_seeds(void (*add)(const void *data, size_t size))
{
    static const char *texts[] = {
        "[a]\nx = 1.5\nn = 3\nflag = true\nname = hello\nkind = outflw\npoints = 1 2, 3\n",
        "# comment\n[b]\nx = 1e-3 ; trailing\n[c]\nname = \"quoted value\"\nn = -7\n",
        "[grid]\nnx = 50\nny = 25\n[run]\ndt = 2e-6\nsteps = 200\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        add(texts[i], strlen(texts[i]));
}
