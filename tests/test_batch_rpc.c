/* test_batch_rpc.c — server-client mode's BATCH wire format (sample/batch_rpc.h) against hostile
 * bytes: a real batch (sampled on a random graph, 2 layers, duplicate seeds, float32 and uint8
 * feature rows) packed as a reply and a real request encoded, then
 *   - the round trip gives the batch back (blocks, ids, seed rows, converted rows);
 *   - every truncation and every extension is rejected;
 *   - every single-bit flip of every byte either is rejected or decodes into a batch that keeps
 *     every promise (sources, ids and seed rows in range, seeds where the request put them);
 *     flips of the size fields (the header's counts, every block's sizes) are always rejected;
 *   - targeted corruptions (an id out of range, a source index out of range, the wrong dtype, a
 *     non-finite row, a seed row that names another node, inconsistent block sizes) are
 *     rejected with a message naming the peer and the field;
 * and the same for typed batches (version 2: a 3-type, 3-edge-type graph, float32 / uint8 /
 * featureless types): round trip, every truncation, every bit flip, targeted corruptions (another
 * type or edge type count, a node past its type, counts that do not chain, a truncated segment,
 * an index out of range, widths and dtypes, a NaN row, a seed row naming another node) and
 * hostile typed requests (edge types, a seed past every type, bad fanouts, versions crossed);
 * every rejection is CGNN_ERR_INPUT with the peer's name in the message. Under the sanitized
 * build (CGNN_SANITIZE) any read past the message is an ASan report. */
#include "test.h"
#include "test_graph_util.h"

#include "sample/batch_rpc.h"
#include "sample/minibatch.h"
#include "sample/sampler.h"
#include "sample/typed_sampler.h"
#include "graph/typed_graph.h"

#define N 200
#define F 5
#define NSEEDS 8
#define PAD8(n) (((n) + 7) & ~(size_t)7)
static const char *WHO = "storage rank 1 (world rank 3, host h)";
static const int64_t SEEDS[NSEEDS] = {3, 17, 3, 50, 199, 17, 0, 88};

typedef struct fixture {
    int32_t *src, *dst;
    csc_graph g;
    sampler_config cfg;
    minibatch_capacity cap;
    neighbor_sampler s;
    minibatch mb;  /* the sampled batch */
    minibatch out; /* decoded into */
} fixture;

static void fixture_init(fixture *f) {
    memset(f, 0, sizeof *f);
    cgnn_err err = {0};
    const int64_t e = test_random_graph(N, 4, 30, 7, &f->src, &f->dst);
    ds_edges ed = test_edges(f->src, f->dst, e);
    CGNN_CHECK(csc_build(&f->g, N, &ed, 1, &err) == 0);
    f->cfg.num_layers = 2;
    f->cfg.fanouts[0] = 4;
    f->cfg.fanouts[1] = 3;
    sampler_capacity(&f->g, &f->cfg, NSEEDS, F, &f->cap);
    CGNN_CHECK(minibatch_alloc(&f->mb, &f->cap, &err) == 0 && minibatch_alloc(&f->out, &f->cap, &err) == 0);
    CGNN_CHECK(sampler_init(&f->s, &f->g, &f->cfg, &f->cap, &err) == 0);
    CGNN_CHECK(sampler_sample(&f->s, &f->mb, SEEDS, NSEEDS, 12345, &err) == 0);
}

static void fixture_free(fixture *f) {
    sampler_free(&f->s);
    minibatch_free(&f->mb);
    minibatch_free(&f->out);
    csc_free(&f->g);
    free(f->src);
    free(f->dst);
}

/* The batch's reply with rows of dtype dt (float32 or uint8): row of node v, column c = v % 7 + c. */
static void make_reply(const fixture *f, dist_rpc_buf *r, npy_dtype dt) {
    cgnn_err err = {0};
    char *rows = batch_reply_pack(r, &f->mb, NSEEDS, F, (int)dt, 11, 22, &err);
    CGNN_CHECK(rows != NULL);
    for (int64_t i = 0; i < f->mb.num_input_nodes; i++)
        for (int c = 0; c < F; c++) {
            const int64_t v = f->mb.input_nodes[i] % 7 + c;
            if (dt == NPY_DTYPE_UINT8) rows[i * F + c] = (char)v;
            else {
                const float x = (float)v;
                memcpy(rows + (i * F + c) * 4, &x, 4);
            }
        }
}

static batch_reply_expect expect(npy_dtype dt) {
    return (batch_reply_expect){2, SEEDS, NSEEDS, F, (int)dt, 0, N};
}

/* What a decoded batch must keep whatever the bytes were (the promises of batch_reply_decode). */
static int batch_sane(const minibatch *mb) {
    const int L = mb->num_layers;
    if (mb->num_input_nodes != mb->blocks[0].num_src || mb->num_seeds != mb->blocks[L - 1].num_dst) return 0;
    for (int64_t i = 0; i < mb->num_input_nodes; i++)
        if (mb->input_nodes[i] < 0 || mb->input_nodes[i] >= N) return 0;
    for (int l = 0; l < L; l++) {
        const sampler_block *b = &mb->blocks[l];
        if (b->num_dst > b->num_src || (l > 0 && b->num_src != mb->blocks[l - 1].num_dst)) return 0;
        if (b->indptr[0] != 0 || b->indptr[b->num_dst] != b->num_edges) return 0;
        for (int64_t i = 0; i < b->num_dst; i++)
            if (b->indptr[i + 1] < b->indptr[i]) return 0;
        for (int64_t e = 0; e < b->num_edges; e++)
            if (b->indices[e] < 0 || b->indices[e] >= b->num_src) return 0;
    }
    for (int i = 0; i < NSEEDS; i++)
        if (mb->item_local[i] < 0 || mb->item_local[i] >= mb->num_seeds || mb->input_nodes[mb->item_local[i]] != SEEDS[i])
            return 0;
    for (int64_t i = 0; i < mb->num_input_nodes * mb->feat_dim; i++)
        if (!isfinite(mb->features[i])) return 0;
    return 1;
}

