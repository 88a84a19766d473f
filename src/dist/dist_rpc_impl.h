/* dist_rpc_impl.h — what the two dist_rpc backends (dist_rpc_mpi.c, dist_rpc_serial.c) share
 * with the common part (dist_rpc.c): the layer's state, counters, self calls. Not for use
 * outside src/dist/. */
#ifndef CGNN_DIST_RPC_IMPL_H
#define CGNN_DIST_RPC_IMPL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dist/dist_rpc.h"

#define DIST_RPC_NAME_MAX 32
#define DIST_RPC_HOST_MAX 64
#define DIST_RPC_NCOUNTERS ((int)(sizeof(dist_rpc_counters) / sizeof(uint64_t)))

enum { DIST_RPC_CREATED, DIST_RPC_RUNNING, DIST_RPC_STOPPED };

struct dist_rpc_mpi; /* the MPI backend's state (dist_rpc_mpi.c); NULL in a world of one */

struct dist_rpc {
    const dist_ctx *d;
    int rank, size;
    int state; /* DIST_RPC_*: set by the main thread; calls happen between start and stop */
    _Atomic int64_t timeout_ns;
    int64_t spin_ns, server_max_ns, client_max_ns; /* back-off, fixed at start */
    struct {
        dist_rpc_handler fn;
        void *ctx;
        char name[DIST_RPC_NAME_MAX];
    } handlers[DIST_RPC_MAX_HANDLERS];
    char (*hosts)[DIST_RPC_HOST_MAX]; /* size entries */
    _Atomic uint64_t counters[DIST_RPC_MAX_HANDLERS][DIST_RPC_NCOUNTERS];
    _Atomic int64_t stall_until_ns; /* dist_rpc_test_stall */
    struct dist_rpc_mpi *mpi;
};

/* Adds v to counter `field` of handler h. */
#define DIST_RPC_COUNT(rpc, h, field, v)                                                                         \
    atomic_fetch_add_explicit(&(rpc)->counters[(h)][offsetof(dist_rpc_counters, field) / sizeof(uint64_t)],     \
                              (uint64_t)(v), memory_order_relaxed)

static inline int64_t dist_rpc_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The common part of dist_rpc_create: a zeroed layer with the defaults (the timeout from
 * CGNN_RPC_TIMEOUT_S when set and valid), host names not yet filled. */
dist_rpc *dist_rpc_alloc(const dist_ctx *d);
/* Frees what dist_rpc_alloc made. */
void dist_rpc_release(dist_rpc *rpc);

/* Grows b to hold at least n bytes; keep != 0 preserves b->data[0..len). Returns 0, or -1 on
 * out of memory (b unchanged). */
int dist_rpc_buf_reserve(dist_rpc_buf *b, size_t n, int keep);

/* Runs handler on this rank in the calling thread (a call to the rank itself): resp emptied
 * then filled by the handler. Counts a self call. Returns 0, or -1 with *err naming this rank. */
int dist_rpc_local_call(dist_rpc *rpc, int handler, const void *req, size_t req_len, dist_rpc_buf *resp,
                        cgnn_err *err);

/* dist_rpc_call_many in a world of one: every peer is rank 0. */
int dist_rpc_local_call_many(dist_rpc *rpc, int handler, int n, const int *peers, const void *const *req,
                             const size_t *req_len, dist_rpc_buf *const *resp, cgnn_err *err);

/* This process's host name (gethostname) into out[0..cap). */
void dist_rpc_local_host(char *out, size_t cap);

/* Sets *err to a handler's failure on rank r: "rank R (HOST) failed rpc 'NAME': MSG". */
int dist_rpc_fail(const dist_rpc *rpc, cgnn_err *err, int r, int handler, int code, const char *msg, size_t msg_len);

#endif
