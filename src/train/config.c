/* config.c — GiGL task config (GbmlConfig YAML) and resource config (GiglResourceConfig YAML)
 * read strictly into typed structs; see config.h and docs/CONFIG.md. The config module's files:
 *   config.c           the YAML documents, section by section, and the two passes over trainerArgs;
 *   config_args.c/.h   the table of trainer arguments and GiGL's names for them, the defaults;
 *   config_value.c/.h  strict values (numbers, fanouts, task_path, ...) and messages about nodes;
 *   config_validate.c  the arguments against each other, and the config against the dataset.
 *
 * Order of work: the YAML is parsed into a yamldoc tree; each section is checked key by key
 * (unknown keys are errors with a "did you mean" suggestion; GiGL fields cgnn does not use are
 * known and ignored); trainerArgs is read in two passes: the first collects the value node of
 * every known key (so that arguments may appear in any order), the second goes down the table of
 * arguments (config_args.h), parsing each value strictly and checking it against the arguments
 * above it (fanouts vs num_layers, scheduler arguments vs scheduler, link-prediction arguments vs
 * task), then reads GiGL's names.
 * Every error is CGNN_ERR_INPUT, "FILE: PATH (line N): what is wrong".
 */
#include "train/config.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "io/yamldoc.h"
#include "train/config_args.h"
#include "train/config_value.h"

/* ---- YAML helpers --------------------------------------------------------------------------- */

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

/* map[key] as a mapping: *out = NULL when absent or null; error when it is something else. */
static int get_section(const yamldoc *doc, const yamldoc_node *map, const char *key,
                       const yamldoc_node **out, cgnn_err *err) {
    const yamldoc_node *v = yamldoc_get(map, key);
    *out = NULL;
    if (config_is_null(v)) return 0;
    if (v->kind != YAMLDOC_MAPPING) {
        char buf[80];
        return config_node_err(doc, v, err, "expected a mapping, got %s", config_shown(v, buf, sizeof buf));
    }
    *out = v;
    return 0;
}

/* Copies src into dst[cap]; an error about node n when it does not fit. */
static int copy_str(char *dst, size_t cap, const char *src, const yamldoc *doc, const yamldoc_node *n,
                    cgnn_err *err) {
    size_t len = strlen(src);
    if (len >= cap) return config_node_err(doc, n, err, "too long (%zu characters, at most %zu)", len, cap - 1);
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
        return config_node_err(doc, v ? v : map, err, "must not be empty");
    }
    char what[CONFIG_PATH_MAX + 256];
    snprintf(what, sizeof what, "%s: %s (line %d)", doc->file, v->path, v->line);
    return config_resolve_uri(out, CONFIG_PATH_MAX, s, what, err);
}

/* ---- trainerArgs ---------------------------------------------------------------------------- */

/* The closest trainer argument name to key, cgnn's or GiGL's, if plausibly a typo; else NULL. */
/* The shortest known key that holds key as whole '_'-separated words (lr -> optim_lr, epochs ->
 * num_epochs, batch_size -> main_sample_batch_size: the names other trainers use); NULL if none. */
static const char *suggest_by_words(const char *key, const char *const *known) {
    const size_t n = strlen(key);
    const char *best = NULL;
    if (n < 2) return NULL;
    for (const char *const *a = known; *a; a++)
        for (const char *at = strstr(*a, key); at; at = strstr(at + 1, key))
            if ((at == *a || at[-1] == '_') && (at[n] == '\0' || at[n] == '_')) {
                if (!best || strlen(*a) < strlen(best)) best = *a;
                break;
            }
    return best;
}

static const char *suggest_arg(const char *key) {
    const char *a = suggest(key, CONFIG_TRAINER_ARG_KEYS), *b = suggest(key, CONFIG_GIGL_ARG_KEYS);
    if (!a && !b) {
        a = suggest_by_words(key, CONFIG_TRAINER_ARG_KEYS);
        return a ? a : suggest_by_words(key, CONFIG_GIGL_ARG_KEYS);
    }
    if (!a || !b) return a ? a : b;
    return yamldoc_edit_distance(key, b) < yamldoc_edit_distance(key, a) ? b : a;
}

/* Puts v (written as `key`) into g[k]. When g[k] was given already, under another name of the
 * same setting, both values must be the same as GiGL's name reads them: else an error naming both. */
