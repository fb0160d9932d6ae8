/* Status codes and the per-thread message of the last failure. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

const char *kedr_last_error(void) { return last_error; }

kedr_status kedr_fail(kedr_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

const char *kedr_status_name(kedr_status s)
{
    switch (s) {
    case KEDR_OK: return "ok";
    case KEDR_ERR_INVALID: return "invalid argument";
    case KEDR_ERR_NOMEM: return "out of memory";
    case KEDR_ERR_CUDA: return "CUDA error";
    case KEDR_ERR_UNSUPPORTED: return "unsupported";
    case KEDR_ERR_IO: return "I/O error";
    case KEDR_ERR_PARSE: return "parse error";
    case KEDR_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

char *kedr_format_bytes(double b, char *buf, size_t len)
{
    if (b >= 1e15)
        snprintf(buf, len, "%.3g PB", b / 1e15);
    else if (b >= 1e12)
        snprintf(buf, len, "%.3g TB", b / 1e12);
    else if (b >= 1e9)
        snprintf(buf, len, "%.3g GB", b / 1e9);
    else if (b >= 1e6)
        snprintf(buf, len, "%.3g MB", b / 1e6);
    else
        snprintf(buf, len, "%.3g kB", b / 1e3);
    return buf;
}

size_t kedr_dtype_size(kedr_dtype t)
{
    switch (t) {
    case KEDR_U32: case KEDR_I32: case KEDR_F32: return 4;
    case KEDR_U64: case KEDR_F64: return 8;
    }
    return 0;
}

const char *kedr_dtype_name(kedr_dtype t)
{
    switch (t) {
    case KEDR_U32: return "u32";
    case KEDR_U64: return "u64";
    case KEDR_I32: return "i32";
    case KEDR_F32: return "f32";
    case KEDR_F64: return "f64";
    }
    return "?";
}

const char *kedr_op_name(kedr_op op)
{
    switch (op) {
    case KEDR_OP_SUM: return "sum";
    case KEDR_OP_MIN: return "min";
    case KEDR_OP_MAX: return "max";
    }
    return "?";
}

kedr_status kedr_check_ptr(const void *p, size_t n, const char *fn, const char *name)
{
    if (n > 0 && p == NULL)
        return kedr_fail(KEDR_ERR_INVALID, "%s: %s is NULL (n = %zu)", fn, name, n);
    return KEDR_OK;
}

kedr_status kedr_check_dtype(kedr_dtype t, unsigned allowed_mask, const char *fn, const char *arg)
{
    if ((unsigned)t > KEDR_F64 || !(allowed_mask & KEDR_TYPE_BIT(t))) {
        char list[64] = "";
        for (int k = KEDR_U32; k <= KEDR_F64; k++)
            if (allowed_mask & KEDR_TYPE_BIT(k)) {
                if (list[0])
                    snprintf(list + strlen(list), sizeof list - strlen(list), ", ");
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s",
                         kedr_dtype_name((kedr_dtype)k));
            }
        return kedr_fail(KEDR_ERR_UNSUPPORTED, "%s: %s type %s is not supported (expected %s)", fn,
                         arg, (unsigned)t > KEDR_F64 ? "(invalid)" : kedr_dtype_name(t), list);
    }
    return KEDR_OK;
}
