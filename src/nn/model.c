/* model.c — GraphSAGE / GCN / GAT over message-flow blocks: parameter layout and init,
 * forward, backward, softmax cross-entropy; see model.h. The kernels live in ops.c.
 *
 * Per layer l (block l, N_src = its sources, N_dst = its destinations, I -> O channels):
 *   SAGE: agg = mean_agg(h_l)                   y = agg W_l^T + b_l + h_l[:N_dst] W_r^T
 *   GCN:  agg = gcn_agg(h_l)                    y = agg W^T + b      (aggregate first: the
 *         block has N_dst <= N_src rows to multiply, and the aggregation is linear)
 *   GAT:  z = h_l W^T (N_src, H*C)              y = gat(z) (+ bias inside)
 *   h_{l+1} = dropout(relu(y)) for l < L-1; the last y (optionally L2-normalised) is the output.
 * Kept for backward: h_l (layer 0: mb->features), agg / norms / z, scores, alpha, y, h_{l+1}.
 */
#include "nn/model.h"

#include "io/dataset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nn/hetero.h"
#include "nn/ops.h"
#include "util/rng.h"

/* Parameter tensors of a layer, in PyG state_dict order (a module's own parameters come before
 * its submodules'). The enum values index from the layer's first tensor. */
enum { SAGE_LIN_L_W, SAGE_LIN_L_B, SAGE_LIN_R_W, SAGE_NT };
enum { GCN_BIAS, GCN_LIN_W, GCN_NT };
enum { GAT_ATT_SRC, GAT_ATT_DST, GAT_BIAS, GAT_LIN_W, GAT_NT };

typedef struct model_layer {
    int64_t in, out;       /* I, O: conv input / output row widths */
    int64_t heads, ch;     /* GAT: H, C (out = concat ? H*C : C) */
    int concat;            /* GAT: heads concatenated (hidden layers) or averaged (last) */
    int64_t max_src, max_dst, max_edges;
    int first_tensor;      /* index of the layer's first tensor in model.tensors */
    float *y;              /* (N_dst, O) conv output */
    float *h_out;          /* (N_dst, O) dropout(relu(y)), the next layer's input; NULL if last */
    float *agg;            /* SAGE, GCN: (N_dst, I) aggregated input */
    float *src_norm;       /* GCN: (N_src) */
    float *dst_norm;       /* GCN: (N_dst) */
    float *z;              /* GAT: (N_src, H*C) projected input */
    float *a_src, *a_dst;  /* GAT: (N_src, H), (N_dst, H) node scores */
    float *alpha;          /* GAT: (E + N_dst, H) attention weights */
} model_layer;

struct model_scratch {
    model_layer layers[MINIBATCH_MAX_LAYERS];
    float *out;            /* (S, out_dim) the L2-normalised output, if l2_normalize_output */
    float *g_dy;           /* backward: ∂/∂y of the current layer, (N_dst, O) */
    float *g_dx;           /* backward: ∂/∂h of the current layer's input, (N_src, I) */
    float *g_tmp;          /* backward: ∂ through dropout, (N_src, I) */
    float *work;           /* backward: conv internals (dagg, or dz + GAT work) */
    float *mem;            /* the one allocation all of the above are carved from */
    int64_t mem_floats;
    int have_forward;      /* the caches hold a forward pass */
    int training;          /* ... run with training != 0 */
    uint64_t dropout_key;  /* ... with this key */
};

/* ---- names ------------------------------------------------------------------------------ */

static const char *const KIND_NAMES[] = {"GraphSAGE", "GCN", "GAT", "HeteroSAGE", "RGCN", "HGT", "LightGCN"};
_Static_assert(sizeof KIND_NAMES / sizeof KIND_NAMES[0] == MODEL_KIND_COUNT, "KIND_NAMES");

const char *model_kind_name(model_kind kind) {
    return (unsigned)kind < MODEL_KIND_COUNT ? KIND_NAMES[kind] : "unknown";
}

int model_kind_parse(const char *name, model_kind *out) {
    if (!name) return -1;
    const char *dot = strrchr(name, '.');
    const char *base = dot ? dot + 1 : name; /* "torch_geometric.nn.GraphSAGE" -> "GraphSAGE" */
    if (!strcasecmp(base, "GraphSAGE") || !strcasecmp(base, "SAGE")) *out = MODEL_GRAPHSAGE;
    else if (!strcasecmp(base, "GCN")) *out = MODEL_GCN;
    else if (!strcasecmp(base, "GAT")) *out = MODEL_GAT;
    else if (!strcasecmp(base, "LightGCN")) *out = MODEL_LIGHTGCN; /* torch_geometric.nn.models.LightGCN */
    else if (!strcasecmp(base, "HeteroSAGE") || !strcasecmp(base, "HeteroGraphSAGE")) *out = MODEL_HETERO_SAGE;
    else if (!strcasecmp(base, "RGCN") || !strcasecmp(base, "RGCNConv")) *out = MODEL_RGCN;
    else if (!strcasecmp(base, "HGT")) *out = MODEL_HGT; /* gigl.src.common.models.pyg.heterogeneous.HGT */
    else return -1;
    return 0;
}

