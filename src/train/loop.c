/* loop.c — the training loop (train/trainer_impl.h): one file, top to bottom.
 *
 *   loop_train
 *     for each epoch (from the resumed position):
 *       for each step:  batch ← the training loader
 *                       train_step: forward → loss → status all-reduce → backward (each layer's
 *                                   all-reduce started when final) → dense optimiser → tables
 *                       log the step; validate every val_every_num_batches (early stopping,
 *                       best weights, the last good checkpoint); the training state every
 *                       checkpoint_every_n_batches (resume.c)
 *       validate once per epoch (val_every_num_batches 0); log the epoch's stage times
 *     validate at the end (val_at_end)
 *   loop_test      the test split's metrics, GiGL's eval-metrics JSON, the logs
 *
 * The loop knows neither where the graph lives (t->src) nor the model family (t->fam): it calls
 * their interfaces. Every rank runs the same collectives in the same order; every decision (stop,
 * fail) is the same on every rank.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "io/json.h"
#include "nn/lp_loss.h"
#include "train/lp_eval.h"
#include "train/trainer_impl.h"
#include "util/log.h"
#include "util/rng.h"
#include "util/timer.h"

/* ---- logs ---- */

/* One logged record: a line of metrics.jsonl (keys[0..n), the first n_int written as integers,
 * keys[0] is "step") and the same scalars in the TensorBoard event file under tb_tags (NULL
 * entries are not sent to TensorBoard). Rank 0 only (the writers are disabled elsewhere). */
static void log_record(trainer *t, const char *const *keys, const char *const *tb_tags, const double *vals, int n,
                       int n_int) {
    jsonl_write(&t->logs.log, keys, vals, n, n_int);
    const char *tags[TB_MAX_VALUES_PER_EVENT]; /* (every LP metric fits: 8 used to drop val/ap and more) */
    float v[TB_MAX_VALUES_PER_EVENT];
    int k = 0;
    for (int i = 0; i < n && k < TB_MAX_VALUES_PER_EVENT; i++)
        if (tb_tags[i] && isfinite(vals[i])) {
            tags[k] = tb_tags[i];
            v[k++] = (float)vals[i];
        }
    if (k) tb_add_scalars(&t->logs.tb, (int64_t)vals[0], tb_wall_time(), tags, v, k);
}

int loop_check_logs(trainer *t, int close, cgnn_err *err) {
    if (close) {
        const int bad = jsonl_close(&t->logs.log, err) != 0;
        tb_close(&t->logs.tb);
        if (bad) return -1;
    }
    if (jsonl_check(&t->logs.log, err) != 0) return -1;
    return tb_check(&t->logs.tb, err);
}

int loop_open_logs(trainer *t, const char *job, cgnn_err *err) {
    const char *dir = t->cfg->tensorboard_logs_uri;
    trainer_logs *l = &t->logs;
    if (!dir[0]) return 0;
    if (!t->state.resumed) { /* a new event file; metrics.jsonl appended to, opening with this run's record */
        if (jsonl_open(&l->log, dir, "metrics.jsonl", err) != 0) return -1;
        if (jsonl_bytes(&l->log) > 0)
            log_info("%s holds earlier runs' records; this run's follow its \"run\" record", l->log.path);
        json_buf b = {0};
        json_buf_printf(&b, "{\"step\": %lld, \"run\": ", (long long)t->step);
        json_buf_string(&b, job);
        json_buf_printf(&b, ", \"mode\": \"%s\"}", t->cfg->should_skip_training ? "evaluate" : "train");
        jsonl_write_line(&l->log, b.p);
        json_buf_free(&b);
        if (jsonl_check(&l->log, err) != 0) return -1;
        return tb_open(&l->tb, dir, err);
    }
    const train_state_scalars *rs = &t->state.at;
    int short_log = 0, short_tb = 0;
    if (jsonl_open_continue(&l->log, dir, "metrics.jsonl", rs->jsonl_bytes, &short_log, err) != 0) return -1;
    if (tb_open_continue(&l->tb, dir, rs->tb_file, rs->tb_bytes, rs->tb_records, &short_tb, err) != 0) return -1;
    if (short_log) log_info("note: %s is shorter than at the checkpoint; continuing it as it is", l->log.path);
    if (short_tb) log_info("note: the TensorBoard event file %s of the interrupted run is missing or short; "
                           "continuing in %s", rs->tb_file, l->tb.path);
    return 0;
}

