/* test_embedding.c — learnable embedding tables (nn/embedding.h) and their checkpoint
 * (train/outputs.h):
 *   - init: N(0, 1), bitwise the same for 1 and 2 threads, row r independent of the table size;
 *     bad arguments are errors naming the field;
 *   - gather into a strided (n, F + D) matrix, other columns untouched;
 *   - embedding_sparse_step == embedding_apply_ref bitwise (every optimiser, dims with and
 *     without an SSE tail, strided gradients, 1 and 2 threads), duplicates summed in input
 *     order and scaled by 1/divisor, bad ids rejected before anything changes;
 *   - PyTorch 1.13 trajectories (tests/fixtures/embedding, from
 *     scripts/fixtures/make_embedding_fixtures.py: torch.nn.Embedding(sparse=True) with
 *     SparseAdam, Adagrad, SGD, each also with the lazy weight decay) replayed within RTOL;
 *   - LightGCN's batch regularisation (value and gradient) against torch, finite differences;
 *     the init std scaling;
 *   - untouched rows' optimiser-state pages are never made resident (mincore);
 *   - checkpoints: "embedding.weight" round trip, shape / absence errors naming the key, the model
 *     loader skipping the key, and torch reading it (when /usr/bin/python3 has torch);
 *   - the speed of one step (8k rows x 64 of a 200k-row table here; set
 *     CGNN_BENCH_EMBEDDING_ROWS=10000000 for the 10M-row figure).
 * The MPI all-gather path is tested by tests/mpi_embedding_check.c (test_mpi_embedding.sh). */
#include <omp.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "io/npy.h"
#include "io/safetensors.h"
#include "nn/embedding.h"
#include "nn/model.h"
#include "test.h"
#define FIX_SUBDIR "embedding"
#include "test_fixture.h"
#include "train/outputs.h"
#include "util/rng.h"


/* A pseudo-random float in [-1, 1) from stream key k, draw i. */
static float urand(uint64_t k, uint64_t i) {
    rng r;
    rng_init(&r, rng_key(k, i));
    return (float)(rng_uniform(&r) * 2.0 - 1.0);
}

