/* infer_typed.c — layer-wise full-neighbourhood inference on a typed graph; see infer_typed.h.
 *
 * Per stage s (0: the input stage; l + 1: conv l), per node type t, per chunk [a, a + n) of this
 * rank's slice of type t:
 *   stage 0:  x (n, F_t) = features (gathered, normalised) or table rows a.. (in place)
 *             out (n, H) = relu(x W_t^T + b_t)
 *   conv l:   for each edge type e = (s, r, t): agg (n, I) = mean of prev rows offset[s] + csc_e's
 *             in-neighbours of rows a.. (the index read in place), then the dense products;
 *             relu / L2 norm
 *   HGT conv l: hgt_prepare (every source row's kt / vt), then per chunk hgt_conv_chunk
 * out is the stage's store at row offset[t] + a (or this rank's slice before an all-gather).
 * Parameters are found by their PyG keys (model_find_tensor), so this file depends on the
 * checkpoint layout only, not on hetero.c's internals.
 */
#include "nn/infer_typed.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nn/hgt.h"
#include "nn/ops.h"
#include "sample/gather.h"
#include "util/timer.h"

#define T_MAX MINIBATCH_MAX_NODE_TYPES
#define K_MAX MINIBATCH_MAX_EDGE_TYPES
#define L_MAX MINIBATCH_MAX_LAYERS

/* ---- the model from a checkpoint ---------------------------------------------------------- */

/* Reads the integer metadata value `key` of f into *out, within [lo, hi]. */
static int meta_int(const st_file *f, const char *key, int64_t lo, int64_t hi, int64_t *out, cgnn_err *err) {
    const char *v = safetensors_meta(f, key);
    if (!v)
        return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ has no '%s' (not a checkpoint written by cgnn train)",
                       f->path, key);
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < lo || x > hi)
        return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ '%s': '%s' is not an integer in [%lld, %lld]", f->path,
                       key, v, (long long)lo, (long long)hi);
    *out = x;
    return 0;
}

/* The node feature type t trains on: the one the checkpoint records (its "node_feature"
 * metadata: the trainer's trainerArgs.node_feature), else "feat", else the type's first
 * (dataset_node_feature: the trainer's choice). */
static const ds_feature *type_feature(const dataset *ds, int t, const st_file *f) {
    return dataset_node_feature(ds, t, safetensors_meta(f, "node_feature"));
}

