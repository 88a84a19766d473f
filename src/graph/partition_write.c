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
 * A typed dataset (partition.h) has per-type id maps (DIR/orig_ids-<type>.npy, new_ids-<type>.npy,
 * per-type ids), one edge file per edge type per part (edges-<src>-<rel>-<dst>.npy: the in-edges
 * of the part's dst nodes of that type, original order, per-type new ids), per-type node features
 * (node-<type>-<feat>.npy) and a `partition.node_ranges` list in every part's metadata.yaml.
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
#include "io/outguard.h"

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
    if (outguard_permit(path, err) != 0) return -1;
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

/* "<name>" when it is a safe file name, else "<fallback><k>". */
static void stem_or(const char *name, const char *fallback, int k, char *out, size_t cap) {
    if (safe_name(name)) snprintf(out, cap, "%s", name);
    else snprintf(out, cap, "%s%d", fallback, k);
}

/* Edge type k's file stem "<src>-<rel>-<dst>" (the name with ':' as '-') when that is a safe
 * file name, else "etype<k>". */
static void etype_stem(const char *name, int k, char *out, size_t cap) {
    char tmp[3 * DATASET_NAME_MAX];
    snprintf(tmp, sizeof tmp, "%s", name);
    for (char *c = tmp; *c; c++)
        if (*c == ':') *c = '-';
    stem_or(tmp, "etype", k, out, cap);
}

/* File name of feature k: "node-<name>.npy" / "edge-<name>.npy", or "...-feature<k>.npy"; typed:
 * "node-<type>-<name>.npy" / "edge-<src>-<rel>-<dst>-<name>.npy" (or "...-feature<k>.npy"). */
static void feature_file(const dataset *ds, const ds_feature *f, int k, char *out, size_t cap) {
    const char *dom = f->domain == DS_DOMAIN_NODE ? "node" : "edge";
    char type[3 * DATASET_NAME_MAX + 8] = "";
    if (ds->typed) {
        char st[3 * DATASET_NAME_MAX];
        if (f->domain == DS_DOMAIN_NODE) stem_or(ds->node_types[f->type].name, "type", f->type, st, sizeof st);
        else etype_stem(ds->edge_types[f->type].name, f->type, st, sizeof st);
        snprintf(type, sizeof type, "%s-", st);
    }
    if (safe_name(f->name)) snprintf(out, cap, "%s-%s%s.npy", dom, type, f->name);
    else snprintf(out, cap, "%s-%sfeature%d.npy", dom, type, k);
}

/* The id map files of node type t: "orig_ids.npy" / "new_ids.npy", typed "orig_ids-<type>.npy". */
static void map_file(const dataset *ds, int t, const char *which, char *out, size_t cap) {
    if (!ds->typed) {
        snprintf(out, cap, "%s.npy", which);
        return;
    }
    char st[DATASET_NAME_MAX + 16];
    stem_or(ds->node_types[t].name, "type", t, st, sizeof st);
    snprintf(out, cap, "%s-%s.npy", which, st);
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
            /* the homogenised offset of each column's node type (a pair: its edge type's ends) */
            const int lp_typed = ds->typed && w == 2;
            const int64_t col_off[2] = {
                r->type_offset[lp_typed ? ds->edge_types[tk->type].src_type : tk->type],
                r->type_offset[lp_typed ? ds->edge_types[tk->type].dst_type : tk->type]};
            int64_t m = 0;
            int64_t *seeds = cgnn_malloc((size_t)(sp->num_items * w + 1) * sizeof *seeds);
            int64_t *labels = sp->labels ? cgnn_malloc((size_t)(sp->num_items + 1) * sizeof *labels) : NULL;
            int64_t *indexes = sp->indexes ? cgnn_malloc((size_t)(sp->num_items + 1) * sizeof *indexes) : NULL;
            for (int64_t i = 0; i < sp->num_items; i++) {
                if (part != DS_PARTITION_GLOBAL && r->assign[col_off[0] + sp->seeds[i * w]] != part) continue;
                for (int c = 0; c < w; c++) seeds[m * w + c] = r->new_of_orig[col_off[c] + sp->seeds[i * w + c]];
                if (labels) labels[m] = sp->labels[i];
                if (indexes) indexes[m] = sp->indexes[i];
                m++;
            }
            const int64_t shape[2] = {m, w};
            const char *what[3] = {"seeds", "labels", "indexes"};
            const int64_t *arrays[3] = {seeds, labels, indexes};
            int rc = 0;
            json_buf_printf(y, "    %s:\n      - ", ds_split_name((ds_split_id)s));
            if (ds->typed) { /* the set's node type (NC) or edge type (LP) */
                json_buf_puts(y, "type: ");
                yaml_str(y, w == 2 ? ds->edge_types[tk->type].name : ds->node_types[tk->type].name);
                json_buf_puts(y, "\n        ");
            }
            json_buf_puts(y, "data:\n");
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
    if (part == DS_PARTITION_GLOBAL) json_buf_printf(y, "\n  part: global\n  num_parts: %d\n", r->num_parts);
    else json_buf_printf(y, "\n  part: %d\n  num_parts: %d\n", part, r->num_parts);
    const int P = r->num_parts;
    if (!ds->typed) {
        if (part == DS_PARTITION_GLOBAL)
            json_buf_printf(y, "  node_start: 0\n  node_end: %lld\n", (long long)r->num_nodes);
        else
            json_buf_printf(y, "  node_start: %lld\n  node_end: %lld\n", (long long)r->node_map[part],
                            (long long)r->node_map[part + 1]);
    } else { /* per-type new-id ranges */
        json_buf_puts(y, "  node_ranges:\n");
        for (int t = 0; t < ds->num_node_types; t++) {
            const int64_t *tm = r->type_map + (size_t)t * (size_t)(P + 1);
            const int64_t lo = part == DS_PARTITION_GLOBAL ? 0 : tm[part];
            const int64_t hi = part == DS_PARTITION_GLOBAL ? tm[P] : tm[part + 1];
            json_buf_puts(y, "    - type: ");
            yaml_str(y, ds->node_types[t].name);
            json_buf_printf(y, "\n      start: %lld\n      end: %lld\n", (long long)lo, (long long)hi);
        }
    }
    char g[300];
    snprintf(g, sizeof g, "../%s", json_name);
    json_buf_puts(y, "  graph: ");
    yaml_str(y, g);
    if (!ds->typed) {
        json_buf_printf(y,
                        "\ngraph:\n  nodes:\n    - num: %lld\n  edges:\n    - format: numpy\n      path: edges.npy\n",
                        (long long)r->num_nodes);
        return;
    }
    json_buf_puts(y, "\ngraph:\n  nodes:\n");
    for (int t = 0; t < ds->num_node_types; t++) {
        json_buf_puts(y, "    - type: ");
        yaml_str(y, ds->node_types[t].name);
        json_buf_printf(y, "\n      num: %lld\n", (long long)ds->node_types[t].num_nodes);
    }
    json_buf_puts(y, "  edges:\n");
    for (int k = 0; k < ds->num_edge_types; k++) {
        char stem[3 * DATASET_NAME_MAX];
        etype_stem(ds->edge_types[k].name, k, stem, sizeof stem);
        json_buf_puts(y, "    - type: ");
        yaml_str(y, ds->edge_types[k].name);
        /* the global splits have no edges: every edge type names one empty file */
        json_buf_printf(y, "\n      format: numpy\n      path: %s%s.npy\n", part == DS_PARTITION_GLOBAL ? "edges" : "edges-",
                        part == DS_PARTITION_GLOBAL ? "" : stem);
    }
}

/* ---- edges grouped by part ---------------------------------------------------------------------- */

/* The source edge indices (of one edge type) grouped by the part of their dst, ascending within a
 * part: part p's are order[emap[p] .. emap[p+1]) (emap: the edge type's row of etype_map; doff:
 * its dst type's homogenised offset). 4 bytes per edge when E < 2^32, else 8. */
typedef struct edge_order {
    uint32_t *u32;
    int64_t *i64;
} edge_order;

static inline int64_t order_at(const edge_order *o, int64_t k) { return o->u32 ? (int64_t)o->u32[k] : o->i64[k]; }

/* A stable parallel counting sort by part: thread t counts its contiguous chunk of edges per part,
 * offsets are laid out part-major then thread, so every part lists its edges in ascending order
 * whatever the thread count. */
static int build_order(edge_order *o, const ds_edges *e, int64_t doff, const int64_t *emap, const partition_result *r,
                       int T, cgnn_err *err) {
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
        for (int64_t i = lo; i < hi; i++) c[r->assign[doff + edge_id(e->dst, dt, i)]]++;
#pragma omp barrier
#pragma omp single
        {
            for (int q = 0; q < P; q++) {
                int64_t at = emap[q];
                for (int tt = 0; tt < TT; tt++) {
                    const int64_t n = pos[(size_t)tt * (size_t)P + (size_t)q];
                    pos[(size_t)tt * (size_t)P + (size_t)q] = at;
                    at += n;
                }
                CGNN_CHECK(at == emap[q + 1]);
            }
        }
        for (int64_t i = lo; i < hi; i++) {
            const int64_t k = c[r->assign[doff + edge_id(e->dst, dt, i)]]++;
            if (narrow) o->u32[k] = (uint32_t)i;
            else o->i64[k] = i;
        }
    }
    free(pos);
    return 0;
}

