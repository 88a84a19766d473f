/* csc.c — building, caching and loading the in-neighbour index; see csc.h.
 *
 * Parallel build (csc_build), a stable counting sort by destination:
 *   1. the edge list is cut into T contiguous chunks; thread t counts the destinations of its
 *      chunk into hist[t][v]                                         O(E / T)
 *   2. indptr[v+1] = sum_t hist[t][v], prefix-summed; hist[t][v] becomes thread t's first
 *      write position for v: indptr[v] + sum_{t' < t} hist[t'][v]   O(N * T)
 *   3. thread t scatters its chunk: indices[hist[t][dst]++] = src    O(E / T)
 * Chunk t precedes chunk t+1 in every neighbour list and each chunk keeps its order, so the
 * result is the edge-list order whatever T is. hist costs T * N * 8 bytes; T is reduced when
 * that would exceed max(256 MiB, E * 8 bytes).
 */
#include "graph/csc.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/cachedir.h"
#include "io/file.h"
#include "io/outguard.h"
#include "util/checked.h"
#include "util/crc.h"
#include "util/cleanup.h"
#include "util/log.h"

static inline int64_t edge_id(const void *ids, npy_dtype dt, int64_t i) {
    return dt == NPY_DTYPE_INT32 ? (int64_t)((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

/* Allocates the arrays of an index of num_dst rows over source ids [0, num_src). */
static int alloc_arrays(csc_graph *g, int64_t first_node, int64_t num_dst, int64_t num_src, int64_t num_edges,
                        cgnn_err *err) {
    memset(g, 0, sizeof *g);
    g->num_nodes = num_dst;
    g->num_edges = num_edges;
    g->first_node = first_node;
    g->num_src_nodes = num_src;
    g->index_bytes = num_src <= INT32_MAX ? 4 : 8;
    g->owned_indptr = malloc((size_t)(num_dst + 1) * sizeof(int64_t));
    g->owned_indices = malloc((size_t)(num_edges ? num_edges : 1) * (size_t)g->index_bytes);
    if (!g->owned_indptr || !g->owned_indices) {
        csc_free(g);
        return err_set(err, CGNN_ERR_RUNTIME,
                       "out of memory building the graph index (%lld nodes, %lld edges)",
                       (long long)num_dst, (long long)num_edges);
    }
    g->indptr = g->owned_indptr;
    g->indices = g->owned_indices;
    return 0;
}

int csc_build_ref(csc_graph *g, int64_t num_nodes, const ds_edges *edges, cgnn_err *err) {
    const int64_t E = edges->num_edges;
    if (alloc_arrays(g, 0, num_nodes, num_nodes, E, err) != 0) return -1;
    int64_t *indptr = g->owned_indptr;
    memset(indptr, 0, (size_t)(num_nodes + 1) * sizeof(int64_t));
    for (int64_t e = 0; e < E; e++) indptr[edge_id(edges->dst, edges->id_dtype, e) + 1]++;
    for (int64_t v = 0; v < num_nodes; v++) indptr[v + 1] += indptr[v];
    int64_t *pos = cgnn_malloc((size_t)(num_nodes ? num_nodes : 1) * sizeof(int64_t));
    memcpy(pos, indptr, (size_t)num_nodes * sizeof(int64_t));
    for (int64_t e = 0; e < E; e++) {
        int64_t s = edge_id(edges->src, edges->id_dtype, e);
        int64_t d = edge_id(edges->dst, edges->id_dtype, e);
        int64_t p = pos[d]++;
        if (g->index_bytes == 4) ((int32_t *)g->owned_indices)[p] = (int32_t)s;
        else ((int64_t *)g->owned_indices)[p] = s;
    }
    free(pos);
    return 0;
}

/* The counting sort of rows [first, first + N) (see the top of the file); ids already checked. */
static int build(csc_graph *g, int64_t first, int64_t N, int64_t num_src, const ds_edges *edges, int nthreads,
                 cgnn_err *err) {
    const int64_t E = edges->num_edges;
    if (alloc_arrays(g, first, N, num_src, E, err) != 0) return -1;
    int T = nthreads > 0 ? nthreads : omp_get_max_threads();
    const double hist_cap = (double)(E * 8 > (256LL << 20) ? E * 8 : (256LL << 20));
    while (T > 1 && (double)T * (double)N * 8.0 > hist_cap) T--;
    if (T > E / 4096 + 1) T = (int)(E / 4096 + 1); /* tiny graphs: not worth threads */
    int64_t *hist = calloc((size_t)T * (size_t)(N ? N : 1), sizeof(int64_t));
    if (!hist) {
        csc_free(g);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory building the graph index");
    }
    const npy_dtype dt = edges->id_dtype;
    const void *src = edges->src, *dst = edges->dst;
    int64_t *indptr = g->owned_indptr;
    const int wide = g->index_bytes == 8;
    void *indices = g->owned_indices;

#pragma omp parallel num_threads(T)
    {
        const int t = omp_get_thread_num(), TT = omp_get_num_threads(); /* TT <= T */
        const int64_t lo = E * t / TT, hi = E * (t + 1) / TT;
        int64_t *h = hist + (size_t)t * (size_t)N;
        if (dt == NPY_DTYPE_INT32) {
            const int32_t *d32 = dst;
            for (int64_t e = lo; e < hi; e++) h[d32[e] - first]++;
        } else {
            const int64_t *d64 = dst;
            for (int64_t e = lo; e < hi; e++) h[d64[e] - first]++;
        }
#pragma omp barrier
        /* degrees, per node over threads */
#pragma omp for schedule(static)
        for (int64_t v = 0; v < N; v++) {
            int64_t deg = 0;
            for (int tt = 0; tt < TT; tt++) deg += hist[(size_t)tt * (size_t)N + (size_t)v];
            indptr[v + 1] = deg;
        }
#pragma omp single
        {
            indptr[0] = 0;
            for (int64_t v = 0; v < N; v++) indptr[v + 1] += indptr[v];
        }
        /* hist[t][v] := first write position of thread t for node v */
#pragma omp for schedule(static)
        for (int64_t v = 0; v < N; v++) {
            int64_t off = indptr[v];
            for (int tt = 0; tt < TT; tt++) {
                int64_t c = hist[(size_t)tt * (size_t)N + (size_t)v];
                hist[(size_t)tt * (size_t)N + (size_t)v] = off;
                off += c;
            }
        }
        /* implicit barrier at the end of omp for */
        for (int64_t e = lo; e < hi; e++) {
            int64_t s = edge_id(src, dt, e), d = edge_id(dst, dt, e) - first;
            int64_t p = h[d]++;
            if (wide) ((int64_t *)indices)[p] = s;
            else ((int32_t *)indices)[p] = (int32_t)s;
        }
    }
    free(hist);
    return 0;
}

int csc_build(csc_graph *g, int64_t num_nodes, const ds_edges *edges, int nthreads, cgnn_err *err) {
    return build(g, 0, num_nodes, num_nodes, edges, nthreads, err);
}

/* Index of the first edge whose dst is outside [lo, hi) or whose src is outside [0, ns), or e. */
#define FIRST_OUTSIDE(T)                                                                       \
    static int64_t first_outside_##T(const T *src, const T *dst, int64_t e, int64_t lo, int64_t hi, \
                                     int64_t ns) {                                             \
        int64_t first = e;                                                                     \
        _Pragma("omp parallel for schedule(static) reduction(min : first)")                    \
        for (int64_t i = 0; i < e; i++)                                                        \
            if ((dst[i] < lo || dst[i] >= hi || src[i] < 0 || src[i] >= ns) && i < first) first = i; \
        return first;                                                                          \
    }
FIRST_OUTSIDE(int32_t)
FIRST_OUTSIDE(int64_t)

int csc_build_range(csc_graph *g, int64_t first_node, int64_t num_dst, int64_t num_src, const ds_edges *edges,
                    int nthreads, cgnn_err *err) {
    memset(g, 0, sizeof *g);
    CGNN_CHECK(first_node >= 0 && num_dst >= 0 && num_src >= 0);
    const int64_t E = edges->num_edges, hi = first_node + num_dst;
    const int64_t bad = edges->id_dtype == NPY_DTYPE_INT32
                            ? first_outside_int32_t(edges->src, edges->dst, E, first_node, hi, num_src)
                            : first_outside_int64_t(edges->src, edges->dst, E, first_node, hi, num_src);
    if (bad < E)
        return err_set(err, CGNN_ERR_INPUT,
                       "edge %lld (%lld -> %lld) is outside the index's range: destinations [%lld, %lld), sources "
                       "[0, %lld)",
                       (long long)bad, (long long)edge_id(edges->src, edges->id_dtype, bad),
                       (long long)edge_id(edges->dst, edges->id_dtype, bad), (long long)first_node, (long long)hi,
                       (long long)num_src);
    return build(g, first_node, num_dst, num_src, edges, nthreads, err);
}

void csc_free(csc_graph *g) {
    if (!g) return;
    if (g->map_base) munmap(g->map_base, g->map_len);
    free(g->owned_indptr);
    free(g->owned_indices);
    memset(g, 0, sizeof *g);
}

/* ---- cache ------------------------------------------------------------------ */

/* The cache is tied to the edge list's content, not to the file's metadata: the header holds
 * CRC-32s of the src and dst id arrays as loaded (zlib's crc32, computed in parallel chunks and
 * joined with crc32_combine, so the value does not depend on the threads), and a CRC-32 of the
 * cache body. Loading recomputes all three and also checks the structure (indptr starts at 0,
 * never decreases, ends at E; every id is in [0, num_src_nodes)) and the shape (N rows of the
 * dst type, ids of the src type: an edge type whose node counts changed does not reuse it), so
 * a stale, truncated, corrupted or crafted cache is rebuilt with a log line, never used. */
#define CSC_CACHE_MAGIC "CGNNCSC\x01"
#define CSC_CACHE_VERSION 2u
#define CSC_HEADER_BYTES 4096 /* keeps indptr page-aligned in the mapping */

typedef struct csc_cache_header {
    char magic[8];
    uint32_t version;
    uint32_t index_bytes;
    int64_t num_nodes, num_edges;
    uint32_t src_id_dtype;      /* dtype of the edge ids the index was built from */
    uint32_t edges_src_crc;     /* CRC-32 of the src ids (E ids of src_id_dtype) */
    uint32_t edges_dst_crc;     /* CRC-32 of the dst ids */
    uint32_t body_crc;          /* CRC-32 of indptr then indices, as stored after the header */
    int64_t num_src_nodes;      /* source ids are in [0, num_src_nodes) (an edge type's src type);
                                   0 in caches written before the field: = num_nodes (square) */
} csc_cache_header;
_Static_assert(sizeof(csc_cache_header) <= CSC_HEADER_BYTES, "cache header");

static void fingerprint(csc_cache_header *h, const dataset *ds, int etype) {
    const ds_edge_type *et = &ds->edge_types[etype];
    const size_t id_bytes = npy_dtype_size(et->edges.id_dtype) * (size_t)et->edges.num_edges;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CSC_CACHE_MAGIC, 8);
    h->version = CSC_CACHE_VERSION;
    h->num_nodes = ds->node_types[et->dst_type].num_nodes;     /* rows: the dst type's nodes */
    h->num_src_nodes = ds->node_types[et->src_type].num_nodes; /* ids: the src type's nodes */
    h->num_edges = et->edges.num_edges;
    h->index_bytes = h->num_src_nodes <= INT32_MAX ? 4 : 8;
    h->src_id_dtype = (uint32_t)et->edges.id_dtype;
    h->edges_src_crc = crc_parallel(0, et->edges.src, id_bytes);
    h->edges_dst_crc = crc_parallel(0, et->edges.dst, id_bytes);
}

static uint32_t body_crc(const csc_graph *g) {
    uint32_t c = crc_parallel(0, g->indptr, (size_t)(g->num_nodes + 1) * 8);
    return crc_parallel(c, g->indices, (size_t)g->num_edges * (size_t)g->index_bytes);
}

/* The cache file of an index with fingerprint h: cgnn's cache folder (io/cachedir.h), named by
 * the content it is built from (counts, id dtype, CRC-32s of the src and dst ids), so it never
 * sits in a dataset folder, and any dataset with the same edges finds it. 0, or -1 with *err
 * (no cache folder: the caller notes it and does not cache). */
static int cache_path(char *out, size_t cap, const csc_cache_header *h, cgnn_err *err) {
    char dir[4000];
    if (cachedir_get(dir, sizeof dir, "csc", err) != 0) return -1;
    const int n = snprintf(out, cap, "%s/csc-v%u-%lld-%lld-%lld-%u-%08x%08x.bin", dir, h->version,
                           (long long)h->num_nodes, (long long)h->num_src_nodes, (long long)h->num_edges,
                           h->src_id_dtype, h->edges_src_crc, h->edges_dst_crc);
    if (n < 0 || (size_t)n >= cap) return err_set(err, CGNN_ERR_RUNTIME, "cache folder %s: path too long", dir);
    return 0;
}

int csc_cache_file(char *out, size_t cap, const dataset *ds, int etype, cgnn_err *err) {
    CGNN_CHECK(etype >= 0 && etype < ds->num_edge_types);
    csc_cache_header h;
    fingerprint(&h, ds, etype);
    return cache_path(out, cap, &h, err);
}

/* NULL if g is a well-formed index of N rows, E edges and source ids in [0, num_src_nodes),
 * else what is wrong. */
static const char *check_structure(const csc_graph *g) {
    const int64_t N = g->num_nodes, E = g->num_edges, NS = g->num_src_nodes;
    const int64_t *ip = g->indptr;
    if (ip[0] != 0 || ip[N] != E) return "offsets do not run from 0 to the edge count";
    int64_t bad_off = 0, bad_id = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad_off)
    for (int64_t v = 0; v < N; v++) bad_off += ip[v + 1] < ip[v];
    if (bad_off) return "offsets decrease";
    if (g->index_bytes == 4) {
        const int32_t *ix = g->indices;
#pragma omp parallel for schedule(static) reduction(+ : bad_id)
        for (int64_t e = 0; e < E; e++) bad_id += ix[e] < 0 || ix[e] >= NS;
    } else {
        const int64_t *ix = g->indices;
#pragma omp parallel for schedule(static) reduction(+ : bad_id)
        for (int64_t e = 0; e < E; e++) bad_id += ix[e] < 0 || ix[e] >= NS;
    }
    return bad_id ? "node ids out of range" : NULL;
}

