/* test_typed_sampler.c — the typed (heterogeneous) sampler against its plain reference, and its
 * invariants: block shapes chain per type, every sampled edge exists through its edge type, no
 * neighbour twice without replacement, fanout 0 samples nothing, draws keyed per node. */
#include <stdlib.h>
#include <string.h>

#include "graph/typed_graph.h"
#include "sample/typed_sampler.h"
#include "test.h"
#include "util/rng.h"

enum { T = 3, K = 5 };
static const int64_t NUM[T] = {300, 500, 40};
/* (src, dst): a->b, b->a, b->b, c->b, a->c (type 2 is small: hubs of degree > 64) */
static const int ESRC[K] = {0, 1, 1, 2, 0}, EDST[K] = {1, 0, 1, 1, 2};
static const int64_t AVG[K] = {6, 8, 5, 3, 90};

typedef struct fixture {
    csc_graph csc[K];
    int32_t *src[K], *dst[K];
    typed_graph g;
} fixture;

static void fixture_build(fixture *f) {
    memset(f, 0, sizeof *f);
    rng r;
    rng_init(&r, 77);
    const csc_graph *views[K];
    for (int e = 0; e < K; e++) {
        const int64_t ns = NUM[ESRC[e]], nd = NUM[EDST[e]];
        int64_t cap = nd * AVG[e] * 2 + 1, m = 0;
        f->src[e] = malloc((size_t)cap * sizeof(int32_t));
        f->dst[e] = malloc((size_t)cap * sizeof(int32_t));
        for (int64_t v = 0; v < nd; v++) {
            int64_t deg = (int64_t)rng_below(&r, (uint64_t)(2 * AVG[e] + 1));
            if (deg > ns) deg = ns;
            for (int64_t k = 0; k < deg; k++) { /* distinct sources: a random window */
                f->src[e][m] = (int32_t)((v * 7 + k) % ns);
                f->dst[e][m++] = (int32_t)v;
            }
        }
        ds_edges ed = {NPY_DTYPE_INT32, m, f->src[e], f->dst[e]};
        cgnn_err err = {0};
        CGNN_CHECK(csc_build_range(&f->csc[e], 0, nd, ns, &ed, 1, &err) == 0);
        views[e] = &f->csc[e];
    }
    typed_graph_init(&f->g, T, NUM, K, ESRC, EDST, views);
}

static void fixture_free(fixture *f) {
    for (int e = 0; e < K; e++) {
        csc_free(&f->csc[e]);
        free(f->src[e]);
        free(f->dst[e]);
    }
}

static int has_edge(const csc_graph *c, int64_t u, int64_t v) {
    for (int64_t i = c->indptr[v]; i < c->indptr[v + 1]; i++)
        if (csc_index(c, i) == u) return 1;
    return 0;
}

static void make_batch(const typed_graph *g, const typed_sampler_config *cfg, int64_t max_items, minibatch *mb,
                       typed_sampler *s) {
    int64_t max_seeds[T];
    for (int t = 0; t < T; t++) max_seeds[t] = max_items;
    minibatch_typed_capacity tcap;
    typed_sampler_capacity(g, cfg, max_seeds, NULL, &tcap);
    minibatch_capacity cap = {.num_layers = cfg->num_layers, .max_items = max_items};
    cgnn_err err = {0};
    CGNN_CHECK(minibatch_alloc_typed(mb, &cap, &tcap, g->etype_src, g->etype_dst, &err) == 0);
    if (s) CGNN_CHECK(typed_sampler_init(s, g, cfg, &tcap, &err) == 0);
}

static int same_batch(const minibatch *a, const minibatch *b) {
    const minibatch_typed *x = a->typed, *y = b->typed;
    if (a->num_items != b->num_items || a->num_input_nodes != b->num_input_nodes ||
        a->num_sampled_edges != b->num_sampled_edges)
        return 0;
    for (int64_t i = 0; i < a->num_items; i++)
        if (a->item_local[i] != b->item_local[i]) return 0;
    for (int t = 0; t < x->num_node_types; t++) {
        for (int h = 0; h <= x->num_layers; h++)
            if (x->num_nodes[t][h] != y->num_nodes[t][h]) return 0;
        if (memcmp(x->nodes[t], y->nodes[t], (size_t)x->num_nodes[t][x->num_layers] * sizeof(int64_t))) return 0;
    }
    for (int i = 0; i < x->num_layers * x->num_edge_types; i++) {
        const sampler_block *p = &x->blocks[i], *q = &y->blocks[i];
        if (p->num_dst != q->num_dst || p->num_src != q->num_src || p->num_edges != q->num_edges) return 0;
        if (memcmp(p->indptr, q->indptr, (size_t)(p->num_dst + 1) * sizeof(int64_t))) return 0;
        if (memcmp(p->indices, q->indices, (size_t)p->num_edges * sizeof(int32_t))) return 0;
    }
    return 1;
}

