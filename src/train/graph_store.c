/* graph_store.c — server-client mode: roles, the storage ranks' job, the handshakes and the
 * end of the job; see graph_store.h. */
#include "train/graph_store.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "graph/partbook.h"
#include "sample/batch_rpc.h"
#include "sample/feat_cache.h"
#include "sample/part_rpc.h"
#include "sample/sample_weights.h"
#include "train/outputs.h"
#include "util/log.h"
#include "util/rng.h"
#include "util/timer.h"

int graph_store_layout_of(const resource_config *res, int world_size, int world_rank, graph_store_layout *out,
                          cgnn_err *err) {
    memset(out, 0, sizeof *out);
    CGNN_CHECK(res->graph_store);
    const int S = res->storage_replicas;
    const int per = res->compute_local_world_size > 0 ? res->compute_local_world_size : 1;
    const int64_t T = (int64_t)res->compute_replicas * per;
    if ((int64_t)S + T != world_size)
        return err_set(err, CGNN_ERR_INPUT,
                       "resource config %s: trainer_resource_config.vertex_ai_graph_store_trainer_config: "
                       "graph_store_pool.num_replicas %d + compute ranks %lld (compute_pool.num_replicas %d x "
                       "compute_cluster_local_world_size %d) = %lld ranks, but the job runs %d process%s: launch "
                       "mpirun -np %lld",
                       res->file, S, (long long)T, res->compute_replicas, per, (long long)(S + T), world_size,
                       world_size == 1 ? "" : "es", (long long)(S + T));
    if (res->num_replicas > 0 && res->num_replicas != world_size)
        return err_set(err, CGNN_ERR_INPUT,
                       "resource config %s: mpi_trainer_config.num_replicas is %d but the graph-store pools make %d "
                       "ranks", res->file, res->num_replicas, world_size);
    out->num_storage = S;
    out->num_compute = (int)T;
    out->storage = world_rank >= T;
    out->index = out->storage ? world_rank - (int)T : world_rank;
    return 0;
}

/* ---- the storage rank ------------------------------------------------------------------ */

typedef struct storage {
    const task_config *tc;
    const dist_ctx *world, *group;
    const graph_store_layout *lay;
    int threads;
    int P, k, first_part;         /* parts [first_part, first_part + k) */
    partbook *pbs;                /* (k) */
    csc_graph merged;             /* k > 1: the parts' indexes concatenated */
    const csc_graph *local;
    /* trainerArgs.sampling_weight: per edge type (homogeneous [0]) the draw weights of the
     * range's index (local / tlocal[e]: the parts' concatenated) in its order, owned; NULL: uniform */
    float *weights[MINIBATCH_MAX_EDGE_TYPES];
    ds_feature mfeat;             /* k > 1: the parts' feature rows concatenated */
    void *mfeat_rows;
    const ds_feature *feat;
    int64_t *group_start;         /* (S + 1) the storage ranks' id ranges */
    int *peers;                   /* (S) their world ranks */
    sampler_part spart;
    part_rpc pr;
    int have_pr;
    feat_cache cache;
    int have_cache;
    batch_server *bs;
    /* a typed partition: the range's per-edge-type indexes and per-type rows (k > 1: the parts'
     * concatenated), the typed view, its per-type ranges and draw keys */
    int typed;
    csc_graph tmerged[MINIBATCH_MAX_EDGE_TYPES];
    const csc_graph *tlocal[MINIBATCH_MAX_EDGE_TYPES];
    ds_feature tmfeat[MINIBATCH_MAX_NODE_TYPES];
    void *tmfeat_rows[MINIBATCH_MAX_NODE_TYPES];
    const ds_feature *tfeat[MINIBATCH_MAX_NODE_TYPES];
    int64_t *type_group_start;    /* (T * (S + 1)) the storage ranks' per-type ranges */
    typed_graph tg;
    typed_sampler_part tspart;
    int64_t *train_seeds;         /* the parts' training seeds (pre-sampling), concatenated */
    int64_t n_train;
    int train_width;
    outguard guard; /* its inputs (parts, configs) against the job's outputs */
    int have_guard;
} storage;

/* The feature rows the storage ranks serve: trainerArgs.node_feature (dataset_node_feature), as
 * the trainer reads them on a whole graph. */
static const ds_feature *node_feature(const dataset *ds, const task_config *tc) {
    return dataset_node_feature(ds, 0, tc->args.node_feature);
}

/* Node type t's feature rows of a typed part's dataset, or NULL (featureless). */
static const ds_feature *type_feature(const dataset *ds, int t, const task_config *tc) {
    return dataset_node_feature(ds, t, tc->args.node_feature);
}

/* storage_open on a typed partition: per node type, the k parts' ranges are one contiguous range
 * of per-type new ids; per edge type the parts' indexes (rows: own nodes of its dst type) and per
 * type the parts' feature rows are concatenated (k > 1), and the range is one "part" of S. The
 * feature cache is homogeneous only: a typed job asking for one is refused (exit 2). */
