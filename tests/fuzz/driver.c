/* The seeded mutation driver for the fuzz harnesses (the build without libFuzzer): starts from
 * the harness's valid seeds and any files named on the command line, and tries inputs made by
 * 1 to 8 random edits (bit flips, bytes set to boundary values, 16/32/64-bit integers at the
 * edges of their ranges, insertions, deletions, duplicated or spliced runs). Input number I of
 * seed S is the same on every machine: `fuzz_NAME --seed S --only I` replays a finding, and
 * --save FILE writes it for a debugger.
 *
 * A finding ends the run with a non-zero status: a crash or sanitizer report (the process dies),
 * an input that runs longer than --timeout seconds, or (under AddressSanitizer) one allocation
 * over KEDR_FUZZ_MALLOC_LIMIT. */
#define _GNU_SOURCE
#include "fuzz.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define KEDR_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEDR_FUZZ_ASAN 1
#endif
#endif

#define MAX_INPUT (1u << 20)
#define MAX_SEEDS 256

typedef struct {
    unsigned char *data;
    size_t size;
} input;

static input seeds[MAX_SEEDS];
static int nseeds;
static long current = -1;        /* the input being tried, for the messages of a finding */
static unsigned long long seed0;

static void add_seed(const void *data, size_t size)
{
    if (nseeds == MAX_SEEDS || size > MAX_INPUT)
        return;
    seeds[nseeds].data = malloc(size ? size : 1);
    if (!seeds[nseeds].data)
        return;
    memcpy(seeds[nseeds].data, data, size);
    seeds[nseeds++].size = size;
}

