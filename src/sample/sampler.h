/* sampler.h — multi-layer uniform neighbour sampling into message-flow blocks.
 *
 * For seed nodes S and fanouts [f_0, ..., f_{L-1}] (seed side first, PyG/GLT order; -1 = all
 * in-neighbours), hop h samples up to f_h in-neighbours of every node reached so far, without
 * replacement by default (every in-neighbour at most once; all of them when the degree is
 * <= f_h) or with replacement (exactly f_h draws when the degree is > 0). New nodes are
 * appended in the order they are first met (dst order, then draw order), so local ids are
 * deterministic. See minibatch.h for the block layout.
 *
 * Randomness: the neighbours drawn for node v in hop h come from a stream keyed on
 * (key, h, v), where key is the caller's sampling key (the trainer passes one key per
 * (seed, epoch): item_sampler_batch_key). A batch's content is therefore a pure function of
 * (graph, seeds, config, key), independent of thread count, of the node's position in the
 * batch, and of how items are grouped into batches and ranks: W data-parallel ranks sample
 * exactly the neighbourhoods one process would sample for the union of their batches.
 * (Consequence: within one epoch, a node reached by two batches gets the same neighbours in
 * the same hop; every batch is still a uniform sample.)
 *
 * Weighted sampling (cfg.weights, GraphBolt's prob_name / PyG's weight_attr): the in-edge j of v
 * is drawn with probability proportional to its weight w_j >= 0; a zero-weight edge is never
 * drawn, and a node whose in-edges all weigh 0 draws nothing. Without replacement: exponential
 * keys (Efraimidis-Spirakis): the node's stream gives one uniform u_j per in-edge position,
 * key_j = -log(1 - u_j) / w_j, and the k smallest keys are taken, in increasing key order (the
 * order of successive weighted draws); when k >= the number m of positive-weight edges (or
 * fanout -1) all m are taken in edge order. With replacement: k draws from the node's CDF (prefix
 * sums of its weights in double, binary search). The stream is keyed as the uniform draws are,
 * so the picks never depend on threads or on where the node sits in the batch.
 *
 * A neighbor_sampler holds one thread's scratch (hash map global -> local id, buffers), sized
 * once for the worst case: sampling allocates nothing. Not thread-safe: one per thread.
 */
#ifndef CGNN_SAMPLER_H
#define CGNN_SAMPLER_H

#include <stdint.h>

#include "graph/csc.h"
#include "sample/minibatch.h"
#include "util/err.h"

typedef struct sampler_config {
    int num_layers;                          /* L, 1..MINIBATCH_MAX_LAYERS */
    int64_t fanouts[MINIBATCH_MAX_LAYERS];   /* seed side first; -1 = all */
    int replace;                             /* sample with replacement */
    /* weighted sampling (sample/sample_weights.h; NULL: uniform): (E) the draw weight of every
     * in-edge in CSC order (weights[indptr[v] + j] is the weight of v's j-th in-neighbour), each
     * finite and >= 0; borrowed, must outlive the samplers. Whole homogeneous graphs only. */
    const float *weights;
} sampler_config;

typedef struct sampler_slot {
    int64_t key;   /* global id, -1 = empty */
    int64_t val;   /* local id */
} sampler_slot;

/* ---- partitioned graphs --------------------------------------------------------
 * On a partitioned graph (graph/partbook.h) a rank's index holds only the in-edges of its own
 * nodes, global ids [first, first + n_local): row i of the csc_graph is node first + i and its
 * sources are global ids. The draws for an own node v are keyed by key_ids[v - first] (its id in
 * the whole graph, so every partitioning samples exactly the neighbourhoods of the whole graph);
 * the nodes of a hop owned by other parts are sampled by their owners: the sampler collects
 * them per owner and makes one pick_remote call per hop, which sends one request per owner and
 * waits for all (the owner runs sampler_pick_owned). */