int infer_typed_model_from_checkpoint(model *m, infer_typed_input *in, const st_file *f, const dataset *ds,
                                      int l2_normalize_output, cgnn_err *err) {
    memset(m, 0, sizeof *m);
    memset(in, 0, sizeof *in);
    const int T = ds->num_node_types, K = ds->num_edge_types;
    if (T > T_MAX || K > K_MAX)
        return err_set(err, CGNN_ERR_INPUT, "%s: %d node types and %d edge types (at most %d and %d)", ds->dir, T, K,
                       T_MAX, K_MAX);
    model_config mc;
    memset(&mc, 0, sizeof mc);
    const char *kind = safetensors_meta(f, "cgnn_model");
    if (!kind)
        return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ has no 'cgnn_model' (not a checkpoint written by cgnn train)",
                       f->path);
    if (model_kind_parse(kind, &mc.kind) != 0 || !model_kind_is_typed(mc.kind))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: __metadata__ 'cgnn_model': '%s' is not a typed model, but the dataset %s is typed (%d node "
                       "types): embed it with the model cgnn train trained on it (HeteroSAGE, RGCN or HGT)",
                       f->path, kind, ds->dir, T);
    int64_t layers;
    if (meta_int(f, "num_layers", 1, L_MAX, &layers, err) != 0 ||
        meta_int(f, "hidden_channels", 1, 1 << 20, &mc.hidden_dim, err) != 0 ||
        meta_int(f, "out_channels", 1, 1 << 24, &mc.out_dim, err) != 0)
        return -1;
    mc.num_layers = (int)layers;
    mc.l2_normalize_output = l2_normalize_output;
    if (mc.kind == MODEL_HGT) {
        int64_t heads;
        if (meta_int(f, "heads", 1, mc.hidden_dim, &heads, err) != 0) return -1;
        if (mc.hidden_dim % heads != 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ 'heads': %lld does not divide hidden_channels %lld",
                           f->path, (long long)heads, (long long)mc.hidden_dim);
        mc.num_heads = (int)heads;
    }
    model_types *ty = cgnn_calloc(1, sizeof *ty);
    ty->num_node_types = T;
    ty->num_edge_types = K;
    char key[3 * DATASET_NAME_MAX + 64];
    int rc = -1;
    for (int t = 0; t < T; t++) {
        snprintf(ty->node_type[t], MODEL_TYPE_NAME_MAX, "%s", ds->node_types[t].name);
        snprintf(key, sizeof key, "lin_dict.%s.weight", ds->node_types[t].name);
        const int k = safetensors_find(f, key);
        if (k < 0 || f->ndims[k] != 2 || f->shapes[k][0] != mc.hidden_dim || f->shapes[k][1] < 1) {
            err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' is %s (node type '%s' of the dataset %s needs [%lld, F])",
                    f->path, key, k < 0 ? "missing" : "not 2-D [hidden_channels, F]", ds->node_types[t].name, ds->dir,
                    (long long)mc.hidden_dim);
            goto done;
        }
        ty->in_dim[t] = f->shapes[k][1];
        in->feat[t] = type_feature(ds, t, f);
        if (in->feat[t]) {
            if (in->feat[t]->dim != ty->in_dim[t]) {
                err_set(err, CGNN_ERR_INPUT,
                        "%s: node type '%s': the model takes %lld input channels (%s), the dataset %s gives %lld "
                        "(feature '%s')",
                        f->path, ds->node_types[t].name, (long long)ty->in_dim[t], key, ds->dir,
                        (long long)in->feat[t]->dim, in->feat[t]->name);
                goto done;
            }
            continue;
        }
        snprintf(key, sizeof key, "embedding_dict.%s.weight", ds->node_types[t].name);
        const int e = safetensors_find(f, key);
        if (e < 0 || f->ndims[e] != 2 || f->shapes[e][0] != ds->node_types[t].num_nodes ||
            f->shapes[e][1] != ty->in_dim[t]) {
            err_set(err, CGNN_ERR_INPUT,
                    "%s: tensor '%s' is %s: node type '%s' has no features in the dataset %s, so its input is its "
                    "learnable table, [%lld, %lld]",
                    f->path, key, e < 0 ? "missing" : "of another shape", ds->node_types[t].name, ds->dir,
                    (long long)ds->node_types[t].num_nodes, (long long)ty->in_dim[t]);
            goto done;
        }
        in->table[t] = f->data[e];
    }
    model_types_set_edge_types(ty, ds);
    const int comp = safetensors_find(f, "convs.0.comp");
    if (mc.kind == MODEL_RGCN && comp >= 0) {
        if (f->ndims[comp] != 2 || f->shapes[comp][0] != K || f->shapes[comp][1] < 1 || f->shapes[comp][1] > 4096) {
            err_set(err, CGNN_ERR_INPUT, "%s: tensor 'convs.0.comp' is not [%d, B] (one row per edge type)", f->path, K);
            goto done;
        }
        ty->num_bases = (int)f->shapes[comp][1];
    }
    /* the training scratch is not used by inference: the smallest capacity */
    for (int t = 0; t < T; t++)
        for (int h = 0; h <= mc.num_layers; h++) ty->cap.max_nodes[t][h] = 1;
    for (int h = 0; h < mc.num_layers; h++)
        for (int e = 0; e < K; e++) ty->cap.max_edges[h][e] = 1;
    mc.types = ty;
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = mc.num_layers;
    cap.max_items = 1;
    if (model_init(m, &mc, &cap, 0, err) != 0) {
        err_prefix(err, "%s (dataset %s): ", f->path, ds->dir);
        goto done;
    }
    for (int t = 0; t < m->num_tensors; t++) {
        const model_tensor *mt = &m->tensors[t];
        const int k = safetensors_find(f, mt->name);
        int same = k >= 0 && f->ndims[k] == mt->ndim;
        for (int dd = 0; same && dd < mt->ndim; dd++) same = f->shapes[k][dd] == mt->shape[dd];
        if (!same) {
            err_set(err, CGNN_ERR_INPUT,
                    "%s: tensor '%s' is %s for a %d-layer %s with hidden/out channels %lld/%lld on the dataset %s's "
                    "types",
                    f->path, mt->name, k < 0 ? "missing" : "of another shape", mc.num_layers, model_kind_name(mc.kind),
                    (long long)mc.hidden_dim, (long long)mc.out_dim, ds->dir);
            goto done;
        }
        memcpy(m->params + mt->offset, f->data[k], (size_t)mt->numel * sizeof(float));
    }
    for (int k = 0; k < f->n; k++) {
        if (model_find_tensor(m, f->names[k])) continue;
        int table = 0;
        for (int t = 0; t < T && !table; t++) table = in->table[t] && in->table[t] == f->data[k];
        if (table) continue;
        err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' is not part of a %d-layer %s on the dataset %s's types%s", f->path,
                f->names[k], mc.num_layers, model_kind_name(mc.kind), ds->dir,
                !strncmp(f->names[k], "embedding_dict.", 15) ? " (a table of a type that has features, or no type)"
                                                              : "");
        goto done;
    }
    rc = 0;
done:
    free(ty); /* model_init copied it */
    if (rc != 0) {
        model_free(m);
        memset(in, 0, sizeof *in);
    }
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------ */

