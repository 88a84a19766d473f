/* dataset.h — DGL GraphBolt OnDiskDataset (raw form): metadata.yaml + .npy/.csv/torch files.
 *
 * dataset_open parses metadata.yaml, opens every referenced file and validates it (dtypes,
 * shapes, node ids in range, labels, split seeds); every failure names the file and the field
 * or row. Features and edges are memory-mapped (in_memory: true pre-faults the pages once;
 * false leaves them to be paged in on demand), so nothing is copied per process; a `format:
 * torch` file (one tensor saved with torch.save) is read whole into memory the dataset owns.
 *
 * GraphBolt's schema as GraphBolt (dgl 3d16000b41) reads it (docs/DATASETS.md, "GraphBolt's
 * schema, all of it"): format numpy | torch for features and task data (edges numpy | csv);
 * `type: null` = no type; extra keys ignored with a log line, typos of known keys errors with
 * "did you mean"; domain: graph features and graph.feature_data read, validated and not kept;
 * unnamed tasks named by their path ("tasks[1]"); unnamed or unknown data entries not read (a
 * log line); the older names seed_nodes / node_pairs (+ negative_dsts, expanded into seeds,
 * labels and indexes as GraphBolt's item sampler does) read as seeds; features of every dtype;
 * labels / indexes of any integer dtype or floats holding integers; node seeds without labels
 * make a task of kind DS_TASK_OTHER.
 *
 * Typed graphs: the dataset holds arrays of node types and edge types. A homogeneous dataset
 * (no `type:` keys) has exactly one node type and one edge type, both named "_default"; callers
 * index types by number, so heterogeneous graphs add entries, not new code paths.
 *
 * A typed (heterogeneous) dataset, as DGL GraphBolt writes it, has `type:` keys everywhere:
 *   graph.nodes:   - {type: NAME, num: N}       names unique, non-empty, without ':'
 *   graph.edges:   - {type: "src:relation:dst", format: numpy|csv, path}
 *                  exactly three non-empty parts; src and dst declared node types; no duplicates
 *   feature_data:  - {domain: node, type: NODE_TYPE, ...}  (N(type), dim) rows
 *                  - {domain: edge, type: "s:r:d", ...}    (E(edge type), dim) rows; read,
 *                    validated and ignored by training (a log line says so)
 *   tasks[i].train_set / validation_set / test_set: one set each, `- {type: T, data: [...]}`:
 *                  T a node type for node classification (seeds (N,) in [0, N(T))), an edge
 *                  type for link prediction (seeds (M, 2): column 0 in [0, N(src type)),
 *                  column 1 in [0, N(dst type))); every split of a task has the same type
 *                  (one type per task). A task whose splits list a set per type (GraphBolt's
 *                  heterograph tutorial) is read as one task per type, "NAME[TYPE]", each
 *                  with its type's sets (config_find_task picks by the supervision type).
 * Node ids are per type, from 0; an edge type's src ids are ids of its src type and its dst ids
 * ids of its dst type. The homogenised id space puts the types one after another in declaration
 * order: global id = dataset_node_type_offset(ds, t) + per-type id. A dataset is either fully
 * typed or untyped (mixing is an error); node types without features are allowed.
 *
 * Split seeds and labels are small next to features and edges; they are converted to int64
 * arrays owned by the dataset so that consumers need not care about their on-disk dtype.
 *
 * One part of a partitioned graph (`cgnn partition`, graph/partition.h) is a dataset with a
 * top-level `partition:` key (ds_partition): ids are the partition's global new ids, the
 * node count is the whole graph's, and the part owns the nodes [node_start, node_end). Then
 * node features have node_end - node_start rows (row i = node node_start + i), every edge's
 * dst and every split seed (a pair's anchor) is an owned node, and all of it is validated as
 * strictly as a whole dataset. `part: global` marks the partition's global splits (the whole
 * range, no features). Such datasets are read through graph/partbook.h; csc_open_cached
 * refuses them.
 *
 * A typed part (`cgnn partition` of a typed dataset) owns one range of per-type ids per node
 * type instead: `partition.node_ranges` lists {type, start, end} for every node type, in
 * graph.nodes order (node_start / node_end are refused there), graph.nodes[t].num is the whole
 * graph's count of type t, node features of type t have end - start rows (row i = id start + i),
 * an edge type's dsts lie in its dst type's range, and every split seed (a pair's anchor, of the
 * edge type's src type) in its type's range. ds_node_type.own_start / own_end hold the range
 * ([0, num) for a whole dataset; for an untyped part, node_start / node_end).
 */
