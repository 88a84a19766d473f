/* partbook.h — the partition book: what a training rank loads of a partitioned graph
 * (`cgnn partition`, graph/partition.h; the layout is in docs/DISTRIBUTED.md, "cgnn partition").
 *
 * A partitioned graph is a directory OUT holding the partition JSON (DGL's layout,
 * OUT/<name>.json), two id maps (OUT/orig_ids.npy: new -> original, OUT/new_ids.npy: original ->
 * new; int64, N entries each), one GraphBolt dataset per part (OUT/part<p>/) and the whole
 * splits (OUT/global/). New ids are sorted by (part, original id): part p owns the contiguous
 * new ids [node_map[p], node_map[p+1]), and inside a part new ids keep the original order.
 *
 * partbook_open loads the JSON and ONE part:
 *   - ds: the part as a dataset: node features hold the part's rows only (row i = new id
 *     first + i), each task's splits hold the seeds the part owns (a pair belongs to the part of
 *     its anchor), in the original row order, seeds in new ids; edges are the in-edges of the
 *     part's nodes in new ids, in the original edge order;
 *   - global: the whole splits (new ids, original row order: slicing them as the replicated run
 *     does gives the same items; a dataset with no edges and no features);
 *   - local: the in-neighbour index of the part's nodes: row i = in-edges of new id first + i,
 *     sources as global new ids, in the original edge order (csc_build_range; never cached);
 *   - the id maps, memory-mapped (never copied): new_of_orig, orig_of_new (N entries each), and
 *     orig_of_local = orig_of_new + first (samplers key their draws by original id).
 * Memory per rank: its part (edges, features, splits, local index) plus the two N-entry maps
 * (16 N bytes, shared through the page cache by the ranks of one machine) and the global splits.
 *
 * A typed graph (DistDGL's heterogeneous layout; graph/partition.h): the JSON's ntypes / etypes
 * name the node and edge types, node_map / edge_map hold one range list per type (ranges of
 * DGL's homogeneous new ids, ordered (part, type)); new ids are per type, part p owning the
 * per-type ids [type_map[t][p], type_map[t][p+1]) of type t; the id maps are one pair of files
 * per node type (per-type ids), and each part's dataset is typed. partbook_open then loads, per
 * edge type k, the in-neighbour index of the part's dst nodes of k's dst type (type_local[k]:
 * row i = in-edges of per-type id type_map[dst][part] + i through k, sources as per-type new ids
 * of k's src type, original edge order) and maps the per-type id maps.
 *
 * Everything is validated as the hardening rules say (ARCHITECTURE.md): the JSON strictly (types,
 * ranges, node_map / edge_map contiguous from 0 to N / E, paths relative and inside OUT), the part
 * by dataset_open (ids in range, owned edge dsts and seeds, feature rows), the part and the
 * global splits against the JSON (same partition id, part number, node range, node and edge
 * counts), and the maps (int64, N entries, inverse of each other, ascending original ids within
 * every part). A part directory from another partitioning run (another id) is an input error
 * naming both files. Errors are CGNN_ERR_INPUT for bad files, CGNN_ERR_RUNTIME for exhausted
 * memory.
 */
#ifndef CGNN_PARTBOOK_H
#define CGNN_PARTBOOK_H

#include <stdint.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "util/err.h"

/* The partition JSON may be at most this large (about 250 bytes per part). */
#define PARTBOOK_MAX_JSON_BYTES ((int64_t)64 << 20)

/* One split's seeds per part, from the JSON's stats. */
typedef struct partbook_seedstat {
    char task[DATASET_NAME_MAX];
    char split[32];               /* "train_set", "validation_set", "test_set" */
    int64_t total;
    int64_t *per_part;            /* (P) owned */
    double balance;               /* max / mean */
} partbook_seedstat;

