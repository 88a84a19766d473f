/* lp_loss.c — GiGL's link-prediction task losses (Softmax, Margin, DirectAU), BPR and their
 * weighted combination with Retrieval; see lp_loss.h.
 *
 * Gradients, with g_ij = ∂loss/∂s_ij for the score s_ij = q_i · c_j:
 *   ∂/∂q_i = Σ_j g_ij c_j,   ∂/∂c_j = Σ_i g_ij q_i.
 *   Softmax: g_ij = (p_ij − [j = i]) / (τ P), p the softmax of row i over {i} ∪ N_i.
 *   Margin:  for each active (pair, negative) (m − s_ii + s_in >= 0): g_in = 1/count,
 *            g_ii −= 1/count.
 *   BPR:     g_in = σ(s_in − s_ii) / count, g_ii −= the same.
 *   DirectAU alignment: ∂/∂q_i = α ||d_i||^(α−2) d_i / P = −∂/∂c_i, d_i = q_i − c_i.
 *            uniformity of rows x (W_ab = exp(−t ||x_a − x_b||²), S = Σ_{a<b} W_ab):
 *            ∂ log(S / npairs) / ∂x_a = −(2t / S) Σ_{b≠a} W_ab (x_a − x_b)
 *                                     = −(2t / S) (x_a Σ_b W_ab − (W x)_a).
 * Fast versions: the scores against the K shared random negatives are one GEMM (P, K) and their
 * gradients two more (the same three products as retrieval_loss); DirectAU's pairwise squared
 * distances come from a Gram GEMM (d²_ab = G_aa + G_bb − 2 G_ab) and its gradient from one
 * more (W x). Rows owned by one pair (q_i, c_i) are updated in the parallel per-pair loop; rows
 * several pairs share (listed negatives of a group, BPR's random negatives) in a serial pass in
 * pair order.
 */
#include "nn/lp_loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "nn/retrieval.h"
#include "util/err.h"
#include "util/timer.h"

/* Below this many score entries, threads cost more than they save. */
#define LP_PAR_MIN 16384
/* Softmax (lp_loss_softmax): pairs per single-threaded tile of scores; pairs per group (one
 * partial dc_random each: fixes the order its sums are taken in); groups in flight at once
 * (bounds the partials' memory) */
#define SOFTMAX_TILE 128
#define SOFTMAX_GROUP 512
#define SOFTMAX_ROUND 16

/* ---- GEMM accounting ------------------------------------------------------------------- */

static ops_gemm_stats *loss_stats; /* NULL: off */

void lp_loss_gemm_stats_register(ops_gemm_stats *s) { loss_stats = s; }
ops_gemm_stats *lp_loss_gemm_stats(void) { return loss_stats; }

/* ---- tasks ------------------------------------------------------------------------------ */

static const char *const TASK_NAMES[] = {"Retrieval", "Softmax", "Margin", "DirectAU", "BPR"};
_Static_assert(sizeof TASK_NAMES / sizeof TASK_NAMES[0] == LP_TASK_COUNT, "TASK_NAMES");

const char *lp_task_name(lp_task_kind kind) {
    return (unsigned)kind < LP_TASK_COUNT ? TASK_NAMES[kind] : "unknown";
}

int lp_task_parse(const char *name, lp_task_kind *out) {
    if (!name) return -1;
    const char *dot = strrchr(name, '.');
    const char *base = dot ? dot + 1 : name; /* gigl.src.common.models.layers.task.Softmax */
    for (int k = 0; k < LP_TASK_COUNT; k++)
        if (!strcasecmp(base, TASK_NAMES[k])) {
            *out = (lp_task_kind)k;
            return 0;
        }
    return -1;
}

void lp_task_defaults(lp_task *t, lp_task_kind kind) {
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->weight = 1.0;
    t->temperature = kind == LP_TASK_DIRECTAU ? 2.0 : 0.07;
    t->remove_accidental_hits = 1;
    t->softmax_temperature = 0.07;
    t->margin = 0.5;
    t->gamma = 1.0;
    t->alpha = 2.0;
    t->num_negatives = 1;
}

/* ---- helpers ---------------------------------------------------------------------------- */

static void check_pairs(const lp_pairs *b) {
    CGNN_CHECK(b->P >= 0 && b->H >= 0 && b->K >= 0 && b->D >= 1);
    CGNN_CHECK(b->H == 0 || (b->listed_off && b->listed_len));
    if (b->H > 0)
        for (int64_t i = 0; i < b->P; i++)
            CGNN_CHECK(b->listed_off[i] >= 0 && b->listed_len[i] >= 0 && b->listed_off[i] + b->listed_len[i] <= b->H);
}

static void check_work(const float *work) { CGNN_CHECK(work && ((uintptr_t)work & 7) == 0); }

static inline int64_t listed_len(const lp_pairs *b, int64_t i) { return b->H > 0 ? b->listed_len[i] : 0; }
/* Row of c holding pair i's t-th listed negative. */
static inline int64_t listed_row(const lp_pairs *b, int64_t i, int64_t t) { return b->P + b->listed_off[i] + t; }

/* Float dot product in dimension order (the fast kernels). */
static inline float dotf(const float *a, const float *x, int64_t D) {
    float s = 0.0f;
    for (int64_t d = 0; d < D; d++) s += a[d] * x[d];
    return s;
}

/* Double dot product (the references). */
static inline double dotd(const float *a, const float *x, int64_t D) {
    double s = 0.0;
    for (int64_t d = 0; d < D; d++) s += (double)a[d] * (double)x[d];
    return s;
}

/* y (D) += a · x (D) */
static inline void axpy(float *y, float a, const float *x, int64_t D) {
    for (int64_t d = 0; d < D; d++) y[d] += a * x[d];
}

static inline double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static inline double sigmoid(double x) {
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    const double e = exp(x);
    return e / (1.0 + e);
}

