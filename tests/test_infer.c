/* test_infer.c — layer-wise full-neighbourhood inference (nn/infer.h, model_layer_forward_infer,
 * ops_linear_rows_forward):
 *   - the row-wise linear kernel equals its _ref bitwise (AVX and portable paths), does not
 *     depend on the rows around a row, and agrees with the BLAS linear;
 *   - GraphSAGE and GAT inference equal model_forward with fanout -1 on every layer; GCN equals
 *     a dense full-graph reference (the sampled GCN norm differs at the outermost sources);
 *   - bitwise the same for every chunk size, for 1 and 2 threads, with activations in files,
 *     and on the portable kernel path;
 *   - the input rows: row-normalised features concatenated with learnable embeddings;
 *   - checkpoints: the model from its metadata, embedding.weight found, bad files rejected. */
#include <dirent.h>
#include <omp.h>
#include <unistd.h>

#include "graph/csc.h"
#include "io/safetensors.h"
#include "nn/infer.h"
#include "nn/model.h"
#include "nn/ops.h"
#include "sample/gather.h"
#include "sample/sampler.h"
#include "test.h"
#include "test_graph_util.h"
#include "train/outputs.h"
#include "util/rng.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static void fill_uniform(float *x, int64_t n, float lo, float hi, uint64_t seed) {
    rng r;
    rng_init(&r, seed);
    for (int64_t k = 0; k < n; k++) x[k] = lo + (hi - lo) * (float)rng_uniform(&r);
}

