/* sampler.c — neighbour sampling; see sampler.h for the contract.
 *
 * Each hop runs two passes over its dst nodes:
 *   1. pick: for every dst node, choose neighbour positions (all / Floyd's algorithm for
 *      small fanouts / partial Fisher-Yates for large ones / uniform draws with
 *      replacement) and copy the global ids into nbr_buf; indptr is the running count;
 *   2. relabel: map every sampled global id to a local id through the hash table, appending
 *      unseen ids to input_nodes.
 * Both passes are dominated by cache misses (random rows of the graph, random hash slots);
 * splitting them lets each issue software prefetches a fixed distance ahead.
 */
#include "sample/sampler.h"

#include <stdlib.h>
#include <string.h>

#include "sample/sampler_pick.h"
#include "util/rng.h"

#define PREFETCH_DIST 8

static int64_t max_in_degree(const csc_graph *g) {
    int64_t m = 0;
    for (int64_t v = 0; v < g->num_nodes; v++) {
        int64_t d = csc_degree(g, v);
        if (d > m) m = d;
    }
    return m;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* a * b saturated at INT64_MAX / 4 */
static int64_t sat_mul(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    if (a > (INT64_MAX / 4) / b) return INT64_MAX / 4;
    return a * b;
}

void sampler_capacity(const csc_graph *g, const sampler_config *cfg, int64_t max_items,
                      int64_t feat_dim, minibatch_capacity *cap) {
    sampler_capacity_sized(g->num_nodes, g->num_edges, max_in_degree(g), cfg, max_items, feat_dim, cap);
}

void sampler_capacity_sized(int64_t num_nodes, int64_t num_edges, int64_t maxdeg, const sampler_config *cfg,
                            int64_t max_items, int64_t feat_dim, minibatch_capacity *cap) {
    memset(cap, 0, sizeof *cap);
    cap->num_layers = cfg->num_layers;
    cap->max_items = max_items;
    cap->feat_dim = feat_dim;
    cap->max_nodes[0] = min64(max_items, num_nodes);
    for (int h = 0; h < cfg->num_layers; h++) {
        int64_t f = cfg->fanouts[h];
        int64_t per_dst = f < 0 ? maxdeg : (cfg->replace ? f : min64(f, maxdeg));
        int64_t e = sat_mul(cap->max_nodes[h], per_dst);
        if (!cfg->replace || f < 0) e = min64(e, num_edges);
        cap->max_edges[h] = e;
        cap->max_nodes[h + 1] = min64(cap->max_nodes[h] + e, num_nodes);
    }
}

int sampler_config_check(const sampler_config *cfg, cgnn_err *err) {
    /* 0 layers: the batch is its seeds alone (a model of node embeddings only) */
    if (cfg->num_layers < 0 || cfg->num_layers > MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "fanouts: need 0 to %d layers, got %d", MINIBATCH_MAX_LAYERS,
                       cfg->num_layers);
    for (int h = 0; h < cfg->num_layers; h++)
        if (cfg->fanouts[h] == 0 || cfg->fanouts[h] < -1)
            return err_set(err, CGNN_ERR_INPUT,
                           "fanouts[%d]: %lld is not a fanout (use a positive count or -1 for all)", h,
                           (long long)cfg->fanouts[h]);
    return 0;
}

int sampler_init(neighbor_sampler *s, const csc_graph *g, const sampler_config *cfg,
                 const minibatch_capacity *cap, cgnn_err *err) {
    memset(s, 0, sizeof *s);
    s->g = g;
    s->cfg = *cfg;
    s->cap = *cap;
    const int L = cfg->num_layers;
    int64_t max_nodes = cap->max_nodes[L], max_edges = 0;
    for (int h = 0; h < L; h++)
        if (cap->max_edges[h] > max_edges) max_edges = cap->max_edges[h];
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
    const int64_t maxdeg = max_in_degree(g);
    s->positions = malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    if (cfg->weights) s->wscratch = malloc((size_t)(maxdeg + 1) * sizeof(double));
    if (!s->table || !s->slot_of || !s->nbr_buf || !s->positions || (cfg->weights && !s->wscratch)) {
        sampler_free(s);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating sampler scratch (%lld nodes)",
                       (long long)max_nodes);
    }
    for (uint64_t i = 0; i < size; i++) s->table[i].key = -1;
    return 0;
}

