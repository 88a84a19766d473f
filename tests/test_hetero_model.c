/* test_hetero_model.c — the typed models (HeteroSAGE, RGCN with and without bases, HGT with 1
 * and 2 heads): finite-difference checks of the gradients w.r.t. every parameter tensor and
 * every node type's input rows (with and without dropout, with an L2-normalised output; HGT also
 * on a graph where a node type has no incoming edge type), key names, shapes and order, init,
 * per-layer parameter ranges, bitwise determinism, on a batch drawn by the typed sampler from a
 * small typed graph; HGT's attention kernels against their _ref on a larger random batch. */
#include <string.h>

#include "graph/typed_graph.h"
#include "nn/hgt.h"
#include "nn/model.h"
#include "sample/typed_sampler.h"
#include "test.h"
#include "test_fd.h"

enum { T = 3, K = 4, L = 2 };
static const int64_t NUM[T] = {30, 40, 12};
static const int ESRC[K] = {0, 1, 2, 1}, EDST[K] = {1, 0, 1, 2}; /* a->b, b->a, c->b, b->c */
static const int EDST_NO_IN[K] = {1, 0, 1, 1}; /* a->b, b->a, c->b, b->b: venue has no incoming edge type */
static const int64_t FEAT[T] = {5, 3, 4};
static const char *const NTNAME[T] = {"author", "paper", "venue"};
static const char *const REL[K] = {"writes", "written_by", "publishes", "published_in"};

typedef struct world {
    const int *edst;      /* EDST or EDST_NO_IN */
    csc_graph csc[K];
    int32_t *src[K], *dst[K];
    typed_graph g;
    minibatch mb;
    minibatch_typed_capacity tcap;
} world;

static void world_build_on(world *w, uint64_t seed, const int *edst) {
    memset(w, 0, sizeof *w);
    w->edst = edst;
    rng r;
    rng_init(&r, seed);
    const csc_graph *views[K];
    for (int e = 0; e < K; e++) {
        const int64_t ns = NUM[ESRC[e]], nd = NUM[edst[e]];
        int64_t m = 0;
        w->src[e] = malloc((size_t)(nd * 4 + 1) * sizeof(int32_t));
        w->dst[e] = malloc((size_t)(nd * 4 + 1) * sizeof(int32_t));
        for (int64_t v = 0; v < nd; v++) {
            int64_t deg = (int64_t)rng_below(&r, 4);
            for (int64_t k = 0; k < deg; k++) {
                w->src[e][m] = (int32_t)((v * 5 + k * 3 + e) % ns);
                w->dst[e][m++] = (int32_t)v;
            }
        }
        ds_edges ed = {NPY_DTYPE_INT32, m, w->src[e], w->dst[e]};
        cgnn_err err = {0};
        CGNN_CHECK(csc_build_range(&w->csc[e], 0, nd, ns, &ed, 1, &err) == 0);
        views[e] = &w->csc[e];
    }
    typed_graph_init(&w->g, T, NUM, K, ESRC, edst, views);
    typed_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = L;
    for (int h = 0; h < L; h++)
        for (int e = 0; e < K; e++) cfg.fanouts[h][e] = 2;
    int64_t max_seeds[T] = {0, 6, 0};
    typed_sampler_capacity(&w->g, &cfg, max_seeds, FEAT, &w->tcap);
    minibatch_capacity cap = {.num_layers = L, .max_items = 6};
    cgnn_err err = {0};
    CGNN_CHECK(minibatch_alloc_typed(&w->mb, &cap, &w->tcap, ESRC, edst, &err) == 0);
    typed_sampler s;
    CGNN_CHECK(typed_sampler_init(&s, &w->g, &cfg, &w->tcap, &err) == 0);
    int64_t seeds[6] = {40 + 1, 30 + 7, 30 + 22, 30 + 3, 30 + 39, 30 + 7}; /* type 1 (offset 30), one twice */
    typed_sampler_sample(&s, &w->mb, seeds, 6, seed);
    typed_sampler_free(&s);
    minibatch_build_transpose(&w->mb);
    for (int64_t i = 0; i < 6; i++) {
        w->mb.labels[i] = (int64_t)rng_below(&r, 3);
        w->mb.items[i] = i;
    }
    for (int t = 0; t < T; t++)
        fill_uniform(w->mb.typed->features[t], w->mb.typed->num_nodes[t][L] * FEAT[t], -1.0f, 1.0f, seed * 7 + (uint64_t)t);
}

