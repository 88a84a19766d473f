/* test_edge_split.c — GiGL's self-supervised link prediction split (graph/edge_split): the hash
 * and the per-anchor split against GiGL's own unit tests (tests/unit/utils/data_splitters_test.py,
 * GiGL commit fee4ba5), label counts as GiGL computes them, determinism, disjointness, the
 * per-anchor property, argument checks, and the filtered in-neighbour index. */
#include "graph/edge_split.h"

#include "test.h"
#include "test_graph_util.h"

/* GiGL's test_fast_hash, "Fast hash with int64": _fast_hash([[0, 1], [2, 3]]) */
TEST(fast_hash_matches_gigl) {
    const int64_t want[4] = {1622107259858988186LL, 3834912982681189024LL, 2886753494712499930LL,
                             5597559336455034305LL};
    for (int i = 0; i < 4; i++) ASSERT_EQ(edge_split_fast_hash(i), want[i]);
}

/* GiGL's test_node_based_link_splitter cases (identity hash) */
TEST(assign_matches_gigl_identity_hash) {
    uint8_t out[16];
    int64_t h10[10];
    for (int i = 0; i < 10; i++) h10[i] = i;
    edge_split_assign(out, h10, 10, 0.1, 0.1); /* 0-7 train, 8 val, 9 test */
    for (int i = 0; i < 8; i++) ASSERT_EQ(out[i], EDGE_SPLIT_TRAIN);
    ASSERT_EQ(out[8], EDGE_SPLIT_VALID);
    ASSERT_EQ(out[9], EDGE_SPLIT_TEST);
    const int64_t h5[5] = {1, 2, 5, 20, 200}; /* 0.2 / 0.2: train 1 2 5 20, val empty, test 200 */
    edge_split_assign(out, h5, 5, 0.2, 0.2);
    for (int i = 0; i < 4; i++) ASSERT_EQ(out[i], EDGE_SPLIT_TRAIN);
    ASSERT_EQ(out[4], EDGE_SPLIT_TEST);
    const int64_t h1[1] = {0}; /* one source node id: train */
    edge_split_assign(out, h1, 1, 0.1, 0.1);
    ASSERT_EQ(out[0], EDGE_SPLIT_TRAIN);
}

static int same_split(const edge_split *a, const edge_split *b) {
    if (a->num_edges != b->num_edges || a->num_labels != b->num_labels) return 0;
    if (memcmp(a->which, b->which, (size_t)a->num_edges) != 0) return 0;
    for (int k = 0; k < EDGE_SPLIT_COUNT; k++)
        if (a->num_pairs[k] != b->num_pairs[k] ||
            memcmp(a->pairs[k], b->pairs[k], (size_t)(2 * a->num_pairs[k]) * sizeof(int64_t)) != 0)
            return 0;
    return 1;
}

