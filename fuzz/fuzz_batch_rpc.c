/* fuzz_batch_rpc.c — libFuzzer target: server-client mode's BATCH decoders (sample/batch_rpc.h)
 * on arbitrary messages, what a hostile or corrupted peer could send.
 *
 * The first byte picks the decoder: even, batch_reply_decode (a compute rank reading a storage
 * rank's reply); odd, batch_request_decode (a storage rank reading a compute rank's request);
 * with bit 2 set, their typed versions (batch_typed_reply_decode / batch_typed_request_decode, a
 * 2-type graph of 30 + 40 nodes, edge types 0 -> 1 and 1 -> 0, type 0 float32 rows of 3 columns,
 * type 1 featureless, fanouts {3, 2} then {2, 0}, seeds {2, 30 + 5, 2, 30 + 39, 29}); bit 1 of a
 * reply's tag normalises the rows. The rest is the message. The reply is decoded against a fixed request: a 64-node graph, 2
 * layers (fanouts 4, 3), the seed list {3, 17, 3, 50, 63, 17, 0, 8}, 5 float32 feature columns,
 * into a batch with that request's worst-case capacity. The seeds (fuzz/corpus/batch_rpc/) are a
 * real packed reply and a real encoded request of that fixture (FUZZ_BATCH_RPC_DUMP=dir writes
 * them there).
 *
 * Oracle: a decoder either fails with CGNN_ERR_INPUT and a message naming the peer, or succeeds
 * with what it promises (the reply: every source index, input node id and seed row in range,
 * seeds where the request put them, finite rows; the request: ids in range, counts as sent).
 * Anything else aborts; crashes, reads past the message (ASan), UB, leaks are the sanitizers'.
 */
#include <math.h>

#include "fuzz_util.h"
#include "sample/batch_rpc.h"
#include "sample/sampler.h"
#include "sample/typed_sampler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N 64
#define F 5
#define NS 8
static const int64_t SEEDS[NS] = {3, 17, 3, 50, 63, 17, 0, 8};
static const char *WHO = "storage rank 0 (world rank 1, host h)";
static const char *FROM = "compute rank (world rank 0)";

static int ready;
static sampler_config cfg;
static minibatch mb;

/* the typed fixture */
enum { TT = 2, TK = 2, TNS = 5, TF0 = 3 };
static const int64_t TNUM[TT] = {30, 40}, TSEEDS[TNS] = {2, 30 + 5, 2, 30 + 39, 29};
static const int TSRC[TK] = {0, 1}, TDST[TK] = {1, 0};
static const int64_t TFD[TT] = {TF0, 0};
static const int TDT[TT] = {NPY_DTYPE_FLOAT32, -1};
static typed_graph tg;
static typed_sampler_config tcfg;
static minibatch tmb;

