/* test_optim.c — optimisers, gradient clipping and lr schedulers against PyTorch 1.13
 * reference trajectories (tests/fixtures/optim, written by scripts/fixtures/make_optim_fixtures.py;
 * the configurations below mirror that script), plus bitwise determinism across runs and thread
 * counts, name parsing and config validation. */
#include <omp.h>
#include <stdint.h>

#include "io/npy.h"
#include "optim/optim.h"
#include "test.h"
#define FIX_SUBDIR "optim"
#include "test_fixture.h"

/* Parameters against torch: the rule of test_fixture.h with FIX_TOL_EXACT (elementwise updates:
 * torch's AVX kernels fuse multiply-adds, ours do not, about one ulp per op); the group is the
 * whole trajectory (or every clipped output). */
#define LR_TOL 1e-9

/* Opens tests/fixtures/optim/<name>.npy; returns 0 or -1 after printing why. */
static int open_fixture(npy_array *a, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/optim/%s.npy", test_source_dir(), name);
    cgnn_err err = {0};
    if (npy_open(a, path, 1, &err) != 0) {
        fprintf(stderr, "cannot open fixture: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Index of the first element of got (n) outside the tolerance of want (group scale `scale`), or -1. */
static int64_t first_mismatch(const float *got, const float *want, int64_t n, double scale) {
    const fix_tol tol = FIX_TOL_EXACT;
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (!(fabs(g - w) <= tol.atol_frac * scale + tol.rtol * fabs(w))) return i;
    }
    return -1;
}

typedef struct optim_case {
    const char *name; /* traj_<name>.npy */
    optim_kind kind;
    double lr, weight_decay, momentum, dampening;
    int nesterov;
} optim_case;

static const optim_case OPTIM_CASES[] = {
    {"sgd", OPTIM_SGD, 0.1, 0, 0, 0, 0},
    {"sgd_momentum_wd", OPTIM_SGD, 0.1, 5e-4, 0.9, 0, 0},
    {"sgd_nesterov", OPTIM_SGD, 0.1, 0, 0.9, 0, 1},
    {"sgd_dampening", OPTIM_SGD, 0.05, 0, 0.8, 0.3, 0},
    {"adam", OPTIM_ADAM, 0.01, 0, 0, 0, 0},
    {"adam_wd", OPTIM_ADAM, 0.01, 5e-4, 0, 0, 0},
    {"adamw", OPTIM_ADAMW, 0.01, 0.01, 0, 0, 0},
};

static optim_config case_config(const optim_case *c) {
    optim_config cfg;
    optim_default_config(&cfg, c->kind, c->lr);
    cfg.weight_decay = c->weight_decay;
    cfg.momentum = c->momentum;
    cfg.dampening = c->dampening;
    cfg.nesterov = c->nesterov;
    return cfg;
}

TEST(trajectories_match_torch) {
    npy_array p0, grads;
    ASSERT_EQ(open_fixture(&p0, "p0"), 0);
    ASSERT_EQ(open_fixture(&grads, "grads"), 0);
    int64_t n = p0.count, steps = grads.shape[0];
    ASSERT_EQ(p0.dtype, NPY_DTYPE_FLOAT32);
    ASSERT_EQ(grads.ndim, 2);
    ASSERT_EQ(grads.shape[1], n);
    ASSERT_EQ(steps, 12);
    float params[64];
    ASSERT(n <= 64);
    int bad = 0;
    for (size_t c = 0; c < sizeof OPTIM_CASES / sizeof OPTIM_CASES[0] && !bad; c++) {
        const optim_case *oc = &OPTIM_CASES[c];
        char fname[128];
        snprintf(fname, sizeof fname, "traj_%s", oc->name);
        npy_array traj;
        if (open_fixture(&traj, fname) != 0) { bad = 1; break; }
        if (traj.shape[0] != steps || traj.shape[1] != n) {
            fprintf(stderr, "%s: unexpected shape\n", fname);
            bad = 1;
        }
        optim_config cfg = case_config(oc);
        optim o;
        cgnn_err err = {0};
        if (!bad && optim_init(&o, &cfg, n, &err) != 0) {
            fprintf(stderr, "optim_init: %s\n", err.msg);
            bad = 1;
        }
        if (!bad) {
            memcpy(params, p0.data, (size_t)n * sizeof(float));
            for (int64_t s = 0; s < steps && !bad; s++) {
                optim_step(&o, params, (const float *)grads.data + s * n, oc->lr);
                const float *want = (const float *)traj.data + s * n;
                int64_t i = first_mismatch(params, want, n, fix_max_abs(traj.data, traj.count));
                if (i >= 0) {
                    fprintf(stderr, "%s: step %lld, param %lld: %.9g vs torch %.9g\n", oc->name,
                            (long long)(s + 1), (long long)i, params[i], want[i]);
                    bad = 1;
                }
            }
            if (!bad && o.step != steps) bad = 1;
            optim_free(&o);
        }
        npy_close(&traj);
    }
    npy_close(&p0);
    npy_close(&grads);
    ASSERT(!bad);
}

TEST(clip_matches_torch) {
    npy_array in, maxes, norms, outs;
    ASSERT_EQ(open_fixture(&in, "clip_in"), 0);
    ASSERT_EQ(open_fixture(&maxes, "clip_max"), 0);
    ASSERT_EQ(open_fixture(&norms, "clip_norm"), 0);
    ASSERT_EQ(open_fixture(&outs, "clip_out"), 0);
    int64_t n = in.count;
    ASSERT(n <= 64);
    int bad = 0;
    for (int64_t k = 0; k < maxes.count && !bad; k++) {
        float g[64];
        memcpy(g, in.data, (size_t)n * sizeof(float));
        double mx = ((const double *)maxes.data)[k];
        double norm = optim_clip_grad_norm(g, n, mx);
        double want_norm = ((const double *)norms.data)[k]; /* float32 in torch */
        if (fabs(norm - want_norm) > 1e-6 * want_norm) {
            fprintf(stderr, "max %g: norm %.9g vs torch %.9g\n", mx, norm, want_norm);
            bad = 1;
        }
        int64_t i = first_mismatch(g, (const float *)outs.data + k * n, n, fix_max_abs(outs.data, outs.count));
        if (i >= 0) {
            fprintf(stderr, "max %g: grad %lld: %.9g vs torch %.9g\n", mx, (long long)i, g[i],
                    ((const float *)outs.data)[k * n + i]);
            bad = 1;
        }
    }
    npy_close(&in);
    npy_close(&maxes);
    npy_close(&norms);
    npy_close(&outs);
    ASSERT(!bad);
}

TEST(clip_below_max_leaves_grads_untouched) {
    float g[1000], orig[1000];
    for (int i = 0; i < 1000; i++) g[i] = orig[i] = (float)((i % 17) - 8) * 1e-3f;
    double norm = optim_clip_grad_norm(g, 1000, 10.0);
    ASSERT(norm > 0 && norm < 10.0);
    ASSERT(memcmp(g, orig, sizeof g) == 0);
    /* max_norm <= 0: only the norm. */
    for (int i = 0; i < 1000; i++) g[i] = orig[i] * 1000.0f;
    double big = optim_clip_grad_norm(g, 1000, 0.0);
    ASSERT(big > 1.0);
    for (int i = 0; i < 1000; i++) ASSERT(g[i] == orig[i] * 1000.0f);
    /* Above the max: clipped to (just under) max_norm. */
    double before = optim_clip_grad_norm(g, 1000, 1.0);
    ASSERT_NEAR(before, big, 0);
    ASSERT_NEAR(optim_grad_norm(g, 1000), 1.0, 1e-5);
    ASSERT_EQ(optim_clip_grad_norm(g, 0, 1.0), 0);
}

/* A pseudo-random float in [-1, 1) from a 64-bit LCG. */
static float lcg_float(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Runs `steps` steps of cfg over a large random problem with nthreads threads (with clipping,
 * so the reduction is exercised), writing the final params (n) to out. */
static void run_big(float *out, const optim_config *cfg, int64_t n, int steps, int nthreads) {
    float *g = (float *)malloc((size_t)n * sizeof(float));
    uint64_t s = 42;
    for (int64_t i = 0; i < n; i++) out[i] = lcg_float(&s);
    optim o;
    cgnn_err err = {0};
    CGNN_CHECK(optim_init(&o, cfg, n, &err) == 0);
    int saved = omp_get_max_threads();
    omp_set_num_threads(nthreads);
    for (int k = 0; k < steps; k++) {
        for (int64_t i = 0; i < n; i++) g[i] = lcg_float(&s);
        optim_clip_grad_norm(g, n, 100.0);
        optim_step(&o, out, g, cfg->lr);
    }
    omp_set_num_threads(saved);
    optim_free(&o);
    free(g);
}

TEST(bitwise_deterministic) {
    const int64_t n = 300007; /* > the parallel threshold, not a multiple of any chunk */
    float *a = (float *)malloc((size_t)n * sizeof(float)), *b = (float *)malloc((size_t)n * sizeof(float));
    int bad = 0;
    for (int kind = 0; kind < OPTIM_KIND_COUNT && !bad; kind++) {
        optim_config cfg;
        optim_default_config(&cfg, (optim_kind)kind, 0.01);
        if (kind == OPTIM_SGD) cfg.momentum = 0.9;
        run_big(a, &cfg, n, 3, 1);
        run_big(b, &cfg, n, 3, 1);
        if (memcmp(a, b, (size_t)n * sizeof(float)) != 0) {
            fprintf(stderr, "%s: two runs differ\n", optim_kind_name((optim_kind)kind));
            bad = 1;
        }
        run_big(b, &cfg, n, 3, 2);
        if (memcmp(a, b, (size_t)n * sizeof(float)) != 0) {
            fprintf(stderr, "%s: 1 and 2 threads differ\n", optim_kind_name((optim_kind)kind));
            bad = 1;
        }
        run_big(b, &cfg, n, 3, 3);
        if (memcmp(a, b, (size_t)n * sizeof(float)) != 0) {
            fprintf(stderr, "%s: 1 and 3 threads differ\n", optim_kind_name((optim_kind)kind));
            bad = 1;
        }
    }
    free(a);
    free(b);
    ASSERT(!bad);
}

/* optim_step (threads, SIMD) and optim_step_ref (plain scalar loop) give the same bits for
 * every configuration of the fixtures, over a problem above the parallel threshold whose size
 * is not a multiple of the vector width. */
TEST(fast_matches_reference) {
    const int64_t n = 100003;
    float *pa = (float *)malloc((size_t)n * sizeof(float)), *pb = (float *)malloc((size_t)n * sizeof(float));
    float *g = (float *)malloc((size_t)n * sizeof(float));
    int bad = 0;
    for (size_t c = 0; c < sizeof OPTIM_CASES / sizeof OPTIM_CASES[0] && !bad; c++) {
        optim_config cfg = case_config(&OPTIM_CASES[c]);
        optim a, b;
        cgnn_err err = {0};
        CGNN_CHECK(optim_init(&a, &cfg, n, &err) == 0 && optim_init(&b, &cfg, n, &err) == 0);
        uint64_t s = 99;
        for (int64_t i = 0; i < n; i++) pa[i] = pb[i] = lcg_float(&s);
        for (int step = 0; step < 4 && !bad; step++) {
            for (int64_t i = 0; i < n; i++) g[i] = lcg_float(&s) * 0.1f;
            double lr = cfg.lr * (1.0 - 0.1 * step); /* as a scheduler would change it */
            optim_step(&a, pa, g, lr);
            optim_step_ref(&b, pb, g, lr);
            if (memcmp(pa, pb, (size_t)n * sizeof(float)) != 0 ||
                (a.m && memcmp(a.m, b.m, (size_t)n * sizeof(float)) != 0) ||
                (a.v && memcmp(a.v, b.v, (size_t)n * sizeof(float)) != 0)) {
                fprintf(stderr, "%s: step %d: fast and reference differ\n", OPTIM_CASES[c].name, step + 1);
                bad = 1;
            }
        }
        optim_free(&a);
        optim_free(&b);
    }
    free(pa);
    free(pb);
    free(g);
    ASSERT(!bad);
}

TEST(grad_norm_matches_plain_sum) {
    const int64_t n = 1000003;
    float *g = (float *)malloc((size_t)n * sizeof(float));
    uint64_t s = 7;
    long double ref = 0; /* the plain sequential reference, in extended precision */
    for (int64_t i = 0; i < n; i++) {
        g[i] = lcg_float(&s);
        ref += (long double)g[i] * g[i];
    }
    double norm = optim_grad_norm(g, n);
    double norm2;
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    norm2 = optim_grad_norm(g, n);
    omp_set_num_threads(saved);
    free(g);
    ASSERT_NEAR(norm, sqrtl(ref), 1e-12 * (double)sqrtl(ref));
    ASSERT(norm == norm2);
}

typedef struct sched_case {
    const char *name; /* sched_<name>.npy */
    sched_kind kind;
    double factor;
    int64_t total_iters;
    double start_factor, end_factor;
    int64_t step_size;
    double gamma;
    int64_t t_max;
    double eta_min;
} sched_case;

/* Fields left at -1 keep the defaults. */
static const sched_case SCHED_CASES[] = {
    {"step_3_0.5", SCHED_STEP, -1, -1, -1, -1, 3, 0.5, -1, -1},
    {"step_4_default", SCHED_STEP, -1, -1, -1, -1, 4, -1, -1, -1},
    {"linear_default", SCHED_LINEAR, -1, -1, -1, -1, -1, -1, -1, -1},
    {"linear_0.1_10", SCHED_LINEAR, -1, 10, 0.1, -1, -1, -1, -1, -1},
    {"linear_0.5_0.2_4", SCHED_LINEAR, -1, 4, 0.5, 0.2, -1, -1, -1, -1},
    {"linear_total0", SCHED_LINEAR, -1, 0, 0.25, -1, -1, -1, -1, -1},
    {"constant_default", SCHED_CONSTANT, -1, -1, -1, -1, -1, -1, -1, -1},
    {"constant_0.5_4", SCHED_CONSTANT, 0.5, 4, -1, -1, -1, -1, -1, -1},
    {"constant_total0", SCHED_CONSTANT, 0.5, 0, -1, -1, -1, -1, -1, -1},
    {"cosine_10_0.001", SCHED_COSINE, -1, -1, -1, -1, -1, -1, 10, 0.001},
    {"cosine_3_0", SCHED_COSINE, -1, -1, -1, -1, -1, -1, 3, -1},
    {"cosine_1_0.01", SCHED_COSINE, -1, -1, -1, -1, -1, -1, 1, 0.01},
};

TEST(schedulers_match_torch) {
    int bad = 0;
    for (size_t k = 0; k < sizeof SCHED_CASES / sizeof SCHED_CASES[0] && !bad; k++) {
        const sched_case *sc = &SCHED_CASES[k];
        sched_config c;
        sched_default_config(&c, sc->kind);
        if (sc->factor >= 0) c.factor = sc->factor;
        if (sc->total_iters >= 0) c.total_iters = sc->total_iters;
        if (sc->start_factor >= 0) c.start_factor = sc->start_factor;
        if (sc->end_factor >= 0) c.end_factor = sc->end_factor;
        if (sc->step_size >= 0) c.step_size = sc->step_size;
        if (sc->gamma >= 0) c.gamma = sc->gamma;
        if (sc->t_max >= 0) c.t_max = sc->t_max;
        if (sc->eta_min >= 0) c.eta_min = sc->eta_min;
        cgnn_err err = {0};
        if (sched_config_validate(&c, &err) != 0) {
            fprintf(stderr, "%s: %s\n", sc->name, err.msg);
            bad = 1;
            break;
        }
        char fname[128];
        snprintf(fname, sizeof fname, "sched_%s", sc->name);
        npy_array a;
        if (open_fixture(&a, fname) != 0) { bad = 1; break; }
        const double *want = (const double *)a.data;
        for (int64_t t = 0; t < a.count; t++) {
            double lr = sched_lr(&c, 0.1, t);
            if (!(fabs(lr - want[t]) <= LR_TOL)) {
                fprintf(stderr, "%s: t=%lld: lr %.17g vs torch %.17g\n", sc->name, (long long)t, lr, want[t]);
                bad = 1;
            }
        }
        npy_close(&a);
    }
    ASSERT(!bad);
}

TEST(names_parse) {
    optim_kind ok;
    ASSERT_EQ(optim_kind_parse("Adam", &ok), 0);
    ASSERT_EQ(ok, OPTIM_ADAM);
    ASSERT_EQ(optim_kind_parse("torch.optim.Adam", &ok), 0);
    ASSERT_EQ(ok, OPTIM_ADAM);
    ASSERT_EQ(optim_kind_parse("AdamW", &ok), 0);
    ASSERT_EQ(ok, OPTIM_ADAMW);
    ASSERT_EQ(optim_kind_parse("torch.optim.AdamW", &ok), 0);
    ASSERT_EQ(ok, OPTIM_ADAMW);
    ASSERT_EQ(optim_kind_parse("SGD", &ok), 0);
    ASSERT_EQ(ok, OPTIM_SGD);
    ASSERT_EQ(optim_kind_parse("adam", &ok), -1);
    ASSERT_EQ(optim_kind_parse("Adamax", &ok), -1);
    ASSERT_EQ(optim_kind_parse("torch.optim.", &ok), -1);
    ASSERT_EQ(optim_kind_parse("", &ok), -1);
    for (int k = 0; k < OPTIM_KIND_COUNT; k++) {
        ASSERT_EQ(optim_kind_parse(optim_kind_name((optim_kind)k), &ok), 0);
        ASSERT_EQ(ok, k);
    }
    sched_kind sk;
    const char *names[] = {"ConstantLR", "StepLR", "LinearLR", "CosineAnnealingLR"};
    const sched_kind kinds[] = {SCHED_CONSTANT, SCHED_STEP, SCHED_LINEAR, SCHED_COSINE};
    for (int k = 0; k < 4; k++) {
        char full[128];
        snprintf(full, sizeof full, "torch.optim.lr_scheduler.%s", names[k]);
        ASSERT_EQ(sched_kind_parse(names[k], &sk), 0);
        ASSERT_EQ(sk, kinds[k]);
        ASSERT_EQ(sched_kind_parse(full, &sk), 0);
        ASSERT_EQ(sk, kinds[k]);
        ASSERT(strcmp(sched_kind_name(kinds[k]), names[k]) == 0);
    }
    ASSERT_EQ(sched_kind_parse("steplr", &sk), -1);
    ASSERT_EQ(sched_kind_parse("torch.optim.StepLR", &sk), -1);
    ASSERT_EQ(sched_kind_parse("ExponentialLR", &sk), -1);
}

TEST(defaults_and_validation) {
    optim_config c;
    optim_default_config(&c, OPTIM_ADAMW, 0.001);
    ASSERT_NEAR(c.weight_decay, 0.01, 0);
    ASSERT_NEAR(c.beta1, 0.9, 0);
    ASSERT_NEAR(c.beta2, 0.999, 0);
    ASSERT_NEAR(c.eps, 1e-8, 0);
    optim_default_config(&c, OPTIM_ADAM, 0.001);
    ASSERT_NEAR(c.weight_decay, 0, 0);
    cgnn_err err = {0};
    optim o;
    c.lr = -1;
    ASSERT_EQ(optim_init(&o, &c, 10, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "lr");
    ASSERT(o.m == NULL && o.v == NULL);
    optim_free(&o);
    optim_default_config(&c, OPTIM_SGD, 0.1);
    c.nesterov = 1;
    err_clear(&err);
    ASSERT_EQ(optim_init(&o, &c, 10, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "nesterov");
    optim_default_config(&c, OPTIM_ADAM, 0.1);
    c.beta2 = 1.0;
    ASSERT_EQ(optim_config_validate(&c, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "betas[1]");
    /* SGD without momentum keeps no state; with it, one buffer. */
    optim_default_config(&c, OPTIM_SGD, 0.1);
    ASSERT_EQ(optim_init(&o, &c, 10, &err), 0);
    ASSERT(o.m == NULL && o.v == NULL);
    optim_free(&o);
    c.momentum = 0.9;
    ASSERT_EQ(optim_init(&o, &c, 10, &err), 0);
    ASSERT(o.m != NULL && o.v == NULL);
    optim_free(&o);
    optim_free(NULL);

    sched_config s;
    sched_default_config(&s, SCHED_STEP);
    ASSERT_EQ(sched_config_validate(&s, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "step_size");
    sched_default_config(&s, SCHED_COSINE);
    ASSERT_EQ(sched_config_validate(&s, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "T_max");
    sched_default_config(&s, SCHED_CONSTANT);
    ASSERT_NEAR(s.factor, 1.0 / 3, 0);
    ASSERT_EQ(s.total_iters, 5);
    ASSERT_EQ(sched_config_validate(&s, &err), 0);
    s.factor = 1.5;
    ASSERT_EQ(sched_config_validate(&s, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "factor");
    sched_default_config(&s, SCHED_LINEAR);
    s.start_factor = 0;
    ASSERT_EQ(sched_config_validate(&s, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "start_factor");
}

int main(void) {
    RUN(trajectories_match_torch);
    RUN(clip_matches_torch);
    RUN(clip_below_max_leaves_grads_untouched);
    RUN(bitwise_deterministic);
    RUN(fast_matches_reference);
    RUN(grad_norm_matches_plain_sum);
    RUN(schedulers_match_torch);
    RUN(names_parse);
    RUN(defaults_and_validation);
    return test_summary();
}
