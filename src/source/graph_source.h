/* graph_source.h — where the graph lives: one interface over the three ways a training rank
 * reaches the graph (docs/DISTRIBUTED.md), chosen once at start-up by graph_source_init, one
 * implementation per way:
 *
 *   whole  (source_whole.c)  the whole dataset and its in-neighbour index in this process: one
 *                            process, or one replica per rank under mpirun (rank 0 builds and
 *                            caches the index first, the others map the cache). Seeds: the whole
 *                            splits sliced over the ranks, or (seed assignment local) the rows
 *                            whose anchor a part of seed_partition_uri owns.
 *   part   (source_part.c)   worker mode: part rank % P of a `cgnn partition` output (its index,
 *                            feature rows and splits; graph/partbook.h) and the other parts through
 *                            the ranks holding them: PICK / FEAT / EMB requests (sample/part_rpc.h)
 *                            answered by this rank's service thread, remote feature rows through
 *                            the feature cache (sample/feat_cache.h); a learnable embedding table
 *                            holds this part's rows only (a shard).
 *   store  (source_store.c)  a compute rank of server-client mode (train/graph_store.h): no part,
 *                            only the partition JSON, the whole splits and the id maps; a storage
 *                            rank builds every batch (BATCH, sample/batch_rpc.h).
 *
 * One training batch, per source:
 *   whole  sample on the local index → gather the local feature rows
 *   part   sample the own frontier nodes locally, the others with one PICK per owning part per
 *          hop → own feature rows locally, the others' with FEAT through the cache
 *   store  one BATCH request (the seed list) to a storage rank, which samples and gathers there
 *
 * The trainer calls the functions below without knowing the kind. What differs is the source's
 * business; what the trainer refuses on a kind (a model or an option a source cannot serve yet)
 * is the trainer's, and it reads `kind` for that.
 *
 * Life cycle, on every rank of the job, in this order ("collective": every rank of d calls it, and
 * what it calls collectively is the same on every rank):
 *   graph_source_init          choose the kind (no I/O beyond a look at the dataset path)
 *   graph_source_load_begin    collective: before any rank opens anything
 *   graph_source_open          the data: ds (and the partition book)
 *   graph_source_set_task      the task the job trains on; its whole splits (gtask)
 *   graph_source_open_index    a homogeneous graph: the index the samplers read (g)
 *   graph_source_assign_seeds  the split rows this rank takes (graph_source_split_rows)
 *   graph_source_open_typed    a typed graph: tg
 *   graph_source_embedding_init, graph_source_serve, the loaders (graph_source_split_rows,
 *   graph_source_loader_config), graph_source_batch_capacity
 *   graph_source_load_check    collective: every rank's setup succeeded; part: the feature cache
 *   graph_source_load_end      collective: the end of the loading phase
 *   training                   graph_source_prepare_batch, graph_source_gather_embedding,
 *                              graph_source_embedding_step (collective), graph_source_table_*
 *   graph_source_stop          collective: no rank asks any other for anything any more
 *   graph_source_free
 * A failed call leaves the source to graph_source_free; a collective one fails on every rank.
 *
 * Adding a kind: its value below, its implementation (a source_X.c defining source_X_ops,
 * source_impl.h) and graph_source_init's choice.
 */
#ifndef CGNN_GRAPH_SOURCE_H
#define CGNN_GRAPH_SOURCE_H

#include <stdint.h>

#include "dist/dist.h"
#include "dist/dist_rpc.h"
#include "graph/csc.h"
#include "graph/partbook.h"
#include "graph/typed_graph.h"
#include "io/dataset.h"
#include "io/outguard.h"
#include "nn/embedding.h"
#include "sample/batch_rpc.h"
#include "sample/feat_cache.h"
#include "sample/gather.h"
#include "sample/loader.h"
#include "sample/minibatch.h"
#include "sample/part_rpc.h"
#include "sample/sampler.h"
#include "sample/typed_sampler.h"
#include "util/err.h"

/* What a compute rank of server-client mode holds of the job (train/graph_store.h fills it in and
 * hands it to the compute job: trainer_options.graph_store, server-client `cgnn embed`). */
