/* head.c — task heads (node classification, link prediction); see head.h. */
#include "train/head.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/lp_loss.h"
#include "nn/model.h"
#include "nn/retrieval.h"
#include "train/lp_eval.h"

enum { S_LOSS, S_COUNT, S_CORRECT, S_RR, S_HITS, S_CLASS = S_HITS + 5 };

int head_init(task_head *h, const task_config *cfg, int64_t out_dim, int64_t max_pairs, int64_t max_negatives,
              cgnn_err *err) {
    (void)err;
    memset(h, 0, sizeof *h);
    h->task = cfg->task;
    h->out_dim = out_dim;
    if (h->task != TASK_LINK_PREDICTION) return 0;
    h->temp = (float)cfg->args.softmax_temp;
    h->remove_accidental_hits = cfg->args.should_remove_accidental_hits;
    h->max_pairs = max_pairs;
    h->max_negatives = max_negatives;
    const int64_t P = max_pairs, M = max_pairs + max_negatives, D = out_dim;
    h->q = cgnn_malloc((size_t)(P * D + 1) * sizeof(float));
    h->dq = cgnn_malloc((size_t)(P * D + 1) * sizeof(float));
    h->c = cgnn_malloc((size_t)(M * D + 1) * sizeof(float));
    h->dc = cgnn_malloc((size_t)(M * D + 1) * sizeof(float));
    h->query_ids = cgnn_malloc((size_t)(P + 1) * sizeof(int64_t));
    h->cand_ids = cgnn_malloc((size_t)(M + 1) * sizeof(int64_t));
    h->num_tasks = cfg->args.num_lp_tasks;
    memcpy(h->tasks, cfg->args.lp_tasks, sizeof h->tasks);
    if (h->num_tasks == 0) { /* arguments not from config_load_task: GiGL's default task */
        h->num_tasks = 1;
        lp_task_defaults(&h->tasks[0], LP_TASK_RETRIEVAL);
        h->tasks[0].temperature = cfg->args.softmax_temp;
        h->tasks[0].remove_accidental_hits = cfg->args.should_remove_accidental_hits;
    }
    /* H + K <= max_negatives: bounding each by it covers every split of the two */
    h->work = cgnn_malloc(
        (size_t)(lp_loss_tasks_work_floats(h->tasks, h->num_tasks, P, max_negatives, max_negatives, D) + 1) *
        sizeof(float));
    if (lp_loss_tasks_need_retrieval_scratch(h->tasks, h->num_tasks)) {
        h->rdq = cgnn_malloc((size_t)(P * D + 1) * sizeof(float));
        h->rdc = cgnn_malloc((size_t)(M * D + 1) * sizeof(float));
    }
    return 0;
}

void head_free(task_head *h) {
    if (!h) return;
    free(h->q);
    free(h->dq);
    free(h->c);
    free(h->dc);
    free(h->query_ids);
    free(h->cand_ids);
    free(h->work);
    free(h->rdq);
    free(h->rdc);
    lp_score_buf_free(&h->scores);
    memset(h, 0, sizeof *h);
}

static inline float dot_f(const float *a, const float *b, int64_t D) { /* dimension order, as lp_eval */
    float s = 0.0f;
    for (int64_t d = 0; d < D; d++) s += a[d] * b[d];
    return s;
}

/* The batch's AUC / AP rows (head.h): pair i's positive score q_i . c_i, label 1, and its
 * negative's q_i . (random negative i mod K, else its first listed negative), label 0. */
static void add_curve_rows(task_head *h, const minibatch *mb, int64_t P, int64_t H, int64_t K, int64_t D) {
    lp_score_buf *b = &h->scores;
    CGNN_CHECK(b->n + 2 * P <= b->cap);
    float *r = b->rows + 2 * b->n;
    for (int64_t i = 0; i < P; i++) {
        const float *q = h->q + i * D;
        *r++ = dot_f(q, h->c + i * D, D), *r++ = 1.0f;
        const float *neg = K > 0                 ? h->c + (P + H + i % K) * D
                           : mb->listed_len[i] > 0 ? h->c + (P + mb->listed_off[i]) * D
                                                  : NULL;
        if (neg) *r++ = dot_f(q, neg, D), *r++ = 0.0f;
    }
    b->n = (r - b->rows) / 2;
}