/* The JSON's "stats" (deterministic) and OUT/run.yaml (the run's measurements), for `cgnn info`. */
typedef struct partbook_stats {
    int present;                  /* 0 when the JSON has no "stats" */
    int64_t edge_cut;
    double edge_cut_fraction;
    int64_t *part_nodes, *part_edges; /* (P) owned */
    double node_balance, edge_balance;
    int num_seedsets;
    partbook_seedstat *seeds;     /* (num_seedsets) owned */
    int64_t metis_sym_adjacency;  /* 0 unless METIS ran */
    int64_t metis_constraints, metis_objective;
    int have_run;                 /* run.yaml was found and read */
    int run_threads;
    double run_seconds, run_seconds_assign, run_seconds_write;
    int64_t run_peak_rss_bytes;   /* the whole run */
    int64_t run_peak_rss_loaded;  /* when the dataset was loaded */
    int64_t run_peak_rss_assigned; /* when the assignment was done (METIS's footprint is the step) */
} partbook_stats;

typedef struct partbook {
    /* ---- the partition JSON (partbook_read_json and partbook_open) ---- */
    char json_path[4096];
    char dir[4096];               /* the directory holding the JSON (OUT) */
    char graph_name[DATASET_NAME_MAX];
    char part_method[16];         /* "metis" or "random" */
    char partition_id[DS_PARTITION_ID_MAX];
    int num_parts;                /* P */
    int64_t seed;
    int64_t num_nodes;            /* N, the whole graph */
    int64_t num_edges;            /* E, the whole graph */
    int64_t max_in_degree;        /* of the whole graph: samplers size their buffers with it */
    int64_t *node_map;            /* (P + 1): part p owns new ids [node_map[p], node_map[p+1]) */
    int64_t *edge_map;            /* (P + 1): part p holds edges [edge_map[p], edge_map[p+1]) */
    char **part_dirs;             /* (P) resolved directories of the parts */
    char orig_ids_path[4096], new_ids_path[4096], global_dir[4096];
    partbook_stats stats;
    /* typed graphs (see the top; typed = 0 and the arrays NULL for a homogeneous graph) */
    int typed;
    int num_node_types, num_edge_types;         /* T, K */
    char (*ntype_names)[DATASET_NAME_MAX];      /* (T) in ntypes' id order */
    char (*etype_names)[3 * DATASET_NAME_MAX];  /* (K) "src:rel:dst", in etypes' id order */
    int *etype_src, *etype_dst;                 /* (K) node types of each edge type's ends */
    int64_t *type_nodes;                        /* (T) nodes of each type */
    int64_t *type_map;                          /* (T * (P + 1)) [t * (P + 1) + p]: first per-type new
                                                   id of type t in part p; [.. + P] = type_nodes[t] */
    int64_t *etype_map;                         /* (K * (P + 1)) edges of type k held by parts < p */
    int64_t *etype_max_in_degree;               /* (K) of the whole graph */
    char (*type_orig_paths)[4096], (*type_new_paths)[4096]; /* (T) the per-type id maps */

    /* ---- the loaded part (partbook_open only; part = -1 after partbook_read_json) ---- */
    int part;
    int64_t first;                /* node_map[part] */
    int64_t n_local;              /* node_map[part + 1] - first */
    dataset ds;                   /* the part (see the top of the file) */
    dataset global;               /* the whole splits (ds.partition.part == DS_PARTITION_GLOBAL) */
    csc_graph local;              /* row i = in-edges of new id first + i; sources global new ids */
    const int64_t *orig_of_local; /* (n_local) original id of new id first + i */
    const int64_t *new_of_orig;   /* (N) memory-mapped */
    const int64_t *orig_of_new;   /* (N) memory-mapped */
    npy_array orig_ids_file, new_ids_file; /* the mappings behind the two maps */
    /* typed (partbook_open; the maps also by partbook_open_maps) */
    csc_graph *type_local;        /* (K) see the top */
    npy_array *type_orig_files, *type_new_files; /* (T) */
    const int64_t **type_orig_of_new, **type_new_of_orig; /* (T) per-type maps, type_nodes[t] entries */
} partbook;

/* Reads and validates the partition JSON only (path: OUT, or the JSON itself; a directory must
 * hold exactly one *.json file) and OUT/run.yaml when present: every field above the "loaded
 * part" line, part = -1. For `cgnn info`, and for a trainer that needs num_parts before it
 * chooses its part. Returns 0, or -1 with *err; *pb is closed on failure. The caller owns *pb
 * (partbook_close). */
