/* config.c — GiGL task config (GbmlConfig YAML) and resource config (GiglResourceConfig YAML)
 * read strictly into typed structs; see config.h and docs/CONFIG.md.
 *
 * Order of work: the YAML is parsed into a yamldoc tree; each section is checked key by key
 * (unknown keys are errors with a "did you mean" suggestion; GiGL fields cgnn does not use are
 * known and ignored); trainerArgs is read in two passes: the first collects the value node of
 * every known key (so that arguments may appear in any order), the second parses each value
 * strictly and then checks the arguments against each other (fanouts vs num_layers, scheduler
 * arguments vs scheduler, link-prediction arguments vs task).
 * Every error is CGNN_ERR_INPUT, "FILE: PATH (line N): what is wrong".
 */
#include "train/config.h"
#include "io/dataset.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/yamldoc.h"
#include "train/lp_eval.h"

/* ---- the trainerArgs keys ----------------------------------------------------- */

typedef enum targ {
    TARG_GNN_MODEL_CLASS_PATH,
    TARG_NUM_LAYERS,
    TARG_HIDDEN_DIM,
    TARG_OUT_CHANNELS,
    TARG_NUM_NEIGHBORS,
    TARG_DROPOUT,
    TARG_NUM_HEADS,
    TARG_NUM_BASES,
    TARG_L2_NORMALIZE,
    TARG_FEATURE_NORMALIZATION,
    TARG_BATCH_SIZE,
    TARG_NUM_EPOCHS,
    TARG_NUM_MAX_TRAIN_BATCHES,
    TARG_VAL_EVERY_NUM_BATCHES,
    TARG_NUM_VAL_BATCHES,
    TARG_NUM_TEST_BATCHES,
    TARG_OPTIM_CLASS_PATH,
    TARG_OPTIM_LR,
    TARG_OPTIM_WEIGHT_DECAY,
    TARG_OPTIM_MOMENTUM,
    TARG_CLIP_GRAD_NORM,
    TARG_SCHED_NAME,
    TARG_SCHED_STEP_SIZE,
    TARG_SCHED_GAMMA,
    TARG_SCHED_FACTOR,
    TARG_SCHED_TOTAL_ITERS,
    TARG_SCHED_START_FACTOR,
    TARG_SCHED_END_FACTOR,
    TARG_SCHED_T_MAX,
    TARG_SCHED_ETA_MIN,
    TARG_EARLY_STOP_CRITERION,
    TARG_EARLY_STOP_PATIENCE,
    TARG_NUM_WORKERS,
    TARG_SEED,
    TARG_REPLACE,
    TARG_DROP_UNEVEN,
    TARG_RAND_NEG_BATCH,
    TARG_RAND_NEG_BATCH_EVAL,
    TARG_SOFTMAX_TEMP,
    TARG_REMOVE_ACCIDENTAL_HITS,
    TARG_TASK_PATH,
    TARG_EXCLUDE_SEED_EDGES,
    TARG_SSL_KEEP_EVAL_EDGES,
    TARG_NODE_EMB_DIM,
    TARG_EMB_OPTIM,
    TARG_EMB_LR,
    TARG_EMB_INIT_STD,
    TARG_EMB_REG,
    TARG_EMB_WEIGHT_DECAY,
    TARG_CHECKPOINT_EVERY,
    TARG_SEED_ASSIGNMENT,
    TARG_SEED_PARTITION,
    TARG_RPC_TIMEOUT,
    /* server-client mode and the feature cache (train/graph_store.h, sample/feat_cache.h) */
    TARG_PREFETCH_SIZE,
    TARG_CACHE_POLICY,
    TARG_CACHE_RATIO,
    TARG_CACHE_MEMORY_BUDGET,
    TARG_CACHE_PRESAMPLE,
    /* link prediction: candidates and full-ranking validation */
    TARG_LP_CANDIDATE_RANGE,
    TARG_VAL_AT_END,
    TARG_LP_BATCHING,
    TARG_LIGHTGCN_ALPHA,
    TARG_COUNT
} targ;

const char *const CONFIG_TRAINER_ARG_KEYS[TARG_COUNT + 1] = {
    "gnn_model_class_path",
    "num_layers",
    "hidden_dim",
    "out_channels",
    "num_neighbors",
    "dropout",
    "num_heads",
    "num_bases",
    "should_l2_normalize_embedding_layer_output",
    "feature_normalization",
    "main_sample_batch_size",
    "num_epochs",
    "num_max_train_batches",
    "val_every_num_batches",
    "num_val_batches",
    "num_test_batches",
    "optim_class_path",
    "optim_lr",
    "optim_weight_decay",
    "optim_momentum",
    "clip_grad_norm",
    "lr_scheduler_name",
    "lr_scheduler_step_size",
    "lr_scheduler_gamma",
    "lr_scheduler_factor",
    "lr_scheduler_total_iters",
    "lr_scheduler_start_factor",
    "lr_scheduler_end_factor",
    "lr_scheduler_t_max",
    "lr_scheduler_eta_min",
    "early_stop_criterion",
    "early_stop_patience",
    "train_main_num_workers",
    "seed",
    "sample_with_replacement",
    "drop_uneven_inputs",
    "random_negative_sample_batch_size",
    "random_negative_sample_batch_size_for_evaluation",
    "softmax_temp",
    "should_remove_accidental_hits",
    "task_path",
    "exclude_seed_edges",
    "ssl_keep_eval_edges",
    "node_embedding_dim",
    "embedding_optim_class_path",
    "embedding_lr",
    "node_embedding_init_std",
    "node_embedding_reg",
    "embedding_weight_decay",
    "checkpoint_every_n_batches",
    "seed_assignment",
    "seed_partition_uri",
    "rpc_timeout_s",
    "prefetch_size",
    "cache_policy",
    "cache_ratio",
    "cache_memory_budget",
    "cache_presample_batches",
    "lp_candidate_range",
    "val_at_end",
    "lp_batching",
    "lightgcn_alpha",
    NULL,
};
_Static_assert(sizeof CONFIG_TRAINER_ARG_KEYS / sizeof CONFIG_TRAINER_ARG_KEYS[0] == TARG_COUNT + 1,
               "one name per trainer argument");

_Static_assert(CONFIG_MAX_LAYERS == sizeof ((trainer_args *)0)->fanouts / sizeof(int64_t),
               "fanouts[] holds one fanout per layer");

static const char *const TASK_NAMES[] = {"node classification", "link prediction"};
_Static_assert(sizeof TASK_NAMES / sizeof TASK_NAMES[0] == TASK_KIND_COUNT, "task names");

/* ---- messages ------------------------------------------------------------------- */

/* "FILE: PATH (line N): <fmt>" about node n. Returns -1. */
__attribute__((format(printf, 4, 5))) static int node_err(const yamldoc *doc, const yamldoc_node *n,
                                                          cgnn_err *err, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): %s", doc->file,
                   n->path[0] ? n->path : "top level", n->line, msg);
}

/* A scalar's text for messages, shortened. */
static const char *shown(const yamldoc_node *n, char *buf, size_t cap) {
    if (n->kind != YAMLDOC_SCALAR) return n->kind == YAMLDOC_SEQUENCE ? "a list" : "a mapping";
    if (strlen(n->scalar) > 60)
        snprintf(buf, cap, "'%.57s...'", n->scalar);
    else
        snprintf(buf, cap, "'%s'", n->scalar);
    return buf;
}

/* The entry of known closest to `key` by edit distance if it is plausibly a typo, else NULL
 * (the same rule as yamldoc_check_keys). */
static const char *suggest(const char *key, const char *const *known) {
    const char *best = NULL;
    int best_d = 1 << 30;
    for (const char *const *a = known; *a; a++) {
        int d = yamldoc_edit_distance(key, *a);
        if (d < best_d) {
            best_d = d;
            best = *a;
        }
    }
    if (!best) return NULL;
    int limit = (int)strlen(best) / 3;
    if (limit < 2) limit = 2;
    return best_d <= limit && best_d < (int)strlen(key) ? best : NULL;
}