static int place_arg(const yamldoc *doc, const yamldoc_node **g, const char **gname, int k, const yamldoc_node *v,
                     const char *key, cgnn_err *err) {
    if (!g[k]) {
        g[k] = v, gname[k] = key;
        return 0;
    }
    const int ga = config_gigl_find(config_gigl_find(key) >= 0 ? key : gname[k]);
    const gigl_type type = ga >= 0 ? config_gigl_arg(ga)->type : GIGL_STR;
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
                return config_node_err(doc, n[j], err, "expected %s, got %s", ints ? "an integer" : "a finite number",
                                       config_shown(n[j], buf, sizeof buf));
        }
        same = ints ? i1 == i2 : x == y;
    } else {
        same = !strcmp(g[k]->scalar, v->scalar);
    }
    if (!same) {
        char b1[80], b2[80];
        return config_node_err(doc, v, err, "is %s, but %s (line %d) is %s: both set %s; give it once",
                               config_shown(v, b1, sizeof b1), gname[k], g[k]->line, config_shown(g[k], b2, sizeof b2),
                               CONFIG_TARGS[k].key);
    }
    return 0;
}

/* Pass 1 of parse_trainer_args for one trainerArgs entry key: v (its key on line key_line): the key
 * must be known (cgnn's name or GiGL's), the value a non-empty scalar (or a list or a mapping where
 * the argument's row takes one); it is placed in g / gname (cgnn's arguments) or gx (GiGL's). */
static int take_arg(const yamldoc *doc, task_kind task, const char *key, const yamldoc_node *v, int key_line,
                    const yamldoc_node **g, const char **gname, const yamldoc_node **gx, cgnn_err *err) {
    char buf[80];
    const int k = config_args_find(key);
    const int ga = k < 0 ? config_gigl_find(key) : -1;
    if (ga >= 0) { /* one of GiGL's names */
        const gigl_arg *e = config_gigl_arg(ga);
        if (v->kind != YAMLDOC_SCALAR)
            return config_node_err(doc, v, err, "expected a string value, got %s", config_shown(v, buf, sizeof buf));
        if (!v->scalar[0] || config_is_null(v)) return config_node_err(doc, v, err, "empty value");
        if (e->kind == GIGL_MISSING) return config_node_err(doc, v, err, "%s", e->why);
        gx[ga] = v;
        if (e->kind != GIGL_SAME ||
            (task == TASK_LINK_PREDICTION && e->target == TARG_OUT_CHANNELS && !strcmp(e->name, "num_classes")))
            return 0;
        for (int t = 0; t < 2; t++) {
            const int tk = t ? e->target2 : e->target;
            if (tk < 0) continue;
            if (task != TASK_LINK_PREDICTION && CONFIG_TARGS[tk].lp_only)
                return config_node_err(doc, v, err,
                                       "sets %s, which applies to link prediction "
                                       "(nodeAnchorBasedLinkPredictionTaskMetadata) only; this task is %s",
                                       CONFIG_TARGS[tk].key, config_task_name(task));
            if (place_arg(doc, g, gname, tk, v, key, err) != 0) return -1;
        }
        return 0;
    }
    if (k < 0) {
        /* the key's own line (a block value may start below it) */
        const char *best = suggest_arg(key);
        if (best)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): unknown trainer argument; did you mean '%s'?",
                           doc->file, v->path, key_line, best);
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): unknown trainer argument (docs/CONFIG.md lists the "
                       "ones cgnn reads)",
                       doc->file, v->path, key_line);
    }
    const targ_row *r = &CONFIG_TARGS[k];
    const int applies = task == TASK_LINK_PREDICTION || !r->lp_only;
    if (((v->kind == YAMLDOC_SEQUENCE && r->yaml_list) || (v->kind == YAMLDOC_MAPPING && r->yaml_map)) && applies) {
        g[k] = v; /* a list of numbers; a mapping of edge types or tasks */
        return 0;
    }
    if (v->kind != YAMLDOC_SCALAR)
        return config_node_err(doc, v, err, "expected a string value, got %s", config_shown(v, buf, sizeof buf));
    if (!v->scalar[0] || config_is_null(v)) return config_node_err(doc, v, err, "empty value");
    if (!applies)
        return config_node_err(doc, v, err,
                               "applies to link prediction (nodeAnchorBasedLinkPredictionTaskMetadata) "
                               "only; this task is %s",
                               config_task_name(task));
    return place_arg(doc, g, gname, k, v, key, err);
}

