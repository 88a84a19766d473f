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
            if (!cfg->replace || f < 0) ne = min64(ne, g->num_edges[e]);
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
    int weighted = 0;
    for (int e = 0; e < g->num_edge_types; e++) weighted |= cfg->weights[e] != NULL;
    if (weighted) s->wscratch = malloc((size_t)(maxdeg + 1) * sizeof(double));
    if (!s->table || !s->slot_of || !s->nbr_buf || !s->positions || (weighted && !s->wscratch)) {
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
    free(s->wscratch);
    free(s->excl.slot);
    free(s->own_buf);
    free(s->own_off);
    free(s->rq_n);
    free(s->rq_nodes);
    free(s->rq_counts);
    free(s->flat_nodes);
    free(s->flat_counts);
    if (s->rq_nbrs)
        for (int p = 0; p < s->part->num_parts; p++) free(s->rq_nbrs[p]);
    free(s->rq_nbrs);
    free(s->rq_cap);
    free(s->cur_node);
    free(s->cur_nbr);
    memset(s, 0, sizeof *s);
}

int typed_sampler_init_part(typed_sampler *s, const typed_graph *g, const typed_sampler_part *part,
                            const typed_sampler_config *cfg, const minibatch_typed_capacity *cap, cgnn_err *err) {
    CGNN_CHECK(g->parted);
    typed_sampler_config pc = *cfg; /* a part's weights are its typed_sampler_part's */
    for (int e = 0; e < g->num_edge_types; e++) {
        if (cfg->weights[e] && cfg->weights[e] != part->weights[e])
            return err_set(err, CGNN_ERR_INPUT, "a part's draw weights are its typed_sampler_part's (part->weights)");
        pc.weights[e] = part->weights[e];
    }
    cfg = &pc;
    for (int e = 0; e < g->num_edge_types; e++) { /* the local indexes are this part's rows */
        const int d = g->etype_dst[e];
        CGNN_CHECK(g->csc[e]->first_node == part->type_start[d][part->part] &&
                   g->csc[e]->num_nodes == part->type_start[d][part->part + 1] - part->type_start[d][part->part]);
    }
    if (typed_sampler_init(s, g, cfg, cap, err) != 0) return -1;
    s->part = part;
    const int P = part->num_parts, K = g->num_edge_types, L = cfg->num_layers;
    int64_t hop_edges = 0, hop_dst = K;
    for (int h = 0; h < L; h++) { /* a hop's picks over every edge type */
        int64_t sum = 0;
        for (int e = 0; e < K; e++) sum += cap->max_edges[h][e];
        if (sum > hop_edges) hop_edges = sum;
    }
    for (int e = 0; e < K; e++) hop_dst += cap->max_nodes[g->etype_dst[e]][L];
    free(s->nbr_buf);
    s->nbr_buf = malloc((size_t)(hop_edges + 1) * sizeof(int64_t));
    s->own_buf = malloc((size_t)(hop_edges + 1) * sizeof(int64_t));
    s->own_off = malloc((size_t)(hop_dst + 1) * sizeof(int64_t));
    s->flat_nodes = malloc((size_t)(hop_dst + 1) * sizeof(int64_t));
    s->flat_counts = malloc((size_t)(hop_dst + 1) * sizeof(int64_t));
    s->rq_n = calloc((size_t)P * (size_t)K, sizeof(int64_t));
    s->rq_nodes = calloc((size_t)P * (size_t)K, sizeof(int64_t *));
    s->rq_counts = calloc((size_t)P * (size_t)K, sizeof(int64_t *));
    s->cur_node = calloc((size_t)P * (size_t)K, sizeof(int64_t));
    s->rq_nbrs = calloc((size_t)P, sizeof(int64_t *));
    s->rq_cap = calloc((size_t)P, sizeof(int64_t));
    s->cur_nbr = calloc((size_t)P, sizeof(int64_t));
    if (!s->nbr_buf || !s->own_buf || !s->own_off || !s->flat_nodes || !s->flat_counts || !s->rq_n || !s->rq_nodes ||
        !s->rq_counts || !s->cur_node || !s->rq_nbrs || !s->rq_cap || !s->cur_nbr) {
        typed_sampler_free(s);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating partitioned typed sampler scratch");
    }
    return 0;
}

