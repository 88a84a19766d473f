/* dist.h — the one small interface between cgnn and MPI.
 *
 * Built with CGNN_WITH_MPI, it wraps OpenMPI (dist_mpi.c); without, a serial fallback
 * (dist_serial.c) where rank = 0 and size = 1 and every collective is a copy. Only those two
 * files differ between the builds (dist_backend names the one linked). An MPI build
 * run without mpirun (no launcher in the environment) is a world of one and does not start
 * MPI at all.
 */
#ifndef CGNN_DIST_H
#define CGNN_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef struct dist_ctx {
    int rank, size;
    int local_rank, local_size; /* among the ranks on this machine (shared memory) */
    int initialized_here; /* dist_init called MPI_Init (so dist_finalize calls MPI_Finalize) */
    int thread_multiple;  /* any thread may call MPI (MPI_THREAD_MULTIPLE): dist_rpc may start */
    /* a group of the world (dist_split): its communicator's Fortran handle (MPI_Comm_c2f, an
     * integer whatever the MPI library's C handle is); 0 in has_comm: the world itself */
    int has_comm;
    int64_t comm_handle;
} dist_ctx;

/* Initialises the world (MPI_Init_thread with FUNNELED if not yet initialised): only the main
 * thread calls MPI. Same as dist_init_threads(d, argc, argv, 0, NULL). */
void dist_init(dist_ctx *d, int *argc, char ***argv);
/* Initialises the world; with multiple != 0 asks for MPI_THREAD_MULTIPLE, which dist_rpc (a
 * service thread and client threads calling MPI beside the main thread) needs. Returns 0; or,
 * when multiple was asked and the MPI library (or whoever initialised MPI before us) does not
 * provide it, -1 with *err naming the level it got (MPI is then initialised: call
 * dist_finalize). A world of one (serial build, or no launcher) always succeeds: no thread
 * calls MPI there. Collectives (everything below) stay on the main thread either way. */
int dist_init_threads(dist_ctx *d, int *argc, char ***argv, int multiple, cgnn_err *err);
void dist_finalize(dist_ctx *d);
/* The backend linked, for `cgnn --version`: "MPI" or "serial build, no MPI". */
const char *dist_backend(void);

/* Splits d into groups (collective over d): the ranks passing the same color form one group,
 * ranked in their order in d. *out is the caller's: rank and size within the group, every
 * collective below on *out runs among the group only; local_rank / local_size stay d's (the
 * processes of the whole job on this machine: thread counts divide the machine among all of
 * them); thread_multiple is d's. Free with dist_split_free before dist_finalize. A world of one:
 * a copy. (Server-client mode: the compute ranks train on their group while dist_rpc and the
 * job-wide handshakes stay on the world.) */
void dist_split(const dist_ctx *d, int color, dist_ctx *out);
void dist_split_free(dist_ctx *sub); /* a copy or a zeroed ctx: nothing to do */

/* A barrier / in-place max all-reduce whose waiting ranks sleep instead of spinning a core
 * (OpenMPI's blocking collectives poll at 100%): polls a non-blocking collective with a
 * back-off from 50 us to 10 ms. For the rare job-wide waits that may last long (storage ranks
 * waiting for the compute ranks to finish, compute ranks waiting for the storage ranks to load
 * their parts). No time-out: a rank that dies ends the job through the launcher. */
void dist_barrier_idle(const dist_ctx *d);
void dist_allreduce_max_i64_idle(const dist_ctx *d, int64_t *buf, size_t n);

/* In-place sum over ranks of n floats / doubles / int64s. */
void dist_allreduce_sum_f32(const dist_ctx *d, float *buf, size_t n);
void dist_allreduce_sum_f64(const dist_ctx *d, double *buf, size_t n);
void dist_allreduce_sum_i64(const dist_ctx *d, int64_t *buf, size_t n);
/* In-place max over ranks of n int64s (collective error flags, batch counts). */
void dist_allreduce_max_i64(const dist_ctx *d, int64_t *buf, size_t n);
void dist_barrier(const dist_ctx *d);

