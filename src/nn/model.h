/* model.h — GNN models over sampled message-flow blocks: GraphSAGE, GCN, GAT.
 *
 * Dimension legend: N_src, N_dst = source / destination nodes of a block; E = its edges;
 * I, O = input / output channels of a layer; H = attention heads; C = channels per head;
 * S = seed (output) nodes of the batch.
 *
 * A model is PyG's BasicGNN shape: convs[0..L-1], ReLU + dropout between layers, no
 * activation after the last one, optional row-wise L2 normalisation of the output.
 * Layer l runs on block l of the minibatch (blocks[0] consumes the input features).
 * L = 0 is the identity on the seeds' input rows (then the learnable node embeddings: matrix
 * factorisation, scored by dot products): no parameters, out_dim = in_dim, the output is the
 * input rows (or their L2 normalisation), and the backward passes d(output) to d(input).
 *
 *   GraphSAGE (PyG SAGEConv, mean):  out_i = W_l · mean_{j∈N(i)} h_j + b_l + W_r · h_i
 *       keys convs.l.lin_l.weight [O, I], convs.l.lin_l.bias [O], convs.l.lin_r.weight [O, I]
 *   GCN (PyG GCNConv: self-loops, symmetric normalisation, on the sampled subgraph):
 *       out_i = Σ_{j∈N(i)∪{i}} (h_j W^T) / sqrt(deg(j) · deg(i)) + b
 *       deg(v) = 1 + v's sampled in-edges: in this block for its dst nodes, in the next outer
 *       block for nodes that are only sources here (none in the outermost block) — PyG's
 *       gcn_norm over a NeighborLoader subgraph; exact full-graph GCN with fanout -1 except
 *       at the outermost sources
 *       keys convs.l.lin.weight [O, I], convs.l.bias [O]
 *   GAT (PyG GATConv, LeakyReLU 0.2, self-loops, shared lin for src and dst):
 *       z = h W^T (H heads of C), e_ij = LeakyReLU(a_src·z_j + a_dst·z_i), α = softmax_j(e_ij)
 *       over N(i)∪{i}, out_i = Σ_j α_ij z_j; heads concatenated (hidden layers, C = hidden/H)
 *       or averaged (last layer, C = out) ; + bias
 *       keys convs.l.lin.weight [H*C, I], convs.l.att_src [1, H, C], convs.l.att_dst [1, H, C],
 *       convs.l.bias [H*C] (concat) or [C] (last layer)
 *
 * Memory: parameters and gradients are each one flat float buffer carved into named tensors
 * (one all-reduce, one optimiser loop, one checkpoint write). Activations live in scratch
 * sized once from the minibatch capacity; forward/backward allocate nothing.
 * Threads: dense parts on BLAS (cblas_sgemm), aggregations parallel over destination nodes
 * (backward scatters use the block's transpose: parallel over sources, no atomics), so
 * results are bitwise identical run to run for a fixed thread count.
 */
#ifndef CGNN_MODEL_H
#define CGNN_MODEL_H

#include <stdint.h>

#include "sample/minibatch.h"
#include "util/err.h"

typedef enum model_kind {
    MODEL_GRAPHSAGE,
    MODEL_GCN,
    MODEL_GAT,
    MODEL_HETERO_SAGE, /* typed graphs (nn/hetero.c, nn/hgt.c) from here to MODEL_HGT */
    MODEL_RGCN,
    MODEL_HGT,         /* (typed models up to here) */
    MODEL_LIGHTGCN,    /* homogeneous: the embedding table propagated over the whole graph
                          (nn/lightgcn.h); as a block model it is the identity (num_layers 0) */
    MODEL_KIND_COUNT
} model_kind;

/* 1 for the models of typed graphs (they run on typed batches, minibatch.h). */
static inline int model_kind_is_typed(model_kind kind) { return kind >= MODEL_HETERO_SAGE && kind <= MODEL_HGT; }

