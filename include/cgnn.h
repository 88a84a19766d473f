/* cgnn.h — cgnn as a library: open a graph in DGL GraphBolt's on-disk format, sample mini-batches
 * from it with the loader `cgnn train` runs (the same module, sample/loader.c: the same batches
 * for the same seed), and read each batch's arrays.
 *
 *   cgnn_dataset *ds;  cgnn_loader *ld;  cgnn_batch *b;  cgnn_error e;
 *   cgnn_dataset_open("data/cora", 0, &ds, &e);
 *   cgnn_loader_options o;  cgnn_loader_options_init(&o);
 *   o.batch_size = 512;  o.num_layers = 2;  o.fanouts[0] = 10;  o.fanouts[1] = 5;
 *   cgnn_loader_create(ds, &o, &ld, &e);
 *   cgnn_loader_start_epoch(ld, 0, &e);
 *   while (cgnn_loader_next(ld, &b, &e) == CGNN_OK && b) {
 *       cgnn_array x;  cgnn_batch_array(b, CGNN_FIELD_FEATURES, 0, &x, &e);  ...
 *       cgnn_batch_release(b);
 *   }
 *   cgnn_loader_free(ld);  cgnn_dataset_close(ds);
 *
 * Contracts, for every function below:
 * - Errors: a function that can fail returns a cgnn_status (CGNN_OK is 0) and, on failure, fills
 *   *err (err may be NULL) with the code and a message naming the file, field or argument. The
 *   library never prints and never exits; a broken internal invariant (a bug in cgnn) aborts.
 * - Handles are opaque. Every create / open has a free / close, NULL-safe. A dataset must outlive
 *   its loaders; a loader must outlive its batches.
 * - Threads: a dataset may serve several loaders at once; one loader, and its batches, are used by
 *   one thread at a time. A loader runs its own sampler threads (num_workers) in the background.
 * - Lifetimes: a batch and its arrays belong to the loader; they stay valid, unchanged, until
 *   cgnn_batch_release (across cgnn_loader_start_epoch too). A loader has `prefetch` buffers
 *   used in turn: when the next batch's buffers are those of a batch still held,
 *   cgnn_loader_next refuses with CGNN_ERROR_ARGUMENT naming it (never an overwrite or a hang).
 *   Holding the previous batch while asking for the next is always fine (prefetch >= 2).
 * - Determinism: batch b of an epoch is a function of (dataset, options, seed, epoch, b) only:
 *   not of num_workers, prefetch or timing.
 * - Ids: node ids are per node type (0 .. the type's count); a homogeneous graph has one type.
 *
 * This version opens whole graphs (one process, or data-parallel ranks each slicing the splits by
 * rank / world_size); the partitioned graph's and server-client mode's loaders come next.
 */
#ifndef CGNN_H
#define CGNN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CGNN_API __attribute__((visibility("default")))
#else
#define CGNN_API
#endif

#define CGNN_VERSION_MAJOR 0
#define CGNN_VERSION_MINOR 2
#define CGNN_VERSION_PATCH 0
#define CGNN_VERSION_STRING "0.2.0"
/* CGNN_VERSION_MAJOR * 10000 + MINOR * 100 + PATCH of the library at run time (compare with the
 * macros: the header compiled against). */
CGNN_API int cgnn_version(void);

typedef enum cgnn_status {
    CGNN_OK = 0,
    CGNN_ERROR_RUNTIME = 1,  /* an I/O failure or a resource exhausted while running */
    CGNN_ERROR_INPUT = 2,    /* bad data: a dataset file, its metadata or a split */
    CGNN_ERROR_ARGUMENT = 3  /* a bad argument of the call (the message names it) */
} cgnn_status;

typedef struct cgnn_error {
    int code;                /* a cgnn_status */
    char message[2048];
} cgnn_error;

/* ---- datasets ---------------------------------------------------------------------------- */

typedef struct cgnn_dataset cgnn_dataset;

/* Opens the dataset at path (a GraphBolt dataset directory or its metadata.yaml): every array is
 * validated and memory-mapped, and each edge type's in-neighbour index built (or read from the
 * dataset's cache, as `cgnn train` does). threads: for building the index (0: all cores). */
CGNN_API int cgnn_dataset_open(const char *path, int threads, cgnn_dataset **out, cgnn_error *err);
CGNN_API void cgnn_dataset_close(cgnn_dataset *ds);

/* ---- a partitioned graph under mpirun (graphlearn-for-pytorch's worker mode) ----
 * A `cgnn partition` output opens on every rank of an MPI job (`mpirun -np R prog`, R a multiple
 * of the parts P): rank r holds part r % P and reaches the others through their ranks, as
 * `cgnn train` does on parts. Opening and closing it are collective (every rank, in the same
 * order); its loaders' batches are the whole graph's: node ids are original ids, features and
 * labels the same as on the whole graph, and with CGNN_SEEDS_GLOBAL each rank's batches equal those
 * of the whole graph's loader with rank = cgnn_dist_rank() and world_size = cgnn_dist_size().
 * A whole graph never joins the job (each process opens its own; slice with rank / world_size). */
