/* progress.h — training progress on stderr: a one-line bar (batches/s, loss, ETA) redrawn at
 * most 10 times a second on a terminal; plain log lines (at most every 10 s and at the end of
 * each epoch, or every log_every batches when that is set) otherwise. */
#ifndef CGNN_PROGRESS_H
#define CGNN_PROGRESS_H

#include <stdint.h>

typedef struct progress {
    int tty;
    int enabled;
    double start, last_draw, epoch_start;
    int64_t total;        /* batches this epoch (0 = unknown) */
    int64_t done;
    int64_t epoch, num_epochs;
    int64_t all_done;     /* units of every phase so far */
    int64_t log_every;    /* no terminal: a line every this many units of all phases (GiGL's
                             log_every_n_batch counts batches over epochs); 0 = every 10 s */
} progress;

void progress_init(progress *p, int enabled);
void progress_epoch(progress *p, int64_t epoch, int64_t num_epochs, int64_t total_batches);
/* After each batch. */
void progress_update(progress *p, double loss, double lr);
/* Ends the epoch line (terminal) or prints the epoch summary. */
void progress_end_epoch(progress *p, double train_loss, double val_loss, double val_metric, const char *metric_name);
/* Clears the bar before a log line on a terminal. */
void progress_clear(progress *p);

/* Progress of work that is not training (e.g. `cgnn embed`: a phase per layer, a step per
 * chunk): progress_epoch(p, phase, num_phases, total_steps) starts a phase; progress_step
 * after each step draws "<what> k/K [bar] done/total  rate <unit>/s  ETA" (terminal) or a line
 * at most every 10 s; progress_end_phase prints the phase summary. */
void progress_step(progress *p, const char *what, const char *unit);
void progress_end_phase(progress *p, const char *what, const char *unit);

#endif
