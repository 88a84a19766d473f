/* lp_eval.c — link-prediction metrics (see lp_eval.h): sampled-negative ranks and full ranking,
 * each with its plain `_ref` twin.
 *
 * Full ranking builds, once per call, an index of the pairs keyed by anchor: every distinct
 * test anchor gets a dense number (increasing node id), then counting sorts by that number give
 * per-anchor lists of test positives (sorted, deduplicated: membership is a binary search) and
 * of train/exclude positives. Pairs whose anchor is not a test anchor are dropped. The fast
 * version turns the latter into sorted per-anchor exclusion sets (plus the anchor, minus its
 * test positives) and looks a node up only when its score would enter the top-K; the _ref marks
 * exclusions in a flag array and sorts every candidate.
 */
#include "train/lp_eval.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/ops.h" /* ops_sgemm_counted: every GEMM goes through nn/ (issue 30's own kernels) */

const int LP_HIT_KS[LP_NUM_HIT_KS] = {1, 5, 10, 50, 100};

/* lp_full_ranking's score tile: LP_TILE_ANCHORS anchors × LP_TILE_NODES nodes (1 MiB: stays in
 * cache between the GEMM that writes it and the selection that reads it; 256 anchors per GEMM
 * amortise packing the node tile, which at D = 64 otherwise costs as much as the products).
 * Fixed sizes, so the blocks, and every score, are the same for any thread count. */
#define LP_TILE_ANCHORS 256
#define LP_TILE_NODES 1024
/* Below this many scores, threads cost more than they save. */
#define LP_PAR_MIN 16384

/* ---- (a) sampled-negative metrics ---------------------------------------------------------- */

static inline float dot_f(const float *a, const float *b, int64_t D) {
    float s = 0.0f;
    for (int64_t d = 0; d < D; d++) s += a[d] * b[d];
    return s;
}

/* 1 if negative r is skipped for query i (an accidental hit). */
static inline int neg_skipped(int64_t i, int64_t r, const int64_t *anchor_ids, const int64_t *pos_ids,
                              const int64_t *neg_ids, int remove_accidental_hits) {
    if (!remove_accidental_hits) return 0;
    return neg_ids[r] == pos_ids[i] || neg_ids[r] == anchor_ids[i];
}

/* rank from the count of negatives scoring above the positive (see lp_eval.h for NaN). */
static void add_rank(lp_rank_sums *s, int64_t rank) {
    s->rr_sum += 1.0 / (double)rank;
    for (int k = 0; k < LP_NUM_HIT_KS; k++) s->hits[k] += rank <= LP_HIT_KS[k];
    s->count++;
}

static void check_rank_args(int64_t Q, int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                            const int64_t *neg_ids, int remove_accidental_hits) {
    CGNN_CHECK(Q >= 0 && R >= 0 && D >= 0);
    CGNN_CHECK(!remove_accidental_hits || (anchor_ids && pos_ids && neg_ids));
}

/* Query i's listed negatives scoring above ps, and how many were considered (not skipped). */
static void listed_above(int64_t i, const float *qi, float ps, int64_t D, const int64_t *anchor_ids,
                         const int64_t *pos_ids, int remove_accidental_hits, const lp_listed_negatives *listed,
                         int64_t *above, int64_t *considered) {
    if (!listed) return;
    const int64_t off = listed->off[i], len = listed->len[i];
    for (int64_t r = off; r < off + len; r++) {
        if (neg_skipped(i, r, anchor_ids, pos_ids, listed->ids, remove_accidental_hits)) continue;
        (*considered)++;
        *above += dot_f(qi, listed->emb + r * D, D) > ps;
    }
}

void lp_rank_accumulate_listed(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                               int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                               const int64_t *neg_ids, int remove_accidental_hits,
                               const lp_listed_negatives *listed) {
    check_rank_args(Q, R, D, anchor_ids, pos_ids, neg_ids, remove_accidental_hits);
    CGNN_CHECK(!listed || !remove_accidental_hits || listed->ids);
    if (Q == 0) return;
    CGNN_CHECK(Q <= INT_MAX && R <= INT_MAX && D <= INT_MAX);
    float *S = R > 0 ? cgnn_malloc((size_t)(Q * R) * sizeof(float)) : NULL; /* (Q, R) */
    int64_t *rank = cgnn_malloc((size_t)Q * sizeof(int64_t));
    // S (Q, R) = q (Q, D) · neg (R, D)^T
    if (R > 0 && D > 0)
        ops_sgemm_counted(NULL, 0, 1, Q, R, D, 1.0f, q, D, neg, D, 0.0f, S, R);
    else if (R > 0)
        memset(S, 0, (size_t)(Q * R) * sizeof(float));
#pragma omp parallel for schedule(static) if (Q * R > LP_PAR_MIN)
    for (int64_t i = 0; i < Q; i++) {
        const float ps = dot_f(q + i * D, pos + i * D, D);
        const float *si = S + i * R;
        int64_t above = 0, considered = 0;
        for (int64_t r = 0; r < R; r++) {
            if (neg_skipped(i, r, anchor_ids, pos_ids, neg_ids, remove_accidental_hits)) continue;
            considered++;
            above += si[r] > ps;
        }
        listed_above(i, q + i * D, ps, D, anchor_ids, pos_ids, remove_accidental_hits, listed, &above, &considered);
        rank[i] = 1 + (ps != ps ? considered : above);
    }
    for (int64_t i = 0; i < Q; i++) add_rank(s, rank[i]); /* serial: deterministic sums */
    free(rank);
    free(S);
}

