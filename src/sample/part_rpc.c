/* part_rpc.c — a partitioned graph's services; see part_rpc.h. */
#include "sample/part_rpc.h"

#include <stdlib.h>
#include <string.h>

/* One caller's (or one handler's) working set; taken from the pool for one call. */
struct part_rpc_scratch {
    int num_parts;
    dist_rpc_buf *req, *resp;   /* (P) */
    dist_rpc_buf **resp_ptr;    /* (P) */
    const void **req_ptr;       /* (P) */
    size_t *req_len;            /* (P) */
    int *peers, *parts;         /* (P) */
    uint32_t *positions;        /* (own max in-degree + 1): pick scratch */
    double *wscratch;           /* (own max in-degree + 1): weighted picks' keys / CDF */
    int64_t *nbrs, nbr_cap;     /* a handler's picks */
};

#define PICK_HEADER 5 /* int64s: hop, key, fanout, replace, n */

static part_rpc_scratch *scratch_new(const part_rpc *pr) {
    const int P = pr->num_parts;
    part_rpc_scratch *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->num_parts = P;
    s->req = calloc((size_t)P, sizeof *s->req);
    s->resp = calloc((size_t)P, sizeof *s->resp);
    s->resp_ptr = calloc((size_t)P, sizeof *s->resp_ptr);
    s->req_ptr = calloc((size_t)P, sizeof *s->req_ptr);
    s->req_len = calloc((size_t)P, sizeof *s->req_len);
    s->peers = calloc((size_t)P, sizeof *s->peers);
    s->parts = calloc((size_t)P, sizeof *s->parts);
    int64_t maxdeg = 0;
    for (int64_t v = 0; pr->local && v < pr->local->num_nodes; v++)
        if (csc_degree(pr->local, v) > maxdeg) maxdeg = csc_degree(pr->local, v);
    for (int e = 0; pr->tg && e < pr->tg->num_edge_types; e++) /* typed: the whole graph's bound */
        if (pr->tg->max_in_degree[e] > maxdeg) maxdeg = pr->tg->max_in_degree[e];
    s->positions = malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    s->wscratch = malloc((size_t)(maxdeg + 1) * sizeof(double));
    if (!s->req || !s->resp || !s->resp_ptr || !s->req_ptr || !s->req_len || !s->peers || !s->parts ||
        !s->positions || !s->wscratch) {
        free(s->req), free(s->resp), free(s->resp_ptr), free(s->req_ptr), free(s->req_len), free(s->peers);
        free(s->parts), free(s->positions), free(s->wscratch), free(s);
        return NULL;
    }
    for (int p = 0; p < P; p++) s->resp_ptr[p] = &s->resp[p];
    return s;
}

static void scratch_del(part_rpc_scratch *s) {
    if (!s) return;
    for (int p = 0; p < s->num_parts; p++) {
        dist_rpc_buf_free(&s->req[p]);
        dist_rpc_buf_free(&s->resp[p]);
    }
    free(s->req), free(s->resp), free(s->resp_ptr), free(s->req_ptr), free(s->req_len), free(s->peers);
    free(s->parts), free(s->wscratch);
    free(s->positions), free(s->nbrs), free(s);
}

static part_rpc_scratch *scratch_take(part_rpc *pr, cgnn_err *err) {
    pthread_mutex_lock(&pr->mu);
    part_rpc_scratch *s = pr->pool_len > 0 ? pr->pool[--pr->pool_len] : NULL;
    pthread_mutex_unlock(&pr->mu);
    if (!s && !(s = scratch_new(pr))) err_set(err, CGNN_ERR_RUNTIME, "out of memory for partitioned-graph scratch");
    return s;
}

static void scratch_give(part_rpc *pr, part_rpc_scratch *s) {
    pthread_mutex_lock(&pr->mu);
    if (pr->pool_len == pr->pool_cap) {
        int cap = pr->pool_cap ? 2 * pr->pool_cap : 8;
        part_rpc_scratch **g = realloc(pr->pool, (size_t)cap * sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&pr->mu);
            scratch_del(s);
            return;
        }
        pr->pool = g;
        pr->pool_cap = cap;
    }
    pr->pool[pr->pool_len++] = s;
    pthread_mutex_unlock(&pr->mu);
}

int part_rpc_peer(const part_rpc *pr, int p) {
    if (pr->peer_of_part) return pr->peer_of_part[p];
    const int group = pr->rank / pr->num_parts, peer = group * pr->num_parts + p;
    return peer < pr->world ? peer : p;
}

