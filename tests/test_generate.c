/* test_generate.c — `cgnn generate`: shapes and dtypes, graph properties (ids, no self-loops,
 * symmetry, homophily, skewed degrees), splits, feature signal, the link-prediction hold-out,
 * byte-for-byte determinism across thread counts, parameter errors and the CLI. */
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "graph/generate.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "test.h"

/* The graph most tests look at: N = 2000, C = 5, F = 16. */
#define T_N 2000
#define T_C 5
#define T_F 16
#define T_H 0.7

static void small_params(generate_params *p, int link_prediction, int threads) {
    generate_default_params(p);
    p->num_nodes = T_N;
    p->avg_degree = 10.0;
    p->num_classes = T_C;
    p->feat_dim = T_F;
    p->homophily = T_H;
    p->seed = 42;
    p->train_frac = 0.6;
    p->val_frac = 0.2;
    p->link_prediction = link_prediction;
    p->lp_val_frac = 0.05;
    p->lp_test_frac = 0.05;
    p->num_threads = threads;
    p->name = "gen-test";
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(char *dir) {
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static int open_file(npy_array *a, const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cgnn_err err;
    err_clear(&err);
    if (npy_open(a, path, 0, &err) != 0) {
        fprintf(stderr, "npy_open: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The class of every node, from the three NC label files; caller frees. NULL on failure. */
static int64_t *read_classes(const char *dir) {
    static const char *const split[3] = {"train", "valid", "test"};
    int64_t *cls = malloc(T_N * sizeof *cls);
    for (int i = 0; i < T_N; i++) cls[i] = -1;
    for (int s = 0; s < 3; s++) {
        char sname[64], lname[64];
        snprintf(sname, sizeof sname, "nc-%s-seeds.npy", split[s]);
        snprintf(lname, sizeof lname, "nc-%s-labels.npy", split[s]);
        npy_array sa, la;
        if (open_file(&sa, dir, sname) != 0) {
            free(cls);
            return NULL;
        }
        if (open_file(&la, dir, lname) != 0) {
            npy_close(&sa);
            free(cls);
            return NULL;
        }
        for (int64_t i = 0; i < sa.count && i < la.count; i++) {
            int64_t v = npy_get_int(&sa, i);
            if (v >= 0 && v < T_N) cls[v] = npy_get_int(&la, i);
        }
        npy_close(&sa);
        npy_close(&la);
    }
    return cls;
}

/* ---- graph properties ---------------------------------------------------------------------- */

TEST(edges_shape_ids_symmetry) {
    char *dir = test_tmpdir();
    generate_params p;
    small_params(&p, 0, 2);
    cgnn_err err;
    err_clear(&err);
    ASSERT_EQ(generate_dataset(dir, &p, &err), 0);
    npy_array e;
    ASSERT_EQ(open_file(&e, dir, "edges.npy"), 0);
    ASSERT_EQ(e.dtype, NPY_DTYPE_INT32);
    ASSERT_EQ(e.ndim, 2);
    ASSERT_EQ(e.shape[0], 2);
    const int64_t E = e.shape[1];
    ASSERT_EQ(E, (int64_t)(T_N * 10)); /* M = N*D/2 undirected, both directions */
    const int32_t *src = e.data, *dst = src + E;
    int64_t *fw = malloc((size_t)E * sizeof *fw), *bw = malloc((size_t)E * sizeof *bw);
    int64_t *indeg = calloc(T_N, sizeof *indeg);
    int bad = 0, loops = 0;
    for (int64_t i = 0; i < E; i++) {
        int64_t u = src[i], v = dst[i];
        if (u < 0 || u >= T_N || v < 0 || v >= T_N) {
            bad++;
            continue;
        }
        loops += u == v;
        fw[i] = u * T_N + v;
        bw[i] = v * T_N + u;
        indeg[v]++;
    }
    npy_close(&e);
    int symmetric = 0;
    if (!bad) {
        qsort(fw, (size_t)E, sizeof *fw, cmp_i64);
        qsort(bw, (size_t)E, sizeof *bw, cmp_i64);
        symmetric = memcmp(fw, bw, (size_t)E * sizeof *fw) == 0;
    }
    int64_t maxdeg = 0;
    for (int i = 0; i < T_N; i++)
        if (indeg[i] > maxdeg) maxdeg = indeg[i];
    free(fw);
    free(bw);
    free(indeg);
    rm_tree(dir);
    ASSERT_EQ(bad, 0);
    ASSERT_EQ(loops, 0);
    ASSERT(symmetric);
    /* power law: the largest hub has many times the mean degree (10) */
    fprintf(stderr, "  max in-degree %lld (mean 10)\n", (long long)maxdeg);
    ASSERT(maxdeg >= 5 * 10);
}

TEST(homophily_matches_request) {
    const double hs[3] = {0.0, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        char *dir = test_tmpdir();
        generate_params p;
        small_params(&p, 0, 2);
        p.homophily = hs[k];
        cgnn_err err;
        err_clear(&err);
        ASSERT_EQ(generate_dataset(dir, &p, &err), 0);
        int64_t *cls = read_classes(dir);
        npy_array e;
        int ok = cls && open_file(&e, dir, "edges.npy") == 0;
        rm_tree(dir);
        if (!ok) {
            free(cls);
            ASSERT(ok);
        }
        const int64_t E = e.shape[1];
        int64_t same = 0;
        for (int64_t i = 0; i < E; i++) same += cls[npy_get_int(&e, i)] == cls[npy_get_int(&e, E + i)];
        npy_close(&e);
        free(cls);
        double frac = (double)same / (double)E, want = hs[k] + (1.0 - hs[k]) / T_C;
        fprintf(stderr, "  homophily %.2f: same-class edges %.4f (expected %.4f)\n", hs[k], frac, want);
        ASSERT_NEAR(frac, want, 0.05);
    }
}

TEST(features_and_splits) {
    char *dir = test_tmpdir();
    generate_params p;
    small_params(&p, 0, 2);
    cgnn_err err;
    err_clear(&err);
    ASSERT_EQ(generate_dataset(dir, &p, &err), 0);

    static const char *const split[3] = {"train", "valid", "test"};
    npy_array seeds[3], labels[3], feat;
    memset(seeds, 0, sizeof seeds);
    memset(labels, 0, sizeof labels);
    memset(&feat, 0, sizeof feat);
    int opened = open_file(&feat, dir, "node-feat.npy") == 0;
    for (int s = 0; s < 3; s++) {
        char name[64];
        snprintf(name, sizeof name, "nc-%s-seeds.npy", split[s]);
        opened = opened && open_file(&seeds[s], dir, name) == 0;
        snprintf(name, sizeof name, "nc-%s-labels.npy", split[s]);
        opened = opened && open_file(&labels[s], dir, name) == 0;
    }
    rm_tree(dir); /* the mappings stay valid after unlink */
    int shapes_ok = opened && feat.dtype == NPY_DTYPE_FLOAT32 && feat.ndim == 2 && feat.shape[0] == T_N &&
                    feat.shape[1] == T_F;
    int64_t sizes[3] = {0, 0, 0};
    for (int s = 0; s < 3 && opened; s++) {
        shapes_ok = shapes_ok && seeds[s].dtype == NPY_DTYPE_INT32 && labels[s].dtype == NPY_DTYPE_INT32 &&
                    seeds[s].ndim == 1 && labels[s].ndim == 1 && seeds[s].count == labels[s].count;
        sizes[s] = seeds[s].count;
    }
    /* disjoint and covering: every node exactly once over the three splits */
    int *seen = calloc(T_N, sizeof *seen);
    int64_t *cls = malloc(T_N * sizeof *cls);
    int ids_ok = 1, labels_ok = 1;
    for (int s = 0; s < 3 && shapes_ok; s++)
        for (int64_t i = 0; i < seeds[s].count; i++) {
            int64_t v = npy_get_int(&seeds[s], i), c = npy_get_int(&labels[s], i);
            if (v < 0 || v >= T_N) {
                ids_ok = 0;
                continue;
            }
            seen[v]++;
            cls[v] = c;
            labels_ok = labels_ok && c >= 0 && c < T_C;
        }
    int covered = 1;
    for (int i = 0; i < T_N; i++) covered = covered && seen[i] == 1;

    /* class signal: nearest class mean (fit on train) classifies test far above chance */
    double acc = 0.0;
    if (shapes_ok && ids_ok && covered && labels_ok) {
        const float *x = feat.data; /* (N, F) */
        double mean[T_C][T_F];
        int64_t cnt[T_C];
        memset(mean, 0, sizeof mean);
        memset(cnt, 0, sizeof cnt);
        for (int64_t i = 0; i < seeds[0].count; i++) {
            int64_t v = npy_get_int(&seeds[0], i);
            cnt[cls[v]]++;
            for (int f = 0; f < T_F; f++) mean[cls[v]][f] += x[v * T_F + f];
        }
        for (int c = 0; c < T_C; c++)
            for (int f = 0; f < T_F; f++) mean[c][f] /= cnt[c] ? (double)cnt[c] : 1.0;
        int64_t right = 0;
        for (int64_t i = 0; i < seeds[2].count; i++) {
            int64_t v = npy_get_int(&seeds[2], i);
            int best = 0;
            double best_d = INFINITY;
            for (int c = 0; c < T_C; c++) {
                double d = 0.0;
                for (int f = 0; f < T_F; f++) d += (x[v * T_F + f] - mean[c][f]) * (x[v * T_F + f] - mean[c][f]);
                if (d < best_d) best_d = d, best = c;
            }
            right += best == cls[v];
        }
        acc = (double)right / (double)seeds[2].count;
    }
    free(seen);
    free(cls);
    npy_close(&feat);
    for (int s = 0; s < 3; s++) {
        npy_close(&seeds[s]);
        npy_close(&labels[s]);
    }
    ASSERT(opened);
    ASSERT(shapes_ok);
    ASSERT_EQ(sizes[0], 1200);
    ASSERT_EQ(sizes[1], 400);
    ASSERT_EQ(sizes[2], 400);
    ASSERT(ids_ok);
    ASSERT(labels_ok);
    ASSERT(covered);
    fprintf(stderr, "  nearest-class-mean test accuracy %.3f (chance %.2f)\n", acc, 1.0 / T_C);
    ASSERT(acc > 0.8);
}

/* ---- link prediction ------------------------------------------------------------------------ */

TEST(link_prediction_holdout) {
    char *dir = test_tmpdir();
    generate_params p;
    small_params(&p, 1, 2);
    cgnn_err err;
    err_clear(&err);
    ASSERT_EQ(generate_dataset(dir, &p, &err), 0);
    npy_array e, tr, va, te;
    memset(&e, 0, sizeof e), memset(&tr, 0, sizeof tr), memset(&va, 0, sizeof va), memset(&te, 0, sizeof te);
    int opened = open_file(&e, dir, "edges.npy") == 0 && open_file(&tr, dir, "lp-train-seeds.npy") == 0 &&
                 open_file(&va, dir, "lp-valid-seeds.npy") == 0 && open_file(&te, dir, "lp-test-seeds.npy") == 0;
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/metadata.yaml", dir);
    FILE *f = fopen(meta, "r");
    char text[8192] = {0};
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    rm_tree(dir);
    if (!opened) {
        npy_close(&e), npy_close(&tr), npy_close(&va), npy_close(&te);
        ASSERT(opened);
    }
    const int64_t M = T_N * 10 / 2;
    int shapes_ok = tr.ndim == 2 && tr.shape[1] == 2 && va.ndim == 2 && va.shape[1] == 2 && te.ndim == 2 &&
                    te.shape[1] == 2 && va.shape[0] == M / 20 && te.shape[0] == M / 20 &&
                    tr.dtype == NPY_DTYPE_INT32 && va.dtype == NPY_DTYPE_INT32 && te.dtype == NPY_DTYPE_INT32;
    const int64_t E = e.shape[1];
    /* the message-passing graph holds the training pairs in both directions */
    int train_ok = E == 2 * tr.shape[0] && tr.shape[0] <= M - 2 * (M / 20) && tr.shape[0] > (M - 2 * (M / 20)) * 9 / 10;
    int64_t *keys = malloc((size_t)E * sizeof *keys); /* undirected keys of all edges, sorted */
    for (int64_t i = 0; i < E; i++) {
        int64_t u = npy_get_int(&e, i), v = npy_get_int(&e, E + i);
        keys[i] = u < v ? u * T_N + v : v * T_N + u;
    }
    qsort(keys, (size_t)E, sizeof *keys, cmp_i64);
    int leaked = 0, ids_ok = 1, loops = 0, train_missing = 0;
    const npy_array *held[2] = {&va, &te};
    for (int h = 0; h < 2 && shapes_ok; h++)
        for (int64_t i = 0; i < held[h]->shape[0]; i++) {
            int64_t u = npy_get_int(held[h], 2 * i), v = npy_get_int(held[h], 2 * i + 1);
            ids_ok = ids_ok && u >= 0 && u < T_N && v >= 0 && v < T_N;
            loops += u == v;
            int64_t k = u < v ? u * T_N + v : v * T_N + u;
            leaked += bsearch(&k, keys, (size_t)E, sizeof *keys, cmp_i64) != NULL;
        }
    for (int64_t i = 0; i < tr.shape[0] && shapes_ok; i++) {
        int64_t u = npy_get_int(&tr, 2 * i), v = npy_get_int(&tr, 2 * i + 1);
        int64_t k = u < v ? u * T_N + v : v * T_N + u;
        train_missing += bsearch(&k, keys, (size_t)E, sizeof *keys, cmp_i64) == NULL;
    }
    free(keys);
    npy_close(&e), npy_close(&tr), npy_close(&va), npy_close(&te);
    ASSERT(shapes_ok);
    ASSERT(train_ok);
    ASSERT(ids_ok);
    ASSERT_EQ(loops, 0);
    ASSERT_EQ(leaked, 0);
    ASSERT_EQ(train_missing, 0);
    ASSERT_STR_CONTAINS(text, "name: link_prediction");
    ASSERT_STR_CONTAINS(text, "path: lp-test-seeds.npy");
    ASSERT_STR_CONTAINS(text, "dataset_name: gen-test");
    ASSERT_STR_CONTAINS(text, "in_memory: false");
}

/* Regenerating without link prediction over an LP dataset leaves no stale LP files. */
TEST(regenerate_replaces_previous) {
    char *dir = test_tmpdir();
    generate_params p;
    small_params(&p, 1, 2);
    cgnn_err err;
    err_clear(&err);
    ASSERT_EQ(generate_dataset(dir, &p, &err), 0);
    p.link_prediction = 0;
    ASSERT_EQ(generate_dataset(dir, &p, &err), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/lp-train-seeds.npy", dir);
    int stale = access(path, F_OK) == 0;
    snprintf(path, sizeof path, "%s/metadata.yaml", dir);
    int meta = access(path, F_OK) == 0;
    rm_tree(dir);
    ASSERT(!stale);
    ASSERT(meta);
}

/* ---- determinism ----------------------------------------------------------------------------- */

/* Reads a whole file; caller frees. NULL if it cannot be read. */
static char *read_all(const char *dir, const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static const char *const ALL_FILES[] = {
    "metadata.yaml",      "edges.npy",          "node-feat.npy",      "nc-train-seeds.npy",
    "nc-train-labels.npy", "nc-valid-seeds.npy", "nc-valid-labels.npy", "nc-test-seeds.npy",
    "nc-test-labels.npy", "lp-train-seeds.npy", "lp-valid-seeds.npy", "lp-test-seeds.npy",
};
#define NUM_ALL_FILES ((int)(sizeof ALL_FILES / sizeof ALL_FILES[0]))

TEST(deterministic_across_threads) {
    char *a = test_tmpdir(), *b = test_tmpdir(), *c = test_tmpdir();
    generate_params p;
    cgnn_err err;
    err_clear(&err);
    small_params(&p, 1, 1);
    p.num_nodes = 150000; /* several node / edge / feature chunks, so threads really split work */
    p.avg_degree = 4.0;
    int rc_a = generate_dataset(a, &p, &err);
    p.num_threads = 2;
    int rc_b = generate_dataset(b, &p, &err);
    p.seed = 43;
    int rc_c = generate_dataset(c, &p, &err);
    int same = 0, differ_seed = 0;
    for (int i = 0; i < NUM_ALL_FILES; i++) {
        size_t la = 0, lb = 0, lc = 0;
        char *da = read_all(a, ALL_FILES[i], &la), *db = read_all(b, ALL_FILES[i], &lb);
        char *dc = read_all(c, ALL_FILES[i], &lc);
        if (da && db && la == lb && memcmp(da, db, la) == 0)
            same++;
        else
            fprintf(stderr, "  %s differs between 1 and 2 threads\n", ALL_FILES[i]);
        if (strcmp(ALL_FILES[i], "edges.npy") == 0 && da && dc && (la != lc || memcmp(da, dc, la) != 0))
            differ_seed = 1;
        free(da), free(db), free(dc);
    }
    rm_tree(a), rm_tree(b), rm_tree(c);
    ASSERT_EQ(rc_a, 0);
    ASSERT_EQ(rc_b, 0);
    ASSERT_EQ(rc_c, 0);
    ASSERT_EQ(same, NUM_ALL_FILES);
    ASSERT(differ_seed);
}

/* ---- errors ---------------------------------------------------------------------------------- */

TEST(bad_params_are_input_errors) {
    char *dir = test_tmpdir();
    struct {
        const char *field;
        generate_params p;
    } cases[16];
    int n = 0;
#define CASE(fieldname, stmt)                                                                  \
    do {                                                                                       \
        small_params(&cases[n].p, 1, 1);                                                       \
        generate_params *q = &cases[n].p;                                                      \
        stmt;                                                                                  \
        cases[n++].field = fieldname;                                                          \
    } while (0)
    CASE("nodes", q->num_nodes = 1);
    CASE("classes", q->num_classes = 0);
    CASE("classes", q->num_classes = T_N + 1);
    CASE("homophily", q->homophily = 1.5);
    CASE("homophily", q->homophily = NAN);
    CASE("feat_dim", q->feat_dim = 0);
    CASE("avg_degree", q->avg_degree = 0.0);
    CASE("avg_degree", q->avg_degree = -3.0);
    CASE("train_frac", q->train_frac = 0.0);
    CASE("val_frac", q->val_frac = -0.1);
    CASE("train_frac + val_frac", q->train_frac = 0.7; q->val_frac = 0.5);
    CASE("lp_val_frac", q->lp_val_frac = 2.0);
    CASE("lp_val_frac + lp_test_frac", q->lp_val_frac = 0.5; q->lp_test_frac = 0.5);
    CASE("degree_exponent", q->degree_exponent = 1.5);
    CASE("name", q->name = "bad name: x");
#undef CASE
    for (int i = 0; i < n; i++) {
        cgnn_err err;
        err_clear(&err);
        int rc = generate_dataset(dir, &cases[i].p, &err);
        if (rc != -1 || err.code != CGNN_ERR_INPUT || !strstr(err.msg, cases[i].field)) {
            fprintf(stderr, "  case %d (%s): rc %d code %d msg '%s'\n", i, cases[i].field, rc, err.code, err.msg);
            rm_tree(dir);
            ASSERT(0);
        }
    }
    /* nothing was written for rejected parameters */
    char path[4096];
    snprintf(path, sizeof path, "%s/metadata.yaml", dir);
    int wrote = access(path, F_OK) == 0;
    /* an output path below a regular file is an I/O (runtime) error naming the path */
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/file/sub", dir);
    generate_params p;
    small_params(&p, 0, 1);
    cgnn_err err;
    err_clear(&err);
    int rc = generate_dataset(path, &p, &err);
    rm_tree(dir);
    ASSERT(!wrote);
    ASSERT_EQ(rc, -1);
    ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
    ASSERT_STR_CONTAINS(err.msg, "/file");
}

TEST(creates_missing_directories) {
    char *dir = test_tmpdir();
    char out[4096];
    snprintf(out, sizeof out, "%s/a/b/c", dir);
    generate_params p;
    small_params(&p, 0, 1);
    p.num_nodes = 50;
    p.num_classes = 50; /* every class may hold a single node: homophilous draws must fall back */
    p.homophily = 1.0;
    cgnn_err err;
    err_clear(&err);
    int rc = generate_dataset(out, &p, &err);
    if (rc != 0) fprintf(stderr, "  %s\n", err.msg);
    snprintf(out, sizeof out, "%s/a/b/c/metadata.yaml", dir);
    int exists = access(out, F_OK) == 0;
    rm_tree(dir);
    ASSERT_EQ(rc, 0);
    ASSERT(exists);
}

/* ---- the dataset loader reads what generate writes ------------------------------------------ */

TEST(dataset_open_reads_it) {
    char *dir = test_tmpdir();
    generate_params p;
    small_params(&p, 1, 2);
    cgnn_err err;
    err_clear(&err);
    ASSERT_EQ(generate_dataset(dir, &p, &err), 0);
    dataset ds;
    memset(&ds, 0, sizeof ds);
    int rc = dataset_open(&ds, dir, &err);
    rm_tree(dir);
    if (rc != 0) {
        fprintf(stderr, "  dataset_open: %s\n", err.msg);
        ASSERT_EQ(rc, 0);
    }
    const ds_feature *feat = dataset_find_feature(&ds, DS_DOMAIN_NODE, 0, "feat");
    const ds_task *nc = dataset_find_task(&ds, "node_classification");
    const ds_task *lp = dataset_find_task(&ds, "link_prediction");
    int ok_name = strcmp(ds.name, "gen-test") == 0;
    int64_t nodes = dataset_total_nodes(&ds);
    int n_etypes = ds.num_edge_types;
    int64_t edges = n_etypes == 1 ? ds.edge_types[0].edges.num_edges : -1;
    int edge_dt = n_etypes == 1 ? (int)ds.edge_types[0].edges.id_dtype : -1;
    int64_t frows = feat ? feat->rows : -1, fdim = feat ? feat->dim : -1;
    int f_in_mem = feat ? feat->in_memory : -1;
    int nc_ok = nc && nc->kind == DS_TASK_NODE_CLASSIFICATION && nc->num_classes == T_C &&
                nc->splits[DS_SPLIT_TRAIN].num_items == 1200 && nc->splits[DS_SPLIT_VALID].num_items == 400 &&
                nc->splits[DS_SPLIT_TEST].num_items == 400 && nc->splits[DS_SPLIT_TRAIN].labels != NULL;
    int lp_ok = lp && lp->kind == DS_TASK_LINK_PREDICTION && lp->splits[DS_SPLIT_TRAIN].seed_width == 2 &&
                lp->splits[DS_SPLIT_TRAIN].num_items * 2 == edges &&
                lp->splits[DS_SPLIT_VALID].num_items == T_N * 10 / 2 / 20 &&
                lp->splits[DS_SPLIT_TEST].num_items == T_N * 10 / 2 / 20;
    dataset_close(&ds);
    ASSERT(ok_name);
    ASSERT_EQ(nodes, T_N);
    ASSERT_EQ(n_etypes, 1);
    ASSERT_EQ(edge_dt, NPY_DTYPE_INT32);
    ASSERT(edges > 0);
    ASSERT_EQ(frows, T_N);
    ASSERT_EQ(fdim, T_F);
    ASSERT_EQ(f_in_mem, 0);
    ASSERT(nc_ok);
    ASSERT(lp_ok);
}

/* ---- the typed variant ----------------------------------------------------------------------- */

static const char *const TYPED_FILES[] = {
    "metadata.yaml", "edges-user-clicks-item.npy", "edges-item-clicked_by-user.npy", "edges-item-has-tag.npy",
    "edges-tag-of-item.npy", "edges-user-follows-user.npy", "feat-user.npy", "feat-item.npy",
    "nc-train-item-seeds.npy", "nc-train-item-labels.npy", "nc-valid-item-seeds.npy", "nc-valid-item-labels.npy",
    "nc-test-item-seeds.npy", "nc-test-item-labels.npy", "lp-train-seeds.npy", "lp-valid-seeds.npy",
    "lp-test-seeds.npy",
};
#define NUM_TYPED_FILES ((int)(sizeof TYPED_FILES / sizeof TYPED_FILES[0]))

static int64_t edge_id(const ds_edges *e, const void *row, int64_t i) {
    return e->id_dtype == NPY_DTYPE_INT64 ? ((const int64_t *)row)[i] : ((const int32_t *)row)[i];
}

/* Homogenised in-degree of every node of ds (all edge types), (total nodes); caller frees. */
static int64_t *homogenised_in_degrees(const dataset *ds) {
    const int64_t n = dataset_total_nodes(ds);
    int64_t *deg = calloc((size_t)n, sizeof *deg);
    for (int e = 0; e < ds->num_edge_types; e++) {
        const ds_edges *ed = &ds->edge_types[e].edges;
        const int64_t off = dataset_node_type_offset(ds, ds->edge_types[e].dst_type);
        for (int64_t i = 0; i < ed->num_edges; i++) deg[off + edge_id(ed, ed->dst, i)]++;
    }
    return deg;
}

/* max over d of |CDF_a(d) - CDF_b(d)| of two degree sequences of n nodes each */
static double degree_ks(const int64_t *a, const int64_t *b, int64_t n) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) m = a[i] > m ? a[i] : b[i] > m ? b[i] : m;
    int64_t *ha = calloc((size_t)m + 2, sizeof *ha), *hb = calloc((size_t)m + 2, sizeof *hb);
    for (int64_t i = 0; i < n; i++) ha[a[i]]++, hb[b[i]]++;
    double ks = 0, ca = 0, cb = 0;
    for (int64_t d = 0; d <= m; d++) {
        ca += (double)ha[d] / (double)n;
        cb += (double)hb[d] / (double)n;
        if (fabs(ca - cb) > ks) ks = fabs(ca - cb);
    }
    free(ha), free(hb);
    return ks;
}

/* The typed graph has the homogeneous graph's node count and edge count (no LP), a matching
 * degree distribution, every id in range for its type, the documented types and tasks, and
 * dataset_open accepts it; with LP, no held-out pair is left among the clicks edges. */
TEST(typed_counts_ids_degrees) {
    char *hdir = test_tmpdir(), *tdir = test_tmpdir(), *ldir = test_tmpdir();
    generate_params p;
    small_params(&p, 0, 2);
    cgnn_err err;
    err_clear(&err);
    ASSERT_EQ(generate_dataset(hdir, &p, &err), 0);
    p.typed = 1;
    generate_stats st;
    ASSERT_EQ(generate_dataset_stats(tdir, &p, &st, &err), 0);
    p.link_prediction = 1;
    ASSERT_EQ(generate_dataset(ldir, &p, &err), 0);
    dataset h, t, l;
    memset(&h, 0, sizeof h), memset(&t, 0, sizeof t), memset(&l, 0, sizeof l);
    int rh = dataset_open(&h, hdir, &err);
    if (rh) fprintf(stderr, "  %s\n", err.msg);
    int rt = dataset_open(&t, tdir, &err);
    if (rt) fprintf(stderr, "  %s\n", err.msg);
    int rl = dataset_open(&l, ldir, &err);
    if (rl) fprintf(stderr, "  %s\n", err.msg);
    rm_tree(hdir), rm_tree(tdir), rm_tree(ldir);
    ASSERT(rh == 0 && rt == 0 && rl == 0);

    /* types and sizes */
    ASSERT(dataset_is_typed(&t));
    ASSERT_EQ(t.num_node_types, 3);
    ASSERT(!strcmp(t.node_types[0].name, "user") && !strcmp(t.node_types[1].name, "item") &&
           !strcmp(t.node_types[2].name, "tag"));
    ASSERT_EQ(t.node_types[0].num_nodes, T_N / 2);
    ASSERT_EQ(t.node_types[1].num_nodes, T_N * 2 / 5);
    ASSERT_EQ(t.node_types[2].num_nodes, T_N - T_N / 2 - T_N * 2 / 5);
    ASSERT_EQ(dataset_total_nodes(&t), dataset_total_nodes(&h));
    ASSERT_EQ(t.num_edge_types, 5);
    static const char *const et_names[5] = {"user:clicks:item", "item:clicked_by:user", "item:has:tag",
                                            "tag:of:item", "user:follows:user"};
    int64_t E = 0;
    for (int e = 0; e < 5; e++) {
        const ds_edge_type *et = &t.edge_types[e];
        ASSERT(!strcmp(et->name, et_names[e]));
        ASSERT_EQ(et->edges.num_edges, st.etype_edges[e]);
        ASSERT(et->edges.num_edges > 0);
        E += et->edges.num_edges;
        /* every id in range for its own type */
        const int64_t ns = t.node_types[et->src_type].num_nodes, nd = t.node_types[et->dst_type].num_nodes;
        int64_t bad = 0, self = 0;
        for (int64_t i = 0; i < et->edges.num_edges; i++) {
            int64_t u = edge_id(&et->edges, et->edges.src, i), v = edge_id(&et->edges, et->edges.dst, i);
            bad += u < 0 || u >= ns || v < 0 || v >= nd;
            self += et->src_type == et->dst_type && u == v;
        }
        ASSERT_EQ(bad, 0);
        ASSERT_EQ(self, 0);
    }
    /* both directions: each reverse type holds exactly the forward edges swapped */
    for (int e = 0; e < 4; e += 2) {
        const ds_edges *f = &t.edge_types[e].edges, *r = &t.edge_types[e + 1].edges;
        ASSERT_EQ(f->num_edges, r->num_edges);
        int64_t mism = 0;
        for (int64_t i = 0; i < f->num_edges; i++)
            mism += edge_id(f, f->src, i) != edge_id(r, r->dst, i) || edge_id(f, f->dst, i) != edge_id(r, r->src, i);
        ASSERT_EQ(mism, 0);
    }
    ASSERT_EQ(E, st.num_edges);
    ASSERT_EQ(E, h.edge_types[0].edges.num_edges); /* the same edge count, exactly */

    /* the same degree law: homogenised in-degrees against the homogeneous graph's */
    int64_t *dh = homogenised_in_degrees(&h), *dt = homogenised_in_degrees(&t);
    double ks = degree_ks(dh, dt, T_N);
    int64_t maxh = 0, maxt = 0;
    for (int64_t i = 0; i < T_N; i++) maxh = dh[i] > maxh ? dh[i] : maxh, maxt = dt[i] > maxt ? dt[i] : maxt;
    free(dh), free(dt);
    fprintf(stderr, "  degree KS %.4f, max in-degree %lld vs %lld\n", ks, (long long)maxh, (long long)maxt);
    ASSERT(ks < 0.045); /* two-sample KS critical value at 5% for 2000 vs 2000 is 0.043 */
    ASSERT(maxt > maxh / 2 && maxt < maxh * 2);

    /* features and tasks */
    const ds_feature *fu = dataset_find_feature(&t, DS_DOMAIN_NODE, 0, "feat");
    const ds_feature *fi = dataset_find_feature(&t, DS_DOMAIN_NODE, 1, "feat");
    ASSERT(fu && fu->rows == T_N / 2 && fu->dim == T_F);
    ASSERT(fi && fi->rows == T_N * 2 / 5 && fi->dim == T_F);
    ASSERT(!dataset_find_feature(&t, DS_DOMAIN_NODE, 2, "feat"));
    const ds_task *nc = dataset_find_task(&t, "node_classification");
    ASSERT(nc && nc->kind == DS_TASK_NODE_CLASSIFICATION && nc->type == 1 && nc->num_classes == T_C);
    ASSERT_EQ(nc->splits[DS_SPLIT_TRAIN].num_items, 480);
    ASSERT_EQ(nc->splits[DS_SPLIT_VALID].num_items, 160);
    ASSERT_EQ(nc->splits[DS_SPLIT_TEST].num_items, 160);
    const ds_task *lp = dataset_find_task(&l, "link_prediction");
    ASSERT(lp && lp->kind == DS_TASK_LINK_PREDICTION && lp->type == 0);
    const ds_edges *clicks = &l.edge_types[0].edges;
    ASSERT_EQ(lp->splits[DS_SPLIT_TRAIN].num_items, clicks->num_edges);
    const int64_t m_ui = st.etype_edges[0];
    ASSERT_EQ(lp->splits[DS_SPLIT_VALID].num_items, llround(0.05 * (double)m_ui));
    ASSERT_EQ(lp->splits[DS_SPLIT_TEST].num_items, llround(0.05 * (double)m_ui));
    int64_t leaked = 0;
    for (int s = DS_SPLIT_VALID; s <= DS_SPLIT_TEST; s++) {
        const ds_split *sp = &lp->splits[s];
        for (int64_t k = 0; k < sp->num_items; k++)
            for (int64_t i = 0; i < clicks->num_edges; i++)
                leaked += edge_id(clicks, clicks->src, i) == sp->seeds[2 * k] &&
                          edge_id(clicks, clicks->dst, i) == sp->seeds[2 * k + 1];
    }
    ASSERT_EQ(leaked, 0);
    dataset_close(&h), dataset_close(&t), dataset_close(&l);
}

/* Byte-identical for any thread count; another seed gives another graph. */
TEST(typed_deterministic) {
    char *a = test_tmpdir(), *b = test_tmpdir(), *c = test_tmpdir();
    generate_params p;
    cgnn_err err;
    err_clear(&err);
    small_params(&p, 1, 1);
    p.typed = 1;
    p.num_nodes = 150000; /* several node / edge / feature chunks */
    p.avg_degree = 4.0;
    int rc_a = generate_dataset(a, &p, &err);
    p.num_threads = 3;
    int rc_b = generate_dataset(b, &p, &err);
    p.seed = 43;
    int rc_c = generate_dataset(c, &p, &err);
    int same = 0, differ_seed = 0;
    for (int i = 0; i < NUM_TYPED_FILES; i++) {
        size_t la = 0, lb = 0, lc = 0;
        char *da = read_all(a, TYPED_FILES[i], &la), *db = read_all(b, TYPED_FILES[i], &lb);
        char *dc = read_all(c, TYPED_FILES[i], &lc);
        if (da && db && la == lb && memcmp(da, db, la) == 0)
            same++;
        else
            fprintf(stderr, "  %s differs between 1 and 3 threads\n", TYPED_FILES[i]);
        if (strcmp(TYPED_FILES[i], "edges-user-follows-user.npy") == 0 && da && dc && (la != lc || memcmp(da, dc, la) != 0))
            differ_seed = 1;
        free(da), free(db), free(dc);
    }
    rm_tree(a), rm_tree(b), rm_tree(c);
    ASSERT_EQ(rc_a, 0);
    ASSERT_EQ(rc_b, 0);
    ASSERT_EQ(rc_c, 0);
    ASSERT_EQ(same, NUM_TYPED_FILES);
    ASSERT(differ_seed);
}

/* ---- the CLI --------------------------------------------------------------------------------- */

static int run_cli(const char *args) {
    const char *bin = getenv("CGNN_BIN");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>&1", bin, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(cli_generate) {
    const char *bin = getenv("CGNN_BIN");
    if (!bin || access(bin, X_OK) != 0) SKIP("CGNN_BIN not set (run under ctest)");
    char *dir = test_tmpdir();
    char args[4096];
    ASSERT_EQ(run_cli("generate --help"), 0);
    ASSERT_EQ(run_cli("generate --nodes 100"), 2);              /* --out missing */
    ASSERT_EQ(run_cli("generate --out /tmp/x --nodez 100"), 2); /* unknown flag */
    ASSERT_EQ(run_cli("generate --out /tmp/x --preset huge"), 2);
    ASSERT_EQ(run_cli("generate --out /tmp/x --homophily 2"), 2);
    snprintf(args, sizeof args,
             "generate --out '%s/ds' --nodes 300 --avg_degree 6 --classes 3 --feat_dim 4 --seed 7 "
             "--link_prediction --threads 1 --name cli-test",
             dir);
    int rc = run_cli(args);
    npy_array f;
    int opened = open_file(&f, dir, "ds/node-feat.npy") == 0;
    int64_t rows = opened ? f.shape[0] : -1, cols = opened ? f.shape[1] : -1;
    npy_close(&f);
    snprintf(args, sizeof args, "%s/ds/lp-test-seeds.npy", dir);
    int lp = access(args, F_OK) == 0;
    snprintf(args, sizeof args, "generate --out '%s/ty' --nodes 300 --avg_degree 6 --classes 3 --feat_dim 4 --typed", dir);
    int rc_typed = run_cli(args);
    npy_array fu;
    int opened_u = open_file(&fu, dir, "ty/feat-user.npy") == 0;
    int64_t rows_u = opened_u ? fu.shape[0] : -1;
    if (opened_u) npy_close(&fu);
    rm_tree(dir);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(rows, 300);
    ASSERT_EQ(cols, 4);
    ASSERT(lp);
    ASSERT_EQ(rc_typed, 0);
    ASSERT_EQ(rows_u, 150);
}

int main(void) {
    RUN(edges_shape_ids_symmetry);
    RUN(homophily_matches_request);
    RUN(features_and_splits);
    RUN(link_prediction_holdout);
    RUN(regenerate_replaces_previous);
    RUN(deterministic_across_threads);
    RUN(bad_params_are_input_errors);
    RUN(creates_missing_directories);
    RUN(dataset_open_reads_it);
    RUN(typed_counts_ids_degrees);
    RUN(typed_deterministic);
    RUN(cli_generate);
    return test_summary();
}