typedef struct sampler_remote_hop {
    int hop;               /* h, seed side first */
    uint64_t key;          /* the batch's sampling key */
    int64_t fanout;        /* this hop's fanout (-1 = all) */
    int replace;
    int num_parts;
    const int64_t *n;      /* (num_parts) nodes asked of each part (0 for this part) */
    int64_t *const *nodes; /* (num_parts) the nodes asked of each part, global ids */
    int64_t **counts;      /* (num_parts) out: sampled neighbours of each asked node */
    int64_t **nbrs;        /* (num_parts) out: the neighbours, concatenated in node order, global
                              ids; the callback may grow nbrs[p] (realloc, capacity nbr_cap[p]) */
    int64_t *nbr_cap;      /* (num_parts) capacity of nbrs[p] in ids */
} sampler_remote_hop;

typedef struct sampler_part {
    int num_parts, part;        /* P, this rank's part */
    const int64_t *part_start;  /* (P + 1) global id ranges: part p owns [part_start[p], part_start[p+1]) */
    const int64_t *key_ids;     /* (own nodes) the id keying the draws of own node part_start[part] + i */
    int64_t num_nodes, num_edges, max_in_degree; /* of the whole graph (buffer capacities) */
    /* fills counts / nbrs of every part with n[p] > 0; 0, or -1 with *err (a peer failed or
     * timed out). Called concurrently by every sampler thread. */
    int (*pick_remote)(void *ctx, sampler_remote_hop *hop, cgnn_err *err);
    void *ctx;
    /* weighted sampling (sample_weights.h; NULL: uniform): (own edges) the draw weights of the own
     * index's in-edges in its CSC order, for the own picks and sampler_pick_owned alike; every
     * part of a job sets them (or none does), so the picks are the whole graph's. Borrowed. */
    const float *weights;
} sampler_part;

