/* dist_mpi.c — dist.h on OpenMPI. */
#include "dist/dist.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 1 when a process manager (mpirun / srun) started us: it exports the job's size. */
static int launched_by_mpi(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE") || getenv("PMI_RANK");
}

/* The communicator of d: the world, or its group (dist_split). */
static MPI_Comm comm_of(const dist_ctx *d) {
    return d->has_comm ? MPI_Comm_f2c((MPI_Fint)d->comm_handle) : MPI_COMM_WORLD;
}

static const char *thread_level_name(int level) {
    return level == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : level == MPI_THREAD_MULTIPLE   ? "MPI_THREAD_MULTIPLE"
                                            : "an unknown thread level";
}

void dist_init(dist_ctx *d, int *argc, char ***argv) { (void)dist_init_threads(d, argc, argv, 0, NULL); }

int dist_init_threads(dist_ctx *d, int *argc, char ***argv, int multiple, cgnn_err *err) {
    int inited = 0;
    MPI_Initialized(&inited);
    d->has_comm = 0; /* the world itself */
    d->comm_handle = 0;
    d->initialized_here = 0;
    d->thread_multiple = 0;
    if (!inited && !launched_by_mpi()) {
        /* plain `cgnn train`: a world of one, without starting MPI at all (no singleton
         * runtime, no MPI threads; every dist_* call short-circuits on size == 1) */
        d->rank = d->local_rank = 0;
        d->size = d->local_size = 1;
        d->thread_multiple = 1; /* no thread ever calls MPI: any thread may "call" */
        return 0;
    }
    int provided = MPI_THREAD_SINGLE;
    if (!inited) {
        MPI_Init_thread(argc, argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, &provided);
        d->initialized_here = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    d->thread_multiple = provided >= MPI_THREAD_MULTIPLE;
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank); /* the world */
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &d->local_rank);
    MPI_Comm_size(local, &d->local_size);
    MPI_Comm_free(&local);
    /* errors are handled by cgnn (collective checks), not by MPI's default abort */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (multiple && !d->thread_multiple)
        return err_set(err, CGNN_ERR_RUNTIME,
                       "the MPI library gives %s, but serving remote requests (dist_rpc) needs "
                       "MPI_THREAD_MULTIPLE: use an OpenMPI built with thread support (ompi_info | grep "
                       "'MPI_THREAD_MULTIPLE: yes')",
                       thread_level_name(provided));
    return 0;
}

const char *dist_backend(void) { return "MPI"; }

void dist_finalize(dist_ctx *d) {
    if (d->initialized_here) MPI_Finalize();
    d->initialized_here = 0;
}

void dist_split(const dist_ctx *d, int color, dist_ctx *out) {
    *out = *d;
    out->initialized_here = 0; /* the world's owner finalises MPI */
    if (d->size == 1) return;
    MPI_Comm sub;
    MPI_Comm_split(comm_of(d), color, d->rank, &sub);
    MPI_Comm_set_errhandler(sub, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(sub, &out->rank);
    MPI_Comm_size(sub, &out->size);
    out->has_comm = 1;
    out->comm_handle = (int64_t)MPI_Comm_c2f(sub);
}

void dist_split_free(dist_ctx *sub) {
    if (!sub->has_comm) return;
    MPI_Comm c = comm_of(sub);
    MPI_Comm_free(&c);
    sub->has_comm = 0;
}

/* Polls q to completion, sleeping between polls (50 us doubling to 10 ms). */
static void wait_idle(MPI_Request *q) {
    long sleep_ns = 50 * 1000;
    for (;;) {
        int flag = 0;
        MPI_Test(q, &flag, MPI_STATUS_IGNORE);
        if (flag) return;
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 10 * 1000 * 1000) sleep_ns *= 2;
    }
}

void dist_barrier_idle(const dist_ctx *d) {
    if (d->size == 1) return;
    MPI_Request q;
    MPI_Ibarrier(comm_of(d), &q);
    wait_idle(&q);
}

void dist_allreduce_max_i64_idle(const dist_ctx *d, int64_t *buf, size_t n) {
    if (d->size == 1) return;
    MPI_Request q;
    MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_INT64_T, MPI_MAX, comm_of(d), &q);
    wait_idle(&q);
}