/* The typed fixture's decode target (and, with FUZZ_BATCH_RPC_DUMP, its corpus seeds). */
static void setup_typed(const char *dump) {
    cgnn_err err = {0};
    const int64_t maxdeg[TK] = {4, 4}, nedges[TK] = {4 * 40, 4 * 30};
    typed_graph_init_shape(&tg, TT, TNUM, TK, TSRC, TDST, maxdeg, nedges);
    tcfg.num_layers = 2;
    tcfg.fanouts[0][0] = 3, tcfg.fanouts[0][1] = 2, tcfg.fanouts[1][0] = 2, tcfg.fanouts[1][1] = 0;
    const int64_t max_seeds[TT] = {TNS, TNS}, width[TT] = {TF0, 4};
    minibatch_typed_capacity tcap;
    typed_sampler_capacity(&tg, &tcfg, max_seeds, width, &tcap);
    minibatch_capacity cap = {.num_layers = 2, .max_items = TNS};
    if (minibatch_alloc_typed(&tmb, &cap, &tcap, TSRC, TDST, &err) != 0) abort();
    if (!dump) return;
    csc_graph c[TK];
    const csc_graph *views[TK];
    int32_t src[TK][160], dst[TK][160];
    for (int e = 0; e < TK; e++) {
        const int64_t nd = TNUM[TDST[e]], ns = TNUM[TSRC[e]];
        for (int64_t i = 0; i < 4 * nd; i++) src[e][i] = (int32_t)((i * 7 + e) % ns), dst[e][i] = (int32_t)(i / 4);
        ds_edges ed = {NPY_DTYPE_INT32, 4 * nd, src[e], dst[e]};
        if (csc_build_range(&c[e], 0, nd, ns, &ed, 1, &err) != 0) abort();
        views[e] = &c[e];
    }
    typed_graph whole;
    typed_graph_init(&whole, TT, TNUM, TK, TSRC, TDST, views);
    typed_sampler s;
    minibatch b;
    if (minibatch_alloc_typed(&b, &cap, &tcap, TSRC, TDST, &err) != 0 || typed_sampler_init(&s, &whole, &tcfg, &tcap, &err) != 0)
        abort();
    typed_sampler_sample(&s, &b, TSEEDS, TNS, 5);
    dist_rpc_buf r = {0}, q = {0};
    void *rows[TT];
    if (batch_typed_reply_pack(&r, &b, TNS, 1, TFD, TDT, 1000, 2000, rows, &err) != 0) abort();
    for (int64_t i = 0; i < b.typed->num_nodes[0][2] * TF0; i++) ((float *)rows[0])[i] = (float)(i % 9) * 0.25f;
    const loader_remote_batch rq = {.key = 5, .feat_dim = 1, .seeds = TSEEDS, .n_seeds = TNS, .pairs = TSEEDS,
                                    .n_pairs = 2, .typed = &tcfg, .num_edge_types = TK};
    if (batch_typed_request_encode(&q, &rq, &err) != 0) abort();
    const batch_typed_expect ex = {&tg, 2, TSEEDS, TNS, 1, TFD, TDT, 0};
    batch_typed_request dq;
    if (batch_typed_reply_decode(r.data, r.len, &ex, &tmb, WHO, &err) != 0 ||
        batch_typed_request_decode(q.data, q.len, &tg, &dq, FROM, &err) != 0) {
        fprintf(stderr, "fuzz_batch_rpc: the typed corpus seeds do not decode: %s\n", err.msg);
        abort();
    }
    char path[4200];
    const uint8_t tag[2] = {4, 5};
    const dist_rpc_buf *m[2] = {&r, &q};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dump, k ? "typed_request" : "typed_reply");
        FILE *fp = fopen(path, "wb");
        if (!fp || fwrite(&tag[k], 1, 1, fp) != 1 || fwrite(m[k]->data, 1, m[k]->len, fp) != m[k]->len || fclose(fp) != 0)
            abort();
    }
    dist_rpc_buf_free(&r);
    dist_rpc_buf_free(&q);
    typed_sampler_free(&s);
    minibatch_free(&b);
    for (int e = 0; e < TK; e++) csc_free(&c[e]);
}

/* The promises of an accepted typed reply. */
static void check_typed_reply(void) {
    const minibatch_typed *ty = tmb.typed;
    int ok = 1;
    for (int t = 0; ok && t < TT; t++) {
        for (int64_t i = 0; ok && i < ty->num_nodes[t][2]; i++) ok = ty->nodes[t][i] >= 0 && ty->nodes[t][i] < TNUM[t];
        for (int h = 1; ok && h <= 2; h++) ok = ty->num_nodes[t][h] >= ty->num_nodes[t][h - 1];
    }
    for (int l = 0; ok && l < 2; l++)
        for (int e = 0; ok && e < TK; e++) {
            const sampler_block *b = &ty->blocks[l * TK + e];
            ok = b->num_dst == ty->num_nodes[TDST[e]][1 - l] && b->num_src == ty->num_nodes[TSRC[e]][2 - l] &&
                 b->indptr[0] == 0 && b->indptr[b->num_dst] == b->num_edges;
            for (int64_t i = 0; ok && i < b->num_dst; i++) ok = b->indptr[i] <= b->indptr[i + 1];
            for (int64_t k = 0; ok && k < b->num_edges; k++) ok = b->indices[k] >= 0 && b->indices[k] < b->num_src;
        }
    for (int i = 0; ok && i < TNS; i++) {
        const int t = TSEEDS[i] >= 30;
        ok = tmb.item_local[i] >= 0 && tmb.item_local[i] < ty->num_nodes[t][0] &&
             ty->nodes[t][tmb.item_local[i]] == TSEEDS[i] - (t ? 30 : 0);
    }
    for (int64_t i = 0; ok && i < ty->num_nodes[0][2]; i++)
        for (int c = 0; ok && c < TF0; c++) ok = isfinite(ty->features[0][i * ty->feat_dim[0] + c]);
    if (!ok) {
        fprintf(stderr, "an accepted typed reply broke a promise\n");
        abort();
    }
}

