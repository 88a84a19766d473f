/* test_feat_cache.c — sample/feat_cache: the size rule (GLT's cache_ratio / memory budget), the
 * selection order, the halo scores, the cached fetch (rows byte for byte the owners', only the
 * misses fetched, counters exact), and feat_cache_build for the three policies on an in-process
 * partitioned graph (pre-sampling independent of the thread count); the adaptive policies (every
 * row the owner's, only misses fetched, reproducible hits, concurrent fetches). */
#include <omp.h>

#include "sample/feat_cache.h"
#include "test.h"
#include "test_part_util.h"

TEST(capacity) {
    ASSERT_EQ(feat_cache_capacity(1000, 0.1, 0, 8), 100);
    ASSERT_EQ(feat_cache_capacity(1000, 0, 400, 8), 50);
    ASSERT_EQ(feat_cache_capacity(1000, 0.1, 400, 8), 50); /* both: the smaller (GLT) */
    ASSERT_EQ(feat_cache_capacity(1000, 0.5, (int64_t)1 << 40, 8), 500);
    ASSERT_EQ(feat_cache_capacity(1000, 0, (int64_t)1 << 40, 8), 1000); /* never more than the nodes */
    ASSERT_EQ(feat_cache_capacity(1000, 0, 0, 8), 0);
    ASSERT_EQ(feat_cache_capacity(1000, 1.0, 0, 8), 1000);
}

TEST(select_order) {
    const uint32_t score[10] = {5, 0, 5, 9, 9, 1, 5, 0, 2, 5};
    int64_t out[10], cand = 0;
    /* own nodes [3, 5) never; score 0 never; score descending, ties by smaller id; out ascending */
    ASSERT_EQ(feat_cache_select(out, score, NULL, 10, 3, 5, 3, &cand), 3);
    ASSERT_EQ(cand, 6);
    ASSERT_EQ(out[0], 0);
    ASSERT_EQ(out[1], 2);
    ASSERT_EQ(out[2], 6);
    ASSERT_EQ(feat_cache_select(out, score, NULL, 10, 3, 5, 5, &cand), 5);
    const int64_t want5[5] = {0, 2, 6, 8, 9};
    for (int i = 0; i < 5; i++) ASSERT_EQ(out[i], want5[i]);
    ASSERT_EQ(feat_cache_select(out, score, NULL, 10, 3, 5, 100, &cand), 6); /* all candidates */
    ASSERT_EQ(out[2], 5);
    ASSERT_EQ(feat_cache_select(out, score, NULL, 10, 0, 10, 4, &cand), 0); /* everything own */
    /* a second key: equal scores by it, and nodes of score 0 after every scored one */
    const uint32_t second[10] = {1, 7, 2, 0, 0, 0, 3, 4, 0, 2};
    ASSERT_EQ(feat_cache_select(out, score, second, 10, 3, 5, 5, &cand), 5);
    ASSERT_EQ(cand, 8); /* ids 1 and 7: score 0 but a second key */
    const int64_t want2[5] = {0, 2, 6, 8, 9}; /* 6 (5, 3), 2 (5, 2), 9 (5, 2), 0 (5, 1), then 8 (2, 0) */
    for (int i = 0; i < 5; i++) ASSERT_EQ(out[i], want2[i]);
    ASSERT_EQ(feat_cache_select(out, score, second, 10, 3, 5, 7, &cand), 7);
    const int64_t want3[7] = {0, 1, 2, 5, 6, 8, 9}; /* then 5 (1, 0) and 1 (0, 7) */
    for (int i = 0; i < 7; i++) ASSERT_EQ(out[i], want3[i]);
    ASSERT_EQ(feat_cache_select(out, score, second, 10, 3, 5, 4, &cand), 4);
    const int64_t want4[4] = {0, 2, 6, 9};
    for (int i = 0; i < 4; i++) ASSERT_EQ(out[i], want4[i]);
}

/* A 3-part graph with float32 features whose value encodes (original id, column). */
typedef struct fixture {
    parted pd;
    feat_parts fp;
    int32_t *src, *dst;
    int64_t n, e, dim;
    _Atomic int64_t fetched; /* rows fetched through the inner callback */
} fixture;

static fixture *g_fx;

static int counting_fetch(void *ctx, gather_remote_req *rq, cgnn_err *err) {
    for (int p = 0; p < rq->num_parts; p++) g_fx->fetched += rq->n[p];
    return fetch_in_process(ctx, rq, err);
}