void dist_allreduce_sum_f32(const dist_ctx *d, float *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, comm_of(d));
}
void dist_allreduce_sum_f64(const dist_ctx *d, double *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_DOUBLE, MPI_SUM, comm_of(d));
}
void dist_allreduce_sum_i64(const dist_ctx *d, int64_t *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_INT64_T, MPI_SUM, comm_of(d));
}
void dist_allreduce_max_i64(const dist_ctx *d, int64_t *buf, size_t n) {
    if (d->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_INT64_T, MPI_MAX, comm_of(d));
}
void dist_barrier(const dist_ctx *d) {
    if (d->size > 1) MPI_Barrier(comm_of(d));
}
void dist_bcast_f32(const dist_ctx *d, float *buf, size_t n) {
    if (d->size > 1) MPI_Bcast(buf, (int)n, MPI_FLOAT, 0, comm_of(d));
}
void dist_bcast_i64(const dist_ctx *d, int64_t *buf, size_t n) {
    if (d->size > 1) MPI_Bcast(buf, (int)n, MPI_INT64_T, 0, comm_of(d));
}

#define DIST_MSG_BYTES 1024

int dist_check_errors(const dist_ctx *d, int failed, int my_code, const char *msg, char *report, size_t cap,
                      int *code) {
    if (report && cap) report[0] = '\0';
    int64_t f[2] = {failed ? 1 : 0, failed ? my_code : 0};
    if (d->size == 1) {
        if (failed && report && cap) snprintf(report, cap, "%s", msg ? msg : "");
        if (failed && code) *code = my_code;
        return failed ? 1 : 0;
    }
    int64_t sum[2];
    MPI_Allreduce(f, sum, 2, MPI_INT64_T, MPI_SUM, comm_of(d));
    if (sum[0] == 0) return 0;
    /* gather every rank's message (empty when it did not fail) and code to rank 0 */
    char mine[DIST_MSG_BYTES];
    memset(mine, 0, sizeof mine);
    if (failed) snprintf(mine, sizeof mine, "%d|%s", my_code, msg ? msg : "");
    char *all = d->rank == 0 ? calloc((size_t)d->size, DIST_MSG_BYTES) : NULL;
    MPI_Gather(mine, DIST_MSG_BYTES, MPI_CHAR, all, DIST_MSG_BYTES, MPI_CHAR, 0, comm_of(d));
    int first_code = 0;
    if (d->rank == 0) {
        size_t off = 0;
        for (int r = 0; r < d->size; r++) {
            const char *m = all + (size_t)r * DIST_MSG_BYTES;
            if (!m[0]) continue;
            const char *bar = strchr(m, '|');
            if (!first_code) first_code = atoi(m);
            if (report && off < cap)
                off += (size_t)snprintf(report + off, cap - off, "%srank %d: %s", off ? "\n" : "", r, bar ? bar + 1 : m);
        }
        free(all);
    }
    int64_t c = first_code;
    MPI_Bcast(&c, 1, MPI_INT64_T, 0, comm_of(d));
    if (code) *code = (int)c;
    return (int)sum[0];
}

void dist_abort(const dist_ctx *d, int code) {
    if (d->size > 1) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static MPI_Request pending[DIST_MAX_PENDING];
static int num_pending = 0;

void dist_iallreduce_sum_f32(const dist_ctx *d, float *buf, size_t n) {
    if (d->size == 1) return;
    if (num_pending == DIST_MAX_PENDING) dist_wait_all(d);
    MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, comm_of(d), &pending[num_pending++]);
    int flag;
    MPI_Testall(num_pending, pending, &flag, MPI_STATUSES_IGNORE); /* nudge progress */
    if (flag) num_pending = 0;
}

void dist_wait_all(const dist_ctx *d) {
    if (d->size == 1 || num_pending == 0) return;
    MPI_Waitall(num_pending, pending, MPI_STATUSES_IGNORE);
    num_pending = 0;
}

int64_t dist_allgather_counts(const dist_ctx *d, int64_t n_mine, int64_t *counts) {
    if (d->size == 1) {
        counts[0] = n_mine;
        return n_mine;
    }
    MPI_Allgather(&n_mine, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, comm_of(d));
    int64_t total = 0;
    for (int r = 0; r < d->size; r++) total += counts[r];
    return total;
}

