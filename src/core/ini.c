/* Case files: the INI reader behind include/kedr/ini.h. The whole file is parsed up front into
 * sections and entries that point into one copy of its text, with hash tables from names to
 * them; getters look keys up, check types and ranges, and record every name they were asked
 * about, so that kedr_ini_finish() can point at a misspelled key and suggest the closest known
 * one. Every step is linear in the size of the file: it is untrusted input. */
#define _GNU_SOURCE
#include "kedr/ini.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct {
    const char *name;
    int line, used;
    int first, count; /* its entries: a section is opened once, so they are contiguous */
    uint32_t hash;
} ini_section;

typedef struct {
    int section;
    const char *key, *value;
    int line, used;
    uint32_t hash;
} ini_entry;

typedef struct {
    char *section;   /* one allocation holding both names */
    const char *key; /* NULL: a known section */
    uint32_t hash;
} ini_known;

/* Open addressing with linear probing; a slot holds an item's hash and index (-1: empty). */
typedef struct {
    uint32_t hash;
    int id;
} ini_slot;

typedef struct {
    ini_slot *slot;
    size_t cap, count; /* cap: 0 or a power of 2, at least twice count */
} ini_table;

struct kedr_ini {
    char *name;
    char *text; /* the file's text, names and values NUL-terminated in place */
    ini_section *sections;
    int nsections, cap_sections;
    ini_entry *entries;
    int nentries, cap_entries;
    ini_known *known;
    int nknown, cap_known;
    ini_table section_index, entry_index, known_index;
    uint64_t seed; /* of name_hash */
};

/* Text quoted from a line in a message is cut to SHOWN characters, so that a line of a megabyte
 * makes a message of one line. */
#define SHOWN 60
#define CLIP(n) ((int)((n) > SHOWN ? SHOWN : (n)))
#define MORE(n) ((n) > SHOWN ? "..." : "")

static void *grow(void *p, int *cap, size_t elem)
{
    int c = *cap ? 2 * *cap : 16;
    void *q = realloc(p, (size_t)c * elem);
    if (q)
        *cap = c;
    return q;
}

static int is_name_char(int c) { return isalnum(c) || c == '_' || c == '.' || c == '-'; }

/* FNV-1a in 64 bits over "section \x1f key" (or "section \x1e" for a section), started from the
 * reader's random seed so that no file can be made whose names all fall in one slot, then a final
 * mix so that the low bits, which pick the slot, depend on every byte. */
static uint32_t name_hash(const kedr_ini *ini, const char *section, const char *key)
{
    uint64_t h = ini->seed;
    for (const char *p = section; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ (key ? 0x1fu : 0x1eu)) * 0x100000001b3ull;
    for (const char *p = key ? key : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ (h >> 33));
}

/* A seed from the clock and the reader's address (splitmix64). */
static uint64_t new_seed(const kedr_ini *ini)
{
    struct timespec t = {0, 0};
    timespec_get(&t, TIME_UTC);
    uint64_t z = (uint64_t)(uintptr_t)ini ^ ((uint64_t)t.tv_sec << 32) ^ (uint64_t)t.tv_nsec;
    z = (z + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef int (*ini_same)(const kedr_ini *ini, int id, const char *section, const char *key);

static int same_section(const kedr_ini *ini, int id, const char *section, const char *key)
{
    (void)key;
    return strcmp(ini->sections[id].name, section) == 0;
}

static int same_entry(const kedr_ini *ini, int id, const char *section, const char *key)
{
    const ini_entry *e = &ini->entries[id];
    return strcmp(e->key, key) == 0 && strcmp(ini->sections[e->section].name, section) == 0;
}

static int same_known(const kedr_ini *ini, int id, const char *section, const char *key)
{
    const ini_known *k = &ini->known[id];
    return strcmp(k->section, section) == 0 &&
           (key ? k->key && strcmp(k->key, key) == 0 : k->key == NULL);
}

/* The index of the item named (section, key) with hash h, or -1. */
static int table_find(const kedr_ini *ini, const ini_table *t, uint32_t h, ini_same same,
                      const char *section, const char *key)
{
    if (!t->cap)
        return -1;
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        const ini_slot *s = &t->slot[i];
        if (s->id < 0)
            return -1;
        if (s->hash == h && same(ini, s->id, section, key))
            return s->id;
    }
}

static void table_put(ini_slot *slot, size_t cap, ini_slot item)
{
    size_t i = item.hash & (cap - 1);
    while (slot[i].id >= 0)
        i = (i + 1) & (cap - 1);
    slot[i] = item;
}

/* Adds item id (absent from t); 0 when out of memory. */
static int table_add(ini_table *t, uint32_t h, int id)
{
    if (2 * (t->count + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        ini_slot *slot = malloc(cap * sizeof *slot);
        if (!slot)
            return 0;
        for (size_t i = 0; i < cap; i++)
            slot[i].id = -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i].id >= 0)
                table_put(slot, cap, t->slot[i]);
        free(t->slot);
        t->slot = slot;
        t->cap = cap;
    }
    table_put(t->slot, t->cap, (ini_slot){h, id});
    t->count++;
    return 1;
}

