/* infer.h — layer-wise full-neighbourhood inference: the embedding of every node (PyG's
 * BasicGNN.inference(), GiGL's Inferencer; `cgnn embed`).
 *
 * Dimension legend: N = nodes of the graph; F = input feature channels; E = learnable
 * embedding channels; D_l = output channels of layer l (the last one: O); C = chunk size.
 *
 * Layer by layer over ALL nodes: layer l's output of node v is computed once, from the layer
 * l-1 outputs of ALL of v's in-neighbours (exact, no sampling), ReLU between layers, no
 * dropout, the optional row L2 normalisation after the last layer — what model_forward
 * computes with fanout -1 everywhere, without the exponential neighbourhood blow-up.
 * Input row of node v: [ features of v (row-normalised on request) | embedding of v ].
 * A model of 0 layers (the learnable embeddings alone, matrix factorisation) is the identity: one
 * pass writes every node's input row, L2-normalised when the model normalises (infer_run; a
 * partitioned graph's infer_run_part refuses it).
 *
 * For layer l and each chunk [a, b) of destination nodes: a one-hop block (the neighbour
 * sampler with one layer and fanout -1: dst = the chunk, src = the chunk + all in-neighbours),
 * the src rows of layer l-1's activations gathered (layer 0: the features, read from the
 * dataset's mapping chunk by chunk, never copied whole), model_layer_forward_infer, the rows
 * written to layer l's (N, D_l) activations. Only two layers' activations are alive at once.
 *
 * Determinism: every kernel computes a node's row from its own inputs in a fixed order
 * (aggregations per destination in CSC edge order, dense products by ops_linear_rows_forward),
 * so the result is bitwise the same for any chunk size, thread count and number of ranks.
 *
 * Storage: activations in memory, or (activations_dir) in files DIR/layer_<l>.f32 created
 * sparse (ftruncate) and mapped MAP_SHARED, so graphs whose activations exceed memory work;
 * a layer's file is deleted once the next layer is complete, the last one by
 * infer_result_free. (A full disk shows up as SIGBUS when a page is written: the files are
 * sparse, not reserved.)
 *
 * Distributed (opt->dist with size > 1): rank r computes the contiguous node slice
 * [N·r/W, N·(r+1)/W) of every layer; after each layer the slices are combined with
 * dist_allgatherv_f32 (in memory) or, with activations_dir on a filesystem every rank sees,
 * each rank writes its rows of the shared file (msync) and a barrier follows. Setup failures
 * are collective (every rank returns -1 together; rank 0's *err names each failed rank).
 */
#ifndef CGNN_INFER_H
#define CGNN_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "dist/dist.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "sample/gather.h"
#include "sample/sampler.h"
#include "util/err.h"

#define INFER_DEFAULT_CHUNK 8192

/* Builds *m from a checkpoint written by outputs_save_model: its __metadata__ (cgnn_model,
 * num_layers, in_channels, hidden_channels, out_channels, heads) defines the architecture,
 * l2_normalize_output comes from the caller (trainerArgs), dropout is 0. Copies every
 * convs.* tensor, checking its shape. An "embedding.weight" tensor (learnable node
 * embeddings, (num_nodes, E)) stays in f: *emb_index is its index in f, or -1 when absent.
 * Any other tensor is an error. Returns 0, or -1 with *err (CGNN_ERR_INPUT, naming f->path and
 * the key). The caller owns *m (model_free). */
int infer_model_from_checkpoint(model *m, const st_file *f, int l2_normalize_output, int *emb_index,
                                cgnn_err *err);

typedef struct infer_input {
    const ds_feature *feat;   /* node features (N, F) of any dtype, or NULL (the rows start with
                                 the embeddings) */
    int normalize_rows;       /* divide each feature row by its L1 norm (feature_normalization: row) */
    const float *emb;         /* learnable node embeddings (emb_rows, E) appended after the
                                 features, or NULL */
    int64_t emb_rows, emb_dim;
} infer_input;