void lp_rank_accumulate_listed_ref(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                                   int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                                   const int64_t *neg_ids, int remove_accidental_hits,
                                   const lp_listed_negatives *listed) {
    check_rank_args(Q, R, D, anchor_ids, pos_ids, neg_ids, remove_accidental_hits);
    for (int64_t i = 0; i < Q; i++) {
        const float ps = dot_f(q + i * D, pos + i * D, D);
        int64_t above = 0, considered = 0;
        for (int64_t r = 0; r < R; r++) {
            if (neg_skipped(i, r, anchor_ids, pos_ids, neg_ids, remove_accidental_hits)) continue;
            considered++;
            if (dot_f(q + i * D, neg + r * D, D) > ps) above++;
        }
        if (listed) {
            const int64_t off = listed->off[i], len = listed->len[i];
            for (int64_t r = off; r < off + len; r++) {
                if (remove_accidental_hits && (listed->ids[r] == pos_ids[i] || listed->ids[r] == anchor_ids[i]))
                    continue;
                considered++;
                if (dot_f(q + i * D, listed->emb + r * D, D) > ps) above++;
            }
        }
        add_rank(s, 1 + (ps != ps ? considered : above));
    }
}

void lp_rank_accumulate(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                        int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                        const int64_t *neg_ids, int remove_accidental_hits) {
    lp_rank_accumulate_listed(s, q, pos, neg, Q, R, D, anchor_ids, pos_ids, neg_ids, remove_accidental_hits, NULL);
}

void lp_rank_accumulate_ref(lp_rank_sums *s, const float *q, const float *pos, const float *neg, int64_t Q,
                            int64_t R, int64_t D, const int64_t *anchor_ids, const int64_t *pos_ids,
                            const int64_t *neg_ids, int remove_accidental_hits) {
    lp_rank_accumulate_listed_ref(s, q, pos, neg, Q, R, D, anchor_ids, pos_ids, neg_ids, remove_accidental_hits,
                                  NULL);
}

void lp_rank_sums_add(lp_rank_sums *dst, const lp_rank_sums *src) {
    dst->rr_sum += src->rr_sum;
    dst->loss_sum += src->loss_sum;
    for (int k = 0; k < LP_NUM_HIT_KS; k++) dst->hits[k] += src->hits[k];
    dst->count += src->count;
}

void lp_rank_sums_allreduce(const dist_ctx *d, lp_rank_sums *s) {
    double f[2] = {s->rr_sum, s->loss_sum};
    int64_t n[LP_NUM_HIT_KS + 1];
    for (int k = 0; k < LP_NUM_HIT_KS; k++) n[k] = s->hits[k];
    n[LP_NUM_HIT_KS] = s->count;
    dist_allreduce_sum_f64(d, f, 2);
    dist_allreduce_sum_i64(d, n, LP_NUM_HIT_KS + 1);
    s->rr_sum = f[0], s->loss_sum = f[1];
    for (int k = 0; k < LP_NUM_HIT_KS; k++) s->hits[k] = n[k];
    s->count = n[LP_NUM_HIT_KS];
}

int lp_rank_metrics(const lp_rank_sums *s, const char *names[LP_RANK_NUM_METRICS],
                    double values[LP_RANK_NUM_METRICS]) {
    static const char *const HIT_NAMES[LP_NUM_HIT_KS] = {"HitRate_at_1", "HitRate_at_5", "HitRate_at_10",
                                                         "HitRate_at_50", "HitRate_at_100"};
    const double n = s->count > 0 ? (double)s->count : 0.0;
    names[0] = "loss";
    values[0] = n > 0 ? s->loss_sum / n : 0.0;
    names[1] = "mrr";
    values[1] = n > 0 ? s->rr_sum / n : 0.0;
    for (int k = 0; k < LP_NUM_HIT_KS; k++) {
        names[2 + k] = HIT_NAMES[k];
        values[2 + k] = n > 0 ? (double)s->hits[k] / n : 0.0;
    }
    return LP_RANK_NUM_METRICS;
}

/* ---- (c) ROC-AUC and average precision -------------------------------------------------- */

typedef struct lp_row {
    float s, y;
} lp_row;

