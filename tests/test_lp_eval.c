/* test_lp_eval.c — link-prediction metrics (train/lp_eval.h): hand-computed ranks, MRR and
 * hit rates; full-ranking Recall/NDCG with exclusions and tie-breaks worked out by hand; fast
 * against _ref on random data (integer-valued embeddings, so every dot product is exact and
 * ties are plentiful); id errors; ROC-AUC / AP against O(n^2) pair counting and scikit-learn's AP
 * formula written out, on hand cases with ties (all tied, perfect, reversed) and random tied
 * scores. CGNN_LP_BENCH=1 also times the 30k anchors × 40k nodes × 64 case (printed, not
 * asserted). */
#include <omp.h>

#include "test.h"
#include "train/lp_eval.h"
#include "util/rng.h"
#include "util/timer.h"

typedef void (*rank_fn)(lp_rank_sums *, const float *, const float *, const float *, int64_t, int64_t, int64_t,
                        const int64_t *, const int64_t *, const int64_t *, int);
typedef int (*full_fn)(const float *, int64_t, int64_t, const int64_t *, int64_t, const int64_t *, int64_t,
                       const int64_t *, int64_t, int, double *, double *, int64_t *, cgnn_err *);

/* D = 1. Query 0: q 1, pos 2 (score 2); negatives score {3, 1, 2, 5, -1}: 3 and 5 are above, the
 * tie at 2 is not -> rank 3. Query 1: q -1, pos 1 (score -1); negatives {-3, -1, -2, -5, 1}: only
 * 1 is above -> rank 2. With accidental hits removed: query 0 (anchor 0, positive 10) skips the
 * negative with id 10 (score 5) -> rank 2; query 1 (anchor 7, positive 11) skips ids 11 (score 1)
 * and 7 -> rank 1. */
TEST(rank_hand) {
    const float q[2] = {1, -1}, pos[2] = {2, 1}, neg[5] = {3, 1, 2, 5, -1};
    const int64_t anchor_ids[2] = {0, 7}, pos_ids[2] = {10, 11}, neg_ids[5] = {7, 8, 9, 10, 11};
    for (int fast = 0; fast < 2; fast++) {
        rank_fn f = fast ? lp_rank_accumulate : lp_rank_accumulate_ref;
        lp_rank_sums s;
        memset(&s, 0, sizeof s);
        f(&s, q, pos, neg, 2, 5, 1, NULL, NULL, NULL, 0);
        ASSERT_EQ(s.count, 2);
        ASSERT_NEAR(s.rr_sum, 1.0 / 3 + 1.0 / 2, 1e-12);
        ASSERT_EQ(s.hits[0], 0); /* @1 */
        ASSERT_EQ(s.hits[1], 2); /* @5 */
        ASSERT_EQ(s.hits[4], 2); /* @100 */
        lp_rank_sums h;
        memset(&h, 0, sizeof h);
        f(&h, q, pos, neg, 2, 5, 1, anchor_ids, pos_ids, neg_ids, 1);
        ASSERT_EQ(h.count, 2);
        ASSERT_NEAR(h.rr_sum, 1.0 / 2 + 1.0, 1e-12);
        ASSERT_EQ(h.hits[0], 1);
        ASSERT_EQ(h.hits[1], 2);
        // batches accumulate
        f(&h, q, pos, neg, 2, 5, 1, NULL, NULL, NULL, 0);
        ASSERT_EQ(h.count, 4);
        ASSERT_NEAR(h.rr_sum, 1.5 + 1.0 / 3 + 1.0 / 2, 1e-12);
        ASSERT_EQ(h.hits[0], 1);
    }
}

/* Ranks at the hit-rate boundaries: 49 negatives above -> rank 50 (in @50, not @10); 100 above ->
 * rank 101 (in none). A NaN positive ranks last among the negatives considered. */
TEST(rank_boundaries_and_nan) {
    enum { R = 120 };
    float neg[R], q[1] = {1.0f}, pos[1] = {0.5f};
    for (int r = 0; r < R; r++) neg[r] = r < 49 ? 1.0f : 0.0f;
    for (int fast = 0; fast < 2; fast++) {
        rank_fn f = fast ? lp_rank_accumulate : lp_rank_accumulate_ref;
        lp_rank_sums s;
        memset(&s, 0, sizeof s);
        f(&s, q, pos, neg, 1, R, 1, NULL, NULL, NULL, 0);
        ASSERT_NEAR(s.rr_sum, 1.0 / 50, 1e-12);
        ASSERT_EQ(s.hits[2], 0); /* @10 */
        ASSERT_EQ(s.hits[3], 1); /* @50 */
        float neg2[R];
        for (int r = 0; r < R; r++) neg2[r] = r < 100 ? 1.0f : 0.0f;
        memset(&s, 0, sizeof s);
        f(&s, q, pos, neg2, 1, R, 1, NULL, NULL, NULL, 0);
        ASSERT_NEAR(s.rr_sum, 1.0 / 101, 1e-12);
        ASSERT_EQ(s.hits[4], 0); /* @100 */
        const float nanpos[1] = {NAN};
        memset(&s, 0, sizeof s);
        f(&s, q, nanpos, neg, 1, R, 1, NULL, NULL, NULL, 0);
        ASSERT_NEAR(s.rr_sum, 1.0 / (R + 1), 1e-12);
    }
}

TEST(rank_metrics_names) {
    lp_rank_sums s = {.rr_sum = 1.5, .hits = {1, 2, 2, 3, 4}, .count = 4, .loss_sum = 2.0};
    lp_rank_sums t = s;
    lp_rank_sums_add(&t, &s);
    ASSERT_EQ(t.count, 8);
    ASSERT_EQ(t.hits[3], 6);
    const char *names[LP_RANK_NUM_METRICS];
    double v[LP_RANK_NUM_METRICS];
    ASSERT_EQ(lp_rank_metrics(&t, names, v), 7);
    const char *want[] = {"loss", "mrr", "HitRate_at_1", "HitRate_at_5", "HitRate_at_10", "HitRate_at_50",
                          "HitRate_at_100"};
    const double wv[] = {0.5, 0.375, 0.25, 0.5, 0.5, 0.75, 1.0};
    for (int k = 0; k < 7; k++) {
        ASSERT(strcmp(names[k], want[k]) == 0);
        ASSERT_NEAR(v[k], wv[k], 1e-12);
    }
    dist_ctx one = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1};
    lp_rank_sums_allreduce(&one, &t); /* a world of one: unchanged */
    ASSERT_EQ(t.count, 8);
    ASSERT_NEAR(t.rr_sum, 3.0, 1e-12);
    lp_rank_sums z;
    memset(&z, 0, sizeof z);
    lp_rank_metrics(&z, names, v);
    for (int k = 0; k < 7; k++) ASSERT(v[k] == 0.0);
}

