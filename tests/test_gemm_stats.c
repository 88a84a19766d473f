/* test_gemm_stats.c — the GEMM accounting of nn/ops (ops_gemm_stats) that `cgnn bench train`
 * reports: the FLOPs counted over a forward + backward of every model kind equal the formula
 * from the batch's shapes (written out here, and bench_train_gemm_flops), every call is logged
 * with its shape, and accounting is off unless registered. */
#include "bench/bench.h"
#include "nn/model.h"
#include "nn/ops.h"
#include "test.h"
#include "util/rng.h"

/* A random 3-layer batch: nodes[h] after h hops (nodes[0] = seeds), up to `fan` in-edges per
 * destination, random features and labels, the transpose built. */
static void make_batch(minibatch *mb, const int64_t *nodes, int L, int fan, int64_t feat_dim, int64_t classes) {
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = nodes[0];
    for (int h = 0; h <= L; h++) cap.max_nodes[h] = nodes[h];
    for (int h = 0; h < L; h++) cap.max_edges[h] = nodes[h] * fan;
    cap.feat_dim = feat_dim;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(mb, &cap, &err) == 0);
    rng r;
    rng_init(&r, 42);
    for (int h = 0; h < L; h++) {
        sampler_block *b = &mb->blocks[L - 1 - h];
        b->num_dst = nodes[h];
        b->num_src = nodes[h + 1];
        int64_t e = 0;
        b->indptr[0] = 0;
        for (int64_t i = 0; i < b->num_dst; i++) {
            const int64_t deg = (int64_t)rng_below(&r, (uint64_t)fan + 1);
            for (int64_t k = 0; k < deg; k++) b->indices[e++] = (int32_t)rng_below(&r, (uint64_t)b->num_src);
            b->indptr[i + 1] = e;
        }
        b->num_edges = e;
        mb->num_sampled_edges += e;
    }
    mb->num_seeds = mb->num_items = nodes[0];
    mb->num_input_nodes = nodes[L];
    for (int64_t i = 0; i < mb->num_items; i++) {
        mb->item_local[i] = (int32_t)i;
        mb->labels[i] = (int64_t)rng_below(&r, (uint64_t)classes);
        mb->items[i] = i;
    }
    for (int64_t k = 0; k < nodes[L]; k++) mb->input_nodes[k] = k;
    for (int64_t k = 0; k < nodes[L] * feat_dim; k++) mb->features[k] = (float)rng_uniform(&r) - 0.5f;
    minibatch_build_transpose(mb);
}

enum { L = 3, F = 12, HID = 8, OUT = 5, HEADS = 2 };
static const int64_t NODES[L + 1] = {6, 20, 45, 90};

/* GEMM FLOPs of forward + backward, straight from the shapes: layer l has N_dst = NODES[L-1-l]
 * and N_src = NODES[L-l] rows, I = F or HID inputs, O = HID or OUT outputs. with_input adds
 * layer 0's input gradient (model_backward_input with a dinput buffer). */
static double expected_flops(model_kind kind, int with_input) {
    double total = 0;
    for (int l = 0; l < L; l++) {
        const double Nd = (double)NODES[L - 1 - l], Ns = (double)NODES[L - l];
        const double I = l == 0 ? F : HID, O = l == L - 1 ? OUT : HID;
        const int dx = l > 0 || with_input; /* input-gradient GEMMs */
        switch (kind) {
        case MODEL_GRAPHSAGE: /* lin_l(mean) + lin_r(dst rows): Y, dW (+ dX) each */
            total += 2 * (2 * Nd * I * O) * (dx ? 3 : 2);
            break;
        case MODEL_GCN: /* lin on the N_dst aggregated rows */
            total += (2 * Nd * I * O) * (dx ? 3 : 2);
            break;
        case MODEL_GAT: { /* z = h W^T on all N_src rows; heads concatenated, the last averaged */
            const double HC = l == L - 1 ? HEADS * OUT : HID;
            total += (2 * Ns * I * HC) * (dx ? 3 : 2);
            break;
        }
        default: break;
        }
    }
    return total;
}

static int expected_calls(model_kind kind, int with_input) {
    const int per_linear = kind == MODEL_GRAPHSAGE ? 2 : 1;
    return per_linear * (3 * L - (with_input ? 0 : 1));
}