TEST(split_sizes_determinism_disjoint_per_anchor) {
    int32_t *src, *dst;
    const int64_t n = 3000, e = test_random_graph(n, 6, 200, 5, &src, &dst);
    const ds_edges ed = test_edges(src, dst, e);
    cgnn_err err;
    const double ps[] = {0.05, 0.5, 1.0};
    for (int pi = 0; pi < 3; pi++) {
        edge_split a, b, c;
        ASSERT_EQ(edge_split_make(&a, &ed, n, ps[pi], 0.1, 0.1, 42, &err), 0);
        ASSERT_EQ(a.num_labels, (int64_t)((double)e * ps[pi])); /* Python's int(E * p) */
        ASSERT_EQ(a.num_pairs[0] + a.num_pairs[1] + a.num_pairs[2], a.num_labels);
        int64_t marked = 0;
        for (int64_t i = 0; i < e; i++) marked += a.which[i] != 0;
        ASSERT_EQ(marked, a.num_labels);
        /* the same seed: the same bits; another seed: other labels (p < 1) */
        ASSERT_EQ(edge_split_make(&b, &ed, n, ps[pi], 0.1, 0.1, 42, &err), 0);
        ASSERT(same_split(&a, &b));
        ASSERT_EQ(edge_split_make(&c, &ed, n, ps[pi], 0.1, 0.1, 43, &err), 0);
        if (ps[pi] < 1) ASSERT(memcmp(a.which, c.which, (size_t)e) != 0);
        else ASSERT(same_split(&a, &c)); /* every edge is a label; the anchor split has no seed */
        /* per anchor: an anchor's label edges all in one split, given by GiGL's hash of the anchor */
        int8_t *anchor_split = malloc((size_t)n);
        memset(anchor_split, -1, (size_t)n);
        int64_t anchors[EDGE_SPLIT_COUNT] = {0};
        for (int k = 0; k < EDGE_SPLIT_COUNT; k++)
            for (int64_t i = 0; i < a.num_pairs[k]; i++) {
                const int64_t s = a.pairs[k][2 * i], d = a.pairs[k][2 * i + 1];
                ASSERT(s >= 0 && s < n && d >= 0 && d < n);
                if (anchor_split[s] < 0) anchor_split[s] = (int8_t)k, anchors[k]++;
                ASSERT_EQ(anchor_split[s], k); /* disjoint: no anchor in two splits */
            }
        for (int k = 0; k < EDGE_SPLIT_COUNT; k++) ASSERT_EQ(anchors[k], a.num_anchors[k]);
        /* pairs are the marked edges, in edge-list order */
        int64_t pos[EDGE_SPLIT_COUNT] = {0};
        for (int64_t i = 0; i < e; i++) {
            if (!a.which[i]) continue;
            const int k = a.which[i] - 1;
            ASSERT_EQ(a.pairs[k][2 * pos[k]], src[i]);
            ASSERT_EQ(a.pairs[k][2 * pos[k] + 1], dst[i]);
            pos[k]++;
        }
        /* the anchors' splits are GiGL's assignment of their hashes */
        int64_t na = 0;
        for (int64_t v = 0; v < n; v++) na += anchor_split[v] >= 0;
        int64_t *h = malloc((size_t)na * sizeof *h);
        uint8_t *want = malloc((size_t)na);
        na = 0;
        for (int64_t v = 0; v < n; v++)
            if (anchor_split[v] >= 0) h[na++] = edge_split_fast_hash(v);
        edge_split_assign(want, h, na, 0.1, 0.1);
        na = 0;
        for (int64_t v = 0; v < n; v++)
            if (anchor_split[v] >= 0) ASSERT_EQ(anchor_split[v], want[na++]);
        ASSERT(a.num_pairs[EDGE_SPLIT_VALID] > 0 && a.num_pairs[EDGE_SPLIT_TEST] > 0);
        fprintf(stderr, "p %.2f: %lld edges, %lld labels: pairs %lld / %lld / %lld, anchors %lld / %lld / %lld\n",
                ps[pi], (long long)e, (long long)a.num_labels, (long long)a.num_pairs[0], (long long)a.num_pairs[1],
                (long long)a.num_pairs[2], (long long)a.num_anchors[0], (long long)a.num_anchors[1],
                (long long)a.num_anchors[2]);
        free(h), free(want), free(anchor_split);
        edge_split_free(&a), edge_split_free(&b), edge_split_free(&c);
    }
    free(src), free(dst);
}

