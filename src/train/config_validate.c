/* config_validate.c — the checks of a task config after its values are read: the trainer
 * arguments against each other (the steps config_args.h names, run by pass 2 in the table's
 * order), and the config against the dataset it names (types, per-edge-type fanouts, the task).
 * Every error is CGNN_ERR_INPUT naming the config file and field (and, against the dataset, the
 * dataset directory and what it has).
 */
#include <stdio.h>
#include <string.h>

#include "io/dataset.h"
#include "train/config.h"
#include "train/config_args.h"
#include "train/config_value.h"

/* ---- trainer arguments against each other (steps of the table, config_args.h) ----------------- */

/* After num_neighbors: GAT's and HGT's attention heads split hidden_dim. */
int config_check_heads(const targ_ctx *x) {
    const trainer_args *a = x->a;
    if ((a->model != MODEL_GAT && a->model != MODEL_HGT) || a->hidden_dim % a->num_heads == 0) return 0;
    const yamldoc_node *n = x->g[TARG_NUM_HEADS]    ? x->g[TARG_NUM_HEADS]
                            : x->g[TARG_HIDDEN_DIM] ? x->g[TARG_HIDDEN_DIM]
                                                    : x->g[TARG_GNN_MODEL_CLASS_PATH];
    return config_node_err(x->doc, n, x->err, "%s needs hidden_dim (%lld) divisible by num_heads (%d)",
                           model_kind_name(a->model), (long long)a->hidden_dim, a->num_heads);
}

/* Before optim_momentum: it is SGD's. */
int config_check_momentum(const targ_ctx *x) {
    const yamldoc_node *n = x->g[TARG_OPTIM_MOMENTUM];
    if (!n || x->a->optim.kind == OPTIM_SGD) return 0;
    return config_node_err(x->doc, n, x->err, "applies to SGD only (optim_class_path is %s)",
                           optim_kind_name(x->a->optim.kind));
}

/* The scheduler arguments kind takes (the rows with its TARG_SCHED bit), for messages. */
static const char *sched_takes(sched_kind kind) {
    switch (kind) {
    case SCHED_CONSTANT: return "lr_scheduler_factor, lr_scheduler_total_iters";
    case SCHED_STEP: return "lr_scheduler_step_size, lr_scheduler_gamma";
    case SCHED_LINEAR: return "lr_scheduler_start_factor, lr_scheduler_end_factor, lr_scheduler_total_iters";
    case SCHED_COSINE: return "lr_scheduler_t_max, lr_scheduler_eta_min";
    default: return "";
    }
}

/* After lr_scheduler_name: no name -> a constant learning rate (the defaults) and no scheduler
 * arguments; a name -> the arguments it takes (and StepLR's and CosineAnnealingLR's required one).
 * GiGL's factor / total_iters: its v1 trainers' ConstantLR (GiGL's defaults factor 1.0,
 * total_iters 10), with or without the name. */
int config_check_scheduler(const targ_ctx *x) {
    const yamldoc_node *const *g = x->g;
    sched_config *s = &x->a->sched;
    const int gigl_const =
        config_args_via_gigl(x, TARG_SCHED_FACTOR) || config_args_via_gigl(x, TARG_SCHED_TOTAL_ITERS);
    if (g[TARG_SCHED_NAME]) {
        const sched_kind kind = s->kind;
        if (kind == SCHED_CONSTANT && gigl_const) s->factor = 1.0, s->total_iters = 10;
        for (int k = 0; k < TARG_COUNT; k++)
            if (CONFIG_TARGS[k].sched && g[k] && !(CONFIG_TARGS[k].sched & 1u << kind))
                return config_node_err(x->doc, g[k], x->err, "does not apply to %s (it takes %s)",
                                       sched_kind_name(kind), sched_takes(kind));
        if (kind == SCHED_STEP && !g[TARG_SCHED_STEP_SIZE])
            return config_node_err(x->doc, g[TARG_SCHED_NAME], x->err, "StepLR needs lr_scheduler_step_size");
        if (kind == SCHED_COSINE && !g[TARG_SCHED_T_MAX])
            return config_node_err(x->doc, g[TARG_SCHED_NAME], x->err, "CosineAnnealingLR needs lr_scheduler_t_max");
        return 0;
    }
    for (int k = 0; k < TARG_COUNT; k++)
        if (CONFIG_TARGS[k].sched && g[k] && !(gigl_const && (k == TARG_SCHED_FACTOR || k == TARG_SCHED_TOTAL_ITERS)))
            return config_node_err(x->doc, g[k], x->err, "lr_scheduler_name is not set (the default is a constant "
                                   "learning rate); name the scheduler this argument is for");
    if (gigl_const) {
        sched_default_config(s, SCHED_CONSTANT);
        s->factor = 1.0, s->total_iters = 10;
    }
    return 0;
}

