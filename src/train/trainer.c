/* trainer.c — the training job (node classification and link prediction); see trainer.h.
 *
 * Setup, in the order the ranks run it: the config's policy (what a graph source or a model family
 * cannot serve yet is refused here, naming the field), the graph source (source/graph_source.h),
 * the task and its splits, the model family (family/model_family.h), the loaders, the model, the
 * optimiser and the task head; then every rank's outputs guard and the ranks' agreement, the
 * resumed state (resume.c), the loop (loop.c), the best weights, the checkpoint and the test.
 */
#include "train/trainer.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dist/dist.h"
#include "graph/csc.h"
#include "graph/edge_split.h"
#include "graph/typed_graph.h"
#include "io/dataset.h"
#include "io/outguard.h"
#include "nn/lp_loss.h"
#include "sample/sample_weights.h"
#include "train/graph_store.h"
#include "train/trainer_impl.h"
#include "util/log.h"

/* The most items (LP: pairs) one batch of any loader carries: batch_size, or more with anchor
 * batching (each anchor with its positives). */
static int64_t max_batch_pairs(const trainer *t) {
    int64_t m = t->a->batch_size;
    const loader *ls[3] = {t->have_train ? &t->train : NULL, t->have_val ? &t->val : NULL, t->have_test ? &t->test : NULL};
    for (int i = 0; i < 3; i++)
        if (ls[i] && t->cfg->task == TASK_LINK_PREDICTION && loader_max_pairs(ls[i]) > m) m = loader_max_pairs(ls[i]);
    return m;
}

/* LP anchor batching: one log line (root) with the batches' shape. */
static void log_anchor_batching(const trainer *t) {
    if (t->cfg->task != TASK_LINK_PREDICTION || !t->a->lp_anchor_batching || !trainer_is_root(t)) return;
    char cap[64] = "all their positives";
    if (t->a->max_labels_per_anchor_node > 0)
        snprintf(cap, sizeof cap, "their first %lld positives", (long long)t->a->max_labels_per_anchor_node);
    log_info("link prediction batches: %lld anchors with %s (lp_batching: anchors, GiGL's DistABLPLoader); "
             "%lld training anchors (%lld pairs), at most %lld pairs a batch",
             (long long)t->a->batch_size, cap, (long long)(t->have_train ? loader_num_batch_items(&t->train) : 0),
             (long long)(t->have_train ? loader_num_items(&t->train) : 0), (long long)max_batch_pairs(t));
}

/* LP, after head_init (every rank): the auc / ap rows, 2 per positive pair of the largest
 * evaluated split. */
static void reserve_lp_scores(trainer *t) {
    int64_t max_pairs = 0;
    if (t->have_val && loader_num_items(&t->val) > max_pairs) max_pairs = loader_num_items(&t->val);
    if (t->have_test && loader_num_items(&t->test) > max_pairs) max_pairs = loader_num_items(&t->test);
    head_reserve_scores(&t->head, max_pairs);
}

/* Sampler threads of the validation / test loader: GiGL's val_main_num_workers /
 * test_main_num_workers when given (>= 0), else train_main_num_workers'. */
static int split_workers(int64_t given, int train_workers) { return given >= 0 ? (int)given : train_workers; }

static int loader_for_split(trainer *t, loader *l, ds_split_id split, int shuffle, int workers, cgnn_err *err) {
    const trainer_args *a = t->a;
    const ds_split *sp = &t->gtask->splits[split]; /* the whole split (its labels) */
    static const char *const LANE_NAMES[DS_SPLIT_COUNT] = {"train", "validation", "test"};
    graph_source_loader_request r = {
        .split = split,
        .num_layers = a->num_layers,
        .replace = a->replace,
        .batch_size = a->batch_size,
        .shuffle = shuffle,
        /* local seeds: every rank runs the fewest batches of any rank instead (train_loop) */
        .drop_uneven = split == DS_SPLIT_TRAIN && a->drop_uneven_inputs && !t->src.local_seeds,
        .seed = a->seed + (uint64_t)split * 0x632be59bd9b4e019ULL,
        .num_workers = workers,
        .normalize_rows = strcmp(a->feature_normalization, "row") == 0,
        /* labelled pairs: training adds the listed (hard) negatives to the random ones; an
         * evaluation split ranks each positive against its own listed negatives only (the
         * dataset fixes the candidates, as GraphBolt's ogbl-citation2) */
        .num_negatives = split == DS_SPLIT_TRAIN ? a->random_negative_sample_batch_size
                         : sp->labels            ? 0
                                                 : a->random_negative_sample_batch_size_for_evaluation,
        .exclude_seed_edges = split == DS_SPLIT_TRAIN && a->exclude_seed_edges,
        .neg_lo = a->lp_candidate_lo, /* random negatives: candidates only */
        .neg_hi = a->lp_candidate_hi,
        .anchor_batches = a->lp_anchor_batching, /* GiGL's DistABLPLoader for every split alike */
        .max_labels_per_anchor = a->max_labels_per_anchor_node,
        .trace = t->logs.trace.enabled ? &t->logs.trace : NULL,
        .trace_tid_base = 1 + (int)split * 16,
        .trace_name = LANE_NAMES[split],
    };
    for (int h = 0; h < a->num_layers; h++) r.fanouts[h] = a->fanouts[h];
    loader_config lc;
    graph_source_rows rows; /* the whole split, or (local seeds) this part's rows sliced among its ranks */
    graph_source_loader_prepare(&t->src, t->gtask, &r, &lc, &rows);
    lc.sampler.weights = t->sample_weights[0]; /* NULL: uniform */
    model_family_loader_config(&t->fam, &lc); /* the inputs it gathers; typed: the typed sampler */
    if (lc.typed)
        for (int e = 0; e < MINIBATCH_MAX_EDGE_TYPES; e++) lc.typed_sampler.weights[e] = t->sample_weights[e];
    return graph_source_loader_open(&t->src, t->gtask, split, &lc, &rows, l, err);
}


static void trainer_free(trainer *t) {
    if (lp_loss_gemm_stats() == &t->timers.loss_gs) lp_loss_gemm_stats_register(NULL);
    if (t->have_train) loader_free(&t->train);
    if (t->have_val) loader_free(&t->val);
    if (t->have_test) loader_free(&t->test);
    model_family_free(&t->fam);
    head_free(&t->head);
    cgnn_err terr = {0};
    if (!t->guarded) trace_discard(&t->logs.trace); /* failed before its outputs were checked: nothing written */
    else if (trace_close(&t->logs.trace, &terr) != 0) log_info("profiler: %s", terr.msg); /* after the loaders stopped */
    optim_free(&t->opt);
    free(t->state.fp);
    jsonl_close(&t->logs.log, NULL);
    tb_close(&t->logs.tb);
    graph_source_free(&t->src); /* the loaders are stopped: no thread calls the rpc layer any more */
    for (int e = 0; e < MINIBATCH_MAX_EDGE_TYPES; e++) free(t->sample_weights[e]);
    edge_split_free(&t->ssl);
    outguard_free(&t->guard); /* last: the outputs are complete (or the job failed) */
}


