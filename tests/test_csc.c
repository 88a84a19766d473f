/* test_csc.c — the in-neighbour index: parallel build == reference, any thread count. */
#include <omp.h>

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

int main(void) {
    RUN(build_matches_reference_any_threads);
    RUN(int64_edges_and_empty_graph);
    return test_summary();
}
