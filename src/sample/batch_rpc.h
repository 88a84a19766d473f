/* batch_rpc.h — server-client mode's fourth service: BATCH, a whole mini-batch built by a
 * storage rank for a compute rank (train/graph_store.h has the job's layout).
 *
 * A compute rank sends a batch's seed list and everything else the sampling depends on (the
 * sampling key, fanouts, replacement, the pairs whose edges are excluded, the feature width); a
 * storage rank samples it on its parts exactly as sampler_part does (own frontier nodes from its
 * index, the others' through PICK to the storage rank owning them), gathers the input nodes'
 * feature rows (own rows locally, the others' through FEAT, through the feature cache when there
 * is one) and answers with the whole batch: blocks, input nodes, the seeds' rows and the feature
 * rows in the file's dtype (a uint8 feature moves a byte per element). The compute rank converts
 * the rows to float32 (and normalises them) exactly as a local gather does, adds what it knows
 * itself (items, labels, the LP negatives' layout) and builds the blocks' transposes. A batch is a pure function of its
 * request: which storage rank builds it never changes a bit.
 *
 * Storage side (batch_server): the handler runs on dist_rpc's service thread and only queues the
 * request and defers its reply (dist_rpc_defer); a pool of worker threads builds the queued
 * batches, each with its own sampler, minibatch and reply buffer, and answers (dist_rpc_reply).
 * The service thread keeps answering the other storage ranks' PICK / FEAT meanwhile, and a
 * storage rank builds as many batches at once as it has workers (its cores).
 *
 * Compute side (batch_client): the loader's remote-batch callback (loader_config.remote): one
 * request per batch to the storage rank the routing names (peers[b % n]), the reply checked
 * against the batch's capacity and copied into the loader's slot.
 *
 * Wire format (little-endian int64 unless said; what every rank of one job runs):
 *   request  header[BATCH_REQ_HEADER] = {version, key, L, replace, feature columns F, n_seeds,
 *            n_pairs, 0}, fanouts[L], seeds[n_seeds], pairs[2 n_pairs]
 *   reply    header[BATCH_REP_HEADER] = {L, num_seeds, num_input_nodes, n_seeds, F, feature dtype
 *            (npy_dtype, -1 without features), num_sampled_edges, sample ns, gather ns}, per block
 *            {num_dst, num_src, num_edges}, input_nodes[num_input_nodes], per block
 *            indptr[num_dst + 1], per block int32 indices[num_edges], int32 item_local[n_seeds],
 *            feature rows[num_input_nodes x F] in their dtype (int32 arrays and the rows padded to
 *            8 bytes)
 * Both sides check what they receive (sizes, ranges, capacities), so a bad message is an error
 * naming the rank, never a read out of bounds. A typed partition's batches use version 2 of the
 * message (below, "typed batches").
 */
#ifndef CGNN_BATCH_RPC_H
#define CGNN_BATCH_RPC_H

#include <pthread.h>
#include <stdint.h>

#include "dist/dist_rpc.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "sample/gather.h"
#include "sample/loader.h"
#include "sample/sampler.h"
#include "sample/typed_sampler.h"

enum { BATCH_RPC_BATCH = 5 }; /* the handler id, beside part_rpc's PICK / FEAT / EMB / ACT */
#define BATCH_REQ_HEADER 8
#define BATCH_REP_HEADER 9

/* ---- the wire format (pure functions: no rpc; tests/test_batch_rpc.c, fuzz/fuzz_batch_rpc.c) ----
 * Every field a peer sends is checked where it is decoded; an error is CGNN_ERR_INPUT (a hostile
 * or corrupted message is bad input: the job ends with exit status 2) whose message names the
 * peer (`who`) and the field. */

/* A decoded request; the arrays point into the request's bytes. */
typedef struct batch_request {
    sampler_config cfg;     /* layers, fanouts, replace (sampler_config_check passed) */
    uint64_t key;
    int64_t feat_cols;      /* 0: no feature rows wanted */
    const int64_t *seeds;   /* (n_seeds) node ids in [0, num_nodes) */
    int64_t n_seeds;
    const int64_t *pairs;   /* (n_pairs, 2) node ids in [0, num_nodes), n_pairs <= n_seeds */
    int64_t n_pairs;
} batch_request;

