/* config.h — GiGL task config (frozen GbmlConfig YAML, camelCase) and resource config
 * (GiglResourceConfig YAML, snake_case), parsed strictly into typed structs.
 *
 * Only the fields in SPEC.md section 2/3 are read. trainerArgs is GiGL's string map: every
 * value is a string (quoted or not) parsed strictly; an unknown trainerArgs key is an error
 * naming the key and the closest known one. Booleans accept true/false in any case.
 * URIs: file:// and plain paths; gs://, s3://, ... fail with a clear error. Relative paths are
 * relative to the current directory (as GiGL resolves them).
 * Every error: CGNN_ERR_INPUT, "FILE: PATH (line N): what is wrong".
 * The readers are config.c (the sections), config_args.c (the table of trainer arguments,
 * config_args.h: one row each, with its type, bounds, default and field), config_value.c (strict
 * values) and config_validate.c (arguments against each other and against the dataset).
 */
#ifndef CGNN_CONFIG_H
#define CGNN_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "nn/lp_loss.h"
#include "nn/model.h"
#include "optim/optim.h"
#include "util/err.h"

#define CONFIG_PATH_MAX 4096
#define CONFIG_COMMAND_ARGS_MAX 16384 /* run_command: trainerArgs as --key=value strings, in all */

/* num_epochs when only num_max_train_batches is given: epochs are unlimited and the run is
 * bounded by num_max_train_batches alone. Large enough never to be reached, small enough that
 * num_epochs * batches_per_epoch cannot overflow int64_t. */
#define CONFIG_UNLIMITED_EPOCHS ((int64_t)INT32_MAX)

typedef enum task_kind { TASK_NODE_CLASSIFICATION, TASK_LINK_PREDICTION, TASK_KIND_COUNT } task_kind;

#define CONFIG_MAX_LAYERS 8          /* num_layers is 0 (LP: embeddings only) or 1 .. CONFIG_MAX_LAYERS */
#define CONFIG_TYPE_NAME_MAX 128     /* a node type or relation name, with its NUL */
#define CONFIG_MAX_TYPES 64          /* graphMetadata nodeTypes / edgeTypes kept (more: refused) */
#define CONFIG_MAX_ETYPE_FANOUTS 64  /* edge types in a per-edge-type num_neighbors (more: refused) */

/* A GiGL EdgeType (srcNodeType, relation, dstNodeType); as a dataset edge type name it is
 * "src:relation:dst" (config_edge_type_name). */
typedef struct config_edge_type {
    char src_node_type[CONFIG_TYPE_NAME_MAX];
    char relation[CONFIG_TYPE_NAME_MAX];
    char dst_node_type[CONFIG_TYPE_NAME_MAX];
} config_edge_type;

/* One entry of a per-edge-type num_neighbors: the fanout of edge type `etype` at each hop,
 * seed-side first. fanouts[h] for h < num_layers is -1 (all in-neighbours), 0 (this edge type is
 * not sampled at hop h) or >= 1; entries from num_layers on are 0. */
typedef struct config_etype_fanout {
    config_edge_type etype;
    int64_t fanouts[CONFIG_MAX_LAYERS];
} config_etype_fanout;

