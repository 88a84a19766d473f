/* test_loader.c — the prefetching pipeline and feature gathering: the same batches in the same
 * order whatever the number of sampler threads (also when an epoch starts part way, as a resumed
 * run does); gather == reference for every dtype. */
#include "sample/gather.h"
#include "sample/loader.h"
#include "test.h"
#include "test_graph_util.h"

/* A feature table of `dtype` with rows x dim values v = (row * 7 + col) % 23 - 11 (exact in
 * every dtype). The caller frees *storage. */
static ds_feature make_feature(npy_dtype dtype, int64_t rows, int64_t dim, void **storage) {
    ds_feature f;
    memset(&f, 0, sizeof f);
    size_t es = npy_dtype_size(dtype);
    char *buf = malloc((size_t)(rows * dim) * es + 1);
    for (int64_t i = 0; i < rows * dim; i++) {
        int v = (int)((i / dim * 7 + i % dim) % 23) - 11;
        char *p = buf + (size_t)i * es;
        switch (dtype) {
        case NPY_DTYPE_FLOAT32: { float x = (float)v; memcpy(p, &x, 4); } break;
        case NPY_DTYPE_FLOAT64: { double x = v; memcpy(p, &x, 8); } break;
        case NPY_DTYPE_FLOAT16: { /* small integers are exact in half precision */
            uint16_t h = 0;
            if (v != 0) {
                int a = v < 0 ? -v : v, e = 0;
                while ((a >> e) > 1) e++;
                h = (uint16_t)(((v < 0) << 15) | ((e + 15) << 10) | (((a << 10) >> e) & 0x3ff));
            }
            memcpy(p, &h, 2);
        } break;
        case NPY_DTYPE_INT8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); } break;
        case NPY_DTYPE_UINT8: { uint8_t x = (uint8_t)(v + 11); memcpy(p, &x, 1); } break;
        default: break;
        }
    }
    f.array.dtype = dtype;
    f.array.ndim = 2;
    f.array.shape[0] = rows;
    f.array.shape[1] = dim;
    f.array.count = rows * dim;
    f.array.data = buf;
    f.rows = rows;
    f.dim = dim;
    *storage = buf;
    return f;
}

TEST(gather_matches_reference_all_dtypes) {
    npy_dtype dts[] = {NPY_DTYPE_FLOAT32, NPY_DTYPE_FLOAT64, NPY_DTYPE_FLOAT16, NPY_DTYPE_INT8, NPY_DTYPE_UINT8};
    const int64_t rows = 3000, dim = 13, n = 2500;
    int64_t *ids = malloc(n * sizeof(int64_t));
    rng r;
    rng_init(&r, 4);
    for (int64_t i = 0; i < n; i++) ids[i] = (int64_t)rng_below(&r, rows);
    float *a = malloc(n * dim * sizeof(float)), *b = malloc(n * dim * sizeof(float));
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        void *st;
        ds_feature f = make_feature(dts[d], rows, dim, &st);
        gather_rows_ref(a, &f, ids, n);
        gather_rows(b, &f, ids, n, 2);
        ASSERT(memcmp(a, b, n * dim * sizeof(float)) == 0);
        /* value check against the generating formula */
        for (int64_t i = 0; i < n; i += 97)
            for (int64_t j = 0; j < dim; j++) {
                int v = (int)((ids[i] * 7 + j) % 23) - 11;
                ASSERT_NEAR(a[i * dim + j], dts[d] == NPY_DTYPE_UINT8 ? v + 11 : v, 0);
            }
        free(st);
    }
    ASSERT_NEAR(gather_half_to_float(0x3c00), 1.0, 0);
    ASSERT_NEAR(gather_half_to_float(0xc000), -2.0, 0);
    ASSERT_NEAR(gather_half_to_float(0x0001), 5.960464477539063e-08, 1e-15); /* subnormal */
    ASSERT(isinf(gather_half_to_float(0x7c00)));
    ASSERT(isnan(gather_half_to_float(0x7e00)));
    free(ids);
    free(a);
    free(b);
}

/* Partitioned features: the parts are row ranges of one table here; fetching asks the owners'
 * side (gather_rows_owned) in process. */
