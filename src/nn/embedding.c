/* embedding.c — learnable embedding tables and their sparse optimiser steps; see embedding.h.
 *
 * Dimension legend: R = table rows, D = embedding dim, n = this rank's touched rows, N = all
 * ranks' touched rows (with duplicates), U = distinct rows among the N.
 *
 * One step (embedding_sparse_step):
 *   1. under data parallelism, all-gather (ids, grads) of every rank in rank order (grads packed
 *      to (n, D) first when they sit inside a wider input-gradient matrix);
 *   2. merge: one sequential pass over the N ids through an open-addressing hash table gives the
 *      U distinct ids in order of first appearance, each with the chain of its input rows in
 *      input order (and checks every id is in [0, R) before anything changes);
 *   3. if there were duplicates or the divisor is not 1: merged (U, D) = Σ chain rows, in chain
 *      order, times (float)(1/divisor) — parallel over distinct ids, each row summed by one
 *      thread in a fixed order;
 *   4. the optimiser update, parallel over the U distinct rows (SSE for the square roots, the
 *      same operations in the same order as the scalar reference, so the same bits).
 * Every part is O(N D); the table size only enters through the addresses touched.
 *
 * Arithmetic mirrors torch 1.13 op by op (torch/optim/_functional.py sparse_adam,
 * adagrad.py _single_tensor_adagrad): e.g. SparseAdam forms m + (g - m)(1-b1) rather than
 * b1 m + (1-b1) g. torch's dense += sparse with alpha may fuse a multiply-add; we never do
 * (-std=c11 keeps contraction off), so results agree with torch to about an ulp per op.
 */
#include "nn/embedding.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "util/rng.h"

/* Below this many floats of work a loop stays on one thread (fork/join costs more). */
#define EMB_PAR_MIN 32768

/* ---- names ------------------------------------------------------------------------ */

static const char *const EMB_OPTIM_NAMES[] = {
    [EMB_OPTIM_SPARSE_ADAM] = "SparseAdam",
    [EMB_OPTIM_ADAGRAD] = "Adagrad",
    [EMB_OPTIM_SGD] = "SGD",
};
_Static_assert(sizeof EMB_OPTIM_NAMES / sizeof EMB_OPTIM_NAMES[0] == EMB_OPTIM_COUNT, "optimiser name table");

const char *embedding_optim_name(embedding_optim kind) {
    CGNN_CHECK(kind >= 0 && kind < EMB_OPTIM_COUNT);
    return EMB_OPTIM_NAMES[kind];
}

int embedding_optim_parse(const char *name, embedding_optim *out) {
    if (!name) return -1;
    const char *prefix = "torch.optim.";
    if (strncmp(name, prefix, strlen(prefix)) == 0) name += strlen(prefix);
    for (int k = 0; k < EMB_OPTIM_COUNT; k++)
        if (strcmp(name, EMB_OPTIM_NAMES[k]) == 0) {
            *out = (embedding_optim)k;
            return 0;
        }
    return -1;
}

/* ---- scratch ----------------------------------------------------------------------- */

struct embedding_scratch {
    int64_t cap;          /* rows the merge buffers hold (N) */
    int64_t *uniq;        /* (cap) distinct ids, in order of first appearance */
    int64_t *head, *tail; /* (cap) first / last input row of each distinct id */
    int64_t *next;        /* (cap) next input row with the same id, or -1 */
    float *merged;        /* (cap, D) merged, scaled gradient rows */
    int64_t hcap;         /* hash slots: a power of two >= 2 cap */
    int64_t *hkey;        /* (hcap) id, or -1 for an empty slot */
    int64_t *hval;        /* (hcap) distinct index of hkey */
    int64_t gcap;         /* rows the gather buffers hold (N, only under data parallelism) */
    int64_t *all_ids;     /* (gcap) every rank's ids, in rank order */
    float *all_grads;     /* (gcap, D) every rank's gradient rows */
    float *send;          /* (gcap, D) this rank's rows packed (when they are strided) */
    int nranks;
    int64_t *counts;      /* (nranks) rows per rank */
    int64_t *fcounts;     /* (nranks) floats per rank */
    int64_t bytes;        /* allocated above */
    /* sharded steps: rows routed to their owners (grown with realloc, never shrunk) */
    int64_t scap, rcap;   /* rows the send / receive id buffers hold */
    int64_t sgcap, rgcap; /* rows the send / receive gradient buffers hold */
    int64_t *send_ids, *recv_ids; /* (scap) / (rcap) */
    float *send_grads, *recv_grads; /* (scap, D) / (rcap, D) */
    int64_t *scounts, *rcounts, *sfill; /* (nranks) rows to / from each rank, fill cursors */
};

