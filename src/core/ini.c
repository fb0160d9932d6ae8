/* Case files: the INI reader behind include/kedr/ini.h. The whole file is parsed up front into
 * sections and entries; getters look keys up, check types and ranges, and record every name they
 * were asked about, so that kedr_ini_finish() can point at a misspelled key and suggest the
 * closest known one. */
#include "kedr/ini.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *name;
    int line;
    int used;
} ini_section;

typedef struct {
    int section;
    char *key, *value;
    int line;
    int used;
} ini_entry;

typedef struct {
    char *section, *key; /* key NULL: a known section */
} ini_known;

struct kedr_ini {
    char *name;
    ini_section *sections;
    int nsections, cap_sections;
    ini_entry *entries;
    int nentries, cap_entries;
    ini_known *known;
    int nknown, cap_known;
};

static void *grow(void *p, int *cap, size_t elem)
{
    int c = *cap ? 2 * *cap : 16;
    void *q = realloc(p, (size_t)c * elem);
    if (q)
        *cap = c;
    return q;
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static int is_name_char(int c) { return isalnum(c) || c == '_' || c == '.' || c == '-'; }

static int find_section(const kedr_ini *ini, const char *section)
{
    for (int i = 0; i < ini->nsections; i++)
        if (strcmp(ini->sections[i].name, section) == 0)
            return i;
    return -1;
}

static ini_entry *find_entry(const kedr_ini *ini, const char *section, const char *key)
{
    int s = find_section(ini, section);
    if (s < 0)
        return NULL;
    for (int i = 0; i < ini->nentries; i++)
        if (ini->entries[i].section == s && strcmp(ini->entries[i].key, key) == 0)
            return &ini->entries[i];
    return NULL;
}

void kedr_ini_free(kedr_ini *ini)
{
    if (!ini)
        return;
    for (int i = 0; i < ini->nsections; i++)
        free(ini->sections[i].name);
    for (int i = 0; i < ini->nentries; i++) {
        free(ini->entries[i].key);
        free(ini->entries[i].value);
    }
    for (int i = 0; i < ini->nknown; i++) {
        free(ini->known[i].section);
        free(ini->known[i].key);
    }
    free(ini->sections);
    free(ini->entries);
    free(ini->known);
    free(ini->name);
    free(ini);
}

static kedr_status nomem(void) { return kedr_fail(KEDR_ERR_NOMEM, "case file: out of host memory"); }

static size_t trim(const char **s, size_t n)
{
    while (n && isspace((unsigned char)**s))
        (*s)++, n--;
    while (n && isspace((unsigned char)(*s)[n - 1]))
        n--;
    return n;
}

/* One line (without its newline). */
static kedr_status parse_line(kedr_ini *ini, const char *line, size_t len, int lineno, int *cur)
{
    const char *name = ini->name;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '#' || line[i] == ';') {
            len = i;
            break;
        }
    len = trim(&line, len);
    if (len == 0)
        return KEDR_OK;
    if (line[0] == '[') {
        if (line[len - 1] != ']')
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: section header '%.*s' lacks its closing ']'",
                             name, lineno, (int)len, line);
        const char *sec = line + 1;
        size_t n = trim(&sec, len - 2);
        if (n == 0)
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: empty section name '[]'", name, lineno);
        for (size_t i = 0; i < n; i++)
            if (!is_name_char((unsigned char)sec[i]))
                return kedr_fail(KEDR_ERR_PARSE,
                                 "%s:%d: section name '%.*s' has the character '%c' (expected "
                                 "letters, digits, '_', '.' or '-')",
                                 name, lineno, (int)n, sec, sec[i]);
        char *s = dup_range(sec, n);
        if (!s)
            return nomem();
        int prev = find_section(ini, s);
        if (prev >= 0) {
            kedr_status st = kedr_fail(KEDR_ERR_PARSE, "%s:%d: section [%s] appears twice (first at line %d)",
                                       name, lineno, s, ini->sections[prev].line);
            free(s);
            return st;
        }
        if (ini->nsections == ini->cap_sections) {
            void *p = grow(ini->sections, &ini->cap_sections, sizeof *ini->sections);
            if (!p) {
                free(s);
                return nomem();
            }
            ini->sections = p;
        }
        ini->sections[ini->nsections] = (ini_section){s, lineno, 0};
        *cur = ini->nsections++;
        return KEDR_OK;
    }
    const char *eq = memchr(line, '=', len);
    if (!eq)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: '%.*s' is neither '[section]' nor 'key = value'",
                         name, lineno, (int)len, line);
    const char *key = line;
    size_t klen = trim(&key, (size_t)(eq - line));
    const char *val = eq + 1;
    size_t vlen = trim(&val, len - (size_t)(eq + 1 - line));
    if (klen == 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: a value without a key: '%.*s'", name, lineno,
                         (int)len, line);
    for (size_t i = 0; i < klen; i++)
        if (!is_name_char((unsigned char)key[i]))
            return kedr_fail(KEDR_ERR_PARSE,
                             "%s:%d: key '%.*s' has the character '%c' (expected letters, digits, "
                             "'_', '.' or '-')",
                             name, lineno, (int)klen, key, key[i]);
    if (vlen == 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: key '%.*s' has no value after '='", name, lineno,
                         (int)klen, key);
    if (*cur < 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: key '%.*s' comes before any [section]", name,
                         lineno, (int)klen, key);
    char *k = dup_range(key, klen), *v = dup_range(val, vlen);
    if (!k || !v) {
        free(k);
        free(v);
        return nomem();
    }
    const char *secname = ini->sections[*cur].name;
    ini_entry *prev = find_entry(ini, secname, k);
    if (prev) {
        kedr_status st = kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] %s is given twice (first at line %d)",
                                   name, lineno, secname, k, prev->line);
        free(k);
        free(v);
        return st;
    }
    if (ini->nentries == ini->cap_entries) {
        void *p = grow(ini->entries, &ini->cap_entries, sizeof *ini->entries);
        if (!p) {
            free(k);
            free(v);
            return nomem();
        }
        ini->entries = p;
    }
    ini->entries[ini->nentries++] = (ini_entry){*cur, k, v, lineno, 0};
    return KEDR_OK;
}

