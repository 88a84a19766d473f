/* ops.c — layer kernels of the GNN models and their plain reference twins; see ops.h.
 *
 * Each section has the fast kernel (OpenMP over destination nodes, or over sources through the
 * block's transpose for scatters; BLAS for dense products) followed by its `_ref`: serial
 * loops written straight from the formula, scattering directly where the math scatters.
 */
#include "nn/ops.h"

#include <cblas.h>
#undef I /* OpenBLAS's cblas.h pulls in <complex.h>; I is the input-channel count here */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/rng.h"
#include "util/timer.h"

/* Below this much work per parallel loop, threads cost more than they save. */
#define OPS_PAR_MIN 8192

static inline float leaky_relu(float x) { return x > 0.0f ? x : 0.2f * x; }

/* ---- linear ----------------------------------------------------------------------------- */

static ops_gemm_stats *gemm_stats; /* NULL: accounting off */

void ops_gemm_stats_register(ops_gemm_stats *s) { gemm_stats = s; }

void ops_sgemm_counted(ops_gemm_stats *s, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    CGNN_CHECK(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX);
    const double t0 = s ? timer_now() : 0.0;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, (int)M,
                (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    if (!s) return;
    const double dt = timer_now() - t0;
    s->seconds += dt;
    s->flops += 2.0 * (double)M * (double)N * (double)K;
    s->num_calls++;
    if (s->calls && s->num_logged < s->max_calls)
        s->calls[s->num_logged++] = (ops_gemm_call){trans_a, trans_b, M, N, K, beta, dt};
}

/* Row-major cblas_sgemm with contiguous operands (alpha 1), counted when stats are on. */
static void sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const float *A, const float *B,
                  float beta, float *C) {
    ops_sgemm_counted(gemm_stats, trans_a, trans_b, M, N, K, 1.0f, A, trans_a ? M : K, B, trans_b ? K : N, beta, C,
                      N);
}

void ops_gemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const float *A, const float *B, float beta,
              float *C) {
    if (M == 0 || N == 0) return;
    sgemm(trans_a, trans_b, M, N, K, A, B, beta, C);
}

void ops_gemm_ld(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    if (M == 0 || N == 0) return;
    ops_sgemm_counted(gemm_stats, trans_a, trans_b, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
}

/* Writes bias (O) into every row of out (N, O), or adds it when accumulate. */
static void bias_rows(float *out, const float *bias, int64_t N, int64_t O, int accumulate) {
#pragma omp parallel for schedule(static) if (N * O > OPS_PAR_MIN)
    for (int64_t n = 0; n < N; n++) {
        float *o = out + n * O;
        if (accumulate)
            for (int64_t k = 0; k < O; k++) o[k] += bias[k];
        else
            memcpy(o, bias, (size_t)O * sizeof(float));
    }
}

/* Σ_rows dout into dbias, serially in row order (deterministic for any thread count). */
static void bias_backward(float *dbias, const float *dout, int64_t N, int64_t O) {
    for (int64_t n = 0; n < N; n++) {
        const float *d = dout + n * O;
        for (int64_t k = 0; k < O; k++) dbias[k] += d[k];
    }
}

void ops_linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                        int64_t N, int64_t I, int64_t O, int accumulate) {
    // out (N, O) = inp (N, I) · weight (O, I)^T [+ bias (O)]
    if (N == 0) return;
    CGNN_CHECK(N <= INT_MAX && I <= INT_MAX && O <= INT_MAX);
    float beta = accumulate ? 1.0f : 0.0f;
    if (bias) {
        bias_rows(out, bias, N, O, accumulate);
        beta = 1.0f;
    }
    sgemm(0, 1, N, O, I, inp, weight, beta, out);
}

void ops_linear_forward_ref(float *out, const float *inp, const float *weight, const float *bias,
                            int64_t N, int64_t I, int64_t O, int accumulate) {
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++) {
            float s = bias ? bias[o] : 0.0f;
            for (int64_t i = 0; i < I; i++) s += inp[n * I + i] * weight[o * I + i];
            out[n * O + o] = accumulate ? out[n * O + o] + s : s;
        }
}

void ops_linear_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                         const float *inp, const float *weight, int64_t N, int64_t I, int64_t O) {
    if (N == 0) return;
    CGNN_CHECK(N <= INT_MAX && I <= INT_MAX && O <= INT_MAX);
    // dinp (N, I) += dout (N, O) · weight (O, I)
    if (dinp)
        sgemm(0, 0, N, I, O, dout, weight, 1.0f, dinp);
    // dweight (O, I) += dout^T (O, N) · inp (N, I)
    if (dweight)
        sgemm(1, 0, O, I, N, dout, inp, 1.0f, dweight);
    if (dbias) bias_backward(dbias, dout, N, O);
}

void ops_linear_backward_ref(float *dinp, float *dweight, float *dbias, const float *dout,
                             const float *inp, const float *weight, int64_t N, int64_t I, int64_t O) {
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++) {
            const float d = dout[n * O + o];
            for (int64_t i = 0; i < I; i++) {
                if (dinp) dinp[n * I + i] += d * weight[o * I + i];
                if (dweight) dweight[o * I + i] += d * inp[n * I + i];
            }
            if (dbias) dbias[o] += d;
        }
}

/* ---- SAGE mean aggregation ------------------------------------------------------------- */