/* The merge buffers scratch_reserve sizes (not the all-gather ones). */
static void merge_buffers_free(embedding_scratch *s) {
    free(s->uniq);
    free(s->head);
    free(s->tail);
    free(s->next);
    free(s->merged);
    free(s->hkey);
    free(s->hval);
}

static void scratch_free(embedding_scratch *s) {
    if (!s) return;
    merge_buffers_free(s);
    free(s->all_ids);
    free(s->all_grads);
    free(s->send);
    free(s->counts);
    free(s->fcounts);
    free(s->send_ids);
    free(s->recv_ids);
    free(s->send_grads);
    free(s->recv_grads);
    free(s->scounts);
    free(s->rcounts);
    free(s->sfill);
    free(s);
}

/* Grows the merge buffers to hold N rows (no-op once they do; growth by at least 1.5x, so a
 * training run reallocates a handful of times and then never). Allocation failure is fatal
 * (cgnn_malloc): a rank returning an error here would strand the others in the next
 * collective. */
static void scratch_reserve(embedding_scratch *s, int64_t N, int64_t D) {
    if (N <= s->cap && s->cap > 0) return;
    int64_t cap = s->cap + s->cap / 2;
    if (cap < N) cap = N;
    if (cap < 64) cap = 64;
    s->bytes -= s->cap * (4 * (int64_t)sizeof(int64_t) + D * (int64_t)sizeof(float)) +
                s->hcap * 2 * (int64_t)sizeof(int64_t);
    merge_buffers_free(s);
    s->cap = cap;
    s->uniq = (int64_t *)cgnn_malloc((size_t)cap * sizeof(int64_t));
    s->head = (int64_t *)cgnn_malloc((size_t)cap * sizeof(int64_t));
    s->tail = (int64_t *)cgnn_malloc((size_t)cap * sizeof(int64_t));
    s->next = (int64_t *)cgnn_malloc((size_t)cap * sizeof(int64_t));
    s->merged = (float *)cgnn_aligned_alloc((size_t)cap * (size_t)D * sizeof(float));
    s->hcap = 16;
    while (s->hcap < 2 * cap) s->hcap *= 2;
    s->hkey = (int64_t *)cgnn_malloc((size_t)s->hcap * sizeof(int64_t));
    s->hval = (int64_t *)cgnn_malloc((size_t)s->hcap * sizeof(int64_t));
    s->bytes += cap * (4 * (int64_t)sizeof(int64_t) + D * (int64_t)sizeof(float)) +
                s->hcap * 2 * (int64_t)sizeof(int64_t);
}

/* Grows the all-gather buffers to N rows and the per-rank counts to P ranks. */
static void scratch_reserve_gather(embedding_scratch *s, int64_t N, int64_t D, int P) {
    if (P > s->nranks) {
        free(s->counts);
        free(s->fcounts);
        s->counts = (int64_t *)cgnn_malloc((size_t)P * sizeof(int64_t));
        s->fcounts = (int64_t *)cgnn_malloc((size_t)P * sizeof(int64_t));
        s->bytes += 2 * (int64_t)(P - s->nranks) * (int64_t)sizeof(int64_t);
        s->nranks = P;
    }
    if (N <= s->gcap && s->gcap > 0) return;
    int64_t cap = s->gcap + s->gcap / 2;
    if (cap < N) cap = N;
    if (cap < 64) cap = 64;
    s->bytes -= s->gcap * ((int64_t)sizeof(int64_t) + 2 * D * (int64_t)sizeof(float));
    free(s->all_ids);
    free(s->all_grads);
    free(s->send);
    s->gcap = cap;
    s->all_ids = (int64_t *)cgnn_malloc((size_t)cap * sizeof(int64_t));
    s->all_grads = (float *)cgnn_aligned_alloc((size_t)cap * (size_t)D * sizeof(float));
    s->send = (float *)cgnn_aligned_alloc((size_t)cap * (size_t)D * sizeof(float));
    s->bytes += cap * ((int64_t)sizeof(int64_t) + 2 * D * (int64_t)sizeof(float));
}

/* ---- init / free ------------------------------------------------------------------- */

/* Zero-filled anonymous memory of `bytes`, backed page by page on first write; NULL on failure. */
static float *map_zeroed(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : (float *)p;
}

/* Row r of the initial table: D standard normal draws from the stream rng_key(seed, r), in
 * pairs by Marsaglia's polar method in double (no trigonometry: twice as fast as Box-Muller,
 * which matters for 10^9 draws), rounded to float. */
