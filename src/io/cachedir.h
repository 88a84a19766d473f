/* cachedir.h — where cgnn keeps what it derives from a dataset (graph indexes, converted
 * datasets), outside every dataset folder.
 *
 * A dataset folder is never cgnn's to write: DGL GraphBolt hashes the folder and preprocesses
 * again when it changes, a dataset may be read-only or shared, and inputs are never modified.
 * Derived files therefore live in one cache folder per user, found in this order:
 *   $CGNN_CACHE_DIR                       (set: used as it is; "" = no cache at all)
 *   $XDG_CACHE_HOME/cgnn                  (the XDG base-directory rule)
 *   $HOME/.cache/cgnn
 * and under it one subfolder per kind of file ("csc", "gigl", ...). Files there are named by
 * the content they were derived from (a fingerprint), so two datasets with the same edges share
 * an index, a changed input is never matched with an old file, and the folder can be deleted at
 * any time (the next run rebuilds what it needs).
 */
#ifndef CGNN_CACHEDIR_H
#define CGNN_CACHEDIR_H

#include <stddef.h>

#include "util/err.h"

/* Writes cgnn's cache folder for `what` (a subfolder name without '/') into out[cap] and creates
 * it (and its parents, mode 0755) if missing. Returns 0, or -1 with *err (CGNN_ERR_RUNTIME,
 * naming the folder and the variable it came from) when there is none: $CGNN_CACHE_DIR is set to
 * "", neither it nor $XDG_CACHE_HOME nor $HOME is set, the path is too long or cannot be
 * created. Callers treat -1 as "do not cache" (a log note), never as a failure of the run. */
int cachedir_get(char *out, size_t cap, const char *what, cgnn_err *err);

/* The root folder (without `what`) and the variable that named it ("CGNN_CACHE_DIR",
 * "XDG_CACHE_HOME" or "HOME"), without creating anything: for `cgnn info`. Returns 0, or -1
 * with *err as cachedir_get. */
int cachedir_root(char *out, size_t cap, const char **from, cgnn_err *err);

#endif