static int storage_open_typed(storage *st, cgnn_err *err) {
    const task_config *tc = st->tc;
    const int S = st->lay->num_storage, s = st->lay->index, P = st->P, k = st->k;
    const partbook *pb = &st->pbs[0];
    const int T = pb->num_node_types, K = pb->num_edge_types;
    st->typed = 1;
    if (T > MINIBATCH_MAX_NODE_TYPES || K > MINIBATCH_MAX_EDGE_TYPES)
        return err_set(err, CGNN_ERR_INPUT, "%s: %d node types and %d edge types; at most %d and %d are supported",
                       pb->json_path, T, K, MINIBATCH_MAX_NODE_TYPES, MINIBATCH_MAX_EDGE_TYPES);
    if (tc->args.cache_policy != CACHE_POLICY_NONE)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.cache_policy: the storage ranks' feature cache holds the rows of "
                       "one homogeneous feature (one id space, one width and dtype), but %s is typed; train it with "
                       "cache_policy: none (the batches are the same bits either way)",
                       tc->file, tc->dataset_path);
    st->peers = cgnn_malloc((size_t)S * sizeof(int));
    for (int g = 0; g < S; g++) st->peers[g] = st->lay->num_compute + g;
    st->type_group_start = cgnn_malloc((size_t)T * (size_t)(S + 1) * sizeof(int64_t));
    for (int t = 0; t < T; t++) {
        const int64_t *tm = pb->type_map + (size_t)t * (size_t)(P + 1);
        for (int g = 0; g <= S; g++) st->type_group_start[(size_t)t * (size_t)(S + 1) + (size_t)g] = tm[g * k];
    }
    int64_t num_edges[MINIBATCH_MAX_EDGE_TYPES];
    for (int e = 0; e < K; e++) {
        num_edges[e] = pb->etype_map[(size_t)e * (size_t)(P + 1) + (size_t)P];
        if (k == 1) {
            st->tlocal[e] = &pb->type_local[e];
            continue;
        }
        int64_t rows = 0, E = 0;
        for (int i = 0; i < k; i++) rows += st->pbs[i].type_local[e].num_nodes, E += st->pbs[i].type_local[e].num_edges;
        const csc_graph *g0 = &pb->type_local[e];
        csc_graph *m = &st->tmerged[e];
        memset(m, 0, sizeof *m);
        m->num_nodes = rows;
        m->num_edges = E;
        m->first_node = g0->first_node;
        m->num_src_nodes = g0->num_src_nodes;
        m->index_bytes = g0->index_bytes;
        m->owned_indptr = cgnn_malloc((size_t)(rows + 1) * sizeof(int64_t));
        m->owned_indices = cgnn_malloc((size_t)(E + 1) * (size_t)m->index_bytes);
        int64_t row = 0, eoff = 0;
        for (int i = 0; i < k; i++) {
            const csc_graph *g = &st->pbs[i].type_local[e];
            CGNN_CHECK(g->index_bytes == m->index_bytes && g->first_node == m->first_node + row);
            for (int64_t v = 0; v < g->num_nodes; v++) m->owned_indptr[row + v] = eoff + g->indptr[v];
            memcpy((char *)m->owned_indices + (size_t)eoff * (size_t)m->index_bytes, g->indices,
                   (size_t)g->num_edges * (size_t)m->index_bytes);
            row += g->num_nodes;
            eoff += g->num_edges;
        }
        m->owned_indptr[row] = eoff;
        m->indptr = m->owned_indptr;
        m->indices = m->owned_indices;
        st->tlocal[e] = m;
    }
    for (int t = 0; t < T; t++) {
        const ds_feature *f0 = type_feature(&pb->ds, t, st->tc);
        for (int i = 1; i < k; i++) {
            const ds_feature *f = type_feature(&st->pbs[i].ds, t, st->tc);
            if (!f != !f0 || (f && (f->dim != f0->dim || f->array.dtype != f0->array.dtype)))
                return err_set(err, CGNN_ERR_INPUT, "%s: part %d's features of node type %s differ from part %d's",
                               tc->dataset_path, st->first_part + i, pb->ntype_names[t], st->first_part);
        }
        if (!f0 || k == 1) {
            st->tfeat[t] = f0;
            continue;
        }
        const size_t rb = (size_t)f0->dim * npy_dtype_size(f0->array.dtype);
        const int64_t lo = st->type_group_start[(size_t)t * (size_t)(S + 1) + (size_t)s],
                      hi = st->type_group_start[(size_t)t * (size_t)(S + 1) + (size_t)s + 1];
        st->tmfeat_rows[t] = cgnn_malloc((size_t)(hi - lo) * rb + 1);
        int64_t r = 0;
        for (int i = 0; i < k; i++) {
            const ds_feature *f = type_feature(&st->pbs[i].ds, t, st->tc);
            memcpy((char *)st->tmfeat_rows[t] + (size_t)r * rb, f->array.data, (size_t)f->rows * rb);
            r += f->rows;
        }
        CGNN_CHECK(r == hi - lo);
        st->tmfeat[t] = *f0;
        st->tmfeat[t].owned = NULL;
        st->tmfeat[t].array.data = st->tmfeat_rows[t];
        st->tmfeat[t].array.shape[0] = hi - lo;
        st->tmfeat[t].array.count = (hi - lo) * f0->dim;
        st->tmfeat[t].rows = hi - lo;
        st->tfeat[t] = &st->tmfeat[t];
    }
    typed_graph_init_part(&st->tg, T, pb->type_nodes, K, pb->etype_src, pb->etype_dst, st->tlocal,
                          pb->etype_max_in_degree, num_edges);
    memset(&st->tspart, 0, sizeof st->tspart);
    st->tspart.num_parts = S;
    st->tspart.part = s;
    for (int t = 0; t < T; t++) {
        st->tspart.type_start[t] = st->type_group_start + (size_t)t * (size_t)(S + 1);
        st->tspart.key_ids[t] = pb->type_orig_of_new[t];
    }
    return 0;
}

