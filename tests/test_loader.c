/* test_loader.c — the prefetching pipeline and feature gathering: the same batches in the same
 * order whatever the number of sampler threads; gather == reference for every dtype. */
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

int main(void) {
    RUN(gather_matches_reference_all_dtypes);
    RUN(same_batches_with_0_1_4_workers);
    return test_summary();
}
