/* generate.c — synthetic power-law graphs with class homophily (`cgnn generate`); see generate.h.
 *
 * Dimensions: N nodes, C classes, F feature dim, S stubs (sum of the integer target degrees,
 * about N*D), M undirected edges drawn (round(N*D/2)), E = 2 * (edges kept) directed edges.
 *
 * Pipeline. Every random step is cut into chunks of a fixed size (GEN_*_CHUNK, never derived
 * from the thread count); chunk k of step T draws from its own stream rng_key(rng_key(seed, T), k)
 * and OpenMP runs the chunks in any order, so the output bytes depend only on the parameters.
 *   1. nodes: class (uniform) and raw Pareto degree x >= 1, P(x) ~ x^-degree_exponent;
 *      target degree t = min(x * N*D / sum(x), sqrt(N*D)), stochastically rounded, at least 1.
 *      (The cap is the usual Chung-Lu condition: expected multiplicity of a pair stays ~<= 1.)
 *   2. stubs: node i repeated deg[i] times, grouped by class (a sequential counting sort), so a
 *      uniform stub index draws a node proportional to degree, over all nodes or in one class.
 *   3. edges: M undirected draws into one (2, E) buffer, both directions, interleaved:
 *      position 2j is u->v and 2j+1 is v->u. Self-loops are redrawn; duplicates are kept.
 *   4. link prediction: draws are i.i.d., so the last n_val + n_test draws are a random sample;
 *      they become the held-out pairs, and kept edges that duplicate a held-out pair (either
 *      direction) are removed too, so no held-out pair leaks into the message-passing graph.
 *   5. features x = signal * centroid[class] + N(0,1), streamed to node-feat.npy in row chunks.
 *   6. splits: one Fisher-Yates permutation (a single stream) cut into train/valid/test.
 *   7. metadata.yaml last (temporary file + rename), so a reader never sees a partial dataset.
 */
#include "graph/generate.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"
#include "io/outguard.h"
#include "util/rng.h"

/* Fixed chunk sizes: part of the output definition (changing one changes the bytes). */
#define GEN_NODE_CHUNK 65536      /* nodes per stream in step 1 */
#define GEN_EDGE_CHUNK 65536      /* undirected draws per stream in step 3 */
#define GEN_FEAT_CHUNK_ROWS 512   /* feature rows per stream in step 5 */
/* Not part of the output: how much feature data is buffered between writes, and pairs per
 * write when streaming the LP training pairs. */
#define GEN_FEAT_BATCH_BYTES ((size_t)32 << 20)
#define GEN_PAIR_BATCH 65536
/* Within-class redraws of a self-loop before falling back to a draw over all nodes. */
#define GEN_MAX_CLASS_REDRAWS 64

/* Stream tags (first argument of the per-step key). */
enum {
    GEN_STREAM_NODES = 1,
    GEN_STREAM_ROUND = 2,
    GEN_STREAM_EDGES = 3,
    GEN_STREAM_CENTROIDS = 4,
    GEN_STREAM_FEATURES = 5,
    GEN_STREAM_SPLIT = 6,
    GEN_STREAM_TYPED_FEATURES = 7, /* + node type (user, item) */
};

void generate_default_params(generate_params *p) {
    memset(p, 0, sizeof *p);
    p->num_nodes = 10000;
    p->avg_degree = 10.0;
    p->num_classes = 10;
    p->feat_dim = 32;
    p->homophily = 0.8;
    p->degree_exponent = 2.5;
    p->signal = 1.0;
    p->train_frac = 0.6;
    p->val_frac = 0.2;
    p->link_prediction = 0;
    p->lp_val_frac = 0.05;
    p->lp_test_frac = 0.05;
    p->seed = 0;
    p->num_threads = 0;
    p->name = "synthetic";
}

void generate_products_params(generate_params *p) {
    generate_default_params(p);
    /* ogbn-products: 2,449,029 nodes, 61,859,140 directed edges, 100-dim features, 47 classes,
     * splits 8% / 1.6% / 90% (sales-rank split), edge homophily about 0.81. */
    p->num_nodes = 2400000;
    p->avg_degree = 25.8;
    p->num_classes = 47;
    p->feat_dim = 100;
    p->homophily = 0.81;
    p->train_frac = 0.08;
    p->val_frac = 0.016;
    p->name = "products-synth";
}

/* ---- node ids: int32 when N < 2^31, else int64 ------------------------------------------ */

