/* test_partition.c — graph/partition (symmetrisation, random assignment, renumbering, METIS,
 * the writer) and graph/partbook (the reader of one part): on small graphs against plain
 * references, then on the bundled Cora, both methods, 2 and 3 parts: every part read back
 * through partbook_open equals the source (local index rows = the whole graph's rows through the
 * id maps, in order; features; splits), the output does not depend on the threads, and the
 * reader refuses what it must (mixed runs, broken maps, a JSON that breaks its contract). */
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/partbook.h"
#include "graph/partition.h"
#include "io/json.h"
#include "test.h"
#include "test_graph_util.h"

/* ---- helpers --------------------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}
static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static int copy_file(const char *from, const char *to) {
    size_t n;
    unsigned char *b = test_slurp(from, &n);
    if (!b) return -1;
    FILE *f = fopen(to, "wb");
    int ok = f && fwrite(b, 1, n, f) == n;
    if (f) ok = fclose(f) == 0 && ok;
    free(b);
    return ok ? 0 : -1;
}

/* Compares every regular file under a with the same path under b (byte for byte), skipping
 * run.yaml; counts the files. */
static const char *cmp_root_a, *cmp_root_b;
static int cmp_bad, cmp_files;
static int cmp_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)ftw;
    if (flag != FTW_F) return 0;
    const char *rel = path + strlen(cmp_root_a);
    if (strcmp(rel, "/run.yaml") == 0) return 0;
    char other[8192];
    snprintf(other, sizeof other, "%s%s", cmp_root_b, rel);
    size_t na = 0, nb = 0;
    unsigned char *a = test_slurp(path, &na), *b = test_slurp(other, &nb);
    if (!a || !b || na != nb || memcmp(a, b, na) != 0) {
        fprintf(stderr, "  differs: %s vs %s\n", path, other);
        cmp_bad = 1;
    }
    free(a);
    free(b);
    cmp_files++;
    return 0;
}
static int same_tree(const char *a, const char *b, int *files) {
    cmp_root_a = a, cmp_root_b = b, cmp_bad = 0, cmp_files = 0;
    nftw(a, cmp_entry, 16, FTW_PHYS);
    *files = cmp_files;
    return !cmp_bad;
}

/* ---- symmetrisation -------------------------------------------------------------------------- */

TEST(symmetrize_tiny) {
    /* 0->1, 1->0 (the same undirected edge), 2->2 (loop), 1->2 twice, 3->1 */
    int32_t src[] = {0, 1, 2, 1, 1, 3}, dst[] = {1, 0, 2, 2, 2, 1};
    ds_edges ed = test_edges(src, dst, 6);
    partition_symgraph g;
    cgnn_err err;
    ASSERT_EQ(partition_symmetrize(&g, 5, &ed, 2, &err), 0);
    const int32_t want_x[] = {0, 1, 4, 5, 6, 6}, want_a[] = {1, 0, 2, 3, 1, 1};
    ASSERT_EQ(g.nnz, 6);
    for (int v = 0; v <= 5; v++) ASSERT_EQ(g.xadj[v], want_x[v]);
    for (int i = 0; i < 6; i++) ASSERT_EQ(g.adjncy[i], want_a[i]);
    partition_symgraph_free(&g);
    ds_edges none = {NPY_DTYPE_INT64, 0, NULL, NULL};
    ASSERT_EQ(partition_symmetrize(&g, 3, &none, 2, &err), 0);
    ASSERT_EQ(g.nnz, 0);
    ASSERT_EQ(g.xadj[3], 0);
    partition_symgraph_free(&g);
    partition_symgraph_free(NULL);
}

/* Against a dense reference (adjacency matrix), with loops, duplicates and both directions
 * mixed in; the same arrays for any thread count. */
