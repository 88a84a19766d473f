/* cleanup.h — what an interrupted cgnn removes before it dies.
 *
 * Writers register the temporary files they are writing ("<path>.tmp.<pid>"), lock files and
 * staging directories; if SIGINT, SIGTERM or SIGHUP arrives, every registered path is removed
 * (directories recursively) and the process then dies of the same signal, so nothing
 * half-written is left behind. Signals are taken synchronously: cleanup_start blocks them in
 * every thread (call it first in main, before any thread exists; threads inherit the mask) and
 * one thread waits for them with sigwait, so the removal runs as ordinary code, not in a
 * signal handler. A kill -9 cannot be caught: what it leaves (temporary files named with a
 * dead pid) is removed by the next run that writes the same output (cleanup_stale_tmp).
 */
#ifndef CGNN_CLEANUP_H
#define CGNN_CLEANUP_H

#include <stddef.h>

/* Blocks SIGINT / SIGTERM / SIGHUP in the calling thread (and every thread it creates later)
 * and starts the thread that handles them. Idempotent. */
void cleanup_start(void);

/* Registers path (a file, or if is_dir a directory removed with everything under it) for
 * removal on a signal. Returns a handle for cleanup_forget, or -1 when the table is full (the
 * path is then simply not removed on a signal). */
int cleanup_add(const char *path, int is_dir);

/* Forgets handle h (after the file was renamed into place or removed); -1 is ignored. */
void cleanup_forget(int h);

/* Writes "<path>.tmp.<pid>" into out[cap] and registers it; returns the handle. */
int cleanup_tmp_path(char *out, size_t cap, const char *path);

/* Removes "<path>.tmp.<pid>" files (and directories) left by processes that no longer run on
 * this machine (a kill -9 during a write), each only if may_remove(its path, ctx) says 1 (NULL:
 * all). Returns how many it removed. Commands call it through outguard_remove_stale_tmp
 * (io/outguard.h), which never removes an input. */
int cleanup_stale_tmp(const char *path, int (*may_remove)(const char *full, void *ctx), void *ctx);

/* Removes path and, if it is a directory, everything under it. Returns 0 or -1 (errno). */
int cleanup_remove_tree(const char *path);

#endif
