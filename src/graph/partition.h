/* partition.h — `cgnn partition`: cut a graph into P parts, renumber its nodes so that every
 * part owns one contiguous range of new ids, and write DGL's partition layout in which every
 * part is itself a GraphBolt on-disk dataset (read back one part at a time by graph/partbook.h).
 *
 * Dimension legend: N nodes, E edges (the dataset's directed edge list, duplicates and self
 * loops included), P parts, A entries of the symmetrised adjacency (<= 2E).
 *
 * Methods (partition_compute):
 *   metis   METIS k-way (Debian's libmetis, 32-bit idx_t) on the symmetrised graph (undirected,
 *           no self loops, duplicates merged), with DistDGL's multi-constraint vertex weights:
 *           1 per node, the node's in-degree (the edges its part will hold), and one
 *           constraint per non-empty split of every task (the number of times the node is a
 *           seed, or a pair's anchor, of that split). METIS_OPTION_SEED = seed, one cut;
 *           deterministic. A graph whose symmetrised adjacency or a constraint total does not
 *           fit idx_t (2^31 - 1) is refused (use random).
 *   random  a seeded uniform permutation of the nodes (util/rng keyed draws) cut into P equal
 *           ranges: balanced within one node.
 * P = 1 puts every node in part 0 with either method.
 *
 * Renumbering: new ids are sorted by (part, original id), so part p owns the new ids
 * [node_map[p], node_map[p+1]) and, inside a part, new ids keep the original order.
 *
 * Typed (heterogeneous) datasets, DistDGL's layout: the assignment is computed on the
 * homogenised graph (node (t, i) is offset[t] + i, every edge type's edges together as one
 * graph; METIS balances each node type's count separately, DistDGL's balance_ntypes, instead
 * of the single node count), and new ids are PER TYPE: within type t, sorted by (part, original
 * per-type id), so part p owns the per-type ids [type_map[t][p], type_map[t][p+1]) of every type.
 * DGL's homogeneous new ids order the nodes by (part, type, id): node_map[p] is the first of
 * part p there. Each edge type's edges are held by the part of their dst.
 *
 * Memory: partition_compute holds the assignment, in-degrees and both id maps (28 N bytes) plus,
 * for metis, the symmetrised graph and METIS's own copies (see docs/DISTRIBUTED.md for the measured
 * bound); partition_write groups the edge indices by part (4 E bytes) and streams every file.
 */
#ifndef CGNN_PARTITION_H
#define CGNN_PARTITION_H

#include <stdint.h>

#include "io/dataset.h"
#include "util/err.h"

typedef enum partition_method { PARTITION_METIS, PARTITION_RANDOM, PARTITION_METHOD_COUNT } partition_method;

/* "metis", "random". */
const char *partition_method_name(partition_method m);
/* Parses a method name; returns 0, or -1 if unknown. */
int partition_method_parse(const char *s, partition_method *out);

#define PARTITION_MAX_PARTS DS_PARTITION_MAX_PARTS
#define PARTITION_MAX_SEED 2147483647 /* METIS_OPTION_SEED is a 32-bit idx_t */

typedef struct partition_params {
    int num_parts;            /* P, 1 .. min(N, PARTITION_MAX_PARTS) */
    partition_method method;
    int64_t seed;             /* 0 .. PARTITION_MAX_SEED */
    int num_threads;          /* 0 = OpenMP default; never changes the output */
} partition_params;

/* The seeds of one split of one task, counted per part (a pair counts for its anchor's part). */
typedef struct partition_seedset {
    int task;                 /* index into ds->tasks */
    int split;                /* ds_split_id */
    int64_t total;            /* items of the split */
    int64_t *per_part;        /* (P) owned */
} partition_seedset;

typedef struct partition_result {
    int num_parts;
    partition_method method;
    int64_t seed;
    int64_t num_nodes, num_edges; /* over all types */
    int32_t *assign;          /* (N) part of original node v (typed: homogenised id offset[t] + i) */
    int64_t *node_map;        /* (P + 1) new-id range starts; node_map[P] = N (typed: DGL's
                                 homogeneous new ids, ordered (part, type, id)) */
    int64_t *edge_map;        /* (P + 1) edge ranges: part p owns the in-edges of its nodes */
    int64_t *new_of_orig;     /* (N) typed: entry offset[t] + i holds the per-type new id of (t, i) */
    int64_t *orig_of_new;     /* (N) typed: entry offset[t] + j holds the original per-type id of
                                 per-type new id j of type t */
    int64_t max_in_degree;    /* over the whole graph (typed: the largest of any edge type) */
    /* typed graphs (1 node type and 1 edge type, typed = 0, for an untyped dataset) */
    int typed;
    int num_node_types, num_edge_types; /* T, K */
    int64_t *type_offset;     /* (T + 1) homogenised id of (t, 0) */
    int64_t *type_map;        /* (T * (P + 1)) [t * (P + 1) + p]: first per-type new id of part p */
    int64_t *etype_map;       /* (K * (P + 1)) [k * (P + 1) + p]: edges of type k held by parts < p */
    int64_t *etype_max_in_degree; /* (K) */
    int64_t edge_cut;         /* edges (of the E) whose src and dst are in different parts */
    int num_seedsets;
    partition_seedset *seedsets; /* every present split of every task, in task then split order */
    /* metis only (0 otherwise) */
    int64_t sym_adjacency;    /* A */
    int metis_constraints;    /* ncon */
    int64_t metis_objective;  /* METIS's edge cut of the symmetrised graph */
    char id[17];              /* the partition id: 16 lowercase hex digits */
    double seconds_assign;    /* time of the assignment (METIS or the permutation) */
} partition_result;

