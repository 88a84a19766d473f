/* typed_sampler.h — multi-layer neighbour sampling on a heterogeneous graph, with a fanout per
 * edge type and hop, into typed blocks (minibatch.h, "typed batches").
 *
 * Semantics (PyG NeighborLoader / GraphBolt on a heterogeneous graph): hop h (seed side first)
 * visits every node reached so far, of every type, and for each edge type e whose dst type is
 * the node's type draws up to fanouts[h][e] of its in-neighbours through e (-1: all of them,
 * 0: none; an edge type left out of a per-type fanout map gets 0), without replacement by
 * default, with replacement on request, exactly as the homogeneous sampler does per node. Edge
 * types are visited in dataset order, dst nodes in their list order, draws in draw order; new
 * nodes are appended to their type's list when first met, so local ids are deterministic.
 *
 * Keyed draws: the neighbours of node v through edge type e in hop h come from a stream keyed on
 * (key, h, e, v) (key: the batch's sampling key, item_sampler_batch_key = f(seed, epoch)), so a
 * batch is a pure function of (graph, seeds, config, key): the thread count and the split of
 * items into batches or data-parallel ranks never change what a node draws.
 *
 * One typed_sampler per thread; scratch sized once, sampling allocates nothing.
 */
#ifndef CGNN_TYPED_SAMPLER_H
#define CGNN_TYPED_SAMPLER_H

#include <stdint.h>

#include "graph/typed_graph.h"
#include "sample/minibatch.h"
#include "sample/sampler.h"
#include "util/err.h"

typedef struct typed_sampler_config {
    int num_layers;                                                /* L */
    int64_t fanouts[MINIBATCH_MAX_LAYERS][MINIBATCH_MAX_EDGE_TYPES]; /* [h][e], seed side first */
    int replace;
    /* weighted sampling per edge type (sampler.h, "Weighted sampling"): weights[e] = (E_e) the
     * draw weights of edge type e's in-edges in csc[e]'s order, or NULL (uniform); borrowed. On a
     * part they are the part's (typed_sampler_part.weights; these must be NULL or the same). */
    const float *weights[MINIBATCH_MAX_EDGE_TYPES];
} typed_sampler_config;

/* ---- partitioned typed graphs ------------------------------------------------------------
 * On a part of a partitioned typed graph (typed_graph_init_part) node ids are per-type NEW ids;
 * part p owns the per-type ids [type_start[t][p], type_start[t][p+1]) of each type t, and the
 * part's csc[e] rows are its own dst nodes of e's dst type. Hop h picks the own dst nodes of
 * every edge type from the local indexes and sends every other one to its owner: ONE request per
 * owning part per hop carrying every edge type's nodes (the dst sets of a hop are fixed when the
 * hop starts, so all its edge types can be asked at once); the owner answers with the sampled
 * neighbours (typed_sampler_pick_owned). Draws are keyed by ORIGINAL per-type ids (key_ids), so
 * the neighbourhood of every node is the whole graph's: the batch is the replicated batch with
 * ids renamed. */
typedef struct typed_remote_hop {
    int hop;                 /* h, seed side first */
    uint64_t key;            /* the batch's sampling key */
    int replace;
    int num_parts, num_edge_types; /* P, K */
    const int64_t *fanouts;  /* (K) this hop's fanout of each edge type */
    const int64_t *n;        /* (P * K) [p * K + e]: dst nodes of edge type e asked of part p */
    int64_t *const *nodes;   /* (P * K) their per-type (new) ids */
    int64_t **counts;        /* (P * K) out: sampled neighbours of each asked node */
    int64_t **nbrs;          /* (P) out: part p's neighbours, edge type by edge type, node by node,
                                per-type ids of e's src type; the callback may grow nbrs[p]
                                (realloc, nbr_cap[p] ids) */
    int64_t *nbr_cap;        /* (P) */
} typed_remote_hop;

typedef struct typed_sampler_part {
    int num_parts, part;                                 /* P, this rank's part */
    const int64_t *type_start[MINIBATCH_MAX_NODE_TYPES]; /* (T) each (P + 1): the parts' per-type ranges */
    const int64_t *key_ids[MINIBATCH_MAX_NODE_TYPES];    /* (T) each (type_start[t][P]): the original id of
                                                            every per-type new id (the draws' key) */
    /* fills counts / nbrs of every part asked anything; 0, or -1 with *err (a peer failed or timed
     * out). Called concurrently by every sampler thread. */
    int (*pick_remote)(void *ctx, typed_remote_hop *hop, cgnn_err *err);
    void *ctx;
    /* weighted sampling (sample_weights.h): weights[e] = the draw weights of the part's own csc[e]
     * in-edges in its CSC order, or NULL (uniform); for the own picks and typed_sampler_pick_owned
     * alike; every part of a job sets the same edge types. Borrowed. */
    const float *weights[MINIBATCH_MAX_EDGE_TYPES];
} typed_sampler_part;