void loop_stage_times(const trainer *t, double out[NUM_STAGES]) {
    memcpy(out, t->timers.stage, sizeof t->timers.stage);
}

/* GFLOP/s of the training losses' GEMMs since (seconds s0, FLOPs f0); NaN without any. */
static double loss_gemm_gflops(const trainer *t, double s0, double f0) {
    const double s = t->timers.loss_gemm_s - s0, f = t->timers.loss_gemm_flops - f0;
    return s > 0 && f > 0 ? f / s / 1e9 : NAN;
}

/* End of an epoch: the mean time per step of every stage since `before` (rank 0's), logged and
 * written to metrics.jsonl as {"step", "epoch", "steps", "<stage>_ms"..., "loss_gemm_gflops"}
 * (the rate of the loss's GEMMs over the epoch, since gemm_s0 / gemm_f0; null for a loss without
 * GEMMs). Sample and gather run on the sampler threads, overlapped with the others: they are not
 * part of the step's sum. */
static void log_epoch_stages(trainer *t, int64_t epoch, const double before[NUM_STAGES], int64_t steps_before,
                             double gemm_s0, double gemm_f0) {
    static const char *const STAGE_KEYS[NUM_STAGES] = {"wait_ms", "sample_ms", "gather_ms", "forward_ms", "loss_ms",
                                                       "backward_ms", "allreduce_ms", "optimizer_ms"};
    const int64_t n = t->timers.steps - steps_before;
    if (n <= 0 || !trainer_is_root(t)) return;
    double vals[NUM_STAGES + 4];
    const char *keys[NUM_STAGES + 4] = {"step", "epoch", "steps"};
    const char *tags[NUM_STAGES + 4] = {NULL, NULL, NULL};
    vals[0] = (double)t->step, vals[1] = (double)epoch, vals[2] = (double)n;
    for (int i = 0; i < NUM_STAGES; i++) {
        keys[3 + i] = STAGE_KEYS[i];
        tags[3 + i] = NULL;
        vals[3 + i] = 1e3 * (t->timers.stage[i] - before[i]) / (double)n;
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

/* ---- evaluation ---- */

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

/* Runs the model over up to max_batches batches of l (0 = all) without dropout; *s gets the
 * head's sums over every rank (identical on all ranks). */
static void evaluate(trainer *t, loader *l, int64_t max_batches, head_sums *s) {
    memset(s, 0, sizeof *s);
    head_scores_reset(&t->head);
    model_family_begin_eval(&t->fam);
    loader_start_epoch(l, 0, max_batches);
    minibatch *mb;
    double e0 = timer_now();
    int64_t n_items = 0;
    while ((mb = next_batch(t, l)) != NULL) {
        const float *out = model_family_forward(&t->fam, mb, 0, 0);
        head_batch(&t->head, mb, out, t->fam.dout, s);
        n_items += mb->num_items;
        loader_release(l, mb);
    }
    trace_span(&t->logs.trace, "evaluation", 0, e0, timer_now(), t->step, n_items);
    /* weighted sums over ranks (never an average of averages): identical on every rank */
    dist_allreduce_sum_f64(t->d, s->v, HEAD_NUM_SUMS);
    /* LP auc / ap: every rank's (score, label) rows gathered, computed alike on every rank */
    head_scores_finish(&t->head, t->d, s);
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
    infer_input in;
    model_family_infer_input(&t->fam, &in);
    infer_options opt = {INFER_DEFAULT_CHUNK, NULL, t->d, NULL, NULL};
    infer_result r;
    if (infer_run(&r, &t->fam.m, t->src.g, &in, &opt, err) != 0)
        return err_prefix(err, "full-ranking %s: ", ds_split_name(split));
    const double t1 = timer_now();
    int64_t *owned[3], n_rank, n_train, n_excl = 0, anchors = 0;
    const int64_t *rp = split_positive_pairs(&t->gtask->splits[split], &owned[0], &n_rank);
    const int64_t *tp = split_positive_pairs(&t->gtask->splits[DS_SPLIT_TRAIN], &owned[1], &n_train);
    const int64_t *xp = NULL;
    owned[2] = NULL;
    if (split == DS_SPLIT_TEST) xp = split_positive_pairs(&t->gtask->splits[DS_SPLIT_VALID], &owned[2], &n_excl);
    const trainer_args *a = t->a;
    const int K = (int)a->val_rank_k;
    int rc = a->lp_candidate_hi > 0
                 ? lp_full_ranking_range(r.embeddings, r.num_nodes, r.dim, a->lp_candidate_lo, a->lp_candidate_hi, rp,
                                         n_rank, tp, n_train, xp, n_excl, K, recall, ndcg, &anchors, err)
                 : lp_full_ranking(r.embeddings, r.num_nodes, r.dim, rp, n_rank, tp, n_train, xp, n_excl, K, recall,
                                   ndcg, &anchors, err);
    if (rc != 0) err_prefix(err, "%s (%s): full ranking: ", t->gtask->splits[split].seeds_path, ds_split_name(split));
    const int64_t n_cand = a->lp_candidate_hi > 0 ? a->lp_candidate_hi - a->lp_candidate_lo : r.num_nodes;
    for (int i = 0; i < 3; i++) free(owned[i]);
    infer_result_free(&r);
    const double t2 = timer_now();
    t->timers.rank_s += t2 - t0;
    t->timers.rank_runs++;
    if (rc == 0 && trainer_is_root(t))
        log_info("full ranking (%s, %lld anchors, %lld candidates): Recall@%d %.6f NDCG@%d %.6f in %.2f s "
                 "(embeddings %.2f s, ranking %.2f s)",
                 ds_split_name(split), (long long)anchors, (long long)n_cand, K, *recall, K, *ndcg, t2 - t0, t1 - t0,
                 t2 - t1);
    return rc;
}

/* The full-ranking metric names of early_stop_criterion recall_at_K / ndcg_at_K. */
static void ranking_names(const trainer *t, char names[2][48]) {
    snprintf(names[0], 48, "recall_at_%lld", (long long)t->a->val_rank_k);
    snprintf(names[1], 48, "ndcg_at_%lld", (long long)t->a->val_rank_k);
}

/* Validation and GiGL's early stopping: a strictly better score keeps the weights as the best
 * (fam's best copies) and rewrites the last good checkpoint. Returns 1 when training should
 * stop; *failed with *err when it failed (on every rank). */
static int validate(trainer *t, int64_t epoch, double train_loss, cgnn_err *err, int *failed, trainer_result *res) {
    trainer_stopper *st = &t->stop;
    head_sums s;
    evaluate(t, &t->val, t->a->num_val_batches, &s);
    st->last_val_step = t->step;
    double rk[2] = {NAN, NAN}; /* full ranking: recall, ndcg */
    char rk_name[2][48];
    const int ranking = t->a->val_rank_k > 0;
    if (ranking) {
        ranking_names(t, rk_name);
        if (rank_split(t, DS_SPLIT_VALID, &rk[0], &rk[1], err) != 0) {
            *failed = 1;
            return 1;
        }
    }
    const char *main_metric = head_main_metric(&t->head);
    double vloss = head_metric(&t->head, &s, "loss"), vmain = head_metric(&t->head, &s, main_metric);
    { /* the record: step, epoch, val_<metric>..., train_loss */
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
    double score = st->metric_is_loss ? vloss
                   : ranking          ? rk[t->a->val_rank_ndcg ? 1 : 0]
                                      : head_metric(&t->head, &s, t->a->early_stop_criterion);
    int improved = !st->have_best || (st->metric_is_loss ? score < st->best_score : score > st->best_score);
    res->has_val = 1;
    if (improved && isfinite(score)) {
        st->best_score = score;
        st->have_best = 1;
        st->bad_checks = 0;
        res->best_val_loss = vloss;
        res->best_val_acc = vmain;
        model_family_keep_best(&t->fam);
        /* the last good checkpoint (rank 0 writes; a failure there stops every rank) */
        int bad = model_family_save(&t->fam, 1, err) != 0;
        char report[4096];
        int code = 0;
        if (dist_check_errors(t->d, bad, err->code, err->msg, report, sizeof report, &code) > 0) {
            if (!bad) err_set(err, code ? code : CGNN_ERR_RUNTIME, "%s", trainer_is_root(t) ? report : "another rank failed");
            *failed = 1;
            return 1;
        }
    } else {
        st->bad_checks++;
    }
    log_debug("validation at step %lld: loss %.4f %s %.4f%s%s%s (%s)", (long long)t->step, vloss, main_metric, vmain,
              ranking ? " " : "", ranking ? t->a->early_stop_criterion : "", ranking ? " (full ranking)" : "",
              improved ? "best" : "no improvement");
    st->last_vloss = vloss;
    st->last_vmetric = vmain;
    return t->a->early_stop_patience > 0 && st->bad_checks >= t->a->early_stop_patience;
}

/* ---- one step ---- */

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
    model_family *f = &t->fam;
    trainer_timers *tm = &t->timers;
    const int fault_here = t->faults.rank < 0 || t->faults.rank == d->rank;
    if (fault_here && t->step == t->faults.exit_step) {
        fprintf(stderr, "cgnn: rank %d: CGNN_TEST_EXIT_AT_STEP: exiting abruptly at step %lld\n", d->rank,
                (long long)t->step);
        _Exit(3);
    }
    double c0 = timer_now(), cl = c0;
    model_zero_grad(&f->m);
    double loss = 0;
    if (mb) {
        const float *out = model_family_forward(f, mb, 1, rng_key(a->seed ^ 0xd1b54a32d192ed03ULL, (uint64_t)t->step));
        cl = timer_now(); /* the loss from here (its GEMMs counted in loss_gs) */
        const double gs0 = tm->loss_gs.seconds, gf0 = tm->loss_gs.flops;
        loss = head_batch(&t->head, mb, out, f->dout, NULL);
        loss += model_family_regularize(f, mb);
        tm->loss_gemm_s += tm->loss_gs.seconds - gs0, tm->loss_gemm_flops += tm->loss_gs.flops - gf0;
        if (fault_here && t->step == t->faults.nan_step) loss = NAN; /* test hook: CGNN_TEST_NAN_AT_STEP */
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
    model_family_backward(f, mb); /* (no batch: zero gradients into the same all-reduces) */
    double c3 = timer_now();
    if (d->size > 1) {
        dist_wait_all(d);
        const float inv = (float)(1.0 / status[0]); /* the mean over the ranks that had a batch */
        float *g = f->m.grads;
        const int64_t P = f->m.num_params;
#pragma omp parallel for simd schedule(static)
        for (int64_t k = 0; k < P; k++) g[k] *= inv;
    }
    if (a->clip_grad_norm > 0) optim_clip_grad_norm(f->m.grads, f->m.num_params, a->clip_grad_norm);
    double c4 = timer_now();
    double lr = sched_lr(&a->sched, a->optim.lr, t->step);
    optim_step(&t->opt, f->m.params, f->m.grads, lr);
    /* sparse: only the table rows this step touched (on any rank) move */
    if (model_family_step_tables(f, mb, t->step, status[0], err) != 0) return -1;
    double c5 = timer_now();
    tm->stage[STAGE_FORWARD] += cl - c0;
    tm->stage[STAGE_LOSS] += c1 - cl;
    tm->stage[STAGE_ALLREDUCE] += (c2 - c1) + (c4 - c3); /* status exchange + waiting for the gradient sums */
    tm->stage[STAGE_BACKWARD] += c3 - c2;
    tm->stage[STAGE_OPTIMIZER] += c5 - c4;
    if (trace_active(&t->logs.trace)) {
        trace_writer *tr = &t->logs.trace;
        const int64_t b = mb ? mb->batch_index : -1, n = mb ? mb->num_items : 0;
        trace_span(tr, "forward", 0, c0, cl, b, n);
        trace_span(tr, "loss", 0, cl, c1, b, n);
        trace_span(tr, "allreduce", 0, c1, c2, b, 3);
        trace_span(tr, "backward", 0, c2, c3, b, n);
        trace_span(tr, "allreduce", 0, c3, c4, b, f->m.num_params);
        trace_span(tr, "optimizer", 0, c4, c5, b, f->m.num_params);
    }
    tm->steps++;
    t->step++;
    *loss_out = status[2] / status[0];
    *lr_out = lr;
    return 0;
}

/* ---- the loop ---- */

/* The run's per-step summary (rank 0). */
static void log_run_summary(const trainer *t, const trainer_result *res) {
    const trainer_timers *tm = &t->timers;
    if (!trainer_is_root(t)) return;
    if (tm->steps > 0) {
        const double n = (double)tm->steps, ms = 1e3 / n;
        const double *s = tm->stage;
        const double total =
            s[STAGE_WAIT] + s[STAGE_FORWARD] + s[STAGE_LOSS] + s[STAGE_BACKWARD] + s[STAGE_ALLREDUCE] + s[STAGE_OPTIMIZER];
        log_info("per step (rank 0, %lld steps): waiting for batches %.1f ms, forward %.1f ms, loss %.1f ms, "
                 "backward %.1f ms, all-reduce wait %.1f ms (%.1f%%), optimizer %.1f ms",
                 (long long)tm->steps, s[STAGE_WAIT] * ms, s[STAGE_FORWARD] * ms, s[STAGE_LOSS] * ms,
                 s[STAGE_BACKWARD] * ms, s[STAGE_ALLREDUCE] * ms, 100.0 * s[STAGE_ALLREDUCE] / (total > 0 ? total : 1),
                 s[STAGE_OPTIMIZER] * ms);
        const double gf = loss_gemm_gflops(t, 0, 0);
        if (isfinite(gf)) /* as bench reports the model's GEMMs: the loss's share and its rate */
            log_info("loss GEMMs: %.2f GFLOP per step, %.1f ms per step (%.0f%% of the loss), %.2f GFLOP/s",
                     tm->loss_gemm_flops / n / 1e9, tm->loss_gemm_s * ms,
                     100.0 * tm->loss_gemm_s / (s[STAGE_LOSS] > 0 ? s[STAGE_LOSS] : 1), gf);
    }
    if (tm->rank_runs > 0)
        log_info("full-ranking validation: %lld runs, %.2f s each on average (rank 0: embeddings + ranking)",
                 (long long)tm->rank_runs, tm->rank_s / (double)tm->rank_runs);
    if (res->stopped_early)
        log_info("early stopping after %lld steps (no improvement in %lld validations)", (long long)t->step,
                 (long long)t->a->early_stop_patience);
}

int loop_train(trainer *t, trainer_result *res, cgnn_err *err) {
    const trainer_args *a = t->a;
    trainer_timers *tm = &t->timers;
    int stop = 0, failed = 0;
    const train_state_scalars *rs = t->state.resumed ? &t->state.at : NULL; /* continue where it stopped */
    double t_start = timer_now() - (rs ? rs->train_seconds : 0);
    for (int64_t epoch = rs ? rs->epoch : 0; epoch < a->num_epochs && !stop; epoch++) {
        const int resume_here = rs && epoch == rs->epoch;
        double stages_before[NUM_STAGES]; /* the timers when the epoch began */
        int64_t steps_before;
        if (resume_here) {
            memcpy(stages_before, rs->epoch_stage_seconds, sizeof stages_before);
            steps_before = rs->epoch_timed_steps;
        } else {
            loop_stage_times(t, stages_before);
            steps_before = tm->steps;
        }
        const double gemm_s0 = tm->loss_gemm_s, gemm_f0 = tm->loss_gemm_flops; /* (a resumed epoch: since the resume) */
        const int64_t first = resume_here ? rs->next_batch : 0;
        loader_start_epoch_at(&t->train, (int)epoch, first,
                              t->src.local_seeds && a->drop_uneven_inputs ? t->train_batches_min : 0);
        const int64_t steps = epoch_steps(t);
        progress_epoch(&t->logs.prog, epoch, a->num_max_train_batches > 0 && a->num_epochs > 1000000 ? 0 : a->num_epochs,
                       steps > first ? steps - first : 0);
        res->epochs = epoch + 1;
        double loss_sum = resume_here ? rs->loss_sum : 0, window_t = timer_now();
        int64_t loss_n = resume_here ? rs->loss_n : 0, window_seeds = 0;
        t->stop.last_vloss = resume_here ? rs->last_vloss : NAN;
        t->stop.last_vmetric = resume_here ? rs->last_vmetric : NAN;
        for (int64_t s = first; s < steps && !stop; s++) {
            trace_set_step(&t->logs.trace, t->step);
            double w0 = timer_now();
            minibatch *mb = next_batch(t, &t->train); /* NULL once this rank's slice is exhausted */
            double w1 = timer_now();
            tm->stage[STAGE_WAIT] += w1 - w0;
            if (mb) {
                tm->stage[STAGE_SAMPLE] += mb->sample_seconds;
                tm->stage[STAGE_GATHER] += mb->gather_seconds;
                trace_span(&t->logs.trace, "wait", 0, w0, w1, mb->batch_index, mb->num_items);
            }
            double loss = 0, lr = 0;
            int rc = train_step(t, mb, epoch, &loss, &lr, err);
            if (mb) {
                window_seeds += mb->num_items;
                loader_release(&t->train, mb);
            }
            if (rc != 0) {
                progress_clear(&t->logs.prog);
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
            progress_update(&t->logs.prog, loss, lr);
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
                if (resume_write(t, res, &sc, err) != 0) {
                    progress_clear(&t->logs.prog);
                    return -1;
                }
            }
        }
        if (stop && t->stop.bad_checks >= a->early_stop_patience && a->early_stop_patience > 0) res->stopped_early = 1;
        if (a->val_every_num_batches == 0 && t->have_val && !stop) {
            stop = validate(t, epoch, loss_n ? loss_sum / (double)loss_n : NAN, err, &failed, res);
            if (failed) return -1;
            if (stop) res->stopped_early = 1;
        }
        progress_end_epoch(&t->logs.prog, loss_n ? loss_sum / (double)loss_n : NAN, t->stop.last_vloss,
                           t->stop.last_vmetric, head_main_metric(&t->head));
        log_epoch_stages(t, epoch, stages_before, steps_before, gemm_s0, gemm_f0);
        if (dist_phase_failed(t->d, trainer_is_root(t) && loop_check_logs(t, 0, err) != 0, err)) return -1;
    }
    /* val_at_end: the steps after the latest validation are validated too (best weights, early
     * stopping's bookkeeping); not after an early stop (it stopped at a validation) */
    if (a->val_at_end && t->have_val && !res->stopped_early && t->step > 0 && t->stop.last_val_step != t->step) {
        if (trainer_is_root(t)) log_info("validation at the end of training (step %lld)", (long long)t->step);
        validate(t, res->epochs > 0 ? res->epochs - 1 : 0, NAN, err, &failed, res);
        if (failed) return -1;
    }
    res->steps = t->step;
    res->train_seconds = timer_now() - t_start;
    log_run_summary(t, res);
    return 0;
}

int loop_test(trainer *t, trainer_result *out, cgnn_err *err) {
    const task_config *cfg = t->cfg;
    head_sums s;
    evaluate(t, &t->test, cfg->args.num_test_batches, &s);
    out->has_test = 1;
    const char *names[HEAD_MAX_METRICS + 2];
    double mv[HEAD_MAX_METRICS + 2];
    int nm = head_metrics(&t->head, &s, names, mv);
    if (cfg->args.val_rank_k > 0) { /* the early-stopping criterion's full ranking on the test split too */
        static char rk_name[2][48];
        ranking_names(t, rk_name);
        CGNN_CHECK(nm + 2 <= HEAD_MAX_METRICS);
        const int bad = rank_split(t, DS_SPLIT_TEST, &mv[nm], &mv[nm + 1], err) != 0;
        if (dist_phase_failed(t->d, bad, err)) return -1;
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
    const int bad = trainer_is_root(t) && cfg->eval_metrics_uri[0] &&
                    outputs_write_eval_metrics(cfg->eval_metrics_uri, jn, jv, nm, err) != 0;
    char kbuf[HEAD_MAX_METRICS][48], tbuf[HEAD_MAX_METRICS][48];
    const char *keys[HEAD_MAX_METRICS + 1], *tags[HEAD_MAX_METRICS + 1];
    double lv[HEAD_MAX_METRICS + 1];
    keys[0] = "step", tags[0] = NULL, lv[0] = (double)t->step;
    for (int i = 0; i < nm; i++) {
        snprintf(kbuf[i], sizeof kbuf[i], "test_%s", names[i]);
        snprintf(tbuf[i], sizeof tbuf[i], "test/%s", names[i]);
        keys[1 + i] = kbuf[i], tags[1 + i] = tbuf[i], lv[1 + i] = mv[i];
    }
    log_record(t, keys, tags, lv, nm + 1, 1);
    return dist_phase_failed(t->d, bad, err) ? -1 : 0;
}