static void init_row(float *w, int64_t D, uint64_t seed, int64_t r) {
    rng s;
    rng_init(&s, rng_key(seed, (uint64_t)r));
    for (int64_t j = 0; j < D; j += 2) {
        double u, v, q;
        do {
            u = 2.0 * rng_uniform(&s) - 1.0;
            v = 2.0 * rng_uniform(&s) - 1.0;
            q = u * u + v * v;
        } while (q >= 1.0 || q == 0.0);
        const double f = sqrt(-2.0 * log(q) / q);
        w[j] = (float)(u * f);
        if (j + 1 < D) w[j + 1] = (float)(v * f);
    }
}

int embedding_init(embedding_table *e, int64_t num_rows, int64_t dim, uint64_t seed, embedding_optim kind,
                   double lr, double beta1, double beta2, double eps, cgnn_err *err) {
    return embedding_init_keyed(e, num_rows, dim, seed, NULL, kind, lr, beta1, beta2, eps, err);
}

int embedding_init_keyed(embedding_table *e, int64_t num_rows, int64_t dim, uint64_t seed, const int64_t *key_ids,
                         embedding_optim kind, double lr, double beta1, double beta2, double eps, cgnn_err *err) {
    memset(e, 0, sizeof *e);
    if (kind < 0 || kind >= EMB_OPTIM_COUNT)
        return err_set(err, CGNN_ERR_INPUT, "embedding: unknown optimiser kind %d", (int)kind);
    const char *k = EMB_OPTIM_NAMES[kind];
    if (num_rows < 1) return err_set(err, CGNN_ERR_INPUT, "embedding: num_rows %lld must be >= 1", (long long)num_rows);
    if (dim < 1) return err_set(err, CGNN_ERR_INPUT, "embedding: dim %lld must be >= 1", (long long)dim);
    if (num_rows > INT64_MAX / 4 / dim || (uint64_t)(num_rows * dim * 4) > (uint64_t)SIZE_MAX)
        return err_set(err, CGNN_ERR_INPUT, "embedding: %lld x %lld table is too large", (long long)num_rows,
                       (long long)dim);
    if (kind == EMB_OPTIM_SPARSE_ADAM) {
        if (!(lr > 0.0) || !isfinite(lr))
            return err_set(err, CGNN_ERR_INPUT, "embedding optimizer %s: lr: invalid learning rate %g (must be > 0)",
                           k, lr);
        if (!(eps > 0.0) || !isfinite(eps))
            return err_set(err, CGNN_ERR_INPUT, "embedding optimizer %s: eps: invalid value %g (must be > 0)", k, eps);
        if (!(beta1 >= 0.0 && beta1 < 1.0))
            return err_set(err, CGNN_ERR_INPUT, "embedding optimizer %s: betas[0]: invalid value %g (must be in [0, 1))",
                           k, beta1);
        if (!(beta2 >= 0.0 && beta2 < 1.0))
            return err_set(err, CGNN_ERR_INPUT, "embedding optimizer %s: betas[1]: invalid value %g (must be in [0, 1))",
                           k, beta2);
    } else {
        if (!(lr >= 0.0) || !isfinite(lr))
            return err_set(err, CGNN_ERR_INPUT, "embedding optimizer %s: lr: invalid learning rate %g (must be >= 0)",
                           k, lr);
        if (kind == EMB_OPTIM_ADAGRAD && (!(eps >= 0.0) || !isfinite(eps)))
            return err_set(err, CGNN_ERR_INPUT, "embedding optimizer %s: eps: invalid value %g (must be >= 0)", k, eps);
    }
    const size_t bytes = (size_t)num_rows * (size_t)dim * sizeof(float);
    void *w = NULL;
    if (posix_memalign(&w, 64, bytes) != 0)
        return err_set(err, CGNN_ERR_RUNTIME, "embedding: out of memory for the %lld x %lld table (%.2f GB)",
                       (long long)num_rows, (long long)dim, (double)bytes / 1e9);
    e->weight = (float *)w;
    e->num_rows = num_rows;
    e->dim = dim;
    e->kind = kind;
    e->lr = lr;
    e->beta1 = beta1;
    e->beta2 = beta2;
    e->eps = eps;
    e->scratch = (embedding_scratch *)cgnn_calloc(1, sizeof(embedding_scratch));
    if (kind != EMB_OPTIM_SGD) {
        e->state_map_bytes = bytes;
        if (!(e->m = map_zeroed(bytes)) || (kind == EMB_OPTIM_SPARSE_ADAM && !(e->v = map_zeroed(bytes)))) {
            embedding_free(e);
            return err_set(err, CGNN_ERR_RUNTIME, "embedding optimizer %s: cannot map %.2f GB of optimiser state", k,
                           (double)bytes / 1e9);
        }
    }
#pragma omp parallel for schedule(static) if (num_rows * dim >= EMB_PAR_MIN)
    for (int64_t r = 0; r < num_rows; r++) init_row(e->weight + r * dim, dim, seed, key_ids ? key_ids[r] : r);
    return 0;
}