kedr_status kedr_ini_parse(const char *text, const char *name, kedr_ini **out)
{
    if (!out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_ini_parse: ini is NULL");
    *out = NULL;
    if (!text)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_ini_parse: text is NULL");
    kedr_ini *ini = calloc(1, sizeof *ini);
    if (!ini || !(ini->name = dup_range(name ? name : "<text>", strlen(name ? name : "<text>")))) {
        free(ini);
        return nomem();
    }
    int cur = -1, lineno = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        kedr_status s = parse_line(ini, p, len, lineno, &cur);
        if (s != KEDR_OK) {
            kedr_ini_free(ini);
            return s;
        }
        p += len + (nl != NULL);
    }
    *out = ini;
    return KEDR_OK;
}

kedr_status kedr_ini_load(const char *path, kedr_ini **out)
{
    if (!out || !path)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_ini_load: %s is NULL", out ? "path" : "ini");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return nomem();
        }
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *b = realloc(buf, cap *= 2);
        if (!b)
            free(buf);
        buf = b;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return kedr_fail(KEDR_ERR_IO, "%s: read error", path);
    }
    buf[n] = 0;
    if (strlen(buf) != n) {
        free(buf);
        return kedr_fail(KEDR_ERR_PARSE, "%s: contains a NUL byte (not a text file?)", path);
    }
    kedr_status s = kedr_ini_parse(buf, path, out);
    free(buf);
    return s;
}

const char *kedr_ini_name(const kedr_ini *ini) { return ini->name; }

