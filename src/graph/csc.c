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

#include "util/log.h"

static inline int64_t edge_id(const void *ids, npy_dtype dt, int64_t i) {
    return dt == NPY_DTYPE_INT32 ? (int64_t)((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

static int alloc_arrays(csc_graph *g, int64_t num_nodes, int64_t num_edges, cgnn_err *err) {
    memset(g, 0, sizeof *g);
    g->num_nodes = num_nodes;
    g->num_edges = num_edges;
    g->index_bytes = num_nodes <= INT32_MAX ? 4 : 8;
    g->owned_indptr = malloc((size_t)(num_nodes + 1) * sizeof(int64_t));
    g->owned_indices = malloc((size_t)(num_edges ? num_edges : 1) * (size_t)g->index_bytes);
    if (!g->owned_indptr || !g->owned_indices) {
        csc_free(g);
        return err_set(err, CGNN_ERR_RUNTIME,
                       "out of memory building the graph index (%lld nodes, %lld edges)",
                       (long long)num_nodes, (long long)num_edges);
    }
    g->indptr = g->owned_indptr;
    g->indices = g->owned_indices;
    return 0;
}

int csc_build_ref(csc_graph *g, int64_t num_nodes, const ds_edges *edges, cgnn_err *err) {
    const int64_t E = edges->num_edges;
    if (alloc_arrays(g, num_nodes, E, err) != 0) return -1;
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

int csc_build(csc_graph *g, int64_t num_nodes, const ds_edges *edges, int nthreads, cgnn_err *err) {
    const int64_t E = edges->num_edges, N = num_nodes;
    if (alloc_arrays(g, N, E, err) != 0) return -1;
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
            for (int64_t e = lo; e < hi; e++) h[d32[e]]++;
        } else {
            const int64_t *d64 = dst;
            for (int64_t e = lo; e < hi; e++) h[d64[e]]++;
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
            int64_t s = edge_id(src, dt, e), d = edge_id(dst, dt, e);
            int64_t p = h[d]++;
            if (wide) ((int64_t *)indices)[p] = s;
            else ((int32_t *)indices)[p] = (int32_t)s;
        }
    }
    free(hist);
    return 0;
}

void csc_free(csc_graph *g) {
    if (!g) return;
    if (g->map_base) munmap(g->map_base, g->map_len);
    free(g->owned_indptr);
    free(g->owned_indices);
    memset(g, 0, sizeof *g);
}

/* ---- cache ------------------------------------------------------------------ */

#define CSC_CACHE_MAGIC "CGNNCSC\x01"
#define CSC_CACHE_VERSION 1u
#define CSC_HEADER_BYTES 4096 /* keeps indptr page-aligned in the mapping */

typedef struct csc_cache_header {
    char magic[8];
    uint32_t version;
    uint32_t index_bytes;
    int64_t num_nodes, num_edges;
    /* fingerprint of the source edge file */
    int64_t src_size, src_mtime_sec, src_mtime_nsec;
    uint32_t src_id_dtype, reserved;
    char src_path[3072];
} csc_cache_header;
_Static_assert(sizeof(csc_cache_header) <= CSC_HEADER_BYTES, "cache header");

static int fingerprint(csc_cache_header *h, const dataset *ds, int etype, const csc_graph *g_or_null,
                       cgnn_err *err) {
    const ds_edge_type *et = &ds->edge_types[etype];
    struct stat st;
    if (stat(et->path, &st) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: cannot stat: %s", et->path, strerror(errno));
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CSC_CACHE_MAGIC, 8);
    h->version = CSC_CACHE_VERSION;
    h->num_nodes = ds->node_types[et->dst_type].num_nodes;
    h->num_edges = et->edges.num_edges;
    h->index_bytes = h->num_nodes <= INT32_MAX ? 4 : 8;
    h->src_size = (int64_t)st.st_size;
    h->src_mtime_sec = (int64_t)st.st_mtim.tv_sec;
    h->src_mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
    h->src_id_dtype = (uint32_t)et->edges.id_dtype;
    char *abs = realpath(et->path, NULL);
    snprintf(h->src_path, sizeof h->src_path, "%.3000s", abs ? abs : et->path);
    free(abs);
    (void)g_or_null;
    return 0;
}

static void cache_path(char *out, size_t cap, const dataset *ds, int etype) {
    snprintf(out, cap, "%s/preprocessed/csc-%d.bin", ds->dir, etype);
}

/* Maps the cache file if it exists and matches `want`; returns 1 if loaded, 0 if not. */
static int try_load_cache(csc_graph *g, const char *path, const csc_cache_header *want) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    csc_cache_header h;
    int ok = fstat(fd, &st) == 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
             memcmp(&h, want, sizeof h) == 0;
    size_t need = CSC_HEADER_BYTES + (size_t)(want->num_nodes + 1) * 8 +
                  (size_t)want->num_edges * want->index_bytes;
    if (!ok || (size_t)st.st_size != need) {
        close(fd);
        return 0;
    }
    void *base = mmap(NULL, need, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return 0;
    memset(g, 0, sizeof *g);
    g->num_nodes = want->num_nodes;
    g->num_edges = want->num_edges;
    g->index_bytes = (int)want->index_bytes;
    g->map_base = base;
    g->map_len = need;
    g->indptr = (const int64_t *)((const char *)base + CSC_HEADER_BYTES);
    g->indices = (const char *)base + CSC_HEADER_BYTES + (size_t)(want->num_nodes + 1) * 8;
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
                        const char *dir) {
    char pre[4200], tmp[4300];
    snprintf(pre, sizeof pre, "%s/preprocessed", dir);
    if (mkdir(pre, 0755) != 0 && errno != EEXIST) {
        log_info("note: not caching the graph index (%s: %s)", pre, strerror(errno));
        return;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_info("note: not caching the graph index (%s: %s)", tmp, strerror(errno));
        return;
    }
    char *hdr = cgnn_calloc(1, CSC_HEADER_BYTES);
    memcpy(hdr, h, sizeof *h);
    int rc = write_all(fd, hdr, CSC_HEADER_BYTES);
    free(hdr);
    if (rc == 0) rc = write_all(fd, g->indptr, (size_t)(g->num_nodes + 1) * 8);
    if (rc == 0) rc = write_all(fd, g->indices, (size_t)g->num_edges * (size_t)g->index_bytes);
    if (close(fd) != 0) rc = -1;
    if (rc != 0 || rename(tmp, path) != 0) {
        log_info("note: not caching the graph index (%s: %s)", path, strerror(errno));
        unlink(tmp);
    }
}

int csc_open_cached(csc_graph *g, const dataset *ds, int etype, int nthreads, cgnn_err *err) {
    CGNN_CHECK(etype >= 0 && etype < ds->num_edge_types);
    csc_cache_header want;
    if (fingerprint(&want, ds, etype, NULL, err) != 0) return -1;
    char path[4200];
    cache_path(path, sizeof path, ds, etype);
    if (try_load_cache(g, path, &want)) return 0;
    const ds_edge_type *et = &ds->edge_types[etype];
    if (csc_build(g, want.num_nodes, &et->edges, nthreads, err) != 0) return -1;
    write_cache(path, &want, g, ds->dir);
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