static int cmp_row_desc(const void *x, const void *y) { /* score descending, then positives first */
    const lp_row *a = x, *b = y;
    if (a->s != b->s) return a->s > b->s ? -1 : 1;
    return (a->y < b->y) - (a->y > b->y);
}

void lp_auc_ap(const float *rows, int64_t n, double *auc, double *ap) {
    CGNN_CHECK(n >= 0);
    *auc = *ap = NAN;
    int64_t P = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(rows[2 * i])) return;
        P += rows[2 * i + 1] != 0.0f;
    }
    const int64_t N = n - P;
    if (P == 0) return;
    lp_row *r = cgnn_malloc((size_t)(n > 0 ? n : 1) * sizeof(lp_row));
    memcpy(r, rows, (size_t)n * sizeof(lp_row));
    qsort(r, (size_t)n, sizeof(lp_row), cmp_row_desc);
    /* walk the distinct scores from the top: a group of tp positives and fp negatives tied at
     * one score; tps / fps count every row at or above it */
    double pairs2 = 0.0, ap_sum = 0.0; /* 2 x (positive > negative pairs) + ties; sum of tp x precision */
    int64_t tps = 0, fps = 0;
    for (int64_t i = 0; i < n;) {
        int64_t j = i, tp = 0, fp = 0;
        for (; j < n && r[j].s == r[i].s; j++) {
            if (r[j].y != 0.0f)
                tp++;
            else
                fp++;
        }
        pairs2 += (double)fp * (double)(2 * tps + tp); /* the group's negatives: beaten by tps, tied with tp */
        tps += tp, fps += fp;
        if (tp > 0) ap_sum += (double)tp * ((double)tps / (double)(tps + fps));
        i = j;
    }
    free(r);
    *ap = ap_sum / (double)P;
    if (N > 0) *auc = pairs2 / (2.0 * (double)P * (double)N);
}

void lp_score_buf_init(lp_score_buf *b, int64_t cap) {
    CGNN_CHECK(cap >= 0);
    b->rows = cgnn_malloc((size_t)(2 * cap + 2) * sizeof(float));
    b->n = 0;
    b->cap = cap;
}

void lp_score_buf_free(lp_score_buf *b) {
    if (!b) return;
    free(b->rows);
    memset(b, 0, sizeof *b);
}

void lp_auc_ap_allgather(const dist_ctx *d, const lp_score_buf *b, double *auc, double *ap) {
    if (d->size == 1) {
        lp_auc_ap(b->rows, b->n, auc, ap);
        return;
    }
    int64_t *counts = cgnn_malloc((size_t)d->size * sizeof(int64_t));
    const int64_t total = dist_allgather_counts(d, 2 * b->n, counts); /* in floats */
    float *all = cgnn_malloc((size_t)(total > 0 ? total : 1) * sizeof(float));
    dist_allgatherv_f32(d, b->rows, all, counts);
    lp_auc_ap(all, total / 2, auc, ap);
    free(all);
    free(counts);
}

/* ---- (b) full ranking: the pair index ------------------------------------------------------ */

typedef struct lp_pair_index {
    int64_t num_anchors;
    int64_t *anchors;   /* (A) node id of each anchor, increasing */
    int64_t *tpos_off;  /* (A + 1) */
    int64_t *tpos_len;  /* (A) distinct test positives of anchor a: tpos[tpos_off[a] ..][0, len) */
    int64_t *tpos;      /* (n_test), sorted within each anchor */
    int64_t *excl_off;  /* (A + 1) */
    int64_t *excl;      /* excluded nodes of each anchor (train + exclude pairs) */
} lp_pair_index;

static void pair_index_free(lp_pair_index *ix) {
    free(ix->anchors), free(ix->tpos_off), free(ix->tpos_len), free(ix->tpos);
    free(ix->excl_off), free(ix->excl);
    memset(ix, 0, sizeof *ix);
}