void ops_mean_agg_forward(float *out, const float *inp, const sampler_block *b, int64_t D) {
    // out (N_dst, D) = mean over in-neighbours of inp (N_src, D)
    const int64_t Nd = b->num_dst;
#pragma omp parallel for schedule(dynamic, 64) if (b->num_edges * D > OPS_PAR_MIN)
    for (int64_t i = 0; i < Nd; i++) {
        float *o = out + i * D;
        memset(o, 0, (size_t)D * sizeof(float));
        const int64_t e0 = b->indptr[i], e1 = b->indptr[i + 1];
        if (e1 == e0) continue;
        for (int64_t e = e0; e < e1; e++) {
            const float *x = inp + (int64_t)b->indices[e] * D;
            for (int64_t k = 0; k < D; k++) o[k] += x[k];
        }
        const float inv = 1.0f / (float)(e1 - e0);
        for (int64_t k = 0; k < D; k++) o[k] *= inv;
    }
}

void ops_mean_agg_forward_ref(float *out, const float *inp, const sampler_block *b, int64_t D) {
    for (int64_t i = 0; i < b->num_dst; i++) {
        const int64_t deg = b->indptr[i + 1] - b->indptr[i];
        for (int64_t k = 0; k < D; k++) {
            float s = 0.0f;
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) s += inp[(int64_t)b->indices[e] * D + k];
            out[i * D + k] = deg ? s * (1.0f / (float)deg) : 0.0f;
        }
    }
}

void ops_mean_agg_backward(float *dinp, const float *dout, const sampler_block *b, int64_t D) {
    // dinp_j (N_src, D) += Σ_{i: j->i} dout_i / deg(i), gathered over the transpose
    const int64_t Ns = b->num_src;
#pragma omp parallel for schedule(dynamic, 64) if (b->num_edges * D > OPS_PAR_MIN)
    for (int64_t j = 0; j < Ns; j++) {
        float *dj = dinp + j * D;
        for (int64_t p = b->t_indptr[j]; p < b->t_indptr[j + 1]; p++) {
            const int64_t i = b->t_indices[p];
            const float inv = 1.0f / (float)(b->indptr[i + 1] - b->indptr[i]);
            const float *g = dout + i * D;
            for (int64_t k = 0; k < D; k++) dj[k] += g[k] * inv;
        }
    }
}

void ops_mean_agg_backward_ref(float *dinp, const float *dout, const sampler_block *b, int64_t D) {
    for (int64_t i = 0; i < b->num_dst; i++) {
        const int64_t deg = b->indptr[i + 1] - b->indptr[i];
        for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++)
            for (int64_t k = 0; k < D; k++)
                dinp[(int64_t)b->indices[e] * D + k] += dout[i * D + k] * (1.0f / (float)deg);
    }
}

/* ---- GCN normalised aggregation ------------------------------------------------------- */

/* In-degree of dst node i of block b, not counting a sampled self-edge, plus the self-loop. */
static inline int64_t gcn_degree(const sampler_block *b, int64_t i) {
    int64_t deg = 1;
    for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) deg += b->indices[e] != i;
    return deg;
}

void ops_gcn_norm(float *src_norm, float *dst_norm, const sampler_block *b, const sampler_block *outer) {
    const int64_t Ns = b->num_src, Nd = b->num_dst;
#pragma omp parallel for schedule(static) if (Ns > OPS_PAR_MIN)
    for (int64_t j = 0; j < Ns; j++) {
        int64_t deg = j < Nd ? gcn_degree(b, j) : outer ? gcn_degree(outer, j) : 1;
        src_norm[j] = 1.0f / sqrtf((float)deg);
        if (j < Nd) dst_norm[j] = src_norm[j];
    }
}

void ops_gcn_norm_ref(float *src_norm, float *dst_norm, const sampler_block *b, const sampler_block *outer) {
    for (int64_t i = 0; i < b->num_dst; i++) {
        float d = 1.0f;
        for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) d += b->indices[e] != i;
        dst_norm[i] = 1.0f / sqrtf(d);
    }
    for (int64_t j = 0; j < b->num_src; j++) {
        if (j < b->num_dst) {
            src_norm[j] = dst_norm[j];
            continue;
        }
        float d = 1.0f;
        if (outer)
            for (int64_t e = outer->indptr[j]; e < outer->indptr[j + 1]; e++) d += outer->indices[e] != j;
        src_norm[j] = 1.0f / sqrtf(d);
    }
}

void ops_gcn_agg_forward(float *out, const float *inp, const float *src_norm, const float *dst_norm,
                         const sampler_block *b, int64_t D) {
    // out (N_dst, D) = dst_norm_i (Σ_{j∈N(i)∪{i}} src_norm_j inp_j), inp (N_src, D)
    const int64_t Nd = b->num_dst;
#pragma omp parallel for schedule(dynamic, 64) if (b->num_edges * D > OPS_PAR_MIN)
    for (int64_t i = 0; i < Nd; i++) {
        float *o = out + i * D;
        const float *xi = inp + i * D;
        const float si = src_norm[i];
        for (int64_t k = 0; k < D; k++) o[k] = si * xi[k];
        for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
            const int64_t j = b->indices[e];
            if (j == i) continue;
            const float sj = src_norm[j];
            const float *x = inp + j * D;
            for (int64_t k = 0; k < D; k++) o[k] += sj * x[k];
        }
        const float di = dst_norm[i];
        for (int64_t k = 0; k < D; k++) o[k] *= di;
    }
}

void ops_gcn_agg_forward_ref(float *out, const float *inp, const float *src_norm,
                             const float *dst_norm, const sampler_block *b, int64_t D) {
    for (int64_t i = 0; i < b->num_dst; i++)
        for (int64_t k = 0; k < D; k++) {
            float s = src_norm[i] * inp[i * D + k];
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                const int64_t j = b->indices[e];
                if (j != i) s += src_norm[j] * inp[j * D + k];
            }
            out[i * D + k] = dst_norm[i] * s;
        }
}