/* The parameters of the typed model, found by key. */
typedef struct typed_params {
    const float *lin_w[T_MAX], *lin_b[T_MAX];              /* lin_dict.<t> */
    /* HeteroSAGE: convs.l.convs.<e>.lin_l.weight / bias, lin_r.weight */
    const float *sage_wl[L_MAX][K_MAX], *sage_bl[L_MAX][K_MAX], *sage_wr[L_MAX][K_MAX];
    /* RGCN, transposed to the (O, I) layout of ops_linear_rows_forward (owned) */
    float *rg_w[L_MAX];                                     /* (K, O, I) W_e^T (bases applied) */
    float *rg_root[L_MAX];                                  /* (O, I) root^T */
    const float *rg_bias[L_MAX];
    /* HGT: convs.l.kqv_lin.lins.<t>, out_lin.lins.<t> (weight, bias), k_rel / v_rel.weight
     * (H*K, D, D), skip.<t> [1], p_rel.<e> [1, H]; lin (weight, bias) after the last conv */
    const float *hgt_kqv_w[L_MAX][T_MAX], *hgt_kqv_b[L_MAX][T_MAX], *hgt_out_w[L_MAX][T_MAX], *hgt_out_b[L_MAX][T_MAX];
    const float *hgt_krel[L_MAX], *hgt_vrel[L_MAX], *hgt_skip[L_MAX][T_MAX], *hgt_prel[L_MAX][K_MAX];
    const float *hgt_lin_w, *hgt_lin_b;
} typed_params;

/* I, O of conv l of a typed model: hidden -> hidden, the last one hidden -> out (hetero.c); for
 * HGT the stage's width: its last conv is hidden -> hidden, then the shared lin hidden -> out. */
static void layer_dims(const model *m, int l, int64_t *in, int64_t *out) {
    *in = m->cfg.hidden_dim;
    *out = l == m->cfg.num_layers - 1 ? m->cfg.out_dim : m->cfg.hidden_dim;
}

static const float *param(const model *m, const char *key) {
    const model_tensor *t = model_find_tensor(m, key);
    CGNN_CHECK(t); /* the model was built for these types */
    return m->params + t->offset;
}

/* dst (O, I) = src (I, O)^T */
static void transpose(float *dst, const float *src, int64_t I, int64_t O) {
    for (int64_t i = 0; i < I; i++)
        for (int64_t o = 0; o < O; o++) dst[o * I + i] = src[i * O + o];
}

