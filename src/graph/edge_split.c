/* edge_split.c — GiGL's self-supervised link prediction split; see edge_split.h. */
#include "graph/edge_split.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

static inline int64_t edge_id(const void *ids, npy_dtype t, int64_t i) {
    return t == NPY_DTYPE_INT32 ? (int64_t)((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

/* torch's `x >> k` on int64: an arithmetic shift (written out: >> of a negative value is
 * implementation-defined in C). */
static inline uint64_t sar64(uint64_t x, int k) {
    return (x >> k) | ((x >> 63) ? ~(~0ULL >> k) : 0);
}

int64_t edge_split_fast_hash(int64_t v) {
    uint64_t x = (uint64_t)v + 1; /* wrapping, as torch's int64 add_ */
    for (int round = 0; round < 2; round++) {
        x ^= sar64(x, 30);
        x *= 0xBF58476D1CE4E5B9ULL;
        x ^= sar64(x, 27);
        x *= 0x94D049BB133111EBULL;
        x ^= sar64(x, 31);
    }
    int64_t out;
    memcpy(&out, &x, sizeof out); /* two's complement reinterpretation */
    return out;
}

void edge_split_assign(uint8_t *out, const int64_t *hash, int64_t n, double num_val, double num_test) {
    if (n <= 0) return;
    int64_t lo = hash[0], hi = hash[0];
    for (int64_t i = 1; i < n; i++) {
        if (hash[i] < lo) lo = hash[i];
        if (hash[i] > hi) hi = hash[i];
    }
    /* torch: (hash - min) wraps in int64; int64 / int is true division in the default float
     * dtype (both sides cast to float32); a Python float compared with a float32 tensor is cast
     * to float32 */
    const float denom = (float)hi;
    const float t_test = (float)(1.0 - num_test), t_val = (float)(1.0 - num_test - num_val);
    for (int64_t i = 0; i < n; i++) {
        const int64_t d = (int64_t)((uint64_t)hash[i] - (uint64_t)lo);
        const float norm = (float)d / denom;
        out[i] = norm >= t_test ? EDGE_SPLIT_TEST : norm >= t_val ? EDGE_SPLIT_VALID : EDGE_SPLIT_TRAIN;
    }
}

int edge_split_check(double p, double num_val, double num_test, cgnn_err *err) {
    if (!(p > 0 && p <= 1))
        return err_set(err, CGNN_ERR_INPUT,
                       "ssl_positive_label_percentage is %g: the fraction of the supervision edges taken as labels "
                       "must be in (0, 1]", p);
    if (!(num_val > 0 && num_val < 1))
        return err_set(err, CGNN_ERR_INPUT, "num_val is %g: GiGL's validation fraction must be in (0, 1)", num_val);
    if (!(num_test >= 0 && num_test < 1))
        return err_set(err, CGNN_ERR_INPUT, "num_test is %g: GiGL's test fraction must be in [0, 1)", num_test);
    if (num_val + num_test >= 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "num_val + num_test is %g: GiGL's validation and test fractions must leave anchors to train on "
                       "(sum < 1)", num_val + num_test);
    return 0;
}

void edge_split_free(edge_split *s) {
    if (!s) return;
    for (int k = 0; k < EDGE_SPLIT_COUNT; k++) free(s->pairs[k]);
    free(s->which);
    memset(s, 0, sizeof *s);
}

int edge_split_make(edge_split *s, const ds_edges *edges, int64_t num_src, double p, double num_val,
                    double num_test, uint64_t seed, cgnn_err *err) {
    memset(s, 0, sizeof *s);
    if (edge_split_check(p, num_val, num_test, err) != 0) return -1;
    const int64_t E = edges->num_edges;
    /* Python's int(E * p): the product in double, truncated */
    const int64_t n = (int64_t)floor((double)E * p);
    if (n < 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "ssl_positive_label_percentage %g of %lld edges selects no label edge (GiGL takes int(E * p))", p,
                       (long long)E);
    s->num_edges = E;
    s->num_labels = n;
    s->which = cgnn_calloc((size_t)E, 1);
    /* 1. labels: the first n of a Fisher-Yates permutation of 0..E-1 keyed by the seed */
    int64_t *perm = cgnn_malloc((size_t)E * sizeof *perm);
    for (int64_t i = 0; i < E; i++) perm[i] = i;
    rng r;
    rng_init(&r, rng_key(seed, 0x73736c2d6c61626cULL)); /* "ssl-labl" */
    for (int64_t i = 0; i < n; i++) {
        const int64_t j = i + (int64_t)rng_below(&r, (uint64_t)(E - i));
        const int64_t tmp = perm[i];
        perm[i] = perm[j], perm[j] = tmp;
        s->which[perm[i]] = 1;
    }
    free(perm);
    /* 2. the distinct anchors (label sources), ascending (GiGL: bincount + nonzero) */
    uint8_t *is_anchor = cgnn_calloc((size_t)num_src + 1, 1);
    for (int64_t e = 0; e < E; e++)
        if (s->which[e]) {
            const int64_t a = edge_id(edges->src, edges->id_dtype, e);
            CGNN_CHECK(a >= 0 && a < num_src);
            is_anchor[a] = 1;
        }
    int64_t na = 0;
    for (int64_t a = 0; a < num_src; a++) na += is_anchor[a];
    int64_t *anchors = cgnn_malloc((size_t)(na + 1) * sizeof *anchors);
    int64_t *hash = cgnn_malloc((size_t)(na + 1) * sizeof *hash);
    uint8_t *split = cgnn_malloc((size_t)na + 1);
    na = 0;
    for (int64_t a = 0; a < num_src; a++)
        if (is_anchor[a]) anchors[na] = a, hash[na] = edge_split_fast_hash(a), na++;
    edge_split_assign(split, hash, na, num_val, num_test);
    /* is_anchor[a] becomes 1 + a's split */
    for (int64_t i = 0; i < na; i++) {
        is_anchor[anchors[i]] = (uint8_t)(1 + split[i]);
        s->num_anchors[split[i]]++;
    }
    free(anchors), free(hash), free(split);
    /* 3. every label edge follows its anchor; pairs in edge-list order */
    for (int64_t e = 0; e < E; e++)
        if (s->which[e]) {
            s->which[e] = is_anchor[edge_id(edges->src, edges->id_dtype, e)];
            s->num_pairs[s->which[e] - 1]++;
        }
    for (int k = 0; k < EDGE_SPLIT_COUNT; k++) s->pairs[k] = cgnn_malloc((size_t)(2 * s->num_pairs[k] + 1) * sizeof(int64_t));
    int64_t fill[EDGE_SPLIT_COUNT] = {0};
    for (int64_t e = 0; e < E; e++)
        if (s->which[e]) {
            const int k = s->which[e] - 1;
            s->pairs[k][2 * fill[k]] = edge_id(edges->src, edges->id_dtype, e);
            s->pairs[k][2 * fill[k] + 1] = edge_id(edges->dst, edges->id_dtype, e);
            fill[k]++;
        }
    free(is_anchor);
    return 0;
}

/* (src, dst) pairs ordered lexicographically, for the reverse lookups */
static int pair_cmp(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

int64_t edge_split_mark_reverse(uint8_t *drop, const ds_edges *edges, const edge_split *s) {
    const int64_t nv = s->num_pairs[EDGE_SPLIT_VALID], nt = s->num_pairs[EDGE_SPLIT_TEST], L = nv + nt;
    if (L == 0) return 0;
    int64_t *keys = cgnn_malloc((size_t)(2 * L) * sizeof *keys); /* (L, 2): every held-out (src, dst) */
    memcpy(keys, s->pairs[EDGE_SPLIT_VALID], (size_t)(2 * nv) * sizeof *keys);
    memcpy(keys + 2 * nv, s->pairs[EDGE_SPLIT_TEST], (size_t)(2 * nt) * sizeof *keys);
    qsort(keys, (size_t)L, 2 * sizeof *keys, pair_cmp);
    int64_t marked = 0;
    for (int64_t e = 0; e < edges->num_edges; e++) {
        const int64_t rev[2] = {edge_id(edges->dst, edges->id_dtype, e), edge_id(edges->src, edges->id_dtype, e)};
        if (!drop[e] && bsearch(rev, keys, (size_t)L, 2 * sizeof *keys, pair_cmp)) drop[e] = 1, marked++;
    }
    free(keys);
    return marked;
}

int edge_split_csc(csc_graph *g, const ds_edges *edges, int64_t num_dst, int64_t num_src, const edge_split *s,
                   const uint8_t *also_drop, int keep_eval, int nthreads, int64_t *removed, cgnn_err *err) {
    CGNN_CHECK(!s || s->num_edges == edges->num_edges);
    const int64_t E = edges->num_edges;
#define KEEP_EDGE(e)                                                                                              \
    (keep_eval || ((!s || s->which[e] <= 1 + EDGE_SPLIT_TRAIN) && (!also_drop || !also_drop[e])))
    int64_t kept = 0;
    for (int64_t e = 0; e < E; e++) kept += KEEP_EDGE(e);
    *removed = E - kept;
    /* the kept edges as one int64 (2, E') copy, in edge-list order (a start-up cost, never per batch) */
    int64_t *buf = cgnn_malloc((size_t)(2 * kept + 1) * sizeof *buf);
    int64_t k = 0;
    for (int64_t e = 0; e < E; e++)
        if (KEEP_EDGE(e)) {
            buf[k] = edge_id(edges->src, edges->id_dtype, e);
            buf[kept + k] = edge_id(edges->dst, edges->id_dtype, e);
            k++;
        }
#undef KEEP_EDGE
    const ds_edges view = {.id_dtype = NPY_DTYPE_INT64, .num_edges = kept, .src = buf, .dst = buf + kept};
    const int rc = csc_build_range(g, 0, num_dst, num_src, &view, nthreads, err);
    free(buf);
    return rc;
}