void ops_gcn_agg_backward(float *dinp, const float *dout, const float *src_norm, const float *dst_norm,
                          const sampler_block *b, int64_t D) {
    // dinp_j (N_src, D) += src_norm_j Σ_{i: j->i, and i=j if j<N_dst} dst_norm_i dout_i
    const int64_t Ns = b->num_src, Nd = b->num_dst;
#pragma omp parallel for schedule(dynamic, 64) if (b->num_edges * D > OPS_PAR_MIN)
    for (int64_t j = 0; j < Ns; j++) {
        float *dj = dinp + j * D;
        const float sj = src_norm[j];
        if (j < Nd) {
            const float w = sj * dst_norm[j];
            const float *g = dout + j * D;
            for (int64_t k = 0; k < D; k++) dj[k] += w * g[k];
        }
        for (int64_t p = b->t_indptr[j]; p < b->t_indptr[j + 1]; p++) {
            const int64_t i = b->t_indices[p];
            if (i == j) continue;
            const float w = sj * dst_norm[i];
            const float *g = dout + i * D;
            for (int64_t k = 0; k < D; k++) dj[k] += w * g[k];
        }
    }
}

void ops_gcn_agg_backward_ref(float *dinp, const float *dout, const float *src_norm,
                              const float *dst_norm, const sampler_block *b, int64_t D) {
    for (int64_t i = 0; i < b->num_dst; i++) {
        for (int64_t k = 0; k < D; k++) dinp[i * D + k] += src_norm[i] * dst_norm[i] * dout[i * D + k];
        for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
            const int64_t j = b->indices[e];
            if (j == i) continue;
            for (int64_t k = 0; k < D; k++) dinp[j * D + k] += src_norm[j] * dst_norm[i] * dout[i * D + k];
        }
    }
}

/* ---- GAT attention --------------------------------------------------------------------- */

/* a (N, H) = per-head dot products of z rows (N, H, C) with att (H, C). */
static void gat_scores(float *a, const float *z, const float *att, int64_t N, int64_t H, int64_t C) {
#pragma omp parallel for schedule(static) if (N * H * C > OPS_PAR_MIN)
    for (int64_t j = 0; j < N; j++)
        for (int64_t h = 0; h < H; h++) {
            const float *zj = z + (j * H + h) * C, *ah = att + h * C;
            float s = 0.0f;
            for (int64_t c = 0; c < C; c++) s += zj[c] * ah[c];
            a[j * H + h] = s;
        }
}

void ops_gat_forward(float *out, float *alpha, float *a_src, float *a_dst, const float *z,
                     const float *att_src, const float *att_dst, const float *bias,
                     const sampler_block *b, int64_t H, int64_t C, int concat) {
    const int64_t Ns = b->num_src, Nd = b->num_dst, E = b->num_edges, HC = H * C;
    const int64_t OW = concat ? HC : C; /* output row width */
    const float head_w = concat ? 1.0f : 1.0f / (float)H;
    gat_scores(a_src, z, att_src, Ns, H, C);
    gat_scores(a_dst, z, att_dst, Nd, H, C);
#pragma omp parallel for schedule(dynamic, 32) if (E * HC > OPS_PAR_MIN)
    for (int64_t i = 0; i < Nd; i++) {
        const int64_t e0 = b->indptr[i], e1 = b->indptr[i + 1];
        float *al_self = alpha + (E + i) * H;
        /* edge softmax per head, max-subtracted; the self-loop first, then the edges */
        for (int64_t h = 0; h < H; h++) {
            const float ad = a_dst[i * H + h];
            const float s_self = leaky_relu(a_src[i * H + h] + ad);
            float mx = s_self;
            for (int64_t e = e0; e < e1; e++) {
                const int64_t j = b->indices[e];
                if (j == i) continue;
                mx = fmaxf(mx, leaky_relu(a_src[j * H + h] + ad));
            }
            const float ex_self = expf(s_self - mx);
            float sum = ex_self;
            for (int64_t e = e0; e < e1; e++) {
                const int64_t j = b->indices[e];
                float ex = 0.0f;
                if (j != i) ex = expf(leaky_relu(a_src[j * H + h] + ad) - mx);
                alpha[e * H + h] = ex;
                sum += ex;
            }
            const float inv = 1.0f / sum;
            al_self[h] = ex_self * inv;
            for (int64_t e = e0; e < e1; e++) alpha[e * H + h] *= inv;
        }
        /* weighted sum of the source rows, heads concatenated or averaged */
        float *o = out + i * OW;
        memcpy(o, bias, (size_t)OW * sizeof(float));
        for (int64_t e = e0 - 1; e < e1; e++) { /* e0 - 1: the self-loop */
            const int64_t j = e < e0 ? i : b->indices[e];
            if (e >= e0 && j == i) continue;
            const float *al = e < e0 ? al_self : alpha + e * H;
            const float *zj = z + j * HC;
            for (int64_t h = 0; h < H; h++) {
                const float w = al[h] * head_w;
                float *oh = concat ? o + h * C : o;
                const float *zh = zj + h * C;
                for (int64_t c = 0; c < C; c++) oh[c] += w * zh[c];
            }
        }
    }
}