typedef struct graph_store_client {
    dist_rpc *rpc;                /* the world's, started */
    int num_storage, num_compute; /* S, T */
    int first_storage;            /* the world rank of storage rank 0 (= T) */
    int parts_per_storage;        /* k = P / S */
    int has_feat;                 /* the parts have node features: */
    int64_t feat_dim;             /*   their width */
    int feat_dtype;               /*   and npy dtype */
    int typed;                    /* a typed partition: each node type's rows (the parts' features) */
    int64_t type_feat_dim[MINIBATCH_MAX_NODE_TYPES]; /* 0: featureless */
    int type_feat_dtype[MINIBATCH_MAX_NODE_TYPES];   /* npy dtype, -1: featureless */
} graph_store_client;

typedef enum graph_source_kind {
    GRAPH_SOURCE_NONE,  /* not chosen (a zeroed source) */
    GRAPH_SOURCE_WHOLE, /* the whole graph in this process (replicated under mpirun) */
    GRAPH_SOURCE_PART,  /* worker mode: one part here, the others through their ranks */
    GRAPH_SOURCE_STORE, /* server-client mode's compute rank: storage ranks build the batches */
    GRAPH_SOURCE_KIND_COUNT
} graph_source_kind;

/* trainerArgs.seed_assignment: which split rows a rank takes. */
typedef enum graph_source_seeds {
    GRAPH_SOURCE_SEEDS_AUTO,   /* local where the graph is partitioned (and, server-client, it fits) */
    GRAPH_SOURCE_SEEDS_LOCAL,  /* rank r: the rows whose anchor part r % P owns, sliced among its ranks */
    GRAPH_SOURCE_SEEDS_GLOBAL, /* every rank slices the whole split */
    GRAPH_SOURCE_SEEDS_COUNT
} graph_source_seeds;

/* What the source takes from the job's configuration (graph_source_init copies it; the strings
 * are borrowed and must outlive the source). */
typedef struct graph_source_options {
    const char *config_file;        /* the task config: errors name it */
    const char *dataset_path;       /* sharedConfig.preprocessedMetadataUri */
    graph_source_seeds seed_assignment;
    const char *seed_partition;     /* trainerArgs.seed_partition_uri ("": none) */
    const char *node_feature;       /* trainerArgs.node_feature (NULL or "": "feat", else the first) */
    double rpc_timeout_s;           /* part: a silent peer is an error after this long */
    /* part: the feature cache (trainerArgs.cache_*; FEAT_CACHE_NONE: none) */
    feat_cache_policy cache_policy;
    double cache_ratio;
    int64_t cache_budget;
    int64_t cache_presample_batches;
    uint64_t seed;                  /* trainerArgs.seed (the cache's pre-sampling key) */
    int64_t batch_size;
    int64_t prefetch_size;          /* store: batches in flight per loader */
    int fault_rank;                 /* tests: CGNN_TEST_RPC_STALL_S stalls this rank's server (-1: all) */
} graph_source_options;

/* One split's rows as a rank takes them: the items and the slicing (item_sampler's rank of world). */
typedef struct graph_source_rows {
    const int64_t *seeds;   /* (items, seed width) */
    const int64_t *labels;  /* (items) or NULL */
    const int64_t *indexes; /* (items) or NULL */
    int64_t items;
    int rank, world;
} graph_source_rows;

/* What the ranks compare before the first model-sized collective (dist_check_agreement), besides
 * the counts and the splits: the numbers the trainer's fingerprint fields hold. */
typedef struct graph_source_ids {
    int64_t layout;         /* the graph's layout: 0 whole, 1 parts, 2 storage ranks */
    int64_t partition;      /* CRC-32 of the partition id (part, store, or seed_partition_uri's; 0: none) */
    int64_t num_parts;      /* that partition's parts (0: none) */
    int64_t edges;          /* the edges: the index's CRC-32s, or on parts the partition id's */
    int64_t feature_rows;   /* the node feature rows (on parts: the whole graph's nodes) */
    int64_t feature_values; /* CRC-32 of 66 fixed rows of every feature array (0 on parts) */
} graph_source_ids;

/* Builds a homogeneous index into *g for graph_source_open_index (the trainer's own build: a
 * self-supervised split's index without its held-out edges). 0, or -1 with *err. */
typedef int (*graph_source_index_fn)(void *ctx, csc_graph *g, cgnn_err *err);

struct graph_source_ops;

/* Fields above the per-kind part are read by the caller (read-only), valid from the call that
 * sets them on; everything is owned by the source unless said. */
