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

#define FIX_TOL 1e-4

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

/* Compares got (n) with fixture `name` (float32, n elements). Error per element:
 * |got - want| / (|want| + 1e-2 · max|want|) — relative, floored at 1% of the tensor's scale
 * for elements that are float-sum cancellations. Prints max abs / rel; returns 1 if within tol. */
static int compare(const char *label, const float *got, int64_t n, const char *name, double tol) {
    npy_array a;
    if (fix_open(&a, name, NPY_DTYPE_FLOAT32) != 0) return 0;
    if (a.count != n) {
        fprintf(stderr, "%s: %lld elements, want %lld\n", name, (long long)a.count, (long long)n);
        npy_close(&a);
        return 0;
    }
    const float *want = a.data;
    double scale = 0.0, max_abs = 0.0, max_rel = 0.0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs((double)want[k]));
    for (int64_t k = 0; k < n; k++) {
        const double d = fabs((double)got[k] - (double)want[k]);
        const double r = d / (fabs((double)want[k]) + 1e-2 * scale + 1e-30);
        if (d > max_abs || d != d) max_abs = d;
        if (r > max_rel || r != r) max_rel = r;
    }
    npy_close(&a);
    const int ok = max_rel <= tol;
    fprintf(stderr, "  %-26s max abs %.3g  max rel %.3g%s\n", label, max_abs, max_rel, ok ? "" : "  <-- FAIL");
    return ok;
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
    const double loss_err = fabs(loss - wl) / fabs(wl);
    fprintf(stderr, " %s (%s):\n  %-26s %.9f vs torch %.9f, rel %.3g\n", model_kind_name(kind), dir, "loss", loss, wl,
            loss_err);
    ok = ok && loss_err <= FIX_TOL;
    snprintf(name, sizeof name, "%s/logits.npy", dir);
    ok &= compare("logits", logits, S * C, name, FIX_TOL);
    for (int t = 0; t < m.num_tensors; t++) {
        const model_tensor *mt = &m.tensors[t];
        snprintf(name, sizeof name, "%s/grad.%s.npy", dir, mt->name);
        char label[128];
        snprintf(label, sizeof label, "d %s", mt->name);
        ok &= compare(label, m.grads + mt->offset, mt->numel, name, FIX_TOL);
    }
    snprintf(name, sizeof name, "%s/dfeatures.npy", dir);
    ok &= compare("d features", dx, mb->num_input_nodes * f.in_dim, name, FIX_TOL);
    free(dlogits), free(dx);
    model_free(&m);
    minibatch_free(&f.mb);
    ASSERT(ok);
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
    double max_err = 0.0;
    fprintf(stderr, "  step  cgnn loss     torch loss    rel err\n");
    for (int64_t s = 0; s < want.count; s++) {
        model_zero_grad(&m);
        const float *logits = model_forward(&m, mb, 1, (uint64_t)s);
        const double loss = model_softmax_ce(dlogits, logits, mb->item_local, mb->labels, mb->num_items,
                                             mb->num_seeds, f.out_dim, NULL);
        model_backward(&m, mb, dlogits);
        optim_step(&opt, m.params, m.grads, 0.01);
        const double w = ((const double *)want.data)[s];
        const double e = fabs(loss - w) / fmax(1.0, fabs(w));
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
    ASSERT(max_err <= FIX_TOL);
}

int main(void) {
    RUN(fixture_sage);
    RUN(fixture_gcn);
    RUN(fixture_gat);
    RUN(fixture_sage_l2);
    RUN(fixture_sage_adam);
    return test_summary();
}