static void params_find(typed_params *p, const model *m) {
    const model_types *ty = m->types;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = m->cfg.num_layers;
    char key[3 * MODEL_TYPE_NAME_MAX + 64];
    memset(p, 0, sizeof *p);
    for (int t = 0; t < T; t++) {
        snprintf(key, sizeof key, "lin_dict.%s.weight", ty->node_type[t]);
        p->lin_w[t] = param(m, key);
        snprintf(key, sizeof key, "lin_dict.%s.bias", ty->node_type[t]);
        p->lin_b[t] = param(m, key);
    }
    if (m->cfg.kind == MODEL_HGT) {
        p->hgt_lin_w = param(m, "lin.weight");
        p->hgt_lin_b = param(m, "lin.bias");
    }
    for (int l = 0; l < L; l++) {
        int64_t I, O;
        layer_dims(m, l, &I, &O);
        if (m->cfg.kind == MODEL_HGT) {
            for (int t = 0; t < T; t++) {
                const char *tn = ty->node_type[t];
                snprintf(key, sizeof key, "convs.%d.kqv_lin.lins.%s.weight", l, tn);
                p->hgt_kqv_w[l][t] = param(m, key);
                snprintf(key, sizeof key, "convs.%d.kqv_lin.lins.%s.bias", l, tn);
                p->hgt_kqv_b[l][t] = param(m, key);
                snprintf(key, sizeof key, "convs.%d.out_lin.lins.%s.weight", l, tn);
                p->hgt_out_w[l][t] = param(m, key);
                snprintf(key, sizeof key, "convs.%d.out_lin.lins.%s.bias", l, tn);
                p->hgt_out_b[l][t] = param(m, key);
                snprintf(key, sizeof key, "convs.%d.skip.%s", l, tn);
                p->hgt_skip[l][t] = param(m, key);
            }
            snprintf(key, sizeof key, "convs.%d.k_rel.weight", l);
            p->hgt_krel[l] = param(m, key);
            snprintf(key, sizeof key, "convs.%d.v_rel.weight", l);
            p->hgt_vrel[l] = param(m, key);
            for (int e = 0; e < K; e++) {
                snprintf(key, sizeof key, "convs.%d.p_rel.%s__%s__%s", l, ty->edge_type[e][0], ty->edge_type[e][1],
                         ty->edge_type[e][2]);
                p->hgt_prel[l][e] = param(m, key);
            }
            continue;
        }
        if (m->cfg.kind == MODEL_HETERO_SAGE) {
            for (int e = 0; e < K; e++) {
                const char *s = ty->edge_type[e][0], *r = ty->edge_type[e][1], *d = ty->edge_type[e][2];
                snprintf(key, sizeof key, "convs.%d.convs.%s__%s__%s.lin_l.weight", l, s, r, d);
                p->sage_wl[l][e] = param(m, key);
                snprintf(key, sizeof key, "convs.%d.convs.%s__%s__%s.lin_l.bias", l, s, r, d);
                p->sage_bl[l][e] = param(m, key);
                snprintf(key, sizeof key, "convs.%d.convs.%s__%s__%s.lin_r.weight", l, s, r, d);
                p->sage_wr[l][e] = param(m, key);
            }
            continue;
        }
        /* RGCN: W_e (I, O) = weight[e], or Σ_b comp[e, b] weight[b] (summed in b order) */
        snprintf(key, sizeof key, "convs.%d.weight", l);
        const float *w = param(m, key);
        const int B = ty->num_bases;
        const float *comp = NULL;
        if (B > 0) {
            snprintf(key, sizeof key, "convs.%d.comp", l);
            comp = param(m, key);
        }
        p->rg_w[l] = cgnn_malloc((size_t)(K * I * O) * sizeof(float));
        float *we = cgnn_malloc((size_t)(I * O) * sizeof(float));
        for (int e = 0; e < K; e++) {
            if (B == 0) {
                memcpy(we, w + e * I * O, (size_t)(I * O) * sizeof(float));
            } else {
                for (int64_t k = 0; k < I * O; k++) {
                    float s = 0.0f;
                    for (int b = 0; b < B; b++) s += comp[e * B + b] * w[b * I * O + k];
                    we[k] = s;
                }
            }
            transpose(p->rg_w[l] + e * I * O, we, I, O);
        }
        free(we);
        snprintf(key, sizeof key, "convs.%d.root", l);
        p->rg_root[l] = cgnn_malloc((size_t)(I * O) * sizeof(float));
        transpose(p->rg_root[l], param(m, key), I, O);
        snprintf(key, sizeof key, "convs.%d.bias", l);
        p->rg_bias[l] = param(m, key);
    }
}

static void params_free(typed_params *p) {
    for (int l = 0; l < L_MAX; l++) {
        free(p->rg_w[l]);
        free(p->rg_root[l]);
    }
}

/* The input checks: node counts, input widths, row counts of features and tables. */
static int check_input(const model *m, const typed_graph *g, const infer_typed_input *in, cgnn_err *err) {
    const model_types *ty = m->types;
    if (!ty || (m->cfg.kind != MODEL_HETERO_SAGE && m->cfg.kind != MODEL_RGCN && m->cfg.kind != MODEL_HGT))
        return err_set(err, CGNN_ERR_INPUT, "typed inference needs a HeteroSAGE, RGCN or HGT model, not %s",
                       model_kind_name(m->cfg.kind));
    if (ty->num_node_types != g->num_node_types || ty->num_edge_types != g->num_edge_types)
        return err_set(err, CGNN_ERR_INPUT, "the model has %d node and %d edge types, the graph %d and %d",
                       ty->num_node_types, ty->num_edge_types, g->num_node_types, g->num_edge_types);
    for (int e = 0; e < g->num_edge_types; e++)
        if (ty->etype_src[e] != g->etype_src[e] || ty->etype_dst[e] != g->etype_dst[e])
            return err_set(err, CGNN_ERR_INPUT, "edge type %d: the model's node types differ from the graph's", e);
    if (g->offset[g->num_node_types] < 1) return err_set(err, CGNN_ERR_INPUT, "the graph has no nodes");
    for (int t = 0; t < g->num_node_types; t++) {
        const char *name = ty->node_type[t];
        if (g->num_nodes[t] >= INT32_MAX) /* the index's ids are read as int32 */
            return err_set(err, CGNN_ERR_INPUT, "node type '%s' has %lld nodes; inference supports up to %d", name,
                           (long long)g->num_nodes[t], INT32_MAX - 1);
        const ds_feature *f = in->feat[t];
        if (f && (f->rows != g->num_nodes[t] || f->dim != ty->in_dim[t]))
            return err_set(err, CGNN_ERR_INPUT,
                           "node type '%s': feature '%s' is (%lld, %lld), the model needs (%lld, %lld)", name, f->name,
                           (long long)f->rows, (long long)f->dim, (long long)g->num_nodes[t], (long long)ty->in_dim[t]);
        if (!f && !in->table[t])
            return err_set(err, CGNN_ERR_INPUT, "node type '%s' has neither features nor a learnable table", name);
    }
    for (int e = 0; e < g->num_edge_types; e++) CGNN_CHECK(g->csc[e]->index_bytes == 4); /* < 2^31 sources */
    return 0;
}

