/* minibatch.h — one sampled mini-batch: message-flow blocks, input nodes, features, labels.
 *
 * Layout (DGL's MFG convention, PyG's node order):
 *   blocks[0]            consumes the input features (the outermost hop);
 *   blocks[num_layers-1] produces the outputs of the seed nodes.
 * Every block lists its destination nodes first: local ids [0, num_dst) are the dst nodes,
 * [num_dst, num_src) the new source nodes. Blocks chain as
 *   blocks[l].num_dst == blocks[l+1].num_src   (an outer block's dst set is the src set of
 *                                               the next inner block)
 * and all local ids index input_nodes (one prefix-ordered list shared by every block).
 * Edges are CSR dst -> src: the in-neighbours of dst i are indices[indptr[i] .. indptr[i+1]).
 *
 * A minibatch is allocated once at worst-case capacity (minibatch_alloc) and refilled for
 * every batch: no allocation in the training loop. Capacity pages never touched stay virtual.
 */
#ifndef CGNN_MINIBATCH_H
#define CGNN_MINIBATCH_H

#include <stdint.h>

#define MINIBATCH_MAX_LAYERS 8
#define MINIBATCH_MAX_NODE_TYPES 32  /* typed graphs: node types and edge types one batch carries */
#define MINIBATCH_MAX_EDGE_TYPES 64

typedef struct sampler_block {
    int64_t num_dst;   /* destination nodes: local ids [0, num_dst) */
    int64_t num_src;   /* source nodes: local ids [0, num_src), num_src >= num_dst */
    int64_t num_edges;
    int64_t *indptr;   /* (num_dst + 1) */
    int32_t *indices;  /* (num_edges) local source ids */
    /* the same edges transposed (CSR src -> dst), for backward passes that scatter to source
     * nodes: parallel over sources, deterministic, no atomics (minibatch_build_transpose) */
    int64_t *t_indptr; /* (num_src + 1) */
    int32_t *t_indices;/* (num_edges) local dst ids, ascending within each source */
    int32_t *t_eid;    /* (num_edges) position of the edge in indices[] */
} sampler_block;

typedef struct minibatch_capacity {
    int num_layers;
    int64_t max_items;                          /* batch size (seed items) */
    int64_t max_nodes[MINIBATCH_MAX_LAYERS + 1]; /* [h]: nodes after h hops; [0] = seeds */
    int64_t max_edges[MINIBATCH_MAX_LAYERS];     /* [h]: edges sampled in hop h */
    int64_t feat_dim;                           /* 0: no feature buffer */
} minibatch_capacity;

/* ---- typed (heterogeneous) batches ------------------------------------------------------
 * PyG HeteroData / DGL heterogeneous-block layout: nodes are kept per node type, each type's
 * list in its own local ids, and every hop holds one sub-block per edge type.
 *   nodes[t][0 .. num_nodes[t][h])  the type-t nodes reached after h hops (h = 0: the seeds of
 *                                   type t); per-type ids (0 .. the type's count), seeds first,
 *                                   each hop appending in order of first meeting
 *   blocks[l * K + e]               layer l (block 0 consumes the input rows, as above), edge
 *                                   type e = (s, rel, d): its dst are local ids [0, num_dst) of
 *                                   type d, num_dst = num_nodes[d][L-1-l]; its src are local ids
 *                                   [0, num_src) of type s, num_src = num_nodes[s][L-l]; edges
 *                                   CSR dst -> src with transposes, as in sampler_block
 *   features[t]                     (num_nodes[t][L], feat_dim[t]) input rows of type t
 * Type t's rows of layer l's input are its first num_nodes[t][L-l] nodes, its rows of layer l's
 * output the first num_nodes[t][L-1-l]: the prefix property of the homogeneous layout, per type.
 * The homogeneous fields of the enclosing minibatch keep their meaning where they make sense:
 * items, labels, num_items; item_local[i] is the seed's local id within its own type. */