/* The task losses (task_path; by default GiGL's Retrieval) over the batch's pairs: rows of out
 * gathered into q / c, gradients scattered back (+=: a node can be an anchor and a candidate at
 * once). */
static double lp_batch(task_head *h, const minibatch *mb, const float *out, float *dout, head_sums *s) {
    const int64_t P = mb->num_items, H = mb->num_listed, K = mb->num_negatives, M = P + H + K, D = h->out_dim;
    CGNN_CHECK(P <= h->max_pairs && H + K <= h->max_negatives);
    /* [anchors (P) | positives (P) | listed negatives (H) | random negatives (K)] */
    const int32_t *rows = mb->item_local;
    for (int64_t i = 0; i < P; i++) {
        memcpy(h->q + i * D, out + (int64_t)rows[i] * D, (size_t)D * sizeof(float));
        h->query_ids[i] = mb->input_nodes[rows[i]];
    }
    for (int64_t j = 0; j < M; j++) {
        memcpy(h->c + j * D, out + (int64_t)rows[P + j] * D, (size_t)D * sizeof(float));
        h->cand_ids[j] = mb->input_nodes[rows[P + j]];
    }
    const lp_pairs pairs = {h->q, h->c, P, H, K, D, H > 0 ? mb->listed_off : NULL, H > 0 ? mb->listed_len : NULL};
    double loss = lp_loss_tasks(h->dq, h->dc, h->tasks, h->num_tasks, &pairs, h->query_ids, h->cand_ids, h->work,
                                h->rdq, h->rdc, h->task_loss);
    if (dout) {
        memset(dout, 0, (size_t)(mb->num_seeds * D) * sizeof(float));
        for (int64_t i = 0; i < P; i++) {
            float *d = dout + (int64_t)rows[i] * D;
            const float *g = h->dq + i * D;
            for (int64_t k = 0; k < D; k++) d[k] += g[k];
        }
        for (int64_t j = 0; j < M; j++) {
            float *d = dout + (int64_t)rows[P + j] * D;
            const float *g = h->dc + j * D;
            for (int64_t k = 0; k < D; k++) d[k] += g[k];
        }
    }
    if (s && P > 0) {
        lp_rank_sums r;
        memset(&r, 0, sizeof r);
        const lp_listed_negatives listed = {h->c + P * D, h->cand_ids + P, mb->listed_off, mb->listed_len};
        lp_rank_accumulate_listed(&r, h->q, h->c, h->c + (P + H) * D, P, K, D, h->query_ids, h->cand_ids,
                                  h->cand_ids + P + H, h->remove_accidental_hits, H > 0 ? &listed : NULL);
        if (h->keep_scores) add_curve_rows(h, mb, P, H, K, D);
        s->v[S_LOSS] += loss * (double)P;
        s->v[S_COUNT] += (double)P;
        s->v[S_RR] += r.rr_sum;
        for (int k = 0; k < 5; k++) s->v[S_HITS + k] += (double)r.hits[k];
    }
    return loss;
}

