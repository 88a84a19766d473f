/* gather.c — feature rows to float32; see gather.h. */
#include "sample/gather.h"

#include <math.h>
#include <omp.h>
#include <string.h>

float gather_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13); /* inf / nan */
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Converts one row of `dim` elements of dtype at src into out. */
static inline void convert_row(float *restrict out, const void *restrict src, npy_dtype dtype, int64_t dim) {
    switch (dtype) {
    case NPY_DTYPE_FLOAT32: memcpy(out, src, (size_t)dim * sizeof(float)); break;
    case NPY_DTYPE_FLOAT64:
        for (int64_t j = 0; j < dim; j++) out[j] = (float)((const double *)src)[j];
        break;
    case NPY_DTYPE_FLOAT16:
        for (int64_t j = 0; j < dim; j++) out[j] = gather_half_to_float(((const uint16_t *)src)[j]);
        break;
    case NPY_DTYPE_UINT8:
        for (int64_t j = 0; j < dim; j++) out[j] = (float)((const uint8_t *)src)[j];
        break;
    case NPY_DTYPE_INT8:
        for (int64_t j = 0; j < dim; j++) out[j] = (float)((const int8_t *)src)[j];
        break;
    case NPY_DTYPE_INT32:
        for (int64_t j = 0; j < dim; j++) out[j] = (float)((const int32_t *)src)[j];
        break;
    case NPY_DTYPE_INT64:
        for (int64_t j = 0; j < dim; j++) out[j] = (float)((const int64_t *)src)[j];
        break;
    default: CGNN_CHECK(0);
    }
}

void gather_rows_ref(float *out, const ds_feature *f, const int64_t *ids, int64_t n) {
    const size_t row_bytes = (size_t)f->dim * npy_dtype_size(f->array.dtype);
    for (int64_t i = 0; i < n; i++) {
        CGNN_CHECK(ids[i] >= 0 && ids[i] < f->rows);
        convert_row(out + i * f->dim, (const char *)f->array.data + (size_t)ids[i] * row_bytes,
                    f->array.dtype, f->dim);
    }
}

#define GATHER_PREFETCH 8

void gather_rows(float *out, const ds_feature *f, const int64_t *ids, int64_t n, int nthreads) {
    gather_rows_strided(out, f->dim, f, ids, n, nthreads);
}

void gather_rows_strided(float *out, int64_t stride, const ds_feature *f, const int64_t *ids, int64_t n,
                         int nthreads) {
    const int64_t dim = f->dim;
    CGNN_CHECK(stride >= dim);
    const npy_dtype dt = f->array.dtype;
    const size_t row_bytes = (size_t)dim * npy_dtype_size(dt);
    const char *base = f->array.data;
    if (nthreads < 1) nthreads = 1;
    if (n < 256) nthreads = 1;
#pragma omp parallel for num_threads(nthreads) schedule(static) if (nthreads > 1)
    for (int64_t i = 0; i < n; i++) {
        if (i + GATHER_PREFETCH < n) {
            const char *p = base + (size_t)ids[i + GATHER_PREFETCH] * row_bytes;
            for (size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(p + off);
        }
        convert_row(out + i * stride, base + (size_t)ids[i] * row_bytes, dt, dim);
    }
}

void gather_normalize_rows(float *x, int64_t n, int64_t dim) { gather_normalize_rows_strided(x, n, dim, dim); }

void gather_normalize_rows_strided(float *x, int64_t n, int64_t dim, int64_t stride) {
    for (int64_t i = 0; i < n; i++) {
        float *row = x + i * stride;
        double l1 = 0;
        for (int64_t j = 0; j < dim; j++) l1 += fabs((double)row[j]);
        if (l1 > 0) {
            float inv = (float)(1.0 / l1);
            for (int64_t j = 0; j < dim; j++) row[j] *= inv;
        }
    }
}