/* Adds gq (P, D) and gc (M, D) (doubles) times w into dq / dc (the references' last step). */
static void add_ref_grads(float *dq, float *dc, const double *gq, const double *gc, int64_t P, int64_t M, int64_t D,
                          float w) {
    for (int64_t k = 0; k < P * D; k++) dq[k] += (float)((double)w * gq[k]);
    for (int64_t k = 0; k < M * D; k++) dc[k] += (float)((double)w * gc[k]);
}

int64_t lp_loss_work_floats(lp_task_kind kind, int64_t P, int64_t H, int64_t K, int64_t D) {
    switch (kind) {
    case LP_TASK_RETRIEVAL: return retrieval_work_floats(P, P + H + K) + 2;
    case LP_TASK_SOFTMAX: { /* 3 doubles per pair + per group in flight: a partial (K, D), a tile's
                               scores (TILE, K), two (TILE, D) and a (TILE) */
        const int64_t groups = (P + SOFTMAX_GROUP - 1) / SOFTMAX_GROUP;
        return 6 * P + (groups < SOFTMAX_ROUND ? groups : SOFTMAX_ROUND) * (K * D + SOFTMAX_TILE * (K + 2 * D + 1)) + 2;
    }
    case LP_TASK_MARGIN: return 6 * P + P * K + 2;  /* 3 doubles per pair + the (P, K) scores */
    case LP_TASK_DIRECTAU: return 5 * P + P * P + P * D + 2; /* 2 doubles + 1 float per row, W, W x */
    case LP_TASK_BPR: return 2 * P + 2;
    default: CGNN_CHECK(0);
    }
    return 0;
}

/* ---- Softmax ---------------------------------------------------------------------------- */

/* The shared random negatives' scores are made a tile of SOFTMAX_TILE pairs at a time, each tile
 * by one thread from its score GEMM through the softmax to its two gradient GEMMs (single-threaded
 * OpenBLAS calls inside the parallel loop), while its (128, K) scores are still in cache. Measured
 * at P 16,384, K 4,096, D 64 on 2 cores: 130 GFLOP/s against 83 for 2,048-pair chunks whose GEMMs
 * OpenBLAS threads itself (K = 64 deep products are too short to split well). A group of
 * SOFTMAX_GROUP pairs adds its tiles' dc_random into its own partial, and the partials are summed
 * in group order: the same bits for any thread count. */

typedef float v4f __attribute__((vector_size(16)));
typedef int v4i __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));

/* per lane: m ? a : b (m all ones or zeros per lane) */
static inline v4f select_v4(v4i m, v4f a, v4f b) { return (v4f)(((v4i)a & m) | ((v4i)b & ~m)); }

/* exp(x) per lane for x <= 0 (a score less its row's max), in float: Cephes' expf — x = n ln2 + r,
 * |r| <= ln2 / 2, a degree-7 polynomial in r, times 2^n built in the exponent bits; relative error
 * ~2 ulp (checked against double exp in test_lp_loss). x below -87 gives e^-87 (~1.6e-38) instead
 * of less: against the row's largest term, 1, it adds nothing to the sum. Branch-free, so the
 * compiler keeps it in vector registers (glibc's expf is a call per element). The 8-lane (AVX2,
 * no FMA) and 4-lane versions do the same multiplies and adds per lane: the same bits. */
#define EXP_VEC(NAME, VF, VI, ATTR)                                                                                    \
    ATTR static inline VF NAME(VF x) {                                                                                 \
        const VF lo = (VF){0} - 87.0f;                                                                                 \
        const VI below = x < lo;                                                                                       \
        x = (VF)(((VI)lo & below) | ((VI)x & ~below));                                                                 \
        const VF fx = x * 1.44269504088896341f + 0.5f;                                                                 \
        VF n = __builtin_convertvector(__builtin_convertvector(fx, VI), VF); /* floor(fx) */                          \
        n = n - (VF)((VI)(n > fx) & (VI)((VF){0} + 1.0f));                                                             \
        const VF r = x - n * 0.693359375f - n * -2.12194440e-4f;                                                       \
        const VF r2 = r * r;                                                                                           \
        VF y = (VF){0} + 1.9875691500e-4f;                                                                             \
        y = y * r + 1.3981999507e-3f;                                                                                  \
        y = y * r + 8.3334519073e-3f;                                                                                  \
        y = y * r + 4.1665795894e-2f;                                                                                  \
        y = y * r + 1.6666665459e-1f;                                                                                  \
        y = y * r + 5.0000001201e-1f;                                                                                  \
        y = y * r2 + r + 1.0f;                                                                                         \
        const VI e = (__builtin_convertvector(n, VI) + 127) << 23; /* 2^n, n in [-126, 0] */                           \
        return y * (VF)e;                                                                                              \
    }
EXP_VEC(exp_v4, v4f, v4i, )

/* max(m, s[0..K)) — exact: any lane order gives the same value */
static float max_row_v4(const float *s, int64_t K, float m) {
    v4f mv = (v4f){0} + m;
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        v4f v;
        memcpy(&v, s + k, sizeof v);
        mv = select_v4(v > mv, v, mv);
    }
    for (int l = 0; l < 4; l++) m = mv[l] > m ? mv[l] : m;
    for (; k < K; k++) m = s[k] > m ? s[k] : m;
    return m;
}

/* s[k] = exp(s[k] - mx) for k in [k0, K), 4 at a time, the last ones through a zero-padded vector;
 * element k's exp is added to lane k mod 4 of acc, in k order. */
