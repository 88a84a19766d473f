/* test_lp_loss.c — the link-prediction task losses (nn/lp_loss.h: GiGL's Softmax, Margin,
 * DirectAU, and BPR) and their weighted combination with Retrieval: hand-computed cases,
 * finite-difference gradients, the fast kernels against their _ref, accumulation and weights,
 * the GEMM accounting, and PyTorch fixtures written by scripts/fixtures/make_lp_loss_fixtures.py
 * (tests/fixtures/lp_loss) from GiGL's formulas, compared tensor by tensor. */
#include "io/npy.h"
#include "nn/lp_loss.h"
#include "nn/retrieval.h"
#include "test.h"

#define FIX_SUBDIR "lp_loss"
#include "test_fixture.h"
#include "util/rng.h"

enum { K_SOFTMAX, K_MARGIN, K_DIRECTAU, K_BPR, NUM_KINDS };
static const char *const KIND_NAMES[NUM_KINDS] = {"Softmax", "Margin", "DirectAU", "BPR"};

/* One loss with its parameters: p[0], p[1], p[2] as each kind reads them. */
typedef struct loss_case {
    int kind;
    float p[3];
    float weight;
} loss_case;

/* Runs the case (fast or ref) on b, accumulating into dq / dc; work allocated here. */
static double run_case(const loss_case *lc, int fast, float *dq, float *dc, const lp_pairs *b) {
    static const lp_task_kind KINDS[NUM_KINDS] = {LP_TASK_SOFTMAX, LP_TASK_MARGIN, LP_TASK_DIRECTAU, LP_TASK_BPR};
    float *work = malloc((size_t)(lp_loss_work_floats(KINDS[lc->kind], b->P, b->H, b->K, b->D) + 2) * sizeof(float));
    double l = 0.0;
    switch (lc->kind) {
    case K_SOFTMAX:
        l = (fast ? lp_loss_softmax : lp_loss_softmax_ref)(dq, dc, b, lc->p[0], lc->weight, work);
        break;
    case K_MARGIN: l = (fast ? lp_loss_margin : lp_loss_margin_ref)(dq, dc, b, lc->p[0], lc->weight, work); break;
    case K_DIRECTAU:
        l = (fast ? lp_loss_directau : lp_loss_directau_ref)(dq, dc, b, lc->p[0], lc->p[1], lc->p[2], lc->weight, work);
        break;
    case K_BPR:
        l = (fast ? lp_loss_bpr : lp_loss_bpr_ref)(dq, dc, b, (int64_t)lc->p[0], lc->weight, work);
        break;
    default: break;
    }
    free(work);
    return l;
}

/* Zeroed gradients, then run_case. */
static double run_fresh(const loss_case *lc, int fast, float *dq, float *dc, const lp_pairs *b) {
    memset(dq, 0, (size_t)(b->P * b->D) * sizeof(float));
    memset(dc, 0, (size_t)((b->P + b->H + b->K) * b->D) * sizeof(float));
    return run_case(lc, fast, dq, dc, b);
}

static void fill(float *x, int64_t n, uint64_t seed, float lo, float hi) {
    rng r;
    rng_init(&r, rng_key(seed, 0));
    for (int64_t k = 0; k < n; k++) x[k] = lo + (hi - lo) * (float)rng_uniform(&r);
}

/* max_k |a_k − b_k| / (|b_k| + floor · max|b|) */
static double rel_err(const float *a, const float *b, int64_t n, double floor) {
    double scale = 0.0, err = 0.0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs((double)b[k]));
    for (int64_t k = 0; k < n; k++) {
        const double e = fabs((double)a[k] - (double)b[k]) / (fabs((double)b[k]) + floor * scale + 1e-30);
        if (e > err || e != e) err = e;
    }
    return err;
}

/* ---- names -------------------------------------------------------------------------------- */

TEST(task_names) {
    lp_task_kind k;
    for (int i = 0; i < LP_TASK_COUNT; i++) {
        ASSERT_EQ(lp_task_parse(lp_task_name((lp_task_kind)i), &k), 0);
        ASSERT_EQ(k, i);
    }
    ASSERT_EQ(lp_task_parse("gigl.src.common.models.layers.task.DirectAU", &k), 0);
    ASSERT_EQ(k, LP_TASK_DIRECTAU);
    ASSERT_EQ(lp_task_parse("softmax", &k), 0);
    ASSERT_EQ(k, LP_TASK_SOFTMAX);
    ASSERT_EQ(lp_task_parse("GRACE", &k), -1);
    ASSERT_EQ(lp_task_parse("", &k), -1);
    lp_task t;
    lp_task_defaults(&t, LP_TASK_MARGIN); /* GiGL's task constructors' defaults */
    ASSERT(t.weight == 1.0 && t.margin == 0.5);
    lp_task_defaults(&t, LP_TASK_SOFTMAX);
    ASSERT(t.softmax_temperature == 0.07);
    lp_task_defaults(&t, LP_TASK_DIRECTAU);
    ASSERT(t.gamma == 1.0 && t.alpha == 2.0 && t.temperature == 2.0);
    lp_task_defaults(&t, LP_TASK_BPR);
    ASSERT(t.num_negatives == 1);
}

