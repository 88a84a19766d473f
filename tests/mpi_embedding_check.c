/* mpi_embedding_check.c — embedding_sparse_step under data parallelism; run by
 * tests/test_mpi_embedding.sh as `mpirun -np P mpi_embedding_check` (P >= 2).
 *
 * Every rank touches its own set of rows each step (overlapping with the other ranks' sets;
 * one rank sits a step out with no rows, as a rank without a batch joins), with gradients in
 * the embedding columns of a wider (n, F + D) matrix. After a few steps of every optimiser:
 *   (a) every rank's table (weights and optimiser state) is bitwise equal — a hash compared by
 *       all-reduce;
 *   (b) it equals a single-process replay computed locally: all ranks' rows concatenated in rank
 *       order, duplicates summed in that order by a naive search, times (float)(1/divisor),
 *       through embedding_apply_ref;
 *   (c) an out-of-range id on one rank makes every rank's step fail alike, changing nothing.
 * Exit status 0 when all hold on every rank, 1 otherwise (rank 0 prints the summary). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "nn/embedding.h"
#include "util/rng.h"

#define R 400
#define D 10 /* two SSE quads and a scalar tail */
#define F 3  /* feature columns before the embedding columns */
#define STEPS 6

/* Rows of rank r at step s: n distinct ids (an arithmetic walk mod R from a rank- and
 * step-dependent start, so ranks overlap partly); rank 1 has none at step 2. */
static int64_t rank_rows(int r, int s, int64_t *ids) {
    if (r == 1 && s == 2) return 0;
    const int64_t n = 30 + 11 * r + 5 * s, start = (37 * r + 13 * s) % R;
    for (int64_t i = 0; i < n; i++) ids[i] = (start + 3 * i) % R; /* gcd(3, R) = 1: distinct */
    return n;
}

static float grad_value(int r, int s, int64_t i, int64_t j) {
    rng g;
    rng_init(&g, rng_key(rng_key((uint64_t)r, (uint64_t)s), (uint64_t)(i * D + j)));
    return (float)(rng_uniform(&g) - 0.5);
}

static uint64_t fnv(uint64_t h, const void *p, size_t bytes) {
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < bytes; i++) h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

static uint64_t table_hash(const embedding_table *e) {
    const size_t bytes = (size_t)(e->num_rows * e->dim) * sizeof(float);
    uint64_t h = fnv(1469598103934665603ULL, e->weight, bytes);
    if (e->m) h = fnv(h, e->m, bytes);
    if (e->v) h = fnv(h, e->v, bytes);
    return fnv(h, &e->step, sizeof e->step);
}

/* 1 when the hash is the same on every rank. */
static int same_on_all_ranks(const dist_ctx *d, uint64_t h) {
    int64_t v[2] = {(int64_t)(h >> 1), -(int64_t)(h >> 1)};
    dist_allreduce_max_i64(d, v, 2);
    return v[0] == -v[1];
}

static int same_table(const embedding_table *a, const embedding_table *b) {
    const size_t bytes = (size_t)(a->num_rows * a->dim) * sizeof(float);
    return a->step == b->step && memcmp(a->weight, b->weight, bytes) == 0 && (!a->m || !memcmp(a->m, b->m, bytes)) &&
           (!a->v || !memcmp(a->v, b->v, bytes));
}

