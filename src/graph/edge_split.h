/* edge_split.h — GiGL's self-supervised link prediction split of one edge type's edges.
 *
 * GiGL (gigl/distributed/dataset_factory.py, gigl/utils/data_splitters.py) trains link
 * prediction on a graph without labelled pairs when trainerArgs gives
 * ssl_positive_label_percentage p:
 *   1. labels: select_ssl_positive_label_edges picks floor(E * p) of the supervision edge type's
 *      E edges (torch.randperm(E)[:n]: a uniform random subset);
 *   2. split: DistNodeAnchorLinkSplitter splits the labels PER ANCHOR NODE (the label edges'
 *      source nodes, GiGL's default sampling direction "in" with the labels reversed): every
 *      distinct anchor a gets h = _fast_hash(a) (SplitMix64's finaliser twice, on a + 1, in
 *      int64), normalised n = float32(h - min h) / float32(max h) over all anchors (min / max
 *      all-gathered over ranks), and goes to test if n >= 1 - num_test, else to validation if
 *      n >= 1 - num_test - num_val, else to train; an anchor's label edges all follow it.
 *      num_val / num_test are fractions (GiGL reads them with float()), num_val in (0, 1),
 *      num_test in [0, 1), their sum < 1; the split sizes are what the hash gives, not exact.
 * cgnn does the same with two choices of its own: the label subset is the first n of a
 * Fisher-Yates permutation keyed by cgnn's seed (GiGL's randperm is unseeded; the same seed
 * gives the same bits here for any thread / rank count: every rank computes the whole split
 * serially), and the split of the anchors is GiGL's bit for bit (the hash has no seed: for the
 * same labels, GiGL and cgnn put every anchor in the same split).
 *
 * Message passing: GiGL keeps every edge of the graph (labels are copied into a label edge type
 * that is never sampled), so validation and test labels are also message-passing edges.
 * edge_split_csc builds the supervision edge type's in-neighbour index without the validation
 * and test label edges and their reverse copies (edge_split_mark_reverse: the same pair stored
 * the other way, in the same edge type or in a reverse edge type), cgnn's default (docs/CONFIG.md,
 * "Self-supervised link prediction"), or with every edge (keep_eval). Training labels stay
 * message-passing edges, as in GiGL.
 */
#ifndef CGNN_EDGE_SPLIT_H
#define CGNN_EDGE_SPLIT_H

#include <stdint.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "util/err.h"

enum { EDGE_SPLIT_TRAIN = 0, EDGE_SPLIT_VALID = 1, EDGE_SPLIT_TEST = 2, EDGE_SPLIT_COUNT = 3 };

typedef struct edge_split {
    int64_t num_edges;                       /* E: the edge type's edges */
    int64_t num_labels;                      /* floor(E * p) */
    int64_t num_anchors[EDGE_SPLIT_COUNT];   /* distinct anchors (sources) per split */
    int64_t num_pairs[EDGE_SPLIT_COUNT];     /* label edges per split (sum = num_labels) */
    int64_t *pairs[EDGE_SPLIT_COUNT];        /* (num_pairs[s], 2): (src, dst) = (anchor, positive), in
                                                edge-list order; owned (never NULL after make) */
    uint8_t *which;                          /* (E): 0 = not a label, 1 + split otherwise; owned */
} edge_split;

/* GiGL's _fast_hash on int64 ids: x + 1, then SplitMix64's finaliser (arithmetic shifts,
 * wrapping multiplies) twice. */
int64_t edge_split_fast_hash(int64_t x);

/* GiGL's _create_distributed_splits_from_hash for n hashes (one per distinct anchor): out[i] =
 * EDGE_SPLIT_TRAIN / VALID / TEST. The normalisation and the comparisons are float32 as torch
 * computes them. */
void edge_split_assign(uint8_t *out, const int64_t *hash, int64_t n, double num_val, double num_test);

/* Checks p, num_val, num_test as GiGL does (p in (0, 1]: GiGL also takes 0, which selects no
 * labels and fails later; cgnn refuses it here). Returns 0, or -1 with CGNN_ERR_INPUT and a
 * message naming the field (the caller prefixes the file). */
int edge_split_check(double p, double num_val, double num_test, cgnn_err *err);

/* Splits the edges (src ids in [0, num_src)) of one edge type. Deterministic in (edges, p,
 * num_val, num_test, seed). Returns 0, or -1 with *err (bad arguments, no labels: E * p < 1).
 * The caller owns *s (edge_split_free). */
int edge_split_make(edge_split *s, const ds_edges *edges, int64_t num_src, double p, double num_val,
                    double num_test, uint64_t seed, cgnn_err *err);

/* Marks drop[e] = 1 for every edge e of `edges` whose reverse (dst[e], src[e]) is a validation
 * or test label of s (edges already marked stay so), and returns how many it marked: the reverse
 * copies of the held-out pairs, in the supervision edge type itself when its source and
 * destination node types are the same (an undirected graph stores each edge both ways), or in a
 * reverse edge type (d, r', s) of the supervision edge type (s, r, d). O((L + E) log L) for L
 * held-out labels; drop has E entries. */
int64_t edge_split_mark_reverse(uint8_t *drop, const ds_edges *edges, const edge_split *s);
/* Builds the in-neighbour index of `edges` (rows = num_dst destination ids, sources in
 * [0, num_src)) without the validation and test label edges of s (s may be NULL: none; s must be
 * this edge type's split) and without the edges e with also_drop[e] != 0 (also_drop may be NULL);
 * keep_eval: with every edge. Built once at start-up, in edge-list order like csc_build (the
 * same index for any nthreads). *removed = the edges left out. Returns 0 or -1 with *err. The
 * caller owns *g (csc_free). */
int edge_split_csc(csc_graph *g, const ds_edges *edges, int64_t num_dst, int64_t num_src, const edge_split *s,
                   const uint8_t *also_drop, int keep_eval, int nthreads, int64_t *removed, cgnn_err *err);
/* Releases *s; NULL-safe. */
void edge_split_free(edge_split *s);

#endif
