/* partition_write.c — writing a partitioned graph in DGL's layout; see partition.h.
 *
 *   DIR/<name>.json        the partition book: DGL's fields + cgnn's (id, maps, stats)
 *   DIR/orig_ids.npy       (N,) int64: original id of each new id
 *   DIR/new_ids.npy        (N,) int64: new id of each original id
 *   DIR/part<p>/           a GraphBolt on-disk dataset (metadata.yaml + .npy) holding
 *       edges.npy          (2, E_p) the in-edges of the part's nodes, new ids, original order
 *       node-<feat>.npy    (n_p, F) the part's rows, new-id order, the source's dtype
 *       edge-<feat>.npy    (E_p, F) rows of the part's edges, if the source has edge features
 *       <task>-<split>-{seeds,labels,indexes}.npy   the owned items, original row order
 *   DIR/global/            the whole splits (new ids, original row order), no edges, no features
 *
 * Every file is a function of (dataset, assignment): the edges are first grouped by part with a
 * stable counting sort (4 bytes per edge), then parts are written in parallel, each file by one
 * thread in one sequential pass, so the bytes never depend on the thread count.
 * The run's measurements go to DIR/run.yaml (partition_write_run), the one file that differs
 * between two runs.
 */
#include "graph/partition.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/json.h"
#include "io/npy.h"

#define CHUNK_ROWS 65536