static void exp_row_v4_from(float *s, int64_t k, int64_t K, float mx, v4d *acc) {
    for (; k + 4 <= K; k += 4) {
        v4f v;
        memcpy(&v, s + k, sizeof v);
        v = exp_v4(v - mx);
        memcpy(s + k, &v, sizeof v);
        *acc += __builtin_convertvector(v, v4d);
    }
    if (k < K) {
        v4f v = {0};
        for (int64_t l = 0; l < K - k; l++) v[l] = s[k + l];
        v = exp_v4(v - mx);
        for (int64_t l = 0; l < 4; l++) {
            if (l < K - k) s[k + l] = v[l];
            else v[l] = 0.0f;
        }
        *acc += __builtin_convertvector(v, v4d);
    }
}

/* s[k] = exp(s[k] - mx) in place; returns Σ s[k] in double, lane sums in a fixed order. */
static double exp_row_v4(float *s, int64_t K, float mx) {
    v4d acc = {0};
    exp_row_v4_from(s, 0, K, mx, &acc);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SOFTMAX_HAVE_AVX2 1
typedef float v8f __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));
EXP_VEC(exp_v8, v8f, v8i, __attribute__((target("avx2"))))

__attribute__((target("avx2"))) static float max_row_v8(const float *s, int64_t K, float m) {
    v8f mv = (v8f){0} + m;
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        v8f v;
        memcpy(&v, s + k, sizeof v);
        const v8i gt = v > mv;
        mv = (v8f)(((v8i)v & gt) | ((v8i)mv & ~gt));
    }
    for (int l = 0; l < 8; l++) m = mv[l] > m ? mv[l] : m;
    for (; k < K; k++) m = s[k] > m ? s[k] : m;
    return m;
}

/* exp_row_v4's sums in exp_row_v4's order: the low 4 lanes, then the high 4 */
__attribute__((target("avx2"))) static double exp_row_v8(float *s, int64_t K, float mx) {
    v4d acc = {0};
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        v8f v;
        memcpy(&v, s + k, sizeof v);
        v = exp_v8(v - mx);
        memcpy(s + k, &v, sizeof v);
        const v4f lo = {v[0], v[1], v[2], v[3]}, hi = {v[4], v[5], v[6], v[7]};
        acc += __builtin_convertvector(lo, v4d);
        acc += __builtin_convertvector(hi, v4d);
    }
    exp_row_v4_from(s, k, K, mx, &acc);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
#endif

/* a machine's row kernels */
typedef struct softmax_rows {
    float (*max_row)(const float *s, int64_t K, float m);
    double (*exp_row)(float *s, int64_t K, float mx);
} softmax_rows;

/* the row kernels for this machine: AVX2, else 4-wide (CGNN_NO_AVX=1: 4-wide; the tests compare);
 * picked once per loss call */
static softmax_rows softmax_row_kernels(void) {
    softmax_rows k = {max_row_v4, exp_row_v4};
#ifdef SOFTMAX_HAVE_AVX2
    const char *no_avx = getenv("CGNN_NO_AVX");
    if (__builtin_cpu_supports("avx2") && !(no_avx && *no_avx == '1')) k = (softmax_rows){max_row_v8, exp_row_v8};
#endif
    return k;
}

/* exp(x) of one value, as exp_v4 computes each lane */
static float exp_one(float x) {
    const v4f v = exp_v4((v4f){0} + x);
    return v[0];
}

/* The rows of one tile (pairs i0 .. i0+n): S (n, K) holds their random negatives' scores / τ on
 * entry and exp(s/τ − max) on return, with scale (n) = 1 / (P · Σ exp) per row: ∂loss/∂(s/τ) of
 * entry k of row r is S[r][k] · scale[r]. Writes row (P, 3) and the dq / dc rows of the tile's
 * own pairs (positives). */
static void softmax_tile_rows(float *dq, float *dc, double *row, float *S, float *scale, const softmax_rows *kr,
                              const lp_pairs *b, int64_t i0, int64_t n, float inv_t, double inv_p, float gw) {
    const int64_t K = b->K, D = b->D;
    const float *q = b->q, *c = b->c;
    for (int64_t i = i0; i < i0 + n; i++) {
        const float *qi = q + i * D;
        float *s = S + (i - i0) * K;
        const float s_pos = dotf(qi, c + i * D, D) * inv_t;
        float mx = kr->max_row(s, K, s_pos);
        const int64_t nl = listed_len(b, i);
        for (int64_t t = 0; t < nl; t++) {
            const float sl = dotf(qi, c + listed_row(b, i, t) * D, D) * inv_t;
            mx = sl > mx ? sl : mx;
        }
        const float e_pos = exp_one(s_pos - mx);
        double sum = (double)e_pos + kr->exp_row(s, K, mx); /* one exp per entry, kept in place */
        for (int64_t t = 0; t < nl; t++) sum += (double)exp_one(dotf(qi, c + listed_row(b, i, t) * D, D) * inv_t - mx);
        row[3 * i] = mx, row[3 * i + 1] = sum, row[3 * i + 2] = (double)mx + log(sum) - (double)s_pos;
        scale[i - i0] = (float)(inv_p / sum);
        const float gpos = (float)(((double)e_pos / sum - 1.0) * inv_p);
        axpy(dq + i * D, gw * gpos, c + i * D, D); /* rows owned by pair i */
        axpy(dc + i * D, gw * gpos, qi, D);
    }
}

