/* test_dataset.c — GraphBolt OnDiskDataset loading: the bundled Cora, then small datasets built
 * in a temporary directory, one bad input at a time; every error must name the file and the
 * field or row, with code CGNN_ERR_INPUT, and leave the dataset closed. */
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "test.h"

/* ---- fixture: a tiny valid dataset --------------------------------------------------------
 * 10 nodes, 6 edges, node feature (10, 4) float32, task "nc" with 3 classes and 4/3/3 seeds. */

static const char BASE_META[] =
    "dataset_name: tiny\n"
    "graph:\n"
    "  nodes:\n"
    "    - num: 10\n"
    "  edges:\n"
    "    - format: numpy\n"
    "      path: edges.npy\n"
    "feature_data:\n"
    "  - domain: node\n"
    "    name: feat\n"
    "    format: numpy\n"
    "    in_memory: true\n"
    "    path: feat.npy\n"
    "tasks:\n"
    "  - name: nc\n"
    "    num_classes: 3\n"
    "    train_set:\n"
    "      - data:\n"
    "          - name: seeds\n"
    "            format: numpy\n"
    "            path: train-seeds.npy\n"
    "          - name: labels\n"
    "            format: numpy\n"
    "            path: train-labels.npy\n"
    "    validation_set:\n"
    "      - data:\n"
    "          - name: seeds\n"
    "            format: numpy\n"
    "            path: valid-seeds.npy\n"
    "          - name: labels\n"
    "            format: numpy\n"
    "            path: valid-labels.npy\n"
    "    test_set:\n"
    "      - data:\n"
    "          - name: seeds\n"
    "            format: numpy\n"
    "            path: test-seeds.npy\n"
    "          - name: labels\n"
    "            format: numpy\n"
    "            path: test-labels.npy\n";

static void write_npy(const char *dir, const char *name, npy_dtype dt, int ndim, int64_t d0,
                      int64_t d1, const void *data) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int64_t shape[2] = {d0, d1};
    cgnn_err err = {0};
    if (npy_write(path, dt, ndim, shape, data, &err) != 0) {
        fprintf(stderr, "fixture: %s\n", err.msg);
        exit(1);
    }
}

/* Writes a 2-D array the way np.save writes a transposed one: fortran_order True, data
 * column-major (element (i, j) at data[i + j * rows]); descr like "<i8". */
static void write_npy_fortran(const char *dir, const char *name, const char *descr, int64_t rows,
                              int64_t cols, const void *data, size_t elem) {
    char dict[160];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': True, 'shape': (%lld, %lld), }",
                     descr, (long long)rows, (long long)cols);
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64, bytes = (size_t)(rows * cols) * elem;
    unsigned char *buf = calloc(1, total + bytes);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)((total - 10) & 0xff);
    buf[9] = (unsigned char)((total - 10) >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    memcpy(buf + total, data, bytes);
    int rc = test_write_file(dir, name, buf, total + bytes);
    free(buf);
    if (rc != 0) {
        fprintf(stderr, "fixture: cannot write %s/%s\n", dir, name);
        exit(1);
    }
}

static void write_text(const char *dir, const char *name, const char *text) {
    if (test_write_file(dir, name, text, strlen(text)) != 0) {
        fprintf(stderr, "fixture: cannot write %s/%s\n", dir, name);
        exit(1);
    }
}

/* BASE_META with the first occurrence of `from` replaced by `to` (from NULL: unchanged). */
static char *meta_with(const char *from, const char *to) {
    size_t n = sizeof BASE_META + (to ? strlen(to) : 0);
    char *out = malloc(n);
    const char *at = from ? strstr(BASE_META, from) : NULL;
    if (from && !at) {
        fprintf(stderr, "fixture: '%s' not in the base metadata\n", from);
        exit(1);
    }
    if (!at) {
        memcpy(out, BASE_META, sizeof BASE_META);
        return out;
    }
    snprintf(out, n, "%.*s%s%s", (int)(at - BASE_META), BASE_META, to, at + strlen(from));
    return out;
}

/* Makes a fresh tiny dataset; metadata = BASE_META with from -> to. Caller frees. */
static char *make_tiny(const char *from, const char *to) {
    char *dir = test_tmpdir();
    int64_t edges[2][6] = {{0, 1, 2, 3, 4, 5}, {1, 2, 3, 4, 5, 9}};
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 2, 2, 6, edges);
    float feat[10 * 4];
    for (int i = 0; i < 40; i++) feat[i] = (float)i * 0.5f;
    write_npy(dir, "feat.npy", NPY_DTYPE_FLOAT32, 2, 10, 4, feat);
    int64_t tr_s[4] = {0, 1, 2, 3}, tr_l[4] = {0, 1, 2, 0};
    int32_t va_s[3] = {4, 5, 6}, va_l[3] = {1, 1, 2};
    int64_t te_s[3] = {7, 8, 9}, te_l[3] = {2, 0, 1};
    write_npy(dir, "train-seeds.npy", NPY_DTYPE_INT64, 1, 4, 1, tr_s);
    write_npy(dir, "train-labels.npy", NPY_DTYPE_INT64, 1, 4, 1, tr_l);
    write_npy(dir, "valid-seeds.npy", NPY_DTYPE_INT32, 1, 3, 1, va_s);
    write_npy(dir, "valid-labels.npy", NPY_DTYPE_INT32, 1, 3, 1, va_l);
    write_npy(dir, "test-seeds.npy", NPY_DTYPE_INT64, 1, 3, 1, te_s);
    write_npy(dir, "test-labels.npy", NPY_DTYPE_INT64, 1, 3, 1, te_l);
    char *meta = meta_with(from, to);
    write_text(dir, "metadata.yaml", meta);
    free(meta);
    return dir;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(char *dir) {
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* Opens dir, expects an input error whose message contains every string of the NULL-terminated
 * list (a leading "@" means "dir/" + the rest). Checks the dataset is left closed. */
static int expect_fail(const char *dir, const char *const *wants) {
    dataset ds;
    cgnn_err err = {0};
    int rc = dataset_open(&ds, dir, &err);
    int ok = rc == -1 && err.code == CGNN_ERR_INPUT && ds.num_tasks == 0 && ds.tasks == NULL &&
             ds.num_features == 0 && ds.edge_types == NULL && ds.node_types == NULL;
    for (const char *const *w = wants; ok && *w; w++) {
        char want[4200];
        if ((*w)[0] == '@')
            snprintf(want, sizeof want, "%s/%s", dir, *w + 1);
        else
            snprintf(want, sizeof want, "%s", *w);
        if (!strstr(err.msg, want)) {
            fprintf(stderr, "  message lacks '%s'\n", want);
            ok = 0;
        }
    }
    if (!ok) fprintf(stderr, "  rc %d code %d msg '%s'\n", rc, err.code, err.msg);
    if (rc == 0) dataset_close(&ds);
    return ok ? 0 : -1;
}

#define EXPECT_FAIL(dir, ...)                                                                  \
    do {                                                                                       \
        const char *const wants_[] = {__VA_ARGS__, NULL};                                      \
        if (expect_fail(dir, wants_) != 0) {                                                   \
            rm_tree(dir);                                                                      \
            TEST_FAIL_("dataset_open did not fail as expected");                               \
        }                                                                                      \
    } while (0)

/* ---- the bundled Cora ----------------------------------------------------------------------- */

TEST(cora) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data/cora", test_source_dir());
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(strcmp(ds.name, "cora"), 0);
    ASSERT_EQ(ds.num_node_types, 1);
    ASSERT_EQ(strcmp(ds.node_types[0].name, "_default"), 0);
    ASSERT_EQ(ds.node_types[0].num_nodes, 2708);
    ASSERT_EQ(dataset_total_nodes(&ds), 2708);
    ASSERT_EQ(dataset_find_node_type(&ds, "_default"), 0);
    ASSERT_EQ(dataset_find_node_type(&ds, "paper"), -1);
    ASSERT_EQ(ds.num_edge_types, 1);
    const ds_edge_type *et = &ds.edge_types[0];
    ASSERT_EQ(strcmp(et->name, "_default"), 0);
    ASSERT_EQ(et->src_type, 0);
    ASSERT_EQ(et->dst_type, 0);
    ASSERT_EQ(et->edges.num_edges, 10556);
    ASSERT(et->edges.id_dtype == NPY_DTYPE_INT32 || et->edges.id_dtype == NPY_DTYPE_INT64);
    {
        /* The bundled edges.npy is Fortran-ordered (np.save of a transposed (E, 2) array):
         * on disk the ids are (src, dst) pairs; the dataset holds a C-order (2, E) copy. */
        npy_array raw;
        char epath[4096];
        snprintf(epath, sizeof epath, "%s/data/cora/edges.npy", test_source_dir());
        ASSERT_EQ(npy_open_any_order(&raw, epath, 0, &err), 0);
        ASSERT_EQ(raw.shape[0], 2);
        ASSERT_EQ(raw.shape[1], 10556);
        int64_t e = raw.shape[1];
        int mismatch = 0;
        for (int64_t i = 0; i < e; i++) {
            int64_t rs = raw.fortran_order ? npy_get_int(&raw, 2 * i) : npy_get_int(&raw, i);
            int64_t rd = raw.fortran_order ? npy_get_int(&raw, 2 * i + 1) : npy_get_int(&raw, e + i);
            int64_t s = et->edges.id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)et->edges.src)[i]
                                                              : ((const int64_t *)et->edges.src)[i];
            int64_t d = et->edges.id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)et->edges.dst)[i]
                                                              : ((const int64_t *)et->edges.dst)[i];
            mismatch += rs != s || rd != d;
        }
        ASSERT_EQ(et->owned != NULL, raw.fortran_order);
        npy_close(&raw);
        ASSERT_EQ(mismatch, 0);
    }

    const ds_feature *f = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat");
    ASSERT(f != NULL);
    ASSERT_EQ(f->rows, 2708);
    ASSERT_EQ(f->dim, 1433);
    ASSERT_EQ(f->array.dtype, NPY_DTYPE_UINT8); /* Cora's bag-of-words features are stored as uint8 */
    ASSERT_EQ(f->in_memory, 1);
    ASSERT(dataset_find_feature(&ds, DS_DOMAIN_EDGE, 0, "feat") == NULL);
    ASSERT(dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "label") == NULL);

    ASSERT_EQ(ds.num_tasks, 1);
    const ds_task *t = dataset_find_task(&ds, "node_classification");
    ASSERT(t != NULL);
    ASSERT(dataset_find_task(&ds, "link_prediction") == NULL);
    ASSERT_EQ(t->kind, DS_TASK_NODE_CLASSIFICATION);
    ASSERT_EQ(strcmp(ds_task_kind_name(t->kind), "node_classification"), 0);
    ASSERT_EQ(t->num_classes, 7);
    const int64_t sizes[DS_SPLIT_COUNT] = {140, 500, 1000};
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const ds_split *sp = &t->splits[s];
        ASSERT_EQ(sp->present, 1);
        ASSERT_EQ(sp->num_items, sizes[s]);
        ASSERT_EQ(sp->seed_width, 1);
        ASSERT(sp->labels != NULL);
        ASSERT(sp->indexes == NULL);
        ASSERT_STR_CONTAINS(sp->seeds_path, "nc-");
        for (int64_t i = 0; i < sp->num_items; i++) {
            ASSERT(sp->seeds[i] >= 0 && sp->seeds[i] < 2708);
            ASSERT(sp->labels[i] >= 0 && sp->labels[i] < 7);
        }
    }
    ASSERT_EQ(strcmp(ds_split_name(DS_SPLIT_VALID), "validation_set"), 0);
    dataset_close(&ds);
    ASSERT(ds.tasks == NULL && ds.num_tasks == 0);
    dataset_close(&ds); /* twice is safe */
    dataset_close(NULL);

    /* The metadata.yaml path itself, and a trailing slash, name the same dataset. */
    snprintf(path, sizeof path, "%s/data/cora/metadata.yaml", test_source_dir());
    if (dataset_open(&ds, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.edge_types[0].edges.num_edges, 10556);
    dataset_close(&ds);
    snprintf(path, sizeof path, "%s/data/cora/", test_source_dir());
    if (dataset_open(&ds, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(strcmp(ds.name, "cora"), 0);
    dataset_close(&ds);
}

TEST(zeroed_close) {
    dataset ds;
    memset(&ds, 0, sizeof ds);
    dataset_close(&ds);
    dataset_close(NULL);
}

TEST(tiny_ok) {
    char *dir = make_tiny(NULL, NULL);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    ASSERT_EQ(strcmp(ds.name, "tiny"), 0);
    ASSERT_EQ(ds.edge_types[0].edges.num_edges, 6);
    ASSERT_EQ(((const int64_t *)ds.edge_types[0].edges.dst)[5], 9);
    ASSERT_EQ(ds.features[0].dim, 4);
    const ds_task *t = dataset_find_task(&ds, "nc");
    ASSERT(t && t->kind == DS_TASK_NODE_CLASSIFICATION);
    ASSERT_EQ(t->splits[DS_SPLIT_TRAIN].num_items, 4);
    ASSERT_EQ(t->splits[DS_SPLIT_VALID].num_items, 3);
    ASSERT_EQ(t->splits[DS_SPLIT_VALID].seeds[2], 6); /* int32 on disk -> int64 */
    ASSERT_EQ(t->splits[DS_SPLIT_VALID].labels[2], 2);
    ASSERT_EQ(t->splits[DS_SPLIT_TEST].labels[0], 2);
    dataset_close(&ds);
    rm_tree(dir);
}

/* ---- bad inputs ------------------------------------------------------------------------------ */

TEST(missing_metadata_and_dir) {
    char *dir = test_tmpdir();
    EXPECT_FAIL(dir, "@metadata.yaml: cannot open: No such file or directory");
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    dataset ds;
    cgnn_err err = {0};
    ASSERT_EQ(dataset_open(&ds, missing, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, missing);
    ASSERT_STR_CONTAINS(err.msg, "cannot open");
    rm_tree(dir);
}

TEST(malformed_yaml) {
    char *dir = make_tiny("  nodes:\n    - num: 10\n", "  nodes: [{num: 10}\n");
    EXPECT_FAIL(dir, "@metadata.yaml:4:3: did not find expected ',' or ']'");
    rm_tree(dir);
    dir = make_tiny(NULL, NULL);
    write_text(dir, "metadata.yaml", "- just\n- a list\n");
    EXPECT_FAIL(dir, "@metadata.yaml: top level (line 1): expected a mapping, got a list");
    rm_tree(dir);
}

TEST(missing_key) {
    char *dir = make_tiny("    - num: 10\n", "    - {}\n");
    EXPECT_FAIL(dir, "@metadata.yaml: graph.nodes[0]: missing key 'num'");
    rm_tree(dir);
    dir = make_tiny("            path: train-labels.npy\n", "");
    EXPECT_FAIL(dir, "@metadata.yaml: tasks[0].train_set[0].data[1]: missing key 'path'");
    rm_tree(dir);
    dir = make_tiny("    - num: 10\n", "    - num: ten\n");
    EXPECT_FAIL(dir, "@metadata.yaml: graph.nodes[0].num (line 4): expected an integer, got 'ten'");
    rm_tree(dir);
    dir = make_tiny("    - num: 10\n", "    - num: 0\n");
    EXPECT_FAIL(dir, "graph.nodes[0].num (line 4)", "must be positive");
    rm_tree(dir);
}

TEST(unknown_key_suggestion) {
    char *dir = make_tiny("    in_memory: true\n", "    in_memroy: true\n");
    EXPECT_FAIL(dir, "@metadata.yaml: feature_data[0].in_memroy (line 12): unknown key 'in_memroy'",
                "did you mean 'in_memory'?");
    rm_tree(dir);
    dir = make_tiny("feature_data:\n", "feature_dat:\n");
    EXPECT_FAIL(dir, "unknown key 'feature_dat'", "did you mean 'feature_data'?");
    rm_tree(dir);
    dir = make_tiny("  edges:\n", "  edgs:\n");
    EXPECT_FAIL(dir, "graph.edgs", "did you mean 'edges'?");
    rm_tree(dir);
    /* task level: extra attributes are tolerated, typos of known keys are not */
    dir = make_tiny("    num_classes: 3\n", "    num_classes: 3\n    description: tiny task\n");
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("extra task attribute rejected: %s", err.msg);
    }
    dataset_close(&ds);
    rm_tree(dir);
    dir = make_tiny("    train_set:\n", "    train_sets:\n");
    EXPECT_FAIL(dir, "tasks[0].train_sets", "did you mean 'train_set'?");
    rm_tree(dir);
    dir = make_tiny("      path: edges.npy\n", "      path: edges.npy\n      format2: x\n");
    EXPECT_FAIL(dir, "graph.edges[0].format2", "unknown key 'format2'");
    rm_tree(dir);
}

TEST(edge_files) {
    char *dir = make_tiny("      path: edges.npy\n", "      path: nope.npy\n");
    EXPECT_FAIL(dir, "@nope.npy: cannot open", "graph.edges[0].path");
    rm_tree(dir);

    dir = make_tiny(NULL, NULL);
    int64_t e3[3][4] = {{0}};
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 2, 3, 4, e3);
    EXPECT_FAIL(dir, "@edges.npy", "graph.edges[0]", "expected shape (2, E)", "got (3, 4)");
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 1, 12, 1, e3);
    EXPECT_FAIL(dir, "@edges.npy", "got (12,)");
    float ef[2][6] = {{0}};
    write_npy(dir, "edges.npy", NPY_DTYPE_FLOAT32, 2, 2, 6, ef);
    EXPECT_FAIL(dir, "@edges.npy", "graph.edges[0]", "expected int32 or int64", "got float32");
    rm_tree(dir);

    dir = make_tiny("    - format: numpy\n", "    - format: parquet\n");
    EXPECT_FAIL(dir, "graph.edges[0].format", "unsupported format 'parquet'");
    rm_tree(dir);
}

