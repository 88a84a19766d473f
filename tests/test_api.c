/* test_api.c — the public C API (include/cgnn.h): the dataset's description, batches bitwise the
 * loader's as `cgnn train` configures it, sampler threads that change nothing, typed graphs, the
 * held-batch rule, and errors that name the argument. */
#include "cgnn.h"

#include <zlib.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "sample/loader.h"
#include "test.h"

static char g_path[4096];

static const char *data(const char *name) {
    const char *src = getenv("CGNN_SOURCE_DIR");
    snprintf(g_path, sizeof g_path, "%s/data/%s", src ? src : ".", name);
    return g_path;
}

/* CRC-32 of every array of a batch (all types, all blocks), and its item count into *items. */
static uint32_t batch_crc(const cgnn_batch *b, int64_t *items) {
    cgnn_batch_info bi;
    cgnn_batch_info_get(b, &bi);
    *items = bi.num_items;
    uint32_t c = 0;
    cgnn_array a;
    for (int t = 0; t < bi.num_node_types; t++) {
        if (cgnn_batch_array(b, CGNN_FIELD_NODES, t, &a, NULL) == CGNN_OK && a.data)
            c = (uint32_t)crc32(c, a.data, (uInt)(a.shape[0] * 8));
        if (cgnn_batch_array(b, CGNN_FIELD_FEATURES, t, &a, NULL) == CGNN_OK && a.data)
            c = (uint32_t)crc32(c, a.data, (uInt)(a.shape[0] * a.shape[1] * 4));
    }
    for (int k = 0; k < bi.num_layers * bi.num_edge_types; k++) {
        if (cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDPTR, k, &a, NULL) == CGNN_OK && a.data)
            c = (uint32_t)crc32(c, a.data, (uInt)(a.shape[0] * 8));
        if (cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDICES, k, &a, NULL) == CGNN_OK && a.data)
            c = (uint32_t)crc32(c, a.data, (uInt)(a.shape[0] * 4));
    }
    if (cgnn_batch_array(b, CGNN_FIELD_ITEM_ROWS, 0, &a, NULL) == CGNN_OK && a.data)
        c = (uint32_t)crc32(c, a.data, (uInt)(a.shape[0] * 4));
    if (cgnn_batch_array(b, CGNN_FIELD_LABELS, 0, &a, NULL) == CGNN_OK && a.data)
        c = (uint32_t)crc32(c, a.data, (uInt)(a.shape[0] * 8));
    return c;
}

/* The CRC of every batch of epochs 0 and 1 of a loader with options o, and the batch count. */
static uint32_t epochs_crc(cgnn_dataset *ds, const cgnn_loader_options *o, int64_t *batches, int64_t *items) {
    cgnn_loader *l = NULL;
    cgnn_error e;
    if (cgnn_loader_create(ds, o, &l, &e) != CGNN_OK) {
        fprintf(stderr, "loader: %s\n", e.message);
        return 0;
    }
    uint32_t c = 0;
    *batches = *items = 0;
    for (int ep = 0; ep < 2; ep++) {
        CGNN_CHECK(cgnn_loader_start_epoch(l, ep, &e) == CGNN_OK);
        cgnn_batch *b;
        while (cgnn_loader_next(l, &b, &e) == CGNN_OK && b) {
            int64_t n;
            c = (uint32_t)crc32(c, (const unsigned char *)&(uint32_t){batch_crc(b, &n)}, 4);
            *items += n;
            (*batches)++;
            cgnn_batch_release(b);
        }
    }
    cgnn_loader_free(l);
    return c;
}

