/* typed_sampler.c — heterogeneous neighbour sampling; see typed_sampler.h.
 *
 * Per hop and edge type, the same two passes as the homogeneous sampler (sampler.c): pick the
 * neighbours of every dst node (csc rows of the edge type, keyed draws) into nbr_buf, then
 * relabel them into the src type's list through one hash table keyed on homogenised ids.
 */
#include "sample/typed_sampler.h"

#include <stdlib.h>
#include <string.h>

#include "sample/sampler_pick.h"
#include "util/rng.h"

#define PREFETCH_DIST 8

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int64_t sat_mul(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    if (a > (INT64_MAX / 4) / b) return INT64_MAX / 4;
    return a * b;
}

/* The stream of node v's draws through edge type e in hop h. */
static inline uint64_t typed_stream(uint64_t key, int h, int e, int64_t v) {
    return rng_key(dst_stream(key, h, v), 0x5bd1e995ULL + (uint64_t)e);
}

int typed_sampler_config_check(const typed_graph *g, const typed_sampler_config *cfg, const char *const *etype_names,
                               cgnn_err *err) {
    if (cfg->num_layers < 1 || cfg->num_layers > MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "fanouts: need 1 to %d layers, got %d", MINIBATCH_MAX_LAYERS,
                       cfg->num_layers);
    for (int h = 0; h < cfg->num_layers; h++) {
        int any = 0;
        for (int e = 0; e < g->num_edge_types; e++) {
            int64_t f = cfg->fanouts[h][e];
            if (f < -1)
                return err_set(err, CGNN_ERR_INPUT, "fanouts of edge type %s, hop %d: %lld is not a fanout "
                               "(a count >= 0, or -1 for all)", etype_names ? etype_names[e] : "?", h, (long long)f);
            any |= f != 0;
        }
        if (!any)
            return err_set(err, CGNN_ERR_INPUT, "fanouts: hop %d samples no edge type (every fanout is 0)", h);
    }
    return 0;
}

void typed_sampler_capacity(const typed_graph *g, const typed_sampler_config *cfg, const int64_t *max_seeds,
                            const int64_t *feat_dim, minibatch_typed_capacity *cap) {
    memset(cap, 0, sizeof *cap);
    const int T = g->num_node_types, K = g->num_edge_types;
    cap->num_node_types = T;
    cap->num_edge_types = K;
    for (int t = 0; t < T; t++) {
        cap->max_nodes[t][0] = min64(max_seeds[t], g->num_nodes[t]);
        cap->feat_dim[t] = feat_dim ? feat_dim[t] : 0;
    }
    for (int h = 0; h < cfg->num_layers; h++) {
        for (int t = 0; t < T; t++) cap->max_nodes[t][h + 1] = cap->max_nodes[t][h];
        for (int e = 0; e < K; e++) {
            const int64_t f = cfg->fanouts[h][e], maxdeg = g->max_in_degree[e];
            int64_t per_dst = f < 0 ? maxdeg : (cfg->replace ? f : min64(f, maxdeg));
            int64_t ne = sat_mul(cap->max_nodes[g->etype_dst[e]][h], per_dst);
            if (!cfg->replace || f < 0) ne = min64(ne, g->csc[e]->num_edges);
            cap->max_edges[h][e] = ne;
            int s = g->etype_src[e];
            cap->max_nodes[s][h + 1] = min64(cap->max_nodes[s][h + 1] + ne, g->num_nodes[s]);
        }
    }
}

int typed_sampler_init(typed_sampler *s, const typed_graph *g, const typed_sampler_config *cfg,
                       const minibatch_typed_capacity *cap, cgnn_err *err) {
    memset(s, 0, sizeof *s);
    s->g = g;
    s->cfg = *cfg;
    s->cap = *cap;
    const int L = cfg->num_layers;
    int64_t max_nodes = 0, max_edges = 0, maxdeg = 0;
    for (int t = 0; t < g->num_node_types; t++) {
        max_nodes += cap->max_nodes[t][L];
        s->max_pairs += cap->max_nodes[t][0];
    }
    for (int h = 0; h < L; h++)
        for (int e = 0; e < g->num_edge_types; e++) max_edges = cap->max_edges[h][e] > max_edges ? cap->max_edges[h][e] : max_edges;
    for (int e = 0; e < g->num_edge_types; e++) maxdeg = g->max_in_degree[e] > maxdeg ? g->max_in_degree[e] : maxdeg;
    uint64_t size = 16;
    int bits = 4;
    while (size < 2 * (uint64_t)max_nodes) {
        size <<= 1;
        bits++;
    }
    s->hash_mask = size - 1;
    s->hash_shift = 64 - bits;
    s->table = malloc(size * sizeof(sampler_slot));
    s->slot_of = malloc((size_t)(max_nodes + 1) * sizeof(int64_t));
    s->nbr_buf = malloc((size_t)(max_edges + 1) * sizeof(int64_t));
    s->positions = malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    if (!s->table || !s->slot_of || !s->nbr_buf || !s->positions) {
        typed_sampler_free(s);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating typed sampler scratch (%lld nodes)",
                       (long long)max_nodes);
    }
    for (uint64_t i = 0; i < size; i++) s->table[i].key = -1;
    return 0;
}

