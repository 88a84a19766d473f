/* test_csc.c — the in-neighbour index: parallel build == reference, any thread count; the
 * cache (in cgnn's cache folder, never the dataset's) is reused only when its arrays are valid. */
#include <ftw.h>
#include <omp.h>
#include <sys/stat.h>

#include "test.h"
#include "test_graph_util.h"

static int same_graph(const csc_graph *a, const csc_graph *b) {
    if (a->num_nodes != b->num_nodes || a->num_edges != b->num_edges || a->index_bytes != b->index_bytes)
        return 0;
    if (memcmp(a->indptr, b->indptr, (size_t)(a->num_nodes + 1) * 8) != 0) return 0;
    return memcmp(a->indices, b->indices, (size_t)a->num_edges * (size_t)a->index_bytes) == 0;
}

TEST(build_matches_reference_any_threads) {
    int32_t *src, *dst;
    int64_t n = 5000, e = test_random_graph(n, 8, 400, 11, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph ref, g;
    cgnn_err err;
    ASSERT_EQ(csc_build_ref(&ref, n, &ed, &err), 0);
    ASSERT_EQ(ref.num_edges, e);
    ASSERT_EQ(ref.index_bytes, 4);
    /* degrees and membership */
    int64_t *deg = calloc((size_t)n, sizeof(int64_t));
    for (int64_t i = 0; i < e; i++) deg[dst[i]]++;
    for (int64_t v = 0; v < n; v++) ASSERT_EQ(csc_degree(&ref, v), deg[v]);
    for (int64_t i = 0; i < e; i += 37) ASSERT(test_has_edge(&ref, src[i], dst[i]));
    /* stable: the neighbours of v appear in edge-list order */
    int64_t *pos = malloc((size_t)n * sizeof(int64_t));
    for (int64_t v = 0; v < n; v++) pos[v] = ref.indptr[v];
    for (int64_t i = 0; i < e; i++) ASSERT_EQ(csc_index(&ref, pos[dst[i]]++), src[i]);
    int threads[] = {1, 2, 3, 4, 7};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        ASSERT_EQ(csc_build(&g, n, &ed, threads[t], &err), 0);
        ASSERT(same_graph(&g, &ref));
        csc_free(&g);
    }
    free(pos);
    free(deg);
    csc_free(&ref);
    free(src);
    free(dst);
}

TEST(int64_edges_and_empty_graph) {
    int64_t src[] = {0, 1, 2, 2, 3}, dst[] = {1, 2, 0, 1, 1};
    ds_edges ed = {NPY_DTYPE_INT64, 5, src, dst};
    csc_graph g;
    cgnn_err err;
    ASSERT_EQ(csc_build(&g, 4, &ed, 2, &err), 0);
    int64_t want_ptr[] = {0, 1, 4, 5, 5};
    for (int v = 0; v <= 4; v++) ASSERT_EQ(g.indptr[v], want_ptr[v]);
    ASSERT_EQ(csc_index(&g, 1), 0);
    ASSERT_EQ(csc_index(&g, 2), 2);
    ASSERT_EQ(csc_index(&g, 3), 3);
    csc_degree_stats st;
    csc_degree_summary(&g, &st);
    ASSERT_EQ(st.max, 3);
    ASSERT_EQ(st.min, 0);
    ASSERT_EQ(st.num_isolated, 1);
    csc_free(&g);
    ds_edges none = {NPY_DTYPE_INT32, 0, NULL, NULL};
    ASSERT_EQ(csc_build(&g, 3, &none, 2, &err), 0);
    ASSERT_EQ(g.indptr[3], 0);
    csc_free(&g);
    csc_free(NULL);
}

