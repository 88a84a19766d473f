/* optim.c — SGD / Adam / AdamW over one flat float32 buffer, gradient-norm clipping, and
 * closed-form learning-rate schedulers; see optim.h for the contract.
 *
 * Dimension legend: n = number of parameters (one flat buffer, all tensors back to back).
 *
 * The per-element arithmetic follows torch 1.13's _single_tensor_{sgd,adam,adamw} op by op
 * in float32 (scalars such as beta1 or 1-beta1 are computed in double, then rounded to float,
 * exactly as ATen does when a Python number meets a float tensor); only the bias corrections
 * and the step size are kept in double, as torch does on the Python side. torch's vectorised
 * CPU kernels use fused multiply-adds for `add_(x, alpha=a)`; we do not (no -march here, and
 * -std=c11 turns FP contraction off), so results agree with torch to about one ulp per op
 * rather than bitwise.
 *
 * Determinism: every update is elementwise, so the threaded, vectorised loops (SSE by hand for
 * Adam, whose sqrtf the compiler will not vectorise) give the same bits as the scalar
 * reference optim_step_ref for any thread count; the tests check it. The clip norm is a reduction: it is summed in fixed chunks whose size
 * depends only on n (never on the thread count), each chunk in a fixed order, then the
 * chunk partials in index order — bitwise identical for any number of threads.
 */
#include "optim/optim.h"

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

/* Below this many parameters the loops stay on one thread (fork/join costs more). */
#define OPTIM_PAR_MIN 32768
/* Gradient-norm reduction: at most this many chunks, each at least OPTIM_CLIP_CHUNK long. */
#define OPTIM_CLIP_MAX_CHUNKS 256
#define OPTIM_CLIP_CHUNK 4096

/* ---- names ------------------------------------------------------------------ */

static const char *const OPTIM_NAMES[] = {
    [OPTIM_SGD] = "SGD",
    [OPTIM_ADAM] = "Adam",
    [OPTIM_ADAMW] = "AdamW",
};
_Static_assert(sizeof OPTIM_NAMES / sizeof OPTIM_NAMES[0] == OPTIM_KIND_COUNT, "optimiser name table");

static const char *const SCHED_NAMES[] = {
    [SCHED_CONSTANT] = "ConstantLR",
    [SCHED_STEP] = "StepLR",
    [SCHED_LINEAR] = "LinearLR",
    [SCHED_COSINE] = "CosineAnnealingLR",
};
_Static_assert(sizeof SCHED_NAMES / sizeof SCHED_NAMES[0] == SCHED_KIND_COUNT, "scheduler name table");

/* Strips prefix from name if present. */
static const char *strip_prefix(const char *name, const char *prefix) {
    size_t len = strlen(prefix);
    return strncmp(name, prefix, len) == 0 ? name + len : name;
}

const char *optim_kind_name(optim_kind kind) {
    CGNN_CHECK(kind >= 0 && kind < OPTIM_KIND_COUNT);
    return OPTIM_NAMES[kind];
}

int optim_kind_parse(const char *name, optim_kind *out) {
    if (!name) return -1;
    const char *base = strip_prefix(name, "torch.optim.");
    for (int k = 0; k < OPTIM_KIND_COUNT; k++) {
        if (strcmp(base, OPTIM_NAMES[k]) == 0) {
            *out = (optim_kind)k;
            return 0;
        }
    }
    return -1;
}

const char *sched_kind_name(sched_kind kind) {
    CGNN_CHECK(kind >= 0 && kind < SCHED_KIND_COUNT);
    return SCHED_NAMES[kind];
}

int sched_kind_parse(const char *name, sched_kind *out) {
    if (!name) return -1;
    const char *base = strip_prefix(name, "torch.optim.lr_scheduler.");
    for (int k = 0; k < SCHED_KIND_COUNT; k++) {
        if (strcmp(base, SCHED_NAMES[k]) == 0) {
            *out = (sched_kind)k;
            return 0;
        }
    }
    return -1;
}

