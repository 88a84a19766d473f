/* dist_rpc_mpi.c — dist_rpc.h on OpenMPI (MPI_THREAD_MULTIPLE): the service thread, calls
 * from any thread, late replies after a time-out, and the stop protocol.
 *
 * Messages. Every message is a 16-byte header and a payload, sent and received in place (no
 * staging copy) through a struct datatype of absolute addresses: the header, the payload's
 * whole MiB (a contiguous type of 2^20 bytes) and its tail; so one message carries any size,
 * also past 2^31 bytes (MPI counts are int). The receiver learns the size first (matched probe,
 * MPI_Get_elements_x) and grows its buffer to fit.
 *   requests  on req_comm, tag = the caller's reply tag (>= 1), header {REQ, handler}
 *   "done"    on req_comm, tag 0, header {DONE}: the sender will send this rank no more requests
 *   replies   on rep_comm, tag = the request's tag, header {OK | ERR, handler}; an ERR payload is
 *             the int32 error code and the message text
 * Headers are constants kept in the layer (never on a stack), so a send abandoned after a time-out
 * never reads freed memory of ours.
 *
 * Matching replies to callers. Each call takes a fresh tag from an atomic counter (1 ..
 * MPI_TAG_UB, 2^31 - 1 on OpenMPI) and probes rep_comm for (any source, that tag): replies of
 * concurrent calls can never be taken by the wrong thread, and no thread receives for another.
 * A caller whose peer timed out leaves (peer, tag) behind as an orphan; the service thread takes
 * the late reply when it comes (so the peer's send completes) and drops it.
 *
 * Waiting. A blocking MPI_Recv / MPI_Probe / MPI_Wait busy-polls a core at 100% in OpenMPI,
 * and the cores are busy with sampler threads and GEMMs. So nothing here blocks in MPI: every wait
 * polls with MPI_Improbe / MPI_Test and backs off: spin (spin_ns, 50 µs: a reply between busy
 * ranks comes in ~3 µs over shared memory and is taken at once; with 10 µs the p99 round trip
 * was 70-115 µs on a loaded 2-vCPU machine, with 50 µs 4-20 µs), then sleep from 1 µs doubling
 * to a cap: 500 µs for the idle service thread (2000 wake-ups a second, a few µs of CPU each;
 * a request that finds it asleep waits up to 0.5 ms more), 100 µs for a caller (its reply is
 * due soon). Why not an event: MPI has no wait that sleeps, and a second wake-up channel (a
 * socket per peer) would duplicate the transport. Burst traffic keeps the thread in its spin
 * window: the back-off restarts after every message. A message being moved is not slowed:
 * once matched, it is received with MPI_Mrecv, and a sender with data in flight polls without
 * sleeping (sched_yield) for as long as its bytes should take (in_flight_window_ns).
 * The service thread runs with a 1 µs timer slack (the default 50 µs would stretch every short
 * sleep). Measured figures: docs/DISTRIBUTED.md, "Remote calls between ranks".
 *
 * Time-outs. Every wait for a message to come, or for a message to be taken, has a deadline
 * (the layer's timeout); a message already matched is received to its end (its sender is alive
 * and sending). A peer's death is not seen by MPI over shared memory or TCP (no ULFM in
 * OpenMPI 4): OpenMPI's launcher ends the whole job when a rank dies (tests/test_rpc.sh: about
 * 1.5 s after a SIGKILL), and the deadline covers a peer that is alive but does not answer. */
#include "dist/dist_rpc_impl.h"

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#define RPC_MAGIC 0x43475250u /* "PRGC" little-endian: a message of this layer */
#define RPC_MIB ((size_t)1 << 20)

enum { RPC_REQ = 1, RPC_DONE = 2, RPC_REP_OK = 3, RPC_REP_ERR = 4 };

typedef struct rpc_hdr {
    uint32_t magic, kind;
    int32_t handler;
    uint32_t reserved;
} rpc_hdr;
_Static_assert(sizeof(rpc_hdr) == DIST_RPC_HEADER_BYTES, "the wire header is DIST_RPC_HEADER_BYTES");

typedef struct rpc_orphan {
    int peer, tag, handler;
} rpc_orphan;

/* The reply the service thread is sending: header and payload stay put until the send ends; a
 * send abandoned at its deadline keeps its slot forever (leaked: the job is ending). */
typedef struct rpc_reply {
    dist_rpc_buf buf;
} rpc_reply;

struct dist_rpc_mpi {
    MPI_Comm req_comm, rep_comm;
    MPI_Datatype mib; /* RPC_MIB contiguous bytes */
    int tag_ub;
    _Atomic uint32_t next_tag;
    rpc_hdr req_hdr[DIST_RPC_MAX_HANDLERS], ok_hdr[DIST_RPC_MAX_HANDLERS], err_hdr[DIST_RPC_MAX_HANDLERS];
    rpc_hdr done_hdr;

