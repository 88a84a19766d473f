/* retrieval.h — GiGL's RetrievalLoss (gigl/nn/loss.py, after tensorflow_recommenders'
 * tfrs.tasks.Retrieval) as a standalone op over dense embeddings: an in-batch sampled softmax
 * where each query must pick its own positive among all positives, hard and random negatives
 * of the batch.
 *
 * Dimension legend: Q = queries (one per positive pair: the anchor's embedding, repeated once
 * per positive of that anchor); M = candidates = [positives (Q) | hard negatives (H) | random
 * negatives (R)], M = Q + H + R, so candidate i < Q is query i's positive; D = embedding dim.
 *
 *   s_ij = q_i · c_j / temp                                                    (Q, M)
 *   (i, j) is masked (left out of row i's softmax) when j != i and
 *     query_ids != NULL && j < Q && query_ids[j] == query_ids[i]   (another positive of the
 *                                                                     same anchor: GiGL's
 *                                                                     _mask_by_query_ids)
 *     remove_accidental_hits && cand_ids[j] == cand_ids[i]          (the same node as query i's
 *                                                                     target: _mask_by_candidate_ids)
 *   loss = (1/Q) Σ_i [ logsumexp_{j unmasked} s_ij − s_ii ]
 *
 * Differences from GiGL, all exact to float precision:
 *   - GiGL adds finfo(float32).min to masked logits (older versions subtracted 1e6) and keeps
 *     them in the softmax; their exp() underflows to exactly 0 in float, so excluding them gives
 *     the same loss and the same (zero) gradient for masked entries.
 *   - GiGL's default nn.CrossEntropyLoss(reduction="sum") returns the sum over queries and the
 *     caller divides by the batch size Q; here the op returns the mean directly (Q = 0 gives 0).
 *   - 1/temp is folded into the GEMM's alpha instead of dividing the score matrix.
 *   - candidate_sampling_probability (logQ correction) is not supported (GiGL's default: None).
 * The diagonal (i, i) is never masked (GiGL: duplicates − labels = 0 there).
 */
#ifndef CGNN_RETRIEVAL_H
#define CGNN_RETRIEVAL_H

#include <stdint.h>

/* Returns the loss and writes dq (Q, D) and dc (M, D) = ∂loss/∂q, ∂loss/∂c (overwritten, not
 * accumulated). q (Q, D), c (M, D); query_ids (Q) or NULL (no query-id mask); cand_ids (M),
 * required when remove_accidental_hits (may be NULL otherwise). temp > 0 (1 = no temperature).
 * work: caller scratch of retrieval_work_floats(Q, M) floats, any alignment.
 * Q = 0 returns 0 with dc zeroed. Requires Q <= M.
 * Fast version: scores by one cblas_sgemm (counted when the losses' GEMM accounting is on,
 * nn/lp_loss.h), row softmax in parallel over queries (OpenMP),
 * gradients by two sgemms; per-row losses are summed serially in row order, so the result is
 * deterministic for a fixed thread count (the softmax part for any thread count). */
double retrieval_loss(float *dq, float *dc, const float *q, const float *c, int64_t Q, int64_t M,
                      int64_t D, const int64_t *query_ids, const int64_t *cand_ids, float temp,
                      int remove_accidental_hits, float *work);

/* Same contract, plain serial loops with double accumulation throughout (work unused, may be
 * NULL). The reference the tests hold retrieval_loss to. */
double retrieval_loss_ref(float *dq, float *dc, const float *q, const float *c, int64_t Q, int64_t M,
                          int64_t D, const int64_t *query_ids, const int64_t *cand_ids, float temp,
                          int remove_accidental_hits, float *work);

/* Floats of scratch retrieval_loss needs: the (Q, M) score / softmax matrix + Q doubles. */
int64_t retrieval_work_floats(int64_t Q, int64_t M);

#endif
