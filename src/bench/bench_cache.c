/* bench_cache.c — `cgnn bench cache`: the feature cache's policies side by side; see bench.h. */
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "sample/feat_cache.h"
#include "sample/gather.h"
#include "sample/sampler.h"
#include "util/rng.h"
#include "util/timer.h"

/* The row source: part 1 owns every row, the cache's side (part 0) none. */
typedef struct source {
    const ds_feature *f;
    gather_part owner;
} source;

static int source_fetch(void *ctx, gather_remote_req *rq, cgnn_err *err) {
    const source *s = ctx;
    for (int p = 0; p < rq->num_parts; p++)
        if (rq->n[p] > 0 &&
            gather_rows_owned(s->f, &s->owner, rq->ids[p], rq->n[p], &rq->rows[p], &rq->rows_cap[p], &rq->rows_len[p],
                              err) != 0)
            return -1;
    return 0;
}

/* Samples nb batches of seeds (from offset off) under keys (key, b): their input nodes,
 * concatenated (*nodes, grown), per batch at offsets (nb + 1). */
static int sample_batches(neighbor_sampler *smp, minibatch *mb, const int64_t *seeds, int64_t num_seeds, int64_t B,
                          int nb, int64_t off, uint64_t key, int64_t **nodes, int64_t *offsets, cgnn_err *err) {
    int64_t cap = 0, len = 0;
    *nodes = NULL;
    offsets[0] = 0;
    for (int b = 0; b < nb; b++) {
        const int64_t n = num_seeds < B ? num_seeds : B;
        const int64_t start = (off + (int64_t)b * B) % (num_seeds > n ? num_seeds - n + 1 : 1);
        if (sampler_sample(smp, mb, seeds + start, n, rng_key(key, (uint64_t)b), err) != 0) return -1;
        if (len + mb->num_input_nodes > cap) {
            cap = 2 * (len + mb->num_input_nodes);
            int64_t *g = realloc(*nodes, (size_t)cap * sizeof(int64_t));
            if (!g) return err_set(err, CGNN_ERR_RUNTIME, "out of memory keeping the sampled batches");
            *nodes = g;
        }
        memcpy(*nodes + len, mb->input_nodes, (size_t)mb->num_input_nodes * sizeof(int64_t));
        len += mb->num_input_nodes;
        offsets[b + 1] = len;
    }
    return 0;
}