    pthread_t thread;
    int thread_started;
    _Atomic int stop_requested, abandon;
    _Atomic int64_t stop_deadline_ns;

    /* the service thread's own (read by the main thread only after joining it) */
    dist_rpc_buf req_buf, scratch;
    rpc_reply *reply;
    unsigned char *done_from; /* size entries: "done" heard from rank r */
    int n_done;
    int failed; /* serr holds the service thread's error, reported by dist_rpc_stop */
    cgnn_err serr;
    int leftovers; /* late replies may still come: the communicators are not freed */
    int in_flight; /* a send was abandoned: MPI may still read our headers, so m is never freed */

    /* orphans: replies and request sends of timed-out calls, finished by the service thread */
    pthread_mutex_t orphan_mu;
    rpc_orphan *orphans;
    int n_orphans, cap_orphans;
    MPI_Request *osends;
    int n_osends, cap_osends;
    _Atomic int orphan_work; /* n_orphans + n_osends, read without the lock */
};

/* Set on the service thread: a handler calling dist_rpc_call* would wait on itself. */
static _Thread_local int rpc_in_service = 0;

/* The request the service thread is handling (for dist_rpc_defer): valid while active. */
static _Thread_local struct {
    int active, deferred;
    dist_rpc_token tok;
} rpc_current;

/* ---- waiting ----------------------------------------------------------------------------- */

typedef struct rpc_backoff {
    int64_t spin_until, sleep_ns, spin_ns, max_ns;
    unsigned long saved_slack;
    int slack_changed;
    int woke; /* the last wait slept: poll once more before the next sleep */
} rpc_backoff;

static void backoff_init(rpc_backoff *b, int64_t spin_ns, int64_t max_ns) {
    b->spin_ns = spin_ns;
    b->max_ns = max_ns;
    b->slack_changed = 0;
    b->woke = 0;
    b->spin_until = dist_rpc_now_ns() + spin_ns;
    b->sleep_ns = 1000;
}