/* Largest edge count of one hop in *cap. */
static int64_t cap_max_edges(const minibatch_capacity *cap) {
    int64_t m = 0;
    for (int h = 0; h < cap->num_layers; h++)
        if (cap->max_edges[h] > m) m = cap->max_edges[h];
    return m;
}

int sampler_init_part(neighbor_sampler *s, const csc_graph *g, const sampler_part *part, const sampler_config *cfg,
                      const minibatch_capacity *cap, cgnn_err *err) {
    if (cfg->weights && cfg->weights != part->weights)
        return err_set(err, CGNN_ERR_INPUT, "a part's draw weights are its sampler_part's (part->weights)");
    sampler_config pc = *cfg;
    pc.weights = part->weights;
    if (sampler_init(s, g, &pc, cap, err) != 0) return -1;
    s->part = part;
    const int P = part->num_parts;
    const int64_t max_nodes = cap->max_nodes[cfg->num_layers], max_edges = cap_max_edges(cap);
    s->rq_n = calloc((size_t)P, sizeof(int64_t));
    s->rq_cap = calloc((size_t)P, sizeof(int64_t));
    s->rq_nodes = calloc((size_t)P, sizeof(int64_t *));
    s->rq_pos = calloc((size_t)P, sizeof(int64_t *));
    s->rq_counts = calloc((size_t)P, sizeof(int64_t *));
    s->rq_nbrs = calloc((size_t)P, sizeof(int64_t *));
    s->own_off = malloc((size_t)(max_nodes + 1) * sizeof(int64_t));
    s->own_buf = malloc((size_t)(max_edges + 1) * sizeof(int64_t));
    /* one flat array of nodes / positions / counts, cut per part every hop (rq_nodes[0] etc.
     * own the memory) */
    int64_t *flat = malloc((size_t)(3 * (max_nodes + 1)) * sizeof(int64_t));
    if (!s->rq_n || !s->rq_cap || !s->rq_nodes || !s->rq_pos || !s->rq_counts || !s->rq_nbrs || !s->own_off ||
        !s->own_buf || !flat) {
        free(flat);
        sampler_free(s);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating partitioned sampler scratch (%lld nodes)",
                       (long long)max_nodes);
    }
    s->rq_nodes[0] = flat;
    s->rq_pos[0] = flat + (max_nodes + 1);
    s->rq_counts[0] = flat + 2 * (max_nodes + 1);
    return 0;
}

void sampler_free(neighbor_sampler *s) {
    if (!s) return;
    if (s->rq_nodes) free(s->rq_nodes[0]);
    if (s->rq_nbrs && s->part)
        for (int p = 0; p < s->part->num_parts; p++) free(s->rq_nbrs[p]);
    free(s->rq_n);
    free(s->rq_cap);
    free(s->rq_nodes);
    free(s->rq_pos);
    free(s->rq_counts);
    free(s->rq_nbrs);
    free(s->own_off);
    free(s->own_buf);
    free(s->table);
    free(s->slot_of);
    free(s->nbr_buf);
    free(s->positions);
    free(s->wscratch);
    free(s->excl.slot);
    memset(s, 0, sizeof *s);
}