static inline int64_t id_get(const void *a, int wide, int64_t i) {
    return wide ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

static inline void id_set(void *a, int wide, int64_t i, int64_t v) {
    if (wide)
        ((int64_t *)a)[i] = v;
    else
        ((int32_t *)a)[i] = (int32_t)v;
}

static inline uint64_t stream_key(uint64_t seed, uint64_t tag, uint64_t chunk) {
    return rng_key(rng_key(seed, tag), chunk);
}

static inline int64_t div_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Standard normals in pairs (Marsaglia's polar method: no trigonometry, both values used). */
typedef struct gen_normal {
    rng r;
    int have_spare;
    double spare;
} gen_normal;

static inline double gen_normal_next(gen_normal *g) {
    if (g->have_spare) {
        g->have_spare = 0;
        return g->spare;
    }
    double u, v, s;
    do {
        u = 2.0 * rng_uniform(&g->r) - 1.0;
        v = 2.0 * rng_uniform(&g->r) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    g->spare = v * f;
    g->have_spare = 1;
    return u * f;
}

/* ---- parameter checks and paths ------------------------------------------------------- */

static int frac_ok(double f) { return f >= 0.0 && f <= 1.0; } /* false for NaN */

static int check_params(const generate_params *p, cgnn_err *err) {
    if (p->num_nodes < 2)
        return err_set(err, CGNN_ERR_INPUT, "generate: nodes must be at least 2 (got %lld)",
                       (long long)p->num_nodes);
    if (p->num_nodes > ((int64_t)1 << 40))
        return err_set(err, CGNN_ERR_INPUT, "generate: nodes = %lld is too large (at most 2^40)",
                       (long long)p->num_nodes);
    if (p->num_classes < 1 || (int64_t)p->num_classes > p->num_nodes)
        return err_set(err, CGNN_ERR_INPUT, "generate: classes must be in [1, nodes=%lld] (got %d)",
                       (long long)p->num_nodes, p->num_classes);
    if (!(p->avg_degree > 0.0) || !isfinite(p->avg_degree))
        return err_set(err, CGNN_ERR_INPUT, "generate: avg_degree must be a positive number (got %g)",
                       p->avg_degree);
    double nd = (double)p->num_nodes * p->avg_degree;
    if (nd > 4e12)
        return err_set(err, CGNN_ERR_INPUT,
                       "generate: avg_degree %g with %lld nodes asks for %.3g edges (at most 4e12)",
                       p->avg_degree, (long long)p->num_nodes, nd);
    if (llround(nd / 2.0) < 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "generate: avg_degree %g with %lld nodes gives no edge (need nodes*avg_degree >= 1)",
                       p->avg_degree, (long long)p->num_nodes);
    if (p->feat_dim < 1)
        return err_set(err, CGNN_ERR_INPUT, "generate: feat_dim must be at least 1 (got %d)", p->feat_dim);
    if (!frac_ok(p->homophily))
        return err_set(err, CGNN_ERR_INPUT, "generate: homophily must be in [0, 1] (got %g)", p->homophily);
    if (!(p->degree_exponent > 2.0) || !isfinite(p->degree_exponent))
        return err_set(err, CGNN_ERR_INPUT,
                       "generate: degree_exponent must be greater than 2 (got %g)", p->degree_exponent);
    if (!isfinite(p->signal))
        return err_set(err, CGNN_ERR_INPUT, "generate: signal must be a finite number (got %g)", p->signal);
    if (!(p->train_frac > 0.0) || !frac_ok(p->train_frac))
        return err_set(err, CGNN_ERR_INPUT, "generate: train_frac must be in (0, 1] (got %g)", p->train_frac);
    if (!frac_ok(p->val_frac))
        return err_set(err, CGNN_ERR_INPUT, "generate: val_frac must be in [0, 1] (got %g)", p->val_frac);
    if (p->train_frac + p->val_frac > 1.0 + 1e-12)
        return err_set(err, CGNN_ERR_INPUT,
                       "generate: train_frac + val_frac must be at most 1 (got %g + %g)", p->train_frac,
                       p->val_frac);
    if ((int64_t)floor(p->train_frac * (double)p->num_nodes) < 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "generate: train_frac %g of %lld nodes leaves the train split empty", p->train_frac,
                       (long long)p->num_nodes);
    if (p->link_prediction) {
        if (!frac_ok(p->lp_val_frac))
            return err_set(err, CGNN_ERR_INPUT, "generate: lp_val_frac must be in [0, 1] (got %g)",
                           p->lp_val_frac);
        if (!frac_ok(p->lp_test_frac))
            return err_set(err, CGNN_ERR_INPUT, "generate: lp_test_frac must be in [0, 1] (got %g)",
                           p->lp_test_frac);
        int64_t m = llround(nd / 2.0);
        int64_t held = llround(p->lp_val_frac * (double)m) + llround(p->lp_test_frac * (double)m);
        if (m - held < 1)
            return err_set(err, CGNN_ERR_INPUT,
                           "generate: lp_val_frac + lp_test_frac (%g + %g) leaves no training edges",
                           p->lp_val_frac, p->lp_test_frac);
    }
    if (p->num_threads < 0)
        return err_set(err, CGNN_ERR_INPUT, "generate: threads must be >= 0 (got %d)", p->num_threads);
    const char *name = p->name ? p->name : "synthetic";
    size_t len = strlen(name);
    if (len == 0 || len >= 128)
        return err_set(err, CGNN_ERR_INPUT, "generate: name must have 1 to 127 characters");
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-' || ch == '.';
        if (!ok)
            return err_set(err, CGNN_ERR_INPUT,
                           "generate: name '%s': only letters, digits, '_', '-' and '.' are allowed", name);
    }
    return 0;
}

/* mkdir -p: creates dir and its missing parents. Returns 0, or -1 with *err. */
static int make_dirs(const char *dir, cgnn_err *err) {
    char buf[4096];
    size_t len = strlen(dir);
    if (len == 0) return err_set(err, CGNN_ERR_INPUT, "generate: output directory is empty");
    if (len >= sizeof buf - 1) return err_set(err, CGNN_ERR_INPUT, "%s: output path too long", dir);
    memcpy(buf, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create directory: %s", buf, strerror(errno));
        buf[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create directory: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return err_set(err, CGNN_ERR_RUNTIME, "%s: exists and is not a directory", dir);
    return 0;
}

/* path = dir/name. Returns 0, or -1 with *err if it does not fit. */
static int join_path(char *path, size_t cap, const char *dir, const char *name, cgnn_err *err) {
    int n = snprintf(path, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) return err_set(err, CGNN_ERR_INPUT, "%s: output path too long", dir);
    return 0;
}

/* ---- step 1 + 2: classes, target degrees, stubs grouped by class ------------------------- */

/* cls (N) and deg (N) are outputs. Returns S, the number of stubs (sum of deg). */
static int64_t gen_nodes(int32_t *cls, int32_t *deg, const generate_params *p, int nt) {
    const int64_t N = p->num_nodes;
    const int64_t nchunks = div_ceil(N, GEN_NODE_CHUNK);
    const double inv_a1 = -1.0 / (p->degree_exponent - 1.0);
    double *raw = cgnn_malloc((size_t)N * sizeof *raw); /* (N) raw Pareto draws */
    double *chunk_sum = cgnn_calloc((size_t)nchunks, sizeof *chunk_sum);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t k = 0; k < nchunks; k++) {
        rng r;
        rng_init(&r, stream_key(p->seed, GEN_STREAM_NODES, (uint64_t)k));
        int64_t lo = k * GEN_NODE_CHUNK, hi = lo + GEN_NODE_CHUNK < N ? lo + GEN_NODE_CHUNK : N;
        double s = 0.0;
        for (int64_t i = lo; i < hi; i++) {
            cls[i] = (int32_t)rng_below(&r, (uint64_t)p->num_classes);
            double x = pow(1.0 - rng_uniform(&r), inv_a1); /* Pareto, x_min = 1 */
            raw[i] = x;
            s += x;
        }
        chunk_sum[k] = s;
    }
    double total = 0.0; /* summed in chunk order: independent of the thread count */
    for (int64_t k = 0; k < nchunks; k++) total += chunk_sum[k];
    const double nd = (double)N * p->avg_degree;
    const double scale = nd / total;
    double cap = floor(sqrt(nd));
    if (cap < 1.0) cap = 1.0;
    if (cap > (double)INT32_MAX) cap = (double)INT32_MAX;
    int64_t *chunk_stubs = cgnn_calloc((size_t)nchunks, sizeof *chunk_stubs);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t k = 0; k < nchunks; k++) {
        rng r;
        rng_init(&r, stream_key(p->seed, GEN_STREAM_ROUND, (uint64_t)k));
        int64_t lo = k * GEN_NODE_CHUNK, hi = lo + GEN_NODE_CHUNK < N ? lo + GEN_NODE_CHUNK : N;
        int64_t s = 0;
        for (int64_t i = lo; i < hi; i++) {
            double t = raw[i] * scale;
            if (t > cap) t = cap;
            double w = floor(t + rng_uniform(&r)); /* stochastic rounding keeps the mean */
            if (w < 1.0) w = 1.0;
            if (w > cap) w = cap;
            deg[i] = (int32_t)w;
            s += deg[i];
        }
        chunk_stubs[k] = s;
    }
    int64_t S = 0;
    for (int64_t k = 0; k < nchunks; k++) S += chunk_stubs[k];
    free(raw);
    free(chunk_sum);
    free(chunk_stubs);
    return S;
}

/* stubs (S ids) and class_off (C+1) are outputs: class c owns stubs[class_off[c], class_off[c+1]),
 * and node i appears deg[i] times there. Sequential: one streaming pass. */
static void gen_stubs(void *stubs, int wide, int64_t *class_off, const int32_t *cls, const int32_t *deg,
                      int64_t N, int C) {
    memset(class_off, 0, (size_t)(C + 1) * sizeof *class_off);
    for (int64_t i = 0; i < N; i++) class_off[cls[i] + 1] += deg[i];
    for (int c = 0; c < C; c++) class_off[c + 1] += class_off[c];
    int64_t *cursor = cgnn_malloc((size_t)C * sizeof *cursor);
    memcpy(cursor, class_off, (size_t)C * sizeof *cursor);
    for (int64_t i = 0; i < N; i++) {
        int64_t at = cursor[cls[i]];
        for (int32_t k = 0; k < deg[i]; k++) id_set(stubs, wide, at + k, i);
        cursor[cls[i]] = at + deg[i];
    }
    free(cursor);
}

/* The class owning stub s: the last c with class_off[c] <= s (empty classes are skipped). */
static inline int stub_class(const int64_t *class_off, int C, int64_t s) {
    int lo = 0, hi = C;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (class_off[mid] <= s)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- step 3: edges ------------------------------------------------------------------------ */

typedef struct gen_graph {
    const void *stubs; /* (S) ids grouped by class */
    int64_t S;
    const int64_t *class_off; /* (C+1) */
    int C;
    const int32_t *deg; /* (N) */
    double homophily;
    int wide;
} gen_graph;

/* Draws one undirected edge (a, b), a != b. */
static inline void gen_draw_edge(const gen_graph *g, rng *r, int64_t *a_out, int64_t *b_out) {
    int64_t s = (int64_t)rng_below(r, (uint64_t)g->S);
    int64_t a = id_get(g->stubs, g->wide, s), b = a;
    if (rng_uniform(r) < g->homophily) {
        int c = stub_class(g->class_off, g->C, s);
        int64_t lo = g->class_off[c], n = g->class_off[c + 1] - lo;
        for (int tries = 0; b == a && tries < GEN_MAX_CLASS_REDRAWS; tries++) {
            b = id_get(g->stubs, g->wide, lo + (int64_t)rng_below(r, (uint64_t)n));
            if (b == a && n == g->deg[a]) break; /* a is alone in its class */
        }
    }
    /* N >= 2 and every degree >= 1, so some stub is not a: this terminates. */
    while (b == a) b = id_get(g->stubs, g->wide, (int64_t)rng_below(r, (uint64_t)g->S));
    *a_out = a;
    *b_out = b;
}

/* Draws all M edges. Draw j < M_keep goes to the (2, 2*M_keep) buffer, row 0 at src, row 1 at
 * dst, positions 2j (a->b) and 2j+1 (b->a); draw j >= M_keep goes to held[j - M_keep] as an
 * (anchor, positive) pair, held is (M - M_keep, 2). */
static void gen_edges(void *src, void *dst, void *held, const gen_graph *g, int64_t M, int64_t M_keep,
                      uint64_t seed, int nt) {
    const int64_t nchunks = div_ceil(M, GEN_EDGE_CHUNK);
    const int wide = g->wide;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t k = 0; k < nchunks; k++) {
        rng r;
        rng_init(&r, stream_key(seed, GEN_STREAM_EDGES, (uint64_t)k));
        int64_t lo = k * GEN_EDGE_CHUNK, hi = lo + GEN_EDGE_CHUNK < M ? lo + GEN_EDGE_CHUNK : M;
        for (int64_t j = lo; j < hi; j++) {
            int64_t a, b;
            gen_draw_edge(g, &r, &a, &b);
            if (j < M_keep) {
                id_set(src, wide, 2 * j, a);
                id_set(dst, wide, 2 * j, b);
                id_set(src, wide, 2 * j + 1, b);
                id_set(dst, wide, 2 * j + 1, a);
            } else {
                id_set(held, wide, 2 * (j - M_keep), a);
                id_set(held, wide, 2 * (j - M_keep) + 1, b);
            }
        }
    }
}

/* ---- step 4: remove kept edges that duplicate a held-out pair ----------------------------- */

/* Open-addressing set of unordered pairs {u, v}, stored as (min, max); slot[0] == -1 is empty. */
typedef struct pair_set {
    int64_t *slots; /* (cap, 2) */
    uint64_t mask;  /* cap - 1, cap a power of two */
} pair_set;

static inline uint64_t pair_hash(int64_t u, int64_t v) {
    return rng_mix64((uint64_t)u * 0x9e3779b97f4a7c15ULL ^ (uint64_t)v);
}

static int pair_set_init(pair_set *ps, int64_t n) {
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2) cap <<= 1;
    ps->slots = malloc(cap * 2 * sizeof *ps->slots);
    if (!ps->slots) return -1;
    memset(ps->slots, 0xff, cap * 2 * sizeof *ps->slots); /* all -1 */
    ps->mask = cap - 1;
    return 0;
}

static void pair_set_add(pair_set *ps, int64_t u, int64_t v) {
    if (u > v) {
        int64_t t = u;
        u = v;
        v = t;
    }
    for (uint64_t h = pair_hash(u, v) & ps->mask;; h = (h + 1) & ps->mask) {
        int64_t *s = &ps->slots[2 * h];
        if (s[0] == -1) {
            s[0] = u;
            s[1] = v;
            return;
        }
        if (s[0] == u && s[1] == v) return;
    }
}

static int pair_set_has(const pair_set *ps, int64_t u, int64_t v) {
    if (u > v) {
        int64_t t = u;
        u = v;
        v = t;
    }
    for (uint64_t h = pair_hash(u, v) & ps->mask;; h = (h + 1) & ps->mask) {
        const int64_t *s = &ps->slots[2 * h];
        if (s[0] == -1) return 0;
        if (s[0] == u && s[1] == v) return 1;
    }
}

/* Removes from the interleaved kept edges (src/dst hold 2*M_keep ids) every undirected edge
 * whose pair is in held (n_held, 2), preserving order. Returns the number of undirected
 * edges left, or -1 if the set could not be allocated. */
static int64_t gen_remove_held(void *src, void *dst, int wide, int64_t M_keep, const void *held,
                               int64_t n_held, int nt) {
    if (n_held == 0) return M_keep;
    pair_set ps;
    if (pair_set_init(&ps, n_held) != 0) return -1;
    for (int64_t h = 0; h < n_held; h++)
        pair_set_add(&ps, id_get(held, wide, 2 * h), id_get(held, wide, 2 * h + 1));
    const int64_t nchunks = div_ceil(M_keep, GEN_EDGE_CHUNK);
    int64_t removed = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(+ : removed)
    for (int64_t k = 0; k < nchunks; k++) {
        int64_t lo = k * GEN_EDGE_CHUNK, hi = lo + GEN_EDGE_CHUNK < M_keep ? lo + GEN_EDGE_CHUNK : M_keep;
        for (int64_t j = lo; j < hi; j++) {
            if (pair_set_has(&ps, id_get(src, wide, 2 * j), id_get(dst, wide, 2 * j))) {
                id_set(src, wide, 2 * j, -1); /* mark; compacted below */
                removed++;
            }
        }
    }
    free(ps.slots);
    if (removed == 0) return M_keep;
    int64_t t = 0;
    for (int64_t j = 0; j < M_keep; j++) {
        if (id_get(src, wide, 2 * j) == -1) continue;
        if (t != j) {
            id_set(src, wide, 2 * t, id_get(src, wide, 2 * j));
            id_set(dst, wide, 2 * t, id_get(dst, wide, 2 * j));
            id_set(src, wide, 2 * t + 1, id_get(src, wide, 2 * j + 1));
            id_set(dst, wide, 2 * t + 1, id_get(dst, wide, 2 * j + 1));
        }
        t++;
    }
    return t;
}

/* ---- writers ------------------------------------------------------------------------------ */

/* edges.npy: (2, E), row 0 = src[0..E), row 1 = dst[0..E). */
static int write_edges(const char *path, const void *src, const void *dst, int64_t E, npy_dtype dt,
                       cgnn_err *err) {
    int64_t shape[2] = {2, E};
    npy_writer w;
    if (npy_writer_open(&w, path, dt, 2, shape, err) != 0) return -1;
    size_t bytes = (size_t)E * npy_dtype_size(dt);
    if (npy_writer_append(&w, src, bytes, err) != 0 || npy_writer_append(&w, dst, bytes, err) != 0) {
        npy_writer_close(&w, 1, NULL);
        return -1;
    }
    return npy_writer_close(&w, 0, err);
}

/* lp-train-seeds.npy: (M_keep, 2) pairs = the even (u->v) positions of the kept edges. */
static int write_lp_train(const char *path, const void *src, const void *dst, int wide, int64_t M_keep,
                          npy_dtype dt, cgnn_err *err) {
    int64_t shape[2] = {M_keep, 2};
    npy_writer w;
    if (npy_writer_open(&w, path, dt, 2, shape, err) != 0) return -1;
    size_t isz = npy_dtype_size(dt);
    void *buf = cgnn_malloc((size_t)GEN_PAIR_BATCH * 2 * isz);
    int rc = 0;
    for (int64_t lo = 0; lo < M_keep && rc == 0; lo += GEN_PAIR_BATCH) {
        int64_t n = M_keep - lo < GEN_PAIR_BATCH ? M_keep - lo : GEN_PAIR_BATCH;
        for (int64_t t = 0; t < n; t++) {
            id_set(buf, wide, 2 * t, id_get(src, wide, 2 * (lo + t)));
            id_set(buf, wide, 2 * t + 1, id_get(dst, wide, 2 * (lo + t)));
        }
        rc = npy_writer_append(&w, buf, (size_t)n * 2 * isz, err);
    }
    free(buf);
    if (rc != 0) {
        npy_writer_close(&w, 1, NULL);
        return -1;
    }
    return npy_writer_close(&w, 0, err);
}

/* node-feat.npy: (N, F) float32, x[i] = signal * centroid[cls[i]] + N(0, 1), streamed; row chunk
 * k draws its noise from stream (seed, tag, k). */
static int write_features(const char *path, const int32_t *cls, int64_t N, uint64_t tag, const generate_params *p,
                          int nt, cgnn_err *err) {
    const int64_t F = p->feat_dim, C = p->num_classes;
    /* centroid is (C, F): entries N(0, 1), row c from its own stream. */
    float *centroid = malloc((size_t)(C * F) * sizeof *centroid);
    if (!centroid)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory for %lld x %lld class centroids", path,
                       (long long)C, (long long)F);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t c = 0; c < C; c++) {
        gen_normal g = {.have_spare = 0};
        rng_init(&g.r, stream_key(p->seed, GEN_STREAM_CENTROIDS, (uint64_t)c));
        for (int64_t f = 0; f < F; f++) centroid[c * F + f] = (float)gen_normal_next(&g);
    }
    const size_t chunk_bytes = (size_t)GEN_FEAT_CHUNK_ROWS * (size_t)F * sizeof(float);
    int64_t batch_chunks = (int64_t)(GEN_FEAT_BATCH_BYTES / chunk_bytes);
    if (batch_chunks < 1) batch_chunks = 1;
    const int64_t nchunks = div_ceil(N, GEN_FEAT_CHUNK_ROWS);
    if (batch_chunks > nchunks) batch_chunks = nchunks;
    float *buf = malloc((size_t)batch_chunks * chunk_bytes); /* (batch rows, F) */
    if (!buf) {
        free(centroid);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory for the feature buffer", path);
    }
    int64_t shape[2] = {N, F};
    npy_writer w;
    if (npy_writer_open(&w, path, NPY_DTYPE_FLOAT32, 2, shape, err) != 0) {
        free(buf);
        free(centroid);
        return -1;
    }
    const double signal = p->signal;
    int rc = 0;
    for (int64_t k0 = 0; k0 < nchunks && rc == 0; k0 += batch_chunks) {
        int64_t k1 = k0 + batch_chunks < nchunks ? k0 + batch_chunks : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
        for (int64_t k = k0; k < k1; k++) {
            gen_normal g = {.have_spare = 0};
            rng_init(&g.r, stream_key(p->seed, tag, (uint64_t)k));
            int64_t lo = k * GEN_FEAT_CHUNK_ROWS, hi = lo + GEN_FEAT_CHUNK_ROWS < N ? lo + GEN_FEAT_CHUNK_ROWS : N;
            for (int64_t i = lo; i < hi; i++) {
                const float *cen = centroid + (int64_t)cls[i] * F;
                float *x = buf + (i - k0 * GEN_FEAT_CHUNK_ROWS) * F;
                for (int64_t f = 0; f < F; f++) x[f] = (float)(signal * (double)cen[f] + gen_normal_next(&g));
            }
        }
        int64_t rows_end = k1 * GEN_FEAT_CHUNK_ROWS < N ? k1 * GEN_FEAT_CHUNK_ROWS : N;
        int64_t rows = rows_end - k0 * GEN_FEAT_CHUNK_ROWS;
        rc = npy_writer_append(&w, buf, (size_t)(rows * F) * sizeof(float), err);
    }
    free(buf);
    free(centroid);
    if (rc != 0) {
        npy_writer_close(&w, 1, NULL);
        return -1;
    }
    return npy_writer_close(&w, 0, err);
}

