/* cli_rank.c — `cgnn rank`: full-ranking link-prediction evaluation of node embeddings
 * (Recall@K, NDCG@K over every node; train/lp_eval.h lp_full_ranking) on a dataset's
 * link-prediction task. On a typed dataset the task's edge type (s, r, d) ranks every node of
 * type d for each anchor of type s, from the directory `cgnn embed` wrote (<type>.npy per node
 * type; lp_full_ranking_typed). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "io/outguard.h"
#include "train/lp_eval.h"
#include "train/outputs.h"
#include "util/timer.h"

static cli_flag RANK_FLAGS[] = {
    {"embeddings", "E.npy", "(N, D) float32 embeddings of every node of the dataset (required); a typed dataset: the "
                            "directory of <node type>.npy files cgnn embed wrote", NULL},
    {"dataset", "DIR", "GraphBolt dataset with a link-prediction task (required)", NULL},
    {"k", "K", "rank cut-off (default 20)", NULL},
    {"split", "NAME", "test (default) or valid: the pairs to rank", NULL},
    {"task", "NAME", "the link-prediction task (default: the first task with (M, 2) pair seeds)", NULL},
    {"out", "FILE", "also write GiGL's KFP metrics JSON (recall_at_K, ndcg_at_K) here", NULL},
    {"candidates", "LO:HI", "rank only the nodes of the id range [LO, HI) (a homogeneous user-item graph: the items; "
                            "trainerArgs.lp_candidate_range of the training)", NULL},
};
static const cli_command RANK_CMD = {
    .name = "rank",
    .usage = "cgnn rank --embeddings E.npy --dataset DIR [--k 20] [--split test|valid] [--candidates LO:HI] [--out FILE]",
    .summary =
        "Full-ranking evaluation (LightGCN / NGCF protocol): for every anchor of the split's\n"
        "(anchor, positive) pairs, scores all N nodes by dot product, leaves out the anchor, its\n"
        "train positives and (for --split test) its validation positives, and takes the top K\n"
        "(equal scores: lower node id first). Recall@K = hits / |the anchor's split positives|,\n"
        "NDCG@K with binary relevance (IDCG over min(K, |positives|)), averaged over anchors.\n"
        "Pairs are directed; a split with `labels` contributes its rows with a non-zero label.\n"
        "A typed dataset: the task's edge type (s, r, d) has anchors of node type s and ranks every node\n"
        "of type d; --embeddings is the directory cgnn embed wrote (s.npy and d.npy are read).\n"
        "--candidates LO:HI (homogeneous datasets): only the nodes LO <= id < HI are candidates (the\n"
        "items of a user-item graph); every ranked positive must lie in the range.",
    .flags = RANK_FLAGS,
    .num_flags = (int)(sizeof RANK_FLAGS / sizeof RANK_FLAGS[0]),
};

/* The positive pairs of split s: its seeds, or (with labels) a copy of the rows labelled
 * non-zero into *owned (the caller frees it). */
static const int64_t *positive_pairs(const ds_split *s, int64_t **owned, int64_t *n) {
    *owned = NULL;
    if (!s->present) {
        *n = 0;
        return NULL;
    }
    if (!s->labels) {
        *n = s->num_items;
        return s->seeds;
    }
    int64_t *p = cgnn_malloc((size_t)(s->num_items > 0 ? s->num_items : 1) * 2 * sizeof(int64_t));
    int64_t m = 0;
    for (int64_t i = 0; i < s->num_items; i++)
        if (s->labels[i] != 0) p[2 * m] = s->seeds[2 * i], p[2 * m + 1] = s->seeds[2 * i + 1], m++;
    *owned = p;
    *n = m;
    return p;
}

