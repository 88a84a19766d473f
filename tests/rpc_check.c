/* rpc_check.c — the dist_rpc layer under MPI; run by tests/test_rpc.sh as
 * `mpirun -np P rpc_check [MODE]` (P >= 2).
 *
 * MODE "suite" (default), every check on every rank:
 *   (a) stress: 4 client threads per rank call random subsets of the ranks (itself included)
 *       at once, with random request and reply sizes (0 bytes, a few bytes, KiB, up to 4 MiB);
 *       the handler transforms the request deterministically (a checksum of every request byte
 *       seeds the reply bytes) and every reply is verified byte for byte;
 *   (b) a busy owner: rank 0's main thread computes for 1.5 s without calling MPI while the
 *       others call it; every call is answered within a small fraction of that;
 *   (c) a handler error comes back as the caller's error, with its code, naming the serving
 *       rank and host;
 *   (d) counters: after a known pattern of calls every counter is exact on every rank;
 *   (e) time-out: with a 2 s timeout, the last rank's server stalls for 5 s (test hook);
 *       calls to it (small and 1 MiB requests) fail after 2 s naming that rank and its host; its
 *       late replies are taken and dropped, and the stop is still clean;
 *   (f) stop and free on every rank (run under ASan by the sanitized suite);
 *   (g) deferred replies: a handler defers its request and a thread of the rank answers it
 *       later (value, or an error with its code); meanwhile the service thread answers other
 *       calls at once; a call to the rank itself cannot be deferred (the handler's error);
 *   (h) groups (dist_split): collectives within a group; the idle barrier and max all-reduce;
 *   also: without MPI_THREAD_MULTIPLE the layer refuses to start; calls to a rank that starts
 *   its server late wait for it.
 * The checks wait for each other with the idle barrier (dist_barrier_idle): a rank waiting out
 * another's 1.5 s computation or 5 s stall in a blocking MPI barrier polls a core meanwhile
 * (measured: the 3-rank suite took 12.6 CPU-s in 10.1 s).
 * MODE "big" (2 ranks): a request and a reply of 2^31 + 5 bytes, each one message.
 * MODE "bench": round-trip times and bandwidth between ranks 0 and 1, and the CPU time of an
 *   idle service thread, for the default back-off and for pure spinning.
 * MODE "late_stop": the last rank stops 3 s after the others, with a 1 s timeout: their stop
 *   fails naming it, and they end the job.
 * MODE "die": every rank calls every other in a loop; rank 1 dies (SIGKILL) after 1 s. The
 *   script checks that the whole job ends within seconds (OpenMPI's launcher kills it).
 * Exit status 0 when all checks hold on every rank (rank 0 prints the summary). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist.h"
#include "dist/dist_rpc.h"
#include "util/rng.h"
#include "util/timer.h"

enum { H_XFORM = 0, H_FAIL = 1, H_FIXED = 2, H_BLOB = 3, H_FLAG = 4, H_DEFER = 5 };

#define CTRL_BYTES 24 /* a request of at least this size starts with {seed, reply_len, unused} */

static int g_rank, g_size;

static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* A checksum of every byte (8 at a time, then the tail). */
static uint64_t checksum(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ULL;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* The reply's bytes: word k of the reply is mix64(key + k). */
static void fill_words(unsigned char *out, size_t n, uint64_t key) {
    size_t i = 0;
    for (uint64_t k = 0; i + 8 <= n; i += 8, k++) {
        const uint64_t w = mix64(key + k);
        memcpy(out + i, &w, 8);
    }
    if (i < n) {
        const uint64_t w = mix64(key + n / 8);
        memcpy(out + i, &w, n - i);
    }
}

static int check_words(const unsigned char *p, size_t n, uint64_t key) {
    size_t i = 0;
    for (uint64_t k = 0; i + 8 <= n; i += 8, k++) {
        const uint64_t w = mix64(key + k);
        if (memcmp(p + i, &w, 8) != 0) return 0;
    }
    if (i < n) {
        const uint64_t w = mix64(key + n / 8);
        if (memcmp(p + i, &w, n - i) != 0) return 0;
    }
    return 1;
}

/* The transform: a request shorter than CTRL_BYTES comes back with every byte inverted and
 * xored with the server's rank; a longer one {seed, reply_len, ...} gets reply_len bytes keyed
 * by (seed, server rank, checksum of the whole request). */
static uint64_t xform_key(uint64_t seed, int server, uint64_t sum) {
    return mix64(seed ^ ((uint64_t)server << 48)) ^ sum;
}

static int h_xform(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)src;
    const unsigned char *r = req;
    if (len < CTRL_BYTES) {
        unsigned char *o = dist_rpc_buf_grow(reply, len, err);
        if (!o && len) return -1;
        for (size_t i = 0; i < len; i++) o[i] = (unsigned char)(~r[i] ^ (unsigned char)g_rank);
        return 0;
    }
    uint64_t seed, rlen;
    memcpy(&seed, r, 8);
    memcpy(&rlen, r + 8, 8);
    unsigned char *o = dist_rpc_buf_grow(reply, rlen, err);
    if (!o && rlen) return -1;
    fill_words(o, rlen, xform_key(seed, g_rank, checksum(r, len)));
    return 0;
}

static int h_fail(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)req, (void)reply;
    return err_set(err, CGNN_ERR_INPUT, "bad request from rank %d (%zu bytes)", src, len);
}

/* Replies with 1000 + this rank's bytes (the counter pattern). */
static int h_fixed(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)src, (void)req, (void)len;
    unsigned char *o = dist_rpc_buf_grow(reply, 1000 + (size_t)g_rank, err);
    if (!o) return -1;
    memset(o, 7, 1000 + (size_t)g_rank);
    return 0;
}

/* The bench's handler: a request of 8 bytes n gets n reply bytes (left as they are: transport
 * only); a longer request gets an empty reply. */
static int h_blob(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)src;
    uint64_t n = 0;
    if (len == 8) memcpy(&n, req, 8);
    return n && !dist_rpc_buf_grow(reply, n, err) ? -1 : 0;
}

