/* Case files (kedr/ini.h): syntax, typed getters, ranges, unknown keys and suggestions,
 * misspelled required names, many keys, long lines and files that are not case files. The reader
 * runs on the host only, so this test has no back-end loop. */
#include "kedr/ini.h"
#include "test_util.h"

#include <fcntl.h>
#include <float.h>
#include <sys/stat.h>
#include <unistd.h>

/* Parsing must fail with KEDR_ERR_PARSE and a message containing every given fragment. */
static void expect_parse_error(const char *text, const char *frag1, const char *frag2)
{
    kedr_ini *ini = NULL;
    kedr_status s = kedr_ini_parse(text, "bad.ini", &ini);
    const char *msg = kedr_last_error();
    TU_CHECK(s == KEDR_ERR_PARSE && ini == NULL, "parse of <<%s>> -> %s", text,
             kedr_status_name(s));
    TU_CHECK(strstr(msg, frag1) != NULL, "message '%s' lacks '%s'", msg, frag1);
    if (frag2)
        TU_CHECK(strstr(msg, frag2) != NULL, "message '%s' lacks '%s'", msg, frag2);
    kedr_ini_free(ini);
}

static kedr_ini *parse_ok(const char *text)
{
    kedr_ini *ini = NULL;
    TU_OK(kedr_ini_parse(text, "case.ini", &ini));
    if (!ini) {
        fprintf(stderr, "cannot continue: %s\n", kedr_last_error());
        exit(1);
    }
    return ini;
}

static void check_msg(const char *frag)
{
    TU_CHECK(strstr(kedr_last_error(), frag) != NULL, "message '%s' lacks '%s'", kedr_last_error(),
             frag);
}

static void test_syntax(void)
{
    kedr_ini *ini = parse_ok("# a comment\n"
                             "; another\n"
                             "\n"
                             "[grid]   \n"
                             "  nx = 200   # inline comment\n"
                             "ny=100;x\n"
                             "[ freestream ]\r\n"
                             "temperature = 300\r\n"
                             "velocity_x = 7.5e3\n"
                             "name = N2\n"
                             "last = 5"); /* no final newline */
    double t = 0, u = 0, last = 0;
    int64_t nx = 0, ny = 0;
    const char *name = NULL;
    TU_OK(kedr_ini_int(ini, "grid", "nx", KEDR_INI_REQUIRED, 1, 1000000, &nx));
    TU_OK(kedr_ini_int(ini, "grid", "ny", KEDR_INI_REQUIRED, 1, 1000000, &ny));
    TU_OK(kedr_ini_double(ini, "freestream", "temperature", KEDR_INI_REQUIRED | KEDR_INI_LO_OPEN,
                          0, HUGE_VAL, &t));
    TU_OK(kedr_ini_double(ini, "freestream", "velocity_x", 0, -HUGE_VAL, HUGE_VAL, &u));
    TU_OK(kedr_ini_string(ini, "freestream", "name", KEDR_INI_REQUIRED, &name));
    TU_OK(kedr_ini_double(ini, "freestream", "last", 0, 0, 10, &last));
    TU_CHECK(nx == 200 && ny == 100, "nx %lld ny %lld", (long long)nx, (long long)ny);
    TU_CHECK(t == 300 && u == 7500 && last == 5, "t %g u %g last %g", t, u, last);
    TU_CHECK(name && strcmp(name, "N2") == 0, "name '%s'", name ? name : "(null)");
    TU_CHECK(kedr_ini_line(ini, "grid", "ny") == 6, "line of ny %d",
             kedr_ini_line(ini, "grid", "ny"));
    TU_CHECK(kedr_ini_line(ini, "freestream", NULL) == 7, "line of [freestream]");
    TU_CHECK(kedr_ini_sections(ini) == 2 && strcmp(kedr_ini_section(ini, 1), "freestream") == 0,
             "sections");
    TU_OK(kedr_ini_finish(ini));

    /* An optional key that is absent keeps the preset default; a required one is an error. */
    double dflt = 42;
    TU_OK(kedr_ini_double(ini, "grid", "dx", 0, 0, 1, &dflt));
    TU_CHECK(dflt == 42, "default overwritten: %g", dflt);
    TU_CHECK(kedr_ini_double(ini, "grid", "dx", KEDR_INI_REQUIRED, 0, 1, &dflt) == KEDR_ERR_PARSE,
             "missing required key accepted");
    check_msg("case.ini:4: [grid] lacks the required key 'dx'");
    TU_CHECK(kedr_ini_double(ini, "body", "x", KEDR_INI_REQUIRED, 0, 1, &dflt) == KEDR_ERR_PARSE,
             "missing section accepted");
    check_msg("missing section [body]");
    kedr_ini_free(ini);

    ini = parse_ok("");
    TU_CHECK(kedr_ini_sections(ini) == 0, "empty file has sections");
    TU_OK(kedr_ini_finish(ini));
    kedr_ini_free(ini);
}