/* After the embeddings' numbers: those of the table need the table. */
int config_check_embedding_args(const targ_ctx *x) {
    for (int k = 0; k < TARG_COUNT; k++)
        if (CONFIG_TARGS[k].embeddings && x->g[k] && x->a->node_embedding_dim == 0)
            return config_node_err(x->doc, x->g[k], x->err,
                                   "applies to the learnable node embeddings; set node_embedding_dim");
    return 0;
}

/* After seed_partition_uri: it means the local seed assignment. */
int config_check_seed_partition(const targ_ctx *x) {
    const yamldoc_node *n = x->g[TARG_SEED_PARTITION];
    if (!n) return 0;
    if (x->a->seed_assignment == SEED_ASSIGN_GLOBAL)
        return config_node_err(x->doc, n, x->err, "seed_partition_uri gives the local seed assignment of a partition; "
                               "it contradicts seed_assignment: global");
    x->a->seed_assignment = SEED_ASSIGN_LOCAL;
    return 0;
}

/* After cache_policy (docs/DISTRIBUTED.md, "Feature cache"): a cache needs a size; a size without
 * a policy is the hotness cache (GLT's). */
int config_check_cache(const targ_ctx *x) {
    trainer_args *a = x->a;
    const yamldoc_node *n = x->g[TARG_CACHE_POLICY];
    if (n && a->cache_policy != CACHE_POLICY_NONE && a->cache_ratio == 0 && a->cache_memory_budget == 0)
        return config_node_err(x->doc, n, x->err, "a %s cache needs a size: set cache_ratio (a fraction of the nodes) "
                               "or cache_memory_budget (bytes)", n->scalar);
    if (!n && (a->cache_ratio > 0 || a->cache_memory_budget > 0)) a->cache_policy = CACHE_POLICY_HOTNESS;
    return 0;
}

/* After task_path: BPR draws its negatives from the batch's random ones. */
int config_check_bpr(const targ_ctx *x) {
    const trainer_args *a = x->a;
    for (int t = 0; t < a->num_lp_tasks; t++)
        if (a->lp_tasks[t].kind == LP_TASK_BPR && a->lp_tasks[t].num_negatives > a->random_negative_sample_batch_size)
            return config_node_err(x->doc, x->g[TARG_TASK_PATH], x->err,
                                   "BPR num_negatives %lld is more than the %lld random negatives of a batch "
                                   "(random_negative_sample_batch_size)",
                                   (long long)a->lp_tasks[t].num_negatives,
                                   (long long)a->random_negative_sample_batch_size);
    return 0;
}

/* Before lightgcn_alpha: LightGCN's model is the learnable embedding table, propagated over the
 * whole graph, for link prediction; lightgcn_alpha is its alone. */
