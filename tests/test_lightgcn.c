/* test_lightgcn.c — LightGCN's full-graph propagation (nn/lightgcn.h):
 *   - PyTorch 1.13 (tests/fixtures/lightgcn, scripts/fixtures/make_lightgcn_fixtures.py, PyG's
 *     LightGCN / LGConv / gcn_norm transcribed): final embeddings with the default and a custom
 *     alpha; the BPR + reg loss of a batch and its gradient w.r.t. embedding.weight (through
 *     lp_loss_bpr, embedding_batch_l2 and lightgcn_backward, as the trainer forms them); a
 *     10-step SparseAdam trajectory (losses and the final table);
 *   - finite differences of the backward (several layer counts and alphas);
 *   - the fast kernels against the plain _ref, bitwise, on a random graph with duplicate edges,
 *     self-edges and isolated nodes; thread counts 1, 2, 3 give the same bits;
 *   - the batch-restricted kernels (receptive field only) against the full ones, bitwise;
 *   - the adjacency's transpose; alpha lists.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "graph/csc.h"
#include "io/npy.h"
#include "nn/embedding.h"
#include "nn/lightgcn.h"
#include "nn/lp_loss.h"
#include "test.h"
#include "test_fd.h"
#define FIX_SUBDIR "lightgcn"
#include "test_fixture.h"
#include "util/rng.h"

static const char *src_dir(void) {
    const char *s = getenv("CGNN_SOURCE_DIR");
    return s ? s : ".";
}

static int open_fixture(npy_array *a, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/lightgcn/%s.npy", src_dir(), name);
    cgnn_err err = {0};
    if (npy_open(a, path, 1, &err) != 0) {
        fprintf(stderr, "cannot open fixture: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* A whole-graph CSC from an edge list (src[e] -> dst[e]), in-edges in list order (csc_build's
 * stable order), int32 ids. Caller frees g->owned_*. */
static void csc_from_edges(csc_graph *g, int64_t N, const int64_t *src, const int64_t *dst, int64_t E) {
    memset(g, 0, sizeof *g);
    int64_t *ptr = calloc((size_t)(N + 1), sizeof(int64_t));
    int32_t *idx = malloc((size_t)(E + 1) * sizeof(int32_t));
    for (int64_t e = 0; e < E; e++) ptr[dst[e] + 1]++;
    for (int64_t v = 0; v < N; v++) ptr[v + 1] += ptr[v];
    int64_t *fill = malloc((size_t)(N + 1) * sizeof(int64_t));
    memcpy(fill, ptr, (size_t)(N + 1) * sizeof(int64_t));
    for (int64_t e = 0; e < E; e++) idx[fill[dst[e]]++] = (int32_t)src[e];
    free(fill);
    g->num_nodes = g->num_src_nodes = N;
    g->num_edges = E;
    g->index_bytes = 4;
    g->indptr = g->owned_indptr = ptr;
    g->indices = g->owned_indices = idx;
}

static double max_rel_err(const float *a, const float *b, int64_t n) {
    double scale = 0, err = 0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs((double)b[k]));
    for (int64_t k = 0; k < n; k++) err = fmax(err, fabs((double)a[k] - (double)b[k]));
    return err / fmax(scale, 1e-30);
}

/* ---- PyTorch fixtures --------------------------------------------------------------------- */

typedef struct fixture_graph {
    npy_array edges, x0;
    csc_graph g;
    lightgcn_adj adj;
    int64_t N, D;
} fixture_graph;

static int fixture_open(fixture_graph *f) {
    memset(f, 0, sizeof *f);
    if (open_fixture(&f->edges, "edges") != 0 || open_fixture(&f->x0, "x0") != 0) return -1;
    const int64_t E = f->edges.shape[1];
    const int64_t *e = f->edges.data;
    f->N = f->x0.shape[0], f->D = f->x0.shape[1];
    csc_from_edges(&f->g, f->N, e, e + E, E);
    cgnn_err err = {0};
    return lightgcn_adj_build(&f->adj, &f->g, &err);
}