TEST(cora_describe) {
    cgnn_dataset *ds = NULL;
    cgnn_error e;
    ASSERT_EQ(cgnn_dataset_open(data("cora"), 2, &ds, &e), CGNN_OK);
    ASSERT_EQ(cgnn_version(), CGNN_VERSION_MAJOR * 10000 + CGNN_VERSION_MINOR * 100 + CGNN_VERSION_PATCH);
    ASSERT_EQ(cgnn_dataset_num_node_types(ds), 1);
    ASSERT_EQ(cgnn_dataset_num_nodes(ds, 0), 2708);
    ASSERT_EQ(cgnn_dataset_num_edges(ds, 0), 10556);
    ASSERT_EQ(cgnn_dataset_num_nodes(ds, 1), -1);
    ASSERT_EQ(cgnn_dataset_feature_dim(ds, 0), 1433);
    ASSERT_EQ(cgnn_dataset_num_tasks(ds), 1);
    ASSERT_EQ(cgnn_dataset_task_kind(ds, 0), CGNN_TASK_NODE_CLASSIFICATION);
    ASSERT_EQ(cgnn_dataset_num_classes(ds, 0), 7);
    ASSERT_EQ(cgnn_dataset_split_size(ds, 0, CGNN_SPLIT_TRAIN), 140);
    ASSERT_EQ(cgnn_dataset_split_size(ds, 0, CGNN_SPLIT_VALIDATION), 500);
    ASSERT_EQ(cgnn_dataset_split_size(ds, 0, CGNN_SPLIT_TEST), 1000);
    ASSERT(cgnn_dataset_task_name(ds, 1) == NULL);
    cgnn_dataset_close(ds);
}

/* Every batch of the API's loader is the loader's own as the trainer builds it (the same module:
 * this checks the translation, array by array), for 2 epochs. */
TEST(cora_batches_are_the_native_loaders) {
    cgnn_dataset *ds = NULL;
    cgnn_error e;
    ASSERT_EQ(cgnn_dataset_open(data("cora"), 2, &ds, &e), CGNN_OK);
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    o.batch_size = 32, o.fanouts[0] = 5, o.fanouts[1] = 3, o.seed = 7, o.num_workers = 2;
    cgnn_loader *l = NULL;
    ASSERT_EQ(cgnn_loader_create(ds, &o, &l, &e), CGNN_OK);
    ASSERT_EQ(cgnn_loader_num_batches(l), 5); /* 140 seeds */
    dataset d;
    csc_graph g;
    cgnn_err ie = {0};
    ASSERT_EQ(dataset_open(&d, data("cora"), &ie), 0);
    ASSERT_EQ(csc_open_cached(&g, &d, 0, 0, &ie), 0);
    const ds_split *sp = &d.tasks[0].splits[DS_SPLIT_TRAIN];
    loader_config lc;
    memset(&lc, 0, sizeof lc);
    lc.sampler.num_layers = 2, lc.sampler.fanouts[0] = 5, lc.sampler.fanouts[1] = 3;
    lc.batch_size = 32, lc.shuffle = 1, lc.seed = 7, lc.rank = 0, lc.world_size = 1;
    lc.feature = dataset_find_feature(&d, DS_DOMAIN_NODE, 0, "feat");
    ASSERT(lc.feature);
    loader ref;
    ASSERT_EQ(loader_init(&ref, &g, sp->seeds, sp->labels, sp->num_items, &lc, &ie), 0);
    int64_t n = 0;
    for (int ep = 0; ep < 2; ep++) {
        ASSERT_EQ(cgnn_loader_start_epoch(l, ep, &e), CGNN_OK);
        loader_start_epoch(&ref, ep, 0);
        cgnn_batch *b;
        minibatch *mb;
        while ((mb = loader_next(&ref)) != NULL) {
            ASSERT_EQ(cgnn_loader_next(l, &b, &e), CGNN_OK);
            ASSERT(b != NULL);
            cgnn_batch_info bi;
            cgnn_batch_info_get(b, &bi);
            ASSERT_EQ(bi.epoch, ep);
            ASSERT_EQ(bi.index, mb->batch_index);
            ASSERT_EQ(bi.num_items, mb->num_items);
            ASSERT_EQ(cgnn_batch_num_nodes(b, 0, 0), mb->num_seeds);
            ASSERT_EQ(cgnn_batch_num_nodes(b, 0, 2), mb->num_input_nodes);
            cgnn_array a;
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_NODES, 0, &a, &e), CGNN_OK);
            ASSERT(a.dtype == CGNN_INT64 && a.ndim == 1 && a.shape[0] == mb->num_input_nodes);
            ASSERT(memcmp(a.data, mb->input_nodes, (size_t)a.shape[0] * 8) == 0);
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_FEATURES, 0, &a, &e), CGNN_OK);
            ASSERT(a.dtype == CGNN_FLOAT32 && a.ndim == 2 && a.shape[0] == mb->num_input_nodes && a.shape[1] == 1433);
            ASSERT(memcmp(a.data, mb->features, (size_t)(a.shape[0] * a.shape[1]) * 4) == 0);
            for (int k = 0; k < 2; k++) {
                ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDPTR, k, &a, &e), CGNN_OK);
                ASSERT_EQ(a.shape[0], mb->blocks[k].num_dst + 1);
                ASSERT(memcmp(a.data, mb->blocks[k].indptr, (size_t)a.shape[0] * 8) == 0);
                ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDICES, k, &a, &e), CGNN_OK);
                ASSERT(a.dtype == CGNN_INT32 && a.shape[0] == mb->blocks[k].num_edges);
                ASSERT(memcmp(a.data, mb->blocks[k].indices, (size_t)a.shape[0] * 4) == 0);
            }
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_LABELS, 0, &a, &e), CGNN_OK);
            ASSERT(a.shape[0] == mb->num_items && memcmp(a.data, mb->labels, (size_t)a.shape[0] * 8) == 0);
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_ITEMS, 0, &a, &e), CGNN_OK);
            ASSERT(memcmp(a.data, mb->items, (size_t)a.shape[0] * 8) == 0);
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_ITEM_ROWS, 0, &a, &e), CGNN_OK);
            ASSERT(memcmp(a.data, mb->item_local, (size_t)a.shape[0] * 4) == 0);
            /* what a node classification batch does not have */
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_LISTED_OFFSET, 0, &a, &e), CGNN_ERROR_ARGUMENT);
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDPTR, 2, &a, &e), CGNN_ERROR_ARGUMENT);
            ASSERT_STR_CONTAINS(e.message, "block 2");
            cgnn_batch_release(b);
            loader_release(&ref, mb);
            n++;
        }
        ASSERT_EQ(cgnn_loader_next(l, &b, &e), CGNN_OK);
        ASSERT(b == NULL); /* the end of the epoch, as the native loader's */
    }
    ASSERT_EQ(n, 10);
    loader_free(&ref);
    csc_free(&g);
    dataset_close(&d);
    cgnn_loader_free(l);
    cgnn_dataset_close(ds);
}