/* A rejection as promised: -1, CGNN_ERR_INPUT, the peer named. */
static int rejected(int rc, const cgnn_err *err, const char *who) {
    return rc == -1 && err->code == CGNN_ERR_INPUT && strstr(err->msg, who) != NULL;
}

TEST(reply_round_trip) {
    fixture f;
    fixture_init(&f);
    for (int k = 0; k < 2; k++) {
        const npy_dtype dt = k ? NPY_DTYPE_UINT8 : NPY_DTYPE_FLOAT32;
        dist_rpc_buf r = {0};
        make_reply(&f, &r, dt);
        const batch_reply_expect ex = expect(dt);
        cgnn_err err = {0};
        memset(f.out.features, 0, (size_t)(f.cap.max_nodes[2] * F) * sizeof(float));
        ASSERT_EQ(batch_reply_decode(r.data, r.len, &ex, &f.out, WHO, &err), 0);
        ASSERT_EQ(f.out.num_seeds, f.mb.num_seeds);
        ASSERT_EQ(f.out.num_input_nodes, f.mb.num_input_nodes);
        ASSERT_EQ(f.out.num_sampled_edges, f.mb.num_sampled_edges);
        ASSERT(memcmp(f.out.input_nodes, f.mb.input_nodes, (size_t)f.mb.num_input_nodes * 8) == 0);
        ASSERT(memcmp(f.out.item_local, f.mb.item_local, NSEEDS * 4) == 0);
        for (int l = 0; l < 2; l++) {
            const sampler_block *a = &f.mb.blocks[l], *b = &f.out.blocks[l];
            ASSERT(a->num_dst == b->num_dst && a->num_src == b->num_src && a->num_edges == b->num_edges);
            ASSERT(memcmp(a->indptr, b->indptr, (size_t)(a->num_dst + 1) * 8) == 0);
            ASSERT(memcmp(a->indices, b->indices, (size_t)a->num_edges * 4) == 0);
        }
        for (int64_t i = 0; i < f.mb.num_input_nodes; i++)
            for (int c = 0; c < F; c++)
                ASSERT_EQ(f.out.features[i * F + c], (float)(f.mb.input_nodes[i] % 7 + c));
        ASSERT(f.out.sample_seconds > 0 && f.out.gather_seconds > f.out.sample_seconds);
        int64_t nin, maxe;
        batch_reply_peek(r.data, r.len, 2, &nin, &maxe);
        ASSERT_EQ(nin, f.mb.num_input_nodes);
        ASSERT_EQ(maxe, f.mb.blocks[0].num_edges > f.mb.blocks[1].num_edges ? f.mb.blocks[0].num_edges
                                                                               : f.mb.blocks[1].num_edges);
        dist_rpc_buf_free(&r);
    }
    fixture_free(&f);
}

TEST(reply_truncations_and_extensions) {
    fixture f;
    fixture_init(&f);
    dist_rpc_buf r = {0};
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    const batch_reply_expect ex = expect(NPY_DTYPE_FLOAT32);
    char *copy = malloc(r.len + 64);
    for (size_t n = 0; n < r.len; n++) { /* a copy of exactly n bytes: ASan sees any read past it */
        char *t = malloc(n ? n : 1);
        memcpy(t, r.data, n);
        cgnn_err err = {0};
        const int rc = batch_reply_decode(t, n, &ex, &f.out, WHO, &err);
        free(t);
        if (!rejected(rc, &err, WHO)) TEST_FAIL_("truncation to %zu of %zu bytes: rc %d, '%s'", n, r.len, rc, err.msg);
    }
    for (size_t extra = 1; extra <= 64; extra++) {
        memcpy(copy, r.data, r.len);
        memset(copy + r.len, 0, extra);
        cgnn_err err = {0};
        ASSERT(rejected(batch_reply_decode(copy, r.len + extra, &ex, &f.out, WHO, &err), &err, WHO));
    }
    free(copy);
    dist_rpc_buf_free(&r);
    fixture_free(&f);
}

TEST(reply_bit_flips) {
    fixture f;
    fixture_init(&f);
    dist_rpc_buf r = {0};
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    const batch_reply_expect ex = expect(NPY_DTYPE_FLOAT32);
    const size_t size_words = BATCH_REP_HEADER + 3 * 2; /* header + the blocks' sizes */
    char *t = malloc(r.len);
    int64_t accepted = 0, refused = 0;
    for (size_t i = 0; i < r.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(t, r.data, r.len);
            t[i] = (char)(t[i] ^ (1 << bit));
            cgnn_err err = {0};
            const int rc = batch_reply_decode(t, r.len, &ex, &f.out, WHO, &err);
            const size_t word = i / 8;
            /* every size field is checked exactly; the times only for their sign */
            const int must_refuse = word < size_words && (word != 7 && word != 8 ? 1 : (i % 8 == 7 && bit == 7));
            if (rc == 0) {
                accepted++;
                if (must_refuse) TEST_FAIL_("a flip of bit %d of byte %zu (header word %zu) was accepted", bit, i, word);
                if (!batch_sane(&f.out)) TEST_FAIL_("a flip of bit %d of byte %zu gave an inconsistent batch", bit, i);
            } else {
                refused++;
                if (!rejected(rc, &err, WHO)) TEST_FAIL_("flip of bit %d of byte %zu: rc %d, code %d, '%s'", bit, i, rc,
                                                         err.code, err.msg);
            }
        }
    fprintf(stderr, "  reply of %zu bytes: %lld flips refused, %lld accepted (within range)\n", r.len,
            (long long)refused, (long long)accepted);
    ASSERT(refused > 0 && accepted > 0);
    free(t);
    dist_rpc_buf_free(&r);
    fixture_free(&f);
}

/* Word w of the reply (the header, then the blocks' sizes, then input_nodes ...). */
static int64_t *word(dist_rpc_buf *r, size_t w) { return (int64_t *)r->data + w; }

