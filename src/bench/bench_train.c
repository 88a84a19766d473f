/* bench_train.c — `cgnn bench train`: the training step measured against the machine's limits.
 *
 * One pipelined loader (`workers` sampler threads, prefetch queue) feeds warmup + steps rounds.
 * Round k, holding batch k:
 *   1. the pipelined step: loader_next (the wait) -> zero_grad -> forward -> softmax CE ->
 *      backward -> Adam, while the sampler threads build the batch that release(k-1) made room
 *      for — one batch per step, as in training;
 *   2. compute alone: the same step again on the same, fully built batch, from a second copy of
 *      the parameters and Adam state that follows the same trajectory (so both copies see the
 *      same losses; the report checks it). The producers are idle by then when a batch takes
 *      them less than a step (the report prints both and flags it otherwise);
 *   3. the yardstick GEMMs: every GEMM of step 1 (shapes, transposes, beta from ops_gemm_stats)
 *      replayed through cblas_sgemm on scratch operands with the same threads.
 * Interleaving the three per round exposes them to the same background load: the machine is
 * shared and its speed drifts by tens of percent over a minute.
 * Every GEMM of steps 1 and 2 is counted and timed (ops_gemm_stats) and the FLOPs are checked
 * against bench_train_gemm_flops at every step.
 * Afterwards, with the model freed: the producers alone (a synchronous loader over the same
 * batches: uncontended sample and gather times), a 2048^3 sgemm, memcpy bandwidth over one
 * batch's gathered bytes (at least 64 MiB, so DRAM and not cache) with 1 and all threads.
 *
 * Roofline bound of a step = its GEMM FLOPs at the replayed sgemm rate + its gathered bytes at
 * the all-thread copy bandwidth (optionally + its sampling at the uncontended rate spread over
 * the compute threads); "fraction of roofline" = bound / median pipelined step.
 * Every figure is a median over the timed rounds (or over repeats of a yardstick).
 *
 * A typed dataset (HeteroSAGE / RGCN) runs the typed path of `cgnn train` on its node
 * classification task: the typed sampler with --fanouts on every edge type, each featured type's
 * rows gathered (the gather figures count every featured type's rows), each featureless type a
 * learnable table as the trainer makes it (its rows written into the batch before the forward —
 * counted in forward — and its sparse step counted in optimiser; the compute-alone copy has its
 * own tables). Every GEMM goes through ops_gemm_stats (ops_linear_* and ops_gemm); a typed
 * batch's GEMM count varies when a node type is absent from some batches, and then the per-GEMM
 * table is left out.
 */
#include <cblas.h>
#undef I /* OpenBLAS's cblas.h pulls in <complex.h> */
#include <dirent.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "graph/csc.h"
#include "graph/typed_graph.h"
#include "io/dataset.h"
#include "nn/blas.h"
#include "nn/embedding.h"
#include "nn/model.h"
#include "nn/ops.h"
#include "optim/optim.h"
#include "sample/loader.h"
#include "util/rng.h"
#include "util/timer.h"

#define BENCH_SQUARE_REPS 5 /* 2048^3 sgemm repeats */
#define BENCH_COPY_REPS 5
#define BENCH_MIN_COPY_BYTES ((size_t)64 << 20)

/* bench_train_gemm_flops of HGT (nn/hgt.c) on a typed batch (F = hidden, nh heads of D = F / nh):
 * per layer kqv_lin on every source row of each type and out_lin on its destination rows
 * (forward, dW, dX each), per edge type with sampled edges 2 per-head products on its source rows
 * forward and 4 backward (D x D each); lin on the seed rows (forward, dW, dX); the input stage as
 * the other typed models. */
static double hgt_gemm_flops(const model_config *cfg, const minibatch *mb) {
    const model_types *ty = cfg->types;
    const minibatch_typed *tb = mb->typed;
    const int L = cfg->num_layers, T = ty->num_node_types, K = ty->num_edge_types;
    const double F = (double)cfg->hidden_dim, nh = (double)cfg->num_heads, D = F / nh;
    double flops = 0.0;
    for (int t = 0; t < T; t++) {
        const double n = (double)tb->num_nodes[t][L];
        if (n > 0) flops += 2.0 * n * (double)ty->in_dim[t] * F * (ty->input_grad[t] ? 3.0 : 2.0);
    }
    for (int l = 0; l < L; l++) {
        for (int t = 0; t < T; t++)
            flops += 3.0 * 2.0 * (double)tb->num_nodes[t][L - l] * F * 3.0 * F +
                     3.0 * 2.0 * (double)tb->num_nodes[t][L - 1 - l] * F * F;
        for (int e = 0; e < K; e++) {
            const sampler_block *b = &tb->blocks[l * K + e];
            if (b->num_edges > 0) flops += 6.0 * nh * 2.0 * (double)b->num_src * D * D;
        }
    }
    flops += 3.0 * 2.0 * (double)tb->num_nodes[ty->output_type][0] * F * (double)cfg->out_dim;
    return flops;
}

/* bench_train_gemm_flops of a typed model (HeteroSAGE, RGCN; nn/hetero.c; HGT above) on a typed
 * batch; -1 for a typed kind whose GEMMs it does not know. */
static double typed_gemm_flops(const model_config *cfg, const minibatch *mb) {
    const model_types *ty = cfg->types;
    const minibatch_typed *tb = mb->typed;
    const int L = cfg->num_layers, T = ty->num_node_types, K = ty->num_edge_types;
    const double H = (double)cfg->hidden_dim;
    if (cfg->kind == MODEL_HGT) return hgt_gemm_flops(cfg, mb);
    if (cfg->kind != MODEL_HETERO_SAGE && cfg->kind != MODEL_RGCN) return -1;
    double flops = 0.0;
    for (int t = 0; t < T; t++) { /* input stage: forward + weight gradient (+ input gradient: tables) */
        const double n = (double)tb->num_nodes[t][L];
        if (n > 0) flops += 2.0 * n * (double)ty->in_dim[t] * H * (ty->input_grad[t] ? 3.0 : 2.0);
    }
    for (int l = 0; l < L; l++) {
        const double I = H, O = l == L - 1 ? (double)cfg->out_dim : H;
        for (int e = 0; e < K; e++) { /* per edge type with destinations: forward, dW and dX of each linear */
            const double nd = (double)tb->num_nodes[ty->etype_dst[e]][L - 1 - l];
            if (nd > 0) flops += (cfg->kind == MODEL_HETERO_SAGE ? 2.0 : 1.0) * 3.0 * 2.0 * nd * I * O;
        }
        if (cfg->kind != MODEL_RGCN) continue;
        for (int t = 0; t < T; t++) { /* root: forward, dW, dX */
            const double nd = (double)tb->num_nodes[t][L - 1 - l];
            if (nd > 0) flops += 3.0 * 2.0 * nd * I * O;
        }
        if (ty->num_bases > 0) /* W_r = comp · V, and its two gradients */
            flops += 3.0 * 2.0 * (double)K * (double)ty->num_bases * I * O;
    }
    return flops;
}

