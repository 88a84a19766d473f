/* sample_weights.h — the draw weights of weighted neighbour sampling (sampler.h, "Weighted
 * sampling"): an edge feature of the dataset, named by trainerArgs.sampling_weight (GraphBolt's
 * prob_name, PyG's weight_attr), validated and reordered once into CSC order.
 *
 * The feature is a `feature_data` entry with `domain: edge` (of the edge type, typed datasets),
 * one value per edge in edge-list order: shape (E,) or (E, 1), any dtype the dataset reader holds
 * (float16/32/64 weights; uint8 / int8 / int32 / int64 integer weights, a 0/1 mask among them).
 * Every value must be finite and >= 0 (a negative one, or a positive float64 that is 0 or
 * infinite as float32, is CGNN_ERR_INPUT naming the file and row); 0 means never drawn. The
 * index orders each node's in-edges stably by edge-list position (graph/csc.h), so the weight of
 * edge e goes to position cursor[dst(e)]++ of a copy of indptr.
 */
#ifndef CGNN_SAMPLE_WEIGHTS_H
#define CGNN_SAMPLE_WEIGHTS_H

#include "graph/csc.h"
#include "io/dataset.h"
#include "util/err.h"

/* The weights of edge type etype's edges (feature `name`, domain edge) reordered into the CSC
 * order of g (its index, built from the same edges: a whole graph's, or a part's
 * csc_build_range over the part's edges, rows from g->first_node), as float32, into *out
 * ((g->num_edges) floats, malloc'd; the caller owns it). *zero_nodes (may be NULL): the nodes
 * with in-edges that all weigh 0 (they draw nothing). Returns 0, or -1 with *err
 * (CGNN_ERR_INPUT: no such feature, not one column, a bad value, naming the file and row). */
int sample_weights_load(const dataset *ds, int etype, const csc_graph *g, const char *name, float **out,
                        int64_t *zero_nodes, cgnn_err *err);

/* The same from raw arrays: w (E) in edge-list order (npy dtype w_dtype), dst ids (E) of dtype
 * id_dtype, into out (E) in the CSC order of g; `path` names the file in errors. For tests. */
int sample_weights_to_csc(const csc_graph *g, const void *w, npy_dtype w_dtype, const void *dst, npy_dtype id_dtype,
                          int64_t num_edges, const char *path, float *out, cgnn_err *err);

#endif