double lp_loss_softmax(float *dq, float *dc, const lp_pairs *b, float softmax_temperature, float weight, float *work) {
    check_pairs(b);
    check_work(work);
    CGNN_CHECK(softmax_temperature > 0.0f);
    const int64_t P = b->P, H = b->H, K = b->K, D = b->D;
    if (P == 0) return 0.0;
    const float inv_t = 1.0f / softmax_temperature;
    const double inv_p = 1.0 / (double)P;
    double *row = (double *)(void *)work; /* (P, 3): max, sum of exps, loss */
    const int64_t groups = (P + SOFTMAX_GROUP - 1) / SOFTMAX_GROUP;
    const int64_t slots = groups < SOFTMAX_ROUND ? groups : SOFTMAX_ROUND;
    const int64_t slot_floats = K * D + SOFTMAX_TILE * (K + 2 * D + 1);
    /* per slot: part (K, D): its group's Σ over tiles of G^T q; S (TILE, K): a tile's exps; qs
     * (TILE, D): scale_r · q_r; dqt (TILE, D): exps · c_random; scale (TILE) */
    float *slot0 = work + 6 * P;
    const float *q = b->q, *c = b->c, *cr = b->c + (P + H) * D;
    float *dcr = dc + (P + H) * D;
    const float gw = weight * inv_t; /* ∂(s/τ) -> ∂s, times the task weight */
    ops_gemm_stats *gs = loss_stats;
    const softmax_rows kr = softmax_row_kernels();
    double gemm_s = 0.0; /* Σ over threads of their time in GEMMs */
    int nthreads = 1;
    for (int64_t g0 = 0; g0 < groups; g0 += slots) {
        const int64_t ng = groups - g0 < slots ? groups - g0 : slots;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : gemm_s) if (P * (K + 1) > LP_PAR_MIN)
        for (int64_t g = g0; g < g0 + ng; g++) {
#ifdef _OPENMP
            if (g == g0) nthreads = omp_get_num_threads();
#endif
            float *pg = slot0 + (g - g0) * slot_floats, *S = pg + K * D, *qs = S + SOFTMAX_TILE * K;
            float *dqt = qs + SOFTMAX_TILE * D, *scale = dqt + SOFTMAX_TILE * D;
            const int64_t e = (g + 1) * SOFTMAX_GROUP < P ? (g + 1) * SOFTMAX_GROUP : P;
            for (int64_t i0 = g * SOFTMAX_GROUP; i0 < e; i0 += SOFTMAX_TILE) {
                const int64_t n = e - i0 < SOFTMAX_TILE ? e - i0 : SOFTMAX_TILE;
                const double t0 = gs ? timer_now() : 0.0;
                // S (n, K) = q[i0 .. i0+n) (n, D) · c_random (K, D)^T / τ
                if (K > 0) ops_sgemm_counted(NULL, 0, 1, n, K, D, inv_t, q + i0 * D, D, cr, D, 0.0f, S, K);
                const double t1 = gs ? timer_now() : 0.0;
                softmax_tile_rows(dq, dc, row, S, scale, &kr, b, i0, n, inv_t, inv_p, gw);
                if (K == 0) continue;
                for (int64_t r = 0; r < n; r++)
                    for (int64_t d = 0; d < D; d++) qs[r * D + d] = scale[r] * q[(i0 + r) * D + d];
                const double t2 = gs ? timer_now() : 0.0;
                // dqt (n, D) = w/τ · S (n, K) · c_random (K, D);  part (K, D) (+)= w/τ · S^T · qs
                ops_sgemm_counted(NULL, 0, 0, n, D, K, gw, S, K, cr, D, 0.0f, dqt, D);
                ops_sgemm_counted(NULL, 1, 0, K, D, n, gw, S, K, qs, D, i0 == g * SOFTMAX_GROUP ? 0.0f : 1.0f, pg, D);
                if (gs) gemm_s += (t1 - t0) + (timer_now() - t2);
                for (int64_t r = 0; r < n; r++) axpy(dq + (i0 + r) * D, scale[r], dqt + r * D, D);
            }
        }
        // dc_random (K, D) += Σ_g part_g, in group order
#pragma omp parallel for schedule(static) if (ng * K * D > LP_PAR_MIN)
        for (int64_t k = 0; k < K; k++)
            for (int64_t g = 0; g < ng; g++) {
                const float *pg = slot0 + g * slot_floats + k * D;
                float *o = dcr + k * D;
                for (int64_t d = 0; d < D; d++) o[d] += pg[d];
            }
    }
    if (gs && K > 0) { /* the GEMMs ran side by side: their wall time is the threads' mean */
        gs->seconds += gemm_s / nthreads;
        gs->flops += 3.0 * 2.0 * (double)P * (double)K * (double)D;
        gs->num_calls += 3 * ((P + SOFTMAX_TILE - 1) / SOFTMAX_TILE);
    }
    double loss = 0.0;
    for (int64_t i = 0; i < P; i++) loss += row[3 * i + 2]; /* serial, pair order */
    for (int64_t i = 0; i < P; i++) /* listed negatives: rows a group's pairs share, serially */
        for (int64_t t = 0; t < listed_len(b, i); t++) {
            const float *qi = q + i * D, *cl = c + listed_row(b, i, t) * D;
            const float sl = dotf(qi, cl, D) * inv_t;
            const float g = (float)((double)exp_one(sl - (float)row[3 * i]) / row[3 * i + 1] * inv_p);
            axpy(dq + i * D, gw * g, cl, D);
            axpy(dc + listed_row(b, i, t) * D, gw * g, qi, D);
        }
    return loss * inv_p;
}

