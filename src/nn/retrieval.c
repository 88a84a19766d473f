/* retrieval.c — GiGL's RetrievalLoss forward + backward (see retrieval.h) and its plain twin.
 *
 * With p_ij the masked softmax of row i (p_ij = 0 where masked) and P'_ij = (p_ij − [j = i]) / Q,
 *   ∂loss/∂s_ij = P'_ij,   dq = P' · c / temp  (Q, D),   dc = P'^T · q / temp  (M, D).
 */
#include "nn/retrieval.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "nn/lp_loss.h"
#include "nn/ops.h"
#include "util/err.h"

/* Below this many score entries, threads cost more than they save. */
#define RETRIEVAL_PAR_MIN 16384

int64_t retrieval_work_floats(int64_t Q, int64_t M) { return Q * M + 2 * Q; }

/* 1 if (i, j) is left out of row i's softmax (see retrieval.h); never for j == i. */
static inline int is_masked(int64_t i, int64_t j, int64_t Q, const int64_t *query_ids,
                            const int64_t *cand_ids, int remove_accidental_hits) {
    if (j == i) return 0;
    if (query_ids && j < Q && query_ids[j] == query_ids[i]) return 1;
    return remove_accidental_hits && cand_ids[j] == cand_ids[i];
}

static void check_args(int64_t Q, int64_t M, int64_t D, const int64_t *cand_ids, float temp,
                       int remove_accidental_hits) {
    CGNN_CHECK(Q >= 0 && M >= Q && D >= 1);
    CGNN_CHECK(temp > 0.0f);
    CGNN_CHECK(!remove_accidental_hits || cand_ids != NULL);
}

double retrieval_loss(float *dq, float *dc, const float *q, const float *c, int64_t Q, int64_t M,
                      int64_t D, const int64_t *query_ids, const int64_t *cand_ids, float temp,
                      int remove_accidental_hits, float *work) {
    check_args(Q, M, D, cand_ids, temp, remove_accidental_hits);
    if (Q == 0) {
        if (M > 0) memset(dc, 0, (size_t)(M * D) * sizeof(float));
        return 0.0;
    }
    CGNN_CHECK(M <= INT_MAX && D <= INT_MAX);
    const float inv_t = 1.0f / temp;
    const float inv_q = (float)(1.0 / (double)Q);
    float *S = work;                 /* (Q, M): scores, then P' in place */
    float *row_loss = work + Q * M;  /* Q doubles, stored with memcpy (any alignment) */

    // S (Q, M) = q (Q, D) · c (M, D)^T / temp
    ops_gemm_stats *gs = lp_loss_gemm_stats(); /* the losses' GEMM accounting (NULL: off) */
    ops_sgemm_counted(gs, 0, 1, Q, M, D, inv_t, q, D, c, D, 0.0f, S, M);

#pragma omp parallel for schedule(static) if (Q * M > RETRIEVAL_PAR_MIN)
    for (int64_t i = 0; i < Q; i++) {
        float *s = S + i * M;
        const float s_ii = s[i];
        float mx = s_ii;
        for (int64_t j = 0; j < M; j++)
            if (s[j] > mx && !is_masked(i, j, Q, query_ids, cand_ids, remove_accidental_hits)) mx = s[j];
        double sum = 0.0;
        for (int64_t j = 0; j < M; j++) {
            if (is_masked(i, j, Q, query_ids, cand_ids, remove_accidental_hits)) {
                s[j] = 0.0f;
            } else {
                const float e = expf(s[j] - mx);
                s[j] = e;
                sum += (double)e;
            }
        }
        const double li = (double)mx + log(sum) - (double)s_ii; /* logsumexp − s_ii */
        memcpy(row_loss + 2 * i, &li, sizeof li);
        const float scale = (float)(1.0 / sum) * inv_q;
        for (int64_t j = 0; j < M; j++) s[j] *= scale;
        s[i] -= inv_q;
    }
    double loss = 0.0;
    for (int64_t i = 0; i < Q; i++) { /* serial, row order: independent of the thread count */
        double li;
        memcpy(&li, row_loss + 2 * i, sizeof li);
        loss += li;
    }

    // dq (Q, D) = P' (Q, M) · c (M, D) / temp;  dc (M, D) = P'^T · q (Q, D) / temp
    ops_sgemm_counted(gs, 0, 0, Q, D, M, inv_t, S, M, c, D, 0.0f, dq, D);
    ops_sgemm_counted(gs, 1, 0, M, D, Q, inv_t, S, M, q, D, 0.0f, dc, D);
    return loss / (double)Q;
}

double retrieval_loss_ref(float *dq, float *dc, const float *q, const float *c, int64_t Q, int64_t M,
                          int64_t D, const int64_t *query_ids, const int64_t *cand_ids, float temp,
                          int remove_accidental_hits, float *work) {
    (void)work;
    check_args(Q, M, D, cand_ids, temp, remove_accidental_hits);
    if (M > 0) memset(dc, 0, (size_t)(M * D) * sizeof(float));
    if (Q == 0) return 0.0;
    double *s = cgnn_malloc((size_t)M * sizeof(double));        /* one row of scores */
    double *gdc = cgnn_calloc((size_t)(M * D), sizeof(double)); /* dc in double */
    double loss = 0.0;
    for (int64_t i = 0; i < Q; i++) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < M; j++) {
            double dot = 0.0;
            for (int64_t d = 0; d < D; d++) dot += (double)q[i * D + d] * (double)c[j * D + d];
            s[j] = dot / (double)temp;
            if (!is_masked(i, j, Q, query_ids, cand_ids, remove_accidental_hits) && s[j] > mx) mx = s[j];
        }
        double sum = 0.0;
        for (int64_t j = 0; j < M; j++)
            if (!is_masked(i, j, Q, query_ids, cand_ids, remove_accidental_hits)) sum += exp(s[j] - mx);
        loss += mx + log(sum) - s[i];
        // ∂loss/∂s_ij = (p_ij − [j = i]) / Q;  s_ij = q_i · c_j / temp
        for (int64_t d = 0; d < D; d++) {
            double g = 0.0;
            for (int64_t j = 0; j < M; j++) {
                if (is_masked(i, j, Q, query_ids, cand_ids, remove_accidental_hits)) continue;
                const double p = (exp(s[j] - mx) / sum - (j == i ? 1.0 : 0.0)) / (double)Q / (double)temp;
                g += p * (double)c[j * D + d];
                gdc[j * D + d] += p * (double)q[i * D + d];
            }
            dq[i * D + d] = (float)g;
        }
    }
    for (int64_t k = 0; k < M * D; k++) dc[k] = (float)gdc[k];
    free(gdc);
    free(s);
    return loss / (double)Q;
}
