/* infer.c — layer-wise full-neighbourhood inference; see infer.h.
 *
 * Per layer l (I -> D_l channels), per chunk [a, b) of this rank's slice:
 *   sampler_sample(seeds = a..b-1, one layer, fanout -1)    block: dst = chunk, src = + in-nbrs
 *   h_src (N_src, I) = rows input_nodes of layer l-1         layer 0: features | embeddings
 *   src_norm (N_src) = gcn_norm[input_nodes]                 GCN only, full-graph degrees
 *   model_layer_forward_infer -> rows [a, b) of layer l      ReLU / L2 norm included
 * then the ranks' slices are combined, and layer l-1's activations are released.
 */
#include "nn/infer.h"
#include "nn/ops.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/outguard.h"
#include "sample/gather.h"
#include "sample/minibatch.h"
#include "sample/sampler.h"
#include "util/timer.h"

/* ---- the model from a checkpoint ---------------------------------------------------------- */

#define INFER_EMB_KEY "embedding.weight"

/* Reads the integer metadata value `key` of f into *out, within [lo, hi]. */
static int meta_int(const st_file *f, const char *key, int64_t lo, int64_t hi, int64_t *out, cgnn_err *err) {
    const char *v = safetensors_meta(f, key);
    if (!v)
        return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ has no '%s' (not a checkpoint written by cgnn train)",
                       f->path, key);
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < lo || x > hi)
        return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ '%s': '%s' is not an integer in [%lld, %lld]", f->path,
                       key, v, (long long)lo, (long long)hi);
    *out = x;
    return 0;
}

int infer_model_from_checkpoint(model *m, const st_file *f, int l2_normalize_output, int *emb_index,
                                cgnn_err *err) {
    memset(m, 0, sizeof *m);
    *emb_index = -1;
    model_config mc;
    memset(&mc, 0, sizeof mc);
    const char *kind = safetensors_meta(f, "cgnn_model");
    if (!kind)
        return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ has no 'cgnn_model' (not a checkpoint written by cgnn train)",
                       f->path);
    if (model_kind_parse(kind, &mc.kind) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ 'cgnn_model': '%s' is not one of GraphSAGE, GCN, GAT",
                       f->path, kind);
    int64_t layers, heads = 1;
    if (meta_int(f, "num_layers", 0, MINIBATCH_MAX_LAYERS, &layers, err) != 0 ||
        meta_int(f, "in_channels", 1, INT32_MAX, &mc.in_dim, err) != 0 ||
        meta_int(f, "hidden_channels", 1, INT32_MAX, &mc.hidden_dim, err) != 0 ||
        meta_int(f, "out_channels", 1, INT32_MAX, &mc.out_dim, err) != 0)
        return -1;
    if (mc.kind == MODEL_GAT && meta_int(f, "heads", 1, 1 << 16, &heads, err) != 0) return -1;
    mc.num_layers = (int)layers;
    if (mc.kind == MODEL_LIGHTGCN) { /* num_layers counts its propagation layers; the block model is 0 layers */
        mc.prop_layers = (int)layers;
        mc.num_layers = 0;
        const char *al = safetensors_meta(f, "lightgcn_alpha");
        int n = 0;
        const char *p = al;
        while (p && n <= mc.prop_layers) {
            char *end = NULL;
            const double x = strtod(p, &end);
            if (end == p || !isfinite(x) || (*end != ',' && *end != '\0')) {
                n = -1;
                break;
            }
            mc.alpha[n++] = (float)x;
            p = *end == ',' ? end + 1 : NULL;
        }
        if (p) n = -1; /* more values than layers */
        if (n != mc.prop_layers + 1)
            return err_set(err, CGNN_ERR_INPUT, "%s: __metadata__ 'lightgcn_alpha': '%s' is not %d comma-separated "
                           "numbers (one per layer of the %d-layer LightGCN)", f->path, al ? al : "(missing)",
                           mc.prop_layers + 1, mc.prop_layers);
    }
    mc.num_heads = (int)heads;
    mc.dropout = 0.0f;
    mc.l2_normalize_output = l2_normalize_output;
    /* the training scratch is not used by inference: the smallest capacity */
    minibatch_capacity cap;
    memset(&cap, 0, sizeof cap);
    cap.num_layers = mc.num_layers;
    cap.max_items = 1;
    for (int h = 0; h <= mc.num_layers; h++) cap.max_nodes[h] = 1;
    for (int h = 0; h < mc.num_layers; h++) cap.max_edges[h] = 1;
    cap.feat_dim = mc.in_dim;
    if (model_init(m, &mc, &cap, 0, err) != 0) return err_prefix(err, "%s: __metadata__: ", f->path);
    for (int t = 0; t < m->num_tensors; t++) {
        const model_tensor *mt = &m->tensors[t];
        const int k = safetensors_find(f, mt->name);
        int same = k >= 0 && f->ndims[k] == mt->ndim;
        for (int dd = 0; same && dd < mt->ndim; dd++) same = f->shapes[k][dd] == mt->shape[dd];
        if (!same) {
            err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' is %s for a %s with in/hidden/out channels %lld/%lld/%lld",
                    f->path, mt->name, k < 0 ? "missing" : "of another shape", model_kind_name(mc.kind),
                    (long long)mc.in_dim, (long long)mc.hidden_dim, (long long)mc.out_dim);
            model_free(m);
            return -1;
        }
        memcpy(m->params + mt->offset, f->data[k], (size_t)mt->numel * sizeof(float));
    }
    for (int k = 0; k < f->n; k++) {
        if (model_find_tensor(m, f->names[k])) continue;
        if (strcmp(f->names[k], INFER_EMB_KEY) == 0 && f->ndims[k] == 2) {
            *emb_index = k;
            continue;
        }
        if (mc.kind == MODEL_LIGHTGCN && strcmp(f->names[k], "alpha") == 0) { /* PyG's buffer: the same values */
            const float *al = f->data[k];
            int same = f->ndims[k] == 1 && f->shapes[k][0] == mc.prop_layers + 1;
            for (int l = 0; same && l <= mc.prop_layers; l++) same = al[l] == m->cfg.alpha[l];
            if (same) continue;
            err_set(err, CGNN_ERR_INPUT, "%s: tensor 'alpha' is not the %d values of __metadata__ 'lightgcn_alpha'",
                    f->path, mc.prop_layers + 1);
            model_free(m);
            return -1;
        }
        err_set(err, CGNN_ERR_INPUT, "%s: tensor '%s' is not part of a %d-layer %s%s", f->path, f->names[k],
                mc.num_layers, model_kind_name(mc.kind),
                strcmp(f->names[k], INFER_EMB_KEY) == 0 ? " (embedding.weight must be 2-D)" : "");
        model_free(m);
        return -1;
    }
    return 0;
}

