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
#include "train/config.h"
#include "train/graph_store.h"
#include "util/log.h"

_Static_assert(CGNN_MAX_LAYERS == MINIBATCH_MAX_LAYERS, "the public layer limit is the batch's");
_Static_assert(CGNN_MAX_EDGE_TYPES == MINIBATCH_MAX_EDGE_TYPES, "the public edge type limit is the batch's");
_Static_assert(CGNN_MAX_NODE_TYPES == MINIBATCH_MAX_NODE_TYPES, "the public node type limit is the batch's");
_Static_assert((int)CGNN_ERROR_RUNTIME == (int)CGNN_ERR_RUNTIME && (int)CGNN_ERROR_INPUT == (int)CGNN_ERR_INPUT,
               "the public codes are the internal ones");

struct cgnn_dataset {
    dist_ctx d;               /* a world of one (a whole graph), or the job's (a partition) */
    graph_source src;         /* whole: the dataset, its index (homogeneous) or typed graph; part:
                                 this rank's part and its services */
    graph_source_options so;
    char path[4096];
    char node_feature[128];   /* the options' (so.node_feature points here) */
    int typed;
    int parted;               /* src is a part (cgnn_dataset_is_partition) */
    int loaders;              /* loaders alive (they borrow the dataset) */
};

/* The MPI job (cgnn_dist_init): 0 not joined, 1 joined, 2 left (cgnn_dist_finalize). */
static dist_ctx g_dist = {.rank = 0, .size = 1, .local_size = 1, .thread_multiple = 1};
static int g_dist_state;
static int g_partitions_open;

