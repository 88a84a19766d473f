/* gather.c — feature rows to float32; see gather.h. */
#include "sample/gather.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
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
            const double inv_d = 1.0 / l1;
            if (inv_d <= FLT_MAX) {
                const float inv = (float)inv_d;
                for (int64_t j = 0; j < dim; j++) row[j] *= inv;
            } else { /* a denormal row: 1 / l1 overflows a float (inf, and 0 · inf = NaN); divide in double */
                for (int64_t j = 0; j < dim; j++) row[j] = (float)((double)row[j] / l1);
            }
        }
    }
}

/* ---- partitioned features ----------------------------------------------------------- */

static int owner_of(const gather_part *gp, int64_t v) {
    int lo = 0, hi = gp->num_parts; /* part_start[lo] <= v < part_start[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (gp->part_start[mid] <= v) lo = mid;
        else hi = mid;
    }
    return lo;
}

int gather_part_scratch_init(gather_part_scratch *sc, int num_parts, int64_t max_rows, cgnn_err *err) {
    return gather_typed_scratch_init(sc, num_parts, 1, max_rows, err);
}

void gather_part_scratch_free(gather_part_scratch *sc) { gather_typed_scratch_free(sc); }

int gather_rows_part(float *out, int64_t stride, const ds_feature *f, const gather_part *gp, gather_part_scratch *sc,
                     const int64_t *ids, int64_t n, int nthreads, cgnn_err *err) {
    const int P = gp->num_parts, me = gp->part;
    const int64_t first = gp->part_start[me], dim = f->dim;
    const npy_dtype dt = f->array.dtype;
    const size_t row_bytes = (size_t)dim * npy_dtype_size(dt);
    CGNN_CHECK(stride >= dim && n <= sc->max_rows && sc->num_parts == P);
    /* cut the flat arrays per owner: own ids first (their rows are converted below), then each
     * other part's, all in batch order */
    for (int p = 0; p < P; p++) sc->n[p] = 0;
    for (int64_t i = 0; i < n; i++) sc->n[owner_of(gp, ids[i])]++;
    int64_t off = 0;
    for (int p = 0; p < P; p++) {
        sc->ids[p] = sc->flat_ids + off;
        sc->pos[p] = sc->flat_pos + off;
        off += sc->n[p];
        sc->n[p] = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        const int o = owner_of(gp, ids[i]);
        sc->ids[o][sc->n[o]] = o == me ? ids[i] - first : ids[i];
        sc->pos[o][sc->n[o]++] = i;
    }
    const int64_t n_own = sc->n[me];
    sc->n[me] = 0; /* nothing to fetch from this part */
    int remote = 0;
    for (int p = 0; p < P; p++) remote |= sc->n[p] > 0;
    if (remote) {
        gather_remote_req rq = {.num_parts = P,
                                .n = sc->n,
                                .ids = sc->ids,
                                .rows = sc->rows,
                                .rows_cap = sc->rows_cap,
                                .rows_len = sc->rows_len};
        for (int p = 0; p < P; p++) sc->rows_len[p] = 0;
        if (gp->fetch_remote(gp->ctx, &rq, err) != 0) return -1;
        for (int p = 0; p < P; p++)
            if (p != me && sc->rows_len[p] != (size_t)sc->n[p] * row_bytes)
                return err_set(err, CGNN_ERR_INPUT, "part %d answered %zu bytes of feature rows, expected %lld x %zu",
                               p, sc->rows_len[p], (long long)sc->n[p], row_bytes);
    }
    const char *base = f->array.data;
    const int64_t *own_rows = sc->ids[me], *own_pos = sc->pos[me];
    if (nthreads < 1 || n_own < 256) nthreads = 1;
#pragma omp parallel for num_threads(nthreads) schedule(static) if (nthreads > 1)
    for (int64_t i = 0; i < n_own; i++) {
        if (i + GATHER_PREFETCH < n_own) {
            const char *p = base + (size_t)own_rows[i + GATHER_PREFETCH] * row_bytes;
            for (size_t o = 0; o < row_bytes; o += 64) __builtin_prefetch(p + o);
        }
        convert_row(out + own_pos[i] * stride, base + (size_t)own_rows[i] * row_bytes, dt, dim);
    }
    for (int p = 0; p < P; p++) {
        if (p == me) continue;
        const char *rows = sc->rows[p];
        for (int64_t i = 0; i < sc->n[p]; i++) convert_row(out + sc->pos[p][i] * stride, rows + (size_t)i * row_bytes, dt, dim);
    }
    sc->n[me] = n_own;
    return 0;
}