/* Anchor ids (column 0) in [0, Nq), positive ids (column 1) in [0, Nc). */
static int check_pairs(const char *name, const int64_t *pairs, int64_t n, int64_t Nq, int64_t Nc, cgnn_err *err) {
    if (n < 0) return err_set(err, CGNN_ERR_INPUT, "%s: negative pair count %lld", name, (long long)n);
    if (n > 0 && !pairs) return err_set(err, CGNN_ERR_INPUT, "%s: %lld pairs but no data", name, (long long)n);
    for (int64_t i = 0; i < n; i++)
        for (int col = 0; col < 2; col++) {
            const int64_t v = pairs[2 * i + col], N = col == 0 ? Nq : Nc;
            if (v < 0 || v >= N)
                return err_set(err, CGNN_ERR_INPUT, "%s: row %lld: %s id %lld out of range [0, %lld)", name,
                               (long long)i, col == 0 ? "anchor" : "positive", (long long)v, (long long)N);
        }
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int sorted_contains(const int64_t *p, int64_t n, int64_t v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (p[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && p[lo] == v;
}

static int tpos_contains(const lp_pair_index *ix, int64_t a, int64_t v) {
    return sorted_contains(ix->tpos + ix->tpos_off[a], ix->tpos_len[a], v);
}

/* Counts, offsets and scatters the positives of pairs whose anchor has a number in anchor_of. */
static void scatter_pairs(const int64_t *anchor_of, int64_t A, const int64_t *const pairs[2],
                          const int64_t n[2], int64_t **off_out, int64_t **vals_out) {
    int64_t *off = cgnn_calloc((size_t)(A + 1), sizeof(int64_t));
    for (int s = 0; s < 2; s++)
        for (int64_t i = 0; i < n[s]; i++) {
            const int64_t a = anchor_of[pairs[s][2 * i]];
            if (a >= 0) off[a + 1]++;
        }
    for (int64_t a = 0; a < A; a++) off[a + 1] += off[a];
    int64_t *vals = cgnn_malloc((size_t)(off[A] > 0 ? off[A] : 1) * sizeof(int64_t));
    int64_t *fill = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(int64_t));
    memcpy(fill, off, (size_t)A * sizeof(int64_t));
    for (int s = 0; s < 2; s++)
        for (int64_t i = 0; i < n[s]; i++) {
            const int64_t a = anchor_of[pairs[s][2 * i]];
            if (a >= 0) vals[fill[a]++] = pairs[s][2 * i + 1];
        }
    free(fill);
    *off_out = off;
    *vals_out = vals;
}

/* Anchors are ids of [0, N) (the anchors' embeddings), positives of [0, Nc) (the candidates'). */
static int pair_index_build(lp_pair_index *ix, int64_t N, int64_t Nc, int64_t D, const int64_t *test_pairs,
                            int64_t n_test, const int64_t *train_pairs, int64_t n_train, const int64_t *exclude_pairs,
                            int64_t n_exclude, int K, cgnn_err *err) {
    memset(ix, 0, sizeof *ix);
    if (N < 1 || Nc < 1 || D < 1)
        return err_set(err, CGNN_ERR_INPUT, "embeddings: shape (%lld, %lld)%s: need at least one node and one dim",
                       (long long)N, (long long)D, Nc < 1 ? ", no candidate" : "");
    if (K < 1) return err_set(err, CGNN_ERR_INPUT, "K must be >= 1 (got %d)", K);
    if (check_pairs("test_pairs", test_pairs, n_test, N, Nc, err) != 0 ||
        check_pairs("train_pairs", train_pairs, n_train, N, Nc, err) != 0 ||
        check_pairs("exclude_pairs", exclude_pairs, n_exclude, N, Nc, err) != 0)
        return -1;
    int64_t *anchor_of = cgnn_malloc((size_t)N * sizeof(int64_t)); /* (N) node -> anchor number or -1 */
    for (int64_t v = 0; v < N; v++) anchor_of[v] = -1;
    for (int64_t i = 0; i < n_test; i++) anchor_of[test_pairs[2 * i]] = 0;
    int64_t A = 0;
    for (int64_t v = 0; v < N; v++)
        if (anchor_of[v] == 0) A++;
    ix->num_anchors = A;
    ix->anchors = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(int64_t));
    A = 0;
    for (int64_t v = 0; v < N; v++)
        if (anchor_of[v] == 0) {
            ix->anchors[A] = v;
            anchor_of[v] = A++;
        }
    const int64_t *tp[2] = {test_pairs, NULL}, tn[2] = {n_test, 0};
    scatter_pairs(anchor_of, A, tp, tn, &ix->tpos_off, &ix->tpos);
    ix->tpos_len = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(int64_t));
    for (int64_t a = 0; a < A; a++) { /* sort + deduplicate each anchor's test positives */
        int64_t *p = ix->tpos + ix->tpos_off[a];
        const int64_t n = ix->tpos_off[a + 1] - ix->tpos_off[a];
        qsort(p, (size_t)n, sizeof(int64_t), cmp_i64);
        int64_t m = 0;
        for (int64_t k = 0; k < n; k++)
            if (m == 0 || p[k] != p[m - 1]) p[m++] = p[k];
        ix->tpos_len[a] = m;
    }
    const int64_t *ep[2] = {train_pairs, exclude_pairs}, en[2] = {n_train, n_exclude};
    scatter_pairs(anchor_of, A, ep, en, &ix->excl_off, &ix->excl);
    free(anchor_of);
    return 0;
}

/* Recall and NDCG of one anchor from its ranked top list (best first). */
static void anchor_metrics(const lp_pair_index *ix, int64_t a, const int64_t *top, int64_t n_top, int K,
                           double *recall, double *ndcg) {
    const int64_t T = ix->tpos_len[a];
    int64_t hits = 0;
    double dcg = 0.0, idcg = 0.0;
    for (int64_t r = 0; r < n_top; r++)
        if (tpos_contains(ix, a, top[r])) {
            hits++;
            dcg += 1.0 / log2((double)r + 2.0);
        }
    for (int64_t r = 0; r < (T < K ? T : K); r++) idcg += 1.0 / log2((double)r + 2.0);
    *recall = (double)hits / (double)T;
    *ndcg = dcg / idcg;
}