/* ---- GCN normalisation over the full graph ------------------------------------------------ */

void infer_gcn_norm(float *norm, const csc_graph *g) {
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t v = 0; v < g->num_nodes; v++) {
        int64_t deg = 1;
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++) deg += csc_index(g, e) != v;
        norm[v] = 1.0f / sqrtf((float)deg);
    }
}

void infer_gcn_norm_ref(float *norm, const csc_graph *g) {
    for (int64_t v = 0; v < g->num_nodes; v++) {
        float d = 1.0f;
        for (int64_t e = g->indptr[v]; e < g->indptr[v + 1]; e++)
            if (csc_index(g, e) != v) d += 1.0f;
        norm[v] = 1.0f / sqrtf(d);
    }
}

/* ---- activation stores ------------------------------------------------------------------- */

/* Creates (create != 0) or opens the store of layer `layer`: malloc'd when dir is NULL/"", else
 * the file DIR/layer_<layer>.f32 of rows x cols floats, created sparse and mapped shared. */
static int store_open(infer_store *s, const char *dir, int layer, int64_t rows, int64_t cols, int create,
                      cgnn_err *err) {
    memset(s, 0, sizeof *s);
    s->rows = rows;
    s->cols = cols;
    s->bytes = (size_t)rows * (size_t)cols * sizeof(float);
    if (!dir || !*dir) {
        s->data = malloc(s->bytes ? s->bytes : 1);
        if (!s->data)
            return err_set(err, CGNN_ERR_RUNTIME,
                           "out of memory for layer %d's activations (%lld x %lld floats): use --activations_dir",
                           layer, (long long)rows, (long long)cols);
        return 0;
    }
    snprintf(s->path, sizeof s->path, "%s/layer_%d.f32", dir, layer);
    if (create && outguard_permit(s->path, err) != 0) return -1;
    int fd = open(s->path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0644);
    if (fd < 0) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot %s: %s", s->path, create ? "create" : "open", strerror(errno));
    s->owner = create;
    struct stat st;
    if (create && ftruncate(fd, (off_t)s->bytes) != 0) {
        err_set(err, CGNN_ERR_RUNTIME, "%s: cannot size to %zu bytes: %s", s->path, s->bytes, strerror(errno));
    } else if (!create && (fstat(fd, &st) != 0 || (size_t)st.st_size != s->bytes)) {
        err_set(err, CGNN_ERR_RUNTIME, "%s: expected %zu bytes (is --activations_dir on a filesystem every rank sees?)",
                s->path, s->bytes);
    } else {
        void *p = mmap(NULL, s->bytes ? s->bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            err_set(err, CGNN_ERR_RUNTIME, "%s: cannot map %zu bytes: %s", s->path, s->bytes, strerror(errno));
        } else {
            s->data = p;
            s->mapped = 1;
        }
    }
    close(fd);
    if (!s->data) {
        if (create) unlink(s->path);
        s->owner = 0;
        return -1;
    }
    return 0;
}

void infer_store_close(infer_store *s) {
    if (s->mapped) munmap(s->data, s->bytes ? s->bytes : 1);
    else free(s->data);
    if (s->owner) unlink(s->path);
    memset(s, 0, sizeof *s);
}

void infer_result_free(infer_result *res) {
    if (!res) return;
    infer_store_close(&res->store);
    memset(res, 0, sizeof *res);
}

/* ---- the driver --------------------------------------------------------------------------- */

