/* partbook.c — reading the partition JSON and one part; see partbook.h.
 *
 * Order of work (each step can name what the earlier ones established): the JSON (strict types
 * and ranges, node_map / edge_map contiguous, part paths relative and inside OUT), then the part
 * (dataset_open validates it as a dataset; then it must be the part the JSON describes, from the
 * same run), the global splits (same run), the id maps (inverse of each other), and the local
 * index. Cleanup: everything is reachable from *pb as soon as it exists, so one partbook_close
 * on the error path releases it.
 */
#include "graph/partbook.h"

#include <dirent.h>
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file.h"
#include "io/json.h"
#include "io/yamldoc.h"
#include "util/checked.h"

#define PARTBOOK_MAX_DEPTH 16

/* ---- JSON field access (every message names the file and the field) --------------------------- */

static const char *type_name(json_type t) {
    switch (t) {
    case JSON_NULL: return "null";
    case JSON_BOOL: return "a boolean";
    case JSON_NUM: return "a number";
    case JSON_STR: return "a string";
    case JSON_ARR: return "an array";
    default: return "an object";
    }
}

/* o[key] of type t; *out NULL when absent and not required. */
static int jget(const partbook *pb, const json_value *o, const char *where, const char *key, json_type t,
                int required, const json_value **out, cgnn_err *err) {
    *out = NULL;
    const json_value *v = json_get(o, key);
    if (!v) {
        if (!required) return 0;
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: missing \"%s\"", pb->json_path, where, key);
    }
    if (v->type != t)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s\"%s\": expected %s, got %s", pb->json_path, where, key,
                       type_name(t), type_name(v->type));
    *out = v;
    return 0;
}

/* A non-negative integer in [lo, hi] (v is the value; what names it). */
static int juint_value(const partbook *pb, const json_value *v, const char *what, int64_t lo, int64_t hi,
                       int64_t *out, cgnn_err *err) {
    if (v->type != JSON_NUM || !v->is_uint)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: expected a non-negative integer", pb->json_path, what);
    if (v->u < lo || v->u > hi)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: %lld is out of range [%lld, %lld]", pb->json_path, what,
                       (long long)v->u, (long long)lo, (long long)hi);
    *out = v->u;
    return 0;
}

static int juint(const partbook *pb, const json_value *o, const char *where, const char *key, int64_t lo,
                 int64_t hi, int64_t *out, cgnn_err *err) {
    const json_value *v;
    if (jget(pb, o, where, key, JSON_NUM, 1, &v, err) != 0) return -1;
    char what[160];
    snprintf(what, sizeof what, "%s\"%s\"", where, key);
    return juint_value(pb, v, what, lo, hi, out, err);
}

static int jnum(const partbook *pb, const json_value *o, const char *where, const char *key, double *out,
                cgnn_err *err) {
    const json_value *v;
    if (jget(pb, o, where, key, JSON_NUM, 1, &v, err) != 0) return -1;
    if (!(v->num >= 0.0 && v->num < 1e300))
        return err_set(err, CGNN_ERR_INPUT, "%s: %s\"%s\": expected a finite non-negative number", pb->json_path,
                       where, key);
    *out = v->num;
    return 0;
}

/* A string of 1 .. cap-1 bytes copied into out. */
static int jstr(const partbook *pb, const json_value *o, const char *where, const char *key, char *out, size_t cap,
                cgnn_err *err) {
    const json_value *v;
    if (jget(pb, o, where, key, JSON_STR, 1, &v, err) != 0) return -1;
    size_t n = strlen(v->str);
    if (n == 0 || n >= cap)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s\"%s\": expected 1 to %zu characters, got %zu", pb->json_path,
                       where, key, cap - 1, n);
    memcpy(out, v->str, n + 1);
    return 0;
}

/* o[key]: a path relative to OUT that stays inside it (not absolute, no ".." component),
 * resolved into out. */
static int jpath(const partbook *pb, const json_value *o, const char *where, const char *key, char *out, size_t cap,
                 cgnn_err *err) {
    char rel[1024];
    if (jstr(pb, o, where, key, rel, sizeof rel, err) != 0) return -1;
    int bad = rel[0] == '/';
    for (const char *c = rel; !bad && *c;) {
        const char *e = strchr(c, '/');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        bad = len == 2 && c[0] == '.' && c[1] == '.';
        c += len + (e != NULL);
    }
    if (bad)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s\"%s\": '%s' must be a path relative to the partition's directory, inside it",
                       pb->json_path, where, key, rel);
    int n = snprintf(out, cap, "%s/%s", pb->dir, rel);
    if (n < 0 || (size_t)n >= cap)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s\"%s\": path too long", pb->json_path, where, key);
    return 0;
}

/* An array of P non-negative integers into out[0..P). */
static int jints(const partbook *pb, const json_value *o, const char *where, const char *key, int P, int64_t *out,
                 cgnn_err *err) {
    const json_value *a;
    if (jget(pb, o, where, key, JSON_ARR, 1, &a, err) != 0) return -1;
    if (a->n != P)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s\"%s\": expected %d entries (num_parts), got %d", pb->json_path,
                       where, key, P, a->n);
    for (int i = 0; i < P; i++) {
        char what[200];
        snprintf(what, sizeof what, "%s\"%s\"[%d]", where, key, i);
        if (juint_value(pb, &a->items[i], what, 0, INT64_MAX, &out[i], err) != 0) return -1;
    }
    return 0;
}

/* {"<type>": [[s0, e0], [s1, e1], ...]} with P ranges, contiguous from 0 to total, into out[P+1]. */
static int read_ranges(const partbook *pb, const json_value *root, const char *field, const char *type, int64_t total,
                       int64_t *out, cgnn_err *err) {
    const json_value *m;
    if (jget(pb, root, "", field, JSON_OBJ, 1, &m, err) != 0) return -1;
    if (m->n != 1 || strcmp(m->keys[0], type) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\": expected one entry \"%s\" (a homogeneous graph)",
                       pb->json_path, field, type);
    const json_value *a = &m->items[0];
    const int P = pb->num_parts;
    if (a->type != JSON_ARR || a->n != P)
        return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\".\"%s\": expected an array of %d [start, end] ranges (num_parts)",
                       pb->json_path, field, type, P);
    out[0] = 0;
    for (int p = 0; p < P; p++) {
        const json_value *r = &a->items[p];
        int64_t s = -1, e = -1;
        char what[160];
        snprintf(what, sizeof what, "\"%s\".\"%s\"[%d]", field, type, p);
        if (r->type != JSON_ARR || r->n != 2)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s: expected [start, end]", pb->json_path, what);
        if (juint_value(pb, &r->items[0], what, 0, total, &s, err) != 0) return -1;
        if (juint_value(pb, &r->items[1], what, 0, total, &e, err) != 0) return -1;
        if (s != out[p] || e < s)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: %s: [%lld, %lld] does not continue the ranges (expected a start of %lld and an end "
                           ">= start: the ranges must be contiguous from 0)",
                           pb->json_path, what, (long long)s, (long long)e, (long long)out[p]);
        out[p + 1] = e;
    }
    if (out[P] != total)
        return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\": the ranges end at %lld, expected %lld", pb->json_path, field,
                       (long long)out[P], (long long)total);
    return 0;
}

