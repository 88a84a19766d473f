/* lightgcn.c — LightGCN propagation over the whole graph (see lightgcn.h). */
#include "nn/lightgcn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked.h"

void lightgcn_adj_free(lightgcn_adj *a) {
    if (!a) return;
    free(a->fwd_ptr), free(a->fwd_idx), free(a->fwd_w);
    free(a->bwd_ptr), free(a->bwd_idx), free(a->bwd_w);
    free(a->work[0]), free(a->work[1]);
    free(a->mark);
    for (int l = 0; l <= LIGHTGCN_MAX_LAYERS; l++) free(a->list[l]);
    memset(a, 0, sizeof *a);
}

int lightgcn_adj_build(lightgcn_adj *a, const csc_graph *g, cgnn_err *err) {
    memset(a, 0, sizeof *a);
    const int64_t N = g->num_nodes, E = g->num_edges;
    if (g->first_node != 0 || g->num_src_nodes != N)
        return err_set(err, CGNN_ERR_INPUT, "LightGCN propagates over a whole homogeneous graph (got rows %lld.. of "
                       "%lld source nodes)", (long long)g->first_node, (long long)g->num_src_nodes);
    if (N >= INT32_MAX || E < 0)
        return err_set(err, CGNN_ERR_INPUT, "LightGCN: %lld nodes is more than the 2^31-1 the propagation supports",
                       (long long)N);
    a->num_nodes = N, a->num_edges = E;
    a->fwd_ptr = malloc((size_t)(N + 1) * sizeof(int64_t));
    a->bwd_ptr = calloc((size_t)(N + 1), sizeof(int64_t));
    a->fwd_idx = malloc((size_t)(E + 1) * sizeof(int32_t));
    a->bwd_idx = malloc((size_t)(E + 1) * sizeof(int32_t));
    a->fwd_w = malloc((size_t)(E + 1) * sizeof(float));
    a->bwd_w = malloc((size_t)(E + 1) * sizeof(float));
    float *dis = malloc((size_t)(N + 1) * sizeof(float));
    if (!a->fwd_ptr || !a->bwd_ptr || !a->fwd_idx || !a->bwd_idx || !a->fwd_w || !a->bwd_w || !dis) {
        free(dis);
        lightgcn_adj_free(a);
        return err_set(err, CGNN_ERR_RUNTIME, "LightGCN: out of memory for the adjacency (%lld edges)", (long long)E);
    }
    /* gcn_norm: deg = in-degree (flow source_to_target, edge weight 1), deg^-1/2 (inf -> 0); in
     * float as torch computes it (deg.pow_(-0.5) on a float32 tensor) */
    for (int64_t v = 0; v < N; v++) {
        const float deg = (float)csc_degree(g, v);
        dis[v] = deg > 0 ? powf(deg, -0.5f) : 0.0f;
    }
    memcpy(a->fwd_ptr, g->indptr, (size_t)(N + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < N; i++)
        for (int64_t e = g->indptr[i]; e < g->indptr[i + 1]; e++) {
            const int64_t j = csc_index(g, e);
            a->fwd_idx[e] = (int32_t)j;
            a->fwd_w[e] = dis[j] * dis[i]; /* deg_inv_sqrt[row] * 1 * deg_inv_sqrt[col] */
            a->bwd_ptr[j + 1]++;
        }
    for (int64_t j = 0; j < N; j++) a->bwd_ptr[j + 1] += a->bwd_ptr[j];
    int64_t *fill = malloc((size_t)(N + 1) * sizeof(int64_t));
    if (!fill) {
        free(dis);
        lightgcn_adj_free(a);
        return err_set(err, CGNN_ERR_RUNTIME, "LightGCN: out of memory for the adjacency");
    }
    memcpy(fill, a->bwd_ptr, (size_t)(N + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < N; i++) /* stable: each source's out-edges in CSC order */
        for (int64_t e = a->fwd_ptr[i]; e < a->fwd_ptr[i + 1]; e++) {
            const int64_t j = a->fwd_idx[e], p = fill[j]++;
            a->bwd_idx[p] = (int32_t)i;
            a->bwd_w[p] = a->fwd_w[e];
        }
    free(fill);
    free(dis);
    return 0;
}

int lightgcn_alpha(float *alpha, int L, const double *given, int n) {
    if (L < 0 || L > LIGHTGCN_MAX_LAYERS) return -1;
    if (n == 0) {
        for (int l = 0; l <= L; l++) alpha[l] = (float)(1.0 / (L + 1)); /* torch.tensor([1. / (L+1)] * (L+1)) */
        return 0;
    }
    if (n == 1) {
        for (int l = 0; l <= L; l++) alpha[l] = (float)given[0];
        return 0;
    }
    if (n != L + 1) return -1;
    for (int l = 0; l <= L; l++) alpha[l] = (float)given[l];
    return 0;
}

static int ensure_work(lightgcn_adj *a, int64_t D) {
    if (a->work_dim == D && a->work[0]) return 0;
    free(a->work[0]), free(a->work[1]);
    a->work[0] = malloc((size_t)(a->num_nodes * D + 1) * sizeof(float));
    a->work[1] = malloc((size_t)(a->num_nodes * D + 1) * sizeof(float));
    a->work_dim = D;
    return a->work[0] && a->work[1] ? 0 : -1;
}

/* ---- the edge sum of one row --------------------------------------------------------------
 * y_i = Σ_{e in row i, mark[idx_e] (when mark is non-NULL)} w_e x_{idx_e}, the edges in CSR order.
 * edge_sum_scalar is the plain loop; the vector kernels keep a chunk of the row's columns in
 * registers across the edges instead of loading and storing y_i on every edge. Per column they do
 * the same multiplies and adds in the same order from the same +0 start, so every kernel gives
 * the scalar loop's bits (test_lightgcn holds them together; CGNN_NO_AVX=1 forces the 4-wide
 * path). Columns past the last whole chunk take the scalar loop. */
typedef void (*edge_sum_fn)(const int64_t *ptr, const int32_t *idx, const float *w, const float *x, int64_t D,
                            int64_t i, float *restrict yi, const unsigned char *mark);

static void edge_sum_cols(const int64_t *ptr, const int32_t *idx, const float *w, const float *x, int64_t D,
                          int64_t i, float *restrict yi, const unsigned char *mark, int64_t c0) {
    for (int64_t k = c0; k < D; k++) yi[k] = 0.0f;
    for (int64_t e = ptr[i]; e < ptr[i + 1]; e++) {
        if (mark && !mark[idx[e]]) continue;
        const float we = w[e];
        const float *xj = x + (int64_t)idx[e] * D;
        for (int64_t k = c0; k < D; k++) yi[k] += we * xj[k];
    }
}

static void edge_sum_scalar(const int64_t *ptr, const int32_t *idx, const float *w, const float *x, int64_t D,
                            int64_t i, float *restrict yi, const unsigned char *mark) {
    edge_sum_cols(ptr, idx, w, x, D, i, yi, mark, 0);
}

/* chunks of 8 VW columns: 8 accumulators of VW lanes */
#define EDGE_SUM_KERNEL(NAME, VW, ATTR)                                                                     \
    ATTR static void NAME(const int64_t *ptr, const int32_t *idx, const float *w, const float *x, int64_t D,  \
                          int64_t i, float *restrict yi, const unsigned char *mark) {                       \
        typedef float vec __attribute__((vector_size(VW * sizeof(float))));                                 \
        const int64_t C = 8 * VW, Dc = D / C * C;                                                            \
        for (int64_t c = 0; c < Dc; c += C) {                                                                \
            vec a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};              \
            for (int64_t e = ptr[i]; e < ptr[i + 1]; e++) {                                                  \
                if (mark && !mark[idx[e]]) continue;                                                         \
                const vec we = (vec){0} + w[e];                                                              \
                const float *xj = x + (int64_t)idx[e] * D + c;                                               \
                vec v0, v1, v2, v3, v4, v5, v6, v7;                                                          \
                memcpy(&v0, xj, sizeof v0);                                                                  \
                memcpy(&v1, xj + VW, sizeof v1);                                                             \
                memcpy(&v2, xj + 2 * VW, sizeof v2);                                                         \
                memcpy(&v3, xj + 3 * VW, sizeof v3);                                                         \
                memcpy(&v4, xj + 4 * VW, sizeof v4);                                                         \
                memcpy(&v5, xj + 5 * VW, sizeof v5);                                                         \
                memcpy(&v6, xj + 6 * VW, sizeof v6);                                                         \
                memcpy(&v7, xj + 7 * VW, sizeof v7);                                                         \
                a0 += we * v0;                                                                               \
                a1 += we * v1;                                                                               \
                a2 += we * v2;                                                                               \
                a3 += we * v3;                                                                               \
                a4 += we * v4;                                                                               \
                a5 += we * v5;                                                                               \
                a6 += we * v6;                                                                               \
                a7 += we * v7;                                                                               \
            }                                                                                                \
            memcpy(yi + c, &a0, sizeof a0);                                                                  \
            memcpy(yi + c + VW, &a1, sizeof a1);                                                             \
            memcpy(yi + c + 2 * VW, &a2, sizeof a2);                                                         \
            memcpy(yi + c + 3 * VW, &a3, sizeof a3);                                                         \
            memcpy(yi + c + 4 * VW, &a4, sizeof a4);                                                         \
            memcpy(yi + c + 5 * VW, &a5, sizeof a5);                                                         \
            memcpy(yi + c + 6 * VW, &a6, sizeof a6);                                                         \
            memcpy(yi + c + 7 * VW, &a7, sizeof a7);                                                         \
        }                                                                                                    \
        if (Dc < D) edge_sum_cols(ptr, idx, w, x, D, i, yi, mark, Dc);                                       \
    }

EDGE_SUM_KERNEL(edge_sum_v4, 4, )
#if defined(__x86_64__) && defined(__GNUC__)
#define LGC_HAVE_AVX 1
/* AVX without FMA: the same multiplies and adds as the 4-wide path, 8 lanes at a time */
EDGE_SUM_KERNEL(edge_sum_v8, 8, __attribute__((target("avx"))))
#endif

/* the kernel for this machine: AVX, else 4-wide; CGNN_LGC_KERNEL=scalar forces the plain loop and
 * CGNN_NO_AVX=1 the 4-wide path (the tests compare them) */
static edge_sum_fn edge_sum_pick(void) {
    const char *k = getenv("CGNN_LGC_KERNEL");
    if (k && strcmp(k, "scalar") == 0) return edge_sum_scalar;
#ifdef LGC_HAVE_AVX
    const char *no_avx = getenv("CGNN_NO_AVX");
    if (__builtin_cpu_supports("avx") && !(no_avx && *no_avx == '1')) return edge_sum_v8;
#endif
    return edge_sum_v4;
}

/* y_i = Σ_{e in row i} w_e x_{idx_e};  then (fused) acc_i = acc_i + beta · y_i when acc is
 * non-NULL, or (add non-NULL) y_i = y_i + beta · add_i. Row i only: any split over rows gives
 * the same bits. */
static inline void row_spmm(edge_sum_fn sum, const int64_t *ptr, const int32_t *idx, const float *w, const float *x,
                            int64_t D, int64_t i, float *restrict y, float *restrict acc, const float *add,
                            float beta, const unsigned char *mark) {
    float *yi = y + i * D;
    sum(ptr, idx, w, x, D, i, yi, mark);
    if (acc) {
        float *ai = acc + i * D;
        for (int64_t k = 0; k < D; k++) ai[k] = ai[k] + yi[k] * beta;
    }
    if (add) {
        const float *gi = add + i * D;
        for (int64_t k = 0; k < D; k++) yi[k] = yi[k] + gi[k] * beta;
    }
}

/* One product of every row, parallel over rows (dynamic chunks: degrees are skewed; each row
 * is computed by one thread alone, so the schedule never changes bits). */
static void spmm_all(const int64_t *ptr, const int32_t *idx, const float *w, const float *x, int64_t N, int64_t D,
                     float *y, float *acc, const float *add, float beta) {
    const edge_sum_fn sum = edge_sum_pick();
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t i = 0; i < N; i++) row_spmm(sum, ptr, idx, w, x, D, i, y, acc, add, beta, NULL);
}