/* infer.h. Rank 0 creates the file, then the others open it (a shared filesystem). */
int infer_store_open_layer(infer_store *s, const dist_ctx *d, const char *dir, int l, int64_t rows, int64_t cols,
                      cgnn_err *err) {
    const int file = dir && *dir;
    int bad = (!file || d->rank == 0) && store_open(s, dir, l, rows, cols, 1, err) != 0;
    if (!file || d->size == 1) return dist_phase_failed(d, bad, err) ? -1 : 0;
    if (dist_phase_failed(d, bad, err)) {
        infer_store_close(s);
        return -1;
    }
    bad = d->rank != 0 && store_open(s, dir, l, rows, cols, 0, err) != 0;
    if (dist_phase_failed(d, bad, err)) {
        infer_store_close(s); /* rank 0 deletes the file */
        return -1;
    }
    return 0;
}

/* dst (n, D) = rows ids of src (?, D). */
static void gather_f32(float *dst, const float *src, const int64_t *ids, int64_t n, int64_t D) {
#pragma omp parallel for schedule(static) if (n * D > 65536)
    for (int64_t j = 0; j < n; j++) memcpy(dst + j * D, src + ids[j] * D, (size_t)D * sizeof(float));
}

/* Layer 0's input rows of ids: [features (normalised) | embeddings], (n, F + E). */
static void gather_input(float *h, float *tmp, const infer_input *in, const int64_t *ids, int64_t n) {
    const int64_t F = in->feat ? in->feat->dim : 0, E = in->emb ? in->emb_dim : 0, W = F + E;
    if (F > 0) {
        float *x = E > 0 ? tmp : h; /* features straight into h when they are the whole row */
        gather_rows(x, in->feat, ids, n, omp_get_max_threads());
        if (in->normalize_rows) gather_normalize_rows(x, n, F);
        if (E == 0) return;
#pragma omp parallel for schedule(static) if (n * F > 65536)
        for (int64_t j = 0; j < n; j++) memcpy(h + j * W, x + j * F, (size_t)F * sizeof(float));
    }
#pragma omp parallel for schedule(static) if (n * E > 65536)
    for (int64_t j = 0; j < n; j++) memcpy(h + j * W + F, in->emb + ids[j] * E, (size_t)E * sizeof(float));
}

typedef struct infer_run_state {
    neighbor_sampler s;
    minibatch mb;
    int64_t *seeds;      /* (C) */
    float *h_src;        /* (max_src, max I) */
    float *feat_tmp;     /* (max_src, F) when features and embeddings are concatenated */
    float *gnorm;        /* (N) GCN */
    float *src_norm;     /* (max_src) GCN */
    float *work;         /* model_layer_infer_work */
    float *slice;        /* (slice rows, max D) in-memory multi-rank: this rank's rows */
    int64_t *counts;     /* (world size) */
} infer_run_state;

static void state_free(infer_run_state *st) {
    sampler_free(&st->s);
    minibatch_free(&st->mb);
    free(st->seeds);
    free(st->h_src);
    free(st->feat_tmp);
    free(st->gnorm);
    free(st->src_norm);
    free(st->work);
    free(st->slice);
    free(st->counts);
}

int infer_check_input(const model *m, const csc_graph *g, const infer_input *in, cgnn_err *err) {
    const int64_t N = g->num_nodes;
    const int64_t F = in->feat ? in->feat->dim : 0, E = in->emb ? in->emb_dim : 0;
    if (N < 1) return err_set(err, CGNN_ERR_INPUT, "the graph has no nodes");
    if (in->feat && in->feat->rows != N)
        return err_set(err, CGNN_ERR_INPUT, "node feature '%s' has %lld rows, the graph %lld nodes", in->feat->name,
                       (long long)in->feat->rows, (long long)N);
    if (in->emb && in->emb_rows != N)
        return err_set(err, CGNN_ERR_INPUT, INFER_EMB_KEY ": %lld rows, the graph has %lld nodes",
                       (long long)in->emb_rows, (long long)N);
    if (F + E != m->cfg.in_dim)
        return err_set(err, CGNN_ERR_INPUT,
                       "in_channels: the model takes %lld input channels, the data gives %lld (%lld feature channels%s%s"
                       " + %lld embedding channels)",
                       (long long)m->cfg.in_dim, (long long)(F + E), (long long)F, in->feat ? " of " : "",
                       in->feat ? in->feat->name : "", (long long)E);
    if (N >= INT32_MAX) /* block-local ids are int32 */
        return err_set(err, CGNN_ERR_INPUT, "the graph has %lld nodes; inference supports up to %d", (long long)N,
                       INT32_MAX - 1);
    return 0;
}

/* The buffer sizes of one-hop blocks over chunks of C destination rows [lo, hi) of an index
 * whose rows are indptr (sources among N nodes), and the one-hop sampler's config and capacity
 * for them (fanout -1: every in-edge). */
typedef struct infer_sizes {
    int64_t max_edges, max_dst, max_src, max_in, max_out, work;
    sampler_config sc;
    minibatch_capacity cap;
} infer_sizes;

