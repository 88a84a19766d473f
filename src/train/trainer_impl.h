/* trainer_impl.h — the training job's parts, shared by its three files (not for other callers:
 * train/trainer.h is the interface):
 *
 *   trainer.c  setup: the config's policy, the graph source (source/graph_source.h), the model
 *              family (family/model_family.h), the loaders, the task head and the optimiser; the
 *              guard of the outputs, the ranks' agreement; trainer_run, the job from start to end
 *   loop.c     the training loop: steps, validation and early stopping, the best weights, the
 *              test, the logs
 *   resume.c   the exact-resume training state (train/train_state.h), gathered from the parts
 *              below: the family's tensors and table step, the optimiser's, the early stopper's
 *              and the loop's scalars, the source's fingerprint fields
 *
 * What each part is, and who may touch it:
 *   src     where the graph lives; the loaders' source fields, seeds, the table rows on parts
 *   fam     the model, its learnable tables and best copies; forward / backward
 *   opt     the dense optimiser over fam.m.params
 *   head    the task: loss, its gradient (into fam.dout) and metrics
 *   stop    GiGL's EarlyStopper and the latest validation
 *   timers  the stage timers (the loop adds; resume restores)
 *   logs    metrics.jsonl, the TensorBoard event file, the progress bar, the profiler trace
 *   state   the training state file's path, fingerprint and position (resume.c)
 */
#ifndef CGNN_TRAINER_IMPL_H
#define CGNN_TRAINER_IMPL_H

#include "family/model_family.h"
#include "graph/edge_split.h"
#include "io/outguard.h"
#include "nn/ops.h"
#include "optim/optim.h"
#include "sample/loader.h"
#include "source/graph_source.h"
#include "train/head.h"
#include "train/outputs.h"
#include "train/progress.h"
#include "train/tb_events.h"
#include "train/train_state.h"
#include "train/trainer.h"
#include "util/trace.h"

/* The stages of a training step (seconds summed over this rank's steps; sample and gather are
 * the sampler threads', reported with each batch, overlapped with the others). */
typedef enum trainer_stage {
    STAGE_WAIT, STAGE_SAMPLE, STAGE_GATHER, STAGE_FORWARD, STAGE_LOSS, STAGE_BACKWARD, STAGE_ALLREDUCE,
    STAGE_OPTIMIZER, NUM_STAGES
} trainer_stage;
_Static_assert(NUM_STAGES == TRAIN_STATE_STAGES, "the training state holds every stage timer");

typedef struct trainer_timers {
    double stage[NUM_STAGES];
    int64_t steps;            /* steps timed */
    ops_gemm_stats loss_gs;   /* the LP losses' GEMMs (nn/lp_loss.h), registered for the whole job */
    double loss_gemm_s, loss_gemm_flops; /* ... of the training steps' losses (deltas of loss_gs) */
    double rank_s;            /* seconds in full-ranking validations (embeddings + ranking) */
    int64_t rank_runs;        /* full-ranking validations run */
} trainer_timers;

/* GiGL's EarlyStopper (strict improvement resets the counter) and the latest validation. */
typedef struct trainer_stopper {
    int metric_is_loss;       /* the criterion: the loss (minimise) or a metric (maximise) */
    int have_best;            /* fam's best copies hold the best validation's weights */
    double best_score;
    int64_t bad_checks;       /* validations since the best */
    double last_vloss, last_vmetric; /* the latest validation (loss, head_main_metric) */
    int64_t last_val_step;    /* the step of the latest validation (-1: none yet; val_at_end) */
} trainer_stopper;

typedef struct trainer_logs {
    jsonl_log log;            /* metrics.jsonl (rank 0) */
    tb_writer tb;             /* TensorBoard event file (rank 0) */
    progress prog;
    trace_writer trace;       /* profilerConfig: Chrome trace (disabled unless shouldEnableProfiler) */
} trainer_logs;

/* The exact-resume state (checkpoint_every_n_batches > 0; resume.c). */
typedef struct trainer_state {
    char path[4096];          /* "<trainedModelUri>.state"; "" when off */
    train_state_fingerprint *fp; /* this job's fingerprint (owned) */
    int resumed;              /* continuing from `at` */
    train_state_scalars at;   /* the position read from the state file */
    int64_t written;          /* state files written by this process */
    double seconds;           /* spent writing them (rank 0) */
    int64_t bytes;            /* size of the last one */
} trainer_state;