/* The task named `name` (or the first link-prediction task); NULL with *err if none fits. */
static const ds_task *find_lp_task(const dataset *ds, const char *name, cgnn_err *err) {
    if (name) {
        const ds_task *t = dataset_find_task(ds, name);
        if (!t) {
            err_set(err, CGNN_ERR_INPUT, "--task: %s: no task named '%s'", ds->dir, name);
            return NULL;
        }
        if (t->kind != DS_TASK_LINK_PREDICTION) {
            err_set(err, CGNN_ERR_INPUT, "--task: %s: task '%s' is %s, not link prediction", ds->dir, name,
                    ds_task_kind_name(t->kind));
            return NULL;
        }
        return t;
    }
    for (int i = 0; i < ds->num_tasks; i++)
        if (ds->tasks[i].kind == DS_TASK_LINK_PREDICTION) return &ds->tasks[i];
    err_set(err, CGNN_ERR_INPUT, "%s: no link-prediction task (a task whose seeds are (M, 2) node pairs)",
            ds->dir);
    return NULL;
}

/* Opens the embeddings at path: a 2-D float32 (N, D) array (D = want_dim when want_dim > 0),
 * of node type `type` of ds (-1: every node of an untyped dataset). 0, or -1 with *err naming the
 * file. */
static int open_embeddings(npy_array *a, const char *path, const dataset *ds, int type, int64_t N, int64_t want_dim,
                           cgnn_err *err) {
    if (npy_open(a, path, 1, err) != 0) return -1;
    if (a->dtype != NPY_DTYPE_FLOAT32 || a->ndim != 2)
        return err_set(err, CGNN_ERR_INPUT, "%s: expected a 2-D float32 array (N, D) of embeddings, got %d-D %s", path,
                       a->ndim, npy_dtype_name(a->dtype));
    if (a->shape[0] != N || a->shape[1] < 1) {
        if (type >= 0)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: embeddings have shape (%lld, %lld) but node type '%s' of dataset %s has %lld nodes",
                           path, (long long)a->shape[0], (long long)a->shape[1], ds->node_types[type].name, ds->dir,
                           (long long)N);
        return err_set(err, CGNN_ERR_INPUT, "%s: embeddings have shape (%lld, %lld) but dataset %s has %lld nodes", path,
                       (long long)a->shape[0], (long long)a->shape[1], ds->dir, (long long)N);
    }
    if (want_dim > 0 && a->shape[1] != want_dim)
        return err_set(err, CGNN_ERR_INPUT, "%s: embeddings have %lld dims, the anchors' %lld (one space for both)",
                       path, (long long)a->shape[1], (long long)want_dim);
    return 0;
}