TEST(edge_ids_out_of_range) {
    char *dir = make_tiny(NULL, NULL);
    int64_t e[2][6] = {{0, 1, 2, 3, 4, 5}, {1, 2, 3, 4, 10, 11}};
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 2, 2, 6, e);
    EXPECT_FAIL(dir, "@edges.npy: column 4: dst id 10 out of range [0, 10) (graph.nodes[0].num)");
    int32_t e32[2][6] = {{0, 1, -3, 3, 4, 5}, {1, 2, 3, 40, 1, 1}};
    write_npy(dir, "edges.npy", NPY_DTYPE_INT32, 2, 2, 6, e32);
    EXPECT_FAIL(dir, "@edges.npy: column 2: src id -3 out of range [0, 10)");

    /* Many edges, several bad ones spread over the threads: the first is reported. */
    int64_t n = 200000;
    int32_t *big = malloc((size_t)(2 * n) * sizeof *big);
    for (int64_t i = 0; i < n; i++) {
        big[i] = (int32_t)(i % 10);
        big[n + i] = (int32_t)((i * 7) % 10);
    }
    big[n + 150001] = 12;
    big[170000] = 99;
    big[n + 123457] = 10;
    big[199999] = -1;
    write_npy(dir, "edges.npy", NPY_DTYPE_INT32, 2, 2, n, big);
    free(big);
    EXPECT_FAIL(dir, "@edges.npy: column 123457: dst id 10 out of range [0, 10)");
    rm_tree(dir);
}

TEST(csv_edges) {
    char *dir = make_tiny("    - format: numpy\n      path: edges.npy\n",
                          "    - format: csv\n      path: edges.csv\n");
    write_text(dir, "edges.csv", "0,1\n 2 , 3\n\n4,5\r\n  \n9,0");
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    const ds_edges *e = &ds.edge_types[0].edges;
    ASSERT_EQ(e->num_edges, 4);
    ASSERT_EQ(e->id_dtype, NPY_DTYPE_INT64);
    const int64_t *src = e->src, *dst = e->dst;
    ASSERT_EQ(src[1], 2);
    ASSERT_EQ(dst[1], 3);
    ASSERT_EQ(src[3], 9);
    ASSERT_EQ(dst[3], 0);
    ASSERT(ds.edge_types[0].owned != NULL);
    dataset_close(&ds);

    write_text(dir, "edges.csv", "0,1\n1;2\n");
    EXPECT_FAIL(dir, "@edges.csv:2: expected two integer columns");
    write_text(dir, "edges.csv", "0,1\n1,2,3\n");
    EXPECT_FAIL(dir, "@edges.csv:2: expected two integer columns");
    /* a header line of two names first is skipped (and said); anywhere else it is an error, and
     * so is a first line that is neither ids nor two names */
    write_text(dir, "edges.csv", "\nsrc,dst\n0,1\n2,3\n");
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    ASSERT_EQ(ds.edge_types[0].edges.num_edges, 2);
    ASSERT_EQ(((const int64_t *)ds.edge_types[0].edges.src)[0], 0);
    ASSERT_EQ(((const int64_t *)ds.edge_types[0].edges.dst)[1], 3);
    dataset_close(&ds);
    write_text(dir, "edges.csv", "0,1\nsrc,dst\n");
    EXPECT_FAIL(dir, "@edges.csv:2: expected two integer columns \"src,dst\" (a header line may only come first)");
    write_text(dir, "edges.csv", "src,dst,w\n0,1\n");
    EXPECT_FAIL(dir, "@edges.csv:1: expected two integer columns");
    write_text(dir, "edges.csv", "0x1,2\n");
    EXPECT_FAIL(dir, "@edges.csv:1: expected two integer columns");
    write_text(dir, "edges.csv", "0,1\n\n3,12\n");
    EXPECT_FAIL(dir, "@edges.csv:3: dst id 12 out of range [0, 10)");
    /* Found with fuzz_metadata: a device was read as one endless line (/dev/zero: malloc past
     * 2 GB) and a FIFO blocked in fopen; only regular files are read now. */
    rm_tree(dir);
    dir = make_tiny("    - format: numpy\n      path: edges.npy\n",
                    "    - format: csv\n      path: /dev/zero\n");
    EXPECT_FAIL(dir, "/dev/zero: cannot read: it is a character device, not a regular file (graph.edges[0].path in");
    rm_tree(dir);
    dir = make_tiny("    - format: numpy\n      path: edges.npy\n",
                    "    - format: csv\n      path: edges.fifo\n");
    char fifo[4200];
    snprintf(fifo, sizeof fifo, "%s/edges.fifo", dir);
    ASSERT_EQ(mkfifo(fifo, 0600), 0);
    EXPECT_FAIL(dir, "@edges.fifo: cannot read: it is a FIFO, not a regular file");
    rm_tree(dir);
}

TEST(feature_errors) {
    char *dir = make_tiny(NULL, NULL);
    float f9[9 * 4] = {0};
    write_npy(dir, "feat.npy", NPY_DTYPE_FLOAT32, 2, 9, 4, f9);
    EXPECT_FAIL(dir, "@feat.npy: feature_data[0]: has 9 rows, expected 10 (graph.nodes[0].num)");
    rm_tree(dir);

    dir = make_tiny("    path: feat.npy\n", "    path: missing-feat.npy\n");
    EXPECT_FAIL(dir, "@missing-feat.npy: cannot open", "feature_data[0].path");
    rm_tree(dir);

    dir = make_tiny("  - domain: node\n", "  - domain: graphs\n");
    EXPECT_FAIL(dir, "feature_data[0].domain (line 9): expected node, edge or graph, got 'graphs'");
    rm_tree(dir);

    /* edge features must have one row per edge; uint8 (1-D) is a valid feature dtype */
    dir = make_tiny("  - domain: node\n", "  - domain: edge\n");
    uint8_t u[6] = {1, 2, 3, 4, 5, 6};
    write_npy(dir, "feat.npy", NPY_DTYPE_UINT8, 1, 6, 1, u);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    const ds_feature *f = dataset_find_feature(&ds, DS_DOMAIN_EDGE, 0, "feat");
    ASSERT(f && f->rows == 6 && f->dim == 1);
    dataset_close(&ds);
    write_npy(dir, "feat.npy", NPY_DTYPE_UINT8, 1, 5, 1, u);
    EXPECT_FAIL(dir, "@feat.npy: feature_data[0]: has 5 rows, expected 6");
    rm_tree(dir);
}