static void fixture_make(fixture *fx, int64_t n, int64_t dim) {
    memset(fx, 0, sizeof *fx);
    fx->n = n, fx->dim = dim;
    fx->e = test_random_graph(n, 6, 150, 99, &fx->src, &fx->dst);
    parted_make(&fx->pd, fx->src, fx->dst, fx->e, n, 3, 4);
    feat_parts *fp = &fx->fp;
    fp->pd = &fx->pd;
    fp->whole_rows = malloc((size_t)(n * dim) * sizeof(float));
    for (int64_t v = 0; v < n; v++)
        for (int64_t j = 0; j < dim; j++) fp->whole_rows[v * dim + j] = (float)(v * 10 + j);
    feat_view(&fp->whole, fp->whole_rows, n, dim);
    for (int p = 0; p < fx->pd.P; p++) {
        const int64_t rows = fx->pd.start[p + 1] - fx->pd.start[p];
        fp->part_rows[p] = malloc((size_t)(rows * dim) * sizeof(float) + 1);
        for (int64_t i = 0; i < rows; i++)
            memcpy(fp->part_rows[p] + i * dim, fp->whole_rows + fx->pd.orig_of_new[fx->pd.start[p] + i] * dim,
                   (size_t)dim * sizeof(float));
        feat_view(&fp->part[p], fp->part_rows[p], rows, dim);
        fp->gp[p] = (gather_part){.num_parts = fx->pd.P, .part = p, .part_start = fx->pd.start,
                                  .fetch_remote = counting_fetch, .ctx = fp};
    }
    g_fx = fx;
}

static void fixture_free(fixture *fx) {
    for (int p = 0; p < fx->pd.P; p++) free(fx->fp.part_rows[p]);
    free(fx->fp.whole_rows);
    parted_free(&fx->pd);
    free(fx->src);
    free(fx->dst);
}

/* Gathers ids (new ids) through gp into out and checks every row against the whole table. */
static int gather_ok(fixture *fx, const gather_part *gp, const int64_t *ids, int64_t n) {
    gather_part_scratch sc;
    cgnn_err err = {0};
    if (gather_part_scratch_init(&sc, fx->pd.P, n, &err) != 0) return 0;
    float *out = malloc((size_t)(n * fx->dim) * sizeof(float) + 1);
    int ok = gather_rows_part(out, fx->dim, &fx->fp.part[0], gp, &sc, ids, n, 2, &err) == 0;
    for (int64_t i = 0; ok && i < n; i++)
        ok = memcmp(out + i * fx->dim, fx->fp.whole_rows + fx->pd.orig_of_new[ids[i]] * fx->dim,
                    (size_t)fx->dim * sizeof(float)) == 0;
    free(out);
    gather_part_scratch_free(&sc);
    return ok;
}

TEST(halo_scores) {
    fixture fx;
    fixture_make(&fx, 700, 4);
    uint32_t *score = calloc((size_t)fx.n, sizeof(uint32_t)), *want = calloc((size_t)fx.n, sizeof(uint32_t));
    feat_cache_halo_scores(score, &fx.pd.g[0]);
    /* the same from the edge list: edges into part 0 from another part, per source */
    for (int64_t i = 0; i < fx.e; i++) {
        const int64_t s = fx.pd.new_of_orig[fx.src[i]], d = fx.pd.new_of_orig[fx.dst[i]];
        if (d < fx.pd.start[1] && s >= fx.pd.start[1]) want[s]++;
    }
    ASSERT_EQ(memcmp(score, want, (size_t)fx.n * sizeof(uint32_t)), 0);
    int64_t any = 0;
    for (int64_t v = 0; v < fx.n; v++) any += want[v];
    ASSERT(any > 0);
    free(score);
    free(want);
    fixture_free(&fx);
}

