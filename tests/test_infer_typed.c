/* test_infer_typed.c — layer-wise full-neighbourhood inference on typed graphs
 * (nn/infer_typed.h, `cgnn embed` on a typed dataset):
 *   - HeteroSAGE, RGCN (with and without bases) and HGT (2 heads), with and without an
 *     L2-normalised output, equal
 *     model_forward on a typed batch sampled with fanout -1 on every edge type and hop, for every
 *     node of every type (featured types, row-normalised features, a featureless type's table,
 *     isolated nodes, duplicate edges), and for a few seeds alone;
 *   - bitwise the same for every chunk size, 1 and 2 threads, the portable kernel path and
 *     activations in files (none left behind);
 *   - checkpoints: the typed model from a checkpoint on data/dblp-mini, its parameters and the
 *     featureless type's table; a missing table, a stray table and a homogeneous checkpoint are
 *     refused naming the file and the tensor. */
#include <dirent.h>
#include <math.h>
#include <omp.h>
#include <unistd.h>

#include "graph/typed_graph.h"
#include "io/dataset.h"
#include "io/safetensors.h"
#include "nn/infer_typed.h"
#include "nn/model.h"
#include "sample/gather.h"
#include "sample/typed_sampler.h"
#include "test.h"
#include "train/outputs.h"
#include "util/rng.h"

enum { T = 3, K = 5 };
static const int64_t NUM[T] = {60, 80, 25};
/* a->b, b->a, c->b, b->c, b->b (a self-relation with self-edges) */
static const int ESRC[K] = {0, 1, 2, 1, 1}, EDST[K] = {1, 0, 1, 2, 1};
static const int64_t WIDTH[T] = {6, 5, 4}; /* type 2 (venue) is featureless: a table 4 wide */
static const char *const NTNAME[T] = {"author", "paper", "venue"};
static const char *const REL[K] = {"writes", "written_by", "publishes", "published_in", "cites"};

static void fill_uniform(float *x, int64_t n, float lo, float hi, uint64_t seed) {
    rng r;
    rng_init(&r, seed);
    for (int64_t k = 0; k < n; k++) x[k] = lo + (hi - lo) * (float)rng_uniform(&r);
}

static float *falloc(int64_t n) { return cgnn_calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

static double max_rel_diff(const float *a, const float *b, int64_t n) {
    double worst = 0, scale = 1e-3;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs((double)b[k]));
    for (int64_t k = 0; k < n; k++) worst = fmax(worst, fabs((double)a[k] - (double)b[k]) / scale);
    return worst;
}

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

typedef struct world {
    csc_graph csc[K];
    typed_graph g;
    float *x[T];        /* (N_t, WIDTH[t]): features of types 0, 1, the table of type 2 */
    ds_feature feat[T];
    infer_typed_input in;
} world;

/* Random in-edges per edge type: degrees 0..5 (isolated destinations), a duplicate edge every
 * 9th destination, self-edges in the b->b relation. */
static void world_build(world *w, uint64_t seed) {
    memset(w, 0, sizeof *w);
    rng r;
    rng_init(&r, seed);
    const csc_graph *views[K];
    for (int e = 0; e < K; e++) {
        const int64_t ns = NUM[ESRC[e]], nd = NUM[EDST[e]];
        int32_t *src = malloc((size_t)(nd * 8 + 1) * sizeof(int32_t)), *dst = malloc((size_t)(nd * 8 + 1) * sizeof(int32_t));
        int64_t m = 0;
        for (int64_t v = 0; v < nd; v++) {
            const int64_t deg = (int64_t)rng_below(&r, 6);
            for (int64_t k = 0; k < deg; k++) {
                src[m] = (int32_t)rng_below(&r, (uint64_t)ns);
                dst[m++] = (int32_t)v;
            }
            if (deg > 0 && v % 9 == 0) src[m] = src[m - 1], dst[m++] = (int32_t)v;
            if (e == 4 && v % 7 == 0) src[m] = (int32_t)v, dst[m++] = (int32_t)v;
        }
        ds_edges ed = {NPY_DTYPE_INT32, m, src, dst};
        cgnn_err err = {0};
        CGNN_CHECK(csc_build_range(&w->csc[e], 0, nd, ns, &ed, 1, &err) == 0);
        views[e] = &w->csc[e];
        free(src);
        free(dst);
    }
    typed_graph_init(&w->g, T, NUM, K, ESRC, EDST, views);
    for (int t = 0; t < T; t++) {
        w->x[t] = falloc(NUM[t] * WIDTH[t]);
        fill_uniform(w->x[t], NUM[t] * WIDTH[t], t == 0 ? 0.0f : -1.0f, 1.0f, seed * 5 + (uint64_t)t);
        if (t < 2) {
            w->feat[t] = feature_view(w->x[t], NUM[t], WIDTH[t]);
            w->in.feat[t] = &w->feat[t];
        } else {
            w->in.table[t] = w->x[t];
        }
    }
}

