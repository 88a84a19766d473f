/* source_store.c — a compute rank of server-client mode (graph_source.h, "store"; the job's layout
 * is train/graph_store.h): it holds no part, only the partition JSON, the whole splits and the id
 * maps; the storage ranks hold the parts and build every batch (BATCH, sample/batch_rpc.h), this
 * rank asking the ones its seed assignment routes it to. */
#include <stdlib.h>
#include <string.h>

#include "source/source_impl.h"
#include "util/log.h"

/* Opens the partition JSON, the whole splits and the id maps (no part: the storage ranks hold
 * them) and describes the storage ranks' feature rows. */
static int store_open(graph_source *s, cgnn_err *err) {
    partbook *pb = &s->pb;
    const graph_store_client *gs = s->store.gs;
    if (partbook_open_client(pb, s->opt.dataset_path, s->threads, err) != 0)
        return err_prefix(err, "%s: sharedConfig.preprocessedMetadataUri: ", s->opt.config_file);
    if (pb->num_parts != gs->parts_per_storage * gs->num_storage)
        return err_set(err, CGNN_ERR_INPUT, "%s: %d parts, but the storage ranks hold %d x %d (rewritten while the "
                       "job started?)", pb->json_path, pb->num_parts, gs->num_storage, gs->parts_per_storage);
    s->ds = &pb->global;
    s->g = NULL;
    s->store.shape.num_nodes = pb->num_nodes, s->store.shape.num_edges = pb->num_edges;
    memset(&s->store.feat, 0, sizeof s->store.feat);
    if (pb->typed != gs->typed)
        return err_set(err, CGNN_ERR_INPUT, "%s: the storage ranks serve a %s graph, this partition is %s",
                       pb->json_path, gs->typed ? "typed" : "homogeneous", pb->typed ? "typed" : "homogeneous");
    if (pb->typed) { /* each type's rows: shape and dtype only */
        if (graph_source_check_type_counts(pb, err) != 0) return -1;
        for (int k = 0; k < pb->num_node_types; k++) {
            ds_feature *f = &s->store.tfeat[k];
            memset(f, 0, sizeof *f);
            if (gs->type_feat_dim[k] <= 0) continue;
            f->domain = DS_DOMAIN_NODE;
            f->type = k;
            snprintf(f->name, sizeof f->name, "feat");
            f->array.dtype = (npy_dtype)gs->type_feat_dtype[k];
            f->array.ndim = 2;
            f->array.shape[0] = pb->type_nodes[k];
            f->array.shape[1] = gs->type_feat_dim[k];
            f->rows = pb->type_nodes[k];
            f->dim = gs->type_feat_dim[k];
        }
        return 0;
    }
    if (gs->has_feat) { /* shape and dtype only: the rows stay on the storage ranks */
        ds_feature *f = &s->store.feat;
        f->domain = DS_DOMAIN_NODE;
        snprintf(f->name, sizeof f->name, "feat");
        f->array.dtype = (npy_dtype)gs->feat_dtype;
        f->array.ndim = 2;
        f->array.shape[0] = pb->num_nodes;
        f->array.shape[1] = gs->feat_dim;
        f->rows = pb->num_nodes;
        f->dim = gs->feat_dim;
    }
    return 0;
}

/* After the seed assignment is known: which storage ranks this compute rank asks for its batches
 * (contiguous ranges, as GiGL's graph-store sharding, GiGL#440):
 *   local assignment: the storage ranks holding the parts whose seeds this rank trains on
 *     (one, when the compute ranks are a multiple of the parts);
 *   global: compute rank c of T takes the storage ranks overlapping [c S / T, (c + 1) S / T).
 * Batch b goes to the b % n-th of them. */
