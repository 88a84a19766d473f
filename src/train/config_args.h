/* config_args.h — the trainerArgs table: every trainer argument cgnn reads, one row each, and
 * GiGL's own names for them. Private to the config module (src/train/config*.c); other modules
 * include config.h.
 *
 * To add a trainer argument: a row in CONFIG_TRAINER_ARGS below, its field in trainer_args
 * (config.h) and a line in docs/CONFIG.md. A plain argument (an integer, number, boolean, byte
 * count or one of a few names) needs nothing else: the row says its type, bounds, default and
 * field. A special one names its reader (config_value.c), and a check against other arguments is
 * a step on its row (config_validate.c).
 *
 * Pass 2 of the trainerArgs reader (config.c) goes down the table in order: for each row it runs
 * the row's `before` step, reads the value if it was given, then runs the row's `after` step.
 * A row may depend on the rows above it (num_neighbors on num_layers, the optimiser's numbers on
 * optim_class_path), and the steps check it against them (config_validate.c) or fill defaults
 * that depend on them (config_args.c); the order of the rows is the order of the checks, and
 * so which error a config with several gets. CONFIG_TRAINER_ARG_KEYS lists the keys in this order.
 */
#ifndef CGNN_CONFIG_ARGS_H
#define CGNN_CONFIG_ARGS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "io/yamldoc.h"
#include "train/config.h"

/* What a step or a special argument's reader sees: the arguments as given (pass 1) and as read
 * so far (the rows above). */
typedef struct targ_ctx {
    const yamldoc *doc;
    task_kind task;
    trainer_args *a;
    const yamldoc_node *const *g;   /* g[k]: the value given for argument k, or NULL */
    const char *const *gname;       /* gname[k]: the name it was given under (cgnn's or GiGL's) */
    config_notes *notes;            /* for cgnn train to log */
    cgnn_err *err;
} targ_ctx;

/* A step: a check of the arguments read so far, or a default that depends on them. Returns 0,
 * or -1 with CGNN_ERR_INPUT in *x->err. */
typedef int (*targ_step_fn)(const targ_ctx *x);
/* A special argument's reader: n (a scalar; a list or mapping where the row allows it) into
 * x->a. Returns 0, or -1 with CGNN_ERR_INPUT in *x->err. */
typedef int (*targ_read_fn)(const targ_ctx *x, const yamldoc_node *n);

typedef enum targ_type {
    TARG_TYPE_INT,     /* an integer in [lo, hi] into an int, int64_t or uint64_t */
    TARG_TYPE_REAL,    /* a finite number in an interval into a double (float32 range) */
    TARG_TYPE_BOOL,    /* true / false in any case into an int */
    TARG_TYPE_BYTES,   /* a byte count (512MB, 2GiB: powers of 1024) into an int64_t */
    TARG_TYPE_CHOICE,  /* one of a few names (exact) into an int or an enum */
    TARG_TYPE_SPECIAL, /* read by the row's `read` callback */
} targ_type;

typedef struct targ_choice {
    const char *name;
    int value;
} targ_choice;

typedef struct targ_row {
    const char *key;
    targ_type type;
    size_t off, size;            /* the field in trainer_args (not SPECIAL) */
    int64_t lo, hi;              /* INT: the accepted range */
    double rlo, rhi;             /* REAL: the interval (rhi INFINITY: no upper bound) ... */
    int lo_open, hi_open;        /* ... and whether each end is excluded */
    int64_t def;                 /* the default: INT, BOOL, BYTES, CHOICE (TARG_DEFAULT; none: 0) ... */
    double rdef;                 /* ... REAL */
    const targ_choice *choices;  /* CHOICE: the names and the values they store, {NULL} last */
    const char *expect;          /* CHOICE: the message, "expected <expect>, got 'x'" */
    targ_read_fn read;           /* SPECIAL */
    size_t given_off;            /* an int field set to 1 when the argument is given; 0: none */
    int lp_only;                 /* applies to link prediction only (pass 1 refuses it elsewhere) */
    int yaml_list, yaml_map;     /* a YAML list / mapping is read too, not only a string */
    unsigned sched;              /* a scheduler's argument: 1 << kind for each sched_kind it applies to */
    int embeddings;              /* applies to the learnable node embeddings (needs node_embedding_dim) */
    targ_step_fn before, after;  /* run when pass 2 reaches the row, given or not */
} targ_row;

