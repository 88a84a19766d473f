/* source_part.c — worker mode (graph_source.h, "part"): this rank holds part rank % P of a
 * partitioned graph and serves it to the other ranks (PICK, FEAT, EMB: sample/part_rpc.h); its
 * samplers and gathers reach the other parts through their ranks, the feature rows through the
 * cache (sample/feat_cache.h); a learnable embedding table holds this part's rows (a shard). */
#include <stdlib.h>
#include <string.h>

#include "source/source_impl.h"
#include "util/log.h"
#include "util/rng.h"

/* every rank loads its own part at once (nothing is cached), after the rpc layer is created */
static int part_load_begin(graph_source *s, cgnn_err *err) {
    return dist_phase_failed(s->d, dist_rpc_create(&s->part.rpc, s->d, err) != 0, err) ? -1 : 0;
}

/* Checks that the world fits the parts, loads part rank % P (its dataset, local index, the whole
 * splits, the id maps) and sets up the samplers' view of it. */
static int part_open(graph_source *s, cgnn_err *err) {
    partbook *pb = &s->pb;
    char what[4096 + 64];
    snprintf(what, sizeof what, "%s: sharedConfig.preprocessedMetadataUri", s->opt.config_file);
    if (partbook_open_for_rank(pb, s->opt.dataset_path, s->d->rank, s->d->size, s->threads, what, err) != 0)
        return -1;
    const int P = pb->num_parts, part = pb->part;
    s->ds = &pb->ds;
    if (pb->typed) { /* the samplers' view of a typed part: per-type ranges, draws keyed by original ids */
        if (graph_source_check_type_counts(pb, err) != 0) return -1;
        typed_sampler_part *tp = &s->part.tspart;
        tp->num_parts = P;
        tp->part = part;
        for (int k = 0; k < pb->num_node_types; k++) {
            tp->type_start[k] = pb->type_map + (size_t)k * (size_t)(P + 1);
            tp->key_ids[k] = pb->type_orig_of_new[k];
        }
        return 0;
    }
    s->g = &pb->local;
    s->part.spart = (sampler_part){P, part, pb->node_map, pb->orig_of_local, pb->num_nodes, pb->num_edges,
                                   pb->max_in_degree, NULL, NULL, NULL}; /* weights: trainer (graph_source_set_sample_weights) */
    return 0;
}

/* the same task's whole splits */
static int part_set_task(graph_source *s, cgnn_err *err) {
    const partbook *pb = &s->pb;
    s->gtask = dataset_find_task(&pb->global, s->task->name);
    if (!s->gtask || s->gtask->kind != s->task->kind)
        return err_set(err, CGNN_ERR_INPUT, "%s: no task '%s' in the global splits of %s (%s)", pb->global.dir,
                       s->task->name, pb->json_path, s->ds->dir);
    return 0;
}

/* local by default: the part's own splits, sliced among the W / P ranks sharing the part */
static int part_assign_seeds(graph_source *s, cgnn_err *err) {
    const graph_source_seeds sa = s->opt.seed_assignment;
    s->local_seeds = sa == GRAPH_SOURCE_SEEDS_LOCAL || sa == GRAPH_SOURCE_SEEDS_AUTO;
    if (!s->local_seeds) return 0;
    const int P = s->pb.num_parts;
    s->seed_group = s->d->rank / P, s->seed_groups = s->d->size / P;
    if (s->opt.seed_partition[0])
        log_info("trainerArgs.seed_partition_uri has no effect on a partitioned graph: its own parts assign the "
                 "seeds");
    return 0;
}

static void part_local_rows(const graph_source *s, ds_split_id split, graph_source_rows *out) {
    const ds_split *own = &s->task->splits[split];
    out->seeds = own->seeds, out->labels = own->labels, out->indexes = own->indexes, out->items = own->num_items;
}