TEST(symmetrize_matches_reference) {
    int32_t *src, *dst;
    const int64_t n = 400;
    int64_t e = test_random_graph(n, 6, 120, 3, &src, &dst);
    src = realloc(src, (size_t)(e + 300) * sizeof *src);
    dst = realloc(dst, (size_t)(e + 300) * sizeof *dst);
    for (int k = 0; k < 100; k++, e++) src[e] = dst[e] = (int32_t)(k * 3 % n);      /* loops */
    for (int k = 0; k < 100; k++, e++) src[e] = dst[k], dst[e] = src[k];            /* reverses */
    for (int k = 0; k < 100; k++, e++) src[e] = src[k * 5], dst[e] = dst[k * 5];    /* duplicates */
    unsigned char *m = calloc((size_t)(n * n), 1);
    for (int64_t i = 0; i < e; i++)
        if (src[i] != dst[i]) m[src[i] * n + dst[i]] = m[dst[i] * n + src[i]] = 1;
    ds_edges ed = test_edges(src, dst, e);
    cgnn_err err;
    partition_symgraph ref;
    ASSERT_EQ(partition_symmetrize(&ref, n, &ed, 1, &err), 0);
    int64_t at = 0;
    for (int64_t v = 0; v < n; v++) {
        ASSERT_EQ(ref.xadj[v], at);
        for (int64_t u = 0; u < n; u++)
            if (m[v * n + u]) ASSERT_EQ(ref.adjncy[at++], u); /* sorted, unique, no loop */
    }
    ASSERT_EQ(ref.xadj[n], at);
    ASSERT_EQ(ref.nnz, at);
    const int threads[] = {2, 3, 5};
    for (int t = 0; t < 3; t++) {
        partition_symgraph g;
        ASSERT_EQ(partition_symmetrize(&g, n, &ed, threads[t], &err), 0);
        ASSERT_EQ(g.nnz, ref.nnz);
        ASSERT(memcmp(g.xadj, ref.xadj, (size_t)(n + 1) * sizeof *g.xadj) == 0);
        ASSERT(memcmp(g.adjncy, ref.adjncy, (size_t)ref.nnz * sizeof *g.adjncy) == 0);
        partition_symgraph_free(&g);
    }
    partition_symgraph_free(&ref);
    free(m);
    free(src);
    free(dst);
}

/* ---- random assignment, renumbering ----------------------------------------------------------- */

TEST(random_assign_balanced_and_seeded) {
    const int64_t n = 1001;
    int32_t *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    for (int P = 1; P <= 7; P++) {
        partition_random_assign(a, n, P, 42);
        int64_t count[7] = {0};
        for (int64_t v = 0; v < n; v++) {
            ASSERT(a[v] >= 0 && a[v] < P);
            count[a[v]]++;
        }
        for (int p = 0; p < P; p++) ASSERT(count[p] == n / P || count[p] == n / P + 1);
        partition_random_assign(b, n, P, 42);
        ASSERT(memcmp(a, b, (size_t)n * sizeof *a) == 0);
    }
    partition_random_assign(b, n, 3, 43);
    partition_random_assign(a, n, 3, 42);
    ASSERT(memcmp(a, b, (size_t)n * sizeof *a) != 0);
    free(a);
    free(b);
}

TEST(renumber_sorted_by_part_then_id) {
    const int64_t n = 500;
    const int P = 4;
    int32_t *a = malloc((size_t)n * sizeof *a);
    int64_t map[5], *no = malloc((size_t)n * sizeof *no), *on = malloc((size_t)n * sizeof *on);
    for (int64_t v = 0; v < n; v++) a[v] = (int32_t)((v * 7919 + v / 3) % 3); /* part 3 stays empty */
    partition_renumber(a, n, P, map, no, on);
    ASSERT_EQ(map[0], 0);
    ASSERT_EQ(map[P], n);
    ASSERT_EQ(map[3], map[4]);
    for (int64_t w = 0; w < n; w++) {
        ASSERT_EQ(no[on[w]], w); /* inverse */
        int p = 0;
        while (!(map[p] <= w && w < map[p + 1])) p++;
        ASSERT_EQ(a[on[w]], p); /* owned by its range's part */
        if (w > map[p]) ASSERT(on[w] > on[w - 1]); /* original order within a part */
    }
    /* partbook_owner skips the empty part */
    partbook pb;
    memset(&pb, 0, sizeof pb);
    pb.num_parts = P;
    pb.node_map = map;
    for (int64_t w = 0; w < n; w++) ASSERT_EQ(partbook_owner(&pb, w), a[on[w]]);
    int64_t map2[] = {0, 0, 5, 5, 9}; /* empty parts first and in the middle */
    pb.node_map = map2;
    ASSERT_EQ(partbook_owner(&pb, 0), 1);
    ASSERT_EQ(partbook_owner(&pb, 4), 1);
    ASSERT_EQ(partbook_owner(&pb, 5), 3);
    ASSERT_EQ(partbook_owner(&pb, 8), 3);
    free(a);
    free(no);
    free(on);
}

