/* config_args.c — the trainerArgs tables: cgnn's trainer arguments (the rows of config_args.h)
 * with their defaults, and GiGL's own names for trainer arguments with what each means to cgnn.
 * Reading the values is config_value.c's (cgnn's arguments) and config_gigl_finish's below
 * (GiGL's names); config.c runs both.
 */
#include "train/config_args.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "train/config_value.h"

/* ---- cgnn's trainer arguments ------------------------------------------------------------ */

#define TARG_ROW(ID, KEY, ...) [TARG_##ID] = {.key = KEY, __VA_ARGS__},
const targ_row CONFIG_TARGS[TARG_COUNT] = {CONFIG_TRAINER_ARGS(TARG_ROW)};
#undef TARG_ROW

#define TARG_KEY(ID, KEY, ...) KEY,
const char *const CONFIG_TRAINER_ARG_KEYS[TARG_COUNT + 1] = {CONFIG_TRAINER_ARGS(TARG_KEY) NULL};
#undef TARG_KEY

_Static_assert(offsetof(trainer_args, model) == 0 && sizeof ((trainer_args *)0)->model == sizeof(int),
               "a row's given_off 0 means none: field 0 is not a given flag");

static const char *const TASK_NAMES[] = {"node classification", "link prediction"};
_Static_assert(sizeof TASK_NAMES / sizeof TASK_NAMES[0] == TASK_KIND_COUNT, "task names");

const char *config_task_name(task_kind task) {
    CGNN_CHECK(task >= 0 && task < TASK_KIND_COUNT);
    return TASK_NAMES[task];
}

int config_args_find(const char *key) {
    for (int k = 0; k < TARG_COUNT; k++)
        if (!strcmp(CONFIG_TARGS[k].key, key)) return k;
    return -1;
}

int config_args_via_gigl(const targ_ctx *x, targ k) {
    return x->gname[k] && strcmp(x->gname[k], CONFIG_TARGS[k].key) != 0;
}

/* ---- defaults -------------------------------------------------------------------------- */