/* Opens parts [first, first + k) and the view of them as one contiguous range. */
/* trainerArgs.sampling_weight on a storage rank: per edge type (homogeneous: one), each of its
 * parts' edge feature into that part's index order (sample/sample_weights.h), concatenated as the
 * merged index is, into st->weights[e]: the draw weights of the batches it builds and the PICKs
 * it answers (st->spart / st->tspart weights). A typed edge type without the feature samples
 * uniformly; none with it is CGNN_ERR_INPUT. */
static int storage_weights(storage *st, cgnn_err *err) {
    const task_config *tc = st->tc;
    const char *name = tc->args.sampling_weight;
    const int K = st->typed ? st->pbs[0].num_edge_types : 1;
    int found = 0;
    for (int e = 0; e < K; e++) {
        if (st->typed && !dataset_find_feature(&st->pbs[0].ds, DS_DOMAIN_EDGE, e, name)) continue;
        const csc_graph *merged = st->typed ? st->tlocal[e] : st->local;
        st->weights[e] = cgnn_malloc((size_t)(merged->num_edges + 1) * sizeof(float));
        int64_t off = 0;
        for (int i = 0; i < st->k; i++) {
            const csc_graph *g = st->typed ? &st->pbs[i].type_local[e] : &st->pbs[i].local;
            float *w = NULL;
            if (sample_weights_load(&st->pbs[i].ds, e, g, name, &w, NULL, err) != 0)
                return err_prefix(err, "%s: trainerConfig.trainerArgs.sampling_weight: ", tc->file);
            memcpy(st->weights[e] + off, w, (size_t)g->num_edges * sizeof(float));
            off += g->num_edges;
            free(w);
        }
        CGNN_CHECK(off == merged->num_edges);
        if (st->typed) st->tspart.weights[e] = st->weights[e];
        else st->spart.weights = st->weights[e];
        found++;
    }
    if (!found)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.sampling_weight: no edge type of %s has an edge feature '%s' "
                       "(feature_data entries with domain: edge) to take the sampling weights from",
                       tc->file, tc->dataset_path, name);
    return 0;
}