double lp_loss_softmax_ref(float *dq, float *dc, const lp_pairs *b, float softmax_temperature, float weight,
                           float *work) {
    (void)work;
    check_pairs(b);
    CGNN_CHECK(softmax_temperature > 0.0f);
    const int64_t P = b->P, H = b->H, K = b->K, D = b->D, M = P + H + K;
    if (P == 0) return 0.0;
    const double tau = softmax_temperature;
    double *gq = cgnn_calloc((size_t)(P * D), sizeof(double)), *gc = cgnn_calloc((size_t)(M * D), sizeof(double));
    int64_t *cols = cgnn_malloc((size_t)(1 + H + K) * sizeof(int64_t)); /* row i's candidates: pos first */
    double *s = cgnn_malloc((size_t)(1 + H + K) * sizeof(double));
    double loss = 0.0;
    for (int64_t i = 0; i < P; i++) {
        int64_t n = 0;
        cols[n++] = i;
        for (int64_t t = 0; t < listed_len(b, i); t++) cols[n++] = listed_row(b, i, t);
        for (int64_t k = 0; k < K; k++) cols[n++] = P + H + k;
        double mx = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < n; j++) {
            s[j] = dotd(b->q + i * D, b->c + cols[j] * D, D) / tau;
            mx = fmax(mx, s[j]);
        }
        for (int64_t j = 0; j < n; j++) sum += exp(s[j] - mx);
        loss += mx + log(sum) - s[0]; /* cross_entropy with target 0 */
        for (int64_t j = 0; j < n; j++) {
            const double g = (exp(s[j] - mx) / sum - (j == 0 ? 1.0 : 0.0)) / (double)P / tau;
            for (int64_t d = 0; d < D; d++) {
                gq[i * D + d] += g * b->c[cols[j] * D + d];
                gc[cols[j] * D + d] += g * b->q[i * D + d];
            }
        }
    }
    add_ref_grads(dq, dc, gq, gc, P, M, D, weight);
    free(gq), free(gc), free(cols), free(s);
    return loss / (double)P;
}

/* ---- Margin ----------------------------------------------------------------------------- */

/* Σ_i |N_i| (Margin) */
static int64_t margin_count(const lp_pairs *b) {
    int64_t n = 0;
    for (int64_t i = 0; i < b->P; i++) n += listed_len(b, i) + b->K;
    return n;
}

/* The hinge value as torch's margin_ranking_loss forms it: −1 · (x1 − x2) + margin, in float. */
static inline float hinge_arg(float s_pos, float s_neg, float margin) { return -(s_pos - s_neg) + margin; }

double lp_loss_margin(float *dq, float *dc, const lp_pairs *b, float margin, float weight, float *work) {
    check_pairs(b);
    check_work(work);
    const int64_t P = b->P, H = b->H, K = b->K, D = b->D;
    const int64_t count = margin_count(b);
    if (P == 0 || count == 0) return 0.0;
    const float inv_n = (float)(1.0 / (double)count);
    double *row = (double *)(void *)work;   /* (P, 3): loss sum, -, - */
    float *S = work + 6 * P;                 /* (P, K): scores, then ∂loss/∂s */
    const float *q = b->q, *c = b->c, *cr = b->c + (P + H) * D;
    ops_gemm_stats *gs = loss_stats;
    // S (P, K) = q (P, D) · c_random (K, D)^T
    if (K > 0) ops_sgemm_counted(gs, 0, 1, P, K, D, 1.0f, q, D, cr, D, 0.0f, S, K);
#pragma omp parallel for schedule(static) if (P * (K + 1) > LP_PAR_MIN)
    for (int64_t i = 0; i < P; i++) {
        const float *qi = q + i * D;
        float *s = S + i * K;
        const float s_pos = dotf(qi, c + i * D, D);
        double l = 0.0;
        int64_t active = 0;
        for (int64_t k = 0; k < K; k++) {
            const float v = hinge_arg(s_pos, s[k], margin);
            const int on = v >= 0.0f; /* torch's clamp_min: the gradient passes at 0 */
            l += on ? (double)v : 0.0;
            active += on;
            s[k] = on ? inv_n : 0.0f;
        }
        for (int64_t t = 0; t < listed_len(b, i); t++) {
            const float v = hinge_arg(s_pos, dotf(qi, c + listed_row(b, i, t) * D, D), margin);
            if (v >= 0.0f) l += (double)v, active++;
        }
        row[3 * i] = l;
        const float gpos = -(float)active * inv_n;
        axpy(dq + i * D, weight * gpos, c + i * D, D);
        axpy(dc + i * D, weight * gpos, qi, D);
    }
    double loss = 0.0;
    for (int64_t i = 0; i < P; i++) loss += row[3 * i];
    if (K > 0) {
        // dq (P, D) += w · G (P, K) · c_random (K, D);  dc_random (K, D) += w · G^T · q (P, D)
        ops_sgemm_counted(gs, 0, 0, P, D, K, weight, S, K, cr, D, 1.0f, dq, D);
        ops_sgemm_counted(gs, 1, 0, K, D, P, weight, S, K, q, D, 1.0f, dc + (P + H) * D, D);
    }
    for (int64_t i = 0; i < P; i++) {
        const float *qi = q + i * D;
        const float s_pos = dotf(qi, c + i * D, D);
        for (int64_t t = 0; t < listed_len(b, i); t++) {
            const float *cl = c + listed_row(b, i, t) * D;
            if (hinge_arg(s_pos, dotf(qi, cl, D), margin) < 0.0f) continue;
            axpy(dq + i * D, weight * inv_n, cl, D);
            axpy(dc + listed_row(b, i, t) * D, weight * inv_n, qi, D);
        }
    }
    return loss / (double)count;
}

double lp_loss_margin_ref(float *dq, float *dc, const lp_pairs *b, float margin, float weight, float *work) {
    (void)work;
    check_pairs(b);
    const int64_t P = b->P, H = b->H, K = b->K, D = b->D, M = P + H + K;
    const int64_t count = margin_count(b);
    if (P == 0 || count == 0) return 0.0;
    double *gq = cgnn_calloc((size_t)(P * D), sizeof(double)), *gc = cgnn_calloc((size_t)(M * D), sizeof(double));
    double loss = 0.0;
    for (int64_t i = 0; i < P; i++) {
        const double s_pos = dotd(b->q + i * D, b->c + i * D, D);
        for (int64_t j = 0; j < listed_len(b, i) + K; j++) {
            const int64_t col = j < listed_len(b, i) ? listed_row(b, i, j) : P + H + (j - listed_len(b, i));
            const double v = (double)margin - (s_pos - dotd(b->q + i * D, b->c + col * D, D));
            if (v < 0.0) continue;
            loss += v;
            // ∂v/∂s_pos = −1, ∂v/∂s_neg = +1, over count
            for (int64_t d = 0; d < D; d++) {
                gq[i * D + d] += (b->c[col * D + d] - (double)b->c[i * D + d]) / (double)count;
                gc[col * D + d] += b->q[i * D + d] / (double)count;
                gc[i * D + d] -= b->q[i * D + d] / (double)count;
            }
        }
    }
    add_ref_grads(dq, dc, gq, gc, P, M, D, weight);
    free(gq), free(gc);
    return loss / (double)count;
}

