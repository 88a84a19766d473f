/* batch_rpc.c — BATCH: whole mini-batches built by storage ranks; see batch_rpc.h. */
#include "sample/batch_rpc.h"

#include <math.h>
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
    int src;                   /* the sender's world rank */
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
    int64_t max_edges;         /* one hop with every in-edge (embed): the edges it holds; else INT64_MAX */
    neighbor_sampler sampler;
    minibatch mb;              /* blocks and input nodes only (features go straight to the reply) */
    gather_part_scratch gather;
    /* a typed partition: its sampler, the config it was built for, the typed gather's scratch */
    typed_sampler tsampler;
    typed_sampler_config tcfg;
    gather_typed_scratch tgather;
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
    /* a typed partition (batch_server_init_typed; tg NULL otherwise) */
    const typed_graph *tg;
    const typed_sampler_part *tpart;
    const ds_feature *tfeat[MINIBATCH_MAX_NODE_TYPES];
    const gather_typed_part *tfeat_part;
    int nworkers;
    batch_worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    batch_job *head, *tail;    /* the queue, in arrival order */
    batch_job *free_jobs;
    int stop;
    int64_t exit_after;        /* test hook: die after this many answered batches (0: never) */
    int64_t corrupt_at;        /* test hook: answer this batch (1-based) with input_nodes[0] = -1 */
    batch_server_stats stats;  /* under mu */
};

/* ---- the wire format ---------------------------------------------------------------------- */

int batch_request_encode(dist_rpc_buf *b, const loader_remote_batch *rq, cgnn_err *err) {
    const int L = rq->sampler->num_layers;
    const size_t words = (size_t)(BATCH_REQ_HEADER + L + rq->n_seeds + 2 * rq->n_pairs);
    b->len = 0;
    int64_t *h = dist_rpc_buf_grow(b, words * sizeof(int64_t), err);
    if (!h) return -1;
    h[0] = BATCH_VERSION, h[1] = (int64_t)rq->key, h[2] = L, h[3] = rq->sampler->replace;
    h[4] = rq->feat_dim, h[5] = rq->n_seeds, h[6] = rq->n_pairs, h[7] = 0;
    for (int l = 0; l < L; l++) h[BATCH_REQ_HEADER + l] = rq->sampler->fanouts[l];
    if (rq->n_seeds > 0) memcpy(h + BATCH_REQ_HEADER + L, rq->seeds, (size_t)rq->n_seeds * sizeof(int64_t));
    if (rq->n_pairs > 0)
        memcpy(h + BATCH_REQ_HEADER + L + rq->n_seeds, rq->pairs, (size_t)(2 * rq->n_pairs) * sizeof(int64_t));
    return 0;
}

int batch_request_decode(const void *req, size_t len, int64_t num_nodes, int64_t feat_dim, batch_request *out,
                         const char *who, cgnn_err *err) {
    const int64_t *h = req;
    memset(out, 0, sizeof *out);
    if (len < BATCH_REQ_HEADER * sizeof(int64_t) || len % sizeof(int64_t))
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: %zu bytes (a header is %zu, the length a multiple of "
                       "8)", who, len, (size_t)BATCH_REQ_HEADER * sizeof(int64_t));
    if (h[0] != BATCH_VERSION)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: version %lld, this storage rank speaks %d", who,
                       (long long)h[0], BATCH_VERSION);
    const int64_t L = h[2], ns = h[5], np = h[6];
    if (L < 1 || L > MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: layers %lld (1 .. %d)", who, (long long)L,
                       MINIBATCH_MAX_LAYERS);
    if (h[3] != 0 && h[3] != 1)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: replace %lld (0 or 1)", who, (long long)h[3]);
    if (h[4] != 0 && h[4] != feat_dim)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: feature columns %lld, the features have %lld", who,
                       (long long)h[4], (long long)feat_dim);
    if (ns < 1 || np < 0 || np > ns)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: seeds %lld, excluded pairs %lld (seeds >= 1, "
                       "0 <= pairs <= seeds)", who, (long long)ns, (long long)np);
    if (h[7] != 0)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: reserved header word %lld (0)", who, (long long)h[7]);
    const uint64_t words = (uint64_t)(len / sizeof(int64_t));
    if ((uint64_t)BATCH_REQ_HEADER + (uint64_t)L + (uint64_t)ns + 2 * (uint64_t)np != words)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: %zu bytes do not hold its %lld fanouts, %lld seeds "
                       "and %lld pairs", who, len, (long long)L, (long long)ns, (long long)np);
    out->cfg.num_layers = (int)L;
    for (int l = 0; l < L; l++) out->cfg.fanouts[l] = h[BATCH_REQ_HEADER + l];
    out->cfg.replace = h[3] != 0;
    if (sampler_config_check(&out->cfg, err) != 0) return err_prefix(err, "batch request from %s: fanouts: ", who);
    out->key = (uint64_t)h[1];
    out->feat_cols = h[4];
    out->seeds = h + BATCH_REQ_HEADER + L;
    out->n_seeds = ns;
    out->pairs = out->seeds + ns;
    out->n_pairs = np;
    for (int64_t i = 0; i < ns; i++)
        if (out->seeds[i] < 0 || out->seeds[i] >= num_nodes)
            return err_set(err, CGNN_ERR_INPUT, "batch request from %s: seeds[%lld] = %lld is not a node of the graph "
                           "(%lld nodes)", who, (long long)i, (long long)out->seeds[i], (long long)num_nodes);
    for (int64_t i = 0; i < 2 * np; i++)
        if (out->pairs[i] < 0 || out->pairs[i] >= num_nodes)
            return err_set(err, CGNN_ERR_INPUT, "batch request from %s: pairs[%lld] = %lld is not a node of the graph "
                           "(%lld nodes)", who, (long long)i, (long long)out->pairs[i], (long long)num_nodes);
    return 0;
}

void *batch_reply_pack(dist_rpc_buf *r, const minibatch *mb, int64_t n_seeds, int64_t F, int dtype,
                       int64_t sample_ns, int64_t gather_ns, cgnn_err *err) {
    const int L = mb->num_layers;
    const int64_t nin = mb->num_input_nodes;
    size_t bytes = (size_t)(BATCH_REP_HEADER + 3 * L) * sizeof(int64_t) + (size_t)nin * sizeof(int64_t);
    for (int l = 0; l < L; l++)
        bytes += (size_t)(mb->blocks[l].num_dst + 1) * sizeof(int64_t) + PAD8((size_t)mb->blocks[l].num_edges * 4);
    const size_t row_bytes = F > 0 ? (size_t)F * npy_dtype_size((npy_dtype)dtype) : 0;
    bytes += PAD8((size_t)n_seeds * 4) + PAD8((size_t)nin * row_bytes);
    r->len = 0;
    char *p = dist_rpc_buf_grow(r, bytes, err);
    if (!p) return NULL;
    memset(p, 0, bytes);
    int64_t *h = (int64_t *)p;
    h[0] = L, h[1] = mb->num_seeds, h[2] = nin, h[3] = n_seeds, h[4] = F;
    h[5] = F > 0 ? (int64_t)dtype : -1;
    h[6] = mb->num_sampled_edges;
    h[7] = sample_ns, h[8] = gather_ns;
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
        if (mb->blocks[l].num_edges > 0) memcpy(p, mb->blocks[l].indices, (size_t)mb->blocks[l].num_edges * 4);
        p += PAD8((size_t)mb->blocks[l].num_edges * 4);
    }
    if (n_seeds > 0) memcpy(p, mb->item_local, (size_t)n_seeds * 4);
    p += PAD8((size_t)n_seeds * 4);
    return p;
}