#ifndef CGNN_DATASET_H
#define CGNN_DATASET_H

#include <stdint.h>

#include "io/npy.h"
#include "util/err.h"

#define DATASET_NAME_MAX 128
/* num_classes above this is refused (naming metadata.yaml) rather than sizing a classifier
 * layer of that width: 2^24 classes x 256 channels is already 16 GiB of weights. */
#define DATASET_MAX_CLASSES ((int64_t)1 << 24)
/* graph.nodes[i].num, and their sum over node types, above this is refused (naming
 * metadata.yaml and the entry): 2^48 nodes (a graph index of 2 PiB) is past any machine, and
 * bounding every count keeps the per-type offsets and index sizes far from int64 overflow. */
#define DATASET_MAX_NODES ((int64_t)1 << 48)

typedef struct ds_node_type {
    char name[DATASET_NAME_MAX]; /* "_default" for homogeneous graphs */
    int64_t num_nodes;
    int64_t own_start, own_end;  /* the ids this dataset owns: [0, num_nodes) for a whole dataset,
                                    a part's range of this type otherwise (see the top) */
} ds_node_type;

/* An edge list, (2, E) ids: src[i] -> dst[i]. ids are int32 or int64. */
typedef struct ds_edges {
    npy_dtype id_dtype;  /* NPY_DTYPE_INT32 or NPY_DTYPE_INT64 */
    int64_t num_edges;
    const void *src;     /* num_edges ids */
    const void *dst;     /* num_edges ids */
} ds_edges;

typedef struct ds_edge_type {
    char name[3 * DATASET_NAME_MAX]; /* "src:relation:dst"; "_default" if homogeneous */
    int src_type, dst_type;          /* indices into dataset.node_types */
    char path[4096];                 /* the edge file, absolute or relative to the cwd */
    ds_edges edges;                  /* view into `file` or into `owned` */
    npy_array file;                  /* the mapped .npy (format: numpy) */
    void *owned;                     /* (2, E) ids in C order when `file` cannot be used as is:
                                        parsed CSV (int64), or a copy of a Fortran-order .npy
                                        (id_dtype); NULL otherwise */
} ds_edge_type;

typedef enum ds_domain { DS_DOMAIN_NODE, DS_DOMAIN_EDGE, DS_DOMAIN_COUNT } ds_domain;

typedef struct ds_feature {
    ds_domain domain;
    int type;                     /* node or edge type index */
    char name[DATASET_NAME_MAX];  /* "feat" */
    int in_memory;
    npy_array array;              /* (rows, dim) mapped (or read whole: format torch, array.owned);
                                     any dtype */
    int64_t rows, dim;
    void *owned;                  /* C-order copy of a Fortran-order file (array.data points
                                     here, the file is unmapped); NULL when mapped */
} ds_feature;

typedef enum ds_task_kind {
    DS_TASK_NODE_CLASSIFICATION,
    DS_TASK_LINK_PREDICTION,
    DS_TASK_OTHER,        /* no training task: node seeds without labels (or no split decided) */
    DS_TASK_KIND_COUNT
} ds_task_kind;

typedef enum ds_split_id { DS_SPLIT_TRAIN, DS_SPLIT_VALID, DS_SPLIT_TEST, DS_SPLIT_COUNT } ds_split_id;

typedef struct ds_split {
    int present;
    int64_t num_items;
    int seed_width;       /* 1 for node seeds (N,), 2 for pairs (M, 2) */
    int64_t *seeds;       /* (num_items, seed_width), owned */
    int64_t *labels;      /* (num_items) or NULL, owned */
    int64_t *indexes;     /* (num_items) or NULL (GraphBolt `indexes` for LP eval), owned */
    char seeds_path[4096];
    char labels_path[4096];   /* "" without labels */
    char indexes_path[4096];  /* "" without indexes */
} ds_split;

typedef struct ds_task {
    char name[DATASET_NAME_MAX]; /* its `name`, or its path "tasks[i]" when it has none */
    ds_task_kind kind;    /* from the data: seeds (N,)+labels -> NC, seeds (M,2) -> LP */
    int type;             /* the node type (NC) or edge type (LP) index of its seeds; 0 when untyped */
    int64_t num_classes;  /* 0 if not given */
    ds_split splits[DS_SPLIT_COUNT];
} ds_task;