/* ---- typed graphs ------------------------------------------------------------------------------ */

#define PARTBOOK_MAX_TYPES 4096 /* node or edge types a JSON may declare (a typed batch carries far fewer) */

/* ntypes / etypes: absent, or DGL's homogeneous {"_N": 0} / {"_N:_E:_N": 0}, mean a homogeneous
 * graph; anything else names the types of a typed graph: ids 0 .. T-1 (0 .. K-1), each once;
 * node type names without ':'; edge types "src:rel:dst" between declared node types. */
static int read_types(partbook *pb, const json_value *root, cgnn_err *err) {
    const json_value *nt, *et;
    if (jget(pb, root, "", "ntypes", JSON_OBJ, 0, &nt, err) != 0) return -1;
    if (jget(pb, root, "", "etypes", JSON_OBJ, 0, &et, err) != 0) return -1;
    const int homog_n = !nt || (nt->n == 1 && strcmp(nt->keys[0], "_N") == 0);
    const int homog_e = !et || (et->n == 1 && strcmp(et->keys[0], "_N:_E:_N") == 0);
    pb->num_node_types = pb->num_edge_types = 1;
    if (homog_n && homog_e) return 0;
    if (!nt || !et || homog_n != homog_e)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: \"ntypes\" and \"etypes\": a typed graph names its node types and its edge types (both, "
                       "or neither for a homogeneous graph)",
                       pb->json_path);
    const json_value *objs[2] = {nt, et};
    const char *fields[2] = {"ntypes", "etypes"};
    for (int w = 0; w < 2; w++) {
        const json_value *o = objs[w];
        const char *dup = json_duplicate_key(o);
        if (dup) return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\": duplicate key \"%s\"", pb->json_path, fields[w], dup);
        if (o->n < 1 || o->n > PARTBOOK_MAX_TYPES)
            return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\": %d types, expected 1 to %d", pb->json_path, fields[w], o->n,
                           PARTBOOK_MAX_TYPES);
    }
    const int T = nt->n, K = et->n;
    pb->typed = 1;
    pb->num_node_types = T;
    pb->num_edge_types = K;
    pb->ntype_names = cgnn_calloc((size_t)T, sizeof *pb->ntype_names);
    pb->etype_names = cgnn_calloc((size_t)K, sizeof *pb->etype_names);
    pb->etype_src = cgnn_calloc((size_t)K, sizeof *pb->etype_src);
    pb->etype_dst = cgnn_calloc((size_t)K, sizeof *pb->etype_dst);
    for (int w = 0; w < 2; w++) {
        const json_value *o = objs[w];
        const int n = o->n;
        const size_t cap = w == 0 ? sizeof pb->ntype_names[0] : sizeof pb->etype_names[0];
        for (int i = 0; i < n; i++) {
            char what[DATASET_NAME_MAX * 3 + 32];
            snprintf(what, sizeof what, "\"%s\".\"%.*s\"", fields[w], 3 * DATASET_NAME_MAX, o->keys[i]);
            int64_t id = 0;
            if (juint_value(pb, &o->items[i], what, 0, n - 1, &id, err) != 0) return -1;
            char *slot = w == 0 ? pb->ntype_names[id] : pb->etype_names[id];
            const size_t len = strlen(o->keys[i]);
            if (slot[0])
                return err_set(err, CGNN_ERR_INPUT, "%s: %s: id %lld is also \"%s\"'s (ids must be 0 to %d, each once)",
                               pb->json_path, what, (long long)id, slot, n - 1);
            if (len == 0 || len >= cap || (w == 0 && strchr(o->keys[i], ':')))
                return err_set(err, CGNN_ERR_INPUT, "%s: %s: not a %s name (1 to %zu characters%s)", pb->json_path, what,
                               w == 0 ? "node type" : "edge type", cap - 1, w == 0 ? ", without ':'" : "");
            memcpy(slot, o->keys[i], len + 1);
        }
    }
    for (int k = 0; k < K; k++) { /* "src:rel:dst" between declared node types */
        const char *name = pb->etype_names[k], *c1 = strchr(name, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        int src = -1, dst = -1;
        if (c1 && c2 && !strchr(c2 + 1, ':') && c1 > name && c2 > c1 + 1 && c2[1])
            for (int t = 0; t < T; t++) {
                const size_t l = strlen(pb->ntype_names[t]);
                if (l == (size_t)(c1 - name) && strncmp(name, pb->ntype_names[t], l) == 0) src = t;
                if (strcmp(c2 + 1, pb->ntype_names[t]) == 0) dst = t;
            }
        if (src < 0 || dst < 0)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: \"etypes\".\"%s\": expected \"src:relation:dst\" with src and dst among \"ntypes\"",
                           pb->json_path, name);
        pb->etype_src[k] = src;
        pb->etype_dst[k] = dst;
    }
    return 0;
}

/* A typed graph's node_map / edge_map: {"<type>": [[s, e] x P], ...} with exactly the types of
 * names[0..n), ranges of DGL's homogeneous new ids contiguous from 0 to total in (part, type)
 * order. Fills part_map (P + 1: the parts' starts) and type_map (n x (P + 1): per-type starts). */
static int read_typed_ranges(const partbook *pb, const json_value *root, const char *field, int n,
                             const char *names, size_t name_stride, int64_t total, int64_t *part_map, int64_t *type_map,
                             cgnn_err *err) {
    const json_value *m;
    if (jget(pb, root, "", field, JSON_OBJ, 1, &m, err) != 0) return -1;
    const int P = pb->num_parts;
    if (m->n != n)
        return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\": %d entries, expected one per type of \"%s\" (%d)", pb->json_path,
                       field, m->n, field[0] == 'n' ? "ntypes" : "etypes", n);
    const json_value **lists = cgnn_calloc((size_t)n, sizeof *lists);
    int rc = 0;
    for (int u = 0; u < n && rc == 0; u++) {
        const char *name = names + (size_t)u * name_stride;
        lists[u] = json_get(m, name);
        if (!lists[u] || lists[u]->type != JSON_ARR || lists[u]->n != P)
            rc = err_set(err, CGNN_ERR_INPUT, "%s: \"%s\".\"%s\": expected an array of %d [start, end] ranges (num_parts)",
                         pb->json_path, field, name, P);
        type_map[(size_t)u * (size_t)(P + 1)] = 0;
    }
    int64_t at = 0;
    for (int p = 0; p < P && rc == 0; p++) {
        part_map[p] = at;
        for (int u = 0; u < n && rc == 0; u++) {
            const char *name = names + (size_t)u * name_stride;
            const json_value *r = &lists[u]->items[p];
            char what[3 * DATASET_NAME_MAX + 64];
            snprintf(what, sizeof what, "\"%s\".\"%s\"[%d]", field, name, p);
            int64_t s = -1, e = -1;
            if (r->type != JSON_ARR || r->n != 2) {
                rc = err_set(err, CGNN_ERR_INPUT, "%s: %s: expected [start, end]", pb->json_path, what);
                break;
            }
            if (juint_value(pb, &r->items[0], what, 0, total, &s, err) != 0 ||
                juint_value(pb, &r->items[1], what, 0, total, &e, err) != 0) {
                rc = -1;
                break;
            }
            if (s != at || e < s) {
                rc = err_set(err, CGNN_ERR_INPUT,
                             "%s: %s: [%lld, %lld] does not continue the ranges (expected a start of %lld and an end >= "
                             "start: DGL's ranges are contiguous from 0 in (part, type) order)",
                             pb->json_path, what, (long long)s, (long long)e, (long long)at);
                break;
            }
            int64_t *tm = type_map + (size_t)u * (size_t)(P + 1);
            tm[p + 1] = tm[p] + (e - s);
            at = e;
        }
    }
    free(lists);
    if (rc != 0) return -1;
    part_map[P] = at;
    if (at != total)
        return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\": the ranges end at %lld, expected %lld", pb->json_path, field,
                       (long long)at, (long long)total);
    return 0;
}

