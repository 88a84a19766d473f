/* gigl_ckpt.c — cgnn's model <-> the state_dict of GiGL's model classes in a .pt file; see
 * gigl_ckpt.h.
 *
 * Dimension legend: L = layers; C = the last layer's output channels in cgnn (out_channels;
 * the classes for node classification); W = the width GiGL's encoder gives its last layer
 * (hidden_dim; the head's input); I = a layer's input channels; H = GAT heads.
 *
 * A last-layer tensor is seen as [outer, C, inner] (C on the axis that holds the output
 * channels): weight [C, I] = [1, C, I]; GAT lin.weight [H*C, I] = [H, C, I]; bias [C] =
 * [1, C, 1]; GAT att_src [1, H, C] = [H, C, 1]. Padding writes [outer, W, inner] with zero rows
 * past C; reading takes the head into it (head_apply).
 */
#include "train/gigl_ckpt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked.h"

#define ENC "_encoder."
#define HEAD_W "_head.weight"
#define HEAD_B "_head.bias"
#define GKEY_MAX (sizeof(((model_tensor *)0)->name) + 64) /* a model key under "_encoder." */
#define FKEY_MAX 2048                                         /* a key of the file, mapped */
_Static_assert(FKEY_MAX > 1024 + 16, "file keys are up to 1024 bytes (io/torch_save.c)");

int gigl_ckpt_is_torch(const char *path) {
    const size_t n = path ? strlen(path) : 0;
    return (n > 3 && strcmp(path + n - 3, ".pt") == 0) || (n > 4 && strcmp(path + n - 4, ".pth") == 0);
}

/* GiGL's node classification model (an encoder + a Linear head) exists for homogeneous graphs. */
static int has_head(task_kind task, model_kind kind) {
    return task == TASK_NODE_CLASSIFICATION && !model_kind_is_typed(kind);
}

void gigl_ckpt_key(char *out, size_t cap, model_kind kind, const char *key) {
    if (kind == MODEL_GRAPHSAGE && strncmp(key, "convs.", 6) == 0) snprintf(out, cap, ENC "conv_layers.%s", key + 6);
    else snprintf(out, cap, ENC "%s", key);
}

/* cgnn's key of an encoder key of the file ("_encoder.conv_layers.0.x" -> "convs.0.x"); 0 when
 * gkey is not an encoder key. */
static int from_gigl(char *out, size_t cap, const char *gkey) {
    if (strncmp(gkey, ENC, strlen(ENC)) != 0) return 0;
    const char *rest = gkey + strlen(ENC);
    if (strncmp(rest, "conv_layers.", 12) == 0) snprintf(out, cap, "convs.%s", rest + 12);
    else snprintf(out, cap, "%s", rest);
    return 1;
}

/* l of a key "convs.<l>.<...>" (cgnn's), or -1. */
static int layer_of(const char *key) {
    if (strncmp(key, "convs.", 6) != 0) return -1;
    const char *p = key + 6;
    int l = 0, digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 6; p++, digits++) l = 10 * l + (*p - '0');
    return digits > 0 && *p == '.' ? l : -1;
}

/* node embedding tables, and PyG LightGCN's `alpha` buffer: kept under their own names */
static int is_table_key(const char *k) {
    return strcmp(k, "embedding.weight") == 0 || strncmp(k, "embedding_dict.", 15) == 0 || strcmp(k, "alpha") == 0;
}

/* The [outer, C, inner] view of a last-layer tensor with C output channels; 0 if it has none. */
static int out_view(int ndim, const int64_t *shape, int64_t C, int64_t *outer, int64_t *inner) {
    if (C < 1) return 0;
    if (ndim == 3) *outer = shape[0] * shape[1], *inner = 1;
    else if (ndim == 2) *outer = shape[0] / C, *inner = shape[1];
    else if (ndim == 1) *outer = 1, *inner = 1;
    else return 0;
    return ndim == 3 ? shape[2] == C : shape[0] == *outer * C;
}