double bench_train_gemm_flops(const model_config *cfg, const minibatch *mb) {
    if (cfg->types) return typed_gemm_flops(cfg, mb);
    const int L = cfg->num_layers;
    double flops = 0.0;
    for (int l = 0; l < L; l++) {
        const sampler_block *b = &mb->blocks[l];
        const int last = l == L - 1;
        const double in = (double)(l == 0 ? cfg->in_dim : cfg->hidden_dim);
        double rows = (double)b->num_dst, out = (double)(last ? cfg->out_dim : cfg->hidden_dim), linears = 1;
        switch (cfg->kind) {
        case MODEL_GRAPHSAGE: linears = 2; break; /* lin_l on the mean, lin_r on the dst rows */
        case MODEL_GCN: break;
        case MODEL_GAT: /* z = h W^T on every source row; the last layer has H heads of out_dim */
            rows = (double)b->num_src;
            if (last) out = (double)cfg->num_heads * (double)cfg->out_dim;
            break;
        default: CGNN_CHECK(0);
        }
        /* forward + weight gradient, + input gradient above layer 0 (model_backward skips it) */
        flops += linears * 2.0 * rows * in * out * (l > 0 ? 3.0 : 2.0);
    }
    return flops;
}

/* ---- helpers ---------------------------------------------------------------------------- */

/* One timed step (or, for the producer run, one batch); seconds. */
typedef struct step_rec {
    double step, wait, forward, backward, optim; /* forward includes zero_grad and the loss */
    double gemm_seconds, gemm_flops;
    double replay_seconds;                       /* the step's GEMMs replayed (pipelined only) */
    double sample_seconds, gather_seconds;       /* the producer's, for this batch */
    double items, edges, input_nodes;
    double gathered_bytes;                       /* feature rows gathered (float32 out + int64 id) */
    double gemm_calls;
    double loss;
} step_rec;

/* Median / mean of the double field at `offset` of recs[0..n) (scratch: tmp[n]). */
static double rec_median(const step_rec *recs, int n, size_t offset, double *tmp) {
    for (int i = 0; i < n; i++) tmp[i] = *(const double *)((const char *)&recs[i] + offset);
    return bench_median(tmp, n);
}
static double rec_mean(const step_rec *recs, int n, size_t offset) {
    double s = 0;
    for (int i = 0; i < n; i++) s += *(const double *)((const char *)&recs[i] + offset);
    return n ? s / n : 0.0;
}
#define REC_MEDIAN(recs, n, f, tmp) rec_median((recs), (n), offsetof(step_rec, f), (tmp))
#define REC_MEAN(recs, n, f) rec_mean((recs), (n), offsetof(step_rec, f))

/* a / b for timings that may round to 0 on tiny inputs */
static double rate(double a, double b) { return a / (b > 1e-9 ? b : 1e-9); }

/* Sum of the sizes of the regular files under dir (recursively; symlinks not followed). */
static double dir_bytes(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    double total = 0;
    struct dirent *e;
    char path[4096 + 256];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        if (S_ISREG(st.st_mode)) total += (double)st.st_size;
        else if (S_ISDIR(st.st_mode)) total += dir_bytes(path);
    }
    closedir(d);
    return total;
}

/* CPU seconds used so far by every process on the machine (/proc/stat: all but idle and
 * iowait), or -1 where /proc/stat cannot be read; and by this process. Their difference over
 * the run is what other processes took from the cores — the noise on a shared machine. */
static double machine_cpu_seconds(void) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long v[8] = {0};
    const int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                         &v[6], &v[7]);
    fclose(f);
    const long hz = sysconf(_SC_CLK_TCK);
    if (n < 4 || hz <= 0) return -1;
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)hz; /* user nice system irq softirq steal */
}
static double self_cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

/* src as the inside of a JSON string (quotes, backslashes and control characters escaped). */
static void json_escape(char *dst, size_t n, const char *src) {
    size_t k = 0;
    for (; *src && k + 7 < n; src++) {
        const unsigned char ch = (unsigned char)*src;
        if (ch == '"' || ch == '\\') {
            dst[k++] = '\\';
            dst[k++] = (char)ch;
        } else if (ch < 0x20) {
            k += (size_t)snprintf(dst + k, n - k, "\\u%04x", ch);
        } else {
            dst[k++] = (char)ch;
        }
    }
    dst[k] = 0;
}

/* "met" or "missed by X<unit>" for a target. */
static const char *verdict(char *buf, size_t n, int met, double by, const char *unit) {
    if (met) snprintf(buf, n, "met");
    else snprintf(buf, n, "missed by %.1f%s", by, unit);
    return buf;
}

/* ---- the sgemm yardstick ---------------------------------------------------------------- */

/* Scratch operands of the replayed GEMMs: grown on demand (outside the timed regions), filled
 * with deterministic values in [-0.5, 0.5) — never left as untouched zero pages, which would
 * all read one physical page and flatter the GEMM. */
typedef struct gemm_operands {
    float *buf[3];            /* A, B, C */
    int64_t len[3];
} gemm_operands;

static int operands_reserve(gemm_operands *g, const ops_gemm_call *k) {
    const int64_t need[3] = {k->M * k->K, k->K * k->N, k->M * k->N};
    for (int i = 0; i < 3; i++) {
        if (need[i] <= g->len[i]) continue;
        const int64_t n = need[i] + need[i] / 32; /* headroom: batch shapes vary a little */
        free(g->buf[i]);
        g->buf[i] = malloc((size_t)n * sizeof(float));
        g->len[i] = g->buf[i] ? n : 0;
        if (!g->buf[i]) return -1;
        float *x = g->buf[i];
#pragma omp parallel for schedule(static)
        for (int64_t j = 0; j < n; j++) x[j] = (float)((uint64_t)j * 2654435761u % 1024u) / 1024.0f - 0.5f;
    }
    return 0;
}

static void operands_free(gemm_operands *g) {
    for (int i = 0; i < 3; i++) free(g->buf[i]);
    memset(g, 0, sizeof *g);
}

/* Runs call k once through cblas_sgemm on the operands (reserved); returns its seconds. */
static double replay_call(const gemm_operands *g, const ops_gemm_call *k) {
    const double t0 = timer_now();
    cblas_sgemm(CblasRowMajor, k->trans_a ? CblasTrans : CblasNoTrans, k->trans_b ? CblasTrans : CblasNoTrans,
                (int)k->M, (int)k->N, (int)k->K, 1.0f, g->buf[0], (int)(k->trans_a ? k->M : k->K), g->buf[1],
                (int)(k->trans_b ? k->K : k->N), k->beta, g->buf[2], (int)k->N);
    return timer_now() - t0;
}

/* ---- setup ------------------------------------------------------------------------------ */

typedef struct bench_ctx {
    const bench_train_opts *o;
    int threads;
    dataset ds;
    csc_graph g;
    const ds_split *train;
    const ds_feature *feat;
    loader_config lc;
    model m;
    optim_config ocfg;
    optim opt_p, opt_a;       /* Adam state of the pipelined / compute-alone copies */
    float *params_a;          /* (num_params) the compute-alone copy's parameters */
    float *params_save;       /* (num_params) the pipelined copy's, while the other one runs */
    float *dlogits;           /* (max seeds, out_dim) */
    /* a typed dataset: its indexes, the task's node type, each type's input; the featureless
     * types' tables, one set per parameter copy (pipelined, compute alone) */
    model_kind kind;          /* --model, or HeteroSAGE by default on a typed dataset */
    int typed;
    typed_graph tg;
    int seed_type;
    const ds_feature *tfeat[MINIBATCH_MAX_NODE_TYPES];
    int64_t twidth[MINIBATCH_MAX_NODE_TYPES];
    model_types mtypes;
    embedding_table temb[2][MINIBATCH_MAX_NODE_TYPES];
    int have_temb[MINIBATCH_MAX_NODE_TYPES];
} bench_ctx;