/* ---- BPR -------------------------------------------------------------------------------- */

/* Pair i's j-th random BPR negative: a row of c. */
static inline int64_t bpr_random_row(const lp_pairs *b, int64_t i, int64_t j, int64_t n) {
    return b->P + b->H + (i * n + j) % b->K;
}

static int64_t bpr_count(const lp_pairs *b, int64_t n) {
    int64_t total = 0;
    for (int64_t i = 0; i < b->P; i++) total += listed_len(b, i) + (b->K > 0 ? n : 0);
    return total;
}

/* Row of pair i's j-th BPR negative (listed first, then random). */
static inline int64_t bpr_row(const lp_pairs *b, int64_t i, int64_t j, int64_t n) {
    const int64_t nl = listed_len(b, i);
    return j < nl ? listed_row(b, i, j) : bpr_random_row(b, i, j - nl, n);
}

double lp_loss_bpr(float *dq, float *dc, const lp_pairs *b, int64_t num_negatives, float weight, float *work) {
    check_pairs(b);
    check_work(work);
    CGNN_CHECK(num_negatives >= 1);
    const int64_t P = b->P, K = b->K, D = b->D, n = num_negatives;
    const int64_t count = bpr_count(b, n);
    if (P == 0 || count == 0) return 0.0;
    const double inv_n = 1.0 / (double)count;
    double *row = (double *)(void *)work; /* (P) loss sums */
    const float *q = b->q, *c = b->c;
#pragma omp parallel for schedule(static) if (P * n * D > LP_PAR_MIN)
    for (int64_t i = 0; i < P; i++) {
        const float *qi = q + i * D;
        const float s_pos = dotf(qi, c + i * D, D);
        const int64_t nb = listed_len(b, i) + (K > 0 ? n : 0);
        double l = 0.0, gpos = 0.0;
        for (int64_t j = 0; j < nb; j++) {
            const float *cn = c + bpr_row(b, i, j, n) * D;
            const double x = (double)(dotf(qi, cn, D) - s_pos); /* s_neg − s_pos */
            l += softplus(x);
            const float g = (float)(sigmoid(x) * inv_n);
            gpos += (double)g;
            axpy(dq + i * D, weight * g, cn, D);
        }
        row[i] = l;
        axpy(dq + i * D, -weight * (float)gpos, c + i * D, D); /* rows owned by pair i */
        axpy(dc + i * D, -weight * (float)gpos, qi, D);
    }
    double loss = 0.0;
    for (int64_t i = 0; i < P; i++) loss += row[i];
    for (int64_t i = 0; i < P; i++) { /* negatives' rows (shared between pairs): serially */
        const float *qi = q + i * D;
        const float s_pos = dotf(qi, c + i * D, D);
        const int64_t nb = listed_len(b, i) + (K > 0 ? n : 0);
        for (int64_t j = 0; j < nb; j++) {
            const int64_t r = bpr_row(b, i, j, n);
            const float g = (float)(sigmoid((double)(dotf(qi, c + r * D, D) - s_pos)) * inv_n);
            axpy(dc + r * D, weight * g, qi, D);
        }
    }
    return loss * inv_n;
}

double lp_loss_bpr_ref(float *dq, float *dc, const lp_pairs *b, int64_t num_negatives, float weight, float *work) {
    (void)work;
    check_pairs(b);
    CGNN_CHECK(num_negatives >= 1);
    const int64_t P = b->P, H = b->H, K = b->K, D = b->D, M = P + H + K, n = num_negatives;
    const int64_t count = bpr_count(b, n);
    if (P == 0 || count == 0) return 0.0;
    double *gq = cgnn_calloc((size_t)(P * D), sizeof(double)), *gc = cgnn_calloc((size_t)(M * D), sizeof(double));
    double loss = 0.0;
    for (int64_t i = 0; i < P; i++) {
        const double s_pos = dotd(b->q + i * D, b->c + i * D, D);
        const int64_t nb = listed_len(b, i) + (K > 0 ? n : 0);
        for (int64_t j = 0; j < nb; j++) {
            const int64_t r = bpr_row(b, i, j, n);
            const double x = dotd(b->q + i * D, b->c + r * D, D) - s_pos;
            loss += softplus(x); /* −log σ(s_pos − s_neg) */
            const double g = sigmoid(x) / (double)count;
            for (int64_t d = 0; d < D; d++) {
                gq[i * D + d] += g * ((double)b->c[r * D + d] - (double)b->c[i * D + d]);
                gc[r * D + d] += g * b->q[i * D + d];
                gc[i * D + d] -= g * b->q[i * D + d];
            }
        }
    }
    add_ref_grads(dq, dc, gq, gc, P, M, D, weight);
    free(gq), free(gc);
    return loss / (double)count;
}

/* ---- DirectAU --------------------------------------------------------------------------- */

/* log mean_{a<b} exp(−t ||x_a − x_b||²) of the rows of x (P, D), P >= 2, and dx (P, D) +=
 * scale · its gradient. Fast: a Gram GEMM, W in place, one more GEMM for W x. work: P·P floats
 * (W), P·D floats (W x), P doubles (row sums), P floats (row maxima). */
