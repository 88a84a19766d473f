/* lp_eval.h — link-prediction evaluation: GiGL's sampled-negative ranking metrics (MRR,
 * HitRate@{1,5,10,50,100}), accumulated over batches, and full-ranking Recall@K / NDCG@K over
 * every node (the LightGCN / NGCF protocol).
 *
 * Dimension legend: Q = queries (anchor embeddings, one per positive pair), R = random
 * negatives shared by the batch, N = nodes, D = embedding dim. Scores are dot products.
 */
#ifndef CGNN_LP_EVAL_H
#define CGNN_LP_EVAL_H

#include <stdint.h>

#include "dist/dist.h"
#include "util/err.h"

/* ---- (a) sampled-negative metrics ------------------------------------------------------- */

#define LP_NUM_HIT_KS 5
extern const int LP_HIT_KS[LP_NUM_HIT_KS]; /* {1, 5, 10, 50, 100} */

/* Running sums over evaluation batches; zero-initialise before the first batch. */
typedef struct lp_rank_sums {
    double rr_sum;                 /* Σ 1 / rank */
    int64_t hits[LP_NUM_HIT_KS];   /* #{rank <= LP_HIT_KS[k]} */
    int64_t count;                 /* queries ranked */
    double loss_sum;               /* Σ per-query loss, added by the caller (batch mean loss × Q) */
} lp_rank_sums;

/* For each query i: rank_i = 1 + #{r : s(q_i, neg_r) > s(q_i, pos_i)} over the R negatives,
 * s(a, b) = a · b. Strict '>': a negative scoring exactly the same as the positive does not push
 * it down (ties favour the positive, as torch's `(neg > pos).sum() + 1`). NaN scores never
 * count as greater. With remove_accidental_hits, negatives whose id equals pos_ids[i] or
 * anchor_ids[i] are skipped for query i (ids may be NULL when remove_accidental_hits is 0).
 * Adds 1/rank_i to rr_sum, [rank_i <= k] to hits, 1 to count per query.
 * q (Q, D) query embeddings, pos (Q, D) each query's positive, neg (R, D).
 * Negative scores come from one cblas_sgemm (a (Q, R) scratch is allocated per call), positive
 * scores from a plain float dot product in dimension order; with embeddings whose dot products
 * are exact in float (small integers) ties are exact. Results do not depend on the thread count
 * beyond the GEMM's own rounding. */
void lp_rank_accumulate(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                        int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                        const int64_t *neg_ids, int remove_accidental_hits);
/* Same contract, plain serial loops (every score a float dot product in dimension order). */
void lp_rank_accumulate_ref(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                            int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                            const int64_t *neg_ids, int remove_accidental_hits);

/* Listed negatives (GraphBolt labelled pairs, sample/loader.h): query i is also ranked against
 * its own negatives, rows [off[i], off[i] + len[i]) of emb (H, D), node ids ids (H). */
typedef struct lp_listed_negatives {
    const float *emb;
    const int64_t *ids;
    const int64_t *off, *len; /* (Q) */
} lp_listed_negatives;

/* lp_rank_accumulate with listed negatives: rank_i = 1 + #{scoring above pos_i} over the R shared
 * negatives and query i's listed ones, with the same tie, NaN and accidental-hit rules (listed
 * ids equal to pos_ids[i] or anchor_ids[i] are skipped with remove_accidental_hits). listed may
 * be NULL (= lp_rank_accumulate). Listed scores are float dot products in dimension order in
 * both versions. */
void lp_rank_accumulate_listed(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                               int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                               const int64_t *neg_ids, int remove_accidental_hits,
                               const lp_listed_negatives *listed);
void lp_rank_accumulate_listed_ref(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                                   int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                                   const int64_t *neg_ids, int remove_accidental_hits,
                                   const lp_listed_negatives *listed);

/* dst += src (sums from another worker). */
void lp_rank_sums_add(lp_rank_sums *dst, const lp_rank_sums *src);
/* Sums *s over every rank in place (all ranks must call it). */
void lp_rank_sums_allreduce(const dist_ctx *d, lp_rank_sums *s);

#define LP_RANK_NUM_METRICS (2 + LP_NUM_HIT_KS)
/* GiGL's metric names and their values, in this order: "loss" (loss_sum / count), "mrr"
 * (rr_sum / count), "HitRate_at_1", "HitRate_at_5", "HitRate_at_10", "HitRate_at_50",
 * "HitRate_at_100" (hits / count). All 0 when count is 0. Returns LP_RANK_NUM_METRICS. */