/* ---- layout ----------------------------------------------------------------------------- */

static void add_tensor(model *m, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2) {
    CGNN_CHECK(m->num_tensors < MODEL_MAX_TENSORS);
    model_tensor *t = &m->tensors[m->num_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    t->shape[0] = d0;
    t->shape[1] = ndim > 1 ? d1 : 0;
    t->shape[2] = ndim > 2 ? d2 : 0;
    t->numel = d0 * (ndim > 1 ? d1 : 1) * (ndim > 2 ? d2 : 1);
    t->offset = m->num_params;
    m->num_params += t->numel;
}

static void add_layer_tensors(model *m, int l, const model_layer *ly) {
    char name[96];
#define T(suffix, ...)                                                                         \
    do {                                                                                       \
        snprintf(name, sizeof name, "convs.%d.%s", l, suffix);                                 \
        add_tensor(m, name, __VA_ARGS__);                                                      \
    } while (0)
    switch (m->cfg.kind) {
    case MODEL_GRAPHSAGE:
        T("lin_l.weight", 2, ly->out, ly->in, 0);
        T("lin_l.bias", 1, ly->out, 0, 0);
        T("lin_r.weight", 2, ly->out, ly->in, 0);
        break;
    case MODEL_GCN:
        T("bias", 1, ly->out, 0, 0);
        T("lin.weight", 2, ly->out, ly->in, 0);
        break;
    case MODEL_GAT:
        T("att_src", 3, 1, ly->heads, ly->ch);
        T("att_dst", 3, 1, ly->heads, ly->ch);
        T("bias", 1, ly->out, 0, 0);
        T("lin.weight", 2, ly->heads * ly->ch, ly->in, 0);
        break;
    default: CGNN_CHECK(0);
    }
#undef T
}

static inline float *param(const model *m, const model_layer *ly, int role) {
    return m->params + m->tensors[ly->first_tensor + role].offset;
}
static inline float *grad(const model *m, const model_layer *ly, int role) {
    return m->grads + m->tensors[ly->first_tensor + role].offset;
}

/* Carves n floats (rounded up to 64 bytes) at *off; returns NULL while only counting. */
static float *carve(model_scratch *s, int64_t *off, int64_t n) {
    float *p = s->mem ? s->mem + *off : NULL;
    *off += (n + 15) & ~(int64_t)15;
    return p;
}

/* Lays out the scratch (counting when s->mem is NULL); returns the floats needed. */
static int64_t layout_scratch(model_scratch *s, const model *m) {
    const int L = m->cfg.num_layers;
    int64_t off = 0, max_dy = 0, max_dx = 0, max_work = 0;
    if (L == 0) { /* the identity: only the optional L2 normalisation and its backward */
        const int64_t n = s->layers[0].max_dst * m->cfg.in_dim;
        s->out = m->cfg.l2_normalize_output ? carve(s, &off, n) : NULL;
        s->g_dy = m->cfg.l2_normalize_output ? carve(s, &off, n) : NULL;
        s->g_dx = s->g_tmp = s->work = NULL;
        return off;
    }
    for (int l = 0; l < L; l++) {
        model_layer *ly = &s->layers[l];
        const int64_t Ns = ly->max_src, Nd = ly->max_dst, E = ly->max_edges;
        ly->y = carve(s, &off, Nd * ly->out);
        ly->h_out = l < L - 1 ? carve(s, &off, Nd * ly->out) : NULL;
        ly->agg = ly->src_norm = ly->dst_norm = ly->z = ly->a_src = ly->a_dst = ly->alpha = NULL;
        int64_t work = 0;
        switch (m->cfg.kind) {
        case MODEL_GRAPHSAGE:
            ly->agg = carve(s, &off, Nd * ly->in);
            work = Nd * ly->in; /* dagg */
            break;
        case MODEL_GCN:
            ly->agg = carve(s, &off, Nd * ly->in);
            ly->src_norm = carve(s, &off, Ns);
            ly->dst_norm = carve(s, &off, Nd);
            work = Nd * ly->in;
            break;
        case MODEL_GAT: {
            const int64_t H = ly->heads, HC = ly->heads * ly->ch;
            ly->z = carve(s, &off, Ns * HC);
            ly->a_src = carve(s, &off, Ns * H);
            ly->a_dst = carve(s, &off, Nd * H);
            ly->alpha = carve(s, &off, (E + Nd) * H);
            work = ((Ns * HC + 15) & ~(int64_t)15) + ops_gat_backward_work(Ns, Nd, E, H); /* dz + */
            break;
        }
        default: CGNN_CHECK(0);
        }
        if (Nd * ly->out > max_dy) max_dy = Nd * ly->out;
        if (l > 0 && Ns * ly->in > max_dx) max_dx = Ns * ly->in;
        if (work > max_work) max_work = work;
    }
    const model_layer *last = &s->layers[L - 1];
    s->out = m->cfg.l2_normalize_output ? carve(s, &off, last->max_dst * last->out) : NULL;
    s->g_dy = carve(s, &off, max_dy);
    s->g_dx = carve(s, &off, max_dx);
    s->g_tmp = m->cfg.dropout > 0.0f ? carve(s, &off, max_dx) : NULL;
    s->work = carve(s, &off, max_work);
    return off;
}

/* ---- init ------------------------------------------------------------------------------- */

/* Fills t with U(-bound, bound) from the tensor's own stream (seed, tensor index). */
static void init_uniform(model *m, int t, uint64_t seed, double bound) {
    rng r;
    rng_init(&r, rng_key(seed, (uint64_t)t));
    float *p = m->params + m->tensors[t].offset;
    for (int64_t k = 0; k < m->tensors[t].numel; k++) p[k] = (float)(bound * (2.0 * rng_uniform(&r) - 1.0));
}

static void init_params(model *m, uint64_t seed) {
    memset(m->params, 0, (size_t)m->num_params * sizeof(float));
    for (int l = 0; l < m->cfg.num_layers; l++) {
        const model_layer *ly = &m->scratch->layers[l];
        const int t0 = ly->first_tensor;
        const double lin_bound = 1.0 / sqrt((double)ly->in); /* PyG Linear: kaiming_uniform(a=√5) */
        switch (m->cfg.kind) {
        case MODEL_GRAPHSAGE:
            init_uniform(m, t0 + SAGE_LIN_L_W, seed, lin_bound);
            init_uniform(m, t0 + SAGE_LIN_L_B, seed, lin_bound);
            init_uniform(m, t0 + SAGE_LIN_R_W, seed, lin_bound);
            break;
        case MODEL_GCN: /* lin glorot, bias zeros */
            init_uniform(m, t0 + GCN_LIN_W, seed, sqrt(6.0 / (double)(ly->out + ly->in)));
            break;
        case MODEL_GAT: { /* glorot over the last two dims (PyG inits.glorot), bias zeros */
            const double att_bound = sqrt(6.0 / (double)(ly->heads + ly->ch));
            init_uniform(m, t0 + GAT_ATT_SRC, seed, att_bound);
            init_uniform(m, t0 + GAT_ATT_DST, seed, att_bound);
            init_uniform(m, t0 + GAT_LIN_W, seed, sqrt(6.0 / (double)(ly->heads * ly->ch + ly->in)));
            break;
        }
        default: CGNN_CHECK(0);
        }
    }
}

/* Upper bound of any one tensor or activation buffer, in floats (2^44 = 64 TiB: no machine has
 * it, so the bound only rejects sizes that would overflow the arithmetic). */
#define MODEL_MAX_FLOATS 17592186044416.0

static int check_config(const model_config *c, const minibatch_capacity *cap, cgnn_err *err) {
    if ((unsigned)c->kind >= MODEL_KIND_COUNT)
        return err_set(err, CGNN_ERR_INPUT, "model kind: %d is not one of GraphSAGE, GCN, GAT", (int)c->kind);
    if (c->num_layers < 0 || c->num_layers > MINIBATCH_MAX_LAYERS)
        return err_set(err, CGNN_ERR_INPUT, "num_layers: %d is out of range [0, %d]", c->num_layers,
                       MINIBATCH_MAX_LAYERS);
    if (c->kind == MODEL_LIGHTGCN && (c->num_layers != 0 || c->prop_layers < 0 || c->prop_layers > MINIBATCH_MAX_LAYERS))
        return err_set(err, CGNN_ERR_INPUT, "LightGCN: the block model has 0 layers (got %d) and 0..%d propagation "
                       "layers (got %d)", c->num_layers, MINIBATCH_MAX_LAYERS, c->prop_layers);
    if (c->num_layers == 0 && c->out_dim != c->in_dim)
        return err_set(err, CGNN_ERR_INPUT,
                       "num_layers 0: the model is the identity on its input rows, so out_dim (%lld) must equal in_dim "
                       "(%lld)", (long long)c->out_dim, (long long)c->in_dim);
    if (c->num_layers != cap->num_layers)
        return err_set(err, CGNN_ERR_INPUT, "num_layers: %d does not match the sampler's %d layers (fanouts)",
                       c->num_layers, cap->num_layers);
    if (c->in_dim < 1) return err_set(err, CGNN_ERR_INPUT, "in_dim: %lld must be >= 1", (long long)c->in_dim);
    if (c->hidden_dim < 1)
        return err_set(err, CGNN_ERR_INPUT, "hidden_dim: %lld must be >= 1", (long long)c->hidden_dim);
    if (c->out_dim < 1) return err_set(err, CGNN_ERR_INPUT, "out_dim: %lld must be >= 1", (long long)c->out_dim);
    if (c->kind == MODEL_GAT) {
        if (c->num_heads < 1) return err_set(err, CGNN_ERR_INPUT, "num_heads: %d must be >= 1", c->num_heads);
        if (c->hidden_dim % c->num_heads != 0)
            return err_set(err, CGNN_ERR_INPUT, "hidden_dim: %lld is not divisible by num_heads %d",
                           (long long)c->hidden_dim, c->num_heads);
    }
    if (!(c->dropout >= 0.0f && c->dropout < 1.0f))
        return err_set(err, CGNN_ERR_INPUT, "dropout: %g is out of range [0, 1)", (double)c->dropout);
    for (int h = 0; h <= c->num_layers; h++)
        if (cap->max_nodes[h] < 0 || (h < c->num_layers && cap->max_edges[h] < 0))
            return err_set(err, CGNN_ERR_INPUT, "minibatch capacity: hop %d has a negative size", h);
    /* Every size below is a product of these numbers (weights in x out, activations nodes x
     * channels, attention (edges + nodes) x heads); computed in double they cannot wrap, and
     * bounding each keeps the int64 offsets and size_t byte counts of the layout exact. */
    const double dims[3] = {(double)c->in_dim, (double)c->hidden_dim, (double)c->out_dim};
    const double widest = fmax(dims[0], fmax(dims[1], dims[2])) * (c->kind == MODEL_GAT ? 2.0 : 1.0);
    if (dims[0] * dims[1] > MODEL_MAX_FLOATS || dims[1] * dims[1] > MODEL_MAX_FLOATS ||
        dims[1] * dims[2] > MODEL_MAX_FLOATS || dims[0] * dims[2] > MODEL_MAX_FLOATS)
        return err_set(err, CGNN_ERR_INPUT,
                       "in/hidden/out channels %lld/%lld/%lld: a weight matrix would exceed %.3g floats",
                       (long long)c->in_dim, (long long)c->hidden_dim, (long long)c->out_dim, MODEL_MAX_FLOATS);
    for (int h = 0; h <= c->num_layers; h++) {
        const double nodes = (double)cap->max_nodes[h], edges = h < c->num_layers ? (double)cap->max_edges[h] : 0;
        if (nodes * widest > MODEL_MAX_FLOATS || (edges + nodes) * (double)c->num_heads > MODEL_MAX_FLOATS)
            return err_set(err, CGNN_ERR_INPUT,
                           "minibatch capacity: hop %d (%lld nodes, %lld edges) times %lld channels would exceed "
                           "%.3g floats of activations (lower the batch size, fanouts or channels)",
                           h, (long long)cap->max_nodes[h], h < c->num_layers ? (long long)cap->max_edges[h] : 0LL,
                           (long long)widest, MODEL_MAX_FLOATS);
    }
    return 0;
}

int model_init(model *m, const model_config *cfg, const minibatch_capacity *cap, uint64_t seed,
               cgnn_err *err) {
    memset(m, 0, sizeof *m);
    if ((unsigned)cfg->kind < MODEL_KIND_COUNT && model_kind_is_typed(cfg->kind))
        return hetero_init(m, cfg, cap, seed, err);
    if (check_config(cfg, cap, err) != 0) return -1;
    m->cfg = *cfg;
    m->scratch = cgnn_calloc(1, sizeof *m->scratch);
    model_scratch *s = m->scratch;
    const int L = cfg->num_layers;
    for (int l = 0; l < L; l++) {
        model_layer *ly = &s->layers[l];
        const int last = l == L - 1;
        ly->in = l == 0 ? cfg->in_dim : cfg->hidden_dim;
        ly->out = last ? cfg->out_dim : cfg->hidden_dim;
        ly->heads = 1;
        ly->ch = ly->out;
        ly->concat = 0;
        if (cfg->kind == MODEL_GAT) { /* PyG BasicGNN GAT: concat hidden heads, average the last */
            ly->heads = cfg->num_heads;
            ly->concat = !last;
            ly->ch = last ? cfg->out_dim : cfg->hidden_dim / cfg->num_heads;
        }
        /* block l: dst = nodes after L-1-l hops, src = after L-l hops, edges of hop L-1-l */
        ly->max_dst = cap->max_nodes[L - 1 - l];
        ly->max_src = cap->max_nodes[L - l];
        ly->max_edges = cap->max_edges[L - 1 - l];
        ly->first_tensor = m->num_tensors;
        add_layer_tensors(m, l, ly);
    }
    if (L == 0) s->layers[0].max_dst = cap->max_nodes[0]; /* the identity's rows: the seeds */
    s->mem_floats = layout_scratch(s, m); /* sizes only: nothing allocated yet */
    /* more than the machine's memory is a configuration error, named before anything is
     * allocated (an overcommitted malloc would succeed and the kernel kill the job later) */
    const double need = (2.0 * (double)m->num_params + (double)s->mem_floats) * sizeof(float);
    const double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (phys > 0 && need > phys) {
        const int64_t in = cfg->in_dim, hid = cfg->hidden_dim, out = cfg->out_dim;
        const char *widest = hid >= in && hid >= out ? "hidden_dim" : out >= in ? "out_dim" : "in_dim";
        const int64_t nparams = m->num_params, scratch = s->mem_floats;
        free(m->scratch);
        memset(m, 0, sizeof *m);
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: in/hidden/out channels %lld/%lld/%lld need %.1f GiB (%lld parameters and their gradients, "
                       "%lld floats of batch activations), more than this machine's %.1f GiB of memory: lower %s",
                       widest, (long long)in, (long long)hid, (long long)out, need / 1073741824.0, (long long)nparams,
                       (long long)scratch, phys / 1073741824.0, widest);
    }
    m->params = malloc((size_t)(m->num_params + 1) * sizeof(float)); /* + 1: no parameters at all (L = 0) */
    m->grads = calloc((size_t)m->num_params + 1, sizeof(float));
    void *mem = NULL;
    if (posix_memalign(&mem, 64, (size_t)(s->mem_floats + 16) * sizeof(float)) == 0) s->mem = mem;
    if (!m->params || !m->grads || !s->mem) {
        int64_t n = s->mem_floats;
        model_free(m);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating the model (%lld scratch floats)",
                       (long long)n);
    }
    layout_scratch(s, m);
    init_params(m, seed);
    return 0;
}

