/* bench.h — throughput measurements of the hot paths and the machine limits they are
 * compared with (measured in the same run: machines differ and are noisy, so every figure
 * is a median over repeats and is reported as a fraction of a limit measured alongside). */
#ifndef CGNN_BENCH_H
#define CGNN_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* Median of v[0..n) (reorders v). */
double bench_median(double *v, int n);

/* Memory-copy bandwidth: memcpy of a `bytes` buffer split over `threads` threads, median
 * over `reps` runs, in GB/s of bytes copied (each byte read once and written once). */
double bench_copy_bandwidth(size_t bytes, int threads, int reps);

typedef struct bench_sample_opts {
    const char *dataset;        /* dataset directory */
    int64_t fanouts[8];
    int num_layers;
    int64_t batch_size;
    int replace;
    int threads;                /* max threads to scale to (default: cores) */
    int batches;                /* batches per repeat */
    int reps;                   /* repeats (median) */
    uint64_t seed;
} bench_sample_opts;

/* `cgnn bench sample`: sampling edges/s (per core, 1 and N threads), seeds/s, feature gather
 * GB/s next to copy bandwidth, end-to-end loader throughput. Prints a report to out.
 * Returns 0 or -1 with *err. */
int bench_sample_run(const bench_sample_opts *o, FILE *out, cgnn_err *err);

#endif