TEST(cached_fetch_is_the_owners_rows) {
    fixture fx;
    fixture_make(&fx, 800, 5);
    const gather_part *inner = &fx.fp.gp[0];
    feat_cache c;
    feat_cache_init(&c, inner, (size_t)fx.dim * sizeof(float));
    /* every third remote node cached */
    int64_t *ids = malloc((size_t)fx.n * sizeof(int64_t)), m = 0;
    for (int64_t v = fx.pd.start[1]; v < fx.n; v += 3) ids[m++] = v;
    fx.fetched = 0;
    cgnn_err err = {0};
    ASSERT_EQ(feat_cache_fill(&c, ids, m, &err), 0);
    ASSERT_EQ(c.n, m);
    ASSERT_EQ(fx.fetched, m); /* filling fetched each cached row once */
    for (int64_t i = 0; i < m; i++) {
        const float *row = feat_cache_row(&c, ids[i]);
        ASSERT(row != NULL);
        ASSERT_EQ(memcmp(row, fx.fp.whole_rows + fx.pd.orig_of_new[ids[i]] * fx.dim, (size_t)fx.dim * sizeof(float)), 0);
    }
    ASSERT(feat_cache_row(&c, fx.pd.start[1] + 1) == NULL);
    /* batches of random ids (own and remote, with duplicates): the same rows as without the
     * cache, and only the misses fetched */
    rng r;
    rng_init(&r, 7);
    int64_t q[400];
    uint64_t asked_total = 0, hit_total = 0;
    for (int rep = 0; rep < 20; rep++) {
        const int64_t n = 1 + (int64_t)rng_below(&r, 400);
        int64_t remote = 0, hits = 0;
        for (int64_t i = 0; i < n; i++) {
            q[i] = (int64_t)rng_below(&r, (uint64_t)fx.n);
            if (q[i] >= fx.pd.start[1]) {
                remote++;
                hits += (q[i] - fx.pd.start[1]) % 3 == 0;
            }
        }
        fx.fetched = 0;
        ASSERT(gather_ok(&fx, &c.view, q, n));
        ASSERT_EQ(fx.fetched, remote - hits);
        asked_total += (uint64_t)remote;
        hit_total += (uint64_t)hits;
        ASSERT(gather_ok(&fx, inner, q, n)); /* and the uncached view agrees */
    }
    uint64_t asked, found;
    feat_cache_counters(&c, 1, &asked, &found);
    ASSERT_EQ(asked, asked_total);
    ASSERT_EQ(found, hit_total);
    feat_cache_counters(&c, 0, &asked, &found);
    ASSERT_EQ(asked, 0);
    free(ids);
    feat_cache_free(&c);
    fixture_free(&fx);
}