static void fixture_close(fixture_graph *f) {
    lightgcn_adj_free(&f->adj);
    csc_free(&f->g);
    npy_close(&f->edges), npy_close(&f->x0);
}

TEST(torch_final_embeddings) {
    fixture_graph f;
    ASSERT_EQ(fixture_open(&f), 0);
    npy_array od, oc, ac;
    ASSERT_EQ(open_fixture(&od, "out_default"), 0);
    ASSERT_EQ(open_fixture(&oc, "out_custom"), 0);
    ASSERT_EQ(open_fixture(&ac, "alpha_custom"), 0);
    const int L = 3;
    float alpha[LIGHTGCN_MAX_LAYERS + 1];
    ASSERT_EQ(lightgcn_alpha(alpha, L, NULL, 0), 0);
    float *out = malloc((size_t)(f.N * f.D) * sizeof(float));
    lightgcn_forward(&f.adj, f.x0.data, f.D, L, alpha, out);
    /* the rule of test_fixture.h: each output is its own group */
    int ok = fix_allclose("final embeddings, default alpha", out, od.data, f.N * f.D, fix_max_abs(od.data, f.N * f.D),
                          FIX_TOL_F32, NULL);
    double given[4];
    for (int l = 0; l <= L; l++) given[l] = ((const float *)ac.data)[l];
    ASSERT_EQ(lightgcn_alpha(alpha, L, given, L + 1), 0);
    lightgcn_forward(&f.adj, f.x0.data, f.D, L, alpha, out);
    ok &= fix_allclose("final embeddings, custom alpha", out, oc.data, f.N * f.D, fix_max_abs(oc.data, f.N * f.D),
                       FIX_TOL_F32, NULL);
    ASSERT(ok);
    /* the isolated node 9: deg 0 -> weight 0 -> out = alpha_0 x0 */
    for (int64_t k = 0; k < f.D; k++)
        ASSERT_EQ(out[9 * f.D + k], ((const float *)f.x0.data)[9 * f.D + k] * alpha[0]);
    free(out);
    npy_close(&od), npy_close(&oc), npy_close(&ac);
    fixture_close(&f);
}

/* The trainer's computation of one LightGCN-BPR step: out = propagate(w); BPR over (u, p, n)
 * rows of out (lp_loss_bpr, one negative per pair: pair i's is random negative i); reg on the
 * raw rows of w (embedding_batch_l2); dw = backward(d out) + d reg. Returns the loss. */
static double bpr_step(lightgcn_adj *adj, const float *w, int64_t N, int64_t D, int L, const float *alpha,
                       const int64_t *trip, int64_t B, double reg, float *dw) {
    float *out = malloc((size_t)(N * D) * sizeof(float)), *g = calloc((size_t)(N * D), sizeof(float));
    float *q = malloc((size_t)(B * D) * sizeof(float)), *c = malloc((size_t)(2 * B * D) * sizeof(float));
    float *dq = calloc((size_t)(B * D), sizeof(float)), *dc = calloc((size_t)(2 * B * D), sizeof(float));
    lightgcn_forward(adj, w, D, L, alpha, out);
    for (int64_t i = 0; i < B; i++) {
        memcpy(q + i * D, out + trip[3 * i] * D, (size_t)D * sizeof(float));
        memcpy(c + i * D, out + trip[3 * i + 1] * D, (size_t)D * sizeof(float));
        memcpy(c + (B + i) * D, out + trip[3 * i + 2] * D, (size_t)D * sizeof(float));
    }
    const lp_pairs b = {q, c, B, 0, B, D, NULL, NULL};
    float *work = malloc((size_t)(lp_loss_work_floats(LP_TASK_BPR, B, 0, B, D) + 1) * sizeof(float));
    double loss = lp_loss_bpr(dq, dc, &b, 1, 1.0f, work);
    for (int64_t i = 0; i < B; i++)
        for (int64_t k = 0; k < D; k++) {
            g[trip[3 * i] * D + k] += dq[i * D + k];
            g[trip[3 * i + 1] * D + k] += dc[i * D + k];
            g[trip[3 * i + 2] * D + k] += dc[(B + i) * D + k];
        }
    lightgcn_backward(adj, g, D, L, alpha, dw);
    int32_t *slots = malloc((size_t)(3 * B) * sizeof(int32_t)); /* users, positives, negatives */
    for (int64_t i = 0; i < B; i++) {
        slots[i] = (int32_t)trip[3 * i];
        slots[B + i] = (int32_t)trip[3 * i + 1];
        slots[2 * B + i] = (int32_t)trip[3 * i + 2];
    }
    loss += embedding_batch_l2(dw, w, slots, 3 * B, D, 0, D, reg / (double)B);
    free(out), free(g), free(q), free(c), free(dq), free(dc), free(work), free(slots);
    return loss;
}