/* Node-classification splits: a random permutation cut into train/valid/test; seeds and labels
 * in the id dtype. */
static int write_splits(const char *out_dir, const int32_t *cls, int64_t N, const char *infix, const generate_params *p,
                        npy_dtype dt, cgnn_err *err) {
    const int wide = dt == NPY_DTYPE_INT64;
    const size_t isz = npy_dtype_size(dt);
    void *perm = malloc((size_t)N * isz); /* (N) ids */
    void *labels = malloc((size_t)N * isz);
    if (!perm || !labels) {
        free(perm);
        free(labels);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory for the split permutation", out_dir);
    }
    for (int64_t i = 0; i < N; i++) id_set(perm, wide, i, i);
    rng r;
    rng_init(&r, stream_key(p->seed, GEN_STREAM_SPLIT, 0));
    for (int64_t i = N - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(&r, (uint64_t)(i + 1));
        int64_t t = id_get(perm, wide, i);
        id_set(perm, wide, i, id_get(perm, wide, j));
        id_set(perm, wide, j, t);
    }
    for (int64_t i = 0; i < N; i++) id_set(labels, wide, i, cls[id_get(perm, wide, i)]);
    int64_t n_train = (int64_t)floor(p->train_frac * (double)N);
    int64_t n_val = (int64_t)floor(p->val_frac * (double)N);
    if (n_train > N) n_train = N;
    if (n_val > N - n_train) n_val = N - n_train;
    const int64_t start[3] = {0, n_train, n_train + n_val};
    const int64_t count[3] = {n_train, n_val, N - n_train - n_val};
    static const char *const names[3] = {"train", "valid", "test"};
    int rc = 0;
    for (int s = 0; s < 3 && rc == 0; s++) {
        char path[4096], file[64];
        snprintf(file, sizeof file, "nc-%s%s-seeds.npy", names[s], infix);
        rc = join_path(path, sizeof path, out_dir, file, err);
        if (rc == 0)
            rc = npy_write(path, dt, 1, &count[s], (const char *)perm + (size_t)start[s] * isz, err);
        snprintf(file, sizeof file, "nc-%s%s-labels.npy", names[s], infix);
        if (rc == 0) rc = join_path(path, sizeof path, out_dir, file, err);
        if (rc == 0)
            rc = npy_write(path, dt, 1, &count[s], (const char *)labels + (size_t)start[s] * isz, err);
    }
    free(perm);
    free(labels);
    return rc;
}

