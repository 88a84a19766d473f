/* fuzz_metadata.c — libFuzzer target: the GraphBolt dataset reader (dataset_open) on an
 * arbitrary metadata.yaml.
 *
 * Input: the bytes of metadata.yaml. It is written into the private directory, which also
 * holds small valid files the metadata can reference (written once, see write_fixture): 10
 * nodes, edges as int64 / int32 / Fortran-order .npy and as CSV, node and edge features,
 * node-classification seeds and labels, link-prediction pairs, labels and indexes, the same
 * as `format: torch` files (one tensor in torch.save's zip format: feat.pt, seeds.pt,
 * labels.pt, lp-seeds.pt, negs.pt (3, 2) for GraphBolt's older negative_dsts). The dataset must
 * open or fail with an input error naming a file of the directory; an opened
 * dataset must satisfy what dataset.h promises (ids in range, shapes consistent).
 */
#include "fuzz_util.h"
#include "io/dataset.h"
#include "io/torch_save.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N 10 /* nodes */
#define E 6  /* edges */

/* A 2-D array the way np.save writes a transposed one: fortran_order True, column-major. */
static void write_fortran_npy(const char *name, const char *descr, int64_t rows, int64_t cols,
                              const void *data, size_t elem) {
    char dict[160];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': True, 'shape': (%lld, %lld), }",
                     descr, (long long)rows, (long long)cols);
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64, bytes = (size_t)(rows * cols) * elem;
    unsigned char *buf = calloc(1, total + bytes);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)((total - 10) & 0xff);
    buf[9] = (unsigned char)((total - 10) >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    memcpy(buf + total, data, bytes);
    char path[4096];
    fuzz_write(name, buf, total + bytes, path);
    free(buf);
}

/* name = torch.save(tensor) of a C-order tensor: storage "LongStorage" / "FloatStorage" (esize
 * bytes an element), ndim <= 2 dims each < 256: the pickle torch writes, without its memo. */
static void write_torch(const char *name, const char *storage, int esize, int ndim, const int64_t *shape,
                        const void *data) {
    unsigned char pkl[256];
    size_t n = 0;
#define PUT(s, len) (memcpy(pkl + n, s, len), n += (len))
#define STR(s) (pkl[n++] = 'X', pkl[n++] = (unsigned char)strlen(s), pkl[n++] = 0, pkl[n++] = 0, pkl[n++] = 0, \
                PUT(s, strlen(s)))
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) numel *= shape[d];
    PUT("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n((", 37);
    STR("storage");
    n += (size_t)snprintf((char *)pkl + n, sizeof pkl - n, "ctorch\n%s\n", storage);
    STR("0");
    STR("cpu");
    pkl[n++] = 'K', pkl[n++] = (unsigned char)numel, pkl[n++] = 't', pkl[n++] = 'Q', pkl[n++] = 'K', pkl[n++] = 0;
    for (int d = 0; d < ndim; d++) pkl[n++] = 'K', pkl[n++] = (unsigned char)shape[d];
    pkl[n++] = (unsigned char)(0x84 + ndim);
    for (int d = 0; d < ndim; d++) pkl[n++] = 'K', pkl[n++] = (unsigned char)(d + 1 < ndim ? shape[d + 1] : 1);
    pkl[n++] = (unsigned char)(0x84 + ndim);
    PUT("\x89" "ccollections\nOrderedDict\n)RtR.", 31);
#undef STR
#undef PUT
    char recs[4][64];
    snprintf(recs[0], sizeof recs[0], "t/data.pkl");
    snprintf(recs[1], sizeof recs[1], "t/data/0");
    snprintf(recs[2], sizeof recs[2], "t/version");
    snprintf(recs[3], sizeof recs[3], "t/byteorder");
    const ts_record r[4] = {{recs[0], pkl, (int64_t)n}, {recs[1], data, numel * esize}, {recs[2], "3\n", 2},
                            {recs[3], "little", 6}};
    char path[4096];
    fuzz_path(path, name);
    durable_file f;
    cgnn_err err = {0};
    if (durable_open(&f, path, &err) != 0 || torch_save_write_zip(&f, r, 4, 0, &err) != 0 ||
        durable_commit(&f, &err) != 0) {
        fprintf(stderr, "fuzz_metadata: cannot write %s: %s\n", path, err.msg);
        abort();
    }
    npy_array check; /* the fixture is one the reader accepts */
    if (torch_save_read_npy(&check, path, &err) != 0) {
        fprintf(stderr, "fuzz_metadata: %s\n", err.msg);
        abort();
    }
    npy_close(&check);
}