/* Integer-valued embeddings in [-2, 2]: every dot product is exact, so fast and _ref must agree
 * exactly, ties included. */
static void fill_int(float *x, int64_t n, uint64_t seed, int lo, int hi) {
    rng r;
    rng_init(&r, rng_key(seed, 1));
    for (int64_t k = 0; k < n; k++) x[k] = (float)(lo + (int)rng_below(&r, (uint64_t)(hi - lo + 1)));
}

static void fill_ids(int64_t *x, int64_t n, uint64_t seed, int64_t N) {
    rng r;
    rng_init(&r, rng_key(seed, 2));
    for (int64_t k = 0; k < n; k++) x[k] = (int64_t)rng_below(&r, (uint64_t)N);
}

TEST(rank_fast_vs_ref) {
    const int64_t Q = 300, R = 257, D = 8;
    float *q = malloc((size_t)(Q * D) * 4), *pos = malloc((size_t)(Q * D) * 4), *neg = malloc((size_t)(R * D) * 4);
    int64_t *aid = malloc((size_t)Q * 8), *pid = malloc((size_t)Q * 8), *nid = malloc((size_t)R * 8);
    fill_int(q, Q * D, 1, -2, 2);
    fill_int(pos, Q * D, 2, -2, 2);
    fill_int(neg, R * D, 3, -2, 2);
    fill_ids(aid, Q, 4, 60);
    fill_ids(pid, Q, 5, 60);
    fill_ids(nid, R, 6, 60);
    for (int rah = 0; rah < 2; rah++) {
        lp_rank_sums a, b;
        memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
        lp_rank_accumulate(&a, q, pos, neg, Q, R, D, aid, pid, nid, rah);
        lp_rank_accumulate_ref(&b, q, pos, neg, Q, R, D, aid, pid, nid, rah);
        fprintf(stderr, "  rah %d: mrr %.6f hits@1 %lld @10 %lld @100 %lld\n", rah, a.rr_sum / (double)a.count,
                (long long)a.hits[0], (long long)a.hits[2], (long long)a.hits[4]);
        ASSERT(a.rr_sum == b.rr_sum);
        ASSERT_EQ(a.count, Q);
        for (int k = 0; k < LP_NUM_HIT_KS; k++) ASSERT_EQ(a.hits[k], b.hits[k]);
        ASSERT(a.hits[0] > 0 && a.hits[4] < Q); /* a non-trivial case */
    }
    free(q), free(pos), free(neg), free(aid), free(pid), free(nid);
}

/* Listed negatives, D = 1, one random negative scoring 0. Query 0 (anchor 0, q 1, positive 10
 * scoring 2) owns listed rows [0, 3) scoring {3, 2, 1} with ids {20, 21, 10}: 3 is above, the
 * tie is not, and with accidental hits removed id 10 is skipped anyway -> rank 2. Query 1
 * (anchor 1, q 2, positive 11 scoring 2) shares the same rows (a group listed once) but its
 * scores are {6, 4, 2}: without removal 2 above -> rank 3; with removal still rank 3 (no id
 * equals 11 or 1). Query 2 (no listed rows, len 0) -> rank 1. Random negative (score 0 or 0)
 * never above. */
TEST(rank_listed_hand) {
    const float q[3] = {1, 2, 1}, pos[3] = {2, 1, 1}, neg[1] = {0}, listed_emb[3] = {3, 2, 1};
    const int64_t anchor_ids[3] = {0, 1, 2}, pos_ids[3] = {10, 11, 12}, neg_ids[1] = {30};
    const int64_t lids[3] = {20, 21, 10}, off[3] = {0, 0, 3}, len[3] = {3, 3, 0};
    const lp_listed_negatives L = {listed_emb, lids, off, len};
    for (int fast = 0; fast < 2; fast++) {
        for (int rah = 0; rah < 2; rah++) {
            lp_rank_sums s;
            memset(&s, 0, sizeof s);
            (fast ? lp_rank_accumulate_listed : lp_rank_accumulate_listed_ref)(&s, q, pos, neg, 3, 1, 1, anchor_ids,
                                                                              pos_ids, neg_ids, rah, &L);
            ASSERT_EQ(s.count, 3);
            ASSERT_NEAR(s.rr_sum, 1.0 / 2 + 1.0 / 3 + 1.0, 1e-12);
            ASSERT_EQ(s.hits[0], 1);
        }
    }
}

TEST(rank_listed_fast_vs_ref) {
    const int64_t Q = 200, R = 37, H = 150, D = 8;
    float *q = malloc((size_t)(Q * D) * 4), *pos = malloc((size_t)(Q * D) * 4), *neg = malloc((size_t)(R * D) * 4);
    float *lemb = malloc((size_t)(H * D) * 4);
    int64_t *aid = malloc((size_t)Q * 8), *pid = malloc((size_t)Q * 8), *nid = malloc((size_t)R * 8);
    int64_t *lid = malloc((size_t)H * 8), *off = malloc((size_t)Q * 8), *len = malloc((size_t)Q * 8);
    fill_int(q, Q * D, 11, -2, 2);
    fill_int(pos, Q * D, 12, -2, 2);
    fill_int(neg, R * D, 13, -2, 2);
    fill_int(lemb, H * D, 14, -2, 2);
    fill_ids(aid, Q, 15, 40);
    fill_ids(pid, Q, 16, 40);
    fill_ids(nid, R, 17, 40);
    fill_ids(lid, H, 18, 40);
    fill_ids(off, Q, 19, H);
    for (int64_t i = 0; i < Q; i++) len[i] = (H - off[i]) < 20 ? H - off[i] : 20 - i % 7;
    for (int rah = 0; rah < 2; rah++) {
        const lp_listed_negatives L = {lemb, lid, off, len};
        lp_rank_sums a, b, c;
        memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&c, 0, sizeof c);
        lp_rank_accumulate_listed(&a, q, pos, neg, Q, R, D, aid, pid, nid, rah, &L);
        lp_rank_accumulate_listed_ref(&b, q, pos, neg, Q, R, D, aid, pid, nid, rah, &L);
        lp_rank_accumulate(&c, q, pos, neg, Q, R, D, aid, pid, nid, rah);
        ASSERT(a.rr_sum == b.rr_sum);
        ASSERT_EQ(a.count, Q);
        for (int k = 0; k < LP_NUM_HIT_KS; k++) ASSERT_EQ(a.hits[k], b.hits[k]);
        ASSERT(a.rr_sum < c.rr_sum); /* the listed negatives push ranks down */
        ASSERT(a.hits[0] > 0);
    }
    free(q), free(pos), free(neg), free(lemb), free(aid), free(pid), free(nid), free(lid), free(off), free(len);
}

