/* dataset.c — GraphBolt OnDiskDataset (raw form) loader; see dataset.h.
 *
 * Dimension legend: N nodes (graph.nodes[t].num, per node type t), E edges (per edge type),
 * F feature dim, M split items.
 *
 * Order of work: metadata.yaml is parsed into a yamldoc tree and checked key by key (unknown
 * keys get a "did you mean"), then graph (node entries first: they decide whether the dataset is
 * typed, and every later `type:` is resolved against them), partition, feature_data and tasks
 * are loaded in that order, so that every later check can name the earlier field it depends on
 * (rows vs graph.nodes[t].num, seeds vs their type's node count).
 * Cleanup: every array the dataset owns is reachable from *ds as soon as it is allocated and
 * the counts are set before the entries are filled, so a single dataset_close on the error
 * path releases everything.
 */
#include "io/dataset.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/file.h"
#include "io/torch_save.h"

#include "io/yamldoc.h"
#include "util/log.h"
#include "util/rng.h"

static const char *const SPLIT_NAMES[] = {"train_set", "validation_set", "test_set"};
_Static_assert(sizeof SPLIT_NAMES / sizeof SPLIT_NAMES[0] == DS_SPLIT_COUNT, "split names");

static const char *const TASK_KIND_NAMES[] = {"node_classification", "link_prediction", "other"};
_Static_assert(sizeof TASK_KIND_NAMES / sizeof TASK_KIND_NAMES[0] == DS_TASK_KIND_COUNT,
               "task kind names");

const char *ds_split_name(ds_split_id split) { return SPLIT_NAMES[split]; }
const char *ds_task_kind_name(ds_task_kind kind) { return TASK_KIND_NAMES[kind]; }

/* ---- helpers ---------------------------------------------------------------- */

/* Appends formatted text to err->msg (context after the file's own message). Returns -1. */
static int err_append(cgnn_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int err_append(cgnn_err *err, const char *fmt, ...) {
    if (!err) return -1;
    size_t n = strlen(err->msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - n, fmt, ap);
    va_end(ap);
    return -1;
}

/* "(2708, 1433)", "(140,)", "()". */
static const char *shape_str(const npy_array *a, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int d = 0; d < a->ndim && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%lld%s", (long long)a->shape[d],
                              a->ndim == 1 ? "," : (d + 1 < a->ndim ? ", " : ""));
    if (n < cap) snprintf(buf + n, cap - n, ")");
    return buf;
}

static int node_is_null(const yamldoc_node *n) {
    if (n->kind != YAMLDOC_SCALAR || n->quoted) return 0;
    const char *s = n->scalar;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* map[key] as a node of the given kind. *out is NULL when the key is absent (or null) and not
 * required. Returns 0, or -1 with *err naming the file and field. */
static int get_child(const yamldoc *doc, const yamldoc_node *map, const char *key, yaml_kind kind,
                     int required, const yamldoc_node **out, cgnn_err *err) {
    *out = NULL;
    const yamldoc_node *v = yamldoc_get(map, key);
    if (v && node_is_null(v)) v = NULL;
    if (!v) {
        if (!required) return 0;
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: missing key '%s'", doc->file,
                       map->path[0] ? map->path : "top level", key);
    }
    if (yamldoc_expect_kind(doc, v, kind, err) != 0) return -1;
    *out = v;
    return 0;
}

/* Copies a name (<= DATASET_NAME_MAX-1 bytes) from map[key]. */
static int get_name(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                    char *out, cgnn_err *err) {
    const char *s = NULL;
    if (yamldoc_get_string(doc, map, key, required, &s, err) != 0) return -1;
    if (!s) return 0;
    const yamldoc_node *v = yamldoc_get(map, key);
    if (!*s)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): empty name", doc->file, v->path, v->line);
    if (strlen(s) >= DATASET_NAME_MAX)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): name longer than %d characters",
                       doc->file, v->path, v->line, DATASET_NAME_MAX - 1);
    snprintf(out, DATASET_NAME_MAX, "%s", s);
    return 0;
}

/* A list with exactly one entry, as homogeneous graphs have; returns that entry (a mapping). */
static int get_single_entry(const yamldoc *doc, const yamldoc_node *seq, const char *what,
                            const yamldoc_node **out, cgnn_err *err) {
    if (seq->len != 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): expected exactly one entry %s, got %d (several entries "
                       "need type: keys: a typed dataset)",
                       doc->file, seq->path, seq->line, what, seq->len);
    if (yamldoc_expect_kind(doc, seq->items[0], YAMLDOC_MAPPING, err) != 0) return -1;
    *out = seq->items[0];
    return 0;
}

/* The `format:` of a data file. Edges: numpy or csv; features and task data: numpy or torch (a
 * tensor saved with torch.save, GraphBolt's OnDiskFeatureDataFormat). */
typedef enum data_format { FMT_NUMPY = 1, FMT_CSV = 2, FMT_TORCH = 4 } data_format;

/* Checks map.format (required) is one of the formats in `allowed` (a mask of data_format). */
static int get_format(const yamldoc *doc, const yamldoc_node *map, int allowed, data_format *fmt, cgnn_err *err) {
    const char *s = NULL;
    if (yamldoc_get_string(doc, map, "format", 1, &s, err) != 0) return -1;
    static const struct {
        const char *name;
        data_format fmt;
    } FORMATS[] = {{"numpy", FMT_NUMPY}, {"csv", FMT_CSV}, {"torch", FMT_TORCH}};
    for (size_t i = 0; i < sizeof FORMATS / sizeof FORMATS[0]; i++)
        if ((allowed & (int)FORMATS[i].fmt) && strcmp(s, FORMATS[i].name) == 0) {
            *fmt = FORMATS[i].fmt;
            return 0;
        }
    const yamldoc_node *v = yamldoc_get(map, "format");
    return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): unsupported format '%s' (expected %s)", doc->file, v->path,
                   v->line, s, (allowed & FMT_CSV) ? "numpy or csv" : "numpy or torch");
}

/* map[key], or NULL when the key is absent or null (GraphBolt writes `type: null` for the
 * entries of a homogeneous graph). */
static const yamldoc_node *get_present(const yamldoc_node *map, const char *key) {
    const yamldoc_node *v = yamldoc_get(map, key);
    return v && !node_is_null(v) ? v : NULL;
}

/* 1 when key (at edit distance d from the allowed key `best`) looks like a misspelling of it
 * rather than another word: d <= max(1, len(best) / 3) and d < len(key), or best with two
 * adjacent letters swapped ("nmae"). So "in_memroy", "pth", "typ", "num_clases" are typos;
 * "note" (2 from "name") and "num_categories" are other keys. */
static int looks_like_typo(const char *key, const char *best, int d) {
    const size_t n = strlen(key);
    int limit = (int)strlen(best) / 3;
    if (limit < 1) limit = 1;
    if (d <= limit && d < (int)n) return 1;
    if (n != strlen(best) || n < 2) return 0;
    size_t i = 0;
    while (i < n && key[i] == best[i]) i++;
    return i + 1 < n && key[i] == best[i + 1] && key[i + 1] == best[i] && strcmp(key + i + 2, best + i + 2) == 0;
}

/* GraphBolt's rule for keys (ondisk_metadata.py: extra keys of features and tasks are kept as
 * metadata, other models ignore them): a key of map outside `allowed` is accepted and ignored
 * with a log line, unless it looks like a typo of an allowed key (looks_like_typo), which is an
 * error with "did you mean" (a misspelt in_memory or path would otherwise vanish silently). */
static int check_keys(const yamldoc *doc, const yamldoc_node *map, const char *const *allowed, cgnn_err *err) {
    if (yamldoc_expect_kind(doc, map, YAMLDOC_MAPPING, err) != 0) return -1;
    for (int i = 0; i < map->len; i++) {
        const char *key = map->keys[i];
        const char *best = NULL;
        int best_d = 1 << 30, known = 0;
        for (const char *const *a = allowed; *a && !known; a++) {
            known = strcmp(*a, key) == 0;
            const int d = yamldoc_edit_distance(key, *a);
            if (d < best_d) best_d = d, best = *a;
        }
        if (known) continue;
        if (best && looks_like_typo(key, best, best_d))
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): unknown key '%s'; did you mean '%s'?", doc->file,
                           map->items[i]->path, map->key_lines[i], key, best);
        log_info("%s:%d: %s: key '%.100s' is not one cgnn reads; ignored (GraphBolt keeps extra keys as metadata)",
                 doc->file, map->key_lines[i], map->path[0] ? map->path : "top level", key);
    }
    return 0;
}

/* Resolves map[key] (a path) against the dataset directory into out[cap]. */
static int get_path_key(const dataset *ds, const yamldoc *doc, const yamldoc_node *map, const char *key, char *out,
                        size_t cap, cgnn_err *err) {
    const char *p = NULL;
    if (yamldoc_get_string(doc, map, key, 1, &p, err) != 0) return -1;
    const yamldoc_node *v = yamldoc_get(map, key);
    if (!*p) return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): empty path", doc->file, v->path, v->line);
    int n = p[0] == '/' ? snprintf(out, cap, "%s", p) : snprintf(out, cap, "%s/%s", ds->dir, p);
    if (n < 0 || (size_t)n >= cap)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): path too long", doc->file, v->path, v->line);
    return 0;
}

/* Resolves map.path against the dataset directory into out[cap]. */
static int get_path(const dataset *ds, const yamldoc *doc, const yamldoc_node *map, char *out,
                    size_t cap, cgnn_err *err) {
    return get_path_key(ds, doc, map, "path", out, cap, err);
}

/* Opens the array named by map.path: a .npy (format: numpy, either memory order; mapped) or a
 * tensor saved with torch.save (format: torch; read whole into memory, owned by *a). map.format
 * was checked (get_format) by the caller. On failure the file's message gets
 * " (FIELD.path in META)". */
static int open_array(const dataset *ds, const yamldoc *doc, const yamldoc_node *map, int populate, npy_array *a,
                      cgnn_err *err) {
    char path[4096];
    if (get_path(ds, doc, map, path, sizeof path, err) != 0) return -1;
    const char *fmt = NULL;
    if (yamldoc_get_string(doc, map, "format", 1, &fmt, err) != 0) return -1;
    const int rc = strcmp(fmt, "torch") == 0 ? torch_save_read_npy(a, path, err)
                                             : npy_open_any_order(a, path, populate, err);
    if (rc != 0) return err_append(err, " (%s.path in %s)", map->path, doc->file);
    return 0;
}

/* dst (rows, cols) in C order <- src (rows, cols) column-major (a Fortran-order .npy);
 * elements of `size` bytes. Tiled so both sides are read/written in cache-line runs. */
#define TRANSPOSE_TILE 64
#define TRANSPOSE_TO_C(T)                                                                      \
    static void transpose_to_c_##T(T *restrict dst, const T *restrict src, int64_t rows,       \
                                   int64_t cols) {                                             \
        _Pragma("omp parallel for collapse(2) schedule(static)")                               \
        for (int64_t i0 = 0; i0 < rows; i0 += TRANSPOSE_TILE)                                   \
            for (int64_t j0 = 0; j0 < cols; j0 += TRANSPOSE_TILE) {                             \
                int64_t i1 = i0 + TRANSPOSE_TILE < rows ? i0 + TRANSPOSE_TILE : rows;           \
                int64_t j1 = j0 + TRANSPOSE_TILE < cols ? j0 + TRANSPOSE_TILE : cols;           \
                for (int64_t j = j0; j < j1; j++)                                               \
                    for (int64_t i = i0; i < i1; i++) dst[i * cols + j] = src[i + j * rows];    \
            }                                                                                  \
    }
TRANSPOSE_TO_C(uint8_t)
TRANSPOSE_TO_C(uint16_t)
TRANSPOSE_TO_C(uint32_t)
TRANSPOSE_TO_C(uint64_t)

