/* Files as untrusted input and safe replacement of outputs: bounded reads of regular files only,
 * writes to PATH.tmp renamed over PATH, JSON strings escaped. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

kedr_status kedr_file_size(const char *path, uint64_t *bytes)
{
    struct stat st;
    if (!path || !bytes)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_file_size: %s is NULL", path ? "bytes" : "path");
    if (stat(path, &st) != 0)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return kedr_fail(KEDR_ERR_IO, "%s: is %s; expected a regular file", path,
                         kind_of(st.st_mode));
    *bytes = (uint64_t)st.st_size;
    return KEDR_OK;
}

kedr_status kedr_file_read(const char *path, size_t max_bytes, char **data, size_t *len)
{
    if (!path || !data)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_file_read: %s is NULL", path ? "data" : "path");
    *data = NULL;
    if (len)
        *len = 0;
    /* Opened without blocking, so that a FIFO is refused rather than waited on; the checks are
     * made on the descriptor, so the file cannot be swapped between check and read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return kedr_fail(KEDR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        kedr_status s = kedr_fail(KEDR_ERR_IO, "%s: is %s; expected a regular file", path,
                                  kind_of(st.st_mode));
        close(fd);
        return s;
    }
    if ((uint64_t)st.st_size > max_bytes) {
        kedr_status s = kedr_fail(KEDR_ERR_IO, "%s: %llu bytes, more than the %llu bytes expected "
                                  "at most", path, (unsigned long long)st.st_size,
                                  (unsigned long long)max_bytes);
        close(fd);
        return s;
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of memory for %zu bytes", path, n + 1);
    }
    /* Reads until end of file, never past n: a file that grows while read is cut at its size
     * when opened. */
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            kedr_status s = kedr_fail(KEDR_ERR_IO, "%s: read error: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return s;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    *data = buf;
    if (len)
        *len = got;
    return KEDR_OK;
}

/* The path to replace: a symbolic link's final target, so that the link survives. */
static char *target_of(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *real = realpath(path, NULL);
        if (real)
            return real;
    }
    return strdup(path);
}

/* PATH must be a regular file or absent, in a directory that exists. */
static kedr_status check_target(const char *path)
{
    struct stat st;
    if (!path || !*path)
        return kedr_fail(KEDR_ERR_INVALID, "an output path is empty");
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return kedr_fail(KEDR_ERR_IO, "%s: is %s; kedr writes outputs by replacing a regular "
                             "file, so give the path of a regular file or a new one", path,
                             kind_of(st.st_mode));
        return KEDR_OK;
    }
    if (errno != ENOENT)
        return kedr_fail(KEDR_ERR_IO, "%s: %s", path, strerror(errno));
    return KEDR_OK;
}

kedr_status kedr_file_check_writable(const char *path)
{
    KEDR_TRY(check_target(path));
    char *dir = strdup(path);
    if (!dir)
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of memory", path);
    char *slash = strrchr(dir, '/');
    const char *d = slash ? (slash == dir ? "/" : (*slash = 0, dir)) : ".";
    struct stat st;
    kedr_status s = KEDR_OK;
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
        s = kedr_fail(KEDR_ERR_IO, "%s: directory %s does not exist", path, d);
    else if (access(d, W_OK) != 0)
        s = kedr_fail(KEDR_ERR_IO, "%s: cannot write in directory %s: %s", path, d,
                      strerror(errno));
    free(dir);
    return s;
}

kedr_status kedr_file_begin(kedr_file_writer *w, const char *path)
{
    if (!w)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_file_begin: w is NULL");
    memset(w, 0, sizeof *w);
    KEDR_TRY(check_target(path));
    w->path = target_of(path);
    size_t n = w->path ? strlen(w->path) : 0;
    w->tmp = w->path ? malloc(n + 5) : NULL;
    if (!w->tmp) {
        free(w->path);
        w->path = NULL;
        return kedr_fail(KEDR_ERR_NOMEM, "%s: out of memory", path);
    }
    memcpy(w->tmp, w->path, n);
    memcpy(w->tmp + n, ".tmp", 5);
    /* A leftover PATH.tmp is replaced only when it is a regular file or a link (never followed:
     * the new one is created exclusively). */
    struct stat st;
    if (lstat(w->tmp, &st) == 0) {
        if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
            kedr_status s = kedr_fail(KEDR_ERR_IO, "%s: is %s; it is in the way of writing %s",
                                      w->tmp, kind_of(st.st_mode), w->path);
            free(w->path);
            free(w->tmp);
            memset(w, 0, sizeof *w);
            return s;
        }
        unlink(w->tmp);
    }
    int fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        kedr_status s = kedr_fail(KEDR_ERR_IO, "%s: cannot create: %s", w->tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(w->tmp);
        }
        free(w->path);
        free(w->tmp);
        memset(w, 0, sizeof *w);
        return s;
    }
    w->file = f;
    return KEDR_OK;
}

/* The directory entry of a rename is durable once its directory is synced. Best effort: some
 * file systems refuse to sync a directory, and the data itself is already on disk. */
static void sync_directory(const char *path)
{
    char *dir = strdup(path);
    if (!dir)
        return;
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = 0;
    else if (slash)
        *slash = 0;
    int fd = open(slash ? dir : ".", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

static void release(kedr_file_writer *w)
{
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
}

kedr_status kedr_file_commit(kedr_file_writer *w)
{
    if (!w || !w->file)
        return kedr_fail(KEDR_ERR_INVALID, "kedr_file_commit: no file was begun");
    FILE *f = w->file;
    int err = ferror(f) || fflush(f) != 0 ? errno : 0;
    if (!err && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
        err = errno;
    if (fclose(f) != 0 && !err)
        err = errno;
    w->file = NULL;
    kedr_status s = KEDR_OK;
    if (err)
        s = kedr_fail(KEDR_ERR_IO, "%s: write error: %s", w->tmp, strerror(err ? err : EIO));
    else if (check_target(w->path) != KEDR_OK) /* became something else meanwhile */
        s = KEDR_ERR_IO;
    else if (rename(w->tmp, w->path) != 0)
        s = kedr_fail(KEDR_ERR_IO, "%s: cannot rename %s to it: %s", w->path, w->tmp,
                      strerror(errno));
    if (s == KEDR_OK)
        sync_directory(w->path);
    else
        unlink(w->tmp);
    release(w);
    return s;
}

void kedr_file_abort(kedr_file_writer *w)
{
    if (!w)
        return;
    if (w->file) {
        fclose(w->file);
        unlink(w->tmp);
    }
    release(w);
}

/* Length of the valid UTF-8 sequence at p (0 when it is not one). */
static int utf8_length(const unsigned char *p)
{
    int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    if (p[0] >= 0xf5)
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* overlong forms, surrogates and code points past U+10FFFF */
    if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
        (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

void kedr_json_string(void *file, const char *s)
{
    FILE *f = file;
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        unsigned char c = *p;
        if (c >= 0x80) {
            int n = utf8_length(p);
            if (n)
                fwrite(p, 1, (size_t)n, f);
            else
                fputs("\\ufffd", f); /* not UTF-8: the replacement character */
            p += n ? n : 1;
            continue;
        }
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f);
        }
        p++;
    }
    fputc('"', f);
}
