/* test_nn_grad.c — the GNN kernels and models: finite-difference gradient checks of every
 * op's backward and of whole models (all kinds, 2 layers, with and without dropout, w.r.t.
 * every parameter tensor and the input features); every fast kernel against its _ref on random
 * blocks; bitwise determinism run to run and across OpenMP thread counts; parameter layout,
 * init and config validation. */
#include <omp.h>

#include "nn/model.h"
#include "nn/ops.h"
#include "test.h"
#include "test_fd.h"
#include "util/rng.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static float *falloc(int64_t n) { return cgnn_calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

/* A random L-layer minibatch: nodes[h] = nodes after h hops (nodes[0] = seeds), up to `fan`
 * in-edges per dst (some dst get none; dst 1 of every block gets a self-edge; duplicates may
 * occur), random features, one item per seed plus one repeating seed 0. */
static void make_batch(minibatch *mb, int L, const int64_t *nodes, int fan, int64_t feat_dim, int64_t classes,
                       uint64_t seed) {
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = nodes[0] + 1;
    for (int h = 0; h <= L; h++) cap.max_nodes[h] = nodes[h];
    for (int h = 0; h < L; h++) cap.max_edges[h] = nodes[h] * (fan + 1);
    cap.feat_dim = feat_dim;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(mb, &cap, &err) == 0);
    rng r;
    rng_init(&r, seed);
    for (int h = 0; h < L; h++) {
        sampler_block *b = &mb->blocks[L - 1 - h];
        b->num_dst = nodes[h];
        b->num_src = nodes[h + 1];
        int64_t e = 0;
        b->indptr[0] = 0;
        for (int64_t i = 0; i < b->num_dst; i++) {
            int64_t deg = (int64_t)rng_below(&r, (uint64_t)fan + 1);
            if (i == 0 && deg == 0) deg = 1;
            for (int64_t k = 0; k < deg; k++)
                b->indices[e++] = (i == 1 && k == 0) ? 1 : (int32_t)rng_below(&r, (uint64_t)b->num_src);
            b->indptr[i + 1] = e;
        }
        b->num_edges = e;
        mb->num_sampled_edges += e;
    }
    mb->num_seeds = nodes[0];
    mb->num_input_nodes = nodes[L];
    mb->num_items = nodes[0] + 1;
    for (int64_t i = 0; i < mb->num_items; i++) {
        mb->item_local[i] = (int32_t)(i < nodes[0] ? nodes[0] - 1 - i : 0);
        mb->labels[i] = (int64_t)rng_below(&r, (uint64_t)classes);
        mb->items[i] = i;
    }
    for (int64_t k = 0; k < nodes[L]; k++) mb->input_nodes[k] = k;
    fill_uniform(mb->features, nodes[L] * feat_dim, -1.0f, 1.0f, rng_key(seed, 1));
    minibatch_build_transpose(mb);
}

/* ---- op-level gradient checks ----------------------------------------------------------- */

typedef struct lin_ctx {
    float *out, *x, *w, *b, *wout;
    int64_t N, I, O;
} lin_ctx;

static double lin_loss(void *p) {
    lin_ctx *c = p;
    ops_linear_forward(c->out, c->x, c->w, c->b, c->N, c->I, c->O, 0);
    return dot_loss(c->out, c->wout, c->N * c->O);
}

TEST(grad_linear) {
    lin_ctx c = {.N = 5, .I = 4, .O = 3};
    c.out = falloc(15), c.x = falloc(20), c.w = falloc(12), c.b = falloc(3), c.wout = falloc(15);
    fill_uniform(c.x, 20, -1, 1, 1), fill_uniform(c.w, 12, -1, 1, 2), fill_uniform(c.b, 3, -1, 1, 3);
    fill_uniform(c.wout, 15, -1, 1, 4);
    float *dx = falloc(20), *dw = falloc(12), *db = falloc(3);
    ops_linear_backward(dx, dw, db, c.wout, c.x, c.w, c.N, c.I, c.O);
    fd_stats s1 = fd_check(c.x, dx, 20, lin_loss, &c, 1e-2f, 0);
    fd_stats s2 = fd_check(c.w, dw, 12, lin_loss, &c, 1e-2f, 0);
    fd_stats s3 = fd_check(c.b, db, 3, lin_loss, &c, 1e-2f, 0);
    free(c.out), free(c.x), free(c.w), free(c.b), free(c.wout), free(dx), free(dw), free(db);
    ASSERT_FD("linear d/dinp", s1);
    ASSERT_FD("linear d/dweight", s2);
    ASSERT_FD("linear d/dbias", s3);
}

typedef struct agg_ctx {
    const sampler_block *b;
    float *out, *x, *wout, *sn, *dn;
    int64_t D;
    int gcn;
} agg_ctx;

static double agg_loss(void *p) {
    agg_ctx *c = p;
    if (c->gcn) ops_gcn_agg_forward(c->out, c->x, c->sn, c->dn, c->b, c->D);
    else ops_mean_agg_forward(c->out, c->x, c->b, c->D);
    return dot_loss(c->out, c->wout, c->b->num_dst * c->D);
}

static void check_agg(int gcn) {
    minibatch mb;
    const int64_t nodes[2] = {6, 15};
    make_batch(&mb, 1, nodes, 4, 3, 2, 11);
    const sampler_block *b = &mb.blocks[0];
    agg_ctx c = {.b = b, .D = 3, .gcn = gcn};
    c.out = falloc(6 * 3), c.x = mb.features, c.wout = falloc(6 * 3), c.sn = falloc(15), c.dn = falloc(6);
    fill_uniform(c.wout, 18, -1, 1, 5);
    ops_gcn_norm(c.sn, c.dn, b, NULL);
    float *dx = falloc(15 * 3);
    if (gcn) ops_gcn_agg_backward(dx, c.wout, c.sn, c.dn, b, 3);
    else ops_mean_agg_backward(dx, c.wout, b, 3);
    fd_stats st = fd_check(c.x, dx, 15 * 3, agg_loss, &c, 1e-2f, 0);
    free(c.out), free(c.wout), free(c.sn), free(c.dn), free(dx);
    minibatch_free(&mb);
    ASSERT_FD(gcn ? "gcn agg d/dinp" : "mean agg d/dinp", st);
}

TEST(grad_mean_agg) { check_agg(0); }
TEST(grad_gcn_agg) { check_agg(1); }