/* the part's view: its per-edge-type indexes, the whole graph's sizes */
static int part_open_typed(graph_source *s, cgnn_err *err) {
    const partbook *pb = &s->pb;
    const int T = s->ds->num_node_types, K = s->ds->num_edge_types;
    int64_t num_edges[MINIBATCH_MAX_EDGE_TYPES];
    int src[MINIBATCH_MAX_EDGE_TYPES], dst[MINIBATCH_MAX_EDGE_TYPES];
    const csc_graph *views[MINIBATCH_MAX_EDGE_TYPES];
    for (int e = 0; e < K; e++) {
        num_edges[e] = pb->etype_map[(size_t)e * (size_t)(pb->num_parts + 1) + (size_t)pb->num_parts];
        src[e] = pb->etype_src[e];
        dst[e] = pb->etype_dst[e];
        views[e] = &pb->type_local[e];
    }
    typed_graph_init_part(&s->tg, T, pb->type_nodes, K, src, dst, views, pb->etype_max_in_degree, num_edges);
    return 0;
}

static const char *part_name(const graph_source *s) { return s->pb.json_path; }

/* this part's rows, each drawn as the whole table's row of its original id */
static const int64_t *part_table_rows(const graph_source *s, int64_t *n) {
    *n = s->pb.n_local;
    return s->pb.orig_of_local;
}

static void part_set_table(graph_source *s, const embedding_table *e) {
    s->part.table = e;
    s->part.shard = (embedding_shard){s->pb.num_parts, s->pb.part, s->pb.node_map};
}

/* this part's services (the layer itself was created collectively) */
static int part_serve(graph_source *s, const ds_feature *feat, const ds_feature *const *type_feat, cgnn_err *err) {
    const dist_ctx *d = s->d;
    if (dataset_is_typed(s->ds)) {
        if (part_rpc_init_typed(&s->part.pr, s->part.rpc, d->rank, d->size, &s->tg, &s->part.tspart, type_feat, err) !=
            0)
            return -1;
        s->part.have_pr = 1;
    } else {
        if (part_rpc_init(&s->part.pr, s->part.rpc, d->rank, d->size, &s->pb.local, &s->part.spart, feat, err) != 0)
            return -1;
        s->part.have_pr = 1;
        if (s->part.table) part_rpc_set_embedding(&s->part.pr, s->part.table);
        if (feat && s->opt.cache_policy != FEAT_CACHE_NONE) { /* filled by the load check, before any batch */
            feat_cache_init(&s->part.cache, &s->part.pr.feat_part, (size_t)feat->dim * npy_dtype_size(feat->array.dtype));
            s->part.have_cache = 1;
        }
    }
    dist_rpc_set_timeout(s->part.rpc, s->opt.rpc_timeout_s);
    if (dist_rpc_start(s->part.rpc, err) != 0) return -1;
    const char *stall = getenv("CGNN_TEST_RPC_STALL_S"); /* tests: this rank's server stops answering */
    if (stall && (s->opt.fault_rank < 0 || s->opt.fault_rank == d->rank)) dist_rpc_test_stall(s->part.rpc, atof(stall));
    return 0;
}

/* remote picks and rows; batches renamed to original ids on a typed part */
static void part_loader_config(const graph_source *s, loader_config *lc) {
    if (lc->typed) {
        int featured = 0;
        for (int k = 0; k < s->tg.num_node_types; k++) featured |= lc->type_feature[k] != NULL;
        lc->typed_part = &s->part.pr.tsampler;
        lc->typed_feat_part = featured ? &s->part.pr.tfeat_part : NULL;
        graph_source_type_maps(s, lc);
        return;
    }
    lc->part = &s->part.pr.sampler;
    lc->feat_part = lc->feature ? (s->part.have_cache ? &s->part.cache.view : &s->part.pr.feat_part) : NULL;
    lc->neg_map = s->pb.new_of_orig;
}

static int part_batch_capacity(graph_source *s, const sampler_config *sc, int64_t max_seeds, int64_t in_dim,
                               minibatch_capacity *cap, cgnn_err *err) {
    if (graph_source_partition_capacity(s, sc, max_seeds, in_dim, cap, err) != 0) return -1;
    if (s->part.table &&
        gather_part_scratch_init(&s->part.emb_scratch, s->pb.num_parts, cap->max_nodes[sc->num_layers], err) != 0)
        return -1;
    return 0;
}

