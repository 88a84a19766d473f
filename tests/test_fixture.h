/* test_fixture.h — reading the PyTorch-written fixtures (scripts/fixtures/make_*.py) in C tests.
 *
 * A test file defines FIX_SUBDIR (its folder under tests/fixtures, e.g. "nn") before including
 * this header; fixture names are relative to that folder. Everything here prints its own error
 * and returns -1, so a test can `if (fix_open(...) != 0) TEST_FAIL_(...)`. */
#ifndef CGNN_TEST_FIXTURE_H
#define CGNN_TEST_FIXTURE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io/npy.h"
#include "test.h"

#ifndef FIX_SUBDIR
#error "define FIX_SUBDIR (the folder under tests/fixtures) before including test_fixture.h"
#endif

/* The path of fixture `name`: tests/fixtures/FIX_SUBDIR/name under the source tree. Returns a
 * static buffer, overwritten by the next call. */
static inline const char *fix_path(const char *name) {
    static char p[8192];
    snprintf(p, sizeof p, "%s/tests/fixtures/%s/%s", test_source_dir(), FIX_SUBDIR, name);
    return p;
}

/* Opens fixture `name` as *a (owned: npy_close), requiring dtype `want`; 0 or -1 (printed). */
static inline int fix_open(npy_array *a, const char *name, npy_dtype want) {
    cgnn_err err;
    if (npy_open(a, fix_path(name), 0, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    if (a->dtype != want) {
        fprintf(stderr, "%s: dtype %s, want %s\n", a->path, npy_dtype_name(a->dtype), npy_dtype_name(want));
        npy_close(a);
        return -1;
    }
    return 0;
}

/* ---- the comparison rule, for every fixture test ------------------------------------------
 *
 * A value computed in float32 passes against its PyTorch reference when
 *
 *     |got - want| <= atol + rtol * |want|,   atol = atol_frac * scale
 *
 * (torch.allclose's form), where `scale` is the largest |want| of the whole GROUP the tensor
 * belongs to: the whole forward output, or every gradient of one backward pass together (all
 * parameter and input gradients), or every output of one optimiser trajectory. It is never the
 * scale of the one tensor alone: a gradient that is ~1e-9 everywhere (a sum that cancels) is
 * float32 rounding noise of terms as large as the group's, and a different GEMM kernel (SSE,
 * AVX2, AVX-512 blockings sum in other orders) moves it by ~1e-7 of the group's scale.
 *
 * FIX_TOL_F32 (rtol 1e-4, atol 1e-5 of the group) is for anything that sums through BLAS or
 * vector kernels in float32: 1e-5 of the largest value is ~170 float32 ulps, room for sums of a
 * few hundred terms of the group's size rounded in any order; 1e-4 relative on large values
 * catches any real error (a wrong term moves a value by its own size). FIX_TOL_EXACT (rtol 1e-6,
 * atol 1e-7 of the group) is for results computed in double or elementwise (no sums whose order
 * a kernel chooses), stored as float32. Loss scalars are compared relative to themselves with
 * the rtol of the same tolerance (a loss is a group of one). */
typedef struct fix_tol {
    double rtol, atol_frac;
} fix_tol;
#define FIX_TOL_F32 ((fix_tol){1e-4, 1e-5})
#define FIX_TOL_EXACT ((fix_tol){1e-6, 1e-7})

/* max |x[k]| over n floats (NaN propagates as NaN). */
static inline double fix_max_abs(const float *x, int64_t n) {
    double m = 0.0;
    for (int64_t k = 0; k < n; k++) {
        const double a = fabs((double)x[k]);
        if (a > m || a != a) m = a;
    }
    return m;
}

/* Raises *scale to max |x| of fixture `name` (float32); returns 0 or -1 (printed). Call it on
 * every tensor of a group before comparing any of them. */
static inline int fix_group_add(double *scale, const char *name) {
    npy_array a;
    if (fix_open(&a, name, NPY_DTYPE_FLOAT32) != 0) return -1;
    const double m = fix_max_abs(a.data, a.count);
    if (m > *scale || m != m) *scale = m;
    npy_close(&a);
    return 0;
}

/* Compares got[n] with want[n] by the rule above (scale: the group's). Prints one line (max abs
 * error, and the worst |got - want| / (atol + rtol |want|), which must be <= 1); raises *worst to
 * that ratio when worst is not NULL. Returns 1 if every element passes (NaN fails). */
static inline int fix_allclose(const char *label, const float *got, const float *want, int64_t n, double scale,
                               fix_tol tol, double *worst) {
    const double atol = tol.atol_frac * scale;
    double max_abs = 0.0, ratio = 0.0;
    for (int64_t k = 0; k < n; k++) {
        const double d = fabs((double)got[k] - (double)want[k]);
        const double r = d / (atol + tol.rtol * fabs((double)want[k]) + 1e-300);
        if (d > max_abs || d != d) max_abs = d;
        if (r > ratio || r != r) ratio = r;
    }
    const int ok = ratio <= 1.0; /* NaN: false */
    if (worst && (ratio > *worst || ratio != ratio)) *worst = ratio;
    fprintf(stderr, "  %-52s max abs %.3g  (atol %.2g)  err/tol %.3g%s\n", label, max_abs, atol, ratio,
            ok ? "" : "  <-- FAIL");
    return ok;
}

/* fix_allclose against fixture `name` (float32, n elements); 0 on a missing or mis-sized file. */
static inline int fix_compare(const char *label, const float *got, int64_t n, const char *name, double scale,
                              fix_tol tol, double *worst) {
    npy_array a;
    if (fix_open(&a, name, NPY_DTYPE_FLOAT32) != 0) return 0;
    int ok = a.count == n;
    if (!ok) fprintf(stderr, "%s: %lld elements, want %lld\n", name, (long long)a.count, (long long)n);
    else ok = fix_allclose(label, got, a.data, n, scale, tol, worst);
    npy_close(&a);
    return ok;
}

/* A scalar (a loss) against its reference: |got - want| <= rtol * |want|. Prints one line. */
static inline int fix_scalar(const char *label, double got, double want, fix_tol tol) {
    const double d = fabs(got - want);
    const int ok = d <= tol.rtol * fabs(want);
    fprintf(stderr, "  %-52s %.9g vs torch %.9g, rel %.3g%s\n", label, got, want, d / fabs(want),
            ok ? "" : "  <-- FAIL");
    return ok;
}

#ifdef CGNN_MODEL_H
/* Copies a PyTorch model's weights into m (already model_init'ed) by state_dict key: dir/keys.txt
 * lists the keys in cgnn's tensor order, dir/param.<key>.npy holds each (float32, cgnn's shape).
 * Every key, the order and every shape are checked. Returns 0 or -1 (printed). */
static inline int fix_load_params(model *m, const char *dir) {
    char name[512], line[256];
    snprintf(name, sizeof name, "%s/keys.txt", dir);
    FILE *fp = fopen(fix_path(name), "r");
    if (!fp) {
        fprintf(stderr, "%s: cannot open\n", fix_path(name));
        return -1;
    }
    int t = 0, ok = 1;
    while (ok && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        if (t >= m->num_tensors || strcmp(line, m->tensors[t].name) != 0) {
            fprintf(stderr, "%s: key %d is '%s', cgnn has '%s'\n", name, t, line,
                    t < m->num_tensors ? m->tensors[t].name : "(none)");
            ok = 0;
            break;
        }
        const model_tensor *mt = &m->tensors[t++];
        npy_array a;
        snprintf(name, sizeof name, "%s/param.%s.npy", dir, mt->name);
        if (fix_open(&a, name, NPY_DTYPE_FLOAT32) != 0) {
            ok = 0;
            break;
        }
        int same_shape = a.ndim == mt->ndim;
        for (int k = 0; k < mt->ndim && same_shape; k++) same_shape = a.shape[k] == mt->shape[k];
        if (!same_shape) fprintf(stderr, "%s: shape differs from cgnn's %s\n", name, mt->name);
        else memcpy(m->params + mt->offset, a.data, (size_t)mt->numel * sizeof(float));
        ok = same_shape;
        npy_close(&a);
    }
    fclose(fp);
    if (ok && t != m->num_tensors) {
        fprintf(stderr, "%s/keys.txt: %d keys, cgnn has %d tensors\n", dir, t, m->num_tensors);
        ok = 0;
    }
    return ok ? 0 : -1;
}
#endif

#endif