/* ---- handlers (owner side) ---------------------------------------------------------- */

static int handle_pick(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    part_rpc *pr = ctx;
    (void)src;
    const int64_t *h = req;
    if (len < PICK_HEADER * sizeof(int64_t) || h[4] < 0 ||
        (uint64_t)h[4] != (len - PICK_HEADER * sizeof(int64_t)) / sizeof(int64_t) || len % sizeof(int64_t))
        return err_set(err, CGNN_ERR_INPUT, "sampling request of %zu bytes is malformed", len);
    const int64_t n = h[4];
    part_rpc_scratch *s = scratch_take(pr, err);
    if (!s) return -1;
    int64_t *counts = dist_rpc_buf_grow(reply, (size_t)n * sizeof(int64_t), err);
    int rc = -1;
    if (counts) {
        int64_t e = sampler_pick_owned(pr->local, pr->part, (int)h[0], (uint64_t)h[1], h[2], (int)h[3], h + PICK_HEADER,
                                       n, counts, &s->nbrs, &s->nbr_cap, s->positions, s->wscratch, err);
        /* counts may have moved if the buffer grew: it did not, appending happens below */
        if (e >= 0) rc = dist_rpc_buf_append(reply, s->nbrs, (size_t)e * sizeof(int64_t), err);
    }
    scratch_give(pr, s);
    return rc;
}

static int handle_rows(const ds_feature *f, const gather_part *gp, const void *req, size_t len, dist_rpc_buf *reply,
                       const char *what, cgnn_err *err) {
    if (!f) return err_set(err, CGNN_ERR_INPUT, "%s request, but this part has none", what);
    const int64_t *h = req;
    if (len < sizeof(int64_t) || len % sizeof(int64_t) || h[0] < 0 ||
        (uint64_t)h[0] != len / sizeof(int64_t) - 1)
        return err_set(err, CGNN_ERR_INPUT, "%s request of %zu bytes is malformed", what, len);
    const size_t row_bytes = (size_t)f->dim * npy_dtype_size(f->array.dtype);
    if ((uint64_t)h[0] > SIZE_MAX / row_bytes) return err_set(err, CGNN_ERR_INPUT, "%s request: too many rows", what);
    /* write straight into the reply (gather_rows_owned grows a plain buffer; give it the
     * reply's memory through a staging pointer) */
    const size_t need = (size_t)h[0] * row_bytes;
    void *dst = dist_rpc_buf_grow(reply, need, err);
    if (!dst) return -1;
    void *buf = dst;
    size_t cap = need, got = 0;
    if (gather_rows_owned(f, gp, h + 1, h[0], &buf, &cap, &got, err) != 0) return -1;
    CGNN_CHECK(buf == dst && got == need); /* the buffer was large enough: never reallocated */
    return 0;
}

static int handle_feat(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    part_rpc *pr = ctx;
    (void)src;
    return handle_rows(pr->features, &pr->feat_part, req, len, reply, "feature", err);
}

static int handle_emb(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    part_rpc *pr = ctx;
    (void)src;
    return handle_rows(pr->emb ? &pr->emb_view : NULL, &pr->emb_part, req, len, reply, "embedding", err);
}

/* The view is swapped between layers (part_rpc_set_rows, under the mutex, followed by a barrier
 * before any peer asks for the new layer): copy it under the mutex, then serve. */
static int handle_act(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    part_rpc *pr = ctx;
    (void)src;
    pthread_mutex_lock(&pr->mu);
    const int have = pr->act_view.array.data != NULL;
    ds_feature view = pr->act_view;
    pthread_mutex_unlock(&pr->mu);
    return handle_rows(have ? &view : NULL, &pr->act_part, req, len, reply, "activation", err);
}

/* ---- client callbacks ----------------------------------------------------------------- */

