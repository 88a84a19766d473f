/* loader.c — worker threads filling the in-order prefetch queue; see loader.h. */
#include "sample/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/gather.h"
#include "util/trace.h"
#include "util/rng.h"
#include "util/timer.h"

/* Seeds per batch the minibatches must hold. */
int64_t loader_max_seeds(const loader *l) {
    return l->cfg.pairs ? 2 * l->max_pairs + l->max_listed + l->cfg.num_negatives : l->cfg.batch_size;
}

int64_t loader_max_pairs(const loader *l) { return l->max_pairs; }

int64_t loader_num_items(const loader *l) {
    return l->anchor_ptr ? l->anchor_ptr[l->num_anchors] : l->items.num_items;
}

int64_t loader_num_batch_items(const loader *l) { return l->items.num_items; }

/* The pair items of batch b: the item sampler's own (pairs), or the positives of its anchors
 * expanded into w->items_scratch (anchor batching). Returns their count. */
static int64_t batch_pair_items(const loader *l, int64_t b, loader_worker *w, const int64_t **items) {
    const int64_t *anchors;
    const int64_t na = item_sampler_batch(&l->items, b, &anchors);
    if (!l->anchor_ptr) {
        *items = anchors;
        return na;
    }
    int64_t n = 0;
    for (int64_t i = 0; i < na; i++)
        for (int64_t k = l->anchor_ptr[anchors[i]]; k < l->anchor_ptr[anchors[i] + 1]; k++)
            w->items_scratch[n++] = l->anchor_items[k];
    CGNN_CHECK(n <= l->max_pairs);
    *items = w->items_scratch;
    return n;
}

/* Listed negatives a group contributes: all, or the first max_labels_per_anchor with anchor
 * batching (GiGL caps the negative labels of an anchor as its positives). */
static int64_t group_len(const loader *l, int64_t g) {
    int64_t len = l->group_ptr[g + 1] - l->group_ptr[g];
    if (l->cfg.anchor_batches && l->cfg.max_labels_per_anchor > 0 && len > l->cfg.max_labels_per_anchor)
        len = l->cfg.max_labels_per_anchor;
    return len;
}

int64_t loader_max_negatives(const loader *l) { return l->cfg.pairs ? l->max_listed + l->cfg.num_negatives : 0; }

/* Appends the listed negatives of the batch's groups (each group once, in order of first
 * appearance) to out and sets mb->listed_off / listed_len per pair. Returns their count. The
 * seen-group search is linear in the groups so far: at most batch_size^2 / 2 comparisons of
 * int64, small next to sampling the batch. */
static int64_t list_negatives(const loader *l, const int64_t *items, int64_t n, minibatch *mb, int64_t *out,
                              int64_t *seen) {
    int64_t H = 0, num_seen = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t g = l->pos_group[items[i]];
        mb->listed_off[i] = H;
        mb->listed_len[i] = 0;
        if (g < 0) continue;
        int64_t j = 0;
        while (j < num_seen && seen[2 * j] != g) j++;
        const int64_t len = group_len(l, g);
        if (j < num_seen) {
            mb->listed_off[i] = seen[2 * j + 1];
        } else {
            seen[2 * num_seen] = g;
            seen[2 * num_seen + 1] = H;
            num_seen++;
            memcpy(out + H, l->group_nodes + l->group_ptr[g], (size_t)len * sizeof(int64_t));
            mb->listed_off[i] = H;
            H += len;
        }
        mb->listed_len[i] = len;
    }
    return H;
}

/* Marks batch b as not built (a partitioned graph's peer failed); loader_next reports it. */
static void produce_failed(loader *l, minibatch *mb, int64_t b, const cgnn_err *err) {
    mb->failed = 1;
    pthread_mutex_lock(&l->mu);
    if (!l->failed) {
        l->failed = 1;
        l->err = *err;
    }
    pthread_mutex_unlock(&l->mu);
    mb->epoch = l->items.epoch;
    mb->batch_index = b;
}

/* produce() on a typed graph: seeds as homogenised ids (node items, or LP pairs + listed + random
 * negatives), the typed sampler, each featured type's rows gathered. */