void kedr_ini_dir(const kedr_ini *ini, char *dir, size_t size)
{
    const char *slash = strrchr(ini->name, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else
        snprintf(dir, size, "%.*s", (int)(slash == ini->name ? 1 : slash - ini->name), ini->name);
}

/* Records a name a getter asked about, for kedr_ini_finish's suggestions. */
static void remember(kedr_ini *ini, const char *section, const char *key)
{
    for (int i = 0; i < ini->nknown; i++)
        if (strcmp(ini->known[i].section, section) == 0 &&
            ((!key && !ini->known[i].key) ||
             (key && ini->known[i].key && strcmp(ini->known[i].key, key) == 0)))
            return;
    if (ini->nknown == ini->cap_known) {
        void *p = grow(ini->known, &ini->cap_known, sizeof *ini->known);
        if (!p)
            return; /* suggestions are a courtesy; losing one is harmless */
        ini->known = p;
    }
    ini_known k = {dup_range(section, strlen(section)), key ? dup_range(key, strlen(key)) : NULL};
    if (k.section)
        ini->known[ini->nknown++] = k;
}

/* The entry for a getter: marks section and key known and used. NULL when absent. */
static ini_entry *lookup(kedr_ini *ini, const char *section, const char *key)
{
    remember(ini, section, NULL);
    remember(ini, section, key);
    int s = find_section(ini, section);
    if (s >= 0)
        ini->sections[s].used = 1;
    ini_entry *e = find_entry(ini, section, key);
    if (e)
        e->used = 1;
    return e;
}

int kedr_ini_has_section(kedr_ini *ini, const char *section)
{
    remember(ini, section, NULL);
    int s = find_section(ini, section);
    if (s >= 0)
        ini->sections[s].used = 1;
    return s >= 0;
}

int kedr_ini_has(kedr_ini *ini, const char *section, const char *key)
{
    return lookup(ini, section, key) != NULL;
}

int kedr_ini_line(const kedr_ini *ini, const char *section, const char *key)
{
    if (!key) {
        int s = find_section(ini, section);
        return s >= 0 ? ini->sections[s].line : 0;
    }
    const ini_entry *e = find_entry(ini, section, key);
    return e ? e->line : 0;
}

int kedr_ini_sections(const kedr_ini *ini) { return ini->nsections; }

const char *kedr_ini_section(const kedr_ini *ini, int i)
{
    return i >= 0 && i < ini->nsections ? ini->sections[i].name : NULL;
}

kedr_status kedr_ini_fail(const kedr_ini *ini, const char *section, const char *key,
                          const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = kedr_ini_line(ini, section, key);
    if (!line && key)
        line = kedr_ini_line(ini, section, NULL);
    char where[32] = "";
    if (line)
        snprintf(where, sizeof where, ":%d", line);
    if (key)
        return kedr_fail(KEDR_ERR_PARSE, "%s%s: [%s] %s: %s", ini->name, where, section, key, msg);
    return kedr_fail(KEDR_ERR_PARSE, "%s%s: [%s]: %s", ini->name, where, section, msg);
}

static kedr_status missing(const kedr_ini *ini, const char *section, const char *key,
                           const char *expected)
{
    int line = kedr_ini_line(ini, section, NULL);
    if (line)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] lacks the required key '%s' (%s)", ini->name,
                         line, section, key, expected);
    return kedr_fail(KEDR_ERR_PARSE, "%s: missing section [%s] with the required key '%s' (%s)",
                     ini->name, section, key, expected);
}

static kedr_status bad_value(const kedr_ini *ini, const char *section, const ini_entry *e,
                             const char *expected)
{
    return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] %s = %s: expected %s", ini->name, e->line,
                     section, e->key, e->value, expected);
}

static void describe_range(char *buf, size_t size, const char *what, unsigned flags, double lo,
                           double hi)
{
    int has_lo = lo > -HUGE_VAL, has_hi = hi < HUGE_VAL;
    if (has_lo && has_hi)
        snprintf(buf, size, "%s in %c%.10g, %.10g%c", what, flags & KEDR_INI_LO_OPEN ? '(' : '[',
                 lo, hi, flags & KEDR_INI_HI_OPEN ? ')' : ']');
    else if (has_lo)
        snprintf(buf, size, "%s %s %.10g", what, flags & KEDR_INI_LO_OPEN ? ">" : ">=", lo);
    else if (has_hi)
        snprintf(buf, size, "%s %s %.10g", what, flags & KEDR_INI_HI_OPEN ? "<" : "<=", hi);
    else
        snprintf(buf, size, "%s", what);
}

