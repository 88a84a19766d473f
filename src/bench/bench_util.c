/* bench_util.c — medians and the copy-bandwidth yardstick; see bench.h. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "util/timer.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_copy_bandwidth(size_t bytes, int threads, int reps) {
    char *src = malloc(bytes), *dst = malloc(bytes);
    CGNN_CHECK(src && dst);
    memset(src, 1, bytes);
    memset(dst, 0, bytes); /* fault the pages in before timing */
    double *gbs = cgnn_malloc((size_t)reps * sizeof(double));
    for (int r = 0; r < reps; r++) {
        double t0 = timer_now();
#pragma omp parallel num_threads(threads)
        {
            int t = omp_get_thread_num(), T = omp_get_num_threads();
            size_t lo = bytes * (size_t)t / (size_t)T, hi = bytes * (size_t)(t + 1) / (size_t)T;
            memcpy(dst + lo, src + lo, hi - lo);
        }
        gbs[r] = (double)bytes / (timer_now() - t0) / 1e9;
    }
    double m = bench_median(gbs, reps);
    free(gbs);
    free(src);
    free(dst);
    return m;
}
