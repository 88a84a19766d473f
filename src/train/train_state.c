/* train_state.c — the training state file: fingerprint, scalars, tensors; see train_state.h. */
#include "train/train_state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/durable.h"
#include "io/npy.h"

/* The metadata key that marks a file as a training state, and the layout version. */
#define STATE_FORMAT_KEY "cgnn_train_state"
#define STATE_FORMAT_VERSION "1"

/* ---- fingerprint ------------------------------------------------------------------- */

static void fp_add(train_state_fingerprint *fp, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fp_add(train_state_fingerprint *fp, const char *key, const char *fmt, ...) {
    CGNN_CHECK(fp->n < TRAIN_STATE_MAX_FIELDS && strlen(key) < sizeof fp->key[0]);
    snprintf(fp->key[fp->n], sizeof fp->key[0], "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fp->value[fp->n], sizeof fp->value[0], fmt, ap);
    va_end(ap);
    fp->n++;
}

/* FNV-1a over n bytes, continuing h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

void train_state_fingerprint_add(train_state_fingerprint *fp, const char *key, const char *value) {
    fp_add(fp, key, "%s", value);
}

void train_state_fingerprint_init(train_state_fingerprint *fp, const task_config *cfg, const dataset *ds,
                                  const ds_task *task, const ds_feature *feat, const csc_graph *g,
                                  const model *m, int world_size) {
    const trainer_args *a = &cfg->args;
    memset(fp, 0, sizeof *fp);
    /* the job */
    fp_add(fp, "task", "%s", cfg->task == TASK_LINK_PREDICTION ? "link prediction" : "node classification");
    fp_add(fp, "world_size", "%d", world_size);
    /* the dataset */
    fp_add(fp, "dataset.name", "%s", ds->name);
    fp_add(fp, "dataset.task", "%s", task->name);
    int64_t num_edges = 0;
    for (int e = 0; !g && e < ds->num_edge_types; e++) num_edges += ds->edge_types[e].edges.num_edges;
    fp_add(fp, "dataset.num_nodes", "%lld", (long long)(g ? g->num_nodes : dataset_total_nodes(ds)));
    fp_add(fp, "dataset.num_edges", "%lld", (long long)(g ? g->num_edges : num_edges));
    if (feat)
        fp_add(fp, "dataset.feature", "%s (%lld, %lld) %s", feat->name, (long long)feat->rows, (long long)feat->dim,
               npy_dtype_name(feat->array.dtype));
    else
        fp_add(fp, "dataset.feature", "none");
    static const char *const SPLIT_KEYS[DS_SPLIT_COUNT][2] = {
        {"dataset.train_set", "dataset.train_set.hash"},
        {"dataset.validation_set", "dataset.validation_set.hash"},
        {"dataset.test_set", "dataset.test_set.hash"}};
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const ds_split *sp = &task->splits[s];
        uint64_t h = 1469598103934665603ULL;
        if (sp->present) {
            h = fnv1a(h, sp->seeds, (size_t)(sp->num_items * sp->seed_width) * sizeof(int64_t));
            if (sp->labels) h = fnv1a(h, sp->labels, (size_t)sp->num_items * sizeof(int64_t));
            if (sp->indexes) h = fnv1a(h, sp->indexes, (size_t)sp->num_items * sizeof(int64_t));
        }
        fp_add(fp, SPLIT_KEYS[s][0], "%lld items", sp->present ? (long long)sp->num_items : -1LL);
        fp_add(fp, SPLIT_KEYS[s][1], "%016" PRIx64, h);
    }
    /* the model (trainerArgs names, then what the trainer derived from them and the data) */
    fp_add(fp, "gnn_model_class_path", "%s", model_kind_name(m->cfg.kind));
    fp_add(fp, "num_layers", "%d", m->cfg.kind == MODEL_LIGHTGCN ? m->cfg.prop_layers : m->cfg.num_layers);
    if (m->cfg.kind == MODEL_LIGHTGCN) { /* its propagation: layers above, alpha here */
        char al[(MINIBATCH_MAX_LAYERS + 1) * 20] = "";
        for (int l = 0, off = 0; l <= m->cfg.prop_layers; l++)
            off += snprintf(al + off, sizeof al - (size_t)off, "%s%.9g", l ? "," : "", (double)m->cfg.alpha[l]);
        fp_add(fp, "lightgcn_alpha", "%s", al);
    }
    fp_add(fp, "hidden_dim", "%lld", (long long)m->cfg.hidden_dim);
    fp_add(fp, "out_channels", "%lld", (long long)m->cfg.out_dim);
    fp_add(fp, "in_channels", "%lld", (long long)m->cfg.in_dim);
    fp_add(fp, "num_heads", "%d", m->cfg.num_heads);
    fp_add(fp, "dropout", "%.17g", a->dropout);
    fp_add(fp, "should_l2_normalize_embedding_layer_output", "%d", m->cfg.l2_normalize_output);
    fp_add(fp, "feature_normalization", "%s", a->feature_normalization);
    fp_add(fp, "num_parameters", "%lld", (long long)m->num_params);
    char fan[160];
    size_t len = 0;
    fan[0] = '\0';
    for (int h = 0; h < a->num_layers && len < sizeof fan; h++)
        len += (size_t)snprintf(fan + len, sizeof fan - len, "%s%lld", h ? ", " : "[", (long long)a->fanouts[h]);
    if (len < sizeof fan) snprintf(fan + len, sizeof fan - len, "]");
    if (g) fp_add(fp, "num_neighbors", "%s", fan); /* typed: train_state_fingerprint_add_typed's, per edge type */
    fp_add(fp, "sample_with_replacement", "%d", a->replace);
    if (a->sampling_weight[0]) fp_add(fp, "sampling_weight", "%s", a->sampling_weight);
    /* the loop */
    fp_add(fp, "main_sample_batch_size", "%lld", (long long)a->batch_size);
    fp_add(fp, "num_epochs", "%lld", (long long)a->num_epochs);
    fp_add(fp, "num_max_train_batches", "%lld", (long long)a->num_max_train_batches);
    fp_add(fp, "val_every_num_batches", "%lld", (long long)a->val_every_num_batches);
    fp_add(fp, "num_val_batches", "%lld", (long long)a->num_val_batches);
    fp_add(fp, "early_stop_criterion", "%s", a->early_stop_criterion);
    fp_add(fp, "early_stop_patience", "%lld", (long long)a->early_stop_patience);
    if (a->val_at_end) fp_add(fp, "val_at_end", "%d", a->val_at_end);
    fp_add(fp, "seed", "%" PRIu64, a->seed);
    fp_add(fp, "drop_uneven_inputs", "%d", a->drop_uneven_inputs);
    /* the optimiser and the scheduler */
    const optim_config *o = &a->optim;
    fp_add(fp, "optim_class_path", "%s", optim_kind_name(o->kind));
    fp_add(fp, "optim_lr", "%.17g", o->lr);
    fp_add(fp, "optim_weight_decay", "%.17g", o->weight_decay);
    fp_add(fp, "optim_momentum", "%.17g", o->momentum);
    fp_add(fp, "optim_dampening_nesterov", "%.17g %d", o->dampening, o->nesterov);
    fp_add(fp, "optim_betas_eps", "%.17g %.17g %.17g", o->beta1, o->beta2, o->eps);
    fp_add(fp, "clip_grad_norm", "%.17g", a->clip_grad_norm);
    const sched_config *c = &a->sched;
    fp_add(fp, "lr_scheduler_name", "%s", sched_kind_name(c->kind));
    fp_add(fp, "lr_scheduler_args", "factor %.17g total_iters %lld start %.17g end %.17g step_size %lld gamma %.17g "
           "t_max %lld eta_min %.17g", c->factor, (long long)c->total_iters, c->start_factor, c->end_factor,
           (long long)c->step_size, c->gamma, (long long)c->t_max, c->eta_min);
    /* link prediction */
    if (cfg->task == TASK_LINK_PREDICTION) {
        fp_add(fp, "random_negative_sample_batch_size", "%lld", (long long)a->random_negative_sample_batch_size);
        fp_add(fp, "random_negative_sample_batch_size_for_evaluation", "%lld",
               (long long)a->random_negative_sample_batch_size_for_evaluation);
        fp_add(fp, "softmax_temp", "%.17g", a->softmax_temp);
        fp_add(fp, "should_remove_accidental_hits", "%d", a->should_remove_accidental_hits);
        fp_add(fp, "exclude_seed_edges", "%d", a->exclude_seed_edges);
        if (a->lp_candidate_hi > 0) /* only when given: older states' fingerprints stay valid */
            fp_add(fp, "lp_candidate_range", "%lld:%lld", (long long)a->lp_candidate_lo, (long long)a->lp_candidate_hi);
        if (a->ssl_positive_label_percentage > 0) { /* the split and the message-passing graph */
            fp_add(fp, "ssl_positive_label_percentage", "%.17g", a->ssl_positive_label_percentage);
            fp_add(fp, "ssl_split", "%.17g %.17g", a->num_val, a->num_test);
            fp_add(fp, "ssl_keep_eval_edges", "%d", a->ssl_keep_eval_edges);
        }
        if (a->lp_anchor_batching) /* only then: pairs states written before it stay valid */
            fp_add(fp, "lp_batching", "%s max_labels_per_anchor_node %lld", a->lp_anchor_batching ? "anchors" : "pairs",
                   (long long)a->max_labels_per_anchor_node);
        fp_add(fp, "task_path", "%d tasks", a->num_lp_tasks);
        for (int k = 0; k < a->num_lp_tasks; k++) { /* each task's weight and the arguments it reads */
            const lp_task *lt = &a->lp_tasks[k];
            char key[32];
            snprintf(key, sizeof key, "task_path.%d", k);
            switch (lt->kind) {
            case LP_TASK_RETRIEVAL:
                fp_add(fp, key, "Retrieval weight %.17g temperature %.17g remove_accidental_hits %d", lt->weight,
                       lt->temperature, lt->remove_accidental_hits);
                break;
            case LP_TASK_SOFTMAX:
                fp_add(fp, key, "Softmax weight %.17g softmax_temperature %.17g", lt->weight, lt->softmax_temperature);
                break;
            case LP_TASK_MARGIN: fp_add(fp, key, "Margin weight %.17g margin %.17g", lt->weight, lt->margin); break;
            case LP_TASK_DIRECTAU:
                fp_add(fp, key, "DirectAU weight %.17g gamma %.17g alpha %.17g temperature %.17g", lt->weight,
                       lt->gamma, lt->alpha, lt->temperature);
                break;
            default:
                fp_add(fp, key, "%s weight %.17g num_negatives %lld", lp_task_name(lt->kind), lt->weight,
                       (long long)lt->num_negatives);
                break;
            }
        }
        fp_add(fp, "node_embedding_reg", "%.17g", a->node_embedding_reg);
    }
    /* learnable embeddings */
    fp_add(fp, "node_embedding_dim", "%lld", (long long)a->node_embedding_dim);
    if (a->node_embedding_dim > 0) {
        fp_add(fp, "embedding_optim_class_path", "%s", a->embedding_optim);
        fp_add(fp, "embedding_lr", "%.17g", a->embedding_lr > 0 ? a->embedding_lr : o->lr);
        fp_add(fp, "node_embedding_init_std", "%.17g", a->node_embedding_init_std);
        fp_add(fp, "embedding_weight_decay", "%.17g", a->embedding_weight_decay);
    }
}