void batch_reply_peek(const void *rep, size_t len, int num_layers, int64_t *num_input_nodes, int64_t *max_block_edges) {
    const int64_t *h = rep;
    *num_input_nodes = *max_block_edges = 0;
    if (num_layers < 1 || num_layers > MINIBATCH_MAX_LAYERS ||
        len < (size_t)(BATCH_REP_HEADER + 3 * num_layers) * sizeof(int64_t))
        return;
    *num_input_nodes = h[2];
    for (int l = 0; l < num_layers; l++)
        if (h[BATCH_REP_HEADER + 3 * l + 2] > *max_block_edges) *max_block_edges = h[BATCH_REP_HEADER + 3 * l + 2];
}

/* The reply's error: "<who> answered a batch whose <field> ..." (CGNN_ERR_INPUT). */
#define REPLY_BAD(...) err_set(err, CGNN_ERR_INPUT, __VA_ARGS__)

int batch_reply_decode(const void *rep, size_t len, const batch_reply_expect *ex, minibatch *mb, const char *who,
                       cgnn_err *err) {
    const int L = ex->num_layers;
    CGNN_CHECK(L >= 1 && L <= MINIBATCH_MAX_LAYERS && mb->num_layers == L);
    const size_t hdr = (size_t)(BATCH_REP_HEADER + 3 * L) * sizeof(int64_t);
    const int64_t *h = rep;
    if (len < hdr || len % 8)
        return REPLY_BAD("%s answered a batch of %zu bytes (its header is %zu; the length a multiple of 8)", who, len,
                         hdr);
    const minibatch_capacity *cap = &mb->cap;
    const int64_t ns = h[1], nin = h[2], F = h[4], dt = h[5];
    if (h[0] != L) return REPLY_BAD("%s answered a batch whose header says layers %lld, asked %d", who, (long long)h[0], L);
    if (h[3] != ex->n_seeds)
        return REPLY_BAD("%s answered a batch whose header says seed list %lld, asked %lld", who, (long long)h[3],
                         (long long)ex->n_seeds);
    if (F != ex->feat_dim)
        return REPLY_BAD("%s answered a batch whose header says feature columns %lld, asked %lld", who, (long long)F,
                         (long long)ex->feat_dim);
    if (F > mb->feat_dim)
        return REPLY_BAD("%s answered a batch whose feature columns %lld exceed this batch's %lld", who, (long long)F,
                         (long long)mb->feat_dim);
    if (F > 0 ? dt != ex->feat_dtype || dt < 0 || dt >= NPY_DTYPE_COUNT : dt != -1)
        return REPLY_BAD("%s answered a batch whose header says feature dtype %lld, expected %d", who, (long long)dt,
                         F > 0 ? ex->feat_dtype : -1);
    if (ns < 1 || ns > ex->n_seeds || ns > cap->max_nodes[0])
        return REPLY_BAD("%s answered a batch whose header says distinct seeds %lld (1 .. %lld)", who, (long long)ns,
                         (long long)(ex->n_seeds < cap->max_nodes[0] ? ex->n_seeds : cap->max_nodes[0]));
    if (nin < ns || nin > cap->max_nodes[L] || nin > ex->num_nodes)
        return REPLY_BAD("%s answered a batch whose header says input nodes %lld (%lld .. %lld)", who, (long long)nin,
                         (long long)ns, (long long)(cap->max_nodes[L] < ex->num_nodes ? cap->max_nodes[L] : ex->num_nodes));
    if (h[7] < 0 || h[8] < 0)
        return REPLY_BAD("%s answered a batch whose header says sample / gather times %lld / %lld ns", who,
                         (long long)h[7], (long long)h[8]);
    const size_t row_bytes = F > 0 ? (size_t)F * npy_dtype_size((npy_dtype)dt) : 0;
    size_t need = hdr;
    int64_t total_edges = 0;
    for (int l = 0; l < L; l++) {
        /* block l consumes hop L-1-l: dst = nodes after L-1-l hops, src = after L-l hops */
        const int64_t nd = h[BATCH_REP_HEADER + 3 * l], nsrc = h[BATCH_REP_HEADER + 3 * l + 1],
                      ne = h[BATCH_REP_HEADER + 3 * l + 2];
        const int64_t want_src = l == 0 ? nin : h[BATCH_REP_HEADER + 3 * (l - 1)];
        if (nsrc != want_src)
            return REPLY_BAD("%s answered a batch whose block %d has num_src %lld, expected %lld (%s)", who, l,
                             (long long)nsrc, (long long)want_src, l == 0 ? "the input nodes" : "the previous block's num_dst");
        if (nd < 1 || nd > nsrc || nd > cap->max_nodes[L - 1 - l] || (l == L - 1 && nd != ns))
            return REPLY_BAD("%s answered a batch whose block %d has num_dst %lld (1 .. %lld%s)", who, l, (long long)nd,
                             (long long)(nsrc < cap->max_nodes[L - 1 - l] ? nsrc : cap->max_nodes[L - 1 - l]),
                             l == L - 1 ? ", = the distinct seeds" : "");
        if (ne < 0 || ne > cap->max_edges[L - 1 - l])
            return REPLY_BAD("%s answered a batch whose block %d has num_edges %lld (0 .. %lld)", who, l, (long long)ne,
                             (long long)cap->max_edges[L - 1 - l]);
        need += (size_t)(nd + 1) * sizeof(int64_t) + PAD8((size_t)ne * 4);
        total_edges += ne;
    }
    if (h[6] != total_edges)
        return REPLY_BAD("%s answered a batch whose header says sampled edges %lld, its blocks hold %lld", who,
                         (long long)h[6], (long long)total_edges);
    need += (size_t)nin * sizeof(int64_t) + PAD8((size_t)ex->n_seeds * 4) + PAD8((size_t)nin * row_bytes);
    if (len != need)
        return REPLY_BAD("%s answered a batch of %zu bytes, its header describes %zu", who, len, need);
    const char *p = (const char *)rep + hdr;
    memcpy(mb->input_nodes, p, (size_t)nin * sizeof(int64_t));
    p += (size_t)nin * sizeof(int64_t);
    for (int64_t i = 0; i < nin; i++)
        if (mb->input_nodes[i] < 0 || mb->input_nodes[i] >= ex->num_nodes)
            return REPLY_BAD("%s answered a batch whose input_nodes[%lld] = %lld is not a node of the graph (%lld "
                             "nodes)", who, (long long)i, (long long)mb->input_nodes[i], (long long)ex->num_nodes);
    for (int l = 0; l < L; l++) {
        sampler_block *b = &mb->blocks[l];
        b->num_dst = h[BATCH_REP_HEADER + 3 * l];
        b->num_src = h[BATCH_REP_HEADER + 3 * l + 1];
        b->num_edges = h[BATCH_REP_HEADER + 3 * l + 2];
        memcpy(b->indptr, p, (size_t)(b->num_dst + 1) * sizeof(int64_t));
        p += (size_t)(b->num_dst + 1) * sizeof(int64_t);
        if (b->indptr[0] != 0 || b->indptr[b->num_dst] != b->num_edges)
            return REPLY_BAD("%s answered a batch whose block %d has indptr from %lld to %lld, not 0 to num_edges %lld",
                             who, l, (long long)b->indptr[0], (long long)b->indptr[b->num_dst], (long long)b->num_edges);
        for (int64_t i = 0; i < b->num_dst; i++)
            if (b->indptr[i + 1] < b->indptr[i])
                return REPLY_BAD("%s answered a batch whose block %d has indptr[%lld] = %lld > indptr[%lld] = %lld", who,
                                 l, (long long)i, (long long)b->indptr[i], (long long)(i + 1),
                                 (long long)b->indptr[i + 1]);
    }
    for (int l = 0; l < L; l++) {
        sampler_block *b = &mb->blocks[l];
        if (b->num_edges > 0) memcpy(b->indices, p, (size_t)b->num_edges * 4);
        p += PAD8((size_t)b->num_edges * 4);
        for (int64_t e = 0; e < b->num_edges; e++)
            if (b->indices[e] < 0 || b->indices[e] >= b->num_src)
                return REPLY_BAD("%s answered a batch whose block %d has indices[%lld] = %d (num_src %lld)", who, l,
                                 (long long)e, b->indices[e], (long long)b->num_src);
    }
    memcpy(mb->item_local, p, (size_t)ex->n_seeds * 4);
    p += PAD8((size_t)ex->n_seeds * 4);
    int64_t next = 0; /* the sampler numbers the distinct seeds in order of first appearance */
    for (int64_t i = 0; i < ex->n_seeds; i++) {
        const int64_t li = mb->item_local[i];
        if (li < 0 || li > next || li >= ns || mb->input_nodes[li] != ex->seeds[i])
            return REPLY_BAD("%s answered a batch whose item_local[%lld] = %lld does not name seed %lld (distinct seeds "
                             "numbered in order of first appearance, %lld of them)", who, (long long)i, (long long)li,
                             (long long)ex->seeds[i], (long long)ns);
        if (li == next) next++;
    }
    if (next != ns)
        return REPLY_BAD("%s answered a batch whose header says distinct seeds %lld, its seed list has %lld", who,
                         (long long)ns, (long long)next);
    if (F > 0) { /* converted and normalised as the loader's local gathers do */
        gather_convert_rows(mb->features, mb->feat_dim, p, (npy_dtype)dt, F, nin);
        if (dt == NPY_DTYPE_FLOAT16 || dt == NPY_DTYPE_FLOAT32 || dt == NPY_DTYPE_FLOAT64)
            for (int64_t i = 0; i < nin; i++)
                for (int64_t c = 0; c < F; c++)
                    if (!isfinite(mb->features[i * mb->feat_dim + c]))
                        return REPLY_BAD("%s answered a batch whose feature row of node %lld has a non-finite value "
                                         "in column %lld", who, (long long)mb->input_nodes[i], (long long)c);
        if (ex->normalize_rows) {
            gather_normalize_rows_strided(mb->features, nin, F, mb->feat_dim);
            for (int64_t i = 0; i < nin; i++) /* rows of denormals: 1 / L1 overflows */
                for (int64_t c = 0; c < F; c++)
                    if (!isfinite(mb->features[i * mb->feat_dim + c]))
                        return REPLY_BAD("%s answered a batch whose feature row of node %lld is not finite after "
                                         "normalisation (column %lld)", who, (long long)mb->input_nodes[i], (long long)c);
        }
    }
    mb->num_seeds = ns;
    mb->num_input_nodes = nin;
    mb->num_sampled_edges = h[6];
    mb->sample_seconds = (double)h[7] * 1e-9;
    mb->gather_seconds = (double)h[8] * 1e-9;
    return 0;
}

