/* test_nn_fixtures.c — the models against PyTorch: logits, loss, every parameter gradient and
 * the input-feature gradient of GraphSAGE, GCN, GAT (and GraphSAGE with L2-normalised output)
 * on a fixed 2-block minibatch, plus a 10-step Adam loss trajectory, all from the .npy files
 * scripts/fixtures/make_nn_fixtures.py wrote under tests/fixtures/nn (no PyTorch needed here).
 * Prints the max abs / rel error of every tensor. */
#include "io/npy.h"
#include "nn/model.h"
#include "optim/optim.h"
#include "test.h"

#define FIX_SUBDIR "nn"
#include "test_fixture.h"


/* The fixture minibatch, built the way the sampler lays batches out. */
typedef struct fixture {
    int64_t in_dim, hidden, out_dim, heads;
    minibatch mb;
} fixture;

static int fixture_load(fixture *f) {
    npy_array dims, sizes, ip[2], ix[2], feat, rows, labels;
    if (fix_open(&dims, "dims.npy", NPY_DTYPE_INT64) || fix_open(&sizes, "block_sizes.npy", NPY_DTYPE_INT64) ||
        fix_open(&ip[0], "block0_indptr.npy", NPY_DTYPE_INT64) || fix_open(&ix[0], "block0_indices.npy", NPY_DTYPE_INT32) ||
        fix_open(&ip[1], "block1_indptr.npy", NPY_DTYPE_INT64) || fix_open(&ix[1], "block1_indices.npy", NPY_DTYPE_INT32) ||
        fix_open(&feat, "features.npy", NPY_DTYPE_FLOAT32) || fix_open(&rows, "item_rows.npy", NPY_DTYPE_INT32) ||
        fix_open(&labels, "labels.npy", NPY_DTYPE_INT64))
        return -1;
    const int64_t *d = dims.data, *sz = sizes.data;
    f->in_dim = d[0], f->hidden = d[1], f->out_dim = d[2], f->heads = d[3];
    CGNN_CHECK(d[4] == 2 && sizes.shape[0] == 2);
    /* capacity: hop h produces block L-1-h; max_nodes[h] = nodes after h hops */
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = 2;
    cap.max_items = rows.count;
    cap.max_nodes[0] = sz[1 * 2 + 0];              /* seeds = block 1's dst */
    cap.max_nodes[1] = sz[0 * 2 + 0];              /* block 0's dst = block 1's src */
    cap.max_nodes[2] = sz[0 * 2 + 1];              /* block 0's src = the input nodes */
    cap.max_edges[0] = ix[1].count, cap.max_edges[1] = ix[0].count;
    cap.feat_dim = f->in_dim;
    CGNN_CHECK(sz[1 * 2 + 1] == sz[0 * 2 + 0]);
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(&f->mb, &cap, &err) == 0);
    minibatch *mb = &f->mb;
    for (int l = 0; l < 2; l++) {
        sampler_block *b = &mb->blocks[l];
        b->num_dst = sz[l * 2 + 0];
        b->num_src = sz[l * 2 + 1];
        b->num_edges = ix[l].count;
        CGNN_CHECK(ip[l].count == b->num_dst + 1);
        memcpy(b->indptr, ip[l].data, (size_t)ip[l].count * sizeof(int64_t));
        memcpy(b->indices, ix[l].data, (size_t)ix[l].count * sizeof(int32_t));
        mb->num_sampled_edges += b->num_edges;
    }
    mb->num_seeds = mb->blocks[1].num_dst;
    mb->num_input_nodes = mb->blocks[0].num_src;
    for (int64_t k = 0; k < mb->num_input_nodes; k++) mb->input_nodes[k] = k;
    CGNN_CHECK(feat.count == mb->num_input_nodes * f->in_dim);
    memcpy(mb->features, feat.data, (size_t)feat.count * sizeof(float));
    mb->num_items = rows.count;
    for (int64_t i = 0; i < rows.count; i++) {
        mb->items[i] = i;
        mb->item_local[i] = ((const int32_t *)rows.data)[i];
        mb->labels[i] = ((const int64_t *)labels.data)[i];
    }
    minibatch_build_transpose(mb);
    npy_close(&dims), npy_close(&sizes), npy_close(&feat), npy_close(&rows), npy_close(&labels);
    for (int l = 0; l < 2; l++) npy_close(&ip[l]), npy_close(&ix[l]);
    return 0;
}

