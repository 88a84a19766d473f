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

/* y_i = Σ_{e in row i} w_e x_{idx_e};  then (fused) acc_i = acc_i + beta · y_i when acc is
 * non-NULL, or (add non-NULL) y_i = y_i + beta · add_i. Row i only: any split over rows gives
 * the same bits. */
static inline void row_spmm(const int64_t *ptr, const int32_t *idx, const float *w, const float *x, int64_t D,
                            int64_t i, float *restrict y, float *restrict acc, const float *add, float beta) {
    float *yi = y + i * D;
    for (int64_t k = 0; k < D; k++) yi[k] = 0.0f;
    for (int64_t e = ptr[i]; e < ptr[i + 1]; e++) {
        const float we = w[e];
        const float *xj = x + (int64_t)idx[e] * D;
        for (int64_t k = 0; k < D; k++) yi[k] += we * xj[k];
    }
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
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t i = 0; i < N; i++) row_spmm(ptr, idx, w, x, D, i, y, acc, add, beta);
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