static void infer_sizes_compute(infer_sizes *z, const model *m, const int64_t *indptr, int64_t lo, int64_t hi,
                                int64_t C, int64_t N) {
    memset(z, 0, sizeof *z);
    for (int64_t a = lo; a < hi; a += C) {
        const int64_t b = a + C < hi ? a + C : hi;
        if (indptr[b] - indptr[a] > z->max_edges) z->max_edges = indptr[b] - indptr[a];
    }
    z->max_dst = C < hi - lo ? C : (hi - lo > 0 ? hi - lo : 1);
    z->max_src = z->max_dst + z->max_edges < N ? z->max_dst + z->max_edges : N;
    for (int l = 0; l < m->cfg.num_layers; l++) {
        int64_t I, O;
        model_layer_dims(m, l, &I, &O);
        if (I > z->max_in) z->max_in = I;
        if (O > z->max_out) z->max_out = O;
        const int64_t w = model_layer_infer_work(m, l, z->max_src, z->max_dst, z->max_edges);
        if (w > z->work) z->work = w;
    }
    z->sc.num_layers = 1;
    z->sc.fanouts[0] = -1;
    z->cap.num_layers = 1;
    z->cap.max_items = z->max_dst;
    z->cap.max_nodes[0] = z->max_dst;
    z->cap.max_nodes[1] = z->max_src;
    z->cap.max_edges[0] = z->max_edges;
}

/* num_layers 0 (the embeddings alone): the buffers of one pass over this rank's chunks of
 * [lo, hi), whose rows are the input rows themselves. */
static int setup_identity(infer_run_state *st, const infer_input *in, int64_t C, int64_t lo, int64_t hi,
                          int multi_rank_memory, int64_t W, const dist_ctx *d, cgnn_err *err) {
    const int64_t F = in->feat ? in->feat->dim : 0, n = C < hi - lo ? C : (hi - lo > 0 ? hi - lo : 1);
    st->seeds = malloc((size_t)n * sizeof(int64_t));
    st->counts = malloc((size_t)d->size * sizeof(int64_t));
    int ok = st->seeds && st->counts;
    if (ok && F > 0 && in->emb) ok = (st->feat_tmp = malloc((size_t)(n * F) * sizeof(float))) != NULL;
    if (ok && multi_rank_memory) ok = (st->slice = malloc((size_t)((hi - lo) * W + 1) * sizeof(float))) != NULL;
    if (!ok) return err_set(err, CGNN_ERR_RUNTIME, "out of memory for inference buffers: use a smaller --batch");
    return 0;
}

/* Sizes and allocates the buffers for this rank's chunks of [lo, hi). */
static int setup(infer_run_state *st, const model *m, const csc_graph *g, const infer_input *in, int64_t C,
                 int64_t lo, int64_t hi, int multi_rank_memory, const dist_ctx *d, cgnn_err *err) {
    const int64_t N = g->num_nodes;
    infer_sizes z;
    infer_sizes_compute(&z, m, g->indptr, lo, hi, C, N);
    const int64_t max_dst = z.max_dst, max_src = z.max_src, max_in = z.max_in, max_out = z.max_out, work = z.work;
    if (minibatch_alloc(&st->mb, &z.cap, err) != 0 || sampler_init(&st->s, g, &z.sc, &z.cap, err) != 0) return -1;
    const int64_t F = in->feat ? in->feat->dim : 0;
    st->seeds = malloc((size_t)max_dst * sizeof(int64_t));
    st->h_src = malloc((size_t)(max_src * max_in) * sizeof(float));
    st->work = malloc((size_t)(work + 16) * sizeof(float));
    st->counts = malloc((size_t)d->size * sizeof(int64_t));
    int ok = st->seeds && st->h_src && st->work && st->counts;
    if (ok && F > 0 && in->emb) ok = (st->feat_tmp = malloc((size_t)(max_src * F) * sizeof(float))) != NULL;
    if (ok && m->cfg.kind == MODEL_GCN) {
        st->gnorm = malloc((size_t)N * sizeof(float));
        st->src_norm = malloc((size_t)max_src * sizeof(float));
        ok = st->gnorm && st->src_norm;
        if (ok) infer_gcn_norm(st->gnorm, g);
    }
    if (ok && multi_rank_memory) ok = (st->slice = malloc((size_t)((hi - lo) * max_out + 1) * sizeof(float))) != NULL;
    if (!ok)
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory for inference buffers (blocks of up to %lld sources x %lld "
                       "channels): use a smaller --batch", (long long)max_src, (long long)max_in);
    return 0;
}