static void world_build(world *w, uint64_t seed) { world_build_on(w, seed, EDST); }

static void world_free(world *w) {
    minibatch_free(&w->mb);
    for (int e = 0; e < K; e++) {
        csc_free(&w->csc[e]);
        free(w->src[e]);
        free(w->dst[e]);
    }
}

static void make_types(model_types *ty, const world *w, int bases) {
    memset(ty, 0, sizeof *ty);
    ty->num_node_types = T;
    ty->num_edge_types = K;
    for (int t = 0; t < T; t++) {
        snprintf(ty->node_type[t], sizeof ty->node_type[t], "%s", NTNAME[t]);
        ty->in_dim[t] = FEAT[t];
        ty->input_grad[t] = 1;
    }
    for (int e = 0; e < K; e++) {
        snprintf(ty->edge_type[e][0], MODEL_TYPE_NAME_MAX, "%s", NTNAME[ESRC[e]]);
        snprintf(ty->edge_type[e][1], MODEL_TYPE_NAME_MAX, "%s", REL[e]);
        snprintf(ty->edge_type[e][2], MODEL_TYPE_NAME_MAX, "%s", NTNAME[w->edst[e]]);
        ty->etype_src[e] = ESRC[e];
        ty->etype_dst[e] = w->edst[e];
    }
    ty->output_type = 1;
    ty->num_bases = bases;
    ty->cap = w->tcap;
}

typedef struct hctx {
    model *m;
    const minibatch *mb;
    float *dl;
    int training;
} hctx;

static double hloss(void *p) {
    hctx *c = p;
    const float *out = model_forward(c->m, c->mb, c->training, 0x5eed);
    return model_softmax_ce(c->dl, out, c->mb->item_local, c->mb->labels, c->mb->num_items,
                            c->mb->typed->num_nodes[1][0], c->m->cfg.out_dim, NULL);
}

static int make_model_h(model *m, const world *w, model_types *ty, model_kind kind, int bases, int heads,
                        float dropout, int l2) {
    make_types(ty, w, bases);
    model_config cfg = {.kind = kind, .num_layers = L, .hidden_dim = 4, .out_dim = 3, .num_heads = heads,
                        .dropout = dropout, .l2_normalize_output = l2, .types = ty};
    cgnn_err err = {0};
    int rc = model_init(m, &cfg, &w->mb.cap, 9, &err);
    if (rc) fprintf(stderr, "model_init: %s\n", err.msg);
    return rc;
}

static int make_model(model *m, const world *w, model_types *ty, model_kind kind, int bases, float dropout, int l2) {
    return make_model_h(m, w, ty, kind, bases, 2, dropout, l2);
}

/* hgt_input_stage_away_from_kink: for HGT the FD check steps 5e-2 (below), wide enough to cross
 * ReLU kinks of the input stage; its lin_dict weights are scaled to U(±1/(2 F_t)) and its biases
 * drawn from U(0.6, 1.0), so every pre-activation (|features| <= 1) lies in [0.1, 1.5]: no
 * step of any input or lin_dict element reaches the kink (ReLU's own gradient is checked in
 * test_nn_grad and by the HeteroSAGE / RGCN cases here). */

/* HGT tensors whose gradient is exactly 0 on the test batch (seeds are papers only): in the last
 * layer, the per-type tensors of the types without output rows (author, venue: out_lin, skip)
 * and the p_rel of edge types into them; with venue receiving no edge type, out_lin.lins.venue's
 * weight in every layer (its input gelu(0) is 0). */
