/* part_rpc.h — a partitioned graph's services between ranks, over dist/dist_rpc.
 *
 * Rank r holds part r % P (graph/partbook.h). Three requests reach a part's owner:
 *   PICK  (hop, key, fanout, replace, nodes)  → counts + neighbours  (sampler_pick_owned)
 *   FEAT  (ids)                               → raw feature rows      (gather_rows_owned)
 *   EMB   (ids)                               → float32 embedding rows of a sharded table
 *   ACT   (ids)                               → float32 rows of the previous layer's activations
 *                                                (layer-wise inference, `cgnn embed` on parts)
 * and this module provides the callbacks the sampler (sampler_part.pick_remote) and the
 * gathers (gather_part.fetch_remote) call to make them: one request per owner per call, all
 * owners at once (dist_rpc_call_many). A part held by several ranks (world > P) is asked of the
 * holder in the caller's own group of P ranks, so traffic spreads over the replicas.
 *
 * Wire format (little-endian, what every rank of one job runs): a request is a fixed header of
 * int64s then the ids; replies are counts then ids (PICK) or rows. The owners check every
 * request (ids owned, sizes), so a bad request is an error back to the caller, never a read
 * out of bounds.
 *
 * A typed graph (part_rpc_init_typed) registers typed PICK and FEAT under the same ids (a job is
 * typed or not), one request per owner covering every edge type (PICK, per hop) or every node
 * type (FEAT, per batch):
 *   PICK  [hop, key, replace, nseg] + nseg x [edge type, fanout, n, n per-type ids]
 *         → counts of every segment, then the neighbours (typed_sampler_pick_owned)
 *   FEAT  [nseg] + nseg x [node type, n, n per-type ids] → the rows, segment by segment, each in
 *         its type's feature dtype
 * The featureless types' learnable tables stay replicated on every rank (family/family_typed.c),
 * so EMB and ACT are not used on typed parts.
 *
 * Threads: the handlers run on dist_rpc's service thread and only read: the index and the
 * features never change; a sharded embedding's rows change only inside
 * embedding_sparse_step_sharded, which ends with a barrier, and every EMB request of a step is
 * made after it. The client callbacks are called concurrently by the sampler threads; each call
 * takes a scratch set (request and reply buffers) from a pool, so steady state allocates
 * nothing.
 */
#ifndef CGNN_PART_RPC_H
#define CGNN_PART_RPC_H

#include <pthread.h>
#include <stdint.h>

#include "dist/dist_rpc.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "nn/embedding.h"
#include "graph/typed_graph.h"
#include "sample/gather.h"
#include "sample/sampler.h"
#include "sample/typed_sampler.h"

enum { PART_RPC_PICK = 1, PART_RPC_FEAT = 2, PART_RPC_EMB = 3, PART_RPC_ACT = 4 };

typedef struct part_rpc_scratch part_rpc_scratch;

typedef struct part_rpc {
    dist_rpc *rpc;                /* borrowed; handlers registered by part_rpc_register */
    int rank, world, num_parts;   /* this rank, W, P */
    const csc_graph *local;       /* the own nodes' index */
    const sampler_part *part;     /* key ids, ranges */
    const ds_feature *features;   /* own rows, or NULL */
    const embedding_table *emb;   /* own rows of a sharded table, or NULL */
    ds_feature emb_view;          /* emb's weight as a float32 feature (for gather_rows_part) */
    gather_part feat_part, emb_part, act_part; /* fetch callbacks for the gathers */
    ds_feature act_view;          /* own rows of the activations ACT serves (part_rpc_set_rows) */
    sampler_part sampler;         /* *part with pick_remote set */
    /* a typed graph (part_rpc_init_typed; tg NULL otherwise) */
    const typed_graph *tg;        /* the part's view (typed_graph_init_part) */
    const typed_sampler_part *tpart;
    const ds_feature *tfeat[MINIBATCH_MAX_NODE_TYPES]; /* own rows of each type, NULL: featureless */
    typed_sampler_part tsampler;  /* *tpart with pick_remote set */
    gather_typed_part tfeat_part; /* fetch callback of the typed gathers */
    gather_part type_gp[MINIBATCH_MAX_NODE_TYPES]; /* each type's ranges, for the owner's row checks */
    /* service-thread scratch (the handlers run one at a time there; self calls use a pool set) */
    pthread_mutex_t mu;
    part_rpc_scratch **pool;
    int pool_len, pool_cap;
    const int *peer_of_part;      /* (P) the rank asked for part p's data (part_rpc_init_peers), or NULL */
} part_rpc;

/* Sets up *pr and registers its handlers on rpc (before dist_rpc_start). features / emb may be
 * NULL (then their requests are errors). Returns 0 or -1 with *err. */
int part_rpc_init(part_rpc *pr, dist_rpc *rpc, int rank, int world, const csc_graph *local, const sampler_part *part,
                  const ds_feature *features, cgnn_err *err);
/* part_rpc_init for a part of a typed graph: g is the part's view, part its ranges and draw keys
 * (both borrowed, outliving *pr), features[t] the own rows of node type t (NULL: featureless).
 * Registers the typed PICK and FEAT. Returns 0 or -1 with *err. */
int part_rpc_init_typed(part_rpc *pr, dist_rpc *rpc, int rank, int world, const typed_graph *g,
                        const typed_sampler_part *part, const ds_feature *const *features, cgnn_err *err);

/* part_rpc_init where the "parts" are not ranks r % P of the world: part p's data is asked of
 * rank peers[p] (borrowed, P entries; this rank is peers[part->part]). Server-client mode: the
 * parts are the storage ranks' id ranges, held by world ranks T .. T + S - 1. */
int part_rpc_init_peers(part_rpc *pr, dist_rpc *rpc, int rank, int world, const int *peers, const csc_graph *local,
                        const sampler_part *part, const ds_feature *features, cgnn_err *err);
/* part_rpc_init_typed with the parts held by world ranks peers[p] (server-client mode's storage
 * ranks on a typed partition), as part_rpc_init_peers. */
int part_rpc_init_typed_peers(part_rpc *pr, dist_rpc *rpc, int rank, int world, const int *peers, const typed_graph *g,
                              const typed_sampler_part *part, const ds_feature *const *features, cgnn_err *err);
/* Declares the sharded embedding table whose rows EMB serves (before dist_rpc_start). */
void part_rpc_set_embedding(part_rpc *pr, const embedding_table *emb);
/* Declares the own rows ACT serves from now on: rows (n, dim) float32 (NULL: none). Thread-safe
 * against the service thread; the caller follows it with a barrier before any peer may ask for
 * the new rows (layer-wise inference: after each layer). */
void part_rpc_set_rows(part_rpc *pr, const float *rows, int64_t n, int64_t dim);
void part_rpc_free(part_rpc *pr); /* NULL-safe */

/* Collective over d: every part's rows — rows is this rank's (n_local, dim) float32 in new-id
 * order — on rank 0 in original id order, (N, dim) owned by the caller; NULL on the other ranks.
 * Ranks 0..P-1 send their part (the others hold replicas of one of those). Checkpoints of sharded
 * embeddings and `cgnn embed` on parts. */
float *part_gather_to_root(const dist_ctx *d, int num_parts, const float *rows, int64_t n_local, int64_t dim,
                           const int64_t *orig_of_new, int64_t N);

/* The rank asked for part p's data: the holder of p in this rank's group of P ranks. */
int part_rpc_peer(const part_rpc *pr, int p);

#endif
