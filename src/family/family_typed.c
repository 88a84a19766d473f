/* family_typed.c — the typed family (family/model_family.h): HeteroSAGE, RGCN or HGT over typed
 * blocks sampled per edge type (typed_sampler). Each node type's input rows are its features, or
 * for a featureless type a learnable table (node_embedding_dim wide, else hidden_dim) replicated
 * on every rank and stepped sparsely. Node classification reads the task's node type's rows; link
 * prediction the supervision edge type's source type's rows, then (another type) its destination
 * type's, stacked as the head reads them (the loader's item_local). */
#include <stdlib.h>
#include <string.h>

#include "family/family_impl.h"
#include "util/log.h"
#include "util/rng.h"

static int is_lp(const model_family *f) { return f->o.cfg->task == TASK_LINK_PREDICTION; }

/* The per-edge-type fanouts, each node type's input rows (its features, or a learnable table),
 * and the model's types. The typed graph is open (graph_source_open_typed). */
static int typed_open(model_family *f, const ds_feature *feat, cgnn_err *err) {
    (void)feat; /* (each type's from the source) */
    const trainer_args *a = f->o.a;
    graph_source *src = f->o.src;
    const dataset *ds = src->ds;
    const char *file = f->o.cfg->file;
    const int T = ds->num_node_types, K = ds->num_edge_types, L = a->num_layers;
    int64_t fan[MINIBATCH_MAX_EDGE_TYPES * MINIBATCH_MAX_LAYERS];
    if (config_resolve_fanouts(f->o.cfg, ds, fan, err) != 0) return -1;
    typed_sampler_config *tsc = &f->typed.tsc;
    memset(tsc, 0, sizeof *tsc);
    tsc->num_layers = L;
    tsc->replace = a->replace;
    const char *names[MINIBATCH_MAX_EDGE_TYPES];
    for (int e = 0; e < K; e++) {
        names[e] = ds->edge_types[e].name;
        for (int h = 0; h < L; h++) tsc->fanouts[h][e] = fan[e * L + h];
    }
    if (typed_sampler_config_check(&src->tg, tsc, names, err) != 0)
        return err_prefix(err, "%s: trainerConfig.trainerArgs.num_neighbors: ", file);
    const int64_t emb_dim = a->node_embedding_dim > 0 ? a->node_embedding_dim : a->hidden_dim;
    const double emb_lr = a->embedding_lr > 0 ? a->embedding_lr : a->optim.lr;
    model_types *ty = f->typed.mtypes = cgnn_calloc(1, sizeof *ty);
    ty->num_node_types = T;
    ty->num_edge_types = K;
    for (int k = 0; k < T; k++) {
        snprintf(ty->node_type[k], MODEL_TYPE_NAME_MAX, "%s", ds->node_types[k].name);
        const ds_feature *tf = graph_source_type_feature(src, k); /* (server-client: the storage ranks' rows) */
        f->typed.feat[k] = tf;
        if (tf) {
            f->typed.width[k] = tf->dim;
        } else { /* a learnable row per node, drawn from the seed and the type */
            const int i = f->num_tables;
            if (embedding_init(&f->tables[i].e, ds->node_types[k].num_nodes, emb_dim,
                               a->seed ^ 0x656d626564ULL ^ rng_mix64((uint64_t)k + 1), model_family_table_optim(a),
                               emb_lr, a->optim.beta1, a->optim.beta2, a->optim.eps, err) != 0)
                return -1;
            f->num_tables++;
            f->typed.table[k] = i;
            char prefix[MODEL_FAMILY_KEY_MAX];
            snprintf(prefix, sizeof prefix, "embedding_dict.%s", ds->node_types[k].name);
            if (model_family_table_setup(f, i, prefix, 0, err) != 0) return -1;
            f->typed.width[k] = emb_dim;
            ty->input_grad[k] = 1;
        }
        ty->in_dim[k] = f->typed.width[k];
    }
    model_types_set_edge_types(ty, ds);
    if (is_lp(f)) { /* anchors of the src type, candidates of the dst type */
        f->typed.lp_src = ds->edge_types[f->o.task->type].src_type;
        f->typed.lp_dst = ds->edge_types[f->o.task->type].dst_type;
    }
    ty->output_type = is_lp(f) ? f->typed.lp_dst : f->o.task->type;
    ty->num_bases = a->num_bases;
    return 0;
}