/* A new C-order copy of the 2-D column-major array a; NULL (with *err) when out of memory. */
static void *copy_to_c_order(const npy_array *a, cgnn_err *err) {
    size_t size = npy_dtype_size(a->dtype);
    int64_t rows = a->shape[0], cols = a->shape[1];
    void *out = malloc((size_t)(rows * cols) * size + 1);
    if (!out) {
        err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory copying a Fortran-order array to C order",
                a->path);
        return NULL;
    }
    switch (size) {
    case 1: transpose_to_c_uint8_t(out, a->data, rows, cols); break;
    case 2: transpose_to_c_uint16_t(out, a->data, rows, cols); break;
    case 4: transpose_to_c_uint32_t(out, a->data, rows, cols); break;
    default: CGNN_CHECK(size == 8); transpose_to_c_uint64_t(out, a->data, rows, cols); break;
    }
    return out;
}

/* ---- graph ------------------------------------------------------------------ */

/* Index of the first edge (column) whose src is outside [0, ns) or dst outside [0, nd), or e if
 * none. An OpenMP min-reduction over all columns, so the answer does not depend on the threads. */
#define FIRST_BAD_COLUMN(T)                                                                    \
    static int64_t first_bad_column_##T(const T *src, const T *dst, int64_t e, int64_t ns,     \
                                        int64_t nd) {                                          \
        int64_t first = e;                                                                     \
        _Pragma("omp parallel for schedule(static) reduction(min : first)")                    \
        for (int64_t i = 0; i < e; i++) {                                                      \
            int64_t s = src[i], d = dst[i];                                                    \
            if ((s < 0 || s >= ns || d < 0 || d >= nd) && i < first) first = i;                \
        }                                                                                      \
        return first;                                                                          \
    }
FIRST_BAD_COLUMN(int32_t)
FIRST_BAD_COLUMN(int64_t)

static int64_t edge_id(const void *ids, npy_dtype dtype, int64_t i) {
    return dtype == NPY_DTYPE_INT32 ? ((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

/* What bounds the src (side 0) or dst (side 1) ids of edge type `index`, for messages:
 * "graph.nodes[0].num" untyped; "graph.nodes[1].num of node type 'paper'; edge type
 * 'author:writes:paper', graph.edges[0]" typed. */
static const char *id_range_what(const dataset *ds, int index, int side, char *buf, size_t cap) {
    const ds_edge_type *et = &ds->edge_types[index];
    const int t = side == 0 ? et->src_type : et->dst_type;
    if (!ds->typed) snprintf(buf, cap, "graph.nodes[%d].num", t);
    else
        snprintf(buf, cap, "graph.nodes[%d].num of node type '%s'; edge type '%s', graph.edges[%d]", t,
                 ds->node_types[t].name, et->name, index);
    return buf;
}

/* Checks every src id of edge type `index` lies in [0, N(src type)) and every dst id in
 * [0, N(dst type)); names the first bad column. */
static int check_edge_ids(const dataset *ds, int index, cgnn_err *err) {
    const ds_edge_type *et = &ds->edge_types[index];
    const ds_edges *e = &et->edges;
    const int64_t ns = ds->node_types[et->src_type].num_nodes, nd = ds->node_types[et->dst_type].num_nodes;
    int64_t bad = e->id_dtype == NPY_DTYPE_INT32
                      ? first_bad_column_int32_t(e->src, e->dst, e->num_edges, ns, nd)
                      : first_bad_column_int64_t(e->src, e->dst, e->num_edges, ns, nd);
    if (bad == e->num_edges) return 0;
    int64_t s = edge_id(e->src, e->id_dtype, bad), d = edge_id(e->dst, e->id_dtype, bad);
    int src_bad = s < 0 || s >= ns;
    char what[768];
    return err_set(err, CGNN_ERR_INPUT, "%s: column %lld: %s id %lld out of range [0, %lld) (%s)", et->path,
                   (long long)bad, src_bad ? "src" : "dst", (long long)(src_bad ? s : d),
                   (long long)(src_bad ? ns : nd), id_range_what(ds, index, src_bad ? 0 : 1, what, sizeof what));
}

/* Parses one integer of a CSV line at *p (spaces allowed before); advances *p. */
static int csv_int(const char **p, int64_t *out) {
    const char *s = *p;
    while (*s == ' ' || *s == '\t') s++;
    const char *start = s;
    if (*s == '+' || *s == '-') s++;
    if (*s < '0' || *s > '9') return -1;
    while (*s >= '0' && *s <= '9') s++;
    char buf[32];
    size_t len = (size_t)(s - start);
    if (len >= sizeof buf) return -1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    if (yamldoc_parse_int(buf, out) != 0) return -1;
    while (*s == ' ' || *s == '\t') s++;
    *p = s;
    return 0;
}

/* 1 when line is a CSV header of two names ("src,dst", "source,target"): two comma-separated
 * fields, each starting with a letter, '_' or a quote. */
static int csv_header_line(const char *line) {
    const char *comma = strchr(line, ',');
    if (!comma || strchr(comma + 1, ',')) return 0;
    const char *f[2] = {line, comma + 1};
    for (int k = 0; k < 2; k++) {
        const char *p = f[k];
        while (*p == ' ' || *p == '\t') p++;
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == '"' || *p == '\''))
            return 0;
    }
    return 1;
}

/* Reads "src,dst" lines (a header line of two names first is skipped, and said) into an owned
 * int64 (2, E) buffer, checking ids as it goes (so a bad id is reported with its line). */
static int load_csv_edges(const dataset *ds, int index, const char *meta, cgnn_err *err) {
    ds_edge_type *et = &ds->edge_types[index];
    const int64_t range[2] = {ds->node_types[et->src_type].num_nodes, ds->node_types[et->dst_type].num_nodes};
    int fd = file_open_regular(et->path, NULL, err);
    if (fd < 0) return err_append(err, " (graph.edges[%d].path in %s)", index, meta);
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot open: %s", et->path, strerror(errno));
    }
    int64_t *src = NULL, *dst = NULL, n = 0, cap = 0, lineno = 0;
    int seen_line = 0; /* a non-blank line was read: a header may only come first */
    char *line = NULL;
    size_t line_cap = 0;
    int rc = 0;
    ssize_t got;
    while ((got = getline(&line, &line_cap, f)) != -1) {
        lineno++;
        const char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (!*p) continue; /* blank line */
        int64_t ids[2];
        if (n == 0 && !seen_line && csv_header_line(line)) {
            seen_line = 1;
            const size_t shown = strcspn(line, "\r\n");
            log_info("%s:%lld: header line '%.*s' skipped", et->path, (long long)lineno, (int)(shown > 60 ? 60 : shown),
                     line);
            continue;
        }
        seen_line = 1;
        p = line;
        int ok = csv_int(&p, &ids[0]) == 0 && *p++ == ',' && csv_int(&p, &ids[1]) == 0;
        if (ok) {
            while (*p == '\r' || *p == '\n') p++;
            ok = *p == '\0' && (ssize_t)(p - line) == got; /* no NUL bytes inside the line */
        }
        if (!ok) {
            size_t shown = strcspn(line, "\r\n");
            rc = err_set(err, CGNN_ERR_INPUT,
                         "%s:%lld: expected two integer columns \"src,dst\" (a header line may only come first), got '%.*s%s'",
                         et->path, (long long)lineno, (int)(shown > 60 ? 60 : shown), line,
                         shown > 60 ? "..." : "");
            break;
        }
        for (int c = 0; c < 2; c++) {
            if (ids[c] < 0 || ids[c] >= range[c]) {
                char what[768];
                rc = err_set(err, CGNN_ERR_INPUT, "%s:%lld: %s id %lld out of range [0, %lld) (%s)", et->path,
                             (long long)lineno, c == 0 ? "src" : "dst", (long long)ids[c], (long long)range[c],
                             id_range_what(ds, index, c, what, sizeof what));
                break;
            }
        }
        if (rc) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            int64_t *ns = realloc(src, (size_t)cap * sizeof *src);
            if (ns) src = ns;
            int64_t *nd = ns ? realloc(dst, (size_t)cap * sizeof *dst) : NULL;
            if (nd) dst = nd;
            if (!ns || !nd) {
                rc = err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory reading edges", et->path);
                break;
            }
        }
        src[n] = ids[0];
        dst[n] = ids[1];
        n++;
    }
    /* getline returns -1 at the end of the file but also when it cannot grow its buffer: only
     * the end of the file ends the edge list */
    if (!rc && (ferror(f) || !feof(f)))
        rc = err_set(err, errno == ENOMEM ? CGNN_ERR_RUNTIME : CGNN_ERR_INPUT, "%s:%lld: read error: %s", et->path,
                     (long long)lineno + 1, strerror(errno ? errno : EIO));
    fclose(f);
    free(line);
    if (!rc) {
        int64_t *owned = malloc((size_t)(2 * n + 1) * sizeof *owned); /* ids (2, E) */
        if (!owned) {
            rc = err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory reading edges", et->path);
        } else {
            if (n) {
                memcpy(owned, src, (size_t)n * sizeof *owned);
                memcpy(owned + n, dst, (size_t)n * sizeof *owned);
            }
            et->owned = owned;
            et->edges = (ds_edges){NPY_DTYPE_INT64, n, owned, owned + n};
        }
    }
    free(src);
    free(dst);
    return rc;
}

/* "author, paper, term" (the declared node types) into buf, for messages. */
static const char *node_type_list(const dataset *ds, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int t = 0; t < ds->num_node_types && n < cap; t++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", t ? ", " : "", ds->node_types[t].name);
    return buf;
}

/* graph.nodes: one {num: N} entry (untyped: the type "_default"), or {type: NAME, num: N}
 * entries, every one typed (names unique, non-empty, without ':'). Sets ds->typed. */
static int load_nodes(dataset *ds, const yamldoc *doc, const yamldoc_node *nodes, cgnn_err *err) {
    static const char *const NODE_KEYS[] = {"type", "num", NULL};
    if (nodes->len == 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): no node entries", doc->file, nodes->path, nodes->line);
    int typed = 0;
    for (int i = 0; i < nodes->len; i++) {
        if (yamldoc_expect_kind(doc, nodes->items[i], YAMLDOC_MAPPING, err) != 0) return -1;
        typed += get_present(nodes->items[i], "type") != NULL;
    }
    if (typed && typed != nodes->len)
        for (int i = 0; i < nodes->len; i++) {
            const yamldoc_node *v = nodes->items[i];
            if (get_present(v, "type") == NULL)
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: %s (line %d): no type: key, but other node entries have one (typed and untyped "
                               "node entries cannot be mixed: give every entry of graph.nodes a type, or use one "
                               "entry without)",
                               doc->file, v->path, v->line);
        }
    ds->typed = typed > 0;
    if (!ds->typed && nodes->len != 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): expected exactly one entry {num: N}, got %d (several node types need "
                       "type: keys)",
                       doc->file, nodes->path, nodes->line, nodes->len);
    ds->node_types = cgnn_calloc((size_t)nodes->len, sizeof *ds->node_types);
    ds->num_node_types = nodes->len;
    int64_t total_nodes = 0;
    for (int i = 0; i < nodes->len; i++) {
        const yamldoc_node *entry = nodes->items[i];
        ds_node_type *nt = &ds->node_types[i];
        if (check_keys(doc, entry, NODE_KEYS, err) != 0) return -1;
        if (ds->typed) {
            if (get_name(doc, entry, "type", 1, nt->name, err) != 0) return -1;
            const yamldoc_node *v = yamldoc_get(entry, "type");
            if (strchr(nt->name, ':'))
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: %s (line %d): node type '%s' contains ':' (reserved for edge types "
                               "\"src:relation:dst\")",
                               doc->file, v->path, v->line, nt->name);
            for (int j = 0; j < i; j++)
                if (strcmp(ds->node_types[j].name, nt->name) == 0)
                    return err_set(err, CGNN_ERR_INPUT,
                                   "%s: %s (line %d): duplicate node type '%s' (also graph.nodes[%d])", doc->file,
                                   v->path, v->line, nt->name, j);
        } else {
            snprintf(nt->name, sizeof nt->name, "_default");
        }
        if (yamldoc_get_int(doc, entry, "num", 1, &nt->num_nodes, err) != 0) return -1;
        if (nt->num_nodes <= 0) {
            const yamldoc_node *v = yamldoc_get(entry, "num");
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): number of nodes must be positive, got %lld",
                           doc->file, v->path, v->line, (long long)nt->num_nodes);
        }
        /* each count and their running sum stay <= 2^48: no per-type offset or size can wrap */
        if (nt->num_nodes > DATASET_MAX_NODES || total_nodes > DATASET_MAX_NODES - nt->num_nodes) {
            const yamldoc_node *v = yamldoc_get(entry, "num");
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): %lld nodes%s: more than cgnn accepts (%lld nodes in all node types "
                           "together)",
                           doc->file, v->path, v->line, (long long)nt->num_nodes,
                           i > 0 ? " (with the node types before it)" : "", (long long)DATASET_MAX_NODES);
        }
        total_nodes += nt->num_nodes;
        nt->own_start = 0; /* a part narrows it (load_partition) */
        nt->own_end = nt->num_nodes;
    }
    return 0;
}