/* splitmix64: the mutations' own generator, independent of the library's. */
static unsigned long long rnd_state;
static unsigned long long rnd(void)
{
    unsigned long long z = (rnd_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static const unsigned long long edges[] = {
    0, 1, 2, 7, 8, 16, 31, 32, 33, 63, 64, 100, 127, 128, 255, 256, 1000, 1024, 4096, 65535, 65536,
    0x7fffffffull, 0x80000000ull, 0xffffffffull, 0x100000000ull, 0x7fffffffffffffffull,
    0x8000000000000000ull, 0xffffffffffffffffull, 0xfffffffffffffffeull, 0x3ff0000000000000ull,
    0x7ff0000000000000ull /* inf */, 0x7ff8000000000000ull /* NaN */, 0xbff0000000000000ull,
    0x7fefffffffffffffull /* DBL_MAX */};
static const char *tokens[] = {"=", "\n", "[", "]", "#", ";", " ", "0", "-1", "1e308", "nan", "inf",
                               "-inf", "1e-320", "0x10", "auto", ":", ",", "*", "^", "(", ")",
                               "99999999999999999999", "\"", "\\", "\t", "\r\n"};

/* Moves buf[at..len) k bytes up, making room for k bytes at at. */
static void open_gap(unsigned char *buf, size_t len, size_t at, size_t k)
{
    for (size_t i = len; i > at; i--)
        buf[i - 1 + k] = buf[i - 1];
}

/* Grows or shrinks buf to n bytes (n <= MAX_INPUT). */
static void edit(unsigned char *buf, size_t *n)
{
    size_t len = *n;
    switch (below(9)) {
    case 0: /* flip a bit */
        if (len)
            buf[below(len)] ^= (unsigned char)(1u << below(8));
        break;
    case 1: /* a byte to a boundary or random value */
        if (len)
            buf[below(len)] = (unsigned char)(below(2) ? edges[below(16)] : rnd());
        break;
    case 2: { /* an integer or double of 2, 4 or 8 bytes at its edge, maybe negated */
        size_t w = (size_t)1 << (1 + below(3));
        if (len < w)
            break;
        unsigned long long v = edges[below(sizeof edges / sizeof *edges)];
        if (below(4) == 0)
            v = 0 - v;
        if (below(4) == 0)
            v += below(5) - 2;
        memcpy(buf + below(len - w + 1), &v, w);
        break;
    }
    case 3: { /* insert random bytes */
        size_t k = 1 + below(below(4) ? 8 : 256);
        if (len + k > MAX_INPUT)
            break;
        size_t at = below(len + 1);
        open_gap(buf, len, at, k);
        for (size_t i = 0; i < k; i++)
            buf[at + i] = (unsigned char)rnd();
        len += k;
        break;
    }
    case 4: { /* delete a run */
        if (!len)
            break;
        size_t at = below(len), k = 1 + below(below(4) ? 8 : len - at);
        if (k > len - at)
            k = len - at;
        memmove(buf + at, buf + at + k, len - at - k);
        len -= k;
        break;
    }
    case 5: { /* duplicate a run somewhere else */
        if (!len)
            break;
        size_t from = below(len), k = 1 + below(len - from);
        if (len + k > MAX_INPUT)
            break;
        size_t at = below(len + 1);
        open_gap(buf, len, at, k);
        memmove(buf + at, buf + (from >= at ? from + k : from), k);
        len += k;
        break;
    }
    case 6: { /* splice in a run of another seed */
        const input *o = &seeds[below((size_t)nseeds)];
        if (!o->size)
            break;
        size_t from = below(o->size), k = 1 + below(o->size - from);
        if (k > 4096)
            k = 4096;
        size_t at = below(len + 1);
        if (at + k > MAX_INPUT)
            break;
        memcpy(buf + at, o->data + from, k);
        if (at + k > len)
            len = at + k;
        break;
    }
    case 7: { /* insert a token that text parsers treat specially */
        const char *t = tokens[below(sizeof tokens / sizeof *tokens)];
        size_t k = strlen(t), at = below(len + 1);
        if (len + k > MAX_INPUT)
            break;
        open_gap(buf, len, at, k);
        memcpy(buf + at, t, k);
        len += k;
        break;
    }
    case 8: /* cut the tail */
        len = below(len + 1);
        break;
    }
    *n = len;
}

/* Input number i: a seed (i < nseeds) or a seed edited 1 to 8 times. */
static size_t make_input(long i, unsigned char *buf)
{
    rnd_state = seed0 * 0x100000001b3ull + (unsigned long long)i;
    const input *s = &seeds[i < nseeds ? i : (long)below((size_t)nseeds)];
    size_t n = s->size;
    memcpy(buf, s->data, n);
    if (i >= nseeds)
        for (int k = 1 + (int)below(8); k > 0; k--)
            edit(buf, &n);
    return n;
}

static void on_alarm(int sig)
{
    (void)sig;
    char msg[160];
    int n = snprintf(msg, sizeof msg, "\nfuzz: input %ld (--seed %llu --only %ld) ran past the "
                     "time limit: a hang\n", current, seed0, current);
    ssize_t r = write(STDERR_FILENO, msg, (size_t)n);
    (void)r;
    _exit(3);
}

static void on_crash(int sig)
{
    char msg[160];
    int n = snprintf(msg, sizeof msg, "\nfuzz: input %ld (--seed %llu --only %ld) crashed "
                     "(signal %d)\n", current, seed0, current, sig);
    ssize_t r = write(STDERR_FILENO, msg, (size_t)n);
    (void)r;
    signal(sig, SIG_DFL);
    raise(sig);
}

#ifdef KEDR_FUZZ_ASAN
/* AddressSanitizer reports every allocation to this hook: one past the limit is a finding. */
void __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
                                               void (*)(const volatile void *));
static void on_malloc(const volatile void *p, size_t size)
{
    (void)p;
    if (size > KEDR_FUZZ_MALLOC_LIMIT && current >= 0) {
        fprintf(stderr, "\nfuzz: input %ld (--seed %llu --only %ld) allocated %zu bytes at once "
                "(limit %zu): an allocation sized by the input without a check\n", current,
                seed0, current, size, KEDR_FUZZ_MALLOC_LIMIT);
        abort();
    }
}
static void on_free(const volatile void *p) { (void)p; }
#endif

static int load_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MAX_INPUT) {
        fprintf(stderr, "fuzz: %s: expected a regular file of at most %u bytes\n", path,
                MAX_INPUT);
        return -1;
    }
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    size_t n = f && buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    if (f)
        fclose(f);
    if (!buf || n != (size_t)st.st_size) {
        fprintf(stderr, "fuzz: %s: cannot read\n", path);
        free(buf);
        return -1;
    }
    add_seed(buf, n);
    free(buf);
    return 0;
}

