/* test_sampler_weighted.c — weighted neighbour sampling (sampler.h, "Weighted sampling";
 * sample_weights.h): the draws' distribution against exact probabilities (chi-square over many
 * keys: ordered pairs and subsets of successive weighted sampling without replacement, enumerated
 * exactly; categories with replacement), zero weights never drawn, fanout -1, the fast sampler
 * equal to the plain reference, the same batches with 0 and 2 loader threads, the weights
 * reordered into CSC order and bad weights refused naming the file and row; the uniform path's
 * bits unchanged (a digest taken before weighted sampling existed). */
#include <math.h>

#include "sample/loader.h"
#include "sample/sample_weights.h"
#include "sample/sampler.h"
#include "test.h"
#include "test_graph_util.h"

static sampler_config make_cfg(int L, const int64_t *fanouts, int replace, const float *w) {
    sampler_config c;
    memset(&c, 0, sizeof c);
    c.num_layers = L;
    for (int i = 0; i < L; i++) c.fanouts[i] = fanouts[i];
    c.replace = replace;
    c.weights = w;
    return c;
}

static int same_batch(const minibatch *a, const minibatch *b) {
    if (a->num_input_nodes != b->num_input_nodes || a->num_seeds != b->num_seeds) return 0;
    if (memcmp(a->input_nodes, b->input_nodes, (size_t)a->num_input_nodes * 8) != 0) return 0;
    for (int l = 0; l < a->num_layers; l++) {
        const sampler_block *x = &a->blocks[l], *y = &b->blocks[l];
        if (x->num_dst != y->num_dst || x->num_src != y->num_src || x->num_edges != y->num_edges) return 0;
        if (memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * 8) != 0) return 0;
        if (memcmp(x->indices, y->indices, (size_t)x->num_edges * 4) != 0) return 0;
    }
    return 1;
}

/* FNV-1a over a batch's ids and blocks */
static uint64_t batch_digest(const minibatch *mb, uint64_t h) {
#define MIX(p, n)                                                                                                      \
    for (size_t i_ = 0; i_ < (size_t)(n); i_++) h = (h ^ ((const unsigned char *)(p))[i_]) * 0x100000001b3ULL
    MIX(&mb->num_input_nodes, 8);
    MIX(mb->input_nodes, mb->num_input_nodes * 8);
    for (int l = 0; l < mb->num_layers; l++) {
        const sampler_block *b = &mb->blocks[l];
        MIX(b->indptr, (b->num_dst + 1) * 8);
        MIX(b->indices, b->num_edges * 4);
    }
#undef MIX
    return h;
}

/* The positive weight of some in-edge u -> v (the graph may hold parallel edges): 1 if any. */
static int positive_edge(const csc_graph *g, const float *w, int64_t u, int64_t v) {
    for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++)
        if (csc_index(g, j) == u && w[j] > 0) return 1;
    return 0;
}

/* Random weights in CSC order: about 30% zeros, every in-edge of each 10th node zero, the rest in (0, 4). */
static float *random_weights(const csc_graph *g, uint64_t seed) {
    float *w = malloc((size_t)(g->num_edges + 1) * sizeof(float));
    rng r;
    rng_init(&r, seed);
    for (int64_t v = 0; v < g->num_nodes; v++)
        for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++)
            w[j] = (v % 10 == 9 || rng_uniform(&r) < 0.3) ? 0.0f : (float)(4 * rng_uniform(&r) + 1e-3);
    return w;
}