void ops_gat_forward_ref(float *out, float *alpha, float *a_src, float *a_dst, const float *z,
                         const float *att_src, const float *att_dst, const float *bias,
                         const sampler_block *b, int64_t H, int64_t C, int concat) {
    const int64_t Ns = b->num_src, Nd = b->num_dst, E = b->num_edges, HC = H * C;
    const int64_t OW = concat ? HC : C;
    for (int64_t j = 0; j < Ns; j++)
        for (int64_t h = 0; h < H; h++) {
            float s = 0.0f, t = 0.0f;
            for (int64_t c = 0; c < C; c++) {
                s += z[j * HC + h * C + c] * att_src[h * C + c];
                t += z[j * HC + h * C + c] * att_dst[h * C + c];
            }
            a_src[j * H + h] = s;
            if (j < Nd) a_dst[j * H + h] = t;
        }
    for (int64_t i = 0; i < Nd; i++) {
        for (int64_t k = 0; k < OW; k++) out[i * OW + k] = bias[k];
        for (int64_t h = 0; h < H; h++) {
            /* scores: the self-loop in the alpha row E + i, edges in their own rows */
            float mx = leaky_relu(a_src[i * H + h] + a_dst[i * H + h]);
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++)
                if (b->indices[e] != i) mx = fmaxf(mx, leaky_relu(a_src[b->indices[e] * H + h] + a_dst[i * H + h]));
            float sum = 0.0f;
            alpha[(E + i) * H + h] = expf(leaky_relu(a_src[i * H + h] + a_dst[i * H + h]) - mx);
            sum += alpha[(E + i) * H + h];
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                const int64_t j = b->indices[e];
                alpha[e * H + h] = j == i ? 0.0f : expf(leaky_relu(a_src[j * H + h] + a_dst[i * H + h]) - mx);
                sum += alpha[e * H + h];
            }
            alpha[(E + i) * H + h] /= sum;
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) alpha[e * H + h] /= sum;
            /* aggregate */
            for (int64_t c = 0; c < C; c++) {
                float s = alpha[(E + i) * H + h] * z[i * HC + h * C + c];
                for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++)
                    s += alpha[e * H + h] * z[(int64_t)b->indices[e] * HC + h * C + c];
                if (concat) out[i * OW + h * C + c] += s;
                else out[i * OW + c] += s / (float)H;
            }
        }
    }
}

int64_t ops_gat_backward_work(int64_t N_src, int64_t N_dst, int64_t E, int64_t H) {
    return (E + N_dst) * H + N_src * H + N_dst * H;
}

void ops_gat_backward(float *dz, float *datt_src, float *datt_dst, float *dbias, float *work,
                      const float *dout, const float *z, const float *alpha, const float *a_src,
                      const float *a_dst, const float *att_src, const float *att_dst,
                      const sampler_block *b, int64_t H, int64_t C, int concat) {
    const int64_t Ns = b->num_src, Nd = b->num_dst, E = b->num_edges, HC = H * C;
    const int64_t OW = concat ? HC : C;
    const float head_w = concat ? 1.0f : 1.0f / (float)H;
    float *ds = work;                    /* (E + N_dst, H) ∂/∂(raw score) per edge / self-loop */
    float *da_src = ds + (E + Nd) * H;   /* (N_src, H) */
    float *da_dst = da_src + Ns * H;     /* (N_dst, H) */
    /* gradient of head h of dst i's output: g = dout_i[h*C ..] (concat) or dout_i / H (mean) */
#define GAT_G(i, h) (dout + (i) * OW + (concat ? (h) * C : 0))

    /* 1. per dst (parallel): dα = g·z_j, softmax backward, LeakyReLU backward -> ds, da_dst */
#pragma omp parallel for schedule(dynamic, 32) if (E * HC > OPS_PAR_MIN)
    for (int64_t i = 0; i < Nd; i++) {
        const int64_t e0 = b->indptr[i], e1 = b->indptr[i + 1];
        for (int64_t h = 0; h < H; h++) {
            const float *g = GAT_G(i, h);
            float dot = 0.0f; /* Σ_j α_ij dα_ij */
            for (int64_t e = e0 - 1; e < e1; e++) {
                const int64_t j = e < e0 ? i : b->indices[e], row = e < e0 ? E + i : e;
                if (e >= e0 && j == i) {
                    ds[row * H + h] = 0.0f;
                    continue;
                }
                const float *zh = z + j * HC + h * C;
                float da = 0.0f;
                for (int64_t c = 0; c < C; c++) da += g[c] * zh[c];
                da *= head_w;
                ds[row * H + h] = da;
                dot += alpha[row * H + h] * da;
            }
            const float ad = a_dst[i * H + h];
            float sum = 0.0f;
            for (int64_t e = e0 - 1; e < e1; e++) {
                const int64_t j = e < e0 ? i : b->indices[e], row = e < e0 ? E + i : e;
                if (e >= e0 && j == i) continue;
                const float de = alpha[row * H + h] * (ds[row * H + h] - dot);
                const float dr = a_src[j * H + h] + ad > 0.0f ? de : 0.2f * de;
                ds[row * H + h] = dr;
                sum += dr;
            }
            da_dst[i * H + h] = sum;
        }
    }

    /* 2. per source (parallel, over the transpose): dz_j += Σ_i α_ij g_i, da_src_j = Σ_i ds_ij,
     * then the score terms dz_j += da_src_j att_src (+ da_dst_j att_dst for dst rows) */
#pragma omp parallel for schedule(dynamic, 32) if (E * HC > OPS_PAR_MIN)
    for (int64_t j = 0; j < Ns; j++) {
        float *dzj = dz + j * HC;
        float *das = da_src + j * H;
        for (int64_t h = 0; h < H; h++) das[h] = 0.0f;
        const int64_t p0 = b->t_indptr[j], p1 = b->t_indptr[j + 1];
        for (int64_t p = (j < Nd ? p0 - 1 : p0); p < p1; p++) { /* p0 - 1: the self-loop */
            const int64_t i = p < p0 ? j : b->t_indices[p];
            if (p >= p0 && i == j) continue;
            const int64_t row = p < p0 ? E + j : b->t_eid[p];
            for (int64_t h = 0; h < H; h++) {
                const float w = alpha[row * H + h] * head_w;
                const float *g = GAT_G(i, h);
                float *dzh = dzj + h * C;
                for (int64_t c = 0; c < C; c++) dzh[c] += w * g[c];
                das[h] += ds[row * H + h];
            }
        }
        for (int64_t h = 0; h < H; h++) {
            float *dzh = dzj + h * C;
            const float *as = att_src + h * C, *at = att_dst + h * C;
            const float vs = das[h], vd = j < Nd ? da_dst[j * H + h] : 0.0f;
            for (int64_t c = 0; c < C; c++) dzh[c] += vs * as[c] + vd * at[c];
        }
    }
#undef GAT_G

    /* 3. serial reductions over rows: the attention vectors and the bias */
    for (int64_t j = 0; j < Ns; j++)
        for (int64_t h = 0; h < H; h++) {
            const float *zh = z + j * HC + h * C;
            const float vs = da_src[j * H + h];
            float *gs = datt_src + h * C;
            for (int64_t c = 0; c < C; c++) gs[c] += vs * zh[c];
            if (j < Nd) {
                const float vd = da_dst[j * H + h];
                float *gd = datt_dst + h * C;
                for (int64_t c = 0; c < C; c++) gd[c] += vd * zh[c];
            }
        }
    bias_backward(dbias, dout, Nd, OW);
}