static void test_malformed(void)
{
    expect_parse_error("[grid\nnx = 1\n", "bad.ini:1:", "closing ']'");
    expect_parse_error("[grid]\nnx 5\n", "bad.ini:2:", "neither '[section]' nor 'key = value'");
    expect_parse_error("[grid]\n= 5\n", "bad.ini:2:", "without a key");
    expect_parse_error("[grid]\nnx =   # nothing\n", "bad.ini:2:", "'nx' has no value");
    expect_parse_error("nx = 5\n[grid]\n", "bad.ini:1:", "before any [section]");
    expect_parse_error("[]\n", "bad.ini:1:", "empty section name");
    expect_parse_error("[gr id]\n", "bad.ini:1:", "character ' '");
    expect_parse_error("[grid]\nn x = 3\n", "bad.ini:2:", "character ' '");
    expect_parse_error("[grid]\nnx = 1\n\nnx = 2\n", "bad.ini:4: [grid] nx is given twice",
                       "first at line 2");
    expect_parse_error("[grid]\nnx = 1\n[run]\n[grid]\n", "bad.ini:4: section [grid] appears twice",
                       "first at line 1");
    kedr_ini *ini = (kedr_ini *)1;
    TU_CHECK(kedr_ini_parse(NULL, "x", &ini) == KEDR_ERR_INVALID && ini == NULL, "NULL text");
    TU_CHECK(kedr_ini_load("/nonexistent/dir/case.ini", &ini) == KEDR_ERR_IO, "missing file");
    check_msg("/nonexistent/dir/case.ini: cannot open");
}