int embedding_scale_init(embedding_table *e, double std, cgnn_err *err) {
    CGNN_CHECK(e && e->weight);
    if (!(std > 0.0) || !isfinite(std))
        return err_set(err, CGNN_ERR_INPUT, "embedding: init std %g must be > 0 and finite", std);
    if (std == 1.0) return 0;
    const int64_t n = e->num_rows * e->dim;
    float *w = e->weight;
#pragma omp parallel for schedule(static) if (n >= EMB_PAR_MIN)
    for (int64_t k = 0; k < n; k++) w[k] = (float)(std * (double)w[k]);
    return 0;
}

int embedding_set_weight_decay(embedding_table *e, double wd, cgnn_err *err) {
    CGNN_CHECK(e);
    if (!(wd >= 0.0) || !isfinite(wd))
        return err_set(err, CGNN_ERR_INPUT, "embedding optimizer %s: weight_decay: invalid value %g (must be >= 0)",
                       EMB_OPTIM_NAMES[e->kind], wd);
    e->weight_decay = wd;
    return 0;
}

double embedding_batch_l2(float *grads, const float *rows, const int32_t *slots, int64_t n, int64_t stride,
                          int64_t col, int64_t D, double coef) {
    CGNN_CHECK(n >= 0 && col >= 0 && stride >= col + D && (n == 0 || (grads && rows && slots)));
    const float c = (float)coef;
    double sq = 0.0;
    for (int64_t s = 0; s < n; s++) {
        const int64_t r = slots[s];
        CGNN_CHECK(r >= 0);
        const float *x = rows + r * stride + col;
        float *g = grads + r * stride + col;
        for (int64_t j = 0; j < D; j++) {
            sq += (double)x[j] * (double)x[j];
            g[j] += c * x[j];
        }
    }
    return 0.5 * coef * sq;
}

void embedding_free(embedding_table *e) {
    if (!e) return;
    free(e->weight);
    if (e->m) munmap(e->m, e->state_map_bytes);
    if (e->v) munmap(e->v, e->state_map_bytes);
    scratch_free(e->scratch);
    memset(e, 0, sizeof *e);
}

int64_t embedding_optim_state_bytes(const embedding_table *e) {
    return (int64_t)e->state_map_bytes * ((e->m != NULL) + (e->v != NULL));
}

int64_t embedding_state_bytes(const embedding_table *e) {
    return e->num_rows * e->dim * (int64_t)sizeof(float) + embedding_optim_state_bytes(e) +
           (e->scratch ? e->scratch->bytes : 0);
}

/* ---- gather -------------------------------------------------------------------------- */

void embedding_gather(const embedding_table *e, const int64_t *ids, int64_t n, float *out, int64_t stride,
                      int64_t col) {
    const int64_t D = e->dim, R = e->num_rows;
    CGNN_CHECK(n >= 0 && col >= 0 && stride >= col + D && (n == 0 || (ids && out)));
#pragma omp parallel for schedule(static) if (n * D >= EMB_PAR_MIN)
    for (int64_t i = 0; i < n; i++) {
        const int64_t id = ids[i];
        CGNN_CHECK(id >= 0 && id < R);
        memcpy(out + i * stride + col, e->weight + id * D, (size_t)D * sizeof(float));
    }
}

/* ---- the update ---------------------------------------------------------------------- */

/* Per-step constants, rounded to float as ATen rounds a Python scalar meeting a float tensor. */
typedef struct emb_k {
    float omb1, omb2;  /* 1 - beta1, 1 - beta2 (from double) */
    float eps;
    float neg_step;    /* SparseAdam: -(lr sqrt(1 - b2^t) / (1 - b1^t)), from double */
    float neg_lr;      /* Adagrad, SGD: -lr */
} emb_k;

static emb_k step_constants(const embedding_table *e, double lr, int64_t t) {
    emb_k k;
    memset(&k, 0, sizeof k);
    k.omb1 = (float)(1.0 - e->beta1);
    k.omb2 = (float)(1.0 - e->beta2);
    k.eps = (float)e->eps;
    k.neg_lr = (float)(-lr);
    if (e->kind == EMB_OPTIM_SPARSE_ADAM) {
        const double bc1 = 1.0 - pow(e->beta1, (double)t), bc2 = 1.0 - pow(e->beta2, (double)t);
        k.neg_step = (float)(-(lr * sqrt(bc2) / bc1));
    }
    return k;
}

