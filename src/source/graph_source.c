/* graph_source.c — the kind chosen at start-up, the interface's calls passed to it, and what the
 * kinds share; see graph_source.h (source_impl.h for the kinds' side). */
#include "source/graph_source.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "source/source_impl.h"

void graph_source_init(graph_source *s, const graph_source_options *o, const dist_ctx *d,
                       const graph_store_client *gs) {
    memset(s, 0, sizeof *s);
    s->opt = *o;
    s->d = d;
    if (gs) { /* server-client mode: the storage ranks hold the parts */
        s->ops = &source_store_ops;
        s->store.gs = gs;
    } else if (partbook_is_partition(o->dataset_path)) {
        s->ops = &source_part_ops;
    } else {
        s->ops = &source_whole_ops;
    }
    s->kind = s->ops->kind;
}

int graph_source_is_root(const graph_source *s) { return s->d->rank == 0; }

int graph_source_load_begin(graph_source *s, cgnn_err *err) {
    return s->ops->load_begin ? s->ops->load_begin(s, err) : 0;
}

int graph_source_open(graph_source *s, int threads, cgnn_err *err) {
    s->threads = threads;
    return s->ops->open(s, err);
}

int graph_source_set_task(graph_source *s, const ds_task *task, cgnn_err *err) {
    s->task = s->gtask = task;
    return s->ops->set_task ? s->ops->set_task(s, err) : 0;
}

int graph_source_open_index(graph_source *s, graph_source_index_fn build, void *ctx, cgnn_err *err) {
    return s->ops->open_index ? s->ops->open_index(s, build, ctx, err) : 0;
}

int graph_source_assign_seeds(graph_source *s, cgnn_err *err) { return s->ops->assign_seeds(s, err); }

int graph_source_open_typed(graph_source *s, cgnn_err *err) { return s->ops->open_typed(s, err); }

/* The node feature the model reads (dataset_node_feature with trainerArgs.node_feature); type -1:
 * a homogeneous graph's (its one node type). */
const ds_feature *graph_source_feature(const graph_source *s) {
    return s->ops->feature ? s->ops->feature(s, -1) : dataset_node_feature(s->ds, 0, s->opt.node_feature);
}

const ds_feature *graph_source_type_feature(const graph_source *s, int k) {
    return s->ops->feature ? s->ops->feature(s, k) : dataset_node_feature(s->ds, k, s->opt.node_feature);
}

int graph_source_check_node_feature(const graph_source *s, const char *what, cgnn_err *err) {
    const char *name = s->opt.node_feature;
    if (!name || !*name) return 0;
    const dataset *ds = s->ds;
    const int typed = dataset_is_typed(ds), T = typed ? ds->num_node_types : 1;
    char names[512];
    for (int k = 0; k < T; k++) {
        const ds_feature *f = typed ? graph_source_type_feature(s, k) : graph_source_feature(s);
        const int avail = dataset_node_feature_names(ds, k, names, sizeof names);
        if (!f && (avail > 0 || !typed))
            return err_set(err, CGNN_ERR_INPUT, "%s: '%s' is not a node feature of %s%s%s (its node features: %s)", what,
                           name, ds->dir, typed ? " type " : "", typed ? ds->node_types[k].name : "",
                           avail ? names : "none");
    }
    return 0;
}

int64_t graph_source_num_nodes(const graph_source *s) {
    if (dataset_is_typed(s->ds)) return s->tg.offset[s->tg.num_node_types];
    return s->ops->num_nodes(s);
}

int64_t graph_source_num_edges(const graph_source *s) {
    if (!dataset_is_typed(s->ds)) return s->ops->num_edges(s);
    int64_t e = 0;
    for (int k = 0; k < s->tg.num_edge_types; k++) e += s->tg.num_edges[k];
    return e;
}

const char *graph_source_name(const graph_source *s) { return s->ops->name ? s->ops->name(s) : s->ds->dir; }

int graph_source_producers(const graph_source *s, int workers, const char **what) {
    if (s->ops->producers) return s->ops->producers(s, workers, what);
    *what = "sampler threads";
    return workers;
}

