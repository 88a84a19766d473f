/* test_trace.c — the Chrome trace-event profiler trace: torch.profiler's schedule (which steps
 * record; cross-checked against torch.profiler.schedule itself when /usr/bin/python3 has torch),
 * spans from several threads at once, the JSON checked by Python's json module (counts, fields,
 * thread names, microsecond units), capacity overflow counted, atomic writes, errors. */
#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util/trace.h"
#include "util/timer.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes a test's temporary directory and everything in it. */
static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Reads the whole file at path as a NUL-terminated malloc'd string. NULL on failure. */
static char *slurp(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = (char *)malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, fp);
    b[got] = '\0';
    fclose(fp);
    return b;
}

/* Occurrences of needle in hay. */
static int count_str(const char *hay, const char *needle) {
    /* one pass (strstr in a loop is quadratic under ASan: its interceptor measures the rest of
     * the haystack on every call, 23 s for a 2 MB trace) */
    const size_t m = strlen(needle);
    int n = 0;
    for (const char *p = hay; *p;) {
        if (*p == needle[0] && strncmp(p, needle, m) == 0) n++, p += m;
        else p++;
    }
    return n;
}

/* Entries of dir other than "." and ".."; the names joined by ' ' into names[4096]. */
static int list_dir(const char *dir, char *names) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    names[0] = '\0';
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        size_t l = strlen(names);
        snprintf(names + l, 4096 - l, "%s%s", l ? " " : "", e->d_name);
    }
    closedir(d);
    return n;
}

static int have_python(void) { return access("/usr/bin/python3", X_OK) == 0; }

/* Exit status of a shell command (-1 if it did not run or died). */
static int run(const char *cmd) {
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

/* The Python check of a trace file against expectations (a JSON object, see below). */
static const char check_py[] =
    "import json, sys\n"
    "d = json.load(open(sys.argv[1]))\n"
    "e = json.loads(sys.argv[2])\n"
    "assert set(d) == {'traceEvents', 'displayTimeUnit', 'otherData'}, sorted(d)\n"
    "assert d['displayTimeUnit'] == 'ms'\n"
    "ev = d['traceEvents']\n"
    "X = [x for x in ev if x['ph'] == 'X']\n"
    "M = [x for x in ev if x['ph'] == 'M']\n"
    "assert len(X) + len(M) == len(ev), 'only X and M events'\n"
    "assert len(X) == e['n'], ('X events', len(X), e['n'])\n"
    "for x in X:\n"
    "    assert set(x) == {'name', 'ph', 'ts', 'dur', 'pid', 'tid', 'args'}, x\n"
    "    assert set(x['args']) == {'batch', 'size'}, x\n"
    "    assert x['pid'] == e['rank'], x\n"
    "    assert isinstance(x['ts'], (int, float)) and x['dur'] >= 0, x\n"
    "    assert x['name'] in e['names'], x\n"
    "    assert isinstance(x['args']['batch'], int) and isinstance(x['args']['size'], int), x\n"
    "if 'per_tid' in e:\n"
    "    got = {}\n"
    "    for x in X: got[str(x['tid'])] = got.get(str(x['tid']), 0) + 1\n"
    "    assert got == e['per_tid'], ('per tid', got, e['per_tid'])\n"
    "if 'batches' in e:\n"
    "    assert sorted(x['args']['batch'] for x in X) == e['batches'], [x['args']['batch'] for x in X]\n"
    "if 'span' in e:\n"
    "    s = e['span']\n"
    "    m = [x for x in X if x['args']['batch'] == s['batch']]\n"
    "    assert len(m) == 1, m\n"
    "    m = m[0]\n"
    "    assert abs(m['ts'] - s['ts']) < 1e-3 and abs(m['dur'] - s['dur']) < 1e-3, (m, s)\n"
    "    assert m['name'] == s['name'] and m['tid'] == s['tid'] and m['args']['size'] == s['size'], (m, s)\n"
    "if 'per_thread_order' in e:\n"
    "    for tid in e['per_thread_order']:\n"
    "        b = [x['args']['batch'] for x in X if x['tid'] == tid]\n"
    "        assert b == sorted(b), ('spans of one thread keep their order', tid)\n"
    "proc = [m for m in M if m['name'] == 'process_name']\n"
    "assert len(proc) == 1 and proc[0]['pid'] == e['rank'] and proc[0]['args']['name'] == 'rank %d' % e['rank'], proc\n"
    "threads = {str(m['tid']): m['args']['name'] for m in M if m['name'] == 'thread_name'}\n"
    "assert all(m['pid'] == e['rank'] for m in M), M\n"
    "assert threads == e['threads'], ('threads', threads, e['threads'])\n"
    "o = d['otherData']\n"
    "assert o['dropped_spans'] == e['dropped'] and o['rank'] == e['rank'], o\n"
    "print('trace OK:', sys.argv[1], len(X), 'spans')\n";

/* Runs check_py on path with the expectations JSON; returns its exit status. */
static int python_check(const char *dir, const char *path, const char *expect_json, int quiet) {
    char script[4096];
    snprintf(script, sizeof script, "%s/check_trace.py", dir);
    FILE *f = fopen(script, "w");
    if (!f) return -1;
    fputs(check_py, f);
    fclose(f);
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' '%s'%s", script, path, expect_json,
             quiet ? " >/dev/null 2>&1" : "");
    int rc = run(cmd);
    remove(script);
    return rc;
}

