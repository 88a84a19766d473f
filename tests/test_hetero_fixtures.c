/* test_hetero_fixtures.c — the typed models against PyTorch: logits, loss, every parameter
 * gradient and every node type's input-feature gradient of HeteroSAGE, RGCN, RGCN with bases,
 * HeteroSAGE with L2-normalised output, and GiGL's HGT (2 heads; 3 heads with L2-normalised
 * output) on a fixed 2-layer typed minibatch (3 node types, 4 edge types), plus a 10-step Adam
 * loss trajectory per model, all from the .npy files
 * scripts/fixtures/make_hetero_fixtures.py wrote under tests/fixtures/hetero (no PyTorch needed
 * here). Prints the max abs / rel error of every tensor. */
#include "io/npy.h"
#include "nn/model.h"
#include "optim/optim.h"
#include "test.h"

#define FIX_SUBDIR "hetero"
#include "test_fixture.h"


/* The fixture's typed minibatch, laid out as the typed sampler lays batches out. */
typedef struct fixture {
    int T, K, L, output_type;
    int64_t hidden, out_dim;
    char node_type[MINIBATCH_MAX_NODE_TYPES][MODEL_TYPE_NAME_MAX];
    char edge_type[MINIBATCH_MAX_EDGE_TYPES][3][MODEL_TYPE_NAME_MAX];
    int esrc[MINIBATCH_MAX_EDGE_TYPES], edst[MINIBATCH_MAX_EDGE_TYPES];
    int64_t in_dim[MINIBATCH_MAX_NODE_TYPES];
    minibatch_typed_capacity tcap;
    minibatch mb;
} fixture;

static int read_names(fixture *f) {
    FILE *fp = fopen(fix_path("node_types.txt"), "r");
    if (!fp) return fprintf(stderr, "%s: cannot open\n", fix_path("node_types.txt")), -1;
    int ok = 1;
    for (int t = 0; t < f->T && ok; t++) ok = fscanf(fp, "%127s", f->node_type[t]) == 1;
    fclose(fp);
    fp = fopen(fix_path("edge_types.txt"), "r");
    if (!fp) return fprintf(stderr, "%s: cannot open\n", fix_path("edge_types.txt")), -1;
    for (int e = 0; e < f->K && ok; e++)
        ok = fscanf(fp, "%127s %127s %127s", f->edge_type[e][0], f->edge_type[e][1], f->edge_type[e][2]) == 3 &&
             !strcmp(f->edge_type[e][0], f->node_type[f->esrc[e]]) && !strcmp(f->edge_type[e][2], f->node_type[f->edst[e]]);
    fclose(fp);
    if (!ok) fprintf(stderr, "node_types.txt / edge_types.txt: malformed or inconsistent with etypes.npy\n");
    return ok ? 0 : -1;
}

