/* bench_sample.c — `cgnn bench sample`: the sampling and feature-gathering hot paths.
 *
 * Stages, each a median over `reps` repeats of `batches` batches of the train split:
 *   1. sampling alone, with 1 thread and with N threads (threads take whole batches, as the
 *      loader's workers do): sampled edges/s, edges/s per core, seeds/s, scaling 1 -> N;
 *   2. feature gathering of those batches' input nodes, 1 and N threads: GB/s of float32
 *      rows produced, next to memcpy bandwidth with the same thread count;
 *   3. the whole loader pipeline (N workers, prefetch queue) drained by an idle consumer:
 *      seeds/s end to end.
 * With --weights NAME (homogeneous datasets), stage 1 also times weighted sampling (sampler.h,
 * "Weighted sampling") with 1 thread on the same seeds and keys: nanoseconds per sampled edge,
 * weighted against uniform.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "sample/gather.h"
#include "sample/loader.h"
#include "sample/sample_weights.h"
#include "sample/sampler.h"
#include "sample/typed_sampler.h"
#include "graph/typed_graph.h"
#include "util/rng.h"
#include "util/timer.h"

typedef struct sample_stats {
    double seconds;
    int64_t edges, seeds, input_nodes;
} sample_stats;

/* Samples batches [0, nb) of `seed_list` with `threads` threads; one sampler per thread. */
static sample_stats run_sampling(neighbor_sampler *samplers, minibatch *mbs, int threads,
                                 const int64_t *seed_list, int64_t num_seeds, int64_t B, int nb,
                                 uint64_t key) {
    sample_stats st = {0};
    int64_t edges = 0, nodes = 0, seeds = 0;
    double t0 = timer_now();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : edges, nodes, seeds)
    for (int b = 0; b < nb; b++) {
        int t = omp_get_thread_num();
        int64_t off = ((int64_t)b * B) % (num_seeds > B ? num_seeds - B + 1 : 1);
        int64_t n = num_seeds < B ? num_seeds : B;
        CGNN_CHECK(sampler_sample(&samplers[t], &mbs[t], seed_list + off, n, key, NULL) == 0);
        edges += mbs[t].num_sampled_edges;
        nodes += mbs[t].num_input_nodes;
        seeds += n;
    }
    st.seconds = timer_now() - t0;
    st.edges = edges;
    st.input_nodes = nodes;
    st.seeds = seeds;
    return st;
}

/* One sampling line; the same on both paths. ns/edge is thread time per sampled edge
 * (threads / edges per second): what one sampled edge costs a core. */
/* The whole pipeline (sample + gather through the prefetch queue) with T workers: seeds per
 * second, median over o->reps epochs of o->batches batches. */
static void print_loader_line(FILE *out, loader *l, const bench_sample_opts *o, int T) {
    double *sp = cgnn_malloc((size_t)o->reps * sizeof(double));
    for (int rep = 0; rep < o->reps; rep++) {
        loader_start_epoch(l, rep, o->batches);
        double a = timer_now();
        int64_t seeds = 0;
        minibatch *mb;
        while ((mb = loader_next(l)) != NULL) {
            seeds += mb->num_items;
            loader_release(l, mb);
        }
        sp[rep] = (double)seeds / (timer_now() - a);
    }
    fprintf(out, "loader  %d worker%s: %9.0f seeds/s end to end (sample + gather, prefetch queue %d)\n", T,
            T > 1 ? "s" : " ", bench_median(sp, o->reps), l->queue_depth);
    free(sp);
}

static void print_sample_line(FILE *out, int threads, double eps, double sps) {
    fprintf(out, "sample  %d thread%s: %8.2f M edges/s (%6.2f M edges/s per core, %6.1f ns/edge), %9.0f seeds/s\n",
            threads, threads > 1 ? "s" : " ", eps / 1e6, eps / 1e6 / threads, 1e9 * threads / eps, sps);
}