TEST(build_policies) {
    fixture fx;
    fixture_make(&fx, 1000, 3);
    const int64_t own_lo = fx.pd.start[0], own_hi = fx.pd.start[1];
    /* training seeds: part 0's own nodes */
    int64_t ns = own_hi - own_lo, *seeds = malloc((size_t)ns * sizeof(int64_t));
    for (int64_t i = 0; i < ns; i++) seeds[i] = own_lo + i;
    /* whole-graph in-degrees in new ids */
    int64_t *deg = calloc((size_t)fx.n, sizeof(int64_t));
    for (int64_t i = 0; i < fx.e; i++) deg[fx.pd.new_of_orig[fx.dst[i]]]++;
    const feat_cache_policy pols[3] = {FEAT_CACHE_HOTNESS, FEAT_CACHE_DEGREE, FEAT_CACHE_HALO};
    for (int k = 0; k < 3; k++) {
        feat_cache c;
        feat_cache_init(&c, &fx.fp.gp[0], (size_t)fx.dim * sizeof(float));
        feat_cache_plan pl;
        memset(&pl, 0, sizeof pl);
        pl.policy = pols[k];
        pl.ratio = 0.1;
        pl.local = &fx.pd.g[0];
        pl.part = &fx.pd.part[0];
        pl.sampler.num_layers = 2;
        pl.sampler.fanouts[0] = 5;
        pl.sampler.fanouts[1] = 3;
        pl.seeds = seeds;
        pl.n_items = ns;
        pl.width = 1;
        pl.batch_size = 40;
        pl.max_batches = 6;
        pl.key = 1234;
        pl.nthreads = 3;
        pl.degrees = deg;
        feat_cache_report rep;
        cgnn_err err = {0};
        ASSERT_EQ(feat_cache_build(&c, &pl, &rep, &err), 0);
        ASSERT_EQ(rep.capacity, 100);
        ASSERT(rep.rows > 0 && rep.rows <= 100 && rep.rows == c.n);
        ASSERT(rep.rows == (rep.candidates < 100 ? rep.candidates : 100));
        for (int64_t i = 0; i < c.n; i++) {
            ASSERT(c.ids[i] >= own_hi); /* remote only */
            ASSERT(i == 0 || c.ids[i] > c.ids[i - 1]);
            ASSERT_EQ(memcmp(feat_cache_row(&c, c.ids[i]), fx.fp.whole_rows + fx.pd.orig_of_new[c.ids[i]] * fx.dim,
                             (size_t)fx.dim * sizeof(float)), 0);
        }
        if (pols[k] == FEAT_CACHE_HOTNESS) {
            ASSERT_EQ(rep.presampled_batches, 6);
            /* pre-sampling does not depend on the thread count */
            uint32_t *c1 = calloc((size_t)fx.n, 4), *c3 = calloc((size_t)fx.n, 4);
            int64_t b1, b3;
            feat_cache_plan one = pl;
            one.nthreads = 1;
            ASSERT_EQ(feat_cache_presample(c1, &one, &b1, &err), 0);
            ASSERT_EQ(feat_cache_presample(c3, &pl, &b3, &err), 0);
            ASSERT_EQ(b1, 6);
            ASSERT_EQ(memcmp(c1, c3, (size_t)fx.n * 4), 0);
            /* the cache is the top of those counts, ties by in-degree */
            uint32_t *dg = malloc((size_t)fx.n * 4);
            for (int64_t v = 0; v < fx.n; v++) dg[v] = (uint32_t)deg[v];
            int64_t *want = malloc(100 * sizeof(int64_t));
            const int64_t m = feat_cache_select(want, c1, dg, fx.n, own_lo, own_hi, 100, NULL);
            ASSERT_EQ(m, c.n);
            ASSERT_EQ(memcmp(want, c.ids, (size_t)m * sizeof(int64_t)), 0);
            free(want);
            free(dg);
            free(c1);
            free(c3);
        }
        if (pols[k] == FEAT_CACHE_DEGREE) { /* the 100 remote nodes of highest in-degree */
            uint32_t *sc = calloc((size_t)fx.n, 4);
            for (int64_t v = 0; v < fx.n; v++) sc[v] = (uint32_t)deg[v];
            int64_t want[100];
            ASSERT_EQ(feat_cache_select(want, sc, NULL, fx.n, own_lo, own_hi, 100, NULL), 100);
            ASSERT_EQ(memcmp(want, c.ids, sizeof want), 0);
            free(sc);
        }
        feat_cache_free(&c);
    }
    free(seeds);
    free(deg);
    fixture_free(&fx);
}

/* The adaptive policies: every row served is the owner's (through evictions, duplicates in a
 * request, own ids), only the misses reach the source, the counters are exact and the hit
 * sequence reproducible (the same calls: the same hits); four threads fetching at once still get
 * the owners' rows. */