/* SparseAdam on one row of D elements (p, m, v the row's parameters and moments, g its merged
 * gradient), element j as in the scalar loop below; SSE four at a time where available —
 * sqrtps and divps are correctly rounded, so the bits are the scalar ones. */
static inline void adam_row(float *restrict p, float *restrict m, float *restrict v, const float *restrict g,
                            int64_t D, const emb_k *k) {
    int64_t j = 0;
#if defined(__SSE2__)
    const __m128 omb1 = _mm_set1_ps(k->omb1), omb2 = _mm_set1_ps(k->omb2), eps = _mm_set1_ps(k->eps),
                 step = _mm_set1_ps(k->neg_step);
    for (; j + 4 <= D; j += 4) {
        __m128 gj = _mm_loadu_ps(g + j), mo = _mm_loadu_ps(m + j), vo = _mm_loadu_ps(v + j);
        __m128 mn = _mm_add_ps(mo, _mm_mul_ps(_mm_sub_ps(gj, mo), omb1));
        __m128 vn = _mm_add_ps(vo, _mm_mul_ps(_mm_sub_ps(_mm_mul_ps(gj, gj), vo), omb2));
        _mm_storeu_ps(m + j, mn);
        _mm_storeu_ps(v + j, vn);
        __m128 denom = _mm_add_ps(_mm_sqrt_ps(vn), eps);
        _mm_storeu_ps(p + j, _mm_add_ps(_mm_loadu_ps(p + j), _mm_mul_ps(step, _mm_div_ps(mn, denom))));
    }
#endif
    for (; j < D; j++) {
        const float mn = m[j] + (g[j] - m[j]) * k->omb1;
        const float vn = v[j] + (g[j] * g[j] - v[j]) * k->omb2;
        m[j] = mn;
        v[j] = vn;
        p[j] = p[j] + k->neg_step * (mn / (sqrtf(vn) + k->eps));
    }
}

/* Adagrad on one row (s the row's state_sum). */
static inline void adagrad_row(float *restrict p, float *restrict s, const float *restrict g, int64_t D,
                               const emb_k *k) {
    int64_t j = 0;
#if defined(__SSE2__)
    const __m128 eps = _mm_set1_ps(k->eps), nlr = _mm_set1_ps(k->neg_lr);
    for (; j + 4 <= D; j += 4) {
        __m128 gj = _mm_loadu_ps(g + j);
        __m128 sn = _mm_add_ps(_mm_loadu_ps(s + j), _mm_mul_ps(gj, gj));
        _mm_storeu_ps(s + j, sn);
        __m128 std = _mm_add_ps(_mm_sqrt_ps(sn), eps);
        _mm_storeu_ps(p + j, _mm_add_ps(_mm_loadu_ps(p + j), _mm_mul_ps(nlr, _mm_div_ps(gj, std))));
    }
#endif
    for (; j < D; j++) {
        const float sn = s[j] + g[j] * g[j];
        s[j] = sn;
        p[j] = p[j] + k->neg_lr * (g[j] / (sqrtf(sn) + k->eps));
    }
}

static inline void sgd_row(float *restrict p, const float *restrict g, int64_t D, const emb_k *k) {
    for (int64_t j = 0; j < D; j++) p[j] = p[j] + k->neg_lr * g[j];
}

/* The update of rows ids[0..n) (distinct) from gradient rows at grads + i*gstride + gcol;
 * parallel over rows. */
static void apply_rows(embedding_table *e, const int64_t *ids, const float *grads, int64_t n, int64_t gstride,
                       int64_t gcol, const emb_k *k) {
    const int64_t D = e->dim;
    float *W = e->weight, *M = e->m, *V = e->v;
    switch (e->kind) {
    case EMB_OPTIM_SPARSE_ADAM:
#pragma omp parallel for schedule(static) if (n * D >= EMB_PAR_MIN)
        for (int64_t i = 0; i < n; i++) {
            const int64_t r = ids[i] * D;
            adam_row(W + r, M + r, V + r, grads + i * gstride + gcol, D, k);
        }
        break;
    case EMB_OPTIM_ADAGRAD:
#pragma omp parallel for schedule(static) if (n * D >= EMB_PAR_MIN)
        for (int64_t i = 0; i < n; i++) {
            const int64_t r = ids[i] * D;
            adagrad_row(W + r, M + r, grads + i * gstride + gcol, D, k);
        }
        break;
    case EMB_OPTIM_SGD:
#pragma omp parallel for schedule(static) if (n * D >= EMB_PAR_MIN)
        for (int64_t i = 0; i < n; i++) sgd_row(W + ids[i] * D, grads + i * gstride + gcol, D, k);
        break;
    default: CGNN_CHECK(!"unknown embedding optimiser");
    }
}