static int hgt_unused(const char *name, const int *edst) {
    char pre[32];
    snprintf(pre, sizeof pre, "convs.%d.", L - 1);
    const int last = !strncmp(name, pre, strlen(pre));
    for (int t = 0; t < T; t++) {
        if (t == 1) continue;
        char a[96], b[96], c[96];
        snprintf(a, sizeof a, ".out_lin.lins.%s.", NTNAME[t]);
        snprintf(b, sizeof b, ".skip.%s", NTNAME[t]);
        snprintf(c, sizeof c, "__%s", NTNAME[t]);
        const size_t n = strlen(name), nc = strlen(c);
        if (last && (strstr(name, a) || strstr(name, b) || (strstr(name, ".p_rel.") && n > nc && !strcmp(name + n - nc, c))))
            return 1;
    }
    return edst == EDST_NO_IN && strstr(name, ".out_lin.lins.venue.weight") != NULL;
}

static void check_grads_on(model_kind kind, int bases, int heads, float dropout, int l2, const int *edst) {
    world w;
    world_build_on(&w, 11 + (uint64_t)kind, edst);
    model m;
    model_types ty;
    ASSERT_EQ(make_model_h(&m, &w, &ty, kind, bases, heads, dropout, l2), 0);
    fill_uniform(m.params, m.num_params, -1.0f, 1.0f, 400 + (uint64_t)kind); /* a seed at which no ReLU is dead for a whole type */
    if (kind == MODEL_HGT) { /* see hgt_input_stage_away_from_kink */
        for (int t = 0; t < T; t++) {
            const model_tensor *wt = &m.tensors[2 * t], *bt = &m.tensors[2 * t + 1];
            for (int64_t k = 0; k < wt->numel; k++) m.params[wt->offset + k] *= 0.5f / (float)FEAT[t];
            fill_uniform(m.params + bt->offset, bt->numel, 0.6f, 1.0f, 500 + (uint64_t)t);
        }
    }
    const int64_t S = w.mb.typed->num_nodes[1][0];
    hctx c = {.m = &m, .mb = &w.mb, .dl = cgnn_calloc((size_t)(S * 3 + 1), sizeof(float)), .training = dropout > 0};
    hloss(&c);
    float *dout = cgnn_calloc((size_t)(S * 3 + 1), sizeof(float));
    memcpy(dout, c.dl, (size_t)(S * 3) * sizeof(float));
    model_zero_grad(&m);
    const float *douts[T] = {NULL, dout, NULL};
    model_typed_backward(&m, &w.mb, douts);
    /* HGT: the attention's gradients are small (down to 1e-5 here) and smooth (GELU, softmax, no
     * kink once the input stage is away from its ReLU's): a wide step (5e-2) keeps the float32
     * loss's rounding (~1e-7, so ~1e-6 in the difference quotient) out of the comparison, and
     * elements below 1e-4 are held to an absolute 2e-6. */
    const float eps = kind == MODEL_HGT ? 5e-2f : 1e-2f;
    const double abs_floor = kind == MODEL_HGT ? 1e-4 : 1e-6;
    fprintf(stderr, " %s bases %d heads %d dropout %g l2 %d%s:\n", model_kind_name(kind), bases, heads, (double)dropout,
            l2, edst == EDST_NO_IN ? " (venue: no incoming edge type)" : "");
    int ok = 1;
    for (int t = 0; t < m.num_tensors && ok; t++) {
        const model_tensor *mt = &m.tensors[t];
        fd_stats st = fd_check_floor(m.params + mt->offset, m.grads + mt->offset, mt->numel, hloss, &c, eps, 1, abs_floor);
        fd_print(mt->name, &st);
        float gmax = 0.0f;
        for (int64_t k = 0; k < mt->numel; k++) gmax = fmaxf(gmax, fabsf(m.grads[mt->offset + k]));
        /* the last layer's convs into types without seeds feed nothing: their gradient is 0 */
        int unused = 0;
        for (int e = 0; e < K; e++) {
            char pre[160];
            snprintf(pre, sizeof pre, "convs.%d.convs.%s__%s__%s.", L - 1, NTNAME[ESRC[e]], REL[e], NTNAME[EDST[e]]);
            unused |= EDST[e] != 1 && !strncmp(mt->name, pre, strlen(pre));
        }
        if (kind == MODEL_HGT) unused = hgt_unused(mt->name, edst);
        /* HGT's p_rel of paper->author: one author of layer 0 has two sampled in-edges (a softmax over
         * one edge gives p no gradient), so its gradient is small but not zero */
        const float gmin = kind == MODEL_HGT && strstr(mt->name, ".p_rel.") ? 1e-7f : 1e-5f;
        ok = st.max_err <= FD_TOL && st.skipped * 10 <= mt->numel && (unused ? gmax == 0.0f : gmax > gmin);
        if (!unused && gmax <= gmin) fprintf(stderr, "  %s: gradient is (near) zero (%g)\n", mt->name, (double)gmax);
    }
    ASSERT(ok);
    for (int t = 0; t < T; t++) {
        float *dx = cgnn_calloc((size_t)(NUM[t] * FEAT[t] + 1), sizeof(float));
        const int64_t n = w.mb.typed->num_nodes[t][L] * FEAT[t];
        memcpy(dx, model_typed_input_grad(&m, t), (size_t)n * sizeof(float));
        fd_stats sx = fd_check_floor(w.mb.typed->features[t], dx, n, hloss, &c, eps, 1, abs_floor);
        free(dx);
        ASSERT_FD(NTNAME[t], sx);
    }
    free(c.dl);
    free(dout);
    model_free(&m);
    world_free(&w);
}