static void scale_all(float *out, const float *x, float s, int64_t n) {
#pragma omp parallel for simd schedule(static)
    for (int64_t k = 0; k < n; k++) out[k] = x[k] * s;
}

void lightgcn_forward(lightgcn_adj *a, const float *x0, int64_t D, int L, const float *alpha, float *out) {
    const int64_t N = a->num_nodes;
    CGNN_CHECK(ensure_work(a, D) == 0);
    scale_all(out, x0, alpha[0], N * D); /* out = x * alpha[0] */
    const float *cur = x0;
    for (int l = 0; l < L; l++) { /* x = conv(x); out = out + x * alpha[l + 1] */
        float *nxt = a->work[l & 1];
        spmm_all(a->fwd_ptr, a->fwd_idx, a->fwd_w, cur, N, D, nxt, out, NULL, alpha[l + 1]);
        cur = nxt;
    }
}

void lightgcn_backward(lightgcn_adj *a, const float *dout, int64_t D, int L, const float *alpha, float *dx) {
    const int64_t N = a->num_nodes;
    CGNN_CHECK(ensure_work(a, D) == 0);
    if (L == 0) {
        scale_all(dx, dout, alpha[0], N * D);
        return;
    }
    float *t = a->work[0];
    scale_all(t, dout, alpha[L], N * D); /* t = alpha_L g */
    for (int l = L - 1; l >= 0; l--) {   /* t = A^T t + alpha_l g */
        float *nxt = l == 0 ? dx : a->work[(L - l) & 1];
        spmm_all(a->bwd_ptr, a->bwd_idx, a->bwd_w, t, N, D, nxt, NULL, dout, alpha[l]);
        t = nxt;
    }
}

