/* test_hetero_model.c — the typed models (HeteroSAGE, RGCN with and without bases): finite-
 * difference checks of the gradients w.r.t. every parameter tensor and every node type's input
 * rows (with and without dropout, with an L2-normalised output), key names and shapes, and
 * bitwise determinism, on a batch drawn by the typed sampler from a small typed graph. */
#include <string.h>

#include "graph/typed_graph.h"
#include "nn/model.h"
#include "sample/typed_sampler.h"
#include "test.h"
#include "test_fd.h"

enum { T = 3, K = 4, L = 2 };
static const int64_t NUM[T] = {30, 40, 12};
static const int ESRC[K] = {0, 1, 2, 1}, EDST[K] = {1, 0, 1, 2}; /* a->b, b->a, c->b, b->c */
static const int64_t FEAT[T] = {5, 3, 4};
static const char *const NTNAME[T] = {"author", "paper", "venue"};
static const char *const REL[K] = {"writes", "written_by", "publishes", "published_in"};

typedef struct world {
    csc_graph csc[K];
    int32_t *src[K], *dst[K];
    typed_graph g;
    minibatch mb;
    minibatch_typed_capacity tcap;
} world;

static void world_build(world *w, uint64_t seed) {
    memset(w, 0, sizeof *w);
    rng r;
    rng_init(&r, seed);
    const csc_graph *views[K];
    for (int e = 0; e < K; e++) {
        const int64_t ns = NUM[ESRC[e]], nd = NUM[EDST[e]];
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
    typed_graph_init(&w->g, T, NUM, K, ESRC, EDST, views);
    typed_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = L;
    for (int h = 0; h < L; h++)
        for (int e = 0; e < K; e++) cfg.fanouts[h][e] = 2;
    int64_t max_seeds[T] = {0, 6, 0};
    typed_sampler_capacity(&w->g, &cfg, max_seeds, FEAT, &w->tcap);
    minibatch_capacity cap = {.num_layers = L, .max_items = 6};
    cgnn_err err = {0};
    CGNN_CHECK(minibatch_alloc_typed(&w->mb, &cap, &w->tcap, ESRC, EDST, &err) == 0);
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
        snprintf(ty->edge_type[e][2], MODEL_TYPE_NAME_MAX, "%s", NTNAME[EDST[e]]);
        ty->etype_src[e] = ESRC[e];
        ty->etype_dst[e] = EDST[e];
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

static int make_model(model *m, const world *w, model_types *ty, model_kind kind, int bases, float dropout, int l2) {
    make_types(ty, w, bases);
    model_config cfg = {.kind = kind, .num_layers = L, .hidden_dim = 4, .out_dim = 3, .dropout = dropout,
                        .l2_normalize_output = l2, .types = ty};
    cgnn_err err = {0};
    int rc = model_init(m, &cfg, &w->mb.cap, 9, &err);
    if (rc) fprintf(stderr, "model_init: %s\n", err.msg);
    return rc;
}

static void check_grads(model_kind kind, int bases, float dropout, int l2) {
    world w;
    world_build(&w, 11 + (uint64_t)kind);
    model m;
    model_types ty;
    ASSERT_EQ(make_model(&m, &w, &ty, kind, bases, dropout, l2), 0);
    fill_uniform(m.params, m.num_params, -1.0f, 1.0f, 400 + (uint64_t)kind); /* a seed at which no ReLU is dead for a whole type */
    const int64_t S = w.mb.typed->num_nodes[1][0];
    hctx c = {.m = &m, .mb = &w.mb, .dl = cgnn_calloc((size_t)(S * 3 + 1), sizeof(float)), .training = dropout > 0};
    hloss(&c);
    float *dout = cgnn_calloc((size_t)(S * 3 + 1), sizeof(float));
    memcpy(dout, c.dl, (size_t)(S * 3) * sizeof(float));
    model_zero_grad(&m);
    const float *douts[T] = {NULL, dout, NULL};
    model_typed_backward(&m, &w.mb, douts);
    fprintf(stderr, " %s bases %d dropout %g l2 %d:\n", model_kind_name(kind), bases, (double)dropout, l2);
    int ok = 1;
    for (int t = 0; t < m.num_tensors && ok; t++) {
        const model_tensor *mt = &m.tensors[t];
        fd_stats st = fd_check(m.params + mt->offset, m.grads + mt->offset, mt->numel, hloss, &c, 1e-2f, 1);
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
        ok = st.max_err <= FD_TOL && st.skipped * 10 <= mt->numel && (unused ? gmax == 0.0f : gmax > 1e-5f);
        if (!unused && gmax <= 1e-5f) fprintf(stderr, "  %s: gradient is (near) zero\n", mt->name);
    }
    ASSERT(ok);
    for (int t = 0; t < T; t++) {
        float *dx = cgnn_calloc((size_t)(NUM[t] * FEAT[t] + 1), sizeof(float));
        const int64_t n = w.mb.typed->num_nodes[t][L] * FEAT[t];
        memcpy(dx, model_typed_input_grad(&m, t), (size_t)n * sizeof(float));
        fd_stats sx = fd_check(w.mb.typed->features[t], dx, n, hloss, &c, 1e-2f, 1);
        free(dx);
        ASSERT_FD(NTNAME[t], sx);
    }
    free(c.dl);
    free(dout);
    model_free(&m);
    world_free(&w);
}

TEST(grad_hetero_sage) { check_grads(MODEL_HETERO_SAGE, 0, 0.0f, 0); }
TEST(grad_hetero_sage_dropout_l2) { check_grads(MODEL_HETERO_SAGE, 0, 0.3f, 1); }
TEST(grad_rgcn) { check_grads(MODEL_RGCN, 0, 0.0f, 0); }
TEST(grad_rgcn_bases) { check_grads(MODEL_RGCN, 2, 0.3f, 0); }

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

int main(void) {
    RUN(grad_hetero_sage);
    RUN(grad_hetero_sage_dropout_l2);
    RUN(grad_rgcn);
    RUN(grad_rgcn_bases);
    RUN(keys_and_shapes);
    RUN(determinism);
    return test_summary();
}