static int pick_remote(void *ctx, sampler_remote_hop *hop, cgnn_err *err) {
    part_rpc *pr = ctx;
    part_rpc_scratch *s = scratch_take(pr, err);
    if (!s) return -1;
    int n = 0, rc = 0;
    for (int p = 0; p < hop->num_parts && rc == 0; p++) {
        if (hop->n[p] == 0) continue;
        dist_rpc_buf *b = &s->req[n];
        b->len = 0;
        int64_t *h = dist_rpc_buf_grow(b, (size_t)(PICK_HEADER + hop->n[p]) * sizeof(int64_t), err);
        if (!h) {
            rc = -1;
            break;
        }
        h[0] = hop->hop;
        h[1] = (int64_t)hop->key;
        h[2] = hop->fanout;
        h[3] = hop->replace;
        h[4] = hop->n[p];
        memcpy(h + PICK_HEADER, hop->nodes[p], (size_t)hop->n[p] * sizeof(int64_t));
        s->req_ptr[n] = b->data;
        s->req_len[n] = b->len;
        s->peers[n] = part_rpc_peer(pr, p);
        s->parts[n++] = p;
    }
    if (rc == 0 && n > 0)
        rc = dist_rpc_call_many(pr->rpc, PART_RPC_PICK, n, s->peers, s->req_ptr, s->req_len, s->resp_ptr, err);
    for (int i = 0; i < n && rc == 0; i++) {
        const int p = s->parts[i];
        const int64_t m = hop->n[p];
        const dist_rpc_buf *r = &s->resp[i];
        if (r->len < (size_t)m * sizeof(int64_t) || r->len % sizeof(int64_t)) {
            rc = err_set(err, CGNN_ERR_INPUT, "rank %d answered a sampling request with %zu bytes", s->peers[i], r->len);
            break;
        }
        const int64_t *counts = r->data, total = (int64_t)(r->len / sizeof(int64_t)) - m;
        memcpy(hop->counts[p], counts, (size_t)m * sizeof(int64_t));
        if (total > hop->nbr_cap[p]) {
            int64_t *g = realloc(hop->nbrs[p], (size_t)total * sizeof(int64_t));
            if (!g) {
                rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory receiving sampled neighbours");
                break;
            }
            hop->nbrs[p] = g;
            hop->nbr_cap[p] = total;
        }
        memcpy(hop->nbrs[p], counts + m, (size_t)total * sizeof(int64_t));
        /* the sum of counts must be the ids sent (the sampler checks each count) */
        int64_t sum = 0;
        for (int64_t k = 0; k < m; k++) sum += counts[k] < 0 ? 0 : counts[k];
        if (sum != total)
            rc = err_set(err, CGNN_ERR_INPUT, "rank %d answered %lld neighbour ids for counts summing to %lld",
                         s->peers[i], (long long)total, (long long)sum);
    }
    scratch_give(pr, s);
    return rc;
}

/* Sends the n requests staged in s (req_ptr / req_len / peers / parts) to `handler` and keeps
 * each answer as part parts[i]'s rows: rows[p] (grown to rows_cap[p], owned by the request) gets
 * the reply's bytes and rows_len[p] its length (the gather checks the size). 0 or -1 (*err). */
static int call_keep_rows(part_rpc *pr, part_rpc_scratch *s, int handler, int n, void **rows, size_t *rows_cap,
                          size_t *rows_len, cgnn_err *err) {
    if (n == 0) return 0;
    if (dist_rpc_call_many(pr->rpc, handler, n, s->peers, s->req_ptr, s->req_len, s->resp_ptr, err) != 0) return -1;
    for (int i = 0; i < n; i++) {
        const int p = s->parts[i];
        const dist_rpc_buf *r = &s->resp[i];
        if (r->len > rows_cap[p]) {
            void *g = realloc(rows[p], r->len);
            if (!g) return err_set(err, CGNN_ERR_RUNTIME, "out of memory receiving rows");
            rows[p] = g;
            rows_cap[p] = r->len;
        }
        memcpy(rows[p], r->data, r->len);
        rows_len[p] = r->len;
    }
    return 0;
}

static int fetch_rows(part_rpc *pr, int handler, gather_remote_req *rq, cgnn_err *err) {
    part_rpc_scratch *s = scratch_take(pr, err);
    if (!s) return -1;
    int n = 0, rc = 0;
    for (int p = 0; p < rq->num_parts && rc == 0; p++) {
        if (rq->n[p] == 0) continue;
        dist_rpc_buf *b = &s->req[n];
        b->len = 0;
        int64_t *h = dist_rpc_buf_grow(b, (size_t)(1 + rq->n[p]) * sizeof(int64_t), err);
        if (!h) {
            rc = -1;
            break;
        }
        h[0] = rq->n[p];
        memcpy(h + 1, rq->ids[p], (size_t)rq->n[p] * sizeof(int64_t));
        s->req_ptr[n] = b->data;
        s->req_len[n] = b->len;
        s->peers[n] = part_rpc_peer(pr, p);
        s->parts[n++] = p;
    }
    if (rc == 0) rc = call_keep_rows(pr, s, handler, n, rq->rows, rq->rows_cap, rq->rows_len, err);
    scratch_give(pr, s);
    return rc;
}

