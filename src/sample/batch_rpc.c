/* batch_rpc.c — BATCH: whole mini-batches built by storage ranks; see batch_rpc.h. */
#include "sample/batch_rpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked.h"
#include "util/timer.h"

#define BATCH_VERSION 1
#define PAD8(n) (((n) + 7) & ~(size_t)7)

/* ---- storage side ---------------------------------------------------------------------- */

typedef struct batch_job {
    dist_rpc_token tok;
    dist_rpc_buf req;          /* the request, copied off the service thread's buffer */
    struct batch_job *next;
} batch_job;

/* One worker's state: a sampler and a batch sized for the requests seen so far (re-sized when a
 * request needs more: in practice once per loader kind), the feature scratch, the reply. */
typedef struct batch_worker {
    struct batch_server *s;
    int index;
    int have_sampler;
    sampler_config cfg;        /* what the sampler was built for */
    int64_t max_items;         /* and for how many seeds */
    neighbor_sampler sampler;
    minibatch mb;              /* blocks and input nodes only (features go straight to the reply) */
    gather_part_scratch gather;
    dist_rpc_buf reply;
    pthread_t thread;
    int started;
} batch_worker;

struct batch_server {
    const dist_ctx *world;
    dist_rpc *rpc;
    int rank;
    const csc_graph *local;
    const sampler_part *part;
    const ds_feature *feature;
    const gather_part *feat_part;
    int nworkers;
    batch_worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    batch_job *head, *tail;    /* the queue, in arrival order */
    batch_job *free_jobs;
    int stop;
    int64_t exit_after;        /* test hook: die after this many answered batches (0: never) */
    batch_server_stats stats;  /* under mu */
};

/* Reads and checks the request header; sets *cfg, the arrays and counts. */
static int parse_request(const batch_server *s, const void *req, size_t len, sampler_config *cfg, uint64_t *key,
                         int64_t *fcols, const int64_t **seeds, int64_t *n_seeds,
                         const int64_t **pairs, int64_t *n_pairs, cgnn_err *err) {
    const int64_t *h = req;
    if (len < BATCH_REQ_HEADER * sizeof(int64_t) || len % sizeof(int64_t))
        return err_set(err, CGNN_ERR_INPUT, "batch request of %zu bytes is malformed", len);
    if (h[0] != BATCH_VERSION)
        return err_set(err, CGNN_ERR_INPUT, "batch request version %lld, this storage rank speaks %d", (long long)h[0],
                       BATCH_VERSION);
    const int64_t L = h[2], ns = h[5], np = h[6];
    if (L < 1 || L > MINIBATCH_MAX_LAYERS || ns < 0 || np < 0 || h[4] < 0 || (h[4] > 0 && !s->feature))
        return err_set(err, CGNN_ERR_INPUT, "batch request: %lld layers, %lld seeds, %lld pairs, %lld feature columns%s",
                       (long long)L, (long long)ns, (long long)np, (long long)h[4],
                       s->feature ? "" : " (this graph has no features)");
    const uint64_t words = (uint64_t)(len / sizeof(int64_t));
    if ((uint64_t)BATCH_REQ_HEADER + (uint64_t)L + (uint64_t)ns + 2 * (uint64_t)np != words)
        return err_set(err, CGNN_ERR_INPUT, "batch request of %zu bytes does not hold its %lld seeds and %lld pairs", len,
                       (long long)ns, (long long)np);
    if (s->feature && h[4] > 0 && h[4] != s->feature->dim)
        return err_set(err, CGNN_ERR_INPUT, "batch request for %lld feature columns, the features have %lld",
                       (long long)h[4], (long long)s->feature->dim);
    memset(cfg, 0, sizeof *cfg);
    cfg->num_layers = (int)L;
    for (int l = 0; l < L; l++) cfg->fanouts[l] = h[BATCH_REQ_HEADER + l];
    cfg->replace = h[3] != 0;
    if (sampler_config_check(cfg, err) != 0) return err_prefix(err, "batch request: ");
    *key = (uint64_t)h[1];
    *fcols = h[4];
    *seeds = h + BATCH_REQ_HEADER + L;
    *n_seeds = ns;
    *pairs = *seeds + ns;
    *n_pairs = np;
    const int64_t N = s->part->num_nodes;
    for (int64_t i = 0; i < ns; i++)
        if ((*seeds)[i] < 0 || (*seeds)[i] >= N)
            return err_set(err, CGNN_ERR_INPUT, "batch request: seed %lld is not a node of the graph (%lld nodes)",
                           (long long)(*seeds)[i], (long long)N);
    for (int64_t i = 0; i < 2 * np; i++)
        if ((*pairs)[i] < 0 || (*pairs)[i] >= N)
            return err_set(err, CGNN_ERR_INPUT, "batch request: pair node %lld is not a node of the graph",
                           (long long)(*pairs)[i]);
    if (np > ns) return err_set(err, CGNN_ERR_INPUT, "batch request: %lld excluded pairs for %lld seeds", (long long)np,
                                (long long)ns);
    return 0;
}