int infer_run(infer_result *res, const model *m, const csc_graph *g, const infer_input *in,
              const infer_options *opt, cgnn_err *err) {
    static const dist_ctx serial = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    const dist_ctx *d = opt->dist ? opt->dist : &serial;
    memset(res, 0, sizeof *res);
    const double t0 = timer_now();
    const int L = m->cfg.num_layers;
    const int64_t N = g->num_nodes, C = opt->chunk;
    const char *dir = opt->activations_dir && *opt->activations_dir ? opt->activations_dir : NULL;
    const int64_t lo = N * d->rank / d->size, hi = N * (d->rank + 1) / d->size;
    const int gather_slices = d->size > 1 && !dir; /* in memory: all-gather; files: shared writes */
    infer_run_state st;
    memset(&st, 0, sizeof st);
    infer_store prev, cur;
    memset(&prev, 0, sizeof prev);
    memset(&cur, 0, sizeof cur);
    int rc = -1;
    int bad = infer_check_input(m, g, in, err) != 0;
    if (!bad && C < 1) bad = err_set(err, CGNN_ERR_INPUT, "chunk: %lld must be >= 1", (long long)C) != 0;
    if (!bad)
        bad = (L > 0 ? setup(&st, m, g, in, C, lo, hi, gather_slices, d, err)
                     : setup_identity(&st, in, C, lo, hi, gather_slices, m->cfg.in_dim, d, err)) != 0;
    if (dist_phase_failed(d, bad, err)) goto done;

    /* L = 0 (the embeddings alone): one pass that writes every node's input row, L2-normalised
     * when the model normalises its output */
    for (int l = 0; l < (L > 0 ? L : 1); l++) {
        const double tl = timer_now();
        int64_t I = m->cfg.in_dim, O = m->cfg.in_dim;
        if (L > 0) model_layer_dims(m, l, &I, &O);
        if (infer_store_open_layer(&cur, d, dir, l, N, O, err) != 0) goto done;
        const int64_t total = (hi - lo + C - 1) / C;
        int64_t done = 0;
        if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, L > 0 ? L : 1, 0, total);
        for (int64_t a = lo; a < hi; a += C, done++) {
            const int64_t n = a + C < hi ? C : hi - a;
            for (int64_t k = 0; k < n; k++) st.seeds[k] = a + k;
            if (L == 0) {
                float *out = gather_slices ? st.slice + (a - lo) * O : cur.data + a * O;
                gather_input(out, st.feat_tmp, in, st.seeds, n);
                if (m->cfg.l2_normalize_output) ops_l2norm_forward(out, out, n, O);
                res->chunks++;
                if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, 1, done + 1, total);
                continue;
            }
            CGNN_CHECK(sampler_sample(&st.s, &st.mb, st.seeds, n, 0, NULL) == 0);
            const sampler_block *b = &st.mb.blocks[0];
            const int64_t *ids = st.mb.input_nodes;
            CGNN_CHECK(b->num_dst == n && ids[0] == a); /* dst first, in seed order */
            if (l == 0) gather_input(st.h_src, st.feat_tmp, in, ids, b->num_src);
            else gather_f32(st.h_src, prev.data, ids, b->num_src, I);
            if (st.src_norm)
                for (int64_t j = 0; j < b->num_src; j++) st.src_norm[j] = st.gnorm[ids[j]];
            /* rows [a, a + n) go to the layer's store, or to this rank's slice before the all-gather */
            float *out = gather_slices ? st.slice + (a - lo) * O : cur.data + a * O;
            model_layer_forward_infer(m, l, b, st.h_src, st.src_norm, out, st.work);
            res->chunks++;
            res->edges += b->num_edges;
            if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, L, done + 1, total);
        }
        if (gather_slices) {
            dist_allgather_counts(d, (hi - lo) * O, st.counts);
            dist_allgatherv_f32(d, st.slice, cur.data, st.counts);
        } else if (d->size > 1) {
            /* shared file: this rank's rows reach the file before the others read them */
            const size_t page = (size_t)sysconf(_SC_PAGESIZE);
            const size_t beg = (size_t)(lo * O) * sizeof(float) / page * page;
            const size_t end = (size_t)(hi * O) * sizeof(float);
            if (end > beg) msync((char *)cur.data + beg, end - beg, MS_SYNC);
            dist_barrier(d);
        }
        infer_store_close(&prev); /* every rank is past layer l: layer l-1 is no longer read */
        prev = cur;
        memset(&cur, 0, sizeof cur);
        res->layer_seconds[l] = timer_now() - tl;
    }
    res->num_nodes = N;
    res->dim = prev.cols;
    res->embeddings = prev.data;
    res->store = prev;
    memset(&prev, 0, sizeof prev);
    res->seconds = timer_now() - t0;
    rc = 0;
done:
    infer_store_close(&prev);
    infer_store_close(&cur);
    state_free(&st);
    return rc;
}

/* ---- a partitioned graph ------------------------------------------------------------------ */