void model_free(model *m) {
    if (!m) return;
    hetero_free(m);
    free(m->params);
    free(m->grads);
    if (m->scratch) free(m->scratch->mem);
    free(m->scratch);
    memset(m, 0, sizeof *m);
}

void model_zero_grad(model *m) { memset(m->grads, 0, (size_t)m->num_params * sizeof(float)); }

const model_tensor *model_find_tensor(const model *m, const char *name) {
    for (int t = 0; t < m->num_tensors; t++)
        if (!strcmp(m->tensors[t].name, name)) return &m->tensors[t];
    return NULL;
}

/* ---- forward ---------------------------------------------------------------------------- */

/* Batch shape invariants (bugs if broken: the sampler builds batches within the capacity). */
static void check_batch(const model *m, const minibatch *mb) {
    const model_scratch *s = m->scratch;
    CGNN_CHECK(mb->num_layers == m->cfg.num_layers);
    CGNN_CHECK(mb->feat_dim == m->cfg.in_dim);
    for (int l = 0; l < m->cfg.num_layers; l++) {
        const sampler_block *b = &mb->blocks[l];
        const model_layer *ly = &s->layers[l];
        CGNN_CHECK(b->num_dst <= ly->max_dst && b->num_src <= ly->max_src && b->num_edges <= ly->max_edges);
        CGNN_CHECK(b->num_dst <= b->num_src && b->indptr[b->num_dst] == b->num_edges);
        CGNN_CHECK(b->t_indptr[b->num_src] == b->num_edges); /* the transpose was built */
        if (l > 0) CGNN_CHECK(b->num_src == mb->blocks[l - 1].num_dst);
    }
}