/* Something happened: spin again before sleeping. */
static void backoff_reset(rpc_backoff *b) {
    b->spin_until = dist_rpc_now_ns() + b->spin_ns;
    b->sleep_ns = 1000;
    b->woke = 0;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Nothing to do this poll: spin while within the spin window, else sleep and double the sleep.
 * After a sleep the caller polls twice before the next one: OpenMPI's MPI_Improbe looks at the
 * queue of arrived messages first and only then runs the progress engine that brings new ones
 * in, so the first probe after a long sleep reports nothing (measured: a request to an idle
 * service thread waited a whole extra sleep, 0.85 ms instead of 0.3). */
static void backoff_wait(rpc_backoff *b) {
    if (dist_rpc_now_ns() < b->spin_until) {
        for (int i = 0; i < 4; i++) cpu_relax(); /* 32 (~1.5 µs on x86) doubled the round trip */
        return;
    }
    if (b->woke) {
        b->woke = 0;
        return;
    }
    b->woke = 1;
    if (!b->slack_changed) {
        /* a calling thread's timer slack (50 µs by default) would stretch the short sleeps;
         * lowered for this wait only, restored by backoff_end */
        b->saved_slack = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        b->slack_changed = 1;
    }
    struct timespec ts = {(time_t)(b->sleep_ns / 1000000000), (long)(b->sleep_ns % 1000000000)};
    nanosleep(&ts, NULL);
    b->sleep_ns = b->sleep_ns * 2 > b->max_ns ? b->max_ns : b->sleep_ns * 2;
}

/* How long a sender with data in flight polls without sleeping: over shared memory or TCP
 * without a single-copy mechanism, OpenMPI moves a large message only while the sender calls
 * into MPI, so a sleeping sender would stall it between fragments (measured: 4 MiB requests at
 * ~1.5 GB/s instead of ~5). A request not yet taken by a busy server looks the same, so the
 * window is bounded: 200 µs plus the time the bytes take at 1 GB/s; then the back-off sleeps. */
static int64_t in_flight_window_ns(size_t bytes) {
    return 200 * 1000 + (int64_t)(bytes > INT64_MAX / 2 ? INT64_MAX / 2 : bytes);
}

static void backoff_end(rpc_backoff *b) {
    if (b->slack_changed) prctl(PR_SET_TIMERSLACK, b->saved_slack, 0, 0, 0);
    b->slack_changed = 0;
}

/* ---- messages ---------------------------------------------------------------------------- */

/* A datatype covering hdr (DIST_RPC_HEADER_BYTES) and payload[0..len) at their absolute
 * addresses, for a send or receive from MPI_BOTTOM. Free it with MPI_Type_free (allowed while a
 * send using it is in flight). */
static MPI_Datatype msg_type(const struct dist_rpc_mpi *m, const void *hdr, const void *payload, size_t len) {
    int blen[3];
    MPI_Aint disp[3];
    MPI_Datatype type[3];
    int k = 0;
    MPI_Get_address(hdr, &disp[k]);
    blen[k] = DIST_RPC_HEADER_BYTES;
    type[k++] = MPI_BYTE;
    const size_t whole = len / RPC_MIB, tail = len % RPC_MIB;
    CGNN_CHECK(whole <= (size_t)INT32_MAX);
    if (whole) {
        MPI_Get_address(payload, &disp[k]);
        blen[k] = (int)whole;
        type[k++] = m->mib;
    }
    if (tail) {
        MPI_Get_address((const char *)payload + whole * RPC_MIB, &disp[k]);
        blen[k] = (int)tail;
        type[k++] = MPI_BYTE;
    }
    MPI_Datatype t;
    MPI_Type_create_struct(k, blen, disp, type, &t);
    MPI_Type_commit(&t);
    return t;
}

static void isend_msg(const struct dist_rpc_mpi *m, const rpc_hdr *hdr, const void *payload, size_t len, int dest,
                      int tag, MPI_Comm comm, MPI_Request *q) {
    MPI_Datatype t = msg_type(m, hdr, payload, len);
    MPI_Isend(MPI_BOTTOM, 1, t, dest, tag, comm, q);
    MPI_Type_free(&t);
}

/* Receives the matched message into *hdr and buf (grown to fit; its old contents dropped).
 * Returns the payload length (also buf->len). Out of memory ends the job: the message is
 * already matched and has nowhere else to go. */
static size_t recv_msg(const struct dist_rpc_mpi *m, MPI_Message *msg, const MPI_Status *st, rpc_hdr *hdr,
                       dist_rpc_buf *buf) {
    MPI_Count bytes = 0;
    MPI_Get_elements_x(st, MPI_BYTE, &bytes);
    CGNN_CHECK(bytes != MPI_UNDEFINED && bytes >= DIST_RPC_HEADER_BYTES);
    const size_t len = (size_t)bytes - DIST_RPC_HEADER_BYTES;
    buf->len = 0;
    if (dist_rpc_buf_reserve(buf, len, 0) != 0) {
        fprintf(stderr, "cgnn: error: out of memory receiving a %zu-byte rpc message from rank %d\n", len,
                st->MPI_SOURCE);
        MPI_Abort(MPI_COMM_WORLD, CGNN_ERR_RUNTIME);
    }
    MPI_Datatype t = msg_type(m, hdr, buf->data, len);
    MPI_Mrecv(MPI_BOTTOM, 1, t, msg, MPI_STATUS_IGNORE);
    MPI_Type_free(&t);
    CGNN_CHECK(hdr->magic == RPC_MAGIC);
    buf->len = len;
    return len;
}

/* ---- orphans: what timed-out calls left in flight --------------------------------------- */

static void add_orphans(dist_rpc *rpc, const rpc_orphan *o, int n_o, MPI_Request *sends, int n_s) {
    struct dist_rpc_mpi *m = rpc->mpi;
    pthread_mutex_lock(&m->orphan_mu);
    if (m->n_orphans + n_o > m->cap_orphans) {
        m->cap_orphans = 2 * (m->n_orphans + n_o);
        m->orphans = cgnn_realloc(m->orphans, (size_t)m->cap_orphans * sizeof *m->orphans);
    }
    if (n_o) memcpy(m->orphans + m->n_orphans, o, (size_t)n_o * sizeof *o);
    m->n_orphans += n_o;
    if (m->n_osends + n_s > m->cap_osends) {
        m->cap_osends = 2 * (m->n_osends + n_s);
        m->osends = cgnn_realloc(m->osends, (size_t)m->cap_osends * sizeof *m->osends);
    }
    if (n_s) memcpy(m->osends + m->n_osends, sends, (size_t)n_s * sizeof *sends);
    m->n_osends += n_s;
    atomic_store(&m->orphan_work, m->n_orphans + m->n_osends);
    pthread_mutex_unlock(&m->orphan_mu);
}

/* Service thread: takes the late replies that have come and completes finished orphan sends.
 * Returns 1 when it did something. */
static int drain_orphans(dist_rpc *rpc) {
    struct dist_rpc_mpi *m = rpc->mpi;
    if (atomic_load_explicit(&m->orphan_work, memory_order_relaxed) == 0) return 0;
    int worked = 0;
    pthread_mutex_lock(&m->orphan_mu);
    for (int i = 0; i < m->n_orphans;) {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        MPI_Improbe(m->orphans[i].peer, m->orphans[i].tag, m->rep_comm, &flag, &msg, &st);
        if (!flag) {
            i++;
            continue;
        }
        rpc_hdr h;
        const size_t len = recv_msg(m, &msg, &st, &h, &m->scratch);
        DIST_RPC_COUNT(rpc, m->orphans[i].handler, rep_recv, 1);
        DIST_RPC_COUNT(rpc, m->orphans[i].handler, rep_bytes_recv, len);
        m->orphans[i] = m->orphans[--m->n_orphans];
        worked = 1;
    }
    for (int i = 0; i < m->n_osends;) {
        int flag = 0;
        MPI_Test(&m->osends[i], &flag, MPI_STATUS_IGNORE);
        if (!flag) {
            i++;
            continue;
        }
        m->osends[i] = m->osends[--m->n_osends];
        worked = 1;
    }
    atomic_store(&m->orphan_work, m->n_orphans + m->n_osends);
    pthread_mutex_unlock(&m->orphan_mu);
    return worked;
}

/* ---- the service thread ------------------------------------------------------------------ */

static int service_fail(struct dist_rpc_mpi *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int service_fail(struct dist_rpc_mpi *m, const char *fmt, ...) {
    if (m->failed) return -1; /* the first failure is the one to report */
    m->failed = 1;
    m->serr.code = CGNN_ERR_RUNTIME;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->serr.msg, sizeof m->serr.msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Runs the request's handler and sends the reply; waits until the reply is on its way (polling,
 * finishing orphans meanwhile: two service threads sending each other late replies must not wait
 * on each other). */
static void serve(dist_rpc *rpc, MPI_Message *msg, const MPI_Status *st) {
    struct dist_rpc_mpi *m = rpc->mpi;
    rpc_hdr h;
    const size_t len = recv_msg(m, msg, st, &h, &m->req_buf);
    const int src = st->MPI_SOURCE;
    if (h.kind == RPC_DONE) {
        CGNN_CHECK(!m->done_from[src]);
        m->done_from[src] = 1;
        m->n_done++;
        return;
    }
    CGNN_CHECK(h.kind == RPC_REQ && h.handler >= 0 && h.handler < DIST_RPC_MAX_HANDLERS && st->MPI_TAG > 0);
    const int id = h.handler;
    DIST_RPC_COUNT(rpc, id, req_recv, 1);
    DIST_RPC_COUNT(rpc, id, req_bytes_recv, len);
    dist_rpc_buf *out = &m->reply->buf;
    out->len = 0;
    cgnn_err herr = {0};
    int rc;
    if (!rpc->handlers[id].fn) {
        rc = err_set(&herr, CGNN_ERR_RUNTIME, "no handler registered under id %d", id);
    } else {
        const int64_t t0 = dist_rpc_now_ns();
        rpc_current.active = 1;
        rpc_current.deferred = 0;
        rpc_current.tok = (dist_rpc_token){src, st->MPI_TAG, id};
        rc = rpc->handlers[id].fn(rpc->handlers[id].ctx, src, m->req_buf.data, len, out, &herr);
        rpc_current.active = 0;
        DIST_RPC_COUNT(rpc, id, handler_ns, dist_rpc_now_ns() - t0);
        if (rc == 0 && rpc_current.deferred) return; /* dist_rpc_reply answers it */
    }
    if (rc != 0) { /* the payload becomes int32 code + message */
        const int32_t code = herr.code > 0 ? herr.code : CGNN_ERR_RUNTIME;
        out->len = 0;
        if (dist_rpc_buf_reserve(out, sizeof code + sizeof herr.msg, 0) != 0) {
            fprintf(stderr, "cgnn: error: out of memory in the rpc service thread\n");
            MPI_Abort(MPI_COMM_WORLD, CGNN_ERR_RUNTIME);
        }
        memcpy(out->data, &code, sizeof code);
        const size_t n = strlen(herr.msg);
        memcpy((char *)out->data + sizeof code, herr.msg, n);
        out->len = sizeof code + n;
    }
    MPI_Request q;
    isend_msg(m, rc == 0 ? &m->ok_hdr[id] : &m->err_hdr[id], out->data, out->len, src, st->MPI_TAG, m->rep_comm, &q);
    DIST_RPC_COUNT(rpc, id, rep_sent, 1);
    DIST_RPC_COUNT(rpc, id, rep_bytes_sent, out->len);
    /* Our data is in flight: poll without sleeping for a while (in_flight_window_ns), yielding
     * the core to whoever needs it, then back off. */
    const int64_t t0 = dist_rpc_now_ns(), deadline = t0 + atomic_load(&rpc->timeout_ns);
    const int64_t eager_until = t0 + in_flight_window_ns(out->len);
    rpc_backoff b;
    backoff_init(&b, rpc->spin_ns, rpc->server_max_ns);
    for (;;) {
        int flag = 0;
        MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        if (flag) break;
        drain_orphans(rpc);
        const int64_t now = dist_rpc_now_ns();
        if (atomic_load(&m->abandon) || now > deadline) break;
        if (now < eager_until) sched_yield();
        else backoff_wait(&b);
    }
    backoff_end(&b);
    if (q == MPI_REQUEST_NULL) return;
    if (!atomic_load(&m->abandon))
        service_fail(m, "rank %d (%s): the %zu-byte reply of rpc '%s' to rank %d (%s) was not taken within %.1f s",
                     rpc->rank, rpc->hosts[rpc->rank], out->len, rpc->handlers[id].name, src, rpc->hosts[src],
                     dist_rpc_timeout(rpc));
    /* MPI may still read the reply: leave it to MPI, and to the leak */
    MPI_Request_free(&q);
    m->in_flight = 1;
    m->reply = cgnn_calloc(1, sizeof *m->reply);
}

static void *service_main(void *arg) {
    dist_rpc *rpc = arg;
    struct dist_rpc_mpi *m = rpc->mpi;
    rpc_in_service = 1;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* 1 µs: short sleeps as asked */
    rpc_backoff b;
    backoff_init(&b, rpc->spin_ns, rpc->server_max_ns);
    MPI_Request barrier = MPI_REQUEST_NULL;
    int barrier_posted = 0;
    for (;;) {
        if (atomic_load(&m->abandon)) break;
        int worked = drain_orphans(rpc);
        if (dist_rpc_now_ns() >= atomic_load(&rpc->stall_until_ns)) {
            int flag = 0;
            MPI_Message msg;
            MPI_Status st;
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->req_comm, &flag, &msg, &st);
            if (flag) {
                serve(rpc, &msg, &st);
                worked = 1;
            }
        }
        if (atomic_load(&m->stop_requested)) {
            /* every other rank said "done" (after its last request): no request can come;
             * the barrier says every server got there, so no reply can come either */
            if (!barrier_posted && m->n_done == rpc->size - 1) {
                MPI_Ibarrier(m->req_comm, &barrier);
                barrier_posted = 1;
            }
            if (barrier_posted) {
                int flag = 0;
                MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE);
                if (flag) break;
            }
            if (dist_rpc_now_ns() > atomic_load(&m->stop_deadline_ns)) {
                int missing = -1, n_missing = 0;
                for (int r = 0; r < rpc->size; r++)
                    if (r != rpc->rank && !m->done_from[r]) {
                        if (missing < 0) missing = r;
                        n_missing++;
                    }
                if (missing >= 0)
                    service_fail(m, "rpc stop: rank %d (%s)%s did not stop within %.1f s (still working, or stuck)",
                                 missing, rpc->hosts[missing], n_missing > 1 ? " and others" : "",
                                 dist_rpc_timeout(rpc));
                else
                    service_fail(m, "rpc stop: the service threads' closing barrier did not complete within %.1f s",
                                 dist_rpc_timeout(rpc));
                m->leftovers = 1; /* the barrier stays posted: keep the communicators */
                break;
            }
        }
        if (worked) backoff_reset(&b);
        else backoff_wait(&b);
    }
    backoff_end(&b);
    drain_orphans(rpc);
    if (atomic_load(&m->orphan_work) > 0) m->leftovers = 1;
    return NULL;
}

