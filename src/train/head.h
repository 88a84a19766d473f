/* head.h — the task head: from a batch's model outputs to its loss, the loss gradient and the
 * evaluation sums, for each task the trainer runs.
 *
 *   node classification: softmax cross-entropy of each labelled seed's output row (logits);
 *                        metrics loss, acc (argmax == label; = micro_f1, also reported under
 *                        that name) and macro_f1 (the unweighted mean over classes of
 *                        F1_c = 2 TP_c / (predicted_c + labelled_c), over the classes that are
 *                        predicted or labelled at least once: scikit-learn's f1_score(average=
 *                        'macro') on the labels present; reported for up to HEAD_F1_MAX_CLASSES
 *                        classes, NaN beyond).
 *   link prediction:     the task_path losses (nn/lp_loss.h; by default GiGL's RetrievalLoss,
 *                        nn/retrieval.h) over the batch's pairs: queries = anchors' embeddings,
 *                        candidates = [positives | listed (hard) negatives | random negatives],
 *                        several tasks summed with their weights; metrics mrr and HitRate_at_{1,5,10,50,100} (each
 *                        positive ranked against the batch's random negatives and its own listed
 *                        negatives, train/lp_eval.h) and loss; with a score buffer
 *                        (head_reserve_scores) also auc and ap, the MAGNN / HGB protocol: each
 *                        positive pair i (anchor a_i, positive p_i) is scored against ONE
 *                        negative pair (a_i, n_i), score = dot product of the two output rows
 *                        (after the model's L2 normalisation when it normalises), labels 1 / 0,
 *                        and ROC-AUC / average precision are taken over all the scores of the
 *                        split (train/lp_eval.h: lp_auc_ap, scikit-learn's definitions).
 *                        n_i = the batch's random negative number i mod K (K random negatives;
 *                        the loader draws them from a stream keyed by (seed, epoch, batch,
 *                        rank), so the choice is deterministic); a batch without random
 *                        negatives (a labelled evaluation split) uses pair i's first listed
 *                        negative (its group's lowest split row), and a pair with neither has
 *                        no negative. n_i is not checked
 *                        against the pair's ids (as MAGNN / HGB's random destinations), and
 *                        accidental-hit removal does not apply.
 *
 * Sums are kept per batch as plain totals (never averages), so ranks combine them with one
 * all-reduce of HEAD_NUM_SUMS doubles and every rank derives the same metrics. AUC and AP do not
 * decompose into sums: each rank keeps its (score, label) rows, head_scores_finish gathers them
 * all and computes both on every rank (the same values everywhere).
 * Memory: every buffer is sized once at head_init for the largest batch; head_batch allocates
 * nothing.
 */
#ifndef CGNN_HEAD_H
#define CGNN_HEAD_H

#include <stdint.h>

#include "dist/dist.h"
#include "nn/lp_loss.h"
#include "sample/minibatch.h"
#include "train/config.h"
#include "train/lp_eval.h"
#include "util/err.h"

/* loss_sum, count, correct, rr_sum, hits[5], then per class (predicted, labelled, TP) */
#define HEAD_F1_MAX_CLASSES 256
#define HEAD_NUM_SUMS (9 + 3 * HEAD_F1_MAX_CLASSES)
#define HEAD_MAX_METRICS 12

typedef struct head_sums {
    double v[HEAD_NUM_SUMS]; /* [0] loss sum over items, [1] items, [2] correct (NC),
                                [3] sum of reciprocal ranks (LP), [4..8] hits at 1, 5, 10, 50, 100,
                                [9 + 3c ..] class c's predicted, labelled and true-positive counts (NC) */
    /* LP, set by head_scores_finish (not sums: never all-reduced); has_curve 0: auc / ap NaN */
    int has_curve;
    double auc, ap;
} head_sums;

typedef struct task_head {
    task_kind task;
    int64_t out_dim;          /* D: model output channels (classes, or the embedding size) */
    float temp;               /* LP softmax_temp */
    int remove_accidental_hits;
    /* LP scratch, for up to max_pairs pairs and max_negatives negatives */
    int64_t max_pairs, max_negatives;
    float *q, *c, *dq, *dc;   /* (P, D), (P + K, D), same */
    int64_t *query_ids, *cand_ids; /* (P), (P + K) global node ids */
    float *work;              /* the losses' scratch (lp_loss_tasks_work_floats) */
    int num_tasks;            /* LP: task_path's tasks, weights and arguments */
    lp_task tasks[LP_TASK_COUNT];
    float *rdq, *rdc;         /* (P, D), (P + K, D): Retrieval's gradients when weighted with others */
    double task_loss[LP_TASK_COUNT]; /* the last batch's loss of each task (unweighted) */
    int keep_scores;          /* LP: head_reserve_scores was called (on every rank alike: it makes
                                 head_scores_finish collective, even where this rank's cap is 0) */
    lp_score_buf scores;      /* the (score, label) rows of the evaluation under way */
} task_head;

/* Sizes the head for batches of up to max_pairs items and max_negatives negatives, listed +
 * random (LP).
 * Caller owns *h (head_free). */
int head_init(task_head *h, const task_config *cfg, int64_t out_dim, int64_t max_pairs, int64_t max_negatives,
              cgnn_err *err);
void head_free(task_head *h); /* NULL-safe */

/* The loss of batch mb from the model output out (mb->num_seeds, D). dout (num_seeds, D)
 * receives d(mean loss)/d(out), overwritten; it may be NULL for link prediction when only
 * evaluating (node classification always needs it). s non-NULL: the batch's sums are added.
 * Returns the batch's mean loss. */
double head_batch(task_head *h, const minibatch *mb, const float *out, float *dout, head_sums *s);

/* LP: keep the (score, label) rows of up to max_pairs evaluated positive pairs (2 x max_pairs
 * rows) for auc / ap: size it once for the largest split this rank evaluates. Without it (or for
 * node classification) nothing is kept and auc / ap are NaN. */
void head_reserve_scores(task_head *h, int64_t max_pairs);
/* Empties the rows (before an evaluation's first batch). head_batch with s != NULL appends 2 rows
 * per positive pair (1 when it has no negative); more than reserved is a bug (CGNN_CHECK). */
void head_scores_reset(task_head *h);
/* Collective, after the evaluation's last batch: gathers every rank's rows and sets s->auc,
 * s->ap and s->has_curve (the same on every rank). Does nothing (and is no collective) unless
 * head_reserve_scores was called — on every rank, whatever its own max_pairs (0 included). */
void head_scores_finish(task_head *h, const dist_ctx *d, head_sums *s);

/* Metrics from sums (after the all-reduce): names[i] / vals[i], i < return value
 * (<= HEAD_MAX_METRICS); names[0] is "loss". NaN when no items. LP: loss, mrr,
 * HitRate_at_{1,5,10,50,100}, auc, ap. NC: loss, acc, micro_f1, macro_f1. */
int head_metrics(const task_head *h, const head_sums *s, const char **names, double *vals);

/* The value of the early-stopping criterion ("loss", "acc", "micro_f1", "macro_f1", "mrr", "auc",
 * "ap") from sums. */
double head_metric(const task_head *h, const head_sums *s, const char *name);

/* The headline metric shown in progress lines: "acc" (NC) or "mrr" (LP). */
const char *head_main_metric(const task_head *h);

#endif