/* ---- configuration ------------------------------------------------------------ */

void optim_default_config(optim_config *c, optim_kind kind, double lr) {
    CGNN_CHECK(kind >= 0 && kind < OPTIM_KIND_COUNT);
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->lr = lr;
    c->weight_decay = kind == OPTIM_ADAMW ? 0.01 : 0.0;
    c->momentum = 0.0;
    c->dampening = 0.0;
    c->nesterov = 0;
    c->beta1 = 0.9;
    c->beta2 = 0.999;
    c->eps = 1e-8;
}

int optim_config_validate(const optim_config *c, cgnn_err *err) {
    if (c->kind < 0 || c->kind >= OPTIM_KIND_COUNT)
        return err_set(err, CGNN_ERR_INPUT, "optimizer: unknown kind %d", (int)c->kind);
    const char *k = OPTIM_NAMES[c->kind];
    if (!(c->lr >= 0.0) || !isfinite(c->lr))
        return err_set(err, CGNN_ERR_INPUT, "optimizer %s: lr: invalid learning rate %g (must be >= 0)", k, c->lr);
    if (!(c->weight_decay >= 0.0) || !isfinite(c->weight_decay))
        return err_set(err, CGNN_ERR_INPUT, "optimizer %s: weight_decay: invalid value %g (must be >= 0)", k,
                       c->weight_decay);
    if (c->kind == OPTIM_SGD) {
        if (!(c->momentum >= 0.0) || !isfinite(c->momentum))
            return err_set(err, CGNN_ERR_INPUT, "optimizer SGD: momentum: invalid value %g (must be >= 0)",
                           c->momentum);
        if (!isfinite(c->dampening))
            return err_set(err, CGNN_ERR_INPUT, "optimizer SGD: dampening: invalid value %g", c->dampening);
        if (c->nesterov && (c->momentum <= 0.0 || c->dampening != 0.0))
            return err_set(err, CGNN_ERR_INPUT,
                           "optimizer SGD: nesterov: Nesterov momentum requires a momentum and zero dampening "
                           "(momentum %g, dampening %g)", c->momentum, c->dampening);
    } else {
        if (!(c->eps >= 0.0) || !isfinite(c->eps))
            return err_set(err, CGNN_ERR_INPUT, "optimizer %s: eps: invalid value %g (must be >= 0)", k, c->eps);
        if (!(c->beta1 >= 0.0 && c->beta1 < 1.0))
            return err_set(err, CGNN_ERR_INPUT, "optimizer %s: betas[0]: invalid value %g (must be in [0, 1))", k,
                           c->beta1);
        if (!(c->beta2 >= 0.0 && c->beta2 < 1.0))
            return err_set(err, CGNN_ERR_INPUT, "optimizer %s: betas[1]: invalid value %g (must be in [0, 1))", k,
                           c->beta2);
    }
    return 0;
}

/* ---- state -------------------------------------------------------------------- */

/* A zeroed, 64-byte aligned float buffer of n elements, or NULL when out of memory. */
static float *alloc_zeroed(int64_t n) {
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0) return NULL;
    memset(p, 0, bytes);
    return (float *)p;
}

int optim_init(optim *o, const optim_config *cfg, int64_t n, cgnn_err *err) {
    memset(o, 0, sizeof *o);
    if (optim_config_validate(cfg, err) != 0) return -1;
    if (n < 0) return err_set(err, CGNN_ERR_INPUT, "optimizer %s: negative parameter count %lld",
                              OPTIM_NAMES[cfg->kind], (long long)n);
    o->cfg = *cfg;
    o->n = n;
    int need_m = cfg->kind != OPTIM_SGD || cfg->momentum != 0.0;
    int need_v = cfg->kind != OPTIM_SGD;
    if (need_m && !(o->m = alloc_zeroed(n))) goto oom;
    if (need_v && !(o->v = alloc_zeroed(n))) goto oom;
    return 0;
oom:
    optim_free(o);
    return err_set(err, CGNN_ERR_RUNTIME, "optimizer %s: out of memory for the state of %lld parameters",
                   OPTIM_NAMES[cfg->kind], (long long)n);
}

