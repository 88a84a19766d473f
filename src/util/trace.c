/* trace.c — Chrome trace-event JSON with torch.profiler's schedule; see trace.h. */
#include "util/trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/outguard.h"
#include "train/outputs.h"
#include "util/cleanup.h"

int trace_open_capacity(trace_writer *t, const char *dir, int rank, int64_t wait, int64_t warmup,
                        int64_t active, int64_t capacity, cgnn_err *err) {
    memset(t, 0, sizeof *t);
    atomic_init(&t->step, 0);
    if (!dir || !*dir) return 0;
    CGNN_CHECK(capacity >= 1);
    if (wait < 0) return err_set(err, CGNN_ERR_INPUT, "profiler schedule: wait: %lld, must be >= 0", (long long)wait);
    if (warmup < 0)
        return err_set(err, CGNN_ERR_INPUT, "profiler schedule: warmup: %lld, must be >= 0", (long long)warmup);
    if (active < 1)
        return err_set(err, CGNN_ERR_INPUT, "profiler schedule: active: %lld, must be >= 1", (long long)active);
    if (wait > INT64_MAX - warmup || wait + warmup > INT64_MAX - active)
        return err_set(err, CGNN_ERR_INPUT, "profiler schedule: wait + warmup + active overflows");

    int len = snprintf(t->path, sizeof t->path, "%s/trace_rank%d.json", dir, rank);
    if (len < 0 || (size_t)len >= sizeof t->path - 32) { /* room for ".tmp.<pid>" */
        t->path[0] = '\0';
        return err_set(err, CGNN_ERR_RUNTIME, "%s: profiler trace directory path is too long", dir);
    }
    /* the previous run's trace is not removed here: the command's guard step does it (train: each
     * rank its own, once the outputs were checked against every input); trace_close replaces it */
    if (outputs_make_parent(dir, 1, err) != 0) return -1;
    t->events = (trace_event *)calloc((size_t)capacity, sizeof *t->events);
    if (!t->events)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot allocate %lld profiler trace events", t->path,
                       (long long)capacity);
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t->events);
        t->events = NULL;
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create the profiler trace lock", t->path);
    }
    t->capacity = capacity;
    t->rank = rank;
    t->wait = wait;
    t->warmup = warmup;
    t->active = active;
    t->repeat = 1;
    t->enabled = 1;
    return 0;
}

void trace_set_repeat(trace_writer *t, int64_t repeat) {
    CGNN_CHECK(t && repeat >= 0);
    t->repeat = repeat;
}

int trace_open(trace_writer *t, const char *dir, int rank, int64_t wait, int64_t warmup, int64_t active,
               cgnn_err *err) {
    return trace_open_capacity(t, dir, rank, wait, warmup, active, TRACE_DEFAULT_CAPACITY, err);
}

void trace_set_step(trace_writer *t, int64_t step) {
    if (t) atomic_store_explicit(&t->step, step, memory_order_relaxed);
}

int trace_active(const trace_writer *t) {
    if (!t || !t->enabled) return 0;
    int64_t s = atomic_load_explicit(&t->step, memory_order_relaxed);
    const int64_t cycle = t->wait + t->warmup + t->active; /* >= 1, no overflow (trace_open) */
    if (s < 0 || (t->repeat > 0 && s / cycle >= t->repeat)) return 0;
    return s % cycle >= t->wait + t->warmup;
}

/* The schedule as torch.profiler.schedule states it, step by step: the plain reference of
 * trace_active's arithmetic. */
int trace_active_ref(int64_t step, int64_t wait, int64_t warmup, int64_t active, int64_t repeat) {
    int64_t s = 0;
    for (int64_t cycle = 0; repeat == 0 || cycle < repeat; cycle++) {
        for (int64_t i = 0; i < wait; i++, s++)
            if (s == step) return 0;
        for (int64_t i = 0; i < warmup; i++, s++)
            if (s == step) return 0;
        for (int64_t i = 0; i < active; i++, s++)
            if (s == step) return 1;
        if (s > step) return 0;
    }
    return 0;
}

void trace_span(trace_writer *t, const char *name, int tid, double t_begin, double t_end, int64_t batch,
                int64_t size) {
    if (!trace_active(t)) return;
    CGNN_CHECK(name != NULL);
    pthread_mutex_lock(&t->mu);
    if (t->n < t->capacity) {
        trace_event *e = &t->events[t->n++];
        e->name = name;
        e->tid = tid;
        e->t_begin = t_begin;
        e->t_end = t_end >= t_begin ? t_end : t_begin;
        e->batch = batch;
        e->size = size;
    } else {
        t->dropped++;
    }
    pthread_mutex_unlock(&t->mu);
}

