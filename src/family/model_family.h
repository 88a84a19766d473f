/* model_family.h — what model family a job trains: one interface over the three ways cgnn turns
 * a batch into output rows, chosen once at start-up (model_family_choose), one implementation per
 * family:
 *
 *   block    (family_block.c)    a homogeneous GNN over the sampled blocks (GraphSAGE, GCN, GAT;
 *                                num_layers 0: matrix factorisation, the identity on the seeds'
 *                                rows). Input rows: [node features | learnable embedding rows]; the
 *                                table is the graph source's (whole on one graph, a shard on parts:
 *                                source/graph_source.h reads and steps its rows).
 *   typed    (family_typed.c)    a typed model (HeteroSAGE, RGCN, HGT) over typed blocks, sampled
 *                                per edge type; each featureless node type a learnable table,
 *                                replicated on every rank. Typed link prediction stacks the
 *                                anchors' type's rows, then the candidates' type's.
 *   lightgcn (family_lightgcn.c) LightGCN: the block family with 0 layers whose rows are the table
 *                                propagated over the whole normalised graph (nn/lightgcn.h); the
 *                                backward runs the propagation's transpose, so every row steps.
 *
 * One training step, as the loop (train/loop.c) calls it, the same for every family:
 *   out = model_family_forward(f, mb, 1, key)    the batch's input rows (the tables' current
 *                                                rows), then the model
 *   loss = head(out, f->dout) + model_family_regularize(f, mb)
 *   model_family_backward(f, mb)                 d(out) = f->dout → m.grads (each layer's
 *                                                all-reduce started when final) and the tables'
 *                                                row gradients
 *   optim_step(m.params, m.grads)                the loop's dense optimiser
 *   model_family_step_tables(f, mb, ...)         sparse steps of the touched table rows
 *
 * What the family owns: the model (m: the dense parameters, one flat buffer), the learnable tables
 * (model_family_table: the table, its copy at the best validation, its checkpoint and state keys),
 * the best parameters, the output gradient buffer (dout) and the buffers of its forward and
 * backward. The loop handles the tables generically (best copies, checkpoints, training state,
 * load) through model_family_table; only forward, backward and the table steps differ per family.
 *
 * Life cycle (every rank, in this order; "collective" as in graph_source.h):
 *   model_family_init            borrow the job's pieces; nothing allocated
 *   model_family_open            the inputs and tables (before the loaders: they gather the
 *                                family's inputs, model_family_loader_config)
 *   model_family_build           the model sized for every loader's batches, its buffers, the
 *                                per-layer gradient hooks; logs the job's summary line (rank 0)
 *   training                     forward / regularize / backward / step_tables, keep_best,
 *                                begin_eval before each evaluation
 *   model_family_save            collective (the sharded table is gathered to rank 0)
 *   model_family_free
 *
 * Adding a family: its value below, its state in the struct, a family_X.c defining family_X_ops
 * (family/family_impl.h) and model_family_choose's choice.
 */
#ifndef CGNN_MODEL_FAMILY_H
#define CGNN_MODEL_FAMILY_H

#include <stdint.h>

#include "dist/dist.h"
#include "io/dataset.h"
#include "nn/embedding.h"
#include "nn/infer.h"
#include "nn/lightgcn.h"
#include "nn/model.h"
#include "sample/loader.h"
#include "sample/minibatch.h"
#include "sample/typed_sampler.h"
#include "source/graph_source.h"
#include "train/config.h"
#include "train/train_state.h"
#include "util/err.h"

typedef enum model_family_kind {
    MODEL_FAMILY_BLOCK,    /* homogeneous block GNNs and matrix factorisation */
    MODEL_FAMILY_TYPED,    /* typed graphs: HeteroSAGE, RGCN, HGT */
    MODEL_FAMILY_LIGHTGCN, /* LightGCN over the whole graph */
    MODEL_FAMILY_KIND_COUNT
} model_family_kind;

/* The family of a job: typed for a typed dataset, LightGCN for gnn_model_class_path LightGCN,
 * else block. */
model_family_kind model_family_choose(const trainer_args *a, int typed_dataset);
const char *model_family_name(model_family_kind kind); /* "block", "typed", "lightgcn" */