void optim_free(optim *o) {
    if (!o) return;
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
    o->n = 0;
    o->step = 0;
}

/* ---- steps -------------------------------------------------------------------- */

/* Per-step constants, rounded to float the way ATen rounds a Python scalar for a float tensor. */
typedef struct step_k {
    float wd;          /* weight decay (SGD, Adam: coupled into the gradient) */
    float neg_lr;      /* SGD: -lr */
    float mom, damp1;  /* SGD: momentum, 1 - dampening */
    float decay;       /* AdamW: 1 - lr*wd */
    float b1, omb1, b2, omb2;
    float bc2_sqrt;    /* sqrt(1 - beta2^t), from double */
    float eps;
    float neg_step;    /* -lr / (1 - beta1^t), from double */
} step_k;

static step_k step_constants(const optim_config *c, double lr, int64_t t) {
    step_k k;
    memset(&k, 0, sizeof k);
    k.wd = (float)c->weight_decay;
    k.neg_lr = (float)(-lr);
    k.mom = (float)c->momentum;
    k.damp1 = (float)(1.0 - c->dampening);
    k.decay = (float)(1.0 - lr * c->weight_decay);
    k.b1 = (float)c->beta1;
    k.omb1 = (float)(1.0 - c->beta1);
    k.b2 = (float)c->beta2;
    k.omb2 = (float)(1.0 - c->beta2);
    if (c->kind != OPTIM_SGD) {
        const double bc1 = 1.0 - pow(c->beta1, (double)t);
        const double bc2 = 1.0 - pow(c->beta2, (double)t);
        k.bc2_sqrt = (float)sqrt(bc2);
        k.neg_step = (float)(-(lr / bc1));
    }
    k.eps = (float)c->eps;
    return k;
}

/* One SGD element, torch 1.13 _single_tensor_sgd op by op:
 *   d = g + wd*p;  buf = first ? d : buf*momentum + (1-dampening)*d;
 *   d = nesterov ? d + momentum*buf : buf;  p = p + (-lr)*d
 * The flags are compile-time constants at every call in the fast path, so each combination
 * becomes its own branch-free (vectorisable) loop. */
static inline __attribute__((always_inline)) void sgd_elem(float *restrict params, const float *restrict grads,
                                                           float *restrict buf, int64_t i, const step_k *k,
                                                           int use_wd, int has_buf, int first, int nesterov) {
    float d = grads[i];
    if (use_wd) d = d + k->wd * params[i];
    if (has_buf) {
        float b = first ? d : buf[i] * k->mom + k->damp1 * d;
        buf[i] = b;
        d = nesterov ? d + k->mom * b : b;
    }
    params[i] = params[i] + k->neg_lr * d;
}

/* One Adam/AdamW element, torch 1.13 _single_tensor_adam(w) op by op:
 *   AdamW: p = p * (1 - lr*wd);   Adam: g = g + wd*p
 *   m = m*b1 + (1-b1)*g;  v = v*b2 + (1-b2)*g*g
 *   denom = sqrt(v) / sqrt(1-b2^t) + eps;  p = p + (-lr/(1-b1^t)) * m / denom */
static inline __attribute__((always_inline)) void adam_elem(float *restrict params, const float *restrict grads,
                                                            float *restrict m, float *restrict v, int64_t i,
                                                            const step_k *k, int coupled_wd, int decoupled_wd) {
    float p = params[i], g = grads[i];
    if (decoupled_wd) p = p * k->decay;
    if (coupled_wd) g = g + k->wd * p;
    float mi = m[i] * k->b1 + k->omb1 * g;
    float vi = v[i] * k->b2 + k->omb2 * g * g;
    m[i] = mi;
    v[i] = vi;
    float denom = sqrtf(vi) / k->bc2_sqrt + k->eps;
    params[i] = p + k->neg_step * mi / denom;
}