/* trainerArgs.sampling_weight: the draw weights of the graph's in-edges, per edge type
 * (sample/sample_weights.h), into t->sample_weights: a whole graph's, or on a part its own
 * in-edges' (handed to the source for its PICK answers too); server-client: nothing here (the
 * storage ranks read them). Typed: the edge types without the feature sample uniformly (a log
 * line lists the weighted ones); at least one must have it. ssl runs are refused. */
static int open_sample_weights(trainer *t, int typed, int parted, int client, cgnn_err *err) {
    const char *file = t->cfg->file, *key = "trainerConfig.trainerArgs.sampling_weight", *name = t->a->sampling_weight;
    if (client) return 0; /* the storage ranks read the weights and sample (train/graph_store.c) */
    const char *why = t->have_ssl ? "with ssl_positive_label_percentage (its index drops the held-out edges)" : NULL;
    if (why)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: weighted sampling is not available %s yet; remove it, or train "
                       "on the whole dataset",
                       file, key, why);
    /* a part: its own edges' weights (cgnn partition copies edge features per part, in the part's
     * edge order) into its own index's order; the PICKs it answers use them */
    const dataset *ds = t->src.ds;
    int64_t zero = 0, found = 0;
    char types[1024] = "";
    size_t len = 0;
    for (int e = 0; e < ds->num_edge_types; e++) {
        if (typed && !dataset_find_feature(ds, DS_DOMAIN_EDGE, e, name)) continue; /* uniform */
        const csc_graph *g = typed ? t->src.tg.csc[e] : t->src.g; /* (a part: its own rows) */
        int64_t z = 0;
        if (sample_weights_load(ds, e, g, name, &t->sample_weights[e], &z, err) != 0)
            return err_prefix(err, "%s: %s: ", file, key);
        zero += z;
        found++;
        if (typed && len < sizeof types)
            len += (size_t)snprintf(types + len, sizeof types - len, "%s%s", found > 1 ? ", " : "", ds->edge_types[e].name);
    }
    if (parted) graph_source_set_sample_weights(&t->src, t->sample_weights);
    if (!found)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s: no edge type of %s has an edge feature '%s' (feature_data entries with domain: edge) to "
                       "take the sampling weights from",
                       file, key, ds->dir, name);
    if (trainer_is_root(t))
        log_info("weighted sampling: draw weights from edge feature '%s'%s%s%s; %lld node%s with in-edges that all "
                 "weigh 0 draw%s no neighbours",
                 name, typed ? " of edge types " : "", types, typed ? " (the others uniform)" : "", (long long)zero,
                 zero == 1 ? "" : "s", zero == 1 ? "s" : "");
    return 0;
}

/* trainerArgs.ssl_positive_label_percentage: GiGL's self-supervised split (graph/edge_split.h)
 * of the supervision edge type's edges becomes the run's link prediction task (ssl_task), as if
 * the dataset listed its pairs. GiGL refuses labels loaded together with self-supervised ones
 * (dataset_factory.py), and so does cgnn: a dataset with a link prediction task of its own is an
 * error. Whole graphs only (every rank computes the same split). */
static int ssl_setup(trainer *t, cgnn_err *err) {
    const trainer_args *a = t->a;
    const dataset *ds = t->src.ds;
    const char *file = t->cfg->file;
    if (t->src.kind != GRAPH_SOURCE_WHOLE)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.ssl_positive_label_percentage: self-supervised splits are built "
                       "on a whole graph; %s is %s (split the dataset's edges into link prediction pairs before "
                       "partitioning)", file, t->cfg->dataset_path,
                       t->src.kind == GRAPH_SOURCE_PART ? "a partitioned graph"
                                                        : "served by storage ranks (server-client mode)");
    for (int i = 0; i < ds->num_tasks; i++)
        if (ds->tasks[i].kind == DS_TASK_LINK_PREDICTION)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: trainerConfig.trainerArgs.ssl_positive_label_percentage: the dataset %s has link "
                           "prediction task '%s' with its own pairs; GiGL refuses labels loaded together with "
                           "self-supervised ones (dataset_factory.py): remove one of them", file, ds->dir,
                           ds->tasks[i].name);
    int e = 0;
    if (ds->typed) {
        const config_edge_type *se = &t->cfg->supervision_edge_type;
        if (!se->relation[0]) {
            if (ds->num_edge_types != 1)
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: trainerConfig.trainerArgs.ssl_positive_label_percentage: the dataset %s has %d edge "
                               "types; name the one to take labels from in taskMetadata."
                               "nodeAnchorBasedLinkPredictionTaskMetadata.supervisionEdgeTypes",
                               file, ds->dir, ds->num_edge_types);
        } else {
            char name[3 * CONFIG_TYPE_NAME_MAX + 4];
            config_edge_type_name(se, name, sizeof name);
            for (e = 0; e < ds->num_edge_types && strcmp(ds->edge_types[e].name, name) != 0; e++) {
            }
            if (e == ds->num_edge_types) /* config_check_types refuses this first; kept as a guard */
                return err_set(err, CGNN_ERR_INPUT, "%s: supervisionEdgeTypes: %s is not an edge type of %s", file,
                               name, ds->dir);
        }
    }
    const ds_edge_type *et = &ds->edge_types[e];
    if (edge_split_make(&t->ssl, &et->edges, ds->node_types[et->src_type].num_nodes, a->ssl_positive_label_percentage,
                        a->num_val, a->num_test, a->seed, err) != 0)
        return err_prefix(err, "%s: trainerConfig.trainerArgs: ", file);
    t->have_ssl = 1;
    ds_task *task = &t->ssl_task;
    memset(task, 0, sizeof *task);
    snprintf(task->name, sizeof task->name, "ssl_link_prediction");
    task->kind = DS_TASK_LINK_PREDICTION;
    task->type = e;
    static const int map[DS_SPLIT_COUNT] = {[DS_SPLIT_TRAIN] = EDGE_SPLIT_TRAIN, [DS_SPLIT_VALID] = EDGE_SPLIT_VALID,
                                            [DS_SPLIT_TEST] = EDGE_SPLIT_TEST};
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        ds_split *sp = &task->splits[s];
        sp->present = 1;
        sp->num_items = t->ssl.num_pairs[map[s]];
        sp->seed_width = 2;
        sp->seeds = t->ssl.pairs[map[s]]; /* owned by t->ssl */
        snprintf(sp->seeds_path, sizeof sp->seeds_path,
                 "%.3000s: trainerConfig.trainerArgs.ssl_positive_label_percentage (the %s labels of %.200s)", file,
                 ds_split_name((ds_split_id)s), et->name);
    }
    t->task = task;
    if (trainer_is_root(t))
        log_info("self-supervised link prediction split (GiGL's ssl_positive_label_percentage %g, num_val %g, "
                 "num_test %g): %lld of the %lld edges of %s are labels; per anchor: %lld / %lld / %lld anchors, "
                 "%lld / %lld / %lld pairs (train / validation / test)",
                 a->ssl_positive_label_percentage, a->num_val, a->num_test, (long long)t->ssl.num_labels,
                 (long long)t->ssl.num_edges, et->name, (long long)t->ssl.num_anchors[0],
                 (long long)t->ssl.num_anchors[1], (long long)t->ssl.num_anchors[2], (long long)t->ssl.num_pairs[0],
                 (long long)t->ssl.num_pairs[1], (long long)t->ssl.num_pairs[2]);
    return 0;
}