/* Parses entry.type = "src:relation:dst" into et (name, src_type, dst_type): exactly three
 * non-empty parts, src and dst declared node types. */
static int parse_edge_type(const dataset *ds, const yamldoc *doc, const yamldoc_node *entry, ds_edge_type *et,
                           cgnn_err *err) {
    const char *s = NULL;
    if (yamldoc_get_string(doc, entry, "type", 1, &s, err) != 0) return -1;
    const yamldoc_node *v = yamldoc_get(entry, "type");
    const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || strchr(c2 + 1, ':') || c1 == s || c2 == c1 + 1 || !c2[1])
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): edge type '%.200s' is not \"src:relation:dst\" (three non-empty parts "
                       "separated by ':')",
                       doc->file, v->path, v->line, s);
    if (strlen(s) >= sizeof et->name)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): edge type longer than %d characters", doc->file,
                       v->path, v->line, (int)sizeof et->name - 1);
    snprintf(et->name, sizeof et->name, "%s", s);
    char part[sizeof et->name];
    const char *sides[2][2] = {{s, c1}, {c2 + 1, s + strlen(s)}};
    int *types[2] = {&et->src_type, &et->dst_type};
    for (int k = 0; k < 2; k++) {
        snprintf(part, sizeof part, "%.*s", (int)(sides[k][1] - sides[k][0]), sides[k][0]);
        *types[k] = dataset_find_node_type(ds, part);
        if (*types[k] < 0) {
            char list[1024];
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): edge type '%s': %s node type '%s' is not declared in graph.nodes "
                           "(declared: %s)",
                           doc->file, v->path, v->line, s, k == 0 ? "src" : "dst", part,
                           node_type_list(ds, list, sizeof list));
        }
    }
    return 0;
}

/* Loads edge type `index` from its entry ({type:, format: numpy|csv, path}) and validates its ids. */
static int load_edge_type(dataset *ds, const yamldoc *doc, const yamldoc_node *entry, int index, cgnn_err *err) {
    static const char *const EDGE_KEYS[] = {"type", "format", "path", NULL};
    ds_edge_type *et = &ds->edge_types[index];
    if (yamldoc_expect_kind(doc, entry, YAMLDOC_MAPPING, err) != 0) return -1;
    if (check_keys(doc, entry, EDGE_KEYS, err) != 0) return -1;
    const yamldoc_node *tv = get_present(entry, "type");
    if (ds->typed) {
        if (parse_edge_type(ds, doc, entry, et, err) != 0) return -1;
        for (int j = 0; j < index; j++)
            if (strcmp(ds->edge_types[j].name, et->name) == 0)
                return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): duplicate edge type '%s' (also graph.edges[%d])",
                               doc->file, tv->path, tv->line, et->name, j);
    } else {
        if (tv)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): an edge type needs typed node entries (graph.nodes[*].type); this "
                           "graph's node entry has no type: key",
                           doc->file, tv->path, tv->line);
        snprintf(et->name, sizeof et->name, "_default");
        et->src_type = et->dst_type = 0;
    }
    data_format fmt;
    if (get_format(doc, entry, FMT_NUMPY | FMT_CSV, &fmt, err) != 0) return -1;
    if (get_path(ds, doc, entry, et->path, sizeof et->path, err) != 0) return -1;
    if (fmt == FMT_CSV) return load_csv_edges(ds, index, doc->file, err);

    if (npy_open_any_order(&et->file, et->path, 0, err) != 0)
        return err_append(err, " (%s.path in %s)", entry->path, doc->file);
    const npy_array *a = &et->file;
    char sh[96];
    if (a->dtype != NPY_DTYPE_INT32 && a->dtype != NPY_DTYPE_INT64)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: expected int32 or int64 node ids, got %s",
                       et->path, entry->path, npy_dtype_name(a->dtype));
    if (a->ndim != 2 || a->shape[0] != 2)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s: expected shape (2, E) (row 0 src, row 1 dst), got %s", et->path,
                       entry->path, shape_str(a, sh, sizeof sh));
    int64_t e = a->shape[1];
    const char *base = a->data;
    if (a->fortran_order) { /* e.g. np.save(edges.T): (src, dst) pairs; copy to two rows */
        if (!(et->owned = copy_to_c_order(a, err))) return -1;
        base = et->owned;
        log_info("%s: Fortran-order edges copied to C order in memory (%.1f MiB); save them with "
                 "np.save(path, np.ascontiguousarray(edges)) to map the file as it is",
                 et->path, (double)e * 2.0 * (double)npy_dtype_size(a->dtype) / (1024.0 * 1024.0));
    }
    npy_dtype dtype = a->dtype;
    if (et->owned) npy_close(&et->file); /* the copy replaces the mapping */
    et->edges = (ds_edges){dtype, e, base, base + (size_t)e * npy_dtype_size(dtype)};
    return check_edge_ids(ds, index, err);
}

static int load_graph(dataset *ds, const yamldoc *doc, cgnn_err *err) {
    static const char *const GRAPH_KEYS[] = {"nodes", "edges", "feature_data", NULL};
    const yamldoc_node *graph = NULL, *nodes = NULL, *edges = NULL;
    if (get_child(doc, doc->root, "graph", YAMLDOC_MAPPING, 1, &graph, err) != 0) return -1;
    if (check_keys(doc, graph, GRAPH_KEYS, err) != 0) return -1;
    if (get_child(doc, graph, "nodes", YAMLDOC_SEQUENCE, 1, &nodes, err) != 0) return -1;
    if (load_nodes(ds, doc, nodes, err) != 0) return -1;

    /* edges: [{format: numpy|csv, path}] untyped; [{type: "s:r:d", format, path}, ...] typed */
    if (get_child(doc, graph, "edges", YAMLDOC_SEQUENCE, 1, &edges, err) != 0) return -1;
    if (!ds->typed && edges->len != 1)
        return get_single_entry(doc, edges, "{format: numpy, path: ...}", &edges, err);
    if (edges->len == 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): no edge entries", doc->file, edges->path, edges->line);
    ds->edge_types = cgnn_calloc((size_t)edges->len, sizeof *ds->edge_types);
    ds->num_edge_types = edges->len;
    for (int i = 0; i < edges->len; i++)
        if (load_edge_type(ds, doc, edges->items[i], i, err) != 0) return -1;
    return 0;
}

/* ---- partition -------------------------------------------------------------- */

/* Index of the first edge whose dst is outside [lo, hi), or e if none (min-reduction: the
 * answer does not depend on the threads). */
#define FIRST_DST_OUTSIDE(T)                                                                   \
    static int64_t first_dst_outside_##T(const T *dst, int64_t e, int64_t lo, int64_t hi) {    \
        int64_t first = e;                                                                     \
        _Pragma("omp parallel for schedule(static) reduction(min : first)")                    \
        for (int64_t i = 0; i < e; i++)                                                        \
            if ((dst[i] < lo || dst[i] >= hi) && i < first) first = i;                         \
        return first;                                                                          \
    }
FIRST_DST_OUTSIDE(int32_t)
FIRST_DST_OUTSIDE(int64_t)

/* Index of the first edge of et whose dst is outside [lo, hi), or its edge count if none. */
static int64_t first_dst_outside(const ds_edges *e, int64_t lo, int64_t hi) {
    return e->id_dtype == NPY_DTYPE_INT32 ? first_dst_outside_int32_t(e->dst, e->num_edges, lo, hi)
                                          : first_dst_outside_int64_t(e->dst, e->num_edges, lo, hi);
}

/* A typed part's `partition.node_ranges`: one {type, start, end} per node type, in graph.nodes
 * order, each within [0, num) of its type (the whole range for the global splits). */
static int load_node_ranges(dataset *ds, const yamldoc *doc, const yamldoc_node *m, int global, cgnn_err *err) {
    static const char *const RANGE_KEYS[] = {"type", "start", "end", NULL};
    const yamldoc_node *list = NULL;
    if (get_child(doc, m, "node_ranges", YAMLDOC_SEQUENCE, 1, &list, err) != 0) return -1;
    if (list->len != ds->num_node_types)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): %d entries, expected one per node type (%d)",
                       doc->file, list->path, list->line, list->len, ds->num_node_types);
    for (int t = 0; t < list->len; t++) {
        const yamldoc_node *r = list->items[t];
        if (yamldoc_expect_kind(doc, r, YAMLDOC_MAPPING, err) != 0) return -1;
        if (yamldoc_check_keys(doc, r, RANGE_KEYS, err) != 0) return -1;
        const char *name = NULL;
        int64_t s = 0, e = 0;
        if (yamldoc_get_string(doc, r, "type", 1, &name, err) != 0) return -1;
        ds_node_type *nt = &ds->node_types[t];
        if (strcmp(name, nt->name) != 0)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): type '%.200s', expected '%s' (graph.nodes[%d]: the ranges follow "
                           "graph.nodes' order)",
                           doc->file, r->path, r->line, name, nt->name, t);
        if (yamldoc_get_int(doc, r, "start", 1, &s, err) != 0) return -1;
        if (yamldoc_get_int(doc, r, "end", 1, &e, err) != 0) return -1;
        if (s < 0 || s > e || e > nt->num_nodes)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): range [%lld, %lld) of node type '%s' is not within [0, %lld) "
                           "(graph.nodes[%d].num)",
                           doc->file, r->path, r->line, (long long)s, (long long)e, nt->name,
                           (long long)nt->num_nodes, t);
        if (global && (s != 0 || e != nt->num_nodes))
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): the global splits (part: global) cover every node: expected [0, %lld) "
                           "for node type '%s', got [%lld, %lld)",
                           doc->file, r->path, r->line, (long long)nt->num_nodes, nt->name, (long long)s,
                           (long long)e);
        nt->own_start = s;
        nt->own_end = e;
    }
    return 0;
}

/* The optional top-level `partition:` key (see dataset.h): checked field by field, then every
 * edge's dst must be an owned node (a part holds the in-edges of its nodes). */