TEST(torch_bpr_loss_and_gradient) {
    fixture_graph f;
    ASSERT_EQ(fixture_open(&f), 0);
    npy_array bt, l0, g0;
    ASSERT_EQ(open_fixture(&bt, "batches"), 0);
    ASSERT_EQ(open_fixture(&l0, "loss0"), 0);
    ASSERT_EQ(open_fixture(&g0, "grad0"), 0);
    float alpha[LIGHTGCN_MAX_LAYERS + 1];
    ASSERT_EQ(lightgcn_alpha(alpha, 3, NULL, 0), 0);
    const int64_t B = bt.shape[1];
    float *dw = malloc((size_t)(f.N * f.D) * sizeof(float));
    const double loss = bpr_step(&f.adj, f.x0.data, f.N, f.D, 3, alpha, bt.data, B, 1e-2, dw);
    const double want = ((const double *)l0.data)[0];
    int ok = fix_scalar("BPR + reg loss", loss, want, FIX_TOL_F32);
    ok &= fix_allclose("d embedding.weight", dw, g0.data, f.N * f.D, fix_max_abs(g0.data, f.N * f.D), FIX_TOL_F32,
                       NULL);
    ASSERT(ok);
    free(dw);
    npy_close(&bt), npy_close(&l0), npy_close(&g0);
    fixture_close(&f);
}

TEST(torch_sparse_adam_trajectory) {
    fixture_graph f;
    ASSERT_EQ(fixture_open(&f), 0);
    npy_array bt, tl, tw;
    ASSERT_EQ(open_fixture(&bt, "batches"), 0);
    ASSERT_EQ(open_fixture(&tl, "traj_loss"), 0);
    ASSERT_EQ(open_fixture(&tw, "traj_w"), 0);
    float alpha[LIGHTGCN_MAX_LAYERS + 1];
    ASSERT_EQ(lightgcn_alpha(alpha, 3, NULL, 0), 0);
    embedding_table e;
    cgnn_err err = {0};
    ASSERT_EQ(embedding_init(&e, f.N, f.D, 1, EMB_OPTIM_SPARSE_ADAM, 0.01, 0.9, 0.999, 1e-8, &err), 0);
    memcpy(e.weight, f.x0.data, (size_t)(f.N * f.D) * sizeof(float));
    const int64_t B = bt.shape[1], steps = tl.shape[0];
    int64_t *ids = malloc((size_t)f.N * sizeof(int64_t));
    for (int64_t i = 0; i < f.N; i++) ids[i] = i;
    float *dw = malloc((size_t)(f.N * f.D) * sizeof(float));
    double worst = 0;
    for (int64_t s = 0; s < steps; s++) {
        const double loss = bpr_step(&f.adj, e.weight, f.N, f.D, 3, alpha, (const int64_t *)bt.data + (s % 2) * 3 * B,
                                     B, 1e-2, dw);
        const double w = ((const double *)tl.data)[s];
        worst = fmax(worst, fabs(loss - w) / (FIX_TOL_F32.rtol * fabs(w))); /* the rule of test_fixture.h */
        ASSERT_EQ(embedding_sparse_step(&e, NULL, ids, dw, f.N, f.D, 0, 0.01, 1.0, &err), 0);
    }
    fprintf(stderr, "  %lld SparseAdam steps: worst loss err/tol %.3g\n", (long long)steps, worst);
    ASSERT(worst <= 1.0);
    ASSERT(fix_allclose("final table", e.weight, tw.data, f.N * f.D, fix_max_abs(tw.data, f.N * f.D), FIX_TOL_F32,
                        NULL));
    /* the table moved: the comparison is not of x0 with itself */
    ASSERT(max_rel_err(e.weight, f.x0.data, f.N * f.D) > 1e-2);
    embedding_free(&e);
    free(ids), free(dw);
    npy_close(&bt), npy_close(&tl), npy_close(&tw);
    fixture_close(&f);
}