/* The sampler threads and the prefetch depth change nothing; the seed and the rank slice do. */
TEST(workers_prefetch_and_slices) {
    cgnn_dataset *ds = NULL;
    cgnn_error e;
    ASSERT_EQ(cgnn_dataset_open(data("cora"), 2, &ds, &e), CGNN_OK);
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    o.split = CGNN_SPLIT_VALIDATION, o.shuffle = 1, o.batch_size = 48;
    int64_t b0, i0, b1, i1;
    o.num_workers = 0;
    const uint32_t c0 = epochs_crc(ds, &o, &b0, &i0);
    o.num_workers = 3, o.prefetch = 5;
    const uint32_t c1 = epochs_crc(ds, &o, &b1, &i1);
    ASSERT_EQ(c0, c1);
    ASSERT_EQ(b0, 2 * 11); /* 500 / 48 -> 11 batches, 2 epochs */
    ASSERT_EQ(i0, 1000);
    o.seed = 43;
    ASSERT_NE(epochs_crc(ds, &o, &b1, &i1), c0);
    o.seed = 42, o.world_size = 2, o.rank = 1, o.drop_last = 1;
    epochs_crc(ds, &o, &b1, &i1);
    ASSERT_EQ(b1, 2 * 5); /* 250 each, 5 full batches of 48 */
    ASSERT_EQ(i1, 2 * 240);
    cgnn_dataset_close(ds);
}

/* A typed graph's link prediction batches: per type, blocks per (layer, edge type), pairs with
 * random negatives; the same for 0 and 2 sampler threads. */