/* Fast == reference, every pick a positive-weight in-edge, the counts the contract's. */
static void check_configs(const csc_graph *g, const float *w, const int64_t *fanouts, int L, int replace, int *failed) {
    sampler_config cfg = make_cfg(L, fanouts, replace, w);
    minibatch_capacity cap;
    sampler_capacity(g, &cfg, 64, 0, &cap);
    minibatch mb, mb_ref;
    neighbor_sampler s;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(&mb, &cap, &err) == 0 && minibatch_alloc(&mb_ref, &cap, &err) == 0);
    CGNN_CHECK(sampler_init(&s, g, &cfg, &cap, &err) == 0);
    int64_t seeds[64];
    rng r;
    rng_init(&r, 41);
    for (int trial = 0; trial < 6 && !*failed; trial++) {
        const int64_t n = 1 + (int64_t)rng_below(&r, 64);
        for (int64_t i = 0; i < n; i++) seeds[i] = (int64_t)rng_below(&r, (uint64_t)g->num_nodes);
        if (trial == 0) seeds[n - 1] = 0; /* a hub */
        const uint64_t key = rng_key(9, (uint64_t)trial);
        CGNN_CHECK(sampler_sample(&s, &mb, seeds, n, key, &err) == 0);
        sampler_sample_ref(g, &cfg, &mb_ref, seeds, n, key);
        if (!same_batch(&mb, &mb_ref)) {
            fprintf(stderr, "weighted: fast != reference (L=%d replace=%d trial=%d)\n", L, replace, trial);
            *failed = 1;
        }
        for (int h = 0; h < L && !*failed; h++) {
            const sampler_block *b = &mb.blocks[L - 1 - h];
            const int64_t f = fanouts[h];
            for (int64_t i = 0; i < b->num_dst; i++) {
                const int64_t v = mb.input_nodes[i];
                int64_t m = 0;
                for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) m += w[j] > 0;
                const int64_t want = replace && f > 0 ? (m > 0 ? f : 0) : (f < 0 || m < f ? m : f);
                if (b->indptr[i + 1] - b->indptr[i] != want) {
                    fprintf(stderr, "weighted: node %lld drew %lld, expected %lld (fanout %lld, %lld positive)\n",
                            (long long)v, (long long)(b->indptr[i + 1] - b->indptr[i]), (long long)want,
                            (long long)f, (long long)m);
                    *failed = 1;
                }
                for (int64_t k = b->indptr[i]; k < b->indptr[i + 1]; k++)
                    if (!positive_edge(g, w, mb.input_nodes[b->indices[k]], v)) {
                        fprintf(stderr, "weighted: a zero-weight or missing edge drawn\n");
                        *failed = 1;
                    }
            }
        }
    }
    sampler_free(&s);
    minibatch_free(&mb);
    minibatch_free(&mb_ref);
}

TEST(weighted_matches_reference_and_never_draws_zero) {
    int32_t *src, *dst;
    const int64_t n = 3000;
    int64_t e = test_random_graph(n, 6, 300, 3, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, n, &ed, 2, &err), 0);
    float *w = random_weights(&g, 5);
    int failed = 0;
    int64_t a[] = {5, 3}, b[] = {100, 4}, c[] = {-1, 2}, d[] = {1}, e2[] = {-1, 5};
    check_configs(&g, w, a, 2, 0, &failed);
    check_configs(&g, w, b, 2, 0, &failed); /* heap of 100 on the hub */
    check_configs(&g, w, c, 2, 0, &failed);
    check_configs(&g, w, d, 1, 0, &failed);
    check_configs(&g, w, a, 2, 1, &failed);
    check_configs(&g, w, b, 2, 1, &failed);
    check_configs(&g, w, e2, 2, 1, &failed); /* -1 with replacement: all positive-weight edges */
    ASSERT(!failed);
    free(w);
    csc_free(&g);
    free(src);
    free(dst);
}

/* ---- distributions on one node ------------------------------------------------------------ */

typedef struct star {
    int32_t src[16], dst[16];
    csc_graph g;
} star;

/* Node 0 with d in-edges from nodes 1..d (CSC position j = node j + 1). */
static void star_make(star *s, int64_t d) {
    for (int64_t i = 0; i < d; i++) s->src[i] = (int32_t)(i + 1), s->dst[i] = 0;
    ds_edges ed = test_edges(s->src, s->dst, d);
    cgnn_err err;
    CGNN_CHECK(csc_build(&s->g, d + 1, &ed, 1, &err) == 0);
}

