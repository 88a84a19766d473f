/* outputs.c — atomic files, metrics JSON, checkpoints, metrics.jsonl; see outputs.h. */
#include "train/outputs.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/outguard.h"
#include "io/safetensors.h"
#include "train/gigl_ckpt.h"
#include "train/train_state.h"
#include "util/cleanup.h"

static int mkdir_p(char *dir, cgnn_err *err) {
    size_t len = strlen(dir);
    if (len == 0) return 0;
    for (size_t i = 1; i <= len; i++) {
        if (dir[i] != '/' && dir[i] != '\0') continue;
        char c = dir[i];
        dir[i] = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            struct stat st;
            if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create directory: %s", dir, strerror(e));
                dir[i] = c;
                return -1;
            }
        }
        dir[i] = c;
    }
    return 0;
}

int outputs_make_parent(const char *path, int is_dir, cgnn_err *err) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    if (!is_dir) {
        char *slash = strrchr(buf, '/');
        if (!slash) return 0;
        *slash = '\0';
    }
    return mkdir_p(buf, err);
}

int outputs_remove(const char *path, cgnn_err *err) {
    if (!path || !*path) return 0;
    if (outguard_permit(path, err) != 0) return -1;
    if (unlink(path) != 0 && errno != ENOENT)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot remove the previous output: %s", path, strerror(errno));
    return 0;
}

int outputs_remove_matching(const char *dir, const char *pattern, cgnn_err *err) {
    if (!dir || !*dir) return 0;
    char pat[4200];
    snprintf(pat, sizeof pat, "%s/%s", dir, pattern);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) return 0; /* no match (or no directory): nothing to remove */
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) rc = outputs_remove(g.gl_pathv[i], err);
    globfree(&g);
    return rc;
}

int outputs_declare_train(outguard *g, const task_config *c, int world_size, cgnn_err *err) {
    char f_model[CONFIG_PATH_MAX + 64], f_metrics[CONFIG_PATH_MAX + 64], f_tb[CONFIG_PATH_MAX + 64],
        f_prof[CONFIG_PATH_MAX + 64], f_state[CONFIG_PATH_MAX + 128];
    snprintf(f_model, sizeof f_model, "%s: sharedConfig.trainedModelMetadata.trainedModelUri", c->file);
    snprintf(f_metrics, sizeof f_metrics, "%s: sharedConfig.trainedModelMetadata.evalMetricsUri", c->file);
    snprintf(f_tb, sizeof f_tb, "%s: sharedConfig.trainedModelMetadata.tensorboardLogsUri", c->file);
    snprintf(f_prof, sizeof f_prof, "%s: profilerConfig.profilerLogDir", c->file);
    snprintf(f_state, sizeof f_state, "%s (its training state)", f_model);
    const char *model_out = c->should_skip_training ? "" : c->trained_model_uri;
    /* the training state lives next to the model: "<trainedModelUri>.state" (train/train_state.h) */
    char state[CONFIG_PATH_MAX + 16] = "";
    if (model_out[0] && train_state_path(state, sizeof state, model_out, err) != 0) return -1;
    if (outguard_check_file(g, model_out, f_model, err) != 0) return -1;
    if (outguard_check_file(g, c->eval_metrics_uri, f_metrics, err) != 0) return -1;
    if (outguard_check_file(g, state, f_state, err) != 0) return -1;
    static const char *const tb_own[] = {"metrics.jsonl", "events.out.tfevents.*", "trace_rank*.json", NULL};
    const char *const also[] = {c->trained_model_uri, c->eval_metrics_uri, state[0] ? state : NULL, NULL};
    if (outguard_check_dir(g, c->tensorboard_logs_uri, tb_own, also, f_tb, err) != 0) return -1;
    if (c->profiler_enabled && c->profiler_log_dir[0]) {
        /* one trace per rank: trace_rank<R>.json for R < world_size (the pattern covers them all) */
        (void)world_size;
        if (outguard_check_dir(g, c->profiler_log_dir, tb_own, also, f_prof, err) != 0) return -1;
    }
    return 0;
}

int outputs_write_text(const char *path, const char *text, cgnn_err *err) {
    if (outguard_permit(path, err) != 0) return -1;
    if (outputs_make_parent(path, 0, err) != 0) return -1;
    char tmp[4200];
    const int h = cleanup_tmp_path(tmp, sizeof tmp, path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int e = errno;
        cleanup_forget(h);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", tmp, strerror(e));
    }
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    int e = ok ? 0 : errno;
    if (fclose(f) != 0 && ok) ok = 0, e = errno;
    if (ok && rename(tmp, path) != 0) ok = 0, e = errno;
    if (!ok) unlink(tmp);
    cleanup_forget(h);
    if (!ok) return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", path, strerror(e ? e : EIO));
    return 0;
}