int config_check_lightgcn(const targ_ctx *x) {
    const yamldoc_node *const *g = x->g;
    trainer_args *a = x->a;
    if (g[TARG_LIGHTGCN_ALPHA] && a->model != MODEL_LIGHTGCN)
        return config_node_err(x->doc, g[TARG_LIGHTGCN_ALPHA], x->err, "applies to gnn_model_class_path LightGCN only");
    if (a->model != MODEL_LIGHTGCN) return 0;
    if (x->task != TASK_LINK_PREDICTION)
        return config_node_err(x->doc, g[TARG_GNN_MODEL_CLASS_PATH], x->err,
                               "LightGCN scores node pairs by the dot product of their embeddings: it is for link "
                               "prediction (nodeAnchorBasedLinkPredictionTaskMetadata)");
    if (a->node_embedding_dim == 0)
        return config_node_err(x->doc, g[TARG_GNN_MODEL_CLASS_PATH], x->err,
                               "LightGCN's only parameters are the learnable node embeddings: set node_embedding_dim");
    if (a->out_channels > 0 && a->out_channels != a->node_embedding_dim)
        return config_node_err(x->doc, g[TARG_OUT_CHANNELS], x->err, "LightGCN's output is node_embedding_dim (%lld) "
                               "wide: leave out_channels out", (long long)a->node_embedding_dim);
    if (!a->l2_normalize_set) a->l2_normalize_output = 0; /* raw dot products, as PyG's LightGCN */
    return 0;
}

/* Last: num_layers 0, the model is the learnable embedding table (matrix factorisation). */
int config_check_num_layers(const targ_ctx *x) {
    trainer_args *a = x->a;
    const yamldoc_node *n = x->g[TARG_NUM_LAYERS];
    if (a->num_layers != 0) return 0;
    if (x->task != TASK_LINK_PREDICTION)
        return config_node_err(x->doc, n, x->err, "num_layers 0 (the learnable embeddings alone, scored by dot "
                               "products) is for link prediction; node classification needs at least one layer");
    if (a->node_embedding_dim == 0)
        return config_node_err(x->doc, n, x->err, "num_layers 0 means the model is the learnable embedding table "
                               "alone (matrix factorisation): set node_embedding_dim");
    if (a->out_channels > 0 && a->out_channels != a->node_embedding_dim)
        return config_node_err(x->doc, x->g[TARG_OUT_CHANNELS], x->err, "num_layers is 0: the output is the "
                               "embedding row, out_channels must be node_embedding_dim (%lld) or left out",
                               (long long)a->node_embedding_dim);
    a->num_fanouts = 0;
    for (int i = 0; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = 0;
    if (!a->l2_normalize_set) a->l2_normalize_output = 0; /* raw dot products, as MF */
    return 0;
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
                       c->file, a->num_etype_fanouts,
                       config_edge_type_name(&a->etype_fanouts[0].etype, name, sizeof name), ds->dir);
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
    const ds_task *first = NULL;
    char name[3 * CONFIG_TYPE_NAME_MAX];
    for (int i = 0; i < ds->num_tasks; i++) {
        const ds_task *t = &ds->tasks[i];
        if (t->kind != want) continue;
        if (!first) first = t;
        /* a typed dataset's task of the config's supervision type (GraphBolt: one task may hold a
         * set per type; the dataset reads it as one task per type) */
        if (ds_untyped(ds) || c->num_supervision_types != 1) break;
        if (c->task == TASK_LINK_PREDICTION) {
            if (t->type >= 0 && t->type < ds->num_edge_types &&
                !strcmp(ds->edge_types[t->type].name, config_edge_type_name(&c->supervision_edge_type, name, sizeof name)))
                return t;
        } else if (t->type >= 0 && t->type < ds->num_node_types &&
                   !strcmp(ds->node_types[t->type].name, c->supervision_node_type)) {
            return t;
        }
    }
    return first;
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
                len += (size_t)snprintf(what, sizeof what,
                                        "graphMetadata declares %d node type%s (%s) and %d edge type%s (%s)",
                                        c->num_node_types, c->num_node_types == 1 ? "" : "s", cfg_list,
                                        c->num_edge_types, c->num_edge_types == 1 ? "" : "s", edges);
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
            for (int k = 0; k < c->num_node_types && !found; k++)
                found = !strcmp(c->node_types[k], ds->node_types[t].name);
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