#define MODEL_FAMILY_KEY_MAX (DATASET_NAME_MAX + 32)

/* A learnable embedding table of the family, as the loop sees it. */
typedef struct model_family_table {
    embedding_table e;
    float *best;              /* (rows, dim): the table at the best validation (owned) */
    /* "<prefix>.weight" in the checkpoint and the state; "<prefix>.m", ".v", ".best" in the state
     * (prefix "embedding", or "embedding_dict.<type>" for a featureless node type) */
    char key[4][MODEL_FAMILY_KEY_MAX];
    int via_source;           /* its rows are the graph source's (graph_source_embedding_init):
                                 a shard on parts, gathered to rank 0 for a checkpoint, loaded by
                                 original id; else the whole table on every rank */
} model_family_table;

/* What the family borrows from the job (must outlive it). */
typedef struct model_family_options {
    const task_config *cfg;   /* the run's config: errors name cfg->file */
    const trainer_args *a;    /* its arguments (LightGCN: the copy with num_layers 0) */
    const ds_task *task;      /* the task trained (typed: its node type or edge type) */
    const ds_task *gtask;     /* its whole splits (the summary line's counts) */
    graph_source *src;        /* where the graph lives: the tables' rows on parts, the index */
    const dist_ctx *d;
    int threads;              /* compute threads (the summary line) */
} model_family_options;

typedef struct model_family {
    model_family_kind kind;
    const struct model_family_ops *ops;
    model_family_options o;   /* borrowed */
    model m;                  /* the dense model (owned; m.params, m.grads: one flat buffer each) */
    float *best_params;       /* (num_params): the parameters at the best validation (owned) */
    float *dout;              /* (max output rows, out_dim): d(loss)/d(output), the head writes it */
    int num_tables;
    model_family_table tables[MINIBATCH_MAX_NODE_TYPES];
    int64_t layer_begin[MINIBATCH_MAX_LAYERS], layer_end[MINIBATCH_MAX_LAYERS]; /* grads per layer */
    /* block and lightgcn: the input rows [feat | table 0] */
    struct {
        const ds_feature *feat;  /* node features, or NULL */
        int64_t feat_dim;        /* F: their columns (0 without) */
        int have_table;          /* tables[0] is the learnable embedding (node_embedding_dim > 0) */
        float *dinput;           /* (max input nodes, F + E): d(loss)/d(input) (with a table) */
    } block;
    /* lightgcn: the propagation (the block model is the identity on the batch's rows, read from
     * out instead of the raw table rows) */
    struct {
        lightgcn_adj adj;        /* the normalised graph (owned) */
        int stale;               /* out is not the propagation of the current table */
        float *out;              /* (N, E): the final (alpha-combined) embeddings of every node */
        float *grad;             /* (N, E): d(loss)/d(out) */
        float *dx;               /* (N, E): d(loss)/d(table) */
        float *raw, *dreg;       /* (max input nodes, E): the batch's raw rows, their reg gradient */
        int64_t *ids;            /* (N): 0 .. N-1, every row steps */
    } lgc;
    /* typed: per node type k, its input rows (features or tables[table[k]]) */
    struct {
        typed_sampler_config tsc;                       /* per edge type fanouts */
        const ds_feature *feat[MINIBATCH_MAX_NODE_TYPES]; /* NULL: featureless */
        int64_t width[MINIBATCH_MAX_NODE_TYPES];        /* its input rows' width */
        int table[MINIBATCH_MAX_NODE_TYPES];            /* its table's index, -1: none */
        model_types *mtypes;                            /* (owned) */
        int lp_src, lp_dst;     /* link prediction: the supervision edge type's node types */
        float *lp_out;          /* (max seeds, D): their output rows stacked, as the head reads them */
    } typed;
} model_family;

/* Borrows o; chooses the implementation of kind. Nothing is allocated. */
void model_family_init(model_family *f, model_family_kind kind, const model_family_options *o);

/* The inputs and tables, before the loaders. feat: the block families' node features (NULL:
 * none; the trainer chose them); typed: NULL (each type's from the source). Typed: the typed
 * graph must be open (graph_source_open_typed). Returns 0 or -1 with *err (CGNN_ERR_INPUT naming
 * the config field). */
int model_family_open(model_family *f, const ds_feature *feat, cgnn_err *err);

