/* kedr case files: a small INI reader with typed, range-checked getters.
 *
 * Syntax: `[section]` lines open a section; `key = value` lines give a value; blank lines and
 * comments (from '#' or ';' to the end of the line) are ignored. Section and key names are
 * letters, digits and `_ . -` and are case-sensitive. Every key belongs to a section. A key given
 * twice in a section, or a section opened twice, is an error.
 *
 * A reader learns the keys it knows from the getters called on it: after reading everything,
 * kedr_ini_finish() reports the first key (or section) that no getter asked for, and suggests
 * the closest known name, so a misspelled key never passes silently. A required key that is
 * absent while the file holds a close misspelling of it (`temperatur` for `temperature`,
 * `[freestrem]` for `[freestream]`) reports that misspelling, its line and the name it stands for.
 * Every error message starts with FILE:LINE and names the section and key and what was expected.
 *
 * A case file is untrusted input: at most KEDR_INI_MAX_BYTES, a regular file (not a FIFO or a
 * device), and parsed and looked up in time linear in its size (names are hashed). */
#ifndef KEDR_INI_H
#define KEDR_INI_H

#include "kedr/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kedr_ini kedr_ini;

/* Flags of the getters. Without KEDR_INI_REQUIRED, an absent key leaves *value as it was (so
 * preset it to the default). Ranges [lo, hi] are inclusive unless LO_OPEN / HI_OPEN. */
#define KEDR_INI_REQUIRED 1u
#define KEDR_INI_LO_OPEN 2u
#define KEDR_INI_HI_OPEN 4u

/* The largest case file (and text) read: 16 MB, thousands of times the largest case shipped. */
#define KEDR_INI_MAX_BYTES ((size_t)16000000)

/* Reads and parses a file; KEDR_ERR_IO when it cannot be read, is not a regular file or is over
 * KEDR_INI_MAX_BYTES, KEDR_ERR_PARSE "FILE:LINE: ..." on a malformed line. */
kedr_status kedr_ini_load(const char *path, kedr_ini **ini);
/* Parses text (at most KEDR_INI_MAX_BYTES); name stands for the file in messages. */
kedr_status kedr_ini_parse(const char *text, const char *name, kedr_ini **ini);
void kedr_ini_free(kedr_ini *ini);

/* The file name given at load or parse time, and its directory ("." when none), used to find
 * files named relative to a case file. */
const char *kedr_ini_name(const kedr_ini *ini);
void kedr_ini_dir(const kedr_ini *ini, char *dir, size_t size);

/* Whether the section / key is present. kedr_ini_has marks the key known (not unused). */
int kedr_ini_has_section(kedr_ini *ini, const char *section);
int kedr_ini_has(kedr_ini *ini, const char *section, const char *key);
/* The line of a key (or, with key NULL, of a section header); 0 when absent. */
int kedr_ini_line(const kedr_ini *ini, const char *section, const char *key);
/* Sections in file order: kedr_ini_section(ini, i) for i < kedr_ini_sections(ini). */
int kedr_ini_sections(const kedr_ini *ini);
const char *kedr_ini_section(const kedr_ini *ini, int i);

/* Typed getters; KEDR_ERR_PARSE names FILE:LINE, [section] key, the text and what was
 * expected; a required key that is absent is KEDR_ERR_PARSE naming the file and section, or the
 * line of the misspelling the file holds instead ("did you mean ...?"). */
kedr_status kedr_ini_double(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                            double lo, double hi, double *value);
kedr_status kedr_ini_int(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                         int64_t lo, int64_t hi, int64_t *value);
/* true/false, yes/no, on/off, 1/0. */
kedr_status kedr_ini_bool(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                          int *value);
/* The value text, owned by ini. */
kedr_status kedr_ini_string(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                            const char **value);
/* One of the names (a NULL-terminated list): *index is its position; an unknown name suggests
 * the closest one. */
kedr_status kedr_ini_choice(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                            const char *const *names, int *index);
/* A list of numbers separated by spaces or commas, each in the range; *count (at most max) of
 * them are written. */
kedr_status kedr_ini_doubles(kedr_ini *ini, const char *section, const char *key, unsigned flags,
                             double lo, double hi, double *values, int max, int *count);

/* Reports the first key or section no getter asked for: "FILE:LINE: [grid] unknown key 'nxx'
 * (did you mean 'nx'?)". */
kedr_status kedr_ini_finish(kedr_ini *ini);

/* A semantic error about a key found in the file (for checks that span keys, such as a body
 * outside the domain): "FILE:LINE: [section] key: message". key may be NULL (the section). When
 * the file lacks the section (or the key) but holds a close misspelling of it, the error names
 * that misspelling instead, as a required getter would. */
kedr_status kedr_ini_fail(const kedr_ini *ini, const char *section, const char *key,
                          const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Levenshtein distance ignoring ASCII case (for suggestions; exposed for the tests). */
int kedr_ini_distance(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif
