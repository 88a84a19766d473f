/* cache_policy.c — SIEVE, S3-FIFO, LRU, CLOCK as GraphBolt has them; see cache_policy.h. */
#include "sample/cache_policy.h"

#include <stdlib.h>
#include <string.h>

static const char *const KIND_NAMES[CACHE_KIND_COUNT] = {"sieve", "s3fifo", "lru", "clock"};

const char *cache_policy_kind_name(cache_policy_kind k) {
    return k >= 0 && k < CACHE_KIND_COUNT ? KIND_NAMES[k] : "?";
}

#define WRITING 1u

/* ---- the key table ------------------------------------------------------------------------ */

static uint64_t map_slots(int64_t n) {
    uint64_t s = 16;
    while (s < 2 * (uint64_t)(n + 1)) s <<= 1;
    return s;
}

static int map_init(cache_map *m, int64_t n) {
    const uint64_t s = map_slots(n);
    m->keys = malloc(s * sizeof(int64_t));
    m->vals = malloc(s * sizeof(int64_t));
    if (!m->keys || !m->vals) return -1;
    for (uint64_t i = 0; i < s; i++) m->keys[i] = -1;
    m->mask = s - 1;
    m->shift = 64;
    for (uint64_t t = s; t > 1; t >>= 1) m->shift--;
    return 0;
}

static void map_free(cache_map *m) {
    free(m->keys), free(m->vals);
    m->keys = m->vals = NULL;
}