/* Test hooks, from the environment (never set outside tests). */
typedef struct trainer_faults {
    int64_t nan_step;         /* CGNN_TEST_NAN_AT_STEP: pretend the loss is NaN at this step */
    int64_t exit_step;        /* CGNN_TEST_EXIT_AT_STEP: exit abruptly at this step */
    int rank;                 /* CGNN_TEST_FAULT_RANK: the rank they apply to (-1 = all) */
    int64_t state_exit;       /* CGNN_TEST_EXIT_IN_CHECKPOINT: die half way through this process's
                                 Nth state file (0 = never) */
} trainer_faults;

typedef struct trainer {
    const task_config *cfg;   /* own_cfg: the run's copy (the trainer fills in what the config
                                 leaves to the dataset: the typed default model) */
    task_config *own_cfg;
    const trainer_args *a;    /* cfg->args, or (LightGCN) lgc_args */
    trainer_args lgc_args;    /* LightGCN: the args with num_layers 0 (no sampled blocks) */
    const dist_ctx *d;        /* rank / world; a world of one without mpirun */
    int threads;              /* compute threads of this process */
    graph_source src;
    const ds_task *task;      /* the task trained */
    const ds_task *gtask;     /* its whole splits (on a part: the global splits') */
    /* trainerArgs.ssl_positive_label_percentage (graph/edge_split.h): GiGL's self-supervised
     * split; ssl_task's splits point into ssl.pairs */
    int have_ssl;
    edge_split ssl;
    ds_task ssl_task;
    /* trainerArgs.sampling_weight: per edge type (homogeneous: [0]) the (E_e) draw weights in
     * its index's order (sample/sample_weights.h), owned; NULL: uniform sampling */
    float *sample_weights[MINIBATCH_MAX_EDGE_TYPES];
    model_family fam;
    optim opt;
    task_head head;
    loader train, val, test;
    int have_train, have_val, have_test;
    int64_t train_batches_min, train_batches_max; /* local seeds: training batches over all ranks */
    int64_t step;             /* optimiser steps taken */
    trainer_stopper stop;
    trainer_timers timers;
    trainer_logs logs;
    trainer_state state;
    trainer_faults faults;
    outguard guard;           /* this rank's inputs against the job's outputs; rank 0: the locks */
    int guarded;              /* the outputs were checked: they may be written */
} trainer;

static inline int trainer_is_root(const trainer *t) { return t->d->rank == 0; }

/* ---- loop.c ---- */

/* Training from step t->step (a resumed state's position) to the end: epochs of steps,
 * validation and early stopping (the best weights into fam's best copies and the checkpoint),
 * the training state every checkpoint_every_n_batches steps; res gets the summary. Collective.
 * Returns 0 or -1 with *err. */
int loop_train(trainer *t, trainer_result *res, cgnn_err *err);
/* The test split: metrics into res, GiGL's eval-metrics JSON and the logs. Collective. */
int loop_test(trainer *t, trainer_result *res, cgnn_err *err);
/* Rank 0: metrics.jsonl and the TensorBoard event file, new or (resuming) continued. */
int loop_open_logs(trainer *t, const char *job, cgnn_err *err);
/* 0, or -1 with *err when a log write failed (a full disk); close != 0 closes both first. */
int loop_check_logs(trainer *t, int close, cgnn_err *err);
/* The stage timers of the training state (scalars). */
void loop_stage_times(const trainer *t, double out[NUM_STAGES]);

/* ---- resume.c ---- */

/* Rank 0, after setup and before any output is touched: the state file's path and this job's
 * fingerprint, and whether a state to resume from is there (*found); a state of another job is
 * refused here (-1 with *err), so a refused run removes nothing. */
int resume_prologue(trainer *t, int *found, cgnn_err *err);
/* Every rank: when rank 0 found a state (found, its word), reads it into the parts and rewrites
 * the last good checkpoint. Collective. */
int resume_load(trainer *t, int found, trainer_result *res, cgnn_err *err);
/* Writes the training state after step t->step: *sc holds the loop's position (epoch, next
 * batch, the epoch's loss sums and timers); the parts add theirs. Collective; rank 0 writes. */
int resume_write(trainer *t, const trainer_result *res, train_state_scalars *sc, cgnn_err *err);

#endif