/* Maps the cache file if it exists, matches `want` and passes every check; returns 1 if loaded,
 * 0 if not (a log line says why when a cache file was there but not used). */
static int try_load_cache(csc_graph *g, const char *path, const csc_cache_header *want) {
    struct stat st;
    int fd = file_open_regular(path, &st, NULL);
    if (fd < 0) {
        if (errno != ENOENT && access(path, F_OK) == 0) log_info("%s: not a regular file; rebuilding the graph index", path);
        return 0;
    }
    csc_cache_header h;
    const char *why = NULL;
    size_t need = 0;
    if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) why = "truncated header";
    else if (memcmp(h.magic, want->magic, 8) != 0 || h.version != want->version) why = "another format version";
    else if (h.num_nodes != want->num_nodes || h.num_edges != want->num_edges || h.index_bytes != want->index_bytes ||
             (h.num_src_nodes ? h.num_src_nodes : h.num_nodes) != want->num_src_nodes ||
             h.src_id_dtype != want->src_id_dtype || h.edges_src_crc != want->edges_src_crc ||
             h.edges_dst_crc != want->edges_dst_crc)
        why = "built from another edge list (the edge file changed)";
    else if (ck_mul3_size(want->num_nodes + 1, 8, 1, &need) != 0 ||
             ck_add_size(need, (size_t)want->num_edges * want->index_bytes, &need) != 0 ||
             ck_add_size(need, CSC_HEADER_BYTES, &need) != 0 || (size_t)st.st_size != need)
        why = "wrong size";
    void *base = MAP_FAILED;
    if (!why && (base = mmap(NULL, need, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0)) == MAP_FAILED) why = "cannot map";
    close(fd);
    if (!why) {
        memset(g, 0, sizeof *g);
        g->num_nodes = want->num_nodes;
        g->num_edges = want->num_edges;
        g->num_src_nodes = want->num_src_nodes;
        g->index_bytes = (int)want->index_bytes;
        g->map_base = base;
        g->map_len = need;
        g->indptr = (const int64_t *)((const char *)base + CSC_HEADER_BYTES);
        g->indices = (const char *)base + CSC_HEADER_BYTES + (size_t)(want->num_nodes + 1) * 8;
        if ((why = check_structure(g)) == NULL && body_crc(g) != h.body_crc) why = "checksum mismatch (corrupted)";
        if (why) {
            munmap(base, need);
            memset(g, 0, sizeof *g);
        }
    }
    if (why) {
        log_info("%s: cached graph index not used (%s); rebuilding it", path, why);
        return 0;
    }
    g->from_cache = 1;
    return 1;
}