/* The supervision edge type's in-neighbour index for an ssl run: without the validation and
 * test label edges, and without their reverse copies in the same edge type when its source and
 * destination node types are the same (an undirected graph stores each pair both ways), unless
 * ssl_keep_eval_edges (built once here, never cached). ctx is the trainer: the whole graph's index
 * builder (graph_source_open_index). */
static int ssl_graph(void *ctx, csc_graph *g, cgnn_err *err) {
    trainer *t = ctx;
    const dataset *ds = t->src.ds;
    const ds_edge_type *et = &ds->edge_types[t->ssl_task.type];
    const int keep = t->a->ssl_keep_eval_edges;
    uint8_t *rev = NULL;
    int64_t removed = 0, reversed = 0;
    if (!keep && et->src_type == et->dst_type) {
        rev = cgnn_calloc((size_t)et->edges.num_edges + 1, 1);
        reversed = edge_split_mark_reverse(rev, &et->edges, &t->ssl);
        for (int64_t e = 0; e < et->edges.num_edges; e++) /* a held-out label that is another's reverse */
            if (rev[e] && t->ssl.which[e] > 1 + EDGE_SPLIT_TRAIN) reversed--;
    }
    const int rc = edge_split_csc(g, &et->edges, ds->node_types[et->dst_type].num_nodes,
                                  ds->node_types[et->src_type].num_nodes, &t->ssl, rev, keep, t->threads, &removed, err);
    free(rev);
    if (rc != 0) return -1;
    if (trainer_is_root(t)) {
        if (keep)
            log_info("ssl: message passing keeps all %lld edges of %s, the %lld validation / test label edges "
                     "and their reverse copies included (ssl_keep_eval_edges: true, GiGL's behaviour)",
                     (long long)et->edges.num_edges, et->name,
                     (long long)(t->ssl.num_pairs[EDGE_SPLIT_VALID] + t->ssl.num_pairs[EDGE_SPLIT_TEST]));
        else if (rev)
            log_info("ssl: removed %lld validation / test label edges of %s from message passing and %lld reverse "
                     "copies of them in %s (%lld of %lld edges left; training labels stay, as in GiGL; "
                     "ssl_keep_eval_edges: true keeps them all)",
                     (long long)(removed - reversed), et->name, (long long)reversed, et->name,
                     (long long)g->num_edges, (long long)et->edges.num_edges);
        else
            log_info("ssl: removed %lld validation / test label edges of %s from message passing (%lld of %lld edges "
                     "left; training labels stay, as in GiGL; ssl_keep_eval_edges: true keeps them all)",
                     (long long)removed, et->name, (long long)g->num_edges, (long long)et->edges.num_edges);
    }
    return 0;
}

/* On a typed graph, the reverse edge types (d, r', s) of the supervision edge type (s, r, d),
 * s != d: their copies of the validation / test labels leave message passing too (each such
 * type's index is rebuilt without them, once), unless ssl_keep_eval_edges. */
static int ssl_reverse_types(trainer *t, cgnn_err *err) {
    const dataset *ds = t->src.ds;
    const int st = t->ssl_task.type;
    const ds_edge_type *et = &ds->edge_types[st];
    if (t->a->ssl_keep_eval_edges || et->src_type == et->dst_type) return 0;
    for (int e = 0; e < ds->num_edge_types; e++) {
        const ds_edge_type *rt = &ds->edge_types[e];
        if (e == st || rt->src_type != et->dst_type || rt->dst_type != et->src_type) continue;
        uint8_t *drop = cgnn_calloc((size_t)rt->edges.num_edges + 1, 1);
        const int64_t marked = edge_split_mark_reverse(drop, &rt->edges, &t->ssl);
        csc_graph c;
        int64_t removed = 0;
        const int rc = edge_split_csc(&c, &rt->edges, ds->node_types[rt->dst_type].num_nodes,
                                      ds->node_types[rt->src_type].num_nodes, NULL, drop, 0, t->threads, &removed, err);
        free(drop);
        if (rc != 0) return -1;
        CGNN_CHECK(removed == marked);
        const int64_t left = c.num_edges;
        typed_graph_replace(&t->src.tg, e, &c); /* takes c over */
        if (trainer_is_root(t))
            log_info("ssl: removed %lld reverse copies of the validation / test labels of %s from message passing "
                     "in %s (%lld of %lld edges left)",
                     (long long)marked, et->name, rt->name, (long long)left, (long long)rt->edges.num_edges);
    }
    return 0;
}

/* A typed graph (trainer_setup): the default model (HGT, as GiGL's heterogeneous examples), the
 * typed graph's indexes (the whole graph's, the part's view, or the storage ranks' shape), and for
 * an ssl run the supervision edge type's index without the held-out labels. */
static int open_typed_graph(trainer *t, cgnn_err *err) {
    const trainer_args *a = t->a;
    const dataset *ds = t->src.ds;
    const char *file = t->cfg->file;
    const int T = ds->num_node_types, K = ds->num_edge_types;
    if (!a->model_given && !model_kind_is_typed(a->model)) { /* GiGL's heterogeneous examples train HGT */
        t->own_cfg->args.model = MODEL_HGT;
        if (a->hidden_dim % a->num_heads != 0)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: trainerConfig.trainerArgs: the dataset %s is typed and the config names no model "
                           "(gnn_model_class_path), so cgnn trains HGT, which needs hidden_dim (%lld) divisible by "
                           "num_heads (%d)", file, ds->dir, (long long)a->hidden_dim, a->num_heads);
        if (trainer_is_root(t))
            log_info("gnn_model_class_path not given and the dataset %s is typed (%d node types, %d edge types): "
                     "training HGT (GiGL's heterogeneous examples' model)", ds->dir, T, K);
    }
    if (!model_kind_is_typed(a->model))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.gnn_model_class_path: %s is a homogeneous model, but the dataset "
                       "%s has %d node types and %d edge types; use HeteroSAGE, RGCN or HGT",
                       file, model_kind_name(a->model), ds->dir, T, K);
    if (graph_source_open_typed(&t->src, err) != 0) return -1;
    if (t->have_ssl) { /* (a whole graph) */
        csc_graph c;
        if (ssl_graph(t, &c, err) != 0) return -1;
        typed_graph_replace(&t->src.tg, t->ssl_task.type, &c);
        if (ssl_reverse_types(t, err) != 0) return -1;
    }
    return 0;
}

/* The model family, the loaders, the model and the task head (trainer_setup, after the graph and
 * the task are open): the family's inputs (feat: a homogeneous graph's node features, or NULL)
 * and tables first, this part's services, the loaders (they gather the family's inputs), then the
 * model sized for every loader's batches, the optimiser and the head. */
/* trainerArgs.node_feature against the dataset (a name a node type with features lacks is an
 * error naming the ones it has), and the log line of the features the model reads. */