/* ---- the typed wire format ---------------------------------------------------------------- */

#define BATCH_VERSION_TYPED 2

int batch_typed_request_encode(dist_rpc_buf *b, const loader_remote_batch *rq, cgnn_err *err) {
    const int L = rq->typed->num_layers, K = rq->num_edge_types;
    const size_t words = (size_t)BATCH_REQ_HEADER + (size_t)L * (size_t)K + (size_t)rq->n_seeds + 2 * (size_t)rq->n_pairs;
    b->len = 0;
    int64_t *h = dist_rpc_buf_grow(b, words * sizeof(int64_t), err);
    if (!h) return -1;
    h[0] = BATCH_VERSION_TYPED, h[1] = (int64_t)rq->key, h[2] = L, h[3] = rq->typed->replace;
    h[4] = K, h[5] = rq->n_seeds, h[6] = rq->n_pairs, h[7] = rq->feat_dim > 0;
    int64_t *f = h + BATCH_REQ_HEADER;
    for (int l = 0; l < L; l++)
        for (int e = 0; e < K; e++) *f++ = rq->typed->fanouts[l][e];
    if (rq->n_seeds > 0) memcpy(f, rq->seeds, (size_t)rq->n_seeds * sizeof(int64_t));
    if (rq->n_pairs > 0) memcpy(f + rq->n_seeds, rq->pairs, (size_t)(2 * rq->n_pairs) * sizeof(int64_t));
    return 0;
}

int batch_typed_request_decode(const void *req, size_t len, const typed_graph *g, batch_typed_request *out,
                               const char *who, cgnn_err *err) {
    const int64_t *h = req;
    memset(out, 0, sizeof *out);
    if (len < BATCH_REQ_HEADER * sizeof(int64_t) || len % sizeof(int64_t))
        return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: %zu bytes (a header is %zu, the length a "
                       "multiple of 8)", who, len, (size_t)BATCH_REQ_HEADER * sizeof(int64_t));
    if (h[0] != BATCH_VERSION_TYPED)
        return err_set(err, CGNN_ERR_INPUT, "batch request from %s: version %lld, this storage rank serves a typed graph "
                       "(version %d)", who, (long long)h[0], BATCH_VERSION_TYPED);
    const int64_t L = h[2], K = h[4], ns = h[5], np = h[6];
    const uint64_t words = (uint64_t)(len / sizeof(int64_t));
    if (L < 1 || L > MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: layers %lld (1 .. %d)", who, (long long)L,
                       MINIBATCH_MAX_LAYERS);
    if (h[3] != 0 && h[3] != 1)
        return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: replace %lld (0 or 1)", who, (long long)h[3]);
    if (K != g->num_edge_types)
        return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: edge types %lld, the graph has %d", who,
                       (long long)K, g->num_edge_types);
    if (ns < 1 || np < 0 || np > ns || (uint64_t)ns > words || (uint64_t)np > words)
        return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: seeds %lld, excluded pairs %lld (seeds >= 1, "
                       "0 <= pairs <= seeds, within the message)", who, (long long)ns, (long long)np);
    if (h[7] != 0 && h[7] != 1)
        return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: features wanted %lld (0 or 1)", who,
                       (long long)h[7]);
    if ((uint64_t)BATCH_REQ_HEADER + (uint64_t)(L * K) + (uint64_t)ns + 2 * (uint64_t)np != words)
        return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: %zu bytes do not hold its %lld x %lld fanouts, "
                       "%lld seeds and %lld pairs", who, len, (long long)L, (long long)K, (long long)ns, (long long)np);
    out->cfg.num_layers = (int)L;
    out->cfg.replace = h[3] != 0;
    const int64_t *f = h + BATCH_REQ_HEADER;
    for (int l = 0; l < L; l++)
        for (int e = 0; e < K; e++) out->cfg.fanouts[l][e] = *f++;
    if (typed_sampler_config_check(g, &out->cfg, NULL, err) != 0)
        return err_prefix(err, "typed batch request from %s: fanouts: ", who);
    out->key = (uint64_t)h[1];
    out->want_features = h[7] != 0;
    out->seeds = f;
    out->n_seeds = ns;
    out->pairs = f + ns;
    out->n_pairs = np;
    const int64_t N = g->offset[g->num_node_types];
    for (int64_t i = 0; i < ns; i++)
        if (out->seeds[i] < 0 || out->seeds[i] >= N)
            return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: seeds[%lld] = %lld is not a node of the "
                           "graph (%lld nodes of all types)", who, (long long)i, (long long)out->seeds[i], (long long)N);
    for (int64_t i = 0; i < 2 * np; i++)
        if (out->pairs[i] < 0 || out->pairs[i] >= N)
            return err_set(err, CGNN_ERR_INPUT, "typed batch request from %s: pairs[%lld] = %lld is not a node of the "
                           "graph (%lld nodes of all types)", who, (long long)i, (long long)out->pairs[i], (long long)N);
    return 0;
}

