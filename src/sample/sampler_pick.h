/* sampler_pick.h — the per-node draw shared by the homogeneous and the typed sampler
 * (private to src/sample): which in-neighbours of one dst node a hop samples. */
#ifndef CGNN_SAMPLER_PICK_H
#define CGNN_SAMPLER_PICK_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph/csc.h"
#include "sample/sampler.h"
#include "util/rng.h"

#define FLOYD_MAX_K 64

/* Chooses k distinct positions of [0, d) uniformly (k < d), written to out[0..k). */
static inline void pick_without_replacement(rng *r, int64_t d, int64_t k, uint32_t *scratch,
                                            uint32_t *out) {
    if (k <= FLOYD_MAX_K) {
        /* Floyd's algorithm: for j = d-k .. d-1, t = U[0, j]; take t unless taken, else j. */
        int64_t m = 0;
        for (int64_t j = d - k; j < d; j++) {
            uint32_t t = (uint32_t)rng_below(r, (uint64_t)j + 1);
            int taken = 0;
            for (int64_t q = 0; q < m; q++)
                if (out[q] == t) {
                    taken = 1;
                    break;
                }
            out[m++] = taken ? (uint32_t)j : t;
        }
    } else {
        /* partial Fisher-Yates over [0, d) */
        for (int64_t j = 0; j < d; j++) scratch[j] = (uint32_t)j;
        for (int64_t j = 0; j < k; j++) {
            int64_t t = j + (int64_t)rng_below(r, (uint64_t)(d - j));
            uint32_t tmp = scratch[j];
            scratch[j] = scratch[t];
            scratch[t] = tmp;
            out[j] = scratch[j];
        }
    }
}

/* ---- weighted draws (sampler.h: "Weighted sampling") -------------------------------------- */

/* The exponential key of an in-edge of weight w > 0 from one uniform of the node's stream:
 * Exp(w), so the k smallest keys are a weighted sample without replacement. */
static inline double wpick_key(rng *r, float w) { return -log1p(-rng_uniform(r)) / (double)w; }

/* (ka, pa) before (kb, pb): the smaller key first, ties by the lower position. */
static inline int wpick_before(double ka, uint32_t pa, double kb, uint32_t pb) {
    return ka < kb || (ka == kb && pa < pb);
}

/* Number of positive weights of w[0..d). */
static inline int64_t wpick_positive(const float *w, int64_t d) {
    int64_t m = 0;
    for (int64_t j = 0; j < d; j++) m += w[j] > 0.0f;
    return m;
}

/* Without replacement, k < (positive weights of w[0..d)): the positions of the k smallest keys
 * (one uniform drawn per position, zero weights included, so the keys depend on the position
 * only) into pos[0..k) in increasing key order. A max-heap of k (key, position) pairs in
 * key[] / pos[], then sorted in place. */
static inline void wpick_ares(rng *r, const float *w, int64_t d, int64_t k, uint32_t *pos, double *key) {
    int64_t n = 0;
    for (int64_t j = 0; j < d; j++) {
        const double u = rng_uniform(r);
        if (!(w[j] > 0.0f)) continue;
        const double kj = -log1p(-u) / (double)w[j];
        int64_t i;
        if (n < k) { /* push, sift up */
            i = n++;
            while (i > 0) {
                int64_t p = (i - 1) / 2;
                if (!wpick_before(key[p], pos[p], kj, (uint32_t)j)) break;
                key[i] = key[p], pos[i] = pos[p];
                i = p;
            }
        } else {
            if (!wpick_before(kj, (uint32_t)j, key[0], pos[0])) continue;
            i = 0; /* replace the top, sift down */
            for (;;) {
                int64_t c = 2 * i + 1;
                if (c >= n) break;
                if (c + 1 < n && wpick_before(key[c], pos[c], key[c + 1], pos[c + 1])) c++;
                if (!wpick_before(kj, (uint32_t)j, key[c], pos[c])) break;
                key[i] = key[c], pos[i] = pos[c];
                i = c;
            }
        }
        key[i] = kj, pos[i] = (uint32_t)j;
    }
    /* heap sort: the largest to the end, repeatedly */
    for (int64_t end = n - 1; end > 0; end--) {
        const double kt = key[end];
        const uint32_t pt = pos[end];
        key[end] = key[0], pos[end] = pos[0];
        int64_t i = 0;
        for (;;) {
            int64_t c = 2 * i + 1;
            if (c >= end) break;
            if (c + 1 < end && wpick_before(key[c], pos[c], key[c + 1], pos[c + 1])) c++;
            if (!wpick_before(kt, pt, key[c], pos[c])) break;
            key[i] = key[c], pos[i] = pos[c];
            i = c;
        }
        key[i] = kt, pos[i] = pt;
    }
}

/* The CDF of w[0..d) into cdf[0..d) (prefix sums in double, in position order); returns the total. */
static inline double wpick_cdf(const float *w, int64_t d, double *cdf) {
    double t = 0;
    for (int64_t j = 0; j < d; j++) cdf[j] = t += (double)w[j];
    return t;
}