/* Owner of global id v (binary search over part_start). */
static inline int sampler_part_owner(const sampler_part *p, int64_t v) {
    int lo = 0, hi = p->num_parts; /* part_start[lo] <= v < part_start[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (p->part_start[mid] <= v) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* An open-addressing set of unordered node pairs (excluded edges), allocated on first use. */
typedef struct sampler_pair_set {
    int64_t (*slot)[2];      /* (mask + 1) slots {min id, max id}, {-1, -1} = empty */
    uint64_t mask;
    int64_t n;               /* pairs held */
} sampler_pair_set;

typedef struct neighbor_sampler {
    const csc_graph *g;
    const sampler_part *part; /* NULL: g is the whole graph */
    /* partitioned sampling scratch (NULL otherwise): per part the nodes asked of it, their dst
     * positions, the replies; own nodes' picks with their offsets */
    int64_t *rq_n, **rq_nodes, **rq_pos, **rq_counts, **rq_nbrs, *rq_cap;
    int64_t *own_off;        /* (max nodes + 1) */
    int64_t *own_buf;        /* (max edges of a hop) */
    sampler_config cfg;
    minibatch_capacity cap;
    uint64_t hash_mask;      /* table size - 1 (power of two) */
    int hash_shift;          /* 64 - log2(table size) */
    sampler_slot *table;     /* open addressing, linear probing */
    int64_t *slot_of;        /* (max nodes) table slot of each local id, for clearing */
    int64_t *nbr_buf;        /* (max edges of a hop) sampled global ids */
    uint32_t *positions;     /* (max degree) scratch for partial Fisher-Yates */
    double *wscratch;        /* (max degree + 1) weighted draws' keys / CDF (cfg.weights only) */
    /* excluded edges (sampler_exclude_edges): an open-addressing set of unordered node pairs,
     * allocated on first use for cap.max_items pairs, emptied by every sampler_sample */
    sampler_pair_set excl;
} neighbor_sampler;

/* Worst-case buffer sizes for batches of up to max_items seeds on g with cfg. */
void sampler_capacity(const csc_graph *g, const sampler_config *cfg, int64_t max_items,
                      int64_t feat_dim, minibatch_capacity *cap);
/* The same from the whole graph's sizes (a partitioned graph: sampler_part's). */
void sampler_capacity_sized(int64_t num_nodes, int64_t num_edges, int64_t max_in_degree, const sampler_config *cfg,
                            int64_t max_items, int64_t feat_dim, minibatch_capacity *cap);

/* Checks cfg (layers in range, fanouts -1 or >= 1). Returns 0 or -1 with *err naming the
 * offending fanout. */
int sampler_config_check(const sampler_config *cfg, cgnn_err *err);

/* Sets up scratch for capacity *cap. Returns 0, or -1 with *err. Caller owns *s. */
int sampler_init(neighbor_sampler *s, const csc_graph *g, const sampler_config *cfg,
                 const minibatch_capacity *cap, cgnn_err *err);
void sampler_free(neighbor_sampler *s); /* NULL-safe */
/* sampler_init on a part: g is the own nodes' index (see sampler_part), part is borrowed and
 * must outlive *s; capacities from sampler_capacity_sized. The draw weights are part->weights
 * (cfg->weights must be NULL or the same array). */
int sampler_init_part(neighbor_sampler *s, const csc_graph *g, const sampler_part *part, const sampler_config *cfg,
                      const minibatch_capacity *cap, cgnn_err *err);

/* The owner's side of pick_remote: samples hop h (fanout, replace) for own nodes[0..n) of part
 * exactly as sampler_sample would on the whole graph (weighted with part->weights when set):
 * counts[i] neighbours of nodes[i], appended in node order to *out (grown with realloc; *cap in
 * ids). scratch holds (own max in-degree + 1) uint32s, wscratch as many doubles. Returns the number of ids written, or -1 with *err (CGNN_ERR_INPUT) when a node is not
 * owned by the part or the fanout is invalid (a request from a peer is outside data). */
int64_t sampler_pick_owned(const csc_graph *g, const sampler_part *part, int hop, uint64_t key, int64_t fanout,
                           int replace, const int64_t *nodes, int64_t n, int64_t *counts, int64_t **out,
                           int64_t *cap, uint32_t *scratch, double *wscratch, cgnn_err *err);

/* Samples the L-hop neighbourhood of seeds[0..n) (n <= cap.max_items; duplicates allowed,
 * they share one output row) into mb: blocks, input_nodes, num_seeds, num_input_nodes,
 * item_local, num_sampled_edges. Does not touch mb->features / labels / items. */
int sampler_sample(neighbor_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key, cgnn_err *err);
/* Returns 0; -1 with *err only on a partitioned graph, when pick_remote fails. */

/* Excludes the edges between the nodes of each pair (u, v) of pairs[0..n) (n <= cap.max_items),
 * in both directions, from the next sampler_sample call only: GraphBolt's exclude_seed_edges
 * (with reverse edges) for link prediction, so a batch never sees its own supervision edges.
 * Semantics are "sample, then exclude": a node's draws are made as usual and excluded edges
 * are dropped from them, so it may get fewer than fanout neighbours (as in GraphBolt). */
void sampler_exclude_edges(neighbor_sampler *s, const int64_t *pairs, int64_t n);

/* Plain reference of sampler_sample (no prefetching, no hash table: a linear map), same
 * output; for tests on small graphs only. */
void sampler_sample_ref(const csc_graph *g, const sampler_config *cfg, minibatch *mb,
                        const int64_t *seeds, int64_t n, uint64_t key);
/* sampler_sample_ref with the edges of pairs[0..n_pairs) excluded (sampler_exclude_edges). */
void sampler_sample_ref_excluding(const csc_graph *g, const sampler_config *cfg, minibatch *mb,
                                  const int64_t *seeds, int64_t n, uint64_t key, const int64_t *pairs,
                                  int64_t n_pairs);

#endif