/* rq as a request into b (b->len set). Returns 0, or -1 with *err (out of memory). */
int batch_request_encode(dist_rpc_buf *b, const loader_remote_batch *rq, cgnn_err *err);
/* Checks and decodes req[0..len) for a graph of num_nodes nodes whose features have feat_dim
 * columns (0: no features): the version, every count (against the length, exactly), fanouts,
 * ids in range, the feature width. who names the sender ("compute rank (world rank 3)").
 * Returns 0 with *out, or -1 with *err (CGNN_ERR_INPUT). */
int batch_request_decode(const void *req, size_t len, int64_t num_nodes, int64_t feat_dim, batch_request *out,
                         const char *who, cgnn_err *err);

/* Packs mb (a batch sampled for n_seeds seeds) as a reply into r (r->len set), with room for
 * num_input_nodes feature rows of F columns of dtype (F = 0: none; dtype then ignored); sample_ns /
 * gather_ns are the storage rank's times. Returns where the rows go (num_input_nodes x F x dtype
 * size bytes, zeroed), or NULL with *err (out of memory). */
void *batch_reply_pack(dist_rpc_buf *r, const minibatch *mb, int64_t n_seeds, int64_t F, int dtype,
                       int64_t sample_ns, int64_t gather_ns, cgnn_err *err);

/* What the compute rank knows about the batch it asked for: the reply must fit it. */
typedef struct batch_reply_expect {
    int num_layers;         /* L of the request */
    const int64_t *seeds;   /* (n_seeds) the request's seed list */
    int64_t n_seeds;
    int64_t feat_dim;       /* F of the request (0: none) */
    int feat_dtype;         /* the storage ranks' feature dtype (npy_dtype; ignored when F = 0) */
    int normalize_rows;     /* divide each row by its L1 norm after the conversion */
    int64_t num_nodes;      /* input node ids lie in [0, num_nodes) */
} batch_reply_expect;

/* Checks the reply rep[0..len) against ex and mb's capacity, and fills mb as loader_remote.build
 * promises (blocks, input_nodes, num_seeds, num_input_nodes, item_local[0..n_seeds),
 * num_sampled_edges, the first F columns of features, the storage times). Checked: the header
 * (layers, seeds, width, dtype, edge total, times), every block's sizes against the previous
 * block and the capacity, the exact length, indptr (from 0, non-decreasing, to num_edges), every
 * source index < num_src, every input node id in range, the seed section (item_local numbers the
 * distinct seeds in order of first appearance, as the sampler does, and input_nodes[item_local[i]]
 * = seeds[i]) and finite float feature rows. Not checkable without re-sampling: which in-range
 * neighbours were drawn. Returns 0, or -1 with *err (CGNN_ERR_INPUT naming who and the field);
 * mb's contents are then undefined. */
int batch_reply_decode(const void *rep, size_t len, const batch_reply_expect *ex, minibatch *mb, const char *who,
                       cgnn_err *err);
/* The reply's input node count and per-block edge counts, read from its header (0 when it is too
 * short), for a caller that sizes mb before decoding; nothing is checked beyond the length. */
void batch_reply_peek(const void *rep, size_t len, int num_layers, int64_t *num_input_nodes, int64_t *max_block_edges);

/* ---- typed batches (a typed partition; docs/DISTRIBUTED.md, "Server-client mode") ----------
 * The same BATCH handler, version 2 (a storage rank serves typed or homogeneous batches, as its
 * partition is):
 *   request  header[BATCH_REQ_HEADER] = {2, key, L, replace, K, n_seeds, n_pairs, features wanted
 *            (0 / 1)}, fanouts[L x K] (hop-major, seed side first), seeds[n_seeds] and
 *            pairs[2 n_pairs] as homogenised NEW ids
 *   reply    header[BATCH_REP_HEADER] = {L, T, K, n_seeds, distinct seeds (all types), features
 *            (0 / 1), num_sampled_edges, sample ns, gather ns}, num_nodes[T x (L + 1)] (type-major),
 *            per type {F, dtype} (F = 0 and dtype -1: no rows), per block (L x K, layer-major)
 *            {num_dst, num_src, num_edges}, per type nodes[num_nodes[t][L]] (per-type new ids), per
 *            block indptr[num_dst + 1], per block int32 indices[num_edges], int32 item_local[n_seeds]
 *            (within each seed's type), per type rows[num_nodes[t][L] x F] in their dtype (int32
 *            arrays and each type's rows padded to 8 bytes)
 * Nodes are new ids: the compute rank checks them against its seed list and renames them to
 * original ids itself (the loader), exactly as a typed part's loader does. */