/* ---- hand-computed ------------------------------------------------------------------------ */

/* D = 1, one pair: q = 2, positive 0.5, random negative 1: s_pos = 1, s_neg = 2. */
TEST(hand_bpr_margin_softmax) {
    const float q[1] = {2.0f}, c[2] = {0.5f, 1.0f};
    const lp_pairs b = {q, c, 1, 0, 1, 1, NULL, NULL};
    float dq[1], dc[2];
    const double sg = 1.0 / (1.0 + exp(-1.0)); /* σ(s_neg − s_pos) */
    for (int fast = 0; fast < 2; fast++) {
        /* BPR: softplus(2 − 1), weight 2 scales the gradients only */
        loss_case bpr = {K_BPR, {1, 0, 0}, 2.0f};
        double l = run_fresh(&bpr, fast, dq, dc, &b);
        ASSERT_NEAR(l, log(1.0 + exp(1.0)), 1e-6);
        ASSERT_NEAR(dq[0], 2.0 * sg * (1.0 - 0.5), 1e-6);
        ASSERT_NEAR(dc[0], -2.0 * sg * 2.0, 1e-6);
        ASSERT_NEAR(dc[1], 2.0 * sg * 2.0, 1e-6);
        /* Margin 0.5: max(0, 0.5 − (1 − 2)) = 1.5, active */
        loss_case mg = {K_MARGIN, {0.5f, 0, 0}, 1.0f};
        l = run_fresh(&mg, fast, dq, dc, &b);
        ASSERT_NEAR(l, 1.5, 1e-6);
        ASSERT_NEAR(dq[0], 1.0 - 0.5, 1e-6);
        ASSERT_NEAR(dc[0], -2.0, 1e-6);
        ASSERT_NEAR(dc[1], 2.0, 1e-6);
        /* Margin −2: max(0, −2 + 1) = 0, inactive: no gradient */
        loss_case mg0 = {K_MARGIN, {-2.0f, 0, 0}, 1.0f};
        l = run_fresh(&mg0, fast, dq, dc, &b);
        ASSERT(l == 0.0 && dq[0] == 0.0f && dc[0] == 0.0f && dc[1] == 0.0f);
        /* Softmax τ = 0.5: log(1 + e^{(2 − 1) / 0.5}) */
        loss_case sm = {K_SOFTMAX, {0.5f, 0, 0}, 1.0f};
        l = run_fresh(&sm, fast, dq, dc, &b);
        const double p1 = 1.0 / (1.0 + exp(-2.0));
        ASSERT_NEAR(l, log(1.0 + exp(2.0)), 1e-6);
        ASSERT_NEAR(dq[0], (-p1 * 0.5 + p1 * 1.0) / 0.5, 1e-5);
        ASSERT_NEAR(dc[0], -p1 * 2.0 / 0.5, 1e-5);
        ASSERT_NEAR(dc[1], p1 * 2.0 / 0.5, 1e-5);
    }
}

/* DirectAU, P = 2, D = 1: u = {0, 1}, i = {0.5, 1.5}: alignment mean(0.5², 0.5²) = 0.25;
 * uniformity of each: one pair at distance 1: log exp(−2) = −2; loss = 0.25 + (−2 − 2) / 2. */
TEST(hand_directau) {
    const float q[2] = {0.0f, 1.0f}, c[2] = {0.5f, 1.5f};
    const lp_pairs b = {q, c, 2, 0, 0, 1, NULL, NULL};
    float dq[2], dc[2];
    loss_case da = {K_DIRECTAU, {1.0f, 2.0f, 2.0f}, 1.0f};
    for (int fast = 0; fast < 2; fast++) {
        double l = run_fresh(&da, fast, dq, dc, &b);
        ASSERT_NEAR(l, 0.25 - 2.0, 1e-6);
        /* alignment: 2 (u − i) / 2 = −0.5; uniformity ∂/∂u_0 of log exp(−2 (u0 − u1)²) / 2 = −2 (u0 − u1) = 2 */
        ASSERT_NEAR(dq[0], -0.5 + 2.0, 1e-5);
        ASSERT_NEAR(dq[1], -0.5 - 2.0, 1e-5);
        ASSERT_NEAR(dc[0], 0.5 + 2.0, 1e-5);
        ASSERT_NEAR(dc[1], 0.5 - 2.0, 1e-5);
    }
    /* P = 1: no pair for the uniformity (GiGL: NaN), only the alignment */
    const lp_pairs b1 = {q, c, 1, 0, 0, 1, NULL, NULL};
    for (int fast = 0; fast < 2; fast++) ASSERT_NEAR(run_fresh(&da, fast, dq, dc, &b1), 0.25, 1e-6);
}