/* A typed graph's cgnn fields: etype_max_in_degree {etype: d}, orig_ids / new_ids {ntype: path}. */
static int read_typed_fields(partbook *pb, const json_value *root, cgnn_err *err) {
    const int T = pb->num_node_types, K = pb->num_edge_types;
    const json_value *o;
    if (jget(pb, root, "", "etype_max_in_degree", JSON_OBJ, 1, &o, err) != 0) return -1;
    if (o->n != K)
        return err_set(err, CGNN_ERR_INPUT, "%s: \"etype_max_in_degree\": %d entries, expected one per edge type (%d)",
                       pb->json_path, o->n, K);
    pb->etype_max_in_degree = cgnn_calloc((size_t)K, sizeof *pb->etype_max_in_degree);
    int64_t most = 0;
    for (int k = 0; k < K; k++) {
        if (juint(pb, o, "\"etype_max_in_degree\".", pb->etype_names[k], 0, pb->num_edges, &pb->etype_max_in_degree[k],
                  err) != 0)
            return -1;
        if (pb->etype_max_in_degree[k] > most) most = pb->etype_max_in_degree[k];
    }
    if (most != pb->max_in_degree)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: \"max_in_degree\" is %lld, but the largest of \"etype_max_in_degree\" is %lld", pb->json_path,
                       (long long)pb->max_in_degree, (long long)most);
    pb->type_orig_paths = cgnn_calloc((size_t)T, sizeof *pb->type_orig_paths);
    pb->type_new_paths = cgnn_calloc((size_t)T, sizeof *pb->type_new_paths);
    const char *fields[2] = {"orig_ids", "new_ids"};
    char(*paths[2])[4096] = {pb->type_orig_paths, pb->type_new_paths};
    for (int w = 0; w < 2; w++) {
        char where[32];
        snprintf(where, sizeof where, "\"%s\".", fields[w]);
        if (jget(pb, root, "", fields[w], JSON_OBJ, 1, &o, err) != 0) return -1;
        if (o->n != T)
            return err_set(err, CGNN_ERR_INPUT, "%s: \"%s\": %d entries, expected one file per node type (%d)",
                           pb->json_path, fields[w], o->n, T);
        for (int t = 0; t < T; t++)
            if (jpath(pb, o, where, pb->ntype_names[t], paths[w][t], sizeof paths[w][t], err) != 0) return -1;
    }
    return 0;
}

static int check_id(const partbook *pb, const char *id, cgnn_err *err) {
    size_t n = strlen(id);
    int ok = n > 0 && n < DS_PARTITION_ID_MAX;
    for (size_t i = 0; ok && i < n; i++) ok = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f');
    if (!ok)
        return err_set(err, CGNN_ERR_INPUT, "%s: \"partition_id\": expected 1 to %d lowercase hex digits",
                       pb->json_path, DS_PARTITION_ID_MAX - 1);
    return 0;
}

/* ---- stats and run.yaml ------------------------------------------------------------------------ */

static int read_stats(partbook *pb, const json_value *root, cgnn_err *err) {
    const json_value *st, *seeds, *metis;
    if (jget(pb, root, "", "stats", JSON_OBJ, 0, &st, err) != 0) return -1;
    if (!st) return 0;
    partbook_stats *s = &pb->stats;
    const int P = pb->num_parts;
    const char *w = "\"stats\".";
    s->part_nodes = cgnn_calloc((size_t)P, sizeof *s->part_nodes);
    s->part_edges = cgnn_calloc((size_t)P, sizeof *s->part_edges);
    if (juint(pb, st, w, "edge_cut", 0, pb->num_edges, &s->edge_cut, err) != 0) return -1;
    if (jnum(pb, st, w, "edge_cut_fraction", &s->edge_cut_fraction, err) != 0) return -1;
    if (jints(pb, st, w, "part_nodes", P, s->part_nodes, err) != 0) return -1;
    if (jints(pb, st, w, "part_edges", P, s->part_edges, err) != 0) return -1;
    if (jnum(pb, st, w, "node_balance", &s->node_balance, err) != 0) return -1;
    if (jnum(pb, st, w, "edge_balance", &s->edge_balance, err) != 0) return -1;
    for (int p = 0; p < P; p++)
        if (s->part_nodes[p] != pb->node_map[p + 1] - pb->node_map[p] ||
            s->part_edges[p] != pb->edge_map[p + 1] - pb->edge_map[p])
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: \"stats\": part %d has %lld nodes and %lld edges, but node_map and edge_map say "
                           "%lld and %lld",
                           pb->json_path, p, (long long)s->part_nodes[p], (long long)s->part_edges[p],
                           (long long)(pb->node_map[p + 1] - pb->node_map[p]),
                           (long long)(pb->edge_map[p + 1] - pb->edge_map[p]));
    if (jget(pb, st, w, "seeds", JSON_ARR, 1, &seeds, err) != 0) return -1;
    s->seeds = cgnn_calloc((size_t)(seeds->n ? seeds->n : 1), sizeof *s->seeds);
    for (int k = 0; k < seeds->n; k++) {
        const json_value *o = &seeds->items[k];
        char where[64];
        snprintf(where, sizeof where, "\"stats\".\"seeds\"[%d].", k);
        if (o->type != JSON_OBJ)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s: expected an object", pb->json_path, where);
        partbook_seedstat *ss = &s->seeds[k];
        ss->per_part = cgnn_calloc((size_t)P, sizeof *ss->per_part);
        s->num_seedsets = k + 1;
        if (jstr(pb, o, where, "task", ss->task, sizeof ss->task, err) != 0) return -1;
        if (jstr(pb, o, where, "split", ss->split, sizeof ss->split, err) != 0) return -1;
        if (juint(pb, o, where, "total", 0, INT64_MAX, &ss->total, err) != 0) return -1;
        if (jints(pb, o, where, "per_part", P, ss->per_part, err) != 0) return -1;
        if (jnum(pb, o, where, "balance", &ss->balance, err) != 0) return -1;
        int64_t sum = 0;
        int over = 0;
        for (int p = 0; p < P; p++) over |= ck_add_i64(sum, ss->per_part[p], &sum);
        if (over || sum != ss->total)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s\"per_part\": sums to %lld, \"total\" is %lld", pb->json_path,
                           where, (long long)sum, (long long)ss->total);
    }
    if (jget(pb, st, w, "metis", JSON_OBJ, 0, &metis, err) != 0) return -1;
    if (metis) {
        const char *mw = "\"stats\".\"metis\".";
        if (juint(pb, metis, mw, "symmetric_adjacency", 0, INT64_MAX, &s->metis_sym_adjacency, err) != 0) return -1;
        if (juint(pb, metis, mw, "constraints", 0, INT64_MAX, &s->metis_constraints, err) != 0) return -1;
        if (juint(pb, metis, mw, "objective", 0, INT64_MAX, &s->metis_objective, err) != 0) return -1;
    }
    s->present = 1;
    return 0;
}