void embedding_apply_ref(embedding_table *e, const int64_t *ids, const float *grads, int64_t n, double lr) {
    CGNN_CHECK(e && e->weight && n >= 0 && (n == 0 || (ids && grads)));
    e->step++;
    const emb_k k = step_constants(e, lr, e->step);
    const int64_t D = e->dim;
    for (int64_t i = 0; i < n; i++) {
        CGNN_CHECK(ids[i] >= 0 && ids[i] < e->num_rows);
        for (int64_t j = 0; j < D; j++) {
            const int64_t x = ids[i] * D + j;
            float g = grads[i * D + j];
            if (e->weight_decay != 0.0) g = g + (float)e->weight_decay * e->weight[x]; /* torch's grad.add(p, alpha=wd) */
            if (e->kind == EMB_OPTIM_SPARSE_ADAM) {
                /* torch: upd = (g - m)(1-b1); m += upd; numer = upd + m_old (= the new m) */
                const float m_upd = (g - e->m[x]) * k.omb1;
                const float v_upd = (g * g - e->v[x]) * k.omb2;
                e->m[x] = e->m[x] + m_upd;
                e->v[x] = e->v[x] + v_upd;
                const float denom = sqrtf(e->v[x]) + k.eps;
                e->weight[x] = e->weight[x] + k.neg_step * (e->m[x] / denom);
            } else if (e->kind == EMB_OPTIM_ADAGRAD) {
                e->m[x] = e->m[x] + g * g;
                const float std = sqrtf(e->m[x]) + k.eps;
                e->weight[x] = e->weight[x] + k.neg_lr * (g / std);
            } else {
                e->weight[x] = e->weight[x] + k.neg_lr * g;
            }
        }
    }
}

/* ---- merge --------------------------------------------------------------------------- */

/* Distinct ids of ids[0..N) into s->uniq (order of first appearance) with, for each, the chain
 * head -> next -> ... of its input rows in input order. Returns U, or -1 with *bad = the
 * position of the first id outside [0, R). Sequential: the result is a function of the input
 * alone. */
static int64_t merge_ids(embedding_scratch *s, const int64_t *ids, int64_t N, int64_t R, int64_t *bad) {
    int64_t hsize = 16;
    while (hsize < 2 * N) hsize *= 2;
    CGNN_CHECK(hsize <= s->hcap);
    const uint64_t mask = (uint64_t)hsize - 1;
    memset(s->hkey, 0xff, (size_t)hsize * sizeof(int64_t)); /* every slot -1: empty */
    int64_t U = 0;
    for (int64_t i = 0; i < N; i++) {
        const int64_t id = ids[i];
        if (id < 0 || id >= R) {
            *bad = i;
            return -1;
        }
        uint64_t h = rng_mix64((uint64_t)id) & mask;
        while (s->hkey[h] != -1 && s->hkey[h] != id) h = (h + 1) & mask;
        s->next[i] = -1;
        if (s->hkey[h] == -1) {
            s->hkey[h] = id;
            s->hval[h] = U;
            s->uniq[U] = id;
            s->head[U] = s->tail[U] = i;
            U++;
        } else {
            const int64_t u = s->hval[h];
            s->next[s->tail[u]] = i;
            s->tail[u] = i;
        }
    }
    return U;
}

/* merged row u = (Σ of u's chain rows, in chain order) * inv; parallel over distinct ids. */
static void merge_rows(embedding_scratch *s, const float *grads, int64_t gstride, int64_t gcol, int64_t U, int64_t D,
                       float inv) {
    float *merged = s->merged;
    const int64_t *head = s->head, *next = s->next;
#pragma omp parallel for schedule(static) if (U * D >= EMB_PAR_MIN)
    for (int64_t u = 0; u < U; u++) {
        float *dst = merged + u * D;
        int64_t i = head[u];
        memcpy(dst, grads + i * gstride + gcol, (size_t)D * sizeof(float));
        for (i = next[i]; i >= 0; i = next[i]) {
            const float *src = grads + i * gstride + gcol;
            for (int64_t j = 0; j < D; j++) dst[j] = dst[j] + src[j];
        }
        for (int64_t j = 0; j < D; j++) dst[j] = dst[j] * inv;
    }
}

/* merged row u += wd · (the row's weight), torch's grad.add(param, alpha=weight_decay) with the
 * scalar rounded to float; parallel over distinct ids. */