/* Sets a flag (the bench's "rank 0 is done" without a busy-polling MPI barrier). */
static atomic_int g_flag;
static int h_flag(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)src, (void)req, (void)len, (void)reply, (void)err;
    atomic_store(&g_flag, 1);
    return 0;
}

/* ---- (g) deferred replies: H_DEFER requests are {value, delay_ms}; the rank's replier thread
 * answers 3 value + 1 after the delay, or, for a value divisible by 5, the error "deferred
 * failure V" (CGNN_ERR_INPUT). ---- */
typedef struct deferred_item {
    dist_rpc_token tok;
    int64_t value, delay_ms;
} deferred_item;
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    deferred_item q[256];
    int n, stop;
    dist_rpc *rpc;
    pthread_t thread;
} g_defer = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static int h_defer(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)src, (void)reply;
    if (len != 2 * sizeof(int64_t)) return err_set(err, CGNN_ERR_INPUT, "defer: %zu bytes", len);
    deferred_item it;
    memcpy(&it.value, req, 8);
    memcpy(&it.delay_ms, (const char *)req + 8, 8);
    if (dist_rpc_defer(g_defer.rpc, &it.tok, err) != 0) return -1;
    pthread_mutex_lock(&g_defer.mu);
    if (g_defer.n == 256) {
        pthread_mutex_unlock(&g_defer.mu);
        return err_set(err, CGNN_ERR_RUNTIME, "defer: queue full"); /* (after defer: never in this test) */
    }
    g_defer.q[g_defer.n++] = it;
    pthread_cond_signal(&g_defer.cv);
    pthread_mutex_unlock(&g_defer.mu);
    return 0;
}

static void *replier_main(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_defer.mu);
        while (g_defer.n == 0 && !g_defer.stop) pthread_cond_wait(&g_defer.cv, &g_defer.mu);
        if (g_defer.n == 0) {
            pthread_mutex_unlock(&g_defer.mu);
            return NULL;
        }
        deferred_item it = g_defer.q[0];
        memmove(g_defer.q, g_defer.q + 1, (size_t)(--g_defer.n) * sizeof it);
        pthread_mutex_unlock(&g_defer.mu);
        if (it.delay_ms > 0) usleep((useconds_t)(it.delay_ms * 1000));
        cgnn_err fail = {0}, err = {0};
        int64_t out = 3 * it.value + 1;
        if (it.value % 5 == 0) err_set(&fail, CGNN_ERR_INPUT, "deferred failure %lld", (long long)it.value);
        if (dist_rpc_reply(g_defer.rpc, &it.tok, &out, sizeof out, it.value % 5 == 0 ? &fail : NULL, &err) != 0) {
            fprintf(stderr, "rank %d: deferred reply: %s\n", g_rank, err.msg);
            exit(1);
        }
    }
}

static void register_all(dist_rpc *rpc) {
    dist_rpc_register(rpc, H_DEFER, "defer", h_defer, NULL);
    g_defer.rpc = rpc;
    dist_rpc_register(rpc, H_FLAG, "flag", h_flag, NULL);
    dist_rpc_register(rpc, H_XFORM, "xform", h_xform, NULL);
    dist_rpc_register(rpc, H_FAIL, "fail", h_fail, NULL);
    dist_rpc_register(rpc, H_FIXED, "fixed", h_fixed, NULL);
    dist_rpc_register(rpc, H_BLOB, "blob", h_blob, NULL);
}

static dist_rpc *start_rpc(const dist_ctx *d, double spin_us, double server_max_us, double client_max_us) {
    dist_rpc *rpc = NULL;
    cgnn_err err = {0};
    if (dist_rpc_create(&rpc, d, &err) != 0) {
        fprintf(stderr, "rank %d: %s\n", g_rank, err.msg);
        dist_abort(d, 1);
    }
    register_all(rpc);
    if (spin_us >= 0) dist_rpc_set_poll(rpc, spin_us, server_max_us, client_max_us);
    if (dist_rpc_start(rpc, &err) != 0) {
        fprintf(stderr, "rank %d: %s\n", g_rank, err.msg);
        dist_abort(d, 1);
    }
    return rpc;
}

static int stop_rpc(dist_rpc *rpc) {
    cgnn_err err = {0};
    const int rc = dist_rpc_stop(rpc, &err);
    if (rc != 0) fprintf(stderr, "rank %d: stop: %s\n", g_rank, err.msg);
    dist_rpc_free(rpc);
    return rc != 0;
}

/* Fills a request of len bytes asking for rlen reply bytes. */
static void make_request(dist_rpc_buf *b, size_t len, uint64_t seed, uint64_t rlen) {
    b->len = 0;
    unsigned char *p = dist_rpc_buf_grow(b, len, NULL);
    CGNN_CHECK(p || !len);
    fill_words(p, len, seed * 31 + 7);
    if (len >= CTRL_BYTES) {
        memcpy(p, &seed, 8);
        memcpy(p + 8, &rlen, 8);
    }
}

/* 1 when reply is the transform of req by server. */
static int reply_ok(const dist_rpc_buf *req, const dist_rpc_buf *rep, int server) {
    const unsigned char *r = req->data, *o = rep->data;
    if (req->len < CTRL_BYTES) {
        if (rep->len != req->len) return 0;
        for (size_t i = 0; i < req->len; i++)
            if (o[i] != (unsigned char)(~r[i] ^ (unsigned char)server)) return 0;
        return 1;
    }
    uint64_t seed, rlen;
    memcpy(&seed, r, 8);
    memcpy(&rlen, r + 8, 8);
    return rep->len == rlen && check_words(o, rlen, xform_key(seed, server, checksum(r, req->len)));
}

/* ---- (a) stress -------------------------------------------------------------------------- */

#define THREADS 4
#define ITERS 100

typedef struct stress_arg {
    dist_rpc *rpc;
    int tid;
    int failures;
    long calls, bytes;
    char first_error[1100];
} stress_arg;