static void test_values(void)
{
    kedr_ini *ini = parse_ok("[a]\n"
                             "neg = -1\n"
                             "zero = 0\n"
                             "big = 1e400\n"
                             "word = abc\n"
                             "half = 0.5x\n"
                             "frac = 2.5\n"
                             "flag = Yes\n"
                             "flag2 = off\n"
                             "flag3 = maybe\n"
                             "model = vhss\n"
                             "model2 = vss\n"
                             "model3 = banana\n"
                             "list = 1, 2 3,4\n"
                             "badlist = 1, x\n"
                             "longlist = 1 2 3 4\n"
                             "nan = nan\n");
    double v = 7;
    TU_CHECK(kedr_ini_double(ini, "a", "neg", 0, 0, HUGE_VAL, &v) == KEDR_ERR_PARSE && v == 7,
             "negative accepted for >= 0");
    check_msg("case.ini:2: [a] neg = -1: expected a number >= 0");
    TU_CHECK(kedr_ini_double(ini, "a", "zero", KEDR_INI_LO_OPEN, 0, HUGE_VAL, &v) == KEDR_ERR_PARSE,
             "zero accepted for > 0");
    check_msg("case.ini:3: [a] zero = 0: expected a number > 0");
    TU_OK(kedr_ini_double(ini, "a", "zero", 0, 0, HUGE_VAL, &v));
    TU_CHECK(v == 0, "zero read as %g", v);
    TU_CHECK(kedr_ini_double(ini, "a", "zero", KEDR_INI_LO_OPEN | KEDR_INI_HI_OPEN, -1, 0, &v) ==
                 KEDR_ERR_PARSE, "0 accepted in (-1, 0)");
    check_msg("expected a number in (-1, 0)");
    TU_CHECK(kedr_ini_double(ini, "a", "big", 0, -HUGE_VAL, HUGE_VAL, &v) == KEDR_ERR_PARSE,
             "overflow accepted");
    TU_CHECK(kedr_ini_double(ini, "a", "nan", 0, -HUGE_VAL, HUGE_VAL, &v) == KEDR_ERR_PARSE,
             "nan accepted");
    TU_CHECK(kedr_ini_double(ini, "a", "word", 0, -HUGE_VAL, HUGE_VAL, &v) == KEDR_ERR_PARSE,
             "word accepted as a number");
    check_msg("case.ini:5: [a] word = abc: expected a number");
    TU_CHECK(kedr_ini_double(ini, "a", "half", 0, -HUGE_VAL, HUGE_VAL, &v) == KEDR_ERR_PARSE,
             "trailing junk accepted");
    int64_t k = 3;
    TU_CHECK(kedr_ini_int(ini, "a", "frac", 0, 0, 10, &k) == KEDR_ERR_PARSE && k == 3,
             "2.5 accepted as an integer");
    check_msg("case.ini:7: [a] frac = 2.5: expected an integer from 0 to 10");
    TU_CHECK(kedr_ini_int(ini, "a", "neg", 0, 0, 10, &k) == KEDR_ERR_PARSE, "-1 in [0, 10]");
    TU_OK(kedr_ini_int(ini, "a", "neg", 0, -1, 10, &k));
    TU_CHECK(k == -1, "k %lld", (long long)k);
    int b = -1;
    TU_OK(kedr_ini_bool(ini, "a", "flag", 0, &b));
    TU_CHECK(b == 1, "Yes -> %d", b);
    TU_OK(kedr_ini_bool(ini, "a", "flag2", 0, &b));
    TU_CHECK(b == 0, "off -> %d", b);
    TU_CHECK(kedr_ini_bool(ini, "a", "flag3", 0, &b) == KEDR_ERR_PARSE, "maybe accepted");
    check_msg("case.ini:10: [a] flag3 = maybe: expected true or false");
    static const char *const models[] = {"vhs", "vss", "hs", NULL};
    int m = -1;
    TU_CHECK(kedr_ini_choice(ini, "a", "model", 0, models, &m) == KEDR_ERR_PARSE && m == -1,
             "vhss accepted");
    check_msg("did you mean 'vhs'?");
    TU_OK(kedr_ini_choice(ini, "a", "model2", 0, models, &m));
    TU_CHECK(m == 1, "vss -> %d", m);
    TU_CHECK(kedr_ini_choice(ini, "a", "model3", 0, models, &m) == KEDR_ERR_PARSE, "banana");
    check_msg("expected one of: vhs, vss, hs");
    TU_CHECK(strstr(kedr_last_error(), "did you mean") == NULL, "far value got a suggestion: %s",
             kedr_last_error());
    double list[4];
    int n = 0;
    TU_OK(kedr_ini_doubles(ini, "a", "list", 0, 0, 10, list, 4, &n));
    TU_CHECK(n == 4 && list[0] == 1 && list[1] == 2 && list[2] == 3 && list[3] == 4, "list n %d",
             n);
    TU_CHECK(kedr_ini_doubles(ini, "a", "list", 0, 0, 3, list, 4, &n) == KEDR_ERR_PARSE,
             "4 accepted in [0, 3]");
    TU_CHECK(kedr_ini_doubles(ini, "a", "badlist", 0, 0, 10, list, 4, &n) == KEDR_ERR_PARSE,
             "x accepted in a list");
    TU_CHECK(kedr_ini_doubles(ini, "a", "longlist", 0, 0, 10, list, 3, &n) == KEDR_ERR_PARSE,
             "4 numbers accepted where 3 fit");
    check_msg("expected 1 to 3 numbers");
    TU_OK(kedr_ini_finish(ini));
    kedr_ini_free(ini);
}