static float *falloc(int64_t n) { return cgnn_calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

/* A random graph of n nodes with hubs, isolated nodes, self-edges (every 11th node) and
 * duplicate edges (every 13th node gets one in-neighbour twice). Caller csc_free()s. */
static void make_graph(csc_graph *g, int64_t n, uint64_t seed) {
    int32_t *src, *dst;
    int64_t e = test_random_graph(n, 3, n / 4, seed, &src, &dst);
    src = cgnn_realloc(src, (size_t)(e + 2 * n) * sizeof(int32_t));
    dst = cgnn_realloc(dst, (size_t)(e + 2 * n) * sizeof(int32_t));
    for (int64_t v = 0; v < n; v++) {
        if (v % 11 == 0) {
            src[e] = dst[e] = (int32_t)v;
            e++;
        }
        if (v % 13 == 5) {
            for (int k = 0; k < 2; k++) {
                src[e] = (int32_t)((v * 7 + 3) % n);
                dst[e] = (int32_t)v;
                e++;
            }
        }
    }
    ds_edges ed = test_edges(src, dst, e);
    cgnn_err err;
    CGNN_CHECK(csc_build(g, n, &ed, 1, &err) == 0);
    free(src);
    free(dst);
}

/* A float32 node feature table viewing x (rows, dim). */
static ds_feature feature_view(const float *x, int64_t rows, int64_t dim) {
    ds_feature f;
    memset(&f, 0, sizeof f);
    f.domain = DS_DOMAIN_NODE;
    snprintf(f.name, sizeof f.name, "feat");
    f.array.dtype = NPY_DTYPE_FLOAT32;
    f.array.ndim = 2;
    f.array.shape[0] = rows;
    f.array.shape[1] = dim;
    f.array.count = rows * dim;
    f.array.data = x;
    f.rows = rows;
    f.dim = dim;
    return f;
}

/* A model whose scratch fits model_forward over every node of g with fanout -1; parameters
 * perturbed so that zero-initialised biases are not zero. */
static void make_model(model *m, const csc_graph *g, model_kind kind, int L, int64_t in, int64_t hidden,
                       int64_t out, int l2, uint64_t seed) {
    model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.kind = kind;
    mc.num_layers = L;
    mc.in_dim = in;
    mc.hidden_dim = hidden;
    mc.out_dim = out;
    mc.num_heads = 2;
    mc.l2_normalize_output = l2;
    sampler_config sc;
    memset(&sc, 0, sizeof sc);
    sc.num_layers = L;
    for (int h = 0; h < L; h++) sc.fanouts[h] = -1;
    minibatch_capacity cap;
    sampler_capacity(g, &sc, g->num_nodes, in, &cap);
    cgnn_err err;
    CGNN_CHECK(model_init(m, &mc, &cap, seed, &err) == 0);
    float *noise = falloc(m->num_params);
    fill_uniform(noise, m->num_params, -0.1f, 0.1f, seed + 99);
    for (int64_t k = 0; k < m->num_params; k++) m->params[k] += noise[k];
    free(noise);
}

/* model_forward (eval) over seeds[0..n) with fanout -1 on every layer; x (N, in) the input rows.
 * Writes out (n, O) in seed order. */
static void forward_sampled(model *m, const csc_graph *g, const float *x, const int64_t *seeds, int64_t n,
                            float *out) {
    const int L = m->cfg.num_layers;
    const int64_t in = m->cfg.in_dim, O = m->cfg.out_dim;
    sampler_config sc;
    memset(&sc, 0, sizeof sc);
    sc.num_layers = L;
    for (int h = 0; h < L; h++) sc.fanouts[h] = -1;
    minibatch_capacity cap;
    sampler_capacity(g, &sc, g->num_nodes, in, &cap);
    minibatch mb;
    neighbor_sampler s;
    cgnn_err err;
    CGNN_CHECK(minibatch_alloc(&mb, &cap, &err) == 0 && sampler_init(&s, g, &sc, &cap, &err) == 0);
    ASSERT_EQ(sampler_sample(&s, &mb, seeds, n, 0, NULL), 0);
    for (int64_t j = 0; j < mb.num_input_nodes; j++)
        memcpy(mb.features + j * in, x + mb.input_nodes[j] * in, (size_t)in * sizeof(float));
    minibatch_build_transpose(&mb);
    const float *y = model_forward(m, &mb, 0, 0);
    for (int64_t i = 0; i < n; i++) memcpy(out + i * O, y + (int64_t)mb.item_local[i] * O, (size_t)O * sizeof(float));
    sampler_free(&s);
    minibatch_free(&mb);
}

/* Dense full-graph GCN in double: h_{l+1} = relu(D^-1/2 (A + I) D^-1/2 h_l W^T + b), self-edges
 * replaced by the one self-loop, duplicate edges counted; the last layer without ReLU. */
static void gcn_dense_ref(const model *m, const csc_graph *g, const float *x, float *out) {
    const int64_t N = g->num_nodes;
    const int L = m->cfg.num_layers;
    double *dinv = malloc((size_t)N * sizeof(double));
    for (int64_t v = 0; v < N; v++) {
        double deg = 1;
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) deg += csc_index(g, e) != v;
        dinv[v] = 1.0 / sqrt(deg);
    }
    int64_t I = m->cfg.in_dim;
    double *h = malloc((size_t)(N * I) * sizeof(double));
    for (int64_t k = 0; k < N * I; k++) h[k] = x[k];
    for (int l = 0; l < L; l++) {
        int64_t li, O;
        model_layer_dims(m, l, &li, &O);
        char name[64];
        snprintf(name, sizeof name, "convs.%d.lin.weight", l);
        const float *W = m->params + model_find_tensor(m, name)->offset;
        snprintf(name, sizeof name, "convs.%d.bias", l);
        const float *bias = m->params + model_find_tensor(m, name)->offset;
        double *agg = calloc((size_t)(N * I), sizeof(double)), *y = calloc((size_t)(N * O), sizeof(double));
        for (int64_t v = 0; v < N; v++) {
            for (int64_t k = 0; k < I; k++) agg[v * I + k] = dinv[v] * dinv[v] * h[v * I + k];
            for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) {
                const int64_t u = csc_index(g, e);
                if (u == v) continue;
                for (int64_t k = 0; k < I; k++) agg[v * I + k] += dinv[v] * dinv[u] * h[u * I + k];
            }
            for (int64_t o = 0; o < O; o++) {
                double s = bias[o];
                for (int64_t k = 0; k < I; k++) s += agg[v * I + k] * W[o * I + k];
                y[v * O + o] = (l < L - 1 && s < 0) ? 0 : s;
            }
        }
        free(agg);
        free(h);
        h = y;
        I = O;
    }
    for (int64_t k = 0; k < N * I; k++) out[k] = (float)h[k];
    free(h);
    free(dinv);
}