/* shape with its C output channels replaced by W. */
static void reshape_out(int ndim, const int64_t *shape, int64_t C, int64_t W, int64_t *out) {
    for (int d = 0; d < 3; d++) out[d] = shape[d];
    if (ndim == 3) out[2] = W;
    else out[0] = shape[0] / C * W;
}

/* ---- writing ------------------------------------------------------------------------------ */

int gigl_ckpt_check(const char *path, task_kind task, const model_config *cfg, const char *field, cgnn_err *err) {
    if (!gigl_ckpt_is_torch(path) || !has_head(task, cfg->kind) || cfg->out_dim <= cfg->hidden_dim) return 0;
    return err_set(err, CGNN_ERR_INPUT,
                   "%s: '%s': a .pt checkpoint for node classification is GiGL's HomogeneousNodeClassificationGNN "
                   "(an encoder hidden_dim wide, then a Linear head to the classes): out_channels %lld (the classes) "
                   "must be <= hidden_dim %lld; raise hidden_dim, or write a .safetensors file",
                   field, path, (long long)cfg->out_dim, (long long)cfg->hidden_dim);
}

int gigl_ckpt_save(const char *path, task_kind task, const model *m, const float *params, const ts_tensor *extra,
                   int n_extra, const char *const *meta, int n_meta, cgnn_err *err) {
    CGNN_CHECK(n_extra >= 0 && n_meta >= 0);
    const int head = has_head(task, m->cfg.kind), L = m->cfg.num_layers;
    const int64_t C = m->cfg.out_dim, W = m->cfg.hidden_dim;
    if (head && gigl_ckpt_check(path, task, &m->cfg, "writing the checkpoint", err) != 0) return -1;
    const int cap = m->num_tensors + 2 + n_extra;
    ts_tensor *t = (ts_tensor *)cgnn_calloc((size_t)cap, sizeof *t);
    char(*names)[GKEY_MAX] = cgnn_calloc((size_t)cap, GKEY_MAX);
    float **owned = (float **)cgnn_calloc((size_t)cap + 2, sizeof(float *));
    int n = 0, no = 0;
    for (int i = 0; i < m->num_tensors; i++, n++) {
        const model_tensor *mt = &m->tensors[i];
        gigl_ckpt_key(names[n], GKEY_MAX, m->cfg.kind, mt->name);
        t[n].name = names[n];
        t[n].ndim = mt->ndim;
        for (int d = 0; d < mt->ndim; d++) t[n].shape[d] = mt->shape[d];
        t[n].data = params + mt->offset;
        if (!head || layer_of(mt->name) != L - 1) continue;
        int64_t outer, inner;
        CGNN_CHECK(out_view(mt->ndim, mt->shape, C, &outer, &inner));
        reshape_out(mt->ndim, mt->shape, C, W, t[n].shape);
        float *p = owned[no++] = (float *)cgnn_calloc((size_t)(outer * W * inner), sizeof(float));
        for (int64_t o = 0; o < outer; o++) /* rows past C stay zero */
            memcpy(p + o * W * inner, params + mt->offset + o * C * inner, (size_t)(C * inner) * sizeof(float));
        t[n].data = p;
    }
    if (head) { /* _head = [I_C | 0], bias 0: GiGL's logits are cgnn's */
        float *hw = owned[no++] = (float *)cgnn_calloc((size_t)(C * W), sizeof(float));
        float *hb = owned[no++] = (float *)cgnn_calloc((size_t)C, sizeof(float));
        for (int64_t c = 0; c < C; c++) hw[c * W + c] = 1.0f;
        t[n++] = (ts_tensor){HEAD_W, 2, {C, W, 0, 0}, hw};
        t[n++] = (ts_tensor){HEAD_B, 1, {C, 0, 0, 0}, hb};
    }
    for (int i = 0; i < n_extra; i++) t[n++] = extra[i];
    const char **meta2 = (const char **)cgnn_calloc(2 * (size_t)n_meta + 2, sizeof(char *));
    for (int k = 0; k < 2 * n_meta; k++) meta2[k] = meta[k];
    meta2[2 * n_meta] = "task";
    meta2[2 * n_meta + 1] = task == TASK_NODE_CLASSIFICATION ? "node_classification" : "link_prediction";
    const int rc = torch_save_write(path, t, n, meta2, n_meta + 1, err);
    for (int k = 0; k < no; k++) free(owned[k]);
    free(owned);
    free(meta2);
    free(names);
    free(t);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* The file's head: [C, W] weight and [C] bias, and whether it is [I_C | 0] with a zero bias. */
typedef struct head_info {
    int present;
    int64_t C, W;
    float *w, *b;     /* owned */
    int identity;
} head_info;

static void head_free(head_info *h) {
    free(h->w);
    free(h->b);
    memset(h, 0, sizeof *h);
}

/* Reads the head of f; want_c > 0: the classes it must map to. Absent: h->present = 0. */
static int head_read(const ts_file *f, int64_t want_c, head_info *h, cgnn_err *err) {
    memset(h, 0, sizeof *h);
    const int kw = torch_save_find(f, HEAD_W), kb = torch_save_find(f, HEAD_B);
    if (kw < 0 && kb < 0) return 0;
    if (kw < 0 || kb < 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: '%s' without '%s'", f->path, kw < 0 ? HEAD_B : HEAD_W,
                       kw < 0 ? HEAD_W : HEAD_B);
    const int64_t C = f->shapes[kw][0], W = f->shapes[kw][1];
    if (f->ndims[kw] != 2 || f->ndims[kb] != 1 || C < 1 || W < 1 || f->shapes[kb][0] != C || C > (1 << 24) ||
        W > (1 << 24))
        return err_set(err, CGNN_ERR_INPUT, "%s: '%s' [%lld, %lld] and '%s' [%lld] are not a Linear layer", f->path,
                       HEAD_W, (long long)C, (long long)W, HEAD_B, (long long)f->shapes[kb][0]);
    if (want_c > 0 && C != want_c)
        return err_set(err, CGNN_ERR_INPUT, "%s: '%s' maps to %lld classes, the configured model has %lld", f->path,
                       HEAD_W, (long long)C, (long long)want_c);
    h->present = 1;
    h->C = C;
    h->W = W;
    h->w = (float *)cgnn_malloc((size_t)(C * W) * sizeof(float));
    h->b = (float *)cgnn_malloc((size_t)C * sizeof(float));
    if (torch_save_read_tensor(f, kw, h->w, err) != 0 || torch_save_read_tensor(f, kb, h->b, err) != 0) {
        head_free(h);
        return -1;
    }
    h->identity = W >= C;
    for (int64_t c = 0; c < C && h->identity; c++) {
        h->identity = h->b[c] == 0.0f;
        for (int64_t w = 0; w < W && h->identity; w++) h->identity = h->w[c * W + w] == (c == w ? 1.0f : 0.0f);
    }
    return 0;
}

/* dst (the [outer, C, inner] tensor cgnn uses) from src (the file's [outer, W, inner] last-layer
 * tensor key) and the head: the top C rows when the head is [I_C | 0]; else the head multiplied
 * in (GraphSAGE, GCN: outer = 1), its bias added to the 1-D tensor (the layer's bias). */
static int head_apply(float *dst, const float *src, int ndim, const int64_t *fshape, const head_info *h,
                      model_kind kind, const char *path, const char *key, cgnn_err *err) {
    int64_t outer, inner;
    if (!out_view(ndim, fshape, h->W, &outer, &inner))
        return err_set(err, CGNN_ERR_INPUT, "%s: '%s' does not have the %lld output channels '%s' takes", path, key,
                       (long long)h->W, HEAD_W);
    const int64_t C = h->C, W = h->W;
    if (h->identity) {
        for (int64_t o = 0; o < outer; o++)
            memcpy(dst + o * C * inner, src + o * W * inner, (size_t)(C * inner) * sizeof(float));
        return 0;
    }
    if (kind == MODEL_GAT || outer != 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: '%s' is not [I | 0] with a zero '%s' as cgnn writes it, and a %s's last layer cannot "
                       "take another Linear head (its attention depends on the projected features)",
                       path, HEAD_W, HEAD_B, model_kind_name(kind));
    for (int64_t c = 0; c < C; c++)
        for (int64_t i = 0; i < inner; i++) {
            double acc = ndim == 1 ? (double)h->b[c] : 0.0;
            for (int64_t w = 0; w < W; w++) acc += (double)h->w[c * W + w] * (double)src[w * inner + i];
            dst[c * inner + i] = (float)acc;
        }
    return 0;
}

int gigl_ckpt_load_model(const char *path, task_kind task, model *m, cgnn_err *err) {
    ts_file f;
    if (torch_save_read_header(&f, path, err) != 0) return -1;
    const int head = has_head(task, m->cfg.kind), L = m->cfg.num_layers;
    head_info h;
    int rc = head_read(&f, head ? m->cfg.out_dim : 0, &h, err);
    if (rc == 0 && head && !h.present)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: no '%s': not a node classification checkpoint in GiGL's layout "
                     "(written for link prediction?)", path, HEAD_W);
    if (rc == 0 && !head && h.present)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: '%s': a node classification checkpoint, but this is %s", path, HEAD_W,
                     model_kind_is_typed(m->cfg.kind) ? "a typed model (no head)" : "link prediction");
    char gkey[GKEY_MAX];
    for (int i = 0; i < m->num_tensors && rc == 0; i++) {
        const model_tensor *mt = &m->tensors[i];
        gigl_ckpt_key(gkey, sizeof gkey, m->cfg.kind, mt->name);
        int k = torch_save_find(&f, gkey);
        if (k < 0) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s: missing tensor '%s' (the checkpoint is not a %s with this config)",
                         path, gkey, model_kind_name(m->cfg.kind));
            break;
        }
        const int last = head && layer_of(mt->name) == L - 1;
        int64_t want[3] = {mt->shape[0], mt->shape[1], mt->shape[2]}, outer, inner;
        if (last) {
            CGNN_CHECK(out_view(mt->ndim, mt->shape, m->cfg.out_dim, &outer, &inner));
            reshape_out(mt->ndim, mt->shape, m->cfg.out_dim, h.W, want);
        }
        int same = f.ndims[k] == mt->ndim;
        for (int d = 0; same && d < mt->ndim; d++) same = f.shapes[k][d] == want[d];
        if (!same) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' has a different shape than the configured model", path,
                         gkey);
            break;
        }
        if (!last) {
            rc = torch_save_read_tensor(&f, k, m->params + mt->offset, err);
            continue;
        }
        float *tmp = (float *)cgnn_malloc((size_t)torch_save_numel(&f, k) * sizeof(float) + 1);
        rc = torch_save_read_tensor(&f, k, tmp, err);
        if (rc == 0) rc = head_apply(m->params + mt->offset, tmp, f.ndims[k], f.shapes[k], &h, m->cfg.kind, path, gkey, err);
        free(tmp);
    }
    /* every other key is an error, except the head and node embedding tables */
    char key[FKEY_MAX];
    for (int k = 0; k < f.n && rc == 0; k++) {
        if (is_table_key(f.names[k]) || (head && (!strcmp(f.names[k], HEAD_W) || !strcmp(f.names[k], HEAD_B))))
            continue;
        if (!from_gigl(key, sizeof key, f.names[k]) || !model_find_tensor(m, key))
            rc = err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' is not part of the configured %d-layer %s", path,
                         f.names[k], L, model_kind_name(m->cfg.kind));
        else {
            char want[FKEY_MAX + 64];
            gigl_ckpt_key(want, sizeof want, m->cfg.kind, key);
            if (strcmp(want, f.names[k]) != 0) /* "_encoder.convs." where GiGL's class says "conv_layers." */
                rc = err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' should be named '%s'", path, f.names[k], want);
        }
    }
    head_free(&h);
    torch_save_free(&f);
    return rc;
}