typedef struct graph_source {
    graph_source_kind kind;
    const struct graph_source_ops *ops; /* the kind's implementation (source_impl.h) */
    graph_source_options opt;
    const dist_ctx *d;        /* the ranks of the job (borrowed) */
    int threads;              /* compute threads (graph_source_open) */
    /* graph_source_open */
    const dataset *ds;        /* what the job reads: the whole dataset, this rank's part, or (store)
                                 the whole splits (pb.global); NULL until opened */
    const csc_graph *g;       /* homogeneous: the index the samplers read (whole: from
                                 graph_source_open_index; part: the part's; store: NULL) */
    /* graph_source_set_task (borrowed from ds, pb or the caller) */
    const ds_task *task;      /* the task the job trains on (on a part: the part's own splits) */
    const ds_task *gtask;     /* the same task's whole splits (part: pb.global's; else task) */
    /* graph_source_open_typed: a typed graph's indexes (whole), the part's view (part, borrowing
     * pb's indexes) or the whole graph's shape alone (store). The caller may replace a whole
     * graph's edge type (typed_graph_replace). */
    typed_graph tg;
    /* graph_source_assign_seeds: with local seeds, this rank takes its own rows
     * (graph_source_split_rows) and slices them as seed_group of seed_groups ranks */
    int local_seeds;
    int seed_group, seed_groups;
    int64_t *sel_seeds[DS_SPLIT_COUNT], *sel_labels[DS_SPLIT_COUNT], *sel_indexes[DS_SPLIT_COUNT];
    int64_t sel_n[DS_SPLIT_COUNT]; /* whole, store: the rows kept by anchor owner (owned) */
    /* the partition book: part: the JSON and this rank's part; store: the JSON, the whole splits
     * and the id maps; whole: seed_partition_uri's JSON and id maps (num_parts 0: none) */
    partbook pb;
    int64_t *key_nodes;       /* part, store: (max input nodes) a batch's original ids (dropout keys) */
    union {
        struct {
            dataset ds;       /* the dataset */
            csc_graph g;      /* its index (cached in the cache folder, io/cachedir.h), or the caller's */
        } whole;
        struct {
            dist_rpc *rpc;    /* the service thread answering the peers (created collectively) */
            sampler_part spart;        /* the part as the samplers see it (ranges, draw keys, sizes) */
            typed_sampler_part tspart; /* typed: the parts' per-type ranges and draw keys */
            part_rpc pr;      /* the handlers and the samplers' / gathers' remote callbacks */
            int have_pr;
            const embedding_table *table; /* the caller's table of this part's rows, or NULL (borrowed) */
            embedding_shard shard;
            gather_part_scratch emb_scratch; /* the consumer's remote embedding row fetches */
            feat_cache cache; /* remote feature rows in front of FEAT (sample/feat_cache.h) */
            int have_cache;
        } part;
        struct {
            const graph_store_client *gs; /* borrowed */
            batch_client bclient;         /* the loaders' remote batches */
            int have_bclient;
            ds_feature feat;              /* the storage ranks' node features: shape and dtype, no rows */
            ds_feature tfeat[MINIBATCH_MAX_NODE_TYPES]; /* the same per node type (typed) */
            csc_graph shape;              /* the whole graph's sizes only (the training state's fingerprint) */
        } store;
    };
} graph_source;

/* Chooses the kind: store when gs is given (this rank is a compute rank; gs borrowed), part when
 * o->dataset_path is a `cgnn partition` output (partbook_is_partition), else whole. Zeroes *s
 * first; opens nothing. d (borrowed) is the job's ranks (server-client: the compute ranks). */
void graph_source_init(graph_source *s, const graph_source_options *o, const dist_ctx *d,
                       const graph_store_client *gs);

/* Collective, before anything is opened. Part: creates the rpc layer (dist_rpc_create) and checks
 * every rank got it (dist_phase_failed). Whole: ranks other than 0 wait here until rank 0 reaches
 * graph_source_load_end (rank 0 builds and caches the index first, the others map it). Returns 0,
 * or -1 with *err on every rank. */
int graph_source_load_begin(graph_source *s, cgnn_err *err);

