/* test_head.c — the node-classification head's metrics: accuracy = micro-F1 and macro-F1
 * (scikit-learn's f1_score(average='macro') over the classes present), summed over batches. */
#include <string.h>

#include "test.h"
#include "train/head.h"

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

int main(void) {
    RUN(macro_f1);
    return test_summary();
}