static void produce_typed(loader *l, int p, int64_t b, minibatch *mb, loader_worker *w) {
    const int64_t *items;
    int64_t *seeds = w->seeds_scratch;
    const int64_t n = batch_pair_items(l, b, w, &items);
    const uint64_t key = item_sampler_batch_key(&l->items, b);
    const typed_graph *g = l->cfg.typed;
    int64_t n_seeds = n, K = 0, H = 0;
    int st = l->cfg.seed_type, dt = st;
    if (l->cfg.pairs) {
        st = g->etype_src[l->cfg.pair_etype], dt = g->etype_dst[l->cfg.pair_etype];
        for (int64_t i = 0; i < n; i++) {
            const int64_t row = l->pos_rows ? l->pos_rows[items[i]] : items[i];
            mb->items[i] = row;
            seeds[i] = w->pairs_scratch[2 * i] = g->offset[st] + l->seeds[2 * row];
            seeds[n + i] = w->pairs_scratch[2 * i + 1] = g->offset[dt] + l->seeds[2 * row + 1];
        }
        if (l->pos_rows) { /* labelled pairs: the groups' listed negatives, per-type ids of d */
            H = list_negatives(l, items, n, mb, seeds + 2 * n, w->group_seen);
            for (int64_t k = 0; k < H; k++) seeds[2 * n + k] += g->offset[dt];
        } else {
            for (int64_t i = 0; i < n; i++) mb->listed_off[i] = mb->listed_len[i] = 0;
        }
        K = l->cfg.num_negatives; /* keyed as the homogeneous loader's: (epoch key, batch, rank) */
        rng r;
        rng_init(&r, rng_key(key ^ 0x4e45474154495645ULL, (uint64_t)(b * l->cfg.world_size + l->cfg.rank)));
        const int64_t *neg_map = l->cfg.type_new_of_orig[dt]; /* a part: original ids -> new ids */
        for (int64_t k = 0; k < K; k++) {
            const int64_t v = (int64_t)rng_below(&r, (uint64_t)g->num_nodes[dt]);
            seeds[2 * n + H + k] = g->offset[dt] + (neg_map ? neg_map[v] : v);
        }
        n_seeds = 2 * n + H + K;
        if (l->cfg.exclude_seed_edges && !l->cfg.remote) typed_sampler_exclude_edges(&l->tsamplers[p], w->pairs_scratch, n);
    } else {
        const int64_t off = g->offset[st];
        for (int64_t i = 0; i < n; i++) {
            mb->items[i] = items[i];
            seeds[i] = off + l->seeds[items[i]];
            if (l->labels) mb->labels[i] = l->labels[items[i]];
        }
    }
    const double t0 = timer_now();
    cgnn_err err = {0};
    if (l->cfg.remote) { /* a storage rank samples and gathers (rows converted and normalised) */
        int want = 0;
        for (int t = 0; t < g->num_node_types; t++) want |= l->cfg.type_feature[t] != NULL;
        const loader_remote_batch rq = {.batch = b,
                                        .key = key,
                                        .normalize_rows = l->cfg.normalize_rows,
                                        .feat_dim = want,
                                        .seeds = seeds,
                                        .n_seeds = n_seeds,
                                        .pairs = l->cfg.pairs && l->cfg.exclude_seed_edges ? w->pairs_scratch : NULL,
                                        .n_pairs = l->cfg.pairs && l->cfg.exclude_seed_edges ? n : 0,
                                        .typed = &l->cfg.typed_sampler,
                                        .num_edge_types = g->num_edge_types};
        if (l->cfg.remote->build(l->cfg.remote->ctx, &rq, mb, &err) != 0) {
            produce_failed(l, mb, b, &err);
            return;
        }
    } else if (l->cfg.typed_part) {
        if (typed_sampler_sample_part(&l->tsamplers[p], mb, seeds, n_seeds, key, &err) != 0) {
            produce_failed(l, mb, b, &err);
            return;
        }
    } else {
        typed_sampler_sample(&l->tsamplers[p], mb, seeds, n_seeds, key);
    }
    mb->failed = 0;
    mb->num_items = n;
    mb->num_negatives = K;
    mb->num_listed = H;
    minibatch_typed *ty = mb->typed;
    if (l->cfg.pairs) { /* rows: type st's seeds, then type dt's */
        const int64_t shift = st != dt ? ty->num_nodes[st][0] : 0;
        for (int64_t i = n; i < n_seeds; i++) mb->item_local[i] += (int32_t)shift;
    }
    minibatch_build_transpose(mb);
    const double t1 = timer_now();
    const int gthreads = l->cfg.gather_threads > 0 ? l->cfg.gather_threads : 1;
    const int T = ty->num_node_types, L = ty->num_layers;
    if (l->cfg.typed_feat_part) { /* own rows locally, the others in one request per owner */
        const int64_t *ids[MINIBATCH_MAX_NODE_TYPES];
        int64_t rows[MINIBATCH_MAX_NODE_TYPES];
        for (int t = 0; t < T; t++) {
            ids[t] = ty->nodes[t];
            rows[t] = ty->num_nodes[t][L];
        }
        if (gather_typed_rows_part(ty->features, ty->feat_dim, l->cfg.type_feature, l->cfg.typed_feat_part, &w->tgather,
                                   ids, rows, gthreads, &err) != 0) {
            produce_failed(l, mb, b, &err);
            return;
        }
    }
    for (int t = 0; t < T; t++) {
        const ds_feature *f = l->cfg.type_feature[t];
        const int64_t rows = ty->num_nodes[t][L];
        if (!f || rows == 0 || l->cfg.remote) continue; /* remote: converted and normalised by the decoder */
        if (!l->cfg.typed_feat_part) gather_rows_strided(ty->features[t], ty->feat_dim[t], f, ty->nodes[t], rows, gthreads);
        if (l->cfg.normalize_rows) gather_normalize_rows_strided(ty->features[t], rows, f->dim, ty->feat_dim[t]);
    }
    if (l->cfg.typed_part || l->cfg.remote) /* a part's new ids back to the original per-type ids: the replicated batch */
        for (int t = 0; t < T; t++) {
            const int64_t *orig = l->cfg.type_orig_of_new[t];
            for (int64_t i = 0; i < ty->num_nodes[t][L]; i++) ty->nodes[t][i] = orig[ty->nodes[t][i]];
        }
    if (l->cfg.pairs) { /* the seed rows' homogenised ids */
        const int64_t ns = ty->num_nodes[st][0];
        for (int64_t r = 0; r < ns; r++) mb->input_nodes[r] = g->offset[st] + ty->nodes[st][r];
        for (int64_t r = 0; st != dt && r < ty->num_nodes[dt][0]; r++) mb->input_nodes[ns + r] = g->offset[dt] + ty->nodes[dt][r];
        mb->num_seeds = ns + (st != dt ? ty->num_nodes[dt][0] : 0);
    }
    const double t2 = timer_now();
    if (l->cfg.trace && trace_active(l->cfg.trace)) {
        const int tid = l->cfg.num_workers > 0 ? l->cfg.trace_tid_base + p : 0;
        trace_span(l->cfg.trace, "sample", tid, t0, t1, b, mb->num_sampled_edges);
        trace_span(l->cfg.trace, "gather", tid, t1, t2, b, mb->num_input_nodes);
    }
    mb->epoch = l->items.epoch;
    mb->batch_index = b;
    mb->sample_seconds = t1 - t0;
    mb->gather_seconds = t2 - t1;
}