static int fixture_load(fixture *f) {
    memset(f, 0, sizeof *f);
    npy_array dims, in_dims, etypes, num_nodes, items, labels;
    if (fix_open(&dims, "dims.npy", NPY_DTYPE_INT64) || fix_open(&in_dims, "in_dims.npy", NPY_DTYPE_INT64) ||
        fix_open(&etypes, "etypes.npy", NPY_DTYPE_INT64) || fix_open(&num_nodes, "num_nodes.npy", NPY_DTYPE_INT64) ||
        fix_open(&items, "item_local.npy", NPY_DTYPE_INT32) || fix_open(&labels, "labels.npy", NPY_DTYPE_INT64))
        return -1;
    const int64_t *d = dims.data;
    f->hidden = d[0], f->out_dim = d[1], f->L = (int)d[2], f->T = (int)d[3], f->K = (int)d[4];
    f->output_type = (int)d[5];
    const int T = f->T, K = f->K, L = f->L;
    CGNN_CHECK(L >= 1 && L <= MINIBATCH_MAX_LAYERS && T >= 1 && T <= MINIBATCH_MAX_NODE_TYPES && K >= 1 &&
               K <= MINIBATCH_MAX_EDGE_TYPES && in_dims.count == T && etypes.count == 2 * K &&
               num_nodes.count == (int64_t)T * (L + 1) && items.count == labels.count);
    for (int t = 0; t < T; t++) f->in_dim[t] = ((const int64_t *)in_dims.data)[t];
    for (int e = 0; e < K; e++) {
        f->esrc[e] = (int)((const int64_t *)etypes.data)[2 * e];
        f->edst[e] = (int)((const int64_t *)etypes.data)[2 * e + 1];
    }
    if (read_names(f) != 0) return -1;
    /* the capacity is exactly this batch: hop h fills layer L-1-h */
    minibatch_typed_capacity *c = &f->tcap;
    c->num_node_types = T, c->num_edge_types = K;
    for (int t = 0; t < T; t++) {
        for (int h = 0; h <= L; h++) c->max_nodes[t][h] = ((const int64_t *)num_nodes.data)[t * (L + 1) + h];
        c->feat_dim[t] = f->in_dim[t];
    }
    npy_array ip[MINIBATCH_MAX_LAYERS][MINIBATCH_MAX_EDGE_TYPES], ix[MINIBATCH_MAX_LAYERS][MINIBATCH_MAX_EDGE_TYPES];
    char name[256];
    for (int l = 0; l < L; l++)
        for (int e = 0; e < K; e++) {
            snprintf(name, sizeof name, "block%d_e%d_indptr.npy", l, e);
            if (fix_open(&ip[l][e], name, NPY_DTYPE_INT64)) return -1;
            snprintf(name, sizeof name, "block%d_e%d_indices.npy", l, e);
            if (fix_open(&ix[l][e], name, NPY_DTYPE_INT32)) return -1;
            c->max_edges[L - 1 - l][e] = ix[l][e].count;
        }
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = items.count;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc_typed(&f->mb, &cap, c, f->esrc, f->edst, &err) == 0);
    minibatch *mb = &f->mb;
    minibatch_typed *tb = mb->typed;
    mb->num_seeds = mb->num_input_nodes = mb->num_sampled_edges = 0;
    for (int t = 0; t < T; t++) {
        for (int h = 0; h <= L; h++) tb->num_nodes[t][h] = c->max_nodes[t][h];
        const int64_t n = tb->num_nodes[t][L];
        npy_array nodes, feat;
        snprintf(name, sizeof name, "nodes.%s.npy", f->node_type[t]);
        if (fix_open(&nodes, name, NPY_DTYPE_INT64)) return -1;
        snprintf(name, sizeof name, "features.%s.npy", f->node_type[t]);
        if (fix_open(&feat, name, NPY_DTYPE_FLOAT32)) return -1;
        CGNN_CHECK(nodes.count == n && feat.count == n * f->in_dim[t] && tb->feat_dim[t] == f->in_dim[t]);
        memcpy(tb->nodes[t], nodes.data, (size_t)n * sizeof(int64_t));
        memcpy(tb->features[t], feat.data, (size_t)feat.count * sizeof(float));
        npy_close(&nodes), npy_close(&feat);
        mb->num_seeds += tb->num_nodes[t][0];
        mb->num_input_nodes += n;
    }
    for (int l = 0; l < L; l++)
        for (int e = 0; e < K; e++) {
            sampler_block *b = &tb->blocks[l * K + e];
            b->num_dst = tb->num_nodes[f->edst[e]][L - 1 - l];
            b->num_src = tb->num_nodes[f->esrc[e]][L - l];
            b->num_edges = ix[l][e].count;
            CGNN_CHECK(ip[l][e].count == b->num_dst + 1 && ((const int64_t *)ip[l][e].data)[b->num_dst] == b->num_edges);
            memcpy(b->indptr, ip[l][e].data, (size_t)ip[l][e].count * sizeof(int64_t));
            memcpy(b->indices, ix[l][e].data, (size_t)ix[l][e].count * sizeof(int32_t));
            for (int64_t k = 0; k < b->num_edges; k++) CGNN_CHECK(b->indices[k] >= 0 && b->indices[k] < b->num_src);
            mb->num_sampled_edges += b->num_edges;
            npy_close(&ip[l][e]), npy_close(&ix[l][e]);
        }
    mb->num_items = items.count;
    for (int64_t i = 0; i < items.count; i++) {
        mb->items[i] = i;
        mb->item_local[i] = ((const int32_t *)items.data)[i];
        mb->labels[i] = ((const int64_t *)labels.data)[i];
        CGNN_CHECK(mb->item_local[i] >= 0 && mb->item_local[i] < tb->num_nodes[f->output_type][0]);
    }
    minibatch_build_transpose(mb);
    npy_close(&dims), npy_close(&in_dims), npy_close(&etypes), npy_close(&num_nodes), npy_close(&items),
        npy_close(&labels);
    return 0;
}

