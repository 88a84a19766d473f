/* infer_typed.h — layer-wise full-neighbourhood inference on a typed (heterogeneous) graph: the
 * embedding of every node of every node type with a trained HeteroSAGE, RGCN or HGT model (nn/hetero.c, nn/hgt.c;
 * `cgnn embed` on a typed dataset). The typed counterpart of nn/infer.h, with the same promises.
 *
 * Dimension legend: T node types, K edge types, N_t nodes of type t, N = Σ N_t (the homogenised id
 * space: row offset[t] + i is node i of type t); F_t = the width of type t's input rows; H = hidden
 * channels; O = output channels; L layers; C = chunk size.
 *
 * Stages, each over ALL nodes of every type, in chunks of C rows of one type:
 *   stage 0 (input):   h0_t = relu(x_t W_t^T + b_t)          x_t: features (row-normalised on
 *                                                           request) or the learnable table rows
 *   stage l+1 (conv l), for a node i of type d, from stage l's rows h:
 *     HeteroSAGE  y_i = Σ_{e=(s,r,d)} [ W_l^e · mean_{j∈N_e(i)} h_j + b^e + W_r^e · h_i ]
 *     RGCN        y_i = root^T h_i + bias + Σ_{e=(s,r,d)} W_e^T mean_{j∈N_e(i)} h_j
 *                 (W_e = Σ_b comp[e, b] V_b with bases, materialised once)
 *     HGT         GiGL's HGTConv (nn/hgt.c): kqv_lin per type; every source row's keys and values
 *                 through k_rel / v_rel per (head, edge type), computed once per stage by every
 *                 rank ((N_src_e, H) floats per edge type e, in memory even with activations in
 *                 files); one attention softmax per head over all in-edges of i of every edge type
 *                 (hgt_attention_forward), exact GELU, out_lin, sigmoid-gated skip
 *                 (no in-edges: σ·out_lin(0) + (1−σ)·h_i); no ReLU between convs; the shared `lin`
 *                 H -> O after the last conv
 *   N_e(i) = ALL of i's in-neighbours through edge type e (exact, no sampling; none: the mean is
 *   0), edge types in dataset order; then (HeteroSAGE, RGCN) ReLU for hidden layers, or the optional row L2
 *   normalisation after the last; never dropout — what model_forward computes on a typed batch
 *   sampled with fanout -1 on every edge type and hop.
 * Activations: one (N, H or O) store per stage (nn/infer.h: in memory, or DIR/layer_<stage>.f32),
 * two alive at a time. The aggregation reads the previous stage's rows in place through the
 * edge type's index (no block is built, nothing is gathered).
 *
 * Determinism: aggregations per destination in index order (ops_mean_agg_forward), dense products
 * row by row (ops_linear_rows_forward), so a node's rows do not depend on the chunk size, the
 * thread count or the number of ranks: the result is bitwise the same for all of them.
 *
 * Distributed (opt->dist with size W > 1): rank r computes the slice [N_t r/W, N_t (r+1)/W) of every
 * type in every stage; after each stage the slices are all-gathered per type (in memory) or written
 * into the shared file followed by a barrier (activations_dir). Setup failures are collective.
 */
#ifndef CGNN_INFER_TYPED_H
#define CGNN_INFER_TYPED_H

#include <stdint.h>

#include "graph/typed_graph.h"
#include "io/dataset.h"
#include "io/safetensors.h"
#include "nn/infer.h"
#include "nn/model.h"
#include "util/err.h"

/* The input rows of each node type: its features, or its learnable table. */
typedef struct infer_typed_input {
    const ds_feature *feat[MINIBATCH_MAX_NODE_TYPES]; /* (N_t, F_t) any dtype; NULL: table */
    const float *table[MINIBATCH_MAX_NODE_TYPES];     /* (N_t, F_t) when feat[t] is NULL; borrowed */
    int normalize_rows;                               /* feature_normalization: row (features only) */
} infer_typed_input;

/* Builds the typed model *m from a checkpoint written by `cgnn train` on the typed dataset ds:
 * the metadata (cgnn_model HeteroSAGE, RGCN or HGT, num_layers, hidden_channels, out_channels; HGT:
 * heads) and the
 * dataset's node and edge types define the architecture; each type's input width is its
 * lin_dict.<t>.weight's [H, F_t]; RGCN's num_bases is convs.0.comp's [K, B] when present.
 * Type t's input is its node feature (the one named "feat", else the first of its type, as the
 * trainer picks it; its width must be F_t) or, for a featureless type, the checkpoint's
 * embedding_dict.<t>.weight (N_t, F_t), borrowed from f into in->table[t]. Every model tensor is
 * copied after a shape check; any other tensor is an error. l2_normalize_output comes from the
 * caller (trainerArgs), dropout is 0. Returns 0, or -1 with *err (CGNN_ERR_INPUT naming f->path
 * and the key or field). The caller owns *m (model_free); f must outlive in->table. */
int infer_typed_model_from_checkpoint(model *m, infer_typed_input *in, const st_file *f, const dataset *ds,
                                      int l2_normalize_output, cgnn_err *err);

/* Computes the final-layer output of every node of every type of g with the typed model m (from
 * infer_typed_model_from_checkpoint, or any HeteroSAGE / RGCN / HGT model over g's types). Checks the
 * inputs against the model (input widths, row counts; CGNN_ERR_INPUT naming the type).
 * Collective under opt->dist. Returns 0 with *res filled: res->num_nodes = N, res->dim = O,
 * res->embeddings (N, O) in homogenised order (type t's rows from g->offset[t]), complete on every
 * rank (the caller owns it: infer_result_free); or -1 with *err. */
int infer_typed_run(infer_result *res, const model *m, const typed_graph *g, const infer_typed_input *in,
                    const infer_options *opt, cgnn_err *err);

#endif