/* PyG / GiGL class name of kind ("GraphSAGE", "GCN", "GAT", "HeteroSAGE", "RGCN", "HGT"). */
const char *model_kind_name(model_kind kind);
/* Parses a PyG / GiGL class name or dotted path ("GraphSAGE", "torch_geometric.nn.GraphSAGE",
 * "SAGE", "GCN", "GAT", "HeteroSAGE", "RGCN", "HGT", "gigl.src.common.models.pyg.heterogeneous.HGT");
 * returns 0 or -1. */
int model_kind_parse(const char *name, model_kind *out);

/* ---- typed graphs (HeteroSAGE, RGCN: nn/hetero.c; HGT: nn/hgt.c) ----------------------------
 * Every typed model has GiGL HGT's input stage: per node type t a Linear projection of its
 * input rows (features, or a learnable embedding for a featureless type) to hidden_dim, then
 * ReLU:   h0_t = relu(x_t W_t^T + b_t)      keys lin_dict.<t>.weight [H, F_t], lin_dict.<t>.bias [H]
 * then num_layers convolutions (hidden_dim wide; the last one out_dim wide), ReLU + dropout
 * between them, optional L2 normalisation of the output, as the homogeneous models.
 *   HeteroSAGE (PyG HeteroConv({e: SAGEConv((-1, -1), O)}, aggr='sum'), the shape of
 *   to_hetero(GraphSAGE)): for dst type d,
 *       y_i = Σ_{e=(s,r,d)} [ W_l^e · mean_{j∈N_e(i)} h_j + b^e + W_r^e · h_i ]
 *       keys convs.<l>.convs.<s>__<r>__<d>.lin_l.weight [O, I], .lin_l.bias [O], .lin_r.weight [O, I]
 *       (a node type that is the dst of no edge type has no output: refused)
 *   RGCN (PyG RGCNConv, aggr mean, relation r = the dataset's edge type index):
 *       y_i = root^T h_i + bias + Σ_r W_r^T mean_{j∈N_r(i)} h_j
 *       keys convs.<l>.weight [R, I, O] (or [B, I, O] with num_bases B > 0, W_r = Σ_b comp[r, b] V_b,
 *       plus convs.<l>.comp [R, B]), convs.<l>.root [I, O], convs.<l>.bias [O]
 *   HGT (GiGL gigl.src.common.models.pyg.heterogeneous.HGT over its HGTConv; F = hidden_dim,
 *   H = num_heads, D = F / H; every conv F -> F, then one shared Linear F -> out_dim):
 *       per conv, for every node type t:  [k | q | v]_t = kqv_lin[t](h_t)            (F each)
 *       per edge type e = (s, r, d), head h:  k'_j = k_j,h · Wk[h*K + e],  v'_j = v_j,h · Wv[h*K + e]
 *       s_ij,h = (q_i,h · k'_j) · p_rel[e][h] / sqrt(D), softmax over ALL in-edges of i (every edge
 *       type into d, per head);  agg_i,h = Σ α_ij,h v'_j (0 without in-edges)
 *       y_t = σ(skip_t) · out_lin[t](gelu(agg_t)) + (1 - σ(skip_t)) · h_t   (every type keeps its
 *       rows, also a type with no incoming edge type: GiGL's change to PyG's HGTConv)
 *       output = lin(h after the last conv) (+ optional L2 normalisation); no activation between
 *       convs (HGTConv ends in its gated residual)
 *       keys convs.<l>.kqv_lin.lins.<t>.weight [3F, F], .bias [3F]; convs.<l>.out_lin.lins.<t>.weight
 *       [F, F], .bias [F]; convs.<l>.k_rel.weight, convs.<l>.v_rel.weight [H*K, D, D] (x·W layout);
 *       convs.<l>.skip.<t> [1]; convs.<l>.p_rel.<s>__<r>__<d> [1, H]; lin.weight [out, F], lin.bias
 *       (edge type index e = the dataset's graph.edges order, which GiGL's edge type list must follow)
 *       GiGL's HGT has no dropout; cgnn applies `dropout` (when > 0) to every conv's output.
 * Dropout masks are keyed by (node type, per-type id, layer). */