static int write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes the cache atomically; failures are reported as a note, never an error. */
static void write_cache(const char *path, const csc_cache_header *h, const csc_graph *g,
                        const dataset *ds) {
    char tmp[4300];
    /* written while the dataset loads, before a command knows its outputs: its own guard, the
     * dataset's files (the cache, its lock and temporary names are never one of them) */
    outguard guard;
    outguard_init(&guard);
    outguard_add_dataset(&guard, ds);
    cgnn_err gerr;
    const int refused = outguard_check_file(&guard, path, "the graph index cache", &gerr) != 0;
    outguard_free(&guard);
    if (refused) {
        log_info("note: not caching the graph index (%s)", gerr.msg);
        return;
    }
    cleanup_stale_tmp(path, NULL, NULL); /* a killed run's temporary file (the folder is cgnn's) */
    const int cleanup_h = cleanup_tmp_path(tmp, sizeof tmp, path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        cleanup_forget(cleanup_h);
        log_info("note: not caching the graph index (%s: %s)", tmp, strerror(errno));
        return;
    }
    char *hdr = cgnn_calloc(1, CSC_HEADER_BYTES);
    csc_cache_header full = *h;
    full.body_crc = body_crc(g);
    memcpy(hdr, &full, sizeof full);
    int rc = write_all(fd, hdr, CSC_HEADER_BYTES);
    free(hdr);
    if (rc == 0) rc = write_all(fd, g->indptr, (size_t)(g->num_nodes + 1) * 8);
    if (rc == 0) rc = write_all(fd, g->indices, (size_t)g->num_edges * (size_t)g->index_bytes);
    if (close(fd) != 0) rc = -1;
    if (rc != 0 || rename(tmp, path) != 0) {
        log_info("note: not caching the graph index (%s: %s)", path, strerror(errno));
        unlink(tmp);
    }
    cleanup_forget(cleanup_h);
}

