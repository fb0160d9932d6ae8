/* kedr core: status codes, contexts (one per back end), buffers, timers, logging, progress. */
#ifndef KEDR_CORE_H
#define KEDR_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------------------------ */

typedef enum {
    KEDR_OK = 0,
    KEDR_ERR_INVALID,     /* a bad argument: the message names it and what was expected */
    KEDR_ERR_NOMEM,       /* out of host or device memory: the message says how much was asked */
    KEDR_ERR_CUDA,        /* a CUDA runtime error */
    KEDR_ERR_UNSUPPORTED, /* not available in this build or for this type */
    KEDR_ERR_IO,          /* a file could not be read or written */
    KEDR_ERR_PARSE,       /* malformed input text: the message names file, line and key */
    KEDR_ERR_INTERRUPTED  /* stopped by Ctrl-C or SIGTERM after saving what it had (kedr_interrupted) */
} kedr_status;

/* The message of the last failure on this thread ("" when none). */
const char *kedr_last_error(void);
const char *kedr_status_name(kedr_status s);
/* Records a formatted message for kedr_last_error() and returns s, so that
 * `return kedr_fail(KEDR_ERR_INVALID, "n = %zu: expected ...", n);` reads as one statement. */
kedr_status kedr_fail(kedr_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define KEDR_TRY(expr)                        \
    do {                                      \
        kedr_status kedr_try_s_ = (expr);     \
        if (kedr_try_s_ != KEDR_OK)           \
            return kedr_try_s_;               \
    } while (0)

/* Writes a byte count for people: "512 kB", "3.27 GB" (decimal units). Returns buf. */
char *kedr_format_bytes(double bytes, char *buf, size_t len);

/* ---- data types and operators shared by the primitives ----------------------------------- */

typedef enum { KEDR_U32, KEDR_U64, KEDR_I32, KEDR_F32, KEDR_F64 } kedr_dtype;
typedef enum { KEDR_OP_SUM, KEDR_OP_MIN, KEDR_OP_MAX } kedr_op;

size_t kedr_dtype_size(kedr_dtype t);
const char *kedr_dtype_name(kedr_dtype t);
const char *kedr_op_name(kedr_op op);

/* ---- back ends and contexts --------------------------------------------------------------- */

typedef enum { KEDR_BACKEND_CPU = 0, KEDR_BACKEND_CUDA = 1, KEDR_BACKEND_AUTO = 2 } kedr_backend;

const char *kedr_backend_name(kedr_backend b);
/* Parses "cpu", "cuda" or "auto"; KEDR_ERR_INVALID names the text otherwise. */
kedr_status kedr_backend_parse(const char *text, kedr_backend *out);
/* 1 when the back end is compiled in and usable here (for cuda: a GPU is present). */
int kedr_backend_available(kedr_backend b);

typedef struct kedr_ctx kedr_ctx;

/* A context owns memory on one back end. AUTO picks cuda when a GPU is present, else cpu.
 * device selects the GPU (ignored for cpu). */
kedr_status kedr_ctx_create(kedr_ctx **ctx, kedr_backend backend, int device);
void kedr_ctx_destroy(kedr_ctx *ctx);
kedr_backend kedr_ctx_backend(const kedr_ctx *ctx);
int kedr_ctx_device(const kedr_ctx *ctx);
/* Threads the cpu back end uses (OpenMP); 1 for cuda. */
int kedr_ctx_threads(const kedr_ctx *ctx);
/* How the cpu back end's OpenMP threads wait at barriers, as the runtime read it when the
 * program was loaded, in words for people and records: "OMP_WAIT_POLICY=passive (kedr's
 * default)", "OMP_WAIT_POLICY=active (the user's)", "GOMP_SPINCOUNT=1000 (the user's)", or "the OpenMP runtime's default (spin, then
 * sleep)". The kedr program sets OMP_WAIT_POLICY=passive when the user set neither variable, and
 * marks the environment with KEDR_WAIT_POLICY_MARK; other programs choose for themselves
 * (docs/performance.md: passive unless the machine is yours alone). */
const char *kedr_wait_policy(char *buf, size_t size);
#define KEDR_WAIT_POLICY_MARK "KEDR_WAIT_POLICY_DEFAULT"
/* Waits until all work queued on the context is done. */
kedr_status kedr_ctx_sync(kedr_ctx *ctx);

/* Buffers in the context's memory (host for cpu, device for cuda). kedr_alloc of 0 bytes gives
 * a valid pointer that must not be dereferenced. */
kedr_status kedr_alloc(kedr_ctx *ctx, void **ptr, size_t bytes);
void kedr_free(kedr_ctx *ctx, void *ptr);
/* Copies between host memory and the context's memory, and within the context's memory. */
kedr_status kedr_upload(kedr_ctx *ctx, void *dst, const void *host_src, size_t bytes);
kedr_status kedr_download(kedr_ctx *ctx, void *host_dst, const void *src, size_t bytes);
kedr_status kedr_copy(kedr_ctx *ctx, void *dst, const void *src, size_t bytes);
kedr_status kedr_memset(kedr_ctx *ctx, void *dst, int byte, size_t bytes);
/* Host memory for staging copies to and from the context: page-locked (pinned) for cuda, so that
 * kedr_upload and kedr_download run at the link's speed, plain (64-byte aligned) for cpu. Pinning
 * is slow: keep such a buffer and reuse it. Free it with kedr_host_free on the same context. */
kedr_status kedr_host_alloc(kedr_ctx *ctx, void **ptr, size_t bytes);
void kedr_host_free(kedr_ctx *ctx, void *ptr);

/* Scratch memory for the primitives: kept in a small cache by the context, so repeated calls of
 * one primitive do not pay for allocation. Release every block taken. */
kedr_status kedr_scratch_get(kedr_ctx *ctx, void **ptr, size_t bytes);
void kedr_scratch_put(kedr_ctx *ctx, void *ptr);
/* Bytes the scratch cache holds (in use or cached). */
size_t kedr_scratch_held(const kedr_ctx *ctx);
/* Frees the cached scratch blocks. */
void kedr_scratch_trim(kedr_ctx *ctx);

/* ---- devices ------------------------------------------------------------------------------ */

typedef struct {
    char name[256];
    int multiprocessors;
    size_t memory_bytes;
    size_t l2_bytes;
    int major, minor;
    double memory_clock_khz;
    int memory_bus_bits;
} kedr_device_info;

/* Number of GPUs visible (0 without the cuda back end or without a GPU). */
int kedr_device_count(void);
kedr_status kedr_device_get_info(int device, kedr_device_info *info);

/* ---- timers ------------------------------------------------------------------------------- */

/* Times work on a context: CUDA events on a GPU, the monotonic clock on the cpu. */
typedef struct kedr_timer kedr_timer;
kedr_status kedr_timer_create(kedr_ctx *ctx, kedr_timer **timer);
void kedr_timer_destroy(kedr_timer *timer);
kedr_status kedr_timer_start(kedr_timer *timer);
/* Stops the timer, waits for the timed work and returns the elapsed seconds. */
kedr_status kedr_timer_stop(kedr_timer *timer, double *seconds);
/* Monotonic wall clock in seconds. */
double kedr_wall_seconds(void);

/* ---- logging ------------------------------------------------------------------------------ */

typedef enum { KEDR_LOG_ERROR = 0, KEDR_LOG_WARN, KEDR_LOG_INFO, KEDR_LOG_DEBUG } kedr_log_level;
void kedr_log_set_level(kedr_log_level level);
kedr_log_level kedr_log_get_level(void);
void kedr_log(kedr_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- progress ----------------------------------------------------------------------------- */

/* A progress line for long runs: on a terminal it redraws "label  done/total  rate  ETA" at most
 * a few times a second; elsewhere it stays quiet. */
typedef struct {
    const char *label;
    const char *unit;
    double total;
    double start, last_draw;
    int enabled;
} kedr_progress;

void kedr_progress_begin(kedr_progress *p, const char *label, const char *unit, double total);
void kedr_progress_update(kedr_progress *p, double done);
void kedr_progress_end(kedr_progress *p);

/* ---- files ------------------------------------------------------------------------------ */

/* Every file kedr reads is untrusted input, and every file it writes replaces the old one whole.
 * kedr_file_read reads a regular file of at most max_bytes into a NUL-terminated buffer (free it
 * with free()). Anything else (a FIFO, a device, a directory, a larger file) is refused with a
 * message naming the path and what was expected, before anything is allocated. */
kedr_status kedr_file_read(const char *path, size_t max_bytes, char **data, size_t *len);
/* The size of a regular file (KEDR_ERR_IO naming the path for anything else). */
kedr_status kedr_file_size(const char *path, uint64_t *bytes);

/* Writing a file safely: kedr_file_begin opens PATH.tmp; kedr_file_commit flushes it to disk
 * and renames it over PATH (a reader sees the old file or the new one, never half of one);
 * kedr_file_abort removes PATH.tmp. PATH must be a regular file or not exist: writing over a
 * device, FIFO or directory is refused (a symbolic link is followed and its target replaced).
 * No path is truncated. After a failed begin there is nothing to abort. */
typedef struct {
    void *file;       /* FILE * of PATH.tmp */
    char *path, *tmp; /* the target (symbolic links resolved) and PATH.tmp */
} kedr_file_writer;
kedr_status kedr_file_begin(kedr_file_writer *w, const char *path);
/* The stdio stream to write to, as FILE *. */
#define KEDR_FILE(w) ((FILE *)(w)->file)
kedr_status kedr_file_commit(kedr_file_writer *w);
void kedr_file_abort(kedr_file_writer *w);

/* Checks that PATH could be written by kedr_file_begin (regular or absent, directory exists),
 * without writing: for options checked before a long run starts. */
kedr_status kedr_file_check_writable(const char *path);

/* Writes s as a JSON string, quotes and escapes included, to a FILE *. */
void kedr_json_string(void *file, const char *s);

/* ---- interruption ------------------------------------------------------------------------- */

/* Ctrl-C (SIGINT) and SIGTERM for long runs: after kedr_interrupt_install the first signal only
 * sets a flag that kedr_interrupted() returns (the signal's number), so that a run can finish
 * its step, save a checkpoint and its outputs, and exit non-zero (KEDR_ERR_INTERRUPTED). A second
 * signal ends the program at once. */
void kedr_interrupt_install(void);
int kedr_interrupted(void);
/* Forgets a received signal (for tests and for programs that run several jobs). */
void kedr_interrupt_clear(void);

#ifdef __cplusplus
}
#endif
#endif