/* Unknown keys and sections are errors that name the line and suggest the closest known name. */
static void test_unknown(void)
{
    const char *text = "[grid]\n"
                       "nx = 10\n"
                       "ny = 10\n"
                       "nxx = 3\n"
                       "[freestream]\n"
                       "temperature = 300\n";
    kedr_ini *ini = parse_ok(text);
    int64_t v;
    double t;
    TU_OK(kedr_ini_int(ini, "grid", "nx", 0, 1, 100, &v));
    TU_OK(kedr_ini_int(ini, "grid", "ny", 0, 1, 100, &v));
    TU_OK(kedr_ini_double(ini, "freestream", "temperature", 0, 0, 1e9, &t));
    TU_CHECK(kedr_ini_finish(ini) == KEDR_ERR_PARSE, "unknown key nxx accepted");
    check_msg("case.ini:4: [grid] unknown key 'nxx' (did you mean 'nx'?)");
    kedr_ini_free(ini);

    ini = parse_ok("[freestream]\nTemprature = 300\nvelocity_x = 1\n");
    TU_OK(kedr_ini_double(ini, "freestream", "temperature", 0, 0, 1e9, &t));
    TU_OK(kedr_ini_double(ini, "freestream", "velocity_x", 0, -1e9, 1e9, &t));
    TU_CHECK(kedr_ini_finish(ini) == KEDR_ERR_PARSE, "Temprature accepted");
    check_msg("case.ini:2: [freestream] unknown key 'Temprature' (did you mean 'temperature'?)");
    kedr_ini_free(ini);

    ini = parse_ok("[grid]\nnx = 1\nzzzzzz = 1\n");
    TU_OK(kedr_ini_int(ini, "grid", "nx", 0, 1, 100, &v));
    TU_OK(kedr_ini_int(ini, "grid", "ny", 0, 1, 100, &v));
    TU_CHECK(kedr_ini_finish(ini) == KEDR_ERR_PARSE, "zzzzzz accepted");
    check_msg("unknown key 'zzzzzz' (known keys: nx, ny)");
    kedr_ini_free(ini);

    ini = parse_ok("[gird]\nnx = 1\n[run]\nsteps = 5\n");
    TU_OK(kedr_ini_int(ini, "grid", "nx", 0, 1, 100, &v));
    TU_OK(kedr_ini_int(ini, "run", "steps", 0, 1, 100, &v));
    TU_CHECK(kedr_ini_finish(ini) == KEDR_ERR_PARSE, "section [gird] accepted");
    check_msg("case.ini:1: unknown section [gird] (did you mean [grid]?)");
    kedr_ini_free(ini);

    ini = parse_ok("[output]\nx = 1\n");
    TU_OK(kedr_ini_int(ini, "grid", "nx", 0, 1, 100, &v));
    TU_CHECK(kedr_ini_finish(ini) == KEDR_ERR_PARSE, "section [output] accepted");
    check_msg("unknown section [output] (known sections: grid)");
    kedr_ini_free(ini);

    /* kedr_ini_has marks a key known. */
    ini = parse_ok("[body]\nplate = 1\n");
    TU_CHECK(kedr_ini_has(ini, "body", "plate") && !kedr_ini_has(ini, "body", "circle"), "has");
    TU_OK(kedr_ini_finish(ini));
    TU_CHECK(kedr_ini_fail(ini, "body", "plate", "outside the domain (x %g)", 3.0) ==
                 KEDR_ERR_PARSE, "kedr_ini_fail status");
    check_msg("case.ini:2: [body] plate: outside the domain (x 3)");
    kedr_ini_free(ini);

    TU_CHECK(kedr_ini_distance("kitten", "sitting") == 3, "distance kitten/sitting");
    TU_CHECK(kedr_ini_distance("", "abc") == 3 && kedr_ini_distance("abc", "") == 3, "empty");
    TU_CHECK(kedr_ini_distance("NX", "nx") == 0, "case-insensitive");
}

/* A required key or section that is absent while the file holds a misspelling of it: the error
 * names the misspelling, its line and the name it stands for. */