/* ---- full ranking ------------------------------------------------------------------------- */

/* N = 6, D = 2. Anchor 0 = (1, 0) scores nodes 1..5 at 5, 4, 3, 3, 1 (nodes 3 and 4 tie).
 * Train excludes 1; tests {3, 5}; K = 2 -> top {2, 3} (3 beats 4 on id): 1 hit at rank 2.
 * Anchor 5 = (1, 0): test {0}; top {1, 2}: no hit. */
static const float HAND_EMB[12] = {1, 0, 5, 0, 4, 0, 3, 0, 3, 1, 1, 0};

TEST(full_hand) {
    const int64_t test[] = {0, 3, 0, 5, 5, 0, 0, 3}; /* (0, 3) twice: counted once */
    const int64_t train[] = {0, 1, 4, 2};          /* (4, 2): not a test anchor, ignored */
    const double l3 = 1.0 / log2(3.0);
    for (int fast = 0; fast < 2; fast++) {
        full_fn f = fast ? lp_full_ranking : lp_full_ranking_ref;
        double rec, nd;
        int64_t na;
        cgnn_err err = {0};
        ASSERT(f(HAND_EMB, 6, 2, test, 4, train, 2, NULL, 0, 2, &rec, &nd, &na, &err) == 0);
        ASSERT_EQ(na, 2);
        ASSERT_NEAR(rec, (0.5 + 0.0) / 2, 1e-12);
        ASSERT_NEAR(nd, (l3 / (1.0 + l3) + 0.0) / 2, 1e-12);
        // also excluding (0, 2), e.g. a validation pair: top {3, 4}, the hit moves to rank 1
        const int64_t excl[] = {0, 2};
        ASSERT(f(HAND_EMB, 6, 2, test, 4, train, 2, excl, 1, 2, &rec, &nd, &na, &err) == 0);
        ASSERT_NEAR(rec, 0.5 / 2, 1e-12);
        ASSERT_NEAR(nd, (1.0 / (1.0 + l3)) / 2, 1e-12);
        // K = 1 without train exclusion: anchor 0's top is node 1 -> no hit
        ASSERT(f(HAND_EMB, 6, 2, test, 4, NULL, 0, NULL, 0, 1, &rec, &nd, &na, &err) == 0);
        ASSERT_NEAR(rec, 0.0, 1e-12);
        // a test positive is never excluded, even when the pair is also in train: (0, 3) in
        // train and exclude (0, 1), (0, 2) -> top-2 {3, 4}: 1 hit at rank 1
        const int64_t train2[] = {0, 1, 0, 3, 0, 2};
        ASSERT(f(HAND_EMB, 6, 2, test, 4, train2, 3, NULL, 0, 2, &rec, &nd, &na, &err) == 0);
        ASSERT_NEAR(rec, 0.5 / 2, 1e-12);
        // K larger than the candidates: everything ranked, recall 1 for anchor 0, anchor 5's
        // single positive at rank 5 of 5 (scores 5 4 3 3 1 for nodes 1 2 3 4 0)
        ASSERT(f(HAND_EMB, 6, 2, test, 4, train, 2, NULL, 0, 50, &rec, &nd, &na, &err) == 0);
        const double nd0 = (1.0 / log2(3.0) + 1.0 / log2(5.0)) / (1.0 + 1.0 / log2(3.0)); /* ranks 2, 4 */
        const double nd5 = (1.0 / log2(6.0)) / 1.0;
        ASSERT_NEAR(rec, 1.0, 1e-12);
        ASSERT_NEAR(nd, (nd0 + nd5) / 2, 1e-12);
    }
}

/* Recall is hits / |T(a)|, not capped by K: 3 test positives, K = 2, both top nodes hit. */
TEST(full_recall_not_capped) {
    const int64_t test[] = {0, 1, 0, 2, 0, 5};
    for (int fast = 0; fast < 2; fast++) {
        double rec, nd;
        int64_t na;
        cgnn_err err = {0};
        ASSERT((fast ? lp_full_ranking : lp_full_ranking_ref)(HAND_EMB, 6, 2, test, 3, NULL, 0, NULL, 0, 2, &rec,
                                                               &nd, &na, &err) == 0);
        ASSERT_EQ(na, 1);
        ASSERT_NEAR(rec, 2.0 / 3.0, 1e-12);
        ASSERT_NEAR(nd, 1.0, 1e-12); /* IDCG over min(K, |T|) = 2 */
    }
}

