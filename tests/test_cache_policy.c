/* test_cache_policy.c — sample/cache_policy: SIEVE, S3-FIFO, LRU, CLOCK (GraphBolt's semantics)
 * on hand-computed sequences, and access by access equal to the plain reference (the same hits,
 * slots and evictions) on long skewed random batch sequences, pinned entries included; the
 * memory accounting is what is allocated. */
#include <stdlib.h>

#include "sample/cache_policy.h"
#include "test.h"
#include "util/rng.h"

/* One access per batch: lookup, insert when absent, release. Returns 1 for a hit. */
static int access1(cache_policy *cp, int64_t key, int64_t *evicted) {
    *evicted = -1;
    int64_t s = cache_policy_lookup(cp, key);
    const int hit = s >= 0;
    if (!hit) s = cache_policy_insert(cp, key, evicted);
    if (s >= 0) cache_policy_release(cp, key);
    return hit;
}

/* capacity 3: A B C A D E B (A=0 ... E=4) — the victims by hand (see the comment per policy) */
TEST(hand_computed) {
    const int64_t seq[7] = {0, 1, 2, 0, 3, 4, 1};
    /* SIEVE: A visited; D: hand from the back clears A, evicts B (hand stays at A); E: C; B: D.
     * CLOCK: D: A's bit cleared, A to the front, B evicted; E: C; B: D.
     * LRU: the hit moves A to the front: D evicts B, E evicts C, B evicts A. */
    const int64_t want[3][3] = {{1, 2, 3}, {1, 2, 0}, {1, 2, 3}};
    const cache_policy_kind kinds[3] = {CACHE_KIND_SIEVE, CACHE_KIND_LRU, CACHE_KIND_CLOCK};
    for (int k = 0; k < 3; k++) {
        cache_policy cp;
        cgnn_err err = {0};
        ASSERT_EQ(cache_policy_init(&cp, kinds[k], 3, &err), 0);
        int hits = 0, nev = 0;
        for (int i = 0; i < 7; i++) {
            int64_t ev;
            const int h = access1(&cp, seq[i], &ev);
            hits += h;
            ASSERT_EQ(h, i == 3);
            if (ev >= 0) {
                ASSERT(nev < 3);
                ASSERT_EQ(ev, want[k][nev]);
                nev++;
            }
        }
        ASSERT_EQ(nev, 3);
        ASSERT_EQ(hits, 1);
        ASSERT_EQ(cache_policy_size(&cp), 3);
        cache_policy_free(&cp);
    }
}

/* S3-FIFO: capacity 10 (small queue 1, ghosts 9): keys 0..9 fill the small queue; 10 evicts the
 * oldest unvisited small entry (0) into the ghosts; 0 again enters the main queue; a key hit while
 * small is promoted to main instead of being evicted. */
TEST(s3fifo_ghosts) {
    cache_policy cp;
    cgnn_err err = {0};
    ASSERT_EQ(cache_policy_init(&cp, CACHE_KIND_S3FIFO, 10, &err), 0);
    int64_t ev;
    for (int64_t k = 0; k < 10; k++) ASSERT_EQ(access1(&cp, k, &ev), 0);
    ASSERT_EQ(access1(&cp, 1, &ev), 1); /* 1 visited */
    ASSERT_EQ(access1(&cp, 10, &ev), 0);
    ASSERT_EQ(ev, 0); /* the small queue's back */
    ASSERT_EQ(access1(&cp, 11, &ev), 0);
    ASSERT_EQ(ev, 2); /* 1 was visited: promoted to main, 2 evicted */
    ASSERT_EQ(access1(&cp, 0, &ev), 0); /* a ghost: into main */
    int64_t n0 = -1;
    for (uint64_t i = 0; i <= cp.map.mask; i++)
        if (cp.map.keys[i] == 0) n0 = cp.map.vals[i];
    ASSERT(n0 >= 0);
    ASSERT_EQ(cp.queue[n0], 1);
    ASSERT_EQ(access1(&cp, 1, &ev), 1); /* still cached (in main) */
    cache_policy_free(&cp);
}

/* Batches of distinct keys: every key of a batch looked up (or inserted) before any is released,
 * as feat_cache does; fast and reference agree on every answer. */