/* Opens the data with threads compute threads: the dataset (whole), part rank % P with its index
 * and the id maps (part: the world must fit the parts), or the JSON, the whole splits and the id
 * maps, checked against the storage ranks' description (store). Sets ds (and g on a homogeneous
 * part). Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the file for bad input). */
int graph_source_open(graph_source *s, int threads, cgnn_err *err);

/* The job trains on task (a task of ds, or the caller's: borrowed, outliving the source). Sets task
 * and gtask (part: the task of the same name in the whole splits, CGNN_ERR_INPUT when there is
 * none). Returns 0, or -1 with *err. */
int graph_source_set_task(graph_source *s, const ds_task *task, cgnn_err *err);

/* A homogeneous graph: the index the samplers read. Whole: build(ctx) builds it when given, else
 * the dataset's cached index is opened (or built and cached, csc_open_cached); sets g. Part and
 * store: nothing (g is the part's, or none). Returns 0, or -1 with *err. */
int graph_source_open_index(graph_source *s, graph_source_index_fn build, void *ctx, cgnn_err *err);

/* The seed assignment (opt.seed_assignment) after set_task: sets local_seeds, seed_group(s) and
 * the rows graph_source_split_rows gives. Whole: global by default; local reads seed_partition_uri
 * (its JSON must describe this dataset and fit the world) and keeps the rows whose anchor part
 * rank % P owns. Part: local by default, the part's own splits. Store: local when the compute ranks
 * are a multiple or a divisor of the parts; then routes this rank's batches to the storage ranks
 * (one BATCH client, batch b to peer b % n). Logs what it decided on rank 0 where the old code
 * did. Returns 0, or -1 with *err (CGNN_ERR_INPUT for an assignment that cannot be served). */
int graph_source_assign_seeds(graph_source *s, cgnn_err *err);

/* A typed graph, after assign_seeds: builds tg (whole: every edge type's index, typed_graph_open;
 * part: the part's view over its per-edge-type indexes; store: the whole graph's shape, and the
 * BATCH client learns it). Returns 0, or -1 with *err. */
int graph_source_open_typed(graph_source *s, cgnn_err *err);

/* The node features the model reads (borrowed, NULL: none): the options' node_feature, else the
 * dataset's "feat" (else its first node feature) (dataset_node_feature), or the storage ranks'
 * shape (store). graph_source_type_feature: node type k's
 * (typed). */
const ds_feature *graph_source_feature(const graph_source *s);
const ds_feature *graph_source_type_feature(const graph_source *s, int k);
/* The options' node_feature against the dataset: a name that a node type with node features (any
 * type of an untyped dataset) lacks is CGNN_ERR_INPUT, "WHAT: 'NAME' is not a node feature of DIR
 * [type T] (its node features: ...)"; 0 when it is there, or when no name was given. */
int graph_source_check_node_feature(const graph_source *s, const char *what, cgnn_err *err);

/* The whole graph's nodes and edges (a part's index holds its own nodes only): a typed graph's
 * from tg; whole: from the index (before it is built: the dataset's nodes); part, store: from the
 * partition. */
int64_t graph_source_num_nodes(const graph_source *s);
int64_t graph_source_num_edges(const graph_source *s);

/* The name errors give the graph: the partition JSON (part), else the dataset's directory. */
const char *graph_source_name(const graph_source *s);

/* What builds this rank's batches, for the start-up line: returns their count (workers sampler
 * threads; store: prefetch_size batches in flight) and sets *what to their description. */
int graph_source_producers(const graph_source *s, int workers, const char **what);

/* The learnable embedding table of a homogeneous graph: *e holds the rows this source reads (whole:
 * every node; part: its own nodes, row i drawn as the whole table's row of its original id, a
 * shard the part's services serve; store: every node in new ids, each drawn as its original id's
 * row), N(0, 1) from seed; the optimiser as embedding_init. Call before graph_source_serve; *e is
 * the caller's (borrowed by a part until graph_source_free). Returns 0, or -1 with *err. */
int graph_source_embedding_init(graph_source *s, embedding_table *e, int64_t dim, uint64_t seed, embedding_optim kind,
                                double lr, double beta1, double beta2, double eps, cgnn_err *err);
/* The original id of each row of the table (NULL: row i is node i): what the whole table's row i
 * is for loading a checkpoint's rows into it. */
const int64_t *graph_source_table_keys(const graph_source *s);
/* 1 when the table holds this rank's rows only (part): replicas differ by design. */
int graph_source_table_sharded(const graph_source *s);

