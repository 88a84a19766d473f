/* gigl_import.c — GiGL's preprocessed output (preprocessed_metadata.yaml + TFRecords) into a
 * GraphBolt on-disk dataset; the rules are in gigl_import.h and docs/DATASETS.md.
 *
 * Why convert instead of reading the TFRecords in place at every run: the trainer memory-maps
 * its inputs (every rank shares one page-cache copy, io/dataset.h) and validates them once;
 * TFRecords are a stream of varint-coded protobufs that must be decoded in full (a CRC per
 * record, a parse per feature) before the first batch. Decoding once into .npy files makes every
 * later run start as fast as on any GraphBolt dataset, and the cache entry is named by a
 * fingerprint of the inputs, so a changed TFRecord converts again. */
#include "train/gigl_import.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "graph/edge_split.h"
#include "io/cachedir.h"
#include "io/durable.h"
#include "io/npy.h"
#include "io/tfrecord.h"
#include "io/yamldoc.h"
#include "util/cleanup.h"
#include "util/log.h"

#define GI_NAME_MAX CONFIG_TYPE_NAME_MAX

/* ---- growable arrays --------------------------------------------------------------------- */
typedef struct vec {
    void *p;
    size_t n, cap, elem; /* n elements of elem bytes */
} vec;

static void vec_init(vec *v, size_t elem) { memset(v, 0, sizeof *v), v->elem = elem; }
static void *vec_push(vec *v, size_t k) {
    if (v->n + k > v->cap) {
        size_t nc = v->cap ? v->cap : 64;
        while (nc < v->n + k) nc *= 2;
        v->p = cgnn_realloc(v->p, nc * v->elem);
        v->cap = nc;
    }
    void *at = (char *)v->p + v->n * v->elem;
    v->n += k;
    return at;
}
static void vec_free(vec *v) { free(v->p), memset(v, 0, sizeof *v); }

/* ---- the parsed input -------------------------------------------------------------------- */

/* One TFRecord entity: a node type's records, or an edge type's main / positive / negative
 * records. Keys point into the YAML tree. */
typedef struct gi_entity {
    int present;
    char field[160];              /* "condensedNodeTypeToPreprocessedMetadata.0" for messages */
    const char *prefix;           /* tfrecordUriPrefix as written */
    int nkeys, nlabels;
    const char **keys, **labels;  /* featureKeys / labelKeys (owned arrays of borrowed strings) */
    int64_t feature_dim;          /* -1: not given */
    int nfiles;
    char **files;                 /* resolved, sorted (owned) */
} gi_entity;

typedef struct gi_ntype {
    char name[GI_NAME_MAX];
    int64_t cid;
    const char *id_key;
    gi_entity ent;
    /* decoded */
    int64_t n, dim;
    float *feat;   /* (n, dim) by node id, owned */
    int64_t *label; /* (n) by node id or NULL, owned */
} gi_ntype;

typedef struct gi_etype {
    char name[3 * GI_NAME_MAX + 2];
    int src, dst; /* node type indices */
    int64_t cid;
    const char *src_key, *dst_key;
    gi_entity main, pos, neg;
    /* decoded */
    int64_t e, dim;
    int64_t *ids;  /* (2, e): src row then dst row, owned */
    float *feat;   /* (e, dim) or NULL, owned */
    int64_t npos, nneg;
    int64_t *pos_ids, *neg_ids; /* (2, npos) / (2, nneg), owned */
} gi_etype;

struct gigl_src {
    char yaml_path[4096]; /* as named (messages) */
    char yaml_abs[4096];  /* absolute (the output's comment) */
    char yaml_dir[4096];
    char config_path[4096];
    yamldoc doc;
    int typed;
    task_kind task;
    int sup;  /* NC: the supervision node type; LP: the supervision edge type (index) */
    double num_val, num_test;
    int nn, ne;
    gi_ntype nt[CONFIG_MAX_TYPES];
    gi_etype et[CONFIG_MAX_TYPES];
    uint32_t yaml_crc;
    char canon[8192]; /* the types and task, canonical, for the fingerprint */
};

/* ---- YAML helpers ------------------------------------------------------------------------ */

/* The value of key in either spelling (camelCase, snake_case); NULL when absent. Both given is an
 * error (-1). */
static int get2(const yamldoc *doc, const yamldoc_node *map, const char *camel, const char *snake,
                const yamldoc_node **out, cgnn_err *err) {
    *out = NULL;
    const yamldoc_node *a = yamldoc_get(map, camel), *b = yamldoc_get(map, snake);
    if (a && b)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): both '%s' and '%s' are given; write one", doc->file,
                       map->path, map->line, camel, snake);
    *out = a ? a : b;
    return 0;
}

static int get_str2(const yamldoc *doc, const yamldoc_node *map, const char *camel, const char *snake,
                    const char **out, cgnn_err *err) {
    const yamldoc_node *v;
    if (get2(doc, map, camel, snake, &v, err) != 0) return -1;
    *out = NULL;
    if (!v) return 0;
    if (yamldoc_expect_kind(doc, v, YAMLDOC_SCALAR, err) != 0) return -1;
    *out = v->scalar;
    return 0;
}

/* A list of strings (featureKeys / labelKeys); *n = 0 when absent. */
static int get_keys(const yamldoc *doc, const yamldoc_node *map, const char *camel, const char *snake,
                    const char ***out, int *n, cgnn_err *err) {
    const yamldoc_node *v;
    *out = NULL, *n = 0;
    if (get2(doc, map, camel, snake, &v, err) != 0) return -1;
    if (!v || (v->kind == YAMLDOC_SCALAR && (!v->scalar[0] || !strcmp(v->scalar, "null") || !strcmp(v->scalar, "~"))))
        return 0;
    if (yamldoc_expect_kind(doc, v, YAMLDOC_SEQUENCE, err) != 0) return -1;
    *out = cgnn_calloc((size_t)v->len + 1, sizeof **out);
    for (int i = 0; i < v->len; i++) {
        if (yamldoc_expect_kind(doc, v->items[i], YAMLDOC_SCALAR, err) != 0) return -1;
        if (!v->items[i]->scalar[0])
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): empty feature key", doc->file, v->items[i]->path,
                           v->items[i]->line);
        for (int j = 0; j < i; j++)
            if (!strcmp((*out)[j], v->items[i]->scalar))
                return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): key '%s' is listed twice", doc->file,
                               v->items[i]->path, v->items[i]->line, v->items[i]->scalar);
        (*out)[i] = v->items[i]->scalar;
    }
    *n = v->len;
    return 0;
}

static const char *const NODE_OUT_KEYS[] = {
    "nodeIdKey", "node_id_key", "featureKeys", "feature_keys", "labelKeys", "label_keys", "tfrecordUriPrefix",
    "tfrecord_uri_prefix", "schemaUri", "schema_uri", "enumeratedNodeIdsBqTable", "enumerated_node_ids_bq_table",
    "enumeratedNodeDataBqTable", "enumerated_node_data_bq_table", "featureDim", "feature_dim",
    "transformFnAssetsUri", "transform_fn_assets_uri", "quantizedFeatureMetadata", "quantized_feature_metadata", NULL};
static const char *const EDGE_INFO_KEYS[] = {
    "featureKeys", "feature_keys", "labelKeys", "label_keys", "tfrecordUriPrefix", "tfrecord_uri_prefix",
    "schemaUri", "schema_uri", "enumeratedEdgeDataBqTable", "enumerated_edge_data_bq_table", "featureDim",
    "feature_dim", "transformFnAssetsUri", "transform_fn_assets_uri", "quantizedFeatureMetadata",
    "quantized_feature_metadata", NULL};
/* an EdgeMetadataOutput: its own keys, and GiGL's older schema's EdgeMetadataInfo keys at its level */
static const char *const EDGE_OUT_KEYS[] = {
    "srcNodeIdKey", "src_node_id_key", "dstNodeIdKey", "dst_node_id_key", "mainEdgeInfo", "main_edge_info",
    "positiveEdgeInfo", "positive_edge_info", "negativeEdgeInfo", "negative_edge_info",
    "featureKeys", "feature_keys", "labelKeys", "label_keys", "tfrecordUriPrefix", "tfrecord_uri_prefix",
    "schemaUri", "schema_uri", "enumeratedEdgeDataBqTable", "enumerated_edge_data_bq_table", "featureDim",
    "feature_dim", "transformFnAssetsUri", "transform_fn_assets_uri", NULL};
static const char *const TOP_KEYS[] = {"condensedNodeTypeToPreprocessedMetadata",
                                       "condensed_node_type_to_preprocessed_metadata",
                                       "condensedEdgeTypeToPreprocessedMetadata",
                                       "condensed_edge_type_to_preprocessed_metadata", NULL};