/* Exact probabilities of successive weighted sampling without replacement of k of w[0..d):
 * ordered[seq] (NULL: not wanted) for every ordered k-sequence (index: base-d digits, first draw
 * most significant) and subset[mask]. Recursion over the draws. */
static void exact_successive(const float *w, int d, int k, int depth, double p, int64_t seq, unsigned mask,
                             double *ordered, double *subset) {
    if (depth == k) {
        if (ordered) ordered[seq] += p;
        subset[mask] += p;
        return;
    }
    double left = 0;
    for (int j = 0; j < d; j++)
        if (!(mask >> j & 1)) left += w[j];
    for (int j = 0; j < d; j++)
        if (!(mask >> j & 1) && w[j] > 0)
            exact_successive(w, d, k, depth + 1, p * w[j] / left, seq * d + j, mask | 1u << j, ordered, subset);
}

/* What sample_star saw: ordered sequences and subsets (without replacement), inclusions, draws. */
typedef struct draw_counts {
    double ordered[4096], subset[1 << 12], incl[16], draws[16];
} draw_counts;

/* Samples node 0 of s `trials` times (one key per trial) with weights w (NULL: uniform), fanout k. */
static void sample_star(star *s, const float *w, int d, int64_t k, int replace, int trials, draw_counts *c) {
    memset(c, 0, sizeof *c);
    int64_t fo[] = {k};
    sampler_config cfg = make_cfg(1, fo, replace, w);
    minibatch_capacity cap;
    sampler_capacity(&s->g, &cfg, 1, 0, &cap);
    minibatch mb;
    neighbor_sampler ns;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(&mb, &cap, &err) == 0 && sampler_init(&ns, &s->g, &cfg, &cap, &err) == 0);
    int64_t seed = 0;
    for (int t = 0; t < trials; t++) {
        CGNN_CHECK(sampler_sample(&ns, &mb, &seed, 1, rng_key(4242, (uint64_t)t), &err) == 0);
        int64_t seq = 0;
        unsigned mask = 0;
        for (int64_t q = 0; q < mb.blocks[0].num_edges; q++) {
            const int j = (int)mb.input_nodes[mb.blocks[0].indices[q]] - 1;
            seq = seq * d + j;
            mask |= 1u << j;
            c->draws[j]++;
        }
        if (!replace) {
            if (seq < 4096) c->ordered[seq]++;
            c->subset[mask]++;
            for (int j = 0; j < d; j++) c->incl[j] += mask >> j & 1;
        }
    }
    sampler_free(&ns);
    minibatch_free(&mb);
}

/* sum (obs - T p)^2 / (T p) over the cells with p > 0; *zero_hits: observations where p == 0 */
static double chi2(const double *obs, const double *p, int64_t cells, double T, double *zero_hits) {
    double x = 0;
    *zero_hits = 0;
    for (int64_t i = 0; i < cells; i++) {
        if (p[i] > 0) x += (obs[i] - T * p[i]) * (obs[i] - T * p[i]) / (T * p[i]);
        else *zero_hits += obs[i];
    }
    return x;
}

static double ordered_p[4096], subset_p[1 << 12];
static draw_counts counts, counts_u;