static void yaml_split(FILE *f, const char *set, const char *prefix, const char *split, int with_labels) {
    fprintf(f, "    %s:\n      - data:\n", set);
    fprintf(f, "          - name: seeds\n            format: numpy\n            path: %s-%s-seeds.npy\n",
            prefix, split);
    if (with_labels)
        fprintf(f, "          - name: labels\n            format: numpy\n            path: %s-%s-labels.npy\n",
                prefix, split);
}

/* metadata.yaml, written to a temporary name and renamed into place. */
static int write_metadata(const char *out_dir, const generate_params *p, cgnn_err *err) {
    char path[4096], tmp[4200];
    if (join_path(path, sizeof path, out_dir, "metadata.yaml", err) != 0) return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (outguard_permit(path, err) != 0) return -1;
    FILE *f = fopen(tmp, "w");
    if (!f) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", tmp, strerror(errno));
    fprintf(f,
            "# written by cgnn generate: nodes=%lld avg_degree=%.10g classes=%d feat_dim=%d "
            "homophily=%.10g degree_exponent=%.10g signal=%.10g seed=%llu\n",
            (long long)p->num_nodes, p->avg_degree, p->num_classes, p->feat_dim, p->homophily,
            p->degree_exponent, p->signal, (unsigned long long)p->seed);
    fprintf(f, "dataset_name: %s\n", p->name ? p->name : "synthetic");
    fprintf(f, "graph:\n  nodes:\n    - num: %lld\n", (long long)p->num_nodes);
    fprintf(f, "  edges:\n    - format: numpy\n      path: edges.npy\n");
    fprintf(f, "feature_data:\n  - domain: node\n    name: feat\n    format: numpy\n"
               "    in_memory: false\n    path: node-feat.npy\n");
    fprintf(f, "tasks:\n  - name: node_classification\n    num_classes: %d\n", p->num_classes);
    yaml_split(f, "train_set", "nc", "train", 1);
    yaml_split(f, "validation_set", "nc", "valid", 1);
    yaml_split(f, "test_set", "nc", "test", 1);
    if (p->link_prediction) {
        fprintf(f, "  - name: link_prediction\n");
        yaml_split(f, "train_set", "lp", "train", 0);
        yaml_split(f, "validation_set", "lp", "valid", 0);
        yaml_split(f, "test_set", "lp", "test", 0);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        unlink(tmp);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", tmp, strerror(errno));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: rename failed: %s", path, strerror(e));
    }
    return 0;
}

