/* source_whole.c — the whole graph in this process (graph_source.h, "whole"): the dataset and its
 * in-neighbour index, opened by every rank of a data-parallel job (memory-mapped: the ranks of one
 * machine share the pages); rank 0 builds and caches the index first, the others map the cache.
 * The local seed assignment takes its parts from seed_partition_uri. */
#include <string.h>

#include "source/source_impl.h"
#include "util/log.h"

static int whole_load_begin(graph_source *s, cgnn_err *err) {
    if (!graph_source_is_root(s)) dist_barrier(s->d); /* rank 0 builds and caches the index first */
    return 0;
}

static void whole_load_end(graph_source *s) {
    if (graph_source_is_root(s)) dist_barrier(s->d); /* the other ranks load now */
}

static int whole_open(graph_source *s, cgnn_err *err) {
    if (dataset_open(&s->whole.ds, s->opt.dataset_path, err) != 0) return -1;
    s->ds = &s->whole.ds;
    return 0;
}

static int whole_open_index(graph_source *s, graph_source_index_fn build, void *ctx, cgnn_err *err) {
    if (build) {
        if (build(ctx, &s->whole.g, err) != 0) return -1;
    } else if (csc_open_cached(&s->whole.g, &s->whole.ds, 0, 0, err) != 0) {
        return -1;
    }
    if (graph_source_is_root(s)) csc_warn_one_way(&s->whole.g, s->whole.ds.dir);
    s->g = &s->whole.g;
    return 0;
}

static int whole_open_typed(graph_source *s, cgnn_err *err) { return typed_graph_open(&s->tg, s->ds, s->threads, err); }

/* The local assignment: keeps the rows of each split whose anchor part rank % P of
 * seed_partition_uri owns, in row order (the rows a part's own split holds). */
static int select_local_seeds(graph_source *s, cgnn_err *err) {
    partbook *pb = &s->pb;
    const dataset *ds = s->ds;
    const char *file = s->opt.config_file, *field = "trainerConfig.trainerArgs.seed_partition_uri";
    if (partbook_read_json(pb, s->opt.seed_partition, err) != 0) return err_prefix(err, "%s: %s: ", file, field);
    int64_t nodes = dataset_total_nodes(ds), edges = 0;
    for (int k = 0; k < ds->num_edge_types; k++) edges += ds->edge_types[k].edges.num_edges;
    int same_types = pb->typed == ds->typed && (!pb->typed || (pb->num_node_types == ds->num_node_types &&
                                                               pb->num_edge_types == ds->num_edge_types));
    for (int k = 0; same_types && pb->typed && k < pb->num_node_types; k++)
        same_types = strcmp(pb->ntype_names[k], ds->node_types[k].name) == 0 &&
                     pb->type_nodes[k] == ds->node_types[k].num_nodes;
    if (pb->num_nodes != nodes || pb->num_edges != edges || !same_types)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s: %s partitions a%s graph of %lld nodes and %lld edges, but the dataset %s is a%s graph "
                       "of %lld nodes and %lld edges%s",
                       file, field, pb->json_path, pb->typed ? " typed" : "", (long long)pb->num_nodes,
                       (long long)pb->num_edges, ds->dir, ds->typed ? " typed" : "", (long long)nodes,
                       (long long)edges, same_types ? "" : " (or other node types)");
    if (partbook_check_world(pb->num_parts, s->d->size, err) != 0) return err_prefix(err, "%s: %s: ", file, field);
    if (partbook_open_maps(pb, s->threads, err) != 0) return -1;
    const int P = pb->num_parts, mine = partbook_part_for_rank(P, s->d->rank, s->d->size);
    if (!ds->typed) { /* the part's new ids: the anchor's new id in its range is the part owning it */
        graph_source_select_rows(s, pb->new_of_orig, pb->node_map[mine], pb->node_map[mine + 1]);
        return 0;
    }
    /* typed: the anchors' node type (a pair: its edge type's src type) and its per-type map */
    const int at = s->task->kind == DS_TASK_LINK_PREDICTION ? ds->edge_types[s->task->type].src_type : s->task->type;
    const int64_t *tm = pb->type_map + (size_t)at * (size_t)(P + 1);
    graph_source_select_rows(s, pb->type_new_of_orig[at], tm[mine], tm[mine + 1]);
    return 0;
}

/* global by default; local takes its parts from seed_partition_uri */
static int whole_assign_seeds(graph_source *s, cgnn_err *err) {
    s->local_seeds = s->opt.seed_assignment == GRAPH_SOURCE_SEEDS_LOCAL;
    if (!s->local_seeds) return 0;
    if (!s->opt.seed_partition[0])
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.seed_assignment: local on a replicated graph needs the partition "
                       "that assigns the seeds: set seed_partition_uri to a cgnn partition output of this dataset",
                       s->opt.config_file);
    if (select_local_seeds(s, err) != 0) return -1;
    const int P = s->pb.num_parts;
    s->seed_group = s->d->rank / P, s->seed_groups = s->d->size / P;
    return 0;
}

/* before the index is built (a check of the options): the dataset's nodes, the same number */
static int64_t whole_num_nodes(const graph_source *s) { return s->g ? s->g->num_nodes : dataset_total_nodes(s->ds); }
static int64_t whole_num_edges(const graph_source *s) { return s->g->num_edges; }

static const int64_t *whole_table_rows(const graph_source *s, int64_t *n) {
    *n = s->g->num_nodes;
    return NULL;
}

static int whole_batch_capacity(graph_source *s, const sampler_config *sc, int64_t max_seeds, int64_t in_dim,
                                minibatch_capacity *cap, cgnn_err *err) {
    sampler_capacity(s->g, sc, max_seeds, in_dim, cap);
    return 0;
}

static void whole_identify(const graph_source *s, const ds_feature *feat, graph_source_ids *out) {
    const int typed = dataset_is_typed(s->ds);
    out->layout = 0;
    out->edges = graph_source_edges_id(s, typed ? 0 : s->g->edges_crc, typed);
    out->feature_rows = feat ? feat->rows : 0;
    /* every rank holds the same arrays */
    out->feature_values = s->ds ? (int64_t)dataset_features_sample_crc(s->ds) : 0;
}

static void whole_free(graph_source *s) {
    csc_free(&s->whole.g);
    dataset_close(&s->whole.ds);
}

const graph_source_ops source_whole_ops = {
    .kind = GRAPH_SOURCE_WHOLE,
    .load_begin = whole_load_begin,
    .open = whole_open,
    .open_index = whole_open_index,
    .assign_seeds = whole_assign_seeds,
    .open_typed = whole_open_typed,
    .num_nodes = whole_num_nodes,
    .num_edges = whole_num_edges,
    .table_rows = whole_table_rows,
    .batch_capacity = whole_batch_capacity,
    .load_end = whole_load_end,
    .identify = whole_identify,
    .free = whole_free,
};