/* Initialises m as fixture model `dir` (types as tests/test_hetero_model.c fills them, input
 * gradients on for every type) and copies its weights in by state_dict key, checking keys.txt's
 * order and every shape. Returns 0 or -1 (printed). */
static int model_from_fixture(model *m, model_types *ty, const fixture *f, model_kind kind, int bases, int l2,
                              const char *dir) {
    memset(ty, 0, sizeof *ty);
    ty->num_node_types = f->T;
    ty->num_edge_types = f->K;
    for (int t = 0; t < f->T; t++) {
        snprintf(ty->node_type[t], MODEL_TYPE_NAME_MAX, "%s", f->node_type[t]);
        ty->in_dim[t] = f->in_dim[t];
        ty->input_grad[t] = 1;
    }
    for (int e = 0; e < f->K; e++) {
        for (int k = 0; k < 3; k++) snprintf(ty->edge_type[e][k], MODEL_TYPE_NAME_MAX, "%s", f->edge_type[e][k]);
        ty->etype_src[e] = f->esrc[e];
        ty->etype_dst[e] = f->edst[e];
    }
    ty->output_type = f->output_type;
    ty->num_bases = bases;
    ty->cap = f->tcap;
    int heads = 1;
    char name[1024];
    if (kind == MODEL_HGT) { /* <dir>/heads.npy */
        npy_array h;
        snprintf(name, sizeof name, "%s/heads.npy", dir);
        if (fix_open(&h, name, NPY_DTYPE_INT64) != 0) return -1;
        heads = (int)((const int64_t *)h.data)[0];
        npy_close(&h);
    }
    model_config cfg = {.kind = kind, .num_layers = f->L, .hidden_dim = f->hidden, .out_dim = f->out_dim,
                        .num_heads = heads, .dropout = 0.0f, .l2_normalize_output = l2, .types = ty};
    cgnn_err err;
    if (model_init(m, &cfg, &f->mb.cap, 1, &err) != 0) {
        fprintf(stderr, "model_init: %s\n", err.msg);
        return -1;
    }
    return fix_load_params(m, dir);
}

/* One forward + softmax CE + typed backward (dout on the output type only); returns the loss. */
static double step(model *m, const fixture *f, float *dlogits, int training) {
    const minibatch *mb = &f->mb;
    const int64_t S = mb->typed->num_nodes[f->output_type][0];
    const float *logits = model_forward(m, mb, training, 0);
    const double loss = model_softmax_ce(dlogits, logits, mb->item_local, mb->labels, mb->num_items, S, f->out_dim, NULL);
    const float *dout[MINIBATCH_MAX_NODE_TYPES] = {0};
    dout[f->output_type] = dlogits;
    model_typed_backward(m, mb, dout);
    return loss;
}