static void setup(void) {
    cgnn_err err = {0};
    cfg.num_layers = 2;
    cfg.fanouts[0] = 4;
    cfg.fanouts[1] = 3;
    minibatch_capacity cap;
    sampler_capacity_sized(N, 4 * N, 12, &cfg, NS, F, &cap);
    if (minibatch_alloc(&mb, &cap, &err) != 0) abort();
    const char *dump = getenv("FUZZ_BATCH_RPC_DUMP");
    setup_typed(dump);
    if (dump) { /* the corpus seeds: a real reply and a real request */
        int32_t src[4 * N], dst[4 * N];
        for (int e = 0; e < 4 * N; e++) src[e] = (e * 7 + 3) % N, dst[e] = (e * 5 + e / N) % N;
        ds_edges ed = {NPY_DTYPE_INT32, 4 * N, src, dst};
        csc_graph g;
        neighbor_sampler s;
        minibatch b;
        if (csc_build(&g, N, &ed, 1, &err) != 0 || minibatch_alloc(&b, &cap, &err) != 0 ||
            sampler_init(&s, &g, &cfg, &cap, &err) != 0 || sampler_sample(&s, &b, SEEDS, NS, 5, &err) != 0)
            abort();
        dist_rpc_buf r = {0}, q = {0};
        float *rows = batch_reply_pack(&r, &b, NS, F, NPY_DTYPE_FLOAT32, 1000, 2000, &err);
        for (int64_t i = 0; rows && i < b.num_input_nodes * F; i++) rows[i] = (float)(i % 9) * 0.25f;
        const loader_remote_batch rq = {0, 5, &cfg, 0, F, SEEDS, NS, SEEDS, 2, NULL, 0};
        if (!rows || batch_request_encode(&q, &rq, &err) != 0) abort();
        { /* the seeds must decode: else they would not reach the deep checks */
            const batch_reply_expect ex = {2, SEEDS, NS, F, NPY_DTYPE_FLOAT32, 0, N};
            batch_request dq;
            if (batch_reply_decode(r.data, r.len, &ex, &mb, WHO, &err) != 0 ||
                batch_request_decode(q.data, q.len, N, F, &dq, FROM, &err) != 0) {
                fprintf(stderr, "fuzz_batch_rpc: the corpus seeds do not decode: %s\n", err.msg);
                abort();
            }
        }
        char path[4200];
        const uint8_t tag[2] = {0, 1};
        const dist_rpc_buf *m[2] = {&r, &q};
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "%s/%s", dump, k ? "request" : "reply");
            FILE *fp = fopen(path, "wb");
            if (!fp || fwrite(&tag[k], 1, 1, fp) != 1 || fwrite(m[k]->data, 1, m[k]->len, fp) != m[k]->len ||
                fclose(fp) != 0)
                abort();
        }
        dist_rpc_buf_free(&r);
        dist_rpc_buf_free(&q);
        sampler_free(&s);
        minibatch_free(&b);
        csc_free(&g);
    }
    ready = 1;
}

static void check_refusal(const cgnn_err *err, const char *who) {
    if (err->code != CGNN_ERR_INPUT || !strstr(err->msg, who)) {
        fprintf(stderr, "refusal without CGNN_ERR_INPUT naming the peer: code %d, '%s'\n", err->code, err->msg);
        abort();
    }
}

