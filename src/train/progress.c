/* progress.c — see progress.h. */
#include "train/progress.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "util/timer.h"

void progress_init(progress *p, int enabled) {
    p->tty = isatty(STDERR_FILENO);
    p->enabled = enabled;
    p->start = p->last_draw = p->epoch_start = timer_now();
    p->total = p->done = p->epoch = p->num_epochs = 0;
    p->all_done = p->log_every = 0;
}

void progress_epoch(progress *p, int64_t epoch, int64_t num_epochs, int64_t total_batches) {
    p->epoch = epoch;
    p->num_epochs = num_epochs;
    p->total = total_batches;
    p->done = 0;
    p->epoch_start = timer_now();
}

static void fmt_time(char *buf, size_t cap, double s) {
    if (!isfinite(s) || s < 0) s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    else snprintf(buf, cap, "%02ld:%02ld", t / 60, t % 60);
}

/* Counts one unit of work and decides whether to draw: returns 1 (tty: bar + ETA filled in,
 * at most every 0.1 s and always at the end) or 2 (no tty: a plain line, every 10 s, or every
 * log_every units of all phases when that is set), else 0.
 * *rate gets units per second since the phase started. */
static int progress_tick(progress *p, double *rate, char bar[32], char eta[32]) {
    p->done++;
    p->all_done++;
    if (!p->enabled) return 0;
    double now = timer_now();
    double el = now - p->epoch_start;
    *rate = el > 0 ? (double)p->done / el : 0;
    if (p->tty) {
        if (now - p->last_draw < 0.1 && p->done != p->total) return 0;
        p->last_draw = now;
        fmt_time(eta, 32, *rate > 0 && p->total ? (double)(p->total - p->done) / *rate : 0);
        int width = 24, fill = p->total ? (int)(width * p->done / p->total) : 0;
        for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
        bar[width] = '\0';
        return 1;
    }
    if (p->log_every > 0 ? p->all_done % p->log_every != 0 : now - p->last_draw < 10.0) return 0;
    p->last_draw = now;
    return 2;
}

/* "epoch E/N", or "epoch E" when the run has no epoch count (num_max_train_batches without
 * num_epochs: it ends at a batch count) */
static const char *epoch_label(const progress *p, char *buf, size_t n) {
    if (p->num_epochs > 0) snprintf(buf, n, "epoch %lld/%lld", (long long)p->epoch + 1, (long long)p->num_epochs);
    else snprintf(buf, n, "epoch %lld", (long long)p->epoch + 1);
    return buf;
}

void progress_update(progress *p, double loss, double lr) {
    double rate;
    char bar[32], eta[32];
    int how = progress_tick(p, &rate, bar, eta);
    if (how == 1) {
        char ep[48];
        fprintf(stderr, "\r\033[K%s [%s] %lld/%lld  %.1f batches/s  loss %.4f  lr %.3g  ETA %s",
                epoch_label(p, ep, sizeof ep), bar, (long long)p->done, (long long)p->total, rate, loss, lr, eta);
        fflush(stderr);
    } else if (how == 2) {
        fprintf(stderr, "cgnn: epoch %lld batch %lld/%lld  %.1f batches/s  loss %.4f  lr %.3g\n",
                (long long)p->epoch + 1, (long long)p->done, (long long)p->total, rate, loss, lr);
    }
}

void progress_clear(progress *p) {
    if (p->enabled && p->tty) fprintf(stderr, "\r\033[K");
}

void progress_end_epoch(progress *p, double train_loss, double val_loss, double val_metric, const char *metric_name) {
    if (!p->enabled) return;
    progress_clear(p);
    double el = timer_now() - p->epoch_start;
    char ep[48];
    epoch_label(p, ep, sizeof ep);
    if (isnan(val_loss))
        fprintf(stderr, "cgnn: %s  train loss %.4f  %.1f batches/s  (%.2f s)\n", ep, train_loss,
                el > 0 ? (double)p->done / el : 0, el);
    else
        fprintf(stderr, "cgnn: %s  train loss %.4f  val loss %.4f  val %s %.4f  (%.2f s)\n", ep, train_loss, val_loss,
                metric_name, val_metric, el);
}

void progress_step(progress *p, const char *what, const char *unit) {
    double rate;
    char bar[32], eta[32];
    int how = progress_tick(p, &rate, bar, eta);
    if (how == 1) {
        fprintf(stderr, "\r\033[K%s %lld/%lld [%s] %lld/%lld  %.1f %s/s  ETA %s", what, (long long)p->epoch + 1,
                (long long)p->num_epochs, bar, (long long)p->done, (long long)p->total, rate, unit, eta);
        fflush(stderr);
    } else if (how == 2) {
        fprintf(stderr, "cgnn: %s %lld/%lld  %lld/%lld %s  %.1f %s/s\n", what, (long long)p->epoch + 1,
                (long long)p->num_epochs, (long long)p->done, (long long)p->total, unit, rate, unit);
    }
}

void progress_end_phase(progress *p, const char *what, const char *unit) {
    if (!p->enabled) return;
    progress_clear(p);
    double el = timer_now() - p->epoch_start;
    fprintf(stderr, "cgnn: %s %lld/%lld  %lld %s  %.1f %s/s  (%.2f s)\n", what, (long long)p->epoch + 1,
            (long long)p->num_epochs, (long long)p->done, unit, el > 0 ? (double)p->done / el : 0, unit, el);
}
