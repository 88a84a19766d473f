/* bench_lightgcn.c — `cgnn bench lightgcn`: the ways to run one LightGCN training step on the
 * CPU, on a link-prediction dataset (see bench.h). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "nn/embedding.h"
#include "nn/lightgcn.h"
#include "sample/sampler.h"
#include "util/rng.h"
#include "util/timer.h"

/* A batch's distinct rows as the LP loader forms them: anchors, positives of `batch` random
 * training pairs, then `batch` uniform random negatives; first appearance order. */
static int64_t batch_rows(const ds_split *sp, int64_t N, int64_t batch, uint64_t key, int64_t *rows,
                          unsigned char *seen) {
    rng r;
    rng_init(&r, key);
    int64_t n = 0;
    for (int64_t i = 0; i < 3 * batch; i++) {
        int64_t v;
        if (i < 2 * batch) {
            const int64_t p = (int64_t)rng_below(&r, (uint64_t)sp->num_items);
            v = sp->seeds[2 * p + (i & 1)];
        } else {
            v = (int64_t)rng_below(&r, (uint64_t)N);
        }
        if (!seen[v]) seen[v] = 1, rows[n++] = v;
    }
    for (int64_t k = 0; k < n; k++) seen[rows[k]] = 0;
    return n;
}

static int64_t edges_of(const lightgcn_adj *a, const int64_t *list, int64_t n) {
    int64_t e = 0;
    for (int64_t k = 0; k < n; k++) e += a->fwd_ptr[list[k] + 1] - a->fwd_ptr[list[k]];
    return e;
}