static int check_node_features(trainer *t, cgnn_err *err) {
    const trainer_args *a = &t->cfg->args;
    const dataset *ds = t->src.ds;
    const int typed = dataset_is_typed(ds), T = typed ? ds->num_node_types : 1;
    char what[CONFIG_PATH_MAX + 64];
    snprintf(what, sizeof what, "%s: trainerConfig.trainerArgs.node_feature", t->cfg->file);
    if (graph_source_check_node_feature(&t->src, what, err) != 0) return -1;
    char line[2048] = "", names[256];
    size_t len = 0;
    for (int k = 0; k < T; k++) {
        const ds_feature *f = typed ? graph_source_type_feature(&t->src, k) : graph_source_feature(&t->src);
        const int avail = dataset_node_feature_names(ds, k, names, sizeof names);
        char one[800];
        if (f)
            snprintf(one, sizeof one, "%s%s'%s' (%lld, %s)%s%s%s", typed ? ds->node_types[k].name : "", typed ? " " : "",
                     f->name, (long long)f->dim, npy_dtype_name(f->array.dtype), avail > 1 ? " of " : "",
                     avail > 1 ? names : "", avail > 1 && !a->node_feature[0] ? " (trainerArgs.node_feature picks one)" : "");
        else
            snprintf(one, sizeof one, "%s: none", ds->node_types[k].name);
        const int n = snprintf(line + len, sizeof line - len, "%s%s", k ? ", " : "", one);
        if (n > 0 && (size_t)n < sizeof line - len) len += (size_t)n;
    }
    if (trainer_is_root(t) && a->num_layers > 0)
        log_info("node feature%s: %s; normalisation: %s (feature_normalization)", typed ? "s" : "", line,
                 a->feature_normalization);
    return 0;
}

static int setup_model(trainer *t, const ds_feature *feat, int64_t out_dim, cgnn_err *err) {
    const trainer_args *a = t->a;
    const model_family_options fo = {t->cfg, a, t->task, t->gtask, &t->src, t->d, t->threads};
    model_family_init(&t->fam, model_family_choose(a, dataset_is_typed(t->src.ds)), &fo);
    if (model_family_open(&t->fam, feat, err) != 0) return -1;
    /* on parts: this part's services, before the loaders (their batches reach every part) */
    if (graph_source_serve(&t->src, model_family_feature(&t->fam), model_family_type_features(&t->fam), err) != 0)
        return -1;
    const int workers = (int)a->num_workers;
    /* the loaders first: with labelled LP pairs, their listed negatives size the batches */
    if (t->task->splits[DS_SPLIT_TRAIN].present && !t->cfg->should_skip_training) {
        if (loader_for_split(t, &t->train, DS_SPLIT_TRAIN, 1, workers, err) != 0) return -1;
        t->have_train = 1;
    }
    if (t->task->splits[DS_SPLIT_VALID].present) {
        if (loader_for_split(t, &t->val, DS_SPLIT_VALID, a->num_val_batches > 0,
                             split_workers(a->val_num_workers, workers), err) != 0)
            return -1;
        t->have_val = 1;
    }
    if (t->task->splits[DS_SPLIT_TEST].present) {
        if (loader_for_split(t, &t->test, DS_SPLIT_TEST, 0, split_workers(a->test_num_workers, workers), err) != 0)
            return -1;
        t->have_test = 1;
    }
    const model_family_loaders ls = {{t->have_train ? &t->train : NULL, t->have_val ? &t->val : NULL,
                                      t->have_test ? &t->test : NULL},
                                     max_batch_pairs(t), workers};
    log_anchor_batching(t);
    if (model_family_build(&t->fam, &ls, out_dim, err) != 0) return -1;
    if (optim_init(&t->opt, &a->optim, t->fam.m.num_params, err) != 0) return -1;
    int64_t max_negatives = 0;
    for (int i = 0; i < 3; i++)
        if (ls.l[i] && loader_max_negatives(ls.l[i]) > max_negatives) max_negatives = loader_max_negatives(ls.l[i]);
    if (head_init(&t->head, t->cfg, out_dim, max_batch_pairs(t), max_negatives, err) != 0) return -1;
    if (t->cfg->task == TASK_LINK_PREDICTION) reserve_lp_scores(t);
    return 0;
}