static void average(const double *rec, const double *nd, int64_t A, double *recall, double *ndcg) {
    double sr = 0.0, sn = 0.0;
    for (int64_t a = 0; a < A; a++) sr += rec[a], sn += nd[a]; /* serial: deterministic */
    *recall = A > 0 ? sr / (double)A : 0.0;
    *ndcg = A > 0 ? sn / (double)A : 0.0;
}

/* ---- (b) full ranking: fast ---------------------------------------------------------------- */

/* Heap order: x is worse than y (lower score, or equal score and higher id). The heap keeps
 * the worst of the current top-K at its root. */
static inline int heap_worse(float xs, int64_t xi, float ys, int64_t yi) {
    return xs < ys || (xs == ys && xi > yi);
}

static void heap_sift_down(float *hs, int64_t *hi, int64_t n, int64_t k) {
    for (;;) {
        int64_t l = 2 * k + 1, w = k;
        if (l < n && heap_worse(hs[l], hi[l], hs[w], hi[w])) w = l;
        if (l + 1 < n && heap_worse(hs[l + 1], hi[l + 1], hs[w], hi[w])) w = l + 1;
        if (w == k) return;
        float ts = hs[k];
        hs[k] = hs[w], hs[w] = ts;
        int64_t ti = hi[k];
        hi[k] = hi[w], hi[w] = ti;
        k = w;
    }
}

static void heap_sift_up(float *hs, int64_t *hi, int64_t k) {
    while (k > 0) {
        int64_t p = (k - 1) / 2;
        if (!heap_worse(hs[k], hi[k], hs[p], hi[p])) return;
        float ts = hs[k];
        hs[k] = hs[p], hs[p] = ts;
        int64_t ti = hi[k];
        hi[k] = hi[p], hi[p] = ti;
        k = p;
    }
}

/* The top-K selection of one anchor, fed node tiles in increasing node id. */
typedef struct topk_state {
    float *hs;      /* (K) heap scores */
    int64_t *hi;    /* (K) heap node ids */
    int64_t n;      /* entries in the heap */
    float thr;      /* a score must be > thr to enter: -inf until the heap is full, then the root's */
    const int64_t *x; /* (nx) the anchor's excluded nodes, sorted */
    int64_t nx;
} topk_state;

/* Offers scores row[0, m) of nodes j0 .. j0 + m - 1. Nodes arrive in increasing id, so a later
 * node only enters with a strictly higher score than the root (at equal scores the lower id,
 * already in, stays): ties go to the lower id. -inf and NaN never pass `> thr`. Chunks whose
 * scores are all <= thr are skipped by one vectorisable test; only nodes that pass it are
 * looked up in the exclusion list (a few per anchor: K ln(N/K) insertions on random scores). */
static void topk_offer(topk_state *st, const float *row, int64_t j0, int64_t m, int K) {
    enum { CHUNK = 32 };
    for (int64_t c0 = 0; c0 < m; c0 += CHUNK) {
        const int64_t cm = m - c0 < CHUNK ? m - c0 : CHUNK;
        const float *r = row + c0;
        const float thr = st->thr;
        int any = 0;
        for (int64_t t = 0; t < cm; t++) any |= r[t] > thr;
        if (!any) continue;
        for (int64_t t = 0; t < cm; t++) {
            const float v = r[t];
            const int64_t id = j0 + c0 + t;
            if (!(v > st->thr) || sorted_contains(st->x, st->nx, id)) continue;
            if (st->n < K) {
                st->hs[st->n] = v, st->hi[st->n] = id;
                heap_sift_up(st->hs, st->hi, st->n++);
                if (st->n == K) st->thr = st->hs[0];
            } else {
                st->hs[0] = v, st->hi[0] = id;
                heap_sift_down(st->hs, st->hi, st->n, 0);
                st->thr = st->hs[0];
            }
        }
    }
}

/* Heap -> best first (repeatedly moves the worst, the root, to the end); returns the count. */
static int64_t topk_finish(topk_state *st) {
    for (int64_t k = st->n - 1; k > 0; k--) {
        float ts = st->hs[0];
        st->hs[0] = st->hs[k], st->hs[k] = ts;
        int64_t ti = st->hi[0];
        st->hi[0] = st->hi[k], st->hi[k] = ti;
        heap_sift_down(st->hs, st->hi, k, 0);
    }
    return st->n;
}

/* Per anchor, the sorted distinct nodes that are not candidates: the anchor itself (same_space)
 * and its train/exclude positives, less its test positives. (A + 1) offsets into *xs, lengths in
 * *xlen. */