typedef struct trainer_args {
    /* model */
    model_kind model;                 /* gnn_model_class_path (GraphSAGE; on a typed dataset HGT when
                                         the config names none: model_given) */
    int model_given;                  /* gnn_model_class_path was given */
    int num_layers;                   /* 2; 0 = link prediction with the learnable embeddings alone
                                         (matrix factorisation: scores are dot products of table
                                         rows; needs node_embedding_dim, no fanouts) */
    int64_t hidden_dim;               /* 256 */
    int64_t out_channels;             /* 0 = num_classes (NC) */
    /* num_neighbors takes one of two forms (docs/CONFIG.md, "Fanouts"):
     * - plain, one list for every edge type ("[15, 10]", "15, 10", a YAML list; PyG/GraphBolt):
     *   num_fanouts == num_layers, fanouts[h] -1 or >= 1, num_etype_fanouts == 0;
     * - per edge type (GiGL's '{("src", "rel", "dst"): [10, 10], ...}' string, or a YAML mapping
     *   keyed "src:rel:dst" / "src__rel__dst"): num_etype_fanouts >= 1 entries in config order,
     *   no edge type twice; num_fanouts == 0 and fanouts[] all 0 (so that a code path that does
     *   not resolve per-type fanouts cannot sample with made-up ones).
     * config_resolve_fanouts turns either form into one list per dataset edge type. */
    int num_fanouts;                  /* == num_layers (plain form), 0 (per edge type) */
    int64_t fanouts[CONFIG_MAX_LAYERS]; /* plain form; default 10 per layer */
    int num_etype_fanouts;            /* 0 = plain form */
    config_etype_fanout etype_fanouts[CONFIG_MAX_ETYPE_FANOUTS];
    double dropout;                   /* 0.5 */
    int num_heads;                    /* 2 */
    int num_bases;                    /* RGCN basis decomposition (PyG RGCNConv num_bases); 0 = none */
    int l2_normalize_output;          /* should_l2_normalize_embedding_layer_output (false NC, true LP) */
    int l2_normalize_set;             /* the key was given */
    char feature_normalization[16];   /* "none" | "row" */
    char node_feature[128];           /* the node feature the model reads ("": "feat", else the type's
                                         first; dataset_node_feature) */
    /* loop */
    int64_t batch_size;               /* main_sample_batch_size (512) */
    int64_t num_epochs;               /* 1 unless num_max_train_batches is given; then
                                         CONFIG_UNLIMITED_EPOCHS unless num_epochs is given too */
    int64_t num_max_train_batches;    /* 0 = unlimited */
    int64_t val_every_num_batches;    /* 0 = once per epoch */
    int64_t num_val_batches;          /* 0 = all */
    int64_t num_test_batches;         /* 0 = all */
    char early_stop_criterion[32];    /* "loss" or a metric name ("acc"/"accuracy"; LP: "mrr", "auc",
                                         "ap", or "recall_at_K" / "ndcg_at_K": full ranking) */
    int64_t val_rank_k;               /* LP, criterion recall_at_K / ndcg_at_K: K (0 = not ranking) */
    int val_rank_ndcg;                /* ... 1: ndcg_at_K, 0: recall_at_K */
    int val_at_end;                   /* validate once more after the last step when the last
                                         validation was before it (false) */
    int64_t early_stop_patience;      /* 0 = off */
    int64_t checkpoint_every_n_batches; /* write the training state every N steps for an exact
                                         resume (train/train_state.h); 0 = off */
    int64_t num_workers;              /* train_main_num_workers (2) */
    uint64_t seed;                    /* 0 */
    int replace;                      /* sample_with_replacement (false) */
    char sampling_weight[128];        /* the edge feature holding the draw weights (sample/sample_weights.h;
                                         "": uniform sampling) */
    int drop_uneven_inputs;           /* data parallel: every rank runs the minimum batch count (false) */
    /* optimiser */
    optim_config optim;               /* optim_class_path, optim_lr, optim_weight_decay, optim_momentum */
    double clip_grad_norm;            /* 0 = off */
    sched_config sched;               /* lr_scheduler_name + lr_scheduler_* args */
    /* link prediction (GiGL names) */
    int64_t random_negative_sample_batch_size;
    int64_t random_negative_sample_batch_size_for_evaluation;
    double softmax_temp;
    int should_remove_accidental_hits;
    int num_lp_tasks;                 /* task_path: the tasks and their weights, in config order;
                                         default one Retrieval (softmax_temp,
                                         should_remove_accidental_hits) of weight 1 */
    lp_task lp_tasks[LP_TASK_COUNT];
    int64_t lp_candidate_lo, lp_candidate_hi; /* lp_candidate_range "LO:HI": a homogeneous graph's
                                         candidate nodes [LO, HI) for random negatives and full-ranking
                                         validation; hi 0 = every node */
    int exclude_seed_edges;           /* LP: drop the batch's own positive edges from its sampled
                                         neighbourhoods (GraphBolt exclude_seed_edges; false) */
    int lp_anchor_batching;           /* LP lp_batching: 0 pairs (batch_size (anchor, positive) pairs; the
                                         default), 1 anchors (batch_size anchors with all their positives,
                                         GiGL's DistABLPLoader; implied by max_labels_per_anchor_node) */
    int lp_batching_given;            /* lp_batching was given */
    int64_t max_labels_per_anchor_node; /* anchors: positives (and listed negatives) kept per anchor, the
                                         first in split row order (GiGL's name); 0 = all */
    /* learnable node embeddings (either task) */
    int64_t node_embedding_dim;       /* 0 = none; else a (num_nodes, dim) table concatenated after the features */
    char embedding_optim[16];         /* embedding_optim_class_path: SparseAdam (default) | Adagrad | SGD */
    double embedding_lr;              /* embedding_lr; < 0 = optim_lr */
    double node_embedding_init_std;   /* rows drawn N(0, std²) (1: torch.nn.Embedding's N(0, 1);
                                         LightGCN uses 0.1) */
    double node_embedding_reg;        /* LP: LightGCN's reg: + reg · ½ Σ ||e||² / pairs over the
                                         table rows of the batch's anchors, positives and
                                         negatives (0 = off) */
    int num_lightgcn_alpha;           /* LightGCN: 0 = PyG's default 1 / (num_layers + 1) per layer;
                                         1 = one value for every layer; num_layers + 1 = one per layer */
    double lightgcn_alpha[CONFIG_MAX_LAYERS + 1]; /* lightgcn_alpha: PyG LightGCN's alpha */
    double embedding_weight_decay;    /* the sparse optimiser's weight decay: torch's dense formula
                                         g + wd · p on the rows a step touches (0 = off) */
    /* data parallel seeds: global = every rank slices the whole split (DGL's DistributedItemSampler;
     * the default on a replicated graph), local = rank r trains on the seeds part r % P owns
     * (GLT's train partitions; the default on a partitioned graph). A replicated run takes the
     * local assignment from a partition's node map: seed_partition_uri (a cgnn partition output) */
    enum { SEED_ASSIGN_AUTO, SEED_ASSIGN_LOCAL, SEED_ASSIGN_GLOBAL } seed_assignment;
    char seed_partition[CONFIG_PATH_MAX];
    double rpc_timeout_s;             /* a partitioned graph: a peer silent this long is an error (60) */
    /* GiGL's own trainer arguments that cgnn keeps (config_args.c, "GiGL's trainerArgs names"; the
     * names that only mean a cgnn key are stored in that key) */
    int64_t val_num_workers;          /* val_main_num_workers: sampler threads of the validation loader; -1 = num_workers */
    int64_t test_num_workers;         /* test_main_num_workers: the same for the test loader; -1 = num_workers */
    int64_t log_every_n_batch;        /* a plain progress line every N training batches (no terminal); 0 = every 10 s */
    double num_val, num_test;         /* GiGL's split fractions (data_splitters.py; 0.1, 0.1): used by the
                                         ssl split; no effect on a dataset that comes split */
    int split_fractions_given;        /* num_val or num_test was given */
    /* GiGL's self-supervised link prediction split (graph/edge_split.h): this fraction of the
     * supervision edge type's edges become labels, split per anchor by num_val / num_test;
     * 0 = off (the dataset's own link prediction task) */
    double ssl_positive_label_percentage;
    int ssl_keep_eval_edges;          /* ssl: validation / test label edges stay message-passing
                                         edges (GiGL's behaviour); default 0: removed */
    /* server-client mode (train/graph_store.h): batches a compute rank keeps requested ahead (GLT's
     * prefetch_size, 4) */
    int64_t prefetch_size;
    /* the feature cache of remote rows (sample/feat_cache.h), on a partitioned graph in both modes:
     * cache_policy none | hotness (pre-sampled access counts, GLT) | degree | halo (static, chosen
     * before training) | sieve | s3fifo | lru | clock (adaptive, GraphBolt's: filled by the batches);
     * the size is cache_ratio x the graph's nodes and / or cache_memory_budget bytes (both: the
     * smaller, as GLT; adaptive: rows and policy metadata); cache_presample_batches batches of the
     * training seeds are sampled to count accesses (hotness) */
    enum {
        CACHE_POLICY_NONE,
        CACHE_POLICY_HOTNESS,
        CACHE_POLICY_DEGREE,
        CACHE_POLICY_HALO,
        CACHE_POLICY_SIEVE,
        CACHE_POLICY_S3FIFO,
        CACHE_POLICY_LRU,
        CACHE_POLICY_CLOCK
    } cache_policy;
    double cache_ratio;               /* 0 = no size by ratio */
    int64_t cache_memory_budget;      /* bytes; 0 = no size by memory */
    int64_t cache_presample_batches;  /* 20 */
} trainer_args;

