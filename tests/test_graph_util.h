/* test_graph_util.h — small in-memory graphs for the graph/sampler tests. */
#ifndef CGNN_TEST_GRAPH_UTIL_H
#define CGNN_TEST_GRAPH_UTIL_H

#include <stdint.h>
#include <stdlib.h>

#include "graph/csc.h"
#include "util/rng.h"

/* A random simple graph (no duplicate edges, no self-loops) with skewed in-degrees: node v
 * gets about `avg` * weight(v) in-edges; a few hubs get `hub_degree` in-edges.
 * Fills src/dst (caller frees both) and returns the edge count. */
static inline int64_t test_random_graph(int64_t n, int avg, int64_t hub_degree, uint64_t seed,
                                        int32_t **src_out, int32_t **dst_out) {
    rng r;
    rng_init(&r, seed);
    int64_t cap = n * (int64_t)avg * 3 + 4 * hub_degree + 16, e = 0;
    int32_t *src = malloc((size_t)cap * sizeof(int32_t)), *dst = malloc((size_t)cap * sizeof(int32_t));
    uint8_t *mark = calloc((size_t)n, 1);
    for (int64_t v = 0; v < n; v++) {
        int64_t deg = (v % 97 == 0) ? hub_degree : (int64_t)rng_below(&r, (uint64_t)(2 * avg + 1));
        if (deg > n - 1) deg = n - 1;
        int64_t start = e;
        while (e - start < deg) {
            int64_t u = (int64_t)rng_below(&r, (uint64_t)n);
            if (u == v || mark[u]) continue;
            mark[u] = 1;
            src[e] = (int32_t)u;
            dst[e] = (int32_t)v;
            e++;
        }
        for (int64_t k = start; k < e; k++) mark[src[k]] = 0;
    }
    /* shuffle the edge order so the CSC build has real work to do */
    for (int64_t i = e - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1);
        int32_t t = src[i];
        src[i] = src[j];
        src[j] = t;
        t = dst[i];
        dst[i] = dst[j];
        dst[j] = t;
    }
    free(mark);
    *src_out = src;
    *dst_out = dst;
    return e;
}

static inline ds_edges test_edges(const int32_t *src, const int32_t *dst, int64_t e) {
    ds_edges ed;
    ed.id_dtype = NPY_DTYPE_INT32;
    ed.num_edges = e;
    ed.src = src;
    ed.dst = dst;
    return ed;
}

/* 1 if u is an in-neighbour of v in g. */
static inline int test_has_edge(const csc_graph *g, int64_t u, int64_t v) {
    for (int64_t i = g->indptr[v]; i < g->indptr[v + 1]; i++)
        if (csc_index(g, i) == u) return 1;
    return 0;
}

#endif