TEST(seed_and_label_errors) {
    char *dir = make_tiny(NULL, NULL);
    int64_t s_bad[4] = {0, 1, 2, 99};
    write_npy(dir, "train-seeds.npy", NPY_DTYPE_INT64, 1, 4, 1, s_bad);
    EXPECT_FAIL(dir, "@train-seeds.npy: row 3: seed 99 out of range [0, 10) (tasks[0].train_set)");
    float s_f[4] = {0};
    write_npy(dir, "train-seeds.npy", NPY_DTYPE_FLOAT32, 1, 4, 1, s_f);
    EXPECT_FAIL(dir, "@train-seeds.npy", "expected int32 or int64", "got float32");
    int64_t s_ok[4] = {0, 1, 2, 3};
    write_npy(dir, "train-seeds.npy", NPY_DTYPE_INT64, 1, 4, 1, s_ok);

    int64_t l_neg[4] = {0, 1, -1, 2};
    write_npy(dir, "train-labels.npy", NPY_DTYPE_INT64, 1, 4, 1, l_neg);
    EXPECT_FAIL(dir, "@train-labels.npy: row 2: label -1 is negative (tasks[0].train_set)");
    int32_t l_big[3] = {0, 3, 1};
    write_npy(dir, "valid-labels.npy", NPY_DTYPE_INT32, 1, 3, 1, l_big);
    int64_t l_ok[4] = {0, 1, 2, 2};
    write_npy(dir, "train-labels.npy", NPY_DTYPE_INT64, 1, 4, 1, l_ok);
    EXPECT_FAIL(dir, "@valid-labels.npy: row 1: label 3 out of range [0, 3) (tasks[0].validation_set",
                "num_classes");
    int32_t l_short[2] = {0, 1};
    write_npy(dir, "valid-labels.npy", NPY_DTYPE_INT32, 1, 2, 1, l_short);
    EXPECT_FAIL(dir, "@valid-labels.npy: labels (tasks[0].validation_set[0].data[1]): has 2 rows",
                "the seeds have 3", "@valid-seeds.npy");
    float l_f[3] = {0, 0.5f, 1}; /* float labels are read when they hold integers (GraphBolt's tutorials) */
    write_npy(dir, "valid-labels.npy", NPY_DTYPE_FLOAT32, 1, 3, 1, l_f);
    EXPECT_FAIL(dir, "@valid-labels.npy: row 1: labels value 0.5 is not an integer (tasks[0].validation_set[0].data[1])");
    rm_tree(dir);

    /* node seeds without labels: read (GraphBolt loads them), but not a node classification task */
    dir = make_tiny("          - name: labels\n            format: numpy\n            path: train-labels.npy\n",
                    "");
    {
        dataset ds;
        cgnn_err err = {0};
        if (dataset_open(&ds, dir, &err) != 0) TEST_FAIL_("%s", err.msg);
        ASSERT_EQ(ds.num_tasks, 1);
        ASSERT_EQ(ds.tasks[0].kind, DS_TASK_OTHER);
        ASSERT(ds.tasks[0].splits[DS_SPLIT_TRAIN].labels == NULL && ds.tasks[0].splits[DS_SPLIT_TRAIN].num_items == 4);
        dataset_close(&ds);
    }
    rm_tree(dir);

    /* seeds with a bad shape */
    dir = make_tiny(NULL, NULL);
    int64_t s3[4 * 3] = {0};
    write_npy(dir, "test-seeds.npy", NPY_DTYPE_INT64, 2, 4, 3, s3);
    EXPECT_FAIL(dir, "@test-seeds.npy", "expected shape (N,) node ids or (M, 2) node pairs, got (4, 3)");
    rm_tree(dir);
}

/* Removes the first occurrence of what from s (which must contain it). */
static void cut(char *s, const char *what) {
    char *p = strstr(s, what);
    if (!p) {
        fprintf(stderr, "fixture: '%s' not found\n", what);
        exit(1);
    }
    size_t n = strlen(what);
    memmove(p, p + n, strlen(p + n) + 1);
}

/* LP fixture: seeds (M, 2) in every split, labels + indexes in validation. */
static char *make_lp(void) {
    char *dir = make_tiny("  - name: nc\n    num_classes: 3\n", "  - name: lp\n");
    int64_t tr[4][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}};
    int32_t va[3][2] = {{4, 5}, {4, 6}, {4, 7}};
    int64_t va_l[3] = {1, 0, 0}, va_i[3] = {0, 0, 0};
    int64_t te[2][2] = {{8, 9}, {9, 8}};
    write_npy(dir, "train-seeds.npy", NPY_DTYPE_INT64, 2, 4, 2, tr);
    write_npy(dir, "valid-seeds.npy", NPY_DTYPE_INT32, 2, 3, 2, va);
    write_npy(dir, "valid-labels.npy", NPY_DTYPE_INT64, 1, 3, 1, va_l);
    write_npy(dir, "valid-indexes.npy", NPY_DTYPE_INT64, 1, 3, 1, va_i);
    write_npy(dir, "test-seeds.npy", NPY_DTYPE_INT64, 2, 2, 2, te);
    char *meta = meta_with("  - name: nc\n    num_classes: 3\n", "  - name: lp\n");
    /* drop train/test labels, add validation indexes */
    cut(meta, "          - name: labels\n            format: numpy\n            path: train-labels.npy\n");
    cut(meta, "          - name: labels\n            format: numpy\n            path: test-labels.npy\n");
    const char *idx = "          - name: indexes\n            format: numpy\n            path: valid-indexes.npy\n";
    size_t len = strlen(meta) + strlen(idx) + 1;
    char *full = malloc(len);
    char *p = strstr(meta, "    test_set:\n");
    snprintf(full, len, "%.*s%s%s", (int)(p - meta), meta, idx, p);
    write_text(dir, "metadata.yaml", full);
    free(full);
    free(meta);
    return dir;
}

TEST(link_prediction) {
    char *dir = make_lp();
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    const ds_task *t = dataset_find_task(&ds, "lp");
    ASSERT(t != NULL);
    ASSERT_EQ(t->kind, DS_TASK_LINK_PREDICTION);
    ASSERT_EQ(t->num_classes, 0);
    const ds_split *tr = &t->splits[DS_SPLIT_TRAIN], *va = &t->splits[DS_SPLIT_VALID];
    ASSERT_EQ(tr->seed_width, 2);
    ASSERT_EQ(tr->num_items, 4);
    ASSERT_EQ(tr->seeds[2 * 3 + 1], 4); /* (row 3, col 1) */
    ASSERT(tr->labels == NULL && tr->indexes == NULL);
    ASSERT_EQ(va->num_items, 3);
    ASSERT_EQ(va->seeds[2 * 2 + 1], 7);
    ASSERT(va->labels && va->indexes);
    ASSERT_EQ(va->labels[0], 1);
    ASSERT_EQ(t->splits[DS_SPLIT_TEST].num_items, 2);
    dataset_close(&ds);

    /* pair seeds out of range: the row is reported */
    int64_t te[2][2] = {{8, 9}, {9, 10}};
    write_npy(dir, "test-seeds.npy", NPY_DTYPE_INT64, 2, 2, 2, te);
    EXPECT_FAIL(dir, "@test-seeds.npy: row 1: seed 10 out of range [0, 10) (tasks[0].test_set)");
    /* indexes length mismatch */
    int64_t te_ok[2][2] = {{8, 9}, {9, 8}};
    write_npy(dir, "test-seeds.npy", NPY_DTYPE_INT64, 2, 2, 2, te_ok);
    int64_t idx[3] = {0, 0, 0};
    write_npy(dir, "valid-indexes.npy", NPY_DTYPE_INT64, 1, 2, 1, idx);
    EXPECT_FAIL(dir, "@valid-indexes.npy: indexes", "has 2 rows");
    /* kinds must agree across splits */
    write_npy(dir, "valid-indexes.npy", NPY_DTYPE_INT64, 1, 3, 1, idx);
    int64_t node_seeds[2] = {8, 9};
    write_npy(dir, "test-seeds.npy", NPY_DTYPE_INT64, 1, 2, 1, node_seeds);
    EXPECT_FAIL(dir, "@metadata.yaml: tasks[0].test_set", "link_prediction");
    rm_tree(dir);
}

/* An untyped graph (one node entry without type:) takes no type: keys anywhere else, and a typed
 * node entry needs typed edges. */
TEST(type_keys_need_typed_graph) {
    char *dir = make_tiny("    - num: 10\n", "    - type: paper\n      num: 10\n");
    EXPECT_FAIL(dir, "@metadata.yaml: graph.edges[0]: missing key 'type'");
    rm_tree(dir);
    dir = make_tiny("    - format: numpy\n      path: edges.npy\n",
                    "    - type: paper:cites:paper\n      format: numpy\n      path: edges.npy\n");
    EXPECT_FAIL(dir, "graph.edges[0].type", "needs typed node entries");
    rm_tree(dir);
    dir = make_tiny("    name: feat\n", "    name: feat\n    type: paper\n");
    EXPECT_FAIL(dir, "feature_data[0].type", "needs a typed graph");
    rm_tree(dir);
    dir = make_tiny("    train_set:\n      - data:\n", "    train_set:\n      - type: paper\n        data:\n");
    EXPECT_FAIL(dir, "@metadata.yaml: tasks[0].train_set[0].type", "task 'nc', train_set", "needs a typed graph");
    rm_tree(dir);
    /* mixing typed and untyped node entries */
    dir = make_tiny("    - num: 10\n", "    - type: paper\n      num: 10\n    - num: 3\n");
    EXPECT_FAIL(dir, "@metadata.yaml: graph.nodes[1]", "cannot be mixed");
    rm_tree(dir);
}

TEST(in_memory_false) {
    char *dir = make_tiny("    in_memory: true\n", "    in_memory: false\n");
    char *meta = meta_with("    in_memory: true\n", "    in_memory: FALSE\n");
    const char *from = "            path: valid-seeds.npy\n";
    char *p = strstr(meta, from);
    size_t len = strlen(meta) + 64;
    char *full = malloc(len);
    snprintf(full, len, "%.*s%s            in_memory: false\n%s", (int)(p - meta), meta, from,
             p + strlen(from));
    write_text(dir, "metadata.yaml", full);
    free(full);
    free(meta);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    const ds_feature *f = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat");
    ASSERT_EQ(f->in_memory, 0);
    ASSERT_NEAR(((const float *)f->array.data)[4 * 9 + 3], 39 * 0.5, 0);
    ASSERT_EQ(dataset_find_task(&ds, "nc")->splits[DS_SPLIT_VALID].seeds[1], 5);
    dataset_close(&ds);
    rm_tree(dir);

    dir = make_tiny("    in_memory: true\n", "    in_memory: maybe\n");
    EXPECT_FAIL(dir, "feature_data[0].in_memory (line 12): expected true or false, got 'maybe'");
    rm_tree(dir);
}

