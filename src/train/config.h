/* config.h — GiGL task config (frozen GbmlConfig YAML, camelCase) and resource config
 * (GiglResourceConfig YAML, snake_case), parsed strictly into typed structs.
 *
 * Only the fields in SPEC.md section 2/3 are read. trainerArgs is GiGL's string map: every
 * value is a string (quoted or not) parsed strictly; an unknown trainerArgs key is an error
 * naming the key and the closest known one. Booleans accept true/false in any case.
 * URIs: file:// and plain paths; gs://, s3://, ... fail with a clear error. Relative paths are
 * relative to the current directory (as GiGL resolves them).
 * Every error: CGNN_ERR_INPUT, "FILE: PATH (line N): what is wrong".
 */
#ifndef CGNN_CONFIG_H
#define CGNN_CONFIG_H

#include <stdint.h>

#include "nn/model.h"
#include "optim/optim.h"
#include "util/err.h"

#define CONFIG_PATH_MAX 4096

/* num_epochs when only num_max_train_batches is given: epochs are unlimited and the run is
 * bounded by num_max_train_batches alone. Large enough never to be reached, small enough that
 * num_epochs * batches_per_epoch cannot overflow int64_t. */
#define CONFIG_UNLIMITED_EPOCHS ((int64_t)INT32_MAX)

typedef enum task_kind { TASK_NODE_CLASSIFICATION, TASK_LINK_PREDICTION, TASK_KIND_COUNT } task_kind;

typedef struct trainer_args {
    /* model */
    model_kind model;                 /* gnn_model_class_path (GraphSAGE) */
    int num_layers;                   /* 2 */
    int64_t hidden_dim;               /* 256 */
    int64_t out_channels;             /* 0 = num_classes (NC) */
    int num_fanouts;                  /* == num_layers */
    int64_t fanouts[8];               /* num_neighbors "[15, 10]"; default 10 per layer */
    double dropout;                   /* 0.5 */
    int num_heads;                    /* 2 */
    int l2_normalize_output;          /* should_l2_normalize_embedding_layer_output (false NC, true LP) */
    int l2_normalize_set;             /* the key was given */
    char feature_normalization[16];   /* "none" | "row" */
    /* loop */
    int64_t batch_size;               /* main_sample_batch_size (512) */
    int64_t num_epochs;               /* 1 unless num_max_train_batches is given; then
                                         CONFIG_UNLIMITED_EPOCHS unless num_epochs is given too */
    int64_t num_max_train_batches;    /* 0 = unlimited */
    int64_t val_every_num_batches;    /* 0 = once per epoch */
    int64_t num_val_batches;          /* 0 = all */
    int64_t num_test_batches;         /* 0 = all */
    char early_stop_criterion[32];    /* "loss" or a metric name ("acc"/"accuracy") */
    int64_t early_stop_patience;      /* 0 = off */
    int64_t checkpoint_every_n_batches; /* write the training state every N steps for an exact
                                         resume (train/train_state.h); 0 = off */
    int64_t num_workers;              /* train_main_num_workers (2) */
    uint64_t seed;                    /* 0 */
    int replace;                      /* sample_with_replacement (false) */
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
    int exclude_seed_edges;           /* LP: drop the batch's own positive edges from its sampled
                                         neighbourhoods (GraphBolt exclude_seed_edges; false) */
    /* learnable node embeddings (either task) */
    int64_t node_embedding_dim;       /* 0 = none; else a (num_nodes, dim) table concatenated after the features */
    char embedding_optim[16];         /* embedding_optim_class_path: SparseAdam (default) | Adagrad | SGD */
    double embedding_lr;              /* embedding_lr; < 0 = optim_lr */
    /* data parallel seeds: global = every rank slices the whole split (DGL's DistributedItemSampler;
     * the default on a replicated graph), local = rank r trains on the seeds part r % P owns
     * (GLT's train partitions; the default on a partitioned graph). A replicated run takes the
     * local assignment from a partition's node map: seed_partition_uri (a cgnn partition output) */
    enum { SEED_ASSIGN_AUTO, SEED_ASSIGN_LOCAL, SEED_ASSIGN_GLOBAL } seed_assignment;
    char seed_partition[CONFIG_PATH_MAX];
    double rpc_timeout_s;             /* a partitioned graph: a peer silent this long is an error (60) */
} trainer_args;