/* bench_setup on a typed dataset: the per-edge-type indexes, --fanouts on every edge type, each
 * type's input (its feature, or a learnable table of hidden width with SparseAdam, as cgnn train
 * makes it by default), the typed model sized for the loader's batches. */
static int setup_typed(bench_ctx *c, const ds_task *task, int64_t out_dim, cgnn_err *err) {
    const bench_train_opts *o = c->o;
    const dataset *ds = &c->ds;
    const int T = ds->num_node_types, K = ds->num_edge_types, L = o->num_layers;
    if (typed_graph_open(&c->tg, ds, c->threads, err) != 0) return -1;
    c->seed_type = task->type;
    memset(&c->lc, 0, sizeof c->lc);
    c->lc.typed = &c->tg;
    c->lc.typed_sampler.num_layers = L;
    for (int h = 0; h < L; h++)
        for (int e = 0; e < K; e++) c->lc.typed_sampler.fanouts[h][e] = o->fanouts[h];
    const char *names[MINIBATCH_MAX_EDGE_TYPES];
    for (int e = 0; e < K; e++) names[e] = ds->edge_types[e].name;
    if (typed_sampler_config_check(&c->tg, &c->lc.typed_sampler, names, err) != 0) return err_prefix(err, "--fanouts: ");
    c->lc.seed_type = c->seed_type;
    c->lc.batch_size = o->batch_size;
    c->lc.shuffle = 1;
    c->lc.seed = o->seed;
    c->lc.world_size = 1;
    c->lc.gather_threads = o->gather_threads;
    model_types *ty = &c->mtypes;
    memset(ty, 0, sizeof *ty);
    ty->num_node_types = T;
    ty->num_edge_types = K;
    for (int t = 0; t < T; t++) {
        snprintf(ty->node_type[t], MODEL_TYPE_NAME_MAX, "%s", ds->node_types[t].name);
        const ds_feature *f = dataset_find_feature(ds, DS_DOMAIN_NODE, t, "feat");
        for (int i = 0; i < ds->num_features && !f; i++)
            if (ds->features[i].domain == DS_DOMAIN_NODE && ds->features[i].type == t) f = &ds->features[i];
        c->tfeat[t] = f;
        c->twidth[t] = f ? f->dim : o->hidden;
        if (!f) {
            for (int k = 0; k < 2; k++)
                if (embedding_init(&c->temb[k][t], ds->node_types[t].num_nodes, o->hidden, o->seed ^ (uint64_t)(t + 1),
                                   EMB_OPTIM_SPARSE_ADAM, 0.003, 0.9, 0.999, 1e-8, err) != 0)
                    return -1;
            c->have_temb[t] = 1;
            ty->input_grad[t] = 1;
        }
        ty->in_dim[t] = c->twidth[t];
        c->lc.type_feature[t] = f;
        c->lc.type_width[t] = c->twidth[t];
    }
    model_types_set_edge_types(ty, ds);
    ty->output_type = c->seed_type;
    loader_typed_capacity(&c->lc, &ty->cap);
    model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.kind = c->kind;
    mc.num_layers = L;
    mc.hidden_dim = o->hidden;
    mc.out_dim = out_dim;
    mc.dropout = (float)o->dropout;
    mc.num_heads = o->heads; /* HGT */
    mc.types = ty;
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = L;
    cap.max_items = o->batch_size;
    if (model_init(&c->m, &mc, &cap, o->seed, err) != 0) return err_prefix(err, "bench train: model: ");
    optim_default_config(&c->ocfg, OPTIM_ADAM, 0.003);
    if (optim_init(&c->opt_p, &c->ocfg, c->m.num_params, err) != 0 ||
        optim_init(&c->opt_a, &c->ocfg, c->m.num_params, err) != 0)
        return -1;
    c->params_a = cgnn_malloc((size_t)c->m.num_params * sizeof(float));
    c->params_save = cgnn_malloc((size_t)c->m.num_params * sizeof(float));
    memcpy(c->params_a, c->m.params, (size_t)c->m.num_params * sizeof(float));
    c->dlogits = cgnn_malloc((size_t)(ty->cap.max_nodes[c->seed_type][0] + 1) * (size_t)out_dim * sizeof(float));
    return 0;
}

static int bench_setup(bench_ctx *c, cgnn_err *err) {
    const bench_train_opts *o = c->o;
    char meta[4096 + 32];
    struct stat st;
    snprintf(meta, sizeof meta, "%s/metadata.yaml", o->dataset);
    if (stat(o->dataset, &st) != 0 || (S_ISDIR(st.st_mode) && stat(meta, &st) != 0))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: no dataset there (no metadata.yaml); generate the products-scale graph with "
                       "`cgnn generate --preset products --out %s`, or pass --dataset DIR",
                       o->dataset, o->dataset);
    if (dataset_open(&c->ds, o->dataset, err) != 0) return -1;
    c->typed = dataset_is_typed(&c->ds);
    c->kind = c->typed && o->model_is_default ? MODEL_HETERO_SAGE : o->model;
    if (c->typed != model_kind_is_typed(c->kind))
        return err_set(err, CGNN_ERR_INPUT, "--model: %s is a %s model, but the dataset %s is %s%s",
                       model_kind_name(c->kind), model_kind_is_typed(c->kind) ? "typed" : "homogeneous", c->ds.dir,
                       c->typed ? "typed" : "not typed", c->typed ? ": use --model HeteroSAGE, RGCN or HGT" : "");
    if (c->typed && c->kind != MODEL_HETERO_SAGE && c->kind != MODEL_RGCN && c->kind != MODEL_HGT)
        return err_set(err, CGNN_ERR_INPUT, "--model: bench train has no GEMM accounting for %s (HeteroSAGE, RGCN and "
                       "HGT on typed datasets)", model_kind_name(c->kind));
    const ds_task *task = NULL;
    for (int t = 0; t < c->ds.num_tasks && !task; t++)
        if (c->ds.tasks[t].kind == DS_TASK_NODE_CLASSIFICATION) task = &c->ds.tasks[t];
    if (!task)
        return err_set(err, CGNN_ERR_INPUT, "%s: no node classification task (seeds + labels) in the dataset's tasks",
                       c->ds.dir);
    c->train = &task->splits[DS_SPLIT_TRAIN];
    if (!c->train->present || c->train->num_items < 1 || !c->train->labels)
        return err_set(err, CGNN_ERR_INPUT, "%s: task '%s' has no labelled train_set", c->ds.dir, task->name);
    int64_t out_dim = task->num_classes;
    for (int64_t i = 0; i < c->train->num_items; i++)
        if (c->train->labels[i] >= out_dim) out_dim = c->train->labels[i] + 1;
    if (c->typed) return setup_typed(c, task, out_dim, err);
    c->feat = dataset_find_feature(&c->ds, DS_DOMAIN_NODE, 0, "feat");
    for (int i = 0; i < c->ds.num_features && !c->feat; i++)
        if (c->ds.features[i].domain == DS_DOMAIN_NODE) c->feat = &c->ds.features[i];
    if (!c->feat) return err_set(err, CGNN_ERR_INPUT, "%s: no node features in feature_data", c->ds.dir);
    if (csc_open_cached(&c->g, &c->ds, 0, c->threads, err) != 0) return -1;

    memset(&c->lc, 0, sizeof c->lc);
    c->lc.sampler.num_layers = o->num_layers;
    memcpy(c->lc.sampler.fanouts, o->fanouts, sizeof c->lc.sampler.fanouts);
    c->lc.batch_size = o->batch_size;
    c->lc.shuffle = 1;
    c->lc.seed = o->seed;
    c->lc.world_size = 1;
    c->lc.feature = c->feat;
    c->lc.gather_threads = o->gather_threads;
    if (sampler_config_check(&c->lc.sampler, err) != 0) return err_prefix(err, "--fanouts: ");
    minibatch_capacity cap;
    sampler_capacity(&c->g, &c->lc.sampler, o->batch_size, c->feat->dim, &cap);
    model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.kind = c->kind;
    mc.num_layers = o->num_layers;
    mc.in_dim = c->feat->dim;
    mc.hidden_dim = o->hidden;
    mc.out_dim = out_dim;
    mc.num_heads = o->heads;
    mc.dropout = (float)o->dropout;
    if (model_init(&c->m, &mc, &cap, o->seed, err) != 0) return err_prefix(err, "bench train: model: ");
    optim_default_config(&c->ocfg, OPTIM_ADAM, 0.003);
    if (optim_init(&c->opt_p, &c->ocfg, c->m.num_params, err) != 0 ||
        optim_init(&c->opt_a, &c->ocfg, c->m.num_params, err) != 0)
        return -1;
    c->params_a = cgnn_malloc((size_t)c->m.num_params * sizeof(float));
    c->params_save = cgnn_malloc((size_t)c->m.num_params * sizeof(float));
    memcpy(c->params_a, c->m.params, (size_t)c->m.num_params * sizeof(float));
    c->dlogits = cgnn_malloc((size_t)(cap.max_nodes[0] + 1) * (size_t)out_dim * sizeof(float));
    return 0;
}