int gather_rows_owned(const ds_feature *f, const gather_part *gp, const int64_t *ids, int64_t n, void **out,
                      size_t *cap, size_t *len, cgnn_err *err) {
    const int64_t first = gp->part_start[gp->part], end = gp->part_start[gp->part + 1];
    const size_t row_bytes = (size_t)f->dim * npy_dtype_size(f->array.dtype);
    if (n < 0 || (n > 0 && (size_t)n > SIZE_MAX / row_bytes))
        return err_set(err, CGNN_ERR_INPUT, "feature request: %lld rows", (long long)n);
    const size_t need = (size_t)n * row_bytes;
    if (need > *cap) {
        void *grown = realloc(*out, need);
        if (!grown) return err_set(err, CGNN_ERR_RUNTIME, "out of memory answering a feature request (%zu bytes)", need);
        *out = grown;
        *cap = need;
    }
    char *dst = *out;
    const char *base = f->array.data;
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] < first || ids[i] >= end || ids[i] - first >= f->rows)
            return err_set(err, CGNN_ERR_INPUT, "feature request: node %lld is not owned by part %d ([%lld, %lld))",
                           (long long)ids[i], gp->part, (long long)first, (long long)end);
        memcpy(dst + (size_t)i * row_bytes, base + (size_t)(ids[i] - first) * row_bytes, row_bytes);
    }
    *len = need;
    return 0;
}

/* ---- partitioned typed features ----------------------------------------------------- */