#define MODEL_TYPE_NAME_MAX 128
typedef struct model_types {
    int num_node_types, num_edge_types;                        /* T, K */
    char node_type[MINIBATCH_MAX_NODE_TYPES][MODEL_TYPE_NAME_MAX];
    char edge_type[MINIBATCH_MAX_EDGE_TYPES][3][MODEL_TYPE_NAME_MAX]; /* (src, relation, dst) */
    int etype_src[MINIBATCH_MAX_EDGE_TYPES], etype_dst[MINIBATCH_MAX_EDGE_TYPES];
    int64_t in_dim[MINIBATCH_MAX_NODE_TYPES];                  /* F_t: width of type t's input rows */
    int input_grad[MINIBATCH_MAX_NODE_TYPES];                  /* keep d(loss)/d(x_t) (learnable rows) */
    int output_type;                                           /* model_forward returns this type's rows */
    int num_bases;                                             /* RGCN: 0 = a weight per relation */
    minibatch_typed_capacity cap;                              /* the batches' sizes */
} model_types;

/* ty's edge types from a dataset's: each "src:relation:dst" name split into edge_type[e] and the
 * node types of its two ends (etype_src / etype_dst). ty->num_edge_types is set by the caller. */
struct dataset;
void model_types_set_edge_types(model_types *ty, const struct dataset *ds);

typedef struct model_config {
    model_kind kind;
    int num_layers;           /* L, one per minibatch block; 0: the identity (see above) */
    int64_t in_dim;           /* input feature channels */
    int64_t hidden_dim;       /* channels between layers */
    int64_t out_dim;          /* output channels (classes for node classification) */
    int num_heads;            /* GAT, HGT heads (hidden_dim % num_heads == 0) */
    float dropout;            /* feature dropout after each hidden ReLU (training only) */
    int l2_normalize_output;  /* L2-normalise each output row */
    const model_types *types; /* typed models: the graph's types (copied by model_init); else NULL */
    int prop_layers;          /* LightGCN: propagation layers (the block model has num_layers 0) */
    float alpha[MINIBATCH_MAX_LAYERS + 1]; /* LightGCN: alpha_0 .. alpha_prop_layers */
} model_config;

#define MODEL_MAX_TENSORS 512

typedef struct model_tensor {
    char name[3 * MODEL_TYPE_NAME_MAX + 64]; /* PyG state_dict key */
    int64_t offset;           /* into params / grads, in floats */
    int ndim;
    int64_t shape[3];
    int64_t numel;
} model_tensor;

typedef struct model_scratch model_scratch; /* activations; private to model.c */
typedef struct hetero_scratch hetero_scratch; /* typed models' activations; private to hetero.c */
typedef struct hgt_scratch hgt_scratch;       /* HGT's activations; private to hgt.c */

typedef struct model {
    model_config cfg;
    int num_tensors;
    model_tensor tensors[MODEL_MAX_TENSORS];
    int64_t num_params;
    float *params;            /* (num_params) owned */
    float *grads;             /* (num_params) owned */
    model_scratch *scratch;   /* owned */
    model_types *types;       /* typed models: owned copy of cfg.types; NULL otherwise */
    hetero_scratch *hscratch; /* HeteroSAGE, RGCN: owned */
    hgt_scratch *hgt;         /* HGT: owned */
    /* Optional hook: model_backward calls it right after layer l's parameter gradients are
     * final (l = L-1 down to 0), so data-parallel training can start reducing them while the
     * rest of the backward pass runs. */
    void (*on_grads_ready)(void *ctx, int layer);
    void *on_grads_ready_ctx;
} model;

/* Checks cfg (returns -1 with *err naming the bad value), lays out the tensors, initialises
 * the parameters as PyG does (Linear: U(±1/sqrt(I)) weights and biases; GCN/GAT lin and att:
 * Glorot uniform, bias 0) from `seed`, and sizes the scratch for batches up to *cap.
 * Caller owns *m (model_free). */