/* The SGD loop over (n) for one combination of literal flags. A macro, not a function: OpenMP
 * outlines the loop body before inlining, so only literal flags at the pragma's own site fold
 * into branch-free, vectorisable loops. Uses params, grads, buf, n, k of the caller. */
#define SGD_LOOP(USE_WD, HAS_BUF, FIRST, NESTEROV)                                               \
    do {                                                                                         \
        _Pragma("omp parallel for simd schedule(static) if (n >= OPTIM_PAR_MIN)")                 \
        for (int64_t i = 0; i < n; i++) sgd_elem(params, grads, buf, i, &k, USE_WD, HAS_BUF, FIRST, NESTEROV); \
    } while (0)

#if defined(__SSE2__)
/* Four Adam elements at i with SSE: the same operations in the same order as adam_elem, and
 * sqrtps / divps are correctly rounded, so the bits equal the scalar reference (no FMA: -std=c11
 * keeps contraction off). The scalar sqrtf keeps errno semantics (no -fno-math-errno here),
 * which stops the compiler vectorising adam_elem itself. */
static inline __attribute__((always_inline)) void adam_vec4(float *restrict params, const float *restrict grads,
                                                            float *restrict m, float *restrict v, int64_t i,
                                                            const step_k *k, int coupled_wd, int decoupled_wd) {
    __m128 p = _mm_loadu_ps(params + i), g = _mm_loadu_ps(grads + i);
    if (decoupled_wd) p = _mm_mul_ps(p, _mm_set1_ps(k->decay));
    if (coupled_wd) g = _mm_add_ps(g, _mm_mul_ps(_mm_set1_ps(k->wd), p));
    __m128 mi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m + i), _mm_set1_ps(k->b1)), _mm_mul_ps(_mm_set1_ps(k->omb1), g));
    __m128 vi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v + i), _mm_set1_ps(k->b2)),
                           _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(k->omb2), g), g));
    _mm_storeu_ps(m + i, mi);
    _mm_storeu_ps(v + i, vi);
    __m128 denom = _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vi), _mm_set1_ps(k->bc2_sqrt)), _mm_set1_ps(k->eps));
    _mm_storeu_ps(params + i, _mm_add_ps(p, _mm_div_ps(_mm_mul_ps(_mm_set1_ps(k->neg_step), mi), denom)));
}

/* The Adam loop over (n) for literal flags (a macro for the reason given at SGD_LOOP). */
#define ADAM_LOOP(COUPLED, DECOUPLED)                                                              \
    do {                                                                                         \
        const int64_t nv = n - n % 4;                                                            \
        _Pragma("omp parallel for schedule(static) if (n >= OPTIM_PAR_MIN)")                      \
        for (int64_t i = 0; i < nv; i += 4) adam_vec4(params, grads, o->m, o->v, i, &k, COUPLED, DECOUPLED); \
        for (int64_t i = nv; i < n; i++) adam_elem(params, grads, o->m, o->v, i, &k, COUPLED, DECOUPLED); \
    } while (0)
#else
#define ADAM_LOOP(COUPLED, DECOUPLED)                                                              \
    do {                                                                                         \
        _Pragma("omp parallel for simd schedule(static) if (n >= OPTIM_PAR_MIN)")                 \
        for (int64_t i = 0; i < n; i++) adam_elem(params, grads, o->m, o->v, i, &k, COUPLED, DECOUPLED); \
    } while (0)
#endif

