/* item_sampler.h — which split items go into which batch, per epoch and per rank.
 *
 * Semantics of DGL GraphBolt's ItemSampler / DistributedItemSampler:
 *   - every epoch the whole split is permuted by one shuffle keyed on (seed, epoch) — the same
 *     permutation on every rank (no communication needed);
 *   - with world_size W and batch size B, the permuted items are cut into contiguous per-rank
 *     slices at batch granularity: each rank gets total / (W*B) full batches, the next
 *     (total % (W*B)) / B full batches go one each to ranks 0, 1, ..., and the final partial
 *     batch (total % B items) to the rank after those;
 *   - drop_last drops the partial batch;
 *   - drop_uneven makes every rank run the same number of batches (the minimum over ranks),
 *     dropping the surplus of the larger slices.
 * Batch b of a rank holds items perm[slice_begin + b*B .. min(+B, slice_end)).
 * Items are indices into the split (0 .. num_items-1), not node ids.
 */
#ifndef CGNN_ITEM_SAMPLER_H
#define CGNN_ITEM_SAMPLER_H

#include <stdint.h>

typedef struct item_sampler {
    int64_t num_items;
    int64_t batch_size;
    int shuffle, drop_last, drop_uneven;
    uint64_t seed;
    int rank, world_size;
    int epoch;
    int64_t *perm;          /* (num_items) this epoch's order, owned */
    int64_t slice_begin;    /* this rank's slice of perm */
    int64_t slice_len;
    int64_t num_batches;    /* this rank's batches this epoch */
} item_sampler;

/* Sets up a sampler over num_items items; call item_sampler_set_epoch before use.
 * batch_size >= 1, 0 <= rank < world_size. The caller owns *s (item_sampler_free). */
void item_sampler_init(item_sampler *s, int64_t num_items, int64_t batch_size, int shuffle,
                       int drop_last, uint64_t seed, int rank, int world_size, int drop_uneven);
void item_sampler_free(item_sampler *s); /* NULL-safe */

/* Computes the permutation and this rank's slice for `epoch`. */
void item_sampler_set_epoch(item_sampler *s, int epoch);

/* The items of batch b (0 <= b < num_batches): *items points into s->perm; returns count. */
int64_t item_sampler_batch(const item_sampler *s, int64_t b, const int64_t **items);

/* Batches rank r would run (before drop_uneven); used for drop_uneven and the Join logic. */
int64_t item_sampler_rank_batches(const item_sampler *s, int r);

/* The neighbour-sampling key of batch b: one key per (seed, epoch), the same on every rank
 * and for every batch (see sampler.h: draws are keyed per node and hop). */
uint64_t item_sampler_batch_key(const item_sampler *s, int64_t b);

#endif
