/* lp_loss.h — the link-prediction losses of GiGL's NodeAnchorBasedLinkPredictionTasks
 * (gigl/src/common/models/layers/task.py and loss.py) and BPR, over one batch's pairs, each
 * with a hand-written backward; and their weighted combination (`task_path`).
 *
 * Dimension legend: P = positive pairs of the batch (pair i = (anchor a_i, positive p_i); an
 * anchor with several positives appears once per positive, as GiGL's repeated_query_embeddings);
 * D = embedding dim; H = listed (hard) negatives of the batch; K = random negatives;
 * M = P + H + K candidates.
 *
 *   q (P, D)   row i: the output row of pair i's anchor
 *   c (M, D)   [positives (P) | listed negatives (H) | random negatives (K)]: row i < P is pair
 *              i's positive; pair i's own listed negatives are rows P + listed_off[i] .. +
 *              listed_len[i] (GiGL's hard_neg_scores of its anchor); the K random negatives are
 *              shared by every pair (GiGL's random_neg_scores)
 *   s(x, y) = x · y (GiGL's LinkPredictionDecoder: the inner product)
 *
 * Pair i's negatives N_i = its listed negatives ∪ all K random negatives (|N_i| = len_i + K).
 *
 *   Softmax (SoftmaxLoss, softmax_temperature τ; GiGL's Softmax task default 0.07):
 *     loss = (1/P) Σ_i [ log Σ_{j ∈ {i} ∪ N_i} exp(s(q_i, c_j) / τ) − s(q_i, c_i) / τ ]
 *     (cross_entropy(all_scores / τ, target 0, reduction sum) / number of positives)
 *   Margin (MarginLoss, margin m; GiGL's Margin task default 0.5):
 *     loss = Σ_i Σ_{n ∈ N_i} max(0, m − (s_ii − s_in)) / Σ_i |N_i|,  s_ij = s(q_i, c_j)
 *     (F.margin_ranking_loss(pos, neg, 1, margin, reduction sum) / (positives × negatives));
 *     the subgradient at exactly 0 is 1, as torch's clamp_min
 *   DirectAU (AligmentLoss + UniformityLoss; gamma γ = 1, alpha α = 2, temperature t = 2):
 *     loss = (1/P) Σ_i ||q_i − c_i||^α
 *          + γ/2 [ log mean_{a<b} exp(−t ||q_a − q_b||²) + log mean_{a<b} exp(−t ||c_a − c_b||²) ]
 *     over the P anchor rows (repeated per positive, as GiGL) and the P positive rows; no
 *     negatives. GiGL returns batch size 1: the loss is used as it is. With P < 2 there is no
 *     pair to average over (torch: NaN); here the uniformity terms are then 0. The log-mean-exp
 *     is evaluated with its maximum exponent factored out (the same value wherever torch's
 *     exp does not underflow; finite where it would). At q_i = c_i the alignment gradient is 0
 *     (torch's norm backward at 0).
 *   BPR (Rendle et al.; LightGCN's and GiGL's experimental bpr_loss, num_negatives n = 1):
 *     pair i's BPR negatives B_i = its listed negatives ∪ the random negatives number
 *     (i·n + j) mod K, j < n (each pair its own n when K >= P·n; reused cyclically otherwise);
 *     loss = Σ_i Σ_{n ∈ B_i} softplus(s_in − s_ii) / Σ_i |B_i|   (= −mean log σ(s_ii − s_in))
 *   Retrieval: nn/retrieval.h (GiGL's RetrievalLoss: in-batch softmax over all candidates).
 *
 * A batch with no term (P = 0, or no negatives for Margin / BPR) has loss 0 and no gradient.
 * GiGL computes each loss as a sum and a batch size and divides; the functions here return that
 * mean directly. Reductions are in double; gradients in float.
 *
 * Conventions (llm.c): outputs first; the backward is fused with the forward; gradients
 * ACCUMULATE: dq (P, D) += weight · ∂loss/∂q, dc (M, D) += weight · ∂loss/∂c; the return value
 * is the unweighted loss. `work` is caller scratch of lp_loss_work_floats floats, 8-byte
 * aligned (malloc). Every fast kernel has a plain serial `_ref` with the same contract (double
 * accumulation throughout, work unused); tests/test_lp_loss.c holds them together and against
 * PyTorch. Determinism: per-pair values are computed in parallel and summed serially in pair
 * order, scatters into rows shared by several pairs run serially, dense products are one
 * cblas_sgemm each: the same bits for a fixed thread count.
 *
 * GEMM accounting: with a record registered (lp_loss_gemm_stats_register), every cblas_sgemm of
 * these losses and of retrieval_loss adds its time and FLOPs (nn/ops.h: ops_sgemm_counted), so
 * the trainer reports the loss's GEMM rate as bench reports the model's. Off by default.
 */
#ifndef CGNN_LP_LOSS_H
#define CGNN_LP_LOSS_H

#include <stdint.h>

#include "nn/ops.h"

/* ---- tasks (GiGL's task_path names) ------------------------------------------------------ */

