/* test_fd.h — finite-difference gradient checking and random fills shared by the model tests. */
#ifndef CGNN_TEST_FD_H
#define CGNN_TEST_FD_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "test.h"
#include "util/rng.h"

static inline void fill_uniform(float *x, int64_t n, float lo, float hi, uint64_t seed) {
    rng r;
    rng_init(&r, seed);
    for (int64_t k = 0; k < n; k++) x[k] = lo + (hi - lo) * (float)rng_uniform(&r);
}

/* Values in ±[lo, hi] (kept away from 0, for ReLU's kink). */
static inline void fill_away_from_zero(float *x, int64_t n, float lo, float hi, uint64_t seed) {
    rng r;
    rng_init(&r, seed);
    for (int64_t k = 0; k < n; k++) {
        const float v = lo + (hi - lo) * (float)rng_uniform(&r);
        x[k] = rng_below(&r, 2) ? v : -v;
    }
}

/* ---- finite differences ----------------------------------------------------------------- */

typedef double (*fd_loss)(void *ctx);

typedef struct fd_stats {
    double max_err;   /* max over checked coordinates of the error measure below */
    int64_t checked;  /* coordinates compared */
    int64_t retried;  /* ... that needed a smaller step (a kink within ±eps) */
    int64_t skipped;  /* coordinates with a kink even within the smallest step */
} fd_stats;

#define FD_TOL 2e-2

/* Central differences of f w.r.t. each x[k] (perturbed in float by ±step, the true step taken
 * from the rounded values) against the analytic g[k]. Error measure:
 *   |num - ana| / max(|num|, |ana|, 1e-2 · max_k |ana_k|, abs_floor)
 * with abs_floor = 1e-6 (fd_check), or the caller's (fd_check_floor): the float32 loss's rounding,
 * divided by the step, is the resolution of num; gradient elements below abs_floor are held to
 * an absolute error of FD_TOL · abs_floor.
 * A ReLU / LeakyReLU kink within ±eps spoils the central difference: a coordinate that fails
 * at eps is retried at eps/3 and eps/9 (a wrong gradient fails at every step). With kinks != 0,
 * a coordinate that still fails and whose one-sided slopes disagree at the smallest step is
 * skipped and counted. */
static inline fd_stats fd_check_floor(float *x, const float *g, int64_t n, fd_loss f, void *ctx, float eps, int kinks,
                                      double abs_floor) {
    fd_stats st = {0, 0, 0, 0};
    double scale = 0.0;
    for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs((double)g[k]));
    const double L0 = f(ctx);
    for (int64_t k = 0; k < n; k++) {
        const float save = x[k];
        const double ana = g[k];
        double best = INFINITY, gp = 0.0, gm = 0.0;
        float step = eps;
        for (int tries = 0; tries < 3; tries++, step /= 3.0f) {
            const float xp = save + step, xm = save - step;
            x[k] = xp;
            const double Lp = f(ctx);
            x[k] = xm;
            const double Lm = f(ctx);
            x[k] = save;
            const double num = (Lp - Lm) / ((double)xp - (double)xm);
            const double den = fmax(fmax(fabs(num), fabs(ana)), fmax(1e-2 * scale, abs_floor));
            best = fmin(best, fabs(num - ana) / den);
            gp = (Lp - L0) / ((double)xp - save), gm = (L0 - Lm) / ((double)save - xm);
            if (best <= FD_TOL) {
                st.retried += tries > 0;
                break;
            }
        }
        if (best > FD_TOL && kinks && fabs(gp - gm) > 0.2 * fmax(fabs(gp), fabs(gm)) + 0.02 * scale) {
            st.skipped++;
            continue;
        }
        if (best > st.max_err) st.max_err = best;
        st.checked++;
    }
    return st;
}

static inline fd_stats fd_check(float *x, const float *g, int64_t n, fd_loss f, void *ctx, float eps, int kinks) {
    return fd_check_floor(x, g, n, f, ctx, eps, kinks, 1e-6);
}

/* Σ out·w in double: the scalar loss of the op-level checks. */
static inline double dot_loss(const float *out, const float *w, int64_t n) {
    double s = 0.0;
    for (int64_t k = 0; k < n; k++) s += (double)out[k] * (double)w[k];
    return s;
}

static inline void fd_print(const char *name, const fd_stats *st) {
    fprintf(stderr, "  %-28s max err %.3g (%lld checked, %lld at a smaller step, %lld skipped at kinks)\n", name,
            st->max_err, (long long)st->checked, (long long)st->retried, (long long)st->skipped);
}

#define ASSERT_FD(name, st)                                                                    \
    do {                                                                                       \
        fd_print(name, &(st));                                                                 \
        ASSERT((st).max_err <= FD_TOL);                                                        \
        ASSERT((st).skipped * 10 <= (st).checked + (st).skipped);                              \
    } while (0)

#endif