/* torch.profiler.schedule(wait, warmup, active, repeat=1) for steps [0, n): 1 = records. */
static int schedule_model(int64_t wait, int64_t warmup, int64_t active, int64_t step) {
    int64_t cycle = wait + warmup + active;
    if (step >= cycle) return 0; /* repeat = 1: one cycle only */
    return step % cycle >= wait + warmup;
}

/* ---- tests ------------------------------------------------------------------------------- */

TEST(schedule_semantics) {
    char *dir = test_tmpdir();
    trace_writer t;
    cgnn_err err = {0};
    ASSERT_EQ(trace_open(&t, dir, 0, 2, 1, 3, &err), 0);
    ASSERT_EQ(trace_active(&t), 0); /* step 0 until set */
    trace_name_thread(&t, 0, "main");
    char got[32] = "", want[32] = "";
    for (int s = 0; s < 10; s++) {
        trace_set_step(&t, s);
        got[s] = (char)('0' + trace_active(&t));
        want[s] = (char)('0' + schedule_model(2, 1, 3, s));
        trace_span(&t, "forward", 0, 100.0 + s, 100.0 + s + 0.25, s, 10 * s);
    }
    ASSERT(strcmp(want, "0001110000") == 0);
    if (strcmp(got, want) != 0) TEST_FAIL_("recording steps %s, expected %s", got, want);
    /* A span with exactly known times: ts/dur in microseconds. */
    trace_set_step(&t, 4);
    trace_span(&t, "backward", 0, 1.5, 1.5000025, 1004, 7);
    /* A reversed span gets duration 0. */
    trace_span(&t, "optimizer", 0, 2.0, 1.0, 1005, 0);
    /* Non-finite times (a caller's bug) still leave valid JSON. */
    trace_span(&t, "optimizer", 0, NAN, INFINITY, 1006, 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    ASSERT_EQ(trace_close(&t, &err), 0); /* closing twice is fine */
    ASSERT_EQ(trace_active(&t), 0);

    char path[4096];
    snprintf(path, sizeof path, "%s/trace_rank0.json", dir);
    char *json = slurp(path);
    ASSERT(json);
    int nx = count_str(json, "\"ph\": \"X\"");
    int has_ms = strstr(json, "\"displayTimeUnit\": \"ms\"") != NULL;
    free(json);
    ASSERT_EQ(nx, 6);
    ASSERT(has_ms);
    if (have_python()) {
        const char *expect =
            "{\"n\": 6, \"rank\": 0, \"names\": [\"forward\", \"backward\", \"optimizer\"], "
            "\"batches\": [3, 4, 5, 1004, 1005, 1006], \"threads\": {\"0\": \"main\"}, \"dropped\": 0, "
            "\"span\": {\"batch\": 1004, \"ts\": 1500000.0, \"dur\": 2.5, \"name\": \"backward\", \"tid\": 0, "
            "\"size\": 7}}";
        ASSERT_EQ(python_check(dir, path, expect, 0), 0);
    }

    /* Edge schedules: no wait/warm-up; a long wait. */
    ASSERT_EQ(trace_open(&t, dir, 0, 0, 0, 1, &err), 0);
    ASSERT_EQ(trace_active(&t), 1);
    trace_set_step(&t, 1);
    ASSERT_EQ(trace_active(&t), 0);
    trace_set_step(&t, -1);
    ASSERT_EQ(trace_active(&t), 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    ASSERT_EQ(trace_open(&t, dir, 0, 1000000, 5, 2, &err), 0);
    trace_set_step(&t, 1000004);
    ASSERT_EQ(trace_active(&t), 0);
    trace_set_step(&t, 1000005);
    ASSERT_EQ(trace_active(&t), 1);
    trace_set_step(&t, 1000006);
    ASSERT_EQ(trace_active(&t), 1);
    trace_set_step(&t, 1000007);
    ASSERT_EQ(trace_active(&t), 0);
    trace_set_step(&t, INT64_MAX);
    ASSERT_EQ(trace_active(&t), 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    rm_tree(dir);
    free(dir);
}

/* Our schedule against torch.profiler.schedule itself, for many (wait, warmup, active). */
TEST(schedule_matches_torch_profiler) {
    if (!have_python()) SKIP("/usr/bin/python3 not found");
    if (run("/usr/bin/python3 -c 'import torch.profiler' 2>/dev/null") != 0)
        SKIP("/usr/bin/python3 has no torch: schedule not cross-checked against torch.profiler");
    char *dir = test_tmpdir();
    char out[4096], cmd[8192];
    snprintf(out, sizeof out, "%s/torch_schedule.txt", dir);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c '\n"
             "import warnings\n"
             "warnings.simplefilter(\"ignore\")\n"
             "from torch.profiler import schedule, ProfilerAction as A\n"
             "for w in range(4):\n"
             "  for u in range(4):\n"
             "    for a in range(1, 5):\n"
             "      s = schedule(wait=w, warmup=u, active=a, repeat=1)\n"
             "      print(w, u, a, \"\".join(\"1\" if s(i) in (A.RECORD, A.RECORD_AND_SAVE) else \"0\" for i in range(16)))\n"
             "' > '%s'",
             out);
    ASSERT_EQ(run(cmd), 0);
    FILE *f = fopen(out, "r");
    ASSERT(f);
    int lines = 0;
    long long w, u, a;
    char bits[64];
    char bad[256] = "";
    while (!bad[0] && fscanf(f, "%lld %lld %lld %63s", &w, &u, &a, bits) == 4) {
        trace_writer t;
        cgnn_err err = {0};
        if (trace_open_capacity(&t, dir, 0, w, u, a, 1, &err) != 0) {
            snprintf(bad, sizeof bad, "open failed: %.200s", err.msg);
            break;
        }
        char mine[17];
        for (int s = 0; s < 16; s++) {
            trace_set_step(&t, s);
            mine[s] = (char)('0' + trace_active(&t));
        }
        mine[16] = '\0';
        trace_close(&t, &err);
        if (strcmp(mine, bits) != 0)
            snprintf(bad, sizeof bad, "wait=%lld warmup=%lld active=%lld: %s, torch %s", w, u, a, mine, bits);
        lines++;
    }
    fclose(f);
    rm_tree(dir);
    free(dir);
    if (bad[0]) TEST_FAIL_("%s", bad);
    ASSERT_EQ(lines, 64);
}

/* repeat (torch.profiler.schedule's; GiGL's TorchProfiler passes it): trace_active against the
 * plain step-by-step reference for every small schedule, and against torch itself. */
TEST(schedule_repeat) {
    char *dir = test_tmpdir();
    char bad[256] = "";
    int checked = 0;
    for (int64_t w = 0; w < 4 && !bad[0]; w++)
        for (int64_t u = 0; u < 3 && !bad[0]; u++)
            for (int64_t a = 1; a < 4 && !bad[0]; a++)
                for (int64_t r = 0; r < 4 && !bad[0]; r++) {
                    trace_writer t;
                    cgnn_err err = {0};
                    ASSERT_EQ(trace_open_capacity(&t, dir, 0, w, u, a, 1, &err), 0);
                    trace_set_repeat(&t, r);
                    for (int64_t s = -1; s < 40; s++) {
                        trace_set_step(&t, s);
                        if (trace_active(&t) != (s >= 0 && trace_active_ref(s, w, u, a, r)))
                            snprintf(bad, sizeof bad, "wait %lld warmup %lld active %lld repeat %lld step %lld: %d",
                                     (long long)w, (long long)u, (long long)a, (long long)r, (long long)s,
                                     trace_active(&t));
                        checked++;
                    }
                    trace_close(&t, &err);
                }
    if (bad[0]) TEST_FAIL_("%s", bad);
    ASSERT_EQ(checked, 4 * 3 * 3 * 4 * 41);
    /* the reference itself, by hand: wait 1, warmup 1, active 2, repeat 2 -> steps 2, 3, 6, 7 */
    char got[16];
    for (int s = 0; s < 12; s++) got[s] = (char)('0' + trace_active_ref(s, 1, 1, 2, 2));
    got[12] = '\0';
    ASSERT(!strcmp(got, "001100110000"));
    for (int s = 0; s < 12; s++) got[s] = (char)('0' + trace_active_ref(s, 1, 1, 2, 0));
    ASSERT(!strcmp(got, "001100110011"));
    /* the recorded windows go into the one file; otherData says repeat */
    trace_writer t;
    cgnn_err err = {0};
    ASSERT_EQ(trace_open(&t, dir, 0, 1, 0, 1, &err), 0);
    trace_set_repeat(&t, 2);
    for (int s = 0; s < 8; s++) {
        trace_set_step(&t, s);
        trace_span(&t, "forward", 0, 1.0 + s, 1.5 + s, s, 1);
    }
    ASSERT_EQ(trace_close(&t, &err), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/trace_rank0.json", dir);
    char *json = slurp(path);
    ASSERT(json);
    const int nx = count_str(json, "\"ph\": \"X\""), has_repeat = strstr(json, "\"repeat\": 2") != NULL;
    const int b1 = strstr(json, "\"batch\": 1,") != NULL, b3 = strstr(json, "\"batch\": 3,") != NULL;
    free(json);
    ASSERT_EQ(nx, 2); /* steps 1 and 3 */
    ASSERT(has_repeat && b1 && b3);
    if (have_python() && run("/usr/bin/python3 -c 'import torch.profiler' 2>/dev/null") == 0) {
        char out[4096], cmd[8192];
        snprintf(out, sizeof out, "%s/torch_repeat.txt", dir);
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c '\n"
                 "import warnings\n"
                 "warnings.simplefilter(\"ignore\")\n"
                 "from torch.profiler import schedule, ProfilerAction as A\n"
                 "for w in range(3):\n"
                 "  for u in range(3):\n"
                 "    for a in range(1, 4):\n"
                 "      for r in range(4):\n"
                 "        s = schedule(wait=w, warmup=u, active=a, repeat=r)\n"
                 "        print(w, u, a, r, \"\".join(\"1\" if s(i) in (A.RECORD, A.RECORD_AND_SAVE) else \"0\" for i in range(30)))\n"
                 "' > '%s'",
                 out);
        ASSERT_EQ(run(cmd), 0);
        FILE *f = fopen(out, "r");
        ASSERT(f);
        long long w, u, a, r;
        char bits[64];
        int lines = 0;
        while (!bad[0] && fscanf(f, "%lld %lld %lld %lld %63s", &w, &u, &a, &r, bits) == 5) {
            char mine[31];
            for (int s2 = 0; s2 < 30; s2++) mine[s2] = (char)('0' + trace_active_ref(s2, w, u, a, r));
            mine[30] = '\0';
            if (strcmp(mine, bits) != 0)
                snprintf(bad, sizeof bad, "wait=%lld warmup=%lld active=%lld repeat=%lld: %s, torch %s", w, u, a, r,
                         mine, bits);
            lines++;
        }
        fclose(f);
        if (bad[0]) TEST_FAIL_("%s", bad);
        ASSERT_EQ(lines, 108);
    } else {
        fprintf(stderr, "  (no torch: repeat not cross-checked against torch.profiler)\n");
    }
    rm_tree(dir);
    free(dir);
}

/* ---- threads ----------------------------------------------------------------------------- */

#define SPANS_PER_THREAD 5000
typedef struct worker_arg {
    trace_writer *t;
    int tid;
} worker_arg;

static void *worker(void *p) {
    worker_arg *a = (worker_arg *)p;
    static const char *const names[] = {"sample", "gather"};
    for (int i = 0; i < SPANS_PER_THREAD; i++) {
        double t0 = timer_now();
        trace_span(a->t, names[i & 1], a->tid, t0, timer_now(), i, a->tid * 1000 + i);
        if (i == 100) trace_name_thread(a->t, a->tid, a->tid == 3 ? "sampler \"3\"\n\\" : "sampler");
    }
    return NULL;
}

TEST(spans_from_threads) {
    char *dir = test_tmpdir();
    trace_writer t;
    cgnn_err err = {0};
    ASSERT_EQ(trace_open(&t, dir, 3, 0, 0, 1000, &err), 0);
    trace_set_step(&t, 0);
    trace_name_thread(&t, 0, "main");
    trace_name_thread(&t, 1, "sampler 1");
    pthread_t th[3];
    worker_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i].t = &t;
        args[i].tid = i + 1;
        ASSERT_EQ(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    /* The main thread records too, and moves through steps while the samplers run. */
    for (int i = 0; i < SPANS_PER_THREAD; i++) {
        double t0 = timer_now();
        trace_set_step(&t, i / 100);
        trace_span(&t, i & 1 ? "forward" : "backward", 0, t0, timer_now(), i, 0);
    }
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    trace_name_thread(&t, 1, "sampler 1"); /* rename to the same name: still one entry */
    ASSERT_EQ(trace_dropped(&t), 0);
    ASSERT_EQ(t.n, 4 * SPANS_PER_THREAD);
    ASSERT_EQ(t.num_threads, 4);
    ASSERT_EQ(trace_close(&t, &err), 0);

    char path[4096];
    snprintf(path, sizeof path, "%s/trace_rank3.json", dir);
    char *json = slurp(path);
    ASSERT(json);
    int nx = count_str(json, "\"ph\": \"X\""), nm = count_str(json, "\"ph\": \"M\"");
    free(json);
    ASSERT_EQ(nx, 4 * SPANS_PER_THREAD);
    ASSERT_EQ(nm, 1 + 4);
    if (have_python()) {
        char expect[1024];
        snprintf(expect, sizeof expect,
                 "{\"n\": %d, \"rank\": 3, \"names\": [\"sample\", \"gather\", \"forward\", \"backward\"], "
                 "\"per_tid\": {\"0\": %d, \"1\": %d, \"2\": %d, \"3\": %d}, "
                 "\"threads\": {\"0\": \"main\", \"1\": \"sampler 1\", \"2\": \"sampler\", "
                 "\"3\": \"sampler \\\"3\\\"\\n\\\\\"}, \"dropped\": 0, \"per_thread_order\": [0, 1, 2, 3]}",
                 4 * SPANS_PER_THREAD, SPANS_PER_THREAD, SPANS_PER_THREAD, SPANS_PER_THREAD, SPANS_PER_THREAD);
        ASSERT_EQ(python_check(dir, path, expect, 0), 0);
    }
    rm_tree(dir);
    free(dir);
}

TEST(capacity_overflow_is_counted) {
    char *dir = test_tmpdir();
    trace_writer t;
    cgnn_err err = {0};
    ASSERT_EQ(trace_open_capacity(&t, dir, 1, 0, 0, 5, 10, &err), 0);
    for (int i = 0; i < 25; i++) trace_span(&t, "allreduce", 0, 1.0 + i, 1.5 + i, i, 4);
    ASSERT_EQ(trace_dropped(&t), 15);
    /* Spans outside the window are neither stored nor dropped. */
    trace_set_step(&t, 5);
    trace_span(&t, "allreduce", 0, 1.0, 2.0, 99, 4);
    ASSERT_EQ(trace_dropped(&t), 15);
    ASSERT_EQ(trace_close(&t, &err), 0);

    char path[4096];
    snprintf(path, sizeof path, "%s/trace_rank1.json", dir);
    char *json = slurp(path);
    ASSERT(json);
    int nx = count_str(json, "\"ph\": \"X\"");
    int has_dropped = strstr(json, "\"dropped_spans\": 15") != NULL;
    free(json);
    ASSERT_EQ(nx, 10);
    ASSERT(has_dropped);
    if (have_python()) {
        const char *expect = "{\"n\": 10, \"rank\": 1, \"names\": [\"allreduce\"], "
                             "\"batches\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], \"threads\": {}, \"dropped\": 15}";
        ASSERT_EQ(python_check(dir, path, expect, 0), 0);
        /* The check is not a rubber stamp: a wrong dropped count fails it. */
        const char *wrong = "{\"n\": 10, \"rank\": 1, \"names\": [\"allreduce\"], \"threads\": {}, \"dropped\": 14}";
        ASSERT_NE(python_check(dir, path, wrong, 1), 0);
    }
    rm_tree(dir);
    free(dir);
}

TEST(atomic_write_and_stale_file) {
    char *dir = test_tmpdir();
    char sub[4096], path[4096], names[4096];
    snprintf(sub, sizeof sub, "%s/prof/deeper", dir);
    snprintf(path, sizeof path, "%.4000s/trace_rank2.json", sub);
    /* A previous run's trace at the same path is replaced at close, never half-written (mkdir -p
     * creates sub); the trainer removes it earlier, at its guard step, once the outputs passed. */
    trace_writer t;
    cgnn_err err = {0};
    ASSERT_EQ(trace_open(&t, sub, 2, 0, 0, 1, &err), 0);
    trace_span(&t, "evaluation", 0, 1.0, 2.0, 0, 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    ASSERT_EQ(access(path, F_OK), 0);
    ASSERT_EQ(trace_open(&t, sub, 2, 0, 0, 1, &err), 0);
    ASSERT_EQ(access(path, F_OK), 0); /* trace_open removes nothing (io/outguard.h: the command does) */
    trace_span(&t, "evaluation", 0, 1.0, 2.0, 0, 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    /* Only the final file: no temporary left behind. */
    ASSERT_EQ(list_dir(sub, names), 1);
    ASSERT(strcmp(names, "trace_rank2.json") == 0);

    /* Write failure (the directory vanished): an error naming the path, memory still freed. */
    ASSERT_EQ(trace_open(&t, sub, 5, 0, 0, 1, &err), 0);
    trace_span(&t, "evaluation", 0, 1.0, 2.0, 0, 0);
    rm_tree(sub);
    err_clear(&err);
    ASSERT_EQ(trace_close(&t, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
    ASSERT_STR_CONTAINS(err.msg, "trace_rank5.json");
    ASSERT_EQ(trace_close(&t, &err), 0);
    rm_tree(dir);
    free(dir);
}

TEST(disabled_and_bad_schedules) {
    trace_writer t;
    cgnn_err err = {0};
    ASSERT_EQ(trace_open(&t, "", 0, 0, 0, 1, &err), 0);
    ASSERT_EQ(trace_active(&t), 0);
    trace_set_step(&t, 0);
    trace_span(&t, "forward", 0, 1.0, 2.0, 0, 0);
    trace_name_thread(&t, 0, "main");
    ASSERT_EQ(trace_dropped(&t), 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    ASSERT_EQ(trace_open(&t, NULL, 0, 0, 0, 1, &err), 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    ASSERT_EQ(trace_close(NULL, &err), 0);
    ASSERT_EQ(trace_active(NULL), 0);

    char *dir = test_tmpdir();
    ASSERT_EQ(trace_open(&t, dir, 0, 0, 0, 0, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "active");
    ASSERT_EQ(trace_active(&t), 0);
    ASSERT_EQ(trace_close(&t, &err), 0);
    ASSERT_EQ(trace_open(&t, dir, 0, -1, 0, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "wait");
    ASSERT_EQ(trace_open(&t, dir, 0, 0, -2, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "warmup");
    ASSERT_EQ(trace_open(&t, dir, 0, INT64_MAX, 1, 1, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);

    /* A directory that cannot be created: CGNN_ERR_RUNTIME naming it. */
    ASSERT_EQ(test_write_file(dir, "file", "x", 1), 0);
    char bad[4096];
    snprintf(bad, sizeof bad, "%s/file/prof", dir);
    ASSERT_EQ(trace_open(&t, bad, 0, 0, 0, 1, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_RUNTIME);
    ASSERT_STR_CONTAINS(err.msg, dir);
    ASSERT_EQ(trace_close(&t, &err), 0);
    rm_tree(dir);
    free(dir);
}

int main(void) {
    RUN(schedule_semantics);
    RUN(schedule_matches_torch_profiler);
    RUN(schedule_repeat);
    RUN(spans_from_threads);
    RUN(capacity_overflow_is_counted);
    RUN(atomic_write_and_stale_file);
    RUN(disabled_and_bad_schedules);
    return test_summary();
}