static void world_free(world *w) {
    for (int e = 0; e < K; e++) csc_free(&w->csc[e]);
    for (int t = 0; t < T; t++) free(w->x[t]);
}

/* The sampler config with fanout -1 on every edge type and hop. */
static typed_sampler_config full_fanouts(int L) {
    typed_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_layers = L;
    for (int h = 0; h < L; h++)
        for (int e = 0; e < K; e++) cfg.fanouts[h][e] = -1;
    return cfg;
}

/* A typed model sized for a full-fanout batch of every node; parameters perturbed so zero biases
 * are not zero. */
static void make_model(model *m, const world *w, model_kind kind, int L, int bases, int l2, uint64_t seed) {
    model_types ty;
    memset(&ty, 0, sizeof ty);
    ty.num_node_types = T;
    ty.num_edge_types = K;
    for (int t = 0; t < T; t++) {
        snprintf(ty.node_type[t], sizeof ty.node_type[t], "%s", NTNAME[t]);
        ty.in_dim[t] = WIDTH[t];
    }
    for (int e = 0; e < K; e++) {
        snprintf(ty.edge_type[e][0], MODEL_TYPE_NAME_MAX, "%s", NTNAME[ESRC[e]]);
        snprintf(ty.edge_type[e][1], MODEL_TYPE_NAME_MAX, "%s", REL[e]);
        snprintf(ty.edge_type[e][2], MODEL_TYPE_NAME_MAX, "%s", NTNAME[EDST[e]]);
        ty.etype_src[e] = ESRC[e];
        ty.etype_dst[e] = EDST[e];
    }
    ty.num_bases = bases;
    typed_sampler_config cfg = full_fanouts(L);
    typed_sampler_capacity(&w->g, &cfg, NUM, WIDTH, &ty.cap);
    model_config mc = {.kind = kind, .num_layers = L, .hidden_dim = 8, .out_dim = 5, .l2_normalize_output = l2,
                       .num_heads = kind == MODEL_HGT ? 2 : 0, .types = &ty};
    minibatch_capacity cap = {.num_layers = L, .max_items = NUM[0] + NUM[1] + NUM[2]};
    cgnn_err err = {0};
    CGNN_CHECK(model_init(m, &mc, &cap, seed, &err) == 0);
    float *noise = falloc(m->num_params);
    fill_uniform(noise, m->num_params, -0.1f, 0.1f, seed + 99);
    for (int64_t k = 0; k < m->num_params; k++) m->params[k] += noise[k];
    free(noise);
}

/* model_forward (eval) on the typed batch of seeds[0..n) (homogenised ids) with fanout -1
 * everywhere; input rows from w (features row-normalised when normalize). out (N, O) gets the
 * output row of every seed at its homogenised id; other rows are left alone. */