/* Decodes r after a corruption: must be rejected with field in the message. */
static int refused_naming(const fixture *f, dist_rpc_buf *r, const batch_reply_expect *ex, const char *field) {
    cgnn_err err = {0};
    minibatch *out = (minibatch *)&f->out;
    const int rc = batch_reply_decode(r->data, r->len, ex, out, WHO, &err);
    if (!rejected(rc, &err, WHO) || !strstr(err.msg, field)) {
        fprintf(stderr, "  expected a refusal naming '%s': rc %d, '%s'\n", field, rc, err.msg);
        return 0;
    }
    return 1;
}

TEST(reply_targeted) {
    fixture f;
    fixture_init(&f);
    const batch_reply_expect ex = expect(NPY_DTYPE_FLOAT32);
    dist_rpc_buf r = {0};
    const size_t in0 = BATCH_REP_HEADER + 3 * 2; /* input_nodes[0] */
    const int64_t nin = f.mb.num_input_nodes;
    /* an input node id out of range, negative and past N */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    *word(&r, in0 + (size_t)nin - 1) = N;
    ASSERT(refused_naming(&f, &r, &ex, "input_nodes["));
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    *word(&r, in0 + (size_t)nin - 1) = -5;
    ASSERT(refused_naming(&f, &r, &ex, "input_nodes["));
    /* a seed's row names another node: swap the first two input nodes */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    const int64_t a = *word(&r, in0);
    *word(&r, in0) = *word(&r, in0 + 1);
    *word(&r, in0 + 1) = a;
    ASSERT(refused_naming(&f, &r, &ex, "item_local["));
    /* wrong dtype, wrong width, wrong layer count, wrong seed count */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    batch_reply_expect ex2 = ex;
    ex2.feat_dtype = NPY_DTYPE_FLOAT64;
    ASSERT(refused_naming(&f, &r, &ex2, "feature dtype"));
    ex2 = ex;
    ex2.feat_dim = F - 1;
    ASSERT(refused_naming(&f, &r, &ex2, "feature columns"));
    *word(&r, 4) = F - 1; /* the header says 4 columns of what was asked as 5 */
    ASSERT(refused_naming(&f, &r, &ex, "feature columns"));
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    *word(&r, 0) = 3;
    ASSERT(refused_naming(&f, &r, &ex, "layers"));
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    *word(&r, 3) = NSEEDS - 1;
    ASSERT(refused_naming(&f, &r, &ex, "seed list"));
    /* block sizes that do not chain: block 1's num_src is not block 0's num_dst */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    *word(&r, BATCH_REP_HEADER + 3 + 1) += 1;
    ASSERT(refused_naming(&f, &r, &ex, "block 1 has num_src"));
    /* the edge total disagrees with the blocks */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    *word(&r, 6) += 1;
    ASSERT(refused_naming(&f, &r, &ex, "sampled edges"));
    /* a source index out of range (block 0's first edge) and a decreasing indptr */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    size_t w = in0 + (size_t)nin + (size_t)(f.mb.blocks[0].num_dst + 1) + (size_t)(f.mb.blocks[1].num_dst + 1);
    ASSERT(f.mb.blocks[0].num_edges > 0);
    ((int32_t *)word(&r, w))[0] = (int32_t)f.mb.blocks[0].num_src;
    ASSERT(refused_naming(&f, &r, &ex, "indices[0]"));
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    int64_t *ip = word(&r, in0 + (size_t)nin);
    ASSERT(f.mb.blocks[0].num_dst >= 2);
    ip[1] = ip[2] + 1;
    ASSERT(refused_naming(&f, &r, &ex, "indptr["));
    /* a non-finite feature value (float32 +inf in the last row) */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    const float inf = INFINITY;
    memcpy((char *)r.data + r.len - 4 - (PAD8((size_t)(nin * F * 4)) - (size_t)(nin * F * 4)), &inf, 4);
    ASSERT(refused_naming(&f, &r, &ex, "non-finite"));
    /* a batch larger than this batch's capacity */
    make_reply(&f, &r, NPY_DTYPE_FLOAT32);
    *word(&r, 2) = f.cap.max_nodes[2] + 1;
    ASSERT(refused_naming(&f, &r, &ex, "input nodes"));
    dist_rpc_buf_free(&r);
    fixture_free(&f);
}

/* ---- requests --------------------------------------------------------------------------- */

static const int64_t PAIRS[4] = {3, 17, 50, 199};
static const char *FROM = "compute rank (world rank 0)";

static void make_request(const fixture *f, dist_rpc_buf *b) {
    const loader_remote_batch rq = {4, 99, &f->cfg, 0, F, SEEDS, NSEEDS, PAIRS, 2, NULL, 0};
    cgnn_err err = {0};
    CGNN_CHECK(batch_request_encode(b, &rq, &err) == 0);
}

