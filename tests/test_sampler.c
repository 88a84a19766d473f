/* test_sampler.c — neighbour sampler and item sampler: correctness, uniformity, determinism. */
#include "sample/item_sampler.h"
#include "sample/sampler.h"
#include "test.h"
#include "test_graph_util.h"

typedef struct fixture {
    int32_t *src, *dst;
    int64_t n, e;
    csc_graph g;
} fixture;

static void fixture_make(fixture *f, int64_t n, int avg, int64_t hub, uint64_t seed) {
    f->n = n;
    f->e = test_random_graph(n, avg, hub, seed, &f->src, &f->dst);
    ds_edges ed = test_edges(f->src, f->dst, f->e);
    cgnn_err err;
    CGNN_CHECK(csc_build(&f->g, n, &ed, 2, &err) == 0);
}

static void fixture_free(fixture *f) {
    csc_free(&f->g);
    free(f->src);
    free(f->dst);
}

static sampler_config make_cfg(int L, const int64_t *fanouts, int replace) {
    sampler_config c;
    memset(&c, 0, sizeof c);
    c.num_layers = L;
    for (int i = 0; i < L; i++) c.fanouts[i] = fanouts[i];
    c.replace = replace;
    return c;
}

/* Checks every structural property of a sampled batch; returns 0 if all hold. */
static int check_batch(const csc_graph *g, const sampler_config *cfg, const minibatch *mb,
                       const int64_t *seeds, int64_t n) {
    const int L = cfg->num_layers;
    /* seeds first and item_local consistent */
    for (int64_t i = 0; i < n; i++) {
        if (mb->item_local[i] < 0 || mb->item_local[i] >= mb->num_seeds) return 1;
        if (mb->input_nodes[mb->item_local[i]] != seeds[i]) return 2;
    }
    if (mb->blocks[L - 1].num_dst != mb->num_seeds) return 3;
    if (mb->blocks[0].num_src != mb->num_input_nodes) return 4;
    for (int l = 0; l + 1 < L; l++)
        if (mb->blocks[l].num_dst != mb->blocks[l + 1].num_src) return 5;
    /* input nodes unique */
    uint8_t *seen = calloc((size_t)g->num_nodes, 1);
    for (int64_t i = 0; i < mb->num_input_nodes; i++) {
        if (seen[mb->input_nodes[i]]) { free(seen); return 6; }
        seen[mb->input_nodes[i]] = 1;
    }
    free(seen);
    int64_t total = 0;
    for (int h = 0; h < L; h++) {
        const sampler_block *b = &mb->blocks[L - 1 - h];
        const int64_t f = cfg->fanouts[h];
        if (b->indptr[0] != 0 || b->indptr[b->num_dst] != b->num_edges) return 7;
        for (int64_t i = 0; i < b->num_dst; i++) {
            int64_t v = mb->input_nodes[i], deg = csc_degree(g, v);
            int64_t cnt = b->indptr[i + 1] - b->indptr[i];
            int64_t want = (f < 0) ? deg : cfg->replace ? (deg > 0 ? f : 0) : (deg < f ? deg : f);
            if (cnt != want) return 8; /* fanout respected (and -1 = all) */
            for (int64_t k = b->indptr[i]; k < b->indptr[i + 1]; k++) {
                int32_t s = b->indices[k];
                if (s < 0 || s >= b->num_src) return 9;
                if (!test_has_edge(g, mb->input_nodes[s], v)) return 10; /* real in-edge */
                if (!cfg->replace)
                    for (int64_t k2 = b->indptr[i]; k2 < k; k2++)
                        if (b->indices[k2] == s) return 11; /* no duplicates (simple graph) */
            }
        }
        total += b->num_edges;
    }
    if (total != mb->num_sampled_edges) return 12;
    return 0;
}

static int same_batch(const minibatch *a, const minibatch *b) {
    if (a->num_input_nodes != b->num_input_nodes || a->num_seeds != b->num_seeds) return 0;
    if (memcmp(a->input_nodes, b->input_nodes, (size_t)a->num_input_nodes * 8) != 0) return 0;
    if (memcmp(a->item_local, b->item_local, (size_t)a->num_items * 4) != 0) return 0;
    for (int l = 0; l < a->num_layers; l++) {
        const sampler_block *x = &a->blocks[l], *y = &b->blocks[l];
        if (x->num_dst != y->num_dst || x->num_src != y->num_src || x->num_edges != y->num_edges) return 0;
        if (memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * 8) != 0) return 0;
        if (memcmp(x->indices, y->indices, (size_t)x->num_edges * 4) != 0) return 0;
    }
    return 1;
}

