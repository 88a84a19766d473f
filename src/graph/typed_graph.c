/* typed_graph.c — per-edge-type indexes of a heterogeneous dataset; see typed_graph.h. */
#include "graph/typed_graph.h"

#include <stdlib.h>
#include <string.h>

static int64_t max_degree(const csc_graph *c) {
    int64_t m = 0;
    for (int64_t v = 0; v < c->num_nodes; v++)
        if (csc_degree(c, v) > m) m = csc_degree(c, v);
    return m;
}

void typed_graph_init(typed_graph *g, int T, const int64_t *num_nodes, int K, const int *etype_src,
                      const int *etype_dst, const csc_graph *const *csc) {
    CGNN_CHECK(T >= 1 && T <= MINIBATCH_MAX_NODE_TYPES && K >= 1 && K <= MINIBATCH_MAX_EDGE_TYPES);
    memset(g, 0, sizeof *g);
    g->num_node_types = T;
    g->num_edge_types = K;
    for (int t = 0; t < T; t++) {
        g->num_nodes[t] = num_nodes[t];
        g->offset[t + 1] = g->offset[t] + num_nodes[t];
    }
    for (int e = 0; e < K; e++) {
        CGNN_CHECK(csc[e]->num_nodes == num_nodes[etype_dst[e]] && csc[e]->num_src_nodes == num_nodes[etype_src[e]]);
        g->etype_src[e] = etype_src[e];
        g->etype_dst[e] = etype_dst[e];
        g->csc[e] = csc[e];
        g->max_in_degree[e] = max_degree(csc[e]);
        g->num_edges[e] = csc[e]->num_edges;
    }
}

void typed_graph_init_part(typed_graph *g, int T, const int64_t *num_nodes, int K, const int *etype_src,
                           const int *etype_dst, const csc_graph *const *csc, const int64_t *max_in_degree,
                           const int64_t *num_edges) {
    CGNN_CHECK(T >= 1 && T <= MINIBATCH_MAX_NODE_TYPES && K >= 1 && K <= MINIBATCH_MAX_EDGE_TYPES);
    memset(g, 0, sizeof *g);
    g->num_node_types = T;
    g->num_edge_types = K;
    g->parted = 1;
    for (int t = 0; t < T; t++) {
        g->num_nodes[t] = num_nodes[t];
        g->offset[t + 1] = g->offset[t] + num_nodes[t];
    }
    for (int e = 0; e < K; e++) {
        CGNN_CHECK(csc[e]->first_node + csc[e]->num_nodes <= num_nodes[etype_dst[e]] &&
                   csc[e]->num_src_nodes == num_nodes[etype_src[e]] && csc[e]->num_edges <= num_edges[e] &&
                   max_degree(csc[e]) <= max_in_degree[e]);
        g->etype_src[e] = etype_src[e];
        g->etype_dst[e] = etype_dst[e];
        g->csc[e] = csc[e];
        g->max_in_degree[e] = max_in_degree[e];
        g->num_edges[e] = num_edges[e];
    }
}

void typed_graph_init_shape(typed_graph *g, int T, const int64_t *num_nodes, int K, const int *etype_src,
                            const int *etype_dst, const int64_t *max_in_degree, const int64_t *num_edges) {
    CGNN_CHECK(T >= 1 && T <= MINIBATCH_MAX_NODE_TYPES && K >= 1 && K <= MINIBATCH_MAX_EDGE_TYPES);
    memset(g, 0, sizeof *g);
    g->num_node_types = T;
    g->num_edge_types = K;
    g->parted = 1;
    for (int t = 0; t < T; t++) {
        g->num_nodes[t] = num_nodes[t];
        g->offset[t + 1] = g->offset[t] + num_nodes[t];
    }
    for (int e = 0; e < K; e++) {
        CGNN_CHECK(etype_src[e] >= 0 && etype_src[e] < T && etype_dst[e] >= 0 && etype_dst[e] < T);
        g->etype_src[e] = etype_src[e];
        g->etype_dst[e] = etype_dst[e];
        g->max_in_degree[e] = max_in_degree[e];
        g->num_edges[e] = num_edges[e];
    }
}

int typed_graph_open(typed_graph *g, const dataset *ds, int nthreads, cgnn_err *err) {
    memset(g, 0, sizeof *g);
    const int T = ds->num_node_types, K = ds->num_edge_types;
    if (T > MINIBATCH_MAX_NODE_TYPES || K > MINIBATCH_MAX_EDGE_TYPES)
        return err_set(err, CGNN_ERR_INPUT, "%s/metadata.yaml: %d node types and %d edge types; at most %d and %d are "
                       "supported", ds->dir, T, K, MINIBATCH_MAX_NODE_TYPES, MINIBATCH_MAX_EDGE_TYPES);
    csc_graph *owned = calloc((size_t)K, sizeof *owned);
    if (!owned) return err_set(err, CGNN_ERR_RUNTIME, "out of memory opening %d edge types", K);
    int64_t num_nodes[MINIBATCH_MAX_NODE_TYPES];
    int src[MINIBATCH_MAX_EDGE_TYPES], dst[MINIBATCH_MAX_EDGE_TYPES];
    const csc_graph *views[MINIBATCH_MAX_EDGE_TYPES];
    for (int t = 0; t < T; t++) num_nodes[t] = ds->node_types[t].num_nodes;
    for (int e = 0; e < K; e++) {
        if (csc_open_cached(&owned[e], ds, e, nthreads, err) != 0) {
            for (int j = 0; j < e; j++) csc_free(&owned[j]);
            free(owned);
            return -1;
        }
        src[e] = ds->edge_types[e].src_type;
        dst[e] = ds->edge_types[e].dst_type;
        views[e] = &owned[e];
    }
    typed_graph_init(g, T, num_nodes, K, src, dst, views);
    g->owned = owned;
    return 0;
}

void typed_graph_replace(typed_graph *g, int e, csc_graph *c) {
    CGNN_CHECK(g->owned && !g->parted && e >= 0 && e < g->num_edge_types);
    CGNN_CHECK(c->num_nodes == g->csc[e]->num_nodes && c->num_src_nodes == g->csc[e]->num_src_nodes);
    csc_free(&g->owned[e]);
    g->owned[e] = *c;
    memset(c, 0, sizeof *c);
    g->csc[e] = &g->owned[e];
    g->max_in_degree[e] = max_degree(&g->owned[e]);
    g->num_edges[e] = g->owned[e].num_edges;
}

void typed_graph_free(typed_graph *g) {
    if (!g) return;
    if (g->owned)
        for (int e = 0; e < g->num_edge_types; e++) csc_free(&g->owned[e]);
    free(g->owned);
    memset(g, 0, sizeof *g);
}