/* seeds: n homogenised ids of type `type` (with a duplicate) */
static int64_t make_seeds(const typed_graph *g, int type, int64_t n, uint64_t seed, int64_t *out) {
    rng r;
    rng_init(&r, seed);
    for (int64_t i = 0; i < n; i++) out[i] = g->offset[type] + (int64_t)rng_below(&r, (uint64_t)g->num_nodes[type]);
    if (n > 2) out[n - 1] = out[0];
    return n;
}

static void config(typed_sampler_config *c, int L, int replace, int64_t base) {
    memset(c, 0, sizeof *c);
    c->num_layers = L;
    c->replace = replace;
    for (int h = 0; h < L; h++)
        for (int e = 0; e < K; e++) c->fanouts[h][e] = base + h + e;
    c->fanouts[0][3] = 0;  /* c->b not sampled in hop 0 */
    c->fanouts[1][1] = -1; /* all b->a in hop 1 */
    c->fanouts[0][4] = 70; /* a->c: Fisher-Yates (> FLOYD_MAX_K) */
}

TEST(matches_reference) {
    fixture f;
    fixture_build(&f);
    for (int replace = 0; replace <= 1; replace++)
        for (int L = 1; L <= 3; L++) {
            typed_sampler_config cfg;
            config(&cfg, L, replace, 3);
            minibatch a, b;
            typed_sampler s;
            make_batch(&f.g, &cfg, 64, &a, &s);
            make_batch(&f.g, &cfg, 64, &b, NULL);
            for (int type = 0; type < T; type++)
                for (uint64_t key = 1; key <= 3; key++) {
                    int64_t seeds[40];
                    int64_t n = make_seeds(&f.g, type, 40, key * 31 + (uint64_t)type, seeds);
                    typed_sampler_sample(&s, &a, seeds, n, key);
                    typed_sampler_sample_ref(&f.g, &cfg, &b, seeds, n, key);
                    ASSERT(same_batch(&a, &b));
                    ASSERT(a.num_sampled_edges > 0);
                }
            typed_sampler_free(&s);
            minibatch_free(&a);
            minibatch_free(&b);
        }
    fixture_free(&f);
}

/* Weighted sampling on some edge types (the others uniform): fast == reference, and a weighted
 * edge type never draws a zero-weight edge (the fixture's sources are distinct per node). */
TEST(weighted_matches_reference) {
    fixture f;
    fixture_build(&f);
    float *w[K] = {0};
    rng r;
    rng_init(&r, 5);
    for (int e = 0; e < K; e += 2) {
        w[e] = malloc((size_t)(f.csc[e].num_edges + 1) * sizeof(float));
        for (int64_t j = 0; j < f.csc[e].num_edges; j++)
            w[e][j] = rng_uniform(&r) < 0.3 ? 0.0f : (float)(rng_uniform(&r) * 3 + 0.01);
    }
    for (int replace = 0; replace <= 1; replace++) {
        typed_sampler_config cfg;
        config(&cfg, 2, replace, 3);
        for (int e = 0; e < K; e++) cfg.weights[e] = w[e];
        minibatch a, b;
        typed_sampler s;
        make_batch(&f.g, &cfg, 64, &a, &s);
        make_batch(&f.g, &cfg, 64, &b, NULL);
        for (int type = 0; type < T; type++)
            for (uint64_t key = 1; key <= 3; key++) {
                int64_t seeds[40];
                int64_t n = make_seeds(&f.g, type, 40, key * 17 + (uint64_t)type, seeds);
                typed_sampler_sample(&s, &a, seeds, n, key);
                typed_sampler_sample_ref(&f.g, &cfg, &b, seeds, n, key);
                ASSERT(same_batch(&a, &b));
                const minibatch_typed *ty = a.typed;
                for (int h = 0; h < 2; h++)
                    for (int e = 0; e < K; e += 2) {
                        const sampler_block *blk = &ty->blocks[(1 - h) * K + e];
                        const csc_graph *c = &f.csc[e];
                        for (int64_t i = 0; i < blk->num_dst; i++) {
                            const int64_t v = ty->nodes[EDST[e]][i];
                            for (int64_t q = blk->indptr[i]; q < blk->indptr[i + 1]; q++) {
                                const int64_t u = ty->nodes[ESRC[e]][blk->indices[q]];
                                int positive = 0;
                                for (int64_t j = c->indptr[v]; j < c->indptr[v + 1]; j++)
                                    positive |= csc_index(c, j) == u && w[e][j] > 0;
                                ASSERT(positive);
                            }
                        }
                    }
            }
        typed_sampler_free(&s);
        minibatch_free(&a);
        minibatch_free(&b);
    }
    for (int e = 0; e < K; e++) free(w[e]);
    fixture_free(&f);
}