typedef enum cgnn_seed_assignment {
    CGNN_SEEDS_LOCAL = 0,  /* each rank the seeds its part owns, sliced among the part's ranks */
    CGNN_SEEDS_GLOBAL = 1, /* every rank slices the whole split, as on the whole graph */
} cgnn_seed_assignment;
typedef struct cgnn_dataset_options {
    int threads;            /* index building and loading threads (0: every core / ranks per host) */
    int task;               /* a partition: the task whose seeds the ranks split (-1: the first) */
    int seed_assignment;    /* a partition: a cgnn_seed_assignment (default CGNN_SEEDS_LOCAL) */
    double rpc_timeout_s;   /* a partition: a peer silent this long is an error (default 60) */
    const char *node_feature; /* the node feature the loaders gather (feature_data[*].name; copied):
                                 NULL or "" = "feat", else each type's first; a name that a type
                                 with node features lacks is CGNN_ERROR_INPUT naming them (0.2) */
} cgnn_dataset_options;
CGNN_API void cgnn_dataset_options_init(cgnn_dataset_options *o);
/* cgnn_dataset_open with options; on a partition, collective: it joins the MPI job first
 * (cgnn_dist_init). A partition's loaders take its task only. */
CGNN_API int cgnn_dataset_open_with(const char *path, const cgnn_dataset_options *o, cgnn_dataset **out,
                                    cgnn_error *err);
/* 1 when ds is a part of a partitioned graph. */
CGNN_API int cgnn_dataset_is_partition(const cgnn_dataset *ds);

/* Joins the MPI job this process was launched in (MPI_Init_thread, MPI_THREAD_MULTIPLE), once; a
 * process not launched by mpirun is a world of one and starts no MPI. Idempotent. */
CGNN_API int cgnn_dist_init(cgnn_error *err);
CGNN_API int cgnn_dist_rank(void); /* 0 before cgnn_dist_init */
CGNN_API int cgnn_dist_size(void); /* 1 before cgnn_dist_init */
/* Leaves the job (MPI_Finalize, where cgnn_dist_init started MPI), after every partition is
 * closed; collective. Nothing distributed can be opened afterwards. */
CGNN_API void cgnn_dist_finalize(void);

/* ---- server-client mode (GiGL's graph-store mode, graphlearn-for-pytorch's server-client) ----
 * Under mpirun, S storage ranks hold a `cgnn partition` output (P parts, P a multiple of S) and
 * build every batch; the other T = world - S ranks compute (world ranks 0 .. T-1; storage ranks
 * T .. T+S-1, as `cgnn train` with a graph-store resource config). Collective: every rank of the
 * job calls cgnn_graph_store_run with the same path, num_storage_ranks and options (task,
 * seed_assignment, rpc_timeout_s; threads: each storage rank's sampler threads, 0 = its share of
 * the cores). It joins the job (cgnn_dist_init) and then:
 *   compute rank  opens the partition as a dataset whose loaders ask the storage ranks for their
 *                 batches (cgnn_dataset_is_partition is 1, the loaders' rank / world_size are
 *                 the compute ranks': cgnn_dataset_compute_rank / _size), calls
 *                 compute(ctx, ds, err), and closes the dataset; compute must free every loader
 *                 it created before it returns (checked: an abort otherwise) and must not close
 *                 ds. The batches are bitwise those of the same loader on the partition in
 *                 worker mode with T ranks (and those of the whole graph with seed_assignment
 *                 CGNN_SEEDS_GLOBAL).
 *   storage rank  serves batches until every compute rank's function returned.
 * Returns CGNN_OK on every rank when every compute rank's function returned 0; otherwise the
 * first failing status (a compute function's nonzero return is CGNN_ERROR_RUNTIME unless it set
 * err->code), with the message on the rank that failed. */
typedef int (*cgnn_compute_fn)(void *ctx, cgnn_dataset *ds, cgnn_error *err);
CGNN_API int cgnn_graph_store_run(const char *path, int num_storage_ranks, const cgnn_dataset_options *o,
                                  cgnn_compute_fn compute, void *ctx, cgnn_error *err);
/* The loaders' slice: this rank among the ranks that iterate (the compute ranks in server-client
 * mode; the job's ranks on a partition; 0 and 1 on a whole graph). */
CGNN_API int cgnn_dataset_compute_rank(const cgnn_dataset *ds);
CGNN_API int cgnn_dataset_compute_size(const cgnn_dataset *ds);
/* Loaders of ds not yet freed (a dataset is closed, and a compute function returns, with none). */
CGNN_API int cgnn_dataset_num_loaders(const cgnn_dataset *ds);