void optim_step(optim *o, float *params, const float *grads, double lr) {
    CGNN_CHECK(o && params && (grads || o->n == 0));
    const optim_config *c = &o->cfg;
    const int first = o->step == 0;
    o->step++;
    const step_k k = step_constants(c, lr, o->step);
    const int64_t n = o->n;
    const int use_wd = c->weight_decay != 0.0;
    if (c->kind == OPTIM_SGD) {
        float *buf = o->m;
        const int nesterov = c->nesterov;
        if (!buf) {
            if (use_wd) SGD_LOOP(1, 0, 0, 0);
            else SGD_LOOP(0, 0, 0, 0);
        } else if (first) { /* once per run: one generic loop */
            SGD_LOOP(use_wd, 1, 1, nesterov);
        } else if (use_wd) {
            if (nesterov) SGD_LOOP(1, 1, 0, 1);
            else SGD_LOOP(1, 1, 0, 0);
        } else {
            if (nesterov) SGD_LOOP(0, 1, 0, 1);
            else SGD_LOOP(0, 1, 0, 0);
        }
    } else if (!use_wd) {
        ADAM_LOOP(0, 0);
    } else if (c->kind == OPTIM_ADAMW) {
        ADAM_LOOP(0, 1);
    } else {
        ADAM_LOOP(1, 0);
    }
}

void optim_step_ref(optim *o, float *params, const float *grads, double lr) {
    CGNN_CHECK(o && params && (grads || o->n == 0));
    const optim_config *c = &o->cfg;
    const int first = o->step == 0;
    o->step++;
    const step_k k = step_constants(c, lr, o->step);
    const int use_wd = c->weight_decay != 0.0;
    for (int64_t i = 0; i < o->n; i++) {
        if (c->kind == OPTIM_SGD)
            sgd_elem(params, grads, o->m, i, &k, use_wd, o->m != NULL, first, c->nesterov);
        else
            adam_elem(params, grads, o->m, o->v, i, &k, use_wd && c->kind == OPTIM_ADAM,
                      use_wd && c->kind == OPTIM_ADAMW);
    }
}

/* ---- gradient clipping ---------------------------------------------------------- */

/* Sum of squares of x[0..len) in double, in a fixed order (four interleaved accumulators
 * combined as (a0 + a1) + (a2 + a3), then the tail). */
static double sum_squares(const float *x, int64_t len) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int64_t i = 0;
    for (; i + 4 <= len; i += 4) {
        double x0 = x[i], x1 = x[i + 1], x2 = x[i + 2], x3 = x[i + 3];
        a0 += x0 * x0;
        a1 += x1 * x1;
        a2 += x2 * x2;
        a3 += x3 * x3;
    }
    double s = (a0 + a1) + (a2 + a3);
    for (; i < len; i++) s += (double)x[i] * (double)x[i];
    return s;
}

double optim_grad_norm(const float *grads, int64_t n) {
    CGNN_CHECK(n >= 0 && (grads || n == 0));
    if (n == 0) return 0.0;
    /* Chunking depends on n only, so the sum is the same for every thread count. */
    int64_t chunk = (n + OPTIM_CLIP_MAX_CHUNKS - 1) / OPTIM_CLIP_MAX_CHUNKS;
    if (chunk < OPTIM_CLIP_CHUNK) chunk = OPTIM_CLIP_CHUNK;
    int64_t nchunks = (n + chunk - 1) / chunk;
    CGNN_CHECK(nchunks <= OPTIM_CLIP_MAX_CHUNKS);
    double partial[OPTIM_CLIP_MAX_CHUNKS];
#pragma omp parallel for schedule(static) if (nchunks > 1 && n >= OPTIM_PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        partial[c] = sum_squares(grads + lo, hi - lo);
    }
    double total = 0.0;
    for (int64_t c = 0; c < nchunks; c++) total += partial[c];
    return sqrt(total);
}

double optim_clip_grad_norm(float *grads, int64_t n, double max_norm) {
    double norm = optim_grad_norm(grads, n);
    /* A NaN norm compares false: grads are left as they are and the caller sees the NaN. */
    if (max_norm > 0.0 && norm > max_norm) {
        const float coef = (float)(max_norm / (norm + 1e-6));
#pragma omp parallel for simd schedule(static) if (n >= OPTIM_PAR_MIN)
        for (int64_t i = 0; i < n; i++) grads[i] = grads[i] * coef;
    }
    return norm;
}

/* ---- schedulers ----------------------------------------------------------------- */