/* Lines cgnn train logs about the config: GiGL arguments accepted without effect, GiGL names read
 * as cgnn's, GiGL behaviours followed (config*.c). The last line says so when more did not fit. */
#define CONFIG_MAX_NOTES 32
#define CONFIG_NOTE_MAX 640
typedef struct config_notes {
    int n;
    char line[CONFIG_MAX_NOTES][CONFIG_NOTE_MAX];
} config_notes;

typedef struct task_config {
    char file[CONFIG_PATH_MAX];       /* the YAML it was read from */
    task_kind task;
    char dataset_path[CONFIG_PATH_MAX];      /* sharedConfig.preprocessedMetadataUri */
    char trained_model_uri[CONFIG_PATH_MAX]; /* sharedConfig.trainedModelMetadata.* */
    char eval_metrics_uri[CONFIG_PATH_MAX];
    char tensorboard_logs_uri[CONFIG_PATH_MAX];
    int should_skip_training;
    int should_skip_model_evaluation; /* as written */
    /* The test split is not evaluated (no eval metrics): shouldSkipModelEvaluation as GiGL's
     * trainer in the config's mode does it (docs/CONFIG.md, "shouldSkipModelEvaluation"): the
     * legacy trainer skips evaluation; GiGL's in-memory training scripts
     * (featureFlags.should_run_glt_backend: True) test all the same. */
    int skip_test;
    int gigl_in_memory;               /* featureFlags.should_run_glt_backend (GiGL's strtobool; default False) */
    /* featureFlags.cgnn_run_trainer_command (GiGL's strtobool; default False): `cgnn train` runs
     * trainerConfig.command, the user's training script, on every rank as GiGL's in-memory
     * Trainer launches it, instead of cgnn's own trainer (cli/cli_launch.c). trainerArgs are then
     * the command's: passed to it as --key=value, not read by cgnn (args keeps its defaults). */
    int run_command;
    char command[CONFIG_PATH_MAX];    /* trainerConfig.command as written ("" if none) */
    char command_args[CONFIG_COMMAND_ARGS_MAX]; /* run_command: trainerArgs as "--key=value", each
                                                   NUL-terminated, one after the other, in order */
    int num_command_args;
    /* graphMetadata and the supervision types as declared, checked against the dataset by
     * config_check_types. Duplicate entries are kept once; more than CONFIG_MAX_TYPES distinct
     * ones are refused. condensedNodeTypeMap / condensedEdgeTypeMap are checked (1:1 with the
     * declared types) but not kept: cgnn numbers types as the dataset does. */
    int num_node_types, num_edge_types; /* distinct nodeTypes / edgeTypes entries (0: not given) */
    char node_types[CONFIG_MAX_TYPES][CONFIG_TYPE_NAME_MAX]; /* in config order */
    config_edge_type edge_types[CONFIG_MAX_TYPES];           /* in config order */
    int num_supervision_types;        /* supervisionNodeTypes / supervisionEdgeTypes entries */
    char supervision_node_type[CONFIG_TYPE_NAME_MAX]; /* NC: the first entry; "" if not given */
    config_edge_type supervision_edge_type; /* LP: the first supervisionEdgeTypes entry; "" if not given */
    int profiler_enabled;
    char profiler_log_dir[CONFIG_PATH_MAX];
    int64_t profiler_repeat;          /* profilerArgs.repeat: windows recorded (GiGL: 1); 0 = until the end */
    int64_t profiler_wait, profiler_warmup, profiler_active; /* profilerArgs: torch.profiler.schedule
                                                                 (GiGL's defaults 5, 2, 2) */
    int has_storage_config;           /* trainerConfig.graphStoreStorageConfig was given (GiGL's storage
                                         job command: read and ignored, train/graph_store.h) */
    trainer_args args;
    config_notes notes;               /* for cgnn train to log (rank 0) */
} task_config;