int cli_cmd_rank(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&RANK_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&RANK_CMD);
        return 0;
    }
    const char *emb_path = cli_flag_str(&RANK_CMD, "embeddings");
    const char *dir = cli_flag_str(&RANK_CMD, "dataset");
    const char *split_name = cli_flag_str(&RANK_CMD, "split");
    const char *out = cli_flag_str(&RANK_CMD, "out");
    if (!emb_path || !dir) {
        err_set(&err, CGNN_ERR_INPUT,
                "rank: --embeddings E.npy and --dataset DIR are required (see cgnn rank --help)");
        return cli_fail(&err);
    }
    int64_t K = 20;
    if (cli_flag_int(&RANK_CMD, "k", 1, 1 << 20, &K, &err) != 0) return cli_fail(&err);
    if (K < 1 || K > INT_MAX) {
        err_set(&err, CGNN_ERR_INPUT, "--k: expected an integer >= 1, got %lld", (long long)K);
        return cli_fail(&err);
    }
    const char *cand_s = cli_flag_str(&RANK_CMD, "candidates");
    int64_t c_lo = 0, c_hi = 0; /* c_hi 0: every node */
    if (cand_s && lp_candidate_range_parse(cand_s, &c_lo, &c_hi) != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--candidates: expected LO:HI, two node ids with 0 <= LO < HI, got '%s'",
                cand_s);
        return cli_fail(&err);
    }
    ds_split_id split = DS_SPLIT_TEST;
    if (split_name && strcmp(split_name, "valid") == 0)
        split = DS_SPLIT_VALID;
    else if (split_name && strcmp(split_name, "test") != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--split: expected test or valid, got '%s'", split_name);
        return cli_fail(&err);
    }

    dataset ds;
    if (dataset_open(&ds, dir, &err) != 0) return cli_fail(&err);
    if (ds.partition.present) { /* its seeds are in the partition's new ids, the embeddings in original ids */
        err_set(&err, CGNN_ERR_INPUT,
                "--dataset %s: is a part of a partitioned graph (%s), whose node ids are renumbered; rank against "
                "the original dataset",
                dir, ds.partition.graph);
        dataset_close(&ds);
        return cli_fail(&err);
    }
    npy_array emb, cand; /* the anchors' embeddings; a typed graph of two node types: the candidates' */
    memset(&emb, 0, sizeof emb);
    memset(&cand, 0, sizeof cand);
    const int typed = dataset_is_typed(&ds);
    int src_type = 0, dst_type = 0;
    char q_path[4096 + DATASET_NAME_MAX + 8], c_path[4096 + DATASET_NAME_MAX + 8];
    snprintf(q_path, sizeof q_path, "%s", emb_path);
    snprintf(c_path, sizeof c_path, "%s", emb_path);
    int64_t *owned[3] = {NULL, NULL, NULL};
    int64_t n_rank = 0, n_train = 0, n_excl = 0, anchors = 0;
    const int64_t *rank_pairs, *train_pairs, *excl_pairs = NULL;
    double recall = 0.0, ndcg = 0.0, t0, dt;
    int rc = 0;
    outguard guard;
    outguard_init(&guard);
    const ds_task *task = find_lp_task(&ds, cli_flag_str(&RANK_CMD, "task"), &err);
    if (!task) goto fail;
    if (typed && cand_s) {
        err_set(&err, CGNN_ERR_INPUT,
                "--candidates: dataset %s is typed: the candidates are the nodes of the task's destination type "
                "(%s); the range applies to homogeneous datasets only",
                ds.dir, ds.edge_types[task->type].name);
        goto fail;
    }
    if (typed) { /* anchors of the edge type's src type, candidates of its dst type */
        const ds_edge_type *et = &ds.edge_types[task->type];
        src_type = et->src_type, dst_type = et->dst_type;
        struct stat st;
        if (stat(emb_path, &st) == 0 && !S_ISDIR(st.st_mode)) {
            err_set(&err, CGNN_ERR_INPUT,
                    "--embeddings %s: the dataset %s is typed: name the directory cgnn embed wrote (one <node "
                    "type>.npy per node type; this task's edge type %s reads %s.npy and %s.npy)",
                    emb_path, ds.dir, et->name, ds.node_types[src_type].name, ds.node_types[dst_type].name);
            goto fail;
        }
        snprintf(q_path, sizeof q_path, "%s/%s.npy", emb_path, ds.node_types[src_type].name);
        snprintf(c_path, sizeof c_path, "%s/%s.npy", emb_path, ds.node_types[dst_type].name);
    }
    if (out) { /* the metrics file is never an input, and one job writes it at a time */
        outguard_add_dataset(&guard, &ds);
        outguard_add_input(&guard, q_path, "the embeddings (--embeddings)");
        outguard_add_input(&guard, c_path, "the embeddings (--embeddings)");
        if (outguard_check_file(&guard, out, "rank --out", &err) != 0 ||
            outguard_lock(&guard, out, "rank --out", "cgnn rank", &err) != 0)
            goto fail;
    }
    outguard_activate(&guard); /* --out is its only output */
    if (!task->splits[split].present) {
        err_set(&err, CGNN_ERR_INPUT, "%s: task '%s' has no %s", ds.dir, task->name, ds_split_name(split));
        goto fail;
    }
    const int64_t N = typed ? ds.node_types[src_type].num_nodes : dataset_total_nodes(&ds);
    const int64_t Nc = typed ? ds.node_types[dst_type].num_nodes : N;
    const int two = typed && src_type != dst_type; /* anchors and candidates in two files */
    if (c_hi > N) {
        err_set(&err, CGNN_ERR_INPUT, "--candidates: %lld:%lld is outside the nodes [0, %lld) of dataset %s",
                (long long)c_lo, (long long)c_hi, (long long)N, ds.dir);
        goto fail;
    }
    if (open_embeddings(&emb, q_path, &ds, typed ? src_type : -1, N, 0, &err) != 0) goto fail;
    if (two && open_embeddings(&cand, c_path, &ds, dst_type, Nc, emb.shape[1], &err) != 0) goto fail;
    // ranked: the split's positives; excluded: train positives, and validation for the test split
    rank_pairs = positive_pairs(&task->splits[split], &owned[0], &n_rank);
    train_pairs = positive_pairs(&task->splits[DS_SPLIT_TRAIN], &owned[1], &n_train);
    if (split == DS_SPLIT_TEST) excl_pairs = positive_pairs(&task->splits[DS_SPLIT_VALID], &owned[2], &n_excl);
    if (n_rank == 0) {
        err_set(&err, CGNN_ERR_INPUT, "%s: %s of task '%s' has no positive pairs", task->splits[split].seeds_path,
                ds_split_name(split), task->name);
        goto fail;
    }
    t0 = timer_now();
    if (c_hi > 0 ? lp_full_ranking_range(emb.data, N, emb.shape[1], c_lo, c_hi, rank_pairs, n_rank, train_pairs,
                                         n_train, excl_pairs, n_excl, (int)K, &recall, &ndcg, &anchors, &err)
                 : lp_full_ranking_typed(emb.data, N, two ? cand.data : emb.data, Nc, emb.shape[1], !two, rank_pairs,
                                         n_rank, train_pairs, n_train, excl_pairs, n_excl, (int)K, &recall, &ndcg,
                                         &anchors, &err)) {
        if (c_hi > 0) err_prefix(&err, "%s (%s): ", task->splits[split].seeds_path, ds_split_name(split));
        err_prefix(&err, "rank: ");
        goto fail;
    }
    dt = timer_now() - t0;
    if (typed)
        printf("task %s (%s), %s: %lld pairs, %lld anchors of type %s; candidates: every %s node (%lld x %lld dims); "
               "excluded: %lld train%s pairs\n",
               task->name, ds.edge_types[task->type].name, ds_split_name(split), (long long)n_rank, (long long)anchors,
               ds.node_types[src_type].name, ds.node_types[dst_type].name, (long long)Nc, (long long)emb.shape[1],
               (long long)(n_train + n_excl), split == DS_SPLIT_TEST ? " + validation" : "");
    else if (c_hi > 0)
        printf("task %s, %s: %lld pairs, %lld anchors; candidates: nodes [%lld, %lld) of %lld x %lld dims; excluded: "
               "%lld train%s pairs\n",
               task->name, ds_split_name(split), (long long)n_rank, (long long)anchors, (long long)c_lo,
               (long long)c_hi, (long long)N, (long long)emb.shape[1], (long long)(n_train + n_excl),
               split == DS_SPLIT_TEST ? " + validation" : "");
    else
        printf("task %s, %s: %lld pairs, %lld anchors; %lld nodes x %lld dims; excluded: %lld train%s pairs\n",
               task->name, ds_split_name(split), (long long)n_rank, (long long)anchors, (long long)N,
               (long long)emb.shape[1], (long long)(n_train + n_excl), split == DS_SPLIT_TEST ? " + validation" : "");
    printf("Recall@%lld: %.6f\nNDCG@%lld: %.6f\n", (long long)K, recall, (long long)K, ndcg);
    printf("ranked in %.2f s\n", dt);
    if (out) {
        char rname[64], nname[64];
        snprintf(rname, sizeof rname, "recall_at_%lld", (long long)K);
        snprintf(nname, sizeof nname, "ndcg_at_%lld", (long long)K);
        const char *names[2] = {rname, nname};
        const double values[2] = {recall, ndcg};
        if (outputs_write_eval_metrics(out, names, values, 2, &err) != 0) goto fail;
        printf("metrics: %s\n", out);
    }
    goto done;
fail:
    rc = cli_fail(&err);
done:
    for (int i = 0; i < 3; i++) free(owned[i]);
    npy_close(&emb);
    npy_close(&cand);
    dataset_close(&ds);
    outguard_free(&guard);
    return rc;
}
