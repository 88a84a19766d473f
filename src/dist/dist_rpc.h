/* dist_rpc.h — request/response calls between ranks, answered while the owner is busy.
 *
 * The layer moves bytes: a caller sends a request (bytes) to a handler id on one or more
 * ranks and gets one reply (bytes) from each. It knows nothing of graphs; the partitioned
 * sampler, feature and embedding code register handlers on top of it.
 *
 * Threads and communicators (MPI build, more than one rank):
 *   - every rank runs one service thread (dist_rpc_start .. dist_rpc_stop) that receives
 *     requests from any rank and runs their handlers one at a time, while the main thread
 *     and the sampler threads do their own work;
 *   - any number of threads call dist_rpc_call_many concurrently: each call sends its
 *     requests from the calling thread and receives its replies there (no hand-off);
 *   - RPC traffic runs on two communicators duplicated from MPI_COMM_WORLD (requests,
 *     replies), so it never mixes with the collectives the main thread runs on the world;
 *   - MPI must run with MPI_THREAD_MULTIPLE (dist_init_threads(..., multiple = 1, ...)).
 * Nobody blocks inside MPI (OpenMPI's blocking calls spin a core at 100%): every wait polls
 * (MPI_Improbe / MPI_Test) with an adaptive back-off (spin 50 µs, then sleeps doubling from
 * 1 µs to a cap: 500 µs for the idle service thread, 100 µs for a caller) and has a deadline
 * (dist_rpc_set_timeout; default 60 s, or CGNN_RPC_TIMEOUT_S from the environment). A peer
 * that dies is not seen by MPI: OpenMPI's launcher ends the whole job (measured: ~1.5 s).
 *
 * Ownership: request buffers are the caller's (read during the call); reply buffers are the
 * caller's dist_rpc_buf, grown by the layer; a handler appends to a buffer the layer owns.
 *
 * A world of one (serial build, or an MPI build run without mpirun) has the same API: every
 * call is a call to the rank itself, which runs the handler in the calling thread.
 *
 * Life cycle, on every rank:
 *   dist_rpc_create (collective) → dist_rpc_register × k → dist_rpc_start
 *   → calls from any thread → dist_rpc_stop (collective) → dist_rpc_free.
 */
#ifndef CGNN_DIST_RPC_H
#define CGNN_DIST_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "dist/dist.h"
#include "util/err.h"

#define DIST_RPC_MAX_HANDLERS 32 /* handler ids are 0 .. DIST_RPC_MAX_HANDLERS - 1 */
#define DIST_RPC_ALL (-1)        /* dist_rpc_read_counters: the sum over all handlers */
#define DIST_RPC_HEADER_BYTES 16 /* per message on the wire, beside the payload */
#define DIST_RPC_DEFAULT_TIMEOUT_S 60.0

typedef struct dist_rpc dist_rpc; /* opaque: its MPI handles stay inside src/dist/ */

/* A growable byte buffer. data is 64-byte aligned (a payload of int64 / float arrays can be
 * read in place); len bytes are valid, cap allocated. Reused across calls: it only grows, so
 * a steady state allocates nothing. Zero-initialised ({0}) is a valid empty buffer. */
typedef struct dist_rpc_buf {
    void *data;
    size_t len, cap;
} dist_rpc_buf;

void dist_rpc_buf_init(dist_rpc_buf *b);
/* Frees the memory; NULL-safe; leaves an empty buffer. */
void dist_rpc_buf_free(dist_rpc_buf *b);
/* Appends n bytes (uninitialised) and returns a pointer to them (b->len grows by n); on out
 * of memory returns NULL with *err set and b unchanged. */
void *dist_rpc_buf_grow(dist_rpc_buf *b, size_t n, cgnn_err *err);
/* Appends n bytes copied from p. Returns 0, or -1 with *err on out of memory. */
int dist_rpc_buf_append(dist_rpc_buf *b, const void *p, size_t n, cgnn_err *err);

/* A handler: reads the request req[0..req_len) from rank src_rank and appends its reply to
 * *reply (empty on entry; owned by the layer: the service thread's buffer, or the caller's
 * when the call is to the rank itself). Returns 0, or -1 with *err set: the message travels
 * back and becomes the caller's error, prefixed with the serving rank and host.
 * Threading: a handler runs on the service thread for remote callers, and on the calling
 * thread for calls to the rank itself, so it may run concurrently with itself and with any
 * other handler: it must be thread-safe for its ctx. It must not call dist_rpc_call* (the
 * service thread would wait on itself; checked). req is valid only during the call; it is
 * 64-byte aligned for remote callers, and the caller's own pointer for a call to the rank
 * itself (copy before reading wide types if callers may pass unaligned requests). It runs one
 * request at a time per rank on the service thread: a slow handler delays the requests behind it. */
