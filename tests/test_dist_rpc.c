/* test_dist_rpc.c — dist_rpc in a world of one (serial build, or an MPI build without mpirun):
 * buffers, calls to the rank itself from many threads, handler errors, counters, the life
 * cycle. The layer between ranks is tested under mpirun by tests/test_rpc.sh. */
#include <pthread.h>
#include <unistd.h>

#include "dist/dist.h"
#include "dist/dist_rpc.h"
#include "test.h"

static dist_ctx g_d;

TEST(buf_grow_append) {
    dist_rpc_buf b = {0};
    cgnn_err err = {0};
    ASSERT_EQ(b.len, 0);
    for (int i = 0; i < 1000; i++) ASSERT_EQ(dist_rpc_buf_append(&b, &i, sizeof i, &err), 0);
    ASSERT_EQ(b.len, 1000 * sizeof(int));
    ASSERT(b.cap >= b.len);
    ASSERT_EQ((uintptr_t)b.data % 64, 0);
    for (int i = 0; i < 1000; i++) ASSERT_EQ(((int *)b.data)[i], i);
    void *keep = b.data;
    b.len = 0; /* reuse: no new allocation below the capacity */
    ASSERT(dist_rpc_buf_grow(&b, 1000 * sizeof(int), &err) != NULL);
    ASSERT(b.data == keep);
    ASSERT(dist_rpc_buf_grow(&b, 0, &err) != NULL);
    /* an impossible size is an error, the buffer unchanged */
    ASSERT(dist_rpc_buf_grow(&b, SIZE_MAX - 8, &err) == NULL);
    ASSERT(strstr(err.msg, "out of memory") != NULL);
    ASSERT_EQ(b.len, 1000 * sizeof(int));
    dist_rpc_buf_free(&b);
    ASSERT(b.data == NULL && b.len == 0 && b.cap == 0);
    dist_rpc_buf_free(&b);
    dist_rpc_buf_free(NULL);
}

static int h_double(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx;
    if (src != 0) return err_set(err, CGNN_ERR_RUNTIME, "src %d", src);
    const unsigned char *r = req;
    unsigned char *o = dist_rpc_buf_grow(reply, 2 * len, err);
    if (!o && len) return -1;
    for (size_t i = 0; i < len; i++) o[2 * i] = o[2 * i + 1] = r[i];
    return 0;
}

static int h_fail(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    (void)ctx, (void)src, (void)req, (void)len, (void)reply;
    return err_set(err, CGNN_ERR_INPUT, "no such node %d", 42);
}

typedef struct {
    dist_rpc *rpc;
    int bad;
} thread_arg;

static void *caller(void *p) {
    thread_arg *a = p;
    dist_rpc_buf rep = {0};
    unsigned char req[300];
    for (int it = 0; it < 200; it++) {
        const size_t n = (size_t)(it * 7) % sizeof req;
        for (size_t i = 0; i < n; i++) req[i] = (unsigned char)(i + (size_t)it);
        cgnn_err err = {0};
        if (dist_rpc_call(a->rpc, 0, 0, n ? req : NULL, n, &rep, &err) != 0 || rep.len != 2 * n) {
            a->bad++;
            continue;
        }
        for (size_t i = 0; i < n; i++)
            if (((unsigned char *)rep.data)[2 * i] != req[i]) a->bad++;
    }
    dist_rpc_buf_free(&rep);
    return NULL;
}