static size_t draw_size(rng *g) {
    const double u = rng_uniform(g);
    if (u < 0.10) return 0;
    if (u < 0.20) return 1 + rng_below(g, CTRL_BYTES - 1);
    if (u < 0.75) return CTRL_BYTES + rng_below(g, 4096);
    if (u < 0.95) return 4096 + rng_below(g, 200000);
    return ((size_t)1 << 20) + rng_below(g, 3u << 20); /* 1 .. 4 MiB */
}

static void *stress_thread(void *p) {
    stress_arg *a = p;
    const int P = g_size;
    rng g;
    rng_init(&g, rng_key(rng_key(11, (uint64_t)g_rank), (uint64_t)a->tid));
    dist_rpc_buf reqs[P], reps[P];
    for (int r = 0; r < P; r++) dist_rpc_buf_init(&reqs[r]), dist_rpc_buf_init(&reps[r]);
    for (int it = 0; it < ITERS; it++) {
        int peers[P], n = 0;
        const void *req[P];
        size_t len[P];
        dist_rpc_buf *resp[P];
        const int start = (int)rng_below(&g, (uint64_t)P); /* any order of peers */
        for (int k = 0; k < P; k++) {
            const int r = (start + k) % P;
            if (rng_uniform(&g) < 0.7 || (k == P - 1 && n == 0)) {
                size_t sz = draw_size(&g);
                const uint64_t rlen = draw_size(&g);
                if (sz > 0 && sz < CTRL_BYTES && rng_uniform(&g) < 0.5) sz = CTRL_BYTES; /* control only */
                make_request(&reqs[r], sz, rng_next_u64(&g), rlen);
                peers[n] = r;
                req[n] = reqs[r].data;
                len[n] = reqs[r].len;
                resp[n] = &reps[r];
                n++;
            }
        }
        cgnn_err err = {0};
        if (dist_rpc_call_many(a->rpc, H_XFORM, n, peers, req, len, resp, &err) != 0) {
            if (!a->failures++) snprintf(a->first_error, sizeof a->first_error, "call failed: %s", err.msg);
            continue;
        }
        a->calls++;
        for (int i = 0; i < n; i++) {
            a->bytes += (long)(len[i] + resp[i]->len);
            if (!reply_ok(&reqs[peers[i]], resp[i], peers[i]) && !a->failures++)
                snprintf(a->first_error, sizeof a->first_error,
                         "thread %d iteration %d: the reply of rank %d (%zu bytes for a %zu-byte request) is wrong",
                         a->tid, it, peers[i], resp[i]->len, len[i]);
        }
    }
    for (int r = 0; r < P; r++) dist_rpc_buf_free(&reqs[r]), dist_rpc_buf_free(&reps[r]);
    return NULL;
}

static int check_stress(dist_rpc *rpc) {
    pthread_t th[THREADS];
    stress_arg a[THREADS];
    const double t0 = timer_now();
    for (int t = 0; t < THREADS; t++) {
        memset(&a[t], 0, sizeof a[t]);
        a[t].rpc = rpc;
        a[t].tid = t;
        CGNN_CHECK(pthread_create(&th[t], NULL, stress_thread, &a[t]) == 0);
    }
    int failures = 0;
    long calls = 0, bytes = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        if (a[t].failures) fprintf(stderr, "rank %d: stress: %s\n", g_rank, a[t].first_error);
        failures += a[t].failures;
        calls += a[t].calls;
        bytes += a[t].bytes;
    }
    fprintf(stderr, "rank %d: stress: %ld calls from %d threads, %.1f MB verified in %.2f s%s\n", g_rank, calls,
            THREADS, bytes / 1e6, timer_now() - t0, failures ? " -- FAILED" : "");
    return failures != 0;
}

/* ---- (b) a busy owner -------------------------------------------------------------------- */

static volatile double sink;

static int check_busy(const dist_ctx *d, dist_rpc *rpc) {
    int failed = 0;
    dist_barrier_idle(d);
    if (g_rank == 0) { /* 1.5 s of arithmetic, no MPI */
        const double t0 = timer_now();
        double x = 0;
        while (timer_now() - t0 < 1.5)
            for (int i = 0; i < 100000; i++) x += 1.0 / (i + 1.0);
        sink = x;
    } else {
        usleep(100 * 1000); /* let rank 0 get busy */
        dist_rpc_buf req, rep;
        dist_rpc_buf_init(&req), dist_rpc_buf_init(&rep);
        double worst = 0;
        int n = 0;
        const double t0 = timer_now();
        while (timer_now() - t0 < 1.0) {
            make_request(&req, 64, (uint64_t)n, 256);
            cgnn_err err = {0};
            const double c0 = timer_now();
            if (dist_rpc_call(rpc, H_XFORM, 0, req.data, req.len, &rep, &err) != 0 || !reply_ok(&req, &rep, 0)) {
                fprintf(stderr, "rank %d: busy owner: call %d failed: %s\n", g_rank, n, err.msg);
                failed = 1;
                break;
            }
            const double dt = timer_now() - c0;
            worst = dt > worst ? dt : worst;
            n++;
        }
        fprintf(stderr, "rank %d: busy owner: %d calls answered while rank 0 computed, slowest %.2f ms\n", g_rank, n,
                worst * 1e3);
        if (n < 10 || worst > 0.7) { /* unanswered, a call would wait out the 1.5 s */
            fprintf(stderr, "rank %d: busy owner: too few or too slow answers\n", g_rank);
            failed = 1;
        }
        dist_rpc_buf_free(&req), dist_rpc_buf_free(&rep);
    }
    dist_barrier_idle(d);
    return failed;
}

/* ---- (g) deferred replies ------------------------------------------------------------------ */

struct slow_arg {
    dist_rpc *rpc;
    int peer;
    const int64_t *req;
    dist_rpc_buf *rep;
    int rc;
};

static void *slow_call_main(void *p) {
    struct slow_arg *a = p;
    cgnn_err err = {0};
    a->rc = dist_rpc_call(a->rpc, H_DEFER, a->peer, a->req, 2 * sizeof(int64_t), a->rep, &err);
    return NULL;
}

