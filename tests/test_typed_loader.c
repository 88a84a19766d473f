/* test_typed_loader.c — the loader on a typed graph with labelled link-prediction pairs (GraphBolt
 * labels + indexes on an edge type (s, r, d)): the items are the positive rows; every batch lists
 * each group of its positives once, in order of first appearance, between the positives and the
 * random negatives, all of type d; item_local points the anchors at type s's output rows and
 * every candidate at type d's rows after them; the batch capacity includes the listed negatives;
 * the same batches for 0 and 3 sampler threads; bad labels are errors naming the row. */
#include <string.h>

#include "graph/typed_graph.h"
#include "sample/loader.h"
#include "test.h"

enum { T = 2, K = 2 };
static const int64_t NUM[T] = {50, 80}; /* user, item */
static const int ESRC[K] = {0, 1}, EDST[K] = {1, 0}; /* user:buys:item, item:bought_by:user */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

TEST(typed_labelled_pairs) {
    /* the graph: user u buys items (3u + k) % 80, k < 4; the reverse edge type likewise */
    csc_graph csc[K];
    int32_t src[K][200], dst[K][200];
    int64_t m = 0;
    for (int64_t u = 0; u < NUM[0]; u++)
        for (int64_t k = 0; k < 4; k++, m++) {
            src[0][m] = (int32_t)u, dst[0][m] = (int32_t)((3 * u + k) % NUM[1]);
            src[1][m] = dst[0][m], dst[1][m] = (int32_t)u;
        }
    const csc_graph *views[K];
    cgnn_err err = {0};
    for (int e = 0; e < K; e++) {
        ds_edges ed = {NPY_DTYPE_INT32, m, src[e], dst[e]};
        ASSERT_EQ(csc_build_range(&csc[e], 0, NUM[EDST[e]], NUM[ESRC[e]], &ed, 1, &err), 0);
        views[e] = &csc[e];
    }
    typed_graph g;
    typed_graph_init(&g, T, NUM, K, ESRC, EDST, views);
    /* 40 groups (index 500 - k): anchor user (7k) % 50, 1 + k % 3 positive items, k % 4 listed
     * negative items; rows interleaved by a fixed permutation (row r <- entry (r * 37) % M) */
    enum { G = 40 };
    int64_t ent_seeds[2 * 300], ent_labels[300], ent_idx[300], M = 0;
    for (int64_t k = 0; k < G; k++) {
        const int64_t a = (7 * k) % NUM[0];
        for (int64_t j = 0; j < 1 + k % 3; j++, M++)
            ent_seeds[2 * M] = a, ent_seeds[2 * M + 1] = (a + 1 + j) % NUM[1], ent_labels[M] = 1, ent_idx[M] = 500 - k;
        for (int64_t j = 0; j < k % 4; j++, M++)
            ent_seeds[2 * M] = a, ent_seeds[2 * M + 1] = (a + 40 + 3 * j) % NUM[1], ent_labels[M] = 0,
            ent_idx[M] = 500 - k;
    }
    ASSERT(M % 37 != 0 && M <= 300);
    int64_t seeds[2 * 300], labels[300], idx[300], num_pos = 0;
    for (int64_t r = 0; r < M; r++) {
        const int64_t q = (r * 37) % M;
        seeds[2 * r] = ent_seeds[2 * q], seeds[2 * r + 1] = ent_seeds[2 * q + 1];
        labels[r] = ent_labels[q], idx[r] = ent_idx[q];
        num_pos += labels[r];
    }
    loader_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.typed = &g;
    cfg.typed_sampler.num_layers = 2;
    for (int h = 0; h < 2; h++)
        for (int e = 0; e < K; e++) cfg.typed_sampler.fanouts[h][e] = 3;
    cfg.pair_etype = 0;
    cfg.type_width[0] = 4, cfg.type_width[1] = 4;
    cfg.batch_size = 8;
    cfg.shuffle = 1;
    cfg.seed = 3;
    cfg.world_size = 1;
    cfg.pairs = 1;
    cfg.num_negatives = 5;
    cfg.indexes = idx;
    cfg.exclude_seed_edges = 1;
    uint64_t ref[64] = {0}, got[64] = {0};
    int64_t nref = 0;
    const int workers[] = {0, 3};
    for (int w = 0; w < 2; w++) {
        cfg.num_workers = workers[w];
        loader l;
        ASSERT_EQ(loader_init(&l, NULL, seeds, labels, M, &cfg, &err), 0);
        ASSERT(loader_max_negatives(&l) <= 8 * 3 + 5 && loader_max_negatives(&l) > 5);
        ASSERT_EQ(loader_max_seeds(&l), 2 * 8 + loader_max_negatives(&l));
        /* the model is sized for the listed negatives too: item rows for positives + listed + random */
        minibatch_typed_capacity c0, c1;
        loader_typed_capacity(&cfg, &c0);
        loader_batch_typed_capacity(&l, &c1);
        ASSERT(c1.max_nodes[1][0] >= 8 + loader_max_negatives(&l));
        ASSERT(c1.max_nodes[1][0] > c0.max_nodes[1][0]);
        loader_start_epoch(&l, 0, 0);
        int64_t seen_pos = 0, n = 0;
        minibatch *mb;
        while ((mb = loader_next(&l)) != NULL) {
            const int64_t P = mb->num_items, H = mb->num_listed, ns = mb->typed->num_nodes[0][0];
            ASSERT_EQ(mb->num_negatives, 5);
            ASSERT(H + mb->num_negatives <= loader_max_negatives(&l));
            ASSERT_EQ(mb->num_seeds, ns + mb->typed->num_nodes[1][0]);
            int64_t expect_H = 0;
            for (int64_t i = 0; i < P; i++) {
                const int64_t row = mb->items[i];
                ASSERT_EQ(labels[row], 1);
                ASSERT(mb->item_local[i] < ns); /* anchors: type s's rows */
                ASSERT_EQ(mb->input_nodes[mb->item_local[i]], g.offset[0] + seeds[2 * row]);
                ASSERT(mb->item_local[P + i] >= ns); /* candidates: type d's rows, after them */
                ASSERT_EQ(mb->input_nodes[mb->item_local[P + i]], g.offset[1] + seeds[2 * row + 1]);
                int64_t cnt = 0, first = -1;
                for (int64_t r = 0; r < M; r++)
                    if (labels[r] == 0 && idx[r] == idx[row]) { /* the group's negatives, in row order */
                        ASSERT(cnt < mb->listed_len[i]);
                        const int32_t at = mb->item_local[2 * P + mb->listed_off[i] + cnt];
                        ASSERT(at >= ns);
                        ASSERT_EQ(mb->input_nodes[at], g.offset[1] + seeds[2 * r + 1]);
                        cnt++;
                    }
                ASSERT_EQ(mb->listed_len[i], cnt);
                for (int64_t j = 0; j < i; j++)
                    if (idx[mb->items[j]] == idx[row]) first = j;
                if (first >= 0 && cnt > 0) ASSERT_EQ(mb->listed_off[i], mb->listed_off[first]); /* listed once */
                if (first < 0) expect_H += cnt;
            }
            ASSERT_EQ(H, expect_H);
            for (int64_t k = 0; k < 5; k++) { /* random negatives: items (type d) */
                const int32_t at = mb->item_local[2 * P + H + k];
                ASSERT(at >= ns && mb->input_nodes[at] >= g.offset[1] && mb->input_nodes[at] < g.offset[2]);
            }
            seen_pos += P;
            uint64_t h = fnv(1469598103934665603ULL, mb->items, (size_t)P * 8);
            h = fnv(h, mb->input_nodes, (size_t)mb->num_seeds * 8);
            h = fnv(h, mb->item_local, (size_t)(2 * P + H + 5) * 4);
            h = fnv(h, mb->listed_off, (size_t)P * 8);
            for (int t = 0; t < T; t++) h = fnv(h, mb->typed->nodes[t], (size_t)mb->typed->num_nodes[t][2] * 8);
            ASSERT(n < 64);
            got[n++] = h;
            loader_release(&l, mb);
        }
        ASSERT_EQ(seen_pos, num_pos);
        if (w == 0) {
            memcpy(ref, got, sizeof ref);
            nref = n;
        }
        ASSERT_EQ(n, nref);
        ASSERT(memcmp(got, ref, (size_t)n * sizeof got[0]) == 0);
        loader_free(&l);
    }
    /* errors name the field and row */
    cfg.num_workers = 0;
    loader l;
    labels[4] = 2;
    ASSERT_EQ(loader_init(&l, NULL, seeds, labels, M, &cfg, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "labels: row 4: value 2");
    for (int e = 0; e < K; e++) csc_free(&csc[e]);
}

int main(void) {
    RUN(typed_labelled_pairs);
    return test_summary();
}