void typed_sampler_free(typed_sampler *s) {
    if (!s) return;
    free(s->table);
    free(s->slot_of);
    free(s->nbr_buf);
    free(s->positions);
    free(s->excl.slot);
    memset(s, 0, sizeof *s);
}

void typed_sampler_exclude_edges(typed_sampler *s, const int64_t *pairs, int64_t n) {
    CGNN_CHECK(n <= s->max_pairs);
    pair_set_add(&s->excl, s->max_pairs, pairs, n);
}

/* Drops the excluded edges (dst-type node v <- src-type buf[j]) of edge type e. */
static int64_t drop_typed(const typed_sampler *s, int e, int64_t v, int64_t *buf, int64_t k) {
    const int64_t so = s->g->offset[s->g->etype_src[e]], V = s->g->offset[s->g->etype_dst[e]] + v;
    int64_t m = 0;
    for (int64_t j = 0; j < k; j++)
        if (!pair_set_has(&s->excl, so + buf[j], V)) buf[m++] = buf[j];
    return m;
}

static inline uint64_t hash_slot(const typed_sampler *s, int64_t key) {
    return ((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> s->hash_shift;
}

/* Local id (within type t) of node (t, v): inserted as the type's next node if unseen. */
static inline int64_t relabel(typed_sampler *s, minibatch_typed *ty, int64_t *cur, int t, int64_t v) {
    const int64_t hv = s->g->offset[t] + v;
    uint64_t i = hash_slot(s, hv);
    for (;;) {
        sampler_slot *slot = &s->table[i];
        if (slot->key == hv) return slot->val;
        if (slot->key < 0) {
            int64_t local = cur[t]++;
            slot->key = hv;
            slot->val = local;
            s->slot_of[s->num_inserted++] = (int64_t)i;
            ty->nodes[t][local] = v;
            return local;
        }
        i = (i + 1) & s->hash_mask;
    }
}

void typed_sampler_sample(typed_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key) {
    const typed_graph *g = s->g;
    minibatch_typed *ty = mb->typed;
    const int L = s->cfg.num_layers, T = g->num_node_types, K = g->num_edge_types;
    CGNN_CHECK(ty && ty->num_layers == L && ty->num_node_types == T && ty->num_edge_types == K &&
               n <= mb->cap.max_items);
    int64_t cur[MINIBATCH_MAX_NODE_TYPES] = {0};
    for (int64_t i = 0; i < n; i++) {
        const int t = typed_graph_type_of(g, seeds[i]);
        mb->item_local[i] = (int32_t)relabel(s, ty, cur, t, seeds[i] - g->offset[t]);
    }
    mb->num_items = n;
    int64_t seeds_distinct = 0;
    for (int t = 0; t < T; t++) {
        ty->num_nodes[t][0] = cur[t];
        seeds_distinct += cur[t];
    }
    mb->num_seeds = seeds_distinct;
    uint32_t picks[FLOYD_MAX_K + 1];
    sampler_config pc = {.num_layers = 1, .replace = s->cfg.replace};
    int64_t total = 0;
    for (int h = 0; h < L; h++) {
        int64_t n_dst[MINIBATCH_MAX_NODE_TYPES];
        for (int t = 0; t < T; t++) n_dst[t] = cur[t];
        for (int e = 0; e < K; e++) {
            sampler_block *b = &ty->blocks[(L - 1 - h) * K + e];
            const csc_graph *c = g->csc[e];
            const int d = g->etype_dst[e], st = g->etype_src[e];
            const int64_t f = s->cfg.fanouts[h][e], nd = n_dst[d];
            const int64_t *dn = ty->nodes[d];
            int64_t ne = 0;
            b->indptr[0] = 0;
            if (f == 0) {
                for (int64_t i = 0; i < nd; i++) b->indptr[i + 1] = 0;
            } else {
                for (int64_t i = 0; i < nd; i++) {
                    if (i + PREFETCH_DIST < nd) __builtin_prefetch(&c->indptr[dn[i + PREFETCH_DIST]]);
                    int64_t k = pick_neighbours(c, &pc, f, dn[i], typed_stream(key, h, e, dn[i]), s->positions,
                                                picks, s->nbr_buf + ne);
                    if (s->excl.n) k = drop_typed(s, e, dn[i], s->nbr_buf + ne, k);
                    ne += k;
                    b->indptr[i + 1] = ne;
                }
                const int64_t off = g->offset[st];
                for (int64_t j = 0; j < ne; j++) {
                    if (j + PREFETCH_DIST < ne)
                        __builtin_prefetch(&s->table[hash_slot(s, off + s->nbr_buf[j + PREFETCH_DIST])]);
                    b->indices[j] = (int32_t)relabel(s, ty, cur, st, s->nbr_buf[j]);
                }
            }
            b->num_dst = nd;
            b->num_edges = ne;
            total += ne;
        }
        for (int e = 0; e < K; e++) ty->blocks[(L - 1 - h) * K + e].num_src = cur[g->etype_src[e]];
        for (int t = 0; t < T; t++) ty->num_nodes[t][h + 1] = cur[t];
    }
    int64_t all = 0;
    for (int t = 0; t < T; t++) all += cur[t];
    mb->num_input_nodes = all;
    mb->num_sampled_edges = total;
    for (int64_t i = 0; i < s->num_inserted; i++) s->table[s->slot_of[i]].key = -1;
    s->num_inserted = 0;
    pair_set_clear(&s->excl);
}

/* ---- reference ---------------------------------------------------------------- */

static int64_t ref_find(const int64_t *nodes, int64_t n, int64_t v) {
    for (int64_t i = 0; i < n; i++)
        if (nodes[i] == v) return i;
    return -1;
}

static int64_t ref_add(minibatch_typed *ty, int64_t *cur, int t, int64_t v) {
    int64_t l = ref_find(ty->nodes[t], cur[t], v);
    if (l < 0) {
        ty->nodes[t][cur[t]] = v;
        l = cur[t]++;
    }
    return l;
}

void typed_sampler_sample_ref(const typed_graph *g, const typed_sampler_config *cfg, minibatch *mb,
                              const int64_t *seeds, int64_t n, uint64_t key) {
    typed_sampler_sample_ref_excluding(g, cfg, mb, seeds, n, key, NULL, 0);
}

void typed_sampler_sample_ref_excluding(const typed_graph *g, const typed_sampler_config *cfg, minibatch *mb,
                                        const int64_t *seeds, int64_t n, uint64_t key, const int64_t *pairs,
                                        int64_t n_pairs) {
    minibatch_typed *ty = mb->typed;
    const int L = cfg->num_layers, T = g->num_node_types, K = g->num_edge_types;
    int64_t cur[MINIBATCH_MAX_NODE_TYPES] = {0};
    for (int64_t i = 0; i < n; i++) {
        int t = 0;
        while (t + 1 < T && seeds[i] >= g->offset[t + 1]) t++;
        mb->item_local[i] = (int32_t)ref_add(ty, cur, t, seeds[i] - g->offset[t]);
    }
    mb->num_items = n;
    mb->num_seeds = 0;
    for (int t = 0; t < T; t++) {
        ty->num_nodes[t][0] = cur[t];
        mb->num_seeds += cur[t];
    }
    int64_t maxdeg = 0;
    for (int e = 0; e < K; e++) maxdeg = g->max_in_degree[e] > maxdeg ? g->max_in_degree[e] : maxdeg;
    uint32_t *scratch = cgnn_malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    uint32_t *picks = cgnn_malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    int64_t total = 0;
    for (int h = 0; h < L; h++) {
        int64_t n_dst[MINIBATCH_MAX_NODE_TYPES];
        for (int t = 0; t < T; t++) n_dst[t] = cur[t];
        for (int e = 0; e < K; e++) {
            sampler_block *b = &ty->blocks[(L - 1 - h) * K + e];
            const csc_graph *c = g->csc[e];
            const int d = g->etype_dst[e], st = g->etype_src[e];
            const int64_t f = cfg->fanouts[h][e];
            int64_t ne = 0;
            b->indptr[0] = 0;
            for (int64_t i = 0; i < n_dst[d]; i++) {
                const int64_t v = ty->nodes[d][i], beg = c->indptr[v], deg = csc_degree(c, v);
                rng r;
                rng_init(&r, typed_stream(key, h, e, v));
                const int64_t k = pick_positions_ref(&r, deg, f, cfg->replace, scratch, picks);
                for (int64_t j = 0; j < k; j++) {
                    const int64_t u = csc_index(c, beg + picks[j]);
                    if (ref_pair_listed(pairs, n_pairs, g->offset[st] + u, g->offset[d] + v)) continue;
                    b->indices[ne++] = (int32_t)ref_add(ty, cur, st, u);
                }
                b->indptr[i + 1] = ne;
            }
            b->num_dst = n_dst[d];
            b->num_edges = ne;
            total += ne;
        }
        for (int e = 0; e < K; e++) ty->blocks[(L - 1 - h) * K + e].num_src = cur[g->etype_src[e]];
        for (int t = 0; t < T; t++) ty->num_nodes[t][h + 1] = cur[t];
    }
    mb->num_input_nodes = 0;
    for (int t = 0; t < T; t++) mb->num_input_nodes += cur[t];
    mb->num_sampled_edges = total;
    free(scratch);
    free(picks);
}