typedef int (*dist_rpc_handler)(void *ctx, int src_rank, const void *req, size_t req_len, dist_rpc_buf *reply,
                                cgnn_err *err);

/* Traffic counters of one handler (or all: DIST_RPC_ALL) on this rank. Bytes are payload
 * bytes; each message also carries DIST_RPC_HEADER_BYTES. Summed over ranks, req_sent =
 * req_recv and rep_sent = rep_recv (when no call timed out). */
typedef struct dist_rpc_counters {
    /* as a client: this rank's callers */
    uint64_t calls;          /* dist_rpc_call_many calls */
    uint64_t self_calls;     /* requests to this rank itself: run in the caller's thread, no message */
    uint64_t req_sent;       /* request messages sent to other ranks */
    uint64_t req_bytes_sent; /* their payload bytes */
    uint64_t rep_recv;       /* reply messages received (late replies after a time-out included) */
    uint64_t rep_bytes_recv;
    uint64_t wait_ns;  /* time callers spent waiting for remote replies (after sending, after the self call) */
    uint64_t timeouts; /* peers that did not answer in time */
    /* as a server: this rank's service thread */
    uint64_t req_recv;
    uint64_t req_bytes_recv;
    uint64_t rep_sent;
    uint64_t rep_bytes_sent;
    uint64_t handler_ns; /* time in the handler, remote requests and self calls */
} dist_rpc_counters;

/* Creates the layer on every rank (collective over the world, main thread): duplicates the
 * two communicators and all-gathers the host names. With more than one rank, d must have been
 * initialised with MPI_THREAD_MULTIPLE (dist_init_threads), else returns -1 with *err. *out is
 * the caller's; free it with dist_rpc_free. d must outlive the layer. */
int dist_rpc_create(dist_rpc **out, const dist_ctx *d, cgnn_err *err);

/* Registers handler id (0 .. DIST_RPC_MAX_HANDLERS - 1) with a name for messages and counters
 * (copied) and ctx passed to every call. Before dist_rpc_start, every rank the same ids. An id
 * registered twice, or a registration after start, is a bug (CGNN_CHECK). */
void dist_rpc_register(dist_rpc *rpc, int id, const char *name, dist_rpc_handler fn, void *ctx);

/* The deadline of every wait, in seconds (> 0): a call's replies, a reply's delivery, the stop.
 * Settable at any time; in effect for waits that start afterwards. */
void dist_rpc_set_timeout(dist_rpc *rpc, double seconds);
double dist_rpc_timeout(const dist_rpc *rpc);

/* The back-off of waits: spin spin_us, then sleep from 1 µs doubling to server_max_us (the
 * idle service thread) or client_max_us (a caller waiting for replies). Defaults 50, 500, 100:
 * a round trip between busy ranks is caught while spinning (~3 µs over shared memory), an idle
 * service thread costs a wake-up per 500 µs and adds at most that to the first request of a
 * burst. docs/DISTRIBUTED.md has the measured trade-off. Before dist_rpc_start. */
void dist_rpc_set_poll(dist_rpc *rpc, double spin_us, double server_max_us, double client_max_us);

/* Starts this rank's service thread (not collective: requests sent to a rank that has not
 * started yet wait for it, under the caller's deadline). Returns 0, or -1 with *err. */
int dist_rpc_start(dist_rpc *rpc, cgnn_err *err);

/* Sends req[i][0..req_len[i]) to handler `handler` on rank peers[i], for i < n, all at once
 * (one message each; sizes past 2^31 bytes work), then waits for every reply: resp[i]->len
 * bytes at resp[i]->data (the buffers are the caller's, grown as needed and reused). peers
 * are distinct ranks (this rank included: its handler runs directly in the calling thread,
 * while the remote requests are in flight). req[i] may be NULL when req_len[i] is 0.
 * Callable from any number of threads at once (not from a handler), between start and stop.
 * Returns 0; or -1 with *err set when:
 *   - a handler failed: "rank R (HOST) failed rpc 'NAME': MESSAGE" with the handler's code
 *     (the first failure; the other replies are still received);
 *   - a peer did not answer within the timeout: CGNN_ERR_RUNTIME "rpc 'NAME' (N-byte request)
 *     to rank R on host HOST: no reply within T s". Treat it as fatal to the job: requests
 *     that the silent peer has not yet taken may still be read by MPI, so the caller must
 *     keep req[] valid until dist_rpc_stop or the job's end (dist_abort); a reply that comes
 *     later is received and dropped by the service thread.
 * On error the contents of resp[] are unspecified. */