TEST(request_round_trip_and_truncations) {
    fixture f;
    fixture_init(&f);
    dist_rpc_buf b = {0};
    make_request(&f, &b);
    batch_request q;
    cgnn_err err = {0};
    ASSERT_EQ(batch_request_decode(b.data, b.len, N, F, &q, FROM, &err), 0);
    ASSERT(q.cfg.num_layers == 2 && q.cfg.fanouts[0] == 4 && q.cfg.fanouts[1] == 3 && !q.cfg.replace);
    ASSERT(q.key == 99 && q.feat_cols == F && q.n_seeds == NSEEDS && q.n_pairs == 2);
    ASSERT(memcmp(q.seeds, SEEDS, sizeof SEEDS) == 0 && memcmp(q.pairs, PAIRS, sizeof PAIRS) == 0);
    /* a graph without features takes no feature columns; a smaller graph has no node 199 */
    ASSERT(rejected(batch_request_decode(b.data, b.len, N, 0, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "feature columns"));
    ASSERT(rejected(batch_request_decode(b.data, b.len, 150, F, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "seeds[4] = 199"));
    for (size_t n = 0; n < b.len; n++) {
        char *t = malloc(n ? n : 1);
        memcpy(t, b.data, n);
        const int rc = batch_request_decode(t, n, N, F, &q, FROM, &err);
        free(t);
        if (!rejected(rc, &err, FROM)) TEST_FAIL_("request truncated to %zu of %zu bytes: rc %d", n, b.len, rc);
    }
    dist_rpc_buf_free(&b);
    fixture_free(&f);
}

TEST(request_bit_flips) {
    fixture f;
    fixture_init(&f);
    dist_rpc_buf b = {0};
    make_request(&f, &b);
    char *t = malloc(b.len);
    int64_t accepted = 0, refused = 0;
    for (size_t i = 0; i < b.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(t, b.data, b.len);
            t[i] = (char)(t[i] ^ (1 << bit));
            batch_request q;
            cgnn_err err = {0};
            const int rc = batch_request_decode(t, b.len, N, F, &q, FROM, &err);
            const size_t w = i / 8;
            /* the counts, the version, the width and the reserved word are checked exactly;
             * replace's bit 0 is a valid change, the key any value */
            const int must_refuse = (w == 0 || w == 2 || w == 4 || w == 5 || w == 6 || w == 7) ||
                                    (w == 3 && !(i % 8 == 0 && bit == 0));
            if (rc == 0) {
                accepted++;
                if (must_refuse) TEST_FAIL_("request: a flip of bit %d of byte %zu was accepted", bit, i);
                int ok = q.n_seeds == NSEEDS && q.n_pairs == 2;
                for (int64_t k = 0; ok && k < q.n_seeds; k++) ok = q.seeds[k] >= 0 && q.seeds[k] < N;
                for (int64_t k = 0; ok && k < 2 * q.n_pairs; k++) ok = q.pairs[k] >= 0 && q.pairs[k] < N;
                for (int l = 0; ok && l < q.cfg.num_layers; l++) ok = q.cfg.fanouts[l] == -1 || q.cfg.fanouts[l] >= 1;
                if (!ok) TEST_FAIL_("request: a flip of bit %d of byte %zu decoded out of range", bit, i);
            } else {
                refused++;
                if (!rejected(rc, &err, FROM)) TEST_FAIL_("request flip %zu/%d: rc %d, '%s'", i, bit, rc, err.msg);
            }
        }
    fprintf(stderr, "  request of %zu bytes: %lld flips refused, %lld accepted\n", b.len, (long long)refused,
            (long long)accepted);
    ASSERT(refused > 0 && accepted > 0);
    free(t);
    dist_rpc_buf_free(&b);
    fixture_free(&f);
}

/* ---- typed batches (version 2) ------------------------------------------------------------
 * A typed graph of 3 node types (type 0: float32 rows of 4 columns in rows 6 wide; type 1: uint8
 * rows of 3; type 2 featureless) and 3 edge types, a typed batch sampled for seeds of two types
 * with duplicates, packed as a typed reply. */

enum { TT = 3, TK = 3, TNS = 7 };
static const int64_t TNUM[TT] = {60, 80, 20};
static const int TSRC[TK] = {0, 1, 2}, TDST[TK] = {1, 0, 1};
static const int64_t TSEEDS[TNS] = {5, 60 + 7, 5, 60 + 79, 12, 60 + 7, 0}; /* homogenised ids */
static const int64_t TF[TT] = {4, 3, 0}, TSTRIDE[TT] = {6, 3, 5};
static const int TDT[TT] = {NPY_DTYPE_FLOAT32, NPY_DTYPE_UINT8, -1};

typedef struct tfixture {
    csc_graph csc[TK];
    int32_t *src[TK], *dst[TK];
    typed_graph g;
    typed_sampler_config cfg;
    typed_sampler s;
    minibatch mb, out;
} tfixture;

static void tfixture_init(tfixture *f) {
    memset(f, 0, sizeof *f);
    const csc_graph *views[TK];
    for (int e = 0; e < TK; e++) {
        const int64_t ns = TNUM[TSRC[e]], nd = TNUM[TDST[e]];
        int64_t m = 0;
        f->src[e] = malloc((size_t)(nd * 6) * sizeof(int32_t));
        f->dst[e] = malloc((size_t)(nd * 6) * sizeof(int32_t));
        for (int64_t v = 0; v < nd; v++)
            for (int64_t k = 0; k < (v * 5 + e) % 6; k++) {
                f->src[e][m] = (int32_t)((v * 7 + k * 3) % ns);
                f->dst[e][m++] = (int32_t)v;
            }
        ds_edges ed = {NPY_DTYPE_INT32, m, f->src[e], f->dst[e]};
        cgnn_err err = {0};
        CGNN_CHECK(csc_build_range(&f->csc[e], 0, nd, ns, &ed, 1, &err) == 0);
        views[e] = &f->csc[e];
    }
    typed_graph_init(&f->g, TT, TNUM, TK, TSRC, TDST, views);
    f->cfg.num_layers = 2;
    const int64_t fan[2][TK] = {{3, 2, 2}, {2, 0, 4}};
    for (int h = 0; h < 2; h++)
        for (int e = 0; e < TK; e++) f->cfg.fanouts[h][e] = fan[h][e];
    int64_t max_seeds[TT] = {TNS, TNS, TNS};
    minibatch_typed_capacity tcap;
    typed_sampler_capacity(&f->g, &f->cfg, max_seeds, TSTRIDE, &tcap);
    minibatch_capacity cap = {.num_layers = 2, .max_items = TNS};
    cgnn_err err = {0};
    CGNN_CHECK(minibatch_alloc_typed(&f->mb, &cap, &tcap, TSRC, TDST, &err) == 0);
    CGNN_CHECK(minibatch_alloc_typed(&f->out, &cap, &tcap, TSRC, TDST, &err) == 0);
    CGNN_CHECK(typed_sampler_init(&f->s, &f->g, &f->cfg, &tcap, &err) == 0);
    typed_sampler_sample(&f->s, &f->mb, TSEEDS, TNS, 4242);
}

static void tfixture_free(tfixture *f) {
    typed_sampler_free(&f->s);
    minibatch_free(&f->mb);
    minibatch_free(&f->out);
    for (int e = 0; e < TK; e++) {
        csc_free(&f->csc[e]);
        free(f->src[e]);
        free(f->dst[e]);
    }
}

/* The value of type t's row of node v, column c. */
static float tval(int t, int64_t v, int c) { return (float)(v % 5 + c + t); }

static void make_typed_reply(const tfixture *f, dist_rpc_buf *r) {
    cgnn_err err = {0};
    void *rows[TT];
    CGNN_CHECK(batch_typed_reply_pack(r, &f->mb, TNS, 1, TF, TDT, 11, 22, rows, &err) == 0);
    CGNN_CHECK(rows[2] == NULL);
    const minibatch_typed *ty = f->mb.typed;
    for (int t = 0; t < 2; t++)
        for (int64_t i = 0; i < ty->num_nodes[t][2]; i++)
            for (int c = 0; c < TF[t]; c++) {
                const float x = tval(t, ty->nodes[t][i], c);
                if (TDT[t] == NPY_DTYPE_UINT8) ((uint8_t *)rows[t])[i * TF[t] + c] = (uint8_t)x;
                else memcpy((char *)rows[t] + (i * TF[t] + c) * 4, &x, 4);
            }
}

static batch_typed_expect texpect(const tfixture *f) {
    return (batch_typed_expect){&f->g, 2, TSEEDS, TNS, 1, TF, TDT, 0};
}

/* What a decoded typed batch must keep whatever the bytes were. */
static int typed_sane(const tfixture *f) {
    const minibatch_typed *ty = f->out.typed;
    int64_t nin = 0, ns = 0;
    for (int t = 0; t < TT; t++) {
        for (int64_t i = 0; i < ty->num_nodes[t][2]; i++)
            if (ty->nodes[t][i] < 0 || ty->nodes[t][i] >= TNUM[t]) return 0;
        for (int h = 1; h <= 2; h++)
            if (ty->num_nodes[t][h] < ty->num_nodes[t][h - 1]) return 0;
        nin += ty->num_nodes[t][2], ns += ty->num_nodes[t][0];
    }
    if (nin != f->out.num_input_nodes || ns != f->out.num_seeds) return 0;
    for (int l = 0; l < 2; l++)
        for (int e = 0; e < TK; e++) {
            const sampler_block *b = &ty->blocks[l * TK + e];
            if (b->num_dst != ty->num_nodes[TDST[e]][1 - l] || b->num_src != ty->num_nodes[TSRC[e]][2 - l]) return 0;
            if (b->indptr[0] != 0 || b->indptr[b->num_dst] != b->num_edges) return 0;
            for (int64_t i = 0; i < b->num_dst; i++)
                if (b->indptr[i + 1] < b->indptr[i]) return 0;
            for (int64_t k = 0; k < b->num_edges; k++)
                if (b->indices[k] < 0 || b->indices[k] >= b->num_src) return 0;
        }
    for (int i = 0; i < TNS; i++) {
        const int t = typed_graph_type_of(&f->g, TSEEDS[i]);
        if (f->out.item_local[i] < 0 || f->out.item_local[i] >= ty->num_nodes[t][0] ||
            ty->nodes[t][f->out.item_local[i]] != TSEEDS[i] - f->g.offset[t])
            return 0;
    }
    for (int t = 0; t < 2; t++)
        for (int64_t i = 0; i < ty->num_nodes[t][2]; i++)
            for (int c = 0; c < TF[t]; c++)
                if (!isfinite(ty->features[t][i * TSTRIDE[t] + c])) return 0;
    return 1;
}

TEST(typed_reply_round_trip) {
    tfixture f;
    tfixture_init(&f);
    dist_rpc_buf r = {0};
    make_typed_reply(&f, &r);
    const batch_typed_expect ex = texpect(&f);
    cgnn_err err = {0};
    ASSERT_EQ(batch_typed_reply_decode(r.data, r.len, &ex, &f.out, WHO, &err), 0);
    const minibatch_typed *a = f.mb.typed, *b = f.out.typed;
    ASSERT_EQ(f.out.num_seeds, f.mb.num_seeds);
    ASSERT_EQ(f.out.num_input_nodes, f.mb.num_input_nodes);
    ASSERT_EQ(f.out.num_sampled_edges, f.mb.num_sampled_edges);
    ASSERT(f.mb.num_seeds == 5 && a->num_nodes[0][0] == 3 && a->num_nodes[1][0] == 2 && a->num_nodes[2][0] == 0);
    ASSERT(a->num_nodes[2][2] > 0); /* the featureless type is reached */
    ASSERT(memcmp(f.out.item_local, f.mb.item_local, TNS * 4) == 0);
    for (int t = 0; t < TT; t++) {
        for (int h = 0; h <= 2; h++) ASSERT_EQ(b->num_nodes[t][h], a->num_nodes[t][h]);
        ASSERT(memcmp(b->nodes[t], a->nodes[t], (size_t)a->num_nodes[t][2] * 8) == 0);
    }
    for (int k = 0; k < 2 * TK; k++) {
        const sampler_block *x = &a->blocks[k], *y = &b->blocks[k];
        ASSERT(x->num_dst == y->num_dst && x->num_src == y->num_src && x->num_edges == y->num_edges);
        ASSERT(memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * 8) == 0);
        ASSERT(memcmp(x->indices, y->indices, (size_t)x->num_edges * 4) == 0);
    }
    ASSERT_EQ(a->blocks[0 * TK + 1].num_edges, 0); /* fanout 0 at hop 1 = layer 0 */
    for (int t = 0; t < 2; t++)
        for (int64_t i = 0; i < a->num_nodes[t][2]; i++)
            for (int c = 0; c < TF[t]; c++) ASSERT_EQ(b->features[t][i * TSTRIDE[t] + c], tval(t, a->nodes[t][i], c));
    ASSERT(f.out.sample_seconds > 0 && f.out.gather_seconds > f.out.sample_seconds);
    /* normalised rows: each row divided by its L1 norm, as a local gather does */
    batch_typed_expect exn = ex;
    exn.normalize_rows = 1;
    ASSERT_EQ(batch_typed_reply_decode(r.data, r.len, &exn, &f.out, WHO, &err), 0);
    float sum = 0;
    for (int c = 0; c < TF[0]; c++) sum += tval(0, a->nodes[0][0], c);
    ASSERT_EQ(b->features[0][1], tval(0, a->nodes[0][0], 1) / sum);
    /* no rows asked: none sent, none expected */
    dist_rpc_buf r0 = {0};
    void *rows[TT];
    ASSERT_EQ(batch_typed_reply_pack(&r0, &f.mb, TNS, 0, (const int64_t[TT]){0, 0, 0}, (const int[TT]){-1, -1, -1}, 1,
                                     1, rows, &err), 0);
    batch_typed_expect ex0 = ex;
    ex0.want_features = 0;
    ASSERT_EQ(batch_typed_reply_decode(r0.data, r0.len, &ex0, &f.out, WHO, &err), 0);
    ASSERT(rejected(batch_typed_reply_decode(r0.data, r0.len, &ex, &f.out, WHO, &err), &err, WHO));
    ASSERT(r0.len < r.len);
    dist_rpc_buf_free(&r0);
    dist_rpc_buf_free(&r);
    tfixture_free(&f);
}

TEST(typed_reply_truncations_and_extensions) {
    tfixture f;
    tfixture_init(&f);
    dist_rpc_buf r = {0};
    make_typed_reply(&f, &r);
    const batch_typed_expect ex = texpect(&f);
    for (size_t n = 0; n < r.len; n++) { /* exactly n bytes: ASan sees any read past them */
        char *t = malloc(n ? n : 1);
        memcpy(t, r.data, n);
        cgnn_err err = {0};
        const int rc = batch_typed_reply_decode(t, n, &ex, &f.out, WHO, &err);
        free(t);
        if (!rejected(rc, &err, WHO)) TEST_FAIL_("typed truncation to %zu of %zu bytes: rc %d, '%s'", n, r.len, rc, err.msg);
    }
    char *copy = malloc(r.len + 64);
    for (size_t extra = 1; extra <= 64; extra++) {
        memcpy(copy, r.data, r.len);
        memset(copy + r.len, 0, extra);
        cgnn_err err = {0};
        ASSERT(rejected(batch_typed_reply_decode(copy, r.len + extra, &ex, &f.out, WHO, &err), &err, WHO));
    }
    free(copy);
    dist_rpc_buf_free(&r);
    tfixture_free(&f);
}

TEST(typed_reply_bit_flips) {
    tfixture f;
    tfixture_init(&f);
    dist_rpc_buf r = {0};
    make_typed_reply(&f, &r);
    const batch_typed_expect ex = texpect(&f);
    /* the header, the per-type counts and widths, the blocks' sizes */
    const size_t size_words = BATCH_REP_HEADER + TT * 3 + 2 * TT + 3 * 2 * TK;
    char *t = malloc(r.len);
    int64_t accepted = 0, refused = 0;
    for (size_t i = 0; i < r.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(t, r.data, r.len);
            t[i] = (char)(t[i] ^ (1 << bit));
            cgnn_err err = {0};
            const int rc = batch_typed_reply_decode(t, r.len, &ex, &f.out, WHO, &err);
            const size_t word = i / 8;
            const int must_refuse = word < size_words && (word != 7 && word != 8 ? 1 : (i % 8 == 7 && bit == 7));
            if (rc == 0) {
                accepted++;
                if (must_refuse) TEST_FAIL_("typed: a flip of bit %d of byte %zu (word %zu) was accepted", bit, i, word);
                if (!typed_sane(&f)) TEST_FAIL_("typed: a flip of bit %d of byte %zu gave an inconsistent batch", bit, i);
            } else {
                refused++;
                if (!rejected(rc, &err, WHO)) TEST_FAIL_("typed flip of bit %d of byte %zu: rc %d, code %d, '%s'", bit, i,
                                                         rc, err.code, err.msg);
            }
        }
    fprintf(stderr, "  typed reply of %zu bytes: %lld flips refused, %lld accepted (within range)\n", r.len,
            (long long)refused, (long long)accepted);
    ASSERT(refused > 0 && accepted > 0);
    free(t);
    dist_rpc_buf_free(&r);
    tfixture_free(&f);
}

/* Decodes r after a corruption: rejected (CGNN_ERR_INPUT, the peer named) with field in the message. */
static int typed_refused_naming(tfixture *f, dist_rpc_buf *r, const batch_typed_expect *ex, const char *field) {
    cgnn_err err = {0};
    const int rc = batch_typed_reply_decode(r->data, r->len, ex, &f->out, WHO, &err);
    if (!rejected(rc, &err, WHO) || !strstr(err.msg, field)) {
        fprintf(stderr, "  expected a typed refusal naming '%s': rc %d, '%s'\n", field, rc, err.msg);
        return 0;
    }
    return 1;
}

TEST(typed_reply_targeted) {
    tfixture f;
    tfixture_init(&f);
    const batch_typed_expect ex = texpect(&f);
    const minibatch_typed *ty = f.mb.typed;
    dist_rpc_buf r = {0};
    const size_t nn0 = BATCH_REP_HEADER, ft0 = nn0 + TT * 3, bs0 = ft0 + 2 * TT, nodes0 = bs0 + 3 * 2 * TK;
    /* the type counts: a header naming another number of node types, edge types, layers */
    make_typed_reply(&f, &r);
    *word(&r, 1) = TT + 1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "node types"));
    make_typed_reply(&f, &r);
    *word(&r, 2) = TK - 1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "edge types"));
    /* a node of type 1 whose id is past its type (a type-0 id range would fit the homogenised space) */
    make_typed_reply(&f, &r);
    const size_t n1 = nodes0 + (size_t)ty->num_nodes[0][2]; /* type 1's first node */
    *word(&r, n1 + (size_t)ty->num_nodes[1][2] - 1) = TNUM[1];
    ASSERT(typed_refused_naming(&f, &r, &ex, "nodes of type 1"));
    make_typed_reply(&f, &r);
    *word(&r, n1) = -1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "nodes of type 1"));
    /* count mismatches: a type's count that does not chain with its blocks, distinct seeds, edges */
    make_typed_reply(&f, &r);
    *word(&r, nn0 + 2 * 3 + 1) += 1; /* type 2 after one hop: block (0, edge type 2)'s num_src disagrees */
    ASSERT(typed_refused_naming(&f, &r, &ex, "num_src"));
    make_typed_reply(&f, &r);
    *word(&r, nn0 + 0 * 3 + 2) = ty->num_nodes[0][1] - 1; /* type 0 shrinking over hops */
    ASSERT(typed_refused_naming(&f, &r, &ex, "num_nodes of node type 0"));
    make_typed_reply(&f, &r);
    *word(&r, 4) += 1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "distinct seeds"));
    make_typed_reply(&f, &r);
    *word(&r, 6) += 1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "sampled edges"));
    make_typed_reply(&f, &r);
    *word(&r, bs0 + 3 * 0 + 2) = ty->cap.max_edges[1][0] + 1; /* block (0, 0) past the capacity */
    ASSERT(typed_refused_naming(&f, &r, &ex, "num_edges"));
    /* a truncated segment: the last type's rows one word short (the length names it) */
    make_typed_reply(&f, &r);
    r.len -= 8;
    ASSERT(typed_refused_naming(&f, &r, &ex, "bytes"));
    /* widths and dtypes: another width or dtype than the storage ranks announced, rows for a
     * featureless type */
    make_typed_reply(&f, &r);
    *word(&r, ft0 + 2 * 1) = 2;
    ASSERT(typed_refused_naming(&f, &r, &ex, "node type 1 has feature columns"));
    make_typed_reply(&f, &r);
    *word(&r, ft0 + 2 * 0 + 1) = NPY_DTYPE_FLOAT64;
    ASSERT(typed_refused_naming(&f, &r, &ex, "node type 0 has feature columns"));
    make_typed_reply(&f, &r);
    *word(&r, ft0 + 2 * 2) = 1;
    *word(&r, ft0 + 2 * 2 + 1) = NPY_DTYPE_UINT8;
    ASSERT(typed_refused_naming(&f, &r, &ex, "node type 2 has feature columns"));
    /* a source index out of range: block (0, 0)'s first edge */
    make_typed_reply(&f, &r);
    size_t w = nodes0;
    for (int t = 0; t < TT; t++) w += (size_t)ty->num_nodes[t][2];
    const size_t ip0 = w;
    for (int b = 0; b < 2 * TK; b++) w += (size_t)(ty->blocks[b].num_dst + 1);
    ASSERT(ty->blocks[0].num_edges > 0);
    ((int32_t *)word(&r, w))[0] = (int32_t)ty->blocks[0].num_src;
    ASSERT(typed_refused_naming(&f, &r, &ex, "indices[0]"));
    make_typed_reply(&f, &r);
    ((int32_t *)word(&r, w))[0] = -1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "indices[0]"));
    /* indptr not from 0 */
    make_typed_reply(&f, &r);
    *word(&r, ip0) = 1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "indptr"));
    /* a seed's row names another node of its type: swap type 0's first two nodes */
    make_typed_reply(&f, &r);
    const int64_t a0 = *word(&r, nodes0);
    *word(&r, nodes0) = *word(&r, nodes0 + 1);
    *word(&r, nodes0 + 1) = a0;
    ASSERT(typed_refused_naming(&f, &r, &ex, "item_local["));
    /* a NaN in type 0's last row (float32), and an infinity after normalisation is impossible for
     * finite rows, so only the raw check is exercised here */
    make_typed_reply(&f, &r);
    const float nan = NAN;
    const size_t rows0 = r.len - PAD8((size_t)ty->num_nodes[1][2] * 3) - PAD8((size_t)ty->num_nodes[0][2] * 16);
    memcpy((char *)r.data + rows0 + (size_t)(ty->num_nodes[0][2] * 16 - 4), &nan, 4);
    ASSERT(typed_refused_naming(&f, &r, &ex, "non-finite"));
    /* a header for another seed list */
    make_typed_reply(&f, &r);
    *word(&r, 3) = TNS + 1;
    ASSERT(typed_refused_naming(&f, &r, &ex, "seed list"));
    dist_rpc_buf_free(&r);
    tfixture_free(&f);
}