/* the other parts' rows through EMB */
static int part_gather_embedding(graph_source *s, const embedding_table *e, minibatch *mb, int64_t col, cgnn_err *err) {
    part_rpc *pr = &s->part.pr;
    return gather_rows_part(mb->features + col, mb->feat_dim, &pr->emb_view, &pr->emb_part, &s->part.emb_scratch,
                            mb->input_nodes, mb->num_input_nodes, s->threads, err);
}

static int part_embedding_step(graph_source *s, embedding_table *e, const int64_t *ids, const float *grads, int64_t n,
                               int64_t stride, int64_t col, double lr, double divisor, cgnn_err *err) {
    return embedding_sparse_step_sharded(e, s->d, &s->part.shard, ids, grads, n, stride, col, lr, divisor, err);
}

static float *part_table_to_root(const graph_source *s, const float *rows, int64_t dim) {
    const partbook *pb = &s->pb;
    return part_gather_to_root(s->d, pb->num_parts, rows, pb->n_local, dim, pb->orig_of_new, pb->num_nodes);
}

/* every shard restored before rows are read again */
static void part_table_written(graph_source *s) {
    if (s->part.table) dist_barrier(s->d);
}

/* The cache of remote feature rows (every rank, after every rank's services started) by
 * opt.cache_policy: pre-samples this rank's training seeds (hotness), or all-gathers every part's
 * in-degrees (degree). Rank 0 logs its cache and the mean over the ranks. Returns 0 or -1 with
 * *err. */
static int build_cache(graph_source *s, const sampler_config *train, cgnn_err *err) {
    const graph_source_options *o = &s->opt;
    const dist_ctx *d = s->d;
    double rep_v[4] = {0}; /* rows, bytes, seconds, presampled batches */
    int rc = 0;
    if (s->part.have_cache) {
        feat_cache_plan pl;
        memset(&pl, 0, sizeof pl);
        pl.policy = o->cache_policy; /* (not none: there is a cache) */
        pl.ratio = o->cache_ratio;
        pl.budget = o->cache_budget;
        pl.local = s->g;
        pl.part = &s->part.pr.sampler;
        pl.sampler = *train;
        const ds_split *sp = s->local_seeds ? &s->task->splits[DS_SPLIT_TRAIN] : &s->gtask->splits[DS_SPLIT_TRAIN];
        pl.seeds = sp->seeds;
        pl.n_items = sp->present ? sp->num_items : 0;
        pl.width = sp->seed_width > 0 ? sp->seed_width : 1;
        pl.batch_size = o->batch_size;
        pl.max_batches = o->cache_presample_batches;
        pl.key = rng_key(o->seed ^ 0x50524553414d504cULL, (uint64_t)d->rank); /* never a training key */
        pl.nthreads = s->threads;
        int64_t *deg = NULL;
        /* every part's in-degrees (ranks >= P hold replicas); the adaptive policies need none */
        if (pl.policy != FEAT_CACHE_HALO && !feat_cache_policy_adaptive(pl.policy)) {
            const int W = d->size;
            int64_t *counts = cgnn_malloc((size_t)W * sizeof(int64_t));
            const int64_t mine = d->rank < s->pb.num_parts ? s->g->num_nodes : 0;
            int64_t *own = cgnn_malloc((size_t)(mine + 1) * sizeof(int64_t));
            for (int64_t v = 0; v < mine; v++) own[v] = csc_degree(s->g, v);
            const int64_t N = dist_allgather_counts(d, mine, counts);
            CGNN_CHECK(N == s->pb.num_nodes);
            deg = cgnn_malloc((size_t)(N + 1) * sizeof(int64_t));
            dist_allgatherv_i64(d, own, deg, counts);
            free(own);
            free(counts);
            pl.degrees = deg;
        }
        feat_cache_report rep;
        rc = feat_cache_build(&s->part.cache, &pl, &rep, err);
        free(deg);
        if (rc == 0) {
            rep_v[0] = (double)(rep.adaptive ? rep.capacity : rep.rows), rep_v[1] = rep.bytes, rep_v[2] = rep.seconds;
            rep_v[3] = (double)rep.presampled_batches;
            if (graph_source_is_root(s) && rep.adaptive)
                log_info("feature cache (%s, adaptive): %lld slots = %.1f%% of %lld nodes (%lld remote), %.1f MiB "
                         "(rows %.1f MiB + the policy's metadata), filled by the batches",
                         feat_cache_policy_name(pl.policy), (long long)rep.capacity,
                         100.0 * (double)rep.capacity / (double)s->pb.num_nodes, (long long)s->pb.num_nodes,
                         (long long)rep.candidates, rep.bytes / 1048576.0,
                         (double)rep.capacity * (double)s->part.cache.row_bytes / 1048576.0);
            else if (graph_source_is_root(s))
                log_info("feature cache (%s): %lld rows = %.1f%% of %lld nodes (capacity %lld, %lld remote nodes "
                         "ranked), %.1f MB, built in %.2f s%s",
                         feat_cache_policy_name(pl.policy), (long long)rep.rows,
                         100.0 * (double)rep.rows / (double)s->pb.num_nodes, (long long)s->pb.num_nodes,
                         (long long)rep.capacity, (long long)rep.candidates, rep.bytes / 1e6, rep.seconds,
                         rep.presampled_batches ? " (pre-sampled training batches)" : "");
        }
    }
    /* the mean over the ranks (every rank joins: the same collectives on every rank) */
    if (d->size > 1 && o->cache_policy != FEAT_CACHE_NONE) {
        double v[5] = {rep_v[0], rep_v[1], rep_v[2], rep_v[3], rc == 0};
        dist_allreduce_sum_f64(d, v, 5);
        if (graph_source_is_root(s) && v[0] > 0)
            log_info("feature cache: %.0f rows, %.1f MB, %.2f s per rank on average over %d ranks", v[0] / d->size,
                     v[1] / d->size / 1e6, v[2] / d->size, d->size);
    }
    return rc;
}