typedef struct feat_parts {
    int P;
    int64_t start[5];
    ds_feature part[4];
    gather_part gp[4];
    int short_reply; /* test hook: an owner answers one row short */
} feat_parts;

static int fetch_in_process(void *ctx, gather_remote_req *rq, cgnn_err *err) {
    feat_parts *fp = ctx;
    for (int p = 0; p < rq->num_parts; p++) {
        if (rq->n[p] == 0) continue;
        if (gather_rows_owned(&fp->part[p], &fp->gp[p], rq->ids[p], rq->n[p] - fp->short_reply, &rq->rows[p],
                              &rq->rows_cap[p], &rq->rows_len[p], err) != 0)
            return -1;
    }
    return 0;
}

/* Row normalisation: each row / its L1 norm; a zero row stays; a row of denormals (1 / norm
 * overflows a float) still ends with finite entries of L1 norm 1, not inf / NaN. */
TEST(normalize_rows_zero_and_denormal) {
    const float tiny = 1.401298464e-45f; /* the smallest denormal */
    float x[3][3] = {{1.0f, -3.0f, 0.0f}, {0.0f, 0.0f, 0.0f}, {tiny, -2.0f * tiny, 0.0f}};
    gather_normalize_rows(&x[0][0], 3, 3);
    ASSERT(x[0][0] == 0.25f && x[0][1] == -0.75f && x[0][2] == 0.0f);
    ASSERT(x[1][0] == 0.0f && x[1][1] == 0.0f && x[1][2] == 0.0f);
    for (int j = 0; j < 3; j++) ASSERT(isfinite(x[2][j]));
    ASSERT_NEAR(x[2][0], 1.0 / 3.0, 1e-7);
    ASSERT_NEAR(x[2][1], -2.0 / 3.0, 1e-7);
    ASSERT(x[2][2] == 0.0f);
}

TEST(partitioned_gather_equals_whole_table) {
    npy_dtype dts[] = {NPY_DTYPE_FLOAT32, NPY_DTYPE_FLOAT16, NPY_DTYPE_UINT8};
    const int64_t rows = 1000, dim = 9, n = 700, stride = dim + 3;
    int64_t *ids = malloc(n * sizeof(int64_t));
    rng r;
    rng_init(&r, 8);
    for (int64_t i = 0; i < n; i++) ids[i] = (int64_t)rng_below(&r, rows);
    float *a = calloc(n * stride, sizeof(float)), *b = calloc(n * stride, sizeof(float));
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        void *st;
        ds_feature f = make_feature(dts[d], rows, dim, &st);
        const size_t row_bytes = (size_t)dim * npy_dtype_size(dts[d]);
        gather_rows_strided(a, stride, &f, ids, n, 1);
        for (int P = 1; P <= 4; P++) {
            feat_parts fp;
            memset(&fp, 0, sizeof fp);
            fp.P = P;
            for (int p = 0; p <= P; p++) fp.start[p] = rows * p / P + (p > 0 && p < P ? 17 * p : 0);
            for (int p = 0; p < P; p++) {
                fp.part[p] = f;
                fp.part[p].rows = fp.start[p + 1] - fp.start[p];
                fp.part[p].array.data = (char *)f.array.data + (size_t)fp.start[p] * row_bytes;
                fp.gp[p] = (gather_part){.num_parts = P, .part = p, .part_start = fp.start,
                                         .fetch_remote = fetch_in_process, .ctx = &fp};
            }
            for (int me = 0; me < P; me++) {
                gather_part_scratch sc;
                cgnn_err err = {0};
                ASSERT_EQ(gather_part_scratch_init(&sc, P, n, &err), 0);
                memset(b, 0xff, n * stride * sizeof(float)); /* the extra columns must stay untouched */
                ASSERT_EQ(gather_rows_part(b, stride, &fp.part[me], &fp.gp[me], &sc, ids, n, 2, &err), 0);
                for (int64_t i = 0; i < n; i++) {
                    ASSERT(memcmp(a + i * stride, b + i * stride, dim * sizeof(float)) == 0);
                    uint32_t bits;
                    memcpy(&bits, b + i * stride + dim, 4);
                    ASSERT_EQ(bits, 0xffffffffu);
                }
                if (P > 1) { /* a short reply is an error, not a read past the buffer */
                    fp.short_reply = 1;
                    ASSERT_EQ(gather_rows_part(b, stride, &fp.part[me], &fp.gp[me], &sc, ids, n, 1, &err), -1);
                    ASSERT(strstr(err.msg, "bytes of feature rows") != NULL);
                    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
                    fp.short_reply = 0;
                    int64_t foreign = fp.start[(me + 1) % P];
                    void *out = NULL;
                    size_t cap = 0, len = 0;
                    ASSERT_EQ(gather_rows_owned(&fp.part[me], &fp.gp[me], &foreign, 1, &out, &cap, &len, &err), -1);
                    ASSERT(strstr(err.msg, "is not owned by part") != NULL);
                    free(out);
                }
                gather_part_scratch_free(&sc);
            }
        }
        free(st);
    }
    free(ids);
    free(a);
    free(b);
}

