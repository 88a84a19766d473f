/* generate.h — synthetic graphs in the on-disk dataset format (`cgnn generate`).
 *
 * Model: every node has a class (uniform) and a target degree drawn from a discretised
 * power law (Pareto, exponent `degree_exponent`), scaled so the degrees sum to the requested
 * edge count (Chung-Lu / configuration model with stub lists). Each undirected edge picks one
 * endpoint proportional to target degree; with probability `homophily` the other endpoint is
 * drawn (proportional to degree) from the same class, otherwise from all nodes. Both
 * directions are written, so in- and out-degrees follow the same law. Self-loops are redrawn;
 * rare duplicate edges are kept (as in real crawled graphs).
 * Features: x = signal * centroid[class] + N(0, 1) noise, float32, so a GNN can learn.
 * Splits: a random permutation cut into train/validation/test fractions.
 * Optional link-prediction task: a fraction of the undirected edges are held out as
 * validation/test pairs (removed from the message-passing graph); training pairs are the
 * remaining edges.
 * Deterministic by seed: the output depends only on the parameters, never on thread count.
 *
 * Typed variant (`typed`): the SAME N nodes (classes and target degrees drawn exactly as above,
 * node i of the homogeneous graph is homogenised node i here) cut into three node types by id
 * range: user [0, N_u), item [N_u, N_u + N_i), tag [N_u + N_i, N), N_u = floor(N *
 * GEN_TYPED_USER_FRAC), N_i = floor(N * GEN_TYPED_ITEM_FRAC), tag the rest. The M undirected
 * draws of the homogeneous graph are split between three relations so that every node keeps
 * its target degree in expectation: with S_u, S_i, S_t the types' stub (target degree) sums,
 * item-tag gets 2M·S_t/S draws, user-item 2M·(S_i - S_t)/S and user-user the rest (each
 * endpoint drawn proportional to degree within its type, the second one from the first one's
 * class with probability `homophily`). Written as five edge types, both directions of every
 * edge: user:clicks:item + item:clicked_by:user, item:has:tag + tag:of:item, user:follows:user
 * (both directions in one file); so the total directed edge count is exactly 2M, as in the
 * homogeneous graph, and the homogenised in-degrees follow the same law. Features (F wide, the
 * same class centroids) for user and item, tag featureless; node classification on item; with
 * `link_prediction`, lp_val_frac / lp_test_frac of the user:clicks:item edges are held out as
 * a link_prediction task on that edge type (and removed, with their reverse edges, from the
 * graph).
 */
#ifndef CGNN_GENERATE_H
#define CGNN_GENERATE_H

#include <stdint.h>

#include "util/err.h"

typedef struct generate_params {
    int64_t num_nodes;       /* N */
    double avg_degree;       /* average in-degree D: the file holds about N*D directed edges */
    int num_classes;         /* C */
    int feat_dim;            /* F */
    double homophily;        /* in [0, 1]: fraction of edges drawn within a class */
    double degree_exponent;  /* power-law exponent of the degree distribution (> 2), default 2.5 */
    double signal;           /* class signal strength in the features, default 1.0 */
    double train_frac, val_frac; /* test = the rest */
    int link_prediction;     /* also write a link_prediction task */
    double lp_val_frac, lp_test_frac; /* fraction of edges held out for LP validation / test */
    uint64_t seed;
    int num_threads;         /* 0 = OpenMP default; never changes the output */
    const char *name;        /* dataset_name in metadata.yaml */
    int typed;               /* write the typed (user / item / tag) variant, see above */
} generate_params;

/* Node type sizes of the typed variant, as fractions of num_nodes (tag: the rest, 0.1). */
#define GEN_TYPED_USER_FRAC 0.5
#define GEN_TYPED_ITEM_FRAC 0.4

/* What generate_dataset_stats reports about the written dataset. */
typedef struct generate_stats {
    int64_t num_edges;       /* directed edges in the graph, over all edge types */
    int num_edge_types;
    int64_t type_nodes[3];   /* typed: user, item, tag; homogeneous: [0] = N */
    int64_t etype_edges[5];  /* typed: clicks, clicked_by, has, of, follows (file order) */
} generate_stats;

/* Fills *p with defaults (a small graph: 10k nodes, D=10, 10 classes, F=32, homophily 0.8). */
void generate_default_params(generate_params *p);

/* The products-scale benchmark preset: 2.4M nodes, D~25.8 (~62M directed edges), F=100, 47 classes
 * (the shape of ogbn-products). */
void generate_products_params(generate_params *p);

/* Writes the dataset into directory out_dir (created if missing; existing files of a previous
 * generate are replaced atomically). Returns 0, or -1 with *err. */
int generate_dataset(const char *out_dir, const generate_params *p, cgnn_err *err);
/* The same, and fills *st (may be NULL) on success. */
int generate_dataset_stats(const char *out_dir, const generate_params *p, generate_stats *st, cgnn_err *err);

#endif