static void forward_full(model *m, const world *w, const int64_t *seeds, int64_t n, int normalize, float *out) {
    const int L = m->cfg.num_layers;
    const int64_t O = m->cfg.out_dim;
    typed_sampler_config cfg = full_fanouts(L);
    int64_t max_seeds[T] = {0};
    for (int64_t i = 0; i < n; i++) max_seeds[typed_graph_type_of(&w->g, seeds[i])]++;
    minibatch_typed_capacity tcap;
    typed_sampler_capacity(&w->g, &cfg, max_seeds, WIDTH, &tcap);
    minibatch_capacity cap = {.num_layers = L, .max_items = n};
    minibatch mb;
    typed_sampler s;
    cgnn_err err = {0};
    CGNN_CHECK(minibatch_alloc_typed(&mb, &cap, &tcap, ESRC, EDST, &err) == 0);
    CGNN_CHECK(typed_sampler_init(&s, &w->g, &cfg, &tcap, &err) == 0);
    typed_sampler_sample(&s, &mb, seeds, n, 7);
    minibatch_typed *ty = mb.typed;
    for (int t = 0; t < T; t++)
        for (int64_t r = 0; r < ty->num_nodes[t][L]; r++) {
            float *row = ty->features[t] + r * ty->feat_dim[t];
            memcpy(row, w->x[t] + ty->nodes[t][r] * WIDTH[t], (size_t)WIDTH[t] * sizeof(float));
            if (normalize && t < 2) gather_normalize_rows(row, 1, WIDTH[t]);
        }
    model_forward(m, &mb, 0, 0);
    for (int t = 0; t < T; t++) {
        const float *y = model_typed_output(m, t);
        for (int64_t r = 0; r < ty->num_nodes[t][0]; r++)
            memcpy(out + (w->g.offset[t] + ty->nodes[t][r]) * O, y + r * O, (size_t)O * sizeof(float));
    }
    typed_sampler_free(&s);
    minibatch_free(&mb);
}

/* infer_typed_run's embeddings copied out (NULL on failure). */
static float *infer_copy(const model *m, const world *w, const infer_typed_input *in, int64_t chunk, const char *dir) {
    infer_options opt = {chunk, dir, NULL, NULL, NULL};
    infer_result res;
    cgnn_err err = {0};
    if (infer_typed_run(&res, m, &w->g, in, &opt, &err) != 0) {
        fprintf(stderr, "infer_typed_run: %s\n", err.msg);
        return NULL;
    }
    CGNN_CHECK(res.num_nodes == w->g.offset[T] && res.dim == m->cfg.out_dim);
    float *e = falloc(res.num_nodes * res.dim);
    memcpy(e, res.embeddings, (size_t)(res.num_nodes * res.dim) * sizeof(float));
    infer_result_free(&res);
    return e;
}

