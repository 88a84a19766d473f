/* fuzz_partbook.c — libFuzzer target: the partition book reader (graph/partbook.h) on an
 * arbitrary partition JSON.
 *
 * A small partitioned graph lives in the private directory: a 12-node dataset (20 edges, a
 * float32 feature, a node-classification task) cut into 2 parts (random, seed 1) by the real
 * partition_compute + partition_write, written once. The input replaces its JSON
 * (OUT/tiny.json); then partbook_read_json, partbook_verify and partbook_open of parts 0 and 1
 * must each succeed or fail with an input error naming a file of OUT. What a successful read
 * promises is checked: node_map / edge_map contiguous from 0 to N / E, and for an opened part the
 * local index (rows = the part's nodes, ids in range, rows matching the part's edge count), the
 * maps (inverse), owned features and seeds, partbook_owner.
 *
 * A typed partitioned graph lives beside it (OUT-typed: node types a (9 nodes, float32 features)
 * and b (7 nodes, featureless), edge types a:r:b and b:s:a, an NC task on a; 2 random parts): the
 * same input also replaces its JSON (OUT-typed/ttiny.json) and goes through the same calls, with
 * the typed promises checked (per-type ranges contiguous, each edge type's local index over the
 * part's rows of its dst type, per-type maps inverse, owned per-type features and seeds).
 *
 * Seeds (fuzz/corpus/partbook/) are the fixtures' own JSON and edits of them; FUZZ_PARTBOOK_DUMP=path
 * makes the target copy the fixtures' JSON there (path and path.typed: how the seeds were made).
 */
#include "fuzz_util.h"
#include "graph/partbook.h"
#include "graph/partition.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N 12
#define E 20

static char out_dir[4096], tout_dir[4096];

#define TA 9  /* typed fixture: nodes of type a */
#define TB 7  /* ... of type b */
#define TE 14 /* edges of each edge type */

/* The typed fixture (see the top), written once into tout_dir. */
static void setup_typed(void) {
    char src[4096], path[4096];
    fuzz_path(src, "tsrc");
    fuzz_path(tout_dir, "tout");
    if (mkdir(src, 0700) != 0) abort();
    int64_t ab[2][TE], ba[2][TE];
    for (int e = 0; e < TE; e++) {
        ab[0][e] = (e * 5 + 2) % TA, ab[1][e] = (e * 3 + 1) % TB;
        ba[0][e] = (e * 2 + 3) % TB, ba[1][e] = (e * 7 + 4) % TA;
    }
    float feat[TA * 2];
    for (int i = 0; i < TA * 2; i++) feat[i] = (float)i;
    int64_t tr[4] = {0, 3, 5, 8}, trl[4] = {0, 1, 1, 0};
    fuzz_write_npy("tsrc/ab.npy", NPY_DTYPE_INT64, 2, 2, TE, ab);
    fuzz_write_npy("tsrc/ba.npy", NPY_DTYPE_INT64, 2, 2, TE, ba);
    fuzz_write_npy("tsrc/feat.npy", NPY_DTYPE_FLOAT32, 2, TA, 2, feat);
    fuzz_write_npy("tsrc/tr.npy", NPY_DTYPE_INT64, 1, 4, 1, tr);
    fuzz_write_npy("tsrc/trl.npy", NPY_DTYPE_INT64, 1, 4, 1, trl);
    static const char meta[] =
        "dataset_name: ttiny\ngraph:\n  nodes: [{type: a, num: 9}, {type: b, num: 7}]\n"
        "  edges: [{type: 'a:r:b', format: numpy, path: ab.npy}, {type: 'b:s:a', format: numpy, path: ba.npy}]\n"
        "feature_data:\n  - {domain: node, type: a, name: feat, format: numpy, path: feat.npy}\n"
        "tasks:\n  - name: nc\n    num_classes: 2\n"
        "    train_set: [{type: a, data: [{name: seeds, format: numpy, path: tr.npy}, {name: labels, format: numpy, "
        "path: trl.npy}]}]\n";
    fuzz_write("tsrc/metadata.yaml", meta, sizeof meta - 1, path);
    dataset ds;
    partition_result r;
    cgnn_err err = {0};
    partition_params p = {2, PARTITION_RANDOM, 1, 1};
    if (dataset_open(&ds, src, &err) != 0 || partition_compute(&r, &ds, &p, &err) != 0 ||
        partition_write(tout_dir, &ds, &r, 1, &err) != 0) {
        fprintf(stderr, "fuzz: typed fixture: %s\n", err.msg);
        abort();
    }
    partition_free(&r);
    dataset_close(&ds);
}