/* ---- a random graph ---------------------------------------------------------------------- */

/* N nodes, E edges: random pairs over nodes [0, N - 3) (the last 3 isolated), every edge in both
 * directions, some duplicated, a few self-edges. */
static void random_graph(csc_graph *g, int64_t N, int64_t E, uint64_t seed) {
    rng r;
    rng_init(&r, seed);
    int64_t *src = malloc((size_t)(2 * E + 16) * sizeof(int64_t)), *dst = malloc((size_t)(2 * E + 16) * sizeof(int64_t));
    int64_t n = 0;
    for (int64_t e = 0; e < E; e++) {
        const int64_t a = (int64_t)rng_below(&r, (uint64_t)(N - 3)), b = (int64_t)rng_below(&r, (uint64_t)(N - 3));
        src[n] = a, dst[n++] = b;
        if (a != b) src[n] = b, dst[n++] = a;
    }
    csc_from_edges(g, N, src, dst, n);
    free(src), free(dst);
}

typedef struct fd_ctx {
    lightgcn_adj *adj;
    float *x, *out;
    const float *proj;
    int64_t N, D;
    int L;
    const float *alpha;
} fd_ctx;

static double fd_loss_fn(void *p) { /* Σ proj ⊙ out, in double */
    fd_ctx *c = p;
    lightgcn_forward(c->adj, c->x, c->D, c->L, c->alpha, c->out);
    double s = 0;
    for (int64_t k = 0; k < c->N * c->D; k++) s += (double)c->proj[k] * c->out[k];
    return s;
}

