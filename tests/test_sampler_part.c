/* test_sampler_part.c — sampling a partitioned graph gives bitwise the batches of the whole
 * graph: the parts live in one process here and pick_remote calls the owners' side
 * (sampler_pick_owned) directly, so what is tested is the sampler's split / ask / merge, for
 * P = 1, 2, 3, 5 parts, with and without replacement, fanout -1, excluded edges; and a reply
 * that breaks the contract is an error, never an overflow. */
#include "sample/loader.h"
#include "sample/sampler.h"
#include "test.h"
#include "test_graph_util.h"
#include "util/rng.h"

#include "test_part_util.h"

static void check_config(int L, const int64_t *fo, int replace, int exclude, int weighted, int *failed) {
    const int64_t n = 700;
    int32_t *src, *dst;
    int64_t e = test_random_graph(n, 6, 150, 41, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph whole;
    cgnn_err err = {0};
    CGNN_CHECK(csc_build(&whole, n, &ed, 1, &err) == 0);
    float *w = NULL, *wcsc = NULL; /* weighted: edge-list order, and the whole index's order */
    if (weighted) {
        w = malloc((size_t)(e + 1) * sizeof(float));
        wcsc = malloc((size_t)(e + 1) * sizeof(float));
        rng wr;
        rng_init(&wr, 3);
        for (int64_t i = 0; i < e; i++) w[i] = rng_uniform(&wr) < 0.3 ? 0.0f : (float)(rng_uniform(&wr) * 2 + 0.01);
        CGNN_CHECK(sample_weights_to_csc(&whole, w, NPY_DTYPE_FLOAT32, dst, NPY_DTYPE_INT32, e, "w", wcsc, &err) == 0);
    }
    sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = L;
    for (int h = 0; h < L; h++) cfg.fanouts[h] = fo[h];
    cfg.replace = replace;
    cfg.weights = wcsc;
    minibatch_capacity cap;
    sampler_capacity(&whole, &cfg, 48, 0, &cap);
    minibatch mw, mp;
    neighbor_sampler sw;
    CGNN_CHECK(minibatch_alloc(&mw, &cap, &err) == 0 && minibatch_alloc(&mp, &cap, &err) == 0);
    CGNN_CHECK(sampler_init(&sw, &whole, &cfg, &cap, &err) == 0);
    const int Ps[] = {1, 2, 3, 5};
    for (int pi = 0; pi < 4 && !*failed; pi++) {
        parted pd;
        parted_make(&pd, src, dst, e, n, Ps[pi], 1000 + (uint64_t)pi);
        if (weighted) parted_set_weights(&pd, src, dst, e, w);
        sampler_config pcfg = cfg;
        pcfg.weights = NULL; /* a part's are its sampler_part's */
        for (int me = 0; me < pd.P && !*failed; me++) {
            minibatch_capacity pcap;
            sampler_capacity_sized(n, e, pd.part[me].max_in_degree, &cfg, 48, 0, &pcap);
            ASSERT(memcmp(&pcap, &cap, sizeof cap) == 0); /* the same worst case as the whole graph */
            neighbor_sampler sp;
            CGNN_CHECK(sampler_init_part(&sp, &pd.g[me], &pd.part[me], &pcfg, &pcap, &err) == 0);
            rng r;
            rng_init(&r, 7 + (uint64_t)me);
            for (int trial = 0; trial < 5; trial++) {
                int64_t seeds[48], pseeds[48], pairs[48], ppairs[48];
                const int64_t m = 8 + (int64_t)rng_below(&r, 40);
                for (int64_t i = 0; i < m; i++) seeds[i] = (int64_t)rng_below(&r, (uint64_t)n);
                seeds[0] = 0; /* the hub */
                for (int64_t i = 0; i < m; i++) pseeds[i] = pd.new_of_orig[seeds[i]];
                const uint64_t key = rng_key(99, (uint64_t)trial);
                if (exclude) {
                    for (int64_t k = 0; k < m / 2; k++) {
                        pairs[2 * k] = src[(k * 31) % e];
                        pairs[2 * k + 1] = dst[(k * 31) % e];
                        ppairs[2 * k] = pd.new_of_orig[pairs[2 * k]];
                        ppairs[2 * k + 1] = pd.new_of_orig[pairs[2 * k + 1]];
                    }
                    sampler_exclude_edges(&sw, pairs, m / 2);
                    sampler_exclude_edges(&sp, ppairs, m / 2);
                }
                ASSERT_EQ(sampler_sample(&sw, &mw, seeds, m, key, &err), 0);
                ASSERT_EQ(sampler_sample(&sp, &mp, pseeds, m, key, &err), 0);
                if (!same_mapped(&mw, &mp, pd.orig_of_new, L)) {
                    fprintf(stderr,
                            "partitioned batch differs: P=%d part=%d L=%d replace=%d exclude=%d weighted=%d trial=%d\n",
                            pd.P, me, L, replace, exclude, weighted, trial);
                    *failed = 1;
                    break;
                }
            }
            sampler_free(&sp);
        }
        parted_free(&pd);
    }
    sampler_free(&sw);
    minibatch_free(&mw);
    minibatch_free(&mp);
    csc_free(&whole);
    free(w);
    free(wcsc);
    free(src);
    free(dst);
}

TEST(partitioned_batches_equal_whole_graph_batches) {
    int failed = 0;
    const int64_t f1[] = {5, 3, 2}, f2[] = {-1, 4}, f3[] = {100, 10}, f4[] = {3};
    check_config(3, f1, 0, 0, 0, &failed);
    check_config(3, f1, 1, 0, 0, &failed);
    check_config(2, f2, 0, 0, 0, &failed);
    check_config(2, f3, 0, 0, 0, &failed); /* partial Fisher-Yates for the hub */
    check_config(1, f4, 0, 1, 0, &failed);
    check_config(3, f1, 0, 1, 0, &failed);
    /* weighted sampling: each part's weights, the whole graph's draws */
    check_config(3, f1, 0, 0, 1, &failed);
    check_config(3, f1, 1, 0, 1, &failed);
    check_config(2, f2, 0, 0, 1, &failed);
    check_config(2, f3, 0, 1, 1, &failed);
    ASSERT_EQ(failed, 0);
}

TEST(bad_replies_and_requests_are_errors) {
    const int64_t n = 300;
    int32_t *src, *dst;
    int64_t e = test_random_graph(n, 4, 40, 3, &src, &dst);
    parted pd;
    parted_make(&pd, src, dst, e, n, 2, 5);
    sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = 2;
    cfg.fanouts[0] = 4;
    cfg.fanouts[1] = 2;
    minibatch_capacity cap;
    sampler_capacity_sized(n, e, pd.part[0].max_in_degree, &cfg, 16, 0, &cap);
    minibatch mb;
    neighbor_sampler s;
    cgnn_err err = {0};
    ASSERT_EQ(minibatch_alloc(&mb, &cap, &err), 0);
    ASSERT_EQ(sampler_init_part(&s, &pd.g[0], &pd.part[0], &cfg, &cap, &err), 0);
    int64_t seeds[16];
    for (int i = 0; i < 16; i++) seeds[i] = pd.start[1] + i; /* all owned by part 1 */
    pd.bad_reply = 1;
    ASSERT_EQ(sampler_sample(&s, &mb, seeds, 16, 1, &err), -1);
    ASSERT(strstr(err.msg, "part 1 answered") != NULL);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT); /* a peer's reply is input: exit 2 */
    pd.bad_reply = 0;
    ASSERT_EQ(sampler_sample(&s, &mb, seeds, 16, 1, &err), 0); /* the sampler is usable again */
    /* the owner's side refuses nodes it does not own and bad fanouts */
    int64_t counts[2], *out = NULL, outcap = 0, foreign = pd.start[1];
    ASSERT_EQ(sampler_pick_owned(&pd.g[0], &pd.part[0], 0, 1, 3, 0, &foreign, 1, counts, &out, &outcap,
                                 pd.scratch[0], pd.wscratch[0], &err), -1);
    ASSERT(strstr(err.msg, "is not owned by part 0") != NULL);
    int64_t own = 0;
    ASSERT_EQ(sampler_pick_owned(&pd.g[0], &pd.part[0], 0, 1, 0, 0, &own, 1, counts, &out, &outcap, pd.scratch[0],
                                 pd.wscratch[0], &err), -1);
    free(out);
    sampler_free(&s);
    minibatch_free(&mb);
    parted_free(&pd);
    free(src);
    free(dst);
}


