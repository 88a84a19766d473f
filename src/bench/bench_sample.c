/* bench_sample.c — `cgnn bench sample`: the sampling and feature-gathering hot paths.
 *
 * Stages, each a median over `reps` repeats of `batches` batches of the train split:
 *   1. sampling alone, with 1 thread and with N threads (threads take whole batches, as the
 *      loader's workers do): sampled edges/s, edges/s per core, seeds/s, scaling 1 -> N;
 *   2. feature gathering of those batches' input nodes, 1 and N threads: GB/s of float32
 *      rows produced, next to memcpy bandwidth with the same thread count;
 *   3. the whole loader pipeline (N workers, prefetch queue) drained by an idle consumer:
 *      seeds/s end to end.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "sample/gather.h"
#include "sample/loader.h"
#include "sample/sampler.h"
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

int bench_sample_run(const bench_sample_opts *o, FILE *out, cgnn_err *err) {
    dataset ds;
    if (dataset_open(&ds, o->dataset, err) != 0) return -1;
    if (dataset_is_typed(&ds)) { /* the sampler walks one edge type of an untyped graph */
        err_set(err, CGNN_ERR_INPUT, "%s: bench sample: typed graphs are not supported yet (%d node types)", ds.dir,
                ds.num_node_types);
        dataset_close(&ds);
        return -1;
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
        fprintf(out, "sample  %d thread%s: %8.2f M edges/s (%6.2f M edges/s per core), %9.0f seeds/s\n",
                thread_counts[k], thread_counts[k] > 1 ? "s" : " ", eps[k] / 1e6, eps[k] / 1e6 / thread_counts[k],
                sps[k]);
    }
    fprintf(out, "        per batch: %.0f sampled edges, %.0f input nodes\n",
            (double)last.edges / o->batches, (double)last.input_nodes / o->batches);
    if (T > 1) fprintf(out, "        scaling 1 -> %d threads: %.2fx (ideal %dx)\n", T, eps[1] / eps[0], T);

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
        double *sp = cgnn_malloc((size_t)o->reps * sizeof(double));
        for (int rep = 0; rep < o->reps; rep++) {
            loader_start_epoch(&l, rep, o->batches);
            double a = timer_now();
            int64_t seeds = 0;
            minibatch *mb;
            while ((mb = loader_next(&l)) != NULL) {
                seeds += mb->num_items;
                loader_release(&l, mb);
            }
            sp[rep] = (double)seeds / (timer_now() - a);
        }
        fprintf(out, "loader  %d worker%s: %9.0f seeds/s end to end (sample + gather, prefetch queue %d)\n", T,
                T > 1 ? "s" : " ", bench_median(sp, o->reps), l.queue_depth);
        free(sp);
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
