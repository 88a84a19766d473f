/* test_retrieval.c — GiGL's RetrievalLoss (nn/retrieval.h): hand-computed cases, finite-
 * difference gradients, the fast version against the _ref, and both against PyTorch fixtures
 * written by scripts/fixtures/make_retrieval_fixtures.py (tests/fixtures/retrieval). */
#include "io/npy.h"
#include "nn/retrieval.h"
#include "test.h"

#define FIX_SUBDIR "retrieval"
#include "test_fixture.h"
#include "util/rng.h"

typedef double (*loss_fn)(float *, float *, const float *, const float *, int64_t, int64_t, int64_t,
                          const int64_t *, const int64_t *, float, int, float *);

static double run_loss(loss_fn f, float *dq, float *dc, const float *q, const float *c, int64_t Q,
                       int64_t M, int64_t D, const int64_t *qid, const int64_t *cid, float temp, int rah) {
    float *work = malloc((size_t)retrieval_work_floats(Q, M) * sizeof(float) + 1);
    double l = f(dq, dc, q, c, Q, M, D, qid, cid, temp, rah, work);
    free(work);
    return l;
}

static void fill_uniform(float *x, int64_t n, uint64_t seed, float lo, float hi) {
    rng r;
    rng_init(&r, rng_key(seed, 0));
    for (int64_t k = 0; k < n; k++) x[k] = lo + (hi - lo) * (float)rng_uniform(&r);
}

/* max_k |a_k − b_k| / (|b_k| + floor · max|b|) */
static double max_rel_err(const float *a, const double *b, int64_t n, double floor) {
    double scale = 0.0, err = 0.0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs(b[k]));
    for (int64_t k = 0; k < n; k++) {
        double e = fabs((double)a[k] - b[k]) / (fabs(b[k]) + floor * scale + 1e-30);
        if (e > err || e != e) err = e;
    }
    return err;
}

static double max_rel_errf(const float *a, const float *b, int64_t n, double floor) {
    double *bd = malloc((size_t)n * sizeof(double));
    for (int64_t k = 0; k < n; k++) bd[k] = b[k];
    double e = max_rel_err(a, bd, n, floor);
    free(bd);
    return e;
}

/* Q = 1, M = 2, D = 1, no masking: loss = log(1 + e^{s1 − s0}), s_j = q·c_j / temp. */
TEST(hand_two_candidates) {
    const float q[1] = {2.0f}, c[2] = {0.5f, 1.0f};
    float dq[1], dc[2];
    for (int fast = 0; fast < 2; fast++) {
        double l = run_loss(fast ? retrieval_loss : retrieval_loss_ref, dq, dc, q, c, 1, 2, 1, NULL, NULL,
                            0.5f, 0);
        const double s0 = 2.0, s1 = 4.0, p1 = 1.0 / (1.0 + exp(s0 - s1));
        ASSERT_NEAR(l, log(1.0 + exp(s1 - s0)), 1e-6);
        // ∂/∂s0 = p0 − 1 = −p1, ∂/∂s1 = p1; s_j = q c_j / 0.5
        ASSERT_NEAR(dq[0], (-p1 * 0.5 + p1 * 1.0) / 0.5, 1e-6);
        ASSERT_NEAR(dc[0], -p1 * 2.0 / 0.5, 1e-6);
        ASSERT_NEAR(dc[1], p1 * 2.0 / 0.5, 1e-6);
    }
}

/* Every other candidate masked: the row's loss is 0 and its gradients vanish; the masked
 * candidate gets no gradient even though its score is the largest. */