/* An unquoted empty / ~ / null scalar: YAML's null, treated as "not given". */
static int is_null(const yamldoc_node *n) {
    if (!n) return 1;
    if (n->kind != YAMLDOC_SCALAR || n->quoted) return 0;
    const char *s = n->scalar;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* map[key] as a mapping: *out = NULL when absent or null; error when it is something else. */
static int get_section(const yamldoc *doc, const yamldoc_node *map, const char *key,
                       const yamldoc_node **out, cgnn_err *err) {
    const yamldoc_node *v = yamldoc_get(map, key);
    *out = NULL;
    if (is_null(v)) return 0;
    if (v->kind != YAMLDOC_MAPPING) {
        char buf[80];
        return node_err(doc, v, err, "expected a mapping, got %s", shown(v, buf, sizeof buf));
    }
    *out = v;
    return 0;
}

/* Copies src into dst[cap]; an error about node n when it does not fit. */
static int copy_str(char *dst, size_t cap, const char *src, const yamldoc *doc, const yamldoc_node *n,
                    cgnn_err *err) {
    size_t len = strlen(src);
    if (len >= cap) return node_err(doc, n, err, "too long (%zu characters, at most %zu)", len, cap - 1);
    memcpy(dst, src, len + 1);
    return 0;
}

/* ---- URIs ------------------------------------------------------------------------ */

int config_resolve_uri(char *out, size_t cap, const char *uri, const char *what, cgnn_err *err) {
    CGNN_CHECK(out && cap > 0 && uri);
    if (!what) what = "URI";
    /* A scheme is [A-Za-z][A-Za-z0-9+.-]* followed by "://". */
    const char *p = uri;
    if (isalpha((unsigned char)*p)) {
        p++;
        while (isalnum((unsigned char)*p) || *p == '+' || *p == '.' || *p == '-') p++;
    }
    const char *path = uri;
    if (p != uri && strncmp(p, "://", 3) == 0) {
        size_t scheme_len = (size_t)(p - uri);
        if (scheme_len == 4 && strncasecmp(uri, "file", 4) == 0) {
            path = p + 3;
        } else {
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: unsupported URI scheme '%.*s://' (cgnn reads and writes local files; "
                           "use a path or file://)",
                           what, (int)(scheme_len > 32 ? 32 : scheme_len), uri);
        }
    }
    if (!*path) return err_set(err, CGNN_ERR_INPUT, "%s: empty path", what);
    size_t len = strlen(path);
    if (len >= cap)
        return err_set(err, CGNN_ERR_INPUT, "%s: path too long (%zu characters, at most %zu)", what,
                       len, cap - 1);
    memcpy(out, path, len + 1);
    return 0;
}

/* Reads map[key] (a string) as a URI into out[CONFIG_PATH_MAX]. Absent/null: required -> error,
 * else out = "". An empty string counts as absent. */
static int get_uri(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                   char *out, cgnn_err *err) {
    const char *s = NULL;
    out[0] = '\0';
    if (yamldoc_get_string(doc, map, key, required, &s, err) != 0) return -1;
    const yamldoc_node *v = yamldoc_get(map, key);
    if (!s || !*s) {
        if (!required) return 0;
        return node_err(doc, v ? v : map, err, "must not be empty");
    }
    char what[CONFIG_PATH_MAX + 256];
    snprintf(what, sizeof what, "%s: %s (line %d)", doc->file, v->path, v->line);
    return config_resolve_uri(out, CONFIG_PATH_MAX, s, what, err);
}

/* ---- strict typed values of trainerArgs -------------------------------------------- */

static int arg_int(const yamldoc *doc, const yamldoc_node *n, int64_t lo, int64_t hi, int64_t *out,
                   cgnn_err *err) {
    char buf[80];
    int64_t v;
    if (yamldoc_parse_int(n->scalar, &v) != 0)
        return node_err(doc, n, err, "expected an integer, got %s", shown(n, buf, sizeof buf));
    if (v < lo || v > hi) {
        if (hi == INT64_MAX)
            return node_err(doc, n, err, "must be >= %lld, got %lld", (long long)lo, (long long)v);
        return node_err(doc, n, err, "must be in [%lld, %lld], got %lld", (long long)lo,
                        (long long)hi, (long long)v);
    }
    *out = v;
    return 0;
}

/* A finite number in the interval lo..hi; lo_open/hi_open make that end exclusive;
 * hi = INFINITY for no upper bound. */
static int arg_double(const yamldoc *doc, const yamldoc_node *n, double lo, int lo_open, double hi,
                      int hi_open, double *out, cgnn_err *err) {
    char buf[80];
    double v;
    if (yamldoc_parse_double(n->scalar, &v) != 0)
        return node_err(doc, n, err, "expected a number, got %s", shown(n, buf, sizeof buf));
    if (!isfinite(v)) return node_err(doc, n, err, "must be a finite number, got %s", shown(n, buf, sizeof buf));
    /* the training math is float32: a value that float32 rounds to 0 or infinity (1e-300, 1e39)
     * would pass a double range check and then divide by zero or overflow */
    if (fabs(v) > FLT_MAX)
        return node_err(doc, n, err, "%s is too large for float32 (at most %g)", shown(n, buf, sizeof buf), FLT_MAX);
    if (v != 0 && fabs(v) < FLT_MIN)
        return node_err(doc, n, err, "%s is too small for float32 (0, or at least %g in magnitude)",
                        shown(n, buf, sizeof buf), FLT_MIN);
    int ok = (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
    if (!ok) {
        if (isinf(hi))
            return node_err(doc, n, err, "must be %s %g, got %s", lo_open ? ">" : ">=", lo,
                            shown(n, buf, sizeof buf));
        return node_err(doc, n, err, "must be in %c%g, %g%c, got %s", lo_open ? '(' : '[', lo, hi,
                        hi_open ? ')' : ']', shown(n, buf, sizeof buf));
    }
    *out = v;
    return 0;
}

static int arg_bool(const yamldoc *doc, const yamldoc_node *n, int *out, cgnn_err *err) {
    char buf[80];
    if (yamldoc_parse_bool(n->scalar, out) != 0)
        return node_err(doc, n, err, "expected true or false, got %s", shown(n, buf, sizeof buf));
    return 0;
}

/* Parses one fanout token (trimmed by the caller) into *out: -1 or >= 1, or also 0 when
 * allow_zero (the per-edge-type form: an edge type not sampled at that hop). `what` prefixes the
 * message ("" or "edge type (a, b, c): "). */
static int fanout_value(const yamldoc *doc, const yamldoc_node *n, const char *what, const char *tok, int index,
                        int allow_zero, int64_t *out, cgnn_err *err) {
    int64_t v;
    if (yamldoc_parse_int(tok, &v) != 0)
        return node_err(doc, n, err, "%sentry %d: expected an integer, got '%.40s'", what, index, tok);
    if ((v == 0 && !allow_zero) || v < -1 || v > INT32_MAX)
        return node_err(doc, n, err, "%sentry %d is %lld: a fanout is -1 (all neighbours)%s or between 1 and %d", what,
                        index, (long long)v, allow_zero ? ", 0 (not sampled at that hop)" : "", INT32_MAX);
    *out = v;
    return 0;
}

/* A fanout list: "[15, 10]", "15, 10", "15" or a YAML list of integers (n a scalar or a
 * sequence). Stores up to CONFIG_MAX_LAYERS fanouts and the number of entries in *count. */
static int arg_fanout_list(const yamldoc *doc, const yamldoc_node *n, const char *what, int allow_zero,
                           int64_t *fanouts, int *count, cgnn_err *err) {
    *count = 0;
    if (n->kind == YAMLDOC_SEQUENCE) {
        if (n->len == 0) return node_err(doc, n, err, "%sempty list (one fanout per layer)", what);
        for (int i = 0; i < n->len; i++) {
            const yamldoc_node *it = n->items[i];
            if (it->kind != YAMLDOC_SCALAR) return node_err(doc, it, err, "%sexpected an integer fanout", what);
            int64_t v = 0;
            if (fanout_value(doc, n, what, it->scalar, i, allow_zero, &v, err) != 0) return -1;
            if (i < CONFIG_MAX_LAYERS) fanouts[i] = v;
        }
        *count = n->len;
        return 0;
    }
    if (n->kind != YAMLDOC_SCALAR) {
        char buf[80];
        return node_err(doc, n, err, "%sexpected a list of fanouts, got %s", what, shown(n, buf, sizeof buf));
    }
    const char *s = n->scalar, *e = s + strlen(s);
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    int has_open = s < e && *s == '[', has_close = e > s && e[-1] == ']';
    if (has_open != has_close) return node_err(doc, n, err, "%sunbalanced brackets in '%.60s'", what, n->scalar);
    if (has_open) s++, e--;
    const char *p = s;
    int i = 0;
    for (;;) {
        const char *q = p;
        while (q < e && *q != ',') q++;
        const char *a = p, *b = q;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        if (a == b) {
            if (i == 0 && q == e) return node_err(doc, n, err, "%sempty list (one fanout per layer)", what);
            return node_err(doc, n, err, "%sentry %d is empty", what, i);
        }
        char tok[32];
        if ((size_t)(b - a) >= sizeof tok)
            return node_err(doc, n, err, "%sentry %d: expected an integer, got '%.*s'", what, i, 20, a);
        memcpy(tok, a, (size_t)(b - a));
        tok[b - a] = '\0';
        int64_t v = 0;
        if (fanout_value(doc, n, what, tok, i, allow_zero, &v, err) != 0) return -1;
        if (i < CONFIG_MAX_LAYERS) fanouts[i] = v;
        i++;
        if (q == e) break;
        p = q + 1;
    }
    *count = i;
    return 0;
}

char *config_edge_type_name(const config_edge_type *et, char *out, size_t cap) {
    snprintf(out, cap, "%s:%s:%s", et->src_node_type, et->relation, et->dst_node_type);
    return out;
}

static int edge_type_eq(const config_edge_type *a, const config_edge_type *b) {
    return !strcmp(a->src_node_type, b->src_node_type) && !strcmp(a->relation, b->relation) &&
           !strcmp(a->dst_node_type, b->dst_node_type);
}

/* "(src, rel, dst): " for messages about one edge type's list. */
static void etype_prefix(const config_edge_type *et, char *out, size_t cap) {
    snprintf(out, cap, "edge type (\"%s\", \"%s\", \"%s\"): ", et->src_node_type, et->relation, et->dst_node_type);
}

/* Adds edge type et with fanouts f[count] as entry a->num_etype_fanouts (n: the node for
 * messages; `where` says which entry, e.g. "2" or "2 (line 7)"): checks the length against
 * num_layers, refuses a second entry for the same edge type and more than
 * CONFIG_MAX_ETYPE_FANOUTS entries. */
static int add_etype_fanout(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                            const config_edge_type *et, const int64_t *f, int count, const char *where,
                            cgnn_err *err) {
    char pre[3 * CONFIG_TYPE_NAME_MAX + 32];
    etype_prefix(et, pre, sizeof pre);
    if (count != a->num_layers)
        return node_err(doc, n, err, "%s%d fanout%s given but num_layers is %d%s: one fanout per layer, seed-side first",
                        pre, count, count == 1 ? "" : "s", a->num_layers, layers_given ? "" : " (the default)");
    for (int i = 0; i < a->num_etype_fanouts; i++)
        if (edge_type_eq(&a->etype_fanouts[i].etype, et))
            return node_err(doc, n, err, "%sgiven twice (entries %d and %s); give each edge type once", pre, i, where);
    if (a->num_etype_fanouts >= CONFIG_MAX_ETYPE_FANOUTS)
        return node_err(doc, n, err, "more than %d edge types (entry %s); cgnn takes at most %d", CONFIG_MAX_ETYPE_FANOUTS,
                        where, CONFIG_MAX_ETYPE_FANOUTS);
    config_etype_fanout *dst = &a->etype_fanouts[a->num_etype_fanouts++];
    dst->etype = *et;
    for (int h = 0; h < CONFIG_MAX_LAYERS; h++) dst->fanouts[h] = h < count ? f[h] : 0;
    return 0;
}

/* Checks a type name taken from a fanout key: non-empty, fits, no ':' (the dataset's edge type
 * names join the three parts with ':'). */
static int check_type_name(const yamldoc *doc, const yamldoc_node *n, const char *name, size_t len,
                           const char *where, cgnn_err *err) {
    if (len == 0) return node_err(doc, n, err, "%s: empty type name", where);
    if (len >= CONFIG_TYPE_NAME_MAX)
        return node_err(doc, n, err, "%s: type name '%.40s...' is too long (at most %d characters)", where, name,
                        CONFIG_TYPE_NAME_MAX - 1);
    if (memchr(name, ':', len))
        return node_err(doc, n, err, "%s: type name '%.*s' contains ':' (it separates the parts of an edge type)",
                        where, (int)(len > 60 ? 60 : len), name);
    return 0;
}

/* GiGL's string form of a per-edge-type fanout, the str() of a Python
 * dict[tuple[str, str, str], list[int]] as gigl.utils.sampling.parse_fanout reads it with
 * ast.literal_eval:  {("term", "to", "paper"): [10, 10], ('paper', 'to', 'author'): [15, 15]}
 * Strings in single or double quotes (no escapes), any whitespace (newlines too: YAML's >-),
 * trailing commas as Python allows; values are lists (not tuples) of integers. */
typedef struct fan_lexer {
    const char *s, *p; /* the whole text; the cursor */
} fan_lexer;

static void fl_ws(fan_lexer *l) {
    while (*l->p && isspace((unsigned char)*l->p)) l->p++;
}

/* Error at the cursor: "at character N (near '...')". */
__attribute__((format(printf, 5, 6))) static int fl_err(const yamldoc *doc, const yamldoc_node *n, const fan_lexer *l,
                                                        cgnn_err *err, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!*l->p)
        return node_err(doc, n, err, "per-edge-type fanouts: %s at the end of the text", msg);
    return node_err(doc, n, err, "per-edge-type fanouts: %s at character %d (near '%.20s')", msg,
                    (int)(l->p - l->s) + 1, l->p);
}

/* Expects character c (after whitespace). */
static int fl_expect(const yamldoc *doc, const yamldoc_node *n, fan_lexer *l, char c, const char *what,
                     cgnn_err *err) {
    fl_ws(l);
    if (*l->p != c) return fl_err(doc, n, l, err, "expected '%c' %s", c, what);
    l->p++;
    return 0;
}

/* A quoted name into out[CONFIG_TYPE_NAME_MAX]. */
static int fl_string(const yamldoc *doc, const yamldoc_node *n, fan_lexer *l, char *out, const char *where,
                     cgnn_err *err) {
    fl_ws(l);
    const char q = *l->p;
    if (q != '"' && q != '\'') return fl_err(doc, n, l, err, "expected a quoted type name in %s", where);
    const char *a = ++l->p;
    while (*l->p && *l->p != q && *l->p != '\\' && *l->p != '\n') l->p++;
    if (*l->p == '\\') return fl_err(doc, n, l, err, "escapes are not supported in type names (%s)", where);
    if (*l->p != q) {
        l->p = a - 1;
        return fl_err(doc, n, l, err, "unterminated string in %s", where);
    }
    const size_t len = (size_t)(l->p - a);
    if (check_type_name(doc, n, a, len, where, err) != 0) return -1;
    memcpy(out, a, len);
    out[len] = '\0';
    l->p++;
    return 0;
}

/* [int, int, ...] into f (up to CONFIG_MAX_LAYERS kept), the entry count into *count. */
static int fl_list(const yamldoc *doc, const yamldoc_node *n, fan_lexer *l, const char *pre, int64_t *f, int *count,
                   cgnn_err *err) {
    fl_ws(l);
    if (*l->p == '(') return fl_err(doc, n, l, err, "%sthe fanouts are a tuple; GiGL takes a list [...]", pre);
    if (fl_expect(doc, n, l, '[', "(the edge type's list of fanouts)", err) != 0) return -1;
    int i = 0;
    for (;;) {
        fl_ws(l);
        if (*l->p == ']') {
            if (i == 0) return fl_err(doc, n, l, err, "%sempty list (one fanout per layer)", pre);
            break;
        }
        const char *a = l->p;
        if (*l->p == '+' || *l->p == '-') l->p++;
        while (isdigit((unsigned char)*l->p)) l->p++;
        const char *b = l->p;
        char tok[32];
        if (b == a || (b - a == 1 && !isdigit((unsigned char)*a)) || isalnum((unsigned char)*l->p) ||
            *l->p == '.' || *l->p == '_' || (size_t)(b - a) >= sizeof tok) {
            l->p = a;
            return fl_err(doc, n, l, err, "%sentry %d: expected an integer", pre, i);
        }
        memcpy(tok, a, (size_t)(b - a));
        tok[b - a] = '\0';
        int64_t v = 0;
        if (fanout_value(doc, n, pre, tok, i, 1, &v, err) != 0) return -1;
        if (i < CONFIG_MAX_LAYERS) f[i] = v;
        i++;
        fl_ws(l);
        if (*l->p == ',') {
            l->p++;
            continue;
        }
        if (*l->p != ']') return fl_err(doc, n, l, err, "%sexpected ',' or ']' after entry %d", pre, i - 1);
    }
    l->p++;
    *count = i;
    return 0;
}

static int parse_etype_fanout_string(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                                     cgnn_err *err) {
    fan_lexer l = {n->scalar, n->scalar};
    if (fl_expect(doc, n, &l, '{', "", err) != 0) return -1;
    for (int entry = 0;; entry++) {
        fl_ws(&l);
        if (*l.p == '}') {
            if (entry == 0) return fl_err(doc, n, &l, err, "no edge types in {}");
            break;
        }
        char where[64], index[16];
        snprintf(where, sizeof where, "edge type %d", entry);
        snprintf(index, sizeof index, "%d", entry);
        config_edge_type et;
        fl_ws(&l);
        if (*l.p != '(')
            return fl_err(doc, n, &l, err, "expected '(' opening edge type %d, a tuple (\"src\", \"relation\", \"dst\")",
                          entry);
        l.p++;
        char *parts[3] = {et.src_node_type, et.relation, et.dst_node_type};
        for (int k = 0; k < 3; k++) {
            if (fl_string(doc, n, &l, parts[k], where, err) != 0) return -1;
            fl_ws(&l);
            if (k < 2 && *l.p != ',') {
                if (*l.p == ')')
                    return fl_err(doc, n, &l, err, "edge type %d has %d name%s; it needs 3 (\"src\", \"relation\", "
                                  "\"dst\")", entry, k + 1, k ? "s" : "");
                return fl_err(doc, n, &l, err, "expected ',' between the names of edge type %d", entry);
            }
            if (k < 2) l.p++;
        }
        fl_ws(&l);
        if (*l.p == ',') l.p++; /* Python's trailing comma in a tuple */
        fl_ws(&l);
        if (*l.p != ')')
            return fl_err(doc, n, &l, err, "expected ')' closing edge type %d (it has 3 names: \"src\", \"relation\", "
                          "\"dst\")", entry);
        l.p++;
        fl_ws(&l);
        if (*l.p != ':') return fl_err(doc, n, &l, err, "expected ':' after edge type %d", entry);
        l.p++;
        char pre[3 * CONFIG_TYPE_NAME_MAX + 32];
        etype_prefix(&et, pre, sizeof pre);
        int64_t f[CONFIG_MAX_LAYERS] = {0};
        int count = 0;
        if (fl_list(doc, n, &l, pre, f, &count, err) != 0) return -1;
        if (add_etype_fanout(doc, n, a, layers_given, &et, f, count, index, err) != 0) return -1;
        fl_ws(&l);
        if (*l.p == ',') {
            l.p++;
            continue;
        }
        if (*l.p != '}') return fl_err(doc, n, &l, err, "expected ',' or '}' after the fanouts of edge type %d", entry);
    }
    l.p++;
    fl_ws(&l);
    if (*l.p) return fl_err(doc, n, &l, err, "unexpected text after the closing '}'");
    return 0;
}

/* Splits a mapping key "src:rel:dst" or "src__rel__dst" (PyG's joined form) into *et. */
static int split_etype_key(const yamldoc *doc, const yamldoc_node *n, const char *key, config_edge_type *et,
                           cgnn_err *err) {
    const char *sep = strchr(key, ':') ? ":" : "__";
    const size_t sl = strlen(sep);
    const char *p1 = strstr(key, sep), *p2 = p1 ? strstr(p1 + sl, sep) : NULL;
    if (!p1 || !p2 || strstr(p2 + sl, sep))
        return node_err(doc, n, err,
                        "per-edge-type fanouts: key '%.100s' is not an edge type: write it \"src:relation:dst\" "
                        "(or \"src__relation__dst\")",
                        key);
    const char *starts[3] = {key, p1 + sl, p2 + sl};
    const size_t lens[3] = {(size_t)(p1 - key), (size_t)(p2 - (p1 + sl)), strlen(p2 + sl)};
    char *parts[3] = {et->src_node_type, et->relation, et->dst_node_type};
    char where[160];
    snprintf(where, sizeof where, "key '%.100s'", key);
    for (int k = 0; k < 3; k++) {
        if (check_type_name(doc, n, starts[k], lens[k], where, err) != 0) return -1;
        memcpy(parts[k], starts[k], lens[k]);
        parts[k][lens[k]] = '\0';
    }
    return 0;
}

static int parse_etype_fanout_mapping(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                                      cgnn_err *err) {
    if (n->len == 0) return node_err(doc, n, err, "per-edge-type fanouts: no edge types in the mapping");
    for (int i = 0; i < n->len; i++) {
        const yamldoc_node *v = n->items[i];
        config_edge_type et;
        if (split_etype_key(doc, v, n->keys[i], &et, err) != 0) return -1;
        char pre[3 * CONFIG_TYPE_NAME_MAX + 32], where[64];
        etype_prefix(&et, pre, sizeof pre);
        snprintf(where, sizeof where, "%d (line %d)", i, n->key_lines[i]);
        int64_t f[CONFIG_MAX_LAYERS] = {0};
        int count = 0;
        if (arg_fanout_list(doc, v, pre, 1, f, &count, err) != 0) return -1;
        if (add_etype_fanout(doc, v, a, layers_given, &et, f, count, where, err) != 0) return -1;
    }
    return 0;
}

/* num_neighbors in any of its forms into a (after num_layers is known). */
static int arg_num_neighbors(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                             cgnn_err *err) {
    for (int i = 0; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = 0;
    a->num_etype_fanouts = 0;
    const char *s = n->kind == YAMLDOC_SCALAR ? n->scalar : "";
    while (isspace((unsigned char)*s)) s++;
    if (n->kind == YAMLDOC_MAPPING || *s == '{') {
        int rc = n->kind == YAMLDOC_MAPPING ? parse_etype_fanout_mapping(doc, n, a, layers_given, err)
                                            : parse_etype_fanout_string(doc, n, a, layers_given, err);
        a->num_fanouts = 0;
        return rc;
    }
    int count;
    if (arg_fanout_list(doc, n, "", 0, a->fanouts, &count, err) != 0) return -1;
    if (count != a->num_layers)
        return node_err(doc, n, err, "%d fanout%s given but num_layers is %d%s: one fanout per layer, seed-side first",
                        count, count == 1 ? "" : "s", a->num_layers, layers_given ? "" : " (the default)");
    for (int i = count; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = 0;
    a->num_fanouts = a->num_layers;
    return 0;
}

/* ---- defaults -------------------------------------------------------------------- */

void config_default_trainer_args(trainer_args *a, task_kind task) {
    memset(a, 0, sizeof *a);
    a->model = MODEL_GRAPHSAGE;
    a->num_layers = 2;
    a->hidden_dim = 256;
    a->out_channels = 0;
    a->num_fanouts = a->num_layers;
    for (int i = 0; i < a->num_layers; i++) a->fanouts[i] = 10; /* the rest stay 0 */
    a->dropout = 0.5;
    a->num_heads = 2;
    a->l2_normalize_output = task == TASK_LINK_PREDICTION;
    a->l2_normalize_set = 0;
    snprintf(a->feature_normalization, sizeof a->feature_normalization, "none");
    a->batch_size = 512;
    a->num_epochs = 1;
    a->num_max_train_batches = 0;
    a->val_every_num_batches = 0;
    a->num_val_batches = 0;
    a->num_test_batches = 0;
    snprintf(a->early_stop_criterion, sizeof a->early_stop_criterion, "loss");
    a->early_stop_patience = 0;
    a->checkpoint_every_n_batches = 0;
    a->num_workers = 2;
    a->seed = 0;
    a->replace = 0;
    a->drop_uneven_inputs = 0;
    optim_default_config(&a->optim, OPTIM_ADAM, 0.01);
    a->clip_grad_norm = 0;
    /* No lr_scheduler_name: a constant learning rate (ConstantLR with factor 1 changes nothing). */
    sched_default_config(&a->sched, SCHED_CONSTANT);
    a->sched.factor = 1.0;
    a->sched.total_iters = 0;
    a->random_negative_sample_batch_size = 512; /* GiGL's defaults */
    a->random_negative_sample_batch_size_for_evaluation = 512;
    a->softmax_temp = 0.07;
    a->should_remove_accidental_hits = 1;
    a->exclude_seed_edges = 0;
    a->lp_candidate_lo = a->lp_candidate_hi = 0;
    a->val_rank_k = 0;
    a->val_rank_ndcg = 0;
    a->val_at_end = 0;
    a->node_embedding_dim = 0;
    snprintf(a->embedding_optim, sizeof a->embedding_optim, "SparseAdam");
    a->embedding_lr = -1; /* = optim_lr */
    a->node_embedding_init_std = 1.0;
    a->node_embedding_reg = 0.0;
    a->embedding_weight_decay = 0.0;
    a->num_lp_tasks = 1; /* GiGL's default task_path: Retrieval, weight 1 */
    lp_task_defaults(&a->lp_tasks[0], LP_TASK_RETRIEVAL);
    a->lp_tasks[0].temperature = a->softmax_temp;
    a->lp_tasks[0].remove_accidental_hits = a->should_remove_accidental_hits;
    a->seed_assignment = SEED_ASSIGN_AUTO;
    a->seed_partition[0] = '\0';
    a->rpc_timeout_s = 60;
    a->val_num_workers = a->test_num_workers = -1; /* = num_workers */
    a->log_every_n_batch = 0;
    a->num_val = a->num_test = 0.1; /* GiGL's (dataset_factory.py) */
    a->split_fractions_given = 0;
    a->ssl_positive_label_percentage = 0; /* off */
    a->ssl_keep_eval_edges = 0;
    a->prefetch_size = 4;
    a->cache_policy = CACHE_POLICY_NONE;
    a->cache_ratio = 0;
    a->cache_memory_budget = 0;
    a->cache_presample_batches = 20;
    a->lp_anchor_batching = 0; /* pairs: see docs/CONFIG.md, "Link prediction batching" */
    a->lp_batching_given = 0;
    a->max_labels_per_anchor_node = 0;
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
 *   GIGL_KEPT       a GiGL setting cgnn stores in trainer_args (gigl_finish).
 *   GIGL_NO_EFFECT  read by GiGL; its value is checked as GiGL reads it, and a note says why it
 *                   changes nothing in cgnn.
 *   GIGL_UNREAD     read by no GiGL code, but in GiGL's configs: checked, with a note saying so.
 *   GIGL_MISSING    a GiGL capability cgnn lacks yet: an error naming it.
 * Values are GiGL's strings: integers as Python's int() reads them (strictly here: no
 * whitespace, no "1_000"), numbers as float(), booleans as distutils' strtobool. Docs:
 * docs/CONFIG.md, "GiGL's names". */

typedef enum gigl_kind { GIGL_SAME, GIGL_KEPT, GIGL_NO_EFFECT, GIGL_UNREAD, GIGL_MISSING } gigl_kind;
typedef enum gigl_type { GIGL_INT, GIGL_NUM, GIGL_BOOL, GIGL_STR } gigl_type;

typedef struct gigl_arg {
    const char *name;
    gigl_kind kind;
    gigl_type type;
    int target, target2;    /* GIGL_SAME: the cgnn key(s) it sets; else -1 */
    int64_t lo, hi;         /* GIGL_INT (not GIGL_SAME): the accepted range */
    const char *why;        /* GIGL_NO_EFFECT / GIGL_UNREAD: the note; GIGL_MISSING: the error */
} gigl_arg;

#define GIGL_RNEG_WORKERS                                                                                      \
    "cgnn draws a batch's random negatives in the sampler threads of its own loader (train_main_num_workers, " \
    "val_main_num_workers, test_main_num_workers)"
#define GIGL_SAMPLE_WORKERS                                                                                    \
    "no GiGL trainer reads it (GiGL's trainers read {train,val,test}_{main,random_negative}_num_workers)"
#define GIGL_DATASET_BUILD "GiGL's in-memory dataset build; cgnn reads the dataset from disk as it is"

static const gigl_arg GIGL_ARGS[] = {
    /* the example training scripts (link prediction, node classification) */
    {"hid_dim", GIGL_SAME, GIGL_INT, TARG_HIDDEN_DIM, -1, 0, 0, NULL},
    {"out_dim", GIGL_SAME, GIGL_INT, TARG_OUT_CHANNELS, -1, 0, 0, NULL}, /* also the v1 NC spec's classes */
    {"num_classes", GIGL_SAME, GIGL_INT, TARG_OUT_CHANNELS, -1, 0, 0, NULL}, /* NC only (LP: a note) */
    {"main_batch_size", GIGL_SAME, GIGL_INT, TARG_BATCH_SIZE, -1, 0, 0, NULL},
    {"train_batch_size", GIGL_SAME, GIGL_INT, TARG_BATCH_SIZE, -1, 0, 0, NULL},
    /* the KDD 2025 tutorial's training flag (its anchors per batch); also in the v1 NC template */
    {"batch_size", GIGL_SAME, GIGL_INT, TARG_BATCH_SIZE, -1, 0, 0, NULL},
    /* the scripts' random negative loader serves training, validation and test alike */
    {"random_batch_size", GIGL_SAME, GIGL_INT, TARG_RAND_NEG_BATCH, TARG_RAND_NEG_BATCH_EVAL, 0, 0, NULL},
    {"learning_rate", GIGL_SAME, GIGL_NUM, TARG_OPTIM_LR, -1, 0, 0, NULL},
    {"weight_decay", GIGL_SAME, GIGL_NUM, TARG_OPTIM_WEIGHT_DECAY, -1, 0, 0, NULL},
    {"val_every_n_batch", GIGL_SAME, GIGL_INT, TARG_VAL_EVERY_NUM_BATCHES, -1, 0, 0, NULL},
    {"sampling_workers_per_process", GIGL_SAME, GIGL_INT, TARG_NUM_WORKERS, -1, 0, 0, NULL},
    {"log_every_n_batch", GIGL_KEPT, GIGL_INT, -1, -1, 1, INT64_MAX, NULL},
    {"local_world_size", GIGL_NO_EFFECT, GIGL_INT, -1, -1, 1, 1 << 20,
     "cgnn runs one training process per MPI rank (mpirun -np N; resource config for the threads)"},
    {"process_start_gap_seconds", GIGL_NO_EFFECT, GIGL_INT, -1, -1, 0, INT64_MAX,
     "GiGL staggers its processes' loader start-up to bound peak memory; cgnn's loaders allocate once, at start"},
    {"sampling_worker_shared_channel_size", GIGL_NO_EFFECT, GIGL_STR, -1, -1, 0, 0,
     "GraphLearn's shared-memory channel; cgnn's sampler threads hand batches over in memory, through a queue of a "
     "few batches"},
    {"should_enable_find_unused_parameters", GIGL_NO_EFFECT, GIGL_BOOL, -1, -1, 0, 0,
     "a DistributedDataParallel flag; cgnn all-reduces every gradient, zero for a parameter a batch did not use"},
    /* the v1 modeling task specs (names cgnn does not have already) */
    {"factor", GIGL_SAME, GIGL_NUM, TARG_SCHED_FACTOR, -1, 0, 0, NULL},
    {"total_iters", GIGL_SAME, GIGL_INT, TARG_SCHED_TOTAL_ITERS, -1, 0, 0, NULL},
    {"val_main_num_workers", GIGL_KEPT, GIGL_INT, -1, -1, 0, 1024, NULL},
    {"test_main_num_workers", GIGL_KEPT, GIGL_INT, -1, -1, 0, 1024, NULL},
    {"train_random_negative_num_workers", GIGL_NO_EFFECT, GIGL_INT, -1, -1, 0, 1024, GIGL_RNEG_WORKERS},
    {"val_random_negative_num_workers", GIGL_NO_EFFECT, GIGL_INT, -1, -1, 0, 1024, GIGL_RNEG_WORKERS},
    {"test_random_negative_num_workers", GIGL_NO_EFFECT, GIGL_INT, -1, -1, 0, 1024, GIGL_RNEG_WORKERS},
    {"validate_every_n_batches", GIGL_SAME, GIGL_INT, TARG_VAL_EVERY_NUM_BATCHES, -1, 0, 0, NULL},
    {"random_negative_batch_size", GIGL_SAME, GIGL_INT, TARG_RAND_NEG_BATCH, TARG_RAND_NEG_BATCH_EVAL, 0, 0, NULL},
    /* the dataset builder and its splitters */
    {"num_val", GIGL_KEPT, GIGL_NUM, -1, -1, 0, 0, NULL},
    {"num_test", GIGL_KEPT, GIGL_NUM, -1, -1, 0, 0, NULL},
    {"sample_edge_direction", GIGL_KEPT, GIGL_STR, -1, -1, 0, 0, NULL},
    {"should_use_range_partitioning", GIGL_NO_EFFECT, GIGL_BOOL, -1, -1, 0, 0, GIGL_DATASET_BUILD},
    {"should_load_tensors_in_parallel", GIGL_NO_EFFECT, GIGL_BOOL, -1, -1, 0, 0, GIGL_DATASET_BUILD},
    {"ssl_positive_label_percentage", GIGL_KEPT, GIGL_NUM, -1, -1, 0, 0, NULL},
    {"max_labels_per_anchor_node", GIGL_KEPT, GIGL_INT, -1, -1, 1, INT32_MAX, NULL},
    /* in GiGL's configs, read by no GiGL code */
    {"train_main_sample_num_workers", GIGL_UNREAD, GIGL_INT, -1, -1, 0, 1024, GIGL_SAMPLE_WORKERS},
    {"train_random_sample_num_workers", GIGL_UNREAD, GIGL_INT, -1, -1, 0, 1024, GIGL_SAMPLE_WORKERS},
    {"val_main_sample_num_workers", GIGL_UNREAD, GIGL_INT, -1, -1, 0, 1024, GIGL_SAMPLE_WORKERS},
    {"val_random_sample_num_workers", GIGL_UNREAD, GIGL_INT, -1, -1, 0, 1024, GIGL_SAMPLE_WORKERS},
    {"test_main_sample_num_workers", GIGL_UNREAD, GIGL_INT, -1, -1, 0, 1024, GIGL_SAMPLE_WORKERS},
    {"test_random_sample_num_workers", GIGL_UNREAD, GIGL_INT, -1, -1, 0, 1024, GIGL_SAMPLE_WORKERS},
    {"margin", GIGL_UNREAD, GIGL_NUM, -1, -1, 0, 0,
     "no GiGL trainer reads it (GiGL's margin losses take their margin in code)"},
    {"should_l2_normalize_output", GIGL_UNREAD, GIGL_BOOL, -1, -1, 0, 0,
     "no GiGL trainer reads it (GiGL's and cgnn's name is should_l2_normalize_embedding_layer_output)"},
};
#define GIGL_ARG_COUNT ((int)(sizeof GIGL_ARGS / sizeof GIGL_ARGS[0]))

const char *const CONFIG_GIGL_ARG_KEYS[] = {
    "hid_dim", "out_dim", "num_classes", "main_batch_size", "train_batch_size", "batch_size", "random_batch_size",
    "learning_rate", "weight_decay", "val_every_n_batch", "sampling_workers_per_process", "log_every_n_batch",
    "local_world_size", "process_start_gap_seconds", "sampling_worker_shared_channel_size",
    "should_enable_find_unused_parameters", "factor", "total_iters", "val_main_num_workers", "test_main_num_workers",
    "train_random_negative_num_workers", "val_random_negative_num_workers", "test_random_negative_num_workers",
    "validate_every_n_batches", "random_negative_batch_size", "num_val", "num_test", "sample_edge_direction",
    "should_use_range_partitioning", "should_load_tensors_in_parallel", "ssl_positive_label_percentage",
    "max_labels_per_anchor_node", "train_main_sample_num_workers", "train_random_sample_num_workers",
    "val_main_sample_num_workers", "val_random_sample_num_workers", "test_main_sample_num_workers",
    "test_random_sample_num_workers", "margin", "should_l2_normalize_output", NULL,
};
_Static_assert(sizeof CONFIG_GIGL_ARG_KEYS / sizeof CONFIG_GIGL_ARG_KEYS[0] == sizeof GIGL_ARGS / sizeof GIGL_ARGS[0] + 1,
               "one name per GiGL argument");

int config_gigl_bool(const char *s, int *out) {
    static const char *const yes[] = {"y", "yes", "t", "true", "on", "1"}, *const no[] = {"n", "no", "f", "false", "off", "0"};
    for (int i = 0; i < 6; i++) {
        if (!strcasecmp(s, yes[i])) return *out = 1, 0;
        if (!strcasecmp(s, no[i])) return *out = 0, 0;
    }
    return -1;
}

/* The index of GiGL name key in GIGL_ARGS, or -1. */
static int gigl_find(const char *key) {
    for (int i = 0; key && i < GIGL_ARG_COUNT; i++)
        if (!strcmp(GIGL_ARGS[i].name, key)) return i;
    return -1;
}

/* Appends a note (cgnn train logs it). Past CONFIG_MAX_NOTES the last line says notes were left out. */
__attribute__((format(printf, 2, 3))) static void note_add(config_notes *nt, const char *fmt, ...) {
    if (!nt || nt->n >= CONFIG_MAX_NOTES) return;
    if (nt->n == CONFIG_MAX_NOTES - 1) {
        snprintf(nt->line[nt->n++], CONFIG_NOTE_MAX, "(more notes about the config were left out)");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(nt->line[nt->n++], CONFIG_NOTE_MAX, fmt, ap);
    va_end(ap);
}

/* Checks v as GiGL reads an argument of type `type` (ints in [lo, hi]); *num gets the number. */
static int gigl_value(const yamldoc *doc, const yamldoc_node *v, gigl_type type, int64_t lo, int64_t hi, double *num,
                      cgnn_err *err) {
    char buf[80];
    int64_t iv;
    int b;
    switch (type) {
    case GIGL_INT:
        if (arg_int(doc, v, lo, hi, &iv, err) != 0) return -1;
        *num = (double)iv;
        return 0;
    case GIGL_NUM:
        if (yamldoc_parse_double(v->scalar, num) != 0 || !isfinite(*num))
            return node_err(doc, v, err, "expected a finite number, got %s", shown(v, buf, sizeof buf));
        return 0;
    case GIGL_BOOL:
        if (config_gigl_bool(v->scalar, &b) != 0)
            return node_err(doc, v, err, "expected a boolean as GiGL reads it (True / False; strtobool: y, yes, t, "
                            "true, on, 1, n, no, f, false, off, 0), got %s", shown(v, buf, sizeof buf));
        *num = b;
        return 0;
    case GIGL_STR: *num = 0; return 0;
    }
    return 0;
}

/* Puts v (written as `key`) into g[k]. When g[k] was given already, under another name of the
 * same setting, both values must be the same as GiGL's name reads them: else an error naming both. */
static int place_arg(const yamldoc *doc, const yamldoc_node **g, const char **gname, int k, const yamldoc_node *v,
                     const char *key, cgnn_err *err) {
    if (!g[k]) {
        g[k] = v, gname[k] = key;
        return 0;
    }
    const int ga = gigl_find(gigl_find(key) >= 0 ? key : gname[k]);
    const gigl_type type = ga >= 0 ? GIGL_ARGS[ga].type : GIGL_STR;
    double x = 0, y = 0;
    int same;
    if (type == GIGL_INT || type == GIGL_NUM) {
        int64_t i1, i2;
        const int ints = type == GIGL_INT;
        const yamldoc_node *n[2] = {g[k], v};
        for (int j = 0; j < 2; j++) {
            char buf[80];
            double *dst = j ? &y : &x;
            if (ints ? yamldoc_parse_int(n[j]->scalar, j ? &i2 : &i1) != 0
                     : yamldoc_parse_double(n[j]->scalar, dst) != 0 || !isfinite(*dst))
                return node_err(doc, n[j], err, "expected %s, got %s", ints ? "an integer" : "a finite number",
                                shown(n[j], buf, sizeof buf));
        }
        same = ints ? i1 == i2 : x == y;
    } else {
        same = !strcmp(g[k]->scalar, v->scalar);
    }
    if (!same) {
        char b1[80], b2[80];
        return node_err(doc, v, err, "is %s, but %s (line %d) is %s: both set %s; give it once",
                        shown(v, b1, sizeof b1), gname[k], g[k]->line, shown(g[k], b2, sizeof b2),
                        CONFIG_TRAINER_ARG_KEYS[k]);
    }
    return 0;
}

/* 1 if g[k] was given under a GiGL name (not cgnn's own key). */
static int via_gigl(const char *const *gname, int k) {
    return gname[k] && strcmp(gname[k], CONFIG_TRAINER_ARG_KEYS[k]) != 0;
}

/* After the cgnn keys are read: the GiGL names' settings, checks and notes. gx[i]: the value of
 * GIGL_ARGS[i], or NULL. */
static int gigl_finish(const yamldoc *doc, const yamldoc_node *const *gx, const char *const *gname, task_kind task,
                       trainer_args *a, config_notes *notes, cgnn_err *err) {
    char same[CONFIG_NOTE_MAX - 64] = ""; /* the note adds its prefix */
    size_t len = 0;
    for (int i = 0; i < GIGL_ARG_COUNT; i++) {
        const yamldoc_node *v = gx[i];
        if (!v) continue;
        const gigl_arg *e = &GIGL_ARGS[i];
        double num = 0;
        if (e->kind == GIGL_SAME) {
            if (task == TASK_LINK_PREDICTION && e->target == TARG_OUT_CHANNELS && !strcmp(e->name, "num_classes")) {
                if (gigl_value(doc, v, GIGL_INT, 1, 1 << 24, &num, err) != 0) return -1;
                note_add(notes, "trainerArgs.num_classes: accepted, no effect: the number of classes of GiGL's node "
                         "classification example; this task is link prediction");
                continue;
            }
            char one[160];
            snprintf(one, sizeof one, "%s%s = %s%s%s", len ? ", " : "", e->name, CONFIG_TRAINER_ARG_KEYS[e->target],
                     e->target2 >= 0 ? " and " : "", e->target2 >= 0 ? CONFIG_TRAINER_ARG_KEYS[e->target2] : "");
            if (len + strlen(one) + 8 < sizeof same)
                len += (size_t)snprintf(same + len, sizeof same - len, "%s", one);
            else if (!strstr(same, ", ..."))
                len += (size_t)snprintf(same + len, sizeof same - len, ", ...");
            continue;
        }
        if (gigl_value(doc, v, e->type, e->lo, e->hi, &num, err) != 0) return -1;
        if (e->kind == GIGL_NO_EFFECT || e->kind == GIGL_UNREAD) {
            note_add(notes, "trainerArgs.%s: accepted, no effect: %s", e->name, e->why);
            continue;
        }
        /* GIGL_KEPT */
        if (!strcmp(e->name, "log_every_n_batch")) {
            a->log_every_n_batch = (int64_t)num;
        } else if (!strcmp(e->name, "val_main_num_workers")) {
            a->val_num_workers = (int64_t)num;
        } else if (!strcmp(e->name, "test_main_num_workers")) {
            a->test_num_workers = (int64_t)num;
        } else if (!strcmp(e->name, "num_val")) {
            a->num_val = num, a->split_fractions_given = 1;
        } else if (!strcmp(e->name, "num_test")) {
            a->num_test = num, a->split_fractions_given = 1;
        } else if (!strcmp(e->name, "ssl_positive_label_percentage")) {
            if (task != TASK_LINK_PREDICTION) { /* GiGL reads it for link prediction tasks only */
                note_add(notes, "trainerArgs.ssl_positive_label_percentage: accepted, no effect: GiGL selects "
                         "self-supervised labels for link prediction tasks only; this task is %s", TASK_NAMES[task]);
                continue;
            }
            if (!(num > 0 && num <= 1))
                return node_err(doc, v, err, "ssl_positive_label_percentage is %g: the fraction of the supervision "
                                "edges taken as labels must be in (0, 1]", num);
            a->ssl_positive_label_percentage = num;
        } else if (!strcmp(e->name, "max_labels_per_anchor_node")) {
            if (task != TASK_LINK_PREDICTION) {
                note_add(notes, "trainerArgs.max_labels_per_anchor_node: accepted, no effect: GiGL's cap of link "
                         "prediction labels per anchor; this task is %s", TASK_NAMES[task]);
                continue;
            }
            if (a->lp_batching_given && !a->lp_anchor_batching)
                return node_err(doc, v, err, "max_labels_per_anchor_node caps the positives of each anchor of GiGL's "
                                "anchor batches; it contradicts lp_batching: pairs (set lp_batching: anchors or leave "
                                "it out)");
            a->max_labels_per_anchor_node = (int64_t)num;
            if (!a->lp_anchor_batching)
                note_add(notes, "trainerArgs.max_labels_per_anchor_node: GiGL's anchor batching "
                         "(lp_batching: anchors), each anchor with its first %lld positives", (long long)num);
            a->lp_anchor_batching = 1;
        } else if (!strcmp(e->name, "sample_edge_direction")) {
            char buf[80];
            if (!strcmp(v->scalar, "out"))
                return node_err(doc, v, err, "cgnn samples in-neighbours (messages flow src -> dst: GiGL's default, "
                                "'in'); 'out' is not supported");
            if (strcmp(v->scalar, "in") != 0)
                return node_err(doc, v, err, "expected in or out (GiGL's sampling direction), got %s",
                                shown(v, buf, sizeof buf));
        }
    }
    if (a->split_fractions_given) { /* GiGL's _assert_valid_split_ratios (float arguments) */
        const yamldoc_node *vv = gx[gigl_find("num_val")], *vt = gx[gigl_find("num_test")];
        const yamldoc_node *n = vv ? vv : vt;
        if (!(a->num_val > 0 && a->num_val < 1))
            return node_err(doc, n, err, "num_val is %g: GiGL's validation fraction must be in (0, 1)", a->num_val);
        if (!(a->num_test >= 0 && a->num_test < 1))
            return node_err(doc, vt ? vt : n, err, "num_test is %g: GiGL's test fraction must be in [0, 1)", a->num_test);
        if (a->num_val + a->num_test >= 1)
            return node_err(doc, n, err, "num_val + num_test is %g: GiGL's validation and test fractions must leave "
                            "edges or nodes to train on (sum < 1)", a->num_val + a->num_test);
        if (a->ssl_positive_label_percentage > 0)
            note_add(notes, "trainerArgs.num_val / num_test: %g / %g of the anchors of the self-supervised labels go "
                     "to validation / test (GiGL's DistNodeAnchorLinkSplitter, data_splitters.py)", a->num_val,
                     a->num_test);
        else
            note_add(notes, "trainerArgs.num_val / num_test (GiGL's validation / test fractions for its splitter, "
                     "data_splitters.py): kept (%g / %g), no effect: the dataset comes split (its metadata.yaml lists "
                     "train / validation / test sets)", a->num_val, a->num_test);
    }
    if (via_gigl(gname, TARG_OPTIM_WEIGHT_DECAY) && a->optim.kind != OPTIM_ADAMW)
        note_add(notes, "trainerArgs.%s: the weight decay of %s (optim_class_path), an L2 penalty; GiGL's example "
                 "scripts train with AdamW, whose decay is decoupled: set optim_class_path: AdamW for theirs",
                 gname[TARG_OPTIM_WEIGHT_DECAY], optim_kind_name(a->optim.kind));
    if (len) note_add(notes, "trainerArgs: GiGL's names read as cgnn's: %s", same);
    if (a->ssl_keep_eval_edges && a->ssl_positive_label_percentage == 0)
        note_add(notes, "trainerArgs.ssl_keep_eval_edges: no effect without ssl_positive_label_percentage (the dataset's "
                 "own link prediction pairs are not message-passing edges cgnn removes)");
    return 0;
}

/* The closest trainer argument name to key, cgnn's or GiGL's, if plausibly a typo; else NULL. */
static const char *suggest_arg(const char *key) {
    const char *a = suggest(key, CONFIG_TRAINER_ARG_KEYS), *b = suggest(key, CONFIG_GIGL_ARG_KEYS);
    if (!a || !b) return a ? a : b;
    return yamldoc_edit_distance(key, b) < yamldoc_edit_distance(key, a) ? b : a;
}

/* ---- trainerArgs ------------------------------------------------------------------- */

/* A byte count: an integer, optionally followed by K, M, G or T (with or without B / iB;
 * powers of 1024 throughout), as GLT's cache_memory_budget. */
static int arg_bytes(const yamldoc *doc, const yamldoc_node *n, int64_t *out, cgnn_err *err) {
    char buf[80], num[64];
    const char *s = n->scalar;
    size_t k = 0;
    while (s[k] >= '0' && s[k] <= '9' && k < sizeof num - 1) num[k] = s[k], k++;
    num[k] = '\0';
    const char *u = s + k;
    while (*u == ' ') u++;
    int shift = 0;
    if (*u == 'K' || *u == 'k') shift = 10;
    else if (*u == 'M' || *u == 'm') shift = 20;
    else if (*u == 'G' || *u == 'g') shift = 30;
    else if (*u == 'T' || *u == 't') shift = 40;
    if (shift) u++;
    if (shift && *u == 'i') u++;
    if (*u == 'B' || *u == 'b') u++;
    int64_t v;
    if (k == 0 || *u || yamldoc_parse_int(num, &v) != 0 || v < 0 || v > (INT64_MAX >> shift))
        return node_err(doc, n, err, "expected a byte count (an integer, optionally with K, M, G or T: 512MB, 2GiB), "
                        "got %s", shown(n, buf, sizeof buf));
    *out = v << shift;
    return 0;
}

/* prefetch_size and the feature cache's arguments (docs/DISTRIBUTED.md, "Feature cache"). */
static int parse_cache_args(const yamldoc *doc, const yamldoc_node *const *g, trainer_args *a, cgnn_err *err) {
    const yamldoc_node *n;
    char buf[80];
    if ((n = g[TARG_PREFETCH_SIZE]) && arg_int(doc, n, 1, 1024, &a->prefetch_size, err) != 0) return -1;
    if ((n = g[TARG_CACHE_RATIO]) && arg_double(doc, n, 0, 0, 1, 0, &a->cache_ratio, err) != 0) return -1;
    if ((n = g[TARG_CACHE_MEMORY_BUDGET]) && arg_bytes(doc, n, &a->cache_memory_budget, err) != 0) return -1;
    if ((n = g[TARG_CACHE_PRESAMPLE]) && arg_int(doc, n, 1, 1 << 20, &a->cache_presample_batches, err) != 0)
        return -1;
    if ((n = g[TARG_CACHE_POLICY])) {
        if (!strcmp(n->scalar, "none")) a->cache_policy = CACHE_POLICY_NONE;
        else if (!strcmp(n->scalar, "hotness")) a->cache_policy = CACHE_POLICY_HOTNESS;
        else if (!strcmp(n->scalar, "degree")) a->cache_policy = CACHE_POLICY_DEGREE;
        else if (!strcmp(n->scalar, "halo")) a->cache_policy = CACHE_POLICY_HALO;
        else
            return node_err(doc, n, err, "expected none, hotness (pre-sampled access counts), degree (highest "
                            "in-degree) or halo (1-hop halo), got %s", shown(n, buf, sizeof buf));
        if (a->cache_policy != CACHE_POLICY_NONE && a->cache_ratio == 0 && a->cache_memory_budget == 0)
            return node_err(doc, n, err, "a %s cache needs a size: set cache_ratio (a fraction of the nodes) or "
                            "cache_memory_budget (bytes)", n->scalar);
    }
    /* a size without a policy: the hotness cache (GLT's) */
    if (!g[TARG_CACHE_POLICY] && (a->cache_ratio > 0 || a->cache_memory_budget > 0)) a->cache_policy = CACHE_POLICY_HOTNESS;
    return 0;
}

/* The scheduler arguments kind takes, for messages. */
static const char *sched_takes(sched_kind kind) {
    switch (kind) {
    case SCHED_CONSTANT: return "lr_scheduler_factor, lr_scheduler_total_iters";
    case SCHED_STEP: return "lr_scheduler_step_size, lr_scheduler_gamma";
    case SCHED_LINEAR: return "lr_scheduler_start_factor, lr_scheduler_end_factor, lr_scheduler_total_iters";
    case SCHED_COSINE: return "lr_scheduler_t_max, lr_scheduler_eta_min";
    default: return "";
    }
}

/* 1 if scheduler argument key belongs to a scheduler of kind. */
static int sched_arg_applies(targ key, sched_kind kind) {
    switch (key) {
    case TARG_SCHED_STEP_SIZE:
    case TARG_SCHED_GAMMA: return kind == SCHED_STEP;
    case TARG_SCHED_FACTOR: return kind == SCHED_CONSTANT;
    case TARG_SCHED_TOTAL_ITERS: return kind == SCHED_CONSTANT || kind == SCHED_LINEAR;
    case TARG_SCHED_START_FACTOR:
    case TARG_SCHED_END_FACTOR: return kind == SCHED_LINEAR;
    case TARG_SCHED_T_MAX:
    case TARG_SCHED_ETA_MIN: return kind == SCHED_COSINE;
    default: return 0;
    }
}

/* "recall_at_K" / "ndcg_at_K" (any case; K a decimal integer 1 .. 1 << 20): the full-ranking
 * early-stopping criteria. Writes the normalised name ("recall_at_20") into out, K and whether it
 * is NDCG. Returns 0, or -1 when s is not one of them. */
static int full_ranking_criterion(const char *s, char *out, size_t cap, int64_t *k, int *ndcg) {
    int is_ndcg;
    const char *p;
    if (!strncasecmp(s, "recall_at_", 10))
        is_ndcg = 0, p = s + 10;
    else if (!strncasecmp(s, "ndcg_at_", 8))
        is_ndcg = 1, p = s + 8;
    else
        return -1;
    int64_t v = 0;
    int digits = 0;
    for (; *p; p++, digits++) {
        if (*p < '0' || *p > '9' || digits >= 8) return -1;
        v = v * 10 + (*p - '0');
    }
    if (digits == 0 || v < 1 || v > (1 << 20)) return -1;
    snprintf(out, cap, "%s_at_%lld", is_ndcg ? "ndcg" : "recall", (long long)v);
    *k = v, *ndcg = is_ndcg;
    return 0;
}

/* Arguments that only a link-prediction task reads. */
static int targ_lp_only(targ k) {
    return k == TARG_RAND_NEG_BATCH || k == TARG_RAND_NEG_BATCH_EVAL || k == TARG_SOFTMAX_TEMP ||
           k == TARG_REMOVE_ACCIDENTAL_HITS || k == TARG_TASK_PATH || k == TARG_EXCLUDE_SEED_EDGES ||
           k == TARG_EMB_REG || k == TARG_LP_CANDIDATE_RANGE ||
           k == TARG_SSL_KEEP_EVAL_EDGES || k == TARG_LP_BATCHING;
}

/* ---- task_path ------------------------------------------------------------------ */

/* Each task's constructor arguments (GiGL's names) besides weight. */
static const char *const TASK_ARG_KEYS[LP_TASK_COUNT][5] = {
    [LP_TASK_RETRIEVAL] = {"weight", "temperature", "remove_accidental_hits", NULL},
    [LP_TASK_SOFTMAX] = {"weight", "softmax_temperature", NULL},
    [LP_TASK_MARGIN] = {"weight", "margin", NULL},
    [LP_TASK_DIRECTAU] = {"weight", "gamma", "alpha", "temperature", NULL},
    [LP_TASK_BPR] = {"weight", "num_negatives", NULL},
};

/* The tasks of a task_path mapping (doc's node map): key = a task name or GiGL class path,
 * value = its weight, null (weight 1) or a mapping of weight and the task's arguments. */
static int task_map(const yamldoc *doc, const yamldoc_node *map, trainer_args *a, int temp_given, int rah_given,
                    cgnn_err *err) {
    char buf[80];
    if (map->len == 0) return node_err(doc, map, err, "no task: name one (Retrieval, Softmax, Margin, DirectAU, BPR)");
    if (map->len > LP_TASK_COUNT)
        return node_err(doc, map, err, "%d tasks; there are %d kinds, each at most once", map->len, LP_TASK_COUNT);
    a->num_lp_tasks = 0;
    for (int i = 0; i < map->len; i++) {
        const yamldoc_node *v = map->items[i];
        lp_task_kind kind;
        if (lp_task_parse(map->keys[i], &kind) != 0)
            return node_err(doc, v, err, "unsupported task '%.60s' (Retrieval, Softmax, Margin, DirectAU or BPR; "
                            "GiGL's gigl.src.common.models.layers.task.<name> also works)", map->keys[i]);
        for (int t = 0; t < a->num_lp_tasks; t++)
            if (a->lp_tasks[t].kind == kind)
                return node_err(doc, v, err, "task %s is listed twice", lp_task_name(kind));
        lp_task *t = &a->lp_tasks[a->num_lp_tasks++];
        lp_task_defaults(t, kind);
        if (kind == LP_TASK_RETRIEVAL) {
            t->temperature = a->softmax_temp;
            t->remove_accidental_hits = a->should_remove_accidental_hits;
        }
        if (is_null(v)) continue; /* weight 1 */
        if (v->kind == YAMLDOC_SCALAR) {
            if (arg_double(doc, v, 0, 1, INFINITY, 0, &t->weight, err) != 0) return -1;
            continue;
        }
        if (v->kind != YAMLDOC_MAPPING)
            return node_err(doc, v, err, "expected the task's weight or a mapping of its arguments, got %s",
                            shown(v, buf, sizeof buf));
        if (yamldoc_check_keys(doc, v, TASK_ARG_KEYS[kind], err) != 0) return -1;
        for (int k = 0; k < v->len; k++) {
            const char *key = v->keys[k];
            const yamldoc_node *x = v->items[k];
            if (x->kind != YAMLDOC_SCALAR || is_null(x)) return node_err(doc, x, err, "expected a value");
            int64_t iv;
            int rc = 0;
            if (!strcmp(key, "weight")) rc = arg_double(doc, x, 0, 1, INFINITY, 0, &t->weight, err);
            else if (!strcmp(key, "temperature") && kind == LP_TASK_RETRIEVAL) {
                if (temp_given)
                    return node_err(doc, x, err, "Retrieval's temperature is also given as softmax_temp; give one");
                rc = arg_double(doc, x, 0, 1, INFINITY, 0, &t->temperature, err);
            } else if (!strcmp(key, "remove_accidental_hits")) {
                if (rah_given)
                    return node_err(doc, x, err, "also given as should_remove_accidental_hits; give one");
                rc = arg_bool(doc, x, &t->remove_accidental_hits, err);
            } else if (!strcmp(key, "softmax_temperature"))
                rc = arg_double(doc, x, 0, 1, INFINITY, 0, &t->softmax_temperature, err);
            else if (!strcmp(key, "margin"))
                rc = arg_double(doc, x, -INFINITY, 0, INFINITY, 0, &t->margin, err);
            else if (!strcmp(key, "gamma"))
                rc = arg_double(doc, x, 0, 0, INFINITY, 0, &t->gamma, err);
            else if (!strcmp(key, "alpha"))
                rc = arg_double(doc, x, 0, 1, INFINITY, 0, &t->alpha, err);
            else if (!strcmp(key, "temperature"))
                rc = arg_double(doc, x, 0, 1, INFINITY, 0, &t->temperature, err);
            else if (!strcmp(key, "num_negatives")) {
                rc = arg_int(doc, x, 1, INT32_MAX, &iv, err);
                t->num_negatives = iv;
            }
            if (rc != 0) return -1;
        }
    }
    return 0;
}

/* task_path (docs/CONFIG.md, "Link prediction"): one task name (weight 1, as GiGL), or several
 * tasks with weights and arguments as a YAML mapping, or the same mapping written as a string
 * in YAML flow form ("{Retrieval: 1.0, BPR: {weight: 0.5, num_negatives: 4}}"). The Retrieval
 * task takes softmax_temp and should_remove_accidental_hits (given: *_given). */
static int arg_task_path(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int temp_given, int rah_given,
                         cgnn_err *err) {
    if (n->kind == YAMLDOC_MAPPING) return task_map(doc, n, a, temp_given, rah_given, err);
    const char *s = n->scalar;
    while (isspace((unsigned char)*s)) s++;
    if (*s != '{') { /* one task */
        char buf[80];
        lp_task_kind kind;
        if (lp_task_parse(s, &kind) != 0)
            return node_err(doc, n, err, "unsupported task %s (Retrieval, Softmax, Margin, DirectAU or BPR; GiGL's "
                            "gigl.src.common.models.layers.task.<name> also works; several tasks: a mapping of task "
                            "to weight)", shown(n, buf, sizeof buf));
        a->num_lp_tasks = 1;
        lp_task_defaults(&a->lp_tasks[0], kind);
        a->lp_tasks[0].temperature = kind == LP_TASK_RETRIEVAL ? a->softmax_temp : a->lp_tasks[0].temperature;
        a->lp_tasks[0].remove_accidental_hits = a->should_remove_accidental_hits;
        return 0;
    }
    /* the string form: parsed as YAML; its messages name the trainer argument, then the entry */
    yamldoc sub;
    char where[CONFIG_PATH_MAX + 1024]; /* yamldoc keeps what fits of it */
    snprintf(where, sizeof where, "%s: %s (line %d)", doc->file, n->path, n->line);
    if (yamldoc_parse(&sub, s, strlen(s), where, err) != 0) return -1;
    int rc = 0;
    if (!sub.root || sub.root->kind != YAMLDOC_MAPPING)
        rc = node_err(doc, n, err, "expected a task name or a mapping of tasks to weights");
    else
        rc = task_map(&sub, sub.root, a, temp_given, rah_given, err);
    yamldoc_free(&sub);
    return rc;
}

/* Parses trainerArgs (map may be NULL: all defaults) into *a for a task of kind task; GiGL's
 * names (above) too, with notes for cgnn train to log. */
static int parse_trainer_args(const yamldoc *doc, const yamldoc_node *map, task_kind task,
                              trainer_args *a, config_notes *notes, cgnn_err *err) {
    config_default_trainer_args(a, task);
    const yamldoc_node *g[TARG_COUNT] = {0}; /* the value given for each key, or NULL */
    const char *gname[TARG_COUNT] = {0};     /* the name it was given under (cgnn's or GiGL's) */
    const yamldoc_node *gx[GIGL_ARG_COUNT] = {0}; /* the value given for each GiGL name */
    char buf[80];

    /* Pass 1: every key must be known; every value a non-empty scalar (num_neighbors: or a list or
     * a mapping). */
    for (int i = 0; map && i < map->len; i++) {
        const char *key = map->keys[i];
        const yamldoc_node *v = map->items[i];
        int k = 0;
        while (k < TARG_COUNT && strcmp(CONFIG_TRAINER_ARG_KEYS[k], key) != 0) k++;
        const int ga = k == TARG_COUNT ? gigl_find(key) : -1;
        if (ga >= 0) { /* one of GiGL's names */
            const gigl_arg *e = &GIGL_ARGS[ga];
            if (v->kind != YAMLDOC_SCALAR)
                return node_err(doc, v, err, "expected a string value, got %s", shown(v, buf, sizeof buf));
            if (!v->scalar[0] || is_null(v)) return node_err(doc, v, err, "empty value");
            if (e->kind == GIGL_MISSING) return node_err(doc, v, err, "%s", e->why);
            gx[ga] = v;
            if (e->kind != GIGL_SAME || (task == TASK_LINK_PREDICTION && e->target == TARG_OUT_CHANNELS &&
                                         !strcmp(e->name, "num_classes")))
                continue;
            for (int t = 0; t < 2; t++) {
                const int tk = t ? e->target2 : e->target;
                if (tk < 0) continue;
                if (task != TASK_LINK_PREDICTION && targ_lp_only((targ)tk))
                    return node_err(doc, v, err,
                                    "sets %s, which applies to link prediction "
                                    "(nodeAnchorBasedLinkPredictionTaskMetadata) only; this task is %s",
                                    CONFIG_TRAINER_ARG_KEYS[tk], TASK_NAMES[task]);
                if (place_arg(doc, g, gname, tk, v, key, err) != 0) return -1;
            }
            continue;
        }
        if (k == TARG_COUNT) {
            /* the key's own line (a block value may start below it) */
            const char *best = suggest_arg(key);
            if (best)
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: %s (line %d): unknown trainer argument; did you mean '%s'?",
                               doc->file, v->path, map->key_lines[i], best);
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): unknown trainer argument (docs/CONFIG.md lists the "
                           "ones cgnn reads)",
                           doc->file, v->path, map->key_lines[i]);
        }
        if ((v->kind == YAMLDOC_SEQUENCE && k == TARG_LIGHTGCN_ALPHA) ||
            ((v->kind == YAMLDOC_SEQUENCE || v->kind == YAMLDOC_MAPPING) && k == TARG_NUM_NEIGHBORS)) {
            g[k] = v;
            continue;
        }
        if (v->kind == YAMLDOC_MAPPING && k == TARG_TASK_PATH && task == TASK_LINK_PREDICTION) {
            g[k] = v; /* tasks with weights and arguments */
            continue;
        }
        if (v->kind != YAMLDOC_SCALAR)
            return node_err(doc, v, err, "expected a string value, got %s", shown(v, buf, sizeof buf));
        if (!v->scalar[0] || is_null(v)) return node_err(doc, v, err, "empty value");
        if (task != TASK_LINK_PREDICTION && targ_lp_only((targ)k))
            return node_err(doc, v, err,
                            "applies to link prediction (nodeAnchorBasedLinkPredictionTaskMetadata) "
                            "only; this task is %s",
                            TASK_NAMES[task]);
        if (place_arg(doc, g, gname, k, v, key, err) != 0) return -1;
    }

    /* Pass 2: values. */
    const yamldoc_node *n;
    int64_t iv;
    if ((n = g[TARG_GNN_MODEL_CLASS_PATH])) {
        a->model_given = 1;
        /* model_kind_parse takes dotted paths too (GiGL's gigl.src.common.models.pyg.homogeneous.GraphSAGE). */
        if (model_kind_parse(n->scalar, &a->model) != 0) {
            char list[128];
            size_t len = 0;
            list[0] = '\0';
            for (int m = 0; m < MODEL_KIND_COUNT; m++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", m ? ", " : "",
                                        model_kind_name((model_kind)m));
            return node_err(doc, n, err, "unknown model %s (%s)", shown(n, buf, sizeof buf), list);
        }
    }
    if ((n = g[TARG_NUM_LAYERS])) {
        if (arg_int(doc, n, 0, CONFIG_MAX_LAYERS, &iv, err) != 0) return -1;
        a->num_layers = (int)iv;
    }
    if ((n = g[TARG_HIDDEN_DIM]) && arg_int(doc, n, 1, 1 << 20, &a->hidden_dim, err) != 0) return -1;
    if ((n = g[TARG_OUT_CHANNELS]) && arg_int(doc, n, 0, 1 << 20, &a->out_channels, err) != 0) return -1;
    if ((n = g[TARG_DROPOUT]) && arg_double(doc, n, 0, 0, 1, 1, &a->dropout, err) != 0) return -1;
    if ((n = g[TARG_NUM_HEADS])) {
        if (arg_int(doc, n, 1, 1024, &iv, err) != 0) return -1;
        a->num_heads = (int)iv;
    }
    if ((n = g[TARG_NUM_BASES])) {
        if (arg_int(doc, n, 0, 4096, &iv, err) != 0) return -1;
        a->num_bases = (int)iv;
    }
    if ((n = g[TARG_L2_NORMALIZE])) {
        if (arg_bool(doc, n, &a->l2_normalize_output, err) != 0) return -1;
        a->l2_normalize_set = 1;
    }
    if ((n = g[TARG_FEATURE_NORMALIZATION])) {
        if (!strcasecmp(n->scalar, "none") || !strcasecmp(n->scalar, "row")) {
            snprintf(a->feature_normalization, sizeof a->feature_normalization, "%s",
                     tolower((unsigned char)n->scalar[0]) == 'n' ? "none" : "row");
        } else {
            return node_err(doc, n, err, "expected none or row, got %s", shown(n, buf, sizeof buf));
        }
    }
    /* num_neighbors after num_layers: their lengths must agree. */
    if ((n = g[TARG_NUM_NEIGHBORS]) && a->num_layers == 0)
        return node_err(doc, n, err, "num_layers is 0 (the learnable embeddings alone): there is no hop to sample; "
                        "remove num_neighbors");
    if ((n = g[TARG_NUM_NEIGHBORS])) {
        if (arg_num_neighbors(doc, n, a, g[TARG_NUM_LAYERS] != NULL, err) != 0) return -1;
    } else {
        for (int i = 0; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = i < a->num_layers ? 10 : 0;
        a->num_fanouts = a->num_layers;
    }
    if ((a->model == MODEL_GAT || a->model == MODEL_HGT) && a->hidden_dim % a->num_heads != 0) {
        n = g[TARG_NUM_HEADS] ? g[TARG_NUM_HEADS] : g[TARG_HIDDEN_DIM] ? g[TARG_HIDDEN_DIM]
                                                                       : g[TARG_GNN_MODEL_CLASS_PATH];
        return node_err(doc, n, err, "%s needs hidden_dim (%lld) divisible by num_heads (%d)",
                        model_kind_name(a->model), (long long)a->hidden_dim, a->num_heads);
    }

    /* Loop. */
    if ((n = g[TARG_BATCH_SIZE]) && arg_int(doc, n, 1, INT32_MAX, &a->batch_size, err) != 0) return -1;
    if ((n = g[TARG_NUM_EPOCHS]) && arg_int(doc, n, 1, CONFIG_UNLIMITED_EPOCHS, &a->num_epochs, err) != 0)
        return -1;
    if ((n = g[TARG_NUM_MAX_TRAIN_BATCHES]) &&
        arg_int(doc, n, 0, INT64_MAX, &a->num_max_train_batches, err) != 0)
        return -1;
    /* Only num_max_train_batches (> 0): it alone bounds the run. */
    if (!g[TARG_NUM_EPOCHS] && a->num_max_train_batches > 0) a->num_epochs = CONFIG_UNLIMITED_EPOCHS;
    if ((n = g[TARG_VAL_EVERY_NUM_BATCHES]) &&
        arg_int(doc, n, 0, INT64_MAX, &a->val_every_num_batches, err) != 0)
        return -1;
    if ((n = g[TARG_NUM_VAL_BATCHES]) && arg_int(doc, n, 0, INT64_MAX, &a->num_val_batches, err) != 0)
        return -1;
    if ((n = g[TARG_NUM_TEST_BATCHES]) && arg_int(doc, n, 0, INT64_MAX, &a->num_test_batches, err) != 0)
        return -1;
    if ((n = g[TARG_EARLY_STOP_CRITERION])) {
        const char *s = n->scalar, *norm = NULL;
        char rank_norm[32];
        if (!strcasecmp(s, "loss"))
            norm = "loss";
        else if (task == TASK_NODE_CLASSIFICATION && (!strcasecmp(s, "acc") || !strcasecmp(s, "accuracy")))
            norm = "acc";
        else if (task == TASK_NODE_CLASSIFICATION && !strcasecmp(s, "micro_f1"))
            norm = "micro_f1";
        else if (task == TASK_NODE_CLASSIFICATION && !strcasecmp(s, "macro_f1"))
            norm = "macro_f1";
        else if (task == TASK_LINK_PREDICTION && !strcasecmp(s, "mrr"))
            norm = "mrr";
        else if (task == TASK_LINK_PREDICTION && !strcasecmp(s, "auc"))
            norm = "auc";
        else if (task == TASK_LINK_PREDICTION && !strcasecmp(s, "ap"))
            norm = "ap";
        else if (task == TASK_LINK_PREDICTION && full_ranking_criterion(s, rank_norm, sizeof rank_norm, &a->val_rank_k,
                                                                          &a->val_rank_ndcg) == 0)
            norm = rank_norm;
        if (!norm)
            return node_err(doc, n, err, "unknown early-stopping criterion %s for %s (%s)",
                            shown(n, buf, sizeof buf), TASK_NAMES[task],
                            task == TASK_NODE_CLASSIFICATION ? "loss, acc, accuracy, micro_f1 or macro_f1"
                                                              : "loss, mrr, auc, ap, recall_at_K or ndcg_at_K (K >= 1)");
        snprintf(a->early_stop_criterion, sizeof a->early_stop_criterion, "%s", norm);
    }
    if ((n = g[TARG_EARLY_STOP_PATIENCE]) &&
        arg_int(doc, n, 0, INT64_MAX, &a->early_stop_patience, err) != 0)
        return -1;
    if ((n = g[TARG_CHECKPOINT_EVERY]) &&
        arg_int(doc, n, 0, INT64_MAX, &a->checkpoint_every_n_batches, err) != 0)
        return -1;
    if ((n = g[TARG_NUM_WORKERS]) && arg_int(doc, n, 0, 1024, &a->num_workers, err) != 0) return -1;
    if ((n = g[TARG_SEED])) {
        if (arg_int(doc, n, 0, INT64_MAX, &iv, err) != 0) return -1;
        a->seed = (uint64_t)iv;
    }
    if ((n = g[TARG_REPLACE]) && arg_bool(doc, n, &a->replace, err) != 0) return -1;
    if ((n = g[TARG_DROP_UNEVEN]) && arg_bool(doc, n, &a->drop_uneven_inputs, err) != 0) return -1;
    if ((n = g[TARG_VAL_AT_END]) && arg_bool(doc, n, &a->val_at_end, err) != 0) return -1;

    /* Optimiser: kind and lr first, then torch's defaults for that kind, then overrides. */
    optim_kind okind = OPTIM_ADAM;
    double lr = 0.01;
    if ((n = g[TARG_OPTIM_CLASS_PATH])) {
        if (optim_kind_parse(n->scalar, &okind) != 0)
            return node_err(doc, n, err,
                            "unknown optimiser %s (Adam, AdamW or SGD; the torch.optim. prefix is optional)",
                            shown(n, buf, sizeof buf));
    }
    if ((n = g[TARG_OPTIM_LR]) && arg_double(doc, n, 0, 1, INFINITY, 0, &lr, err) != 0) return -1;
    optim_default_config(&a->optim, okind, lr);
    if ((n = g[TARG_OPTIM_WEIGHT_DECAY]) &&
        arg_double(doc, n, 0, 0, INFINITY, 0, &a->optim.weight_decay, err) != 0)
        return -1;
    if ((n = g[TARG_OPTIM_MOMENTUM])) {
        if (okind != OPTIM_SGD)
            return node_err(doc, n, err, "applies to SGD only (optim_class_path is %s)",
                            optim_kind_name(okind));
        if (arg_double(doc, n, 0, 0, INFINITY, 0, &a->optim.momentum, err) != 0) return -1;
    }
    if ((n = g[TARG_CLIP_GRAD_NORM]) && arg_double(doc, n, 0, 0, INFINITY, 0, &a->clip_grad_norm, err) != 0)
        return -1;

    /* Scheduler: no name -> constant lr (defaults above) and no scheduler arguments;
     * a name -> torch's defaults for it, then the arguments it takes. */
    if ((n = g[TARG_SCHED_NAME])) {
        sched_kind skind;
        if (sched_kind_parse(n->scalar, &skind) != 0)
            return node_err(doc, n, err,
                            "unknown learning-rate scheduler %s (ConstantLR, StepLR, LinearLR or "
                            "CosineAnnealingLR; the torch.optim.lr_scheduler. prefix is optional)",
                            shown(n, buf, sizeof buf));
        sched_default_config(&a->sched, skind);
        /* GiGL's v1 trainers pass factor and total_iters (defaults 1.0 and 10) to ConstantLR */
        if (skind == SCHED_CONSTANT && (via_gigl(gname, TARG_SCHED_FACTOR) || via_gigl(gname, TARG_SCHED_TOTAL_ITERS)))
            a->sched.factor = 1.0, a->sched.total_iters = 10;
        for (int k = TARG_SCHED_STEP_SIZE; k <= TARG_SCHED_ETA_MIN; k++)
            if (g[k] && !sched_arg_applies((targ)k, skind))
                return node_err(doc, g[k], err, "does not apply to %s (it takes %s)",
                                sched_kind_name(skind), sched_takes(skind));
        if (skind == SCHED_STEP && !g[TARG_SCHED_STEP_SIZE])
            return node_err(doc, n, err, "StepLR needs lr_scheduler_step_size");
        if (skind == SCHED_COSINE && !g[TARG_SCHED_T_MAX])
            return node_err(doc, n, err, "CosineAnnealingLR needs lr_scheduler_t_max");
        sched_config *s = &a->sched;
        if ((n = g[TARG_SCHED_STEP_SIZE]) && arg_int(doc, n, 1, INT64_MAX, &s->step_size, err) != 0) return -1;
        if ((n = g[TARG_SCHED_GAMMA]) && arg_double(doc, n, 0, 1, INFINITY, 0, &s->gamma, err) != 0) return -1;
        if ((n = g[TARG_SCHED_FACTOR]) && arg_double(doc, n, 0, 0, 1, 0, &s->factor, err) != 0) return -1;
        if ((n = g[TARG_SCHED_TOTAL_ITERS]) && arg_int(doc, n, 0, INT64_MAX, &s->total_iters, err) != 0)
            return -1;
        if ((n = g[TARG_SCHED_START_FACTOR]) && arg_double(doc, n, 0, 1, 1, 0, &s->start_factor, err) != 0)
            return -1;
        if ((n = g[TARG_SCHED_END_FACTOR]) && arg_double(doc, n, 0, 0, 1, 0, &s->end_factor, err) != 0)
            return -1;
        if ((n = g[TARG_SCHED_T_MAX]) && arg_int(doc, n, 1, INT64_MAX, &s->t_max, err) != 0) return -1;
        if ((n = g[TARG_SCHED_ETA_MIN]) && arg_double(doc, n, 0, 0, INFINITY, 0, &s->eta_min, err) != 0)
            return -1;
    } else {
        /* GiGL's factor / total_iters alone: its v1 trainers' default scheduler, ConstantLR, with
         * GiGL's defaults (factor 1.0, total_iters 10) */
        const int gigl_const = via_gigl(gname, TARG_SCHED_FACTOR) || via_gigl(gname, TARG_SCHED_TOTAL_ITERS);
        for (int k = TARG_SCHED_STEP_SIZE; k <= TARG_SCHED_ETA_MIN; k++)
            if (g[k] && !(gigl_const && (k == TARG_SCHED_FACTOR || k == TARG_SCHED_TOTAL_ITERS)))
                return node_err(doc, g[k], err,
                                "lr_scheduler_name is not set (the default is a constant learning "
                                "rate); name the scheduler this argument is for");
        if (gigl_const) {
            sched_default_config(&a->sched, SCHED_CONSTANT);
            a->sched.factor = 1.0, a->sched.total_iters = 10;
            if ((n = g[TARG_SCHED_FACTOR]) && arg_double(doc, n, 0, 0, 1, 0, &a->sched.factor, err) != 0) return -1;
            if ((n = g[TARG_SCHED_TOTAL_ITERS]) && arg_int(doc, n, 0, INT64_MAX, &a->sched.total_iters, err) != 0)
                return -1;
        }
    }

    /* Link prediction (pass 1 rejected these for other tasks). */
    if ((n = g[TARG_RAND_NEG_BATCH]) &&
        arg_int(doc, n, 1, INT32_MAX, &a->random_negative_sample_batch_size, err) != 0)
        return -1;
    if ((n = g[TARG_RAND_NEG_BATCH_EVAL]) &&
        arg_int(doc, n, 1, INT32_MAX, &a->random_negative_sample_batch_size_for_evaluation, err) != 0)
        return -1;
    if ((n = g[TARG_SOFTMAX_TEMP]) && arg_double(doc, n, 0, 1, INFINITY, 0, &a->softmax_temp, err) != 0)
        return -1;
    if ((n = g[TARG_REMOVE_ACCIDENTAL_HITS]) && arg_bool(doc, n, &a->should_remove_accidental_hits, err) != 0)
        return -1;
    if ((n = g[TARG_EXCLUDE_SEED_EDGES]) && arg_bool(doc, n, &a->exclude_seed_edges, err) != 0) return -1;
    if ((n = g[TARG_LP_CANDIDATE_RANGE])) {
        if (n->kind != YAMLDOC_SCALAR ||
            lp_candidate_range_parse(n->scalar, &a->lp_candidate_lo, &a->lp_candidate_hi) != 0)
            return node_err(doc, n, err, "expected \"LO:HI\", a node id range with 0 <= LO < HI (e.g. \"31668:69716\"), "
                            "got %s", shown(n, buf, sizeof buf));
    }
    if ((n = g[TARG_SSL_KEEP_EVAL_EDGES]) && arg_bool(doc, n, &a->ssl_keep_eval_edges, err) != 0) return -1;
    if ((n = g[TARG_LP_BATCHING])) {
        if (strcmp(n->scalar, "pairs") == 0) a->lp_anchor_batching = 0;
        else if (strcmp(n->scalar, "anchors") == 0) a->lp_anchor_batching = 1;
        else
            return node_err(doc, n, err, "expected pairs (batch_size (anchor, positive) pairs) or anchors (batch_size "
                            "anchors, each with all its positives: GiGL's DistABLPLoader), got %s",
                            shown(n, buf, sizeof buf));
        a->lp_batching_given = 1;
    }
    /* learnable node embeddings (either task) */
    if ((n = g[TARG_NODE_EMB_DIM]) && arg_int(doc, n, 0, 1 << 20, &a->node_embedding_dim, err) != 0) return -1;
    if ((n = g[TARG_EMB_LR]) && arg_double(doc, n, 0, 1, INFINITY, 0, &a->embedding_lr, err) != 0) return -1;
    if ((n = g[TARG_EMB_INIT_STD]) && arg_double(doc, n, 0, 1, INFINITY, 0, &a->node_embedding_init_std, err) != 0)
        return -1;
    if ((n = g[TARG_EMB_REG]) && arg_double(doc, n, 0, 0, INFINITY, 0, &a->node_embedding_reg, err) != 0) return -1;
    if ((n = g[TARG_EMB_WEIGHT_DECAY]) &&
        arg_double(doc, n, 0, 0, INFINITY, 0, &a->embedding_weight_decay, err) != 0)
        return -1;
    for (int k = TARG_EMB_INIT_STD; k <= TARG_EMB_WEIGHT_DECAY; k++)
        if (g[k] && a->node_embedding_dim == 0)
            return node_err(doc, g[k], err, "applies to the learnable node embeddings; set node_embedding_dim");
    if ((n = g[TARG_EMB_OPTIM])) {
        const char *v = n->scalar, *dot = strrchr(v, '.');
        const char *base = dot ? dot + 1 : v;
        if (strcmp(base, "SparseAdam") != 0 && strcmp(base, "Adagrad") != 0 && strcmp(base, "SGD") != 0)
            return node_err(doc, n, err, "unsupported embedding optimiser %s (SparseAdam, Adagrad or SGD: the "
                            "sparse-update optimisers)", shown(n, buf, sizeof buf));
        snprintf(a->embedding_optim, sizeof a->embedding_optim, "%s", base);
    }
    /* data parallel seed assignment and partitioned graphs (docs/DISTRIBUTED.md, "Training on parts") */
    if ((n = g[TARG_SEED_ASSIGNMENT])) {
        if (strcmp(n->scalar, "local") == 0) a->seed_assignment = SEED_ASSIGN_LOCAL;
        else if (strcmp(n->scalar, "global") == 0) a->seed_assignment = SEED_ASSIGN_GLOBAL;
        else
            return node_err(doc, n, err, "expected local (each rank trains on the seeds its part owns) or global "
                            "(every rank slices the whole split), got %s", shown(n, buf, sizeof buf));
    }
    if ((n = g[TARG_SEED_PARTITION])) {
        if (config_resolve_uri(a->seed_partition, sizeof a->seed_partition, n->scalar, "seed_partition_uri", err) != 0)
            return node_err(doc, n, err, "%s", err->msg);
        if (a->seed_assignment == SEED_ASSIGN_GLOBAL)
            return node_err(doc, n, err, "seed_partition_uri gives the local seed assignment of a partition; it "
                            "contradicts seed_assignment: global");
        a->seed_assignment = SEED_ASSIGN_LOCAL;
    }
    if ((n = g[TARG_RPC_TIMEOUT]) && arg_double(doc, n, 0, 1, 86400, 0, &a->rpc_timeout_s, err) != 0) return -1;
    if (parse_cache_args(doc, g, a, err) != 0) return -1;
    /* the Retrieval task's arguments are these trainer arguments (GiGL passes them to it) */
    a->lp_tasks[0].temperature = a->softmax_temp;
    a->lp_tasks[0].remove_accidental_hits = a->should_remove_accidental_hits;
    if ((n = g[TARG_TASK_PATH]) &&
        arg_task_path(doc, n, a, g[TARG_SOFTMAX_TEMP] != NULL, g[TARG_REMOVE_ACCIDENTAL_HITS] != NULL, err) != 0)
        return -1;
    for (int t = 0; t < a->num_lp_tasks; t++)
        if (a->lp_tasks[t].kind == LP_TASK_BPR && a->lp_tasks[t].num_negatives > a->random_negative_sample_batch_size)
            return node_err(doc, g[TARG_TASK_PATH], err,
                            "BPR num_negatives %lld is more than the %lld random negatives of a batch "
                            "(random_negative_sample_batch_size)",
                            (long long)a->lp_tasks[t].num_negatives, (long long)a->random_negative_sample_batch_size);
    /* LightGCN: the model is the learnable embedding table, propagated over the whole graph */
    if ((n = g[TARG_LIGHTGCN_ALPHA]) && a->model != MODEL_LIGHTGCN)
        return node_err(doc, n, err, "applies to gnn_model_class_path LightGCN only");
    if (a->model == MODEL_LIGHTGCN) {
        if (task != TASK_LINK_PREDICTION)
            return node_err(doc, g[TARG_GNN_MODEL_CLASS_PATH], err,
                            "LightGCN scores node pairs by the dot product of their embeddings: it is for link "
                            "prediction (nodeAnchorBasedLinkPredictionTaskMetadata)");
        if (a->node_embedding_dim == 0)
            return node_err(doc, g[TARG_GNN_MODEL_CLASS_PATH], err,
                            "LightGCN's only parameters are the learnable node embeddings: set node_embedding_dim");
        if (a->out_channels > 0 && a->out_channels != a->node_embedding_dim)
            return node_err(doc, g[TARG_OUT_CHANNELS], err, "LightGCN's output is node_embedding_dim (%lld) wide: "
                            "leave out_channels out", (long long)a->node_embedding_dim);
        if ((n = g[TARG_LIGHTGCN_ALPHA])) {
            int cnt = 0;
            if (n->kind == YAMLDOC_SEQUENCE) {
                for (int i = 0; i < n->len; i++) {
                    const yamldoc_node *it = n->items[i];
                    if (it->kind != YAMLDOC_SCALAR) return node_err(doc, it, err, "expected a number");
                    if (cnt > CONFIG_MAX_LAYERS)
                        return node_err(doc, n, err, "more than num_layers + 1 values");
                    if (arg_double(doc, it, -FLT_MAX, 0, FLT_MAX, 0, &a->lightgcn_alpha[cnt++], err) != 0) return -1;
                }
            } else { /* "a" or "a0, a1, ..." */
                const char *p = n->scalar;
                while (*p) {
                    char *end = NULL;
                    errno = 0;
                    const double x = strtod(p, &end);
                    if (end == p || errno || !isfinite(x) || fabs(x) > FLT_MAX)
                        return node_err(doc, n, err, "expected a number or a comma-separated list of numbers, got %s",
                                        shown(n, buf, sizeof buf));
                    if (cnt > CONFIG_MAX_LAYERS) return node_err(doc, n, err, "more than num_layers + 1 values");
                    a->lightgcn_alpha[cnt++] = x;
                    p = end;
                    while (isspace((unsigned char)*p)) p++;
                    if (*p == ',') p++;
                    else if (*p)
                        return node_err(doc, n, err, "expected a number or a comma-separated list of numbers, got %s",
                                        shown(n, buf, sizeof buf));
                    while (isspace((unsigned char)*p)) p++;
                }
            }
            if (cnt == 0 || (cnt != 1 && cnt != a->num_layers + 1))
                return node_err(doc, n, err, "%d values: give one alpha for every layer, or num_layers + 1 = %d "
                                "(x^(0) .. x^(%d))", cnt, a->num_layers + 1, a->num_layers);
            a->num_lightgcn_alpha = cnt;
        }
        if (!a->l2_normalize_set) a->l2_normalize_output = 0; /* raw dot products, as PyG's LightGCN */
    }
    /* num_layers 0: the model is the learnable embedding table (matrix factorisation) */
    if (a->num_layers == 0) {
        n = g[TARG_NUM_LAYERS];
        if (task != TASK_LINK_PREDICTION)
            return node_err(doc, n, err, "num_layers 0 (the learnable embeddings alone, scored by dot products) is for "
                            "link prediction; node classification needs at least one layer");
        if (a->node_embedding_dim == 0)
            return node_err(doc, n, err, "num_layers 0 means the model is the learnable embedding table alone "
                            "(matrix factorisation): set node_embedding_dim");
        if (a->out_channels > 0 && a->out_channels != a->node_embedding_dim)
            return node_err(doc, g[TARG_OUT_CHANNELS], err, "num_layers is 0: the output is the embedding row, "
                            "out_channels must be node_embedding_dim (%lld) or left out", (long long)a->node_embedding_dim);
        a->num_fanouts = 0;
        for (int i = 0; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = 0;
        if (!a->l2_normalize_set) a->l2_normalize_output = 0; /* raw dot products, as MF */
    }
    return gigl_finish(doc, gx, gname, task, a, notes, err);
}

/* ---- sections of the task config ------------------------------------------------- */

static const char *const TOP_KEYS[] = {
    "graphMetadata", "taskMetadata", "sharedConfig", "trainerConfig", "profilerConfig", "featureFlags",
    /* GiGL sections cgnn does not read */
    "inferencerConfig", "datasetConfig", "metricsConfig", "postProcessorConfig", NULL};

static const char *const GRAPH_METADATA_KEYS[] = {"nodeTypes", "edgeTypes", "condensedEdgeTypeMap",
                                                  "condensedNodeTypeMap", NULL};
static const char *const EDGE_TYPE_KEYS[] = {"srcNodeType", "relation", "dstNodeType", NULL};
static const char *const TASK_METADATA_KEYS[] = {"nodeBasedTaskMetadata",
                                                 "nodeAnchorBasedLinkPredictionTaskMetadata",
                                                 "linkBasedTaskMetadata", NULL};
static const char *const NC_KEYS[] = {"supervisionNodeTypes", NULL};
static const char *const LP_KEYS[] = {"supervisionEdgeTypes", NULL};
static const char *const SHARED_KEYS[] = {
    "preprocessedMetadataUri", "trainedModelMetadata", "shouldSkipTraining", "shouldSkipModelEvaluation",
    /* GiGL fields cgnn does not read */
    "flattenedGraphMetadata", "datasetMetadata", "inferenceMetadata", "postprocessedMetadata",
    "sharedArgs", "isGraphDirected", "shouldSkipAutomaticTempAssetCleanup", "shouldSkipInference",
    "shouldIncludeIsolatedNodesInTraining", NULL};
static const char *const TRAINED_MODEL_KEYS[] = {"trainedModelUri", "evalMetricsUri", "tensorboardLogsUri",
                                                 "scriptedModelUri", NULL};
static const char *const TRAINER_CONFIG_KEYS[] = {"trainerArgs", "trainerClsPath", "clsPath", "command",
                                                  "shouldLogToTensorboard",
                                                  /* GiGL's graph-store mode: the storage job's command */
                                                  "graphStoreStorageConfig", NULL};
/* trainerConfig.graphStoreStorageConfig (GiGL's GraphStoreStorageConfig): the Python storage job's
 * command and its string arguments; cgnn's storage ranks are cgnn itself, so both are read and
 * ignored (docs/DISTRIBUTED.md, "Server-client mode"). */
static const char *const STORAGE_CONFIG_KEYS[] = {"command", "storageArgs", "storage_args", NULL};
static const char *const PROFILER_KEYS[] = {"shouldEnableProfiler", "profilerLogDir", "profilerArgs",
                                            /* the proto's own spelling, as GiGL's trainer docs write it */
                                            "should_enable_profiler", "profiler_log_dir", "profiler_args", NULL};
/* GiGL's profiler arguments (TorchProfiler, profiler_wrapper.py: a string map): torch.profiler.schedule's
 * wait, warmup, active, repeat, then torch.profiler.profile's flags, which cgnn's tracer has no use for */
static const char *const PROFILER_ARG_KEYS[] = {"wait", "warmup", "active", "repeat",
                                                "with_stack", "record_shapes", "profile_memory", NULL};

/* Checks an EdgeType mapping and copies it into *et. */
static int parse_edge_type(const yamldoc *doc, const yamldoc_node *n, config_edge_type *et, cgnn_err *err) {
    if (yamldoc_expect_kind(doc, n, YAMLDOC_MAPPING, err) != 0) return -1;
    if (yamldoc_check_keys(doc, n, EDGE_TYPE_KEYS, err) != 0) return -1;
    const char *src = NULL, *rel = NULL, *dst = NULL;
    if (yamldoc_get_string(doc, n, "srcNodeType", 1, &src, err) != 0 ||
        yamldoc_get_string(doc, n, "relation", 1, &rel, err) != 0 ||
        yamldoc_get_string(doc, n, "dstNodeType", 1, &dst, err) != 0)
        return -1;
    if (!et) return 0;
    if (copy_str(et->src_node_type, sizeof et->src_node_type, src, doc, yamldoc_get(n, "srcNodeType"), err) ||
        copy_str(et->relation, sizeof et->relation, rel, doc, yamldoc_get(n, "relation"), err) ||
        copy_str(et->dst_node_type, sizeof et->dst_node_type, dst, doc, yamldoc_get(n, "dstNodeType"), err))
        return -1;
    return 0;
}

/* map[key] as a list (absent/null: *out = NULL). */
static int get_list(const yamldoc *doc, const yamldoc_node *map, const char *key, const yamldoc_node **out,
                    cgnn_err *err) {
    const yamldoc_node *v = yamldoc_get(map, key);
    *out = NULL;
    if (is_null(v)) return 0;
    if (yamldoc_expect_kind(doc, v, YAMLDOC_SEQUENCE, err) != 0) return -1;
    *out = v;
    return 0;
}

/* The keys of a condensed*TypeMap: GiGL's uint32 type ids, written as YAML keys ('0' or 0). */
static int condensed_key(const yamldoc *doc, const yamldoc_node *map, int i, int64_t *id, cgnn_err *err) {
    if (yamldoc_parse_int(map->keys[i], id) != 0 || *id < 0 || *id > UINT32_MAX)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): key '%.40s' is not a condensed type id (an integer in "
                       "[0, %u])", doc->file, map->path, map->key_lines[i], map->keys[i], UINT32_MAX);
    for (int j = 0; j < i; j++) {
        int64_t other;
        if (yamldoc_parse_int(map->keys[j], &other) == 0 && other == *id)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): condensed type id %lld given twice (lines %d and %d)",
                           doc->file, map->path, map->key_lines[i], (long long)*id, map->key_lines[j],
                           map->key_lines[i]);
    }
    return 0;
}

/* condensedNodeTypeMap {id: name} / condensedEdgeTypeMap {id: EdgeType}: a 1:1 map of the
 * declared types (GiGL's graph_schema.proto). Checked, not kept. */
static int parse_condensed_maps(const yamldoc *doc, const yamldoc_node *gm, const task_config *c, cgnn_err *err) {
    const yamldoc_node *m;
    if (get_section(doc, gm, "condensedNodeTypeMap", &m, err) != 0) return -1;
    for (int i = 0; m && i < m->len; i++) {
        int64_t id;
        const yamldoc_node *v = m->items[i];
        if (condensed_key(doc, m, i, &id, err) != 0) return -1;
        if (yamldoc_expect_kind(doc, v, YAMLDOC_SCALAR, err) != 0) return -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(m->items[j]->scalar, v->scalar))
                return node_err(doc, v, err, "node type '%s' has two condensed ids (%s and %s); the map is 1:1",
                                v->scalar, m->keys[j], m->keys[i]);
        int known = c->num_node_types == 0;
        for (int t = 0; t < c->num_node_types && !known; t++) known = !strcmp(c->node_types[t], v->scalar);
        if (!known) return node_err(doc, v, err, "node type '%.100s' is not in graphMetadata.nodeTypes", v->scalar);
    }
    if (m && c->num_node_types > 0 && m->len != c->num_node_types)
        return node_err(doc, m, err, "maps %d node type%s but graphMetadata.nodeTypes declares %d; the map is 1:1",
                        m->len, m->len == 1 ? "" : "s", c->num_node_types);
    if (get_section(doc, gm, "condensedEdgeTypeMap", &m, err) != 0) return -1;
    config_edge_type seen[CONFIG_MAX_TYPES];
    for (int i = 0; m && i < m->len; i++) {
        int64_t id;
        const yamldoc_node *v = m->items[i];
        config_edge_type et;
        char name[3 * CONFIG_TYPE_NAME_MAX];
        if (condensed_key(doc, m, i, &id, err) != 0) return -1;
        if (parse_edge_type(doc, v, &et, err) != 0) return -1;
        config_edge_type_name(&et, name, sizeof name);
        for (int j = 0; j < i && j < CONFIG_MAX_TYPES; j++)
            if (edge_type_eq(&seen[j], &et))
                return node_err(doc, v, err, "edge type %s has two condensed ids (%s and %s); the map is 1:1", name,
                                m->keys[j], m->keys[i]);
        if (i >= CONFIG_MAX_TYPES)
            return node_err(doc, m, err, "more than %d edge types; cgnn takes at most %d", CONFIG_MAX_TYPES,
                            CONFIG_MAX_TYPES);
        seen[i] = et;
        int known = c->num_edge_types == 0;
        for (int t = 0; t < c->num_edge_types && !known; t++) known = edge_type_eq(&c->edge_types[t], &et);
        if (!known) return node_err(doc, v, err, "edge type %s is not in graphMetadata.edgeTypes", name);
    }
    if (m && c->num_edge_types > 0 && m->len != c->num_edge_types)
        return node_err(doc, m, err, "maps %d edge type%s but graphMetadata.edgeTypes declares %d; the map is 1:1",
                        m->len, m->len == 1 ? "" : "s", c->num_edge_types);
    return 0;
}

static int parse_graph_metadata(const yamldoc *doc, const yamldoc_node *root, task_config *c, cgnn_err *err) {
    const yamldoc_node *gm, *list;
    if (get_section(doc, root, "graphMetadata", &gm, err) != 0) return -1;
    if (!gm) return 0;
    if (yamldoc_check_keys(doc, gm, GRAPH_METADATA_KEYS, err) != 0) return -1;
    if (get_list(doc, gm, "nodeTypes", &list, err) != 0) return -1;
    for (int i = 0; list && i < list->len; i++) {
        const yamldoc_node *it = list->items[i];
        if (yamldoc_expect_kind(doc, it, YAMLDOC_SCALAR, err) != 0) return -1;
        if (!it->scalar[0]) return node_err(doc, it, err, "empty node type name");
        int seen = 0;
        for (int t = 0; t < c->num_node_types && !seen; t++) seen = !strcmp(c->node_types[t], it->scalar);
        if (seen) continue; /* a repeated name is the same type */
        if (c->num_node_types >= CONFIG_MAX_TYPES)
            return node_err(doc, list, err, "more than %d node types; cgnn takes at most %d", CONFIG_MAX_TYPES,
                            CONFIG_MAX_TYPES);
        if (copy_str(c->node_types[c->num_node_types], CONFIG_TYPE_NAME_MAX, it->scalar, doc, it, err) != 0) return -1;
        c->num_node_types++;
    }
    if (get_list(doc, gm, "edgeTypes", &list, err) != 0) return -1;
    for (int i = 0; list && i < list->len; i++) {
        config_edge_type et;
        if (parse_edge_type(doc, list->items[i], &et, err) != 0) return -1;
        int seen = 0;
        for (int t = 0; t < c->num_edge_types && !seen; t++) seen = edge_type_eq(&c->edge_types[t], &et);
        if (seen) continue;
        if (c->num_edge_types >= CONFIG_MAX_TYPES)
            return node_err(doc, list, err, "more than %d edge types; cgnn takes at most %d", CONFIG_MAX_TYPES,
                            CONFIG_MAX_TYPES);
        c->edge_types[c->num_edge_types++] = et;
    }
    return parse_condensed_maps(doc, gm, c, err);
}

static int parse_task_metadata(const yamldoc *doc, const yamldoc_node *root, task_config *c, cgnn_err *err) {
    const yamldoc_node *tm = yamldoc_get(root, "taskMetadata");
    if (is_null(tm))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: missing key 'taskMetadata' (nodeBasedTaskMetadata for node classification "
                       "or nodeAnchorBasedLinkPredictionTaskMetadata for link prediction)",
                       doc->file);
    if (yamldoc_expect_kind(doc, tm, YAMLDOC_MAPPING, err) != 0) return -1;
    if (yamldoc_check_keys(doc, tm, TASK_METADATA_KEYS, err) != 0) return -1;
    const yamldoc_node *lb = yamldoc_get(tm, "linkBasedTaskMetadata");
    if (lb)
        return node_err(doc, lb, err,
                        "not supported by cgnn (use nodeBasedTaskMetadata or "
                        "nodeAnchorBasedLinkPredictionTaskMetadata)");
    const yamldoc_node *nc = yamldoc_get(tm, "nodeBasedTaskMetadata");
    const yamldoc_node *lp = yamldoc_get(tm, "nodeAnchorBasedLinkPredictionTaskMetadata");
    if (nc && lp)
        return node_err(doc, tm, err,
                        "both nodeBasedTaskMetadata and nodeAnchorBasedLinkPredictionTaskMetadata "
                        "are given; a task is exactly one of them");
    if (!nc && !lp)
        return node_err(doc, tm, err,
                        "needs exactly one of nodeBasedTaskMetadata (node classification) or "
                        "nodeAnchorBasedLinkPredictionTaskMetadata (link prediction)");
    const yamldoc_node *body, *list;
    if (nc) {
        c->task = TASK_NODE_CLASSIFICATION;
        if (get_section(doc, tm, "nodeBasedTaskMetadata", &body, err) != 0) return -1;
        if (!body) return 0;
        if (yamldoc_check_keys(doc, body, NC_KEYS, err) != 0) return -1;
        if (get_list(doc, body, "supervisionNodeTypes", &list, err) != 0) return -1;
        for (int i = 0; list && i < list->len; i++)
            if (yamldoc_expect_kind(doc, list->items[i], YAMLDOC_SCALAR, err) != 0) return -1;
        c->num_supervision_types = list ? list->len : 0;
        if (list && list->len > 0)
            return copy_str(c->supervision_node_type, sizeof c->supervision_node_type,
                            list->items[0]->scalar, doc, list->items[0], err);
        return 0;
    }
    c->task = TASK_LINK_PREDICTION;
    if (get_section(doc, tm, "nodeAnchorBasedLinkPredictionTaskMetadata", &body, err) != 0) return -1;
    if (!body) return 0;
    if (yamldoc_check_keys(doc, body, LP_KEYS, err) != 0) return -1;
    if (get_list(doc, body, "supervisionEdgeTypes", &list, err) != 0) return -1;
    c->num_supervision_types = list ? list->len : 0;
    for (int i = 0; list && i < list->len; i++)
        if (parse_edge_type(doc, list->items[i], i == 0 ? &c->supervision_edge_type : NULL, err) != 0)
            return -1;
    return 0;
}

static int parse_shared_config(const yamldoc *doc, const yamldoc_node *root, task_config *c, cgnn_err *err) {
    const yamldoc_node *sc, *tmm;
    if (get_section(doc, root, "sharedConfig", &sc, err) != 0) return -1;
    if (!sc)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: missing key 'sharedConfig' (it names the dataset, "
                       "sharedConfig.preprocessedMetadataUri, and the outputs, "
                       "sharedConfig.trainedModelMetadata)",
                       doc->file);
    if (yamldoc_check_keys(doc, sc, SHARED_KEYS, err) != 0) return -1;
    if (get_uri(doc, sc, "preprocessedMetadataUri", 1, c->dataset_path, err) != 0) return -1;
    if (yamldoc_get_bool(doc, sc, "shouldSkipTraining", 0, &c->should_skip_training, err) != 0) return -1;
    if (yamldoc_get_bool(doc, sc, "shouldSkipModelEvaluation", 0, &c->should_skip_model_evaluation, err) != 0)
        return -1;
    if (get_section(doc, sc, "trainedModelMetadata", &tmm, err) != 0) return -1;
    if (!tmm)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: sharedConfig: missing key 'trainedModelMetadata' (with trainedModelUri, "
                       "where the model is written)",
                       doc->file);
    if (yamldoc_check_keys(doc, tmm, TRAINED_MODEL_KEYS, err) != 0) return -1;
    if (get_uri(doc, tmm, "trainedModelUri", 1, c->trained_model_uri, err) != 0) return -1;
    if (get_uri(doc, tmm, "evalMetricsUri", 0, c->eval_metrics_uri, err) != 0) return -1;
    if (get_uri(doc, tmm, "tensorboardLogsUri", 0, c->tensorboard_logs_uri, err) != 0) return -1;
    return 0;
}

/* The one of camel / snake (a proto field's JSON and own names) that map holds, in *key
 * (camel when neither); both given is an error naming both. */
static int one_spelling(const yamldoc *doc, const yamldoc_node *map, const char *camel, const char *snake,
                        const char **key, cgnn_err *err) {
    const yamldoc_node *a = yamldoc_get(map, camel), *b = yamldoc_get(map, snake);
    *key = b && !a ? snake : camel;
    if (a && b)
        return node_err(doc, b, err, "%s and %s are the same field (GiGL's proto spells it both ways); give it once",
                        snake, camel);
    return 0;
}

static int parse_profiler_config(const yamldoc *doc, const yamldoc_node *root, task_config *c, cgnn_err *err) {
    const yamldoc_node *pc, *args;
    if (get_section(doc, root, "profilerConfig", &pc, err) != 0) return -1;
    if (!pc) return 0;
    if (yamldoc_check_keys(doc, pc, PROFILER_KEYS, err) != 0) return -1;
    const char *k_en, *k_dir, *k_args;
    if (one_spelling(doc, pc, "shouldEnableProfiler", "should_enable_profiler", &k_en, err) != 0 ||
        one_spelling(doc, pc, "profilerLogDir", "profiler_log_dir", &k_dir, err) != 0 ||
        one_spelling(doc, pc, "profilerArgs", "profiler_args", &k_args, err) != 0)
        return -1;
    if (strchr(k_en, '_') || strchr(k_args, '_')) /* messages name an absent field as the config spells the others */
        k_dir = yamldoc_get(pc, k_dir) ? k_dir : "profiler_log_dir";
    if (yamldoc_get_bool(doc, pc, k_en, 0, &c->profiler_enabled, err) != 0) return -1;
    if (get_uri(doc, pc, k_dir, 0, c->profiler_log_dir, err) != 0) return -1;
    if (get_section(doc, pc, k_args, &args, err) != 0) return -1;
    if (args) {
        if (yamldoc_check_keys(doc, args, PROFILER_ARG_KEYS, err) != 0) return -1;
        int64_t *dst[4] = {&c->profiler_wait, &c->profiler_warmup, &c->profiler_active, &c->profiler_repeat};
        const int64_t lo[4] = {0, 0, 1, 0};
        for (int i = 0; i < args->len; i++) {
            const yamldoc_node *v = args->items[i];
            for (int k = 0; k < 4; k++)
                if (!strcmp(args->keys[i], PROFILER_ARG_KEYS[k]) && arg_int(doc, v, lo[k], INT32_MAX, dst[k], err) != 0)
                    return -1;
            for (int k = 4; PROFILER_ARG_KEYS[k]; k++) {
                if (strcmp(args->keys[i], PROFILER_ARG_KEYS[k]) != 0) continue;
                double b;
                if (yamldoc_expect_kind(doc, v, YAMLDOC_SCALAR, err) != 0 ||
                    gigl_value(doc, v, GIGL_BOOL, 0, 0, &b, err) != 0)
                    return -1;
                note_add(&c->notes, "profilerConfig.%s.%s: accepted, no effect: cgnn's tracer records one span per "
                         "stage, thread and rank (no call stacks, tensor shapes or memory)", k_args, args->keys[i]);
            }
        }
    }
    if (c->profiler_enabled && !c->profiler_log_dir[0])
        return node_err(doc, pc, err, "%s is true but %s is not set", k_en, k_dir);
    return 0;
}

/* featureFlags (a string map, otherwise unused): should_run_glt_backend says whether GiGL runs
 * the config with its in-memory trainer (the training scripts) or its legacy one; that decides
 * what shouldSkipModelEvaluation means (c->skip_test; docs/CONFIG.md). */
static int parse_feature_flags(const yamldoc *doc, const yamldoc_node *ff, task_config *c, cgnn_err *err) {
    const yamldoc_node *v = ff ? yamldoc_get(ff, "should_run_glt_backend") : NULL;
    double b = 0;
    if (v && !is_null(v) &&
        (yamldoc_expect_kind(doc, v, YAMLDOC_SCALAR, err) != 0 || gigl_value(doc, v, GIGL_BOOL, 0, 0, &b, err) != 0))
        return -1;
    c->gigl_in_memory = b != 0;
    /* GiGL's Trainer (gigl/src/training/trainer.py) does nothing when both are set (cgnn train too:
     * trainer_run); its legacy trainer skips the evaluation, warning; its in-memory training
     * scripts do not read the flag: they test and write the eval metrics all the same. */
    c->skip_test = c->should_skip_model_evaluation && !(c->gigl_in_memory && !c->should_skip_training);
    if (c->should_skip_model_evaluation && !c->should_skip_training)
        note_add(&c->notes, c->skip_test ? "sharedConfig.shouldSkipModelEvaluation: the test split is not evaluated and "
                                          "no eval metrics are written (as GiGL's legacy trainer; it warns: 'Are you "
                                          "sure you wanted this?')"
                                        : "sharedConfig.shouldSkipModelEvaluation is true, but "
                                          "featureFlags.should_run_glt_backend is True: GiGL's in-memory training "
                                          "scripts test the model and write its eval metrics all the same, and so "
                                          "does cgnn");
    return 0;
}

int config_load_task(task_config *c, const char *uri, cgnn_err *err) {
    memset(c, 0, sizeof *c);
    c->profiler_wait = 5; /* GiGL's TorchProfiler defaults (profiler_wrapper.py) */
    c->profiler_warmup = 2;
    c->profiler_active = 2;
    c->profiler_repeat = 1;
    char what[CONFIG_PATH_MAX + 32];
    snprintf(what, sizeof what, "task config %s", uri ? uri : "(null)");
    if (!uri || !*uri) return err_set(err, CGNN_ERR_INPUT, "no task config given (--task_config_uri)");
    if (config_resolve_uri(c->file, sizeof c->file, uri, what, err) != 0) return -1;
    yamldoc doc;
    if (yamldoc_load(&doc, c->file, err) != 0) return -1;
    int rc = -1;
    const yamldoc_node *root = doc.root, *tc, *targs, *ff;
    if (yamldoc_expect_kind(&doc, root, YAMLDOC_MAPPING, err) != 0) goto out;
    if (yamldoc_check_keys(&doc, root, TOP_KEYS, err) != 0) goto out;
    if (parse_graph_metadata(&doc, root, c, err) != 0) goto out;
    if (parse_task_metadata(&doc, root, c, err) != 0) goto out;
    if (parse_shared_config(&doc, root, c, err) != 0) goto out;
    if (get_section(&doc, root, "trainerConfig", &tc, err) != 0) goto out;
    if (tc && yamldoc_check_keys(&doc, tc, TRAINER_CONFIG_KEYS, err) != 0) goto out;
    if (tc) {
        const yamldoc_node *gss;
        if (get_section(&doc, tc, "graphStoreStorageConfig", &gss, err) != 0) goto out;
        if (gss && yamldoc_check_keys(&doc, gss, STORAGE_CONFIG_KEYS, err) != 0) goto out;
        c->has_storage_config = gss != NULL;
    }
    if (get_section(&doc, tc, "trainerArgs", &targs, err) != 0) goto out;
    if (parse_trainer_args(&doc, targs, c->task, &c->args, &c->notes, err) != 0) goto out;
    if (parse_profiler_config(&doc, root, c, err) != 0) goto out;
    if (get_section(&doc, root, "featureFlags", &ff, err) != 0) goto out;
    if (parse_feature_flags(&doc, ff, c, err) != 0) goto out;
    rc = 0;
out:
    yamldoc_free(&doc);
    return rc;
}

/* ---- resource config -------------------------------------------------------------- */

static const char *const RESOURCE_TOP_KEYS[] = {
    "trainer_resource_config",
    /* GiGL sections for other components: ignored */
    "shared_resource_config_uri", "shared_resource_config", "preprocessor_config",
    "subgraph_sampler_config", "split_generator_config", "trainer_config", "inferencer_config",
    "inferencer_resource_config", NULL};
static const char *const TRAINER_RESOURCE_KEYS[] = {"local_trainer_config", "mpi_trainer_config",
                                                    /* GiGL's cloud trainers: ignored */
                                                    "vertex_ai_trainer_config", "kfp_trainer_config",
                                                    /* GiGL's graph-store mode: server-client */
                                                    "vertex_ai_graph_store_trainer_config", NULL};
static const char *const GRAPH_STORE_KEYS[] = {"graph_store_pool", "compute_pool", "compute_cluster_local_world_size",
                                               NULL};
/* GiGL's VertexAiResourceConfig: num_replicas counts ranks; the rest is about cloud machines */
static const char *const VERTEX_POOL_KEYS[] = {"machine_type", "gpu_type", "gpu_limit", "num_replicas", "timeout",
                                               "gcp_region_override", "scheduling_strategy", "boot_disk_size_gb",
                                               "reservation_affinity", NULL};
static const char *const LOCAL_TRAINER_KEYS[] = {"num_workers", NULL};
static const char *const MPI_TRAINER_KEYS[] = {"num_replicas", "num_threads_per_replica", NULL};

/* map[key] as an integer in [lo, hi] into *out (absent: unchanged). */
static int get_int_range(const yamldoc *doc, const yamldoc_node *map, const char *key, int64_t lo,
                         int64_t hi, int *out, cgnn_err *err) {
    int64_t v;
    if (!yamldoc_get(map, key) || is_null(yamldoc_get(map, key))) return 0;
    if (yamldoc_get_int(doc, map, key, 1, &v, err) != 0) return -1;
    if (v < lo || v > hi)
        return node_err(doc, yamldoc_get(map, key), err, "must be in [%lld, %lld], got %lld",
                        (long long)lo, (long long)hi, (long long)v);
    *out = (int)v;
    return 0;
}

/* One pool of vertex_ai_graph_store_trainer_config: num_replicas (required, >= 1) into *replicas;
 * the cloud fields are noted in c->ignored. */
static int parse_pool(const yamldoc *doc, const yamldoc_node *gs, const char *name, int *replicas,
                      resource_config *c, cgnn_err *err) {
    const yamldoc_node *pool;
    if (get_section(doc, gs, name, &pool, err) != 0) return -1;
    if (!pool) return node_err(doc, gs, err, "%s is missing (graph-store mode needs graph_store_pool and compute_pool, "
                               "each with num_replicas)", name);
    if (yamldoc_check_keys(doc, pool, VERTEX_POOL_KEYS, err) != 0) return -1;
    if (!yamldoc_get(pool, "num_replicas") || is_null(yamldoc_get(pool, "num_replicas")))
        return node_err(doc, pool, err, "num_replicas is missing (the ranks of this pool)");
    if (get_int_range(doc, pool, "num_replicas", 1, 1 << 20, replicas, err) != 0) return -1;
    for (int k = 0; VERTEX_POOL_KEYS[k]; k++) {
        const yamldoc_node *v = yamldoc_get(pool, VERTEX_POOL_KEYS[k]);
        if (!v || !strcmp(VERTEX_POOL_KEYS[k], "num_replicas") || is_null(v)) continue;
        const size_t len = strlen(c->ignored);
        if (len + 80 < sizeof c->ignored)
            snprintf(c->ignored + len, sizeof c->ignored - len, "%s%s.%s %s", len ? ", " : "", name,
                     VERTEX_POOL_KEYS[k], v->kind == YAMLDOC_SCALAR ? v->scalar : "(a mapping)");
    }
    return 0;
}

/* trainer_resource_config.vertex_ai_graph_store_trainer_config (absent: nothing set). */
static int parse_graph_store(const yamldoc *doc, const yamldoc_node *trc, resource_config *c, cgnn_err *err) {
    const yamldoc_node *gs;
    if (get_section(doc, trc, "vertex_ai_graph_store_trainer_config", &gs, err) != 0) return -1;
    if (!gs) return 0;
    if (yamldoc_check_keys(doc, gs, GRAPH_STORE_KEYS, err) != 0) return -1;
    if (parse_pool(doc, gs, "graph_store_pool", &c->storage_replicas, c, err) != 0) return -1;
    if (parse_pool(doc, gs, "compute_pool", &c->compute_replicas, c, err) != 0) return -1;
    if (get_int_range(doc, gs, "compute_cluster_local_world_size", 0, 1 << 16, &c->compute_local_world_size, err) != 0)
        return -1;
    c->graph_store = 1;
    return 0;
}

int config_load_resource(resource_config *c, const char *uri, cgnn_err *err) {
    memset(c, 0, sizeof *c);
    if (!uri || !*uri) return 0;
    char what[CONFIG_PATH_MAX + 32], path[CONFIG_PATH_MAX];
    snprintf(what, sizeof what, "resource config %s", uri);
    if (config_resolve_uri(path, sizeof path, uri, what, err) != 0) return -1;
    yamldoc doc;
    if (yamldoc_load(&doc, path, err) != 0) return -1;
    snprintf(c->file, sizeof c->file, "%s", path);
    int rc = -1;
    const yamldoc_node *root = doc.root, *trc, *local, *mpi;
    if (!root) { /* an empty file: defaults */
        rc = 0;
        goto out;
    }
    if (yamldoc_expect_kind(&doc, root, YAMLDOC_MAPPING, err) != 0) goto out;
    if (yamldoc_check_keys(&doc, root, RESOURCE_TOP_KEYS, err) != 0) goto out;
    if (get_section(&doc, root, "trainer_resource_config", &trc, err) != 0) goto out;
    if (!trc) {
        rc = 0;
        goto out;
    }
    if (yamldoc_check_keys(&doc, trc, TRAINER_RESOURCE_KEYS, err) != 0) goto out;
    if (get_section(&doc, trc, "local_trainer_config", &local, err) != 0) goto out;
    if (local) {
        if (yamldoc_check_keys(&doc, local, LOCAL_TRAINER_KEYS, err) != 0) goto out;
        if (get_int_range(&doc, local, "num_workers", 0, 1024, &c->num_workers, err) != 0) goto out;
    }
    if (parse_graph_store(&doc, trc, c, err) != 0) goto out;
    if (get_section(&doc, trc, "mpi_trainer_config", &mpi, err) != 0) goto out;
    if (mpi) {
        if (yamldoc_check_keys(&doc, mpi, MPI_TRAINER_KEYS, err) != 0) goto out;
        if (get_int_range(&doc, mpi, "num_replicas", 1, 1 << 20, &c->num_replicas, err) != 0) goto out;
        if (get_int_range(&doc, mpi, "num_threads_per_replica", 1, 1024, &c->num_threads_per_replica, err) != 0)
            goto out;
    }
    rc = 0;
out:
    yamldoc_free(&doc);
    return rc;
}

/* ---- types: the config against the dataset ------------------------------------------ */

/* The dataset's untyped form: one node type named "_default" (dataset.h). */
static int ds_untyped(const dataset *ds) {
    return ds->num_node_types == 1 && !strcmp(ds->node_types[0].name, "_default");
}

/* Appends name to the list out[cap] ("a, b, c"), ending in "..." when it does not fit. */
static void list_add(char *out, size_t cap, const char *name) {
    const size_t len = strlen(out);
    if (len >= 3 && !strcmp(out + len - 3, "...")) return;
    if (len + strlen(name) + 2 + 4 < cap)
        snprintf(out + len, cap - len, "%s%s", len ? ", " : "", name);
    else if (len + 6 < cap)
        snprintf(out + len, cap - len, "%s...", len ? ", " : "");
}

static void ds_node_type_list(const dataset *ds, char *out, size_t cap) {
    out[0] = '\0';
    for (int t = 0; t < ds->num_node_types; t++) list_add(out, cap, ds->node_types[t].name);
}

static void ds_edge_type_list(const dataset *ds, char *out, size_t cap) {
    out[0] = '\0';
    for (int e = 0; e < ds->num_edge_types; e++) list_add(out, cap, ds->edge_types[e].name);
}

/* The index of the dataset edge type named "src:rel:dst" like et, or -1. */
static int ds_find_edge_type(const dataset *ds, const config_edge_type *et) {
    char name[3 * CONFIG_TYPE_NAME_MAX];
    config_edge_type_name(et, name, sizeof name);
    for (int e = 0; e < ds->num_edge_types; e++)
        if (!strcmp(ds->edge_types[e].name, name)) return e;
    return -1;
}

static int ds_find_node_type(const dataset *ds, const char *name) {
    for (int t = 0; t < ds->num_node_types; t++)
        if (!strcmp(ds->node_types[t].name, name)) return t;
    return -1;
}

/* A per-edge-type num_neighbors against ds: the dataset is typed and has every edge type listed.
 * Writes the dataset index of entry i into idx[i] when idx is not NULL. */
static int check_etype_fanouts(const task_config *c, const dataset *ds, int *idx, cgnn_err *err) {
    const trainer_args *a = &c->args;
    if (a->num_etype_fanouts == 0) return 0;
    char have[1024], name[3 * CONFIG_TYPE_NAME_MAX];
    if (ds_untyped(ds))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.num_neighbors gives fanouts per edge type (%d, the first %s), "
                       "but the dataset %s is untyped (one node type and one edge type, _default): give one list "
                       "for all edges, e.g. \"[15, 10]\"",
                       c->file, a->num_etype_fanouts, config_edge_type_name(&a->etype_fanouts[0].etype, name, sizeof name),
                       ds->dir);
    for (int i = 0; i < a->num_etype_fanouts; i++) {
        const int e = ds_find_edge_type(ds, &a->etype_fanouts[i].etype);
        if (e < 0) {
            ds_edge_type_list(ds, have, sizeof have);
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: trainerConfig.trainerArgs.num_neighbors: edge type %s is not an edge type of the "
                           "dataset %s (it has %d: %s)",
                           c->file, config_edge_type_name(&a->etype_fanouts[i].etype, name, sizeof name), ds->dir,
                           ds->num_edge_types, have);
        }
        if (idx) idx[i] = e;
    }
    return 0;
}