typedef struct minibatch_typed_capacity {
    int num_node_types, num_edge_types;                            /* T, K */
    int64_t max_nodes[MINIBATCH_MAX_NODE_TYPES][MINIBATCH_MAX_LAYERS + 1]; /* [t][h] */
    int64_t max_edges[MINIBATCH_MAX_LAYERS][MINIBATCH_MAX_EDGE_TYPES];    /* [h][e]: hop h */
    int64_t feat_dim[MINIBATCH_MAX_NODE_TYPES];                   /* 0: no feature buffer */
} minibatch_typed_capacity;

typedef struct minibatch_typed {
    int num_node_types, num_edge_types, num_layers;
    int etype_src[MINIBATCH_MAX_EDGE_TYPES], etype_dst[MINIBATCH_MAX_EDGE_TYPES];
    int64_t num_nodes[MINIBATCH_MAX_NODE_TYPES][MINIBATCH_MAX_LAYERS + 1];
    int64_t *nodes[MINIBATCH_MAX_NODE_TYPES];    /* owned */
    sampler_block *blocks;                       /* (L * K) owned */
    int64_t feat_dim[MINIBATCH_MAX_NODE_TYPES];
    float *features[MINIBATCH_MAX_NODE_TYPES];   /* owned, NULL where feat_dim is 0 */
    minibatch_typed_capacity cap;
} minibatch_typed;

typedef struct minibatch {
    int epoch;
    int64_t batch_index;     /* within the epoch (this rank's numbering) */
    int num_layers;
    sampler_block blocks[MINIBATCH_MAX_LAYERS];
    int64_t num_items;       /* seed items of this batch (labelled nodes, or LP pairs) */
    int64_t *items;          /* (num_items) indices into the split (for labels etc.) */
    int32_t *item_local;     /* local output row of each seed: (num_items) for node items; for
                                link-prediction pairs (2 * num_items + num_listed + num_negatives):
                                [anchors | positives | listed negatives | random negatives] */
    int64_t num_negatives;   /* LP: random negative nodes of this batch (0 otherwise) */
    int64_t num_listed;      /* LP with labelled pairs: the dataset's negatives (label 0) of the
                                batch's groups, each group once (0 otherwise) */
    int64_t *listed_off, *listed_len; /* (num_items) pair i's own listed negatives are
                                listed-segment rows [listed_off[i], listed_off[i] + listed_len[i]) */
    int64_t *labels;         /* (num_items) or unused */
    int64_t num_seeds;       /* distinct seed nodes = blocks[L-1].num_dst */
    int64_t num_input_nodes; /* = blocks[0].num_src */
    int64_t *input_nodes;    /* (num_input_nodes) global ids, seeds first */
    const int64_t *key_nodes; /* (num_input_nodes) the ids keying per-node randomness (dropout), or
                                 NULL = input_nodes; a partitioned graph's trainer sets the original ids */
    int64_t feat_dim;
    float *features;         /* (num_input_nodes, feat_dim) */
    int64_t num_sampled_edges; /* total over blocks */
    double sample_seconds, gather_seconds; /* time the producer spent on each stage */
    int failed;              /* the producer could not build it (loader_failed says why) */
    minibatch_typed *typed;  /* a typed graph's batch (see above), owned; NULL: homogeneous */
    minibatch_capacity cap;
} minibatch;

/* Allocates every buffer of *mb at capacity *cap. Returns 0, or -1 with *err. The caller owns
 * *mb (minibatch_free). */
#include "util/err.h"
int minibatch_alloc(minibatch *mb, const minibatch_capacity *cap, cgnn_err *err);
/* minibatch_alloc for a typed graph: cap gives num_layers and max_items (the homogeneous node
 * and edge buffers are not allocated), tcap the per-type sizes; etype_src / etype_dst (K) are
 * the edge types' node types. */
int minibatch_alloc_typed(minibatch *mb, const minibatch_capacity *cap, const minibatch_typed_capacity *tcap,
                          const int *etype_src, const int *etype_dst, cgnn_err *err);
/* NULL-safe. */
void minibatch_free(minibatch *mb);

/* Fills t_indptr / t_indices / t_eid of every block from indptr / indices (counting sort,
 * O(edges + nodes); stable, so dst ids ascend within each source). */
void minibatch_build_transpose(minibatch *mb);
/* The same for one block (typed batches: every sub-block). */
void minibatch_block_transpose(sampler_block *b);

#endif