/* OUT/run.yaml (written last by `cgnn partition`), when it is there. */
static int read_run(partbook *pb, cgnn_err *err) {
    static const char *const KEYS[] = {"source_dataset",        "threads",       "seconds",
                                       "seconds_assign",        "seconds_write", "peak_rss_bytes",
                                       "peak_rss_bytes_loaded", "peak_rss_bytes_assigned", NULL};
    char path[4200];
    snprintf(path, sizeof path, "%s/run.yaml", pb->dir);
    if (access(path, F_OK) != 0) return 0;
    yamldoc doc;
    if (yamldoc_load(&doc, path, err) != 0) return -1;
    partbook_stats *s = &pb->stats;
    int rc = doc.root ? yamldoc_expect_kind(&doc, doc.root, YAMLDOC_MAPPING, err) : -1;
    if (!doc.root) err_set(err, CGNN_ERR_INPUT, "%s: empty file", path);
    if (rc == 0) rc = yamldoc_check_keys(&doc, doc.root, KEYS, err);
    int64_t threads = 0;
    if (rc == 0) rc = yamldoc_get_int(&doc, doc.root, "threads", 1, &threads, err);
    if (rc == 0) rc = yamldoc_get_int(&doc, doc.root, "peak_rss_bytes", 1, &s->run_peak_rss_bytes, err);
    if (rc == 0) rc = yamldoc_get_int(&doc, doc.root, "peak_rss_bytes_loaded", 1, &s->run_peak_rss_loaded, err);
    if (rc == 0) rc = yamldoc_get_int(&doc, doc.root, "peak_rss_bytes_assigned", 1, &s->run_peak_rss_assigned, err);
    const char *names[3] = {"seconds", "seconds_assign", "seconds_write"};
    double *vals[3] = {&s->run_seconds, &s->run_seconds_assign, &s->run_seconds_write};
    for (int k = 0; k < 3 && rc == 0; k++) {
        const yamldoc_node *v = yamldoc_get(doc.root, names[k]);
        if (!v || v->kind != YAMLDOC_SCALAR || yamldoc_parse_double(v->scalar, vals[k]) != 0 || !(*vals[k] >= 0))
            rc = err_set(err, CGNN_ERR_INPUT, "%s: %s: expected a non-negative number", path, names[k]);
    }
    yamldoc_free(&doc);
    if (rc != 0) return -1;
    s->run_threads = (int)(threads > 0 && threads < 1 << 20 ? threads : 0);
    s->have_run = 1;
    return 0;
}

/* ---- the JSON ---------------------------------------------------------------------------------- */

/* Finds the one *.json file of directory dir. */
static int find_json(const char *dir, char *out, size_t cap, cgnn_err *err) {
    DIR *d = opendir(dir);
    if (!d) return err_set(err, CGNN_ERR_INPUT, "%s: cannot read the directory: %s", dir, strerror(errno));
    char first[256] = "", second[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0 || n >= sizeof first) continue;
        if (!first[0]) snprintf(first, sizeof first, "%s", e->d_name);
        else if (!second[0]) snprintf(second, sizeof second, "%s", e->d_name);
    }
    closedir(d);
    if (!first[0])
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: no partition JSON (*.json) in this directory: is it the --out of cgnn partition?", dir);
    if (second[0])
        return err_set(err, CGNN_ERR_INPUT, "%s: several .json files ('%s', '%s'); name the partition JSON itself",
                       dir, first, second);
    int n = snprintf(out, cap, "%s/%s", dir, first);
    if (n < 0 || (size_t)n >= cap) return err_set(err, CGNN_ERR_INPUT, "%s: path too long", dir);
    return 0;
}

static int load_text(const char *path, char **out, size_t *len, cgnn_err *err) {
    struct stat st;
    int fd = file_open_regular(path, &st, err);
    if (fd < 0) return -1;
    if (st.st_size > PARTBOOK_MAX_JSON_BYTES) {
        close(fd);
        return err_set(err, CGNN_ERR_INPUT, "%s: %lld bytes, over the %lld-byte limit of a partition JSON", path,
                       (long long)st.st_size, (long long)PARTBOOK_MAX_JSON_BYTES);
    }
    char *buf = cgnn_malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            close(fd);
            free(buf);
            return err_set(err, CGNN_ERR_INPUT, "%s: read failed: %s", path, r < 0 ? strerror(errno) : "truncated");
        }
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return 0;
}