/* ---- URIs and files ---------------------------------------------------------------------- */

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}
static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}
static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}
static int is_tfrecord_name(const char *n) { return ends_with(n, ".tfrecord") || ends_with(n, ".tfrecord.gz"); }
/* GiGL's default tfrecord_uri_pattern ".*-of-.*\.tfrecord(\.gz)?$" */
static int matches_gigl_pattern(const char *n) { return is_tfrecord_name(n) && strstr(n, "-of-") != NULL; }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Resolves prefix (see gigl_import.h) into base[cap]: the folder or path prefix it names. */
static int resolve_prefix(const gigl_src *s, const gi_entity *e, char *base, size_t cap, cgnn_err *err) {
    const char *p = e->prefix;
    if (!strncmp(p, "file://", 7)) p += 7;
    const char *colon = strstr(p, "://");
    if (colon)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s.tfrecordUriPrefix: '%s': only local paths are read (file:// or a path); copy the "
                       "TFRecords here and name the local folder (a relative path is resolved against the current "
                       "directory, then against the folders of this file and above it)",
                       s->yaml_path, e->field, e->prefix);
    if (!p[0]) return err_set(err, CGNN_ERR_INPUT, "%s: %s.tfrecordUriPrefix is empty", s->yaml_path, e->field);
    char stripped[4096];
    snprintf(stripped, sizeof stripped, "%s", p);
    size_t L = strlen(stripped);
    const int trailing = L > 1 && stripped[L - 1] == '/';
    while (L > 1 && stripped[L - 1] == '/') stripped[--L] = 0;
    /* what must exist: the folder itself, or (a path prefix) its parent folder */
    char probe[4096];
    if (trailing) snprintf(probe, sizeof probe, "%s", stripped);
    else {
        const char *slash = strrchr(stripped, '/');
        if (slash) snprintf(probe, sizeof probe, "%.*s", (int)(slash - stripped), stripped);
        else snprintf(probe, sizeof probe, ".");
        if (is_dir(stripped)) snprintf(probe, sizeof probe, "%s", stripped);
    }
    if (stripped[0] == '/') {
        if ((size_t)snprintf(base, cap, "%s", stripped) >= cap) return err_set(err, CGNN_ERR_INPUT, "%s: path too long", s->yaml_path);
        return 0;
    }
    if (is_dir(stripped) || (!trailing && exists(probe) && is_dir(probe) && strcmp(probe, ".") != 0)) {
        snprintf(base, cap, "%s", stripped);
        return 0;
    }
    /* the folders of the YAML and above it, nearest first */
    char anc[4096];
    snprintf(anc, sizeof anc, "%s", s->yaml_dir);
    for (;;) {
        char cand[8200];
        snprintf(cand, sizeof cand, "%s/%s", anc, stripped);
        char cprobe[8200];
        if (trailing || is_dir(cand)) snprintf(cprobe, sizeof cprobe, "%s", cand);
        else {
            const char *slash = strrchr(cand, '/');
            snprintf(cprobe, sizeof cprobe, "%.*s", (int)(slash - cand), cand);
        }
        if (is_dir(cprobe) && (is_dir(cand) || !trailing)) {
            /* a path prefix must select a file there; a folder must exist */
            int ok = is_dir(cand);
            if (!ok && !trailing) {
                const char *slash = strrchr(cand, '/');
                const char *stem = slash + 1;
                DIR *d = opendir(cprobe);
                struct dirent *de;
                while (d && (de = readdir(d)) != NULL && !ok)
                    ok = !strncmp(de->d_name, stem, strlen(stem)) && is_tfrecord_name(de->d_name);
                if (d) closedir(d);
            }
            if (ok) {
                if (strlen(cand) >= cap) return err_set(err, CGNN_ERR_INPUT, "%s: path too long", s->yaml_path);
                snprintf(base, cap, "%s", cand);
                return 0;
            }
        }
        char *slash = strrchr(anc, '/');
        if (!slash || slash == anc) break;
        *slash = 0;
    }
    return err_set(err, CGNN_ERR_INPUT,
                   "%s: %s.tfrecordUriPrefix: '%s' is not found relative to the current directory, nor relative to "
                   "%s or any folder above it",
                   s->yaml_path, e->field, e->prefix, s->yaml_dir);
}

static int list_files(const gigl_src *s, gi_entity *e, cgnn_err *err) {
    char base[4096];
    if (resolve_prefix(s, e, base, sizeof base, err) != 0) return -1;
    char folder[4096], stem[4096] = "";
    if (is_dir(base)) snprintf(folder, sizeof folder, "%s", base);
    else {
        const char *slash = strrchr(base, '/');
        if (slash) snprintf(folder, sizeof folder, "%.*s", (int)(slash - base), base), snprintf(stem, sizeof stem, "%s", slash + 1);
        else snprintf(folder, sizeof folder, "."), snprintf(stem, sizeof stem, "%s", base);
    }
    DIR *d = opendir(folder);
    if (!d) return err_set(err, CGNN_ERR_INPUT, "%s: %s: %s: %s", s->yaml_path, e->field, folder, strerror(errno));
    vec names;
    vec_init(&names, sizeof(char *));
    int any_gigl = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (stem[0] && strncmp(de->d_name, stem, strlen(stem)) != 0) continue;
        if (!is_tfrecord_name(de->d_name)) continue;
        char full[8200];
        snprintf(full, sizeof full, "%s/%s", folder, de->d_name);
        struct stat st;
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (matches_gigl_pattern(de->d_name)) any_gigl = 1;
        *(char **)vec_push(&names, 1) = strdup(full);
    }
    closedir(d);
    char **all = names.p;
    int n = 0;
    for (size_t i = 0; i < names.n; i++) {
        const char *leaf = strrchr(all[i], '/') + 1;
        if (!any_gigl || matches_gigl_pattern(leaf)) all[n++] = all[i];
        else free(all[i]);
    }
    if (n == 0) {
        vec_free(&names);
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s.tfrecordUriPrefix '%s' (%s): no TFRecord files there (names matching "
                       "'*-of-*.tfrecord[.gz]', or else '*.tfrecord[.gz]')",
                       s->yaml_path, e->field, e->prefix, base);
    }
    qsort(all, (size_t)n, sizeof *all, cmp_str);
    e->files = all;
    e->nfiles = n;
    return 0;
}

/* ---- reading the YAML -------------------------------------------------------------------- */

static int parse_info(gigl_src *s, const yamldoc_node *m, gi_entity *e, const char *field, const char *const *allowed,
                      cgnn_err *err) {
    const yamldoc *doc = &s->doc;
    snprintf(e->field, sizeof e->field, "%s", field);
    if (yamldoc_expect_kind(doc, m, YAMLDOC_MAPPING, err) != 0) return -1;
    if (yamldoc_check_keys(doc, m, allowed, err) != 0) return -1;
    const yamldoc_node *q;
    if (get2(doc, m, "quantizedFeatureMetadata", "quantized_feature_metadata", &q, err) != 0) return -1;
    if (q)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: %s.quantizedFeatureMetadata (line %d): quantized (packed uint8) features are not read "
                       "by cgnn; preprocess without quantization",
                       doc->file, field, q->line);
    if (get_str2(doc, m, "tfrecordUriPrefix", "tfrecord_uri_prefix", &e->prefix, err) != 0) return -1;
    if (!e->prefix || !e->prefix[0])
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: missing tfrecordUriPrefix (where the TFRecords are)", doc->file,
                       field);
    if (get_keys(doc, m, "featureKeys", "feature_keys", &e->keys, &e->nkeys, err) != 0) return -1;
    if (get_keys(doc, m, "labelKeys", "label_keys", &e->labels, &e->nlabels, err) != 0) return -1;
    const yamldoc_node *fd;
    e->feature_dim = -1;
    if (get2(doc, m, "featureDim", "feature_dim", &fd, err) != 0) return -1;
    if (fd) {
        if (yamldoc_expect_kind(doc, fd, YAMLDOC_SCALAR, err) != 0) return -1;
        if (yamldoc_parse_int(fd->scalar, &e->feature_dim) != 0 || e->feature_dim < 0 || e->feature_dim > (1 << 24))
            return err_set(err, CGNN_ERR_INPUT, "%s: %s.featureDim (line %d): '%s' is not a uint32 feature width",
                           doc->file, field, fd->line, fd->scalar);
    }
    e->present = 1;
    return list_files(s, e, err);
}

/* The condensed id of a map key ('0' or 0). */
static int cid_of(const yamldoc *doc, const yamldoc_node *map, int i, int64_t *id, cgnn_err *err) {
    if (yamldoc_parse_int(map->keys[i], id) != 0 || *id < 0 || *id > 0xffffffffLL)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): key '%.40s' is not a condensed type id (a uint32)",
                       doc->file, map->path[0] ? map->path : "(top level)", map->key_lines[i], map->keys[i]);
    return 0;
}

/* graphMetadata's condensed maps of the task config: names by condensed id. Absent maps: the
 * i-th declared type has id i (GiGL's populator assigns them in that order). */