TEST(weighted_without_replacement_chi_square) {
    /* 6 in-edges, one of weight 0: the 5 positive ones drawn in successive weighted order.
     * Critical values at p = 0.001: 9 dof 27.88, 19 dof 43.82, 59 dof 98.32, 69 dof 111.1. */
    static const float w[6] = {1, 2, 0, 3, 0.5f, 6};
    const int d = 6, T = 20000;
    star s;
    star_make(&s, d);
    double zero;
    /* k = 2: ordered pairs (20 cells) */
    memset(ordered_p, 0, sizeof ordered_p), memset(subset_p, 0, sizeof subset_p);
    exact_successive(w, d, 2, 0, 1.0, 0, 0, ordered_p, subset_p);
    sample_star(&s, w, d, 2, 0, T, &counts);
    const double x_pairs = chi2(counts.ordered, ordered_p, d * d, T, &zero);
    ASSERT_EQ(zero, 0);
    ASSERT_EQ(counts.incl[2], 0); /* weight 0: never */
    /* inclusion frequencies against the exact inclusion probabilities (printed: the counts are
     * dependent, so the asserted statistics are those of the ordered draws and the subsets) */
    double x_incl = 0;
    for (int j = 0; j < d; j++) {
        double pj = 0;
        for (unsigned m = 0; m < 64; m++)
            if (m >> j & 1) pj += subset_p[m];
        if (pj > 0) x_incl += (counts.incl[j] - T * pj) * (counts.incl[j] - T * pj) / (T * pj);
    }
    /* the test can fail: uniform draws of the same node are far from these probabilities */
    sample_star(&s, NULL, d, 2, 0, T, &counts_u);
    const double x_uniform = chi2(counts_u.ordered, ordered_p, d * d, T, &zero);
    ASSERT(zero > 0);
    /* k = 3: subsets (10 cells) and ordered triples (60 cells) */
    memset(ordered_p, 0, sizeof ordered_p), memset(subset_p, 0, sizeof subset_p);
    exact_successive(w, d, 3, 0, 1.0, 0, 0, ordered_p, subset_p);
    sample_star(&s, w, d, 3, 0, T, &counts);
    const double x_sub3 = chi2(counts.subset, subset_p, 64, T, &zero);
    ASSERT_EQ(zero, 0);
    const double x_ord3 = chi2(counts.ordered, ordered_p, d * d * d, T, &zero);
    ASSERT_EQ(zero, 0);
    csc_free(&s.g);
    /* 10 in-edges, k = 4 of the 8 positive: subsets (70 cells) */
    static const float w10[10] = {0.2f, 1, 1, 5, 0, 2.5f, 0.7f, 3, 0, 1.5f};
    star_make(&s, 10);
    memset(subset_p, 0, sizeof subset_p);
    exact_successive(w10, 10, 4, 0, 1.0, 0, 0, NULL, subset_p);
    sample_star(&s, w10, 10, 4, 0, T, &counts);
    const double x_sub4 = chi2(counts.subset, subset_p, 1 << 10, T, &zero);
    ASSERT_EQ(zero, 0);
    csc_free(&s.g);
    fprintf(stderr,
            "weighted without replacement, chi-square over %d keys: ordered pairs %.1f (19 dof), ordered triples "
            "%.1f (59 dof), 3-subsets %.1f (9 dof), 4-subsets of 10 %.1f (69 dof); inclusion frequencies %.1f; "
            "uniform draws against the weighted pairs %.0f\n",
            T, x_pairs, x_ord3, x_sub3, x_sub4, x_incl, x_uniform);
    ASSERT(x_pairs < 43.82);
    ASSERT(x_ord3 < 98.32);
    ASSERT(x_sub3 < 27.88);
    ASSERT(x_sub4 < 111.1);
    ASSERT(x_uniform > 1000);
}

TEST(weighted_with_replacement_chi_square) {
    /* categories: 5 positive weights of 7 (4 dof: 18.47 at p = 0.001); 3 draws per key */
    static const float w[7] = {0, 1, 2, 0, 3, 0.5f, 6};
    const int d = 7, T = 20000, k = 3;
    star s;
    star_make(&s, d);
    sample_star(&s, w, d, k, 1, T, &counts);
    double p[7], zero, total = 0;
    for (int j = 0; j < d; j++) total += w[j];
    for (int j = 0; j < d; j++) p[j] = w[j] / total;
    const double x = chi2(counts.draws, p, d, (double)T * k, &zero);
    ASSERT_EQ(zero, 0);
    sample_star(&s, NULL, d, k, 1, T, &counts_u);
    const double x_uniform = chi2(counts_u.draws, p, d, (double)T * k, &zero);
    ASSERT(zero > 0);
    /* all weights 0: nothing drawn, with or without replacement */
    static const float none[7] = {0};
    sample_star(&s, none, d, k, 1, 10, &counts_u);
    for (int j = 0; j < d; j++) ASSERT_EQ(counts_u.draws[j], 0);
    sample_star(&s, none, d, k, 0, 10, &counts_u);
    for (int j = 0; j < d; j++) ASSERT_EQ(counts_u.draws[j], 0);
    csc_free(&s.g);
    fprintf(stderr, "weighted with replacement, chi-square over %d draws: %.1f (4 dof); uniform draws %.0f\n", T * k,
            x, x_uniform);
    ASSERT(x < 18.47);
    ASSERT(x_uniform > 1000);
}