/* ---- the whole dataset -------------------------------------------------------------------- */

static int generate_typed(const char *out_dir, const generate_params *p, generate_stats *st, cgnn_err *err);

int generate_dataset(const char *out_dir, const generate_params *p, cgnn_err *err) {
    return generate_dataset_stats(out_dir, p, NULL, err);
}

int generate_dataset_stats(const char *out_dir, const generate_params *p, generate_stats *st, cgnn_err *err) {
    if (check_params(p, err) != 0) return -1;
    if (make_dirs(out_dir, err) != 0) return -1;
    if (p->typed) return generate_typed(out_dir, p, st, err);
    const int nt = p->num_threads > 0 ? p->num_threads : omp_get_max_threads();
    const int64_t N = p->num_nodes;
    const int C = p->num_classes;
    const int wide = N > INT32_MAX;
    const npy_dtype dt = wide ? NPY_DTYPE_INT64 : NPY_DTYPE_INT32;
    const size_t isz = npy_dtype_size(dt);
    char path[4096];

    int rc = -1;
    int32_t *cls = NULL, *deg = NULL;
    int64_t *class_off = NULL;
    void *stubs = NULL, *edges = NULL, *held = NULL;

    /* 1-2. classes, degrees, stubs */
    cls = malloc((size_t)N * sizeof *cls); /* (N) */
    deg = malloc((size_t)N * sizeof *deg); /* (N) */
    class_off = malloc((size_t)(C + 1) * sizeof *class_off);
    if (!cls || !deg || !class_off) {
        err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld nodes", (long long)N);
        goto done;
    }
    const int64_t S = gen_nodes(cls, deg, p, nt);
    stubs = malloc((size_t)S * isz); /* (S) */
    if (!stubs) {
        err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld degree stubs", (long long)S);
        goto done;
    }
    gen_stubs(stubs, wide, class_off, cls, deg, N, C);

    /* 3. edges */
    const double nd = (double)N * p->avg_degree;
    const int64_t M = llround(nd / 2.0);
    int64_t n_val = 0, n_test = 0;
    if (p->link_prediction) {
        n_val = llround(p->lp_val_frac * (double)M);
        n_test = llround(p->lp_test_frac * (double)M);
    }
    const int64_t n_held = n_val + n_test;
    const int64_t M_keep_drawn = M - n_held;
    const int64_t E_cap = 2 * M_keep_drawn;
    edges = malloc((size_t)(2 * E_cap) * isz); /* (2, E_cap): row 0 src, row 1 dst */
    held = malloc((size_t)(n_held > 0 ? 2 * n_held : 1) * isz); /* (n_held, 2) */
    if (!edges || !held) {
        err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld edges", (long long)(2 * M));
        goto done;
    }
    void *src = edges, *dst = (char *)edges + (size_t)E_cap * isz;
    gen_graph g = {.stubs = stubs, .S = S, .class_off = class_off, .C = C, .deg = deg,
                   .homophily = p->homophily, .wide = wide};
    gen_edges(src, dst, held, &g, M, M_keep_drawn, p->seed, nt);
    free(stubs);
    stubs = NULL;

    /* 4. link prediction hold-out */
    int64_t M_keep = gen_remove_held(src, dst, wide, M_keep_drawn, held, n_held, nt);
    if (M_keep < 0) {
        err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld held-out pairs", (long long)n_held);
        goto done;
    }
    if (join_path(path, sizeof path, out_dir, "edges.npy", err) != 0) goto done;
    if (write_edges(path, src, dst, 2 * M_keep, dt, err) != 0) goto done;
    if (p->link_prediction) {
        int64_t shape_v[2] = {n_val, 2}, shape_t[2] = {n_test, 2};
        if (join_path(path, sizeof path, out_dir, "lp-train-seeds.npy", err) != 0) goto done;
        if (write_lp_train(path, src, dst, wide, M_keep, dt, err) != 0) goto done;
        if (join_path(path, sizeof path, out_dir, "lp-valid-seeds.npy", err) != 0) goto done;
        if (npy_write(path, dt, 2, shape_v, held, err) != 0) goto done;
        if (join_path(path, sizeof path, out_dir, "lp-test-seeds.npy", err) != 0) goto done;
        if (npy_write(path, dt, 2, shape_t, (const char *)held + (size_t)(2 * n_val) * isz, err) != 0)
            goto done;
    }
    free(edges);
    edges = NULL;
    free(held);
    held = NULL;

    /* 5-6. features, splits */
    if (join_path(path, sizeof path, out_dir, "node-feat.npy", err) != 0) goto done;
    if (write_features(path, cls, N, GEN_STREAM_FEATURES, p, nt, err) != 0) goto done;
    if (write_splits(out_dir, cls, N, "", p, dt, err) != 0) goto done;

    /* 7. metadata last; then drop LP files a previous generate may have left behind */
    if (write_metadata(out_dir, p, err) != 0) goto done;
    if (!p->link_prediction) {
        static const char *const stale[3] = {"lp-train-seeds.npy", "lp-valid-seeds.npy", "lp-test-seeds.npy"};
        for (int s = 0; s < 3; s++)
            if (join_path(path, sizeof path, out_dir, stale[s], NULL) == 0 && outguard_permit(path, NULL) == 0) unlink(path);
    }
    if (st) {
        memset(st, 0, sizeof *st);
        st->num_edges = 2 * M_keep;
        st->num_edge_types = 1;
        st->type_nodes[0] = N;
    }
    rc = 0;
done:
    free(cls);
    free(deg);
    free(class_off);
    free(stubs);
    free(edges);
    free(held);
    return rc;
}

