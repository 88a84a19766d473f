/* trace.h — a profiler trace in Chrome's trace-event JSON (opens in Perfetto / chrome://tracing).
 *
 * What is recorded follows torch.profiler.schedule(wait, warmup, active, repeat), in cycles of
 * C = wait + warmup + active steps (repeat 1 unless trace_set_repeat says otherwise):
 *
 *   steps [kC, kC + wait)                                  skipped
 *   steps [kC + wait, kC + wait + warmup)                  warm-up, not recorded
 *   steps [kC + wait + warmup, (k + 1)C)                   recorded
 *   for cycles k = 0 .. repeat - 1 (every cycle when repeat is 0); later steps: nothing
 *
 * Every recorded window goes into the one trace file (torch.profiler hands each window to its
 * on_trace_ready handler; GiGL's writes one TensorBoard trace per window).
 *
 * "Step" is whatever the main thread last passed to trace_set_step; like torch.profiler, the
 * window is one of time: a span from any thread (a sampler working ahead on a later batch,
 * say) is recorded if it is reported while the current step is in the active window.
 *
 * Spans go into an event array sized once at open (calloc: only the pages actually filled are
 * ever touched); trace_span takes a mutex and copies 48 bytes, never allocates, and counts
 * spans beyond the capacity as dropped. trace_close writes <dir>/trace_rank<rank>.json
 * atomically (temporary file + rename):
 *
 *   {"traceEvents": [
 *     {"name": "process_name", "ph": "M", "pid": R, "tid": 0, "args": {"name": "rank R"}},
 *     {"name": "thread_name", "ph": "M", "pid": R, "tid": T, "args": {"name": "main"}}, ...
 *     {"name": "forward", "ph": "X", "ts": us, "dur": us, "pid": R, "tid": T,
 *      "args": {"batch": b, "size": n}}, ...],
 *    "displayTimeUnit": "ms",
 *    "otherData": {"rank": R, "wait": W, "warmup": U, "active": A, "repeat": P, "dropped_spans": D}}
 *
 * ts is the span's begin on the monotonic clock of timer_now(), in microseconds: ranks on one
 * machine share that clock, so their traces line up when loaded together.
 */
#ifndef CGNN_TRACE_H
#define CGNN_TRACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "util/err.h"

/* Spans a trace holds unless opened with trace_open_capacity (48 MiB of address space). */
#define TRACE_DEFAULT_CAPACITY ((int64_t)1 << 20)
/* Threads that can be named, and the longest thread name kept (bytes). */
#define TRACE_MAX_THREADS 64
#define TRACE_MAX_THREAD_NAME 48

typedef struct trace_event {
    const char *name; /* static string: "sample", "gather", "forward", ... */
    int32_t tid;
    double t_begin, t_end; /* seconds, timer_now() */
    int64_t batch, size;
} trace_event;

typedef struct trace_writer {
    int enabled;            /* 0: disabled (dir ""), or closed; every call is a no-op */
    int rank;
    int64_t wait, warmup, active;
    int64_t repeat;         /* cycles recorded; 0 = every cycle until the end */
    _Atomic int64_t step;   /* set by the main thread, read by every thread */
    char path[4096];        /* <dir>/trace_rank<rank>.json */
    pthread_mutex_t mu;     /* guards everything below */
    trace_event *events;    /* capacity entries, n used */
    int64_t capacity, n, dropped;
    int num_threads;
    int32_t thread_tid[TRACE_MAX_THREADS];
    char thread_name[TRACE_MAX_THREADS][TRACE_MAX_THREAD_NAME];
} trace_writer;

/* Opens a trace for rank with the schedule (wait, warmup, active): creates dir (mkdir -p),
 * removes a previous run's <dir>/trace_rank<rank>.json, and allocates the event array
 * (TRACE_DEFAULT_CAPACITY spans). The step starts at 0. dir NULL or "" gives a disabled trace.
 * Returns 0, or -1 with *err: CGNN_ERR_INPUT for a bad schedule (wait < 0, warmup < 0,
 * active < 1), CGNN_ERR_RUNTIME naming the path for I/O or memory; *t is then disabled.
 * The caller owns *t (trace_close). */
int trace_open(trace_writer *t, const char *dir, int rank, int64_t wait, int64_t warmup, int64_t active,
               cgnn_err *err);
/* trace_open with room for `capacity` (>= 1) spans. */
int trace_open_capacity(trace_writer *t, const char *dir, int rank, int64_t wait, int64_t warmup,
                        int64_t active, int64_t capacity, cgnn_err *err);

/* Records `repeat` (>= 0) cycles of the schedule instead of one; 0 = every cycle until the end
 * (torch.profiler.schedule's repeat). Call after trace_open, before the first step. */
void trace_set_repeat(trace_writer *t, int64_t repeat);

/* 1 if step is recorded under schedule (wait, warmup, active, repeat): the plain reference of the
 * schedule, walking the cycles step by step (tests hold trace_active to it). */
int trace_active_ref(int64_t step, int64_t wait, int64_t warmup, int64_t active, int64_t repeat);

/* Sets the current step (the main thread, before each step's work). */
void trace_set_step(trace_writer *t, int64_t step);

/* 1 if spans reported now are recorded (the current step is in the active window); 0 for a
 * disabled trace. Lets callers skip taking timestamps outside the window. */
int trace_active(const trace_writer *t);

/* Records a span [t_begin, t_end] (seconds, timer_now()) on thread lane tid if trace_active;
 * name must outlive the trace (a string literal). Thread-safe. A span with t_end < t_begin gets
 * duration 0. Beyond the capacity, spans are counted in `dropped` and not stored. */
void trace_span(trace_writer *t, const char *name, int tid, double t_begin, double t_end, int64_t batch,
                int64_t size);

/* Names thread lane tid ("main", "sampler 1", ...) in the trace; a second call for the same
 * tid renames it. Names past TRACE_MAX_THREAD_NAME - 1 bytes are cut; lanes beyond
 * TRACE_MAX_THREADS stay unnamed. Thread-safe. */
void trace_name_thread(trace_writer *t, int tid, const char *name);

/* Spans not stored because the array was full. Thread-safe. */
int64_t trace_dropped(trace_writer *t);

/* Writes <dir>/trace_rank<rank>.json atomically and frees the trace (also on error).
 * Returns 0 (also for a disabled or already closed trace), or -1 with *err naming the path.
 * No other thread may use *t during or after the call. */
int trace_close(trace_writer *t, cgnn_err *err);
/* Frees the trace without writing it (a job that failed before its outputs were checked).
 * NULL-safe; no other thread may use *t during or after the call. */
void trace_discard(trace_writer *t);

#endif