TEST(world_sizes) {
    cgnn_err err;
    ASSERT_EQ(partbook_part_for_rank(2, 3, 4), 1);
    ASSERT_EQ(partbook_part_for_rank(3, 2, 3), 2);
    ASSERT_EQ(partbook_check_world(2, 4, &err), 0);
    ASSERT_EQ(partbook_check_world(3, 3, &err), 0);
    ASSERT_EQ(partbook_check_world(3, 2, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "3 parts but the job has 2 ranks");
    ASSERT_EQ(partbook_check_world(2, 3, &err), -1);
}

/* ---- Cora, end to end -------------------------------------------------------------------------- */

static int64_t id_at(const ds_edges *e, const void *ids, int64_t i) {
    return e->id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

/* Everything partbook_open gives for one part, against the source dataset src (whose index is
 * whole) and the result r of partition_compute. Returns 0 if it all holds. */
static void check_part(const dataset *src, const csc_graph *whole, const partition_result *r, const partbook *pb,
                       int p) {
    const int64_t N = r->num_nodes;
    ASSERT_EQ(pb->part, p);
    ASSERT_EQ(pb->num_parts, r->num_parts);
    ASSERT_EQ(pb->num_nodes, N);
    ASSERT_EQ(pb->num_edges, r->num_edges);
    ASSERT_EQ(pb->max_in_degree, r->max_in_degree);
    ASSERT_EQ(strcmp(pb->partition_id, r->id), 0);
    for (int q = 0; q <= r->num_parts; q++) ASSERT_EQ(pb->node_map[q], r->node_map[q]);
    ASSERT_EQ(pb->first, r->node_map[p]);
    ASSERT_EQ(pb->n_local, r->node_map[p + 1] - r->node_map[p]);
    ASSERT(memcmp(pb->orig_of_new, r->orig_of_new, (size_t)N * 8) == 0);
    ASSERT(memcmp(pb->new_of_orig, r->new_of_orig, (size_t)N * 8) == 0);
    ASSERT_EQ(pb->ds.partition.present, 1);
    ASSERT_EQ(pb->ds.partition.part, p);
    /* the local index: row i = the whole graph's row of orig_of_local[i], through the maps */
    const csc_graph *g = &pb->local;
    ASSERT_EQ(g->num_nodes, pb->n_local);
    ASSERT_EQ(g->first_node, pb->first);
    ASSERT_EQ(g->num_src_nodes, N);
    ASSERT_EQ(g->num_edges, r->edge_map[p + 1] - r->edge_map[p]);
    for (int64_t i = 0; i < pb->n_local; i++) {
        const int64_t o = pb->orig_of_local[i];
        ASSERT_EQ(o, r->orig_of_new[pb->first + i]);
        ASSERT_EQ(r->assign[o], p);
        ASSERT_EQ(csc_degree(g, i), csc_degree(whole, o));
        for (int64_t k = 0; k < csc_degree(g, i); k++)
            ASSERT_EQ(pb->orig_of_new[csc_index(g, g->indptr[i] + k)], csc_index(whole, whole->indptr[o] + k));
    }
    /* features: the part's rows, the source's dtype */
    ASSERT_EQ(pb->ds.num_features, src->num_features);
    for (int f = 0; f < src->num_features; f++) {
        const ds_feature *a = &src->features[f], *b = &pb->ds.features[f];
        ASSERT_EQ(b->array.dtype, a->array.dtype);
        ASSERT_EQ(b->rows, pb->n_local);
        ASSERT_EQ(b->dim, a->dim);
        const size_t row = (size_t)a->dim * npy_dtype_size(a->array.dtype);
        for (int64_t i = 0; i < pb->n_local; i++)
            ASSERT(memcmp((const char *)b->array.data + (size_t)i * row,
                          (const char *)a->array.data + (size_t)pb->orig_of_local[i] * row, row) == 0);
    }
    /* splits: the owned rows in order (part) and all rows (global), seeds mapped */
    for (int t = 0; t < src->num_tasks; t++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *a = &src->tasks[t].splits[s], *b = &pb->ds.tasks[t].splits[s],
                           *gl = &pb->global.tasks[t].splits[s];
            ASSERT_EQ(b->present, a->present);
            ASSERT_EQ(gl->present, a->present);
            if (!a->present) continue;
            ASSERT_EQ(gl->num_items, a->num_items);
            int64_t m = 0;
            for (int64_t i = 0; i < a->num_items; i++) {
                const int w = a->seed_width;
                for (int c = 0; c < w; c++) ASSERT_EQ(gl->seeds[i * w + c], r->new_of_orig[a->seeds[i * w + c]]);
                if (a->labels) ASSERT_EQ(gl->labels[i], a->labels[i]);
                if (r->assign[a->seeds[i * w]] != p) continue;
                ASSERT(m < b->num_items);
                for (int c = 0; c < w; c++) ASSERT_EQ(b->seeds[m * w + c], r->new_of_orig[a->seeds[i * w + c]]);
                if (a->labels) ASSERT_EQ(b->labels[m], a->labels[i]);
                m++;
            }
            ASSERT_EQ(m, b->num_items);
        }
}

static void partition_cora(partition_method method, int P, int threads, const char *out, partition_result *r,
                           dataset *ds) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data/cora", test_source_dir());
    cgnn_err err = {0};
    if (dataset_open(ds, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    partition_params p = {P, method, 7, threads};
    if (partition_compute(r, ds, &p, &err) != 0) TEST_FAIL_("%s", err.msg);
    if (partition_write(out, ds, r, threads, &err) != 0) TEST_FAIL_("%s", err.msg);
}

TEST(cora_parts_read_back) {
    char *tmp = test_tmpdir();
    for (int method = 0; method < PARTITION_METHOD_COUNT; method++)
        for (int P = 2; P <= 3; P++) {
            char out[4200], out1[4300];
            snprintf(out, sizeof out, "%s/%s-%d", tmp, partition_method_name((partition_method)method), P);
            snprintf(out1, sizeof out1, "%s-t1", out);
            dataset ds;
            partition_result r;
            partition_cora((partition_method)method, P, 3, out, &r, &ds);
            if (test_cur_failed_) break;
            csc_graph whole;
            cgnn_err err = {0};
            ASSERT_EQ(csc_build(&whole, ds.node_types[0].num_nodes, &ds.edge_types[0].edges, 2, &err), 0);
            /* edge cut and balance as promised */
            int64_t cut = 0;
            const ds_edges *e = &ds.edge_types[0].edges;
            for (int64_t i = 0; i < e->num_edges; i++) cut += r.assign[id_at(e, e->src, i)] != r.assign[id_at(e, e->dst, i)];
            ASSERT_EQ(cut, r.edge_cut);
            int64_t maxn = 0;
            for (int q = 0; q < P; q++)
                if (r.node_map[q + 1] - r.node_map[q] > maxn) maxn = r.node_map[q + 1] - r.node_map[q];
            const double node_balance = (double)maxn * P / (double)r.num_nodes;
            fprintf(stderr, "  %s P=%d: edge cut %lld (%.1f%%), node balance %.4f\n",
                    partition_method_name((partition_method)method), P, (long long)cut,
                    100.0 * (double)cut / (double)e->num_edges, node_balance);
            ASSERT(node_balance <= 1.05); /* METIS within 5%; random within one node */
            if (method == PARTITION_METIS) ASSERT(cut < e->num_edges / 4); /* far below random's ~(P-1)/P */
            for (int q = 0; q < P; q++) {
                partbook pb;
                if (partbook_open(&pb, out, q, 2, &err) != 0) TEST_FAIL_("part %d: %s", q, err.msg);
                check_part(&ds, &whole, &r, &pb, q);
                partbook_close(&pb);
                if (test_cur_failed_) break;
            }
            /* the same bytes with one thread */
            partition_result r1;
            dataset ds1;
            partition_cora((partition_method)method, P, 1, out1, &r1, &ds1);
            int files = 0;
            ASSERT(same_tree(out, out1, &files));
            ASSERT(same_tree(out1, out, &files));
            ASSERT_EQ(files, 3 + P * 9 + 8); /* json, 2 maps; per part: edges, feat, meta, 3x2 splits; global: edges, meta, 3x2 */
            ASSERT_EQ(strcmp(r.id, r1.id), 0);
            partition_free(&r1);
            dataset_close(&ds1);
            csc_free(&whole);
            partition_free(&r);
            dataset_close(&ds);
        }
    rm_tree(tmp);
    free(tmp);
}

/* ---- the reader's refusals ------------------------------------------------------------------------ */

/* The whole file as a NUL-terminated string (caller frees). */
static char *slurp_str(const char *path) {
    size_t n;
    char *b = (char *)test_slurp(path, &n);
    if (b) b[n] = '\0';
    return b;
}

static int open_ok(const char *path, int part) {
    partbook pb;
    cgnn_err err = {0};
    int rc = partbook_open(&pb, path, part, 2, &err);
    if (rc != 0) fprintf(stderr, "  %s part %d: %s\n", path, part, err.msg);
    else partbook_close(&pb);
    return rc == 0;
}

/* Replaces the first `from` in the file with `to`. */
static int edit_file(const char *path, const char *from, const char *to) {
    size_t n;
    char *b = (char *)test_slurp(path, &n);
    if (!b) return -1;
    b[n] = '\0';
    char *at = strstr(b, from);
    if (!at) {
        free(b);
        return -1;
    }
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, (size_t)(at - b), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    fclose(f);
    free(b);
    return 0;
}

static int open_fails(const char *path, int part, const char *want) {
    partbook pb;
    cgnn_err err = {0};
    memset(&pb, 0xab, sizeof pb);
    int rc = partbook_open(&pb, path, part, 2, &err);
    int ok = rc == -1 && err.code == CGNN_ERR_INPUT && strstr(err.msg, want) && pb.node_map == NULL &&
             pb.ds.features == NULL;
    if (!ok) fprintf(stderr, "  want '%s', got rc %d code %d '%s'\n", want, rc, err.code, err.msg);
    if (rc == 0) partbook_close(&pb);
    return ok;
}

TEST(reader_refuses) {
    char *tmp = test_tmpdir();
    char a[4200], b[4200], json[4300], path[4400], path2[4400];
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    dataset ds, ds2;
    partition_result r, r2;
    partition_cora(PARTITION_RANDOM, 2, 2, a, &r, &ds);
    partition_cora(PARTITION_METIS, 2, 2, b, &r2, &ds2);
    snprintf(json, sizeof json, "%s/cora.json", a);
    ASSERT(open_fails(a, 2, "part 2 out of range [0, 2)"));
    ASSERT(open_fails(a, -1, "part -1 out of range"));
    /* a part of another run: named with both files */
    snprintf(path, sizeof path, "%s/part1/metadata.yaml", a);
    snprintf(path2, sizeof path2, "%s/part1/metadata.yaml", b);
    char *keep = slurp_str(path);
    ASSERT_EQ(edit_file(path, r.id, r2.id), 0);
    char want[9000];
    snprintf(want, sizeof want, "%s: partition id %s differs from %s in %s", path, r2.id, r.id, json);
    ASSERT(open_fails(a, 1, want));
    ASSERT(open_fails(json, 1, "written by another run"));
    {
        partbook pb;
        cgnn_err err = {0};
        ASSERT_EQ(partbook_read_json(&pb, a, &err), 0);
        ASSERT_EQ(partbook_verify(&pb, 2, &err), -1);
        ASSERT_STR_CONTAINS(err.msg, want);
        partbook_close(&pb);
    }
    ASSERT_EQ(test_write_file(a, "part1/metadata.yaml", keep, strlen(keep)), 0);
    free(keep);
    ASSERT(open_ok(a, 0) && open_ok(a, 1)); /* restored */
    /* the global splits of another run */
    snprintf(path, sizeof path, "%s/global/metadata.yaml", a);
    snprintf(path2, sizeof path2, "%s/global/metadata.yaml", b);
    keep = slurp_str(path);
    ASSERT_EQ(copy_file(path2, path), 0);
    ASSERT(open_fails(a, 0, "global/metadata.yaml: partition id"));
    ASSERT_EQ(test_write_file(a, "global/metadata.yaml", keep, strlen(keep)), 0);
    free(keep);
    /* maps that are not inverse permutations (two entries of new_ids swapped) */
    snprintf(path, sizeof path, "%s/new_ids.npy", a);
    size_t n;
    unsigned char *ids = test_slurp(path, &n);
    ASSERT(ids != NULL);
    int64_t *body = (int64_t *)(ids + n - (size_t)r.num_nodes * 8), t = body[3];
    body[3] = body[1000];
    body[1000] = t;
    ASSERT_EQ(test_write_file(a, "new_ids.npy", ids, n), 0);
    ASSERT(open_fails(a, 0, "not inverse permutations"));
    body[1000] = body[3];
    body[3] = t;
    ASSERT_EQ(test_write_file(a, "new_ids.npy", ids, n), 0);
    free(ids);
    /* the JSON: each edit breaks one rule */
    static const struct {
        const char *from, *to, *want;
    } EDITS[] = {
        {"\"num_parts\": 2", "\"num_parts\": 3", "\"node_map\".\"_N\": expected an array of 3"},
        {"\"num_parts\": 2", "\"num_parts\": 0", "\"num_parts\": 0 is out of range"},
        {"\"num_parts\": 2", "\"num_parts\": \"2\"", "\"num_parts\": expected a number, got a string"},
        {"[[0, ", "[[1, ", "does not continue the ranges"},
        {"\"part_dir\": \"part1\"", "\"part_dir\": \"../b/part1\"", "must be a path relative to the partition's directory"},
        {"\"part_dir\": \"part1\"", "\"part_dir\": \"/tmp\"", "must be a path relative"},
        {"\"orig_ids\": \"orig_ids.npy\"", "\"orig_ids\": \"nope.npy\"", "nope.npy"},
        {"\"partition_id\": \"", "\"partition_id\": \"Z", "lowercase hex digits"},
        {"\"halo_hops\": 0", "\"halo_hops\": 1", "only 0 is supported"},
        {"\"graph_name\"", "\"num_parts\": 2, \"graph_name\"", "duplicate key \"num_parts\""},
        {"\"part_method\": \"random\"", "\"part_method\": \"spectral\"", "expected \"metis\" or \"random\""},
        {"{\n", "[\n", "invalid JSON"},
        {"\"part_nodes\": [", "\"part_nodes\": [1, ", "expected 2 entries"},
    };
    for (size_t k = 0; k < sizeof EDITS / sizeof EDITS[0]; k++) {
        keep = slurp_str(json);
        ASSERT_EQ(edit_file(json, EDITS[k].from, EDITS[k].to), 0);
        if (!open_fails(a, 0, EDITS[k].want)) TEST_FAIL_("JSON edit %zu ('%s' -> '%s')", k, EDITS[k].from, EDITS[k].to);
        ASSERT_EQ(test_write_file(a, "cora.json", keep, strlen(keep)), 0);
        free(keep);
    }
    /* a directory with two JSON files, or none */
    snprintf(path, sizeof path, "%s/other.json", a);
    ASSERT_EQ(copy_file(json, path), 0);
    ASSERT(open_fails(a, 0, "several .json files"));
    ASSERT(open_ok(json, 0)); /* naming the JSON itself works */
    unlink(path);
    snprintf(path, sizeof path, "%s/part0", a);
    ASSERT(open_fails(path, 0, "no partition JSON"));
    partition_free(&r);
    partition_free(&r2);
    dataset_close(&ds);
    dataset_close(&ds2);
    rm_tree(tmp);
    free(tmp);
}

int main(void) {
    RUN(symmetrize_tiny);
    RUN(symmetrize_matches_reference);
    RUN(random_assign_balanced_and_seeded);
    RUN(renumber_sorted_by_part_then_id);
    RUN(world_sizes);
    RUN(cora_parts_read_back);
    RUN(reader_refuses);
    return test_summary();
}
