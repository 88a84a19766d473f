/* model_family.c — the model family interface (family/model_family.h): the choice, the calls
 * through the family's table, and what every family shares: the learnable tables' best copies,
 * checkpoint, training state and load, and the per-layer gradient hooks. */
#include "family/model_family.h"

#include <stdlib.h>
#include <string.h>

#include "family/family_impl.h"
#include "optim/optim.h"
#include "train/outputs.h"
#include "util/log.h"

model_family_kind model_family_choose(const trainer_args *a, int typed_dataset) {
    if (typed_dataset) return MODEL_FAMILY_TYPED;
    return a->model == MODEL_LIGHTGCN ? MODEL_FAMILY_LIGHTGCN : MODEL_FAMILY_BLOCK;
}

const char *model_family_name(model_family_kind kind) {
    static const char *const NAMES[MODEL_FAMILY_KIND_COUNT] = {"block", "typed", "lightgcn"};
    CGNN_CHECK(kind >= 0 && kind < MODEL_FAMILY_KIND_COUNT);
    return NAMES[kind];
}

void model_family_init(model_family *f, model_family_kind kind, const model_family_options *o) {
    static const model_family_ops *const OPS[MODEL_FAMILY_KIND_COUNT] = {&family_block_ops, &family_typed_ops,
                                                                         &family_lightgcn_ops};
    memset(f, 0, sizeof *f);
    CGNN_CHECK(kind >= 0 && kind < MODEL_FAMILY_KIND_COUNT && OPS[kind]->kind == kind);
    f->kind = kind;
    f->ops = OPS[kind];
    f->o = *o;
    for (int k = 0; k < MINIBATCH_MAX_NODE_TYPES; k++) f->typed.table[k] = -1;
}

int model_family_is_root(const model_family *f) { return f->o.d->rank == 0; }

embedding_optim model_family_table_optim(const trainer_args *a) {
    return !strcmp(a->embedding_optim, "Adagrad") ? EMB_OPTIM_ADAGRAD
           : !strcmp(a->embedding_optim, "SGD")   ? EMB_OPTIM_SGD
                                                  : EMB_OPTIM_SPARSE_ADAM;
}

int model_family_table_setup(model_family *f, int i, const char *prefix, int via_source, cgnn_err *err) {
    model_family_table *t = &f->tables[i];
    const trainer_args *a = f->o.a;
    if (embedding_scale_init(&t->e, a->node_embedding_init_std, err) != 0 ||
        embedding_set_weight_decay(&t->e, a->embedding_weight_decay, err) != 0)
        return err_prefix(err, "%s: trainerConfig.trainerArgs: ", f->o.cfg->file);
    t->best = cgnn_malloc((size_t)(t->e.num_rows * t->e.dim + 1) * sizeof(float));
    static const char *const SUFFIX[4] = {"weight", "m", "v", "best"};
    for (int j = 0; j < 4; j++) snprintf(t->key[j], sizeof t->key[j], "%s.%s", prefix, SUFFIX[j]);
    t->via_source = via_source;
    return 0;
}

int model_family_open(model_family *f, const ds_feature *feat, cgnn_err *err) {
    return f->ops->open(f, feat, err);
}

const ds_feature *model_family_feature(const model_family *f) { return f->block.feat; }

const ds_feature *const *model_family_type_features(const model_family *f) {
    return f->kind == MODEL_FAMILY_TYPED ? f->typed.feat : NULL;
}

void model_family_loader_config(const model_family *f, loader_config *lc) { f->ops->loader_config(f, lc); }

/* model_backward hook: start reducing layer l's gradients while lower layers run backward */
static void grads_ready(void *ctx, int layer) {
    model_family *f = ctx;
    dist_iallreduce_sum_f32(f->o.d, f->m.grads + f->layer_begin[layer],
                            (size_t)(f->layer_end[layer] - f->layer_begin[layer]));
}