static int write_seeds(const char *dir)
{
    for (int i = 0; i < nseeds; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed-%03d", dir, i);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(seeds[i].data, 1, seeds[i].size, f) != seeds[i].size || fclose(f)) {
            fprintf(stderr, "fuzz: cannot write %s\n", path);
            return 1;
        }
    }
    printf("fuzz: %d seeds written to %s\n", nseeds, dir);
    return 0;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [--runs N] [--seconds T] [--seed S] [--timeout T] [--only I [--save FILE]]\n"
            "          [--write-seeds DIR] [FILE ...]\n"
            "  tries the harness's seeds and FILEs, then N inputs made from them by random edits\n"
            "  (default 10000), stopping early after T seconds (default: no limit)\n",
            prog);
}

int main(int argc, char **argv)
{
    long runs = 10000, only = -1;
    double seconds = 0;
    unsigned timeout = 20;
    const char *save = NULL, *seeds_dir = NULL;
    kedr_fuzz_seeds(add_seed);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "--runs") || !strcmp(a, "--seconds") || !strcmp(a, "--seed") ||
                    !strcmp(a, "--timeout") || !strcmp(a, "--only") || !strcmp(a, "--save") ||
                    !strcmp(a, "--write-seeds");
        if (takes && !v) {
            fprintf(stderr, "fuzz: %s needs a value\n", a);
            return 2;
        }
        char *end = NULL;
        if (!strcmp(a, "--runs"))
            runs = strtol(v, &end, 10);
        else if (!strcmp(a, "--seconds"))
            seconds = strtod(v, &end);
        else if (!strcmp(a, "--seed"))
            seed0 = strtoull(v, &end, 10);
        else if (!strcmp(a, "--timeout"))
            timeout = (unsigned)strtoul(v, &end, 10);
        else if (!strcmp(a, "--only"))
            only = strtol(v, &end, 10);
        else if (!strcmp(a, "--save"))
            save = v;
        else if (!strcmp(a, "--write-seeds"))
            seeds_dir = v;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(argv[0]);
            return 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "fuzz: unknown option %s\n", a);
            usage(argv[0]);
            return 2;
        } else if (load_file(a) != 0)
            return 2;
        if (takes) {
            if (end && *end) {
                fprintf(stderr, "fuzz: %s %s: expected a number\n", a, v);
                return 2;
            }
            i++;
        }
    }
    if (nseeds == 0) {
        fprintf(stderr, "fuzz: the harness gave no seeds and no file was named\n");
        return 2;
    }
    if (seeds_dir)
        return write_seeds(seeds_dir);

    unsigned char *buf = malloc(MAX_INPUT);
    if (!buf)
        return 2;
    signal(SIGALRM, on_alarm);
#ifndef KEDR_FUZZ_ASAN
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGILL, on_crash);
#else
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#endif
    signal(SIGABRT, on_crash);

    if (only >= 0) {
        size_t n = make_input(only, buf);
        if (save) {
            FILE *f = fopen(save, "wb");
            if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
                fprintf(stderr, "fuzz: cannot write %s\n", save);
                free(buf);
                return 2;
            }
        }
        current = only;
        alarm(timeout);
        LLVMFuzzerTestOneInput(buf, n);
        alarm(0);
        printf("fuzz: input %ld (%zu bytes) passed\n", only, n);
        free(buf);
        return 0;
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long total = nseeds + runs, done = 0;
    for (long i = 0; i < total; i++) {
        size_t n = make_input(i, buf);
        current = i;
        alarm(timeout);
        LLVMFuzzerTestOneInput(buf, n);
        alarm(0);
        done++;
        if (seconds > 0 && (i & 15) == 15) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > seconds)
                break;
        }
    }
    current = -1;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double el = (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec);
    printf("fuzz: %ld inputs (%d seeds, seed %llu) in %.1f s: no crash, hang or unbounded "
           "allocation\n", done, nseeds, seed0, el);
    free(buf);
    return 0;
}
