/* feat_cache.c — the remote feature row cache; see feat_cache.h. */
#include "sample/feat_cache.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sample/item_sampler.h"
#include "sample/minibatch.h"
#include "util/timer.h"

#define FILL_CHUNK ((int64_t)1 << 16) /* ids per fetch while filling */

static const char *const POLICY_NAMES[FEAT_CACHE_POLICY_COUNT] = {"none", "hotness", "degree", "halo",
                                                                   "sieve", "s3fifo", "lru", "clock"};
_Static_assert(sizeof POLICY_NAMES / sizeof POLICY_NAMES[0] == FEAT_CACHE_POLICY_COUNT, "policy names");

const char *feat_cache_policy_name(feat_cache_policy p) {
    return p >= 0 && p < FEAT_CACHE_POLICY_COUNT ? POLICY_NAMES[p] : "?";
}

int feat_cache_policy_adaptive(feat_cache_policy p) { return p >= FEAT_CACHE_SIEVE && p < FEAT_CACHE_POLICY_COUNT; }

static cache_policy_kind kind_of(feat_cache_policy p) {
    return p == FEAT_CACHE_S3FIFO ? CACHE_KIND_S3FIFO
           : p == FEAT_CACHE_LRU  ? CACHE_KIND_LRU
           : p == FEAT_CACHE_CLOCK ? CACHE_KIND_CLOCK
                                   : CACHE_KIND_SIEVE;
}

/* One fetch's scratch: per part the ids missed and their positions, and the rows fetched;
 * adaptive: the slot each miss was given (-1: served uncached), the hits' positions and slots. */
struct feat_cache_scratch {
    int num_parts;
    int64_t *n_miss, *cap, *n_hit; /* (P) */
    int64_t **miss_ids, **miss_pos; /* (P) */
    int64_t **miss_slot, **hit_pos, **hit_slot; /* (P) */
    void **rows;                  /* (P) rows fetched for the misses */
    size_t *rows_cap, *rows_len;  /* (P) */
};

static void scratch_del(feat_cache_scratch *s) {
    if (!s) return;
    for (int p = 0; p < s->num_parts; p++) {
        if (s->miss_ids) free(s->miss_ids[p]);
        if (s->miss_pos) free(s->miss_pos[p]);
        if (s->rows) free(s->rows[p]);
        if (s->miss_slot) free(s->miss_slot[p]);
        if (s->hit_pos) free(s->hit_pos[p]);
        if (s->hit_slot) free(s->hit_slot[p]);
    }
    free(s->n_hit), free(s->miss_slot), free(s->hit_pos), free(s->hit_slot);
    free(s->n_miss), free(s->cap), free(s->miss_ids), free(s->miss_pos), free(s->rows), free(s->rows_cap);
    free(s->rows_len), free(s);
}

static feat_cache_scratch *scratch_take(feat_cache *c) {
    pthread_mutex_lock(&c->mu);
    feat_cache_scratch *s = c->pool_len > 0 ? c->pool[--c->pool_len] : NULL;
    pthread_mutex_unlock(&c->mu);
    if (s) return s;
    const int P = c->inner->num_parts;
    s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->num_parts = P;
    s->n_miss = calloc((size_t)P, sizeof *s->n_miss);
    s->cap = calloc((size_t)P, sizeof *s->cap);
    s->miss_ids = calloc((size_t)P, sizeof *s->miss_ids);
    s->miss_pos = calloc((size_t)P, sizeof *s->miss_pos);
    s->rows = calloc((size_t)P, sizeof *s->rows);
    s->rows_cap = calloc((size_t)P, sizeof *s->rows_cap);
    s->rows_len = calloc((size_t)P, sizeof *s->rows_len);
    s->n_hit = calloc((size_t)P, sizeof *s->n_hit);
    s->miss_slot = calloc((size_t)P, sizeof *s->miss_slot);
    s->hit_pos = calloc((size_t)P, sizeof *s->hit_pos);
    s->hit_slot = calloc((size_t)P, sizeof *s->hit_slot);
    if (!s->n_miss || !s->cap || !s->miss_ids || !s->miss_pos || !s->rows || !s->rows_cap || !s->rows_len ||
        !s->n_hit || !s->miss_slot || !s->hit_pos || !s->hit_slot) {
        scratch_del(s);
        return NULL;
    }
    return s;
}