/* Words of a typed reply's header part (header, counts, widths, block sizes). */
static size_t typed_header_words(int L, int T, int K) {
    return (size_t)BATCH_REP_HEADER + (size_t)T * (size_t)(L + 1) + 2 * (size_t)T + 3 * (size_t)L * (size_t)K;
}

int batch_typed_reply_pack(dist_rpc_buf *r, const minibatch *mb, int64_t n_seeds, int want_features,
                           const int64_t *F, const int *dtype, int64_t sample_ns, int64_t gather_ns, void **rows,
                           cgnn_err *err) {
    const minibatch_typed *ty = mb->typed;
    const int L = ty->num_layers, T = ty->num_node_types, K = ty->num_edge_types;
    size_t bytes = typed_header_words(L, T, K) * sizeof(int64_t);
    for (int t = 0; t < T; t++) {
        bytes += (size_t)ty->num_nodes[t][L] * sizeof(int64_t);
        if (F[t] > 0) bytes += PAD8((size_t)ty->num_nodes[t][L] * (size_t)F[t] * npy_dtype_size((npy_dtype)dtype[t]));
    }
    for (int b = 0; b < L * K; b++)
        bytes += (size_t)(ty->blocks[b].num_dst + 1) * sizeof(int64_t) + PAD8((size_t)ty->blocks[b].num_edges * 4);
    bytes += PAD8((size_t)n_seeds * 4);
    r->len = 0;
    char *p = dist_rpc_buf_grow(r, bytes, err);
    if (!p) return -1;
    memset(p, 0, bytes);
    int64_t *h = (int64_t *)p;
    h[0] = L, h[1] = T, h[2] = K, h[3] = n_seeds, h[4] = mb->num_seeds, h[5] = want_features != 0;
    h[6] = mb->num_sampled_edges, h[7] = sample_ns, h[8] = gather_ns;
    int64_t *w = h + BATCH_REP_HEADER;
    for (int t = 0; t < T; t++)
        for (int k = 0; k <= L; k++) *w++ = ty->num_nodes[t][k];
    for (int t = 0; t < T; t++) {
        *w++ = F[t] > 0 ? F[t] : 0;
        *w++ = F[t] > 0 ? dtype[t] : -1;
    }
    for (int b = 0; b < L * K; b++) {
        *w++ = ty->blocks[b].num_dst;
        *w++ = ty->blocks[b].num_src;
        *w++ = ty->blocks[b].num_edges;
    }
    p = (char *)w;
    for (int t = 0; t < T; t++) {
        memcpy(p, ty->nodes[t], (size_t)ty->num_nodes[t][L] * sizeof(int64_t));
        p += (size_t)ty->num_nodes[t][L] * sizeof(int64_t);
    }
    for (int b = 0; b < L * K; b++) {
        memcpy(p, ty->blocks[b].indptr, (size_t)(ty->blocks[b].num_dst + 1) * sizeof(int64_t));
        p += (size_t)(ty->blocks[b].num_dst + 1) * sizeof(int64_t);
    }
    for (int b = 0; b < L * K; b++) {
        if (ty->blocks[b].num_edges > 0) memcpy(p, ty->blocks[b].indices, (size_t)ty->blocks[b].num_edges * 4);
        p += PAD8((size_t)ty->blocks[b].num_edges * 4);
    }
    if (n_seeds > 0) memcpy(p, mb->item_local, (size_t)n_seeds * 4);
    p += PAD8((size_t)n_seeds * 4);
    for (int t = 0; t < T; t++) {
        rows[t] = F[t] > 0 ? p : NULL;
        if (F[t] > 0) p += PAD8((size_t)ty->num_nodes[t][L] * (size_t)F[t] * npy_dtype_size((npy_dtype)dtype[t]));
    }
    return 0;
}

