/* dist_rpc_serial.c — dist_rpc.h without MPI: a world of one, where every call is a call to
 * the rank itself and runs its handler in the calling thread (no service thread). */
#include "dist/dist_rpc_impl.h"

int dist_rpc_create(dist_rpc **out, const dist_ctx *d, cgnn_err *err) {
    (void)err;
    CGNN_CHECK(d->size == 1);
    dist_rpc *rpc = dist_rpc_alloc(d);
    dist_rpc_local_host(rpc->hosts[0], sizeof rpc->hosts[0]);
    *out = rpc;
    return 0;
}

int dist_rpc_start(dist_rpc *rpc, cgnn_err *err) {
    (void)err;
    CGNN_CHECK(rpc->state == DIST_RPC_CREATED);
    rpc->state = DIST_RPC_RUNNING;
    return 0;
}

int dist_rpc_call_many(dist_rpc *rpc, int handler, int n, const int *peers, const void *const *req,
                       const size_t *req_len, dist_rpc_buf *const *resp, cgnn_err *err) {
    return dist_rpc_local_call_many(rpc, handler, n, peers, req, req_len, resp, err);
}

int dist_rpc_stop(dist_rpc *rpc, cgnn_err *err) {
    (void)err;
    CGNN_CHECK(rpc->state == DIST_RPC_RUNNING);
    rpc->state = DIST_RPC_STOPPED;
    return 0;
}

void dist_rpc_free(dist_rpc *rpc) { dist_rpc_release(rpc); }

int dist_rpc_defer(dist_rpc *rpc, dist_rpc_token *tok, cgnn_err *err) {
    (void)rpc, (void)tok;
    return err_set(err, CGNN_ERR_RUNTIME, "a call to the rank itself cannot be deferred");
}

int dist_rpc_reply(dist_rpc *rpc, const dist_rpc_token *tok, const void *data, size_t len, const cgnn_err *fail,
                   cgnn_err *err) {
    (void)rpc, (void)tok, (void)data, (void)len, (void)fail, (void)err;
    CGNN_CHECK(!"dist_rpc_reply without a deferred request (a world of one defers nothing)");
    return -1;
}