TEST(finite_differences) {
    csc_graph g;
    random_graph(&g, 40, 70, 7);
    lightgcn_adj adj;
    cgnn_err err = {0};
    ASSERT_EQ(lightgcn_adj_build(&adj, &g, &err), 0);
    const int64_t N = 40, D = 3;
    float *x = malloc((size_t)(N * D) * sizeof(float)), *out = malloc((size_t)(N * D) * sizeof(float));
    float *proj = malloc((size_t)(N * D) * sizeof(float)), *dx = malloc((size_t)(N * D) * sizeof(float));
    const double custom[4] = {0.5, -0.3, 0.2, 0.7};
    const struct { int L, n; } cases[] = {{0, 0}, {1, 0}, {3, 0}, {3, 4}, {2, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        float alpha[LIGHTGCN_MAX_LAYERS + 1];
        ASSERT_EQ(lightgcn_alpha(alpha, cases[c].L, custom, cases[c].n), 0);
        fill_uniform(x, N * D, -1, 1, 11 + c);
        fill_uniform(proj, N * D, -1, 1, 23 + c);
        lightgcn_backward(&adj, proj, D, cases[c].L, alpha, dx);
        fd_ctx ctx = {&adj, x, out, proj, N, D, cases[c].L, alpha};
        const fd_stats st = fd_check_floor(x, dx, N * D, fd_loss_fn, &ctx, 1e-2f, 0, 1e-4);
        fprintf(stderr, "  L=%d alpha %s: %lld coordinates, max rel err %.2e\n", cases[c].L,
                cases[c].n ? "given" : "default", (long long)st.checked, st.max_err);
        ASSERT_EQ(st.checked, N * D);
        ASSERT(st.max_err < FD_TOL);
    }
    free(x), free(out), free(proj), free(dx);
    lightgcn_adj_free(&adj);
    csc_free(&g);
}

TEST(fast_matches_ref_bitwise_any_threads) {
    csc_graph g;
    random_graph(&g, 3001, 20000, 3);
    lightgcn_adj adj;
    cgnn_err err = {0};
    ASSERT_EQ(lightgcn_adj_build(&adj, &g, &err), 0);
    const int64_t N = 3001;
    const int64_t dims[] = {64, 5, 96}; /* whole vector chunks, the scalar tail alone, chunks + tail */
    const int saved = omp_get_max_threads();
    /* each edge-sum kernel (AVX where the CPU has it, 4-wide, the plain loop) gives ref's bits */
    const char *kernels[][2] = {{"CGNN_LGC_KERNEL", "auto"}, {"CGNN_NO_AVX", "1"}, {"CGNN_LGC_KERNEL", "scalar"}};
    for (int ki = 0; ki < 3; ki++)
    for (int di = 0; di < 3; di++) {
        setenv(kernels[ki][0], kernels[ki][1], 1);
        const int64_t D = dims[di];
        float *x = malloc((size_t)(N * D) * sizeof(float)), *gr = malloc((size_t)(N * D) * sizeof(float));
        float *ref = malloc((size_t)(N * D) * sizeof(float)), *fast = malloc((size_t)(N * D) * sizeof(float));
        float *bref = malloc((size_t)(N * D) * sizeof(float)), *bfast = malloc((size_t)(N * D) * sizeof(float));
        float *work = malloc((size_t)(2 * N * D) * sizeof(float));
        fill_uniform(x, N * D, -1, 1, 5);
        fill_uniform(gr, N * D, -1, 1, 6);
        float alpha[LIGHTGCN_MAX_LAYERS + 1];
        ASSERT_EQ(lightgcn_alpha(alpha, 3, NULL, 0), 0);
        lightgcn_forward_ref(&adj, x, D, 3, alpha, ref, work);
        lightgcn_backward_ref(&adj, gr, D, 3, alpha, bref, work);
        const int threads[] = {1, 2, 3};
        for (int ti = 0; ti < 3; ti++) {
            omp_set_num_threads(threads[ti]);
            lightgcn_forward(&adj, x, D, 3, alpha, fast);
            lightgcn_backward(&adj, gr, D, 3, alpha, bfast);
            ASSERT_EQ(memcmp(fast, ref, (size_t)(N * D) * sizeof(float)), 0);
            ASSERT_EQ(memcmp(bfast, bref, (size_t)(N * D) * sizeof(float)), 0);
        }
        omp_set_num_threads(saved);
        unsetenv("CGNN_LGC_KERNEL"), unsetenv("CGNN_NO_AVX");
        /* not trivially zero: the propagation reached every non-isolated node */
        double s = 0;
        for (int64_t k = 0; k < (N - 3) * D; k++) s += fabs(ref[k] - x[k] * alpha[0]);
        ASSERT(s > 1.0);
        free(x), free(gr), free(ref), free(fast), free(bref), free(bfast), free(work);
    }
    /* the adjacency: A^T holds A's entries transposed (same multiset of (i, j, w)) */
    double sf = 0, sb = 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t e = adj.fwd_ptr[i]; e < adj.fwd_ptr[i + 1]; e++) sf += adj.fwd_w[e] * (double)(i * 7 + adj.fwd_idx[e]);
    for (int64_t j = 0; j < N; j++)
        for (int64_t e = adj.bwd_ptr[j]; e < adj.bwd_ptr[j + 1]; e++) sb += adj.bwd_w[e] * (double)(adj.bwd_idx[e] * 7 + j);
    ASSERT(fabs(sf - sb) <= 1e-9 * fabs(sf));
    ASSERT_EQ(adj.bwd_ptr[N], adj.num_edges);
    lightgcn_adj_free(&adj);
    csc_free(&g);
}