/* every rank has loaded its part before rank 0 touches any output; then the feature cache (every
 * rank's services run now; collective: the degree policy) */
static int part_load_check(graph_source *s, int failed, const sampler_config *train, cgnn_err *err) {
    if (graph_source_phase_check(s, failed, err) != 0) return -1;
    return dist_phase_failed(s->d, build_cache(s, train, err) != 0, err) ? -1 : 0;
}

/* a part's index differs per rank: the partitioning run's id stands for the edges */
static void part_identify(const graph_source *s, const ds_feature *feat, graph_source_ids *out) {
    out->layout = 1;
    out->edges = graph_source_edges_id(s, (uint64_t)out->partition, dataset_is_typed(s->ds));
    out->feature_rows = s->pb.num_nodes;
}

static void part_traffic_reset(graph_source *s) {
    dist_rpc_counters c0;
    dist_rpc_read_counters(s->part.rpc, DIST_RPC_ALL, 1, &c0); /* count the training only */
}

/* Rank 0: the remote traffic per batch built (training and validation, prefetched batches
 * included), per service, averaged over ranks, and rank 0's wait (sampler threads and consumer
 * together: it overlaps the step). Collective. */
static void part_log_traffic(graph_source *s, loader *const *loaders, int n_loaders) {
    static const int ids[3] = {PART_RPC_PICK, PART_RPC_FEAT, PART_RPC_EMB};
    static const char *const names[3] = {"sampling", "feature", "embedding"};
    const dist_ctx *d = s->d;
    double v[3][4]; /* requests, bytes out, bytes back, wait seconds */
    for (int k = 0; k < 3; k++) {
        dist_rpc_counters c;
        dist_rpc_read_counters(s->part.rpc, ids[k], 0, &c);
        v[k][0] = (double)c.req_sent, v[k][1] = (double)c.req_bytes_sent, v[k][2] = (double)c.rep_bytes_recv;
        v[k][3] = (double)c.wait_ns * 1e-9;
    }
    double per_rank[3][4];
    memcpy(per_rank, v, sizeof v);
    dist_allreduce_sum_f64(d, &v[0][0], 12);
    /* per batch built (training and validation, prefetched ones included: the counters count them) */
    int64_t built_here = 0;
    for (int i = 0; i < n_loaders; i++)
        if (loaders[i]) built_here += loader_batches_built(loaders[i]);
    double built = (double)built_here;
    dist_allreduce_sum_f64(d, &built, 1);
    double cache[2] = {0, 0}; /* remote rows asked of the feature cache, found in it */
    if (s->part.have_cache) {
        uint64_t asked, found;
        feat_cache_counters(&s->part.cache, 0, &asked, &found);
        cache[0] = (double)asked, cache[1] = (double)found;
    }
    dist_allreduce_sum_f64(d, cache, 2);
    if (!graph_source_is_root(s) || built <= 0) return;
    const double steps = built / (double)d->size, W = (double)d->size;
    char line[512];
    int len = snprintf(line, sizeof line, "partitioned graph: remote traffic per batch and rank (mean of %d ranks, "
                       "%.0f batches):", d->size, built);
    for (int k = 0; k < 3 && len < (int)sizeof line; k++)
        len += snprintf(line + len, sizeof line - (size_t)len, "%s %s %.1f requests, %.1f KB out, %.1f KB back",
                        k ? ";" : "", names[k], v[k][0] / steps / W, v[k][1] / steps / W / 1e3,
                        v[k][2] / steps / W / 1e3);
    log_info("%s; waiting on peers (sampler threads and the consumer, rank 0) %.2f ms per batch", line,
             1e3 * (per_rank[0][3] + per_rank[1][3] + per_rank[2][3]) / steps);
    if (cache[0] > 0) {
        const double rb = (double)s->part.cache.row_bytes;
        log_info("feature cache: hit rate %.1f%% of %.0f remote rows per batch and rank; remote feature bytes per "
                 "batch and rank %.1f KB without the cache, %.1f KB with it (%.1f KB saved, %.1f%%)",
                 100.0 * cache[1] / cache[0], cache[0] / steps / W, cache[0] * rb / steps / W / 1e3,
                 (cache[0] - cache[1]) * rb / steps / W / 1e3, cache[1] * rb / steps / W / 1e3,
                 100.0 * cache[1] / cache[0]);
        const feat_cache *fc = &s->part.cache;
        const int64_t held = fc->pol ? fc->slots : fc->n;
        log_info("feature cache (%s, %lld rows = %.1f%% of the remote rows, %.1f MiB): hit rate %.1f%% over %.0f "
                 "lookups (all ranks)",
                 feat_cache_policy_name(fc->policy), (long long)held,
                 100.0 * (double)held / (double)(s->pb.num_nodes > s->pb.n_local ? s->pb.num_nodes - s->pb.n_local : 1),
                 fc->bytes / 1048576.0, 100.0 * cache[1] / cache[0], cache[0]);
    }
}