TEST(typed_link_prediction) {
    cgnn_dataset *ds = NULL;
    cgnn_error e;
    ASSERT_EQ(cgnn_dataset_open(data("lastfm-mini"), 2, &ds, &e), CGNN_OK);
    const int T = cgnn_dataset_num_node_types(ds), K = cgnn_dataset_num_edge_types(ds);
    ASSERT_EQ(T, 3);
    ASSERT_EQ(K, 5);
    ASSERT_EQ(cgnn_dataset_task_kind(ds, 0), CGNN_TASK_LINK_PREDICTION);
    const int et = cgnn_dataset_task_type(ds, 0);
    ASSERT_STR_CONTAINS(cgnn_dataset_edge_type(ds, et), "listens");
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    o.batch_size = 64, o.fanouts[0] = 4, o.fanouts[1] = 2, o.num_negatives = 16, o.exclude_seed_edges = 1;
    o.num_workers = 0;
    cgnn_loader *l = NULL;
    ASSERT_EQ(cgnn_loader_create(ds, &o, &l, &e), CGNN_OK);
    ASSERT_EQ(cgnn_loader_start_epoch(l, 0, &e), CGNN_OK);
    cgnn_batch *b;
    ASSERT_EQ(cgnn_loader_next(l, &b, &e), CGNN_OK);
    ASSERT(b != NULL);
    cgnn_batch_info bi;
    cgnn_batch_info_get(b, &bi);
    ASSERT_EQ(bi.num_node_types, 3);
    ASSERT_EQ(bi.num_edge_types, 5);
    ASSERT_EQ(bi.num_items, 64);
    ASSERT_EQ(bi.num_negatives, 16);
    cgnn_array a;
    ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_ITEM_ROWS, 0, &a, &e), CGNN_OK);
    ASSERT_EQ(a.shape[0], 2 * 64 + 16);
    int64_t seeds = 0;
    for (int t = 0; t < T; t++) seeds += cgnn_batch_num_nodes(b, t, 0);
    for (int64_t i = 0; i < a.shape[0]; i++) ASSERT(((const int32_t *)a.data)[i] >= 0 && ((const int32_t *)a.data)[i] < seeds);
    for (int l2 = 0; l2 < 2; l2++)
        for (int k = 0; k < K; k++) { /* every block's sources are nodes of the batch */
            cgnn_array ip, ix;
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDPTR, l2 * K + k, &ip, &e), CGNN_OK);
            ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDICES, l2 * K + k, &ix, &e), CGNN_OK);
            if (ix.shape[0] > 0) ASSERT_EQ(((const int64_t *)ip.data)[ip.shape[0] - 1], ix.shape[0]);
        }
    cgnn_batch_release(b);
    cgnn_loader_free(l);
    int64_t b0, i0, b1, i1;
    const uint32_t c0 = epochs_crc(ds, &o, &b0, &i0);
    o.num_workers = 2;
    ASSERT_EQ(epochs_crc(ds, &o, &b1, &i1), c0);
    ASSERT_EQ(b0, b1);
    ASSERT_EQ(i0, 2 * cgnn_dataset_split_size(ds, 0, CGNN_SPLIT_TRAIN));
    cgnn_dataset_close(ds);
}

/* A typed node classification graph: each type's features, and a featureless type's none. */
TEST(typed_node_classification) {
    cgnn_dataset *ds = NULL;
    cgnn_error e;
    ASSERT_EQ(cgnn_dataset_open(data("dblp-mini"), 2, &ds, &e), CGNN_OK);
    ASSERT_EQ(cgnn_dataset_num_node_types(ds), 4);
    int venue = -1;
    for (int t = 0; t < 4; t++)
        if (strcmp(cgnn_dataset_node_type(ds, t), "venue") == 0) venue = t;
    ASSERT(venue >= 0);
    ASSERT_EQ(cgnn_dataset_feature_dim(ds, venue), 0);
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    o.batch_size = 16, o.num_workers = 1;
    cgnn_loader *l = NULL;
    ASSERT_EQ(cgnn_loader_create(ds, &o, &l, &e), CGNN_OK);
    ASSERT_EQ(cgnn_loader_start_epoch(l, 0, &e), CGNN_OK);
    cgnn_batch *b;
    ASSERT_EQ(cgnn_loader_next(l, &b, &e), CGNN_OK);
    ASSERT(b != NULL);
    cgnn_array a;
    const int seed_type = cgnn_dataset_task_type(ds, 0);
    ASSERT_EQ(cgnn_batch_num_nodes(b, seed_type, 0), 16);
    ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_FEATURES, seed_type, &a, &e), CGNN_OK);
    ASSERT_EQ(a.shape[1], cgnn_dataset_feature_dim(ds, seed_type));
    ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_FEATURES, venue, &a, &e), CGNN_ERROR_ARGUMENT);
    ASSERT_STR_CONTAINS(e.message, "no features");
    ASSERT_EQ(cgnn_batch_array(b, CGNN_FIELD_LABELS, 0, &a, &e), CGNN_OK);
    ASSERT_EQ(a.shape[0], 16);
    cgnn_batch_release(b);
    cgnn_loader_free(l);
    cgnn_dataset_close(ds);
}