/* ---- restricted kernels ----------------------------------------------------------------- */

static void ensure_lists(lightgcn_adj *a, int L) {
    if (!a->mark) a->mark = cgnn_malloc((size_t)(a->num_nodes + 1));
    for (int l = 0; l <= L; l++)
        if (!a->list[l]) a->list[l] = cgnn_malloc((size_t)(a->num_nodes + 1) * sizeof(int64_t));
}

/* list[l] for l = top-1 .. bottom: list[l + 1] ∪ the neighbours (ptr/idx) of its rows, ascending
 * (list[top] = the given rows, ascending). Serial: marks, then one scan of the marks. Stops at the
 * first level that reaches LIGHTGCN_DENSE_FRAC of the nodes and returns it: that level and the
 * ones below it (supersets) are computed whole, which gives the same bits (the rows kernels are
 * the whole product restricted; test_lightgcn) without building their lists. Returns -1 when no
 * level is dense; a->dense_level gets the result. */
#define LIGHTGCN_DENSE_FRAC 0.9
static int grow_lists(lightgcn_adj *a, const int64_t *ptr, const int32_t *idx, const int64_t *rows, int64_t n,
                      int top, int bottom) {
    const int64_t N = a->num_nodes, dense = (int64_t)(LIGHTGCN_DENSE_FRAC * (double)N);
    unsigned char *mark = a->mark;
    memset(mark, 0, (size_t)N);
    for (int64_t k = 0; k < n; k++) mark[rows[k]] = 1;
    int64_t m = 0;
    for (int64_t i = 0; i < N; i++)
        if (mark[i]) a->list[top][m++] = i;
    a->list_len[top] = m;
    for (int l = top - 1; l >= bottom; l--) {
        const int64_t *prev = a->list[l + 1], np = a->list_len[l + 1];
        int64_t added = 0;
        for (int64_t k = 0; k < np; k++)
            for (int64_t e = ptr[prev[k]]; e < ptr[prev[k] + 1]; e++)
                if (!mark[idx[e]]) mark[idx[e]] = 1, added++;
        if (np + added >= dense && N > 0) return a->dense_level = l;
        m = 0;
        if (added == 0) {
            memcpy(a->list[l], prev, (size_t)np * sizeof(int64_t));
            m = np;
        } else {
            for (int64_t i = 0; i < N; i++)
                if (mark[i]) a->list[l][m++] = i;
        }
        a->list_len[l] = m;
    }
    return a->dense_level = -1;
}