typedef struct epoch_digest {
    int64_t batches;
    uint64_t hash[64];
} epoch_digest;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

static uint64_t batch_hash(const minibatch *mb) {
    uint64_t h = 1469598103934665603ULL;
    h = fnv(h, &mb->batch_index, 8);
    h = fnv(h, mb->items, (size_t)mb->num_items * 8);
    h = fnv(h, mb->labels, (size_t)mb->num_items * 8);
    h = fnv(h, mb->input_nodes, (size_t)mb->num_input_nodes * 8);
    for (int l = 0; l < mb->num_layers; l++) {
        h = fnv(h, mb->blocks[l].indptr, (size_t)(mb->blocks[l].num_dst + 1) * 8);
        h = fnv(h, mb->blocks[l].indices, (size_t)mb->blocks[l].num_edges * 4);
    }
    h = fnv(h, mb->features, (size_t)(mb->num_input_nodes * mb->feat_dim) * 4);
    return h;
}

static int run_epoch(loader *l, int epoch, epoch_digest *d) {
    loader_start_epoch(l, epoch, 0);
    d->batches = 0;
    minibatch *prev = NULL, *mb;
    while ((mb = loader_next(l)) != NULL) {
        if (mb->batch_index != d->batches || d->batches >= 64) return -1; /* strictly in order */
        d->hash[d->batches++] = batch_hash(mb);
        /* hold one batch while taking the next, as a trainer overlapping steps would */
        if (prev) loader_release(l, prev);
        prev = mb;
    }
    if (prev) loader_release(l, prev);
    return 0;
}