/* ---- the typed variant (see generate.h) ---------------------------------------------------- */

enum { GT_USER = 0, GT_ITEM = 1, GT_TAG = 2, GT_TYPES = 3 };
static const char *const GT_TYPE_NAME[GT_TYPES] = {"user", "item", "tag"};

/* Draws one undirected edge of relation (A, B), node types: a of type A proportional to degree
 * within A; b of type B from a's class with probability homophily (proportional to degree
 * within (B, class)), else from all of B; for A == B, b != a as in gen_draw_edge. class_off is
 * the (T*C + 1) offsets of the stubs grouped by (type, class). */
static inline void gen_draw_typed(const gen_graph *g, rng *r, int A, int B, int64_t *a_out, int64_t *b_out) {
    const int C = g->C;
    const int64_t *go = g->class_off;
    const int64_t alo = go[A * C], an = go[(A + 1) * C] - alo;
    const int64_t s = alo + (int64_t)rng_below(r, (uint64_t)an);
    const int64_t a = id_get(g->stubs, g->wide, s);
    int64_t b = A == B ? a : -1;
    if (rng_uniform(r) < g->homophily) {
        const int c = stub_class(go + A * C, C, s);
        const int64_t lo = go[B * C + c], n = go[B * C + c + 1] - lo;
        if (n > 0) {
            if (A != B) {
                b = id_get(g->stubs, g->wide, lo + (int64_t)rng_below(r, (uint64_t)n));
            } else {
                for (int tries = 0; b == a && tries < GEN_MAX_CLASS_REDRAWS; tries++) {
                    b = id_get(g->stubs, g->wide, lo + (int64_t)rng_below(r, (uint64_t)n));
                    if (b == a && n == g->deg[a]) break; /* a is alone in its class */
                }
            }
        }
    }
    if (A != B) {
        if (b < 0) {
            const int64_t blo = go[B * C], bn = go[(B + 1) * C] - blo;
            b = id_get(g->stubs, g->wide, blo + (int64_t)rng_below(r, (uint64_t)bn));
        }
    } else {
        /* type A has >= 2 nodes, each with degree >= 1: terminates */
        while (b == a) b = id_get(g->stubs, g->wide, alo + (int64_t)rng_below(r, (uint64_t)an));
    }
    *a_out = a;
    *b_out = b;
}

/* (2, E) edge file of n undirected edges (ea[j], eb[j]) (homogenised ids; offsets oa, ob of their
 * types): mode 0 writes ea -> eb, mode 1 eb -> ea, mode 2 both directions interleaved (position
 * 2j ea -> eb, 2j+1 eb -> ea; one node type). Ids per type, streamed through a small buffer. */
static int write_typed_edges(const char *path, const void *ea, const void *eb, int64_t n, int64_t oa, int64_t ob,
                             int mode, int wide, npy_dtype dt, cgnn_err *err) {
    const int64_t E = mode == 2 ? 2 * n : n;
    int64_t shape[2] = {2, E};
    npy_writer w;
    if (npy_writer_open(&w, path, dt, 2, shape, err) != 0) return -1;
    const size_t isz = npy_dtype_size(dt);
    void *buf = cgnn_malloc((size_t)GEN_PAIR_BATCH * isz);
    int rc = 0;
    for (int row = 0; row < 2 && rc == 0; row++) {
        /* row 0 is the src row; which array and offset feed position q of this row */
        for (int64_t lo = 0; lo < E && rc == 0; lo += GEN_PAIR_BATCH) {
            const int64_t m = E - lo < GEN_PAIR_BATCH ? E - lo : GEN_PAIR_BATCH;
            for (int64_t t = 0; t < m; t++) {
                const int64_t q = lo + t;
                int64_t v;
                if (mode == 2) {
                    const int64_t j = q >> 1;
                    const int first = ((q & 1) == 0) == (row == 0); /* ea at (2j, src) and (2j+1, dst) */
                    v = first ? id_get(ea, wide, j) - oa : id_get(eb, wide, j) - ob;
                } else {
                    const int use_a = (row == 0) == (mode == 0);
                    v = use_a ? id_get(ea, wide, q) - oa : id_get(eb, wide, q) - ob;
                }
                id_set(buf, wide, t, v);
            }
            rc = npy_writer_append(&w, buf, (size_t)m * isz, err);
        }
    }
    free(buf);
    if (rc != 0) {
        npy_writer_close(&w, 1, NULL);
        return -1;
    }
    return npy_writer_close(&w, 0, err);
}

/* (n, 2) pairs (ea[j] - oa, eb[j] - ob). */
static int write_typed_pairs(const char *path, const void *ea, const void *eb, int64_t n, int64_t oa, int64_t ob,
                             int wide, npy_dtype dt, cgnn_err *err) {
    int64_t shape[2] = {n, 2};
    npy_writer w;
    if (npy_writer_open(&w, path, dt, 2, shape, err) != 0) return -1;
    const size_t isz = npy_dtype_size(dt);
    void *buf = cgnn_malloc((size_t)GEN_PAIR_BATCH * 2 * isz);
    int rc = 0;
    for (int64_t lo = 0; lo < n && rc == 0; lo += GEN_PAIR_BATCH) {
        const int64_t m = n - lo < GEN_PAIR_BATCH ? n - lo : GEN_PAIR_BATCH;
        for (int64_t t = 0; t < m; t++) {
            id_set(buf, wide, 2 * t, id_get(ea, wide, lo + t) - oa);
            id_set(buf, wide, 2 * t + 1, id_get(eb, wide, lo + t) - ob);
        }
        rc = npy_writer_append(&w, buf, (size_t)m * 2 * isz, err);
    }
    free(buf);
    if (rc != 0) {
        npy_writer_close(&w, 1, NULL);
        return -1;
    }
    return npy_writer_close(&w, 0, err);
}