/* The first backward product reads t on S alone: row_spmm (add form) with mark = S skips the
 * edges whose source is unmarked. Their x rows are exact zeros (+0), whose terms w · (+0) = +0
 * leave every partial sum's bits unchanged (a sum that starts at +0 is never -0), so the result is
 * bitwise the unmarked product's, without reading those rows. */

static void spmm_rows(const int64_t *ptr, const int32_t *idx, const float *w, const float *x, const int64_t *rows,
                      int64_t n, int64_t D, float *y, float *acc, const float *add, float beta,
                      const unsigned char *mark) {
    const edge_sum_fn sum = edge_sum_pick();
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t k = 0; k < n; k++) row_spmm(sum, ptr, idx, w, x, D, rows ? rows[k] : k, y, acc, add, beta, mark);
}

void lightgcn_forward_rows(lightgcn_adj *a, const float *x0, int64_t D, int L, const float *alpha, float *out,
                           const int64_t *rows, int64_t n, int64_t *rows_done) {
    const int64_t N = a->num_nodes;
    CGNN_CHECK(ensure_work(a, D) == 0);
    ensure_lists(a, L);
    /* list[l] = the rows of x^(l) needed (l = 1..L); list[L] = S; levels <= ld: every row */
    const int ld = grow_lists(a, a->fwd_ptr, a->fwd_idx, rows, n, L, L > 0 ? 1 : 0);
    int64_t done = 0;
    const int64_t *S = a->list[L], nS = a->list_len[L];
    if (ld >= 1) /* out = x * alpha[0] on every row (x^(1) is computed whole) */
        scale_all(out, x0, alpha[0], N * D);
    else
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < nS; k++) /* out = x * alpha[0] on S */
            for (int64_t c = 0; c < D; c++) out[S[k] * D + c] = x0[S[k] * D + c] * alpha[0];
    const float *cur = x0;
    for (int l = 0; l < L; l++) {
        float *nxt = a->work[l & 1];
        const int whole = l + 1 <= ld;
        const int64_t *R = whole ? NULL : a->list[l + 1], nR = whole ? N : a->list_len[l + 1];
        /* rows of R outside S accumulate into out too (scratch rows the caller does not read):
         * give them a defined start */
        if (l == 0 && !whole)
#pragma omp parallel for schedule(static)
            for (int64_t k = 0; k < nR; k++)
                for (int64_t c = 0; c < D; c++) out[R[k] * D + c] = x0[R[k] * D + c] * alpha[0];
        spmm_rows(a->fwd_ptr, a->fwd_idx, a->fwd_w, cur, R, nR, D, nxt, out, NULL, alpha[l + 1], NULL);
        done += nR;
        cur = nxt;
    }
    if (rows_done) *rows_done = done;
}

