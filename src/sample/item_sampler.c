/* item_sampler.c — per-epoch shuffling and per-rank batching; see item_sampler.h. */
#include "sample/item_sampler.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/rng.h"

void item_sampler_init(item_sampler *s, int64_t num_items, int64_t batch_size, int shuffle,
                       int drop_last, uint64_t seed, int rank, int world_size, int drop_uneven) {
    CGNN_CHECK(batch_size >= 1 && world_size >= 1 && rank >= 0 && rank < world_size && num_items >= 0);
    memset(s, 0, sizeof *s);
    s->num_items = num_items;
    s->batch_size = batch_size;
    s->shuffle = shuffle;
    s->drop_last = drop_last;
    s->drop_uneven = drop_uneven;
    s->seed = seed;
    s->rank = rank;
    s->world_size = world_size;
    s->epoch = -1;
    s->perm = cgnn_malloc((size_t)(num_items ? num_items : 1) * sizeof(int64_t));
}

void item_sampler_free(item_sampler *s) {
    if (!s) return;
    free(s->perm);
    memset(s, 0, sizeof *s);
}

/* Start and length of rank r's slice (DGL's count_split). */
static void rank_slice(const item_sampler *s, int r, int64_t *begin, int64_t *len) {
    const int64_t B = s->batch_size, W = s->world_size, total = s->num_items;
    const int64_t quotient = total / (W * B), remainder = total % (W * B);
    const int64_t full_extra = remainder / B, last = remainder % B;
    int64_t start = 0;
    *begin = *len = 0;
    for (int q = 0; q <= r; q++) {
        int64_t n = quotient * B + (q < full_extra ? B : (q == full_extra ? last : 0));
        if (q == r) {
            *begin = start;
            *len = n;
            return;
        }
        start += n;
    }
}

static int64_t slice_batches(const item_sampler *s, int64_t len) {
    return s->drop_last ? len / s->batch_size : (len + s->batch_size - 1) / s->batch_size;
}

int64_t item_sampler_rank_batches(const item_sampler *s, int r) {
    int64_t b = 0, l = 0;
    rank_slice(s, r, &b, &l);
    return slice_batches(s, l);
}

void item_sampler_set_epoch(item_sampler *s, int epoch) {
    s->epoch = epoch;
    const int64_t n = s->num_items;
    for (int64_t i = 0; i < n; i++) s->perm[i] = i;
    if (s->shuffle && n > 1) {
        rng r;
        rng_init(&r, rng_key(s->seed ^ 0x5851f42d4c957f2dULL, (uint64_t)epoch));
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1);
            int64_t t = s->perm[i];
            s->perm[i] = s->perm[j];
            s->perm[j] = t;
        }
    }
    rank_slice(s, s->rank, &s->slice_begin, &s->slice_len);
    s->num_batches = slice_batches(s, s->slice_len);
    if (s->drop_uneven) {
        for (int q = 0; q < s->world_size; q++) {
            int64_t nb = item_sampler_rank_batches(s, q);
            if (nb < s->num_batches) s->num_batches = nb;
        }
    }
}

int64_t item_sampler_batch(const item_sampler *s, int64_t b, const int64_t **items) {
    CGNN_CHECK(b >= 0 && b < s->num_batches);
    int64_t off = b * s->batch_size;
    int64_t n = s->slice_len - off;
    if (n > s->batch_size) n = s->batch_size;
    *items = s->perm + s->slice_begin + off;
    return n;
}

uint64_t item_sampler_batch_key(const item_sampler *s, int64_t b) {
    (void)b;
    return rng_key(s->seed, (uint64_t)s->epoch);
}