static void write_fixture(void) {
    log_level = 0; /* no notes (Fortran-order copy): one per input would flood the log */
    int64_t edges[2][E] = {{0, 1, 2, 3, 4, 5}, {1, 2, 3, 4, 5, 9}};
    int32_t edges32[2][E] = {{0, 1, 2, 3, 4, 5}, {1, 2, 3, 4, 5, 9}};
    int64_t edges_f[2 * E]; /* (2, E) column-major: element (i, e) at [i + 2 * e] */
    for (int e = 0; e < E; e++) edges_f[2 * e] = edges[0][e], edges_f[2 * e + 1] = edges[1][e];
    fuzz_write_npy("edges.npy", NPY_DTYPE_INT64, 2, 2, E, edges);
    fuzz_write_npy("edges32.npy", NPY_DTYPE_INT32, 2, 2, E, edges32);
    write_fortran_npy("edges-f.npy", "<i8", 2, E, edges_f, 8);
    char path[4096];
    const char csv[] = "0,1\n1,2\n2,3\n3,4\n4,5\n5,9\n";
    fuzz_write("edges.csv", csv, sizeof csv - 1, path);
    float feat[N * 4], efeat[E * 2];
    for (int i = 0; i < N * 4; i++) feat[i] = (float)i * 0.25f;
    for (int i = 0; i < E * 2; i++) efeat[i] = (float)i;
    fuzz_write_npy("feat.npy", NPY_DTYPE_FLOAT32, 2, N, 4, feat);
    write_fortran_npy("feat-f.npy", "<f4", N, 4, feat, 4);
    uint8_t u8[N] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    fuzz_write_npy("feat-u8.npy", NPY_DTYPE_UINT8, 1, N, 1, u8);
    fuzz_write_npy("edge-feat.npy", NPY_DTYPE_FLOAT32, 2, E, 2, efeat);
    int64_t tr_s[4] = {0, 1, 2, 3}, tr_l[4] = {0, 1, 2, 0};
    int32_t va_s[3] = {4, 5, 6}, va_l[3] = {1, 1, 2};
    fuzz_write_npy("train-seeds.npy", NPY_DTYPE_INT64, 1, 4, 1, tr_s);
    fuzz_write_npy("train-labels.npy", NPY_DTYPE_INT64, 1, 4, 1, tr_l);
    fuzz_write_npy("valid-seeds.npy", NPY_DTYPE_INT32, 1, 3, 1, va_s);
    fuzz_write_npy("valid-labels.npy", NPY_DTYPE_INT32, 1, 3, 1, va_l);
    int64_t lp_s[3][2] = {{0, 1}, {2, 3}, {4, 9}}, lp_l[3] = {1, 0, 1}, lp_i[3] = {0, 0, 1};
    fuzz_write_npy("lp-seeds.npy", NPY_DTYPE_INT64, 2, 3, 2, lp_s);
    fuzz_write_npy("lp-labels.npy", NPY_DTYPE_INT64, 1, 3, 1, lp_l);
    fuzz_write_npy("lp-indexes.npy", NPY_DTYPE_INT64, 1, 3, 1, lp_i);
    const int64_t s_feat[2] = {N, 4}, s_seeds[1] = {4}, s_lp[2] = {3, 2};
    int64_t negs[3][2] = {{5, 6}, {7, 8}, {9, 0}};
    write_torch("feat.pt", "FloatStorage", 4, 2, s_feat, feat);
    write_torch("seeds.pt", "LongStorage", 8, 1, s_seeds, tr_s);
    write_torch("labels.pt", "LongStorage", 8, 1, s_seeds, tr_l);
    write_torch("lp-seeds.pt", "LongStorage", 8, 2, s_lp, lp_s);
    write_torch("negs.pt", "LongStorage", 8, 2, s_lp, negs);
}