static const int64_t TPAIRS[4] = {5, 60 + 7, 12, 60 + 79};

static void make_typed_request(const tfixture *f, dist_rpc_buf *b) {
    const loader_remote_batch rq = {.batch = 3, .key = 77, .feat_dim = 1, .seeds = TSEEDS, .n_seeds = TNS,
                                    .pairs = TPAIRS, .n_pairs = 2, .typed = &f->cfg, .num_edge_types = TK};
    cgnn_err err = {0};
    CGNN_CHECK(batch_typed_request_encode(b, &rq, &err) == 0);
}

TEST(typed_request_round_trip_and_hostile) {
    tfixture f;
    tfixture_init(&f);
    dist_rpc_buf b = {0};
    make_typed_request(&f, &b);
    batch_typed_request q;
    cgnn_err err = {0};
    ASSERT_EQ(batch_typed_request_decode(b.data, b.len, &f.g, &q, FROM, &err), 0);
    ASSERT(q.cfg.num_layers == 2 && !q.cfg.replace && q.key == 77 && q.want_features == 1);
    for (int h = 0; h < 2; h++)
        for (int e = 0; e < TK; e++) ASSERT_EQ(q.cfg.fanouts[h][e], f.cfg.fanouts[h][e]);
    ASSERT(q.n_seeds == TNS && q.n_pairs == 2 && memcmp(q.seeds, TSEEDS, sizeof TSEEDS) == 0 &&
           memcmp(q.pairs, TPAIRS, sizeof TPAIRS) == 0);
    /* a homogeneous server refuses the typed version, and the reverse */
    batch_request hq;
    ASSERT(rejected(batch_request_decode(b.data, b.len, 1000, 0, &hq, FROM, &err), &err, FROM) &&
           strstr(err.msg, "version 2"));
    {
        fixture hf;
        fixture_init(&hf);
        dist_rpc_buf hb = {0};
        make_request(&hf, &hb);
        ASSERT(rejected(batch_typed_request_decode(hb.data, hb.len, &f.g, &q, FROM, &err), &err, FROM) &&
               strstr(err.msg, "version 1"));
        dist_rpc_buf_free(&hb);
        fixture_free(&hf);
    }
    /* a graph with another number of edge types; a seed past every type (a bad type id); a bad
     * fanout; a hop with every fanout 0 */
    typed_graph g2 = f.g;
    g2.num_edge_types = TK - 1;
    ASSERT(rejected(batch_typed_request_decode(b.data, b.len, &g2, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "edge types"));
    int64_t *h = b.data;
    h[BATCH_REQ_HEADER + 2 * TK + 3] = f.g.offset[TT];
    ASSERT(rejected(batch_typed_request_decode(b.data, b.len, &f.g, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "seeds[3]"));
    make_typed_request(&f, &b);
    h = b.data;
    h[BATCH_REQ_HEADER + 2 * TK + TNS + 1] = -1;
    ASSERT(rejected(batch_typed_request_decode(b.data, b.len, &f.g, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "pairs[1]"));
    make_typed_request(&f, &b);
    h = b.data;
    h[BATCH_REQ_HEADER + 1] = -2;
    ASSERT(rejected(batch_typed_request_decode(b.data, b.len, &f.g, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "fanouts"));
    make_typed_request(&f, &b);
    h = b.data;
    for (int e = 0; e < TK; e++) h[BATCH_REQ_HEADER + TK + e] = 0;
    ASSERT(rejected(batch_typed_request_decode(b.data, b.len, &f.g, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "fanouts"));
    make_typed_request(&f, &b);
    h = b.data;
    h[7] = 2;
    ASSERT(rejected(batch_typed_request_decode(b.data, b.len, &f.g, &q, FROM, &err), &err, FROM) &&
           strstr(err.msg, "features wanted"));
    make_typed_request(&f, &b);
    h = b.data;
    h[5] = INT64_MAX / 4; /* a seed count past the message */
    ASSERT(rejected(batch_typed_request_decode(b.data, b.len, &f.g, &q, FROM, &err), &err, FROM));
    /* every truncation; every bit flip rejected or in range */
    make_typed_request(&f, &b);
    for (size_t n = 0; n < b.len; n++) {
        char *t = malloc(n ? n : 1);
        memcpy(t, b.data, n);
        const int rc = batch_typed_request_decode(t, n, &f.g, &q, FROM, &err);
        free(t);
        if (!rejected(rc, &err, FROM)) TEST_FAIL_("typed request truncated to %zu of %zu bytes: rc %d", n, b.len, rc);
    }
    char *t = malloc(b.len);
    int64_t accepted = 0, refused = 0;
    for (size_t i = 0; i < b.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(t, b.data, b.len);
            t[i] = (char)(t[i] ^ (1 << bit));
            const int rc = batch_typed_request_decode(t, b.len, &f.g, &q, FROM, &err);
            const size_t w = i / 8;
            const int must_refuse = w == 0 || w == 2 || w == 4 || w == 5 || w == 6 ||
                                    ((w == 3 || w == 7) && !(i % 8 == 0 && bit == 0));
            if (rc == 0) {
                accepted++;
                if (must_refuse) TEST_FAIL_("typed request: a flip of bit %d of byte %zu was accepted", bit, i);
                int ok = q.n_seeds == TNS && q.n_pairs == 2;
                for (int64_t k = 0; ok && k < q.n_seeds; k++) ok = q.seeds[k] >= 0 && q.seeds[k] < f.g.offset[TT];
                for (int64_t k = 0; ok && k < 2 * q.n_pairs; k++) ok = q.pairs[k] >= 0 && q.pairs[k] < f.g.offset[TT];
                for (int l = 0; ok && l < q.cfg.num_layers; l++)
                    for (int e = 0; e < TK; e++) ok = ok && q.cfg.fanouts[l][e] >= -1;
                if (!ok) TEST_FAIL_("typed request: a flip of bit %d of byte %zu decoded out of range", bit, i);
            } else {
                refused++;
                if (!rejected(rc, &err, FROM)) TEST_FAIL_("typed request flip %zu/%d: rc %d, '%s'", i, bit, rc, err.msg);
            }
        }
    fprintf(stderr, "  typed request of %zu bytes: %lld flips refused, %lld accepted\n", b.len, (long long)refused,
            (long long)accepted);
    ASSERT(refused > 0 && accepted > 0);
    free(t);
    dist_rpc_buf_free(&b);
    tfixture_free(&f);
}

int main(void) {
    RUN(reply_round_trip);
    RUN(reply_truncations_and_extensions);
    RUN(reply_bit_flips);
    RUN(reply_targeted);
    RUN(request_round_trip_and_truncations);
    RUN(request_bit_flips);
    RUN(typed_reply_round_trip);
    RUN(typed_reply_truncations_and_extensions);
    RUN(typed_reply_bit_flips);
    RUN(typed_reply_targeted);
    RUN(typed_request_round_trip_and_hostile);
    return test_summary();
}