const float *model_forward(model *m, const minibatch *mb, int training, uint64_t dropout_key) {
    if (m->types) return hetero_forward(m, mb, training, dropout_key);
    check_batch(m, mb);
    model_scratch *s = m->scratch;
    const int L = m->cfg.num_layers;
    const float p = m->cfg.dropout;
    s->have_forward = 1;
    s->training = training;
    s->dropout_key = dropout_key;
    const float *h = mb->features; /* (N_src, I) input of layer l */
    if (L == 0) { /* embeddings alone (matrix factorisation): the input rows of the seeds */
        CGNN_CHECK(mb->num_input_nodes == mb->num_seeds && mb->num_seeds <= s->layers[0].max_dst);
        if (!m->cfg.l2_normalize_output) return h;
        ops_l2norm_forward(s->out, h, mb->num_seeds, m->cfg.in_dim);
        return s->out;
    }
    for (int l = 0; l < L; l++) {
        const sampler_block *b = &mb->blocks[l];
        model_layer *ly = &s->layers[l];
        const int64_t Ns = b->num_src, Nd = b->num_dst, I = ly->in, O = ly->out;
        switch (m->cfg.kind) {
        case MODEL_GRAPHSAGE:
            ops_mean_agg_forward(ly->agg, h, b, I);
            ops_linear_forward(ly->y, ly->agg, param(m, ly, SAGE_LIN_L_W), param(m, ly, SAGE_LIN_L_B), Nd, I, O, 0);
            ops_linear_forward(ly->y, h, param(m, ly, SAGE_LIN_R_W), NULL, Nd, I, O, 1); /* dst rows */
            break;
        case MODEL_GCN:
            ops_gcn_norm(ly->src_norm, ly->dst_norm, b, l > 0 ? &mb->blocks[l - 1] : NULL);
            ops_gcn_agg_forward(ly->agg, h, ly->src_norm, ly->dst_norm, b, I);
            ops_linear_forward(ly->y, ly->agg, param(m, ly, GCN_LIN_W), param(m, ly, GCN_BIAS), Nd, I, O, 0);
            break;
        case MODEL_GAT:
            ops_linear_forward(ly->z, h, param(m, ly, GAT_LIN_W), NULL, Ns, I, ly->heads * ly->ch, 0);
            ops_gat_forward(ly->y, ly->alpha, ly->a_src, ly->a_dst, ly->z, param(m, ly, GAT_ATT_SRC),
                            param(m, ly, GAT_ATT_DST), param(m, ly, GAT_BIAS), b, ly->heads, ly->ch, ly->concat);
            break;
        default: CGNN_CHECK(0);
        }
        if (l == L - 1) break;
        ops_relu_forward(ly->h_out, ly->y, Nd * O);
        if (training && p > 0.0f) ops_dropout_forward(ly->h_out, ly->h_out, Nd * O, mb->key_nodes ? mb->key_nodes : mb->input_nodes, O, p,
                                dropout_key, l);
        h = ly->h_out;
    }
    const model_layer *last = &s->layers[L - 1];
    if (!m->cfg.l2_normalize_output) return last->y;
    ops_l2norm_forward(s->out, last->y, mb->blocks[L - 1].num_dst, last->out);
    return s->out;
}

