/* import_csv.h — a user's graph as CSV files (and .npy arrays) into a GraphBolt on-disk dataset
 * with splits (`cgnn import csv`; docs/BRING_YOUR_OWN_DATA.md).
 *
 * Inputs (io/csv.h reads the CSVs; a header line is skipped and logged):
 *   edges          "src,dst" per line: node ids in [0, N), int64
 *   node_features  one row of F numbers per node (CSV, read as float32), or an (N, F) .npy of any
 *                  feature dtype the dataset reader takes (copied as it is)
 *   labels         CSV with one column (row i: node i's class) or two ("node,label"), or an (N,)
 *                  integer .npy; a negative label marks an unlabelled node
 * N is num_nodes when given, else the feature rows, else the label rows / largest id + 1; an id
 * or a row count that disagrees with N is an error naming the file and line.
 *
 * Output in out_dir (which the caller stages: cli_import.c): edges.npy (2, E) int64 C order;
 * node-feat.npy; metadata.yaml; and per task its split arrays:
 *   node_classification (labels given): the labelled nodes in a seeded random order, split
 *     train / validation / test = the rest / floor(val_frac L) / floor(test_frac L);
 *   link_prediction (link_prediction set): edges held out for validation and test
 *     (floor(frac x M) of the M candidate pairs: with undirected, each {u, v} once, u != v; else
 *     each directed edge, self-loops excluded) and removed from the graph (both directions when
 *     undirected); the train set is the pairs left (anchor, positive).
 * undirected adds every edge's reverse and drops duplicate edges (sorted by dst, then src), as
 * PyG's to_undirected does; without it the edges are written in the file's order (less the
 * held-out ones). The output
 * depends only on the inputs and the parameters (seed), never on threads.
 */
#ifndef CGNN_IMPORT_CSV_H
#define CGNN_IMPORT_CSV_H

#include <stdint.h>

#include "util/err.h"

typedef struct import_csv_params {
    const char *edges;          /* required */
    const char *node_features;  /* .csv or .npy; NULL: none (the model then needs node_embedding_dim) */
    const char *labels;         /* .csv or .npy; NULL: no node classification task */
    int64_t num_nodes;          /* 0: from the inputs */
    int undirected;
    int link_prediction;
    double val_frac, test_frac; /* of the labelled nodes (NC) and of the candidate pairs (LP), in [0, 1) */
    uint64_t seed;
    const char *name;           /* dataset_name ("imported") */
} import_csv_params;

/* Defaults: val_frac 0.2, test_frac 0.2, seed 0, name "imported", the rest off. */
void import_csv_default_params(import_csv_params *p);

typedef struct import_csv_stats {
    int64_t num_nodes, input_edges, num_edges, feat_dim, num_labelled, num_classes;
    int64_t nc_split[3], lp_split[3]; /* train, validation, test items (0 when the task is absent) */
    double reverse_fraction;          /* share of input edges whose reverse is also an input edge */
} import_csv_stats;

/* Writes the dataset into out_dir (an existing empty directory). 0, or -1 with *err
 * (CGNN_ERR_INPUT naming the input file and line / field). */
int import_csv(const char *out_dir, const import_csv_params *p, import_csv_stats *st, cgnn_err *err);

#endif