static void check_reply(void) {
    const int L = 2;
    int ok = mb.num_input_nodes == mb.blocks[0].num_src && mb.num_seeds == mb.blocks[L - 1].num_dst;
    for (int64_t i = 0; ok && i < mb.num_input_nodes; i++) ok = mb.input_nodes[i] >= 0 && mb.input_nodes[i] < N;
    for (int l = 0; ok && l < L; l++) {
        const sampler_block *b = &mb.blocks[l];
        ok = b->num_dst <= b->num_src && b->indptr[0] == 0 && b->indptr[b->num_dst] == b->num_edges;
        for (int64_t i = 0; ok && i < b->num_dst; i++) ok = b->indptr[i] <= b->indptr[i + 1];
        for (int64_t e = 0; ok && e < b->num_edges; e++) ok = b->indices[e] >= 0 && b->indices[e] < b->num_src;
    }
    for (int i = 0; ok && i < NS; i++)
        ok = mb.item_local[i] >= 0 && mb.item_local[i] < mb.num_seeds && mb.input_nodes[mb.item_local[i]] == SEEDS[i];
    for (int64_t i = 0; ok && i < mb.num_input_nodes * F; i++) ok = isfinite(mb.features[i]);
    if (!ok) {
        fprintf(stderr, "an accepted reply broke a promise\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1) return 0;
    /* the message in a buffer of its own exact size (ASan sees a read past it); 8-aligned by malloc */
    const size_t len = size - 1;
    void *msg = malloc(len ? len : 1);
    if (!msg) abort();
    memcpy(msg, data + 1, len);
    cgnn_err err = {0};
    if (data[0] & 4) { /* typed */
        if (data[0] % 2 == 0) {
            const batch_typed_expect ex = {&tg, 2, TSEEDS, TNS, 1, TFD, TDT, data[0] & 2};
            if (batch_typed_reply_decode(msg, len, &ex, &tmb, WHO, &err) == 0) check_typed_reply();
            else check_refusal(&err, WHO);
        } else {
            batch_typed_request q;
            if (batch_typed_request_decode(msg, len, &tg, &q, FROM, &err) == 0) {
                int ok = q.n_seeds >= 1 && q.n_pairs >= 0 && q.n_pairs <= q.n_seeds && q.cfg.num_layers >= 1 &&
                         len == (size_t)(BATCH_REQ_HEADER + q.cfg.num_layers * TK + q.n_seeds + 2 * q.n_pairs) * 8;
                for (int64_t i = 0; ok && i < q.n_seeds; i++) ok = q.seeds[i] >= 0 && q.seeds[i] < 70;
                for (int64_t i = 0; ok && i < 2 * q.n_pairs; i++) ok = q.pairs[i] >= 0 && q.pairs[i] < 70;
                if (!ok) {
                    fprintf(stderr, "an accepted typed request broke a promise\n");
                    abort();
                }
            } else {
                check_refusal(&err, FROM);
            }
        }
    } else if (data[0] % 2 == 0) {
        const batch_reply_expect ex = {2, SEEDS, NS, F, NPY_DTYPE_FLOAT32, data[0] & 2, N};
        if (batch_reply_decode(msg, len, &ex, &mb, WHO, &err) == 0) check_reply();
        else check_refusal(&err, WHO);
    } else {
        batch_request q;
        if (batch_request_decode(msg, len, N, F, &q, FROM, &err) == 0) {
            int ok = q.n_seeds >= 1 && q.n_pairs >= 0 && q.n_pairs <= q.n_seeds && q.cfg.num_layers >= 1 &&
                     (q.feat_cols == 0 || q.feat_cols == F) &&
                     len == (size_t)(BATCH_REQ_HEADER + q.cfg.num_layers + q.n_seeds + 2 * q.n_pairs) * 8;
            for (int64_t i = 0; ok && i < q.n_seeds; i++) ok = q.seeds[i] >= 0 && q.seeds[i] < N;
            for (int64_t i = 0; ok && i < 2 * q.n_pairs; i++) ok = q.pairs[i] >= 0 && q.pairs[i] < N;
            if (!ok) {
                fprintf(stderr, "an accepted request broke a promise\n");
                abort();
            }
        } else {
            check_refusal(&err, FROM);
        }
    }
    free(msg);
    return 0;
}