static int read_json(partbook *pb, const char *path, int with_run, cgnn_err *err) {
    memset(pb, 0, sizeof *pb);
    pb->part = -1;
    struct stat st;
    if (stat(path, &st) != 0) return err_set(err, CGNN_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    size_t plen = strlen(path);
    while (plen > 1 && path[plen - 1] == '/') plen--;
    if (plen >= 3000) return err_set(err, CGNN_ERR_INPUT, "%s: path too long", path);
    if (S_ISDIR(st.st_mode)) {
        snprintf(pb->dir, sizeof pb->dir, "%.*s", (int)plen, path);
        if (find_json(pb->dir, pb->json_path, sizeof pb->json_path, err) != 0) return -1;
    } else {
        snprintf(pb->json_path, sizeof pb->json_path, "%s", path);
        const char *slash = strrchr(path, '/');
        if (!slash) snprintf(pb->dir, sizeof pb->dir, ".");
        else if (slash == path) snprintf(pb->dir, sizeof pb->dir, "/");
        else snprintf(pb->dir, sizeof pb->dir, "%.*s", (int)(slash - path), path);
    }
    char *text = NULL;
    size_t len = 0;
    if (load_text(pb->json_path, &text, &len, err) != 0) return -1;
    json_value root;
    char msg[160];
    int rc = json_parse(&root, text, len, PARTBOOK_MAX_DEPTH, msg, sizeof msg);
    free(text);
    if (rc != 0) {
        json_free(&root);
        return err_set(err, CGNN_ERR_INPUT, "%s: invalid JSON %s", pb->json_path, msg);
    }
    rc = -1;
    const char *dup = NULL;
    const json_value *v;
    int64_t x = 0;
    if (root.type != JSON_OBJ) {
        err_set(err, CGNN_ERR_INPUT, "%s: not a JSON object: is it a partition JSON (cgnn partition)?", pb->json_path);
        goto done;
    }
    if ((dup = json_duplicate_key(&root)) != NULL) {
        err_set(err, CGNN_ERR_INPUT, "%s: duplicate key \"%s\"", pb->json_path, dup);
        goto done;
    }
    if (jstr(pb, &root, "", "graph_name", pb->graph_name, sizeof pb->graph_name, err) != 0) goto done;
    if (juint(pb, &root, "", "num_parts", 1, DS_PARTITION_MAX_PARTS, &x, err) != 0) goto done;
    pb->num_parts = (int)x;
    if (jstr(pb, &root, "", "part_method", pb->part_method, sizeof pb->part_method, err) != 0) goto done;
    if (strcmp(pb->part_method, "metis") != 0 && strcmp(pb->part_method, "random") != 0) {
        err_set(err, CGNN_ERR_INPUT, "%s: \"part_method\": expected \"metis\" or \"random\", got \"%s\"", pb->json_path,
                pb->part_method);
        goto done;
    }
    if (juint(pb, &root, "", "num_nodes", 1, INT64_MAX, &pb->num_nodes, err) != 0) goto done;
    if (juint(pb, &root, "", "num_edges", 0, INT64_MAX, &pb->num_edges, err) != 0) goto done;
    if (pb->num_parts > pb->num_nodes) {
        err_set(err, CGNN_ERR_INPUT, "%s: \"num_parts\" %d exceeds \"num_nodes\" %lld", pb->json_path, pb->num_parts,
                (long long)pb->num_nodes);
        goto done;
    }
    if (jget(pb, &root, "", "halo_hops", JSON_NUM, 0, &v, err) != 0) goto done;
    if (v && (!v->is_uint || v->u != 0)) {
        err_set(err, CGNN_ERR_INPUT, "%s: \"halo_hops\": only 0 is supported (parts hold no halo nodes)", pb->json_path);
        goto done;
    }
    pb->node_map = cgnn_calloc((size_t)pb->num_parts + 1, sizeof *pb->node_map);
    pb->edge_map = cgnn_calloc((size_t)pb->num_parts + 1, sizeof *pb->edge_map);
    if (read_types(pb, &root, err) != 0) goto done;
    if (!pb->typed) {
        if (read_ranges(pb, &root, "node_map", "_N", pb->num_nodes, pb->node_map, err) != 0) goto done;
        if (read_ranges(pb, &root, "edge_map", "_N:_E:_N", pb->num_edges, pb->edge_map, err) != 0) goto done;
    } else { /* per-type ranges: the parts' starts and each type's per-type starts */
        const int T = pb->num_node_types, K = pb->num_edge_types;
        pb->type_map = cgnn_calloc((size_t)T * ((size_t)pb->num_parts + 1), sizeof *pb->type_map);
        pb->etype_map = cgnn_calloc((size_t)K * ((size_t)pb->num_parts + 1), sizeof *pb->etype_map);
        pb->type_nodes = cgnn_calloc((size_t)T, sizeof *pb->type_nodes);
        if (read_typed_ranges(pb, &root, "node_map", T, pb->ntype_names[0], sizeof pb->ntype_names[0], pb->num_nodes,
                              pb->node_map, pb->type_map, err) != 0)
            goto done;
        if (read_typed_ranges(pb, &root, "edge_map", K, pb->etype_names[0], sizeof pb->etype_names[0], pb->num_edges,
                              pb->edge_map, pb->etype_map, err) != 0)
            goto done;
        for (int t = 0; t < T; t++) {
            pb->type_nodes[t] = pb->type_map[(size_t)t * ((size_t)pb->num_parts + 1) + (size_t)pb->num_parts];
            if (pb->type_nodes[t] == 0) {
                err_set(err, CGNN_ERR_INPUT, "%s: \"node_map\".\"%s\": the node type has no nodes", pb->json_path,
                        pb->ntype_names[t]);
                goto done;
            }
        }
    }
    pb->part_dirs = cgnn_calloc((size_t)pb->num_parts, sizeof *pb->part_dirs);
    for (int p = 0; p < pb->num_parts; p++) {
        char key[32], where[48];
        snprintf(key, sizeof key, "part-%d", p);
        snprintf(where, sizeof where, "\"%s\".", key);
        const json_value *po;
        if (jget(pb, &root, "", key, JSON_OBJ, 1, &po, err) != 0) goto done;
        pb->part_dirs[p] = cgnn_malloc(4096);
        if (jpath(pb, po, where, "part_dir", pb->part_dirs[p], 4096, err) != 0) goto done;
    }
    if (jstr(pb, &root, "", "partition_id", pb->partition_id, sizeof pb->partition_id, err) != 0) goto done;
    if (check_id(pb, pb->partition_id, err) != 0) goto done;
    if (juint(pb, &root, "", "seed", 0, INT64_MAX, &pb->seed, err) != 0) goto done;
    if (juint(pb, &root, "", "max_in_degree", 0, pb->num_edges, &pb->max_in_degree, err) != 0) goto done;
    if (!pb->typed) {
        if (jpath(pb, &root, "", "orig_ids", pb->orig_ids_path, sizeof pb->orig_ids_path, err) != 0) goto done;
        if (jpath(pb, &root, "", "new_ids", pb->new_ids_path, sizeof pb->new_ids_path, err) != 0) goto done;
    } else if (read_typed_fields(pb, &root, err) != 0) {
        goto done;
    }
    if (jpath(pb, &root, "", "global_splits", pb->global_dir, sizeof pb->global_dir, err) != 0) goto done;
    if (read_stats(pb, &root, err) != 0) goto done;
    if (with_run && read_run(pb, err) != 0) goto done;
    rc = 0;
done:
    json_free(&root);
    return rc;
}

int partbook_read_json(partbook *pb, const char *path, cgnn_err *err) {
    int rc = read_json(pb, path, 1, err);
    if (rc != 0) partbook_close(pb);
    return rc;
}

/* ---- the part ---------------------------------------------------------------------------------- */

/* A typed part (or the typed global splits) against the JSON: the same node and edge types in the
 * same order, per-type node counts, per-type owned ranges and per-edge-type edge counts. */
static int check_typed_part(const partbook *pb, const dataset *ds, int part, const char *meta, cgnn_err *err) {
    const int T = pb->num_node_types, K = pb->num_edge_types, P = pb->num_parts;
    if (!ds->typed || ds->num_node_types != T || ds->num_edge_types != K)
        return err_set(err, CGNN_ERR_INPUT, "%s: has %d node types and %d edge types%s; %s declares %d and %d (ntypes, "
                       "etypes)", meta, ds->num_node_types, ds->num_edge_types, ds->typed ? "" : " (untyped)",
                       pb->json_path, T, K);
    for (int t = 0; t < T; t++) {
        const ds_node_type *nt = &ds->node_types[t];
        const int64_t *tm = pb->type_map + (size_t)t * (size_t)(P + 1);
        const int64_t lo = part == DS_PARTITION_GLOBAL ? 0 : tm[part], hi = part == DS_PARTITION_GLOBAL ? tm[P] : tm[part + 1];
        if (strcmp(nt->name, pb->ntype_names[t]) != 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: graph.nodes[%d] is node type '%s'; %s has '%s' there (ntypes)", meta,
                           t, nt->name, pb->json_path, pb->ntype_names[t]);
        if (nt->num_nodes != pb->type_nodes[t])
            return err_set(err, CGNN_ERR_INPUT, "%s: graph.nodes[%d].num is %lld, %s says %lld nodes of type '%s' "
                           "(node_map)", meta, t, (long long)nt->num_nodes, pb->json_path,
                           (long long)pb->type_nodes[t], nt->name);
        if (nt->own_start != lo || nt->own_end != hi)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: partition.node_ranges[%d] owns [%lld, %lld) of type '%s'; %s expects [%lld, %lld) "
                           "(node_map)",
                           meta, t, (long long)nt->own_start, (long long)nt->own_end, nt->name, pb->json_path,
                           (long long)lo, (long long)hi);
    }
    for (int k = 0; k < K; k++) {
        const ds_edge_type *et = &ds->edge_types[k];
        const int64_t *em = pb->etype_map + (size_t)k * (size_t)(P + 1);
        const int64_t want_e = part == DS_PARTITION_GLOBAL ? 0 : em[part + 1] - em[part];
        if (strcmp(et->name, pb->etype_names[k]) != 0)
            return err_set(err, CGNN_ERR_INPUT, "%s: graph.edges[%d] is edge type '%s'; %s has '%s' there (etypes)", meta,
                           k, et->name, pb->json_path, pb->etype_names[k]);
        if (et->edges.num_edges != want_e)
            return err_set(err, CGNN_ERR_INPUT, "%s: has %lld edges of type '%s', %s says %lld (edge_map)", et->path,
                           (long long)et->edges.num_edges, et->name, pb->json_path, (long long)want_e);
    }
    return 0;
}