static int load_partition(dataset *ds, const yamldoc *doc, cgnn_err *err) {
    static const char *const KEYS[] = {"id", "part", "num_parts", "node_start", "node_end", "node_ranges", "graph",
                                       NULL};
    const yamldoc_node *m = NULL;
    if (get_child(doc, doc->root, "partition", YAMLDOC_MAPPING, 0, &m, err) != 0) return -1;
    if (!m) return 0;
    if (yamldoc_check_keys(doc, m, KEYS, err) != 0) return -1;
    ds_partition *pt = &ds->partition;
    const int64_t n = ds->node_types[0].num_nodes;

    const char *id = NULL;
    if (yamldoc_get_string(doc, m, "id", 1, &id, err) != 0) return -1;
    const yamldoc_node *v = yamldoc_get(m, "id");
    size_t idlen = strlen(id);
    int hex = idlen > 0 && idlen < DS_PARTITION_ID_MAX;
    for (size_t i = 0; hex && i < idlen; i++) hex = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f');
    if (!hex)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): expected 1 to %d lowercase hex digits, got '%.80s'",
                       doc->file, v->path, v->line, DS_PARTITION_ID_MAX - 1, id);
    memcpy(pt->id, id, idlen + 1);

    int64_t num_parts = 0, start = 0, end = 0, part = 0;
    if (yamldoc_get_int(doc, m, "num_parts", 1, &num_parts, err) != 0) return -1;
    v = yamldoc_get(m, "num_parts");
    if (num_parts < 1 || num_parts > DS_PARTITION_MAX_PARTS)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): must be in [1, %d], got %lld", doc->file, v->path,
                       v->line, DS_PARTITION_MAX_PARTS, (long long)num_parts);
    v = yamldoc_get(m, "part");
    if (v && v->kind == YAMLDOC_SCALAR && strcmp(v->scalar, "global") == 0) {
        part = DS_PARTITION_GLOBAL;
    } else {
        if (yamldoc_get_int(doc, m, "part", 1, &part, err) != 0) return -1;
        v = yamldoc_get(m, "part");
        if (part < 0 || part >= num_parts)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): part %lld out of range [0, %lld) (num_parts)",
                           doc->file, v->path, v->line, (long long)part, (long long)num_parts);
    }
    if (ds->typed) { /* one range per node type */
        const char *untyped_key = yamldoc_get(m, "node_start") ? "node_start" : yamldoc_get(m, "node_end") ? "node_end" : NULL;
        if (untyped_key) {
            v = yamldoc_get(m, untyped_key);
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): a typed part gives one range per node type (partition.node_ranges), "
                           "not %s",
                           doc->file, v->path, v->line, untyped_key);
        }
        if (load_node_ranges(ds, doc, m, part == DS_PARTITION_GLOBAL, err) != 0) return -1;
        start = ds->node_types[0].own_start;
        end = ds->node_types[0].own_end;
    } else {
        if ((v = yamldoc_get(m, "node_ranges")) != NULL)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): node_ranges is for typed graphs; an untyped part gives node_start and "
                           "node_end",
                           doc->file, v->path, v->line);
        if (yamldoc_get_int(doc, m, "node_start", 1, &start, err) != 0) return -1;
        if (yamldoc_get_int(doc, m, "node_end", 1, &end, err) != 0) return -1;
        if (start < 0 || start > end || end > n)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): node range [%lld, %lld) is not within [0, %lld) (graph.nodes[0].num)",
                           doc->file, m->path, m->line, (long long)start, (long long)end, (long long)n);
        if (part == DS_PARTITION_GLOBAL && (start != 0 || end != n))
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): the global splits (part: global) cover every node: expected [0, %lld), "
                           "got [%lld, %lld)",
                           doc->file, m->path, m->line, (long long)n, (long long)start, (long long)end);
        ds->node_types[0].own_start = start;
        ds->node_types[0].own_end = end;
    }
    if (get_path_key(ds, doc, m, "graph", pt->graph, sizeof pt->graph, err) != 0) return -1;
    pt->part = (int)part;
    pt->num_parts = (int)num_parts;
    pt->node_start = start;
    pt->node_end = end;
    pt->present = 1;

    for (int k = 0; k < ds->num_edge_types; k++) { /* every edge's dst is owned (of its dst type) */
        const ds_edge_type *et = &ds->edge_types[k];
        const ds_node_type *dt = &ds->node_types[et->dst_type];
        const int64_t bad = first_dst_outside(&et->edges, dt->own_start, dt->own_end);
        if (bad < et->edges.num_edges) {
            char tinfo[DATASET_NAME_MAX + 32] = "";
            if (ds->typed) snprintf(tinfo, sizeof tinfo, " of type '%s'", dt->name);
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: column %lld: dst %lld is not a node%s of this part [%lld, %lld) (a part holds the "
                           "in-edges of its nodes; partition in %s)",
                           et->path, (long long)bad, (long long)edge_id(et->edges.dst, et->edges.id_dtype, bad), tinfo,
                           (long long)dt->own_start, (long long)dt->own_end, doc->file);
        }
    }
    return 0;
}

/* ---- features --------------------------------------------------------------- */

/* Index of the first non-finite element of the float array a (NaN or +-Inf), or a->count if
 * none: an OpenMP min-reduction, so the answer does not depend on the threads. float16 is
 * checked on its bits (exponent all ones). Element k of a Fortran-order (rows, dim) array is
 * (k % rows, k / rows). */
#define FIRST_NONFINITE(NAME, T, BAD)                                                          \
    static int64_t NAME(const T *x, int64_t n) {                                               \
        int64_t first = n;                                                                     \
        _Pragma("omp parallel for schedule(static) reduction(min : first)")                    \
        for (int64_t i = 0; i < n; i++)                                                        \
            if (BAD(x[i]) && i < first) first = i;                                             \
        return first;                                                                          \
    }
#define F16_BAD(h) (((h) & 0x7c00u) == 0x7c00u)
#define FLT_BAD(v) (!isfinite(v))
FIRST_NONFINITE(first_nonfinite_f16, uint16_t, F16_BAD)
FIRST_NONFINITE(first_nonfinite_f32, float, FLT_BAD)
FIRST_NONFINITE(first_nonfinite_f64, double, FLT_BAD)

/* Rejects NaN / Inf in a float feature array, naming the file, row and column: a non-finite
 * input would pass through ReLU as 0 and train a silently wrong model. One pass over the data
 * at open (memory bandwidth; see docs/DATASETS.md for what it costs). Integer dtypes are finite. */
static int check_finite(const npy_array *a, int64_t dim, const char *field, cgnn_err *err) {
    int64_t bad;
    switch (a->dtype) {
    case NPY_DTYPE_FLOAT16: bad = first_nonfinite_f16(a->data, a->count); break;
    case NPY_DTYPE_FLOAT32: bad = first_nonfinite_f32(a->data, a->count); break;
    case NPY_DTYPE_FLOAT64: bad = first_nonfinite_f64(a->data, a->count); break;
    default: return 0;
    }
    if (bad == a->count) return 0;
    const int64_t rows = a->shape[0];
    const int64_t row = a->fortran_order ? bad % rows : bad / dim, col = a->fortran_order ? bad / rows : bad % dim;
    double v = a->dtype == NPY_DTYPE_FLOAT32   ? (double)((const float *)a->data)[bad]
               : a->dtype == NPY_DTYPE_FLOAT64 ? ((const double *)a->data)[bad]
               : ((((const uint16_t *)a->data)[bad] & 0x3ffu) ? NAN
                  : (((const uint16_t *)a->data)[bad] & 0x8000u) ? -INFINITY : INFINITY);
    return err_set(err, CGNN_ERR_INPUT,
                   "%s: row %lld, column %lld: feature value is %s (%s); features must be finite", a->path,
                   (long long)row, (long long)col, isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf", field);
}

/* A `domain: graph` feature (GraphBolt's OnDiskFeatureDataDomain.GRAPH: data about the whole
 * graph, no rows per node or edge): its keys, name and format are checked, the file is read and
 * validated (any dtype and shape; float values finite), and it is ignored with a log line. */
static int load_graph_feature(const dataset *ds, const yamldoc *doc, const yamldoc_node *entry, cgnn_err *err) {
    const yamldoc_node *tv = get_present(entry, "type");
    if (tv)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): a domain: graph feature has no type (it is about the "
                       "whole graph)",
                       doc->file, tv->path, tv->line);
    char name[DATASET_NAME_MAX];
    if (get_name(doc, entry, "name", 1, name, err) != 0) return -1;
    data_format fmt;
    if (get_format(doc, entry, FMT_NUMPY | FMT_TORCH, &fmt, err) != 0) return -1;
    int in_memory = 1;
    if (yamldoc_get_bool(doc, entry, "in_memory", 0, &in_memory, err) != 0) return -1;
    npy_array a;
    if (open_array(ds, doc, entry, in_memory, &a, err) != 0) return -1;
    int rc = check_finite(&a, a.ndim >= 2 ? a.shape[a.ndim - 1] : 1, entry->path, err);
    if (rc == 0) {
        char sh[96];
        log_info("%s: %s: graph feature '%s' %s %s read and validated; domain: graph features are ignored by cgnn",
                 a.path, entry->path, name, npy_dtype_name(a.dtype), shape_str(&a, sh, sizeof sh));
    }
    npy_close(&a);
    return rc;
}

/* Loads the feature entry `entry` into *f (zeroed); earlier[0 .. n_earlier) are the entries of
 * the same list loaded before it (for the duplicate check). *skipped = 1 (f untouched) for a
 * domain: graph feature (load_graph_feature). */
