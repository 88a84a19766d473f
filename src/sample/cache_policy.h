/* cache_policy.h — adaptive cache replacement policies over int64 keys: GraphBolt's SIEVE,
 * S3-FIFO, LRU and CLOCK (graphbolt/src/cache_policy.h), in C, with the same semantics.
 *
 * The policy decides which keys hold which of `capacity` slots; it never touches the rows (the
 * caller keeps a (capacity, row_bytes) array indexed by slot: sample/feat_cache.h). It is not
 * thread-safe: the caller serialises every call (feat_cache: one mutex per cache).
 *
 * GraphBolt's model, kept here: an entry is pinned ("in use") while a reader copies its row or a
 * writer fills it; eviction skips pinned entries (treating them as just used), so a batch never
 * evicts a key it has already looked up or inserted. A new key is pushed to the front of its
 * queue *before* the eviction that frees its slot (as GraphBolt: it is pinned, so never the victim).
 *   SIEVE   one FIFO queue and a hand moving from the back (oldest) to the front; a hit sets the
 *           visited bit; eviction clears visited bits under the hand until an unvisited entry
 *   S3-FIFO a small FIFO (10% of the slots), a main FIFO, a ghost FIFO of keys (90%); a hit
 *           increments a frequency capped at 3; new keys enter the small queue, or the main one when
 *           their key is a ghost; the small queue's back is promoted to main when it was hit, else
 *           evicted into the ghosts; main's back is reinserted with frequency - 1 while > 0
 *   LRU     one queue; a hit moves the entry to the front; the back is evicted
 *   CLOCK   one queue; a hit sets the bit; the back is evicted when its bit is clear, else its bit
 *           is cleared and it moves to the front
 * Where GraphBolt fails (every entry pinned: "larger cache capacity is needed") the insert here
 * answers -1 at once, touching nothing (the caller serves the row uncached): a batch with more
 * distinct rows than the cache has slots caches its first rows only.
 *
 * Memory (cache_policy_bytes, exact: what cache_policy_init allocates): capacity + 1 list nodes of
 * 8 (key) + 8 + 8 (links) + 8 (slot) + 4 (pins) + 1 (freq) + 1 (queue) + 1 (state) bytes, a key ->
 * node table of 16 bytes per entry (a power of two >= 2 (capacity + 1)), capacity x 8 bytes of free
 * slots; S3-FIFO also its ghost ring (8 bytes per key + 1) and ghost set (a table as above).
 *
 * cache_policy_ref_* (below) is the plain reference: the same policies on arrays with linear
 * searches, obviously correct and slow (tests compare the two access by access).
 */
#ifndef CGNN_CACHE_POLICY_H
#define CGNN_CACHE_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef enum cache_policy_kind {
    CACHE_KIND_SIEVE,
    CACHE_KIND_S3FIFO,
    CACHE_KIND_LRU,
    CACHE_KIND_CLOCK,
    CACHE_KIND_COUNT
} cache_policy_kind;

const char *cache_policy_kind_name(cache_policy_kind k); /* "sieve", "s3fifo", "lru", "clock" */

/* open addressing key -> value (linear probing, backward-shift deletion); keys >= 0 */
typedef struct cache_map {
    int64_t *keys, *vals; /* (mask + 1); key -1 = empty */
    uint64_t mask;
    int shift;
} cache_map;

typedef struct cache_policy {
    cache_policy_kind kind;
    int64_t capacity;          /* slots */
    int64_t used;              /* slots handed out from the fresh range [0, used) */
    int64_t n_free, *free_slot; /* (capacity) slots given back by cache_policy_remove */
    /* list nodes (capacity + 1): next points to the back (older), prev to the front (newer) */
    int64_t *key, *next, *prev, *slot;
    int32_t *pins;
    int8_t *freq;
    uint8_t *queue;            /* S3-FIFO: 0 small, 1 main; else 0 */
    uint8_t *state;            /* bit 1: being written */
    int64_t *free_node, n_free_node; /* (capacity + 1) */
    int64_t front[2], back[2]; /* per queue; -1 = empty */
    int64_t count[2];          /* nodes per queue */
    int64_t n_pinned;          /* nodes with pins > 0 */
    int64_t hand;              /* SIEVE: node, -1 = end() */
    int64_t small_size, small_target; /* S3-FIFO (GraphBolt's counters) */
    int64_t *ghost, ghost_cap, ghost_head, ghost_tail; /* S3-FIFO ring of ghost_cap + 1 keys */
    cache_map map;             /* key -> node */
    cache_map ghost_set;       /* S3-FIFO: key -> 1 */
} cache_policy;

/* Bytes cache_policy_init(kind, capacity) allocates. */
size_t cache_policy_bytes(cache_policy_kind kind, int64_t capacity);

/* capacity >= 1. Returns 0, or -1 with *err (out of memory). */
int cache_policy_init(cache_policy *cp, cache_policy_kind kind, int64_t capacity, cgnn_err *err);
void cache_policy_free(cache_policy *cp); /* NULL-safe, idempotent after init */

#define CACHE_POLICY_ABSENT (-1)
#define CACHE_POLICY_BUSY (-2)

/* A lookup (GraphBolt's Read): a present key counts as accessed (policy state updated); when its
 * row is readable it is pinned and its slot returned; CACHE_POLICY_BUSY: present but being
 * written (another batch's miss: serve it uncached, insert nothing); CACHE_POLICY_ABSENT. */
int64_t cache_policy_lookup(cache_policy *cp, int64_t key);

/* Inserts an absent key, pinned and being written: the slot its row goes to (the evicted key's,
 * *evicted = that key or -1), or -1 when every entry is pinned (nothing changed for key). */
int64_t cache_policy_insert(cache_policy *cp, int64_t key, int64_t *evicted);

/* Unpins a key looked up (hit) or inserted (its row now written: readable). */
void cache_policy_release(cache_policy *cp, int64_t key);

/* Drops a key inserted whose row could not be written (its slot is free again). */
void cache_policy_remove(cache_policy *cp, int64_t key);

int64_t cache_policy_size(const cache_policy *cp); /* keys held */

/* ---- the plain reference: the same decisions, arrays in queue order, linear searches ----- */
typedef struct cache_policy_ref {
    cache_policy_kind kind;
    int64_t capacity, used;
    int64_t n[2];          /* entries per queue, [0] the only one but for S3-FIFO */
    int64_t *k[2], *pos[2]; /* (capacity + 1) keys / slots, index 0 = front (newest) */
    int *f[2], *pin[2];
    int64_t hand;          /* SIEVE: index into queue 0, or n[0] = end() */
    int64_t small_size, small_target;
    int64_t *ghost, ghost_n, ghost_cap; /* FIFO of keys, [0] oldest */
    int64_t *gset, gset_n; /* the ghost set, unordered */
} cache_policy_ref;

void cache_policy_ref_init(cache_policy_ref *r, cache_policy_kind kind, int64_t capacity); /* aborts on OOM */
void cache_policy_ref_free(cache_policy_ref *r);
int64_t cache_policy_ref_lookup(cache_policy_ref *r, int64_t key);              /* slot, or -1 (no writes pending) */
int64_t cache_policy_ref_insert(cache_policy_ref *r, int64_t key, int64_t *evicted); /* slot or -1 */
void cache_policy_ref_release(cache_policy_ref *r, int64_t key);

#endif