int model_family_build(model_family *f, const model_family_loaders *ls, int64_t out_dim, cgnn_err *err) {
    if (f->ops->build(f, ls, out_dim, err) != 0) return -1;
    if (!f->best_params) f->best_params = cgnn_malloc((size_t)f->m.num_params * sizeof(float) + 1);
    for (int l = 0; l < f->o.a->num_layers; l++) model_layer_params(&f->m, l, &f->layer_begin[l], &f->layer_end[l]);
    if (f->o.d->size > 1) {
        f->m.on_grads_ready = grads_ready;
        f->m.on_grads_ready_ctx = f;
    }
    return 0;
}

void model_family_begin_eval(model_family *f) {
    if (f->ops->begin_eval) f->ops->begin_eval(f);
}

const float *model_family_forward(model_family *f, minibatch *mb, int training, uint64_t key) {
    return f->ops->forward(f, mb, training, key);
}

double model_family_regularize(model_family *f, const minibatch *mb) {
    return f->ops->regularize ? f->ops->regularize(f, mb) : 0.0;
}

void model_family_backward(model_family *f, const minibatch *mb) {
    if (mb) {
        f->ops->backward(f, mb);
        return;
    }
    for (int l = f->o.a->num_layers - 1; l >= 0; l--) grads_ready(f, l); /* Join: zeros, same collectives */
}

int model_family_step_tables(model_family *f, const minibatch *mb, int64_t step, double divisor, cgnn_err *err) {
    if (!f->ops->step_tables || f->num_tables == 0) return 0;
    double lr[MINIBATCH_MAX_NODE_TYPES];
    for (int i = 0; i < f->num_tables; i++) lr[i] = sched_lr(&f->o.a->sched, f->tables[i].e.lr, step);
    return f->ops->step_tables(f, mb, lr, divisor, err);
}

static size_t table_bytes(const model_family_table *t) {
    return (size_t)(t->e.num_rows * t->e.dim) * sizeof(float);
}

void model_family_keep_best(model_family *f) {
    memcpy(f->best_params, f->m.params, (size_t)f->m.num_params * sizeof(float));
    for (int i = 0; i < f->num_tables; i++) memcpy(f->tables[i].best, f->tables[i].e.weight, table_bytes(&f->tables[i]));
}

void model_family_restore_best(model_family *f) {
    memcpy(f->m.params, f->best_params, (size_t)f->m.num_params * sizeof(float));
    for (int i = 0; i < f->num_tables; i++) memcpy(f->tables[i].e.weight, f->tables[i].best, table_bytes(&f->tables[i]));
}

void model_family_tables_written(model_family *f) {
    for (int i = 0; i < f->num_tables; i++)
        if (f->tables[i].via_source) graph_source_table_written(f->o.src);
}

int model_family_save(model_family *f, int best, cgnn_err *err) {
    outputs_table tb[MINIBATCH_MAX_NODE_TYPES];
    float *full[MINIBATCH_MAX_NODE_TYPES] = {0};
    for (int i = 0; i < f->num_tables; i++) {
        const model_family_table *t = &f->tables[i];
        const float *rows = best ? t->best : t->e.weight;
        int64_t n = t->e.num_rows;
        if (t->via_source) { /* on parts: every shard's rows to rank 0, in original id order (collective) */
            full[i] = graph_source_table_to_root(f->o.src, rows, t->e.dim);
            n = graph_source_num_nodes(f->o.src);
        }
        tb[i] = (outputs_table){t->key[0], full[i] ? full[i] : rows, n, t->e.dim};
    }
    /* the input, recorded with the weights: the node feature (a whole homogeneous graph's by its
     * name; a typed graph's as the config names it, "" = each type's "feat" or first) and the
     * normalisation */
    const ds_feature *feat = dataset_is_typed(f->o.src->ds) ? NULL : graph_source_feature(f->o.src);
    const outputs_input in = {feat ? feat->name : f->o.a->node_feature, f->o.a->feature_normalization};
    int rc = 0;
    if (model_family_is_root(f))
        rc = outputs_save_model_input(f->o.cfg->trained_model_uri, f->o.cfg->task, &f->m,
                                      best ? f->best_params : f->m.params, tb, f->num_tables, &in, err);
    for (int i = 0; i < f->num_tables; i++) free(full[i]);
    return rc;
}