/* One epoch's digest of a loader over g (weights w), with `workers` sampler threads. */
static uint64_t loader_digest(const csc_graph *g, const float *w, int replace, int workers, int64_t *batches) {
    int64_t *seeds = malloc(600 * sizeof(int64_t));
    for (int i = 0; i < 600; i++) seeds[i] = (i * 37) % g->num_nodes;
    loader_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.sampler = make_cfg(2, (const int64_t[]){10, 5}, replace, w);
    cfg.batch_size = 64;
    cfg.shuffle = 1;
    cfg.seed = 7;
    cfg.world_size = 1;
    cfg.num_workers = workers;
    loader l;
    cgnn_err err;
    CGNN_CHECK(loader_init(&l, g, seeds, NULL, 600, &cfg, &err) == 0);
    loader_start_epoch(&l, 1, 0);
    uint64_t h = 0xcbf29ce484222325ULL;
    minibatch *mb;
    *batches = 0;
    while ((mb = loader_next(&l)) != NULL) {
        h = batch_digest(mb, h);
        ++*batches;
        loader_release(&l, mb);
    }
    loader_free(&l);
    free(seeds);
    return h;
}

TEST(weighted_same_batches_with_0_and_2_workers) {
    int32_t *src, *dst;
    const int64_t n = 4000;
    int64_t e = test_random_graph(n, 6, 200, 21, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, n, &ed, 2, &err), 0);
    float *w = random_weights(&g, 8);
    for (int replace = 0; replace < 2; replace++) {
        int64_t b0, b2, bu;
        const uint64_t h0 = loader_digest(&g, w, replace, 0, &b0), h2 = loader_digest(&g, w, replace, 2, &b2);
        ASSERT_EQ(b0, 10);
        ASSERT_EQ(b2, b0);
        ASSERT(h0 == h2);
        ASSERT(loader_digest(&g, NULL, replace, 2, &bu) != h0); /* the weights change the draws */
    }
    free(w);
    csc_free(&g);
    free(src);
    free(dst);
}

/* Uniform sampling's bits are those of the sampler before weighted sampling existed: the digest
 * below was taken from commit a036feb's sampler (this function and batch_digest compiled against
 * that tree). */
#define UNIFORM_DIGEST 0x192d2aaa533a4b14ULL
static uint64_t uniform_digest(void) {
    int32_t *src, *dst;
    const int64_t n = 3000;
    int64_t e = test_random_graph(n, 6, 300, 3, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph g;
    cgnn_err err;
    CGNN_CHECK(csc_build(&g, n, &ed, 2, &err) == 0);
    static const int64_t fans[4][2] = {{5, 3}, {100, 4}, {-1, 2}, {10, 10}};
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int c = 0; c < 8; c++) {
        sampler_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.num_layers = 2;
        cfg.fanouts[0] = fans[c % 4][0], cfg.fanouts[1] = fans[c % 4][1];
        cfg.replace = c >= 4;
        minibatch_capacity cap;
        sampler_capacity(&g, &cfg, 64, 0, &cap);
        minibatch mb;
        neighbor_sampler s;
        CGNN_CHECK(minibatch_alloc(&mb, &cap, &err) == 0 && sampler_init(&s, &g, &cfg, &cap, &err) == 0);
        int64_t seeds[64];
        for (int i = 0; i < 64; i++) seeds[i] = (i * 131 + c) % n;
        seeds[0] = 0; /* a hub */
        for (int t = 0; t < 4; t++) {
            CGNN_CHECK(sampler_sample(&s, &mb, seeds, 64, rng_key(11, (uint64_t)(c * 4 + t)), &err) == 0);
            h = batch_digest(&mb, h);
        }
        sampler_free(&s);
        minibatch_free(&mb);
    }
    csc_free(&g);
    free(src);
    free(dst);
    return h;
}