/* ---- backward --------------------------------------------------------------------------- */

void model_backward_input(model *m, const minibatch *mb, const float *dout, float *dinput) {
    if (m->types) { /* the output type's gradient; input gradients stay in the model */
        CGNN_CHECK(dinput == NULL);
        const float *douts[MINIBATCH_MAX_NODE_TYPES] = {0};
        douts[m->types->output_type] = dout;
        model_typed_backward(m, mb, douts);
        return;
    }
    model_scratch *s = m->scratch;
    CGNN_CHECK(s->have_forward);
    const int L = m->cfg.num_layers;
    const float p = m->cfg.dropout;
    const int dropped = s->training && p > 0.0f;
    if (L == 0) { /* the identity (after the optional L2 normalisation): dinput += dout */
        if (!dinput) return;
        const int64_t S = mb->num_seeds, D = m->cfg.in_dim;
        const float *dy = dout;
        if (m->cfg.l2_normalize_output) {
            memset(s->g_dy, 0, (size_t)(S * D) * sizeof(float));
            ops_l2norm_backward(s->g_dy, dout, mb->features, S, D);
            dy = s->g_dy;
        }
        for (int64_t k = 0; k < S * D; k++) dinput[k] += dy[k];
        return;
    }
    const model_layer *last = &s->layers[L - 1];
    const float *dy = dout; /* ∂/∂y of layer l, (N_dst, O) */
    if (m->cfg.l2_normalize_output) {
        const int64_t n = mb->blocks[L - 1].num_dst * last->out;
        memset(s->g_dy, 0, (size_t)n * sizeof(float));
        ops_l2norm_backward(s->g_dy, dout, last->y, mb->blocks[L - 1].num_dst, last->out);
        dy = s->g_dy;
    }
    for (int l = L - 1; l >= 0; l--) {
        const sampler_block *b = &mb->blocks[l];
        const model_layer *ly = &s->layers[l];
        const int64_t Ns = b->num_src, Nd = b->num_dst, I = ly->in, O = ly->out;
        const float *h = l == 0 ? mb->features : s->layers[l - 1].h_out;
        /* ∂/∂h: the next buffer for hidden layers, the caller's (+=) for the input, or none */
        float *dh = l > 0 ? s->g_dx : dinput;
        if (l > 0) memset(dh, 0, (size_t)(Ns * I) * sizeof(float));
        float *dagg = dh ? s->work : NULL;
        switch (m->cfg.kind) {
        case MODEL_GRAPHSAGE:
            if (dagg) memset(dagg, 0, (size_t)(Nd * I) * sizeof(float));
            ops_linear_backward(dagg, grad(m, ly, SAGE_LIN_L_W), grad(m, ly, SAGE_LIN_L_B), dy, ly->agg,
                                param(m, ly, SAGE_LIN_L_W), Nd, I, O);
            ops_linear_backward(dh, grad(m, ly, SAGE_LIN_R_W), NULL, dy, h, param(m, ly, SAGE_LIN_R_W), Nd, I, O);
            if (dh) ops_mean_agg_backward(dh, dagg, b, I);
            break;
        case MODEL_GCN:
            if (dagg) memset(dagg, 0, (size_t)(Nd * I) * sizeof(float));
            ops_linear_backward(dagg, grad(m, ly, GCN_LIN_W), grad(m, ly, GCN_BIAS), dy, ly->agg,
                                param(m, ly, GCN_LIN_W), Nd, I, O);
            if (dh) ops_gcn_agg_backward(dh, dagg, ly->src_norm, ly->dst_norm, b, I);
            break;
        case MODEL_GAT: {
            const int64_t HC = ly->heads * ly->ch;
            float *dz = s->work, *gat_work = s->work + ((Ns * HC + 15) & ~(int64_t)15);
            memset(dz, 0, (size_t)(Ns * HC) * sizeof(float));
            ops_gat_backward(dz, grad(m, ly, GAT_ATT_SRC), grad(m, ly, GAT_ATT_DST), grad(m, ly, GAT_BIAS), gat_work,
                             dy, ly->z, ly->alpha, ly->a_src, ly->a_dst, param(m, ly, GAT_ATT_SRC),
                             param(m, ly, GAT_ATT_DST), b, ly->heads, ly->ch, ly->concat);
            ops_linear_backward(dh, grad(m, ly, GAT_LIN_W), NULL, dz, h, param(m, ly, GAT_LIN_W), Ns, I, HC);
            break;
        }
        default: CGNN_CHECK(0);
        }
        if (m->on_grads_ready) m->on_grads_ready(m->on_grads_ready_ctx, l);
        if (l == 0) break;
        /* h_l = dropout(relu(y_{l-1})): ∂/∂y_{l-1} into g_dy (this layer's dy is spent) */
        const float *dr = dh;
        if (dropped) {
            memset(s->g_tmp, 0, (size_t)(Ns * I) * sizeof(float));
            ops_dropout_backward(s->g_tmp, dh, Ns * I, mb->key_nodes ? mb->key_nodes : mb->input_nodes, I, p,
                                 s->dropout_key, l - 1);
            dr = s->g_tmp;
        }
        memset(s->g_dy, 0, (size_t)(Ns * I) * sizeof(float));
        ops_relu_backward(s->g_dy, dr, s->layers[l - 1].y, Ns * I);
        dy = s->g_dy;
    }
}

