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

void progress_update(progress *p, double loss, double lr) {
    p->done++;
    if (!p->enabled) return;
    double now = timer_now();
    double el = now - p->epoch_start, rate = el > 0 ? (double)p->done / el : 0;
    if (p->tty) {
        if (now - p->last_draw < 0.1 && p->done != p->total) return;
        p->last_draw = now;
        char eta[32];
        fmt_time(eta, sizeof eta, rate > 0 && p->total ? (double)(p->total - p->done) / rate : 0);
        int width = 24, fill = p->total ? (int)(width * p->done / p->total) : 0;
        char bar[32];
        for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r\033[Kepoch %lld/%lld [%s] %lld/%lld  %.1f batches/s  loss %.4f  lr %.3g  ETA %s",
                (long long)p->epoch + 1, (long long)p->num_epochs, bar, (long long)p->done, (long long)p->total,
                rate, loss, lr, eta);
        fflush(stderr);
    } else if (now - p->last_draw >= 10.0) {
        p->last_draw = now;
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
    if (isnan(val_loss))
        fprintf(stderr, "cgnn: epoch %lld/%lld  train loss %.4f  %.1f batches/s  (%.2f s)\n", (long long)p->epoch + 1,
                (long long)p->num_epochs, train_loss, el > 0 ? (double)p->done / el : 0, el);
    else
        fprintf(stderr, "cgnn: epoch %lld/%lld  train loss %.4f  val loss %.4f  val %s %.4f  (%.2f s)\n",
                (long long)p->epoch + 1, (long long)p->num_epochs, train_loss, val_loss, metric_name, val_metric, el);
}

void progress_step(progress *p, const char *what, const char *unit) {
    p->done++;
    if (!p->enabled) return;
    double now = timer_now();
    double el = now - p->epoch_start, rate = el > 0 ? (double)p->done / el : 0;
    if (p->tty) {
        if (now - p->last_draw < 0.1 && p->done != p->total) return;
        p->last_draw = now;
        char eta[32];
        fmt_time(eta, sizeof eta, rate > 0 && p->total ? (double)(p->total - p->done) / rate : 0);
        int width = 24, fill = p->total ? (int)(width * p->done / p->total) : 0;
        char bar[32];
        for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r\033[K%s %lld/%lld [%s] %lld/%lld  %.1f %s/s  ETA %s", what, (long long)p->epoch + 1,
                (long long)p->num_epochs, bar, (long long)p->done, (long long)p->total, rate, unit, eta);
        fflush(stderr);
    } else if (now - p->last_draw >= 10.0) {
        p->last_draw = now;
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