static int load_feature(dataset *ds, const yamldoc *doc, const yamldoc_node *entry, ds_feature *f,
                        const ds_feature *earlier, int n_earlier, int *skipped, cgnn_err *err) {
    static const char *const FEATURE_KEYS[] = {"domain", "type", "name", "format", "in_memory", "path", NULL};
    *skipped = 0;
    if (yamldoc_expect_kind(doc, entry, YAMLDOC_MAPPING, err) != 0) return -1;
    if (check_keys(doc, entry, FEATURE_KEYS, err) != 0) return -1;
    const char *domain = NULL;
    if (yamldoc_get_string(doc, entry, "domain", 1, &domain, err) != 0) return -1;
    if (strcmp(domain, "node") == 0) {
        f->domain = DS_DOMAIN_NODE;
    } else if (strcmp(domain, "edge") == 0) {
        f->domain = DS_DOMAIN_EDGE;
    } else if (strcmp(domain, "graph") == 0) {
        *skipped = 1;
        return load_graph_feature(ds, doc, entry, err);
    } else {
        const yamldoc_node *v = yamldoc_get(entry, "domain");
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): expected node, edge or graph, got '%s'",
                       doc->file, v->path, v->line, domain);
    }
    f->type = 0;
    const yamldoc_node *tv = get_present(entry, "type");
    if (ds->typed) { /* a node type for domain node, an edge type for domain edge */
        char tname[sizeof ds->edge_types[0].name];
        const char *s = NULL;
        if (yamldoc_get_string(doc, entry, "type", 1, &s, err) != 0) return -1;
        tv = yamldoc_get(entry, "type");
        snprintf(tname, sizeof tname, "%s", s);
        f->type = f->domain == DS_DOMAIN_NODE ? dataset_find_node_type(ds, tname) : dataset_find_edge_type(ds, tname);
        if (f->type < 0) {
            char list[1024];
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): unknown %s type '%.200s' (%s%s)", doc->file,
                           tv->path, tv->line, domain, s,
                           f->domain == DS_DOMAIN_NODE ? "declared node types: " : "expected one of graph.edges[*].type",
                           f->domain == DS_DOMAIN_NODE ? node_type_list(ds, list, sizeof list) : "");
        }
    } else if (tv) {
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): a type: key needs a typed graph (graph.nodes[*].type); this graph's "
                       "node entry has none",
                       doc->file, tv->path, tv->line);
    }
    if (get_name(doc, entry, "name", 1, f->name, err) != 0) return -1;
    for (int j = 0; j < n_earlier; j++)
        if (earlier[j].domain == f->domain && earlier[j].type == f->type && strcmp(earlier[j].name, f->name) == 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): duplicate %s feature '%s'%s%s%s",
                           doc->file, entry->path, entry->line, domain, f->name, ds->typed ? " of type '" : "",
                           !ds->typed                   ? ""
                           : f->domain == DS_DOMAIN_NODE ? ds->node_types[f->type].name
                                                         : ds->edge_types[f->type].name,
                           ds->typed ? "'" : "");
    data_format fmt;
    if (get_format(doc, entry, FMT_NUMPY | FMT_TORCH, &fmt, err) != 0) return -1;
    f->in_memory = 1;
    if (yamldoc_get_bool(doc, entry, "in_memory", 0, &f->in_memory, err) != 0) return -1;
    if (open_array(ds, doc, entry, f->in_memory, &f->array, err) != 0) return -1;
    if (f->array.owned) f->in_memory = 1; /* format: torch: read whole, whatever in_memory says */

    /* every dtype the readers hold is accepted (GraphBolt keeps any tensor): float32/16/64,
     * uint8, int8, int32 and int64 (gather converts the one training uses to float32) */
    npy_array *a = &f->array;
    char sh[96];
    if (a->ndim != 1 && a->ndim != 2)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: expected shape (rows,) or (rows, dim), got %s",
                       a->path, entry->path, shape_str(a, sh, sizeof sh));
    f->rows = a->shape[0];
    f->dim = a->ndim == 2 ? a->shape[1] : 1;
    /* typed: the rows of the feature's own node / edge type */
    int64_t want = f->domain == DS_DOMAIN_EDGE
                       ? ds->edge_types[f->type].edges.num_edges
                       : ds->node_types[f->type].own_end - ds->node_types[f->type].own_start;
    char what[768];
    if (f->domain == DS_DOMAIN_EDGE)
        snprintf(what, sizeof what, "the number of edges in graph.edges[%d]%s%s%s", f->type,
                 ds->typed ? ", edge type '" : "", ds->typed ? ds->edge_types[f->type].name : "", ds->typed ? "'" : "");
    else if (ds->typed && ds->partition.present)
        snprintf(what, sizeof what, "the part's nodes of type '%s': its partition.node_ranges end - start",
                 ds->node_types[f->type].name);
    else if (ds->typed)
        snprintf(what, sizeof what, "graph.nodes[%d].num of node type '%s'", f->type, ds->node_types[f->type].name);
    else
        snprintf(what, sizeof what, "%s",
                 ds->partition.present ? "the part's nodes: partition.node_end - partition.node_start"
                                       : "graph.nodes[0].num");
    if (f->rows != want)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: has %lld rows, expected %lld (%s)", a->path,
                       entry->path, (long long)f->rows, (long long)want, what);
    if (f->dim == 0 || (a->ndim == 2 && a->shape[1] == 0))
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: has 0 columns per row (shape %s); a feature needs at least one",
                       a->path, entry->path, shape_str(a, sh, sizeof sh));
    if (check_finite(a, f->dim, entry->path, err) != 0) return -1;
    if (a->fortran_order) {
        /* Rows must be contiguous for gathering: one C-order copy in this process (a mapped
         * file would be shared through the page cache instead). */
        if (!(f->owned = copy_to_c_order(a, err))) return -1;
        log_info("%s: Fortran-order feature copied to C order in memory (%.1f MiB); save it with "
                 "np.ascontiguousarray to have it memory-mapped instead",
                 a->path, (double)a->count * (double)npy_dtype_size(a->dtype) / (1024.0 * 1024.0));
        int64_t count = a->count;
        npy_close(a); /* keeps dtype, shape and path */
        a->data = f->owned;
        a->count = count;
        a->fortran_order = 0;
    }
    return 0;
}

static int load_features(dataset *ds, const yamldoc *doc, cgnn_err *err) {
    const yamldoc_node *list;
    if (get_child(doc, doc->root, "feature_data", YAMLDOC_SEQUENCE, 0, &list, err) != 0) return -1;
    if (!list || list->len == 0) return 0;
    ds->features = cgnn_calloc((size_t)list->len, sizeof *ds->features);
    ds->num_features = list->len; /* the slots, zeroed; set to the features kept at the end */
    int edge_features = 0, n = 0;
    for (int i = 0; i < list->len; i++) {
        int skipped;
        if (load_feature(ds, doc, list->items[i], &ds->features[n], ds->features, n, &skipped, err) != 0) return -1;
        if (skipped) continue;
        edge_features += ds->features[n].domain == DS_DOMAIN_EDGE;
        n++;
    }
    ds->num_features = n;
    if (edge_features)
        log_info("%s: %d edge feature%s read and validated; edge features are ignored by training", doc->file,
                 edge_features, edge_features == 1 ? "" : "s");
    return 0;
}

/* graph.feature_data: GraphBolt's sampling-graph attributes (node / edge data it stores in the
 * sampling graph, e.g. edge weights for weighted sampling). Each entry is read and validated as a
 * feature_data entry is (rows of its node / edge type), then released: cgnn samples uniformly
 * and does not use them (a log line says so). */
static int load_graph_features(dataset *ds, const yamldoc *doc, cgnn_err *err) {
    const yamldoc_node *graph = yamldoc_get(doc->root, "graph"), *list = NULL;
    if (get_child(doc, graph, "feature_data", YAMLDOC_SEQUENCE, 0, &list, err) != 0) return -1;
    if (!list || list->len == 0) return 0;
    ds_feature *fs = cgnn_calloc((size_t)list->len, sizeof *fs);
    int n = 0, rc = 0;
    for (int i = 0; i < list->len && rc == 0; i++) {
        int skipped;
        rc = load_feature(ds, doc, list->items[i], &fs[n], fs, n, &skipped, err);
        if (rc == 0 && !skipped) n++;
    }
    if (rc == 0 && n > 0)
        log_info("%s: %d graph.feature_data entr%s (GraphBolt's sampling-graph attributes) read and validated; cgnn "
                 "samples uniformly and does not use them",
                 doc->file, n, n == 1 ? "y" : "ies");
    for (int i = 0; i < list->len; i++) {
        npy_close(&fs[i].array);
        free(fs[i].owned);
    }
    free(fs);
    return rc;
}

/* ---- tasks ------------------------------------------------------------------ */

/* The data of a split cgnn reads, by name; the last two only in GraphBolt's older form. */
enum { SPLIT_SEEDS, SPLIT_LABELS, SPLIT_INDEXES, SPLIT_NEG_DSTS, SPLIT_NEG_SRCS, SPLIT_DATA_COUNT };
/* GraphBolt's names, and the older ones its item sampler still converts (item_sampler.py,
 * minibatcher_default): seed_nodes is seeds; node_pairs (M, 2) is seeds, and with negative_dsts
 * (M, K) it becomes seeds (M + M K, 2) = the pairs, then (src_i, negative_dsts[i][j]) row by row,
 * labels 1 then 0, indexes i then i repeated K times (_construct_seeds). */
static const struct {
    const char *name;
    int slot;
} SPLIT_DATA_NAMES[] = {{"seeds", SPLIT_SEEDS},          {"labels", SPLIT_LABELS},
                        {"indexes", SPLIT_INDEXES},      {"seed_nodes", SPLIT_SEEDS},
                        {"node_pairs", SPLIT_SEEDS},     {"negative_dsts", SPLIT_NEG_DSTS},
                        {"negative_srcs", SPLIT_NEG_SRCS}};
#define N_SPLIT_DATA_NAMES ((int)(sizeof SPLIT_DATA_NAMES / sizeof SPLIT_DATA_NAMES[0]))

/* Element src of a: an integer dtype's value is returned; a float dtype's goes to *fv (the
 * return value is then 0) and *is_float is set. */
static int64_t element_int(const npy_array *a, int64_t src, double *fv, int *is_float) {
    *is_float = !npy_dtype_is_int(a->dtype);
    if (!*is_float) return npy_get_int(a, src);
    if (a->dtype == NPY_DTYPE_FLOAT32) {
        *fv = ((const float *)a->data)[src];
    } else if (a->dtype == NPY_DTYPE_FLOAT64) {
        *fv = ((const double *)a->data)[src];
    } else { /* float16: sign, 5-bit exponent, 10-bit mantissa */
        const uint16_t h = ((const uint16_t *)a->data)[src];
        const int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
        const double v = e == 0 ? ldexp(mant, -24) : e == 31 ? (mant ? NAN : INFINITY) : ldexp(mant | 0x400, e - 25);
        *fv = (h & 0x8000u) ? -v : v;
    }
    return 0;
}

/* Copies a 1-D or 2-D array (either memory order) of any dtype into a new C-order int64 buffer
 * *out of a->count elements. Float values (GraphBolt's tutorials save link-prediction labels as
 * float64, its tests as float32) must be integers; the first that is not is an error naming the
 * file, row and `what`. */
static int to_int64(const npy_array *a, const char *what, const char *field, int64_t **out, cgnn_err *err) {
    int64_t *o = cgnn_malloc((size_t)(a->count ? a->count : 1) * sizeof *o);
    const int64_t rows = a->shape[0], cols = a->ndim == 2 ? a->shape[1] : 1;
    for (int64_t k = 0; k < a->count; k++) {
        const int64_t src = a->fortran_order ? (k % cols) * rows + k / cols : k;
        double fv = 0;
        int is_float;
        o[k] = element_int(a, src, &fv, &is_float);
        if (!is_float) continue;
        if (!(fv == floor(fv) && fv >= -9223372036854775808.0 && fv < 9223372036854775808.0)) {
            free(o);
            return err_set(err, CGNN_ERR_INPUT, "%s: row %lld: %s value %g is not an integer (%s)", a->path,
                           (long long)(k / cols), what, fv, field);
        }
        o[k] = (int64_t)fv;
    }
    *out = o;
    return 0;
}

/* Opens one data entry of a split, checks its shape is (m,) — or (m, 1); with wide, (m, K) for
 * any K >= 1 (*cols = K, else 1; cols may be NULL) — and returns its values as an owned int64 array (m, K) (the
 * file is closed). Any dtype: integers, or floats holding integers (to_int64). */
static int load_split_ints(const dataset *ds, const yamldoc *doc, const yamldoc_node *entry, const char *what,
                           int64_t m, const char *seeds_path, int wide, int64_t **out, int64_t *cols,
                           char path_out[4096], cgnn_err *err) {
    int in_memory = 1;
    if (yamldoc_get_bool(doc, entry, "in_memory", 0, &in_memory, err) != 0) return -1;
    npy_array a;
    if (open_array(ds, doc, entry, in_memory, &a, err) != 0) return -1;
    snprintf(path_out, 4096, "%s", a.path);
    char sh[96];
    int rc = 0;
    if (wide ? !(a.ndim == 2 && a.shape[1] >= 1) : !(a.ndim == 1 || (a.ndim == 2 && a.shape[1] == 1)))
        rc = err_set(err, CGNN_ERR_INPUT, "%s: %s (%s): expected shape (%lld%s), got %s", a.path, what, entry->path,
                     (long long)m, wide ? ", K" : ",", shape_str(&a, sh, sizeof sh));
    else if (a.shape[0] != m)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: %s (%s): has %lld rows, but the seeds have %lld (%s)",
                     a.path, what, entry->path, (long long)a.shape[0], (long long)m, seeds_path);
    if (!rc) rc = to_int64(&a, what, entry->path, out, err);
    if (cols) *cols = a.ndim == 2 ? a.shape[1] : 1;
    npy_close(&a);
    return rc;
}

typedef struct index_row {
    int64_t index, row;
} index_row;