static int fetch_feat(void *ctx, gather_remote_req *rq, cgnn_err *err) { return fetch_rows(ctx, PART_RPC_FEAT, rq, err); }
static int fetch_emb(void *ctx, gather_remote_req *rq, cgnn_err *err) { return fetch_rows(ctx, PART_RPC_EMB, rq, err); }
static int fetch_act(void *ctx, gather_remote_req *rq, cgnn_err *err) { return fetch_rows(ctx, PART_RPC_ACT, rq, err); }

/* ---- typed graphs ----------------------------------------------------------------------- */

#define TPICK_HEADER 4 /* int64s: hop, key, replace, nseg; then per segment: etype, fanout, n, ids */
#define TFEAT_HEADER 1 /* int64s: nseg; then per segment: node type, n, ids */

/* Checks a request of `words` int64s made of nseg segments [a, b, n, n ids] after `head` words
 * (seg_words: the 2 or 3 words before n's ids, n included); returns the total of the n, or -1. */
static int64_t segments_total(const int64_t *h, size_t words, size_t head, int64_t nseg, int seg_words) {
    if (nseg < 0 || nseg > MINIBATCH_MAX_EDGE_TYPES) return -1;
    size_t at = head;
    int64_t total = 0;
    for (int64_t k = 0; k < nseg; k++) {
        if (at + (size_t)seg_words > words) return -1;
        const int64_t n = h[at + (size_t)seg_words - 1];
        if (n < 0 || (uint64_t)n > words - at - (size_t)seg_words) return -1;
        total += n;
        at += (size_t)seg_words + (size_t)n;
    }
    return at == words ? total : -1;
}

static int handle_tpick(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    part_rpc *pr = ctx;
    (void)src;
    const int64_t *h = req;
    const size_t words = len / sizeof(int64_t);
    const int64_t total = len % sizeof(int64_t) || words < TPICK_HEADER ? -1 : segments_total(h, words, TPICK_HEADER, h[3], 3);
    if (total < 0 || h[0] < 0 || h[0] >= MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "typed sampling request of %zu bytes is malformed", len);
    part_rpc_scratch *s = scratch_take(pr, err);
    if (!s) return -1;
    int64_t *counts = dist_rpc_buf_grow(reply, (size_t)total * sizeof(int64_t), err);
    int rc = counts ? 0 : -1;
    int64_t ids = 0, c = 0;
    size_t at = TPICK_HEADER;
    for (int64_t k = 0; k < h[3] && rc == 0; k++) {
        const int64_t e = h[at], fanout = h[at + 1], n = h[at + 2];
        if (e < 0 || e >= pr->tg->num_edge_types) {
            rc = err_set(err, CGNN_ERR_INPUT, "typed sampling request: edge type %lld out of range", (long long)e);
            break;
        }
        ids = typed_sampler_pick_owned(pr->tg, pr->tpart, (int)h[0], (uint64_t)h[1], (int)h[2], (int)e, fanout,
                                       h + at + 3, n, counts + c, &s->nbrs, &s->nbr_cap, ids, s->positions, s->wscratch,
                                       err);
        if (ids < 0) rc = -1;
        c += n;
        at += 3 + (size_t)n;
    }
    /* counts was written in full before the reply grows again */
    if (rc == 0) rc = dist_rpc_buf_append(reply, s->nbrs, (size_t)ids * sizeof(int64_t), err);
    scratch_give(pr, s);
    return rc;
}