static inline int64_t edge_id(const void *ids, npy_dtype dt, int64_t i) {
    return dt == NPY_DTYPE_INT32 ? (int64_t)((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

static const char *const SPLIT_SHORT[] = {"train", "valid", "test"};
_Static_assert(sizeof SPLIT_SHORT / sizeof SPLIT_SHORT[0] == DS_SPLIT_COUNT, "split names");

/* ---- small helpers --------------------------------------------------------------------------- */

static int make_dir(const char *path, cgnn_err *err) {
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create the directory: %s", path, strerror(errno));
    return 0;
}

static int write_text(const char *path, const char *text, size_t len, cgnn_err *err) {
    FILE *f = fopen(path, "wb");
    if (!f) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(text, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
    return 0;
}

/* 1 if s can be a file name part as is: [A-Za-z0-9_.-], not starting with '.', <= 100 bytes. */
static int safe_name(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 100 || s[0] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return 0;
    }
    return 1;
}

void partition_json_name(const char *dataset_name, char *out, size_t cap) {
    size_t n = 0;
    for (const char *c = dataset_name; *c && n + 6 < cap && n < 100; c++, n++) {
        char ch = *c;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                 ch == '-' || (ch == '.' && n > 0);
        out[n] = ok ? ch : '_';
    }
    if (n == 0) out[n++] = '_';
    snprintf(out + n, cap - n, ".json");
}

/* A YAML double-quoted scalar (escapes: \" \\ and \xNN for control characters and DEL). */
static void yaml_str(json_buf *b, const char *s) {
    json_buf_put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            json_buf_put(b, "\\", 1);
            json_buf_put(b, c, 1);
        } else if (*c < 0x20 || *c == 0x7f) {
            json_buf_printf(b, "\\x%02x", *c);
        } else {
            json_buf_put(b, c, 1);
        }
    }
    json_buf_put(b, "\"", 1);
}

/* File name stem of task t: its name when that is a safe file name, else "task<t>". */
static void task_stem(const dataset *ds, int t, char *out, size_t cap) {
    if (safe_name(ds->tasks[t].name)) snprintf(out, cap, "%s", ds->tasks[t].name);
    else snprintf(out, cap, "task%d", t);
}

/* File name of feature k: "node-<name>.npy" / "edge-<name>.npy", or "...-feature<k>.npy". */
static void feature_file(const ds_feature *f, int k, char *out, size_t cap) {
    const char *dom = f->domain == DS_DOMAIN_NODE ? "node" : "edge";
    if (safe_name(f->name)) snprintf(out, cap, "%s-%s.npy", dom, f->name);
    else snprintf(out, cap, "%s-feature%d.npy", dom, k);
}

/* Streams whole rows into an .npy writer through a buffer of CHUNK_ROWS rows. */
typedef struct row_stream {
    npy_writer w;
    char *buf;
    size_t row_bytes;
    int64_t n; /* rows in buf */
    int open;
} row_stream;

static int rs_open(row_stream *rs, const char *path, const npy_array *like, int64_t rows, cgnn_err *err) {
    memset(rs, 0, sizeof *rs);
    int64_t shape[NPY_MAX_DIMS];
    for (int d = 0; d < like->ndim; d++) shape[d] = like->shape[d];
    shape[0] = rows;
    size_t row = npy_dtype_size(like->dtype);
    for (int d = 1; d < like->ndim; d++) row *= (size_t)like->shape[d];
    rs->row_bytes = row;
    rs->buf = malloc((size_t)CHUNK_ROWS * (row ? row : 1));
    if (!rs->buf) return err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory for a write buffer", path);
    if (npy_writer_open(&rs->w, path, like->dtype, like->ndim, shape, err) != 0) {
        free(rs->buf);
        rs->buf = NULL;
        return -1;
    }
    rs->open = 1;
    return 0;
}

static int rs_flush(row_stream *rs, cgnn_err *err) {
    int rc = npy_writer_append(&rs->w, rs->buf, (size_t)rs->n * rs->row_bytes, err);
    rs->n = 0;
    return rc;
}

static int rs_push(row_stream *rs, const void *row, cgnn_err *err) {
    memcpy(rs->buf + (size_t)rs->n * rs->row_bytes, row, rs->row_bytes);
    if (++rs->n == CHUNK_ROWS) return rs_flush(rs, err);
    return 0;
}

/* Finishes (or, with abort_write, removes) the file. */
static int rs_close(row_stream *rs, int abort_write, cgnn_err *err) {
    int rc = 0;
    if (rs->open) {
        if (!abort_write && rs_flush(rs, err) != 0) abort_write = 1, rc = -1;
        if (npy_writer_close(&rs->w, abort_write, err) != 0) rc = -1;
    }
    free(rs->buf);
    memset(rs, 0, sizeof *rs);
    return rc;
}

/* ---- splits ---------------------------------------------------------------------------------- */

/* Writes every task's splits restricted to `part` (DS_PARTITION_GLOBAL: all rows) into dir and
 * appends the YAML `tasks:` block to y. Rows keep their original order; seeds become new ids. */
static int write_splits(const char *dir, const dataset *ds, const partition_result *r, int part, json_buf *y,
                        cgnn_err *err) {
    if (ds->num_tasks == 0) return 0;
    json_buf_puts(y, "tasks:\n");
    char path[4400], stem[128];
    for (int t = 0; t < ds->num_tasks; t++) {
        const ds_task *tk = &ds->tasks[t];
        task_stem(ds, t, stem, sizeof stem);
        json_buf_puts(y, "  - name: ");
        yaml_str(y, tk->name);
        json_buf_puts(y, "\n");
        if (tk->num_classes > 0) json_buf_printf(y, "    num_classes: %lld\n", (long long)tk->num_classes);
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &tk->splits[s];
            if (!sp->present) continue;
            const int w = sp->seed_width;
            int64_t m = 0;
            int64_t *seeds = cgnn_malloc((size_t)(sp->num_items * w + 1) * sizeof *seeds);
            int64_t *labels = sp->labels ? cgnn_malloc((size_t)(sp->num_items + 1) * sizeof *labels) : NULL;
            int64_t *indexes = sp->indexes ? cgnn_malloc((size_t)(sp->num_items + 1) * sizeof *indexes) : NULL;
            for (int64_t i = 0; i < sp->num_items; i++) {
                if (part != DS_PARTITION_GLOBAL && r->assign[sp->seeds[i * w]] != part) continue;
                for (int c = 0; c < w; c++) seeds[m * w + c] = r->new_of_orig[sp->seeds[i * w + c]];
                if (labels) labels[m] = sp->labels[i];
                if (indexes) indexes[m] = sp->indexes[i];
                m++;
            }
            const int64_t shape[2] = {m, w};
            const char *what[3] = {"seeds", "labels", "indexes"};
            const int64_t *arrays[3] = {seeds, labels, indexes};
            int rc = 0;
            json_buf_printf(y, "    %s:\n      - data:\n", ds_split_name((ds_split_id)s));
            for (int k = 0; k < 3 && rc == 0; k++) {
                if (!arrays[k]) continue;
                char file[300];
                snprintf(file, sizeof file, "%s-%s-%s.npy", stem, SPLIT_SHORT[s], what[k]);
                snprintf(path, sizeof path, "%s/%s", dir, file);
                rc = npy_write(path, NPY_DTYPE_INT64, k == 0 && w == 2 ? 2 : 1, shape, arrays[k], err);
                json_buf_printf(y, "          - name: %s\n            format: numpy\n            path: %s\n", what[k],
                                file);
            }
            free(seeds);
            free(labels);
            free(indexes);
            if (rc != 0) return -1;
        }
    }
    return 0;
}