static int route(graph_source *s, int part_lo, int part_hi, cgnn_err *err) {
    const graph_store_client *gs = s->store.gs;
    const int S = gs->num_storage, T = s->d->size, c = s->d->rank, k = gs->parts_per_storage;
    int lo, hi; /* storage indices [lo, hi) */
    if (s->local_seeds) {
        lo = part_lo / k;
        hi = (part_hi - 1) / k + 1;
    } else {
        lo = (int)((int64_t)c * S / T);
        hi = (int)(((int64_t)(c + 1) * S + T - 1) / T);
        if (hi <= lo) hi = lo + 1;
    }
    int peers[BATCH_CLIENT_MAX_PEERS] = {0}, index[BATCH_CLIENT_MAX_PEERS] = {0}, n = 0;
    for (int i = lo; i < hi && n < BATCH_CLIENT_MAX_PEERS; i++) {
        peers[n] = gs->first_storage + i;
        index[n++] = i;
    }
    const partbook *pb = &s->pb;
    if (batch_client_init(&s->store.bclient, gs->rpc, peers, index, n, pb->num_nodes, pb->num_edges,
                          pb->max_in_degree, gs->has_feat ? gs->feat_dtype : -1, err) != 0)
        return -1;
    s->store.have_bclient = 1;
    log_debug("compute rank %d: batches from storage rank%s %d-%d", c, n == 1 ? "" : "s", lo, hi - 1);
    return 0;
}

/* local (the default when it fits): the compute ranks take the parts' seeds as worker mode's ranks
 * would — with T a multiple of P, rank c the seeds of part c % P, slice c / P of T / P (so the
 * batches, and the model, are worker mode's on T ranks); with P a multiple of T, rank c the seeds
 * of parts [c P / T, (c + 1) P / T); the rows are the whole splits' rows whose anchor those parts
 * own, in row order (= the parts' own splits). global: every compute rank slices the whole split. */
static int store_assign_seeds(graph_source *s, cgnn_err *err) {
    const graph_source_seeds sa = s->opt.seed_assignment;
    const partbook *pb = &s->pb;
    const int P = pb->num_parts, T = s->d->size, c = s->d->rank;
    const int fits = T % P == 0 || P % T == 0;
    s->local_seeds = sa == GRAPH_SOURCE_SEEDS_LOCAL || (sa == GRAPH_SOURCE_SEEDS_AUTO && fits);
    if (s->opt.seed_partition[0])
        log_info("trainerArgs.seed_partition_uri has no effect in server-client mode: the partition assigns the seeds");
    if (!s->local_seeds) {
        if (sa == GRAPH_SOURCE_SEEDS_AUTO && c == 0)
            log_info("seed assignment: global (%d compute ranks and %d parts: neither divides the other)", T, P);
        return route(s, 0, P, err);
    }
    if (!fits)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.seed_assignment: local with %d compute ranks on %d parts: the "
                       "compute ranks must be a multiple or a divisor of the parts (or use seed_assignment: global)",
                       s->opt.config_file, T, P);
    int plo, phi;
    if (T % P == 0) {
        plo = c % P, phi = plo + 1;
        s->seed_group = c / P, s->seed_groups = T / P;
    } else {
        plo = (int)((int64_t)c * P / T), phi = (int)((int64_t)(c + 1) * P / T);
        s->seed_group = 0, s->seed_groups = 1;
    }
    const int64_t *range = pb->node_map;
    if (pb->typed) { /* per-type ids of the seeds' type (LP: the anchors', column 0) */
        const int st = s->task->kind == DS_TASK_LINK_PREDICTION ? pb->etype_src[s->task->type] : s->task->type;
        range = pb->type_map + (size_t)st * (size_t)(P + 1);
    }
    graph_source_select_rows(s, NULL, range[plo], range[phi]); /* the whole splits are in new ids */
    return route(s, plo, phi, err);
}

/* the whole graph's shape only: the storage ranks sample */
static int store_open_typed(graph_source *s, cgnn_err *err) {
    const partbook *pb = &s->pb;
    const int T = s->ds->num_node_types, K = s->ds->num_edge_types;
    int64_t num_edges[MINIBATCH_MAX_EDGE_TYPES];
    for (int e = 0; e < K; e++)
        num_edges[e] = pb->etype_map[(size_t)e * (size_t)(pb->num_parts + 1) + (size_t)pb->num_parts];
    typed_graph_init_shape(&s->tg, T, pb->type_nodes, K, pb->etype_src, pb->etype_dst, pb->etype_max_in_degree,
                           num_edges);
    batch_client_set_typed(&s->store.bclient, &s->tg, s->store.gs->type_feat_dim, s->store.gs->type_feat_dtype);
    return 0;
}