TEST(fortran_order_files) {
    /* edges (2, 6) int32 and features (10, 4) float32 saved Fortran-ordered */
    char *dir = make_tiny(NULL, NULL);
    int32_t pairs[12] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 9}; /* column-major (2, 6) */
    write_npy_fortran(dir, "edges.npy", "<i4", 2, 6, pairs, 4);
    float feat[40];
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 4; j++) feat[i + j * 10] = (float)(i * 4 + j);
    write_npy_fortran(dir, "feat.npy", "<f4", 10, 4, feat, 4);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    const ds_edges *e = &ds.edge_types[0].edges;
    ASSERT_EQ(e->id_dtype, NPY_DTYPE_INT32);
    ASSERT_EQ(e->num_edges, 6);
    ASSERT_EQ(((const int32_t *)e->src)[4], 4);
    ASSERT_EQ(((const int32_t *)e->dst)[4], 5);
    ASSERT_EQ(((const int32_t *)e->dst)[5], 9);
    const ds_feature *f = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat");
    ASSERT(f->owned != NULL && f->array.data == f->owned);
    ASSERT_EQ(f->array.fortran_order, 0);
    ASSERT_EQ(f->array.count, 40);
    const float *rows = f->array.data;
    for (int k = 0; k < 40; k++) ASSERT_NEAR(rows[k], k, 0);
    dataset_close(&ds);

    /* an out-of-range id in a Fortran-order file is reported by its column */
    pairs[7] = 10; /* dst of column 3 */
    write_npy_fortran(dir, "edges.npy", "<i4", 2, 6, pairs, 4);
    EXPECT_FAIL(dir, "@edges.npy: column 3: dst id 10 out of range [0, 10)");
    rm_tree(dir);

    /* link-prediction seeds (M, 2) saved Fortran-ordered */
    dir = make_lp();
    int64_t tr[8] = {0, 1, 2, 3, 1, 2, 3, 4}; /* column-major (4, 2): rows (0,1) (1,2) (2,3) (3,4) */
    write_npy_fortran(dir, "train-seeds.npy", "<i8", 4, 2, tr, 8);
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    const ds_split *sp = &ds.tasks[0].splits[DS_SPLIT_TRAIN];
    ASSERT_EQ(sp->num_items, 4);
    ASSERT_EQ(sp->seeds[0], 0);
    ASSERT_EQ(sp->seeds[1], 1);
    ASSERT_EQ(sp->seeds[2 * 3 + 0], 3);
    ASSERT_EQ(sp->seeds[2 * 3 + 1], 4);
    dataset_close(&ds);
    rm_tree(dir);
}

TEST(facebook_lp) {
    const char *dir = "/work/shared/data/facebook-lp";
    struct stat st;
    if (stat(dir, &st) != 0) SKIP("%s not present", dir);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_tasks, 1);
    ASSERT_EQ(ds.tasks[0].kind, DS_TASK_LINK_PREDICTION);
    ASSERT_EQ(ds.node_types[0].num_nodes, 22470);
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        ASSERT_EQ(ds.tasks[0].splits[s].present, 1);
        ASSERT_EQ(ds.tasks[0].splits[s].seed_width, 2);
        ASSERT(ds.tasks[0].splits[s].num_items > 0);
    }
    dataset_close(&ds);
}

/* ---- typed (heterogeneous) datasets ------------------------------------------------------ */

static int64_t id_at(const ds_edges *e, const void *ids, int64_t i) {
    return e->id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

TEST(dblp_mini) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data/dblp-mini", test_source_dir());
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(dataset_is_typed(&ds), 1);
    ASSERT_EQ(ds.num_node_types, 4);
    const char *names[4] = {"author", "paper", "term", "venue"};
    const int64_t nums[4] = {600, 2881, 3239, 20};
    int64_t off = 0;
    for (int t = 0; t < 4; t++) {
        ASSERT_EQ(strcmp(ds.node_types[t].name, names[t]), 0);
        ASSERT_EQ(ds.node_types[t].num_nodes, nums[t]);
        ASSERT_EQ(dataset_find_node_type(&ds, names[t]), t);
        ASSERT_EQ(dataset_node_type_offset(&ds, t), off);
        off += nums[t];
    }
    ASSERT_EQ(dataset_node_type_offset(&ds, 4), off);
    ASSERT_EQ(dataset_total_nodes(&ds), 6740);
    ASSERT_EQ(ds.num_edge_types, 6);
    const char *etypes[6] = {"author:writes:paper", "paper:written_by:author", "paper:has_term:term",
                             "term:term_of:paper", "paper:published_in:venue", "venue:publishes:paper"};
    const int src[6] = {0, 1, 1, 2, 1, 3}, dst[6] = {1, 0, 2, 1, 3, 1};
    const int64_t ne[6] = {3054, 3054, 17358, 17358, 2881, 2881};
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ(strcmp(ds.edge_types[i].name, etypes[i]), 0);
        ASSERT_EQ(dataset_find_edge_type(&ds, etypes[i]), i);
        ASSERT_EQ(ds.edge_types[i].src_type, src[i]);
        ASSERT_EQ(ds.edge_types[i].dst_type, dst[i]);
        ASSERT_EQ(ds.edge_types[i].edges.num_edges, ne[i]);
    }
    ASSERT_EQ(dataset_find_edge_type(&ds, "author:reads:paper"), -1);
    ASSERT_EQ(dataset_find_edge_type(&ds, "author"), -1);
    /* features per type; venue featureless */
    ASSERT_EQ(ds.num_features, 3);
    const ds_feature *fa = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat");
    const ds_feature *fp = dataset_find_feature(&ds, DS_DOMAIN_NODE, 1, "feat");
    const ds_feature *ft = dataset_find_feature(&ds, DS_DOMAIN_NODE, 2, "feat");
    ASSERT(fa && fp && ft);
    ASSERT_EQ(dataset_find_feature(&ds, DS_DOMAIN_NODE, 3, "feat") == NULL, 1);
    ASSERT_EQ(fa->rows, 600);
    ASSERT_EQ(fa->dim, 334);
    ASSERT_EQ(fa->array.dtype, NPY_DTYPE_UINT8);
    ASSERT_EQ(fp->rows, 2881);
    ASSERT_EQ(fp->dim, 256);
    ASSERT_EQ(ft->rows, 3239);
    ASSERT_EQ(ft->dim, 50);
    ASSERT_EQ(ft->array.dtype, NPY_DTYPE_FLOAT32);
    /* the task: NC on authors */
    ASSERT_EQ(ds.num_tasks, 1);
    const ds_task *t = &ds.tasks[0];
    ASSERT_EQ(t->kind, DS_TASK_NODE_CLASSIFICATION);
    ASSERT_EQ(t->type, 0);
    ASSERT_EQ(t->num_classes, 4);
    const int64_t items[3] = {144, 36, 420};
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        ASSERT_EQ(t->splits[s].present, 1);
        ASSERT_EQ(t->splits[s].num_items, items[s]);
        for (int64_t i = 0; i < items[s]; i++) {
            ASSERT(t->splits[s].seeds[i] >= 0 && t->splits[s].seeds[i] < 600);
            ASSERT(t->splits[s].labels[i] >= 0 && t->splits[s].labels[i] < 4);
        }
    }
    dataset_close(&ds);
}

TEST(lastfm_mini) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data/lastfm-mini", test_source_dir());
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(dataset_is_typed(&ds), 1);
    ASSERT_EQ(ds.num_node_types, 3);
    ASSERT_EQ(ds.node_types[0].num_nodes, 600);
    ASSERT_EQ(ds.node_types[1].num_nodes, 8271);
    ASSERT_EQ(ds.node_types[2].num_nodes, 1027);
    ASSERT_EQ(dataset_node_type_offset(&ds, 2), 600 + 8271);
    ASSERT_EQ(ds.num_edge_types, 5);
    ASSERT_EQ(ds.num_features, 0);
    const int ula = dataset_find_edge_type(&ds, "user:listens:artist");
    ASSERT_EQ(ula, 0);
    ASSERT_EQ(dataset_find_edge_type(&ds, "user:friend:user"), 2);
    ASSERT_EQ(ds.edge_types[2].src_type, 0);
    ASSERT_EQ(ds.edge_types[2].dst_type, 0);
    ASSERT_EQ(ds.num_tasks, 1);
    const ds_task *t = &ds.tasks[0];
    ASSERT_EQ(t->kind, DS_TASK_LINK_PREDICTION);
    ASSERT_EQ(t->type, ula);
    const int64_t items[3] = {20557, 2584, 5309};
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const ds_split *sp = &t->splits[s];
        ASSERT_EQ(sp->seed_width, 2);
        ASSERT_EQ(sp->num_items, items[s]);
        for (int64_t i = 0; i < sp->num_items; i++) {
            ASSERT(sp->seeds[2 * i] >= 0 && sp->seeds[2 * i] < 600);
            ASSERT(sp->seeds[2 * i + 1] >= 0 && sp->seeds[2 * i + 1] < 8271);
        }
    }
    dataset_close(&ds);
}

/* csc_open_cached per edge type against a plain reference: rows are the dst type's nodes, each
 * row's neighbours are the src ids of its in-edges in edge-list order. Run twice: built, then
 * from the cache. */
TEST(csc_per_edge_type) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data/dblp-mini", test_source_dir());
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    for (int pass = 0; pass < 2; pass++)
        for (int et = 0; et < ds.num_edge_types; et++) {
            const ds_edge_type *e = &ds.edge_types[et];
            const int64_t nd = ds.node_types[e->dst_type].num_nodes, ns = ds.node_types[e->src_type].num_nodes;
            csc_graph g;
            if (csc_open_cached(&g, &ds, et, 2, &err) != 0) {
                dataset_close(&ds);
                TEST_FAIL_("%s", err.msg);
            }
            int ok = g.num_nodes == nd && g.num_src_nodes == ns && g.first_node == 0 && g.index_bytes == 4 &&
                     g.num_edges == e->edges.num_edges;
            /* reference: count per dst row, then walk the edge list in order */
            int64_t *cnt = calloc((size_t)nd + 1, sizeof *cnt), *pos = calloc((size_t)nd + 1, sizeof *pos);
            for (int64_t i = 0; i < e->edges.num_edges; i++) cnt[id_at(&e->edges, e->edges.dst, i) + 1]++;
            for (int64_t v = 0; v < nd; v++) cnt[v + 1] += cnt[v];
            for (int64_t v = 0; ok && v <= nd; v++) ok = g.indptr[v] == cnt[v];
            for (int64_t i = 0; ok && i < e->edges.num_edges; i++) {
                const int64_t d = id_at(&e->edges, e->edges.dst, i), s = id_at(&e->edges, e->edges.src, i);
                ok = csc_index(&g, cnt[d] + pos[d]++) == s;
            }
            free(cnt);
            free(pos);
            csc_free(&g);
            if (!ok) {
                dataset_close(&ds);
                TEST_FAIL_("edge type %d (%s), pass %d: the index differs from the reference", et, e->name, pass);
            }
        }
    dataset_close(&ds);
}

/* A tiny typed graph: a (5 nodes) -r-> b (3 nodes), NC task on a. */
static char *make_typed(const char *from, const char *to) {
    static const char META[] = "graph:\n"
                               "  nodes:\n"
                               "    - type: a\n"
                               "      num: 5\n"
                               "    - type: b\n"
                               "      num: 3\n"
                               "  edges:\n"
                               "    - type: \"a:r:b\"\n"
                               "      format: numpy\n"
                               "      path: edges.npy\n"
                               "feature_data:\n"
                               "  - domain: node\n"
                               "    type: a\n"
                               "    name: feat\n"
                               "    format: numpy\n"
                               "    path: feat.npy\n"
                               "  - domain: edge\n"
                               "    type: \"a:r:b\"\n"
                               "    name: w\n"
                               "    format: numpy\n"
                               "    path: ew.npy\n"
                               "tasks:\n"
                               "  - name: nc\n"
                               "    train_set:\n"
                               "      - type: a\n"
                               "        data:\n"
                               "          - name: seeds\n"
                               "            format: numpy\n"
                               "            path: seeds.npy\n"
                               "          - name: labels\n"
                               "            format: numpy\n"
                               "            path: labels.npy\n";
    char *dir = test_tmpdir();
    int64_t edges[2][4] = {{0, 1, 4, 4}, {0, 2, 2, 1}};
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 2, 2, 4, edges);
    float feat[5 * 2] = {0}, ew[4] = {1, 2, 3, 4};
    write_npy(dir, "feat.npy", NPY_DTYPE_FLOAT32, 2, 5, 2, feat);
    write_npy(dir, "ew.npy", NPY_DTYPE_FLOAT32, 1, 4, 1, ew);
    int64_t seeds[3] = {0, 3, 4}, labels[3] = {0, 1, 1};
    write_npy(dir, "seeds.npy", NPY_DTYPE_INT64, 1, 3, 1, seeds);
    write_npy(dir, "labels.npy", NPY_DTYPE_INT64, 1, 3, 1, labels);
    char meta[sizeof META + 512];
    const char *at = from ? strstr(META, from) : NULL;
    if (from && !at) {
        fprintf(stderr, "fixture: '%s' not in the typed metadata\n", from);
        exit(1);
    }
    if (at) snprintf(meta, sizeof meta, "%.*s%s%s", (int)(at - META), META, to, at + strlen(from));
    else snprintf(meta, sizeof meta, "%s", META);
    write_text(dir, "metadata.yaml", meta);
    return dir;
}

