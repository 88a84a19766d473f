/* resume.c — the exact-resume training state of the job (train/trainer_impl.h, train/train_state.h),
 * gathered from the parts that own it:
 *
 *   the model family   the parameters and their best copy, the tables (weights, optimiser moments,
 *                      best copies) and the tables' step            model_family_table_tensors
 *   the optimiser      its moments and step                         optim.m / optim.v, opt.step
 *   the early stopper  best score, checks without improvement, the latest validation
 *   the loop           its position (epoch, next batch, the epoch's loss sums), the stage timers,
 *                      the logs' lengths
 *   the graph source   its fingerprint fields (server-client mode: the partition and the seeds)
 */
#include <string.h>
#include <unistd.h>

#include "train/trainer_impl.h"
#include "util/log.h"
#include "util/timer.h"

/* The state's tensors, views of the parts' buffers (the best weights only when there are any). */
static int state_tensors(trainer *t, int with_best, train_state_tensor *out) {
    model_family *f = &t->fam;
    const int64_t P = f->m.num_params;
    int n = 0;
    out[n++] = (train_state_tensor){"params", f->m.params, 1, P, 0};
    if (t->opt.m) out[n++] = (train_state_tensor){"optim.m", t->opt.m, 1, P, 0};
    if (t->opt.v) out[n++] = (train_state_tensor){"optim.v", t->opt.v, 1, P, 0};
    if (with_best) out[n++] = (train_state_tensor){"best_params", f->best_params, 1, P, 0};
    n += model_family_table_tensors(f, with_best, out + n);
    CGNN_CHECK(n <= TRAIN_STATE_MAX_TENSORS);
    return n;
}

/* This job's fingerprint (t->state.fp, allocated here): the family's, with the source's fields. */
static void state_fingerprint(trainer *t) {
    t->state.fp = cgnn_malloc(sizeof *t->state.fp);
    const char *keys[GRAPH_SOURCE_MAX_STATE_FIELDS], *vals[GRAPH_SOURCE_MAX_STATE_FIELDS];
    const int n = graph_source_state_fields(&t->src, keys, vals);
    model_family_fingerprint(&t->fam, t->state.fp, keys, vals, n);
}

int resume_write(trainer *t, const trainer_result *res, train_state_scalars *sc, cgnn_err *err) {
    const trainer_stopper *st = &t->stop;
    sc->step = t->step;
    sc->last_vloss = st->last_vloss, sc->last_vmetric = st->last_vmetric;
    sc->have_best = st->have_best, sc->best_score = st->best_score, sc->bad_checks = st->bad_checks;
    sc->has_val = res->has_val, sc->best_val_loss = res->best_val_loss, sc->best_val_acc = res->best_val_acc;
    sc->optim_step = t->opt.step;
    sc->emb_step = model_family_table_step(&t->fam);
    sc->compute_threads = t->threads;
    loop_stage_times(t, sc->stage_seconds);
    sc->timed_steps = t->timers.steps;
    int bad = 0;
    if (trainer_is_root(t)) {
        sc->jsonl_bytes = jsonl_bytes(&t->logs.log);
        sc->tb_bytes = tb_bytes(&t->logs.tb);
        sc->tb_records = t->logs.tb.records;
        snprintf(sc->tb_file, sizeof sc->tb_file, "%s", tb_file_name(&t->logs.tb));
        train_state_tensor ts[TRAIN_STATE_MAX_TENSORS];
        const int n = state_tensors(t, st->have_best, ts);
        const int64_t data = train_state_data_bytes(ts, n);
        t->state.written++;
        const double c0 = timer_now();
        bad = train_state_save(t->state.path, t->state.fp, sc, ts, n,
                               t->state.written == t->faults.state_exit ? data / 2 + 8 : -1, err) != 0;
        t->state.seconds += timer_now() - c0;
        t->state.bytes = data;
    }
    return dist_phase_failed(t->d, bad, err) ? -1 : 0;
}

int resume_prologue(trainer *t, int *found, cgnn_err *err) {
    *found = 0;
    if (t->a->checkpoint_every_n_batches == 0) return 0;
    if (train_state_path(t->state.path, sizeof t->state.path, t->cfg->trained_model_uri, err) != 0) return -1;
    state_fingerprint(t);
    if (access(t->state.path, F_OK) != 0) return 0;
    /* refuse a state of another job now, while the previous outputs are still there */
    train_state_reader r;
    train_state_scalars sc;
    const int rc = train_state_open(&r, t->state.path, t->state.fp, &sc, err);
    train_state_close(&r);
    *found = rc == 0;
    return rc;
}

int resume_load(trainer *t, int found, trainer_result *res, cgnn_err *err) {
    int bad = 0;
    if (!t->state.path[0]) /* the other ranks */
        bad = train_state_path(t->state.path, sizeof t->state.path, t->cfg->trained_model_uri, err) != 0;
    int64_t flag = found;
    dist_bcast_i64(t->d, &flag, 1);
    if (!bad && !t->state.fp) state_fingerprint(t);
    const double r0 = timer_now();
    train_state_scalars *rs = &t->state.at;
    if (!bad && flag) {
        train_state_reader r;
        bad = train_state_open(&r, t->state.path, t->state.fp, rs, err) != 0;
        train_state_tensor ts[TRAIN_STATE_MAX_TENSORS];
        const int n = state_tensors(t, (int)rs->have_best, ts);
        if (!bad) bad = train_state_read(&r, ts, n, err) != 0;
        train_state_close(&r);
    }
    if (dist_phase_failed(t->d, bad, err)) return -1;
    if (!flag) return 0;
    /* each part takes its scalars back */
    t->state.resumed = 1;
    t->step = rs->step;
    t->opt.step = rs->optim_step;
    model_family_set_table_step(&t->fam, rs->emb_step);
    trainer_stopper *st = &t->stop;
    st->have_best = (int)rs->have_best, st->best_score = rs->best_score, st->bad_checks = rs->bad_checks;
    res->has_val = (int)rs->has_val, res->best_val_loss = rs->best_val_loss, res->best_val_acc = rs->best_val_acc;
    memcpy(t->timers.stage, rs->stage_seconds, sizeof t->timers.stage);
    t->timers.steps = rs->timed_steps;
    if (trainer_is_root(t)) {
        log_info("resuming from the training state %s: step %lld (epoch %lld, batch %lld; read in %.2f s)",
                 t->state.path, (long long)rs->step, (long long)rs->epoch + 1, (long long)rs->next_batch,
                 timer_now() - r0);
        if (rs->compute_threads != t->threads)
            log_info("note: the interrupted run used %lld compute threads, this one %d; the result may differ in "
                     "the last bits from a run never interrupted",
                     (long long)rs->compute_threads, t->threads);
    }
    /* the last good checkpoint (best validation so far) was removed with the old outputs */
    bad = st->have_best && model_family_save(&t->fam, 1, err) != 0;
    return dist_phase_failed(t->d, bad, err) ? -1 : 0;
}
