/* test_typed_part.c — a partitioned typed graph samples and gathers bitwise the whole graph's
 * batches, renamed: data/dblp-mini (features on 3 of 4 node types) and data/lastfm-mini
 * (featureless) partitioned in-process (partition_compute + partition_write, METIS and random,
 * 2 and 3 parts), every part opened with partbook_open and living in this one process:
 * pick_remote and fetch_remote call the owners' side directly (typed_sampler_pick_owned,
 * gather_rows_owned), so what is tested is the typed sampler's split / ask / merge per (hop,
 * edge type) and the typed gather's split / fetch / convert, from every part's point of view:
 *   - seeds of every node type, per-edge-type fanouts (-1, 0, small), with and without
 *     replacement, 2 and 3 hops, excluded edges (homogenised pairs);
 *   - the part views are sized for the whole graph (the capacities equal the whole graph's);
 *   - a reply that breaks the contract (more neighbours than the fanout allows) is an error.
 */
#include <ftw.h>

#include "graph/partbook.h"
#include "graph/partition.h"
#include "graph/typed_graph.h"
#include "sample/gather.h"
#include "sample/typed_sampler.h"
#include "test.h"
#include "util/rng.h"

#define MAXP 3
#define MAX_SEEDS 48

typedef struct tparts {
    int P, T, K;
    partbook pb[MAXP];
    typed_graph tg[MAXP];
    typed_sampler_part tp[MAXP];
    const int64_t *type_start[MINIBATCH_MAX_NODE_TYPES];
    gather_typed_part gp[MAXP];
    gather_part type_gp[MAXP][MINIBATCH_MAX_NODE_TYPES];
    const ds_feature *feat[MAXP][MINIBATCH_MAX_NODE_TYPES]; /* each part's own rows */
    uint32_t *scratch;
    double *wscratch;
    int bad_reply; /* test hook: the owner answers 1000 neighbours too many */
} tparts;

/* The owners' side of one hop, every asked (part, edge type) in turn, as part_rpc's handler does. */
static int in_process_pick(void *ctx, typed_remote_hop *hop, cgnn_err *err) {
    tparts *tp = ctx;
    const int K = hop->num_edge_types;
    for (int p = 0; p < hop->num_parts; p++) {
        int64_t at = 0;
        for (int e = 0; e < K; e++) {
            const int64_t m = hop->n[p * K + e];
            if (m == 0) continue;
            at = typed_sampler_pick_owned(&tp->tg[p], &tp->tp[p], hop->hop, hop->key, hop->replace, e, hop->fanouts[e],
                                          hop->nodes[p * K + e], m, hop->counts[p * K + e], &hop->nbrs[p],
                                          &hop->nbr_cap[p], at, tp->scratch, tp->wscratch, err);
            if (at < 0) return -1;
            if (tp->bad_reply) hop->counts[p * K + e][0] += 1000;
        }
    }
    return 0;
}

static int in_process_fetch(void *ctx, gather_typed_req *rq, cgnn_err *err) {
    tparts *tp = ctx;
    const int T = rq->num_types;
    for (int p = 0; p < rq->num_parts; p++) {
        rq->rows_len[p] = 0;
        for (int t = 0; t < T; t++) {
            const int64_t m = rq->n[p * T + t];
            if (m == 0) continue;
            const ds_feature *f = tp->feat[p][t];
            const size_t bytes = (size_t)m * (size_t)f->dim * npy_dtype_size(f->array.dtype);
            if (rq->rows_len[p] + bytes > rq->rows_cap[p]) {
                rq->rows[p] = realloc(rq->rows[p], rq->rows_len[p] + bytes);
                rq->rows_cap[p] = rq->rows_len[p] + bytes;
            }
            void *buf = (char *)rq->rows[p] + rq->rows_len[p];
            size_t cap = bytes, got = 0;
            if (gather_rows_owned(f, &tp->type_gp[p][t], rq->ids[p * T + t], m, &buf, &cap, &got, err) != 0) return -1;
            rq->rows_len[p] += got;
        }
    }
    return 0;
}