static int check_deferred(const dist_ctx *d, dist_rpc *rpc) {
    int failed = 0;
    g_defer.stop = 0;
    pthread_create(&g_defer.thread, NULL, replier_main, NULL);
    dist_barrier_idle(d);
    const int peer = (g_rank + 1) % g_size;
    dist_rpc_buf rep;
    dist_rpc_buf_init(&rep);
    for (int64_t v = 1; v <= 12; v++) { /* values and errors */
        const int64_t req[2] = {1000 * g_rank + v, 0};
        cgnn_err err = {0};
        const int rc = dist_rpc_call(rpc, H_DEFER, peer, req, sizeof req, &rep, &err);
        int64_t got = 0;
        if (rc == 0 && rep.len == 8) memcpy(&got, rep.data, 8);
        char want[128];
        snprintf(want, sizeof want, "rank %d (%s) failed rpc 'defer': deferred failure %lld", peer,
                 dist_rpc_host(rpc, peer), (long long)req[0]);
        const int ok = req[0] % 5 == 0 ? rc == -1 && err.code == CGNN_ERR_INPUT && !strcmp(err.msg, want)
                                       : rc == 0 && rep.len == 8 && got == 3 * req[0] + 1;
        if (!ok) {
            fprintf(stderr, "rank %d: deferred value %lld: rc %d, %zu bytes, got %lld, '%s'\n", g_rank,
                    (long long)req[0], rc, rep.len, (long long)got, err.msg);
            failed = 1;
        }
    }
    /* a slow deferred request does not hold up the service thread: another thread's call to the
     * same rank is answered long before it */
    {
        const int64_t req[2] = {7, 1500};
        dist_rpc_buf slow;
        dist_rpc_buf_init(&slow);
        const double t0 = timer_now();
        /* the slow call from a helper thread, a quick one from here */
        struct slow_arg a = {rpc, peer, req, &slow, -1};
        pthread_t th;
        pthread_create(&th, NULL, slow_call_main, &a);
        usleep(100 * 1000);
        cgnn_err err = {0};
        const double q0 = timer_now();
        const int rc = dist_rpc_call(rpc, H_FIXED, peer, NULL, 0, &rep, &err);
        const double quick = timer_now() - q0;
        pthread_join(th, NULL);
        const double total = timer_now() - t0;
        int64_t got = 0;
        if (slow.len == 8) memcpy(&got, slow.data, 8);
        if (rc != 0 || a.rc != 0 || got != 22 || quick > 1.0 || total < 1.45) {
            fprintf(stderr, "rank %d: deferred while serving: quick call rc %d in %.3f s, slow rc %d got %lld after "
                    "%.3f s\n", g_rank, rc, quick, a.rc, (long long)got, total);
            failed = 1;
        }
        dist_rpc_buf_free(&slow);
    }
    /* a call to the rank itself runs the handler in the caller's thread: it cannot defer */
    {
        const int64_t req[2] = {1, 0};
        cgnn_err err = {0};
        const int rc = dist_rpc_call(rpc, H_DEFER, g_rank, req, sizeof req, &rep, &err);
        if (rc != -1 || !strstr(err.msg, "cannot be deferred")) {
            fprintf(stderr, "rank %d: a deferred self call: rc %d '%s'\n", g_rank, rc, err.msg);
            failed = 1;
        }
    }
    dist_barrier_idle(d); /* every deferred request of every rank answered */
    pthread_mutex_lock(&g_defer.mu);
    g_defer.stop = 1;
    pthread_cond_broadcast(&g_defer.cv);
    pthread_mutex_unlock(&g_defer.mu);
    pthread_join(g_defer.thread, NULL);
    dist_rpc_buf_free(&rep);
    return failed;
}

/* ---- (h) groups and idle collectives ---------------------------------------------------------- */

static int check_groups(const dist_ctx *d) {
    int failed = 0;
    dist_ctx g;
    dist_split(d, g_rank % 2, &g);
    /* the group holds the ranks of one parity, in world order */
    const int want_size = (g_size + 1 - g_rank % 2) / 2;
    int64_t sum = g_rank;
    dist_allreduce_sum_i64(&g, &sum, 1);
    int64_t want_sum = 0;
    for (int r = g_rank % 2; r < g_size; r += 2) want_sum += r;
    if (g.size != want_size || g.rank != g_rank / 2 || sum != want_sum || g.local_size != d->local_size) {
        fprintf(stderr, "rank %d: group: rank %d of %d, sum %lld (want %d of %d, %lld)\n", g_rank, g.rank, g.size,
                (long long)sum, g_rank / 2, want_size, (long long)want_sum);
        failed = 1;
    }
    /* the idle collectives: on the group, then on the world (rank 0 arrives late) */
    int64_t mx[2] = {g_rank, -g_rank};
    dist_allreduce_max_i64_idle(&g, mx, 2);
    if (mx[0] != (g_size - 1) - ((g_size - 1) % 2 != g_rank % 2) || mx[1] != -(g_rank % 2)) {
        fprintf(stderr, "rank %d: idle max on the group: %lld %lld\n", g_rank, (long long)mx[0], (long long)mx[1]);
        failed = 1;
    }
    dist_barrier_idle(d);
    if (g_rank == 0) usleep(600 * 1000);
    const double t0 = timer_now();
    dist_barrier_idle(d);
    const double waited = timer_now() - t0;
    if (g_rank != 0 && waited < 0.1) {
        fprintf(stderr, "rank %d: the idle barrier returned after %.3f s, before rank 0 came\n", g_rank, waited);
        failed = 1;
    }
    dist_split_free(&g);
    return failed;
}

/* ---- (c) a handler error ----------------------------------------------------------------- */