/* ---- the API ----------------------------------------------------------------------------- */

int dist_rpc_create(dist_rpc **out, const dist_ctx *d, cgnn_err *err) {
    *out = NULL;
    if (d->size > 1 && !d->thread_multiple)
        return err_set(err, CGNN_ERR_RUNTIME,
                       "remote calls between ranks need MPI_THREAD_MULTIPLE (initialise with dist_init_threads)");
    dist_rpc *rpc = dist_rpc_alloc(d);
    if (d->size == 1) { /* a world of one, maybe without MPI started: only self calls */
        dist_rpc_local_host(rpc->hosts[0], sizeof rpc->hosts[0]);
        *out = rpc;
        return 0;
    }
    struct dist_rpc_mpi *m = cgnn_calloc(1, sizeof *m);
    rpc->mpi = m;
    MPI_Comm_dup(MPI_COMM_WORLD, &m->req_comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &m->rep_comm);
    MPI_Type_contiguous((int)RPC_MIB, MPI_BYTE, &m->mib);
    MPI_Type_commit(&m->mib);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    m->tag_ub = flag && ub ? *ub : 32767; /* the standard's minimum */
    atomic_store(&m->next_tag, 0);
    for (int h = 0; h < DIST_RPC_MAX_HANDLERS; h++) {
        m->req_hdr[h] = (rpc_hdr){RPC_MAGIC, RPC_REQ, h, 0};
        m->ok_hdr[h] = (rpc_hdr){RPC_MAGIC, RPC_REP_OK, h, 0};
        m->err_hdr[h] = (rpc_hdr){RPC_MAGIC, RPC_REP_ERR, h, 0};
    }
    m->done_hdr = (rpc_hdr){RPC_MAGIC, RPC_DONE, -1, 0};
    m->reply = cgnn_calloc(1, sizeof *m->reply);
    m->done_from = cgnn_calloc((size_t)d->size, 1);
    pthread_mutex_init(&m->orphan_mu, NULL);
    /* host names, for messages that name a peer */
    char name[MPI_MAX_PROCESSOR_NAME + 1] = {0}, mine[DIST_RPC_HOST_MAX] = {0};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    snprintf(mine, sizeof mine, "%s", name);
    MPI_Allgather(mine, DIST_RPC_HOST_MAX, MPI_CHAR, rpc->hosts, DIST_RPC_HOST_MAX, MPI_CHAR, m->req_comm);
    for (int r = 0; r < d->size; r++) rpc->hosts[r][DIST_RPC_HOST_MAX - 1] = '\0';
    *out = rpc;
    return 0;
}