void ops_gat_backward_ref(float *dz, float *datt_src, float *datt_dst, float *dbias, float *work,
                          const float *dout, const float *z, const float *alpha, const float *a_src,
                          const float *a_dst, const float *att_src, const float *att_dst,
                          const sampler_block *b, int64_t H, int64_t C, int concat) {
    const int64_t Ns = b->num_src, Nd = b->num_dst, E = b->num_edges, HC = H * C;
    const int64_t OW = concat ? HC : C;
    float *da_src = work;          /* (N_src, H) */
    float *da_dst = work + Ns * H; /* (N_dst, H) */
    memset(da_src, 0, (size_t)(Ns * H) * sizeof(float));
    memset(da_dst, 0, (size_t)(Nd * H) * sizeof(float));
    for (int64_t i = 0; i < Nd; i++) {
        for (int64_t k = 0; k < OW; k++) dbias[k] += dout[i * OW + k];
        for (int64_t h = 0; h < H; h++) {
            /* the in-edges of i as (source, alpha row), the self-loop first */
            const int64_t n_in = 1 + b->indptr[i + 1] - b->indptr[i];
            float dot = 0.0f;
            for (int64_t t = 0; t < n_in; t++) {
                const int64_t j = t == 0 ? i : b->indices[b->indptr[i] + t - 1];
                const int64_t row = t == 0 ? E + i : b->indptr[i] + t - 1;
                if (t > 0 && j == i) continue;
                float da = 0.0f;
                for (int64_t c = 0; c < C; c++) {
                    const float g = concat ? dout[i * OW + h * C + c] : dout[i * OW + c] / (float)H;
                    da += g * z[j * HC + h * C + c];
                    dz[j * HC + h * C + c] += alpha[row * H + h] * g;
                }
                dot += alpha[row * H + h] * da;
            }
            for (int64_t t = 0; t < n_in; t++) {
                const int64_t j = t == 0 ? i : b->indices[b->indptr[i] + t - 1];
                const int64_t row = t == 0 ? E + i : b->indptr[i] + t - 1;
                if (t > 0 && j == i) continue;
                float da = 0.0f;
                for (int64_t c = 0; c < C; c++) {
                    const float g = concat ? dout[i * OW + h * C + c] : dout[i * OW + c] / (float)H;
                    da += g * z[j * HC + h * C + c];
                }
                float de = alpha[row * H + h] * (da - dot);
                if (a_src[j * H + h] + a_dst[i * H + h] <= 0.0f) de *= 0.2f;
                da_src[j * H + h] += de;
                da_dst[i * H + h] += de;
            }
        }
    }
    for (int64_t j = 0; j < Ns; j++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t c = 0; c < C; c++) {
                const int64_t k = j * HC + h * C + c;
                dz[k] += da_src[j * H + h] * att_src[h * C + c];
                datt_src[h * C + c] += da_src[j * H + h] * z[k];
                if (j < Nd) {
                    dz[k] += da_dst[j * H + h] * att_dst[h * C + c];
                    datt_dst[h * C + c] += da_dst[j * H + h] * z[k];
                }
            }
}

/* ---- ReLU ------------------------------------------------------------------------------- */

void ops_relu_forward(float *out, const float *inp, int64_t n) {
#pragma omp parallel for schedule(static) if (n > OPS_PAR_MIN)
    for (int64_t k = 0; k < n; k++) out[k] = inp[k] > 0.0f ? inp[k] : 0.0f;
}

void ops_relu_forward_ref(float *out, const float *inp, int64_t n) {
    for (int64_t k = 0; k < n; k++) out[k] = fmaxf(inp[k], 0.0f);
}

/* Written as a select the compiler vectorises (compare, and, add): the sign of a pre-activation
 * is a coin flip, and as a branch it mispredicts every other element (measured 10% of a
 * products-scale training step). */
void ops_relu_backward(float *dinp, const float *dout, const float *inp, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > OPS_PAR_MIN)
    for (int64_t k = 0; k < n; k++) {
        const float g = dout[k], x = inp[k]; /* both loaded: a select, not a branch */
        dinp[k] += x > 0.0f ? g : 0.0f;
    }
}