struct cgnn_batch {
    cgnn_loader *l;
    minibatch *mb;            /* a slot of l->ld, NULL when not held */
    int64_t *orig;            /* a homogeneous part: (mb->num_input_nodes) the input nodes' original ids
                                 (the part's ids are the partition's own); owned, reused */
    int64_t orig_cap;
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

int cgnn_dist_init(cgnn_error *err) {
    if (g_dist_state == 1) return CGNN_OK;
    if (g_dist_state == 2) return fail_arg(err, "cgnn_dist_init: the job was left (cgnn_dist_finalize)");
    cgnn_err e = {0};
    if (dist_init_threads(&g_dist, NULL, NULL, 1, &e) != 0) {
        dist_finalize(&g_dist);
        g_dist_state = 2;
        return fail(err, &e);
    }
    g_dist_state = 1;
    return CGNN_OK;
}

int cgnn_dist_rank(void) { return g_dist.rank; }
int cgnn_dist_size(void) { return g_dist.size; }

void cgnn_dist_finalize(void) {
    if (g_dist_state != 1) return;
    CGNN_CHECK(g_partitions_open == 0); /* (the header's contract: every partition closed first) */
    dist_finalize(&g_dist);
    g_dist_state = 2;
}

void cgnn_dataset_options_init(cgnn_dataset_options *o) {
    memset(o, 0, sizeof *o);
    o->task = -1;
    o->seed_assignment = CGNN_SEEDS_LOCAL;
    o->rpc_timeout_s = 60;
}

int cgnn_dataset_open(const char *path, int threads, cgnn_dataset **out, cgnn_error *err) {
    cgnn_dataset_options o;
    cgnn_dataset_options_init(&o);
    o.threads = threads;
    return cgnn_dataset_open_with(path, &o, out, err);
}

/* A partition's setup after graph_source_init, in `cgnn train`'s order (train/trainer.c): this
 * rank's part, the task, its index or typed view, the seed assignment, the services. */
static int open_part(cgnn_dataset *ds, const cgnn_dataset_options *o, int threads, cgnn_err *e) {
    if (graph_source_open(&ds->src, threads, e) != 0) return -1;
    const dataset *d = ds->src.ds;
    if (d->num_tasks == 0) return err_set(e, CGNN_ERR_INPUT, "%s: the partition's dataset has no task", ds->path);
    if (o->task >= d->num_tasks)
        return err_set(e, CGNN_ERR_INPUT, "cgnn_dataset_options.task: %d (the partition %s has %d tasks)", o->task,
                       ds->path, d->num_tasks);
    if (graph_source_set_task(&ds->src, &d->tasks[o->task < 0 ? 0 : o->task], e) != 0) return -1;
    ds->typed = dataset_is_typed(d);
    if (!ds->typed && graph_source_open_index(&ds->src, NULL, NULL, e) != 0) return -1;
    if (graph_source_assign_seeds(&ds->src, e) != 0) return -1;
    if (ds->typed && graph_source_open_typed(&ds->src, e) != 0) return -1;
    const ds_feature *type_feat[MINIBATCH_MAX_NODE_TYPES] = {0};
    for (int k = 0; ds->typed && k < d->num_node_types; k++) type_feat[k] = graph_source_type_feature(&ds->src, k);
    return graph_source_serve(&ds->src, ds->typed ? NULL : graph_source_feature(&ds->src), type_feat, e);
}

/* A dataset handle for path with o's source options (nothing opened), or NULL (out of memory). */
static cgnn_dataset *dataset_new(const char *path, const cgnn_dataset_options *o, const char *who) {
    cgnn_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return NULL;
    snprintf(ds->path, sizeof ds->path, "%s", path);
    ds->so.config_file = who;
    ds->so.dataset_path = ds->path;
    ds->so.seed_partition = "";
    ds->so.seed_assignment = o->seed_assignment == CGNN_SEEDS_GLOBAL ? GRAPH_SOURCE_SEEDS_GLOBAL : GRAPH_SOURCE_SEEDS_LOCAL;
    ds->so.rpc_timeout_s = o->rpc_timeout_s;
    ds->so.fault_rank = -1;
    snprintf(ds->node_feature, sizeof ds->node_feature, "%s", o->node_feature ? o->node_feature : "");
    ds->so.node_feature = ds->node_feature;
    return ds;
}

/* The options' checks shared by the opens; CGNN_OK or CGNN_ERROR_ARGUMENT naming the field. */
static int check_dataset_options(const cgnn_dataset_options *o, const char *who, cgnn_error *err) {
    if (!o) return fail_arg(err, "%s: options is NULL", who);
    if (o->threads < 0) return fail_arg(err, "cgnn_dataset_options.threads: %d is negative", o->threads);
    if (o->task < -1) return fail_arg(err, "cgnn_dataset_options.task: %d (-1 or a task)", o->task);
    if (o->seed_assignment != CGNN_SEEDS_LOCAL && o->seed_assignment != CGNN_SEEDS_GLOBAL)
        return fail_arg(err, "cgnn_dataset_options.seed_assignment: %d (CGNN_SEEDS_LOCAL or CGNN_SEEDS_GLOBAL)",
                        o->seed_assignment);
    if (!(o->rpc_timeout_s > 0))
        return fail_arg(err, "cgnn_dataset_options.rpc_timeout_s: %g (seconds, > 0)", o->rpc_timeout_s);
    if (o->node_feature && strlen(o->node_feature) >= 128)
        return fail_arg(err, "cgnn_dataset_options.node_feature: a name of %zu bytes (at most 127)", strlen(o->node_feature));
    return CGNN_OK;
}

int cgnn_dataset_open_with(const char *path, const cgnn_dataset_options *o, cgnn_dataset **out, cgnn_error *err) {
    if (!out) return fail_arg(err, "cgnn_dataset_open: out is NULL");
    *out = NULL;
    const int orc = check_dataset_options(o, "cgnn_dataset_open_with", err);
    if (orc != CGNN_OK) return orc;
    if (!path || !path[0]) return fail_arg(err, "cgnn_dataset_open: path is empty");
    log_level = 0; /* the library never prints (errors are returned) */
    cgnn_dataset *ds = dataset_new(path, o, "cgnn_dataset_open");
    if (!ds) return fail_arg(err, "cgnn_dataset_open: out of memory");
    ds->parted = partbook_is_partition(path);
    if (ds->parted) { /* the job's world (collective from here) */
        const int rc = cgnn_dist_init(err);
        if (rc != CGNN_OK) {
            free(ds);
            return rc;
        }
        ds->d = g_dist;
    } else {
        ds->d = (dist_ctx){.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    }
    graph_source_init(&ds->src, &ds->so, &ds->d, NULL);
    const int threads = o->threads > 0 ? o->threads : omp_get_num_procs() / (ds->d.local_size > 0 ? ds->d.local_size : 1);
    cgnn_err e = {0};
    int rc = graph_source_load_begin(&ds->src, &e);
    if (rc == 0 && ds->parted) {
        const int bad = open_part(ds, o, threads > 0 ? threads : 1, &e) != 0;
        const sampler_config no_cache = {0}; /* (no feature cache: nothing pre-sampled) */
        rc = graph_source_load_check(&ds->src, bad, &no_cache, &e); /* collective: every rank's outcome */
    } else if (rc == 0) {
        rc = graph_source_open(&ds->src, threads > 0 ? threads : 1, &e);
        if (rc == 0) {
            ds->typed = dataset_is_typed(ds->src.ds);
            rc = ds->typed ? graph_source_open_typed(&ds->src, &e) : graph_source_open_index(&ds->src, NULL, NULL, &e);
        }
    }
    if (rc == 0) rc = graph_source_check_node_feature(&ds->src, "cgnn_dataset_options.node_feature", &e);
    if (rc == 0) graph_source_load_end(&ds->src);
    if (rc != 0) {
        graph_source_free(&ds->src);
        free(ds);
        return fail(err, &e);
    }
    if (ds->parted) g_partitions_open++;
    *out = ds;
    return CGNN_OK;
}

void cgnn_dataset_close(cgnn_dataset *ds) {
    if (!ds) return;
    CGNN_CHECK(ds->loaders == 0); /* (the header's contract: a dataset outlives its loaders) */
    if (ds->parted) {
        cgnn_err e = {0};
        (void)graph_source_stop(&ds->src, &e); /* collective: no rank asks this one any more */
        g_partitions_open--;
    }
    graph_source_free(&ds->src);
    free(ds);
}

int cgnn_dataset_is_partition(const cgnn_dataset *ds) { return ds->parted; }
int cgnn_dataset_compute_rank(const cgnn_dataset *ds) { return ds->d.rank; }
int cgnn_dataset_compute_size(const cgnn_dataset *ds) { return ds->d.size; }
int cgnn_dataset_num_loaders(const cgnn_dataset *ds) { return ds->loaders; }

/* ---- server-client mode ------------------------------------------------------------------- */

typedef struct store_job {
    const char *path;
    const cgnn_dataset_options *o;
    cgnn_compute_fn compute;
    void *ctx;
} store_job;

/* graph_store_serve's compute job on a compute rank: the partition as a "store" source (its
 * batches from the storage ranks) in a dataset handle, the caller's function, the close. */
static int store_compute(void *ctx, const graph_store_client *gc, const dist_ctx *group, cgnn_err *err) {
    const store_job *j = ctx;
    cgnn_dataset *ds = dataset_new(j->path, j->o, "cgnn_graph_store_run");
    if (!ds) return err_set(err, CGNN_ERR_RUNTIME, "cgnn_graph_store_run: out of memory");
    ds->d = *group;
    ds->parted = 1;
    graph_source_init(&ds->src, &ds->so, &ds->d, gc);
    const int threads = j->o->threads > 0 ? j->o->threads : 1; /* (a compute rank's loader only asks) */
    int rc = graph_source_load_begin(&ds->src, err);
    if (rc == 0) {
        const int bad = open_part(ds, j->o, threads, err) != 0;
        const sampler_config no_cache = {0};
        rc = graph_source_load_check(&ds->src, bad, &no_cache, err); /* collective over the compute ranks */
    }
    if (rc != 0) {
        graph_source_free(&ds->src);
        free(ds);
        return -1;
    }
    graph_source_load_end(&ds->src);
    g_partitions_open++;
    cgnn_error ue = {0};
    const int urc = j->compute(j->ctx, ds, &ue);
    CGNN_CHECK(ds->loaders == 0); /* (the header's contract: the compute function frees its loaders) */
    cgnn_dataset_close(ds);
    if (urc == 0) return 0;
    return err_set(err, ue.code > 0 ? ue.code : CGNN_ERR_RUNTIME, "%s",
                   ue.message[0] ? ue.message : "the compute function failed (no message)");
}

/* The library declares no output of its own (the storage ranks' guard holds its inputs only). */
static int store_declare_none(void *ctx, outguard *g, cgnn_err *err) {
    (void)ctx, (void)g, (void)err;
    return 0;
}

int cgnn_graph_store_run(const char *path, int num_storage_ranks, const cgnn_dataset_options *o,
                         cgnn_compute_fn compute, void *ctx, cgnn_error *err) {
    const int orc = check_dataset_options(o, "cgnn_graph_store_run", err);
    if (orc != CGNN_OK) return orc;
    if (!path || !path[0]) return fail_arg(err, "cgnn_graph_store_run: path is empty");
    if (!compute) return fail_arg(err, "cgnn_graph_store_run: compute is NULL");
    if (num_storage_ranks < 1) return fail_arg(err, "cgnn_graph_store_run: num_storage_ranks %d (>= 1)", num_storage_ranks);
    int rc = cgnn_dist_init(err);
    if (rc != CGNN_OK) return rc;
    if (num_storage_ranks >= g_dist.size)
        return fail_arg(err, "cgnn_graph_store_run: num_storage_ranks %d, but the job has %d ranks (the storage ranks "
                             "and at least one compute rank)", num_storage_ranks, g_dist.size);
    log_level = 0;
    task_config *tc = calloc(1, sizeof *tc);
    if (!tc) return fail_arg(err, "cgnn_graph_store_run: out of memory");
    config_default_trainer_args(&tc->args, TASK_NODE_CLASSIFICATION); /* (no feature cache) */
    tc->args.rpc_timeout_s = o->rpc_timeout_s;
    snprintf(tc->dataset_path, sizeof tc->dataset_path, "%s", path);
    snprintf(tc->file, sizeof tc->file, "cgnn_graph_store_run");
    resource_config res;
    memset(&res, 0, sizeof res);
    res.graph_store = 1;
    res.storage_replicas = num_storage_ranks;
    res.compute_replicas = g_dist.size - num_storage_ranks;
    res.num_threads_per_replica = o->threads;
    cgnn_err e = {0};
    graph_store_layout lay;
    if (graph_store_layout_of(&res, g_dist.size, g_dist.rank, &lay, &e) != 0) { /* the same on every rank */
        free(tc);
        return fail(err, &e);
    }
    dist_ctx group;
    dist_split(&g_dist, lay.storage, &group);
    dist_rpc *rpc = NULL;
    store_job j = {path, o, compute, ctx};
    int status;
    if (dist_phase_failed(&g_dist, dist_rpc_create(&rpc, &g_dist, &e) != 0, &e))
        status = e.code ? e.code : CGNN_ERR_RUNTIME;
    else
        status = graph_store_serve(tc, &res, &g_dist, &group, rpc, &lay, store_compute, store_declare_none, &j, &e);
    dist_rpc_free(rpc);
    dist_split_free(&group);
    free(tc);
    if (status == 0) return CGNN_OK;
    if (!e.msg[0]) err_set(&e, status, "cgnn_graph_store_run: another rank failed (status %d)", status);
    e.code = status;
    return fail(err, &e);
}

int cgnn_dataset_num_node_types(const cgnn_dataset *ds) { return ds->src.ds->num_node_types; }
int cgnn_dataset_num_edge_types(const cgnn_dataset *ds) { return ds->src.ds->num_edge_types; }

const char *cgnn_dataset_node_type(const cgnn_dataset *ds, int type) {
    return type >= 0 && type < ds->src.ds->num_node_types ? ds->src.ds->node_types[type].name : NULL;
}

const char *cgnn_dataset_edge_type(const cgnn_dataset *ds, int etype) {
    return etype >= 0 && etype < ds->src.ds->num_edge_types ? ds->src.ds->edge_types[etype].name : NULL;
}

/* (a part's own dataset holds its own nodes and edges: the whole graph's counts are the partition's) */
int64_t cgnn_dataset_num_nodes(const cgnn_dataset *ds, int type) {
    if (type < 0 || type >= ds->src.ds->num_node_types) return -1;
    if (!ds->parted) return ds->src.ds->node_types[type].num_nodes;
    return ds->typed ? ds->src.pb.type_nodes[type] : graph_source_num_nodes(&ds->src);
}

int64_t cgnn_dataset_num_edges(const cgnn_dataset *ds, int etype) {
    if (etype < 0 || etype >= ds->src.ds->num_edge_types) return -1;
    if (!ds->parted) return ds->src.ds->edge_types[etype].edges.num_edges;
    if (!ds->typed) return graph_source_num_edges(&ds->src);
    const partbook *pb = &ds->src.pb;
    return pb->etype_map[(size_t)etype * (size_t)(pb->num_parts + 1) + (size_t)pb->num_parts];
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
    if (t && ds->parted) t = t == ds->src.task ? ds->src.gtask : NULL; /* (the whole split's size) */
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
    if (ds->parted && *task != ds->src.task)
        return fail_arg(err, "cgnn_loader_options.task: %d ('%s'): the partition %s was opened for task '%s' "
                             "(cgnn_dataset_options.task)", o->task, (*task)->name, ds->path, ds->src.task->name);
    if (ds->parted && o->world_size != 1 && (o->rank != ds->d.rank || o->world_size != ds->d.size))
        return fail_arg(err, "cgnn_loader_options.rank / world_size: %d / %d: a partition's loaders are sliced by the "
                             "job (rank %d of %d); leave them 0 / 1", o->rank, o->world_size, ds->d.rank, ds->d.size);
    if (ds->parted && o->anchor_batching)
        return fail_arg(err, "cgnn_loader_options.anchor_batching: not available on a partitioned graph yet (as in "
                             "`cgnn train`): batch pairs, or open the whole dataset");
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
    graph_source_loader_request r = {
        .split = (ds_split_id)o->split,
        .num_layers = o->num_layers,
        .replace = o->replace != 0,
        .batch_size = o->batch_size,
        .shuffle = o->shuffle < 0 ? o->split == CGNN_SPLIT_TRAIN : o->shuffle != 0,
        .drop_last = o->drop_last != 0,
        .drop_uneven = o->drop_uneven != 0,
        .seed = o->seed,
        .world_size = ds->src.d->size > 1 || ds->src.local_seeds ? 0 : o->world_size, /* (0: the source slices) */
        .rank = o->rank,
        .num_workers = o->num_workers,
        .prefetch = o->prefetch,
        .normalize_rows = o->normalize_features != 0,
        .num_negatives = o->num_negatives,
        .exclude_seed_edges = o->exclude_seed_edges != 0,
        .anchor_batches = o->anchor_batching != 0,
        .max_labels_per_anchor = o->max_labels_per_anchor,
    };
    for (int h = 0; h < o->num_layers; h++) r.fanouts[h] = o->fanouts[h];
    loader_config lc;
    graph_source_rows rows;
    graph_source_loader_prepare(&ds->src, task, &r, &lc, &rows);
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
    if (graph_source_loader_open(&ds->src, task, (ds_split_id)o->split, &lc, &rows, &l->ld, &e) != 0) {
        free(l);
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
    for (int q = 0; q < l->ld.queue_depth; q++) free(l->held[q].orig);
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
    cgnn_batch *b = &l->held[slot];
    if (l->ds->parted && !l->ds->typed) { /* (a typed part's loader renames its batches itself) */
        if (b->orig_cap < mb->num_input_nodes) {
            free(b->orig);
            b->orig_cap = mb->num_input_nodes;
            b->orig = malloc((size_t)b->orig_cap * sizeof *b->orig);
            CGNN_CHECK(b->orig);
        }
        const int64_t *orig_of_new = l->ds->src.pb.orig_of_new;
        for (int64_t i = 0; i < mb->num_input_nodes; i++) b->orig[i] = orig_of_new[mb->input_nodes[i]];
    }
    b->mb = mb;
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
            array1(out, ty ? ty->nodes[index] : b->orig ? b->orig : mb->input_nodes, CGNN_INT64, n);
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