/* Starts the services other ranks call (part: PICK / FEAT and, with a table, EMB; the feature cache
 * in front of FEAT when opt.cache_policy asks and there are features, filled by load_check): feat
 * are the own node feature rows (homogeneous), type_feat[t] node type t's (typed; NULL:
 * featureless), both borrowed for the source's life. Whole, store: nothing. Before the loaders
 * (their batches reach every part). Returns 0, or -1 with *err. */
int graph_source_serve(graph_source *s, const ds_feature *feat, const ds_feature *const *type_feat, cgnn_err *err);
/* Weighted sampling (sample/sample_weights.h) on a part: w[e] (per edge type, homogeneous w[0]:
 * the part's own index's in-edges, CSC order; borrowed, must outlive the source; NULL: uniform)
 * become the part's sampler_part / typed_sampler_part weights, used by its own picks and the
 * PICKs it answers. Before graph_source_serve. Other kinds: nothing (a whole graph's weights go in
 * the loader's sampler configs). */
void graph_source_set_sample_weights(graph_source *s, float *const *w);

/* The rows of split `split` this rank takes (after assign_seeds): the whole split (gtask's) sliced
 * over every rank, or with local seeds this rank's rows sliced over its seed group. Borrowed. */
void graph_source_split_rows(const graph_source *s, ds_split_id split, graph_source_rows *out);
/* Fills the source's fields of a loader configuration the caller has filled otherwise (feature,
 * typed, type_feature set): part: the remote picks and rows (through the cache), the id maps;
 * store: the remote batches (prefetch_size in flight) and the id maps. Whole: nothing. */
void graph_source_loader_config(const graph_source *s, loader_config *lc);

/* A loader over this source, as its user asks for it: what `cgnn train` reads from trainerArgs
 * (train/trainer.c) and the C API from cgnn_loader_options (api/cgnn_api.c), in one form; the one
 * translation into a loader. Two steps, the caller's inputs between them:
 *   graph_source_loader_prepare  the request -> *lc (sampling, batching, slicing, pairs) and the
 *                                rows the loader reads (*rows);
 *   the caller                   the inputs the model reads: lc->feature, or the typed fields
 *                                (typed, typed_sampler, seed_type, pair_etype, type_feature/width;
 *                                the trainer's model_family_loader_config, the API's own);
 *   graph_source_loader_open     the source's fields (graph_source_loader_config) and loader_init. */
typedef struct graph_source_loader_request {
    ds_split_id split;
    int num_layers;
    int64_t fanouts[MINIBATCH_MAX_LAYERS]; /* per hop (-1: all); typed: the caller's typed_sampler */
    int replace;
    int64_t batch_size;
    int shuffle, drop_last, drop_uneven;
    uint64_t seed;
    int rank, world_size;   /* world_size 0: the source's slicing (graph_source_split_rows); else the
                               caller's own (a source that does not slice: one process, whole graph) */
    int num_workers;        /* sampler threads (0: synchronous) */
    int prefetch;           /* batches in flight (0: num_workers + 1) */
    int normalize_rows;
    /* a link prediction task (ignored otherwise): loader_config's fields of the same names */
    int64_t num_negatives;
    int exclude_seed_edges;
    int64_t neg_lo, neg_hi;
    int anchor_batches;
    int64_t max_labels_per_anchor;
    /* the profiler's lanes (trace NULL: none) */
    struct trace_writer *trace;
    int trace_tid_base;
    const char *trace_name;
} graph_source_loader_request;

/* Step 1: *lc zeroed and filled from r for task (the source's task, or on a whole graph any task
 * of ds), *rows the rows it reads: the source's (graph_source_split_rows) for the source's task,
 * else task's whole split; sliced as r asks (world_size > 0) or as the source does. */
void graph_source_loader_prepare(const graph_source *s, const ds_task *task, const graph_source_loader_request *r,
                                 loader_config *lc, graph_source_rows *rows);
/* Step 3: the source's fields into *lc, then loader_init(l) over *rows. Returns 0, or -1 with *err
 * prefixed with the split's file, the task and the split. */
int graph_source_loader_open(graph_source *s, const ds_task *task, ds_split_id split, loader_config *lc,
                             const graph_source_rows *rows, loader *l, cgnn_err *err);