typedef struct gat_ctx {
    const sampler_block *b;
    float *out, *alpha, *as, *ad, *z, *att_s, *att_d, *bias, *wout;
    int64_t H, C;
    int concat;
} gat_ctx;

static double gat_loss(void *p) {
    gat_ctx *c = p;
    ops_gat_forward(c->out, c->alpha, c->as, c->ad, c->z, c->att_s, c->att_d, c->bias, c->b, c->H, c->C, c->concat);
    return dot_loss(c->out, c->wout, c->b->num_dst * (c->concat ? c->H * c->C : c->C));
}

static void check_gat(int concat) {
    minibatch mb;
    const int64_t nodes[2] = {6, 15}, H = 2, C = 3, HC = 6, OW = concat ? HC : C;
    make_batch(&mb, 1, nodes, 4, HC, 2, 12);
    const sampler_block *b = &mb.blocks[0];
    gat_ctx c = {.b = b, .H = H, .C = C, .concat = concat};
    c.z = mb.features;
    c.out = falloc(6 * OW), c.alpha = falloc((b->num_edges + 6) * H), c.as = falloc(15 * H), c.ad = falloc(6 * H);
    c.att_s = falloc(HC), c.att_d = falloc(HC), c.bias = falloc(OW), c.wout = falloc(6 * OW);
    fill_uniform(c.z, 15 * HC, -1.5f, 1.5f, 20);
    fill_uniform(c.att_s, HC, -1, 1, 21), fill_uniform(c.att_d, HC, -1, 1, 22);
    fill_uniform(c.bias, OW, -1, 1, 23), fill_uniform(c.wout, 6 * OW, -1, 1, 24);
    gat_loss(&c);
    float *dz = falloc(15 * HC), *das = falloc(HC), *dad = falloc(HC), *db = falloc(OW);
    float *work = falloc(ops_gat_backward_work(15, 6, b->num_edges, H));
    ops_gat_backward(dz, das, dad, db, work, c.wout, c.z, c.alpha, c.as, c.ad, c.att_s, c.att_d, b, H, C, concat);
    fd_stats s1 = fd_check(c.z, dz, 15 * HC, gat_loss, &c, 1e-2f, 1);
    fd_stats s2 = fd_check(c.att_s, das, HC, gat_loss, &c, 1e-2f, 1);
    fd_stats s3 = fd_check(c.att_d, dad, HC, gat_loss, &c, 1e-2f, 1);
    fd_stats s4 = fd_check(c.bias, db, OW, gat_loss, &c, 1e-2f, 0);
    free(c.out), free(c.alpha), free(c.as), free(c.ad), free(c.att_s), free(c.att_d), free(c.bias), free(c.wout);
    free(dz), free(das), free(dad), free(db), free(work);
    minibatch_free(&mb);
    ASSERT_FD(concat ? "gat(concat) d/dz" : "gat(mean) d/dz", s1);
    ASSERT_FD("gat d/datt_src", s2);
    ASSERT_FD("gat d/datt_dst", s3);
    ASSERT_FD("gat d/dbias", s4);
}

TEST(grad_gat_concat) { check_gat(1); }
TEST(grad_gat_mean) { check_gat(0); }

typedef struct ew_ctx {
    float *out, *x, *wout;
    int64_t N, D;
    int op; /* 0 relu, 1 dropout, 2 l2norm, 3 gelu */
} ew_ctx;

static double ew_loss(void *p) {
    ew_ctx *c = p;
    const int64_t n = c->N * c->D;
    if (c->op == 0) ops_relu_forward(c->out, c->x, n);
    else if (c->op == 1) ops_dropout_forward(c->out, c->x, n, NULL, 1, 0.4f, 77, 1);
    else if (c->op == 3) ops_gelu_forward(c->out, c->x, n);
    else ops_l2norm_forward(c->out, c->x, c->N, c->D);
    return dot_loss(c->out, c->wout, n);
}

static void check_elementwise(int op) {
    ew_ctx c = {.N = 4, .D = 5, .op = op};
    c.out = falloc(20), c.x = falloc(20), c.wout = falloc(20);
    fill_away_from_zero(c.x, 20, 0.1f, 1.0f, 30 + (uint64_t)op);
    if (op == 3) fill_uniform(c.x, 20, -3.0f, 3.0f, 33); /* smooth: any point, both signs */
    fill_uniform(c.wout, 20, -1, 1, 40);
    float *dx = falloc(20);
    if (op == 0) ops_relu_backward(dx, c.wout, c.x, 20);
    else if (op == 1) ops_dropout_backward(dx, c.wout, 20, NULL, 1, 0.4f, 77, 1);
    else if (op == 3) ops_gelu_backward(dx, c.wout, c.x, 20);
    else ops_l2norm_backward(dx, c.wout, c.x, 4, 5);
    fd_stats st = fd_check(c.x, dx, 20, ew_loss, &c, 1e-2f, 0);
    free(c.out), free(c.x), free(c.wout), free(dx);
    ASSERT_FD(op == 0 ? "relu d/dinp" : op == 1 ? "dropout d/dinp" : op == 3 ? "gelu d/dinp" : "l2norm d/dinp", st);
}

TEST(grad_relu) { check_elementwise(0); }
TEST(grad_dropout) { check_elementwise(1); }
TEST(grad_l2norm) { check_elementwise(2); }
TEST(grad_gelu) { check_elementwise(3); }

typedef struct ce_ctx {
    float *logits, *dl;
    const int32_t *rows;
    const int64_t *labels;
    int64_t n, S, C;
} ce_ctx;

static double ce_loss(void *p) {
    ce_ctx *c = p;
    return model_softmax_ce(c->dl, c->logits, c->rows, c->labels, c->n, c->S, c->C, NULL);
}

