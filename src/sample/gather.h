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

/* out is (n, f->dim) float32; ids[n] are row ids in [0, f->rows) (caller guarantees).
 * nthreads <= 1 runs on the calling thread. */
void gather_rows(float *out, const ds_feature *f, const int64_t *ids, int64_t n, int nthreads);

/* gather_rows into rows `stride` >= f->dim floats apart: row i lands at out + i * stride,
 * columns [f->dim, stride) untouched (room for learnable embedding columns). */
void gather_rows_strided(float *out, int64_t stride, const ds_feature *f, const int64_t *ids, int64_t n,
                         int nthreads);

/* Plain, single-threaded reference of gather_rows (same output). */
void gather_rows_ref(float *out, const ds_feature *f, const int64_t *ids, int64_t n);

/* Divides each row of x (n, dim) by its L1 norm (rows with norm 0 are left as they are). */
void gather_normalize_rows(float *x, int64_t n, int64_t dim);
/* The same over the first dim columns of rows `stride` floats apart. */
void gather_normalize_rows_strided(float *x, int64_t n, int64_t dim, int64_t stride);

/* Converts one IEEE half to float. */
float gather_half_to_float(uint16_t h);

#endif