int gigl_ckpt_load_table(const char *path, const char *key, float *dst, int64_t rows, int64_t dim, cgnn_err *err) {
    CGNN_CHECK(dst && rows >= 1 && dim >= 1);
    ts_file f;
    if (torch_save_read_header(&f, path, err) != 0) return -1;
    int rc = 0;
    const int k = torch_save_find(&f, key);
    if (k < 0)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: missing tensor '%s' (the checkpoint has no node embedding table)", path,
                     key);
    else if (f.ndims[k] != 2 || f.shapes[k][0] != rows || f.shapes[k][1] != dim)
        rc = err_set(err, CGNN_ERR_INPUT,
                     "%s: tensor '%s' has shape [%lld, %lld] (%d dims), the configured table is [%lld, %lld]", path,
                     key, (long long)f.shapes[k][0], (long long)f.shapes[k][1], f.ndims[k], (long long)rows,
                     (long long)dim);
    else
        rc = torch_save_read_tensor(&f, k, dst, err);
    torch_save_free(&f);
    return rc;
}

/* One tensor of the st_file gigl_ckpt_read builds. */
typedef struct out_tensor {
    char *name;         /* owned */
    int src;            /* index in the .pt file */
    int ndim;
    int64_t shape[4];
    int last;           /* a last-layer tensor the head is applied to */
    int64_t offset;     /* floats into the blob */
} out_tensor;

