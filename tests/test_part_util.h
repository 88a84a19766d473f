/* test_part_util.h — an in-process partitioning for the partitioned-graph tests: part of each
 * node from a seeded draw, new ids sorted by (part, original id), each part's index over its own
 * nodes (sources new ids, edge-list order kept), sampler views whose pick_remote calls the owners'
 * side directly; feature tables per part. Header-only (static functions). */
#ifndef CGNN_TEST_PART_UTIL_H
#define CGNN_TEST_PART_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "graph/csc.h"
#include "sample/gather.h"
#include "sample/sample_weights.h"
#include "sample/sampler.h"
#include "test_graph_util.h"
#include "util/rng.h"

#define MAXP 5

/* A partitioning of a graph of n nodes: part of each original node from a seeded draw, new ids
 * sorted by (part, original id), each part's index over its own nodes (sources new ids). */
typedef struct parted {
    int P;
    int64_t n;
    int64_t start[MAXP + 1];
    int64_t *new_of_orig, *orig_of_new;
    csc_graph g[MAXP];
    sampler_part part[MAXP];
    uint32_t *scratch[MAXP];
    double *wscratch[MAXP];
    float *weights[MAXP];  /* parted_set_weights: each part's draw weights (CSC order), else NULL */
    int bad_reply; /* test hook: the owner answers one neighbour too many */
} parted;

static inline int in_process_pick(void *ctx, sampler_remote_hop *hop, cgnn_err *err) {
    parted *pd = ctx;
    for (int p = 0; p < hop->num_parts; p++) {
        if (hop->n[p] == 0) continue;
        int64_t got = sampler_pick_owned(&pd->g[p], &pd->part[p], hop->hop, hop->key, hop->fanout, hop->replace,
                                         hop->nodes[p], hop->n[p], hop->counts[p], &hop->nbrs[p], &hop->nbr_cap[p],
                                         pd->scratch[p], pd->wscratch[p], err);
        if (got < 0) return -1;
        if (pd->bad_reply) hop->counts[p][0] += 1000;
    }
    return 0;
}

static inline void parted_make(parted *pd, const int32_t *src, const int32_t *dst, int64_t e, int64_t n, int P, uint64_t seed) {
    memset(pd, 0, sizeof *pd);
    pd->P = P;
    pd->n = n;
    int *part_of = malloc((size_t)n * sizeof(int));
    int64_t cnt[MAXP] = {0};
    for (int64_t v = 0; v < n; v++) {
        part_of[v] = (int)(rng_key(seed, (uint64_t)v) % (uint64_t)P);
        cnt[part_of[v]]++;
    }
    pd->start[0] = 0;
    for (int p = 0; p < P; p++) pd->start[p + 1] = pd->start[p] + cnt[p];
    pd->new_of_orig = malloc((size_t)n * sizeof(int64_t));
    pd->orig_of_new = malloc((size_t)n * sizeof(int64_t));
    int64_t next[MAXP];
    for (int p = 0; p < P; p++) next[p] = pd->start[p];
    for (int64_t v = 0; v < n; v++) {
        int64_t w = next[part_of[v]]++;
        pd->new_of_orig[v] = w;
        pd->orig_of_new[w] = v;
    }
    int64_t maxdeg = 0, *deg = calloc((size_t)n, sizeof(int64_t));
    for (int64_t i = 0; i < e; i++)
        if (++deg[dst[i]] > maxdeg) maxdeg = deg[dst[i]];
    for (int p = 0; p < P; p++) {
        /* the in-edges of the part's nodes in edge-list order: sources new ids, dst local rows */
        int32_t *ps = malloc((size_t)(e + 1) * sizeof(int32_t)), *pdst = malloc((size_t)(e + 1) * sizeof(int32_t));
        int64_t m = 0;
        for (int64_t i = 0; i < e; i++)
            if (part_of[dst[i]] == p) {
                ps[m] = (int32_t)pd->new_of_orig[src[i]];
                pdst[m++] = (int32_t)(pd->new_of_orig[dst[i]] - pd->start[p]);
            }
        ds_edges ed = test_edges(ps, pdst, m);
        cgnn_err err;
        CGNN_CHECK(csc_build(&pd->g[p], cnt[p], &ed, 1, &err) == 0);
        free(ps);
        free(pdst);
        sampler_part *sp = &pd->part[p];
        sp->num_parts = P;
        sp->part = p;
        sp->part_start = pd->start;
        sp->key_ids = pd->orig_of_new + pd->start[p];
        sp->num_nodes = n;
        sp->num_edges = e;
        sp->max_in_degree = maxdeg;
        sp->pick_remote = in_process_pick;
        sp->ctx = pd;
        pd->scratch[p] = malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
        pd->wscratch[p] = malloc((size_t)(maxdeg + 1) * sizeof(double));
    }
    free(deg);
    free(part_of);
}