/* produce() in server-client mode: the seed list goes to a storage rank, which answers with the
 * sampled blocks and the gathered features (loader_remote); the rest as produce(). */
static void produce_remote(loader *l, int64_t b, minibatch *mb, loader_worker *w, const int64_t *seeds, int64_t n_seeds,
                           int64_t n, int64_t K, int64_t H, uint64_t key) {
    const loader_remote_batch rq = {.batch = b,
                                    .key = key,
                                    .sampler = &l->cfg.sampler,
                                    .normalize_rows = l->cfg.normalize_rows,
                                    .feat_dim = l->cfg.feature ? l->cfg.feature->dim : 0,
                                    .seeds = seeds,
                                    .n_seeds = n_seeds,
                                    .pairs = l->cfg.pairs && l->cfg.exclude_seed_edges ? w->pairs_scratch : NULL,
                                    .n_pairs = l->cfg.pairs && l->cfg.exclude_seed_edges ? n : 0};
    const double t0 = timer_now();
    cgnn_err err = {0};
    if (l->cfg.remote->build(l->cfg.remote->ctx, &rq, mb, &err) != 0) {
        produce_failed(l, mb, b, &err);
        return;
    }
    mb->failed = 0;
    mb->num_items = n;
    mb->num_negatives = K;
    mb->num_listed = H;
    minibatch_build_transpose(mb);
    if (l->cfg.trace && trace_active(l->cfg.trace)) { /* one span: the round trip to the storage rank */
        const int tid = l->cfg.num_workers > 0 ? l->cfg.trace_tid_base + w->index : 0;
        trace_span(l->cfg.trace, "remote batch", tid, t0, timer_now(), b, mb->num_input_nodes);
    }
    mb->epoch = l->items.epoch;
    mb->batch_index = b;
}