TEST(filtered_index_drops_eval_edges_only) {
    int32_t *src, *dst;
    const int64_t n = 2000, e = test_random_graph(n, 5, 100, 9, &src, &dst);
    const ds_edges ed = test_edges(src, dst, e);
    cgnn_err err;
    edge_split s;
    ASSERT_EQ(edge_split_make(&s, &ed, n, 0.3, 0.2, 0.2, 7, &err), 0);
    csc_graph g1, g2, keep, full;
    int64_t removed = -1;
    ASSERT_EQ(edge_split_csc(&g1, &ed, n, n, &s, NULL, 0, 1, &removed, &err), 0);
    ASSERT_EQ(removed, s.num_pairs[EDGE_SPLIT_VALID] + s.num_pairs[EDGE_SPLIT_TEST]);
    ASSERT_EQ(g1.num_edges, e - removed);
    int64_t r2 = -1;
    ASSERT_EQ(edge_split_csc(&g2, &ed, n, n, &s, NULL, 0, 4, &r2, &err), 0); /* any thread count: the same index */
    ASSERT_EQ(memcmp(g1.indptr, g2.indptr, (size_t)(n + 1) * 8), 0);
    ASSERT_EQ(memcmp(g1.indices, g2.indices, (size_t)g1.num_edges * (size_t)g1.index_bytes), 0);
    /* in-degrees: the full graph's minus the removed edges' */
    int64_t *deg = calloc((size_t)n, sizeof *deg);
    for (int64_t i = 0; i < e; i++)
        if (!(s.which[i] == 1 + EDGE_SPLIT_VALID || s.which[i] == 1 + EDGE_SPLIT_TEST)) deg[dst[i]]++;
    for (int64_t v = 0; v < n; v++) ASSERT_EQ(csc_degree(&g1, v), deg[v]);
    /* keep_eval: every edge, the same index as csc_build */
    ASSERT_EQ(edge_split_csc(&keep, &ed, n, n, &s, NULL, 1, 2, &removed, &err), 0);
    ASSERT_EQ(removed, 0);
    ASSERT_EQ(csc_build(&full, n, &ed, 2, &err), 0);
    ASSERT_EQ(keep.num_edges, full.num_edges);
    ASSERT_EQ(memcmp(keep.indptr, full.indptr, (size_t)(n + 1) * 8), 0);
    ASSERT_EQ(memcmp(keep.indices, full.indices, (size_t)e * (size_t)full.index_bytes), 0);
    free(deg);
    csc_free(&g1), csc_free(&g2), csc_free(&keep), csc_free(&full);
    edge_split_free(&s);
    free(src), free(dst);
}

