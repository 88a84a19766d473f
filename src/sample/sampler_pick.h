/* sampler_pick.h — the per-node draw shared by the homogeneous and the typed sampler
 * (private to src/sample): which in-neighbours of one dst node a hop samples. */
#ifndef CGNN_SAMPLER_PICK_H
#define CGNN_SAMPLER_PICK_H

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

/* Pass 1 for one dst node: appends its sampled neighbour global ids to buf; returns count. */
static inline int64_t pick_neighbours(const csc_graph *g, const sampler_config *cfg, int64_t fanout,
                                      int64_t v, uint64_t stream, uint32_t *scratch, uint32_t *picks,
                                      int64_t *buf) {
    const int64_t beg = g->indptr[v], d = g->indptr[v + 1] - beg;
    if (d == 0) return 0;
    const int wide = g->index_bytes == 8;
    const int32_t *i32 = (const int32_t *)g->indices + beg;
    const int64_t *i64 = (const int64_t *)g->indices + beg;
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

#endif