static void check_model(model_kind kind, int bases, int l2, const char *dir) {
    fixture f;
    if (fixture_load(&f) != 0) TEST_FAIL_("cannot load the fixtures under %s", fix_path(""));
    model m;
    model_types ty;
    if (model_from_fixture(&m, &ty, &f, kind, bases, l2, dir) != 0) {
        model_free(&m);
        minibatch_free(&f.mb);
        TEST_FAIL_("cannot load model %s", dir);
    }
    const int64_t S = f.mb.typed->num_nodes[f.output_type][0], C = f.out_dim;
    float *dlogits = calloc((size_t)(S * C + 1), sizeof(float));
    model_zero_grad(&m);
    const double loss = step(&m, &f, dlogits, 0);

    char name[1024];
    npy_array want_loss;
    int ok = fix_open(&want_loss, (snprintf(name, sizeof name, "%s/loss.npy", dir), name), NPY_DTYPE_FLOAT64) == 0;
    double wl = ok ? ((const double *)want_loss.data)[0] : NAN;
    if (ok) npy_close(&want_loss);
    double worst = 0.0;
    fprintf(stderr, " %s (%s):\n", model_kind_name(kind), dir);
    ok = ok && fix_scalar("loss", loss, wl, FIX_TOL_F32);
    /* two groups (test_fixture.h): the forward output, and every gradient of the backward
     * (every parameter's and every node type's input gradient together) */
    double fwd_scale = 0.0, grad_scale = 0.0;
    snprintf(name, sizeof name, "%s/logits.npy", dir);
    ok &= fix_group_add(&fwd_scale, name) == 0;
    ok &= fix_compare("logits", model_typed_output(&m, f.output_type), S * C, name, fwd_scale, FIX_TOL_F32, &worst);
    for (int t = 0; t < m.num_tensors; t++) {
        snprintf(name, sizeof name, "%s/grad.%s.npy", dir, m.tensors[t].name);
        ok &= fix_group_add(&grad_scale, name) == 0;
    }
    for (int t = 0; t < f.T; t++) {
        snprintf(name, sizeof name, "%s/dfeatures.%s.npy", dir, f.node_type[t]);
        ok &= fix_group_add(&grad_scale, name) == 0;
    }
    for (int t = 0; t < m.num_tensors; t++) {
        const model_tensor *mt = &m.tensors[t];
        snprintf(name, sizeof name, "%s/grad.%s.npy", dir, mt->name);
        char label[1024];
        snprintf(label, sizeof label, "d %s", mt->name);
        ok &= fix_compare(label, m.grads + mt->offset, mt->numel, name, grad_scale, FIX_TOL_F32, &worst);
    }
    for (int t = 0; t < f.T; t++) {
        char label[256];
        snprintf(name, sizeof name, "%s/dfeatures.%s.npy", dir, f.node_type[t]);
        snprintf(label, sizeof label, "d features.%s", f.node_type[t]);
        const float *dx = model_typed_input_grad(&m, t);
        ok &= dx != NULL && fix_compare(label, dx, f.mb.typed->num_nodes[t][f.L] * f.in_dim[t], name, grad_scale,
                                        FIX_TOL_F32, &worst);
    }
    fprintf(stderr, "  %s: worst err/tol %.3g (gradient scale %.3g)\n", dir, worst, grad_scale);
    free(dlogits);
    model_free(&m);
    minibatch_free(&f.mb);
    ASSERT(ok);
}

/* 10 Adam steps (torch.optim.Adam(lr=0.01) defaults) through optim_step; the loss before each
 * step against torch's. */