void model_backward(model *m, const minibatch *mb, const float *dout) {
    model_backward_input(m, mb, dout, NULL);
}

/* ---- loss ------------------------------------------------------------------------------- */

/* Serial: O(items · C), negligible next to the convolutions, and items may share a row (the
 * += below), so this plain version is also the reference. */
double model_softmax_ce(float *dlogits, const float *logits, const int32_t *rows, const int64_t *labels,
                        int64_t n_items, int64_t S, int64_t C, int64_t *correct) {
    memset(dlogits, 0, (size_t)(S * C) * sizeof(float));
    if (correct) *correct = 0;
    if (n_items == 0) return 0.0;
    const double inv_n = 1.0 / (double)n_items;
    double total = 0.0;
    for (int64_t it = 0; it < n_items; it++) {
        const int64_t r = rows[it], y = labels[it];
        CGNN_CHECK(r >= 0 && r < S && y >= 0 && y < C);
        const float *x = logits + r * C;
        float *d = dlogits + r * C;
        int64_t arg = 0;
        for (int64_t c = 1; c < C; c++)
            if (x[c] > x[arg]) arg = c;
        const double mx = x[arg];
        double sum = 0.0;
        for (int64_t c = 0; c < C; c++) sum += exp((double)x[c] - mx);
        total += mx + log(sum) - (double)x[y];
        for (int64_t c = 0; c < C; c++)
            d[c] += (float)((exp((double)x[c] - mx) / sum - (c == y ? 1.0 : 0.0)) * inv_n);
        if (correct && arg == y) (*correct)++;
    }
    return total * inv_n;
}