/* Opens data, checks it against the config, builds model/optimiser/loaders. */
static int trainer_setup(trainer *t, const resource_config *res, cgnn_err *err) {
    const trainer_args *a = t->a;
    const int lp = t->cfg->task == TASK_LINK_PREDICTION;
    if (t->cfg->profiler_enabled) { /* every rank writes its own trace_rank<R>.json */
        if (trace_open(&t->logs.trace, t->cfg->profiler_log_dir, t->d->rank, t->cfg->profiler_wait, t->cfg->profiler_warmup,
                       t->cfg->profiler_active, err) != 0)
            return err_prefix(err, "%s: profilerConfig: ", t->cfg->file);
        trace_set_repeat(&t->logs.trace, t->cfg->profiler_repeat);
        trace_name_thread(&t->logs.trace, 0, "main");
    }
    if (access(t->cfg->dataset_path, F_OK) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: sharedConfig.preprocessedMetadataUri: %s: %s", t->cfg->file,
                       t->cfg->dataset_path, strerror(errno));
    /* compute threads: num_threads_per_replica, else (one process) local_trainer_config.num_workers,
     * else the machine's cores shared by the ranks on it — never oversubscribed by default */
    const dist_ctx *d = t->d;
    int cores = omp_get_num_procs();
    int threads = res->num_threads_per_replica > 0 ? res->num_threads_per_replica
                  : (d->size == 1 && res->num_workers > 0) ? res->num_workers
                                                           : cores / (d->local_size > 0 ? d->local_size : 1);
    if (threads < 1) threads = 1;
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    t->threads = threads;
    if (graph_source_open(&t->src, threads, err) != 0) return -1;
    /* what the trainer refuses on parts (or in server-client mode) yet: its policy, asked of the source */
    const int parted = t->src.kind == GRAPH_SOURCE_PART, client = t->src.kind == GRAPH_SOURCE_STORE;
    if (config_check_types(t->cfg, t->src.ds, err) != 0) return -1;
    if (lp && a->ssl_positive_label_percentage > 0 && ssl_setup(t, err) != 0) return -1;
    if (!t->task) t->task = config_find_task(t->cfg, t->src.ds); /* of the config's kind (and supervision type); ssl_setup sets its own */
    if (!t->task)
        return err_set(err, CGNN_ERR_INPUT, "%s: no %s task in the dataset's tasks (the config's taskMetadata is %s)",
                       t->src.ds->dir, lp ? "link prediction (seeds as (M, 2) pairs)" : "node classification (seeds + labels)",
                       lp ? "nodeAnchorBasedLinkPredictionTaskMetadata" : "nodeBasedTaskMetadata");
    if (graph_source_set_task(&t->src, t->task, err) != 0) return -1;
    t->gtask = t->src.gtask; /* (on parts: the same task's whole splits) */
    if (!t->gtask->splits[DS_SPLIT_TRAIN].present && !t->cfg->should_skip_training)
        return err_set(err, CGNN_ERR_INPUT, "%s: task '%s' has no train_set", t->src.ds->dir, t->task->name);
    /* an empty split would train 0 steps (and write an untrained model) or evaluate to NaN */
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const ds_split *sp = &t->gtask->splits[s];
        const int used = s == DS_SPLIT_TRAIN ? !t->cfg->should_skip_training
                         : s == DS_SPLIT_TEST ? !t->cfg->skip_test
                                              : !t->cfg->should_skip_training;
        if (sp->present && used && sp->num_items == 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: task '%s' %s is empty (0 %s); %s", sp->seeds_path, t->task->name,
                           ds_split_name((ds_split_id)s), lp ? "pairs" : "seeds",
                           s == DS_SPLIT_TRAIN ? "there is nothing to train on"
                           : s == DS_SPLIT_TEST ? "there is nothing to test on (or set shouldSkipModelEvaluation)"
                                                : "there is nothing to validate on (remove validation_set)");
    }
    const int typed = dataset_is_typed(t->src.ds);
    if (a->model == MODEL_LIGHTGCN) {
        const char *why = typed ? "the dataset is typed (the propagation is homogeneous)"
                          : parted ? "the graph is partitioned (the propagation needs the whole graph)"
                          : client ? "server-client mode (the propagation needs the whole graph in this process)"
                          : d->size > 1 ? "data-parallel training (mpirun -np > 1) is not supported for it yet"
                                        : NULL;
        if (why)
            return err_set(err, CGNN_ERR_INPUT, "%s: trainerConfig.trainerArgs.gnn_model_class_path: LightGCN trains "
                           "on one process over the whole homogeneous graph; not here (%s): %s", t->cfg->file,
                           graph_source_name(&t->src), why);
        t->lgc_args = *a; /* the sampler and the block model see 0 layers: the batch's own nodes */
        t->lgc_args.num_layers = 0;
        t->lgc_args.num_fanouts = 0;
        for (int h = 0; h < CONFIG_MAX_LAYERS; h++) t->lgc_args.fanouts[h] = 0;
        t->a = a = &t->lgc_args;
    }
    if (a->num_layers == 0 && (typed || parted))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.num_layers: 0 (the learnable embeddings alone) is for a homogeneous "
                       "graph trained whole; %s is %s", t->cfg->file, graph_source_name(&t->src),
                       parted ? "a partitioned graph" : "a typed graph");
    if (lp && a->lp_candidate_hi > 0) {
        if (typed)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: trainerConfig.trainerArgs.lp_candidate_range: %s is a typed graph, whose candidates are "
                           "the nodes of the supervision edge type's destination type; the range is for a homogeneous "
                           "graph",
                           t->cfg->file, t->src.ds->dir);
        const int64_t N = graph_source_num_nodes(&t->src);
        if (a->lp_candidate_hi > N)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: trainerConfig.trainerArgs.lp_candidate_range: %lld:%lld is outside the nodes [0, %lld) "
                           "of %s",
                           t->cfg->file, (long long)a->lp_candidate_lo, (long long)a->lp_candidate_hi, (long long)N,
                           t->src.ds->dir);
        /* every pair's positive (and listed negative) must be a candidate; a partitioned graph's splits
         * are in its new ids, so the check is the whole graph's (replicated) only */
        for (int sp_i = 0; sp_i < DS_SPLIT_COUNT && !parted && !client; sp_i++) {
            const ds_split *sp = &t->gtask->splits[sp_i];
            for (int64_t i = 0; sp->present && i < sp->num_items; i++) {
                const int64_t v = sp->seeds[2 * i + 1];
                if (v < a->lp_candidate_lo || v >= a->lp_candidate_hi)
                    return err_set(err, CGNN_ERR_INPUT,
                                   "%s: row %lld: %s id %lld is outside trainerArgs.lp_candidate_range %lld:%lld (%s)",
                                   sp->seeds_path, (long long)i, sp->labels && sp->labels[i] == 0 ? "negative" : "positive",
                                   (long long)v, (long long)a->lp_candidate_lo, (long long)a->lp_candidate_hi,
                                   t->cfg->file);
            }
        }
    }
    if (lp && a->val_rank_k > 0 && (typed || parted || client))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.early_stop_criterion: %s (full ranking over every candidate) needs "
                       "a homogeneous graph trained whole; %s is %s (use mrr, auc or ap)",
                       t->cfg->file, a->early_stop_criterion, graph_source_name(&t->src),
                       typed ? "a typed graph" : parted ? "a partitioned graph" : "served by storage ranks");
    if (lp && a->val_rank_k > 0 && !t->gtask->splits[DS_SPLIT_VALID].present && !t->cfg->should_skip_training)
        return err_set(err, CGNN_ERR_INPUT, "%s: trainerConfig.trainerArgs.early_stop_criterion: %s needs a "
                       "validation split; %s task '%s' has none",
                       t->cfg->file, a->early_stop_criterion, t->src.ds->dir, t->task->name);
    if (a->node_embedding_reg > 0 && typed)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.node_embedding_reg: not available on a typed graph (%s) yet",
                       t->cfg->file, t->src.ds->dir);
    if (check_node_features(t, err) != 0) return -1;
    const ds_feature *feat = typed ? NULL : graph_source_feature(&t->src); /* (server-client: the storage ranks' rows) */
    if (a->num_layers == 0 && feat) { /* matrix factorisation: the embeddings are the whole input */
        if (trainer_is_root(t))
            log_info("num_layers 0: the model is the embedding table alone; node feature '%s' is not used",
                     feat->name);
        feat = NULL;
    }
    if (!feat && a->node_embedding_dim == 0 && !typed)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: no node features in feature_data; give the nodes learnable embeddings with "
                       "trainerArgs.node_embedding_dim",
                       t->src.ds->dir);
    int64_t out_dim = a->out_channels;
    if (lp) {
        if (out_dim <= 0) out_dim = a->num_layers == 0 ? a->node_embedding_dim : a->hidden_dim; /* the embedding size */
    } else {
        if (out_dim <= 0) out_dim = t->task->num_classes;
        int64_t max_label = -1;
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &t->gtask->splits[s];
            if (!sp->present) continue;
            if (!sp->labels)
                return err_set(err, CGNN_ERR_INPUT, "%s: task '%s' %s has no labels", t->src.ds->dir, t->task->name,
                               ds_split_name((ds_split_id)s));
            for (int64_t i = 0; i < sp->num_items; i++)
                if (sp->labels[i] > max_label) max_label = sp->labels[i];
        }
        if (out_dim <= 0) out_dim = max_label + 1;
        if (max_label >= out_dim)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: trainerConfig.trainerArgs.out_channels: %lld outputs, but the dataset has label %lld",
                           t->cfg->file, (long long)out_dim, (long long)max_label);
    }
    /* a whole graph's index (an ssl run: without the held-out labels); a part's is open already */
    if (!typed && graph_source_open_index(&t->src, t->have_ssl ? ssl_graph : NULL, t, err) != 0) return -1;
    if (graph_source_assign_seeds(&t->src, err) != 0) return -1;
    if ((client || parted) && t->cfg->task == TASK_LINK_PREDICTION && a->lp_anchor_batching)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.lp_batching: anchors (GiGL's anchor batching%s) is not available "
                       "%s yet; use lp_batching: pairs, or train on the whole dataset",
                       t->cfg->file, a->max_labels_per_anchor_node > 0 ? ", max_labels_per_anchor_node" : "",
                       client ? "in server-client mode" : "on a partitioned graph");
    if (parted && a->checkpoint_every_n_batches > 0)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.checkpoint_every_n_batches: the exact-resume training state "
                       "is not available on a partitioned graph yet (%s); train without it, or on the whole dataset",
                       t->cfg->file, graph_source_name(&t->src));

    if (res->num_replicas > 0 && res->num_replicas != d->size && !client) /* (graph store: the world's) */
        return err_set(err, CGNN_ERR_INPUT,
                       "resource config: mpi_trainer_config.num_replicas is %d but the job runs %d process%s "
                       "(mpirun -np %d)",
                       res->num_replicas, d->size, d->size == 1 ? "" : "es", res->num_replicas);
    if (typed && open_typed_graph(t, err) != 0) return -1;
    if (a->sampling_weight[0] && open_sample_weights(t, typed, parted, client, err) != 0) return -1;
    return setup_model(t, feat, out_dim, err);
}