static int same_bits(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

/* The table's weight and optimiser state equal bitwise. */
static int same_table(const embedding_table *a, const embedding_table *b) {
    size_t bytes = (size_t)(a->num_rows * a->dim) * sizeof(float);
    if (a->num_rows != b->num_rows || a->dim != b->dim || a->step != b->step) return 0;
    if (!same_bits(a->weight, b->weight, bytes)) return 0;
    if ((a->m == NULL) != (b->m == NULL) || (a->m && !same_bits(a->m, b->m, bytes))) return 0;
    if ((a->v == NULL) != (b->v == NULL) || (a->v && !same_bits(a->v, b->v, bytes))) return 0;
    return 1;
}

/* torch defaults for kind (SparseAdam lr 1e-3 betas (0.9, 0.999) eps 1e-8; Adagrad eps 1e-10). */
static int init_default(embedding_table *e, int64_t R, int64_t D, uint64_t seed, embedding_optim kind, double lr) {
    cgnn_err err = {0};
    double eps = kind == EMB_OPTIM_ADAGRAD ? 1e-10 : 1e-8;
    int rc = embedding_init(e, R, D, seed, kind, lr, 0.9, 0.999, eps, &err);
    if (rc != 0) fprintf(stderr, "embedding_init: %s\n", err.msg);
    return rc;
}

TEST(names) {
    embedding_optim k;
    for (int i = 0; i < EMB_OPTIM_COUNT; i++) {
        ASSERT_EQ(embedding_optim_parse(embedding_optim_name((embedding_optim)i), &k), 0);
        ASSERT_EQ(k, i);
    }
    ASSERT_EQ(embedding_optim_parse("torch.optim.SparseAdam", &k), 0);
    ASSERT_EQ(k, EMB_OPTIM_SPARSE_ADAM);
    ASSERT_EQ(embedding_optim_parse("Adam", &k), -1);
    ASSERT_EQ(embedding_optim_parse(NULL, &k), -1);
}

TEST(init_rejects_bad_arguments) {
    embedding_table e;
    cgnn_err err = {0};
    ASSERT_EQ(embedding_init(&e, 0, 4, 1, EMB_OPTIM_SGD, 0.1, 0, 0, 0, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "num_rows");
    ASSERT_EQ(embedding_init(&e, 10, 0, 1, EMB_OPTIM_SGD, 0.1, 0, 0, 0, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "dim");
    ASSERT_EQ(embedding_init(&e, INT64_MAX / 2, 64, 1, EMB_OPTIM_SGD, 0.1, 0, 0, 0, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "too large");
    ASSERT_EQ(embedding_init(&e, 10, 4, 1, EMB_OPTIM_SPARSE_ADAM, 0.0, 0.9, 0.999, 1e-8, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "SparseAdam: lr");
    ASSERT_EQ(embedding_init(&e, 10, 4, 1, EMB_OPTIM_SPARSE_ADAM, 0.1, 1.0, 0.999, 1e-8, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "betas[0]");
    ASSERT_EQ(embedding_init(&e, 10, 4, 1, EMB_OPTIM_SPARSE_ADAM, 0.1, 0.9, -0.1, 1e-8, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "betas[1]");
    ASSERT_EQ(embedding_init(&e, 10, 4, 1, EMB_OPTIM_SPARSE_ADAM, 0.1, 0.9, 0.999, 0.0, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "eps");
    ASSERT_EQ(embedding_init(&e, 10, 4, 1, EMB_OPTIM_ADAGRAD, -1.0, 0, 0, 1e-10, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "Adagrad: lr");
    ASSERT_EQ(embedding_init(&e, 10, 4, 1, EMB_OPTIM_ADAGRAD, 0.1, 0, 0, NAN, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "eps");
    ASSERT_EQ(embedding_init(&e, 10, 4, 1, (embedding_optim)7, 0.1, 0, 0, 0, &err), -1);
    ASSERT(e.weight == NULL && e.m == NULL && e.scratch == NULL); /* a failed init owns nothing */
    embedding_free(&e);
    embedding_free(NULL);
}

TEST(init_deterministic_and_normal) {
    const int64_t R = 3000, D = 17; /* odd D: the last normal pair is half used */
    embedding_table a, b, c, small;
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    ASSERT_EQ(init_default(&a, R, D, 7, EMB_OPTIM_SPARSE_ADAM, 1e-3), 0);
    omp_set_num_threads(2);
    ASSERT_EQ(init_default(&b, R, D, 7, EMB_OPTIM_SGD, 0.1), 0);
    omp_set_num_threads(saved);
    ASSERT_EQ(init_default(&c, R, D, 8, EMB_OPTIM_SGD, 0.1), 0);
    ASSERT_EQ(init_default(&small, 10, D, 7, EMB_OPTIM_SGD, 0.1), 0);
    const size_t bytes = (size_t)(R * D) * sizeof(float);
    ASSERT(same_bits(a.weight, b.weight, bytes));                               /* thread count */
    ASSERT(same_bits(a.weight, small.weight, (size_t)(10 * D) * sizeof(float))); /* table size */
    ASSERT(!same_bits(a.weight, c.weight, (size_t)D * sizeof(float)));          /* seed */
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < R * D; i++) {
        ASSERT(isfinite(a.weight[i]));
        sum += a.weight[i];
        sq += (double)a.weight[i] * a.weight[i];
    }
    double mean = sum / (double)(R * D), var = sq / (double)(R * D) - mean * mean;
    ASSERT_NEAR(mean, 0.0, 0.02);
    ASSERT_NEAR(var, 1.0, 0.03);
    /* state: zero, two (R, D) maps for SparseAdam, none for SGD */
    for (int64_t i = 0; i < R * D; i++) ASSERT(a.m[i] == 0.0f && a.v[i] == 0.0f);
    ASSERT(b.m == NULL && b.v == NULL);
    ASSERT_EQ(embedding_optim_state_bytes(&a), 2 * (int64_t)bytes);
    ASSERT_EQ(embedding_optim_state_bytes(&b), 0);
    ASSERT(embedding_state_bytes(&a) >= 3 * (int64_t)bytes);
    ASSERT_EQ(a.step, 0);
    embedding_free(&a);
    embedding_free(&b);
    embedding_free(&c);
    embedding_free(&small);
}

TEST(gather_strided) {
    const int64_t R = 50, D = 6, F = 3, n = 7, stride = F + D + 2;
    embedding_table e;
    ASSERT_EQ(init_default(&e, R, D, 3, EMB_OPTIM_SGD, 0.1), 0);
    const int64_t ids[7] = {4, 0, 49, 4, 17, 33, 2}; /* a repeat is fine for reading */
    float out[7 * 11];
    for (int i = 0; i < n * stride; i++) out[i] = -99.0f;
    embedding_gather(&e, ids, n, out, stride, F);
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < stride; c++) {
            float want = (c >= F && c < F + D) ? e.weight[ids[i] * D + c - F] : -99.0f;
            ASSERT(out[i * stride + c] == want);
        }
    embedding_gather(&e, ids, 0, NULL, stride, F); /* empty */
    /* contiguous (n, D) */
    float flat[7 * 6];
    embedding_gather(&e, ids, n, flat, D, 0);
    ASSERT(same_bits(flat + 2 * D, e.weight + 49 * D, (size_t)D * sizeof(float)));
    /* large enough for the parallel path, 1 vs 2 threads */
    embedding_table big;
    ASSERT_EQ(init_default(&big, 20000, 64, 5, EMB_OPTIM_SGD, 0.1), 0);
    int64_t *bid = (int64_t *)malloc(4000 * sizeof(int64_t));
    float *o1 = (float *)malloc(4000 * 70 * sizeof(float)), *o2 = (float *)malloc(4000 * 70 * sizeof(float));
    for (int i = 0; i < 4000; i++) bid[i] = (i * 7919) % 20000;
    memset(o1, 0, 4000 * 70 * sizeof(float));
    memset(o2, 0, 4000 * 70 * sizeof(float));
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    embedding_gather(&big, bid, 4000, o1, 70, 6);
    omp_set_num_threads(2);
    embedding_gather(&big, bid, 4000, o2, 70, 6);
    omp_set_num_threads(saved);
    int ok = same_bits(o1, o2, 4000 * 70 * sizeof(float));
    ok = ok && same_bits(o1 + 1234 * 70 + 6, big.weight + bid[1234] * 64, 64 * sizeof(float));
    free(bid);
    free(o1);
    free(o2);
    embedding_free(&big);
    embedding_free(&e);
    ASSERT(ok);
}

/* Step s of a random problem: n distinct ids of [0, R) (a random permutation's prefix) and their
 * gradients at column col of an (n, stride) matrix, other columns garbage. */
static int64_t make_step(int64_t *ids, float *mat, int64_t R, int64_t D, int64_t stride, int64_t col, int64_t nmax,
                         uint64_t key) {
    rng r;
    rng_init(&r, key);
    int64_t n = (int64_t)rng_below(&r, (uint64_t)nmax + 1);
    /* partial Fisher-Yates over a scratch permutation held in ids' tail is not possible (n < R):
     * draw candidates and skip repeats, fine at these sizes */
    int64_t k = 0;
    while (k < n) {
        int64_t id = (int64_t)rng_below(&r, (uint64_t)R), dup = 0;
        for (int64_t q = 0; q < k && !dup; q++) dup = ids[q] == id;
        if (!dup) ids[k++] = id;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < stride; c++)
            mat[i * stride + c] = (c >= col && c < col + D) ? urand(key, (uint64_t)(i * stride + c)) * 0.5f : 1e30f;
    return n;
}

/* Packs the gradient columns of mat into (n, D). */
static void pack(float *out, const float *mat, int64_t n, int64_t D, int64_t stride, int64_t col) {
    for (int64_t i = 0; i < n; i++) memcpy(out + i * D, mat + i * stride + col, (size_t)D * sizeof(float));
}

TEST(step_matches_ref_bitwise) {
    const int64_t dims[] = {1, 3, 4, 6, 64};
    const int nthreads[] = {1, 2};
    int bad = 0;
    for (int wdi = 0; wdi < 2 && !bad; wdi++) /* without and with the lazy weight decay */
    for (int kind = 0; kind < EMB_OPTIM_COUNT && !bad; kind++)
        for (size_t di = 0; di < sizeof dims / sizeof dims[0] && !bad; di++)
            for (int ti = 0; ti < 2 && !bad; ti++) {
                const int64_t D = dims[di], R = D == 64 ? 2000 : 300, nmax = D == 64 ? 900 : 200;
                const int64_t col = 2, stride = D + 5;
                embedding_table fast, ref;
                CGNN_CHECK(init_default(&fast, R, D, 11, (embedding_optim)kind, 0.05) == 0);
                CGNN_CHECK(init_default(&ref, R, D, 11, (embedding_optim)kind, 0.05) == 0);
                CGNN_CHECK(embedding_set_weight_decay(&fast, wdi ? 0.3 : 0.0, NULL) == 0);
                CGNN_CHECK(embedding_set_weight_decay(&ref, wdi ? 0.3 : 0.0, NULL) == 0);
                int64_t *ids = (int64_t *)malloc((size_t)nmax * sizeof(int64_t));
                float *mat = (float *)malloc((size_t)(nmax * stride) * sizeof(float));
                float *g = (float *)malloc((size_t)(nmax * D) * sizeof(float));
                int saved = omp_get_max_threads();
                omp_set_num_threads(nthreads[ti]);
                for (int s = 0; s < 6 && !bad; s++) {
                    int64_t n = make_step(ids, mat, R, D, stride, col, nmax, rng_key(kind * 100 + di, s));
                    double lr = 0.05 * (s + 1); /* as a scheduler would vary it */
                    cgnn_err err = {0};
                    if (embedding_sparse_step(&fast, NULL, ids, mat, n, stride, col, lr, 1.0, &err) != 0) bad = 1;
                    pack(g, mat, n, D, stride, col);
                    embedding_apply_ref(&ref, ids, g, n, lr);
                    if (!same_table(&fast, &ref)) {
                        fprintf(stderr, "%s D=%lld threads=%d wd %d step %d: fast != ref\n",
                                embedding_optim_name((embedding_optim)kind), (long long)D, nthreads[ti], wdi, s);
                        bad = 1;
                    }
                }
                omp_set_num_threads(saved);
                if (!bad && fast.step != 6) bad = 1;
                free(ids);
                free(mat);
                free(g);
                embedding_free(&fast);
                embedding_free(&ref);
            }
    ASSERT(!bad);
}

TEST(duplicates_are_summed_then_scaled) {
    const int64_t R = 20, D = 5, stride = 9, col = 4;
    for (int kind = 0; kind < EMB_OPTIM_COUNT; kind++) {
        embedding_table fast, ref;
        ASSERT_EQ(init_default(&fast, R, D, 2, (embedding_optim)kind, 0.1), 0);
        ASSERT_EQ(init_default(&ref, R, D, 2, (embedding_optim)kind, 0.1), 0);
        /* two steps: [3, 5, 3, 7, 5, 3] (3 three times: the order of the sum matters) with
         * divisor 3, then [7, 1] with divisor 1 */
        const int64_t ids1[6] = {3, 5, 3, 7, 5, 3};
        float mat[6 * 9];
        for (int i = 0; i < 6 * 9; i++) mat[i] = urand(99, (uint64_t)i) * (i % 3 == 0 ? 1e3f : 1e-3f);
        cgnn_err err = {0};
        ASSERT_EQ(embedding_sparse_step(&fast, NULL, ids1, mat, 6, stride, col, 0.1, 3.0, &err), 0);
        /* by hand: first-appearance order 3, 5, 7; sums left to right; times (float)(1/3) */
        const int64_t uniq[3] = {3, 5, 7};
        const int rows_of[3][3] = {{0, 2, 5}, {1, 4, -1}, {3, -1, -1}};
        const float inv = (float)(1.0 / 3.0);
        float merged[3 * 5];
        for (int u = 0; u < 3; u++)
            for (int j = 0; j < D; j++) {
                float acc = mat[rows_of[u][0] * stride + col + j];
                for (int q = 1; q < 3 && rows_of[u][q] >= 0; q++) acc = acc + mat[rows_of[u][q] * stride + col + j];
                merged[u * D + j] = acc * inv;
            }
        embedding_apply_ref(&ref, uniq, merged, 3, 0.1);
        ASSERT(same_table(&fast, &ref));
        const int64_t ids2[2] = {7, 1};
        float mat2[2 * 9], g2[2 * 5];
        for (int i = 0; i < 2 * 9; i++) mat2[i] = urand(98, (uint64_t)i);
        ASSERT_EQ(embedding_sparse_step(&fast, NULL, ids2, mat2, 2, stride, col, 0.2, 1.0, &err), 0);
        pack(g2, mat2, 2, D, stride, col);
        embedding_apply_ref(&ref, ids2, g2, 2, 0.2);
        ASSERT(same_table(&fast, &ref));
        /* an empty step only advances the counter */
        ASSERT_EQ(embedding_sparse_step(&fast, NULL, NULL, NULL, 0, stride, col, 0.2, 1.0, &err), 0);
        embedding_apply_ref(&ref, NULL, NULL, 0, 0.2);
        ASSERT(same_table(&fast, &ref));
        ASSERT_EQ(fast.step, 3);
        /* rows never touched keep their initial values */
        embedding_table init;
        ASSERT_EQ(init_default(&init, R, D, 2, EMB_OPTIM_SGD, 0.1), 0);
        ASSERT(same_bits(fast.weight, init.weight, (size_t)D * sizeof(float)));          /* row 0 */
        ASSERT(!same_bits(fast.weight + 3 * D, init.weight + 3 * D, (size_t)D * sizeof(float))); /* row 3 */
        embedding_free(&init);
        embedding_free(&fast);
        embedding_free(&ref);
    }
}

TEST(merge_order_is_input_order) {
    /* Three values whose float sum depends on the order: (a + b) + c != (c + b) + a. A step with
     * ids [0, 0, 0] must apply ((g0 + g1) + g2), as torch's coalesce and the rank order say. */
    const float g[3] = {1.0f, 1e8f, -1e8f}; /* (1 + 1e8) - 1e8 = 0; (-1e8 + 1e8) + 1 = 1 */
    embedding_table e, want;
    ASSERT_EQ(init_default(&e, 4, 1, 1, EMB_OPTIM_SGD, 1.0), 0);
    ASSERT_EQ(init_default(&want, 4, 1, 1, EMB_OPTIM_SGD, 1.0), 0);
    const int64_t ids[3] = {0, 0, 0}, one = 0;
    cgnn_err err = {0};
    ASSERT_EQ(embedding_sparse_step(&e, NULL, ids, g, 3, 1, 0, 1.0, 1.0, &err), 0);
    const float sum = (g[0] + g[1]) + g[2];
    ASSERT(sum == 0.0f); /* the order matters for these values */
    embedding_apply_ref(&want, &one, &sum, 1, 1.0);
    ASSERT(same_table(&e, &want));
    embedding_free(&e);
    embedding_free(&want);
}

TEST(bad_ids_change_nothing) {
    const int64_t R = 30, D = 4;
    embedding_table e, orig;
    ASSERT_EQ(init_default(&e, R, D, 4, EMB_OPTIM_SPARSE_ADAM, 0.1), 0);
    ASSERT_EQ(init_default(&orig, R, D, 4, EMB_OPTIM_SPARSE_ADAM, 0.1), 0);
    float g[3 * 4];
    for (int i = 0; i < 12; i++) g[i] = 0.5f;
    cgnn_err err = {0};
    const int64_t hi[3] = {1, 2, 30};
    ASSERT_EQ(embedding_sparse_step(&e, NULL, hi, g, 3, D, 0, 0.1, 1.0, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "row id 30");
    ASSERT_STR_CONTAINS(err.msg, "[0, 30)");
    const int64_t neg[3] = {-1, 2, 3};
    ASSERT_EQ(embedding_sparse_step(&e, NULL, neg, g, 3, D, 0, 0.1, 1.0, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "row id -1");
    ASSERT(same_table(&e, &orig)); /* rows 1, 2 untouched, step not counted */
    ASSERT_EQ(e.step, 0);
    embedding_free(&e);
    embedding_free(&orig);
}

/* ---- PyTorch trajectories --------------------------------------------------------------- */

static int open_fixture(npy_array *a, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/embedding/%s.npy", test_source_dir(), name);
    cgnn_err err = {0};
    if (npy_open(a, path, 1, &err) != 0) {
        fprintf(stderr, "cannot open fixture: %s\n", err.msg);
        return -1;
    }
    return 0;
}

typedef struct torch_case {
    const char *name; /* traj_<name>.npy; configurations as in make_embedding_fixtures.py */
    embedding_optim kind;
    double lr, beta1, beta2, eps, weight_decay;
} torch_case;

static const torch_case TORCH_CASES[] = {
    {"sparse_adam", EMB_OPTIM_SPARSE_ADAM, 0.01, 0.9, 0.999, 1e-8, 0.0},
    {"sparse_adam_b", EMB_OPTIM_SPARSE_ADAM, 0.05, 0.8, 0.99, 1e-6, 0.0},
    {"adagrad", EMB_OPTIM_ADAGRAD, 0.1, 0.9, 0.999, 1e-10, 0.0},
    {"sgd", EMB_OPTIM_SGD, 0.3, 0.9, 0.999, 0.0, 0.0},
    /* the lazy weight decay: torch's optimiser on g + wd · p of the step's rows */
    {"sparse_adam_wd", EMB_OPTIM_SPARSE_ADAM, 0.01, 0.9, 0.999, 1e-8, 0.05},
    {"adagrad_wd", EMB_OPTIM_ADAGRAD, 0.1, 0.9, 0.999, 1e-10, 0.2},
    {"sgd_wd", EMB_OPTIM_SGD, 0.3, 0.9, 0.999, 0.0, 0.1},
};

TEST(trajectories_match_torch) {
    npy_array w0, ids, grads, ptr;
    ASSERT_EQ(open_fixture(&w0, "w0"), 0);
    ASSERT_EQ(open_fixture(&ids, "ids"), 0);
    ASSERT_EQ(open_fixture(&grads, "grads"), 0);
    ASSERT_EQ(open_fixture(&ptr, "ptr"), 0);
    ASSERT_EQ(w0.dtype, NPY_DTYPE_FLOAT32);
    ASSERT_EQ(ids.dtype, NPY_DTYPE_INT64);
    ASSERT_EQ(ptr.dtype, NPY_DTYPE_INT64);
    const int64_t R = w0.shape[0], D = w0.shape[1], S = ptr.count - 1;
    ASSERT_EQ(S, 5);
    ASSERT_EQ(grads.shape[0], ids.count);
    ASSERT_EQ(grads.shape[1], D);
    const int64_t *p = (const int64_t *)ptr.data;
    int bad = 0;
    double worst = 0;
    for (size_t c = 0; c < sizeof TORCH_CASES / sizeof TORCH_CASES[0] && !bad; c++) {
        const torch_case *tc = &TORCH_CASES[c];
        char fname[128];
        snprintf(fname, sizeof fname, "traj_%s", tc->name);
        npy_array traj;
        if (open_fixture(&traj, fname) != 0) {
            bad = 1;
            break;
        }
        embedding_table e;
        cgnn_err err = {0};
        if (traj.shape[0] != S || traj.shape[1] != R || traj.shape[2] != D ||
            embedding_init(&e, R, D, 0, tc->kind, tc->lr, tc->beta1, tc->beta2, tc->eps, &err) != 0) {
            fprintf(stderr, "%s: %s\n", tc->name, err.msg[0] ? err.msg : "unexpected fixture shape");
            npy_close(&traj);
            bad = 1;
            break;
        }
        memcpy(e.weight, w0.data, (size_t)(R * D) * sizeof(float));
        CGNN_CHECK(embedding_set_weight_decay(&e, tc->weight_decay, &err) == 0);
        for (int64_t s = 0; s < S && !bad; s++) {
            /* the fixture's rows include duplicates: the step merges them as torch's coalesce */
            const int64_t b = p[s], n = p[s + 1] - p[s];
            if (embedding_sparse_step(&e, NULL, (const int64_t *)ids.data + b, (const float *)grads.data + b * D, n, D,
                                      0, tc->lr, 1.0, &err) != 0) {
                fprintf(stderr, "%s: %s\n", tc->name, err.msg);
                bad = 1;
                break;
            }
            /* the rule of test_fixture.h, FIX_TOL_EXACT (elementwise; torch fuses the multiply-add
             * of `add_(x, alpha)`), the group being the whole trajectory */
            const float *want = (const float *)traj.data + s * R * D;
            const double atol = FIX_TOL_EXACT.atol_frac * fix_max_abs(traj.data, traj.count);
            for (int64_t i = 0; i < R * D; i++) {
                double got = e.weight[i], w = want[i], diff = fabs(got - w);
                if (diff / (fabs(w) + 1e-30) > worst && diff > 0) worst = diff / fabs(w);
                if (!(diff <= FIX_TOL_EXACT.rtol * fabs(w) + atol)) {
                    fprintf(stderr, "%s: step %lld, row %lld col %lld: %.9g vs torch %.9g\n", tc->name,
                            (long long)(s + 1), (long long)(i / D), (long long)(i % D), got, w);
                    bad = 1;
                    break;
                }
            }
        }
        embedding_free(&e);
        npy_close(&traj);
    }
    fprintf(stderr, "worst relative difference to torch: %.2e\n", worst);
    npy_close(&w0);
    npy_close(&ids);
    npy_close(&grads);
    npy_close(&ptr);
    ASSERT(!bad);
}

/* LightGCN's batch regularisation against torch (lgcn_reg_*.npy): value and table gradient;
 * then a finite-difference check of the gradient on a strided input matrix. */
TEST(batch_l2_matches_torch) {
    npy_array w0, slots, loss, grad;
    ASSERT_EQ(open_fixture(&w0, "w0"), 0);
    ASSERT_EQ(open_fixture(&slots, "lgcn_reg_slots"), 0);
    ASSERT_EQ(open_fixture(&loss, "lgcn_reg_loss"), 0);
    ASSERT_EQ(open_fixture(&grad, "lgcn_reg_grad"), 0);
    const int64_t R = w0.shape[0], D = w0.shape[1], n = slots.count, B = n / 3;
    const double reg = ((const double *)loss.data)[0], want = ((const double *)loss.data)[1];
    int32_t *sl = malloc((size_t)n * sizeof(int32_t));
    for (int64_t s = 0; s < n; s++) sl[s] = (int32_t)((const int64_t *)slots.data)[s];
    float *g = calloc((size_t)(R * D), sizeof(float));
    const double got = embedding_batch_l2(g, w0.data, sl, n, D, 0, D, reg / (double)B);
    fprintf(stderr, "  LightGCN reg: %.10g (torch %.10g)\n", got, want);
    ASSERT(fabs(got - want) <= 1e-12 + 1e-9 * fabs(want));
    for (int64_t k = 0; k < R * D; k++) ASSERT(fabs(g[k] - ((const float *)grad.data)[k]) <= 1e-7 + 1e-6 * fabs(g[k]));
    /* strided: columns [3, 3 + D) of rows of width D + 5; other columns untouched */
    const int64_t W = D + 5;
    float *x = malloc((size_t)(R * W) * sizeof(float)), *gx = calloc((size_t)(R * W), sizeof(float));
    for (int64_t k = 0; k < R * W; k++) x[k] = urand(91, (uint64_t)k);
    const double coef = 0.3;
    embedding_batch_l2(gx, x, sl, n, W, 3, D, coef);
    float *scratch = calloc((size_t)(R * W), sizeof(float));
    double worst = 0.0;
    for (int64_t k = 0; k < R * W; k++) {
        const float x0 = x[k];
        x[k] = x0 + 1e-3f;
        const double lp = embedding_batch_l2(scratch, x, sl, n, W, 3, D, coef);
        const double xp = x[k];
        x[k] = x0 - 1e-3f;
        const double lm = embedding_batch_l2(scratch, x, sl, n, W, 3, D, coef);
        const double num = (lp - lm) / (xp - (double)x[k]);
        x[k] = x0;
        worst = fmax(worst, fabs(num - (double)gx[k]));
        if (k % W < 3 || k % W >= 3 + D) ASSERT(gx[k] == 0.0f);
    }
    fprintf(stderr, "  finite differences: max abs error %.2g\n", worst);
    ASSERT(worst < 1e-4);
    free(sl), free(g), free(x), free(gx), free(scratch);
    npy_close(&w0), npy_close(&slots), npy_close(&loss), npy_close(&grad);
}

/* node_embedding_init_std: rows scaled by std after their N(0, 1) draw; std 1 changes nothing. */
TEST(scale_init) {
    embedding_table a, b;
    ASSERT_EQ(init_default(&a, 500, 7, 3, EMB_OPTIM_SGD, 0.1), 0);
    ASSERT_EQ(init_default(&b, 500, 7, 3, EMB_OPTIM_SGD, 0.1), 0);
    cgnn_err err = {0};
    ASSERT_EQ(embedding_scale_init(&b, 1.0, &err), 0);
    ASSERT(same_bits(a.weight, b.weight, 500 * 7 * sizeof(float)));
    ASSERT_EQ(embedding_scale_init(&b, 0.1, &err), 0);
    double ss = 0.0;
    for (int64_t k = 0; k < 500 * 7; k++) {
        ASSERT(b.weight[k] == (float)(0.1 * (double)a.weight[k]));
        ss += (double)b.weight[k] * b.weight[k];
    }
    const double sd = sqrt(ss / (500 * 7));
    fprintf(stderr, "  std 0.1: sample std %.4f\n", sd);
    ASSERT(sd > 0.09 && sd < 0.11);
    ASSERT_EQ(embedding_scale_init(&b, 0.0, &err), -1);
    ASSERT(strstr(err.msg, "init std"));
    ASSERT_EQ(embedding_set_weight_decay(&b, -1.0, &err), -1);
    ASSERT(strstr(err.msg, "weight_decay"));
    embedding_free(&a);
    embedding_free(&b);
}

/* ---- memory: only touched rows' state pages become resident ------------------------------ */

/* Resident pages of [p, p + bytes) (page-aligned p). */
static int64_t resident_pages(const void *p, size_t bytes) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), npages = (bytes + page - 1) / page;
    unsigned char *vec = (unsigned char *)malloc(npages);
    if (mincore((void *)p, bytes, vec) != 0) {
        free(vec);
        return -1;
    }
    int64_t k = 0;
    for (size_t i = 0; i < npages; i++) k += vec[i] & 1;
    free(vec);
    return k;
}

TEST(untouched_state_stays_virtual) {
    const int64_t R = 200000, D = 64; /* 51 MB per state buffer, 12500 pages of 16 rows */
    embedding_table e;
    ASSERT_EQ(init_default(&e, R, D, 1, EMB_OPTIM_SPARSE_ADAM, 0.01), 0);
    int64_t ids[100];
    float *g = (float *)calloc(100 * D, sizeof(float));
    for (int i = 0; i < 100; i++) ids[i] = (int64_t)i * 1999;
    for (int i = 0; i < 100 * D; i++) g[i] = 0.1f;
    cgnn_err err = {0};
    ASSERT_EQ(embedding_sparse_step(&e, NULL, ids, g, 100, D, 0, 0.01, 1.0, &err), 0);
    int64_t rm = resident_pages(e.m, e.state_map_bytes), rv = resident_pages(e.v, e.state_map_bytes);
    fprintf(stderr, "resident state pages after touching 100 rows: m %lld, v %lld (of %lld each)\n", (long long)rm,
            (long long)rv, (long long)(e.state_map_bytes / (size_t)sysconf(_SC_PAGESIZE)));
    free(g);
    ASSERT(rm >= 1 && rm <= 200); /* a row (256 B) can straddle two pages at most */
    ASSERT(rv >= 1 && rv <= 200);
    ASSERT(e.m[1999 * D] != 0.0f && e.m[1998 * D] == 0.0f);
    embedding_free(&e);
}

/* ---- checkpoints ----------------------------------------------------------------------- */

static int have_torch(void) { return system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") == 0; }

static int small_model(model *m, uint64_t seed) {
    model_config mc = {MODEL_GRAPHSAGE, 2, 5, 8, 3, 1, 0.0f, 0, NULL, 0, {0}};
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = 2;
    cap.max_items = 4;
    cap.max_nodes[0] = 4;
    cap.max_nodes[1] = 8;
    cap.max_nodes[2] = 16;
    cap.max_edges[0] = 8;
    cap.max_edges[1] = 16;
    cap.feat_dim = 5;
    cgnn_err err = {0};
    int rc = model_init(m, &mc, &cap, seed, &err);
    if (rc != 0) fprintf(stderr, "model_init: %s\n", err.msg);
    return rc;
}

TEST(checkpoint_round_trip) {
    model m, back;
    ASSERT_EQ(small_model(&m, 1), 0);
    ASSERT_EQ(small_model(&back, 2), 0);
    ASSERT(!same_bits(m.params, back.params, (size_t)m.num_params * sizeof(float)));
    const int64_t R = 37, D = 6;
    embedding_table e;
    ASSERT_EQ(init_default(&e, R, D, 9, EMB_OPTIM_SGD, 0.1), 0);
    char *dir = test_tmpdir(), path[4200], plain[4200], npy[4200];
    snprintf(path, sizeof path, "%s/ckpt/model.safetensors", dir);
    snprintf(plain, sizeof plain, "%s/plain.safetensors", dir);
    snprintf(npy, sizeof npy, "%s/emb.npy", dir);
    cgnn_err err = {0};
    ASSERT_EQ(outputs_save_model_with_embedding(path, TASK_LINK_PREDICTION, &m, m.params, e.weight, R, D, &err), 0);
    ASSERT_EQ(outputs_save_model(plain, TASK_LINK_PREDICTION, &m, m.params, &err), 0);

    /* the file: model keys in order, then embedding.weight [R, D], metadata */
    st_file f;
    ASSERT_EQ(safetensors_read(&f, path, &err), 0);
    ASSERT_EQ(f.n, m.num_tensors + 1);
    int k = safetensors_find(&f, "embedding.weight");
    ASSERT_EQ(k, m.num_tensors);
    ASSERT_EQ(f.ndims[k], 2);
    ASSERT_EQ(f.shapes[k][0], R);
    ASSERT_EQ(f.shapes[k][1], D);
    ASSERT(same_bits(f.data[k], e.weight, (size_t)(R * D) * sizeof(float)));
    ASSERT(safetensors_meta(&f, "node_embedding_dim") && strcmp(safetensors_meta(&f, "node_embedding_dim"), "6") == 0);
    safetensors_free(&f);
    ASSERT_EQ(safetensors_read(&f, plain, &err), 0);
    ASSERT_EQ(safetensors_find(&f, "embedding.weight"), -1);
    ASSERT(safetensors_meta(&f, "node_embedding_dim") == NULL); /* the plain file is as before */
    safetensors_free(&f);

    /* the model loader skips the table; the table loader reads it */
    ASSERT_EQ(outputs_load_model(path, TASK_LINK_PREDICTION, &back, &err), 0);
    ASSERT(same_bits(m.params, back.params, (size_t)m.num_params * sizeof(float)));
    float *w = (float *)calloc((size_t)(R * D), sizeof(float));
    ASSERT_EQ(outputs_load_embedding(path, w, R, D, &err), 0);
    ASSERT(same_bits(w, e.weight, (size_t)(R * D) * sizeof(float)));
    /* mis-shaped, absent: errors naming the key */
    ASSERT_EQ(outputs_load_embedding(path, w, R + 1, D, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "embedding.weight");
    ASSERT_STR_CONTAINS(err.msg, "[37, 6]");
    ASSERT_EQ(outputs_load_embedding(path, w, R, D - 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "embedding.weight");
    ASSERT_EQ(outputs_load_embedding(plain, w, R, D, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "missing tensor 'embedding.weight'");
    snprintf(npy, sizeof npy, "%s/absent.safetensors", dir);
    ASSERT_EQ(outputs_load_embedding(npy, w, R, D, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "absent.safetensors");
    /* any other extra key is still an error for the model loader */
    st_tensor t[MODEL_MAX_TENSORS + 1];
    for (int i = 0; i < m.num_tensors; i++) {
        const model_tensor *mt = &m.tensors[i];
        t[i] = (st_tensor){.name = mt->name, .ndim = mt->ndim, .shape = {1, 1, 1, 1}, .data = m.params + mt->offset};
        for (int d = 0; d < mt->ndim; d++) t[i].shape[d] = mt->shape[d];
    }
    t[m.num_tensors] = (st_tensor){.name = "embedding.weights", .ndim = 2, .shape = {R, D, 1, 1}, .data = e.weight};
    snprintf(npy, sizeof npy, "%s/extra.safetensors", dir);
    ASSERT_EQ(safetensors_write(npy, t, m.num_tensors + 1, NULL, 0, &err), 0);
    ASSERT_EQ(outputs_load_model(npy, TASK_LINK_PREDICTION, &back, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "tensors, the configured model has");
    /* a truncated file: the header-only reader refuses it too */
    {
        size_t len = 0;
        unsigned char *bytes = test_slurp(path, &len);
        ASSERT(bytes && len > 100);
        snprintf(npy, sizeof npy, "%s/cut.safetensors", dir);
        FILE *fp = fopen(npy, "wb");
        ASSERT(fp);
        fwrite(bytes, 1, len - 16, fp);
        fclose(fp);
        free(bytes);
        ASSERT_EQ(outputs_load_embedding(npy, w, R, D, &err), -1);
        ASSERT_STR_CONTAINS(err.msg, "cut.safetensors");
        ASSERT_EQ(outputs_load_model(npy, TASK_LINK_PREDICTION, &back, &err), -1);
    }

    /* torch reads the key as an nn.Embedding state_dict */
    char cmd[12000];
    if (!have_torch()) {
        free(w);
        model_free(&m);
        model_free(&back);
        embedding_free(&e);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        free(dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cmd);
        SKIP("/usr/bin/python3 lacks torch/numpy: the torch read of embedding.weight is not checked");
    }
    snprintf(npy, sizeof npy, "%s/emb.npy", dir);
    int64_t shape[2] = {R, D};
    ASSERT_EQ(npy_write(npy, NPY_DTYPE_FLOAT32, 2, shape, e.weight, &err), 0);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 - '%s' '%s' <<'PY'\n"
             "import json, struct, sys\n"
             "import numpy as np, torch\n"
             "blob = open(sys.argv[1], 'rb').read()\n"
             "n = struct.unpack('<Q', blob[:8])[0]\n"
             "h = json.loads(blob[8:8 + n]); data = blob[8 + n:]\n"
             "info = h['embedding.weight']\n"
             "assert info['dtype'] == 'F32' and info['shape'] == [%lld, %lld], info\n"
             "assert h['__metadata__']['node_embedding_dim'] == '%lld'\n"
             "b, e = info['data_offsets']\n"
             "w = torch.from_numpy(np.frombuffer(data[b:e], dtype='<f4').reshape(info['shape']).copy())\n"
             "emb = torch.nn.Embedding(%lld, %lld, sparse=True)\n"
             "emb.load_state_dict({'weight': w}, strict=True)\n"
             "want = torch.from_numpy(np.load(sys.argv[2]))\n"
             "assert torch.equal(emb.weight.detach(), want)\n"
             "assert torch.equal(emb(torch.tensor([5, 0])).detach(), want[[5, 0]])\n"
             "print('torch reads embedding.weight', tuple(w.shape))\n"
             "PY",
             path, npy, (long long)R, (long long)D, (long long)D, (long long)R, (long long)D);
    int rc = system(cmd);
    free(w);
    model_free(&m);
    model_free(&back);
    embedding_free(&e);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    free(dir);
    ASSERT_EQ(system(cmd), 0);
    ASSERT_EQ(rc, 0);
}

/* ---- speed ------------------------------------------------------------------------------ */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median ms of `reps` steps of n fresh random distinct rows (cold: their state pages are new)
 * and of `reps` steps re-stepping one fixed set (warm). Strided gradients (F = 100 feature
 * columns before the D embedding columns), as the trainer passes them. */
static void bench(int64_t R, int64_t D, int64_t n, embedding_optim kind, double *cold_ms, double *warm_ms,
                  double *init_s) {
    const int reps = 15, F = 100;
    embedding_table e;
    double t0 = now_s();
    CGNN_CHECK(init_default(&e, R, D, 1, kind, 0.01) == 0);
    *init_s = now_s() - t0;
    int64_t *ids = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    float *mat = (float *)malloc((size_t)(n * (F + D)) * sizeof(float));
    for (int64_t i = 0; i < n * (F + D); i++) mat[i] = urand(5, (uint64_t)i) * 0.1f;
    double t[2][15];
    for (int phase = 0; phase < 2; phase++)
        for (int r = 0; r < reps; r++) {
            /* distinct ids: a multiplicative walk over [0, R) from a step-dependent start */
            uint64_t start = phase == 0 ? rng_key(77, (uint64_t)r) % (uint64_t)R : 12345;
            for (int64_t i = 0; i < n; i++) ids[i] = (int64_t)((start + (uint64_t)i * 2654435761ULL) % (uint64_t)R);
            cgnn_err err = {0};
            double a = now_s();
            CGNN_CHECK(embedding_sparse_step(&e, NULL, ids, mat, n, F + D, F, 0.01, 1.0, &err) == 0);
            t[phase][r] = (now_s() - a) * 1e3;
        }
    qsort(t[0], reps, sizeof(double), cmp_double);
    qsort(t[1], reps, sizeof(double), cmp_double);
    *cold_ms = t[0][reps / 2];
    *warm_ms = t[1][reps / 2];
    free(ids);
    free(mat);
    embedding_free(&e);
}

TEST(step_speed) {
    const char *env = getenv("CGNN_BENCH_EMBEDDING_ROWS");
    const int64_t R = env ? atoll(env) : 200000, D = 64, n = 8192;
    ASSERT(R >= n);
    for (int kind = 0; kind < EMB_OPTIM_COUNT; kind++) {
        double cold, warm, init;
        bench(R, D, n, (embedding_optim)kind, &cold, &warm, &init);
        fprintf(stderr,
                "embedding_sparse_step %-10s %lld x %lld table, %lld rows x %lld: %.3f ms (new rows), %.3f ms "
                "(re-stepped rows); init %.2f s; %d threads\n",
                embedding_optim_name((embedding_optim)kind), (long long)R, (long long)D, (long long)n, (long long)D,
                cold, warm, init, omp_get_max_threads());
        ASSERT(cold > 0 && warm > 0);
    }
}

int main(void) {
    RUN(names);
    RUN(init_rejects_bad_arguments);
    RUN(init_deterministic_and_normal);
    RUN(gather_strided);
    RUN(step_matches_ref_bitwise);
    RUN(duplicates_are_summed_then_scaled);
    RUN(merge_order_is_input_order);
    RUN(bad_ids_change_nothing);
    RUN(trajectories_match_torch);
    RUN(batch_l2_matches_torch);
    RUN(scale_init);
    RUN(untouched_state_stays_virtual);
    RUN(checkpoint_round_trip);
    RUN(step_speed);
    return test_summary();
}
