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
 * naming the rank, never a read out of bounds.
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

enum { BATCH_RPC_BATCH = 5 }; /* the handler id, beside part_rpc's PICK / FEAT / EMB / ACT */
#define BATCH_REQ_HEADER 8
#define BATCH_REP_HEADER 9

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
 * rank of the world (or unset: every storage rank): the process dies abruptly after answering N batches. */
int batch_server_init(batch_server **out, const dist_ctx *world, dist_rpc *rpc, const csc_graph *local,
                      const sampler_part *part, const ds_feature *feature, const gather_part *feat_part, int nworkers,
                      cgnn_err *err);
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
    loader_remote remote;          /* what the loaders take: build = batch_client_build, ctx = this */
    pthread_mutex_t mu;
    batch_client_scratch **pool;   /* request / reply buffers, one set per concurrent call */
    int pool_len, pool_cap;
} batch_client;

/* Sets up *c to send to the world ranks peers[0..n) (their storage indices in index[]); the
 * whole graph's sizes fill c->remote's capacity fields. Returns 0 or -1 with *err. */
int batch_client_init(batch_client *c, dist_rpc *rpc, const int *peers, const int *index, int n, int64_t num_nodes,
                      int64_t num_edges, int64_t max_in_degree, cgnn_err *err);
void batch_client_free(batch_client *c); /* NULL-safe */

/* loader_remote.build: sends rq to peers[rq->batch % num_peers], waits, checks the reply against
 * mb's capacity and fills mb. Errors name the storage rank ("storage rank S (world rank R)"). */
int batch_client_build(void *ctx, const loader_remote_batch *rq, minibatch *mb, cgnn_err *err);

#endif