TEST(typed_tiny) {
    char *dir = make_typed(NULL, NULL);
    char cache[4200]; /* a cache folder of its own: the from_cache checks below see only this run */
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("CGNN_CACHE_DIR", cache, 1);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    ASSERT_EQ(ds.num_features, 2);
    ASSERT_EQ(ds.features[1].domain, DS_DOMAIN_EDGE);
    ASSERT_EQ(ds.features[1].rows, 4);
    ASSERT_EQ(ds.tasks[0].type, 0);
    /* rectangular index: 3 rows (b), ids of a */
    csc_graph g;
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.num_nodes, 3);
    ASSERT_EQ(g.num_src_nodes, 5);
    ASSERT_EQ(g.indptr[1], 1);
    ASSERT_EQ(g.indptr[2], 2);
    ASSERT_EQ(g.indptr[3], 4);
    ASSERT_EQ(csc_index(&g, 2), 1);
    ASSERT_EQ(csc_index(&g, 3), 4);
    csc_free(&g);
    dataset_close(&ds);
    /* the same edge file under another src type size: the cached index is not reused */
    char meta[4096];
    FILE *f;
    snprintf(meta, sizeof meta, "%s/metadata.yaml", dir);
    ASSERT((f = fopen(meta, "r")) != NULL);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = strstr(text, "num: 5\n");
    ASSERT(at != NULL);
    at[5] = '7';
    write_text(dir, "metadata.yaml", text);
    float feat7[7 * 2] = {0};
    write_npy(dir, "feat.npy", NPY_DTYPE_FLOAT32, 2, 7, 2, feat7);
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 0);
    ASSERT_EQ(g.num_src_nodes, 7);
    csc_free(&g);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 1);
    ASSERT_EQ(g.num_src_nodes, 7);
    csc_free(&g);
    dataset_close(&ds);
    unsetenv("CGNN_CACHE_DIR");
    rm_tree(dir);
}

TEST(typed_errors) {
    char *dir = make_typed("type: \"a:r:b\"\n      format", "type: \"a:r:c\"\n      format");
    EXPECT_FAIL(dir, "@metadata.yaml: graph.edges[0].type", "dst node type 'c' is not declared", "declared: a, b");
    rm_tree(dir);
    dir = make_typed("type: \"a:r:b\"\n      format", "type: \"a:r\"\n      format");
    EXPECT_FAIL(dir, "graph.edges[0].type", "'a:r' is not \"src:relation:dst\"");
    rm_tree(dir);
    dir = make_typed("type: \"a:r:b\"\n      format", "type: \"a::b\"\n      format");
    EXPECT_FAIL(dir, "graph.edges[0].type", "is not \"src:relation:dst\"");
    rm_tree(dir);
    dir = make_typed("    - type: b\n      num: 3\n", "    - type: a\n      num: 3\n");
    EXPECT_FAIL(dir, "graph.nodes[1].type", "duplicate node type 'a'");
    rm_tree(dir);
    dir = make_typed("    - type: b\n", "    - type: \"b:x\"\n");
    EXPECT_FAIL(dir, "graph.nodes[1].type", "contains ':'");
    rm_tree(dir);
    dir = make_typed("      num: 3\n", "      num: 2\n"); /* dst id 2 out of b's range */
    EXPECT_FAIL(dir, "@edges.npy: column 1: dst id 2 out of range [0, 2)", "node type 'b'", "edge type 'a:r:b'");
    rm_tree(dir);
    dir = make_typed("      num: 5\n", "      num: 4\n"); /* src id 4 out of a's range */
    EXPECT_FAIL(dir, "@edges.npy: column 2: src id 4 out of range [0, 4)", "node type 'a'");
    rm_tree(dir);
    dir = make_typed("    type: a\n    name: feat\n", "    type: b\n    name: feat\n");
    EXPECT_FAIL(dir, "@feat.npy: feature_data[0]: has 5 rows, expected 3", "node type 'b'");
    rm_tree(dir);
    dir = make_typed("    type: a\n    name: feat\n", "    type: zz\n    name: feat\n");
    EXPECT_FAIL(dir, "feature_data[0].type", "unknown node type 'zz'");
    rm_tree(dir);
    dir = make_typed("      - type: a\n", "      - type: q\n");
    EXPECT_FAIL(dir, "tasks[0].train_set[0].type", "task 'nc', train_set: unknown type 'q'");
    rm_tree(dir);
    dir = make_typed("      - type: a\n", "      - type: \"a:r:b\"\n");
    EXPECT_FAIL(dir, "@seeds.npy: seeds", "need a node type", "'a:r:b'");
    rm_tree(dir);
    dir = make_typed("tasks:\n", "partition: {id: ab, part: 0, num_parts: 1, node_start: 0, node_end: 5, graph: g.json}\ntasks:\n");
    EXPECT_FAIL(dir, "@metadata.yaml: partition.node_start", "a typed part gives one range per node type");
    rm_tree(dir);
    /* sets of two types (GraphBolt's heterograph tutorial's layout): one task per type, each with
     * its type's sets; a set without a type among them is an error, never skipped */
    dir = make_typed("            path: labels.npy\n",
                     "            path: labels.npy\n    test_set:\n      - type: b\n        data: [{name: seeds, "
                     "format: numpy, path: s2.npy}, {name: labels, format: numpy, path: labels.npy}]\n");
    int64_t s2[3] = {0, 1, 2};
    write_npy(dir, "s2.npy", NPY_DTYPE_INT64, 1, 3, 1, s2);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_tasks, 2);
    ASSERT(!strcmp(ds.tasks[0].name, "nc[a]") && !strcmp(ds.tasks[1].name, "nc[b]"));
    ASSERT(ds.tasks[0].splits[DS_SPLIT_TRAIN].present && !ds.tasks[0].splits[DS_SPLIT_TEST].present);
    ASSERT(!ds.tasks[1].splits[DS_SPLIT_TRAIN].present && ds.tasks[1].splits[DS_SPLIT_TEST].present);
    ASSERT_EQ(ds.tasks[1].type, 1);
    dataset_close(&ds);
    rm_tree(dir);
    dir = make_typed("            path: labels.npy\n",
                     "            path: labels.npy\n    test_set:\n      - type: b\n        data: [{name: seeds, "
                     "format: numpy, path: s2.npy}]\n      - data: [{name: seeds, format: numpy, path: s2.npy}]\n");
    write_npy(dir, "s2.npy", NPY_DTYPE_INT64, 1, 3, 1, s2);
    EXPECT_FAIL(dir, "tasks[0].test_set", "a set without a type");
    rm_tree(dir);
}

/* ---- one part of a partitioned graph (the partition: key) ----------------------------------- */

/* The tiny dataset with `partition: {<fields>}` after dataset_name; without_features drops the
 * feature_data block. Caller frees. */
static char *make_tiny_part(const char *fields, int without_features) {
    char *dir = make_tiny(NULL, NULL);
    char line[512];
    snprintf(line, sizeof line, "dataset_name: tiny\npartition: {%s}\n", fields);
    char *meta = meta_with("dataset_name: tiny\n", line);
    if (without_features) {
        char *f = strstr(meta, "feature_data:"), *t = strstr(meta, "tasks:");
        memmove(f, t, strlen(t) + 1);
    }
    write_text(dir, "metadata.yaml", meta);
    free(meta);
    return dir;
}