/* The part (or the global splits, part = DS_PARTITION_GLOBAL) must be the one the JSON describes,
 * from the same partitioning run. */
static int check_part(const partbook *pb, const dataset *ds, int part, cgnn_err *err) {
    const ds_partition *pt = &ds->partition;
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/metadata.yaml", ds->dir);
    if (!pt->present)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: not a part of a partitioned graph (no partition: key), but %s names it as %s", meta,
                       pb->json_path, part == DS_PARTITION_GLOBAL ? "the global splits" : "a part");
    if (strcmp(pt->id, pb->partition_id) != 0)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: partition id %s differs from %s in %s: this directory was written by another run of cgnn "
                       "partition (parts of two runs cannot be mixed; partition again, or use the matching files)",
                       meta, pt->id, pb->partition_id, pb->json_path);
    if (pt->part != part || pt->num_parts != pb->num_parts)
        return err_set(err, CGNN_ERR_INPUT, "%s: partition says part %d of %d; %s expects part %d of %d", meta, pt->part,
                       pt->num_parts, pb->json_path, part, pb->num_parts);
    if (pb->typed) return check_typed_part(pb, ds, part, meta, err);
    if (ds->typed)
        return err_set(err, CGNN_ERR_INPUT, "%s: a typed dataset, but %s describes a homogeneous graph (ntypes)", meta,
                       pb->json_path);
    const int64_t lo = part == DS_PARTITION_GLOBAL ? 0 : pb->node_map[part];
    const int64_t hi = part == DS_PARTITION_GLOBAL ? pb->num_nodes : pb->node_map[part + 1];
    if (pt->node_start != lo || pt->node_end != hi)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: partition says part %d of %d, nodes [%lld, %lld); %s expects part %d of %d, nodes [%lld, "
                       "%lld)",
                       meta, pt->part, pt->num_parts, (long long)pt->node_start, (long long)pt->node_end,
                       pb->json_path, part, pb->num_parts, (long long)lo, (long long)hi);
    if (ds->node_types[0].num_nodes != pb->num_nodes)
        return err_set(err, CGNN_ERR_INPUT, "%s: graph.nodes[0].num is %lld, %s says num_nodes %lld", meta,
                       (long long)ds->node_types[0].num_nodes, pb->json_path, (long long)pb->num_nodes);
    const int64_t want_e = part == DS_PARTITION_GLOBAL ? 0 : pb->edge_map[part + 1] - pb->edge_map[part];
    if (ds->edge_types[0].edges.num_edges != want_e)
        return err_set(err, CGNN_ERR_INPUT, "%s: has %lld edges, %s says %lld (edge_map)", ds->edge_types[0].path,
                       (long long)ds->edge_types[0].edges.num_edges, pb->json_path, (long long)want_e);
    return 0;
}

/* Maps a (n,) int64 .npy. */
static int open_map(const partbook *pb, npy_array *a, const char *path, const char *field, int64_t n, cgnn_err *err) {
    if (npy_open(a, path, 0, err) != 0) {
        size_t len = err ? strlen(err->msg) : 0;
        if (err) snprintf(err->msg + len, sizeof err->msg - len, " (\"%s\" in %s)", field, pb->json_path);
        return -1;
    }
    if (a->dtype != NPY_DTYPE_INT64 || a->ndim != 1 || a->shape[0] != n)
        return err_set(err, CGNN_ERR_INPUT, "%s: expected (%lld,) int64 ids (\"%s\" in %s), got %d-D %s", path,
                       (long long)n, field, pb->json_path, a->ndim, npy_dtype_name(a->dtype));
    return 0;
}

/* orig_of_new and new_of_orig (n entries; the maps of files opath / npath) are inverse
 * permutations of [0, n), and original ids ascend within every part's range ranges[p] ..
 * ranges[p+1] (the renumbering's order). Names the first new id that breaks it. */
