/* rng.c — the non-inline parts of rng.h. */
#include "util/rng.h"

#include <math.h>

double rng_normal(rng *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