static int index_row_cmp(const void *a, const void *b) {
    const index_row *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* GraphBolt `indexes` group the rows of one query: every row of a group (positives and listed
 * negatives alike) must have the same anchor (seeds[:, 0]). Names the first two rows that
 * disagree. */
static int check_index_groups(const ds_split *sp, const char *ipath, const char *where, cgnn_err *err) {
    const int64_t m = sp->num_items;
    index_row *ir = cgnn_malloc((size_t)(m + 1) * sizeof *ir);
    for (int64_t i = 0; i < m; i++) ir[i] = (index_row){sp->indexes[i], i};
    qsort(ir, (size_t)m, sizeof *ir, index_row_cmp);
    int rc = 0;
    for (int64_t i = 1, start = 0; i < m && rc == 0; i++) {
        if (ir[i].index != ir[i - 1].index) {
            start = i; /* the group's first row (lowest row number) is its reference */
            continue;
        }
        const int64_t ra = ir[start].row, rb = ir[i].row;
        if (sp->seeds[2 * ra] != sp->seeds[2 * rb])
            rc = err_set(err, CGNN_ERR_INPUT,
                         "%s: rows %lld and %lld share index %lld but have different anchors (%lld in row %lld, %lld "
                         "in row %lld of %s) (%s: a group lists the candidates of one anchor)",
                         ipath, (long long)ra, (long long)rb, (long long)ir[i].index, (long long)sp->seeds[2 * ra],
                         (long long)ra, (long long)sp->seeds[2 * rb], (long long)rb, sp->seeds_path, where);
    }
    free(ir);
    return rc;
}

/* GraphBolt's older link-prediction form (item_sampler.py, _construct_seeds): sp holds the M
 * positive node_pairs (M, 2); negative_dsts (M, K) in `entry` gives K negative destinations per
 * pair, each checked against [0, n_dst) (n_dst <= 0: not here; `where` names the split). Rebuilds sp as seeds (M + M K, 2): the pairs, then (src_i, negative_dsts[i][j]) for i, j
 * in row order; labels 1 (the pairs) then 0; indexes i, then i repeated K times. */
static int expand_negative_dsts(const dataset *ds, const yamldoc *doc, const yamldoc_node *entry, int64_t n_dst,
                                const char *where, ds_split *sp, cgnn_err *err) {
    const int64_t m = sp->num_items;
    int64_t *neg = NULL, k = 1;
    if (load_split_ints(ds, doc, entry, "negative_dsts", m, sp->seeds_path, 1, &neg, &k, sp->labels_path, err) != 0)
        return -1;
    for (int64_t q = 0; n_dst > 0 && q < m * k; q++) /* named here: the seeds check would name rows of the built seeds */
        if (neg[q] < 0 || neg[q] >= n_dst) {
            err_set(err, CGNN_ERR_INPUT, "%s: row %lld, column %lld: negative destination %lld out of range [0, %lld) (%s)",
                    sp->labels_path, (long long)(q / k), (long long)(q % k), (long long)neg[q], (long long)n_dst, where);
            free(neg);
            return -1;
        }
    sp->labels_path[0] = '\0'; /* (the labels are built, not read) */
    if (k > (INT64_MAX / 2 / (int64_t)sizeof(int64_t) - 1) / (m ? m : 1)) {
        free(neg);
        return err_set(err, CGNN_ERR_INPUT, "%s: %lld x %lld negatives: too many", entry->path, (long long)m,
                       (long long)k);
    }
    const int64_t total = m * (k + 1);
    int64_t *seeds = cgnn_malloc((size_t)(2 * total + 1) * sizeof *seeds);
    sp->labels = cgnn_malloc((size_t)(total + 1) * sizeof *sp->labels);
    sp->indexes = cgnn_malloc((size_t)(total + 1) * sizeof *sp->indexes);
    memcpy(seeds, sp->seeds, (size_t)(2 * m) * sizeof *seeds);
    for (int64_t i = 0; i < m; i++) {
        sp->labels[i] = 1;
        sp->indexes[i] = i;
        for (int64_t j = 0; j < k; j++) {
            const int64_t r = m + i * k + j;
            seeds[2 * r] = sp->seeds[2 * i];
            seeds[2 * r + 1] = neg[i * k + j];
            sp->labels[r] = 0;
            sp->indexes[r] = i;
        }
    }
    free(neg);
    free(sp->seeds);
    sp->seeds = seeds;
    sp->num_items = total;
    snprintf(sp->indexes_path, sizeof sp->indexes_path, "%s", sp->seeds_path);
    log_info("%s: %lld node pairs with %lld negative destinations each: %lld seeds, labels and indexes", sp->seeds_path,
             (long long)m, (long long)k, (long long)total);
    return 0;
}

/* Loads one split of task t into sp: `entry`, the {type:, data: [...]} item of the split's list
 * `set` that load_task chose. */
static int load_split(dataset *ds, const yamldoc *doc, const yamldoc_node *set, const yamldoc_node *entry,
                      ds_task *t, ds_split *sp, cgnn_err *err) {
    static const char *const SET_KEYS[] = {"type", "data", NULL};
    static const char *const DATA_KEYS[] = {"name", "format", "path", "in_memory", NULL};
    const yamldoc_node *data = NULL;
    if (check_keys(doc, entry, SET_KEYS, err) != 0) return -1;

    /* typed: the set's type names a node type (node classification) or an edge type (link
     * prediction); which one the seeds need is checked once their shape is known */
    const char *split_name = strrchr(set->path, '.') ? strrchr(set->path, '.') + 1 : set->path;
    const yamldoc_node *tv = get_present(entry, "type");
    int type = 0, type_is_edge = 0;
    if (ds->typed) {
        const char *tname = NULL;
        if (yamldoc_get_string(doc, entry, "type", 1, &tname, err) != 0) return -1;
        tv = yamldoc_get(entry, "type");
        type = dataset_find_node_type(ds, tname);
        if (type < 0 && (type = dataset_find_edge_type(ds, tname)) >= 0) type_is_edge = 1;
        if (type < 0) {
            char list[1024];
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): task '%s', %s: unknown type '%.200s' (neither a node type of "
                           "graph.nodes [%s] nor an edge type of graph.edges)",
                           doc->file, tv->path, tv->line, t->name, split_name, tname,
                           node_type_list(ds, list, sizeof list));
        }
    } else if (tv) {
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): task '%s', %s: a type: key needs a typed graph (graph.nodes[*].type); "
                       "this graph's node entry has none",
                       doc->file, tv->path, tv->line, t->name, split_name);
    }
    if (get_child(doc, entry, "data", YAMLDOC_SEQUENCE, 1, &data, err) != 0) return -1;

    const yamldoc_node *parts[SPLIT_DATA_COUNT] = {NULL};
    const char *part_names[SPLIT_DATA_COUNT] = {NULL};
    for (int i = 0; i < data->len; i++) {
        const yamldoc_node *d = data->items[i];
        if (yamldoc_expect_kind(doc, d, YAMLDOC_MAPPING, err) != 0) return -1;
        if (check_keys(doc, d, DATA_KEYS, err) != 0) return -1;
        data_format fmt;
        if (get_format(doc, d, FMT_NUMPY | FMT_TORCH, &fmt, err) != 0) return -1;
        const char *name = NULL;
        if (yamldoc_get_string(doc, d, "name", 0, &name, err) != 0) return -1;
        const yamldoc_node *nv = get_present(d, "name");
        if (!nv) { /* GraphBolt: name is optional; an unnamed item is passed through to the batch */
            log_info("%s:%d: %s: data entry without a name; not read (cgnn reads seeds, labels and indexes)",
                     doc->file, d->line, d->path);
            continue;
        }
        int k = 0;
        while (k < N_SPLIT_DATA_NAMES && strcmp(name, SPLIT_DATA_NAMES[k].name) != 0) k++;
        if (k == N_SPLIT_DATA_NAMES) { /* GraphBolt adds other names to the batch as they are */
            log_info("%s:%d: %s: data '%.100s' is not one cgnn reads (seeds, labels, indexes); not read", doc->file,
                     nv->line, nv->path, name);
            continue;
        }
        const int slot = SPLIT_DATA_NAMES[k].slot;
        if (parts[slot])
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): duplicate '%s' entry%s%s%s", doc->file, nv->path,
                           nv->line, name, strcmp(name, part_names[slot]) ? " (the same data as '" : "",
                           strcmp(name, part_names[slot]) ? part_names[slot] : "",
                           strcmp(name, part_names[slot]) ? "')" : "");
        if (k >= 3 && k <= 5) /* (negative_srcs: refused below) */
            log_info("%s:%d: %s: '%s' is GraphBolt's older name; read as %s", doc->file, nv->line, nv->path, name,
                     k == 3 || k == 4 ? "seeds" : "negative destinations: seeds, labels and indexes built as GraphBolt's "
                                                  "item sampler builds them");
        parts[slot] = d;
        part_names[slot] = SPLIT_DATA_NAMES[k].name;
    }
    if (!parts[SPLIT_SEEDS])
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): no 'seeds' entry", doc->file,
                       data->path, data->line);
    if (parts[SPLIT_NEG_SRCS]) {
        const yamldoc_node *v = get_present(parts[SPLIT_NEG_SRCS], "name");
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): negative_srcs (negatives that replace the source) are not supported: cgnn "
                       "ranks the candidate destinations of one source per query; give negative_dsts, or seeds / "
                       "labels / indexes whose groups share their source",
                       doc->file, v->path, v->line);
    }
    const int neg_dsts = parts[SPLIT_NEG_DSTS] != NULL;
    if (neg_dsts && strcmp(part_names[SPLIT_SEEDS], "node_pairs") != 0) {
        const yamldoc_node *v = get_present(parts[SPLIT_NEG_DSTS], "name");
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): negative_dsts go with node_pairs (GraphBolt's older "
                       "form), not with %s",
                       doc->file, v->path, v->line, part_names[SPLIT_SEEDS]);
    }
    for (int k = SPLIT_LABELS; neg_dsts && k <= SPLIT_INDEXES; k++)
        if (parts[k]) { /* GraphBolt's item sampler replaces them by the ones it builds */
            log_info("%s:%d: %s: %s not read: with node_pairs and negative_dsts they are built (1 / 0, pair index), "
                     "as GraphBolt does",
                     doc->file, parts[k]->line, parts[k]->path, part_names[k]);
            parts[k] = NULL;
        }

    /* seeds: (M,) node ids -> node classification; (M, 2) pairs -> link prediction */
    const yamldoc_node *sd = parts[SPLIT_SEEDS];
    int in_memory = 1;
    if (yamldoc_get_bool(doc, sd, "in_memory", 0, &in_memory, err) != 0) return -1;
    npy_array a;
    if (open_array(ds, doc, sd, in_memory, &a, err) != 0) return -1;
    snprintf(sp->seeds_path, sizeof sp->seeds_path, "%s", a.path);
    char sh[96];
    int rc = 0;
    const int pairs_only = strcmp(part_names[SPLIT_SEEDS], "node_pairs") == 0;
    const int nodes_only = strcmp(part_names[SPLIT_SEEDS], "seed_nodes") == 0;
    if (a.dtype != NPY_DTYPE_INT32 && a.dtype != NPY_DTYPE_INT64)
        rc = err_set(err, CGNN_ERR_INPUT, "%s: %s (%s): expected int32 or int64 node ids, got %s",
                     a.path, part_names[SPLIT_SEEDS], sd->path, npy_dtype_name(a.dtype));
    else if (a.ndim == 1 && !pairs_only)
        sp->seed_width = 1;
    else if (a.ndim == 2 && a.shape[1] == 2 && !nodes_only)
        sp->seed_width = 2;
    else
        rc = err_set(err, CGNN_ERR_INPUT, "%s: %s (%s): expected shape %s, got %s", a.path, part_names[SPLIT_SEEDS],
                     sd->path,
                     pairs_only ? "(M, 2) node pairs" : nodes_only ? "(N,) node ids"
                                                        : "(N,) node ids or (M, 2) node pairs",
                     shape_str(&a, sh, sizeof sh));
    if (rc) {
        npy_close(&a);
        return -1;
    }
    sp->num_items = a.shape[0];
    rc = to_int64(&a, "seed", sd->path, &sp->seeds, err);
    npy_close(&a);
    if (rc) return -1;
    if (neg_dsts) { /* the pairs' dst node type: the edge type's (typed), else the one node type */
        const int64_t n_dst = !ds->typed ? ds->node_types[0].num_nodes
                              : type_is_edge ? ds->node_types[ds->edge_types[type].dst_type].num_nodes
                                             : 0; /* (refused below: pairs need an edge type) */
        if (expand_negative_dsts(ds, doc, parts[SPLIT_NEG_DSTS], n_dst, set->path, sp, err) != 0) return -1;
    }
    if (ds->typed && type_is_edge != (sp->seed_width == 2))
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: seeds (%s): %s, but the set's type '%s' (%s, line %d) is %s",
                       sp->seeds_path, sd->path,
                       sp->seed_width == 2 ? "(M, 2) node pairs need an edge type (link prediction)"
                                           : "(N,) node ids need a node type (node classification)",
                       type_is_edge ? ds->edge_types[type].name : ds->node_types[type].name, doc->file, tv->line,
                       type_is_edge ? "an edge type" : "a node type");
    /* the node type of each seed column: untyped 0; NC the set's type; LP its src / dst types */
    int col_type[2] = {0, 0};
    if (type_is_edge) {
        col_type[0] = ds->edge_types[type].src_type;
        col_type[1] = ds->edge_types[type].dst_type;
    } else {
        col_type[0] = col_type[1] = type;
    }
    char where[512];
    snprintf(where, sizeof where, "%s", set->path); /* "tasks[0].train_set" */
    for (int64_t i = 0; i < sp->num_items * sp->seed_width; i++) {
        const int ct = col_type[i % sp->seed_width];
        const int64_t n = ds->node_types[ct].num_nodes;
        if (sp->seeds[i] < 0 || sp->seeds[i] >= n) {
            char tinfo[400] = "";
            if (ds->typed)
                snprintf(tinfo, sizeof tinfo, "; %s%s node type '%s', graph.nodes[%d].num",
                         sp->seed_width == 2 ? (i % 2 ? "column 1: dst" : "column 0: src") : "",
                         sp->seed_width == 2 ? " " : "", ds->node_types[ct].name, ct);
            return err_set(err, CGNN_ERR_INPUT, "%s: row %lld: seed %lld out of range [0, %lld) (%s%s)",
                           sp->seeds_path, (long long)(i / sp->seed_width), (long long)sp->seeds[i],
                           (long long)n, where, tinfo);
        }
    }
    if (ds->partition.present) { /* a part's seeds (a pair's anchor) are its own nodes */
        const int64_t lo = ds->node_types[col_type[0]].own_start, hi = ds->node_types[col_type[0]].own_end;
        for (int64_t i = 0; i < sp->num_items; i++) {
            const int64_t anchor = sp->seeds[i * sp->seed_width];
            if (anchor < lo || anchor >= hi)
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: row %lld: %s %lld is not a node of this part [%lld, %lld) (%s; partition in %s)",
                               sp->seeds_path, (long long)i, sp->seed_width == 2 ? "anchor" : "seed", (long long)anchor,
                               (long long)lo, (long long)hi, where, doc->file);
        }
    }

    ds_task_kind kind = sp->seed_width == 1 ? DS_TASK_NODE_CLASSIFICATION : DS_TASK_LINK_PREDICTION;
    if (t->kind != DS_TASK_OTHER && t->kind != kind)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): seeds are %s (%s) but an earlier split of the task has %s (%s)",
                       doc->file, set->path, set->line,
                       kind == DS_TASK_LINK_PREDICTION ? "(M, 2) node pairs" : "(N,) node ids",
                       ds_task_kind_name(kind),
                       kind == DS_TASK_LINK_PREDICTION ? "(N,) node ids" : "(M, 2) node pairs",
                       ds_task_kind_name(t->kind));
    if (t->kind != DS_TASK_OTHER && t->type != type)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s (line %d): task '%s', %s: type '%s' differs from an earlier split's type '%s'; one type "
                       "per task is supported",
                       doc->file, tv ? tv->path : set->path, tv ? tv->line : set->line, t->name, split_name,
                       type_is_edge ? ds->edge_types[type].name : ds->node_types[type].name,
                       type_is_edge ? ds->edge_types[t->type].name : ds->node_types[t->type].name);
    t->kind = kind;
    t->type = type;

    if (parts[SPLIT_LABELS] && load_split_ints(ds, doc, parts[SPLIT_LABELS], "labels", sp->num_items,
                                               sp->seeds_path, 0, &sp->labels, NULL, sp->labels_path, err) != 0)
        return -1;
    if (sp->labels) { /* read, or built from negative_dsts */
        const char *lpath = sp->labels_path[0] ? sp->labels_path : sp->seeds_path;
        for (int64_t i = 0; i < sp->num_items; i++) {
            int64_t l = sp->labels[i];
            if (l < 0)
                return err_set(err, CGNN_ERR_INPUT, "%s: row %lld: label %lld is negative (%s)", lpath,
                               (long long)i, (long long)l, where);
            if (kind == DS_TASK_LINK_PREDICTION && l > 1)
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: row %lld: label %lld (%s: link-prediction labels are 1 for a positive pair, "
                               "0 for a listed negative)",
                               lpath, (long long)i, (long long)l, where);
            if (kind == DS_TASK_NODE_CLASSIFICATION && t->num_classes <= 0 && l >= DATASET_MAX_CLASSES)
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: row %lld: label %lld: without num_classes the classes are the labels seen, and "
                               "a class id must be below %lld (%s)",
                               lpath, (long long)i, (long long)l, (long long)DATASET_MAX_CLASSES, where);
            if (kind == DS_TASK_NODE_CLASSIFICATION && t->num_classes > 0 && l >= t->num_classes)
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: row %lld: label %lld out of range [0, %lld) (%s; num_classes is %lld)",
                               lpath, (long long)i, (long long)l, (long long)t->num_classes, where,
                               (long long)t->num_classes);
        }
    }
    /* node seeds without labels: GraphBolt loads them (an item set of seeds alone); load_task
     * makes the task DS_TASK_OTHER, which no training task picks */
    if (parts[SPLIT_INDEXES] && load_split_ints(ds, doc, parts[SPLIT_INDEXES], "indexes", sp->num_items,
                                                sp->seeds_path, 0, &sp->indexes, NULL, sp->indexes_path, err) != 0)
        return -1;
    if (sp->indexes) { /* read, or built from negative_dsts */
        const char *ipath = sp->indexes_path;
        for (int64_t i = 0; i < sp->num_items; i++)
            if (sp->indexes[i] < 0)
                return err_set(err, CGNN_ERR_INPUT, "%s: row %lld: index %lld is negative (%s)",
                               ipath, (long long)i, (long long)sp->indexes[i], where);
        if (kind == DS_TASK_LINK_PREDICTION && check_index_groups(sp, ipath, where, err) != 0) return -1;
    }
    sp->present = 1;
    return 0;
}

