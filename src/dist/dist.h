/* dist.h — the one small interface between cgnn and MPI.
 *
 * Built with CGNN_WITH_MPI, it wraps OpenMPI (dist_mpi.c); without, a serial fallback
 * (dist_serial.c) where rank = 0 and size = 1 and every collective is a copy. An MPI build
 * run without mpirun is a world of one.
 */
#ifndef CGNN_DIST_H
#define CGNN_DIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct dist_ctx {
    int rank, size;
    int initialized_here; /* dist_init called MPI_Init (so dist_finalize calls MPI_Finalize) */
} dist_ctx;

/* Initialises the world (MPI_Init_thread with FUNNELED if not yet initialised). */
void dist_init(dist_ctx *d, int *argc, char ***argv);
void dist_finalize(dist_ctx *d);

/* In-place sum over ranks of n floats / doubles / int64s. */
void dist_allreduce_sum_f32(const dist_ctx *d, float *buf, size_t n);
void dist_allreduce_sum_f64(const dist_ctx *d, double *buf, size_t n);
void dist_allreduce_sum_i64(const dist_ctx *d, int64_t *buf, size_t n);
/* In-place max over ranks of n int64s (collective error flags, batch counts). */
void dist_allreduce_max_i64(const dist_ctx *d, int64_t *buf, size_t n);
void dist_barrier(const dist_ctx *d);

#endif