typedef struct batch_typed_request {
    typed_sampler_config cfg; /* layers, fanouts[h][e], replace (typed_sampler_config_check passed) */
    uint64_t key;
    int want_features;
    const int64_t *seeds;     /* (n_seeds) homogenised ids in [0, offset[T]) */
    int64_t n_seeds;
    const int64_t *pairs;     /* (n_pairs, 2) homogenised ids, n_pairs <= n_seeds */
    int64_t n_pairs;
} batch_typed_request;

/* A typed rq (rq->typed set) as a request into b. Returns 0, or -1 with *err (out of memory). */
int batch_typed_request_encode(dist_rpc_buf *b, const loader_remote_batch *rq, cgnn_err *err);
/* Checks and decodes a typed request for the graph of shape g (types, node counts): the version,
 * every count against the exact length, K, the fanouts, every id. Returns 0, or -1 with *err
 * (CGNN_ERR_INPUT naming who and the field). */
int batch_typed_request_decode(const void *req, size_t len, const typed_graph *g, batch_typed_request *out,
                               const char *who, cgnn_err *err);
/* Packs the typed batch mb (sampled for n_seeds seeds) into r with room for each type's rows:
 * F[t] columns of dtype[t] (F[t] = 0: none); rows[t] receives where type t's rows go (zeroed),
 * NULL where F[t] = 0. Returns 0, or -1 with *err (out of memory). */
int batch_typed_reply_pack(dist_rpc_buf *r, const minibatch *mb, int64_t n_seeds, int want_features,
                           const int64_t *F, const int *dtype, int64_t sample_ns, int64_t gather_ns, void **rows,
                           cgnn_err *err);

/* What the compute rank knows about a typed batch it asked for. */
typedef struct batch_typed_expect {
    const typed_graph *g;   /* the whole graph's shape: types, node counts, edge types' ends */
    int num_layers;         /* L of the request */
    const int64_t *seeds;   /* (n_seeds) the request's seed list (homogenised new ids) */
    int64_t n_seeds;
    int want_features;      /* the request asked for rows */
    const int64_t *feat_dim; /* (T) the storage ranks' width of each type's rows (0: featureless) */
    const int *feat_dtype;  /* (T) their npy dtype (-1: featureless) */
    int normalize_rows;
} batch_typed_expect;

/* Checks the typed reply rep[0..len) against ex and mb->typed's capacity and fills mb as
 * loader_remote.build promises for typed requests. Checked: the header (layers, types, seeds,
 * edge total, times), each type's counts (non-decreasing over hops, within the capacity and the
 * type's node count), each type's width and dtype, every block's sizes (num_dst / num_src = its
 * types' counts at its hops, edges within the capacity), the exact length, every node id (in its
 * type's range), indptr, every source index, the seed section (within each type, item_local
 * numbers the distinct seeds in order of first appearance and nodes[type][item_local[i]] is seed
 * i) and finite rows (after the normalisation too). Returns 0, or -1 with *err (CGNN_ERR_INPUT
 * naming who and the field). */
int batch_typed_reply_decode(const void *rep, size_t len, const batch_typed_expect *ex, minibatch *mb, const char *who,
                             cgnn_err *err);

/* ---- storage side ---------------------------------------------------------------------- */

typedef struct batch_server batch_server; /* opaque */

/* Counters of one storage rank (read after batch_server_stop, or any time for a rough view). */
typedef struct batch_server_stats {
    int64_t batches;        /* batches built and answered */
    int64_t failed;         /* requests answered with an error */
    double sample_seconds;  /* summed over the workers */
    double gather_seconds;
    int64_t input_nodes;    /* summed over the batches */
} batch_server_stats;

/* Creates the server and registers BATCH on rpc (before dist_rpc_start). part is this storage
 * rank's view of the graph with pick_remote set (the other storage ranks answer PICK), local its
 * index, feature / feat_part its feature rows and their remote fetch (NULL: no features);
 * nworkers >= 1 worker threads are started by batch_server_start. All are borrowed and must
 * outlive the server. A reply the compute rank never takes ends the job (dist_fail_job on world). Requests that come before the workers start wait in the queue. Returns 0,
 * or -1 with *err. Test hook: CGNN_TEST_STORAGE_EXIT_AFTER=N with CGNN_TEST_FAULT_RANK = this
 * rank of the world (or unset: every storage rank): the process dies abruptly after answering N batches;
 * CGNN_TEST_CORRUPT_BATCH=N (same ranks): its N-th answered batch names node -1 as its first input node
 * (typed: as the first node of its node lists). */
