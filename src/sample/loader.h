/* loader.h — the mini-batch pipeline: item sampler -> neighbour sampler -> feature gather,
 * run by background worker threads into a bounded prefetch queue drained in order.
 *
 * Batch b of an epoch is always built into slot b % queue_depth, by whichever worker claims
 * it; its content depends only on (seed, epoch, b) — never on the number of workers or their
 * timing — and the consumer receives batches strictly in order 0, 1, 2, ...
 * num_workers == 0 builds each batch synchronously in loader_next (no threads).
 * All buffers are allocated in loader_init at worst-case size: the steady state allocates
 * nothing.
 */
#ifndef CGNN_LOADER_H
#define CGNN_LOADER_H

#include <pthread.h>
#include <stdint.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "sample/gather.h"
#include "sample/item_sampler.h"
#include "sample/minibatch.h"
#include "sample/sampler.h"
#include "sample/typed_sampler.h"
#include "util/err.h"

/* ---- server-client mode (train/graph_store.h, sample/batch_rpc.h) -------------------------
 * A compute rank holds no graph: its loader draws the items, builds the seed list (LP: pairs,
 * listed and random negatives, as always) and hands it to `build`, which has a storage rank
 * sample the blocks and gather the features and fills the batch. */
typedef struct loader_remote_batch {
    int64_t batch;                 /* b, this epoch's batch index (the routing may use it) */
    uint64_t key;                  /* the sampling key (item_sampler_batch_key) */
    const sampler_config *sampler; /* fanouts, replace */
    int normalize_rows;            /* divide each feature row by its L1 norm */
    int64_t feat_dim;              /* feature columns to fill (0: none) */
    const int64_t *seeds;          /* (n_seeds) the seed list, ids of the partitioned graph */
    int64_t n_seeds;
    const int64_t *pairs;          /* (n_pairs, 2) pairs whose edges are excluded (exclude_seed_edges), or NULL */
    int64_t n_pairs;
    /* a typed graph (NULL: homogeneous): the per-(hop, edge type) fanouts of num_edge_types edge
     * types; seeds and pairs are homogenised new ids; feat_dim is then 1 when the featured types'
     * rows are wanted (each type's width is the storage ranks'), else 0 */
    const typed_sampler_config *typed;
    int num_edge_types;
} loader_remote_batch;

typedef struct loader_remote {
    /* fills mb's blocks, input_nodes, num_seeds, num_input_nodes, item_local[0..n_seeds),
     * num_sampled_edges, the first feat_dim columns of features (rows mb->feat_dim apart), and
     * sample_seconds / gather_seconds (the storage rank's); 0, or -1 with *err. Called
     * concurrently by the producers (and by several loaders). A typed request (rq->typed) fills
     * mb->typed instead: num_nodes, nodes (per-type NEW ids), blocks, the featured types' rows
     * (converted and, with normalize_rows, normalised), item_local (within each seed's type, as
     * typed_sampler_sample numbers them), num_seeds, num_input_nodes, num_sampled_edges. */
    int (*build)(void *ctx, const loader_remote_batch *rq, minibatch *mb, cgnn_err *err);
    void *ctx;
    int64_t num_nodes, num_edges, max_in_degree; /* of the whole graph: the batches' capacity */
} loader_remote;