static void run_config(fixture *f, const int64_t *fanouts, int L, int replace, int *failed) {
    sampler_config cfg = make_cfg(L, fanouts, replace);
    minibatch_capacity cap;
    sampler_capacity(&f->g, &cfg, 64, 0, &cap);
    minibatch mb, mb_ref;
    neighbor_sampler s;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(&mb, &cap, &err) == 0 && minibatch_alloc(&mb_ref, &cap, &err) == 0);
    CGNN_CHECK(sampler_init(&s, &f->g, &cfg, &cap, &err) == 0);
    int64_t seeds[64];
    rng r;
    rng_init(&r, 99);
    for (int trial = 0; trial < 6 && !*failed; trial++) {
        int64_t n = 1 + (int64_t)rng_below(&r, 64);
        for (int64_t i = 0; i < n; i++) seeds[i] = (int64_t)rng_below(&r, (uint64_t)f->n);
        if (trial == 0) seeds[n - 1] = 0; /* node 0 is a hub (see test_random_graph) */
        if (trial == 1 && n > 2) seeds[1] = seeds[0]; /* a duplicated seed */
        uint64_t key = rng_key(5, (uint64_t)trial);
        ASSERT_EQ(sampler_sample(&s, &mb, seeds, n, key, NULL), 0);
        int rc = check_batch(&f->g, &cfg, &mb, seeds, n);
        if (rc) {
            fprintf(stderr, "check_batch failed with code %d (L=%d replace=%d trial=%d)\n", rc, L, replace, trial);
            *failed = 1;
        }
        sampler_sample_ref(&f->g, &cfg, &mb_ref, seeds, n, key);
        if (!same_batch(&mb, &mb_ref)) {
            fprintf(stderr, "fast sampler != reference (L=%d replace=%d trial=%d)\n", L, replace, trial);
            *failed = 1;
        }
        /* same key, same batch (the hash table was cleared properly) */
        ASSERT_EQ(sampler_sample(&s, &mb_ref, seeds, n, key, NULL), 0);
        if (!same_batch(&mb, &mb_ref)) {
            fprintf(stderr, "resampling with the same key differs\n");
            *failed = 1;
        }
    }
    sampler_free(&s);
    minibatch_free(&mb);
    minibatch_free(&mb_ref);
}

TEST(sampled_blocks_are_valid_and_match_reference) {
    fixture f;
    fixture_make(&f, 3000, 6, 300, 3);
    int failed = 0;
    int64_t a[] = {5, 3}, b[] = {15, 10, 5}, c[] = {-1, 2}, d[] = {100, 4}, e[] = {1};
    run_config(&f, a, 2, 0, &failed);
    run_config(&f, b, 3, 0, &failed);
    run_config(&f, c, 2, 0, &failed);
    run_config(&f, d, 2, 0, &failed); /* fanout 100 > Floyd limit: partial Fisher-Yates on hubs */
    run_config(&f, e, 1, 0, &failed);
    run_config(&f, a, 2, 1, &failed);
    run_config(&f, d, 2, 1, &failed);
    fixture_free(&f);
    ASSERT(!failed);
}

/* exclude_seed_edges: the pairs' edges never appear (either direction), the other edges are
 * kept exactly as drawn, and the fast sampler equals the reference. */