/* Empty batches and batches without negatives: loss 0, gradients untouched. */
TEST(empty_batches) {
    float q[4] = {1, 2, 3, 4}, c[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dq[4], dc[8];
    const lp_pairs none = {q, c, 0, 0, 4, 2, NULL, NULL};
    const lp_pairs noneg = {q, c, 2, 0, 0, 2, NULL, NULL};
    for (int fast = 0; fast < 2; fast++)
        for (int k = 0; k < NUM_KINDS; k++) {
            loss_case lc = {k, {1.0f, 2.0f, 2.0f}, 1.0f};
            for (int i = 0; i < 4; i++) dq[i] = 7.0f;
            for (int i = 0; i < 8; i++) dc[i] = 7.0f;
            ASSERT(run_case(&lc, fast, dq, dc, &none) == 0.0);
            if (k == K_MARGIN || k == K_BPR) ASSERT(run_case(&lc, fast, dq, dc, &noneg) == 0.0);
            for (int i = 0; i < 4; i++) ASSERT(dq[i] == 7.0f);
            for (int i = 0; i < 8; i++) ASSERT(dc[i] == 7.0f);
        }
    /* Softmax without negatives: the row is its positive alone, loss 0 */
    loss_case sm = {K_SOFTMAX, {0.3f, 0, 0}, 1.0f};
    ASSERT_NEAR(run_fresh(&sm, 1, dq, dc, &noneg), 0.0, 1e-7);
}

/* ---- a batch with repeated anchors and hard negatives ------------------------------------ */

#define FD_P 6
#define FD_H 5
#define FD_K 4
#define FD_D 3
#define FD_M (FD_P + FD_H + FD_K)
/* anchors: pairs 0-1 (anchor A, hard rows 0-1), 2 (B, none), 3-5 (C, hard rows 2-4) */
static const int64_t FD_OFF[FD_P] = {0, 0, 2, 2, 2, 2};
static const int64_t FD_LEN[FD_P] = {2, 2, 0, 3, 3, 3};

static void fd_batch(float *q, float *c, uint64_t seed) {
    float anchors[3 * FD_D];
    fill(anchors, 3 * FD_D, seed, -0.9f, 0.9f);
    const int which[FD_P] = {0, 0, 1, 2, 2, 2};
    for (int i = 0; i < FD_P; i++) memcpy(q + i * FD_D, anchors + which[i] * FD_D, FD_D * sizeof(float));
    fill(c, FD_M * FD_D, seed + 1, -0.9f, 0.9f);
}

typedef struct fd_ctx {
    const loss_case *lc;
    lp_pairs b;
    float *gq, *gc; /* scratch gradients */
} fd_ctx;

static double fd_eval(fd_ctx *x) { return run_fresh(x->lc, 0, x->gq, x->gc, &x->b); }

/* Central differences of the reference loss (double) against an analytic gradient g of x (n);
 * returns the max error |num − ana| / (|ana| + 1e-2 max|ana|). kinks != 0 (Margin, piecewise
 * linear in each coordinate): a hinge switching within ±h shows as one-sided slopes that
 * disagree; such coordinates are skipped and counted in *skipped. */
static double fd_max_err(fd_ctx *ctx, float *x, const float *g, int64_t n, int kinks, int *skipped) {
    double scale = 0.0, worst = 0.0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs((double)g[k]));
    const double L0 = fd_eval(ctx);
    for (int64_t k = 0; k < n; k++) {
        const float x0 = x[k], h = 1e-3f;
        x[k] = x0 + h;
        const double xp = x[k], Lp = fd_eval(ctx);
        x[k] = x0 - h;
        const double xm = x[k], Lm = fd_eval(ctx);
        x[k] = x0;
        const double num = (Lp - Lm) / (xp - xm);
        const double gp = (Lp - L0) / (xp - x0), gm = (L0 - Lm) / (x0 - xm);
        if (kinks && fabs(gp - gm) > 1e-4 * (fabs(gp) + fabs(gm)) + 1e-6 * scale) { /* a kink inside ±h */
            (*skipped)++;
            continue;
        }
        const double e = fabs(num - (double)g[k]) / (fabs((double)g[k]) + 1e-2 * scale + 1e-12);
        if (e > worst) worst = e;
    }
    return worst;
}

