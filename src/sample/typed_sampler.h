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
} typed_sampler_config;

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
    sampler_pair_set excl;  /* typed_sampler_exclude_edges: pairs of homogenised ids */
    int64_t max_pairs;      /* its capacity (cap's max seeds) */
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