/* ---- the helpers that make a row (the field's type is checked at compile time) ---- */

#define TARG_AT(f, ...)                                                                                                \
    .off = _Generic(((trainer_args *)0)->f, __VA_ARGS__), .size = sizeof ((trainer_args *)0)->f
#define TARG_OFF(f) offsetof(trainer_args, f)
#define TARG_INT(f, lo_, hi_)                                                                                          \
    .type = TARG_TYPE_INT, .lo = (lo_), .hi = (hi_),                                                                   \
    TARG_AT(f, int: TARG_OFF(f), int64_t: TARG_OFF(f), uint64_t: TARG_OFF(f))
/* TARG_REAL(dropout, '[', 0, 1, ')'): the interval as written in mathematics */
#define TARG_REAL(f, lb, lo_, hi_, rb)                                                                                 \
    .type = TARG_TYPE_REAL, .rlo = (lo_), .lo_open = (lb) == '(', .rhi = (hi_), .hi_open = (rb) == ')',                \
    TARG_AT(f, double: TARG_OFF(f))
#define TARG_BOOL(f) .type = TARG_TYPE_BOOL, TARG_AT(f, int: TARG_OFF(f))
#define TARG_BYTES(f) .type = TARG_TYPE_BYTES, TARG_AT(f, int64_t: TARG_OFF(f))
/* TARG_CHOICE(field, "what the message says is expected", {"name", value}, ...) */
#define TARG_CHOICE(f, expect_, ...)                                                                                   \
    .type = TARG_TYPE_CHOICE, .expect = (expect_), .choices = (const targ_choice[]){__VA_ARGS__, {NULL, 0}},           \
    TARG_AT(f, int: TARG_OFF(f), unsigned: TARG_OFF(f))
#define TARG_SPECIAL(fn) .type = TARG_TYPE_SPECIAL, .read = (fn)
/* the default of a typed row (none: 0); a SPECIAL row's is config_default_trainer_args' */
#define TARG_DEFAULT(v) .def = (int64_t)(v), .rdef = (v)
#define TARG_GIVEN(f) .given_off = _Generic(((trainer_args *)0)->f, int: TARG_OFF(f))
#define TARG_LP_ONLY .lp_only = 1
#define TARG_YAML_LIST .yaml_list = 1
#define TARG_YAML_MAP .yaml_map = 1
#define TARG_SCHED(kind) .sched = 1u << SCHED_##kind
#define TARG_SCHED2(kind, kind2) .sched = 1u << SCHED_##kind | 1u << SCHED_##kind2
#define TARG_EMBEDDINGS .embeddings = 1

/* ---- the table --------------------------------------------------------------------------
 * ARG(ID, "key", row fields...): ID names the argument in code (TARG_ID, an index of g[]). A typed
 * row's default is its TARG_DEFAULT (none: 0); the optimiser's and the scheduler's numbers default
 * to torch's for them, the special rows to config_default_trainer_args' values. */