/* The `dataset_name:` and `partition:` lines of a part's (or the global splits') metadata. */
static void yaml_head(json_buf *y, const dataset *ds, const partition_result *r, const char *json_name, int part) {
    json_buf_puts(y, "# written by cgnn partition: ");
    json_buf_puts(y, part == DS_PARTITION_GLOBAL ? "the global splits" : "one part");
    json_buf_puts(y, " of a partitioned graph (node ids are the partition's new ids; see the partition JSON)\n");
    json_buf_puts(y, "dataset_name: ");
    yaml_str(y, ds->name);
    json_buf_puts(y, "\npartition:\n  id: ");
    yaml_str(y, r->id);
    if (part == DS_PARTITION_GLOBAL)
        json_buf_printf(y, "\n  part: global\n  num_parts: %d\n  node_start: 0\n  node_end: %lld\n", r->num_parts,
                        (long long)r->num_nodes);
    else
        json_buf_printf(y, "\n  part: %d\n  num_parts: %d\n  node_start: %lld\n  node_end: %lld\n", part,
                        r->num_parts, (long long)r->node_map[part], (long long)r->node_map[part + 1]);
    char g[300];
    snprintf(g, sizeof g, "../%s", json_name);
    json_buf_puts(y, "  graph: ");
    yaml_str(y, g);
    json_buf_printf(y, "\ngraph:\n  nodes:\n    - num: %lld\n  edges:\n    - format: numpy\n      path: edges.npy\n",
                    (long long)r->num_nodes);
}

/* ---- edges grouped by part ---------------------------------------------------------------------- */

/* The source edge indices grouped by the part of their dst, ascending within a part: part p's
 * are order[edge_map[p] .. edge_map[p+1]). 4 bytes per edge when E < 2^32, else 8. */
typedef struct edge_order {
    uint32_t *u32;
    int64_t *i64;
} edge_order;

static inline int64_t order_at(const edge_order *o, int64_t k) { return o->u32 ? (int64_t)o->u32[k] : o->i64[k]; }

/* A stable parallel counting sort by part: thread t counts its contiguous chunk of edges per part,
 * offsets are laid out part-major then thread, so every part lists its edges in ascending order
 * whatever the thread count. */