static void check_adam(model_kind kind, int bases, int l2, const char *dir) {
    fixture f;
    if (fixture_load(&f) != 0) TEST_FAIL_("cannot load the fixtures under %s", fix_path(""));
    model m;
    model_types ty;
    if (model_from_fixture(&m, &ty, &f, kind, bases, l2, dir) != 0) {
        model_free(&m);
        minibatch_free(&f.mb);
        TEST_FAIL_("cannot load model %s", dir);
    }
    char name[1024];
    snprintf(name, sizeof name, "%s/adam_losses.npy", dir);
    npy_array want;
    if (fix_open(&want, name, NPY_DTYPE_FLOAT64) != 0) {
        model_free(&m);
        minibatch_free(&f.mb);
        TEST_FAIL_("no %s", name);
    }
    optim_config oc;
    optim_default_config(&oc, OPTIM_ADAM, 0.01);
    optim opt;
    cgnn_err err;
    CGNN_CHECK(optim_init(&opt, &oc, m.num_params, &err) == 0);
    float *dlogits = calloc((size_t)(f.mb.typed->num_nodes[f.output_type][0] * f.out_dim + 1), sizeof(float));
    double max_err = 0.0, traj_scale = 0.0;
    for (int64_t s = 0; s < want.count; s++) traj_scale = fmax(traj_scale, fabs(((const double *)want.data)[s]));
    fprintf(stderr, " %s (%s) Adam:\n  step  cgnn loss     torch loss    err/tol\n", model_kind_name(kind), dir);
    for (int64_t s = 0; s < want.count; s++) {
        model_zero_grad(&m);
        const double loss = step(&m, &f, dlogits, 1);
        optim_step(&opt, m.params, m.grads, 0.01);
        const double w = ((const double *)want.data)[s];
        /* the trajectory is one group (test_fixture.h): atol from its largest loss */
        const double e = fabs(loss - w) / (FIX_TOL_F32.atol_frac * traj_scale + FIX_TOL_F32.rtol * fabs(w));
        fprintf(stderr, "  %4lld  %.9f  %.9f  %.3g\n", (long long)s, loss, w, e);
        if (e > max_err || e != e) max_err = e;
    }
    fprintf(stderr, "  %s Adam: max err/tol %.3g\n", dir, max_err);
    const int64_t steps = want.count;
    npy_close(&want);
    optim_free(&opt);
    free(dlogits);
    model_free(&m);
    minibatch_free(&f.mb);
    ASSERT_EQ(steps, 10);
    ASSERT(max_err <= 1.0); /* NaN fails */
}

TEST(fixture_hetero_sage) { check_model(MODEL_HETERO_SAGE, 0, 0, "hetero_sage"); }
TEST(fixture_rgcn) { check_model(MODEL_RGCN, 0, 0, "rgcn"); }
TEST(fixture_rgcn_bases) { check_model(MODEL_RGCN, 2, 0, "rgcn_bases"); }
TEST(fixture_hetero_sage_l2) { check_model(MODEL_HETERO_SAGE, 0, 1, "hetero_sage_l2"); }
TEST(fixture_hetero_sage_adam) { check_adam(MODEL_HETERO_SAGE, 0, 0, "hetero_sage"); }
TEST(fixture_rgcn_adam) { check_adam(MODEL_RGCN, 0, 0, "rgcn"); }
TEST(fixture_rgcn_bases_adam) { check_adam(MODEL_RGCN, 2, 0, "rgcn_bases"); }
TEST(fixture_hetero_sage_l2_adam) { check_adam(MODEL_HETERO_SAGE, 0, 1, "hetero_sage_l2"); }
TEST(fixture_hgt) { check_model(MODEL_HGT, 0, 0, "hgt"); }
TEST(fixture_hgt_l2) { check_model(MODEL_HGT, 0, 1, "hgt_l2"); }
TEST(fixture_hgt_adam) { check_adam(MODEL_HGT, 0, 0, "hgt"); }
TEST(fixture_hgt_l2_adam) { check_adam(MODEL_HGT, 0, 1, "hgt_l2"); }

int main(void) {
    RUN(fixture_hetero_sage);
    RUN(fixture_rgcn);
    RUN(fixture_rgcn_bases);
    RUN(fixture_hetero_sage_l2);
    RUN(fixture_hetero_sage_adam);
    RUN(fixture_rgcn_adam);
    RUN(fixture_rgcn_bases_adam);
    RUN(fixture_hetero_sage_l2_adam);
    RUN(fixture_hgt);
    RUN(fixture_hgt_l2);
    RUN(fixture_hgt_adam);
    RUN(fixture_hgt_l2_adam);
    return test_summary();
}