TEST(excluded_seed_edges_never_sampled) {
    fixture f;
    fixture_make(&f, 2000, 8, 200, 11);
    int64_t fan[] = {-1, 5};
    sampler_config cfg = make_cfg(2, fan, 0);
    minibatch_capacity cap;
    sampler_capacity(&f.g, &cfg, 64, 0, &cap);
    minibatch mb, mb_ref, mb_plain;
    neighbor_sampler s;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(&mb, &cap, &err) == 0 && minibatch_alloc(&mb_ref, &cap, &err) == 0);
    CGNN_CHECK(minibatch_alloc(&mb_plain, &cap, &err) == 0);
    CGNN_CHECK(sampler_init(&s, &f.g, &cfg, &cap, &err) == 0);
    /* 16 pairs that are real edges (src -> dst), seeds = [anchors | positives] */
    int64_t pairs[32], seeds[32];
    for (int k = 0; k < 16; k++) {
        int64_t e = (k * 7919) % f.e;
        pairs[2 * k] = f.src[e];
        pairs[2 * k + 1] = f.dst[e];
        seeds[k] = f.src[e];
        seeds[16 + k] = f.dst[e];
    }
    const uint64_t key = 77;
    sampler_exclude_edges(&s, pairs, 16);
    ASSERT_EQ(sampler_sample(&s, &mb, seeds, 32, key, NULL), 0);
    sampler_sample_ref_excluding(&f.g, &cfg, &mb_ref, seeds, 32, key, pairs, 16);
    ASSERT(same_batch(&mb, &mb_ref));
    int64_t excluded_hits = 0, kept = 0, plain_edges = 0;
    for (int l = 0; l < 2; l++) {
        const sampler_block *b = &mb.blocks[l];
        for (int64_t i = 0; i < b->num_dst; i++)
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                int64_t u = mb.input_nodes[b->indices[e]], v = mb.input_nodes[i];
                for (int k = 0; k < 16; k++)
                    if ((pairs[2 * k] == u && pairs[2 * k + 1] == v) || (pairs[2 * k] == v && pairs[2 * k + 1] == u))
                        excluded_hits++;
                kept++;
            }
    }
    ASSERT_EQ(excluded_hits, 0);
    /* the exclusion lasts one call: sampling again without it brings the edges back */
    ASSERT_EQ(sampler_sample(&s, &mb_plain, seeds, 32, key, NULL), 0);
    for (int l = 0; l < 2; l++) plain_edges += mb_plain.blocks[l].num_edges;
    /* hop 0 takes all in-neighbours: each pair's edge is there without the exclusion */
    ASSERT(plain_edges >= kept + 16);
    sampler_free(&s);
    minibatch_free(&mb);
    minibatch_free(&mb_ref);
    minibatch_free(&mb_plain);
    fixture_free(&f);
}

TEST(fanout_minus_one_returns_all_neighbours) {
    fixture f;
    fixture_make(&f, 500, 5, 60, 8);
    int64_t fo[] = {-1};
    sampler_config cfg = make_cfg(1, fo, 0);
    minibatch_capacity cap;
    sampler_capacity(&f.g, &cfg, 500, 0, &cap);
    minibatch mb;
    neighbor_sampler s;
    cgnn_err err;
    ASSERT_EQ(minibatch_alloc(&mb, &cap, &err), 0);
    ASSERT_EQ(sampler_init(&s, &f.g, &cfg, &cap, &err), 0);
    int64_t seeds[500];
    for (int i = 0; i < 500; i++) seeds[i] = i;
    ASSERT_EQ(sampler_sample(&s, &mb, seeds, 500, 1, NULL), 0);
    ASSERT_EQ(mb.blocks[0].num_edges, f.e); /* every edge of the graph, once */
    for (int64_t v = 0; v < 500; v++) {
        const sampler_block *b = &mb.blocks[0];
        ASSERT_EQ(b->indptr[v + 1] - b->indptr[v], csc_degree(&f.g, v));
        for (int64_t k = b->indptr[v], j = f.g.indptr[v]; k < b->indptr[v + 1]; k++, j++)
            ASSERT_EQ(mb.input_nodes[b->indices[k]], csc_index(&f.g, j));
    }
    sampler_free(&s);
    minibatch_free(&mb);
    fixture_free(&f);
}

/* One node with `deg` in-neighbours; sample `fanout` of them `trials` times with fresh keys;
 * returns the chi-square statistic of the selection counts against uniform. */