/* Buffers of this rank's chunks. */
typedef struct typed_run_state {
    typed_params p;
    int64_t lo[T_MAX], hi[T_MAX];   /* this rank's slice of each type */
    int64_t slice_off[T_MAX + 1];   /* its rows in `slice` */
    int64_t *ids;                   /* (C) node ids of a chunk (feature gathers) */
    float *x;                       /* (C, max F_t) gathered input rows */
    float *agg;                     /* (C, H) one edge type's mean */
    float *work;                    /* ops_linear_rows_work of the widest product */
    float *slice;                   /* (Σ slice rows, max(H, O)) in-memory multi-rank */
    int64_t *counts;                /* (world size) */
    /* HGT, per stage: every source row's relation-transformed keys and values (all ranks compute
     * all rows), and per chunk the rebased index rows, attention weights and products */
    float *kt[K_MAX], *vt[K_MAX];   /* (N_src_e, H) */
    float *alpha[K_MAX];            /* (most edges of a chunk of edge type e, heads) */
    int64_t *indptr[K_MAX];         /* (C + 1) the chunk's index rows rebased to 0 */
    float *kqv;                     /* (C, 3H) */
    float *hagg, *hg, *ha;          /* (C, H) attention output, its GELU, out_lin of that */
} typed_run_state;

static void state_free(typed_run_state *st) {
    params_free(&st->p);
    free(st->ids);
    free(st->x);
    free(st->agg);
    free(st->work);
    free(st->slice);
    free(st->counts);
    for (int e = 0; e < K_MAX; e++) {
        free(st->kt[e]);
        free(st->vt[e]);
        free(st->alpha[e]);
        free(st->indptr[e]);
    }
    free(st->kqv);
    free(st->hagg);
    free(st->hg);
    free(st->ha);
}

/* One chunk of stage 0: rows [a, a + n) of type t into out (n, H). */
static void input_chunk(typed_run_state *st, const model *m, const infer_typed_input *in, int t, int64_t a,
                        int64_t n, float *out) {
    const int64_t F = m->types->in_dim[t], H = m->cfg.hidden_dim;
    const float *x;
    if (in->feat[t]) {
        for (int64_t k = 0; k < n; k++) st->ids[k] = a + k;
        gather_rows(st->x, in->feat[t], st->ids, n, omp_get_max_threads());
        if (in->normalize_rows) gather_normalize_rows(st->x, n, F);
        x = st->x;
    } else {
        x = in->table[t] + a * F;
    }
    ops_linear_rows_forward(out, x, st->p.lin_w[t], st->p.lin_b[t], n, F, H, 0, st->work);
    ops_relu_forward(out, out, n * H);
}

/* One chunk of conv l: rows [a, a + n) of type t into out (n, O), from the previous stage's
 * rows prev (N, I). Returns the edges aggregated. */
static int64_t conv_chunk(typed_run_state *st, const model *m, const typed_graph *g, int l, int t, int64_t a,
                          int64_t n, const float *prev, float *out) {
    const model_types *ty = m->types;
    const int L = m->cfg.num_layers;
    int64_t I, O, edges = 0;
    layer_dims(m, l, &I, &O);
    const float *h_dst = prev + (g->offset[t] + a) * I;
    const int rgcn = m->cfg.kind == MODEL_RGCN;
    if (rgcn) ops_linear_rows_forward(out, h_dst, st->p.rg_root[l], st->p.rg_bias[l], n, I, O, 0, st->work);
    int first = !rgcn;
    for (int e = 0; e < ty->num_edge_types; e++) {
        if (ty->etype_dst[e] != t) continue;
        const csc_graph *c = g->csc[e];
        /* the edge type's index rows a .. a + n as a block: indptr and ids read in place */
        const sampler_block b = {n, g->num_nodes[ty->etype_src[e]], c->indptr[a + n] - c->indptr[a],
                                 (int64_t *)c->indptr + a, (int32_t *)c->indices, NULL, NULL, NULL};
        ops_mean_agg_forward(st->agg, prev + g->offset[ty->etype_src[e]] * I, &b, I);
        edges += b.num_edges;
        if (rgcn) {
            ops_linear_rows_forward(out, st->agg, st->p.rg_w[l] + e * I * O, NULL, n, I, O, 1, st->work);
        } else {
            ops_linear_rows_forward(out, st->agg, st->p.sage_wl[l][e], st->p.sage_bl[l][e], n, I, O, !first, st->work);
            ops_linear_rows_forward(out, h_dst, st->p.sage_wr[l][e], NULL, n, I, O, 1, st->work);
            first = 0;
        }
    }
    CGNN_CHECK(!first); /* HeteroSAGE: every type is the dst of an edge type (hetero.c refuses others) */
    if (l < L - 1) ops_relu_forward(out, out, n * O);
    else if (m->cfg.l2_normalize_output) ops_l2norm_forward(out, out, n, O);
    return edges;
}