static inline uint64_t hash_slot(const neighbor_sampler *s, int64_t key) {
    return ((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> s->hash_shift;
}

/* Returns the local id of global id v, inserting it as local id *n (and input_nodes[*n]) if
 * unseen. */
static inline int64_t relabel(neighbor_sampler *s, int64_t v, int64_t *input_nodes, int64_t *n) {
    uint64_t i = hash_slot(s, v);
    for (;;) {
        sampler_slot *slot = &s->table[i];
        if (slot->key == v) return slot->val;
        if (slot->key < 0) {
            int64_t local = (*n)++;
            slot->key = v;
            slot->val = local;
            s->slot_of[local] = (int64_t)i;
            input_nodes[local] = v;
            return local;
        }
        i = (i + 1) & s->hash_mask;
    }
}

/* ---- excluded edges (the pair set lives in sampler_pick.h) ----------------- */

void sampler_exclude_edges(neighbor_sampler *s, const int64_t *pairs, int64_t n) {
    CGNN_CHECK(n <= s->cap.max_items);
    pair_set_add(&s->excl, s->cap.max_items, pairs, n);
}

/* ---- partitioned graphs ---------------------------------------------------------- */

int64_t sampler_pick_owned(const csc_graph *g, const sampler_part *part, int hop, uint64_t key, int64_t fanout,
                           int replace, const int64_t *nodes, int64_t n, int64_t *counts, int64_t **out,
                           int64_t *cap, uint32_t *scratch, double *wscratch, cgnn_err *err) {
    const int64_t first = part->part_start[part->part], end = part->part_start[part->part + 1];
    if (fanout == 0 || fanout < -1)
        return err_set(err, CGNN_ERR_INPUT, "sampling request: fanout %lld is not a fanout", (long long)fanout);
    if (hop < 0 || hop >= MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "sampling request: hop %d out of range", hop);
    sampler_config cfg = {.num_layers = 1, .replace = replace != 0, .weights = part->weights};
    uint32_t picks[FLOYD_MAX_K + 1];
    int64_t e = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t v = nodes[i];
        if (v < first || v >= end)
            return err_set(err, CGNN_ERR_INPUT, "sampling request: node %lld is not owned by part %d ([%lld, %lld))",
                           (long long)v, part->part, (long long)first, (long long)end);
        const int64_t row = v - first, d = csc_degree(g, row);
        const int64_t most = fanout < 0 ? d : (replace ? (d > 0 ? fanout : 0) : min64(fanout, d));
        if (e + most > *cap) {
            int64_t want = *cap > 0 ? *cap : 1024;
            while (want < e + most) want *= 2;
            int64_t *grown = realloc(*out, (size_t)want * sizeof(int64_t));
            if (!grown) return err_set(err, CGNN_ERR_RUNTIME, "out of memory answering a sampling request");
            *out = grown;
            *cap = want;
        }
        int64_t k = pick_neighbours(g, &cfg, fanout, row, dst_stream(key, hop, part->key_ids[row]), scratch, picks,
                                    wscratch, *out + e);
        counts[i] = k;
        e += k;
    }
    return e;
}

/* Pass 1 of hop h on a partitioned graph: the picks of dst nodes[0..n_dst), own ones from the
 * local index and the others from their owners (one pick_remote call), concatenated in dst
 * order into s->nbr_buf with b->indptr, excluded edges dropped. Returns the edge count, or -1
 * with *err (a failed call, or a reply that breaks the contract: more neighbours than the
 * fanout or the whole graph's max degree allows, ids outside the graph). */
static int64_t pick_hop_part(neighbor_sampler *s, sampler_block *b, const int64_t *nodes, int64_t n_dst, int h,
                             uint64_t key, cgnn_err *err) {
    const sampler_part *pt = s->part;
    const csc_graph *g = s->g;
    const int P = pt->num_parts, me = pt->part;
    const int64_t first = pt->part_start[me], fanout = s->cfg.fanouts[h];
    const int64_t most = fanout < 0 ? pt->max_in_degree : min64(fanout, s->cfg.replace ? fanout : pt->max_in_degree);
    const int64_t edge_cap = s->cap.max_edges[h];
    uint32_t picks[FLOYD_MAX_K + 1];
    /* own picks now; the others counted per part, then cut out of the flat arrays */
    int64_t *flat_nodes = s->rq_nodes[0], *flat_pos = s->rq_pos[0], *flat_counts = s->rq_counts[0];
    for (int p = 0; p < P; p++) s->rq_n[p] = 0;
    int64_t own_e = 0;
    s->own_off[0] = 0;
    for (int64_t i = 0; i < n_dst; i++) {
        const int o = sampler_part_owner(pt, nodes[i]);
        if (o == me) {
            const int64_t row = nodes[i] - first;
            own_e += pick_neighbours(g, &s->cfg, fanout, row, dst_stream(key, h, pt->key_ids[row]), s->positions,
                                     picks, s->wscratch, s->own_buf + own_e);
        } else {
            s->rq_n[o]++;
        }
        s->own_off[i + 1] = own_e;
    }
    int64_t off = 0, remote = 0;
    for (int p = 0; p < P; p++) {
        s->rq_nodes[p] = flat_nodes + off;
        s->rq_pos[p] = flat_pos + off;
        s->rq_counts[p] = flat_counts + off;
        off += s->rq_n[p];
        remote += s->rq_n[p];
        s->rq_n[p] = 0; /* refilled below */
    }
    for (int64_t i = 0; i < n_dst; i++) {
        const int o = sampler_part_owner(pt, nodes[i]);
        if (o == me) continue;
        s->rq_nodes[o][s->rq_n[o]] = nodes[i];
        s->rq_pos[o][s->rq_n[o]++] = i;
    }
    if (remote > 0) {
        sampler_remote_hop rq = {.hop = h,
                                 .key = key,
                                 .fanout = fanout,
                                 .replace = s->cfg.replace,
                                 .num_parts = P,
                                 .n = s->rq_n,
                                 .nodes = s->rq_nodes,
                                 .counts = s->rq_counts,
                                 .nbrs = s->rq_nbrs,
                                 .nbr_cap = s->rq_cap};
        if (pt->pick_remote(pt->ctx, &rq, err) != 0) return -1;
    }
    /* merge in dst order: own picks from own_buf, the others from each part's reply in turn */
    int64_t cursor_node[64], cursor_nbr[64];
    int64_t *cn = P <= 64 ? cursor_node : calloc((size_t)P, sizeof(int64_t));
    int64_t *cb = P <= 64 ? cursor_nbr : calloc((size_t)P, sizeof(int64_t));
    if (!cn || !cb) {
        if (cn != cursor_node) free(cn);
        if (cb != cursor_nbr) free(cb);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory merging sampled neighbours");
    }
    for (int p = 0; p < P; p++) cn[p] = cb[p] = 0;
    int64_t e = 0, rc = 0;
    b->indptr[0] = 0;
    for (int64_t i = 0; i < n_dst && rc == 0; i++) {
        const int o = sampler_part_owner(pt, nodes[i]);
        const int64_t *src;
        int64_t k;
        if (o == me) {
            src = s->own_buf + s->own_off[i];
            k = s->own_off[i + 1] - s->own_off[i];
        } else {
            k = s->rq_counts[o][cn[o]++];
            if (k < 0 || k > most || cb[o] + k > s->rq_cap[o] || e + k > edge_cap) {
                rc = err_set(err, CGNN_ERR_INPUT,
                             "part %d answered %lld neighbours of node %lld in hop %d (at most %lld allowed)", o,
                             (long long)k, (long long)nodes[i], h, (long long)most);
                break;
            }
            src = s->rq_nbrs[o] + cb[o];
            cb[o] += k;
            for (int64_t j = 0; j < k; j++)
                if (src[j] < 0 || src[j] >= pt->num_nodes) {
                    rc = err_set(err, CGNN_ERR_INPUT, "part %d answered neighbour id %lld, outside [0, %lld)", o,
                                 (long long)src[j], (long long)pt->num_nodes);
                    break;
                }
            if (rc) break;
        }
        memcpy(s->nbr_buf + e, src, (size_t)k * sizeof(int64_t));
        if (s->excl.n) k = pair_set_drop(&s->excl, nodes[i], s->nbr_buf + e, k);
        e += k;
        b->indptr[i + 1] = e;
    }
    if (cn != cursor_node) free(cn);
    if (cb != cursor_nbr) free(cb);
    return rc ? -1 : e;
}

int sampler_sample(neighbor_sampler *s, minibatch *mb, const int64_t *seeds, int64_t n, uint64_t key,
                   cgnn_err *err) {
    const csc_graph *g = s->g;
    const int L = s->cfg.num_layers;
    CGNN_CHECK(n <= s->cap.max_items && mb->cap.max_items >= n && mb->num_layers == L);
    int64_t *nodes = mb->input_nodes;
    int64_t n_cur = 0;
    for (int64_t i = 0; i < n; i++) mb->item_local[i] = (int32_t)relabel(s, seeds[i], nodes, &n_cur);
    mb->num_items = n;
    mb->num_seeds = n_cur;
    uint32_t picks[FLOYD_MAX_K + 1];
    int64_t total_edges = 0;
    int rc = 0;
    for (int h = 0; h < L; h++) {
        sampler_block *b = &mb->blocks[L - 1 - h];
        const int64_t fanout = s->cfg.fanouts[h];
        const int64_t n_dst = n_cur;
        int64_t e = 0;
        b->indptr[0] = 0;
        /* pass 1: pick */
        if (s->part) {
            e = pick_hop_part(s, b, nodes, n_dst, h, key, err);
            if (e < 0) {
                rc = -1;
                break;
            }
        } else {
            for (int64_t i = 0; i < n_dst; i++) {
                if (i + PREFETCH_DIST < n_dst) __builtin_prefetch(&g->indptr[nodes[i + PREFETCH_DIST]]);
                int64_t k = pick_neighbours(g, &s->cfg, fanout, nodes[i], dst_stream(key, h, nodes[i]),
                                            s->positions, picks, s->wscratch, s->nbr_buf + e);
                if (s->excl.n) k = pair_set_drop(&s->excl, nodes[i], s->nbr_buf + e, k);
                e += k;
                b->indptr[i + 1] = e;
            }
        }
        /* pass 2: relabel */
        const int64_t *buf = s->nbr_buf;
        for (int64_t j = 0; j < e; j++) {
            if (j + PREFETCH_DIST < e) __builtin_prefetch(&s->table[hash_slot(s, buf[j + PREFETCH_DIST])]);
            b->indices[j] = (int32_t)relabel(s, buf[j], nodes, &n_cur);
        }
        b->num_dst = n_dst;
        b->num_src = n_cur;
        b->num_edges = e;
        total_edges += e;
    }
    mb->num_input_nodes = n_cur;
    mb->num_sampled_edges = total_edges;
    /* clear the hash table for the next batch: only the slots we used */
    for (int64_t l = 0; l < n_cur; l++) s->table[s->slot_of[l]].key = -1;
    pair_set_clear(&s->excl);
    return rc;
}

/* ---- reference ---------------------------------------------------------------- */

static int64_t ref_find(const int64_t *nodes, int64_t n, int64_t v) {
    for (int64_t i = 0; i < n; i++)
        if (nodes[i] == v) return i;
    return -1;
}

void sampler_sample_ref(const csc_graph *g, const sampler_config *cfg, minibatch *mb,
                        const int64_t *seeds, int64_t n, uint64_t key) {
    sampler_sample_ref_excluding(g, cfg, mb, seeds, n, key, NULL, 0);
}

void sampler_sample_ref_excluding(const csc_graph *g, const sampler_config *cfg, minibatch *mb,
                                  const int64_t *seeds, int64_t n, uint64_t key, const int64_t *pairs,
                                  int64_t n_pairs) {
    const int L = cfg->num_layers;
    int64_t *nodes = mb->input_nodes;
    int64_t n_cur = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t l = ref_find(nodes, n_cur, seeds[i]);
        if (l < 0) {
            nodes[n_cur] = seeds[i];
            l = n_cur++;
        }
        mb->item_local[i] = (int32_t)l;
    }
    mb->num_items = n;
    mb->num_seeds = n_cur;
    int64_t maxdeg = 0, maxpick = 0;
    for (int64_t v = 0; v < g->num_nodes; v++)
        if (csc_degree(g, v) > maxdeg) maxdeg = csc_degree(g, v);
    for (int h = 0; h < L; h++)
        if (cfg->fanouts[h] > maxpick) maxpick = cfg->fanouts[h];
    if (maxdeg > maxpick) maxpick = maxdeg; /* with replacement a node takes fanout picks */
    uint32_t *scratch = cgnn_malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    uint32_t *picks = cgnn_malloc((size_t)(maxpick + 1) * sizeof(uint32_t));
    double *keys = cfg->weights ? cgnn_malloc((size_t)(maxdeg + 1) * sizeof(double)) : NULL;
    int64_t total = 0;
    for (int h = 0; h < L; h++) {
        sampler_block *b = &mb->blocks[L - 1 - h];
        const int64_t fanout = cfg->fanouts[h], n_dst = n_cur;
        int64_t e = 0;
        b->indptr[0] = 0;
        for (int64_t i = 0; i < n_dst; i++) {
            int64_t v = nodes[i], beg = g->indptr[v], d = csc_degree(g, v);
            rng r;
            rng_init(&r, dst_stream(key, h, v));
            const int64_t k = cfg->weights ? pick_positions_weighted_ref(&r, cfg->weights + beg, d, fanout, cfg->replace,
                                                                         keys, picks)
                                           : pick_positions_ref(&r, d, fanout, cfg->replace, scratch, picks);
            for (int64_t j = 0; j < k; j++) {
                int64_t u = csc_index(g, beg + picks[j]);
                if (ref_pair_listed(pairs, n_pairs, u, v)) continue;
                int64_t l = ref_find(nodes, n_cur, u);
                if (l < 0) {
                    nodes[n_cur] = u;
                    l = n_cur++;
                }
                b->indices[e++] = (int32_t)l;
            }
            b->indptr[i + 1] = e;
        }
        b->num_dst = n_dst;
        b->num_src = n_cur;
        b->num_edges = e;
        total += e;
    }
    mb->num_input_nodes = n_cur;
    mb->num_sampled_edges = total;
    free(scratch);
    free(picks);
    free(keys);
}