/* run_sampling on a typed graph: one typed sampler and batch per thread; seeds are homogenised. */
static sample_stats run_sampling_typed(typed_sampler *samplers, minibatch *mbs, int threads, const int64_t *seed_list,
                                       int64_t num_seeds, int64_t B, int nb, uint64_t key) {
    sample_stats st = {0};
    int64_t edges = 0, nodes = 0, seeds = 0;
    double t0 = timer_now();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : edges, nodes, seeds)
    for (int b = 0; b < nb; b++) {
        int t = omp_get_thread_num();
        int64_t off = ((int64_t)b * B) % (num_seeds > B ? num_seeds - B + 1 : 1);
        int64_t n = num_seeds < B ? num_seeds : B;
        typed_sampler_sample(&samplers[t], &mbs[t], seed_list + off, n, key);
        edges += mbs[t].num_sampled_edges;
        nodes += mbs[t].num_input_nodes;
        seeds += n;
    }
    st.seconds = timer_now() - t0;
    st.edges = edges;
    st.input_nodes = nodes;
    st.seeds = seeds;
    return st;
}

/* bench_sample_run on a typed dataset: the typed sampler with the same fanout for every edge
 * type, seeds from the first node-classification task's train split (its node type), else
 * every node of node type 0; the same stages and lines as the homogeneous path (gathering:
 * every featured type's rows of one batch). */