static void build_exclusion_sets(const lp_pair_index *ix, int same_space, int64_t **xoff, int64_t **xs,
                                 int64_t **xlen) {
    const int64_t A = ix->num_anchors;
    int64_t *off = cgnn_malloc((size_t)(A + 1) * sizeof(int64_t));
    for (int64_t a = 0; a <= A; a++) off[a] = ix->excl_off[a] + a; /* one more slot: the anchor */
    int64_t *x = cgnn_malloc((size_t)(off[A] > 0 ? off[A] : 1) * sizeof(int64_t));
    int64_t *len = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(int64_t));
    for (int64_t a = 0; a < A; a++) {
        int64_t *p = x + off[a], n = 0;
        if (same_space && !tpos_contains(ix, a, ix->anchors[a])) p[n++] = ix->anchors[a];
        for (int64_t e = ix->excl_off[a]; e < ix->excl_off[a + 1]; e++)
            if (!tpos_contains(ix, a, ix->excl[e])) p[n++] = ix->excl[e];
        qsort(p, (size_t)n, sizeof(int64_t), cmp_i64);
        int64_t m = 0;
        for (int64_t k = 0; k < n; k++)
            if (m == 0 || p[k] != p[m - 1]) p[m++] = p[k];
        len[a] = m;
    }
    *xoff = off, *xs = x, *xlen = len;
}

int lp_full_ranking(const float *emb, int64_t N, int64_t D, const int64_t *test_pairs, int64_t n_test,
                    const int64_t *train_pairs, int64_t n_train, const int64_t *exclude_pairs,
                    int64_t n_exclude, int K, double *recall, double *ndcg, int64_t *num_anchors,
                    cgnn_err *err) {
    return lp_full_ranking_typed(emb, N, emb, N, D, 1, test_pairs, n_test, train_pairs, n_train, exclude_pairs,
                                 n_exclude, K, recall, ndcg, num_anchors, err);
}

int lp_full_ranking_ref(const float *emb, int64_t N, int64_t D, const int64_t *test_pairs, int64_t n_test,
                        const int64_t *train_pairs, int64_t n_train, const int64_t *exclude_pairs,
                        int64_t n_exclude, int K, double *recall, double *ndcg, int64_t *num_anchors,
                        cgnn_err *err) {
    return lp_full_ranking_typed_ref(emb, N, emb, N, D, 1, test_pairs, n_test, train_pairs, n_train, exclude_pairs,
                                     n_exclude, K, recall, ndcg, num_anchors, err);
}

int lp_full_ranking_typed(const float *q_emb, int64_t N, const float *c_emb, int64_t Nc, int64_t D, int same_space,
                          const int64_t *test_pairs, int64_t n_test, const int64_t *train_pairs, int64_t n_train,
                          const int64_t *exclude_pairs, int64_t n_exclude, int K, double *recall, double *ndcg,
                          int64_t *num_anchors, cgnn_err *err) {
    CGNN_CHECK(!same_space || (q_emb == c_emb && N == Nc));
    lp_pair_index ix;
    if (pair_index_build(&ix, N, Nc, D, test_pairs, n_test, train_pairs, n_train, exclude_pairs, n_exclude, K,
                         err) != 0)
        return -1;
    CGNN_CHECK(D <= INT_MAX);
    const int64_t A = ix.num_anchors;
    int64_t *xoff, *xs, *xlen;
    build_exclusion_sets(&ix, same_space, &xoff, &xs, &xlen);
    double *rec = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(double));
    double *nd = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(double));
    const int64_t TA = LP_TILE_ANCHORS, TN = LP_TILE_NODES;
    const int64_t num_blocks = (A + TA - 1) / TA;
    // always a parallel region, even for one block: OpenBLAS then runs every tile's GEMM on one
    // thread, the same way for any thread count
#pragma omp parallel
    {
        float *S = cgnn_malloc((size_t)(TA * TN) * sizeof(float));     /* (TA, TN) score tile */
        float *qa = cgnn_malloc((size_t)(TA * D) * sizeof(float));     /* (TA, D) the block's anchors */
        float *hs = cgnn_malloc((size_t)(TA * K) * sizeof(float));     /* (TA, K) heaps */
        int64_t *hi = cgnn_malloc((size_t)(TA * K) * sizeof(int64_t));
        topk_state st[LP_TILE_ANCHORS];
#pragma omp for schedule(dynamic, 1)
        for (int64_t blk = 0; blk < num_blocks; blk++) {
            const int64_t a0 = blk * TA, nb = A - a0 < TA ? A - a0 : TA;
            for (int64_t b = 0; b < nb; b++) {
                const int64_t a = a0 + b;
                memcpy(qa + b * D, q_emb + ix.anchors[a] * D, (size_t)D * sizeof(float));
                st[b] = (topk_state){hs + b * K, hi + b * K, 0, -INFINITY, xs + xoff[a], xlen[a]};
            }
            for (int64_t n0 = 0; n0 < Nc; n0 += TN) {
                const int64_t nt = Nc - n0 < TN ? Nc - n0 : TN;
                // S (nb, nt) = qa (nb, D) · c_emb[n0 : n0 + nt] (nt, D)^T — single-threaded inside
                // this parallel region (OpenMP OpenBLAS), so a tile's values do not depend on
                // the thread count
                ops_sgemm_counted(NULL, 0, 1, nb, nt, D, 1.0f, qa, D, c_emb + n0 * D, D, 0.0f, S, nt);
                for (int64_t b = 0; b < nb; b++) topk_offer(&st[b], S + b * nt, n0, nt, K);
            }
            for (int64_t b = 0; b < nb; b++) {
                const int64_t n_top = topk_finish(&st[b]);
                anchor_metrics(&ix, a0 + b, st[b].hi, n_top, K, &rec[a0 + b], &nd[a0 + b]);
            }
        }
        free(S), free(qa), free(hs), free(hi);
    }
    average(rec, nd, A, recall, ndcg);
    *num_anchors = A;
    free(rec), free(nd), free(xoff), free(xs), free(xlen);
    pair_index_free(&ix);
    return 0;
}