void sched_default_config(sched_config *c, sched_kind kind) {
    CGNN_CHECK(kind >= 0 && kind < SCHED_KIND_COUNT);
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->factor = 1.0 / 3;
    c->total_iters = 5;
    c->start_factor = 1.0 / 3;
    c->end_factor = 1.0;
    c->step_size = 0; /* required */
    c->gamma = 0.1;
    c->t_max = 0;     /* required */
    c->eta_min = 0.0;
}

int sched_config_validate(const sched_config *c, cgnn_err *err) {
    if (c->kind < 0 || c->kind >= SCHED_KIND_COUNT)
        return err_set(err, CGNN_ERR_INPUT, "lr scheduler: unknown kind %d", (int)c->kind);
    switch (c->kind) {
    case SCHED_CONSTANT:
        if (!(c->factor >= 0.0 && c->factor <= 1.0))
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler ConstantLR: factor: %g is not in [0, 1]", c->factor);
        if (c->total_iters < 0)
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler ConstantLR: total_iters: %lld is negative",
                           (long long)c->total_iters);
        break;
    case SCHED_LINEAR:
        /* torch 1.13 accepts start_factor 0 but then divides by zero on the second step. */
        if (!(c->start_factor > 0.0 && c->start_factor <= 1.0))
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler LinearLR: start_factor: %g is not in (0, 1]",
                           c->start_factor);
        if (!(c->end_factor >= 0.0 && c->end_factor <= 1.0))
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler LinearLR: end_factor: %g is not in [0, 1]",
                           c->end_factor);
        if (c->total_iters < 0)
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler LinearLR: total_iters: %lld is negative",
                           (long long)c->total_iters);
        break;
    case SCHED_STEP:
        if (c->step_size < 1)
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler StepLR: step_size: %lld (required, must be >= 1)",
                           (long long)c->step_size);
        if (!isfinite(c->gamma) || c->gamma < 0.0)
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler StepLR: gamma: invalid value %g", c->gamma);
        break;
    case SCHED_COSINE:
        if (c->t_max < 1)
            return err_set(err, CGNN_ERR_INPUT,
                           "lr scheduler CosineAnnealingLR: T_max: %lld (required, must be >= 1)",
                           (long long)c->t_max);
        if (!isfinite(c->eta_min))
            return err_set(err, CGNN_ERR_INPUT, "lr scheduler CosineAnnealingLR: eta_min: invalid value %g",
                           c->eta_min);
        break;
    default:
        break;
    }
    return 0;
}

/* Closed forms of torch's chainable get_lr(), written with torch's own expressions
 * (_get_closed_form_lr). Where the closed form and the chain disagree, the chain wins: with
 * total_iters == 0, ConstantLR / LinearLR multiply by factor / start_factor at t = 0 and never
 * change the lr again (last_epoch > total_iters keeps it). */
double sched_lr(const sched_config *c, double base_lr, int64_t t) {
    CGNN_CHECK(t >= 0);
    switch (c->kind) {
    case SCHED_CONSTANT:
        if (c->total_iters == 0) return base_lr * c->factor;
        return base_lr * (c->factor + (t >= c->total_iters) * (1 - c->factor));
    case SCHED_STEP:
        CGNN_CHECK(c->step_size >= 1);
        return base_lr * pow(c->gamma, (double)(t / c->step_size));
    case SCHED_LINEAR: {
        if (c->total_iters == 0) return base_lr * c->start_factor;
        int64_t k = t < c->total_iters ? t : c->total_iters;
        return base_lr * (c->start_factor + (c->end_factor - c->start_factor) * (double)k / (double)c->total_iters);
    }
    case SCHED_COSINE:
        /* The chain is periodic (it climbs back after T_max, restarting at 2*T_max); so is this. */
        CGNN_CHECK(c->t_max >= 1);
        return c->eta_min +
               (base_lr - c->eta_min) * (1 + cos(M_PI * (double)t / (double)c->t_max)) / 2;
    default:
        CGNN_CHECK(!"unknown scheduler kind");
        return base_lr;
    }
}