TEST(finite_differences) {
    float q[FD_P * FD_D], c[FD_M * FD_D], dq[FD_P * FD_D], dc[FD_M * FD_D], gq[FD_P * FD_D], gc[FD_M * FD_D];
    const loss_case cases[] = {
        {K_SOFTMAX, {0.3f, 0, 0}, 1.0f}, {K_SOFTMAX, {1.0f, 0, 0}, 1.0f}, {K_MARGIN, {0.5f, 0, 0}, 1.0f},
        {K_MARGIN, {0.1f, 0, 0}, 1.0f},  {K_DIRECTAU, {1.0f, 2.0f, 2.0f}, 1.0f}, {K_DIRECTAU, {0.7f, 1.5f, 1.0f}, 1.0f},
        {K_BPR, {1, 0, 0}, 1.0f},         {K_BPR, {3, 0, 0}, 1.0f},
    };
    for (int listed = 0; listed < 2; listed++) {
        fd_batch(q, c, 11 + (uint64_t)listed);
        const lp_pairs b = {q, c, FD_P, listed ? FD_H : 0, FD_K, FD_D, listed ? FD_OFF : NULL, listed ? FD_LEN : NULL};
        /* without listed negatives the H rows are absent: c's rows [P, P + K) are the random ones */
        for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
            fd_ctx ctx = {&cases[t], b, gq, gc};
            const int64_t M = b.P + b.H + b.K;
            for (int fast = 0; fast < 2; fast++) {
                run_fresh(&cases[t], fast, dq, dc, &b);
                int skipped = 0;
                const int kinks = cases[t].kind == K_MARGIN;
                const double eq = fd_max_err(&ctx, q, dq, FD_P * FD_D, kinks, &skipped);
                const double ec = fd_max_err(&ctx, c, dc, M * FD_D, kinks, &skipped);
                fprintf(stderr, "  %-8s p %.2g %.2g %.2g listed %d %s: fd err dq %.2g dc %.2g (%d kinks skipped)\n",
                        KIND_NAMES[cases[t].kind], cases[t].p[0], cases[t].p[1], cases[t].p[2], listed,
                        fast ? "fast" : "ref ", eq, ec, skipped);
                ASSERT(eq < 2e-4 && ec < 2e-4);
                ASSERT(skipped * 10 <= (int)((FD_P + M) * FD_D));
            }
        }
    }
}

/* Bigger random batches: the fast kernels give the references' values, deterministically.
 * Shape 1 has more pairs than Softmax's group (SOFTMAX_GROUP, 512): 9 groups of 4 tiles, the
 * last partial, and a score spread (temperature 0.01) that sends some exps to the clamp. */
static void fast_vs_ref_shape(int64_t P, int64_t H, int64_t K, int64_t D, float sm_temp, double grad_tol) {
    const int64_t M = P + H + K;
    float *q = malloc((size_t)(P * D) * sizeof(float)), *c = malloc((size_t)(M * D) * sizeof(float));
    float *dq = malloc((size_t)(P * D) * sizeof(float)), *dc = malloc((size_t)(M * D) * sizeof(float));
    float *dq2 = malloc((size_t)(P * D) * sizeof(float)), *dc2 = malloc((size_t)(M * D) * sizeof(float));
    int64_t *off = malloc((size_t)P * sizeof(int64_t)), *len = malloc((size_t)P * sizeof(int64_t));
    for (int64_t i = 0; i < P; i++) { /* groups of 3 pairs share 0-4 listed negatives */
        const int64_t g = i / 3;
        off[i] = (g * 5) % 37;
        len[i] = g % 5 < 4 ? g % 5 : 0;
        if (off[i] + len[i] > H) len[i] = 0;
    }
    fill(q, P * D, 21, -0.3f, 0.3f);
    for (int64_t i = 1; i < P; i += 3) memcpy(q + i * D, q + (i - 1) * D, (size_t)D * sizeof(float)); /* repeats */
    fill(c, M * D, 22, -0.3f, 0.3f);
    const lp_pairs b = {q, c, P, H, K, D, off, len};
    const loss_case cases[] = {{K_SOFTMAX, {sm_temp, 0, 0}, 0.5f}, {K_MARGIN, {0.05f, 0, 0}, 1.5f},
                               {K_DIRECTAU, {1.0f, 2.0f, 2.0f}, 1.0f}, {K_BPR, {4, 0, 0}, 2.0f}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const double lf = run_fresh(&cases[t], 1, dq, dc, &b);
        const double lr = run_fresh(&cases[t], 0, dq2, dc2, &b);
        const double eq = rel_err(dq, dq2, P * D, 1e-2), ec = rel_err(dc, dc2, M * D, 1e-2);
        fprintf(stderr, "  %-8s loss %.9g vs ref %.9g, dq rel %.2g, dc rel %.2g\n", KIND_NAMES[cases[t].kind], lf, lr,
                eq, ec);
        ASSERT(fabs(lf - lr) <= 1e-5 * fabs(lr) + 1e-7);
        ASSERT(eq < grad_tol && ec < grad_tol);
        ASSERT(run_fresh(&cases[t], 1, dq2, dc2, &b) == lf); /* same bits when run again */
        ASSERT(memcmp(dq, dq2, (size_t)(P * D) * sizeof(float)) == 0);
        ASSERT(memcmp(dc, dc2, (size_t)(M * D) * sizeof(float)) == 0);
    }
    free(q), free(c), free(dq), free(dc), free(dq2), free(dc2), free(off), free(len);
}

