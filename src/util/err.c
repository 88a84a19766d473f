/* err.c — error reporting helpers; see err.h. */
#include "util/err.h"

#include <stdarg.h>
#include <string.h>

int err_set(cgnn_err *err, int code, const char *fmt, ...) {
    if (!err) return -1;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int err_prefix(cgnn_err *err, const char *fmt, ...) {
    if (!err) return -1;
    char prefix[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t pl = strlen(prefix), cap = sizeof err->msg;
    if (pl >= cap) pl = cap - 1;
    memcpy(err->msg, prefix, pl);
    size_t ol = strlen(old);
    if (pl + ol >= cap) ol = cap - 1 - pl;
    memcpy(err->msg + pl, old, ol);
    err->msg[pl + ol] = '\0';
    if (!err->code) err->code = CGNN_ERR_RUNTIME;
    return -1;
}

void err_clear(cgnn_err *err) {
    if (!err) return;
    err->code = 0;
    err->msg[0] = '\0';
}

void cgnn_panic(const char *file, int line, const char *fmt, ...) {
    fprintf(stderr, "cgnn: internal error at %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

static _Noreturn void oom(size_t bytes) {
    fprintf(stderr, "cgnn: error: out of memory allocating %zu bytes\n", bytes);
    exit(CGNN_ERR_RUNTIME);
}

void *cgnn_malloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) oom(bytes);
    return p;
}

void *cgnn_calloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *cgnn_realloc(void *p, size_t bytes) {
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) oom(bytes);
    return q;
}

void *cgnn_aligned_alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) oom(bytes);
    return p;
}