/* "<n> <what>: <text>" when it fits a value, else "<n> <what>, hash <FNV-1a of text>". */
static void fp_add_list(train_state_fingerprint *fp, const char *key, int n, const char *what, const char *text) {
    if (strlen(text) + 32 < sizeof fp->value[0])
        fp_add(fp, key, "%d %s: %s", n, what, text);
    else
        fp_add(fp, key, "%d %s, hash %016" PRIx64, n, what, fnv1a(1469598103934665603ULL, text, strlen(text)));
}

/* Appends printf text to buf (cap bytes, *len so far; the text is cut at cap). */
static void buf_add(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void buf_add(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    if (*len >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    const int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (k > 0) *len += (size_t)k;
}

void train_state_fingerprint_add_typed(train_state_fingerprint *fp, const task_config *cfg, const dataset *ds,
                                       const ds_feature *const *type_feature,
                                       const int64_t (*fanouts)[MINIBATCH_MAX_EDGE_TYPES], int num_layers,
                                       int have_tables) {
    const trainer_args *a = &cfg->args;
    enum { CAP = 64 * 1024 }; /* every name is < 3 * DATASET_NAME_MAX: 64 edge types fit */
    char *text = cgnn_malloc(CAP);
    size_t len = 0;
    text[0] = '\0';
    for (int t = 0; t < ds->num_node_types; t++)
        buf_add(text, CAP, &len, "%s%s %lld", t ? ", " : "", ds->node_types[t].name,
                (long long)ds->node_types[t].num_nodes);
    fp_add_list(fp, "typed.node_types", ds->num_node_types, "node types", text);
    len = 0;
    text[0] = '\0';
    for (int e = 0; e < ds->num_edge_types; e++)
        buf_add(text, CAP, &len, "%s%s %lld", e ? ", " : "", ds->edge_types[e].name,
                (long long)ds->edge_types[e].edges.num_edges);
    fp_add_list(fp, "typed.edge_types", ds->num_edge_types, "edge types", text);
    len = 0;
    text[0] = '\0';
    for (int t = 0; t < ds->num_node_types; t++) {
        const ds_feature *f = type_feature[t];
        if (f)
            buf_add(text, CAP, &len, "%s%s (%lld, %lld) %s", t ? ", " : "", f->name, (long long)f->rows,
                    (long long)f->dim, npy_dtype_name(f->array.dtype));
        else
            buf_add(text, CAP, &len, "%slearnable", t ? ", " : "");
    }
    fp_add_list(fp, "typed.inputs", ds->num_node_types, "node types' inputs", text);
    len = 0;
    text[0] = '\0';
    for (int e = 0; e < ds->num_edge_types; e++) {
        buf_add(text, CAP, &len, "%s[", e ? ", " : "");
        for (int h = 0; h < num_layers; h++) buf_add(text, CAP, &len, "%s%lld", h ? ", " : "", (long long)fanouts[h][e]);
        buf_add(text, CAP, &len, "]");
    }
    fp_add_list(fp, "typed.num_neighbors", ds->num_edge_types, "edge types' fanouts", text);
    free(text);
    fp_add(fp, "num_bases", "%d", a->num_bases);
    if (have_tables) { /* the featureless types' tables (their width is in typed.inputs' model shape) */
        fp_add(fp, "typed.embedding_optim_class_path", "%s", a->embedding_optim);
        fp_add(fp, "typed.embedding_lr", "%.17g", a->embedding_lr > 0 ? a->embedding_lr : a->optim.lr);
    }
}

/* ---- scalars ------------------------------------------------------------------------ */

typedef enum sv_kind { SV_I64, SV_F64, SV_STR } sv_kind;

typedef struct sv_field {
    const char *name;
    sv_kind kind;
    size_t offset;
    int count;                 /* array length (1 for a plain scalar); SV_STR: 1 */
} sv_field;

#define SV(name, kind, count) {#name, kind, offsetof(train_state_scalars, name), count}
static const sv_field SCALARS[] = {
    SV(step, SV_I64, 1),
    SV(epoch, SV_I64, 1),
    SV(next_batch, SV_I64, 1),
    SV(loss_sum, SV_F64, 1),
    SV(loss_n, SV_I64, 1),
    SV(last_vloss, SV_F64, 1),
    SV(last_vmetric, SV_F64, 1),
    SV(have_best, SV_I64, 1),
    SV(best_score, SV_F64, 1),
    SV(bad_checks, SV_I64, 1),
    SV(has_val, SV_I64, 1),
    SV(best_val_loss, SV_F64, 1),
    SV(best_val_acc, SV_F64, 1),
    SV(optim_step, SV_I64, 1),
    SV(emb_step, SV_I64, 1),
    SV(compute_threads, SV_I64, 1),
    SV(jsonl_bytes, SV_I64, 1),
    SV(tb_bytes, SV_I64, 1),
    SV(tb_records, SV_I64, 1),
    SV(tb_file, SV_STR, 1),
    SV(stage_seconds, SV_F64, TRAIN_STATE_STAGES),
    SV(timed_steps, SV_I64, 1),
    SV(epoch_stage_seconds, SV_F64, TRAIN_STATE_STAGES),
    SV(epoch_timed_steps, SV_I64, 1),
    SV(train_seconds, SV_F64, 1),
};
#undef SV
#define NUM_SCALARS (int)(sizeof SCALARS / sizeof SCALARS[0])
/* metadata entries of the scalars (arrays: one per element) */
#define MAX_SCALAR_ENTRIES (NUM_SCALARS + 2 * TRAIN_STATE_STAGES)

/* "s.<name>" or "s.<name>.<i>" for arrays. */
static void scalar_key(char *out, size_t cap, const sv_field *f, int i) {
    if (f->count == 1) snprintf(out, cap, "s.%s", f->name);
    else snprintf(out, cap, "s.%s.%d", f->name, i);
}

static void scalar_format(char *out, size_t cap, const sv_field *f, const train_state_scalars *s, int i) {
    const char *base = (const char *)s + f->offset;
    if (f->kind == SV_I64) {
        int64_t v;
        memcpy(&v, base + (size_t)i * sizeof v, sizeof v);
        snprintf(out, cap, "%" PRId64, v);
    } else if (f->kind == SV_F64) {
        double v;
        uint64_t bits;
        memcpy(&v, base + (size_t)i * sizeof v, sizeof v);
        memcpy(&bits, &v, sizeof bits);
        snprintf(out, cap, "0x%016" PRIx64, bits); /* exact, NaN included */
    } else {
        snprintf(out, cap, "%s", base);
    }
}

/* Parses text into field f of *s (element i); returns 0 or -1. */
static int scalar_parse(const char *text, const sv_field *f, train_state_scalars *s, int i) {
    char *base = (char *)s + f->offset;
    char *end = NULL;
    errno = 0;
    if (f->kind == SV_I64) {
        long long v = strtoll(text, &end, 10);
        if (errno || end == text || *end) return -1;
        int64_t x = (int64_t)v;
        memcpy(base + (size_t)i * sizeof x, &x, sizeof x);
    } else if (f->kind == SV_F64) {
        if (strncmp(text, "0x", 2) != 0 || strlen(text) != 18) return -1;
        unsigned long long bits = strtoull(text + 2, &end, 16);
        if (errno || *end) return -1;
        uint64_t b = (uint64_t)bits;
        double x;
        memcpy(&x, &b, sizeof x);
        memcpy(base + (size_t)i * sizeof x, &x, sizeof x);
    } else {
        const size_t cap = sizeof s->tb_file; /* the only string field */
        if (strlen(text) >= cap) return -1;
        snprintf(base, cap, "%s", text);
    }
    return 0;
}

/* ---- writing ------------------------------------------------------------------------ */

int train_state_path(char *out, size_t cap, const char *model_uri, cgnn_err *err) {
    if (snprintf(out, cap, "%s.state", model_uri) >= (int)cap)
        return err_set(err, CGNN_ERR_INPUT, "%s: trainedModelUri too long for its training state file", model_uri);
    return 0;
}

int64_t train_state_data_bytes(const train_state_tensor *t, int n) {
    int64_t b = 0;
    for (int i = 0; i < n; i++) b += t[i].rows * t[i].cols * (int64_t)sizeof(float);
    return b;
}

/* The metadata of one save: keys and values in fixed buffers (one allocation per checkpoint,
 * next to the file write; nothing per step). */
enum { MAX_META = 1 + TRAIN_STATE_MAX_FIELDS + MAX_SCALAR_ENTRIES };
typedef struct state_meta {
    char fp_keys[TRAIN_STATE_MAX_FIELDS][72];
    char keys[MAX_SCALAR_ENTRIES][64];
    char vals[MAX_SCALAR_ENTRIES][256];
    const char *meta[2 * MAX_META];
} state_meta;

int train_state_save(const char *path, const train_state_fingerprint *fp, const train_state_scalars *s,
                     const train_state_tensor *t, int n, int64_t exit_after_bytes, cgnn_err *err) {
    CGNN_CHECK(n >= 0 && n <= TRAIN_STATE_MAX_TENSORS);
    state_meta *m = cgnn_malloc(sizeof *m);
    int nm = 0;
    m->meta[2 * nm] = STATE_FORMAT_KEY, m->meta[2 * nm + 1] = STATE_FORMAT_VERSION, nm++;
    for (int i = 0; i < fp->n; i++) {
        snprintf(m->fp_keys[i], sizeof m->fp_keys[i], "fp.%s", fp->key[i]);
        m->meta[2 * nm] = m->fp_keys[i], m->meta[2 * nm + 1] = fp->value[i], nm++;
    }
    int ns = 0;
    for (int k = 0; k < NUM_SCALARS; k++)
        for (int i = 0; i < SCALARS[k].count; i++, ns++) {
            CGNN_CHECK(ns < MAX_SCALAR_ENTRIES);
            scalar_key(m->keys[ns], sizeof m->keys[ns], &SCALARS[k], i);
            scalar_format(m->vals[ns], sizeof m->vals[ns], &SCALARS[k], s, i);
            m->meta[2 * nm] = m->keys[ns], m->meta[2 * nm + 1] = m->vals[ns], nm++;
        }
    st_tensor st[TRAIN_STATE_MAX_TENSORS];
    for (int i = 0; i < n; i++)
        st[i] = (st_tensor){.name = t[i].name, .ndim = 2, .shape = {t[i].rows, t[i].cols, 1, 1}, .data = t[i].data};
    durable_file f;
    int rc = durable_open(&f, path, err);
    if (rc == 0) {
        f.exit_after_bytes = exit_after_bytes;
        rc = safetensors_write_to(&f, st, n, m->meta, nm, err);
        if (rc == 0) rc = durable_commit(&f, err);
        else durable_abort(&f);
    }
    free(m);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------ */

/* The advice every refusal ends with. */
static int refuse(cgnn_err *err, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(cgnn_err *err, const char *path, const char *fmt, ...) {
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(err, CGNN_ERR_INPUT,
                   "%s: cannot resume from this training state: %s. Delete the file to start training from "
                   "the beginning",
                   path, what);
}

int train_state_open(train_state_reader *r, const char *path, const train_state_fingerprint *fp,
                     train_state_scalars *s, cgnn_err *err) {
    memset(r, 0, sizeof *r);
    memset(s, 0, sizeof *s);
    snprintf(r->path, sizeof r->path, "%s", path);
    cgnn_err e = {0};
    if (safetensors_read_header(&r->f, path, &e) != 0) return refuse(err, path, "%s", e.msg);
    const char *fmt = safetensors_meta(&r->f, STATE_FORMAT_KEY);
    if (!fmt) return refuse(err, path, "not a cgnn training state (no '%s' in its metadata)", STATE_FORMAT_KEY);
    if (strcmp(fmt, STATE_FORMAT_VERSION) != 0)
        return refuse(err, path, "layout version %s, this cgnn reads version %s", fmt, STATE_FORMAT_VERSION);
    /* the fingerprint: every field of this job, with the same value; no field this job lacks */
    char key[96];
    for (int i = 0; i < fp->n; i++) {
        snprintf(key, sizeof key, "fp.%s", fp->key[i]);
        const char *v = safetensors_meta(&r->f, key);
        if (!v) return refuse(err, path, "it lacks field '%s' (written by another version of cgnn)", fp->key[i]);
        if (strcmp(v, fp->value[i]) != 0)
            return refuse(err, path, "it was written by a different job: %s is %s in the state, %s in this job",
                          fp->key[i], v, fp->value[i]);
    }
    for (int k = 0; k < r->f.n_meta; k++) {
        const char *mk = r->f.meta[2 * k];
        if (strncmp(mk, "fp.", 3) != 0) continue;
        int found = 0;
        for (int i = 0; i < fp->n && !found; i++) found = strcmp(mk + 3, fp->key[i]) == 0;
        if (!found)
            return refuse(err, path, "it was written by a different job: it has %s = %s, which this job does not",
                          mk + 3, r->f.meta[2 * k + 1]);
    }
    for (int k = 0; k < NUM_SCALARS; k++)
        for (int i = 0; i < SCALARS[k].count; i++) {
            scalar_key(key, sizeof key, &SCALARS[k], i);
            const char *v = safetensors_meta(&r->f, key);
            if (!v) return refuse(err, path, "metadata '%s' is missing", key);
            if (scalar_parse(v, &SCALARS[k], s, i) != 0)
                return refuse(err, path, "metadata '%s' is not valid: '%s'", key, v);
        }
    if (s->step < 0 || s->epoch < 0 || s->next_batch < 0 || s->loss_n < 0 || s->jsonl_bytes < 0 || s->tb_bytes < 0)
        return refuse(err, path, "negative step, epoch, batch or log length in its metadata");
    return 0;
}

/* Reads bytes [off, off + len) of fd into dst, skipping (leaving untouched) every 64 KiB block
 * that is all zeros in the file: dst is zero-filled memory whose pages are backed on first
 * write, and stays unbacked where the state is zero. Returns 0 or -1 (errno). */
static int read_lazy(int fd, float *dst, int64_t len, int64_t off) {
    enum { BLOCK = 1 << 16 };
    unsigned char *buf = cgnn_malloc(BLOCK);
    static const unsigned char zero[BLOCK];
    int rc = 0;
    for (int64_t done = 0; done < len && rc == 0;) {
        const size_t n = (size_t)(len - done < BLOCK ? len - done : BLOCK);
        size_t got = 0;
        while (got < n) {
            ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + done + (int64_t)got));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                if (k == 0) errno = EIO;
                rc = -1;
                break;
            }
            got += (size_t)k;
        }
        if (rc == 0 && memcmp(buf, zero, n) != 0) memcpy((unsigned char *)dst + done, buf, n);
        done += (int64_t)n;
    }
    free(buf);
    return rc;
}

int train_state_read(train_state_reader *r, const train_state_tensor *t, int n, cgnn_err *err) {
    const char *path = r->path;
    if (r->f.n != n) {
        char list[512];
        size_t len = 0;
        list[0] = '\0';
        for (int i = 0; i < r->f.n && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", r->f.names[i]);
        return refuse(err, path, "it holds %d tensors (%s), this job needs %d", r->f.n, list, n);
    }
    for (int i = 0; i < n; i++) {
        const int k = safetensors_find(&r->f, t[i].name);
        if (k < 0) return refuse(err, path, "tensor '%s' is missing", t[i].name);
        if (r->f.ndims[k] != 2 || r->f.shapes[k][0] != t[i].rows || r->f.shapes[k][1] != t[i].cols)
            return refuse(err, path, "tensor '%s' has shape [%lld, %lld], this job needs [%lld, %lld]", t[i].name,
                          (long long)r->f.shapes[k][0], (long long)r->f.shapes[k][1], (long long)t[i].rows,
                          (long long)t[i].cols);
    }
    for (int i = 0; i < n; i++) {
        const int k = safetensors_find(&r->f, t[i].name);
        cgnn_err e = {0};
        if (!t[i].lazy) {
            if (safetensors_read_tensor(&r->f, k, t[i].data, &e) != 0) return refuse(err, path, "%s", e.msg);
            continue;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return refuse(err, path, "cannot open: %s", strerror(errno));
        const int bad = read_lazy(fd, t[i].data, t[i].rows * t[i].cols * (int64_t)sizeof(float),
                                  r->f.file_offsets[k]) != 0;
        const int e2 = errno;
        close(fd);
        if (bad) return refuse(err, path, "tensor '%s': read failed: %s", t[i].name, strerror(e2));
    }
    return 0;
}

void train_state_close(train_state_reader *r) {
    if (!r) return;
    safetensors_free(&r->f);
}