static int in_range(double v, unsigned flags, double lo, double hi)
{
    if (flags & KEDR_INI_LO_OPEN ? !(v > lo) : !(v >= lo))
        return 0;
    if (flags & KEDR_INI_HI_OPEN ? !(v < hi) : !(v <= hi))
        return 0;
    return 1;
}

/* Parses a finite double filling all of [s, s + n). */
static int parse_double(const char *s, size_t n, double *v)
{
    char buf[128];
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end = NULL;
    errno = 0;
    *v = strtod(buf, &end);
    return end == buf + n && errno != ERANGE && isfinite(*v);
}

kedr_status kedr_ini_double(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                            double lo, double hi, double *value)
{
    char expected[160];
    describe_range(expected, sizeof expected, "a number", flags, lo, hi);
    ini_entry *e = lookup(ini, section, key);
    if (!e)
        return flags & KEDR_INI_REQUIRED ? missing(ini, section, key, expected) : KEDR_OK;
    double v;
    if (!parse_double(e->value, strlen(e->value), &v) || !in_range(v, flags, lo, hi))
        return bad_value(ini, section, e, expected);
    *value = v;
    return KEDR_OK;
}

kedr_status kedr_ini_int(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                         int64_t lo, int64_t hi, int64_t *value)
{
    char expected[160];
    snprintf(expected, sizeof expected, "an integer from %lld to %lld", (long long)lo,
             (long long)hi);
    ini_entry *e = lookup(ini, section, key);
    if (!e)
        return flags & KEDR_INI_REQUIRED ? missing(ini, section, key, expected) : KEDR_OK;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(e->value, &end, 10);
    if (errno || end == e->value || *end || v < lo || v > hi)
        return bad_value(ini, section, e, expected);
    *value = v;
    return KEDR_OK;
}

static int same_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

kedr_status kedr_ini_bool(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                          int *value)
{
    static const char *yes[] = {"true", "yes", "on", "1"}, *no[] = {"false", "no", "off", "0"};
    const char *expected = "true or false (also yes/no, on/off, 1/0)";
    ini_entry *e = lookup(ini, section, key);
    if (!e)
        return flags & KEDR_INI_REQUIRED ? missing(ini, section, key, expected) : KEDR_OK;
    for (int i = 0; i < 4; i++) {
        if (same_ci(e->value, yes[i])) {
            *value = 1;
            return KEDR_OK;
        }
        if (same_ci(e->value, no[i])) {
            *value = 0;
            return KEDR_OK;
        }
    }
    return bad_value(ini, section, e, expected);
}

kedr_status kedr_ini_string(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                            const char **value)
{
    ini_entry *e = lookup(ini, section, key);
    if (!e)
        return flags & KEDR_INI_REQUIRED ? missing(ini, section, key, "a text value") : KEDR_OK;
    *value = e->value;
    return KEDR_OK;
}

int kedr_ini_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) /* long names: no suggestion is better than a slow one */
        return 1000;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Close enough to suggest: at most a third of the longer name, and at least 2 edits allowed. */
static int close_enough(const char *a, const char *b, int d)
{
    size_t l = strlen(a) > strlen(b) ? strlen(a) : strlen(b);
    int limit = (int)(l / 3) > 2 ? (int)(l / 3) : 2;
    return d <= limit && d < (int)l;
}

kedr_status kedr_ini_choice(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                            const char *const *names, int *index)
{
    char expected[256] = "one of:";
    for (int i = 0; names[i]; i++) {
        size_t len = strlen(expected);
        snprintf(expected + len, sizeof expected - len, "%s %s", i ? "," : "", names[i]);
    }
    ini_entry *e = lookup(ini, section, key);
    if (!e)
        return flags & KEDR_INI_REQUIRED ? missing(ini, section, key, expected) : KEDR_OK;
    int best = -1, bestd = 1 << 30;
    for (int i = 0; names[i]; i++) {
        if (strcmp(e->value, names[i]) == 0) {
            *index = i;
            return KEDR_OK;
        }
        int d = kedr_ini_distance(e->value, names[i]);
        if (d < bestd)
            bestd = d, best = i;
    }
    if (best >= 0 && close_enough(e->value, names[best], bestd))
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] %s = %s: did you mean '%s'? (expected %s)",
                         ini->name, e->line, section, key, e->value, names[best], expected);
    return bad_value(ini, section, e, expected);
}