TEST(batch_rows_match_full_bitwise) {
    csc_graph g;
    random_graph(&g, 2003, 6000, 9);
    lightgcn_adj adj;
    cgnn_err err = {0};
    ASSERT_EQ(lightgcn_adj_build(&adj, &g, &err), 0);
    const int64_t N = 2003, D = 72; /* vector chunks and a scalar tail (nn/lightgcn.c) */
    float *x = malloc((size_t)(N * D) * sizeof(float)), *gr = calloc((size_t)(N * D), sizeof(float));
    float *full = malloc((size_t)(N * D) * sizeof(float)), *part = malloc((size_t)(N * D) * sizeof(float));
    float *bfull = malloc((size_t)(N * D) * sizeof(float)), *bpart = malloc((size_t)(N * D) * sizeof(float));
    int64_t rows[64];
    rng r;
    rng_init(&r, 4);
    int64_t n = 0; /* distinct rows, unsorted, one of them isolated */
    while (n < 40) {
        const int64_t v = (int64_t)rng_below(&r, (uint64_t)N);
        int dup = 0;
        for (int64_t k = 0; k < n; k++) dup |= rows[k] == v;
        if (!dup) rows[n++] = v;
    }
    rows[n++] = N - 1;
    fill_uniform(x, N * D, -1, 1, 12);
    for (int64_t k = 0; k < n; k++) fill_uniform(gr + rows[k] * D, D, -1, 1, 100 + (uint64_t)k);
    const double custom[4] = {0.5, -0.3, 0.2, -0.7};
    const int saved = omp_get_max_threads();
    for (int L = 0; L <= 3; L++) {
        float alpha[LIGHTGCN_MAX_LAYERS + 1];
        ASSERT_EQ(lightgcn_alpha(alpha, L, L == 3 ? custom : NULL, L == 3 ? 4 : 0), 0);
        lightgcn_forward(&adj, x, D, L, alpha, full);
        lightgcn_backward(&adj, gr, D, L, alpha, bfull);
        for (int th = 1; th <= 3; th++) {
            omp_set_num_threads(th);
            int64_t done_f = 0, done_b = 0;
            lightgcn_forward_rows(&adj, x, D, L, alpha, part, rows, n, &done_f);
            memset(bpart, 0xff, (size_t)(N * D) * sizeof(float)); /* every row must be written */
            lightgcn_backward_rows(&adj, gr, D, L, alpha, bpart, rows, n, &done_b);
            for (int64_t k = 0; k < n; k++)
                ASSERT_EQ(memcmp(part + rows[k] * D, full + rows[k] * D, (size_t)D * sizeof(float)), 0);
            ASSERT_EQ(memcmp(bpart, bfull, (size_t)(N * D) * sizeof(float)), 0);
            if (L == 3 && th == 1)
                fprintf(stderr, "  L=3, %lld batch rows of %lld: forward computed %lld rows, backward %lld (full: %lld each)\n",
                        (long long)n, (long long)N, (long long)done_f, (long long)done_b, (long long)(3 * N));
            if (L == 3) ASSERT(done_f < 3 * N); /* the restriction saved work */
        }
        omp_set_num_threads(saved);
    }
    free(x), free(gr), free(full), free(part), free(bfull), free(bpart);
    lightgcn_adj_free(&adj);
    csc_free(&g);
}

/* A batch whose field covers nearly every node computes its deep levels on every row (no lists
 * built): the same bits as the full product. */