int dist_rpc_call_many(dist_rpc *rpc, int handler, int n, const int *peers, const void *const *req,
                       const size_t *req_len, dist_rpc_buf *const *resp, cgnn_err *err);
/* One request to one rank: dist_rpc_call_many with n = 1. */
int dist_rpc_call(dist_rpc *rpc, int handler, int peer, const void *req, size_t req_len, dist_rpc_buf *resp,
                  cgnn_err *err);

/* ---- deferred replies: a request answered later, from another thread -----------------------
 * A handler running on the service thread may take its request over instead of answering at
 * once: dist_rpc_defer hands it a token and the handler returns 0 (its reply buffer is then
 * ignored); any thread later answers with dist_rpc_reply(token). The caller sees an ordinary
 * reply, under its own deadline. The service thread goes on serving meanwhile, so a deferred
 * request may take as long as it needs and may be answered by a thread that itself calls out
 * (dist_rpc_call_many): server-client mode's BATCH requests are built this way by a pool of
 * workers (sample/batch_rpc.h). Every deferred request must be answered before dist_rpc_stop. */
typedef struct dist_rpc_token {
    int src, tag, handler; /* the caller's rank, its reply tag, the handler id */
} dist_rpc_token;

/* Inside a handler: defers the request being handled (fills *tok). Returns 0; or -1 with *err
 * when the request cannot be deferred: the handler runs for a call to the rank itself (in the
 * caller's thread; also every call in a world of one), so it must answer directly. */
int dist_rpc_defer(dist_rpc *rpc, dist_rpc_token *tok, cgnn_err *err);

/* Answers a deferred request from any thread: data[0..len) as the reply, or with fail != NULL
 * the handler's error (fail->code, fail->msg: the caller's error names this rank, as a failed
 * handler's). Waits until the reply is on its way (polling, as the service thread does). Returns
 * 0; or -1 with *err when the caller did not take the reply within the timeout (then MPI may
 * still read data: keep it valid until the job ends, which the caller should end). */
int dist_rpc_reply(dist_rpc *rpc, const dist_rpc_token *tok, const void *data, size_t len, const cgnn_err *fail,
                   cgnn_err *err);

/* Stops serving (collective; main thread; every call on this rank must have returned). The
 * protocol: this rank tells every other rank's server "done" (after its last request, so
 * MPI's ordering puts it behind them); the service thread keeps serving until it has heard
 * "done" from every other rank, then joins a non-blocking barrier with every service thread,
 * draining late replies meanwhile, and exits. When the barrier completes no rank can send a
 * request or a reply any more. Bounded by the timeout: a rank that does not stop in time is
 * named ("rank R (HOST) did not stop within T s"). Returns 0, or -1 with *err (then end the
 * job: dist_abort). */
int dist_rpc_stop(dist_rpc *rpc, cgnn_err *err);

/* Frees the layer; NULL-safe. Without a successful stop (an error path that ends the job) it
 * abandons the service thread's protocol: the thread exits at its next poll, and the
 * communicators are left to MPI_Finalize. */
void dist_rpc_free(dist_rpc *rpc);

/* Reads the counters of handler id (or DIST_RPC_ALL) into *out; with reset != 0 also zeroes
 * them (each field read and zeroed atomically; fields are not a snapshot of one instant).
 * Any thread. */
void dist_rpc_read_counters(dist_rpc *rpc, int handler, int reset, dist_rpc_counters *out);

/* The host name of rank r (as MPI_Get_processor_name gave it there). */
const char *dist_rpc_host(const dist_rpc *rpc, int r);

/* Test hook: this rank's service thread takes no request for the next `seconds` (as a wedged
 * or overloaded peer would), then serves what queued up. For the time-out tests only. */
void dist_rpc_test_stall(dist_rpc *rpc, double seconds);

#endif