static int same_cfg(const sampler_config *a, const sampler_config *b) {
    if (a->num_layers != b->num_layers || a->replace != b->replace) return 0;
    for (int l = 0; l < a->num_layers; l++)
        if (a->fanouts[l] != b->fanouts[l]) return 0;
    return 1;
}

/* The worker's sampler and batch fit cfg and n seeds (re-built when they do not). */
static int fit_worker(batch_worker *w, const sampler_config *cfg, int64_t n, cgnn_err *err) {
    if (w->have_sampler && same_cfg(&w->cfg, cfg) && n <= w->max_items) return 0;
    const batch_server *s = w->s;
    int64_t items = n > w->max_items ? n : w->max_items;
    if (!w->have_sampler || !same_cfg(&w->cfg, cfg)) items = n;
    if (items < 1) items = 1;
    sampler_free(&w->sampler);
    minibatch_free(&w->mb);
    gather_part_scratch_free(&w->gather);
    w->have_sampler = 0;
    minibatch_capacity cap;
    sampler_capacity_sized(s->part->num_nodes, s->part->num_edges, s->part->max_in_degree, cfg, items, 0, &cap);
    if (minibatch_alloc(&w->mb, &cap, err) != 0) return -1;
    if (sampler_init_part(&w->sampler, s->local, s->part, cfg, &cap, err) != 0) return -1;
    if (s->feat_part && gather_part_scratch_init(&w->gather, s->feat_part->num_parts, cap.max_nodes[cfg->num_layers],
                                                 err) != 0)
        return -1;
    w->cfg = *cfg;
    w->max_items = items;
    w->have_sampler = 1;
    return 0;
}