void model_layer_params(const model *m, int l, int64_t *begin, int64_t *end) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "convs.%d.", l);
    const size_t pl = strlen(prefix);
    int64_t b = INT64_MAX, e = 0;
    for (int i = 0; i < m->num_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        if (strncmp(t->name, prefix, pl) != 0) continue;
        if (t->offset < b) b = t->offset;
        if (t->offset + t->numel > e) e = t->offset + t->numel;
    }
    CGNN_CHECK(e > 0);
    if (m->types && l == 0) b = 0; /* typed models: the input projections (first in memory) go with layer 0 */
    if (m->types && l == m->cfg.num_layers - 1) e = m->num_params; /* ... and HGT's output lin (last) with the last */
    *begin = b;
    *end = e;
}

/* ---- layer-wise inference ----------------------------------------------------------------
 * One conv at a time over a block whose destination nodes have all their in-neighbours (PyG's
 * BasicGNN.inference(), driven by nn/infer.c): no dropout, nothing kept for backward, the
 * training scratch untouched, so any number of callers may share the model read-only. Dense
 * products go through ops_linear_rows_forward, whose rows do not depend on the other rows of
 * the call: a node's output is bitwise the same however the nodes are chunked. */

void model_layer_dims(const model *m, int l, int64_t *in, int64_t *out) {
    CGNN_CHECK(l >= 0 && l < m->cfg.num_layers);
    *in = m->scratch->layers[l].in;
    *out = m->scratch->layers[l].out;
}