/* 1 if trainer argument `name` (cgnn's or GiGL's name) was given: under that name, or (GiGL's
 * names) another name that sets the same cgnn argument(s). */
static int arg_given(const yamldoc_node *map, const char *name, const yamldoc_node *const *g,
                     const yamldoc_node *const *gx) {
    if (map && yamldoc_get(map, name)) return 1;
    const int k = config_args_find(name);
    if (k >= 0) return g[k] != NULL;
    const int ga = config_gigl_find(name);
    if (ga < 0) return 0;
    const gigl_arg *e = config_gigl_arg(ga);
    if (gx[ga]) return 1;
    return e->kind == GIGL_SAME && ((e->target >= 0 && g[e->target]) || (e->target2 >= 0 && g[e->target2]));
}

/* Parses trainerArgs (map may be NULL: all defaults) into *a for a task of kind task; GiGL's
 * names too (config_args.c), with notes for cgnn train to log. script: the GiGL training script
 * or task spec the config names (config_gigl_script), whose defaults fill what map leaves out
 * (one note lists them), or NULL. */
static int parse_trainer_args(const yamldoc *doc, const yamldoc_node *map, task_kind task,
                              const gigl_script *script, trainer_args *a, config_notes *notes, cgnn_err *err) {
    config_default_trainer_args(a, task);
    const yamldoc_node *g[TARG_COUNT] = {0}; /* the value given for each argument, or NULL */
    const char *gname[TARG_COUNT] = {0};     /* the name it was given under (cgnn's or GiGL's) */
    const yamldoc_node *gx[CONFIG_GIGL_ARGS_MAX] = {0}; /* the value given for each GiGL name */

    /* Pass 1: every key must be known; every value a non-empty scalar (or a list or a mapping
     * where the argument's row takes one). */
    for (int i = 0; map && i < map->len; i++)
        if (take_arg(doc, task, map->keys[i], map->items[i], map->key_lines[i], g, gname, gx, err) != 0) return -1;

    /* The script's defaults for what the config leaves out: as if given (scalar nodes that live
     * until pass 2 is done), listed on one note. */
    yamldoc_node dnode[CONFIG_GIGL_DEFAULTS_MAX];
    char dpath[CONFIG_GIGL_DEFAULTS_MAX][160];
    char taken[CONFIG_NOTE_MAX - 160] = "";
    size_t tlen = 0;
    for (int i = 0; script && i < CONFIG_GIGL_DEFAULTS_MAX && script->defs[i].name; i++) {
        const gigl_default *d = &script->defs[i];
        if (arg_given(map, d->name, g, gx) || (d->unless && arg_given(map, d->unless, g, gx))) continue;
        /* a link prediction script's argument in a node classification config: not this task's */
        const int k = config_args_find(d->name), ga = k < 0 ? config_gigl_find(d->name) : -1;
        const gigl_arg *e = ga >= 0 ? config_gigl_arg(ga) : NULL;
        const int tk = k >= 0 ? k : e && e->kind == GIGL_SAME ? e->target : -1;
        if (tk >= 0 && task != TASK_LINK_PREDICTION && CONFIG_TARGS[tk].lp_only) continue;
        snprintf(dpath[i], sizeof dpath[i], "trainerConfig.trainerArgs.%s (%s's default)", d->name, script->name);
        dnode[i] = (yamldoc_node){.kind = YAMLDOC_SCALAR, .line = 0, .path = dpath[i], .scalar = (char *)d->value};
        if (take_arg(doc, task, d->name, &dnode[i], 0, g, gname, gx, err) != 0) return -1;
        const int n = snprintf(taken + tlen, sizeof taken - tlen, "%s%s=%s", tlen ? ", " : "", d->name, d->value);
        if (n > 0 && (size_t)n < sizeof taken - tlen) tlen += (size_t)n;
    }
    if (tlen)
        config_note(notes, "GiGL's defaults of %s for what trainerArgs leaves out: %s (docs/CONFIG.md, \"GiGL's "
                    "defaults\")", script->source, taken);

    /* Pass 2: the values, down the table (config_args.h): each row's before step, its value if
     * given, its after step. */
    const targ_ctx x = {doc, task, a, g, gname, notes, err};
    for (int k = 0; k < TARG_COUNT; k++) {
        const targ_row *r = &CONFIG_TARGS[k];
        if (r->before && r->before(&x) != 0) return -1;
        if (g[k] && config_arg_read(&x, r, g[k]) != 0) return -1;
        if (r->after && r->after(&x) != 0) return -1;
    }
    return config_gigl_finish(&x, gx);
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
    if (config_is_null(v)) return 0;
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
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): condensed type id %lld given twice (lines %d and %d)", doc->file,
                           map->path, map->key_lines[i], (long long)*id, map->key_lines[j], map->key_lines[i]);
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
                return config_node_err(doc, v, err, "node type '%s' has two condensed ids (%s and %s); the map is 1:1",
                                       v->scalar, m->keys[j], m->keys[i]);
        int known = c->num_node_types == 0;
        for (int t = 0; t < c->num_node_types && !known; t++) known = !strcmp(c->node_types[t], v->scalar);
        if (!known)
            return config_node_err(doc, v, err, "node type '%.100s' is not in graphMetadata.nodeTypes", v->scalar);
    }
    if (m && c->num_node_types > 0 && m->len != c->num_node_types)
        return config_node_err(doc, m, err,
                               "maps %d node type%s but graphMetadata.nodeTypes declares %d; the map is 1:1", m->len,
                               m->len == 1 ? "" : "s", c->num_node_types);
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
            if (config_edge_type_eq(&seen[j], &et))
                return config_node_err(doc, v, err, "edge type %s has two condensed ids (%s and %s); the map is 1:1",
                                       name, m->keys[j], m->keys[i]);
        if (i >= CONFIG_MAX_TYPES)
            return config_node_err(doc, m, err, "more than %d edge types; cgnn takes at most %d", CONFIG_MAX_TYPES,
                                   CONFIG_MAX_TYPES);
        seen[i] = et;
        int known = c->num_edge_types == 0;
        for (int t = 0; t < c->num_edge_types && !known; t++) known = config_edge_type_eq(&c->edge_types[t], &et);
        if (!known) return config_node_err(doc, v, err, "edge type %s is not in graphMetadata.edgeTypes", name);
    }
    if (m && c->num_edge_types > 0 && m->len != c->num_edge_types)
        return config_node_err(doc, m, err,
                               "maps %d edge type%s but graphMetadata.edgeTypes declares %d; the map is 1:1", m->len,
                               m->len == 1 ? "" : "s", c->num_edge_types);
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
        if (!it->scalar[0]) return config_node_err(doc, it, err, "empty node type name");
        int seen = 0;
        for (int t = 0; t < c->num_node_types && !seen; t++) seen = !strcmp(c->node_types[t], it->scalar);
        if (seen) continue; /* a repeated name is the same type */
        if (c->num_node_types >= CONFIG_MAX_TYPES)
            return config_node_err(doc, list, err, "more than %d node types; cgnn takes at most %d", CONFIG_MAX_TYPES,
                                   CONFIG_MAX_TYPES);
        if (copy_str(c->node_types[c->num_node_types], CONFIG_TYPE_NAME_MAX, it->scalar, doc, it, err) != 0) return -1;
        c->num_node_types++;
    }
    if (get_list(doc, gm, "edgeTypes", &list, err) != 0) return -1;
    for (int i = 0; list && i < list->len; i++) {
        config_edge_type et;
        if (parse_edge_type(doc, list->items[i], &et, err) != 0) return -1;
        int seen = 0;
        for (int t = 0; t < c->num_edge_types && !seen; t++) seen = config_edge_type_eq(&c->edge_types[t], &et);
        if (seen) continue;
        if (c->num_edge_types >= CONFIG_MAX_TYPES)
            return config_node_err(doc, list, err, "more than %d edge types; cgnn takes at most %d", CONFIG_MAX_TYPES,
                                   CONFIG_MAX_TYPES);
        c->edge_types[c->num_edge_types++] = et;
    }
    return parse_condensed_maps(doc, gm, c, err);
}