TEST(grad_softmax_ce) {
    const int32_t rows[5] = {3, 0, 2, 0, 1}; /* row 0 twice, row 4 unreferenced */
    const int64_t labels[5] = {1, 2, 0, 0, 3};
    ce_ctx c = {.rows = rows, .labels = labels, .n = 5, .S = 5, .C = 4};
    c.logits = falloc(20), c.dl = falloc(20);
    fill_uniform(c.logits, 20, -3, 3, 50);
    c.logits[1 * 4 + 3] = 100.0f; /* large logits must not overflow (max subtraction) */
    float *g = falloc(20);
    int64_t correct = -1;
    double loss = model_softmax_ce(g, c.logits, rows, labels, 5, 5, 4, &correct);
    /* reference loss by hand, in double */
    double want = 0.0;
    int64_t want_correct = 0;
    for (int it = 0; it < 5; it++) {
        const float *x = c.logits + rows[it] * 4;
        double mx = -INFINITY, s = 0.0;
        int arg = 0;
        for (int k = 0; k < 4; k++) {
            if (x[k] > mx) mx = x[k], arg = k;
        }
        for (int k = 0; k < 4; k++) s += exp(x[k] - mx);
        want += (mx + log(s) - x[labels[it]]) / 5.0;
        want_correct += arg == labels[it];
    }
    fd_stats st = fd_check(c.logits, g, 20, ce_loss, &c, 1e-2f, 0);
    int unref_zero = 1;
    for (int k = 0; k < 4; k++) unref_zero &= g[4 * 4 + k] == 0.0f;
    free(c.logits), free(c.dl), free(g);
    ASSERT(isfinite(loss));
    ASSERT_NEAR(loss, want, 1e-9);
    ASSERT_EQ(correct, want_correct);
    ASSERT(unref_zero);
    ASSERT_FD("softmax CE d/dlogits", st);
    int64_t corr2 = 0;
    float l0[2] = {1, 1}, d0[2];
    const int32_t r0[1] = {0};
    const int64_t y0[1] = {1};
    model_softmax_ce(d0, l0, r0, y0, 1, 1, 2, &corr2);
    ASSERT_EQ(corr2, 0); /* tie: argmax is the lowest index */
    ASSERT_EQ(model_softmax_ce(d0, l0, r0, y0, 0, 1, 2, &corr2) == 0.0, 1);
}

/* ---- whole models ----------------------------------------------------------------------- */

typedef struct model_ctx {
    model *m;
    minibatch *mb;
    float *dl;
    int training;
} model_ctx;

static const uint64_t KEY = 0x5eed;

static double model_loss(void *p) {
    model_ctx *c = p;
    const float *out = model_forward(c->m, c->mb, c->training, KEY);
    return model_softmax_ce(c->dl, out, c->mb->item_local, c->mb->labels, c->mb->num_items, c->mb->num_seeds,
                            c->m->cfg.out_dim, NULL);
}

static int model_make(model *m, model_kind kind, int L, const minibatch *mb, int64_t hidden, int64_t out,
                      float dropout, int l2, uint64_t seed) {
    model_config cfg = {.kind = kind, .num_layers = L, .in_dim = mb->feat_dim, .hidden_dim = hidden,
                        .out_dim = out, .num_heads = 2, .dropout = dropout, .l2_normalize_output = l2};
    cgnn_err err;
    return model_init(m, &cfg, &mb->cap, seed, &err);
}

static void check_model_grads(model_kind kind, float dropout, int l2) {
    minibatch mb;
    const int64_t nodes[3] = {3, 7, 14};
    make_batch(&mb, 2, nodes, 3, 4, 3, 100 + (uint64_t)kind);
    model m;
    ASSERT_EQ(model_make(&m, kind, 2, &mb, 4, 3, dropout, l2, 7), 0);
    /* larger params than the init so every term matters (GCN/GAT biases start at 0) */
    fill_uniform(m.params, m.num_params, -1.0f, 1.0f, 200 + (uint64_t)kind);
    model_ctx c = {.m = &m, .mb = &mb, .dl = falloc(3 * 3), .training = dropout > 0};
    model_loss(&c);
    float *dlogits = falloc(3 * 3), *dx = falloc(14 * 4);
    memcpy(dlogits, c.dl, 9 * sizeof(float));
    model_zero_grad(&m);
    model_backward_input(&m, &mb, dlogits, dx);
    char name[160];
    snprintf(name, sizeof name, "%s%s%s", model_kind_name(kind), dropout > 0 ? " dropout" : "", l2 ? " l2" : "");
    fprintf(stderr, " %s:\n", name);
    int ok = 1;
    for (int t = 0; t < m.num_tensors && ok; t++) {
        const model_tensor *mt = &m.tensors[t];
        fd_stats st = fd_check(m.params + mt->offset, m.grads + mt->offset, mt->numel, model_loss, &c, 1e-2f, 1);
        fd_print(mt->name, &st);
        float gmax = 0.0f; /* a tensor whose gradient is 0 would pass without testing anything */
        for (int64_t k = 0; k < mt->numel; k++) gmax = fmaxf(gmax, fabsf(m.grads[mt->offset + k]));
        ok = st.max_err <= FD_TOL && st.skipped * 10 <= mt->numel && gmax > 1e-4f;
        if (gmax <= 1e-4f) fprintf(stderr, "  %s: gradient is (near) zero: %g\n", mt->name, (double)gmax);
    }
    fd_stats sx = fd_check(mb.features, dx, 14 * 4, model_loss, &c, 1e-2f, 1);
    /* model_backward (no input gradient) gives the same parameter gradients */
    float *g1 = falloc(m.num_params);
    memcpy(g1, m.grads, (size_t)m.num_params * sizeof(float));
    model_zero_grad(&m);
    model_loss(&c);
    model_backward(&m, &mb, dlogits);
    const int same = !memcmp(g1, m.grads, (size_t)m.num_params * sizeof(float));
    free(g1), free(c.dl), free(dlogits), free(dx);
    model_free(&m);
    minibatch_free(&mb);
    ASSERT(ok);
    ASSERT_FD("input features", sx);
    ASSERT(same);
}

/* num_layers 0: the identity on the seeds' rows (learnable embeddings alone), optionally
 * L2-normalised; no parameters; the input gradient by finite differences. */