static double uniformity(float *dx, const float *x, int64_t P, int64_t D, float t, float scale, float *work) {
    double *rsum = (double *)(void *)work;
    float *rmax = work + 2 * P, *W = work + 3 * P, *Y = W + P * P;
    ops_gemm_stats *gs = loss_stats;
    // W (P, P) = x (P, D) · x^T: d²_ab = W_aa + W_bb − 2 W_ab
    ops_sgemm_counted(gs, 0, 1, P, P, D, 1.0f, x, D, x, D, 0.0f, W, P);
    /* pass 1: W_ab (a != b) = d²_ab in place; row a writes only its off-diagonal entries and
     * reads the diagonal (the squared norms), which stays intact until the pass is done */
#pragma omp parallel for schedule(static) if (P * P > LP_PAR_MIN)
    for (int64_t a = 0; a < P; a++) {
        float mn = INFINITY;
        for (int64_t bb = 0; bb < P; bb++) {
            if (bb == a) continue;
            const float d2 = fmaxf(W[a * P + a] + W[bb * P + bb] - 2.0f * W[a * P + bb], 0.0f);
            W[a * P + bb] = d2;
            mn = fminf(mn, d2);
        }
        rmax[a] = -t * mn; /* the row's largest exponent */
    }
    float m = -INFINITY; /* the largest exponent, factored out */
    for (int64_t a = 0; a < P; a++) m = fmaxf(m, rmax[a]);
    /* pass 2: W_ab = exp(−t d²_ab − m), row sums */
#pragma omp parallel for schedule(static) if (P * P > LP_PAR_MIN)
    for (int64_t a = 0; a < P; a++) {
        double rs = 0.0;
        for (int64_t bb = 0; bb < P; bb++) {
            if (bb == a) continue;
            const float w = expf(-t * W[a * P + bb] - m);
            W[a * P + bb] = w;
            rs += (double)w;
        }
        rsum[a] = rs;
    }
    for (int64_t a = 0; a < P; a++) W[a * P + a] = 0.0f;
    double S2 = 0.0; /* Σ_{a≠b} W = 2 Σ_{a<b} W */
    for (int64_t a = 0; a < P; a++) S2 += rsum[a];
    const double npairs = 0.5 * (double)P * (double)(P - 1);
    const double value = (double)m + log(0.5 * S2) - log(npairs);
    // Y (P, D) = W (P, P) · x (P, D)
    ops_sgemm_counted(gs, 0, 0, P, D, P, 1.0f, W, P, x, D, 0.0f, Y, D);
    const float k = (float)(-2.0 * (double)t / (0.5 * S2)) * scale;
#pragma omp parallel for schedule(static) if (P * D > LP_PAR_MIN)
    for (int64_t a = 0; a < P; a++) {
        const float ra = (float)rsum[a];
        for (int64_t d = 0; d < D; d++) dx[a * D + d] += k * (ra * x[a * D + d] - Y[a * D + d]);
    }
    return value;
}

double lp_loss_directau(float *dq, float *dc, const lp_pairs *b, float gamma, float alpha, float temperature,
                        float weight, float *work) {
    check_pairs(b);
    check_work(work);
    CGNN_CHECK(alpha > 0.0f && gamma >= 0.0f && temperature > 0.0f);
    const int64_t P = b->P, D = b->D;
    if (P == 0) return 0.0;
    double *row = (double *)(void *)work; /* (P) ||q_i − c_i||^α */
    float *uwork = work + 2 * P;
    const float *q = b->q, *c = b->c;
    const double inv_p = 1.0 / (double)P;
#pragma omp parallel for schedule(static) if (P * D > LP_PAR_MIN)
    for (int64_t i = 0; i < P; i++) {
        double n2 = 0.0;
        for (int64_t d = 0; d < D; d++) {
            const double x = (double)q[i * D + d] - (double)c[i * D + d];
            n2 += x * x;
        }
        const double nrm = sqrt(n2);
        row[i] = pow(nrm, (double)alpha);
        if (nrm > 0.0) { /* ∂||d||^α/∂d = α ||d||^(α−2) d; 0 at d = 0 */
            const float g = (float)((double)alpha * pow(nrm, (double)alpha - 2.0) * inv_p) * weight;
            for (int64_t d = 0; d < D; d++) {
                const float x = q[i * D + d] - c[i * D + d];
                dq[i * D + d] += g * x;
                dc[i * D + d] -= g * x;
            }
        }
    }
    double loss = 0.0;
    for (int64_t i = 0; i < P; i++) loss += row[i];
    loss *= inv_p;
    if (P >= 2 && gamma > 0.0f) {
        const float scale = weight * gamma * 0.5f;
        const double uu = uniformity(dq, q, P, D, temperature, scale, uwork);
        const double ui = uniformity(dc, c, P, D, temperature, scale, uwork);
        loss += (double)gamma * 0.5 * (uu + ui);
    }
    return loss;
}

/* The reference uniformity: pairwise differences in double. */
static double uniformity_ref(double *gx, const float *x, int64_t P, int64_t D, double t) {
    double *e = cgnn_malloc((size_t)(P * P) * sizeof(double)); /* −t d²_ab */
    double m = -INFINITY;
    for (int64_t a = 0; a < P; a++)
        for (int64_t bb = 0; bb < P; bb++) {
            double d2 = 0.0;
            for (int64_t d = 0; d < D; d++) {
                const double v = (double)x[a * D + d] - (double)x[bb * D + d];
                d2 += v * v;
            }
            e[a * P + bb] = -t * d2;
            if (bb > a) m = fmax(m, e[a * P + bb]);
        }
    double S = 0.0;
    for (int64_t a = 0; a < P; a++)
        for (int64_t bb = a + 1; bb < P; bb++) S += exp(e[a * P + bb] - m);
    const double value = m + log(S) - log(0.5 * (double)P * (double)(P - 1));
    for (int64_t a = 0; a < P; a++)
        for (int64_t bb = 0; bb < P; bb++) {
            if (bb == a) continue;
            const double w = exp(e[a * P + bb] - m) / S;
            for (int64_t d = 0; d < D; d++) gx[a * D + d] += -2.0 * t * w * ((double)x[a * D + d] - x[bb * D + d]);
        }
    free(e);
    return value;
}