/* csc_reverse_fraction against a count by hand: one way, both ways, half, self-loops ignored */
TEST(reverse_fraction) {
    cgnn_err err;
    csc_graph g;
    /* a path 0 -> 1 -> 2 -> 3 one way, and a self-loop 2 -> 2 (not counted) */
    int64_t s1[] = {0, 1, 2, 2}, d1[] = {1, 2, 3, 2};
    ds_edges e1 = {NPY_DTYPE_INT64, 4, s1, d1};
    ASSERT_EQ(csc_build(&g, 4, &e1, 1, &err), 0);
    ASSERT_NEAR(csc_reverse_fraction(&g, 100), 0.0, 0);
    csc_free(&g);
    /* both ways: every edge has its reverse */
    int64_t s2[] = {0, 1, 1, 2}, d2[] = {1, 0, 2, 1};
    ds_edges e2 = {NPY_DTYPE_INT64, 4, s2, d2};
    ASSERT_EQ(csc_build(&g, 3, &e2, 1, &err), 0);
    ASSERT_NEAR(csc_reverse_fraction(&g, 100), 1.0, 0);
    csc_free(&g);
    /* 0 <-> 1 both ways, 2 -> 3 and 3 -> 0 one way: 2 of 4 */
    int64_t s3[] = {0, 1, 2, 3}, d3[] = {1, 0, 3, 0};
    ds_edges e3 = {NPY_DTYPE_INT64, 4, s3, d3};
    ASSERT_EQ(csc_build(&g, 4, &e3, 1, &err), 0);
    ASSERT_NEAR(csc_reverse_fraction(&g, 100), 0.5, 0);
    csc_free(&g);
    /* only self-loops: nothing counted */
    int64_t s4[] = {0, 1}, d4[] = {0, 1};
    ds_edges e4 = {NPY_DTYPE_INT64, 2, s4, d4};
    ASSERT_EQ(csc_build(&g, 2, &e4, 1, &err), 0);
    ASSERT(csc_reverse_fraction(&g, 100) < 0);
    csc_free(&g);
}

/* csc_build_range on the edges of a destination range == the rows of the whole graph's index
 * (same neighbours in the same order, global ids), for any thread count; edges outside the
 * range are an input error naming the edge. */