static int find_section(const kedr_ini *ini, const char *section)
{
    uint32_t h = name_hash(ini, section, NULL);
    return table_find(ini, &ini->section_index, h, same_section, section, NULL);
}

static ini_entry *find_entry(const kedr_ini *ini, const char *section, const char *key)
{
    uint32_t h = name_hash(ini, section, key);
    int i = table_find(ini, &ini->entry_index, h, same_entry, section, key);
    return i >= 0 ? &ini->entries[i] : NULL;
}

void kedr_ini_free(kedr_ini *ini)
{
    if (!ini)
        return;
    for (int i = 0; i < ini->nknown; i++)
        free(ini->known[i].section);
    free(ini->section_index.slot);
    free(ini->entry_index.slot);
    free(ini->known_index.slot);
    free(ini->sections);
    free(ini->entries);
    free(ini->known);
    free(ini->text);
    free(ini->name);
    free(ini);
}

static kedr_status nomem(void)
{
    return kedr_fail(KEDR_ERR_NOMEM, "case file: out of host memory");
}

static size_t trim(char **s, size_t n)
{
    while (n && isspace((unsigned char)**s))
        (*s)++, n--;
    while (n && isspace((unsigned char)(*s)[n - 1]))
        n--;
    return n;
}

/* A `[section]` line of len > 0 characters, comment and spaces removed. */
static kedr_status parse_header(kedr_ini *ini, char *line, size_t len, int lineno, int *cur)
{
    const char *name = ini->name;
    if (line[len - 1] != ']')
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: section header '%.*s%s' lacks its closing ']'",
                         name, lineno, CLIP(len), line, MORE(len));
    char *sec = line + 1;
    size_t n = trim(&sec, len - 2);
    if (n == 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: empty section name '[]'", name, lineno);
    for (size_t i = 0; i < n; i++)
        if (!is_name_char((unsigned char)sec[i]))
            return kedr_fail(KEDR_ERR_PARSE,
                             "%s:%d: section name '%.*s%s' has the character '%c' (expected "
                             "letters, digits, '_', '.' or '-')",
                             name, lineno, CLIP(n), sec, MORE(n), sec[i]);
    sec[n] = 0;
    uint32_t h = name_hash(ini, sec, NULL);
    int prev = table_find(ini, &ini->section_index, h, same_section, sec, NULL);
    if (prev >= 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: section [%.*s%s] appears twice (first at line %d)",
                         name, lineno, CLIP(n), sec, MORE(n), ini->sections[prev].line);
    if (ini->nsections == ini->cap_sections) {
        void *p = grow(ini->sections, &ini->cap_sections, sizeof *ini->sections);
        if (!p)
            return nomem();
        ini->sections = p;
    }
    if (!table_add(&ini->section_index, h, ini->nsections))
        return nomem();
    ini->sections[ini->nsections] = (ini_section){sec, lineno, 0, ini->nentries, 0, h};
    *cur = ini->nsections++;
    return KEDR_OK;
}

