/* part_rpc_check.c — sampling and feature gathering of a partitioned graph across ranks; run
 * by tests/test_part_rpc.sh as `mpirun -np P part_rpc_check` (P >= 2).
 *
 * Every rank builds the same graph and the same in-process partitioning into P parts
 * (tests/test_part_util.h), keeps only its own part's index and feature rows, and serves them
 * to the others through sample/part_rpc over dist_rpc. Its loaders (2 sampler threads,
 * prefetching) on the part must deliver exactly the batches of a whole-graph loader computed
 * locally — node items and link-prediction pairs with random negatives and excluded seed
 * edges, two epochs each — ids mapped back, features equal. Rank 0 prints the traffic per
 * batch (requests and bytes, from the rpc counters). Exit status 0 when every rank agrees. */
#include <stdio.h>

#include "dist/dist.h"
#include "dist/dist_rpc.h"
#include "sample/loader.h"
#include "sample/part_rpc.h"
#include "test_part_util.h"

static int same_features(const minibatch *a, const minibatch *b, int64_t dim) {
    for (int64_t i = 0; i < a->num_input_nodes; i++)
        if (memcmp(a->features + i * a->feat_dim, b->features + i * b->feat_dim, (size_t)dim * sizeof(float)) != 0)
            return 0;
    return 1;
}

int main(int argc, char **argv) {
    dist_ctx d;
    cgnn_err err = {0};
    if (dist_init_threads(&d, &argc, &argv, 1, &err) != 0) {
        fprintf(stderr, "part_rpc_check: %s\n", err.msg);
        return 1;
    }
    const int P = d.size, me = d.rank;
    if (P < 2 || P > MAXP) {
        fprintf(stderr, "part_rpc_check: run me under mpirun with 2 to %d ranks\n", MAXP);
        dist_finalize(&d);
        return 1;
    }
    const int64_t n = 3000, dim = 5;
    int32_t *src, *dst;
    const int64_t e = test_random_graph(n, 6, 300, 123, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph whole;
    CGNN_CHECK(csc_build(&whole, n, &ed, 1, &err) == 0);
    parted pd;
    parted_make(&pd, src, dst, e, n, P, 44);
    float *whole_rows = malloc((size_t)(n * dim) * sizeof(float));
    for (int64_t v = 0; v < n; v++)
        for (int64_t j = 0; j < dim; j++) whole_rows[v * dim + j] = (float)((v * 5 + j) % 17) - 3.5f;
    ds_feature fwhole, fpart;
    feat_view(&fwhole, whole_rows, n, dim);
    const int64_t first = pd.start[me], rows = pd.start[me + 1] - first;
    float *part_rows = malloc((size_t)(rows * dim) * sizeof(float) + 1);
    for (int64_t i = 0; i < rows; i++)
        memcpy(part_rows + i * dim, whole_rows + pd.orig_of_new[first + i] * dim, (size_t)dim * sizeof(float));
    feat_view(&fpart, part_rows, rows, dim);

    dist_rpc *rpc;
    part_rpc pr;
    if (dist_rpc_create(&rpc, &d, &err) != 0 || part_rpc_init(&pr, rpc, me, P, &pd.g[me], &pd.part[me], &fpart, &err) != 0 ||
        dist_rpc_start(rpc, &err) != 0) {
        fprintf(stderr, "rank %d: %s\n", me, err.msg);
        dist_abort(&d, 1);
    }
    int failed = 0;
    int64_t batches = 0;
    int64_t seeds[2 * 400], pseeds[2 * 400], labels[400];
    for (int pairs = 0; pairs <= 1; pairs++) {
        const int64_t items = pairs ? 300 : 400;
        for (int64_t i = 0; i < items; i++) {
            if (pairs) {
                seeds[2 * i] = src[(i * 17) % e];
                seeds[2 * i + 1] = dst[(i * 17) % e];
            } else {
                seeds[i] = (i * 41) % n;
                labels[i] = i % 3;
            }
        }
        for (int64_t i = 0; i < items * (1 + pairs); i++) pseeds[i] = pd.new_of_orig[seeds[i]];
        loader_config c;
        memset(&c, 0, sizeof c);
        c.sampler.num_layers = 3;
        c.sampler.fanouts[0] = 6;
        c.sampler.fanouts[1] = 4;
        c.sampler.fanouts[2] = 3;
        c.batch_size = 40;
        c.shuffle = 1;
        c.seed = 9;
        c.rank = me;
        c.world_size = P;
        c.num_workers = 2;
        c.feature = &fwhole;
        c.pairs = pairs;
        c.num_negatives = pairs ? 16 : 0;
        c.exclude_seed_edges = pairs;
        loader lw, lp;
        loader_config cp = c;
        cp.part = &pr.sampler;
        cp.feature = &fpart;
        cp.feat_part = &pr.feat_part;
        cp.neg_map = pd.new_of_orig;
        CGNN_CHECK(loader_init(&lw, &whole, seeds, pairs ? NULL : labels, items, &c, &err) == 0);
        CGNN_CHECK(loader_init(&lp, &pd.g[me], pseeds, pairs ? NULL : labels, items, &cp, &err) == 0);
        for (int epoch = 0; epoch < 2; epoch++) {
            loader_start_epoch(&lw, epoch, 0);
            loader_start_epoch(&lp, epoch, 0);
            minibatch *a, *b;
            while ((a = loader_next(&lw)) != NULL) {
                b = loader_next(&lp);
                if (!b) {
                    loader_failed(&lp, &err);
                    fprintf(stderr, "rank %d: partitioned loader ended early: %s\n", me, err.msg);
                    failed = 1;
                    loader_release(&lw, a);
                    break;
                }
                if (!same_mapped(a, b, pd.orig_of_new, 3) || !same_features(a, b, dim)) {
                    fprintf(stderr, "rank %d: pairs %d epoch %d batch %lld differs from the whole graph's\n", me, pairs,
                            epoch, (long long)a->batch_index);
                    failed = 1;
                }
                batches++;
                loader_release(&lw, a);
                loader_release(&lp, b);
            }
        }
        loader_free(&lw);
        loader_free(&lp);
    }
    dist_rpc_counters cs, cf;
    dist_rpc_read_counters(rpc, PART_RPC_PICK, 0, &cs);
    dist_rpc_read_counters(rpc, PART_RPC_FEAT, 0, &cf);
    if (dist_rpc_stop(rpc, &err) != 0) {
        fprintf(stderr, "rank %d: %s\n", me, err.msg);
        failed = 1;
    }
    part_rpc_free(&pr);
    dist_rpc_free(rpc);
    int64_t tot[2] = {failed, batches};
    dist_allreduce_sum_i64(&d, tot, 2);
    if (me == 0) {
        const double b = batches > 0 ? (double)batches : 1;
        printf("part_rpc_check: rank 0 per batch: %.1f sampling requests (%.0f B out, %.0f B back), %.1f feature "
               "requests (%.0f B out, %.0f B back)\n",
               cs.req_sent / b, cs.req_bytes_sent / b, cs.rep_bytes_recv / b, cf.req_sent / b, cf.req_bytes_sent / b,
               cf.rep_bytes_recv / b);
        printf("part_rpc_check: %s (%d ranks, %lld batches: partitioned = whole graph, ids mapped, features equal)\n",
               tot[0] ? "FAILED" : "OK", P, (long long)tot[1]);
    }
    free(whole_rows);
    free(part_rows);
    parted_free(&pd);
    csc_free(&whole);
    free(src);
    free(dst);
    dist_finalize(&d);
    return tot[0] ? 1 : 0;
}