static void typed_loader_config(const model_family *f, loader_config *lc) {
    graph_source *src = f->o.src;
    lc->typed = &src->tg;
    lc->typed_sampler = f->typed.tsc;
    const int lp = is_lp(f);
    lc->seed_type = lp ? 0 : f->o.task->type;
    lc->pair_etype = lp ? f->o.task->type : 0;
    for (int k = 0; k < src->tg.num_node_types; k++) {
        lc->type_feature[k] = f->typed.feat[k];
        lc->type_width[k] = f->typed.width[k];
    }
}

static void typed_log(const model_family *f, const model_family_loaders *ls) {
    if (!model_family_is_root(f)) return;
    const dataset *ds = f->o.src->ds;
    const int lp = is_lp(f), T = ds->num_node_types, K = ds->num_edge_types;
    const ds_split *sp = f->o.gtask->splits;
    const dist_ctx *d = f->o.d;
    const char *producers;
    const int n_producers = graph_source_producers(f->o.src, ls->workers, &producers);
    log_info("%s: %s on %s (%d node types, %d edge types): %lld nodes, %lld edges; %lld/%lld/%lld "
             "train/val/test %s %s of task '%s'; %lld parameters%s; %d process%s x (%d compute threads, %d %s)",
             lp ? "link prediction" : "node classification", model_kind_name(f->m.cfg.kind), ds->name, T, K,
             (long long)graph_source_num_nodes(f->o.src), (long long)graph_source_num_edges(f->o.src),
             (long long)sp[DS_SPLIT_TRAIN].num_items, (long long)sp[DS_SPLIT_VALID].num_items,
             (long long)sp[DS_SPLIT_TEST].num_items,
             lp ? ds->edge_types[f->o.task->type].name : ds->node_types[f->typed.mtypes->output_type].name,
             lp ? "pairs" : "nodes", f->o.task->name, (long long)f->m.num_params,
             f->num_tables ? " + learnable embeddings for the featureless types" : "", d->size,
             d->size == 1 ? "" : "es", f->o.threads, n_producers, producers);
}

/* The model sized for every loader's batches (LP: each split its own negatives), and the output
 * rows the head reads: the output type's seeds, or (LP) the two types' seeds stacked. */
static int typed_build(model_family *f, const model_family_loaders *ls, int64_t out_dim, cgnn_err *err) {
    const trainer_args *a = f->o.a;
    model_types *ty = f->typed.mtypes;
    const int T = ty->num_node_types, K = ty->num_edge_types, L = a->num_layers;
    int first = 1;
    int64_t ms = 0, md = 0; /* LP: the largest seed counts of each type (validation may draw more negatives) */
    for (int i = 0; i < 3; i++) {
        if (!ls->l[i]) continue;
        minibatch_typed_capacity c;
        loader_batch_typed_capacity(ls->l[i], &c);
        if (first) ty->cap = c;
        for (int k = 0; k < T; k++)
            for (int h = 0; h <= L; h++)
                if (c.max_nodes[k][h] > ty->cap.max_nodes[k][h]) ty->cap.max_nodes[k][h] = c.max_nodes[k][h];
        for (int h = 0; h < L; h++)
            for (int e = 0; e < K; e++)
                if (c.max_edges[h][e] > ty->cap.max_edges[h][e]) ty->cap.max_edges[h][e] = c.max_edges[h][e];
        first = 0;
        if (is_lp(f)) {
            if (c.max_nodes[f->typed.lp_src][0] > ms) ms = c.max_nodes[f->typed.lp_src][0];
            if (c.max_nodes[f->typed.lp_dst][0] > md) md = c.max_nodes[f->typed.lp_dst][0];
        }
    }
    model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.kind = a->model;
    mc.num_layers = L;
    mc.hidden_dim = a->hidden_dim;
    mc.out_dim = out_dim;
    mc.num_heads = a->num_heads;
    mc.dropout = (float)a->dropout;
    mc.l2_normalize_output = a->l2_normalize_output;
    mc.types = ty;
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = ls->max_items;
    if (model_init(&f->m, &mc, &cap, a->seed, err) != 0)
        return err_prefix(err, "%s: trainerConfig.trainerArgs: ", f->o.cfg->file);
    int64_t max_rows = ty->cap.max_nodes[ty->output_type][0];
    if (is_lp(f)) {
        max_rows = f->typed.lp_src == f->typed.lp_dst ? md : ms + md;
        f->typed.lp_out = cgnn_malloc((size_t)(max_rows + 1) * (size_t)out_dim * sizeof(float));
    }
    f->dout = cgnn_malloc((size_t)(max_rows + 1) * (size_t)out_dim * sizeof(float));
    typed_log(f, ls);
    return 0;
}

