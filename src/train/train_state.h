/* train_state.h — the whole state of a training run in one file, so that a run killed at any
 * moment continues, when started again, to the same bits as a run never interrupted.
 *
 * What the numbers of a run depend on, and where each comes from on resume:
 *   - parameters, optimiser moments (Adam m, v / SGD momentum) and step   -> tensors + scalars
 *   - learning-rate scheduler position: a closed form of the step         -> the step
 *   - early stopping: best score, checks without improvement, best weights -> scalars + tensors
 *   - learnable embedding table, its sparse optimiser state and step, and
 *     the table at the best validation                                    -> tensors + scalar
 *   - loader position: every batch is a pure function of (seed, epoch, batch index), dropout
 *     masks of (seed, step), random negatives of (seed, epoch, batch, rank) -> epoch, next batch
 *   - the epoch's running training loss (logged at validations)           -> scalars
 * plus what the logs need to continue without duplicate records (metrics.jsonl and the
 * TensorBoard event file: name and byte length at the checkpoint) and the stage timers.
 *
 * File: "<trainedModelUri>.state", a safetensors file (F32 tensors, io/safetensors.h) whose
 * "__metadata__" holds the scalars ("s.<name>": integers in decimal, doubles as the hex of
 * their IEEE-754 bits, so they round-trip exactly) and a fingerprint of the job ("fp.<field>":
 * every config value that changes the numbers, the dataset's identity, the model's shape and
 * the world size). Written through io/durable.h (temporary file, fsync, rename, directory
 * fsync): a crash leaves the previous state or the new one, never a torn file.
 *
 * A state is only resumed by a job with the same fingerprint; any difference is refused with
 * an error naming the state file and the first differing field. */
#ifndef CGNN_TRAIN_STATE_H
#define CGNN_TRAIN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "train/config.h"
#include "util/err.h"

/* ---- fingerprint: "field" = "value" pairs that must match for a resume ---- */

#define TRAIN_STATE_MAX_FIELDS 80

typedef struct train_state_fingerprint {
    int n;
    char key[TRAIN_STATE_MAX_FIELDS][64];
    char value[TRAIN_STATE_MAX_FIELDS][160];
} train_state_fingerprint;

/* The fingerprint of a job: every trainerArgs value that changes the numbers of training (by
 * its trainerArgs name; train_main_num_workers, num_test_batches and checkpoint_every_n_batches
 * do not), the dataset (name, task, node and edge counts, the feature's name and shape, each
 * split's size and a hash of its seeds and labels), the model (class, channels, parameter count)
 * and world_size. feat may be NULL (no node features); g may be NULL (a typed graph: the node and
 * edge counts are the dataset's totals, and train_state_fingerprint_add_typed adds the rest). */
void train_state_fingerprint_init(train_state_fingerprint *fp, const task_config *cfg, const dataset *ds,
                                  const ds_task *task, const ds_feature *feat, const csc_graph *g,
                                  const model *m, int world_size);

/* One more field of the fingerprint (server-client mode: the partition and the seed assignment). */
void train_state_fingerprint_add(train_state_fingerprint *fp, const char *key, const char *value);

/* A typed graph's part of the fingerprint (after train_state_fingerprint_init): its node types
 * (names, counts), edge types (names, counts), each type's input (feature name, shape, dtype,
 * or a learnable table), the per-edge-type fanouts (fanouts[h][e], num_layers hops), RGCN's
 * num_bases, and, when the job has learnable tables (have_tables), their optimiser and lr.
 * Long lists are a count plus a hash of their text, so every field fits its value. */
void train_state_fingerprint_add_typed(train_state_fingerprint *fp, const task_config *cfg, const dataset *ds,
                                       const ds_feature *const *type_feature,
                                       const int64_t (*fanouts)[MINIBATCH_MAX_EDGE_TYPES], int num_layers,
                                       int have_tables);

/* ---- scalars ---- */

#define TRAIN_STATE_STAGES 8 /* wait, sample, gather, forward, loss, backward, all-reduce, optimizer */

