/* cgnn_api.c — the public C API (include/cgnn.h) over the graph source (source/graph_source.h:
 * the dataset and its indexes) and the loader `cgnn train` runs (sample/loader.h). This file
 * translates: handles, options into a loader_config, batches into arrays, cgnn_err into
 * cgnn_error. It samples nothing itself. */
#include "cgnn.h"

#include <limits.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "sample/loader.h"
#include "source/graph_source.h"
#include "util/log.h"

_Static_assert(CGNN_MAX_LAYERS == MINIBATCH_MAX_LAYERS, "the public layer limit is the batch's");
_Static_assert(CGNN_MAX_EDGE_TYPES == MINIBATCH_MAX_EDGE_TYPES, "the public edge type limit is the batch's");
_Static_assert(CGNN_MAX_NODE_TYPES == MINIBATCH_MAX_NODE_TYPES, "the public node type limit is the batch's");
_Static_assert((int)CGNN_ERROR_RUNTIME == (int)CGNN_ERR_RUNTIME && (int)CGNN_ERROR_INPUT == (int)CGNN_ERR_INPUT,
               "the public codes are the internal ones");

struct cgnn_dataset {
    dist_ctx d;               /* a world of one: the library does not join an MPI job (yet) */
    graph_source src;         /* whole: the dataset, its index (homogeneous) or typed graph */
    graph_source_options so;
    char path[4096];
    int typed;
    int loaders;              /* loaders alive (they borrow the dataset) */
};

struct cgnn_batch {
    cgnn_loader *l;
    minibatch *mb;            /* a slot of l->ld, NULL when not held */
};

struct cgnn_loader {
    cgnn_dataset *ds;
    loader ld;
    int64_t epoch;
    int started;
    cgnn_batch *held;         /* (queue depth) one per slot: the batch the caller holds there */
    int num_held;
    int64_t batches;          /* this epoch's (cgnn_loader_start_epoch) */
};

int cgnn_version(void) { return CGNN_VERSION_MAJOR * 10000 + CGNN_VERSION_MINOR * 100 + CGNN_VERSION_PATCH; }

/* *err from an internal error (NULL-safe); returns its code. */
static int fail(cgnn_error *err, const cgnn_err *e) {
    const int code = e->code ? e->code : CGNN_ERROR_RUNTIME;
    if (err) {
        err->code = code;
        snprintf(err->message, sizeof err->message, "%s", e->msg);
    }
    return code;
}

