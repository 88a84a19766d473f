/* dist_rpc.c — the part of dist_rpc.h shared by the MPI and serial backends: buffers, the
 * handler table, counters, time-out settings and calls to the rank itself. */
#include "dist/dist_rpc_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- buffers ---------------------------------------------------------------------------- */

void dist_rpc_buf_init(dist_rpc_buf *b) {
    b->data = NULL;
    b->len = b->cap = 0;
}

void dist_rpc_buf_free(dist_rpc_buf *b) {
    if (!b) return;
    free(b->data);
    dist_rpc_buf_init(b);
}

int dist_rpc_buf_reserve(dist_rpc_buf *b, size_t n, int keep) {
    if (n <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256; /* doubling: a steady state stops growing */
    while (cap < n) cap = cap > SIZE_MAX / 2 ? n : cap * 2;
    void *p = NULL;
    if (posix_memalign(&p, 64, cap) != 0) return -1;
    if (keep && b->len) memcpy(p, b->data, b->len);
    free(b->data);
    b->data = p;
    b->cap = cap;
    return 0;
}

void *dist_rpc_buf_grow(dist_rpc_buf *b, size_t n, cgnn_err *err) {
    if (n > SIZE_MAX - b->len || dist_rpc_buf_reserve(b, b->len + n, 1) != 0) {
        err_set(err, CGNN_ERR_RUNTIME, "out of memory growing an rpc buffer of %zu bytes by %zu", b->len, n);
        return NULL;
    }
    void *p = (char *)b->data + b->len;
    b->len += n;
    return p;
}

int dist_rpc_buf_append(dist_rpc_buf *b, const void *p, size_t n, cgnn_err *err) {
    void *dst = dist_rpc_buf_grow(b, n, err);
    if (!dst) return -1;
    if (n) memcpy(dst, p, n);
    return 0;
}

/* ---- the layer's common state ------------------------------------------------------------ */

dist_rpc *dist_rpc_alloc(const dist_ctx *d) {
    dist_rpc *rpc = cgnn_calloc(1, sizeof *rpc);
    rpc->d = d;
    rpc->rank = d->rank;
    rpc->size = d->size;
    rpc->state = DIST_RPC_CREATED;
    double t = DIST_RPC_DEFAULT_TIMEOUT_S;
    const char *env = getenv("CGNN_RPC_TIMEOUT_S");
    if (env && *env) {
        char *end;
        const double v = strtod(env, &end);
        if (*end == '\0' && v > 0 && v < 1e9) t = v;
    }
    atomic_store(&rpc->timeout_ns, (int64_t)(t * 1e9));
    rpc->spin_ns = 50 * 1000;
    rpc->server_max_ns = 500 * 1000;
    rpc->client_max_ns = 100 * 1000;
    rpc->hosts = cgnn_calloc((size_t)d->size, sizeof *rpc->hosts);
    atomic_store(&rpc->stall_until_ns, 0);
    return rpc;
}

void dist_rpc_release(dist_rpc *rpc) {
    if (!rpc) return;
    free(rpc->hosts);
    free(rpc);
}

void dist_rpc_register(dist_rpc *rpc, int id, const char *name, dist_rpc_handler fn, void *ctx) {
    CGNN_CHECK(rpc->state == DIST_RPC_CREATED); /* every rank registers before it serves */
    CGNN_CHECK(id >= 0 && id < DIST_RPC_MAX_HANDLERS && fn && !rpc->handlers[id].fn);
    rpc->handlers[id].fn = fn;
    rpc->handlers[id].ctx = ctx;
    snprintf(rpc->handlers[id].name, sizeof rpc->handlers[id].name, "%s", name ? name : "");
}

void dist_rpc_set_timeout(dist_rpc *rpc, double seconds) {
    CGNN_CHECK(seconds > 0 && seconds < 1e9);
    atomic_store(&rpc->timeout_ns, (int64_t)(seconds * 1e9));
}

double dist_rpc_timeout(const dist_rpc *rpc) { return 1e-9 * (double)atomic_load(&rpc->timeout_ns); }

void dist_rpc_set_poll(dist_rpc *rpc, double spin_us, double server_max_us, double client_max_us) {
    CGNN_CHECK(rpc->state == DIST_RPC_CREATED);
    CGNN_CHECK(spin_us >= 0 && server_max_us >= 1 && client_max_us >= 1);
    CGNN_CHECK(server_max_us <= 1e6 && client_max_us <= 1e6);
    rpc->spin_ns = (int64_t)(spin_us * 1e3);
    rpc->server_max_ns = (int64_t)(server_max_us * 1e3);
    rpc->client_max_ns = (int64_t)(client_max_us * 1e3);
}

const char *dist_rpc_host(const dist_rpc *rpc, int r) {
    CGNN_CHECK(r >= 0 && r < rpc->size);
    return rpc->hosts[r];
}

void dist_rpc_test_stall(dist_rpc *rpc, double seconds) {
    atomic_store(&rpc->stall_until_ns, dist_rpc_now_ns() + (int64_t)(seconds * 1e9));
}

void dist_rpc_read_counters(dist_rpc *rpc, int handler, int reset, dist_rpc_counters *out) {
    CGNN_CHECK(handler == DIST_RPC_ALL || (handler >= 0 && handler < DIST_RPC_MAX_HANDLERS));
    uint64_t sum[DIST_RPC_NCOUNTERS] = {0};
    for (int h = 0; h < DIST_RPC_MAX_HANDLERS; h++) {
        if (handler != DIST_RPC_ALL && h != handler) continue;
        for (int f = 0; f < DIST_RPC_NCOUNTERS; f++)
            sum[f] += reset ? atomic_exchange(&rpc->counters[h][f], 0) : atomic_load(&rpc->counters[h][f]);
    }
    memcpy(out, sum, sizeof *out);
}

/* ---- calls to the rank itself ------------------------------------------------------------ */

int dist_rpc_fail(const dist_rpc *rpc, cgnn_err *err, int r, int handler, int code, const char *msg, size_t msg_len) {
    return err_set(err, code > 0 ? code : CGNN_ERR_RUNTIME, "rank %d (%s) failed rpc '%s': %.*s", r, rpc->hosts[r],
                   rpc->handlers[handler].name, (int)(msg_len < 1024 ? msg_len : 1024), msg);
}

int dist_rpc_local_call(dist_rpc *rpc, int handler, const void *req, size_t req_len, dist_rpc_buf *resp,
                        cgnn_err *err) {
    DIST_RPC_COUNT(rpc, handler, self_calls, 1);
    resp->len = 0;
    if (!rpc->handlers[handler].fn) {
        static const char msg[] = "no handler registered under this id";
        return dist_rpc_fail(rpc, err, rpc->rank, handler, CGNN_ERR_RUNTIME, msg, sizeof msg - 1);
    }
    cgnn_err herr = {0};
    const int64_t t0 = dist_rpc_now_ns();
    const int rc = rpc->handlers[handler].fn(rpc->handlers[handler].ctx, rpc->rank, req, req_len, resp, &herr);
    DIST_RPC_COUNT(rpc, handler, handler_ns, dist_rpc_now_ns() - t0);
    if (rc != 0) return dist_rpc_fail(rpc, err, rpc->rank, handler, herr.code, herr.msg, strlen(herr.msg));
    return 0;
}

int dist_rpc_local_call_many(dist_rpc *rpc, int handler, int n, const int *peers, const void *const *req,
                             const size_t *req_len, dist_rpc_buf *const *resp, cgnn_err *err) {
    CGNN_CHECK(rpc->state == DIST_RPC_RUNNING);
    CGNN_CHECK(handler >= 0 && handler < DIST_RPC_MAX_HANDLERS && n >= 0 && n <= 1);
    if (n == 0) return 0;
    CGNN_CHECK(peers[0] == rpc->rank);
    DIST_RPC_COUNT(rpc, handler, calls, 1);
    return dist_rpc_local_call(rpc, handler, req[0], req_len[0], resp[0], err);
}

int dist_rpc_call(dist_rpc *rpc, int handler, int peer, const void *req, size_t req_len, dist_rpc_buf *resp,
                  cgnn_err *err) {
    const void *r[1] = {req};
    dist_rpc_buf *b[1] = {resp};
    return dist_rpc_call_many(rpc, handler, 1, &peer, r, &req_len, b, err);
}

void dist_rpc_local_host(char *out, size_t cap) {
    if (gethostname(out, cap) != 0) snprintf(out, cap, "localhost");
    out[cap - 1] = '\0';
}