TEST(self_calls) {
    dist_rpc *rpc = NULL;
    cgnn_err err = {0};
    ASSERT_EQ(dist_rpc_create(&rpc, &g_d, &err), 0);
    dist_rpc_register(rpc, 0, "double", h_double, NULL);
    dist_rpc_register(rpc, 5, "fail", h_fail, NULL);
    ASSERT(dist_rpc_timeout(rpc) > 0);
    dist_rpc_set_timeout(rpc, 2.5);
    ASSERT(fabs(dist_rpc_timeout(rpc) - 2.5) < 1e-9);
    ASSERT(strlen(dist_rpc_host(rpc, 0)) > 0);
    ASSERT_EQ(dist_rpc_start(rpc, &err), 0);

    /* many threads calling at once */
    pthread_t th[4];
    thread_arg a[4];
    for (int t = 0; t < 4; t++) {
        a[t] = (thread_arg){rpc, 0};
        ASSERT_EQ(pthread_create(&th[t], NULL, caller, &a[t]), 0);
    }
    int bad = 0;
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        bad += a[t].bad;
    }
    ASSERT_EQ(bad, 0);

    /* call_many with the one rank there is, and with none */
    const int peer = 0;
    const char *req = "ab";
    const void *reqs[1] = {req};
    size_t len = 2;
    dist_rpc_buf b = {0};
    dist_rpc_buf *resp[1] = {&b};
    ASSERT_EQ(dist_rpc_call_many(rpc, 0, 1, &peer, reqs, &len, resp, &err), 0);
    ASSERT(b.len == 4 && memcmp(b.data, "aabb", 4) == 0);
    ASSERT_EQ(dist_rpc_call_many(rpc, 0, 0, NULL, NULL, NULL, NULL, &err), 0);

    /* a handler error names the serving rank and keeps its code; an unregistered id fails */
    char want[256];
    snprintf(want, sizeof want, "rank 0 (%s) failed rpc 'fail': no such node 42", dist_rpc_host(rpc, 0));
    ASSERT_EQ(dist_rpc_call(rpc, 5, 0, NULL, 0, &b, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, want);
    ASSERT_EQ(strlen(err.msg), strlen(want));
    err_clear(&err);
    ASSERT_EQ(dist_rpc_call(rpc, 7, 0, "x", 1, &b, &err), -1);
    ASSERT(strstr(err.msg, "no handler registered") != NULL);

    /* counters: 800 + 1 calls of handler 0, all to the rank itself, no messages */
    dist_rpc_counters c;
    dist_rpc_read_counters(rpc, 0, 1, &c);
    ASSERT_EQ(c.calls, 801);
    ASSERT_EQ(c.self_calls, 801);
    ASSERT_EQ(c.req_sent + c.req_recv + c.rep_sent + c.rep_recv + c.req_bytes_sent + c.rep_bytes_recv, 0);
    ASSERT_EQ(c.wait_ns, 0);
    dist_rpc_read_counters(rpc, 0, 0, &c);
    ASSERT_EQ(c.calls, 0);
    dist_rpc_read_counters(rpc, DIST_RPC_ALL, 0, &c);
    ASSERT_EQ(c.calls, 2); /* the two failing calls */
    ASSERT_EQ(c.self_calls, 2);

    ASSERT_EQ(dist_rpc_stop(rpc, &err), 0);
    dist_rpc_free(rpc);
    dist_rpc_free(NULL);
    dist_rpc_buf_free(&b);
}

TEST(free_without_stop) {
    dist_rpc *rpc = NULL;
    cgnn_err err = {0};
    ASSERT_EQ(dist_rpc_create(&rpc, &g_d, &err), 0);
    dist_rpc_register(rpc, 0, "double", h_double, NULL);
    ASSERT_EQ(dist_rpc_start(rpc, &err), 0);
    dist_rpc_free(rpc); /* an error path: nothing leaks, nothing hangs */
}

int main(int argc, char **argv) {
    cgnn_err err = {0};
    if (dist_init_threads(&g_d, &argc, &argv, 1, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    if (g_d.size != 1) {
        fprintf(stderr, "SKIP: test_dist_rpc is the world-of-one test (tests/test_rpc.sh runs the MPI one)\n");
        dist_finalize(&g_d);
        return 77;
    }
    RUN(buf_grow_append);
    RUN(self_calls);
    RUN(free_without_stop);
    dist_finalize(&g_d);
    return test_summary();
}
