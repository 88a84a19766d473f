/* hgt.c — GiGL's HGT (gigl.src.common.models.pyg.heterogeneous.HGT over GiGL's HGTConv, a copy
 * of PyG's HGTConv that keeps node types without incoming edges) on typed batches; see model.h
 * ("typed graphs") and hgt.h.
 *
 * Shapes (per node type t; layer l consumes the rows of hop L-l and produces those of hop
 * L-1-l, n_t[h] = mb->typed->num_nodes[t][h]; e = (s, r, d) an edge type; F = hidden_dim,
 * H heads, D = F / H, C = out_dim):
 *   x_t          (n_t[L], F_t)    input rows (mb->typed->features[t])
 *   h[0][t]      (n_t[L], F)      relu(lin_dict[t](x_t))
 *   kqv[l][t]    (n_t[L-l], 3F)   [k | q | v] = kqv_lin[t](h[l][t])   (torch.tensor_split order)
 *   kt[l][e]     (n_s[L-l], F)    head h: k_s[:, h] · k_rel.weight[h*K + e];  vt[l][e] likewise
 *   alpha[l][e]  (E_e, H)         attention weights of edge type e's sampled edges
 *   agg[l][t]    (n_t[L-1-l], F)  attention output (hgt_attention_forward over every edge type into t)
 *   g[l][t] = gelu(agg[l][t]);  a[l][t] = out_lin[t](g[l][t])            (n_t[L-1-l], F)
 *   h[l+1][t]    (n_t[L-1-l], F)  σ(skip_t) a + (1 - σ(skip_t)) h[l][t][:n_t[L-1-l]], then dropout
 *   y[t]         (n_t[0], C)      lin(h[L][t]);  out[t] = L2-normalised y (optional)
 * GiGL runs every node of the sampled subgraph through every conv; here (the typed blocks'
 * convention, as HeteroSAGE and RGCN) layer l produces only the rows later layers read. These
 * are the same values: a node's conv output depends only on its own rows and its in-edges.
 *
 * Memory per layer: kqv 3F floats per node, kt / vt 2F per (edge type, source row), H per sampled
 * edge (alpha), agg / g / a 3F per destination row. The backward scratch is shared by the layers:
 * 2H floats per sampled edge of the largest hop, one pair of (source rows, F) buffers for dk'/dv'.
 *
 * Determinism: dense products on cblas_sgemm; the attention parallel over destination rows
 * (forward, backward to q) or over source rows through the transpose (backward to k', v');
 * reductions over rows (skip, p_rel) serial: bitwise reproducible for a thread count.
 * Buffers are sized at init from the typed capacity; forward and backward allocate nothing.
 */
#include "nn/hgt.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/hetero.h"
#include "nn/ops.h"


#define T_MAX MINIBATCH_MAX_NODE_TYPES
#define K_MAX MINIBATCH_MAX_EDGE_TYPES
#define L_MAX MINIBATCH_MAX_LAYERS

/* Below this much work per parallel loop, threads cost more than they save (as in ops.c). */
#define HGT_PAR_MIN 8192

/* Tensors of conv l, from c0 = conv_tensor[l], in GiGL HGTConv's state_dict order:
 *   c0 + 2t, + 1       kqv_lin.lins.<t>.weight [3F, F], .bias [3F]
 *   c0 + 2T + 2t, + 1  out_lin.lins.<t>.weight [F, F], .bias [F]
 *   c0 + 4T            k_rel.weight [H*K, D, D];   c0 + 4T + 1   v_rel.weight
 *   c0 + 4T + 2 + t    skip.<t> [1]
 *   c0 + 5T + 2 + e    p_rel.<s>__<r>__<d> [1, H] */
enum { HGT_CONV_FIXED = 2 };

struct hgt_scratch {
    int64_t F, H, D;
    int T, K;
    int lin_tensor[T_MAX];              /* lin_dict.<t>.weight; .bias next */
    int conv_tensor[L_MAX];             /* first tensor of convs.l */
    int out_tensor;                     /* lin.weight; lin.bias next */
    int rel[T_MAX][K_MAX], num_rels[T_MAX]; /* the edge types into node type t, ascending */
    float *h[L_MAX + 1][T_MAX];         /* h[l]: layer l's input rows; h[L]: the last conv's output */
    float *kqv[L_MAX][T_MAX];
    float *kt[L_MAX][K_MAX], *vt[L_MAX][K_MAX];
    float *alpha[L_MAX][K_MAX];
    float *agg[L_MAX][T_MAX], *g[L_MAX][T_MAX], *a[L_MAX][T_MAX];
    float *y[T_MAX], *out[T_MAX];
    /* backward */
    float *gh[T_MAX], *gx[T_MAX];       /* d/d(a layer's output) and d/d(its input), F wide */
    float *gtmp[T_MAX];                 /* through dropout / ReLU, then d/dg */
    float *dkqv[T_MAX];                 /* (rows, 3F) */
    float *dagg[T_MAX];                 /* (dst rows, F) */
    float *da;                          /* (dst rows, F) */
    float *dkt, *dvt;                   /* (src rows, F) */
    float *work[K_MAX];                 /* (2 E, H) per edge type */
    float *dy;                          /* (seed rows, C): through the L2 normalisation */
    float *dx[T_MAX];                   /* d/dx_t for input_grad types */
    const minibatch *mb;                /* the last forward's batch */
    int training;
    uint64_t dropout_key;
};