int model_init(model *m, const model_config *cfg, const minibatch_capacity *cap, uint64_t seed,
               cgnn_err *err);
void model_free(model *m); /* NULL-safe */

/* Forward pass over mb (mb->features are the input rows). training != 0 enables dropout with
 * masks drawn from dropout_key (counter-based: independent of threads).
 * Returns the output (S, out_dim), owned by the model, valid until the next forward. */
const float *model_forward(model *m, const minibatch *mb, int training, uint64_t dropout_key);

/* Backward pass of the last forward: dout is (S, out_dim); accumulates (+=) into m->grads. */
void model_backward(model *m, const minibatch *mb, const float *dout);

/* model_backward that also accumulates (+=) d(loss)/d(input features) into dinput
 * (mb->num_input_nodes, in_dim) when dinput is non-NULL (gradient checks, feature attribution).
 * model_backward is this with dinput NULL, and then skips the input-gradient work of layer 0. */
void model_backward_input(model *m, const minibatch *mb, const float *dout, float *dinput);

/* Typed models: the last forward's output rows of node type t (num_nodes[t][0], out_dim), or
 * NULL when t has none. */
const float *model_typed_output(const model *m, int t);
/* Typed models: backward of the last forward with dout[t] (num_nodes[t][0], out_dim) per node
 * type (NULL entries: no gradient); accumulates into m->grads, and into the model-owned input
 * gradients of the types with input_grad set (model_typed_input_grad), which it first zeroes. */
void model_typed_backward(model *m, const minibatch *mb, const float *const *dout);
/* d(loss)/d(x_t) (num_nodes[t][L], in_dim[t]) of the last model_typed_backward, or NULL. */
const float *model_typed_input_grad(const model *m, int t);

/* Zeroes m->grads. */
void model_zero_grad(model *m);

/* The parameters of layer l (tensors "convs.l.*") occupy [*begin, *end) of params/grads. */
void model_layer_params(const model *m, int l, int64_t *begin, int64_t *end);

/* Tensor by PyG key, or NULL. */
const model_tensor *model_find_tensor(const model *m, const char *name);

/* Softmax cross-entropy over the batch's items: item i has logits row rows[i] of logits
 * (S, C) and label labels[i] in [0, C). Returns the mean loss; writes dlogits (S, C) =
 * d(mean loss)/d(logits) (rows not referenced are zero); *correct = items whose argmax equals
 * the label (ties: lowest index). */
double model_softmax_ce(float *dlogits, const float *logits, const int32_t *rows, const int64_t *labels,
                        int64_t n_items, int64_t S, int64_t C, int64_t *correct);

/* ---- layer-wise inference (nn/infer.c) ----------------------------------------------------
 * Runs layer l alone on a one-hop block whose destination nodes come with ALL their
 * in-neighbours (PyG BasicGNN.inference): conv l, then ReLU for hidden layers, or the optional
 * L2 normalisation after the last; never dropout. Reads only m->params: the training scratch
 * is not touched, the model may be shared. Dense products use ops_linear_rows_forward, so a
 * node's output does not depend on the other nodes of the block (bitwise, any thread count).
 */

/* I, O: input and output row widths of layer l. */
void model_layer_dims(const model *m, int l, int64_t *in, int64_t *out);
/* Floats of the `work` buffer model_layer_forward_infer needs for blocks up to these sizes. */
int64_t model_layer_infer_work(const model *m, int l, int64_t max_src, int64_t max_dst, int64_t max_edges);
/* b: dst = local ids [0, N_dst), a prefix of the sources; h_src (N_src, I) the layer's input
 * rows of b's sources; src_norm (N_src): GCN only (NULL otherwise), deg(v)^-1/2 with deg(v) =
 * 1 + v's in-edges in the WHOLE graph other than a self-edge (ops_gcn_norm's degree, but from
 * the full graph also for nodes that are only sources here). Writes out (N_dst, O). */
void model_layer_forward_infer(const model *m, int l, const sampler_block *b, const float *h_src,
                               const float *src_norm, float *out, float *work);

#endif