static int bench_sample_typed(const bench_sample_opts *o, const dataset *ds, FILE *out, cgnn_err *err) {
    if (o->weights)
        return err_set(err, CGNN_ERR_INPUT, "bench sample: --weights is available on homogeneous datasets only; %s is typed",
                       ds->dir);
    int rc = -1;
    typed_graph g;
    memset(&g, 0, sizeof g);
    typed_sampler *samplers = NULL;
    minibatch *mbs = NULL;
    int64_t *seed_list = NULL, *type_seeds = NULL;
    float *gather_out[MINIBATCH_MAX_NODE_TYPES] = {0};
    const int T = o->threads > 0 ? o->threads : omp_get_num_procs();
    const int K = ds->num_edge_types, NT = ds->num_node_types;
    fprintf(out, "cgnn bench sample: dataset %s (typed: %d node types, %d edge types, each edge type fanouts [", ds->dir,
            NT, K);
    for (int h = 0; h < o->num_layers; h++) fprintf(out, "%s%lld", h ? ", " : "", (long long)o->fanouts[h]);
    fprintf(out, "]), batch %lld, %s replacement, up to %d threads, %d batches x %d repeats (medians)\n",
            (long long)o->batch_size, o->replace ? "with" : "without", T, o->batches, o->reps);

    double t0 = timer_now();
    if (typed_graph_open(&g, ds, T, err) != 0) return -1;
    int64_t E = 0;
    for (int e = 0; e < K; e++) E += g.csc[e]->num_edges;
    fprintf(out, "graph: %lld nodes, %lld edges, index (%d edge types) opened in %.2f s\n",
            (long long)g.offset[g.num_node_types], (long long)E, K, timer_now() - t0);

    /* seeds (homogenised ids): the first NC train split, else all nodes of type 0, shuffled */
    int seed_type = 0;
    int64_t num_seeds = 0;
    const int64_t *split_seeds = NULL;
    for (int t = 0; t < ds->num_tasks && !split_seeds; t++)
        if (ds->tasks[t].kind == DS_TASK_NODE_CLASSIFICATION && ds->tasks[t].splits[DS_SPLIT_TRAIN].present) {
            split_seeds = ds->tasks[t].splits[DS_SPLIT_TRAIN].seeds;
            num_seeds = ds->tasks[t].splits[DS_SPLIT_TRAIN].num_items;
            seed_type = ds->tasks[t].type;
        }
    if (!split_seeds) num_seeds = g.num_nodes[0];
    type_seeds = cgnn_malloc((size_t)(num_seeds + 1) * sizeof(int64_t)); /* per-type ids, for the loader */
    seed_list = cgnn_malloc((size_t)(num_seeds + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < num_seeds; i++) type_seeds[i] = split_seeds ? split_seeds[i] : i;
    rng r;
    rng_init(&r, o->seed);
    for (int64_t i = num_seeds - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1), tmp = type_seeds[i];
        type_seeds[i] = type_seeds[j];
        type_seeds[j] = tmp;
    }
    for (int64_t i = 0; i < num_seeds; i++) seed_list[i] = g.offset[seed_type] + type_seeds[i];
    fprintf(out, "seeds: %lld of node type %s\n", (long long)num_seeds, ds->node_types[seed_type].name);

    typed_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = o->num_layers;
    cfg.replace = o->replace;
    for (int h = 0; h < o->num_layers; h++)
        for (int e = 0; e < K; e++) cfg.fanouts[h][e] = o->fanouts[h];
    const char *names[MINIBATCH_MAX_EDGE_TYPES];
    for (int e = 0; e < K; e++) names[e] = ds->edge_types[e].name;
    if (typed_sampler_config_check(&g, &cfg, names, err) != 0) goto done;
    const ds_feature *feat[MINIBATCH_MAX_NODE_TYPES] = {0};
    int64_t width[MINIBATCH_MAX_NODE_TYPES] = {0}, max_seeds[MINIBATCH_MAX_NODE_TYPES] = {0};
    int any_feat = 0;
    for (int t = 0; t < NT; t++) {
        feat[t] = dataset_find_feature(ds, DS_DOMAIN_NODE, t, "feat");
        for (int i = 0; i < ds->num_features && !feat[t]; i++)
            if (ds->features[i].domain == DS_DOMAIN_NODE && ds->features[i].type == t) feat[t] = &ds->features[i];
        width[t] = feat[t] ? feat[t]->dim : 0;
        any_feat |= feat[t] != NULL;
    }
    max_seeds[seed_type] = o->batch_size;
    minibatch_typed_capacity tcap;
    typed_sampler_capacity(&g, &cfg, max_seeds, NULL, &tcap); /* sampling alone: no feature buffers */
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = o->num_layers;
    cap.max_items = o->batch_size;
    samplers = cgnn_calloc((size_t)T, sizeof(typed_sampler));
    mbs = cgnn_calloc((size_t)T, sizeof(minibatch));
    for (int t = 0; t < T; t++)
        if (typed_sampler_init(&samplers[t], &g, &cfg, &tcap, err) != 0 ||
            minibatch_alloc_typed(&mbs[t], &cap, &tcap, g.etype_src, g.etype_dst, err) != 0)
            goto done;

    /* ---- 1. sampling ---- */
    run_sampling_typed(samplers, mbs, T, seed_list, num_seeds, o->batch_size, T, 1); /* warm-up */
    int thread_counts[2] = {1, T};
    double eps[2] = {0}, sps[2] = {0};
    sample_stats last = {0};
    for (int k = 0; k < (T > 1 ? 2 : 1); k++) {
        double *ev = cgnn_malloc((size_t)o->reps * sizeof(double)), *sv = cgnn_malloc((size_t)o->reps * sizeof(double));
        for (int rep = 0; rep < o->reps; rep++) {
            sample_stats st = run_sampling_typed(samplers, mbs, thread_counts[k], seed_list, num_seeds, o->batch_size,
                                                 o->batches, rng_key(o->seed, (uint64_t)rep));
            ev[rep] = (double)st.edges / st.seconds;
            sv[rep] = (double)st.seeds / st.seconds;
            last = st;
        }
        eps[k] = bench_median(ev, o->reps);
        sps[k] = bench_median(sv, o->reps);
        free(ev);
        free(sv);
        print_sample_line(out, thread_counts[k], eps[k], sps[k]);
    }
    fprintf(out, "        per batch: %.0f sampled edges, %.0f input nodes\n", (double)last.edges / o->batches,
            (double)last.input_nodes / o->batches);
    if (T > 1) fprintf(out, "        scaling 1 -> %d threads: %.2fx (ideal %dx)\n", T, eps[1] / eps[0], T);

    /* ---- 2. feature gathering: every featured type's rows of one batch ---- */
    if (any_feat) {
        typed_sampler_sample(&samplers[0], &mbs[0], seed_list, num_seeds < o->batch_size ? num_seeds : o->batch_size,
                             rng_key(o->seed, 999));
        const minibatch_typed *ty = mbs[0].typed;
        double bytes = 0;
        int64_t rows_all = 0;
        for (int t = 0; t < NT; t++) {
            if (!feat[t]) continue;
            const int64_t n = ty->num_nodes[t][o->num_layers];
            gather_out[t] = malloc((size_t)n * (size_t)feat[t]->dim * sizeof(float) + 1);
            if (!gather_out[t]) {
                err_set(err, CGNN_ERR_RUNTIME, "out of memory for the gather buffer");
                goto done;
            }
            bytes += (double)n * (double)feat[t]->dim * sizeof(float);
            rows_all += n;
        }
        for (int k = 0; k < (T > 1 ? 2 : 1); k++) {
            const int th = thread_counts[k], reps = o->reps < 3 ? 3 : o->reps;
            double *gbs = cgnn_malloc((size_t)reps * sizeof(double));
            for (int rep = 0; rep < reps; rep++) {
                double a = timer_now();
                for (int t = 0; t < NT; t++)
                    if (feat[t]) gather_rows(gather_out[t], feat[t], ty->nodes[t], ty->num_nodes[t][o->num_layers], th);
                gbs[rep] = bytes / (timer_now() - a) / 1e9;
            }
            double gather = bench_median(gbs, reps);
            free(gbs);
            double copy = bench_copy_bandwidth((size_t)bytes > (256u << 20) ? (size_t)bytes : (256u << 20), th, 5);
            fprintf(out, "gather  %d thread%s: %8.2f GB/s of float32 rows (%lld rows of the featured types), copy "
                    "bandwidth %.2f GB/s -> %.0f%%\n", th, th > 1 ? "s" : " ", gather, (long long)rows_all, copy,
                    100.0 * gather / copy);
        }
    } else {
        fprintf(out, "gather: dataset has no node features, skipped\n");
    }

    /* ---- 3. the loader pipeline end to end ---- */
    {
        loader_config lc;
        memset(&lc, 0, sizeof lc);
        lc.batch_size = o->batch_size;
        lc.shuffle = 1;
        lc.seed = o->seed;
        lc.world_size = 1;
        lc.num_workers = T;
        lc.typed = &g;
        lc.typed_sampler = cfg;
        lc.seed_type = seed_type;
        for (int t = 0; t < NT; t++) {
            lc.type_feature[t] = feat[t];
            lc.type_width[t] = width[t];
        }
        loader l;
        if (loader_init(&l, NULL, type_seeds, NULL, num_seeds, &lc, err) != 0) goto done;
        print_loader_line(out, &l, o, T);
        loader_free(&l);
    }
    rc = 0;
done:
    if (samplers)
        for (int t = 0; t < T; t++) typed_sampler_free(&samplers[t]);
    if (mbs)
        for (int t = 0; t < T; t++) minibatch_free(&mbs[t]);
    free(samplers);
    free(mbs);
    free(seed_list);
    free(type_seeds);
    for (int t = 0; t < MINIBATCH_MAX_NODE_TYPES; t++) free(gather_out[t]);
    typed_graph_free(&g);
    return rc;
}