static int config_cids(gigl_src *s, const task_config *tc, int64_t *ncid, int64_t *ecid, cgnn_err *err) {
    for (int i = 0; i < CONFIG_MAX_TYPES; i++) ncid[i] = ecid[i] = i;
    yamldoc cdoc;
    if (yamldoc_load(&cdoc, tc->file, err) != 0) return -1;
    int rc = 0;
    const yamldoc_node *gm = yamldoc_get(cdoc.root, "graphMetadata");
    const yamldoc_node *nm = gm ? yamldoc_get(gm, "condensedNodeTypeMap") : NULL;
    const yamldoc_node *em = gm ? yamldoc_get(gm, "condensedEdgeTypeMap") : NULL;
    /* config.c checked both maps (1:1 with the declared types); here only the ids are read */
    for (int i = 0; nm && nm->kind == YAMLDOC_MAPPING && i < nm->len && rc == 0; i++) {
        int64_t id;
        if (cid_of(&cdoc, nm, i, &id, err) != 0) rc = -1;
        for (int t = 0; rc == 0 && t < tc->num_node_types; t++)
            if (nm->items[i]->kind == YAMLDOC_SCALAR && !strcmp(nm->items[i]->scalar, tc->node_types[t])) ncid[t] = id;
    }
    for (int i = 0; em && em->kind == YAMLDOC_MAPPING && i < em->len && rc == 0; i++) {
        int64_t id;
        if (cid_of(&cdoc, em, i, &id, err) != 0) rc = -1;
        const yamldoc_node *v = em->items[i];
        const yamldoc_node *sn = yamldoc_get(v, "srcNodeType"), *rl = yamldoc_get(v, "relation"),
                           *dn = yamldoc_get(v, "dstNodeType");
        for (int t = 0; rc == 0 && sn && rl && dn && t < tc->num_edge_types; t++) {
            const config_edge_type *et = &tc->edge_types[t];
            if (!strcmp(et->src_node_type, sn->scalar) && !strcmp(et->relation, rl->scalar) &&
                !strcmp(et->dst_node_type, dn->scalar))
                ecid[t] = id;
        }
    }
    yamldoc_free(&cdoc);
    (void)s;
    return rc;
}

static const yamldoc_node *find_cid(const yamldoc *doc, const yamldoc_node *map, int64_t cid, cgnn_err *err, int *bad) {
    *bad = 0;
    for (int i = 0; map && i < map->len; i++) {
        int64_t id;
        if (cid_of(doc, map, i, &id, err) != 0) {
            *bad = 1;
            return NULL;
        }
        if (id == cid) return map->items[i];
    }
    return NULL;
}

static void entity_free(gi_entity *e) {
    free(e->keys), free(e->labels);
    for (int i = 0; i < e->nfiles; i++) free(e->files[i]);
    free(e->files);
    memset(e, 0, sizeof *e);
}

void gigl_src_free(gigl_src *s) {
    if (!s) return;
    for (int t = 0; t < s->nn; t++) entity_free(&s->nt[t].ent), free(s->nt[t].feat), free(s->nt[t].label);
    for (int t = 0; t < s->ne; t++) {
        gi_etype *e = &s->et[t];
        entity_free(&e->main), entity_free(&e->pos), entity_free(&e->neg);
        free(e->ids), free(e->feat), free(e->pos_ids), free(e->neg_ids);
    }
    yamldoc_free(&s->doc);
    free(s);
}

static void canon_add(gigl_src *s, const char *fmt, const char *a, long long b) {
    size_t L = strlen(s->canon);
    if (L + 1 < sizeof s->canon) snprintf(s->canon + L, sizeof s->canon - L, fmt, a, b);
}