TEST(fast_vs_ref_random) {
    fast_vs_ref_shape(96, 40, 70, 24, 0.07f, 1e-4);
    /* logits up to ~150: the float scores' rounding (~1e-7 relative) alone puts the gradients
     * ~3e-4 from the double reference (glibc's expf in place of the vector exp gives the same).
     * The reference is quadratic in the pairs: under the sanitizers (CGNN_TEST_SANITIZED=1, 25 s
     * at 4500 pairs) the shape keeps every case (full groups, a partial group of full tiles and
     * a partial tile) with fewer groups: 2 x 512 + 2 x 128 + 20 pairs */
    const char *san = getenv("CGNN_TEST_SANITIZED");
    fast_vs_ref_shape(san && strcmp(san, "1") == 0 ? 1300 : 4500, 40, 100, 64, 0.01f, 1e-3);
}

/* Softmax over more groups than run at once (2 rounds of 16 groups of 512 pairs, then a partial
 * one): the reference's values; and its 8-lane (AVX2) row kernels give the 4-lane ones' bits
 * (CGNN_NO_AVX=1), with K leaving every kind of tail (8-lane body, a 4-lane step, a padded rest). */
TEST(softmax_rounds_and_row_kernels) {
    const int64_t P = 2 * 512 * 16 + 77, H = 40, D = 8;
    const int64_t Ks[] = {37, 12, 3};
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
        const int64_t K = Ks[ki], M = P + H + K;
        float *q = malloc((size_t)(P * D) * sizeof(float)), *c = malloc((size_t)(M * D) * sizeof(float));
        float *dq = malloc((size_t)(P * D) * sizeof(float)), *dc = malloc((size_t)(M * D) * sizeof(float));
        float *dq2 = malloc((size_t)(P * D) * sizeof(float)), *dc2 = malloc((size_t)(M * D) * sizeof(float));
        int64_t *off = malloc((size_t)P * sizeof(int64_t)), *len = malloc((size_t)P * sizeof(int64_t));
        for (int64_t i = 0; i < P; i++) off[i] = i % (H - 2), len[i] = i % 3;
        fill(q, P * D, 23 + (int)ki, -1.0f, 1.0f);
        fill(c, M * D, 24 + (int)ki, -1.0f, 1.0f);
        const lp_pairs b = {q, c, P, H, K, D, off, len};
        const loss_case sm = {K_SOFTMAX, {0.1f, 0, 0}, 0.5f};
        unsetenv("CGNN_NO_AVX");
        const double lf = run_fresh(&sm, 1, dq, dc, &b);
        const double lr = run_fresh(&sm, 0, dq2, dc2, &b);
        const double eq = rel_err(dq, dq2, P * D, 1e-2), ec = rel_err(dc, dc2, M * D, 1e-2);
        fprintf(stderr, "  Softmax P %lld K %lld: loss %.9g vs ref %.9g, dq rel %.2g, dc rel %.2g\n", (long long)P,
                (long long)K, lf, lr, eq, ec);
        ASSERT(fabs(lf - lr) <= 1e-5 * fabs(lr));
        ASSERT(eq < 1e-4 && ec < 1e-4);
        setenv("CGNN_NO_AVX", "1", 1);
        ASSERT(run_fresh(&sm, 1, dq2, dc2, &b) == lf);
        unsetenv("CGNN_NO_AVX");
        ASSERT(memcmp(dq, dq2, (size_t)(P * D) * sizeof(float)) == 0);
        ASSERT(memcmp(dc, dc2, (size_t)(M * D) * sizeof(float)) == 0);
        free(q), free(c), free(dq), free(dc), free(dq2), free(dc2), free(off), free(len);
    }
}