/* Every rank, after its inputs were validated and before anything is removed or written: this
 * rank's inputs (configs, its dataset or part, the partition's JSON, id maps and whole splits, a
 * checkpoint it evaluates) go into its guard, the whole job's outputs are declared and checked
 * against them (io/outguard.h), and the guard answers every write from then on. A failure on any
 * rank fails the job before any rank touches anything (the caller's dist_phase_failed). */
static int guard_check(trainer *t, const resource_config *res, cgnn_err *err) {
    const task_config *c = t->cfg;
    outguard_add_input(&t->guard, c->file, "the task config");
    outguard_add_input(&t->guard, res->file, "the resource config");
    graph_source_add_inputs(&t->src, &t->guard); /* its dataset or part, a partition's JSON, id maps, whole splits */
    if (c->should_skip_training) outguard_add_input(&t->guard, c->trained_model_uri, "the checkpoint to evaluate");
    if (outputs_declare_train(&t->guard, c, t->d->size, err) != 0) return -1;
    if (trainer_is_root(t) && !c->should_skip_training) {
        char f_model[CONFIG_PATH_MAX + 64];
        snprintf(f_model, sizeof f_model, "%s: sharedConfig.trainedModelMetadata.trainedModelUri", c->file);
        if (outputs_check_checkpoint(c->trained_model_uri, c->task, &t->fam.m.cfg, f_model, err) != 0) return -1;
    }
    outguard_activate(&t->guard);
    return 0;
}

/* After guard_check passed on every rank: rank 0 locks every output for the job, removes
 * temporary files of killed runs and this job's previous results (a retry never mixes old and
 * new files; a run resuming a training state keeps it); every rank removes its own previous
 * profiler trace. Logs are never removed (train/outputs.h). */
static int guard_commit(trainer *t, const char *job, int resume, cgnn_err *err) {
    const task_config *c = t->cfg;
    if (c->profiler_enabled && t->logs.trace.path[0] && outputs_remove(t->logs.trace.path, err) != 0) return -1;
    if (!trainer_is_root(t)) return 0;
    char f_model[CONFIG_PATH_MAX + 64], f_metrics[CONFIG_PATH_MAX + 64], f_tb[CONFIG_PATH_MAX + 64],
        f_prof[CONFIG_PATH_MAX + 64];
    snprintf(f_model, sizeof f_model, "%s: sharedConfig.trainedModelMetadata.trainedModelUri", c->file);
    snprintf(f_metrics, sizeof f_metrics, "%s: sharedConfig.trainedModelMetadata.evalMetricsUri", c->file);
    snprintf(f_tb, sizeof f_tb, "%s: sharedConfig.trainedModelMetadata.tensorboardLogsUri", c->file);
    snprintf(f_prof, sizeof f_prof, "%s: profilerConfig.profilerLogDir", c->file);
    const char *model_out = c->should_skip_training ? "" : c->trained_model_uri;
    char state[CONFIG_PATH_MAX + 16] = "";
    if (model_out[0] && train_state_path(state, sizeof state, model_out, err) != 0) return -1;
    if (outguard_lock(&t->guard, model_out, f_model, job, err) != 0) return -1;
    if (outguard_lock(&t->guard, c->eval_metrics_uri, f_metrics, job, err) != 0) return -1;
    if (outguard_lock(&t->guard, c->tensorboard_logs_uri, f_tb, job, err) != 0) return -1;
    if (c->profiler_enabled && outguard_lock(&t->guard, c->profiler_log_dir, f_prof, job, err) != 0) return -1;
    int stale = 0;
    if (model_out[0]) stale += outguard_remove_stale_tmp(&t->guard, model_out) + outguard_remove_stale_tmp(&t->guard, state);
    if (c->eval_metrics_uri[0]) stale += outguard_remove_stale_tmp(&t->guard, c->eval_metrics_uri);
    if (stale) log_info("removed %d temporary file%s left by an interrupted run", stale, stale == 1 ? "" : "s");
    /* this job's previous results; without checkpoints a state file is an old output too */
    const char *prev[3] = {model_out, c->eval_metrics_uri,
                           c->args.checkpoint_every_n_batches == 0 && !resume ? state : ""};
    char removed[3 * (CONFIG_PATH_MAX + 16)] = "";
    for (int i = 0; i < 3; i++) {
        if (!prev[i][0] || access(prev[i], F_OK) != 0) continue;
        if (outputs_remove(prev[i], err) != 0) return -1;
        snprintf(removed + strlen(removed), sizeof removed - strlen(removed), "%s%s", removed[0] ? ", " : "", prev[i]);
    }
    if (removed[0]) log_info("removed the previous results of this job's outputs: %s", removed);
    (void)resume;
    return 0;
}