TEST(partition_key) {
    const char *ok = "id: 0a1b2c, part: 0, num_parts: 1, node_start: 0, node_end: 10, graph: ../g.json";
    char *dir = make_tiny_part(ok, 0);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    char want[4200];
    snprintf(want, sizeof want, "%s/../g.json", dir);
    int fields_ok = ds.partition.present == 1 && strcmp(ds.partition.id, "0a1b2c") == 0 && ds.partition.part == 0 &&
                    ds.partition.num_parts == 1 && ds.partition.node_start == 0 && ds.partition.node_end == 10 &&
                    strcmp(ds.partition.graph, want) == 0 && dataset_owned_nodes(&ds) == 10;
    dataset_close(&ds);
    rm_tree(dir);
    ASSERT(fields_ok);

    /* a whole dataset has no partition */
    dir = make_tiny(NULL, NULL);
    ASSERT_EQ(dataset_open(&ds, dir, &err), 0);
    ASSERT_EQ(ds.partition.present, 0);
    ASSERT_EQ(dataset_owned_nodes(&ds), 10);
    dataset_close(&ds);
    rm_tree(dir);

    /* fewer owned nodes: the features have node_end - node_start rows (here 9 != 10) */
    dir = make_tiny_part("id: ab, part: 1, num_parts: 2, node_start: 1, node_end: 10, graph: g.json", 0);
    EXPECT_FAIL(dir, "@feat.npy", "has 10 rows, expected 9", "partition.node_end - partition.node_start");
    rm_tree(dir);
    /* every edge's dst is owned: edge 5 (5 -> 9) is not in [0, 9) */
    dir = make_tiny_part("id: ab, part: 0, num_parts: 2, node_start: 0, node_end: 9, graph: g.json", 0);
    EXPECT_FAIL(dir, "@edges.npy", "column 5: dst 9 is not a node of this part [0, 9)");
    rm_tree(dir);
    /* every seed is owned (no features, so the seeds are reached): train seed 0 is not in [1, 10) */
    dir = make_tiny_part("id: ab, part: 1, num_parts: 2, node_start: 1, node_end: 10, graph: g.json", 1);
    EXPECT_FAIL(dir, "@train-seeds.npy", "row 0: seed 0 is not a node of this part [1, 10)");
    rm_tree(dir);
    /* field checks */
    dir = make_tiny_part("id: ab, part: 2, num_parts: 2, node_start: 0, node_end: 10, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "partition.part", "part 2 out of range [0, 2)");
    rm_tree(dir);
    dir = make_tiny_part("id: ab, part: -1, num_parts: 2, node_start: 0, node_end: 10, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "part -1 out of range");
    rm_tree(dir);
    dir = make_tiny_part("id: ab, part: 0, num_parts: 0, node_start: 0, node_end: 10, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "partition.num_parts", "must be in [1,");
    rm_tree(dir);
    dir = make_tiny_part("id: XYZ, part: 0, num_parts: 1, node_start: 0, node_end: 10, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "partition.id", "hex digits");
    rm_tree(dir);
    dir = make_tiny_part("id: ab, part: 0, num_parts: 1, node_start: 0, node_end: 11, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "node range [0, 11) is not within [0, 10)");
    rm_tree(dir);
    dir = make_tiny_part("id: ab, part: 0, num_parts: 1, node_start: 5, node_end: 4, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "node range [5, 4)");
    rm_tree(dir);
    dir = make_tiny_part("id: ab, part: 0, num_parts: 1, nodes_start: 0, node_end: 10, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "did you mean 'node_start'");
    rm_tree(dir);
    dir = make_tiny_part("id: ab, part: 0, num_parts: 1, node_start: 0, node_end: 10", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "missing key 'graph'");
    rm_tree(dir);
    /* the global splits cover every node */
    dir = make_tiny_part("id: ab, part: global, num_parts: 2, node_start: 0, node_end: 10, graph: g.json", 0);
    ASSERT_EQ(dataset_open(&ds, dir, &err), 0);
    ASSERT_EQ(ds.partition.part, DS_PARTITION_GLOBAL);
    dataset_close(&ds);
    rm_tree(dir);
    dir = make_tiny_part("id: ab, part: global, num_parts: 2, node_start: 1, node_end: 10, graph: g.json", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "global splits (part: global) cover every node");
    rm_tree(dir);
}

/* make_typed with a partition key whose node_ranges are RANGES (a typed part; see dataset.h). */
static char *make_typed_part(const char *part, const char *ranges) {
    char key[1024];
    snprintf(key, sizeof key, "partition: {id: ab, part: %s, num_parts: 2, graph: g.json, node_ranges: [%s]}\ntasks:\n",
             part, ranges);
    return make_typed("tasks:\n", key);
}

TEST(typed_partition_key) {
    /* a part owning every node of both types (the edges' dsts, the features and the seeds fit) */
    char *dir = make_typed_part("0", "{type: a, start: 0, end: 5}, {type: b, start: 0, end: 3}");
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) {
        rm_tree(dir);
        TEST_FAIL_("%s", err.msg);
    }
    const int ok = ds.partition.present && ds.typed && ds.node_types[0].own_start == 0 &&
                   ds.node_types[0].own_end == 5 && ds.node_types[1].own_end == 3 && ds.features[0].rows == 5;
    csc_graph g;
    const int refused = csc_open_cached(&g, &ds, 0, 1, &err) != 0; /* a part is never a whole graph's index */
    dataset_close(&ds);
    rm_tree(dir);
    ASSERT(ok && refused);
    /* a whole typed dataset owns every id of every type */
    dir = make_typed(NULL, NULL);
    ASSERT_EQ(dataset_open(&ds, dir, &err), 0);
    ASSERT(!ds.partition.present && ds.node_types[1].own_start == 0 && ds.node_types[1].own_end == 3);
    dataset_close(&ds);
    rm_tree(dir);
    /* the edges' dsts (b ids 0, 2, 2, 1) must lie in b's range: edge 1's dst 2 is not in [0, 2) */
    dir = make_typed_part("0", "{type: a, start: 0, end: 5}, {type: b, start: 0, end: 2}");
    EXPECT_FAIL(dir, "@edges.npy", "column 1: dst 2 is not a node of type 'b' of this part [0, 2)");
    rm_tree(dir);
    /* a's features have the part's a rows (5 != 4) */
    dir = make_typed_part("0", "{type: a, start: 1, end: 5}, {type: b, start: 0, end: 3}");
    EXPECT_FAIL(dir, "@feat.npy", "has 5 rows, expected 4", "the part's nodes of type 'a'");
    rm_tree(dir);
    /* one range per node type, in graph.nodes order, within the type's ids */
    dir = make_typed_part("0", "{type: a, start: 0, end: 5}");
    EXPECT_FAIL(dir, "@metadata.yaml", "partition.node_ranges", "1 entries, expected one per node type (2)");
    rm_tree(dir);
    dir = make_typed_part("0", "{type: b, start: 0, end: 3}, {type: a, start: 0, end: 5}");
    EXPECT_FAIL(dir, "@metadata.yaml", "partition.node_ranges[0]", "type 'b', expected 'a'");
    rm_tree(dir);
    dir = make_typed_part("0", "{type: a, start: 0, end: 5}, {type: b, start: 0, end: 4}");
    EXPECT_FAIL(dir, "@metadata.yaml", "range [0, 4) of node type 'b' is not within [0, 3)");
    rm_tree(dir);
    dir = make_typed_part("0", "{type: a, start: 0, end: 5}, {type: b, begin: 0, end: 3}");
    EXPECT_FAIL(dir, "@metadata.yaml", "partition.node_ranges[1].begin", "unknown key 'begin'");
    rm_tree(dir);
    /* the global splits own every id of every type */
    dir = make_typed_part("global", "{type: a, start: 0, end: 5}, {type: b, start: 1, end: 3}");
    EXPECT_FAIL(dir, "@metadata.yaml", "global splits (part: global) cover every node", "node type 'b'");
    rm_tree(dir);
    dir = make_typed("tasks:\n", "partition: {id: ab, part: 0, num_parts: 1, graph: g.json}\ntasks:\n");
    EXPECT_FAIL(dir, "@metadata.yaml", "node_ranges");
    rm_tree(dir);
    /* node_ranges on an untyped part */
    dir = make_tiny_part("id: ab, part: 0, num_parts: 1, node_start: 0, node_end: 10, graph: g.json, node_ranges: []", 0);
    EXPECT_FAIL(dir, "@metadata.yaml", "node_ranges is for typed graphs");
    rm_tree(dir);
}

/* ---- GraphBolt's schema, on GraphBolt's own metadata.yaml files ---------------------------------
 * The texts are in tests/fixtures/graphbolt/ (each names its source: the GraphBolt test or
 * tutorial and the dmlc/dgl commit); the tutorial's data files are committed there too
 * (scripts/fixtures/make_graphbolt_fixtures.py), the tests' arrays are written here. */

/* dataset_open with stderr (where log_info writes) captured into log[cap]. */
static int open_logged(dataset *ds, const char *dir, cgnn_err *err, char *log, size_t cap) {
    char path[4200];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    fflush(stderr);
    const int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (saved < 0 || fd < 0) exit(1);
    dup2(fd, 2);
    close(fd);
    const int rc = dataset_open(ds, dir, err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    size_t n = 0;
    unsigned char *b = test_slurp(path, &n);
    snprintf(log, cap, "%.*s", (int)n, b ? (const char *)b : "");
    free(b);
    fputs(log, stderr); /* (still shown) */
    return rc;
}

/* t with every `from` replaced by `to` (new string; t is freed). */
static char *replace_all(char *t, const char *from, const char *to) {
    size_t count = 0;
    for (const char *q = strstr(t, from); q; q = strstr(q + strlen(from), from)) count++;
    char *out = malloc(strlen(t) + count * strlen(to) + 1), *o = out;
    const char *q = t;
    for (const char *hit; (hit = strstr(q, from)); q = hit + strlen(from)) {
        memcpy(o, q, (size_t)(hit - q));
        o += hit - q;
        memcpy(o, to, strlen(to));
        o += strlen(to);
    }
    strcpy(o, q);
    free(t);
    return out;
}

/* The text of tests/fixtures/graphbolt/<name> with every `from` replaced by `to` (from NULL:
 * as is); caller frees. */
static char *gb_text(const char *name, const char *from, const char *to) {
    char path[4200];
    snprintf(path, sizeof path, "%s/tests/fixtures/graphbolt/%s", test_source_dir(), name);
    size_t n = 0;
    char *t = (char *)test_slurp(path, &n);
    if (!t) {
        fprintf(stderr, "fixture: cannot read %s\n", path);
        exit(1);
    }
    t[n] = '\0';
    return from ? replace_all(t, from, to) : t;
}

/* A temporary dataset whose metadata.yaml is GraphBolt's homograph tutorial with from[k] ->
 * to[k] for the n edits (each must apply), its relative paths then made absolute (the files in
 * tests/fixtures/graphbolt/homograph). */
static char *gb_tutorial_edits(int n, const char *const *from, const char *const *to) {
    char *t = gb_text("homograph/metadata.yaml", NULL, NULL);
    for (int k = 0; k < n; k++) {
        if (!strstr(t, from[k])) {
            fprintf(stderr, "fixture: '%s' not in the tutorial's metadata\n", from[k]);
            exit(1);
        }
        t = replace_all(t, from[k], to[k]);
    }
    char abs[4200];
    snprintf(abs, sizeof abs, "path: %s/tests/fixtures/graphbolt/homograph/", test_source_dir());
    t = replace_all(t, "path: /", "path:\x01/"); /* absolute paths (the edits') stay as they are */
    t = replace_all(t, "path: ", abs);
    t = replace_all(t, "path:\x01/", "path: /");
    char *dir = test_tmpdir();
    write_text(dir, "metadata.yaml", t);
    free(t);
    return dir;
}

/* The same with one edit (from NULL: none). */
static char *gb_tutorial(const char *from, const char *to) {
    return from ? gb_tutorial_edits(1, &from, &to) : gb_tutorial_edits(0, NULL, NULL);
}

/* GraphBolt's heterograph tutorial (scripts/fixtures/make_graphbolt_heterograph.py): its tasks
 * hold a set per type; each is read as one task per type, "NAME[TYPE]", with that type's sets. */
TEST(graphbolt_tutorial_heterograph) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/graphbolt/heterograph", test_source_dir());
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_node_types, 2);
    ASSERT_EQ(ds.num_edge_types, 2);
    ASSERT_EQ(ds.num_tasks, 4);
    static const char *const names[4] = {"node_classification[user]", "node_classification[item]",
                                         "link_prediction[user:like:item]", "link_prediction[user:follow:user]"};
    for (int i = 0; i < 4; i++) ASSERT(strcmp(ds.tasks[i].name, names[i]) == 0);
    const ds_task *nu = &ds.tasks[0], *ni = &ds.tasks[1], *ll = &ds.tasks[2], *lf = &ds.tasks[3];
    ASSERT(nu->kind == DS_TASK_NODE_CLASSIFICATION && nu->type == dataset_find_node_type(&ds, "user"));
    ASSERT(ni->kind == DS_TASK_NODE_CLASSIFICATION && ni->type == dataset_find_node_type(&ds, "item"));
    ASSERT(ll->kind == DS_TASK_LINK_PREDICTION && ll->type == dataset_find_edge_type(&ds, "user:like:item"));
    ASSERT(lf->kind == DS_TASK_LINK_PREDICTION && lf->type == dataset_find_edge_type(&ds, "user:follow:user"));
    /* each task has its own type's files, in every split */
    ASSERT(strstr(ni->splits[DS_SPLIT_TRAIN].seeds_path, "nc-train-item-ids.npy"));
    ASSERT(strstr(ni->splits[DS_SPLIT_VALID].labels_path, "nc-val-item-labels.pt"));
    ASSERT(strstr(nu->splits[DS_SPLIT_TEST].seeds_path, "nc-test-user-ids.npy"));
    ASSERT(strstr(lf->splits[DS_SPLIT_TEST].seeds_path, "lp-test-follow-seeds.npy"));
    ASSERT_EQ(ni->splits[DS_SPLIT_TRAIN].num_items, 18); /* int(30 * 0.6) */
    npy_array a;
    char path[4300];
    snprintf(path, sizeof path, "%s/nc-train-item-ids.npy", dir);
    ASSERT_EQ(npy_open(&a, path, 0, &err), 0);
    for (int64_t i = 0; i < 18; i++) ASSERT_EQ(ni->splits[DS_SPLIT_TRAIN].seeds[i], npy_get_int(&a, i));
    npy_close(&a);
    dataset_close(&ds);

    /* two sets of one type in a split: an error naming it */
    char *t = gb_text("heterograph/metadata.yaml", "          - type: item\n", "          - type: user\n");
    char abs[4200];
    snprintf(abs, sizeof abs, "path: %s/tests/fixtures/graphbolt/heterograph/", test_source_dir());
    t = replace_all(t, "path: ", abs);
    char *tmp = test_tmpdir();
    write_text(tmp, "metadata.yaml", t);
    free(t);
    ASSERT(dataset_open(&ds, tmp, &err) != 0);
    if (!strstr(err.msg, "tasks[0].train_set") || !strstr(err.msg, "two sets of type 'user'")) TEST_FAIL_("%s", err.msg);
    rm_tree(tmp);
}


/* GraphBolt's homograph tutorial as it is: format: torch node and edge features and NC labels,
 * float64 LP labels, CSV edges, edge features, two tasks. */
TEST(graphbolt_tutorial_homograph) {
    char *dir = gb_tutorial(NULL, NULL);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT(strcmp(ds.name, "homogeneous_graph_nc_lp") == 0);
    ASSERT_EQ(ds.node_types[0].num_nodes, 40);
    ASSERT_EQ(ds.edge_types[0].edges.num_edges, 400);
    ASSERT_EQ(ds.num_features, 4);
    const ds_feature *f1 = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat_1"); /* torch.rand(40, 5) */
    ASSERT(f1 && f1->array.dtype == NPY_DTYPE_FLOAT32 && f1->rows == 40 && f1->dim == 5 && f1->array.owned);
    for (int64_t i = 0; i < 40 * 5; i++) {
        const float v = ((const float *)f1->array.data)[i];
        ASSERT(v >= 0.0f && v < 1.0f);
    }
    const ds_feature *e1 = dataset_find_feature(&ds, DS_DOMAIN_EDGE, 0, "feat_1");
    ASSERT(e1 && e1->rows == 400 && e1->dim == 5 && e1->array.dtype == NPY_DTYPE_FLOAT32);
    ASSERT_EQ(ds.num_tasks, 2);
    const ds_task *nc = dataset_find_task(&ds, "node_classification");
    ASSERT(nc && nc->kind == DS_TASK_NODE_CLASSIFICATION && nc->num_classes == 10);
    const ds_split *tr = &nc->splits[DS_SPLIT_TRAIN]; /* labels: torch.randint(0, 10, (24,)), int64 */
    ASSERT_EQ(tr->num_items, 24);
    for (int64_t i = 0; i < 24; i++) ASSERT(tr->labels[i] >= 0 && tr->labels[i] < 10);
    ASSERT(strstr(tr->labels_path, "nc-train-labels.pt"));
    const ds_task *lp = dataset_find_task(&ds, "link_prediction");
    ASSERT(lp && lp->kind == DS_TASK_LINK_PREDICTION);
    const ds_split *va = &lp->splits[DS_SPLIT_VALID]; /* 80 positives, 10 negatives each; float64 labels */
    ASSERT_EQ(va->num_items, 880);
    for (int64_t i = 0; i < 880; i++) {
        ASSERT_EQ(va->labels[i], i < 80 ? 1 : 0);
        ASSERT_EQ(va->indexes[i], i < 80 ? i : (i - 80) / 10);
    }
    ASSERT_EQ(lp->splits[DS_SPLIT_TRAIN].num_items, 240);
    ASSERT(lp->splits[DS_SPLIT_TRAIN].labels == NULL);
    dataset_close(&ds);
    rm_tree(dir);

    /* format: torch seeds (int64 arange(5)), and the same tensor as their labels */
    char vec[2][4300];
    snprintf(vec[0], sizeof vec[0], "format: torch\n                path: %s/tests/fixtures/graphbolt/tensors/vector.pt\n",
             test_source_dir());
    snprintf(vec[1], sizeof vec[1], "path: %s/tests/fixtures/graphbolt/tensors/vector.pt\n", test_source_dir());
    const char *const from[2] = {"format: numpy\n                path: nc-train-ids.npy\n", "path: nc-train-labels.pt\n"};
    const char *const to[2] = {vec[0], vec[1]};
    dir = gb_tutorial_edits(2, from, to);
    if (dataset_open(&ds, dir, &err) != 0) TEST_FAIL_("%s", err.msg);
    nc = dataset_find_task(&ds, "node_classification");
    ASSERT(nc && nc->splits[DS_SPLIT_TRAIN].num_items == 5 && nc->splits[DS_SPLIT_TRAIN].seeds[4] == 4);
    ASSERT(nc->splits[DS_SPLIT_TRAIN].labels[3] == 3 && strstr(nc->splits[DS_SPLIT_TRAIN].seeds_path, "vector.pt"));
    dataset_close(&ds);
    rm_tree(dir);

    /* a torch file that is not one tensor, or a view, is refused naming the file and the field */
    char bad[4300];
    snprintf(bad, sizeof bad, "path: %s/tests/fixtures/graphbolt/tensors/transposed.pt\n", test_source_dir());
    dir = gb_tutorial("path: node-feat-1.pt\n", bad);
    EXPECT_FAIL(dir, "transposed.pt: data.pkl: byte", "strides are not C order", "feature_data[1].path in");
    rm_tree(dir);
    snprintf(bad, sizeof bad, "path: %s/tests/fixtures/graphbolt/tensors/dict.pt\n", test_source_dir());
    dir = gb_tutorial("path: nc-train-labels.pt\n", bad);
    EXPECT_FAIL(dir, "dict.pt: data.pkl holds a dict", "tasks[0].train_set[0].data[1].path in");
    rm_tree(dir);
    /* a .npy named as format: torch is not a torch archive */
    dir = gb_tutorial("format: numpy\n        path: node-feat-0.npy", "format: torch\n        path: node-feat-0.npy");
    EXPECT_FAIL(dir, "node-feat-0.npy", "zip", "feature_data[0].path in");
    rm_tree(dir);
    /* edges are numpy or csv, as in GraphBolt (read_edges) */
    dir = gb_tutorial("- format: csv\n", "- format: torch\n");
    EXPECT_FAIL(dir, "graph.edges[0].format", "unsupported format 'torch' (expected numpy or csv)");
    rm_tree(dir);
}

/* Tasks without a name (GraphBolt: optional, metadata["name"] is None): the tutorial without its
 * task names. */
TEST(graphbolt_unnamed_tasks) {
    char *dir = gb_tutorial("      - name: node_classification\n        num_classes: 10\n", "      - num_classes: 10\n");
    dataset ds;
    cgnn_err err = {0};
    char log[8192];
    if (open_logged(&ds, dir, &err, log, sizeof log) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_tasks, 2);
    ASSERT(strcmp(ds.tasks[0].name, "tasks[0]") == 0 && ds.tasks[0].kind == DS_TASK_NODE_CLASSIFICATION);
    ASSERT(dataset_find_task(&ds, "tasks[0]") == &ds.tasks[0]);
    ASSERT_STR_CONTAINS(log, "tasks[0] has no name; called 'tasks[0]'");
    dataset_close(&ds);
    rm_tree(dir);
}

/* domain: graph (GraphBolt's OnDiskFeatureDataDomain.GRAPH): read, validated and ignored. */
TEST(graphbolt_domain_graph) {
    char entry[4600];
    snprintf(entry, sizeof entry,
             "feature_data:\n      - domain: graph\n        name: graph_feat\n        format: torch\n"
             "        path: %s/tests/fixtures/graphbolt/tensors/float16.pt\n",
             test_source_dir());
    char *dir = gb_tutorial("feature_data:\n", entry);
    dataset ds;
    cgnn_err err = {0};
    char log[8192];
    if (open_logged(&ds, dir, &err, log, sizeof log) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_features, 4); /* the tutorial's four; the graph feature is not kept */
    ASSERT(dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "graph_feat") == NULL);
    ASSERT_STR_CONTAINS(log, "graph feature 'graph_feat' float16 (3, 2) read and validated");
    dataset_close(&ds);
    rm_tree(dir);
    /* validated: a missing file, a type key */
    snprintf(entry, sizeof entry, "feature_data:\n      - domain: graph\n        name: g\n        format: numpy\n"
                                  "        path: missing.npy\n");
    dir = gb_tutorial("feature_data:\n", entry);
    EXPECT_FAIL(dir, "missing.npy: cannot open", "feature_data[0].path in");
    rm_tree(dir);
    snprintf(entry, sizeof entry, "feature_data:\n      - domain: graph\n        type: paper\n        name: g\n"
                                  "        format: numpy\n        path: missing.npy\n");
    dir = gb_tutorial("feature_data:\n", entry);
    EXPECT_FAIL(dir, "feature_data[0].type", "a domain: graph feature has no type");
    rm_tree(dir);
}

/* Extra keys: GraphBolt keeps them (features and tasks) or ignores them; cgnn ignores them with
 * a log line; a typo of a key cgnn reads is still an error with "did you mean". The feature file
 * of GraphBolt's test_OnDiskDataset_Feature_homograph (num_categories; int64 label features). */
TEST(graphbolt_extra_keys_and_feature_dtypes) {
    char *dir = test_tmpdir();
    int64_t edges[2][12];
    for (int i = 0; i < 12; i++) edges[0][i] = i, edges[1][i] = (i + 1) % 12;
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 2, 2, 12, edges);
    double feat[12 * 10];
    for (int i = 0; i < 120; i++) feat[i] = i * 0.01;
    int64_t label[12];
    for (int i = 0; i < 12; i++) label[i] = i % 10;
    write_npy(dir, "node_data_feat.npy", NPY_DTYPE_FLOAT64, 2, 12, 10, feat);
    write_npy(dir, "edge_data_feat.npy", NPY_DTYPE_FLOAT64, 2, 12, 10, feat);
    write_npy(dir, "node_data_label.npy", NPY_DTYPE_INT64, 2, 12, 1, label);
    write_npy(dir, "edge_data_label.npy", NPY_DTYPE_INT64, 2, 12, 1, label);
    char *t = gb_text("feature_homograph.yaml", NULL, NULL);
    write_text(dir, "metadata.yaml", t);
    free(t);
    dataset ds;
    cgnn_err err = {0};
    char log[8192];
    if (open_logged(&ds, dir, &err, log, sizeof log) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_features, 4);
    const ds_feature *nl = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "labels");
    ASSERT(nl && nl->array.dtype == NPY_DTYPE_INT64 && nl->rows == 12 && nl->dim == 1);
    ASSERT_EQ(((const int64_t *)nl->array.data)[11], 1);
    const ds_feature *el = dataset_find_feature(&ds, DS_DOMAIN_EDGE, 0, "labels");
    ASSERT(el && el->array.dtype == NPY_DTYPE_INT64 && el->rows == 12);
    ASSERT_STR_CONTAINS(log, "metadata.yaml:18: feature_data[0]: key 'num_categories' is not one cgnn reads; ignored");
    ASSERT_STR_CONTAINS(log, "metadata.yaml:29: feature_data[2]: key 'num_categories'");
    dataset_close(&ds);

    /* extra keys everywhere GraphBolt allows them: top level, graph, node / edge entries, a task,
     * a set, a data entry */
    t = gb_text("feature_homograph.yaml", "    num_categories: 10\n", "    num_categories: 10\n    description: x\n");
    char meta[8192];
    snprintf(meta, sizeof meta,
             "include_original_edge_id: false\n%s"
             "tasks:\n  - name: nc\n    num_classes: 10\n    note: extra\n    validation_set: []\n"
             "    train_set:\n      - extra_set_key: 1\n"
             "        data:\n          - {name: seeds, format: numpy, path: seeds.npy, comment: c}\n"
             "          - {name: labels, format: numpy, path: seeds.npy}\n",
             t);
    free(t);
    int64_t seeds[3] = {0, 1, 2};
    write_npy(dir, "seeds.npy", NPY_DTYPE_INT64, 1, 3, 1, seeds);
    write_text(dir, "metadata.yaml", meta);
    if (open_logged(&ds, dir, &err, log, sizeof log) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_tasks, 1);
    ASSERT_EQ(ds.tasks[0].splits[DS_SPLIT_TRAIN].num_items, 3);
    ASSERT(!ds.tasks[0].splits[DS_SPLIT_VALID].present); /* validation_set: [] is no set, as in GraphBolt */
    const char *keys[] = {"'include_original_edge_id'", "'description'", "'note'", "'extra_set_key'", "'comment'"};
    for (int k = 0; k < 5; k++) ASSERT_STR_CONTAINS(log, keys[k]);
    dataset_close(&ds);

    /* ... but typos of keys cgnn reads are errors with a suggestion */
    struct {
        const char *from, *to, *want;
    } typos[] = {
        {"    in_memory: false\n    path: node_data_feat.npy", "    in_memroy: false\n    path: node_data_feat.npy",
         "did you mean 'in_memory'?"},
        {"path: seeds.npy, comment: c}", "pth: seeds.npy, path: seeds.npy}", "did you mean 'path'?"},
        {"    num_classes: 10\n    note", "    num_clases: 10\n    note", "did you mean 'num_classes'?"},
        {"      - extra_set_key: 1\n", "      - typ: null\n", "did you mean 'type'?"},
    };
    for (size_t k = 0; k < sizeof typos / sizeof typos[0]; k++) {
        char *at = strstr(meta, typos[k].from);
        ASSERT(at != NULL);
        char bad[8192];
        snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - meta), meta, typos[k].to, at + strlen(typos[k].from));
        write_text(dir, "metadata.yaml", bad);
        EXPECT_FAIL(dir, "@metadata.yaml", typos[k].want);
    }
    rm_tree(dir);
}

/* Features of any dtype are read (training converts the one it uses to float32): a bool, int16,
 * bfloat16 and int8 tensor as node features next to the tutorial's. */
TEST(graphbolt_feature_dtypes_torch) {
    static const char *const names[] = {"bool", "int16", "bfloat16", "int8", "int32", "int64", "float64"};
    static const npy_dtype want[] = {NPY_DTYPE_UINT8, NPY_DTYPE_INT32, NPY_DTYPE_FLOAT32, NPY_DTYPE_INT8,
                                     NPY_DTYPE_INT32, NPY_DTYPE_INT64, NPY_DTYPE_FLOAT64};
    char entries[8192] = "feature_data:\n";
    for (int k = 0; k < 7; k++) /* (3, 2) tensors: an edge type of 3 edges would do, so a 3-node graph */
        snprintf(entries + strlen(entries), sizeof entries - strlen(entries),
                 "  - {domain: node, name: %s, format: torch, in_memory: false, path: %s/tests/fixtures/graphbolt/"
                 "tensors/%s.pt}\n",
                 names[k], test_source_dir(), names[k]);
    char *dir = test_tmpdir();
    int64_t edges[2][2] = {{0, 1}, {1, 2}};
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 2, 2, 2, edges);
    char meta[9000];
    snprintf(meta, sizeof meta, "graph:\n  nodes: [{num: 3}]\n  edges: [{format: numpy, path: edges.npy}]\n%s", entries);
    write_text(dir, "metadata.yaml", meta);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dir, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_features, 7);
    for (int k = 0; k < 7; k++) {
        const ds_feature *f = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, names[k]);
        ASSERT(f && f->array.dtype == want[k] && f->rows == 3 && f->dim == 2);
    }
    const ds_feature *b = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "bool"); /* [[0,1],[1,0],[0,1]] */
    ASSERT(((const uint8_t *)b->array.data)[1] == 1 && ((const uint8_t *)b->array.data)[3] == 0);
    const ds_feature *h = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "bfloat16"); /* 0..5 */
    ASSERT(((const float *)h->array.data)[5] == 5.0f);
    const ds_feature *s = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "int16");
    ASSERT(((const int32_t *)s->array.data)[4] == 4);
    dataset_close(&ds);
    rm_tree(dir);
}