static int handle_tfeat(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    part_rpc *pr = ctx;
    (void)src;
    const int64_t *h = req;
    const size_t words = len / sizeof(int64_t);
    const int64_t total = len % sizeof(int64_t) || words < TFEAT_HEADER ? -1 : segments_total(h, words, TFEAT_HEADER, h[0], 2);
    if (total < 0) return err_set(err, CGNN_ERR_INPUT, "typed feature request of %zu bytes is malformed", len);
    size_t at = TFEAT_HEADER;
    for (int64_t k = 0; k < h[0]; k++) {
        const int64_t t = h[at], n = h[at + 1];
        if (t < 0 || t >= pr->tg->num_node_types || !pr->tfeat[t])
            return err_set(err, CGNN_ERR_INPUT, "typed feature request: node type %lld has no features", (long long)t);
        const ds_feature *f = pr->tfeat[t];
        const size_t row_bytes = (size_t)f->dim * npy_dtype_size(f->array.dtype);
        if ((uint64_t)n > SIZE_MAX / row_bytes) return err_set(err, CGNN_ERR_INPUT, "typed feature request: too many rows");
        const size_t need = (size_t)n * row_bytes;
        void *dst = dist_rpc_buf_grow(reply, need, err);
        if (!dst) return -1;
        void *buf = dst;
        size_t cap = need, got = 0;
        if (gather_rows_owned(f, &pr->type_gp[t], h + at + 2, n, &buf, &cap, &got, err) != 0) return -1;
        CGNN_CHECK(buf == dst && got == need); /* large enough: never reallocated */
        at += 2 + (size_t)n;
    }
    return 0;
}

static int tpick_remote(void *ctx, typed_remote_hop *hop, cgnn_err *err) {
    part_rpc *pr = ctx;
    const int P = hop->num_parts, K = hop->num_edge_types;
    part_rpc_scratch *s = scratch_take(pr, err);
    if (!s) return -1;
    int n = 0, rc = 0;
    for (int p = 0; p < P && rc == 0; p++) {
        int64_t nseg = 0, words = TPICK_HEADER;
        for (int e = 0; e < K; e++)
            if (hop->n[p * K + e] > 0) nseg++, words += 3 + hop->n[p * K + e];
        if (nseg == 0) continue;
        dist_rpc_buf *b = &s->req[n];
        b->len = 0;
        int64_t *h = dist_rpc_buf_grow(b, (size_t)words * sizeof(int64_t), err);
        if (!h) {
            rc = -1;
            break;
        }
        h[0] = hop->hop;
        h[1] = (int64_t)hop->key;
        h[2] = hop->replace;
        h[3] = nseg;
        int64_t at = TPICK_HEADER;
        for (int e = 0; e < K; e++) {
            const int64_t m = hop->n[p * K + e];
            if (m == 0) continue;
            h[at] = e;
            h[at + 1] = hop->fanouts[e];
            h[at + 2] = m;
            memcpy(h + at + 3, hop->nodes[p * K + e], (size_t)m * sizeof(int64_t));
            at += 3 + m;
        }
        s->req_ptr[n] = b->data;
        s->req_len[n] = b->len;
        s->peers[n] = part_rpc_peer(pr, p);
        s->parts[n++] = p;
    }
    if (rc == 0 && n > 0)
        rc = dist_rpc_call_many(pr->rpc, PART_RPC_PICK, n, s->peers, s->req_ptr, s->req_len, s->resp_ptr, err);
    for (int i = 0; i < n && rc == 0; i++) {
        const int p = s->parts[i];
        int64_t m = 0;
        for (int e = 0; e < K; e++) m += hop->n[p * K + e];
        const dist_rpc_buf *r = &s->resp[i];
        if (r->len < (size_t)m * sizeof(int64_t) || r->len % sizeof(int64_t)) {
            rc = err_set(err, CGNN_ERR_INPUT, "rank %d answered a typed sampling request with %zu bytes", s->peers[i],
                         r->len);
            break;
        }
        const int64_t *counts = r->data, total = (int64_t)(r->len / sizeof(int64_t)) - m;
        int64_t c = 0, sum = 0;
        for (int e = 0; e < K; e++) { /* the segments came in edge type order */
            const int64_t me = hop->n[p * K + e];
            memcpy(hop->counts[p * K + e], counts + c, (size_t)me * sizeof(int64_t));
            c += me;
        }
        for (int64_t k = 0; k < m; k++) sum += counts[k] < 0 ? 0 : counts[k];
        if (sum != total) {
            rc = err_set(err, CGNN_ERR_INPUT, "rank %d answered %lld neighbour ids for counts summing to %lld",
                         s->peers[i], (long long)total, (long long)sum);
            break;
        }
        if (total > hop->nbr_cap[p]) {
            int64_t *g = realloc(hop->nbrs[p], (size_t)total * sizeof(int64_t));
            if (!g) {
                rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory receiving sampled neighbours");
                break;
            }
            hop->nbrs[p] = g;
            hop->nbr_cap[p] = total;
        }
        memcpy(hop->nbrs[p], counts + m, (size_t)total * sizeof(int64_t));
    }
    scratch_give(pr, s);
    return rc;
}

