/* family_block.c — the block family (family/model_family.h): a homogeneous GNN over the sampled
 * blocks, or (num_layers 0) matrix factorisation. Its input rows are [node features | learnable
 * embedding rows]; the table is the graph source's (graph_source_embedding_init: the whole table,
 * or a shard on parts), read into each batch by graph_source_gather_embedding and stepped by
 * graph_source_embedding_step. The LightGCN family (family_lightgcn.c) builds on the functions
 * here. */
#include <stdlib.h>
#include <string.h>

#include "family/family_impl.h"
#include "util/log.h"

int family_block_open(model_family *f, const ds_feature *feat, cgnn_err *err) {
    const trainer_args *a = f->o.a;
    f->block.feat = feat;
    f->block.feat_dim = feat ? feat->dim : 0;
    if (a->node_embedding_dim <= 0) return 0;
    const double lr = a->embedding_lr > 0 ? a->embedding_lr : a->optim.lr;
    /* the rows the source reads (on parts: each drawn as the whole table's row of its original id) */
    if (graph_source_embedding_init(f->o.src, &f->tables[0].e, a->node_embedding_dim, a->seed ^ 0x656d626564ULL,
                                    model_family_table_optim(a), lr, a->optim.beta1, a->optim.beta2, a->optim.eps,
                                    err) != 0)
        return -1;
    f->num_tables = 1;
    f->block.have_table = 1;
    return model_family_table_setup(f, 0, "embedding", 1, err);
}

void family_block_loader_config(const model_family *f, loader_config *lc) {
    lc->feature = f->block.feat;
    lc->extra_cols = f->block.have_table ? f->tables[0].e.dim : 0;
}

void family_block_model_config(const model_family *f, int64_t out_dim, model_config *mc) {
    const trainer_args *a = f->o.a;
    memset(mc, 0, sizeof *mc);
    mc->kind = a->model;
    mc->num_layers = a->num_layers;
    mc->in_dim = f->block.feat_dim + a->node_embedding_dim; /* [features | learnable embedding] */
    mc->hidden_dim = a->hidden_dim;
    mc->out_dim = out_dim;
    mc->num_heads = a->num_heads;
    mc->dropout = (float)a->dropout;
    mc->l2_normalize_output = a->l2_normalize_output;
}

int family_block_build_model(model_family *f, const model_family_loaders *ls, model_config *mc,
                             minibatch_capacity *cap, cgnn_err *err) {
    const trainer_args *a = f->o.a;
    sampler_config sc;
    memset(&sc, 0, sizeof sc);
    sc.num_layers = a->num_layers;
    for (int h = 0; h < a->num_layers; h++) sc.fanouts[h] = a->fanouts[h];
    sc.replace = a->replace;
    int64_t max_seeds = a->batch_size; /* LP seeds: anchors + positives + listed + random negatives */
    for (int i = 0; i < 3; i++)
        if (ls->l[i] && loader_max_seeds(ls->l[i]) > max_seeds) max_seeds = loader_max_seeds(ls->l[i]);
    if (graph_source_batch_capacity(f->o.src, &sc, max_seeds, mc->in_dim, cap, err) != 0) return -1;
    if (model_init(&f->m, mc, cap, a->seed, err) != 0) {
        /* the dataset chose the output width, and it is the widest: the dataset is the cause */
        const ds_task *task = f->o.task;
        if (a->out_channels <= 0 && f->o.cfg->task != TASK_LINK_PREDICTION && task->num_classes > 0 &&
            mc->out_dim >= mc->hidden_dim && mc->out_dim >= mc->in_dim)
            return err_prefix(err, "%s/metadata.yaml: task '%s' num_classes %lld: ", f->o.src->ds->dir, task->name,
                              (long long)task->num_classes);
        return err_prefix(err, "%s: trainerConfig.trainerArgs: ", f->o.cfg->file);
    }
    if (f->block.have_table)
        f->block.dinput = cgnn_malloc((size_t)(cap->max_nodes[a->num_layers] + 1) * (size_t)mc->in_dim * sizeof(float));
    f->dout = cgnn_malloc((size_t)(cap->max_nodes[0] + 1) * (size_t)mc->out_dim * sizeof(float));
    return 0;
}