/* The inputs graph_source_serve publishes: the homogeneous features, and each type's. */
const ds_feature *model_family_feature(const model_family *f);
const ds_feature *const *model_family_type_features(const model_family *f); /* NULL: homogeneous */

/* A loader's family fields: the input rows it gathers (features, extra columns for the table,
 * per-type features and widths) and, typed, the typed sampler and the seed / pair types. */
void model_family_loader_config(const model_family *f, loader_config *lc);

/* What model_family_build sizes for: every loader of the job (NULL entries skipped). */
typedef struct model_family_loaders {
    const loader *l[3];       /* train, validation, test */
    int64_t max_items;        /* the most items (LP: pairs) of any batch */
    int workers;              /* sampler threads (the summary line) */
} model_family_loaders;

/* The model (out_dim outputs) sized for every loader's batches, dout and the family's buffers;
 * under mpirun each layer's gradients are all-reduced as soon as they are final. Logs the job's
 * summary line (rank 0). Returns 0 or -1 with *err. */
int model_family_build(model_family *f, const model_family_loaders *ls, int64_t out_dim, cgnn_err *err);

/* Before an evaluation: the tables do not move until the next training step (LightGCN
 * propagates once for the whole evaluation). */
void model_family_begin_eval(model_family *f);

/* The model's output for mb, as the head reads it: the batch's table rows are written into its
 * input first (by the consumer, so every batch sees the tables as the last step left them).
 * training: dropout keyed by key. The pointer is valid until the next forward. */
const float *model_family_forward(model_family *f, minibatch *mb, int training, uint64_t key);

/* After the head: node_embedding_reg's loss on the batch's table rows (0 without), whose
 * gradient starts the tables' row gradients. */
double model_family_regularize(model_family *f, const minibatch *mb);

/* Backward of the last training forward from f->dout: m.grads, and the tables' row gradients.
 * mb NULL: this rank has no batch (Join): each layer's all-reduce is started on zero gradients. */
void model_family_backward(model_family *f, const minibatch *mb);

/* The sparse steps of the tables' touched rows (every rank: collective under mpirun; mb NULL:
 * none touched here), at the schedule's rate of `step`; divisor: the ranks that had a batch. */
int model_family_step_tables(model_family *f, const minibatch *mb, int64_t step, double divisor, cgnn_err *err);

/* The parameters and tables into their best copies, and back. */
void model_family_keep_best(model_family *f);
void model_family_restore_best(model_family *f);
/* After the caller rewrote the tables outside a step (the best weights restored): the source's
 * tables are written on every rank before any is read (graph_source_table_written). Collective. */
void model_family_tables_written(model_family *f);

/* Writes the checkpoint (cfg's trainedModelUri): the parameters and the tables, current or
 * (best) the best copies. Collective; rank 0 writes. Returns 0, or -1 with *err on rank 0. */
int model_family_save(model_family *f, int best, cgnn_err *err);

/* shouldSkipTraining: the checkpoint at uri into the parameters and tables. */
int model_family_load(model_family *f, const char *uri, cgnn_err *err);

/* The training state's tensors of the tables (weight, optimiser moments, best copy when
 * with_best), views of the family's buffers. Returns the count. */
int model_family_table_tensors(model_family *f, int with_best, train_state_tensor *out);
/* The tables' common step counter (0 without tables), and setting it (resume). */
int64_t model_family_table_step(const model_family *f);
void model_family_set_table_step(model_family *f, int64_t step);

/* This job's fingerprint for the training state: train_state_fingerprint_init, then the source's
 * fields (keys / vals, n), then the family's own (typed: its types, fanouts, tables). */
void model_family_fingerprint(const model_family *f, train_state_fingerprint *fp, const char *const *keys,
                              const char *const *vals, int n);

/* A hash of the parameters and the replicated tables (not a shard), continuing h (FNV-1a). */
uint64_t model_family_hash(const model_family *f, uint64_t h);

/* Full-ranking inference's input (nn/infer.h): the features and the rows the model reads
 * (LightGCN: the propagated table). Block families only. */
void model_family_infer_input(model_family *f, infer_input *in);

void model_family_free(model_family *f); /* NULL-safe, after a failed open or build too */

#endif