static int parse_task_metadata(const yamldoc *doc, const yamldoc_node *root, task_config *c, cgnn_err *err) {
    const yamldoc_node *tm = yamldoc_get(root, "taskMetadata");
    if (config_is_null(tm))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: missing key 'taskMetadata' (nodeBasedTaskMetadata for node classification "
                       "or nodeAnchorBasedLinkPredictionTaskMetadata for link prediction)",
                       doc->file);
    if (yamldoc_expect_kind(doc, tm, YAMLDOC_MAPPING, err) != 0) return -1;
    if (yamldoc_check_keys(doc, tm, TASK_METADATA_KEYS, err) != 0) return -1;
    const yamldoc_node *lb = yamldoc_get(tm, "linkBasedTaskMetadata");
    if (lb)
        return config_node_err(doc, lb, err,
                               "not supported by cgnn (use nodeBasedTaskMetadata or "
                               "nodeAnchorBasedLinkPredictionTaskMetadata)");
    const yamldoc_node *nc = yamldoc_get(tm, "nodeBasedTaskMetadata");
    const yamldoc_node *lp = yamldoc_get(tm, "nodeAnchorBasedLinkPredictionTaskMetadata");
    if (nc && lp)
        return config_node_err(doc, tm, err,
                               "both nodeBasedTaskMetadata and nodeAnchorBasedLinkPredictionTaskMetadata "
                               "are given; a task is exactly one of them");
    if (!nc && !lp)
        return config_node_err(doc, tm, err,
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

/* outputs: 1 when sharedConfig.trainedModelMetadata (and its trainedModelUri) is required. */
static int parse_shared_config(const yamldoc *doc, const yamldoc_node *root, task_config *c, int outputs,
                               cgnn_err *err) {
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
    if (!tmm && !outputs) return 0;
    if (!tmm)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: sharedConfig: missing key 'trainedModelMetadata' (with trainedModelUri, "
                       "where the model is written)",
                       doc->file);
    if (yamldoc_check_keys(doc, tmm, TRAINED_MODEL_KEYS, err) != 0) return -1;
    if (get_uri(doc, tmm, "trainedModelUri", outputs, c->trained_model_uri, err) != 0) return -1;
    if (get_uri(doc, tmm, "evalMetricsUri", 0, c->eval_metrics_uri, err) != 0) return -1;
    if (get_uri(doc, tmm, "tensorboardLogsUri", 0, c->tensorboard_logs_uri, err) != 0) return -1;
    const yamldoc_node *scripted = yamldoc_get(tmm, "scriptedModelUri");
    if (scripted && !config_is_null(scripted))
        config_note(&c->notes, "sharedConfig.trainedModelMetadata.scriptedModelUri ignored: cgnn writes no TorchScript "
                               "model (the weights go to trainedModelUri; a .pt there is a state_dict GiGL loads)");
    return 0;
}

/* The one of camel / snake (a proto field's JSON and own names) that map holds, in *key
 * (camel when neither); both given is an error naming both. */
static int one_spelling(const yamldoc *doc, const yamldoc_node *map, const char *camel, const char *snake,
                        const char **key, cgnn_err *err) {
    const yamldoc_node *a = yamldoc_get(map, camel), *b = yamldoc_get(map, snake);
    *key = b && !a ? snake : camel;
    if (a && b)
        return config_node_err(
            doc, b, err, "%s and %s are the same field (GiGL's proto spells it both ways); give it once", snake, camel);
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
                if (!strcmp(args->keys[i], PROFILER_ARG_KEYS[k]) &&
                    config_arg_int(doc, v, lo[k], INT32_MAX, dst[k], err) != 0)
                    return -1;
            for (int k = 4; PROFILER_ARG_KEYS[k]; k++) {
                if (strcmp(args->keys[i], PROFILER_ARG_KEYS[k]) != 0) continue;
                double b;
                if (yamldoc_expect_kind(doc, v, YAMLDOC_SCALAR, err) != 0 ||
                    config_gigl_value(doc, v, GIGL_BOOL, 0, 0, &b, err) != 0)
                    return -1;
                config_note(&c->notes, "profilerConfig.%s.%s: accepted, no effect: cgnn's tracer records one span per "
                            "stage, thread and rank (no call stacks, tensor shapes or memory)", k_args, args->keys[i]);
            }
        }
    }
    if (c->profiler_enabled && !c->profiler_log_dir[0])
        return config_node_err(doc, pc, err, "%s is true but %s is not set", k_en, k_dir);
    return 0;
}

