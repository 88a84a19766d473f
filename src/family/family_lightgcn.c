/* family_lightgcn.c — the LightGCN family (family/model_family.h): the block family with 0 layers
 * (the trainer gives it arguments with num_layers 0: the batch's own nodes, no sampled blocks)
 * whose input rows are read from the table propagated over the whole normalised graph
 * (nn/lightgcn.h) instead of the raw table rows. A training step propagates the batch's rows
 * only (bitwise those of the full propagation); an evaluation propagates the whole table once.
 * The backward runs the propagation's transpose from the batch's rows, so every row of the table
 * may step. One process over the whole homogeneous graph (the trainer refuses the rest). */
#include <stdlib.h>
#include <string.h>

#include "family/family_impl.h"

/* The propagation's layers and alpha as configured (the block model sees 0 layers). */
static int lgc_alpha(const model_family *f, model_config *mc, cgnn_err *err) {
    const trainer_args *ca = &f->o.cfg->args;
    mc->prop_layers = ca->num_layers;
    if (lightgcn_alpha(mc->alpha, ca->num_layers, ca->lightgcn_alpha, ca->num_lightgcn_alpha) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: trainerConfig.trainerArgs.lightgcn_alpha: %d values for %d layers",
                       f->o.cfg->file, ca->num_lightgcn_alpha, ca->num_layers);
    return 0;
}

/* The table (the block family's), the normalised graph and the (N, E) buffers. */
static int lgc_open(model_family *f, const ds_feature *feat, cgnn_err *err) {
    model_config mc;
    if (lgc_alpha(f, &mc, err) != 0) return -1;
    if (family_block_open(f, feat, err) != 0) return -1;
    CGNN_CHECK(f->block.have_table); /* (LightGCN needs node_embedding_dim: the config checks it) */
    if (lightgcn_adj_build(&f->lgc.adj, f->o.src->g, err) != 0) return err_prefix(err, "%s: ", f->o.src->ds->dir);
    const embedding_table *e = &f->tables[0].e;
    const size_t ND = (size_t)(e->num_rows * e->dim + 1);
    f->lgc.out = cgnn_malloc(ND * sizeof(float));
    f->lgc.grad = cgnn_malloc(ND * sizeof(float));
    f->lgc.dx = cgnn_malloc(ND * sizeof(float));
    f->lgc.ids = cgnn_malloc((size_t)(e->num_rows + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < e->num_rows; i++) f->lgc.ids[i] = i;
    f->lgc.stale = 1;
    return 0;
}

static int lgc_build(model_family *f, const model_family_loaders *ls, int64_t out_dim, cgnn_err *err) {
    model_config mc;
    minibatch_capacity cap;
    family_block_model_config(f, out_dim, &mc);
    if (lgc_alpha(f, &mc, err) != 0) return -1;
    if (family_block_build_model(f, ls, &mc, &cap, err) != 0) return -1;
    const size_t rows = (size_t)(cap.max_nodes[0] + 1) * (size_t)f->tables[0].e.dim;
    f->lgc.raw = cgnn_malloc(rows * sizeof(float));
    f->lgc.dreg = cgnn_malloc(rows * sizeof(float));
    family_block_log(f, ls);
    return 0;
}

static void lgc_propagate_all(model_family *f) {
    if (!f->lgc.stale) return;
    const embedding_table *e = &f->tables[0].e;
    lightgcn_forward(&f->lgc.adj, e->weight, e->dim, f->m.cfg.prop_layers, f->m.cfg.alpha, f->lgc.out);
    f->lgc.stale = 0;
}

static void lgc_begin_eval(model_family *f) { f->lgc.stale = 1; }

/* The batch's propagated rows into its input columns [F, F + E): training, the batch's rows of
 * the propagation (the table moves after the step); evaluation, the whole table's once. */
static const float *lgc_forward(model_family *f, minibatch *mb, int training, uint64_t key) {
    graph_source_prepare_batch(f->o.src, mb);
    const embedding_table *e = &f->tables[0].e;
    const int64_t D = e->dim;
    if (training) { /* bitwise the full propagation's rows */
        lightgcn_forward_rows(&f->lgc.adj, e->weight, D, f->m.cfg.prop_layers, f->m.cfg.alpha, f->lgc.out,
                              mb->input_nodes, mb->num_input_nodes, NULL);
        f->lgc.stale = 1;
    } else {
        lgc_propagate_all(f);
    }
    const int64_t n = mb->num_input_nodes, stride = mb->feat_dim, col = f->block.feat_dim;
    float *feat = mb->features;
    const int64_t *ids = mb->input_nodes;
    const float *src = f->lgc.out;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) memcpy(feat + i * stride + col, src + ids[i] * D, (size_t)D * sizeof(float));
    return model_forward(&f->m, mb, training, key);
}