int csc_open_cached(csc_graph *g, const dataset *ds, int etype, int nthreads, cgnn_err *err) {
    CGNN_CHECK(etype >= 0 && etype < ds->num_edge_types);
    memset(g, 0, sizeof *g);
    if (ds->partition.present)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: is %s of a partitioned graph (%s): its node ids and features are not those of a whole "
                       "graph; name the partition (%s) instead, or use the original dataset",
                       ds->dir, ds->partition.part < 0 ? "the global splits" : "one part", ds->partition.graph,
                       ds->partition.graph);
    csc_cache_header want;
    fingerprint(&want, ds, etype);
    char path[4200];
    cgnn_err cerr;
    const int cacheable = cache_path(path, sizeof path, &want, &cerr) == 0;
    if (!cacheable) log_info("note: not caching the graph index (%s)", cerr.msg);
    const uint64_t crc = (uint64_t)want.edges_src_crc << 32 | want.edges_dst_crc;
    if (cacheable && try_load_cache(g, path, &want)) {
        g->edges_crc = crc;
        return 0;
    }
    /* rows: the dst type's nodes, ids: the src type's (checked by dataset_open); a square
     * graph is exactly csc_build */
    const ds_edge_type *et = &ds->edge_types[etype];
    /* an index past the machine's memory is the dataset's node count (or edge count): named */
    const double need = ((double)want.num_nodes + 1.0) * 8.0 + (double)et->edges.num_edges * 8.0;
    const double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (phys > 0 && need > phys)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s/metadata.yaml: graph.nodes[%d].num: the graph index of edge type '%s' over %lld '%s' "
                       "nodes and %lld edges needs %.1f GiB, more than this machine's %.1f GiB of memory",
                       ds->dir, et->dst_type, et->name, (long long)want.num_nodes,
                       ds->node_types[et->dst_type].name, (long long)et->edges.num_edges, need / 1073741824.0,
                       phys / 1073741824.0);
    if (build(g, 0, want.num_nodes, want.num_src_nodes, &et->edges, nthreads, err) != 0) return -1;
    g->edges_crc = crc;
    if (cacheable) write_cache(path, &want, g, ds);
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void csc_degree_summary(const csc_graph *g, csc_degree_stats *s) {
    memset(s, 0, sizeof *s);
    const int64_t N = g->num_nodes;
    if (N == 0) return;
    int64_t *deg = cgnn_malloc((size_t)N * sizeof(int64_t));
    int64_t isolated = 0;
#pragma omp parallel for reduction(+ : isolated)
    for (int64_t v = 0; v < N; v++) {
        deg[v] = csc_degree(g, v);
        isolated += deg[v] == 0;
    }
    qsort(deg, (size_t)N, sizeof(int64_t), cmp_i64);
    s->min = deg[0];
    s->max = deg[N - 1];
    s->median = deg[N / 2];
    s->p99 = deg[(int64_t)((double)(N - 1) * 0.99)];
    s->mean = (double)g->num_edges / (double)N;
    s->num_isolated = isolated;
    free(deg);
}