TEST(hand_fully_masked_row) {
    // D = 1, Q = 2, M = 3. Query 0 (target id 7): candidate 1 has the same query id -> masked,
    // candidate 2 (id 8) kept. Query 1 (target id 8): candidate 0 same query id -> masked,
    // candidate 2 has id 8 -> accidental hit, masked: only its own positive is left.
    const float q[2] = {1.0f, -1.0f}, c[3] = {1.0f, 2.0f, 9.0f};
    const int64_t qid[2] = {4, 4}, cid[3] = {7, 8, 8};
    float dq[2], dc[3];
    const double p2 = 1.0 / (1.0 + exp(-8.0)); /* row 0: softmax of {1, 9} at candidate 2 */
    for (int fast = 0; fast < 2; fast++) {
        double l = run_loss(fast ? retrieval_loss : retrieval_loss_ref, dq, dc, q, c, 2, 3, 1, qid, cid,
                            1.0f, 1);
        ASSERT_NEAR(l, 0.5 * log(1.0 + exp(8.0)), 1e-5); /* row 0: log(e^1 + e^9) - 1; row 1: 0 */
        ASSERT_NEAR(dq[0], 0.5 * (-p2 * 1.0 + p2 * 9.0), 1e-5);
        ASSERT_NEAR(dq[1], 0.0, 1e-7);
        ASSERT_NEAR(dc[0], -0.5 * p2 * 1.0, 1e-6);
        ASSERT_NEAR(dc[1], 0.0, 1e-7); /* masked for row 0, p = 1 for row 1 */
        ASSERT_NEAR(dc[2], 0.5 * p2 * 1.0, 1e-6);
    }
    // without the masks both rows see all three candidates: a larger loss
    double l_open = run_loss(retrieval_loss, dq, dc, q, c, 2, 3, 1, NULL, cid, 1.0f, 0);
    ASSERT(l_open > 0.5 * log(1.0 + exp(8.0)) + 0.1);
}

/* A batch with repeated anchors, a positive shared by two anchors, and random negatives that
 * hit positives: Q = 5, H = 2, R = 4, D = 3. */
#define FD_Q 5
#define FD_M 11
#define FD_D 3
static const int64_t FD_QID[FD_Q] = {1, 1, 2, 3, 3};
static const int64_t FD_CID[FD_M] = {10, 11, 10, 12, 13, /* hard */ 11, 20, /* random */ 12, 21, 10, 22};

TEST(finite_differences) {
    float q[FD_Q * FD_D], c[FD_M * FD_D], dq[FD_Q * FD_D], dc[FD_M * FD_D], dq_ref[FD_Q * FD_D],
        dc_ref[FD_M * FD_D];
    fill_uniform(q, FD_Q * FD_D, 1, -1.0f, 1.0f);
    fill_uniform(c, FD_M * FD_D, 2, -1.0f, 1.0f);
    for (int rah = 0; rah < 2; rah++) {
        for (int use_qid = 0; use_qid < 2; use_qid++) {
            const int64_t *qid = use_qid ? FD_QID : NULL;
            const float temp = 0.7f;
            run_loss(retrieval_loss, dq, dc, q, c, FD_Q, FD_M, FD_D, qid, FD_CID, temp, rah);
            run_loss(retrieval_loss_ref, dq_ref, dc_ref, q, c, FD_Q, FD_M, FD_D, qid, FD_CID, temp, rah);
            double fd_q[FD_Q * FD_D], fd_c[FD_M * FD_D];
            float gq[FD_Q * FD_D], gc[FD_M * FD_D];
            for (int which = 0; which < 2; which++) {
                float *x = which ? c : q;
                double *fd = which ? fd_c : fd_q;
                const int64_t n = which ? FD_M * FD_D : FD_Q * FD_D;
                for (int64_t k = 0; k < n; k++) {
                    const float x0 = x[k], h = 1e-3f;
                    x[k] = x0 + h;
                    const double xp = x[k];
                    double lp =
                        run_loss(retrieval_loss_ref, gq, gc, q, c, FD_Q, FD_M, FD_D, qid, FD_CID, temp, rah);
                    x[k] = x0 - h;
                    const double xm = x[k];
                    double lm =
                        run_loss(retrieval_loss_ref, gq, gc, q, c, FD_Q, FD_M, FD_D, qid, FD_CID, temp, rah);
                    x[k] = x0;
                    fd[k] = (lp - lm) / (xp - xm);
                }
            }
            const double eq = max_rel_err(dq_ref, fd_q, FD_Q * FD_D, 1e-2);
            const double ec = max_rel_err(dc_ref, fd_c, FD_M * FD_D, 1e-2);
            const double eqf = max_rel_err(dq, fd_q, FD_Q * FD_D, 1e-2);
            const double ecf = max_rel_err(dc, fd_c, FD_M * FD_D, 1e-2);
            fprintf(stderr, "  rah %d qid %d: fd vs ref dq %.2g dc %.2g, fd vs fast dq %.2g dc %.2g\n", rah,
                    use_qid, eq, ec, eqf, ecf);
            ASSERT(eq < 1e-4 && ec < 1e-4);
            ASSERT(eqf < 1e-4 && ecf < 1e-4);
        }
    }
}