/* Largest |a - b| / (1 + |b|) over n elements. */
static double max_rel_diff(const float *a, const float *b, int64_t n) {
    double mx = 0;
    for (int64_t k = 0; k < n; k++) {
        const double d = fabs((double)a[k] - (double)b[k]) / (1.0 + fabs((double)b[k]));
        if (!(d <= mx)) mx = d; /* NaN wins */
    }
    return mx;
}

/* Runs infer_run and returns a malloc'd copy of the (N, O) embeddings (NULL on error). */
static float *infer_copy(const model *m, const csc_graph *g, const infer_input *in, int64_t chunk, const char *dir) {
    infer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.chunk = chunk;
    opt.activations_dir = dir;
    infer_result res;
    cgnn_err err = {0};
    if (infer_run(&res, m, g, in, &opt, &err) != 0) {
        fprintf(stderr, "infer_run: %s\n", err.msg);
        return NULL;
    }
    const size_t bytes = (size_t)(res.num_nodes * res.dim) * sizeof(float);
    float *copy = malloc(bytes);
    memcpy(copy, res.embeddings, bytes);
    CGNN_CHECK(res.num_nodes == g->num_nodes && res.dim == m->cfg.out_dim);
    infer_result_free(&res);
    return copy;
}

/* Number of directory entries other than . and .. */
static int dir_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* ---- the row-wise linear kernel ---------------------------------------------------------- */

static void check_linear_rows(int64_t N, int64_t I, int64_t O, int with_bias, int accumulate, int *bad) {
    float *x = falloc(N * I), *w = falloc(O * I), *b = falloc(O), *init = falloc(N * O);
    float *fast = falloc(N * O), *ref = falloc(N * O), *part = falloc(N * O), *blas = falloc(N * O);
    float *work = falloc(ops_linear_rows_work(I, O));
    fill_uniform(x, N * I, -1, 1, 1);
    fill_uniform(w, O * I, -1, 1, 2);
    fill_uniform(b, O, -1, 1, 3);
    fill_uniform(init, N * O, -1, 1, 4);
    memcpy(fast, init, (size_t)(N * O) * sizeof(float));
    memcpy(ref, init, (size_t)(N * O) * sizeof(float));
    memcpy(part, init, (size_t)(N * O) * sizeof(float));
    memcpy(blas, init, (size_t)(N * O) * sizeof(float));
    const float *bias = with_bias ? b : NULL;
    ops_linear_rows_forward(fast, x, w, bias, N, I, O, accumulate, work);
    ops_linear_rows_forward_ref(ref, x, w, bias, N, I, O, accumulate);
    ops_linear_forward(blas, x, w, bias, N, I, O, accumulate);
    /* the same rows in calls of 1, 3 and 5 rows: the same bits */
    for (int64_t r = 0, step = 1; r < N; r += step, step = step == 1 ? 3 : step == 3 ? 5 : 1) {
        const int64_t n = r + step <= N ? step : N - r;
        ops_linear_rows_forward(part + r * O, x + r * I, w, bias, n, I, O, accumulate, work);
    }
    if (memcmp(fast, ref, (size_t)(N * O) * sizeof(float)) != 0) {
        fprintf(stderr, "linear_rows N=%lld I=%lld O=%lld bias=%d acc=%d: fast != ref\n", (long long)N, (long long)I,
                (long long)O, with_bias, accumulate);
        (*bad)++;
    }
    if (memcmp(fast, part, (size_t)(N * O) * sizeof(float)) != 0) {
        fprintf(stderr, "linear_rows N=%lld I=%lld O=%lld: rows depend on the call's other rows\n", (long long)N,
                (long long)I, (long long)O);
        (*bad)++;
    }
    if (max_rel_diff(fast, blas, N * O) > 1e-5) {
        fprintf(stderr, "linear_rows N=%lld I=%lld O=%lld: differs from the BLAS linear by %g\n", (long long)N,
                (long long)I, (long long)O, max_rel_diff(fast, blas, N * O));
        (*bad)++;
    }
    free(x), free(w), free(b), free(init), free(fast), free(ref), free(part), free(blas), free(work);
}