static void test_misspelled_required(void)
{
    double t = 0;
    kedr_ini *ini = parse_ok("[grid]\nnx = 4\n[freestream]\nvelocity_x = 1\ntemperatur = 300\n");
    TU_OK(kedr_ini_double(ini, "freestream", "velocity_x", 0, -1e9, 1e9, &t));
    TU_CHECK(kedr_ini_double(ini, "freestream", "temperature", KEDR_INI_REQUIRED, 0, 1e9, &t) ==
                 KEDR_ERR_PARSE, "temperatur taken for temperature");
    check_msg("case.ini:5: [freestream] unknown key 'temperatur' (did you mean 'temperature'?)");
    kedr_ini_free(ini);

    ini = parse_ok("[grid]\nnx = 4\n\n[freestrem]\ntemperature = 300\n");
    TU_CHECK(kedr_ini_double(ini, "freestream", "temperature", KEDR_INI_REQUIRED, 0, 1e9, &t) ==
                 KEDR_ERR_PARSE, "[freestrem] taken for [freestream]");
    check_msg("case.ini:4: unknown section [freestrem] (did you mean [freestream]?)");
    kedr_ini_free(ini);

    /* The closest of several; a key a getter already read is not a misspelling. */
    ini = parse_ok("[run]\nsteps_total = 5\nstep_cont = 1\nsteps_countt = 2\n");
    int64_t v;
    TU_OK(kedr_ini_int(ini, "run", "steps_total", 0, 0, 10, &v));
    TU_CHECK(kedr_ini_int(ini, "run", "steps_count", KEDR_INI_REQUIRED, 0, 10, &v) ==
                 KEDR_ERR_PARSE, "steps_count found");
    check_msg("case.ini:4: [run] unknown key 'steps_countt' (did you mean 'steps_count'?)");
    TU_CHECK(kedr_ini_int(ini, "run", "steps_totl", KEDR_INI_REQUIRED, 0, 10, &v) ==
                 KEDR_ERR_PARSE, "steps_totl found");
    check_msg("case.ini:1: [run] lacks the required key 'steps_totl'");
    kedr_ini_free(ini);

    /* Short names: only a doubled letter or two neighbours swapped. */
    ini = parse_ok("[gird]\nnxx = 1\n");
    TU_CHECK(kedr_ini_int(ini, "grid", "nx", KEDR_INI_REQUIRED, 0, 10, &v) == KEDR_ERR_PARSE,
             "gird");
    check_msg("case.ini:1: unknown section [gird] (did you mean [grid]?)");
    kedr_ini_free(ini);
    ini = parse_ok("[grid]\nnxx = 1\n");
    TU_CHECK(kedr_ini_int(ini, "grid", "nx", KEDR_INI_REQUIRED, 0, 10, &v) == KEDR_ERR_PARSE,
             "nxx");
    check_msg("case.ini:2: [grid] unknown key 'nxx' (did you mean 'nx'?)");
    kedr_ini_free(ini);

    /* A module's own check about a name the file lacks reports the misspelling first. */
    ini = parse_ok("[freestrem]\ndensity = 1\n[wall]\ntemprature = 300\n");
    TU_CHECK(kedr_ini_fail(ini, "freestream", NULL, "give a density") == KEDR_ERR_PARSE, "status");
    check_msg("case.ini:1: unknown section [freestrem] (did you mean [freestream]?)");
    TU_CHECK(kedr_ini_fail(ini, "wall", "temperature", "needed") == KEDR_ERR_PARSE, "status");
    check_msg("case.ini:4: [wall] unknown key 'temprature' (did you mean 'temperature'?)");
    TU_CHECK(kedr_ini_fail(ini, "wall", "speed", "needed with %s", "x") == KEDR_ERR_PARSE, "st");
    check_msg("case.ini:3: [wall] speed: needed with x");
    kedr_ini_free(ini);

    /* Names of one family, short names and far names keep the message about what is missing. */
    static const struct {
        const char *text, *section, *key, *msg;
    } keep[] = {
        {"[f]\nvelocity_y = 1\n", "f", "velocity_x", "case.ini:1: [f] lacks the required key"},
        {"[b]\nboundary_x_max = 1\n", "b", "boundary_x_min", "[b] lacks the required key"},
        {"[b]\nwall_x_min = 1\n", "b", "wall_z_min", "[b] lacks the required key"},
        {"[f]\nvelocity = 1\n", "f", "velocity_x", "[f] lacks the required key"},
        {"[gas]\nT_ref = 1\n", "gas", "d_ref", "[gas] lacks the required key 'd_ref'"},
        {"[grid]\nny = 1\nnx_ = 3\nnz = 2\n", "grid", "nx", "[grid] lacks the required key 'nx'"},
        {"[f]\nzzzzzzzzzzz = 1\n", "f", "temperature", "[f] lacks the required key"},
        {"[body2]\nx = 1\n", "body", "x", "missing section [body] with the required key 'x'"},
        {"[grd]\nx = 1\n", "grid", "x", "missing section [grid]"},
    };
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
        ini = parse_ok(keep[i].text);
        TU_CHECK(kedr_ini_double(ini, keep[i].section, keep[i].key, KEDR_INI_REQUIRED, 0, 1, &t) ==
                     KEDR_ERR_PARSE, "case %zu: found", i);
        check_msg(keep[i].msg);
        TU_CHECK(strstr(kedr_last_error(), "did you mean") == NULL, "case %zu: %s", i,
                 kedr_last_error());
        kedr_ini_free(ini);
    }
}