static int check_maps(const partbook *pb, const int64_t *o, const int64_t *w, int64_t N, const int64_t *ranges,
                      const char *opath, const char *npath, int T, cgnn_err *err) {
    int64_t first = N;
#pragma omp parallel for num_threads(T) schedule(static) reduction(min : first)
    for (int64_t i = 0; i < N; i++) {
        const int64_t v = o[i];
        if ((v < 0 || v >= N || w[v] != i) && i < first) first = i;
    }
    if (first < N)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s and %s: not inverse permutations of [0, %lld): new id %lld maps to original id %lld%s", opath,
                       npath, (long long)N, (long long)first, (long long)o[first],
                       o[first] >= 0 && o[first] < N ? ", which does not map back" : " (out of range)");
    for (int p = 0; p < pb->num_parts; p++) {
        const int64_t lo = ranges[p], hi = ranges[p + 1];
        int64_t bad = hi;
#pragma omp parallel for num_threads(T) schedule(static) reduction(min : bad)
        for (int64_t i = lo + 1; i < hi; i++)
            if (o[i] <= o[i - 1] && i < bad) bad = i;
        if (bad < hi)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: original ids must ascend within each part: new ids %lld and %lld of part %d map to "
                           "%lld and %lld",
                           opath, (long long)(bad - 1), (long long)bad, p, (long long)o[bad - 1], (long long)o[bad]);
    }
    return 0;
}

/* Maps and checks the id maps into pb (untyped: the two N-entry maps; typed: a pair per node type). */
static int load_maps(partbook *pb, int T, cgnn_err *err) {
    if (!pb->typed) {
        if (open_map(pb, &pb->orig_ids_file, pb->orig_ids_path, "orig_ids", pb->num_nodes, err) != 0) return -1;
        if (open_map(pb, &pb->new_ids_file, pb->new_ids_path, "new_ids", pb->num_nodes, err) != 0) return -1;
        if (check_maps(pb, pb->orig_ids_file.data, pb->new_ids_file.data, pb->num_nodes, pb->node_map,
                       pb->orig_ids_path, pb->new_ids_path, T, err) != 0)
            return -1;
        pb->orig_of_new = pb->orig_ids_file.data;
        pb->new_of_orig = pb->new_ids_file.data;
        return 0;
    }
    const int NT = pb->num_node_types, P = pb->num_parts;
    pb->type_orig_files = cgnn_calloc((size_t)NT, sizeof *pb->type_orig_files);
    pb->type_new_files = cgnn_calloc((size_t)NT, sizeof *pb->type_new_files);
    pb->type_orig_of_new = cgnn_calloc((size_t)NT, sizeof *pb->type_orig_of_new);
    pb->type_new_of_orig = cgnn_calloc((size_t)NT, sizeof *pb->type_new_of_orig);
    for (int t = 0; t < NT; t++) {
        char field[DATASET_NAME_MAX + 32];
        snprintf(field, sizeof field, "orig_ids.%s", pb->ntype_names[t]);
        if (open_map(pb, &pb->type_orig_files[t], pb->type_orig_paths[t], field, pb->type_nodes[t], err) != 0) return -1;
        snprintf(field, sizeof field, "new_ids.%s", pb->ntype_names[t]);
        if (open_map(pb, &pb->type_new_files[t], pb->type_new_paths[t], field, pb->type_nodes[t], err) != 0) return -1;
        if (check_maps(pb, pb->type_orig_files[t].data, pb->type_new_files[t].data, pb->type_nodes[t],
                       pb->type_map + (size_t)t * (size_t)(P + 1), pb->type_orig_paths[t], pb->type_new_paths[t], T,
                       err) != 0)
            return -1;
        pb->type_orig_of_new[t] = pb->type_orig_files[t].data;
        pb->type_new_of_orig[t] = pb->type_new_files[t].data;
    }
    return 0;
}

/* Part `part`'s local index from its dataset ds: untyped, one range of rows (*untyped); typed,
 * one index per edge type over the part's dst nodes of its dst type (typed[K], caller-owned
 * array). Then every index is checked against the JSON's in-degree bounds: the one check that
 * training (load_part) and `cgnn info` (partbook_verify) share. Returns 0, or -1 with *err; the
 * caller frees what was built either way. */
static int build_checked_index(const partbook *pb, const dataset *ds, int part, int T, csc_graph *untyped,
                               csc_graph *typed, cgnn_err *err) {
    const int P = pb->num_parts;
    if (!pb->typed) {
        const int64_t first = pb->node_map[part], n = pb->node_map[part + 1] - first;
        if (csc_build_range(untyped, first, n, pb->num_nodes, &ds->edge_types[0].edges, T, err) != 0) return -1;
        int64_t maxdeg = 0;
        for (int64_t i = 0; i < n; i++)
            if (csc_degree(untyped, i) > maxdeg) maxdeg = csc_degree(untyped, i);
        if (maxdeg > pb->max_in_degree)
            return err_set(err, CGNN_ERR_INPUT, "%s: a node of part %d has %lld in-edges, above \"max_in_degree\" %lld",
                           pb->json_path, part, (long long)maxdeg, (long long)pb->max_in_degree);
        return 0;
    }
    for (int k = 0; k < pb->num_edge_types; k++) {
        const int d = pb->etype_dst[k], sty = pb->etype_src[k];
        const int64_t first = pb->type_map[(size_t)d * (size_t)(P + 1) + (size_t)part];
        const int64_t n = pb->type_map[(size_t)d * (size_t)(P + 1) + (size_t)part + 1] - first;
        if (csc_build_range(&typed[k], first, n, pb->type_nodes[sty], &ds->edge_types[k].edges, T, err) != 0)
            return err_prefix(err, "%s: ", ds->edge_types[k].path);
        int64_t maxdeg = 0;
        for (int64_t i = 0; i < n; i++)
            if (csc_degree(&typed[k], i) > maxdeg) maxdeg = csc_degree(&typed[k], i);
        if (maxdeg > pb->etype_max_in_degree[k])
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: a node of part %d has %lld in-edges of type '%s', above \"etype_max_in_degree\" %lld",
                           pb->json_path, part, (long long)maxdeg, pb->etype_names[k],
                           (long long)pb->etype_max_in_degree[k]);
    }
    return 0;
}

/* The loaded part's local index (pb->local, or pb->type_local[K]), checked. */
static int build_local(partbook *pb, int part, int T, cgnn_err *err) {
    if (pb->typed) pb->type_local = cgnn_calloc((size_t)pb->num_edge_types, sizeof *pb->type_local);
    return build_checked_index(pb, &pb->ds, part, T, &pb->local, pb->type_local, err);
}

static int load_part(partbook *pb, int part, int nthreads, cgnn_err *err) {
    if (part < 0 || part >= pb->num_parts)
        return err_set(err, CGNN_ERR_INPUT, "%s: part %d out of range [0, %d) (num_parts)", pb->json_path, part,
                       pb->num_parts);
    const int T = nthreads > 0 ? nthreads : omp_get_max_threads();
    pb->part = part;
    pb->first = pb->node_map[part];
    pb->n_local = pb->node_map[part + 1] - pb->first;
    if (dataset_open(&pb->ds, pb->part_dirs[part], err) != 0) {
        err_prefix(err, "part %d of %s: ", part, pb->json_path);
        return -1;
    }
    if (check_part(pb, &pb->ds, part, err) != 0) return -1;
    if (dataset_open(&pb->global, pb->global_dir, err) != 0) {
        err_prefix(err, "the global splits of %s: ", pb->json_path);
        return -1;
    }
    if (check_part(pb, &pb->global, DS_PARTITION_GLOBAL, err) != 0) return -1;
    if (load_maps(pb, T, err) != 0) return -1;
    if (!pb->typed) pb->orig_of_local = pb->orig_of_new + pb->first;
    return build_local(pb, part, T, err);
}