TEST(invariants) {
    fixture f;
    fixture_build(&f);
    typed_sampler_config cfg;
    config(&cfg, 2, 0, 4);
    minibatch mb;
    typed_sampler s;
    make_batch(&f.g, &cfg, 64, &mb, &s);
    int64_t seeds[50];
    int64_t n = make_seeds(&f.g, 1, 50, 5, seeds);
    typed_sampler_sample(&s, &mb, seeds, n, 99);
    const minibatch_typed *ty = mb.typed;
    const int L = 2;
    /* seeds: all of type 1, item_local maps back to the seed ids */
    ASSERT_EQ(ty->num_nodes[0][0], 0);
    ASSERT_EQ(ty->num_nodes[2][0], 0);
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; i++) {
        int seen = 0;
        for (int64_t j = 0; j < i; j++) seen |= seeds[j] == seeds[i];
        distinct += !seen;
    }
    ASSERT_EQ(mb.num_seeds, distinct);
    ASSERT(distinct < n); /* make_seeds repeats its first seed */
    for (int64_t i = 0; i < n; i++) ASSERT_EQ(ty->nodes[1][mb.item_local[i]] + f.g.offset[1], seeds[i]);
    for (int l = 0; l < L; l++)
        for (int e = 0; e < K; e++) {
            const sampler_block *b = &ty->blocks[l * K + e];
            const int d = EDST[e], st = ESRC[e];
            ASSERT_EQ(b->num_dst, ty->num_nodes[d][L - 1 - l]);
            ASSERT_EQ(b->num_src, ty->num_nodes[st][L - l]);
            const int64_t f_h = cfg.fanouts[L - 1 - l][e];
            for (int64_t i = 0; i < b->num_dst; i++) {
                const int64_t v = ty->nodes[d][i], deg = csc_degree(&f.csc[e], v);
                const int64_t k = b->indptr[i + 1] - b->indptr[i];
                if (f_h == 0) ASSERT_EQ(k, 0);
                else if (f_h < 0 || deg <= f_h) ASSERT_EQ(k, deg);
                else ASSERT_EQ(k, f_h);
                for (int64_t j = b->indptr[i]; j < b->indptr[i + 1]; j++) {
                    ASSERT(b->indices[j] >= 0 && b->indices[j] < b->num_src);
                    const int64_t u = ty->nodes[st][b->indices[j]];
                    ASSERT(has_edge(&f.csc[e], u, v));
                    for (int64_t q = b->indptr[i]; q < j; q++) ASSERT_NE(b->indices[q], b->indices[j]);
                }
            }
        }
    /* keyed draws: a seed sampled alone gets the same hop-0 neighbours as inside the batch */
    minibatch one;
    make_batch(&f.g, &cfg, 64, &one, NULL);
    typed_sampler_sample(&s, &one, &seeds[3], 1, 99);
    for (int e = 0; e < K; e++) {
        if (EDST[e] != 1) continue;
        const sampler_block *p = &ty->blocks[(L - 1) * K + e], *q = &one.typed->blocks[(L - 1) * K + e];
        const int64_t li = mb.item_local[3];
        ASSERT_EQ(p->indptr[li + 1] - p->indptr[li], q->indptr[1] - q->indptr[0]);
        for (int64_t j = 0; j < q->indptr[1]; j++)
            ASSERT_EQ(ty->nodes[ESRC[e]][p->indices[p->indptr[li] + j]], one.typed->nodes[ESRC[e]][q->indices[j]]);
    }
    minibatch_free(&one);
    /* the transposes list every edge once */
    minibatch_build_transpose(&mb);
    for (int i = 0; i < L * K; i++) {
        const sampler_block *b = &ty->blocks[i];
        ASSERT_EQ(b->t_indptr[b->num_src], b->num_edges);
        for (int64_t j = 0; j < b->num_src; j++)
            for (int64_t p = b->t_indptr[j]; p < b->t_indptr[j + 1]; p++) ASSERT_EQ(b->indices[b->t_eid[p]], j);
    }
    typed_sampler_free(&s);
    minibatch_free(&mb);
    fixture_free(&f);
}