static int64_t id_at(const ds_edges *e, const void *ids, int64_t i) {
    return e->id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

/* What a successful dataset_open promises its callers. */
static void check_dataset(const dataset *ds) {
    /* untyped: one node type and one edge type; typed: per-type ids (see dataset.h) */
    FUZZ_ASSERT(ds->num_node_types >= 1 && ds->num_edge_types >= 1);
    FUZZ_ASSERT(ds->typed || (ds->num_node_types == 1 && ds->num_edge_types == 1));
    int64_t total = 0;
    for (int t = 0; t < ds->num_node_types; t++) {
        const ds_node_type *nt = &ds->node_types[t];
        FUZZ_ASSERT(nt->num_nodes > 0 && dataset_node_type_offset(ds, t) == total);
        /* owned ids: the whole type, or a part's range of it */
        FUZZ_ASSERT(0 <= nt->own_start && nt->own_start <= nt->own_end && nt->own_end <= nt->num_nodes);
        FUZZ_ASSERT(ds->partition.present || (nt->own_start == 0 && nt->own_end == nt->num_nodes));
        FUZZ_ASSERT(dataset_find_node_type(ds, ds->node_types[t].name) == t);
        total += ds->node_types[t].num_nodes;
    }
    FUZZ_ASSERT(dataset_total_nodes(ds) == total);
    for (int et = 0; et < ds->num_edge_types; et++) {
        const ds_edge_type *ty = &ds->edge_types[et];
        FUZZ_ASSERT(dataset_find_edge_type(ds, ty->name) == et);
        FUZZ_ASSERT(ty->src_type >= 0 && ty->src_type < ds->num_node_types);
        FUZZ_ASSERT(ty->dst_type >= 0 && ty->dst_type < ds->num_node_types);
        const int64_t ns = ds->node_types[ty->src_type].num_nodes, nd = ds->node_types[ty->dst_type].num_nodes;
        const ds_edges *e = &ty->edges;
        FUZZ_ASSERT(e->num_edges >= 0);
        for (int64_t i = 0; i < e->num_edges; i++) {
            int64_t s = id_at(e, e->src, i), d = id_at(e, e->dst, i);
            FUZZ_ASSERT(s >= 0 && s < ns && d >= 0 && d < nd);
            FUZZ_ASSERT(d >= ds->node_types[ty->dst_type].own_start && d < ds->node_types[ty->dst_type].own_end);
        }
    }
    for (int f = 0; f < ds->num_features; f++) {
        const ds_feature *ft = &ds->features[f];
        /* a part (`partition:` key) holds features of its own node range only */
        FUZZ_ASSERT(ft->rows == (ft->domain == DS_DOMAIN_EDGE
                                     ? ds->edge_types[ft->type].edges.num_edges
                                     : ds->node_types[ft->type].own_end - ds->node_types[ft->type].own_start));
        FUZZ_ASSERT(ds->typed || ft->domain == DS_DOMAIN_EDGE || ft->rows == dataset_owned_nodes(ds));
        FUZZ_ASSERT(ft->dim >= 0 && ft->array.data != NULL && !ft->array.fortran_order);
        FUZZ_ASSERT(ft->array.count == ft->rows * ft->dim);
        FUZZ_ASSERT(dataset_find_feature(ds, ft->domain, ft->type, ft->name) == ft);
        const unsigned char *p = ft->array.data;
        unsigned sum = 0;
        for (size_t b = 0; b < (size_t)ft->array.count * npy_dtype_size(ft->array.dtype); b++) sum += p[b];
        volatile unsigned sink = sum;
        (void)sink;
    }
    for (int t = 0; t < ds->num_tasks; t++) {
        const ds_task *tk = &ds->tasks[t];
        FUZZ_ASSERT(dataset_find_task(ds, tk->name) == tk);
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &tk->splits[s];
            if (!sp->present) continue;
            FUZZ_ASSERT(sp->seed_width == 1 || sp->seed_width == 2);
            /* the node type of each seed column: NC the task's node type, LP its edge type's ends */
            const int lp = sp->seed_width == 2 && ds->typed;
            const int col[2] = {lp ? ds->edge_types[tk->type].src_type : tk->type,
                                lp ? ds->edge_types[tk->type].dst_type : tk->type};
            for (int64_t i = 0; i < sp->num_items * sp->seed_width; i++)
                FUZZ_ASSERT(sp->seeds[i] >= 0 && sp->seeds[i] < ds->node_types[col[i % sp->seed_width]].num_nodes);
            for (int64_t i = 0; ds->partition.present && i < sp->num_items; i++) {
                const int64_t anchor = sp->seeds[i * sp->seed_width];
                FUZZ_ASSERT(anchor >= ds->node_types[col[0]].own_start && anchor < ds->node_types[col[0]].own_end);
            }
            for (int64_t i = 0; sp->labels && i < sp->num_items; i++)
                FUZZ_ASSERT(sp->labels[i] >= 0 && (tk->num_classes == 0 || sp->seed_width == 2 ||
                                                   sp->labels[i] < tk->num_classes));
            for (int64_t i = 0; sp->indexes && i < sp->num_items; i++) FUZZ_ASSERT(sp->indexes[i] >= 0);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        write_fixture();
        ready = 1;
    }
    char path[4096];
    fuzz_write("metadata.yaml", data, size, path);
    dataset ds;
    cgnn_err err = {0};
    int rc = dataset_open(&ds, fuzz_dir(), &err);
    fuzz_check(rc, &err, fuzz_dir());
    if (rc == 0) {
        check_dataset(&ds);
        dataset_close(&ds);
    }
    return 0;
}
