/* err.h — error reporting for cgnn.
 *
 * Three tiers (STYLE.md):
 *   - bugs: CGNN_CHECK(cond), an assert that stays on in every build type;
 *   - bad input / I/O at the boundary: functions return -1 and fill a caller-owned
 *     cgnn_err with a message that names the file and the field or row;
 *   - only the CLI turns a cgnn_err into an exit status (err.code) and prints it.
 */
#ifndef CGNN_ERR_H
#define CGNN_ERR_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* Exit codes the CLI uses; err.code is one of these (0: success; the public API's CGNN_OK,
 * include/cgnn.h, whose error codes are these). */
enum {
    CGNN_ERR_RUNTIME = 1, /* a training/runtime failure (I/O error while writing, NaN loss, ...) */
    CGNN_ERR_INPUT = 2,   /* bad usage, config or data: the user must fix something */
};

typedef struct cgnn_err {
    int code;       /* CGNN_ERR_*; 0 while no error was set */
    char msg[1024]; /* "path: field: what is wrong" */
} cgnn_err;

/* Sets *err (if non-NULL) to code + formatted message. Always returns -1 so callers can
 * write `return err_set(err, CGNN_ERR_INPUT, "%s: ...", path);`. */
int err_set(cgnn_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message of *err with a formatted context ("while loading X: ").
 * Returns -1. */
int err_prefix(cgnn_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears *err. */
void err_clear(cgnn_err *err);

/* Fatal internal error: prints file:line and the message, aborts. For bugs only. */
_Noreturn void cgnn_panic(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An assert that is never compiled out: invariants of our own code, never input checks. */
#define CGNN_CHECK(cond)                                                                       \
    do {                                                                                       \
        if (!(cond)) cgnn_panic(__FILE__, __LINE__, "check failed: %s", #cond);                \
    } while (0)

/* Allocation that treats exhaustion as fatal (exit 1 with a clear message, never a crash).
 * Used for bookkeeping allocations; large data allocations check and return errors instead. */
void *cgnn_malloc(size_t bytes);
void *cgnn_calloc(size_t n, size_t size);
void *cgnn_realloc(void *p, size_t bytes);
/* 64-byte aligned allocation (free with free()). */
void *cgnn_aligned_alloc(size_t bytes);

#endif