typedef struct infer_options {
    int64_t chunk;                 /* destination nodes per block, >= 1 */
    const char *activations_dir;   /* NULL or "": activations in memory */
    const dist_ctx *dist;          /* NULL: one process */
    /* Called on the calling thread with done = 0 before layer `layer`'s first chunk, then after
     * each of this rank's `total` chunks (progress bars). */
    void (*on_chunk)(void *ctx, int layer, int num_layers, int64_t done, int64_t total);
    void *on_chunk_ctx;
} infer_options;

/* (rows, cols) float32 activations in memory or in a mapped file; private to infer.c. */
typedef struct infer_store {
    float *data;
    int64_t rows, cols;
    size_t bytes;
    int mapped;       /* 1: data is a MAP_SHARED mapping of path */
    int owner;        /* this process deletes path on close */
    char path[4200];
} infer_store;

typedef struct infer_result {
    int64_t num_nodes, dim;       /* N, O */
    const float *embeddings;      /* (N, O), complete on every rank; owned by store */
    double seconds;               /* the whole run, this rank */
    double layer_seconds[MINIBATCH_MAX_LAYERS];
    int64_t chunks;               /* blocks this rank ran, over all layers */
    int64_t edges;                /* edges those blocks aggregated, over all layers */
    infer_store store;
} infer_result;

/* The checks infer_run starts with: N >= 1, feature and embedding rows = N, F + E = the
 * model's in_channels. Returns 0 or -1 with *err (CGNN_ERR_INPUT naming the field). */
int infer_check_input(const model *m, const csc_graph *g, const infer_input *in, cgnn_err *err);

/* Computes the final-layer output of every node of g (N = g->num_nodes) with m. Checks the
 * inputs against the model (F + E must equal the model's in_channels, embedding rows = N;
 * CGNN_ERR_INPUT naming the field). Collective under opt->dist: every rank calls it.
 * Returns 0 with *res filled (the caller owns it: infer_result_free), or -1 with *err. */
int infer_run(infer_result *res, const model *m, const csc_graph *g, const infer_input *in,
              const infer_options *opt, cgnn_err *err);

/* ---- a partitioned graph (`cgnn embed` on parts) --------------------------------------------
 * Rank r computes the rows of its own part's nodes, layer by layer, exactly as infer_run does
 * for them on the whole graph: the block of a chunk comes from the part's local index (a node's
 * in-edges in the original edge order), own input rows are read locally and the other parts'
 * through the callbacks (features: feat_part; layer l-1's rows: act_part, served by their owners
 * from what they published). Between layers: barrier (no rank reads layer l-1 any more), publish
 * layer l's own rows, barrier. GCN's full-graph degrees: every part's norms all-gathered (4 N
 * bytes). A peer that fails or does not answer ends the job (dist_abort) after printing why:
 * the others may be waiting in a barrier. The result holds this rank's own rows (n_local, O),
 * in new-id order (graph/partbook: part_gather_to_root puts every part's rows in original id
 * order on rank 0). */
typedef struct infer_part {
    const csc_graph *local;       /* own nodes' in-edges: row i = new id first + i */
    const sampler_part *part;     /* ranges and whole-graph sizes (pick_remote unused: one hop) */
    int64_t first, n_local;       /* own new ids [first, first + n_local) */
    const int64_t *orig_of_new;   /* (N) new id -> original id: the rows of in->emb */
    const gather_part *feat_part; /* remote feature rows (in->feat holds the own rows) */
    const gather_part *act_part;  /* remote rows of the previous layer */
    void (*publish)(void *ctx, const float *rows, int64_t n, int64_t dim); /* own rows served from now on */
    void *ctx;
    int sends_norms;              /* this rank contributes its part's GCN norms (one rank per part) */
} infer_part;