int partbook_read_json(partbook *pb, const char *path, cgnn_err *err);

/* Reads the JSON (as partbook_read_json) and loads part `part` (0 <= part < num_parts, else
 * CGNN_ERR_INPUT): ds, global, local, the maps. nthreads: threads for the index build and the
 * map checks (<= 0: OpenMP default; never changes the result). Returns 0, or -1 with *err; *pb
 * is closed on failure. The caller owns *pb (partbook_close). */
int partbook_open(partbook *pb, const char *path, int part, int nthreads, cgnn_err *err);

/* What a rank of a job of `world` ranks loads: reads the JSON, checks the world fits the parts
 * (partbook_check_world, the error prefixed with path) and opens part rank % P
 * (partbook_open). what (may be NULL) prefixes errors reading the JSON ("FILE: FIELD").
 * Returns 0, or -1 with *err; *pb is closed on failure. */
int partbook_open_for_rank(partbook *pb, const char *path, int rank, int world, int nthreads, const char *what,
                           cgnn_err *err);

/* Checks every part and the global splits against the JSON of pb (from partbook_read_json):
 * each opens as a dataset (dataset_open's checks) with the same partition id, part number, node
 * range and counts; and the id maps (inverse permutations, original ids ascending within every
 * part). What partbook_open checks of one part, for all of them (`cgnn info OUT`). Returns 0, or
 * -1 with *err (a part of another run names both files). */
int partbook_verify(const partbook *pb, int nthreads, cgnn_err *err);

/* After partbook_read_json: maps and checks the two id maps (new_of_orig, orig_of_new), without
 * loading a part. For a replicated run that takes its seed assignment from a partition
 * (trainerArgs.seed_partition_uri). Returns 0, or -1 with *err. */
int partbook_open_maps(partbook *pb, int nthreads, cgnn_err *err);

/* What a compute rank of server-client mode (train/graph_store.h) loads: the JSON (as
 * partbook_read_json), the global splits (checked against the JSON) and the two id maps; no
 * part (part = -1, ds and local stay empty): the storage ranks hold the parts. Returns 0, or -1
 * with *err; *pb is closed on failure. */
int partbook_open_client(partbook *pb, const char *path, int nthreads, cgnn_err *err);

/* 1 if path is the output of cgnn partition: a .json file, or a directory without
 * metadata.yaml holding a .json file; 0 otherwise (a dataset directory, or nothing there). */
int partbook_is_partition(const char *path);

/* Releases everything; NULL-safe, safe on a zeroed or closed partbook. */
void partbook_close(partbook *pb);

/* The part owning new id v (0 <= v < num_nodes): the p with node_map[p] <= v < node_map[p+1]. */
static inline int partbook_owner(const partbook *pb, int64_t v) {
    int lo = 0, hi = pb->num_parts - 1; /* the largest p with node_map[p] <= v (skips empty parts) */
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (pb->node_map[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Typed graphs: the part owning per-type new id v of node type t. */
static inline int partbook_type_owner(const partbook *pb, int t, int64_t v) {
    const int64_t *tm = pb->type_map + (size_t)t * (size_t)(pb->num_parts + 1);
    int lo = 0, hi = pb->num_parts - 1; /* the largest p with tm[p] <= v (skips empty ranges) */
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (tm[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The part rank `rank` of `world` loads: rank % num_parts (graphlearn-for-pytorch's rule: with
 * more ranks than parts, ranks r, r + P, r + 2P, ... share part r). */
static inline int partbook_part_for_rank(int num_parts, int rank, int world) {
    (void)world;
    return rank % num_parts;
}

/* Whether a world of `world` ranks fits num_parts parts: every part loaded by the same number of
 * ranks, i.e. world >= num_parts and world % num_parts == 0. Returns 0, or -1 with *err
 * (CGNN_ERR_INPUT) saying which world sizes would fit. For the trainer's collective check. */
int partbook_check_world(int num_parts, int world, cgnn_err *err);

#endif