kedr_status kedr_ini_doubles(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                             double lo, double hi, double *values, int max, int *count)
{
    char range[160], expected[256];
    describe_range(range, sizeof range, "numbers", flags, lo, hi);
    snprintf(expected, sizeof expected, "1 to %d %s, separated by spaces or commas", max, range);
    ini_entry *e = lookup(ini, section, key);
    if (!e)
        return flags & KEDR_INI_REQUIRED ? missing(ini, section, key, expected) : KEDR_OK;
    int n = 0;
    for (const char *p = e->value; *p;) {
        while (*p && (isspace((unsigned char)*p) || *p == ','))
            p++;
        if (!*p)
            break;
        const char *q = p;
        while (*q && !isspace((unsigned char)*q) && *q != ',')
            q++;
        double v;
        if (n == max || !parse_double(p, (size_t)(q - p), &v) || !in_range(v, flags, lo, hi))
            return bad_value(ini, section, e, expected);
        values[n++] = v;
        p = q;
    }
    if (n == 0)
        return bad_value(ini, section, e, expected);
    *count = n;
    return KEDR_OK;
}

/* The closest known name: keys of the same section (key != NULL) or sections (key == NULL). */
static const char *suggest(const kedr_ini *ini, const char *section, const char *key)
{
    const char *best = NULL;
    int bestd = 1 << 30;
    for (int i = 0; i < ini->nknown; i++) {
        const ini_known *k = &ini->known[i];
        const char *cand;
        if (key) {
            if (!k->key || strcmp(k->section, section) != 0)
                continue;
            cand = k->key;
        } else {
            if (k->key)
                continue;
            cand = k->section;
        }
        int d = kedr_ini_distance(key ? key : section, cand);
        if (d < bestd)
            bestd = d, best = cand;
    }
    return best && close_enough(key ? key : section, best, bestd) ? best : NULL;
}

/* "a, b, c" of the known keys of a section (or of the known sections). */
static void list_known(const kedr_ini *ini, const char *section, char *buf, size_t size)
{
    buf[0] = 0;
    for (int i = 0; i < ini->nknown; i++) {
        const ini_known *k = &ini->known[i];
        const char *cand = section ? (k->key && strcmp(k->section, section) == 0 ? k->key : NULL)
                                   : (k->key ? NULL : k->section);
        if (!cand)
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", len ? ", " : "", cand);
    }
}

kedr_status kedr_ini_finish(kedr_ini *ini)
{
    char known[512];
    for (int i = 0; i < ini->nsections; i++) {
        const ini_section *s = &ini->sections[i];
        if (s->used)
            continue;
        const char *hint = suggest(ini, s->name, NULL);
        if (hint)
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: unknown section [%s] (did you mean [%s]?)",
                             ini->name, s->line, s->name, hint);
        list_known(ini, NULL, known, sizeof known);
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: unknown section [%s] (known sections: %s)",
                         ini->name, s->line, s->name, known);
    }
    for (int i = 0; i < ini->nentries; i++) {
        const ini_entry *e = &ini->entries[i];
        if (e->used)
            continue;
        const char *sec = ini->sections[e->section].name;
        const char *hint = suggest(ini, sec, e->key);
        if (hint)
            return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] unknown key '%s' (did you mean '%s'?)",
                             ini->name, e->line, sec, e->key, hint);
        list_known(ini, sec, known, sizeof known);
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] unknown key '%s' (known keys: %s)", ini->name,
                         e->line, sec, e->key, known);
    }
    return KEDR_OK;
}