#define CONFIG_TRAINER_ARGS(ARG)                                                                                       \
    /* model */                                                                                                        \
    ARG(GNN_MODEL_CLASS_PATH, "gnn_model_class_path", TARG_SPECIAL(config_read_model), TARG_GIVEN(model_given))        \
    ARG(NUM_LAYERS, "num_layers", TARG_INT(num_layers, 0, CONFIG_MAX_LAYERS), TARG_DEFAULT(2))                         \
    ARG(HIDDEN_DIM, "hidden_dim", TARG_INT(hidden_dim, 1, 1 << 20), TARG_DEFAULT(256))                                 \
    ARG(OUT_CHANNELS, "out_channels", TARG_INT(out_channels, 0, 1 << 20))                                              \
    ARG(DROPOUT, "dropout", TARG_REAL(dropout, '[', 0, 1, ')'), TARG_DEFAULT(0.5))                                     \
    ARG(NUM_HEADS, "num_heads", TARG_INT(num_heads, 1, 1024), TARG_DEFAULT(2))                                         \
    ARG(NUM_BASES, "num_bases", TARG_INT(num_bases, 0, 4096))                                                          \
    ARG(L2_NORMALIZE, "should_l2_normalize_embedding_layer_output", TARG_BOOL(l2_normalize_output),                    \
        TARG_GIVEN(l2_normalize_set))                                                                                  \
    ARG(FEATURE_NORMALIZATION, "feature_normalization", TARG_SPECIAL(config_read_feature_normalization))               \
    ARG(NODE_FEATURE, "node_feature", TARG_SPECIAL(config_read_node_feature))                                          \
    /* fanouts: one per layer (num_layers above) */                                                                    \
    ARG(NUM_NEIGHBORS, "num_neighbors", TARG_SPECIAL(config_read_num_neighbors), TARG_YAML_LIST,                       \
        TARG_YAML_MAP, .before = config_default_fanouts, .after = config_check_heads)                                  \
    /* training loop */                                                                                                \
    ARG(BATCH_SIZE, "main_sample_batch_size", TARG_INT(batch_size, 1, INT32_MAX), TARG_DEFAULT(512))                   \
    ARG(NUM_EPOCHS, "num_epochs", TARG_INT(num_epochs, 1, CONFIG_UNLIMITED_EPOCHS), TARG_DEFAULT(1))                   \
    ARG(NUM_MAX_TRAIN_BATCHES, "num_max_train_batches", TARG_INT(num_max_train_batches, 0, INT64_MAX),                 \
        .after = config_default_epochs)                                                                                \
    ARG(VAL_EVERY_NUM_BATCHES, "val_every_num_batches", TARG_INT(val_every_num_batches, 0, INT64_MAX))                 \
    ARG(NUM_VAL_BATCHES, "num_val_batches", TARG_INT(num_val_batches, 0, INT64_MAX))                                   \
    ARG(NUM_TEST_BATCHES, "num_test_batches", TARG_INT(num_test_batches, 0, INT64_MAX))                                \
    ARG(EARLY_STOP_CRITERION, "early_stop_criterion", TARG_SPECIAL(config_read_early_stop_criterion))                  \
    ARG(EARLY_STOP_PATIENCE, "early_stop_patience", TARG_INT(early_stop_patience, 0, INT64_MAX))                       \
    ARG(CHECKPOINT_EVERY, "checkpoint_every_n_batches", TARG_INT(checkpoint_every_n_batches, 0, INT64_MAX))            \
    ARG(NUM_WORKERS, "train_main_num_workers", TARG_INT(num_workers, 0, 1024), TARG_DEFAULT(2))                        \
    ARG(SEED, "seed", TARG_INT(seed, 0, INT64_MAX))                                                                    \
    ARG(REPLACE, "sample_with_replacement", TARG_BOOL(replace))                                                        \
    ARG(SAMPLING_WEIGHT, "sampling_weight", TARG_SPECIAL(config_read_sampling_weight))                                  \
    ARG(DROP_UNEVEN, "drop_uneven_inputs", TARG_BOOL(drop_uneven_inputs))                                              \
    ARG(VAL_AT_END, "val_at_end", TARG_BOOL(val_at_end))                                                               \
    /* optimiser (Adam, lr 0.01): optim_class_path sets torch's defaults for it, the numbers below override them */    \
    ARG(OPTIM_CLASS_PATH, "optim_class_path", TARG_SPECIAL(config_read_optim_class_path))                              \
    ARG(OPTIM_LR, "optim_lr", TARG_REAL(optim.lr, '(', 0, INFINITY, ')'))                                              \
    ARG(OPTIM_WEIGHT_DECAY, "optim_weight_decay", TARG_REAL(optim.weight_decay, '[', 0, INFINITY, ')'))                \
    ARG(OPTIM_MOMENTUM, "optim_momentum", TARG_REAL(optim.momentum, '[', 0, INFINITY, ')'),                            \
        .before = config_check_momentum)                                                                               \
    ARG(CLIP_GRAD_NORM, "clip_grad_norm", TARG_REAL(clip_grad_norm, '[', 0, INFINITY, ')'))                            \
    /* learning-rate scheduler (none): the name sets torch's defaults for it, its arguments override them */           \
    ARG(SCHED_NAME, "lr_scheduler_name", TARG_SPECIAL(config_read_sched_name), .after = config_check_scheduler)        \
    ARG(SCHED_STEP_SIZE, "lr_scheduler_step_size", TARG_INT(sched.step_size, 1, INT64_MAX), TARG_SCHED(STEP))          \
    ARG(SCHED_GAMMA, "lr_scheduler_gamma", TARG_REAL(sched.gamma, '(', 0, INFINITY, ')'), TARG_SCHED(STEP))            \
    ARG(SCHED_FACTOR, "lr_scheduler_factor", TARG_REAL(sched.factor, '[', 0, 1, ']'), TARG_SCHED(CONSTANT))            \
    ARG(SCHED_TOTAL_ITERS, "lr_scheduler_total_iters", TARG_INT(sched.total_iters, 0, INT64_MAX),                      \
        TARG_SCHED2(CONSTANT, LINEAR))                                                                                 \
    ARG(SCHED_START_FACTOR, "lr_scheduler_start_factor", TARG_REAL(sched.start_factor, '(', 0, 1, ']'),                \
        TARG_SCHED(LINEAR))                                                                                            \
    ARG(SCHED_END_FACTOR, "lr_scheduler_end_factor", TARG_REAL(sched.end_factor, '[', 0, 1, ']'),                      \
        TARG_SCHED(LINEAR))                                                                                            \
    ARG(SCHED_T_MAX, "lr_scheduler_t_max", TARG_INT(sched.t_max, 1, INT64_MAX), TARG_SCHED(COSINE))                    \
    ARG(SCHED_ETA_MIN, "lr_scheduler_eta_min", TARG_REAL(sched.eta_min, '[', 0, INFINITY, ')'),                        \
        TARG_SCHED(COSINE))                                                                                            \
    /* link prediction (GiGL's names) */                                                                               \
    ARG(RAND_NEG_BATCH, "random_negative_sample_batch_size",                                                           \
        TARG_INT(random_negative_sample_batch_size, 1, INT32_MAX), TARG_DEFAULT(512), TARG_LP_ONLY)                    \
    ARG(RAND_NEG_BATCH_EVAL, "random_negative_sample_batch_size_for_evaluation",                                       \
        TARG_INT(random_negative_sample_batch_size_for_evaluation, 1, INT32_MAX), TARG_DEFAULT(512), TARG_LP_ONLY)     \
    ARG(SOFTMAX_TEMP, "softmax_temp", TARG_REAL(softmax_temp, '(', 0, INFINITY, ')'), TARG_DEFAULT(0.07),              \
        TARG_LP_ONLY)                                                                                                  \
    ARG(REMOVE_ACCIDENTAL_HITS, "should_remove_accidental_hits", TARG_BOOL(should_remove_accidental_hits),             \
        TARG_DEFAULT(1), TARG_LP_ONLY)                                                                                 \
    ARG(EXCLUDE_SEED_EDGES, "exclude_seed_edges", TARG_BOOL(exclude_seed_edges), TARG_LP_ONLY)                         \
    ARG(LP_CANDIDATE_RANGE, "lp_candidate_range", TARG_SPECIAL(config_read_lp_candidate_range), TARG_LP_ONLY)          \
    ARG(SSL_KEEP_EVAL_EDGES, "ssl_keep_eval_edges", TARG_BOOL(ssl_keep_eval_edges), TARG_LP_ONLY)                      \
    ARG(LP_BATCHING, "lp_batching",                                                                                    \
        TARG_CHOICE(lp_anchor_batching,                                                                                \
                    "pairs (batch_size (anchor, positive) pairs) or anchors (batch_size anchors, each with all "       \
                    "its positives: GiGL's DistABLPLoader)",                                                           \
                    {"pairs", 0}, {"anchors", 1}),                                                                     \
        TARG_GIVEN(lp_batching_given), TARG_LP_ONLY)                                                                   \
    /* learnable node embeddings (either task) */                                                                      \
    ARG(NODE_EMB_DIM, "node_embedding_dim", TARG_INT(node_embedding_dim, 0, 1 << 20))                                  \
    ARG(EMB_LR, "embedding_lr", TARG_REAL(embedding_lr, '(', 0, INFINITY, ')'), TARG_DEFAULT(-1)) /* optim_lr */       \
    ARG(EMB_INIT_STD, "node_embedding_init_std", TARG_REAL(node_embedding_init_std, '(', 0, INFINITY, ')'),            \
        TARG_DEFAULT(1.0), TARG_EMBEDDINGS)                                                                            \
    ARG(EMB_REG, "node_embedding_reg", TARG_REAL(node_embedding_reg, '[', 0, INFINITY, ')'),                           \
        TARG_EMBEDDINGS, TARG_LP_ONLY)                                                                                 \
    ARG(EMB_WEIGHT_DECAY, "embedding_weight_decay", TARG_REAL(embedding_weight_decay, '[', 0, INFINITY, ')'),          \
        TARG_EMBEDDINGS, .after = config_check_embedding_args)                                                         \
    ARG(EMB_OPTIM, "embedding_optim_class_path", TARG_SPECIAL(config_read_embedding_optim))                            \
    /* data parallel seeds and partitioned graphs */                                                                   \
    ARG(SEED_ASSIGNMENT, "seed_assignment",                                                                            \
        TARG_CHOICE(seed_assignment,                                                                                   \
                    "local (each rank trains on the seeds its part owns) or global (every rank slices the "            \
                    "whole split)",                                                                                    \
                    {"local", SEED_ASSIGN_LOCAL}, {"global", SEED_ASSIGN_GLOBAL}))                                     \
    ARG(SEED_PARTITION, "seed_partition_uri", TARG_SPECIAL(config_read_seed_partition),                                \
        .after = config_check_seed_partition)                                                                          \
    ARG(RPC_TIMEOUT, "rpc_timeout_s", TARG_REAL(rpc_timeout_s, '(', 0, 86400, ']'), TARG_DEFAULT(60))                  \
    /* server-client mode and the feature cache (train/graph_store.h, sample/feat_cache.h) */                          \
    ARG(PREFETCH_SIZE, "prefetch_size", TARG_INT(prefetch_size, 1, 1024), TARG_DEFAULT(4))                             \
    ARG(CACHE_RATIO, "cache_ratio", TARG_REAL(cache_ratio, '[', 0, 1, ']'))                                            \
    ARG(CACHE_MEMORY_BUDGET, "cache_memory_budget", TARG_BYTES(cache_memory_budget))                                   \
    ARG(CACHE_PRESAMPLE, "cache_presample_batches", TARG_INT(cache_presample_batches, 1, 1 << 20), TARG_DEFAULT(20))   \
    ARG(CACHE_POLICY, "cache_policy",                                                                                  \
        TARG_CHOICE(cache_policy,                                                                                      \
                    "none, hotness (pre-sampled access counts), degree (highest in-degree), halo (1-hop "              \
                    "halo), or an adaptive cache: sieve, s3fifo, lru or clock",                                        \
                    {"none", CACHE_POLICY_NONE}, {"hotness", CACHE_POLICY_HOTNESS},                                    \
                    {"degree", CACHE_POLICY_DEGREE}, {"halo", CACHE_POLICY_HALO}, {"sieve", CACHE_POLICY_SIEVE},       \
                    {"s3fifo", CACHE_POLICY_S3FIFO}, {"lru", CACHE_POLICY_LRU}, {"clock", CACHE_POLICY_CLOCK}),        \
        .after = config_check_cache)                                                                                   \
    /* link prediction tasks: after softmax_temp and should_remove_accidental_hits (Retrieval's) */                    \
    ARG(TASK_PATH, "task_path", TARG_SPECIAL(config_read_task_path), TARG_YAML_MAP, TARG_LP_ONLY,                      \
        .before = config_default_retrieval, .after = config_check_bpr)                                                 \
    /* LightGCN; then num_layers 0 (the learnable embeddings alone) */                                                 \
    ARG(LIGHTGCN_ALPHA, "lightgcn_alpha", TARG_SPECIAL(config_read_lightgcn_alpha), TARG_YAML_LIST,                    \
        .before = config_check_lightgcn, .after = config_check_num_layers)