void lightgcn_backward_rows(lightgcn_adj *a, const float *dout, int64_t D, int L, const float *alpha, float *dx,
                            const int64_t *rows, int64_t n, int64_t *rows_done) {
    const int64_t N = a->num_nodes;
    CGNN_CHECK(ensure_work(a, D) == 0);
    ensure_lists(a, L);
    /* list[l] = the rows where t after the product for alpha_l may be non-zero; list[L] = S;
     * levels <= ld: every row */
    const int ld = grow_lists(a, a->bwd_ptr, a->bwd_idx, rows, n, L, 0);
    memset(dx, 0, (size_t)(N * D) * sizeof(float));
    int64_t done = 0;
    const int64_t *S = a->list[L], nS = a->list_len[L];
    if (L == 0) {
        for (int64_t k = 0; k < nS; k++)
            for (int64_t c = 0; c < D; c++) dx[S[k] * D + c] = dout[S[k] * D + c] * alpha[0];
        if (rows_done) *rows_done = 0;
        return;
    }
    memset(a->work[0], 0, (size_t)(N * D) * sizeof(float)); /* t: exact (+0) off its rows */
    if (L > 1) memset(a->work[1], 0, (size_t)(N * D) * sizeof(float));
    float *t = a->work[0];
    for (int64_t k = 0; k < nS; k++)
        for (int64_t c = 0; c < D; c++) t[S[k] * D + c] = dout[S[k] * D + c] * alpha[L];
    /* the first product reads t on S alone: skip the other sources' (zero) rows */
    unsigned char *mark = a->mark;
    memset(mark, 0, (size_t)N);
    for (int64_t k = 0; k < nS; k++) mark[S[k]] = 1;
    for (int l = L - 1; l >= 0; l--) { /* rows of the next t ⊇ rows this buffer held before */
        float *nxt = l == 0 ? dx : a->work[(L - l) & 1];
        const int whole = l <= ld;
        const int64_t *R = whole ? NULL : a->list[l], nR = whole ? N : a->list_len[l];
        spmm_rows(a->bwd_ptr, a->bwd_idx, a->bwd_w, t, R, nR, D, nxt, NULL, dout, alpha[l], l == L - 1 ? mark : NULL);
        done += nR;
        t = nxt;
    }
    if (rows_done) *rows_done = done;
}