static void scratch_give(feat_cache *c, feat_cache_scratch *s) {
    pthread_mutex_lock(&c->mu);
    if (c->pool_len == c->pool_cap) {
        const int cap = c->pool_cap ? 2 * c->pool_cap : 8;
        feat_cache_scratch **g = realloc(c->pool, (size_t)cap * sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&c->mu);
            scratch_del(s);
            return;
        }
        c->pool = g;
        c->pool_cap = cap;
    }
    c->pool[c->pool_len++] = s;
    pthread_mutex_unlock(&c->mu);
}

/* Index of v among the cached ids, or -1. */
static int64_t lookup(const feat_cache *c, int64_t v) {
    uint64_t h = ((uint64_t)v * 0x9E3779B97F4A7C15ULL) >> c->hash_shift;
    for (;;) {
        const int64_t i = c->table[h];
        if (i < 0) return -1;
        if (c->ids[i] == v) return i;
        h = (h + 1) & c->mask;
    }
}

const void *feat_cache_row(const feat_cache *c, int64_t v) {
    if (c->n == 0) return NULL;
    const int64_t i = lookup(c, v);
    return i < 0 ? NULL : c->rows + (size_t)i * c->row_bytes;
}

static int grow(void **p, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    void *g = realloc(*p, need);
    if (!g) return -1;
    *p = g;
    *cap = need;
    return 0;
}

/* Room for n ids of part p in every per-part array of s. */
static int scratch_room(feat_cache_scratch *s, int p, int64_t n) {
    if (n <= s->cap[p]) return 0;
    int64_t **arr[5] = {s->miss_ids, s->miss_pos, s->miss_slot, s->hit_pos, s->hit_slot};
    for (int a = 0; a < 5; a++) {
        int64_t *g = realloc(arr[a][p], (size_t)n * sizeof(int64_t));
        if (!g) return -1;
        arr[a][p] = g;
    }
    s->cap[p] = n;
    return 0;
}

/* The misses s->miss_ids (s->n_miss per part) fetched through c->inner (one request per owner)
 * into s->rows, each part's answer checked to be n_miss rows of rb bytes. 0, or -1 with *err. */
static int fetch_misses(const feat_cache *c, feat_cache_scratch *s, int num_parts, size_t rb, cgnn_err *err) {
    gather_remote_req in = {.num_parts = num_parts,
                            .n = s->n_miss,
                            .ids = s->miss_ids,
                            .rows = s->rows,
                            .rows_cap = s->rows_cap,
                            .rows_len = s->rows_len};
    if (c->inner->fetch_remote(c->inner->ctx, &in, err) != 0) return -1;
    for (int p = 0; p < num_parts; p++)
        if (s->n_miss[p] > 0 && s->rows_len[p] != (size_t)s->n_miss[p] * rb)
            return err_set(err, CGNN_ERR_INPUT, "part %d answered %zu bytes of feature rows, expected %lld x %zu", p,
                           s->rows_len[p], (long long)s->n_miss[p], rb);
    return 0;
}

/* gather_part.fetch_remote with the cache in front: cached rows copied, the rest fetched through
 * inner (one request per owner, as before) and put in their places. */
static int cache_fetch(void *ctx, gather_remote_req *rq, cgnn_err *err) {
    feat_cache *c = ctx;
    const size_t rb = c->row_bytes;
    feat_cache_scratch *s = scratch_take(c);
    if (!s) return err_set(err, CGNN_ERR_RUNTIME, "out of memory for the feature cache's scratch");
    uint64_t asked = 0, found = 0;
    int any_miss = 0, rc = 0;
    for (int p = 0; p < rq->num_parts && rc == 0; p++) {
        const int64_t n = rq->n[p];
        s->n_miss[p] = 0;
        s->rows_len[p] = 0;
        if (n == 0) continue;
        if (scratch_room(s, p, n) != 0) {
            rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory in the feature cache");
            break;
        }
        if (grow(&rq->rows[p], &rq->rows_cap[p], (size_t)n * rb) != 0) {
            rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory receiving rows");
            break;
        }
        unsigned char *out = rq->rows[p];
        const int64_t *ids = rq->ids[p];
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t j = lookup(c, ids[i]);
            if (j >= 0) {
                memcpy(out + (size_t)i * rb, c->rows + (size_t)j * rb, rb);
            } else {
                s->miss_ids[p][k] = ids[i];
                s->miss_pos[p][k++] = i;
            }
        }
        s->n_miss[p] = k;
        any_miss |= k > 0;
        asked += (uint64_t)n;
        found += (uint64_t)(n - k);
        rq->rows_len[p] = (size_t)n * rb;
    }
    if (rc == 0 && any_miss) {
        rc = fetch_misses(c, s, rq->num_parts, rb, err);
        for (int p = 0; p < rq->num_parts && rc == 0; p++) {
            if (s->n_miss[p] == 0) continue;
            unsigned char *out = rq->rows[p];
            const unsigned char *got = s->rows[p];
            for (int64_t k = 0; k < s->n_miss[p]; k++)
                memcpy(out + (size_t)s->miss_pos[p][k] * rb, got + (size_t)k * rb, rb);
        }
    }
    atomic_fetch_add_explicit(&c->asked, asked, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->found, found, memory_order_relaxed);
    scratch_give(c, s);
    return rc;
}