int partbook_open(partbook *pb, const char *path, int part, int nthreads, cgnn_err *err) {
    int rc = read_json(pb, path, 0, err);
    if (rc == 0) rc = load_part(pb, part, nthreads, err);
    if (rc != 0) partbook_close(pb);
    return rc;
}

int partbook_open_for_rank(partbook *pb, const char *path, int rank, int world, int nthreads, const char *what,
                           cgnn_err *err) {
    if (partbook_read_json(pb, path, err) != 0) return what ? err_prefix(err, "%s: ", what) : -1;
    const int P = pb->num_parts;
    partbook_close(pb);
    if (partbook_check_world(P, world, err) != 0) return err_prefix(err, "%s: ", path);
    if (partbook_open(pb, path, partbook_part_for_rank(P, rank, world), nthreads, err) != 0) return -1;
    if (pb->num_parts != P) { /* rewritten between the two reads */
        err_set(err, CGNN_ERR_INPUT, "%s: num_parts changed while the job started", pb->json_path);
        partbook_close(pb);
        return -1;
    }
    return 0;
}

int partbook_verify(const partbook *pb, int nthreads, cgnn_err *err) {
    const int T = nthreads > 0 ? nthreads : omp_get_max_threads();
    dataset ds;
    for (int p = 0; p <= pb->num_parts; p++) { /* the parts, then the global splits */
        const int part = p < pb->num_parts ? p : DS_PARTITION_GLOBAL;
        if (dataset_open(&ds, part == DS_PARTITION_GLOBAL ? pb->global_dir : pb->part_dirs[p], err) != 0) {
            if (part == DS_PARTITION_GLOBAL) err_prefix(err, "the global splits of %s: ", pb->json_path);
            else err_prefix(err, "part %d of %s: ", p, pb->json_path);
            return -1;
        }
        int rc = check_part(pb, &ds, part, err);
        if (rc == 0 && part != DS_PARTITION_GLOBAL) { /* the index training builds, and its bounds */
            csc_graph untyped;
            memset(&untyped, 0, sizeof untyped);
            csc_graph *typed = pb->typed ? cgnn_calloc((size_t)pb->num_edge_types, sizeof *typed) : NULL;
            rc = build_checked_index(pb, &ds, part, T, &untyped, typed, err);
            csc_free(&untyped);
            for (int k = 0; typed && k < pb->num_edge_types; k++) csc_free(&typed[k]);
            free(typed);
        }
        dataset_close(&ds);
        if (rc != 0) return -1;
    }
    partbook maps = *pb; /* the maps' fields only, on a copy: pb stays as it was */
    maps.orig_ids_file = maps.new_ids_file = (npy_array){0};
    maps.type_orig_files = maps.type_new_files = NULL;
    maps.type_orig_of_new = maps.type_new_of_orig = NULL;
    const int rc = load_maps(&maps, T, err);
    npy_close(&maps.orig_ids_file);
    npy_close(&maps.new_ids_file);
    for (int t = 0; pb->typed && maps.type_orig_files && t < pb->num_node_types; t++) {
        npy_close(&maps.type_orig_files[t]);
        npy_close(&maps.type_new_files[t]);
    }
    free(maps.type_orig_files);
    free(maps.type_new_files);
    free((void *)maps.type_orig_of_new);
    free((void *)maps.type_new_of_orig);
    return rc;
}

void partbook_close(partbook *pb) {
    if (!pb) return;
    free(pb->node_map);
    free(pb->edge_map);
    for (int p = 0; pb->part_dirs && p < pb->num_parts; p++) free(pb->part_dirs[p]);
    free(pb->part_dirs);
    free(pb->stats.part_nodes);
    free(pb->stats.part_edges);
    for (int k = 0; k < pb->stats.num_seedsets; k++) free(pb->stats.seeds[k].per_part);
    free(pb->stats.seeds);
    dataset_close(&pb->ds);
    dataset_close(&pb->global);
    csc_free(&pb->local);
    npy_close(&pb->orig_ids_file);
    npy_close(&pb->new_ids_file);
    for (int k = 0; pb->type_local && k < pb->num_edge_types; k++) csc_free(&pb->type_local[k]);
    free(pb->type_local);
    for (int t = 0; t < pb->num_node_types; t++) {
        if (pb->type_orig_files) npy_close(&pb->type_orig_files[t]);
        if (pb->type_new_files) npy_close(&pb->type_new_files[t]);
    }
    free(pb->type_orig_files);
    free(pb->type_new_files);
    free((void *)pb->type_orig_of_new);
    free((void *)pb->type_new_of_orig);
    free(pb->ntype_names);
    free(pb->etype_names);
    free(pb->etype_src);
    free(pb->etype_dst);
    free(pb->type_nodes);
    free(pb->type_map);
    free(pb->etype_map);
    free(pb->etype_max_in_degree);
    free(pb->type_orig_paths);
    free(pb->type_new_paths);
    memset(pb, 0, sizeof *pb);
    pb->part = -1;
}

int partbook_is_partition(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    size_t n = strlen(path);
    if (!S_ISDIR(st.st_mode)) return n > 5 && strcmp(path + n - 5, ".json") == 0;
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/metadata.yaml", path);
    if (access(meta, F_OK) == 0) return 0;
    DIR *d = opendir(path);
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        found = k > 5 && strcmp(e->d_name + k - 5, ".json") == 0;
    }
    closedir(d);
    return found;
}

int partbook_open_maps(partbook *pb, int nthreads, cgnn_err *err) {
    return load_maps(pb, nthreads > 0 ? nthreads : omp_get_max_threads(), err);
}

int partbook_open_client(partbook *pb, const char *path, int nthreads, cgnn_err *err) {
    int rc = read_json(pb, path, 0, err);
    if (rc == 0 && dataset_open(&pb->global, pb->global_dir, err) != 0)
        rc = err_prefix(err, "the global splits of %s: ", pb->json_path);
    if (rc == 0) rc = check_part(pb, &pb->global, DS_PARTITION_GLOBAL, err);
    if (rc == 0) rc = partbook_open_maps(pb, nthreads, err);
    if (rc != 0) partbook_close(pb);
    return rc;
}

int partbook_check_world(int num_parts, int world, cgnn_err *err) {
    if (num_parts >= 1 && world >= num_parts && world % num_parts == 0) return 0;
    return err_set(err, CGNN_ERR_INPUT,
                   "the graph has %d parts but the job has %d ranks: every part must be loaded by the same number "
                   "of ranks (rank r loads part r %% %d), so run %d, %d, %d, ... ranks, or partition into a divisor "
                   "of %d parts",
                   num_parts, world, num_parts, num_parts, 2 * num_parts, 3 * num_parts, world);
}