static uint64_t map_home(const cache_map *m, int64_t key) {
    return ((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> m->shift;
}

static int64_t map_get(const cache_map *m, int64_t key) {
    for (uint64_t h = map_home(m, key);; h = (h + 1) & m->mask) {
        if (m->keys[h] == key) return m->vals[h];
        if (m->keys[h] < 0) return -1;
    }
}

static void map_put(cache_map *m, int64_t key, int64_t val) { /* the table never fills: sized 2x */
    uint64_t h = map_home(m, key);
    while (m->keys[h] >= 0 && m->keys[h] != key) h = (h + 1) & m->mask;
    m->keys[h] = key;
    m->vals[h] = val;
}

static int map_del(cache_map *m, int64_t key) { /* 1 when key was there */
    uint64_t i = map_home(m, key);
    while (m->keys[i] != key) {
        if (m->keys[i] < 0) return 0;
        i = (i + 1) & m->mask;
    }
    for (uint64_t j = i;;) { /* backward shift: pull later entries of the run into the hole */
        j = (j + 1) & m->mask;
        if (m->keys[j] < 0) break;
        const uint64_t h = map_home(m, m->keys[j]);
        if (((j - h) & m->mask) >= ((j - i) & m->mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = -1;
    return 1;
}

/* ---- the policy ---------------------------------------------------------------------------- */

static int64_t ghost_cap_of(int64_t capacity) { return capacity - capacity / 10; }

size_t cache_policy_bytes(cache_policy_kind kind, int64_t capacity) {
    const size_t nodes = (size_t)capacity + 1;
    size_t b = nodes * (4 * sizeof(int64_t) + sizeof(int32_t) + 3) + nodes * sizeof(int64_t) /* free nodes */ +
               (size_t)capacity * sizeof(int64_t) /* free slots */ + map_slots(capacity) * 2 * sizeof(int64_t);
    if (kind == CACHE_KIND_S3FIFO) {
        const int64_t g = ghost_cap_of(capacity);
        b += (size_t)(g + 1) * sizeof(int64_t) + map_slots(g) * 2 * sizeof(int64_t);
    }
    return b;
}

int cache_policy_init(cache_policy *cp, cache_policy_kind kind, int64_t capacity, cgnn_err *err) {
    memset(cp, 0, sizeof *cp);
    CGNN_CHECK(capacity >= 1 && kind >= 0 && kind < CACHE_KIND_COUNT);
    cp->kind = kind;
    cp->capacity = capacity;
    const size_t nodes = (size_t)capacity + 1;
    cp->key = malloc(nodes * sizeof(int64_t));
    cp->next = malloc(nodes * sizeof(int64_t));
    cp->prev = malloc(nodes * sizeof(int64_t));
    cp->slot = malloc(nodes * sizeof(int64_t));
    cp->pins = calloc(nodes, sizeof(int32_t));
    cp->freq = calloc(nodes, 1);
    cp->queue = calloc(nodes, 1);
    cp->state = calloc(nodes, 1);
    cp->free_node = malloc(nodes * sizeof(int64_t));
    cp->free_slot = malloc((size_t)capacity * sizeof(int64_t));
    int bad = !cp->key || !cp->next || !cp->prev || !cp->slot || !cp->pins || !cp->freq || !cp->queue || !cp->state ||
              !cp->free_node || !cp->free_slot || map_init(&cp->map, capacity) != 0;
    if (!bad && kind == CACHE_KIND_S3FIFO) {
        cp->ghost_cap = ghost_cap_of(capacity);
        cp->ghost = malloc((size_t)(cp->ghost_cap + 1) * sizeof(int64_t));
        bad = !cp->ghost || map_init(&cp->ghost_set, cp->ghost_cap) != 0;
        cp->small_target = capacity / 10 > 0 ? capacity / 10 : 1; /* GraphBolt refuses capacity < 10 */
    }
    if (bad) {
        cache_policy_free(cp);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory for a %s cache of %lld rows", KIND_NAMES[kind],
                       (long long)capacity);
    }
    for (size_t i = 0; i < nodes; i++) cp->free_node[i] = (int64_t)(nodes - 1 - i); /* node 0 first */
    cp->n_free_node = (int64_t)nodes;
    cp->front[0] = cp->front[1] = cp->back[0] = cp->back[1] = -1;
    cp->hand = -1;
    return 0;
}

void cache_policy_free(cache_policy *cp) {
    if (!cp) return;
    free(cp->key), free(cp->next), free(cp->prev), free(cp->slot), free(cp->pins), free(cp->freq);
    free(cp->queue), free(cp->state), free(cp->free_node), free(cp->free_slot), free(cp->ghost);
    map_free(&cp->map);
    map_free(&cp->ghost_set);
    memset(cp, 0, sizeof *cp);
}

int64_t cache_policy_size(const cache_policy *cp) { return cp->count[0] + cp->count[1]; }

static void push_front(cache_policy *cp, int q, int64_t n) {
    cp->queue[n] = (uint8_t)q;
    cp->prev[n] = -1;
    cp->next[n] = cp->front[q];
    if (cp->front[q] >= 0) cp->prev[cp->front[q]] = n;
    else cp->back[q] = n;
    cp->front[q] = n;
    cp->count[q]++;
}

static void unlink_node(cache_policy *cp, int64_t n) {
    const int q = cp->queue[n];
    if (cp->prev[n] >= 0) cp->next[cp->prev[n]] = cp->next[n];
    else cp->front[q] = cp->next[n];
    if (cp->next[n] >= 0) cp->prev[cp->next[n]] = cp->prev[n];
    else cp->back[q] = cp->prev[n];
    cp->count[q]--;
}

static void move_to_front(cache_policy *cp, int q, int64_t n) {
    unlink_node(cp, n);
    push_front(cp, q, n);
}

/* the victim n leaves: its key, node; returns its slot */
static int64_t drop(cache_policy *cp, int64_t n, int64_t *evicted) {
    const int64_t s = cp->slot[n];
    *evicted = cp->key[n];
    map_del(&cp->map, cp->key[n]);
    unlink_node(cp, n);
    cp->free_node[cp->n_free_node++] = n;
    return s;
}

static void ghost_push(cache_policy *cp, int64_t key) {
    const int64_t ring = cp->ghost_cap + 1;
    if ((cp->ghost_tail - cp->ghost_head + ring) % ring == cp->ghost_cap) { /* full: the oldest leaves */
        map_del(&cp->ghost_set, cp->ghost[cp->ghost_head]);
        cp->ghost_head = (cp->ghost_head + 1) % ring;
    }
    map_put(&cp->ghost_set, key, 1);
    cp->ghost[cp->ghost_tail] = key;
    cp->ghost_tail = (cp->ghost_tail + 1) % ring;
}

/* A slot for the node just pushed (pinned): fresh, given back, or a victim's; -1 when none. */
static int64_t evict(cache_policy *cp, int64_t *evicted) {
    *evicted = -1;
    if (cp->used < cp->capacity) return cp->used++;
    if (cp->n_free > 0) return cp->free_slot[--cp->n_free];
    switch (cp->kind) {
    case CACHE_KIND_SIEVE: {
        const int64_t bound = 2 * (cp->count[0] + 1);
        int64_t h = cp->hand < 0 ? cp->back[0] : cp->prev[cp->hand];
        for (int64_t step = 0; cp->freq[h] || cp->pins[h]; step++) {
            if (step > bound) return -1;
            cp->freq[h] = 0;
            h = h == cp->front[0] ? cp->back[0] : cp->prev[h];
        }
        cp->hand = h == cp->front[0] ? -1 : cp->next[h];
        return drop(cp, h, evicted);
    }
    case CACHE_KIND_S3FIFO: {
        while (cp->small_size > cp->small_target) {
            cp->small_size--;
            const int64_t e = cp->back[0];
            if (cp->freq[e] > 0 || cp->pins[e]) {
                cp->freq[e] = 0;
                move_to_front(cp, 1, e);
            } else {
                const int64_t s = drop(cp, e, evicted);
                ghost_push(cp, *evicted);
                return s;
            }
        }
        const int64_t bound = 4 * (cp->count[1] + 1);
        for (int64_t step = 0;; step++) {
            const int64_t e = cp->back[1];
            if (e < 0) return -1;
            if (cp->freq[e] > 0 || cp->pins[e]) {
                if (step > bound) return -1;
                if (cp->freq[e] > 0) cp->freq[e]--;
                move_to_front(cp, 1, e);
            } else {
                return drop(cp, e, evicted);
            }
        }
    }
    case CACHE_KIND_LRU: {
        for (int64_t step = 0; cp->pins[cp->back[0]]; step++) {
            if (step > cp->count[0]) return -1;
            move_to_front(cp, 0, cp->back[0]);
        }
        return drop(cp, cp->back[0], evicted);
    }
    case CACHE_KIND_CLOCK: {
        const int64_t bound = 2 * (cp->count[0] + 1);
        for (int64_t step = 0;; step++) {
            const int64_t e = cp->back[0];
            if (cp->freq[e] || cp->pins[e]) {
                if (step > bound) return -1;
                cp->freq[e] = 0;
                move_to_front(cp, 0, e);
            } else {
                return drop(cp, e, evicted);
            }
        }
    }
    default:
        CGNN_CHECK(0);
    }
    return -1;
}

int64_t cache_policy_lookup(cache_policy *cp, int64_t key) {
    const int64_t n = map_get(&cp->map, key);
    if (n < 0) return CACHE_POLICY_ABSENT;
    switch (cp->kind) {
    case CACHE_KIND_SIEVE:
    case CACHE_KIND_CLOCK: cp->freq[n] = 1; break;
    case CACHE_KIND_S3FIFO:
        if (cp->freq[n] < 3) cp->freq[n]++;
        break;
    case CACHE_KIND_LRU: move_to_front(cp, 0, n); break;
    default: break;
    }
    if (cp->state[n] & WRITING) return CACHE_POLICY_BUSY;
    cp->n_pinned += cp->pins[n] == 0;
    cp->pins[n]++;
    return cp->slot[n];
}

int64_t cache_policy_insert(cache_policy *cp, int64_t key, int64_t *evicted) {
    CGNN_CHECK(key >= 0 && cp->n_free_node > 0);
    *evicted = -1;
    if (cp->used == cp->capacity && cp->n_free == 0 && cp->n_pinned >= cache_policy_size(cp))
        return -1; /* every entry pinned: no victim (nothing touched) */
    const int64_t n = cp->free_node[--cp->n_free_node];
    cp->key[n] = key;
    cp->freq[n] = 0;
    cp->pins[n] = 1;
    cp->n_pinned++;
    cp->state[n] = WRITING;
    int q = 0;
    if (cp->kind == CACHE_KIND_S3FIFO) {
        q = map_del(&cp->ghost_set, key);
        cp->small_size += 1 - q;
    }
    push_front(cp, q, n);
    map_put(&cp->map, key, n);
    const int64_t hand = cp->hand;
    const int64_t s = evict(cp, evicted);
    if (s < 0) { /* every entry pinned: the key is not cached */
        cp->hand = hand;
        if (cp->kind == CACHE_KIND_S3FIFO && cp->queue[n] == 0) cp->small_size--;
        unlink_node(cp, n);
        map_del(&cp->map, key);
        cp->pins[n] = 0;
        cp->n_pinned--;
        cp->state[n] = 0;
        cp->free_node[cp->n_free_node++] = n;
        return -1;
    }
    cp->slot[n] = s;
    return s;
}

void cache_policy_release(cache_policy *cp, int64_t key) {
    const int64_t n = map_get(&cp->map, key);
    CGNN_CHECK(n >= 0 && cp->pins[n] > 0);
    cp->pins[n]--;
    cp->n_pinned -= cp->pins[n] == 0;
    cp->state[n] &= (uint8_t)~WRITING;
}

void cache_policy_remove(cache_policy *cp, int64_t key) {
    const int64_t n = map_get(&cp->map, key);
    if (n < 0) return;
    if (cp->hand == n) cp->hand = cp->next[n];
    if (cp->kind == CACHE_KIND_S3FIFO && cp->queue[n] == 0) cp->small_size--;
    cp->free_slot[cp->n_free++] = cp->slot[n];
    unlink_node(cp, n);
    map_del(&cp->map, key);
    cp->n_pinned -= cp->pins[n] > 0;
    cp->pins[n] = 0;
    cp->state[n] = 0;
    cp->free_node[cp->n_free_node++] = n;
}

/* ---- the plain reference ------------------------------------------------------------------- */

void cache_policy_ref_init(cache_policy_ref *r, cache_policy_kind kind, int64_t capacity) {
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->capacity = capacity;
    for (int q = 0; q < 2; q++) {
        r->k[q] = cgnn_malloc((size_t)(capacity + 1) * sizeof(int64_t));
        r->pos[q] = cgnn_malloc((size_t)(capacity + 1) * sizeof(int64_t));
        r->f[q] = cgnn_malloc((size_t)(capacity + 1) * sizeof(int));
        r->pin[q] = cgnn_malloc((size_t)(capacity + 1) * sizeof(int));
    }
    r->ghost_cap = ghost_cap_of(capacity);
    r->ghost = cgnn_malloc((size_t)(r->ghost_cap + 1) * sizeof(int64_t));
    r->gset = cgnn_malloc((size_t)(r->ghost_cap + 2) * sizeof(int64_t));
    r->small_target = capacity / 10 > 0 ? capacity / 10 : 1;
    r->hand = 0; /* end() of the empty queue */
}

void cache_policy_ref_free(cache_policy_ref *r) {
    for (int q = 0; q < 2; q++) free(r->k[q]), free(r->pos[q]), free(r->f[q]), free(r->pin[q]);
    free(r->ghost), free(r->gset);
    memset(r, 0, sizeof *r);
}

static int64_t ref_find(const cache_policy_ref *r, int64_t key, int *q) {
    for (*q = 0; *q < 2; (*q)++)
        for (int64_t i = 0; i < r->n[*q]; i++)
            if (r->k[*q][i] == key) return i;
    return -1;
}

/* removes entry i of queue q (later ones shift towards the front); the SIEVE hand follows */
static void ref_erase(cache_policy_ref *r, int q, int64_t i) {
    for (int64_t j = i; j + 1 < r->n[q]; j++) {
        r->k[q][j] = r->k[q][j + 1], r->pos[q][j] = r->pos[q][j + 1];
        r->f[q][j] = r->f[q][j + 1], r->pin[q][j] = r->pin[q][j + 1];
    }
    r->n[q]--;
    if (q == 0 && r->hand > i) r->hand--;
}

static void ref_push_front(cache_policy_ref *r, int q, int64_t key, int64_t pos, int f, int pin) {
    for (int64_t j = r->n[q]; j > 0; j--) {
        r->k[q][j] = r->k[q][j - 1], r->pos[q][j] = r->pos[q][j - 1];
        r->f[q][j] = r->f[q][j - 1], r->pin[q][j] = r->pin[q][j - 1];
    }
    r->k[q][0] = key, r->pos[q][0] = pos, r->f[q][0] = f, r->pin[q][0] = pin;
    r->n[q]++;
    if (q == 0) r->hand++;
}

static void ref_move_to_front(cache_policy_ref *r, int from, int64_t i, int to) {
    const int64_t key = r->k[from][i], pos = r->pos[from][i];
    const int f = r->f[from][i], pin = r->pin[from][i];
    const int64_t hand = r->hand;
    ref_erase(r, from, i);
    ref_push_front(r, to, key, pos, f, pin);
    if (r->kind != CACHE_KIND_SIEVE) r->hand = hand; /* (only SIEVE has a hand; it never moves entries) */
}

static void ref_ghost(cache_policy_ref *r, int64_t key) {
    if (r->ghost_n == r->ghost_cap) { /* the oldest leaves the ring and the set */
        const int64_t old = r->ghost[0];
        memmove(r->ghost, r->ghost + 1, (size_t)(r->ghost_n - 1) * sizeof(int64_t));
        r->ghost_n--;
        for (int64_t j = 0; j < r->gset_n; j++)
            if (r->gset[j] == old) r->gset[j] = r->gset[--r->gset_n];
    }
    int in = 0;
    for (int64_t j = 0; j < r->gset_n; j++) in |= r->gset[j] == key;
    if (!in) r->gset[r->gset_n++] = key;
    r->ghost[r->ghost_n++] = key;
}

static int64_t ref_evict(cache_policy_ref *r, int64_t *evicted) {
    *evicted = -1;
    if (r->used < r->capacity) return r->used++;
    int64_t pos;
    if (r->kind == CACHE_KIND_SIEVE) { /* the hand: index into the queue, n = end() */
        const int64_t bound = 2 * (r->n[0] + 1);
        int64_t h = r->hand - 1;
        for (int64_t step = 0; r->f[0][h] || r->pin[0][h]; step++) {
            if (step > bound) return -1;
            r->f[0][h] = 0;
            if (h == 0) h = r->n[0];
            h--;
        }
        *evicted = r->k[0][h], pos = r->pos[0][h];
        ref_erase(r, 0, h);
        r->hand = h == 0 ? r->n[0] : h; /* end(), or the older neighbour (now at h) */
        return pos;
    }
    if (r->kind == CACHE_KIND_S3FIFO) {
        while (r->small_size > r->small_target) {
            r->small_size--;
            const int64_t b = r->n[0] - 1;
            if (r->f[0][b] > 0 || r->pin[0][b]) {
                r->f[0][b] = 0;
                ref_move_to_front(r, 0, b, 1);
            } else {
                *evicted = r->k[0][b], pos = r->pos[0][b];
                ref_erase(r, 0, b);
                ref_ghost(r, *evicted);
                return pos;
            }
        }
    }
    const int q = r->kind == CACHE_KIND_S3FIFO;
    const int64_t bound = r->kind == CACHE_KIND_S3FIFO ? 4 * (r->n[1] + 1)
                          : r->kind == CACHE_KIND_LRU  ? r->n[0]
                                                       : 2 * (r->n[0] + 1);
    for (int64_t step = 0;; step++) {
        if (r->n[q] == 0) return -1;
        const int64_t b = r->n[q] - 1;
        const int keep = r->kind == CACHE_KIND_LRU ? r->pin[q][b] : r->f[q][b] > 0 || r->pin[q][b];
        if (!keep) break;
        if (step > bound) return -1;
        if (r->kind == CACHE_KIND_S3FIFO && r->f[q][b] > 0) r->f[q][b]--;
        else if (r->kind == CACHE_KIND_CLOCK) r->f[q][b] = 0;
        ref_move_to_front(r, q, b, q);
    }
    const int64_t b = r->n[q] - 1;
    *evicted = r->k[q][b], pos = r->pos[q][b];
    ref_erase(r, q, b);
    return pos;
}

int64_t cache_policy_ref_lookup(cache_policy_ref *r, int64_t key) {
    int q;
    const int64_t i = ref_find(r, key, &q);
    if (i < 0) return -1;
    const int64_t pos = r->pos[q][i];
    if (r->kind == CACHE_KIND_LRU) {
        r->pin[q][i]++;
        ref_move_to_front(r, q, i, q);
    } else {
        r->f[q][i] = r->kind == CACHE_KIND_S3FIFO ? (r->f[q][i] < 3 ? r->f[q][i] + 1 : 3) : 1;
        r->pin[q][i]++;
    }
    return pos;
}

int64_t cache_policy_ref_insert(cache_policy_ref *r, int64_t key, int64_t *evicted) {
    *evicted = -1;
    if (r->used == r->capacity) { /* every entry pinned: nothing to evict */
        int64_t unpinned = 0;
        for (int qq = 0; qq < 2; qq++)
            for (int64_t i = 0; i < r->n[qq]; i++) unpinned += r->pin[qq][i] == 0;
        if (unpinned == 0) return -1;
    }
    int q = 0;
    if (r->kind == CACHE_KIND_S3FIFO) {
        for (int64_t j = 0; j < r->gset_n; j++)
            if (r->gset[j] == key) {
                r->gset[j] = r->gset[--r->gset_n];
                q = 1;
                break;
            }
        r->small_size += 1 - q;
    }
    const int64_t hand = r->hand;
    ref_push_front(r, q, key, -1, 0, 1);
    const int64_t pos = ref_evict(r, evicted);
    if (pos < 0) {
        int qq;
        const int64_t i = ref_find(r, key, &qq);
        if (r->kind == CACHE_KIND_S3FIFO && qq == 0) r->small_size--;
        ref_erase(r, qq, i);
        r->hand = hand;
        return -1;
    }
    int qq; /* the new entry may have moved (S3-FIFO: to main) */
    const int64_t i = ref_find(r, key, &qq);
    r->pos[qq][i] = pos;
    return pos;
}

void cache_policy_ref_release(cache_policy_ref *r, int64_t key) {
    int q;
    const int64_t i = ref_find(r, key, &q);
    CGNN_CHECK(i >= 0 && r->pin[q][i] > 0);
    r->pin[q][i]--;
}