static inline void parted_free(parted *pd) {
    for (int p = 0; p < pd->P; p++) {
        csc_free(&pd->g[p]);
        free(pd->scratch[p]);
        free(pd->wscratch[p]);
        free(pd->weights[p]);
    }
    free(pd->new_of_orig);
    free(pd->orig_of_new);
}

/* Weighted sampling on the parts: w (e) the weights of the edges src/dst (the graph parted_make
 * was given) in edge-list order; each part takes its edges' weights, in its edge-list order, into
 * its index's CSC order (sample_weights_to_csc), as cgnn partition's edge features do. */
static inline void parted_set_weights(parted *pd, const int32_t *src, const int32_t *dst, int64_t e, const float *w) {
    (void)src;
    for (int p = 0; p < pd->P; p++) {
        float *pw = malloc((size_t)(e + 1) * sizeof(float));
        int32_t *pdst = malloc((size_t)(e + 1) * sizeof(int32_t));
        int64_t m = 0;
        for (int64_t i = 0; i < e; i++) {
            const int64_t nd = pd->new_of_orig[dst[i]];
            if (nd >= pd->start[p] && nd < pd->start[p + 1]) pw[m] = w[i], pdst[m++] = (int32_t)(nd - pd->start[p]);
        }
        pd->weights[p] = malloc((size_t)(m + 1) * sizeof(float));
        cgnn_err err;
        CGNN_CHECK(sample_weights_to_csc(&pd->g[p], pw, NPY_DTYPE_FLOAT32, pdst, NPY_DTYPE_INT32, m, "part", pd->weights[p],
                                         &err) == 0);
        pd->part[p].weights = pd->weights[p];
        free(pw);
        free(pdst);
    }
}

/* 1 if batch a (whole graph, original ids) equals batch b (a part's view, new ids) once b's
 * ids are mapped back to original ids. */
static inline int same_mapped(const minibatch *a, const minibatch *b, const int64_t *orig_of_new, int L) {
    if (a->num_input_nodes != b->num_input_nodes || a->num_seeds != b->num_seeds) return 0;
    for (int64_t i = 0; i < a->num_input_nodes; i++)
        if (a->input_nodes[i] != orig_of_new[b->input_nodes[i]]) return 0;
    for (int l = 0; l < L; l++) {
        const sampler_block *x = &a->blocks[l], *y = &b->blocks[l];
        if (x->num_dst != y->num_dst || x->num_src != y->num_src || x->num_edges != y->num_edges) return 0;
        if (memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * sizeof(int64_t)) != 0) return 0;
        if (memcmp(x->indices, y->indices, (size_t)x->num_edges * sizeof(int32_t)) != 0) return 0;
    }
    for (int64_t i = 0; i < a->num_items; i++)
        if (a->item_local[i] != b->item_local[i]) return 0;
    return 1;
}

/* Features for the loader test: value (original id * 5 + col) % 17 as float32, one table in
 * original order and one per part in new-id order. */
typedef struct feat_parts {
    parted *pd;
    ds_feature whole, part[MAXP];
    float *whole_rows, *part_rows[MAXP];
    gather_part gp[MAXP];
} feat_parts;

static inline void feat_view(ds_feature *f, float *rows, int64_t n, int64_t dim) {
    memset(f, 0, sizeof *f);
    f->array.dtype = NPY_DTYPE_FLOAT32;
    f->array.ndim = 2;
    f->array.shape[0] = n;
    f->array.shape[1] = dim;
    f->array.count = n * dim;
    f->array.data = rows;
    f->rows = n;
    f->dim = dim;
}

static inline int fetch_in_process(void *ctx, gather_remote_req *rq, cgnn_err *err) {
    feat_parts *fp = ctx;
    for (int p = 0; p < rq->num_parts; p++)
        if (rq->n[p] > 0 && gather_rows_owned(&fp->part[p], &fp->gp[p], rq->ids[p], rq->n[p], &rq->rows[p],
                                              &rq->rows_cap[p], &rq->rows_len[p], err) != 0)
            return -1;
    return 0;
}

#endif