void trace_name_thread(trace_writer *t, int tid, const char *name) {
    if (!t || !t->enabled) return;
    pthread_mutex_lock(&t->mu);
    int i = 0;
    while (i < t->num_threads && t->thread_tid[i] != tid) i++;
    if (i == t->num_threads && t->num_threads < TRACE_MAX_THREADS) t->num_threads++;
    if (i < t->num_threads) {
        t->thread_tid[i] = tid;
        snprintf(t->thread_name[i], sizeof t->thread_name[i], "%s", name ? name : "");
    }
    pthread_mutex_unlock(&t->mu);
}

int64_t trace_dropped(trace_writer *t) {
    if (!t || !t->enabled) return 0;
    pthread_mutex_lock(&t->mu);
    int64_t d = t->dropped;
    pthread_mutex_unlock(&t->mu);
    return d;
}

/* Writes s as a JSON string (quotes included). */
static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* The whole trace as JSON to f. Returns 0, or -1 if a write failed. */
static int trace_write_json(const trace_writer *t, FILE *f) {
    fputs("{\"traceEvents\": [\n", f);
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"rank %d\"}}",
            t->rank, t->rank);
    for (int i = 0; i < t->num_threads; i++) {
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": ",
                t->rank, (int)t->thread_tid[i]);
        json_string(f, t->thread_name[i]);
        fputs("}}", f);
    }
    for (int64_t i = 0; i < t->n; i++) {
        const trace_event *e = &t->events[i];
        /* A non-finite time (a caller's bug) must not make the whole file invalid JSON. */
        double ts = e->t_begin * 1e6, dur = (e->t_end - e->t_begin) * 1e6;
        if (!isfinite(ts)) ts = 0;
        if (!isfinite(dur)) dur = 0;
        fputs(",\n{\"name\": ", f);
        json_string(f, e->name);
        /* Microseconds with ns resolution; %.3f of a monotonic clock fits a double exactly
         * enough (uptimes under ~3 years keep 15 significant digits). */
        fprintf(f,
                ", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, \"tid\": %d, "
                "\"args\": {\"batch\": %lld, \"size\": %lld}}",
                ts, dur, t->rank, (int)e->tid, (long long)e->batch,
                (long long)e->size);
    }
    fprintf(f,
            "\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"rank\": %d, \"wait\": %lld, \"warmup\": %lld, "
            "\"active\": %lld, \"repeat\": %lld, \"dropped_spans\": %lld}}\n",
            t->rank, (long long)t->wait, (long long)t->warmup, (long long)t->active, (long long)t->repeat,
            (long long)t->dropped);
    return ferror(f) ? -1 : 0;
}

void trace_discard(trace_writer *t) {
    if (!t || !t->enabled) return;
    pthread_mutex_destroy(&t->mu);
    free(t->events);
    t->events = NULL;
    t->n = t->capacity = 0;
    t->enabled = 0;
}

int trace_close(trace_writer *t, cgnn_err *err) {
    if (!t || !t->enabled) return 0;
    int rc = 0;
    char tmp[sizeof t->path + 32];
    if (outguard_permit(t->path, err) != 0) {
        pthread_mutex_destroy(&t->mu);
        free(t->events);
        t->events = NULL;
        t->n = t->capacity = 0;
        t->enabled = 0;
        return -1;
    }
    const int cleanup_h = cleanup_tmp_path(tmp, sizeof tmp, t->path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rc = err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", tmp, strerror(errno));
    } else {
        int ok = trace_write_json(t, f) == 0;
        ok = (fflush(f) == 0) && ok;
        ok = (fsync(fileno(f)) == 0) && ok;
        ok = (fclose(f) == 0) && ok;
        if (!ok || rename(tmp, t->path) != 0) {
            int e = errno;
            unlink(tmp);
            rc = err_set(err, CGNN_ERR_RUNTIME, "%s: cannot write the profiler trace: %s", t->path, strerror(e));
        }
    }
    cleanup_forget(cleanup_h);
    pthread_mutex_destroy(&t->mu);
    free(t->events);
    t->events = NULL;
    t->n = t->capacity = 0;
    t->enabled = 0;
    return rc;
}