TEST(same_batches_with_0_1_4_workers) {
    int32_t *src, *dst;
    const int64_t n = 4000;
    int64_t e = test_random_graph(n, 6, 200, 21, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, n, &ed, 2, &err), 0);
    void *st;
    ds_feature f = make_feature(NPY_DTYPE_FLOAT32, n, 8, &st);
    int64_t *seeds = malloc(1000 * sizeof(int64_t)), *labels = malloc(1000 * sizeof(int64_t));
    for (int i = 0; i < 1000; i++) {
        seeds[i] = (i * 37) % n;
        labels[i] = i % 5;
    }
    loader_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.sampler.num_layers = 2;
    cfg.sampler.fanouts[0] = 10;
    cfg.sampler.fanouts[1] = 5;
    cfg.batch_size = 64;
    cfg.shuffle = 1;
    cfg.seed = 7;
    cfg.world_size = 1;
    cfg.feature = &f;
    epoch_digest ref[2], got;
    int workers[] = {0, 1, 4};
    for (size_t w = 0; w < 3; w++) {
        cfg.num_workers = workers[w];
        loader l;
        ASSERT_EQ(loader_init(&l, &g, seeds, labels, 1000, &cfg, &err), 0);
        for (int epoch = 0; epoch < 2; epoch++) {
            ASSERT_EQ(run_epoch(&l, epoch, w == 0 ? &ref[epoch] : &got), 0);
            if (w == 0) {
                ASSERT_EQ(ref[epoch].batches, 16);
            } else {
                ASSERT_EQ(got.batches, ref[epoch].batches);
                for (int64_t b = 0; b < got.batches; b++) ASSERT(got.hash[b] == ref[epoch].hash[b]);
            }
        }
        ASSERT(ref[0].hash[0] != ref[1].hash[0]); /* epochs differ */
        /* abandon an epoch half way, then a limited epoch: still consistent */
        loader_start_epoch(&l, 0, 0);
        minibatch *mb = loader_next(&l);
        ASSERT(mb != NULL);
        loader_release(&l, mb);
        loader_start_epoch(&l, 1, 3);
        ASSERT_EQ(loader_num_batches(&l), 3);
        for (int b = 0; b < 3; b++) {
            mb = loader_next(&l);
            ASSERT(mb != NULL);
            ASSERT(batch_hash(mb) == ref[1].hash[b]);
            loader_release(&l, mb);
        }
        ASSERT(loader_next(&l) == NULL);
        /* resuming an epoch at batch 11 (an interrupted run): batches 11.. of the full epoch */
        loader_start_epoch_at(&l, 1, 11, 0);
        ASSERT_EQ(loader_num_batches(&l), 16);
        for (int64_t b = 11; b < 16; b++) {
            mb = loader_next(&l);
            ASSERT(mb != NULL);
            ASSERT_EQ(mb->batch_index, b);
            ASSERT(batch_hash(mb) == ref[1].hash[b]);
            loader_release(&l, mb);
        }
        ASSERT(loader_next(&l) == NULL);
        loader_start_epoch_at(&l, 0, 16, 0); /* at the end: nothing */
        ASSERT(loader_next(&l) == NULL);
        loader_free(&l);
    }
    /* and the gathered features are the rows of the input nodes, labels those of the items */
    cfg.num_workers = 2;
    loader l;
    ASSERT_EQ(loader_init(&l, &g, seeds, labels, 1000, &cfg, &err), 0);
    loader_start_epoch(&l, 0, 1);
    minibatch *mb = loader_next(&l);
    for (int64_t i = 0; i < mb->num_input_nodes; i++)
        ASSERT_NEAR(mb->features[i * 8 + 3], (double)((mb->input_nodes[i] * 7 + 3) % 23 - 11), 0);
    for (int64_t i = 0; i < mb->num_items; i++) {
        ASSERT_EQ(mb->labels[i], labels[mb->items[i]]);
        ASSERT_EQ(mb->input_nodes[mb->item_local[i]], seeds[mb->items[i]]);
    }
    loader_release(&l, mb);
    loader_free(&l);
    free(seeds);
    free(labels);
    free(st);
    csc_free(&g);
    free(src);
    free(dst);
}

/* Labelled link-prediction pairs (GraphBolt labels + indexes): items are the positive rows;
 * every batch lists each group of its positives once, in order of first appearance, between
 * the positives and the random negatives; each pair's listed_off/len point at its own group;
 * the same batches for 0 and 3 sampler threads; bad labels / inconsistent groups are errors. */