int outputs_write_eval_metrics(const char *path, const char *const *names, const double *values, int n,
                               cgnn_err *err) {
    char buf[8192];
    size_t off = (size_t)snprintf(buf, sizeof buf, "{\"metrics\": [");
    for (int i = 0; i < n && off < sizeof buf; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off,
                                "%s{\"name\": \"%s\", \"numberValue\": \"%.6g\", \"format\": \"RAW\"}",
                                i ? ", " : "", names[i], values[i]);
    if (off < sizeof buf) snprintf(buf + off, sizeof buf - off, "]}\n");
    return outputs_write_text(path, buf, err);
}

/* The model's tensors + the tables (node embedding tables), written straight from the caller's
 * buffers (safetensors_write streams them: no copy). */
int outputs_save_model_tables(const char *path, task_kind task, const model *m, const float *params,
                              const outputs_table *tables, int num_tables, cgnn_err *err) {
    return outputs_save_model_input(path, task, m, params, tables, num_tables, NULL, err);
}

int outputs_save_model_input(const char *path, task_kind task, const model *m, const float *params,
                             const outputs_table *tables, int num_tables, const outputs_input *input, cgnn_err *err) {
    if (outputs_make_parent(path, 0, err) != 0) return -1;
    CGNN_CHECK(num_tables >= 0 && num_tables <= MINIBATCH_MAX_NODE_TYPES);
    st_tensor t[MODEL_MAX_TENSORS + MINIBATCH_MAX_NODE_TYPES + 1];
    for (int i = 0; i < m->num_tensors; i++) {
        const model_tensor *mt = &m->tensors[i];
        t[i].name = mt->name;
        t[i].ndim = mt->ndim;
        for (int d = 0; d < 4; d++) t[i].shape[d] = (d < mt->ndim && d < 3) ? mt->shape[d] : 1;
        t[i].data = params + mt->offset;
    }
    int n = m->num_tensors;
    int64_t emb_dim = 0;
    for (int i = 0; i < num_tables; i++) {
        CGNN_CHECK(tables[i].rows >= 1 && tables[i].dim >= 1 && tables[i].data);
        t[n++] = (st_tensor){.name = tables[i].key, .ndim = 2, .shape = {tables[i].rows, tables[i].dim, 1, 1},
                             .data = tables[i].data};
        emb_dim = tables[i].dim;
    }
    char layers[32], in[32], hidden[32], out[32], heads[32], emb[32];
    const int lgc = m->cfg.kind == MODEL_LIGHTGCN;
    snprintf(layers, sizeof layers, "%d", lgc ? m->cfg.prop_layers : m->cfg.num_layers); /* LightGCN: its LGConvs */
    char alpha[(MINIBATCH_MAX_LAYERS + 1) * 20] = "";
    for (int l = 0, off = 0; lgc && l <= m->cfg.prop_layers; l++) /* %.9g: the float's exact value back */
        off += snprintf(alpha + off, sizeof alpha - (size_t)off, "%s%.9g", l ? "," : "", (double)m->cfg.alpha[l]);
    snprintf(in, sizeof in, "%lld", (long long)m->cfg.in_dim);
    snprintf(hidden, sizeof hidden, "%lld", (long long)m->cfg.hidden_dim);
    snprintf(out, sizeof out, "%lld", (long long)m->cfg.out_dim);
    snprintf(heads, sizeof heads, "%d", m->cfg.num_heads);
    snprintf(emb, sizeof emb, "%lld", (long long)emb_dim);
    const char *meta[2 * 12] = {"format", "pt", "cgnn_model", model_kind_name(m->cfg.kind), "num_layers", layers,
                                "in_channels", in, "hidden_channels", hidden, "out_channels", out, "heads", heads};
    int nmeta = 7;
    if (num_tables) meta[2 * nmeta] = "node_embedding_dim", meta[2 * nmeta + 1] = emb, nmeta++;
    if (lgc) meta[2 * nmeta] = "lightgcn_alpha", meta[2 * nmeta + 1] = alpha, nmeta++; /* (always with its table) */
    if (input && input->node_feature && m->cfg.num_layers > 0)
        meta[2 * nmeta] = "node_feature", meta[2 * nmeta + 1] = input->node_feature, nmeta++;
    if (input && input->feature_normalization && m->cfg.num_layers > 0)
        meta[2 * nmeta] = "feature_normalization", meta[2 * nmeta + 1] = input->feature_normalization, nmeta++;
    if (lgc) { /* ... and PyG LightGCN's `alpha` buffer, part of its state_dict */
        CGNN_CHECK(num_tables == 1);
        t[n++] = (st_tensor){.name = OUTPUTS_LIGHTGCN_ALPHA_KEY, .ndim = 1, .shape = {m->cfg.prop_layers + 1, 1, 1, 1},
                             .data = m->cfg.alpha};
    }
    if (gigl_ckpt_is_torch(path)) { /* the tables go after the model, keys unchanged */
        ts_tensor extra[MINIBATCH_MAX_NODE_TYPES + 1];
        for (int i = 0; i < num_tables; i++) {
            const st_tensor *s = &t[m->num_tensors + i];
            extra[i] = (ts_tensor){s->name, 2, {s->shape[0], s->shape[1], 0, 0}, s->data};
        }
        if (lgc) extra[num_tables] = (ts_tensor){OUTPUTS_LIGHTGCN_ALPHA_KEY, 1, {m->cfg.prop_layers + 1, 0, 0, 0}, m->cfg.alpha};
        return gigl_ckpt_save(path, task, m, params, extra, num_tables + lgc, meta, nmeta, err);
    }
    return safetensors_write(path, t, n, meta, nmeta, err);
}