int bench_lightgcn_run(const bench_lightgcn_opts *o, FILE *out, cgnn_err *err) {
    dataset ds;
    if (dataset_open(&ds, o->dataset, err) != 0) return -1;
    const ds_task *task = NULL;
    for (int i = 0; i < ds.num_tasks && !task; i++)
        if (ds.tasks[i].kind == DS_TASK_LINK_PREDICTION && ds.tasks[i].splits[DS_SPLIT_TRAIN].present) task = &ds.tasks[i];
    if (!task || dataset_is_typed(&ds)) {
        dataset_close(&ds);
        return err_set(err, CGNN_ERR_INPUT, "bench lightgcn: %s has no homogeneous link-prediction train split",
                       o->dataset);
    }
    const ds_split *sp = &task->splits[DS_SPLIT_TRAIN];
    csc_graph g;
    if (csc_open_cached(&g, &ds, 0, 0, err) != 0) {
        dataset_close(&ds);
        return -1;
    }
    const int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    omp_set_num_threads(threads);
    const int64_t N = g.num_nodes, D = o->dim, B = o->batch_size;
    const int L = o->num_layers, R = o->reps;
    double t0 = timer_now();
    lightgcn_adj adj;
    if (lightgcn_adj_build(&adj, &g, err) != 0) {
        csc_free(&g);
        dataset_close(&ds);
        return -1;
    }
    const double t_adj = timer_now() - t0;
    float alpha[LIGHTGCN_MAX_LAYERS + 1];
    CGNN_CHECK(lightgcn_alpha(alpha, L, NULL, 0) == 0);
    embedding_table e;
    if (embedding_init(&e, N, D, o->seed, EMB_OPTIM_SPARSE_ADAM, 1e-3, 0.9, 0.999, 1e-8, err) != 0) {
        lightgcn_adj_free(&adj);
        csc_free(&g);
        dataset_close(&ds);
        return -1;
    }
    CGNN_CHECK(embedding_scale_init(&e, 0.1, err) == 0);
    float *outb = cgnn_malloc((size_t)(N * D) * sizeof(float)), *grad = cgnn_calloc((size_t)(N * D), sizeof(float));
    float *dx = cgnn_malloc((size_t)(N * D) * sizeof(float));
    int64_t *rows = cgnn_malloc((size_t)(3 * B + 1) * sizeof(int64_t)), *ids = cgnn_malloc((size_t)N * sizeof(int64_t));
    unsigned char *seen = cgnn_calloc((size_t)N, 1);
    for (int64_t i = 0; i < N; i++) ids[i] = i;
    double *tf = cgnn_malloc((size_t)R * sizeof(double)), *tb = cgnn_malloc((size_t)R * sizeof(double));
    double *rf = cgnn_malloc((size_t)R * sizeof(double)), *rb = cgnn_malloc((size_t)R * sizeof(double));
    double *to = cgnn_malloc((size_t)R * sizeof(double)), *ts = cgnn_malloc((size_t)R * sizeof(double));
    double *fe = cgnn_malloc((size_t)R * sizeof(double)), *be = cgnn_malloc((size_t)R * sizeof(double));
    double *nrows = cgnn_malloc((size_t)R * sizeof(double)), *se = cgnn_malloc((size_t)R * sizeof(double));
    /* (a) the sampler's blocks with fanout -1 on every layer, seeds = the batch's rows */
    sampler_config sc;
    memset(&sc, 0, sizeof sc);
    sc.num_layers = L > 0 ? L : 1;
    for (int h = 0; h < sc.num_layers; h++) sc.fanouts[h] = -1;
    minibatch_capacity cap;
    sampler_capacity(&g, &sc, 3 * B, 0, &cap);
    neighbor_sampler smp;
    minibatch mb;
    memset(&mb, 0, sizeof mb);
    memset(&smp, 0, sizeof smp);
    cgnn_err serr = {0};
    const int have_sampler = sampler_init(&smp, &g, &sc, &cap, &serr) == 0 && minibatch_alloc(&mb, &cap, &serr) == 0;
    if (!have_sampler) fprintf(out, "  (a) not measured: %s\n", serr.msg);
    fprintf(out, "bench lightgcn: %s, %lld nodes, %lld edges, D %lld, %d layers, batch %lld pairs + %lld negatives, "
                 "%d threads, %d reps (medians)\n", ds.name[0] ? ds.name : o->dataset, (long long)N,
            (long long)g.num_edges, (long long)D, L, (long long)B, (long long)B, threads, R);
    for (int r = 0; r < R; r++) {
        const int64_t n = batch_rows(sp, N, B, o->seed * 1000003u + (uint64_t)r, rows, seen);
        nrows[r] = (double)n;
        for (int64_t k = 0; k < n; k++)
            for (int64_t c = 0; c < D; c++) grad[rows[k] * D + c] = 1e-3f * (float)((k + c) % 7 - 3);
        double a0 = timer_now(); /* (b) the whole table, L products each way */
        lightgcn_forward(&adj, e.weight, D, L, alpha, outb);
        double a1 = timer_now();
        lightgcn_backward(&adj, grad, D, L, alpha, dx);
        double a2 = timer_now();
        int64_t df = 0, db = 0; /* rows computed (unused: the edge fractions are reported) */ /* (c) the batch's receptive field only */
        lightgcn_forward_rows(&adj, e.weight, D, L, alpha, outb, rows, n, &df);
        int64_t ef = 0; /* levels <= dense_level ran on every row (their lists are not built) */
        for (int l = 1; l <= L; l++)
            ef += l <= adj.dense_level ? g.num_edges : edges_of(&adj, adj.list[l], adj.list_len[l]);
        double a3 = timer_now();
        lightgcn_backward_rows(&adj, grad, D, L, alpha, dx, rows, n, &db);
        double a4 = timer_now();
        int64_t eb = L > 0 ? edges_of(&adj, rows, n) : 0; /* the first product reads the batch's rows' edges */
        for (int l = 0; l < L - 1; l++)
            eb += l <= adj.dense_level ? g.num_edges : edges_of(&adj, adj.list[l], adj.list_len[l]);
        double a5 = timer_now(); /* the optimiser on every row (SparseAdam, all ids) */
        CGNN_CHECK(embedding_sparse_step(&e, NULL, ids, dx, N, D, 0, 1e-3, 1.0, err) == 0);
        double a6 = timer_now();
        tf[r] = (a1 - a0) * 1e3, tb[r] = (a2 - a1) * 1e3, rf[r] = (a3 - a2) * 1e3, rb[r] = (a4 - a3) * 1e3;
        to[r] = (a6 - a5) * 1e3;
        (void)df, (void)db;
        fe[r] = (double)ef / (double)(L > 0 ? L * g.num_edges : 1), be[r] = (double)eb / (double)(L > 0 ? L * g.num_edges : 1);
        ts[r] = 0, se[r] = 0;
        if (have_sampler) {
            const int64_t ns = n < cap.max_items ? n : cap.max_items;
            double s0 = timer_now();
            CGNN_CHECK(sampler_sample(&smp, &mb, rows, ns, (uint64_t)r, NULL) == 0);
            ts[r] = (timer_now() - s0) * 1e3;
            se[r] = (double)mb.num_sampled_edges;
        }
        for (int64_t k = 0; k < n; k++) memset(grad + rows[k] * D, 0, (size_t)D * sizeof(float));
    }
    const double mf = bench_median(tf, R), mb_ = bench_median(tb, R), mrf = bench_median(rf, R);
    const double mrb = bench_median(rb, R), mo = bench_median(to, R), ms = bench_median(ts, R);
    const double mfe = bench_median(fe, R), mbe = bench_median(be, R), mn = bench_median(nrows, R);
    const double mse = bench_median(se, R);
    fprintf(out, "  adjacency build (gcn_norm + transpose): %.1f ms (once per job)\n", t_adj * 1e3);
    fprintf(out, "  batch rows (distinct anchors + positives + negatives): %.0f of %lld nodes\n", mn, (long long)N);
    fprintf(out, "  (b) full graph:        forward %8.1f ms  backward %8.1f ms  (%d x %lld edges each way)\n", mf, mb_, L,
            (long long)g.num_edges);
    fprintf(out, "  (c) receptive field:   forward %8.1f ms  backward %8.1f ms  (%.0f%% / %.0f%% of (b)'s edges)\n", mrf,
            mrb, 100 * mfe, 100 * mbe);
    if (have_sampler)
        fprintf(out, "  (a) sampler, fanout -1: building the %d blocks alone %8.1f ms, %.0f block edges (%.2f x the "
                     "graph's; aggregating them is the forward of (c) at least)\n", sc.num_layers, ms, mse,
                mse / (double)g.num_edges);
    fprintf(out, "  optimiser (SparseAdam, every row): %.1f ms\n", mo);
    fprintf(out, "  per step, propagation + optimiser: (b) %.1f ms, (c) %.1f ms\n", mf + mb_ + mo, mrf + mrb + mo);
    fprintf(out, "{\"bench\": \"lightgcn\", \"nodes\": %lld, \"edges\": %lld, \"dim\": %lld, \"layers\": %d, \"batch\": %lld, "
                 "\"threads\": %d, \"full_forward_ms\": %.2f, \"full_backward_ms\": %.2f, \"field_forward_ms\": %.2f, "
                 "\"field_backward_ms\": %.2f, \"field_forward_edge_frac\": %.4f, \"field_backward_edge_frac\": %.4f, "
                 "\"sampler_blocks_ms\": %.2f, \"sampler_block_edges\": %.0f, \"optimizer_ms\": %.2f}\n",
            (long long)N, (long long)g.num_edges, (long long)D, L, (long long)B, threads, mf, mb_, mrf, mrb, mfe, mbe, ms,
            mse, mo);
    sampler_free(&smp);
    minibatch_free(&mb);
    free(tf), free(tb), free(rf), free(rb), free(to), free(ts), free(fe), free(be), free(nrows), free(se);
    free(outb), free(grad), free(dx), free(rows), free(ids), free(seen);
    embedding_free(&e);
    lightgcn_adj_free(&adj);
    csc_free(&g);
    dataset_close(&ds);
    return 0;
}