/* Index of cgnn key `name` among o[0..n), or -1. */
static int out_find(const out_tensor *o, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(o[i].name, name) == 0) return i;
    return -1;
}

/* The architecture of a homogeneous model from its keys and shapes (no cgnn metadata). */
static int derive_meta(const out_tensor *o, int n, int L, const head_info *h, char (*val)[32], const char *path,
                       cgnn_err *err) {
    model_kind kind;
    const char *w0;
    if (out_find(o, n, "convs.0.lin_l.weight") >= 0) kind = MODEL_GRAPHSAGE, w0 = "lin_l.weight";
    else if (out_find(o, n, "convs.0.att_src") >= 0) kind = MODEL_GAT, w0 = "lin.weight";
    else if (out_find(o, n, "convs.0.lin.weight") >= 0) kind = MODEL_GCN, w0 = "lin.weight";
    else
        return err_set(err, CGNN_ERR_INPUT, "%s: no cgnn metadata (_metadata['%s']) and no GraphSAGE / GCN / GAT "
                       "layer 0 ('%sconv_layers.0.*' or '%sconvs.0.*'): cannot tell the architecture",
                       path, TORCH_SAVE_META_KEY, ENC, ENC);
    char key[64];
    int64_t heads = 1;
    if (kind == MODEL_GAT) {
        const int a = out_find(o, n, "convs.0.att_src");
        if (o[a].ndim != 3) return err_set(err, CGNN_ERR_INPUT, "%s: 'convs.0.att_src' is not [1, H, C]", path);
        heads = o[a].shape[1];
        if (heads < 1 || heads > (1 << 16))
            return err_set(err, CGNN_ERR_INPUT, "%s: 'convs.0.att_src' has %lld heads", path, (long long)heads);
    }
    snprintf(key, sizeof key, "convs.0.%s", w0);
    const int first = out_find(o, n, key);
    snprintf(key, sizeof key, "convs.%d.%s", L - 1, kind == MODEL_GAT ? "bias" : w0);
    const int last = out_find(o, n, key);
    if (first < 0 || last < 0 || o[first].ndim != 2)
        return err_set(err, CGNN_ERR_INPUT, "%s: no 2-D '%s%s' to read the architecture from", path, ENC,
                       first < 0 || o[first].ndim != 2 ? "convs.0.weight" : key);
    const int64_t in = o[first].shape[1], out = o[last].shape[0];
    int64_t hidden = L >= 2 ? o[first].shape[0] : (h->present ? h->W : out);
    if (hidden % heads != 0) hidden = heads * out;
    snprintf(val[0], 32, "%s", model_kind_name(kind));
    snprintf(val[1], 32, "%d", L);
    snprintf(val[2], 32, "%lld", (long long)in);
    snprintf(val[3], 32, "%lld", (long long)hidden);
    snprintf(val[4], 32, "%lld", (long long)out);
    snprintf(val[5], 32, "%lld", (long long)heads);
    return 0;
}