/* Builds the batch of one request into w->reply. Returns 0 or -1 with *err. */
static int build_batch(batch_worker *w, const void *req, size_t len, cgnn_err *err) {
    batch_server *s = w->s;
    sampler_config cfg;
    uint64_t key = 0;
    int64_t F = 0, n_seeds = 0, n_pairs = 0;
    const int64_t *seeds = NULL, *pairs = NULL;
    if (parse_request(s, req, len, &cfg, &key, &F, &seeds, &n_seeds, &pairs, &n_pairs, err) != 0) return -1;
    if (fit_worker(w, &cfg, n_seeds, err) != 0) return -1;
    const double t0 = timer_now();
    minibatch *mb = &w->mb;
    if (n_pairs > 0) sampler_exclude_edges(&w->sampler, pairs, n_pairs);
    if (sampler_sample(&w->sampler, mb, seeds, n_seeds, key, err) != 0) return -1;
    const double t1 = timer_now();
    const int L = cfg.num_layers;
    const int64_t nin = mb->num_input_nodes;
    /* the reply's size, then its parts in place */
    size_t bytes = (size_t)(BATCH_REP_HEADER + 3 * L) * sizeof(int64_t) + (size_t)nin * sizeof(int64_t);
    for (int l = 0; l < L; l++)
        bytes += (size_t)(mb->blocks[l].num_dst + 1) * sizeof(int64_t) + PAD8((size_t)mb->blocks[l].num_edges * 4);
    const size_t row_bytes = F > 0 ? (size_t)F * npy_dtype_size(s->feature->array.dtype) : 0;
    bytes += PAD8((size_t)n_seeds * 4) + PAD8((size_t)nin * row_bytes);
    dist_rpc_buf *r = &w->reply;
    r->len = 0;
    char *p = dist_rpc_buf_grow(r, bytes, err);
    if (!p) return -1;
    memset(p, 0, bytes);
    int64_t *h = (int64_t *)p;
    h[0] = L, h[1] = mb->num_seeds, h[2] = nin, h[3] = n_seeds, h[4] = F;
    h[5] = F > 0 ? (int64_t)s->feature->array.dtype : -1;
    h[6] = mb->num_sampled_edges;
    for (int l = 0; l < L; l++) {
        h[BATCH_REP_HEADER + 3 * l] = mb->blocks[l].num_dst;
        h[BATCH_REP_HEADER + 3 * l + 1] = mb->blocks[l].num_src;
        h[BATCH_REP_HEADER + 3 * l + 2] = mb->blocks[l].num_edges;
    }
    p += (size_t)(BATCH_REP_HEADER + 3 * L) * sizeof(int64_t);
    memcpy(p, mb->input_nodes, (size_t)nin * sizeof(int64_t));
    p += (size_t)nin * sizeof(int64_t);
    for (int l = 0; l < L; l++) {
        memcpy(p, mb->blocks[l].indptr, (size_t)(mb->blocks[l].num_dst + 1) * sizeof(int64_t));
        p += (size_t)(mb->blocks[l].num_dst + 1) * sizeof(int64_t);
    }
    for (int l = 0; l < L; l++) {
        memcpy(p, mb->blocks[l].indices, (size_t)mb->blocks[l].num_edges * 4);
        p += PAD8((size_t)mb->blocks[l].num_edges * 4);
    }
    memcpy(p, mb->item_local, (size_t)n_seeds * 4);
    p += PAD8((size_t)n_seeds * 4);
    /* rows in the feature's own dtype (a uint8 feature moves 1 byte an element); the compute
     * rank converts (and normalises) them exactly as a local gather does */
    if (F > 0 && gather_rows_part_raw(p, s->feature, s->feat_part, &w->gather, mb->input_nodes, nin, err) != 0) return -1;
    const double t2 = timer_now();
    h[7] = (int64_t)((t1 - t0) * 1e9);
    h[8] = (int64_t)((t2 - t1) * 1e9);
    pthread_mutex_lock(&s->mu);
    s->stats.sample_seconds += t1 - t0;
    s->stats.gather_seconds += t2 - t1;
    s->stats.input_nodes += nin;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static void *worker_main(void *arg) {
    batch_worker *w = arg;
    batch_server *s = w->s;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->head && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
        batch_job *j = s->head;
        if (!j) { /* stop, and the queue is empty */
            pthread_mutex_unlock(&s->mu);
            break;
        }
        s->head = j->next;
        if (!s->head) s->tail = NULL;
        pthread_mutex_unlock(&s->mu);
        cgnn_err e = {0};
        const int bad = build_batch(w, j->req.data, j->req.len, &e) != 0;
        cgnn_err rerr = {0};
        if (dist_rpc_reply(s->rpc, &j->tok, w->reply.data, bad ? 0 : w->reply.len, bad ? &e : NULL, &rerr) != 0)
            dist_fail_job(s->world, &rerr); /* the compute rank never took its batch: gone or stuck */
        pthread_mutex_lock(&s->mu);
        if (bad) s->stats.failed++;
        else s->stats.batches++;
        const int64_t answered = s->stats.batches;
        j->next = s->free_jobs;
        s->free_jobs = j;
        pthread_mutex_unlock(&s->mu);
        if (s->exit_after > 0 && answered >= s->exit_after) {
            fprintf(stderr, "cgnn: rank %d: CGNN_TEST_STORAGE_EXIT_AFTER: exiting abruptly after %lld batches\n",
                    s->rank, (long long)answered);
            fflush(stderr);
            _Exit(3);
        }
    }
    return NULL;
}