/* Appends printf output to a growing text; exits the test when out of memory. */
static void append(char **text, size_t *len, size_t *cap, const char *fmt, long a, long b)
{
    if (*len + 64 > *cap) {
        *cap = 2 * *cap + 64;
        *text = realloc(*text, *cap);
        if (!*text) {
            fprintf(stderr, "test_ini: out of memory\n");
            exit(1);
        }
    }
    *len += (size_t)snprintf(*text + *len, 64, fmt, a, b);
}

/* 10^5 keys in sections of 1000 (a case file hundreds of times the largest shipped): every key is
 * found with its value and line, and every one counts as used. The time it takes is in
 * docs/performance.md, not checked here. */
static void test_many_keys(void)
{
    const long n = 100000, per = 1000;
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (long i = 0; i < n; i++) {
        if (i % per == 0)
            append(&text, &len, &cap, "[s%ld]%.0ld\n", i / per, 0);
        append(&text, &len, &cap, "key%ld = %ld\n", i, 3 * i);
    }
    kedr_ini *ini = parse_ok(text);
    free(text);
    long found = 0;
    for (long i = 0; i < n; i++) {
        char sec[32], key[32];
        snprintf(sec, sizeof sec, "s%ld", i / per);
        snprintf(key, sizeof key, "key%ld", i);
        int64_t v = -1;
        if (kedr_ini_int(ini, sec, key, KEDR_INI_REQUIRED, 0, 3 * n, &v) == KEDR_OK && v == 3 * i &&
            kedr_ini_line(ini, sec, key) == (int)(i + i / per + 2))
            found++;
    }
    TU_CHECK(found == n, "%ld of %ld keys found with their values and lines", found, n);
    TU_CHECK(kedr_ini_sections(ini) == (int)(n / per), "%d sections", kedr_ini_sections(ini));
    TU_OK(kedr_ini_finish(ini));
    kedr_ini_free(ini);
}

/* Long lines and many sections are parsed in bounded time; messages quote a long line cut short. */
static void test_limits(void)
{
    const size_t n = 1000000;
    char *text = malloc(n + 64);
    TU_CHECK(text != NULL, "malloc");
    if (!text)
        return;
    strcpy(text, "[a]\nlist = ");
    size_t len = strlen(text);
    for (; len < n; len += 2)
        memcpy(text + len, "1 ", 2);
    strcpy(text + len, "\n");
    kedr_ini *ini = parse_ok(text);
    const char *list = NULL;
    TU_OK(kedr_ini_string(ini, "a", "list", KEDR_INI_REQUIRED, &list));
    TU_CHECK(list && strlen(list) == len - 12, "value of %zu characters", list ? strlen(list) : 0);
    double values[4];
    int count = 0;
    TU_CHECK(kedr_ini_doubles(ini, "a", "list", 0, 0, 10, values, 4, &count) == KEDR_ERR_PARSE,
             "a list of 5e5 numbers taken for 4");
    check_msg("case.ini:2: [a] list = 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 "
              "...: "
              "expected 1 to 4 numbers");
    kedr_ini_free(ini);

    memset(text, 'k', n); /* a key of 10^6 characters with no '=' */
    strcpy(text + n, "\n");
    memcpy(text, "[a]\n", 4);
    expect_parse_error(text, "bad.ini:2: 'kkkk", "...' is neither");
    TU_CHECK(strlen(kedr_last_error()) < 200, "message of %zu characters",
             strlen(kedr_last_error()));
    free(text);

    /* 10^6 sections (about 9 MB): parsed, and the first one no getter asked for is reported. */
    char *many = NULL;
    size_t mlen = 0, mcap = 0;
    for (long i = 0; i < 1000000; i++)
        append(&many, &mlen, &mcap, "[s%ld]%.0ld\n", i, 0);
    ini = parse_ok(many);
    free(many);
    TU_CHECK(kedr_ini_sections(ini) == 1000000, "%d sections", kedr_ini_sections(ini));
    TU_CHECK(kedr_ini_has_section(ini, "s0") && kedr_ini_line(ini, "s999999", NULL) == 1000000,
             "first and last sections");
    TU_CHECK(kedr_ini_finish(ini) == KEDR_ERR_PARSE, "unknown sections accepted");
    check_msg("case.ini:2: unknown section [s1] (did you mean [s0]?)");
    kedr_ini_free(ini);

    /* Text over the limit is refused before it is copied. */
    char *big = malloc(KEDR_INI_MAX_BYTES + 2);
    TU_CHECK(big != NULL, "malloc");
    if (big) {
        memset(big, '\n', KEDR_INI_MAX_BYTES + 1);
        big[KEDR_INI_MAX_BYTES + 1] = 0;
        expect_parse_error(big, "bad.ini: longer than the 16000000 bytes", NULL);
        free(big);
    }
}