static void free_model(bench_ctx *c) {
    model_free(&c->m);
    optim_free(&c->opt_p);
    optim_free(&c->opt_a);
    free(c->params_a);
    free(c->params_save);
    free(c->dlogits);
    c->params_a = c->params_save = c->dlogits = NULL;
}

static void bench_teardown(bench_ctx *c) {
    free_model(c);
    for (int k = 0; k < 2; k++)
        for (int t = 0; t < MINIBATCH_MAX_NODE_TYPES; t++)
            if (c->have_temb[t]) embedding_free(&c->temb[k][t]);
    memset(c->have_temb, 0, sizeof c->have_temb);
    typed_graph_free(&c->tg);
    csc_free(&c->g);
    dataset_close(&c->ds);
}

/* ---- the rounds ------------------------------------------------------------------------- */

/* The next batch of l, rolling over to the next epoch when the split is exhausted. */
static minibatch *next_batch(loader *l, int *epoch) {
    minibatch *mb = loader_next(l);
    if (!mb) {
        loader_start_epoch(l, ++*epoch, 0);
        mb = loader_next(l);
        CGNN_CHECK(mb); /* the split is not empty */
    }
    return mb;
}

/* Bytes a batch's feature gather moved: a float32 row out and its int64 id read per input node
 * (typed: per node of each featured type). */
static double gathered_bytes(const bench_ctx *c, const minibatch *mb) {
    if (!c->typed) return (double)mb->num_input_nodes * (double)(c->feat->dim * 4 + 8);
    const minibatch_typed *ty = mb->typed;
    double b = 0;
    for (int t = 0; t < ty->num_node_types; t++)
        if (c->tfeat[t]) b += (double)ty->num_nodes[t][ty->num_layers] * (double)(c->tfeat[t]->dim * 4 + 8);
    return b;
}

/* One training step of the model on mb with Adam state opt, timed into *r (forward, backward,
 * optim, GEMM seconds and FLOPs through gs). Returns 0, or -1 with *err on a non-finite loss
 * or a GEMM FLOP count that disagrees with the batch's shapes. */
static int train_step(bench_ctx *c, minibatch *mb, optim *opt, int k, ops_gemm_stats *gs, step_rec *r,
                      cgnn_err *err) {
    gs->seconds = gs->flops = 0;
    gs->num_calls = gs->num_logged = 0;
    embedding_table *tables = opt == &c->opt_p ? c->temb[0] : c->temb[1]; /* this copy's tables (typed) */
    const minibatch_typed *ty = mb->typed;
    const double t0 = timer_now();
    for (int t = 0; c->typed && t < ty->num_node_types; t++) /* the featureless types' current rows */
        if (c->have_temb[t])
            embedding_gather(&tables[t], ty->nodes[t], ty->num_nodes[t][ty->num_layers], ty->features[t], ty->feat_dim[t],
                             0);
    model_zero_grad(&c->m);
    const float *logits = model_forward(&c->m, mb, 1, rng_key(c->o->seed ^ 0xd1b54a32d192ed03ULL, (uint64_t)k));
    const int64_t rows = c->typed ? ty->num_nodes[c->seed_type][0] : mb->num_seeds;
    const double loss = model_softmax_ce(c->dlogits, logits, mb->item_local, mb->labels, mb->num_items, rows,
                                         c->m.cfg.out_dim, NULL);
    const double t1 = timer_now();
    model_backward(&c->m, mb, c->dlogits);
    const double t2 = timer_now();
    optim_step(opt, c->m.params, c->m.grads, c->ocfg.lr);
    for (int t = 0; c->typed && t < ty->num_node_types; t++) /* sparse steps on the rows the batch touched */
        if (c->have_temb[t] && embedding_sparse_step(&tables[t], NULL, ty->nodes[t], model_typed_input_grad(&c->m, t),
                                                     ty->num_nodes[t][ty->num_layers], c->twidth[t], 0, c->ocfg.lr,
                                                     1.0, err) != 0)
            return -1;
    const double t3 = timer_now();
    r->forward = t1 - t0;
    r->backward = t2 - t1;
    r->optim = t3 - t2;
    r->step = t3 - t0;
    r->gemm_seconds = gs->seconds;
    r->gemm_flops = gs->flops;
    r->sample_seconds = mb->sample_seconds;
    r->gather_seconds = mb->gather_seconds;
    r->items = (double)mb->num_items;
    r->edges = (double)mb->num_sampled_edges;
    r->input_nodes = (double)mb->num_input_nodes;
    r->gathered_bytes = gathered_bytes(c, mb);
    r->gemm_calls = (double)gs->num_calls;
    r->loss = loss;
    if (!isfinite(loss)) return err_set(err, CGNN_ERR_RUNTIME, "bench train: the training loss is %g at step %d", loss, k);
    const double want = bench_train_gemm_flops(&c->m.cfg, mb);
    CGNN_CHECK(want >= 0); /* a model kind the bench knows (checked at setup) */
    if (gs->flops != want) /* a GEMM of the model escaped the accounting: a bug */
        return err_set(err, CGNN_ERR_RUNTIME, "bench train: step %d counted %.0f GEMM FLOPs, the batch's shapes give %.0f",
                       k, gs->flops, want);
    return 0;
}

typedef struct rounds_out {
    step_rec *pipe, *alone;   /* (steps) */
    ops_gemm_call *calls;     /* (steps, cps) the pipelined steps' GEMMs */
    double *replay;           /* (steps, cps) seconds of each replayed GEMM */
    int cps;                  /* GEMMs per step (step 0's) */
    int cps_vary;             /* typed: the count differs between steps */
    int max_cps;              /* capacity of a step's row in calls / replay */
    double operand_bytes;     /* the replay's scratch operands at their largest */
} rounds_out;