typedef struct loader_config {
    sampler_config sampler;
    int64_t batch_size;
    int shuffle, drop_last, drop_uneven;
    uint64_t seed;
    int rank, world_size;       /* data-parallel slicing (1 process: 0, 1) */
    int num_workers;            /* sampler threads; 0 = synchronous */
    int queue_depth;            /* prefetch slots; 0 = num_workers + 1 */
    int gather_threads;         /* threads per feature gather; 0 = 1 */
    const ds_feature *feature;  /* node features to gather, or NULL */
    int normalize_rows;         /* divide each gathered row by its L1 norm (PyG NormalizeFeatures) */
    int64_t extra_cols;         /* columns after the features left to the caller (learnable node
                                   embeddings): mb->features is (nodes, feature dim + extra_cols) */
    /* link prediction: items are (anchor, positive) pairs, seeds is (num_items, 2); a batch's
     * seed list is [anchors (n) | positives (n) | num_negatives random nodes], see minibatch.h */
    int pairs;
    int64_t num_negatives;      /* random negatives per batch, uniform over all nodes */
    int64_t neg_lo, neg_hi;     /* homogeneous graphs, neg_hi > 0: the random negatives are uniform over
                                   the whole graph's ids [neg_lo, neg_hi) instead (the candidates of
                                   trainerArgs.lp_candidate_range), drawn from the same stream:
                                   neg_lo + rng_below(neg_hi - neg_lo) */
    int exclude_seed_edges;     /* sampled neighbourhoods never contain a batch's own pair edges */
    /* labelled pairs (GraphBolt `labels` + optional `indexes`): with pairs and labels != NULL,
     * rows labelled 1 are the items (positive pairs) and rows labelled 0 are listed negatives.
     * A row's group is indexes[row] when given, else its anchor; all rows of a group must share
     * the anchor. A batch's seed list becomes [anchors | positives | listed | random], where
     * `listed` holds the listed negatives of every group among the batch's positives, each group
     * once, in order of first appearance; mb->listed_off/len give each pair its group's range. */
    const int64_t *indexes;     /* (num_items) or NULL */
    /* anchor batching (GiGL's DistABLPLoader; pairs only): the item sampler runs over the split's
     * distinct anchors (column 0; ascending id), batch_size anchors a batch, and a batch carries
     * every positive pair of its anchors: the first max_labels_per_anchor of each anchor in split
     * row order (0: all; GiGL's max_labels_per_anchor_node, which keeps the first labels of the
     * anchor's row). The batch is then laid out as a pair batch of those pairs, each anchor's pairs
     * adjacent in row order (the anchor repeated in the seed list); with labelled pairs each group's
     * listed negatives are capped the same way. Random negatives as for pairs. */
    int anchor_batches;
    int64_t max_labels_per_anchor;
    /* a partitioned graph (NULL: g is the whole graph): g is the own nodes' index, batches
     * are sampled through `part` and features gathered through `feat_part` (`feature` then
     * holds the own rows); random negatives are drawn uniformly from the whole graph's ids
     * keyed exactly as on the whole graph (ids of the whole graph, before renumbering) and mapped
     * through neg_map (original id -> id of the partitioned graph). seeds are the partitioned
     * graph's ids. */
    const sampler_part *part;
    const gather_part *feat_part;
    const int64_t *neg_map;     /* (part->num_nodes) or NULL */
    /* server-client mode (NULL otherwise): batches are built by `remote` (see above); g is NULL,
     * `feature` only gives the feature width (its rows are on the storage ranks), neg_map as
     * on a part. On a typed graph, `typed` is the whole graph's shape (typed_graph_init_shape: no
     * indexes), type_feature[t] describes type t's rows (width and dtype only) and
     * type_new_of_orig / type_orig_of_new are set as on a typed part: the storage rank samples and
     * gathers, the loader renames the batch to original ids, so it is worker mode's batch. */
    const loader_remote *remote;
    /* a typed graph (NULL: homogeneous; then g may be NULL in loader_init): batches are typed
     * (minibatch.h), sampled with typed_sampler; node items are per-type ids of seed_type;
     * type_feature[t] (or NULL) is gathered into the first columns of features[t], whose rows
     * are type_width[t] wide (the rest left to the caller: a featureless type's learnable rows).
     * Link prediction (pairs): the items are pairs of edge type pair_etype = (s, r, d), column 0
     * per-type ids of s, column 1 of d; random negatives are uniform over d's nodes; the seed
     * list is [anchors | positives | negatives] as homogenised ids, and item_local counts the
     * rows of type d after those of type s (when s != d): the rows of the model outputs of s and
     * d stacked (mb->num_seeds of them), whose homogenised ids are mb->input_nodes[0..num_seeds).
     * exclude_seed_edges drops every sampled edge between a pair's nodes (any edge type, either
     * direction: the reverse edge type too). Labelled pairs as above: the listed negatives (column 1
     * of the rows labelled 0) are per-type ids of d, in the seed list after the positives:
     * [anchors | positives | listed negatives | random negatives]. */
    const typed_graph *typed;
    typed_sampler_config typed_sampler;
    int seed_type;
    int pair_etype;
    const ds_feature *type_feature[MINIBATCH_MAX_NODE_TYPES];
    int64_t type_width[MINIBATCH_MAX_NODE_TYPES];
    /* a part of a partitioned typed graph (NULL: typed is a whole graph): typed is the part's view
     * (typed_graph_init_part), batches are sampled through typed_part and the features of other
     * parts fetched through typed_feat_part (type_feature[t] then holds the own rows); seeds are
     * per-type new ids; LP random negatives are drawn over the dst type's ORIGINAL ids, keyed as on
     * the whole graph, and mapped through type_new_of_orig; once the features are gathered, the
     * batch's node lists are renamed to original per-type ids through type_orig_of_new, so a
     * delivered batch is the replicated batch, field for field (input_nodes of LP included). */
    const typed_sampler_part *typed_part;
    const gather_typed_part *typed_feat_part;
    const int64_t *type_orig_of_new[MINIBATCH_MAX_NODE_TYPES];
    const int64_t *type_new_of_orig[MINIBATCH_MAX_NODE_TYPES];
    /* profiling (optional): each worker reports "sample" and "gather" spans on trace lane
     * trace_tid_base + worker index (a synchronous loader, num_workers 0, on lane 0: the
     * calling thread) */
    struct trace_writer *trace;
    int trace_tid_base;
    const char *trace_name;     /* lane names: "<trace_name> sampler <i>" */
} loader_config;

