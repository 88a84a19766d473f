/* outguard.h — outputs never touch inputs, and never another job's outputs.
 *
 * A command first collects every file it reads (configs, every file of the dataset, a
 * checkpoint it loads) into an outguard, then checks each output against it before anything
 * is removed or written:
 *   - an output file must not be one of the inputs (same device and inode, so ./a and a/../a
 *     and hard links are caught) and must not be a directory;
 *   - an output directory (TensorBoard logs, profiler traces) must not hold an input among the
 *     names the command writes or removes there, and must hold nothing but such names: a
 *     non-empty directory that cgnn did not fill is refused;
 *   - each output is locked ("<output>.lock", flock) for the whole job, so a second job with
 *     the same output paths fails at once with exit 2 naming the first (pid, host, start time).
 *     The kernel drops the lock when a process dies, even by kill -9; the file is removed at a
 *     normal exit and on a signal.
 * Errors name the config field of the output and the input it would destroy.
 */
#ifndef CGNN_OUTGUARD_H
#define CGNN_OUTGUARD_H

#include "io/dataset.h"
#include "util/err.h"

#define OUTGUARD_MAX_LOCKS 8

typedef struct outguard {
    int num_inputs, cap_inputs;
    char **inputs;       /* owned paths */
    char **input_roles;  /* "the dataset's edges", "the task config", ... (owned) */
    int num_locks;
    int lock_fd[OUTGUARD_MAX_LOCKS];
    int lock_cleanup[OUTGUARD_MAX_LOCKS];
    char lock_path[OUTGUARD_MAX_LOCKS][4200];
} outguard;

void outguard_init(outguard *g);
/* Frees the list and releases (and removes) every lock; NULL-safe. */
void outguard_free(outguard *g);

/* Adds one input file (role says what it is, for messages); empty paths are ignored. */
void outguard_add_input(outguard *g, const char *path, const char *role);
/* Adds metadata.yaml and every file the dataset references. */
void outguard_add_dataset(outguard *g, const dataset *ds);

/* Checks the output file path (named by `field`, e.g. "task.yaml: trainedModelUri").
 * Returns 0, or -1 with *err (CGNN_ERR_INPUT). */
int outguard_check_file(const outguard *g, const char *path, const char *field, cgnn_err *err);
/* Checks the output directory dir, in which the command writes or removes files matching the
 * glob patterns own[] (NULL-terminated); other files (besides *.lock and *.tmp.*) already
 * there make it "a directory cgnn did not fill". allow_also[] (NULL-terminated, may be NULL)
 * are other output paths of the same job that may live there. */
int outguard_check_dir(const outguard *g, const char *dir, const char *const *own, const char *const *allow_also,
                       const char *field, cgnn_err *err);

/* Locks output path (a file or directory path; the lock file is "<path>.lock", its parent
 * directory is created). job describes this job in the lock file. Returns 0, or -1 with *err:
 * CGNN_ERR_INPUT when another process holds it. */
int outguard_lock(outguard *g, const char *path, const char *field, const char *job, cgnn_err *err);

#endif