double lp_loss_directau_ref(float *dq, float *dc, const lp_pairs *b, float gamma, float alpha, float temperature,
                            float weight, float *work) {
    (void)work;
    check_pairs(b);
    CGNN_CHECK(alpha > 0.0f && gamma >= 0.0f && temperature > 0.0f);
    const int64_t P = b->P, D = b->D, M = P + b->H + b->K;
    if (P == 0) return 0.0;
    double *gq = cgnn_calloc((size_t)(P * D), sizeof(double)), *gc = cgnn_calloc((size_t)(M * D), sizeof(double));
    double align = 0.0;
    for (int64_t i = 0; i < P; i++) {
        double n2 = 0.0;
        for (int64_t d = 0; d < D; d++) {
            const double x = (double)b->q[i * D + d] - (double)b->c[i * D + d];
            n2 += x * x;
        }
        const double nrm = sqrt(n2);
        align += pow(nrm, (double)alpha);
        if (nrm == 0.0) continue;
        const double g = (double)alpha * pow(nrm, (double)alpha - 2.0) / (double)P;
        for (int64_t d = 0; d < D; d++) {
            const double x = (double)b->q[i * D + d] - (double)b->c[i * D + d];
            gq[i * D + d] += g * x;
            gc[i * D + d] -= g * x;
        }
    }
    double loss = align / (double)P;
    if (P >= 2 && gamma > 0.0f) {
        double *gu = cgnn_calloc((size_t)(P * D), sizeof(double)), *gi = cgnn_calloc((size_t)(P * D), sizeof(double));
        const double uu = uniformity_ref(gu, b->q, P, D, temperature);
        const double ui = uniformity_ref(gi, b->c, P, D, temperature);
        loss += (double)gamma * 0.5 * (uu + ui);
        for (int64_t k = 0; k < P * D; k++) {
            gq[k] += (double)gamma * 0.5 * gu[k];
            gc[k] += (double)gamma * 0.5 * gi[k];
        }
        free(gu), free(gi);
    }
    add_ref_grads(dq, dc, gq, gc, P, M, D, weight);
    free(gq), free(gc);
    return loss;
}

/* ---- the combination -------------------------------------------------------------------- */

static int only_plain_retrieval(const lp_task *tasks, int n) {
    return n == 1 && tasks[0].kind == LP_TASK_RETRIEVAL && tasks[0].weight == 1.0;
}

int lp_loss_tasks_need_retrieval_scratch(const lp_task *tasks, int n) {
    if (only_plain_retrieval(tasks, n)) return 0;
    for (int t = 0; t < n; t++)
        if (tasks[t].kind == LP_TASK_RETRIEVAL) return 1;
    return 0;
}

int64_t lp_loss_tasks_work_floats(const lp_task *tasks, int n, int64_t P, int64_t H, int64_t K, int64_t D) {
    int64_t w = 2;
    for (int t = 0; t < n; t++) {
        const int64_t x = lp_loss_work_floats(tasks[t].kind, P, H, K, D);
        if (x > w) w = x;
    }
    return w;
}

double lp_loss_tasks(float *dq, float *dc, const lp_task *tasks, int n, const lp_pairs *b, const int64_t *query_ids,
                     const int64_t *cand_ids, float *work, float *rdq, float *rdc, double *task_loss) {
    CGNN_CHECK(n >= 1);
    const int64_t P = b->P, M = b->P + b->H + b->K, D = b->D;
    if (only_plain_retrieval(tasks, n)) { /* exactly retrieval_loss: the default task, bit for bit */
        const double l = retrieval_loss(dq, dc, b->q, b->c, P, M, D, query_ids, cand_ids, (float)tasks[0].temperature,
                                        tasks[0].remove_accidental_hits, work);
        if (task_loss) task_loss[0] = l;
        return l;
    }
    if (P > 0) memset(dq, 0, (size_t)(P * D) * sizeof(float));
    if (M > 0) memset(dc, 0, (size_t)(M * D) * sizeof(float));
    double total = 0.0;
    for (int t = 0; t < n; t++) {
        const lp_task *k = &tasks[t];
        const float w = (float)k->weight;
        double l = 0.0;
        switch (k->kind) {
        case LP_TASK_RETRIEVAL:
            CGNN_CHECK(rdq && rdc);
            l = retrieval_loss(rdq, rdc, b->q, b->c, P, M, D, query_ids, cand_ids, (float)k->temperature,
                               k->remove_accidental_hits, work);
            if (P > 0) {
                for (int64_t x = 0; x < P * D; x++) dq[x] += w * rdq[x];
                for (int64_t x = 0; x < M * D; x++) dc[x] += w * rdc[x];
            }
            break;
        case LP_TASK_SOFTMAX: l = lp_loss_softmax(dq, dc, b, (float)k->softmax_temperature, w, work); break;
        case LP_TASK_MARGIN: l = lp_loss_margin(dq, dc, b, (float)k->margin, w, work); break;
        case LP_TASK_DIRECTAU:
            l = lp_loss_directau(dq, dc, b, (float)k->gamma, (float)k->alpha, (float)k->temperature, w, work);
            break;
        case LP_TASK_BPR: l = lp_loss_bpr(dq, dc, b, k->num_negatives, w, work); break;
        default: CGNN_CHECK(0);
        }
        if (task_loss) task_loss[t] = l;
        total += k->weight * l;
    }
    return total;
}