static float *P(const model *m, int t) { return m->params + m->tensors[t].offset; }
static float *G(const model *m, int t) { return m->grads + m->tensors[t].offset; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int kqv_w(const hgt_scratch *s, int l, int t) { return s->conv_tensor[l] + 2 * t; }
static int out_w(const hgt_scratch *s, int l, int t) { return s->conv_tensor[l] + 2 * s->T + 2 * t; }
static int k_rel(const hgt_scratch *s, int l) { return s->conv_tensor[l] + 4 * s->T; }
static int v_rel(const hgt_scratch *s, int l) { return s->conv_tensor[l] + 4 * s->T + 1; }
static int skip_t(const hgt_scratch *s, int l, int t) { return s->conv_tensor[l] + 4 * s->T + HGT_CONV_FIXED + t; }
static int p_rel(const hgt_scratch *s, int l, int e) { return s->conv_tensor[l] + 5 * s->T + HGT_CONV_FIXED + e; }

static float *alloc_floats(int64_t n, int *ok) {
    float *p = malloc((size_t)(n + 1) * sizeof(float));
    if (!p) *ok = 0;
    return p;
}

static float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

/* Row-major C (M, N) = op(A) · op(B) + beta C with explicit leading dimensions; counted by the
 * registered GEMM stats (cgnn bench train). */
static void gemm(int ta, int tb, int64_t M, int64_t N, int64_t Kd, const float *A, int64_t lda, const float *B,
                 int64_t ldb, float beta, float *C, int64_t ldc) {
    ops_gemm_ld(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C, ldc);
}

static const sampler_block *blk(const minibatch *mb, int l, int e) {
    return &mb->typed->blocks[l * mb->typed->num_edge_types + e];
}

/* ---- attention kernels ------------------------------------------------------------------ */

static inline float dotf(const float *x, const float *y, int64_t n) {
    float acc = 0.0f;
    for (int64_t k = 0; k < n; k++) acc += x[k] * y[k];
    return acc;
}

static inline void axpyf(float *y, float a, const float *x, int64_t n) {
    for (int64_t k = 0; k < n; k++) y[k] += a * x[k];
}

static int64_t rels_edges(const hgt_rel *rels, int n_rels, int64_t N_dst) {
    int64_t E = 0;
    for (int r = 0; r < n_rels; r++) {
        CGNN_CHECK(rels[r].b->num_dst == N_dst);
        E += rels[r].b->num_edges;
    }
    return E;
}

void hgt_attention_forward(float *agg, const hgt_rel *rels, int n_rels, const float *q, int64_t ldq,
                           int64_t N_dst, int64_t H, int64_t D) {
    const int64_t HD = H * D, E = rels_edges(rels, n_rels, N_dst);
    const float scale = 1.0f / sqrtf((float)D);
#pragma omp parallel for schedule(dynamic, 64) if (E * HD > HGT_PAR_MIN)
    for (int64_t i = 0; i < N_dst; i++) {
        float *o = agg + i * HD;
        memset(o, 0, (size_t)HD * sizeof(float));
        for (int64_t h = 0; h < H; h++) {
            const float *qi = q + i * ldq + h * D;
            float mx = -INFINITY;
            int64_t deg = 0;
            for (int r = 0; r < n_rels; r++) {
                const hgt_rel *rl = &rels[r];
                for (int64_t k = rl->b->indptr[i]; k < rl->b->indptr[i + 1]; k++) {
                    const int64_t j = rl->b->indices[k];
                    const float sc = dotf(qi, rl->kt + j * HD + h * D, D) * rl->p[h] * scale;
                    rl->alpha[k * H + h] = sc;
                    mx = fmaxf(mx, sc);
                    deg++;
                }
            }
            if (deg == 0) continue; /* no in-edges: agg stays 0 (a NaN score propagates below) */
            float sum = 0.0f;
            for (int r = 0; r < n_rels; r++)
                for (int64_t k = rels[r].b->indptr[i]; k < rels[r].b->indptr[i + 1]; k++) {
                    const float ex = expf(rels[r].alpha[k * H + h] - mx);
                    rels[r].alpha[k * H + h] = ex;
                    sum += ex;
                }
            const float inv = 1.0f / sum;
            for (int r = 0; r < n_rels; r++) {
                const hgt_rel *rl = &rels[r];
                for (int64_t k = rl->b->indptr[i]; k < rl->b->indptr[i + 1]; k++) {
                    const float al = rl->alpha[k * H + h] * inv;
                    rl->alpha[k * H + h] = al;
                    axpyf(o + h * D, al, rl->vt + (int64_t)rl->b->indices[k] * HD + h * D, D);
                }
            }
        }
    }
}

/* Straight from the formula, one stage at a time over all edges: scores, per-(row, head) max,
 * exponentials and sums, normalisation, then the weighted sum scattered edge by edge. */
void hgt_attention_forward_ref(float *agg, const hgt_rel *rels, int n_rels, const float *q, int64_t ldq,
                               int64_t N_dst, int64_t H, int64_t D) {
    const int64_t HD = H * D;
    rels_edges(rels, n_rels, N_dst);
    float *mx = malloc((size_t)(N_dst * H + 1) * sizeof(float)), *sum = calloc((size_t)(N_dst * H + 1), sizeof(float));
    CGNN_CHECK(mx && sum);
    for (int64_t k = 0; k < N_dst * H; k++) mx[k] = -INFINITY;
    for (int r = 0; r < n_rels; r++) {
        const sampler_block *b = rels[r].b;
        for (int64_t i = 0; i < N_dst; i++)
            for (int64_t k = b->indptr[i]; k < b->indptr[i + 1]; k++)
                for (int64_t h = 0; h < H; h++) {
                    float dot = 0.0f;
                    for (int64_t c = 0; c < D; c++)
                        dot += q[i * ldq + h * D + c] * rels[r].kt[(int64_t)b->indices[k] * HD + h * D + c];
                    const float sc = dot * rels[r].p[h] / sqrtf((float)D);
                    rels[r].alpha[k * H + h] = sc;
                    if (sc > mx[i * H + h]) mx[i * H + h] = sc;
                }
    }
    for (int r = 0; r < n_rels; r++) {
        const sampler_block *b = rels[r].b;
        for (int64_t i = 0; i < N_dst; i++)
            for (int64_t k = b->indptr[i]; k < b->indptr[i + 1]; k++)
                for (int64_t h = 0; h < H; h++) {
                    rels[r].alpha[k * H + h] = expf(rels[r].alpha[k * H + h] - mx[i * H + h]);
                    sum[i * H + h] += rels[r].alpha[k * H + h];
                }
    }
    memset(agg, 0, (size_t)(N_dst * HD) * sizeof(float));
    for (int r = 0; r < n_rels; r++) {
        const sampler_block *b = rels[r].b;
        for (int64_t i = 0; i < N_dst; i++)
            for (int64_t k = b->indptr[i]; k < b->indptr[i + 1]; k++)
                for (int64_t h = 0; h < H; h++) {
                    rels[r].alpha[k * H + h] /= sum[i * H + h];
                    for (int64_t c = 0; c < D; c++)
                        agg[i * HD + h * D + c] +=
                            rels[r].alpha[k * H + h] * rels[r].vt[(int64_t)b->indices[k] * HD + h * D + c];
                }
    }
    free(mx);
    free(sum);
}

/* Per destination row i and head h (dα = dagg_i,h · vt_j,h, S = Σ α dα over all of i's edges,
 * ds = α (dα - S)): dq_i,h += Σ ds · p / sqrt(D) · kt_j,h; work[k] = ds · p / sqrt(D) (for dkt),
 * work[E + k] = ds · (q_i,h · kt_j,h) / sqrt(D) (the d/dp term). */
void hgt_attention_backward_dst(float *dq, int64_t lddq, const hgt_rel *rels, int n_rels, const float *dagg,
                                const float *q, int64_t ldq, int64_t N_dst, int64_t H, int64_t D) {
    const int64_t HD = H * D, E = rels_edges(rels, n_rels, N_dst);
    const float scale = 1.0f / sqrtf((float)D);
#pragma omp parallel for schedule(dynamic, 64) if (E * HD > HGT_PAR_MIN)
    for (int64_t i = 0; i < N_dst; i++) {
        for (int64_t h = 0; h < H; h++) {
            const float *gi = dagg + i * HD + h * D, *qi = q + i * ldq + h * D;
            float *dqi = dq + i * lddq + h * D;
            float S = 0.0f;
            for (int r = 0; r < n_rels; r++) {
                const hgt_rel *rl = &rels[r];
                for (int64_t k = rl->b->indptr[i]; k < rl->b->indptr[i + 1]; k++) {
                    const float dal = dotf(gi, rl->vt + (int64_t)rl->b->indices[k] * HD + h * D, D);
                    rl->work[k * H + h] = dal;
                    S += rl->alpha[k * H + h] * dal;
                }
            }
            for (int r = 0; r < n_rels; r++) {
                const hgt_rel *rl = &rels[r];
                const int64_t Er = rl->b->num_edges;
                for (int64_t k = rl->b->indptr[i]; k < rl->b->indptr[i + 1]; k++) {
                    const float *ktj = rl->kt + (int64_t)rl->b->indices[k] * HD + h * D;
                    const float ds = rl->alpha[k * H + h] * (rl->work[k * H + h] - S);
                    const float c = ds * rl->p[h] * scale;
                    rl->work[k * H + h] = c;
                    rl->work[(Er + k) * H + h] = ds * (dotf(qi, ktj, D) * scale);
                    axpyf(dqi, c, ktj, D);
                }
            }
        }
    }
}

void hgt_attention_backward_src(float *dkt, float *dvt, float *dp, const hgt_rel *rel, const float *dagg,
                                const float *q, int64_t ldq, int64_t H, int64_t D) {
    const sampler_block *b = rel->b;
    const int64_t HD = H * D, Ns = b->num_src, E = b->num_edges;
#pragma omp parallel for schedule(dynamic, 64) if (E * HD > HGT_PAR_MIN)
    for (int64_t j = 0; j < Ns; j++) {
        float *dk = dkt + j * HD, *dv = dvt + j * HD;
        for (int64_t pos = b->t_indptr[j]; pos < b->t_indptr[j + 1]; pos++) {
            const int64_t i = b->t_indices[pos], k = b->t_eid[pos];
            for (int64_t h = 0; h < H; h++) {
                axpyf(dv + h * D, rel->alpha[k * H + h], dagg + i * HD + h * D, D);
                axpyf(dk + h * D, rel->work[k * H + h], q + i * ldq + h * D, D);
            }
        }
    }
    for (int64_t h = 0; h < H; h++) { /* serial, in edge order */
        float acc = 0.0f;
        for (int64_t k = 0; k < E; k++) acc += rel->work[(E + k) * H + h];
        dp[h] += acc;
    }
}

void hgt_attention_backward_ref(float *dq, int64_t lddq, float *const *dkt, float *const *dvt, float *const *dp,
                                const hgt_rel *rels, int n_rels, const float *dagg, const float *q, int64_t ldq,
                                int64_t N_dst, int64_t H, int64_t D) {
    const int64_t HD = H * D;
    rels_edges(rels, n_rels, N_dst);
    /* S_i,h = Σ_(r,k) α dα */
    float *S = calloc((size_t)(N_dst * H + 1), sizeof(float));
    CGNN_CHECK(S);
    for (int r = 0; r < n_rels; r++) {
        const sampler_block *b = rels[r].b;
        for (int64_t i = 0; i < N_dst; i++)
            for (int64_t k = b->indptr[i]; k < b->indptr[i + 1]; k++)
                for (int64_t h = 0; h < H; h++) {
                    float dal = 0.0f;
                    for (int64_t c = 0; c < D; c++)
                        dal += dagg[i * HD + h * D + c] * rels[r].vt[(int64_t)b->indices[k] * HD + h * D + c];
                    S[i * H + h] += rels[r].alpha[k * H + h] * dal;
                }
    }
    for (int r = 0; r < n_rels; r++) {
        const sampler_block *b = rels[r].b;
        for (int64_t i = 0; i < N_dst; i++)
            for (int64_t k = b->indptr[i]; k < b->indptr[i + 1]; k++) {
                const int64_t j = b->indices[k];
                for (int64_t h = 0; h < H; h++) {
                    const float al = rels[r].alpha[k * H + h];
                    float dal = 0.0f, raw = 0.0f;
                    for (int64_t c = 0; c < D; c++) {
                        dal += dagg[i * HD + h * D + c] * rels[r].vt[j * HD + h * D + c];
                        raw += q[i * ldq + h * D + c] * rels[r].kt[j * HD + h * D + c];
                    }
                    const float ds = al * (dal - S[i * H + h]);
                    const float c_ = ds * rels[r].p[h] / sqrtf((float)D);
                    for (int64_t c = 0; c < D; c++) {
                        dq[i * lddq + h * D + c] += c_ * rels[r].kt[j * HD + h * D + c];
                        dkt[r][j * HD + h * D + c] += c_ * q[i * ldq + h * D + c];
                        dvt[r][j * HD + h * D + c] += al * dagg[i * HD + h * D + c];
                    }
                    dp[r][h] += ds * raw / sqrtf((float)D);
                }
            }
    }
    free(S);
}

/* ---- the model -------------------------------------------------------------------------- */

int hgt_init(model *m, uint64_t seed, cgnn_err *err) {
    const model_types *ty = m->types;
    const model_config *cfg = &m->cfg;
    m->hgt = calloc(1, sizeof *m->hgt);
    if (!m->hgt) return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating the HGT model");
    hgt_scratch *s = m->hgt;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = cfg->num_layers;
    const int64_t F = cfg->hidden_dim, H = cfg->num_heads, D = F / H, C = cfg->out_dim;
    CGNN_CHECK(H >= 1 && D * H == F); /* checked by hetero_init */
    s->F = F, s->H = H, s->D = D, s->T = T, s->K = K;
    char name[sizeof m->tensors[0].name];
    /* tensors in GiGL HGT's state_dict order: lin_dict, convs, lin */
    for (int t = 0; t < T; t++) {
        s->lin_tensor[t] = m->num_tensors;
        snprintf(name, sizeof name, "lin_dict.%s.weight", ty->node_type[t]);
        hetero_add_tensor(m, name, 2, F, ty->in_dim[t], 0);
        snprintf(name, sizeof name, "lin_dict.%s.bias", ty->node_type[t]);
        hetero_add_tensor(m, name, 1, F, 0, 0);
    }
    for (int l = 0; l < L; l++) {
        s->conv_tensor[l] = m->num_tensors;
        for (int t = 0; t < T; t++) {
            snprintf(name, sizeof name, "convs.%d.kqv_lin.lins.%s.weight", l, ty->node_type[t]);
            hetero_add_tensor(m, name, 2, 3 * F, F, 0);
            snprintf(name, sizeof name, "convs.%d.kqv_lin.lins.%s.bias", l, ty->node_type[t]);
            hetero_add_tensor(m, name, 1, 3 * F, 0, 0);
        }
        for (int t = 0; t < T; t++) {
            snprintf(name, sizeof name, "convs.%d.out_lin.lins.%s.weight", l, ty->node_type[t]);
            hetero_add_tensor(m, name, 2, F, F, 0);
            snprintf(name, sizeof name, "convs.%d.out_lin.lins.%s.bias", l, ty->node_type[t]);
            hetero_add_tensor(m, name, 1, F, 0, 0);
        }
        snprintf(name, sizeof name, "convs.%d.k_rel.weight", l);
        hetero_add_tensor(m, name, 3, H * K, D, D);
        snprintf(name, sizeof name, "convs.%d.v_rel.weight", l);
        hetero_add_tensor(m, name, 3, H * K, D, D);
        for (int t = 0; t < T; t++) {
            snprintf(name, sizeof name, "convs.%d.skip.%s", l, ty->node_type[t]);
            hetero_add_tensor(m, name, 1, 1, 0, 0);
        }
        for (int e = 0; e < K; e++) {
            snprintf(name, sizeof name, "convs.%d.p_rel.%s__%s__%s", l, ty->edge_type[e][0], ty->edge_type[e][1],
                     ty->edge_type[e][2]);
            hetero_add_tensor(m, name, 2, 1, H, 0);
        }
        CGNN_CHECK(m->num_tensors == s->conv_tensor[l] + 5 * T + HGT_CONV_FIXED + K);
    }
    s->out_tensor = m->num_tensors;
    hetero_add_tensor(m, "lin.weight", 2, C, F, 0);
    hetero_add_tensor(m, "lin.bias", 1, C, 0, 0);
    for (int t = 0; t < T; t++) {
        s->num_rels[t] = 0;
        for (int e = 0; e < K; e++)
            if (ty->etype_dst[e] == t) s->rel[t][s->num_rels[t]++] = e;
    }
    /* buffers */
    const minibatch_typed_capacity *c = &ty->cap;
    m->params = malloc((size_t)(m->num_params + 1) * sizeof(float));
    m->grads = calloc((size_t)(m->num_params + 1), sizeof(float));
    int ok = m->params && m->grads;
    int64_t max_dst = 0, max_src = 0, max_seeds = 0;
    for (int t = 0; t < T && ok; t++) {
        int64_t rows_all = 0, rows_dst = 0; /* the most rows of any hop, of any destination hop */
        for (int h = 0; h <= L; h++) rows_all = max64(rows_all, c->max_nodes[t][h]);
        for (int h = 0; h < L; h++) rows_dst = max64(rows_dst, c->max_nodes[t][h]);
        for (int l = 0; l <= L; l++) s->h[l][t] = alloc_floats(c->max_nodes[t][L - l] * F, &ok);
        for (int l = 0; l < L; l++) {
            const int64_t ns = c->max_nodes[t][L - l], nd = c->max_nodes[t][L - 1 - l];
            s->kqv[l][t] = alloc_floats(ns * 3 * F, &ok);
            s->agg[l][t] = alloc_floats(nd * F, &ok);
            s->g[l][t] = alloc_floats(nd * F, &ok);
            s->a[l][t] = alloc_floats(nd * F, &ok);
        }
        s->y[t] = alloc_floats(c->max_nodes[t][0] * C, &ok);
        s->out[t] = cfg->l2_normalize_output ? alloc_floats(c->max_nodes[t][0] * C, &ok) : NULL;
        s->gh[t] = alloc_floats(rows_all * F, &ok);
        s->gx[t] = alloc_floats(rows_all * F, &ok);
        s->gtmp[t] = alloc_floats(rows_all * F, &ok);
        s->dkqv[t] = alloc_floats(rows_all * 3 * F, &ok);
        s->dagg[t] = alloc_floats(rows_dst * F, &ok);
        if (ty->input_grad[t]) s->dx[t] = alloc_floats(rows_all * ty->in_dim[t], &ok);
        max_dst = max64(max_dst, rows_dst);
        max_src = max64(max_src, rows_all);
        max_seeds = max64(max_seeds, c->max_nodes[t][0]);
    }
    for (int e = 0; e < K && ok; e++) {
        int64_t max_e = 0;
        for (int l = 0; l < L; l++) {
            const int64_t ns = c->max_nodes[ty->etype_src[e]][L - l], E = c->max_edges[L - 1 - l][e];
            s->kt[l][e] = alloc_floats(ns * F, &ok);
            s->vt[l][e] = alloc_floats(ns * F, &ok);
            s->alpha[l][e] = alloc_floats(E * H, &ok);
            max_e = max64(max_e, E);
        }
        s->work[e] = alloc_floats(2 * max_e * H, &ok);
    }
    if (ok) {
        s->da = alloc_floats(max_dst * F, &ok);
        s->dkt = alloc_floats(max_src * F, &ok);
        s->dvt = alloc_floats(max_src * F, &ok);
        s->dy = alloc_floats(max_seeds * C, &ok);
    }
    if (!ok) return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating the HGT model's buffers");
    /* init as PyG: Linear (and HeteroDictLinear's) U(±1/sqrt(in)) weights and biases; HeteroLinear
     * (k_rel, v_rel) kaiming_uniform(fan = D, a = sqrt 5) = U(±1/sqrt(D)); skip and p_rel ones */
    memset(m->params, 0, (size_t)m->num_params * sizeof(float));
    for (int t = 0; t < T; t++) {
        const double b = 1.0 / sqrt((double)ty->in_dim[t]);
        hetero_init_uniform(m, s->lin_tensor[t], seed, b);
        hetero_init_uniform(m, s->lin_tensor[t] + 1, seed, b);
    }
    const double bF = 1.0 / sqrt((double)F), bD = 1.0 / sqrt((double)D);
    for (int l = 0; l < L; l++) {
        for (int t = 0; t < T; t++) {
            for (int k = 0; k < 2; k++) {
                hetero_init_uniform(m, kqv_w(s, l, t) + k, seed, bF);
                hetero_init_uniform(m, out_w(s, l, t) + k, seed, bF);
            }
            P(m, skip_t(s, l, t))[0] = 1.0f;
        }
        hetero_init_uniform(m, k_rel(s, l), seed, bD);
        hetero_init_uniform(m, v_rel(s, l), seed, bD);
        for (int e = 0; e < K; e++)
            for (int64_t h = 0; h < H; h++) P(m, p_rel(s, l, e))[h] = 1.0f;
    }
    hetero_init_uniform(m, s->out_tensor, seed, bF);
    hetero_init_uniform(m, s->out_tensor + 1, seed, bF);
    return 0;
}

void hgt_free(model *m) {
    hgt_scratch *s = m->hgt;
    if (!s) return;
    for (int t = 0; t < T_MAX; t++) {
        for (int l = 0; l <= L_MAX; l++) free(s->h[l][t]);
        for (int l = 0; l < L_MAX; l++) {
            free(s->kqv[l][t]);
            free(s->agg[l][t]);
            free(s->g[l][t]);
            free(s->a[l][t]);
        }
        free(s->y[t]);
        free(s->out[t]);
        free(s->gh[t]);
        free(s->gx[t]);
        free(s->gtmp[t]);
        free(s->dkqv[t]);
        free(s->dagg[t]);
        free(s->dx[t]);
    }
    for (int e = 0; e < K_MAX; e++) {
        for (int l = 0; l < L_MAX; l++) {
            free(s->kt[l][e]);
            free(s->vt[l][e]);
            free(s->alpha[l][e]);
        }
        free(s->work[e]);
    }
    free(s->da);
    free(s->dkt);
    free(s->dvt);
    free(s->dy);
    free(s);
    m->hgt = NULL;
}

/* The relations into node type t in layer l, for the attention kernels. */
static int make_rels(hgt_rel *rels, const model *m, const minibatch *mb, int l, int t) {
    const hgt_scratch *s = m->hgt;
    for (int r = 0; r < s->num_rels[t]; r++) {
        const int e = s->rel[t][r];
        rels[r] = (hgt_rel){.b = blk(mb, l, e), .kt = s->kt[l][e], .vt = s->vt[l][e], .p = P(m, p_rel(s, l, e)),
                            .alpha = s->alpha[l][e], .work = s->work[e]};
    }
    return s->num_rels[t];
}

const float *hgt_forward(model *m, const minibatch *mb, int training, uint64_t dropout_key) {
    const model_types *ty = m->types;
    hgt_scratch *s = m->hgt;
    const minibatch_typed *tb = mb->typed;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = m->cfg.num_layers;
    const int64_t F = s->F, H = s->H, D = s->D, C = m->cfg.out_dim;
    const float p = m->cfg.dropout;
    CGNN_CHECK(tb && tb->num_node_types == T && tb->num_edge_types == K && tb->num_layers == L);
    s->mb = mb;
    s->training = training;
    s->dropout_key = dropout_key;
    /* input stage: h0_t = relu(lin_dict[t](x_t)) */
    for (int t = 0; t < T; t++) {
        const int64_t n = tb->num_nodes[t][L];
        CGNN_CHECK(n <= ty->cap.max_nodes[t][L] && (n == 0 || tb->feat_dim[t] == ty->in_dim[t]));
        if (n == 0) continue;
        ops_linear_forward(s->h[0][t], tb->features[t], P(m, s->lin_tensor[t]), P(m, s->lin_tensor[t] + 1), n,
                           ty->in_dim[t], F, 0);
        ops_relu_forward(s->h[0][t], s->h[0][t], n * F);
    }
    for (int l = 0; l < L; l++) {
        for (int t = 0; t < T; t++) {
            const int64_t n = tb->num_nodes[t][L - l];
            if (n > 0)
                ops_linear_forward(s->kqv[l][t], s->h[l][t], P(m, kqv_w(s, l, t)), P(m, kqv_w(s, l, t) + 1), n, F,
                                   3 * F, 0);
        }
        const float *Wk = P(m, k_rel(s, l)), *Wv = P(m, v_rel(s, l));
        for (int e = 0; e < K; e++) { /* k'_j,h = k_j,h · Wk[h*K + e] (HeteroLinear: x · W) */
            const int st = ty->etype_src[e], d = ty->etype_dst[e];
            const sampler_block *b = blk(mb, l, e);
            CGNN_CHECK(b->num_dst == tb->num_nodes[d][L - 1 - l] && b->num_src == tb->num_nodes[st][L - l]);
            if (b->num_edges == 0) continue; /* no edge reads kt / vt */
            for (int64_t h = 0; h < H; h++) {
                gemm(0, 0, b->num_src, D, D, s->kqv[l][st] + h * D, 3 * F, Wk + (h * K + e) * D * D, D, 0.0f,
                     s->kt[l][e] + h * D, F);
                gemm(0, 0, b->num_src, D, D, s->kqv[l][st] + 2 * F + h * D, 3 * F, Wv + (h * K + e) * D * D, D, 0.0f,
                     s->vt[l][e] + h * D, F);
            }
        }
        for (int t = 0; t < T; t++) {
            const int64_t nd = tb->num_nodes[t][L - 1 - l];
            if (nd == 0) continue;
            hgt_rel rels[K_MAX];
            const int nr = make_rels(rels, m, mb, l, t);
            hgt_attention_forward(s->agg[l][t], rels, nr, s->kqv[l][t] + F, 3 * F, nd, H, D);
            ops_gelu_forward(s->g[l][t], s->agg[l][t], nd * F);
            ops_linear_forward(s->a[l][t], s->g[l][t], P(m, out_w(s, l, t)), P(m, out_w(s, l, t) + 1), nd, F, F, 0);
            const float sg = sigmoidf(P(m, skip_t(s, l, t))[0]);
            const float *a = s->a[l][t], *x = s->h[l][t];
            float *o = s->h[l + 1][t];
            for (int64_t k = 0; k < nd * F; k++) o[k] = sg * a[k] + (1.0f - sg) * x[k];
            if (training && p > 0.0f) ops_dropout_forward(o, o, nd * F, tb->nodes[t], F, p, dropout_key, l * T_MAX + t);
        }
    }
    for (int t = 0; t < T; t++) {
        const int64_t n0 = tb->num_nodes[t][0];
        if (n0 == 0) continue;
        ops_linear_forward(s->y[t], s->h[L][t], P(m, s->out_tensor), P(m, s->out_tensor + 1), n0, F, C, 0);
        if (s->out[t]) ops_l2norm_forward(s->out[t], s->y[t], n0, C);
    }
    return hgt_output(m, ty->output_type);
}

const float *hgt_output(const model *m, int t) {
    const hgt_scratch *s = m->hgt;
    CGNN_CHECK(s && t >= 0 && t < s->T);
    return s->out[t] ? s->out[t] : s->y[t];
}

const float *hgt_input_grad(const model *m, int t) {
    CGNN_CHECK(m->hgt && t >= 0 && t < m->hgt->T);
    return m->hgt->dx[t];
}

void hgt_backward(model *m, const minibatch *mb, const float *const *dout) {
    const model_types *ty = m->types;
    hgt_scratch *s = m->hgt;
    CGNN_CHECK(s && s->mb == mb);
    const minibatch_typed *tb = mb->typed;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = m->cfg.num_layers;
    const int64_t F = s->F, H = s->H, D = s->D, C = m->cfg.out_dim;
    const float p = m->cfg.dropout;
    const int drop = s->training && p > 0.0f;
    float *gout[T_MAX], *gin[T_MAX]; /* d/d(layer output), d/d(layer input); swapped per layer */
    for (int t = 0; t < T; t++) gout[t] = s->gh[t], gin[t] = s->gx[t];
    /* lin: y = h[L] W^T + b */
    for (int t = 0; t < T; t++) {
        const int64_t n0 = tb->num_nodes[t][0];
        memset(gout[t], 0, (size_t)(n0 * F) * sizeof(float));
        if (!dout[t] || n0 == 0) continue;
        const float *dy = dout[t];
        if (s->out[t]) {
            memset(s->dy, 0, (size_t)(n0 * C) * sizeof(float));
            ops_l2norm_backward(s->dy, dout[t], s->y[t], n0, C);
            dy = s->dy;
        }
        ops_linear_backward(gout[t], G(m, s->out_tensor), G(m, s->out_tensor + 1), dy, s->h[L][t],
                            P(m, s->out_tensor), n0, F, C);
    }
    for (int l = L - 1; l >= 0; l--) {
        /* per node type: dropout, gated residual, out_lin, GELU, then the attention into it (to q) */
        for (int t = 0; t < T; t++) {
            const int64_t n = tb->num_nodes[t][L - l], nd = tb->num_nodes[t][L - 1 - l];
            memset(gin[t], 0, (size_t)(n * F) * sizeof(float));
            memset(s->dkqv[t], 0, (size_t)(n * 3 * F) * sizeof(float));
            if (nd == 0) continue;
            const float *go = gout[t];
            if (drop) {
                memset(s->gtmp[t], 0, (size_t)(nd * F) * sizeof(float));
                ops_dropout_backward(s->gtmp[t], go, nd * F, tb->nodes[t], F, p, s->dropout_key, l * T_MAX + t);
                go = s->gtmp[t];
            }
            /* o = σ a + (1 - σ) x:  dskip += Σ go (a - x) σ (1 - σ), da = σ go, dx += (1 - σ) go */
            const float sg = sigmoidf(P(m, skip_t(s, l, t))[0]);
            const float *a = s->a[l][t], *x = s->h[l][t];
            float *xg = gin[t], *da = s->da;
            double acc = 0.0;
            for (int64_t k = 0; k < nd * F; k++) {
                acc += (double)go[k] * ((double)a[k] - (double)x[k]);
                da[k] = sg * go[k];
                xg[k] += (1.0f - sg) * go[k];
            }
            G(m, skip_t(s, l, t))[0] += (float)(acc * (double)sg * (1.0 - (double)sg));
            float *dg = s->gtmp[t]; /* go is consumed */
            memset(dg, 0, (size_t)(nd * F) * sizeof(float));
            ops_linear_backward(dg, G(m, out_w(s, l, t)), G(m, out_w(s, l, t) + 1), da, s->g[l][t],
                                P(m, out_w(s, l, t)), nd, F, F);
            memset(s->dagg[t], 0, (size_t)(nd * F) * sizeof(float));
            ops_gelu_backward(s->dagg[t], dg, s->agg[l][t], nd * F);
            hgt_rel rels[K_MAX];
            const int nr = make_rels(rels, m, mb, l, t);
            hgt_attention_backward_dst(s->dkqv[t] + F, 3 * F, rels, nr, s->dagg[t], s->kqv[l][t] + F, 3 * F, nd, H, D);
        }
        /* per edge type: to k', v', p_rel, then through the relation matrices to k, v */
        const float *Wk = P(m, k_rel(s, l)), *Wv = P(m, v_rel(s, l));
        float *dWk = G(m, k_rel(s, l)), *dWv = G(m, v_rel(s, l));
        for (int e = 0; e < K; e++) {
            const int st = ty->etype_src[e], d = ty->etype_dst[e];
            const sampler_block *b = blk(mb, l, e);
            if (b->num_edges == 0) continue;
            const int64_t ns = b->num_src;
            const hgt_rel rel = {.b = b, .kt = s->kt[l][e], .vt = s->vt[l][e], .p = P(m, p_rel(s, l, e)),
                                 .alpha = s->alpha[l][e], .work = s->work[e]};
            memset(s->dkt, 0, (size_t)(ns * F) * sizeof(float));
            memset(s->dvt, 0, (size_t)(ns * F) * sizeof(float));
            hgt_attention_backward_src(s->dkt, s->dvt, G(m, p_rel(s, l, e)), &rel, s->dagg[d], s->kqv[l][d] + F, 3 * F,
                                       H, D);
            for (int64_t h = 0; h < H; h++) {
                const int64_t w = (h * K + e) * D * D;
                gemm(0, 1, ns, D, D, s->dkt + h * D, F, Wk + w, D, 1.0f, s->dkqv[st] + h * D, 3 * F);
                gemm(1, 0, D, D, ns, s->kqv[l][st] + h * D, 3 * F, s->dkt + h * D, F, 1.0f, dWk + w, D);
                gemm(0, 1, ns, D, D, s->dvt + h * D, F, Wv + w, D, 1.0f, s->dkqv[st] + 2 * F + h * D, 3 * F);
                gemm(1, 0, D, D, ns, s->kqv[l][st] + 2 * F + h * D, 3 * F, s->dvt + h * D, F, 1.0f, dWv + w, D);
            }
        }
        /* kqv_lin */
        for (int t = 0; t < T; t++) {
            const int64_t n = tb->num_nodes[t][L - l];
            if (n == 0) continue;
            ops_linear_backward(gin[t], G(m, kqv_w(s, l, t)), G(m, kqv_w(s, l, t) + 1), s->dkqv[t], s->h[l][t],
                                P(m, kqv_w(s, l, t)), n, F, 3 * F);
        }
        if (l > 0 && m->on_grads_ready) m->on_grads_ready(m->on_grads_ready_ctx, l);
        for (int t = 0; t < T; t++) {
            float *tmp = gout[t];
            gout[t] = gin[t];
            gin[t] = tmp;
        }
    }
    /* input stage: h0 = relu(x W^T + b); gout = d/dh0 */
    for (int t = 0; t < T; t++) {
        const int64_t n = tb->num_nodes[t][L];
        if (s->dx[t]) memset(s->dx[t], 0, (size_t)(n * ty->in_dim[t]) * sizeof(float));
        if (n == 0) continue;
        memset(s->gtmp[t], 0, (size_t)(n * F) * sizeof(float));
        ops_relu_backward(s->gtmp[t], gout[t], s->h[0][t], n * F);
        ops_linear_backward(s->dx[t], G(m, s->lin_tensor[t]), G(m, s->lin_tensor[t] + 1), s->gtmp[t], tb->features[t],
                            P(m, s->lin_tensor[t]), n, ty->in_dim[t], F);
    }
    if (m->on_grads_ready) m->on_grads_ready(m->on_grads_ready_ctx, 0);
}