/* Starts an in-place sum over ranks of n floats without waiting (MPI_Iallreduce); at most
 * DIST_MAX_PENDING may be in flight; dist_wait_all completes them all. Every rank must start
 * the same reductions in the same order. */
#define DIST_MAX_PENDING 32
void dist_iallreduce_sum_f32(const dist_ctx *d, float *buf, size_t n);
void dist_wait_all(const dist_ctx *d);
/* Broadcast n floats / int64s from rank 0. */
void dist_bcast_f32(const dist_ctx *d, float *buf, size_t n);
void dist_bcast_i64(const dist_ctx *d, int64_t *buf, size_t n);

/* Every rank contributes n_mine elements; on return counts[r] (size entries) holds rank r's
 * count on every rank. Returns the total. */
int64_t dist_allgather_counts(const dist_ctx *d, int64_t n_mine, int64_t *counts);
/* Concatenates every rank's send[0..counts[rank]) in rank order into recv (the total, from
 * dist_allgather_counts) on every rank; sent in chunks, so totals past 2^31 elements work.
 * send and recv must not overlap. A world of one copies. */
void dist_allgatherv_f32(const dist_ctx *d, const float *send, float *recv, const int64_t *counts);
void dist_allgatherv_i64(const dist_ctx *d, const int64_t *send, int64_t *recv, const int64_t *counts);

/* Personalised exchange: send_counts[r] = rows this rank sends to rank r; on return
 * recv_counts[r] = rows rank r sends to this one (MPI_Alltoall of the counts). */
void dist_alltoall_counts(const dist_ctx *d, const int64_t *send_counts, int64_t *recv_counts);
/* Every rank sends send_counts[r] rows of row_bytes bytes to rank r (the rows for rank r
 * contiguous in send, ranks in order) and receives, into recv in source-rank order,
 * recv_counts[r] rows from rank r (from dist_alltoall_counts; recv holds their total). Rows are
 * moved as one derived datatype, so a row count per rank below 2^31 suffices. A world of one
 * copies. */
void dist_alltoallv_rows(const dist_ctx *d, const void *send, const int64_t *send_counts, void *recv,
                         const int64_t *recv_counts, size_t row_bytes);

/* Collective error check: every rank passes whether it failed and its message. Returns the
 * number of failed ranks (the same on every rank). On rank 0, `report` (cap bytes) receives
 * "rank R: MESSAGE" lines of the failed ranks (the first failure's code in *code). */
int dist_check_errors(const dist_ctx *d, int failed, int my_code, const char *msg, char *report, size_t cap,
                      int *code);

/* The collective end of a phase: every rank says whether it failed (its message in *err); if
 * any did, every rank returns 1, rank 0's *err holds each failed rank's "rank R: MESSAGE" lines
 * (with the first failure's code), and a rank that did not fail gets "another rank failed". */
int dist_phase_failed(const dist_ctx *d, int failed, cgnn_err *err);

/* Start-of-job agreement check: every rank passes the same n named values (its config, dataset
 * and model shape). If any value differs between ranks, every rank returns -1 with *err
 * (CGNN_ERR_INPUT) naming the first differing field, and the ranks and values on both sides
 * ("trainerArgs.hidden_dim: rank 0 has 256, rank 1 has 128"); otherwise 0. Run it before any
 * collective whose size depends on these values. */
int dist_check_agreement(const dist_ctx *d, const char *const *names, const int64_t *vals, int n, cgnn_err *err);

/* Ends the whole job now with exit status code (MPI_Abort; exit() when serial). */
_Noreturn void dist_abort(const dist_ctx *d, int code);
/* A failure in the middle of a phase that the other ranks may be waiting on (inside a collective or
 * a barrier), such as a peer that failed or stopped answering: prints "cgnn: error: rank R: MSG;
 * ending the job" and ends the whole job (dist_abort, CGNN_ERR_RUNTIME) — an orderly error path
 * could hang them. */
_Noreturn void dist_fail_job(const dist_ctx *d, const cgnn_err *e);

#endif