static void check_identity_model(int l2) {
    minibatch mb;
    const int64_t nodes[1] = {5};
    make_batch(&mb, 0, nodes, 0, 4, 4, 300 + (uint64_t)l2);
    model m;
    ASSERT_EQ(model_make(&m, MODEL_GRAPHSAGE, 0, &mb, 16, 4, 0.0f, l2, 7), 0);
    ASSERT_EQ(m.num_params, 0);
    ASSERT_EQ(m.num_tensors, 0);
    model_ctx c = {.m = &m, .mb = &mb, .dl = falloc(5 * 4), .training = 1};
    const float *out = model_forward(&m, &mb, 1, KEY);
    float *want = falloc(5 * 4);
    if (l2) ops_l2norm_forward_ref(want, mb.features, 5, 4);
    else memcpy(want, mb.features, 5 * 4 * sizeof(float));
    int same_out = 1;
    for (int k = 0; k < 20; k++) same_out &= fabsf(out[k] - want[k]) <= 1e-6f;
    model_loss(&c);
    float *dlogits = falloc(5 * 4), *dx = falloc(5 * 4);
    memcpy(dlogits, c.dl, 20 * sizeof(float));
    model_backward_input(&m, &mb, dlogits, dx);
    int pass_through = 1; /* without the normalisation d(input) is d(output) */
    for (int k = 0; k < 20 && !l2; k++) pass_through &= dx[k] == dlogits[k];
    fd_stats sx = fd_check(mb.features, dx, 5 * 4, model_loss, &c, 1e-2f, 0);
    model_backward(&m, &mb, dlogits); /* no parameters, no input gradient: nothing to do */
    free(c.dl), free(dlogits), free(dx), free(want);
    model_free(&m);
    minibatch_free(&mb);
    ASSERT(same_out && pass_through);
    ASSERT_FD(l2 ? "identity l2: input" : "identity: input", sx);
}

TEST(grad_model_identity) { check_identity_model(0); }
TEST(grad_model_identity_l2) { check_identity_model(1); }

TEST(grad_model_sage) { check_model_grads(MODEL_GRAPHSAGE, 0.0f, 0); }
TEST(grad_model_sage_dropout) { check_model_grads(MODEL_GRAPHSAGE, 0.3f, 0); }
TEST(grad_model_sage_l2) { check_model_grads(MODEL_GRAPHSAGE, 0.0f, 1); }
TEST(grad_model_gcn) { check_model_grads(MODEL_GCN, 0.0f, 0); }
TEST(grad_model_gcn_dropout) { check_model_grads(MODEL_GCN, 0.3f, 0); }
TEST(grad_model_gat) { check_model_grads(MODEL_GAT, 0.0f, 0); }
TEST(grad_model_gat_dropout) { check_model_grads(MODEL_GAT, 0.3f, 1); }

/* ---- fast kernels == _ref --------------------------------------------------------------- */

/* max_k |a - b| / (|b| + max|b|): allclose(rtol = atol / max|b| = REF_TOL) — relative, with
 * elements near zero (cancellation in float sums) measured against the tensor's scale. */
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

/* Big enough that the parallel paths run (> OPS_PAR_MIN work) with uneven degrees. */
static const int64_t BIG_NODES[2] = {600, 2500};

TEST(ref_linear) {
    const int64_t N = 300, I = 37, O = 29;
    float *x = falloc(N * I), *w = falloc(O * I), *b = falloc(O), *o1 = falloc(N * O), *o2 = falloc(N * O);
    float *g = falloc(N * O), *dx1 = falloc(N * I), *dx2 = falloc(N * I), *dw1 = falloc(O * I), *dw2 = falloc(O * I);
    float *db1 = falloc(O), *db2 = falloc(O);
    fill_uniform(x, N * I, -1, 1, 1), fill_uniform(w, O * I, -1, 1, 2), fill_uniform(b, O, -1, 1, 3);
    fill_uniform(g, N * O, -1, 1, 4);
    ops_linear_forward(o1, x, w, b, N, I, O, 0);
    ops_linear_forward_ref(o2, x, w, b, N, I, O, 0);
    ASSERT_REF("linear forward", o1, o2, N * O);
    ops_linear_forward(o1, x, w, NULL, N, I, O, 1);
    ops_linear_forward_ref(o2, x, w, NULL, N, I, O, 1);
    ASSERT_REF("linear forward (accumulate)", o1, o2, N * O);
    ops_linear_forward(o1, x, w, b, N, I, O, 1);
    ops_linear_forward_ref(o2, x, w, b, N, I, O, 1);
    ASSERT_REF("linear forward (acc + bias)", o1, o2, N * O);
    fill_uniform(dx1, N * I, -1, 1, 5), memcpy(dx2, dx1, (size_t)(N * I) * sizeof(float));
    ops_linear_backward(dx1, dw1, db1, g, x, w, N, I, O);
    ops_linear_backward_ref(dx2, dw2, db2, g, x, w, N, I, O);
    ASSERT_REF("linear backward dinp (+=)", dx1, dx2, N * I);
    ASSERT_REF("linear backward dweight", dw1, dw2, O * I);
    ASSERT_REF("linear backward dbias", db1, db2, O);
    free(x), free(w), free(b), free(o1), free(o2), free(g), free(dx1), free(dx2), free(dw1), free(dw2);
    free(db1), free(db2);
}

TEST(ref_aggregations) {
    minibatch mb;
    const int64_t D = 19, Nd = BIG_NODES[0], Ns = BIG_NODES[1];
    make_batch(&mb, 1, BIG_NODES, 15, D, 2, 3);
    const sampler_block *b = &mb.blocks[0];
    float *o1 = falloc(Nd * D), *o2 = falloc(Nd * D), *g = falloc(Nd * D), *d1 = falloc(Ns * D), *d2 = falloc(Ns * D);
    float *sn1 = falloc(Ns), *sn2 = falloc(Ns), *dn1 = falloc(Nd), *dn2 = falloc(Nd);
    fill_uniform(g, Nd * D, -1, 1, 9);
    ops_mean_agg_forward(o1, mb.features, b, D);
    ops_mean_agg_forward_ref(o2, mb.features, b, D);
    ASSERT_REF("mean agg forward", o1, o2, Nd * D);
    ops_mean_agg_backward(d1, g, b, D);
    ops_mean_agg_backward_ref(d2, g, b, D);
    ASSERT_REF("mean agg backward", d1, d2, Ns * D);
    ops_gcn_norm(sn1, dn1, b, NULL);
    ops_gcn_norm_ref(sn2, dn2, b, NULL);
    ASSERT_REF("gcn norm (src)", sn1, sn2, Ns);
    ASSERT_REF("gcn norm (dst)", dn1, dn2, Nd);
    {
        /* the inner block of a 2-layer batch reads source degrees from the outer block */
        minibatch mb2;
        const int64_t nodes3[3] = {40, 200, 900};
        make_batch(&mb2, 2, nodes3, 6, 4, 2, 5);
        const sampler_block *inner = &mb2.blocks[1], *outer = &mb2.blocks[0];
        float *s1 = falloc(inner->num_src), *s2 = falloc(inner->num_src), *t1 = falloc(inner->num_dst),
              *t2 = falloc(inner->num_dst);
        ops_gcn_norm(s1, t1, inner, outer);
        ops_gcn_norm_ref(s2, t2, inner, outer);
        ASSERT_REF("gcn norm 2-layer (src)", s1, s2, inner->num_src);
        ASSERT_REF("gcn norm 2-layer (dst)", t1, t2, inner->num_dst);
        for (int64_t j = inner->num_dst; j < inner->num_src; j++) { /* a source-only node's degree is its outer in-degree */
            int64_t deg = 1;
            for (int64_t e = outer->indptr[j]; e < outer->indptr[j + 1]; e++) deg += outer->indices[e] != j;
            ASSERT(fabsf(s1[j] - 1.0f / sqrtf((float)deg)) < 1e-6f);
        }
        free(s1), free(s2), free(t1), free(t2);
        minibatch_free(&mb2);
    }
    ops_gcn_agg_forward(o1, mb.features, sn1, dn1, b, D);
    ops_gcn_agg_forward_ref(o2, mb.features, sn1, dn1, b, D);
    ASSERT_REF("gcn agg forward", o1, o2, Nd * D);
    memset(d1, 0, (size_t)(Ns * D) * sizeof(float)), memset(d2, 0, (size_t)(Ns * D) * sizeof(float));
    ops_gcn_agg_backward(d1, g, sn1, dn1, b, D);
    ops_gcn_agg_backward_ref(d2, g, sn1, dn1, b, D);
    ASSERT_REF("gcn agg backward", d1, d2, Ns * D);
    free(o1), free(o2), free(g), free(d1), free(d2), free(sn1), free(sn2), free(dn1), free(dn2);
    minibatch_free(&mb);
}