int batch_server_init(batch_server **out, const dist_ctx *world, dist_rpc *rpc, const csc_graph *local,
                      const sampler_part *part, const ds_feature *feature, const gather_part *feat_part, int nworkers,
                      cgnn_err *err);
/* batch_server_init for a typed partition: g is this storage rank's view (typed_graph_init_part
 * over its range), part its ranges and draw keys with pick_remote set, features[t] the own rows
 * of type t (NULL: featureless), feat_part their remote fetch (NULL: no featured type). The
 * workers sample with typed_sampler_sample_part and answer typed replies. */
int batch_server_init_typed(batch_server **out, const dist_ctx *world, dist_rpc *rpc, const typed_graph *g,
                            const typed_sampler_part *part, const ds_feature *const *features,
                            const gather_typed_part *feat_part, int nworkers, cgnn_err *err);
/* Starts the workers. Returns 0, or -1 with *err. */
int batch_server_start(batch_server *s, cgnn_err *err);
/* Stops and joins the workers after the queue ran empty (no caller may be waiting any more:
 * every compute rank has finished). NULL-safe. */
void batch_server_stop(batch_server *s);
void batch_server_stats_read(batch_server *s, batch_server_stats *out);
void batch_server_free(batch_server *s); /* stops first; NULL-safe */

/* ---- compute side ---------------------------------------------------------------------- */

typedef struct batch_client_scratch batch_client_scratch;
#define BATCH_CLIENT_MAX_PEERS 64

typedef struct batch_client {
    dist_rpc *rpc;                 /* borrowed */
    int num_peers;                 /* the storage ranks this compute rank talks to */
    int peers[BATCH_CLIENT_MAX_PEERS]; /* their world ranks (routing: batch b -> peers[b % num_peers]) */
    int peer_index[BATCH_CLIENT_MAX_PEERS]; /* their index among the storage ranks (messages) */
    int feat_dtype;                /* the storage ranks' feature dtype (npy_dtype; -1: no features) */
    const typed_graph *typed;      /* a typed partition's shape (batch_client_set_typed), or NULL */
    int64_t type_feat_dim[MINIBATCH_MAX_NODE_TYPES]; /* the storage ranks' rows per type (0: none) */
    int type_feat_dtype[MINIBATCH_MAX_NODE_TYPES];   /* their dtype (-1: none) */
    loader_remote remote;          /* what the loaders take: build = batch_client_build, ctx = this */
    pthread_mutex_t mu;
    batch_client_scratch **pool;   /* request / reply buffers, one set per concurrent call */
    int pool_len, pool_cap;
} batch_client;

/* Sets up *c to send to the world ranks peers[0..n) (their storage indices in index[]); the
 * whole graph's sizes fill c->remote's capacity fields; feat_dtype is the storage ranks' feature
 * dtype (-1: none), which every reply must carry. Returns 0 or -1 with *err. */
int batch_client_init(batch_client *c, dist_rpc *rpc, const int *peers, const int *index, int n, int64_t num_nodes,
                      int64_t num_edges, int64_t max_in_degree, int feat_dtype, cgnn_err *err);
void batch_client_free(batch_client *c); /* NULL-safe */
/* A typed partition: g (borrowed) its shape, dims / dtypes (T) the storage ranks' rows per type. */
void batch_client_set_typed(batch_client *c, const typed_graph *g, const int64_t *dims, const int *dtypes);

/* loader_remote.build: sends rq to peers[rq->batch % num_peers], waits, checks the reply against
 * mb's capacity and fills mb. Errors name the storage rank ("storage rank S (world rank R)"). */
int batch_client_build(void *ctx, const loader_remote_batch *rq, minibatch *mb, cgnn_err *err);

/* batch_client_build for a caller that cannot bound its batches beforehand (server-client `cgnn
 * embed`: one-hop blocks with every in-edge): *mb (zeroed before the first call; minibatch_free
 * releases it) is re-allocated to fit each reply, up to the whole graph's sizes, with feat_cols
 * float columns per row (>= rq->feat_dim). Otherwise as batch_client_build. */
int batch_client_build_grow(batch_client *c, const loader_remote_batch *rq, minibatch *mb, int64_t feat_cols,
                            cgnn_err *err);

#endif
