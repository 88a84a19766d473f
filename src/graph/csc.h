/* csc.h — the in-neighbour index of a graph (CSC: indptr + indices).
 *
 * For destination node v, its in-neighbours (edge sources) are
 *   indices[indptr[v] .. indptr[v+1])   in the order the edges appear in the edge list.
 * Offsets are 64-bit; ids are 32-bit when the node count fits (half the memory traffic of the
 * sampler's random reads), 64-bit otherwise.
 *
 * csc_build builds it from an edge list in O(E) with a parallel counting sort that is stable
 * (the result is identical for any thread count). csc_build_range builds the index of a range
 * of destinations only (one part of a partitioned graph, graph/partbook.h): row i holds the
 * in-neighbours of node first_node + i, and the neighbour ids stay global.
 * csc_open_cached reuses the index cached in cgnn's cache folder (io/cachedir.h: never in the
 * dataset's folder, so a read-only dataset works and GraphBolt's own preprocessed/ is left
 * alone) when it was built from the same edge list (the file is named by the counts and the
 * CRC-32s of the loaded src and dst ids, not the edge file's name, size or mtime) and passes its
 * checks (header fingerprint; structure: offsets from 0 to E, never decreasing, ids in range; a
 * CRC-32 of the body), else builds it and writes the cache atomically (skipped with a note when
 * there is no cache folder); a cache that fails a check is rebuilt with a log line, never used.
 * A cached index is memory-mapped, shared by every process on the machine.
 */
#ifndef CGNN_CSC_H
#define CGNN_CSC_H

#include <stdint.h>

#include "io/dataset.h"
#include "util/err.h"

typedef struct csc_graph {
    int64_t num_nodes;      /* N destination rows (for a whole graph: its N nodes) */
    int64_t num_edges;      /* E */
    int64_t first_node;     /* row i is node first_node + i; 0 for a whole graph */
    int64_t num_src_nodes;  /* source ids are in [0, num_src_nodes); = num_nodes for a whole graph */
    int index_bytes;        /* 4 (int32 ids) or 8 (int64 ids), from num_src_nodes */
    const int64_t *indptr;  /* (N + 1) */
    const void *indices;    /* (E) source ids, int32 or int64 per index_bytes */
    /* ownership: either a mapping of the cache file or two malloc'd arrays */
    void *map_base;
    size_t map_len;
    int64_t *owned_indptr;
    void *owned_indices;
    int from_cache;         /* 1 if loaded from the cache file (csc_cache_file) */
    uint64_t edges_crc;     /* CRC-32s of the src and dst ids it was built from (src << 32 | dst);
                               set by csc_open_cached: an identity of the edge list's content */
} csc_graph;

/* Builds the index of `edges` over num_nodes nodes (ids already validated in range).
 * nthreads <= 0: OpenMP default. Returns 0, or -1 with *err (allocation failure).
 * The caller owns *g (csc_free). */
int csc_build(csc_graph *g, int64_t num_nodes, const ds_edges *edges, int nthreads, cgnn_err *err);

/* Builds the index of the destinations [first_node, first_node + num_dst) from `edges`, every
 * one of which must have its dst in that range and its src in [0, num_src) (else -1 with *err,
 * CGNN_ERR_INPUT, naming the first edge that does not): row i = the in-edges of node
 * first_node + i, sources as global ids, in edge-list order (stable, like csc_build; the same
 * output for any nthreads). g->num_nodes = num_dst, g->first_node = first_node,
 * g->num_src_nodes = num_src. Never cached. The caller owns *g (csc_free). */
int csc_build_range(csc_graph *g, int64_t first_node, int64_t num_dst, int64_t num_src, const ds_edges *edges,
                    int nthreads, cgnn_err *err);

/* Opens the index for edge type `etype` of ds: from its cache file (csc_cache_file) when it is
 * current, else built (and cached when there is a cache folder). Rows are the nodes of
 * the edge type's dst type, source ids are per-type ids of its src type: g->num_nodes =
 * N(dst type), g->num_src_nodes = N(src type), index_bytes from N(src type), first_node 0 (for
 * an untyped graph both are its N nodes, exactly csc_build). A part of a
 * partitioned graph (ds->partition.present) is refused with CGNN_ERR_INPUT: its features and
 * ids are not those of a whole graph; open it with partbook_open (graph/partbook.h). */
int csc_open_cached(csc_graph *g, const dataset *ds, int etype, int nthreads, cgnn_err *err);

/* Writes the path of edge type etype's cache file into out[cap] (cgnn's cache folder, created:
 * $CGNN_CACHE_DIR/csc/csc-v<version>-<N>-<N src>-<E>-<id dtype>-<crc src><crc dst>.bin). Reads
 * the whole edge list (its CRC-32s). 0, or -1 with *err when there is no cache folder. */
int csc_cache_file(char *out, size_t cap, const dataset *ds, int etype, cgnn_err *err);

/* Releases *g; NULL-safe and safe on a zeroed graph. */
void csc_free(csc_graph *g);

/* The share of g's edges u -> v whose reverse v -> u is also an edge, over up to max_samples
 * edges spread evenly over the edge list (self-loops and edges whose source has more than 4096
 * in-edges are not counted). -1 when no edge was counted. For a whole homogeneous graph (source
 * and destination ids one space); deterministic. A graph listed one way (a citation list from a
 * CSV) gives ~0: message passing then only follows edge direction (tests/test_csc.c). */
double csc_reverse_fraction(const csc_graph *g, int64_t max_samples);
/* Warns (log_warn, naming what) when under 5% of the sampled edges have their reverse. */
void csc_warn_one_way(const csc_graph *g, const char *what);

/* In-degree of row v (node first_node + v). */
static inline int64_t csc_degree(const csc_graph *g, int64_t v) { return g->indptr[v + 1] - g->indptr[v]; }

/* The i-th in-neighbour id (absolute position i in indices). */
static inline int64_t csc_index(const csc_graph *g, int64_t i) {
    return g->index_bytes == 4 ? (int64_t)((const int32_t *)g->indices)[i]
                               : ((const int64_t *)g->indices)[i];
}

/* Degree summary for `cgnn info`. */
typedef struct csc_degree_stats {
    int64_t min, max, median, p99;
    double mean;
    int64_t num_isolated; /* nodes with in-degree 0 */
} csc_degree_stats;
void csc_degree_summary(const csc_graph *g, csc_degree_stats *s);

/* Plain single-threaded reference of csc_build (same output). */
int csc_build_ref(csc_graph *g, int64_t num_nodes, const ds_edges *edges, cgnn_err *err);

#endif