static int fetch_typed(void *ctx, gather_typed_req *rq, cgnn_err *err) {
    part_rpc *pr = ctx;
    const int P = rq->num_parts, T = rq->num_types;
    part_rpc_scratch *s = scratch_take(pr, err);
    if (!s) return -1;
    int n = 0, rc = 0;
    for (int p = 0; p < P && rc == 0; p++) {
        int64_t nseg = 0, words = TFEAT_HEADER;
        for (int t = 0; t < T; t++)
            if (rq->n[p * T + t] > 0) nseg++, words += 2 + rq->n[p * T + t];
        if (nseg == 0) continue;
        dist_rpc_buf *b = &s->req[n];
        b->len = 0;
        int64_t *h = dist_rpc_buf_grow(b, (size_t)words * sizeof(int64_t), err);
        if (!h) {
            rc = -1;
            break;
        }
        h[0] = nseg;
        int64_t at = TFEAT_HEADER;
        for (int t = 0; t < T; t++) {
            const int64_t m = rq->n[p * T + t];
            if (m == 0) continue;
            h[at] = t;
            h[at + 1] = m;
            memcpy(h + at + 2, rq->ids[p * T + t], (size_t)m * sizeof(int64_t));
            at += 2 + m;
        }
        s->req_ptr[n] = b->data;
        s->req_len[n] = b->len;
        s->peers[n] = part_rpc_peer(pr, p);
        s->parts[n++] = p;
    }
    if (rc == 0) rc = call_keep_rows(pr, s, PART_RPC_FEAT, n, rq->rows, rq->rows_cap, rq->rows_len, err);
    scratch_give(pr, s);
    return rc;
}

/* ---- set-up ---------------------------------------------------------------------------- */

int part_rpc_init_typed(part_rpc *pr, dist_rpc *rpc, int rank, int world, const typed_graph *g,
                        const typed_sampler_part *part, const ds_feature *const *features, cgnn_err *err) {
    memset(pr, 0, sizeof *pr);
    const int P = part->num_parts;
    if (world < P || world % P != 0)
        return err_set(err, CGNN_ERR_INPUT, "%d parts need a world of a multiple of %d ranks, not %d", P, P, world);
    pr->rpc = rpc;
    pr->rank = rank;
    pr->world = world;
    pr->num_parts = P;
    pr->tg = g;
    pr->tpart = part;
    pthread_mutex_init(&pr->mu, NULL);
    for (int t = 0; t < g->num_node_types; t++) {
        pr->tfeat[t] = features[t];
        pr->type_gp[t] = (gather_part){.num_parts = P, .part = part->part, .part_start = part->type_start[t]};
    }
    pr->tsampler = *part;
    pr->tsampler.pick_remote = tpick_remote;
    pr->tsampler.ctx = pr;
    pr->tfeat_part = (gather_typed_part){.num_parts = P,
                                         .part = part->part,
                                         .num_types = g->num_node_types,
                                         .type_start = pr->tsampler.type_start,
                                         .fetch_remote = fetch_typed,
                                         .ctx = pr};
    dist_rpc_register(rpc, PART_RPC_PICK, "sample", handle_tpick, pr);
    dist_rpc_register(rpc, PART_RPC_FEAT, "features", handle_tfeat, pr);
    return 0;
}



int part_rpc_init(part_rpc *pr, dist_rpc *rpc, int rank, int world, const csc_graph *local, const sampler_part *part,
                  const ds_feature *features, cgnn_err *err) {
    memset(pr, 0, sizeof *pr);
    if (world < part->num_parts || world % part->num_parts != 0)
        return err_set(err, CGNN_ERR_INPUT, "%d parts need a world of a multiple of %d ranks, not %d", part->num_parts,
                       part->num_parts, world);
    pr->rpc = rpc;
    pr->rank = rank;
    pr->world = world;
    pr->num_parts = part->num_parts;
    pr->local = local;
    pr->part = part;
    pr->features = features;
    pthread_mutex_init(&pr->mu, NULL);
    pr->sampler = *part;
    pr->sampler.pick_remote = pick_remote;
    pr->sampler.ctx = pr;
    pr->feat_part = (gather_part){.num_parts = part->num_parts, .part = part->part, .part_start = part->part_start,
                                  .fetch_remote = fetch_feat, .ctx = pr};
    pr->emb_part = pr->feat_part;
    pr->emb_part.fetch_remote = fetch_emb;
    pr->act_part = pr->feat_part;
    pr->act_part.fetch_remote = fetch_act;
    dist_rpc_register(rpc, PART_RPC_PICK, "sample", handle_pick, pr);
    dist_rpc_register(rpc, PART_RPC_FEAT, "features", handle_feat, pr);
    dist_rpc_register(rpc, PART_RPC_EMB, "embedding", handle_emb, pr);
    dist_rpc_register(rpc, PART_RPC_ACT, "activations", handle_act, pr);
    return 0;
}