TEST(full_errors) {
    double rec = -1, nd = -1;
    int64_t na = -1;
    cgnn_err err = {0};
    const int64_t bad_test[] = {0, 1, 2, 6};
    ASSERT(lp_full_ranking(HAND_EMB, 6, 2, bad_test, 2, NULL, 0, NULL, 0, 2, &rec, &nd, &na, &err) == -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "test_pairs: row 1: positive id 6 out of range [0, 6)");
    const int64_t test[] = {0, 1}, bad_train[] = {0, 1, 0, 2, -3, 1};
    ASSERT(lp_full_ranking_ref(HAND_EMB, 6, 2, test, 1, bad_train, 3, NULL, 0, 2, &rec, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "train_pairs: row 2: anchor id -3");
    const int64_t bad_excl[] = {9, 1};
    ASSERT(lp_full_ranking(HAND_EMB, 6, 2, test, 1, NULL, 0, bad_excl, 1, 2, &rec, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "exclude_pairs: row 0: anchor id 9");
    ASSERT(lp_full_ranking(HAND_EMB, 6, 2, test, 1, NULL, 0, NULL, 0, 0, &rec, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "K must be >= 1");
    // no test pairs: no anchors, zeros
    ASSERT(lp_full_ranking(HAND_EMB, 6, 2, NULL, 0, NULL, 0, NULL, 0, 3, &rec, &nd, &na, &err) == 0);
    ASSERT_EQ(na, 0);
    ASSERT(rec == 0.0 && nd == 0.0);
}

static void random_pairs(int64_t *p, int64_t n, uint64_t seed, int64_t N) { fill_ids(p, 2 * n, seed, N); }

TEST(full_fast_vs_ref) {
    const int64_t N = 700, D = 8, n_test = 400, n_train = 1500, n_excl = 300;
    float *emb = malloc((size_t)(N * D) * 4);
    int64_t *test = malloc((size_t)n_test * 16), *train = malloc((size_t)n_train * 16),
            *excl = malloc((size_t)n_excl * 16);
    fill_int(emb, N * D, 11, -2, 2);
    // anchors drawn from 150 nodes: several test positives per anchor, some repeated
    random_pairs(test, n_test, 12, N);
    for (int64_t i = 0; i < n_test; i++) test[2 * i] %= 150;
    random_pairs(train, n_train, 13, N);
    for (int64_t i = 0; i < n_train; i++) train[2 * i] %= 200;
    random_pairs(excl, n_excl, 14, N);
    for (int64_t i = 0; i < n_excl; i++) excl[2 * i] %= 150;
    const int Ks[] = {1, 5, 20, 1000};
    for (int t = 0; t < 4; t++) {
        double r1, n1, r2, n2;
        int64_t a1, a2;
        cgnn_err err = {0};
        ASSERT(lp_full_ranking(emb, N, D, test, n_test, train, n_train, excl, n_excl, Ks[t], &r1, &n1, &a1,
                               &err) == 0);
        ASSERT(lp_full_ranking_ref(emb, N, D, test, n_test, train, n_train, excl, n_excl, Ks[t], &r2, &n2, &a2,
                                   &err) == 0);
        fprintf(stderr, "  K %4d: %lld anchors, recall %.6f ndcg %.6f (ref %.6f %.6f)\n", Ks[t], (long long)a1, r1,
                n1, r2, n2);
        ASSERT_EQ(a1, a2);
        ASSERT_NEAR(r1, r2, 1e-12);
        ASSERT_NEAR(n1, n2, 1e-12);
        ASSERT(r1 > 0.0);
        if (Ks[t] == 1000) ASSERT_NEAR(r1, 1.0, 1e-12); /* every candidate ranked */
        // another thread count gives the same answer (integer data: the GEMM is exact too)
        const int nt = omp_get_max_threads();
        omp_set_num_threads(nt == 1 ? 2 : 1);
        ASSERT(lp_full_ranking(emb, N, D, test, n_test, train, n_train, excl, n_excl, Ks[t], &r2, &n2, &a2,
                               &err) == 0);
        omp_set_num_threads(nt);
        ASSERT(r1 == r2 && n1 == n2);
    }
    // the exclusions matter: for anchors 0..149 put their best two nodes (by a brute-force
    // ranking: score desc, id asc, the anchor itself left out) in train and the third in test.
    // With train excluded the test node ranks first (Recall@1 = 1); without, third (0).
    const int64_t A = 150;
    int64_t *tr2 = malloc((size_t)(2 * A) * 16), *te2 = malloc((size_t)A * 16);
    for (int64_t a = 0; a < A; a++) {
        int64_t best[3] = {-1, -1, -1};
        float bs[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int64_t v = 0; v < N; v++) {
            if (v == a) continue;
            float s = 0.0f;
            for (int64_t d = 0; d < D; d++) s += emb[a * D + d] * emb[v * D + d];
            for (int k = 0; k < 3; k++)
                if (best[k] < 0 || s > bs[k]) { /* strict: the earlier (lower) id keeps a tie */
                    for (int m = 2; m > k; m--) best[m] = best[m - 1], bs[m] = bs[m - 1];
                    best[k] = v, bs[k] = s;
                    break;
                }
        }
        tr2[4 * a] = a, tr2[4 * a + 1] = best[0], tr2[4 * a + 2] = a, tr2[4 * a + 3] = best[1];
        te2[2 * a] = a, te2[2 * a + 1] = best[2];
    }
    for (int fast = 0; fast < 2; fast++) {
        full_fn f = fast ? lp_full_ranking : lp_full_ranking_ref;
        double r3, n3;
        int64_t a3;
        cgnn_err err = {0};
        ASSERT(f(emb, N, D, te2, A, tr2, 2 * A, NULL, 0, 1, &r3, &n3, &a3, &err) == 0);
        ASSERT_EQ(a3, A);
        ASSERT_NEAR(r3, 1.0, 1e-12);
        ASSERT_NEAR(n3, 1.0, 1e-12);
        ASSERT(f(emb, N, D, te2, A, NULL, 0, NULL, 0, 1, &r3, &n3, &a3, &err) == 0);
        ASSERT_NEAR(r3, 0.0, 1e-12);
        ASSERT(f(emb, N, D, te2, A, NULL, 0, tr2, 2 * A, 3, &r3, &n3, &a3, &err) == 0); /* as exclude_pairs */
        ASSERT_NEAR(n3, 1.0, 1e-12);
        ASSERT(f(emb, N, D, te2, A, NULL, 0, NULL, 0, 3, &r3, &n3, &a3, &err) == 0);
        ASSERT_NEAR(r3, 1.0, 1e-12);
        ASSERT_NEAR(n3, 0.5, 1e-12); /* rank 3: 1 / log2(4) */
    }
    free(tr2), free(te2);
    cgnn_err err = {0};
    // random float embeddings: no exact ties; fast and ref agree
    rng r;
    rng_init(&r, rng_key(15, 3));
    for (int64_t k = 0; k < N * D; k++) emb[k] = (float)(2.0 * rng_uniform(&r) - 1.0);
    double r5, n5, r6, n6;
    int64_t a5, a6;
    ASSERT(lp_full_ranking(emb, N, D, test, n_test, train, n_train, excl, n_excl, 10, &r5, &n5, &a5, &err) == 0);
    ASSERT(lp_full_ranking_ref(emb, N, D, test, n_test, train, n_train, excl, n_excl, 10, &r6, &n6, &a6,
                               &err) == 0);
    ASSERT_NEAR(r5, r6, 1e-12);
    ASSERT_NEAR(n5, n6, 1e-12);
    free(emb), free(test), free(train), free(excl);
}

/* The 30k anchors × 40k nodes × D = 64 case, timed (CGNN_LP_BENCH=1 only). */
TEST(full_timing) {
    const char *b = getenv("CGNN_LP_BENCH");
    if (!b || strcmp(b, "1") != 0) SKIP("set CGNN_LP_BENCH=1 to time 30k anchors x 40k nodes x 64");
    const int64_t N = 40000, D = 64, A = 30000, n_test = 60000, n_train = 600000;
    float *emb = malloc((size_t)(N * D) * 4);
    int64_t *test = malloc((size_t)n_test * 16), *train = malloc((size_t)n_train * 16);
    rng r;
    rng_init(&r, rng_key(21, 0));
    for (int64_t k = 0; k < N * D; k++) emb[k] = (float)(rng_uniform(&r) - 0.5);
    for (int64_t i = 0; i < n_test; i++) test[2 * i] = i % A, test[2 * i + 1] = (int64_t)rng_below(&r, N);
    for (int64_t i = 0; i < n_train; i++) train[2 * i] = i % A, train[2 * i + 1] = (int64_t)rng_below(&r, N);
    double rec, nd;
    int64_t na;
    cgnn_err err = {0};
    struct timespec c0, c1; /* CPU time of the process: what the run costs on a shared machine */
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double t0 = timer_now();
    ASSERT(lp_full_ranking(emb, N, D, test, n_test, train, n_train, NULL, 0, 20, &rec, &nd, &na, &err) == 0);
    double dt = timer_now() - t0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    const double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    fprintf(stderr, "  %lld anchors x %lld nodes x %lld dims, K 20, %d threads: %.2f s wall, %.2f s CPU "
                    "(%.1f GFLOP/s of scores per CPU second); recall %.5f ndcg %.5f\n",
            (long long)na, (long long)N, (long long)D, omp_get_max_threads(), dt, cpu,
            2.0 * (double)na * (double)N * (double)D / cpu * 1e-9, rec, nd);
    ASSERT_EQ(na, A);
    free(emb), free(test), free(train);
}

/* ---- ROC-AUC / average precision (lp_auc_ap) against plain references ---------------------- */

/* AUC by counting every (positive, negative) pair: 1 if the positive scores higher, 1/2 if tied. */
static double auc_pairs_ref(const float *s, const float *y, int n) {
    double num = 0.0, pairs = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (y[i] == 1.0f && y[j] == 0.0f) {
                pairs += 1.0;
                num += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
            }
    return pairs > 0 ? num / pairs : NAN;
}

/* scikit-learn's average_precision_score written out: for every distinct score t, from the
 * highest, TP(t) / FP(t) = positives / negatives scoring >= t; AP = sum (R(t) - R(prev)) P(t). */
static double ap_sklearn_ref(const float *s, const float *y, int n) {
    double P = 0.0;
    for (int i = 0; i < n; i++) P += y[i] == 1.0f;
    if (P == 0) return NAN;
    double ap = 0.0, prev_recall = 0.0;
    float last = INFINITY;
    for (;;) { /* the next distinct threshold below `last` */
        int found = 0;
        float t = -INFINITY;
        for (int i = 0; i < n; i++)
            if (s[i] < last && (!found || s[i] > t)) t = s[i], found = 1;
        if (!found) break;
        double tp = 0, fp = 0;
        for (int i = 0; i < n; i++)
            if (s[i] >= t) {
                if (y[i] == 1.0f)
                    tp += 1;
                else
                    fp += 1;
            }
        const double recall = tp / P, precision = tp / (tp + fp);
        ap += (recall - prev_recall) * precision;
        prev_recall = recall;
        last = t;
    }
    return ap;
}

static void auc_rows(const float *s, const float *y, int n, float *rows) {
    for (int i = 0; i < n; i++) rows[2 * i] = s[i], rows[2 * i + 1] = y[i];
}

static void check_auc_case(const float *s, const float *y, int n, double want_auc, double want_ap) {
    float rows[64];
    auc_rows(s, y, n, rows);
    double auc, ap;
    lp_auc_ap(rows, n, &auc, &ap);
    ASSERT_NEAR(auc, want_auc, 1e-12);
    ASSERT_NEAR(ap, want_ap, 1e-12);
    ASSERT_NEAR(auc_pairs_ref(s, y, n), want_auc, 1e-12);
    ASSERT_NEAR(ap_sklearn_ref(s, y, n), want_ap, 1e-12);
}

TEST(auc_ap_hand) {
    /* scikit-learn's docstring example: roc_auc 0.75, average precision 0.8333 */
    const float s1[4] = {0.1f, 0.4f, 0.35f, 0.8f}, y1[4] = {0, 0, 1, 1};
    check_auc_case(s1, y1, 4, 0.75, 0.5 * 1.0 + 0.5 * (2.0 / 3.0));
    /* ties between a positive and a negative: positives {0.5, 0.5, 0.9}, negatives {0.5, 0.2}:
     * AUC = (2 x (1/2 + 1) + 2) / 6 = 5/6; AP = 1/3 x 1 (t = 0.9) + 2/3 x 3/4 (t = 0.5) = 5/6 */
    const float s2[5] = {0.5f, 0.5f, 0.5f, 0.2f, 0.9f}, y2[5] = {1, 0, 1, 0, 1};
    check_auc_case(s2, y2, 5, 5.0 / 6.0, 5.0 / 6.0);
    /* all tied: AUC 1/2, AP = the positive fraction 2/5 */
    const float s3[5] = {0.3f, 0.3f, 0.3f, 0.3f, 0.3f}, y3[5] = {1, 0, 0, 1, 0};
    check_auc_case(s3, y3, 5, 0.5, 0.4);
    /* perfect ranking */
    const float s4[6] = {-1, 2, 0.5f, 3, -2, 1}, y4[6] = {0, 1, 0, 1, 0, 1};
    check_auc_case(s4, y4, 6, 1.0, 1.0);
    /* reversed ranking: AUC 0; AP = 1/2 x 1/3 + 1/2 x 2/4 = 5/12 */
    const float s5[4] = {4, 3, 2, 1}, y5[4] = {0, 0, 1, 1};
    check_auc_case(s5, y5, 4, 0.0, 5.0 / 12.0);
    /* one positive tied with all negatives at the top, one below them */
    const float s6[4] = {1, 1, 1, 0}, y6[4] = {1, 0, 0, 1};
    check_auc_case(s6, y6, 4, 0.25, 0.5 * (1.0 / 3.0) + 0.5 * 0.5);
}

TEST(auc_ap_undefined) {
    double auc, ap;
    const float only_pos[4] = {0.5f, 1, 0.2f, 1};
    lp_auc_ap(only_pos, 2, &auc, &ap);
    ASSERT(isnan(auc));
    ASSERT_NEAR(ap, 1.0, 1e-12);
    const float only_neg[4] = {0.5f, 0, 0.2f, 0};
    lp_auc_ap(only_neg, 2, &auc, &ap);
    ASSERT(isnan(auc) && isnan(ap));
    lp_auc_ap(only_neg, 0, &auc, &ap);
    ASSERT(isnan(auc) && isnan(ap));
    const float with_nan[6] = {0.5f, 1, NAN, 0, 0.1f, 0};
    lp_auc_ap(with_nan, 3, &auc, &ap);
    ASSERT(isnan(auc) && isnan(ap));
    /* -0 and +0 are one score (a tie), infinities are ordinary scores */
    const float zeros[8] = {-0.0f, 1, 0.0f, 0, INFINITY, 1, -INFINITY, 0};
    lp_auc_ap(zeros, 4, &auc, &ap);
    ASSERT_NEAR(auc, (1.0 + 1.0 + 0.5 + 1.0) / 4.0, 1e-12);
    ASSERT_NEAR(ap, 0.5 * 1.0 + 0.5 * (2.0 / 3.0), 1e-12);
}

/* Random rows with many ties (scores from 12 values, ~40% positives): equal to both references,
 * and bitwise the same after shuffling the rows (the order of a gather never matters). */
TEST(auc_ap_random_vs_ref) {
    enum { MAXN = 400 };
    static float s[MAXN], y[MAXN], rows[2 * MAXN], shuf[2 * MAXN];
    rng r;
    rng_init(&r, rng_key(77, 1));
    for (int trial = 0; trial < 60; trial++) {
        const int n = 1 + (int)rng_below(&r, MAXN);
        const int levels = 1 + (int)rng_below(&r, 12);
        for (int i = 0; i < n; i++) {
            s[i] = (float)rng_below(&r, (uint64_t)levels) * 0.25f - 1.0f;
            y[i] = rng_uniform(&r) < 0.4 ? 1.0f : 0.0f;
        }
        auc_rows(s, y, n, rows);
        double auc, ap, auc2, ap2;
        lp_auc_ap(rows, n, &auc, &ap);
        const double ra = auc_pairs_ref(s, y, n), rp = ap_sklearn_ref(s, y, n);
        if (isnan(ra))
            ASSERT(isnan(auc));
        else
            ASSERT_NEAR(auc, ra, 1e-12);
        if (isnan(rp))
            ASSERT(isnan(ap));
        else
            ASSERT_NEAR(ap, rp, 1e-12);
        memcpy(shuf, rows, (size_t)(2 * n) * sizeof(float));
        for (int i = n - 1; i > 0; i--) {
            const int j = (int)rng_below(&r, (uint64_t)i + 1);
            float t0 = shuf[2 * i], t1 = shuf[2 * i + 1];
            shuf[2 * i] = shuf[2 * j], shuf[2 * i + 1] = shuf[2 * j + 1];
            shuf[2 * j] = t0, shuf[2 * j + 1] = t1;
        }
        lp_auc_ap(shuf, n, &auc2, &ap2);
        ASSERT(memcmp(&auc, &auc2, sizeof auc) == 0 && memcmp(&ap, &ap2, sizeof ap) == 0);
    }
}

/* The gathering wrapper in a world of one: the rows of the buffer, nothing else. */
TEST(auc_ap_buffer_serial) {
    static const dist_ctx serial = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    lp_score_buf b;
    lp_score_buf_init(&b, 4);
    const float rows[8] = {0.1f, 0, 0.4f, 0, 0.35f, 1, 0.8f, 1};
    memcpy(b.rows, rows, sizeof rows);
    b.n = 4;
    double auc, ap;
    lp_auc_ap_allgather(&serial, &b, &auc, &ap);
    ASSERT_NEAR(auc, 0.75, 1e-12);
    ASSERT_NEAR(ap, 0.5 + 0.5 * (2.0 / 3.0), 1e-12);
    lp_score_buf_free(&b);
    lp_score_buf_free(NULL);
}

/* Typed full ranking: anchors of one node type (Nq), candidates of another (Nc, several score
 * tiles): fast equals ref; an anchor id equal to a candidate id is still a candidate (another
 * node); same_space on one matrix is lp_full_ranking; ids are checked against their own type. */
TEST(full_typed) {
    const int64_t Nq = 90, Nc = 2600, D = 6, n_test = 300, n_train = 900, n_excl = 100;
    float *q = malloc((size_t)(Nq * D) * 4), *c = malloc((size_t)(Nc * D) * 4);
    int64_t *test = malloc((size_t)n_test * 16), *train = malloc((size_t)n_train * 16),
            *excl = malloc((size_t)n_excl * 16);
    fill_int(q, Nq * D, 21, -2, 2); /* integers: ties, and exact GEMMs */
    fill_int(c, Nc * D, 22, -2, 2);
    random_pairs(test, n_test, 23, Nc);
    for (int64_t i = 0; i < n_test; i++) test[2 * i] %= Nq;
    random_pairs(train, n_train, 24, Nc);
    for (int64_t i = 0; i < n_train; i++) train[2 * i] %= Nq;
    random_pairs(excl, n_excl, 25, Nc);
    for (int64_t i = 0; i < n_excl; i++) excl[2 * i] %= Nq;
    /* every other test positive a copy of its anchor's row: hits at small K, and ties */
    for (int64_t i = 0; i < n_test; i += 2) memcpy(c + test[2 * i + 1] * D, q + test[2 * i] * D, (size_t)D * 4);
    const int Ks[] = {1, 10, 3000};
    for (int t = 0; t < 3; t++) {
        double r1, n1, r2, n2;
        int64_t a1, a2;
        cgnn_err err = {0};
        ASSERT(lp_full_ranking_typed(q, Nq, c, Nc, D, 0, test, n_test, train, n_train, excl, n_excl, Ks[t], &r1, &n1,
                                     &a1, &err) == 0);
        ASSERT(lp_full_ranking_typed_ref(q, Nq, c, Nc, D, 0, test, n_test, train, n_train, excl, n_excl, Ks[t], &r2,
                                         &n2, &a2, &err) == 0);
        fprintf(stderr, "  typed K %4d: %lld anchors, recall %.6f ndcg %.6f (ref %.6f %.6f)\n", Ks[t], (long long)a1,
                r1, n1, r2, n2);
        ASSERT_EQ(a1, a2);
        ASSERT(a1 > 50 && a1 <= Nq);
        ASSERT_NEAR(r1, r2, 1e-12);
        ASSERT_NEAR(n1, n2, 1e-12);
        if (Ks[t] == 3000) ASSERT_NEAR(r1, 1.0, 1e-12);
        if (Ks[t] == 10) ASSERT(r1 > 0.2);
    }
    /* hand case: one anchor (1, 0); candidates 0, 1, 2 score 1, 0.5, 0.25. Across types candidate
     * 0 is another node than anchor 0: a positive 1 ranks second. In one space node 0 is the
     * anchor itself, left out: positive 1 ranks first, as lp_full_ranking says. */
    const float hq[2] = {1, 0}, hc[6] = {1, 0, 0.5f, 0, 0.25f, 0};
    const int64_t p0[2] = {0, 0}, p1[2] = {0, 1};
    double r, nd;
    int64_t na;
    cgnn_err err = {0};
    ASSERT(lp_full_ranking_typed(hq, 1, hc, 3, 2, 0, p0, 1, NULL, 0, NULL, 0, 1, &r, &nd, &na, &err) == 0);
    ASSERT_NEAR(r, 1.0, 0);
    ASSERT(lp_full_ranking_typed(hq, 1, hc, 3, 2, 0, p1, 1, NULL, 0, NULL, 0, 1, &r, &nd, &na, &err) == 0);
    ASSERT_NEAR(r, 0.0, 0); /* candidate 0 (another type's node 0) outranks the positive */
    ASSERT(lp_full_ranking_typed(hc, 3, hc, 3, 2, 1, p1, 1, NULL, 0, NULL, 0, 1, &r, &nd, &na, &err) == 0);
    ASSERT_NEAR(r, 1.0, 0); /* one space: node 0 is the anchor itself, left out */
    double r2, nd2;
    int64_t na2;
    ASSERT(lp_full_ranking(hc, 3, 2, p1, 1, NULL, 0, NULL, 0, 1, &r2, &nd2, &na2, &err) == 0);
    ASSERT(r == r2 && nd == nd2 && na == na2);
    /* ids against their own type: anchor 1 of a 1-node type, positive 2 of 3 candidates is fine */
    const int64_t bad_anchor[2] = {1, 2};
    ASSERT(lp_full_ranking_typed(hq, 1, hc, 3, 2, 0, bad_anchor, 1, NULL, 0, NULL, 0, 1, &r, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "anchor id 1 out of range [0, 1)");
    const int64_t bad_pos[2] = {0, 3};
    ASSERT(lp_full_ranking_typed_ref(hq, 1, hc, 3, 2, 0, bad_pos, 1, NULL, 0, NULL, 0, 1, &r, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "positive id 3 out of range [0, 3)");
    free(q), free(c), free(test), free(train), free(excl);
}

/* The plain answer the range version must give: per anchor, every node of [lo, hi) not excluded
 * (the anchor itself, its train / exclude positives; a test positive always in), scored by an
 * exact dot product (integer data), sorted score descending then id ascending, Recall@K / NDCG@K. */
static void brute_range(const float *emb, int64_t N, int64_t D, int64_t lo, int64_t hi, const int64_t *test,
                        int64_t n_test, const int64_t *train, int64_t n_train, const int64_t *excl, int64_t n_excl,
                        int K, double *recall, double *ndcg, int64_t *num_anchors) {
    char *is_t = calloc((size_t)N, 1), *is_x = calloc((size_t)N, 1), *seen = calloc((size_t)N, 1);
    int64_t *c = malloc((size_t)N * sizeof(int64_t));
    double *sc = malloc((size_t)N * sizeof(double));
    double sr = 0, sn = 0;
    int64_t A = 0;
    for (int64_t a = 0; a < N; a++) { /* anchors in increasing id: the order the library averages in */
        int64_t T = 0;
        for (int64_t i = 0; i < n_test; i++)
            if (test[2 * i] == a && !is_t[test[2 * i + 1]]) is_t[test[2 * i + 1]] = 1, T++;
        if (T == 0) continue;
        seen[a] = 1;
        is_x[a] = 1;
        for (int64_t i = 0; i < n_train; i++)
            if (train[2 * i] == a) is_x[train[2 * i + 1]] = 1;
        for (int64_t i = 0; i < n_excl; i++)
            if (excl[2 * i] == a) is_x[excl[2 * i + 1]] = 1;
        int64_t n = 0;
        for (int64_t v = lo; v < hi; v++) {
            if (is_x[v] && !is_t[v]) continue;
            double dot = 0;
            for (int64_t d = 0; d < D; d++) dot += (double)emb[a * D + d] * emb[v * D + d];
            c[n] = v, sc[n] = dot, n++;
        }
        for (int64_t i = 1; i < n; i++) /* insertion sort: score desc, id asc */
            for (int64_t j = i; j > 0 && (sc[j] > sc[j - 1] || (sc[j] == sc[j - 1] && c[j] < c[j - 1])); j--) {
                double ts = sc[j]; sc[j] = sc[j - 1], sc[j - 1] = ts;
                int64_t tc = c[j]; c[j] = c[j - 1], c[j - 1] = tc;
            }
        double hits = 0, dcg = 0, idcg = 0;
        for (int64_t r = 0; r < K && r < n; r++)
            if (is_t[c[r]]) hits++, dcg += 1.0 / log2((double)r + 2);
        for (int64_t r = 0; r < K && r < T; r++) idcg += 1.0 / log2((double)r + 2);
        sr += hits / (double)T, sn += dcg / idcg, A++;
        memset(is_t, 0, (size_t)N), memset(is_x, 0, (size_t)N);
    }
    *recall = A ? sr / (double)A : 0, *ndcg = A ? sn / (double)A : 0, *num_anchors = A;
    free(is_t), free(is_x), free(seen), free(c), free(sc);
}

TEST(full_range) {
    const int64_t N = 900, D = 5, lo = 300, hi = 900, n_test = 350, n_train = 1200, n_excl = 150;
    float *emb = malloc((size_t)(N * D) * 4);
    int64_t *test = malloc((size_t)n_test * 16), *train = malloc((size_t)n_train * 16),
            *excl = malloc((size_t)n_excl * 16);
    fill_int(emb, N * D, 31, -2, 2); /* integers: exact dot products, plenty of ties */
    random_pairs(test, n_test, 32, N);
    random_pairs(train, n_train, 33, N); /* train positives anywhere: outside the range they are ignored */
    random_pairs(excl, n_excl, 34, N);
    // anchors 200..399: some outside the range, some inside (then the anchor excludes itself);
    // test positives inside the range, every third a copy of its anchor's row (hits)
    for (int64_t i = 0; i < n_test; i++) {
        test[2 * i] = 200 + test[2 * i] % 200;
        test[2 * i + 1] = lo + test[2 * i + 1] % (hi - lo);
        if (i % 3 == 0 && test[2 * i + 1] != test[2 * i])
            memcpy(emb + test[2 * i + 1] * D, emb + test[2 * i] * D, (size_t)D * 4);
    }
    for (int64_t i = 0; i < n_train; i++) train[2 * i] = 200 + train[2 * i] % 200;
    for (int64_t i = 0; i < n_excl; i++) excl[2 * i] = 200 + excl[2 * i] % 200;
    test[0] = 350, test[1] = 350; /* an anchor whose own id is a test positive: a candidate */
    const int Ks[] = {1, 7, 50, 1000};
    for (int t = 0; t < 4; t++) {
        double rb, nb, r1, n1, r2, n2;
        int64_t ab, a1, a2;
        cgnn_err err = {0};
        brute_range(emb, N, D, lo, hi, test, n_test, train, n_train, excl, n_excl, Ks[t], &rb, &nb, &ab);
        ASSERT(lp_full_ranking_range(emb, N, D, lo, hi, test, n_test, train, n_train, excl, n_excl, Ks[t], &r1, &n1,
                                     &a1, &err) == 0);
        ASSERT(lp_full_ranking_range_ref(emb, N, D, lo, hi, test, n_test, train, n_train, excl, n_excl, Ks[t], &r2,
                                         &n2, &a2, &err) == 0);
        fprintf(stderr, "  range K %4d: %lld anchors, recall %.6f ndcg %.6f (ref %.6f %.6f, brute %.6f %.6f)\n", Ks[t],
                (long long)a1, r1, n1, r2, n2, rb, nb);
        ASSERT_EQ(a1, ab);
        ASSERT_EQ(a2, ab);
        ASSERT_NEAR(r1, rb, 1e-12);
        ASSERT_NEAR(n1, nb, 1e-12);
        ASSERT_NEAR(r2, rb, 1e-12);
        ASSERT_NEAR(n2, nb, 1e-12);
        ASSERT(r1 > 0.0);
        if (Ks[t] == 1000) ASSERT_NEAR(r1, 1.0, 1e-12);
        // the range matters: over every node the answer differs (users outrank items)
        double ra, na_;
        int64_t aa;
        ASSERT(lp_full_ranking(emb, N, D, test, n_test, train, n_train, excl, n_excl, Ks[t], &ra, &na_, &aa, &err) == 0);
        if (Ks[t] == 7) ASSERT(ra != r1);
        // [0, N) is lp_full_ranking
        ASSERT(lp_full_ranking_range(emb, N, D, 0, N, test, n_test, train, n_train, excl, n_excl, Ks[t], &r2, &n2, &a2,
                                     &err) == 0);
        ASSERT(r2 == ra && n2 == na_ && a2 == aa);
        // thread count independent
        const int nt = omp_get_max_threads();
        omp_set_num_threads(nt == 1 ? 2 : 1);
        ASSERT(lp_full_ranking_range(emb, N, D, lo, hi, test, n_test, train, n_train, excl, n_excl, Ks[t], &r2, &n2,
                                     &a2, &err) == 0);
        omp_set_num_threads(nt);
        ASSERT(r1 == r2 && n1 == n2);
    }
    // errors
    double r, nd;
    int64_t na;
    cgnn_err err = {0};
    ASSERT(lp_full_ranking_range(emb, N, D, 500, 500, test, n_test, NULL, 0, NULL, 0, 5, &r, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "candidate range 500:500");
    ASSERT(lp_full_ranking_range(emb, N, D, 0, N + 1, test, n_test, NULL, 0, NULL, 0, 5, &r, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "<= 900");
    ASSERT(lp_full_ranking_range_ref(emb, N, D, -1, 5, test, n_test, NULL, 0, NULL, 0, 5, &r, &nd, &na, &err) == -1);
    const int64_t outside[4] = {5, 400, 6, 299};
    ASSERT(lp_full_ranking_range(emb, N, D, lo, hi, outside, 2, NULL, 0, NULL, 0, 5, &r, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "test_pairs: row 1: positive id 299 outside the candidate range [300, 900)");
    const int64_t bad_train[2] = {5, 900};
    ASSERT(lp_full_ranking_range_ref(emb, N, D, lo, hi, test, 1, bad_train, 1, NULL, 0, 5, &r, &nd, &na, &err) == -1);
    ASSERT_STR_CONTAINS(err.msg, "train_pairs: row 0: positive id 900 out of range [0, 900)");
    free(emb), free(test), free(train), free(excl);
}

TEST(candidate_range_parse) {
    int64_t lo = -7, hi = -7;
    ASSERT(lp_candidate_range_parse("31668:69716", &lo, &hi) == 0);
    ASSERT(lo == 31668 && hi == 69716);
    ASSERT(lp_candidate_range_parse(" 0 :\t1 ", &lo, &hi) == 0);
    ASSERT(lo == 0 && hi == 1);
    const char *bad[] = {"", ":", "5", "5:", ":5", "5:5", "6:5", "-1:5", "+1:5", "1:5:6", "1e3:5000", "0x1:5",
                         "a:b", "1 2:5", "1:5 x", "9999999999999999999:99999999999999999999", "1.0:5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lo = hi = -7;
        ASSERT(lp_candidate_range_parse(bad[i], &lo, &hi) == -1);
        ASSERT(lo == -7 && hi == -7); /* nothing written */
    }
    ASSERT(lp_candidate_range_parse(NULL, &lo, &hi) == -1);
}

int main(void) {
    RUN(rank_hand);
    RUN(rank_boundaries_and_nan);
    RUN(rank_metrics_names);
    RUN(rank_fast_vs_ref);
    RUN(rank_listed_hand);
    RUN(rank_listed_fast_vs_ref);
    RUN(full_hand);
    RUN(full_recall_not_capped);
    RUN(full_errors);
    RUN(full_fast_vs_ref);
    RUN(full_typed);
    RUN(full_range);
    RUN(candidate_range_parse);
    RUN(full_timing);
    RUN(auc_ap_hand);
    RUN(auc_ap_undefined);
    RUN(auc_ap_random_vs_ref);
    RUN(auc_ap_buffer_serial);
    return test_summary();
}