int batch_typed_reply_decode(const void *rep, size_t len, const batch_typed_expect *ex, minibatch *mb, const char *who,
                             cgnn_err *err) {
    const typed_graph *g = ex->g;
    minibatch_typed *ty = mb->typed;
    const int L = ex->num_layers, T = g->num_node_types, K = g->num_edge_types;
    CGNN_CHECK(ty && ty->num_layers == L && ty->num_node_types == T && ty->num_edge_types == K);
    const size_t hdr = typed_header_words(L, T, K) * sizeof(int64_t);
    const int64_t *h = rep;
    if (len < hdr || len % 8)
        return REPLY_BAD("%s answered a typed batch of %zu bytes (its header is %zu; the length a multiple of 8)", who,
                         len, hdr);
    if (h[0] != L || h[1] != T || h[2] != K)
        return REPLY_BAD("%s answered a typed batch whose header says %lld layers, %lld node types, %lld edge types; "
                         "asked %d, %d, %d", who, (long long)h[0], (long long)h[1], (long long)h[2], L, T, K);
    if (h[3] != ex->n_seeds)
        return REPLY_BAD("%s answered a typed batch whose header says seed list %lld, asked %lld", who, (long long)h[3],
                         (long long)ex->n_seeds);
    if (h[5] != (ex->want_features != 0))
        return REPLY_BAD("%s answered a typed batch whose header says features %lld, asked %d", who, (long long)h[5],
                         ex->want_features != 0);
    const int64_t ns = h[4];
    if (ns < 1 || ns > ex->n_seeds)
        return REPLY_BAD("%s answered a typed batch whose header says distinct seeds %lld (1 .. %lld)", who,
                         (long long)ns, (long long)ex->n_seeds);
    if (h[7] < 0 || h[8] < 0)
        return REPLY_BAD("%s answered a typed batch whose header says sample / gather times %lld / %lld ns", who,
                         (long long)h[7], (long long)h[8]);
    const int64_t *nn = h + BATCH_REP_HEADER; /* [t * (L + 1) + k] */
    int64_t seeds_all = 0, nin = 0;
    for (int t = 0; t < T; t++) {
        for (int k = 0; k <= L; k++) {
            const int64_t v = nn[t * (L + 1) + k], lim = ty->cap.max_nodes[t][k] < g->num_nodes[t]
                                                             ? ty->cap.max_nodes[t][k] : g->num_nodes[t];
            if (v < 0 || v > lim || (k > 0 && v < nn[t * (L + 1) + k - 1]))
                return REPLY_BAD("%s answered a typed batch whose num_nodes of node type %d after %d hops is %lld "
                                 "(%lld .. %lld)", who, t, k, (long long)v,
                                 (long long)(k > 0 ? nn[t * (L + 1) + k - 1] : 0), (long long)lim);
        }
        seeds_all += nn[t * (L + 1)];
        nin += nn[t * (L + 1) + L];
    }
    if (seeds_all != ns)
        return REPLY_BAD("%s answered a typed batch whose header says distinct seeds %lld, its types' seed counts add up "
                         "to %lld", who, (long long)ns, (long long)seeds_all);
    const int64_t *ft = nn + (size_t)T * (size_t)(L + 1);
    size_t need = hdr;
    for (int t = 0; t < T; t++) {
        const int64_t Ft = ft[2 * t], dt = ft[2 * t + 1];
        const int featured = ex->want_features && ex->feat_dim[t] > 0;
        if (featured ? Ft != ex->feat_dim[t] || dt != ex->feat_dtype[t] || Ft > ty->feat_dim[t] || dt < 0 ||
                           dt >= NPY_DTYPE_COUNT
                     : Ft != 0 || dt != -1)
            return REPLY_BAD("%s answered a typed batch whose node type %d has feature columns %lld of dtype %lld, "
                             "expected %lld of %d", who, t, (long long)Ft, (long long)dt,
                             (long long)(featured ? ex->feat_dim[t] : 0), featured ? ex->feat_dtype[t] : -1);
        need += (size_t)nn[t * (L + 1) + L] * sizeof(int64_t);
        if (featured) need += PAD8((size_t)nn[t * (L + 1) + L] * (size_t)Ft * npy_dtype_size((npy_dtype)dt));
    }
    const int64_t *bs = ft + 2 * (size_t)T;
    int64_t total_edges = 0;
    for (int l = 0; l < L; l++)
        for (int e = 0; e < K; e++) {
            /* block (l, e) consumes hop L-1-l: dst = e's dst type after L-1-l hops, src = its src type after L-l */
            const int b = l * K + e, sd = g->etype_src[e], dd = g->etype_dst[e];
            const int64_t nd = bs[3 * b], nsrc = bs[3 * b + 1], ne = bs[3 * b + 2];
            if (nd != nn[dd * (L + 1) + L - 1 - l] || nsrc != nn[sd * (L + 1) + L - l])
                return REPLY_BAD("%s answered a typed batch whose block %d (layer %d, edge type %d) has num_dst %lld, "
                                 "num_src %lld; its types' counts say %lld, %lld", who, b, l, e, (long long)nd,
                                 (long long)nsrc, (long long)nn[dd * (L + 1) + L - 1 - l],
                                 (long long)nn[sd * (L + 1) + L - l]);
            if (ne < 0 || ne > ty->cap.max_edges[L - 1 - l][e])
                return REPLY_BAD("%s answered a typed batch whose block %d (layer %d, edge type %d) has num_edges %lld "
                                 "(0 .. %lld)", who, b, l, e, (long long)ne, (long long)ty->cap.max_edges[L - 1 - l][e]);
            need += (size_t)(nd + 1) * sizeof(int64_t) + PAD8((size_t)ne * 4);
            total_edges += ne;
        }
    if (h[6] != total_edges)
        return REPLY_BAD("%s answered a typed batch whose header says sampled edges %lld, its blocks hold %lld", who,
                         (long long)h[6], (long long)total_edges);
    need += PAD8((size_t)ex->n_seeds * 4);
    if (len != need) return REPLY_BAD("%s answered a typed batch of %zu bytes, its header describes %zu", who, len, need);
    const char *p = (const char *)rep + hdr;
    for (int t = 0; t < T; t++) {
        const int64_t n = nn[t * (L + 1) + L];
        for (int k = 0; k <= L; k++) ty->num_nodes[t][k] = nn[t * (L + 1) + k];
        memcpy(ty->nodes[t], p, (size_t)n * sizeof(int64_t));
        p += (size_t)n * sizeof(int64_t);
        for (int64_t i = 0; i < n; i++)
            if (ty->nodes[t][i] < 0 || ty->nodes[t][i] >= g->num_nodes[t])
                return REPLY_BAD("%s answered a typed batch whose nodes of type %d [%lld] = %lld is not a node of the "
                                 "type (%lld nodes)", who, t, (long long)i, (long long)ty->nodes[t][i],
                                 (long long)g->num_nodes[t]);
    }
    for (int b = 0; b < L * K; b++) {
        sampler_block *blk = &ty->blocks[b];
        blk->num_dst = bs[3 * b], blk->num_src = bs[3 * b + 1], blk->num_edges = bs[3 * b + 2];
        memcpy(blk->indptr, p, (size_t)(blk->num_dst + 1) * sizeof(int64_t));
        p += (size_t)(blk->num_dst + 1) * sizeof(int64_t);
        if (blk->indptr[0] != 0 || blk->indptr[blk->num_dst] != blk->num_edges)
            return REPLY_BAD("%s answered a typed batch whose block %d has indptr from %lld to %lld, not 0 to num_edges "
                             "%lld", who, b, (long long)blk->indptr[0], (long long)blk->indptr[blk->num_dst],
                             (long long)blk->num_edges);
        for (int64_t i = 0; i < blk->num_dst; i++)
            if (blk->indptr[i + 1] < blk->indptr[i])
                return REPLY_BAD("%s answered a typed batch whose block %d has indptr[%lld] = %lld > indptr[%lld] = %lld",
                                 who, b, (long long)i, (long long)blk->indptr[i], (long long)(i + 1),
                                 (long long)blk->indptr[i + 1]);
    }
    for (int b = 0; b < L * K; b++) {
        sampler_block *blk = &ty->blocks[b];
        if (blk->num_edges > 0) memcpy(blk->indices, p, (size_t)blk->num_edges * 4);
        p += PAD8((size_t)blk->num_edges * 4);
        for (int64_t e = 0; e < blk->num_edges; e++)
            if (blk->indices[e] < 0 || blk->indices[e] >= blk->num_src)
                return REPLY_BAD("%s answered a typed batch whose block %d has indices[%lld] = %d (num_src %lld)", who, b,
                                 (long long)e, blk->indices[e], (long long)blk->num_src);
    }
    memcpy(mb->item_local, p, (size_t)ex->n_seeds * 4);
    p += PAD8((size_t)ex->n_seeds * 4);
    int64_t next[MINIBATCH_MAX_NODE_TYPES] = {0}; /* per type: distinct seeds in order of first appearance */
    for (int64_t i = 0; i < ex->n_seeds; i++) {
        const int t = typed_graph_type_of(g, ex->seeds[i]);
        const int64_t li = mb->item_local[i], v = ex->seeds[i] - g->offset[t];
        if (li < 0 || li > next[t] || li >= nn[t * (L + 1)] || ty->nodes[t][li] != v)
            return REPLY_BAD("%s answered a typed batch whose item_local[%lld] = %lld does not name seed %lld (node %lld "
                             "of type %d; distinct seeds numbered per type in order of first appearance, %lld of them)",
                             who, (long long)i, (long long)li, (long long)ex->seeds[i], (long long)v, t,
                             (long long)nn[t * (L + 1)]);
        if (li == next[t]) next[t]++;
    }
    for (int t = 0; t < T; t++)
        if (next[t] != nn[t * (L + 1)])
            return REPLY_BAD("%s answered a typed batch whose node type %d has %lld distinct seeds, its seed list %lld",
                             who, t, (long long)nn[t * (L + 1)], (long long)next[t]);
    for (int t = 0; t < T; t++) {
        const int64_t Ft = ft[2 * t], n = nn[t * (L + 1) + L];
        if (Ft == 0) continue;
        const npy_dtype dt = (npy_dtype)ft[2 * t + 1];
        float *x = ty->features[t];
        const int64_t stride = ty->feat_dim[t];
        gather_convert_rows(x, stride, p, dt, Ft, n);
        p += PAD8((size_t)n * (size_t)Ft * npy_dtype_size(dt));
        for (int pass = 0; pass < 1 + (ex->normalize_rows != 0); pass++) {
            if (pass == 1) gather_normalize_rows_strided(x, n, Ft, stride);
            if (pass == 0 && dt != NPY_DTYPE_FLOAT16 && dt != NPY_DTYPE_FLOAT32 && dt != NPY_DTYPE_FLOAT64) continue;
            for (int64_t i = 0; i < n; i++)
                for (int64_t c = 0; c < Ft; c++)
                    if (!isfinite(x[i * stride + c]))
                        return REPLY_BAD("%s answered a typed batch whose feature row of node %lld of type %d has a "
                                         "non-finite value in column %lld%s", who, (long long)ty->nodes[t][i], t,
                                         (long long)c, pass ? " after normalisation" : "");
        }
    }
    mb->num_seeds = ns;
    mb->num_input_nodes = nin;
    mb->num_sampled_edges = total_edges;
    mb->sample_seconds = (double)h[7] * 1e-9;
    mb->gather_seconds = (double)h[8] * 1e-9;
    return 0;
}