static int check_handler_error(dist_rpc *rpc) {
    int failed = 0;
    dist_rpc_buf rep;
    dist_rpc_buf_init(&rep);
    const int peers[2] = {(g_rank + 1) % g_size, g_rank};
    for (int k = 0; k < 2; k++) {
        const int peer = peers[k];
        cgnn_err err = {0};
        const char req[5] = "abcd";
        char want[256];
        snprintf(want, sizeof want, "rank %d (%s) failed rpc 'fail': bad request from rank %d (4 bytes)", peer,
                 dist_rpc_host(rpc, peer), g_rank);
        const int rc = dist_rpc_call(rpc, H_FAIL, peer, req, 4, &rep, &err);
        if (rc != -1 || err.code != CGNN_ERR_INPUT || strcmp(err.msg, want) != 0) {
            fprintf(stderr, "rank %d: handler error from rank %d: rc %d code %d '%s' (want '%s')\n", g_rank, peer, rc,
                    err.code, err.msg, want);
            failed = 1;
        }
    }
    /* one failing among good ones: the error, and the other replies still taken */
    if (g_size >= 3) {
        int all[3] = {0, 1, 2};
        dist_rpc_buf b[3];
        dist_rpc_buf *resp[3] = {&b[0], &b[1], &b[2]};
        const void *req[3] = {NULL, NULL, NULL};
        size_t len[3] = {0, 0, 0};
        for (int i = 0; i < 3; i++) dist_rpc_buf_init(&b[i]);
        cgnn_err err = {0};
        const int rc = dist_rpc_call_many(rpc, H_FAIL, 3, all, req, len, resp, &err);
        if (rc != -1 || !strstr(err.msg, "failed rpc 'fail'")) {
            fprintf(stderr, "rank %d: fan-out error: '%s'\n", g_rank, err.msg);
            failed = 1;
        }
        for (int i = 0; i < 3; i++) dist_rpc_buf_free(&b[i]);
    }
    dist_rpc_buf_free(&rep);
    return failed;
}

/* ---- (d) counters ------------------------------------------------------------------------ */

#define REPS 5

static int check_counters(const dist_ctx *d, dist_rpc *rpc) {
    const int P = g_size, me = g_rank;
    dist_rpc_counters c;
    dist_barrier_idle(d);
    dist_rpc_read_counters(rpc, DIST_RPC_ALL, 1, &c); /* reset */
    dist_barrier_idle(d);
    int peers[P];
    const void *req[P];
    size_t len[P];
    dist_rpc_buf bufs[P];
    dist_rpc_buf *resp[P];
    char payload[200];
    memset(payload, 1, sizeof payload);
    for (int r = 0; r < P; r++) {
        peers[r] = (me + r) % P; /* self first */
        req[r] = payload;
        len[r] = 100 + (size_t)me;
        dist_rpc_buf_init(&bufs[r]);
        resp[r] = &bufs[r];
    }
    int failed = 0;
    for (int k = 0; k < REPS; k++) {
        cgnn_err err = {0};
        if (dist_rpc_call_many(rpc, H_FIXED, P, peers, req, len, resp, &err) != 0) {
            fprintf(stderr, "rank %d: counters: %s\n", me, err.msg);
            failed = 1;
        }
        for (int r = 0; r < P; r++)
            if (bufs[r].len != 1000 + (size_t)peers[r]) failed = 1;
    }
    for (int r = 0; r < P; r++) dist_rpc_buf_free(&bufs[r]);
    dist_barrier_idle(d); /* every server has counted what it served */
    dist_rpc_read_counters(rpc, H_FIXED, 0, &c);
    uint64_t others_req = 0, others_rep = 0;
    for (int r = 0; r < P; r++)
        if (r != me) others_req += 100 + (uint64_t)r, others_rep += 1000 + (uint64_t)r;
    const uint64_t R = REPS, O = (uint64_t)(P - 1);
    const struct {
        const char *name;
        uint64_t got, want;
    } chk[] = {
        {"calls", c.calls, R},
        {"self_calls", c.self_calls, R},
        {"req_sent", c.req_sent, R * O},
        {"req_bytes_sent", c.req_bytes_sent, R * O * (100 + (uint64_t)me)},
        {"rep_recv", c.rep_recv, R * O},
        {"rep_bytes_recv", c.rep_bytes_recv, R * others_rep},
        {"timeouts", c.timeouts, 0},
        {"req_recv", c.req_recv, R * O},
        {"req_bytes_recv", c.req_bytes_recv, R * others_req},
        {"rep_sent", c.rep_sent, R * O},
        {"rep_bytes_sent", c.rep_bytes_sent, R * O * (1000 + (uint64_t)me)},
    };
    for (size_t i = 0; i < sizeof chk / sizeof chk[0]; i++)
        if (chk[i].got != chk[i].want) {
            fprintf(stderr, "rank %d: counter %s is %llu, want %llu\n", me, chk[i].name, (unsigned long long)chk[i].got,
                    (unsigned long long)chk[i].want);
            failed = 1;
        }
    if (c.handler_ns == 0 || (P > 1 && c.wait_ns == 0)) {
        fprintf(stderr, "rank %d: counters: no handler or wait time\n", me);
        failed = 1;
    }
    dist_rpc_counters all;
    dist_rpc_read_counters(rpc, DIST_RPC_ALL, 1, &all); /* nothing but H_FIXED since the reset */
    if (memcmp(&all, &c, sizeof c) != 0) {
        fprintf(stderr, "rank %d: counters: the sum over handlers differs from H_FIXED alone\n", me);
        failed = 1;
    }
    dist_rpc_read_counters(rpc, DIST_RPC_ALL, 0, &all);
    if (all.calls || all.req_sent || all.rep_bytes_sent) {
        fprintf(stderr, "rank %d: counters: not zero after a reset\n", me);
        failed = 1;
    }
    if (!failed && me == 0)
        fprintf(stderr, "rank 0: counters exact: %llu requests / %llu bytes sent, %llu replies / %llu bytes received\n",
                (unsigned long long)c.req_sent, (unsigned long long)c.req_bytes_sent, (unsigned long long)c.rep_recv,
                (unsigned long long)c.rep_bytes_recv);
    return failed;
}

/* ---- (e) time-out ------------------------------------------------------------------------ */