static void check_gat_ref(int concat) {
    minibatch mb;
    const int64_t H = 3, C = 5, HC = 15, OW = concat ? HC : C, Nd = BIG_NODES[0], Ns = BIG_NODES[1];
    make_batch(&mb, 1, BIG_NODES, 15, HC, 2, 4);
    const sampler_block *b = &mb.blocks[0];
    const int64_t E = b->num_edges;
    float *att_s = falloc(HC), *att_d = falloc(HC), *bias = falloc(OW), *g = falloc(Nd * OW);
    float *o1 = falloc(Nd * OW), *o2 = falloc(Nd * OW), *al1 = falloc((E + Nd) * H), *al2 = falloc((E + Nd) * H);
    float *as1 = falloc(Ns * H), *as2 = falloc(Ns * H), *ad1 = falloc(Nd * H), *ad2 = falloc(Nd * H);
    float *dz1 = falloc(Ns * HC), *dz2 = falloc(Ns * HC), *das1 = falloc(HC), *das2 = falloc(HC);
    float *dad1 = falloc(HC), *dad2 = falloc(HC), *db1 = falloc(OW), *db2 = falloc(OW);
    float *work = falloc(ops_gat_backward_work(Ns, Nd, E, H));
    fill_uniform(att_s, HC, -1, 1, 1), fill_uniform(att_d, HC, -1, 1, 2), fill_uniform(bias, OW, -1, 1, 3);
    fill_uniform(g, Nd * OW, -1, 1, 4);
    ops_gat_forward(o1, al1, as1, ad1, mb.features, att_s, att_d, bias, b, H, C, concat);
    ops_gat_forward_ref(o2, al2, as2, ad2, mb.features, att_s, att_d, bias, b, H, C, concat);
    ASSERT_REF(concat ? "gat(concat) forward" : "gat(mean) forward", o1, o2, Nd * OW);
    ASSERT_REF("gat alpha", al1, al2, (E + Nd) * H);
    ASSERT_REF("gat a_src", as1, as2, Ns * H);
    ASSERT_REF("gat a_dst", ad1, ad2, Nd * H);
    ops_gat_backward(dz1, das1, dad1, db1, work, g, mb.features, al1, as1, ad1, att_s, att_d, b, H, C, concat);
    ops_gat_backward_ref(dz2, das2, dad2, db2, work, g, mb.features, al1, as1, ad1, att_s, att_d, b, H, C, concat);
    ASSERT_REF("gat backward dz", dz1, dz2, Ns * HC);
    ASSERT_REF("gat backward datt_src", das1, das2, HC);
    ASSERT_REF("gat backward datt_dst", dad1, dad2, HC);
    ASSERT_REF("gat backward dbias", db1, db2, OW);
    free(att_s), free(att_d), free(bias), free(g), free(o1), free(o2), free(al1), free(al2), free(as1), free(as2);
    free(ad1), free(ad2), free(dz1), free(dz2), free(das1), free(das2), free(dad1), free(dad2), free(db1), free(db2);
    free(work);
    minibatch_free(&mb);
}

TEST(ref_gat_concat) { check_gat_ref(1); }
TEST(ref_gat_mean) { check_gat_ref(0); }

/* Dropout keyed by node rows, big enough for the parallel path, rows not multiples of the
 * fast kernels' runs; and without row ids over a length that is not a multiple of their chunk:
 * the fast kernels equal the _ref bit for bit, with 1 and 2 threads. */
TEST(ref_dropout_rows) {
    const int64_t rows = 1500, cols = 37, n = rows * cols, flat = 3 * 4096 + 123;
    int64_t *ids = cgnn_malloc((size_t)rows * sizeof(int64_t));
    rng r;
    rng_init(&r, 8);
    for (int64_t i = 0; i < rows; i++) ids[i] = (int64_t)rng_below(&r, 1u << 30); /* large ids: e > 2^32 */
    const int64_t m = n > flat ? n : flat;
    float *x = falloc(m), *g = falloc(m), *o1 = falloc(m), *o2 = falloc(m), *d1 = falloc(m), *d2 = falloc(m);
    fill_uniform(x, m, -2, 2, 11), fill_uniform(g, m, -1, 1, 12);
    const int saved = omp_get_max_threads();
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        const size_t nb = (size_t)n * sizeof(float), fb = (size_t)flat * sizeof(float);
        ops_dropout_forward(o1, x, n, ids, cols, 0.5f, 123, 3), ops_dropout_forward_ref(o2, x, n, ids, cols, 0.5f, 123, 3);
        ASSERT(memcmp(o1, o2, nb) == 0);
        memset(d1, 0, nb), memset(d2, 0, nb);
        ops_dropout_backward(d1, g, n, ids, cols, 0.5f, 123, 3), ops_dropout_backward_ref(d2, g, n, ids, cols, 0.5f, 123, 3);
        ASSERT(memcmp(d1, d2, nb) == 0);
        ops_dropout_forward(o1, x, flat, NULL, 1, 0.2f, 7, 0), ops_dropout_forward_ref(o2, x, flat, NULL, 1, 0.2f, 7, 0);
        ASSERT(memcmp(o1, o2, fb) == 0);
        memset(d1, 0, fb), memset(d2, 0, fb);
        ops_dropout_backward(d1, g, flat, NULL, 1, 0.2f, 7, 0), ops_dropout_backward_ref(d2, g, flat, NULL, 1, 0.2f, 7, 0);
        ASSERT(memcmp(d1, d2, fb) == 0);
    }
    omp_set_num_threads(saved);
    free(ids), free(x), free(g), free(o1), free(o2), free(d1), free(d2);
}