/* A batch's buffers are the next batches' once the loader wraps around: holding more than
 * prefetch batches is refused (never a silent overwrite, never a hang). */
TEST(held_batches_rule) {
    cgnn_dataset *ds = NULL;
    cgnn_error e;
    ASSERT_EQ(cgnn_dataset_open(data("cora"), 2, &ds, &e), CGNN_OK);
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    o.split = CGNN_SPLIT_TEST, o.batch_size = 100, o.num_workers = 1, o.prefetch = 2;
    cgnn_loader *l = NULL;
    ASSERT_EQ(cgnn_loader_create(ds, &o, &l, &e), CGNN_OK);
    cgnn_batch *b0, *b1, *b2;
    ASSERT_EQ(cgnn_loader_next(l, &b0, &e), CGNN_ERROR_ARGUMENT); /* no epoch started */
    ASSERT_STR_CONTAINS(e.message, "cgnn_loader_start_epoch");
    ASSERT_EQ(cgnn_loader_start_epoch(l, 0, &e), CGNN_OK);
    ASSERT_EQ(cgnn_loader_next(l, &b0, &e), CGNN_OK);
    ASSERT_EQ(cgnn_loader_next(l, &b1, &e), CGNN_OK);
    ASSERT(b0 && b1);
    ASSERT_EQ(cgnn_loader_next(l, &b2, &e), CGNN_ERROR_ARGUMENT);
    ASSERT_STR_CONTAINS(e.message, "batch 0 is still held");
    cgnn_batch_info bi;
    cgnn_batch_info_get(b1, &bi);
    ASSERT_EQ(bi.index, 1);
    cgnn_batch_release(b0);
    ASSERT_EQ(cgnn_loader_next(l, &b2, &e), CGNN_OK);
    cgnn_batch_info_get(b2, &bi);
    ASSERT_EQ(bi.index, 2);
    /* a new epoch while batches are held: they stay valid, and its first batch takes the buffers
     * after the last one handed out (b1's are the last reused) */
    cgnn_array a1;
    ASSERT_EQ(cgnn_batch_array(b1, CGNN_FIELD_NODES, 0, &a1, &e), CGNN_OK);
    int64_t *copy = malloc((size_t)a1.shape[0] * 8);
    memcpy(copy, a1.data, (size_t)a1.shape[0] * 8);
    ASSERT_EQ(cgnn_loader_start_epoch(l, 1, &e), CGNN_OK);
    cgnn_batch *c0;
    ASSERT_EQ(cgnn_loader_next(l, &c0, &e), CGNN_ERROR_ARGUMENT); /* its buffers are b1's: held */
    ASSERT_STR_CONTAINS(e.message, "batch 1 is still held");
    cgnn_batch_release(b2);
    ASSERT_EQ(cgnn_loader_next(l, &c0, &e), CGNN_ERROR_ARGUMENT); /* still b1's */
    ASSERT(memcmp(copy, a1.data, (size_t)a1.shape[0] * 8) == 0); /* b1 untouched */
    free(copy);
    cgnn_batch_release(b1);
    ASSERT_EQ(cgnn_loader_next(l, &c0, &e), CGNN_OK);
    cgnn_batch_info_get(c0, &bi);
    ASSERT(bi.epoch == 1 && bi.index == 0);
    cgnn_batch_release(c0);
    cgnn_batch_release(b2);
    cgnn_batch_release(b2); /* twice: nothing */
    cgnn_array a;
    ASSERT_EQ(cgnn_batch_array(b2, CGNN_FIELD_NODES, 0, &a, &e), CGNN_ERROR_ARGUMENT);
    ASSERT_STR_CONTAINS(e.message, "released");
    cgnn_loader_free(l);
    cgnn_dataset_close(ds);
}

