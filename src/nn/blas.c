/* blas.c — which BLAS kernels run, chosen how (nn/blas.h). */
#include "nn/blas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>
#undef I /* OpenBLAS's cblas.h pulls in <complex.h> */

/* OpenBLAS's own entry points, weak: a build against another CBLAS (CMakeLists.txt's fallback)
 * links without them and reports "kernels unknown". */
#pragma weak openblas_get_corename
#pragma weak openblas_get_config

/* Kernel-set ranks: 1 SSE (any x86-64), 2 AVX without FMA, 3 AVX2 + FMA, 4 AVX-512. */
static const struct {
    const char *name;
    int rank;
} CORES[] = {
    {"katmai", 1}, {"coppermine", 1}, {"northwood", 1}, {"prescott", 1}, {"banias", 1}, {"yonah", 1},
    {"core2", 1}, {"penryn", 1}, {"dunnington", 1}, {"nehalem", 1}, {"atom", 1}, {"amd64", 1},
    {"opteron", 1}, {"opteron(sse3)", 1}, {"barcelona", 1}, {"bobcat", 1}, {"nano", 1},
    {"sandybridge", 2}, {"bulldozer", 2}, {"piledriver", 2}, {"steamroller", 2}, {"excavator", 2},
    {"haswell", 3}, {"zen", 3}, {"skylakex", 4}, {"cooperlake", 4}, {"sapphirerapids", 4},
};
static const char *TARGET[5] = {NULL, NULL, "Sandybridge", "Haswell", "SkylakeX"};
static const int WIDTH[5] = {0, 128, 256, 256, 512};

static int cpu_rank(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd"))
        return 4;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 3;
    if (__builtin_cpu_supports("avx")) return 2;
    return 1;
#else
    return 0; /* not x86: nothing to choose */
#endif
}

const char *blas_core_name(void) {
    if (!openblas_get_corename) return NULL;
    const char *c = openblas_get_corename();
    return c && *c ? c : NULL;
}

/* The rank of a core name; 0 = unknown (a name newer than this list: left alone). */
static int core_rank_of(const char *name) {
    if (!name) return 0;
    for (size_t i = 0; i < sizeof CORES / sizeof CORES[0]; i++)
        if (strcasecmp(name, CORES[i].name) == 0) return CORES[i].rank;
    return 0;
}

static int core_rank(void) {
    const char *h = getenv("CGNN_TEST_BLAS_NARROW");
    if (h && strcmp(h, "1") == 0 && !getenv("CGNN_BLAS_CHOICE")) return 1; /* test hook */
    return core_rank_of(blas_core_name());
}

int blas_cpu_width(void) { return WIDTH[cpu_rank()]; }
int blas_core_width(void) {
    const int r = core_rank_of(blas_core_name());
    return r ? WIDTH[r] : 0;
}

int blas_choose_for_exec(void) {
    const char *core = blas_core_name();
    if (!core || getenv("CGNN_BLAS_CHOICE") || getenv("OPENBLAS_CORETYPE")) return 0;
    const int have = core_rank(), want = cpu_rank();
    if (have == 0 || want <= have || !TARGET[want]) return 0;
    /* (the pick recorded for the logs: OpenBLAS's core name; under the test hook, Prescott, the
     * fallback the hook imitates) */
    const char *hook = getenv("CGNN_TEST_BLAS_NARROW");
    char choice[128];
    snprintf(choice, sizeof choice, "%s:%s", hook && strcmp(hook, "1") == 0 ? "Prescott" : core, TARGET[want]);
    setenv("OPENBLAS_CORETYPE", TARGET[want], 1);
    setenv("CGNN_BLAS_CHOICE", choice, 1);
    return 1;
}

int blas_check_choice(void) {
    const char *choice = getenv("CGNN_BLAS_CHOICE"), *forced = getenv("OPENBLAS_CORETYPE");
    if (!choice || !forced || strstr(choice, ":failed")) return 0;
    const char *chosen = strchr(choice, ':');
    if (!chosen || strcasecmp(chosen + 1, forced) != 0) return 0; /* the user's own since */
    char worst[160];
    double r = blas_check_worst(worst, sizeof worst);
    const char *hook = getenv("CGNN_TEST_BLAS_CHECK_FAIL"); /* test hook: the check fails */
    if (hook && strcmp(hook, "1") == 0) r = 1e9;
    if (r <= 1.0) return 0;
    char failed[400];
    snprintf(failed, sizeof failed, "%s:failed %s: error %.3g x the float32 bound", choice, worst, r);
    unsetenv("OPENBLAS_CORETYPE");
    setenv("CGNN_BLAS_CHOICE", failed, 1);
    return 1;
}