TEST(uniform_bits_unchanged) {
    const uint64_t h = uniform_digest();
    fprintf(stderr, "uniform digest %016llx\n", (unsigned long long)h);
    ASSERT(h == UNIFORM_DIGEST);
}

/* sample_weights_to_csc: edge e's weight lands at its CSC position (stable by dst); bad values
 * name the file and row. */
TEST(weights_reordered_into_csc_order_and_checked) {
    /* edges (src -> dst) in list order; node 1's in-edges: rows 0, 2, 4; node 0's: rows 1, 3 */
    int32_t src[5] = {2, 3, 0, 1, 3}, dst[5] = {1, 0, 1, 0, 1};
    ds_edges ed = test_edges(src, dst, 5);
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, 4, &ed, 1, &err), 0);
    const float w[5] = {10, 11, 12, 13, 14};
    float out[5];
    ASSERT_EQ(sample_weights_to_csc(&g, w, NPY_DTYPE_FLOAT32, dst, NPY_DTYPE_INT32, 5, "w.npy", out, &err), 0);
    for (int v = 0, k = 0; v < 4; v++)
        for (int64_t j = g.indptr[v]; j < g.indptr[v + 1]; j++, k++) {
            /* the CSC's j-th source is the edge whose weight sits there */
            int row = -1;
            for (int e = 0, seen = 0; e < 5; e++)
                if (dst[e] == v && seen++ == j - g.indptr[v]) row = e;
            ASSERT(row >= 0);
            ASSERT_EQ(csc_index(&g, j), src[row]);
            ASSERT(out[j] == w[row]);
        }
    const uint8_t mask[5] = {1, 0, 1, 1, 0};
    ASSERT_EQ(sample_weights_to_csc(&g, mask, NPY_DTYPE_UINT8, dst, NPY_DTYPE_INT32, 5, "m.npy", out, &err), 0);
    const double neg[5] = {1, 2, 3, -0.5, 4};
    ASSERT_EQ(sample_weights_to_csc(&g, neg, NPY_DTYPE_FLOAT64, dst, NPY_DTYPE_INT32, 5, "neg.npy", out, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "neg.npy: row 3: sampling weight -0.5 is negative");
    const double tiny[5] = {1, 1e-300, 3, 1, 4};
    ASSERT_EQ(sample_weights_to_csc(&g, tiny, NPY_DTYPE_FLOAT64, dst, NPY_DTYPE_INT32, 5, "t.npy", out, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "t.npy: row 1");
    const float nan_w[5] = {1, 2, 3, 4, NAN};
    ASSERT_EQ(sample_weights_to_csc(&g, nan_w, NPY_DTYPE_FLOAT32, dst, NPY_DTYPE_INT32, 5, "n.npy", out, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "n.npy: row 4: sampling weight nan is NaN");
    const int64_t ints[5] = {1, 2, -3, 4, 5};
    ASSERT_EQ(sample_weights_to_csc(&g, ints, NPY_DTYPE_INT64, dst, NPY_DTYPE_INT32, 5, "i.npy", out, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "i.npy: row 2");
    ASSERT_EQ(sample_weights_to_csc(&g, w, NPY_DTYPE_FLOAT32, dst, NPY_DTYPE_INT32, 4, "short.npy", out, &err), -1);
    csc_free(&g);
}

int main(void) {
    RUN(weighted_matches_reference_and_never_draws_zero);
    RUN(weighted_without_replacement_chi_square);
    RUN(weighted_with_replacement_chi_square);
    RUN(weighted_same_batches_with_0_and_2_workers);
    RUN(uniform_bits_unchanged);
    RUN(weights_reordered_into_csc_order_and_checked);
    return test_summary();
}