static void check_kind(model_kind kind) {
    minibatch mb;
    make_batch(&mb, NODES, L, 4, F, OUT);
    model_config cfg = {.kind = kind, .num_layers = L, .in_dim = F, .hidden_dim = HID, .out_dim = OUT,
                        .num_heads = HEADS, .dropout = 0.5f};
    model m;
    cgnn_err err;
    ASSERT_EQ(model_init(&m, &cfg, &mb.cap, 3, &err), 0);
    float *dl = calloc((size_t)(NODES[0] * OUT), sizeof(float));
    float *dinput = calloc((size_t)(NODES[L] * F), sizeof(float));
    ops_gemm_call calls[64];
    ops_gemm_stats s;
    memset(&s, 0, sizeof s);
    s.calls = calls;
    s.max_calls = 64;

    /* a training step as bench train runs it */
    ops_gemm_stats_register(&s);
    const float *out = model_forward(&m, &mb, 1, 99);
    model_softmax_ce(dl, out, mb.item_local, mb.labels, mb.num_items, mb.num_seeds, OUT, NULL);
    model_backward(&m, &mb, dl);
    ops_gemm_stats_register(NULL);
    const double want = expected_flops(kind, 0);
    ASSERT(want > 0);
    ASSERT_EQ(s.flops, want);
    ASSERT_EQ(bench_train_gemm_flops(&cfg, &mb), want);
    ASSERT_EQ(s.num_calls, expected_calls(kind, 0));
    ASSERT_EQ(s.num_logged, s.num_calls);
    ASSERT(s.seconds > 0);
    double logged = 0, logged_s = 0;
    for (int64_t k = 0; k < s.num_logged; k++) {
        const ops_gemm_call *c = &calls[k];
        ASSERT(c->M > 0 && c->N > 0 && c->K > 0 && c->seconds >= 0);
        ASSERT(c->beta == 0.0f || c->beta == 1.0f);
        logged += 2.0 * (double)c->M * (double)c->N * (double)c->K;
        logged_s += c->seconds;
    }
    ASSERT_EQ(logged, want);
    ASSERT_NEAR(logged_s, s.seconds, 1e-9);
    /* the first GEMM is layer 0's forward Y = X W^T; the last a weight gradient dW = dY^T X */
    ASSERT(!calls[0].trans_a && calls[0].trans_b);
    ASSERT(calls[s.num_logged - 1].trans_a && !calls[s.num_logged - 1].trans_b);

    /* off again: nothing is counted */
    const ops_gemm_stats before = s;
    model_forward(&m, &mb, 1, 99);
    model_backward(&m, &mb, dl);
    ASSERT_EQ(s.flops, before.flops);
    ASSERT_EQ(s.num_calls, before.num_calls);

    /* with the input gradient, layer 0's dX GEMMs are counted too; a short log keeps the first */
    memset(&s, 0, sizeof s);
    s.calls = calls;
    s.max_calls = 3;
    ops_gemm_stats_register(&s);
    model_forward(&m, &mb, 1, 99);
    model_backward_input(&m, &mb, dl, dinput);
    ops_gemm_stats_register(NULL);
    ASSERT_EQ(s.flops, expected_flops(kind, 1));
    ASSERT(expected_flops(kind, 1) > want);
    ASSERT_EQ(s.num_calls, expected_calls(kind, 1));
    ASSERT_EQ(s.num_logged, 3);
    free(dl);
    free(dinput);
    model_free(&m);
    minibatch_free(&mb);
}

TEST(graphsage_flops) { check_kind(MODEL_GRAPHSAGE); }
TEST(gcn_flops) { check_kind(MODEL_GCN); }
TEST(gat_flops) { check_kind(MODEL_GAT); }

/* the accounting leaves the numbers alone: the kernels' outputs with and without it agree bitwise */
TEST(accounting_changes_nothing) {
    enum { N = 33, I_ = 17, O = 9 };
    float inp[N * I_], w[O * I_], bias[O], y0[N * O], y1[N * O], dy[N * O];
    rng r;
    rng_init(&r, 5);
    for (int k = 0; k < N * I_; k++) inp[k] = (float)rng_uniform(&r);
    for (int k = 0; k < O * I_; k++) w[k] = (float)rng_uniform(&r);
    for (int k = 0; k < O; k++) bias[k] = (float)rng_uniform(&r);
    for (int k = 0; k < N * O; k++) dy[k] = (float)rng_uniform(&r);
    float dx0[N * I_] = {0}, dx1[N * I_] = {0}, dw0[O * I_] = {0}, dw1[O * I_] = {0};
    ops_linear_forward(y0, inp, w, bias, N, I_, O, 0);
    ops_linear_backward(dx0, dw0, NULL, dy, inp, w, N, I_, O);
    ops_gemm_stats s;
    memset(&s, 0, sizeof s);
    ops_gemm_stats_register(&s);
    ops_linear_forward(y1, inp, w, bias, N, I_, O, 0);
    ops_linear_backward(dx1, dw1, NULL, dy, inp, w, N, I_, O);
    ops_gemm_stats_register(NULL);
    ASSERT_EQ(s.num_calls, 3);
    ASSERT_EQ(s.num_logged, 0); /* no log buffer */
    ASSERT_EQ(s.flops, 3.0 * 2 * N * I_ * O);
    ASSERT(memcmp(y0, y1, sizeof y0) == 0);
    ASSERT(memcmp(dx0, dx1, sizeof dx0) == 0);
    ASSERT(memcmp(dw0, dw1, sizeof dw0) == 0);
}

int main(void) {
    RUN(graphsage_flops);
    RUN(gcn_flops);
    RUN(gat_flops);
    RUN(accounting_changes_nothing);
    return test_summary();
}