typedef struct resource_config {
    char file[CONFIG_PATH_MAX];       /* the YAML it was read from ("" without one) */
    int num_workers;                  /* local_trainer_config.num_workers (0 = from machine) */
    int num_replicas;                 /* mpi_trainer_config.num_replicas (0 = not given) */
    int num_threads_per_replica;      /* mpi_trainer_config.num_threads_per_replica (0 = default) */
    /* trainer_resource_config.vertex_ai_graph_store_trainer_config (GiGL's graph-store mode; cgnn's
     * server-client mode, train/graph_store.h): S storage ranks and T compute ranks in one job */
    int graph_store;                  /* the section was given */
    int storage_replicas;             /* graph_store_pool.num_replicas: S */
    int compute_replicas;             /* compute_pool.num_replicas */
    int compute_local_world_size;     /* compute_cluster_local_world_size (0 = not given: 1);
                                         T = compute_replicas x max(1, this) */
    char ignored[512];                /* the fields that mean nothing here (machine and GPU types ...),
                                         "name value, ...", for a log line */
    char cloud_ignored[96];           /* GiGL's cloud trainer sections given ("vertex_ai_trainer_config,
                                         kfp_trainer_config"): cgnn trains on this machine; for a log line */
} resource_config;

/* Fills *a with the defaults of a task of kind task (the values in the comments above:
 * fanouts 10 per layer, Adam lr 0.01, a constant learning rate, LP args as GiGL). */