int graph_source_embedding_init(graph_source *s, embedding_table *e, int64_t dim, uint64_t seed, embedding_optim kind,
                                double lr, double beta1, double beta2, double eps, cgnn_err *err) {
    int64_t rows = 0;
    const int64_t *keys = s->ops->table_rows(s, &rows);
    if (keys ? embedding_init_keyed(e, rows, dim, seed, keys, kind, lr, beta1, beta2, eps, err) != 0
             : embedding_init(e, rows, dim, seed, kind, lr, beta1, beta2, eps, err) != 0)
        return -1;
    if (s->ops->set_table) s->ops->set_table(s, e);
    return 0;
}

const int64_t *graph_source_table_keys(const graph_source *s) {
    int64_t rows = 0;
    return s->ops->table_rows(s, &rows);
}

int graph_source_table_sharded(const graph_source *s) { return s->ops->sharded_table; }

int graph_source_serve(graph_source *s, const ds_feature *feat, const ds_feature *const *type_feat, cgnn_err *err) {
    return s->ops->serve ? s->ops->serve(s, feat, type_feat, err) : 0;
}

void graph_source_split_rows(const graph_source *s, ds_split_id split, graph_source_rows *out) {
    const ds_split *sp = &s->gtask->splits[split]; /* the whole split */
    *out = (graph_source_rows){sp->seeds, sp->labels, sp->indexes, sp->num_items, s->d->rank, s->d->size};
    if (!s->local_seeds) return;
    out->rank = s->seed_group, out->world = s->seed_groups; /* this rank's rows, sliced among its group */
    if (s->ops->local_rows) {
        s->ops->local_rows(s, split, out);
        return;
    }
    out->seeds = s->sel_seeds[split], out->labels = s->sel_labels[split], out->indexes = s->sel_indexes[split];
    out->items = s->sel_n[split];
}

void graph_source_set_sample_weights(graph_source *s, float *const *w) {
    if (s->kind != GRAPH_SOURCE_PART) return;
    if (!s->ds->typed) s->part.spart.weights = w[0];
    else
        for (int e = 0; e < MINIBATCH_MAX_EDGE_TYPES; e++) s->part.tspart.weights[e] = w[e];
}

void graph_source_loader_config(const graph_source *s, loader_config *lc) {
    if (s->ops->loader_config) s->ops->loader_config(s, lc);
}

void graph_source_loader_prepare(const graph_source *s, const ds_task *task, const graph_source_loader_request *r,
                                 loader_config *lc, graph_source_rows *rows) {
    if (task == s->task || task == s->gtask) {
        graph_source_split_rows(s, r->split, rows);
    } else { /* (a whole graph: another task of the dataset, its whole split) */
        const ds_split *sp = &task->splits[r->split];
        *rows = (graph_source_rows){sp->seeds, sp->labels, sp->indexes, sp->num_items, s->d->rank, s->d->size};
    }
    if (r->world_size > 0) rows->rank = r->rank, rows->world = r->world_size;
    memset(lc, 0, sizeof *lc);
    lc->sampler.num_layers = r->num_layers;
    for (int h = 0; h < r->num_layers; h++) lc->sampler.fanouts[h] = r->fanouts[h];
    lc->sampler.replace = r->replace;
    lc->batch_size = r->batch_size;
    lc->shuffle = r->shuffle;
    lc->drop_last = r->drop_last;
    lc->drop_uneven = r->drop_uneven;
    lc->seed = r->seed;
    lc->rank = rows->rank;
    lc->world_size = rows->world;
    lc->num_workers = r->num_workers;
    lc->queue_depth = r->prefetch;
    lc->normalize_rows = r->normalize_rows;
    lc->trace = r->trace;
    lc->trace_tid_base = r->trace_tid_base;
    lc->trace_name = r->trace_name;
    if (task->kind == DS_TASK_LINK_PREDICTION) {
        lc->pairs = 1;
        lc->num_negatives = r->num_negatives;
        lc->exclude_seed_edges = r->exclude_seed_edges;
        lc->neg_lo = r->neg_lo, lc->neg_hi = r->neg_hi;
        lc->indexes = rows->indexes;
        lc->anchor_batches = r->anchor_batches;
        lc->max_labels_per_anchor = r->max_labels_per_anchor;
    }
}