/* --weights: one weighted sampler (cfg with the weights of edge feature o->weights), 1 thread,
 * the same seeds and keys as stage 1; prints ns per sampled edge against uniform's (uniform_ns). */
static int bench_weighted(const bench_sample_opts *o, const dataset *ds, const csc_graph *g, const sampler_config *cfg,
                          const minibatch_capacity *cap, const int64_t *seed_list, int64_t num_seeds, double uniform_ns,
                          FILE *out, cgnn_err *err) {
    float *w = NULL;
    int64_t zero = 0;
    if (sample_weights_load(ds, 0, g, o->weights, &w, &zero, err) != 0) return err_prefix(err, "bench sample: --weights: ");
    sampler_config wc = *cfg;
    wc.weights = w;
    neighbor_sampler s;
    minibatch mb;
    memset(&mb, 0, sizeof mb);
    int rc = -1;
    if (sampler_init(&s, g, &wc, cap, err) != 0) goto out;
    if (minibatch_alloc(&mb, cap, err) != 0) {
        sampler_free(&s);
        goto out;
    }
    run_sampling(&s, &mb, 1, seed_list, num_seeds, o->batch_size, 1, 1); /* warm-up */
    double *ns = cgnn_malloc((size_t)o->reps * sizeof(double));
    sample_stats st = {0};
    for (int rep = 0; rep < o->reps; rep++) {
        st = run_sampling(&s, &mb, 1, seed_list, num_seeds, o->batch_size, o->batches, rng_key(o->seed, (uint64_t)rep));
        ns[rep] = st.edges > 0 ? st.seconds * 1e9 / (double)st.edges : 0;
    }
    const double wns = bench_median(ns, o->reps);
    free(ns);
    fprintf(out,
            "weighted sample 1 thread : %8.1f ns per sampled edge (uniform %.1f ns: %.2fx), %.0f sampled edges per "
            "batch; weights: edge feature '%s', %lld nodes with all in-edges at weight 0\n",
            wns, uniform_ns, uniform_ns > 0 ? wns / uniform_ns : 0.0, (double)st.edges / o->batches, o->weights,
            (long long)zero);
    sampler_free(&s);
    minibatch_free(&mb);
    rc = 0;
out:
    free(w);
    return rc;
}