TEST(ref_elementwise) {
    const int64_t N = 700, D = 33, n = N * D;
    float *x = falloc(n), *g = falloc(n), *o1 = falloc(n), *o2 = falloc(n), *d1 = falloc(n), *d2 = falloc(n);
    fill_uniform(x, n, -2, 2, 1), fill_uniform(g, n, -1, 1, 2);
    for (int64_t r = 0; r < D; r++) x[5 * D + r] = 0.0f; /* a zero row: the eps clamp */
    ops_relu_forward(o1, x, n), ops_relu_forward_ref(o2, x, n);
    ASSERT_REF("relu forward", o1, o2, n);
    ops_relu_backward(d1, g, x, n), ops_relu_backward_ref(d2, g, x, n);
    ASSERT_REF("relu backward", d1, d2, n);
    ops_gelu_forward(o1, x, n), ops_gelu_forward_ref(o2, x, n);
    ASSERT_REF("gelu forward", o1, o2, n);
    { /* torch.nn.functional.gelu values (exact erf form) */
        const float xs[4] = {-2.0f, -0.5f, 0.0f, 1.5f}, want[4] = {-0.04550026f, -0.15426877f, 0.0f, 1.39978920f};
        float got[4];
        ops_gelu_forward_ref(got, xs, 4);
        for (int k = 0; k < 4; k++) ASSERT(fabsf(got[k] - want[k]) <= 1e-6f);
    }
    memset(d1, 0, (size_t)n * sizeof(float)), memset(d2, 0, (size_t)n * sizeof(float));
    ops_gelu_backward(d1, g, x, n), ops_gelu_backward_ref(d2, g, x, n);
    ASSERT_REF("gelu backward", d1, d2, n);
    ops_dropout_forward(o1, x, n, NULL, 1, 0.35f, 99, 2), ops_dropout_forward_ref(o2, x, n, NULL, 1, 0.35f, 99, 2);
    ASSERT_REF("dropout forward", o1, o2, n);
    int64_t kept = 0;
    for (int64_t k = 0; k < n; k++) kept += ops_dropout_keep(99, 2, k, 0.35f);
    const double frac = (double)kept / (double)n;
    fprintf(stderr, "  dropout p=0.35 kept %.4f\n", frac);
    ASSERT(fabs(frac - 0.65) < 0.01);
    ops_dropout_backward(d1, g, n, NULL, 1, 0.35f, 99, 2), ops_dropout_backward_ref(d2, g, n, NULL, 1, 0.35f, 99, 2);
    ASSERT_REF("dropout backward", d1, d2, n);

    {
        /* keyed by node: the same node gets the same mask in any row position */
        const int64_t rows = 50, cols = 7;
        int64_t ids[50], rev[50];
        for (int64_t r = 0; r < rows; r++) ids[r] = 1000 + 3 * r, rev[r] = 1000 + 3 * (rows - 1 - r);
        float *xa = falloc(rows * cols), *ya = falloc(rows * cols), *yb = falloc(rows * cols), *yr = falloc(rows * cols);
        fill_uniform(xa, rows * cols, 0.5f, 1.0f, 3);
        ops_dropout_forward(ya, xa, rows * cols, ids, cols, 0.5f, 5, 1);
        ops_dropout_forward_ref(yr, xa, rows * cols, ids, cols, 0.5f, 5, 1);
        ASSERT(memcmp(ya, yr, (size_t)(rows * cols) * sizeof(float)) == 0);
        ops_dropout_forward(yb, xa, rows * cols, rev, cols, 0.5f, 5, 1); /* rows in reverse order */
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c2 = 0; c2 < cols; c2++)
                ASSERT((ya[r * cols + c2] == 0.0f) == (yb[(rows - 1 - r) * cols + c2] == 0.0f));
        free(xa), free(ya), free(yb), free(yr);
    }    ops_l2norm_forward(o1, x, N, D), ops_l2norm_forward_ref(o2, x, N, D);
    ASSERT_REF("l2norm forward", o1, o2, n);
    ops_l2norm_backward(d1, g, x, N, D), ops_l2norm_backward_ref(d2, g, x, N, D);
    ASSERT_REF("l2norm backward", d1, d2, n);
    /* dropout masks of different layers / keys are unrelated; p = 0 keeps everything */
    int64_t same = 0, all = 0;
    for (int64_t k = 0; k < 10000; k++) {
        same += ops_dropout_keep(99, 2, k, 0.5f) == ops_dropout_keep(99, 3, k, 0.5f);
        all += ops_dropout_keep(99, 2, k, 0.0f);
    }
    ASSERT(same > 4700 && same < 5300);
    ASSERT_EQ(all, 10000);
    free(x), free(g), free(o1), free(o2), free(d1), free(d2);
}

/* ---- determinism ------------------------------------------------------------------------ */

typedef struct run_out {
    float *out, *grads, *dx;
    int64_t n_out, n_params, n_dx;
} run_out;

/* One training step's forward + backward (with the input gradient) into fresh buffers. */
static run_out run_step(model *m, const minibatch *mb) {
    run_out r;
    r.n_out = mb->num_seeds * m->cfg.out_dim;
    r.n_params = m->num_params;
    r.n_dx = mb->num_input_nodes * mb->feat_dim;
    r.out = falloc(r.n_out), r.grads = falloc(r.n_params), r.dx = falloc(r.n_dx);
    float *dl = falloc(r.n_out);
    model_zero_grad(m);
    const float *out = model_forward(m, mb, 1, KEY);
    memcpy(r.out, out, (size_t)r.n_out * sizeof(float));
    model_softmax_ce(dl, out, mb->item_local, mb->labels, mb->num_items, mb->num_seeds, m->cfg.out_dim, NULL);
    model_backward_input(m, mb, dl, r.dx);
    memcpy(r.grads, m->grads, (size_t)r.n_params * sizeof(float));
    free(dl);
    return r;
}

