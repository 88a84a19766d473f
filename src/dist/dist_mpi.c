/* dist_mpi.c — dist.h on OpenMPI. */
#include "dist/dist.h"

#include <mpi.h>

void dist_init(dist_ctx *d, int *argc, char ***argv) {
    int inited = 0;
    MPI_Initialized(&inited);
    d->initialized_here = 0;
    if (!inited) {
        int provided;
        MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        d->initialized_here = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
}

void dist_finalize(dist_ctx *d) {
    if (d->initialized_here) MPI_Finalize();
    d->initialized_here = 0;
}

void dist_allreduce_sum_f32(const dist_ctx *d, float *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
void dist_allreduce_sum_f64(const dist_ctx *d, double *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
void dist_allreduce_sum_i64(const dist_ctx *d, int64_t *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}
void dist_allreduce_max_i64(const dist_ctx *d, int64_t *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
}
void dist_barrier(const dist_ctx *d) {
    if (d->size > 1) MPI_Barrier(MPI_COMM_WORLD);
}