static void setup(void) {
    log_level = 0;
    char src[4096], path[4096];
    fuzz_path(src, "src");
    fuzz_path(out_dir, "out");
    if (mkdir(src, 0700) != 0) abort();
    int64_t edges[2][E];
    for (int e = 0; e < E; e++) edges[0][e] = (e * 7 + 3) % N, edges[1][e] = (e * 5 + 1) % N;
    float feat[N * 3];
    for (int i = 0; i < N * 3; i++) feat[i] = (float)i;
    int64_t tr[6] = {0, 2, 4, 6, 8, 10}, trl[6] = {0, 1, 0, 1, 0, 1}, va[3] = {1, 5, 9}, val[3] = {1, 0, 1};
    fuzz_write_npy("src/edges.npy", NPY_DTYPE_INT64, 2, 2, E, edges);
    fuzz_write_npy("src/feat.npy", NPY_DTYPE_FLOAT32, 2, N, 3, feat);
    fuzz_write_npy("src/tr.npy", NPY_DTYPE_INT64, 1, 6, 1, tr);
    fuzz_write_npy("src/trl.npy", NPY_DTYPE_INT64, 1, 6, 1, trl);
    fuzz_write_npy("src/va.npy", NPY_DTYPE_INT64, 1, 3, 1, va);
    fuzz_write_npy("src/val.npy", NPY_DTYPE_INT64, 1, 3, 1, val);
    static const char meta[] =
        "dataset_name: tiny\ngraph:\n  nodes: [{num: 12}]\n  edges: [{format: numpy, path: edges.npy}]\n"
        "feature_data:\n  - {domain: node, name: feat, format: numpy, path: feat.npy}\n"
        "tasks:\n  - name: nc\n    num_classes: 2\n"
        "    train_set: [{data: [{name: seeds, format: numpy, path: tr.npy}, {name: labels, format: numpy, path: trl.npy}]}]\n"
        "    validation_set: [{data: [{name: seeds, format: numpy, path: va.npy}, {name: labels, format: numpy, path: val.npy}]}]\n";
    fuzz_write("src/metadata.yaml", meta, sizeof meta - 1, path);
    dataset ds;
    partition_result r;
    cgnn_err err = {0};
    partition_params p = {2, PARTITION_RANDOM, 1, 1};
    if (dataset_open(&ds, src, &err) != 0 || partition_compute(&r, &ds, &p, &err) != 0 ||
        partition_write(out_dir, &ds, &r, 1, &err) != 0) {
        fprintf(stderr, "fuzz: fixture: %s\n", err.msg);
        abort();
    }
    partition_free(&r);
    dataset_close(&ds);
    setup_typed();
    const char *dump = getenv("FUZZ_PARTBOOK_DUMP");
    if (dump) {
        char cmd[8400];
        snprintf(cmd, sizeof cmd, "cp '%s/tiny.json' '%s' && cp '%s/ttiny.json' '%s.typed'", out_dir, dump, tout_dir,
                 dump);
        if (system(cmd) != 0) abort();
    }
}

static void check_ranges(const partbook *pb) {
    FUZZ_ASSERT(pb->num_parts >= 1 && pb->node_map[0] == 0 && pb->edge_map[0] == 0);
    FUZZ_ASSERT(pb->node_map[pb->num_parts] == pb->num_nodes && pb->edge_map[pb->num_parts] == pb->num_edges);
    for (int p = 0; p < pb->num_parts; p++)
        FUZZ_ASSERT(pb->node_map[p + 1] >= pb->node_map[p] && pb->edge_map[p + 1] >= pb->edge_map[p]);
}

static void check_part(const partbook *pb, int part) {
    check_ranges(pb);
    const int64_t n = pb->num_nodes;
    FUZZ_ASSERT(pb->part == part && pb->first == pb->node_map[part]);
    FUZZ_ASSERT(pb->n_local == pb->node_map[part + 1] - pb->first);
    const csc_graph *g = &pb->local;
    FUZZ_ASSERT(g->num_nodes == pb->n_local && g->first_node == pb->first && g->num_src_nodes == n);
    FUZZ_ASSERT(g->num_edges == pb->edge_map[part + 1] - pb->edge_map[part] && g->indptr[0] == 0 &&
                g->indptr[g->num_nodes] == g->num_edges);
    for (int64_t i = 0; i < g->num_nodes; i++) {
        FUZZ_ASSERT(g->indptr[i + 1] >= g->indptr[i] && csc_degree(g, i) <= pb->max_in_degree);
        FUZZ_ASSERT(partbook_owner(pb, pb->first + i) == part);
        FUZZ_ASSERT(pb->orig_of_local[i] >= 0 && pb->orig_of_local[i] < n);
    }
    for (int64_t k = 0; k < g->num_edges; k++) FUZZ_ASSERT(csc_index(g, k) >= 0 && csc_index(g, k) < n);
    for (int64_t v = 0; v < n; v++) FUZZ_ASSERT(pb->orig_of_new[pb->new_of_orig[v]] == v);
    for (int f = 0; f < pb->ds.num_features; f++)
        FUZZ_ASSERT(pb->ds.features[f].domain != DS_DOMAIN_NODE || pb->ds.features[f].rows == pb->n_local);
    for (int t = 0; t < pb->ds.num_tasks; t++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &pb->ds.tasks[t].splits[s];
            for (int64_t i = 0; sp->present && i < sp->num_items; i++)
                FUZZ_ASSERT(partbook_owner(pb, sp->seeds[i * sp->seed_width]) == part);
        }
}