int lp_rank_metrics(const lp_rank_sums *s, const char *names[LP_RANK_NUM_METRICS],
                    double values[LP_RANK_NUM_METRICS]);

/* ---- (c) ROC-AUC and average precision: the MAGNN / HGB protocol --------------------------
 * Every evaluated positive pair (anchor, positive) is scored against one negative pair (the same
 * anchor, another destination node), labels 1 / 0, and the two metrics are taken over every
 * positive and negative score of the whole split (the trainer's choice of negative: train/head.h).
 * Scores are (n, 2) float rows (score, label), label 1.0f (positive) or 0.0f (negative). */

/* auc = scikit-learn's roc_auc_score: the fraction of (positive, negative) pairs whose positive
 *       scores higher, ties counted 1/2 (= the trapezoidal area under the ROC curve);
 * ap  = scikit-learn's average_precision_score: sum over the distinct scores t in decreasing
 *       order of (R(t) - R(t_prev)) * P(t), with P(t) = TP(t) / (TP(t) + FP(t)) and
 *       R(t) = TP(t) / #positives counting every pair scoring >= t (a step function, no
 *       interpolation; tied pairs enter together).
 * Computed from a copy sorted by score (descending; equal scores then positive first), in
 * O(n log n): the result depends on the multiset of rows only, never on their order. Pair
 * counts are exact integers in double while #positives x #negatives < 2^52.
 * NaN: auc without a positive or without a negative, ap without a positive, both when any
 * score is NaN (scikit-learn refuses NaN input). */
void lp_auc_ap(const float *rows, int64_t n, double *auc, double *ap);

/* A rank's (score, label) rows of one evaluation, sized once: cap rows. */
typedef struct lp_score_buf {
    float *rows;  /* (cap, 2) */
    int64_t n, cap;
} lp_score_buf;

void lp_score_buf_init(lp_score_buf *b, int64_t cap); /* *b owned: lp_score_buf_free */
void lp_score_buf_free(lp_score_buf *b);              /* NULL-safe */
/* Collective: concatenates every rank's rows in rank order (dist_allgatherv_f32) and computes
 * lp_auc_ap over them, so every rank gets the same values; a world of one uses b directly. */
void lp_auc_ap_allgather(const dist_ctx *d, const lp_score_buf *b, double *auc, double *ap);

/* ---- (b) full ranking -------------------------------------------------------------------- */

/* emb (N, D): embeddings of every node. Pairs are int64 (n, 2) arrays of (anchor, positive).
 * For each distinct anchor a of test_pairs (the "anchors", in increasing id order):
 *   T(a)   = the distinct test positives of a (a pair listed twice counts once);
 *   cands  = every node except a itself and except a's positives in train_pairs and in
 *            exclude_pairs (NULL / n_exclude = 0 for none; e.g. the validation pairs when
 *            ranking the test split) — but a node in T(a) is always a candidate, even if the
 *            same pair is also in train/exclude (or is a itself);
 *   top-K  = the K candidates with the highest score emb[a] · emb[v]; equal scores rank the
 *            lower node id first (deterministic); NaN and -inf scores are never ranked;
 *   hits   = |top-K ∩ T(a)|;
 *   Recall@K(a) = hits / |T(a)|                       (LightGCN's definition: not capped by K,
 *                                                      so it is < 1 when |T(a)| > K);
 *   NDCG@K(a)   = DCG / IDCG, binary relevance, DCG = Σ_{r=1..K} [top-K_r ∈ T(a)] / log2(r + 1),
 *                 IDCG = Σ_{r=1..min(K, |T(a)|)} 1 / log2(r + 1).
 * *recall and *ndcg are the means over anchors (0 when there are none); *num_anchors their
 * count. Pairs are directed: (u, v) in train excludes v for anchor u only.
 * Returns 0, or -1 with *err (CGNN_ERR_INPUT) naming the array and row of an id outside [0, N)
 * ("test_pairs: row 17: positive id 5000 out of range [0, 4000)"), or K < 1.
 * Fast version: OpenMP over blocks of 256 anchors; per block, tiles of 1024 nodes are scored by
 * cblas_sgemm (single-threaded inside the parallel region) into a 1 MiB tile that stays in cache
 * and fed to each anchor's K-sized min-heap in node order (a node is looked up in the anchor's
 * exclusion set only when its score would enter the heap). Tile sizes are fixed, and per-anchor
 * values are averaged serially in anchor order, so the result does not depend on the thread
 * count. (A block of anchors × all N nodes, ~32 MB, was measured slower: the score block
 * round-trips through memory and the GEMM's zeroing pass and the selection each stream it.) */