static void decay_rows(const embedding_table *e, const int64_t *uniq, float *merged, int64_t U) {
    const int64_t D = e->dim;
    const float wd = (float)e->weight_decay;
#pragma omp parallel for schedule(static) if (U * D >= EMB_PAR_MIN)
    for (int64_t u = 0; u < U; u++) {
        float *g = merged + u * D;
        const float *p = e->weight + uniq[u] * D;
        for (int64_t j = 0; j < D; j++) g[j] = g[j] + wd * p[j];
    }
}

/* ---- one step ------------------------------------------------------------------------ */

static int merge_and_apply(embedding_table *e, const int64_t *all_ids, const float *all_grads, int64_t N,
                           int64_t gstride, int64_t gcol, double lr, double divisor, cgnn_err *err);

int embedding_sparse_step(embedding_table *e, const dist_ctx *d, const int64_t *ids, const float *grads, int64_t n,
                          int64_t stride, int64_t col, double lr, double divisor, cgnn_err *err) {
    CGNN_CHECK(e && e->weight && e->scratch);
    const int64_t D = e->dim;
    CGNN_CHECK(n >= 0 && (n == 0 || (ids && grads && col >= 0 && stride >= col + D)));
    CGNN_CHECK(divisor > 0.0 && isfinite(divisor) && lr >= 0.0 && isfinite(lr));
    embedding_scratch *s = e->scratch;
    const int P = d ? d->size : 1;
    const int64_t *all_ids = ids;
    const float *all_grads = grads;
    int64_t N = n, gstride = stride, gcol = col;
    if (P > 1) {
        /* 1. all-gather in rank order */
        scratch_reserve_gather(s, n, D, P);
        N = dist_allgather_counts(d, n, s->counts);
        scratch_reserve_gather(s, N, D, P);
        for (int r = 0; r < P; r++) s->fcounts[r] = s->counts[r] * D;
        static const int64_t no_id = 0;
        static const float no_grad = 0.0f;
        const float *send = n > 0 ? grads : &no_grad;
        if (n > 0 && !(stride == D && col == 0)) {
            float *packed = s->send;
#pragma omp parallel for schedule(static) if (n * D >= EMB_PAR_MIN)
            for (int64_t i = 0; i < n; i++)
                memcpy(packed + i * D, grads + i * stride + col, (size_t)D * sizeof(float));
            send = packed;
        }
        dist_allgatherv_i64(d, n > 0 ? ids : &no_id, s->all_ids, s->counts);
        dist_allgatherv_f32(d, send, s->all_grads, s->fcounts);
        all_ids = s->all_ids;
        all_grads = s->all_grads;
        gstride = D;
        gcol = 0;
    }
    return merge_and_apply(e, all_ids, all_grads, N, gstride, gcol, lr, divisor, err);
}

/* Steps 2 to 4 on the gathered rows (table rows ids[0..N), gradient row i at
 * grads + i*gstride + gcol). */
static int merge_and_apply(embedding_table *e, const int64_t *all_ids, const float *all_grads, int64_t N,
                           int64_t gstride, int64_t gcol, double lr, double divisor, cgnn_err *err) {
    embedding_scratch *s = e->scratch;
    const int64_t D = e->dim;
    /* 2. distinct ids (and the range check, before anything changes) */
    scratch_reserve(s, N, D);
    int64_t bad = -1;
    const int64_t U = merge_ids(s, all_ids, N, e->num_rows, &bad);
    if (U < 0)
        return err_set(err, CGNN_ERR_INPUT, "embedding: row id %lld (row %lld of the step's %lld) is outside [0, %lld)",
                       (long long)all_ids[bad], (long long)bad, (long long)N, (long long)e->num_rows);
    e->step++;
    const emb_k k = step_constants(e, lr, e->step);
    const float inv = (float)(1.0 / divisor);
    if (U == N && inv == 1.0f && e->weight_decay == 0.0) {
        /* 4. distinct already and nothing to scale: update straight from the gradients */
        apply_rows(e, all_ids, all_grads, N, gstride, gcol, &k);
    } else {
        /* 3. (+ the lazy weight decay of the merged rows) + 4. */
        merge_rows(s, all_grads, gstride, gcol, U, D, inv);
        if (e->weight_decay != 0.0) decay_rows(e, s->uniq, s->merged, U);
        apply_rows(e, s->uniq, s->merged, U, D, 0, &k);
    }
    return 0;
}

/* ---- sharded by part ------------------------------------------------------------------ */

/* Grows *p (rows of `row` bytes) to hold n rows; cap in rows. Failure is fatal (cgnn_malloc's
 * reason: a rank returning here would strand the others in the next collective). */
static void *grow_rows(void *p, int64_t *cap, int64_t n, size_t row) {
    if (n <= *cap && p) return p;
    int64_t c = *cap + *cap / 2;
    if (c < n) c = n;
    if (c < 64) c = 64;
    void *q = realloc(p, (size_t)c * row);
    CGNN_CHECK(q != NULL);
    *cap = c;
    return q;
}