/* ---- one part -------------------------------------------------------------------------------- */

static int write_part(const char *out, const dataset *ds, const partition_result *r, const edge_order *orders,
                      const char *json_name, int p, cgnn_err *err) {
    char dir[4200], path[4900];
    snprintf(dir, sizeof dir, "%s/part%d", out, p);
    if (make_dir(dir, err) != 0) return -1;
    const int P = r->num_parts;
    int rc = 0;

    /* edges, per edge type: the part's edge indices, ascending (order[emap[p] .. emap[p+1])): the
     * src row, then the dst row, streamed, in new (per-type) ids; edge features follow the same
     * edges */
    for (int et = 0; rc == 0 && et < ds->num_edge_types; et++) {
        const ds_edge_type *ty = &ds->edge_types[et];
        const ds_edges *e = &ty->edges;
        const edge_order *order = &orders[et];
        const int64_t *emap = r->etype_map + (size_t)et * (size_t)(P + 1);
        const int64_t soff = r->type_offset[ty->src_type], doff = r->type_offset[ty->dst_type];
        const npy_dtype dt = e->id_dtype;
        const size_t isz = npy_dtype_size(dt);
        const int64_t Ep = emap[p + 1] - emap[p];
        int nef = 0;
        for (int k = 0; k < ds->num_features; k++) nef += ds->features[k].domain == DS_DOMAIN_EDGE && ds->features[k].type == et;
        row_stream ids, *ef_rs = cgnn_calloc((size_t)(nef ? nef : 1), sizeof *ef_rs);
        int *feat_of = cgnn_calloc((size_t)(nef ? nef : 1), sizeof *feat_of);
        if (ds->typed) {
            char stem[3 * DATASET_NAME_MAX];
            etype_stem(ty->name, et, stem, sizeof stem);
            snprintf(path, sizeof path, "%s/edges-%s.npy", dir, stem);
        } else {
            snprintf(path, sizeof path, "%s/edges.npy", dir);
        }
        memset(&ids, 0, sizeof ids);
        const int64_t shape[2] = {2, Ep};
        ids.row_bytes = isz; /* one id per "row": the src row, then the dst row */
        ids.buf = cgnn_malloc((size_t)CHUNK_ROWS * isz);
        rc = npy_writer_open(&ids.w, path, dt, 2, shape, err);
        ids.open = rc == 0;
        for (int k = 0, j = 0; rc == 0 && k < ds->num_features; k++) {
            const ds_feature *f = &ds->features[k];
            if (f->domain != DS_DOMAIN_EDGE || f->type != et) continue;
            char file[600];
            feature_file(ds, f, k, file, sizeof file);
            snprintf(path, sizeof path, "%s/%s", dir, file);
            feat_of[j] = k;
            rc = rs_open(&ef_rs[j++], path, &f->array, Ep, err);
        }
        const int64_t lo = emap[p], hi = emap[p + 1];
        for (int row = 0; row < 2 && rc == 0; row++) {
            const void *col = row == 0 ? e->src : e->dst;
            const int64_t off = row == 0 ? soff : doff;
            for (int64_t k = lo; rc == 0 && k < hi; k++) {
                const int64_t i = order_at(order, k), nid = r->new_of_orig[off + edge_id(col, dt, i)];
                if (dt == NPY_DTYPE_INT32) {
                    const int32_t n32 = (int32_t)nid;
                    rc = rs_push(&ids, &n32, err);
                } else {
                    rc = rs_push(&ids, &nid, err);
                }
                for (int j = 0; row == 0 && rc == 0 && j < nef; j++)
                    rc = rs_push(&ef_rs[j],
                                 (const char *)ds->features[feat_of[j]].array.data + (size_t)i * ef_rs[j].row_bytes, err);
            }
        }
        if (rs_close(&ids, rc != 0, err) != 0) rc = -1;
        for (int j = 0; j < nef; j++)
            if (rs_close(&ef_rs[j], rc != 0, err) != 0) rc = -1;
        free(ef_rs);
        free(feat_of);
    }
    if (rc != 0) return -1;

    /* node features: the part's rows of the feature's node type, in new-id order */
    json_buf y = {0};
    yaml_head(&y, ds, r, json_name, p);
    if (ds->num_features) json_buf_puts(&y, "feature_data:\n");
    for (int k = 0; rc == 0 && k < ds->num_features; k++) {
        const ds_feature *f = &ds->features[k];
        char file[600];
        feature_file(ds, f, k, file, sizeof file);
        json_buf_printf(&y, "  - domain: %s\n", f->domain == DS_DOMAIN_NODE ? "node" : "edge");
        if (ds->typed) {
            json_buf_puts(&y, "    type: ");
            yaml_str(&y, f->domain == DS_DOMAIN_NODE ? ds->node_types[f->type].name : ds->edge_types[f->type].name);
            json_buf_puts(&y, "\n");
        }
        json_buf_puts(&y, "    name: ");
        yaml_str(&y, f->name);
        json_buf_printf(&y, "\n    format: numpy\n    in_memory: %s\n    path: %s\n", f->in_memory ? "true" : "false",
                        file);
        if (f->domain != DS_DOMAIN_NODE) continue;
        const int64_t *tm = r->type_map + (size_t)f->type * (size_t)(P + 1), toff = r->type_offset[f->type];
        const int64_t first = tm[p], n_p = tm[p + 1] - first;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        row_stream rs;
        rc = rs_open(&rs, path, &f->array, n_p, err);
        for (int64_t i = 0; rc == 0 && i < n_p; i++)
            rc = rs_push(&rs, (const char *)f->array.data + (size_t)r->orig_of_new[toff + first + i] * rs.row_bytes,
                         err);
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
    char dir[4200], path[4900];
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
    /* DGL's maps: ranges of homogeneous new ids per (part, type), ordered part-major */
    const int NT = ds->typed ? ds->num_node_types : 1, K = ds->typed ? ds->num_edge_types : 1;
    json_buf_puts(&j, "  \"node_map\": {");
    for (int t = 0; t < NT; t++) {
        json_buf_puts(&j, t ? ", " : "");
        json_buf_string(&j, ds->typed ? ds->node_types[t].name : "_N");
        json_buf_puts(&j, ": [");
        for (int p = 0; p < P; p++) {
            int64_t s = r->node_map[p];
            for (int u = 0; u < t; u++) s += r->type_map[(size_t)u * (P + 1) + p + 1] - r->type_map[(size_t)u * (P + 1) + p];
            const int64_t n_tp = r->type_map[(size_t)t * (P + 1) + p + 1] - r->type_map[(size_t)t * (P + 1) + p];
            json_buf_printf(&j, "%s[%lld, %lld]", p ? ", " : "", (long long)s, (long long)(s + n_tp));
        }
        json_buf_puts(&j, "]");
    }
    json_buf_puts(&j, "},\n  \"edge_map\": {");
    for (int k = 0; k < K; k++) {
        json_buf_puts(&j, k ? ", " : "");
        json_buf_string(&j, ds->typed ? ds->edge_types[k].name : "_N:_E:_N");
        json_buf_puts(&j, ": [");
        for (int p = 0; p < P; p++) {
            int64_t s = r->edge_map[p];
            for (int u = 0; u < k; u++) s += r->etype_map[(size_t)u * (P + 1) + p + 1] - r->etype_map[(size_t)u * (P + 1) + p];
            const int64_t n_kp = r->etype_map[(size_t)k * (P + 1) + p + 1] - r->etype_map[(size_t)k * (P + 1) + p];
            json_buf_printf(&j, "%s[%lld, %lld]", p ? ", " : "", (long long)s, (long long)(s + n_kp));
        }
        json_buf_puts(&j, "]");
    }
    json_buf_puts(&j, "},\n  \"ntypes\": {");
    for (int t = 0; t < NT; t++) {
        json_buf_puts(&j, t ? ", " : "");
        json_buf_string(&j, ds->typed ? ds->node_types[t].name : "_N");
        json_buf_printf(&j, ": %d", t);
    }
    json_buf_puts(&j, "},\n  \"etypes\": {");
    for (int k = 0; k < K; k++) {
        json_buf_puts(&j, k ? ", " : "");
        json_buf_string(&j, ds->typed ? ds->edge_types[k].name : "_N:_E:_N");
        json_buf_printf(&j, ": %d", k);
    }
    json_buf_puts(&j, "},\n");
    for (int p = 0; p < P; p++) {
        json_buf_printf(&j, "  \"part-%d\": {\"part_dir\": \"part%d\", \"metadata\": \"part%d/metadata.yaml\", ", p, p, p);
        if (!ds->typed) {
            json_buf_printf(&j, "\"part_graph\": \"part%d/edges.npy\", ", p);
        } else { /* one edge file per edge type */
            json_buf_puts(&j, "\"part_graph\": {");
            for (int k = 0; k < K; k++) {
                char stem[3 * DATASET_NAME_MAX], rel[3 * DATASET_NAME_MAX + 40];
                etype_stem(ds->edge_types[k].name, k, stem, sizeof stem);
                snprintf(rel, sizeof rel, "part%d/edges-%s.npy", p, stem);
                json_buf_puts(&j, k ? ", " : "");
                json_buf_string(&j, ds->edge_types[k].name);
                json_buf_puts(&j, ": ");
                json_buf_string(&j, rel);
            }
            json_buf_puts(&j, "}, ");
        }
        json_buf_puts(&j, "\"node_feats\": {");
        int first = 1;
        for (int k = 0; k < ds->num_features; k++) {
            const ds_feature *f = &ds->features[k];
            if (f->domain != DS_DOMAIN_NODE) continue;
            char file[600], rel[640], key[2 * DATASET_NAME_MAX + 2];
            feature_file(ds, f, k, file, sizeof file);
            snprintf(rel, sizeof rel, "part%d/%s", p, file);
            /* DGL names a typed node feature "<ntype>/<name>" */
            if (ds->typed) snprintf(key, sizeof key, "%s/%s", ds->node_types[f->type].name, f->name);
            else snprintf(key, sizeof key, "%s", f->name);
            if (!first) json_buf_puts(&j, ", ");
            json_buf_string(&j, key);
            json_buf_puts(&j, ": ");
            json_buf_string(&j, rel);
            first = 0;
        }
        json_buf_puts(&j, "}},\n");
    }
    json_buf_printf(&j, "  \"partition_id\": \"%s\",\n  \"seed\": %lld,\n  \"max_in_degree\": %lld,\n", r->id,
                    (long long)r->seed, (long long)r->max_in_degree);
    if (!ds->typed) {
        json_buf_puts(&j, "  \"orig_ids\": \"orig_ids.npy\",\n  \"new_ids\": \"new_ids.npy\",\n");
    } else { /* per edge type in-degree bounds; per node type id maps */
        json_buf_puts(&j, "  \"etype_max_in_degree\": {");
        for (int k = 0; k < K; k++) {
            json_buf_puts(&j, k ? ", " : "");
            json_buf_string(&j, ds->edge_types[k].name);
            json_buf_printf(&j, ": %lld", (long long)r->etype_max_in_degree[k]);
        }
        const char *which[2] = {"orig_ids", "new_ids"};
        for (int w = 0; w < 2; w++) {
            json_buf_printf(&j, "},\n  \"%s\": {", which[w]);
            for (int t = 0; t < NT; t++) {
                char file[DATASET_NAME_MAX + 32];
                map_file(ds, t, which[w], file, sizeof file);
                json_buf_puts(&j, t ? ", " : "");
                json_buf_string(&j, ds->node_types[t].name);
                json_buf_puts(&j, ": ");
                json_buf_string(&j, file);
            }
        }
        json_buf_puts(&j, "},\n");
    }
    json_buf_puts(&j, "  \"global_splits\": \"global\",\n");
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
    CGNN_CHECK(r->num_parts >= 1 && r->assign && r->num_edge_types == ds->num_edge_types &&
               r->num_node_types == ds->num_node_types);
    if (make_dir(dir, err) != 0) return -1;
    char json_name[160], path[4400];
    partition_json_name(ds->name, json_name, sizeof json_name);
    for (int t = 0; t < ds->num_node_types; t++) { /* the id maps (typed: per node type, per-type ids) */
        const int64_t o = r->type_offset[t], n = r->type_offset[t + 1] - o;
        char file[DATASET_NAME_MAX + 32];
        map_file(ds, t, "orig_ids", file, sizeof file);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (npy_write(path, NPY_DTYPE_INT64, 1, &n, r->orig_of_new + o, err) != 0) return -1;
        map_file(ds, t, "new_ids", file, sizeof file);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (npy_write(path, NPY_DTYPE_INT64, 1, &n, r->new_of_orig + o, err) != 0) return -1;
    }

    const int P = r->num_parts, K = ds->num_edge_types;
    int T = nthreads > 0 ? nthreads : omp_get_max_threads();
    if (T > P) T = P;
    edge_order *orders = cgnn_calloc((size_t)K, sizeof *orders);
    int rc = 0;
    for (int k = 0; k < K && rc == 0; k++)
        rc = build_order(&orders[k], &ds->edge_types[k].edges, r->type_offset[ds->edge_types[k].dst_type],
                         r->etype_map + (size_t)k * (size_t)(P + 1), r, nthreads > 0 ? nthreads : omp_get_max_threads(),
                         err);
    cgnn_err *errs = cgnn_calloc((size_t)P, sizeof *errs);
    int *failed = cgnn_calloc((size_t)P, sizeof *failed);
    if (rc == 0) {
#pragma omp parallel for num_threads(T) schedule(dynamic, 1)
        for (int p = 0; p < P; p++) failed[p] = write_part(dir, ds, r, orders, json_name, p, &errs[p]) != 0;
    }
    for (int k = 0; k < K; k++) {
        free(orders[k].u32);
        free(orders[k].i64);
    }
    free(orders);
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