/* A homogeneous graph's batch capacity for sampler sc, max_seeds seeds and in_dim input columns:
 * sized by the index (whole) or by the whole graph's sizes (a batch reaches any part); allocates
 * the per-batch buffers (part, store: the original ids; part with a table: the remote row fetch
 * scratch). Returns 0, or -1 with *err. */
int graph_source_batch_capacity(graph_source *s, const sampler_config *sc, int64_t max_seeds, int64_t in_dim,
                                minibatch_capacity *cap, cgnn_err *err);

/* By the consumer, right before the forward pass of a homogeneous batch: part, store: gives mb its
 * original ids as per-node keys (dropout draws as on the whole graph). */
void graph_source_prepare_batch(graph_source *s, minibatch *mb);
/* Writes the current rows of e (graph_source_embedding_init's) for mb's input nodes into its
 * feature columns [col, col + dim): the local table (whole, store), or the own rows and the other
 * parts' through EMB (part). Returns 0, or -1 with *err (a peer failed). */
int graph_source_gather_embedding(graph_source *s, const embedding_table *e, minibatch *mb, int64_t col,
                                  cgnn_err *err);
/* One sparse step of e (embedding_sparse_step; part: embedding_sparse_step_sharded, the rows to
 * their parts). Collective. Returns 0, or -1 with *err on every rank. */
int graph_source_embedding_step(graph_source *s, embedding_table *e, const int64_t *ids, const float *grads, int64_t n,
                                int64_t stride, int64_t col, double lr, double divisor, cgnn_err *err);
/* The whole table in original id order on rank 0, from rows (the table's rows, dim wide): an owned
 * copy (part: every part's rows gathered, collective; store: rank 0 reorders its rows), or NULL
 * when rows already are (whole) or on the other ranks. */
float *graph_source_table_to_root(const graph_source *s, const float *rows, int64_t dim);
/* After the caller rewrote its table's rows outside a step (the best weights restored): part: a
 * barrier, so no peer reads a row before every shard is restored. Collective. */
void graph_source_table_written(graph_source *s);

/* Every rank, after its setup (failed: this rank's setup failed, *err holds why). Part and store:
 * the collective error check of the loading phase (dist_phase_failed), then (part) the feature
 * cache: pre-sampling with train (the training batches' sampling) or every part's in-degrees
 * (collective), rank 0 logging its cache and the mean. Whole: nothing (the caller's own phase
 * check follows). Returns 0, or -1 with *err on every rank. */
int graph_source_load_check(graph_source *s, int failed, const sampler_config *train, cgnn_err *err);
/* Collective, ending the loading phase: whole: rank 0 lets the other ranks load. */
void graph_source_load_end(graph_source *s);

/* Every input file of this source (the dataset or part, the partition's JSON, id maps and whole
 * splits) into g (io/outguard.h). */
void graph_source_add_inputs(const graph_source *s, outguard *g);
/* The source's fields of the ranks' agreement check (feat: the node features the model reads). */
void graph_source_identify(const graph_source *s, const ds_feature *feat, graph_source_ids *out);
/* The homogeneous graph the training state's fingerprint describes (store: the whole graph's
 * sizes alone), and the fingerprint's extra (key, value) fields: their count, at most
 * GRAPH_SOURCE_MAX_STATE_FIELDS (store: the partition and the seed assignment). */
#define GRAPH_SOURCE_MAX_STATE_FIELDS 2
const csc_graph *graph_source_shape(const graph_source *s);
int graph_source_state_fields(const graph_source *s, const char **keys, const char **vals);

/* Part: zeroes the traffic counters (the training is counted alone); then, collective, logs on
 * rank 0 the remote traffic per batch the loaders[0..n_loaders) built (NULL entries skipped;
 * training and validation, prefetched batches included: the counters count them), averaged over
 * the ranks, and the feature cache's hit rate. Others: nothing. */
void graph_source_traffic_reset(graph_source *s);
void graph_source_log_traffic(graph_source *s, loader *const *loaders, int n_loaders);

/* Collective, after the loaders stopped: part: stops the services (dist_rpc_stop). Returns 0, or
 * -1 with *err. */
int graph_source_stop(graph_source *s, cgnn_err *err);

/* Releases everything (after the loaders stopped); safe on a zeroed source. */
void graph_source_free(graph_source *s);

#endif
