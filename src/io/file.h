/* file.h — opening input files safely.
 *
 * Every reader of outside files opens them through file_open_regular: it never blocks (a FIFO
 * named as metadata.yaml or an .npy would otherwise hang in open(2)) and refuses anything that
 * is not a regular file (a FIFO, a device such as /dev/zero, a socket, a directory), whose size
 * would not bound what is read. Also: whether two paths name the same file, which the output
 * guards use to refuse writing over an input.
 */
#ifndef CGNN_FILE_H
#define CGNN_FILE_H

#include <sys/stat.h>

#include "util/err.h"

/* Opens path read-only (O_CLOEXEC) if it is a regular file; st (optional) gets its fstat.
 * Returns the descriptor (blocking mode, the caller closes it), or -1 with *err
 * (CGNN_ERR_INPUT) naming the path and what it is instead. */
int file_open_regular(const char *path, struct stat *st, cgnn_err *err);

/* A word for the kind of file st describes ("a FIFO", "a character device", ...). */
const char *file_kind_name(const struct stat *st);

/* 1 if a and b name the same existing file (same device and inode), else 0. */
int file_same(const char *a, const char *b);

#endif
