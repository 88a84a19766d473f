/* dist_serial.c — dist.h without MPI: a world of one; collectives leave buffers unchanged. */
#include "dist/dist.h"

void dist_init(dist_ctx *d, int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    d->rank = 0;
    d->size = 1;
    d->initialized_here = 0;
}
void dist_finalize(dist_ctx *d) { (void)d; }
void dist_allreduce_sum_f32(const dist_ctx *d, float *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_allreduce_sum_f64(const dist_ctx *d, double *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_allreduce_sum_i64(const dist_ctx *d, int64_t *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_allreduce_max_i64(const dist_ctx *d, int64_t *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_barrier(const dist_ctx *d) { (void)d; }