/* featureFlags (a string map, otherwise unused): should_run_glt_backend says whether GiGL runs
 * the config with its in-memory trainer (the training scripts) or its legacy one; that decides
 * what shouldSkipModelEvaluation means (c->skip_test; docs/CONFIG.md). */
static int parse_feature_flags(const yamldoc *doc, const yamldoc_node *ff, task_config *c, cgnn_err *err) {
    const yamldoc_node *v = ff ? yamldoc_get(ff, "should_run_glt_backend") : NULL;
    double b = 0;
    if (v && !config_is_null(v) &&
        (yamldoc_expect_kind(doc, v, YAMLDOC_SCALAR, err) != 0 ||
         config_gigl_value(doc, v, GIGL_BOOL, 0, 0, &b, err) != 0))
        return -1;
    c->gigl_in_memory = b != 0;
    /* GiGL's Trainer (gigl/src/training/trainer.py) does nothing when both are set (cgnn train too:
     * trainer_run); its legacy trainer skips the evaluation, warning; its in-memory training
     * scripts do not read the flag: they test and write the eval metrics all the same. */
    c->skip_test = c->should_skip_model_evaluation && !(c->gigl_in_memory && !c->should_skip_training);
    if (c->should_skip_model_evaluation && !c->should_skip_training)
        config_note(&c->notes, c->skip_test
                                   ? "sharedConfig.shouldSkipModelEvaluation: the test split is not evaluated and "
                                     "no eval metrics are written (as GiGL's legacy trainer; it warns: 'Are you "
                                     "sure you wanted this?')"
                                   : "sharedConfig.shouldSkipModelEvaluation is true, but "
                                     "featureFlags.should_run_glt_backend is True: GiGL's in-memory training "
                                     "scripts test the model and write its eval metrics all the same, and so "
                                     "does cgnn");
    return 0;
}