int gigl_src_open(gigl_src **out, const task_config *tc, const char *metadata_yaml, cgnn_err *err) {
    *out = NULL;
    gigl_src *s = cgnn_calloc(1, sizeof *s);
    snprintf(s->yaml_path, sizeof s->yaml_path, "%s", metadata_yaml);
    if (!realpath(metadata_yaml, s->yaml_abs)) snprintf(s->yaml_abs, sizeof s->yaml_abs, "%s", metadata_yaml);
    snprintf(s->config_path, sizeof s->config_path, "%s", tc->file);
    {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", metadata_yaml);
        char *slash = strrchr(tmp, '/');
        if (slash) *slash = 0;
        else snprintf(tmp, sizeof tmp, ".");
        if (!realpath(tmp, s->yaml_dir)) snprintf(s->yaml_dir, sizeof s->yaml_dir, "%s", tmp);
    }
    s->task = tc->task;
    s->num_val = tc->args.num_val;
    s->num_test = tc->args.num_test;
    if (yamldoc_load(&s->doc, metadata_yaml, err) != 0) goto fail;
    {
        size_t len = 0;
        FILE *f = fopen(metadata_yaml, "rb");
        uLong crc = crc32(0L, Z_NULL, 0);
        char buf[65536];
        while (f && (len = fread(buf, 1, sizeof buf, f)) > 0) crc = crc32(crc, (const Bytef *)buf, (uInt)len);
        if (f) fclose(f);
        s->yaml_crc = (uint32_t)crc;
    }
    const yamldoc *doc = &s->doc;
    const yamldoc_node *root = doc->root;
    if (!root || root->kind != YAMLDOC_MAPPING) {
        err_set(err, CGNN_ERR_INPUT, "%s: not GiGL's preprocessed metadata (expected a mapping with "
                                     "condensedNodeTypeToPreprocessedMetadata)", metadata_yaml);
        goto fail;
    }
    if (yamldoc_check_keys(doc, root, TOP_KEYS, err) != 0) goto fail;
    const yamldoc_node *nmap, *emap;
    if (get2(doc, root, "condensedNodeTypeToPreprocessedMetadata", "condensed_node_type_to_preprocessed_metadata",
             &nmap, err) != 0 ||
        get2(doc, root, "condensedEdgeTypeToPreprocessedMetadata", "condensed_edge_type_to_preprocessed_metadata",
             &emap, err) != 0)
        goto fail;
    if (!nmap || !emap) {
        err_set(err, CGNN_ERR_INPUT, "%s: missing %s", metadata_yaml,
                !nmap ? "condensedNodeTypeToPreprocessedMetadata" : "condensedEdgeTypeToPreprocessedMetadata");
        goto fail;
    }
    if (yamldoc_expect_kind(doc, nmap, YAMLDOC_MAPPING, err) != 0 || yamldoc_expect_kind(doc, emap, YAMLDOC_MAPPING, err) != 0)
        goto fail;

    /* the types: the config's, in its order; none declared: the one node and edge type there */
    int64_t ncid[CONFIG_MAX_TYPES], ecid[CONFIG_MAX_TYPES];
    if (config_cids(s, tc, ncid, ecid, err) != 0) goto fail;
    s->nn = tc->num_node_types > 0 ? tc->num_node_types : 1;
    s->ne = tc->num_edge_types > 0 ? tc->num_edge_types : 1;
    s->typed = tc->num_node_types > 1 || tc->num_edge_types > 1;
    if (tc->num_node_types == 0 && (nmap->len != 1 || emap->len != 1)) {
        err_set(err, CGNN_ERR_INPUT,
                "%s: graphMetadata declares no nodeTypes / edgeTypes, but %s has %d node and %d edge types: name them "
                "(with condensedNodeTypeMap / condensedEdgeTypeMap)",
                tc->file, metadata_yaml, nmap->len, emap->len);
        goto fail;
    }
    for (int t = 0; t < s->nn; t++) {
        gi_ntype *n = &s->nt[t];
        snprintf(n->name, sizeof n->name, "%s", tc->num_node_types ? tc->node_types[t] : "_default");
        int bad;
        n->cid = tc->num_node_types ? ncid[t] : 0;
        const yamldoc_node *m = tc->num_node_types ? find_cid(doc, nmap, n->cid, err, &bad) : nmap->items[0];
        if (tc->num_node_types && bad) goto fail;
        if (!tc->num_node_types) {
            if (cid_of(doc, nmap, 0, &n->cid, err) != 0) goto fail;
        }
        if (!m) {
            err_set(err, CGNN_ERR_INPUT,
                    "%s: node type '%s' (condensed id %lld in %s) has no entry in condensedNodeTypeToPreprocessedMetadata",
                    metadata_yaml, n->name, (long long)n->cid, tc->file);
            goto fail;
        }
        char field[160];
        snprintf(field, sizeof field, "condensedNodeTypeToPreprocessedMetadata.%lld", (long long)n->cid);
        if (yamldoc_expect_kind(doc, m, YAMLDOC_MAPPING, err) != 0) goto fail;
        if (get_str2(doc, m, "nodeIdKey", "node_id_key", &n->id_key, err) != 0) goto fail;
        if (!n->id_key || !n->id_key[0]) {
            err_set(err, CGNN_ERR_INPUT, "%s: %s: missing nodeIdKey (the feature holding the node id)", metadata_yaml, field);
            goto fail;
        }
        if (parse_info(s, m, &n->ent, field, NODE_OUT_KEYS, err) != 0) goto fail;
        canon_add(s, "node %s cid %lld;", n->name, (long long)n->cid);
    }
    for (int t = 0; t < s->ne; t++) {
        gi_etype *e = &s->et[t];
        if (tc->num_edge_types) {
            const config_edge_type *ce = &tc->edge_types[t];
            config_edge_type_name(ce, e->name, sizeof e->name);
            e->src = e->dst = -1;
            for (int k = 0; k < s->nn; k++) {
                if (!strcmp(s->nt[k].name, ce->src_node_type)) e->src = k;
                if (!strcmp(s->nt[k].name, ce->dst_node_type)) e->dst = k;
            }
            if (tc->num_node_types == 0 || e->src < 0 || e->dst < 0) {
                if (!s->typed) e->src = e->dst = 0; /* untyped: names are labels only */
                else {
                    err_set(err, CGNN_ERR_INPUT, "%s: edge type %s names a node type graphMetadata.nodeTypes lacks",
                            tc->file, e->name);
                    goto fail;
                }
            }
        } else {
            snprintf(e->name, sizeof e->name, "_default");
            e->src = e->dst = 0;
        }
        int bad;
        e->cid = tc->num_edge_types ? ecid[t] : 0;
        const yamldoc_node *m = tc->num_edge_types ? find_cid(doc, emap, e->cid, err, &bad) : emap->items[0];
        if (tc->num_edge_types && bad) goto fail;
        if (!tc->num_edge_types && cid_of(doc, emap, 0, &e->cid, err) != 0) goto fail;
        if (!m) {
            err_set(err, CGNN_ERR_INPUT,
                    "%s: edge type %s (condensed id %lld in %s) has no entry in condensedEdgeTypeToPreprocessedMetadata",
                    metadata_yaml, e->name, (long long)e->cid, tc->file);
            goto fail;
        }
        char field[160];
        snprintf(field, sizeof field, "condensedEdgeTypeToPreprocessedMetadata.%lld", (long long)e->cid);
        if (yamldoc_expect_kind(doc, m, YAMLDOC_MAPPING, err) != 0) goto fail;
        if (yamldoc_check_keys(doc, m, EDGE_OUT_KEYS, err) != 0) goto fail;
        if (get_str2(doc, m, "srcNodeIdKey", "src_node_id_key", &e->src_key, err) != 0 ||
            get_str2(doc, m, "dstNodeIdKey", "dst_node_id_key", &e->dst_key, err) != 0)
            goto fail;
        if (!e->src_key || !e->dst_key || !e->src_key[0] || !e->dst_key[0]) {
            err_set(err, CGNN_ERR_INPUT, "%s: %s: missing %s", metadata_yaml, field,
                    !e->src_key || !e->src_key[0] ? "srcNodeIdKey" : "dstNodeIdKey");
            goto fail;
        }
        const yamldoc_node *mi, *pi, *ni, *legacy;
        if (get2(doc, m, "mainEdgeInfo", "main_edge_info", &mi, err) != 0 ||
            get2(doc, m, "positiveEdgeInfo", "positive_edge_info", &pi, err) != 0 ||
            get2(doc, m, "negativeEdgeInfo", "negative_edge_info", &ni, err) != 0 ||
            get2(doc, m, "tfrecordUriPrefix", "tfrecord_uri_prefix", &legacy, err) != 0)
            goto fail;
        char sub[200];
        if (mi && legacy) {
            err_set(err, CGNN_ERR_INPUT, "%s: %s: both mainEdgeInfo and a tfrecordUriPrefix of its own (GiGL's older "
                                         "schema); write one", metadata_yaml, field);
            goto fail;
        }
        if (mi) {
            snprintf(sub, sizeof sub, "%s.mainEdgeInfo", field);
            if (parse_info(s, mi, &e->main, sub, EDGE_INFO_KEYS, err) != 0) goto fail;
        } else if (legacy) {
            log_info("%s: %s: tfrecordUriPrefix at the edge level (GiGL's older schema) read as its mainEdgeInfo",
                     metadata_yaml, field);
            if (parse_info(s, m, &e->main, field, EDGE_OUT_KEYS, err) != 0) goto fail;
        } else {
            err_set(err, CGNN_ERR_INPUT, "%s: %s: missing mainEdgeInfo (the message-passing edges)", metadata_yaml, field);
            goto fail;
        }
        if (pi) {
            snprintf(sub, sizeof sub, "%s.positiveEdgeInfo", field);
            if (parse_info(s, pi, &e->pos, sub, EDGE_INFO_KEYS, err) != 0) goto fail;
        }
        if (ni) {
            snprintf(sub, sizeof sub, "%s.negativeEdgeInfo", field);
            if (parse_info(s, ni, &e->neg, sub, EDGE_INFO_KEYS, err) != 0) goto fail;
        }
        gi_entity *ents[3] = {&e->main, &e->pos, &e->neg};
        for (int k = 0; k < 3; k++)
            if (ents[k]->present && ents[k]->nlabels > 0) {
                err_set(err, CGNN_ERR_INPUT,
                        "%s: %s: labelKeys on edges ('%s'): GiGL loads no edge labels (\"Label keys are not supported "
                        "for edge entities\"); link prediction labels are positiveEdgeInfo / negativeEdgeInfo",
                        metadata_yaml, ents[k]->field, ents[k]->labels[0]);
                goto fail;
            }
        canon_add(s, "edge %s cid %lld;", e->name, (long long)e->cid);
    }
    if (nmap->len > s->nn || emap->len > s->ne)
        log_info("%s: %d node and %d edge type entries; the task config %s declares %d and %d: the others are not read",
                 metadata_yaml, nmap->len, emap->len, tc->file, s->nn, s->ne);

    /* the task's supervision type */
    s->sup = 0;
    if (s->task == TASK_NODE_CLASSIFICATION) {
        if (tc->supervision_node_type[0] && s->typed) {
            s->sup = -1;
            for (int t = 0; t < s->nn; t++)
                if (!strcmp(s->nt[t].name, tc->supervision_node_type)) s->sup = t;
            if (s->sup < 0) {
                err_set(err, CGNN_ERR_INPUT, "%s: supervisionNodeTypes '%s' is not in graphMetadata.nodeTypes", tc->file,
                        tc->supervision_node_type);
                goto fail;
            }
        } else if (s->typed && s->nn > 1) {
            err_set(err, CGNN_ERR_INPUT, "%s: node classification on %d node types needs "
                                         "taskMetadata.nodeBasedTaskMetadata.supervisionNodeTypes", tc->file, s->nn);
            goto fail;
        }
        const gi_entity *ne = &s->nt[s->sup].ent;
        if (ne->nlabels != 1) {
            err_set(err, CGNN_ERR_INPUT,
                    "%s: %s: node classification needs exactly one labelKeys entry on node type '%s' (it has %d)",
                    metadata_yaml, ne->field, s->nt[s->sup].name, ne->nlabels);
            goto fail;
        }
        canon_add(s, "task nc %s %lld;", s->nt[s->sup].name, 0);
    } else {
        if (tc->supervision_edge_type.relation[0] && s->typed) {
            char want[3 * GI_NAME_MAX + 2];
            config_edge_type_name(&tc->supervision_edge_type, want, sizeof want);
            s->sup = -1;
            for (int t = 0; t < s->ne; t++)
                if (!strcmp(s->et[t].name, want)) s->sup = t;
            if (s->sup < 0) {
                err_set(err, CGNN_ERR_INPUT, "%s: supervisionEdgeTypes %s is not in graphMetadata.edgeTypes", tc->file, want);
                goto fail;
            }
        } else if (s->typed && s->ne > 1) {
            err_set(err, CGNN_ERR_INPUT, "%s: link prediction on %d edge types needs "
                                         "taskMetadata.nodeAnchorBasedLinkPredictionTaskMetadata.supervisionEdgeTypes",
                    tc->file, s->ne);
            goto fail;
        }
        canon_add(s, "task lp %s %lld;", s->et[s->sup].name, 0);
    }
    {
        char nv[64];
        snprintf(nv, sizeof nv, "%.17g/%.17g", s->num_val, s->num_test);
        canon_add(s, "split %s typed %lld;", nv, s->typed);
    }
    *out = s;
    return 0;
fail:
    gigl_src_free(s);
    return -1;
}

/* ---- fingerprint and inputs -------------------------------------------------------------- */

