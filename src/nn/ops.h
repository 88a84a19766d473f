/* ops.h — the layer kernels of the GNN models (model.c): dense linear maps, the three
 * neighbourhood aggregations (SAGE mean, GCN normalised sum, GAT attention), ReLU, GELU,
 * dropout, row L2 normalisation. (HGT's typed attention lives in nn/hgt.c.)
 *
 * Dimension legend: N = rows; I, O = input / output channels; D = channels of an aggregated
 * feature; N_src, N_dst, E = source nodes, destination nodes and edges of a block
 * (sample/minibatch.h: dst nodes are the local ids [0, N_dst), a prefix of the sources;
 * CSR dst -> src in indptr/indices, the transpose src -> dst in t_indptr/t_indices/t_eid);
 * H = attention heads, C = channels per head.
 *
 * Conventions (llm.c): outputs first, then inputs, then dimensions; forward functions
 * overwrite their outputs, backward functions accumulate (+=) into their gradient outputs
 * (zeroing is the caller's explicit step). Every fast kernel has a plain single-threaded
 * `_ref` twin with the same contract; tests/test_nn_grad.c holds them together.
 *
 * Parallelism and determinism: forward aggregations are parallel over destination nodes;
 * backward scatters to source nodes walk the block's transpose, parallel over sources. Every
 * output element is produced by one thread in a fixed order, so results are bitwise identical
 * for any OpenMP thread count. Reductions over all rows (bias and attention-vector gradients)
 * run serially in row order. Dense products go through cblas_sgemm.
 *
 * Self-loops: GCN and GAT aggregate over N(i) ∪ {i} with exactly one self-loop per
 * destination node; a sampled edge i -> i already in the block (a graph with self-loops) is
 * that same self-loop and is not counted twice (PyG add_remaining_self_loops /
 * remove_self_loops + add_self_loops). SAGE's mean treats such an edge as an ordinary
 * neighbour, as PyG's SAGEConv does.
 */
#ifndef CGNN_OPS_H
#define CGNN_OPS_H

#include <stdint.h>

#include "sample/minibatch.h"

/* ---- linear: out = inp · weight^T + bias ---------------------------------------------- */

/* out (N, O), inp (N, I), weight (O, I), bias (O) or NULL. accumulate != 0 adds the product
 * (and bias) to out instead of overwriting it. */
void ops_linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                        int64_t N, int64_t I, int64_t O, int accumulate);
void ops_linear_forward_ref(float *out, const float *inp, const float *weight, const float *bias,
                            int64_t N, int64_t I, int64_t O, int accumulate);
/* dinp (N, I) += dout · weight; dweight (O, I) += dout^T · inp; dbias (O) += Σ_rows dout.
 * Any of dinp, dweight, dbias may be NULL (not wanted). dout (N, O). */
void ops_linear_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                         const float *inp, const float *weight, int64_t N, int64_t I, int64_t O);
void ops_linear_backward_ref(float *dinp, float *dweight, float *dbias, const float *dout,
                             const float *inp, const float *weight, int64_t N, int64_t I, int64_t O);

/* ---- GEMM accounting (benchmarks) --------------------------------------------------------
 * With a record registered, every cblas_sgemm of ops_linear_forward / ops_linear_backward adds
 * its wall time and its 2·M·N·K FLOPs, and, while calls[] has room, logs its shape. Off by
 * default; off costs one branch per GEMM. Not thread-safe: register from the thread that runs
 * the model (the loader's threads never call these kernels). */

/* One cblas_sgemm (row-major): C (M, N) = op(A) (M, K) · op(B) (K, N) + beta · C, with the
 * leading dimensions of contiguous operands (lda = trans_a ? M : K, ldb = trans_b ? K : N,
 * ldc = N). */
typedef struct ops_gemm_call {
    int trans_a, trans_b;     /* 0 = CblasNoTrans, 1 = CblasTrans */
    int64_t M, N, K;
    float beta;
    double seconds;
} ops_gemm_call;

