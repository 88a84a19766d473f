/* outputs.h — what a training job leaves on disk, written safely.
 *
 * Every file is written to "<path>.tmp.<pid>" and renamed into place, so readers (and retried
 * jobs) never see a half-written file. Every write, rename and removal goes through the
 * process's guard first (io/outguard.h): the job declares its outputs (outputs_declare_train)
 * and each is checked against every input, on every rank, before anything is touched.
 *
 * A retry ("clean old outputs"): the job's own files at its declared paths (the model, the
 * metrics JSON, the training state when not resuming, each rank's profiler trace) are removed
 * when it starts, so a retry never mixes old and new results. Logs are never removed: each run
 * adds its own TensorBoard event file to tensorboardLogsUri (as GiGL's writer does), and
 * appends to its metrics.jsonl, opening with a run record {"step": S, "run": JOB, "mode":
 * "train" | "evaluate"}; a resumed run continues the interrupted run's records instead.
 */
#ifndef CGNN_OUTPUTS_H
#define CGNN_OUTPUTS_H

#include <stdint.h>
#include <stdio.h>

#include "io/outguard.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "train/config.h"
#include "util/err.h"

/* mkdir -p of the directory part of path (for a file) — or of path itself if is_dir. */
int outputs_make_parent(const char *path, int is_dir, cgnn_err *err);

/* Removes path if it exists (a missing file is fine). */
int outputs_remove(const char *path, cgnn_err *err);

/* Removes every file in dir matching the glob pattern (e.g. a previous run's event files). */
int outputs_remove_matching(const char *dir, const char *pattern, cgnn_err *err);

/* Writes text atomically. */
int outputs_write_text(const char *path, const char *text, cgnn_err *err);

/* GiGL's KFP metrics JSON: {"metrics": [{"name": N, "numberValue": "V", "format": "RAW"}...]}.
 * names[i] / values[i], n entries. */
int outputs_write_eval_metrics(const char *path, const char *const *names, const double *values, int n,
                               cgnn_err *err);

/* Checkpoint formats, by the extension of path: ".pt" / ".pth" is PyTorch's own torch.save
 * format holding the state_dict of GiGL's model class for the task (train/gigl_ckpt.h); any
 * other is safetensors with PyG's keys. The task picks the layout of a .pt file only. */

/* The model's parameters with PyG state_dict keys (+ metadata describing the model so
 * `shouldSkipTraining` and `cgnn embed` can check it). */
int outputs_save_model(const char *path, task_kind task, const model *m, const float *params, cgnn_err *err);
/* Loads a checkpoint into m->params, checking every key and shape (error names the key). An
 * "embedding.weight" tensor in the file is allowed and skipped (never read). */
int outputs_load_model(const char *path, task_kind task, model *m, cgnn_err *err);
/* Reads a whole checkpoint as safetensors_read does, a .pt file mapped back to PyG's keys and
 * the same metadata (gigl_ckpt_read). The caller owns *f (safetensors_free). */
int outputs_read_checkpoint(st_file *f, const char *path, cgnn_err *err);
/* Before training: checks that the model of cfg can be written to path for task (a .pt file
 * for node classification needs out_dim <= hidden_dim). Returns 0, or -1 with *err
 * (CGNN_ERR_INPUT starting with field). */
int outputs_check_checkpoint(const char *path, task_kind task, const model_config *cfg, const char *field,
                             cgnn_err *err);

/* The key of a learnable node embedding table (nn/embedding.h) in a checkpoint: the state_dict
 * key of a torch.nn.Embedding registered as `embedding` next to the GNN. */
#define OUTPUTS_EMBEDDING_KEY "embedding.weight"
#define OUTPUTS_LIGHTGCN_ALPHA_KEY "alpha" /* PyG LightGCN's alpha buffer (L + 1), in its state_dict */
/* outputs_save_model plus the tensor "embedding.weight" [emb_rows, emb_dim] from emb_weight
 * (emb_rows * emb_dim floats, written from the caller's buffer without a copy) and the metadata
 * "node_embedding_dim"; emb_weight NULL writes what outputs_save_model writes. */
int outputs_save_model_with_embedding(const char *path, task_kind task, const model *m, const float *params,
                                      const float *emb_weight, int64_t emb_rows, int64_t emb_dim, cgnn_err *err);
