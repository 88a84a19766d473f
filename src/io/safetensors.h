/* safetensors.h — the safetensors checkpoint format (Hugging Face): 8-byte little-endian
 * header length, a JSON header {"name": {"dtype": "F32", "shape": [..], "data_offsets":
 * [begin, end]}, ..., "__metadata__": {...}}, then the raw little-endian data.
 * Loadable with safetensors.torch.load_file, so a PyG user gets a state_dict.
 */
#ifndef CGNN_SAFETENSORS_H
#define CGNN_SAFETENSORS_H

#include <stdint.h>

#include "io/durable.h"
#include "util/err.h"

typedef struct st_tensor {
    const char *name;         /* key */
    int ndim;
    int64_t shape[4];
    const float *data;        /* float32, numel = prod(shape) */
} st_tensor;

/* Writes tensors (F32) and optional string metadata pairs (meta[2k] = key, meta[2k+1] =
 * value; n_meta pairs) to path atomically (temporary file + fsync + rename). Keys are written
 * in the given order. Returns 0, or -1 with *err (CGNN_ERR_RUNTIME, naming the path). */
int safetensors_write(const char *path, const st_tensor *tensors, int n, const char *const *meta,
                      int n_meta, cgnn_err *err);
/* The same file image streamed into an open durable file (io/durable.h) that the caller
 * commits (or aborts, after an error): for writers that need the durable file's options.
 * Returns 0, or -1 with *err (CGNN_ERR_RUNTIME naming the path). */
int safetensors_write_to(durable_file *out, const st_tensor *tensors, int n, const char *const *meta, int n_meta,
                         cgnn_err *err);

/* A read checkpoint: tensors point into `blob` (owned). */
typedef struct st_file {
    int n;
    char **names;             /* (n) owned */
    int *ndims;               /* (n) */
    int64_t (*shapes)[4];     /* (n) */
    float **data;             /* (n) pointers into blob */
    void *blob;               /* the data section, 64-byte aligned; owned */
    char path[4096];
    int n_meta;               /* "__metadata__" pairs */
    char **meta;              /* (2*n_meta) key, value, key, value...; owned */
    int64_t *file_offsets;    /* (n) byte offset of each tensor's data in the file; owned */
    int64_t file_size;        /* bytes, when the header was read */
} st_file;

/* Reads a safetensors file written by safetensors_write (F32 tensors only; other dtypes are
 * an error naming the key). Returns 0 or -1 with *err (CGNN_ERR_INPUT naming the file and the
 * problem: truncated, bad JSON, offsets out of range...). Caller owns *f (safetensors_free); on
 * failure *f is left zeroed, owning nothing. Tensors are in header order; shapes[i][d] is 1
 * for d >= ndims[i]. */
int safetensors_read(st_file *f, const char *path, cgnn_err *err);
void safetensors_free(st_file *f); /* NULL-safe */
/* safetensors_read without the data: the header is read and checked exactly the same way, but
 * data[i] stay NULL and nothing of the data section is read or allocated — for checkpoints
 * holding tensors far larger than the ones wanted (a 10M-row embedding table). Read tensors
 * one by one with safetensors_read_tensor. */
int safetensors_read_header(st_file *f, const char *path, cgnn_err *err);
/* Reads tensor i of f (from safetensors_read_header or safetensors_read) from f->path straight
 * into dst (its numel floats; no intermediate copy). Returns 0, or -1 with *err
 * (CGNN_ERR_INPUT naming the file and key; also when the file changed size since the header was
 * read). */
int safetensors_read_tensor(const st_file *f, int i, float *dst, cgnn_err *err);
/* Index of key in f, or -1. */
int safetensors_find(const st_file *f, const char *name);
/* The "__metadata__" value of key in f, or NULL (points into f). */
const char *safetensors_meta(const st_file *f, const char *key);

#endif