/* The BATCH handler (service thread): queue the request, defer the reply. */
static int handle_batch(void *ctx, int src, const void *req, size_t len, dist_rpc_buf *reply, cgnn_err *err) {
    batch_server *s = ctx;
    (void)src, (void)reply;
    pthread_mutex_lock(&s->mu);
    batch_job *j = s->free_jobs;
    if (j) s->free_jobs = j->next;
    pthread_mutex_unlock(&s->mu);
    if (!j && !(j = calloc(1, sizeof *j))) return err_set(err, CGNN_ERR_RUNTIME, "out of memory queueing a batch");
    j->req.len = 0;
    int rc = dist_rpc_buf_append(&j->req, req, len, err);
    if (rc == 0) rc = dist_rpc_defer(s->rpc, &j->tok, err);
    pthread_mutex_lock(&s->mu);
    if (rc != 0) {
        j->next = s->free_jobs;
        s->free_jobs = j;
    } else {
        j->next = NULL;
        if (s->tail) s->tail->next = j;
        else s->head = j;
        s->tail = j;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int batch_server_init(batch_server **out, const dist_ctx *world, dist_rpc *rpc, const csc_graph *local,
                      const sampler_part *part, const ds_feature *feature, const gather_part *feat_part, int nworkers,
                      cgnn_err *err) {
    const int rank = world->rank;
    *out = NULL;
    CGNN_CHECK(nworkers >= 1 && part->pick_remote);
    batch_server *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, CGNN_ERR_RUNTIME, "out of memory");
    s->world = world;
    s->rpc = rpc;
    s->rank = rank;
    s->local = local;
    s->part = part;
    s->feature = feature;
    s->feat_part = feature ? feat_part : NULL;
    s->nworkers = nworkers;
    s->workers = calloc((size_t)nworkers, sizeof *s->workers);
    if (!s->workers) {
        free(s);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory");
    }
    for (int i = 0; i < nworkers; i++) s->workers[i] = (batch_worker){.s = s, .index = i};
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    const char *ea = getenv("CGNN_TEST_STORAGE_EXIT_AFTER"), *fr = getenv("CGNN_TEST_FAULT_RANK");
    if (ea && (!fr || atoi(fr) == rank)) s->exit_after = strtoll(ea, NULL, 10);
    dist_rpc_register(rpc, BATCH_RPC_BATCH, "batch", handle_batch, s);
    *out = s;
    return 0;
}

int batch_server_start(batch_server *s, cgnn_err *err) {
    for (int i = 0; i < s->nworkers; i++) {
        if (pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]) != 0)
            return err_set(err, CGNN_ERR_RUNTIME, "cannot start batch worker thread %d", i);
        s->workers[i].started = 1;
    }
    return 0;
}

void batch_server_stop(batch_server *s) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nworkers; i++)
        if (s->workers[i].started) {
            pthread_join(s->workers[i].thread, NULL);
            s->workers[i].started = 0;
        }
}

void batch_server_stats_read(batch_server *s, batch_server_stats *out) {
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}

void batch_server_free(batch_server *s) {
    if (!s) return;
    batch_server_stop(s);
    for (int i = 0; i < s->nworkers; i++) {
        batch_worker *w = &s->workers[i];
        sampler_free(&w->sampler);
        minibatch_free(&w->mb);
        gather_part_scratch_free(&w->gather);
        dist_rpc_buf_free(&w->reply);
    }
    for (batch_job *q = s->head; q;) { /* none when stopped after the compute ranks finished */
        batch_job *n = q->next;
        dist_rpc_buf_free(&q->req);
        free(q);
        q = n;
    }
    for (batch_job *q = s->free_jobs; q;) {
        batch_job *n = q->next;
        dist_rpc_buf_free(&q->req);
        free(q);
        q = n;
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->workers);
    free(s);
}

/* ---- compute side ---------------------------------------------------------------------- */

struct batch_client_scratch {
    dist_rpc_buf req, resp;
};

int batch_client_init(batch_client *c, dist_rpc *rpc, const int *peers, const int *index, int n, int64_t num_nodes,
                      int64_t num_edges, int64_t max_in_degree, cgnn_err *err) {
    memset(c, 0, sizeof *c);
    if (n < 1 || n > BATCH_CLIENT_MAX_PEERS)
        return err_set(err, CGNN_ERR_INPUT, "a compute rank talks to 1 .. %d storage ranks, not %d",
                       BATCH_CLIENT_MAX_PEERS, n);
    c->rpc = rpc;
    c->num_peers = n;
    for (int i = 0; i < n; i++) c->peers[i] = peers[i], c->peer_index[i] = index[i];
    c->remote = (loader_remote){batch_client_build, c, num_nodes, num_edges, max_in_degree};
    pthread_mutex_init(&c->mu, NULL);
    return 0;
}