int infer_run_part(infer_result *res, const model *m, const infer_input *in, const infer_part *ip,
                   const infer_options *opt, cgnn_err *err) {
    static const dist_ctx serial = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    const dist_ctx *d = opt->dist ? opt->dist : &serial;
    memset(res, 0, sizeof *res);
    const double t0 = timer_now();
    const int L = m->cfg.num_layers;
    const int64_t N = ip->part->num_nodes, C = opt->chunk, first = ip->first, nl = ip->n_local;
    const int64_t F = in->feat ? in->feat->dim : 0, E = in->emb ? in->emb_dim : 0, W = F + E;
    const int T = omp_get_max_threads();
    infer_run_state st;
    memset(&st, 0, sizeof st);
    gather_part_scratch gsc;
    memset(&gsc, 0, sizeof gsc);
    float *prev = NULL, *cur = NULL, *own_norm = NULL;
    int64_t *counts = NULL;
    int rc = -1, bad = 0;
    if (in->feat && in->feat->rows != nl)
        bad = err_set(err, CGNN_ERR_INPUT, "node feature '%s' has %lld rows, the part %lld nodes", in->feat->name,
                      (long long)in->feat->rows, (long long)nl) != 0;
    if (!bad && in->emb && in->emb_rows != N)
        bad = err_set(err, CGNN_ERR_INPUT, INFER_EMB_KEY ": %lld rows, the graph has %lld nodes",
                      (long long)in->emb_rows, (long long)N) != 0;
    if (!bad && F + E != m->cfg.in_dim)
        bad = err_set(err, CGNN_ERR_INPUT, "in_channels: the model takes %lld input channels, the data gives %lld",
                      (long long)m->cfg.in_dim, (long long)W) != 0;
    if (!bad && (N >= INT32_MAX || C < 1))
        bad = err_set(err, CGNN_ERR_INPUT, "chunk %lld / %lld nodes out of range", (long long)C, (long long)N) != 0;
    if (!bad && opt->activations_dir && *opt->activations_dir)
        bad = err_set(err, CGNN_ERR_INPUT, "--activations_dir: activations of a partitioned graph stay in memory "
                      "(each rank holds its part's rows only)") != 0;
    if (!bad && L == 0)
        bad = err_set(err, CGNN_ERR_INPUT, "num_layers 0 (the embeddings alone) on a partitioned graph: the "
                      "embeddings are embedding.weight of the checkpoint itself; embed on the whole dataset") != 0;
    /* sizes: the largest chunk of own rows (local rows 0 .. nl; sources among the whole N) */
    infer_sizes z;
    infer_sizes_compute(&z, m, ip->local->indptr, 0, bad ? 0 : nl, C, N);
    const int64_t max_dst = z.max_dst, max_src = z.max_src, max_in = z.max_in;
    if (!bad)
        bad = minibatch_alloc(&st.mb, &z.cap, err) != 0 ||
              sampler_init_part(&st.s, ip->local, ip->part, &z.sc, &z.cap, err) != 0 ||
              gather_part_scratch_init(&gsc, ip->part->num_parts, max_src, err) != 0;
    if (!bad) {
        st.seeds = cgnn_malloc((size_t)max_dst * sizeof(int64_t));
        st.h_src = cgnn_malloc((size_t)(max_src * max_in + 1) * sizeof(float));
        st.work = cgnn_malloc((size_t)(z.work + 16) * sizeof(float));
        if (F > 0 && E > 0) st.feat_tmp = cgnn_malloc((size_t)(max_src * F) * sizeof(float));
        if (m->cfg.kind == MODEL_GCN) st.src_norm = cgnn_malloc((size_t)max_src * sizeof(float));
    }
    if (dist_phase_failed(d, bad, err)) goto done;
    if (m->cfg.kind == MODEL_GCN) { /* the whole graph's norms, new-id order: own rows, all-gathered */
        own_norm = cgnn_malloc((size_t)(nl + 1) * sizeof(float));
#pragma omp parallel for schedule(dynamic, 4096)
        for (int64_t i = 0; i < nl; i++) { /* as infer_gcn_norm: 1 + in-edges other than a self-edge */
            int64_t deg = 1;
            for (int64_t e = ip->local->indptr[i]; e < ip->local->indptr[i + 1]; e++)
                deg += csc_index(ip->local, e) != first + i;
            own_norm[i] = 1.0f / sqrtf((float)deg);
        }
        counts = cgnn_malloc((size_t)d->size * sizeof(int64_t));
        st.gnorm = cgnn_malloc((size_t)N * sizeof(float));
        const int64_t total = dist_allgather_counts(d, ip->sends_norms ? nl : 0, counts);
        CGNN_CHECK(total == N);
        dist_allgatherv_f32(d, own_norm, st.gnorm, counts);
    }
    for (int l = 0; l < L; l++) {
        const double tl = timer_now();
        int64_t I, O;
        model_layer_dims(m, l, &I, &O);
        cur = cgnn_malloc((size_t)(nl * O + 1) * sizeof(float));
        const int64_t total = (nl + C - 1) / C;
        int64_t done = 0;
        if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, L, 0, total);
        ds_feature prev_view; /* own rows of layer l-1 */
        memset(&prev_view, 0, sizeof prev_view);
        prev_view.array.dtype = NPY_DTYPE_FLOAT32;
        prev_view.array.ndim = 2;
        prev_view.array.shape[0] = prev_view.rows = nl;
        prev_view.array.shape[1] = prev_view.dim = I;
        prev_view.array.count = nl * I;
        prev_view.array.data = prev;
        for (int64_t a = 0; a < nl; a += C, done++) {
            const int64_t n = a + C < nl ? C : nl - a;
            for (int64_t k = 0; k < n; k++) st.seeds[k] = first + a + k;
            cgnn_err e = {0};
            if (sampler_sample(&st.s, &st.mb, st.seeds, n, 0, &e) != 0) dist_fail_job(d, &e);
            const sampler_block *b = &st.mb.blocks[0];
            const int64_t *ids = st.mb.input_nodes, ns = b->num_src;
            CGNN_CHECK(b->num_dst == n && ids[0] == first + a); /* dst first, in seed order */
            if (l == 0) {
                if (F > 0) {
                    float *x = E > 0 ? st.feat_tmp : st.h_src;
                    if (gather_rows_part(x, F, in->feat, ip->feat_part, &gsc, ids, ns, T, &e) != 0)
                        dist_fail_job(d, &e);
                    if (in->normalize_rows) gather_normalize_rows(x, ns, F);
                    if (E > 0)
#pragma omp parallel for schedule(static) if (ns * F > 65536)
                        for (int64_t j = 0; j < ns; j++) memcpy(st.h_src + j * W, x + j * F, (size_t)F * sizeof(float));
                }
                if (E > 0)
#pragma omp parallel for schedule(static) if (ns * E > 65536)
                    for (int64_t j = 0; j < ns; j++)
                        memcpy(st.h_src + j * W + F, in->emb + ip->orig_of_new[ids[j]] * E, (size_t)E * sizeof(float));
            } else if (gather_rows_part(st.h_src, I, &prev_view, ip->act_part, &gsc, ids, ns, T, &e) != 0) {
                dist_fail_job(d, &e);
            }
            if (st.src_norm)
                for (int64_t j = 0; j < ns; j++) st.src_norm[j] = st.gnorm[ids[j]];
            model_layer_forward_infer(m, l, b, st.h_src, st.src_norm, cur + a * O, st.work);
            res->chunks++;
            res->edges += b->num_edges;
            if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, L, done + 1, total);
        }
        dist_barrier(d); /* every rank is done with layer l: nobody reads layer l-1 any more */
        if (l + 1 < L) {
            ip->publish(ip->ctx, cur, nl, O);
            dist_barrier(d); /* every rank serves layer l before anyone asks for it */
        } else {
            ip->publish(ip->ctx, NULL, 0, 0);
        }
        free(prev);
        prev = cur;
        cur = NULL;
        res->layer_seconds[l] = timer_now() - tl;
    }
    int64_t Ol, Il;
    model_layer_dims(m, L - 1, &Il, &Ol);
    res->num_nodes = nl;
    res->dim = Ol;
    res->store.data = prev;
    res->store.rows = nl;
    res->store.cols = Ol;
    res->embeddings = prev;
    prev = NULL;
    res->seconds = timer_now() - t0;
    rc = 0;