/* The masks change the loss: each of query-id masking and accidental-hit removal moves it. */
TEST(masks_matter) {
    float q[FD_Q * FD_D], c[FD_M * FD_D], dq[FD_Q * FD_D], dc[FD_M * FD_D];
    fill_uniform(q, FD_Q * FD_D, 3, -1.0f, 1.0f);
    fill_uniform(c, FD_M * FD_D, 4, -1.0f, 1.0f);
    double l_none = run_loss(retrieval_loss, dq, dc, q, c, FD_Q, FD_M, FD_D, NULL, FD_CID, 1.0f, 0);
    double l_qid = run_loss(retrieval_loss, dq, dc, q, c, FD_Q, FD_M, FD_D, FD_QID, FD_CID, 1.0f, 0);
    double l_both = run_loss(retrieval_loss, dq, dc, q, c, FD_Q, FD_M, FD_D, FD_QID, FD_CID, 1.0f, 1);
    // removing terms from a logsumexp strictly lowers it
    ASSERT(l_qid < l_none - 1e-4);
    ASSERT(l_both < l_qid - 1e-4);
}

TEST(fast_vs_ref_random) {
    const int64_t Q = 96, H = 16, R = 150, M = Q + H + R, D = 32;
    float *q = malloc((size_t)(Q * D) * sizeof(float)), *c = malloc((size_t)(M * D) * sizeof(float));
    float *dq = malloc((size_t)(Q * D) * sizeof(float)), *dc = malloc((size_t)(M * D) * sizeof(float));
    float *dq2 = malloc((size_t)(Q * D) * sizeof(float)), *dc2 = malloc((size_t)(M * D) * sizeof(float));
    int64_t *qid = malloc((size_t)Q * sizeof(int64_t)), *cid = malloc((size_t)M * sizeof(int64_t));
    rng r;
    rng_init(&r, rng_key(7, 0));
    for (int64_t i = 0; i < Q; i++) qid[i] = i / 3;                      /* 3 positives per anchor */
    for (int64_t j = 0; j < M; j++) cid[j] = (int64_t)rng_below(&r, 200); /* many accidental hits */
    fill_uniform(q, Q * D, 8, -0.5f, 0.5f);
    fill_uniform(c, M * D, 9, -0.5f, 0.5f);
    for (int rah = 0; rah < 2; rah++) {
        const float temp = rah ? 0.1f : 1.0f;
        double lf = run_loss(retrieval_loss, dq, dc, q, c, Q, M, D, qid, cid, temp, rah);
        double lr = run_loss(retrieval_loss_ref, dq2, dc2, q, c, Q, M, D, qid, cid, temp, rah);
        const double eq = max_rel_errf(dq, dq2, Q * D, 1e-2), ec = max_rel_errf(dc, dc2, M * D, 1e-2);
        fprintf(stderr, "  rah %d: loss %.9g vs %.9g, dq rel %.2g, dc rel %.2g\n", rah, lf, lr, eq, ec);
        ASSERT_NEAR(lf, lr, 1e-5 * fabs(lr));
        ASSERT(eq < 1e-4 && ec < 1e-4);
        // deterministic for a fixed thread count
        double lf2 = run_loss(retrieval_loss, dq2, dc2, q, c, Q, M, D, qid, cid, temp, rah);
        ASSERT(lf2 == lf);
        ASSERT(memcmp(dq, dq2, (size_t)(Q * D) * sizeof(float)) == 0);
        ASSERT(memcmp(dc, dc2, (size_t)(M * D) * sizeof(float)) == 0);
    }
    free(q), free(c), free(dq), free(dc), free(dq2), free(dc2), free(qid), free(cid);
}