/* Builds batch b into slot `slot` with producer p's scratch. */
static void produce(loader *l, int p, int64_t b, int slot, loader_worker *w) {
    minibatch *mb = &l->slots[slot];
    if (l->cfg.typed) {
        produce_typed(l, p, b, mb, w);
        return;
    }
    const int64_t *items;
    int64_t *seeds = w->seeds_scratch;
    int64_t n = batch_pair_items(l, b, w, &items);
    const uint64_t key = item_sampler_batch_key(&l->items, b);
    int64_t n_seeds = n, K = 0, H = 0;
    if (l->cfg.pairs) {
        for (int64_t i = 0; i < n; i++) {
            const int64_t row = l->pos_rows ? l->pos_rows[items[i]] : items[i];
            mb->items[i] = row;
            seeds[i] = w->pairs_scratch[2 * i] = l->seeds[2 * row];
            seeds[n + i] = w->pairs_scratch[2 * i + 1] = l->seeds[2 * row + 1];
        }
        if (l->pos_rows) {
            H = list_negatives(l, items, n, mb, seeds + 2 * n, w->group_seen);
        } else {
            for (int64_t i = 0; i < n; i++) mb->listed_off[i] = mb->listed_len[i] = 0;
        }
        /* negatives: one stream per (epoch key, batch position in the whole epoch), so they
         * differ between batches and ranks and never depend on threads */
        K = l->cfg.num_negatives;
        rng r;
        rng_init(&r, rng_key(key ^ 0x4e45474154495645ULL, (uint64_t)(b * l->cfg.world_size + l->cfg.rank)));
        const int64_t N = l->cfg.part     ? l->cfg.part->num_nodes
                          : l->cfg.remote ? l->cfg.remote->num_nodes
                                          : l->g->num_nodes;
        const int64_t lo = l->cfg.neg_hi > 0 ? l->cfg.neg_lo : 0, span = l->cfg.neg_hi > 0 ? l->cfg.neg_hi - lo : N;
        for (int64_t k = 0; k < K; k++) {
            const int64_t v = lo + (int64_t)rng_below(&r, (uint64_t)span);
            seeds[2 * n + H + k] = l->cfg.neg_map ? l->cfg.neg_map[v] : v;
        }
        n_seeds = 2 * n + H + K;
        if (l->cfg.exclude_seed_edges && !l->cfg.remote) sampler_exclude_edges(&l->samplers[p], w->pairs_scratch, n);
    } else {
        for (int64_t i = 0; i < n; i++) {
            mb->items[i] = items[i];
            seeds[i] = l->seeds[items[i]];
            if (l->labels) mb->labels[i] = l->labels[items[i]];
        }
    }
    if (l->cfg.remote) {
        produce_remote(l, b, mb, w, seeds, n_seeds, n, K, H, key);
        return;
    }
    double t0 = timer_now();
    cgnn_err err = {0};
    if (sampler_sample(&l->samplers[p], mb, seeds, n_seeds, key, &err) != 0) {
        produce_failed(l, mb, b, &err);
        return;
    }
    mb->failed = 0;
    mb->num_items = n;
    mb->num_negatives = K;
    mb->num_listed = H;
    minibatch_build_transpose(mb);
    double t1 = timer_now();
    const int64_t stride = mb->feat_dim;
    const int gthreads = l->cfg.gather_threads > 0 ? l->cfg.gather_threads : 1;
    if (l->cfg.feature && l->cfg.feat_part) {
        if (gather_rows_part(mb->features, stride, l->cfg.feature, l->cfg.feat_part, &w->gather, mb->input_nodes,
                             mb->num_input_nodes, gthreads, &err) != 0) {
            produce_failed(l, mb, b, &err);
            return;
        }
    } else if (l->cfg.feature) {
        gather_rows_strided(mb->features, stride, l->cfg.feature, mb->input_nodes, mb->num_input_nodes, gthreads);
    }
    if (l->cfg.feature && l->cfg.normalize_rows)
        gather_normalize_rows_strided(mb->features, mb->num_input_nodes, l->cfg.feature->dim, stride);
    double t2 = timer_now();
    if (l->cfg.trace && trace_active(l->cfg.trace)) {
        const int tid = l->cfg.num_workers > 0 ? l->cfg.trace_tid_base + p : 0; /* 0: the main thread */
        trace_span(l->cfg.trace, "sample", tid, t0, t1, b, mb->num_sampled_edges);
        trace_span(l->cfg.trace, "gather", tid, t1, t2, b, mb->num_input_nodes);
    }
    mb->epoch = l->items.epoch;
    mb->batch_index = b;
    mb->sample_seconds = t1 - t0;
    mb->gather_seconds = t2 - t1;
}

int loader_slot_of(const loader *l, int64_t b) { return (int)((l->slot_base + b) % l->queue_depth); }

static void *worker_main(void *arg) {
    loader_worker *w = arg;
    loader *l = w->l;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->stop && !(l->active && l->next_claim < l->batches &&
                             l->state[loader_slot_of(l, l->next_claim)] == LOADER_SLOT_FREE))
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->stop) break;
        int64_t b = l->next_claim++;
        int slot = loader_slot_of(l, b);
        l->state[slot] = LOADER_SLOT_FILLING;
        l->in_flight++;
        pthread_mutex_unlock(&l->mu);
        produce(l, w->index, b, slot, w);
        pthread_mutex_lock(&l->mu);
        l->state[slot] = LOADER_SLOT_READY;
        l->built++;
        l->in_flight--;
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

typedef struct keyed_row {
    int64_t key, row;
} keyed_row;