static int storage_open(storage *st, cgnn_err *err) {
    const task_config *tc = st->tc;
    const int S = st->lay->num_storage, s = st->lay->index;
    partbook head;
    if (partbook_read_json(&head, tc->dataset_path, err) != 0)
        return err_prefix(err, "%s: sharedConfig.preprocessedMetadataUri: ", tc->file);
    st->P = head.num_parts;
    partbook_close(&head);
    if (st->P < S || st->P % S != 0)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: the graph has %d parts but the job has %d storage ranks (graph_store_pool.num_replicas): "
                       "every storage rank holds the same number of parts, so partition into a multiple of %d parts",
                       tc->dataset_path, st->P, S, S);
    st->k = st->P / S;
    st->first_part = s * st->k;
    st->pbs = cgnn_calloc((size_t)st->k, sizeof *st->pbs);
    for (int i = 0; i < st->k; i++) {
        st->pbs[i].part = -1;
        if (partbook_open(&st->pbs[i], tc->dataset_path, st->first_part + i, st->threads, err) != 0) return -1;
    }
    if (st->pbs[0].typed) {
        if (storage_open_typed(st, err) != 0) return -1;
        return tc->args.sampling_weight[0] ? storage_weights(st, err) : 0;
    }
    const partbook *pb = &st->pbs[0];
    st->group_start = cgnn_malloc((size_t)(S + 1) * sizeof(int64_t));
    st->peers = cgnn_malloc((size_t)S * sizeof(int));
    for (int g = 0; g <= S; g++) st->group_start[g] = pb->node_map[g * st->k];
    for (int g = 0; g < S; g++) st->peers[g] = st->lay->num_compute + g;
    const int64_t lo = st->group_start[s], hi = st->group_start[s + 1];
    /* the index and the feature rows of the whole range */
    if (st->k == 1) {
        st->local = &st->pbs[0].local;
        st->feat = node_feature(&st->pbs[0].ds, st->tc);
    } else {
        int64_t E = 0;
        for (int i = 0; i < st->k; i++) E += st->pbs[i].local.num_edges;
        csc_graph *m = &st->merged;
        memset(m, 0, sizeof *m);
        m->num_nodes = hi - lo;
        m->num_edges = E;
        m->first_node = lo;
        m->num_src_nodes = pb->num_nodes;
        m->index_bytes = pb->local.index_bytes;
        m->owned_indptr = cgnn_malloc((size_t)(m->num_nodes + 1) * sizeof(int64_t));
        m->owned_indices = cgnn_malloc((size_t)(E + 1) * (size_t)m->index_bytes);
        int64_t row = 0, eoff = 0;
        for (int i = 0; i < st->k; i++) {
            const csc_graph *g = &st->pbs[i].local;
            CGNN_CHECK(g->index_bytes == m->index_bytes && g->first_node == lo + row);
            for (int64_t v = 0; v < g->num_nodes; v++) m->owned_indptr[row + v] = eoff + g->indptr[v];
            memcpy((char *)m->owned_indices + (size_t)eoff * (size_t)m->index_bytes, g->indices,
                   (size_t)g->num_edges * (size_t)m->index_bytes);
            row += g->num_nodes;
            eoff += g->num_edges;
        }
        m->owned_indptr[row] = eoff;
        m->indptr = m->owned_indptr;
        m->indices = m->owned_indices;
        st->local = m;
        const ds_feature *f0 = node_feature(&st->pbs[0].ds, st->tc);
        if (f0) {
            const size_t rb = (size_t)f0->dim * npy_dtype_size(f0->array.dtype);
            st->mfeat_rows = cgnn_malloc((size_t)(hi - lo) * rb + 1);
            int64_t r = 0;
            for (int i = 0; i < st->k; i++) {
                const ds_feature *f = node_feature(&st->pbs[i].ds, st->tc);
                if (!f || f->dim != f0->dim || f->array.dtype != f0->array.dtype)
                    return err_set(err, CGNN_ERR_INPUT, "%s: part %d's node features differ from part %d's",
                                   tc->dataset_path, st->first_part + i, st->first_part);
                memcpy((char *)st->mfeat_rows + (size_t)r * rb, f->array.data, (size_t)f->rows * rb);
                r += f->rows;
            }
            st->mfeat = *f0;
            st->mfeat.owned = NULL;
            st->mfeat.array.data = st->mfeat_rows;
            st->mfeat.array.shape[0] = hi - lo;
            st->mfeat.array.count = (hi - lo) * f0->dim;
            st->mfeat.rows = hi - lo;
            st->feat = &st->mfeat;
        }
    }
    st->spart = (sampler_part){S, s, st->group_start, pb->orig_of_new + lo, pb->num_nodes, pb->num_edges,
                               pb->max_in_degree, NULL, NULL, NULL};
    if (tc->args.sampling_weight[0] && storage_weights(st, err) != 0) return -1;
    /* the parts' training seeds, for pre-sampling the cache */
    const ds_task_kind want = tc->task == TASK_LINK_PREDICTION ? DS_TASK_LINK_PREDICTION : DS_TASK_NODE_CLASSIFICATION;
    for (int i = 0; i < st->k; i++) {
        const dataset *ds = &st->pbs[i].ds;
        for (int t = 0; t < ds->num_tasks; t++) {
            const ds_split *sp = &ds->tasks[t].splits[DS_SPLIT_TRAIN];
            if (ds->tasks[t].kind != want || !sp->present) continue;
            st->train_width = sp->seed_width;
            st->train_seeds = cgnn_realloc(st->train_seeds, (size_t)((st->n_train + sp->num_items) * sp->seed_width + 1) *
                                                                sizeof(int64_t));
            memcpy(st->train_seeds + st->n_train * sp->seed_width, sp->seeds,
                   (size_t)(sp->num_items * sp->seed_width) * sizeof(int64_t));
            st->n_train += sp->num_items;
            break;
        }
    }
    return 0;
}