/* n floats rounded up to 64 bytes, as carve() lays out the scratch */
static int64_t infer_pad(int64_t n) { return (n + 15) & ~(int64_t)15; }

int64_t model_layer_infer_work(const model *m, int l, int64_t max_src, int64_t max_dst, int64_t max_edges) {
    CGNN_CHECK(l >= 0 && l < m->cfg.num_layers);
    const model_layer *ly = &m->scratch->layers[l];
    const int64_t I = ly->in, O = ly->out;
    switch (m->cfg.kind) {
    case MODEL_GRAPHSAGE: /* packed weight (shared by lin_l and lin_r in turn), agg (N_dst, I) */
    case MODEL_GCN:
        return infer_pad(ops_linear_rows_work(I, O)) + infer_pad(max_dst * I);
    case MODEL_GAT: {     /* packed weight, z (N_src, H*C), a_src, a_dst, alpha (E + N_dst, H) */
        const int64_t H = ly->heads, HC = ly->heads * ly->ch;
        return infer_pad(ops_linear_rows_work(I, HC)) + infer_pad(max_src * HC) + infer_pad(max_src * H) +
               infer_pad(max_dst * H) + infer_pad((max_edges + max_dst) * H);
    }
    default: CGNN_CHECK(0);
    }
    return 0;
}

void model_layer_forward_infer(const model *m, int l, const sampler_block *b, const float *h_src,
                               const float *src_norm, float *out, float *work) {
    const int L = m->cfg.num_layers;
    CGNN_CHECK(l >= 0 && l < L);
    CGNN_CHECK(b->num_dst <= b->num_src && b->indptr[b->num_dst] == b->num_edges);
    const model_layer *ly = &m->scratch->layers[l];
    const int64_t Ns = b->num_src, Nd = b->num_dst, I = ly->in, O = ly->out;
    float *packed = work;
    float *rest = work + infer_pad(ops_linear_rows_work(I, m->cfg.kind == MODEL_GAT ? ly->heads * ly->ch : O));
    switch (m->cfg.kind) {
    case MODEL_GRAPHSAGE: {
        float *agg = rest;
        ops_mean_agg_forward(agg, h_src, b, I);
        ops_linear_rows_forward(out, agg, param(m, ly, SAGE_LIN_L_W), param(m, ly, SAGE_LIN_L_B), Nd, I, O, 0, packed);
        ops_linear_rows_forward(out, h_src, param(m, ly, SAGE_LIN_R_W), NULL, Nd, I, O, 1, packed); /* dst rows */
        break;
    }
    case MODEL_GCN: {
        CGNN_CHECK(src_norm != NULL); /* full-graph degrees: the block alone cannot know them */
        float *agg = rest;
        ops_gcn_agg_forward(agg, h_src, src_norm, src_norm, b, I); /* dst nodes are the first sources */
        ops_linear_rows_forward(out, agg, param(m, ly, GCN_LIN_W), param(m, ly, GCN_BIAS), Nd, I, O, 0, packed);
        break;
    }
    case MODEL_GAT: {
        const int64_t H = ly->heads, HC = ly->heads * ly->ch;
        float *z = rest, *a_src = z + infer_pad(Ns * HC), *a_dst = a_src + infer_pad(Ns * H);
        float *alpha = a_dst + infer_pad(Nd * H);
        ops_linear_rows_forward(z, h_src, param(m, ly, GAT_LIN_W), NULL, Ns, I, HC, 0, packed);
        ops_gat_forward(out, alpha, a_src, a_dst, z, param(m, ly, GAT_ATT_SRC), param(m, ly, GAT_ATT_DST),
                        param(m, ly, GAT_BIAS), b, H, ly->ch, ly->concat);
        break;
    }
    default: CGNN_CHECK(0);
    }
    if (l < L - 1) ops_relu_forward(out, out, Nd * O);
    else if (m->cfg.l2_normalize_output) ops_l2norm_forward(out, out, Nd, O);
}

void model_types_set_edge_types(model_types *ty, const dataset *ds) {
    for (int e = 0; e < ds->num_edge_types; e++) {
        const ds_edge_type *et = &ds->edge_types[e];
        const char *c1 = strchr(et->name, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        CGNN_CHECK(c1 && c2); /* validated by the reader */
        snprintf(ty->edge_type[e][0], MODEL_TYPE_NAME_MAX, "%.*s", (int)(c1 - et->name), et->name);
        snprintf(ty->edge_type[e][1], MODEL_TYPE_NAME_MAX, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
        snprintf(ty->edge_type[e][2], MODEL_TYPE_NAME_MAX, "%s", c2 + 1);
        ty->etype_src[e] = et->src_type;
        ty->etype_dst[e] = et->dst_type;
    }
}