void lightgcn_forward_ref(const lightgcn_adj *a, const float *x0, int64_t D, int L, const float *alpha, float *out,
                          float *work) {
    const int64_t N = a->num_nodes;
    for (int64_t k = 0; k < N * D; k++) out[k] = x0[k] * alpha[0];
    const float *cur = x0;
    for (int l = 0; l < L; l++) {
        float *nxt = work + (l & 1) * N * D;
        for (int64_t i = 0; i < N; i++) {
            for (int64_t k = 0; k < D; k++) {
                float s = 0.0f;
                for (int64_t e = a->fwd_ptr[i]; e < a->fwd_ptr[i + 1]; e++)
                    s += a->fwd_w[e] * cur[(int64_t)a->fwd_idx[e] * D + k];
                nxt[i * D + k] = s;
                out[i * D + k] = out[i * D + k] + s * alpha[l + 1];
            }
        }
        cur = nxt;
    }
}

void lightgcn_backward_ref(const lightgcn_adj *a, const float *dout, int64_t D, int L, const float *alpha, float *dx,
                           float *work) {
    const int64_t N = a->num_nodes;
    if (L == 0) {
        for (int64_t k = 0; k < N * D; k++) dx[k] = dout[k] * alpha[0];
        return;
    }
    float *t = work;
    for (int64_t k = 0; k < N * D; k++) t[k] = dout[k] * alpha[L];
    for (int l = L - 1; l >= 0; l--) {
        float *nxt = l == 0 ? dx : work + ((L - l) & 1) * N * D;
        for (int64_t j = 0; j < N; j++)
            for (int64_t k = 0; k < D; k++) {
                float s = 0.0f;
                for (int64_t e = a->bwd_ptr[j]; e < a->bwd_ptr[j + 1]; e++)
                    s += a->bwd_w[e] * t[(int64_t)a->bwd_idx[e] * D + k];
                nxt[j * D + k] = s + dout[j * D + k] * alpha[l];
            }
        t = nxt;
    }
}
