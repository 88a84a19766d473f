/* trainer.c — the training job (node classification and link prediction); see trainer.h. */
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
#include "io/durable.h"
#include "io/file.h"
#include "io/json.h"
#include "io/outguard.h"
#include "nn/embedding.h"
#include "nn/infer.h"
#include "nn/lightgcn.h"
#include "nn/lp_loss.h"
#include "nn/model.h"
#include "optim/optim.h"
#include "sample/loader.h"
#include "source/graph_source.h"
#include "train/head.h"
#include "train/lp_eval.h"
#include "train/outputs.h"
#include "train/progress.h"
#include "train/tb_events.h"
#include "train/train_state.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/rng.h"
#include "util/timer.h"
#include "util/trace.h"

typedef struct trainer {
    const task_config *cfg;
    const dist_ctx *d;        /* rank / world; a world of one without mpirun */
    int64_t layer_begin[MINIBATCH_MAX_LAYERS], layer_end[MINIBATCH_MAX_LAYERS]; /* grads per layer */
    const trainer_args *a;
    /* where the graph lives (source/graph_source.h): the whole dataset, a part and its peers, or
     * (server-client mode) the storage ranks; its dataset, index, typed graph and seed assignment */
    graph_source src;
    const ds_task *gtask;     /* the whole splits: task itself, or (on a part) the global splits' */
    int64_t train_batches_min, train_batches_max; /* local seeds: training batches over all ranks */
    const ds_task *task;
    /* trainerArgs.ssl_positive_label_percentage (graph/edge_split.h): GiGL's self-supervised
     * split of the supervision edge type's edges; ssl_task's splits point into ssl.pairs */
    int have_ssl;
    edge_split ssl;
    ds_task ssl_task;
    task_config *own_cfg;     /* the run's copy of the config (cfg points to it): the trainer fills
                                 in what the config leaves to the dataset (the typed default model) */
    const ds_feature *feat;
    /* a typed graph (the dataset has node / edge types): node classification on the task's node
     * type with a typed model; each featureless node type gets a learnable embedding table */
    int typed;                /* (its graph: src.tg) */
    typed_sampler_config tsc;
    const ds_feature *tfeat[MINIBATCH_MAX_NODE_TYPES]; /* per node type; NULL: featureless */
    int64_t twidth[MINIBATCH_MAX_NODE_TYPES];          /* its input rows' width */
    embedding_table temb[MINIBATCH_MAX_NODE_TYPES];
    int have_temb[MINIBATCH_MAX_NODE_TYPES];
    float *best_temb[MINIBATCH_MAX_NODE_TYPES];        /* the tables at the best validation */
    char temb_key[MINIBATCH_MAX_NODE_TYPES][DATASET_NAME_MAX + 32]; /* "embedding_dict.<type>.weight" */
    char temb_state_key[MINIBATCH_MAX_NODE_TYPES][3][DATASET_NAME_MAX + 32]; /* its .m / .v / .best in the state */
    model_types *mtypes;
    int lp_src, lp_dst;       /* typed link prediction: the supervision edge type's node types */
    float *lp_out;            /* (max seeds, D): their output rows stacked, as the head reads them */
    model m;
    task_head head;           /* loss + metrics of the task */
    embedding_table emb;      /* learnable node embeddings (node_embedding_dim > 0) */
    int have_emb;
    int64_t feat_dim;         /* F: feature columns of the input (0 without features) */
    float *dinput;            /* (max input nodes, F + E): d(loss)/d(input) for the embedding rows */
    float *best_emb;          /* (num_nodes, E): the table at the best validation */
    /* LightGCN (nn/lightgcn.h): the block model is the identity on the batch's rows, which are
     * read from the propagated table lgc_out instead of the raw embedding rows */
    int lgc;                  /* gnn_model_class_path LightGCN */
    trainer_args lgc_args;    /* the trainer args with num_layers 0 (no sampled blocks); t->a points here */
    lightgcn_adj lgc_adj;     /* the normalised graph (owned) */
    int lgc_stale;            /* lgc_out is not the propagation of the current table */
    int lgc_batch_only;       /* training step: propagate the batch's receptive field only */
    float *lgc_out;           /* (N, E) the final (alpha-combined) embeddings of every node */
    float *lgc_grad;          /* (N, E) d(loss)/d(lgc_out) */
    float *lgc_dx;            /* (N, E) d(loss)/d(table) */
    float *lgc_raw, *lgc_dreg; /* (max input nodes, E): the batch's raw rows and their reg gradient */
    int64_t *lgc_ids;         /* (N) 0 .. N-1: every row steps */
    optim opt;
    loader train, val, test;
    int have_train, have_val, have_test;
    float *dlogits;           /* (max seeds, out_dim): d(loss)/d(model output) */
    float *best_params;       /* (num_params) */
    int have_best;
    double best_score;
    int64_t bad_checks;
    int metric_is_loss;       /* early-stop criterion: loss (minimise) or a metric (maximise) */
    jsonl_log log;
    tb_writer tb;             /* TensorBoard event file (rank 0) */
    progress prog;
    int64_t step;
    double last_vloss, last_vmetric; /* the latest validation (loss, head_main_metric) */
    int64_t last_val_step;    /* t->step at the latest validation (-1: none yet; val_at_end) */
    double t_rank;            /* seconds in full-ranking validations (embeddings + ranking), this rank */
    int64_t n_rank;           /* full-ranking validations run */
    int64_t fault_nan_step;   /* CGNN_TEST_NAN_AT_STEP: pretend the loss is NaN at this step (tests) */
    int64_t fault_exit_step;  /* CGNN_TEST_EXIT_AT_STEP: exit abruptly at this step (tests) */
    int fault_rank;           /* CGNN_TEST_FAULT_RANK: the rank the faults apply to (-1 = all) */
    /* always-on per-stage timers of the training steps (seconds, this rank; plain adds on the
     * main thread: no locks, no allocation). Producer-side sample/gather times come with each
     * batch (mb->sample_seconds, gather_seconds). */
    double t_wait, t_forward, t_backward, t_allreduce, t_optim, t_sample, t_gather;
    double t_loss;            /* the task head: the loss and its gradient (LP: batch x candidates) */
    int64_t timed_steps;
    ops_gemm_stats loss_gs;   /* the LP losses' GEMMs (nn/lp_loss.h), registered for the whole job */
    double loss_gemm_s, loss_gemm_flops; /* ... of the training steps' losses (deltas of loss_gs) */
    trace_writer trace;       /* profilerConfig: Chrome trace (disabled unless shouldEnableProfiler) */
    int threads;              /* compute threads of this process */
    /* exact resume (train/train_state.h): checkpoint_every_n_batches > 0 */
    char state_path[4096];    /* "<trainedModelUri>.state"; "" when off */
    train_state_fingerprint *fp; /* this job's fingerprint (owned) */
    int resumed;              /* continuing from `resume` */
    train_state_scalars resume; /* the position read from the state file */
    int64_t states_written;   /* state files written by this process */
    double t_state;           /* seconds spent writing them (rank 0) */
    int64_t state_bytes;      /* size of the last one */
    int64_t fault_state_exit; /* CGNN_TEST_EXIT_IN_CHECKPOINT: die half way through writing this
                                 process's Nth state file (tests; 0 = never) */
    outguard guard;           /* this rank's inputs against the job's outputs; rank 0: the locks */
    int guarded;              /* guard_commit passed: outputs may be written */
} trainer;

static int is_root(const trainer *t) { return t->d->rank == 0; }

/* One logged record: a line of metrics.jsonl (keys[0..n), the first n_int written as integers,
 * keys[0] is "step") and the same scalars in the TensorBoard event file under tb_tags (NULL
 * entries are not sent to TensorBoard). Rank 0 only (the writers are disabled elsewhere). */
static void log_record(trainer *t, const char *const *keys, const char *const *tb_tags, const double *vals, int n,
                       int n_int) {
    jsonl_write(&t->log, keys, vals, n, n_int);
    const char *tags[TB_MAX_VALUES_PER_EVENT]; /* (every LP metric fits: 8 used to drop val/ap and more) */
    float v[TB_MAX_VALUES_PER_EVENT];
    int k = 0;
    for (int i = 0; i < n && k < TB_MAX_VALUES_PER_EVENT; i++)
        if (tb_tags[i] && isfinite(vals[i])) {
            tags[k] = tb_tags[i];
            v[k++] = (float)vals[i];
        }
    if (k) tb_add_scalars(&t->tb, (int64_t)vals[0], tb_wall_time(), tags, v, k);
}

/* 0, or -1 with *err when a write to metrics.jsonl or the event file failed (a full disk):
 * the job stops instead of finishing with truncated logs. close != 0 closes both first. */
static int logs_check(trainer *t, int close, cgnn_err *err) {
    if (close) {
        const int bad = jsonl_close(&t->log, err) != 0;
        tb_close(&t->tb);
        if (bad) return -1;
    }
    if (jsonl_check(&t->log, err) != 0) return -1;
    return tb_check(&t->tb, err);
}

/* model_backward hook: start reducing layer l's gradients while lower layers run backward */
static void grads_ready(void *ctx, int layer) {
    trainer *t = ctx;
    dist_iallreduce_sum_f32(t->d, t->m.grads + t->layer_begin[layer],
                            (size_t)(t->layer_end[layer] - t->layer_begin[layer]));
}

static void prepare_batch(trainer *t, minibatch *mb);

/* The model's output as the head reads it: the output rows; typed link prediction: the anchors'
 * type's rows, then (another type) the candidates' type's rows (the loader's item_local). */
static const float *forward(trainer *t, const minibatch *mb, int training, uint64_t key) {
    const float *out = model_forward(&t->m, mb, training, key);
    if (!t->typed || t->cfg->task != TASK_LINK_PREDICTION || t->lp_src == t->lp_dst) return out;
    const int64_t D = t->m.cfg.out_dim, ns = mb->typed->num_nodes[t->lp_src][0], nd = mb->typed->num_nodes[t->lp_dst][0];
    memcpy(t->lp_out, model_typed_output(&t->m, t->lp_src), (size_t)(ns * D) * sizeof(float));
    memcpy(t->lp_out + ns * D, model_typed_output(&t->m, t->lp_dst), (size_t)(nd * D) * sizeof(float));
    return t->lp_out;
}

/* model_backward of t->dlogits, split back per type for typed link prediction. */
static void backward(trainer *t, const minibatch *mb) {
    if (!t->typed || t->cfg->task != TASK_LINK_PREDICTION) {
        model_backward(&t->m, mb, t->dlogits); /* starts each layer's all-reduce as soon as it is final */
        return;
    }
    const float *douts[MINIBATCH_MAX_NODE_TYPES] = {0};
    douts[t->lp_src] = t->dlogits;
    if (t->lp_dst != t->lp_src) douts[t->lp_dst] = t->dlogits + mb->typed->num_nodes[t->lp_src][0] * t->m.cfg.out_dim;
    model_typed_backward(&t->m, mb, douts);
}

/* The batch of loader l, or NULL at the end of the epoch; a batch that could not be built
 * (a peer failed) ends the job. */
static minibatch *next_batch(trainer *t, loader *l) {
    minibatch *mb = loader_next(l);
    cgnn_err lerr = {0};
    if (!mb && loader_failed(l, &lerr)) {
        if (lerr.code == CGNN_ERR_INPUT) { /* a malformed message (server-client mode: a hostile reply) */
            fprintf(stderr, "cgnn: error: rank %d: %s; ending the job\n", t->d->rank, lerr.msg);
            fflush(stderr);
            dist_abort(t->d, CGNN_ERR_INPUT);
        }
        dist_fail_job(t->d, &lerr); /* the others may wait for this rank */
    }
    return mb;
}

/* Right before the forward pass (by the consumer, never by the prefetching workers, so every
 * batch sees the table as the previous step left it): writes the current embedding rows of the
 * batch's input nodes into their feature rows (columns [F, F + E)) — on a partitioned graph the
 * rows of other parts are read from their owners (EMB requests) — and on a partitioned graph
 * gives the batch its original ids as dropout keys. */