TEST(bad_arguments_name_the_field) {
    cgnn_err err;
    const struct {
        double p, val, test;
        const char *field;
    } bad[] = {
        {0, 0.1, 0.1, "ssl_positive_label_percentage"},   {-0.5, 0.1, 0.1, "ssl_positive_label_percentage"},
        {1.5, 0.1, 0.1, "ssl_positive_label_percentage"}, {0.5, 0, 0.1, "num_val"},
        {0.5, -0.1, 0.1, "num_val"},                      {0.5, 0.1, -0.1, "num_test"},
        {0.5, 0.5, 0.5, "num_val + num_test"},            {0.5, 0.6, 0.5, "num_val + num_test"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        ASSERT_EQ(edge_split_check(bad[i].p, bad[i].val, bad[i].test, &err), -1);
        ASSERT_EQ(err.code, CGNN_ERR_INPUT);
        ASSERT_STR_CONTAINS(err.msg, bad[i].field);
    }
    ASSERT_EQ(edge_split_check(1.0, 0.1, 0.0, &err), 0);
    /* too few edges for one label */
    const int32_t s[3] = {0, 1, 2}, d[3] = {1, 2, 0};
    const ds_edges ed = test_edges(s, d, 3);
    edge_split sp;
    memset(&err, 0, sizeof err);
    ASSERT_EQ(edge_split_make(&sp, &ed, 3, 0.2, 0.1, 0.1, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "ssl_positive_label_percentage");
    edge_split_free(&sp);
}

/* Reverse copies: on a graph that stores every edge both ways, edge_split_mark_reverse marks
 * exactly the edges (v, u) whose (u, v) is a validation / test label (checked against a brute
 * force over the label list), the filtered index then has no held-out pair in either direction,
 * and on a reverse edge type (the same edges, flipped) it marks the copy of every held-out label. */
TEST(reverse_copies_of_eval_labels) {
    int32_t *src, *dst;
    const int64_t n = 400, e1 = test_random_graph(n, 3, 40, 4, &src, &dst);
    const int64_t e = 2 * e1; /* both ways */
    int32_t *s2 = malloc((size_t)e * sizeof *s2), *d2 = malloc((size_t)e * sizeof *d2);
    for (int64_t i = 0; i < e1; i++) s2[i] = src[i], d2[i] = dst[i], s2[e1 + i] = dst[i], d2[e1 + i] = src[i];
    const ds_edges ed = test_edges(s2, d2, e);
    cgnn_err err;
    edge_split s;
    ASSERT_EQ(edge_split_make(&s, &ed, n, 0.4, 0.2, 0.2, 3, &err), 0);
    const int64_t held = s.num_pairs[EDGE_SPLIT_VALID] + s.num_pairs[EDGE_SPLIT_TEST];
    ASSERT(held > 0);
    uint8_t *drop = calloc((size_t)e, 1);
    const int64_t marked = edge_split_mark_reverse(drop, &ed, &s);
    int64_t want = 0;
    for (int64_t i = 0; i < e; i++) {
        int is_rev = 0;
        for (int k = EDGE_SPLIT_VALID; k <= EDGE_SPLIT_TEST && !is_rev; k++)
            for (int64_t j = 0; j < s.num_pairs[k] && !is_rev; j++)
                is_rev = s.pairs[k][2 * j] == d2[i] && s.pairs[k][2 * j + 1] == s2[i];
        ASSERT_EQ(drop[i], is_rev);
        want += is_rev;
    }
    ASSERT_EQ(marked, want);
    ASSERT(marked >= held); /* every held-out (u, v) has its (v, u) here (at least once) */
    /* the filtered index: no held-out pair left in either direction */
    csc_graph g;
    int64_t removed = -1;
    ASSERT_EQ(edge_split_csc(&g, &ed, n, n, &s, drop, 0, 2, &removed, &err), 0);
    for (int k = EDGE_SPLIT_VALID; k <= EDGE_SPLIT_TEST; k++)
        for (int64_t j = 0; j < s.num_pairs[k]; j++) {
            const int64_t u = s.pairs[k][2 * j], v = s.pairs[k][2 * j + 1];
            for (int64_t x = g.indptr[v]; x < g.indptr[v + 1]; x++) ASSERT(csc_index(&g, x) != u);
            for (int64_t x = g.indptr[u]; x < g.indptr[u + 1]; x++) ASSERT(csc_index(&g, x) != v);
        }
    int64_t dropped = 0;
    for (int64_t i = 0; i < e; i++) dropped += drop[i] || s.which[i] > 1 + EDGE_SPLIT_TRAIN;
    ASSERT_EQ(removed, dropped);
    ASSERT_EQ(g.num_edges, e - removed);
    /* a reverse edge type (every edge flipped): edge i is marked iff the unflipped (s2[i], d2[i]) is
     * a held-out label, so every held-out label edge's copy is marked */
    const ds_edges flipped = test_edges(d2, s2, e);
    uint8_t *drop2 = calloc((size_t)e, 1);
    const int64_t m2 = edge_split_mark_reverse(drop2, &flipped, &s);
    int64_t want2 = 0;
    for (int64_t i = 0; i < e; i++) {
        int held_pair = 0;
        for (int k = EDGE_SPLIT_VALID; k <= EDGE_SPLIT_TEST && !held_pair; k++)
            for (int64_t j = 0; j < s.num_pairs[k] && !held_pair; j++)
                held_pair = s.pairs[k][2 * j] == s2[i] && s.pairs[k][2 * j + 1] == d2[i];
        ASSERT_EQ(drop2[i], held_pair);
        if (s.which[i] > 1 + EDGE_SPLIT_TRAIN) ASSERT(drop2[i]);
        want2 += held_pair;
    }
    ASSERT_EQ(m2, want2);
    csc_free(&g);
    free(drop), free(drop2), free(s2), free(d2);
    edge_split_free(&s);
    free(src), free(dst);
}

int main(void) {
    RUN(fast_hash_matches_gigl);
    RUN(assign_matches_gigl_identity_hash);
    RUN(split_sizes_determinism_disjoint_per_anchor);
    RUN(filtered_index_drops_eval_edges_only);
    RUN(reverse_copies_of_eval_labels);
    RUN(bad_arguments_name_the_field);
    return test_summary();
}