int config_resolve_fanouts(const task_config *c, const struct dataset *ds, int64_t *out, cgnn_err *err) {
    const trainer_args *a = &c->args;
    const int L = a->num_layers;
    if (a->num_etype_fanouts == 0) {
        for (int e = 0; e < ds->num_edge_types; e++)
            for (int h = 0; h < L; h++) out[(size_t)e * L + h] = a->fanouts[h];
        return 0;
    }
    int idx[CONFIG_MAX_ETYPE_FANOUTS];
    if (check_etype_fanouts(c, ds, idx, err) != 0) return -1;
    for (size_t k = 0; k < (size_t)ds->num_edge_types * L; k++) out[k] = 0; /* left out: not sampled */
    for (int i = 0; i < a->num_etype_fanouts; i++)
        for (int h = 0; h < L; h++) out[(size_t)idx[i] * L + h] = a->etype_fanouts[i].fanouts[h];
    return 0;
}

const struct ds_task *config_find_task(const task_config *c, const struct dataset *ds) {
    const ds_task_kind want = c->task == TASK_LINK_PREDICTION ? DS_TASK_LINK_PREDICTION : DS_TASK_NODE_CLASSIFICATION;
    for (int i = 0; i < ds->num_tasks; i++)
        if (ds->tasks[i].kind == want) return &ds->tasks[i];
    return NULL;
}