/* Initialises m as fixture model `dir` and copies its weights in by state_dict key, checking
 * keys.txt's order and every shape. Returns 0 or -1 (printed). */
static int model_from_fixture(model *m, const fixture *f, model_kind kind, int l2, const char *dir) {
    model_config cfg = {.kind = kind, .num_layers = 2, .in_dim = f->in_dim, .hidden_dim = f->hidden,
                        .out_dim = f->out_dim, .num_heads = (int)f->heads, .dropout = 0.0f,
                        .l2_normalize_output = l2};
    cgnn_err err;
    if (model_init(m, &cfg, &f->mb.cap, 1, &err) != 0) {
        fprintf(stderr, "model_init: %s\n", err.msg);
        return -1;
    }
    return fix_load_params(m, dir);
}

static void check_model(model_kind kind, int l2, const char *dir) {
    fixture f;
    if (fixture_load(&f) != 0) TEST_FAIL_("cannot load the fixtures under %s", fix_path(""));
    model m;
    if (model_from_fixture(&m, &f, kind, l2, dir) != 0) {
        model_free(&m);
        minibatch_free(&f.mb);
        TEST_FAIL_("cannot load model %s", dir);
    }
    minibatch *mb = &f.mb;
    const int64_t S = mb->num_seeds, C = f.out_dim;
    float *dlogits = calloc((size_t)(S * C), sizeof(float));
    float *dx = calloc((size_t)(mb->num_input_nodes * f.in_dim), sizeof(float));
    model_zero_grad(&m);
    const float *logits = model_forward(&m, mb, 0, 0);
    const double loss = model_softmax_ce(dlogits, logits, mb->item_local, mb->labels, mb->num_items, S, C, NULL);
    model_backward_input(&m, mb, dlogits, dx);

    char name[256];
    npy_array want_loss;
    int ok = fix_open(&want_loss, (snprintf(name, sizeof name, "%s/loss.npy", dir), name), NPY_DTYPE_FLOAT64) == 0;
    double wl = ok ? ((const double *)want_loss.data)[0] : NAN;
    if (ok) npy_close(&want_loss);
    fprintf(stderr, " %s (%s):\n", model_kind_name(kind), dir);
    ok = ok && fix_scalar("loss", loss, wl, FIX_TOL_F32);
    /* two groups (test_fixture.h): the forward output, and every gradient of the backward */
    double fwd_scale = 0.0, grad_scale = 0.0;
    snprintf(name, sizeof name, "%s/logits.npy", dir);
    ok &= fix_group_add(&fwd_scale, name) == 0;
    ok &= fix_compare("logits", logits, S * C, name, fwd_scale, FIX_TOL_F32, NULL);
    for (int t = 0; t < m.num_tensors; t++) {
        snprintf(name, sizeof name, "%s/grad.%s.npy", dir, m.tensors[t].name);
        ok &= fix_group_add(&grad_scale, name) == 0;
    }
    snprintf(name, sizeof name, "%s/dfeatures.npy", dir);
    ok &= fix_group_add(&grad_scale, name) == 0;
    for (int t = 0; t < m.num_tensors; t++) {
        const model_tensor *mt = &m.tensors[t];
        snprintf(name, sizeof name, "%s/grad.%s.npy", dir, mt->name);
        char label[128];
        snprintf(label, sizeof label, "d %s", mt->name);
        ok &= fix_compare(label, m.grads + mt->offset, mt->numel, name, grad_scale, FIX_TOL_F32, NULL);
    }
    snprintf(name, sizeof name, "%s/dfeatures.npy", dir);
    ok &= fix_compare("d features", dx, mb->num_input_nodes * f.in_dim, name, grad_scale, FIX_TOL_F32, NULL);
    free(dlogits), free(dx);
    model_free(&m);
    minibatch_free(&f.mb);
    ASSERT(ok);
}

/* The comparison rule itself (test_fixture.h) can fail: a tensor tiny everywhere passes on noise
 * far below the group's atol, but a real error (1e-3 on a value of 0.5), a tiny tensor off by
 * more than the group's atol, and a NaN all fail. */