TEST(linear_rows_matches_ref_bitwise) {
    static const int64_t shapes[][3] = {{1, 1, 1}, {5, 3, 7}, {67, 13, 16}, {130, 33, 47}, {200, 64, 17}, {9, 100, 256}};
    for (int path = 0; path < 2; path++) { /* the CPU's path, then the portable 4-wide one */
        if (path == 1) setenv("CGNN_NO_AVX", "1", 1);
        int bad = 0;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int variant = 0; variant < 4; variant++)
                check_linear_rows(shapes[s][0], shapes[s][1], shapes[s][2], variant & 1, variant >> 1, &bad);
        unsetenv("CGNN_NO_AVX");
        ASSERT_EQ(bad, 0);
    }
}

TEST(linear_rows_thread_invariant) {
    const int64_t N = 300, I = 70, O = 40;
    float *x = falloc(N * I), *w = falloc(O * I), *a = falloc(N * O), *b = falloc(N * O);
    float *work = falloc(ops_linear_rows_work(I, O));
    fill_uniform(x, N * I, -1, 1, 5);
    fill_uniform(w, O * I, -1, 1, 6);
    omp_set_num_threads(1);
    ops_linear_rows_forward(a, x, w, NULL, N, I, O, 0, work);
    omp_set_num_threads(2);
    ops_linear_rows_forward(b, x, w, NULL, N, I, O, 0, work);
    ASSERT(memcmp(a, b, (size_t)(N * O) * sizeof(float)) == 0);
    free(x), free(w), free(a), free(b), free(work);
}

TEST(gcn_norm_matches_ref) {
    csc_graph g;
    make_graph(&g, 300, 7);
    float *a = falloc(g.num_nodes), *b = falloc(g.num_nodes);
    infer_gcn_norm(a, &g);
    infer_gcn_norm_ref(b, &g);
    ASSERT(memcmp(a, b, (size_t)g.num_nodes * sizeof(float)) == 0);
    ASSERT_NEAR(a[0], 1.0 / sqrt(1.0 + (double)csc_degree(&g, 0) - 1.0), 1e-6); /* node 0 has a self-edge */
    free(a), free(b);
    csc_free(&g);
}

/* ---- whole-graph inference against model_forward / the dense reference -------------------- */

/* Runs every invariance check for one model on g with inputs x (N, in). */
static void check_invariance(const model *m, const csc_graph *g, const infer_input *in, const float *full,
                             int *bad) {
    const int64_t N = g->num_nodes, O = m->cfg.out_dim;
    const size_t bytes = (size_t)(N * O) * sizeof(float);
    static const int64_t chunks[] = {1, 7, 64, 1000000};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        float *e = infer_copy(m, g, in, chunks[c], NULL);
        if (!e || memcmp(e, full, bytes) != 0) {
            fprintf(stderr, "%s: chunk %lld differs\n", model_kind_name(m->cfg.kind), (long long)chunks[c]);
            (*bad)++;
        }
        free(e);
    }
    omp_set_num_threads(1);
    float *e1 = infer_copy(m, g, in, 50, NULL);
    omp_set_num_threads(2);
    if (!e1 || memcmp(e1, full, bytes) != 0) {
        fprintf(stderr, "%s: 1 thread differs from 2\n", model_kind_name(m->cfg.kind));
        (*bad)++;
    }
    free(e1);
    setenv("CGNN_NO_AVX", "1", 1);
    float *e2 = infer_copy(m, g, in, 33, NULL);
    unsetenv("CGNN_NO_AVX");
    if (!e2 || memcmp(e2, full, bytes) != 0) {
        fprintf(stderr, "%s: the portable kernel path differs\n", model_kind_name(m->cfg.kind));
        (*bad)++;
    }
    free(e2);
    char *dir = test_tmpdir();
    float *e3 = infer_copy(m, g, in, 40, dir);
    if (!e3 || memcmp(e3, full, bytes) != 0) {
        fprintf(stderr, "%s: activations_dir differs\n", model_kind_name(m->cfg.kind));
        (*bad)++;
    }
    if (dir_entries(dir) != 0) {
        fprintf(stderr, "%s: activations_dir keeps %d files\n", model_kind_name(m->cfg.kind), dir_entries(dir));
        (*bad)++;
    }
    free(e3);
    rmdir(dir);
    free(dir);
}