/* gather_part.fetch_remote with an adaptive cache in front. Under c->mu, in the request's order:
 * each id looked up (a hit pinned) or, absent, inserted (pinned, being written; possibly evicting
 * an unpinned key); then, without the mutex: hits copied out of their (pinned) slots, misses
 * fetched through inner, copied out and into their new slots; then, under c->mu again, the pins
 * released (or, when the fetch failed, the new keys dropped). */
static int adaptive_fetch(void *ctx, gather_remote_req *rq, cgnn_err *err) {
    feat_cache *c = ctx;
    const size_t rb = c->row_bytes;
    feat_cache_scratch *s = scratch_take(c);
    if (!s) return err_set(err, CGNN_ERR_RUNTIME, "out of memory for the feature cache's scratch");
    uint64_t asked = 0, found = 0;
    int any_miss = 0, rc = 0;
    for (int p = 0; p < rq->num_parts; p++) s->n_miss[p] = s->n_hit[p] = 0, s->rows_len[p] = 0;
    for (int p = 0; p < rq->num_parts && rc == 0; p++) { /* room first: nothing fails under the mutex */
        if (rq->n[p] == 0) continue;
        if (scratch_room(s, p, rq->n[p]) != 0)
            rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory in the feature cache");
        else if (grow(&rq->rows[p], &rq->rows_cap[p], (size_t)rq->n[p] * rb) != 0)
            rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory receiving rows");
    }
    if (rc != 0) {
        scratch_give(c, s);
        return rc;
    }
    pthread_mutex_lock(&c->mu);
    for (int p = 0; p < rq->num_parts; p++) {
        const int64_t n = rq->n[p], *ids = rq->ids[p];
        int64_t h = 0, k = 0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t sl = cache_policy_lookup(c->pol, ids[i]);
            if (sl >= 0) {
                s->hit_pos[p][h] = i;
                s->hit_slot[p][h++] = sl;
            } else {
                int64_t evicted;
                s->miss_ids[p][k] = ids[i];
                s->miss_pos[p][k] = i;
                s->miss_slot[p][k++] = sl == CACHE_POLICY_ABSENT ? cache_policy_insert(c->pol, ids[i], &evicted) : -1;
            }
        }
        s->n_hit[p] = h, s->n_miss[p] = k;
        any_miss |= k > 0;
        asked += (uint64_t)n;
        found += (uint64_t)h;
    }
    pthread_mutex_unlock(&c->mu);
    for (int p = 0; p < rq->num_parts; p++) {
        if (rq->n[p] == 0) continue;
        unsigned char *out = rq->rows[p];
        for (int64_t h = 0; h < s->n_hit[p]; h++)
            memcpy(out + (size_t)s->hit_pos[p][h] * rb, c->rows + (size_t)s->hit_slot[p][h] * rb, rb);
        rq->rows_len[p] = (size_t)rq->n[p] * rb;
    }
    if (any_miss) {
        rc = fetch_misses(c, s, rq->num_parts, rb, err);
        for (int p = 0; p < rq->num_parts && rc == 0; p++) {
            unsigned char *out = rq->rows[p];
            const unsigned char *got = s->rows[p];
            for (int64_t k = 0; k < s->n_miss[p]; k++) {
                memcpy(out + (size_t)s->miss_pos[p][k] * rb, got + (size_t)k * rb, rb);
                const int64_t sl = s->miss_slot[p][k];
                if (sl >= 0) memcpy(c->rows + (size_t)sl * rb, got + (size_t)k * rb, rb);
            }
        }
    }
    pthread_mutex_lock(&c->mu);
    for (int p = 0; p < rq->num_parts; p++) {
        const int64_t *ids = rq->ids[p];
        for (int64_t h = 0; h < s->n_hit[p]; h++) cache_policy_release(c->pol, ids[s->hit_pos[p][h]]);
        for (int64_t k = 0; k < s->n_miss[p]; k++) {
            if (s->miss_slot[p][k] < 0) continue;
            if (rc == 0) cache_policy_release(c->pol, s->miss_ids[p][k]);
            else cache_policy_remove(c->pol, s->miss_ids[p][k]);
        }
    }
    pthread_mutex_unlock(&c->mu);
    atomic_fetch_add_explicit(&c->asked, asked, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->found, found, memory_order_relaxed);
    scratch_give(c, s);
    return rc;
}