/* The interleaved rounds (see the top of the file). Returns 0 or -1 with *err. */
static int run_rounds(bench_ctx *c, rounds_out *ro, cgnn_err *err) {
    const bench_train_opts *o = c->o;
    const size_t pbytes = (size_t)c->m.num_params * sizeof(float);
    loader l;
    loader_config lc = c->lc;
    lc.num_workers = o->workers;
    if (loader_init(&l, c->typed ? NULL : &c->g, c->train->seeds, c->train->labels, c->train->num_items, &lc, err) != 0)
        return -1;
    int epoch = 0, rc = 0;
    loader_start_epoch(&l, epoch, 0);
    ops_gemm_call *steplog = cgnn_calloc((size_t)ro->max_cps, sizeof(ops_gemm_call));
    gemm_operands ops;
    memset(&ops, 0, sizeof ops);
    ops_gemm_stats gs;
    memset(&gs, 0, sizeof gs);
    ops_gemm_stats_register(&gs);
    ro->cps = -1;
    for (int k = 0; k < o->warmup + o->steps && rc == 0; k++) {
        const int t = k - o->warmup; /* timed index, < 0 while warming up */
        step_rec p = {0}, a = {0};
        /* 1. pipelined */
        const double t0 = timer_now();
        minibatch *mb = next_batch(&l, &epoch);
        p.wait = timer_now() - t0;
        gs.calls = steplog;
        gs.max_calls = ro->max_cps;
        if (train_step(c, mb, &c->opt_p, k, &gs, &p, err) != 0) rc = -1;
        p.step += p.wait;
        const int n = (int)gs.num_calls;
        if (rc == 0 && ro->cps < 0) ro->cps = n;
        if (rc == 0 && n != ro->cps && c->typed) ro->cps_vary = 1; /* a node type absent from some batches */
        if (rc == 0 && ((n != ro->cps && !c->typed) || n > ro->max_cps))
            rc = err_set(err, CGNN_ERR_RUNTIME, "bench train: step %d ran %d GEMMs, step 0 ran %d (at most %d)", k, n,
                         ro->cps, ro->max_cps);
        /* 2. compute alone: the same batch, the other copy of the parameters */
        if (rc == 0) {
            memcpy(c->params_save, c->m.params, pbytes);
            memcpy(c->m.params, c->params_a, pbytes);
            gs.calls = NULL;
            gs.max_calls = 0;
            rc = train_step(c, mb, &c->opt_a, k, &gs, &a, err);
            memcpy(c->params_a, c->m.params, pbytes);
            memcpy(c->m.params, c->params_save, pbytes);
        }
        /* 3. the step's GEMMs replayed */
        for (int j = 0; j < n && rc == 0; j++) {
            if (operands_reserve(&ops, &steplog[j]) != 0) {
                rc = err_set(err, CGNN_ERR_RUNTIME, "bench train: out of memory for the sgemm operands");
                break;
            }
            const double s = replay_call(&ops, &steplog[j]);
            p.replay_seconds += s;
            if (t >= 0) {
                ro->calls[(size_t)t * ro->max_cps + j] = steplog[j];
                ro->replay[(size_t)t * ro->max_cps + j] = s;
            }
        }
        loader_release(&l, mb);
        if (rc == 0 && t >= 0) {
            ro->pipe[t] = p;
            ro->alone[t] = a;
        }
    }
    ops_gemm_stats_register(NULL);
    ro->operand_bytes = (double)(ops.len[0] + ops.len[1] + ops.len[2]) * sizeof(float);
    operands_free(&ops);
    free(steplog);
    loader_free(&l);
    return rc;
}

/* The producers alone: a synchronous loader builds the same warmup + steps batches with nothing
 * else running; records their sample and gather seconds into recs[0..steps). */
static int run_producer(bench_ctx *c, step_rec *recs, cgnn_err *err) {
    const bench_train_opts *o = c->o;
    loader l;
    loader_config lc = c->lc;
    lc.num_workers = 0;
    if (loader_init(&l, c->typed ? NULL : &c->g, c->train->seeds, c->train->labels, c->train->num_items, &lc, err) != 0)
        return -1;
    int epoch = 0;
    loader_start_epoch(&l, epoch, 0);
    for (int k = 0; k < o->warmup + o->steps; k++) {
        minibatch *mb = next_batch(&l, &epoch);
        if (k >= o->warmup) {
            step_rec *r = &recs[k - o->warmup];
            r->sample_seconds = mb->sample_seconds;
            r->gather_seconds = mb->gather_seconds;
            r->input_nodes = (double)mb->num_input_nodes;
            r->gathered_bytes = gathered_bytes(c, mb);
        }
        loader_release(&l, mb);
    }
    loader_free(&l);
    return 0;
}

/* ---- the benchmark ---------------------------------------------------------------------- */