typedef enum lp_task_kind {
    LP_TASK_RETRIEVAL,
    LP_TASK_SOFTMAX,
    LP_TASK_MARGIN,
    LP_TASK_DIRECTAU,
    LP_TASK_BPR,
    LP_TASK_COUNT
} lp_task_kind;

/* GiGL's class name of kind ("Retrieval", "Softmax", "Margin", "DirectAU", "BPR"). */
const char *lp_task_name(lp_task_kind kind);
/* A class name or dotted path ("Softmax", "gigl.src.common.models.layers.task.Softmax"), case
 * as written; returns 0 or -1. */
int lp_task_parse(const char *name, lp_task_kind *out);

/* One task of the combination and its constructor arguments (GiGL's names). */
typedef struct lp_task {
    lp_task_kind kind;
    double weight;               /* NodeAnchorBasedLinkPredictionTasks.add_task(task, weight) */
    double temperature;          /* Retrieval: the score temperature (trainerArgs softmax_temp);
                                    DirectAU: the uniformity temperature t */
    int remove_accidental_hits;  /* Retrieval */
    double softmax_temperature;  /* Softmax */
    double margin;               /* Margin */
    double gamma, alpha;         /* DirectAU */
    int64_t num_negatives;       /* BPR: random negatives per positive */
} lp_task;

/* *t = kind with weight 1 and GiGL's task defaults: Retrieval temperature 0.07 and
 * remove_accidental_hits true (the trainer's softmax_temp / should_remove_accidental_hits
 * defaults), Softmax softmax_temperature 0.07, Margin margin 0.5, DirectAU gamma 1, alpha 2,
 * temperature 2, BPR num_negatives 1. */
void lp_task_defaults(lp_task *t, lp_task_kind kind);

/* ---- one batch --------------------------------------------------------------------------- */

typedef struct lp_pairs {
    const float *q;              /* (P, D) */
    const float *c;              /* (M, D), M = P + H + K */
    int64_t P, H, K, D;
    const int64_t *listed_off;   /* (P), or NULL when H = 0 */
    const int64_t *listed_len;   /* (P), or NULL when H = 0 */
} lp_pairs;

/* Floats of `work` the loss of kind needs for a batch of these sizes (Retrieval included). */
int64_t lp_loss_work_floats(lp_task_kind kind, int64_t P, int64_t H, int64_t K, int64_t D);

double lp_loss_softmax(float *dq, float *dc, const lp_pairs *b, float softmax_temperature, float weight, float *work);
double lp_loss_softmax_ref(float *dq, float *dc, const lp_pairs *b, float softmax_temperature, float weight,
                           float *work);
double lp_loss_margin(float *dq, float *dc, const lp_pairs *b, float margin, float weight, float *work);
double lp_loss_margin_ref(float *dq, float *dc, const lp_pairs *b, float margin, float weight, float *work);
double lp_loss_directau(float *dq, float *dc, const lp_pairs *b, float gamma, float alpha, float temperature,
                        float weight, float *work);
double lp_loss_directau_ref(float *dq, float *dc, const lp_pairs *b, float gamma, float alpha, float temperature,
                            float weight, float *work);
double lp_loss_bpr(float *dq, float *dc, const lp_pairs *b, int64_t num_negatives, float weight, float *work);
double lp_loss_bpr_ref(float *dq, float *dc, const lp_pairs *b, int64_t num_negatives, float weight, float *work);

/* ---- the combination (GiGL's NodeAnchorBasedLinkPredictionTasks.calculate_losses) ---------
 *   loss = Σ_t weight_t · loss_t          (each loss_t the mean above: GiGL's loss / batch size)
 * dq (P, D) and dc (M, D) are OVERWRITTEN with ∂loss/∂q, ∂loss/∂c. query_ids (P) and cand_ids
 * (M) are the node ids Retrieval masks by (may be NULL without a Retrieval task). task_loss
 * (n) receives each task's unweighted loss (may be NULL). work: lp_loss_tasks_work_floats;
 * rdq (P, D), rdc (M, D): Retrieval's own gradients before weighting (unused, may be NULL, when
 * the only task is Retrieval with weight 1: then this is exactly retrieval_loss, bit for bit). */
double lp_loss_tasks(float *dq, float *dc, const lp_task *tasks, int n, const lp_pairs *b, const int64_t *query_ids,
                     const int64_t *cand_ids, float *work, float *rdq, float *rdc, double *task_loss);
int64_t lp_loss_tasks_work_floats(const lp_task *tasks, int n, int64_t P, int64_t H, int64_t K, int64_t D);
/* 1 if lp_loss_tasks needs rdq / rdc for these tasks. */
int lp_loss_tasks_need_retrieval_scratch(const lp_task *tasks, int n);

/* ---- GEMM accounting --------------------------------------------------------------------- */

/* Registers s (NULL: off): every GEMM of the functions above and of retrieval_loss is added to
 * it. Not thread-safe: register from the thread that computes the losses. */
void lp_loss_gemm_stats_register(ops_gemm_stats *s);
/* The registered record, or NULL. */
ops_gemm_stats *lp_loss_gemm_stats(void);

#endif
