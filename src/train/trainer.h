/* trainer.h — `cgnn train`: GiGL Trainer semantics for node classification and anchor-based
 * link prediction (the task head, train/head.h, is the only part that differs).
 *
 * One job: open the dataset, build the model and optimiser, train on sampled mini-batches
 * (background sampler threads feed an in-order prefetch queue), validate every
 * val_every_num_batches (0 = once per epoch) on num_val_batches batches (0 = all), early-stop
 * on the loss or a metric with GiGL's EarlyStopper (strict improvement resets the counter; stop
 * when it reaches the patience), restore the best weights, test, and write the outputs:
 * the model (safetensors, PyG keys; also rewritten at every new best validation score, so a
 * failed job leaves its last good checkpoint), GiGL's eval-metrics JSON, and metrics.jsonl.
 * A non-finite loss stops the job with CGNN_ERR_RUNTIME and keeps the last good checkpoint.
 * With checkpoint_every_n_batches > 0 the whole training state is written every N steps
 * (train/train_state.h) and a job started again after a crash continues from it to the same
 * bits; its logs continue where the state was written.
 *
 * One training step:
 *   mb = loader_next → zero grads → (embedding rows into the input) → model_forward
 *   → head: softmax CE (NC) or retrieval loss (LP), + d(loss)/d(output)
 *   → all-reduce of a 3-number status (ranks with a batch, ranks whose loss is not finite)
 *   → model_backward, each layer's gradients all-reduced (MPI_Iallreduce) as soon as final
 *   → wait, divide by the ranks that had a batch → clip → lr = sched(step) → optim_step
 *   → (the embedding table's touched rows: merged across ranks, sparse optimiser step)
 *
 * Data parallel (mpirun -np N): every rank opens the same memory-mapped dataset, takes its
 * contiguous slice of one global shuffle (DistributedItemSampler), and applies the same averaged
 * gradient, so replicas never drift. Ranks whose slice runs out early join the remaining
 * all-reduces with zero gradients (Join) unless drop_uneven_inputs. Metrics are weighted sums
 * over ranks; every rank takes the same early-stopping decision; rank 0 alone writes outputs.
 * Every phase ends with a collective error check, so one rank's failure stops all ranks with
 * that rank's message on rank 0, never a hang.
 */
#ifndef CGNN_TRAINER_H
#define CGNN_TRAINER_H

#include <stdint.h>

#include "dist/dist.h"
#include "train/config.h"
#include "train/head.h"
#include "util/err.h"

typedef struct trainer_result {
    int64_t steps;            /* optimiser steps taken */
    int64_t epochs;           /* epochs started */
    int stopped_early;
    int has_val;              /* validation ran at least once */
    double best_val_loss, best_val_acc; /* at the best validation check (acc: the main metric,
                                           accuracy for NC, MRR for LP) */
    int has_test;
    double test_loss, test_acc;         /* test_acc: the main metric, as best_val_acc */
    int num_test_metrics;               /* every test metric (head_metrics), loss first */
    char test_metric_names[HEAD_MAX_METRICS][32];
    double test_metrics[HEAD_MAX_METRICS];
    double train_seconds;
} trainer_result;

struct graph_store_client;

typedef struct trainer_options {
    const char *job_name;
    int progress;             /* draw progress on stderr (rank 0 only) */
    const dist_ctx *dist;     /* the data-parallel world, or NULL for one process */
    /* server-client mode (train/graph_store.h): this process is a compute rank, dist its group of
     * compute ranks; the storage ranks hold the partitioned graph and build the batches. NULL
     * otherwise. */
    const struct graph_store_client *graph_store;
} trainer_options;

/* Runs the job described by cfg / res. Returns 0, or -1 with *err (CGNN_ERR_INPUT for bad
 * config or data found before training starts, CGNN_ERR_RUNTIME for failures during it). */
int trainer_run(const task_config *cfg, const resource_config *res, const trainer_options *opt,
                trainer_result *out, cgnn_err *err);

#endif