/* One draw with replacement (total > 0): the first position whose CDF exceeds u * total (a
 * zero-weight position never is: its CDF equals its predecessor's); when u * total rounds up to
 * the total, the last positive weight. */
static inline int64_t wpick_draw(rng *r, const float *w, const double *cdf, int64_t d, double total) {
    const double x = rng_uniform(r) * total;
    int64_t lo = 0, hi = d - 1; /* the answer is in [lo, hi] */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > x) hi = mid;
        else lo = mid + 1;
    }
    if (!(cdf[lo] > x))
        while (lo > 0 && !(w[lo] > 0.0f)) lo--; /* x rounded up to the total: the last positive */
    return lo;
}

/* Weighted picks of one node (w: its d in-edges' weights): positions into picks, or with
 * replacement straight into ids. Pass 1 of pick_neighbours for cfg->weights. */
static inline int64_t pick_weighted(const float *w, int64_t d, int64_t fanout, int replace, uint64_t stream,
                                    const int32_t *i32, const int64_t *i64, uint32_t *scratch, double *wscratch,
                                    int64_t *buf) {
    const int wide = i64 != NULL;
    if (replace && fanout >= 0) {
        const double total = wpick_cdf(w, d, wscratch);
        if (!(total > 0)) return 0;
        rng r;
        rng_init(&r, stream);
        for (int64_t j = 0; j < fanout; j++) {
            int64_t p = wpick_draw(&r, w, wscratch, d, total);
            buf[j] = wide ? i64[p] : i32[p];
        }
        return fanout;
    }
    const int64_t m = wpick_positive(w, d);
    if (fanout < 0 || m <= fanout) { /* all positive-weight edges, in edge order */
        int64_t k = 0;
        for (int64_t j = 0; j < d; j++)
            if (w[j] > 0.0f) buf[k++] = wide ? i64[j] : i32[j];
        return k;
    }
    rng r;
    rng_init(&r, stream);
    wpick_ares(&r, w, d, fanout, scratch, wscratch);
    for (int64_t j = 0; j < fanout; j++) buf[j] = wide ? i64[scratch[j]] : i32[scratch[j]];
    return fanout;
}

/* Plain reference of the weighted draw (the same picks): positions into picks[0..return)
 * (capacity max(d, fanout)); keys[d] scratch. All keys first, then k scans for the smallest
 * untaken; with replacement a linear scan of the running sum. */
static inline int64_t pick_positions_weighted_ref(rng *r, const float *w, int64_t d, int64_t fanout, int replace,
                                                  double *keys, uint32_t *picks) {
    if (fanout == 0 || d == 0) return 0;
    if (replace && fanout > 0) {
        double total = 0;
        for (int64_t j = 0; j < d; j++) total += (double)w[j];
        if (!(total > 0)) return 0;
        for (int64_t i = 0; i < fanout; i++) {
            const double x = rng_uniform(r) * total;
            double run = 0;
            int64_t p = -1, last = -1;
            for (int64_t j = 0; j < d && p < 0; j++) {
                run += (double)w[j];
                if (w[j] > 0.0f) last = j;
                if (run > x && w[j] > 0.0f) p = j;
            }
            picks[i] = (uint32_t)(p >= 0 ? p : last);
        }
        return fanout;
    }
    int64_t m = 0;
    for (int64_t j = 0; j < d; j++) m += w[j] > 0.0f;
    if (fanout < 0 || m <= fanout) {
        int64_t k = 0;
        for (int64_t j = 0; j < d; j++)
            if (w[j] > 0.0f) picks[k++] = (uint32_t)j;
        return k;
    }
    for (int64_t j = 0; j < d; j++) {
        const double u = rng_uniform(r);
        keys[j] = w[j] > 0.0f ? -log1p(-u) / (double)w[j] : INFINITY;
    }
    for (int64_t i = 0; i < fanout; i++) {
        int64_t best = -1;
        for (int64_t j = 0; j < d; j++) {
            if (!(w[j] > 0.0f) || keys[j] < 0) continue; /* zero weight, or taken (key -1) */
            if (best < 0 || wpick_before(keys[j], (uint32_t)j, keys[best], (uint32_t)best)) best = j;
        }
        picks[i] = (uint32_t)best;
        keys[best] = -1;
    }
    return fanout;
}

/* Pass 1 for one dst node: appends its sampled neighbour global ids to buf; returns count.
 * wscratch: (max degree + 1) doubles when cfg->weights is set (else unused, may be NULL). */