void ops_relu_backward_ref(float *dinp, const float *dout, const float *inp, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        if (inp[k] > 0.0f) dinp[k] += dout[k];
}

/* ---- GELU (exact) ------------------------------------------------------------------------ */

static inline float gelu(float x) { return 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2)); }
/* d gelu / dx = Φ(x) + x φ(x), φ(x) = exp(-x²/2) / sqrt(2π) */
static inline float gelu_grad(float x) {
    return 0.5f * (1.0f + erff(x * (float)M_SQRT1_2)) + x * expf(-0.5f * x * x) * (float)(0.5 * M_2_SQRTPI * M_SQRT1_2);
}

void ops_gelu_forward(float *out, const float *inp, int64_t n) {
#pragma omp parallel for schedule(static) if (n > OPS_PAR_MIN / 8)
    for (int64_t k = 0; k < n; k++) out[k] = gelu(inp[k]);
}

void ops_gelu_forward_ref(float *out, const float *inp, int64_t n) {
    for (int64_t k = 0; k < n; k++) out[k] = gelu(inp[k]);
}

void ops_gelu_backward(float *dinp, const float *dout, const float *inp, int64_t n) {
#pragma omp parallel for schedule(static) if (n > OPS_PAR_MIN / 8)
    for (int64_t k = 0; k < n; k++) dinp[k] += dout[k] * gelu_grad(inp[k]);
}

void ops_gelu_backward_ref(float *dinp, const float *dout, const float *inp, int64_t n) {
    for (int64_t k = 0; k < n; k++) dinp[k] += dout[k] * gelu_grad(inp[k]);
}

/* ---- dropout ---------------------------------------------------------------------------- */

/* Element idx of a layer's stream is SplitMix64's draw number idx + 1 from the stream key:
 * random access, no state. Kept iff its top 53 bits are >= p · 2^53. */
int ops_dropout_keep(uint64_t key, int layer, int64_t idx, float p) {
    const uint64_t stream = rng_key(key, (uint64_t)layer);
    const uint64_t threshold = (uint64_t)((double)p * 0x1.0p53);
    return (rng_mix64(stream + ((uint64_t)idx + 1) * 0x9e3779b97f4a7c15ULL) >> 11) >= threshold;
}

/* The id of element (r, c) of a (n / cols, cols) matrix whose row r is node row_ids[r] is the
 * node's global id times cols plus the column, so a node's mask does not depend on where it
 * sits in the batch; without row_ids, element k has id k. Element id e draws
 * rng_mix64(stream + (e + 1)·G): along a run of consecutive ids the argument steps by G, so the
 * fast kernels walk runs — a row, or a fixed-size chunk without row_ids — with one add per
 * element instead of a division and two multiplies (same bits as the _ref, mod 2^64). */
#define DROPOUT_G 0x9e3779b97f4a7c15ULL
#define DROPOUT_CHUNK 4096

/* keep ? a : b without a branch (the keep bit is a coin flip: a branch would mispredict every
 * other element); keep is all ones or zero. Bitwise: exactly a or b, signed zeros included. */
