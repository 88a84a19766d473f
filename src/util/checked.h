/* checked.h — overflow-checked size arithmetic.
 *
 * Every size derived from file contents or a flag (an .npy shape times its item size, a
 * safetensors shape, a layer size from checkpoint metadata, a --batch from the command line)
 * goes through these before it sizes a buffer or bounds a read, so a crafted value that would
 * wrap past 2^64 (or 2^63) is reported as "too large" instead of passing a size check and
 * reading out of bounds later. Each returns 0 and stores the result, or -1 on overflow
 * (*out is then unspecified).
 */
#ifndef CGNN_CHECKED_H
#define CGNN_CHECKED_H

#include <stddef.h>
#include <stdint.h>

static inline int ck_mul_size(size_t a, size_t b, size_t *out) { return __builtin_mul_overflow(a, b, out) ? -1 : 0; }
static inline int ck_add_size(size_t a, size_t b, size_t *out) { return __builtin_add_overflow(a, b, out) ? -1 : 0; }
static inline int ck_mul_i64(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out) ? -1 : 0; }
static inline int ck_add_i64(int64_t a, int64_t b, int64_t *out) { return __builtin_add_overflow(a, b, out) ? -1 : 0; }

/* a * b * c as size_t; negative inputs count as overflow. */
static inline int ck_mul3_size(int64_t a, int64_t b, int64_t c, size_t *out) {
    size_t t;
    if (a < 0 || b < 0 || c < 0) return -1;
    if (ck_mul_size((size_t)a, (size_t)b, &t) != 0) return -1;
    return ck_mul_size(t, (size_t)c, out);
}

#endif