/* trainerConfig.command and featureFlags.cgnn_run_trainer_command (task_config.run_command): with
 * the flag True, the command is required and trainerArgs become its --key=value arguments (every
 * value a scalar, as GiGL's string map). Without it a command is kept for the note that cgnn's own
 * trainer runs (GiGL's configs name their scripts; cgnn trains them itself). */
static int parse_command(const yamldoc *doc, const yamldoc_node *ff, const yamldoc_node *tc,
                         const yamldoc_node *targs, task_config *c, cgnn_err *err) {
    const yamldoc_node *cmd = tc ? yamldoc_get(tc, "command") : NULL;
    char buf[80];
    if (cmd && !config_is_null(cmd)) {
        if (cmd->kind != YAMLDOC_SCALAR)
            return config_node_err(doc, cmd, err, "expected a string (the training command), got %s",
                                   config_shown(cmd, buf, sizeof buf));
        if (copy_str(c->command, sizeof c->command, cmd->scalar, doc, cmd, err) != 0) return -1;
    }
    const yamldoc_node *v = ff ? yamldoc_get(ff, "cgnn_run_trainer_command") : NULL;
    double b = 0;
    if (v && !config_is_null(v) &&
        (yamldoc_expect_kind(doc, v, YAMLDOC_SCALAR, err) != 0 ||
         config_gigl_value(doc, v, GIGL_BOOL, 0, 0, &b, err) != 0))
        return -1;
    c->run_command = b != 0;
    if (!c->run_command) {
        if (c->command[0])
            config_note(&c->notes, "trainerConfig.command '%s' is not run: cgnn's own trainer trains this config "
                                   "(featureFlags.cgnn_run_trainer_command: \"True\" runs the command instead)",
                        c->command);
        return 0;
    }
    const char *p = c->command;
    while (*p == ' ') p++;
    if (!*p)
        return config_node_err(doc, v, err,
                               "is True, but trainerConfig.command is %s: name the training command to run",
                               cmd ? "empty" : "missing");
    size_t off = 0;
    for (int i = 0; targs && i < targs->len; i++) {
        const yamldoc_node *a = targs->items[i];
        if (a->kind != YAMLDOC_SCALAR)
            return config_node_err(doc, a, err, "expected a string (trainerArgs are passed to the command as "
                                   "--%s=VALUE), got %s", targs->keys[i], config_shown(a, buf, sizeof buf));
        const int n = snprintf(c->command_args + off, sizeof c->command_args - off, "--%s=%s", targs->keys[i],
                               config_is_null(a) ? "" : a->scalar);
        if (n < 0 || (size_t)n >= sizeof c->command_args - off)
            return config_node_err(doc, a, err, "trainerArgs too long for the command line (at most %zu "
                                   "characters in all)", sizeof c->command_args - 1);
        off += (size_t)n + 1;
        c->num_command_args++;
    }
    return 0;
}