/* Allgatherv in rounds of at most DIST_CHUNK elements per rank, so no MPI count overflows int. */
#define DIST_CHUNK ((int64_t)1 << 28)
static void allgatherv_chunked(const dist_ctx *d, const void *send, void *recv, const int64_t *counts,
                               MPI_Datatype type, size_t elem) {
    const int P = d->size;
    int64_t displ0[P > 0 ? P : 1], max_count = 0;
    int cnt[P > 0 ? P : 1], dsp[P > 0 ? P : 1];
    int64_t off = 0;
    for (int r = 0; r < P; r++) {
        displ0[r] = off;
        off += counts[r];
        if (counts[r] > max_count) max_count = counts[r];
    }
    for (int64_t done = 0; done < max_count; done += DIST_CHUNK) {
        /* round: each rank sends elements [done, done + DIST_CHUNK) of its part into a staging
         * buffer (int displacements), then every part is moved to its place in recv */
        int64_t total = 0;
        for (int r = 0; r < P; r++) {
            int64_t c = counts[r] - done;
            c = c < 0 ? 0 : c > DIST_CHUNK ? DIST_CHUNK : c;
            cnt[r] = (int)c;
            dsp[r] = (int)total;
            total += c;
        }
        char *stage = malloc((size_t)(total > 0 ? total : 1) * elem);
        if (!stage) {
            fprintf(stderr, "cgnn: out of memory in all-gather\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        const int64_t mine = counts[d->rank] - done;
        MPI_Allgatherv((const char *)send + (size_t)done * elem, mine > 0 ? (int)(mine < DIST_CHUNK ? mine : DIST_CHUNK) : 0,
                       type, stage, cnt, dsp, type, comm_of(d));
        for (int r = 0; r < P; r++)
            memcpy((char *)recv + (size_t)(displ0[r] + done) * elem, stage + (size_t)dsp[r] * elem, (size_t)cnt[r] * elem);
        free(stage);
    }
}

void dist_allgatherv_f32(const dist_ctx *d, const float *send, float *recv, const int64_t *counts) {
    if (d->size == 1) {
        memcpy(recv, send, (size_t)counts[0] * sizeof(float));
        return;
    }
    allgatherv_chunked(d, send, recv, counts, MPI_FLOAT, sizeof(float));
}
void dist_allgatherv_i64(const dist_ctx *d, const int64_t *send, int64_t *recv, const int64_t *counts) {
    if (d->size == 1) {
        memcpy(recv, send, (size_t)counts[0] * sizeof(int64_t));
        return;
    }
    allgatherv_chunked(d, send, recv, counts, MPI_INT64_T, sizeof(int64_t));
}

void dist_alltoall_counts(const dist_ctx *d, const int64_t *send_counts, int64_t *recv_counts) {
    if (d->size == 1) {
        recv_counts[0] = send_counts[0];
        return;
    }
    MPI_Alltoall(send_counts, 1, MPI_INT64_T, recv_counts, 1, MPI_INT64_T, comm_of(d));
}

void dist_alltoallv_rows(const dist_ctx *d, const void *send, const int64_t *send_counts, void *recv,
                         const int64_t *recv_counts, size_t row_bytes) {
    const int P = d->size;
    if (P == 1) {
        memcpy(recv, send, (size_t)send_counts[0] * row_bytes);
        return;
    }
    CGNN_CHECK(row_bytes > 0 && row_bytes <= INT32_MAX);
    MPI_Datatype row;
    MPI_Type_contiguous((int)row_bytes, MPI_BYTE, &row);
    MPI_Type_commit(&row);
    int *sc = malloc(4 * (size_t)P * sizeof(int));
    CGNN_CHECK(sc != NULL);
    int *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    int64_t so = 0, ro = 0;
    for (int r = 0; r < P; r++) {
        /* displacements count rows: the totals of one step (a batch's rows) stay far below 2^31 */
        CGNN_CHECK(send_counts[r] >= 0 && recv_counts[r] >= 0 && so + send_counts[r] <= INT32_MAX &&
                   ro + recv_counts[r] <= INT32_MAX);
        sc[r] = (int)send_counts[r];
        sd[r] = (int)so;
        rc[r] = (int)recv_counts[r];
        rd[r] = (int)ro;
        so += send_counts[r];
        ro += recv_counts[r];
    }
    static char none[1]; /* a valid address for empty buffers */
    MPI_Alltoallv(so > 0 ? send : none, sc, sd, row, ro > 0 ? recv : none, rc, rd, row, comm_of(d));
    MPI_Type_free(&row);
    free(sc);
}
