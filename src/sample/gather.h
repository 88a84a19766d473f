/* gather.h — feature gathering: rows of a node feature table into a dense float32 matrix.
 *
 * This is the memory-bandwidth hot path of every training step: ids are random, rows are
 * F elements of any feature dtype, converted to float32. The fast version splits rows over
 * threads and copies float32 rows with memcpy; gather_rows_ref is the plain reference.
 */
#ifndef CGNN_GATHER_H
#define CGNN_GATHER_H

#include <stdint.h>

#include "io/dataset.h"
#include "util/err.h"

/* out is (n, f->dim) float32; ids[n] are row ids in [0, f->rows) (caller guarantees).
 * nthreads <= 1 runs on the calling thread. */
void gather_rows(float *out, const ds_feature *f, const int64_t *ids, int64_t n, int nthreads);

/* gather_rows into rows `stride` >= f->dim floats apart: row i lands at out + i * stride,
 * columns [f->dim, stride) untouched (room for learnable embedding columns). */
void gather_rows_strided(float *out, int64_t stride, const ds_feature *f, const int64_t *ids, int64_t n,
                         int nthreads);

/* Plain, single-threaded reference of gather_rows (same output). */
void gather_rows_ref(float *out, const ds_feature *f, const int64_t *ids, int64_t n);

/* Divides each row of x (n, dim) by its L1 norm (rows with norm 0 are left as they are; a row of
 * denormals, whose 1 / norm overflows a float, is divided in double: its entries stay in [-1, 1]). */
void gather_normalize_rows(float *x, int64_t n, int64_t dim);
/* The same over the first dim columns of rows `stride` floats apart. */
void gather_normalize_rows_strided(float *x, int64_t n, int64_t dim, int64_t stride);

/* ---- partitioned features ---------------------------------------------------------
 * On a partitioned graph a rank holds the feature rows of its own nodes only (global ids
 * [part_start[part], part_start[part + 1]), row = id - part_start[part]); the rows of other
 * nodes are fetched from their owners, one request per owner per batch, in the feature's own
 * dtype (a uint8 feature moves 1 byte per element), and converted here exactly as local rows. */
typedef struct gather_remote_req {
    int num_parts;
    const int64_t *n;     /* (num_parts) rows asked of each part (0 for this part) */
    int64_t *const *ids;  /* (num_parts) global ids asked of each part */
    void **rows;          /* (num_parts) out: n[p] rows of the feature's dtype, in ids order;
                             the callback grows rows[p] (realloc, rows_cap[p] bytes) */
    size_t *rows_cap;     /* (num_parts) */
    size_t *rows_len;     /* (num_parts) out: bytes written to rows[p] */
} gather_remote_req;

typedef struct gather_part {
    int num_parts, part;
    const int64_t *part_start; /* (num_parts + 1) */
    /* fetches every part's rows with n[p] > 0; 0 or -1 with *err; called concurrently */
    int (*fetch_remote)(void *ctx, gather_remote_req *req, cgnn_err *err);
    void *ctx;
} gather_part;

/* One producer's scratch for gather_rows_part (max_rows: the most ids of one call): the typed
 * scratch (below) with one node type, so that n[p], ids[p], pos[p] are part p's. */
typedef struct gather_typed_scratch gather_part_scratch;
int gather_part_scratch_init(gather_part_scratch *sc, int num_parts, int64_t max_rows, cgnn_err *err);
void gather_part_scratch_free(gather_part_scratch *sc); /* NULL-safe */

/* gather_rows_strided on a partitioned graph: f holds the own rows; ids[0..n) are global ids.
 * Returns 0, or -1 with *err when the fetch failed or a reply has the wrong size. */
int gather_rows_part(float *out, int64_t stride, const ds_feature *f, const gather_part *gp, gather_part_scratch *sc,
                     const int64_t *ids, int64_t n, int nthreads, cgnn_err *err);

/* The owner's side: appends the raw rows (feature dtype) of own global ids[0..n) to *out
 * (grown with realloc, *cap bytes); *len = bytes written. -1 with *err (CGNN_ERR_INPUT) when an
 * id is not owned (a peer's request is outside data). */