int64_t feat_cache_adaptive_capacity(feat_cache_policy p, int64_t num_nodes, double ratio, int64_t budget,
                                     size_t row_bytes, int64_t max_slots) {
    int64_t k = max_slots < num_nodes ? max_slots : num_nodes;
    if (ratio > 0) {
        const int64_t by_ratio = (int64_t)((double)num_nodes * (ratio > 1 ? 1 : ratio));
        if (by_ratio < k) k = by_ratio;
    } else if (budget <= 0) {
        return 0;
    }
    if (budget > 0) { /* the most slots whose rows and metadata fit: bytes grow with the slots */
        int64_t lo = 0, hi = k;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo + 1) / 2;
            const double b = (double)mid * (double)row_bytes + (double)cache_policy_bytes(kind_of(p), mid);
            if (b <= (double)budget) lo = mid;
            else hi = mid - 1;
        }
        k = lo;
    }
    return k > 0 ? k : 0;
}

int feat_cache_start_adaptive(feat_cache *c, feat_cache_policy p, int64_t slots, cgnn_err *err) {
    CGNN_CHECK(feat_cache_policy_adaptive(p) && slots > 0 && c->n == 0 && !c->pol);
    c->rows = malloc((size_t)slots * c->row_bytes + 1);
    c->pol = malloc(sizeof *c->pol);
    if (!c->rows || !c->pol) {
        free(c->rows), free(c->pol);
        c->rows = NULL, c->pol = NULL;
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory for a feature cache of %lld rows", (long long)slots);
    }
    if (cache_policy_init(c->pol, kind_of(p), slots, err) != 0) {
        free(c->rows), free(c->pol);
        c->rows = NULL, c->pol = NULL;
        return -1;
    }
    c->slots = slots;
    c->policy = p;
    c->bytes = (double)slots * (double)c->row_bytes + (double)cache_policy_bytes(kind_of(p), slots);
    c->view.fetch_remote = adaptive_fetch;
    c->view.ctx = c;
    return 0;
}

void feat_cache_init(feat_cache *c, const gather_part *inner, size_t row_bytes) {
    memset(c, 0, sizeof *c);
    c->inner = inner;
    c->view = *inner;
    c->row_bytes = row_bytes;
    atomic_init(&c->asked, 0);
    atomic_init(&c->found, 0);
    pthread_mutex_init(&c->mu, NULL);
}

void feat_cache_free(feat_cache *c) {
    if (!c || !c->inner) return;
    for (int i = 0; i < c->pool_len; i++) scratch_del(c->pool[i]);
    free(c->pool);
    free(c->ids);
    free(c->rows);
    free(c->table);
    if (c->pol) cache_policy_free(c->pol);
    free(c->pol);
    pthread_mutex_destroy(&c->mu);
    memset(c, 0, sizeof *c);
}

void feat_cache_counters(feat_cache *c, int reset, uint64_t *asked, uint64_t *found) {
    *asked = reset ? atomic_exchange(&c->asked, 0) : atomic_load(&c->asked);
    *found = reset ? atomic_exchange(&c->found, 0) : atomic_load(&c->found);
}