static inline int64_t pick_neighbours(const csc_graph *g, const sampler_config *cfg, int64_t fanout,
                                      int64_t v, uint64_t stream, uint32_t *scratch, uint32_t *picks,
                                      double *wscratch, int64_t *buf) {
    const int64_t beg = g->indptr[v], d = g->indptr[v + 1] - beg;
    if (d == 0) return 0;
    const int wide = g->index_bytes == 8;
    const int32_t *i32 = (const int32_t *)g->indices + beg;
    const int64_t *i64 = (const int64_t *)g->indices + beg;
    if (cfg->weights)
        return pick_weighted(cfg->weights + beg, d, fanout, cfg->replace, stream, wide ? NULL : i32, wide ? i64 : NULL,
                             scratch, wscratch, buf);
    if (fanout < 0 || (!cfg->replace && d <= fanout)) {
        if (wide) memcpy(buf, i64, (size_t)d * sizeof(int64_t));
        else
            for (int64_t j = 0; j < d; j++) buf[j] = i32[j];
        return d;
    }
    rng r;
    rng_init(&r, stream);
    if (cfg->replace) {
        for (int64_t j = 0; j < fanout; j++) {
            int64_t p = (int64_t)rng_below(&r, (uint64_t)d);
            buf[j] = wide ? i64[p] : i32[p];
        }
        return fanout;
    }
    uint32_t *p = fanout <= FLOYD_MAX_K ? picks : scratch; /* Fisher-Yates picks in place */
    pick_without_replacement(&r, d, fanout, scratch, p);
    for (int64_t j = 0; j < fanout; j++) buf[j] = wide ? i64[p[j]] : i32[p[j]];
    return fanout;
}

/* The stream of node v's draws in hop h: independent of where v sits in the batch. */
static inline uint64_t dst_stream(uint64_t key, int h, int64_t v) {
    return rng_key(key + (uint64_t)h * 0x9e3779b97f4a7c15ULL, (uint64_t)v);
}

/* The reference samplers' draw for one node of in-degree deg: positions into its in-neighbours,
 * written to picks[0..return) (fanout 0: none; -1 or deg <= fanout without replacement: all, in
 * order), from the node's stream r: the same draws pick_neighbours makes. */
static inline int64_t pick_positions_ref(rng *r, int64_t deg, int64_t fanout, int replace, uint32_t *scratch,
                                         uint32_t *picks) {
    if (fanout == 0 || deg == 0) return 0;
    if (fanout < 0 || (!replace && deg <= fanout)) {
        for (int64_t j = 0; j < deg; j++) picks[j] = (uint32_t)j;
        return deg;
    }
    if (replace) {
        for (int64_t j = 0; j < fanout; j++) picks[j] = (uint32_t)rng_below(r, (uint64_t)deg);
        return fanout;
    }
    pick_without_replacement(r, deg, fanout, scratch, picks);
    return fanout;
}

/* 1 if {u, v} is one of pairs[0..n) (linear scan: the reference samplers' exclusion) */
static inline int ref_pair_listed(const int64_t *pairs, int64_t n, int64_t u, int64_t v) {
    for (int64_t k = 0; k < n; k++)
        if ((pairs[2 * k] == u && pairs[2 * k + 1] == v) || (pairs[2 * k] == v && pairs[2 * k + 1] == u)) return 1;
    return 0;
}

/* ---- excluded edges: a set of unordered node pairs ------------------------------------- */

static inline uint64_t pair_hash(int64_t a, int64_t b) { return rng_key((uint64_t)a, (uint64_t)b); }

/* Adds pairs[0..n) (a set sized for max_pairs, allocated on first use). */
static inline void pair_set_add(sampler_pair_set *ps, int64_t max_pairs, const int64_t *pairs, int64_t n) {
    if (!ps->slot) {
        uint64_t size = 16;
        while (size < 4 * (uint64_t)(max_pairs + 1)) size <<= 1;
        ps->slot = cgnn_malloc(size * sizeof *ps->slot);
        ps->mask = size - 1;
        for (uint64_t i = 0; i < size; i++) ps->slot[i][0] = ps->slot[i][1] = -1;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t a = pairs[2 * k], b = pairs[2 * k + 1];
        if (a > b) {
            int64_t t = a;
            a = b;
            b = t;
        }
        uint64_t i = pair_hash(a, b) & ps->mask;
        while (ps->slot[i][0] >= 0 && !(ps->slot[i][0] == a && ps->slot[i][1] == b)) i = (i + 1) & ps->mask;
        if (ps->slot[i][0] < 0) ps->n++;
        ps->slot[i][0] = a;
        ps->slot[i][1] = b;
    }
}

static inline int pair_set_has(const sampler_pair_set *ps, int64_t u, int64_t v) {
    int64_t a = u < v ? u : v, b = u < v ? v : u;
    for (uint64_t i = pair_hash(a, b) & ps->mask; ps->slot[i][0] >= 0; i = (i + 1) & ps->mask)
        if (ps->slot[i][0] == a && ps->slot[i][1] == b) return 1;
    return 0;
}

static inline void pair_set_clear(sampler_pair_set *ps) {
    if (!ps->n) return;
    for (uint64_t i = 0; i <= ps->mask; i++) ps->slot[i][0] = ps->slot[i][1] = -1;
    ps->n = 0;
}

/* Drops the excluded edges (v <- buf[j]) from buf[0..k); returns the new count (order kept). */
static inline int64_t pair_set_drop(const sampler_pair_set *ps, int64_t v, int64_t *buf, int64_t k) {
    int64_t m = 0;
    for (int64_t j = 0; j < k; j++)
        if (!pair_set_has(ps, buf[j], v)) buf[m++] = buf[j];
    return m;
}

#endif