static void check_grads(model_kind kind, int bases, float dropout, int l2) {
    check_grads_on(kind, bases, 2, dropout, l2, EDST);
}

TEST(grad_hetero_sage) { check_grads(MODEL_HETERO_SAGE, 0, 0.0f, 0); }
TEST(grad_hetero_sage_dropout_l2) { check_grads(MODEL_HETERO_SAGE, 0, 0.3f, 1); }
TEST(grad_rgcn) { check_grads(MODEL_RGCN, 0, 0.0f, 0); }
TEST(grad_rgcn_bases) { check_grads(MODEL_RGCN, 2, 0.3f, 0); }
TEST(grad_hgt) { check_grads_on(MODEL_HGT, 0, 2, 0.0f, 0, EDST); }
TEST(grad_hgt_one_head_dropout_l2) { check_grads_on(MODEL_HGT, 0, 1, 0.3f, 1, EDST); }
TEST(grad_hgt_no_incoming_type) { check_grads_on(MODEL_HGT, 0, 2, 0.2f, 0, EDST_NO_IN); }

TEST(keys_and_shapes) {
    world w;
    world_build(&w, 5);
    model m;
    model_types ty;
    ASSERT_EQ(make_model(&m, &w, &ty, MODEL_HETERO_SAGE, 0, 0.0f, 0), 0);
    ASSERT_EQ(m.num_tensors, 2 * T + 3 * K * L);
    ASSERT_STR_CONTAINS(m.tensors[0].name, "lin_dict.author.weight");
    const model_tensor *t = model_find_tensor(&m, "convs.1.convs.paper__written_by__author.lin_l.weight");
    ASSERT(t != NULL);
    ASSERT_EQ(t->shape[0], 3);
    ASSERT_EQ(t->shape[1], 4);
    ASSERT(model_find_tensor(&m, "lin_dict.paper.weight")->shape[1] == 3);
    model_free(&m);
    ASSERT_EQ(make_model(&m, &w, &ty, MODEL_RGCN, 2, 0.0f, 0), 0);
    t = model_find_tensor(&m, "convs.0.weight");
    ASSERT(t != NULL && t->ndim == 3 && t->shape[0] == 2 && t->shape[1] == 4 && t->shape[2] == 4);
    t = model_find_tensor(&m, "convs.1.comp");
    ASSERT(t != NULL && t->shape[0] == K && t->shape[1] == 2);
    ASSERT(model_find_tensor(&m, "convs.1.root") != NULL && model_find_tensor(&m, "convs.1.bias") != NULL);
    model_free(&m);
    /* HeteroSAGE refuses a node type that no edge type reaches */
    make_types(&ty, &w, 0);
    ty.etype_dst[3] = 1; /* b->c becomes b->b: venue has no incoming edge type */
    model_config cfg = {.kind = MODEL_HETERO_SAGE, .num_layers = L, .hidden_dim = 4, .out_dim = 3, .types = &ty};
    cgnn_err err = {0};
    ASSERT_EQ(model_init(&m, &cfg, &w.mb.cap, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "venue");
    world_free(&w);
}

TEST(determinism) {
    world w;
    world_build(&w, 21);
    model a, b;
    model_types ta, tb;
    ASSERT_EQ(make_model(&a, &w, &ta, MODEL_RGCN, 0, 0.2f, 0), 0);
    ASSERT_EQ(make_model(&b, &w, &tb, MODEL_RGCN, 0, 0.2f, 0), 0);
    ASSERT(!memcmp(a.params, b.params, (size_t)a.num_params * sizeof(float)));
    const int64_t S = w.mb.typed->num_nodes[1][0];
    const float *oa = model_forward(&a, &w.mb, 1, 3), *ob = model_forward(&b, &w.mb, 1, 3);
    ASSERT(!memcmp(oa, ob, (size_t)(S * 3) * sizeof(float)));
    world_free(&w);
    model_free(&a);
    model_free(&b);
}

TEST(hgt_keys_and_shapes) {
    world w;
    world_build(&w, 5);
    model m;
    model_types ty;
    ASSERT_EQ(make_model_h(&m, &w, &ty, MODEL_HGT, 0, 2, 0.0f, 0), 0);
    /* GiGL HGT's state_dict: lin_dict, convs (kqv_lin, out_lin, k_rel, v_rel, skip, p_rel), lin */
    ASSERT_EQ(m.num_tensors, 2 * T + L * (5 * T + 2 + K) + 2);
    static const char *const first[] = {
        "lin_dict.author.weight", "lin_dict.author.bias", "lin_dict.paper.weight", "lin_dict.paper.bias",
        "lin_dict.venue.weight", "lin_dict.venue.bias", "convs.0.kqv_lin.lins.author.weight",
        "convs.0.kqv_lin.lins.author.bias", "convs.0.kqv_lin.lins.paper.weight", "convs.0.kqv_lin.lins.paper.bias",
        "convs.0.kqv_lin.lins.venue.weight", "convs.0.kqv_lin.lins.venue.bias", "convs.0.out_lin.lins.author.weight",
        "convs.0.out_lin.lins.author.bias", "convs.0.out_lin.lins.paper.weight", "convs.0.out_lin.lins.paper.bias",
        "convs.0.out_lin.lins.venue.weight", "convs.0.out_lin.lins.venue.bias", "convs.0.k_rel.weight",
        "convs.0.v_rel.weight", "convs.0.skip.author", "convs.0.skip.paper", "convs.0.skip.venue",
        "convs.0.p_rel.author__writes__paper", "convs.0.p_rel.paper__written_by__author",
        "convs.0.p_rel.venue__publishes__paper", "convs.0.p_rel.paper__published_in__venue",
        "convs.1.kqv_lin.lins.author.weight"};
    for (size_t k = 0; k < sizeof first / sizeof first[0]; k++) ASSERT_STR_CONTAINS(m.tensors[k].name, first[k]);
    ASSERT(!strcmp(m.tensors[m.num_tensors - 2].name, "lin.weight") && !strcmp(m.tensors[m.num_tensors - 1].name, "lin.bias"));
    const model_tensor *t = model_find_tensor(&m, "convs.1.kqv_lin.lins.paper.weight");
    ASSERT(t && t->ndim == 2 && t->shape[0] == 12 && t->shape[1] == 4);
    t = model_find_tensor(&m, "convs.0.k_rel.weight"); /* [H*K, D, D] */
    ASSERT(t && t->ndim == 3 && t->shape[0] == 2 * K && t->shape[1] == 2 && t->shape[2] == 2);
    t = model_find_tensor(&m, "convs.1.p_rel.venue__publishes__paper");
    ASSERT(t && t->ndim == 2 && t->shape[0] == 1 && t->shape[1] == 2);
    ASSERT(m.params[t->offset] == 1.0f && m.params[t->offset + 1] == 1.0f); /* PyG: ones */
    t = model_find_tensor(&m, "convs.1.skip.venue");
    ASSERT(t && t->ndim == 1 && t->shape[0] == 1 && m.params[t->offset] == 1.0f);
    t = model_find_tensor(&m, "lin.weight");
    ASSERT(t && t->shape[0] == 3 && t->shape[1] == 4);
    t = model_find_tensor(&m, "convs.0.v_rel.weight"); /* U(±1/sqrt(D)), not all equal */
    float lo = 1, hi = -1;
    for (int64_t k = 0; k < t->numel; k++) lo = fminf(lo, m.params[t->offset + k]), hi = fmaxf(hi, m.params[t->offset + k]);
    ASSERT(lo >= -1.0f / sqrtf(2.0f) && hi <= 1.0f / sqrtf(2.0f) && hi > lo);
    /* the layers' parameter ranges cover the flat buffer once: lin_dict with layer 0, lin with the last */
    int64_t b0, e0, b1, e1;
    model_layer_params(&m, 0, &b0, &e0);
    model_layer_params(&m, 1, &b1, &e1);
    ASSERT(b0 == 0 && e0 == b1 && e1 == m.num_params);
    ASSERT_EQ(e0, model_find_tensor(&m, "convs.1.kqv_lin.lins.author.weight")->offset);
    model_free(&m);
    /* heads must divide hidden_dim */
    cgnn_err err = {0};
    make_types(&ty, &w, 0);
    model_config cfg = {.kind = MODEL_HGT, .num_layers = L, .hidden_dim = 4, .out_dim = 3, .num_heads = 3, .types = &ty};
    ASSERT_EQ(model_init(&m, &cfg, &w.mb.cap, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "divisible by num_heads");
    /* more tensors than model.h's table holds: an input error, not an abort */
    ty.num_node_types = MINIBATCH_MAX_NODE_TYPES, ty.num_edge_types = MINIBATCH_MAX_EDGE_TYPES;
    cfg.num_heads = 2;
    ASSERT_EQ(model_init(&m, &cfg, &w.mb.cap, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "tensors, more than the 512 cgnn supports");
    world_free(&w);
    /* a node type without incoming edge types is kept (GiGL's HGTConv), not refused */
    world_build_on(&w, 5, EDST_NO_IN);
    ASSERT_EQ(make_model_h(&m, &w, &ty, MODEL_HGT, 0, 2, 0.0f, 0), 0);
    model_free(&m);
    world_free(&w);
}

TEST(hgt_determinism) {
    world w;
    world_build(&w, 23);
    model a, b;
    model_types ta, tb;
    ASSERT_EQ(make_model_h(&a, &w, &ta, MODEL_HGT, 0, 2, 0.3f, 0), 0);
    ASSERT_EQ(make_model_h(&b, &w, &tb, MODEL_HGT, 0, 2, 0.3f, 0), 0);
    ASSERT(!memcmp(a.params, b.params, (size_t)a.num_params * sizeof(float)));
    const int64_t S = w.mb.typed->num_nodes[1][0];
    const float *oa = model_forward(&a, &w.mb, 1, 3), *ob = model_forward(&b, &w.mb, 1, 3);
    ASSERT(!memcmp(oa, ob, (size_t)(S * 3) * sizeof(float)));
    float *keep = cgnn_calloc((size_t)(S * 3 + 1), sizeof(float));
    memcpy(keep, oa, (size_t)(S * 3) * sizeof(float));
    ASSERT(memcmp(keep, model_forward(&a, &w.mb, 1, 4), (size_t)(S * 3) * sizeof(float)) != 0); /* another mask */
    ASSERT(memcmp(keep, model_forward(&a, &w.mb, 0, 3), (size_t)(S * 3) * sizeof(float)) != 0); /* no dropout */
    free(keep);
    world_free(&w);
    model_free(&a);
    model_free(&b);
}

/* ---- HGT attention kernels == _ref ---------------------------------------------------------- */

/* max_k |a - b| / (|b| + max|b|) (as tests/test_nn_grad.c) */
static double rel_diff(const float *a, const float *b, int64_t n) {
    double scale = 0.0, err = 0.0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs((double)b[k]));
    for (int64_t k = 0; k < n; k++) {
        const double d = fabs((double)a[k] - (double)b[k]) / (fabs((double)b[k]) + scale + 1e-30);
        if (d > err || d != d) err = d;
    }
    return err;
}

#define REF_TOL 1e-5
#define ASSERT_REF(what, a, b, n)                                                              \
    do {                                                                                       \
        double e_ = rel_diff(a, b, n);                                                         \
        fprintf(stderr, "  %-30s rel diff %.3g\n", what, e_);                                  \
        ASSERT(e_ <= REF_TOL);                                                                 \
    } while (0)

/* A random sub-block: Nd dst rows with 0..max_deg in-edges each (repeats allowed), with its
 * transpose. */
static void rand_block(sampler_block *b, int64_t Nd, int64_t Ns, int max_deg, uint64_t seed) {
    rng r;
    rng_init(&r, seed);
    b->num_dst = Nd, b->num_src = Ns;
    b->indptr = cgnn_calloc((size_t)(Nd + 1), sizeof(int64_t));
    b->indices = cgnn_calloc((size_t)(Nd * max_deg + 1), sizeof(int32_t));
    int64_t E = 0;
    for (int64_t i = 0; i < Nd; i++) {
        const int64_t deg = max_deg ? (int64_t)rng_below(&r, (uint64_t)max_deg + 1) : 0;
        for (int64_t k = 0; k < deg; k++) b->indices[E++] = (int32_t)rng_below(&r, (uint64_t)Ns);
        b->indptr[i + 1] = E;
    }
    b->num_edges = E;
    b->t_indptr = cgnn_calloc((size_t)(Ns + 1), sizeof(int64_t));
    b->t_indices = cgnn_calloc((size_t)(E + 1), sizeof(int32_t));
    b->t_eid = cgnn_calloc((size_t)(E + 1), sizeof(int32_t));
    minibatch_block_transpose(b);
}

static void free_block(sampler_block *b) {
    free(b->indptr), free(b->indices), free(b->t_indptr), free(b->t_indices), free(b->t_eid);
}

TEST(ref_hgt_attention) {
    enum { R = 3 };
    const int64_t H = 3, D = 5, HD = 15, Nd = 600, ldq = 3 * HD;
    const int64_t Ns[R] = {2500, 900, 40};
    const int deg[R] = {12, 5, 0}; /* the third relation has no edges */
    sampler_block b[R];
    hgt_rel r1[R], r2[R];
    float *kt[R], *vt[R], *p[R], *al1[R], *al2[R], *work[R], *dkt1[R], *dkt2[R], *dvt1[R], *dvt2[R], *dp1[R], *dp2[R];
    for (int r = 0; r < R; r++) {
        rand_block(&b[r], Nd, Ns[r], deg[r], 100 + (uint64_t)r);
        const int64_t E = b[r].num_edges;
        kt[r] = cgnn_calloc((size_t)(Ns[r] * HD), sizeof(float)), vt[r] = cgnn_calloc((size_t)(Ns[r] * HD), sizeof(float));
        p[r] = cgnn_calloc((size_t)H, sizeof(float));
        al1[r] = cgnn_calloc((size_t)(E * H + 1), sizeof(float)), al2[r] = cgnn_calloc((size_t)(E * H + 1), sizeof(float));
        work[r] = cgnn_calloc((size_t)(2 * E * H + 1), sizeof(float));
        dkt1[r] = cgnn_calloc((size_t)(Ns[r] * HD), sizeof(float)), dkt2[r] = cgnn_calloc((size_t)(Ns[r] * HD), sizeof(float));
        dvt1[r] = cgnn_calloc((size_t)(Ns[r] * HD), sizeof(float)), dvt2[r] = cgnn_calloc((size_t)(Ns[r] * HD), sizeof(float));
        dp1[r] = cgnn_calloc((size_t)H, sizeof(float)), dp2[r] = cgnn_calloc((size_t)H, sizeof(float));
        fill_uniform(kt[r], Ns[r] * HD, -2, 2, 10 + (uint64_t)r), fill_uniform(vt[r], Ns[r] * HD, -1, 1, 20 + (uint64_t)r);
        fill_uniform(p[r], H, 0.5f, 1.5f, 30 + (uint64_t)r);
        r1[r] = (hgt_rel){.b = &b[r], .kt = kt[r], .vt = vt[r], .p = p[r], .alpha = al1[r], .work = work[r]};
        r2[r] = r1[r];
        r2[r].alpha = al2[r];
    }
    float *q = cgnn_calloc((size_t)(Nd * ldq), sizeof(float)), *g = cgnn_calloc((size_t)(Nd * HD), sizeof(float));
    float *o1 = cgnn_calloc((size_t)(Nd * HD), sizeof(float)), *o2 = cgnn_calloc((size_t)(Nd * HD), sizeof(float));
    float *dq1 = cgnn_calloc((size_t)(Nd * ldq), sizeof(float)), *dq2 = cgnn_calloc((size_t)(Nd * ldq), sizeof(float));
    fill_uniform(q, Nd * ldq, -2, 2, 40), fill_uniform(g, Nd * HD, -1, 1, 41);
    hgt_attention_forward(o1, r1, R, q + HD, ldq, Nd, H, D);
    hgt_attention_forward_ref(o2, r2, R, q + HD, ldq, Nd, H, D);
    ASSERT_REF("hgt attention forward", o1, o2, Nd * HD);
    for (int r = 0; r < 2; r++) ASSERT_REF("hgt alpha", al1[r], al2[r], b[r].num_edges * H);
    /* the weights of each (row, head) sum to 1 across both relations; rows without edges give 0 */
    int64_t empty = 0;
    for (int64_t i = 0; i < Nd; i++) {
        const int64_t n = b[0].indptr[i + 1] - b[0].indptr[i] + b[1].indptr[i + 1] - b[1].indptr[i];
        for (int64_t h = 0; h < H; h++) {
            double sum = 0.0;
            for (int r = 0; r < 2; r++)
                for (int64_t k = b[r].indptr[i]; k < b[r].indptr[i + 1]; k++) sum += al1[r][k * H + h];
            ASSERT(n == 0 ? sum == 0.0 : fabs(sum - 1.0) < 1e-5);
        }
        if (n == 0) {
            empty++;
            for (int64_t c = 0; c < HD; c++) ASSERT(o1[i * HD + c] == 0.0f);
        }
    }
    ASSERT(empty > 0);
    hgt_attention_backward_dst(dq1 + HD, ldq, r1, R, g, q + HD, ldq, Nd, H, D);
    for (int r = 0; r < R; r++) hgt_attention_backward_src(dkt1[r], dvt1[r], dp1[r], &r1[r], g, q + HD, ldq, H, D);
    hgt_attention_backward_ref(dq2 + HD, ldq, dkt2, dvt2, dp2, r2, R, g, q + HD, ldq, Nd, H, D);
    ASSERT_REF("hgt backward dq", dq1, dq2, Nd * ldq);
    for (int r = 0; r < R; r++) {
        ASSERT_REF("hgt backward dk'", dkt1[r], dkt2[r], Ns[r] * HD);
        ASSERT_REF("hgt backward dv'", dvt1[r], dvt2[r], Ns[r] * HD);
        ASSERT_REF("hgt backward dp", dp1[r], dp2[r], H);
    }
    double gmax = 0.0;
    for (int64_t k = 0; k < Nd * ldq; k++) gmax = fmax(gmax, fabs((double)dq1[k]));
    ASSERT(gmax > 1e-3);
    for (int64_t k = 0; k < Nd * ldq; k++) /* only the q columns */
        if (k % ldq < HD || k % ldq >= 2 * HD) ASSERT(dq1[k] == 0.0f);
    for (int r = 0; r < R; r++) {
        free_block(&b[r]);
        free(kt[r]), free(vt[r]), free(p[r]), free(al1[r]), free(al2[r]), free(work[r]);
        free(dkt1[r]), free(dkt2[r]), free(dvt1[r]), free(dvt2[r]), free(dp1[r]), free(dp2[r]);
    }
    free(q), free(g), free(o1), free(o2), free(dq1), free(dq2);
}

int main(void) {
    RUN(grad_hetero_sage);
    RUN(grad_hetero_sage_dropout_l2);
    RUN(grad_rgcn);
    RUN(grad_rgcn_bases);
    RUN(grad_hgt);
    RUN(grad_hgt_one_head_dropout_l2);
    RUN(grad_hgt_no_incoming_type);
    RUN(keys_and_shapes);
    RUN(determinism);
    RUN(hgt_keys_and_shapes);
    RUN(hgt_determinism);
    RUN(ref_hgt_attention);
    return test_summary();
}