#define TARG_ENUM_ENTRY(ID, KEY, ...) TARG_##ID,
typedef enum targ { CONFIG_TRAINER_ARGS(TARG_ENUM_ENTRY) TARG_COUNT } targ;
#undef TARG_ENUM_ENTRY

/* The rows, indexed by targ (config_args.c). */
extern const targ_row CONFIG_TARGS[TARG_COUNT];

/* The argument named key (cgnn's name), or -1. */
int config_args_find(const char *key);
/* 1 if argument k was given under one of GiGL's names (not cgnn's own key). */
int config_args_via_gigl(const targ_ctx *x, targ k);
/* "node classification" / "link prediction", for messages. */
const char *config_task_name(task_kind task);

/* The special arguments' readers (config_value.c). */
int config_read_model(const targ_ctx *x, const yamldoc_node *n);
int config_read_feature_normalization(const targ_ctx *x, const yamldoc_node *n);
int config_read_node_feature(const targ_ctx *x, const yamldoc_node *n);
int config_read_sampling_weight(const targ_ctx *x, const yamldoc_node *n);
int config_read_num_neighbors(const targ_ctx *x, const yamldoc_node *n);
int config_read_early_stop_criterion(const targ_ctx *x, const yamldoc_node *n);
int config_read_optim_class_path(const targ_ctx *x, const yamldoc_node *n);
int config_read_sched_name(const targ_ctx *x, const yamldoc_node *n);
int config_read_lp_candidate_range(const targ_ctx *x, const yamldoc_node *n);
int config_read_embedding_optim(const targ_ctx *x, const yamldoc_node *n);
int config_read_seed_partition(const targ_ctx *x, const yamldoc_node *n);
int config_read_task_path(const targ_ctx *x, const yamldoc_node *n);
int config_read_lightgcn_alpha(const targ_ctx *x, const yamldoc_node *n);

