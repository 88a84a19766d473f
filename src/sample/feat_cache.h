/* feat_cache.h — a local copy of often-needed remote feature rows, on a partitioned graph.
 *
 * graphlearn-for-pytorch keeps the features of the "hottest" remote nodes on every partition
 * (its FrequencyPartitioner: access counts from sampling the partition's training seeds, then
 * the top cache_ratio x N nodes, or as many as cache_memory_budget bytes hold). The cache here
 * does the same at the start of a job, in both deployments: a trainer of worker mode caches the
 * rows its FEAT requests would fetch, a storage rank of server-client mode the rows it fetches
 * from the other storage ranks. It sits behind gather_part's fetch_remote callback: `view` is the
 * uncached view with fetch_remote replaced, so the gathers (and their callers) are unchanged;
 * cached rows are copied from here, the rest fetched as before, in one request per owner. Rows
 * are copied bytes of the feature's own dtype, so the cache never changes a number.
 *
 * Policies (which remote nodes are kept, best first; ties by smaller id; nodes never reached
 * are never kept):
 *   hotness  how often a node was an input node of cache_presample_batches batches of this
 *            rank's training seeds, sampled with the job's fanouts under a key of its own
 *            (GLT's pre-sampling; never the training batches' own draws); equal counts — the
 *            many nodes seen once or twice, and after them the nodes never seen — by the whole
 *            graph's in-degree when the plan has it (measured on products, 4 parts, 20% cache:
 *            49.5% of the remote rows by counts alone, docs/DISTRIBUTED.md, "Feature cache")
 *   degree   the whole graph's in-degree (PaGraph-style; needs the in-degrees of every part)
 *   halo     the 1-hop halo: remote in-neighbours of own nodes, by how many own nodes they
 *            point to (DistDGL's halo nodes, ranked)
 * Size: cache_ratio x N rows and / or cache_memory_budget bytes of rows (both given: the
 * smaller, as GLT), never more than the candidates.
 *
 * Adaptive policies (GraphBolt's CPUCachedFeature; sample/cache_policy.h has their semantics):
 *   sieve, s3fifo, lru, clock   the cache starts empty and keeps the rows the batches fetched,
 *            evicting by the policy; nothing is chosen or fetched at build time. The cache needs
 *            only inner->fetch_remote ("fetch these missing rows"): any row source (remote parts
 *            today, a disk reader later) behind a gather_part.
 *   Size: cache_ratio x N slots and / or the largest slot count whose rows AND policy metadata
 *   (cache_policy_bytes: list nodes, key table, S3-FIFO's ghosts) fit cache_memory_budget
 *   (both: the smaller), never more than the remote nodes.
 *   Order: each fetch call is one batch; its lookups, insertions and evictions run under the
 *   cache's mutex in the call's order (part by part, ids in the batch's order), so the hit
 *   sequence is a function of the sequence of calls (one loader worker: the batch order).
 *   Rows are copied outside the mutex: a batch's hits and insertions are pinned (never
 *   evicted or overwritten) until the batch has its rows; a key being written by another batch
 *   is served uncached. A row served is always the source's bytes: the numbers never change.
 *
 * Threads: the fetch is called concurrently by the sampler threads (or storage workers); each
 * call takes its scratch from a pool. A static cache is read-only after feat_cache_build; an
 * adaptive one changes under c->mu. Counters (rows asked, rows found) are atomic.
 */
#ifndef CGNN_FEAT_CACHE_H
#define CGNN_FEAT_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "graph/csc.h"
#include "sample/cache_policy.h"
#include "sample/gather.h"
#include "sample/sampler.h"
#include "util/err.h"

typedef enum feat_cache_policy {
    FEAT_CACHE_NONE,
    FEAT_CACHE_HOTNESS,
    FEAT_CACHE_DEGREE,
    FEAT_CACHE_HALO,
    FEAT_CACHE_SIEVE, /* adaptive (cache_policy.h) from here on */
    FEAT_CACHE_S3FIFO,
    FEAT_CACHE_LRU,
    FEAT_CACHE_CLOCK,
    FEAT_CACHE_POLICY_COUNT
} feat_cache_policy;

/* "none", "hotness", "degree", "halo", "sieve", "s3fifo", "lru", "clock" */
const char *feat_cache_policy_name(feat_cache_policy p);
int feat_cache_policy_adaptive(feat_cache_policy p);

typedef struct feat_cache_scratch feat_cache_scratch;

typedef struct feat_cache {
    gather_part view;          /* what the gathers use (pass-through until built) */
    const gather_part *inner;  /* the uncached fetch, borrowed */
    size_t row_bytes;          /* one row in the feature's dtype */
    int64_t n;                 /* cached rows */
    int64_t *ids;              /* (n) their global ids, ascending */
    unsigned char *rows;       /* (n, row_bytes) */
    int64_t *table;            /* (mask + 1) open addressing over ids: index into ids, -1 = empty */
    uint64_t mask;
    int hash_shift;
    _Atomic uint64_t asked, found; /* remote rows asked of the cache, and found in it */
    feat_cache_policy policy;  /* what feat_cache_build built (NONE before) */
    double bytes;              /* rows + lookup table / policy metadata, once built */
    /* adaptive: rows is (slots, row_bytes), slot i holding the key pol gave it */
    cache_policy *pol;         /* owned; NULL: static */
    int64_t slots;
    pthread_mutex_t mu;        /* the scratch pool, and pol */
    feat_cache_scratch **pool;
    int pool_len, pool_cap;
} feat_cache;