/* ---- HGT ---------------------------------------------------------------------------------
 * Conv l (nh heads of D = H / nh channels; e = (s, r, d) an edge type):
 *   [k | q | v]_i = kqv_lin[type of i](h_i)                                     (3H)
 *   kt_e[j], vt_e[j] = head by head k_j · k_rel[head * K + e], v_j · v_rel[...]  (every source row
 *                      j of e, computed once per stage by every rank into st->kt / st->vt)
 *   agg_i            = hgt_attention_forward over all in-edges of i of every edge type into d
 *   o_i = σ(skip_d) out_lin[d](gelu(agg_i)) + (1 - σ(skip_d)) h_i  (no in-edges: agg_i = 0)
 * then after the last conv y_i = lin(o_i) (and the optional L2 normalisation). */

/* out (N, H) rows, head by head x_j,head (D, row stride ldx) · W[head * K + e] (D, D); row by row,
 * so a row's values do not depend on N. */
static void hgt_rel_rows(float *out, const float *x, int64_t ldx, const float *W, int e, int K, int64_t N,
                         int64_t nh, int64_t D) {
    const int64_t H = nh * D;
#pragma omp parallel for schedule(static) if (N * H * D > 65536)
    for (int64_t j = 0; j < N; j++)
        for (int64_t h = 0; h < nh; h++) {
            const float *xj = x + j * ldx + h * D, *w = W + (h * K + e) * D * D;
            float *o = out + j * H + h * D;
            for (int64_t c = 0; c < D; c++) o[c] = 0.0f;
            for (int64_t k = 0; k < D; k++) {
                const float xv = xj[k];
                for (int64_t c = 0; c < D; c++) o[c] += xv * w[k * D + c];
            }
        }
}

/* Before conv l's chunks: kt_e, vt_e of every source row of every edge type, from prev (N, H),
 * in chunks of C rows through st->kqv. */
static void hgt_prepare(typed_run_state *st, const model *m, const typed_graph *g, int l, int64_t C,
                        const float *prev) {
    const model_types *ty = m->types;
    const int K = ty->num_edge_types;
    const int64_t H = m->cfg.hidden_dim, nh = m->cfg.num_heads, D = H / nh;
    for (int s = 0; s < ty->num_node_types; s++) {
        int used = 0;
        for (int e = 0; e < K; e++) used |= ty->etype_src[e] == s;
        if (!used) continue;
        for (int64_t a = 0; a < g->num_nodes[s]; a += C) {
            const int64_t n = a + C < g->num_nodes[s] ? C : g->num_nodes[s] - a;
            ops_linear_rows_forward(st->kqv, prev + (g->offset[s] + a) * H, st->p.hgt_kqv_w[l][s],
                                    st->p.hgt_kqv_b[l][s], n, H, 3 * H, 0, st->work);
            for (int e = 0; e < K; e++) {
                if (ty->etype_src[e] != s) continue;
                hgt_rel_rows(st->kt[e] + a * H, st->kqv, 3 * H, st->p.hgt_krel[l], e, K, n, nh, D);
                hgt_rel_rows(st->vt[e] + a * H, st->kqv + 2 * H, 3 * H, st->p.hgt_vrel[l], e, K, n, nh, D);
            }
        }
    }
}

/* One chunk of HGT's conv l: rows [a, a + n) of type t into out (n, H), or (n, O) through lin
 * after the last conv. Returns the edges aggregated. */
