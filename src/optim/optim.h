/* optim.h — optimisers and learning-rate schedulers with torch.optim semantics, over one flat
 * parameter buffer.
 *
 *   SGD:   g = grad + wd*p; if momentum: buf = momentum*buf + (1-dampening)*g (buf = g on the
 *          first step); g = nesterov ? g + momentum*buf : buf; p -= lr*g
 *   Adam:  g = grad + wd*p (L2, coupled); m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 *          p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
 *   AdamW: p *= 1 - lr*wd (decoupled); then Adam without the wd term
 *   clip_grad_norm(max): total = ||grad||_2 over all params; if total > max:
 *          grad *= max / (total + 1e-6)  (torch.nn.utils.clip_grad_norm_)
 * Schedulers (stepped once per optimiser step here, as GiGL steps per batch):
 *   ConstantLR(factor=1/3, total_iters=5) — torch defaults; LinearLR(start_factor=1/3,
 *   end_factor=1, total_iters=5); StepLR(step_size, gamma=0.1);
 *   CosineAnnealingLR(T_max, eta_min=0). lr(t) computed in closed form from base lr and t.
 */
#ifndef CGNN_OPTIM_H
#define CGNN_OPTIM_H

#include <stdint.h>

#include "util/err.h"

typedef enum optim_kind { OPTIM_SGD, OPTIM_ADAM, OPTIM_ADAMW, OPTIM_KIND_COUNT } optim_kind;

typedef struct optim_config {
    optim_kind kind;
    double lr;
    double weight_decay;      /* torch defaults: 0 (SGD, Adam), 0.01 (AdamW) */
    double momentum, dampening; /* SGD */
    int nesterov;             /* SGD */
    double beta1, beta2, eps; /* Adam/AdamW: 0.9, 0.999, 1e-8 */
} optim_config;

/* torch defaults for kind, with lr. */
void optim_default_config(optim_config *c, optim_kind kind, double lr);
/* "Adam", "torch.optim.Adam", "AdamW", "SGD" -> kind; 0 or -1. */
int optim_kind_parse(const char *name, optim_kind *out);
const char *optim_kind_name(optim_kind kind);
/* Checks c like torch's constructors do (lr >= 0, weight_decay >= 0, momentum >= 0, nesterov
 * needs momentum > 0 and dampening 0, eps >= 0, betas in [0, 1)). Returns 0, or -1 with *err
 * (CGNN_ERR_INPUT naming the optimiser and the field). optim_init calls it. */
int optim_config_validate(const optim_config *c, cgnn_err *err);

typedef struct optim {
    optim_config cfg;
    int64_t n;                /* parameters */
    float *m, *v;             /* (n) moments (Adam) / momentum buffer in m (SGD); owned */
    int64_t step;             /* steps taken */
} optim;

/* Allocates state for n parameters (zeroed). Caller owns *o (optim_free). */
int optim_init(optim *o, const optim_config *cfg, int64_t n, cgnn_err *err);
void optim_free(optim *o); /* NULL-safe */

/* One step at learning rate lr: updates params (n) from grads (n). */
void optim_step(optim *o, float *params, const float *grads, double lr);
/* The plain scalar, single-threaded reference of optim_step (same arithmetic, same bits); the
 * tests hold the two together. */
void optim_step_ref(optim *o, float *params, const float *grads, double lr);

/* Scales grads so that their global L2 norm is at most max_norm; returns the norm before
 * clipping (computed in double). max_norm <= 0: only returns the norm. */
double optim_clip_grad_norm(float *grads, int64_t n, double max_norm);
/* The global L2 norm of grads (n) in double, reduced in fixed chunks that depend on n only:
 * bitwise the same for every thread count. */
double optim_grad_norm(const float *grads, int64_t n);

typedef enum sched_kind { SCHED_CONSTANT, SCHED_STEP, SCHED_LINEAR, SCHED_COSINE, SCHED_KIND_COUNT } sched_kind;

typedef struct sched_config {
    sched_kind kind;
    double factor;            /* ConstantLR (1/3) */
    int64_t total_iters;      /* ConstantLR, LinearLR (5) */
    double start_factor, end_factor; /* LinearLR (1/3, 1) */
    int64_t step_size;        /* StepLR (required, >= 1) */
    double gamma;             /* StepLR (0.1) */
    int64_t t_max;            /* CosineAnnealingLR (required, >= 1) */
    double eta_min;           /* CosineAnnealingLR (0) */
} sched_config;

void sched_default_config(sched_config *c, sched_kind kind);
int sched_kind_parse(const char *name, sched_kind *out); /* "ConstantLR", "torch.optim.lr_scheduler.StepLR", ... */
const char *sched_kind_name(sched_kind kind);
/* Checks the fields kind uses (step_size >= 1, T_max >= 1, factors in range, total_iters >= 0).
 * Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the scheduler and the field). Call it
 * before sched_lr, which treats a bad config as a bug. */
int sched_config_validate(const sched_config *c, cgnn_err *err);

/* Learning rate after t scheduler steps (t = 0 before the first step), from base_lr. Matches
 * torch's chained-form values at every t. */
double sched_lr(const sched_config *c, double base_lr, int64_t t);

#endif