int outputs_save_model(const char *path, task_kind task, const model *m, const float *params, cgnn_err *err) {
    return outputs_save_model_tables(path, task, m, params, NULL, 0, err);
}

int outputs_save_model_with_embedding(const char *path, task_kind task, const model *m, const float *params,
                                      const float *emb_weight, int64_t emb_rows, int64_t emb_dim, cgnn_err *err) {
    const outputs_table tb = {OUTPUTS_EMBEDDING_KEY, emb_weight, emb_rows, emb_dim};
    return outputs_save_model_tables(path, task, m, params, &tb, emb_weight ? 1 : 0, err);
}

int outputs_read_checkpoint(st_file *f, const char *path, cgnn_err *err) {
    return gigl_ckpt_is_torch(path) ? gigl_ckpt_read(f, path, err) : safetensors_read(f, path, err);
}

int outputs_check_checkpoint(const char *path, task_kind task, const model_config *cfg, const char *field,
                             cgnn_err *err) {
    return gigl_ckpt_check(path, task, cfg, field, err);
}

int outputs_load_model(const char *path, task_kind task, model *m, cgnn_err *err) {
    if (gigl_ckpt_is_torch(path)) return gigl_ckpt_load_model(path, task, m, err);
    /* Header only, then each model tensor straight into place: an embedding table in the same
     * file (possibly gigabytes) is never read. */
    st_file f;
    if (safetensors_read_header(&f, path, err) != 0) return -1;
    int rc = 0;
    for (int i = 0; i < m->num_tensors && rc == 0; i++) {
        const model_tensor *mt = &m->tensors[i];
        int k = safetensors_find(&f, mt->name);
        if (k < 0) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s: missing tensor '%s' (the checkpoint is not a %s with this config)",
                         path, mt->name, model_kind_name(m->cfg.kind));
            break;
        }
        int same = f.ndims[k] == mt->ndim;
        for (int d = 0; same && d < mt->ndim; d++) same = f.shapes[k][d] == mt->shape[d];
        if (!same) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' has a different shape than the configured model",
                         path, mt->name);
            break;
        }
        rc = safetensors_read_tensor(&f, k, m->params + mt->offset, err);
    }
    /* every other key is an error, except node embedding tables (loaded separately) */
    int extra = 0;
    for (int k = 0; k < f.n; k++)
        extra += !strcmp(f.names[k], OUTPUTS_EMBEDDING_KEY) || !strncmp(f.names[k], "embedding_dict.", 15) ||
                 (m->cfg.kind == MODEL_LIGHTGCN && !strcmp(f.names[k], OUTPUTS_LIGHTGCN_ALPHA_KEY));
    if (rc == 0 && f.n != m->num_tensors + extra)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: %d tensors, the configured model has %d", path, f.n - extra,
                     m->num_tensors);
    safetensors_free(&f);
    return rc;
}

int outputs_load_embedding(const char *path, float *emb_weight, int64_t emb_rows, int64_t emb_dim, cgnn_err *err) {
    return outputs_load_table(path, OUTPUTS_EMBEDDING_KEY, emb_weight, emb_rows, emb_dim, err);
}