int bench_sample_run(const bench_sample_opts *o, FILE *out, cgnn_err *err) {
    dataset ds;
    if (dataset_open(&ds, o->dataset, err) != 0) return -1;
    if (dataset_is_typed(&ds)) {
        int rc = bench_sample_typed(o, &ds, out, err);
        dataset_close(&ds);
        return rc;
    }
    int rc = -1;
    csc_graph g = {0};
    neighbor_sampler *samplers = NULL;
    minibatch *mbs = NULL;
    int64_t *seed_list = NULL;
    float *gather_out = NULL;
    const int T = o->threads > 0 ? o->threads : omp_get_num_procs();
    const ds_feature *feat = ds.num_features ? dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat") : NULL;
    if (!feat && ds.num_features) feat = &ds.features[0];
    fprintf(out, "cgnn bench sample: dataset %s, fanouts [", ds.dir);
    for (int h = 0; h < o->num_layers; h++) fprintf(out, "%s%lld", h ? ", " : "", (long long)o->fanouts[h]);
    fprintf(out, "], batch %lld, %s replacement, up to %d threads, %d batches x %d repeats (medians)\n",
            (long long)o->batch_size, o->replace ? "with" : "without", T, o->batches, o->reps);

    double t0 = timer_now();
    if (csc_open_cached(&g, &ds, 0, T, err) != 0) goto done;
    fprintf(out, "graph: %lld nodes, %lld edges, index %s in %.2f s\n", (long long)g.num_nodes,
            (long long)g.num_edges, g.from_cache ? "loaded from cache" : "built", timer_now() - t0);

    /* seeds: the first node-classification train split, else all nodes, shuffled */
    int64_t num_seeds = 0;
    const int64_t *split_seeds = NULL;
    for (int t = 0; t < ds.num_tasks && !split_seeds; t++)
        if (ds.tasks[t].kind == DS_TASK_NODE_CLASSIFICATION && ds.tasks[t].splits[DS_SPLIT_TRAIN].present) {
            split_seeds = ds.tasks[t].splits[DS_SPLIT_TRAIN].seeds;
            num_seeds = ds.tasks[t].splits[DS_SPLIT_TRAIN].num_items;
        }
    if (!split_seeds) num_seeds = g.num_nodes;
    seed_list = cgnn_malloc((size_t)num_seeds * sizeof(int64_t));
    for (int64_t i = 0; i < num_seeds; i++) seed_list[i] = split_seeds ? split_seeds[i] : i;
    rng r;
    rng_init(&r, o->seed);
    for (int64_t i = num_seeds - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1), tmp = seed_list[i];
        seed_list[i] = seed_list[j];
        seed_list[j] = tmp;
    }

    sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = o->num_layers;
    memcpy(cfg.fanouts, o->fanouts, sizeof cfg.fanouts);
    cfg.replace = o->replace;
    if (sampler_config_check(&cfg, err) != 0) goto done;
    minibatch_capacity cap;
    sampler_capacity(&g, &cfg, o->batch_size, 0, &cap);
    samplers = cgnn_calloc((size_t)T, sizeof(neighbor_sampler));
    mbs = cgnn_calloc((size_t)T, sizeof(minibatch));
    for (int t = 0; t < T; t++)
        if (sampler_init(&samplers[t], &g, &cfg, &cap, err) != 0 || minibatch_alloc(&mbs[t], &cap, err) != 0)
            goto done;

    /* ---- 1. sampling ---- */
    run_sampling(samplers, mbs, T, seed_list, num_seeds, o->batch_size, T, 1); /* warm-up */
    int thread_counts[2] = {1, T};
    double eps[2] = {0}, sps[2] = {0};
    sample_stats last = {0};
    for (int k = 0; k < (T > 1 ? 2 : 1); k++) {
        double *e = cgnn_malloc((size_t)o->reps * sizeof(double)), *s = cgnn_malloc((size_t)o->reps * sizeof(double));
        for (int rep = 0; rep < o->reps; rep++) {
            sample_stats st = run_sampling(samplers, mbs, thread_counts[k], seed_list, num_seeds,
                                           o->batch_size, o->batches, rng_key(o->seed, (uint64_t)rep));
            e[rep] = (double)st.edges / st.seconds;
            s[rep] = (double)st.seeds / st.seconds;
            last = st;
        }
        eps[k] = bench_median(e, o->reps);
        sps[k] = bench_median(s, o->reps);
        free(e);
        free(s);
        print_sample_line(out, thread_counts[k], eps[k], sps[k]);
    }
    fprintf(out, "        per batch: %.0f sampled edges, %.0f input nodes\n",
            (double)last.edges / o->batches, (double)last.input_nodes / o->batches);
    if (T > 1) fprintf(out, "        scaling 1 -> %d threads: %.2fx (ideal %dx)\n", T, eps[1] / eps[0], T);
    if (o->weights && bench_weighted(o, &ds, &g, &cfg, &cap, seed_list, num_seeds, 1e9 / eps[0], out, err) != 0)
        goto done;

    /* ---- 2. feature gathering ---- */
    if (feat) {
        /* one batch's input nodes, gathered repeatedly */
        CGNN_CHECK(sampler_sample(&samplers[0], &mbs[0], seed_list,
                                  num_seeds < o->batch_size ? num_seeds : o->batch_size, rng_key(o->seed, 999),
                                  NULL) == 0);
        const int64_t n = mbs[0].num_input_nodes;
        const double row_bytes = (double)feat->dim * sizeof(float);
        gather_out = malloc((size_t)n * (size_t)feat->dim * sizeof(float) + 1);
        if (!gather_out) {
            err_set(err, CGNN_ERR_RUNTIME, "out of memory for the gather buffer");
            goto done;
        }
        gather_rows(gather_out, feat, mbs[0].input_nodes, n, T); /* warm-up: fault pages */
        for (int k = 0; k < (T > 1 ? 2 : 1); k++) {
            int th = thread_counts[k];
            int reps = o->reps * 3;
            double *gbs = cgnn_malloc((size_t)reps * sizeof(double));
            for (int rep = 0; rep < reps; rep++) {
                double a = timer_now();
                gather_rows(gather_out, feat, mbs[0].input_nodes, n, th);
                gbs[rep] = (double)n * row_bytes / (timer_now() - a) / 1e9;
            }
            double gather = bench_median(gbs, reps);
            free(gbs);
            double copy = bench_copy_bandwidth((size_t)(n * row_bytes) > (256u << 20) ? (size_t)(n * row_bytes) : (256u << 20),
                                               th, 5);
            fprintf(out, "gather  %d thread%s: %8.2f GB/s of float32 rows (%s source, %lld rows x %lld), copy bandwidth %.2f GB/s -> %.0f%%\n",
                    th, th > 1 ? "s" : " ", gather, npy_dtype_name(feat->array.dtype), (long long)n,
                    (long long)feat->dim, copy, 100.0 * gather / copy);
        }
    } else {
        fprintf(out, "gather: dataset has no node features, skipped\n");
    }

    /* ---- 3. the loader pipeline end to end ---- */
    {
        loader_config lc;
        memset(&lc, 0, sizeof lc);
        lc.sampler = cfg;
        lc.batch_size = o->batch_size;
        lc.shuffle = 1;
        lc.seed = o->seed;
        lc.world_size = 1;
        lc.num_workers = T;
        lc.feature = feat;
        loader l;
        if (loader_init(&l, &g, seed_list, NULL, num_seeds, &lc, err) != 0) goto done;
        print_loader_line(out, &l, o, T);
        loader_free(&l);
    }
    rc = 0;
done:
    if (samplers)
        for (int t = 0; t < T; t++) sampler_free(&samplers[t]);
    if (mbs)
        for (int t = 0; t < T; t++) minibatch_free(&mbs[t]);
    free(samplers);
    free(mbs);
    free(seed_list);
    free(gather_out);
    csc_free(&g);
    dataset_close(&ds);
    return rc;
}