CGNN_API int cgnn_dataset_num_node_types(const cgnn_dataset *ds);              /* 1: homogeneous */
CGNN_API int cgnn_dataset_num_edge_types(const cgnn_dataset *ds);
CGNN_API const char *cgnn_dataset_node_type(const cgnn_dataset *ds, int type);  /* its name; NULL: no such type */
CGNN_API const char *cgnn_dataset_edge_type(const cgnn_dataset *ds, int etype); /* "src:relation:dst" */
CGNN_API int64_t cgnn_dataset_num_nodes(const cgnn_dataset *ds, int type);      /* -1: no such type */
CGNN_API int64_t cgnn_dataset_num_edges(const cgnn_dataset *ds, int etype);
/* The width of the features the loaders gather for node type `type` (its feature "feat", else its
 * first node feature); 0: the type has none (a model gives it learnable rows). */
CGNN_API int64_t cgnn_dataset_feature_dim(const cgnn_dataset *ds, int type);

typedef enum cgnn_task_kind { CGNN_TASK_NODE_CLASSIFICATION = 0, CGNN_TASK_LINK_PREDICTION = 1 } cgnn_task_kind;
typedef enum cgnn_split { CGNN_SPLIT_TRAIN = 0, CGNN_SPLIT_VALIDATION = 1, CGNN_SPLIT_TEST = 2 } cgnn_split;

CGNN_API int cgnn_dataset_num_tasks(const cgnn_dataset *ds);
CGNN_API const char *cgnn_dataset_task_name(const cgnn_dataset *ds, int task); /* NULL: no such task */
CGNN_API int cgnn_dataset_task_kind(const cgnn_dataset *ds, int task);         /* a cgnn_task_kind; -1: none */
/* Node classification: the seeds' node type; link prediction: the pairs' edge type. */
CGNN_API int cgnn_dataset_task_type(const cgnn_dataset *ds, int task);
CGNN_API int64_t cgnn_dataset_num_classes(const cgnn_dataset *ds, int task);  /* 0: not given */
/* The split's items (nodes, or pairs), -1 when the task has no such split. */
CGNN_API int64_t cgnn_dataset_split_size(const cgnn_dataset *ds, int task, int split);

/* ---- loaders ----------------------------------------------------------------------------- */

#define CGNN_MAX_LAYERS 8
#define CGNN_MAX_EDGE_TYPES 64
#define CGNN_MAX_NODE_TYPES 32

/* cgnn_loader_options_init's defaults are given beside each field. */
typedef struct cgnn_loader_options {
    int task;                     /* the dataset's task index (0) */
    int split;                    /* a cgnn_split (CGNN_SPLIT_TRAIN) */
    int64_t batch_size;           /* items per batch: seeds, pairs, or (anchor_batching) anchors (1024) */
    int num_layers;               /* hops sampled (2); 0: the seeds alone */
    /* neighbours per node per hop, hop 0 nearest the seeds (PyG's num_neighbors order); -1: all */
    int64_t fanouts[CGNN_MAX_LAYERS];                       /* (10, 10, ...) */
    /* typed graphs: per hop and edge type (overrides fanouts); -2: fanouts[h] (all -2) */
    int64_t edge_type_fanouts[CGNN_MAX_LAYERS][CGNN_MAX_EDGE_TYPES];
    int replace;                  /* sample with replacement (0) */
    int shuffle;                  /* a new order every epoch (1 for the train split, else 0) */
    int drop_last;                /* drop the last, smaller batch (0) */
    uint64_t seed;                /* every draw's key (42) */
    int rank, world_size;         /* data parallel: this rank's contiguous slice of one shuffle (0, 1) */
    int drop_uneven;              /* every rank runs the fewest batches of any rank (0: the last
                                     ranks get one batch fewer; DDP's Join) */
    int num_workers;              /* sampler threads (2); 0: each batch built in cgnn_loader_next */
    int prefetch;                 /* batch buffers, used in turn (0: num_workers + 1; at least 2) */
    int normalize_features;       /* divide each feature row by its L1 norm (0) */
    /* link prediction (a pair task) */
    int64_t num_negatives;        /* random negative nodes per batch, shared by its pairs (0) */
    int exclude_seed_edges;       /* no sampled edge between a batch's own pairs' nodes (0) */
    int anchor_batching;          /* GiGL's DistABLPLoader: batch_size anchors with their positives (0) */
    int64_t max_labels_per_anchor; /* anchor batching: the first N positives of each anchor (0: all) */
} cgnn_loader_options;

CGNN_API void cgnn_loader_options_init(cgnn_loader_options *o);

typedef struct cgnn_loader cgnn_loader;
typedef struct cgnn_batch cgnn_batch;

