/* test_blas.c — the BLAS kernels cgnn runs (nn/blas.h), on whatever CPU runs the suite:
 *   - the running kernels' sgemm is within the float32 rounding bound of a float64 reference on
 *     the training step's shapes (blas_check_worst; also on the shapes of a real step: a
 *     GraphSAGE layer's forward and both backward products, ragged sizes);
 *   - the bound is not vacuous: a product with one element off by 0.01 fails it, and
 *     a NaN fails it;
 *   - the CPU's vector width and the measured float32 peak are sane (a positive GFLOP/s for
 *     every width the CPU has, none for one it lacks), and the description names the kernels. */
#include <math.h>

#include <cblas.h>
#undef I

#include "bench/bench.h"
#include "nn/blas.h"
#include "nn/ops.h"
#include "test.h"
#include "util/rng.h"

static void fill(float *x, int64_t n, rng *r) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)(rng_uniform(r) * 2.0 - 1.0);
}

TEST(running_kernels_within_the_float32_bound) {
    char worst[160];
    const double r = blas_check_worst(worst, sizeof worst);
    printf("  kernels: %s\n  worst: %s, %.3f of the bound\n", blas_core_name() ? blas_core_name() : "?", worst, r);
    ASSERT(r <= 1.0);
    ASSERT(r > 0.0); /* float32 sums of 100+ products round somewhere */
}

/* A GraphSAGE layer's three products through nn/ops (forward Y = X W^T, dX = dY W, dW = dY^T X)
 * on ragged shapes, each checked against the bound. */
TEST(layer_products_within_the_bound) {
    const int64_t N = 203, I_ = 131, O = 67;
    rng r;
    rng_init(&r, 7);
    float *x = malloc(sizeof(float) * N * I_), *w = malloc(sizeof(float) * O * I_), *y = malloc(sizeof(float) * N * O),
          *dy = malloc(sizeof(float) * N * O), *dx = calloc((size_t)(N * I_), sizeof(float)),
          *dw = calloc((size_t)(O * I_), sizeof(float));
    fill(x, N * I_, &r), fill(w, O * I_, &r), fill(dy, N * O, &r);
    ops_linear_forward(y, x, w, NULL, N, I_, O, 0);
    ASSERT(blas_error_ratio(y, x, w, N, O, I_, 0, 1) <= 1.0);
    ops_linear_backward(dx, dw, NULL, dy, x, w, N, I_, O);
    ASSERT(blas_error_ratio(dx, dy, w, N, I_, O, 0, 0) <= 1.0);
    ASSERT(blas_error_ratio(dw, dy, x, O, I_, N, 1, 0) <= 1.0);
    free(x), free(w), free(y), free(dy), free(dx), free(dw);
}

TEST(the_bound_catches_a_wrong_product) {
    const int64_t M = 64, N = 48, K = 256;
    rng r;
    rng_init(&r, 11);
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N), *c = malloc(sizeof(float) * M * N);
    fill(a, M * K, &r), fill(b, K * N, &r);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a, (int)K, b, (int)N, 0.0f, c,
                (int)N);
    ASSERT(blas_error_ratio(c, a, b, M, N, K, 0, 0) <= 1.0);
    /* one element off by 0.01: the bound there is K u Σ|a||b| ~ 256 · 2^-24 · 64 ~ 1e-3 (a, b
     * uniform in [-1, 1): E|a||b| = 1/4, K terms); a wrong kernel's errors are of the order of
     * the values themselves (~5) */
    c[5 * N + 7] += 0.01f;
    const double off = blas_error_ratio(c, a, b, M, N, K, 0, 0);
    printf("  one element off by 0.01: %.2f x the bound\n", off);
    ASSERT(off > 1.0);
    c[5 * N + 7] = NAN;
    ASSERT(blas_error_ratio(c, a, b, M, N, K, 0, 0) > 1.0);
    free(a), free(b), free(c);
}

TEST(cpu_width_peak_and_description) {
    const int w = blas_cpu_width();
    printf("  CPU vector width %d-bit\n", w);
    ASSERT(w == 128 || w == 256 || w == 512);
    for (int v = 128; v <= 512; v *= 2) {
        const double g = bench_fma_peak(v, 1, 1);
        printf("  float32 peak at %d-bit: %.1f GFLOP/s (1 thread)\n", v, g);
        if (bench_cpu_has_width(v)) ASSERT(g > 0.5);
        else ASSERT(g == 0.0);
    }
    ASSERT(bench_cpu_has_width(128));
    char line[400];
    blas_describe(line, sizeof line);
    printf("  BLAS: %s\n", line);
    if (blas_core_name()) ASSERT_STR_CONTAINS(line, blas_core_name());
}

int main(void) {
    RUN(running_kernels_within_the_float32_bound);
    RUN(layer_products_within_the_bound);
    RUN(the_bound_catches_a_wrong_product);
    RUN(cpu_width_peak_and_description);
    return test_summary();
}
