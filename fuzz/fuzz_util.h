/* fuzz_util.h — what every libFuzzer target in fuzz/ shares.
 *
 * The readers under test take paths, so each target writes its input into a file of a private
 * directory (one per process, created on first use under $TMPDIR or /tmp, removed at exit) and
 * calls the real reader of cgnn_core on it. Fixture files a target needs beside its input are
 * written once, with the library's own writers (npy_write).
 *
 * The oracle (fuzz_check): a reader that fails on bad bytes must return -1 with a
 * CGNN_ERR_INPUT message that names the file it read; anything else (another code, an empty
 * message, a message that names no file) aborts, and libFuzzer reports it as a crash. Crashes,
 * hangs (-timeout), unbounded memory (-rss_limit_mb / -malloc_limit_mb), leaks (LeakSanitizer)
 * and undefined behaviour (UBSan, no recovery) are reported by the fuzzer and the sanitizers.
 */
#ifndef CGNN_FUZZ_UTIL_H
#define CGNN_FUZZ_UTIL_H

#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"
#include "util/err.h"

static char fuzz_dir_[4096];

static int fuzz_rm_entry_(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void fuzz_rm_dir_(void) {
    if (fuzz_dir_[0]) nftw(fuzz_dir_, fuzz_rm_entry_, 16, FTW_DEPTH | FTW_PHYS);
}

/* The private directory of this process (created on the first call). */
static inline const char *fuzz_dir(void) {
    if (fuzz_dir_[0]) return fuzz_dir_;
    const char *base = getenv("TMPDIR");
    snprintf(fuzz_dir_, sizeof fuzz_dir_, "%s/cgnn-fuzz-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(fuzz_dir_)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(fuzz_rm_dir_);
    return fuzz_dir_;
}

/* out[4096] = "<fuzz_dir>/name". */
static inline void fuzz_path(char *out, const char *name) {
    snprintf(out, 4096, "%s/%s", fuzz_dir(), name);
}

/* Writes bytes to <fuzz_dir>/name (replacing it) and puts the path in out[4096]. A harness
 * failure (disk full) aborts: it is not a finding, but must not pass silently either. */
static inline void fuzz_write(const char *name, const void *bytes, size_t len, char *out) {
    fuzz_path(out, name);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const char *p = bytes;
    size_t left = len;
    while (fd >= 0 && left > 0) {
        ssize_t w = write(fd, p, left);
        if (w <= 0) break;
        p += w;
        left -= (size_t)w;
    }
    if (fd < 0 || left != 0 || close(fd) != 0) {
        perror("fuzz: writing the input file");
        abort();
    }
}

/* Writes a C-order fixture array to <fuzz_dir>/name with npy_write. */
static inline void fuzz_write_npy(const char *name, npy_dtype dtype, int ndim, int64_t d0, int64_t d1,
                                  const void *data) {
    char path[4096];
    fuzz_path(path, name);
    int64_t shape[2] = {d0, d1};
    cgnn_err err = {0};
    if (npy_write(path, dtype, ndim, shape, data, &err) != 0) {
        fprintf(stderr, "fuzz: fixture %s: %s\n", path, err.msg);
        abort();
    }
}

/* The oracle for one call of a reader: rc 0, or rc -1 with a CGNN_ERR_INPUT message that
 * contains `names` (the file, or the directory the files are in). */
static inline void fuzz_check(int rc, const cgnn_err *err, const char *names) {
    if (rc == 0) return;
    if (rc != -1 || err->code != CGNN_ERR_INPUT || !err->msg[0] || !strstr(err->msg, names)) {
        fprintf(stderr, "fuzz: bad error report: rc %d, code %d (want %d), message '%s' (should name '%s')\n",
                rc, err->code, CGNN_ERR_INPUT, err->msg, names);
        abort();
    }
}

/* Aborts with a message when an invariant a successful read promises does not hold. */
#define FUZZ_ASSERT(cond)                                                                      \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz: %s:%d: invariant failed after a successful read: %s\n",     \
                    __FILE__, __LINE__, #cond);                                                \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

#endif
