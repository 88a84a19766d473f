/* graph_store.h — server-client mode in one MPI job: GiGL's graph-store mode (graphlearn-for-
 * pytorch's server-client deployment), storage ranks that hold the partitioned graph and build
 * mini-batches, and compute ranks that only train.
 *
 * Launch (docs/DISTRIBUTED.md, "Server-client mode"):
 *   mpirun -np S+T cgnn train --task_config_uri=task.yaml --resource_config_uri=r.yaml
 * with r.yaml holding GiGL's trainer_resource_config.vertex_ai_graph_store_trainer_config:
 * S = graph_store_pool.num_replicas, T = compute_pool.num_replicas x compute_cluster_local_world_size
 * (1 when not given; GPU counts mean nothing here). The world must be exactly S + T ranks.
 * World ranks 0 .. T-1 are the compute ranks (rank 0 writes the outputs and speaks for the job),
 * T .. T+S-1 the storage ranks. preprocessedMetadataUri names a `cgnn partition` output of P
 * parts, P a multiple of S: storage rank s holds parts [s k, (s+1) k), k = P / S — one contiguous
 * id range, which it serves as one "part" of its own (the parts' indexes and feature rows
 * concatenated when k > 1). A typed partition is served the same way, per type: each node type's
 * parts make one contiguous per-type range, each edge type's indexes and each type's feature rows
 * are concatenated, and the storage ranks build typed batches (batch_server_init_typed); the
 * compute ranks hold the typed graph's shape only and learn each type's row width and dtype in
 * handshake 1 (graph_store_client.type_feat_*). The feature cache is homogeneous: a typed job
 * asking for one is refused (exit 2).
 *
 * The job:
 *   every rank   dist_split: the compute ranks' group (their collectives: the trainer's) and the
 *                storage ranks'; dist_rpc on the whole world
 *   storage      opens its parts → [handshake 1: a job-wide error check; the feature shape to
 *                the compute ranks] → rpc service → the feature cache (pre-sampling its parts'
 *                training seeds: PICK / FEAT to the other storage ranks) → [handshake 2] → the
 *                BATCH workers (sample/batch_rpc.h) serve until the end
 *   compute      opens the partition JSON, the whole splits and the id maps (no part) → [1] →
 *                rpc service → [2] → trainer_run on the compute group with remote loaders
 *                (trainer_options.graph_store) → [the end]
 *   the end      every compute rank's exit status reaches the storage ranks (a job-wide max,
 *                waited for without spinning), the traffic and cache counters are summed and
 *                logged by rank 0, the workers stop, dist_rpc stops (collective).
 * A failure before training is reported by rank 0 for whichever rank failed (exit 2 for bad
 * input); a storage rank that fails or stops answering during training fails its compute ranks'
 * batch requests (its name in the message) and the job ends (MPI_Abort); a rank that dies ends
 * the job through mpirun.
 */
#ifndef CGNN_GRAPH_STORE_H
#define CGNN_GRAPH_STORE_H

#include <stdint.h>

#include "dist/dist.h"
#include "dist/dist_rpc.h"
#include "io/outguard.h"
#include "sample/minibatch.h"
#include "source/graph_source.h"
#include "train/config.h"
#include "train/trainer.h"
#include "util/err.h"

typedef struct graph_store_layout {
    int num_storage, num_compute; /* S, T */
    int storage;                  /* this rank is a storage rank */
    int index;                    /* its index in its pool */
} graph_store_layout;

/* What a compute rank's trainer needs (trainer_options.graph_store): graph_store_client, defined
 * with the graph source that reads it (source/graph_source.h, the "store" kind). */

/* trainerArgs.cache_policy (CACHE_POLICY_*) as the feature cache's policy (FEAT_CACHE_*). */
feat_cache_policy graph_store_cache_policy(int cache_policy);

/* The roles from res (res->graph_store set) for a world of world_size ranks: CGNN_ERR_INPUT when
 * the pools do not add up to the world ("graph_store_pool.num_replicas 2 + compute ranks 2 = 4,
 * but the job runs 3 processes"). */
int graph_store_layout_of(const resource_config *res, int world_size, int world_rank, graph_store_layout *out,
                          cgnn_err *err);

/* The whole job on one rank of either pool (see the top of the file): world is every rank,
 * group this rank's pool (dist_split by role), rpc created on world (not started). A compute rank
 * runs trainer_run(tc, res, opt with dist = group and graph_store set, out). Returns the job's
 * exit status on every rank (0, or the failing rank's code); *err holds the message on world
 * rank 0 (which prints it). */
int graph_store_run(const task_config *tc, const resource_config *res, const dist_ctx *world, const dist_ctx *group,
                    dist_rpc *rpc, const graph_store_layout *lay, const trainer_options *opt, trainer_result *out,
                    cgnn_err *err);

/* graph_store_run with another job on the compute ranks (server-client `cgnn embed`): compute
 * runs on every compute rank with the client description and the compute group, and returns 0,
 * or -1 with *err (its code becomes the job's exit status). The storage ranks serve BATCH as for
 * training (their feature cache is built when tc's cache policy asks for one). */
typedef int (*graph_store_compute_fn)(void *ctx, const graph_store_client *gc, const dist_ctx *group, cgnn_err *err);
/* Declares the job's outputs into a storage rank's guard (io/outguard.h), whose inputs are that
 * rank's parts and the configs: a storage rank checks every output of the job against the files
 * it holds before handshake 1, so an output naming a file of its parts fails the job. */
typedef int (*graph_store_declare_fn)(void *ctx, outguard *g, cgnn_err *err);
int graph_store_serve(const task_config *tc, const resource_config *res, const dist_ctx *world, const dist_ctx *group,
                      dist_rpc *rpc, const graph_store_layout *lay, graph_store_compute_fn compute,
                      graph_store_declare_fn declare, void *ctx, cgnn_err *err);

#endif