/* ---- (b) full ranking: reference ----------------------------------------------------------- */

typedef struct scored {
    float s;
    int64_t id;
} scored;

static int cmp_scored(const void *x, const void *y) { /* score descending, then id ascending */
    const scored *a = x, *b = y;
    if (a->s != b->s) return a->s > b->s ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

int lp_full_ranking_typed_ref(const float *q_emb, int64_t N, const float *c_emb, int64_t Nc, int64_t D,
                              int same_space, const int64_t *test_pairs, int64_t n_test, const int64_t *train_pairs,
                              int64_t n_train, const int64_t *exclude_pairs, int64_t n_exclude, int K, double *recall,
                              double *ndcg, int64_t *num_anchors, cgnn_err *err) {
    CGNN_CHECK(!same_space || (q_emb == c_emb && N == Nc));
    lp_pair_index ix;
    if (pair_index_build(&ix, N, Nc, D, test_pairs, n_test, train_pairs, n_train, exclude_pairs, n_exclude, K,
                         err) != 0)
        return -1;
    const int64_t A = ix.num_anchors;
    scored *c = cgnn_malloc((size_t)Nc * sizeof(scored));
    char *excluded = cgnn_calloc((size_t)Nc, 1);
    int64_t *top = cgnn_malloc((size_t)K * sizeof(int64_t));
    double *rec = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(double));
    double *nd = cgnn_malloc((size_t)(A > 0 ? A : 1) * sizeof(double));
    for (int64_t a = 0; a < A; a++) {
        const int64_t node = ix.anchors[a];
        if (same_space) excluded[node] = 1;
        for (int64_t e = ix.excl_off[a]; e < ix.excl_off[a + 1]; e++) excluded[ix.excl[e]] = 1;
        for (int64_t t = 0; t < ix.tpos_len[a]; t++) excluded[ix.tpos[ix.tpos_off[a] + t]] = 0;
        int64_t n = 0;
        for (int64_t v = 0; v < Nc; v++) {
            if (excluded[v]) continue;
            double dot = 0.0;
            for (int64_t d = 0; d < D; d++) dot += (double)q_emb[node * D + d] * (double)c_emb[v * D + d];
            const float s = (float)dot;
            if (s > -INFINITY) c[n++] = (scored){s, v}; /* NaN and -inf are never ranked */
        }
        qsort(c, (size_t)n, sizeof(scored), cmp_scored);
        const int64_t n_top = n < K ? n : K;
        for (int64_t r = 0; r < n_top; r++) top[r] = c[r].id;
        anchor_metrics(&ix, a, top, n_top, K, &rec[a], &nd[a]);
        if (same_space) excluded[node] = 0;
        for (int64_t e = ix.excl_off[a]; e < ix.excl_off[a + 1]; e++) excluded[ix.excl[e]] = 0;
    }
    average(rec, nd, A, recall, ndcg);
    *num_anchors = A;
    free(c), free(excluded), free(top), free(rec), free(nd);
    pair_index_free(&ix);
    return 0;
}

/* ---- (b) full ranking over a candidate id range --------------------------------------------- */

int lp_candidate_range_parse(const char *s, int64_t *lo, int64_t *hi) {
    if (!s) return -1;
    const char *colon = strchr(s, ':');
    if (!colon || strchr(colon + 1, ':')) return -1;
    int64_t v[2];
    const char *part[2] = {s, colon + 1};
    const char *end[2] = {colon, s + strlen(s)};
    for (int k = 0; k < 2; k++) {
        const char *p = part[k];
        while (p < end[k] && (*p == ' ' || *p == '\t')) p++;
        const char *e = end[k];
        while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (p == e || e - p > 18) return -1; /* empty, or might not fit int64 */
        int64_t x = 0;
        for (const char *q = p; q < e; q++) {
            if (*q < '0' || *q > '9') return -1; /* digits only: no sign, no exponent */
            x = x * 10 + (*q - '0');
        }
        v[k] = x;
    }
    if (v[0] >= v[1]) return -1;
    *lo = v[0], *hi = v[1];
    return 0;
}