/* bits of a double, for the fingerprint */
static int64_t f64_bits(double x) {
    int64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* CRC-32 of n int64s (NULL: 0). */
static int64_t crc_i64(const int64_t *p, int64_t n) {
    return p && n > 0 ? (int64_t)crc32(0L, (const unsigned char *)p, (uInt)((size_t)n * sizeof *p)) : 0;
}

/* Every rank must run the same job: compares what the numbers and every collective's sizes
 * depend on (config, dataset, model shape) across ranks before the first collective that
 * moves model-sized buffers. Returns 0, or -1 with *err naming the field and the ranks. */
static int ranks_agree(trainer *t, cgnn_err *err) {
    const trainer_args *a = t->a;
    const ds_split *sp = t->gtask->splits; /* the whole splits (parted: in new ids) */
    /* the graph's identity (on parts: the partitioning run's id stands for the edges and rows) */
    graph_source_ids id;
    const ds_feature *feat = model_family_feature(&t->fam);
    graph_source_identify(&t->src, feat, &id);
    uint64_t fanh = 0; /* unsigned: a hash, wrapping is fine */
    for (int h = 0; h < a->num_layers; h++) fanh = fanh * 1000003u + (uint64_t)a->fanouts[h];
    for (int h = 0; t->fam.kind == MODEL_FAMILY_TYPED && h < a->num_layers; h++) /* the per-edge-type fanouts */
        for (int k = 0; k < t->src.tg.num_edge_types; k++)
            fanh = fanh * 1000003u + (uint64_t)t->fam.typed.tsc.fanouts[h][k];
    const int64_t fan = (int64_t)(fanh >> 1);
    const char *names[] = {"the task (taskMetadata)", "trainerArgs.gnn_model_class_path", "trainerArgs.num_layers",
                           "trainerArgs.hidden_dim", "the output channels (out_channels / num_classes)",
                           "the input channels (feature width + node_embedding_dim)", "trainerArgs.num_heads",
                           "trainerArgs.num_neighbors", "trainerArgs.main_sample_batch_size", "trainerArgs.num_epochs",
                           "trainerArgs.num_max_train_batches", "trainerArgs.val_every_num_batches",
                           "trainerArgs.num_val_batches", "trainerArgs.num_test_batches",
                           "trainerArgs.early_stop_patience", "trainerArgs.seed", "trainerArgs.dropout",
                           "trainerArgs.optim_lr", "trainerArgs.optim_weight_decay", "trainerArgs.clip_grad_norm",
                           "trainerArgs.node_embedding_dim", "trainerArgs.drop_uneven_inputs",
                           "sharedConfig.shouldSkipTraining", "the model's parameter count",
                           "the dataset's node count", "the dataset's edge count",
                           "the dataset's edges (CRC-32 of the ids)", "the node feature rows",
                           "the node feature dtype", "the train split (CRC-32 of seeds)",
                           "the validation split (CRC-32 of seeds)", "the test split (CRC-32 of seeds)",
                           "the train split's labels (CRC-32)", "trainerArgs.seed_assignment",
                           "the graph's layout (partitioned or not)", "the partitioning run (partition id)",
                           "the number of parts",
                           "the node features' values (CRC-32 of 66 fixed rows of every feature array)",
                           "the validation split's labels (CRC-32)", "the test split's labels (CRC-32)"};
    const int64_t vals[] = {(int64_t)t->cfg->task, (int64_t)a->model, a->num_layers, a->hidden_dim,
                            t->fam.m.cfg.out_dim, t->fam.m.cfg.in_dim, a->num_heads, fan, a->batch_size, a->num_epochs,
                            a->num_max_train_batches, a->val_every_num_batches, a->num_val_batches,
                            a->num_test_batches, a->early_stop_patience, (int64_t)a->seed, f64_bits(a->dropout),
                            f64_bits(a->optim.lr), f64_bits(a->optim.weight_decay), f64_bits(a->clip_grad_norm),
                            a->node_embedding_dim, a->drop_uneven_inputs, t->cfg->should_skip_training,
                            t->fam.m.num_params, graph_source_num_nodes(&t->src), graph_source_num_edges(&t->src), id.edges,
                            id.feature_rows,
                            feat ? (int64_t)feat->array.dtype : -1,
                            crc_i64(sp[DS_SPLIT_TRAIN].seeds, sp[DS_SPLIT_TRAIN].num_items * sp[DS_SPLIT_TRAIN].seed_width),
                            crc_i64(sp[DS_SPLIT_VALID].seeds, sp[DS_SPLIT_VALID].num_items * sp[DS_SPLIT_VALID].seed_width),
                            crc_i64(sp[DS_SPLIT_TEST].seeds, sp[DS_SPLIT_TEST].num_items * sp[DS_SPLIT_TEST].seed_width),
                            crc_i64(sp[DS_SPLIT_TRAIN].labels, sp[DS_SPLIT_TRAIN].num_items), t->src.local_seeds,
                            id.layout, id.partition, id.num_parts, id.feature_values,
                            crc_i64(sp[DS_SPLIT_VALID].labels, sp[DS_SPLIT_VALID].labels ? sp[DS_SPLIT_VALID].num_items : 0),
                            crc_i64(sp[DS_SPLIT_TEST].labels, sp[DS_SPLIT_TEST].labels ? sp[DS_SPLIT_TEST].num_items : 0)};
    _Static_assert(sizeof names / sizeof names[0] == sizeof vals / sizeof vals[0], "fingerprint fields");
    return dist_check_agreement(t->d, names, vals, (int)(sizeof vals / sizeof vals[0]), err);
}

/* Replicas must never drift: compares a hash of every rank's parameters (cheap: one pass over
 * the flat buffer, two tiny all-reduces). Returns 1 with *err when they differ. */
static int replicas_differ(trainer *t, cgnn_err *err) {
    /* the parameters and the replicated tables (a sharded table differs per part by design) */
    const uint64_t h = model_family_hash(&t->fam, 1469598103934665603ULL);
    int64_t lo = (int64_t)(h >> 1), hi = (int64_t)(h >> 1);
    int64_t neg_lo = -lo;
    dist_allreduce_max_i64(t->d, &hi, 1);
    dist_allreduce_max_i64(t->d, &neg_lo, 1);
    if (hi != -neg_lo) {
        err_set(err, CGNN_ERR_RUNTIME, "internal error: the %d replicas' parameters differ after training", t->d->size);
        return 1;
    }
    if (trainer_is_root(t))
        log_info("parameters bitwise identical on all %d ranks (hash %016llx)", t->d->size, (unsigned long long)h);
    return 0;
}

/* What the graph source takes from the configuration (source/graph_source.h); the strings stay
 * the config's. */
static void source_options(const task_config *cfg, int fault_rank, graph_source_options *o) {
    const trainer_args *a = &cfg->args;
    memset(o, 0, sizeof *o);
    o->config_file = cfg->file;
    o->dataset_path = cfg->dataset_path;
    o->seed_assignment = a->seed_assignment == SEED_ASSIGN_LOCAL    ? GRAPH_SOURCE_SEEDS_LOCAL
                         : a->seed_assignment == SEED_ASSIGN_GLOBAL ? GRAPH_SOURCE_SEEDS_GLOBAL
                                                                    : GRAPH_SOURCE_SEEDS_AUTO;
    o->seed_partition = a->seed_partition;
    o->node_feature = a->node_feature;
    o->rpc_timeout_s = a->rpc_timeout_s;
    o->cache_policy = graph_store_cache_policy(a->cache_policy);
    o->cache_ratio = a->cache_ratio;
    o->cache_budget = a->cache_memory_budget;
    o->cache_presample_batches = a->cache_presample_batches;
    o->seed = a->seed;
    o->batch_size = a->batch_size;
    o->prefetch_size = a->prefetch_size;
    o->fault_rank = fault_rank;
}

/* The training batches' sampling (the feature cache pre-samples with it): the training loader's,
 * or (evaluation only) the same fanouts. */
static sampler_config train_sampling(const trainer *t) {
    if (t->have_train) return t->train.cfg.sampler; /* (its weights too) */
    sampler_config sc;
    memset(&sc, 0, sizeof sc);
    sc.num_layers = t->a->num_layers;
    for (int h = 0; h < t->a->num_layers; h++) sc.fanouts[h] = t->a->fanouts[h];
    sc.replace = t->a->replace;
    return sc;
}


int trainer_run(const task_config *cfg_in, const resource_config *res, const trainer_options *opt,
                trainer_result *out, cgnn_err *err) {
    static const dist_ctx serial = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    trainer t;
    memset(&t, 0, sizeof t);
    t.own_cfg = cgnn_malloc(sizeof *t.own_cfg);
    *t.own_cfg = *cfg_in; /* a plain copy: the trainer never frees what the config points to */
    const task_config *cfg = t.own_cfg;
    memset(out, 0, sizeof *out);
    out->best_val_loss = out->best_val_acc = out->test_loss = out->test_acc = NAN;
    t.cfg = cfg;
    t.a = &cfg->args;
    t.d = opt && opt->dist ? opt->dist : &serial;
    t.stop.metric_is_loss = strcmp(cfg->args.early_stop_criterion, "loss") == 0;
    t.stop.last_val_step = -1;
    const char *f = getenv("CGNN_TEST_NAN_AT_STEP");
    t.faults.nan_step = f ? strtoll(f, NULL, 10) : -1;
    f = getenv("CGNN_TEST_EXIT_AT_STEP");
    t.faults.exit_step = f ? strtoll(f, NULL, 10) : -1;
    f = getenv("CGNN_TEST_FAULT_RANK");
    t.faults.rank = f ? atoi(f) : -1;
    f = getenv("CGNN_TEST_EXIT_IN_CHECKPOINT");
    t.faults.state_exit = f ? strtoll(f, NULL, 10) : 0;
    const int root = trainer_is_root(&t);
    /* test hook (tests/test_gigl_configs.sh: GiGL's MAG240M config asks for 20000 batches): at most
     * this many training batches, said on a log line; never set outside tests */
    f = getenv("CGNN_TEST_MAX_TRAIN_BATCHES");
    if (f && strtoll(f, NULL, 10) > 0) {
        const int64_t cap = strtoll(f, NULL, 10), had = t.own_cfg->args.num_max_train_batches;
        if (had == 0 || had > cap) t.own_cfg->args.num_max_train_batches = cap;
        if (root)
            log_info("CGNN_TEST_MAX_TRAIN_BATCHES (a test hook): at most %lld training batches (the config: %lld; 0 = "
                     "no limit)", (long long)cap, (long long)had);
    }
    int rc = -1, bad = 0;
    if (cfg->should_skip_training && cfg->should_skip_model_evaluation) { /* GiGL's Trainer stops here too */
        if (root)
            log_info("shouldSkipTraining and shouldSkipModelEvaluation are both true: nothing to do (no input read, "
                     "no output touched)");
        free(t.own_cfg);
        return 0;
    }

    /* setup: every input is validated before any output is touched; the graph source chosen here
     * orders the loading: a whole graph's rank 0 first (it builds and caches the graph index), then
     * the others load it; on parts every rank loads its own at once (nothing is cached), after the
     * rpc layer is created (collective), and every rank has loaded its part (and the feature
     * cache is built) before rank 0 touches any output */
    outguard_init(&t.guard);
    graph_source_options so;
    source_options(cfg, t.faults.rank, &so);
    graph_source_init(&t.src, &so, t.d, opt ? opt->graph_store : NULL);
    if (graph_source_load_begin(&t.src, err) != 0) goto done;
    lp_loss_gemm_stats_register(&t.timers.loss_gs); /* the losses' GEMMs, for the loss's GEMM rate */
    bad = trainer_setup(&t, res, err) != 0;
    const sampler_config cache_sampling = train_sampling(&t);
    if (graph_source_load_check(&t.src, bad, &cache_sampling, err) != 0) goto done;
    /* exact resume (train/train_state.h): a state left by an interrupted run of this job is
     * checked before any output is touched, and keeps its logs */
    int resume = 0;
    if (root && !bad && !cfg->should_skip_training) bad = resume_prologue(&t, &resume, err) != 0;
    graph_source_load_end(&t.src); /* a whole graph: the other ranks load now */
    /* every rank checks the job's outputs against its own inputs; then rank 0 touches them */
    if (!bad) bad = guard_check(&t, res, err) != 0;
    if (dist_phase_failed(t.d, bad, err)) goto done;
    if (ranks_agree(&t, err) != 0) goto done; /* before any output is touched or model-sized collective */
    bad = guard_commit(&t, opt && opt->job_name ? opt->job_name : "cgnn train", resume, err) != 0;
    if (dist_phase_failed(t.d, bad, err)) goto done;
    t.guarded = 1;
    if (t.src.local_seeds && t.have_train) { /* every rank's training batches (Join / drop_uneven) */
        int64_t mm[2] = {item_sampler_rank_batches(&t.train.items, t.src.seed_group), 0};
        mm[1] = -mm[0];
        dist_allreduce_max_i64(t.d, mm, 2);
        t.train_batches_max = mm[0], t.train_batches_min = -mm[1];
        if (root)
            log_info("seed assignment: local (each rank its part's seeds); training batches per rank %lld to %lld "
                     "(%s)",
                     (long long)t.train_batches_min, (long long)t.train_batches_max,
                     cfg->args.drop_uneven_inputs ? "every rank runs the fewest" : "ranks that run out join");
    }
    if (!cfg->should_skip_training && cfg->args.checkpoint_every_n_batches > 0 && resume_load(&t, resume, out, err) != 0)
        goto done;
    if (root) bad = loop_open_logs(&t, opt && opt->job_name ? opt->job_name : "cgnn train", err) != 0;
    if (cfg->should_skip_training && !bad) bad = model_family_load(&t.fam, cfg->trained_model_uri, err) != 0;
    if (dist_phase_failed(t.d, bad, err)) goto done;
    progress_init(&t.logs.prog, root && (!opt || opt->progress));
    t.logs.prog.log_every = cfg->args.log_every_n_batch; /* GiGL's log_every_n_batch (0: every 10 s) */
    dist_bcast_f32(t.d, t.fam.m.params, (size_t)t.fam.m.num_params); /* replicas start identical */
    /* (the embedding table is initialised from the seed alone: identical on every rank) */

    if (cfg->should_skip_training) {
        if (root) log_info("shouldSkipTraining: loaded %s", cfg->trained_model_uri);
    } else {
        graph_source_traffic_reset(&t.src); /* on parts: count the training's remote traffic only */
        bad = loop_train(&t, out, err) != 0;
        if (dist_phase_failed(t.d, bad, err)) goto done;
        loader *built[2] = {t.have_train ? &t.train : NULL, t.have_val ? &t.val : NULL}; /* (their batches) */
        graph_source_log_traffic(&t.src, built, 2);
        if (t.stop.have_best) {
            model_family_restore_best(&t.fam);
            if (root)
                log_info("restored the best weights (validation %s %.4f)", cfg->args.early_stop_criterion,
                         t.stop.best_score);
        }
        model_family_tables_written(&t.fam); /* on parts: every shard restored before rows are read */
        bad = model_family_save(&t.fam, 0, err) != 0;
        if (dist_phase_failed(t.d, bad, err)) goto done;
        if (t.d->size > 1 && replicas_differ(&t, err)) goto done;
    }
    if (!cfg->skip_test && t.have_test && loop_test(&t, out, err) != 0) goto done;
    /* stop the sampler threads (they report trace spans), then write the trace */
    if (t.have_train) loader_free(&t.train);
    if (t.have_val) loader_free(&t.val);
    if (t.have_test) loader_free(&t.test);
    t.have_train = t.have_val = t.have_test = 0;
    if (graph_source_stop(&t.src, err) != 0) dist_fail_job(t.d, err); /* collective: nobody asks any more */
    bad = trace_close(&t.logs.trace, err) != 0;
    if (!bad && root) bad = loop_check_logs(&t, 1, err) != 0;
    if (dist_phase_failed(t.d, bad, err)) goto done;
    /* finished: the training state is no longer needed */
    if (root && t.state.path[0]) {
        if (t.state.written > 0)
            log_info("training state: %lld checkpoints of %.1f MB, %.1f ms each on average (%s)",
                     (long long)t.state.written, (double)t.state.bytes / 1e6,
                     1e3 * t.state.seconds / (double)t.state.written, t.state.path);
        bad = outputs_remove(t.state.path, err) != 0;
    }
    if (dist_phase_failed(t.d, bad, err)) goto done;
    rc = 0;
done:
    trainer_free(&t);
    free(t.own_cfg);
    return rc;
}