int part_rpc_init_peers(part_rpc *pr, dist_rpc *rpc, int rank, int world, const int *peers, const csc_graph *local,
                        const sampler_part *part, const ds_feature *features, cgnn_err *err) {
    /* a world of P ranks fits part_rpc_init's check; then the real world and the peers */
    if (part_rpc_init(pr, rpc, rank, part->num_parts, local, part, features, err) != 0) return -1;
    CGNN_CHECK(peers[part->part] == rank);
    pr->world = world;
    pr->peer_of_part = peers;
    return 0;
}

int part_rpc_init_typed_peers(part_rpc *pr, dist_rpc *rpc, int rank, int world, const int *peers, const typed_graph *g,
                              const typed_sampler_part *part, const ds_feature *const *features, cgnn_err *err) {
    if (part_rpc_init_typed(pr, rpc, rank, part->num_parts, g, part, features, err) != 0) return -1;
    CGNN_CHECK(peers[part->part] == rank);
    pr->world = world;
    pr->peer_of_part = peers;
    return 0;
}

/* A float32 (rows, dim) view of data (NULL: none). */
static void f32_view(ds_feature *v, const float *data, int64_t rows, int64_t dim) {
    memset(v, 0, sizeof *v);
    if (!data) return;
    v->array.dtype = NPY_DTYPE_FLOAT32;
    v->array.ndim = 2;
    v->array.shape[0] = rows;
    v->array.shape[1] = dim;
    v->array.count = rows * dim;
    v->array.data = (void *)data;
    v->rows = rows;
    v->dim = dim;
}

void part_rpc_set_embedding(part_rpc *pr, const embedding_table *emb) {
    pr->emb = emb;
    if (emb) f32_view(&pr->emb_view, emb->weight, emb->num_rows, emb->dim);
    else memset(&pr->emb_view, 0, sizeof pr->emb_view);
}

void part_rpc_set_rows(part_rpc *pr, const float *rows, int64_t n, int64_t dim) {
    pthread_mutex_lock(&pr->mu);
    f32_view(&pr->act_view, rows, n, dim);
    pthread_mutex_unlock(&pr->mu);
}

void part_rpc_free(part_rpc *pr) {
    if (!pr || !pr->rpc) return;
    for (int i = 0; i < pr->pool_len; i++) scratch_del(pr->pool[i]);
    free(pr->pool);
    pthread_mutex_destroy(&pr->mu);
    memset(pr, 0, sizeof *pr);
}

float *part_gather_to_root(const dist_ctx *d, int num_parts, const float *rows, int64_t n_local, int64_t dim,
                           const int64_t *orig_of_new, int64_t N) {
    const int W = d->size, root = d->rank == 0;
    int64_t *send = cgnn_calloc((size_t)(2 * W), sizeof *send), *recv_counts = send + W;
    if (d->rank < num_parts) send[0] = n_local;
    dist_alltoall_counts(d, send, recv_counts);
    float *recv = root ? cgnn_malloc((size_t)(N * dim) * sizeof(float) + 1) : NULL, *full = NULL;
    dist_alltoallv_rows(d, rows, send, recv, recv_counts, (size_t)dim * sizeof(float));
    if (root) { /* received in rank = part order: new ids ascending */
        int64_t got = 0;
        for (int r = 0; r < W; r++) got += recv_counts[r];
        CGNN_CHECK(got == N);
        full = cgnn_malloc((size_t)(N * dim) * sizeof(float) + 1);
#pragma omp parallel for schedule(static)
        for (int64_t v = 0; v < N; v++) memcpy(full + orig_of_new[v] * dim, recv + v * dim, (size_t)dim * sizeof(float));
        free(recv);
    }
    free(send);
    return full;
}