static void check_kind(model_kind kind, int L, int l2, int *bad) {
    csc_graph g;
    make_graph(&g, 240, 11 + (uint64_t)kind);
    const int64_t N = g.num_nodes, F = 12, O = 5;
    float *x = falloc(N * F);
    fill_uniform(x, N * F, -1, 1, 21);
    ds_feature feat = feature_view(x, N, F);
    model m;
    make_model(&m, &g, kind, L, F, 16, O, l2, 31);
    infer_input in = {&feat, 0, NULL, 0, 0};
    float *full = infer_copy(&m, &g, &in, INFER_DEFAULT_CHUNK, NULL);
    float *ref = falloc(N * O);
    if (kind == MODEL_GCN) {
        gcn_dense_ref(&m, &g, x, ref);
    } else {
        int64_t *seeds = malloc((size_t)N * sizeof(int64_t));
        for (int64_t v = 0; v < N; v++) seeds[v] = v;
        forward_sampled(&m, &g, x, seeds, N, ref);
        /* a few seeds only (a smaller neighbourhood, other local ids): the same rows */
        int64_t few[5] = {3, 97, 0, 239, 150};
        float *part = falloc(5 * O);
        forward_sampled(&m, &g, x, few, 5, part);
        for (int i = 0; i < 5; i++)
            if (full && max_rel_diff(full + few[i] * O, part + i * O, O) > 1e-5) {
                fprintf(stderr, "%s: node %lld differs from model_forward on 5 seeds\n", model_kind_name(kind),
                        (long long)few[i]);
                (*bad)++;
            }
        free(part);
        free(seeds);
    }
    const double diff = full ? max_rel_diff(full, ref, N * O) : INFINITY;
    fprintf(stderr, "%s %d layers%s: max relative difference to the reference %.3g\n", model_kind_name(kind), L,
            l2 ? " (L2-normalised)" : "", diff);
    if (!(diff <= 1e-5)) (*bad)++;
    if (l2 && full) {
        double nrm = 0;
        for (int64_t o = 0; o < O; o++) nrm += (double)full[o] * full[o];
        if (fabs(nrm - 1.0) > 1e-5) (*bad)++;
    }
    if (full) check_invariance(&m, &g, &in, full, bad);
    free(full);
    free(ref);
    free(x);
    model_free(&m);
    csc_free(&g);
}

TEST(graphsage_equals_model_forward) {
    int bad = 0;
    check_kind(MODEL_GRAPHSAGE, 2, 0, &bad);
    check_kind(MODEL_GRAPHSAGE, 3, 1, &bad);
    ASSERT_EQ(bad, 0);
}

TEST(gcn_equals_dense_full_graph) {
    int bad = 0;
    check_kind(MODEL_GCN, 2, 0, &bad);
    check_kind(MODEL_GCN, 3, 0, &bad);
    ASSERT_EQ(bad, 0);
}

TEST(gat_equals_model_forward) {
    int bad = 0;
    check_kind(MODEL_GAT, 2, 0, &bad);
    check_kind(MODEL_GAT, 3, 1, &bad);
    ASSERT_EQ(bad, 0);
}