int gather_rows_owned(const ds_feature *f, const gather_part *gp, const int64_t *ids, int64_t n, void **out,
                      size_t *cap, size_t *len, cgnn_err *err);

/* ---- partitioned typed features ----------------------------------------------------
 * A part of a partitioned typed graph holds, per node type t, the rows of its own nodes of t
 * (per-type ids [type_start[t][part], type_start[t][part + 1]), row = id - start); the rows of
 * other parts are fetched from their owners in ONE request per owner per batch covering every
 * type, each type's rows in its feature's own dtype, converted here exactly as local rows. */
typedef struct gather_typed_req {
    int num_parts, num_types;      /* P, T */
    const int64_t *n;              /* (P * T) [p * T + t]: rows of type t asked of part p (0 for this part) */
    int64_t *const *ids;           /* (P * T) the per-type ids asked */
    void **rows;                   /* (P) out: part p's rows, type by type, in ids order, each type in its
                                      feature's dtype; the callback grows rows[p] (realloc, rows_cap[p]) */
    size_t *rows_cap;              /* (P) */
    size_t *rows_len;              /* (P) out: bytes written to rows[p] */
} gather_typed_req;

typedef struct gather_typed_part {
    int num_parts, part, num_types;
    const int64_t *const *type_start; /* (T) each (num_parts + 1) */
    /* fetches every part's rows with some n[p * T + t] > 0; 0 or -1 with *err; called concurrently */
    int (*fetch_remote)(void *ctx, gather_typed_req *req, cgnn_err *err);
    void *ctx;
} gather_typed_part;

/* One producer's scratch for gather_typed_rows_part (max_rows: the most ids of one call, all
 * types together). */
struct gather_typed_scratch {
    int num_parts, num_types;
    int64_t max_rows;
    int64_t *n, *flat_ids, *flat_pos, **ids, **pos; /* (P * T) and the flat arrays */
    void **rows;
    size_t *rows_cap, *rows_len;                    /* (P) */
};
typedef struct gather_typed_scratch gather_typed_scratch;
int gather_typed_scratch_init(gather_typed_scratch *sc, int num_parts, int num_types, int64_t max_rows, cgnn_err *err);
void gather_typed_scratch_free(gather_typed_scratch *sc); /* NULL-safe */

/* For every node type t with f[t] != NULL (the own rows of t's feature): the rows of per-type ids
 * ids[t][0..n[t]) into out[t], rows stride[t] >= f[t]->dim floats apart; own rows locally, the
 * others fetched in one fetch_remote call. Returns 0, or -1 with *err when the fetch failed or a
 * reply has the wrong size. */
int gather_typed_rows_part(float *const *out, const int64_t *stride, const ds_feature *const *f,
                           const gather_typed_part *gp, gather_typed_scratch *sc, const int64_t *const *ids,
                           const int64_t *n, int nthreads, cgnn_err *err);

/* Server-client mode (sample/batch_rpc.h): the raw rows (the feature's dtype, f->dim elements
 * each) of global ids[0..n) into out[n x row bytes], own rows copied locally and the others
 * fetched through gp as gather_rows_part does; and their conversion on the receiving side, rows
 * `stride` floats apart, exactly as the gathers convert. Returns 0, or -1 with *err. */
int gather_rows_part_raw(void *out, const ds_feature *f, const gather_part *gp, gather_part_scratch *sc,
                         const int64_t *ids, int64_t n, cgnn_err *err);
/* gather_rows_part_raw on a typed part: for every type t with f[t] != NULL, the raw rows of
 * per-type ids ids[t][0..n[t]) into out[t] (n[t] x row bytes), own rows copied, the others'
 * fetched in one fetch_remote call as gather_typed_rows_part does. Returns 0, or -1 with *err. */
int gather_typed_rows_part_raw(void *const *out, const ds_feature *const *f, const gather_typed_part *gp,
                               gather_typed_scratch *sc, const int64_t *const *ids, const int64_t *n, cgnn_err *err);
void gather_convert_rows(float *out, int64_t stride, const void *rows, npy_dtype dtype, int64_t dim, int64_t n);

/* Converts one IEEE half to float. */
float gather_half_to_float(uint16_t h);

#endif
