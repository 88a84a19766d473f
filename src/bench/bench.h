/* bench.h — throughput measurements of the hot paths and the machine limits they are
 * compared with (measured in the same run: machines differ and are noisy, so every figure
 * is a median over repeats and is reported as a fraction of a limit measured alongside). */
#ifndef CGNN_BENCH_H
#define CGNN_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "nn/model.h"
#include "sample/minibatch.h"
#include "util/err.h"

/* Median of v[0..n) (reorders v). */
double bench_median(double *v, int n);

/* Memory-copy bandwidth: memcpy of a `bytes` buffer split over `threads` threads, median
 * over `reps` runs, in GB/s of bytes copied (each byte read once and written once). */
double bench_copy_bandwidth(size_t bytes, int threads, int reps);

/* The CPU's float32 peak at one vector width (128: SSE multiply + add; 256: AVX2 FMA; 512:
 * AVX-512 FMA) on `threads` threads, GFLOP/s, median over `reps` (bench_peak.c: a register-only
 * loop). 0 when the CPU (or the OS) lacks the width. */
int bench_cpu_has_width(int width);
double bench_fma_peak(int width, int threads, int reps);

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
    const char *weights;        /* --weights NAME: also time weighted sampling with this edge feature
                                   (sample/sample_weights.h); NULL: uniform only */
} bench_sample_opts;

/* `cgnn bench sample`: sampling edges/s (per core, 1 and N threads), seeds/s, feature gather
 * GB/s next to copy bandwidth, end-to-end loader throughput. Prints a report to out.
 * Returns 0 or -1 with *err. */
int bench_sample_run(const bench_sample_opts *o, FILE *out, cgnn_err *err);

typedef struct bench_train_opts {
    const char *dataset;        /* dataset directory with a node-classification task */
    model_kind model;
    int model_is_default;       /* --model not given: HeteroSAGE on a typed dataset */
    int num_layers;             /* = the number of fanouts */
    int64_t fanouts[MINIBATCH_MAX_LAYERS];
    int64_t batch_size;
    int64_t hidden;
    int heads;                  /* GAT heads */
    double dropout;
    int threads;                /* compute threads (OpenMP + OpenBLAS); 0 = all cores */
    int workers;                /* sampler threads of the pipelined run */
    int gather_threads;         /* threads of each batch's feature gather (loader_config); 0 = 1 */
    int steps, warmup;          /* timed steps (medians over them), untimed steps before */
    uint64_t seed;
} bench_train_opts;

/* `cgnn bench train`: training steps (loader -> forward -> loss -> backward -> Adam) on the
 * dataset's node-classification train split (a typed dataset: the typed path of cgnn train, with
 * HeteroSAGE or RGCN, the fanouts on every edge type, learnable tables for featureless types). Each round runs the pipelined step (sampler
 * threads prefetching), the same step again on the same built batch (compute alone, on a
 * second copy of the parameters) and the step's GEMMs replayed through cblas_sgemm (the
 * same-shape peak); every GEMM is counted and timed through ops_gemm_stats. Then, in the same
 * process: the producers alone, a 2048^3 sgemm, memcpy bandwidth. Prints a table and, last,
 * one JSON line. Returns 0, or -1 with *err (CGNN_ERR_INPUT for a missing or unsuitable
 * dataset, naming it and how to generate the default one). */
int bench_train_run(const bench_train_opts *o, FILE *out, cgnn_err *err);

typedef struct bench_lightgcn_opts {
    const char *dataset;        /* a homogeneous dataset with a link-prediction train split */
    int64_t dim;                /* embedding dim D (64) */
    int num_layers;             /* L (3) */
    int64_t batch_size;         /* training pairs per step (2048); as many random negatives */
    int threads;                /* 0 = all cores */
    int reps;                   /* steps timed (medians) */
    uint64_t seed;
} bench_lightgcn_opts;

/* `cgnn bench lightgcn`: one LightGCN step's propagation on the dataset's graph, the ways it can
 * run (docs/LINK_PREDICTION.md, "LightGCN"): (b) the whole table (L products forward, L back), (c) the batch's
 * receptive field only (nn/lightgcn.h: lightgcn_forward_rows / lightgcn_backward_rows, bitwise
 * the same rows), (a) the sampler's fanout -1 blocks of the batch (building them alone), and the
 * optimiser's step on every row. Medians over reps batches; prints a table and one JSON line. */
int bench_lightgcn_run(const bench_lightgcn_opts *o, FILE *out, cgnn_err *err);

typedef struct bench_cache_opts {
    const char *dataset;        /* a homogeneous dataset with node features */
    int64_t fanouts[8];
    int num_layers;
    int64_t batch_size;
    int batches;                /* batches replayed through every cache (and as many pre-sampled for hotness) */
    double sizes[8];            /* cache sizes, fractions of the feature rows (0.05, 0.1, 0.2) */
    int num_sizes;
    uint64_t seed;
} bench_cache_opts;

/* `cgnn bench cache`: the feature cache's policies side by side (docs/PERFORMANCE.md, "Comparing
 * the feature cache's policies"). Every feature row is behind a row source (an in-memory copy
 * through the cache's fetch callback, the place of a remote part or a disk); the same sampled
 * batches (one thread, in order) are gathered through each cache: none, static hotness (GLT's
 * pre-sampling, on batches of their own), and the adaptive sieve, s3fifo, lru, clock, at each
 * size. Prints per (size, policy): hit rate, rows read from the source, the cache's bytes and
 * the gather's seeds/s (with an in-memory source: the cache's own cost, not what it saves). */
int bench_cache_run(const bench_cache_opts *o, FILE *out, cgnn_err *err);

/* FLOPs (2·M·N·K summed) of the GEMMs of one model_forward + model_backward (no input
 * gradient) of a model with config cfg on batch mb, from the batch's shapes:
 *   GraphSAGE layer l (N_dst rows, I -> O): forward 2 GEMMs (lin_l on the mean, lin_r on the
 *     dst rows) of 2·N_dst·I·O each; backward a weight gradient per linear (2·N_dst·I·O) and,
 *     except in layer 0, an input gradient per linear (2·N_dst·I·O);
 *   GCN: one linear on the N_dst aggregated rows, the same pattern;
 *   GAT: one linear on all N_src rows to H·C channels, the same pattern. */
double bench_train_gemm_flops(const model_config *cfg, const minibatch *mb);

#endif
