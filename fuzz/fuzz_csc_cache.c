/* fuzz_csc_cache.c — libFuzzer target: the graph index cache read by csc_open_cached
 * (cgnn's cache folder, here <fuzz dir>/cache: $CGNN_CACHE_DIR/csc/csc-...bin).
 *
 * A small fixed dataset (12 nodes, 20 edges) lives in the private directory; its first
 * csc_open_cached builds the index and writes the cache, whose 4096-byte header (the
 * fingerprint of this edge file) is kept as a template. Input byte 0 picks the mode:
 *   even: the rest of the input is the whole cache file (magic, header, sizes);
 *   odd:  the cache file is the template header followed by the rest of the input (the
 *         indptr and indices arrays: the fingerprint matches, so only the contents decide).
 * csc_open_cached must then return an index that satisfies csc.h (indptr from 0 to E,
 * non-decreasing, every id in [0, N)), whether it loaded the cache or rebuilt the index; it
 * must never hand a consumer offsets or ids that read out of bounds.
 */
#include "fuzz_util.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N 12
#define E 20
#define HEADER_BYTES 4096

static dataset ds;
static unsigned char header[HEADER_BYTES];
static const char *cache_name; /* the cache file, relative to fuzz_dir() */
static char cache_path[4200];

static void setup(void) {
    log_level = 0; /* no notes (cache rebuilt): one per input would flood the fuzzer log */
    int64_t edges[2][E];
    for (int e = 0; e < E; e++) {
        edges[0][e] = (e * 7 + 3) % N;
        edges[1][e] = (e * 5) % N;
    }
    fuzz_write_npy("edges.npy", NPY_DTYPE_INT64, 2, 2, E, edges);
    static const char meta[] = "graph:\n  nodes:\n    - num: 12\n  edges:\n"
                               "    - format: numpy\n      path: edges.npy\n";
    char path[4096];
    fuzz_write("metadata.yaml", meta, sizeof meta - 1, path);
    cgnn_err err = {0};
    fuzz_path(path, "cache");
    setenv("CGNN_CACHE_DIR", path, 1);
    if (dataset_open(&ds, fuzz_dir(), &err) != 0) {
        fprintf(stderr, "fuzz: fixture: %s\n", err.msg);
        abort();
    }
    csc_graph g;
    if (csc_open_cached(&g, &ds, 0, 1, &err) != 0) {
        fprintf(stderr, "fuzz: fixture: %s\n", err.msg);
        abort();
    }
    csc_free(&g);
    if (csc_cache_file(cache_path, sizeof cache_path, &ds, 0, &err) != 0) {
        fprintf(stderr, "fuzz: fixture: %s\n", err.msg);
        abort();
    }
    cache_name = cache_path + strlen(fuzz_dir()) + 1;
    FILE *f = fopen(cache_path, "rb");
    if (!f || fread(header, 1, HEADER_BYTES, f) != HEADER_BYTES) {
        fprintf(stderr, "fuzz: fixture: no cache header in %s\n", cache_path);
        abort();
    }
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    if (size == 0) return 0;
    int with_header = data[0] & 1;
    data++, size--;
    unsigned char *file = malloc(HEADER_BYTES + size + 1);
    size_t len = 0;
    if (with_header) {
        memcpy(file, header, HEADER_BYTES);
        len = HEADER_BYTES;
    }
    if (size) memcpy(file + len, data, size);
    len += size;
    char path[4096];
    fuzz_write(cache_name, file, len, path);
    free(file);

    csc_graph g;
    cgnn_err err = {0};
    int rc = csc_open_cached(&g, &ds, 0, 1, &err);
    fuzz_check(rc, &err, fuzz_dir());
    if (rc != 0) return 0;
    FUZZ_ASSERT(g.num_nodes == N && g.num_edges == E && (g.index_bytes == 4 || g.index_bytes == 8));
    FUZZ_ASSERT(g.indptr[0] == 0 && g.indptr[N] == E);
    for (int64_t v = 0; v < N; v++) FUZZ_ASSERT(g.indptr[v] <= g.indptr[v + 1]);
    for (int64_t v = 0; v < N; v++) {
        for (int64_t i = g.indptr[v]; i < g.indptr[v + 1]; i++) {
            int64_t u = csc_index(&g, i);
            FUZZ_ASSERT(u >= 0 && u < N);
        }
    }
    csc_degree_stats st;
    csc_degree_summary(&g, &st);
    FUZZ_ASSERT(st.min >= 0 && st.max <= E);
    csc_free(&g);
    return 0;
}