/* Copies the rows of pairs whose positive lies in [lo, hi) into out (n, 2), positives shifted to
 * candidate numbers (v - lo); returns the count. */
static int64_t pairs_in_range(int64_t *out, const int64_t *pairs, int64_t n, int64_t lo, int64_t hi) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t v = pairs[2 * i + 1];
        if (v >= lo && v < hi) out[2 * m] = pairs[2 * i], out[2 * m + 1] = v - lo, m++;
    }
    return m;
}

static int full_ranking_range(int use_ref, const float *emb, int64_t N, int64_t D, int64_t lo, int64_t hi,
                              const int64_t *test_pairs, int64_t n_test, const int64_t *train_pairs, int64_t n_train,
                              const int64_t *exclude_pairs, int64_t n_exclude, int K, double *recall, double *ndcg,
                              int64_t *num_anchors, cgnn_err *err) {
    if (N < 1 || D < 1)
        return err_set(err, CGNN_ERR_INPUT, "embeddings: shape (%lld, %lld): need at least one node and one dim",
                       (long long)N, (long long)D);
    if (lo < 0 || hi > N || lo >= hi)
        return err_set(err, CGNN_ERR_INPUT, "candidate range %lld:%lld: expected 0 <= LO < HI <= %lld (the nodes)",
                       (long long)lo, (long long)hi, (long long)N);
    if (check_pairs("test_pairs", test_pairs, n_test, N, N, err) != 0 ||
        check_pairs("train_pairs", train_pairs, n_train, N, N, err) != 0 ||
        check_pairs("exclude_pairs", exclude_pairs, n_exclude, N, N, err) != 0)
        return -1;
    for (int64_t i = 0; i < n_test; i++) {
        const int64_t v = test_pairs[2 * i + 1];
        if (v < lo || v >= hi)
            return err_set(err, CGNN_ERR_INPUT, "test_pairs: row %lld: positive id %lld outside the candidate range "
                           "[%lld, %lld)", (long long)i, (long long)v, (long long)lo, (long long)hi);
    }
    // candidate numbers: node lo + j is candidate j; train/exclude positives outside the range are
    // not candidates anyway (dropped), and an anchor inside the range excludes itself as in
    // lp_full_ranking (one more excluded pair per test row; duplicates are merged)
    int64_t *tp = cgnn_malloc((size_t)(n_test > 0 ? n_test : 1) * 2 * sizeof(int64_t));
    int64_t *xp = cgnn_malloc((size_t)(n_train + n_exclude + n_test + 1) * 2 * sizeof(int64_t));
    const int64_t nt = pairs_in_range(tp, test_pairs, n_test, lo, hi);
    CGNN_CHECK(nt == n_test);
    int64_t nx = pairs_in_range(xp, train_pairs, n_train, lo, hi);
    nx += pairs_in_range(xp + 2 * nx, exclude_pairs, n_exclude, lo, hi);
    for (int64_t i = 0; i < n_test; i++) {
        const int64_t a = test_pairs[2 * i];
        if (a >= lo && a < hi) xp[2 * nx] = a, xp[2 * nx + 1] = a - lo, nx++;
    }
    const int rc = (use_ref ? lp_full_ranking_typed_ref : lp_full_ranking_typed)(
        emb, N, emb + lo * D, hi - lo, D, 0, tp, nt, xp, nx, NULL, 0, K, recall, ndcg, num_anchors, err);
    free(tp), free(xp);
    return rc;
}

int lp_full_ranking_range(const float *emb, int64_t N, int64_t D, int64_t lo, int64_t hi, const int64_t *test_pairs,
                          int64_t n_test, const int64_t *train_pairs, int64_t n_train, const int64_t *exclude_pairs,
                          int64_t n_exclude, int K, double *recall, double *ndcg, int64_t *num_anchors,
                          cgnn_err *err) {
    return full_ranking_range(0, emb, N, D, lo, hi, test_pairs, n_test, train_pairs, n_train, exclude_pairs,
                              n_exclude, K, recall, ndcg, num_anchors, err);
}

int lp_full_ranking_range_ref(const float *emb, int64_t N, int64_t D, int64_t lo, int64_t hi,
                              const int64_t *test_pairs, int64_t n_test, const int64_t *train_pairs, int64_t n_train,
                              const int64_t *exclude_pairs, int64_t n_exclude, int K, double *recall, double *ndcg,
                              int64_t *num_anchors, cgnn_err *err) {
    return full_ranking_range(1, emb, N, D, lo, hi, test_pairs, n_test, train_pairs, n_train, exclude_pairs,
                              n_exclude, K, recall, ndcg, num_anchors, err);
}