void batch_client_free(batch_client *c) {
    if (!c || !c->rpc) return;
    for (int i = 0; i < c->pool_len; i++) {
        dist_rpc_buf_free(&c->pool[i]->req);
        dist_rpc_buf_free(&c->pool[i]->resp);
        free(c->pool[i]);
    }
    free(c->pool);
    pthread_mutex_destroy(&c->mu);
    memset(c, 0, sizeof *c);
}

static batch_client_scratch *client_take(batch_client *c) {
    pthread_mutex_lock(&c->mu);
    batch_client_scratch *s = c->pool_len > 0 ? c->pool[--c->pool_len] : NULL;
    pthread_mutex_unlock(&c->mu);
    return s ? s : calloc(1, sizeof *s);
}

static void client_give(batch_client *c, batch_client_scratch *s) {
    pthread_mutex_lock(&c->mu);
    if (c->pool_len == c->pool_cap) {
        const int cap = c->pool_cap ? 2 * c->pool_cap : 8;
        batch_client_scratch **g = realloc(c->pool, (size_t)cap * sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&c->mu);
            dist_rpc_buf_free(&s->req);
            dist_rpc_buf_free(&s->resp);
            free(s);
            return;
        }
        c->pool = g;
        c->pool_cap = cap;
    }
    c->pool[c->pool_len++] = s;
    pthread_mutex_unlock(&c->mu);
}

/* Checks the reply r (from storage rank `who`) against mb's capacity and copies it in. */
static int unpack_reply(const dist_rpc_buf *r, const loader_remote_batch *rq, minibatch *mb, const char *who,
                        cgnn_err *err) {
    const int L = rq->sampler->num_layers;
    const size_t hdr = (size_t)(BATCH_REP_HEADER + 3 * L) * sizeof(int64_t);
    const int64_t *h = r->data;
    if (r->len < hdr || h[0] != L || h[3] != rq->n_seeds || h[4] != rq->feat_dim)
        return err_set(err, CGNN_ERR_RUNTIME, "%s answered a batch request with a malformed batch (%zu bytes)", who,
                       r->len);
    const int64_t ns = h[1], nin = h[2], F = h[4], dt = h[5];
    const minibatch_capacity *cap = &mb->cap;
    int ok = L == mb->num_layers && nin >= ns && ns >= 0 && nin <= cap->max_nodes[L] && F <= mb->feat_dim &&
             (F == 0 || (dt >= 0 && dt < NPY_DTYPE_COUNT));
    const size_t row_bytes = F > 0 && ok ? (size_t)F * npy_dtype_size((npy_dtype)dt) : 0;
    size_t need = hdr;
    for (int l = 0; ok && l < L; l++) {
        const int64_t nd = h[BATCH_REP_HEADER + 3 * l], nsrc = h[BATCH_REP_HEADER + 3 * l + 1],
                      ne = h[BATCH_REP_HEADER + 3 * l + 2];
        /* block l consumes hop L-1-l: dst = nodes after L-1-l hops, src = after L-l hops */
        ok = nd >= 0 && nsrc >= nd && ne >= 0 && nd <= cap->max_nodes[L - 1 - l] && nsrc <= cap->max_nodes[L - l] &&
             ne <= cap->max_edges[L - 1 - l] && (l == 0 ? nsrc == nin : nsrc == h[BATCH_REP_HEADER + 3 * (l - 1)]) &&
             (l < L - 1 || nd == ns);
        if (ok) need += (size_t)(nd + 1) * sizeof(int64_t) + PAD8((size_t)ne * 4);
    }
    if (ok) need += (size_t)nin * sizeof(int64_t) + PAD8((size_t)rq->n_seeds * 4) + PAD8((size_t)nin * row_bytes);
    if (!ok || r->len != need)
        return err_set(err, CGNN_ERR_RUNTIME, "%s answered a batch that does not fit this batch's capacity or size "
                       "(%lld input nodes, %zu bytes)", who, (long long)nin, r->len);
    const char *p = (const char *)r->data + hdr;
    memcpy(mb->input_nodes, p, (size_t)nin * sizeof(int64_t));
    p += (size_t)nin * sizeof(int64_t);
    for (int l = 0; l < L; l++) {
        sampler_block *b = &mb->blocks[l];
        b->num_dst = h[BATCH_REP_HEADER + 3 * l];
        b->num_src = h[BATCH_REP_HEADER + 3 * l + 1];
        b->num_edges = h[BATCH_REP_HEADER + 3 * l + 2];
        memcpy(b->indptr, p, (size_t)(b->num_dst + 1) * sizeof(int64_t));
        p += (size_t)(b->num_dst + 1) * sizeof(int64_t);
        int bad = b->indptr[0] != 0 || b->indptr[b->num_dst] != b->num_edges;
        for (int64_t i = 0; !bad && i < b->num_dst; i++) bad = b->indptr[i + 1] < b->indptr[i];
        if (bad) return err_set(err, CGNN_ERR_RUNTIME, "%s answered a batch whose block %d is malformed", who, l);
    }
    for (int l = 0; l < L; l++) {
        sampler_block *b = &mb->blocks[l];
        memcpy(b->indices, p, (size_t)b->num_edges * 4);
        p += PAD8((size_t)b->num_edges * 4);
        for (int64_t e = 0; e < b->num_edges; e++)
            if (b->indices[e] < 0 || b->indices[e] >= b->num_src)
                return err_set(err, CGNN_ERR_RUNTIME, "%s answered a batch whose block %d has a source out of range",
                               who, l);
    }
    memcpy(mb->item_local, p, (size_t)rq->n_seeds * 4);
    p += PAD8((size_t)rq->n_seeds * 4);
    for (int64_t i = 0; i < rq->n_seeds; i++)
        if (mb->item_local[i] < 0 || mb->item_local[i] >= ns)
            return err_set(err, CGNN_ERR_RUNTIME, "%s answered a batch whose seed rows are out of range", who);
    if (F > 0) { /* converted and normalised as the loader's local gathers do */
        gather_convert_rows(mb->features, mb->feat_dim, p, (npy_dtype)dt, F, nin);
        if (rq->normalize_rows) gather_normalize_rows_strided(mb->features, nin, F, mb->feat_dim);
    }
    mb->num_seeds = ns;
    mb->num_input_nodes = nin;
    mb->num_sampled_edges = h[6];
    mb->sample_seconds = (double)h[7] * 1e-9;
    mb->gather_seconds = (double)h[8] * 1e-9;
    return 0;
}