/* FREE -> FILLING (a producer builds batch b into it) -> READY -> HELD (loader_next handed it to the
 * consumer) -> FREE (loader_release). Starting an epoch frees every slot but the held ones. */
typedef enum loader_slot_state {
    LOADER_SLOT_FREE, LOADER_SLOT_FILLING, LOADER_SLOT_READY, LOADER_SLOT_HELD
} loader_slot_state;

struct loader;
typedef struct loader_worker {
    struct loader *l;
    int index;               /* producer index: its sampler and scratch */
    int64_t *seeds_scratch;  /* (max seeds) seed node ids of the batch being built */
    int64_t *pairs_scratch;  /* (max_pairs, 2) the batch's pairs (exclude_seed_edges) */
    int64_t *group_seen;     /* (max_pairs, 2) labelled pairs: (group, offset) already listed */
    int64_t *items_scratch;  /* (max_pairs) anchor batching: the batch's pair items */
    gather_part_scratch gather; /* partitioned features (cfg.feat_part) */
    gather_typed_scratch tgather; /* partitioned typed features (cfg.typed_feat_part) */
} loader_worker;

typedef struct loader {
    const csc_graph *g;
    loader_config cfg;
    const int64_t *seeds;       /* (num_items) or (num_items, 2) with cfg.pairs; borrowed */
    const int64_t *labels;      /* (num_items) or NULL, borrowed */
    /* labelled pairs (see loader_config.indexes), all owned; pos_rows NULL otherwise */
    int64_t *pos_rows;          /* (num_pos) split row of each item */
    int64_t *pos_group;         /* (num_pos) group number of each item, -1: no listed negatives */
    int64_t *group_ptr;         /* (groups + 1) ranges into group_nodes */
    int64_t *group_nodes;       /* listed negative node ids, grouped, in row order within a group */
    int64_t max_listed;         /* most listed negatives one batch can carry */
    int64_t num_groups;         /* groups of listed negatives */
    /* anchor batching (cfg.anchor_batches), owned; NULL otherwise */
    int64_t num_anchors;
    int64_t *anchor_ptr;        /* (num_anchors + 1) ranges into anchor_items */
    int64_t *anchor_items;      /* pair items (positive numbers) grouped by anchor, row order, capped */
    int64_t max_pairs;          /* most pairs one batch carries (batch_size without anchor batching) */
    item_sampler items;
    int queue_depth;
    minibatch *slots;           /* (queue_depth) */
    loader_slot_state *state;   /* (queue_depth) */
    neighbor_sampler *samplers; /* (max(num_workers, 1)) one per producer */
    typed_sampler *tsamplers;   /* the same on a typed graph (cfg.typed) */
    loader_worker *workers_arg; /* (max(num_workers, 1)) */
    pthread_t *threads;
    int num_threads_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;                   /* workers exit */
    int active;                 /* an epoch is being produced */
    int generation;             /* bumped by every start so stale workers notice */
    int64_t batches;            /* batches to produce this epoch */
    int64_t next_claim, next_consume, in_flight;
    int64_t slot_base;          /* batch b of this epoch fills slot (slot_base + b) % queue_depth */
    int64_t built;              /* batches built since loader_init (prefetched ones included) */
    int failed;                 /* a batch could not be built (a peer of a partitioned graph) */
    cgnn_err err;               /* the first such failure */
} loader;

