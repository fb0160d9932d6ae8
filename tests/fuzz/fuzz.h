/* A fuzz harness: one file tests/fuzz/fuzz_NAME.c that defines both functions below. It is built
 * two ways: with driver.c, a seeded mutator that ctest runs (any compiler), and with clang's
 * libFuzzer for long coverage-guided campaigns (scripts/fuzz.sh, docs/reliability.md). A harness
 * must accept any input: the library may refuse it with an error, never crash, hang or allocate
 * without bound. */
#ifndef KEDR_FUZZ_H
#define KEDR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Tries one input. Returns 0 (libFuzzer's convention); a finding is a crash, not a value. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The valid inputs to start from (a small case file, a real checkpoint ...): calls add for each. */
void kedr_fuzz_seeds(void (*add)(const void *data, size_t size));

/* Largest single allocation a harness may make (bytes) before the driver calls it unbounded:
 * inputs are at most 1 MB, so anything near this means a size taken from the file unchecked. */
#define KEDR_FUZZ_MALLOC_LIMIT ((size_t)1 << 30)

/* A private temporary directory (one per process, removed at exit), for readers that take a
 * path; kedr_fuzz_write writes data to the file NAME in it and returns its path (valid until the
 * next call), or NULL when it cannot be written (the harness then skips the input). */
const char *kedr_fuzz_dir(void);
const char *kedr_fuzz_write(const char *name, const void *data, size_t size);

#endif