/* Every bad argument is CGNN_ERROR_ARGUMENT naming it; bad data is CGNN_ERROR_INPUT naming the
 * file; nothing is printed. */
TEST(errors_name_the_argument) {
    cgnn_dataset *ds = NULL;
    cgnn_error e;
    ASSERT_EQ(cgnn_dataset_open("/nonexistent/cgnn-data", 0, &ds, &e), CGNN_ERROR_INPUT);
    ASSERT_STR_CONTAINS(e.message, "/nonexistent/cgnn-data");
    ASSERT(ds == NULL);
    ASSERT_EQ(cgnn_dataset_open(data("cora"), -1, &ds, &e), CGNN_ERROR_ARGUMENT);
    ASSERT_EQ(cgnn_dataset_open(data("cora"), 2, &ds, &e), CGNN_OK);
    struct {
        const char *want;
        void (*set)(cgnn_loader_options *o);
    } cases[] = {
        {"options.task", NULL},
        {"options.split", NULL},
        {"options.batch_size", NULL},
        {"options.fanouts[1]", NULL},
        {"rank / world_size", NULL},
        {"num_negatives", NULL},
        {"options.num_workers", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cgnn_loader_options o;
        cgnn_loader_options_init(&o);
        switch (i) {
        case 0: o.task = 3; break;
        case 1: o.split = 7; break;
        case 2: o.batch_size = 0; break;
        case 3: o.fanouts[1] = 0; break;
        case 4: o.rank = 2, o.world_size = 2; break;
        case 5: o.num_negatives = 5; break; /* node classification */
        default: o.num_workers = -1; break;
        }
        cgnn_loader *l = NULL;
        ASSERT_EQ(cgnn_loader_create(ds, &o, &l, &e), CGNN_ERROR_ARGUMENT);
        ASSERT_EQ(e.code, CGNN_ERROR_ARGUMENT);
        ASSERT_STR_CONTAINS(e.message, cases[i].want);
        ASSERT(l == NULL);
    }
    ASSERT_EQ(cgnn_loader_create(ds, NULL, NULL, NULL), CGNN_ERROR_ARGUMENT); /* err may be NULL */
    cgnn_dataset_close(ds);
    cgnn_dataset_close(NULL);
    cgnn_loader_free(NULL);
    cgnn_batch_release(NULL);
}

/* pd (a partition: its own loaders, sliced by the job) against the whole graph at `whole` sliced
 * by rank / world: every batch of 2 epochs (CRC of every array: node ids, features, blocks, labels)
 * with 0 and 2 sampler threads, the description, the slicing rule; *batches: the batches compared. */
static void compare_with_whole(cgnn_dataset *pd, const char *whole, const char *kind, int rank, int world,
                               int64_t *batches) {
    cgnn_dataset *wd = NULL;
    cgnn_error e;
    if (cgnn_dataset_open(whole, 1, &wd, &e) != CGNN_OK) TEST_FAIL_("%s: %s", whole, e.message);
    if (!cgnn_dataset_is_partition(pd) || cgnn_dataset_is_partition(wd)) TEST_FAIL_("is_partition");
    for (int t = 0; t < cgnn_dataset_num_node_types(wd); t++)
        if (cgnn_dataset_num_nodes(pd, t) != cgnn_dataset_num_nodes(wd, t)) TEST_FAIL_("num_nodes of type %d", t);
    for (int k = 0; k < cgnn_dataset_num_edge_types(wd); k++)
        if (cgnn_dataset_num_edges(pd, k) != cgnn_dataset_num_edges(wd, k)) TEST_FAIL_("num_edges of type %d", k);
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    o.batch_size = 32;
    o.fanouts[0] = 5, o.fanouts[1] = 3;
    o.shuffle = 1;
    o.drop_uneven = 1;
    if (!strcmp(kind, "lp")) o.batch_size = 2048, o.num_negatives = 16, o.exclude_seed_edges = 1;
    for (int task = 0; task < cgnn_dataset_num_tasks(wd); task++)
        if (cgnn_dataset_task_kind(wd, task) == (!strcmp(kind, "lp") ? CGNN_TASK_LINK_PREDICTION : CGNN_TASK_NODE_CLASSIFICATION)) {
            o.task = task;
            break;
        }
    if (cgnn_dataset_split_size(pd, o.task, CGNN_SPLIT_TRAIN) != cgnn_dataset_split_size(wd, o.task, CGNN_SPLIT_TRAIN))
        TEST_FAIL_("the train split's size");
    int64_t pb = 0, pi = 0, wb = 0, wi = 0;
    for (int w = 0; w <= 2; w += 2) { /* 0 and 2 sampler threads */
        o.num_workers = w;
        const uint32_t pc = epochs_crc(pd, &o, &pb, &pi);
        cgnn_loader_options ow = o;
        ow.rank = rank, ow.world_size = world;
        const uint32_t wc = epochs_crc(wd, &ow, &wb, &wi);
        if (!(pb > 0 && pb == wb && pi == wi)) TEST_FAIL_("%lld / %lld batches, %lld / %lld items", (long long)pb,
                                                        (long long)wb, (long long)pi, (long long)wi);
        if (pc != wc) TEST_FAIL_("%d sampler threads: the batches differ from the whole graph's", w);
    }
    /* a partition's loaders are sliced by the job, and take its task only */
    cgnn_loader *l = NULL;
    cgnn_loader_options bad = o;
    bad.rank = 0, bad.world_size = world + 1;
    if (!(cgnn_loader_create(pd, &bad, &l, &e) == CGNN_ERROR_ARGUMENT && strstr(e.message, "sliced by the job")))
        TEST_FAIL_("a loader sliced otherwise than the job: not refused");
    cgnn_dataset_close(wd);
    *batches = pb;
}

/* Under mpirun (tests/test_api_dist.sh): CGNN_TEST_API_PARTITION=P:WHOLE:TASK_KIND opens partition P on
 * every rank with global seeds; its batches equal the whole graph WHOLE's loader's with this rank
 * and world size (compare_with_whole). Node classification (TASK_KIND nc) or link prediction (lp). */
/* getenv(var) = P:WHOLE:TASK_KIND into buf[cap] and its three fields; 0, or -1 when malformed. */
static int mpi_spec(const char *var, char *buf, size_t cap, const char **part, const char **whole, const char **kind) {
    char *save = NULL;
    snprintf(buf, cap, "%s", getenv(var) ? getenv(var) : "");
    *part = strtok_r(buf, ":", &save), *whole = strtok_r(NULL, ":", &save), *kind = strtok_r(NULL, ":", &save);
    return *part && *whole && *kind ? 0 : -1;
}

TEST(partition_batches_are_the_whole_graphs) {
    char buf[3 * 4096];
    const char *part, *whole, *kind;
    ASSERT(mpi_spec("CGNN_TEST_API_PARTITION", buf, sizeof buf, &part, &whole, &kind) == 0);
    cgnn_dataset_options dopt;
    cgnn_dataset_options_init(&dopt);
    dopt.seed_assignment = CGNN_SEEDS_GLOBAL;
    cgnn_dataset *pd = NULL;
    cgnn_error e;
    if (cgnn_dataset_open_with(part, &dopt, &pd, &e) != CGNN_OK) TEST_FAIL_("%s: %s", part, e.message);
    ASSERT(cgnn_dist_size() == 2);
    ASSERT(cgnn_dataset_compute_rank(pd) == cgnn_dist_rank() && cgnn_dataset_compute_size(pd) == 2);
    int64_t pb = 0;
    compare_with_whole(pd, whole, kind, cgnn_dist_rank(), cgnn_dist_size(), &pb);
    printf("rank %d: %lld batches (2 epochs) of the partition equal the whole graph's\n", cgnn_dist_rank(), (long long)pb);
    cgnn_dataset_close(pd); /* collective */
}

/* server-client mode: the compute ranks' function */
typedef struct store_ctx {
    const char *whole, *kind;
    int64_t batches;
    int fail; /* 1: return an error from compute rank 1 */
} store_ctx;

static int store_compute(void *ctx, cgnn_dataset *ds, cgnn_error *err) {
    store_ctx *c = ctx;
    if (c->fail) {
        if (cgnn_dataset_compute_rank(ds) != 1) return 0;
        err->code = CGNN_ERROR_INPUT;
        snprintf(err->message, sizeof err->message, "compute rank 1 says no");
        return -1;
    }
    compare_with_whole(ds, c->whole, c->kind, cgnn_dataset_compute_rank(ds), cgnn_dataset_compute_size(ds), &c->batches);
    return 0;
}

/* Under mpirun -np 4 (tests/test_api_dist.sh): CGNN_TEST_API_GRAPH_STORE=P:WHOLE:TASK_KIND runs
 * server-client mode, world ranks 2-3 storing P and building every batch: on the compute ranks
 * (world ranks 0-1) the batches equal WHOLE's loader's with their rank and world 2; a compute
 * function's error ends the run on every rank, its code and message on the rank that failed. */
TEST(graph_store_batches_are_the_whole_graphs) {
    char buf[3 * 4096];
    const char *part, *whole, *kind;
    ASSERT(mpi_spec("CGNN_TEST_API_GRAPH_STORE", buf, sizeof buf, &part, &whole, &kind) == 0);
    cgnn_dataset_options dopt;
    cgnn_dataset_options_init(&dopt);
    dopt.seed_assignment = CGNN_SEEDS_GLOBAL;
    store_ctx c = {whole, kind, 0, 0};
    cgnn_error e = {0};
    if (cgnn_graph_store_run(part, 2, &dopt, store_compute, &c, &e) != CGNN_OK) TEST_FAIL_("%s: %s", part, e.message);
    ASSERT(cgnn_dist_size() == 4);
    const int compute = cgnn_dist_rank() < 2;
    ASSERT(compute ? c.batches > 0 : c.batches == 0);
    if (compute) printf("rank %d: %lld batches (2 epochs) built by the storage ranks equal the whole graph's\n",
                        cgnn_dist_rank(), (long long)c.batches);
    c.fail = 1;
    const int rc = cgnn_graph_store_run(part, 2, &dopt, store_compute, &c, &e);
    ASSERT(rc != CGNN_OK);
    if (cgnn_dist_rank() == 1) ASSERT(rc == CGNN_ERROR_INPUT && strstr(e.message, "compute rank 1 says no"));
    /* the arguments */
    ASSERT(cgnn_graph_store_run(part, 4, &dopt, store_compute, &c, &e) == CGNN_ERROR_ARGUMENT &&
           strstr(e.message, "num_storage_ranks 4, but the job has 4 ranks"));
    ASSERT(cgnn_graph_store_run(part, 2, &dopt, NULL, &c, &e) == CGNN_ERROR_ARGUMENT && strstr(e.message, "compute is NULL"));
}

int main(void) {
    const char *spec = getenv("CGNN_TEST_API_PARTITION"), *gs = getenv("CGNN_TEST_API_GRAPH_STORE");
    if ((spec && spec[0]) || (gs && gs[0])) { /* (under mpirun: this test alone) */
        if (spec && spec[0]) RUN(partition_batches_are_the_whole_graphs);
        else RUN(graph_store_batches_are_the_whole_graphs);
        cgnn_dist_finalize();
        return test_summary();
    }
    RUN(cora_describe);
    RUN(cora_batches_are_the_native_loaders);
    RUN(workers_prefetch_and_slices);
    RUN(typed_link_prediction);
    RUN(typed_node_classification);
    RUN(held_batches_rule);
    RUN(errors_name_the_argument);
    return test_summary();
}