typedef struct ops_gemm_stats {
    double seconds;           /* wall time inside cblas_sgemm, all calls */
    double flops;             /* Σ 2·M·N·K, all calls */
    int64_t num_calls;
    ops_gemm_call *calls;     /* (max_calls) caller-owned log of the first calls, or NULL */
    int64_t max_calls, num_logged;
} ops_gemm_stats;

/* Registers s (NULL: stop accounting). The caller keeps s alive while registered and may
 * reset its counters between calls. */
void ops_gemm_stats_register(ops_gemm_stats *s);

/* C (M, N) = op(A) (M, K) · op(B) (K, N) + beta · C through cblas_sgemm (row-major, contiguous
 * operands with the leading dimensions above, alpha 1), counted by the registered stats like the
 * linear kernels' own GEMMs: the models' other products (RGCN's x·W layout) go through it.
 * M or N = 0: nothing. */
void ops_gemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const float *A, const float *B, float beta,
              float *C);
/* ops_gemm with explicit leading dimensions (strided sub-matrices: HGT's per-head products),
 * counted by the registered stats likewise. M or N = 0: nothing. */
void ops_gemm_ld(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
/* One row-major cblas_sgemm, C (M, N) = alpha op(A) op(B) + beta C with explicit leading
 * dimensions, that adds its wall time and 2·M·N·K FLOPs to *s (and logs its shape while
 * s->calls has room); s NULL: a plain cblas_sgemm. For modules that keep their own accounting
 * (the link-prediction losses, nn/lp_loss.h); ops' own GEMMs use the registered record. */
void ops_sgemm_counted(ops_gemm_stats *s, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/* ---- SAGE mean aggregation: out_i = mean_{j∈N(i)} inp_j (0 for no in-edges) --------------- */

/* out (N_dst, D), inp (N_src, D). */
void ops_mean_agg_forward(float *out, const float *inp, const sampler_block *b, int64_t D);
void ops_mean_agg_forward_ref(float *out, const float *inp, const sampler_block *b, int64_t D);
/* dinp (N_src, D) += ∂/∂inp of Σ dout·out; dout (N_dst, D). The fast version needs the
 * transpose. */
void ops_mean_agg_backward(float *dinp, const float *dout, const sampler_block *b, int64_t D);
void ops_mean_agg_backward_ref(float *dinp, const float *dout, const sampler_block *b, int64_t D);

/* ---- GCN normalised aggregation (symmetric normalisation with self-loops, PyG gcn_norm
 * semantics on the sampled subgraph) -------------------------------------------------------
 *   out_i = dst_norm_i · ( Σ_{j∈N(i), j≠i} src_norm_j · inp_j + src_norm_i · inp_i )
 *   norm_v = deg(v)^-1/2 with deg(v) = 1 + the sampled in-edges of v (a sampled self-edge
 *   counts once, as the self-loop): for a dst node of block b its in-edges in b; for a node
 *   that is only a source of b, its in-edges in the next outer block `outer` (b's sources are
 *   outer's destinations), or none when b is the outermost block (outer == NULL).
 *   With fanout -1 this is full-graph GCN normalisation except at the outermost sources. */

/* src_norm (N_src), dst_norm (N_dst); outer = the block before b, or NULL. */
void ops_gcn_norm(float *src_norm, float *dst_norm, const sampler_block *b, const sampler_block *outer);
void ops_gcn_norm_ref(float *src_norm, float *dst_norm, const sampler_block *b, const sampler_block *outer);
/* out (N_dst, D), inp (N_src, D). */
void ops_gcn_agg_forward(float *out, const float *inp, const float *src_norm, const float *dst_norm,
                         const sampler_block *b, int64_t D);
void ops_gcn_agg_forward_ref(float *out, const float *inp, const float *src_norm,
                             const float *dst_norm, const sampler_block *b, int64_t D);
/* dinp (N_src, D) += ∂/∂inp of Σ dout·out; dout (N_dst, D). */
void ops_gcn_agg_backward(float *dinp, const float *dout, const float *src_norm, const float *dst_norm,
                          const sampler_block *b, int64_t D);
void ops_gcn_agg_backward_ref(float *dinp, const float *dout, const float *src_norm,
                              const float *dst_norm, const sampler_block *b, int64_t D);

/* ---- GAT attention (PyG GATConv after its shared lin; LeakyReLU 0.2, self-loops) ---------
 *   z (N_src, H, C) = the projected source rows (dst i is source row i);
 *   a_src_j,h = Σ_c z_j,h,c att_src_h,c;   a_dst_i,h = Σ_c z_i,h,c att_dst_h,c
 *   e_ij,h = LeakyReLU_0.2(a_src_j,h + a_dst_i,h);  α_ij,h = softmax over j ∈ N(i) ∪ {i}
 *   concat: out_i,(h,c) = Σ_j α_ij,h z_j,h,c + bias_(h,c)        out (N_dst, H*C)
 *   mean:   out_i,c = (1/H) Σ_h Σ_j α_ij,h z_j,h,c + bias_c      out (N_dst, C)
 * alpha (E + N_dst, H) keeps the attention weights: rows [0, E) the block's edges (0 for an
 * edge i -> i, which the self-loop replaces), row E + i the self-loop of dst i.
 * a_src (N_src, H), a_dst (N_dst, H) keep the node scores. */

/* att_src, att_dst (H, C); bias (H*C) if concat else (C). */
void ops_gat_forward(float *out, float *alpha, float *a_src, float *a_dst, const float *z,
                     const float *att_src, const float *att_dst, const float *bias,
                     const sampler_block *b, int64_t H, int64_t C, int concat);
void ops_gat_forward_ref(float *out, float *alpha, float *a_src, float *a_dst, const float *z,
                         const float *att_src, const float *att_dst, const float *bias,
                         const sampler_block *b, int64_t H, int64_t C, int concat);
/* Floats of the work buffer ops_gat_backward needs (the _ref needs no more). */
int64_t ops_gat_backward_work(int64_t N_src, int64_t N_dst, int64_t E, int64_t H);
/* Gradients of Σ dout·out: dz (N_src, H, C) += ∂/∂z; datt_src, datt_dst (H, C) += ∂/∂att;
 * dbias (as bias) += Σ_rows dout. dout is shaped as out; z, alpha, a_src, a_dst as the forward
 * read / left them; work has ops_gat_backward_work(...) floats (overwritten). The fast version
 * needs the transpose. */
void ops_gat_backward(float *dz, float *datt_src, float *datt_dst, float *dbias, float *work,
                      const float *dout, const float *z, const float *alpha, const float *a_src,
                      const float *a_dst, const float *att_src, const float *att_dst,
                      const sampler_block *b, int64_t H, int64_t C, int concat);
void ops_gat_backward_ref(float *dz, float *datt_src, float *datt_dst, float *dbias, float *work,
                          const float *dout, const float *z, const float *alpha, const float *a_src,
                          const float *a_dst, const float *att_src, const float *att_dst,
                          const sampler_block *b, int64_t H, int64_t C, int concat);

/* ---- elementwise ---------------------------------------------------------------------- */

/* out (n) = max(inp, 0); out may alias inp. */
void ops_relu_forward(float *out, const float *inp, int64_t n);
void ops_relu_forward_ref(float *out, const float *inp, int64_t n);
/* dinp (n) += dout · [inp > 0]; inp is the forward input. */
void ops_relu_backward(float *dinp, const float *dout, const float *inp, int64_t n);
void ops_relu_backward_ref(float *dinp, const float *dout, const float *inp, int64_t n);

/* GELU, exact (erf) form, torch.nn.functional.gelu's default (HGTConv):
 * out (n) = x · Φ(x) = 0.5 x (1 + erf(x / sqrt 2)); out may alias inp. */
void ops_gelu_forward(float *out, const float *inp, int64_t n);
void ops_gelu_forward_ref(float *out, const float *inp, int64_t n);
/* dinp (n) += dout · (Φ(x) + x φ(x)), x = inp (the forward input). */
void ops_gelu_backward(float *dinp, const float *dout, const float *inp, int64_t n);
void ops_gelu_backward_ref(float *dinp, const float *dout, const float *inp, int64_t n);

/* Whether dropout keeps element idx of layer `layer` under key (probability 1 - p): a
 * counter-based hash of (key, layer, idx), so the mask never depends on threads or order. */
int ops_dropout_keep(uint64_t key, int layer, int64_t idx, float p);
/* out (n) = inp · keep / (1 - p) (inverted dropout), 0 <= p < 1; out may alias inp.
 * With row_ids, the matrix is (n / cols, cols) and row r holds node row_ids[r]: element (r, c)
 * is kept according to element id row_ids[r]·cols + c, so a node's mask depends on the node,
 * not on its position in the batch (data-parallel ranks draw what one process would).
 * Without row_ids (NULL), element k has id k. */
void ops_dropout_forward(float *out, const float *inp, int64_t n, const int64_t *row_ids, int64_t cols, float p,
                         uint64_t key, int layer);
void ops_dropout_forward_ref(float *out, const float *inp, int64_t n, const int64_t *row_ids, int64_t cols, float p,
                             uint64_t key, int layer);
/* dinp (n) += dout · keep / (1 - p), the same mask as the forward. */
void ops_dropout_backward(float *dinp, const float *dout, int64_t n, const int64_t *row_ids, int64_t cols, float p,
                          uint64_t key, int layer);
void ops_dropout_backward_ref(float *dinp, const float *dout, int64_t n, const int64_t *row_ids, int64_t cols,
                              float p, uint64_t key, int layer);

/* Row L2 normalisation (PyG F.normalize, eps 1e-12): out_r = inp_r / max(||inp_r||_2, eps).
 * out, inp (N, D); out may alias inp. */
#define OPS_L2NORM_EPS 1e-12
void ops_l2norm_forward(float *out, const float *inp, int64_t N, int64_t D);
void ops_l2norm_forward_ref(float *out, const float *inp, int64_t N, int64_t D);
/* dinp (N, D) += ∂/∂inp of Σ dout·out; inp is the forward input. */
void ops_l2norm_backward(float *dinp, const float *dout, const float *inp, int64_t N, int64_t D);
void ops_l2norm_backward_ref(float *dinp, const float *dout, const float *inp, int64_t N, int64_t D);

/* ---- row-wise linear (inference): out = inp · weight^T + bias, row by row ------------------
 * The same contract and arithmetic as ops_linear_forward_ref: out_n,o = bias_o + Σ_i
 * inp_n,i · weight_o,i summed in ascending i, one multiply and one add per term (no fused
 * multiply-add: the build is ISO C, -ffp-contract=off), then added to out when accumulate.
 * Each output row is therefore a function of its input row alone: bitwise the same for any N,
 * any row position, any thread count. cblas_sgemm is not (OpenBLAS picks its kernels and
 * summation order by shape and thread count: measured on 0.3.21, a row computed in a 1-row
 * call differs in the last bits from the same row in a 4096-row call), and layer-wise
 * inference must not depend on how nodes are split into chunks and ranks.
 * Fast version: rows split over OpenMP threads in blocks of 64; vectorised over outputs (AVX
 * when the CPU has it, else 4-wide vectors) with the weight transposed into `work`. */

/* Floats of the work buffer ops_linear_rows_forward needs for I inputs and O outputs. */
int64_t ops_linear_rows_work(int64_t I, int64_t O);
/* out (N, O), inp (N, I), weight (O, I), bias (O) or NULL; work has ops_linear_rows_work(I, O)
 * floats (overwritten). out must not overlap inp. */
void ops_linear_rows_forward(float *out, const float *inp, const float *weight, const float *bias, int64_t N,
                             int64_t I, int64_t O, int accumulate, float *work);
void ops_linear_rows_forward_ref(float *out, const float *inp, const float *weight, const float *bias, int64_t N,
                                 int64_t I, int64_t O, int accumulate);

#endif