static int shard_owner(const embedding_shard *sh, int64_t v) {
    int lo = 0, hi = sh->num_parts;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (sh->part_start[mid] <= v) lo = mid;
        else hi = mid;
    }
    return lo;
}

int embedding_sparse_step_sharded(embedding_table *e, const dist_ctx *d, const embedding_shard *sh,
                                  const int64_t *ids, const float *grads, int64_t n, int64_t stride, int64_t col,
                                  double lr, double divisor, cgnn_err *err) {
    CGNN_CHECK(e && e->weight && e->scratch && d && sh);
    const int64_t D = e->dim, total = sh->part_start[sh->num_parts], first = sh->part_start[sh->part];
    CGNN_CHECK(n >= 0 && (n == 0 || (ids && grads && col >= 0 && stride >= col + D)));
    CGNN_CHECK(divisor > 0.0 && isfinite(divisor) && lr >= 0.0 && isfinite(lr));
    CGNN_CHECK(e->num_rows == sh->part_start[sh->part + 1] - first);
    embedding_scratch *s = e->scratch;
    const int W = d->size, P = sh->num_parts;
    /* every rank learns whether any rank holds an id outside the graph (then nothing changes) */
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (ids[i] < 0 || ids[i] >= total) bad = i;
    int64_t any_bad = bad >= 0;
    dist_allreduce_max_i64(d, &any_bad, 1);
    if (any_bad)
        return bad >= 0 ? err_set(err, CGNN_ERR_INPUT, "embedding: row id %lld (row %lld of the step's %lld) is outside [0, %lld)",
                                  (long long)ids[bad], (long long)bad, (long long)n, (long long)total)
                        : err_set(err, CGNN_ERR_INPUT, "embedding: another rank sent a row id outside [0, %lld)",
                                  (long long)total);
    if (W > s->nranks) {
        free(s->counts);
        free(s->fcounts);
        s->counts = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
        s->fcounts = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
        s->nranks = W;
        free(s->scounts);
        free(s->rcounts);
        free(s->sfill);
        s->scounts = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
        s->rcounts = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
        s->sfill = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
    } else if (!s->scounts) {
        s->scounts = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
        s->rcounts = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
        s->sfill = (int64_t *)cgnn_malloc((size_t)W * sizeof(int64_t));
    }
    /* 1. route: row i goes to every rank holding its part (rank r holds part r % P), in input
     * order, so each receiver sees every sender's rows for it in the order the replicated
     * all-gather would list them */
    for (int r = 0; r < W; r++) s->scounts[r] = 0;
    for (int64_t i = 0; i < n; i++) {
        const int o = shard_owner(sh, ids[i]);
        for (int r = o; r < W; r += P) s->scounts[r]++;
    }
    int64_t S = 0;
    for (int r = 0; r < W; r++) {
        s->sfill[r] = S;
        S += s->scounts[r];
    }
    s->send_ids = grow_rows(s->send_ids, &s->scap, S, sizeof(int64_t));
    s->send_grads = grow_rows(s->send_grads, &s->sgcap, S, (size_t)D * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        const int o = shard_owner(sh, ids[i]);
        for (int r = o; r < W; r += P) {
            const int64_t at = s->sfill[r]++;
            s->send_ids[at] = ids[i];
            memcpy(s->send_grads + at * D, grads + i * stride + col, (size_t)D * sizeof(float));
        }
    }
    dist_alltoall_counts(d, s->scounts, s->rcounts);
    int64_t R = 0;
    for (int r = 0; r < W; r++) R += s->rcounts[r];
    s->recv_ids = grow_rows(s->recv_ids, &s->rcap, R, sizeof(int64_t));
    s->recv_grads = grow_rows(s->recv_grads, &s->rgcap, R, (size_t)D * sizeof(float));
    dist_alltoallv_rows(d, s->send_ids, s->scounts, s->recv_ids, s->rcounts, sizeof(int64_t));
    dist_alltoallv_rows(d, s->send_grads, s->scounts, s->recv_grads, s->rcounts, (size_t)D * sizeof(float));
    /* 2.-4. on the own rows (local row = id - first; merge_ids range-checks them) */
    for (int64_t i = 0; i < R; i++) s->recv_ids[i] -= first;
    const int rc = merge_and_apply(e, s->recv_ids, s->recv_grads, R, D, 0, lr, divisor, err);
    /* no rank reads a remote row of the next step (sample/part_rpc's EMB requests) before
     * every owner has applied this one */
    dist_barrier(d);
    return rc;
}