static int build_order(edge_order *o, const ds_edges *e, const partition_result *r, int T, cgnn_err *err) {
    memset(o, 0, sizeof *o);
    const int64_t E = e->num_edges;
    const int P = r->num_parts;
    const int narrow = E <= (int64_t)UINT32_MAX;
    if (narrow) o->u32 = malloc((size_t)(E ? E : 1) * sizeof *o->u32);
    else o->i64 = malloc((size_t)E * sizeof *o->i64);
    while (T > 1 && (double)T * (double)P * 8.0 > (double)(64 << 20)) T--;
    if (T > E / 65536 + 1) T = (int)(E / 65536 + 1);
    int64_t *pos = calloc((size_t)T * (size_t)P, sizeof *pos);
    if ((!o->u32 && !o->i64) || !pos) {
        free(pos);
        free(o->u32);
        free(o->i64);
        memset(o, 0, sizeof *o);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory grouping %lld edges by part", (long long)E);
    }
    const npy_dtype dt = e->id_dtype;
#pragma omp parallel num_threads(T)
    {
        const int t = omp_get_thread_num(), TT = omp_get_num_threads();
        const int64_t lo = E * t / TT, hi = E * (t + 1) / TT;
        int64_t *c = pos + (size_t)t * (size_t)P;
        for (int64_t i = lo; i < hi; i++) c[r->assign[edge_id(e->dst, dt, i)]]++;
#pragma omp barrier
#pragma omp single
        {
            for (int q = 0; q < P; q++) {
                int64_t at = r->edge_map[q];
                for (int tt = 0; tt < TT; tt++) {
                    const int64_t n = pos[(size_t)tt * (size_t)P + (size_t)q];
                    pos[(size_t)tt * (size_t)P + (size_t)q] = at;
                    at += n;
                }
                CGNN_CHECK(at == r->edge_map[q + 1]);
            }
        }
        for (int64_t i = lo; i < hi; i++) {
            const int64_t k = c[r->assign[edge_id(e->dst, dt, i)]]++;
            if (narrow) o->u32[k] = (uint32_t)i;
            else o->i64[k] = i;
        }
    }
    free(pos);
    return 0;
}

/* ---- one part -------------------------------------------------------------------------------- */

static int write_part(const char *out, const dataset *ds, const partition_result *r, const edge_order *order,
                      const char *json_name, int p, cgnn_err *err) {
    char dir[4200], path[4608];
    snprintf(dir, sizeof dir, "%s/part%d", out, p);
    if (make_dir(dir, err) != 0) return -1;
    const ds_edges *e = &ds->edge_types[0].edges;
    const npy_dtype dt = e->id_dtype;
    const size_t isz = npy_dtype_size(dt);
    const int64_t Ep = r->edge_map[p + 1] - r->edge_map[p];
    const int64_t first = r->node_map[p], n_p = r->node_map[p + 1] - first;
    int rc = 0;

    /* edges: the part's edge indices, ascending (order[edge_map[p] .. edge_map[p+1])): the src row,
     * then the dst row, streamed; edge features follow the same edges */
    int nef = 0;
    for (int k = 0; k < ds->num_features; k++) nef += ds->features[k].domain == DS_DOMAIN_EDGE;
    row_stream ids, *ef_rs = cgnn_calloc((size_t)(nef ? nef : 1), sizeof *ef_rs);
    int *feat_of = cgnn_calloc((size_t)(nef ? nef : 1), sizeof *feat_of);
    snprintf(path, sizeof path, "%s/edges.npy", dir);
    memset(&ids, 0, sizeof ids);
    const int64_t shape[2] = {2, Ep};
    ids.row_bytes = isz; /* one id per "row": the src row, then the dst row */
    ids.buf = cgnn_malloc((size_t)CHUNK_ROWS * isz);
    rc = npy_writer_open(&ids.w, path, dt, 2, shape, err);
    ids.open = rc == 0;
    for (int k = 0, j = 0; rc == 0 && k < ds->num_features; k++) {
        const ds_feature *f = &ds->features[k];
        if (f->domain != DS_DOMAIN_EDGE) continue;
        char file[300];
        feature_file(f, k, file, sizeof file);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        feat_of[j] = k;
        rc = rs_open(&ef_rs[j++], path, &f->array, Ep, err);
    }
    const int64_t lo = r->edge_map[p], hi = r->edge_map[p + 1];
    for (int row = 0; row < 2 && rc == 0; row++) {
        const void *col = row == 0 ? e->src : e->dst;
        for (int64_t k = lo; rc == 0 && k < hi; k++) {
            const int64_t i = order_at(order, k), nid = r->new_of_orig[edge_id(col, dt, i)];
            if (dt == NPY_DTYPE_INT32) {
                const int32_t n32 = (int32_t)nid;
                rc = rs_push(&ids, &n32, err);
            } else {
                rc = rs_push(&ids, &nid, err);
            }
            for (int j = 0; row == 0 && rc == 0 && j < nef; j++)
                rc = rs_push(&ef_rs[j], (const char *)ds->features[feat_of[j]].array.data + (size_t)i * ef_rs[j].row_bytes,
                             err);
        }
    }
    if (rs_close(&ids, rc != 0, err) != 0) rc = -1;
    for (int j = 0; j < nef; j++)
        if (rs_close(&ef_rs[j], rc != 0, err) != 0) rc = -1;
    free(ef_rs);
    free(feat_of);
    if (rc != 0) return -1;

    /* node features: the part's rows in new-id order */
    json_buf y = {0};
    yaml_head(&y, ds, r, json_name, p);
    if (ds->num_features) json_buf_puts(&y, "feature_data:\n");
    for (int k = 0; rc == 0 && k < ds->num_features; k++) {
        const ds_feature *f = &ds->features[k];
        char file[300];
        feature_file(f, k, file, sizeof file);
        json_buf_printf(&y, "  - domain: %s\n    name: ", f->domain == DS_DOMAIN_NODE ? "node" : "edge");
        yaml_str(&y, f->name);
        json_buf_printf(&y, "\n    format: numpy\n    in_memory: %s\n    path: %s\n", f->in_memory ? "true" : "false",
                        file);
        if (f->domain != DS_DOMAIN_NODE) continue;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        row_stream rs;
        rc = rs_open(&rs, path, &f->array, n_p, err);
        for (int64_t i = 0; rc == 0 && i < n_p; i++)
            rc = rs_push(&rs, (const char *)f->array.data + (size_t)r->orig_of_new[first + i] * rs.row_bytes, err);
        if (rs_close(&rs, rc != 0, err) != 0) rc = -1;
    }
    if (rc == 0) rc = write_splits(dir, ds, r, p, &y, err);
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/metadata.yaml", dir);
        rc = write_text(path, y.p, y.len, err);
    }
    json_buf_free(&y);
    return rc;
}