int outputs_load_table(const char *path, const char *key, float *emb_weight, int64_t emb_rows, int64_t emb_dim,
                       cgnn_err *err) {
    CGNN_CHECK(emb_weight && emb_rows >= 1 && emb_dim >= 1);
    if (gigl_ckpt_is_torch(path)) return gigl_ckpt_load_table(path, key, emb_weight, emb_rows, emb_dim, err);
    st_file f;
    if (safetensors_read_header(&f, path, err) != 0) return -1;
    int rc = 0;
    const int k = safetensors_find(&f, key);
    if (k < 0)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: missing tensor '%s' (the checkpoint has no node embedding table)", path,
                     key);
    else if (f.ndims[k] != 2 || f.shapes[k][0] != emb_rows || f.shapes[k][1] != emb_dim)
        rc = err_set(err, CGNN_ERR_INPUT,
                     "%s: tensor '%s' has shape [%lld, %lld] (%d dims), the configured table is [%lld, %lld]", path,
                     key, (long long)f.shapes[k][0], (long long)f.shapes[k][1], f.ndims[k],
                     (long long)emb_rows, (long long)emb_dim);
    else
        rc = safetensors_read_tensor(&f, k, emb_weight, err); /* straight into the table */
    safetensors_free(&f);
    return rc;
}

int jsonl_open(jsonl_log *l, const char *dir, const char *name, cgnn_err *err) {
    memset(l, 0, sizeof *l);
    if (!dir || !*dir) return 0;
    if (outputs_make_parent(dir, 1, err) != 0) return -1;
    snprintf(l->path, sizeof l->path, "%s/%s", dir, name);
    if (outguard_permit(l->path, err) != 0) return -1;
    l->fp = fopen(l->path, "a"); /* a log: earlier runs' records stay (train/outputs.h) */
    if (!l->fp) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot open: %s", l->path, strerror(errno));
    return 0;
}

int jsonl_open_continue(jsonl_log *l, const char *dir, const char *name, int64_t keep_bytes, int *was_short,
                        cgnn_err *err) {
    memset(l, 0, sizeof *l);
    *was_short = 0;
    if (!dir || !*dir) return 0;
    if (outputs_make_parent(dir, 1, err) != 0) return -1;
    snprintf(l->path, sizeof l->path, "%s/%s", dir, name);
    if (outguard_permit(l->path, err) != 0) return -1;
    struct stat st;
    *was_short = stat(l->path, &st) != 0 || (int64_t)st.st_size < keep_bytes;
    l->fp = fopen(l->path, "a");
    if (!l->fp) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot open: %s", l->path, strerror(errno));
    if (!*was_short && ftruncate(fileno(l->fp), (off_t)keep_bytes) != 0) {
        int e = errno;
        fclose(l->fp);
        l->fp = NULL;
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot cut the log back to the checkpoint: %s", l->path,
                       strerror(e));
    }
    fseek(l->fp, 0, SEEK_END); /* so jsonl_bytes counts from the end before the first append */
    return 0;
}

int64_t jsonl_bytes(const jsonl_log *l) {
    if (!l || !l->fp) return 0;
    long pos = ftell(l->fp);
    return pos < 0 ? 0 : (int64_t)pos;
}

void jsonl_write_line(jsonl_log *l, const char *json) {
    if (!l || !l->fp) return;
    if (fprintf(l->fp, "%s\n", json) < 0 || fflush(l->fp) != 0) {
        if (!l->failed_errno) l->failed_errno = errno ? errno : EIO;
    }
}

void jsonl_write(jsonl_log *l, const char *const *keys, const double *values, int n, int n_int) {
    if (!l || !l->fp) return;
    fputc('{', l->fp);
    for (int i = 0; i < n; i++) {
        fprintf(l->fp, "%s\"%s\": ", i ? ", " : "", keys[i]);
        if (!isfinite(values[i])) fputs("null", l->fp);
        else if (i < n_int) fprintf(l->fp, "%lld", (long long)values[i]);
        else fprintf(l->fp, "%.9g", values[i]);
    }
    fputs("}\n", l->fp);
    if ((fflush(l->fp) != 0 || ferror(l->fp)) && !l->failed_errno) l->failed_errno = errno ? errno : EIO;
}

int jsonl_check(const jsonl_log *l, cgnn_err *err) {
    if (!l || !l->failed_errno) return 0;
    return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot write the metrics log: %s", l->path, strerror(l->failed_errno));
}

int jsonl_close(jsonl_log *l, cgnn_err *err) {
    if (!l || !l->fp) return jsonl_check(l, err);
    if ((fflush(l->fp) != 0 || fclose(l->fp) != 0) && !l->failed_errno) l->failed_errno = errno ? errno : EIO;
    l->fp = NULL;
    return jsonl_check(l, err);
}