int bench_train_run(const bench_train_opts *o, FILE *out, cgnn_err *err) {
    if (o->steps < 1 || o->warmup < 0 || o->workers < 0 || o->threads < 0 || o->batch_size < 1 || o->hidden < 1 ||
        o->num_layers < 1 || o->num_layers > MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT,
                       "bench train: --steps, --batch, --hidden and --layers must be >= 1, --warmup, --workers "
                       "and --threads >= 0");
    bench_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.threads = o->threads > 0 ? o->threads : omp_get_num_procs();
    omp_set_num_threads(c.threads);
    openblas_set_num_threads(c.threads);
    const int S = o->steps;
    const int gt = o->gather_threads > 1 ? o->gather_threads : 1; /* threads of a batch's gather */
    rounds_out ro;
    memset(&ro, 0, sizeof ro);
    step_rec *prod = cgnn_calloc((size_t)S, sizeof(step_rec));
    const size_t ntmp = (size_t)(S > BENCH_SQUARE_REPS ? S : BENCH_SQUARE_REPS);
    double *tmp = cgnn_calloc(ntmp, sizeof(double)), *tmp2 = cgnn_calloc(ntmp, sizeof(double));
    int rc = -1;

    double t_setup = timer_now();
    if (bench_setup(&c, err) != 0) goto done;
    t_setup = timer_now() - t_setup;
    const int typed = c.typed;
    /* GEMMs per step at most: 2 linears x 3 per layer; typed: 3 per node type's input projection,
     * per layer 6 per edge type (HeteroSAGE) or 3 per edge type + 3 per node type + 3 (RGCN);
     * HGT: per layer 6 per node type + 6 per (edge type, head), then 3 per node type for lin */
    const int Tn = c.tg.num_node_types, Kn = c.tg.num_edge_types;
    ro.max_cps = !typed                    ? 6 * o->num_layers
                 : c.kind == MODEL_HGT ? 6 * Tn + o->num_layers * (6 * Tn + 6 * c.m.cfg.num_heads * Kn)
                                       : 3 * Tn + o->num_layers * (6 * Kn + 3 * Tn + 3);
    ro.pipe = cgnn_calloc((size_t)S, sizeof(step_rec));
    ro.alone = cgnn_calloc((size_t)S, sizeof(step_rec));
    ro.calls = cgnn_calloc((size_t)S * ro.max_cps, sizeof(ops_gemm_call));
    ro.replay = cgnn_calloc((size_t)S * ro.max_cps, sizeof(double));
    const model_config mc = c.m.cfg;
    fprintf(out, "cgnn bench train: %s, %d layers, hidden %lld, fanouts [", model_kind_name(mc.kind), mc.num_layers,
            (long long)mc.hidden_dim);
    for (int h = 0; h < o->num_layers; h++) fprintf(out, "%s%lld", h ? ", " : "", (long long)o->fanouts[h]);
    fprintf(out, "], batch %lld, dropout %g, Adam; dataset %s\n", (long long)o->batch_size, o->dropout, c.ds.dir);
    fprintf(out, "  %d compute thread%s (OpenMP + OpenBLAS), %d sampler thread%s (gathering with %d); %d warm-up + %d timed rounds "
                 "(pipelined step, compute-alone step, sgemm replay); medians over the timed rounds\n",
            c.threads, c.threads == 1 ? "" : "s", o->workers, o->workers == 1 ? "" : "s",
            o->gather_threads > 1 ? o->gather_threads : 1, o->warmup, S);
    if (!typed) {
        fprintf(out, "graph: %lld nodes, %lld edges (index %s); features (%lld, %lld) %s; %lld classes; %lld train seeds; "
                     "%lld parameters; setup %.1f s\n",
                (long long)c.g.num_nodes, (long long)c.g.num_edges, c.g.from_cache ? "from cache" : "built",
                (long long)c.feat->rows, (long long)c.feat->dim, npy_dtype_name(c.feat->array.dtype),
                (long long)mc.out_dim, (long long)c.train->num_items, (long long)c.m.num_params, t_setup);
    } else {
        int64_t edges = 0;
        for (int e = 0; e < c.tg.num_edge_types; e++) edges += c.tg.csc[e]->num_edges;
        fprintf(out, "typed graph: %d node types, %d edge types (fanouts on every edge type), %lld nodes, %lld edges; "
                     "inputs:", c.tg.num_node_types, c.tg.num_edge_types, (long long)c.tg.offset[c.tg.num_node_types],
                (long long)edges);
        for (int t = 0; t < c.tg.num_node_types; t++) {
            const ds_feature *f = c.tfeat[t];
            if (f)
                fprintf(out, "%s %s (%lld, %lld) %s", t ? "," : "", c.ds.node_types[t].name, (long long)f->rows,
                        (long long)f->dim, npy_dtype_name(f->array.dtype));
            else
                fprintf(out, "%s %s learnable (%lld, %lld)", t ? "," : "", c.ds.node_types[t].name,
                        (long long)c.ds.node_types[t].num_nodes, (long long)c.twidth[t]);
        }
        fprintf(out, "; %lld classes; %lld train seeds of type %s; %lld parameters; setup %.1f s\n",
                (long long)mc.out_dim, (long long)c.train->num_items, c.ds.node_types[c.seed_type].name,
                (long long)c.m.num_params, t_setup);
    }
    fflush(out);

    const double m0 = machine_cpu_seconds(), s0 = self_cpu_seconds(), w0 = timer_now();
    if (run_rounds(&c, &ro, err) != 0) goto done;
    const double m1 = machine_cpu_seconds(), s1 = self_cpu_seconds(), w1 = timer_now();
    /* cores' worth of CPU other processes used during the rounds (-1: unknown, or too short to tell) */
    const double others = m0 >= 0 && m1 >= 0 && w1 - w0 >= 2.0 ? fmax(0.0, ((m1 - m0) - (s1 - s0)) / (w1 - w0)) : -1;
    free_model(&c);
    if (run_producer(&c, prod, err) != 0) goto done;
    const double ds_bytes = dir_bytes(c.ds.dir), rss_limit = ds_bytes + 2.0 * 1073741824.0;
    char ds_dir[2 * sizeof c.ds.dir]; /* JSON-escaped */
    json_escape(ds_dir, sizeof ds_dir, c.ds.dir);
    bench_teardown(&c);

    const step_rec *pipe = ro.pipe, *alone = ro.alone;
    const int cps = ro.cps;
    int same_losses = 1;
    for (int s = 0; s < S; s++) same_losses &= pipe[s].loss == alone[s].loss;

    /* the step's figures, medians over the timed rounds */
    const double step = REC_MEDIAN(pipe, S, step, tmp), wait = REC_MEDIAN(pipe, S, wait, tmp),
                 fwd = REC_MEDIAN(pipe, S, forward, tmp), bwd = REC_MEDIAN(pipe, S, backward, tmp),
                 opt = REC_MEDIAN(pipe, S, optim, tmp), samp = REC_MEDIAN(pipe, S, sample_seconds, tmp),
                 gath = REC_MEDIAN(pipe, S, gather_seconds, tmp), gemm_s = REC_MEDIAN(pipe, S, gemm_seconds, tmp),
                 replay_s = REC_MEDIAN(pipe, S, replay_seconds, tmp);
    const double a_step = REC_MEDIAN(alone, S, step, tmp), a_fwd = REC_MEDIAN(alone, S, forward, tmp),
                 a_bwd = REC_MEDIAN(alone, S, backward, tmp), a_opt = REC_MEDIAN(alone, S, optim, tmp),
                 a_gemm_s = REC_MEDIAN(alone, S, gemm_seconds, tmp);
    const double u_samp = REC_MEDIAN(prod, S, sample_seconds, tmp), u_gath = REC_MEDIAN(prod, S, gather_seconds, tmp);
    const double items = REC_MEAN(pipe, S, items), edges = REC_MEAN(pipe, S, edges),
                 in_nodes = REC_MEAN(pipe, S, input_nodes), flops = REC_MEAN(pipe, S, gemm_flops);
    const double gather_bytes = REC_MEAN(pipe, S, gathered_bytes); /* float32 rows out + their int64 ids */
    for (int s = 0; s < S; s++) {
        tmp[s] = rate(pipe[s].gemm_flops, pipe[s].gemm_seconds);
        tmp2[s] = rate(pipe[s].gemm_flops, pipe[s].replay_seconds);
    }
    const double gemm_gfs = bench_median(tmp, S) / 1e9, peak_same = bench_median(tmp2, S) / 1e9;
    for (int s = 0; s < S; s++) tmp[s] = rate(alone[s].gemm_flops, alone[s].gemm_seconds);
    const double a_gemm_gfs = bench_median(tmp, S) / 1e9;
    for (int s = 0; s < S; s++) {
        tmp[s] = rate(pipe[s].gathered_bytes, pipe[s].gather_seconds);
        tmp2[s] = rate(prod[s].gathered_bytes, prod[s].gather_seconds);
    }
    const double gather_gbs = bench_median(tmp, S) / 1e9, u_gather_gbs = bench_median(tmp2, S) / 1e9;

    /* ---- yardsticks that need no batch ---- */
    gemm_operands sq;
    memset(&sq, 0, sizeof sq);
    const ops_gemm_call square = {0, 0, 2048, 2048, 2048, 0.0f, 0};
    if (operands_reserve(&sq, &square) != 0) {
        err_set(err, CGNN_ERR_RUNTIME, "bench train: out of memory for the sgemm operands");
        goto done;
    }
    replay_call(&sq, &square); /* warm-up */
    for (int r = 0; r < BENCH_SQUARE_REPS; r++) tmp[r] = replay_call(&sq, &square);
    operands_free(&sq);
    const double peak_2048 = 2.0 * 2048.0 * 2048.0 * 2048.0 / bench_median(tmp, BENCH_SQUARE_REPS) / 1e9;
    /* the hardware's yardstick: the FMA peak at the CPU's widest vectors, on the compute threads */
    const int hw_width = bench_cpu_has_width(512) ? 512 : bench_cpu_has_width(256) ? 256 : 128;
    const double hw_peak = bench_fma_peak(hw_width, c.threads, 5);
    char blas_line[400];
    blas_describe(blas_line, sizeof blas_line);
    size_t copy_bytes = (size_t)gather_bytes;
    if (copy_bytes < BENCH_MIN_COPY_BYTES) copy_bytes = BENCH_MIN_COPY_BYTES;
    const double copy1 = bench_copy_bandwidth(copy_bytes, 1, BENCH_COPY_REPS);
    const double copyT = c.threads > 1 ? bench_copy_bandwidth(copy_bytes, c.threads, BENCH_COPY_REPS) : copy1;
    const double copyG = gt == 1 ? copy1 : gt == c.threads ? copyT : bench_copy_bandwidth(copy_bytes, gt, BENCH_COPY_REPS);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss = (double)ru.ru_maxrss * 1024.0;

    /* ---- roofline and targets ---- */
    const double b_gemm = flops / (peak_same * 1e9), b_gather = gather_bytes / (copyT * 1e9);
    const double b_sample = u_samp / c.threads; /* uncontended sampling spread over the threads */
    const double bound = b_gemm + b_gather, bound_s = bound + b_sample;
    const double gemm_frac = gemm_gfs / peak_same, gather_frac = gather_gbs / copyG;
    const double roof_frac = bound / step, roof_frac_s = bound_s / step, overlap = step / a_step;
    const double hw_gemm_frac = gemm_gfs / hw_peak, b_gemm_hw = flops / (hw_peak * 1e9);
    const double bound_hw = b_gemm_hw + b_gather, roof_hw_frac = bound_hw / step;
    const int keep_up = samp + gath <= step - wait; /* a batch is built within a step */
    char v1[64], v2[64], v3[64], v4[64], v5[64], v6[64];

    /* ---- report ---- */
    if (others >= 0)
        fprintf(out, "other processes used %.2f of the machine's %d cores during the rounds%s\n", others,
                omp_get_num_procs(), others > 0.2 ? " (the figures below are slowed by them)" : "");
    fprintf(out, "BLAS: %s\n", blas_line);
    fprintf(out, "CPU float32 peak: %.1f GFLOP/s (%s, %d-bit, %d thread%s: a register-only loop)\n", hw_peak,
            hw_width == 512 ? "AVX-512 FMA" : hw_width == 256 ? "AVX2 FMA" : "SSE multiply + add", hw_width, c.threads,
            c.threads == 1 ? "" : "s");
    fprintf(out, "per step (means): %.0f seeds, %.0f sampled edges, %.0f input nodes, %.2f GFLOP in %.4g GEMMs\n\n",
            items, edges, in_nodes, flops / 1e9, REC_MEAN(pipe, S, gemm_calls));
    fprintf(out, "pipelined (%d sampler thread%s prefetching)   median ms\n", o->workers, o->workers == 1 ? "" : "s");
    fprintf(out, "  step                                %9.1f   %.0f seeds/s, %.2f M sampled edges/s\n", step * 1e3,
            items / step, edges / step / 1e6);
    fprintf(out, "  waiting for the batch               %9.1f\n", wait * 1e3);
    fprintf(out, "  forward + loss                      %9.1f\n", fwd * 1e3);
    fprintf(out, "  backward                            %9.1f\n", bwd * 1e3);
    fprintf(out, "  optimiser (Adam)                    %9.1f\n", opt * 1e3);
    fprintf(out, "  GEMMs (inside forward + backward)   %9.1f   non-GEMM compute %.1f (aggregations, ReLU, dropout, "
                 "loss, Adam)\n",
            gemm_s * 1e3, (fwd + bwd + opt - gemm_s) * 1e3);
    fprintf(out, "  producer per batch (a sampler thread, gathering with %d): sample %.1f, gather %.1f while sharing "
                 "the cores; %.1f, %.1f alone\n",
            gt, samp * 1e3, gath * 1e3, u_samp * 1e3, u_gath * 1e3);
    fprintf(out, "compute alone (the same batch, fully built, producers %s)\n",
            keep_up ? "idle" : "possibly still busy: a batch takes them longer than a step");
    fprintf(out, "  step                                %9.1f   forward %.1f, backward %.1f, optimiser %.1f, GEMMs "
                 "%.1f\n",
            a_step * 1e3, a_fwd * 1e3, a_bwd * 1e3, a_opt * 1e3, a_gemm_s * 1e3);
    fprintf(out, "  overlap: pipelined / compute alone = %.3f (target <= 1.10: %s)\n", overlap,
            verdict(v1, sizeof v1, overlap <= 1.10, 100.0 * (overlap - 1.10), " points"));
    fprintf(out, "  same losses in both copies: %s\n\n", same_losses ? "yes" : "NO (nondeterminism)");

    fprintf(out, "GEMM (%d per step, %.2f GFLOP)\n", cps, flops / 1e9);
    fprintf(out, "  in training              %8.1f GFLOP/s   (compute alone: %.1f)\n", gemm_gfs, a_gemm_gfs);
    fprintf(out, "  sgemm, same shapes       %8.1f GFLOP/s   (%d threads: each step's GEMMs replayed right after it)\n",
            peak_same, c.threads);
    fprintf(out, "  sgemm, 2048^3            %8.1f GFLOP/s\n", peak_2048);
    fprintf(out, "  CPU peak (%d-bit FMA)    %8.1f GFLOP/s   sgemm same shapes %.0f%% of it, 2048^3 %.0f%%\n", hw_width, hw_peak,
            100 * peak_same / hw_peak, 100 * peak_2048 / hw_peak);
    fprintf(out, "  in training / CPU peak = %.0f%% (target >= 70%%: %s)\n", 100 * hw_gemm_frac,
            verdict(v5, sizeof v5, hw_gemm_frac >= 0.70, 100.0 * (0.70 - hw_gemm_frac), " points"));
    fprintf(out, "  in training / same-shape sgemm = %.0f%% (target >= 70%%: %s)\n", 100 * gemm_frac,
            verdict(v2, sizeof v2, gemm_frac >= 0.70, 100.0 * (0.70 - gemm_frac), " points"));
    if (ro.cps_vary)
        fprintf(out, "  (the GEMM count varies between batches: a node type is absent from some; no per-GEMM table; %.1f "
                     "GEMMs per step on average)\n", REC_MEAN(pipe, S, gemm_calls));
    else
        fprintf(out, "  per GEMM (the last step's shapes; row-major C(M,N) = op(A)(M,K) op(B)(K,N); medians):\n"
                     "    #  op             M        N        K   GFLOP  training GF/s  sgemm GF/s\n");
    const ops_gemm_call *last = ro.calls + (size_t)(S - 1) * ro.max_cps;
    for (int j = 0; j < cps && !ro.cps_vary; j++) {
        for (int s = 0; s < S; s++) {
            const ops_gemm_call *x = &ro.calls[(size_t)s * ro.max_cps + j];
            const double f = 2.0 * (double)x->M * (double)x->N * (double)x->K;
            tmp[s] = rate(f, x->seconds);
            tmp2[s] = rate(f, ro.replay[(size_t)s * ro.max_cps + j]);
        }
        const ops_gemm_call *g = &last[j];
        const char *op = typed ? (!g->trans_a && g->trans_b ? "A.B^T" : !g->trans_a ? "A.B" : "A^T.B") /* both layouts */
                         : !g->trans_a && g->trans_b ? "Y=X.W^T" : !g->trans_a ? "dX=dY.W" : "dW=dY^T.X";
        fprintf(out, "   %2d  %-9s %8lld %8lld %8lld %7.2f %14.1f %11.1f\n", j + 1, op, (long long)g->M, (long long)g->N,
                (long long)g->K, 2.0 * (double)g->M * (double)g->N * (double)g->K / 1e9, bench_median(tmp, S) / 1e9,
                bench_median(tmp2, S) / 1e9);
    }
    fprintf(out, "\ngather (float32 rows + int64 ids: %.1f MB per step)\n", gather_bytes / 1e6);
    fprintf(out, "  %.2f GB/s in the pipeline, %.2f GB/s alone (%d thread%s); copy bandwidth %.2f GB/s (1 thread), "
                 "%.2f GB/s (%d threads)\n",
            gather_gbs, u_gather_gbs, gt, gt == 1 ? "" : "s", copy1, copyT, c.threads);
    fprintf(out, "  pipelined gather / %d-thread copy (%.2f GB/s) = %.0f%%\n\n", gt, copyG, 100 * gather_frac);
    fprintf(out, "roofline: GEMM FLOPs at the same-shape sgemm rate + gathered bytes at %d-thread copy bandwidth\n",
            c.threads);
    fprintf(out, "  bound %.1f ms = GEMM %.1f + gather %.1f; step %.1f -> %.0f%% of roofline (target >= 50%%: %s)\n",
            bound * 1e3, b_gemm * 1e3, b_gather * 1e3, step * 1e3, 100 * roof_frac,
            verdict(v3, sizeof v3, roof_frac >= 0.50, 100.0 * (0.50 - roof_frac), " points"));
    fprintf(out, "  + sampling at its uncontended rate (%.1f ms per batch on one thread / %d): bound %.1f ms -> %.0f%%\n",
            u_samp * 1e3, c.threads, bound_s * 1e3, 100 * roof_frac_s);
    fprintf(out, "roofline of the hardware: GEMM FLOPs at the CPU's FMA peak + gathered bytes at %d-thread copy bandwidth\n",
            c.threads);
    fprintf(out, "  bound %.1f ms = GEMM %.1f + gather %.1f; step %.1f -> %.0f%% of the hardware roofline (target >= 60%%: "
                 "%s)\n\n",
            bound_hw * 1e3, b_gemm_hw * 1e3, b_gather * 1e3, step * 1e3, 100 * roof_hw_frac,
            verdict(v6, sizeof v6, roof_hw_frac >= 0.60, 100.0 * (0.60 - roof_hw_frac), " points"));
    fprintf(out, "memory: peak RSS %.2f GB (%.2f GB of it the sgemm replay's operands); dataset on disk %.2f GB + 2 GiB "
                 "= %.2f GB (target below: %s)\n",
            rss / 1e9, ro.operand_bytes / 1e9, ds_bytes / 1e9, rss_limit / 1e9,
            verdict(v4, sizeof v4, rss < rss_limit, (rss - rss_limit) / 1e9, " GB"));

    /* one machine-readable line, last */
    fprintf(out, "{\"bench\":\"train\",\"model\":\"%s\",\"typed\":%s,\"layers\":%d,\"hidden\":%lld,\"fanouts\":[",
            model_kind_name(mc.kind), typed ? "true" : "false", mc.num_layers, (long long)mc.hidden_dim);
    for (int h = 0; h < o->num_layers; h++) fprintf(out, "%s%lld", h ? "," : "", (long long)o->fanouts[h]);
    fprintf(out, "],\"batch\":%lld,\"classes\":%lld,\"threads\":%d,\"workers\":%d,\"gather_threads\":%d,\"steps\":%d,\"warmup\":%d,",
            (long long)o->batch_size, (long long)mc.out_dim, c.threads, o->workers,
            o->gather_threads > 1 ? o->gather_threads : 1, S, o->warmup);
    fprintf(out, "\"seeds_per_s\":%.6g,\"sampled_edges_per_s\":%.6g,\"step_ms\":%.6g,\"wait_ms\":%.6g,"
                 "\"forward_ms\":%.6g,\"backward_ms\":%.6g,\"optim_ms\":%.6g,\"sample_ms\":%.6g,\"gather_ms\":%.6g,"
                 "\"sample_ms_alone\":%.6g,\"gather_ms_alone\":%.6g,",
            items / step, edges / step, step * 1e3, wait * 1e3, fwd * 1e3, bwd * 1e3, opt * 1e3, samp * 1e3,
            gath * 1e3, u_samp * 1e3, u_gath * 1e3);
    fprintf(out, "\"compute_alone_ms\":%.6g,\"overlap_ratio\":%.6g,\"producers_keep_up\":%s,\"same_losses\":%s,",
            a_step * 1e3, overlap, keep_up ? "true" : "false", same_losses ? "true" : "false");
    fprintf(out, "\"gemm_calls\":%d,\"gemm_gflop_per_step\":%.6g,\"gemm_ms\":%.6g,\"gemm_replay_ms\":%.6g,"
                 "\"gemm_gflops\":%.6g,\"gemm_gflops_compute_alone\":%.6g,\"sgemm_peak_gflops\":%.6g,"
                 "\"sgemm_2048_gflops\":%.6g,\"gemm_fraction\":%.6g,",
            cps, flops / 1e9, gemm_s * 1e3, replay_s * 1e3, gemm_gfs, a_gemm_gfs, peak_same, peak_2048, gemm_frac);
    fprintf(out, "\"gather_mb_per_step\":%.6g,\"gather_gbs\":%.6g,\"gather_gbs_alone\":%.6g,\"copy_gbs_1\":%.6g,"
                 "\"copy_gbs\":%.6g,\"copy_gbs_gather\":%.6g,\"gather_fraction\":%.6g,",
            gather_bytes / 1e6, gather_gbs, u_gather_gbs, copy1, copyT, copyG, gather_frac);
    fprintf(out, "\"roofline_ms\":%.6g,\"roofline_fraction\":%.6g,\"roofline_sampling_ms\":%.6g,"
                 "\"roofline_sampling_fraction\":%.6g,",
            bound * 1e3, roof_frac, bound_s * 1e3, roof_frac_s);
    fprintf(out, "\"cpu_peak_gflops\":%.6g,\"cpu_peak_width\":%d,\"gemm_fraction_of_cpu_peak\":%.6g,\"roofline_hw_ms\":%.6g,"
                 "\"roofline_hw_fraction\":%.6g,\"blas_core\":\"%s\",",
            hw_peak, hw_width, hw_gemm_frac, bound_hw * 1e3, roof_hw_frac, blas_core_name() ? blas_core_name() : "unknown");
    fprintf(out, "\"peak_rss_bytes\":%.0f,\"replay_operand_bytes\":%.0f,\"dataset_bytes\":%.0f,\"rss_limit_bytes\":%.0f,\"loss_first\":%.6g,"
                 "\"loss_last\":%.6g,\"other_processes_cores\":%.3g,\"dataset\":\"%s\"}\n",
            rss, ro.operand_bytes, ds_bytes, rss_limit, pipe[0].loss, pipe[S - 1].loss, others, ds_dir);
    rc = 0;
done:
    ops_gemm_stats_register(NULL);
    bench_teardown(&c);
    free(ro.pipe);
    free(ro.alone);
    free(ro.calls);
    free(ro.replay);
    free(prod);
    free(tmp);
    free(tmp2);
    return rc;
}