/* "OpenBLAS 0.3.21" from openblas_get_config()'s "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
static void library_name(char *out, size_t n) {
    snprintf(out, n, "OpenBLAS");
    if (!openblas_get_config) return;
    const char *c = openblas_get_config();
    if (!c) return;
    const char *sp = strchr(c, ' ');
    if (sp) sp = strchr(sp + 1, ' ');
    const size_t len = sp ? (size_t)(sp - c) : strlen(c);
    snprintf(out, n, "%.*s", (int)(len < 64 ? len : 64), c);
}

int blas_leaves_width_unused(void) {
    const int have = core_rank_of(blas_core_name()), want = cpu_rank();
    return have != 0 && want > have && TARGET[want] != NULL;
}

char *blas_describe(char *buf, size_t n) {
    const char *core = blas_core_name();
    if (!core) {
        snprintf(buf, n, "a CBLAS that is not OpenBLAS (kernels unknown)");
        return buf;
    }
    char lib[80];
    library_name(lib, sizeof lib);
    const int cw = blas_cpu_width(), kw = blas_core_width();
    const char *choice = getenv("CGNN_BLAS_CHOICE"), *forced = getenv("OPENBLAS_CORETYPE");
    const char *colon = choice ? strchr(choice, ':') : NULL;
    if (choice && colon && strstr(choice, ":failed")) {
        snprintf(buf, n, "%s, %s kernels (OpenBLAS's choice: cgnn's choice %s)", lib, core, colon + 1);
    } else if (choice && colon && forced && strcasecmp(core, colon + 1) == 0) {
        snprintf(buf, n, "%s, %s kernels (chosen by cgnn: OpenBLAS picked %.*s on a CPU with %d-bit vectors; "
                 "checked against the float64 reference)", lib, core, (int)(colon - choice), choice, cw);
    } else if (forced) {
        snprintf(buf, n, "%s, %s kernels (OPENBLAS_CORETYPE=%s, set before cgnn started)%s", lib, core, forced,
                 blas_leaves_width_unused() ? ": narrower than the CPU's vectors; unset it to let cgnn choose" : "");
    } else if (blas_leaves_width_unused()) {
        const int want = cpu_rank();
        snprintf(buf, n, "%s, %s kernels (OpenBLAS's choice, %d-bit, on a CPU with %d-bit vectors: set "
                 "OPENBLAS_CORETYPE=%s before this process starts for its wider kernels)", lib, core, kw, cw, TARGET[want]);
    } else {
        snprintf(buf, n, "%s, %s kernels (OpenBLAS's choice%s)", lib, core, kw ? "; as wide as the CPU's vectors" : "");
    }
    return buf;
}

/* ---- the check against float64 ------------------------------------------------------------ */

double blas_error_ratio(const float *got, const float *A, const float *B, int64_t M, int64_t N, int64_t K,
                        int trans_a, int trans_b) {
    const double u = ldexp(1.0, -24);
    double worst = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                const double a = trans_a ? A[k * M + i] : A[i * K + k];
                const double b = trans_b ? B[j * K + k] : B[k * N + j];
                s += a * b;
                mag += fabs(a * b);
            }
            const double bound = (double)K * u * mag * 1.01 + 1e-30;
            const double e = fabs((double)got[i * N + j] - s) / bound;
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e; /* (a NaN result is the worst) */
        }
    return worst;
}

double blas_check_worst(char *worst, size_t n) {
    /* the layers' GEMMs (nn/ops.c): forward out = inp · W^T (NT), backward dinp = dout · W (NN)
     * and dW = dout^T · inp (TN); full micro-tiles and ragged edges, K past one unrolled block.
     * Small (3.2 M multiply-adds, a few ms): it runs at the start of every process whose kernels
     * cgnn chose (every rank of every job on such a CPU). */
    static const struct { int64_t M, N, K; int ta, tb; } SHAPES[] = {
        {96, 80, 100, 0, 1}, {37, 47, 256, 0, 1}, {64, 96, 192, 0, 0}, {80, 72, 96, 1, 0}, {47, 61, 97, 1, 0},
    };
    double w = 0;
    if (worst && n) worst[0] = 0;
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++) {
        const int64_t M = SHAPES[s].M, N = SHAPES[s].N, K = SHAPES[s].K;
        float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N)),
              *C = malloc(sizeof(float) * (size_t)(M * N));
        if (!A || !B || !C) {
            free(A), free(B), free(C);
            return INFINITY;
        }
        for (int64_t i = 0; i < M * K; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            A[i] = (float)((double)(state >> 40) / (double)(1 << 24) - 0.5);
        }
        for (int64_t i = 0; i < K * N; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            B[i] = (float)((double)(state >> 40) / (double)(1 << 24) - 0.5);
        }
        cblas_sgemm(CblasRowMajor, SHAPES[s].ta ? CblasTrans : CblasNoTrans, SHAPES[s].tb ? CblasTrans : CblasNoTrans,
                    (int)M, (int)N, (int)K, 1.0f, A, SHAPES[s].ta ? (int)M : (int)K, B, SHAPES[s].tb ? (int)K : (int)N,
                    0.0f, C, (int)N);
        const double r = blas_error_ratio(C, A, B, M, N, K, SHAPES[s].ta, SHAPES[s].tb);
        if (!(r <= w)) {
            w = r;
            if (worst && n)
                snprintf(worst, n, "sgemm %s%s M=%lld N=%lld K=%lld", SHAPES[s].ta ? "T" : "N", SHAPES[s].tb ? "T" : "N",
                         (long long)M, (long long)N, (long long)K);
        }
        free(A), free(B), free(C);
    }
    return w;
}