/* The `partition:` key of one part of a partitioned graph (see the top of the file). */
#define DS_PARTITION_ID_MAX 65   /* up to 64 lowercase hex digits + NUL */
#define DS_PARTITION_MAX_PARTS (1 << 20)
#define DS_PARTITION_GLOBAL (-1) /* part: global */
typedef struct ds_partition {
    int present;                  /* 0: a whole dataset (nothing below is set) */
    char id[DS_PARTITION_ID_MAX]; /* the partitioning run's id (hex) */
    int part;                     /* 0 .. num_parts-1, or DS_PARTITION_GLOBAL */
    int num_parts;                /* 1 .. DS_PARTITION_MAX_PARTS */
    int64_t node_start, node_end; /* owned new ids [node_start, node_end); global: [0, N); typed:
                                     node type 0's range (every type's: ds_node_type.own_*) */
    char graph[4096];             /* the partition JSON, resolved against the dataset directory */
} ds_partition;

typedef struct dataset {
    char dir[4096];       /* directory holding metadata.yaml */
    char name[DATASET_NAME_MAX];
    int typed;            /* 1: the metadata has type: keys (see the top of the file) */
    ds_partition partition;
    int num_node_types;
    ds_node_type *node_types;
    int num_edge_types;
    ds_edge_type *edge_types;
    int num_features;
    ds_feature *features;
    int num_tasks;
    ds_task *tasks;
} dataset;

/* Opens the dataset at path (a directory holding metadata.yaml, or the metadata.yaml itself).
 * Validates everything it references. Returns 0, or -1 with *err (code CGNN_ERR_INPUT for
 * bad data). On failure *ds is left closed. The caller owns *ds (dataset_close). */
int dataset_open(dataset *ds, const char *path, cgnn_err *err);

/* Releases everything; NULL-safe, and safe on a zeroed dataset. */
void dataset_close(dataset *ds);

/* Lookups; return NULL / -1 when absent. */
const ds_feature *dataset_find_feature(const dataset *ds, ds_domain domain, int type, const char *name);
/* The node feature a model reads for node type `type` (0 for an untyped dataset): the one named
 * `name` when name is non-empty (NULL if that type has none of that name), else "feat", else the
 * type's first node feature; NULL when the type has no node feature (featureless). */
const ds_feature *dataset_node_feature(const dataset *ds, int type, const char *name);
/* Writes the names of node type `type`'s node features, comma-separated, into out[cap]; returns
 * how many there are. */
int dataset_node_feature_names(const dataset *ds, int type, char *out, size_t cap);
const ds_task *dataset_find_task(const dataset *ds, const char *name);
int dataset_find_node_type(const dataset *ds, const char *name);

/* 1 if the dataset is typed (its metadata has type: keys), else 0. */
int dataset_is_typed(const dataset *ds);

/* Index of the edge type named "src:relation:dst" ("_default" for an untyped dataset), or -1. */
int dataset_find_edge_type(const dataset *ds, const char *name);

/* First homogenised id of node type t: the sum of num of the types before it (0 for t = 0). */
int64_t dataset_node_type_offset(const dataset *ds, int t);

/* Rows of node features / owned nodes: node_end - node_start for a part, else the node count
 * of node type 0 (a typed dataset's node features have the row count of their own type). */
int64_t dataset_owned_nodes(const dataset *ds);

/* Total number of nodes over all node types. */
int64_t dataset_total_nodes(const dataset *ds);

/* A cheap content fingerprint of every feature array: CRC-32 of the raw bytes of a fixed
 * sample of rows of each (the first, the last and DATASET_SAMPLE_ROWS rows drawn with a fixed
 * seed, so every process draws the same rows), chained over feature_data in order. Two datasets
 * whose features differ in any sampled row (a rescaled, renormalised or regenerated array: every
 * row) almost surely differ here; a difference confined to unsampled rows is not seen. Reads
 * at most (DATASET_SAMPLE_ROWS + 2) rows per array. */
#define DATASET_SAMPLE_ROWS 64
uint32_t dataset_features_sample_crc(const dataset *ds);

const char *ds_split_name(ds_split_id split); /* "train_set", "validation_set", "test_set" */
const char *ds_task_kind_name(ds_task_kind kind);

#endif