done:
    free(prev);
    free(cur);
    free(own_norm);
    free(counts);
    gather_part_scratch_free(&gsc);
    state_free(&st);
    return rc;
}

/* ---- server-client mode ------------------------------------------------------------------- */

/* Grows *buf to hold n floats (never shrinks). */
static void grow_f32(float **buf, int64_t *cap, int64_t n) {
    if (n <= *cap) return;
    free(*buf);
    *buf = cgnn_malloc((size_t)(n + 16) * sizeof(float));
    *cap = n;
}

/* The block of own chunk [a, a + n), checked (dst first, in order); ends the job when it fails. */
static const minibatch *remote_block(const infer_remote *ir, int64_t *seeds, int64_t a, int64_t n, int with_rows,
                                     const dist_ctx *d) {
    for (int64_t k = 0; k < n; k++) seeds[k] = a + k;
    const minibatch *mb = NULL;
    cgnn_err e = {0};
    if (ir->block(ir->ctx, seeds, n, with_rows, &mb, &e) != 0) {
        fprintf(stderr, "cgnn: error: rank %d: %s; ending the job\n", d->rank, e.msg);
        fflush(stderr);
        dist_abort(d, e.code ? e.code : CGNN_ERR_RUNTIME);
    }
    CGNN_CHECK(mb->num_layers == 1 && mb->blocks[0].num_dst == n && mb->input_nodes[0] == a);
    return mb;
}