int batch_client_build(void *ctx, const loader_remote_batch *rq, minibatch *mb, cgnn_err *err) {
    batch_client *c = ctx;
    const int k = (int)(rq->batch % c->num_peers);
    const int L = rq->sampler->num_layers;
    batch_client_scratch *s = client_take(c);
    if (!s) return err_set(err, CGNN_ERR_RUNTIME, "out of memory for a batch request");
    s->req.len = 0;
    const size_t words = (size_t)(BATCH_REQ_HEADER + L + rq->n_seeds + 2 * rq->n_pairs);
    int64_t *h = dist_rpc_buf_grow(&s->req, words * sizeof(int64_t), err);
    int rc = -1;
    char who[160];
    snprintf(who, sizeof who, "storage rank %d (world rank %d, host %s)", c->peer_index[k], c->peers[k],
             dist_rpc_host(c->rpc, c->peers[k]));
    if (h) {
        h[0] = BATCH_VERSION, h[1] = (int64_t)rq->key, h[2] = L, h[3] = rq->sampler->replace;
        h[4] = rq->feat_dim, h[5] = rq->n_seeds, h[6] = rq->n_pairs, h[7] = 0;
        for (int l = 0; l < L; l++) h[BATCH_REQ_HEADER + l] = rq->sampler->fanouts[l];
        memcpy(h + BATCH_REQ_HEADER + L, rq->seeds, (size_t)rq->n_seeds * sizeof(int64_t));
        if (rq->n_pairs > 0)
            memcpy(h + BATCH_REQ_HEADER + L + rq->n_seeds, rq->pairs, (size_t)(2 * rq->n_pairs) * sizeof(int64_t));
        rc = dist_rpc_call(c->rpc, BATCH_RPC_BATCH, c->peers[k], s->req.data, s->req.len, &s->resp, err);
        if (rc != 0) { /* the request may still be read by MPI (a time-out): leave it to the job's end */
            err_prefix(err, "graph store: a batch from %s: ", who);
            return -1;
        }
        rc = unpack_reply(&s->resp, rq, mb, who, err);
    }
    client_give(c, s);
    return rc;
}