typedef struct train_state_scalars {
    int64_t step;              /* optimiser steps taken */
    int64_t epoch;             /* the epoch in progress */
    int64_t next_batch;        /* the first batch of `epoch` not trained yet */
    double loss_sum;           /* the epoch's training losses so far, and their count */
    int64_t loss_n;
    double last_vloss, last_vmetric; /* the epoch's latest validation (NaN: none yet) */
    int64_t have_best;         /* early stopping (GiGL's EarlyStopper) */
    double best_score;
    int64_t bad_checks;
    int64_t has_val;           /* trainer_result: validation ran; values at the best check */
    double best_val_loss, best_val_acc;
    int64_t optim_step;        /* optim.step */
    int64_t emb_step;          /* embedding_table.step (0 without a table); a typed graph's
                                  tables all step together: their common step */
    int64_t compute_threads;   /* of the run that wrote the state (informational) */
    int64_t jsonl_bytes;       /* metrics.jsonl length at the checkpoint */
    int64_t tb_bytes, tb_records; /* the TensorBoard event file's length and record count */
    char tb_file[256];         /* its name in tensorboardLogsUri ("" = none) */
    double stage_seconds[TRAIN_STATE_STAGES]; /* the trainer's stage timers, and steps timed */
    int64_t timed_steps;
    double epoch_stage_seconds[TRAIN_STATE_STAGES]; /* the timers when `epoch` began */
    int64_t epoch_timed_steps;
    double train_seconds;      /* training time before the checkpoint */
} train_state_scalars;

/* ---- tensors: the caller's buffers, written from and read into in place ---- */

/* At most: params, optim.m, optim.v, best_params, and 4 per embedding table (weight, m, v, best):
 * the homogeneous table or one per node type of a typed graph. */
#define TRAIN_STATE_MAX_TENSORS (4 + 4 * (MINIBATCH_MAX_NODE_TYPES + 1))

typedef struct train_state_tensor {
    const char *name;
    float *data;               /* rows x cols floats, caller-owned */
    int64_t rows, cols;
    int lazy;                  /* data is zero-filled memory backed on first write (the
                                  embedding's optimiser state): on read, all-zero pages of the
                                  file are skipped instead of copied, so they stay unbacked */
} train_state_tensor;

/* "<model_uri>.state" into out (cap bytes). Returns 0, or -1 with *err when it does not fit. */
int train_state_path(char *out, size_t cap, const char *model_uri, cgnn_err *err);

/* Writes the state to path durably (io/durable.h). exit_after_bytes >= 0 is a test hook: the
 * process _Exit(3)s after writing that many bytes of the temporary file (-1: off). Returns 0, or
 * -1 with *err (CGNN_ERR_RUNTIME naming the path); path is then unchanged. */
int train_state_save(const char *path, const train_state_fingerprint *fp, const train_state_scalars *s,
                     const train_state_tensor *t, int n, int64_t exit_after_bytes, cgnn_err *err);

/* Bytes train_state_save would write for these tensors (the data section; the header adds a
 * few kilobytes). */
int64_t train_state_data_bytes(const train_state_tensor *t, int n);

/* A state being read: train_state_open, then train_state_read, then train_state_close. */
typedef struct train_state_reader {
    st_file f;
    char path[4096];
} train_state_reader;

/* Reads the header of the state at path, checks it against fp (the job resuming it) and fills
 * *s. Returns 0, or -1 with *err (CGNN_ERR_INPUT naming path: not a training state, unreadable,
 * a field of the fingerprint that differs — "<field> is A in the state, B in this job" — or a
 * missing scalar), always with how to start fresh (delete the file). The caller then calls
 * train_state_close either way. */
int train_state_open(train_state_reader *r, const char *path, const train_state_fingerprint *fp,
                     train_state_scalars *s, cgnn_err *err);

/* Reads tensors t[0..n) (the file must hold exactly these names and shapes) into their
 * buffers. Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the path and the tensor). */
int train_state_read(train_state_reader *r, const train_state_tensor *t, int n, cgnn_err *err);

void train_state_close(train_state_reader *r); /* NULL-safe */

#endif
