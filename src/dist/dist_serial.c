/* dist_serial.c — dist.h without MPI: a world of one; collectives leave buffers unchanged. */
#include "dist/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dist_init(dist_ctx *d, int *argc, char ***argv) { (void)dist_init_threads(d, argc, argv, 0, NULL); }
int dist_init_threads(dist_ctx *d, int *argc, char ***argv, int multiple, cgnn_err *err) {
    (void)argc, (void)argv, (void)multiple, (void)err;
    d->rank = 0;
    d->size = 1;
    d->local_rank = 0;
    d->local_size = 1;
    d->initialized_here = 0;
    d->thread_multiple = 1; /* no MPI: a world of one, any thread may call */
    d->has_comm = 0;
    d->comm_handle = 0;
    return 0;
}
void dist_finalize(dist_ctx *d) { (void)d; }

const char *dist_backend(void) { return "serial build, no MPI"; }

void dist_split(const dist_ctx *d, int color, dist_ctx *out) {
    (void)color;
    *out = *d;
}
void dist_split_free(dist_ctx *sub) { (void)sub; }
void dist_barrier_idle(const dist_ctx *d) { (void)d; }
void dist_allreduce_max_i64_idle(const dist_ctx *d, int64_t *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_allreduce_sum_f32(const dist_ctx *d, float *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_allreduce_sum_f64(const dist_ctx *d, double *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_allreduce_sum_i64(const dist_ctx *d, int64_t *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_allreduce_max_i64(const dist_ctx *d, int64_t *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_barrier(const dist_ctx *d) { (void)d; }
void dist_bcast_f32(const dist_ctx *d, float *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_bcast_i64(const dist_ctx *d, int64_t *buf, size_t n) { (void)d, (void)buf, (void)n; }

int dist_check_errors(const dist_ctx *d, int failed, int my_code, const char *msg, char *report, size_t cap,
                      int *code) {
    (void)d;
    if (report && cap) report[0] = '\0';
    if (!failed) return 0;
    if (report && cap) snprintf(report, cap, "%s", msg ? msg : "");
    if (code) *code = my_code;
    return 1;
}

void dist_abort(const dist_ctx *d, int code) {
    (void)d;
    exit(code);
}
void dist_iallreduce_sum_f32(const dist_ctx *d, float *buf, size_t n) { (void)d, (void)buf, (void)n; }
void dist_wait_all(const dist_ctx *d) { (void)d; }
int64_t dist_allgather_counts(const dist_ctx *d, int64_t n_mine, int64_t *counts) {
    (void)d;
    counts[0] = n_mine;
    return n_mine;
}
void dist_allgatherv_f32(const dist_ctx *d, const float *send, float *recv, const int64_t *counts) {
    (void)d;
    memcpy(recv, send, (size_t)counts[0] * sizeof(float));
}
void dist_allgatherv_i64(const dist_ctx *d, const int64_t *send, int64_t *recv, const int64_t *counts) {
    (void)d;
    memcpy(recv, send, (size_t)counts[0] * sizeof(int64_t));
}

void dist_alltoall_counts(const dist_ctx *d, const int64_t *send_counts, int64_t *recv_counts) {
    (void)d;
    recv_counts[0] = send_counts[0];
}

void dist_alltoallv_rows(const dist_ctx *d, const void *send, const int64_t *send_counts, void *recv,
                         const int64_t *recv_counts, size_t row_bytes) {
    (void)d;
    (void)recv_counts;
    if (send_counts[0] > 0) memcpy(recv, send, (size_t)send_counts[0] * row_bytes);
}