/* Defaults that depend on the arguments above them (config_args.c). */
int config_default_fanouts(const targ_ctx *x);
int config_default_epochs(const targ_ctx *x);
int config_default_retrieval(const targ_ctx *x);

/* The arguments against each other (config_validate.c). */
int config_check_heads(const targ_ctx *x);
int config_check_momentum(const targ_ctx *x);
int config_check_scheduler(const targ_ctx *x);
int config_check_embedding_args(const targ_ctx *x);
int config_check_seed_partition(const targ_ctx *x);
int config_check_cache(const targ_ctx *x);
int config_check_bpr(const targ_ctx *x);
int config_check_lightgcn(const targ_ctx *x);
int config_check_num_layers(const targ_ctx *x);

/* ---- GiGL's trainerArgs names (config_args.c, "GiGL's trainerArgs names") ----------------- */

typedef enum gigl_kind { GIGL_SAME, GIGL_KEPT, GIGL_NO_EFFECT, GIGL_UNREAD, GIGL_MISSING } gigl_kind;
typedef enum gigl_type { GIGL_INT, GIGL_NUM, GIGL_BOOL, GIGL_STR } gigl_type;

/* A kept GiGL setting that is more than a number in a field: returns 0, or -1 with *x->err;
 * v is the value, num the number GiGL reads from it. */