int config_check_types(const task_config *c, const struct dataset *ds, cgnn_err *err) {
    return config_check_types_for_task(c, ds, config_find_task(c, ds), err);
}

int config_check_types_for_task(const task_config *c, const struct dataset *ds, const struct ds_task *task,
                                cgnn_err *err) {
    const int lp = c->task == TASK_LINK_PREDICTION;
    const char *sup_key = lp ? "taskMetadata.nodeAnchorBasedLinkPredictionTaskMetadata.supervisionEdgeTypes"
                             : "taskMetadata.nodeBasedTaskMetadata.supervisionNodeTypes";
    char cfg_list[1024] = "", have[1024], name[3 * CONFIG_TYPE_NAME_MAX];
    if (ds_untyped(ds)) {
        /* names are labels only; several types would be a typed task trained as a homogeneous one */
        if (c->num_node_types > 1 || c->num_edge_types > 1 || c->num_supervision_types > 1) {
            char edges[1024] = "", what[2600] = "";
            for (int t = 0; t < c->num_node_types; t++) list_add(cfg_list, sizeof cfg_list, c->node_types[t]);
            for (int t = 0; t < c->num_edge_types; t++)
                list_add(edges, sizeof edges, config_edge_type_name(&c->edge_types[t], name, sizeof name));
            size_t len = 0;
            if (c->num_node_types > 1 || c->num_edge_types > 1)
                len += (size_t)snprintf(what, sizeof what, "graphMetadata declares %d node type%s (%s) and %d edge type%s (%s)",
                                        c->num_node_types, c->num_node_types == 1 ? "" : "s", cfg_list, c->num_edge_types,
                                        c->num_edge_types == 1 ? "" : "s", edges);
            if (c->num_supervision_types > 1 && len < sizeof what)
                snprintf(what + len, sizeof what - len, "%s%s declares %d types", len ? ", and " : "", sup_key,
                         c->num_supervision_types);
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s, but the dataset %s has 1 node type (_default) and %d edge type%s (%s): it is "
                           "untyped (no type: keys in its metadata.yaml), and cgnn refuses rather than train a "
                           "homogeneous model on a typed task",
                           c->file, what, ds->dir, ds->num_edge_types, ds->num_edge_types == 1 ? "" : "s",
                           ds->num_edge_types > 0 ? ds->edge_types[0].name : "");
        }
        return check_etype_fanouts(c, ds, NULL, err);
    }

    /* graphMetadata.nodeTypes == the dataset's node types, as sets */
    if (c->num_node_types > 0) {
        char missing[1024] = "", extra[1024] = "";
        for (int t = 0; t < c->num_node_types; t++) {
            list_add(cfg_list, sizeof cfg_list, c->node_types[t]);
            if (ds_find_node_type(ds, c->node_types[t]) < 0) list_add(extra, sizeof extra, c->node_types[t]);
        }
        for (int t = 0; t < ds->num_node_types; t++) {
            int found = 0;
            for (int k = 0; k < c->num_node_types && !found; k++) found = !strcmp(c->node_types[k], ds->node_types[t].name);
            if (!found) list_add(missing, sizeof missing, ds->node_types[t].name);
        }
        if (extra[0] || missing[0]) {
            ds_node_type_list(ds, have, sizeof have);
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: graphMetadata.nodeTypes is [%s], but the dataset %s has node types [%s]%s%s%s%s",
                           c->file, cfg_list, ds->dir, have, extra[0] ? "; not in the dataset: " : "", extra,
                           missing[0] ? "; not in the config: " : "", missing);
        }
    }
    /* graphMetadata.edgeTypes == the dataset's edge types, as sets */
    if (c->num_edge_types > 0) {
        char missing[1024] = "", extra[1024] = "";
        for (int t = 0; t < c->num_edge_types; t++) {
            config_edge_type_name(&c->edge_types[t], name, sizeof name);
            if (ds_find_edge_type(ds, &c->edge_types[t]) < 0) list_add(extra, sizeof extra, name);
        }
        for (int e = 0; e < ds->num_edge_types; e++) {
            int found = 0;
            for (int k = 0; k < c->num_edge_types && !found; k++)
                found = !strcmp(config_edge_type_name(&c->edge_types[k], name, sizeof name), ds->edge_types[e].name);
            if (!found) list_add(missing, sizeof missing, ds->edge_types[e].name);
        }
        if (extra[0] || missing[0]) {
            char edges[1024] = "";
            for (int t = 0; t < c->num_edge_types; t++)
                list_add(edges, sizeof edges, config_edge_type_name(&c->edge_types[t], name, sizeof name));
            ds_edge_type_list(ds, have, sizeof have);
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: graphMetadata.edgeTypes is [%s], but the dataset %s has edge types [%s]%s%s%s%s",
                           c->file, edges, ds->dir, have, extra[0] ? "; not in the dataset: " : "", extra,
                           missing[0] ? "; not in the config: " : "", missing);
        }
    }
    /* one supervision type: the type of the task cgnn trains */
    if (c->num_supervision_types > 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s declares %d types; cgnn trains one task on one %s type (the dataset %s's task%s%s)",
                       c->file, sup_key, c->num_supervision_types, lp ? "edge" : "node", ds->dir, task ? " " : "",
                       task ? task->name : "");
    if (!lp && c->supervision_node_type[0]) {
        const int t = ds_find_node_type(ds, c->supervision_node_type);
        if (t < 0) {
            ds_node_type_list(ds, have, sizeof have);
            return err_set(err, CGNN_ERR_INPUT, "%s: %s: '%s' is not a node type of the dataset %s (it has [%s])",
                           c->file, sup_key, c->supervision_node_type, ds->dir, have);
        }
        if (task && task->type != t)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s: '%s', but the dataset %s's task '%s' classifies nodes of type '%s'", c->file,
                           sup_key, c->supervision_node_type, ds->dir, task->name,
                           task->type >= 0 && task->type < ds->num_node_types ? ds->node_types[task->type].name : "?");
    }
    if (lp && c->supervision_edge_type.src_node_type[0]) {
        const int e = ds_find_edge_type(ds, &c->supervision_edge_type);
        config_edge_type_name(&c->supervision_edge_type, name, sizeof name);
        if (e < 0) {
            ds_edge_type_list(ds, have, sizeof have);
            return err_set(err, CGNN_ERR_INPUT, "%s: %s: %s is not an edge type of the dataset %s (it has [%s])",
                           c->file, sup_key, name, ds->dir, have);
        }
        if (task && task->type != e)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s: %s, but the dataset %s's task '%s' predicts edges of type %s", c->file, sup_key,
                           name, ds->dir, task->name,
                           task->type >= 0 && task->type < ds->num_edge_types ? ds->edge_types[task->type].name : "?");
    }
    return check_etype_fanouts(c, ds, NULL, err);
}