/* graph.feature_data and `type: null`: GraphBolt's test_OnDiskDataset_preprocess_homogeneous_hardcode
 * (its arrays); its node seeds have no labels, so the task is read but no training task uses it. */
TEST(graphbolt_graph_feature_data_type_null) {
    char *dir = test_tmpdir();
    char sub[4200];
    for (int k = 0; k < 3; k++) {
        snprintf(sub, sizeof sub, "%s/%s", dir, k == 0 ? "edges" : k == 1 ? "data" : "set");
        mkdir(sub, 0700);
    }
    int64_t edges[2][10] = {{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}, {1, 2, 2, 3, 3, 4, 4, 0, 0, 1}};
    write_npy(dir, "edges/edge.npy", NPY_DTYPE_INT64, 2, 2, 10, edges);
    double ef[10] = {0.0, 1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8, 9.9}, nf[5] = {0.0, 1.9, 2.8, 3.7, 4.6};
    write_npy(dir, "data/edge-feat.npy", NPY_DTYPE_FLOAT64, 1, 10, 1, ef);
    write_npy(dir, "data/node-feat.npy", NPY_DTYPE_FLOAT64, 1, 5, 1, nf);
    int64_t ids[5] = {0, 1, 2, 3, 4};
    write_npy(dir, "set/train.npy", NPY_DTYPE_INT64, 1, 5, 1, ids);
    write_npy(dir, "set/valid.npy", NPY_DTYPE_INT64, 1, 5, 1, ids);
    write_npy(dir, "set/test.npy", NPY_DTYPE_INT64, 1, 5, 1, ids);
    char *t = gb_text("preprocess_homogeneous_hardcode.yaml", NULL, NULL);
    write_text(dir, "metadata.yaml", t);
    dataset ds;
    cgnn_err err = {0};
    char log[8192];
    if (open_logged(&ds, dir, &err, log, sizeof log) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT(strcmp(ds.name, "graphbolt_test") == 0 && !ds.typed);
    ASSERT_EQ(ds.num_features, 2); /* feature_data; graph.feature_data is read and released */
    const ds_feature *nfeat = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat");
    ASSERT(nfeat && nfeat->rows == 5 && nfeat->dim == 1 && ((const double *)nfeat->array.data)[1] == 1.9);
    ASSERT_EQ(ds.num_tasks, 1);
    ASSERT_EQ(ds.tasks[0].kind, DS_TASK_OTHER); /* node seeds without labels */
    ASSERT_EQ(ds.tasks[0].splits[DS_SPLIT_TEST].num_items, 5);
    ASSERT_STR_CONTAINS(log, "2 graph.feature_data entries (GraphBolt's sampling-graph attributes) read and validated");
    ASSERT_STR_CONTAINS(log, "node seeds without labels");
    dataset_close(&ds);
    free(t);
    /* graph.feature_data is validated like feature_data: rows of its domain */
    double ef9[9] = {0};
    write_npy(dir, "data/edge-feat-9.npy", NPY_DTYPE_FLOAT64, 1, 9, 1, ef9);
    t = gb_text("preprocess_homogeneous_hardcode.yaml", NULL, NULL);
    char *at = strstr(t, "path: data/edge-feat.npy");
    char bad[8192];
    snprintf(bad, sizeof bad, "%.*spath: data/edge-feat-9.npy%s", (int)(at - t), t, at + strlen("path: data/edge-feat.npy"));
    free(t);
    write_text(dir, "metadata.yaml", bad);
    EXPECT_FAIL(dir, "@data/edge-feat-9.npy: graph.feature_data[1]: has 9 rows, expected 10");
    rm_tree(dir);
}

/* GraphBolt's older data names, converted as its item sampler converts them: seed_nodes (with
 * unnamed data entries; test_OnDiskDataset_multiple_tasks) and node_pairs + negative_dsts
 * (test_OnDiskDataset_TVTSet_ItemSet_node_pairs_negs). */
TEST(graphbolt_older_names) {
    char *dir = test_tmpdir();
    int64_t edges[2][12];
    for (int i = 0; i < 12; i++) edges[0][i] = i, edges[1][i] = (i + 1) % 12;
    write_npy(dir, "edges.npy", NPY_DTYPE_INT64, 2, 2, 12, edges);
    int64_t ids[6] = {0, 1, 2, 3, 4, 5}, labels[6] = {9, 8, 7, 0, 1, 2};
    write_npy(dir, "train_ids.npy", NPY_DTYPE_INT64, 1, 6, 1, ids);
    write_npy(dir, "train_labels.npy", NPY_DTYPE_INT64, 1, 6, 1, labels);
    char *t = gb_text("multiple_tasks_seed_nodes.yaml", NULL, NULL);
    write_text(dir, "metadata.yaml", t);
    free(t);
    dataset ds;
    cgnn_err err = {0};
    char log[8192];
    if (open_logged(&ds, dir, &err, log, sizeof log) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(ds.num_tasks, 2);
    for (int k = 0; k < 2; k++) {
        const ds_split *sp = &ds.tasks[k].splits[DS_SPLIT_TRAIN];
        ASSERT(ds.tasks[k].kind == DS_TASK_NODE_CLASSIFICATION && sp->num_items == 6 && sp->seed_width == 1);
        ASSERT(sp->seeds[5] == 5 && sp->labels[0] == 9);
    }
    ASSERT_STR_CONTAINS(log, "'seed_nodes' is GraphBolt's older name; read as seeds");
    ASSERT_STR_CONTAINS(log, "tasks[0].train_set[0].data[2]: data entry without a name; not read");
    dataset_close(&ds);

    /* node_pairs (M, 2) + negative_dsts (M, K) -> seeds (M (K + 1), 2), labels, indexes */
    int64_t pairs[4][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}}, neg[4][3] = {{8, 9, 10}, {11, 0, 1}, {2, 3, 4}, {5, 6, 7}};
    const char *const split[] = {"train", "validation", "test"};
    for (int k = 0; k < 3; k++) {
        char n1[64], n2[64];
        snprintf(n1, sizeof n1, "%s_node_pairs.npy", split[k]);
        snprintf(n2, sizeof n2, "%s_neg_dst.npy", split[k]);
        write_npy(dir, n1, NPY_DTYPE_INT64, 2, 4, 2, pairs);
        write_npy(dir, n2, NPY_DTYPE_INT64, 2, 4, 3, neg);
    }
    t = gb_text("node_pairs_negs.yaml", NULL, NULL);
    write_text(dir, "metadata.yaml", t);
    if (open_logged(&ds, dir, &err, log, sizeof log) != 0) TEST_FAIL_("%s", err.msg);
    const ds_task *lp = &ds.tasks[0];
    ASSERT(lp->kind == DS_TASK_LINK_PREDICTION);
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const ds_split *sp = &lp->splits[s];
        ASSERT(sp->num_items == 16 && sp->seed_width == 2 && sp->labels && sp->indexes);
        for (int64_t i = 0; i < 4; i++) {
            ASSERT(sp->seeds[2 * i] == pairs[i][0] && sp->seeds[2 * i + 1] == pairs[i][1]);
            ASSERT(sp->labels[i] == 1 && sp->indexes[i] == i);
            for (int j = 0; j < 3; j++) {
                const int64_t r = 4 + i * 3 + j; /* _construct_seeds' order */
                ASSERT(sp->seeds[2 * r] == pairs[i][0] && sp->seeds[2 * r + 1] == neg[i][j]);
                ASSERT(sp->labels[r] == 0 && sp->indexes[r] == i);
            }
        }
    }
    ASSERT_STR_CONTAINS(log, "'node_pairs' is GraphBolt's older name; read as seeds");
    ASSERT_STR_CONTAINS(log, "4 node pairs with 3 negative destinations each: 16 seeds");
    dataset_close(&ds);

    /* the negatives are checked like seeds; negative_srcs is refused with the reason */
    neg[2][1] = 12;
    write_npy(dir, "validation_neg_dst.npy", NPY_DTYPE_INT64, 2, 4, 3, neg);
    EXPECT_FAIL(dir, "@validation_neg_dst.npy: row 2, column 1: negative destination 12 out of range [0, 12) "
                     "(tasks[0].validation_set)");
    neg[2][1] = 3;
    write_npy(dir, "validation_neg_dst.npy", NPY_DTYPE_INT64, 1, 4, 1, neg);
    EXPECT_FAIL(dir, "@validation_neg_dst.npy: negative_dsts (tasks[0].validation_set[0].data[1]): expected shape (4, K), got (4,)");
    char *u = gb_text("node_pairs_negs.yaml", "name: negative_dsts\n            format: numpy\n            in_memory: "
                                              "true\n            path: test_neg_dst.npy",
                      "name: negative_srcs\n            format: numpy\n            in_memory: true\n"
                      "            path: test_neg_dst.npy");
    write_text(dir, "metadata.yaml", u);
    free(u);
    write_npy(dir, "validation_neg_dst.npy", NPY_DTYPE_INT64, 2, 4, 3, neg);
    EXPECT_FAIL(dir, "tasks[0].test_set[0].data[1].name", "negative_srcs", "not supported");
    /* seeds and seed_nodes are the same data */
    u = gb_text("multiple_tasks_seed_nodes.yaml", "          - format: numpy\n",
                "          - name: seeds\n            format: numpy\n");
    write_text(dir, "metadata.yaml", u);
    free(u);
    EXPECT_FAIL(dir, "tasks[0].train_set[0].data[2].name", "duplicate 'seeds' entry (the same data as 'seed_nodes')");
    free(t);
    rm_tree(dir);
}

