/* source_impl.h — what one kind of graph source provides (source_whole.c, source_part.c,
 * source_store.c) and the helpers they share (graph_source.c). Not for callers of
 * source/graph_source.h: graph_source.c calls these through the kind's table, and each
 * graph_source_X function's contract is the header's. An entry may be NULL: the default written
 * beside it is what graph_source.c does then.
 */
#ifndef CGNN_SOURCE_IMPL_H
#define CGNN_SOURCE_IMPL_H

#include "source/graph_source.h"

typedef struct graph_source_ops {
    graph_source_kind kind;
    int sharded_table;                                               /* graph_source_table_sharded */
    int (*load_begin)(graph_source *s, cgnn_err *err);               /* NULL: nothing */
    int (*open)(graph_source *s, cgnn_err *err);                     /* required (s->threads set) */
    int (*set_task)(graph_source *s, cgnn_err *err);                 /* NULL: gtask = task */
    int (*open_index)(graph_source *s, graph_source_index_fn build, void *ctx, cgnn_err *err); /* NULL: nothing */
    int (*assign_seeds)(graph_source *s, cgnn_err *err);             /* required */
    int (*open_typed)(graph_source *s, cgnn_err *err);               /* required */
    /* the features of node type `type` (-1: a homogeneous graph's); NULL: the dataset's */
    const ds_feature *(*feature)(const graph_source *s, int type);
    int64_t (*num_nodes)(const graph_source *s);                     /* homogeneous; required */
    int64_t (*num_edges)(const graph_source *s);                     /* homogeneous; required */
    const char *(*name)(const graph_source *s);                      /* NULL: ds->dir */
    int (*producers)(const graph_source *s, int workers, const char **what); /* NULL: sampler threads */
    /* the table's rows: their count into *n, their original ids (NULL: row i is node i); required */
    const int64_t *(*table_rows)(const graph_source *s, int64_t *n);
    void (*set_table)(graph_source *s, const embedding_table *e);    /* after the init; NULL: nothing */
    int (*serve)(graph_source *s, const ds_feature *feat, const ds_feature *const *type_feat,
                 cgnn_err *err);                                     /* NULL: nothing */
    /* local seeds: split's own rows into out (seeds .. items); NULL: the selected rows sel_* */
    void (*local_rows)(const graph_source *s, ds_split_id split, graph_source_rows *out);
    void (*loader_config)(const graph_source *s, loader_config *lc); /* NULL: nothing */
    int (*batch_capacity)(graph_source *s, const sampler_config *sc, int64_t max_seeds, int64_t in_dim,
                          minibatch_capacity *cap, cgnn_err *err);   /* required */
    void (*prepare_batch)(graph_source *s, minibatch *mb);           /* NULL: nothing */
    int (*gather_embedding)(graph_source *s, const embedding_table *e, minibatch *mb, int64_t col,
                            cgnn_err *err);                          /* NULL: embedding_gather */
    int (*embedding_step)(graph_source *s, embedding_table *e, const int64_t *ids, const float *grads, int64_t n,
                          int64_t stride, int64_t col, double lr, double divisor,
                          cgnn_err *err);                            /* NULL: embedding_sparse_step */
    float *(*table_to_root)(const graph_source *s, const float *rows, int64_t dim); /* NULL: NULL */
    void (*table_written)(graph_source *s);                          /* NULL: nothing */
    int (*load_check)(graph_source *s, int failed, const sampler_config *train, cgnn_err *err); /* NULL: 0 */
    void (*load_end)(graph_source *s);                               /* NULL: nothing */
    /* layout, edges, feature_rows, feature_values (partition and num_parts are set); required */
    void (*identify)(const graph_source *s, const ds_feature *feat, graph_source_ids *out);
    const csc_graph *(*shape)(const graph_source *s);                /* NULL: g */
    int (*state_fields)(const graph_source *s, const char **keys, const char **vals); /* NULL: 0 */
    void (*traffic_reset)(graph_source *s);                          /* NULL: nothing */
    void (*log_traffic)(graph_source *s, loader *const *loaders, int n_loaders); /* NULL: nothing */
    int (*stop)(graph_source *s, cgnn_err *err);                     /* NULL: 0 */
    void (*free)(graph_source *s);                                   /* the kind's own; NULL: nothing */
} graph_source_ops;

extern const graph_source_ops source_whole_ops, source_part_ops, source_store_ops;

/* ---- shared by the kinds (graph_source.c) ---- */

/* rank 0 of the job */
int graph_source_is_root(const graph_source *s);

/* Local seeds (whole, store): keeps the rows of each present split of s->task whose anchor (the
 * seed, or column 0 of a pair) — mapped through map when given (original id -> new id) — lies in
 * [lo, hi), in row order, into sel_* (owned). */
void graph_source_select_rows(graph_source *s, const int64_t *map, int64_t lo, int64_t hi);

/* Refuses a typed partition with more node or edge types than a batch carries (CGNN_ERR_INPUT
 * naming the JSON). */
int graph_source_check_type_counts(const partbook *pb, cgnn_err *err);

/* Part, store: the whole graph's sizes from the partition book. */
int64_t graph_source_partition_nodes(const graph_source *s);
int64_t graph_source_partition_edges(const graph_source *s);
/* Part, store: the batch capacity from the whole graph's sizes (a batch reaches any part) and the
 * batches' original ids (key_nodes). */
int graph_source_partition_capacity(graph_source *s, const sampler_config *sc, int64_t max_seeds, int64_t in_dim,
                                    minibatch_capacity *cap, cgnn_err *err);
/* Part, store: mb's original ids as its keys. */
void graph_source_partition_keys(graph_source *s, minibatch *mb);
/* Part, store on a typed graph: the loader renames batches to original ids through pb's maps. */
void graph_source_type_maps(const graph_source *s, loader_config *lc);
/* Part, store: the collective error check of the loading phase: 0, or -1 on every rank. */
int graph_source_phase_check(graph_source *s, int failed, cgnn_err *err);
/* edges = (eid, then each edge type's index CRC when tg holds indexes) >> 1 */
int64_t graph_source_edges_id(const graph_source *s, uint64_t eid, int typed_indexes);

#endif