double head_batch(task_head *h, const minibatch *mb, const float *out, float *dout, head_sums *s) {
    if (h->task == TASK_LINK_PREDICTION) return lp_batch(h, mb, out, dout, s);
    int64_t correct = 0;
    /* model_softmax_ce always writes the gradient, so NC needs dout even when evaluating (the
     * trainer passes its scratch) */
    CGNN_CHECK(dout != NULL);
    double loss = model_softmax_ce(dout, out, mb->item_local, mb->labels, mb->num_items, mb->num_seeds, h->out_dim,
                                   &correct);
    if (s) {
        s->v[S_LOSS] += loss * (double)mb->num_items;
        s->v[S_COUNT] += (double)mb->num_items;
        s->v[S_CORRECT] += (double)correct;
        if (h->out_dim <= HEAD_F1_MAX_CLASSES)
            for (int64_t i = 0; i < mb->num_items; i++) { /* argmax as model_softmax_ce (ties: lowest) */
                const float *x = out + (int64_t)mb->item_local[i] * h->out_dim;
                int64_t arg = 0;
                for (int64_t c = 1; c < h->out_dim; c++)
                    if (x[c] > x[arg]) arg = c;
                const int64_t y = mb->labels[i];
                s->v[S_CLASS + 3 * arg] += 1.0;
                s->v[S_CLASS + 3 * y + 1] += 1.0;
                s->v[S_CLASS + 3 * y + 2] += arg == y;
            }
    }
    return loss;
}

void head_reserve_scores(task_head *h, int64_t max_pairs) {
    if (h->task != TASK_LINK_PREDICTION) return;
    lp_score_buf_free(&h->scores);
    lp_score_buf_init(&h->scores, 2 * max_pairs);
    h->keep_scores = 1;
}

void head_scores_reset(task_head *h) { h->scores.n = 0; }

void head_scores_finish(task_head *h, const dist_ctx *d, head_sums *s) {
    if (!h->keep_scores) return;
    lp_auc_ap_allgather(d, &h->scores, &s->auc, &s->ap);
    s->has_curve = 1;
}

static const char *const LP_HIT_NAMES[5] = {"HitRate_at_1", "HitRate_at_5", "HitRate_at_10", "HitRate_at_50",
                                            "HitRate_at_100"};

int head_metrics(const task_head *h, const head_sums *s, const char **names, double *vals) {
    const double n = s->v[S_COUNT];
    const double inv = n > 0 ? 1.0 / n : NAN;
    int k = 0;
    names[k] = "loss";
    vals[k++] = s->v[S_LOSS] * inv;
    if (h->task == TASK_LINK_PREDICTION) {
        names[k] = "mrr";
        vals[k++] = s->v[S_RR] * inv;
        for (int j = 0; j < 5; j++) {
            names[k] = LP_HIT_NAMES[j];
            vals[k++] = s->v[S_HITS + j] * inv;
        }
        names[k] = "auc";
        vals[k++] = s->has_curve ? s->auc : NAN;
        names[k] = "ap";
        vals[k++] = s->has_curve ? s->ap : NAN;
    } else {
        names[k] = "acc";
        vals[k++] = s->v[S_CORRECT] * inv;
        names[k] = "micro_f1"; /* single-label: micro-F1 = accuracy */
        vals[k++] = s->v[S_CORRECT] * inv;
        double f1 = 0.0;
        int present = 0;
        for (int64_t c = 0; c < h->out_dim && c < HEAD_F1_MAX_CLASSES; c++) {
            const double pred = s->v[S_CLASS + 3 * c], lab = s->v[S_CLASS + 3 * c + 1], tp = s->v[S_CLASS + 3 * c + 2];
            if (pred + lab == 0) continue;
            f1 += 2.0 * tp / (pred + lab);
            present++;
        }
        names[k] = "macro_f1";
        vals[k++] = h->out_dim <= HEAD_F1_MAX_CLASSES && present ? f1 / present : NAN;
    }
    return k;
}

double head_metric(const task_head *h, const head_sums *s, const char *name) {
    const char *names[HEAD_MAX_METRICS];
    double vals[HEAD_MAX_METRICS];
    int n = head_metrics(h, s, names, vals);
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return vals[i];
    return NAN;
}

const char *head_main_metric(const task_head *h) { return h->task == TASK_LINK_PREDICTION ? "mrr" : "acc"; }
