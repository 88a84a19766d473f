/* npy.h — NumPy .npy files: read (memory-mapped) and write.
 *
 * Reads format versions 1.0, 2.0 and 3.0, little-endian (or byte-order-free '|') dtypes,
 * C order only. Arrays are memory-mapped read-only; `populate` pre-faults every page
 * (the `in_memory: true` case) so the data is read once and shared by all processes on
 * the machine through the page cache, never copied per process.
 * Writes go to "<path>.tmp.<pid>" and are renamed into place, so a reader never sees a
 * half-written file.
 */
#ifndef CGNN_NPY_H
#define CGNN_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef enum npy_dtype {
    NPY_DTYPE_INT8,
    NPY_DTYPE_UINT8,
    NPY_DTYPE_INT32,
    NPY_DTYPE_INT64,
    NPY_DTYPE_FLOAT16,
    NPY_DTYPE_FLOAT32,
    NPY_DTYPE_FLOAT64,
    NPY_DTYPE_COUNT
} npy_dtype;

#define NPY_MAX_DIMS 4

typedef struct npy_array {
    npy_dtype dtype;
    int ndim;                    /* 0..NPY_MAX_DIMS */
    int64_t shape[NPY_MAX_DIMS]; /* unused dims are 1 */
    int64_t count;               /* product of shape */
    const void *data;            /* count elements of npy_dtype_size(dtype) bytes; read-only */
    void *map_base;              /* owned mapping (munmap on close), NULL if none */
    size_t map_len;
    void *owned;                 /* owned malloc'ed data instead of a mapping (a tensor read whole
                                    by torch_save_read_npy; data points here), freed on close;
                                    NULL when mapped */
    char path[4096];
    int fortran_order;           /* 1: column-major data (only from npy_open_any_order): element
                                    (i, j) of a 2-D array is data[i + j * shape[0]] */
} npy_array;

/* Bytes per element of dtype. */
size_t npy_dtype_size(npy_dtype dtype);
/* NumPy's name of dtype ("float32", ...). */
const char *npy_dtype_name(npy_dtype dtype);
/* 1 for integer dtypes. */
int npy_dtype_is_int(npy_dtype dtype);

/* Opens and maps the .npy at path into *a. Checks magic, version, header dict
 * (descr/fortran_order/shape) and that the file holds exactly the declared data.
 * populate != 0 pre-faults all pages (read once now). Returns 0, or -1 with *err naming
 * the file and what is wrong. *a is zeroed on failure; on success the caller owns *a
 * (npy_close). */
int npy_open(npy_array *a, const char *path, int populate, cgnn_err *err);

/* Like npy_open, but also accepts `fortran_order: True` files (what np.save writes for a
 * transposed array, e.g. edges.T) and sets a->fortran_order; the caller must then honour the
 * column-major layout (or copy to C order). */
int npy_open_any_order(npy_array *a, const char *path, int populate, cgnn_err *err);

/* Unmaps (or frees) *a's data, keeping dtype, shape and path; NULL-safe and safe on a zeroed
 * array. */
void npy_close(npy_array *a);

/* Reads element i of an integer array as int64 (any integer dtype). */
int64_t npy_get_int(const npy_array *a, int64_t i);

/* Writes a C-order array to path atomically (temporary file + rename).
 * Returns 0, or -1 with *err. */
int npy_write(const char *path, npy_dtype dtype, int ndim, const int64_t *shape, const void *data,
              cgnn_err *err);

/* Streaming writer for arrays too large to hold twice: open, append raw element bytes in
 * C order, close (checks the byte count, then renames into place). */
typedef struct npy_writer {
    void *fp; /* FILE* */
    char path[4096];
    char tmp_path[4200];
    size_t expect_bytes, written_bytes;
    int cleanup; /* util/cleanup handle of tmp_path (removed on a signal) */
} npy_writer;

int npy_writer_open(npy_writer *w, const char *path, npy_dtype dtype, int ndim,
                    const int64_t *shape, cgnn_err *err);
int npy_writer_append(npy_writer *w, const void *bytes, size_t n, cgnn_err *err);
/* Finishes the file; on error (or if abort != 0) removes the temporary file. */
int npy_writer_close(npy_writer *w, int abort, cgnn_err *err);

#endif