int graph_source_loader_open(graph_source *s, const ds_task *task, ds_split_id split, loader_config *lc,
                             const graph_source_rows *rows, loader *l, cgnn_err *err) {
    graph_source_loader_config(s, lc); /* on parts: remote picks and rows, or remote batches */
    if (loader_init(l, lc->typed ? NULL : s->g, rows->seeds, rows->labels, rows->items, lc, err) != 0)
        return err_prefix(err, "%s (task '%s' %s): ", task->splits[split].seeds_path, task->name,
                          ds_split_name(split));
    return 0;
}

int graph_source_batch_capacity(graph_source *s, const sampler_config *sc, int64_t max_seeds, int64_t in_dim,
                                minibatch_capacity *cap, cgnn_err *err) {
    return s->ops->batch_capacity(s, sc, max_seeds, in_dim, cap, err);
}

void graph_source_prepare_batch(graph_source *s, minibatch *mb) {
    if (s->ops->prepare_batch) s->ops->prepare_batch(s, mb);
}

int graph_source_gather_embedding(graph_source *s, const embedding_table *e, minibatch *mb, int64_t col,
                                  cgnn_err *err) {
    if (s->ops->gather_embedding) return s->ops->gather_embedding(s, e, mb, col, err);
    embedding_gather(e, mb->input_nodes, mb->num_input_nodes, mb->features, mb->feat_dim, col);
    return 0;
}

int graph_source_embedding_step(graph_source *s, embedding_table *e, const int64_t *ids, const float *grads, int64_t n,
                                int64_t stride, int64_t col, double lr, double divisor, cgnn_err *err) {
    if (s->ops->embedding_step) return s->ops->embedding_step(s, e, ids, grads, n, stride, col, lr, divisor, err);
    return embedding_sparse_step(e, s->d, ids, grads, n, stride, col, lr, divisor, err);
}

float *graph_source_table_to_root(const graph_source *s, const float *rows, int64_t dim) {
    return s->ops->table_to_root ? s->ops->table_to_root(s, rows, dim) : NULL;
}

void graph_source_table_written(graph_source *s) {
    if (s->ops->table_written) s->ops->table_written(s);
}

int graph_source_load_check(graph_source *s, int failed, const sampler_config *train, cgnn_err *err) {
    return s->ops->load_check ? s->ops->load_check(s, failed, train, err) : 0;
}

void graph_source_load_end(graph_source *s) {
    if (s->ops->load_end) s->ops->load_end(s);
}

void graph_source_add_inputs(const graph_source *s, outguard *g) {
    if (s->ds) outguard_add_dataset(g, s->ds);
    const partbook *pb = &s->pb;
    if (!pb->num_parts) return;
    /* a partition's JSON, id maps and whole splits are inputs too */
    outguard_add_input(g, pb->json_path, "the partition JSON");
    outguard_add_input(g, pb->orig_ids_path, "the partition's id map");
    outguard_add_input(g, pb->new_ids_path, "the partition's id map");
    if (pb->global.dir[0]) outguard_add_dataset(g, &pb->global);
}

void graph_source_identify(const graph_source *s, const ds_feature *feat, graph_source_ids *out) {
    memset(out, 0, sizeof *out);
    const char *pid = s->pb.num_parts ? s->pb.partition_id : "";
    out->partition = (int64_t)crc32(0L, (const unsigned char *)pid, (uInt)strlen(pid));
    out->num_parts = s->pb.num_parts;
    s->ops->identify(s, feat, out);
}

int64_t graph_source_edges_id(const graph_source *s, uint64_t eid, int typed_indexes) {
    for (int k = 0; typed_indexes && k < s->tg.num_edge_types; k++) eid = eid * 1000003u + s->tg.csc[k]->edges_crc;
    return (int64_t)(eid >> 1);
}

const csc_graph *graph_source_shape(const graph_source *s) { return s->ops->shape ? s->ops->shape(s) : s->g; }

int graph_source_state_fields(const graph_source *s, const char **keys, const char **vals) {
    return s->ops->state_fields ? s->ops->state_fields(s, keys, vals) : 0;
}

void graph_source_traffic_reset(graph_source *s) {
    if (s->ops->traffic_reset) s->ops->traffic_reset(s);
}