/* Gradients accumulate (+=) and scale with the weight; the loss does not. */
TEST(accumulate_and_weight) {
    float q[FD_P * FD_D], c[FD_M * FD_D], dq[FD_P * FD_D], dc[FD_M * FD_D], dq1[FD_P * FD_D], dc1[FD_M * FD_D];
    fd_batch(q, c, 31);
    const lp_pairs b = {q, c, FD_P, FD_H, FD_K, FD_D, FD_OFF, FD_LEN};
    for (int k = 0; k < NUM_KINDS; k++)
        for (int fast = 0; fast < 2; fast++) {
            loss_case one = {k, {k == K_BPR ? 2.0f : 0.5f, 2.0f, 2.0f}, 1.0f}, three = one;
            three.weight = 3.0f;
            const double l1 = run_fresh(&one, fast, dq1, dc1, &b);
            for (int i = 0; i < FD_P * FD_D; i++) dq[i] = 1.0f;
            for (int i = 0; i < FD_M * FD_D; i++) dc[i] = -1.0f;
            const double l3 = run_case(&three, fast, dq, dc, &b);
            ASSERT(l1 == l3);
            for (int i = 0; i < FD_P * FD_D; i++) ASSERT_NEAR(dq[i], 1.0f + 3.0f * dq1[i], 1e-5);
            for (int i = 0; i < FD_M * FD_D; i++) ASSERT_NEAR(dc[i], -1.0f + 3.0f * dc1[i], 1e-5);
        }
}

/* ---- the combination --------------------------------------------------------------------- */

/* The default task (Retrieval, weight 1) is retrieval_loss itself, bit for bit. */
TEST(tasks_plain_retrieval_bitwise) {
    float q[FD_P * FD_D], c[FD_M * FD_D], dq[FD_P * FD_D], dc[FD_M * FD_D], dq2[FD_P * FD_D], dc2[FD_M * FD_D];
    fd_batch(q, c, 41);
    const int64_t qid[FD_P] = {1, 1, 2, 3, 3, 3};
    int64_t cid[FD_M];
    for (int j = 0; j < FD_M; j++) cid[j] = 10 + j % 9; /* some accidental hits */
    const lp_pairs b = {q, c, FD_P, FD_H, FD_K, FD_D, FD_OFF, FD_LEN};
    lp_task t;
    lp_task_defaults(&t, LP_TASK_RETRIEVAL);
    t.temperature = 0.2;
    ASSERT(!lp_loss_tasks_need_retrieval_scratch(&t, 1));
    const int64_t W = lp_loss_tasks_work_floats(&t, 1, FD_P, FD_H, FD_K, FD_D);
    float *work = malloc((size_t)W * sizeof(float)), *w2 = malloc((size_t)retrieval_work_floats(FD_P, FD_M) * sizeof(float));
    double tl;
    const double l = lp_loss_tasks(dq, dc, &t, 1, &b, qid, cid, work, NULL, NULL, &tl);
    const double l2 = retrieval_loss(dq2, dc2, q, c, FD_P, FD_M, FD_D, qid, cid, 0.2f, 1, w2);
    ASSERT(l == l2 && tl == l2);
    ASSERT(memcmp(dq, dq2, sizeof dq) == 0 && memcmp(dc, dc2, sizeof dc) == 0);
    free(work), free(w2);
}

/* ---- GEMM accounting -------------------------------------------------------------------- */