static double chi_square(int64_t deg, int64_t fanout, int replace, int trials) {
    int32_t *src = malloc((size_t)deg * 4), *dst = malloc((size_t)deg * 4);
    for (int64_t i = 0; i < deg; i++) {
        src[i] = (int32_t)(i + 1);
        dst[i] = 0;
    }
    ds_edges ed = test_edges(src, dst, deg);
    csc_graph g;
    cgnn_err err;
    CGNN_CHECK(csc_build(&g, deg + 1, &ed, 1, &err) == 0);
    int64_t fo[] = {fanout};
    sampler_config cfg = make_cfg(1, fo, replace);
    minibatch_capacity cap;
    sampler_capacity(&g, &cfg, 1, 0, &cap);
    minibatch mb;
    neighbor_sampler s;
    CGNN_CHECK(minibatch_alloc(&mb, &cap, &err) == 0 && sampler_init(&s, &g, &cfg, &cap, &err) == 0);
    int64_t *count = calloc((size_t)deg + 1, sizeof(int64_t));
    int64_t seed = 0;
    for (int t = 0; t < trials; t++) {
        CGNN_CHECK(sampler_sample(&s, &mb, &seed, 1, rng_key(777, (uint64_t)t), NULL) == 0);
        for (int64_t k = 0; k < mb.blocks[0].num_edges; k++) count[mb.input_nodes[mb.blocks[0].indices[k]]]++;
    }
    double expect = (double)trials * (double)fanout / (double)deg, chi = 0;
    for (int64_t u = 1; u <= deg; u++) chi += ((double)count[u] - expect) * ((double)count[u] - expect) / expect;
    /* without replacement the counts have variance expect*(1-f/d): rescale to a chi-square */
    if (!replace) chi /= (1.0 - (double)fanout / (double)deg);
    free(count);
    sampler_free(&s);
    minibatch_free(&mb);
    csc_free(&g);
    free(src);
    free(dst);
    return chi;
}

TEST(uniformity_chi_square) {
    /* critical values at p = 0.001: 19 dof -> 43.82, 199 dof -> 267.5 */
    double c1 = chi_square(20, 5, 0, 20000);
    double c2 = chi_square(20, 5, 1, 20000);
    double c3 = chi_square(200, 100, 0, 4000); /* Fisher-Yates path */
    double c4 = chi_square(200, 7, 0, 20000);  /* Floyd path */
    fprintf(stderr, "chi-square: %.1f %.1f %.1f %.1f\n", c1, c2, c3, c4);
    ASSERT(c1 < 43.82);
    ASSERT(c2 < 43.82);
    ASSERT(c3 < 267.5);
    ASSERT(c4 < 267.5);
    /* and the test can fail: a biased sampler (always the first 5) would be far above */
    ASSERT(c1 > 0.0);
}

TEST(item_sampler_shuffle_and_batches) {
    item_sampler s;
    item_sampler_init(&s, 1000, 64, 1, 0, 42, 0, 1, 0);
    item_sampler_set_epoch(&s, 0);
    ASSERT_EQ(s.num_batches, 16);
    uint8_t seen[1000] = {0};
    int64_t total = 0;
    for (int64_t b = 0; b < s.num_batches; b++) {
        const int64_t *it;
        int64_t n = item_sampler_batch(&s, b, &it);
        ASSERT_EQ(n, b < 15 ? 64 : 1000 - 15 * 64);
        for (int64_t i = 0; i < n; i++) {
            ASSERT(it[i] >= 0 && it[i] < 1000 && !seen[it[i]]);
            seen[it[i]] = 1;
        }
        total += n;
    }
    ASSERT_EQ(total, 1000);
    int64_t first0[64];
    memcpy(first0, s.perm, sizeof first0);
    item_sampler_set_epoch(&s, 1);
    ASSERT(memcmp(first0, s.perm, sizeof first0) != 0); /* a new order each epoch */
    item_sampler_set_epoch(&s, 0);
    ASSERT(memcmp(first0, s.perm, sizeof first0) == 0); /* and the same order for the same epoch */
    item_sampler_free(&s);
    item_sampler_init(&s, 1000, 64, 0, 1, 42, 0, 1, 0);
    item_sampler_set_epoch(&s, 3);
    ASSERT_EQ(s.num_batches, 15); /* drop_last */
    ASSERT_EQ(s.perm[17], 17);    /* no shuffle */
    item_sampler_free(&s);
}