/* A `key = value` line of len > 0 characters, comment and spaces removed. */
static kedr_status parse_pair(kedr_ini *ini, char *line, size_t len, int lineno, int cur)
{
    const char *name = ini->name;
    char *eq = memchr(line, '=', len);
    if (!eq)
        return kedr_fail(KEDR_ERR_PARSE,
                         "%s:%d: '%.*s%s' is neither '[section]' nor 'key = value'", name, lineno,
                         CLIP(len), line, MORE(len));
    char *key = line, *val = eq + 1;
    size_t klen = trim(&key, (size_t)(eq - line));
    size_t vlen = trim(&val, len - (size_t)(eq + 1 - line));
    if (klen == 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: a value without a key: '%.*s%s'", name, lineno,
                         CLIP(len), line, MORE(len));
    for (size_t i = 0; i < klen; i++)
        if (!is_name_char((unsigned char)key[i]))
            return kedr_fail(KEDR_ERR_PARSE,
                             "%s:%d: key '%.*s%s' has the character '%c' (expected letters, "
                             "digits, '_', '.' or '-')",
                             name, lineno, CLIP(klen), key, MORE(klen), key[i]);
    if (vlen == 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: key '%.*s%s' has no value after '='", name,
                         lineno, CLIP(klen), key, MORE(klen));
    if (cur < 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: key '%.*s%s' comes before any [section]", name,
                         lineno, CLIP(klen), key, MORE(klen));
    key[klen] = 0;
    val[vlen] = 0;
    ini_section *sec = &ini->sections[cur];
    uint32_t h = name_hash(ini, sec->name, key);
    int prev = table_find(ini, &ini->entry_index, h, same_entry, sec->name, key);
    if (prev >= 0)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] %.*s%s is given twice (first at line %d)",
                         name, lineno, sec->name, CLIP(klen), key, MORE(klen),
                         ini->entries[prev].line);
    if (ini->nentries == ini->cap_entries) {
        void *p = grow(ini->entries, &ini->cap_entries, sizeof *ini->entries);
        if (!p)
            return nomem();
        ini->entries = p;
    }
    if (!table_add(&ini->entry_index, h, ini->nentries))
        return nomem();
    ini->entries[ini->nentries++] = (ini_entry){cur, key, val, lineno, 0, h};
    sec->count++;
    return KEDR_OK;
}

/* One line (without its newline). */
static kedr_status parse_line(kedr_ini *ini, char *line, size_t len, int lineno, int *cur)
{
    char *comment = memchr(line, '#', len), *semi = memchr(line, ';', len);
    if (semi && (!comment || semi < comment))
        comment = semi;
    if (comment)
        len = (size_t)(comment - line);
    len = trim(&line, len);
    if (len == 0)
        return KEDR_OK;
    if (line[0] == '[')
        return parse_header(ini, line, len, lineno, cur);
    return parse_pair(ini, line, len, lineno, *cur);
}

/* Parses n bytes of text (NUL-terminated), which the reader takes over (freed on failure). */
static kedr_status parse_text(char *text, size_t n, const char *name, kedr_ini **out)
{
    kedr_ini *ini = calloc(1, sizeof *ini);
    if (!ini || !(ini->name = strdup(name))) {
        free(ini);
        free(text);
        return nomem();
    }
    ini->text = text;
    ini->seed = new_seed(ini);
    int cur = -1, lineno = 0;
    for (char *p = text, *end = text + n; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        kedr_status s = parse_line(ini, p, len, lineno, &cur);
        if (s != KEDR_OK) {
            kedr_ini_free(ini);
            return s;
        }
        p = nl ? nl + 1 : end;
    }
    *out = ini;
    return KEDR_OK;
}

kedr_status kedr_ini_parse(const char *text, const char *name, kedr_ini **out)
{
    if (!out)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_ini_parse: ini is NULL");
    *out = NULL;
    if (!text)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_ini_parse: text is NULL");
    if (!name)
        name = "<text>";
    size_t n = strnlen(text, KEDR_INI_MAX_BYTES + 1);
    if (n > KEDR_INI_MAX_BYTES)
        return kedr_fail(KEDR_ERR_PARSE, "%s: longer than the %zu bytes a case file may hold",
                         name, KEDR_INI_MAX_BYTES);
    char *copy = malloc(n + 1);
    if (!copy)
        return nomem();
    memcpy(copy, text, n + 1);
    return parse_text(copy, n, name, out);
}