typedef int (*gigl_keep_fn)(const targ_ctx *x, const yamldoc_node *v, double num);

typedef struct gigl_arg {
    const char *name;
    gigl_kind kind;
    gigl_type type;
    int target, target2;    /* GIGL_SAME: the cgnn argument(s) it sets (targ); else -1 */
    int64_t lo, hi;         /* GIGL_INT (not GIGL_SAME): the accepted range */
    const char *why;        /* GIGL_NO_EFFECT / GIGL_UNREAD: the note; GIGL_MISSING: the error */
    size_t off, given_off;  /* GIGL_KEPT: the field (int64_t for GIGL_INT, double for GIGL_NUM) and an
                               int set to 1 when given (0: none) ... */
    gigl_keep_fn keep;      /* ... or the function that keeps it */
} gigl_arg;

#define CONFIG_GIGL_ARGS_MAX 64 /* capacity of the tables of given GiGL names */

/* The index of GiGL name key in the GiGL table, or -1; its row. */
int config_gigl_find(const char *key);
const gigl_arg *config_gigl_arg(int i);
int config_gigl_count(void);

/* Checks v as GiGL reads an argument of type `type` (ints in [lo, hi]); *num gets the number. */
int config_gigl_value(const yamldoc *doc, const yamldoc_node *v, gigl_type type, int64_t lo, int64_t hi, double *num,
                      cgnn_err *err);