TEST(distributed_slices_partition_the_epoch) {
    /* DGL count_split: 35 items, batch 4, 3 ranks: 35 = 2 full batches each (24), then
     * full_extra = 11 / 4 = 2 extra batches to ranks 0 and 1, last 3 items to rank 2. */
    const int64_t total = 35, B = 4;
    const int W = 3;
    int64_t want_len[3] = {12, 12, 11};
    uint8_t seen[35] = {0};
    int64_t covered = 0;
    for (int r = 0; r < W; r++) {
        item_sampler s;
        item_sampler_init(&s, total, B, 1, 0, 9, r, W, 0);
        item_sampler_set_epoch(&s, 2);
        ASSERT_EQ(s.slice_len, want_len[r]);
        ASSERT_EQ(s.num_batches, 3);
        for (int64_t b = 0; b < s.num_batches; b++) {
            const int64_t *it;
            int64_t n = item_sampler_batch(&s, b, &it);
            for (int64_t i = 0; i < n; i++) {
                ASSERT(!seen[it[i]]);
                seen[it[i]] = 1;
                covered++;
            }
        }
        item_sampler_free(&s);
    }
    ASSERT_EQ(covered, total);
    /* uneven: 9 items, batch 2, 2 ranks: rank 0 gets 2+2+... : quotient 2 (8 items),
     * remainder 1 -> rank 0 gets the partial batch: 5 items / 3 batches vs 4 items / 2. */
    item_sampler a, b;
    item_sampler_init(&a, 9, 2, 1, 0, 1, 0, 2, 0);
    item_sampler_init(&b, 9, 2, 1, 0, 1, 1, 2, 0);
    item_sampler_set_epoch(&a, 0);
    item_sampler_set_epoch(&b, 0);
    ASSERT_EQ(a.num_batches, 3);
    ASSERT_EQ(b.num_batches, 2);
    item_sampler_free(&a);
    item_sampler_free(&b);
    item_sampler_init(&a, 9, 2, 1, 0, 1, 0, 2, 1); /* drop_uneven */
    item_sampler_set_epoch(&a, 0);
    ASSERT_EQ(a.num_batches, 2);
    item_sampler_free(&a);
}

TEST(transpose_lists_every_edge_once) {
    fixture f;
    fixture_make(&f, 1500, 5, 100, 17);
    int64_t fo[] = {6, 4};
    sampler_config cfg = make_cfg(2, fo, 0);
    minibatch_capacity cap;
    sampler_capacity(&f.g, &cfg, 50, 0, &cap);
    minibatch mb;
    neighbor_sampler s;
    cgnn_err err;
    ASSERT_EQ(minibatch_alloc(&mb, &cap, &err), 0);
    ASSERT_EQ(sampler_init(&s, &f.g, &cfg, &cap, &err), 0);
    int64_t seeds[50];
    for (int i = 0; i < 50; i++) seeds[i] = i * 29;
    ASSERT_EQ(sampler_sample(&s, &mb, seeds, 50, 3, NULL), 0);
    minibatch_build_transpose(&mb);
    for (int l = 0; l < 2; l++) {
        const sampler_block *b = &mb.blocks[l];
        ASSERT_EQ(b->t_indptr[0], 0);
        ASSERT_EQ(b->t_indptr[b->num_src], b->num_edges);
        uint8_t *hit = calloc((size_t)b->num_edges + 1, 1);
        for (int64_t j = 0; j < b->num_src; j++)
            for (int64_t p = b->t_indptr[j]; p < b->t_indptr[j + 1]; p++) {
                int32_t e = b->t_eid[p], i = b->t_indices[p];
                ASSERT(e >= 0 && e < b->num_edges && !hit[e]);
                hit[e] = 1;
                ASSERT_EQ(b->indices[e], j);                       /* edge e comes from j */
                ASSERT(e >= b->indptr[i] && e < b->indptr[i + 1]); /* and goes to i */
                if (p > b->t_indptr[j]) ASSERT(b->t_indices[p - 1] <= i);
            }
        free(hit);
    }
    sampler_free(&s);
    minibatch_free(&mb);
    fixture_free(&f);
}

int main(void) {
    RUN(transpose_lists_every_edge_once);
    RUN(sampled_blocks_are_valid_and_match_reference);
    RUN(fanout_minus_one_returns_all_neighbours);
    RUN(excluded_seed_edges_never_sampled);
    RUN(uniformity_chi_square);
    RUN(item_sampler_shuffle_and_batches);
    RUN(distributed_slices_partition_the_epoch);
    return test_summary();
}