static void prepare_batch(trainer *t, minibatch *mb) {
    if (t->typed) { /* the featureless types' rows are their current embeddings */
        minibatch_typed *ty = mb->typed;
        for (int k = 0; k < ty->num_node_types; k++)
            if (t->have_temb[k])
                embedding_gather(&t->temb[k], ty->nodes[k], ty->num_nodes[k][ty->num_layers], ty->features[k],
                                 ty->feat_dim[k], 0);
        return;
    }
    graph_source_prepare_batch(&t->src, mb); /* on parts: per-node randomness (dropout) keyed by original ids */
    if (!t->have_emb) return;
    if (t->lgc) { /* the propagated rows: one full-graph forward per step (or per evaluation) */
        const int64_t D = t->emb.dim;
        if (t->lgc_batch_only) /* the batch's rows of lgc_out, bitwise those of the full propagation */
            lightgcn_forward_rows(&t->lgc_adj, t->emb.weight, D, t->m.cfg.prop_layers, t->m.cfg.alpha, t->lgc_out,
                                  mb->input_nodes, mb->num_input_nodes, NULL);
        else if (t->lgc_stale) {
            lightgcn_forward(&t->lgc_adj, t->emb.weight, D, t->m.cfg.prop_layers, t->m.cfg.alpha, t->lgc_out);
            t->lgc_stale = 0;
        }
        const int64_t n = mb->num_input_nodes, stride = mb->feat_dim, col = t->feat_dim;
        float *feat = mb->features;
        const int64_t *ids = mb->input_nodes;
        const float *src = t->lgc_out;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) memcpy(feat + i * stride + col, src + ids[i] * D, (size_t)D * sizeof(float));
        return;
    }
    cgnn_err e = {0};
    if (graph_source_gather_embedding(&t->src, &t->emb, mb, t->feat_dim, &e) != 0) dist_fail_job(t->d, &e);
}

/* Runs the model over up to max_batches batches of l (0 = all) without dropout; *s gets the
 * head's sums over every rank (identical on all ranks). */
static void evaluate(trainer *t, loader *l, int64_t max_batches, head_sums *s) {
    memset(s, 0, sizeof *s);
    head_scores_reset(&t->head);
    t->lgc_stale = 1; /* LightGCN: propagate the current table once for the whole evaluation */
    loader_start_epoch(l, 0, max_batches);
    minibatch *mb;
    double e0 = timer_now();
    int64_t n_items = 0;
    while ((mb = next_batch(t, l)) != NULL) {
        prepare_batch(t, mb);
        const float *out = forward(t, mb, 0, 0);
        head_batch(&t->head, mb, out, t->dlogits, s);
        n_items += mb->num_items;
        loader_release(l, mb);
    }
    trace_span(&t->trace, "evaluation", 0, e0, timer_now(), t->step, n_items);
    /* weighted sums over ranks (never an average of averages): identical on every rank */
    dist_allreduce_sum_f64(t->d, s->v, HEAD_NUM_SUMS);
    /* LP auc / ap: every rank's (score, label) rows gathered, computed alike on every rank */
    head_scores_finish(&t->head, t->d, s);
}

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
    if (t->cfg->task != TASK_LINK_PREDICTION || !t->a->lp_anchor_batching || !is_root(t)) return;
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
    const ds_split *sp = &t->gtask->splits[split]; /* the whole split (its name, labels, size) */
    graph_source_rows rows; /* the whole split, or (local seeds) this part's rows sliced among its ranks */
    graph_source_split_rows(&t->src, split, &rows);
    loader_config lc;
    memset(&lc, 0, sizeof lc);
    lc.sampler.num_layers = t->a->num_layers;
    for (int h = 0; h < t->a->num_layers; h++) lc.sampler.fanouts[h] = t->a->fanouts[h];
    lc.sampler.replace = t->a->replace;
    lc.batch_size = t->a->batch_size;
    lc.shuffle = shuffle;
    lc.seed = t->a->seed + (uint64_t)split * 0x632be59bd9b4e019ULL;
    lc.rank = rows.rank;
    lc.world_size = rows.world;
    /* local seeds: every rank runs the fewest batches of any rank instead (train_loop) */
    lc.drop_uneven = split == DS_SPLIT_TRAIN && t->a->drop_uneven_inputs && !t->src.local_seeds;
    lc.num_workers = workers;
    lc.feature = t->feat;
    lc.normalize_rows = strcmp(t->a->feature_normalization, "row") == 0;
    static const char *const LANE_NAMES[DS_SPLIT_COUNT] = {"train", "validation", "test"};
    lc.trace = t->trace.enabled ? &t->trace : NULL;
    lc.trace_tid_base = 1 + (int)split * 16;
    lc.trace_name = LANE_NAMES[split];
    lc.extra_cols = t->have_emb ? t->emb.dim : 0;
    if (t->cfg->task == TASK_LINK_PREDICTION) {
        lc.pairs = 1;
        /* labelled pairs: training adds the listed (hard) negatives to the random ones; an
         * evaluation split ranks each positive against its own listed negatives only (the
         * dataset fixes the candidates, as GraphBolt's ogbl-citation2) */
        lc.num_negatives = split == DS_SPLIT_TRAIN ? t->a->random_negative_sample_batch_size
                           : sp->labels            ? 0
                                                   : t->a->random_negative_sample_batch_size_for_evaluation;
        lc.exclude_seed_edges = split == DS_SPLIT_TRAIN && t->a->exclude_seed_edges;
        lc.neg_lo = t->a->lp_candidate_lo, lc.neg_hi = t->a->lp_candidate_hi; /* random negatives: candidates only */
        lc.indexes = rows.indexes;
        lc.anchor_batches = t->a->lp_anchor_batching; /* GiGL's DistABLPLoader for every split alike */
        lc.max_labels_per_anchor = t->a->max_labels_per_anchor_node;
    }
    if (t->typed) {
        lc.typed = &t->src.tg;
        lc.typed_sampler = t->tsc;
        const int lp = t->cfg->task == TASK_LINK_PREDICTION;
        lc.seed_type = lp ? 0 : t->task->type;
        lc.pair_etype = lp ? t->task->type : 0;
        for (int k = 0; k < t->src.tg.num_node_types; k++) {
            lc.type_feature[k] = t->tfeat[k];
            lc.type_width[k] = t->twidth[k];
        }
    }
    graph_source_loader_config(&t->src, &lc); /* on parts: remote picks and rows, or remote batches */
    if (loader_init(l, t->typed ? NULL : t->src.g, rows.seeds, rows.labels, rows.items, &lc, err) != 0)
        return err_prefix(err, "%s (task '%s' %s): ", sp->seeds_path, t->task->name, ds_split_name(split));
    return 0;
}

/* Writes the checkpoint: the model's params, plus "embedding.weight" when the model has
 * learnable node embeddings: emb_rows is the table, or (on parts) this rank's rows of it, in
 * original id order on rank 0 first (graph_source_table_to_root). Collective; rank 0 writes.
 * Returns 0, or -1 with *err on rank 0. */
static int save_checkpoint(trainer *t, const float *params, const float *emb_rows, cgnn_err *err) {
    if (t->typed) { /* the featureless types' tables: the best ones with the best parameters */
        const int best = params == t->best_params;
        outputs_table tb[MINIBATCH_MAX_NODE_TYPES];
        int n = 0;
        for (int k = 0; k < t->src.tg.num_node_types; k++)
            if (t->have_temb[k])
                tb[n++] = (outputs_table){t->temb_key[k], best ? t->best_temb[k] : t->temb[k].weight,
                                          t->temb[k].num_rows, t->temb[k].dim};
        return is_root(t) ? outputs_save_model_tables(t->cfg->trained_model_uri, t->cfg->task, &t->m, params, tb, n,
                                                      err)
                          : 0;
    }
    if (!t->have_emb)
        return is_root(t) ? outputs_save_model(t->cfg->trained_model_uri, t->cfg->task, &t->m, params, err) : 0;
    float *full = graph_source_table_to_root(&t->src, emb_rows, t->emb.dim);
    int rc = 0;
    if (is_root(t))
        rc = outputs_save_model_with_embedding(t->cfg->trained_model_uri, t->cfg->task, &t->m, params,
                                               full ? full : emb_rows, graph_source_num_nodes(&t->src), t->emb.dim, err);
    free(full);
    return rc;
}

/* The positive pairs of split s, (n, 2): its seeds, or (labelled pairs) a copy of the rows labelled
 * non-zero in *owned (the caller frees it; NULL when not copied). */
static const int64_t *split_positive_pairs(const ds_split *s, int64_t **owned, int64_t *n) {
    *owned = NULL;
    *n = s->present ? s->num_items : 0;
    if (!s->present || !s->labels) return s->present ? s->seeds : NULL;
    int64_t *p = cgnn_malloc((size_t)(s->num_items > 0 ? s->num_items : 1) * 2 * sizeof(int64_t));
    int64_t m = 0;
    for (int64_t i = 0; i < s->num_items; i++)
        if (s->labels[i] != 0) p[2 * m] = s->seeds[2 * i], p[2 * m + 1] = s->seeds[2 * i + 1], m++;
    *owned = p, *n = m;
    return p;
}

/* LP full ranking (early_stop_criterion recall_at_K / ndcg_at_K; a homogeneous graph trained
 * whole, checked in trainer_setup): every node's embedding with the current weights by full
 * inference (nn/infer.h; num_layers 0: the table rows, normalised as the model does), then
 * Recall@K and NDCG@K of split's positive pairs ranked against the candidates (every node, or
 * lp_candidate_range's) less each anchor's train positives (the test split: and its validation
 * positives) — lp_full_ranking(_range), LightGCN's definitions. Collective: infer_run gives every
 * rank the same complete embeddings (each computes a slice, all-gathered) and every rank ranks
 * them alike (deterministic for any thread count), so all ranks get the same values. Returns 0,
 * or -1 with *err (collective). */
static int rank_split(trainer *t, ds_split_id split, double *recall, double *ndcg, cgnn_err *err) {
    const double t0 = timer_now();
    const float *rows = t->have_emb ? t->emb.weight : NULL;
    if (t->lgc) { /* LightGCN: the 0-layer model reads the propagated table, as in its steps */
        if (t->lgc_stale) {
            lightgcn_forward(&t->lgc_adj, t->emb.weight, t->emb.dim, t->m.cfg.prop_layers, t->m.cfg.alpha, t->lgc_out);
            t->lgc_stale = 0;
        }
        rows = t->lgc_out;
    }
    infer_input in = {t->feat, strcmp(t->a->feature_normalization, "row") == 0, rows,
                      t->have_emb ? t->emb.num_rows : 0, t->have_emb ? t->emb.dim : 0};
    infer_options opt = {INFER_DEFAULT_CHUNK, NULL, t->d, NULL, NULL};
    infer_result r;
    if (infer_run(&r, &t->m, t->src.g, &in, &opt, err) != 0) return err_prefix(err, "full-ranking %s: ", ds_split_name(split));
    const double t1 = timer_now();
    int64_t *owned[3], n_rank, n_train, n_excl = 0, anchors = 0;
    const int64_t *rp = split_positive_pairs(&t->gtask->splits[split], &owned[0], &n_rank);
    const int64_t *tp = split_positive_pairs(&t->gtask->splits[DS_SPLIT_TRAIN], &owned[1], &n_train);
    const int64_t *xp = NULL;
    owned[2] = NULL;
    if (split == DS_SPLIT_TEST) xp = split_positive_pairs(&t->gtask->splits[DS_SPLIT_VALID], &owned[2], &n_excl);
    const int K = (int)t->a->val_rank_k;
    int rc = t->a->lp_candidate_hi > 0
                 ? lp_full_ranking_range(r.embeddings, r.num_nodes, r.dim, t->a->lp_candidate_lo, t->a->lp_candidate_hi,
                                         rp, n_rank, tp, n_train, xp, n_excl, K, recall, ndcg, &anchors, err)
                 : lp_full_ranking(r.embeddings, r.num_nodes, r.dim, rp, n_rank, tp, n_train, xp, n_excl, K, recall,
                                   ndcg, &anchors, err);
    if (rc != 0) err_prefix(err, "%s (%s): full ranking: ", t->gtask->splits[split].seeds_path, ds_split_name(split));
    const int64_t n_cand = t->a->lp_candidate_hi > 0 ? t->a->lp_candidate_hi - t->a->lp_candidate_lo : r.num_nodes;
    for (int i = 0; i < 3; i++) free(owned[i]);
    infer_result_free(&r);
    const double t2 = timer_now();
    t->t_rank += t2 - t0;
    t->n_rank++;
    if (rc == 0 && is_root(t))
        log_info("full ranking (%s, %lld anchors, %lld candidates): Recall@%d %.6f NDCG@%d %.6f in %.2f s "
                 "(embeddings %.2f s, ranking %.2f s)",
                 ds_split_name(split), (long long)anchors, (long long)n_cand, K, *recall, K, *ndcg, t2 - t0, t1 - t0, t2 - t1);
    return rc;
}