/* Input rows [row-normalised features | embeddings] and features absent: model_forward on rows
 * the test builds itself. */
TEST(input_rows_features_and_embeddings) {
    csc_graph g;
    make_graph(&g, 150, 41);
    const int64_t N = g.num_nodes, F = 6, E = 4, O = 3;
    float *x = falloc(N * F), *emb = falloc(N * E), *rows = falloc(N * (F + E));
    fill_uniform(x, N * F, 0, 2, 42);
    fill_uniform(emb, N * E, -1, 1, 43);
    for (int64_t v = 0; v < N; v++) {
        double l1 = 0;
        for (int64_t k = 0; k < F; k++) l1 += fabs((double)x[v * F + k]);
        for (int64_t k = 0; k < F; k++) rows[v * (F + E) + k] = (float)(x[v * F + k] * (float)(1.0 / l1));
        memcpy(rows + v * (F + E) + F, emb + v * E, (size_t)E * sizeof(float));
    }
    ds_feature feat = feature_view(x, N, F);
    int64_t *seeds = malloc((size_t)N * sizeof(int64_t));
    for (int64_t v = 0; v < N; v++) seeds[v] = v;
    float *ref = falloc(N * O);

    model m;
    make_model(&m, &g, MODEL_GRAPHSAGE, 2, F + E, 8, O, 0, 44);
    infer_input in = {&feat, 1, emb, N, E};
    float *got = infer_copy(&m, &g, &in, 32, NULL);
    forward_sampled(&m, &g, rows, seeds, N, ref);
    ASSERT(got != NULL);
    ASSERT(max_rel_diff(got, ref, N * O) <= 1e-5);
    free(got);
    model_free(&m);

    /* no features: the rows are the embeddings alone */
    make_model(&m, &g, MODEL_GRAPHSAGE, 2, E, 8, O, 0, 45);
    infer_input only_emb = {NULL, 0, emb, N, E};
    got = infer_copy(&m, &g, &only_emb, 32, NULL);
    forward_sampled(&m, &g, emb, seeds, N, ref);
    ASSERT(got != NULL);
    ASSERT(max_rel_diff(got, ref, N * O) <= 1e-5);
    free(got);

    /* inputs that do not fit the model: named errors, no crash */
    cgnn_err err = {0};
    infer_input wrong = {&feat, 0, emb, N, E}; /* F + E = 10, the model takes 4 */
    ASSERT_EQ(infer_check_input(&m, &g, &wrong, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "in_channels");
    infer_input short_emb = {NULL, 0, emb, N - 1, E};
    ASSERT_EQ(infer_check_input(&m, &g, &short_emb, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "embedding.weight");
    infer_options opt = {0, NULL, NULL, NULL, NULL};
    infer_result res;
    ASSERT_EQ(infer_run(&res, &m, &g, &only_emb, &opt, &err), -1); /* chunk 0 */
    ASSERT_STR_CONTAINS(err.msg, "chunk");
    model_free(&m);
    free(seeds), free(ref), free(x), free(emb), free(rows);
    csc_free(&g);
}

/* ---- checkpoints ---------------------------------------------------------------------------- */

TEST(model_from_checkpoint) {
    csc_graph g;
    make_graph(&g, 50, 51);
    char *dir = test_tmpdir();
    char path[4200], path2[4200];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(path2, sizeof path2, "%s/with_emb.safetensors", dir);
    model m, back;
    make_model(&m, &g, MODEL_GAT, 3, 9, 8, 4, 0, 52);
    cgnn_err err = {0};
    ASSERT_EQ(outputs_save_model(path, TASK_NODE_CLASSIFICATION, &m, m.params, &err), 0);
    st_file f;
    ASSERT_EQ(safetensors_read(&f, path, &err), 0);
    int emb = 7;
    ASSERT_EQ(infer_model_from_checkpoint(&back, &f, 1, &emb, &err), 0);
    ASSERT_EQ(emb, -1);
    ASSERT_EQ(back.cfg.kind, MODEL_GAT);
    ASSERT_EQ(back.cfg.num_layers, 3);
    ASSERT_EQ(back.cfg.in_dim, 9);
    ASSERT_EQ(back.cfg.hidden_dim, 8);
    ASSERT_EQ(back.cfg.out_dim, 4);
    ASSERT_EQ(back.cfg.num_heads, 2);
    ASSERT_EQ(back.cfg.l2_normalize_output, 1);
    ASSERT_EQ(back.num_params, m.num_params);
    ASSERT(memcmp(back.params, m.params, (size_t)m.num_params * sizeof(float)) == 0);
    model_free(&back);
    safetensors_free(&f);

    /* + embedding.weight: found, and the model still loads; an unknown tensor is an error */
    st_tensor t[MODEL_MAX_TENSORS + 1];
    for (int i = 0; i < m.num_tensors; i++) {
        t[i].name = m.tensors[i].name;
        t[i].ndim = m.tensors[i].ndim;
        for (int d = 0; d < 4; d++) t[i].shape[d] = d < m.tensors[i].ndim ? m.tensors[i].shape[d] : 1;
        t[i].data = m.params + m.tensors[i].offset;
    }
    float table[50 * 3];
    fill_uniform(table, 150, -1, 1, 53);
    t[m.num_tensors] = (st_tensor){"embedding.weight", 2, {50, 3, 1, 1}, table};
    const char *meta[] = {"cgnn_model", "GAT", "num_layers", "3", "in_channels", "9", "hidden_channels", "8",
                          "out_channels", "4", "heads", "2"};
    ASSERT_EQ(safetensors_write(path2, t, m.num_tensors + 1, meta, 6, &err), 0);
    ASSERT_EQ(safetensors_read(&f, path2, &err), 0);
    ASSERT_EQ(infer_model_from_checkpoint(&back, &f, 0, &emb, &err), 0);
    ASSERT(emb >= 0);
    ASSERT_EQ(f.shapes[emb][0], 50);
    ASSERT_EQ(f.shapes[emb][1], 3);
    ASSERT(memcmp(f.data[emb], table, sizeof table) == 0);
    model_free(&back);
    safetensors_free(&f);

    t[m.num_tensors].name = "decoder.weight";
    ASSERT_EQ(safetensors_write(path2, t, m.num_tensors + 1, meta, 6, &err), 0);
    ASSERT_EQ(safetensors_read(&f, path2, &err), 0);
    ASSERT_EQ(infer_model_from_checkpoint(&back, &f, 0, &emb, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "decoder.weight");
    safetensors_free(&f);

    /* metadata that does not match the tensors, or is missing */
    meta[5] = "10"; /* in_channels */
    ASSERT_EQ(safetensors_write(path2, t, m.num_tensors, meta, 6, &err), 0);
    ASSERT_EQ(safetensors_read(&f, path2, &err), 0);
    ASSERT_EQ(infer_model_from_checkpoint(&back, &f, 0, &emb, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "convs.0.lin.weight");
    safetensors_free(&f);
    ASSERT_EQ(safetensors_write(path2, t, m.num_tensors, meta, 2, &err), 0); /* no in_channels */
    ASSERT_EQ(safetensors_read(&f, path2, &err), 0);
    ASSERT_EQ(infer_model_from_checkpoint(&back, &f, 0, &emb, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "in_channels");
    safetensors_free(&f);

    model_free(&m);
    unlink(path);
    unlink(path2);
    rmdir(dir);
    free(dir);
    csc_free(&g);
}

int main(void) {
    omp_set_num_threads(2);
    RUN(linear_rows_matches_ref_bitwise);
    RUN(linear_rows_thread_invariant);
    RUN(gcn_norm_matches_ref);
    RUN(graphsage_equals_model_forward);
    RUN(gcn_equals_dense_full_graph);
    RUN(gat_equals_model_forward);
    RUN(input_rows_features_and_embeddings);
    RUN(model_from_checkpoint);
    return test_summary();
}