static void storage_free(storage *st) {
    batch_server_free(st->bs);
    if (st->have_cache) feat_cache_free(&st->cache);
    if (st->have_pr) part_rpc_free(&st->pr);
    csc_free(&st->merged);
    for (int e = 0; e < MINIBATCH_MAX_EDGE_TYPES; e++) free(st->weights[e]);
    free(st->mfeat_rows);
    for (int e = 0; e < MINIBATCH_MAX_EDGE_TYPES; e++) csc_free(&st->tmerged[e]);
    for (int t = 0; t < MINIBATCH_MAX_NODE_TYPES; t++) free(st->tmfeat_rows[t]);
    free(st->type_group_start);
    typed_graph_free(&st->tg);
    for (int i = 0; st->pbs && i < st->k; i++) partbook_close(&st->pbs[i]);
    free(st->pbs);
    free(st->group_start);
    free(st->peers);
    free(st->train_seeds);
    if (st->have_guard) outguard_free(&st->guard);
}

feat_cache_policy graph_store_cache_policy(int p) {
    switch (p) {
    case CACHE_POLICY_HOTNESS: return FEAT_CACHE_HOTNESS;
    case CACHE_POLICY_DEGREE: return FEAT_CACHE_DEGREE;
    case CACHE_POLICY_HALO: return FEAT_CACHE_HALO;
    case CACHE_POLICY_SIEVE: return FEAT_CACHE_SIEVE;
    case CACHE_POLICY_S3FIFO: return FEAT_CACHE_S3FIFO;
    case CACHE_POLICY_LRU: return FEAT_CACHE_LRU;
    case CACHE_POLICY_CLOCK: return FEAT_CACHE_CLOCK;
    default: return FEAT_CACHE_NONE;
    }
}

/* The storage ranks' feature cache (every storage rank: the degree policy all-gathers over them). */
static int storage_cache(storage *st, double report[5], cgnn_err *err) {
    const trainer_args *a = &st->tc->args;
    memset(report, 0, 5 * sizeof(double));
    if (!st->have_cache || a->cache_policy == CACHE_POLICY_NONE) return 0;
    feat_cache_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.policy = graph_store_cache_policy(a->cache_policy);
    pl.ratio = a->cache_ratio;
    pl.budget = a->cache_memory_budget;
    pl.local = st->local;
    pl.part = &st->pr.sampler;
    pl.sampler.num_layers = a->num_layers;
    for (int h = 0; h < a->num_layers; h++) pl.sampler.fanouts[h] = a->fanouts[h];
    pl.sampler.replace = a->replace;
    pl.seeds = st->train_seeds;
    pl.n_items = st->n_train;
    pl.width = st->train_width > 0 ? st->train_width : 1;
    pl.batch_size = a->batch_size;
    pl.max_batches = a->cache_presample_batches;
    pl.key = rng_key(a->seed ^ 0x50524553414d504cULL, (uint64_t)st->lay->index);
    pl.nthreads = st->threads;
    int64_t *deg = NULL;
    int rc = 0;
    /* the whole graph's in-degrees, range by range (degree; hotness: ties; adaptive: none) */
    if (pl.policy != FEAT_CACHE_HALO && !feat_cache_policy_adaptive(pl.policy)) {
        const int S = st->lay->num_storage;
        int64_t *counts = cgnn_malloc((size_t)S * sizeof(int64_t));
        int64_t *mine = cgnn_malloc((size_t)(st->local->num_nodes + 1) * sizeof(int64_t));
        for (int64_t v = 0; v < st->local->num_nodes; v++) mine[v] = csc_degree(st->local, v);
        const int64_t N = dist_allgather_counts(st->group, st->local->num_nodes, counts);
        CGNN_CHECK(N == st->spart.num_nodes);
        deg = cgnn_malloc((size_t)(N + 1) * sizeof(int64_t));
        dist_allgatherv_i64(st->group, mine, deg, counts);
        free(mine);
        free(counts);
        pl.degrees = deg;
    }
    feat_cache_report rep;
    rc = feat_cache_build(&st->cache, &pl, &rep, err);
    free(deg);
    if (rc != 0) return err_prefix(err, "storage rank %d: the feature cache: ", st->lay->index);
    report[0] = (double)(rep.adaptive ? rep.capacity : rep.rows), report[1] = rep.bytes, report[2] = rep.seconds;
    report[3] = (double)rep.presampled_batches, report[4] = (double)rep.candidates;
    return 0;
}

/* ---- the job ------------------------------------------------------------------------------ */

/* The counters summed over the world at the end (doubles). */
enum {
    GS_BATCHES, GS_FAILED, GS_SAMPLE_S, GS_GATHER_S, GS_INPUT_NODES, /* storage: batch_server */
    GS_PICK_REQ, GS_PICK_OUT, GS_PICK_BACK, GS_FEAT_REQ, GS_FEAT_OUT, GS_FEAT_BACK, /* storage <-> storage */
    GS_CACHE_ASKED, GS_CACHE_FOUND, GS_ROW_BYTES,                       /* storage: the cache */
    GS_BATCH_REQ, GS_BATCH_OUT, GS_BATCH_BACK, GS_BATCH_WAIT_S,          /* compute <-> storage */
    GS_NSTATS
};