/* Validation + early stopping bookkeeping. Returns 1 if training should stop. */
static int validate(trainer *t, int64_t epoch, double train_loss, cgnn_err *err, int *failed, trainer_result *res) {
    head_sums s;
    evaluate(t, &t->val, t->a->num_val_batches, &s);
    t->last_val_step = t->step;
    double rk[2] = {NAN, NAN}; /* full ranking: recall, ndcg */
    char rk_name[2][48];
    const int ranking = t->a->val_rank_k > 0;
    if (ranking) {
        snprintf(rk_name[0], sizeof rk_name[0], "recall_at_%lld", (long long)t->a->val_rank_k);
        snprintf(rk_name[1], sizeof rk_name[1], "ndcg_at_%lld", (long long)t->a->val_rank_k);
        if (rank_split(t, DS_SPLIT_VALID, &rk[0], &rk[1], err) != 0) {
            *failed = 1;
            return 1;
        }
    }
    const char *main_metric = head_main_metric(&t->head);
    double vloss = head_metric(&t->head, &s, "loss"), vmain = head_metric(&t->head, &s, main_metric);
    {
        const char *names[HEAD_MAX_METRICS];
        double mv[HEAD_MAX_METRICS];
        const int nm = head_metrics(&t->head, &s, names, mv);
        char kbuf[HEAD_MAX_METRICS + 2][64], tbuf[HEAD_MAX_METRICS + 2][64];
        const char *keys[HEAD_MAX_METRICS + 5], *tags[HEAD_MAX_METRICS + 5];
        double vals[HEAD_MAX_METRICS + 5];
        keys[0] = "step", keys[1] = "epoch", tags[0] = tags[1] = NULL;
        vals[0] = (double)t->step, vals[1] = (double)epoch;
        int nk = nm;
        for (int i = 0; i < nm + (ranking ? 2 : 0); i++) {
            const char *name = i < nm ? names[i] : rk_name[i - nm];
            snprintf(kbuf[i], sizeof kbuf[i], "val_%s", name);
            snprintf(tbuf[i], sizeof tbuf[i], "val/%s", name);
            keys[2 + i] = kbuf[i], tags[2 + i] = tbuf[i], vals[2 + i] = i < nm ? mv[i] : rk[i - nm];
            nk = i + 1;
        }
        keys[2 + nk] = "train_loss", tags[2 + nk] = NULL, vals[2 + nk] = train_loss;
        log_record(t, keys, tags, vals, nk + 3, 2);
    }
    double score = t->metric_is_loss ? vloss
                   : ranking        ? rk[t->a->val_rank_ndcg ? 1 : 0]
                                    : head_metric(&t->head, &s, t->a->early_stop_criterion);
    int improved = !t->have_best || (t->metric_is_loss ? score < t->best_score : score > t->best_score);
    res->has_val = 1;
    if (improved && isfinite(score)) {
        t->best_score = score;
        t->have_best = 1;
        t->bad_checks = 0;
        res->best_val_loss = vloss;
        res->best_val_acc = vmain;
        memcpy(t->best_params, t->m.params, (size_t)t->m.num_params * sizeof(float));
        if (t->have_emb) memcpy(t->best_emb, t->emb.weight, (size_t)(t->emb.num_rows * t->emb.dim) * sizeof(float));
        for (int k = 0; t->typed && k < t->src.tg.num_node_types; k++)
            if (t->have_temb[k])
                memcpy(t->best_temb[k], t->temb[k].weight, (size_t)(t->temb[k].num_rows * t->temb[k].dim) * sizeof(float));
        /* the last good checkpoint (rank 0 writes; a failure there stops every rank) */
        int bad = save_checkpoint(t, t->best_params, t->have_emb ? t->best_emb : NULL, err) != 0;
        char report[4096];
        int code = 0;
        if (dist_check_errors(t->d, bad, err->code, err->msg, report, sizeof report, &code) > 0) {
            if (!bad) err_set(err, code ? code : CGNN_ERR_RUNTIME, "%s", is_root(t) ? report : "another rank failed");
            *failed = 1;
            return 1;
        }
    } else {
        t->bad_checks++;
    }
    log_debug("validation at step %lld: loss %.4f %s %.4f%s%s%s (%s)", (long long)t->step, vloss, main_metric, vmain,
              ranking ? " " : "", ranking ? t->a->early_stop_criterion : "", ranking ? " (full ranking)" : "",
              improved ? "best" : "no improvement");
    t->last_vloss = vloss;
    t->last_vmetric = vmain;
    return t->a->early_stop_patience > 0 && t->bad_checks >= t->a->early_stop_patience;
}

static void trainer_free(trainer *t) {
    if (lp_loss_gemm_stats() == &t->loss_gs) lp_loss_gemm_stats_register(NULL);
    if (t->have_train) loader_free(&t->train);
    if (t->have_val) loader_free(&t->val);
    if (t->have_test) loader_free(&t->test);
    model_free(&t->m);
    head_free(&t->head);
    cgnn_err terr = {0};
    if (!t->guarded) trace_discard(&t->trace); /* failed before its outputs were checked: nothing written */
    else if (trace_close(&t->trace, &terr) != 0) log_info("profiler: %s", terr.msg); /* after the loaders stopped */
    if (t->have_emb) embedding_free(&t->emb);
    for (int k = 0; k < MINIBATCH_MAX_NODE_TYPES; k++) {
        if (t->have_temb[k]) embedding_free(&t->temb[k]);
        free(t->best_temb[k]);
    }
    free(t->mtypes);
    free(t->lp_out);
    free(t->dinput);
    free(t->best_emb);
    lightgcn_adj_free(&t->lgc_adj);
    free(t->lgc_out), free(t->lgc_grad), free(t->lgc_dx), free(t->lgc_raw), free(t->lgc_dreg), free(t->lgc_ids);
    optim_free(&t->opt);
    free(t->dlogits);
    free(t->best_params);
    free(t->fp);
    jsonl_close(&t->log, NULL);
    tb_close(&t->tb);
    graph_source_free(&t->src); /* the loaders are stopped: no thread calls the rpc layer any more */
    edge_split_free(&t->ssl);
    outguard_free(&t->guard); /* last: the outputs are complete (or the job failed) */
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
    if (is_root(t))
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
    if (is_root(t)) {
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
        if (is_root(t))
            log_info("ssl: removed %lld reverse copies of the validation / test labels of %s from message passing "
                     "in %s (%lld of %lld edges left)",
                     (long long)marked, et->name, rt->name, (long long)left, (long long)rt->edges.num_edges);
    }
    return 0;
}

/* trainer_setup on a typed graph (node classification): the per-edge-type indexes and fanouts,
 * each node type's input rows (its features, or a learnable table for a featureless type,
 * node_embedding_dim wide, else hidden_dim), the typed model, loaders, optimiser and head. */