int dist_rpc_start(dist_rpc *rpc, cgnn_err *err) {
    CGNN_CHECK(rpc->state == DIST_RPC_CREATED);
    struct dist_rpc_mpi *m = rpc->mpi;
    if (m) {
        const int rc = pthread_create(&m->thread, NULL, service_main, rpc);
        if (rc != 0)
            return err_set(err, CGNN_ERR_RUNTIME, "rank %d: cannot start the rpc service thread: %s", rpc->rank,
                           strerror(rc));
        m->thread_started = 1;
    }
    rpc->state = DIST_RPC_RUNNING;
    return 0;
}

int dist_rpc_call_many(dist_rpc *rpc, int handler, int n, const int *peers, const void *const *req,
                       const size_t *req_len, dist_rpc_buf *const *resp, cgnn_err *err) {
    struct dist_rpc_mpi *m = rpc->mpi;
    if (!m) return dist_rpc_local_call_many(rpc, handler, n, peers, req, req_len, resp, err);
    CGNN_CHECK(rpc->state == DIST_RPC_RUNNING);
    CGNN_CHECK(!rpc_in_service); /* a handler calling out would wait on its own service thread */
    CGNN_CHECK(handler >= 0 && handler < DIST_RPC_MAX_HANDLERS && n >= 0 && n <= rpc->size);
    if (n == 0) return 0;
    DIST_RPC_COUNT(rpc, handler, calls, 1);
    const int P = rpc->size;
    unsigned char seen[P]; /* peers are distinct ranks */
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < n; i++) {
        CGNN_CHECK(peers[i] >= 0 && peers[i] < P && !seen[peers[i]]);
        seen[peers[i]] = 1;
    }
    const int tag = 1 + (int)(atomic_fetch_add(&m->next_tag, 1) % (uint32_t)m->tag_ub);

    /* all remote requests out at once, then the local one while they travel */
    MPI_Request sends[n];
    int slot_of[P]; /* peer rank -> index i, for the replies (only the remote peers) */
    unsigned char got[n];
    int self = -1, remote = 0;
    for (int i = 0; i < n; i++) {
        got[i] = 0;
        sends[i] = MPI_REQUEST_NULL;
        if (peers[i] == rpc->rank) {
            self = i;
            continue;
        }
        slot_of[peers[i]] = i;
        isend_msg(m, &m->req_hdr[handler], req[i], req_len[i], peers[i], tag, m->req_comm, &sends[i]);
        DIST_RPC_COUNT(rpc, handler, req_sent, 1);
        DIST_RPC_COUNT(rpc, handler, req_bytes_sent, req_len[i]);
        remote++;
    }
    int rc = 0;
    if (self >= 0) rc = dist_rpc_local_call(rpc, handler, req[self], req_len[self], resp[self], err);
    if (remote == 0) return rc; /* only this rank: no MPI at all */

    /* the replies, in the order they come */
    const int64_t t0 = dist_rpc_now_ns(), deadline = t0 + atomic_load(&rpc->timeout_ns);
    rpc_backoff b;
    backoff_init(&b, rpc->spin_ns, rpc->client_max_ns);
    int pending = remote, sends_done = 0;
    size_t bytes_out = 0;
    for (int i = 0; i < n; i++) bytes_out += i == self ? 0 : req_len[i];
    const int64_t eager_until = dist_rpc_now_ns() + in_flight_window_ns(bytes_out);
    while (pending > 0) {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        MPI_Improbe(MPI_ANY_SOURCE, tag, m->rep_comm, &flag, &msg, &st);
        if (flag) {
            CGNN_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < P && seen[st.MPI_SOURCE] && st.MPI_SOURCE != rpc->rank);
            const int i = slot_of[st.MPI_SOURCE];
            CGNN_CHECK(!got[i]);
            rpc_hdr h;
            const size_t len = recv_msg(m, &msg, &st, &h, resp[i]);
            CGNN_CHECK(h.handler == handler && (h.kind == RPC_REP_OK || h.kind == RPC_REP_ERR));
            DIST_RPC_COUNT(rpc, handler, rep_recv, 1);
            DIST_RPC_COUNT(rpc, handler, rep_bytes_recv, len);
            if (h.kind == RPC_REP_ERR) {
                int32_t code = CGNN_ERR_RUNTIME;
                if (len >= sizeof code) memcpy(&code, resp[i]->data, sizeof code);
                if (rc == 0)
                    rc = dist_rpc_fail(rpc, err, peers[i], handler, code,
                                       len > sizeof code ? (const char *)resp[i]->data + sizeof code : "",
                                       len > sizeof code ? len - sizeof code : 0);
                resp[i]->len = 0;
            }
            got[i] = 1;
            pending--;
            backoff_reset(&b);
            continue;
        }
        if (dist_rpc_now_ns() > deadline) break;
        if (!sends_done) { /* a request still going out (or not yet taken): keep MPI moving it */
            MPI_Testall(n, sends, &sends_done, MPI_STATUSES_IGNORE);
            if (!sends_done && dist_rpc_now_ns() < eager_until) {
                sched_yield();
                continue;
            }
        }
        backoff_wait(&b);
    }
    backoff_end(&b);
    DIST_RPC_COUNT(rpc, handler, wait_ns, dist_rpc_now_ns() - t0);

    if (pending > 0) { /* time-out: name the first silent peer; its reply, if it comes, is dropped */
        rpc_orphan o[pending];
        int k = 0, first = -1;
        for (int i = 0; i < n; i++)
            if (i != self && !got[i]) {
                o[k++] = (rpc_orphan){peers[i], tag, handler};
                if (first < 0) first = i;
            }
        DIST_RPC_COUNT(rpc, handler, timeouts, pending);
        char more[64] = "";
        if (pending > 1) snprintf(more, sizeof more, " (nor %d more ranks)", pending - 1);
        rc = err_set(err, CGNN_ERR_RUNTIME,
                     "rpc '%s' (%zu-byte request) to rank %d on host %s: no reply within %.1f s%s",
                     rpc->handlers[handler].name, req_len[first], peers[first], rpc->hosts[peers[first]],
                     dist_rpc_timeout(rpc), more);
        /* requests not yet taken stay with MPI (the caller keeps req[] valid: see dist_rpc.h) */
        MPI_Request left[n];
        int n_left = 0;
        for (int i = 0; i < n; i++) {
            int flag = 1;
            if (sends[i] != MPI_REQUEST_NULL) MPI_Test(&sends[i], &flag, MPI_STATUS_IGNORE);
            if (!flag) left[n_left++] = sends[i];
        }
        add_orphans(rpc, o, k, left, n_left);
        return rc;
    }
    /* every reply is in, so every request was taken: the sends end at once */
    while (!sends_done) {
        MPI_Testall(n, sends, &sends_done, MPI_STATUSES_IGNORE);
        if (!sends_done) sched_yield();
    }
    return rc;
}