void family_block_log(const model_family *f, const model_family_loaders *ls) {
    const char *producers;
    const int n_producers = graph_source_producers(f->o.src, ls->workers, &producers);
    if (!model_family_is_root(f)) return;
    const int lp = f->o.cfg->task == TASK_LINK_PREDICTION;
    const ds_split *sp = f->o.gtask->splits;
    const dist_ctx *d = f->o.d;
    log_info("%s %s on %s: %lld nodes, %lld edges, %lld input channels; %lld/%lld/%lld train/val/test %s; "
             "%lld parameters%s; %d process%s x (%d compute threads, %d %s)",
             lp ? "link prediction:" : "node classification:", model_kind_name(f->m.cfg.kind), f->o.src->ds->name,
             (long long)graph_source_num_nodes(f->o.src), (long long)graph_source_num_edges(f->o.src),
             (long long)f->m.cfg.in_dim, (long long)sp[DS_SPLIT_TRAIN].num_items,
             (long long)sp[DS_SPLIT_VALID].num_items, (long long)sp[DS_SPLIT_TEST].num_items, lp ? "pairs" : "nodes",
             (long long)f->m.num_params, f->block.have_table ? " + a sparse embedding table" : "", d->size,
             d->size == 1 ? "" : "es", f->o.threads, n_producers, producers);
}

void family_block_infer_input(model_family *f, infer_input *in) {
    const int t = f->block.have_table;
    *in = (infer_input){f->block.feat, strcmp(f->o.a->feature_normalization, "row") == 0,
                        t ? f->tables[0].e.weight : NULL, t ? f->tables[0].e.num_rows : 0, t ? f->tables[0].e.dim : 0};
}

static int block_build(model_family *f, const model_family_loaders *ls, int64_t out_dim, cgnn_err *err) {
    model_config mc;
    minibatch_capacity cap;
    family_block_model_config(f, out_dim, &mc);
    if (family_block_build_model(f, ls, &mc, &cap, err) != 0) return -1;
    family_block_log(f, ls);
    return 0;
}

/* The batch's table rows into its input (columns [F, F + E); on parts the rows of other parts
 * from their owners), and on parts its original ids as dropout keys; then the model. */
static const float *block_forward(model_family *f, minibatch *mb, int training, uint64_t key) {
    graph_source_prepare_batch(f->o.src, mb);
    cgnn_err e = {0};
    if (f->block.have_table && graph_source_gather_embedding(f->o.src, &f->tables[0].e, mb, f->block.feat_dim, &e) != 0)
        dist_fail_job(f->o.d, &e);
    return model_forward(&f->m, mb, training, key);
}

static int block_reg(const model_family *f, const minibatch *mb) {
    return mb && f->block.have_table && f->o.a->node_embedding_reg > 0;
}

/* LightGCN's regularisation on the batch's embedding rows: its gradient starts d(input). */
static double block_regularize(model_family *f, const minibatch *mb) {
    if (!block_reg(f, mb)) return 0;
    memset(f->block.dinput, 0, (size_t)(mb->num_input_nodes * mb->feat_dim) * sizeof(float));
    const int64_t P = mb->num_items, slots = 2 * P + mb->num_listed + mb->num_negatives;
    if (P <= 0) return 0;
    return embedding_batch_l2(f->block.dinput, mb->features, mb->item_local, slots, mb->feat_dim, f->block.feat_dim,
                              f->tables[0].e.dim, f->o.a->node_embedding_reg / (double)P);
}

/* With a table, the input gradient's embedding columns are the table rows' gradients. */
static void block_backward(model_family *f, const minibatch *mb) {
    if (!f->block.have_table) {
        model_backward(&f->m, mb, f->dout); /* starts each layer's all-reduce as soon as it is final */
        return;
    }
    if (!block_reg(f, mb)) memset(f->block.dinput, 0, (size_t)(mb->num_input_nodes * mb->feat_dim) * sizeof(float));
    model_backward_input(&f->m, mb, f->dout, f->block.dinput);
}

/* Sparse: only the rows this step touched (on any rank) move; on parts each to its part. */
static int block_step_tables(model_family *f, const minibatch *mb, const double *lr, double divisor, cgnn_err *err) {
    const int64_t *ids = mb ? mb->input_nodes : NULL, n = mb ? mb->num_input_nodes : 0;
    const int64_t stride = mb ? mb->feat_dim : 0;
    return graph_source_embedding_step(f->o.src, &f->tables[0].e, ids, f->block.dinput, n, stride, f->block.feat_dim,
                                       lr[0], divisor, err);
}

static void block_free(model_family *f) { free(f->block.dinput); }

const model_family_ops family_block_ops = {
    .kind = MODEL_FAMILY_BLOCK,
    .open = family_block_open,
    .loader_config = family_block_loader_config,
    .build = block_build,
    .forward = block_forward,
    .regularize = block_regularize,
    .backward = block_backward,
    .step_tables = block_step_tables,
    .infer_input = family_block_infer_input,
    .free = block_free,
};