static int check_timeout(const dist_ctx *d, dist_rpc *rpc, dist_rpc_buf *keep) {
    const int silent = g_size - 1;
    int failed = 0;
    dist_rpc_counters c;
    dist_rpc_set_timeout(rpc, 2.0);
    dist_barrier_idle(d);
    dist_rpc_read_counters(rpc, DIST_RPC_ALL, 1, &c); /* reset */
    dist_barrier_idle(d);
    if (g_rank == silent) {
        dist_rpc_test_stall(rpc, 5.0);
        /* its own calls still work: its clients do not need its server */
        dist_rpc_buf req, rep;
        dist_rpc_buf_init(&req), dist_rpc_buf_init(&rep);
        make_request(&req, 100, 5, 100);
        cgnn_err err = {0};
        if (dist_rpc_call(rpc, H_XFORM, 0, req.data, req.len, &rep, &err) != 0 || !reply_ok(&req, &rep, 0)) {
            fprintf(stderr, "rank %d: a stalled server's own call failed: %s\n", g_rank, err.msg);
            failed = 1;
        }
        dist_rpc_buf_free(&req), dist_rpc_buf_free(&rep);
    } else {
        usleep(50 * 1000);
        /* a small request (sent eagerly) and a 1 MiB one (not taken until the stall ends: the
         * buffer stays valid until the stop, as dist_rpc.h asks) */
        const size_t sizes[2] = {100, (size_t)1 << 20};
        for (int k = 0; k < 2; k++) {
            make_request(&keep[k], sizes[k], 9 + (uint64_t)k, 64);
            dist_rpc_buf rep;
            dist_rpc_buf_init(&rep);
            cgnn_err err = {0};
            const double t0 = timer_now();
            const int rc = dist_rpc_call(rpc, H_XFORM, silent, keep[k].data, keep[k].len, &rep, &err);
            const double dt = timer_now() - t0;
            char want[256];
            snprintf(want, sizeof want, "rpc 'xform' (%zu-byte request) to rank %d on host %s: no reply within 2.0 s",
                     sizes[k], silent, dist_rpc_host(rpc, silent));
            if (rc != -1 || err.code != CGNN_ERR_RUNTIME || strcmp(err.msg, want) != 0 || dt < 1.95 || dt > 3.0) {
                fprintf(stderr, "rank %d: time-out: rc %d after %.2f s: '%s' (want '%s' after 2 s)\n", g_rank, rc, dt,
                        err.msg, want);
                failed = 1;
            } else if (k == 1) {
                fprintf(stderr, "rank %d: time-out after %.2f s: %s\n", g_rank, dt, err.msg);
            }
            dist_rpc_buf_free(&rep);
            if (k == 0) usleep(200 * 1000);
        }
        dist_rpc_read_counters(rpc, H_XFORM, 0, &c);
        if (c.timeouts != 2) {
            fprintf(stderr, "rank %d: %llu time-outs counted, want 2\n", g_rank, (unsigned long long)c.timeouts);
            failed = 1;
        }
    }
    /* the stall ends: the silent server answers the queued requests (their replies are taken
     * and dropped by the callers' service threads), then new calls to it work again */
    dist_rpc_set_timeout(rpc, 20.0);
    dist_barrier_idle(d);
    if (g_rank != silent) {
        dist_rpc_buf req, rep;
        dist_rpc_buf_init(&req), dist_rpc_buf_init(&rep);
        make_request(&req, 300, 77, 5000);
        cgnn_err err = {0};
        const double t0 = timer_now();
        if (dist_rpc_call(rpc, H_XFORM, silent, req.data, req.len, &rep, &err) != 0 || !reply_ok(&req, &rep, silent)) {
            fprintf(stderr, "rank %d: a call after the stall failed: %s\n", g_rank, err.msg);
            failed = 1;
        } else if (g_rank == 0) {
            fprintf(stderr, "rank 0: the stalled rank answered again after %.2f s more\n", timer_now() - t0);
        }
        dist_rpc_buf_free(&req), dist_rpc_buf_free(&rep);
        /* the two late replies were taken (by the service thread) and counted */
        const double t1 = timer_now();
        do dist_rpc_read_counters(rpc, H_XFORM, 0, &c);
        while (c.rep_recv < 3 && timer_now() - t1 < 2.0 && usleep(1000) == 0);
        if (c.req_sent != 3 || c.rep_recv != 3) {
            fprintf(stderr, "rank %d: after the stall: %llu requests sent, %llu replies taken (want 3 and 3)\n", g_rank,
                    (unsigned long long)c.req_sent, (unsigned long long)c.rep_recv);
            failed = 1;
        }
    }
    dist_barrier_idle(d);
    return failed;
}

/* ---- modes ------------------------------------------------------------------------------- */

static int run_suite(const dist_ctx *d) {
    int failed = 0;
    /* without MPI_THREAD_MULTIPLE the layer refuses to start, with a message saying why */
    dist_ctx funneled = *d;
    funneled.thread_multiple = 0;
    dist_rpc *none = NULL;
    cgnn_err err = {0};
    if (dist_rpc_create(&none, &funneled, &err) != -1 || none || !strstr(err.msg, "MPI_THREAD_MULTIPLE")) {
        fprintf(stderr, "rank %d: a world without MPI_THREAD_MULTIPLE: '%s'\n", g_rank, err.msg);
        failed = 1;
    }
    /* the last rank starts its server late: the first calls to it wait for it */
    dist_rpc *rpc = NULL;
    if (g_rank == g_size - 1) {
        if (dist_rpc_create(&rpc, d, &err) != 0) dist_abort(d, 1);
        register_all(rpc);
        usleep(500 * 1000);
        if (dist_rpc_start(rpc, &err) != 0) dist_abort(d, 1);
    } else {
        rpc = start_rpc(d, -1, 0, 0);
    }
    dist_rpc_buf keep[2];
    dist_rpc_buf_init(&keep[0]), dist_rpc_buf_init(&keep[1]);
    /* each check's time on rank 0 (the suite's cost is in the log) */
    double t = timer_now();
#define TIMED(name, call) \
    do { \
        failed |= (call); \
        if (g_rank == 0) fprintf(stderr, "rank 0: %-14s %.2f s\n", name, timer_now() - t); \
        t = timer_now(); \
    } while (0)
    TIMED("stress", check_stress(rpc));
    TIMED("busy", check_busy(d, rpc));
    TIMED("handler error", check_handler_error(rpc));
    TIMED("counters", check_counters(d, rpc));
    TIMED("deferred", check_deferred(d, rpc));
    TIMED("groups", check_groups(d));
    TIMED("timeout", check_timeout(d, rpc, keep));
    TIMED("stop", stop_rpc(rpc));
#undef TIMED
    dist_rpc_buf_free(&keep[0]), dist_rpc_buf_free(&keep[1]);
    return failed;
}