/* A loader on each part (seeds in new ids, features and negatives through the part views)
 * delivers the whole-graph loader's batches, ids mapped back, features equal: node items and
 * link-prediction pairs with random negatives and excluded seed edges. */
TEST(partitioned_loader_equals_whole_loader) {
    const int64_t n = 900, dim = 6;
    int32_t *src, *dst;
    int64_t e = test_random_graph(n, 5, 120, 77, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph whole;
    cgnn_err err = {0};
    ASSERT_EQ(csc_build(&whole, n, &ed, 1, &err), 0);
    parted pd;
    parted_make(&pd, src, dst, e, n, 3, 21);
    feat_parts fp;
    memset(&fp, 0, sizeof fp);
    fp.pd = &pd;
    fp.whole_rows = malloc((size_t)(n * dim) * sizeof(float));
    for (int64_t v = 0; v < n; v++)
        for (int64_t j = 0; j < dim; j++) fp.whole_rows[v * dim + j] = (float)((v * 5 + j) % 17);
    feat_view(&fp.whole, fp.whole_rows, n, dim);
    for (int p = 0; p < pd.P; p++) {
        const int64_t rows = pd.start[p + 1] - pd.start[p];
        fp.part_rows[p] = malloc((size_t)(rows * dim) * sizeof(float) + 1);
        for (int64_t i = 0; i < rows; i++)
            memcpy(fp.part_rows[p] + i * dim, fp.whole_rows + pd.orig_of_new[pd.start[p] + i] * dim,
                   (size_t)dim * sizeof(float));
        feat_view(&fp.part[p], fp.part_rows[p], rows, dim);
        fp.gp[p] = (gather_part){.num_parts = pd.P, .part = p, .part_start = pd.start,
                                 .fetch_remote = fetch_in_process, .ctx = &fp};
    }
    /* items: 150 nodes, or 120 pairs (src, dst) of the edge list */
    int64_t seeds[300], pseeds[300], labels[150];
    for (int64_t i = 0; i < 150; i++) {
        seeds[i] = (i * 37) % n;
        pseeds[i] = pd.new_of_orig[seeds[i]];
        labels[i] = i % 4;
    }
    for (int pairs = 0; pairs <= 1; pairs++) {
        const int64_t items = pairs ? 120 : 150;
        if (pairs)
            for (int64_t i = 0; i < 120; i++) {
                seeds[2 * i] = src[(i * 13) % e];
                seeds[2 * i + 1] = dst[(i * 13) % e];
                pseeds[2 * i] = pd.new_of_orig[seeds[2 * i]];
                pseeds[2 * i + 1] = pd.new_of_orig[seeds[2 * i + 1]];
            }
        loader_config c;
        memset(&c, 0, sizeof c);
        c.sampler.num_layers = 2;
        c.sampler.fanouts[0] = 4;
        c.sampler.fanouts[1] = 3;
        c.batch_size = 32;
        c.shuffle = 1;
        c.seed = 5;
        c.rank = 1;
        c.world_size = 3;
        c.num_workers = 2;
        c.feature = &fp.whole;
        c.extra_cols = 2;
        c.pairs = pairs;
        c.num_negatives = pairs ? 10 : 0;
        c.exclude_seed_edges = pairs;
        loader lw;
        ASSERT_EQ(loader_init(&lw, &whole, seeds, pairs ? NULL : labels, items, &c, &err), 0);
        for (int me = 0; me < pd.P; me++) {
            loader_config cp = c;
            cp.part = &pd.part[me];
            cp.feature = &fp.part[me];
            cp.feat_part = &fp.gp[me];
            cp.neg_map = pd.new_of_orig;
            loader lp;
            ASSERT_EQ(loader_init(&lp, &pd.g[me], pseeds, pairs ? NULL : labels, items, &cp, &err), 0);
            for (int epoch = 0; epoch < 2; epoch++) {
                loader_start_epoch(&lw, epoch, 0);
                loader_start_epoch(&lp, epoch, 0);
                ASSERT_EQ(loader_num_batches(&lw), loader_num_batches(&lp));
                minibatch *a, *b;
                while ((a = loader_next(&lw)) != NULL) {
                    b = loader_next(&lp);
                    ASSERT(b != NULL);
                    ASSERT(same_mapped(a, b, pd.orig_of_new, 2));
                    ASSERT_EQ(a->num_negatives, b->num_negatives);
                    for (int64_t i = 0; i < a->num_input_nodes; i++)
                        ASSERT(memcmp(a->features + i * a->feat_dim, b->features + i * b->feat_dim,
                                      (size_t)dim * sizeof(float)) == 0);
                    if (!pairs)
                        for (int64_t i = 0; i < a->num_items; i++) ASSERT_EQ(a->labels[i], b->labels[i]);
                    loader_release(&lw, a);
                    loader_release(&lp, b);
                }
                ASSERT(loader_next(&lp) == NULL);
                ASSERT_EQ(loader_failed(&lp, &err), 0);
            }
            loader_free(&lp);
        }
        loader_free(&lw);
    }
    free(fp.whole_rows);
    for (int p = 0; p < pd.P; p++) free(fp.part_rows[p]);
    parted_free(&pd);
    csc_free(&whole);
    free(src);
    free(dst);
}

int main(void) {
    RUN(partitioned_batches_equal_whole_graph_batches);
    RUN(bad_replies_and_requests_are_errors);
    RUN(partitioned_loader_equals_whole_loader);
    return test_summary();
}