TEST(adaptive_rows_are_the_owners) {
    fixture fx;
    fixture_make(&fx, 900, 4);
    const feat_cache_policy pols[4] = {FEAT_CACHE_SIEVE, FEAT_CACHE_S3FIFO, FEAT_CACHE_LRU, FEAT_CACHE_CLOCK};
    const int64_t remote = fx.n - fx.pd.start[1];
    /* the size: ratio, budget (rows and metadata), both; never more than the remote nodes */
    const size_t rb = (size_t)fx.dim * sizeof(float);
    ASSERT_EQ(feat_cache_adaptive_capacity(FEAT_CACHE_SIEVE, fx.n, 0.1, 0, rb, remote), 90);
    const int64_t by_mem = feat_cache_adaptive_capacity(FEAT_CACHE_SIEVE, fx.n, 0, 8192, rb, remote);
    ASSERT(by_mem > 0 && (double)by_mem * (double)rb + (double)cache_policy_bytes(CACHE_KIND_SIEVE, by_mem) <= 8192);
    ASSERT((double)(by_mem + 1) * (double)rb + (double)cache_policy_bytes(CACHE_KIND_SIEVE, by_mem + 1) > 8192);
    ASSERT_EQ(feat_cache_adaptive_capacity(FEAT_CACHE_LRU, fx.n, 1.0, 0, rb, remote), remote);
    ASSERT_EQ(feat_cache_adaptive_capacity(FEAT_CACHE_LRU, fx.n, 0.1, 8192, rb, remote), by_mem < 90 ? by_mem : 90);
    /* feat_cache_build with an adaptive policy: empty, sized, the view switched; nothing fetched */
    {
        feat_cache c;
        feat_cache_init(&c, &fx.fp.gp[0], rb);
        feat_cache_plan pl;
        memset(&pl, 0, sizeof pl);
        pl.policy = FEAT_CACHE_CLOCK;
        pl.ratio = 0.05;
        pl.budget = 1 << 20;
        pl.local = &fx.pd.g[0];
        pl.part = &fx.pd.part[0];
        feat_cache_report rep;
        cgnn_err err = {0};
        fx.fetched = 0;
        ASSERT_EQ(feat_cache_build(&c, &pl, &rep, &err), 0);
        ASSERT(rep.adaptive);
        ASSERT_EQ(rep.capacity, 45);
        ASSERT_EQ(rep.rows, 0);
        ASSERT_EQ(rep.candidates, remote);
        ASSERT(c.pol != NULL && c.slots == 45 && c.view.ctx == &c && c.policy == FEAT_CACHE_CLOCK);
        ASSERT_NEAR(rep.bytes, 45.0 * (double)rb + (double)cache_policy_bytes(CACHE_KIND_CLOCK, 45), 0);
        ASSERT_EQ(fx.fetched, 0);
        feat_cache_free(&c);
    }
    uint64_t found_by_policy[4];
    for (int k = 0; k < 4; k++) {
        uint64_t found_run[2];
        for (int run = 0; run < 2; run++) {
            feat_cache c;
            feat_cache_init(&c, &fx.fp.gp[0], rb);
            cgnn_err err = {0};
            ASSERT_EQ(feat_cache_start_adaptive(&c, pols[k], 60, &err), 0);
            rng r;
            rng_init(&r, 3);
            int64_t q[300];
            uint64_t asked_total = 0, fetched_total = 0;
            for (int rep = 0; rep < 40; rep++) {
                const int64_t n = 1 + (int64_t)rng_below(&r, 300);
                int64_t nremote = 0;
                for (int64_t i = 0; i < n; i++) { /* skewed towards low ids: hits happen */
                    q[i] = (int64_t)(rng_below(&r, (uint64_t)fx.n) * rng_below(&r, (uint64_t)fx.n)) / fx.n;
                    if (rep % 2) q[i] = fx.n - 1 - q[i];
                    nremote += q[i] >= fx.pd.start[1];
                }
                fx.fetched = 0;
                ASSERT(gather_ok(&fx, &c.view, q, n));
                asked_total += (uint64_t)nremote;
                fetched_total += (uint64_t)fx.fetched;
                ASSERT(cache_policy_size(c.pol) <= 60);
            }
            uint64_t asked, found;
            feat_cache_counters(&c, 1, &asked, &found);
            ASSERT_EQ(asked, asked_total);
            ASSERT_EQ(found, asked_total - fetched_total); /* every miss went to the source, no hit did */
            ASSERT(found > 0);
            found_run[run] = found;
            feat_cache_free(&c);
        }
        ASSERT_EQ(found_run[0], found_run[1]); /* reproducible */
        found_by_policy[k] = found_run[0];
    }
    int differ = 0;
    for (int k = 1; k < 4; k++) differ |= found_by_policy[k] != found_by_policy[0];
    ASSERT(differ);
    /* concurrent fetches through one small cache: still the owners' rows */
    feat_cache c;
    feat_cache_init(&c, &fx.fp.gp[0], rb);
    cgnn_err err = {0};
    ASSERT_EQ(feat_cache_start_adaptive(&c, FEAT_CACHE_SIEVE, 25, &err), 0);
    int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
    {
        rng r;
        rng_init(&r, 100 + (uint64_t)omp_get_thread_num());
        int64_t q[200];
        for (int rep = 0; rep < 30; rep++) {
            const int64_t n = 1 + (int64_t)rng_below(&r, 200);
            for (int64_t i = 0; i < n; i++) q[i] = fx.n - 1 - (int64_t)rng_below(&r, 80);
            bad += !gather_ok(&fx, &c.view, q, n);
        }
    }
    ASSERT_EQ(bad, 0);
    uint64_t asked, found;
    feat_cache_counters(&c, 0, &asked, &found);
    ASSERT(found > 0 && found < asked);
    feat_cache_free(&c);
    fixture_free(&fx);
}

int main(void) {
    RUN(capacity);
    RUN(select_order);
    RUN(halo_scores);
    RUN(cached_fetch_is_the_owners_rows);
    RUN(build_policies);
    RUN(adaptive_rows_are_the_owners);
    return test_summary();
}