static void read_rpc(dist_rpc *rpc, int handler, double *req, double *out, double *back, double *wait) {
    dist_rpc_counters c;
    dist_rpc_read_counters(rpc, handler, 0, &c);
    *req += (double)c.req_sent, *out += (double)c.req_bytes_sent, *back += (double)c.rep_bytes_recv;
    if (wait) *wait += (double)c.wait_ns * 1e-9;
}

static void log_traffic(const graph_store_layout *lay, const double *v) {
    const double nb = v[GS_BATCHES];
    if (nb <= 0) return;
    log_info("graph store: %.0f batches built by %d storage rank%s for %d compute rank%s (storage: sample %.1f ms, "
             "gather %.1f ms per batch, summed over workers; %.0f input nodes per batch)",
             nb, lay->num_storage, lay->num_storage == 1 ? "" : "s", lay->num_compute, lay->num_compute == 1 ? "" : "s",
             1e3 * v[GS_SAMPLE_S] / nb, 1e3 * v[GS_GATHER_S] / nb, v[GS_INPUT_NODES] / nb);
    log_info("graph store: traffic per batch: compute <-> storage %.2f requests, %.1f KB out, %.1f KB back (compute "
             "ranks waited %.1f ms per batch, overlapped by prefetching); storage <-> storage: sampling %.2f requests, "
             "%.1f KB out, %.1f KB back; features %.2f requests, %.1f KB out, %.1f KB back",
             v[GS_BATCH_REQ] / nb, v[GS_BATCH_OUT] / nb / 1e3, v[GS_BATCH_BACK] / nb / 1e3,
             1e3 * v[GS_BATCH_WAIT_S] / nb, v[GS_PICK_REQ] / nb, v[GS_PICK_OUT] / nb / 1e3, v[GS_PICK_BACK] / nb / 1e3,
             v[GS_FEAT_REQ] / nb, v[GS_FEAT_OUT] / nb / 1e3, v[GS_FEAT_BACK] / nb / 1e3);
    if (v[GS_CACHE_ASKED] > 0)
        log_info("graph store: feature cache: hit rate %.1f%% of %.0f remote rows per batch, %.1f KB of remote "
                 "feature rows saved per batch",
                 100.0 * v[GS_CACHE_FOUND] / v[GS_CACHE_ASKED], v[GS_CACHE_ASKED] / nb,
                 v[GS_CACHE_FOUND] * v[GS_ROW_BYTES] / (double)lay->num_storage / nb / 1e3);
}

/* BATCH on a compute rank: registered for its name in this rank's messages; never called. */
static int compute_builds_no_batch(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)req, (void)len, (void)reply;
    return err_set(err, CGNN_ERR_RUNTIME, "rank %d asked a compute rank for a batch", src);
}

/* graph_store_run's compute job: trainer_run on the compute group. */
typedef struct train_job {
    const task_config *tc;
    const resource_config *res;
    const trainer_options *opt;
    trainer_result *out;
} train_job;

static int declare_train(void *ctx, outguard *g, cgnn_err *err) {
    const train_job *j = ctx;
    return outputs_declare_train(g, j->tc, 1, err);
}

/* A storage rank's guard: its parts (every file of each, the partition's JSON and id maps) and
 * the configs are its inputs; the job's outputs are declared by declare (graph_store_serve). */
static int storage_guard(storage *st, const resource_config *res, graph_store_declare_fn declare, void *ctx,
                         cgnn_err *err) {
    outguard_init(&st->guard);
    st->have_guard = 1;
    outguard_add_input(&st->guard, st->tc->file, "the task config");
    outguard_add_input(&st->guard, res->file, "the resource config");
    for (int i = 0; i < st->k; i++) {
        const partbook *pb = &st->pbs[i];
        outguard_add_dataset(&st->guard, &pb->ds);
        outguard_add_input(&st->guard, pb->json_path, "the partition JSON");
        outguard_add_input(&st->guard, pb->orig_ids_path, "the partition's id map");
        outguard_add_input(&st->guard, pb->new_ids_path, "the partition's id map");
    }
    if (declare(ctx, &st->guard, err) != 0) return -1;
    outguard_activate(&st->guard);
    return 0;
}

static int run_trainer(void *ctx, const graph_store_client *gc, const dist_ctx *group, cgnn_err *err) {
    train_job *j = ctx;
    trainer_options o = *j->opt;
    o.dist = group;
    o.graph_store = gc;
    return trainer_run(j->tc, j->res, &o, j->out, err);
}

int graph_store_run(const task_config *tc, const resource_config *res, const dist_ctx *world, const dist_ctx *group,
                    dist_rpc *rpc, const graph_store_layout *lay, const trainer_options *opt, trainer_result *out,
                    cgnn_err *err) {
    train_job j = {tc, res, opt, out};
    return graph_store_serve(tc, res, world, group, rpc, lay, run_trainer, declare_train, &j, err);
}