TEST(build_range_matches_whole_rows) {
    int32_t *src, *dst;
    int64_t n = 3000, e = test_random_graph(n, 6, 300, 5, &src, &dst);
    ds_edges ed = test_edges(src, dst, e);
    csc_graph whole, part;
    cgnn_err err;
    ASSERT_EQ(csc_build_ref(&whole, n, &ed, &err), 0);
    const int64_t lo = 1000, hi = 2200;
    int32_t *ps = malloc((size_t)e * sizeof *ps), *pd = malloc((size_t)e * sizeof *pd);
    int64_t k = 0;
    for (int64_t i = 0; i < e; i++)
        if (dst[i] >= lo && dst[i] < hi) ps[k] = src[i], pd[k] = dst[i], k++;
    ds_edges pe = test_edges(ps, pd, k);
    int threads[] = {1, 2, 3};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        ASSERT_EQ(csc_build_range(&part, lo, hi - lo, n, &pe, threads[t], &err), 0);
        ASSERT_EQ(part.num_nodes, hi - lo);
        ASSERT_EQ(part.first_node, lo);
        ASSERT_EQ(part.num_src_nodes, n);
        ASSERT_EQ(part.num_edges, k);
        for (int64_t r = 0; r < hi - lo; r++) {
            ASSERT_EQ(csc_degree(&part, r), csc_degree(&whole, lo + r));
            for (int64_t j = 0; j < csc_degree(&part, r); j++)
                ASSERT_EQ(csc_index(&part, part.indptr[r] + j), csc_index(&whole, whole.indptr[lo + r] + j));
        }
        csc_free(&part);
    }
    /* the whole range is csc_build itself */
    ASSERT_EQ(csc_build_range(&part, 0, n, n, &ed, 2, &err), 0);
    ASSERT(same_graph(&part, &whole));
    csc_free(&part);
    /* an edge whose dst is outside the range, or whose src is outside [0, num_src) */
    err_clear(&err);
    ASSERT_EQ(csc_build_range(&part, lo + 1, hi - lo - 1, n, &pe, 2, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "outside the index's range");
    ASSERT_EQ(csc_build_range(&part, lo, hi - lo, 10, &pe, 2, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "sources [0, 10)");
    free(ps);
    free(pd);
    csc_free(&whole);
    free(src);
    free(dst);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Overwrites len bytes at offset off of path. */
static int patch_file(const char *path, long off, const void *bytes, size_t len) {
    FILE *f = fopen(path, "r+b");
    if (!f) return -1;
    int ok = fseek(f, off, SEEK_SET) == 0 && fwrite(bytes, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* A cache whose header matches the edge file but whose arrays break the index contract (found
 * by fuzz/fuzz_csc_cache.c: indptr not monotone, then ids out of range) must not be loaded: the
 * index is rebuilt (same result as csc_build) and the cache rewritten. */
TEST(corrupt_cache_rebuilt) {
    char *dir = test_tmpdir();
    int64_t edges[2][5] = {{0, 1, 2, 2, 3}, {1, 2, 0, 1, 1}};
    char path[4200], cache[4200];
    snprintf(path, sizeof path, "%s/edges.npy", dir);
    cgnn_err err = {0};
    int64_t shape[2] = {2, 5};
    ASSERT_EQ(npy_write(path, NPY_DTYPE_INT64, 2, shape, edges, &err), 0);
    static const char meta[] = "graph:\n  nodes: [{num: 4}]\n  edges: [{format: numpy, path: edges.npy}]\n";
    ASSERT_EQ(test_write_file(dir, "metadata.yaml", meta, sizeof meta - 1), 0);
    dataset ds;
    ASSERT_EQ(dataset_open(&ds, dir, &err), 0);
    char cache_dir[4200];
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    setenv("CGNN_CACHE_DIR", cache_dir, 1);
    ASSERT_EQ(csc_cache_file(cache, sizeof cache, &ds, 0, &err), 0);
    ASSERT(strncmp(cache, cache_dir, strlen(cache_dir)) == 0); /* in the cache folder */
    csc_graph ref, g;
    ASSERT_EQ(csc_build(&ref, 4, &ds.edge_types[0].edges, 1, &err), 0);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0); /* builds and writes the cache */
    ASSERT_EQ(g.from_cache, 0);
    csc_free(&g);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 1);
    ASSERT(same_graph(&g, &ref));
    csc_free(&g);
    struct stat st;
    ASSERT_EQ(stat(cache, &st), 0);
    snprintf(path, sizeof path, "%s/preprocessed", dir); /* nothing written into the dataset */
    ASSERT(stat(path, &st) != 0);

    /* the same edges in another dataset folder find the same cache */
    char *dir2 = test_tmpdir();
    snprintf(path, sizeof path, "%s/edges.npy", dir2);
    ASSERT_EQ(npy_write(path, NPY_DTYPE_INT64, 2, shape, edges, &err), 0);
    ASSERT_EQ(test_write_file(dir2, "metadata.yaml", meta, sizeof meta - 1), 0);
    dataset ds2;
    ASSERT_EQ(dataset_open(&ds2, dir2, &err), 0);
    ASSERT_EQ(csc_open_cached(&g, &ds2, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 1);
    csc_free(&g);
    /* other edges: another file */
    edges[0][4] = 0;
    ASSERT_EQ(npy_write(path, NPY_DTYPE_INT64, 2, shape, edges, &err), 0);
    dataset_close(&ds2);
    ASSERT_EQ(dataset_open(&ds2, dir2, &err), 0);
    char cache2[4200];
    ASSERT_EQ(csc_cache_file(cache2, sizeof cache2, &ds2, 0, &err), 0);
    ASSERT(strcmp(cache, cache2) != 0);
    ASSERT_EQ(csc_open_cached(&g, &ds2, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 0);
    csc_free(&g);
    dataset_close(&ds2);
    nftw(dir2, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir2);

    /* no cache folder ($CGNN_CACHE_DIR=""): built every time, nothing written */
    setenv("CGNN_CACHE_DIR", "", 1);
    ASSERT(csc_cache_file(path, sizeof path, &ds, 0, &err) != 0);
    ASSERT(strstr(err.msg, "CGNN_CACHE_DIR") != NULL);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 0);
    ASSERT(same_graph(&g, &ref));
    csc_free(&g);
    setenv("CGNN_CACHE_DIR", cache_dir, 1);

    /* indptr (after the 4096-byte header) = {0, 1, 4, 5, 5}: make indptr[2] = 0 < indptr[1] */
    int64_t zero = 0;
    ASSERT_EQ(patch_file(cache, 4096 + 2 * 8, &zero, 8), 0);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 0);
    ASSERT(same_graph(&g, &ref));
    csc_free(&g);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0); /* the rebuilt cache was written */
    ASSERT_EQ(g.from_cache, 1);
    csc_free(&g);

    /* indices (int32, after indptr) [3] = 99, not a node id */
    int32_t far = 99;
    ASSERT_EQ(patch_file(cache, 4096 + 5 * 8 + 3 * 4, &far, 4), 0);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 0);
    ASSERT(same_graph(&g, &ref));
    csc_free(&g);

    /* indptr[4] = E + 1: past the edge count */
    int64_t past = 6;
    ASSERT_EQ(patch_file(cache, 4096 + 4 * 8, &past, 8), 0);
    ASSERT_EQ(csc_open_cached(&g, &ds, 0, 1, &err), 0);
    ASSERT_EQ(g.from_cache, 0);
    ASSERT(same_graph(&g, &ref));
    csc_free(&g);

    csc_free(&ref);
    dataset_close(&ds);
    unsetenv("CGNN_CACHE_DIR");
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

int main(void) {
    RUN(build_matches_reference_any_threads);
    RUN(int64_edges_and_empty_graph);
    RUN(reverse_fraction);
    RUN(build_range_matches_whole_rows);
    RUN(corrupt_cache_rebuilt);
    return test_summary();
}