/* ---- global splits, maps, the JSON ----------------------------------------------------------- */

static int write_global(const char *out, const dataset *ds, const partition_result *r, const char *json_name,
                        cgnn_err *err) {
    char dir[4200], path[4608];
    snprintf(dir, sizeof dir, "%s/global", out);
    if (make_dir(dir, err) != 0) return -1;
    snprintf(path, sizeof path, "%s/edges.npy", dir);
    const int64_t shape[2] = {2, 0};
    const int64_t none = 0;
    if (npy_write(path, NPY_DTYPE_INT64, 2, shape, &none, err) != 0) return -1;
    json_buf y = {0};
    yaml_head(&y, ds, r, json_name, DS_PARTITION_GLOBAL);
    int rc = write_splits(dir, ds, r, DS_PARTITION_GLOBAL, &y, err);
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/metadata.yaml", dir);
        rc = write_text(path, y.p, y.len, err);
    }
    json_buf_free(&y);
    return rc;
}

static void json_i64_array(json_buf *b, const int64_t *a, int n) {
    json_buf_put(b, "[", 1);
    for (int i = 0; i < n; i++) json_buf_printf(b, "%s%lld", i ? ", " : "", (long long)a[i]);
    json_buf_put(b, "]", 1);
}

/* max / mean of a[0..n); 1 when the total is 0. */
static double balance(const int64_t *a, int n) {
    int64_t max = 0, sum = 0;
    for (int i = 0; i < n; i++) {
        sum += a[i];
        if (a[i] > max) max = a[i];
    }
    return sum > 0 ? (double)max * (double)n / (double)sum : 1.0;
}