kedr_status kedr_ini_load(const char *path, kedr_ini **out)
{
    if (!out || !path)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_ini_load: %s is NULL", out ? "path" : "ini");
    *out = NULL;
    char *buf = NULL;
    size_t n = 0;
    kedr_status s = kedr_file_read(path, KEDR_INI_MAX_BYTES, &buf, &n);
    if (s != KEDR_OK) {
        /* A file over the limit is told in bytes (the limit is a round number of them). */
        char msg[1024];
        uint64_t size;
        snprintf(msg, sizeof msg, "%s", kedr_last_error());
        if (kedr_file_size(path, &size) == KEDR_OK && size > KEDR_INI_MAX_BYTES)
            return kedr_fail(s, "%s: %llu bytes, more than the %zu bytes a case file may hold",
                             path, (unsigned long long)size, KEDR_INI_MAX_BYTES);
        return kedr_fail(s, "%s", msg);
    }
    if (strlen(buf) != n) {
        free(buf);
        return kedr_fail(KEDR_ERR_PARSE, "%s: contains a NUL byte (not a text file?)", path);
    }
    return parse_text(buf, n, path, out);
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

/* Records a name a getter asked about (h: its name_hash), for kedr_ini_finish's suggestions. */
static void remember(kedr_ini *ini, uint32_t h, const char *section, const char *key)
{
    if (table_find(ini, &ini->known_index, h, same_known, section, key) >= 0)
        return;
    if (ini->nknown == ini->cap_known) {
        void *p = grow(ini->known, &ini->cap_known, sizeof *ini->known);
        if (!p)
            return; /* suggestions are a courtesy; losing one is harmless */
        ini->known = p;
    }
    size_t ls = strlen(section) + 1, lk = key ? strlen(key) + 1 : 0;
    char *names = malloc(ls + lk);
    if (!names)
        return;
    memcpy(names, section, ls);
    if (key)
        memcpy(names + ls, key, lk);
    if (!table_add(&ini->known_index, h, ini->nknown)) {
        free(names);
        return;
    }
    ini->known[ini->nknown++] = (ini_known){names, key ? names + ls : NULL, h};
}

/* Marks a section known and used; its index or -1. */
static int use_section(kedr_ini *ini, const char *section)
{
    uint32_t h = name_hash(ini, section, NULL);
    remember(ini, h, section, NULL);
    int s = table_find(ini, &ini->section_index, h, same_section, section, NULL);
    if (s >= 0)
        ini->sections[s].used = 1;
    return s;
}

/* The entry for a getter: marks section and key known and used. NULL when absent. */
static ini_entry *lookup(kedr_ini *ini, const char *section, const char *key)
{
    int s = use_section(ini, section);
    uint32_t h = name_hash(ini, section, key);
    remember(ini, h, section, key);
    int i = s >= 0 ? table_find(ini, &ini->entry_index, h, same_entry, section, key) : -1;
    if (i < 0)
        return NULL;
    ini->entries[i].used = 1;
    return &ini->entries[i];
}

int kedr_ini_has_section(kedr_ini *ini, const char *section)
{
    return use_section(ini, section) >= 0;
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

static int is_family_word(const char *w, size_t n)
{
    static const char *const words[] = {"x", "y", "z", "min", "max", "lo", "hi", "in", "out"};
    size_t digits = 0;
    while (digits < n && isdigit((unsigned char)w[digits]))
        digits++;
    if (n > 0 && digits == n)
        return 1;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strlen(words[i]) == n && strncasecmp(w, words[i], n) == 0)
            return 1;
    return 0;
}

/* Whether a and b are names of one family (velocity_x and velocity_y, x_min and x_max, body and
 * body2): both are likely real names, so neither is offered as a misspelling of the other. Word
 * by word (words end at '_', '.' or '-'), the names are the same, or differ in axes, bounds or
 * numbers (trailing digits included), or one has such a word more at the end. */
static int same_family(const char *a, const char *b)
{
    while (*a || *b) {
        size_t la = strcspn(a, "_.-"), lb = strcspn(b, "_.-"), sa = la, sb = lb;
        while (sa && isdigit((unsigned char)a[sa - 1]))
            sa--;
        while (sb && isdigit((unsigned char)b[sb - 1]))
            sb--;
        int kin = sa == sb && strncasecmp(a, b, sa) == 0;
        int kind = (la == 0 || is_family_word(a, la)) && (lb == 0 || is_family_word(b, lb));
        if (!kin && !kind)
            return 0;
        a += la + (a[la] != 0);
        b += lb + (b[lb] != 0);
    }
    return 1;
}

/* The slips of the keyboard that short names are allowed: a doubled letter (nxx for nx) or two
 * neighbours swapped (gird for grid). */
static int slip(const char *found, const char *wanted)
{
    size_t lf = strlen(found), lw = strlen(wanted), i = 0;
    while (i < lw && tolower((unsigned char)found[i]) == tolower((unsigned char)wanted[i]))
        i++;
    if (lf == lw + 1)
        return i > 0 && tolower((unsigned char)found[i]) == tolower((unsigned char)found[i - 1]) &&
               strcasecmp(found + i + 1, wanted + i) == 0;
    return lf == lw && i + 1 < lw &&
           tolower((unsigned char)found[i]) == tolower((unsigned char)wanted[i + 1]) &&
           tolower((unsigned char)found[i + 1]) == tolower((unsigned char)wanted[i]) &&
           strcasecmp(found + i + 2, wanted + i + 2) == 0;
}

/* The distance from the name found to the name wanted when it could be a misspelling of it,
 * judged before the reader has asked for every name, else -1: at most a quarter of the longer
 * name's length beyond 2 (so that no short name is taken for another, such as T_ref for d_ref)
 * or a slip, and not of the same family. */
static int typo_distance(const char *found, const char *wanted)
{
    size_t lf = strlen(found), lw = strlen(wanted), l = lf > lw ? lf : lw;
    size_t limit = l > 2 ? (l - 2) / 4 : 0;
    if ((lf > lw ? lf - lw : lw - lf) > (limit > 1 ? limit : 1))
        return -1; /* too far by length alone: the common case, and quick */
    int d = kedr_ini_distance(found, wanted);
    int close = d <= (int)limit || slip(found, wanted);
    return close && !same_family(found, wanted) ? d : -1;
}

/* When the file lacks [section] (or its key) but holds a close misspelling of it among the names
 * no getter asked for: KEDR_ERR_PARSE naming the misspelling and its line. KEDR_OK otherwise. */
static kedr_status misspelled(const kedr_ini *ini, const char *section, const char *key)
{
    int s = find_section(ini, section), best = -1, bestd = 1 << 30;
    if (s >= 0) {
        const ini_section *sec = &ini->sections[s];
        if (!key || find_entry(ini, section, key))
            return KEDR_OK;
        for (int i = sec->first; i < sec->first + sec->count; i++) {
            int d = ini->entries[i].used ? -1 : typo_distance(ini->entries[i].key, key);
            if (d >= 0 && d < bestd)
                bestd = d, best = i;
        }
        if (best < 0)
            return KEDR_OK;
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] unknown key '%s' (did you mean '%s'?)",
                         ini->name, ini->entries[best].line, section, ini->entries[best].key, key);
    }
    for (int i = 0; i < ini->nsections; i++) {
        int d = ini->sections[i].used ? -1 : typo_distance(ini->sections[i].name, section);
        if (d >= 0 && d < bestd)
            bestd = d, best = i;
    }
    if (best < 0)
        return KEDR_OK;
    return kedr_fail(KEDR_ERR_PARSE, "%s:%d: unknown section [%s] (did you mean [%s]?)", ini->name,
                     ini->sections[best].line, ini->sections[best].name, section);
}