static void check_kind(model_kind kind, int L, int bases, int l2, int normalize, int *bad) {
    world w;
    world_build(&w, 11 + (uint64_t)kind * 3 + (uint64_t)L);
    w.in.normalize_rows = normalize;
    model m;
    make_model(&m, &w, kind, L, bases, l2, 31 + (uint64_t)L);
    const int64_t N = w.g.offset[T], O = m.cfg.out_dim;
    const char *name = model_kind_name(kind);
    float *full = infer_copy(&m, &w, &w.in, INFER_DEFAULT_CHUNK, NULL);
    float *ref = falloc(N * O);
    int64_t *seeds = malloc((size_t)N * sizeof(int64_t));
    for (int64_t v = 0; v < N; v++) seeds[v] = v;
    forward_full(&m, &w, seeds, N, normalize, ref);
    const double diff = full ? max_rel_diff(full, ref, N * O) : INFINITY;
    fprintf(stderr, "%s %d layers%s%s%s: max relative difference to model_forward (fanout -1) %.3g\n", name, L,
            bases ? ", bases" : "", l2 ? ", L2-normalised" : "", normalize ? ", row-normalised features" : "", diff);
    if (!(diff <= 1e-5)) (*bad)++;
    /* a few seeds of one type alone: a smaller neighbourhood, other local ids, the same rows */
    const int64_t few[4] = {w.g.offset[1] + 3, w.g.offset[1] + 79, w.g.offset[1] + 0, w.g.offset[1] + 41};
    float *part = falloc(N * O);
    forward_full(&m, &w, few, 4, normalize, part);
    for (int i = 0; i < 4 && full; i++)
        if (max_rel_diff(full + few[i] * O, part + few[i] * O, O) > 1e-5) {
            fprintf(stderr, "%s: node %lld differs from model_forward on 4 seeds\n", name, (long long)few[i]);
            (*bad)++;
        }
    if (l2 && full)
        for (int64_t v = 0; v < N; v++) {
            double nrm = 0;
            for (int64_t o = 0; o < O; o++) nrm += (double)full[v * O + o] * full[v * O + o];
            if (fabs(nrm - 1.0) > 1e-5) {
                (*bad)++;
                break;
            }
        }
    /* invariance: chunk sizes, threads, the portable kernel path, activations in files */
    const size_t bytes = (size_t)(N * O) * sizeof(float);
    static const int64_t chunks[] = {1, 7, 64, 1000000};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0] && full; c++) {
        float *e = infer_copy(&m, &w, &w.in, chunks[c], NULL);
        if (!e || memcmp(e, full, bytes) != 0) {
            fprintf(stderr, "%s: chunk %lld differs\n", name, (long long)chunks[c]);
            (*bad)++;
        }
        free(e);
    }
    omp_set_num_threads(1);
    float *e1 = infer_copy(&m, &w, &w.in, 13, NULL);
    omp_set_num_threads(2);
    if (!e1 || !full || memcmp(e1, full, bytes) != 0) {
        fprintf(stderr, "%s: 1 thread differs from 2\n", name);
        (*bad)++;
    }
    free(e1);
    setenv("CGNN_NO_AVX", "1", 1);
    float *e2 = infer_copy(&m, &w, &w.in, 33, NULL);
    unsetenv("CGNN_NO_AVX");
    if (!e2 || !full || memcmp(e2, full, bytes) != 0) {
        fprintf(stderr, "%s: the portable kernel path differs\n", name);
        (*bad)++;
    }
    free(e2);
    char *dir = test_tmpdir();
    float *e3 = infer_copy(&m, &w, &w.in, 20, dir);
    if (!e3 || !full || memcmp(e3, full, bytes) != 0) {
        fprintf(stderr, "%s: activations_dir differs\n", name);
        (*bad)++;
    }
    if (dir_entries(dir) != 0) {
        fprintf(stderr, "%s: activations_dir keeps %d files\n", name, dir_entries(dir));
        (*bad)++;
    }
    rmdir(dir);
    free(dir);
    free(e3);
    free(part);
    free(seeds);
    free(ref);
    free(full);
    model_free(&m);
    world_free(&w);
}

TEST(hetero_sage_equals_model_forward) {
    int bad = 0;
    check_kind(MODEL_HETERO_SAGE, 2, 0, 0, 0, &bad);
    check_kind(MODEL_HETERO_SAGE, 3, 0, 1, 1, &bad);
    ASSERT_EQ(bad, 0);
}

TEST(rgcn_equals_model_forward) {
    int bad = 0;
    check_kind(MODEL_RGCN, 2, 0, 0, 1, &bad);
    check_kind(MODEL_RGCN, 3, 2, 1, 0, &bad);
    ASSERT_EQ(bad, 0);
}

TEST(hgt_equals_model_forward) {
    int bad = 0;
    check_kind(MODEL_HGT, 2, 0, 0, 1, &bad);
    check_kind(MODEL_HGT, 3, 0, 1, 0, &bad);
    ASSERT_EQ(bad, 0);
}

/* Wrong inputs: a table of the wrong width is refused naming the type. */
TEST(input_checks) {
    world w;
    world_build(&w, 5);
    model m;
    make_model(&m, &w, MODEL_RGCN, 2, 0, 0, 3);
    infer_typed_input in = w.in;
    ds_feature narrow = feature_view(w.x[0], NUM[0], WIDTH[0] - 1);
    in.feat[0] = &narrow;
    infer_options opt = {16, NULL, NULL, NULL, NULL};
    infer_result res;
    cgnn_err err = {0};
    ASSERT(infer_typed_run(&res, &m, &w.g, &in, &opt, &err) != 0);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "author");
    in = w.in;
    in.table[2] = NULL;
    ASSERT(infer_typed_run(&res, &m, &w.g, &in, &opt, &err) != 0);
    ASSERT_STR_CONTAINS(err.msg, "venue");
    model_free(&m);
    world_free(&w);
}