static int64_t hgt_conv_chunk(typed_run_state *st, const model *m, const typed_graph *g, int l, int t, int64_t a,
                              int64_t n, const float *prev, float *out) {
    const model_types *ty = m->types;
    const int L = m->cfg.num_layers;
    const int64_t H = m->cfg.hidden_dim, nh = m->cfg.num_heads, D = H / nh, O = m->cfg.out_dim;
    const float *h_dst = prev + (g->offset[t] + a) * H;
    ops_linear_rows_forward(st->kqv, h_dst, st->p.hgt_kqv_w[l][t], st->p.hgt_kqv_b[l][t], n, H, 3 * H, 0, st->work);
    hgt_rel rels[K_MAX];
    sampler_block blocks[K_MAX];
    int nr = 0;
    int64_t edges = 0;
    for (int e = 0; e < ty->num_edge_types; e++) {
        if (ty->etype_dst[e] != t) continue;
        const csc_graph *c = g->csc[e];
        const int64_t base = c->indptr[a];
        for (int64_t k = 0; k <= n; k++) st->indptr[e][k] = c->indptr[a + k] - base;
        blocks[nr] = (sampler_block){n, g->num_nodes[ty->etype_src[e]], st->indptr[e][n], st->indptr[e],
                                     (int32_t *)c->indices + base, NULL, NULL, NULL};
        rels[nr] = (hgt_rel){.b = &blocks[nr], .kt = st->kt[e], .vt = st->vt[e], .p = st->p.hgt_prel[l][e],
                             .alpha = st->alpha[e], .work = NULL};
        edges += blocks[nr].num_edges;
        nr++;
    }
    hgt_attention_forward(st->hagg, rels, nr, st->kqv + H, 3 * H, n, nh, D);
    ops_gelu_forward(st->hg, st->hagg, n * H);
    ops_linear_rows_forward(st->ha, st->hg, st->p.hgt_out_w[l][t], st->p.hgt_out_b[l][t], n, H, H, 0, st->work);
    const float sg = 1.0f / (1.0f + expf(-st->p.hgt_skip[l][t][0]));
    float *o = l < L - 1 ? out : st->hg; /* the last conv's rows go through lin; hg is consumed */
    for (int64_t k = 0; k < n * H; k++) o[k] = sg * st->ha[k] + (1.0f - sg) * h_dst[k];
    if (l == L - 1) {
        ops_linear_rows_forward(out, o, st->p.hgt_lin_w, st->p.hgt_lin_b, n, H, O, 0, st->work);
        if (m->cfg.l2_normalize_output) ops_l2norm_forward(out, out, n, O);
    }
    return edges;
}

