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

/* node-feat.npy: (N, F) float32, x[i] = signal * centroid[cls[i]] + N(0, 1), streamed. */
static int write_features(const char *path, const int32_t *cls, const generate_params *p, int nt,
                          cgnn_err *err) {
    const int64_t N = p->num_nodes, F = p->feat_dim, C = p->num_classes;
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
            rng_init(&g.r, stream_key(p->seed, GEN_STREAM_FEATURES, (uint64_t)k));
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
static int write_splits(const char *out_dir, const int32_t *cls, const generate_params *p, npy_dtype dt,
                        cgnn_err *err) {
    const int64_t N = p->num_nodes;
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
        snprintf(file, sizeof file, "nc-%s-seeds.npy", names[s]);
        rc = join_path(path, sizeof path, out_dir, file, err);
        if (rc == 0)
            rc = npy_write(path, dt, 1, &count[s], (const char *)perm + (size_t)start[s] * isz, err);
        snprintf(file, sizeof file, "nc-%s-labels.npy", names[s]);
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

int generate_dataset(const char *out_dir, const generate_params *p, cgnn_err *err) {
    if (check_params(p, err) != 0) return -1;
    if (make_dirs(out_dir, err) != 0) return -1;
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
    if (write_features(path, cls, p, nt, err) != 0) goto done;
    if (write_splits(out_dir, cls, p, dt, err) != 0) goto done;

    /* 7. metadata last; then drop LP files a previous generate may have left behind */
    if (write_metadata(out_dir, p, err) != 0) goto done;
    if (!p->link_prediction) {
        static const char *const stale[3] = {"lp-train-seeds.npy", "lp-valid-seeds.npy", "lp-test-seeds.npy"};
        for (int s = 0; s < 3; s++)
            if (join_path(path, sizeof path, out_dir, stale[s], NULL) == 0) unlink(path);
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