static int keyed_row_cmp(const void *a, const void *b) {
    const keyed_row *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_desc(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

static void anchor_mismatch(cgnn_err *err, int64_t row_a, int64_t row_b, int64_t index, int64_t anchor_a,
                            int64_t anchor_b) {
    err_set(err, CGNN_ERR_INPUT, "indexes: rows %lld and %lld share index %lld but have different anchors (%lld, %lld)",
            (long long)row_a, (long long)row_b, (long long)index, (long long)anchor_a, (long long)anchor_b);
}

/* Labelled pairs: splits rows into positive items and grouped listed negatives (loader.h).
 * Sets l->pos_rows, pos_group, group_ptr, group_nodes, num_groups; returns the number
 * of positives, or -1 with *err (nothing left allocated). */
static int64_t setup_labelled_pairs(loader *l, const int64_t *seeds, const int64_t *labels, const int64_t *indexes,
                                    int64_t num_rows, cgnn_err *err) {
    int64_t num_pos = 0, num_neg = 0;
    for (int64_t r = 0; r < num_rows; r++) {
        if (labels[r] != 0 && labels[r] != 1)
            return err_set(err, CGNN_ERR_INPUT,
                           "labels: row %lld: value %lld (link-prediction labels are 1 for a positive pair, 0 "
                           "for a listed negative)",
                           (long long)r, (long long)labels[r]);
        num_pos += labels[r] == 1;
    }
    num_neg = num_rows - num_pos;
    keyed_row *neg = cgnn_malloc((size_t)(num_neg + 1) * sizeof(keyed_row));
    int64_t k = 0;
    for (int64_t r = 0; r < num_rows; r++)
        if (labels[r] == 0) neg[k++] = (keyed_row){indexes ? indexes[r] : seeds[2 * r], r};
    qsort(neg, (size_t)num_neg, sizeof(keyed_row), keyed_row_cmp);
    int64_t G = 0;
    for (int64_t j = 0; j < num_neg; j++) G += j == 0 || neg[j].key != neg[j - 1].key;
    int64_t *keys = cgnn_malloc((size_t)(G + 1) * sizeof(int64_t));
    int64_t *anchor = cgnn_malloc((size_t)(G + 1) * sizeof(int64_t));
    l->group_ptr = cgnn_malloc((size_t)(G + 1) * sizeof(int64_t));
    l->group_nodes = cgnn_malloc((size_t)(num_neg + 1) * sizeof(int64_t));
    l->pos_rows = cgnn_malloc((size_t)(num_pos + 1) * sizeof(int64_t));
    l->pos_group = cgnn_malloc((size_t)(num_pos + 1) * sizeof(int64_t));
    int64_t g = -1;
    for (int64_t j = 0; j < num_neg; j++) {
        const int64_t r = neg[j].row;
        if (j == 0 || neg[j].key != neg[j - 1].key) {
            g++;
            keys[g] = neg[j].key;
            anchor[g] = seeds[2 * r];
            l->group_ptr[g] = j;
        } else if (seeds[2 * r] != anchor[g]) {
            anchor_mismatch(err, neg[l->group_ptr[g]].row, r, keys[g], anchor[g], seeds[2 * r]);
            goto fail;
        }
        l->group_nodes[j] = seeds[2 * r + 1];
    }
    l->group_ptr[G] = num_neg;
    k = 0;
    for (int64_t r = 0; r < num_rows; r++) {
        if (labels[r] != 1) continue;
        const int64_t key = indexes ? indexes[r] : seeds[2 * r];
        int64_t lo = 0, hi = G; /* first group key >= key */
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (keys[mid] < key) lo = mid + 1;
            else hi = mid;
        }
        const int64_t pg = lo < G && keys[lo] == key ? lo : -1;
        if (pg >= 0 && anchor[pg] != seeds[2 * r]) {
            anchor_mismatch(err, neg[l->group_ptr[pg]].row, r, key, anchor[pg], seeds[2 * r]);
            goto fail;
        }
        l->pos_rows[k] = r;
        l->pos_group[k++] = pg;
    }
    l->num_groups = G; /* max_listed: set_max_listed, once the batches' pair count is known */
    free(neg);
    free(keys);
    free(anchor);
    return num_pos;
fail:
    free(neg);
    free(keys);
    free(anchor);
    free(l->group_ptr);
    free(l->group_nodes);
    free(l->pos_rows);
    free(l->pos_group);
    l->group_ptr = l->group_nodes = l->pos_rows = l->pos_group = NULL;
    return -1;
}

/* The sum of the k largest of sizes[0..n) (sorted in place, descending). */
static int64_t sum_largest(int64_t *sizes, int64_t n, int64_t k) {
    qsort(sizes, (size_t)n, sizeof(int64_t), cmp_desc);
    int64_t sum = 0;
    for (int64_t j = 0; j < n && j < k; j++) sum += sizes[j];
    return sum;
}

/* Labelled pairs: a batch lists at most max_pairs distinct groups: l->max_listed is bounded by
 * the largest ones (capped as group_len). */
static void set_max_listed(loader *l) {
    const int64_t G = l->num_groups;
    int64_t *sizes = cgnn_malloc((size_t)(G + 1) * sizeof(int64_t));
    for (int64_t j = 0; j < G; j++) sizes[j] = group_len(l, j);
    l->max_listed = sum_largest(sizes, G, l->max_pairs);
    free(sizes);
}

/* Anchor batching: groups the num_pos pair items by anchor (ascending anchor id, each anchor's
 * items in row order, the first max_labels_per_anchor kept) into anchor_ptr / anchor_items and
 * sets num_anchors and max_pairs. */
static void setup_anchors(loader *l, int64_t num_pos) {
    keyed_row *kr = cgnn_malloc((size_t)(num_pos + 1) * sizeof(keyed_row));
    for (int64_t k = 0; k < num_pos; k++) {
        const int64_t row = l->pos_rows ? l->pos_rows[k] : k;
        kr[k] = (keyed_row){l->seeds[2 * row], k};
    }
    qsort(kr, (size_t)num_pos, sizeof(keyed_row), keyed_row_cmp);
    int64_t A = 0;
    for (int64_t j = 0; j < num_pos; j++) A += j == 0 || kr[j].key != kr[j - 1].key;
    const int64_t cap = l->cfg.max_labels_per_anchor;
    l->num_anchors = A;
    l->anchor_ptr = cgnn_malloc((size_t)(A + 1) * sizeof(int64_t));
    l->anchor_items = cgnn_malloc((size_t)(num_pos + 1) * sizeof(int64_t));
    int64_t *sizes = cgnn_malloc((size_t)(A + 1) * sizeof(int64_t));
    int64_t a = -1, n = 0, in_anchor = 0;
    for (int64_t j = 0; j < num_pos; j++) {
        if (j == 0 || kr[j].key != kr[j - 1].key) {
            l->anchor_ptr[++a] = n;
            in_anchor = 0;
        }
        if (cap > 0 && in_anchor >= cap) continue; /* kr is in row order within an anchor */
        l->anchor_items[n++] = kr[j].row;
        in_anchor++;
    }
    l->anchor_ptr[A] = n;
    for (int64_t i = 0; i < A; i++) sizes[i] = l->anchor_ptr[i + 1] - l->anchor_ptr[i];
    l->max_pairs = sum_largest(sizes, A, l->cfg.batch_size);
    free(sizes);
    free(kr);
}

/* loader_typed_capacity with up to `pairs` pairs and `listed` listed negatives per batch. */
static void typed_capacity(const loader_config *cfg, int64_t pairs, int64_t listed, minibatch_typed_capacity *tcap) {
    int64_t max_seeds[MINIBATCH_MAX_NODE_TYPES] = {0};
    if (cfg->pairs) { /* anchors of the src type; positives and negatives of the dst type */
        max_seeds[cfg->typed->etype_src[cfg->pair_etype]] += pairs;
        max_seeds[cfg->typed->etype_dst[cfg->pair_etype]] += pairs + listed + cfg->num_negatives;
    } else {
        max_seeds[cfg->seed_type] = cfg->batch_size;
    }
    typed_sampler_capacity(cfg->typed, &cfg->typed_sampler, max_seeds, cfg->type_width, tcap);
}

void loader_typed_capacity(const loader_config *cfg, minibatch_typed_capacity *tcap) {
    CGNN_CHECK(!cfg->anchor_batches); /* its batch sizes depend on the split: loader_batch_typed_capacity */
    typed_capacity(cfg, cfg->batch_size, 0, tcap);
}

void loader_batch_typed_capacity(const loader *l, minibatch_typed_capacity *tcap) {
    typed_capacity(&l->cfg, l->max_pairs, l->max_listed, tcap);
}

int loader_init(loader *l, const csc_graph *g, const int64_t *seeds, const int64_t *labels,
                int64_t num_items, const loader_config *cfg, cgnn_err *err) {
    memset(l, 0, sizeof *l);
    if (cfg->remote && (cfg->part || g || cfg->typed_part || cfg->typed_feat_part))
        return err_set(err, CGNN_ERR_INPUT, "a remote-batch loader (server-client mode) takes no graph of its own "
                                            "(a typed graph's shape only)");
    if (cfg->typed) {
        if (cfg->part || cfg->feat_part)
            return err_set(err, CGNN_ERR_INPUT, "typed graphs: a typed part is sampled through typed_part");
        if ((cfg->typed_part || cfg->remote) && cfg->pairs && labels)
            return err_set(err, CGNN_ERR_INPUT,
                           "typed graphs on parts: labelled link-prediction pairs are not supported yet");
        CGNN_CHECK(!(cfg->typed_part || cfg->remote) == !cfg->typed->parted && (!cfg->typed_feat_part || cfg->typed_part));
        if (cfg->seed_type < 0 || cfg->seed_type >= cfg->typed->num_node_types ||
            (cfg->pairs && (cfg->pair_etype < 0 || cfg->pair_etype >= cfg->typed->num_edge_types)))
            return err_set(err, CGNN_ERR_INPUT, "typed loader: seed type %d / pair edge type %d out of range",
                           cfg->seed_type, cfg->pair_etype);
        if (cfg->pairs && cfg->num_negatives < 0)
            return err_set(err, CGNN_ERR_INPUT, "link prediction needs num_negatives >= 0");
        for (int t = 0; t < cfg->typed->num_node_types; t++)
            if (cfg->type_feature[t] && cfg->type_feature[t]->dim > cfg->type_width[t])
                return err_set(err, CGNN_ERR_INPUT, "typed loader: type %d rows narrower than its features", t);
    } else if (sampler_config_check(&cfg->sampler, err) != 0) return -1;
    if (cfg->batch_size < 1) return err_set(err, CGNN_ERR_INPUT, "batch size must be >= 1, got %lld",
                                            (long long)cfg->batch_size);
    if (cfg->pairs && !cfg->typed &&
        (cfg->num_negatives < 0 || (cfg->remote ? cfg->remote->num_nodes : g->num_nodes) < 1))
        return err_set(err, CGNN_ERR_INPUT, "link prediction needs num_negatives >= 0 and a non-empty graph");
    if (cfg->neg_hi > 0) {
        const int64_t N = cfg->typed ? 0 : cfg->part ? cfg->part->num_nodes : cfg->remote ? cfg->remote->num_nodes : g->num_nodes;
        if (cfg->typed || !cfg->pairs || cfg->neg_lo < 0 || cfg->neg_lo >= cfg->neg_hi || cfg->neg_hi > N)
            return err_set(err, CGNN_ERR_INPUT,
                           "random negatives from the node range %lld:%lld: needs a homogeneous link-prediction "
                           "loader and 0 <= LO < HI <= %lld (the nodes)",
                           (long long)cfg->neg_lo, (long long)cfg->neg_hi, (long long)N);
    }
    l->g = g;
    l->cfg = *cfg;
    l->seeds = seeds;
    l->labels = labels;
    if (cfg->anchor_batches && (!cfg->pairs || cfg->max_labels_per_anchor < 0))
        return err_set(err, CGNN_ERR_INPUT, "anchor batching needs link-prediction pairs and a cap >= 0");
    if (cfg->pairs && labels) {
        const int64_t num_pos = setup_labelled_pairs(l, seeds, labels, cfg->indexes, num_items, err);
        if (num_pos < 0) return -1;
        num_items = num_pos;
    }
    l->max_pairs = cfg->batch_size;
    if (cfg->anchor_batches) {
        setup_anchors(l, num_items);
        num_items = l->num_anchors; /* the item sampler batches anchors */
    }
    if (l->pos_rows) set_max_listed(l);
    item_sampler_init(&l->items, num_items, cfg->batch_size, cfg->shuffle, cfg->drop_last, cfg->seed,
                      cfg->rank, cfg->world_size, cfg->drop_uneven);
    const int producers = cfg->num_workers > 0 ? cfg->num_workers : 1;
    l->queue_depth = cfg->queue_depth > 0 ? cfg->queue_depth : cfg->num_workers + 1;
    if (l->queue_depth < 2) l->queue_depth = 2;
    minibatch_capacity cap;
    minibatch_typed_capacity tcap;
    const int64_t width = (cfg->feature ? cfg->feature->dim : 0) + cfg->extra_cols;
    if (cfg->typed) {
        memset(&cap, 0, sizeof cap);
        cap.num_layers = cfg->typed_sampler.num_layers;
        cap.max_items = loader_max_seeds(l);
        typed_capacity(cfg, l->max_pairs, l->max_listed, &tcap);
    } else if (cfg->part)
        sampler_capacity_sized(cfg->part->num_nodes, cfg->part->num_edges, cfg->part->max_in_degree, &cfg->sampler,
                               loader_max_seeds(l), width, &cap);
    else if (cfg->remote)
        sampler_capacity_sized(cfg->remote->num_nodes, cfg->remote->num_edges, cfg->remote->max_in_degree,
                               &cfg->sampler, loader_max_seeds(l), width, &cap);
    else
        sampler_capacity(g, &cfg->sampler, loader_max_seeds(l), width, &cap);
    l->slots = cgnn_calloc((size_t)l->queue_depth, sizeof(minibatch));
    l->state = cgnn_calloc((size_t)l->queue_depth, sizeof(loader_slot_state));
    l->samplers = cgnn_calloc((size_t)producers, sizeof(neighbor_sampler));
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    if (cfg->typed) l->tsamplers = cgnn_calloc((size_t)producers, sizeof(typed_sampler));
    for (int q = 0; q < l->queue_depth; q++)
        if ((cfg->typed ? minibatch_alloc_typed(&l->slots[q], &cap, &tcap, cfg->typed->etype_src, cfg->typed->etype_dst, err)
                        : minibatch_alloc(&l->slots[q], &cap, err)) != 0)
            goto fail;
    for (int p = 0; p < producers && cfg->typed && !cfg->remote; p++)
        if ((cfg->typed_part ? typed_sampler_init_part(&l->tsamplers[p], cfg->typed, cfg->typed_part, &cfg->typed_sampler,
                                                       &tcap, err)
                             : typed_sampler_init(&l->tsamplers[p], cfg->typed, &cfg->typed_sampler, &tcap, err)) != 0)
            goto fail;
    for (int p = 0; p < producers && !cfg->typed && !cfg->remote; p++)
        if ((cfg->part ? sampler_init_part(&l->samplers[p], g, cfg->part, &cfg->sampler, &cap, err)
                       : sampler_init(&l->samplers[p], g, &cfg->sampler, &cap, err)) != 0)
            goto fail;
    l->workers_arg = cgnn_calloc((size_t)producers, sizeof(loader_worker));
    loader_worker *ws = l->workers_arg;
    for (int p = 0; p < producers; p++) {
        ws[p].l = l;
        ws[p].index = p;
        ws[p].seeds_scratch = cgnn_malloc((size_t)(loader_max_seeds(l) + 1) * sizeof(int64_t));
        ws[p].pairs_scratch = cfg->pairs ? cgnn_malloc((size_t)(2 * l->max_pairs + 1) * sizeof(int64_t)) : NULL;
        ws[p].group_seen = l->pos_rows ? cgnn_malloc((size_t)(2 * l->max_pairs + 1) * sizeof(int64_t)) : NULL;
        ws[p].items_scratch = l->anchor_ptr ? cgnn_malloc((size_t)(l->max_pairs + 1) * sizeof(int64_t)) : NULL;
        if (cfg->feat_part &&
            gather_part_scratch_init(&ws[p].gather, cfg->feat_part->num_parts, cap.max_nodes[cfg->sampler.num_layers],
                                     err) != 0)
            goto fail;
        if (cfg->typed_feat_part) { /* every type's input rows of one batch */
            int64_t rows = 0;
            for (int t = 0; t < tcap.num_node_types; t++) rows += tcap.max_nodes[t][cfg->typed_sampler.num_layers];
            if (gather_typed_scratch_init(&ws[p].tgather, cfg->typed_feat_part->num_parts, tcap.num_node_types, rows,
                                          err) != 0)
                goto fail;
        }
    }
    if (cfg->trace && cfg->num_workers > 0)
        for (int p = 0; p < producers; p++) {
            char name[TRACE_MAX_THREAD_NAME];
            snprintf(name, sizeof name, "%s sampler %d", cfg->trace_name ? cfg->trace_name : "loader", p);
            trace_name_thread(cfg->trace, cfg->trace_tid_base + p, name);
        }
    if (cfg->num_workers > 0) {
        l->threads = cgnn_calloc((size_t)cfg->num_workers, sizeof(pthread_t));
        for (int p = 0; p < cfg->num_workers; p++) {
            if (pthread_create(&l->threads[p], NULL, worker_main, &ws[p]) != 0) {
                err_set(err, CGNN_ERR_RUNTIME, "cannot start sampler thread %d", p);
                goto fail;
            }
            l->num_threads_started++;
        }
    }
    return 0;
fail:
    loader_free(l);
    return -1;
}

/* Abandons the current epoch: waits for batches being built, empties the queue. Holds mu. */
/* Stops producing; every slot the consumer does not hold is free again. */
static void quiesce_locked(loader *l) {
    l->active = 0;
    while (l->in_flight > 0) pthread_cond_wait(&l->cv, &l->mu);
    for (int q = 0; q < l->queue_depth; q++)
        if (l->state[q] != LOADER_SLOT_HELD) l->state[q] = LOADER_SLOT_FREE;
}

void loader_start_epoch(loader *l, int epoch, int64_t max_batches) { loader_start_epoch_at(l, epoch, 0, max_batches); }

void loader_start_epoch_at(loader *l, int epoch, int64_t first_batch, int64_t max_batches) {
    CGNN_CHECK(first_batch >= 0);
    pthread_mutex_lock(&l->mu);
    quiesce_locked(l);
    /* the new epoch's first batch takes the slot after the last one handed out, so the batches the
     * consumer still holds (the previous epoch's last) are the last to be reused */
    l->slot_base = (l->slot_base + l->next_consume) % l->queue_depth;
    item_sampler_set_epoch(&l->items, epoch);
    l->batches = l->items.num_batches;
    if (max_batches > 0 && max_batches < l->batches) l->batches = max_batches;
    /* batches before first_batch are never built: each batch depends on (seed, epoch, b) only */
    l->next_claim = l->next_consume = first_batch;
    l->active = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

int64_t loader_num_batches(const loader *l) { return l->batches; }

int64_t loader_batches_built(loader *l) {
    pthread_mutex_lock(&l->mu);
    const int64_t n = l->built;
    pthread_mutex_unlock(&l->mu);
    return n;
}

minibatch *loader_next(loader *l) {
    if (l->next_consume >= l->batches) return NULL;
    const int64_t b = l->next_consume;
    const int slot = loader_slot_of(l, b);
    if (l->cfg.num_workers == 0) {
        CGNN_CHECK(l->state[slot] == LOADER_SLOT_FREE); /* the consumer does not hold it */
        loader_worker *w = l->workers_arg;
        produce(l, 0, b, slot, &w[0]);
        l->state[slot] = LOADER_SLOT_HELD;
        l->built++;
        l->next_claim = b + 1;
    } else {
        pthread_mutex_lock(&l->mu);
        while (!(l->state[slot] == LOADER_SLOT_READY && l->slots[slot].batch_index == b &&
                 l->next_claim > b))
            pthread_cond_wait(&l->cv, &l->mu);
        l->state[slot] = LOADER_SLOT_HELD;
        pthread_mutex_unlock(&l->mu);
    }
    l->next_consume = b + 1;
    if (l->slots[slot].failed) {
        l->next_consume = l->batches; /* the epoch ends here; loader_failed says why */
        loader_release(l, &l->slots[slot]);
        return NULL;
    }
    return &l->slots[slot];
}

int loader_failed(loader *l, cgnn_err *err) {
    pthread_mutex_lock(&l->mu);
    int failed = l->failed;
    if (failed && err) *err = l->err;
    pthread_mutex_unlock(&l->mu);
    return failed;
}

void loader_release(loader *l, minibatch *mb) {
    int slot = (int)(mb - l->slots);
    CGNN_CHECK(slot >= 0 && slot < l->queue_depth);
    pthread_mutex_lock(&l->mu);
    l->state[slot] = LOADER_SLOT_FREE;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void loader_free(loader *l) {
    if (!l || !l->slots) return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (int p = 0; p < l->num_threads_started; p++) pthread_join(l->threads[p], NULL);
    const int producers = l->cfg.num_workers > 0 ? l->cfg.num_workers : 1;
    loader_worker *ws = l->workers_arg;
    for (int p = 0; p < producers; p++) {
        sampler_free(&l->samplers[p]);
        if (l->tsamplers) typed_sampler_free(&l->tsamplers[p]);
        if (ws) {
            free(ws[p].seeds_scratch);
            free(ws[p].pairs_scratch);
            free(ws[p].group_seen);
            free(ws[p].items_scratch);
            gather_part_scratch_free(&ws[p].gather);
            gather_typed_scratch_free(&ws[p].tgather);
        }
    }
    for (int q = 0; q < l->queue_depth; q++) minibatch_free(&l->slots[q]);
    free(ws);
    free(l->threads);
    free(l->samplers);
    free(l->tsamplers);
    free(l->slots);
    free(l->state);
    item_sampler_free(&l->items);
    free(l->pos_rows);
    free(l->pos_group);
    free(l->group_ptr);
    free(l->group_nodes);
    free(l->anchor_ptr);
    free(l->anchor_items);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    memset(l, 0, sizeof *l);
}