/* A GiGL EdgeType (srcNodeType, relation, dstNodeType). */
typedef struct config_edge_type {
    char src_node_type[128];
    char relation[128];
    char dst_node_type[128];
} config_edge_type;

typedef struct task_config {
    char file[CONFIG_PATH_MAX];       /* the YAML it was read from */
    task_kind task;
    char dataset_path[CONFIG_PATH_MAX];      /* sharedConfig.preprocessedMetadataUri */
    char trained_model_uri[CONFIG_PATH_MAX]; /* sharedConfig.trainedModelMetadata.* */
    char eval_metrics_uri[CONFIG_PATH_MAX];
    char tensorboard_logs_uri[CONFIG_PATH_MAX];
    int should_skip_training;
    int should_skip_model_evaluation;
    /* graphMetadata and the supervision types as declared: cgnn's datasets have one node type and
     * one edge type, so a config declaring several is refused by the trainer, naming both sides */
    int num_node_types, num_edge_types; /* distinct nodeTypes / edgeTypes entries (0: not given) */
    char node_types[256], edge_types[256]; /* the first of them, comma-separated (for messages) */
    int num_supervision_types;        /* supervisionNodeTypes / supervisionEdgeTypes entries */
    char supervision_node_type[128];  /* "" if not given */
    config_edge_type supervision_edge_type; /* LP: the first supervisionEdgeTypes entry; "" if not given */
    int profiler_enabled;
    char profiler_log_dir[CONFIG_PATH_MAX];
    int64_t profiler_wait, profiler_warmup, profiler_active; /* profilerArgs: torch.profiler.schedule
                                                                 (defaults 1, 1, 3) */
    trainer_args args;
} task_config;

typedef struct resource_config {
    char file[CONFIG_PATH_MAX];       /* the YAML it was read from ("" without one) */
    int num_workers;                  /* local_trainer_config.num_workers (0 = from machine) */
    int num_replicas;                 /* mpi_trainer_config.num_replicas (0 = not given) */
    int num_threads_per_replica;      /* mpi_trainer_config.num_threads_per_replica (0 = default) */
} resource_config;

/* Fills *a with the defaults of a task of kind task (the values in the comments above:
 * fanouts 10 per layer, Adam lr 0.01, a constant learning rate, LP args as GiGL). */
void config_default_trainer_args(trainer_args *a, task_kind task);

/* Parses the task config at uri (file:// or a path). Returns 0 or -1 with *err. */
int config_load_task(task_config *c, const char *uri, cgnn_err *err);
/* Parses the resource config; uri NULL or "" gives defaults. */
int config_load_resource(resource_config *c, const char *uri, cgnn_err *err);

/* Strips file:// from uri into out; any other scheme ("gs://...") is an error naming it. */
int config_resolve_uri(char *out, size_t cap, const char *uri, const char *what, cgnn_err *err);

/* Every trainerArgs key cgnn knows (NULL-terminated), for docs and suggestions. */
extern const char *const CONFIG_TRAINER_ARG_KEYS[];

/* A config that declares several node types, edge types or supervision types (graphMetadata,
 * supervisionNodeTypes / supervisionEdgeTypes) against a dataset: cgnn's datasets and models
 * are homogeneous today, so that is CGNN_ERR_INPUT naming both sides (never a homogeneous model
 * trained silently). Returns 0 or -1 with *err. */
struct dataset;
int config_check_types(const task_config *c, const struct dataset *ds, cgnn_err *err);

#endif