/* No queries: loss 0 and dc overwritten with zeros. */
TEST(empty_batch) {
    float c[6] = {1, 2, 3, 4, 5, 6}, dc[6], dq[1] = {42.0f};
    for (int fast = 0; fast < 2; fast++) {
        for (int k = 0; k < 6; k++) dc[k] = 99.0f;
        double l = run_loss(fast ? retrieval_loss : retrieval_loss_ref, dq, dc, NULL, c, 0, 3, 2, NULL, NULL,
                            1.0f, 0);
        ASSERT(l == 0.0);
        for (int k = 0; k < 6; k++) ASSERT(dc[k] == 0.0f);
        ASSERT(dq[0] == 42.0f);
    }
}

/* ---- PyTorch fixtures ---------------------------------------------------------------------- */


TEST(pytorch_fixtures) {
    npy_array qa, ca, qida, cida;
    ASSERT(fix_open(&qa, "q.npy", NPY_DTYPE_FLOAT32) == 0);
    ASSERT(fix_open(&ca, "c.npy", NPY_DTYPE_FLOAT32) == 0);
    ASSERT(fix_open(&qida, "query_ids.npy", NPY_DTYPE_INT64) == 0);
    ASSERT(fix_open(&cida, "cand_ids.npy", NPY_DTYPE_INT64) == 0);
    const int64_t Q = qa.shape[0], D = qa.shape[1], M = ca.shape[0];
    ASSERT(qa.ndim == 2 && ca.ndim == 2 && ca.shape[1] == D && qida.count == Q && cida.count == M);
    float *dq = malloc((size_t)(Q * D) * sizeof(float)), *dc = malloc((size_t)(M * D) * sizeof(float));
    const char *cases[] = {"rah", "plain", "noqid"};
    int ok = 1;
    for (int t = 0; t < 3; t++) {
        char name[256];
        npy_array pa, la, dqa, dca;
        snprintf(name, sizeof name, "%s/params.npy", cases[t]);
        ASSERT(fix_open(&pa, name, NPY_DTYPE_FLOAT64) == 0);
        snprintf(name, sizeof name, "%s/loss.npy", cases[t]);
        ASSERT(fix_open(&la, name, NPY_DTYPE_FLOAT64) == 0);
        snprintf(name, sizeof name, "%s/dq.npy", cases[t]);
        ASSERT(fix_open(&dqa, name, NPY_DTYPE_FLOAT32) == 0);
        snprintf(name, sizeof name, "%s/dc.npy", cases[t]);
        ASSERT(fix_open(&dca, name, NPY_DTYPE_FLOAT32) == 0);
        ASSERT(dqa.count == Q * D && dca.count == M * D);
        const double *p = pa.data;
        const float temp = (float)p[0];
        const int rah = p[1] != 0.0;
        const int64_t *qid = p[2] != 0.0 ? qida.data : NULL;
        const double want = ((const double *)la.data)[0];
        for (int fast = 0; fast < 2; fast++) {
            double l = run_loss(fast ? retrieval_loss : retrieval_loss_ref, dq, dc, qa.data, ca.data, Q, M, D,
                                qid, cida.data, temp, rah);
            /* the rule of test_fixture.h, dq and dc one group (both kernels sum in float) */
            const double scale = fmax(fix_max_abs(dqa.data, Q * D), fix_max_abs(dca.data, M * D));
            fprintf(stderr, " %s %s:\n", cases[t], fast ? "fast" : "ref");
            ok &= fix_scalar("loss", l, want, FIX_TOL_F32);
            ok &= fix_allclose("dq", dq, dqa.data, Q * D, scale, FIX_TOL_F32, NULL);
            ok &= fix_allclose("dc", dc, dca.data, M * D, scale, FIX_TOL_F32, NULL);
        }
        npy_close(&pa), npy_close(&la), npy_close(&dqa), npy_close(&dca);
    }
    free(dq), free(dc);
    npy_close(&qa), npy_close(&ca), npy_close(&qida), npy_close(&cida);
    ASSERT(ok);
}

int main(void) {
    RUN(hand_two_candidates);
    RUN(hand_fully_masked_row);
    RUN(finite_differences);
    RUN(masks_matter);
    RUN(fast_vs_ref_random);
    RUN(empty_batch);
    RUN(pytorch_fixtures);
    return test_summary();
}