/* The first node feature of type t of ds, or NULL. */
static const ds_feature *type_feature(const dataset *ds, int t) {
    for (int i = 0; i < ds->num_features; i++)
        if (ds->features[i].domain == DS_DOMAIN_NODE && ds->features[i].type == t) return &ds->features[i];
    return NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Partitions ds into dir/out and opens every part. */
static int open_parts(tparts *tp, const dataset *ds, const char *dir, int P, partition_method method, cgnn_err *err) {
    memset(tp, 0, sizeof *tp);
    partition_params pp = {.num_parts = P, .method = method, .seed = 3, .num_threads = 1};
    partition_result r;
    char out[4200];
    snprintf(out, sizeof out, "%s/out", dir);
    int rc = partition_compute(&r, ds, &pp, err);
    if (rc == 0) rc = partition_write(out, ds, &r, 1, err);
    partition_free(&r);
    if (rc != 0) return -1;
    tp->P = P;
    tp->T = ds->num_node_types;
    tp->K = ds->num_edge_types;
    int64_t maxdeg = 0;
    for (int p = 0; p < P; p++) {
        partbook *pb = &tp->pb[p];
        if (partbook_open(pb, out, p, 1, err) != 0) return -1;
        int64_t num_edges[MINIBATCH_MAX_EDGE_TYPES];
        const csc_graph *views[MINIBATCH_MAX_EDGE_TYPES];
        for (int e = 0; e < tp->K; e++) {
            num_edges[e] = pb->etype_map[(size_t)e * (size_t)(P + 1) + (size_t)P];
            views[e] = &pb->type_local[e];
            if (pb->etype_max_in_degree[e] > maxdeg) maxdeg = pb->etype_max_in_degree[e];
        }
        typed_graph_init_part(&tp->tg[p], tp->T, pb->type_nodes, tp->K, pb->etype_src, pb->etype_dst, views,
                              pb->etype_max_in_degree, num_edges);
        tp->tp[p] = (typed_sampler_part){.num_parts = P, .part = p, .pick_remote = in_process_pick, .ctx = tp};
        for (int t = 0; t < tp->T; t++) {
            tp->type_start[t] = tp->pb[0].type_map + (size_t)t * (size_t)(P + 1);
            tp->tp[p].type_start[t] = pb->type_map + (size_t)t * (size_t)(P + 1);
            tp->tp[p].key_ids[t] = pb->type_orig_of_new[t];
            tp->feat[p][t] = type_feature(&pb->ds, t);
            tp->type_gp[p][t] = (gather_part){.num_parts = P, .part = p, .part_start = tp->tp[p].type_start[t]};
        }
        tp->gp[p] = (gather_typed_part){.num_parts = P, .part = p, .num_types = tp->T,
                                        .type_start = tp->type_start, .fetch_remote = in_process_fetch, .ctx = tp};
    }
    tp->scratch = malloc((size_t)(maxdeg + 1) * sizeof(uint32_t));
    tp->wscratch = malloc((size_t)(maxdeg + 1) * sizeof(double));
    return 0;
}

static void close_parts(tparts *tp) {
    for (int p = 0; p < tp->P; p++) partbook_close(&tp->pb[p]);
    free(tp->scratch);
    free(tp->wscratch);
}

/* The part batch is the whole batch renamed (per-type new ids -> original ids); features equal. */
static int same_renamed(const minibatch *w, const minibatch *q, const tparts *tp, const char **why) {
    const minibatch_typed *a = w->typed, *b = q->typed;
    const int T = a->num_node_types, K = a->num_edge_types, L = a->num_layers;
    *why = "counts";
    if (w->num_items != q->num_items || w->num_seeds != q->num_seeds || w->num_input_nodes != q->num_input_nodes ||
        w->num_sampled_edges != q->num_sampled_edges)
        return 0;
    *why = "item_local";
    for (int64_t i = 0; i < w->num_items; i++)
        if (w->item_local[i] != q->item_local[i]) return 0;
    for (int t = 0; t < T; t++) {
        *why = "per-type node counts";
        for (int h = 0; h <= L; h++)
            if (a->num_nodes[t][h] != b->num_nodes[t][h]) return 0;
        *why = "node lists (renamed)";
        for (int64_t i = 0; i < a->num_nodes[t][L]; i++)
            if (a->nodes[t][i] != tp->pb[0].type_orig_of_new[t][b->nodes[t][i]]) return 0;
        *why = "features";
        if (a->feat_dim[t] && memcmp(a->features[t], b->features[t],
                                     (size_t)(a->num_nodes[t][L] * a->feat_dim[t]) * sizeof(float)) != 0)
            return 0;
    }
    *why = "sub-blocks";
    for (int k = 0; k < L * K; k++) {
        const sampler_block *x = &a->blocks[k], *y = &b->blocks[k];
        if (x->num_dst != y->num_dst || x->num_src != y->num_src || x->num_edges != y->num_edges) return 0;
        if (memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * sizeof(int64_t)) != 0) return 0;
        if (x->num_edges && memcmp(x->indices, y->indices, (size_t)x->num_edges * sizeof(int32_t)) != 0) return 0;
    }
    return 1;
}