TEST(config_check) {
    fixture f;
    fixture_build(&f);
    typed_sampler_config cfg;
    config(&cfg, 2, 0, 4);
    cgnn_err err = {0};
    const char *names[K] = {"a:x:b", "b:y:a", "b:z:b", "c:w:b", "a:v:c"};
    ASSERT_EQ(typed_sampler_config_check(&f.g, &cfg, names, &err), 0);
    cfg.fanouts[1][2] = -2;
    ASSERT_EQ(typed_sampler_config_check(&f.g, &cfg, names, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "b:z:b");
    memset(cfg.fanouts[1], 0, sizeof cfg.fanouts[1]);
    ASSERT_EQ(typed_sampler_config_check(&f.g, &cfg, names, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "hop 1");
    fixture_free(&f);
}

/* exclude_seed_edges: pairs (a, b) that are edges of a->b; neither the edge nor its reverse
 * (b->a, same node pair) is ever sampled, and the fast sampler equals the reference. */
TEST(excluded_edges) {
    fixture f;
    fixture_build(&f);
    typed_sampler_config cfg;
    config(&cfg, 2, 0, 30); /* large fanouts: most edges are drawn, so exclusion matters */
    minibatch a, b;
    typed_sampler s;
    make_batch(&f.g, &cfg, 64, &a, &s);
    make_batch(&f.g, &cfg, 64, &b, NULL);
    int64_t pairs[2 * 10], seeds[20];
    for (int k = 0; k < 10; k++) { /* the first in-edge of b-node 3k+1 through a->b */
        const int64_t v = 3 * k + 1;
        ASSERT(csc_degree(&f.csc[0], v) > 0);
        pairs[2 * k] = f.g.offset[0] + csc_index(&f.csc[0], f.csc[0].indptr[v]);
        pairs[2 * k + 1] = f.g.offset[1] + v;
        seeds[k] = pairs[2 * k];
        seeds[10 + k] = pairs[2 * k + 1];
    }
    typed_sampler_exclude_edges(&s, pairs, 10);
    typed_sampler_sample(&s, &a, seeds, 20, 7);
    typed_sampler_sample_ref_excluding(&f.g, &cfg, &b, seeds, 20, 7, pairs, 10);
    ASSERT(same_batch(&a, &b));
    const minibatch_typed *ty = a.typed;
    int64_t seen_other = 0;
    for (int l = 0; l < 2; l++)
        for (int e = 0; e < K; e++) {
            const sampler_block *blk = &ty->blocks[l * K + e];
            for (int64_t i = 0; i < blk->num_dst; i++)
                for (int64_t j = blk->indptr[i]; j < blk->indptr[i + 1]; j++) {
                    const int64_t U = f.g.offset[ESRC[e]] + ty->nodes[ESRC[e]][blk->indices[j]];
                    const int64_t V = f.g.offset[EDST[e]] + ty->nodes[EDST[e]][i];
                    for (int k = 0; k < 10; k++)
                        ASSERT(!((U == pairs[2 * k] && V == pairs[2 * k + 1]) || (V == pairs[2 * k] && U == pairs[2 * k + 1])));
                    seen_other++;
                }
        }
    ASSERT(seen_other > 0);
    /* the exclusion lasts one call: the next batch samples those edges again */
    typed_sampler_sample(&s, &a, seeds, 20, 7);
    typed_sampler_sample_ref(&f.g, &cfg, &b, seeds, 20, 7);
    ASSERT(same_batch(&a, &b));
    typed_sampler_free(&s);
    minibatch_free(&a);
    minibatch_free(&b);
    fixture_free(&f);
}

int main(void) {
    RUN(matches_reference);
    RUN(weighted_matches_reference);
    RUN(invariants);
    RUN(config_check);
    RUN(excluded_edges);
    return test_summary();
}