/* Files that are not case files: refused at once, without reading them whole or waiting. */
static void test_not_case_files(void)
{
    kedr_ini *ini = NULL;
    TU_CHECK(kedr_ini_load("/dev/zero", &ini) == KEDR_ERR_IO && !ini, "/dev/zero read");
    check_msg("/dev/zero: is a character device; expected a regular file");
    TU_CHECK(kedr_ini_load("/tmp", &ini) == KEDR_ERR_IO && !ini, "a directory read");
    check_msg("/tmp: is a directory");
    char dir[] = "/tmp/kedr_test_ini_XXXXXX";
    if (!mkdtemp(dir)) {
        TU_CHECK(0, "mkdtemp");
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/fifo.ini", dir);
    if (mkfifo(path, 0600) == 0) {
        TU_CHECK(kedr_ini_load(path, &ini) == KEDR_ERR_IO && !ini, "a FIFO read");
        check_msg("fifo.ini: is a FIFO; expected a regular file");
    }
    /* A sparse file just over the limit: refused by its size, before any allocation. */
    snprintf(path, sizeof path, "%s/big.ini", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    TU_CHECK(fd >= 0 && ftruncate(fd, (off_t)KEDR_INI_MAX_BYTES + 1) == 0, "sparse file");
    if (fd >= 0)
        close(fd);
    TU_CHECK(kedr_ini_load(path, &ini) == KEDR_ERR_IO && !ini, "a file over the limit read");
    check_msg("big.ini: 16000001 bytes, more than the 16000000 bytes a case file may hold");
    snprintf(path, sizeof path, "%s/nul.ini", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    TU_CHECK(fd >= 0 && write(fd, "[a]\nx = 1\0\n", 11) == 11, "file with a NUL");
    if (fd >= 0)
        close(fd);
    TU_CHECK(kedr_ini_load(path, &ini) == KEDR_ERR_PARSE && !ini, "a NUL byte accepted");
    check_msg("contains a NUL byte");
    tu_remove_dir(dir);
}

static void test_file(void)
{
    char path[] = "/tmp/kedr_test_ini_XXXXXX";
    int fd = mkstemp(path);
    TU_CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    const char *text = "[run]\nsteps = 12\n";
    TU_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    kedr_ini *ini = NULL;
    TU_OK(kedr_ini_load(path, &ini));
    if (ini) {
        int64_t steps = 0;
        TU_OK(kedr_ini_int(ini, "run", "steps", KEDR_INI_REQUIRED, 1, 100, &steps));
        TU_CHECK(steps == 12, "steps %lld", (long long)steps);
        char dir[256];
        kedr_ini_dir(ini, dir, sizeof dir);
        TU_CHECK(strcmp(dir, "/tmp") == 0, "dir '%s'", dir);
        TU_CHECK(strcmp(kedr_ini_name(ini), path) == 0, "name");
        kedr_ini_free(ini);
    }
    unlink(path);
}

int main(void)
{
    test_syntax();
    test_malformed();
    test_values();
    test_unknown();
    test_misspelled_required();
    test_many_keys();
    test_limits();
    test_not_case_files();
    test_file();
    return tu_finish("test_ini");
}