/* The last rank comes to the stop 3 s late with a 1 s timeout: every other rank's stop fails
 * naming it, and ends the job (exit 3). */
static int run_late_stop(const dist_ctx *d) {
    dist_rpc *rpc = start_rpc(d, -1, 0, 0);
    dist_rpc_set_timeout(rpc, 1.0);
    if (g_rank == g_size - 1) usleep(3000 * 1000);
    cgnn_err err = {0};
    const double t0 = timer_now();
    const int rc = dist_rpc_stop(rpc, &err);
    fprintf(stderr, "rank %d: stop after %.2f s: %s\n", g_rank, timer_now() - t0, rc ? err.msg : "ok");
    if (rc != 0) dist_abort(d, 3); /* as a trainer would: the job ends */
    dist_rpc_free(rpc);
    return 0;
}

/* 2^31 + 5 bytes each way (rank 0 calls rank 1), each one message. */
static int run_big(const dist_ctx *d) {
    dist_rpc *rpc = start_rpc(d, -1, 0, 0);
    int failed = 0;
    if (g_rank == 0) {
        const size_t big = ((size_t)1 << 31) + 5;
        dist_rpc_buf req, rep;
        dist_rpc_buf_init(&req), dist_rpc_buf_init(&rep);
        for (int k = 0; k < 2; k++) {
            make_request(&req, k == 0 ? big : CTRL_BYTES, 1234 + (uint64_t)k, k == 0 ? 64 : big);
            cgnn_err err = {0};
            const double t0 = timer_now();
            const int rc = dist_rpc_call(rpc, H_XFORM, 1, req.data, req.len, &rep, &err);
            const double dt = timer_now() - t0;
            const int ok = rc == 0 && reply_ok(&req, &rep, 1);
            fprintf(stderr, "rank 0: a %zu-byte request, a %zu-byte reply in %.2f s: %s %s\n", req.len, rep.len, dt,
                    ok ? "verified" : "WRONG", err.msg);
            failed |= !ok;
            dist_rpc_buf_free(&req); /* 2 GiB less before the next one */
        }
        dist_rpc_buf_free(&rep);
    }
    failed |= stop_rpc(rpc);
    return failed;
}

/* ---- bench ------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

/* n round trips of a request to rank 1 for `reply` bytes, `gap_us` apart; times into t[]. */
static void round_trips(dist_rpc *rpc, int n, const void *req, size_t req_len, int gap_us, double *t) {
    dist_rpc_buf rep;
    dist_rpc_buf_init(&rep);
    for (int i = 0; i < n; i++) {
        if (gap_us) usleep((useconds_t)gap_us);
        cgnn_err err = {0};
        const double t0 = timer_now();
        if (dist_rpc_call(rpc, H_BLOB, 1, req, req_len, &rep, &err) != 0) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        t[i] = timer_now() - t0;
    }
    dist_rpc_buf_free(&rep);
}

/* Waits without burning a core (an MPI barrier busy-polls, and this machine may have fewer
 * cores than the job has threads): rank 0 raises every rank's flag when it is done. */
static void quiet_barrier(const dist_ctx *d, dist_rpc *rpc) {
    if (g_rank == 0) {
        for (int r = 1; r < d->size; r++) {
            dist_rpc_buf rep = {0};
            cgnn_err err = {0};
            CGNN_CHECK(dist_rpc_call(rpc, H_FLAG, r, NULL, 0, &rep, &err) == 0);
        }
    } else {
        while (!atomic_load(&g_flag)) usleep(1000);
    }
    atomic_store(&g_flag, 0);
    dist_barrier_idle(d);
}

static void bench_config(const dist_ctx *d, const char *label, double spin_us, double smax, double cmax) {
    dist_rpc *rpc = start_rpc(d, spin_us, smax, cmax);
    dist_barrier_idle(d);
    enum { N = 2000, NIDLE = 100, NBW = 40 };
    static double t[N];
    if (g_rank == 0) {
        uint64_t small = 16;
        round_trips(rpc, 200, &small, 8, 0, t); /* warm-up */
        round_trips(rpc, N, &small, 8, 0, t);
        qsort(t, N, sizeof t[0], cmp_double);
        const double med = t[N / 2], p99 = t[N * 99 / 100];
        round_trips(rpc, NIDLE, &small, 8, 5000, t);
        qsort(t, NIDLE, sizeof t[0], cmp_double);
        const double imed = t[NIDLE / 2], ip99 = t[NIDLE * 99 / 100];
        uint64_t mib4 = (uint64_t)4 << 20;
        round_trips(rpc, 5, &mib4, 8, 0, t);
        round_trips(rpc, NBW, &mib4, 8, 0, t);
        double sum = 0;
        for (int i = 0; i < NBW; i++) sum += t[i];
        const double bw_rep = (double)NBW * (double)mib4 / sum / 1e6;
        char *big = calloc(1, mib4 + 1); /* a 4 MiB request (not 8 bytes: empty reply) */
        round_trips(rpc, 5, big, mib4, 0, t);
        round_trips(rpc, NBW, big, mib4, 0, t);
        sum = 0;
        for (int i = 0; i < NBW; i++) sum += t[i];
        const double bw_req = (double)NBW * (double)mib4 / sum / 1e6;
        free(big);
        printf("%-24s small round trip: median %6.1f us, p99 %6.1f us | after 5 ms idle: median %6.1f us, p99 %6.1f us"
               " | 4 MiB replies %6.0f MB/s, 4 MiB requests %6.0f MB/s\n",
               label, med * 1e6, p99 * 1e6, imed * 1e6, ip99 * 1e6, bw_rep, bw_req);
    }
    /* an idle layer: CPU time of each process while nobody calls for 2 s */
    quiet_barrier(d, rpc);
    const double c0 = cpu_seconds(), w0 = timer_now();
    usleep(2000 * 1000);
    const double cpu = (cpu_seconds() - c0) / (timer_now() - w0);
    int64_t worst = (int64_t)(cpu * 1e6);
    dist_allreduce_max_i64(d, &worst, 1);
    if (g_rank == 0) printf("%-24s idle process CPU: %.2f%% of a core (the busiest rank)\n", label, worst / 1e4);
    fflush(stdout);
    stop_rpc(rpc);
}