/* A model over data/dblp-mini's types (venue featureless: a table of width 8), saved as cgnn
 * train saves it; read back by infer_typed_model_from_checkpoint. */
TEST(model_from_checkpoint) {
    char dsdir[4096];
    snprintf(dsdir, sizeof dsdir, "%s/data/dblp-mini", test_source_dir());
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, dsdir, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        ASSERT(0);
        return;
    }
    const int DT = ds.num_node_types, DK = ds.num_edge_types;
    model_types *ty = cgnn_calloc(1, sizeof *ty);
    ty->num_node_types = DT;
    ty->num_edge_types = DK;
    int venue = -1;
    for (int t = 0; t < DT; t++) {
        snprintf(ty->node_type[t], MODEL_TYPE_NAME_MAX, "%s", ds.node_types[t].name);
        const ds_feature *f = dataset_find_feature(&ds, DS_DOMAIN_NODE, t, "feat");
        ty->in_dim[t] = f ? f->dim : 8;
        if (!f) venue = t;
        for (int h = 0; h <= 2; h++) ty->cap.max_nodes[t][h] = 1;
    }
    ASSERT(venue >= 0);
    for (int e = 0; e < DK; e++) {
        char a[3][DATASET_NAME_MAX];
        ASSERT_EQ(sscanf(ds.edge_types[e].name, "%127[^:]:%127[^:]:%127s", a[0], a[1], a[2]), 3);
        for (int k = 0; k < 3; k++) snprintf(ty->edge_type[e][k], MODEL_TYPE_NAME_MAX, "%.127s", a[k]);
        ty->etype_src[e] = ds.edge_types[e].src_type;
        ty->etype_dst[e] = ds.edge_types[e].dst_type;
        for (int h = 0; h < 2; h++) ty->cap.max_edges[h][e] = 1;
    }
    ty->num_bases = 3;
    model_config mc = {.kind = MODEL_RGCN, .num_layers = 2, .hidden_dim = 16, .out_dim = 4, .types = ty};
    minibatch_capacity cap = {.num_layers = 2, .max_items = 1};
    model m;
    ASSERT(model_init(&m, &mc, &cap, 5, &err) == 0);
    for (int64_t k = 0; k < m.num_params; k++) m.params[k] += 0.01f * (float)(k % 7);
    const int64_t R = ds.node_types[venue].num_nodes;
    float *table = falloc(R * 8);
    fill_uniform(table, R * 8, -1, 1, 3);
    char key[DATASET_NAME_MAX + 32];
    snprintf(key, sizeof key, "embedding_dict.%s.weight", ds.node_types[venue].name);
    char *dir = test_tmpdir();
    char path[4200], path2[4200], path3[4200];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(path2, sizeof path2, "%s/notable.safetensors", dir);
    snprintf(path3, sizeof path3, "%s/stray.safetensors", dir);
    outputs_table tb = {key, table, R, 8};
    ASSERT(outputs_save_model_tables(path, TASK_NODE_CLASSIFICATION, &m, m.params, &tb, 1, &err) == 0);
    ASSERT(outputs_save_model_tables(path2, TASK_NODE_CLASSIFICATION, &m, m.params, NULL, 0, &err) == 0);
    outputs_table stray[2] = {tb, {"embedding_dict.author.weight", table, R, 8}};
    ASSERT(outputs_save_model_tables(path3, TASK_NODE_CLASSIFICATION, &m, m.params, stray, 2, &err) == 0);

    st_file f;
    ASSERT(safetensors_read(&f, path, &err) == 0);
    model m2;
    infer_typed_input in;
    ASSERT(infer_typed_model_from_checkpoint(&m2, &in, &f, &ds, 1, &err) == 0);
    ASSERT_EQ(m2.cfg.kind, MODEL_RGCN);
    ASSERT_EQ(m2.types->num_bases, 3);
    ASSERT_EQ(m2.cfg.l2_normalize_output, 1);
    ASSERT_EQ(m2.num_params, m.num_params);
    ASSERT(memcmp(m2.params, m.params, (size_t)m.num_params * sizeof(float)) == 0);
    ASSERT(in.table[venue] && memcmp(in.table[venue], table, (size_t)(R * 8) * sizeof(float)) == 0);
    for (int t = 0; t < DT; t++) ASSERT((in.feat[t] != NULL) == (t != venue));
    model_free(&m2);
    safetensors_free(&f);

    ASSERT(safetensors_read(&f, path2, &err) == 0); /* the venue table missing */
    ASSERT(infer_typed_model_from_checkpoint(&m2, &in, &f, &ds, 0, &err) != 0);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, key);
    ASSERT_STR_CONTAINS(err.msg, "notable.safetensors");
    safetensors_free(&f);
    ASSERT(safetensors_read(&f, path3, &err) == 0); /* a table for a type that has features */
    ASSERT(infer_typed_model_from_checkpoint(&m2, &in, &f, &ds, 0, &err) != 0);
    ASSERT_STR_CONTAINS(err.msg, "embedding_dict.author.weight");
    safetensors_free(&f);

    /* an HGT checkpoint: its heads from the metadata, every tensor by key */
    model g;
    model_config gc = {.kind = MODEL_HGT, .num_layers = 2, .hidden_dim = 16, .out_dim = 4, .num_heads = 4,
                       .types = ty};
    ty->num_bases = 0;
    ASSERT(model_init(&g, &gc, &cap, 6, &err) == 0);
    ASSERT(outputs_save_model_tables(path, TASK_NODE_CLASSIFICATION, &g, g.params, &tb, 1, &err) == 0);
    ASSERT(safetensors_read(&f, path, &err) == 0);
    ASSERT(infer_typed_model_from_checkpoint(&m2, &in, &f, &ds, 0, &err) == 0);
    ASSERT_EQ(m2.cfg.kind, MODEL_HGT);
    ASSERT_EQ(m2.cfg.num_heads, 4);
    ASSERT_EQ(m2.num_params, g.num_params);
    ASSERT(memcmp(m2.params, g.params, (size_t)g.num_params * sizeof(float)) == 0);
    model_free(&m2);
    safetensors_free(&f);
    model_free(&g);

    /* a homogeneous checkpoint on the typed dataset */
    model h;
    model_config hc = {.kind = MODEL_GRAPHSAGE, .num_layers = 1, .in_dim = 4, .hidden_dim = 4, .out_dim = 2};
    minibatch_capacity hcap = {.num_layers = 1, .max_items = 1, .max_nodes = {1, 1}, .max_edges = {1}, .feat_dim = 4};
    ASSERT(model_init(&h, &hc, &hcap, 1, &err) == 0);
    ASSERT(outputs_save_model(path2, TASK_NODE_CLASSIFICATION, &h, h.params, &err) == 0);
    ASSERT(safetensors_read(&f, path2, &err) == 0);
    ASSERT(infer_typed_model_from_checkpoint(&m2, &in, &f, &ds, 0, &err) != 0);
    ASSERT_STR_CONTAINS(err.msg, "not a typed model");
    safetensors_free(&f);
    model_free(&h);

    unlink(path), unlink(path2), unlink(path3);
    rmdir(dir);
    free(dir);
    free(table);
    model_free(&m);
    free(ty);
    dataset_close(&ds);
}

int main(void) {
    omp_set_num_threads(2);
    RUN(hetero_sage_equals_model_forward);
    RUN(rgcn_equals_model_forward);
    RUN(hgt_equals_model_forward);
    RUN(input_checks);
    RUN(model_from_checkpoint);
    return test_summary();
}