void graph_source_log_traffic(graph_source *s, loader *const *loaders, int n_loaders) {
    if (s->ops->log_traffic) s->ops->log_traffic(s, loaders, n_loaders);
}

int graph_source_stop(graph_source *s, cgnn_err *err) { return s->ops->stop ? s->ops->stop(s, err) : 0; }

void graph_source_free(graph_source *s) {
    typed_graph_free(&s->tg);
    if (s->ops && s->ops->free) s->ops->free(s);
    free(s->key_nodes);
    partbook_close(&s->pb);
    for (int k = 0; k < DS_SPLIT_COUNT; k++) {
        free(s->sel_seeds[k]);
        free(s->sel_labels[k]);
        free(s->sel_indexes[k]);
    }
}

/* ---- shared by the kinds ---- */

void graph_source_select_rows(graph_source *s, const int64_t *map, int64_t lo, int64_t hi) {
    for (int k = 0; k < DS_SPLIT_COUNT; k++) {
        const ds_split *sp = &s->task->splits[k];
        if (!sp->present) continue;
        const int w = sp->seed_width;
        int64_t n = 0;
        s->sel_seeds[k] = cgnn_malloc((size_t)(sp->num_items * w + 1) * sizeof(int64_t));
        if (sp->labels) s->sel_labels[k] = cgnn_malloc((size_t)(sp->num_items + 1) * sizeof(int64_t));
        if (sp->indexes) s->sel_indexes[k] = cgnn_malloc((size_t)(sp->num_items + 1) * sizeof(int64_t));
        for (int64_t i = 0; i < sp->num_items; i++) {
            const int64_t anchor = sp->seeds[i * w], v = map ? map[anchor] : anchor;
            if (v < lo || v >= hi) continue;
            memcpy(s->sel_seeds[k] + n * w, sp->seeds + i * w, (size_t)w * sizeof(int64_t));
            if (sp->labels) s->sel_labels[k][n] = sp->labels[i];
            if (sp->indexes) s->sel_indexes[k][n] = sp->indexes[i];
            n++;
        }
        s->sel_n[k] = n;
    }
}

int graph_source_check_type_counts(const partbook *pb, cgnn_err *err) {
    if (pb->num_node_types > MINIBATCH_MAX_NODE_TYPES || pb->num_edge_types > MINIBATCH_MAX_EDGE_TYPES)
        return err_set(err, CGNN_ERR_INPUT, "%s: %d node types and %d edge types; at most %d and %d are supported",
                       pb->json_path, pb->num_node_types, pb->num_edge_types, MINIBATCH_MAX_NODE_TYPES,
                       MINIBATCH_MAX_EDGE_TYPES);
    return 0;
}

int64_t graph_source_partition_nodes(const graph_source *s) { return s->pb.num_nodes; }
int64_t graph_source_partition_edges(const graph_source *s) { return s->pb.num_edges; }

int graph_source_partition_capacity(graph_source *s, const sampler_config *sc, int64_t max_seeds, int64_t in_dim,
                                    minibatch_capacity *cap, cgnn_err *err) {
    sampler_capacity_sized(s->pb.num_nodes, s->pb.num_edges, s->pb.max_in_degree, sc, max_seeds, in_dim, cap);
    s->key_nodes = cgnn_malloc((size_t)(cap->max_nodes[sc->num_layers] + 1) * sizeof(int64_t));
    return 0;
}

void graph_source_partition_keys(graph_source *s, minibatch *mb) {
    const int64_t *orig = s->pb.orig_of_new;
    for (int64_t i = 0; i < mb->num_input_nodes; i++) s->key_nodes[i] = orig[mb->input_nodes[i]];
    mb->key_nodes = s->key_nodes;
}

void graph_source_type_maps(const graph_source *s, loader_config *lc) {
    for (int k = 0; k < s->tg.num_node_types; k++) {
        lc->type_orig_of_new[k] = s->pb.type_orig_of_new[k];
        lc->type_new_of_orig[k] = s->pb.type_new_of_orig[k];
    }
}

int graph_source_phase_check(graph_source *s, int failed, cgnn_err *err) {
    return dist_phase_failed(s->d, failed, err) ? -1 : 0;
}