void config_default_trainer_args(trainer_args *a, task_kind task);

/* Parses the task config at uri (file:// or a path). Returns 0 or -1 with *err. */
int config_load_task(task_config *c, const char *uri, cgnn_err *err);
/* The same for a command that reads only the data the config names (cgnn import gigl):
 * sharedConfig.trainedModelMetadata may be absent, as in GiGL's frozen configs. */
int config_load_task_data(task_config *c, const char *uri, cgnn_err *err);
/* Parses the resource config; uri NULL or "" gives defaults. */
int config_load_resource(resource_config *c, const char *uri, cgnn_err *err);

/* Strips file:// from uri into out; any other scheme ("gs://...") is an error naming it. */
int config_resolve_uri(char *out, size_t cap, const char *uri, const char *what, cgnn_err *err);

/* Every trainerArgs key cgnn knows (NULL-terminated), in the order of the table in config_args.h,
 * for docs and suggestions. */
extern const char *const CONFIG_TRAINER_ARG_KEYS[];
/* GiGL's trainerArgs names cgnn also accepts (NULL-terminated; docs/CONFIG.md, "GiGL's names"):
 * names GiGL's trainers read for a setting cgnn has, GiGL settings cgnn keeps or accepts without
 * effect (with a note), and names refused because cgnn lacks the capability (an error naming it). */
extern const char *const CONFIG_GIGL_ARG_KEYS[];

/* GiGL's boolean strings (Python's distutils.util.strtobool, which GiGL reads its flags with):
 * y, yes, t, true, on, 1 -> 1; n, no, f, false, off, 0 -> 0, in any case. Returns 0 or -1. */
int config_gigl_bool(const char *s, int *out);

/* "src:relation:dst" (the dataset's edge type name) of et into out[cap]; returns out. */
char *config_edge_type_name(const config_edge_type *et, char *out, size_t cap);

struct dataset;
struct ds_task;

/* The dataset task that a run of c trains and evaluates, as the trainer picks it: of ds's tasks
 * whose kind is c's task (node classification / link prediction), the one of the config's
 * supervision type on a typed dataset (a GraphBolt task with a set per type is read as one task
 * per type: io/dataset.h), else the first; NULL if none. */
const struct ds_task *config_find_task(const task_config *c, const struct dataset *ds);

/* Checks that the types c declares agree with ds (docs/CONFIG.md, "Types"), for the task
 * config_find_task picks. Returns 0, or -1 with CGNN_ERR_INPUT in *err naming both sides (the
 * config file, the field and its value; the dataset directory and what it has).
 * - An untyped dataset (one node type "_default"): a config may declare at most one node type,
 *   one edge type and one supervision type, with any names (labels only); num_neighbors must
 *   be the plain form.
 * - A typed dataset: graphMetadata.nodeTypes / edgeTypes, when given, equal the dataset's node /
 *   edge type names as sets; at most one supervision type; supervisionNodeTypes (NC) is a node
 *   type of the dataset and the node type of the task (ds_task.type); supervisionEdgeTypes (LP)
 *   is an edge type of the dataset and the edge type of the task; every edge type of a
 *   per-edge-type num_neighbors is an edge type of the dataset. */
int config_check_types(const task_config *c, const struct dataset *ds, cgnn_err *err);
/* The same for an explicit task of ds (NULL: the supervision types are checked against the
 * dataset's types only). */
int config_check_types_for_task(const task_config *c, const struct dataset *ds, const struct ds_task *task,
                                cgnn_err *err);

/* Writes the fanouts of every edge type of ds: out[e * num_layers + h] for e < ds->num_edge_types,
 * h < c->args.num_layers (the caller sizes out). The plain form gives every edge type its list;
 * the per-edge-type form gives the listed edge types their lists and every edge type it leaves
 * out 0 at every hop (not sampled). Returns 0, or -1 with CGNN_ERR_INPUT in *err: a per-type
 * form on an untyped dataset, or an edge type the dataset lacks (naming the config file and key,
 * and the dataset's edge types). */
int config_resolve_fanouts(const task_config *c, const struct dataset *ds, int64_t *out, cgnn_err *err);

#endif