/* infer_run on a part: in->feat holds own rows (n_local), in->emb the whole table (N rows, by
 * original id). Collective over opt->dist (every rank of the job calls it; ranks sharing a part
 * compute the same rows). activations_dir must be unset. Returns 0 with res->embeddings = own
 * rows (n_local, O), res->num_nodes = n_local; or -1 with *err for bad inputs (collective). */
int infer_run_part(infer_result *res, const model *m, const infer_input *in, const infer_part *ip,
                   const infer_options *opt, cgnn_err *err);

/* ---- server-client mode (`cgnn embed` with a graph-store resource config) --------------------
 * The compute ranks hold no graph: the one-hop block of a chunk (every in-edge, fanout -1) and,
 * for layer 0, its source nodes' feature rows come from the storage ranks (sample/batch_rpc:
 * BATCH with one layer), through the block callback. Rank r of opt->dist (the compute ranks)
 * computes the chunks of the new-id slice [N r/W, N (r+1)/W) of every layer; after each layer
 * the slices are all-gathered, so each compute rank holds the whole layer, (N, D_l) floats, in
 * memory (activations_dir is refused). GCN's full-graph degrees: a first pass over the own
 * chunks' blocks (without rows), all-gathered (4 N bytes). Bitwise the single-process
 * infer_run's rows (node v's row depends only on its in-edges in their order, which `cgnn
 * partition` keeps), in new-id order. A block that cannot be had (a storage rank failed, timed
 * out or answered a malformed batch) ends the job (dist_abort with the error's code) after
 * printing why: the other compute ranks may be waiting in a collective. */
typedef struct infer_remote {
    int64_t num_nodes;            /* N (new ids) */
    const int64_t *orig_of_new;   /* (N) new id -> original id: the rows of in->emb */
    int64_t feat_dim;             /* F: feature columns the blocks' rows carry (0: none) */
    /* The block of dst new ids ids[0..n) (distinct, consecutive): *mb gets one block (dst =
     * ids in order, a prefix of the sources), input_nodes and, with with_rows, the sources'
     * feature rows (converted, normalised as in->normalize_rows says) in the first F columns of
     * (*mb)->features, (*mb)->feat_dim apart. *mb is the callback's (valid until its next call).
     * Returns 0, or -1 with *err. */
    int (*block)(void *ctx, const int64_t *ids, int64_t n, int with_rows, const minibatch **mb, cgnn_err *err);
    void *ctx;
} infer_remote;

/* infer_run with the blocks from ir (in->feat unused: F = ir->feat_dim; in->emb the whole table by
 * original id). Collective over opt->dist. Returns 0 with res->embeddings = (N, O) in new-id
 * order on every rank, or -1 with *err for bad inputs (collective). */
int infer_run_remote(infer_result *res, const model *m, const infer_input *in, const infer_remote *ir,
                     const infer_options *opt, cgnn_err *err);

/* Releases the embeddings; deletes their file (activations_dir) on the rank that created it.
 * NULL-safe and safe on a zeroed result. Not collective. */
void infer_result_free(infer_result *res);

/* Layer l's activations (rows, cols) float32: in memory when dir is NULL or "", else the file
 * DIR/layer_<l>.f32 (created sparse and mapped shared; with several ranks rank 0 creates it and
 * the others map it). Collective under d: every rank returns the same status (-1 with *err).
 * The caller owns *s (infer_store_close). */
int infer_store_open_layer(infer_store *s, const dist_ctx *d, const char *dir, int l, int64_t rows, int64_t cols,
                           cgnn_err *err);
/* Unmaps / frees s and deletes its file on the rank that created it; NULL-safe parts. */
void infer_store_close(infer_store *s);

/* Full-graph GCN normalisation: norm (N) = deg(v)^-1/2, deg(v) = 1 + v's in-edges other than a
 * self-edge (model_layer_forward_infer's src_norm, before gathering). */
void infer_gcn_norm(float *norm, const csc_graph *g);
void infer_gcn_norm_ref(float *norm, const csc_graph *g);

#endif
