/* test_head.c — the node-classification head's metrics: accuracy = micro-F1 and macro-F1
 * (scikit-learn's f1_score(average='macro') over the classes present), summed over batches;
 * the link-prediction head's auc / ap rows: each positive pair against the batch's random
 * negative i mod K, else its first listed negative, worked out by hand; an anchor batch (GiGL's
 * DistABLPLoader: anchors with several positives and hard negatives) laid out as the loader lays
 * it out gives the loss and table gradient of GiGL's _compute_loss (PyTorch fixture,
 * scripts/fixtures/make_ablp_fixtures.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "test.h"
#include "train/head.h"
#define FIX_SUBDIR "ablp"
#include "test_fixture.h"

static double metric(const task_head *h, const head_sums *s, const char *name) { return head_metric(h, s, name); }

TEST(macro_f1) {
    task_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.task = TASK_NODE_CLASSIFICATION;
    task_head h;
    cgnn_err err = {0};
    ASSERT_EQ(head_init(&h, &cfg, 4, 8, 0, &err), 0);
    /* 6 items; labels 0 0 1 1 2 2, predictions 0 1 1 1 0 2; class 3 never appears.
     * class 0: pred 2, lab 2, tp 1 -> F1 .5;  class 1: pred 3, lab 2, tp 2 -> .8;
     * class 2: pred 1, lab 2, tp 1 -> 2/3;  macro = (.5 + .8 + 2/3) / 3;  acc = 4/6.
     * Two batches of 3 (sums add up). */
    const int64_t labels[6] = {0, 0, 1, 1, 2, 2};
    const int pred[6] = {0, 1, 1, 1, 0, 2};
    head_sums s;
    memset(&s, 0, sizeof s);
    for (int b = 0; b < 2; b++) {
        minibatch mb;
        memset(&mb, 0, sizeof mb);
        float out[3 * 4], dout[3 * 4];
        int32_t rows[3];
        int64_t lab[3];
        for (int i = 0; i < 3; i++) {
            rows[i] = (int32_t)(2 - i); /* rows in reverse order */
            lab[i] = labels[3 * b + i];
            for (int c = 0; c < 4; c++) out[(2 - i) * 4 + c] = c == pred[3 * b + i] ? 2.0f : (float)c * 0.1f;
        }
        mb.num_items = 3;
        mb.num_seeds = 3;
        mb.item_local = rows;
        mb.labels = lab;
        head_batch(&h, &mb, out, dout, &s);
    }
    ASSERT_NEAR(metric(&h, &s, "acc"), 4.0 / 6.0, 1e-12);
    ASSERT_NEAR(metric(&h, &s, "micro_f1"), 4.0 / 6.0, 1e-12);
    ASSERT_NEAR(metric(&h, &s, "macro_f1"), (0.5 + 0.8 + 2.0 / 3.0) / 3.0, 1e-12);
    head_free(&h);
}

/* One LP batch of P pairs with D = 1 outputs: rows [anchors | positives | listed | random]. */
static void lp_batch_hand(task_head *h, head_sums *s, int64_t P, int64_t H, int64_t K, const float *out,
                          int64_t *listed_off, int64_t *listed_len) {
    minibatch mb;
    memset(&mb, 0, sizeof mb);
    int32_t rows[16];
    int64_t ids[16];
    const int64_t n = 2 * P + H + K;
    for (int64_t i = 0; i < n; i++) rows[i] = (int32_t)i, ids[i] = 100 + i;
    mb.num_items = P, mb.num_listed = H, mb.num_negatives = K, mb.num_seeds = n;
    mb.item_local = rows, mb.input_nodes = ids, mb.listed_off = listed_off, mb.listed_len = listed_len;
    head_batch(h, &mb, out, NULL, s);
}

TEST(lp_auc_rows) {
    task_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.task = TASK_LINK_PREDICTION;
    cfg.args.softmax_temp = 1.0;
    task_head h;
    cgnn_err err = {0};
    ASSERT_EQ(head_init(&h, &cfg, 1, 3, 2, &err), 0);
    head_reserve_scores(&h, 5);
    head_scores_reset(&h);
    head_sums s;
    memset(&s, 0, sizeof s);
    /* batch 1: 3 pairs, 2 random negatives (0.5, -1). Anchors (1, 2, -1), positives (1, .5, 1):
     * positive scores 1, 1, -1; negatives i mod 2 -> 0.5, -2, -0.5 */
    const float out1[8] = {1, 2, -1, 1, 0.5f, 1, 0.5f, -1};
    lp_batch_hand(&h, &s, 3, 0, 2, out1, NULL, NULL);
    /* batch 2: no random negatives (a labelled split): pair 0's first listed negative (0.5 of
     * {0.5, 9}), pair 1 has none. Anchors (1, 1), positives (3, .25): scores 3, .25; 0.5 */
    int64_t off[2] = {0, 2}, len[2] = {2, 0};
    const float out2[6] = {1, 1, 3, 0.25f, 0.5f, 9};
    lp_batch_hand(&h, &s, 2, 2, 0, out2, off, len);
    const float want[18] = {1, 1, 0.5f, 0, 1, 1, -2, 0, -1, 1, -0.5f, 0, 3, 1, 0.5f, 0, 0.25f, 1};
    ASSERT_EQ(h.scores.n, 9);
    for (int i = 0; i < 18; i++) ASSERT_NEAR(h.scores.rows[i], want[i], 0);
    static const dist_ctx serial = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    ASSERT(isnan(head_metric(&h, &s, "auc")));
    head_scores_finish(&h, &serial, &s);
    /* positives {1, 1, -1, 3, .25} vs negatives {.5, -2, -.5, .5}: 15 of 20 pairs; AP: thresholds
     * 3 (1/1), 1 (3/3), .25 (4/6), -1 (5/8): (1 + 2 + 2/3 + 5/8) / 5 = 103/120 */
    ASSERT_NEAR(head_metric(&h, &s, "auc"), 0.75, 1e-12);
    ASSERT_NEAR(head_metric(&h, &s, "ap"), 103.0 / 120.0, 1e-12);
    const char *names[HEAD_MAX_METRICS];
    double vals[HEAD_MAX_METRICS];
    const int nm = head_metrics(&h, &s, names, vals);
    ASSERT_EQ(nm, 9);
    ASSERT(!strcmp(names[1], "mrr") && !strcmp(names[7], "auc") && !strcmp(names[8], "ap"));
    head_scores_reset(&h);
    ASSERT_EQ(h.scores.n, 0);
    head_free(&h);
}