/* 10 at each of num_layers hops. */
static void default_fanouts(trainer_args *a) {
    for (int i = 0; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = i < a->num_layers ? 10 : 0;
    a->num_fanouts = a->num_layers;
}

void config_default_trainer_args(trainer_args *a, task_kind task) {
    memset(a, 0, sizeof *a);
    for (int k = 0; k < TARG_COUNT; k++) config_arg_set(a, &CONFIG_TARGS[k], CONFIG_TARGS[k].def, CONFIG_TARGS[k].rdef);
    /* the defaults that are not one row's number */
    a->model = MODEL_GRAPHSAGE;
    default_fanouts(a);
    a->l2_normalize_output = task == TASK_LINK_PREDICTION;
    snprintf(a->feature_normalization, sizeof a->feature_normalization, "none");
    snprintf(a->early_stop_criterion, sizeof a->early_stop_criterion, "loss");
    optim_default_config(&a->optim, OPTIM_ADAM, 0.01);
    /* No lr_scheduler_name: a constant learning rate (ConstantLR with factor 1 changes nothing). */
    sched_default_config(&a->sched, SCHED_CONSTANT);
    a->sched.factor = 1.0;
    a->sched.total_iters = 0;
    snprintf(a->embedding_optim, sizeof a->embedding_optim, "SparseAdam");
    a->num_lp_tasks = 1; /* GiGL's default task_path: Retrieval, weight 1 */
    lp_task_defaults(&a->lp_tasks[0], LP_TASK_RETRIEVAL);
    a->lp_tasks[0].temperature = a->softmax_temp;
    a->lp_tasks[0].remove_accidental_hits = a->should_remove_accidental_hits;
    a->seed_assignment = SEED_ASSIGN_AUTO;
    /* GiGL's names that cgnn keeps (below) */
    a->val_num_workers = a->test_num_workers = -1; /* = num_workers */
    a->num_val = a->num_test = 0.1;                /* GiGL's (dataset_factory.py) */
}

/* Before num_neighbors: the default fanouts for num_layers (a given num_neighbors replaces them). */
int config_default_fanouts(const targ_ctx *x) {
    default_fanouts(x->a);
    return 0;
}

/* After num_max_train_batches: given alone (> 0), it alone bounds the run. */
int config_default_epochs(const targ_ctx *x) {
    if (!x->g[TARG_NUM_EPOCHS] && x->a->num_max_train_batches > 0) x->a->num_epochs = CONFIG_UNLIMITED_EPOCHS;
    return 0;
}

/* Before task_path: the Retrieval task's arguments are these trainer arguments (GiGL passes them to it). */
int config_default_retrieval(const targ_ctx *x) {
    trainer_args *a = x->a;
    a->lp_tasks[0].temperature = a->softmax_temp;
    a->lp_tasks[0].remove_accidental_hits = a->should_remove_accidental_hits;
    return 0;
}

/* ---- GiGL's trainerArgs names ----------------------------------------------------------------
 * GiGL's trainers read trainerArgs under names of their own: the in-memory example training
 * scripts (examples/link_prediction/{homogeneous,heterogeneous}_training.py and their graph_store
 * versions, examples/node_classification/homogeneous_training.py), the v1 modeling task specs
 * (gigl/src/common/modeling_task_specs/), the dataset builder (gigl/distributed/
 * dataset_factory.py) with its splitters (gigl/utils/data_splitters.py), and GiGL's own configs
 * carry a few names no code reads. GIGL_ARGS says what each is to cgnn:
 *   GIGL_SAME       the setting of a cgnn key (target; target2 for a name that sets two): read
 *                   by that key's parser. Given together with the cgnn key, or with another name
 *                   of the same setting, with another value: an error naming both.
 *   GIGL_KEPT       a GiGL setting cgnn stores in trainer_args (config_gigl_finish): a number in a
 *                   field, or through a function of its own.
 *                   changes nothing in cgnn.
 *   GIGL_UNREAD     read by no GiGL code, but in GiGL's configs: checked, with a note saying so.
 *   GIGL_MISSING    a GiGL capability cgnn lacks yet: an error naming it.
 * Values are GiGL's strings: integers as Python's int() reads them (strictly here: no
 * whitespace, no "1_000"), numbers as float(), booleans as distutils' strtobool. Docs:
 * docs/CONFIG.md, "GiGL's names". */


/* What the message says of a GiGL setting that cgnn keeps but that does not apply to the task. */
static void note_other_task(const targ_ctx *x, const char *name, const char *what) {
    config_note(x->notes, "trainerArgs.%s: accepted, no effect: %s; this task is %s", name, what,
                config_task_name(x->task));
}

static int keep_ssl_percentage(const targ_ctx *x, const yamldoc_node *v, double num) {
    if (x->task != TASK_LINK_PREDICTION) { /* GiGL reads it for link prediction tasks only */
        note_other_task(x, "ssl_positive_label_percentage",
                        "GiGL selects self-supervised labels for link prediction tasks only");
        return 0;
    }
    if (!(num > 0 && num <= 1))
        return config_node_err(x->doc, v, x->err,
                               "ssl_positive_label_percentage is %g: the fraction of the supervision "
                               "edges taken as labels must be in (0, 1]",
                               num);
    x->a->ssl_positive_label_percentage = num;
    return 0;
}

static int keep_max_labels(const targ_ctx *x, const yamldoc_node *v, double num) {
    trainer_args *a = x->a;
    if (x->task != TASK_LINK_PREDICTION) {
        note_other_task(x, "max_labels_per_anchor_node", "GiGL's cap of link prediction labels per anchor");
        return 0;
    }
    if (a->lp_batching_given && !a->lp_anchor_batching)
        return config_node_err(x->doc, v, x->err, "max_labels_per_anchor_node caps the positives of each anchor of "
                               "GiGL's anchor batches; it contradicts lp_batching: pairs (set lp_batching: anchors or "
                               "leave it out)");
    a->max_labels_per_anchor_node = (int64_t)num;
    if (!a->lp_anchor_batching)
        config_note(x->notes, "trainerArgs.max_labels_per_anchor_node: GiGL's anchor batching "
                    "(lp_batching: anchors), each anchor with its first %lld positives", (long long)num);
    a->lp_anchor_batching = 1;
    return 0;
}

static int keep_sample_edge_direction(const targ_ctx *x, const yamldoc_node *v, double num) {
    char buf[80];
    if (!strcmp(v->scalar, "out"))
        return config_node_err(x->doc, v, x->err, "cgnn samples in-neighbours (messages flow src -> dst: GiGL's "
                               "default, 'in'); 'out' is not supported");
    if (strcmp(v->scalar, "in") != 0)
        return config_node_err(x->doc, v, x->err, "expected in or out (GiGL's sampling direction), got %s",
                               config_shown(v, buf, sizeof buf));
    return 0;
}

#define GIGL_ROW(kind_, type_, lo_, hi_)                                                                               \
    .kind = GIGL_##kind_, .type = GIGL_##type_, .target = -1, .target2 = -1, .lo = (lo_), .hi = (hi_)
/* the setting of cgnn's argument TARG_ID (and TARG_ID2) */
#define GIGL_SAME_AS(type_, ID) .kind = GIGL_SAME, .type = GIGL_##type_, .target = TARG_##ID, .target2 = -1
#define GIGL_SAME_AS2(type_, ID, ID2)                                                                                  \
    .kind = GIGL_SAME, .type = GIGL_##type_, .target = TARG_##ID, .target2 = TARG_##ID2
/* accepted and checked, with a note: kind NO_EFFECT or UNREAD */
#define GIGL_NOTE(kind_, type_, lo_, hi_, why_) GIGL_ROW(kind_, type_, lo_, hi_), .why = (why_)
/* kept in a field of trainer_args (and a given flag) */
#define GIGL_KEPT_INT(f, lo_, hi_)                                                                                     \
    GIGL_ROW(KEPT, INT, lo_, hi_), .off = _Generic(((trainer_args *)0)->f, int64_t: offsetof(trainer_args, f))
#define GIGL_KEPT_NUM(f, given)                                                                                        \
    GIGL_ROW(KEPT, NUM, 0, 0), .off = _Generic(((trainer_args *)0)->f, double: offsetof(trainer_args, f)),             \
    .given_off = _Generic(((trainer_args *)0)->given, int: offsetof(trainer_args, given))
/* kept by a function */
#define GIGL_KEPT_BY(type_, lo_, hi_, fn) GIGL_ROW(KEPT, type_, lo_, hi_), .keep = (fn)

#define GIGL_RNEG_WORKERS                                                                                              \
    "cgnn draws a batch's random negatives in the sampler threads of its own loader (train_main_num_workers, "         \
    "val_main_num_workers, test_main_num_workers)"
#define GIGL_SAMPLE_WORKERS                                                                                            \
    "no GiGL trainer reads it (GiGL's trainers read {train,val,test}_{main,random_negative}_num_workers)"
#define GIGL_DATASET_BUILD "GiGL's in-memory dataset build; cgnn reads the dataset from disk as it is"

/* G("name", row fields...) */
#define CONFIG_GIGL_NAMES(G)                                                                                           \
    /* the example training scripts (link prediction, node classification) */                                          \
    G("hid_dim", GIGL_SAME_AS(INT, HIDDEN_DIM))                                                                        \
    G("out_dim", GIGL_SAME_AS(INT, OUT_CHANNELS)) /* also the v1 NC spec's classes */                                  \
    G("num_classes", GIGL_SAME_AS(INT, OUT_CHANNELS)) /* NC only (LP: a note) */                                       \
    G("main_batch_size", GIGL_SAME_AS(INT, BATCH_SIZE))                                                                \
    G("train_batch_size", GIGL_SAME_AS(INT, BATCH_SIZE))                                                               \
    /* the KDD 2025 tutorial's training flag (its anchors per batch); also in the v1 NC template */                    \
    G("batch_size", GIGL_SAME_AS(INT, BATCH_SIZE))                                                                     \
    /* the scripts' random negative loader serves training, validation and test alike */                               \
    G("random_batch_size", GIGL_SAME_AS2(INT, RAND_NEG_BATCH, RAND_NEG_BATCH_EVAL))                                    \
    G("learning_rate", GIGL_SAME_AS(NUM, OPTIM_LR))                                                                    \
    G("weight_decay", GIGL_SAME_AS(NUM, OPTIM_WEIGHT_DECAY))                                                           \
    G("val_every_n_batch", GIGL_SAME_AS(INT, VAL_EVERY_NUM_BATCHES))                                                   \
    G("sampling_workers_per_process", GIGL_SAME_AS(INT, NUM_WORKERS))                                                  \
    G("log_every_n_batch", GIGL_KEPT_INT(log_every_n_batch, 1, INT64_MAX))                                             \
    G("local_world_size", GIGL_NOTE(NO_EFFECT, INT, 1, 1 << 20,                                                        \
                                    "cgnn runs one training process per MPI rank (mpirun -np N; resource "             \
                                    "config for the threads)"))                                                        \
    G("process_start_gap_seconds", GIGL_NOTE(NO_EFFECT, INT, 0, INT64_MAX,                                             \
                                             "GiGL staggers its processes' loader start-up to bound peak "             \
                                             "memory; cgnn's loaders allocate once, at start"))                        \
    G("sampling_worker_shared_channel_size",                                                                           \
      GIGL_NOTE(NO_EFFECT, STR, 0, 0,                                                                                  \
                "GraphLearn's shared-memory channel; cgnn's sampler threads hand batches over in memory, "             \
                "through a queue of a few batches"))                                                                   \
    G("should_enable_find_unused_parameters",                                                                          \
      GIGL_NOTE(NO_EFFECT, BOOL, 0, 0,                                                                                 \
                "a DistributedDataParallel flag; cgnn all-reduces every gradient, zero for a parameter a "             \
                "batch did not use"))                                                                                  \
    /* the v1 modeling task specs (names cgnn does not have already) */                                                \
    G("factor", GIGL_SAME_AS(NUM, SCHED_FACTOR))                                                                       \
    G("total_iters", GIGL_SAME_AS(INT, SCHED_TOTAL_ITERS))                                                             \
    G("val_main_num_workers", GIGL_KEPT_INT(val_num_workers, 0, 1024))                                                 \
    G("test_main_num_workers", GIGL_KEPT_INT(test_num_workers, 0, 1024))                                               \
    G("train_random_negative_num_workers", GIGL_NOTE(NO_EFFECT, INT, 0, 1024, GIGL_RNEG_WORKERS))                      \
    G("val_random_negative_num_workers", GIGL_NOTE(NO_EFFECT, INT, 0, 1024, GIGL_RNEG_WORKERS))                        \
    G("test_random_negative_num_workers", GIGL_NOTE(NO_EFFECT, INT, 0, 1024, GIGL_RNEG_WORKERS))                       \
    G("validate_every_n_batches", GIGL_SAME_AS(INT, VAL_EVERY_NUM_BATCHES))                                            \
    G("random_negative_batch_size", GIGL_SAME_AS2(INT, RAND_NEG_BATCH, RAND_NEG_BATCH_EVAL))                           \
    /* the dataset builder and its splitters */                                                                        \
    G("num_val", GIGL_KEPT_NUM(num_val, split_fractions_given))                                                        \
    G("num_test", GIGL_KEPT_NUM(num_test, split_fractions_given))                                                      \
    G("sample_edge_direction", GIGL_KEPT_BY(STR, 0, 0, keep_sample_edge_direction))                                    \
    G("should_use_range_partitioning", GIGL_NOTE(NO_EFFECT, BOOL, 0, 0, GIGL_DATASET_BUILD))                           \
    G("should_load_tensors_in_parallel", GIGL_NOTE(NO_EFFECT, BOOL, 0, 0, GIGL_DATASET_BUILD))                         \
    G("ssl_positive_label_percentage", GIGL_KEPT_BY(NUM, 0, 0, keep_ssl_percentage))                                   \
    G("max_labels_per_anchor_node", GIGL_KEPT_BY(INT, 1, INT32_MAX, keep_max_labels))                                  \
    /* in GiGL's configs, read by no GiGL code */                                                                      \
    G("train_main_sample_num_workers", GIGL_NOTE(UNREAD, INT, 0, 1024, GIGL_SAMPLE_WORKERS))                           \
    G("train_random_sample_num_workers", GIGL_NOTE(UNREAD, INT, 0, 1024, GIGL_SAMPLE_WORKERS))                         \
    G("val_main_sample_num_workers", GIGL_NOTE(UNREAD, INT, 0, 1024, GIGL_SAMPLE_WORKERS))                             \
    G("val_random_sample_num_workers", GIGL_NOTE(UNREAD, INT, 0, 1024, GIGL_SAMPLE_WORKERS))                           \
    G("test_main_sample_num_workers", GIGL_NOTE(UNREAD, INT, 0, 1024, GIGL_SAMPLE_WORKERS))                            \
    G("test_random_sample_num_workers", GIGL_NOTE(UNREAD, INT, 0, 1024, GIGL_SAMPLE_WORKERS))                          \
    G("margin",                                                                                                        \
      GIGL_NOTE(UNREAD, NUM, 0, 0, "no GiGL trainer reads it (GiGL's margin losses take their margin in code)"))       \
    G("should_l2_normalize_output",                                                                                    \
      GIGL_NOTE(UNREAD, BOOL, 0, 0,                                                                                    \
                "no GiGL trainer reads it (GiGL's and cgnn's name is should_l2_normalize_embedding_layer_output)"))

#define GIGL_ROW_OF(NAME, ...) {.name = NAME, __VA_ARGS__},
static const gigl_arg GIGL_ARGS[] = {CONFIG_GIGL_NAMES(GIGL_ROW_OF)};
#undef GIGL_ROW_OF
#define GIGL_ARG_COUNT ((int)(sizeof GIGL_ARGS / sizeof GIGL_ARGS[0]))
_Static_assert(sizeof GIGL_ARGS / sizeof GIGL_ARGS[0] <= CONFIG_GIGL_ARGS_MAX, "CONFIG_GIGL_ARGS_MAX holds them");

#define GIGL_NAME_OF(NAME, ...) NAME,
const char *const CONFIG_GIGL_ARG_KEYS[] = {CONFIG_GIGL_NAMES(GIGL_NAME_OF) NULL};
#undef GIGL_NAME_OF

/* ---- GiGL's defaults ----------------------------------------------------------------------
 * Read from the scripts' trainer_args.get(NAME, DEFAULT) / kwargs.get(NAME, DEFAULT) calls.
 * Not taken (docs/CONFIG.md says why): num_classes / out_dim 7 of the node classification script
 * and spec (Cora's; cgnn takes the dataset's class count), sampling_workers_per_process 4 and the
 * specs' *_num_workers (speed only: cgnn sizes its sampler threads to the cores; the numbers never
 * depend on them), process_start_gap_seconds and sampling_worker_shared_channel_size (no effect
 * in cgnn). The scripts' models are fixed in code: GraphSAGE (homogeneous; cgnn's default) and HGT
 * with 2 heads (heterogeneous: examples/link_prediction/models.py), TwoLayerGCN (hidden 16) for
 * the node classification spec. */
#define GIGL_LP_SCRIPT_DEFAULTS(BATCH)                                                                                 \
    {"hid_dim", "16", NULL}, {"out_dim", "16", NULL}, {"main_batch_size", BATCH, NULL},                                \
        {"random_batch_size", BATCH, NULL}, {"learning_rate", "0.0005", NULL}, {"weight_decay", "0.0005", NULL},      \
        {"num_max_train_batches", "1000", NULL}, {"num_val_batches", "100", NULL},                                     \
        {"val_every_n_batch", "50", NULL}, {"num_neighbors", "[10, 10]", "num_layers"},                                \
        {"log_every_n_batch", "25", NULL}
static const gigl_script GIGL_SCRIPTS[] = {
    {"examples.link_prediction.homogeneous_training", "examples/link_prediction/homogeneous_training.py",
     {GIGL_LP_SCRIPT_DEFAULTS("16")}},
    {"examples.link_prediction.heterogeneous_training", "examples/link_prediction/heterogeneous_training.py",
     {GIGL_LP_SCRIPT_DEFAULTS("16"), {"gnn_model_class_path", "gigl.src.common.models.pyg.heterogeneous.HGT", NULL},
      {"num_heads", "2", NULL}}},
    {"examples.link_prediction.graph_store.homogeneous_training",
     "examples/link_prediction/graph_store/homogeneous_training.py", {GIGL_LP_SCRIPT_DEFAULTS("16")}},
    {"examples.link_prediction.graph_store.heterogeneous_training",
     "examples/link_prediction/graph_store/heterogeneous_training.py",
     {GIGL_LP_SCRIPT_DEFAULTS("4"), {"gnn_model_class_path", "gigl.src.common.models.pyg.heterogeneous.HGT", NULL},
      {"num_heads", "2", NULL}}},
    {"examples.node_classification.homogeneous_training", "examples/node_classification/homogeneous_training.py",
     {{"hid_dim", "16", NULL},
      {"train_batch_size", "16", NULL},
      {"learning_rate", "0.001", NULL},
      {"weight_decay", "0.0005", NULL},
      {"num_max_train_batches", "200", NULL},
      {"num_val_batches", "20", NULL},
      {"val_every_n_batch", "50", NULL},
      {"num_neighbors", "[10, 10]", "num_layers"},
      {"log_every_n_batch", "25", NULL}}},
    {"gigl.src.common.modeling_task_specs.node_anchor_based_link_prediction_modeling_task_spec."
     "NodeAnchorBasedLinkPredictionModelingTaskSpec",
     "gigl/src/common/modeling_task_specs/node_anchor_based_link_prediction_modeling_task_spec.py",
     {{"hidden_dim", "16", NULL},
      {"num_layers", "2", NULL},
      {"out_channels", "16", NULL},
      {"num_heads", "2", NULL},
      {"val_every_num_batches", "20", NULL},
      {"num_val_batches", "10", NULL},
      {"num_test_batches", "100", NULL},
      {"optim_lr", "0.005", NULL},
      {"optim_weight_decay", "0.000001", NULL},
      {"main_sample_batch_size", "2048", NULL},
      {"random_negative_sample_batch_size", "512", NULL},
      {"random_negative_sample_batch_size_for_evaluation", "512", NULL},
      {"early_stop_criterion", "loss", NULL},
      {"early_stop_patience", "3", NULL}}},
    {"gigl.src.common.modeling_task_specs.node_classification_modeling_task_spec.NodeClassificationModelingTaskSpec",
     "gigl/src/common/modeling_task_specs/node_classification_modeling_task_spec.py",
     {{"gnn_model_class_path", "gigl.src.common.models.pyg.homogeneous.GCN", NULL},
      {"hidden_dim", "16", NULL},
      {"num_layers", "2", NULL},
      {"optim_lr", "0.01", NULL},
      {"optim_weight_decay", "0.0005", NULL},
      {"num_epochs", "5", NULL},
      {"main_sample_batch_size", "16", NULL}}},
};
#undef GIGL_LP_SCRIPT_DEFAULTS

const gigl_script *config_gigl_script(const char *command, const char *cls_path) {
    char module[512] = "";
    if (command && *command) {
        /* "python -m a.b.c --x" -> a.b.c; "python a/b/c.py" -> a.b.c */
        const char *m = strstr(command, "-m ");
        const char *p = m ? m + 3 : strchr(command, ' ');
        while (p && *p == ' ') p++;
        if (p) {
            size_t n = strcspn(p, " ");
            if (n >= sizeof module) n = sizeof module - 1;
            memcpy(module, p, n);
            module[n] = '\0';
            if (!m && n > 3 && !strcmp(module + n - 3, ".py")) module[n - 3] = '\0';
            for (char *q = module; !m && *q; q++)
                if (*q == '/') *q = '.';
        }
    }
    for (size_t i = 0; i < sizeof GIGL_SCRIPTS / sizeof GIGL_SCRIPTS[0]; i++) {
        if (module[0] && !strcmp(GIGL_SCRIPTS[i].name, module)) return &GIGL_SCRIPTS[i];
        if (cls_path && !strcmp(GIGL_SCRIPTS[i].name, cls_path)) return &GIGL_SCRIPTS[i];
    }
    return NULL;
}

int config_gigl_bool(const char *s, int *out) {
    static const char *const yes[] = {"y", "yes", "t", "true", "on", "1"}, *const no[] = {"n", "no", "f", "false", "off", "0"};
    for (int i = 0; i < 6; i++) {
        if (!strcasecmp(s, yes[i])) return *out = 1, 0;
        if (!strcasecmp(s, no[i])) return *out = 0, 0;
    }
    return -1;
}

int config_gigl_find(const char *key) {
    for (int i = 0; key && i < GIGL_ARG_COUNT; i++)
        if (!strcmp(GIGL_ARGS[i].name, key)) return i;
    return -1;
}

const gigl_arg *config_gigl_arg(int i) {
    CGNN_CHECK(i >= 0 && i < GIGL_ARG_COUNT);
    return &GIGL_ARGS[i];
}

int config_gigl_count(void) { return GIGL_ARG_COUNT; }

int config_gigl_value(const yamldoc *doc, const yamldoc_node *v, gigl_type type, int64_t lo, int64_t hi, double *num,
                      cgnn_err *err) {
    char buf[80];
    int64_t iv;
    int b;
    switch (type) {
    case GIGL_INT:
        if (config_arg_int(doc, v, lo, hi, &iv, err) != 0) return -1;
        *num = (double)iv;
        return 0;
    case GIGL_NUM:
        if (yamldoc_parse_double(v->scalar, num) != 0 || !isfinite(*num))
            return config_node_err(doc, v, err, "expected a finite number, got %s", config_shown(v, buf, sizeof buf));
        return 0;
    case GIGL_BOOL:
        if (config_gigl_bool(v->scalar, &b) != 0)
            return config_node_err(doc, v, err,
                                   "expected a boolean as GiGL reads it (True / False; strtobool: y, yes, "
                                   "t, true, on, 1, n, no, f, false, off, 0), got %s",
                                   config_shown(v, buf, sizeof buf));
        *num = b;
        return 0;
    case GIGL_STR: *num = 0; return 0;
    }
    return 0;
}

/* A GIGL_KEPT value into its field of trainer_args. */
static void gigl_store(trainer_args *a, const gigl_arg *e, double num) {
    char *base = (char *)a;
    if (e->type == GIGL_INT) {
        /* num is an integer in [lo, hi] read through a double: INT64_MAX is 2^63 there, which
         * int64_t does not hold (a conversion with undefined behaviour) */
        const int64_t v = num >= 0x1p63 ? INT64_MAX : (int64_t)num;
        memcpy(base + e->off, &v, sizeof v);
    } else {
        CGNN_CHECK(e->type == GIGL_NUM);
        memcpy(base + e->off, &num, sizeof num);
    }
    if (e->given_off) {
        const int one = 1;
        memcpy(base + e->given_off, &one, sizeof one);
    }
}

int config_gigl_finish(const targ_ctx *x, const yamldoc_node *const *gx) {
    const yamldoc *doc = x->doc;
    trainer_args *a = x->a;
    config_notes *notes = x->notes;
    cgnn_err *err = x->err;
    char same[CONFIG_NOTE_MAX - 64] = ""; /* the note adds its prefix */
    size_t len = 0;
    for (int i = 0; i < GIGL_ARG_COUNT; i++) {
        const yamldoc_node *v = gx[i];
        if (!v) continue;
        const gigl_arg *e = &GIGL_ARGS[i];
        double num = 0;
        if (e->kind == GIGL_SAME) {
            if (x->task == TASK_LINK_PREDICTION && e->target == TARG_OUT_CHANNELS && !strcmp(e->name, "num_classes")) {
                if (config_gigl_value(doc, v, GIGL_INT, 1, 1 << 24, &num, err) != 0) return -1;
                config_note(notes, "trainerArgs.num_classes: accepted, no effect: the number of classes of GiGL's node "
                            "classification example; this task is link prediction");
                continue;
            }
            if (v->line == 0) continue; /* a script's default (parse_trainer_args): its own note */
            char one[160];
            snprintf(one, sizeof one, "%s%s = %s%s%s", len ? ", " : "", e->name, CONFIG_TARGS[e->target].key,
                     e->target2 >= 0 ? " and " : "", e->target2 >= 0 ? CONFIG_TARGS[e->target2].key : "");
            if (len + strlen(one) + 8 < sizeof same)
                len += (size_t)snprintf(same + len, sizeof same - len, "%s", one);
            else if (!strstr(same, ", ..."))
                len += (size_t)snprintf(same + len, sizeof same - len, ", ...");
            continue;
        }
        if (config_gigl_value(doc, v, e->type, e->lo, e->hi, &num, err) != 0) return -1;
        if (e->kind == GIGL_NO_EFFECT || e->kind == GIGL_UNREAD) {
            config_note(notes, "trainerArgs.%s: accepted, no effect: %s", e->name, e->why);
            continue;
        }
        CGNN_CHECK(e->kind == GIGL_KEPT);
        if (e->keep) {
            if (e->keep(x, v, num) != 0) return -1;
        } else {
            gigl_store(a, e, num);
        }
    }
    if (a->split_fractions_given) { /* GiGL's _assert_valid_split_ratios (float arguments) */
        const yamldoc_node *vv = gx[config_gigl_find("num_val")], *vt = gx[config_gigl_find("num_test")];
        const yamldoc_node *n = vv ? vv : vt;
        if (!(a->num_val > 0 && a->num_val < 1))
            return config_node_err(doc, n, err, "num_val is %g: GiGL's validation fraction must be in (0, 1)",
                                   a->num_val);
        if (!(a->num_test >= 0 && a->num_test < 1))
            return config_node_err(doc, vt ? vt : n, err, "num_test is %g: GiGL's test fraction must be in [0, 1)",
                                   a->num_test);
        if (a->num_val + a->num_test >= 1)
            return config_node_err(doc, n, err, "num_val + num_test is %g: GiGL's validation and test fractions must "
                                   "leave edges or nodes to train on (sum < 1)", a->num_val + a->num_test);
        if (a->ssl_positive_label_percentage > 0)
            config_note(notes,
                        "trainerArgs.num_val / num_test: %g / %g of the anchors of the self-supervised labels go "
                        "to validation / test (GiGL's DistNodeAnchorLinkSplitter, data_splitters.py)",
                        a->num_val, a->num_test);
        else
            config_note(notes, "trainerArgs.num_val / num_test (GiGL's validation / test fractions for its splitter, "
                        "data_splitters.py): kept (%g / %g), no effect: the dataset comes split (its metadata.yaml "
                        "lists train / validation / test sets)", a->num_val, a->num_test);
    }
    if (config_args_via_gigl(x, TARG_OPTIM_WEIGHT_DECAY) && a->optim.kind != OPTIM_ADAMW)
        config_note(notes, "trainerArgs.%s: the weight decay of %s (optim_class_path), an L2 penalty; GiGL's example "
                    "scripts train with AdamW, whose decay is decoupled: set optim_class_path: AdamW for theirs",
                    x->gname[TARG_OPTIM_WEIGHT_DECAY], optim_kind_name(a->optim.kind));
    if (len) config_note(notes, "trainerArgs: GiGL's names read as cgnn's: %s", same);
    if (a->ssl_keep_eval_edges && a->ssl_positive_label_percentage == 0)
        config_note(notes, "trainerArgs.ssl_keep_eval_edges: no effect without ssl_positive_label_percentage (the "
                    "dataset's own link prediction pairs are not message-passing edges cgnn removes)");
    return 0;
}