/* A loader over split `o->split` of task `o->task`. Returns CGNN_ERROR_ARGUMENT naming the option
 * for a bad one, CGNN_ERROR_INPUT for bad split data. */
CGNN_API int cgnn_loader_create(cgnn_dataset *ds, const cgnn_loader_options *o, cgnn_loader **out, cgnn_error *err);
CGNN_API void cgnn_loader_free(cgnn_loader *l);  /* stops its threads; every batch must be released */
/* Batches of one epoch on this rank (with drop_uneven: every rank's). */
CGNN_API int64_t cgnn_loader_num_batches(const cgnn_loader *l);
/* Starts epoch `epoch` (its order and draws are keyed by it). Batches still held stay valid; the
 * new epoch's first batch takes the buffers after the last one handed out. */
CGNN_API int cgnn_loader_start_epoch(cgnn_loader *l, int64_t epoch, cgnn_error *err);
/* The epoch's next batch into *out, in order; *out NULL (CGNN_OK) at the end of the epoch. */
CGNN_API int cgnn_loader_next(cgnn_loader *l, cgnn_batch **out, cgnn_error *err);
CGNN_API void cgnn_batch_release(cgnn_batch *b);  /* NULL-safe */

/* ---- batches ------------------------------------------------------------------------------
 * Layout (DGL's message-flow blocks, PyG's node order; typed graphs per type as PyG's HeteroData):
 * a batch samples num_layers hops from its seeds; layer l's block (l = 0 consumes the input rows,
 * l = num_layers - 1 produces the seeds' rows) lists its destination nodes first: local ids
 * [0, num_dst) are its dst, [0, num_src) its src, and the dst of block l are the first nodes of
 * its src. Edges are CSR by destination: dst i's in-neighbours are indices[indptr[i] ..
 * indptr[i + 1]). Local ids index the batch's node list (CGNN_FIELD_NODES). */

typedef enum cgnn_dtype { CGNN_INT32 = 0, CGNN_INT64 = 1, CGNN_FLOAT32 = 2 } cgnn_dtype;

typedef struct cgnn_array {
    const void *data;             /* valid until the batch is released; NULL when empty */
    int dtype;                    /* a cgnn_dtype */
    int ndim;                     /* 1 or 2, C order */
    int64_t shape[2];
} cgnn_array;

typedef enum cgnn_field {
    /* index: the node type (0 on a homogeneous graph) */
    CGNN_FIELD_NODES = 0,         /* int64 (n): the nodes, seeds first (PyG n_id) */
    CGNN_FIELD_FEATURES = 1,      /* float32 (n, F): their feature rows (PyG x); none when F = 0 */
    /* index: layer * num_edge_types + edge type (layer alone on a homogeneous graph) */
    CGNN_FIELD_BLOCK_INDPTR = 2,  /* int64 (num_dst + 1) */
    CGNN_FIELD_BLOCK_INDICES = 3, /* int32 (edges): local src ids */
    /* index 0 */
    CGNN_FIELD_ITEMS = 4,         /* int64 (items): the split rows of the batch's items */
    CGNN_FIELD_LABELS = 5,        /* int64 (items): their labels (node classification) */
    /* int32: each item's output row among the seeds (local ids of its type). Node items: (items);
     * pairs: (2 * items + listed + negatives) = [anchors | positives | listed negatives | random
     * negatives], the rows of the two end types stacked when they differ */
    CGNN_FIELD_ITEM_ROWS = 6,
    CGNN_FIELD_LISTED_OFFSET = 7, /* int64 (items): pair i's listed negatives start here ... */
    CGNN_FIELD_LISTED_COUNT = 8   /* int64 (items): ... and are this many */
} cgnn_field;

typedef struct cgnn_batch_info {
    int64_t epoch, index;         /* the epoch and the batch's index in it (this rank's numbering) */
    int num_layers;
    int num_node_types, num_edge_types;
    int64_t num_items;            /* seed items: nodes, or pairs */
    int64_t num_negatives;        /* link prediction: random negatives */
    int64_t num_listed;           /* link prediction with labelled pairs: the listed negatives */
    int64_t num_seeds;            /* distinct seed nodes (all types) */
    int64_t num_sampled_edges;
} cgnn_batch_info;

CGNN_API void cgnn_batch_info_get(const cgnn_batch *b, cgnn_batch_info *out);
/* Nodes of `type` reached after `hop` hops (hop 0: the seeds; num_layers: every node). */
CGNN_API int64_t cgnn_batch_num_nodes(const cgnn_batch *b, int type, int hop);
/* One array of the batch; CGNN_ERROR_ARGUMENT for a field or index the batch does not have. */
CGNN_API int cgnn_batch_array(const cgnn_batch *b, int field, int index, cgnn_array *out, cgnn_error *err);

#ifdef __cplusplus
}
#endif

#endif