/* The featureless types' rows are their current embeddings; then the model. */
static const float *typed_forward(model_family *f, minibatch *mb, int training, uint64_t key) {
    minibatch_typed *ty = mb->typed;
    for (int k = 0; k < ty->num_node_types; k++)
        if (f->typed.table[k] >= 0)
            embedding_gather(&f->tables[f->typed.table[k]].e, ty->nodes[k], ty->num_nodes[k][ty->num_layers],
                             ty->features[k], ty->feat_dim[k], 0);
    const float *out = model_forward(&f->m, mb, training, key);
    const int s = f->typed.lp_src, d = f->typed.lp_dst;
    if (!is_lp(f) || s == d) return out;
    const int64_t D = f->m.cfg.out_dim, ns = ty->num_nodes[s][0], nd = ty->num_nodes[d][0];
    memcpy(f->typed.lp_out, model_typed_output(&f->m, s), (size_t)(ns * D) * sizeof(float));
    memcpy(f->typed.lp_out + ns * D, model_typed_output(&f->m, d), (size_t)(nd * D) * sizeof(float));
    return f->typed.lp_out;
}

/* model_backward of dout, split back per type for link prediction. */
static void typed_backward(model_family *f, const minibatch *mb) {
    if (!is_lp(f)) {
        model_backward(&f->m, mb, f->dout); /* starts each layer's all-reduce as soon as it is final */
        return;
    }
    const int s = f->typed.lp_src, d = f->typed.lp_dst;
    const float *douts[MINIBATCH_MAX_NODE_TYPES] = {0};
    douts[s] = f->dout;
    if (d != s) douts[d] = f->dout + mb->typed->num_nodes[s][0] * f->m.cfg.out_dim;
    model_typed_backward(&f->m, mb, douts);
}

/* Each featureless type's touched rows, sparse (the model's input gradient of the type). */
static int typed_step_tables(model_family *f, const minibatch *mb, const double *lr, double divisor, cgnn_err *err) {
    const minibatch_typed *ty = mb ? mb->typed : NULL;
    for (int k = 0; k < f->typed.mtypes->num_node_types; k++) {
        const int i = f->typed.table[k];
        if (i < 0) continue;
        if (embedding_sparse_step(&f->tables[i].e, f->o.d, ty ? ty->nodes[k] : NULL,
                                  ty ? model_typed_input_grad(&f->m, k) : NULL, ty ? ty->num_nodes[k][ty->num_layers] : 0,
                                  f->typed.width[k], 0, lr[i], divisor, err) != 0)
            return -1;
    }
    return 0;
}

static void typed_fingerprint(const model_family *f, train_state_fingerprint *fp) {
    train_state_fingerprint_add_typed(fp, f->o.cfg, f->o.src->ds, f->typed.feat, f->typed.tsc.fanouts,
                                      f->typed.tsc.num_layers, f->num_tables > 0);
}

static void typed_free(model_family *f) {
    free(f->typed.mtypes);
    free(f->typed.lp_out);
}

const model_family_ops family_typed_ops = {
    .kind = MODEL_FAMILY_TYPED,
    .open = typed_open,
    .loader_config = typed_loader_config,
    .build = typed_build,
    .forward = typed_forward,
    .backward = typed_backward,
    .step_tables = typed_step_tables,
    .fingerprint = typed_fingerprint,
    .free = typed_free,
};
