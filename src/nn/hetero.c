/* hetero.c — HeteroSAGE and RGCN over typed batches, and the typed models' entry points (HGT's
 * own code is nn/hgt.c); see model.h ("typed graphs").
 *
 * Shapes (per node type t; L layers; layer l consumes the rows of hop L-l and produces those of
 * hop L-1-l, n_t[h] = mb->typed->num_nodes[t][h]):
 *   x_t      (n_t[L], F_t)    input rows (mb->typed->features[t])
 *   h[0][t]  (n_t[L], H)      relu(x_t W_t^T + b_t)
 *   agg[l][e](n_d[L-1-l], I)  mean over edge type e's sampled in-edges of h[l][s]   (e = (s, r, d))
 *   y[l][t]  (n_t[L-1-l], O)  conv output;  h[l+1][t] = dropout(relu(y[l][t])) for l < L-1
 * Backward walks the same graph in reverse; dense products are cblas_sgemm (through ops_linear_*
 * for W·x layouts, ops_gemm for RGCN's x·W layout: both counted by ops_gemm_stats), aggregations
 * ops_mean_agg_* (parallel over destinations, the transposes for the scatter): bitwise
 * reproducible for a thread count.
 * All buffers are sized at init from the typed capacity; forward/backward allocate nothing.
 */
#include "nn/hetero.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/hgt.h"
#include "nn/ops.h"
#include "util/rng.h"

#include <cblas.h> /* last: it brings complex.h, whose macro I clashes with ops.h names */
#undef I

enum { HS_LIN_L_W, HS_LIN_L_B, HS_LIN_R_W, HS_NT };       /* HeteroSAGE, per edge type */

#define T_MAX MINIBATCH_MAX_NODE_TYPES
#define K_MAX MINIBATCH_MAX_EDGE_TYPES
#define L_MAX MINIBATCH_MAX_LAYERS

struct hetero_scratch {
    int64_t idim[L_MAX], odim[L_MAX];     /* I, O of layer l */
    int lin_tensor[T_MAX];                /* first tensor of lin_dict.<t> */
    int conv_tensor[L_MAX][K_MAX];        /* HeteroSAGE: first tensor of convs.l.convs.<e> */
    int rgcn_tensor[L_MAX];               /* RGCN: first tensor of convs.l */
    int has_output[T_MAX];                /* a conv produces rows of type t */
    float *h[L_MAX][T_MAX];               /* layer l's input rows (h[0]: after the input stage) */
    float *y[L_MAX][T_MAX];
    float *agg[L_MAX][K_MAX];
    float *wrel[L_MAX];                   /* RGCN with bases: W_r materialised, (R, I, O) */
    float *dwrel;                         /* RGCN with bases: d/dW_r of the current layer */
    float *out[T_MAX];                    /* L2-normalised outputs */
    float *gh[T_MAX], *gh_prev[T_MAX];    /* backward: d/dh of the current / next-outer layer */
    float *gy[T_MAX];                     /* backward: d/dy */
    float *dagg;                          /* backward: d/dagg */
    float *dx[T_MAX];                     /* d/dx_t for input_grad types */
    const minibatch *mb;                  /* the last forward's batch */
    int training;
    uint64_t dropout_key;
};

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