TEST(gemm_accounting) {
    const int64_t P = 8, H = 3, K = 5, D = 4, M = P + H + K;
    float q[8 * 4], c[16 * 4], dq[8 * 4], dc[16 * 4];
    const int64_t off[8] = {0, 0, 1, 1, 1, 3, 3, 3}, len[8] = {1, 1, 2, 2, 2, 0, 0, 0};
    const int64_t qid[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t cid[16];
    for (int j = 0; j < 16; j++) cid[j] = 100 + j;
    fill(q, P * D, 51, -1, 1);
    fill(c, M * D, 52, -1, 1);
    const lp_pairs b = {q, c, P, H, K, D, off, len};
    ops_gemm_stats gs;
    memset(&gs, 0, sizeof gs);
    const double pkd = 2.0 * P * K * D;
    struct {
        loss_case lc;
        double flops;
    } want[] = {{{K_SOFTMAX, {0.5f, 0, 0}, 1.0f}, 3 * pkd}, /* scores, dq, dc_random */
                {{K_MARGIN, {0.5f, 0, 0}, 1.0f}, 3 * pkd},
                {{K_DIRECTAU, {1.0f, 2.0f, 2.0f}, 1.0f}, 2 * (2.0 * P * P * D) * 2}, /* Gram + W x, u and i */
                {{K_BPR, {2, 0, 0}, 1.0f}, 0}};
    for (size_t t = 0; t < sizeof want / sizeof want[0]; t++) {
        memset(&gs, 0, sizeof gs);
        lp_loss_gemm_stats_register(&gs);
        run_fresh(&want[t].lc, 1, dq, dc, &b);
        lp_loss_gemm_stats_register(NULL);
        fprintf(stderr, "  %-8s %lld GEMMs, %.0f FLOPs (want %.0f)\n", KIND_NAMES[want[t].lc.kind],
                (long long)gs.num_calls, gs.flops, want[t].flops);
        ASSERT(gs.flops == want[t].flops);
        ASSERT(gs.seconds >= 0.0);
    }
    /* retrieval_loss counts its 3 GEMMs: 2 Q M D each */
    memset(&gs, 0, sizeof gs);
    lp_loss_gemm_stats_register(&gs);
    float *work = malloc((size_t)retrieval_work_floats(P, M) * sizeof(float));
    retrieval_loss(dq, dc, q, c, P, M, D, qid, cid, 0.1f, 1, work);
    lp_loss_gemm_stats_register(NULL);
    ASSERT_EQ(gs.num_calls, 3);
    ASSERT(gs.flops == 3 * 2.0 * P * M * D);
    /* off: nothing counted */
    memset(&gs, 0, sizeof gs);
    retrieval_loss(dq, dc, q, c, P, M, D, qid, cid, 0.1f, 1, work);
    ASSERT_EQ(gs.num_calls, 0);
    free(work);
}

/* ---- PyTorch fixtures -------------------------------------------------------------------- */


typedef struct fixture {
    npy_array q, c, off, len, qid, cid;
    int64_t P, M, D, H;
} fixture;

static int fixture_open(fixture *f) {
    if (fix_open(&f->q, "q.npy", NPY_DTYPE_FLOAT32) || fix_open(&f->c, "c.npy", NPY_DTYPE_FLOAT32) ||
        fix_open(&f->off, "listed_off.npy", NPY_DTYPE_INT64) || fix_open(&f->len, "listed_len.npy", NPY_DTYPE_INT64) ||
        fix_open(&f->qid, "query_ids.npy", NPY_DTYPE_INT64) || fix_open(&f->cid, "cand_ids.npy", NPY_DTYPE_INT64))
        return -1;
    f->P = f->q.shape[0], f->D = f->q.shape[1], f->M = f->c.shape[0];
    f->H = 0;
    const int64_t *off = f->off.data, *len = f->len.data;
    for (int64_t i = 0; i < f->P; i++) f->H = off[i] + len[i] > f->H ? off[i] + len[i] : f->H;
    return 0;
}

static void fixture_close(fixture *f) {
    npy_close(&f->q), npy_close(&f->c), npy_close(&f->off), npy_close(&f->len), npy_close(&f->qid),
        npy_close(&f->cid);
}

/* Loads <name>/{params, loss, dq, dc}; *params gets up to 3 values. */
static int case_open(const char *name, double *params, int *np, double *loss, npy_array *dq, npy_array *dc) {
    char path[256];
    npy_array pa, la;
    snprintf(path, sizeof path, "%s/params.npy", name);
    if (fix_open(&pa, path, NPY_DTYPE_FLOAT64)) return -1;
    snprintf(path, sizeof path, "%s/loss.npy", name);
    if (fix_open(&la, path, NPY_DTYPE_FLOAT64)) return -1;
    snprintf(path, sizeof path, "%s/dq.npy", name);
    if (fix_open(dq, path, NPY_DTYPE_FLOAT32)) return -1;
    snprintf(path, sizeof path, "%s/dc.npy", name);
    if (fix_open(dc, path, NPY_DTYPE_FLOAT32)) return -1;
    *np = (int)pa.count;
    for (int k = 0; k < *np && k < 3; k++) params[k] = ((const double *)pa.data)[k];
    *loss = ((const double *)la.data)[0];
    npy_close(&pa), npy_close(&la);
    return 0;
}

TEST(pytorch_fixtures) {
    fixture f;
    ASSERT(fixture_open(&f) == 0);
    const int64_t P = f.P, M = f.M, D = f.D, K = M - P - f.H;
    ASSERT(P == 7 && f.H == 6 && K == 5 && D == 6);
    int64_t *nolen = calloc((size_t)P, sizeof(int64_t));
    float *dq = malloc((size_t)(P * D) * sizeof(float)), *dc = malloc((size_t)(M * D) * sizeof(float));
    static const struct {
        const char *name;
        int kind;
    } cases[] = {{"softmax_a", K_SOFTMAX}, {"softmax_b", K_SOFTMAX}, {"margin_a", K_MARGIN}, {"margin_b", K_MARGIN},
                 {"directau_a", K_DIRECTAU}, {"directau_b", K_DIRECTAU}, {"bpr_1", K_BPR}, {"bpr_3", K_BPR},
                 {"bpr_nolisted", K_BPR}};
    int ok = 1;
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        double p[3] = {0, 0, 0}, want;
        int np = 0;
        npy_array dqa, dca;
        ASSERT(case_open(cases[t].name, p, &np, &want, &dqa, &dca) == 0);
        ASSERT(dqa.count == P * D && dca.count == M * D);
        loss_case lc = {cases[t].kind, {0, 0, 0}, 1.0f};
        int use_listed = 1;
        if (cases[t].kind == K_DIRECTAU) {
            lc.p[0] = (float)p[0], lc.p[1] = (float)p[1], lc.p[2] = (float)p[2];
        } else {
            use_listed = p[0] != 0.0;
            lc.p[0] = (float)p[1];
        }
        /* every pair without hard negatives: the H rows stay in c, unused (zero gradient) */
        const lp_pairs b = {f.q.data, f.c.data, P, f.H, K, D, f.off.data, use_listed ? f.len.data : nolen};
        for (int fast = 0; fast < 2; fast++) {
            const double l = run_fresh(&lc, fast, dq, dc, &b);
            /* the rule of test_fixture.h, dq and dc one group; the fast kernels score in float
             * through BLAS (DirectAU: squared distances from a Gram matrix), the _ref in double */
            const fix_tol tol = fast ? FIX_TOL_F32 : FIX_TOL_EXACT;
            const double scale = fmax(fix_max_abs(dqa.data, P * D), fix_max_abs(dca.data, M * D));
            fprintf(stderr, " %s %s:\n", cases[t].name, fast ? "fast" : "ref");
            ok &= fix_scalar("loss", l, want, tol);
            ok &= fix_allclose("dq", dq, dqa.data, P * D, scale, tol, NULL);
            ok &= fix_allclose("dc", dc, dca.data, M * D, scale, tol, NULL);
        }
        npy_close(&dqa), npy_close(&dca);
    }
    /* combo: the tasks of COMBO in make_lp_loss_fixtures.py, weights as GiGL adds them */
    {
        double p[3], want;
        int np;
        npy_array dqa, dca;
        ASSERT(case_open("combo", p, &np, &want, &dqa, &dca) == 0);
        lp_task tasks[5];
        lp_task_defaults(&tasks[0], LP_TASK_RETRIEVAL), tasks[0].weight = 1.0, tasks[0].temperature = 0.2;
        lp_task_defaults(&tasks[1], LP_TASK_SOFTMAX), tasks[1].weight = 0.3, tasks[1].softmax_temperature = 0.5;
        lp_task_defaults(&tasks[2], LP_TASK_MARGIN), tasks[2].weight = 0.1, tasks[2].margin = 0.3;
        lp_task_defaults(&tasks[3], LP_TASK_DIRECTAU), tasks[3].weight = 0.2;
        lp_task_defaults(&tasks[4], LP_TASK_BPR), tasks[4].weight = 0.5, tasks[4].num_negatives = 2;
        ASSERT(lp_loss_tasks_need_retrieval_scratch(tasks, 5));
        const lp_pairs b = {f.q.data, f.c.data, P, f.H, K, D, f.off.data, f.len.data};
        float *work = malloc((size_t)lp_loss_tasks_work_floats(tasks, 5, P, f.H, K, D) * sizeof(float));
        float *rdq = malloc((size_t)(P * D) * sizeof(float)), *rdc = malloc((size_t)(M * D) * sizeof(float));
        for (int i = 0; i < P * D; i++) dq[i] = 99.0f; /* overwritten, not accumulated */
        double tl[5];
        const double l = lp_loss_tasks(dq, dc, tasks, 5, &b, f.qid.data, f.cid.data, work, rdq, rdc, tl);
        double sum = 0.0;
        for (int t = 0; t < 5; t++) sum += tasks[t].weight * tl[t];
        const double scale = fmax(fix_max_abs(dqa.data, P * D), fix_max_abs(dca.data, M * D));
        fprintf(stderr, " combo:\n");
        ok &= fix_scalar("loss", l, want, FIX_TOL_F32);
        ok &= fix_allclose("dq", dq, dqa.data, P * D, scale, FIX_TOL_F32, NULL);
        ok &= fix_allclose("dc", dc, dca.data, M * D, scale, FIX_TOL_F32, NULL);
        ASSERT(fabs(sum - l) <= 1e-12 * fabs(l));
        free(work), free(rdq), free(rdc);
        npy_close(&dqa), npy_close(&dca);
    }
    free(nolen), free(dq), free(dc);
    fixture_close(&f);
    ASSERT(ok);
}

int main(void) {
    RUN(task_names);
    RUN(hand_bpr_margin_softmax);
    RUN(hand_directau);
    RUN(empty_batches);
    RUN(finite_differences);
    RUN(fast_vs_ref_random);
    RUN(softmax_rounds_and_row_kernels);
    RUN(accumulate_and_weight);
    RUN(tasks_plain_retrieval_bitwise);
    RUN(gemm_accounting);
    RUN(pytorch_fixtures);
    return test_summary();
}
