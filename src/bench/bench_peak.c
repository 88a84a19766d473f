/* bench_peak.c — the CPU's float32 arithmetic peak, measured (bench.h: bench_fma_peak).
 *
 * A register-only loop per vector width: ACC independent accumulators, each updated by one
 * fused multiply-add per iteration (SSE has no FMA: a multiply and an add per lane pair, which
 * is what SSE kernels can issue), so that the loop is bound by the FMA units' throughput, not
 * their latency (ACC >= latency x units: 4-5 cycles x 2 units on current cores; 12 for 256-bit,
 * 16 of the 32 zmm registers for 512-bit). No memory traffic; the result feeds a volatile
 * sink so that the compiler keeps the loop. One loop per thread in one OpenMP region; the peak
 * is every thread's FLOPs over the slowest thread's time (median over repeats). */
#include <immintrin.h>
#include <omp.h>
#include <string.h>

#include "bench/bench.h"
#include "util/timer.h"

static volatile float peak_sink;

#define PEAK_ITERS 4000000 /* per repeat and thread: ~20-60 ms at 2-4 GHz */

#define PEAK_LOOP(VT, SET1, FMA, ACC, LANES)                                                                        \
    VT acc[ACC];                                                                                                     \
    for (int k = 0; k < ACC; k++) acc[k] = SET1(1.0f + 1e-3f * (float)k);                                           \
    const VT m = SET1(0.999999f), c = SET1(1e-7f);                                                                   \
    for (int64_t i = 0; i < iters; i++) {                                                                            \
        _Pragma("GCC unroll 16") for (int k = 0; k < ACC; k++) acc[k] = FMA(acc[k], m, c);                           \
    }                                                                                                                \
    float out[LANES];                                                                                                \
    VT s = acc[0];                                                                                                   \
    for (int k = 1; k < ACC; k++) s = s + acc[k];                                                                    \
    memcpy(out, &s, sizeof out);                                                                                     \
    peak_sink = out[0];                                                                                              \
    return 2.0 * (double)iters * ACC * LANES;

static inline __m128 sse_muladd(__m128 a, __m128 m, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, m), c); }
/* FLOPs of iters iterations, SSE: a multiply and an add per lane (counted as 2, like an FMA) */
static double loop_sse(int64_t iters) { PEAK_LOOP(__m128, _mm_set1_ps, sse_muladd, 12, 4) }

__attribute__((target("avx2,fma"))) static double loop_avx2(int64_t iters) {
    PEAK_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, 12, 8)
}

__attribute__((target("avx512f"))) static double loop_avx512(int64_t iters) {
    PEAK_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, 16, 16)
}

int bench_cpu_has_width(int width) {
    __builtin_cpu_init();
    switch (width) {
    case 128: return 1;
    case 256: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case 512: return __builtin_cpu_supports("avx512f");
    default: return 0;
    }
}

double bench_fma_peak(int width, int threads, int reps) {
    if (!bench_cpu_has_width(width)) return 0;
    if (threads < 1) threads = 1;
    if (reps < 1) reps = 1;
    double gflops[16];
    if (reps > 16) reps = 16;
    for (int r = 0; r < reps; r++) {
        double flops = 0, slowest = 0;
#pragma omp parallel num_threads(threads) reduction(+ : flops) reduction(max : slowest)
        {
            const double t0 = timer_now();
            flops += width == 512 ? loop_avx512(PEAK_ITERS) : width == 256 ? loop_avx2(PEAK_ITERS) : loop_sse(PEAK_ITERS);
            slowest = timer_now() - t0;
        }
        gflops[r] = flops / slowest / 1e9;
    }
    return bench_median(gflops, reps);
}