static inline float dropout_select(uint32_t keep, float a, float b) {
    uint32_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    const uint32_t u = (ua & keep) | (ub & ~keep);
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/* Runs of consecutive element ids: their count, and run r's first element and length. */
static inline int64_t dropout_runs(int64_t n, const int64_t *row_ids, int64_t cols) {
    if (row_ids) {
        CGNN_CHECK(cols >= 1 && n % cols == 0);
        return n / cols;
    }
    return (n + DROPOUT_CHUNK - 1) / DROPOUT_CHUNK;
}
static inline uint64_t dropout_run(const int64_t *row_ids, int64_t cols, int64_t n, int64_t r, int64_t *k0,
                                   int64_t *len) {
    const int64_t width = row_ids ? cols : DROPOUT_CHUNK;
    *k0 = r * width;
    *len = n - *k0 < width ? n - *k0 : width;
    const uint64_t e0 = row_ids ? (uint64_t)row_ids[r] * (uint64_t)cols : (uint64_t)*k0;
    return (e0 + 1) * DROPOUT_G; /* + stream: the argument of the run's first draw */
}

void ops_dropout_forward(float *out, const float *inp, int64_t n, const int64_t *row_ids, int64_t cols, float p,
                         uint64_t key, int layer) {
    const uint64_t stream = rng_key(key, (uint64_t)layer);
    const uint64_t threshold = (uint64_t)((double)p * 0x1.0p53);
    const float scale = 1.0f / (1.0f - p);
    const int64_t runs = dropout_runs(n, row_ids, cols);
#pragma omp parallel for schedule(static) if (n > OPS_PAR_MIN)
    for (int64_t r = 0; r < runs; r++) {
        int64_t k0, len;
        uint64_t h = stream + dropout_run(row_ids, cols, n, r, &k0, &len);
        const float *x = inp + k0;
        float *y = out + k0;
        for (int64_t c = 0; c < len; c++, h += DROPOUT_G) {
            const uint32_t keep = 0u - (uint32_t)((rng_mix64(h) >> 11) >= threshold);
            y[c] = dropout_select(keep, x[c] * scale, 0.0f);
        }
    }
}

void ops_dropout_forward_ref(float *out, const float *inp, int64_t n, const int64_t *row_ids, int64_t cols, float p,
                             uint64_t key, int layer) {
    for (int64_t k = 0; k < n; k++) {
        const int64_t e = row_ids ? row_ids[k / cols] * cols + k % cols : k;
        out[k] = ops_dropout_keep(key, layer, e, p) ? inp[k] * (1.0f / (1.0f - p)) : 0.0f;
    }
}

void ops_dropout_backward(float *dinp, const float *dout, int64_t n, const int64_t *row_ids, int64_t cols, float p,
                          uint64_t key, int layer) {
    const uint64_t stream = rng_key(key, (uint64_t)layer);
    const uint64_t threshold = (uint64_t)((double)p * 0x1.0p53);
    const float scale = 1.0f / (1.0f - p);
    const int64_t runs = dropout_runs(n, row_ids, cols);
#pragma omp parallel for schedule(static) if (n > OPS_PAR_MIN)
    for (int64_t r = 0; r < runs; r++) {
        int64_t k0, len;
        uint64_t h = stream + dropout_run(row_ids, cols, n, r, &k0, &len);
        const float *g = dout + k0;
        float *d = dinp + k0;
        for (int64_t c = 0; c < len; c++, h += DROPOUT_G) {
            const uint32_t keep = 0u - (uint32_t)((rng_mix64(h) >> 11) >= threshold);
            d[c] = dropout_select(keep, d[c] + g[c] * scale, d[c]);
        }
    }
}

void ops_dropout_backward_ref(float *dinp, const float *dout, int64_t n, const int64_t *row_ids, int64_t cols,
                              float p, uint64_t key, int layer) {
    for (int64_t k = 0; k < n; k++) {
        const int64_t e = row_ids ? row_ids[k / cols] * cols + k % cols : k;
        if (ops_dropout_keep(key, layer, e, p)) dinp[k] += dout[k] * (1.0f / (1.0f - p));
    }
}

/* ---- row L2 normalisation --------------------------------------------------------------- */

/* max(||x||, eps) of one row, accumulated in double. */
static inline double row_norm(const float *x, int64_t D) {
    double s = 0.0;
    for (int64_t k = 0; k < D; k++) s += (double)x[k] * (double)x[k];
    s = sqrt(s);
    return s > OPS_L2NORM_EPS ? s : OPS_L2NORM_EPS;
}

void ops_l2norm_forward(float *out, const float *inp, int64_t N, int64_t D) {
#pragma omp parallel for schedule(static) if (N * D > OPS_PAR_MIN)
    for (int64_t r = 0; r < N; r++) {
        const float inv = (float)(1.0 / row_norm(inp + r * D, D));
        for (int64_t k = 0; k < D; k++) out[r * D + k] = inp[r * D + k] * inv;
    }
}

void ops_l2norm_forward_ref(float *out, const float *inp, int64_t N, int64_t D) {
    for (int64_t r = 0; r < N; r++) {
        const double nrm = row_norm(inp + r * D, D);
        for (int64_t k = 0; k < D; k++) out[r * D + k] = (float)(inp[r * D + k] / nrm);
    }
}

/* With n = max(||x||, eps) and y = x / n: if ||x|| > eps, dx = (dy - y (y·dy)) / n, else
 * (the clamp is active, n is constant) dx = dy / eps. */
void ops_l2norm_backward(float *dinp, const float *dout, const float *inp, int64_t N, int64_t D) {
#pragma omp parallel for schedule(static) if (N * D > OPS_PAR_MIN)
    for (int64_t r = 0; r < N; r++) {
        const float *x = inp + r * D, *g = dout + r * D;
        float *dx = dinp + r * D;
        const double nrm = row_norm(x, D);
        const double inv = 1.0 / nrm;
        double yg = 0.0;
        if (nrm > OPS_L2NORM_EPS)
            for (int64_t k = 0; k < D; k++) yg += (double)x[k] * inv * (double)g[k];
        for (int64_t k = 0; k < D; k++) dx[k] += (float)(((double)g[k] - (double)x[k] * inv * yg) * inv);
    }
}

void ops_l2norm_backward_ref(float *dinp, const float *dout, const float *inp, int64_t N, int64_t D) {
    for (int64_t r = 0; r < N; r++) {
        const double nrm = row_norm(inp + r * D, D);
        double yg = 0.0;
        for (int64_t k = 0; k < D; k++) yg += inp[r * D + k] / nrm * dout[r * D + k];
        if (!(nrm > OPS_L2NORM_EPS)) yg = 0.0;
        for (int64_t k = 0; k < D; k++)
            dinp[r * D + k] += (float)((dout[r * D + k] - inp[r * D + k] / nrm * yg) / nrm);
    }
}

/* ---- row-wise linear -------------------------------------------------------------------- */

/* The weight is transposed into work as wt (I, Op), Op = O rounded up to LROWS_OB with zero
 * columns, followed by the bias padded to Op (zeros without a bias). A register block is
 * LROWS_RB rows x 2 vectors of outputs; every output element is one accumulator that starts at
 * its bias and adds inp_n,i · wt_i,o for i = 0, 1, ..., I-1 — exactly the _ref's operations in
 * the _ref's order, whatever the vector width, block position or thread. */
#define LROWS_OB 16 /* padding of the transposed weight: a multiple of both vector blocks */
#define LROWS_RB 4  /* rows per register block */
#define LROWS_NB 64 /* rows per OpenMP task */

int64_t ops_linear_rows_work(int64_t I, int64_t O) {
    const int64_t Op = (O + LROWS_OB - 1) / LROWS_OB * LROWS_OB;
    return (I + 1) * Op;
}

/* One kernel body per vector width VW (floats): outputs in blocks of 2·VW. */
#define LROWS_KERNEL(NAME, VW, ATTR)                                                                   \
    ATTR static void NAME(float *out, const float *inp, const float *wt, int64_t N, int64_t I, int64_t O, \
                          int accumulate) {                                                            \
        typedef float vec __attribute__((vector_size(VW * sizeof(float))));                           \
        const int64_t Op = (O + LROWS_OB - 1) / LROWS_OB * LROWS_OB, OB = 2 * VW;                      \
        const float *bias = wt + I * Op;                                                               \
        _Pragma("omp parallel for schedule(static) if (N * I * O > 64 * OPS_PAR_MIN)")                 \
        for (int64_t n0 = 0; n0 < N; n0 += LROWS_NB) {                                                 \
            const int64_t n1 = n0 + LROWS_NB < N ? n0 + LROWS_NB : N;                                 \
            float tmp[LROWS_RB][2 * VW];                                                               \
            for (int64_t o = 0; o < O; o += OB) {                                                      \
                const int64_t no = O - o < OB ? O - o : OB;                                            \
                vec b0, b1;                                                                            \
                memcpy(&b0, bias + o, sizeof b0);                                                      \
                memcpy(&b1, bias + o + VW, sizeof b1);                                                 \
                for (int64_t n = n0; n < n1; n += LROWS_RB) {                                          \
                    const int64_t nr = n1 - n < LROWS_RB ? n1 - n : LROWS_RB;                          \
                    /* rows past the end repeat row n (computed, never stored) */                      \
                    const float *x0 = inp + n * I, *x1 = nr > 1 ? x0 + I : x0;                         \
                    const float *x2 = nr > 2 ? x0 + 2 * I : x0, *x3 = nr > 3 ? x0 + 3 * I : x0;        \
                    vec a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1, a30 = b0, a31 = b1;  \
                    const float *w = wt + o;                                                           \
                    for (int64_t i = 0; i < I; i++, w += Op) {                                         \
                        vec w0, w1;                                                                    \
                        memcpy(&w0, w, sizeof w0);                                                     \
                        memcpy(&w1, w + VW, sizeof w1);                                                \
                        const vec v0 = (vec){0} + x0[i], v1 = (vec){0} + x1[i];                        \
                        const vec v2 = (vec){0} + x2[i], v3 = (vec){0} + x3[i];                        \
                        a00 += v0 * w0;                                                                \
                        a01 += v0 * w1;                                                                \
                        a10 += v1 * w0;                                                                \
                        a11 += v1 * w1;                                                                \
                        a20 += v2 * w0;                                                                \
                        a21 += v2 * w1;                                                                \
                        a30 += v3 * w0;                                                                \
                        a31 += v3 * w1;                                                                \
                    }                                                                                  \
                    memcpy(tmp[0], &a00, sizeof a00);                                                  \
                    memcpy(tmp[0] + VW, &a01, sizeof a01);                                             \
                    memcpy(tmp[1], &a10, sizeof a10);                                                  \
                    memcpy(tmp[1] + VW, &a11, sizeof a11);                                             \
                    memcpy(tmp[2], &a20, sizeof a20);                                                  \
                    memcpy(tmp[2] + VW, &a21, sizeof a21);                                             \
                    memcpy(tmp[3], &a30, sizeof a30);                                                  \
                    memcpy(tmp[3] + VW, &a31, sizeof a31);                                             \
                    for (int64_t r = 0; r < nr; r++) {                                                 \
                        float *dst = out + (n + r) * O + o;                                            \
                        if (accumulate)                                                                \
                            for (int64_t k = 0; k < no; k++) dst[k] += tmp[r][k];                      \
                        else                                                                           \
                            memcpy(dst, tmp[r], (size_t)no * sizeof(float));                           \
                    }                                                                                  \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }

LROWS_KERNEL(linear_rows_v4, 4, )
#if defined(__x86_64__) && defined(__GNUC__)
#define LROWS_HAVE_AVX 1
/* AVX without FMA: the same multiplies and adds as the 4-wide path, 8 lanes at a time */
LROWS_KERNEL(linear_rows_v8, 8, __attribute__((target("avx"))))
#endif

void ops_linear_rows_forward(float *out, const float *inp, const float *weight, const float *bias, int64_t N,
                             int64_t I, int64_t O, int accumulate, float *work) {
    if (N == 0) return;
    const int64_t Op = (O + LROWS_OB - 1) / LROWS_OB * LROWS_OB;
    for (int64_t i = 0; i < I; i++) {
        float *w = work + i * Op;
        for (int64_t o = 0; o < O; o++) w[o] = weight[o * I + i];
        for (int64_t o = O; o < Op; o++) w[o] = 0.0f;
    }
    float *b = work + I * Op;
    for (int64_t o = 0; o < Op; o++) b[o] = bias && o < O ? bias[o] : 0.0f;
#ifdef LROWS_HAVE_AVX
    /* CGNN_NO_AVX=1 forces the portable path (tests hold the two together) */
    const char *no_avx = getenv("CGNN_NO_AVX");
    if (__builtin_cpu_supports("avx") && !(no_avx && *no_avx == '1')) {
        linear_rows_v8(out, inp, work, N, I, O, accumulate);
        return;
    }
#endif
    linear_rows_v4(out, inp, work, N, I, O, accumulate);
}

void ops_linear_rows_forward_ref(float *out, const float *inp, const float *weight, const float *bias, int64_t N,
                                 int64_t I, int64_t O, int accumulate) {
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++) {
            float s = bias ? bias[o] : 0.0f;
            for (int64_t i = 0; i < I; i++) s += inp[n * I + i] * weight[o * I + i];
            out[n * O + o] = accumulate ? out[n * O + o] + s : s;
        }
}