int graph_store_serve(const task_config *tc, const resource_config *res, const dist_ctx *world, const dist_ctx *group,
                      dist_rpc *rpc, const graph_store_layout *lay, graph_store_compute_fn compute,
                      graph_store_declare_fn declare, void *ctx, cgnn_err *err) {
    const int is_storage = lay->storage, root = world->rank == 0;
    storage st;
    memset(&st, 0, sizeof st);
    int bad = 0, status = 0;
    if (root) {
        log_info("server-client mode (graph store): %d storage rank%s (world ranks %d-%d), %d compute rank%s (world "
                 "ranks 0-%d)", lay->num_storage, lay->num_storage == 1 ? "" : "s", lay->num_compute,
                 lay->num_compute + lay->num_storage - 1, lay->num_compute, lay->num_compute == 1 ? "" : "s",
                 lay->num_compute - 1);
        if (res->ignored[0]) log_info("resource config: ignored (no meaning for CPU ranks here): %s", res->ignored);
        if (tc->has_storage_config)
            log_info("%s: trainerConfig.graphStoreStorageConfig ignored: the storage ranks run cgnn itself",
                     tc->file);
    }
    if (!partbook_is_partition(tc->dataset_path))
        bad = err_set(err, CGNN_ERR_INPUT,
                      "%s: sharedConfig.preprocessedMetadataUri: server-client mode (the resource config's "
                      "vertex_ai_graph_store_trainer_config) needs a partitioned graph (cgnn partition), but %s is "
                      "not one",
                      tc->file, tc->dataset_path) != 0;
    if (is_storage && !bad) {
        st.tc = tc, st.world = world, st.group = group, st.lay = lay;
        const int cores = omp_get_num_procs();
        st.threads = res->num_threads_per_replica > 0 ? res->num_threads_per_replica
                                                      : cores / (world->local_size > 0 ? world->local_size : 1);
        if (st.threads < 1) st.threads = 1;
        omp_set_num_threads(st.threads);
        openblas_set_num_threads(1);
        bad = storage_open(&st, err) != 0;
        if (!bad) bad = storage_guard(&st, res, declare, ctx, err) != 0; /* before handshake 1 */
        if (!bad) {
            const trainer_args *a = &tc->args;
            bad = (st.typed ? part_rpc_init_typed_peers(&st.pr, rpc, world->rank, world->size, st.peers, &st.tg,
                                                        &st.tspart, st.tfeat, err)
                            : part_rpc_init_peers(&st.pr, rpc, world->rank, world->size, st.peers, st.local, &st.spart,
                                                  st.feat, err)) != 0;
            st.have_pr = !bad;
            if (!bad && st.typed)
                bad = batch_server_init_typed(&st.bs, world, rpc, &st.tg, &st.pr.tsampler, st.tfeat,
                                              &st.pr.tfeat_part, st.threads, err) != 0;
            else if (!bad && st.feat) {
                feat_cache_init(&st.cache, &st.pr.feat_part, (size_t)st.feat->dim * npy_dtype_size(st.feat->array.dtype));
                st.have_cache = 1;
            }
            if (!bad && !st.typed)
                bad = batch_server_init(&st.bs, world, rpc, st.local, &st.pr.sampler, st.feat,
                                        st.feat ? &st.cache.view : NULL, st.threads, err) != 0;
            dist_rpc_set_timeout(rpc, a->rpc_timeout_s);
        }
        if (bad) err_prefix(err, "storage rank %d: ", lay->index);
    } else if (!is_storage) {
        dist_rpc_register(rpc, BATCH_RPC_BATCH, "batch", compute_builds_no_batch, NULL); /* its name, for messages */
        /* a batch waits on the storage rank's own requests to its peers: give those time to fail
         * first (with the silent peer's name) before this rank's own deadline names the storage rank */
        dist_rpc_set_timeout(rpc, 2 * tc->args.rpc_timeout_s + 5);
    }
    /* handshake 1: everyone has opened what it holds (compute ranks wait without spinning) */
    dist_barrier_idle(world);
    if (dist_phase_failed(world, bad, err)) {
        storage_free(&st);
        return err->code ? err->code : CGNN_ERR_RUNTIME;
    }
    /* has features, width, dtype, parts, typed, then per node type: width (0: none), dtype (-1) */
    enum { INFO_TYPES = 5, INFO_LEN = INFO_TYPES + 2 * MINIBATCH_MAX_NODE_TYPES };
    int64_t info[INFO_LEN] = {0, 0, -1, 0, 0};
    for (int t = 0; t < MINIBATCH_MAX_NODE_TYPES; t++) info[INFO_TYPES + 2 * t + 1] = -1;
    if (is_storage && lay->index == 0) {
        info[0] = st.feat != NULL, info[1] = st.feat ? st.feat->dim : 0, info[2] = st.feat ? (int64_t)st.feat->array.dtype : -1;
        info[3] = st.P;
        info[4] = st.typed;
        for (int t = 0; st.typed && t < st.tg.num_node_types; t++)
            if (st.tfeat[t]) {
                info[INFO_TYPES + 2 * t] = st.tfeat[t]->dim;
                info[INFO_TYPES + 2 * t + 1] = (int64_t)st.tfeat[t]->array.dtype;
            }
    }
    dist_allreduce_max_i64(world, info, INFO_LEN);
    if (dist_rpc_start(rpc, err) != 0) dist_fail_job(world, err);
    const char *stall = getenv("CGNN_TEST_RPC_STALL_S"), *fr = getenv("CGNN_TEST_FAULT_RANK");
    if (stall && (!fr || atoi(fr) == world->rank)) dist_rpc_test_stall(rpc, atof(stall));
    double cache_rep[5] = {0};
    if (is_storage) bad = storage_cache(&st, cache_rep, err) != 0;
    /* handshake 2: the storage ranks serve (their caches built) */
    dist_barrier_idle(world);
    if (dist_phase_failed(world, bad, err)) dist_fail_job(world, err); /* services run: end the job */
    dist_allreduce_sum_f64(world, cache_rep, 5);
    if (root && cache_rep[0] > 0)
        log_info("graph store: feature cache (%s): %.0f rows per storage rank on average (%.1f MB), of %.0f remote "
                 "nodes ranked; built in %.2f s (slowest storage rank counted once per rank: %.2f s on average)%s",
                 feat_cache_policy_name(graph_store_cache_policy(tc->args.cache_policy)),
                 cache_rep[0] / lay->num_storage, cache_rep[1] / lay->num_storage / 1e6, cache_rep[4] / lay->num_storage,
                 cache_rep[2], cache_rep[2] / lay->num_storage,
                 cache_rep[3] > 0 ? " after pre-sampling the storage ranks' training seeds" : "");
    dist_rpc_counters c0;
    dist_rpc_read_counters(rpc, DIST_RPC_ALL, 1, &c0); /* count the training only */
    if (is_storage && batch_server_start(st.bs, err) != 0) dist_fail_job(world, err);
    int rc = 0;
    if (!is_storage) {
        graph_store_client gc = {rpc,
                                 lay->num_storage,
                                 lay->num_compute,
                                 lay->num_compute,
                                 (int)(info[3] / lay->num_storage),
                                 (int)info[0],
                                 info[1],
                                 (int)info[2], 0, {0}, {0}};
        gc.typed = (int)info[4];
        for (int t = 0; t < MINIBATCH_MAX_NODE_TYPES; t++) {
            gc.type_feat_dim[t] = info[INFO_TYPES + 2 * t];
            gc.type_feat_dtype[t] = (int)info[INFO_TYPES + 2 * t + 1];
        }
        rc = compute(ctx, &gc, group, err);
        if (rc != 0) status = err->code ? err->code : CGNN_ERR_RUNTIME;
    }
    /* the end: every compute rank's status (the storage ranks wait here without spinning) */
    int64_t st64 = status;
    dist_allreduce_max_i64_idle(world, &st64, 1);
    status = (int)st64;
    if (is_storage) batch_server_stop(st.bs); /* every batch was answered: the compute ranks are done */
    double v[GS_NSTATS];
    memset(v, 0, sizeof v);
    if (is_storage) {
        batch_server_stats bst;
        batch_server_stats_read(st.bs, &bst);
        v[GS_BATCHES] = (double)bst.batches, v[GS_FAILED] = (double)bst.failed;
        v[GS_SAMPLE_S] = bst.sample_seconds, v[GS_GATHER_S] = bst.gather_seconds;
        v[GS_INPUT_NODES] = (double)bst.input_nodes;
        read_rpc(rpc, PART_RPC_PICK, &v[GS_PICK_REQ], &v[GS_PICK_OUT], &v[GS_PICK_BACK], NULL);
        read_rpc(rpc, PART_RPC_FEAT, &v[GS_FEAT_REQ], &v[GS_FEAT_OUT], &v[GS_FEAT_BACK], NULL);
        if (st.have_cache) {
            uint64_t asked, found;
            feat_cache_counters(&st.cache, 0, &asked, &found);
            v[GS_CACHE_ASKED] = (double)asked, v[GS_CACHE_FOUND] = (double)found;
            v[GS_ROW_BYTES] = (double)st.cache.row_bytes;
        }
    } else {
        read_rpc(rpc, BATCH_RPC_BATCH, &v[GS_BATCH_REQ], &v[GS_BATCH_OUT], &v[GS_BATCH_BACK], &v[GS_BATCH_WAIT_S]);
    }
    dist_allreduce_sum_f64(world, v, GS_NSTATS);
    if (root && status == 0) log_traffic(lay, v);
    cgnn_err serr = {0};
    if (dist_rpc_stop(rpc, &serr) != 0) dist_fail_job(world, &serr); /* collective: nobody asks any more */
    storage_free(&st);
    return status;
}