int gigl_ckpt_read(st_file *out, const char *path, cgnn_err *err) {
    memset(out, 0, sizeof *out);
    ts_file f;
    if (torch_save_read_header(&f, path, err) != 0) return -1;
    head_info h;
    memset(&h, 0, sizeof h);
    out_tensor *o = (out_tensor *)cgnn_calloc((size_t)f.n + 1, sizeof *o);
    int n = 0, rc = 0, L = 0;
    model_kind kind = MODEL_GRAPHSAGE;
    const char *kname = torch_save_meta(&f, "cgnn_model");
    const int have_meta = kname != NULL;
    if (have_meta && model_kind_parse(kname, &kind) != 0)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: _metadata['%s']['cgnn_model']: '%s' is not a cgnn model", path,
                     TORCH_SAVE_META_KEY, kname);
    for (int k = 0; k < f.n && rc == 0; k++) { /* cgnn's keys, in the file's order; the head aside */
        if (!strcmp(f.names[k], HEAD_W) || !strcmp(f.names[k], HEAD_B)) continue;
        out_tensor *t = &o[n];
        char key[FKEY_MAX];
        if (is_table_key(f.names[k])) snprintf(key, sizeof key, "%s", f.names[k]);
        else if (!from_gigl(key, sizeof key, f.names[k]))
            rc = err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' is neither an encoder ('%s*') nor a head nor a node "
                         "embedding table", path, f.names[k], ENC);
        if (rc) break;
        t->name = strdup(key);
        CGNN_CHECK(t->name);
        t->src = k;
        t->ndim = f.ndims[k];
        for (int d = 0; d < 4; d++) t->shape[d] = f.shapes[k][d];
        const int l = layer_of(t->name);
        if (l + 1 > L) L = l + 1;
        n++;
    }
    if (rc == 0) rc = head_read(&f, 0, &h, err);
    if (rc == 0 && h.present && have_meta && model_kind_is_typed(kind))
        rc = err_set(err, CGNN_ERR_INPUT, "%s: '%s' in a checkpoint of a typed model (%s)", path, HEAD_W, kname);
    if (rc == 0 && h.present) {
        if (!have_meta) { /* the kind decides whether the head can be folded */
            if (out_find(o, n, "convs.0.att_src") >= 0) kind = MODEL_GAT;
            else if (out_find(o, n, "convs.0.lin.weight") >= 0) kind = MODEL_GCN;
        }
        for (int i = 0; i < n && rc == 0; i++) {
            if (layer_of(o[i].name) != L - 1) continue;
            int64_t outer, inner;
            if (!out_view(o[i].ndim, o[i].shape, h.W, &outer, &inner))
                rc = err_set(err, CGNN_ERR_INPUT, "%s: '%s' does not have the %lld output channels '%s' takes", path,
                             f.names[o[i].src], (long long)h.W, HEAD_W);
            else {
                o[i].last = 1;
                int64_t s[3];
                reshape_out(o[i].ndim, o[i].shape, h.W, h.C, s);
                for (int d = 0; d < 3; d++) o[i].shape[d] = d < o[i].ndim ? s[d] : 1;
            }
        }
    }
    /* the tensors, one 64-byte aligned blob (each at a multiple of 16 floats) */
    int64_t total = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        o[i].offset = total;
        int64_t k = 1;
        for (int d = 0; d < o[i].ndim; d++) k *= o[i].shape[d];
        if (ck_add_i64(total, (k + 15) & ~(int64_t)15, &total) != 0)
            rc = err_set(err, CGNN_ERR_INPUT, "%s: tensors too large", path);
    }
    float *blob = NULL;
    if (rc == 0 && posix_memalign((void **)&blob, 64, (size_t)(total + 1) * sizeof(float)) != 0) {
        blob = NULL;
        rc = err_set(err, CGNN_ERR_INPUT, "%s: cannot allocate %lld floats for the checkpoint", path, (long long)total);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        if (!o[i].last) {
            rc = torch_save_read_tensor(&f, o[i].src, blob + o[i].offset, err);
            continue;
        }
        float *tmp = (float *)cgnn_malloc((size_t)torch_save_numel(&f, o[i].src) * sizeof(float) + 1);
        rc = torch_save_read_tensor(&f, o[i].src, tmp, err);
        if (rc == 0)
            rc = head_apply(blob + o[i].offset, tmp, f.ndims[o[i].src], f.shapes[o[i].src], &h, kind, path,
                            f.names[o[i].src], err);
        free(tmp);
    }
    /* the metadata: cgnn's, or the architecture read off the keys */
    char derived[6][32];
    static const char *const DERIVED_KEYS[6] = {"cgnn_model", "num_layers", "in_channels", "hidden_channels",
                                                "out_channels", "heads"};
    if (rc == 0 && !have_meta) rc = derive_meta(o, n, L, &h, derived, path, err);
    if (rc == 0) {
        const int nm = have_meta ? f.n_meta : 6;
        out->meta = (char **)cgnn_calloc(2 * (size_t)nm + 1, sizeof(char *));
        for (int q = 0; q < nm; q++) {
            out->meta[2 * q] = strdup(have_meta ? f.meta[2 * q] : DERIVED_KEYS[q]);
            out->meta[2 * q + 1] = strdup(have_meta ? f.meta[2 * q + 1] : derived[q]);
            CGNN_CHECK(out->meta[2 * q] && out->meta[2 * q + 1]);
        }
        out->n_meta = nm;
        const size_t nt = (size_t)(n ? n : 1);
        out->names = (char **)cgnn_calloc(nt, sizeof(char *));
        out->ndims = (int *)cgnn_calloc(nt, sizeof(int));
        out->shapes = (int64_t(*)[4])cgnn_calloc(nt, sizeof *out->shapes);
        out->data = (float **)cgnn_calloc(nt, sizeof(float *));
        out->file_offsets = (int64_t *)cgnn_calloc(nt, sizeof(int64_t));
        for (int i = 0; i < n; i++) {
            out->names[i] = strdup(o[i].name);
            CGNN_CHECK(out->names[i]);
            out->ndims[i] = o[i].ndim;
            for (int d = 0; d < 4; d++) out->shapes[i][d] = d < o[i].ndim ? o[i].shape[d] : 1;
            out->data[i] = blob + o[i].offset;
        }
        out->n = n;
        out->blob = blob;
        blob = NULL;
        snprintf(out->path, sizeof out->path, "%s", path);
        out->file_size = f.file_size;
    }
    free(blob);
    for (int i = 0; i < n; i++) free(o[i].name);
    free(o);
    head_free(&h);
    torch_save_free(&f);
    if (rc) safetensors_free(out);
    return rc;
}