/* A table's rows from the checkpoint at uri: the whole table, or (the source holds them by
 * original id: graph_source_table_keys) each row the whole table's row of its key. */
static int load_table(model_family *f, model_family_table *t, const char *uri, cgnn_err *err) {
    const int64_t *keys = t->via_source ? graph_source_table_keys(f->o.src) : NULL;
    if (!keys) return outputs_load_table(uri, t->key[0], t->e.weight, t->e.num_rows, t->e.dim, err);
    const int64_t N = graph_source_num_nodes(f->o.src), D = t->e.dim;
    float *full = cgnn_malloc((size_t)(N * D) * sizeof(float) + 1);
    const int bad = outputs_load_table(uri, t->key[0], full, N, D, err) != 0;
    for (int64_t i = 0; !bad && i < t->e.num_rows; i++)
        memcpy(t->e.weight + i * D, full + keys[i] * D, (size_t)D * sizeof(float));
    free(full);
    return bad ? -1 : 0;
}

int model_family_load(model_family *f, const char *uri, cgnn_err *err) {
    if (outputs_load_model(uri, f->o.cfg->task, &f->m, err) != 0) return -1;
    for (int i = 0; i < f->num_tables; i++)
        if (load_table(f, &f->tables[i], uri, err) != 0) return -1;
    return 0;
}

int model_family_table_tensors(model_family *f, int with_best, train_state_tensor *out) {
    int n = 0;
    for (int i = 0; i < f->num_tables; i++) {
        model_family_table *t = &f->tables[i];
        const int64_t R = t->e.num_rows, D = t->e.dim;
        out[n++] = (train_state_tensor){t->key[0], t->e.weight, R, D, 0};
        if (t->e.m) out[n++] = (train_state_tensor){t->key[1], t->e.m, R, D, 1};
        if (t->e.v) out[n++] = (train_state_tensor){t->key[2], t->e.v, R, D, 1};
        if (with_best) out[n++] = (train_state_tensor){t->key[3], t->best, R, D, 0};
    }
    return n;
}

int64_t model_family_table_step(const model_family *f) {
    for (int i = 1; i < f->num_tables; i++) CGNN_CHECK(f->tables[i].e.step == f->tables[0].e.step);
    return f->num_tables ? f->tables[0].e.step : 0;
}

void model_family_set_table_step(model_family *f, int64_t step) {
    for (int i = 0; i < f->num_tables; i++) f->tables[i].e.step = step;
}

void model_family_fingerprint(const model_family *f, train_state_fingerprint *fp, const char *const *keys,
                              const char *const *vals, int n) {
    /* (a typed graph, or server-client mode's compute rank: no index here; the sizes from the
     * dataset or the partition) */
    train_state_fingerprint_init(fp, f->o.cfg, f->o.src->ds, f->o.task, f->block.feat,
                                 f->kind == MODEL_FAMILY_TYPED ? NULL : graph_source_shape(f->o.src), &f->m,
                                 f->o.d->size);
    for (int i = 0; i < n; i++) train_state_fingerprint_add(fp, keys[i], vals[i]);
    if (f->ops->fingerprint) f->ops->fingerprint(f, fp);
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

uint64_t model_family_hash(const model_family *f, uint64_t h) {
    h = fnv1a(h, f->m.params, (size_t)f->m.num_params * sizeof(float));
    for (int i = 0; i < f->num_tables; i++) /* (a sharded table differs per part by design) */
        if (!f->tables[i].via_source || !graph_source_table_sharded(f->o.src))
            h = fnv1a(h, f->tables[i].e.weight, table_bytes(&f->tables[i]));
    return h;
}

void model_family_infer_input(model_family *f, infer_input *in) {
    CGNN_CHECK(f->ops->infer_input);
    f->ops->infer_input(f, in);
}

void model_family_free(model_family *f) {
    if (!f || !f->ops) return;
    if (f->ops->free) f->ops->free(f);
    model_free(&f->m);
    for (int i = 0; i < f->num_tables; i++) {
        embedding_free(&f->tables[i].e);
        free(f->tables[i].best);
    }
    free(f->best_params);
    free(f->dout);
    f->ops = NULL;
}
