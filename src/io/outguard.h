/* outguard.h — the one door for every file a cgnn job creates, truncates, renames or deletes.
 *
 * A command builds one outguard per process:
 *   1. the INPUTS: every file it reads (configs, every file of the dataset or of this rank's
 *      part, a checkpoint it loads, the partition's JSON and id maps);
 *   2. the OUTPUTS it will write, each declared with the config field that names it: a file
 *      (outguard_check_file: with it go "<file>.lock" and "<file>.tmp.<pid>"), a directory in
 *      which it writes only names matching some glob patterns (outguard_check_dir: TensorBoard
 *      logs, profiler traces), or a whole tree it owns (outguard_check_tree: cgnn partition's
 *      OUT). Each declaration is checked at once against every input: an output, its lock file
 *      or a temporary file of it that is an input (same device and inode, so ./a, a/../a and
 *      hard links are caught), a directory that holds an input among the names written there,
 *      a file output that is also a directory output, and a directory cgnn did not fill are
 *      refused (CGNN_ERR_INPUT naming the field and the input);
 *   3. outguard_activate: from then on every writer in cgnn (durable_open, outputs_write_text,
 *      outputs_remove, metrics.jsonl, TensorBoard event files, profiler traces, npy writers,
 *      lock files, stale temporary files) calls outguard_permit(path) before it touches path,
 *      which refuses an input and anything not declared (a new output that was never declared
 *      fails its first write with "not a declared output": it cannot skip the checks).
 * Under MPI every rank builds its own guard from ITS inputs (its part, or a storage rank's
 * parts) and declares the whole job's outputs, so an output that names a file of another part
 * is refused by the rank that holds it; the failure is combined across ranks by the caller
 * (dist_phase_failed) before any rank touches anything.
 *
 * Locks: outguard_lock takes "<output>.lock" (flock) for the whole job, so a second job with
 * the same output paths fails at once with exit 2 naming the first (pid, host, start time). The
 * kernel drops the lock when a process dies, even by kill -9; the file is removed at a normal
 * exit and on a signal.
 *
 * What a retry removes (outguard_remove_stale_tmp, and the commands' own removal of their
 * previous outputs through outputs_remove): only this job's own output files at the declared
 * paths (the model, the metrics JSON, the training state, embeddings, traces) and temporary
 * files "<output>.tmp.<pid>" of dead processes that are not inputs. Logs are never removed: a
 * TensorBoard directory gains one event file per run (as GiGL's writer and TensorBoard do) and
 * metrics.jsonl is appended to (train/outputs.h).
 */
#ifndef CGNN_OUTGUARD_H
#define CGNN_OUTGUARD_H

#include "io/dataset.h"
#include "util/err.h"

#define OUTGUARD_MAX_LOCKS 8

typedef enum outguard_kind {
    OUTGUARD_FILE, /* one file (+ its .lock and .tmp.<pid>) */
    OUTGUARD_DIR,  /* files directly in a directory whose names match patterns */
    OUTGUARD_TREE, /* everything under a directory (+ "<dir>.tmp.<pid>" staging trees, "<dir>.lock") */
} outguard_kind;

typedef struct outguard_output {
    outguard_kind kind;
    char *path;  /* owned, without trailing slashes */
    char *field; /* owned: the config field or flag naming it */
    char **own;  /* OUTGUARD_DIR: owned NULL-terminated glob patterns */
} outguard_output;

typedef struct outguard {
    int num_inputs, cap_inputs;
    char **inputs;       /* owned paths */
    char **input_roles;  /* "the dataset's edges", "the task config", ... (owned) */
    int num_outputs, cap_outputs;
    outguard_output *outputs;
    int num_locks;
    int lock_fd[OUTGUARD_MAX_LOCKS];
    int lock_cleanup[OUTGUARD_MAX_LOCKS];
    char lock_path[OUTGUARD_MAX_LOCKS][4200];
} outguard;

void outguard_init(outguard *g);
/* Deactivates g if active, frees the lists and releases (and removes) every lock; NULL-safe. */
void outguard_free(outguard *g);

/* Adds one input file (role says what it is, for messages); empty paths are ignored. */
void outguard_add_input(outguard *g, const char *path, const char *role);
/* Adds metadata.yaml and every file the dataset references. */
void outguard_add_dataset(outguard *g, const dataset *ds);

/* Declares the output file path (named by `field`, e.g. "task.yaml: trainedModelUri") and
 * checks it, its lock file and any temporary file of it against the inputs and the outputs
 * declared so far. Empty paths are ignored. Returns 0, or -1 with *err (CGNN_ERR_INPUT). */
int outguard_check_file(outguard *g, const char *path, const char *field, cgnn_err *err);
/* Declares the output directory dir, in which the command writes or removes files matching the
 * glob patterns own[] (NULL-terminated), and checks it: not an input, not a declared file, no
 * input among its names matching own[], its lock not an input, and nothing else in it (besides
 * *.lock and *.tmp.*) but the other output paths of the same job in allow_also[]
 * (NULL-terminated, may be NULL): other files make it "a directory cgnn did not fill". */
int outguard_check_dir(outguard *g, const char *dir, const char *const *own, const char *const *allow_also,
                       const char *field, cgnn_err *err);
/* Declares a tree the command owns entirely (writes anything under it, may replace it), and
 * checks that no input lies under it or under a staging tree of it, and that its lock is not an
 * input. The caller checks what "replace" may remove (cli_out_dir_check). */
int outguard_check_tree(outguard *g, const char *dir, const char *field, cgnn_err *err);

/* Locks declared output path (a file or directory path; the lock file is "<path>.lock", its
 * parent directory is created). job describes this job in the lock file. Returns 0, or -1 with
 * *err: CGNN_ERR_INPUT when another process holds it. */
int outguard_lock(outguard *g, const char *path, const char *field, const char *job, cgnn_err *err);

/* Makes g the process's guard (one at a time): every outguard_permit is answered by it. */
void outguard_activate(outguard *g);
/* Called once by a command that writes (cgnn train, embed, rank, partition, generate) before
 * it writes anything: from then on a write with no active guard is a bug, refused. */
void outguard_require(void);
/* Every writer calls this before it creates, truncates, renames onto or removes path. Returns
 * 0 when no guard is required and none is active (unit tests, library use); otherwise 0 when
 * the active guard declares path (a declared file, its .lock or .tmp.<pid>; a matching name in
 * a declared directory; anything in a declared tree) and path is not one of its inputs; else -1
 * with *err (CGNN_ERR_INPUT for an input, CGNN_ERR_RUNTIME "not a declared output" for a path
 * no declaration covers: a bug). */
int outguard_permit(const char *path, cgnn_err *err);

/* Removes "<path>.tmp.<pid>" files and staging trees left by dead processes (a kill -9
 * during a write), for a declared output path, skipping (and logging) any that is an input.
 * Returns how many it removed. */
int outguard_remove_stale_tmp(outguard *g, const char *path);

#endif