/* the storage ranks' rows: width and dtype */
static const ds_feature *store_feature(const graph_source *s, int type) {
    if (type >= 0) return s->store.tfeat[type].dim > 0 ? &s->store.tfeat[type] : NULL;
    if (s->store.feat.dim > 0) return &s->store.feat;
    for (int i = 0; i < s->ds->num_features; i++) /* (the whole splits' dataset holds no features) */
        if (s->ds->features[i].domain == DS_DOMAIN_NODE) return &s->ds->features[i];
    return NULL;
}

static int store_producers(const graph_source *s, int workers, const char **what) {
    *what = "batches prefetched from the storage ranks";
    return (int)s->opt.prefetch_size;
}

/* the whole table here, rows in new ids, each drawn as its original id's row */
static const int64_t *store_table_rows(const graph_source *s, int64_t *n) {
    *n = s->pb.num_nodes;
    return s->pb.orig_of_new;
}

/* a storage rank builds each batch; prefetch_size of them in flight (GLT's) */
static void store_loader_config(const graph_source *s, loader_config *lc) {
    if (lc->typed) { /* the loader renames the storage rank's batches to original ids */
        lc->typed_part = NULL;
        lc->typed_feat_part = NULL;
        graph_source_type_maps(s, lc);
    }
    lc->remote = &s->store.bclient.remote;
    lc->neg_map = s->pb.new_of_orig;
    lc->num_workers = (int)s->opt.prefetch_size;
    lc->queue_depth = (int)s->opt.prefetch_size + 1;
    lc->gather_threads = 1;
}

/* the whole table in new ids: rows to their original ids */
static float *store_table_to_root(const graph_source *s, const float *rows, int64_t dim) {
    if (!graph_source_is_root(s)) return NULL;
    const int64_t N = s->pb.num_nodes, D = dim;
    const int64_t *orig = s->pb.orig_of_new;
    float *full = cgnn_malloc((size_t)(N * D) * sizeof(float) + 1);
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < N; v++) memcpy(full + orig[v] * D, rows + v * D, (size_t)D * sizeof(float));
    return full;
}

/* every rank has opened the partition before rank 0 touches any output */
static int store_load_check(graph_source *s, int failed, const sampler_config *train, cgnn_err *err) {
    return graph_source_phase_check(s, failed, err);
}

/* no graph here: the partitioning run's id stands for the edges */
static void store_identify(const graph_source *s, const ds_feature *feat, graph_source_ids *out) {
    out->layout = 2;
    out->edges = graph_source_edges_id(s, (uint64_t)out->partition, 0);
    out->feature_rows = s->pb.num_nodes;
}

static const csc_graph *store_shape(const graph_source *s) { return &s->store.shape; }

/* the embedding table's rows are new ids of this partition; the seeds its assignment */
static int store_state_fields(const graph_source *s, const char **keys, const char **vals) {
    keys[0] = "partition", vals[0] = s->pb.partition_id;
    keys[1] = "seed_assignment", vals[1] = s->local_seeds ? "local" : "global";
    return 2;
}

static void store_free(graph_source *s) {
    if (s->store.have_bclient) batch_client_free(&s->store.bclient);
}

const graph_source_ops source_store_ops = {
    .kind = GRAPH_SOURCE_STORE,
    .open = store_open,
    .assign_seeds = store_assign_seeds,
    .open_typed = store_open_typed,
    .feature = store_feature,
    .num_nodes = graph_source_partition_nodes,
    .num_edges = graph_source_partition_edges,
    .producers = store_producers,
    .table_rows = store_table_rows,
    .loader_config = store_loader_config,
    .batch_capacity = graph_source_partition_capacity,
    .prepare_batch = graph_source_partition_keys,
    .table_to_root = store_table_to_root,
    .load_check = store_load_check,
    .identify = store_identify,
    .shape = store_shape,
    .state_fields = store_state_fields,
    .free = store_free,
};