/* ---- GiGL's defaults per training script (config_args.c, "GiGL's defaults") --------------
 * What a GiGL training script (trainerConfig.command "python -m MODULE") or v1 modeling task
 * spec (trainerClsPath) uses for a trainer argument the config leaves out. cgnn takes the same
 * value where it has the argument (docs/CONFIG.md, "GiGL's defaults"): a config trains as the
 * script it names would, not with cgnn's own defaults. */
typedef struct gigl_default {
    const char *name;   /* the trainer argument, under GiGL's or cgnn's name */
    const char *value;  /* as the script reads it (a string, as in trainerArgs) */
    const char *unless; /* another argument (cgnn's or GiGL's name) whose presence makes this
                           default moot (num_neighbors: num_layers), or NULL */
} gigl_default;
#define CONFIG_GIGL_DEFAULTS_MAX 24
typedef struct gigl_script {
    const char *name;   /* the module or the trainerClsPath */
    const char *source; /* where in GiGL (fee4ba5) the defaults are read */
    gigl_default defs[CONFIG_GIGL_DEFAULTS_MAX]; /* {NULL}-terminated */
} gigl_script;

/* The script a config names: command "python -m MODULE [args]" (or "python MODULE/PATH.py"), else
 * trainerClsPath; NULL when neither names a script whose defaults cgnn knows. */
const gigl_script *config_gigl_script(const char *command, const char *cls_path);

/* After the cgnn arguments are read (pass 2): the GiGL names' settings, checks and notes.
 * gx[i]: the value given for GiGL name i, or NULL. */
int config_gigl_finish(const targ_ctx *x, const yamldoc_node *const *gx);

#endif