/* collective: nobody asks any more */
static int part_stop(graph_source *s, cgnn_err *err) { return dist_rpc_stop(s->part.rpc, err); }

/* the loaders are stopped: no thread calls the rpc layer any more */
static void part_free(graph_source *s) {
    if (s->part.have_cache) feat_cache_free(&s->part.cache);
    if (s->part.have_pr) part_rpc_free(&s->part.pr);
    dist_rpc_free(s->part.rpc);
    gather_part_scratch_free(&s->part.emb_scratch);
}

const graph_source_ops source_part_ops = {
    .kind = GRAPH_SOURCE_PART,
    .sharded_table = 1,
    .load_begin = part_load_begin,
    .open = part_open,
    .set_task = part_set_task,
    .assign_seeds = part_assign_seeds,
    .open_typed = part_open_typed,
    .num_nodes = graph_source_partition_nodes,
    .num_edges = graph_source_partition_edges,
    .name = part_name,
    .table_rows = part_table_rows,
    .set_table = part_set_table,
    .serve = part_serve,
    .local_rows = part_local_rows,
    .loader_config = part_loader_config,
    .batch_capacity = part_batch_capacity,
    .prepare_batch = graph_source_partition_keys,
    .gather_embedding = part_gather_embedding,
    .embedding_step = part_embedding_step,
    .table_to_root = part_table_to_root,
    .table_written = part_table_written,
    .load_check = part_load_check,
    .identify = part_identify,
    .traffic_reset = part_traffic_reset,
    .log_traffic = part_log_traffic,
    .stop = part_stop,
    .free = part_free,
};