/* The part owning per-type id v of node type t. */
static inline int typed_sampler_part_owner(const typed_sampler_part *p, int t, int64_t v) {
    const int64_t *ts = p->type_start[t];
    int lo = 0, hi = p->num_parts - 1; /* the largest q with ts[q] <= v (skips empty ranges) */
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (ts[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

typedef struct typed_sampler {
    const typed_graph *g;
    typed_sampler_config cfg;
    minibatch_typed_capacity cap;
    uint64_t hash_mask;
    int hash_shift;
    sampler_slot *table;    /* homogenised id -> local id within the node's type */
    int64_t *slot_of;       /* (max nodes of all types) table slot of each insertion, for clearing */
    int64_t num_inserted;
    int64_t *nbr_buf;       /* (max edges of one (hop, edge type)) sampled src-type ids */
    uint32_t *positions;    /* (max in-degree + 1) */
    double *wscratch;       /* (max in-degree + 1) weighted draws' keys / CDF (cfg.weights only) */
    sampler_pair_set excl;  /* typed_sampler_exclude_edges: pairs of homogenised ids */
    int64_t max_pairs;      /* its capacity (cap's max seeds) */
    /* a part (typed_sampler_init_part; NULL otherwise): nbr_buf holds a whole hop (every edge
     * type); own picks, the requests and replies per (part, edge type) */
    const typed_sampler_part *part;
    int64_t *own_buf, *own_off;   /* own picks of a hop; (dst nodes of a hop + K + 1) offsets */
    int64_t *rq_n;                /* (P * K) */
    int64_t **rq_nodes, **rq_counts; /* (P * K) into flat_nodes / flat_counts */
    int64_t *flat_nodes, *flat_counts; /* (dst nodes of a hop) */
    int64_t **rq_nbrs, *rq_cap;   /* (P) replies */
    int64_t *cur_node, *cur_nbr;  /* (P * K), (P) merge cursors */
} typed_sampler;

/* Checks cfg against g: 1..MINIBATCH_MAX_LAYERS layers, every fanout -1, 0 or >= 1, and at least
 * one non-zero fanout per hop. -1 with *err (CGNN_ERR_INPUT) naming hop and edge type. */
int typed_sampler_config_check(const typed_graph *g, const typed_sampler_config *cfg, const char *const *etype_names,
                               cgnn_err *err);

/* Worst-case sizes for batches with at most max_seeds[t] seeds of type t; feat_dim[t] is the
 * width of type t's input rows (0: none). */
void typed_sampler_capacity(const typed_graph *g, const typed_sampler_config *cfg, const int64_t *max_seeds,
                            const int64_t *feat_dim, minibatch_typed_capacity *cap);

int typed_sampler_init(typed_sampler *s, const typed_graph *g, const typed_sampler_config *cfg,
                       const minibatch_typed_capacity *cap, cgnn_err *err);
void typed_sampler_free(typed_sampler *s); /* NULL-safe */

/* Samples the L-hop typed neighbourhood of seeds[0..n) (homogenised ids; duplicates share a
 * row) into mb (minibatch_alloc_typed with this graph's types): mb->typed nodes, num_nodes,
 * blocks; mb->item_local[i] = seed i's local id within its type; num_items, num_seeds (distinct
 * seeds), num_input_nodes (all nodes), num_sampled_edges. Features are not touched. */
void typed_sampler_sample(typed_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key);

/* typed_sampler_init on a part: g is the part's view (typed_graph_init_part), part is borrowed and
 * must outlive *s. */
int typed_sampler_init_part(typed_sampler *s, const typed_graph *g, const typed_sampler_part *part,
                            const typed_sampler_config *cfg, const minibatch_typed_capacity *cap, cgnn_err *err);

/* typed_sampler_sample on a part (own dst nodes from the local indexes, the others through
 * part->pick_remote); seeds are homogenised NEW ids, and so is the batch (per-type new ids).
 * Returns 0, or -1 with *err when a peer failed or answered outside the contract (more
 * neighbours than the fanout or the whole graph's in-degree allows, ids out of range). */
int typed_sampler_sample_part(typed_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key,
                              cgnn_err *err);

/* The owner's side of pick_remote for one edge type: samples hop h (fanout, replace) of edge type
 * e for own dst nodes[0..n) (per-type new ids of e's dst type) exactly as the whole graph's
 * sampler would: counts[i] neighbours of nodes[i], appended in node order to *out after the first
 * `at` ids (grown with realloc; *cap in ids). scratch holds (the part's max in-degree + 1)
 * uint32s, wscratch as many doubles (weighted: part->weights[e]). Returns the new number of ids in *out, or -1 with *err (CGNN_ERR_INPUT) when a node
 * is not the part's, the edge type or the fanout is invalid (a peer's request is outside data). */
int64_t typed_sampler_pick_owned(const typed_graph *g, const typed_sampler_part *part, int hop, uint64_t key,
                                 int replace, int e, int64_t fanout, const int64_t *nodes, int64_t n, int64_t *counts,
                                 int64_t **out, int64_t *cap, int64_t at, uint32_t *scratch, double *wscratch,
                                 cgnn_err *err);

/* Excludes, from the next typed_sampler_sample call only, every sampled edge between the two
 * nodes of a pair of pairs[0..n) (homogenised ids), whatever its edge type and direction:
 * GraphBolt's exclude_seed_edges with the reverse edge type (link prediction: a batch never sees
 * its own supervision edges, nor their reverses). "Sample, then exclude", as sampler.h. */
void typed_sampler_exclude_edges(typed_sampler *s, const int64_t *pairs, int64_t n);

/* Plain reference of typed_sampler_sample (linear searches, no hash table), same output; for
 * tests on small graphs. */
void typed_sampler_sample_ref(const typed_graph *g, const typed_sampler_config *cfg, minibatch *mb,
                              const int64_t *seeds, int64_t n, uint64_t key);
/* The same with the edges of pairs[0..n_pairs) excluded (typed_sampler_exclude_edges). */
void typed_sampler_sample_ref_excluding(const typed_graph *g, const typed_sampler_config *cfg, minibatch *mb,
                                        const int64_t *seeds, int64_t n, uint64_t key, const int64_t *pairs,
                                        int64_t n_pairs);

#endif