/* ---- storage side (the server) ------------------------------------------------------------- */

static int same_cfg(const sampler_config *a, const sampler_config *b) {
    if (a->num_layers != b->num_layers || a->replace != b->replace) return 0;
    for (int l = 0; l < a->num_layers; l++)
        if (a->fanouts[l] != b->fanouts[l]) return 0;
    return 1;
}

/* The edges of a one-hop request with every in-edge (`cgnn embed`'s blocks): each own seed's
 * in-degree, max_in_degree for the others (their edges come through PICK); 0 for any other
 * request (the capacity then comes from the fanouts). Bounds the worker's buffers by the blocks
 * actually asked for, where the generic bound (seeds x max in-degree, up to the whole graph's
 * edges) would allocate the whole graph per worker on a graph with hubs. */
static int64_t one_hop_edges(const batch_server *s, const batch_request *rq) {
    if (rq->cfg.num_layers != 1 || rq->cfg.fanouts[0] != -1) return 0;
    const sampler_part *p = s->part;
    const int64_t lo = p->part_start[p->part], hi = p->part_start[p->part + 1];
    int64_t e = 0;
    for (int64_t i = 0; i < rq->n_seeds; i++) {
        const int64_t v = rq->seeds[i];
        e += v >= lo && v < hi ? csc_degree(s->local, v - lo) : p->max_in_degree;
    }
    return e > p->num_edges ? p->num_edges : e < 1 ? 1 : e;
}

/* The worker's sampler and batch fit cfg, n seeds and (need_edges > 0) that many one-hop edges
 * (re-built when they do not; one-hop buffers grow by half again, so a run re-sizes rarely). */