static int write_json(const char *out, const dataset *ds, const partition_result *r, const char *json_name,
                      cgnn_err *err) {
    const int P = r->num_parts;
    json_buf j = {0};
    json_buf_puts(&j, "{\n  \"graph_name\": ");
    json_buf_string(&j, ds->name);
    json_buf_printf(&j, ",\n  \"num_parts\": %d,\n  \"part_method\": \"%s\",\n  \"num_nodes\": %lld,\n"
                        "  \"num_edges\": %lld,\n  \"halo_hops\": 0,\n",
                    P, partition_method_name(r->method), (long long)r->num_nodes, (long long)r->num_edges);
    json_buf_puts(&j, "  \"node_map\": {\"_N\": [");
    for (int p = 0; p < P; p++)
        json_buf_printf(&j, "%s[%lld, %lld]", p ? ", " : "", (long long)r->node_map[p], (long long)r->node_map[p + 1]);
    json_buf_puts(&j, "]},\n  \"edge_map\": {\"_N:_E:_N\": [");
    for (int p = 0; p < P; p++)
        json_buf_printf(&j, "%s[%lld, %lld]", p ? ", " : "", (long long)r->edge_map[p], (long long)r->edge_map[p + 1]);
    json_buf_puts(&j, "]},\n  \"ntypes\": {\"_N\": 0},\n  \"etypes\": {\"_N:_E:_N\": 0},\n");
    for (int p = 0; p < P; p++) {
        json_buf_printf(&j, "  \"part-%d\": {\"part_dir\": \"part%d\", \"metadata\": \"part%d/metadata.yaml\", "
                            "\"part_graph\": \"part%d/edges.npy\", \"node_feats\": {",
                        p, p, p, p);
        int first = 1;
        for (int k = 0; k < ds->num_features; k++) {
            if (ds->features[k].domain != DS_DOMAIN_NODE) continue;
            char file[300], rel[320];
            feature_file(&ds->features[k], k, file, sizeof file);
            snprintf(rel, sizeof rel, "part%d/%s", p, file);
            if (!first) json_buf_puts(&j, ", ");
            json_buf_string(&j, ds->features[k].name);
            json_buf_puts(&j, ": ");
            json_buf_string(&j, rel);
            first = 0;
        }
        json_buf_puts(&j, "}},\n");
    }
    json_buf_printf(&j,
                    "  \"partition_id\": \"%s\",\n  \"seed\": %lld,\n  \"max_in_degree\": %lld,\n"
                    "  \"orig_ids\": \"orig_ids.npy\",\n  \"new_ids\": \"new_ids.npy\",\n  \"global_splits\": "
                    "\"global\",\n",
                    r->id, (long long)r->seed, (long long)r->max_in_degree);
    /* statistics (deterministic; the run's time and memory are in run.yaml) */
    int64_t *nodes = cgnn_malloc((size_t)P * sizeof *nodes), *edges = cgnn_malloc((size_t)P * sizeof *edges);
    for (int p = 0; p < P; p++) nodes[p] = r->node_map[p + 1] - r->node_map[p];
    for (int p = 0; p < P; p++) edges[p] = r->edge_map[p + 1] - r->edge_map[p];
    json_buf_printf(&j, "  \"stats\": {\n    \"edge_cut\": %lld,\n    \"edge_cut_fraction\": %.6f,\n",
                    (long long)r->edge_cut, r->num_edges ? (double)r->edge_cut / (double)r->num_edges : 0.0);
    json_buf_puts(&j, "    \"part_nodes\": ");
    json_i64_array(&j, nodes, P);
    json_buf_printf(&j, ",\n    \"node_balance\": %.6f,\n    \"part_edges\": ", balance(nodes, P));
    json_i64_array(&j, edges, P);
    json_buf_printf(&j, ",\n    \"edge_balance\": %.6f,\n    \"seeds\": [", balance(edges, P));
    for (int k = 0; k < r->num_seedsets; k++) {
        const partition_seedset *ss = &r->seedsets[k];
        json_buf_puts(&j, k ? ",\n      {\"task\": " : "\n      {\"task\": ");
        json_buf_string(&j, ds->tasks[ss->task].name);
        json_buf_printf(&j, ", \"split\": \"%s\", \"total\": %lld, \"per_part\": ", ds_split_name((ds_split_id)ss->split),
                        (long long)ss->total);
        json_i64_array(&j, ss->per_part, P);
        json_buf_printf(&j, ", \"balance\": %.6f}", balance(ss->per_part, P));
    }
    json_buf_puts(&j, r->num_seedsets ? "\n    ],\n" : "],\n");
    if (r->method == PARTITION_METIS && P > 1)
        json_buf_printf(&j,
                        "    \"metis\": {\"symmetric_adjacency\": %lld, \"constraints\": %d, \"objective\": %lld},\n",
                        (long long)r->sym_adjacency, r->metis_constraints, (long long)r->metis_objective);
    json_buf_puts(&j, "    \"run\": \"run.yaml\"\n  }\n}\n");
    free(nodes);
    free(edges);
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", out, json_name);
    int rc = write_text(path, j.p, j.len, err);
    json_buf_free(&j);
    return rc;
}