static int ablp_open(npy_array *a, const char *name, npy_dtype want) { return fix_open(a, name, want); }

/* GiGL's anchor batch (padded labels) -> cgnn's pair layout, as sample/loader.c builds it with
 * anchor batching: pairs anchor by anchor in label order, [anchors | positives | listed | random],
 * each anchor's hard negatives listed once; out rows = node ids (the table is the output). The
 * head's loss and d(loss)/d(table) must equal GiGL's _compute_loss in PyTorch. */
TEST(anchor_batch_gigl) {
    npy_array emb, anc, pos, neg, rnd, par, los, dem;
    ASSERT(ablp_open(&emb, "emb.npy", NPY_DTYPE_FLOAT32) == 0 && ablp_open(&anc, "anchors.npy", NPY_DTYPE_INT64) == 0 &&
           ablp_open(&pos, "positives.npy", NPY_DTYPE_INT64) == 0 &&
           ablp_open(&neg, "negatives.npy", NPY_DTYPE_INT64) == 0 && ablp_open(&rnd, "random.npy", NPY_DTYPE_INT64) == 0 &&
           ablp_open(&par, "params.npy", NPY_DTYPE_FLOAT64) == 0 && ablp_open(&los, "loss.npy", NPY_DTYPE_FLOAT64) == 0 &&
           ablp_open(&dem, "demb.npy", NPY_DTYPE_FLOAT32) == 0);
    const int64_t N = emb.shape[0], D = emb.shape[1], A = anc.shape[0], Lp = pos.shape[1], Ln = neg.shape[1];
    const int64_t K = rnd.shape[0];
    const int64_t *a_ids = anc.data, *p_ids = pos.data, *n_ids = neg.data, *r_ids = rnd.data;
    int64_t P = 0, H = 0;
    for (int64_t i = 0; i < A * Lp; i++) P += p_ids[i] >= 0;
    for (int64_t i = 0; i < A * Ln; i++) H += n_ids[i] >= 0;
    const int64_t S = 2 * P + H + K;
    int32_t *rows = calloc((size_t)S, sizeof *rows);
    int64_t *off = calloc((size_t)P, sizeof *off), *len = calloc((size_t)P, sizeof *len);
    int64_t *ids = calloc((size_t)N, sizeof *ids);
    for (int64_t v = 0; v < N; v++) ids[v] = v;
    int64_t p = 0, h = 0;
    for (int64_t a = 0; a < A; a++) {
        const int64_t h0 = h;
        for (int64_t j = 0; j < Ln; j++)
            if (n_ids[a * Ln + j] >= 0) rows[2 * P + h++] = (int32_t)n_ids[a * Ln + j];
        for (int64_t j = 0; j < Lp; j++) {
            if (p_ids[a * Lp + j] < 0) continue;
            rows[p] = (int32_t)a_ids[a], rows[P + p] = (int32_t)p_ids[a * Lp + j];
            off[p] = h0, len[p] = h - h0;
            p++;
        }
    }
    for (int64_t k = 0; k < K; k++) rows[2 * P + H + k] = (int32_t)r_ids[k];
    minibatch mb;
    memset(&mb, 0, sizeof mb);
    mb.num_items = P, mb.num_listed = H, mb.num_negatives = K, mb.num_seeds = N;
    mb.item_local = rows, mb.input_nodes = ids, mb.listed_off = off, mb.listed_len = len;
    task_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.task = TASK_LINK_PREDICTION;
    config_default_trainer_args(&cfg.args, TASK_LINK_PREDICTION);
    cfg.args.softmax_temp = ((const double *)par.data)[0];
    cfg.args.lp_tasks[0].temperature = cfg.args.softmax_temp;
    cfg.args.lp_tasks[0].remove_accidental_hits = cfg.args.should_remove_accidental_hits = 1;
    task_head hd;
    cgnn_err err = {0};
    ASSERT_EQ(head_init(&hd, &cfg, D, P, H + K, &err), 0);
    float *dout = calloc((size_t)(N * D), sizeof *dout);
    const double loss = head_batch(&hd, &mb, emb.data, dout, NULL);
    const double want = ((const double *)los.data)[0];
    /* the rule of test_fixture.h; the table gradient is one group */
    ASSERT(fix_scalar("ABLP loss", loss, want, FIX_TOL_F32));
    ASSERT(fix_allclose("d embeddings", dout, dem.data, N * D, fix_max_abs(dem.data, N * D), FIX_TOL_F32, NULL));
    head_free(&hd);
    free(dout);
    free(rows), free(off), free(len), free(ids);
    npy_close(&emb), npy_close(&anc), npy_close(&pos), npy_close(&neg), npy_close(&rnd), npy_close(&par);
    npy_close(&los), npy_close(&dem);
}

int main(void) {
    RUN(macro_f1);
    RUN(lp_auc_rows);
    RUN(anchor_batch_gigl);
    return test_summary();
}