int main(void) {
    RUN(cora);
    RUN(zeroed_close);
    RUN(tiny_ok);
    RUN(missing_metadata_and_dir);
    RUN(malformed_yaml);
    RUN(missing_key);
    RUN(unknown_key_suggestion);
    RUN(edge_files);
    RUN(edge_ids_out_of_range);
    RUN(csv_edges);
    RUN(feature_errors);
    RUN(seed_and_label_errors);
    RUN(link_prediction);
    RUN(type_keys_need_typed_graph);
    RUN(in_memory_false);
    RUN(fortran_order_files);
    RUN(facebook_lp);
    RUN(partition_key);
    RUN(typed_partition_key);
    RUN(dblp_mini);
    RUN(lastfm_mini);
    RUN(csc_per_edge_type);
    RUN(typed_tiny);
    RUN(typed_errors);
    RUN(graphbolt_tutorial_homograph);
    RUN(graphbolt_tutorial_heterograph);
    RUN(graphbolt_unnamed_tasks);
    RUN(graphbolt_domain_graph);
    RUN(graphbolt_extra_keys_and_feature_dtypes);
    RUN(graphbolt_feature_dtypes_torch);
    RUN(graphbolt_graph_feature_data_type_null);
    RUN(graphbolt_older_names);
    return test_summary();
}