int64_t feat_cache_capacity(int64_t num_nodes, double ratio, int64_t budget, size_t row_bytes) {
    int64_t by_ratio = ratio > 0 ? (int64_t)((double)num_nodes * (ratio > 1 ? 1 : ratio)) : -1;
    int64_t by_mem = budget > 0 && row_bytes > 0 ? budget / (int64_t)row_bytes : -1;
    if (by_mem > num_nodes) by_mem = num_nodes;
    if (by_ratio < 0) return by_mem < 0 ? 0 : by_mem;
    if (by_mem < 0) return by_ratio;
    return by_ratio < by_mem ? by_ratio : by_mem;
}

int feat_cache_fill(feat_cache *c, const int64_t *ids, int64_t n, cgnn_err *err) {
    const gather_part *gp = c->inner;
    const int P = gp->num_parts;
    const size_t rb = c->row_bytes;
    CGNN_CHECK(c->n == 0 && n >= 0);
    if (n == 0) return 0;
    c->ids = malloc((size_t)n * sizeof(int64_t));
    c->rows = malloc((size_t)n * rb);
    uint64_t slots = 16;
    while (slots < 2 * (uint64_t)n) slots <<= 1;
    c->table = malloc(slots * sizeof(int64_t));
    /* per-chunk request: ids grouped by owner (ascending within each), positions into ids */
    int64_t *cnt = calloc((size_t)P, sizeof(int64_t));
    int64_t **lists = calloc((size_t)P, sizeof(int64_t *)), **pos = calloc((size_t)P, sizeof(int64_t *));
    void **rows = calloc((size_t)P, sizeof(void *));
    size_t *rows_cap = calloc((size_t)P, sizeof(size_t)), *rows_len = calloc((size_t)P, sizeof(size_t));
    int64_t *flat = malloc((size_t)(2 * FILL_CHUNK) * sizeof(int64_t));
    int rc = 0;
    if (!c->ids || !c->rows || !c->table || !cnt || !lists || !pos || !rows || !rows_cap || !rows_len || !flat)
        rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory for a feature cache of %lld rows", (long long)n);
    if (rc == 0) memcpy(c->ids, ids, (size_t)n * sizeof(int64_t));
    for (int64_t lo = 0; rc == 0 && lo < n; lo += FILL_CHUNK) {
        const int64_t hi = lo + FILL_CHUNK < n ? lo + FILL_CHUNK : n;
        for (int p = 0; p < P; p++) cnt[p] = 0;
        for (int64_t i = lo; i < hi; i++) {
            int o = 0, top = P; /* owner: part_start[o] <= v < part_start[o + 1] */
            while (top - o > 1) {
                const int mid = (o + top) / 2;
                if (gp->part_start[mid] <= ids[i]) o = mid;
                else top = mid;
            }
            CGNN_CHECK(o != gp->part && ids[i] >= 0 && (i == 0 || ids[i] > ids[i - 1]));
            cnt[o]++;
        }
        int64_t off = 0;
        for (int p = 0; p < P; p++) {
            lists[p] = flat + off;
            pos[p] = flat + FILL_CHUNK + off;
            off += cnt[p];
            cnt[p] = 0;
        }
        for (int64_t i = lo; i < hi; i++) {
            int o = 0, top = P;
            while (top - o > 1) {
                const int mid = (o + top) / 2;
                if (gp->part_start[mid] <= ids[i]) o = mid;
                else top = mid;
            }
            lists[o][cnt[o]] = ids[i];
            pos[o][cnt[o]++] = i;
        }
        gather_remote_req rq = {.num_parts = P, .n = cnt, .ids = lists, .rows = rows, .rows_cap = rows_cap,
                                .rows_len = rows_len};
        for (int p = 0; p < P; p++) rows_len[p] = 0;
        rc = gp->fetch_remote(gp->ctx, &rq, err);
        for (int p = 0; p < P && rc == 0; p++) {
            if (rows_len[p] != (size_t)cnt[p] * rb) {
                rc = err_set(err, CGNN_ERR_INPUT, "part %d answered %zu bytes of feature rows for the cache, "
                             "expected %lld x %zu", p, rows_len[p], (long long)cnt[p], rb);
                break;
            }
            for (int64_t k = 0; k < cnt[p]; k++)
                memcpy(c->rows + (size_t)pos[p][k] * rb, (const unsigned char *)rows[p] + (size_t)k * rb, rb);
        }
    }
    for (int p = 0; rows && p < P; p++) free(rows[p]);
    free(cnt), free(lists), free(pos), free(rows), free(rows_cap), free(rows_len), free(flat);
    if (rc != 0) {
        free(c->ids), free(c->rows), free(c->table);
        c->ids = NULL, c->rows = NULL, c->table = NULL;
        return -1;
    }
    c->mask = slots - 1;
    c->hash_shift = 64;
    for (uint64_t t = slots; t > 1; t >>= 1) c->hash_shift--;
    for (uint64_t t = 0; t < slots; t++) c->table[t] = -1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = ((uint64_t)ids[i] * 0x9E3779B97F4A7C15ULL) >> c->hash_shift;
        while (c->table[h] >= 0) h = (h + 1) & c->mask;
        c->table[h] = i;
    }
    c->n = n;
    c->view.fetch_remote = cache_fetch;
    c->view.ctx = c;
    return 0;
}