void hetero_add_tensor(model *m, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2) {
    CGNN_CHECK(m->num_tensors < MODEL_MAX_TENSORS && strlen(name) < sizeof m->tensors[0].name);
    model_tensor *t = &m->tensors[m->num_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    t->shape[0] = d0;
    t->shape[1] = ndim > 1 ? d1 : 0;
    t->shape[2] = ndim > 2 ? d2 : 0;
    t->numel = d0 * (ndim > 1 ? d1 : 1) * (ndim > 2 ? d2 : 1);
    t->offset = m->num_params;
    m->num_params += t->numel;
}

static float *P(const model *m, int t) { return m->params + m->tensors[t].offset; }
static float *G(const model *m, int t) { return m->grads + m->tensors[t].offset; }

void hetero_init_uniform(model *m, int t, uint64_t seed, double bound) {
    rng r;
    rng_init(&r, rng_key(seed, (uint64_t)t));
    float *p = P(m, t);
    for (int64_t k = 0; k < m->tensors[t].numel; k++) p[k] = (float)(bound * (2.0 * rng_uniform(&r) - 1.0));
}

static float *alloc_floats(int64_t n, int *ok) {
    float *p = malloc((size_t)(n + 1) * sizeof(float));
    if (!p) *ok = 0;
    return p;
}

/* Checks the typed config: every name fits a key, and each node type HeteroSAGE must produce
 * rows of is the dst of some edge type. */
static int check_types(const model_config *cfg, const minibatch_capacity *cap, cgnn_err *err) {
    const model_types *ty = cfg->types;
    if (!ty) return err_set(err, CGNN_ERR_INPUT, "model %s needs a typed graph", model_kind_name(cfg->kind));
    if (ty->num_node_types < 1 || ty->num_node_types > T_MAX || ty->num_edge_types < 1 || ty->num_edge_types > K_MAX)
        return err_set(err, CGNN_ERR_INPUT, "typed model: %d node types, %d edge types out of range",
                       ty->num_node_types, ty->num_edge_types);
    if (cfg->num_layers < 1 || cfg->num_layers > L_MAX || cfg->num_layers != cap->num_layers)
        return err_set(err, CGNN_ERR_INPUT, "num_layers: %d (the sampler has %d layers, at most %d)", cfg->num_layers,
                       cap->num_layers, L_MAX);
    if (cfg->hidden_dim < 1 || cfg->out_dim < 1)
        return err_set(err, CGNN_ERR_INPUT, "hidden_dim %lld and out_dim %lld must be >= 1", (long long)cfg->hidden_dim,
                       (long long)cfg->out_dim);
    if (cfg->hidden_dim > (1 << 20) || cfg->out_dim > (1 << 24))
        return err_set(err, CGNN_ERR_INPUT, "hidden_dim %lld / out_dim %lld: too wide", (long long)cfg->hidden_dim,
                       (long long)cfg->out_dim);
    if (!(cfg->dropout >= 0.0f && cfg->dropout < 1.0f))
        return err_set(err, CGNN_ERR_INPUT, "dropout: %g is out of range [0, 1)", (double)cfg->dropout);
    if (ty->output_type < 0 || ty->output_type >= ty->num_node_types)
        return err_set(err, CGNN_ERR_INPUT, "typed model: output type %d out of range", ty->output_type);
    if (cfg->kind == MODEL_RGCN && (ty->num_bases < 0 || ty->num_bases > 4096))
        return err_set(err, CGNN_ERR_INPUT, "num_bases: %d is out of range [0, 4096]", ty->num_bases);
    if (cfg->kind == MODEL_HGT && (cfg->num_heads < 1 || cfg->hidden_dim % cfg->num_heads != 0))
        return err_set(err, CGNN_ERR_INPUT, "HGT needs hidden_dim (%lld) divisible by num_heads (%d)",
                       (long long)cfg->hidden_dim, cfg->num_heads);
    { /* the tensor count of the layout (model.h's fixed tensor table) */
        const int T = ty->num_node_types, K = ty->num_edge_types, L = cfg->num_layers;
        const int n = cfg->kind == MODEL_HETERO_SAGE ? 2 * T + 3 * K * L
                      : cfg->kind == MODEL_RGCN      ? 2 * T + L * (ty->num_bases > 0 ? 4 : 3)
                                                     : 2 * T + L * (5 * T + 2 + K) + 2;
        if (n > MODEL_MAX_TENSORS)
            return err_set(err, CGNN_ERR_INPUT,
                           "typed model %s: %d node types, %d edge types and %d layers make %d tensors, more than "
                           "the %d cgnn supports",
                           model_kind_name(cfg->kind), T, K, L, n, MODEL_MAX_TENSORS);
    }
    for (int t = 0; t < ty->num_node_types; t++) {
        if (ty->in_dim[t] < 1 || ty->in_dim[t] > ((int64_t)1 << 24))
            return err_set(err, CGNN_ERR_INPUT, "node type %s: input width %lld out of range", ty->node_type[t],
                           (long long)ty->in_dim[t]);
        int is_dst = 0;
        for (int e = 0; e < ty->num_edge_types; e++) is_dst |= ty->etype_dst[e] == t;
        if (!is_dst && cfg->kind == MODEL_HETERO_SAGE)
            return err_set(err, CGNN_ERR_INPUT,
                           "node type %s is the destination of no edge type: HeteroSAGE gives it no representation "
                           "after the first layer (PyG's to_hetero drops it); add the reverse edge type, or use RGCN",
                           ty->node_type[t]);
    }
    return 0;
}

int hetero_init(model *m, const model_config *cfg, const minibatch_capacity *cap, uint64_t seed, cgnn_err *err) {
    if (check_types(cfg, cap, err) != 0) return -1;
    m->cfg = *cfg;
    m->types = malloc(sizeof *m->types);
    if (cfg->kind != MODEL_HGT) m->hscratch = calloc(1, sizeof *m->hscratch);
    if (!m->types || (cfg->kind != MODEL_HGT && !m->hscratch)) {
        hetero_free(m);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating the typed model");
    }
    *m->types = *cfg->types;
    m->cfg.types = m->types;
    if (cfg->kind == MODEL_HGT) {
        if (hgt_init(m, seed, err) == 0) return 0;
        hetero_free(m);
        free(m->params);
        free(m->grads);
        m->params = m->grads = NULL;
        return -1;
    }
    const model_types *ty = m->types;
    hetero_scratch *s = m->hscratch;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = cfg->num_layers;
    const int64_t H = cfg->hidden_dim;
    char name[sizeof m->tensors[0].name];
    /* tensors in state_dict order: lin_dict, then convs */
    for (int t = 0; t < T; t++) {
        s->lin_tensor[t] = m->num_tensors;
        snprintf(name, sizeof name, "lin_dict.%s.weight", ty->node_type[t]);
        hetero_add_tensor(m, name, 2, H, ty->in_dim[t], 0);
        snprintf(name, sizeof name, "lin_dict.%s.bias", ty->node_type[t]);
        hetero_add_tensor(m, name, 1, H, 0, 0);
    }
    for (int l = 0; l < L; l++) {
        const int64_t I = H, O = l == L - 1 ? cfg->out_dim : H;
        s->idim[l] = I;
        s->odim[l] = O;
        if (cfg->kind == MODEL_HETERO_SAGE) {
            for (int e = 0; e < K; e++) {
                char et[3 * MODEL_TYPE_NAME_MAX + 8];
                snprintf(et, sizeof et, "%s__%s__%s", ty->edge_type[e][0], ty->edge_type[e][1], ty->edge_type[e][2]);
                s->conv_tensor[l][e] = m->num_tensors;
                snprintf(name, sizeof name, "convs.%d.convs.%s.lin_l.weight", l, et);
                hetero_add_tensor(m, name, 2, O, I, 0);
                snprintf(name, sizeof name, "convs.%d.convs.%s.lin_l.bias", l, et);
                hetero_add_tensor(m, name, 1, O, 0, 0);
                snprintf(name, sizeof name, "convs.%d.convs.%s.lin_r.weight", l, et);
                hetero_add_tensor(m, name, 2, O, I, 0);
            }
        } else {
            s->rgcn_tensor[l] = m->num_tensors;
            const int B = ty->num_bases;
            snprintf(name, sizeof name, "convs.%d.weight", l);
            hetero_add_tensor(m, name, 3, B > 0 ? B : K, I, O);
            if (B > 0) {
                snprintf(name, sizeof name, "convs.%d.comp", l);
                hetero_add_tensor(m, name, 2, K, B, 0);
            }
            snprintf(name, sizeof name, "convs.%d.root", l);
            hetero_add_tensor(m, name, 2, I, O, 0);
            snprintf(name, sizeof name, "convs.%d.bias", l);
            hetero_add_tensor(m, name, 1, O, 0, 0);
        }
    }
    for (int t = 0; t < T; t++) {
        s->has_output[t] = cfg->kind == MODEL_RGCN;
        for (int e = 0; e < K; e++) s->has_output[t] |= ty->etype_dst[e] == t;
    }
    /* buffers */
    const minibatch_typed_capacity *c = &ty->cap;
    int ok = 1;
    m->params = malloc((size_t)(m->num_params + 1) * sizeof(float));
    m->grads = calloc((size_t)(m->num_params + 1), sizeof(float));
    ok = m->params && m->grads;
    int64_t max_rows_dst = 0;
    for (int t = 0; t < T && ok; t++) {
        int64_t rows_all = c->max_nodes[t][L], widest = max64(H, cfg->out_dim);
        for (int l = 0; l < L; l++) {
            const int64_t src_rows = c->max_nodes[t][L - l], dst_rows = c->max_nodes[t][L - 1 - l];
            s->h[l][t] = alloc_floats(src_rows * H, &ok);
            if (s->has_output[t]) s->y[l][t] = alloc_floats(dst_rows * s->odim[l], &ok);
        }
        s->gh[t] = alloc_floats(rows_all * H, &ok);
        s->gh_prev[t] = alloc_floats(rows_all * widest, &ok);
        s->gy[t] = alloc_floats(rows_all * widest, &ok);
        s->out[t] = cfg->l2_normalize_output ? alloc_floats(c->max_nodes[t][0] * cfg->out_dim, &ok) : NULL;
        if (ty->input_grad[t]) s->dx[t] = alloc_floats(rows_all * ty->in_dim[t], &ok);
    }
    for (int l = 0; l < L && ok; l++)
        for (int e = 0; e < K; e++) {
            const int64_t rows = c->max_nodes[ty->etype_dst[e]][L - 1 - l];
            s->agg[l][e] = alloc_floats(rows * H, &ok);
            max_rows_dst = max64(max_rows_dst, rows);
        }
    if (ok) s->dagg = alloc_floats(max_rows_dst * H, &ok);
    if (ok && cfg->kind == MODEL_RGCN && ty->num_bases > 0) {
        for (int l = 0; l < L; l++) s->wrel[l] = alloc_floats((int64_t)K * H * s->odim[l], &ok);
        s->dwrel = alloc_floats((int64_t)K * H * max64(H, cfg->out_dim), &ok);
    }
    if (!ok) {
        hetero_free(m);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating the typed model's buffers");
    }
    /* init as PyG: Linear U(±1/sqrt(in)) weights and biases; RGCN glorot (bias 0) */
    memset(m->params, 0, (size_t)m->num_params * sizeof(float));
    for (int t = 0; t < T; t++) {
        const double b = 1.0 / sqrt((double)ty->in_dim[t]);
        hetero_init_uniform(m, s->lin_tensor[t], seed, b);
        hetero_init_uniform(m, s->lin_tensor[t] + 1, seed, b);
    }
    for (int l = 0; l < L; l++) {
        const double b = 1.0 / sqrt((double)s->idim[l]);
        if (cfg->kind == MODEL_HETERO_SAGE) {
            for (int e = 0; e < K; e++) {
                hetero_init_uniform(m, s->conv_tensor[l][e] + HS_LIN_L_W, seed, b);
                hetero_init_uniform(m, s->conv_tensor[l][e] + HS_LIN_L_B, seed, b);
                hetero_init_uniform(m, s->conv_tensor[l][e] + HS_LIN_R_W, seed, b);
            }
        } else {
            const int t0 = s->rgcn_tensor[l], B = ty->num_bases;
            const double g = sqrt(6.0 / (double)(s->idim[l] + s->odim[l]));
            hetero_init_uniform(m, t0, seed, g);
            if (B > 0) hetero_init_uniform(m, t0 + 1, seed, sqrt(6.0 / (double)(K + B)));
            hetero_init_uniform(m, t0 + (B > 0 ? 2 : 1), seed, g);
        }
    }
    return 0;
}

void hetero_free(model *m) {
    hgt_free(m);
    hetero_scratch *s = m->hscratch;
    if (s) {
        for (int t = 0; t < T_MAX; t++) {
            for (int l = 0; l < L_MAX; l++) {
                free(s->h[l][t]);
                free(s->y[l][t]);
            }
            free(s->gh[t]);
            free(s->gh_prev[t]);
            free(s->gy[t]);
            free(s->out[t]);
            free(s->dx[t]);
        }
        for (int l = 0; l < L_MAX; l++) {
            for (int e = 0; e < K_MAX; e++) free(s->agg[l][e]);
            free(s->wrel[l]);
        }
        free(s->dagg);
        free(s->dwrel);
        free(s);
        m->hscratch = NULL;
    }
    free(m->types);
    m->types = NULL;
}

/* RGCN tensors of layer l: weight, comp (bases only), root, bias */
static int rg_root(const model *m, int l) { return m->hscratch->rgcn_tensor[l] + (m->types->num_bases > 0 ? 2 : 1); }
static int rg_bias(const model *m, int l) { return rg_root(m, l) + 1; }

/* W_r of relation e in layer l, (I, O) */
static const float *rg_weight(const model *m, int l, int e) {
    const hetero_scratch *s = m->hscratch;
    const int64_t IO = s->idim[l] * s->odim[l];
    if (m->types->num_bases > 0) return s->wrel[l] + e * IO;
    return P(m, s->rgcn_tensor[l]) + e * IO;
}

/* out (N, O) (+)= inp (N, I) · W (I, O) */
static void mm_xw(float *out, const float *inp, const float *w, int64_t N, int64_t I, int64_t O, int acc) {
    if (N == 0) return;
    ops_gemm(0, 0, N, O, I, inp, w, acc ? 1.0f : 0.0f, out);
}

/* dW (I, O) += inp^T g;  dinp (N, I) += g W^T (either may be NULL) */
static void mm_xw_backward(float *dinp, float *dw, const float *g, const float *inp, const float *w, int64_t N,
                           int64_t I, int64_t O) {
    if (N == 0) return;
    if (dw) ops_gemm(1, 0, I, O, N, inp, g, 1.0f, dw);
    if (dinp) ops_gemm(0, 1, N, I, O, g, w, 1.0f, dinp);
}

static const sampler_block *blk(const minibatch *mb, int l, int e) {
    return &mb->typed->blocks[l * mb->typed->num_edge_types + e];
}

const float *hetero_forward(model *m, const minibatch *mb, int training, uint64_t dropout_key) {
    if (m->hgt) return hgt_forward(m, mb, training, dropout_key);
    const model_types *ty = m->types;
    hetero_scratch *s = m->hscratch;
    const minibatch_typed *tb = mb->typed;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = m->cfg.num_layers;
    const int64_t H = m->cfg.hidden_dim;
    const float p = m->cfg.dropout;
    CGNN_CHECK(tb && tb->num_node_types == T && tb->num_edge_types == K && tb->num_layers == L);
    s->mb = mb;
    s->training = training;
    s->dropout_key = dropout_key;
    /* input stage */
    for (int t = 0; t < T; t++) {
        const int64_t n = tb->num_nodes[t][L];
        CGNN_CHECK(n <= ty->cap.max_nodes[t][L] && (n == 0 || tb->feat_dim[t] == ty->in_dim[t]));
        if (n == 0) continue;
        ops_linear_forward(s->h[0][t], tb->features[t], P(m, s->lin_tensor[t]), P(m, s->lin_tensor[t] + 1), n,
                           ty->in_dim[t], H, 0);
        ops_relu_forward(s->h[0][t], s->h[0][t], n * H);
    }
    for (int l = 0; l < L; l++) {
        const int64_t I = s->idim[l], O = s->odim[l];
        for (int t = 0; t < T; t++) {
            if (!s->has_output[t]) continue;
            const int64_t nd = tb->num_nodes[t][L - 1 - l];
            if (m->cfg.kind == MODEL_RGCN) {
                const float *bias = P(m, rg_bias(m, l));
                mm_xw(s->y[l][t], s->h[l][t], P(m, rg_root(m, l)), nd, I, O, 0);
                for (int64_t i = 0; i < nd; i++)
                    for (int64_t o = 0; o < O; o++) s->y[l][t][i * O + o] += bias[o];
            } else {
                memset(s->y[l][t], 0, (size_t)(nd * O) * sizeof(float));
            }
        }
        if (m->cfg.kind == MODEL_RGCN && ty->num_bases > 0) { /* W_r = Σ_b comp[r, b] V_b */
            const int B = ty->num_bases;
            const float *V = P(m, s->rgcn_tensor[l]), *comp = P(m, s->rgcn_tensor[l] + 1);
            ops_gemm(0, 0, K, I * O, B, comp, V, 0.0f, s->wrel[l]);
        }
        for (int e = 0; e < K; e++) {
            const int d = ty->etype_dst[e], st = ty->etype_src[e];
            const sampler_block *b = blk(mb, l, e);
            const int64_t nd = b->num_dst;
            CGNN_CHECK(nd == tb->num_nodes[d][L - 1 - l] && b->num_src == tb->num_nodes[st][L - l]);
            if (nd == 0) continue;
            ops_mean_agg_forward(s->agg[l][e], s->h[l][st], b, I);
            if (m->cfg.kind == MODEL_RGCN) {
                mm_xw(s->y[l][d], s->agg[l][e], rg_weight(m, l, e), nd, I, O, 1);
            } else {
                const int c0 = s->conv_tensor[l][e];
                ops_linear_forward(s->y[l][d], s->agg[l][e], P(m, c0 + HS_LIN_L_W), P(m, c0 + HS_LIN_L_B), nd, I, O, 1);
                ops_linear_forward(s->y[l][d], s->h[l][d], P(m, c0 + HS_LIN_R_W), NULL, nd, I, O, 1);
            }
        }
        if (l < L - 1)
            for (int t = 0; t < T; t++) {
                const int64_t nd = tb->num_nodes[t][L - 1 - l];
                if (nd == 0) continue;
                ops_relu_forward(s->h[l + 1][t], s->y[l][t], nd * O);
                if (training && p > 0.0f)
                    ops_dropout_forward(s->h[l + 1][t], s->h[l + 1][t], nd * O, tb->nodes[t], O, p, dropout_key,
                                        l * T_MAX + t);
            }
    }
    for (int t = 0; t < T; t++)
        if (s->out[t] && s->has_output[t])
            ops_l2norm_forward(s->out[t], s->y[L - 1][t], tb->num_nodes[t][0], m->cfg.out_dim);
    return model_typed_output(m, ty->output_type);
}

const float *model_typed_output(const model *m, int t) {
    if (m->hgt) return hgt_output(m, t);
    const hetero_scratch *s = m->hscratch;
    CGNN_CHECK(s && t >= 0 && t < m->types->num_node_types);
    if (!s->has_output[t]) return NULL;
    return s->out[t] ? s->out[t] : s->y[m->cfg.num_layers - 1][t];
}

const float *model_typed_input_grad(const model *m, int t) {
    if (m->hgt) return hgt_input_grad(m, t);
    CGNN_CHECK(m->hscratch && t >= 0 && t < m->types->num_node_types);
    return m->hscratch->dx[t];
}

void model_typed_backward(model *m, const minibatch *mb, const float *const *dout) {
    if (m->hgt) {
        hgt_backward(m, mb, dout);
        return;
    }
    const model_types *ty = m->types;
    hetero_scratch *s = m->hscratch;
    CGNN_CHECK(s && s->mb == mb);
    const minibatch_typed *tb = mb->typed;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = m->cfg.num_layers;
    const int64_t H = m->cfg.hidden_dim, C = m->cfg.out_dim;
    const float p = m->cfg.dropout;
    /* d/dy of the last layer */
    for (int t = 0; t < T; t++) {
        const int64_t n = tb->num_nodes[t][0];
        if (!s->has_output[t]) continue;
        if (!dout[t]) memset(s->gy[t], 0, (size_t)(n * C) * sizeof(float));
        else if (s->out[t]) {
            memset(s->gy[t], 0, (size_t)(n * C) * sizeof(float));
            ops_l2norm_backward(s->gy[t], dout[t], s->y[L - 1][t], n, C);
        } else memcpy(s->gy[t], dout[t], (size_t)(n * C) * sizeof(float));
    }
    for (int l = L - 1; l >= 0; l--) {
        const int64_t I = s->idim[l], O = s->odim[l];
        for (int t = 0; t < T; t++) memset(s->gh[t], 0, (size_t)(tb->num_nodes[t][L - l] * I) * sizeof(float));
        if (m->cfg.kind == MODEL_RGCN && ty->num_bases > 0) memset(s->dwrel, 0, (size_t)(K * I * O) * sizeof(float));
        for (int e = 0; e < K; e++) {
            const int d = ty->etype_dst[e], st = ty->etype_src[e];
            const sampler_block *b = blk(mb, l, e);
            const int64_t nd = b->num_dst;
            if (nd == 0) continue;
            memset(s->dagg, 0, (size_t)(nd * I) * sizeof(float));
            if (m->cfg.kind == MODEL_RGCN) {
                float *dw = ty->num_bases > 0 ? s->dwrel + e * I * O : G(m, s->rgcn_tensor[l]) + e * I * O;
                mm_xw_backward(s->dagg, dw, s->gy[d], s->agg[l][e], rg_weight(m, l, e), nd, I, O);
            } else {
                const int c0 = s->conv_tensor[l][e];
                ops_linear_backward(s->dagg, G(m, c0 + HS_LIN_L_W), G(m, c0 + HS_LIN_L_B), s->gy[d], s->agg[l][e],
                                    P(m, c0 + HS_LIN_L_W), nd, I, O);
                ops_linear_backward(s->gh[d], G(m, c0 + HS_LIN_R_W), NULL, s->gy[d], s->h[l][d], P(m, c0 + HS_LIN_R_W),
                                    nd, I, O);
            }
            ops_mean_agg_backward(s->gh[st], s->dagg, b, I);
        }
        if (m->cfg.kind == MODEL_RGCN) {
            float *droot = G(m, rg_root(m, l)), *dbias = G(m, rg_bias(m, l));
            for (int t = 0; t < T; t++) {
                const int64_t nd = tb->num_nodes[t][L - 1 - l];
                if (nd == 0) continue;
                mm_xw_backward(s->gh[t], droot, s->gy[t], s->h[l][t], P(m, rg_root(m, l)), nd, I, O);
                for (int64_t i = 0; i < nd; i++)
                    for (int64_t o = 0; o < O; o++) dbias[o] += s->gy[t][i * O + o];
            }
            if (ty->num_bases > 0) { /* dV_b += Σ_r comp[r, b] dW_r;  dcomp[r, b] += <dW_r, V_b> */
                const int B = ty->num_bases;
                const float *V = P(m, s->rgcn_tensor[l]), *comp = P(m, s->rgcn_tensor[l] + 1);
                ops_gemm(1, 0, B, I * O, K, comp, s->dwrel, 1.0f, G(m, s->rgcn_tensor[l]));
                ops_gemm(0, 1, K, B, I * O, s->dwrel, V, 1.0f, G(m, s->rgcn_tensor[l] + 1));
            }
        }
        if (l > 0) {
            if (m->on_grads_ready) m->on_grads_ready(m->on_grads_ready_ctx, l);
            /* through h[l] = dropout(relu(y[l-1])) into gy (rows of hop L-l) */
            const int64_t Op = s->odim[l - 1];
            for (int t = 0; t < T; t++) {
                const int64_t n = tb->num_nodes[t][L - l];
                if (!s->has_output[t] || n == 0) continue;
                float *g = s->gh[t];
                if (s->training && p > 0.0f) {
                    memset(s->gh_prev[t], 0, (size_t)(n * Op) * sizeof(float));
                    ops_dropout_backward(s->gh_prev[t], g, n * Op, tb->nodes[t], Op, p, s->dropout_key,
                                         (l - 1) * T_MAX + t);
                    g = s->gh_prev[t];
                }
                memset(s->gy[t], 0, (size_t)(n * Op) * sizeof(float));
                ops_relu_backward(s->gy[t], g, s->y[l - 1][t], n * Op);
            }
        }
    }
    /* input stage: h0 = relu(x W^T + b) */
    for (int t = 0; t < T; t++) {
        const int64_t n = tb->num_nodes[t][L];
        if (s->dx[t]) memset(s->dx[t], 0, (size_t)(n * ty->in_dim[t]) * sizeof(float));
        if (n == 0) continue;
        memset(s->gh_prev[t], 0, (size_t)(n * H) * sizeof(float));
        ops_relu_backward(s->gh_prev[t], s->gh[t], s->h[0][t], n * H);
        ops_linear_backward(s->dx[t], G(m, s->lin_tensor[t]), G(m, s->lin_tensor[t] + 1), s->gh_prev[t],
                            tb->features[t], P(m, s->lin_tensor[t]), n, ty->in_dim[t], H);
    }
    if (m->on_grads_ready) m->on_grads_ready(m->on_grads_ready_ctx, 0);
}
