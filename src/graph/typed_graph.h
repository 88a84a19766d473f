/* typed_graph.h — a heterogeneous graph for sampling: node types, edge types, one in-neighbour
 * index (csc_graph) per edge type.
 *
 * Node ids are per type (0 .. num_nodes[t]), as on disk. The homogenised id of node (t, i) is
 * offset[t] + i (offset[t] = the node counts of the types before t; PyG's to_homogeneous order):
 * one number that names a node of any type, used where nodes of several types share a list
 * (a typed batch's seeds, hash keys). Edge type e = (src[e], relation, dst[e]); csc[e] row v
 * lists the src-type ids of the in-neighbours of dst-type node v through edge type e.
 *
 * A homogeneous graph is the case T = K = 1.
 *
 * A part of a partitioned typed graph (graph/partbook.h, typed_graph_init_part) is the same
 * structure over per-type NEW ids with csc[e] holding only the rows of the part's own dst nodes
 * (row i = per-type id csc[e]->first_node + i; sources per-type new ids of the src type);
 * num_nodes, num_edges and max_in_degree stay the whole graph's (what batches are sized for).
 */
#ifndef CGNN_TYPED_GRAPH_H
#define CGNN_TYPED_GRAPH_H

#include <stdint.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "sample/minibatch.h"
#include "util/err.h"

typedef struct typed_graph {
    int num_node_types, num_edge_types;             /* T, K */
    int64_t num_nodes[MINIBATCH_MAX_NODE_TYPES];    /* per type */
    int64_t offset[MINIBATCH_MAX_NODE_TYPES + 1];   /* homogenised id of (t, 0); offset[T] = all nodes */
    int etype_src[MINIBATCH_MAX_EDGE_TYPES], etype_dst[MINIBATCH_MAX_EDGE_TYPES];
    const csc_graph *csc[MINIBATCH_MAX_EDGE_TYPES]; /* (K) rows = dst-type ids, sources = src-type ids */
    int64_t max_in_degree[MINIBATCH_MAX_EDGE_TYPES]; /* of the whole graph */
    int64_t num_edges[MINIBATCH_MAX_EDGE_TYPES];     /* of the whole graph */
    int parted;                                     /* csc[e] are a part's rows (see the top) */
    csc_graph *owned;                               /* (K) when typed_graph_open built them, else NULL */
} typed_graph;

/* Opens the per-edge-type indexes of ds (csc_open_cached for each edge type). A dataset with more
 * node or edge types than a batch can carry is CGNN_ERR_INPUT. Caller owns *g (typed_graph_free). */
int typed_graph_open(typed_graph *g, const dataset *ds, int nthreads, cgnn_err *err);

/* Replaces edge type e's index of a graph typed_graph_open built with *c (the same rows and
 * source ids, e.g. fewer edges: graph/edge_split.h); the graph takes *c over (and zeroes it),
 * frees the old index and updates the edge count and the maximum in-degree. */
void typed_graph_replace(typed_graph *g, int e, csc_graph *c);

/* A typed graph over indexes the caller owns (tests, benchmarks): csc[e] must have
 * num_nodes[etype_dst[e]] rows and sources below num_nodes[etype_src[e]]. */
void typed_graph_init(typed_graph *g, int T, const int64_t *num_nodes, int K, const int *etype_src,
                      const int *etype_dst, const csc_graph *const *csc);

/* A part's view (see the top): csc[e] are the part's local indexes (rows: its own nodes of e's dst
 * type; sources below num_nodes[etype_src[e]]); num_nodes, max_in_degree and num_edges are the
 * whole graph's per type / edge type. The caller owns the indexes. */
void typed_graph_init_part(typed_graph *g, int T, const int64_t *num_nodes, int K, const int *etype_src,
                           const int *etype_dst, const csc_graph *const *csc, const int64_t *max_in_degree,
                           const int64_t *num_edges);

/* The shape of a typed graph without any index (server-client mode's compute ranks: the storage
 * ranks sample): types, the whole graph's node counts, edge counts and in-degree bounds, csc[e]
 * NULL; what batch capacities and typed models are sized from. parted is set (the ids are a
 * partition's new ids). */
void typed_graph_init_shape(typed_graph *g, int T, const int64_t *num_nodes, int K, const int *etype_src,
                            const int *etype_dst, const int64_t *max_in_degree, const int64_t *num_edges);

void typed_graph_free(typed_graph *g); /* NULL-safe */

/* Node type of homogenised id v (binary search over offset). */
static inline int typed_graph_type_of(const typed_graph *g, int64_t v) {
    int lo = 0, hi = g->num_node_types;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (g->offset[mid] <= v) lo = mid;
        else hi = mid;
    }
    return lo;
}

#endif