static void run_dataset(const char *name, int *failed, int *batches) {
    char src[4200];
    snprintf(src, sizeof src, "%s/data/%s", test_source_dir(), name);
    dataset ds;
    cgnn_err err = {0};
    if (dataset_open(&ds, src, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        *failed = 1;
        return;
    }
    typed_graph whole;
    CGNN_CHECK(typed_graph_open(&whole, &ds, 1, &err) == 0);
    const int T = ds.num_node_types, K = ds.num_edge_types;
    int64_t feat_dim[MINIBATCH_MAX_NODE_TYPES] = {0}, max_seeds[MINIBATCH_MAX_NODE_TYPES];
    const ds_feature *wfeat[MINIBATCH_MAX_NODE_TYPES];
    for (int t = 0; t < T; t++) {
        wfeat[t] = type_feature(&ds, t);
        feat_dim[t] = wfeat[t] ? wfeat[t]->dim : 0;
        max_seeds[t] = MAX_SEEDS;
    }
    /* three configurations: every edge type [10, 5]; per edge type -1 / 0 / 3; 3 hops with replacement */
    typed_sampler_config cfgs[3];
    memset(cfgs, 0, sizeof cfgs);
    cfgs[0].num_layers = 2;
    cfgs[1].num_layers = 2;
    cfgs[2].num_layers = 3;
    cfgs[2].replace = 1;
    for (int e = 0; e < K; e++) {
        cfgs[0].fanouts[0][e] = 10, cfgs[0].fanouts[1][e] = 5;
        cfgs[1].fanouts[0][e] = e == 0 ? -1 : e == 1 ? 0 : 3;
        cfgs[1].fanouts[1][e] = e == 1 ? 2 : 3;
        for (int h = 0; h < 3; h++) cfgs[2].fanouts[h][e] = 4;
    }
    const int Ps[2] = {2, 3};
    for (int pi = 0; pi < 2 && !*failed; pi++)
        for (int mi = 0; mi < 2 && !*failed; mi++) {
            char *dir = test_tmpdir();
            tparts *tp = calloc(1, sizeof *tp);
            if (open_parts(tp, &ds, dir, Ps[pi], mi ? PARTITION_RANDOM : PARTITION_METIS, &err) != 0) {
                fprintf(stderr, "%s: partitioning: %s\n", name, err.msg);
                *failed = 1;
            }
            for (int c = 0; c < 3 && !*failed; c++) {
                const typed_sampler_config *cfg = &cfgs[c];
                minibatch_typed_capacity tcap, pcap;
                typed_sampler_capacity(&whole, cfg, max_seeds, feat_dim, &tcap);
                minibatch_capacity mcap = {.num_layers = cfg->num_layers, .max_items = MAX_SEEDS};
                minibatch mw, mp;
                typed_sampler sw;
                CGNN_CHECK(minibatch_alloc_typed(&mw, &mcap, &tcap, whole.etype_src, whole.etype_dst, &err) == 0);
                CGNN_CHECK(minibatch_alloc_typed(&mp, &mcap, &tcap, whole.etype_src, whole.etype_dst, &err) == 0);
                CGNN_CHECK(typed_sampler_init(&sw, &whole, cfg, &tcap, &err) == 0);
                for (int me = 0; me < tp->P && !*failed; me++) {
                    typed_sampler_capacity(&tp->tg[me], cfg, max_seeds, feat_dim, &pcap);
                    if (memcmp(&pcap, &tcap, sizeof tcap) != 0) { /* sized for the whole graph */
                        fprintf(stderr, "%s: part %d's capacity differs from the whole graph's\n", name, me);
                        *failed = 1;
                        break;
                    }
                    typed_sampler sp;
                    gather_typed_scratch gs;
                    int64_t rows = 0;
                    for (int t = 0; t < T; t++) rows += tcap.max_nodes[t][cfg->num_layers];
                    CGNN_CHECK(typed_sampler_init_part(&sp, &tp->tg[me], &tp->tp[me], cfg, &tcap, &err) == 0);
                    CGNN_CHECK(gather_typed_scratch_init(&gs, tp->P, T, rows, &err) == 0);
                    rng r;
                    rng_init(&r, 17 + (uint64_t)me + 100 * (uint64_t)c);
                    for (int trial = 0; trial < 4 && !*failed; trial++) {
                        int64_t ws[MAX_SEEDS], ps[MAX_SEEDS], wpairs[MAX_SEEDS], ppairs[MAX_SEEDS];
                        const int64_t m = 8 + (int64_t)rng_below(&r, MAX_SEEDS / 2 - 8);
                        int64_t per_type[MINIBATCH_MAX_NODE_TYPES] = {0};
                        for (int64_t i = 0; i < m; i++) { /* seeds of every type (duplicates allowed) */
                            const int t = (int)rng_below(&r, (uint64_t)T);
                            per_type[t]++;
                            const int64_t v = (int64_t)rng_below(&r, (uint64_t)ds.node_types[t].num_nodes);
                            ws[i] = whole.offset[t] + v;
                            ps[i] = whole.offset[t] + tp->pb[0].type_new_of_orig[t][v];
                        }
                        const uint64_t key = rng_key(5, (uint64_t)trial);
                        if (trial % 2) { /* excluded edges: pairs of the first edge type's edges */
                            const ds_edge_type *et = &ds.edge_types[0];
                            const int s0 = et->src_type, d0 = et->dst_type;
                            for (int64_t k = 0; k < m / 2; k++) {
                                const int64_t i = (k * 37) % et->edges.num_edges;
                                const int64_t u = et->edges.id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)et->edges.src)[i]
                                                                                      : ((const int64_t *)et->edges.src)[i];
                                const int64_t v = et->edges.id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)et->edges.dst)[i]
                                                                                      : ((const int64_t *)et->edges.dst)[i];
                                wpairs[2 * k] = whole.offset[s0] + u;
                                wpairs[2 * k + 1] = whole.offset[d0] + v;
                                ppairs[2 * k] = whole.offset[s0] + tp->pb[0].type_new_of_orig[s0][u];
                                ppairs[2 * k + 1] = whole.offset[d0] + tp->pb[0].type_new_of_orig[d0][v];
                            }
                            typed_sampler_exclude_edges(&sw, wpairs, m / 2);
                            typed_sampler_exclude_edges(&sp, ppairs, m / 2);
                        }
                        typed_sampler_sample(&sw, &mw, ws, m, key);
                        if (typed_sampler_sample_part(&sp, &mp, ps, m, key, &err) != 0) {
                            fprintf(stderr, "%s: part %d: %s\n", name, me, err.msg);
                            *failed = 1;
                            break;
                        }
                        const int L = cfg->num_layers;
                        const int64_t *ids[MINIBATCH_MAX_NODE_TYPES];
                        int64_t n_ids[MINIBATCH_MAX_NODE_TYPES];
                        const ds_feature *own[MINIBATCH_MAX_NODE_TYPES];
                        for (int t = 0; t < T; t++) {
                            if (wfeat[t])
                                gather_rows_strided(mw.typed->features[t], feat_dim[t], wfeat[t], mw.typed->nodes[t],
                                                    mw.typed->num_nodes[t][L], 1);
                            ids[t] = mp.typed->nodes[t];
                            n_ids[t] = mp.typed->num_nodes[t][L];
                            own[t] = tp->feat[me][t];
                        }
                        if (gather_typed_rows_part(mp.typed->features, feat_dim, own, &tp->gp[me], &gs, ids, n_ids, 2,
                                                   &err) != 0) {
                            fprintf(stderr, "%s: part %d: gather: %s\n", name, me, err.msg);
                            *failed = 1;
                            break;
                        }
                        const char *why = "";
                        if (!same_renamed(&mw, &mp, tp, &why)) {
                            fprintf(stderr, "%s: P=%d %s config %d part %d trial %d: the part's batch differs (%s)\n",
                                    name, tp->P, mi ? "random" : "metis", c, me, trial, why);
                            *failed = 1;
                        }
                        (*batches)++;
                    }
                    /* a reply outside the contract: an error naming the part, never an overflow */
                    if (!*failed && tp->P > 1) {
                        tp->bad_reply = 1;
                        int64_t s0 = -1;
                        for (int t = 0; t < T && s0 < 0; t++) /* a seed of another part */
                            for (int64_t v = 0; v < ds.node_types[t].num_nodes && s0 < 0; v++) {
                                const int64_t nv = tp->pb[0].type_new_of_orig[t][v];
                                if (typed_sampler_part_owner(&tp->tp[me], t, nv) != me) s0 = whole.offset[t] + nv;
                            }
                        cgnn_err e2 = {0};
                        const int rc = typed_sampler_sample_part(&sp, &mp, &s0, 1, 1, &e2);
                        tp->bad_reply = 0;
                        if (rc == 0 || !strstr(e2.msg, "answered") || e2.code != CGNN_ERR_INPUT) {
                            fprintf(stderr, "%s: a bad reply was not refused (rc %d, '%s')\n", name, rc, e2.msg);
                            *failed = 1;
                        }
                    }
                    typed_sampler_free(&sp);
                    gather_typed_scratch_free(&gs);
                }
                typed_sampler_free(&sw);
                minibatch_free(&mw);
                minibatch_free(&mp);
            }
            close_parts(tp);
            free(tp);
            nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
            free(dir);
        }
    typed_graph_free(&whole);
    dataset_close(&ds);
}

TEST(dblp_mini_parts) {
    int failed = 0, batches = 0;
    run_dataset("dblp-mini", &failed, &batches);
    fprintf(stderr, "dblp-mini: %d part batches equal the whole graph's\n", batches);
    ASSERT(!failed && batches > 0);
}

TEST(lastfm_mini_parts) {
    int failed = 0, batches = 0;
    run_dataset("lastfm-mini", &failed, &batches);
    fprintf(stderr, "lastfm-mini: %d part batches equal the whole graph's\n", batches);
    ASSERT(!failed && batches > 0);
}

int main(void) {
    RUN(dblp_mini_parts);
    RUN(lastfm_mini_parts);
    return test_summary();
}