/* What feat_cache_build needs. */
typedef struct feat_cache_plan {
    feat_cache_policy policy;
    double ratio;              /* of the graph's nodes (0: no size by ratio) */
    int64_t budget;            /* bytes of rows (0: no size by memory) */
    /* hotness: pre-sampling this rank's training seeds */
    const csc_graph *local;    /* the own nodes' index (also the halo policy's) */
    const sampler_part *part;  /* with pick_remote */
    sampler_config sampler;
    const int64_t *seeds;      /* (n_items, width) the training items: nodes, or pairs (both ends are seeds) */
    int64_t n_items;
    int width;
    int64_t batch_size;
    int64_t max_batches;
    uint64_t key;              /* the pre-sampling key (never the training batches') */
    int nthreads;
    /* the whole graph's in-degrees, (N) in the partitioned graph's ids: the degree policy's
     * scores, the hotness policy's second key (NULL there: counts alone) */
    const int64_t *degrees;
} feat_cache_plan;

typedef struct feat_cache_report {
    int64_t rows;              /* cached */
    int64_t capacity;          /* what the size allowed */
    int64_t candidates;        /* remote nodes the policy ranked (reached at all) */
    int64_t presampled_batches;
    double seconds;            /* the whole build (pre-sampling and fetching the rows) */
    double bytes;              /* rows + lookup table (adaptive: slots x row bytes + the policy's metadata) */
    int adaptive;              /* rows = 0 (empty until batches fill it), capacity = slots */
} feat_cache_report;

/* An empty cache over inner (borrowed; its fetch_remote is what the cache falls back to), rows of
 * row_bytes bytes: c->view passes everything through until feat_cache_build. */
void feat_cache_init(feat_cache *c, const gather_part *inner, size_t row_bytes);
void feat_cache_free(feat_cache *c); /* NULL-safe */

/* Rows the size allows: min of ratio x num_nodes and budget / row_bytes where given. */
int64_t feat_cache_capacity(int64_t num_nodes, double ratio, int64_t budget, size_t row_bytes);

/* Chooses the remote nodes by plan->policy, fetches their rows from their owners (through inner,
 * in chunks) and switches c->view to the cache. Called once, before the gathers run; the owners'
 * services must be running. Returns 0, or -1 with *err (a peer failed). */
int feat_cache_build(feat_cache *c, const feat_cache_plan *plan, feat_cache_report *rep, cgnn_err *err);

/* Slots of an adaptive cache: min of ratio x num_nodes (ratio > 0) and the most slots whose
 * rows and metadata fit budget bytes (budget > 0), and max_slots. */
int64_t feat_cache_adaptive_capacity(feat_cache_policy p, int64_t num_nodes, double ratio, int64_t budget,
                                     size_t row_bytes, int64_t max_slots);

/* An adaptive cache (p adaptive) of `slots` slots, empty; view switched. 0 or -1 with *err. */
int feat_cache_start_adaptive(feat_cache *c, feat_cache_policy p, int64_t slots, cgnn_err *err);

/* Caches exactly ids[0..n) (ascending, distinct, all remote): the rows fetched, view switched. */
int feat_cache_fill(feat_cache *c, const int64_t *ids, int64_t n, cgnn_err *err);

/* Top k remote nodes (outside [own_lo, own_hi)) by score, then by second (NULL: none), then
 * the smaller id; only nodes with score > 0 or second > 0; written to out ascending. Returns the
 * count (<= k); *candidates = the remote nodes that could be chosen. */
int64_t feat_cache_select(int64_t *out, const uint32_t *score, const uint32_t *second, int64_t num_nodes,
                          int64_t own_lo, int64_t own_hi, int64_t k, int64_t *candidates);

/* Pre-sampling (the hotness policy): counts[v] += times v is an input node of each batch of
 * plan's seeds (up to max_batches, in an order shuffled by plan->key). counts (N) zeroed by the
 * caller. *batches = the batches sampled. Returns 0 or -1 with *err. */
int feat_cache_presample(uint32_t *counts, const feat_cache_plan *plan, int64_t *batches, cgnn_err *err);

/* Halo scores: score[v] += 1 for every in-edge of an own node whose source v is remote. */
void feat_cache_halo_scores(uint32_t *score, const csc_graph *local);

/* Reads the counters (remote rows asked of the cache, rows found), resetting them with reset. */
void feat_cache_counters(feat_cache *c, int reset, uint64_t *asked, uint64_t *found);

/* The cached row of global id v, or NULL (tests). */
const void *feat_cache_row(const feat_cache *c, int64_t v);

#endif