/* A node embedding table saved beside the model: key (e.g. "embedding.weight", or
 * "embedding_dict.<type>.weight" for a featureless node type of a typed graph), rows x dim floats. */
typedef struct outputs_table {
    const char *key;
    const float *data;
    int64_t rows, dim;
} outputs_table;
/* What the model's input was, recorded in the checkpoint's metadata ("node_feature",
 * "feature_normalization") so that whoever runs it (cgnn embed, PyTorch) feeds it the same. */
typedef struct outputs_input {
    const char *node_feature;          /* the node feature's name ("feat"; typed: the name asked for, or "") */
    const char *feature_normalization; /* "none" | "row" */
} outputs_input;

/* outputs_save_model_tables with the input recorded (in may be NULL: nothing recorded). */
int outputs_save_model_input(const char *path, task_kind task, const model *m, const float *params,
                             const outputs_table *tables, int num_tables, const outputs_input *in, cgnn_err *err);

/* outputs_save_model plus num_tables tables (<= MINIBATCH_MAX_NODE_TYPES), written from the
 * callers' buffers. */
int outputs_save_model_tables(const char *path, task_kind task, const model *m, const float *params,
                              const outputs_table *tables, int num_tables, cgnn_err *err);
/* outputs_load_embedding of the table `key`. */
int outputs_load_table(const char *path, const char *key, float *emb_weight, int64_t emb_rows, int64_t emb_dim,
                       cgnn_err *err);
/* Reads "embedding.weight" of the checkpoint at path straight into emb_weight (emb_rows x
 * emb_dim floats, caller-owned), checking the shape; nothing else of the file is read. Returns 0,
 * or -1 with *err (CGNN_ERR_INPUT naming the file and the key when it is absent or mis-shaped). */
int outputs_load_embedding(const char *path, float *emb_weight, int64_t emb_rows, int64_t emb_dim, cgnn_err *err);

/* Declares into g every output of the training job c describes, on any rank (world_size ranks:
 * one profiler trace each), and checks each against g's inputs and the others: trainedModelUri
 * (unless shouldSkipTraining) and its training state "<model>.state", evalMetricsUri,
 * tensorboardLogsUri (metrics.jsonl, event files) and profilerLogDir (trace_rank<R>.json). Each
 * error names the config field. Returns 0, or -1 with *err (CGNN_ERR_INPUT). */
int outputs_declare_train(outguard *g, const task_config *c, int world_size, cgnn_err *err);

/* metrics.jsonl: one JSON object per line, appended and flushed (a streamed log). A failed
 * write (a full disk) is remembered: jsonl_check reports it, and jsonl_close checks the close. */
typedef struct jsonl_log {
    FILE *fp;
    char path[4096];
    int failed_errno;   /* 0 while every write succeeded */
} jsonl_log;
int jsonl_open(jsonl_log *l, const char *dir, const char *name, cgnn_err *err); /* dir "" = disabled */
/* Appends {"k0": v0, ...}: keys[i] with numeric values[i] (NaN written as null); the first
 * `n_int` values are written as integers. */
void jsonl_write(jsonl_log *l, const char *const *keys, const double *values, int n, int n_int);
/* Appends one line (a complete JSON object, no newline) as it is. */
void jsonl_write_line(jsonl_log *l, const char *json);
/* Bytes in the file so far (every record is flushed as written); 0 for a disabled log. */
int64_t jsonl_bytes(const jsonl_log *l);
/* Reopens the log of an interrupted run to continue it: dir/name is cut to its first
 * keep_bytes bytes (what it held at the checkpoint being resumed; later records are dropped, as
 * the steps that wrote them run again) and new records are appended. *was_short is set to 1
 * when the file was missing or shorter than keep_bytes (its records from before the
 * checkpoint are lost; it is continued from what is there), else 0. dir "" = disabled. Returns
 * 0, or -1 with *err (CGNN_ERR_RUNTIME naming the file). */
int jsonl_open_continue(jsonl_log *l, const char *dir, const char *name, int64_t keep_bytes, int *was_short,
                        cgnn_err *err);
/* Returns 0, or -1 with *err (CGNN_ERR_RUNTIME naming the file) if a write failed. */
int jsonl_check(const jsonl_log *l, cgnn_err *err);
/* Closes the log; returns jsonl_check's answer including the close. NULL-safe; err may be NULL. */
int jsonl_close(jsonl_log *l, cgnn_err *err);

#endif