TEST(labelled_pairs_list_each_group_once) {
    int32_t *src, *dst;
    const int64_t n = 500;
    int64_t e = test_random_graph(n, 4, 50, 5, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, n, &ed, 2, &err), 0);
    /* 60 groups (index k): anchor 7k % n, 1 + k % 3 positives, k % 5 listed negatives; the
     * rows interleaved by a fixed permutation (row r <- entry (r * 37) % M) */
    enum { G = 60 };
    int64_t ent_seeds[2 * 400], ent_labels[400], ent_idx[400], M = 0;
    for (int64_t k = 0; k < G; k++) {
        const int64_t a = (7 * k) % n;
        for (int64_t j = 0; j < 1 + k % 3; j++, M++) {
            ent_seeds[2 * M] = a, ent_seeds[2 * M + 1] = (a + 1 + j) % n, ent_labels[M] = 1, ent_idx[M] = 1000 - k;
        }
        for (int64_t j = 0; j < k % 5; j++, M++) {
            ent_seeds[2 * M] = a, ent_seeds[2 * M + 1] = (a + 100 + 3 * j) % n, ent_labels[M] = 0, ent_idx[M] = 1000 - k;
        }
    }
    ASSERT(M % 37 != 0 && M <= 400);
    int64_t seeds[2 * 400], labels[400], idx[400], num_pos = 0;
    for (int64_t r = 0; r < M; r++) {
        const int64_t q = (r * 37) % M;
        seeds[2 * r] = ent_seeds[2 * q], seeds[2 * r + 1] = ent_seeds[2 * q + 1];
        labels[r] = ent_labels[q], idx[r] = ent_idx[q];
        num_pos += labels[r];
    }
    loader_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.sampler.num_layers = 1;
    cfg.sampler.fanouts[0] = 3;
    cfg.batch_size = 16;
    cfg.shuffle = 1;
    cfg.seed = 3;
    cfg.world_size = 1;
    cfg.pairs = 1;
    cfg.num_negatives = 5;
    cfg.indexes = idx;
    epoch_digest ref, got;
    memset(&ref, 0, sizeof ref);
    memset(&got, 0, sizeof got);
    const int workers[] = {0, 3};
    for (int w = 0; w < 2; w++) {
        cfg.num_workers = workers[w];
        loader l;
        ASSERT_EQ(loader_init(&l, &g, seeds, labels, M, &cfg, &err), 0);
        /* bound: the 16 largest groups (4 negatives each at most) */
        ASSERT(loader_max_negatives(&l) <= 16 * 4 + 5);
        ASSERT_EQ(loader_max_seeds(&l), 2 * 16 + loader_max_negatives(&l));
        loader_start_epoch(&l, 0, 0);
        int64_t seen_pos = 0;
        minibatch *mb;
        got.batches = 0;
        while ((mb = loader_next(&l)) != NULL) {
            const int64_t P = mb->num_items, H = mb->num_listed;
            ASSERT_EQ(mb->num_negatives, 5);
            ASSERT(H + mb->num_negatives <= loader_max_negatives(&l));
            int64_t expect_H = 0;
            for (int64_t i = 0; i < P; i++) {
                const int64_t row = mb->items[i];
                ASSERT_EQ(labels[row], 1);
                ASSERT_EQ(mb->input_nodes[mb->item_local[i]], seeds[2 * row]);
                ASSERT_EQ(mb->input_nodes[mb->item_local[P + i]], seeds[2 * row + 1]);
                /* the group's negatives, in row order, at listed_off */
                int64_t cnt = 0, first = -1;
                for (int64_t r = 0; r < M; r++)
                    if (labels[r] == 0 && idx[r] == idx[row]) {
                        ASSERT(cnt < mb->listed_len[i]);
                        ASSERT_EQ(mb->input_nodes[mb->item_local[2 * P + mb->listed_off[i] + cnt]], seeds[2 * r + 1]);
                        cnt++;
                    }
                ASSERT_EQ(mb->listed_len[i], cnt);
                for (int64_t j = 0; j < i; j++)
                    if (idx[mb->items[j]] == idx[row]) first = j;
                if (first >= 0) ASSERT_EQ(mb->listed_off[i], mb->listed_off[first]); /* listed once */
                else expect_H += cnt;
            }
            ASSERT_EQ(H, expect_H);
            seen_pos += P;
            uint64_t h = fnv(1469598103934665603ULL, mb->items, (size_t)P * 8); /* labels unused for pairs */
            h = fnv(h, mb->input_nodes, (size_t)mb->num_input_nodes * 8);
            h = fnv(h, mb->item_local, (size_t)(2 * P + H + 5) * 4);
            h = fnv(h, mb->listed_off, (size_t)P * 8);
            h = fnv(h, mb->blocks[0].indices, (size_t)mb->blocks[0].num_edges * 4);
            got.hash[got.batches++] = h;
            loader_release(&l, mb);
        }
        ASSERT_EQ(seen_pos, num_pos);
        if (w == 0) ref = got;
        ASSERT_EQ(got.batches, ref.batches);
        for (int64_t b = 0; b < got.batches; b++) ASSERT(got.hash[b] == ref.hash[b]);
        loader_free(&l);
    }
    /* errors name the field and row */
    cfg.num_workers = 0;
    loader l;
    labels[4] = 2;
    ASSERT_EQ(loader_init(&l, &g, seeds, labels, M, &cfg, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "labels: row 4: value 2");
    labels[4] = ent_labels[(4 * 37) % M];
    int64_t r0 = -1, r1 = -1; /* two rows of one group: give the second another anchor */
    for (int64_t r = 0; r < M && r1 < 0; r++)
        if (labels[r] == 0) {
            if (r0 < 0) r0 = r;
            else if (idx[r] == idx[r0]) r1 = r;
        }
    ASSERT(r1 >= 0);
    seeds[2 * r1] = (seeds[2 * r1] + 1) % n;
    ASSERT_EQ(loader_init(&l, &g, seeds, labels, M, &cfg, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "share index");
    /* without indexes a group is an anchor's negatives: always consistent */
    cfg.indexes = NULL;
    ASSERT_EQ(loader_init(&l, &g, seeds, labels, M, &cfg, &err), 0);
    loader_free(&l);
    csc_free(&g);
    free(src);
    free(dst);
}

/* Anchor batching (GiGL's DistABLPLoader): over 1 and 3 ranks and two epochs, every anchor of
 * the split appears in exactly one batch of one rank (ranks disjoint), at most batch_size anchors
 * a batch, with its first `cap` positives in row order (all for cap 0), adjacent; each pair's
 * listed negatives are its anchor's first `cap` negatives; the same batches for 0 and 3 sampler
 * threads; another seed gives another order. */
TEST(anchor_batches_carry_each_anchor_once) {
    int32_t *src, *dst;
    const int64_t n = 500;
    int64_t e = test_random_graph(n, 4, 50, 7, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, n, &ed, 2, &err), 0);
    /* 70 anchors 11k % n (distinct), 1 + k % 4 positives, k % 3 listed negatives; rows
     * interleaved by row r <- entry (r * 31) % M */
    enum { A = 70, MAXR = 420 };
    int64_t ent_seeds[2 * MAXR], ent_labels[MAXR], M = 0;
    for (int64_t k = 0; k < A; k++) {
        const int64_t a = (11 * k) % n;
        for (int64_t j = 0; j < 1 + k % 4; j++, M++)
            ent_seeds[2 * M] = a, ent_seeds[2 * M + 1] = (a + 1 + j) % n, ent_labels[M] = 1;
        for (int64_t j = 0; j < k % 3; j++, M++)
            ent_seeds[2 * M] = a, ent_seeds[2 * M + 1] = (a + 200 + 5 * j) % n, ent_labels[M] = 0;
    }
    ASSERT(M % 31 != 0 && M <= MAXR);
    int64_t seeds[2 * MAXR], labels[MAXR];
    for (int64_t r = 0; r < M; r++) {
        const int64_t q = (r * 31) % M;
        seeds[2 * r] = ent_seeds[2 * q], seeds[2 * r + 1] = ent_seeds[2 * q + 1], labels[r] = ent_labels[q];
    }
    for (int labelled = 0; labelled < 2; labelled++)
        for (int64_t cap = 0; cap <= 2; cap += 2)
            for (int W = 1; W <= 3; W += 2)
                for (int epoch = 0; epoch < 2; epoch++) {
                    int64_t batch_of[n]; /* anchor -> (rank, batch) seen, or -1 */
                    for (int64_t v = 0; v < n; v++) batch_of[v] = -1;
                    int64_t anchors_seen = 0;
                    for (int rank = 0; rank < W; rank++) {
                        loader_config cfg;
                        memset(&cfg, 0, sizeof cfg);
                        cfg.sampler.num_layers = 1;
                        cfg.sampler.fanouts[0] = 3;
                        cfg.batch_size = 8;
                        cfg.shuffle = 1;
                        cfg.seed = 5;
                        cfg.rank = rank;
                        cfg.world_size = W;
                        cfg.pairs = 1;
                        cfg.num_negatives = 4;
                        cfg.anchor_batches = 1;
                        cfg.max_labels_per_anchor = cap;
                        epoch_digest ref;
                        memset(&ref, 0, sizeof ref);
                        for (int wi = 0; wi < 2; wi++) {
                            cfg.num_workers = wi ? 3 : 0;
                            loader l;
                            ASSERT_EQ(loader_init(&l, &g, seeds, labelled ? labels : NULL, M, &cfg, &err), 0);
                            ASSERT_EQ(loader_num_batch_items(&l), A);
                            { /* the 8 anchors with the most (capped) positives */
                                int64_t deg[A], bound = 0;
                                for (int64_t k = 0; k < A; k++) {
                                    deg[k] = 1 + k % 4 + (labelled ? 0 : k % 3);
                                    if (cap && deg[k] > cap) deg[k] = cap;
                                }
                                for (int t = 0; t < 8; t++) {
                                    int64_t best = 0;
                                    for (int64_t k = 1; k < A; k++) if (deg[k] > deg[best]) best = k;
                                    bound += deg[best];
                                    deg[best] = -1;
                                }
                                ASSERT_EQ(loader_max_pairs(&l), bound);
                            }
                            loader_start_epoch(&l, epoch, 0);
                            epoch_digest got;
                            memset(&got, 0, sizeof got);
                            minibatch *mb;
                            while ((mb = loader_next(&l)) != NULL) {
                                const int64_t P = mb->num_items, H = mb->num_listed;
                                ASSERT(P <= loader_max_pairs(&l) && got.batches < 64);
                                int64_t distinct = 0;
                                for (int64_t i = 0; i < P;) {
                                    const int64_t a = seeds[2 * mb->items[i]];
                                    distinct++;
                                    if (wi == 0) { /* once over every rank and batch */
                                        ASSERT_EQ(batch_of[a], -1);
                                        batch_of[a] = rank * 1000 + got.batches;
                                        anchors_seen++;
                                    }
                                    /* its pairs: the anchor's first cap positive rows, in row order */
                                    int64_t cnt = 0, negs = 0;
                                    for (int64_t r = 0; r < M; r++) {
                                        if (seeds[2 * r] != a) continue;
                                        if (labelled && labels[r] == 0) {
                                            if (cap && negs >= cap) continue;
                                            ASSERT(negs < mb->listed_len[i]);
                                            ASSERT_EQ(mb->input_nodes[mb->item_local[2 * P + mb->listed_off[i] + negs]],
                                                      seeds[2 * r + 1]);
                                            negs++;
                                            continue;
                                        }
                                        if (cap && cnt >= cap) continue;
                                        ASSERT(i + cnt < P);
                                        ASSERT_EQ(mb->items[i + cnt], r);
                                        ASSERT_EQ(mb->input_nodes[mb->item_local[i + cnt]], a);
                                        ASSERT_EQ(mb->input_nodes[mb->item_local[P + i + cnt]], seeds[2 * r + 1]);
                                        cnt++;
                                    }
                                    ASSERT(cnt >= 1);
                                    ASSERT_EQ(mb->listed_len[i], negs);
                                    i += cnt;
                                }
                                ASSERT(distinct <= 8);
                                ASSERT_EQ(mb->num_negatives, 4);
                                uint64_t h = fnv(1469598103934665603ULL, mb->items, (size_t)P * 8);
                                h = fnv(h, mb->input_nodes, (size_t)mb->num_input_nodes * 8);
                                h = fnv(h, mb->item_local, (size_t)(2 * P + H + 4) * 4);
                                h = fnv(h, mb->blocks[0].indices, (size_t)mb->blocks[0].num_edges * 4);
                                got.hash[got.batches++] = h;
                                loader_release(&l, mb);
                            }
                            if (wi == 0) ref = got;
                            ASSERT_EQ(got.batches, ref.batches);
                            for (int64_t b = 0; b < got.batches; b++) ASSERT(got.hash[b] == ref.hash[b]);
                            loader_free(&l);
                        }
                    }
                    ASSERT_EQ(anchors_seen, A);
                }
    /* determinism by seed: the same seed, the same order; another seed, another */
    int64_t first[3][8];
    for (int t = 0; t < 3; t++) {
        loader_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.sampler.num_layers = 1;
        cfg.sampler.fanouts[0] = 3;
        cfg.batch_size = 8;
        cfg.shuffle = 1;
        cfg.seed = t == 2 ? 6 : 5;
        cfg.world_size = 1;
        cfg.pairs = 1;
        cfg.anchor_batches = 1;
        loader l;
        ASSERT_EQ(loader_init(&l, &g, seeds, NULL, M, &cfg, &err), 0);
        loader_start_epoch(&l, 0, 1);
        minibatch *mb = loader_next(&l);
        ASSERT(mb != NULL && mb->num_items >= 8);
        for (int i = 0; i < 8; i++) first[t][i] = mb->items[i];
        loader_release(&l, mb);
        loader_free(&l);
    }
    ASSERT(memcmp(first[0], first[1], sizeof first[0]) == 0);
    ASSERT(memcmp(first[0], first[2], sizeof first[0]) != 0);
    csc_free(&g);
    free(src);
    free(dst);
}