/* A required key that is absent: its misspelling in the file, or what is missing. */
static kedr_status missing(const kedr_ini *ini, const char *section, const char *key,
                           const char *expected)
{
    KEDR_TRY(misspelled(ini, section, key));
    int line = kedr_ini_line(ini, section, NULL);
    if (line)
        return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] lacks the required key '%s' (%s)", ini->name,
                         line, section, key, expected);
    return kedr_fail(KEDR_ERR_PARSE, "%s: missing section [%s] with the required key '%s' (%s)",
                     ini->name, section, key, expected);
}

/* An error about a name the file lacks is first an error about its misspelling, when the file
 * holds one (a module that checks optional keys itself then reports [freestrem] as such). */
kedr_status kedr_ini_fail(const kedr_ini *ini, const char *section, const char *key,
                          const char *fmt, ...)
{
    KEDR_TRY(misspelled(ini, section, key));
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

static kedr_status bad_value(const kedr_ini *ini, const char *section, const ini_entry *e,
                             const char *expected)
{
    size_t n = strlen(e->value);
    return kedr_fail(KEDR_ERR_PARSE, "%s:%d: [%s] %s = %.*s%s: expected %s", ini->name, e->line,
                     section, e->key, CLIP(n), e->value, MORE(n), expected);
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
        if (len + 1 >= size)
            break;
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