TEST(dense_batch_takes_full_kernels) {
    csc_graph g;
    random_graph(&g, 1501, 12000, 21);
    lightgcn_adj adj;
    cgnn_err err = {0};
    ASSERT_EQ(lightgcn_adj_build(&adj, &g, &err), 0);
    const int64_t N = 1501, D = 64, L = 3, n = N / 2;
    float *x = malloc((size_t)(N * D) * sizeof(float)), *gr = calloc((size_t)(N * D), sizeof(float));
    float *full = malloc((size_t)(N * D) * sizeof(float)), *part = malloc((size_t)(N * D) * sizeof(float));
    float *bfull = malloc((size_t)(N * D) * sizeof(float)), *bpart = malloc((size_t)(N * D) * sizeof(float));
    int64_t *rows = malloc((size_t)n * sizeof(int64_t));
    for (int64_t k = 0; k < n; k++) rows[k] = (2 * k * 7) % N; /* distinct: 14 k mod N, N odd, k < N / 2 */
    fill_uniform(x, N * D, -1, 1, 31);
    for (int64_t k = 0; k < n; k++) fill_uniform(gr + rows[k] * D, D, -1, 1, 200 + (uint64_t)k);
    float alpha[LIGHTGCN_MAX_LAYERS + 1];
    ASSERT_EQ(lightgcn_alpha(alpha, (int)L, NULL, 0), 0);
    lightgcn_forward(&adj, x, D, (int)L, alpha, full);
    lightgcn_backward(&adj, gr, D, (int)L, alpha, bfull);
    int64_t done_f = 0, done_b = 0;
    lightgcn_forward_rows(&adj, x, D, (int)L, alpha, part, rows, n, &done_f);
    const int ldf = adj.dense_level; /* x^(1) and x^(2) are needed on > 90% of the rows */
    lightgcn_backward_rows(&adj, gr, D, (int)L, alpha, bpart, rows, n, &done_b);
    ASSERT_EQ(ldf, 2);
    ASSERT_EQ(done_f, 2 * N + n); /* levels 1, 2 whole; level 3 = the batch's rows */
    ASSERT_EQ(adj.dense_level, 2); /* one hop from the rows is already dense: levels 2, 1, 0 whole */
    ASSERT_EQ(done_b, L * N);
    for (int64_t k = 0; k < n; k++) ASSERT_EQ(memcmp(part + rows[k] * D, full + rows[k] * D, (size_t)D * sizeof(float)), 0);
    ASSERT_EQ(memcmp(bpart, bfull, (size_t)(N * D) * sizeof(float)), 0);
    free(x), free(gr), free(full), free(part), free(bfull), free(bpart), free(rows);
    lightgcn_adj_free(&adj);
    csc_free(&g);
}

TEST(alpha_lists) {
    float a[LIGHTGCN_MAX_LAYERS + 1];
    ASSERT_EQ(lightgcn_alpha(a, 3, NULL, 0), 0);
    ASSERT_EQ(a[0], 0.25f);
    ASSERT_EQ(a[3], 0.25f);
    const double one = 0.5, four[4] = {1, 2, 3, 4};
    ASSERT_EQ(lightgcn_alpha(a, 2, &one, 1), 0);
    ASSERT_EQ(a[2], 0.5f);
    ASSERT_EQ(lightgcn_alpha(a, 3, four, 4), 0);
    ASSERT_EQ(a[3], 4.0f);
    ASSERT_EQ(lightgcn_alpha(a, 2, four, 4), -1);
    ASSERT_EQ(lightgcn_alpha(a, LIGHTGCN_MAX_LAYERS + 1, NULL, 0), -1);
}

int main(void) {
    RUN(torch_final_embeddings);
    RUN(torch_bpr_loss_and_gradient);
    RUN(torch_sparse_adam_trajectory);
    RUN(finite_differences);
    RUN(fast_matches_ref_bitwise_any_threads);
    RUN(dense_batch_takes_full_kernels);
    RUN(batch_rows_match_full_bitwise);
    RUN(alpha_lists);
    return test_summary();
}