/* The typed edge types, in file order: name, relation index (0 user-item, 1 item-tag, 2
 * user-user), mode of write_typed_edges. */
static const struct {
    const char *name, *file;
    int rel, mode;
} GT_ETYPES[5] = {
    {"user:clicks:item", "edges-user-clicks-item.npy", 0, 0},
    {"item:clicked_by:user", "edges-item-clicked_by-user.npy", 0, 1},
    {"item:has:tag", "edges-item-has-tag.npy", 1, 0},
    {"tag:of:item", "edges-tag-of-item.npy", 1, 1},
    {"user:follows:user", "edges-user-follows-user.npy", 2, 2},
};

static int write_typed_metadata(const char *out_dir, const generate_params *p, const int64_t *tn, cgnn_err *err) {
    char path[4096], tmp[4200];
    if (join_path(path, sizeof path, out_dir, "metadata.yaml", err) != 0) return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (outguard_permit(path, err) != 0) return -1;
    FILE *f = fopen(tmp, "w");
    if (!f) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", tmp, strerror(errno));
    fprintf(f,
            "# written by cgnn generate --typed: nodes=%lld avg_degree=%.10g classes=%d feat_dim=%d "
            "homophily=%.10g degree_exponent=%.10g signal=%.10g seed=%llu\n"
            "# the homogeneous graph of the same flags with its nodes cut into user / item / tag by id range\n",
            (long long)p->num_nodes, p->avg_degree, p->num_classes, p->feat_dim, p->homophily,
            p->degree_exponent, p->signal, (unsigned long long)p->seed);
    fprintf(f, "dataset_name: %s\n", p->name ? p->name : "synthetic");
    fprintf(f, "graph:\n  nodes:\n");
    for (int t = 0; t < GT_TYPES; t++) fprintf(f, "    - type: %s\n      num: %lld\n", GT_TYPE_NAME[t], (long long)tn[t]);
    fprintf(f, "  edges:\n");
    for (int e = 0; e < 5; e++)
        fprintf(f, "    - type: \"%s\"\n      format: numpy\n      path: %s\n", GT_ETYPES[e].name, GT_ETYPES[e].file);
    fprintf(f, "feature_data:\n");
    for (int t = 0; t < 2; t++)
        fprintf(f, "  - domain: node\n    type: %s\n    name: feat\n    format: numpy\n    in_memory: false\n"
                   "    path: feat-%s.npy\n", GT_TYPE_NAME[t], GT_TYPE_NAME[t]);
    fprintf(f, "tasks:\n  - name: node_classification\n    num_classes: %d\n", p->num_classes);
    static const char *const sets[3] = {"train_set", "validation_set", "test_set"};
    static const char *const splits[3] = {"train", "valid", "test"};
    for (int s = 0; s < 3; s++)
        fprintf(f, "    %s:\n      - type: item\n        data:\n"
                   "          - name: seeds\n            format: numpy\n            path: nc-%s-item-seeds.npy\n"
                   "          - name: labels\n            format: numpy\n            path: nc-%s-item-labels.npy\n",
                sets[s], splits[s], splits[s]);
    if (p->link_prediction) {
        fprintf(f, "  - name: link_prediction\n");
        for (int s = 0; s < 3; s++)
            fprintf(f, "    %s:\n      - type: \"user:clicks:item\"\n        data:\n"
                       "          - name: seeds\n            format: numpy\n            path: lp-%s-seeds.npy\n",
                    sets[s], splits[s]);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        unlink(tmp);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", tmp, strerror(errno));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: rename failed: %s", path, strerror(e));
    }
    return 0;
}