int infer_run_remote(infer_result *res, const model *m, const infer_input *in, const infer_remote *ir,
                     const infer_options *opt, cgnn_err *err) {
    static const dist_ctx serial = {.rank = 0, .size = 1, .local_rank = 0, .local_size = 1, .thread_multiple = 1};
    const dist_ctx *d = opt->dist ? opt->dist : &serial;
    memset(res, 0, sizeof *res);
    const double t0 = timer_now();
    const int L = m->cfg.num_layers;
    const int64_t N = ir->num_nodes, C = opt->chunk;
    const int64_t F = ir->feat_dim, E = in->emb ? in->emb_dim : 0, W = F + E;
    const int64_t lo = N * d->rank / d->size, hi = N * (d->rank + 1) / d->size;
    int bad = 0;
    if (N < 1 || N >= INT32_MAX)
        bad = err_set(err, CGNN_ERR_INPUT, "the graph has %lld nodes (1 .. %d)", (long long)N, INT32_MAX - 1) != 0;
    if (!bad && in->emb && in->emb_rows != N)
        bad = err_set(err, CGNN_ERR_INPUT, INFER_EMB_KEY ": %lld rows, the graph has %lld nodes",
                      (long long)in->emb_rows, (long long)N) != 0;
    if (!bad && W != m->cfg.in_dim)
        bad = err_set(err, CGNN_ERR_INPUT, "in_channels: the model takes %lld input channels, the data gives %lld "
                      "(%lld feature + %lld embedding channels)", (long long)m->cfg.in_dim, (long long)W,
                      (long long)F, (long long)E) != 0;
    if (!bad && C < 1) bad = err_set(err, CGNN_ERR_INPUT, "chunk: %lld must be >= 1", (long long)C) != 0;
    if (!bad && opt->activations_dir && *opt->activations_dir)
        bad = err_set(err, CGNN_ERR_INPUT, "--activations_dir: in server-client mode the activations stay in the "
                      "compute ranks' memory") != 0;
    if (dist_phase_failed(d, bad, err)) return -1;
    const int64_t own = hi - lo, total = (own + C - 1) / C;
    int64_t *seeds = cgnn_malloc((size_t)(C < own ? C : (own > 0 ? own : 1)) * sizeof(int64_t));
    int64_t *counts = cgnn_malloc((size_t)d->size * sizeof(int64_t));
    float *prev = NULL, *cur = NULL, *slice = NULL, *h_src = NULL, *work = NULL, *gnorm = NULL, *src_norm = NULL;
    int64_t h_cap = 0, w_cap = 0, n_cap = 0;
    if (m->cfg.kind == MODEL_GCN) { /* the whole graph's norms: own rows from the blocks, all-gathered */
        float *own_norm = cgnn_malloc((size_t)(own + 1) * sizeof(float));
        for (int64_t a = lo; a < hi; a += C) {
            const int64_t n = a + C < hi ? C : hi - a;
            const sampler_block *b = &remote_block(ir, seeds, a, n, 0, d)->blocks[0];
            for (int64_t j = 0; j < n; j++) { /* as infer_gcn_norm: 1 + in-edges other than a self-edge */
                int64_t deg = 1;
                for (int64_t e = b->indptr[j]; e < b->indptr[j + 1]; e++) deg += b->indices[e] != j;
                own_norm[a - lo + j] = 1.0f / sqrtf((float)deg);
            }
        }
        gnorm = cgnn_malloc((size_t)N * sizeof(float));
        CGNN_CHECK(dist_allgather_counts(d, own, counts) == N);
        dist_allgatherv_f32(d, own_norm, gnorm, counts);
        free(own_norm);
    }
    for (int l = 0; l < (L > 0 ? L : 1); l++) {
        const double tl = timer_now();
        int64_t I = W, O = W;
        if (L > 0) model_layer_dims(m, l, &I, &O);
        slice = cgnn_malloc((size_t)(own * O + 1) * sizeof(float));
        int64_t done = 0;
        if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, L > 0 ? L : 1, 0, total);
        for (int64_t a = lo; a < hi; a += C, done++) {
            const int64_t n = a + C < hi ? C : hi - a;
            float *out = slice + (a - lo) * O;
            if (L == 0) { /* the embeddings alone (F = 0: a model without layers takes no features) */
                for (int64_t j = 0; j < n; j++)
                    memcpy(out + j * E, in->emb + ir->orig_of_new[a + j] * E, (size_t)E * sizeof(float));
                if (m->cfg.l2_normalize_output) ops_l2norm_forward(out, out, n, O);
                res->chunks++;
                if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, 1, done + 1, total);
                continue;
            }
            const minibatch *mb = remote_block(ir, seeds, a, n, l == 0 && F > 0, d);
            const sampler_block *b = &mb->blocks[0];
            const int64_t *ids = mb->input_nodes, ns = b->num_src;
            grow_f32(&h_src, &h_cap, ns * I);
            grow_f32(&work, &w_cap, model_layer_infer_work(m, l, ns, n, b->num_edges));
            if (l == 0) { /* [features (converted, normalised by the batch decoder) | embeddings] */
                for (int64_t j = 0; j < ns; j++) {
                    if (F > 0) memcpy(h_src + j * W, mb->features + j * mb->feat_dim, (size_t)F * sizeof(float));
                    if (E > 0) memcpy(h_src + j * W + F, in->emb + ir->orig_of_new[ids[j]] * E, (size_t)E * sizeof(float));
                }
            } else {
                gather_f32(h_src, prev, ids, ns, I);
            }
            if (gnorm) {
                grow_f32(&src_norm, &n_cap, ns);
                for (int64_t j = 0; j < ns; j++) src_norm[j] = gnorm[ids[j]];
            }
            model_layer_forward_infer(m, l, b, h_src, src_norm, out, work);
            res->chunks++;
            res->edges += b->num_edges;
            if (opt->on_chunk) opt->on_chunk(opt->on_chunk_ctx, l, L, done + 1, total);
        }
        cur = cgnn_malloc((size_t)(N * O) * sizeof(float));
        dist_allgather_counts(d, own * O, counts);
        dist_allgatherv_f32(d, slice, cur, counts);
        free(slice);
        slice = NULL;
        free(prev);
        prev = cur;
        cur = NULL;
        res->layer_seconds[l] = timer_now() - tl;
        res->dim = O;
    }
    res->num_nodes = N;
    res->store.data = prev;
    res->store.rows = N;
    res->store.cols = res->dim;
    res->store.bytes = (size_t)(N * res->dim) * sizeof(float);
    res->embeddings = prev;
    res->seconds = timer_now() - t0;
    free(seeds);
    free(counts);
    free(h_src);
    free(work);
    free(gnorm);
    free(src_norm);
    return 0;
}