int infer_typed_run(infer_result *res, const model *m, const typed_graph *g, const infer_typed_input *in,
                    const infer_options *opt, cgnn_err *err) {
    static const dist_ctx serial = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    const dist_ctx *d = opt->dist ? opt->dist : &serial;
    memset(res, 0, sizeof *res);
    const double t0 = timer_now();
    const int L = m->cfg.num_layers, T = g->num_node_types;
    const int64_t N = g->offset[T], C = opt->chunk, H = m->cfg.hidden_dim;
    const char *dir = opt->activations_dir && *opt->activations_dir ? opt->activations_dir : NULL;
    const int gather_slices = d->size > 1 && !dir; /* in memory: all-gather; files: shared writes */
    typed_run_state st;
    memset(&st, 0, sizeof st);
    infer_store prev, cur;
    memset(&prev, 0, sizeof prev);
    memset(&cur, 0, sizeof cur);
    int rc = -1;
    int bad = check_input(m, g, in, err) != 0;
    if (!bad && C < 1) bad = err_set(err, CGNN_ERR_INPUT, "chunk: %lld must be >= 1", (long long)C) != 0;
    if (!bad) { /* slices and buffers */
        int64_t max_f = 1, max_n = 1, wide = m->cfg.out_dim > H ? m->cfg.out_dim : H;
        for (int t = 0; t < T; t++) {
            st.lo[t] = g->num_nodes[t] * d->rank / d->size;
            st.hi[t] = g->num_nodes[t] * (d->rank + 1) / d->size;
            st.slice_off[t + 1] = st.slice_off[t] + st.hi[t] - st.lo[t];
            if (m->types->in_dim[t] > max_f) max_f = m->types->in_dim[t];
            if (st.hi[t] - st.lo[t] > max_n) max_n = st.hi[t] - st.lo[t];
        }
        const int64_t rows = C < max_n ? C : max_n;
        int64_t work = ops_linear_rows_work(max_f, H);
        for (int l = 0; l < L; l++) {
            int64_t I, O;
            layer_dims(m, l, &I, &O);
            if (ops_linear_rows_work(I, O) > work) work = ops_linear_rows_work(I, O);
        }
        st.ids = malloc((size_t)rows * sizeof(int64_t));
        st.x = malloc((size_t)(rows * max_f) * sizeof(float));
        st.agg = malloc((size_t)(rows * H) * sizeof(float));
        st.counts = malloc((size_t)d->size * sizeof(int64_t));
        if (gather_slices) st.slice = malloc((size_t)(st.slice_off[T] * wide + 1) * sizeof(float));
        int ok = 1;
        if (m->cfg.kind == MODEL_HGT) { /* the attention's buffers (one stage's, reused) */
            if (ops_linear_rows_work(H, 3 * H) > work) work = ops_linear_rows_work(H, 3 * H);
            const model_types *ty = m->types;
            for (int e = 0; e < ty->num_edge_types && ok; e++) {
                const int s = ty->etype_src[e], t = ty->etype_dst[e];
                const csc_graph *cg = g->csc[e];
                int64_t most = 0; /* the most edges of one of this rank's chunks of type t */
                for (int64_t a = st.lo[t]; a < st.hi[t]; a += C) {
                    const int64_t b = a + C < st.hi[t] ? a + C : st.hi[t];
                    if (cg->indptr[b] - cg->indptr[a] > most) most = cg->indptr[b] - cg->indptr[a];
                }
                st.kt[e] = malloc((size_t)(g->num_nodes[s] * H + 1) * sizeof(float));
                st.vt[e] = malloc((size_t)(g->num_nodes[s] * H + 1) * sizeof(float));
                st.alpha[e] = malloc((size_t)(most * m->cfg.num_heads + 1) * sizeof(float));
                st.indptr[e] = malloc((size_t)(rows + 1) * sizeof(int64_t));
                ok = st.kt[e] && st.vt[e] && st.alpha[e] && st.indptr[e];
            }
            const int64_t prep = C < g->offset[T] ? C : g->offset[T]; /* hgt_prepare's chunks: whole types */
            st.kqv = malloc((size_t)((prep > rows ? prep : rows) * 3 * H) * sizeof(float));
            st.hagg = malloc((size_t)(rows * H) * sizeof(float));
            st.hg = malloc((size_t)(rows * H) * sizeof(float));
            st.ha = malloc((size_t)(rows * H) * sizeof(float));
            ok = ok && st.kqv && st.hagg && st.hg && st.ha;
        }
        st.work = malloc((size_t)(work + 16) * sizeof(float));
        if (!ok || !st.ids || !st.x || !st.agg || !st.work || !st.counts || (gather_slices && !st.slice))
            bad = err_set(err, CGNN_ERR_RUNTIME, "out of memory for inference buffers (chunks of %lld rows): use a "
                          "smaller --batch", (long long)rows) != 0;
    }
    if (!bad) params_find(&st.p, m);
    if (dist_phase_failed(d, bad, err)) goto done;

    for (int s = 0; s <= L; s++) { /* stage 0: the input projection; stage l + 1: conv l */
        const double ts = timer_now();
        int64_t O = H, I = 0;
        if (s > 0) layer_dims(m, s - 1, &I, &O);
        if (infer_store_open_layer(&cur, d, dir, s, N, O, err) != 0) goto done;
        int64_t total = 0, done = 0;
        for (int t = 0; t < T; t++) total += (st.hi[t] - st.lo[t] + C - 1) / C;
        if (s > 0 && m->cfg.kind == MODEL_HGT) hgt_prepare(&st, m, g, s - 1, C, prev.data);
        if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, s, L + 1, 0, total);
        for (int t = 0; t < T; t++)
            for (int64_t a = st.lo[t]; a < st.hi[t]; a += C, done++) {
                const int64_t n = a + C < st.hi[t] ? C : st.hi[t] - a;
                float *out = gather_slices ? st.slice + (st.slice_off[t] + a - st.lo[t]) * O
                                           : cur.data + (g->offset[t] + a) * O;
                if (s == 0) input_chunk(&st, m, in, t, a, n, out);
                else if (m->cfg.kind == MODEL_HGT) res->edges += hgt_conv_chunk(&st, m, g, s - 1, t, a, n, prev.data, out);
                else res->edges += conv_chunk(&st, m, g, s - 1, t, a, n, prev.data, out);
                res->chunks++;
                if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, s, L + 1, done + 1, total);
            }
        if (gather_slices) {
            for (int t = 0; t < T; t++) { /* every rank's slices of type t, in rank order = id order */
                dist_allgather_counts(d, (st.hi[t] - st.lo[t]) * O, st.counts);
                dist_allgatherv_f32(d, st.slice + st.slice_off[t] * O, cur.data + g->offset[t] * O, st.counts);
            }
        } else if (d->size > 1) {
            /* shared file: this rank's rows reach the file before the others read them */
            const size_t page = (size_t)sysconf(_SC_PAGESIZE);
            for (int t = 0; t < T; t++) {
                const size_t beg = (size_t)((g->offset[t] + st.lo[t]) * O) * sizeof(float) / page * page;
                const size_t end = (size_t)((g->offset[t] + st.hi[t]) * O) * sizeof(float);
                if (end > beg) msync((char *)cur.data + beg, end - beg, MS_SYNC);
            }
            dist_barrier(d);
        }
        infer_store_close(&prev); /* every rank is past stage s: stage s-1 is no longer read */
        prev = cur;
        memset(&cur, 0, sizeof cur);
        /* the input stage's time is counted with layer 0 */
        res->layer_seconds[s > 0 ? s - 1 : 0] += timer_now() - ts;
    }
    res->num_nodes = N;
    res->dim = prev.cols;
    res->embeddings = prev.data;
    res->store = prev;
    memset(&prev, 0, sizeof prev);
    res->seconds = timer_now() - t0;
    rc = 0;
done:
    infer_store_close(&prev);
    infer_store_close(&cur);
    state_free(&st);
    return rc;
}
