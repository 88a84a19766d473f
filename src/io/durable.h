/* durable.h — writing a file so that a crash at any moment leaves either the previous file or
 * the complete new one, never a mixture, and a completed write survives a power loss.
 *
 *   durable_open    creates "<path>.tmp.<pid>" (the final name is untouched until commit)
 *   durable_write   appends bytes to it (as many calls as needed: a streamed write)
 *   durable_commit  fsync(file), close, rename over path, fsync(the directory)
 *   durable_abort   close and remove the temporary file (after an error)
 *
 * The temporary file is registered with util/cleanup, so SIGINT / SIGTERM / SIGHUP remove it.
 * A process killed by SIGKILL before durable_commit's rename leaves "<path>.tmp.<pid>" behind
 * and path as it was; cleanup_stale_tmp (util/cleanup.h) removes such leftovers.
 *
 * Test hook: a durable_file whose exit_after_bytes is >= 0 ends the process with _Exit(3) as
 * soon as that many bytes of the temporary file are written (the crash-during-a-write case of
 * tests/test_resume.sh); -1 (what durable_open sets) never does.
 */
#ifndef CGNN_DURABLE_H
#define CGNN_DURABLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef struct durable_file {
    int fd;                   /* the temporary file; -1 when closed */
    int64_t written;          /* bytes written so far */
    int64_t exit_after_bytes; /* test hook (see above); -1 = off */
    int cleanup_handle;       /* util/cleanup registration of tmp (-1: none) */
    char path[4096];          /* the final name */
    char tmp[4200];           /* "<path>.tmp.<pid>" */
} durable_file;

/* Creates the temporary file of path (truncating a leftover of this same pid). Returns 0, or -1
 * with *err (CGNN_ERR_RUNTIME naming path and the temporary file); *f then holds nothing. */
int durable_open(durable_file *f, const char *path, cgnn_err *err);

/* Appends buf[0..n). Returns 0, or -1 with *err (CGNN_ERR_RUNTIME naming path); the caller
 * then calls durable_abort. */
int durable_write(durable_file *f, const void *buf, size_t n, cgnn_err *err);

/* Makes the written bytes the file at path: fsync, close, rename, fsync of the directory (best
 * effort: some file systems refuse fsync on a directory). Returns 0, or -1 with *err
 * (CGNN_ERR_RUNTIME naming path and the step that failed); the temporary file is removed and
 * path is unchanged either way on failure. *f holds nothing afterwards. */
int durable_commit(durable_file *f, cgnn_err *err);

/* Closes and removes the temporary file; NULL-safe, idempotent. */
void durable_abort(durable_file *f);

/* fsyncs the directory holding path (best effort, as in durable_commit). */
void durable_sync_parent_dir(const char *path);

#endif