TEST(rule_fails_on_real_errors) {
    const float want[4] = {0.5f, -0.25f, 1e-9f, 0.0f};
    float got[4] = {0.5f, -0.25f, 1e-9f + 4e-12f, 0.0f};
    const double scale = fix_max_abs(want, 4);
    ASSERT(fix_allclose("noise of a cancelling sum", got, want, 4, scale, FIX_TOL_F32, NULL));
    got[0] = 0.5005f;
    ASSERT(!fix_allclose("a wrong value", got, want, 4, scale, FIX_TOL_F32, NULL));
    got[0] = 0.5f, got[2] = 1e-5f;
    ASSERT(!fix_allclose("a tiny value off by 2 atol", got, want, 4, scale, FIX_TOL_F32, NULL));
    got[2] = 1e-9f, got[3] = NAN;
    ASSERT(!fix_allclose("a NaN", got, want, 4, scale, FIX_TOL_F32, NULL));
    ASSERT(!fix_scalar("a loss off by 2e-4", 1.0002, 1.0, FIX_TOL_F32));
    ASSERT(fix_scalar("a loss off by 5e-5", 1.00005, 1.0, FIX_TOL_F32));
}

TEST(fixture_sage) { check_model(MODEL_GRAPHSAGE, 0, "sage"); }
TEST(fixture_gcn) { check_model(MODEL_GCN, 0, "gcn"); }
TEST(fixture_gat) { check_model(MODEL_GAT, 0, "gat"); }
TEST(fixture_sage_l2) { check_model(MODEL_GRAPHSAGE, 1, "sage_l2"); }

/* 10 Adam steps (torch.optim.Adam(lr=0.01) defaults) through optim_step; the loss before each
 * step against torch's. */
TEST(fixture_sage_adam) {
    fixture f;
    if (fixture_load(&f) != 0) TEST_FAIL_("cannot load the fixtures under %s", fix_path(""));
    model m;
    if (model_from_fixture(&m, &f, MODEL_GRAPHSAGE, 0, "sage") != 0) {
        model_free(&m);
        minibatch_free(&f.mb);
        TEST_FAIL_("cannot load model sage");
    }
    npy_array want;
    if (fix_open(&want, "sage/adam_losses.npy", NPY_DTYPE_FLOAT64) != 0) {
        model_free(&m);
        minibatch_free(&f.mb);
        TEST_FAIL_("no sage/adam_losses.npy");
    }
    optim_config oc;
    optim_default_config(&oc, OPTIM_ADAM, 0.01);
    optim opt;
    cgnn_err err;
    CGNN_CHECK(optim_init(&opt, &oc, m.num_params, &err) == 0);
    minibatch *mb = &f.mb;
    float *dlogits = calloc((size_t)(mb->num_seeds * f.out_dim), sizeof(float));
    double max_err = 0.0, traj_scale = 0.0;
    for (int64_t s = 0; s < want.count; s++) traj_scale = fmax(traj_scale, fabs(((const double *)want.data)[s]));
    fprintf(stderr, "  step  cgnn loss     torch loss    err/tol\n");
    for (int64_t s = 0; s < want.count; s++) {
        model_zero_grad(&m);
        const float *logits = model_forward(&m, mb, 1, (uint64_t)s);
        const double loss = model_softmax_ce(dlogits, logits, mb->item_local, mb->labels, mb->num_items,
                                             mb->num_seeds, f.out_dim, NULL);
        model_backward(&m, mb, dlogits);
        optim_step(&opt, m.params, m.grads, 0.01);
        const double w = ((const double *)want.data)[s];
        /* the trajectory is one group (test_fixture.h): atol from its largest loss */
        const double e = fabs(loss - w) / (FIX_TOL_F32.atol_frac * traj_scale + FIX_TOL_F32.rtol * fabs(w));
        fprintf(stderr, "  %4lld  %.9f  %.9f  %.3g\n", (long long)s, loss, w, e);
        if (e > max_err || e != e) max_err = e;
    }
    const int64_t steps = want.count;
    npy_close(&want);
    optim_free(&opt);
    free(dlogits);
    model_free(&m);
    minibatch_free(&f.mb);
    ASSERT_EQ(steps, 10);
    ASSERT(max_err <= 1.0); /* NaN fails */
}

int main(void) {
    RUN(rule_fails_on_real_errors);
    RUN(fixture_sage);
    RUN(fixture_gcn);
    RUN(fixture_gat);
    RUN(fixture_sage_l2);
    RUN(fixture_sage_adam);
    return test_summary();
}