/* Task keys we read; other keys are task attributes GraphBolt passes through (check_keys). */
static const char *const TASK_KEYS[] = {"name", "num_classes", "train_set", "validation_set",
                                        "test_set", NULL};

/* The set entry's `type:` string, or NULL (absent, not a string: load_split reports it). */
static const char *set_entry_type(const yamldoc_node *entry) {
    const yamldoc_node *v = entry && entry->kind == YAMLDOC_MAPPING ? yamldoc_get(entry, "type") : NULL;
    return v && v->kind == YAMLDOC_SCALAR && !node_is_null(v) ? v->scalar : NULL;
}

/* A typed task's splits may list one set per type (GraphBolt's heterograph tutorial: node
 * classification on user and on item). cgnn trains one type per task, so such a task is read as
 * one task per type, "NAME[TYPE]", each with that type's sets. Writes the distinct types of
 * node's set entries, in the order they first appear, into types[max]; returns how many (0 or 1:
 * the task is read as it is), -1 when there are more than max. */
static int task_set_types(const dataset *ds, const yamldoc_node *node, const char **types, int max) {
    int n = 0;
    if (!ds->typed || !node || node->kind != YAMLDOC_MAPPING) return 0;
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const yamldoc_node *set = yamldoc_get(node, SPLIT_NAMES[s]);
        if (!set || set->kind != YAMLDOC_SEQUENCE) continue;
        for (int i = 0; i < set->len; i++) {
            const char *ty = set_entry_type(set->items[i]);
            int seen = !ty;
            for (int k = 0; k < n && !seen; k++) seen = !strcmp(types[k], ty);
            if (!seen && n == max) return -1;
            if (!seen) types[n++] = ty;
        }
    }
    return n;
}

/* Before a task with sets of several types is read as one task per type: a set type that is
 * neither a node type nor an edge type is the error load_split gives, naming the task as the
 * file names it. 0, or -1 with *err. */
static int check_set_types(const dataset *ds, const yamldoc *doc, const yamldoc_node *node, cgnn_err *err) {
    const yamldoc_node *nv = yamldoc_get(node, "name");
    const char *tname = nv && nv->kind == YAMLDOC_SCALAR && !node_is_null(nv) ? nv->scalar : node->path;
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const yamldoc_node *set = yamldoc_get(node, SPLIT_NAMES[s]);
        for (int i = 0; set && set->kind == YAMLDOC_SEQUENCE && i < set->len; i++) {
            const char *ty = set_entry_type(set->items[i]);
            if (!ty || dataset_find_node_type(ds, ty) >= 0 || dataset_find_edge_type(ds, ty) >= 0) continue;
            const yamldoc_node *tv = yamldoc_get(set->items[i], "type");
            char list[1024];
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s (line %d): task '%.200s', %s: unknown type '%.200s' (neither a node type of "
                           "graph.nodes [%s] nor an edge type of graph.edges)",
                           doc->file, tv->path, tv->line, tname, SPLIT_NAMES[s], ty,
                           node_type_list(ds, list, sizeof list));
        }
    }
    return 0;
}

/* Loads tasks[index] from node; type_filter: the type whose sets it takes (a typed task's sets,
 * task_set_types), NULL: the task's single set per split; rename: the task is one of several
 * types' ("NAME[TYPE]"). */