static int run_same(const run_out *a, const run_out *b) {
    return !memcmp(a->out, b->out, (size_t)a->n_out * sizeof(float)) &&
           !memcmp(a->grads, b->grads, (size_t)a->n_params * sizeof(float)) &&
           !memcmp(a->dx, b->dx, (size_t)a->n_dx * sizeof(float));
}

static void run_free(run_out *r) { free(r->out), free(r->grads), free(r->dx); }

/* Largest |x - y| / max(|y|, 1e-3) over the three outputs. */
static double run_max_rel(const run_out *a, const run_out *b) {
    double m = 0.0;
    const float *xs[3] = {a->out, a->grads, a->dx}, *ys[3] = {b->out, b->grads, b->dx};
    const int64_t ns[3] = {a->n_out, a->n_params, a->n_dx};
    for (int t = 0; t < 3; t++)
        for (int64_t k = 0; k < ns[t]; k++) {
            double d = fabs((double)xs[t][k] - ys[t][k]) / fmax(fabs((double)ys[t][k]), 1e-3);
            if (d > m) m = d;
        }
    return m;
}

static void check_determinism(model_kind kind) {
    minibatch mb;
    const int64_t nodes[3] = {150, 600, 2500};
    make_batch(&mb, 2, nodes, 12, 24, 7, 77);
    model m;
    ASSERT_EQ(model_make(&m, kind, 2, &mb, 32, 7, 0.4f, 0, 5), 0);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    run_out a = run_step(&m, &mb), b = run_step(&m, &mb);
    omp_set_num_threads(1);
    run_out c = run_step(&m, &mb);
    omp_set_num_threads(saved);
    /* bitwise reproducible for a fixed thread count; across compute thread counts OpenBLAS
     * (OpenMP build, sharing cgnn's thread count) may round GEMMs differently, so 1 vs 2
     * threads must agree to float precision, not bit for bit */
    const int twice = run_same(&a, &b);
    const double thread_diff = run_max_rel(&a, &c);
    const int threads = thread_diff < 1e-3;
    double gsum = 0.0;
    for (int64_t k = 0; k < a.n_params; k++) gsum += fabs(a.grads[k]);
    run_free(&a), run_free(&b), run_free(&c);
    model_free(&m);
    minibatch_free(&mb);
    fprintf(stderr, "  %s: twice %s, 1 vs 2 threads max rel diff %.2e\n", model_kind_name(kind),
            twice ? "identical" : "DIFFER", thread_diff);
    ASSERT(gsum > 0.0);
    ASSERT(twice);
    ASSERT(threads);
}

TEST(determinism_sage) { check_determinism(MODEL_GRAPHSAGE); }
TEST(determinism_gcn) { check_determinism(MODEL_GCN); }
TEST(determinism_gat) { check_determinism(MODEL_GAT); }

/* ---- layout, init, config --------------------------------------------------------------- */

TEST(layout_and_init) {
    minibatch mb;
    const int64_t nodes[3] = {3, 7, 14};
    make_batch(&mb, 2, nodes, 3, 10, 3, 1);
    static const char *const want_sage[] = {"convs.0.lin_l.weight", "convs.0.lin_l.bias", "convs.0.lin_r.weight",
                                            "convs.1.lin_l.weight", "convs.1.lin_l.bias", "convs.1.lin_r.weight"};
    static const char *const want_gcn[] = {"convs.0.bias", "convs.0.lin.weight", "convs.1.bias", "convs.1.lin.weight"};
    static const char *const want_gat[] = {"convs.0.att_src", "convs.0.att_dst", "convs.0.bias", "convs.0.lin.weight",
                                           "convs.1.att_src", "convs.1.att_dst", "convs.1.bias", "convs.1.lin.weight"};
    model m, m2;
    ASSERT_EQ(model_make(&m, MODEL_GRAPHSAGE, 2, &mb, 8, 3, 0.5f, 0, 42), 0);
    ASSERT_EQ(m.num_tensors, 6);
    for (int t = 0; t < 6; t++) ASSERT(!strcmp(m.tensors[t].name, want_sage[t]));
    ASSERT_EQ(m.num_params, 8 * 10 * 2 + 8 + 3 * 8 * 2 + 3);
    const model_tensor *t = model_find_tensor(&m, "convs.1.lin_r.weight");
    ASSERT(t && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 8);
    ASSERT(model_find_tensor(&m, "convs.2.lin_l.weight") == NULL);
    /* U(±1/sqrt(I)) for every SAGE tensor; the same seed gives the same parameters */
    for (int k = 0; k < m.num_tensors; k++) {
        const model_tensor *mt = &m.tensors[k];
        const double bound = 1.0 / sqrt(k < 3 ? 10.0 : 8.0);
        double mx = 0.0;
        for (int64_t j = 0; j < mt->numel; j++) mx = fmax(mx, fabs(m.params[mt->offset + j]));
        ASSERT(mx <= bound && mx > 0.5 * bound);
    }
    ASSERT_EQ(model_make(&m2, MODEL_GRAPHSAGE, 2, &mb, 8, 3, 0.5f, 0, 42), 0);
    ASSERT(!memcmp(m.params, m2.params, (size_t)m.num_params * sizeof(float)));
    model_free(&m2);
    ASSERT_EQ(model_make(&m2, MODEL_GRAPHSAGE, 2, &mb, 8, 3, 0.5f, 0, 43), 0);
    ASSERT(memcmp(m.params, m2.params, (size_t)m.num_params * sizeof(float)) != 0);
    model_free(&m2);
    model_free(&m);

    ASSERT_EQ(model_make(&m, MODEL_GCN, 2, &mb, 8, 3, 0.5f, 0, 42), 0);
    ASSERT_EQ(m.num_tensors, 4);
    for (int k = 0; k < 4; k++) ASSERT(!strcmp(m.tensors[k].name, want_gcn[k]));
    const model_tensor *gb = model_find_tensor(&m, "convs.0.bias"), *gw = model_find_tensor(&m, "convs.0.lin.weight");
    for (int64_t j = 0; j < gb->numel; j++) ASSERT(m.params[gb->offset + j] == 0.0f);
    for (int64_t j = 0; j < gw->numel; j++) ASSERT(fabsf(m.params[gw->offset + j]) <= sqrtf(6.0f / 18.0f));
    model_free(&m);

    ASSERT_EQ(model_make(&m, MODEL_GAT, 2, &mb, 8, 3, 0.5f, 0, 42), 0); /* 2 heads */
    ASSERT_EQ(m.num_tensors, 8);
    for (int k = 0; k < 8; k++) ASSERT(!strcmp(m.tensors[k].name, want_gat[k]));
    const model_tensor *a0 = &m.tensors[0], *b0 = &m.tensors[2], *w0 = &m.tensors[3];
    const model_tensor *a1 = &m.tensors[4], *b1 = &m.tensors[6], *w1 = &m.tensors[7];
    ASSERT(a0->ndim == 3 && a0->shape[0] == 1 && a0->shape[1] == 2 && a0->shape[2] == 4);
    ASSERT(b0->numel == 8 && w0->shape[0] == 8 && w0->shape[1] == 10);
    ASSERT(a1->shape[1] == 2 && a1->shape[2] == 3 && b1->numel == 3 && w1->shape[0] == 6 && w1->shape[1] == 8);
    model_free(&m);
    model_free(NULL);
    minibatch_free(&mb);
}