static int setup_typed(trainer *t, int64_t out_dim, int workers, cgnn_err *err) {
    const trainer_args *a = t->a;
    const dataset *ds = t->src.ds;
    const char *file = t->cfg->file;
    const int T = ds->num_node_types, K = ds->num_edge_types, L = a->num_layers;
    if (!a->model_given && !model_kind_is_typed(a->model)) { /* GiGL's heterogeneous examples train HGT */
        t->own_cfg->args.model = MODEL_HGT;
        if (a->hidden_dim % a->num_heads != 0)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: trainerConfig.trainerArgs: the dataset %s is typed and the config names no model "
                           "(gnn_model_class_path), so cgnn trains HGT, which needs hidden_dim (%lld) divisible by "
                           "num_heads (%d)", file, ds->dir, (long long)a->hidden_dim, a->num_heads);
        if (is_root(t))
            log_info("gnn_model_class_path not given and the dataset %s is typed (%d node types, %d edge types): "
                     "training HGT (GiGL's heterogeneous examples' model)", ds->dir, T, K);
    }
    if (!model_kind_is_typed(a->model))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.gnn_model_class_path: %s is a homogeneous model, but the dataset "
                       "%s has %d node types and %d edge types; use HeteroSAGE, RGCN or HGT",
                       file, model_kind_name(a->model), ds->dir, T, K);
    /* the whole graph's indexes, the part's view, or the whole graph's shape (the storage ranks sample) */
    if (graph_source_open_typed(&t->src, err) != 0) return -1;
    if (t->have_ssl) { /* (a whole graph) the supervision edge type's index without the held-out labels */
        csc_graph c;
        if (ssl_graph(t, &c, err) != 0) return -1;
        typed_graph_replace(&t->src.tg, t->ssl_task.type, &c);
        if (ssl_reverse_types(t, err) != 0) return -1;
    }
    int64_t fan[MINIBATCH_MAX_EDGE_TYPES * MINIBATCH_MAX_LAYERS];
    if (config_resolve_fanouts(t->cfg, ds, fan, err) != 0) return -1;
    memset(&t->tsc, 0, sizeof t->tsc);
    t->tsc.num_layers = L;
    t->tsc.replace = a->replace;
    const char *names[MINIBATCH_MAX_EDGE_TYPES];
    for (int e = 0; e < K; e++) {
        names[e] = ds->edge_types[e].name;
        for (int h = 0; h < L; h++) t->tsc.fanouts[h][e] = fan[e * L + h];
    }
    if (typed_sampler_config_check(&t->src.tg, &t->tsc, names, err) != 0)
        return err_prefix(err, "%s: trainerConfig.trainerArgs.num_neighbors: ", file);
    const int64_t emb_dim = a->node_embedding_dim > 0 ? a->node_embedding_dim : a->hidden_dim;
    const embedding_optim kind = !strcmp(a->embedding_optim, "Adagrad") ? EMB_OPTIM_ADAGRAD
                                 : !strcmp(a->embedding_optim, "SGD")   ? EMB_OPTIM_SGD
                                                                        : EMB_OPTIM_SPARSE_ADAM;
    const double emb_lr = a->embedding_lr > 0 ? a->embedding_lr : a->optim.lr;
    model_types *ty = t->mtypes = cgnn_calloc(1, sizeof *t->mtypes);
    ty->num_node_types = T;
    ty->num_edge_types = K;
    for (int k = 0; k < T; k++) {
        snprintf(ty->node_type[k], MODEL_TYPE_NAME_MAX, "%s", ds->node_types[k].name);
        const ds_feature *f = graph_source_type_feature(&t->src, k); /* (server-client: the storage ranks' rows) */
        t->tfeat[k] = f;
        if (f) {
            t->twidth[k] = f->dim;
        } else { /* a learnable row per node, drawn from the seed and the type */
            if (embedding_init(&t->temb[k], ds->node_types[k].num_nodes, emb_dim,
                               a->seed ^ 0x656d626564ULL ^ rng_mix64((uint64_t)k + 1), kind, emb_lr, a->optim.beta1,
                               a->optim.beta2, a->optim.eps, err) != 0)
                return -1;
            t->have_temb[k] = 1;
            if (embedding_scale_init(&t->temb[k], a->node_embedding_init_std, err) != 0 ||
                embedding_set_weight_decay(&t->temb[k], a->embedding_weight_decay, err) != 0)
                return err_prefix(err, "%s: trainerConfig.trainerArgs: ", file);
            t->best_temb[k] = cgnn_malloc((size_t)(t->temb[k].num_rows * emb_dim + 1) * sizeof(float));
            snprintf(t->temb_key[k], sizeof t->temb_key[k], "embedding_dict.%s.weight", ds->node_types[k].name);
            t->twidth[k] = emb_dim;
            ty->input_grad[k] = 1;
        }
        ty->in_dim[k] = t->twidth[k];
    }
    for (int e = 0; e < K; e++) {
        const ds_edge_type *et = &ds->edge_types[e];
        const char *c1 = strchr(et->name, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        CGNN_CHECK(c1 && c2); /* validated by the reader */
        snprintf(ty->edge_type[e][0], MODEL_TYPE_NAME_MAX, "%.*s", (int)(c1 - et->name), et->name);
        snprintf(ty->edge_type[e][1], MODEL_TYPE_NAME_MAX, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
        snprintf(ty->edge_type[e][2], MODEL_TYPE_NAME_MAX, "%s", c2 + 1);
        ty->etype_src[e] = et->src_type;
        ty->etype_dst[e] = et->dst_type;
    }
    const int lp = t->cfg->task == TASK_LINK_PREDICTION;
    if (lp) { /* anchors of the src type, candidates of the dst type */
        t->lp_src = ds->edge_types[t->task->type].src_type;
        t->lp_dst = ds->edge_types[t->task->type].dst_type;
    }
    ty->output_type = lp ? t->lp_dst : t->task->type;
    ty->num_bases = a->num_bases;
    /* on parts: this part's services, before the loaders (their batches reach every part) */
    if (graph_source_serve(&t->src, NULL, t->tfeat, err) != 0) return -1;
    if (t->task->splits[DS_SPLIT_TRAIN].present && !t->cfg->should_skip_training) {
        if (loader_for_split(t, &t->train, DS_SPLIT_TRAIN, 1, workers, err) != 0) return -1;
        t->have_train = 1;
    }
    if (t->task->splits[DS_SPLIT_VALID].present) {
        if (loader_for_split(t, &t->val, DS_SPLIT_VALID, t->a->num_val_batches > 0,
                             split_workers(t->a->val_num_workers, workers), err) != 0)
            return -1;
        t->have_val = 1;
    }
    if (t->task->splits[DS_SPLIT_TEST].present) {
        if (loader_for_split(t, &t->test, DS_SPLIT_TEST, 0, split_workers(t->a->test_num_workers, workers), err) != 0)
            return -1;
        t->have_test = 1;
    }
    { /* the model is sized for every loader's batches (LP: each split its own negatives) */
        const loader *ls[3] = {t->have_train ? &t->train : NULL, t->have_val ? &t->val : NULL,
                               t->have_test ? &t->test : NULL};
        int first = 1;
        for (int i = 0; i < 3; i++) {
            if (!ls[i]) continue;
            minibatch_typed_capacity c;
            loader_batch_typed_capacity(ls[i], &c);
            if (first) ty->cap = c;
            for (int k = 0; k < T; k++)
                for (int h = 0; h <= L; h++)
                    if (c.max_nodes[k][h] > ty->cap.max_nodes[k][h]) ty->cap.max_nodes[k][h] = c.max_nodes[k][h];
            for (int h = 0; h < L; h++)
                for (int e = 0; e < K; e++)
                    if (c.max_edges[h][e] > ty->cap.max_edges[h][e]) ty->cap.max_edges[h][e] = c.max_edges[h][e];
            first = 0;
        }
    }
    model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.kind = a->model;
    mc.num_layers = L;
    mc.hidden_dim = a->hidden_dim;
    mc.out_dim = out_dim;
    mc.num_heads = a->num_heads;
    mc.dropout = (float)a->dropout;
    mc.l2_normalize_output = a->l2_normalize_output;
    mc.types = ty;
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = max_batch_pairs(t);
    if (model_init(&t->m, &mc, &cap, a->seed, err) != 0) return err_prefix(err, "%s: trainerConfig.trainerArgs: ", file);
    if (optim_init(&t->opt, &a->optim, t->m.num_params, err) != 0) return -1;
    int64_t max_negatives = 0, max_rows = ty->cap.max_nodes[ty->output_type][0];
    const loader *ls[3] = {t->have_train ? &t->train : NULL, t->have_val ? &t->val : NULL, t->have_test ? &t->test : NULL};
    for (int i = 0; i < 3; i++)
        if (ls[i] && loader_max_negatives(ls[i]) > max_negatives) max_negatives = loader_max_negatives(ls[i]);
    if (lp) { /* the largest seed counts of every loader (validation may draw more negatives) */
        int64_t ms = 0, md = 0;
        for (int i = 0; i < 3; i++) {
            if (!ls[i]) continue;
            minibatch_typed_capacity c;
            loader_batch_typed_capacity(ls[i], &c);
            if (c.max_nodes[t->lp_src][0] > ms) ms = c.max_nodes[t->lp_src][0];
            if (c.max_nodes[t->lp_dst][0] > md) md = c.max_nodes[t->lp_dst][0];
        }
        max_rows = t->lp_src == t->lp_dst ? md : ms + md;
        t->lp_out = cgnn_malloc((size_t)(max_rows + 1) * (size_t)out_dim * sizeof(float));
    }
    if (head_init(&t->head, t->cfg, out_dim, max_batch_pairs(t), max_negatives, err) != 0) return -1;
    if (lp) reserve_lp_scores(t);
    for (int l = 0; l < L; l++) model_layer_params(&t->m, l, &t->layer_begin[l], &t->layer_end[l]);
    if (t->d->size > 1) {
        t->m.on_grads_ready = grads_ready;
        t->m.on_grads_ready_ctx = t;
    }
    t->dlogits = cgnn_malloc((size_t)(max_rows + 1) * (size_t)out_dim * sizeof(float));
    t->best_params = cgnn_malloc((size_t)t->m.num_params * sizeof(float));
    log_anchor_batching(t);
    if (is_root(t)) {
        int featureless = 0;
        for (int k = 0; k < T; k++) featureless += t->have_temb[k];
        const char *producers;
        const int n_producers = graph_source_producers(&t->src, workers, &producers);
        log_info("%s: %s on %s (%d node types, %d edge types): %lld nodes, %lld edges; %lld/%lld/%lld "
                 "train/val/test %s %s; %lld parameters%s; %d process%s x (%d compute threads, %d %s)",
                 lp ? "link prediction" : "node classification", model_kind_name(mc.kind), ds->name, T, K,
                 (long long)graph_source_num_nodes(&t->src), (long long)graph_source_num_edges(&t->src),
                 (long long)t->gtask->splits[DS_SPLIT_TRAIN].num_items,
                 (long long)t->gtask->splits[DS_SPLIT_VALID].num_items,
                 (long long)t->gtask->splits[DS_SPLIT_TEST].num_items,
                 lp ? ds->edge_types[t->task->type].name : ds->node_types[ty->output_type].name, lp ? "pairs" : "nodes",
                 (long long)t->m.num_params, featureless ? " + learnable embeddings for the featureless types" : "",
                 t->d->size, t->d->size == 1 ? "" : "es", t->threads, n_producers, producers);
    }
    return 0;
}

/* Opens data, checks it against the config, builds model/optimiser/loaders. */
static int trainer_setup(trainer *t, const resource_config *res, cgnn_err *err) {
    const trainer_args *a = t->a;
    const int lp = t->cfg->task == TASK_LINK_PREDICTION;
    if (t->cfg->profiler_enabled) { /* every rank writes its own trace_rank<R>.json */
        if (trace_open(&t->trace, t->cfg->profiler_log_dir, t->d->rank, t->cfg->profiler_wait, t->cfg->profiler_warmup,
                       t->cfg->profiler_active, err) != 0)
            return err_prefix(err, "%s: profilerConfig: ", t->cfg->file);
        trace_set_repeat(&t->trace, t->cfg->profiler_repeat);
        trace_name_thread(&t->trace, 0, "main");
    }
    const ds_task_kind want = lp ? DS_TASK_LINK_PREDICTION : DS_TASK_NODE_CLASSIFICATION;
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
    for (int i = 0; i < t->src.ds->num_tasks && !t->task; i++)
        if (t->src.ds->tasks[i].kind == want) t->task = &t->src.ds->tasks[i];
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
    t->typed = dataset_is_typed(t->src.ds);
    if (a->model == MODEL_LIGHTGCN) {
        const char *why = t->typed ? "the dataset is typed (the propagation is homogeneous)"
                          : parted ? "the graph is partitioned (the propagation needs the whole graph)"
                          : client ? "server-client mode (the propagation needs the whole graph in this process)"
                          : d->size > 1 ? "data-parallel training (mpirun -np > 1) is not supported for it yet"
                                        : NULL;
        if (why)
            return err_set(err, CGNN_ERR_INPUT, "%s: trainerConfig.trainerArgs.gnn_model_class_path: LightGCN trains "
                           "on one process over the whole homogeneous graph; not here (%s): %s", t->cfg->file,
                           graph_source_name(&t->src), why);
        t->lgc = 1;
        t->lgc_args = *a; /* the sampler and the block model see 0 layers: the batch's own nodes */
        t->lgc_args.num_layers = 0;
        t->lgc_args.num_fanouts = 0;
        for (int h = 0; h < CONFIG_MAX_LAYERS; h++) t->lgc_args.fanouts[h] = 0;
        t->a = a = &t->lgc_args;
    }
    if (a->num_layers == 0 && (t->typed || parted))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.num_layers: 0 (the learnable embeddings alone) is for a homogeneous "
                       "graph trained whole; %s is %s", t->cfg->file, graph_source_name(&t->src),
                       parted ? "a partitioned graph" : "a typed graph");
    if (lp && a->lp_candidate_hi > 0) {
        if (t->typed)
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
    if (lp && a->val_rank_k > 0 && (t->typed || parted || client))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.early_stop_criterion: %s (full ranking over every candidate) needs "
                       "a homogeneous graph trained whole; %s is %s (use mrr, auc or ap)",
                       t->cfg->file, a->early_stop_criterion, graph_source_name(&t->src),
                       t->typed ? "a typed graph" : parted ? "a partitioned graph" : "served by storage ranks");
    if (lp && a->val_rank_k > 0 && !t->gtask->splits[DS_SPLIT_VALID].present && !t->cfg->should_skip_training)
        return err_set(err, CGNN_ERR_INPUT, "%s: trainerConfig.trainerArgs.early_stop_criterion: %s needs a "
                       "validation split; %s task '%s' has none",
                       t->cfg->file, a->early_stop_criterion, t->src.ds->dir, t->task->name);
    if (a->node_embedding_reg > 0 && t->typed)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: trainerConfig.trainerArgs.node_embedding_reg: not available on a typed graph (%s) yet",
                       t->cfg->file, t->src.ds->dir);
    t->feat = t->typed ? NULL : graph_source_feature(&t->src); /* (server-client: the storage ranks' rows) */
    if (a->num_layers == 0 && t->feat) { /* matrix factorisation: the embeddings are the whole input */
        if (is_root(t))
            log_info("num_layers 0: the model is the embedding table alone; node feature '%s' is not used",
                     t->feat->name);
        t->feat = NULL;
    }
    if (!t->feat && a->node_embedding_dim == 0 && !t->typed)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: no node features in feature_data; give the nodes learnable embeddings with "
                       "trainerArgs.node_embedding_dim",
                       t->src.ds->dir);
    t->feat_dim = t->feat ? t->feat->dim : 0;
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
    if (!t->typed && graph_source_open_index(&t->src, t->have_ssl ? ssl_graph : NULL, t, err) != 0) return -1;
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
    int workers = (int)a->num_workers;
    if (t->typed) return setup_typed(t, out_dim, workers, err);

    model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.kind = a->model;
    mc.num_layers = a->num_layers;
    mc.in_dim = t->feat_dim + a->node_embedding_dim; /* [features | learnable embedding] */
    mc.hidden_dim = a->hidden_dim;
    mc.out_dim = out_dim;
    mc.num_heads = a->num_heads;
    mc.dropout = (float)a->dropout;
    mc.l2_normalize_output = a->l2_normalize_output;
    if (t->lgc) {
        const trainer_args *ca = &t->cfg->args; /* the propagation layers and alpha as configured */
        mc.prop_layers = ca->num_layers;
        if (lightgcn_alpha(mc.alpha, ca->num_layers, ca->lightgcn_alpha, ca->num_lightgcn_alpha) != 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: trainerConfig.trainerArgs.lightgcn_alpha: %d values for %d layers",
                           t->cfg->file, ca->num_lightgcn_alpha, ca->num_layers);
    }
    sampler_config sc;
    memset(&sc, 0, sizeof sc);
    sc.num_layers = a->num_layers;
    for (int h = 0; h < a->num_layers; h++) sc.fanouts[h] = a->fanouts[h];
    sc.replace = a->replace;
    if (a->node_embedding_dim > 0) {
        embedding_optim kind = !strcmp(a->embedding_optim, "Adagrad") ? EMB_OPTIM_ADAGRAD
                               : !strcmp(a->embedding_optim, "SGD")   ? EMB_OPTIM_SGD
                                                                      : EMB_OPTIM_SPARSE_ADAM;
        const double lr = a->embedding_lr > 0 ? a->embedding_lr : a->optim.lr;
        /* the rows the source reads (on parts: each drawn as the whole table's row of its original id) */
        if (graph_source_embedding_init(&t->src, &t->emb, a->node_embedding_dim, a->seed ^ 0x656d626564ULL, kind, lr,
                                        a->optim.beta1, a->optim.beta2, a->optim.eps, err) != 0)
            return -1;
        t->have_emb = 1;
        if (embedding_scale_init(&t->emb, a->node_embedding_init_std, err) != 0 ||
            embedding_set_weight_decay(&t->emb, a->embedding_weight_decay, err) != 0)
            return err_prefix(err, "%s: trainerConfig.trainerArgs: ", t->cfg->file);
        t->best_emb = cgnn_malloc((size_t)(t->emb.num_rows * t->emb.dim + 1) * sizeof(float));
    }
    if (t->lgc) { /* the normalised graph and the (N, E) buffers of the full-graph propagation */
        if (lightgcn_adj_build(&t->lgc_adj, t->src.g, err) != 0) return err_prefix(err, "%s: ", t->src.ds->dir);
        const size_t ND = (size_t)(t->emb.num_rows * t->emb.dim + 1);
        t->lgc_out = cgnn_malloc(ND * sizeof(float));
        t->lgc_grad = cgnn_malloc(ND * sizeof(float));
        t->lgc_dx = cgnn_malloc(ND * sizeof(float));
        t->lgc_ids = cgnn_malloc((size_t)(t->emb.num_rows + 1) * sizeof(int64_t));
        for (int64_t i = 0; i < t->emb.num_rows; i++) t->lgc_ids[i] = i;
        t->lgc_stale = 1;
    }
    /* on parts: this part's services (the layer itself was created collectively) */
    if (graph_source_serve(&t->src, t->feat, NULL, err) != 0) return -1;
    /* the loaders first: with labelled LP pairs, their listed negatives size the batches */
    if (t->task->splits[DS_SPLIT_TRAIN].present && !t->cfg->should_skip_training) {
        if (loader_for_split(t, &t->train, DS_SPLIT_TRAIN, 1, workers, err) != 0) return -1;
        t->have_train = 1;
    }
    if (t->task->splits[DS_SPLIT_VALID].present) {
        if (loader_for_split(t, &t->val, DS_SPLIT_VALID, t->a->num_val_batches > 0,
                             split_workers(t->a->val_num_workers, workers), err) != 0)
            return -1;
        t->have_val = 1;
    }
    if (t->task->splits[DS_SPLIT_TEST].present) {
        if (loader_for_split(t, &t->test, DS_SPLIT_TEST, 0, split_workers(t->a->test_num_workers, workers), err) != 0)
            return -1;
        t->have_test = 1;
    }
    int64_t max_seeds = a->batch_size, max_negatives = 0;
    loader *loaders[3] = {t->have_train ? &t->train : NULL, t->have_val ? &t->val : NULL, t->have_test ? &t->test : NULL};
    for (int i = 0; i < 3; i++) {
        if (!loaders[i]) continue;
        if (loader_max_seeds(loaders[i]) > max_seeds) max_seeds = loader_max_seeds(loaders[i]);
        if (loader_max_negatives(loaders[i]) > max_negatives) max_negatives = loader_max_negatives(loaders[i]);
    }
    minibatch_capacity cap; /* LP seeds: anchors + positives + listed + random negatives */
    if (graph_source_batch_capacity(&t->src, &sc, max_seeds, mc.in_dim, &cap, err) != 0) return -1;

    if (model_init(&t->m, &mc, &cap, a->seed, err) != 0) {
        /* the dataset chose the output width, and it is the widest: the dataset is the cause */
        if (a->out_channels <= 0 && !lp && t->task->num_classes > 0 && mc.out_dim >= mc.hidden_dim &&
            mc.out_dim >= mc.in_dim)
            return err_prefix(err, "%s/metadata.yaml: task '%s' num_classes %lld: ", t->src.ds->dir, t->task->name,
                              (long long)t->task->num_classes);
        return err_prefix(err, "%s: trainerConfig.trainerArgs: ", t->cfg->file);
    }
    if (optim_init(&t->opt, &a->optim, t->m.num_params, err) != 0) return -1;
    if (head_init(&t->head, t->cfg, out_dim, max_batch_pairs(t), max_negatives, err) != 0) return -1;
    if (lp) reserve_lp_scores(t);
    if (t->have_emb)
        t->dinput = cgnn_malloc((size_t)(cap.max_nodes[a->num_layers] + 1) * (size_t)mc.in_dim * sizeof(float));
    if (t->lgc) {
        t->lgc_raw = cgnn_malloc((size_t)(cap.max_nodes[0] + 1) * (size_t)t->emb.dim * sizeof(float));
        t->lgc_dreg = cgnn_malloc((size_t)(cap.max_nodes[0] + 1) * (size_t)t->emb.dim * sizeof(float));
    }
    for (int l = 0; l < a->num_layers; l++) model_layer_params(&t->m, l, &t->layer_begin[l], &t->layer_end[l]);
    if (d->size > 1) {
        t->m.on_grads_ready = grads_ready;
        t->m.on_grads_ready_ctx = t;
    }
    t->dlogits = cgnn_malloc((size_t)(cap.max_nodes[0] + 1) * (size_t)out_dim * sizeof(float));
    t->best_params = cgnn_malloc((size_t)t->m.num_params * sizeof(float));
    log_anchor_batching(t);
    const char *producers;
    const int n_producers = graph_source_producers(&t->src, workers, &producers);
    if (is_root(t))
        log_info("%s %s on %s: %lld nodes, %lld edges, %lld input channels; %lld/%lld/%lld train/val/test %s; "
             "%lld parameters%s; "
             "%d process%s x (%d compute threads, %d %s)",
             lp ? "link prediction:" : "node classification:", model_kind_name(mc.kind), t->src.ds->name, (long long)graph_source_num_nodes(&t->src), (long long)graph_source_num_edges(&t->src),
             (long long)mc.in_dim, (long long)t->gtask->splits[DS_SPLIT_TRAIN].num_items,
             (long long)t->gtask->splits[DS_SPLIT_VALID].num_items, (long long)t->gtask->splits[DS_SPLIT_TEST].num_items,
             lp ? "pairs" : "nodes", (long long)t->m.num_params, t->have_emb ? " + a sparse embedding table" : "", d->size, d->size == 1 ? "" : "es", threads, n_producers, producers);
    return 0;
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
    if (is_root(t) && !c->should_skip_training) {
        char f_model[CONFIG_PATH_MAX + 64];
        snprintf(f_model, sizeof f_model, "%s: sharedConfig.trainedModelMetadata.trainedModelUri", c->file);
        if (outputs_check_checkpoint(c->trained_model_uri, c->task, &t->m.cfg, f_model, err) != 0) return -1;
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
    if (c->profiler_enabled && t->trace.path[0] && outputs_remove(t->trace.path, err) != 0) return -1;
    if (!is_root(t)) return 0;
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
    graph_source_identify(&t->src, t->feat, &id);
    uint64_t fanh = 0; /* unsigned: a hash, wrapping is fine */
    for (int h = 0; h < a->num_layers; h++) fanh = fanh * 1000003u + (uint64_t)a->fanouts[h];
    for (int h = 0; t->typed && h < a->num_layers; h++) /* the per-edge-type fanouts */
        for (int k = 0; k < t->src.tg.num_edge_types; k++) fanh = fanh * 1000003u + (uint64_t)t->tsc.fanouts[h][k];
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
                            t->m.cfg.out_dim, t->m.cfg.in_dim, a->num_heads, fan, a->batch_size, a->num_epochs,
                            a->num_max_train_batches, a->val_every_num_batches, a->num_val_batches,
                            a->num_test_batches, a->early_stop_patience, (int64_t)a->seed, f64_bits(a->dropout),
                            f64_bits(a->optim.lr), f64_bits(a->optim.weight_decay), f64_bits(a->clip_grad_norm),
                            a->node_embedding_dim, a->drop_uneven_inputs, t->cfg->should_skip_training,
                            t->m.num_params, graph_source_num_nodes(&t->src), graph_source_num_edges(&t->src), id.edges,
                            id.feature_rows,
                            t->feat ? (int64_t)t->feat->array.dtype : -1,
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

/* Batches every rank runs this epoch: with drop_uneven all ranks have the same count; without,
 * the largest slice's count — ranks that run out join the remaining all-reduces with no
 * gradient (PyTorch DDP's Join). Every rank computes it alone (the slicing is deterministic). */
static int64_t epoch_steps(const trainer *t) {
    if (t->src.local_seeds) /* each part's own seeds: counted over every rank at the start */
        return t->a->drop_uneven_inputs ? t->train_batches_min : t->train_batches_max;
    int64_t n = loader_num_batches(&t->train);
    if (t->d->size == 1 || t->a->drop_uneven_inputs) return n;
    for (int r = 0; r < t->d->size; r++) {
        int64_t nr = item_sampler_rank_batches(&t->train.items, r);
        if (nr > n) n = nr;
    }
    return n;
}

/* One optimiser step on mb (NULL: this rank has no batch left and only joins the collectives).
 * Returns 0, or -1 with *err when any rank's loss is not finite (the same decision on every
 * rank). *loss gets the mean loss over the ranks that had a batch, *lr the learning rate. */
static int train_step(trainer *t, minibatch *mb, int64_t epoch, double *loss_out, double *lr_out, cgnn_err *err) {
    const trainer_args *a = t->a;
    const dist_ctx *d = t->d;
    const int fault_here = t->fault_rank < 0 || t->fault_rank == d->rank;
    if (fault_here && t->step == t->fault_exit_step) {
        fprintf(stderr, "cgnn: rank %d: CGNN_TEST_EXIT_AT_STEP: exiting abruptly at step %lld\n", d->rank,
                (long long)t->step);
        _Exit(3);
    }
    double c0 = timer_now(), cl = c0;
    model_zero_grad(&t->m);
    double loss = 0;
    const int reg = mb && t->have_emb && a->node_embedding_reg > 0;
    if (mb) {
        t->lgc_stale = 1; /* LightGCN: the table moved since the last propagation */
        t->lgc_batch_only = 1;
        prepare_batch(t, mb);
        t->lgc_batch_only = 0;
        const float *out = forward(t, mb, 1, rng_key(a->seed ^ 0xd1b54a32d192ed03ULL, (uint64_t)t->step));
        cl = timer_now(); /* the loss from here (its GEMMs counted in loss_gs) */
        const double gs0 = t->loss_gs.seconds, gf0 = t->loss_gs.flops;
        loss = head_batch(&t->head, mb, out, t->dlogits, NULL);
        if (reg && t->lgc) { /* LightGCN: reg on the raw table rows (x^(0)) of the batch's nodes */
            const int64_t n = mb->num_input_nodes, D = t->emb.dim;
            embedding_gather(&t->emb, mb->input_nodes, n, t->lgc_raw, D, 0);
            memset(t->lgc_dreg, 0, (size_t)(n * D) * sizeof(float));
            const int64_t P = mb->num_items, slots = 2 * P + mb->num_listed + mb->num_negatives;
            if (P > 0)
                loss += embedding_batch_l2(t->lgc_dreg, t->lgc_raw, mb->item_local, slots, D, 0, D,
                                           a->node_embedding_reg / (double)P);
        } else if (reg) { /* LightGCN's reg on the batch's embedding rows: its gradient starts d(input) */
            memset(t->dinput, 0, (size_t)(mb->num_input_nodes * mb->feat_dim) * sizeof(float));
            const int64_t P = mb->num_items, slots = 2 * P + mb->num_listed + mb->num_negatives;
            if (P > 0)
                loss += embedding_batch_l2(t->dinput, mb->features, mb->item_local, slots, mb->feat_dim, t->feat_dim,
                                           t->emb.dim, a->node_embedding_reg / (double)P);
        }
        t->loss_gemm_s += t->loss_gs.seconds - gs0, t->loss_gemm_flops += t->loss_gs.flops - gf0;
        if (fault_here && t->step == t->fault_nan_step) loss = NAN; /* test hook: CGNN_TEST_NAN_AT_STEP */
    }
    double c1 = timer_now();
    /* status of every rank, before any gradient moves: [ranks with a batch, failed ranks, loss sum] */
    const int bad = mb && !isfinite(loss);
    double status[3] = {mb ? 1.0 : 0.0, bad ? 1.0 : 0.0, bad ? 0.0 : loss};
    dist_allreduce_sum_f64(d, status, 3);
    if (status[1] > 0) {
        if (bad)
            return err_set(err, CGNN_ERR_RUNTIME,
                           "training loss is %s at step %lld (epoch %lld)%s; stopped. The last good checkpoint "
                           "(best validation) is kept at %s. Try a lower optim_lr or clip_grad_norm.",
                           isnan(loss) ? "NaN" : "infinite", (long long)t->step, (long long)epoch,
                           d->size > 1 ? " on this rank" : "", t->cfg->trained_model_uri);
        return err_set(err, CGNN_ERR_RUNTIME, "stopped: another rank's training loss is not finite");
    }
    double c2 = timer_now();
    if (mb && t->have_emb) { /* the input gradient's embedding columns are the table rows' gradients */
        if (!reg || t->lgc) memset(t->dinput, 0, (size_t)(mb->num_input_nodes * mb->feat_dim) * sizeof(float));
        model_backward_input(&t->m, mb, t->dlogits, t->dinput);
        if (t->lgc) { /* d(out) of every node (zero off the batch), back through the propagation */
            const int64_t N = t->emb.num_rows, D = t->emb.dim, n = mb->num_input_nodes, stride = mb->feat_dim;
            memset(t->lgc_grad, 0, (size_t)(N * D) * sizeof(float));
            for (int64_t i = 0; i < n; i++) { /* input nodes are distinct; += all the same */
                float *g = t->lgc_grad + mb->input_nodes[i] * D;
                const float *src = t->dinput + i * stride + t->feat_dim;
                for (int64_t k = 0; k < D; k++) g[k] += src[k];
            }
            lightgcn_backward_rows(&t->lgc_adj, t->lgc_grad, D, t->m.cfg.prop_layers, t->m.cfg.alpha, t->lgc_dx,
                                   mb->input_nodes, n, NULL); /* d out is zero off the batch's rows */
            if (reg)
                for (int64_t i = 0; i < n; i++) {
                    float *g = t->lgc_dx + mb->input_nodes[i] * D;
                    const float *src = t->lgc_dreg + i * D;
                    for (int64_t k = 0; k < D; k++) g[k] += src[k];
                }
        }
    } else if (mb)
        backward(t, mb);
    else
        for (int l = a->num_layers - 1; l >= 0; l--) grads_ready(t, l); /* Join: zeros, same collectives */
    double c3 = timer_now();
    if (d->size > 1) {
        dist_wait_all(d);
        const float inv = (float)(1.0 / status[0]); /* the mean over the ranks that had a batch */
        float *g = t->m.grads;
        const int64_t P = t->m.num_params;
#pragma omp parallel for simd schedule(static)
        for (int64_t k = 0; k < P; k++) g[k] *= inv;
    }
    if (a->clip_grad_norm > 0) optim_clip_grad_norm(t->m.grads, t->m.num_params, a->clip_grad_norm);
    double c4 = timer_now();
    double lr = sched_lr(&a->sched, a->optim.lr, t->step);
    optim_step(&t->opt, t->m.params, t->m.grads, lr);
    if (t->have_emb) { /* sparse: only the rows this step touched (on any rank) move */
        const double emb_lr = sched_lr(&a->sched, t->emb.lr, t->step);
        const int64_t *ids = mb ? mb->input_nodes : NULL, n = mb ? mb->num_input_nodes : 0;
        const int64_t stride = mb ? mb->feat_dim : 0;
        if (t->lgc) { /* LightGCN: every row has a gradient (the propagation reaches the whole graph) */
            if (embedding_sparse_step(&t->emb, d, mb ? t->lgc_ids : NULL, mb ? t->lgc_dx : NULL,
                                      mb ? t->emb.num_rows : 0, t->emb.dim, 0, emb_lr, status[0], err) != 0)
                return -1;
        } else if (graph_source_embedding_step(&t->src, &t->emb, ids, t->dinput, n, stride, t->feat_dim, emb_lr,
                                               status[0], err) != 0) { /* (on parts: the rows to their parts) */
            return -1;
        }
    }
    for (int k = 0; t->typed && k < t->src.tg.num_node_types; k++) { /* featureless types: sparse, as above */
        if (!t->have_temb[k]) continue;
        const minibatch_typed *ty = mb ? mb->typed : NULL;
        const double emb_lr = sched_lr(&a->sched, t->temb[k].lr, t->step);
        if (embedding_sparse_step(&t->temb[k], d, ty ? ty->nodes[k] : NULL, ty ? model_typed_input_grad(&t->m, k) : NULL,
                                  ty ? ty->num_nodes[k][ty->num_layers] : 0, t->twidth[k], 0, emb_lr, status[0],
                                  err) != 0)
            return -1;
    }
    double c5 = timer_now();
    t->t_forward += cl - c0;
    t->t_loss += c1 - cl;
    t->t_allreduce += (c2 - c1) + (c4 - c3); /* status exchange + waiting for the gradient sums */
    t->t_backward += c3 - c2;
    t->t_optim += c5 - c4;
    if (trace_active(&t->trace)) {
        const int64_t b = mb ? mb->batch_index : -1, n = mb ? mb->num_items : 0;
        trace_span(&t->trace, "forward", 0, c0, cl, b, n);
        trace_span(&t->trace, "loss", 0, cl, c1, b, n);
        trace_span(&t->trace, "allreduce", 0, c1, c2, b, 3);
        trace_span(&t->trace, "backward", 0, c2, c3, b, n);
        trace_span(&t->trace, "allreduce", 0, c3, c4, b, t->m.num_params);
        trace_span(&t->trace, "optimizer", 0, c4, c5, b, t->m.num_params);
    }
    t->timed_steps++;
    t->step++;
    *loss_out = status[2] / status[0];
    *lr_out = lr;
    return 0;
}

/* The always-on stage timers as one array: wait, sample, gather, forward, backward, all-reduce,
 * optimizer (seconds, summed over this rank's steps). */
#define NUM_STAGES 8
_Static_assert(NUM_STAGES == TRAIN_STATE_STAGES, "the training state holds every stage timer");
static const char *const STAGE_KEYS[NUM_STAGES] = {"wait_ms", "sample_ms", "gather_ms", "forward_ms", "loss_ms",
                                                   "backward_ms", "allreduce_ms", "optimizer_ms"};
static void stage_times(const trainer *t, double out[NUM_STAGES]) {
    out[0] = t->t_wait, out[1] = t->t_sample, out[2] = t->t_gather, out[3] = t->t_forward, out[4] = t->t_loss;
    out[5] = t->t_backward, out[6] = t->t_allreduce, out[7] = t->t_optim;
}

/* GFLOP/s of the training losses' GEMMs since (seconds s0, FLOPs f0); NaN without any. */
static double loss_gemm_gflops(const trainer *t, double s0, double f0) {
    const double s = t->loss_gemm_s - s0, f = t->loss_gemm_flops - f0;
    return s > 0 && f > 0 ? f / s / 1e9 : NAN;
}

/* End of an epoch: the mean time per step of every stage since `before` (rank 0's), logged and
 * written to metrics.jsonl as {"step", "epoch", "steps", "<stage>_ms"..., "loss_gemm_gflops"}
 * (the rate of the loss's GEMMs over the epoch, since gemm_s0 / gemm_f0; null for a loss without
 * GEMMs). Sample and gather run on the sampler threads, overlapped with the others: they are not
 * part of the step's sum. */
static void log_epoch_stages(trainer *t, int64_t epoch, const double before[NUM_STAGES], int64_t steps_before,
                             double gemm_s0, double gemm_f0) {
    const int64_t n = t->timed_steps - steps_before;
    if (n <= 0 || !is_root(t)) return;
    double now[NUM_STAGES], vals[NUM_STAGES + 4];
    stage_times(t, now);
    const char *keys[NUM_STAGES + 4] = {"step", "epoch", "steps"};
    const char *tags[NUM_STAGES + 4] = {NULL, NULL, NULL};
    vals[0] = (double)t->step, vals[1] = (double)epoch, vals[2] = (double)n;
    for (int i = 0; i < NUM_STAGES; i++) {
        keys[3 + i] = STAGE_KEYS[i];
        tags[3 + i] = NULL;
        vals[3 + i] = 1e3 * (now[i] - before[i]) / (double)n;
    }
    keys[3 + NUM_STAGES] = "loss_gemm_gflops", tags[3 + NUM_STAGES] = NULL;
    vals[3 + NUM_STAGES] = loss_gemm_gflops(t, gemm_s0, gemm_f0);
    log_record(t, keys, tags, vals, NUM_STAGES + 4, 3);
    /* one line per epoch of several steps (a one-step epoch's time is on its progress line, and
     * the whole run's per-step summary is printed at the end) */
    if (n >= 2)
        log_info("epoch %lld: %lld steps, per step: waiting %.1f ms, forward %.1f, loss %.1f, backward %.1f, "
                 "all-reduce %.1f, optimizer %.1f (sampler threads: sample %.1f ms, gather %.1f ms per batch)",
                 (long long)epoch + 1, (long long)n, vals[3], vals[6], vals[7], vals[8], vals[9], vals[10], vals[4],
                 vals[5]);
}

/* ---- exact resume (train/train_state.h) ---- */

/* The tensors of the training state, views of the trainer's own buffers (the best weights only
 * when there are any): the parameters and optimiser moments, the homogeneous embedding table, or
 * each featureless node type's table ("embedding_dict.<type>.weight", .m, .v, .best) on a typed
 * graph. Returns the count (<= TRAIN_STATE_MAX_TENSORS). */
static int state_tensors(trainer *t, int with_best, train_state_tensor *out) {
    const int64_t P = t->m.num_params;
    int n = 0;
    out[n++] = (train_state_tensor){"params", t->m.params, 1, P, 0};
    if (t->opt.m) out[n++] = (train_state_tensor){"optim.m", t->opt.m, 1, P, 0};
    if (t->opt.v) out[n++] = (train_state_tensor){"optim.v", t->opt.v, 1, P, 0};
    if (with_best) out[n++] = (train_state_tensor){"best_params", t->best_params, 1, P, 0};
    if (t->have_emb) {
        const int64_t R = t->emb.num_rows, D = t->emb.dim;
        out[n++] = (train_state_tensor){"embedding.weight", t->emb.weight, R, D, 0};
        if (t->emb.m) out[n++] = (train_state_tensor){"embedding.m", t->emb.m, R, D, 1};
        if (t->emb.v) out[n++] = (train_state_tensor){"embedding.v", t->emb.v, R, D, 1};
        if (with_best) out[n++] = (train_state_tensor){"embedding.best", t->best_emb, R, D, 0};
    }
    for (int k = 0; t->typed && k < t->src.tg.num_node_types; k++) {
        if (!t->have_temb[k]) continue;
        const embedding_table *e = &t->temb[k];
        const int64_t R = e->num_rows, D = e->dim;
        char(*key)[sizeof t->temb_state_key[0][0]] = t->temb_state_key[k];
        static const char *const SUFFIX[3] = {"m", "v", "best"};
        for (int j = 0; j < 3; j++)
            snprintf(key[j], sizeof key[j], "embedding_dict.%s.%s", t->src.ds->node_types[k].name, SUFFIX[j]);
        out[n++] = (train_state_tensor){t->temb_key[k], e->weight, R, D, 0};
        if (e->m) out[n++] = (train_state_tensor){key[0], e->m, R, D, 1};
        if (e->v) out[n++] = (train_state_tensor){key[1], e->v, R, D, 1};
        if (with_best) out[n++] = (train_state_tensor){key[2], t->best_temb[k], R, D, 0};
    }
    CGNN_CHECK(n <= TRAIN_STATE_MAX_TENSORS);
    return n;
}

/* The step counter of the embedding tables: the homogeneous table's, or the typed tables' (every
 * training step steps each of them, rows or not: one common count). */
static int64_t emb_step(const trainer *t) {
    if (t->have_emb) return t->emb.step;
    int64_t s = -1;
    for (int k = 0; t->typed && k < t->src.tg.num_node_types; k++)
        if (t->have_temb[k]) {
            CGNN_CHECK(s < 0 || s == t->temb[k].step);
            s = t->temb[k].step;
        }
    return s < 0 ? 0 : s;
}

/* This job's fingerprint for the training state (t->fp, allocated here). */
static void state_fingerprint(trainer *t) {
    t->fp = cgnn_malloc(sizeof *t->fp);
    /* (server-client mode: no graph on a compute rank; the whole graph's sizes from the partition) */
    train_state_fingerprint_init(t->fp, t->cfg, t->src.ds, t->task, t->feat, t->typed ? NULL : graph_source_shape(&t->src),
                                 &t->m, t->d->size);
    /* server-client mode: the partition (the table's rows are its new ids) and the seed assignment */
    const char *keys[GRAPH_SOURCE_MAX_STATE_FIELDS], *vals[GRAPH_SOURCE_MAX_STATE_FIELDS];
    const int n = graph_source_state_fields(&t->src, keys, vals);
    for (int i = 0; i < n; i++) train_state_fingerprint_add(t->fp, keys[i], vals[i]);
    if (!t->typed) return;
    int tables = 0;
    for (int k = 0; k < t->src.tg.num_node_types; k++) tables |= t->have_temb[k];
    train_state_fingerprint_add_typed(t->fp, t->cfg, t->src.ds, t->tfeat, t->tsc.fanouts, t->tsc.num_layers, tables);
}

/* Writes the training state after step t->step: *sc holds the loop's position (epoch, next
 * batch, the epoch's loss sums and stage timers); the rest comes from the trainer. Rank 0
 * writes; collective (a failure stops every rank). Returns 0 or -1 with *err. */
static int write_state(trainer *t, const trainer_result *res, train_state_scalars *sc, cgnn_err *err) {
    sc->step = t->step;
    sc->last_vloss = t->last_vloss, sc->last_vmetric = t->last_vmetric;
    sc->have_best = t->have_best, sc->best_score = t->best_score, sc->bad_checks = t->bad_checks;
    sc->has_val = res->has_val, sc->best_val_loss = res->best_val_loss, sc->best_val_acc = res->best_val_acc;
    sc->optim_step = t->opt.step;
    sc->emb_step = emb_step(t);
    sc->compute_threads = t->threads;
    stage_times(t, sc->stage_seconds);
    sc->timed_steps = t->timed_steps;
    int bad = 0;
    if (is_root(t)) {
        sc->jsonl_bytes = jsonl_bytes(&t->log);
        sc->tb_bytes = tb_bytes(&t->tb);
        sc->tb_records = t->tb.records;
        snprintf(sc->tb_file, sizeof sc->tb_file, "%s", tb_file_name(&t->tb));
        train_state_tensor ts[TRAIN_STATE_MAX_TENSORS];
        const int n = state_tensors(t, t->have_best, ts);
        const int64_t data = train_state_data_bytes(ts, n);
        t->states_written++;
        const double c0 = timer_now();
        bad = train_state_save(t->state_path, t->fp, sc, ts, n,
                               t->states_written == t->fault_state_exit ? data / 2 + 8 : -1, err) != 0;
        t->t_state += timer_now() - c0;
        t->state_bytes = data;
    }
    return dist_phase_failed(t->d, bad, err) ? -1 : 0;
}

static int train_loop(trainer *t, trainer_result *res, cgnn_err *err) {
    const trainer_args *a = t->a;
    int stop = 0, failed = 0;
    const train_state_scalars *rs = t->resumed ? &t->resume : NULL; /* continue where it stopped */
    double t_start = timer_now() - (rs ? rs->train_seconds : 0);
    for (int64_t epoch = rs ? rs->epoch : 0; epoch < a->num_epochs && !stop; epoch++) {
        const int resume_here = rs && epoch == rs->epoch;
        double stages_before[NUM_STAGES];
        int64_t steps_before;
        if (resume_here) {
            memcpy(stages_before, rs->epoch_stage_seconds, sizeof stages_before);
            steps_before = rs->epoch_timed_steps;
        } else {
            stage_times(t, stages_before);
            steps_before = t->timed_steps;
        }
        const double gemm_s0 = t->loss_gemm_s, gemm_f0 = t->loss_gemm_flops; /* (a resumed epoch: since the resume) */
        const int64_t first = resume_here ? rs->next_batch : 0;
        loader_start_epoch_at(&t->train, (int)epoch, first,
                              t->src.local_seeds && a->drop_uneven_inputs ? t->train_batches_min : 0);
        const int64_t steps = epoch_steps(t);
        progress_epoch(&t->prog, epoch, a->num_max_train_batches > 0 && a->num_epochs > 1000000 ? 0 : a->num_epochs,
                       steps > first ? steps - first : 0);
        res->epochs = epoch + 1;
        double loss_sum = resume_here ? rs->loss_sum : 0, window_t = timer_now();
        int64_t loss_n = resume_here ? rs->loss_n : 0, window_seeds = 0;
        t->last_vloss = resume_here ? rs->last_vloss : NAN;
        t->last_vmetric = resume_here ? rs->last_vmetric : NAN;
        for (int64_t s = first; s < steps && !stop; s++) {
            trace_set_step(&t->trace, t->step);
            double w0 = timer_now();
            minibatch *mb = next_batch(t, &t->train); /* NULL once this rank's slice is exhausted */
            double w1 = timer_now();
            t->t_wait += w1 - w0;
            if (mb) {
                t->t_sample += mb->sample_seconds;
                t->t_gather += mb->gather_seconds;
                trace_span(&t->trace, "wait", 0, w0, w1, mb->batch_index, mb->num_items);
            }
            double loss = 0, lr = 0;
            int rc = train_step(t, mb, epoch, &loss, &lr, err);
            if (mb) {
                window_seeds += mb->num_items;
                loader_release(&t->train, mb);
            }
            if (rc != 0) {
                progress_clear(&t->prog);
                return -1;
            }
            loss_sum += loss;
            loss_n++;
            double now = timer_now();
            const char *keys[] = {"step", "epoch", "train_loss", "lr", "seeds_per_s"};
            const char *tags[] = {NULL, NULL, "train/loss", "train/lr", "train/seeds_per_s"};
            double vals[] = {(double)t->step, (double)epoch, loss, lr,
                             (double)window_seeds * t->d->size / (now - window_t + 1e-12)};
            log_record(t, keys, tags, vals, 5, 2);
            window_t = now;
            window_seeds = 0;
            progress_update(&t->prog, loss, lr);
            if (a->val_every_num_batches > 0 && t->have_val && t->step % a->val_every_num_batches == 0) {
                stop = validate(t, epoch, loss_sum / (double)loss_n, err, &failed, res);
                if (failed) return -1;
            }
            if (a->num_max_train_batches > 0 && t->step >= a->num_max_train_batches) stop = 1;
            /* the training state after this step (validation included): a rerun continues here */
            if (!stop && a->checkpoint_every_n_batches > 0 && t->step % a->checkpoint_every_n_batches == 0) {
                train_state_scalars sc;
                memset(&sc, 0, sizeof sc);
                sc.epoch = epoch, sc.next_batch = s + 1;
                sc.loss_sum = loss_sum, sc.loss_n = loss_n;
                memcpy(sc.epoch_stage_seconds, stages_before, sizeof stages_before);
                sc.epoch_timed_steps = steps_before;
                sc.train_seconds = timer_now() - t_start;
                if (write_state(t, res, &sc, err) != 0) {
                    progress_clear(&t->prog);
                    return -1;
                }
            }
        }
        if (stop && t->bad_checks >= a->early_stop_patience && a->early_stop_patience > 0) res->stopped_early = 1;
        if (a->val_every_num_batches == 0 && t->have_val && !stop) {
            stop = validate(t, epoch, loss_n ? loss_sum / (double)loss_n : NAN, err, &failed, res);
            if (failed) return -1;
            if (stop) res->stopped_early = 1;
        }
        progress_end_epoch(&t->prog, loss_n ? loss_sum / (double)loss_n : NAN, t->last_vloss, t->last_vmetric,
                           head_main_metric(&t->head));
        log_epoch_stages(t, epoch, stages_before, steps_before, gemm_s0, gemm_f0);
        if (dist_phase_failed(t->d, is_root(t) && logs_check(t, 0, err) != 0, err)) return -1;
    }
    /* val_at_end: the steps after the latest validation are validated too (best weights, early
     * stopping's bookkeeping); not after an early stop (it stopped at a validation) */
    if (a->val_at_end && t->have_val && !res->stopped_early && t->step > 0 && t->last_val_step != t->step) {
        if (is_root(t)) log_info("validation at the end of training (step %lld)", (long long)t->step);
        validate(t, res->epochs > 0 ? res->epochs - 1 : 0, NAN, err, &failed, res);
        if (failed) return -1;
    }
    res->steps = t->step;
    res->train_seconds = timer_now() - t_start;
    if (t->timed_steps > 0 && is_root(t)) {
        const double n = (double)t->timed_steps, ms = 1e3 / n;
        const double total = t->t_wait + t->t_forward + t->t_loss + t->t_backward + t->t_allreduce + t->t_optim;
        log_info("per step (rank 0, %lld steps): waiting for batches %.1f ms, forward %.1f ms, loss %.1f ms, "
                 "backward %.1f ms, all-reduce wait %.1f ms (%.1f%%), optimizer %.1f ms",
                 (long long)t->timed_steps, t->t_wait * ms, t->t_forward * ms, t->t_loss * ms, t->t_backward * ms,
                 t->t_allreduce * ms, 100.0 * t->t_allreduce / (total > 0 ? total : 1), t->t_optim * ms);
        const double gf = loss_gemm_gflops(t, 0, 0);
        if (isfinite(gf)) /* as bench reports the model's GEMMs: the loss's share and its rate */
            log_info("loss GEMMs: %.2f GFLOP per step, %.1f ms per step (%.0f%% of the loss), %.2f GFLOP/s",
                     t->loss_gemm_flops / n / 1e9, t->loss_gemm_s * ms,
                     100.0 * t->loss_gemm_s / (t->t_loss > 0 ? t->t_loss : 1), gf);
    }
    if (t->n_rank > 0 && is_root(t))
        log_info("full-ranking validation: %lld runs, %.2f s each on average (rank 0: embeddings + ranking)",
                 (long long)t->n_rank, t->t_rank / (double)t->n_rank);
    if (res->stopped_early && is_root(t))
        log_info("early stopping after %lld steps (no improvement in %lld validations)", (long long)t->step,
                 (long long)a->early_stop_patience);
    return 0;
}

/* Replicas must never drift: compares a hash of every rank's parameters (cheap: one pass over
 * the flat buffer, two tiny all-reduces). Returns 1 with *err when they differ. */
static int replicas_differ(trainer *t, cgnn_err *err) {
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *p = (const unsigned char *)t->m.params;
    for (size_t i = 0; i < (size_t)t->m.num_params * sizeof(float); i++) h = (h ^ p[i]) * 1099511628211ULL;
    if (t->have_emb && !graph_source_table_sharded(&t->src)) { /* and the embedding table, updated sparsely from
                                                                   every rank's rows (a sharded table differs per
                                                                   part by design) */
        p = (const unsigned char *)t->emb.weight;
        for (size_t i = 0; i < (size_t)(t->emb.num_rows * t->emb.dim) * sizeof(float); i++)
            h = (h ^ p[i]) * 1099511628211ULL;
    }
    int64_t lo = (int64_t)(h >> 1), hi = (int64_t)(h >> 1);
    int64_t neg_lo = -lo;
    dist_allreduce_max_i64(t->d, &hi, 1);
    dist_allreduce_max_i64(t->d, &neg_lo, 1);
    if (hi != -neg_lo) {
        err_set(err, CGNN_ERR_RUNTIME, "internal error: the %d replicas' parameters differ after training", t->d->size);
        return 1;
    }
    if (is_root(t))
        log_info("parameters bitwise identical on all %d ranks (hash %016llx)", t->d->size, (unsigned long long)h);
    return 0;
}

/* Rank 0, after setup and before any output is touched: the state file's path and this job's
 * fingerprint, and whether a state to resume from is there (*found). A state file of another
 * job is refused here (-1 with *err naming the file and the differing field), so a refused run
 * removes nothing. */
static int state_prologue(trainer *t, int *found, cgnn_err *err) {
    *found = 0;
    if (t->a->checkpoint_every_n_batches == 0) return 0;
    if (train_state_path(t->state_path, sizeof t->state_path, t->cfg->trained_model_uri, err) != 0) return -1;
    state_fingerprint(t);
    if (access(t->state_path, F_OK) != 0) return 0;
    /* refuse a state of another job now, while the previous outputs are still there */
    train_state_reader r;
    train_state_scalars sc;
    const int rc = train_state_open(&r, t->state_path, t->fp, &sc, err);
    train_state_close(&r);
    *found = rc == 0;
    return rc;
}

/* After setup, every rank: this job's fingerprint, and when rank 0 found a state file
 * (found, rank 0's word), every rank reads it (the same file: one machine or a shared file
 * system) into the trainer's buffers and t->resume. Collective. Returns 0 or -1 with *err. */
static int state_resume(trainer *t, int found, trainer_result *res, cgnn_err *err) {
    int bad = 0;
    if (!t->state_path[0]) /* the other ranks */
        bad = train_state_path(t->state_path, sizeof t->state_path, t->cfg->trained_model_uri, err) != 0;
    int64_t flag = found;
    dist_bcast_i64(t->d, &flag, 1);
    if (!bad && !t->fp) state_fingerprint(t);
    const double r0 = timer_now();
    if (!bad && flag) {
        train_state_reader r;
        bad = train_state_open(&r, t->state_path, t->fp, &t->resume, err) != 0;
        train_state_tensor ts[TRAIN_STATE_MAX_TENSORS];
        const int n = state_tensors(t, (int)t->resume.have_best, ts);
        if (!bad) bad = train_state_read(&r, ts, n, err) != 0;
        train_state_close(&r);
    }
    if (dist_phase_failed(t->d, bad, err)) return -1;
    if (!flag) return 0;
    const train_state_scalars *rs = &t->resume;
    t->resumed = 1;
    t->step = rs->step;
    t->opt.step = rs->optim_step;
    if (t->have_emb) t->emb.step = rs->emb_step;
    for (int k = 0; t->typed && k < t->src.tg.num_node_types; k++)
        if (t->have_temb[k]) t->temb[k].step = rs->emb_step;
    t->have_best = (int)rs->have_best, t->best_score = rs->best_score, t->bad_checks = rs->bad_checks;
    res->has_val = (int)rs->has_val, res->best_val_loss = rs->best_val_loss, res->best_val_acc = rs->best_val_acc;
    t->t_wait = rs->stage_seconds[0], t->t_sample = rs->stage_seconds[1], t->t_gather = rs->stage_seconds[2];
    t->t_forward = rs->stage_seconds[3], t->t_loss = rs->stage_seconds[4], t->t_backward = rs->stage_seconds[5];
    t->t_allreduce = rs->stage_seconds[6], t->t_optim = rs->stage_seconds[7];
    t->timed_steps = rs->timed_steps;
    if (is_root(t)) {
        log_info("resuming from the training state %s: step %lld (epoch %lld, batch %lld; read in %.2f s)",
                 t->state_path, (long long)rs->step, (long long)rs->epoch + 1, (long long)rs->next_batch,
                 timer_now() - r0);
        if (rs->compute_threads != t->threads)
            log_info("note: the interrupted run used %lld compute threads, this one %d; the result may differ in "
                     "the last bits from a run never interrupted",
                     (long long)rs->compute_threads, t->threads);
    }
    /* the last good checkpoint (best validation so far) was removed with the old outputs */
    bad = t->have_best && save_checkpoint(t, t->best_params, t->have_emb ? t->best_emb : NULL, err) != 0;
    return dist_phase_failed(t->d, bad, err) ? -1 : 0;
}

/* Rank 0: metrics.jsonl and the TensorBoard event file, new or (resuming) continued from where
 * the state was written. */
static int open_logs(trainer *t, const char *job, cgnn_err *err) {
    const char *dir = t->cfg->tensorboard_logs_uri;
    if (!dir[0]) return 0;
    if (!t->resumed) { /* a new event file; metrics.jsonl appended to, opening with this run's record */
        if (jsonl_open(&t->log, dir, "metrics.jsonl", err) != 0) return -1;
        if (jsonl_bytes(&t->log) > 0)
            log_info("%s holds earlier runs' records; this run's follow its \"run\" record", t->log.path);
        json_buf b = {0};
        json_buf_printf(&b, "{\"step\": %lld, \"run\": ", (long long)t->step);
        json_buf_string(&b, job);
        json_buf_printf(&b, ", \"mode\": \"%s\"}", t->cfg->should_skip_training ? "evaluate" : "train");
        jsonl_write_line(&t->log, b.p);
        json_buf_free(&b);
        if (jsonl_check(&t->log, err) != 0) return -1;
        return tb_open(&t->tb, dir, err);
    }
    const train_state_scalars *rs = &t->resume;
    int short_log = 0, short_tb = 0;
    if (jsonl_open_continue(&t->log, dir, "metrics.jsonl", rs->jsonl_bytes, &short_log, err) != 0) return -1;
    if (tb_open_continue(&t->tb, dir, rs->tb_file, rs->tb_bytes, rs->tb_records, &short_tb, err) != 0) return -1;
    if (short_log) log_info("note: %s is shorter than at the checkpoint; continuing it as it is", t->log.path);
    if (short_tb) log_info("note: the TensorBoard event file %s of the interrupted run is missing or short; "
                           "continuing in %s", rs->tb_file, t->tb.path);
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
    o->rpc_timeout_s = a->rpc_timeout_s;
    o->cache_policy = a->cache_policy == CACHE_POLICY_HOTNESS  ? FEAT_CACHE_HOTNESS
                      : a->cache_policy == CACHE_POLICY_DEGREE ? FEAT_CACHE_DEGREE
                      : a->cache_policy == CACHE_POLICY_HALO   ? FEAT_CACHE_HALO
                                                               : FEAT_CACHE_NONE;
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
    if (t->have_train) return t->train.cfg.sampler;
    sampler_config sc;
    memset(&sc, 0, sizeof sc);
    sc.num_layers = t->a->num_layers;
    for (int h = 0; h < t->a->num_layers; h++) sc.fanouts[h] = t->a->fanouts[h];
    sc.replace = t->a->replace;
    return sc;
}

/* shouldSkipTraining: the checkpoint's embedding table into t->emb, the rows the source holds
 * (graph_source_table_keys: on parts each row is the whole table's row of its original id).
 * Returns 0, or -1 with *err. */
static int load_embedding(trainer *t, cgnn_err *err) {
    const char *uri = t->cfg->trained_model_uri;
    const int64_t *keys = graph_source_table_keys(&t->src);
    if (!keys) return outputs_load_embedding(uri, t->emb.weight, t->emb.num_rows, t->emb.dim, err);
    const int64_t N = graph_source_num_nodes(&t->src), D = t->emb.dim;
    float *full = cgnn_malloc((size_t)(N * D) * sizeof(float) + 1);
    const int bad = outputs_load_embedding(uri, full, N, D, err) != 0;
    for (int64_t i = 0; !bad && i < t->emb.num_rows; i++)
        memcpy(t->emb.weight + i * D, full + keys[i] * D, (size_t)D * sizeof(float));
    free(full);
    return bad ? -1 : 0;
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
    t.metric_is_loss = strcmp(cfg->args.early_stop_criterion, "loss") == 0;
    t.last_val_step = -1;
    const char *f = getenv("CGNN_TEST_NAN_AT_STEP");
    t.fault_nan_step = f ? strtoll(f, NULL, 10) : -1;
    f = getenv("CGNN_TEST_EXIT_AT_STEP");
    t.fault_exit_step = f ? strtoll(f, NULL, 10) : -1;
    f = getenv("CGNN_TEST_FAULT_RANK");
    t.fault_rank = f ? atoi(f) : -1;
    f = getenv("CGNN_TEST_EXIT_IN_CHECKPOINT");
    t.fault_state_exit = f ? strtoll(f, NULL, 10) : 0;
    const int root = is_root(&t);
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
    source_options(cfg, t.fault_rank, &so);
    graph_source_init(&t.src, &so, t.d, opt ? opt->graph_store : NULL);
    if (graph_source_load_begin(&t.src, err) != 0) goto done;
    lp_loss_gemm_stats_register(&t.loss_gs); /* the losses' GEMMs, for the loss's GEMM rate */
    bad = trainer_setup(&t, res, err) != 0;
    const sampler_config cache_sampling = train_sampling(&t);
    if (graph_source_load_check(&t.src, bad, &cache_sampling, err) != 0) goto done;
    /* exact resume (train/train_state.h): a state left by an interrupted run of this job is
     * checked before any output is touched, and keeps its logs */
    int resume = 0;
    if (root && !bad && !cfg->should_skip_training) bad = state_prologue(&t, &resume, err) != 0;
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
    if (!cfg->should_skip_training && cfg->args.checkpoint_every_n_batches > 0 && state_resume(&t, resume, out, err) != 0)
        goto done;
    if (root) bad = open_logs(&t, opt && opt->job_name ? opt->job_name : "cgnn train", err) != 0;
    if (cfg->should_skip_training && !bad) bad = outputs_load_model(cfg->trained_model_uri, cfg->task, &t.m, err) != 0;
    if (cfg->should_skip_training && !bad && t.have_emb) bad = load_embedding(&t, err) != 0;
    for (int k = 0; cfg->should_skip_training && !bad && t.typed && k < t.src.tg.num_node_types; k++)
        if (t.have_temb[k])
            bad = outputs_load_table(cfg->trained_model_uri, t.temb_key[k], t.temb[k].weight, t.temb[k].num_rows,
                                     t.temb[k].dim, err) != 0;
    if (dist_phase_failed(t.d, bad, err)) goto done;
    progress_init(&t.prog, root && (!opt || opt->progress));
    t.prog.log_every = cfg->args.log_every_n_batch; /* GiGL's log_every_n_batch (0: every 10 s) */
    dist_bcast_f32(t.d, t.m.params, (size_t)t.m.num_params); /* replicas start identical */
    /* (the embedding table is initialised from the seed alone: identical on every rank) */

    if (cfg->should_skip_training) {
        if (root) log_info("shouldSkipTraining: loaded %s", cfg->trained_model_uri);
    } else {
        graph_source_traffic_reset(&t.src); /* on parts: count the training's remote traffic only */
        bad = train_loop(&t, out, err) != 0;
        if (dist_phase_failed(t.d, bad, err)) goto done;
        loader *built[2] = {t.have_train ? &t.train : NULL, t.have_val ? &t.val : NULL}; /* (their batches) */
        graph_source_log_traffic(&t.src, built, 2);
        if (t.have_best) {
            memcpy(t.m.params, t.best_params, (size_t)t.m.num_params * sizeof(float));
            if (t.have_emb)
                memcpy(t.emb.weight, t.best_emb, (size_t)(t.emb.num_rows * t.emb.dim) * sizeof(float));
            for (int k = 0; t.typed && k < t.src.tg.num_node_types; k++)
                if (t.have_temb[k])
                    memcpy(t.temb[k].weight, t.best_temb[k],
                           (size_t)(t.temb[k].num_rows * t.temb[k].dim) * sizeof(float));
            if (root)
                log_info("restored the best weights (validation %s %.4f)", cfg->args.early_stop_criterion,
                         t.best_score);
        }
        if (t.have_emb) graph_source_table_written(&t.src); /* on parts: every shard restored before rows are read */
        bad = save_checkpoint(&t, t.m.params, t.have_emb ? t.emb.weight : NULL, err) != 0;
        if (dist_phase_failed(t.d, bad, err)) goto done;
        if (t.d->size > 1 && replicas_differ(&t, err)) goto done;
    }
    if (!cfg->skip_test && t.have_test) {
        head_sums s;
        evaluate(&t, &t.test, cfg->args.num_test_batches, &s);
        out->has_test = 1;
        const char *names[HEAD_MAX_METRICS + 2];
        double mv[HEAD_MAX_METRICS + 2];
        int nm = head_metrics(&t.head, &s, names, mv);
        if (cfg->args.val_rank_k > 0) { /* the early-stopping criterion's full ranking on the test split too */
            static char rk_name[2][48];
            snprintf(rk_name[0], sizeof rk_name[0], "recall_at_%lld", (long long)cfg->args.val_rank_k);
            snprintf(rk_name[1], sizeof rk_name[1], "ndcg_at_%lld", (long long)cfg->args.val_rank_k);
            CGNN_CHECK(nm + 2 <= HEAD_MAX_METRICS);
            bad = rank_split(&t, DS_SPLIT_TEST, &mv[nm], &mv[nm + 1], err) != 0;
            if (dist_phase_failed(t.d, bad, err)) goto done;
            names[nm] = rk_name[0], names[nm + 1] = rk_name[1];
            nm += 2;
        }
        out->test_loss = mv[0];
        out->test_acc = mv[1]; /* the main metric: acc (NC) or mrr (LP) */
        out->num_test_metrics = nm;
        for (int i = 0; i < nm; i++) {
            snprintf(out->test_metric_names[i], sizeof out->test_metric_names[i], "%s", names[i]);
            out->test_metrics[i] = mv[i];
        }
        /* GiGL's order: the task metrics first, then the loss */
        const char *jn[HEAD_MAX_METRICS];
        double jv[HEAD_MAX_METRICS];
        for (int i = 1; i < nm; i++) jn[i - 1] = names[i], jv[i - 1] = mv[i];
        jn[nm - 1] = names[0], jv[nm - 1] = mv[0];
        bad = root && cfg->eval_metrics_uri[0] && outputs_write_eval_metrics(cfg->eval_metrics_uri, jn, jv, nm, err) != 0;
        char kbuf[HEAD_MAX_METRICS][48], tbuf[HEAD_MAX_METRICS][48];
        const char *keys[HEAD_MAX_METRICS + 1], *tags[HEAD_MAX_METRICS + 1];
        double lv[HEAD_MAX_METRICS + 1];
        keys[0] = "step", tags[0] = NULL, lv[0] = (double)t.step;
        for (int i = 0; i < nm; i++) {
            snprintf(kbuf[i], sizeof kbuf[i], "test_%s", names[i]);
            snprintf(tbuf[i], sizeof tbuf[i], "test/%s", names[i]);
            keys[1 + i] = kbuf[i], tags[1 + i] = tbuf[i], lv[1 + i] = mv[i];
        }
        log_record(&t, keys, tags, lv, nm + 1, 1);
        if (dist_phase_failed(t.d, bad, err)) goto done;
    }
    /* stop the sampler threads (they report trace spans), then write the trace */
    if (t.have_train) loader_free(&t.train);
    if (t.have_val) loader_free(&t.val);
    if (t.have_test) loader_free(&t.test);
    t.have_train = t.have_val = t.have_test = 0;
    if (graph_source_stop(&t.src, err) != 0) dist_fail_job(t.d, err); /* collective: nobody asks any more */
    bad = trace_close(&t.trace, err) != 0;
    if (!bad && root) bad = logs_check(&t, 1, err) != 0;
    if (dist_phase_failed(t.d, bad, err)) goto done;
    /* finished: the training state is no longer needed */
    if (root && t.state_path[0]) {
        if (t.states_written > 0)
            log_info("training state: %lld checkpoints of %.1f MB, %.1f ms each on average (%s)",
                     (long long)t.states_written, (double)t.state_bytes / 1e6, 1e3 * t.t_state / (double)t.states_written,
                     t.state_path);
        bad = outputs_remove(t.state_path, err) != 0;
    }
    if (dist_phase_failed(t.d, bad, err)) goto done;
    rc = 0;
done:
    trainer_free(&t);
    free(t.own_cfg);
    return rc;
}
