/* hgt.h — GiGL's HGT on typed batches (model.h, "typed graphs"), and its attention kernels.
 * Private to src/nn and its tests: callers use model_init / model_forward / model_typed_backward,
 * which dispatch here for MODEL_HGT (through nn/hetero.c).
 *
 * Dimension legend: F = hidden channels, H = heads, D = F / H channels per head, K = edge types,
 * N_dst = destination rows of the node type being aggregated into, N_src / E = source rows and
 * edges of one edge type's sub-block (sample/minibatch.h: CSR dst -> src, transposes for the
 * scatters).
 */
#ifndef CGNN_HGT_H
#define CGNN_HGT_H

#include "nn/model.h"

/* ---- the model -------------------------------------------------------------------------- */

/* Lays out HGT's tensors (state_dict order), initialises them as PyG does and sizes the scratch
 * from m->types->cap. m->cfg and m->types are already set and checked (hetero_init). Returns 0,
 * or -1 with *err (out of memory); hgt_free undoes a partial init. */
int hgt_init(model *m, uint64_t seed, cgnn_err *err);
void hgt_free(model *m); /* frees m->hgt; NULL-safe */
const float *hgt_forward(model *m, const minibatch *mb, int training, uint64_t dropout_key);
void hgt_backward(model *m, const minibatch *mb, const float *const *dout);
const float *hgt_output(const model *m, int t);     /* (num_nodes[t][0], out_dim) */
const float *hgt_input_grad(const model *m, int t); /* (num_nodes[t][L], in_dim[t]) or NULL */

/* ---- attention (one destination node type, all its in-edge types at once) ----------------
 * For destination row i and head h, over every sampled in-edge (r, j) of i in every relation r
 * (edge type into this node type) of the call:
 *   s_(r,j),h = (q_i,h · kt_r[j],h) · p_r[h] / sqrt(D)
 *   α_(r,j),h = exp(s - max) / Σ exp(s - max)           (one softmax across all relations)
 *   agg_i,h   = Σ α_(r,j),h vt_r[j],h                   (0 for a row without in-edges)
 * PyG's softmax adds 1e-16 to the sum; a sum of exponentials whose largest term is 1 does not
 * see it in float32, so it is left out. */
typedef struct hgt_rel {
    const sampler_block *b; /* sub-block of the relation: N_dst destination rows, N_src sources */
    const float *kt, *vt;   /* (N_src, H*D) relation-transformed keys and values */
    const float *p;         /* (H) p_rel of the relation */
    float *alpha;           /* (E, H) attention weights: written by the forward, read by backward */
    float *work;            /* (2 E, H) backward scratch: d/ds · p / sqrt(D), then d/dp terms */
} hgt_rel;

/* agg (N_dst, H*D) overwritten; q: row i at q + i * ldq, head h at columns h*D .. h*D + D. */
void hgt_attention_forward(float *agg, const hgt_rel *rels, int n_rels, const float *q, int64_t ldq,
                           int64_t N_dst, int64_t H, int64_t D);
void hgt_attention_forward_ref(float *agg, const hgt_rel *rels, int n_rels, const float *q, int64_t ldq,
                               int64_t N_dst, int64_t H, int64_t D);

/* Backward of the forward above, for dagg (N_dst, H*D) = d(loss)/d(agg), in two steps.
 * hgt_attention_backward_dst (parallel over destination rows): dq (row stride lddq) += ∂/∂q, and
 * every relation's work filled. Then per relation r, hgt_attention_backward_src (parallel over
 * sources through the transpose; the d/dp sum serial in edge order): dkt, dvt (N_src, H*D) +=
 * ∂/∂kt_r, ∂/∂vt_r and dp (H) += ∂/∂p_r. */
void hgt_attention_backward_dst(float *dq, int64_t lddq, const hgt_rel *rels, int n_rels, const float *dagg,
                                const float *q, int64_t ldq, int64_t N_dst, int64_t H, int64_t D);
void hgt_attention_backward_src(float *dkt, float *dvt, float *dp, const hgt_rel *rel, const float *dagg,
                                const float *q, int64_t ldq, int64_t H, int64_t D);
/* The whole backward in one plain serial pass, scattering directly: dq as above, dkt[r], dvt[r]
 * (N_src_r, H*D) and dp[r] (H) += per relation. Uses no work buffers. */
void hgt_attention_backward_ref(float *dq, int64_t lddq, float *const *dkt, float *const *dvt, float *const *dp,
                                const hgt_rel *rels, int n_rels, const float *dagg, const float *q, int64_t ldq,
                                int64_t N_dst, int64_t H, int64_t D);

#endif