static int load_task(dataset *ds, const yamldoc *doc, const yamldoc_node *node, int index, const char *type_filter,
                     int rename, cgnn_err *err) {
    ds_task *t = &ds->tasks[index];
    if (yamldoc_expect_kind(doc, node, YAMLDOC_MAPPING, err) != 0) return -1;
    if (check_keys(doc, node, TASK_KEYS, err) != 0) return -1;
    if (get_name(doc, node, "name", 0, t->name, err) != 0) return -1;
    if (!t->name[0]) { /* GraphBolt: a task's name is optional (metadata["name"] is then None) */
        snprintf(t->name, sizeof t->name, "%s", node->path); /* "tasks[1]" */
        if (!rename) log_info("%s:%d: %s has no name; called '%s'", doc->file, node->line, node->path, t->name);
    }
    if (rename) {
        char base[DATASET_NAME_MAX];
        snprintf(base, sizeof base, "%s", t->name);
        const int n = snprintf(t->name, sizeof t->name, "%s[%s]", base, type_filter);
        if (n < 0 || (size_t)n >= sizeof t->name)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): task '%s' of type '%s': the name is too long", doc->file,
                           node->path, node->line, base, type_filter);
    }
    for (int j = 0; j < index; j++)
        if (strcmp(ds->tasks[j].name, t->name) == 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): duplicate task name '%s'",
                           doc->file, node->path, node->line, t->name);
    t->num_classes = 0;
    if (yamldoc_get_int(doc, node, "num_classes", 0, &t->num_classes, err) != 0) return -1;
    const yamldoc_node *ncv = yamldoc_get(node, "num_classes");
    if (ncv && !node_is_null(ncv) && (t->num_classes <= 0 || t->num_classes > DATASET_MAX_CLASSES)) {
        const yamldoc_node *v = ncv;
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): num_classes must be in [1, %lld], got %lld",
                       doc->file, v->path, v->line, (long long)DATASET_MAX_CLASSES, (long long)t->num_classes);
    }
    t->kind = DS_TASK_OTHER; /* until a split says */
    int any = 0;
    for (int s = 0; s < DS_SPLIT_COUNT; s++) {
        const yamldoc_node *set;
        if (get_child(doc, node, SPLIT_NAMES[s], YAMLDOC_SEQUENCE, 0, &set, err) != 0) return -1;
        if (!set || set->len == 0) continue; /* GraphBolt: an empty list is no set (its default) */
        const yamldoc_node *entry = NULL;
        if (type_filter) { /* this type's set of the split, if it has one */
            for (int i = 0; i < set->len; i++) {
                const char *ty = set_entry_type(set->items[i]);
                if (!ty)
                    return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): a set without a type among sets of "
                                   "several types (a typed dataset's sets each name their type)",
                                   doc->file, set->path, set->items[i]->line);
                if (strcmp(ty, type_filter) != 0) continue;
                if (entry)
                    return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): two sets of type '%s' (one per type)",
                                   doc->file, set->path, set->items[i]->line, type_filter);
                entry = set->items[i];
            }
            if (!entry) continue;
        } else if (get_single_entry(doc, set, "{data: [...]}", &entry, err) != 0) {
            return -1;
        }
        if (load_split(ds, doc, set, entry, t, &t->splits[s], err) != 0) return -1;
        any = 1;
    }
    if (!any)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): no train_set, validation_set or test_set",
                       doc->file, node->path, node->line);
    for (int s = 0; s < DS_SPLIT_COUNT && t->kind == DS_TASK_NODE_CLASSIFICATION; s++)
        if (t->splits[s].present && !t->splits[s].labels) {
            log_info("%s: task '%s': %s has node seeds without labels: read and validated, but node classification "
                     "needs labels, so no training task uses this task",
                     doc->file, t->name, SPLIT_NAMES[s]);
            t->kind = DS_TASK_OTHER;
        }
    return 0;
}

static int load_tasks(dataset *ds, const yamldoc *doc, cgnn_err *err) {
    const yamldoc_node *list;
    if (get_child(doc, doc->root, "tasks", YAMLDOC_SEQUENCE, 0, &list, err) != 0) return -1;
    if (!list || list->len == 0) return 0;
    enum { MAX_SET_TYPES = 64 };
    const char *types[MAX_SET_TYPES];
    int total = 0;
    for (int i = 0; i < list->len; i++) {
        const int n = task_set_types(ds, list->items[i], types, MAX_SET_TYPES);
        if (n < 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): sets of more than %d types", doc->file,
                           list->items[i]->path, list->items[i]->line, MAX_SET_TYPES);
        total += n > 1 ? n : 1;
    }
    ds->tasks = cgnn_calloc((size_t)total, sizeof *ds->tasks);
    ds->num_tasks = total;
    for (int i = 0, k = 0; i < list->len; i++) {
        const int n = task_set_types(ds, list->items[i], types, MAX_SET_TYPES);
        if (n <= 1) { /* (typed: the one type's sets, so that two sets of it are an error naming it) */
            if (load_task(ds, doc, list->items[i], k++, n == 1 ? types[0] : NULL, 0, err) != 0) return -1;
            continue;
        }
        if (check_set_types(ds, doc, list->items[i], err) != 0) return -1;
        char names[1024] = "";
        size_t len = 0;
        for (int j = 0; j < n; j++) {
            if (load_task(ds, doc, list->items[i], k++, types[j], 1, err) != 0) return -1;
            const int w = snprintf(names + len, sizeof names - len, "%s'%s'", j ? ", " : "", ds->tasks[k - 1].name);
            if (w > 0 && (size_t)w < sizeof names - len) len += (size_t)w;
        }
        log_info("%s: %s (line %d) has sets of %d types: read as the tasks %s (cgnn trains one type per task; the "
                 "config's supervision type picks one)",
                 doc->file, list->items[i]->path, list->items[i]->line, n, names);
    }
    return 0;
}

/* ---- open / close ----------------------------------------------------------- */

static int load_all(dataset *ds, const yamldoc *doc, cgnn_err *err) {
    static const char *const TOP_KEYS[] = {"dataset_name", "graph", "feature_data", "tasks", "partition", NULL};
    if (yamldoc_expect_kind(doc, doc->root, YAMLDOC_MAPPING, err) != 0) return -1;
    if (check_keys(doc, doc->root, TOP_KEYS, err) != 0) return -1;

    if (get_name(doc, doc->root, "dataset_name", 0, ds->name, err) != 0) return -1;
    if (!ds->name[0]) { /* default: the directory's name */
        const char *slash = strrchr(ds->dir, '/');
        const char *base = slash && slash[1] ? slash + 1 : ds->dir;
        snprintf(ds->name, sizeof ds->name, "%.*s", DATASET_NAME_MAX - 1, base);
    }
    if (load_graph(ds, doc, err) != 0) return -1;
    if (load_partition(ds, doc, err) != 0) return -1;
    if (load_graph_features(ds, doc, err) != 0) return -1;
    if (load_features(ds, doc, err) != 0) return -1;
    return load_tasks(ds, doc, err);
}

int dataset_open(dataset *ds, const char *path, cgnn_err *err) {
    memset(ds, 0, sizeof *ds);
    struct stat st;
    if (stat(path, &st) != 0) return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    char meta[sizeof ds->dir + 16];
    size_t len = strlen(path);
    if (len >= sizeof ds->dir) return err_set(err, CGNN_ERR_INPUT, "%s: path too long", path);
    if (S_ISDIR(st.st_mode)) {
        while (len > 1 && path[len - 1] == '/') len--; /* "data/cora/" -> "data/cora" */
        snprintf(ds->dir, sizeof ds->dir, "%.*s", (int)len, path);
        snprintf(meta, sizeof meta, "%s/metadata.yaml", ds->dir);
    } else {
        snprintf(meta, sizeof meta, "%s", path);
        const char *slash = strrchr(path, '/');
        if (!slash)
            snprintf(ds->dir, sizeof ds->dir, ".");
        else if (slash == path)
            snprintf(ds->dir, sizeof ds->dir, "/");
        else
            snprintf(ds->dir, sizeof ds->dir, "%.*s", (int)(slash - path), path);
    }
    yamldoc doc;
    int rc = yamldoc_load(&doc, meta, err);
    if (rc == 0) rc = load_all(ds, &doc, err);
    yamldoc_free(&doc);
    if (rc != 0) dataset_close(ds);
    return rc;
}

void dataset_close(dataset *ds) {
    if (!ds) return;
    for (int i = 0; i < ds->num_edge_types; i++) {
        npy_close(&ds->edge_types[i].file);
        free(ds->edge_types[i].owned);
    }
    free(ds->edge_types);
    free(ds->node_types);
    for (int i = 0; i < ds->num_features; i++) {
        npy_close(&ds->features[i].array);
        free(ds->features[i].owned);
    }
    free(ds->features);
    for (int i = 0; i < ds->num_tasks; i++) {
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            ds_split *sp = &ds->tasks[i].splits[s];
            free(sp->seeds);
            free(sp->labels);
            free(sp->indexes);
        }
    }
    free(ds->tasks);
    memset(ds, 0, sizeof *ds);
}

/* ---- lookups ---------------------------------------------------------------- */

const ds_feature *dataset_find_feature(const dataset *ds, ds_domain domain, int type, const char *name) {
    for (int i = 0; i < ds->num_features; i++) {
        const ds_feature *f = &ds->features[i];
        if (f->domain == domain && f->type == type && strcmp(f->name, name) == 0) return f;
    }
    return NULL;
}

const ds_feature *dataset_node_feature(const dataset *ds, int type, const char *name) {
    if (name && *name) return dataset_find_feature(ds, DS_DOMAIN_NODE, type, name);
    const ds_feature *f = dataset_find_feature(ds, DS_DOMAIN_NODE, type, "feat");
    for (int i = 0; i < ds->num_features && !f; i++)
        if (ds->features[i].domain == DS_DOMAIN_NODE && ds->features[i].type == type) f = &ds->features[i];
    return f;
}

int dataset_node_feature_names(const dataset *ds, int type, char *out, size_t cap) {
    int n = 0;
    size_t len = 0;
    if (cap) out[0] = '\0';
    for (int i = 0; i < ds->num_features; i++) {
        const ds_feature *f = &ds->features[i];
        if (f->domain != DS_DOMAIN_NODE || f->type != type) continue;
        const int w = snprintf(out + len, cap > len ? cap - len : 0, "%s%s", n ? ", " : "", f->name);
        if (w > 0 && len + (size_t)w < cap) len += (size_t)w;
        n++;
    }
    return n;
}

const ds_task *dataset_find_task(const dataset *ds, const char *name) {
    for (int i = 0; i < ds->num_tasks; i++)
        if (strcmp(ds->tasks[i].name, name) == 0) return &ds->tasks[i];
    return NULL;
}

int dataset_find_node_type(const dataset *ds, const char *name) {
    for (int i = 0; i < ds->num_node_types; i++)
        if (strcmp(ds->node_types[i].name, name) == 0) return i;
    return -1;
}

int dataset_is_typed(const dataset *ds) { return ds->typed; }

int dataset_find_edge_type(const dataset *ds, const char *name) {
    for (int i = 0; i < ds->num_edge_types; i++)
        if (strcmp(ds->edge_types[i].name, name) == 0) return i;
    return -1;
}

int64_t dataset_node_type_offset(const dataset *ds, int t) {
    CGNN_CHECK(t >= 0 && t <= ds->num_node_types);
    int64_t off = 0;
    for (int i = 0; i < t; i++) off += ds->node_types[i].num_nodes;
    return off;
}

int64_t dataset_owned_nodes(const dataset *ds) {
    if (ds->partition.present) return ds->partition.node_end - ds->partition.node_start;
    return ds->num_node_types ? ds->node_types[0].num_nodes : 0;
}

int64_t dataset_total_nodes(const dataset *ds) {
    int64_t total = 0;
    for (int i = 0; i < ds->num_node_types; i++) total += ds->node_types[i].num_nodes;
    return total;
}

uint32_t dataset_features_sample_crc(const dataset *ds) {
    uLong c = crc32(0L, Z_NULL, 0);
    for (int i = 0; i < ds->num_features; i++) {
        const ds_feature *f = &ds->features[i];
        const int64_t rows = f->rows;
        const size_t row_bytes = (size_t)f->dim * npy_dtype_size(f->array.dtype);
        if (rows <= 0 || row_bytes == 0) continue;
        rng r;
        rng_init(&r, rng_key(0x5eed0fea7u, (uint64_t)i));
        for (int k = 0; k < DATASET_SAMPLE_ROWS + 2; k++) {
            const int64_t row = k == 0 ? 0 : k == 1 ? rows - 1 : (int64_t)rng_below(&r, (uint64_t)rows);
            const unsigned char *p = (const unsigned char *)f->array.data + (size_t)row * row_bytes;
            for (size_t off = 0; off < row_bytes; off += 1u << 30) { /* uInt lengths */
                const size_t n = row_bytes - off < (1u << 30) ? row_bytes - off : (1u << 30);
                c = crc32(c, p + off, (uInt)n);
            }
        }
    }
    return (uint32_t)c;
}