/* Sets up the pipeline over the items seeds[0..num_items) (pairs: (num_items, 2); labels may be
 * NULL) and starts the workers (idle until loader_start_epoch). Returns 0, or -1 with *err
 * (CGNN_ERR_INPUT naming the field and row for bad labelled pairs: a label other than 0 / 1, or
 * a group whose rows have different anchors). Caller owns *l. */
int loader_init(loader *l, const csc_graph *g, const int64_t *seeds, const int64_t *labels,
                int64_t num_items, const loader_config *cfg, cgnn_err *err);

/* The typed batches' sizes (cfg.typed only) without listed negatives. */
void loader_typed_capacity(const loader_config *cfg, minibatch_typed_capacity *tcap);
/* The typed batches' sizes of an initialised loader (its labelled pairs' listed negatives
 * included): what a typed model is sized for. */
void loader_batch_typed_capacity(const loader *l, minibatch_typed_capacity *tcap);

/* Seeds one batch can hold (the minibatch capacity: anchors + positives + listed + random
 * negatives for pairs), and the most negatives (listed + random) of one batch. */
int64_t loader_max_seeds(const loader *l);
int64_t loader_max_negatives(const loader *l);
/* Pairs one batch can hold (LP): batch_size, or with anchor batching the positives of the
 * batch_size anchors with the most (capped) positives. */
int64_t loader_max_pairs(const loader *l);

/* The items of an epoch over every rank: pairs, or with anchor batching the distinct anchors
 * (what batch_size counts). */
int64_t loader_num_batch_items(const loader *l);

/* Items of one epoch over every rank (pairs: the positive pairs, capped ones excluded with
 * anchor batching; labelled pairs count the rows labelled 1 only): a bound on the pairs any
 * rank's epoch delivers. */
int64_t loader_num_items(const loader *l);

/* Begins producing `epoch`; max_batches > 0 limits the number of batches (0 = all). Any
 * unfinished previous epoch is abandoned first. */
void loader_start_epoch(loader *l, int epoch, int64_t max_batches);
/* loader_start_epoch, but the first batch delivered is first_batch (>= 0): the batches before
 * it are skipped without being built, and the later ones are exactly those of a full epoch
 * (resuming an interrupted epoch). loader_num_batches still counts the whole epoch; a
 * first_batch at or past it delivers nothing. */
void loader_start_epoch_at(loader *l, int epoch, int64_t first_batch, int64_t max_batches);

/* Batches this epoch will deliver (valid after loader_start_epoch). */
int64_t loader_num_batches(const loader *l);

/* The next batch in order, or NULL when the epoch is exhausted. Blocks until it is ready.
 * The batch stays valid until loader_release (across loader_start_epoch too). Its slot,
 * loader_slot_of(l, b), must not be held: the consumer holds fewer than queue_depth batches, and
 * the one in the next batch's slot is released first (the public API checks this). */
minibatch *loader_next(loader *l);

/* The slot (index into l->slots) batch b of the current epoch is built into. */
int loader_slot_of(const loader *l, int64_t b);

/* After loader_next returned NULL: 1 (and the reason in *err) if the epoch ended because a
 * batch could not be built (on a partitioned graph, a peer failed or timed out), else 0. */
int loader_failed(loader *l, cgnn_err *err);

/* Batches built since loader_init, prefetched ones included (traffic per batch). */
int64_t loader_batches_built(loader *l);

/* Returns the batch's slot to the producers. */
void loader_release(loader *l, minibatch *mb);

/* Stops the workers and frees everything; NULL-safe. */
void loader_free(loader *l);

#endif