int lp_full_ranking(const float *emb, int64_t N, int64_t D, const int64_t *test_pairs, int64_t n_test,
                    const int64_t *train_pairs, int64_t n_train, const int64_t *exclude_pairs,
                    int64_t n_exclude, int K, double *recall, double *ndcg, int64_t *num_anchors,
                    cgnn_err *err);
/* Same contract; per anchor: every score as a float dot product accumulated in double, then a
 * full sort of the candidates. */
int lp_full_ranking_ref(const float *emb, int64_t N, int64_t D, const int64_t *test_pairs, int64_t n_test,
                        const int64_t *train_pairs, int64_t n_train, const int64_t *exclude_pairs,
                        int64_t n_exclude, int K, double *recall, double *ndcg, int64_t *num_anchors,
                        cgnn_err *err);

/* lp_full_ranking with anchors and candidates of their own node types (a typed graph's link
 * prediction edge type (s, r, d)): anchor ids (column 0 of every pairs array) index q_emb (N, D),
 * the anchors' type's embeddings; positive ids (column 1) index c_emb (Nc, D), the candidates'
 * type's, and every one of the Nc nodes is a candidate. same_space != 0 (s = d: q_emb == c_emb,
 * N == Nc) excludes the anchor itself, exactly lp_full_ranking; otherwise nothing is excluded
 * for being the anchor (a node of another type). Ids out of range: CGNN_ERR_INPUT naming the
 * array, row and column ("anchor" against N, "positive" against Nc). lp_full_ranking is this with
 * q_emb = c_emb and same_space = 1; the _ref twins likewise. */
int lp_full_ranking_typed(const float *q_emb, int64_t N, const float *c_emb, int64_t Nc, int64_t D, int same_space,
                          const int64_t *test_pairs, int64_t n_test, const int64_t *train_pairs, int64_t n_train,
                          const int64_t *exclude_pairs, int64_t n_exclude, int K, double *recall, double *ndcg,
                          int64_t *num_anchors, cgnn_err *err);
int lp_full_ranking_typed_ref(const float *q_emb, int64_t N, const float *c_emb, int64_t Nc, int64_t D,
                              int same_space, const int64_t *test_pairs, int64_t n_test, const int64_t *train_pairs,
                              int64_t n_train, const int64_t *exclude_pairs, int64_t n_exclude, int K, double *recall,
                              double *ndcg, int64_t *num_anchors, cgnn_err *err);

/* lp_full_ranking with the candidates restricted to the node id range [lo, hi) of a homogeneous
 * graph (e.g. the items of a user-item graph: trainerArgs.lp_candidate_range, cgnn rank
 * --candidates): for each anchor, cands = the nodes of [lo, hi) except the anchor itself and its
 * train / exclude positives (a node in T(a) always a candidate), top-K, Recall@K and NDCG@K
 * exactly as lp_full_ranking; with lo = 0, hi = N it equals lp_full_ranking. Anchors may be any
 * node of [0, N). Train / exclude pairs whose positive is outside the range are ignored (not a
 * candidate anyway). Errors (CGNN_ERR_INPUT): 0 <= lo < hi <= N violated; an id outside [0, N)
 * (as lp_full_ranking); a test positive outside [lo, hi) ("test_pairs: row 17: positive id 3
 * outside the candidate range [10, 20)"). Implemented on lp_full_ranking_typed with the
 * candidates' rows emb[lo, hi); the _ref on lp_full_ranking_typed_ref. */
int lp_full_ranking_range(const float *emb, int64_t N, int64_t D, int64_t lo, int64_t hi, const int64_t *test_pairs,
                          int64_t n_test, const int64_t *train_pairs, int64_t n_train, const int64_t *exclude_pairs,
                          int64_t n_exclude, int K, double *recall, double *ndcg, int64_t *num_anchors,
                          cgnn_err *err);
int lp_full_ranking_range_ref(const float *emb, int64_t N, int64_t D, int64_t lo, int64_t hi,
                              const int64_t *test_pairs, int64_t n_test, const int64_t *train_pairs, int64_t n_train,
                              const int64_t *exclude_pairs, int64_t n_exclude, int K, double *recall, double *ndcg,
                              int64_t *num_anchors, cgnn_err *err);

/* Parses "LO:HI" (two non-negative decimal integers, optional blanks around each, LO < HI) into
 * *lo, *hi. Returns 0, or -1 (nothing written) for anything else: the caller names its file and
 * field. The upper bound against the graph's nodes is the caller's check. */
int lp_candidate_range_parse(const char *s, int64_t *lo, int64_t *hi);

#endif
