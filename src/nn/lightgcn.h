/* lightgcn.h — LightGCN's weight-free propagation over the whole graph (PyG's LightGCN /
 * LGConv), forward and backward, on the full (N, D) embedding table.
 *
 * Dimension legend: N = nodes, E = edges (directed, as the dataset lists them), D = embedding
 * dim, L = propagation layers.
 *
 * PyG (torch_geometric/nn/models/lightgcn.py, nn/conv/lg_conv.py, gcn_norm with
 * add_self_loops=False, flow source_to_target):
 *     deg(i) = number of edges j -> i (in-degree; duplicates and self-edges count as listed)
 *     w_e    = deg(j)^-1/2 · deg(i)^-1/2 for edge e = j -> i  (0 where a degree is 0)
 *     x^(0)  = embedding.weight,   x^(l+1)_i = Σ_{e = j -> i} w_e · x^(l)_j
 *     out    = Σ_{l=0..L} alpha_l · x^(l)      (alpha default 1 / (L + 1))
 * On the dataset's graph (both directions of every interaction, yelp2018's training graph)
 * this is D^-1/2 A D^-1/2 over the undirected graph, no self-loops.
 *
 * Backward: d x = Σ_l alpha_l (A^T)^l d out, by Horner's rule
 *     t = alpha_L · g;  for l = L-1 .. 0:  t = A^T t + alpha_l · g;   d x = t
 * (L products with A^T, whose rows are the out-edges of each node with the same weights).
 *
 * Kernels: one CSR row per output row, OpenMP over rows (static chunks), each row summed in
 * the fixed edge order of its row: the bits never depend on the thread count. The plain serial
 * lightgcn_forward_ref / lightgcn_backward_ref run the same arithmetic in the same order: the
 * fast kernels must match them bitwise (tests/test_lightgcn.c).
 *
 * Memory: the adjacency holds E ids + E weights for A and again for A^T (int32 ids when N fits,
 * as the CSC), plus 2 (N+1) offsets. Forward/backward need two (N, D) work buffers (owned by
 * the lightgcn_adj, allocated on first use for a given D).
 */
#ifndef CGNN_LIGHTGCN_H
#define CGNN_LIGHTGCN_H

#include <stdint.h>

#include "graph/csc.h"
#include "util/err.h"

#define LIGHTGCN_MAX_LAYERS 8

typedef struct lightgcn_adj {
    int64_t num_nodes, num_edges;   /* N, E */
    int64_t *fwd_ptr;               /* (N + 1) row i = in-edges of i (A's row i) — owned */
    int32_t *fwd_idx;               /* (E) source j of each in-edge, CSC order — owned */
    float *fwd_w;                   /* (E) w_e — owned */
    int64_t *bwd_ptr;               /* (N + 1) row j = out-edges of j (A^T's row j) — owned */
    int32_t *bwd_idx;               /* (E) destination i of each out-edge, in CSC order — owned */
    float *bwd_w;                   /* (E) the same w_e — owned */
    float *work[2];                 /* (N, D) scratch — owned */
    int64_t work_dim;               /* D the work buffers are sized for */
    unsigned char *mark;            /* (N) row-set marks — owned (restricted kernels) */
    int64_t *list[LIGHTGCN_MAX_LAYERS + 1]; /* (N) each layer's row list, ascending — owned */
    int64_t list_len[LIGHTGCN_MAX_LAYERS + 1];
    int dense_level; /* the last rows call's first level computed whole (its list not built), -1: none */
} lightgcn_adj;

/* Builds the normalised adjacency of g (a whole graph: first_node 0, num_src_nodes ==
 * num_nodes, N < 2^31) with gcn_norm's degrees (in-degree). Returns 0, or -1 with *err.
 * Caller owns *a (lightgcn_adj_free). */
int lightgcn_adj_build(lightgcn_adj *a, const csc_graph *g, cgnn_err *err);
void lightgcn_adj_free(lightgcn_adj *a); /* NULL-safe, safe on a zeroed struct */

/* alpha[0..L] from a list (n = L + 1 values) or PyG's default 1 / (L + 1) (n = 0). A single
 * value (n = 1) is PyG's scalar alpha: every layer gets it. Returns 0 or -1 (bad count). */
int lightgcn_alpha(float *alpha, int L, const double *given, int n);

/* out (N, D) = Σ_l alpha_l x^(l) for x = x0 (N, D); alpha (L + 1). Uses a->work. */
void lightgcn_forward(lightgcn_adj *a, const float *x0, int64_t D, int L, const float *alpha, float *out);
/* dx (N, D) = d(loss)/d(x0) for dout = d(loss)/d(out) (N, D). Uses a->work. */
void lightgcn_backward(lightgcn_adj *a, const float *dout, int64_t D, int L, const float *alpha, float *dx);

/* ---- restricted to a batch's rows (the receptive field) ---------------------------------
 * A training step reads out only on the batch's rows S and its d out is zero elsewhere. Row i
 * of x^(l) is needed only when i is within L - l hops of S, so each product is computed on those
 * rows alone: R_L = S, R_l = R_{l+1} ∪ in-neighbours(R_{l+1}) (forward); the backward's Horner
 * products likewise grow from S by out-neighbours. Every computed row runs the arithmetic of the
 * full kernels, in the same order, so the rows the caller reads are bitwise those of
 * lightgcn_forward / lightgcn_backward (tests/test_lightgcn.c). The row sets cost one pass over
 * the edges of each frontier (byte marks, serial) and three (N, D) memsets per step. When a
 * level of the field reaches 90% of the nodes, the building stops there and that level and the
 * deeper ones (supersets) are computed on every row: the same bits, no lists to build. */

/* out rows S (rows[0..n), distinct, in [0, N)) = those of lightgcn_forward; other rows of out
 * are scratch (partial sums). *rows_done (optional) gets the rows computed over all layers. */
void lightgcn_forward_rows(lightgcn_adj *a, const float *x0, int64_t D, int L, const float *alpha, float *out,
                           const int64_t *rows, int64_t n, int64_t *rows_done);
/* dx (N, D) = lightgcn_backward(dout) (bitwise, every row) for dout zero outside rows S. */
void lightgcn_backward_rows(lightgcn_adj *a, const float *dout, int64_t D, int L, const float *alpha, float *dx,
                            const int64_t *rows, int64_t n, int64_t *rows_done);

/* Plain serial references (the same arithmetic in the same order). work: 2 (N, D) floats. */
void lightgcn_forward_ref(const lightgcn_adj *a, const float *x0, int64_t D, int L, const float *alpha, float *out,
                          float *work);
void lightgcn_backward_ref(const lightgcn_adj *a, const float *dout, int64_t D, int L, const float *alpha, float *dx,
                           float *work);

#endif