int dist_rpc_defer(dist_rpc *rpc, dist_rpc_token *tok, cgnn_err *err) {
    if (!rpc->mpi || !rpc_in_service || !rpc_current.active)
        return err_set(err, CGNN_ERR_RUNTIME, "a call to the rank itself cannot be deferred");
    rpc_current.deferred = 1;
    *tok = rpc_current.tok;
    return 0;
}

int dist_rpc_reply(dist_rpc *rpc, const dist_rpc_token *tok, const void *data, size_t len, const cgnn_err *fail,
                   cgnn_err *err) {
    struct dist_rpc_mpi *m = rpc->mpi;
    CGNN_CHECK(m && rpc->state == DIST_RPC_RUNNING && tok->handler >= 0 && tok->handler < DIST_RPC_MAX_HANDLERS);
    const int id = tok->handler;
    const rpc_hdr *h = &m->ok_hdr[id];
    char *ebuf = NULL;
    if (fail) { /* the payload becomes int32 code + message, as a failed handler's */
        const int32_t code = fail->code > 0 ? fail->code : CGNN_ERR_RUNTIME;
        const size_t n = strlen(fail->msg);
        ebuf = cgnn_malloc(sizeof code + n + 1);
        memcpy(ebuf, &code, sizeof code);
        memcpy(ebuf + sizeof code, fail->msg, n);
        data = ebuf;
        len = sizeof code + n;
        h = &m->err_hdr[id];
    }
    MPI_Request q;
    isend_msg(m, h, data, len, tok->src, tok->tag, m->rep_comm, &q);
    DIST_RPC_COUNT(rpc, id, rep_sent, 1);
    DIST_RPC_COUNT(rpc, id, rep_bytes_sent, len);
    const int64_t t0 = dist_rpc_now_ns(), deadline = t0 + atomic_load(&rpc->timeout_ns);
    const int64_t eager_until = t0 + in_flight_window_ns(len);
    rpc_backoff b;
    backoff_init(&b, rpc->spin_ns, rpc->client_max_ns);
    int done = 0;
    for (;;) {
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
        if (done) break;
        const int64_t now = dist_rpc_now_ns();
        if (now > deadline) break;
        if (now < eager_until) sched_yield();
        else backoff_wait(&b);
    }
    backoff_end(&b);
    if (done) {
        free(ebuf);
        return 0;
    }
    MPI_Request_free(&q); /* MPI may still read the reply (and ebuf, left to the job's end) */
    return err_set(err, CGNN_ERR_RUNTIME,
                   "rank %d (%s): the %zu-byte reply of rpc '%s' to rank %d (%s) was not taken within %.1f s", rpc->rank,
                   rpc->hosts[rpc->rank], len, rpc->handlers[id].name, tok->src, rpc->hosts[tok->src],
                   dist_rpc_timeout(rpc));
}