static void each_file(const gigl_src *s, void (*fn)(const char *path, const char *role, void *ctx), void *ctx) {
    for (int t = 0; t < s->nn; t++)
        for (int i = 0; i < s->nt[t].ent.nfiles; i++) fn(s->nt[t].ent.files[i], "a GiGL node TFRecord", ctx);
    for (int t = 0; t < s->ne; t++) {
        const gi_entity *ents[3] = {&s->et[t].main, &s->et[t].pos, &s->et[t].neg};
        for (int k = 0; k < 3; k++)
            for (int i = 0; ents[k]->present && i < ents[k]->nfiles; i++)
                fn(ents[k]->files[i], "a GiGL edge TFRecord", ctx);
    }
}

typedef struct fp_ctx {
    uLong a;
    uint32_t b;
} fp_ctx;

static void fp_file(const char *path, const char *role, void *c) {
    (void)role;
    fp_ctx *f = c;
    char line[4300];
    struct stat st;
    char abs[4096];
    if (!realpath(path, abs)) snprintf(abs, sizeof abs, "%s", path);
    if (stat(path, &st) != 0) memset(&st, 0, sizeof st);
    int n = snprintf(line, sizeof line, "%s|%lld|%llu|%lld.%09ld\n", abs, (long long)st.st_size,
                     (unsigned long long)st.st_ino, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    if (n < 0) n = 0;
    if ((size_t)n > sizeof line) n = (int)sizeof line;
    f->a = crc32(f->a, (const Bytef *)line, (uInt)n);
    f->b = tfrecord_crc32c(f->b, line, (size_t)n);
}

void gigl_src_fingerprint(const gigl_src *s, char hex[17]) {
    fp_ctx f = {crc32(0L, Z_NULL, 0), 0};
    char head[128];
    int n = snprintf(head, sizeof head, "cgnn-gigl-import v%d yaml %08x\n", GIGL_IMPORT_VERSION, s->yaml_crc);
    f.a = crc32(f.a, (const Bytef *)head, (uInt)n);
    f.b = tfrecord_crc32c(f.b, head, (size_t)n);
    f.a = crc32(f.a, (const Bytef *)s->canon, (uInt)strlen(s->canon));
    f.b = tfrecord_crc32c(f.b, s->canon, strlen(s->canon));
    each_file(s, fp_file, &f);
    snprintf(hex, 17, "%08x%08x", (unsigned)f.a, (unsigned)f.b);
}

static void add_input(const char *path, const char *role, void *g) { outguard_add_input(g, path, role); }

void gigl_src_add_inputs(const gigl_src *s, outguard *g) {
    outguard_add_input(g, s->yaml_path, "GiGL's preprocessed metadata");
    outguard_add_input(g, s->config_path, "the task config");
    each_file(s, add_input, g);
}

/* ---- decoding ---------------------------------------------------------------------------- */

/* Where each decoded row came from, for messages about ids found after the read. */
typedef struct prov {
    int32_t file;
    int64_t rec;
} prov;

typedef struct ent_out {
    vec ids;    /* int64: (rows) for nodes, (2 * rows) interleaved src, dst for edges */
    vec feat;   /* float: rows * dim */
    vec label;  /* int64: rows (nodes with a label key) */
    vec where;  /* prov: rows */
    int64_t dim;
    int64_t *width; /* (nkeys) values per feature key, from the first record; owned */
} ent_out;

static int rec_err(cgnn_err *err, const char *file, int64_t rec, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int rec_err(cgnn_err *err, const char *file, int64_t rec, const char *fmt, ...) {
    char m[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return err_set(err, CGNN_ERR_INPUT, "%s: record %lld: %s", file, (long long)rec, m);
}

/* One id feature: an int64_list of exactly one value. */
static int get_id(const tfex *ex, const char *key, const char *what, const char *file, int64_t rec, int64_t *out,
                  cgnn_err *err) {
    const tfex_feature *f = tfex_find(ex, key);
    if (!f) return rec_err(err, file, rec, "no feature '%s' (%s)", key, what);
    if (f->kind != TFEX_INT64 || f->count != 1)
        return rec_err(err, file, rec, "feature '%s' (%s) is a %s of %lld value%s; ids are an int64_list of one value",
                       key, what, tfex_kind_name(f->kind), (long long)f->count, f->count == 1 ? "" : "s");
    return tfex_get_int64s(f, out);
}

/* Reads every record of e; node entities read id_key, edges src_key / dst_key. */
static int read_entity(const gi_entity *e, const char *id_key, const char *src_key, const char *dst_key,
                       int want_label, int want_feat, ent_out *o, int64_t *records, cgnn_err *err) {
    vec_init(&o->ids, sizeof(int64_t));
    vec_init(&o->feat, sizeof(float));
    vec_init(&o->label, sizeof(int64_t));
    vec_init(&o->where, sizeof(prov));
    o->width = cgnn_calloc((size_t)e->nkeys + 1, sizeof *o->width);
    o->dim = -1;
    tfex ex = {0};
    int rc = 0;
    for (int fi = 0; fi < e->nfiles && rc == 0; fi++) {
        const char *file = e->files[fi];
        tfrecord_reader r;
        if (tfrecord_open(&r, file, err) != 0) {
            rc = -1;
            break;
        }
        const uint8_t *d;
        size_t n;
        int got;
        char why[400];
        while (rc == 0 && (got = tfrecord_next(&r, &d, &n, err)) == 1) {
            const int64_t rec = r.index - 1;
            if (tfex_parse(&ex, d, n, why, sizeof why) != 0) {
                rc = err_set(err, CGNN_ERR_INPUT, "%s: record %lld: not a tf.Example: %s", file, (long long)rec, why);
                break;
            }
            if (id_key) {
                int64_t id;
                if (get_id(&ex, id_key, "nodeIdKey", file, rec, &id, err) != 0) rc = -1;
                else *(int64_t *)vec_push(&o->ids, 1) = id;
            } else {
                int64_t sd[2];
                if (get_id(&ex, src_key, "srcNodeIdKey", file, rec, &sd[0], err) != 0 ||
                    get_id(&ex, dst_key, "dstNodeIdKey", file, rec, &sd[1], err) != 0)
                    rc = -1;
                else memcpy(vec_push(&o->ids, 2), sd, sizeof sd);
            }
            if (rc) break;
            if (want_feat && e->nkeys > 0) {
                /* widths from the first record */
                if (o->dim < 0) {
                    o->dim = 0;
                    for (int k = 0; k < e->nkeys; k++) {
                        const tfex_feature *f = tfex_find(&ex, e->keys[k]);
                        o->width[k] = f ? f->count : 0;
                        o->dim += o->width[k];
                    }
                }
                float *row = vec_push(&o->feat, (size_t)o->dim);
                for (int k = 0; k < e->nkeys && rc == 0; k++) {
                    const tfex_feature *f = tfex_find(&ex, e->keys[k]);
                    if (!f) {
                        rc = rec_err(err, file, rec, "no feature '%s' (one of featureKeys of %s)", e->keys[k], e->field);
                    } else if (f->kind != TFEX_FLOAT && f->kind != TFEX_INT64) {
                        rc = rec_err(err, file, rec, "feature '%s' is a %s; featureKeys must be a float_list or an int64_list",
                                     e->keys[k], tfex_kind_name(f->kind));
                    } else if (f->count != o->width[k]) {
                        rc = rec_err(err, file, rec, "feature '%s' has %lld values; the first record had %lld", e->keys[k],
                                     (long long)f->count, (long long)o->width[k]);
                    } else if (tfex_get_floats(f, row) != 0) {
                        rc = rec_err(err, file, rec, "feature '%s': undecodable values", e->keys[k]);
                    }
                    row += o->width[k];
                }
            }
            if (rc == 0 && want_label) {
                const char *lk = e->labels[0];
                const tfex_feature *f = tfex_find(&ex, lk);
                int64_t v = 0;
                if (!f) {
                    rc = rec_err(err, file, rec, "no feature '%s' (labelKeys of %s): every node needs a label", lk, e->field);
                } else if (f->count != 1 || (f->kind != TFEX_INT64 && f->kind != TFEX_FLOAT)) {
                    rc = rec_err(err, file, rec, "label '%s' is a %s of %lld values; a class label is one integer", lk,
                                 tfex_kind_name(f->kind), (long long)f->count);
                } else if (f->kind == TFEX_INT64) {
                    tfex_get_int64s(f, &v);
                } else {
                    float x;
                    tfex_get_floats(f, &x);
                    if (!(x >= 0 && x < 9e15f) || x != (float)(int64_t)x) {
                        rc = rec_err(err, file, rec, "label '%s' is %g; a class label is an integer >= 0", lk, (double)x);
                    }
                    v = (int64_t)x;
                }
                if (rc == 0 && (v < 0 || v >= DATASET_MAX_CLASSES))
                    rc = rec_err(err, file, rec, "label '%s' is %lld; a class label is in [0, %lld)", lk, (long long)v,
                                 (long long)DATASET_MAX_CLASSES);
                if (rc == 0) *(int64_t *)vec_push(&o->label, 1) = v;
            }
            if (rc == 0) *(prov *)vec_push(&o->where, 1) = (prov){fi, rec};
        }
        if (rc == 0 && got < 0) rc = -1;
        tfrecord_close(&r);
        if (records) *records += r.index;
    }
    tfex_free(&ex);
    if (o->dim < 0) o->dim = 0;
    if (rc == 0 && e->nkeys > 0 && e->feature_dim > 0 && want_feat && o->where.n > 0 && e->feature_dim != o->dim)
        rc = err_set(err, CGNN_ERR_INPUT,
                     "%s: featureDim is %lld, but its featureKeys hold %lld values per record (%s, record 0)", e->field,
                     (long long)e->feature_dim, (long long)o->dim, e->files[0]);
    return rc;
}

static void ent_out_free(ent_out *o) {
    vec_free(&o->ids), vec_free(&o->feat), vec_free(&o->label), vec_free(&o->where);
    free(o->width);
    o->width = NULL;
}

static int decode_nodes(gigl_src *s, int t, gigl_stats *st, cgnn_err *err) {
    gi_ntype *n = &s->nt[t];
    ent_out o;
    const int want_label = s->task == TASK_NODE_CLASSIFICATION && t == s->sup;
    int rc = read_entity(&n->ent, n->id_key, NULL, NULL, want_label, 1, &o, &st->num_records, err);
    if (rc == 0) {
        const int64_t N = (int64_t)o.ids.n;
        if (N == 0) rc = err_set(err, CGNN_ERR_INPUT, "%s: %s: node type '%s' has no records", s->yaml_path, n->ent.field, n->name);
        int64_t *ids = o.ids.p;
        int64_t *row_of = rc ? NULL : cgnn_malloc((size_t)N * sizeof *row_of);
        for (int64_t i = 0; rc == 0 && i < N; i++) row_of[i] = -1;
        const prov *w = o.where.p;
        for (int64_t r = 0; rc == 0 && r < N; r++) {
            const int64_t id = ids[r];
            if (id < 0 || id >= N) {
                rc = err_set(err, CGNN_ERR_INPUT,
                             "%s: record %lld: node id %lld (%s) is outside 0..%lld: GiGL's enumerated ids of node "
                             "type '%s' are 0..N-1 for its N = %lld records",
                             n->ent.files[w[r].file], (long long)w[r].rec, (long long)id, n->id_key, (long long)(N - 1),
                             n->name, (long long)N);
            } else if (row_of[id] >= 0) {
                const prov *p = &w[row_of[id]];
                rc = err_set(err, CGNN_ERR_INPUT, "%s: record %lld: node id %lld of type '%s' again (first: %s record %lld)",
                             n->ent.files[w[r].file], (long long)w[r].rec, (long long)id, n->name,
                             n->ent.files[p->file], (long long)p->rec);
            } else {
                row_of[id] = r;
            }
        }
        if (rc == 0) {
            n->n = N;
            n->dim = o.dim;
            if (o.dim > 0) {
                n->feat = cgnn_malloc((size_t)N * (size_t)o.dim * sizeof(float));
                for (int64_t id = 0; id < N; id++)
                    memcpy(n->feat + id * o.dim, (float *)o.feat.p + row_of[id] * o.dim, (size_t)o.dim * sizeof(float));
            }
            if (want_label) {
                n->label = cgnn_malloc((size_t)N * sizeof *n->label);
                for (int64_t id = 0; id < N; id++) n->label[id] = ((int64_t *)o.label.p)[row_of[id]];
            }
        }
        free(row_of);
    }
    ent_out_free(&o);
    return rc;
}

/* Decodes edges of e (main, positive or negative) into (2, E) ids (+ features for main). */
static int decode_edges(gigl_src *s, gi_etype *et, const gi_entity *e, int want_feat, int64_t **ids_out,
                        int64_t *count, float **feat, int64_t *dim, gigl_stats *st, cgnn_err *err) {
    ent_out o;
    int rc = read_entity(e, NULL, et->src_key, et->dst_key, 0, want_feat, &o, &st->num_records, err);
    const gi_ntype *sn = &s->nt[et->src], *dn = &s->nt[et->dst];
    const int64_t E = (int64_t)o.where.n;
    const int64_t *sd = o.ids.p;
    const prov *w = o.where.p;
    for (int64_t i = 0; rc == 0 && i < E; i++) {
        const int64_t a = sd[2 * i], b = sd[2 * i + 1];
        const int bad_src = a < 0 || a >= sn->n;
        if (bad_src || b < 0 || b >= dn->n)
            rc = err_set(err, CGNN_ERR_INPUT,
                         "%s: record %lld: %s id %lld (%s) is not a node of type '%s' (ids 0..%lld, from its %lld "
                         "node records)",
                         e->files[w[i].file], (long long)w[i].rec, bad_src ? "source" : "destination",
                         (long long)(bad_src ? a : b), bad_src ? et->src_key : et->dst_key,
                         bad_src ? sn->name : dn->name, (long long)((bad_src ? sn->n : dn->n) - 1),
                         (long long)(bad_src ? sn->n : dn->n));
    }
    if (rc == 0) {
        int64_t *ids = cgnn_malloc((size_t)(2 * E + 1) * sizeof *ids);
        for (int64_t i = 0; i < E; i++) ids[i] = sd[2 * i], ids[E + i] = sd[2 * i + 1];
        *ids_out = ids;
        *count = E;
        if (feat) {
            *dim = want_feat ? o.dim : 0;
            *feat = NULL;
            if (*dim > 0) {
                *feat = o.feat.p;
                o.feat.p = NULL;
            }
        }
    }
    ent_out_free(&o);
    return rc;
}

/* ---- splits ------------------------------------------------------------------------------ */

typedef struct split_out {
    int64_t n[3];
    int64_t *seeds[3];  /* (n, width) */
    int64_t *labels[3]; /* (n) or NULL */
    int width;
    int labelled;       /* LP with listed negatives */
} split_out;

static void split_free(split_out *so) {
    for (int k = 0; k < 3; k++) free(so->seeds[k]), free(so->labels[k]);
}

static void split_nodes(const gigl_src *s, split_out *so) {
    const gi_ntype *n = &s->nt[s->sup];
    int64_t *hash = cgnn_malloc((size_t)n->n * sizeof *hash);
    uint8_t *which = cgnn_malloc((size_t)n->n);
    for (int64_t i = 0; i < n->n; i++) hash[i] = edge_split_fast_hash(i);
    edge_split_assign(which, hash, n->n, s->num_val, s->num_test);
    so->width = 1;
    for (int k = 0; k < 3; k++) {
        so->seeds[k] = cgnn_malloc((size_t)(n->n + 1) * sizeof(int64_t));
        so->labels[k] = cgnn_malloc((size_t)(n->n + 1) * sizeof(int64_t));
        so->n[k] = 0;
    }
    for (int64_t i = 0; i < n->n; i++) {
        const int k = which[i];
        so->seeds[k][so->n[k]] = i;
        so->labels[k][so->n[k]++] = n->label[i];
    }
    free(hash), free(which);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of v in sorted a[0..n), or -1. */
static int64_t find_sorted(const int64_t *a, int64_t n, int64_t v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && a[lo] == v ? lo : -1;
}

static int split_pairs(const gigl_src *s, split_out *so, int64_t *dropped_neg) {
    const gi_etype *e = &s->et[s->sup];
    const int64_t *pos = e->pos.present ? e->pos_ids : e->ids;
    const int64_t np = e->pos.present ? e->npos : e->e;
    const int64_t nn = e->neg.present ? e->nneg : 0;
    const int64_t *neg = e->neg_ids;
    /* distinct anchors (sources) of every label edge, positive and negative (GiGL's splitter
     * collects the anchors of every labelled edge type) */
    int64_t *anchors = cgnn_malloc((size_t)(np + nn + 1) * sizeof *anchors);
    for (int64_t i = 0; i < np; i++) anchors[i] = pos[i];
    for (int64_t i = 0; i < nn; i++) anchors[np + i] = neg[i];
    qsort(anchors, (size_t)(np + nn), sizeof *anchors, cmp_i64);
    int64_t na = 0;
    for (int64_t i = 0; i < np + nn; i++)
        if (i == 0 || anchors[i] != anchors[i - 1]) anchors[na++] = anchors[i];
    int64_t *hash = cgnn_malloc((size_t)(na + 1) * sizeof *hash);
    uint8_t *which = cgnn_malloc((size_t)na + 1), *has_pos = cgnn_calloc((size_t)na + 1, 1);
    for (int64_t i = 0; i < na; i++) hash[i] = edge_split_fast_hash(anchors[i]);
    edge_split_assign(which, hash, na, s->num_val, s->num_test);
    for (int64_t i = 0; i < np; i++) has_pos[find_sorted(anchors, na, pos[i])] = 1;
    so->width = 2;
    so->labelled = nn > 0;
    for (int k = 0; k < 3; k++) {
        so->seeds[k] = cgnn_malloc((size_t)(np + nn + 1) * 2 * sizeof(int64_t));
        so->labels[k] = so->labelled ? cgnn_malloc((size_t)(np + nn + 1) * sizeof(int64_t)) : NULL;
        so->n[k] = 0;
    }
    for (int64_t i = 0; i < np; i++) {
        const int k = which[find_sorted(anchors, na, pos[i])];
        so->seeds[k][2 * so->n[k]] = pos[i], so->seeds[k][2 * so->n[k] + 1] = pos[np + i];
        if (so->labels[k]) so->labels[k][so->n[k]] = 1;
        so->n[k]++;
    }
    *dropped_neg = 0;
    for (int64_t i = 0; i < nn; i++) {
        const int64_t a = find_sorted(anchors, na, neg[i]);
        if (!has_pos[a]) {
            (*dropped_neg)++;
            continue;
        }
        const int k = which[a];
        so->seeds[k][2 * so->n[k]] = neg[i], so->seeds[k][2 * so->n[k] + 1] = neg[nn + i];
        so->labels[k][so->n[k]] = 0;
        so->n[k]++;
    }
    free(anchors), free(hash), free(which), free(has_pos);
    return 0;
}

/* ---- writing ----------------------------------------------------------------------------- */

typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void tx(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tx(text *t, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (t->p && t->n + (size_t)k < t->cap) {
            t->n += (size_t)k;
            return;
        }
        t->cap = (t->cap + (size_t)k + 1) * 2;
        t->p = cgnn_realloc(t->p, t->cap);
    }
}

/* A YAML double-quoted string of s. */
static void tx_quoted(text *t, const char *s) {
    tx(t, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') tx(t, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) tx(t, "\\x%02x", (unsigned char)*s);
        else tx(t, "%c", *s);
    }
    tx(t, "\"");
}

static int write_npy(const char *dir, const char *name, npy_dtype dt, int ndim, int64_t d0, int64_t d1,
                     const void *data, cgnn_err *err) {
    char p[8300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int64_t shape[2] = {d0, d1};
    static const char empty[8] = {0};
    return npy_write(p, dt, ndim, shape, data ? data : empty, err);
}

static int write_split_files(const char *dir, const char *prefix, const split_out *so, text *t, const char *type_line,
                             const char *which_key, int k, cgnn_err *err) {
    static const char *const NAMES[3] = {"train", "valid", "test"};
    char fs[256], fl[256];
    snprintf(fs, sizeof fs, "%s-%s-seeds.npy", prefix, NAMES[k]);
    snprintf(fl, sizeof fl, "%s-%s-labels.npy", prefix, NAMES[k]);
    if (so->width == 1) {
        if (write_npy(dir, fs, NPY_DTYPE_INT64, 1, so->n[k], 1, so->seeds[k], err) != 0) return -1;
    } else if (write_npy(dir, fs, NPY_DTYPE_INT64, 2, so->n[k], 2, so->seeds[k], err) != 0) {
        return -1;
    }
    if (so->labels[k] && write_npy(dir, fl, NPY_DTYPE_INT64, 1, so->n[k], 1, so->labels[k], err) != 0) return -1;
    tx(t, "    %s:\n      - ", which_key);
    if (type_line) tx(t, "type: %s\n        ", type_line);
    tx(t, "data:\n          - name: seeds\n            format: numpy\n            path: %s\n", fs);
    if (so->labels[k]) tx(t, "          - name: labels\n            format: numpy\n            path: %s\n", fl);
    return 0;
}

int gigl_src_convert(gigl_src *s, const char *dir, gigl_stats *st, cgnn_err *err) {
    memset(st, 0, sizeof *st);
    st->typed = s->typed;
    st->num_node_types = s->nn;
    st->num_edge_types = s->ne;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", dir, strerror(errno));
    for (int t = 0; t < s->nn; t++) {
        if (decode_nodes(s, t, st, err) != 0) return -1;
        st->num_nodes += s->nt[t].n;
        st->num_files += s->nt[t].ent.nfiles;
    }
    for (int t = 0; t < s->ne; t++) {
        gi_etype *e = &s->et[t];
        if (decode_edges(s, e, &e->main, 1, &e->ids, &e->e, &e->feat, &e->dim, st, err) != 0) return -1;
        st->num_edges += e->e;
        st->num_files += e->main.nfiles;
        if (e->pos.present) {
            if (decode_edges(s, e, &e->pos, 0, &e->pos_ids, &e->npos, NULL, NULL, st, err) != 0) return -1;
            st->num_files += e->pos.nfiles;
        }
        if (e->neg.present) {
            if (decode_edges(s, e, &e->neg, 0, &e->neg_ids, &e->nneg, NULL, NULL, st, err) != 0) return -1;
            st->num_files += e->neg.nfiles;
        }
        if ((e->pos.present || e->neg.present) && (s->task != TASK_LINK_PREDICTION || t != s->sup))
            log_info("%s: edge type %s: its positive / negative label edges are not used (not the task's supervision "
                     "edge type)", s->yaml_path, e->name);
        if ((e->pos.present && e->pos.nkeys) || (e->neg.present && e->neg.nkeys))
            log_info("%s: edge type %s: label edge features (featureKeys of positive / negativeEdgeInfo) are not read: "
                     "cgnn's link prediction uses the pairs", s->yaml_path, e->name);
    }
    split_out so;
    memset(&so, 0, sizeof so);
    int64_t dropped = 0;
    const char *prefix = s->task == TASK_NODE_CLASSIFICATION ? "nc" : "lp";
    if (s->task == TASK_NODE_CLASSIFICATION) split_nodes(s, &so);
    else split_pairs(s, &so, &dropped);
    if (dropped)
        log_info("%s: %lld negative label edge%s of edge type %s dropped: their anchors have no positive label",
                 s->yaml_path, (long long)dropped, dropped == 1 ? "" : "s", s->et[s->sup].name);
    for (int k = 0; k < 3; k++) st->split_items[k] = so.n[k];
    int rc = 0;
    if (so.n[0] == 0)
        rc = err_set(err, CGNN_ERR_INPUT,
                     "%s: no training %s after GiGL's split (num_val %g, num_test %g): every %s went to validation "
                     "or test",
                     s->yaml_path, s->task == TASK_NODE_CLASSIFICATION ? "nodes" : "pairs", s->num_val, s->num_test,
                     s->task == TASK_NODE_CLASSIFICATION ? "node" : "anchor");

    text t = {0};
    tx(&t, "# Written by cgnn import gigl (converter version %d) from GiGL's preprocessed output\n", GIGL_IMPORT_VERSION);
    tx(&t, "#   %s\n# with the types and task of the task config\n#   %s\n", s->yaml_abs, s->config_path);
    tx(&t, "# Rules: docs/DATASETS.md, \"GiGL's preprocessed output\". Splits: GiGL's %s (hash of the %s id), "
           "num_val %g, num_test %g.\n",
       s->task == TASK_NODE_CLASSIFICATION ? "DistNodeSplitter" : "DistNodeAnchorLinkSplitter",
       s->task == TASK_NODE_CLASSIFICATION ? "node" : "anchor", s->num_val, s->num_test);
    tx(&t, "dataset_name: ");
    {
        const char *leaf = strrchr(s->yaml_dir, '/');
        char nm[200];
        snprintf(nm, sizeof nm, "gigl-%.150s", leaf ? leaf + 1 : s->yaml_dir);
        tx_quoted(&t, nm);
    }
    tx(&t, "\ngraph:\n  nodes:\n");
    for (int k = 0; k < s->nn; k++) {
        if (s->typed) {
            tx(&t, "    - type: ");
            tx_quoted(&t, s->nt[k].name);
            tx(&t, "\n      num: %lld\n", (long long)s->nt[k].n);
        } else {
            tx(&t, "    - num: %lld\n", (long long)s->nt[k].n);
        }
    }
    tx(&t, "  edges:\n");
    for (int k = 0; rc == 0 && k < s->ne; k++) {
        char f[64];
        snprintf(f, sizeof f, s->typed ? "edges-%d.npy" : "edges.npy", k);
        const gi_etype *e = &s->et[k];
        rc = write_npy(dir, f, NPY_DTYPE_INT64, 2, 2, e->e, e->ids, err);
        if (s->typed) {
            tx(&t, "    - type: ");
            tx_quoted(&t, e->name);
            tx(&t, "\n      format: numpy\n      path: %s\n", f);
        } else {
            tx(&t, "    - format: numpy\n      path: %s\n", f);
        }
    }
    int nfeat = 0;
    for (int k = 0; k < s->nn; k++) nfeat += s->nt[k].dim > 0;
    for (int k = 0; k < s->ne; k++) nfeat += s->et[k].dim > 0;
    if (nfeat) tx(&t, "feature_data:\n");
    for (int k = 0; rc == 0 && k < s->nn; k++) {
        const gi_ntype *n = &s->nt[k];
        if (n->dim <= 0) continue;
        char f[64];
        snprintf(f, sizeof f, s->typed ? "node-feat-%d.npy" : "node-feat.npy", k);
        rc = write_npy(dir, f, NPY_DTYPE_FLOAT32, 2, n->n, n->dim, n->feat, err);
        tx(&t, "  - domain: node\n");
        if (s->typed) tx(&t, "    type: "), tx_quoted(&t, n->name), tx(&t, "\n");
        tx(&t, "    name: feat\n    format: numpy\n    in_memory: true\n    path: %s\n", f);
    }
    for (int k = 0; rc == 0 && k < s->ne; k++) {
        const gi_etype *e = &s->et[k];
        if (e->dim <= 0) continue;
        char f[64];
        snprintf(f, sizeof f, s->typed ? "edge-feat-%d.npy" : "edge-feat.npy", k);
        rc = write_npy(dir, f, NPY_DTYPE_FLOAT32, 2, e->e, e->dim, e->feat, err);
        tx(&t, "  - domain: edge\n");
        if (s->typed) tx(&t, "    type: "), tx_quoted(&t, e->name), tx(&t, "\n");
        tx(&t, "    name: feat\n    format: numpy\n    in_memory: true\n    path: %s\n", f);
    }
    if (rc == 0) {
        tx(&t, "tasks:\n  - name: %s\n", s->task == TASK_NODE_CLASSIFICATION ? "node_classification" : "link_prediction");
        if (s->task == TASK_NODE_CLASSIFICATION) {
            int64_t maxl = 0;
            const gi_ntype *n = &s->nt[s->sup];
            for (int64_t i = 0; i < n->n; i++)
                if (n->label[i] > maxl) maxl = n->label[i];
            tx(&t, "    num_classes: %lld\n", (long long)(maxl + 1));
        }
        char typeq[3 * GI_NAME_MAX + 16];
        const char *tname = s->task == TASK_NODE_CLASSIFICATION ? s->nt[s->sup].name : s->et[s->sup].name;
        {
            text q = {0};
            tx_quoted(&q, tname);
            snprintf(typeq, sizeof typeq, "%s", q.p);
            free(q.p);
        }
        static const char *const KEYS[3] = {"train_set", "validation_set", "test_set"};
        static const char *const WORDS[3] = {"training", "validation", "test"};
        for (int k = 0; rc == 0 && k < 3; k++) {
            if (so.n[k] == 0) {
                log_info("%s: no %s %s after GiGL's split: the dataset has no %s", s->yaml_path, WORDS[k],
                         s->task == TASK_NODE_CLASSIFICATION ? "nodes" : "pairs", KEYS[k]);
                continue;
            }
            rc = write_split_files(dir, prefix, &so, &t, s->typed ? typeq : NULL, KEYS[k], k, err);
        }
    }
    if (rc == 0) {
        char p[8300];
        snprintf(p, sizeof p, "%s/metadata.yaml", dir);
        durable_file df;
        if (durable_open(&df, p, err) != 0) rc = -1;
        else if (durable_write(&df, t.p, t.n, err) != 0) rc = -1, durable_abort(&df);
        else rc = durable_commit(&df, err);
    }
    free(t.p);
    split_free(&so);
    return rc;
}

/* ---- detection and the train hook -------------------------------------------------------- */

int gigl_is_preprocessed_metadata(const char *path, char *yaml, size_t cap) {
    char cand[4200];
    if (is_dir(path)) {
        char md[4200];
        snprintf(md, sizeof md, "%s/metadata.yaml", path);
        if (exists(md)) return 0;
        snprintf(cand, sizeof cand, "%s/preprocessed_metadata.yaml", path);
        if (!exists(cand)) return 0;
    } else {
        snprintf(cand, sizeof cand, "%s", path);
        struct stat st;
        if (stat(cand, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    }
    /* a cheap look at the text first: GiGL's two top-level keys */
    FILE *f = fopen(cand, "rb");
    if (!f) return 0;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    int found = 0;
    const char *keys[] = {"condensedNodeTypeToPreprocessedMetadata", "condensedEdgeTypeToPreprocessedMetadata",
                          "condensed_node_type_to_preprocessed_metadata", "condensed_edge_type_to_preprocessed_metadata"};
    for (int k = 0; k < 4 && !found; k++) {
        const char *at = buf;
        while (!found && (at = strstr(at, keys[k])) != NULL) {
            /* at the start of a line (a top-level key) */
            found = at == buf || at[-1] == '\n';
            at++;
        }
    }
    if (!found) return 0;
    if (strlen(cand) >= cap) return 0;
    snprintf(yaml, cap, "%s", cand);
    return 1;
}

static char temp_root[4200];
static int temp_cleanup = -1;
static void remove_temp_root(void) {
    if (temp_root[0]) cleanup_remove_tree(temp_root);
}

/* Converts s into entry (absent) through "<entry>.tmp.<pid>", under a guard of its own (the
 * TFRecords, the YAML and the config are inputs; the entry is the one output). */
static int convert_into(gigl_src *s, const char *entry, int replace_ok, gigl_stats *st, cgnn_err *err) {
    outguard g;
    outguard_init(&g);
    gigl_src_add_inputs(s, &g);
    if (outguard_check_tree(&g, entry, "the converted GiGL dataset", err) != 0) {
        outguard_free(&g);
        return -1;
    }
    outguard_activate(&g);
    outguard_remove_stale_tmp(&g, entry);
    char staging[4300];
    snprintf(staging, sizeof staging, "%s.tmp.%ld", entry, (long)getpid());
    cleanup_remove_tree(staging);
    const int h = cleanup_add(staging, 1);
    int rc = gigl_src_convert(s, staging, st, err);
    if (rc == 0 && rename(staging, entry) != 0) {
        if (replace_ok && (errno == EEXIST || errno == ENOTEMPTY)) {
            log_info("%s: converted by another process meanwhile: that one is used", entry);
        } else {
            rc = err_set(err, CGNN_ERR_RUNTIME, "%s: cannot rename %s into place: %s", entry, staging, strerror(errno));
        }
    }
    cleanup_remove_tree(staging); /* gone after a rename; the partial output after a failure */
    cleanup_forget(h);
    outguard_free(&g);
    return rc;
}

int gigl_import_resolve(task_config *tc, cgnn_err *err) {
    char yaml[4096];
    if (!gigl_is_preprocessed_metadata(tc->dataset_path, yaml, sizeof yaml)) return 0;
    gigl_src *s;
    if (gigl_src_open(&s, tc, yaml, err) != 0) return -1;
    char fp[17];
    gigl_src_fingerprint(s, fp);
    char root[4096], entry[4200];
    cgnn_err cerr = {0};
    if (cachedir_get(root, sizeof root, "gigl", &cerr) != 0) {
        const char *base = getenv("TMPDIR");
        if (!temp_root[0]) {
            snprintf(temp_root, sizeof temp_root, "%s/cgnn-gigl-XXXXXX", base && *base ? base : "/tmp");
            if (!mkdtemp(temp_root)) {
                temp_root[0] = 0;
                gigl_src_free(s);
                return err_set(err, CGNN_ERR_RUNTIME, "no cache folder (%s) and no temporary folder: %s", cerr.msg,
                               strerror(errno));
            }
            temp_cleanup = cleanup_add(temp_root, 1);
            atexit(remove_temp_root);
        }
        log_info("note: no cache folder (%s): GiGL's preprocessed output is converted into %s, removed at exit",
                 cerr.msg, temp_root);
        snprintf(root, sizeof root, "%s", temp_root);
    }
    snprintf(entry, sizeof entry, "%s/%s", root, fp);
    char md[4300];
    snprintf(md, sizeof md, "%s/metadata.yaml", entry);
    if (exists(md)) {
        log_info("%s: GiGL's preprocessed output, converted before (fingerprint %s of the metadata, the task config's "
                 "types and every TFRecord's size and time): %s",
                 yaml, fp, entry);
    } else {
        gigl_stats st;
        if (convert_into(s, entry, 1, &st, err) != 0) {
            gigl_src_free(s);
            return -1;
        }
        log_info("%s: GiGL's preprocessed output converted into %s (%s; %lld nodes, %lld edges, %lld records in %d "
                 "TFRecord files; split %lld / %lld / %lld)",
                 yaml, entry, st.typed ? "typed" : "untyped", (long long)st.num_nodes, (long long)st.num_edges,
                 (long long)st.num_records, st.num_files, (long long)st.split_items[0], (long long)st.split_items[1],
                 (long long)st.split_items[2]);
    }
    gigl_src_free(s);
    if (strlen(entry) >= sizeof tc->dataset_path) return err_set(err, CGNN_ERR_RUNTIME, "%s: path too long", entry);
    snprintf(tc->dataset_path, sizeof tc->dataset_path, "%s", entry);
    return 0;
}