int partition_write(const char *dir, const dataset *ds, const partition_result *r, int nthreads, cgnn_err *err) {
    CGNN_CHECK(r->num_parts >= 1 && r->assign && ds->num_edge_types == 1);
    if (make_dir(dir, err) != 0) return -1;
    char json_name[160], path[4400];
    partition_json_name(ds->name, json_name, sizeof json_name);
    const int64_t n = r->num_nodes;
    snprintf(path, sizeof path, "%s/orig_ids.npy", dir);
    if (npy_write(path, NPY_DTYPE_INT64, 1, &n, r->orig_of_new, err) != 0) return -1;
    snprintf(path, sizeof path, "%s/new_ids.npy", dir);
    if (npy_write(path, NPY_DTYPE_INT64, 1, &n, r->new_of_orig, err) != 0) return -1;

    const int P = r->num_parts;
    int T = nthreads > 0 ? nthreads : omp_get_max_threads();
    if (T > P) T = P;
    edge_order order;
    if (build_order(&order, &ds->edge_types[0].edges, r, nthreads > 0 ? nthreads : omp_get_max_threads(), err) != 0)
        return -1;
    cgnn_err *errs = cgnn_calloc((size_t)P, sizeof *errs);
    int *failed = cgnn_calloc((size_t)P, sizeof *failed);
#pragma omp parallel for num_threads(T) schedule(dynamic, 1)
    for (int p = 0; p < P; p++) failed[p] = write_part(dir, ds, r, &order, json_name, p, &errs[p]) != 0;
    free(order.u32);
    free(order.i64);
    int rc = 0;
    for (int p = 0; p < P && rc == 0; p++)
        if (failed[p]) {
            if (err) *err = errs[p];
            rc = -1;
        }
    free(errs);
    free(failed);
    if (rc == 0) rc = write_global(dir, ds, r, json_name, err);
    if (rc == 0) rc = write_json(dir, ds, r, json_name, err);
    return rc;
}

int partition_write_run(const char *dir, const partition_run_info *info, cgnn_err *err) {
    json_buf y = {0};
    json_buf_puts(&y, "# cgnn partition: what the run that wrote this directory measured (the one file that\n"
                      "# differs between two runs with the same inputs, method and seed)\nsource_dataset: ");
    yaml_str(&y, info->source_dataset ? info->source_dataset : "");
    json_buf_printf(&y,
                    "\nthreads: %d\nseconds: %.3f\nseconds_assign: %.3f\nseconds_write: %.3f\npeak_rss_bytes: %lld\n"
                    "peak_rss_bytes_loaded: %lld\npeak_rss_bytes_assigned: %lld\n",
                    info->threads, info->seconds_total, info->seconds_assign, info->seconds_write,
                    (long long)info->peak_rss_bytes, (long long)info->peak_rss_bytes_loaded,
                    (long long)info->peak_rss_bytes_assigned);
    char path[4400];
    snprintf(path, sizeof path, "%s/run.yaml", dir);
    int rc = write_text(path, y.p, y.len, err);
    json_buf_free(&y);
    return rc;
}