static int fail_arg(cgnn_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_arg(cgnn_error *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = CGNN_ERROR_ARGUMENT;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return CGNN_ERROR_ARGUMENT;
}

/* ---- datasets ---- */

int cgnn_dataset_open(const char *path, int threads, cgnn_dataset **out, cgnn_error *err) {
    if (!out) return fail_arg(err, "cgnn_dataset_open: out is NULL");
    *out = NULL;
    if (!path || !path[0]) return fail_arg(err, "cgnn_dataset_open: path is empty");
    if (threads < 0) return fail_arg(err, "cgnn_dataset_open: threads %d is negative", threads);
    log_level = 0; /* the library never prints (errors are returned) */
    cgnn_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return fail_arg(err, "cgnn_dataset_open: out of memory");
    ds->d = (dist_ctx){.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    snprintf(ds->path, sizeof ds->path, "%s", path);
    ds->so.config_file = "cgnn_dataset_open";
    ds->so.dataset_path = ds->path;
    ds->so.seed_partition = "";
    graph_source_init(&ds->src, &ds->so, &ds->d, NULL);
    cgnn_err e = {0};
    int rc = 0;
    if (ds->src.kind != GRAPH_SOURCE_WHOLE)
        rc = err_set(&e, CGNN_ERR_INPUT, "%s: a partition of a graph: this version opens whole graphs only", path);
    if (rc == 0) rc = graph_source_load_begin(&ds->src, &e);
    if (rc == 0) rc = graph_source_open(&ds->src, threads > 0 ? threads : omp_get_num_procs(), &e);
    if (rc == 0) {
        ds->typed = dataset_is_typed(ds->src.ds);
        rc = ds->typed ? graph_source_open_typed(&ds->src, &e) : graph_source_open_index(&ds->src, NULL, NULL, &e);
    }
    if (rc == 0) graph_source_load_end(&ds->src);
    if (rc != 0) {
        cgnn_dataset_close(ds);
        return fail(err, &e);
    }
    *out = ds;
    return CGNN_OK;
}

void cgnn_dataset_close(cgnn_dataset *ds) {
    if (!ds) return;
    CGNN_CHECK(ds->loaders == 0); /* (the header's contract: a dataset outlives its loaders) */
    graph_source_free(&ds->src);
    free(ds);
}

int cgnn_dataset_num_node_types(const cgnn_dataset *ds) { return ds->src.ds->num_node_types; }
int cgnn_dataset_num_edge_types(const cgnn_dataset *ds) { return ds->src.ds->num_edge_types; }

const char *cgnn_dataset_node_type(const cgnn_dataset *ds, int type) {
    return type >= 0 && type < ds->src.ds->num_node_types ? ds->src.ds->node_types[type].name : NULL;
}

const char *cgnn_dataset_edge_type(const cgnn_dataset *ds, int etype) {
    return etype >= 0 && etype < ds->src.ds->num_edge_types ? ds->src.ds->edge_types[etype].name : NULL;
}

int64_t cgnn_dataset_num_nodes(const cgnn_dataset *ds, int type) {
    return type >= 0 && type < ds->src.ds->num_node_types ? ds->src.ds->node_types[type].num_nodes : -1;
}

int64_t cgnn_dataset_num_edges(const cgnn_dataset *ds, int etype) {
    return etype >= 0 && etype < ds->src.ds->num_edge_types ? ds->src.ds->edge_types[etype].edges.num_edges : -1;
}

static const ds_feature *type_feature(const cgnn_dataset *ds, int type) {
    return ds->typed ? graph_source_type_feature(&ds->src, type) : graph_source_feature(&ds->src);
}

int64_t cgnn_dataset_feature_dim(const cgnn_dataset *ds, int type) {
    if (type < 0 || type >= ds->src.ds->num_node_types) return -1;
    const ds_feature *f = type_feature(ds, type);
    return f ? f->dim : 0;
}

int cgnn_dataset_num_tasks(const cgnn_dataset *ds) { return ds->src.ds->num_tasks; }

static const ds_task *task_at(const cgnn_dataset *ds, int task) {
    return task >= 0 && task < ds->src.ds->num_tasks ? &ds->src.ds->tasks[task] : NULL;
}

const char *cgnn_dataset_task_name(const cgnn_dataset *ds, int task) {
    const ds_task *t = task_at(ds, task);
    return t ? t->name : NULL;
}

int cgnn_dataset_task_kind(const cgnn_dataset *ds, int task) {
    const ds_task *t = task_at(ds, task);
    return !t ? -1 : t->kind == DS_TASK_LINK_PREDICTION ? CGNN_TASK_LINK_PREDICTION : CGNN_TASK_NODE_CLASSIFICATION;
}

int cgnn_dataset_task_type(const cgnn_dataset *ds, int task) {
    const ds_task *t = task_at(ds, task);
    return t ? t->type : -1;
}

int64_t cgnn_dataset_num_classes(const cgnn_dataset *ds, int task) {
    const ds_task *t = task_at(ds, task);
    return t ? t->num_classes : 0;
}

int64_t cgnn_dataset_split_size(const cgnn_dataset *ds, int task, int split) {
    const ds_task *t = task_at(ds, task);
    if (!t || split < 0 || split >= DS_SPLIT_COUNT || !t->splits[split].present) return -1;
    return t->splits[split].num_items;
}

/* ---- loaders ---- */

void cgnn_loader_options_init(cgnn_loader_options *o) {
    memset(o, 0, sizeof *o);
    o->batch_size = 1024;
    o->num_layers = 2;
    for (int h = 0; h < CGNN_MAX_LAYERS; h++) o->fanouts[h] = 10;
    for (int h = 0; h < CGNN_MAX_LAYERS; h++)
        for (int e = 0; e < CGNN_MAX_EDGE_TYPES; e++) o->edge_type_fanouts[h][e] = -2;
    o->shuffle = -1; /* (the train split's default) */
    o->seed = 42;
    o->world_size = 1;
    o->num_workers = 2;
}

/* The options' checks; each message names the option. */
static int check_options(const cgnn_dataset *ds, const cgnn_loader_options *o, const ds_task **task, cgnn_error *err) {
    *task = task_at(ds, o->task);
    if (!*task) return fail_arg(err, "cgnn_loader_options.task: %d (the dataset %s has %d tasks)", o->task, ds->path,
                                ds->src.ds->num_tasks);
    if (o->split < 0 || o->split >= DS_SPLIT_COUNT || !(*task)->splits[o->split].present)
        return fail_arg(err, "cgnn_loader_options.split: %d (task '%s' has no such split)", o->split, (*task)->name);
    if (o->batch_size < 1) return fail_arg(err, "cgnn_loader_options.batch_size: %lld (at least 1)", (long long)o->batch_size);
    if (o->num_layers < 0 || o->num_layers > CGNN_MAX_LAYERS)
        return fail_arg(err, "cgnn_loader_options.num_layers: %d (0 to %d)", o->num_layers, CGNN_MAX_LAYERS);
    for (int h = 0; h < o->num_layers; h++)
        if (o->fanouts[h] < -1 || o->fanouts[h] == 0)
            return fail_arg(err, "cgnn_loader_options.fanouts[%d]: %lld (a positive count, or -1 for all)", h,
                            (long long)o->fanouts[h]);
    if (o->world_size < 1 || o->rank < 0 || o->rank >= o->world_size)
        return fail_arg(err, "cgnn_loader_options.rank / world_size: %d / %d (0 <= rank < world_size)", o->rank,
                        o->world_size);
    if (o->num_workers < 0 || o->num_workers > 256)
        return fail_arg(err, "cgnn_loader_options.num_workers: %d (0 to 256)", o->num_workers);
    if (o->prefetch < 0 || o->prefetch > 1024)
        return fail_arg(err, "cgnn_loader_options.prefetch: %d (0 to 1024)", o->prefetch);
    const int lp = (*task)->kind == DS_TASK_LINK_PREDICTION;
    if (o->num_negatives < 0) return fail_arg(err, "cgnn_loader_options.num_negatives: %lld (>= 0)", (long long)o->num_negatives);
    if (!lp && (o->num_negatives || o->exclude_seed_edges || o->anchor_batching))
        return fail_arg(err, "cgnn_loader_options: num_negatives, exclude_seed_edges and anchor_batching are for a "
                             "link prediction task; task '%s' is node classification", (*task)->name);
    if (o->max_labels_per_anchor < 0)
        return fail_arg(err, "cgnn_loader_options.max_labels_per_anchor: %lld (>= 0)", (long long)o->max_labels_per_anchor);
    return CGNN_OK;
}

int cgnn_loader_create(cgnn_dataset *ds, const cgnn_loader_options *o, cgnn_loader **out, cgnn_error *err) {
    if (!out) return fail_arg(err, "cgnn_loader_create: out is NULL");
    *out = NULL;
    if (!ds || !o) return fail_arg(err, "cgnn_loader_create: %s is NULL", ds ? "options" : "dataset");
    const ds_task *task;
    const int rc0 = check_options(ds, o, &task, err);
    if (rc0 != CGNN_OK) return rc0;
    const int lp = task->kind == DS_TASK_LINK_PREDICTION;
    const ds_split *sp = &task->splits[o->split];
    loader_config lc;
    memset(&lc, 0, sizeof lc);
    lc.sampler.num_layers = o->num_layers;
    for (int h = 0; h < o->num_layers; h++) lc.sampler.fanouts[h] = o->fanouts[h];
    lc.sampler.replace = o->replace != 0;
    lc.batch_size = o->batch_size;
    lc.shuffle = o->shuffle < 0 ? o->split == CGNN_SPLIT_TRAIN : o->shuffle != 0;
    lc.drop_last = o->drop_last != 0;
    lc.drop_uneven = o->drop_uneven != 0;
    lc.seed = o->seed;
    lc.rank = o->rank;
    lc.world_size = o->world_size;
    lc.num_workers = o->num_workers;
    lc.queue_depth = o->prefetch;
    lc.normalize_rows = o->normalize_features != 0;
    if (lp) {
        lc.pairs = 1;
        lc.num_negatives = o->num_negatives;
        lc.exclude_seed_edges = o->exclude_seed_edges != 0;
        lc.indexes = sp->indexes;
        lc.anchor_batches = o->anchor_batching != 0;
        lc.max_labels_per_anchor = o->max_labels_per_anchor;
    }
    cgnn_err e = {0};
    const dataset *d = ds->src.ds;
    if (ds->typed) {
        lc.typed = &ds->src.tg;
        lc.typed_sampler.num_layers = o->num_layers;
        lc.typed_sampler.replace = lc.sampler.replace;
        const char *names[MINIBATCH_MAX_EDGE_TYPES];
        for (int et = 0; et < d->num_edge_types; et++) {
            names[et] = d->edge_types[et].name;
            for (int h = 0; h < o->num_layers; h++)
                lc.typed_sampler.fanouts[h][et] =
                    o->edge_type_fanouts[h][et] == -2 ? o->fanouts[h] : o->edge_type_fanouts[h][et];
        }
        if (typed_sampler_config_check(&ds->src.tg, &lc.typed_sampler, names, &e) != 0)
            return fail_arg(err, "cgnn_loader_options.edge_type_fanouts: %s", e.msg);
        lc.seed_type = lp ? 0 : task->type;
        lc.pair_etype = lp ? task->type : 0;
        for (int k = 0; k < d->num_node_types; k++) {
            lc.type_feature[k] = graph_source_type_feature(&ds->src, k);
            lc.type_width[k] = lc.type_feature[k] ? lc.type_feature[k]->dim : 0;
        }
    } else {
        lc.feature = graph_source_feature(&ds->src);
    }
    cgnn_loader *l = calloc(1, sizeof *l);
    if (!l) return fail_arg(err, "cgnn_loader_create: out of memory");
    l->ds = ds;
    if (loader_init(&l->ld, ds->typed ? NULL : ds->src.g, sp->seeds, sp->labels, sp->num_items, &lc, &e) != 0) {
        free(l);
        err_prefix(&e, "%s (task '%s' %s): ", sp->seeds_path, task->name, ds_split_name((ds_split_id)o->split));
        return fail(err, &e);
    }
    l->held = calloc((size_t)l->ld.queue_depth, sizeof *l->held);
    CGNN_CHECK(l->held);
    for (int q = 0; q < l->ld.queue_depth; q++) l->held[q].l = l;
    ds->loaders++;
    *out = l;
    return CGNN_OK;
}

void cgnn_loader_free(cgnn_loader *l) {
    if (!l) return;
    CGNN_CHECK(l->num_held == 0); /* (the header's contract: every batch released first) */
    loader_free(&l->ld);
    free(l->held);
    l->ds->loaders--;
    free(l);
}

int64_t cgnn_loader_num_batches(const cgnn_loader *l) {
    const item_sampler *s = &l->ld.items; /* (the count does not depend on the epoch) */
    int64_t n = item_sampler_rank_batches(s, s->rank);
    for (int r = 0; s->drop_uneven && r < s->world_size; r++)
        if (item_sampler_rank_batches(s, r) < n) n = item_sampler_rank_batches(s, r);
    return n;
}

int cgnn_loader_start_epoch(cgnn_loader *l, int64_t epoch, cgnn_error *err) {
    if (!l) return fail_arg(err, "cgnn_loader_start_epoch: loader is NULL");
    if (epoch < 0 || epoch > INT_MAX) return fail_arg(err, "cgnn_loader_start_epoch: epoch %lld (0 to %d)", (long long)epoch, INT_MAX);
    loader_start_epoch(&l->ld, (int)epoch, 0);
    l->epoch = epoch;
    l->started = 1;
    l->batches = loader_num_batches(&l->ld);
    return CGNN_OK;
}

int cgnn_loader_next(cgnn_loader *l, cgnn_batch **out, cgnn_error *err) {
    if (!out) return fail_arg(err, "cgnn_loader_next: out is NULL");
    *out = NULL;
    if (!l) return fail_arg(err, "cgnn_loader_next: loader is NULL");
    if (!l->started) return fail_arg(err, "cgnn_loader_next: no epoch started (cgnn_loader_start_epoch)");
    if (l->ld.next_consume >= l->batches) return CGNN_OK;
    const int slot = loader_slot_of(&l->ld, l->ld.next_consume);
    if (l->held[slot].mb)
        return fail_arg(err, "cgnn_loader_next: batch %lld is still held and its buffers are the next batch's; a "
                             "loader holds at most prefetch = %d batches (cgnn_batch_release the oldest first)",
                        (long long)l->held[slot].mb->batch_index, l->ld.queue_depth);
    minibatch *mb = loader_next(&l->ld);
    cgnn_err e = {0};
    if (!mb) return loader_failed(&l->ld, &e) ? fail(err, &e) : CGNN_OK;
    const int got = (int)(mb - l->ld.slots);
    CGNN_CHECK(got == slot);
    l->held[slot].mb = mb;
    l->num_held++;
    *out = &l->held[slot];
    return CGNN_OK;
}

void cgnn_batch_release(cgnn_batch *b) {
    if (!b || !b->mb) return;
    loader_release(&b->l->ld, b->mb);
    b->mb = NULL;
    b->l->num_held--;
}

/* ---- batches ---- */

void cgnn_batch_info_get(const cgnn_batch *b, cgnn_batch_info *out) {
    const minibatch *mb = b->mb;
    CGNN_CHECK(mb);
    memset(out, 0, sizeof *out);
    out->epoch = mb->epoch;
    out->index = mb->batch_index;
    out->num_layers = mb->num_layers;
    out->num_node_types = mb->typed ? mb->typed->num_node_types : 1;
    out->num_edge_types = mb->typed ? mb->typed->num_edge_types : 1;
    out->num_items = mb->num_items;
    out->num_negatives = mb->num_negatives;
    out->num_listed = mb->num_listed;
    out->num_seeds = mb->num_seeds;
    out->num_sampled_edges = mb->num_sampled_edges;
}

int64_t cgnn_batch_num_nodes(const cgnn_batch *b, int type, int hop) {
    const minibatch *mb = b->mb;
    CGNN_CHECK(mb);
    if (hop < 0 || hop > mb->num_layers) return -1;
    if (mb->typed) return type >= 0 && type < mb->typed->num_node_types ? mb->typed->num_nodes[type][hop] : -1;
    if (type != 0) return -1;
    /* hop h's nodes: the src of the block that consumes them (block L - h), the seeds at h = 0 */
    const int L = mb->num_layers;
    if (hop == 0) return mb->num_seeds;
    return mb->blocks[L - hop].num_src;
}

static void array1(cgnn_array *a, const void *p, int dtype, int64_t n) {
    *a = (cgnn_array){n > 0 ? p : NULL, dtype, 1, {n, 0}};
}

int cgnn_batch_array(const cgnn_batch *b, int field, int index, cgnn_array *out, cgnn_error *err) {
    if (!b || !b->mb || !out) return fail_arg(err, "cgnn_batch_array: %s", !out ? "out is NULL" : "the batch was released");
    const minibatch *mb = b->mb;
    const minibatch_typed *ty = mb->typed;
    const int T = ty ? ty->num_node_types : 1, K = ty ? ty->num_edge_types : 1, L = mb->num_layers;
    const int64_t P = mb->num_items;
    switch (field) {
    case CGNN_FIELD_NODES:
    case CGNN_FIELD_FEATURES: {
        if (index < 0 || index >= T) return fail_arg(err, "cgnn_batch_array: node type %d (the batch has %d)", index, T);
        const int64_t n = ty ? ty->num_nodes[index][L] : mb->num_input_nodes;
        if (field == CGNN_FIELD_NODES) {
            array1(out, ty ? ty->nodes[index] : mb->input_nodes, CGNN_INT64, n);
            return CGNN_OK;
        }
        const int64_t F = ty ? ty->feat_dim[index] : mb->feat_dim;
        const float *x = ty ? ty->features[index] : mb->features;
        if (F <= 0 || !x) return fail_arg(err, "cgnn_batch_array: node type %d has no features", index);
        *out = (cgnn_array){n > 0 ? x : NULL, CGNN_FLOAT32, 2, {n, F}};
        return CGNN_OK;
    }
    case CGNN_FIELD_BLOCK_INDPTR:
    case CGNN_FIELD_BLOCK_INDICES: {
        if (index < 0 || index >= L * K)
            return fail_arg(err, "cgnn_batch_array: block %d (the batch has %d layers x %d edge types)", index, L, K);
        const sampler_block *bl = ty ? &ty->blocks[index] : &mb->blocks[index];
        if (field == CGNN_FIELD_BLOCK_INDPTR) array1(out, bl->indptr, CGNN_INT64, bl->num_dst + 1);
        else array1(out, bl->indices, CGNN_INT32, bl->num_edges);
        return CGNN_OK;
    }
    case CGNN_FIELD_ITEMS:
        array1(out, mb->items, CGNN_INT64, P);
        return CGNN_OK;
    case CGNN_FIELD_LABELS:
        if (!mb->labels || !b->l->ld.labels) return fail_arg(err, "cgnn_batch_array: the batch's items have no labels");
        array1(out, mb->labels, CGNN_INT64, P);
        return CGNN_OK;
    case CGNN_FIELD_ITEM_ROWS: {
        const int64_t n = b->l->ld.cfg.pairs ? 2 * P + mb->num_listed + mb->num_negatives : P;
        array1(out, mb->item_local, CGNN_INT32, n);
        return CGNN_OK;
    }
    case CGNN_FIELD_LISTED_OFFSET:
    case CGNN_FIELD_LISTED_COUNT:
        if (!b->l->ld.cfg.pairs || !b->l->ld.pos_rows || !mb->listed_off) /* (labelled pairs only) */
            return fail_arg(err, "cgnn_batch_array: the batch has no listed negatives (labelled pairs only)");
        array1(out, field == CGNN_FIELD_LISTED_OFFSET ? mb->listed_off : mb->listed_len, CGNN_INT64, P);
        return CGNN_OK;
    default:
        return fail_arg(err, "cgnn_batch_array: field %d is not a cgnn_field", field);
    }
}