/* LP random negatives from a candidate id range (loader_config.neg_lo / neg_hi, trainerArgs
 * lp_candidate_range): every one inside [300, 420), most of the range drawn, the same ids for 0
 * and 2 sampler threads; without the range some fall outside; a bad range is refused. */
TEST(negatives_from_candidate_range) {
    int32_t *src, *dst;
    const int64_t n = 500;
    int64_t e = test_random_graph(n, 4, 50, 9, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, n, &ed, 2, &err), 0);
    enum { M = 200, NEG = 40 };
    int64_t seeds[2 * M];
    for (int64_t i = 0; i < M; i++) seeds[2 * i] = (i * 7) % 300, seeds[2 * i + 1] = 300 + (i * 11) % 120;
    loader_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.sampler.num_layers = 1;
    cfg.sampler.fanouts[0] = 3;
    cfg.batch_size = 16;
    cfg.shuffle = 1;
    cfg.seed = 5;
    cfg.world_size = 1;
    cfg.pairs = 1;
    cfg.num_negatives = NEG;
    int64_t negs[2][13 * NEG];
    for (int run = 0; run < 3; run++) {
        cfg.num_workers = run == 1 ? 2 : 0;
        cfg.neg_lo = run < 2 ? 300 : 0, cfg.neg_hi = run < 2 ? 420 : 0;
        loader l;
        ASSERT_EQ(loader_init(&l, &g, seeds, NULL, M, &cfg, &err), 0);
        loader_start_epoch(&l, 0, 0);
        minibatch *mb;
        int64_t k = 0, outside = 0;
        char seen[500] = {0};
        while ((mb = loader_next(&l)) != NULL) {
            ASSERT_EQ(mb->num_negatives, NEG);
            for (int64_t j = 0; j < NEG; j++) {
                const int64_t v = mb->input_nodes[mb->item_local[2 * mb->num_items + j]];
                ASSERT(v >= 0 && v < n);
                outside += v < 300 || v >= 420;
                seen[v] = 1;
                if (run < 2) negs[run][k] = v;
                k++;
            }
            loader_release(&l, mb);
        }
        loader_free(&l);
        ASSERT_EQ(k, 13 * NEG); /* 200 pairs / 16 = 13 batches */
        int distinct = 0;
        for (int v = 0; v < 500; v++) distinct += seen[v];
        if (run < 2) {
            ASSERT_EQ(outside, 0);
            ASSERT(distinct > 100); /* 520 draws over 120 ids */
        } else {
            ASSERT(outside > 0);
        }
    }
    ASSERT(memcmp(negs[0], negs[1], sizeof negs[0]) == 0); /* thread-count independent */
    const int64_t bad[3][2] = {{420, 300}, {10, 10}, {0, 501}};
    for (int b = 0; b < 3; b++) {
        cfg.neg_lo = bad[b][0], cfg.neg_hi = bad[b][1];
        loader l;
        ASSERT_EQ(loader_init(&l, &g, seeds, NULL, M, &cfg, &err), -1);
        ASSERT_STR_CONTAINS(err.msg, "node range");
    }
    csc_free(&g);
    free(src), free(dst);
}

int main(void) {
    RUN(gather_matches_reference_all_dtypes);
    RUN(normalize_rows_zero_and_denormal);
    RUN(partitioned_gather_equals_whole_table);
    RUN(same_batches_with_0_1_4_workers);
    RUN(labelled_pairs_list_each_group_once);
    RUN(negatives_from_candidate_range);
    RUN(anchor_batches_carry_each_anchor_once);
    return test_summary();
}