/* ---- choosing the nodes --------------------------------------------------------------- */

typedef struct scored {
    uint32_t score, second;
    int64_t id;
} scored;

static int scored_cmp(const void *a, const void *b) { /* score, then second descending; id ascending */
    const scored *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->second != y->second) return x->second > y->second ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int id_cmp(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t feat_cache_select(int64_t *out, const uint32_t *score, const uint32_t *second, int64_t num_nodes,
                          int64_t own_lo, int64_t own_hi, int64_t k, int64_t *candidates) {
#define FEAT_CACHE_CANDIDATE(v) ((score[v] > 0 || (second && second[v] > 0)) && ((v) < own_lo || (v) >= own_hi))
    int64_t c = 0;
    for (int64_t v = 0; v < num_nodes; v++) c += FEAT_CACHE_CANDIDATE(v);
    if (candidates) *candidates = c;
    if (k <= 0 || c == 0) return 0;
    scored *all = cgnn_malloc((size_t)c * sizeof *all);
    int64_t j = 0;
    for (int64_t v = 0; v < num_nodes; v++)
        if (FEAT_CACHE_CANDIDATE(v)) all[j++] = (scored){score[v], second ? second[v] : 0, v};
#undef FEAT_CACHE_CANDIDATE
    qsort(all, (size_t)c, sizeof *all, scored_cmp);
    const int64_t m = k < c ? k : c;
    for (int64_t i = 0; i < m; i++) out[i] = all[i].id;
    free(all);
    qsort(out, (size_t)m, sizeof *out, id_cmp);
    return m;
}

void feat_cache_halo_scores(uint32_t *score, const csc_graph *g) {
    const int64_t lo = g->first_node, hi = g->first_node + g->num_nodes;
    for (int64_t e = 0; e < g->num_edges; e++) {
        const int64_t v = csc_index(g, e);
        if ((v < lo || v >= hi) && score[v] < UINT32_MAX) score[v]++;
    }
}

int feat_cache_presample(uint32_t *counts, const feat_cache_plan *pl, int64_t *batches, cgnn_err *err) {
    *batches = 0;
    if (pl->n_items <= 0 || pl->max_batches <= 0) return 0;
    item_sampler items;
    item_sampler_init(&items, pl->n_items, pl->batch_size, 1, 0, pl->key, 0, 1, 0);
    item_sampler_set_epoch(&items, 0);
    const int64_t nb = items.num_batches < pl->max_batches ? items.num_batches : pl->max_batches;
    const int T = pl->nthreads > 0 ? (pl->nthreads < nb ? pl->nthreads : (int)nb) : 1;
    const int64_t max_seeds = pl->batch_size * pl->width;
    minibatch_capacity cap;
    sampler_capacity_sized(pl->part->num_nodes, pl->part->num_edges, pl->part->max_in_degree, &pl->sampler, max_seeds,
                           0, &cap);
    int failed = 0;
    cgnn_err first = {0};
#pragma omp parallel num_threads(T)
    {
        neighbor_sampler s;
        minibatch mb;
        memset(&s, 0, sizeof s);
        memset(&mb, 0, sizeof mb);
        cgnn_err e = {0};
        int64_t *seeds = malloc((size_t)(max_seeds + 1) * sizeof(int64_t));
        int ok = seeds && minibatch_alloc(&mb, &cap, &e) == 0 &&
                 sampler_init_part(&s, pl->local, pl->part, &pl->sampler, &cap, &e) == 0;
        if (!ok && !e.msg[0]) err_set(&e, CGNN_ERR_RUNTIME, "out of memory for pre-sampling");
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < nb; b++) {
            if (!ok) continue;
            const int64_t *it;
            const int64_t n = item_sampler_batch(&items, b, &it);
            for (int64_t i = 0; i < n; i++)
                for (int w = 0; w < pl->width; w++) seeds[w * n + i] = pl->seeds[it[i] * pl->width + w];
            if (sampler_sample(&s, &mb, seeds, n * pl->width, pl->key, &e) != 0) {
                ok = 0;
                continue;
            }
            for (int64_t i = 0; i < mb.num_input_nodes; i++) {
                const int64_t v = mb.input_nodes[i];
#pragma omp atomic
                counts[v]++;
            }
        }
        if (!ok) {
#pragma omp critical(feat_cache_presample)
            if (!failed) {
                failed = 1;
                first = e;
            }
        }
        free(seeds);
        sampler_free(&s);
        minibatch_free(&mb);
    }
    item_sampler_free(&items);
    if (failed) {
        if (err) *err = first;
        return -1;
    }
    *batches = nb;
    return 0;
}