int bench_cache_run(const bench_cache_opts *o, FILE *out, cgnn_err *err) {
    dataset ds;
    if (dataset_open(&ds, o->dataset, err) != 0) return -1;
    int rc = -1;
    csc_graph g = {0};
    neighbor_sampler smp;
    minibatch mb;
    memset(&smp, 0, sizeof smp);
    memset(&mb, 0, sizeof mb);
    int64_t *seed_list = NULL, *nodes = NULL, *pre = NULL, *offsets = NULL, *pre_off = NULL, *ids = NULL;
    uint32_t *counts = NULL, *indeg = NULL;
    float *rows_out = NULL;
    gather_part_scratch sc;
    memset(&sc, 0, sizeof sc);
    int have_sc = 0;
    const ds_feature *feat = ds.num_features ? dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat") : NULL;
    if (!feat && ds.num_features && ds.features[0].domain == DS_DOMAIN_NODE) feat = &ds.features[0];
    if (dataset_is_typed(&ds) || !feat) {
        err_set(err, CGNN_ERR_INPUT, "bench cache: %s: needs a homogeneous dataset with node features", o->dataset);
        goto done;
    }
    if (csc_open_cached(&g, &ds, 0, 1, err) != 0) goto done;
    const int64_t N = g.num_nodes;
    const size_t rb = (size_t)feat->dim * npy_dtype_size(feat->array.dtype);
    fprintf(out, "cgnn bench cache: dataset %s (%lld nodes, rows of %zu bytes), fanouts [", ds.dir, (long long)N, rb);
    for (int h = 0; h < o->num_layers; h++) fprintf(out, "%s%lld", h ? ", " : "", (long long)o->fanouts[h]);
    fprintf(out, "], batch %lld, %d batches in order on one thread; every row behind the cache\n",
            (long long)o->batch_size, o->batches);

    int64_t num_seeds = 0;
    const int64_t *split = NULL;
    for (int t = 0; t < ds.num_tasks && !split; t++)
        if (ds.tasks[t].kind == DS_TASK_NODE_CLASSIFICATION && ds.tasks[t].splits[DS_SPLIT_TRAIN].present) {
            split = ds.tasks[t].splits[DS_SPLIT_TRAIN].seeds;
            num_seeds = ds.tasks[t].splits[DS_SPLIT_TRAIN].num_items;
        }
    if (!split) num_seeds = N;
    seed_list = cgnn_malloc((size_t)num_seeds * sizeof(int64_t) + 1);
    for (int64_t i = 0; i < num_seeds; i++) seed_list[i] = split ? split[i] : i;
    rng r;
    rng_init(&r, o->seed);
    for (int64_t i = num_seeds - 1; i > 0; i--) {
        const int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1), tmp = seed_list[i];
        seed_list[i] = seed_list[j];
        seed_list[j] = tmp;
    }
    sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = o->num_layers;
    memcpy(cfg.fanouts, o->fanouts, sizeof cfg.fanouts);
    if (sampler_config_check(&cfg, err) != 0) goto done;
    minibatch_capacity cap;
    sampler_capacity(&g, &cfg, o->batch_size, 0, &cap);
    if (sampler_init(&smp, &g, &cfg, &cap, err) != 0 || minibatch_alloc(&mb, &cap, err) != 0) goto done;
    offsets = cgnn_malloc((size_t)(o->batches + 1) * sizeof(int64_t));
    pre_off = cgnn_malloc((size_t)(o->batches + 1) * sizeof(int64_t));
    /* the batches replayed, and as many of their own for the hotness counts (other seeds, keys) */
    if (sample_batches(&smp, &mb, seed_list, num_seeds, o->batch_size, o->batches, 0, rng_key(o->seed, 1), &nodes,
                       offsets, err) != 0 ||
        sample_batches(&smp, &mb, seed_list, num_seeds, o->batch_size, o->batches, num_seeds / 2,
                       rng_key(o->seed, 0x50524553ULL), &pre, pre_off, err) != 0)
        goto done;
    counts = cgnn_calloc((size_t)N + 1, sizeof(uint32_t));
    for (int64_t i = 0; i < pre_off[o->batches]; i++) counts[pre[i]]++;
    indeg = cgnn_malloc((size_t)N * sizeof(uint32_t) + 1); /* hotness ties by in-degree, as in training */
    for (int64_t v = 0; v < N; v++) {
        const int64_t d = csc_degree(&g, v);
        indeg[v] = d > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    }
    int64_t max_rows = 0, seeds_total = 0;
    for (int b = 0; b < o->batches; b++) {
        if (offsets[b + 1] - offsets[b] > max_rows) max_rows = offsets[b + 1] - offsets[b];
        seeds_total += num_seeds < o->batch_size ? num_seeds : o->batch_size;
    }
    fprintf(out, "%.0f input nodes per batch (%.1f%% of the nodes)\n", (double)offsets[o->batches] / o->batches,
            100.0 * (double)offsets[o->batches] / o->batches / (double)N);
    rows_out = cgnn_malloc((size_t)(max_rows + 1) * (size_t)feat->dim * sizeof(float));
    if (gather_part_scratch_init(&sc, 2, max_rows, err) != 0) goto done;
    have_sc = 1;
    const int64_t part_start[3] = {0, 0, N};
    source src = {feat, {.num_parts = 2, .part = 1, .part_start = part_start}};
    const gather_part inner = {.num_parts = 2, .part = 0, .part_start = part_start, .fetch_remote = source_fetch,
                               .ctx = &src};
    static const feat_cache_policy pols[6] = {FEAT_CACHE_NONE,  FEAT_CACHE_HOTNESS, FEAT_CACHE_SIEVE,
                                              FEAT_CACHE_S3FIFO, FEAT_CACHE_LRU,    FEAT_CACHE_CLOCK};
    fprintf(out, "%-6s %-8s %10s %9s %12s %12s\n", "size", "policy", "rows", "hit rate", "source rows", "seeds/s");
    ids = cgnn_malloc((size_t)N * sizeof(int64_t) + 1);
    for (int si = 0; si < o->num_sizes; si++) {
        const int64_t k = (int64_t)((double)N * o->sizes[si]);
        for (int pi = 0; pi < 6; pi++) {
            feat_cache c;
            feat_cache_init(&c, &inner, rb);
            int ok = 0;
            if (pols[pi] == FEAT_CACHE_HOTNESS) {
                const int64_t m = feat_cache_select(ids, counts, indeg, N, 0, 0, k, NULL);
                ok = feat_cache_fill(&c, ids, m, err) == 0;
            } else if (pols[pi] != FEAT_CACHE_NONE && k > 0) {
                ok = feat_cache_start_adaptive(&c, pols[pi], k, err) == 0;
            } else {
                ok = 1;
            }
            if (!ok) {
                feat_cache_free(&c);
                goto done;
            }
            const gather_part *view = pols[pi] == FEAT_CACHE_NONE ? &inner : &c.view;
            const double t0 = timer_now();
            for (int b = 0; b < o->batches && ok; b++)
                ok = gather_rows_part(rows_out, feat->dim, feat, view, &sc, nodes + offsets[b],
                                      offsets[b + 1] - offsets[b], 1, err) == 0;
            const double dt = timer_now() - t0;
            uint64_t asked, found;
            feat_cache_counters(&c, 0, &asked, &found);
            const double total = (double)offsets[o->batches];
            const double rows_held = pols[pi] == FEAT_CACHE_NONE ? 0 : pols[pi] == FEAT_CACHE_HOTNESS ? (double)c.n
                                                                                                    : (double)c.slots;
            fprintf(out, "%5.1f%% %-8s %10.0f %8.1f%% %12.0f %12.0f\n", 100.0 * o->sizes[si],
                    feat_cache_policy_name(pols[pi]), rows_held,
                    pols[pi] == FEAT_CACHE_NONE ? 0.0 : 100.0 * (double)found / total,
                    total - (double)found, (double)seeds_total / dt);
            feat_cache_free(&c);
            if (!ok) goto done;
        }
    }
    rc = 0;
done:
    if (have_sc) gather_part_scratch_free(&sc);
    free(rows_out), free(ids), free(counts), free(indeg), free(nodes), free(pre), free(offsets), free(pre_off), free(seed_list);
    sampler_free(&smp);
    minibatch_free(&mb);
    csc_free(&g);
    dataset_close(&ds);
    return rc;
}