int64_t typed_sampler_pick_owned(const typed_graph *g, const typed_sampler_part *part, int hop, uint64_t key,
                                 int replace, int e, int64_t fanout, const int64_t *nodes, int64_t n, int64_t *counts,
                                 int64_t **out, int64_t *cap, int64_t at, uint32_t *scratch, double *wscratch,
                                 cgnn_err *err) {
    if (e < 0 || e >= g->num_edge_types)
        return err_set(err, CGNN_ERR_INPUT, "sampling request: edge type %d out of range [0, %d)", e,
                       g->num_edge_types);
    if (fanout == 0 || fanout < -1)
        return err_set(err, CGNN_ERR_INPUT, "sampling request: fanout %lld is not a fanout", (long long)fanout);
    if (hop < 0 || hop >= MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "sampling request: hop %d out of range", hop);
    const int d = g->etype_dst[e];
    const csc_graph *c = g->csc[e];
    const int64_t first = part->type_start[d][part->part], end = part->type_start[d][part->part + 1];
    sampler_config cfg = {.num_layers = 1, .replace = replace != 0, .weights = part->weights[e]};
    uint32_t picks[FLOYD_MAX_K + 1];
    for (int64_t i = 0; i < n; i++) {
        const int64_t v = nodes[i];
        if (v < first || v >= end)
            return err_set(err, CGNN_ERR_INPUT,
                           "sampling request: node %lld of type %d is not owned by part %d ([%lld, %lld))", (long long)v,
                           d, part->part, (long long)first, (long long)end);
        const int64_t row = v - first, deg = csc_degree(c, row);
        const int64_t most = fanout < 0 ? deg : (replace ? (deg > 0 ? fanout : 0) : min64(fanout, deg));
        if (at + most > *cap) {
            int64_t want = *cap > 0 ? *cap : 1024;
            while (want < at + most) want *= 2;
            int64_t *grown = realloc(*out, (size_t)want * sizeof(int64_t));
            if (!grown) return err_set(err, CGNN_ERR_RUNTIME, "out of memory answering a sampling request");
            *out = grown;
            *cap = want;
        }
        const int64_t k = pick_neighbours(c, &cfg, fanout, row, typed_stream(key, hop, e, part->key_ids[d][v]), scratch,
                                          picks, wscratch, *out + at);
        counts[i] = k;
        at += k;
    }
    return at;
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

/* Pass 1 of hop h on a part, every edge type at once: own dst nodes picked from the local
 * indexes (keyed by original ids), the others asked of their owners in one pick_remote call,
 * then merged in (edge type, dst) order into s->nbr_buf (edge type e's picks at seg[e] ..
 * seg[e+1]) with each sub-block's indptr, excluded edges dropped. Returns 0, or -1 with *err (a
 * failed call, or a reply outside the contract). */
static int pick_hop_part(typed_sampler *s, minibatch_typed *ty, const int64_t *n_dst, int h, uint64_t key, int64_t *seg,
                         cgnn_err *err) {
    const typed_graph *g = s->g;
    const typed_sampler_part *pt = s->part;
    const int P = pt->num_parts, me = pt->part, K = g->num_edge_types, L = s->cfg.num_layers;
    uint32_t picks[FLOYD_MAX_K + 1];
    sampler_config pc = {.num_layers = 1, .replace = s->cfg.replace};
    /* own picks now; the others counted per (part, edge type) */
    for (int q = 0; q < P * K; q++) s->rq_n[q] = 0;
    int64_t own_e = 0, at = 0;
    s->own_off[0] = 0;
    for (int e = 0; e < K; e++) {
        const int64_t f = s->cfg.fanouts[h][e];
        if (f == 0) continue;
        const int d = g->etype_dst[e];
        const int64_t first = pt->type_start[d][me], *dn = ty->nodes[d];
        pc.weights = pt->weights[e]; /* NULL: uniform */
        for (int64_t i = 0; i < n_dst[d]; i++) {
            const int o = typed_sampler_part_owner(pt, d, dn[i]);
            if (o == me)
                own_e += pick_neighbours(g->csc[e], &pc, f, dn[i] - first, typed_stream(key, h, e, pt->key_ids[d][dn[i]]),
                                         s->positions, picks, s->wscratch, s->own_buf + own_e);
            else
                s->rq_n[o * K + e]++;
            s->own_off[++at] = own_e;
        }
    }
    /* the requests: flat arrays cut per (part, edge type), part-major */
    int64_t off = 0, remote = 0;
    for (int q = 0; q < P * K; q++) {
        s->rq_nodes[q] = s->flat_nodes + off;
        s->rq_counts[q] = s->flat_counts + off;
        off += s->rq_n[q];
        remote += s->rq_n[q];
        s->rq_n[q] = 0; /* refilled below */
    }
    for (int e = 0; e < K; e++) {
        if (s->cfg.fanouts[h][e] == 0) continue;
        const int d = g->etype_dst[e];
        for (int64_t i = 0; i < n_dst[d]; i++) {
            const int o = typed_sampler_part_owner(pt, d, ty->nodes[d][i]);
            if (o == me) continue;
            const int q = o * K + e;
            s->rq_nodes[q][s->rq_n[q]++] = ty->nodes[d][i];
        }
    }
    if (remote > 0) {
        typed_remote_hop rq = {.hop = h,
                               .key = key,
                               .replace = s->cfg.replace,
                               .num_parts = P,
                               .num_edge_types = K,
                               .fanouts = s->cfg.fanouts[h],
                               .n = s->rq_n,
                               .nodes = s->rq_nodes,
                               .counts = s->rq_counts,
                               .nbrs = s->rq_nbrs,
                               .nbr_cap = s->rq_cap};
        if (pt->pick_remote(pt->ctx, &rq, err) != 0) return -1;
    }
    /* merge in (edge type, dst) order: own picks from own_buf, the others from each part's reply
     * in turn (a part's reply lists edge type by edge type, node by node: the same order) */
    for (int q = 0; q < P * K; q++) s->cur_node[q] = 0;
    for (int p = 0; p < P; p++) s->cur_nbr[p] = 0;
    int64_t ne = 0;
    at = 0;
    for (int e = 0; e < K; e++) {
        sampler_block *b = &ty->blocks[(L - 1 - h) * K + e];
        const int d = g->etype_dst[e], st = g->etype_src[e];
        const int64_t f = s->cfg.fanouts[h][e], nd = n_dst[d], maxdeg = g->max_in_degree[e];
        const int64_t most = f < 0 ? maxdeg : (s->cfg.replace ? f : min64(f, maxdeg));
        const int64_t edge_cap = s->cap.max_edges[h][e];
        seg[e] = ne;
        b->indptr[0] = 0;
        if (f == 0) {
            for (int64_t i = 0; i < nd; i++) b->indptr[i + 1] = 0;
            continue;
        }
        for (int64_t i = 0; i < nd; i++) {
            const int64_t v = ty->nodes[d][i];
            const int o = typed_sampler_part_owner(pt, d, v);
            const int64_t *src;
            int64_t k;
            if (o == me) {
                src = s->own_buf + s->own_off[at];
                k = s->own_off[at + 1] - s->own_off[at];
            } else {
                const int q = o * K + e;
                k = s->rq_counts[q][s->cur_node[q]++];
                if (k < 0 || k > most || s->cur_nbr[o] + k > s->rq_cap[o] || ne - seg[e] + k > edge_cap)
                    return err_set(err, CGNN_ERR_INPUT,
                                   "part %d answered %lld neighbours of node %lld (edge type %d) in hop %d (at most %lld "
                                   "allowed)",
                                   o, (long long)k, (long long)v, e, h, (long long)most);
                src = s->rq_nbrs[o] + s->cur_nbr[o];
                s->cur_nbr[o] += k;
                for (int64_t j = 0; j < k; j++)
                    if (src[j] < 0 || src[j] >= g->num_nodes[st])
                        return err_set(err, CGNN_ERR_INPUT,
                                       "part %d answered neighbour id %lld of type %d, outside [0, %lld)", o,
                                       (long long)src[j], st, (long long)g->num_nodes[st]);
            }
            at++;
            memcpy(s->nbr_buf + ne, src, (size_t)k * sizeof(int64_t));
            if (s->excl.n) k = drop_typed(s, e, v, s->nbr_buf + ne, k);
            ne += k;
            b->indptr[i + 1] = ne - seg[e];
        }
    }
    seg[K] = ne;
    return 0;
}

/* typed_sampler_sample (s->part NULL) and typed_sampler_sample_part. */
static int sample_impl(typed_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key, cgnn_err *err) {
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
    int rc = 0;
    for (int h = 0; h < L && rc == 0; h++) {
        int64_t n_dst[MINIBATCH_MAX_NODE_TYPES];
        for (int t = 0; t < T; t++) n_dst[t] = cur[t];
        if (s->part) { /* every edge type's picks of the hop first, then the relabelling, type by type */
            int64_t seg[MINIBATCH_MAX_EDGE_TYPES + 1];
            if (pick_hop_part(s, ty, n_dst, h, key, seg, err) != 0) {
                rc = -1;
                break;
            }
            for (int e = 0; e < K; e++) {
                sampler_block *b = &ty->blocks[(L - 1 - h) * K + e];
                const int st = g->etype_src[e];
                const int64_t ne = s->cfg.fanouts[h][e] == 0 ? 0 : seg[e + 1] - seg[e];
                const int64_t *buf = s->nbr_buf + (s->cfg.fanouts[h][e] == 0 ? 0 : seg[e]);
                const int64_t off = g->offset[st];
                for (int64_t j = 0; j < ne; j++) {
                    if (j + PREFETCH_DIST < ne) __builtin_prefetch(&s->table[hash_slot(s, off + buf[j + PREFETCH_DIST])]);
                    b->indices[j] = (int32_t)relabel(s, ty, cur, st, buf[j]);
                }
                b->num_dst = n_dst[g->etype_dst[e]];
                b->num_edges = ne;
                total += ne;
            }
        } else {
            for (int e = 0; e < K; e++) {
                sampler_block *b = &ty->blocks[(L - 1 - h) * K + e];
                const csc_graph *c = g->csc[e];
                const int d = g->etype_dst[e], st = g->etype_src[e];
                const int64_t f = s->cfg.fanouts[h][e], nd = n_dst[d];
                const int64_t *dn = ty->nodes[d];
                int64_t ne = 0;
                b->indptr[0] = 0;
                pc.weights = s->cfg.weights[e]; /* NULL: uniform */
                if (f == 0) {
                    for (int64_t i = 0; i < nd; i++) b->indptr[i + 1] = 0;
                } else {
                    for (int64_t i = 0; i < nd; i++) {
                        if (i + PREFETCH_DIST < nd) __builtin_prefetch(&c->indptr[dn[i + PREFETCH_DIST]]);
                        int64_t k = pick_neighbours(c, &pc, f, dn[i], typed_stream(key, h, e, dn[i]), s->positions,
                                                    picks, s->wscratch, s->nbr_buf + ne);
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
    return rc;
}

void typed_sampler_sample(typed_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key) {
    CGNN_CHECK(!s->part);
    sample_impl(s, mb, seeds, n, key, NULL);
}

int typed_sampler_sample_part(typed_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key,
                              cgnn_err *err) {
    CGNN_CHECK(s->part);
    return sample_impl(s, mb, seeds, n, key, err);
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
    int64_t maxpick = maxdeg; /* with replacement a node takes fanout picks */
    for (int h = 0; h < L; h++)
        for (int e = 0; e < K; e++) maxpick = cfg->fanouts[h][e] > maxpick ? cfg->fanouts[h][e] : maxpick;
    uint32_t *scratch = cgnn_malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    uint32_t *picks = cgnn_malloc((size_t)(maxpick + 1) * sizeof(uint32_t));
    double *keys = cgnn_malloc((size_t)(maxdeg + 1) * sizeof(double));
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
                const float *w = cfg->weights[e];
                const int64_t k = w ? pick_positions_weighted_ref(&r, w + beg, deg, f, cfg->replace, keys, picks)
                                    : pick_positions_ref(&r, deg, f, cfg->replace, scratch, picks);
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
    free(keys);
}
