/* rng.h — counter-based, seedable random numbers.
 *
 * Determinism is a contract of cgnn: a batch's content depends only on (seed, epoch, batch
 * index). So every random stream is derived from a key built by hashing those integers
 * (rng_key), never from a shared generator whose state depends on thread timing.
 * The generator is SplitMix64 (passes BigCrush; one add + one mix per draw) and bounded
 * draws use Lemire's unbiased multiply-and-reject method.
 */
#ifndef CGNN_RNG_H
#define CGNN_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t state;
} rng;

/* The SplitMix64 finaliser: a bijective 64-bit mix. */
static inline uint64_t rng_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Combines integers into a stream key; different argument tuples give unrelated keys. */
static inline uint64_t rng_key(uint64_t a, uint64_t b) {
    return rng_mix64(rng_mix64(a + 0x9e3779b97f4a7c15ULL) ^ (b * 0xd6e8feb86659fd93ULL + 0x632be59bd9b4e019ULL));
}

static inline void rng_init(rng *r, uint64_t key) { r->state = rng_mix64(key); }

static inline uint64_t rng_next_u64(rng *r) {
    r->state += 0x9e3779b97f4a7c15ULL;
    return rng_mix64(r->state);
}

/* Uniform integer in [0, n), n >= 1, unbiased (Lemire 2019). */
static inline uint64_t rng_below(rng *r, uint64_t n) {
    uint64_t x = rng_next_u64(r);
    unsigned __int128 m = (unsigned __int128)x * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t t = (0 - n) % n;
        while (lo < t) {
            x = rng_next_u64(r);
            m = (unsigned __int128)x * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double rng_uniform(rng *r) { return (double)(rng_next_u64(r) >> 11) * 0x1.0p-53; }

/* Standard normal draw (Box-Muller; uses two uniforms, returns one value). */
double rng_normal(rng *r);

#endif