/* LightGCN's reg on the raw table rows (x^(0)) of the batch's nodes. */
static double lgc_regularize(model_family *f, const minibatch *mb) {
    if (f->o.a->node_embedding_reg <= 0) return 0;
    const embedding_table *e = &f->tables[0].e;
    const int64_t n = mb->num_input_nodes, D = e->dim;
    embedding_gather(e, mb->input_nodes, n, f->lgc.raw, D, 0);
    memset(f->lgc.dreg, 0, (size_t)(n * D) * sizeof(float));
    const int64_t P = mb->num_items, slots = 2 * P + mb->num_listed + mb->num_negatives;
    if (P <= 0) return 0;
    return embedding_batch_l2(f->lgc.dreg, f->lgc.raw, mb->item_local, slots, D, 0, D,
                              f->o.a->node_embedding_reg / (double)P);
}

/* d(out) of every node (zero off the batch), back through the propagation, plus the reg's. */
static void lgc_backward(model_family *f, const minibatch *mb) {
    memset(f->block.dinput, 0, (size_t)(mb->num_input_nodes * mb->feat_dim) * sizeof(float));
    model_backward_input(&f->m, mb, f->dout, f->block.dinput);
    const embedding_table *e = &f->tables[0].e;
    const int64_t N = e->num_rows, D = e->dim, n = mb->num_input_nodes, stride = mb->feat_dim;
    memset(f->lgc.grad, 0, (size_t)(N * D) * sizeof(float));
    for (int64_t i = 0; i < n; i++) { /* input nodes are distinct; += all the same */
        float *g = f->lgc.grad + mb->input_nodes[i] * D;
        const float *src = f->block.dinput + i * stride + f->block.feat_dim;
        for (int64_t k = 0; k < D; k++) g[k] += src[k];
    }
    lightgcn_backward_rows(&f->lgc.adj, f->lgc.grad, D, f->m.cfg.prop_layers, f->m.cfg.alpha, f->lgc.dx,
                           mb->input_nodes, n, NULL); /* d out is zero off the batch's rows */
    if (f->o.a->node_embedding_reg > 0)
        for (int64_t i = 0; i < n; i++) {
            float *g = f->lgc.dx + mb->input_nodes[i] * D;
            const float *src = f->lgc.dreg + i * D;
            for (int64_t k = 0; k < D; k++) g[k] += src[k];
        }
}

/* Every row has a gradient (the propagation reaches the whole graph). */
static int lgc_step_tables(model_family *f, const minibatch *mb, const double *lr, double divisor, cgnn_err *err) {
    embedding_table *e = &f->tables[0].e;
    return embedding_sparse_step(e, f->o.d, mb ? f->lgc.ids : NULL, mb ? f->lgc.dx : NULL, mb ? e->num_rows : 0,
                                 e->dim, 0, lr[0], divisor, err);
}

/* The 0-layer model reads the propagated table, as in its steps. */
static void lgc_infer_input(model_family *f, infer_input *in) {
    lgc_propagate_all(f);
    family_block_infer_input(f, in);
    in->emb = f->lgc.out;
}

static void lgc_free(model_family *f) {
    lightgcn_adj_free(&f->lgc.adj);
    free(f->lgc.out), free(f->lgc.grad), free(f->lgc.dx), free(f->lgc.raw), free(f->lgc.dreg), free(f->lgc.ids);
    free(f->block.dinput);
}

const model_family_ops family_lightgcn_ops = {
    .kind = MODEL_FAMILY_LIGHTGCN,
    .open = lgc_open,
    .loader_config = family_block_loader_config,
    .build = lgc_build,
    .begin_eval = lgc_begin_eval,
    .forward = lgc_forward,
    .regularize = lgc_regularize,
    .backward = lgc_backward,
    .step_tables = lgc_step_tables,
    .infer_input = lgc_infer_input,
    .free = lgc_free,
};