int main(int argc, char **argv) {
    dist_ctx d;
    dist_init(&d, &argc, &argv);
    const int P = d.size;
    int failed = 0;
    if (P < 2) {
        fprintf(stderr, "mpi_embedding_check: run me under mpirun with at least 2 ranks\n");
        dist_finalize(&d);
        return 1;
    }
    const int64_t maxn = 30 + 11 * P + 5 * STEPS;
    int64_t *ids = malloc((size_t)maxn * sizeof(int64_t));
    float *mat = malloc((size_t)(maxn * (F + D)) * sizeof(float));
    int64_t *all_ids = malloc((size_t)(maxn * P) * sizeof(int64_t)), *uniq = malloc((size_t)(maxn * P) * sizeof(int64_t));
    float *merged = malloc((size_t)(maxn * P * D) * sizeof(float));
    for (int kind = 0; kind < EMB_OPTIM_COUNT; kind++) {
        embedding_table e, ref;
        cgnn_err err = {0};
        double eps = kind == EMB_OPTIM_ADAGRAD ? 1e-10 : 1e-8;
        if (embedding_init(&e, R, D, 5, (embedding_optim)kind, 0.05, 0.9, 0.999, eps, &err) != 0 ||
            embedding_init(&ref, R, D, 5, (embedding_optim)kind, 0.05, 0.9, 0.999, eps, &err) != 0) {
            fprintf(stderr, "rank %d: %s\n", d.rank, err.msg);
            dist_abort(&d, 1);
        }
        for (int s = 0; s < STEPS; s++) {
            /* this rank's step: gradients in columns [F, F + D) of an (n, F + D) matrix */
            const int64_t n = rank_rows(d.rank, s, ids);
            for (int64_t i = 0; i < n; i++)
                for (int64_t c = 0; c < F + D; c++)
                    mat[i * (F + D) + c] = c >= F ? grad_value(d.rank, s, i, c - F) : NAN;
            int with_batch = 0;
            for (int r = 0; r < P; r++) with_batch += rank_rows(r, s, all_ids) > 0;
            const double lr = 0.05 / (1 + s);
            if (embedding_sparse_step(&e, &d, ids, mat, n, F + D, F, lr, (double)with_batch, &err) != 0) {
                fprintf(stderr, "rank %d, %s step %d: %s\n", d.rank, embedding_optim_name((embedding_optim)kind), s,
                        err.msg);
                failed = 1;
            }
            /* the single-process replay: merge every rank's rows in rank order */
            int64_t U = 0;
            for (int r = 0; r < P; r++) {
                const int64_t nr = rank_rows(r, s, all_ids);
                for (int64_t i = 0; i < nr; i++) {
                    int64_t u = 0;
                    while (u < U && uniq[u] != all_ids[i]) u++;
                    for (int64_t j = 0; j < D; j++) {
                        const float g = grad_value(r, s, i, j);
                        merged[u * D + j] = u == U ? g : merged[u * D + j] + g;
                    }
                    if (u == U) uniq[U++] = all_ids[i];
                }
            }
            const float inv = (float)(1.0 / with_batch);
            for (int64_t k = 0; k < U * D; k++) merged[k] = merged[k] * inv;
            embedding_apply_ref(&ref, uniq, merged, U, lr);
        }
        const int agree = same_on_all_ranks(&d, table_hash(&e));
        const int replay = same_table(&e, &ref);
        if (!agree) fprintf(stderr, "rank %d: %s: replicas differ\n", d.rank, embedding_optim_name((embedding_optim)kind));
        if (!replay)
            fprintf(stderr, "rank %d: %s: table != single-process replay\n", d.rank,
                    embedding_optim_name((embedding_optim)kind));
        failed |= !agree || !replay;

        /* (d) sharded by part: the same steps on tables holding one part's rows each (as many
         * parts as ranks, and fewer: ranks r and r + parts share part r % parts) give exactly
         * the replicated table's rows */
        for (int parts = P; parts >= 2; parts -= P - 2 > 0 ? P - 2 : 1) {
            int64_t start[16];
            for (int p = 0; p <= parts; p++) start[p] = p == parts ? R : (int64_t)R * p / parts + (p ? 7 : 0);
            const embedding_shard sh = {.num_parts = parts, .part = d.rank % parts, .part_start = start};
            const int64_t first = start[sh.part], rows = start[sh.part + 1] - first;
            int64_t *keys = malloc((size_t)rows * sizeof(int64_t));
            for (int64_t i = 0; i < rows; i++) keys[i] = first + i;
            embedding_table sh_e;
            if (embedding_init_keyed(&sh_e, rows, D, 5, keys, (embedding_optim)kind, 0.05, 0.9, 0.999, eps, &err) != 0) {
                fprintf(stderr, "rank %d: %s\n", d.rank, err.msg);
                dist_abort(&d, 1);
            }
            for (int s = 0; s < STEPS; s++) {
                const int64_t n = rank_rows(d.rank, s, ids);
                for (int64_t i = 0; i < n; i++)
                    for (int64_t c = 0; c < F + D; c++)
                        mat[i * (F + D) + c] = c >= F ? grad_value(d.rank, s, i, c - F) : NAN;
                int with_batch = 0;
                for (int r = 0; r < P; r++) with_batch += rank_rows(r, s, all_ids) > 0;
                if (embedding_sparse_step_sharded(&sh_e, &d, &sh, ids, mat, n, F + D, F, 0.05 / (1 + s),
                                                  (double)with_batch, &err) != 0) {
                    fprintf(stderr, "rank %d sharded step %d: %s\n", d.rank, s, err.msg);
                    failed = 1;
                }
            }
            const size_t bytes = (size_t)(rows * D) * sizeof(float);
            const size_t off = (size_t)(first * D);
            const int same = sh_e.step == e.step && !memcmp(sh_e.weight, e.weight + off, bytes) &&
                             (!e.m || !memcmp(sh_e.m, e.m + off, bytes)) && (!e.v || !memcmp(sh_e.v, e.v + off, bytes));
            if (!same) {
                fprintf(stderr, "rank %d: %s: sharded table (%d parts) != the replicated rows\n", d.rank,
                        embedding_optim_name((embedding_optim)kind), parts);
                failed = 1;
            }
            /* a bad id on the last rank: every rank fails alike */
            const int64_t n = rank_rows(d.rank, 0, ids);
            if (d.rank == P - 1) ids[n / 2] = R + 5;
            if (embedding_sparse_step_sharded(&sh_e, &d, &sh, ids, mat, n, F + D, F, 0.1, (double)P, &err) != -1 ||
                sh_e.step != e.step) {
                fprintf(stderr, "rank %d: sharded bad id not refused\n", d.rank);
                failed = 1;
            }
            embedding_free(&sh_e);
            free(keys);
            if (parts == 2) break;
        }

        /* a bad id on the last rank only: every rank fails the same step, nothing changes */
        const int64_t n = rank_rows(d.rank, 0, ids);
        if (d.rank == P - 1) ids[n / 2] = R + 5;
        for (int64_t i = 0; i < n * (F + D); i++) mat[i] = 0.25f;
        const int rc = embedding_sparse_step(&e, &d, ids, mat, n, F + D, F, 0.1, (double)P, &err);
        if (rc != -1 || !strstr(err.msg, "row id 405") || !same_table(&e, &ref)) {
            fprintf(stderr, "rank %d: %s: bad id: rc %d, '%s'\n", d.rank, embedding_optim_name((embedding_optim)kind),
                    rc, err.msg);
            failed = 1;
        }
        embedding_free(&e);
        embedding_free(&ref);
    }
    int64_t bad = failed;
    dist_allreduce_sum_i64(&d, &bad, 1);
    if (d.rank == 0)
        printf("mpi_embedding_check: %s (%d ranks, %d optimisers x %d steps: replicas bitwise equal and equal to "
               "the single-process replay; sharded tables equal the replicated rows; a bad id fails every rank)\n",
               bad ? "FAILED" : "OK", P, EMB_OPTIM_COUNT, STEPS);
    free(ids);
    free(mat);
    free(all_ids);
    free(uniq);
    free(merged);
    dist_finalize(&d);
    return bad ? 1 : 0;
}