double csc_reverse_fraction(const csc_graph *g, int64_t max_samples) {
    const int64_t E = g->num_edges;
    if (E <= 0 || max_samples <= 0 || g->first_node != 0 || g->num_src_nodes != g->num_nodes) return -1;
    const int64_t stride = E / max_samples > 1 ? E / max_samples : 1;
    int64_t counted = 0, found = 0, v = 0;
    for (int64_t i = 0; i < E && counted < max_samples; i += stride) {
        while (g->indptr[v + 1] <= i) v++; /* the destination of edge i (edges grouped by destination) */
        const int64_t u = csc_index(g, i);
        if (u == v || csc_degree(g, u) > 4096) continue;
        counted++;
        for (int64_t k = g->indptr[u]; k < g->indptr[u + 1]; k++)
            if (csc_index(g, k) == v) {
                found++;
                break;
            }
    }
    return counted ? (double)found / (double)counted : -1;
}

void csc_warn_one_way(const csc_graph *g, const char *what) {
    const double r = csc_reverse_fraction(g, 20000);
    if (r >= 0 && r < 0.05)
        log_warn("%s: %.1f%% of the edges have their reverse edge: messages flow only along each edge's direction. "
                 "An edge list written one way (a citation CSV) loses accuracy (Cora: 0.814 against 0.890 with both "
                 "directions); list each edge both ways unless the direction is meant (docs/DATASETS.md, \"Edges "
                 "and their direction\")",
                 what, 100.0 * r);
}