int dist_rpc_stop(dist_rpc *rpc, cgnn_err *err) {
    CGNN_CHECK(rpc->state == DIST_RPC_RUNNING);
    CGNN_CHECK(!rpc_in_service);
    struct dist_rpc_mpi *m = rpc->mpi;
    if (!m) {
        rpc->state = DIST_RPC_STOPPED;
        return 0;
    }
    const int64_t deadline = dist_rpc_now_ns() + atomic_load(&rpc->timeout_ns);
    /* "done" to every other server: behind our last request (same source, communicator and
     * probe, so MPI keeps the order) */
    MPI_Request *q = cgnn_malloc((size_t)rpc->size * sizeof *q);
    int k = 0;
    for (int r = 0; r < rpc->size; r++)
        if (r != rpc->rank) MPI_Isend(&m->done_hdr, DIST_RPC_HEADER_BYTES, MPI_BYTE, r, 0, m->req_comm, &q[k++]);
    atomic_store(&m->stop_deadline_ns, deadline);
    atomic_store(&m->stop_requested, 1);
    pthread_join(m->thread, NULL);
    m->thread_started = 0;
    rpc->state = DIST_RPC_STOPPED;
    /* 16-byte sends went out eagerly long ago; a peer that never took them is already named */
    int done = 0;
    MPI_Testall(k, q, &done, MPI_STATUSES_IGNORE);
    if (!done)
        for (int i = 0; i < k; i++)
            if (q[i] != MPI_REQUEST_NULL) MPI_Request_free(&q[i]);
    free(q);
    if (m->failed) {
        if (err) *err = m->serr;
        return -1;
    }
    if (!m->leftovers) {
        MPI_Comm_free(&m->req_comm);
        MPI_Comm_free(&m->rep_comm);
    }
    return 0;
}

void dist_rpc_free(dist_rpc *rpc) {
    if (!rpc) return;
    struct dist_rpc_mpi *m = rpc->mpi;
    if (m) {
        if (m->thread_started) { /* no stop: abandon the protocol (the job is ending) */
            atomic_store(&m->abandon, 1);
            pthread_join(m->thread, NULL);
        }
        for (int i = 0; i < m->n_osends; i++) {
            MPI_Request_free(&m->osends[i]);
            m->in_flight = 1;
        }
        if (m->in_flight) { /* sends of ours may still read m's headers: leave m to the job's end */
            rpc->mpi = NULL;
            dist_rpc_release(rpc);
            return;
        }
        MPI_Type_free(&m->mib);
        pthread_mutex_destroy(&m->orphan_mu);
        dist_rpc_buf_free(&m->req_buf);
        dist_rpc_buf_free(&m->scratch);
        if (m->reply) dist_rpc_buf_free(&m->reply->buf);
        free(m->reply);
        free(m->done_from);
        free(m->orphans);
        free(m->osends);
        free(m);
    }
    dist_rpc_release(rpc);
}