static void quiet_barrier_plain(const dist_ctx *d) {
    dist_barrier_idle(d);
    const double c0 = cpu_seconds(), w0 = timer_now();
    usleep(2000 * 1000);
    int64_t worst = (int64_t)((cpu_seconds() - c0) / (timer_now() - w0) * 1e6);
    dist_allreduce_max_i64(d, &worst, 1);
    if (g_rank == 0)
        printf("%-24s idle process CPU: %.2f%% of a core (the busiest rank)\n", "no rpc layer", worst / 1e4);
}

/* rpc_check bw BYTES: bandwidth of replies and requests of one size (rank 0 calls rank 1). */
static int run_bw(const dist_ctx *d, size_t bytes) {
    dist_rpc *rpc = start_rpc(d, -1, 0, 0);
    if (g_rank == 0) {
        double t[8];
        uint64_t n = bytes;
        round_trips(rpc, 1, &n, 8, 0, t);
        round_trips(rpc, 4, &n, 8, 0, t);
        const double rep = 4.0 * (double)bytes / (t[0] + t[1] + t[2] + t[3]) / 1e6;
        char *big = calloc(1, bytes);
        round_trips(rpc, 1, big, bytes, 0, t);
        round_trips(rpc, 4, big, bytes, 0, t);
        const double req = 4.0 * (double)bytes / (t[0] + t[1] + t[2] + t[3]) / 1e6;
        free(big);
        printf("%zu-byte replies %.0f MB/s, requests %.0f MB/s\n", bytes, rep, req);
    }
    quiet_barrier(d, rpc);
    return stop_rpc(rpc);
}

static int run_bench(const dist_ctx *d, int argc, char **argv) {
    if (g_rank == 0)
        printf("bench: rank 0 calls rank 1 (%d ranks; 8-byte request, 16-byte reply for the round trips)\n", d->size);
    if (argc == 5) { /* rpc_check bench SPIN_US SERVER_MAX_US CLIENT_MAX_US: one setting */
        char label[64];
        snprintf(label, sizeof label, "%s/%s/%s us", argv[2], argv[3], argv[4]);
        bench_config(d, label, atof(argv[2]), atof(argv[3]), atof(argv[4]));
        return 0;
    }
    bench_config(d, "default (50/500/100 us)", -1, 0, 0);
    bench_config(d, "short sleeps (50/100/20)", 50, 100, 20);
    bench_config(d, "long sleeps (50/2000/100)", 50, 2000, 100);
    bench_config(d, "always spin", 1e9, 1, 1);
    /* the floor: MPI initialised, no rpc layer */
    quiet_barrier_plain(d);
    return 0;
}

/* ---- die --------------------------------------------------------------------------------- */

static int run_die(const dist_ctx *d) {
    dist_rpc *rpc = start_rpc(d, -1, 0, 0);
    const double t0 = timer_now();
    dist_rpc_buf req, rep;
    dist_rpc_buf_init(&req), dist_rpc_buf_init(&rep);
    long n = 0;
    while (timer_now() - t0 < 30) {
        if (g_rank == 1 && timer_now() - t0 > 1.0) {
            fprintf(stderr, "rank 1: dying now (SIGKILL)\n");
            raise(SIGKILL);
        }
        for (int r = 0; r < g_size; r++) {
            make_request(&req, 64, (uint64_t)n, 64);
            cgnn_err err = {0};
            if (dist_rpc_call(rpc, H_XFORM, r, req.data, req.len, &rep, &err) != 0) {
                fprintf(stderr, "rank %d: after %.2f s: %s\n", g_rank, timer_now() - t0, err.msg);
                dist_abort(d, 1);
            }
            n++;
        }
    }
    fprintf(stderr, "rank %d: still running after 30 s (%ld calls)\n", g_rank, n);
    dist_rpc_buf_free(&req), dist_rpc_buf_free(&rep);
    return stop_rpc(rpc) | 1;
}

int main(int argc, char **argv) {
    dist_ctx d;
    cgnn_err err = {0};
    if (dist_init_threads(&d, &argc, &argv, 1, &err) != 0) {
        fprintf(stderr, "rpc_check: %s\n", err.msg);
        dist_finalize(&d);
        return 1;
    }
    g_rank = d.rank;
    g_size = d.size;
    const char *mode = argc > 1 ? argv[1] : "suite";
    if (d.size < 2) {
        fprintf(stderr, "rpc_check: run me under mpirun with at least 2 ranks\n");
        dist_finalize(&d);
        return 1;
    }
    int failed;
    if (strcmp(mode, "suite") == 0) failed = run_suite(&d);
    else if (strcmp(mode, "big") == 0) failed = run_big(&d);
    else if (strcmp(mode, "bench") == 0) failed = run_bench(&d, argc, argv);
    else if (strcmp(mode, "bw") == 0 && argc > 2) failed = run_bw(&d, (size_t)atof(argv[2]));
    else if (strcmp(mode, "late_stop") == 0) failed = run_late_stop(&d);
    else if (strcmp(mode, "die") == 0) failed = run_die(&d);
    else {
        fprintf(stderr, "rpc_check: unknown mode '%s'\n", mode);
        failed = 1;
    }
    int64_t bad = failed;
    dist_allreduce_sum_i64(&d, &bad, 1);
    if (d.rank == 0)
        printf("rpc_check %s: %s (%d ranks)\n", mode, bad ? "FAILED" : "OK", d.size);
    dist_finalize(&d);
    return bad ? 1 : 0;
}