static int owner_in(const int64_t *start, int num_parts, int64_t v) {
    int lo = 0, hi = num_parts - 1; /* the largest p with start[p] <= v (skips empty ranges) */
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (start[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

int gather_typed_scratch_init(gather_typed_scratch *sc, int num_parts, int num_types, int64_t max_rows, cgnn_err *err) {
    memset(sc, 0, sizeof *sc);
    const size_t PT = (size_t)num_parts * (size_t)num_types;
    sc->num_parts = num_parts;
    sc->num_types = num_types;
    sc->max_rows = max_rows;
    sc->n = calloc(PT, sizeof(int64_t));
    sc->flat_ids = malloc((size_t)(max_rows + 1) * sizeof(int64_t));
    sc->flat_pos = malloc((size_t)(max_rows + 1) * sizeof(int64_t));
    sc->ids = calloc(PT, sizeof(int64_t *));
    sc->pos = calloc(PT, sizeof(int64_t *));
    sc->rows = calloc((size_t)num_parts, sizeof(void *));
    sc->rows_cap = calloc((size_t)num_parts, sizeof(size_t));
    sc->rows_len = calloc((size_t)num_parts, sizeof(size_t));
    if (!sc->n || !sc->flat_ids || !sc->flat_pos || !sc->ids || !sc->pos || !sc->rows || !sc->rows_cap ||
        !sc->rows_len) {
        gather_typed_scratch_free(sc);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating feature gather scratch");
    }
    return 0;
}

void gather_typed_scratch_free(gather_typed_scratch *sc) {
    if (!sc) return;
    if (sc->rows)
        for (int p = 0; p < sc->num_parts; p++) free(sc->rows[p]);
    free(sc->n);
    free(sc->flat_ids);
    free(sc->flat_pos);
    free(sc->ids);
    free(sc->pos);
    free(sc->rows);
    free(sc->rows_cap);
    free(sc->rows_len);
    memset(sc, 0, sizeof *sc);
}

/* gather_typed_rows_part, or (raw != NULL) gather_typed_rows_part_raw: raw[t] receives type t's
 * rows in their own dtype, row i at i x row bytes, instead of converted rows in out[t]. */
static int typed_rows_part(float *const *out, const int64_t *stride, void *const *raw, const ds_feature *const *f,
                           const gather_typed_part *gp, gather_typed_scratch *sc, const int64_t *const *ids,
                           const int64_t *n, int nthreads, cgnn_err *err) {
    const int P = gp->num_parts, T = gp->num_types, me = gp->part;
    CGNN_CHECK(sc->num_parts == P && sc->num_types == T);
    int64_t total = 0;
    for (int q = 0; q < P * T; q++) sc->n[q] = 0;
    for (int t = 0; t < T; t++) {
        if (!f[t]) continue;
        CGNN_CHECK(raw || stride[t] >= f[t]->dim);
        total += n[t];
        for (int64_t i = 0; i < n[t]; i++) sc->n[owner_in(gp->type_start[t], P, ids[t][i]) * T + t]++;
    }
    CGNN_CHECK(total <= sc->max_rows);
    /* cut the flat arrays per (part, type), part-major, then fill them in batch order (own rows as
     * row numbers of the part's feature) */
    int64_t off = 0;
    for (int q = 0; q < P * T; q++) {
        sc->ids[q] = sc->flat_ids + off;
        sc->pos[q] = sc->flat_pos + off;
        off += sc->n[q];
        sc->n[q] = 0;
    }
    for (int t = 0; t < T; t++) {
        if (!f[t]) continue;
        const int64_t first = gp->type_start[t][me];
        for (int64_t i = 0; i < n[t]; i++) {
            const int o = owner_in(gp->type_start[t], P, ids[t][i]), q = o * T + t;
            sc->ids[q][sc->n[q]] = o == me ? ids[t][i] - first : ids[t][i];
            sc->pos[q][sc->n[q]++] = i;
        }
    }
    int64_t n_own[64], *own = T <= 64 ? n_own : cgnn_malloc((size_t)T * sizeof(int64_t));
    int remote = 0;
    for (int t = 0; t < T; t++) {
        own[t] = sc->n[me * T + t];
        sc->n[me * T + t] = 0; /* nothing to fetch from this part */
    }
    for (int q = 0; q < P * T; q++) remote |= sc->n[q] > 0;
    int rc = 0;
    if (remote) {
        gather_typed_req rq = {.num_parts = P,
                               .num_types = T,
                               .n = sc->n,
                               .ids = sc->ids,
                               .rows = sc->rows,
                               .rows_cap = sc->rows_cap,
                               .rows_len = sc->rows_len};
        for (int p = 0; p < P; p++) sc->rows_len[p] = 0;
        rc = gp->fetch_remote(gp->ctx, &rq, err);
        for (int p = 0; p < P && rc == 0; p++) {
            if (p == me) continue;
            size_t want = 0;
            for (int t = 0; t < T; t++)
                if (f[t]) want += (size_t)sc->n[p * T + t] * (size_t)f[t]->dim * npy_dtype_size(f[t]->array.dtype);
            if (sc->rows_len[p] != want)
                rc = err_set(err, CGNN_ERR_INPUT, "part %d answered %zu bytes of feature rows, expected %zu", p,
                             sc->rows_len[p], want);
        }
    }
    for (int t = 0; t < T && rc == 0; t++) { /* own rows */
        if (!f[t]) continue;
        const int q = me * T + t;
        const size_t row_bytes = (size_t)f[t]->dim * npy_dtype_size(f[t]->array.dtype);
        const char *base = f[t]->array.data;
        const int64_t *rows = sc->ids[q], *pos = sc->pos[q], m = own[t];
        if (raw) {
            for (int64_t i = 0; i < m; i++)
                memcpy((char *)raw[t] + (size_t)pos[i] * row_bytes, base + (size_t)rows[i] * row_bytes, row_bytes);
            continue;
        }
        const int th = nthreads < 1 || m < 256 ? 1 : nthreads;
#pragma omp parallel for num_threads(th) schedule(static) if (th > 1)
        for (int64_t i = 0; i < m; i++)
            convert_row(out[t] + pos[i] * stride[t], base + (size_t)rows[i] * row_bytes, f[t]->array.dtype, f[t]->dim);
    }
    for (int p = 0; p < P && rc == 0 && remote; p++) { /* the others', type by type as they came */
        if (p == me) continue;
        const char *at = sc->rows[p];
        for (int t = 0; t < T; t++) {
            if (!f[t]) continue;
            const int q = p * T + t;
            const size_t row_bytes = (size_t)f[t]->dim * npy_dtype_size(f[t]->array.dtype);
            for (int64_t i = 0; i < sc->n[q]; i++, at += row_bytes)
                if (raw) memcpy((char *)raw[t] + (size_t)sc->pos[q][i] * row_bytes, at, row_bytes);
                else convert_row(out[t] + sc->pos[q][i] * stride[t], at, f[t]->array.dtype, f[t]->dim);
        }
    }
    for (int t = 0; t < T; t++) sc->n[me * T + t] = own[t];
    if (own != n_own) free(own);
    return rc;
}

int gather_typed_rows_part(float *const *out, const int64_t *stride, const ds_feature *const *f,
                           const gather_typed_part *gp, gather_typed_scratch *sc, const int64_t *const *ids,
                           const int64_t *n, int nthreads, cgnn_err *err) {
    return typed_rows_part(out, stride, NULL, f, gp, sc, ids, n, nthreads, err);
}

int gather_typed_rows_part_raw(void *const *out, const ds_feature *const *f, const gather_typed_part *gp,
                               gather_typed_scratch *sc, const int64_t *const *ids, const int64_t *n, cgnn_err *err) {
    return typed_rows_part(NULL, NULL, out, f, gp, sc, ids, n, 1, err);
}

int gather_rows_part_raw(void *out, const ds_feature *f, const gather_part *gp, gather_part_scratch *sc,
                         const int64_t *ids, int64_t n, cgnn_err *err) {
    const int P = gp->num_parts, me = gp->part;
    const int64_t first = gp->part_start[me];
    const size_t row_bytes = (size_t)f->dim * npy_dtype_size(f->array.dtype);
    CGNN_CHECK(n <= sc->max_rows && sc->num_parts == P);
    for (int p = 0; p < P; p++) sc->n[p] = 0;
    for (int64_t i = 0; i < n; i++) sc->n[owner_of(gp, ids[i])]++;
    int64_t off = 0;
    for (int p = 0; p < P; p++) {
        sc->ids[p] = sc->flat_ids + off;
        sc->pos[p] = sc->flat_pos + off;
        off += sc->n[p];
        sc->n[p] = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        const int o = owner_of(gp, ids[i]);
        sc->ids[o][sc->n[o]] = o == me ? ids[i] - first : ids[i];
        sc->pos[o][sc->n[o]++] = i;
    }
    const int64_t n_own = sc->n[me];
    sc->n[me] = 0;
    int remote = 0;
    for (int p = 0; p < P; p++) remote |= sc->n[p] > 0;
    if (remote) {
        gather_remote_req rq = {.num_parts = P, .n = sc->n, .ids = sc->ids, .rows = sc->rows, .rows_cap = sc->rows_cap,
                                .rows_len = sc->rows_len};
        for (int p = 0; p < P; p++) sc->rows_len[p] = 0;
        if (gp->fetch_remote(gp->ctx, &rq, err) != 0) {
            sc->n[me] = n_own;
            return -1;
        }
        for (int p = 0; p < P; p++)
            if (p != me && sc->rows_len[p] != (size_t)sc->n[p] * row_bytes) {
                sc->n[me] = n_own;
                return err_set(err, CGNN_ERR_INPUT, "part %d answered %zu bytes of feature rows, expected %lld x %zu",
                               p, sc->rows_len[p], (long long)sc->n[p], row_bytes);
            }
    }
    char *dst = out;
    const char *base = f->array.data;
    for (int64_t i = 0; i < n_own; i++)
        memcpy(dst + (size_t)sc->pos[me][i] * row_bytes, base + (size_t)sc->ids[me][i] * row_bytes, row_bytes);
    for (int p = 0; p < P; p++) {
        if (p == me) continue;
        const char *rows = sc->rows[p];
        for (int64_t i = 0; i < sc->n[p]; i++)
            memcpy(dst + (size_t)sc->pos[p][i] * row_bytes, rows + (size_t)i * row_bytes, row_bytes);
    }
    sc->n[me] = n_own;
    return 0;
}

void gather_convert_rows(float *out, int64_t stride, const void *rows, npy_dtype dtype, int64_t dim, int64_t n) {
    const size_t row_bytes = (size_t)dim * npy_dtype_size(dtype);
    for (int64_t i = 0; i < n; i++) convert_row(out + i * stride, (const char *)rows + (size_t)i * row_bytes, dtype, dim);
}