/* What an opened typed part promises (partbook.h). */
static void check_typed_part(const partbook *pb, int part) {
    check_ranges(pb);
    const int P = pb->num_parts, T = pb->num_node_types, K = pb->num_edge_types;
    FUZZ_ASSERT(pb->typed && pb->part == part && pb->ds.typed && pb->ds.num_node_types == T && pb->ds.num_edge_types == K);
    for (int t = 0; t < T; t++) {
        const int64_t *tm = pb->type_map + (size_t)t * (size_t)(P + 1), n = pb->type_nodes[t];
        FUZZ_ASSERT(tm[0] == 0 && tm[P] == n);
        for (int p = 0; p < P; p++) FUZZ_ASSERT(tm[p + 1] >= tm[p]);
        for (int64_t v = 0; v < n; v++) {
            FUZZ_ASSERT(pb->type_new_of_orig[t][v] >= 0 && pb->type_new_of_orig[t][v] < n);
            FUZZ_ASSERT(pb->type_orig_of_new[t][pb->type_new_of_orig[t][v]] == v);
        }
        FUZZ_ASSERT(pb->ds.node_types[t].own_start == tm[part] && pb->ds.node_types[t].own_end == tm[part + 1]);
        for (int64_t v = tm[part]; v < tm[part + 1]; v++) FUZZ_ASSERT(partbook_type_owner(pb, t, v) == part);
    }
    for (int k = 0; k < K; k++) {
        const csc_graph *g = &pb->type_local[k];
        const int d = pb->etype_dst[k], s = pb->etype_src[k];
        const int64_t *tm = pb->type_map + (size_t)d * (size_t)(P + 1), *em = pb->etype_map + (size_t)k * (size_t)(P + 1);
        FUZZ_ASSERT(g->first_node == tm[part] && g->num_nodes == tm[part + 1] - tm[part] &&
                    g->num_src_nodes == pb->type_nodes[s] && g->num_edges == em[part + 1] - em[part]);
        FUZZ_ASSERT(g->indptr[0] == 0 && g->indptr[g->num_nodes] == g->num_edges);
        for (int64_t i = 0; i < g->num_nodes; i++)
            FUZZ_ASSERT(g->indptr[i + 1] >= g->indptr[i] && csc_degree(g, i) <= pb->etype_max_in_degree[k]);
        for (int64_t j = 0; j < g->num_edges; j++) FUZZ_ASSERT(csc_index(g, j) >= 0 && csc_index(g, j) < pb->type_nodes[s]);
    }
    for (int f = 0; f < pb->ds.num_features; f++) {
        const ds_feature *ft = &pb->ds.features[f];
        const ds_node_type *nt = &pb->ds.node_types[ft->type];
        FUZZ_ASSERT(ft->domain != DS_DOMAIN_NODE || ft->rows == nt->own_end - nt->own_start);
    }
}

/* partbook_read_json, partbook_verify and partbook_open of both parts on the partition in dir. */
static void exercise(const char *dir) {
    partbook pb;
    cgnn_err err = {0};
    int rc = partbook_read_json(&pb, dir, &err);
    fuzz_check(rc, &err, dir);
    if (rc == 0) {
        check_ranges(&pb);
        err = (cgnn_err){0};
        fuzz_check(partbook_verify(&pb, 1, &err), &err, dir);
        partbook_close(&pb);
    }
    for (int part = 0; part < 2; part++) {
        err = (cgnn_err){0};
        rc = partbook_open(&pb, dir, part, 1, &err);
        fuzz_check(rc, &err, dir);
        if (rc == 0) {
            if (pb.typed) check_typed_part(&pb, part);
            else check_part(&pb, part);
            partbook_close(&pb);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    char path[4096];
    fuzz_write("out/tiny.json", data, size, path);
    exercise(out_dir);
    fuzz_write("tout/ttiny.json", data, size, path);
    exercise(tout_dir);
    return 0;
}