static int fit_worker(batch_worker *w, const sampler_config *cfg, int64_t n, int64_t need_edges, cgnn_err *err) {
    const int same = w->have_sampler && same_cfg(&w->cfg, cfg);
    if (same && n <= w->max_items && need_edges <= w->max_edges) return 0;
    const batch_server *s = w->s;
    int64_t items = n > w->max_items ? n : w->max_items;
    if (!same) items = n;
    if (items < 1) items = 1;
    sampler_free(&w->sampler);
    minibatch_free(&w->mb);
    gather_part_scratch_free(&w->gather);
    w->have_sampler = 0;
    minibatch_capacity cap;
    sampler_capacity_sized(s->part->num_nodes, s->part->num_edges, s->part->max_in_degree, cfg, items, 0, &cap);
    const int64_t had = same ? w->max_edges : 0;
    w->max_edges = INT64_MAX;
    if (need_edges > 0) { /* one hop, every in-edge */
        int64_t e = had != INT64_MAX && had > need_edges ? had : need_edges;
        e += e / 2;
        if (e < cap.max_edges[0]) {
            cap.max_edges[0] = e;
            cap.max_nodes[1] = cap.max_nodes[0] + e < s->part->num_nodes ? cap.max_nodes[0] + e : s->part->num_nodes;
        }
        w->max_edges = cap.max_edges[0];
    }
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

/* Builds the batch of one request (from world rank src) into w->reply. Returns 0 or -1 with *err. */
static int build_batch(batch_worker *w, int src, const void *req, size_t len, cgnn_err *err) {
    batch_server *s = w->s;
    batch_request rq;
    char who[96];
    snprintf(who, sizeof who, "compute rank (world rank %d)", src);
    if (batch_request_decode(req, len, s->part->num_nodes, s->feature ? s->feature->dim : 0, &rq, who, err) != 0) {
        fprintf(stderr, "cgnn: rank %d (storage): %s\n", s->rank, err->msg); /* and answered to the sender */
        return -1;
    }
    const sampler_config cfg = rq.cfg;
    const int64_t F = rq.feat_cols, n_seeds = rq.n_seeds;
    if (fit_worker(w, &cfg, n_seeds, one_hop_edges(s, &rq), err) != 0) return -1;
    const double t0 = timer_now();
    minibatch *mb = &w->mb;
    if (rq.n_pairs > 0) sampler_exclude_edges(&w->sampler, rq.pairs, rq.n_pairs);
    if (sampler_sample(&w->sampler, mb, rq.seeds, n_seeds, rq.key, err) != 0) return -1;
    const double t1 = timer_now();
    const int64_t nin = mb->num_input_nodes;
    char *rows = batch_reply_pack(&w->reply, mb, n_seeds, F, F > 0 ? (int)s->feature->array.dtype : -1, 0, 0, err);
    if (!rows) return -1;
    /* rows in the feature's own dtype (a uint8 feature moves 1 byte an element); the compute
     * rank converts (and normalises) them exactly as a local gather does */
    if (F > 0 && gather_rows_part_raw(rows, s->feature, s->feat_part, &w->gather, mb->input_nodes, nin, err) != 0)
        return -1;
    const double t2 = timer_now();
    int64_t *h = w->reply.data;
    h[7] = (int64_t)((t1 - t0) * 1e9);
    h[8] = (int64_t)((t2 - t1) * 1e9);
    pthread_mutex_lock(&s->mu);
    s->stats.sample_seconds += t1 - t0;
    s->stats.gather_seconds += t2 - t1;
    s->stats.input_nodes += nin;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* fit_worker on a typed partition: the typed sampler and batch fit cfg and n seeds (of any
 * types: each type's seed capacity is n). */
static int fit_worker_typed(batch_worker *w, const typed_sampler_config *cfg, int64_t n, cgnn_err *err) {
    const batch_server *s = w->s;
    const typed_graph *g = s->tg;
    const int L = cfg->num_layers, K = g->num_edge_types;
    int same = w->have_sampler && w->tcfg.num_layers == L && w->tcfg.replace == cfg->replace;
    for (int l = 0; same && l < L; l++)
        for (int e = 0; e < K; e++) same &= w->tcfg.fanouts[l][e] == cfg->fanouts[l][e];
    if (same && n <= w->max_items) return 0;
    int64_t items = same && w->max_items > n ? w->max_items : n;
    if (items < 1) items = 1;
    typed_sampler_free(&w->tsampler);
    minibatch_free(&w->mb);
    gather_typed_scratch_free(&w->tgather);
    w->have_sampler = 0;
    int64_t max_seeds[MINIBATCH_MAX_NODE_TYPES];
    for (int t = 0; t < g->num_node_types; t++) max_seeds[t] = items;
    minibatch_typed_capacity tcap;
    typed_sampler_capacity(g, cfg, max_seeds, NULL, &tcap);
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = items;
    if (minibatch_alloc_typed(&w->mb, &cap, &tcap, g->etype_src, g->etype_dst, err) != 0) return -1;
    if (typed_sampler_init_part(&w->tsampler, g, s->tpart, cfg, &tcap, err) != 0) return -1;
    if (s->tfeat_part) {
        int64_t rows = 0;
        for (int t = 0; t < g->num_node_types; t++) rows += tcap.max_nodes[t][L];
        if (gather_typed_scratch_init(&w->tgather, s->tfeat_part->num_parts, g->num_node_types, rows, err) != 0)
            return -1;
    }
    w->tcfg = *cfg;
    w->max_items = items;
    w->have_sampler = 1;
    return 0;
}

/* build_batch on a typed partition. */
static int build_typed_batch(batch_worker *w, int src, const void *req, size_t len, cgnn_err *err) {
    batch_server *s = w->s;
    const typed_graph *g = s->tg;
    batch_typed_request rq;
    char who[96];
    snprintf(who, sizeof who, "compute rank (world rank %d)", src);
    if (batch_typed_request_decode(req, len, g, &rq, who, err) != 0) {
        fprintf(stderr, "cgnn: rank %d (storage): %s\n", s->rank, err->msg); /* and answered to the sender */
        return -1;
    }
    if (fit_worker_typed(w, &rq.cfg, rq.n_seeds, err) != 0) return -1;
    const double t0 = timer_now();
    minibatch *mb = &w->mb;
    if (rq.n_pairs > 0) typed_sampler_exclude_edges(&w->tsampler, rq.pairs, rq.n_pairs);
    if (typed_sampler_sample_part(&w->tsampler, mb, rq.seeds, rq.n_seeds, rq.key, err) != 0) return -1;
    const double t1 = timer_now();
    const int T = g->num_node_types, L = rq.cfg.num_layers;
    int64_t F[MINIBATCH_MAX_NODE_TYPES], n[MINIBATCH_MAX_NODE_TYPES];
    int dtype[MINIBATCH_MAX_NODE_TYPES], any = 0;
    const ds_feature *f[MINIBATCH_MAX_NODE_TYPES];
    const int64_t *ids[MINIBATCH_MAX_NODE_TYPES];
    void *rows[MINIBATCH_MAX_NODE_TYPES];
    for (int t = 0; t < T; t++) {
        f[t] = rq.want_features ? s->tfeat[t] : NULL;
        F[t] = f[t] ? f[t]->dim : 0;
        dtype[t] = f[t] ? (int)f[t]->array.dtype : -1;
        ids[t] = mb->typed->nodes[t];
        n[t] = mb->typed->num_nodes[t][L];
        any |= f[t] != NULL;
    }
    if (batch_typed_reply_pack(&w->reply, mb, rq.n_seeds, rq.want_features, F, dtype, 0, 0, rows, err) != 0) return -1;
    /* rows in each type's own dtype; the compute rank converts (and normalises) them */
    if (any && gather_typed_rows_part_raw(rows, f, s->tfeat_part, &w->tgather, ids, n, err) != 0) return -1;
    const double t2 = timer_now();
    int64_t *h = w->reply.data;
    h[7] = (int64_t)((t1 - t0) * 1e9);
    h[8] = (int64_t)((t2 - t1) * 1e9);
    pthread_mutex_lock(&s->mu);
    s->stats.sample_seconds += t1 - t0;
    s->stats.gather_seconds += t2 - t1;
    s->stats.input_nodes += mb->num_input_nodes;
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
        const int bad = (s->tg ? build_typed_batch(w, j->src, j->req.data, j->req.len, &e)
                               : build_batch(w, j->src, j->req.data, j->req.len, &e)) != 0;
        if (!bad && s->corrupt_at > 0) {
            pthread_mutex_lock(&s->mu);
            const int hit = s->stats.batches + 1 == s->corrupt_at;
            pthread_mutex_unlock(&s->mu);
            int64_t *h = w->reply.data; /* the first input node (typed: the first node of the first type's list) */
            if (hit) h[s->tg ? typed_header_words((int)h[0], (int)h[1], (int)h[2]) : (size_t)(BATCH_REP_HEADER + 3 * h[0])] = -1;
        }
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
    (void)reply;
    pthread_mutex_lock(&s->mu);
    batch_job *j = s->free_jobs;
    if (j) s->free_jobs = j->next;
    pthread_mutex_unlock(&s->mu);
    if (!j && !(j = calloc(1, sizeof *j))) return err_set(err, CGNN_ERR_RUNTIME, "out of memory queueing a batch");
    j->req.len = 0;
    j->src = src;
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

/* The server's queue, workers and test hooks, registered on rpc; the graph is the caller's to set. */
static batch_server *server_new(const dist_ctx *world, dist_rpc *rpc, int nworkers, cgnn_err *err) {
    const int rank = world->rank;
    CGNN_CHECK(nworkers >= 1);
    batch_server *s = calloc(1, sizeof *s);
    if (!s) {
        err_set(err, CGNN_ERR_RUNTIME, "out of memory");
        return NULL;
    }
    s->world = world;
    s->rpc = rpc;
    s->rank = rank;
    s->nworkers = nworkers;
    s->workers = calloc((size_t)nworkers, sizeof *s->workers);
    if (!s->workers) {
        free(s);
        err_set(err, CGNN_ERR_RUNTIME, "out of memory");
        return NULL;
    }
    for (int i = 0; i < nworkers; i++) s->workers[i] = (batch_worker){.s = s, .index = i};
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    const char *ea = getenv("CGNN_TEST_STORAGE_EXIT_AFTER"), *fr = getenv("CGNN_TEST_FAULT_RANK");
    if (ea && (!fr || atoi(fr) == rank)) s->exit_after = strtoll(ea, NULL, 10);
    const char *cb = getenv("CGNN_TEST_CORRUPT_BATCH");
    if (cb && (!fr || atoi(fr) == rank)) s->corrupt_at = strtoll(cb, NULL, 10);
    dist_rpc_register(rpc, BATCH_RPC_BATCH, "batch", handle_batch, s);
    return s;
}

int batch_server_init(batch_server **out, const dist_ctx *world, dist_rpc *rpc, const csc_graph *local,
                      const sampler_part *part, const ds_feature *feature, const gather_part *feat_part, int nworkers,
                      cgnn_err *err) {
    CGNN_CHECK(part->pick_remote);
    batch_server *s = *out = server_new(world, rpc, nworkers, err);
    if (!s) return -1;
    s->local = local;
    s->part = part;
    s->feature = feature;
    s->feat_part = feature ? feat_part : NULL;
    return 0;
}

int batch_server_init_typed(batch_server **out, const dist_ctx *world, dist_rpc *rpc, const typed_graph *g,
                            const typed_sampler_part *part, const ds_feature *const *features,
                            const gather_typed_part *feat_part, int nworkers, cgnn_err *err) {
    CGNN_CHECK(part->pick_remote);
    batch_server *s = *out = server_new(world, rpc, nworkers, err);
    if (!s) return -1;
    s->tg = g;
    s->tpart = part;
    int featured = 0;
    for (int t = 0; t < g->num_node_types; t++) {
        s->tfeat[t] = features[t];
        featured |= features[t] != NULL;
    }
    CGNN_CHECK(!featured || feat_part);
    s->tfeat_part = featured ? feat_part : NULL;
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
        typed_sampler_free(&w->tsampler);
        minibatch_free(&w->mb);
        gather_part_scratch_free(&w->gather);
        gather_typed_scratch_free(&w->tgather);
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
                      int64_t num_edges, int64_t max_in_degree, int feat_dtype, cgnn_err *err) {
    memset(c, 0, sizeof *c);
    if (n < 1 || n > BATCH_CLIENT_MAX_PEERS)
        return err_set(err, CGNN_ERR_INPUT, "a compute rank talks to 1 .. %d storage ranks, not %d",
                       BATCH_CLIENT_MAX_PEERS, n);
    c->rpc = rpc;
    c->num_peers = n;
    c->feat_dtype = feat_dtype;
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

/* Sends rq, decodes the reply into mb; grow: re-allocate mb to fit the reply first. */
static int client_build(batch_client *c, const loader_remote_batch *rq, minibatch *mb, int grow, int64_t feat_cols,
                        cgnn_err *err) {
    const int k = (int)(rq->batch % c->num_peers);
    batch_client_scratch *s = client_take(c);
    if (!s) return err_set(err, CGNN_ERR_RUNTIME, "out of memory for a batch request");
    char who[160];
    snprintf(who, sizeof who, "storage rank %d (world rank %d, host %s)", c->peer_index[k], c->peers[k],
             dist_rpc_host(c->rpc, c->peers[k]));
    if (rq->typed) { /* a typed partition: no growing (server-client embed is homogeneous) */
        CGNN_CHECK(c->typed && !grow);
        int rc = batch_typed_request_encode(&s->req, rq, err);
        if (rc == 0 && (rc = dist_rpc_call(c->rpc, BATCH_RPC_BATCH, c->peers[k], s->req.data, s->req.len, &s->resp,
                                           err)) != 0) {
            err_prefix(err, "graph store: a batch from %s: ", who);
            return -1; /* the request may still be read by MPI (a time-out): leave it to the job's end */
        }
        const batch_typed_expect ex = {c->typed,          rq->typed->num_layers, rq->seeds,
                                       rq->n_seeds,       rq->feat_dim > 0,      c->type_feat_dim,
                                       c->type_feat_dtype, rq->normalize_rows};
        if (rc == 0) rc = batch_typed_reply_decode(s->resp.data, s->resp.len, &ex, mb, who, err);
        client_give(c, s);
        return rc;
    }
    int rc = batch_request_encode(&s->req, rq, err);
    if (rc == 0) {
        rc = dist_rpc_call(c->rpc, BATCH_RPC_BATCH, c->peers[k], s->req.data, s->req.len, &s->resp, err);
        if (rc != 0) { /* the request may still be read by MPI (a time-out): leave it to the job's end */
            err_prefix(err, "graph store: a batch from %s: ", who);
            return -1;
        }
        const int L = rq->sampler->num_layers;
        int64_t nin = 0, edges = 0;
        batch_reply_peek(s->resp.data, s->resp.len, L, &nin, &edges);
        if (grow && (!mb->input_nodes || mb->num_layers != L || rq->n_seeds > mb->cap.max_items ||
                     nin > mb->cap.max_nodes[L] || edges > mb->cap.max_edges[0])) {
            /* the whole graph bounds what is allocated; a reply past it fails the decode */
            minibatch_capacity cap;
            memset(&cap, 0, sizeof cap);
            cap.num_layers = L;
            cap.max_items = rq->n_seeds > mb->cap.max_items ? rq->n_seeds : mb->cap.max_items;
            int64_t mx = 2 * (nin > mb->cap.max_nodes[L] ? nin : mb->cap.max_nodes[L]);
            int64_t me = 2 * (edges > mb->cap.max_edges[0] ? edges : mb->cap.max_edges[0]);
            mx = mx < cap.max_items ? cap.max_items : mx > c->remote.num_nodes ? c->remote.num_nodes : mx;
            me = me < 1 ? 1 : me > c->remote.num_edges ? c->remote.num_edges : me;
            for (int h = 0; h <= L; h++) cap.max_nodes[h] = h == 0 ? cap.max_items : mx;
            for (int h = 0; h < L; h++) cap.max_edges[h] = me;
            cap.feat_dim = feat_cols;
            minibatch_free(mb);
            rc = minibatch_alloc(mb, &cap, err);
        }
        const batch_reply_expect ex = {rq->sampler->num_layers, rq->seeds, rq->n_seeds, rq->feat_dim, c->feat_dtype,
                                       rq->normalize_rows, c->remote.num_nodes};
        if (rc == 0) rc = batch_reply_decode(s->resp.data, s->resp.len, &ex, mb, who, err);
    }
    client_give(c, s);
    return rc;
}

void batch_client_set_typed(batch_client *c, const typed_graph *g, const int64_t *dims, const int *dtypes) {
    c->typed = g;
    for (int t = 0; t < g->num_node_types; t++) {
        c->type_feat_dim[t] = dims[t];
        c->type_feat_dtype[t] = dims[t] > 0 ? dtypes[t] : -1;
    }
}

int batch_client_build(void *ctx, const loader_remote_batch *rq, minibatch *mb, cgnn_err *err) {
    return client_build(ctx, rq, mb, 0, 0, err);
}

int batch_client_build_grow(batch_client *c, const loader_remote_batch *rq, minibatch *mb, int64_t feat_cols,
                            cgnn_err *err) {
    return client_build(c, rq, mb, 1, feat_cols, err);
}