static int generate_typed(const char *out_dir, const generate_params *p, generate_stats *st, cgnn_err *err) {
    const int nt = p->num_threads > 0 ? p->num_threads : omp_get_max_threads();
    const int64_t N = p->num_nodes;
    const int C = p->num_classes, G = GT_TYPES * C;
    int64_t tn[GT_TYPES];
    tn[GT_USER] = (int64_t)floor((double)N * GEN_TYPED_USER_FRAC);
    tn[GT_ITEM] = (int64_t)floor((double)N * GEN_TYPED_ITEM_FRAC);
    tn[GT_TAG] = N - tn[GT_USER] - tn[GT_ITEM];
    if (tn[GT_USER] < 2 || tn[GT_ITEM] < 1 || tn[GT_TAG] < 1)
        return err_set(err, CGNN_ERR_INPUT, "generate --typed: nodes must be at least 10 (got %lld)", (long long)N);
    if ((int64_t)floor(p->train_frac * (double)tn[GT_ITEM]) < 1)
        return err_set(err, CGNN_ERR_INPUT, "generate --typed: train_frac %g of %lld item nodes leaves the train split empty",
                       p->train_frac, (long long)tn[GT_ITEM]);
    if ((int64_t)G > INT32_MAX / 2)
        return err_set(err, CGNN_ERR_INPUT, "generate --typed: too many classes (%d)", C);
    const int64_t toff[GT_TYPES + 1] = {0, tn[0], tn[0] + tn[1], N};
    const int wide = N > INT32_MAX;
    const npy_dtype dt = wide ? NPY_DTYPE_INT64 : NPY_DTYPE_INT32;
    const size_t isz = npy_dtype_size(dt);
    char path[4096];

    int rc = -1;
    int32_t *cls = NULL, *deg = NULL, *grp = NULL;
    int64_t *group_off = NULL;
    void *stubs = NULL, *ea = NULL, *eb = NULL;
    cls = malloc((size_t)N * sizeof *cls);
    deg = malloc((size_t)N * sizeof *deg);
    grp = malloc((size_t)N * sizeof *grp);
    group_off = malloc((size_t)(G + 1) * sizeof *group_off);
    if (!cls || !deg || !grp || !group_off) {
        err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld nodes", (long long)N);
        goto done;
    }
    /* 1-2. the homogeneous graph's classes and degrees; stubs grouped by (type, class) */
    const int64_t S = gen_nodes(cls, deg, p, nt);
    for (int t = 0; t < GT_TYPES; t++)
        for (int64_t i = toff[t]; i < toff[t + 1]; i++) grp[i] = t * C + cls[i];
    stubs = malloc((size_t)S * isz);
    if (!stubs) {
        err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld degree stubs", (long long)S);
        goto done;
    }
    gen_stubs(stubs, wide, group_off, grp, deg, N, G);
    free(grp);
    grp = NULL;
    int64_t ts[GT_TYPES]; /* stubs per type */
    for (int t = 0; t < GT_TYPES; t++) ts[t] = group_off[(t + 1) * C] - group_off[t * C];

    /* 3. relation sizes: every node keeps its target degree in expectation (see generate.h) */
    const int64_t M = llround((double)N * p->avg_degree / 2.0);
    int64_t m_it = llround(2.0 * (double)M * (double)ts[GT_TAG] / (double)S);
    if (m_it > M) m_it = M;
    int64_t m_ui = llround(2.0 * (double)M * (double)(ts[GT_ITEM] - ts[GT_TAG]) / (double)S);
    if (m_ui < 1) m_ui = 1;
    if (m_ui > M - m_it) m_ui = M - m_it;
    const int64_t m_uu = M - m_it - m_ui;
    int64_t n_val = 0, n_test = 0;
    if (p->link_prediction) {
        n_val = llround(p->lp_val_frac * (double)m_ui);
        n_test = llround(p->lp_test_frac * (double)m_ui);
        if (m_ui - n_val - n_test < 1) {
            err_set(err, CGNN_ERR_INPUT,
                    "generate --typed: lp_val_frac + lp_test_frac (%g + %g) leaves no user:clicks:item training edges",
                    p->lp_val_frac, p->lp_test_frac);
            goto done;
        }
    }
    const int64_t n_held = n_val + n_test;
    if (m_ui < 1 || (m_uu > 0 && tn[GT_USER] < 2)) {
        err_set(err, CGNN_ERR_INPUT, "generate --typed: the graph is too small for the three relations");
        goto done;
    }
    /* draws: [0, m_uu) user-user, [m_uu, m_uu + m_it) item-tag, the rest user-item (the last
     * n_held of them are the held-out LP pairs) */
    ea = malloc((size_t)(M > 0 ? M : 1) * isz);
    eb = malloc((size_t)(M > 0 ? M : 1) * isz);
    if (!ea || !eb) {
        err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld edges", (long long)(2 * M));
        goto done;
    }
    gen_graph g = {.stubs = stubs, .S = S, .class_off = group_off, .C = C, .deg = deg,
                   .homophily = p->homophily, .wide = wide};
    const int64_t r_it = m_uu, r_ui = m_uu + m_it;
    const int64_t nchunks = div_ceil(M, GEN_EDGE_CHUNK);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int64_t k = 0; k < nchunks; k++) {
        rng r;
        rng_init(&r, stream_key(p->seed, GEN_STREAM_EDGES, (uint64_t)k));
        int64_t lo = k * GEN_EDGE_CHUNK, hi = lo + GEN_EDGE_CHUNK < M ? lo + GEN_EDGE_CHUNK : M;
        for (int64_t j = lo; j < hi; j++) {
            const int A = j < r_it ? GT_USER : j < r_ui ? GT_ITEM : GT_USER;
            const int B = j < r_it ? GT_USER : j < r_ui ? GT_TAG : GT_ITEM;
            int64_t a, b;
            gen_draw_typed(&g, &r, A, B, &a, &b);
            id_set(ea, wide, j, a);
            id_set(eb, wide, j, b);
        }
    }
    free(stubs);
    stubs = NULL;

    /* 4. LP hold-out: kept user-item draws equal to a held-out pair go too (order kept) */
    int64_t m_ui_keep = m_ui - n_held;
    if (n_held > 0) {
        pair_set ps;
        if (pair_set_init(&ps, n_held) != 0) {
            err_set(err, CGNN_ERR_RUNTIME, "generate: out of memory for %lld held-out pairs", (long long)n_held);
            goto done;
        }
        for (int64_t j = M - n_held; j < M; j++) pair_set_add(&ps, id_get(ea, wide, j), id_get(eb, wide, j));
        int64_t t = r_ui;
        for (int64_t j = r_ui; j < r_ui + m_ui_keep; j++) {
            const int64_t a = id_get(ea, wide, j), b = id_get(eb, wide, j);
            if (pair_set_has(&ps, a, b)) continue;
            id_set(ea, wide, t, a);
            id_set(eb, wide, t, b);
            t++;
        }
        free(ps.slots);
        m_ui_keep = t - r_ui;
    }

    /* edge files */
    const int64_t rel_lo[3] = {r_ui, r_it, 0}, rel_n[3] = {m_ui_keep, m_it, m_uu};
    const int rel_a[3] = {GT_USER, GT_ITEM, GT_USER}, rel_b[3] = {GT_ITEM, GT_TAG, GT_USER};
    int64_t etype_edges[5];
    for (int e = 0; e < 5; e++) {
        const int r = GT_ETYPES[e].rel;
        const size_t at = (size_t)rel_lo[r] * isz;
        etype_edges[e] = GT_ETYPES[e].mode == 2 ? 2 * rel_n[r] : rel_n[r];
        if (join_path(path, sizeof path, out_dir, GT_ETYPES[e].file, err) != 0) goto done;
        if (write_typed_edges(path, (const char *)ea + at, (const char *)eb + at, rel_n[r], toff[rel_a[r]],
                              toff[rel_b[r]], GT_ETYPES[e].mode, wide, dt, err) != 0)
            goto done;
    }
    if (p->link_prediction) {
        const size_t at_v = (size_t)(M - n_held) * isz, at_t = (size_t)(M - n_test) * isz;
        if (join_path(path, sizeof path, out_dir, "lp-train-seeds.npy", err) != 0) goto done;
        if (write_typed_pairs(path, (const char *)ea + (size_t)r_ui * isz, (const char *)eb + (size_t)r_ui * isz,
                              m_ui_keep, toff[GT_USER], toff[GT_ITEM], wide, dt, err) != 0)
            goto done;
        if (join_path(path, sizeof path, out_dir, "lp-valid-seeds.npy", err) != 0) goto done;
        if (write_typed_pairs(path, (const char *)ea + at_v, (const char *)eb + at_v, n_val, toff[GT_USER],
                              toff[GT_ITEM], wide, dt, err) != 0)
            goto done;
        if (join_path(path, sizeof path, out_dir, "lp-test-seeds.npy", err) != 0) goto done;
        if (write_typed_pairs(path, (const char *)ea + at_t, (const char *)eb + at_t, n_test, toff[GT_USER],
                              toff[GT_ITEM], wide, dt, err) != 0)
            goto done;
    }
    free(ea);
    free(eb);
    ea = eb = NULL;

    /* 5-6. user and item features (the class centroids of the homogeneous graph), item splits */
    for (int t = 0; t < 2; t++) {
        char file[64];
        snprintf(file, sizeof file, "feat-%s.npy", GT_TYPE_NAME[t]);
        if (join_path(path, sizeof path, out_dir, file, err) != 0) goto done;
        if (write_features(path, cls + toff[t], tn[t], GEN_STREAM_TYPED_FEATURES + (uint64_t)t, p, nt, err) != 0)
            goto done;
    }
    if (write_splits(out_dir, cls + toff[GT_ITEM], tn[GT_ITEM], "-item", p, dt, err) != 0) goto done;

    /* 7. metadata last */
    if (write_typed_metadata(out_dir, p, tn, err) != 0) goto done;
    if (st) {
        memset(st, 0, sizeof *st);
        st->num_edge_types = 5;
        for (int t = 0; t < GT_TYPES; t++) st->type_nodes[t] = tn[t];
        for (int e = 0; e < 5; e++) {
            st->etype_edges[e] = etype_edges[e];
            st->num_edges += etype_edges[e];
        }
    }
    rc = 0;
done:
    free(cls);
    free(deg);
    free(grp);
    free(group_off);
    free(stubs);
    free(ea);
    free(eb);
    return rc;
}