TEST(config_errors) {
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = 2;
    cap.max_nodes[0] = 4, cap.max_nodes[1] = 8, cap.max_nodes[2] = 16, cap.max_edges[0] = 8, cap.max_edges[1] = 16;
    cap.feat_dim = 5;
    const model_config good = {.kind = MODEL_GAT, .num_layers = 2, .in_dim = 5, .hidden_dim = 8, .out_dim = 3,
                               .num_heads = 4, .dropout = 0.5f};
    struct {
        model_config c;
        const char *msg;
    } cases[] = {
        {good, "hidden_dim: 250 is not divisible by num_heads 4"},
        {good, "num_layers: 9"},
        {good, "num_layers: 3 does not match"},
        {good, "in_dim: 0"},
        {good, "hidden_dim: -1"},
        {good, "out_dim: 0"},
        {good, "num_heads: 0"},
        {good, "dropout: 1"},
        {good, "dropout: -0.1"},
        {good, "model kind: 7"},
    };
    cases[0].c.hidden_dim = 250;
    cases[1].c.num_layers = 9;
    cases[2].c.num_layers = 3;
    cases[3].c.in_dim = 0;
    cases[4].c.hidden_dim = -1;
    cases[5].c.out_dim = 0;
    cases[6].c.num_heads = 0;
    cases[7].c.dropout = 1.0f;
    cases[8].c.dropout = -0.1f;
    cases[9].c.kind = (model_kind)7;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        model m;
        cgnn_err err;
        err_clear(&err);
        ASSERT_EQ(model_init(&m, &cases[k].c, &cap, 1, &err), -1);
        ASSERT_EQ(err.code, CGNN_ERR_INPUT);
        ASSERT_STR_CONTAINS(err.msg, cases[k].msg);
        model_free(&m); /* safe after a failed init */
    }
    /* SAGE ignores num_heads; a good config initialises */
    model_config sage = good;
    sage.kind = MODEL_GRAPHSAGE;
    sage.num_heads = 0;
    sage.hidden_dim = 250;
    model m;
    cgnn_err err;
    ASSERT_EQ(model_init(&m, &sage, &cap, 1, &err), 0);
    model_free(&m);
}

TEST(kind_names) {
    model_kind k;
    ASSERT_EQ(model_kind_parse("GraphSAGE", &k), 0); ASSERT_EQ(k, MODEL_GRAPHSAGE);
    ASSERT_EQ(model_kind_parse("torch_geometric.nn.GraphSAGE", &k), 0); ASSERT_EQ(k, MODEL_GRAPHSAGE);
    ASSERT_EQ(model_kind_parse("SAGE", &k), 0); ASSERT_EQ(k, MODEL_GRAPHSAGE);
    ASSERT_EQ(model_kind_parse("torch_geometric.nn.models.GCN", &k), 0); ASSERT_EQ(k, MODEL_GCN);
    ASSERT_EQ(model_kind_parse("GAT", &k), 0); ASSERT_EQ(k, MODEL_GAT);
    ASSERT_EQ(model_kind_parse("gigl.src.common.models.pyg.heterogeneous.HGT", &k), 0); ASSERT_EQ(k, MODEL_HGT);
    ASSERT_EQ(model_kind_parse("HGT", &k), 0); ASSERT_EQ(k, MODEL_HGT);
    ASSERT_EQ(model_kind_parse("HGTConv", &k), -1);
    ASSERT_EQ(model_kind_parse("GIN", &k), -1);
    ASSERT_EQ(model_kind_parse("", &k), -1);
    ASSERT(!strcmp(model_kind_name(MODEL_HGT), "HGT"));
    ASSERT(!strcmp(model_kind_name(MODEL_GRAPHSAGE), "GraphSAGE"));
    ASSERT(!strcmp(model_kind_name(MODEL_GCN), "GCN"));
    ASSERT(!strcmp(model_kind_name(MODEL_GAT), "GAT"));
}

int main(void) {
    RUN(grad_linear);
    RUN(grad_mean_agg);
    RUN(grad_gcn_agg);
    RUN(grad_gat_concat);
    RUN(grad_gat_mean);
    RUN(grad_relu);
    RUN(grad_dropout);
    RUN(grad_l2norm);
    RUN(grad_gelu);
    RUN(grad_softmax_ce);
    RUN(grad_model_identity);
    RUN(grad_model_identity_l2);
    RUN(grad_model_sage);
    RUN(grad_model_sage_dropout);
    RUN(grad_model_sage_l2);
    RUN(grad_model_gcn);
    RUN(grad_model_gcn_dropout);
    RUN(grad_model_gat);
    RUN(grad_model_gat_dropout);
    RUN(ref_linear);
    RUN(ref_aggregations);
    RUN(ref_gat_concat);
    RUN(ref_gat_mean);
    RUN(ref_elementwise);
    RUN(ref_dropout_rows);
    RUN(determinism_sage);
    RUN(determinism_gcn);
    RUN(determinism_gat);
    RUN(layout_and_init);
    RUN(config_errors);
    RUN(kind_names);
    return test_summary();
}