static int load_task(task_config *c, const char *uri, int outputs, cgnn_err *err) {
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
    if (parse_shared_config(&doc, root, c, outputs, err) != 0) goto out;
    if (get_section(&doc, root, "trainerConfig", &tc, err) != 0) goto out;
    if (tc && yamldoc_check_keys(&doc, tc, TRAINER_CONFIG_KEYS, err) != 0) goto out;
    if (tc) {
        const yamldoc_node *gss;
        if (get_section(&doc, tc, "graphStoreStorageConfig", &gss, err) != 0) goto out;
        if (gss && yamldoc_check_keys(&doc, gss, STORAGE_CONFIG_KEYS, err) != 0) goto out;
        c->has_storage_config = gss != NULL;
    }
    if (get_section(&doc, tc, "trainerArgs", &targs, err) != 0) goto out;
    if (get_section(&doc, root, "featureFlags", &ff, err) != 0) goto out;
    if (parse_command(&doc, ff, tc, targs, c, err) != 0) goto out;
    const yamldoc_node *cls = tc ? yamldoc_get(tc, "trainerClsPath") : NULL;
    const gigl_script *script =
        config_gigl_script(c->command, cls && cls->kind == YAMLDOC_SCALAR ? cls->scalar : NULL);
    if (c->run_command) config_default_trainer_args(&c->args, c->task); /* trainerArgs are the command's */
    else if (parse_trainer_args(&doc, targs, c->task, script, &c->args, &c->notes, err) != 0) goto out;
    if (parse_profiler_config(&doc, root, c, err) != 0) goto out;
    if (parse_feature_flags(&doc, ff, c, err) != 0) goto out;
    rc = 0;
out:
    yamldoc_free(&doc);
    return rc;
}

int config_load_task(task_config *c, const char *uri, cgnn_err *err) { return load_task(c, uri, 1, err); }

int config_load_task_data(task_config *c, const char *uri, cgnn_err *err) { return load_task(c, uri, 0, err); }

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
    if (!yamldoc_get(map, key) || config_is_null(yamldoc_get(map, key))) return 0;
    if (yamldoc_get_int(doc, map, key, 1, &v, err) != 0) return -1;
    if (v < lo || v > hi)
        return config_node_err(doc, yamldoc_get(map, key), err, "must be in [%lld, %lld], got %lld",
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
    if (!pool)
        return config_node_err(doc, gs, err,
                               "%s is missing (graph-store mode needs graph_store_pool and compute_pool, "
                               "each with num_replicas)",
                               name);
    if (yamldoc_check_keys(doc, pool, VERTEX_POOL_KEYS, err) != 0) return -1;
    if (!yamldoc_get(pool, "num_replicas") || config_is_null(yamldoc_get(pool, "num_replicas")))
        return config_node_err(doc, pool, err, "num_replicas is missing (the ranks of this pool)");
    if (get_int_range(doc, pool, "num_replicas", 1, 1 << 20, replicas, err) != 0) return -1;
    for (int k = 0; VERTEX_POOL_KEYS[k]; k++) {
        const yamldoc_node *v = yamldoc_get(pool, VERTEX_POOL_KEYS[k]);
        if (!v || !strcmp(VERTEX_POOL_KEYS[k], "num_replicas") || config_is_null(v)) continue;
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
    for (const char *const *cloud = (const char *const[]){"vertex_ai_trainer_config", "kfp_trainer_config", NULL}; *cloud;
         cloud++) {
        const yamldoc_node *v = yamldoc_get(trc, *cloud);
        const size_t len = strlen(c->cloud_ignored);
        if (v && !config_is_null(v) && len + 40 < sizeof c->cloud_ignored)
            snprintf(c->cloud_ignored + len, sizeof c->cloud_ignored - len, "%s%s", len ? ", " : "", *cloud);
    }
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