int feat_cache_build(feat_cache *c, const feat_cache_plan *pl, feat_cache_report *rep, cgnn_err *err) {
    memset(rep, 0, sizeof *rep);
    const double t0 = timer_now();
    const int64_t N = pl->part->num_nodes;
    const int64_t lo = c->inner->part_start[c->inner->part], hi = c->inner->part_start[c->inner->part + 1];
    const int64_t k = feat_cache_capacity(N, pl->ratio, pl->budget, c->row_bytes);
    rep->capacity = k;
    if (feat_cache_policy_adaptive(pl->policy)) { /* empty: the batches fill it */
        rep->adaptive = 1;
        rep->capacity = feat_cache_adaptive_capacity(pl->policy, N, pl->ratio, pl->budget, c->row_bytes, N - (hi - lo));
        if (rep->capacity > 0 && feat_cache_start_adaptive(c, pl->policy, rep->capacity, err) != 0) return -1;
        rep->bytes = c->bytes;
        rep->candidates = N - (hi - lo);
        rep->seconds = timer_now() - t0;
        return 0;
    }
    if (pl->policy == FEAT_CACHE_NONE || k <= 0) return 0;
    uint32_t *score = calloc((size_t)N + 1, sizeof(uint32_t)), *second = NULL;
    if (!score) return err_set(err, CGNN_ERR_RUNTIME, "out of memory scoring %lld nodes for the feature cache",
                               (long long)N);
    int rc = 0;
    uint32_t *deg = NULL; /* the in-degrees as scores */
    if (pl->degrees) {
        deg = malloc((size_t)N * sizeof(uint32_t) + 1);
        if (!deg) rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory for the feature cache");
        for (int64_t v = 0; deg && v < N; v++)
            deg[v] = pl->degrees[v] > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)pl->degrees[v];
    }
    if (rc == 0 && pl->policy == FEAT_CACHE_HOTNESS) {
        rc = feat_cache_presample(score, pl, &rep->presampled_batches, err);
        second = deg; /* equal counts (and nodes never pre-sampled, after all others) by in-degree */
    } else if (rc == 0 && pl->policy == FEAT_CACHE_DEGREE) {
        CGNN_CHECK(deg);
        memcpy(score, deg, (size_t)N * sizeof(uint32_t));
    } else if (rc == 0) {
        feat_cache_halo_scores(score, pl->local);
    }
    int64_t *ids = NULL, m = 0;
    if (rc == 0) {
        ids = malloc((size_t)(k < N ? k : N) * sizeof(int64_t) + 1);
        if (!ids) rc = err_set(err, CGNN_ERR_RUNTIME, "out of memory for the feature cache");
    }
    if (rc == 0) {
        m = feat_cache_select(ids, score, second, N, lo, hi, k, &rep->candidates);
        rc = feat_cache_fill(c, ids, m, err);
    }
    free(ids);
    free(score);
    free(deg);
    if (rc != 0) return -1;
    rep->rows = c->n;
    rep->bytes = (double)c->n * (double)c->row_bytes + (double)(c->n ? c->mask + 1 : 0) * sizeof(int64_t) +
                 (double)c->n * sizeof(int64_t);
    c->policy = pl->policy;
    c->bytes = rep->bytes;
    rep->seconds = timer_now() - t0;
    return 0;
}