/* Computes the assignment, the renumbering, the statistics and the id of ds (a whole, already
 * validated dataset, typed or not) under *p. Returns 0, or -1 with *err: CGNN_ERR_INPUT for a graph METIS
 * cannot take or bad parameters, CGNN_ERR_RUNTIME for METIS failures or exhausted memory. The
 * caller owns *r (partition_free) either way. */
int partition_compute(partition_result *r, const dataset *ds, const partition_params *p, cgnn_err *err);

/* The node type of task `task`'s seeds (a pair's anchor: the src type of its edge type): the
 * type whose owner holds a split row. 0 for an untyped dataset. */
int partition_anchor_type(const dataset *ds, int task);

/* Releases *r; NULL-safe, safe on a zeroed result. */
void partition_free(partition_result *r);

/* Writes the partition of ds described by r into the directory dir (created; normally a
 * staging directory the caller renames into place): <name>.json, orig_ids.npy, new_ids.npy,
 * part<p>/ (a dataset each) and global/ (the whole splits). See docs/DISTRIBUTED.md, "cgnn partition", for the
 * layout. Deterministic: the bytes depend on (ds, r) only, never on nthreads. Returns 0, or -1
 * with *err (CGNN_ERR_RUNTIME naming the file). */
int partition_write(const char *dir, const dataset *ds, const partition_result *r, int nthreads, cgnn_err *err);

/* The file name of the partition JSON for a dataset name: "<name>.json" with every character
 * outside [A-Za-z0-9._-] replaced by '_' (and a leading '.' too), written into out[cap]. */
void partition_json_name(const char *dataset_name, char *out, size_t cap);

/* What the run measured (not part of the deterministic output): written to dir/run.yaml. */
typedef struct partition_run_info {
    const char *source_dataset; /* --dataset as given */
    int threads;
    double seconds_total, seconds_assign, seconds_write;
    int64_t peak_rss_bytes;          /* of the whole run (getrusage ru_maxrss) */
    int64_t peak_rss_bytes_loaded;   /* ... when the dataset was open and validated */
    int64_t peak_rss_bytes_assigned; /* ... when the assignment, maps and stats were done */
} partition_run_info;
int partition_write_run(const char *dir, const partition_run_info *info, cgnn_err *err);

/* ---- building blocks (exposed for tests) --------------------------------------------------- */

/* The symmetrised graph in METIS's CSR: neighbours of v are adjncy[xadj[v] .. xadj[v+1]),
 * sorted ascending, without v itself and without duplicates. */
typedef struct partition_symgraph {
    int64_t num_nodes;
    int64_t nnz;              /* A = xadj[N] */
    int32_t *xadj;            /* (N + 1) */
    int32_t *adjncy;          /* (A) */
} partition_symgraph;

/* Builds the symmetrised graph of `edges` over n nodes. Returns 0, or -1 with *err:
 * CGNN_ERR_INPUT when A or n exceeds 2^31 - 1 (the message suggests --method random),
 * CGNN_ERR_RUNTIME when out of memory. The caller frees with partition_symgraph_free. */
int partition_symmetrize(partition_symgraph *g, int64_t n, const ds_edges *edges, int nthreads, cgnn_err *err);
void partition_symgraph_free(partition_symgraph *g);

/* assign[v] for a seeded uniform permutation cut into P equal ranges (sizes differ by <= 1). */
void partition_random_assign(int32_t *assign, int64_t n, int num_parts, uint64_t seed);

/* node_map (P + 1), new_of_orig (N) and orig_of_new (N) for assign: new ids sorted by
 * (part, original id). */
void partition_renumber(const int32_t *assign, int64_t n, int num_parts, int64_t *node_map, int64_t *new_of_orig,
                        int64_t *orig_of_new);

#endif