static void compare(cache_policy_kind kind, int64_t capacity, int64_t universe, int max_batch, int batches,
                    uint64_t seed, int64_t *hits_out) {
    cache_policy cp;
    cache_policy_ref ref;
    cgnn_err err = {0};
    ASSERT_EQ(cache_policy_init(&cp, kind, capacity, &err), 0);
    cache_policy_ref_init(&ref, kind, capacity);
    rng r;
    rng_init(&r, seed);
    int64_t *batch = malloc((size_t)max_batch * sizeof(int64_t)), *slot = malloc((size_t)max_batch * sizeof(int64_t));
    int64_t hits = 0, fails = 0;
    int bad = 0;
    for (int b = 0; b < batches && !bad; b++) {
        const int n = 1 + (int)rng_below(&r, (uint64_t)max_batch);
        int m = 0;
        for (int i = 0; i < n; i++) { /* skewed: a product of two uniforms */
            const uint64_t u = (uint64_t)universe;
            const int64_t k = (int64_t)(rng_below(&r, u) * rng_below(&r, u) / u);
            int dup = 0;
            for (int j = 0; j < m; j++) dup |= batch[j] == k;
            if (!dup) batch[m++] = k;
        }
        for (int i = 0; i < m && !bad; i++) {
            const int64_t s = cache_policy_lookup(&cp, batch[i]), s_ref = cache_policy_ref_lookup(&ref, batch[i]);
            if (s != s_ref) bad = 1;
            if (s >= 0) {
                hits++;
                slot[i] = s;
                continue;
            }
            int64_t ev, ev_ref;
            const int64_t t = cache_policy_insert(&cp, batch[i], &ev);
            const int64_t t_ref = cache_policy_ref_insert(&ref, batch[i], &ev_ref);
            if (t != t_ref || (t >= 0 && ev != ev_ref)) bad = 1;
            fails += t < 0;
            slot[i] = t;
        }
        for (int i = 0; i < m && !bad; i++)
            if (slot[i] >= 0) cache_policy_release(&cp, batch[i]), cache_policy_ref_release(&ref, batch[i]);
        if (cache_policy_size(&cp) > capacity) bad = 1;
    }
    ASSERT_EQ(bad, 0);
    if (max_batch > capacity) ASSERT(fails > 0); /* a batch larger than the cache: some served uncached */
    else ASSERT_EQ(fails, 0);
    *hits_out = hits;
    free(batch);
    free(slot);
    cache_policy_free(&cp);
    cache_policy_ref_free(&ref);
}

TEST(equals_reference) {
    const int64_t caps[4] = {1, 3, 10, 57};
    for (int k = 0; k < CACHE_KIND_COUNT; k++) {
        for (int c = 0; c < 4; c++) {
            int64_t hits = 0;
            const int maxb = caps[c] >= 10 ? 8 : 2 * (int)caps[c] + 1;
            compare((cache_policy_kind)k, caps[c], 300, maxb, 1500, 11 + (uint64_t)(k * 4 + c), &hits);
            if (caps[c] >= 10) ASSERT(hits > 0);
        }
    }
}

/* a skewed stream: every adaptive policy beats nothing, and the hit counts differ by policy */
TEST(policies_differ) {
    int64_t h[CACHE_KIND_COUNT];
    for (int k = 0; k < CACHE_KIND_COUNT; k++) compare((cache_policy_kind)k, 40, 400, 6, 2000, 5, &h[k]);
    int differ = 0;
    for (int k = 1; k < CACHE_KIND_COUNT; k++) differ |= h[k] != h[0];
    ASSERT(differ);
    for (int k = 0; k < CACHE_KIND_COUNT; k++) ASSERT(h[k] > 0);
}

/* a key being written (another batch's miss) is BUSY: accessed but not pinned; removal frees it */
TEST(busy_and_remove) {
    cache_policy cp;
    cgnn_err err = {0};
    ASSERT_EQ(cache_policy_init(&cp, CACHE_KIND_CLOCK, 2, &err), 0);
    int64_t ev;
    ASSERT_EQ(cache_policy_insert(&cp, 7, &ev), 0);
    ASSERT_EQ(cache_policy_lookup(&cp, 7), CACHE_POLICY_BUSY);
    ASSERT_EQ(cache_policy_insert(&cp, 8, &ev), 1);
    ASSERT_EQ(cache_policy_insert(&cp, 9, &ev), -1); /* both pinned */
    cache_policy_remove(&cp, 8);                      /* its fetch failed */
    ASSERT_EQ(cache_policy_lookup(&cp, 8), CACHE_POLICY_ABSENT);
    ASSERT_EQ(cache_policy_insert(&cp, 9, &ev), 1); /* the slot given back */
    cache_policy_release(&cp, 7);
    cache_policy_release(&cp, 9);
    ASSERT_EQ(cache_policy_lookup(&cp, 7), 0);
    cache_policy_release(&cp, 7);
    ASSERT_EQ(cache_policy_size(&cp), 2);
    cache_policy_free(&cp);
}

TEST(bytes) {
    /* nodes (cap + 1) x 39 + free nodes 8 (cap + 1) + free slots 8 cap + table 16 x 2^k */
    ASSERT_EQ(cache_policy_bytes(CACHE_KIND_SIEVE, 100), (size_t)(101 * 39 + 101 * 8 + 100 * 8 + 256 * 16));
    ASSERT_EQ(cache_policy_bytes(CACHE_KIND_S3FIFO, 100),
              (size_t)(101 * 39 + 101 * 8 + 100 * 8 + 256 * 16 + 91 * 8 + 256 * 16));
    ASSERT(cache_policy_bytes(CACHE_KIND_LRU, 1000) < 1000 * 120);
}

int main(void) {
    RUN(hand_computed);
    RUN(s3fifo_ghosts);
    RUN(equals_reference);
    RUN(policies_differ);
    RUN(busy_and_remove);
    RUN(bytes);
    return test_summary();
}
