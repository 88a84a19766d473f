/* import_csv.c — CSV edge lists, features and labels into a GraphBolt dataset (see import_csv.h). */
#include "graph/import_csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/csv.h"
#include "io/npy.h"
#include "io/outguard.h"
#include "util/rng.h"

#define IMPORT_STREAM_NC 0x6e63ULL /* the seed's streams: node split, edge split */
#define IMPORT_STREAM_LP 0x6c70ULL

void import_csv_default_params(import_csv_params *p) {
    memset(p, 0, sizeof *p);
    p->val_frac = 0.2;
    p->test_frac = 0.2;
    p->name = "imported";
}

typedef struct edge_pair {
    int64_t dst, src; /* sorted by dst, then src */
} edge_pair;

static int cmp_pair(const void *a, const void *b) {
    const edge_pair *x = a, *y = b;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    return (x->src > y->src) - (x->src < y->src);
}

static int has_suffix(const char *s, const char *suf) {
    const size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int join(char *out, size_t cap, const char *dir, const char *name, cgnn_err *err) {
    const int n = snprintf(out, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) return err_set(err, CGNN_ERR_INPUT, "%s: path too long", dir);
    return 0;
}

/* Fisher-Yates over ids[0..n) from the seed's stream `tag`. */
static void shuffle(int64_t *ids, int64_t n, uint64_t seed, uint64_t tag) {
    rng r;
    rng_init(&r, rng_key(seed, tag));
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = (int64_t)rng_below(&r, (uint64_t)(i + 1));
        const int64_t t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
}

/* The three split sizes of n items: train = the rest. */
static void split_sizes(int64_t n, double val, double test, int64_t out[3]) {
    out[1] = (int64_t)floor(val * (double)n);
    out[2] = (int64_t)floor(test * (double)n);
    if (out[1] + out[2] > n) out[2] = n - out[1];
    out[0] = n - out[1] - out[2];
}

/* The inputs, read and checked (the arrays owned). */
typedef struct import_inputs {
    csv_table edges;          /* (E, 2) int64 */
    csv_table feat_csv;       /* (N, F) float32, or empty */
    npy_array feat_npy;       /* (N, F) any feature dtype, or unopened */
    int have_feat_npy;
    int64_t feat_rows, feat_dim;
    int64_t *labels;          /* (N) -1 = none, or NULL */
    int64_t label_rows;       /* a one-column labels file's rows (0: two columns or .npy's N) */
    int64_t max_id;           /* the largest node id the edges and a two-column labels file name */
} import_inputs;

static void inputs_free(import_inputs *in) {
    csv_free(&in->edges);
    csv_free(&in->feat_csv);
    if (in->have_feat_npy) npy_close(&in->feat_npy);
    free(in->labels);
}

static int read_features(import_inputs *in, const char *path, cgnn_err *err) {
    if (has_suffix(path, ".npy")) {
        if (npy_open(&in->feat_npy, path, 0, err) != 0) return -1;
        in->have_feat_npy = 1;
        const npy_dtype d = in->feat_npy.dtype;
        if (in->feat_npy.ndim != 2)
            return err_set(err, CGNN_ERR_INPUT, "%s: node features must be 2-D (nodes, features), got %d-D", path,
                           in->feat_npy.ndim);
        if (d == NPY_DTYPE_INT32 || d == NPY_DTYPE_INT64)
            return err_set(err, CGNN_ERR_INPUT, "%s: %s node features: save them as float32 (or uint8 / int8 counts)",
                           path, npy_dtype_name(d));
        in->feat_rows = in->feat_npy.shape[0];
        in->feat_dim = in->feat_npy.shape[1];
        return 0;
    }
    if (csv_read(path, CSV_FLOAT32, 0, &in->feat_csv, err) != 0) return -1;
    in->feat_rows = in->feat_csv.rows;
    in->feat_dim = in->feat_csv.cols;
    return 0;
}

/* Labels into in->labels (N entries once N is known: read into a temporary list here). */
static int read_labels(import_inputs *in, const char *path, csv_table *t, npy_array *a, int *is_npy, cgnn_err *err) {
    if (has_suffix(path, ".npy")) {
        if (npy_open(a, path, 0, err) != 0) return -1;
        *is_npy = 1;
        if (a->ndim != 1 || !npy_dtype_is_int(a->dtype))
            return err_set(err, CGNN_ERR_INPUT, "%s: labels must be a 1-D integer array (node i's class; negative: "
                           "unlabelled), got %d-D %s", path, a->ndim, npy_dtype_name(a->dtype));
        in->label_rows = a->shape[0];
        return 0;
    }
    if (csv_read(path, CSV_INT64, 0, t, err) != 0) return -1;
    if (t->cols != 1 && t->cols != 2)
        return err_set(err, CGNN_ERR_INPUT, "%s: labels: one column (row i: node i's class) or two (node,label), got "
                       "%lld", path, (long long)t->cols);
    if (t->cols == 1) {
        in->label_rows = t->rows;
    } else {
        const int64_t *v = t->data;
        for (int64_t r = 0; r < t->rows; r++) {
            if (v[2 * r] < 0)
                return err_set(err, CGNN_ERR_INPUT, "%s: row %lld: node id %lld is negative", path, (long long)r + 1,
                               (long long)v[2 * r]);
            if (v[2 * r] > in->max_id) in->max_id = v[2 * r];
        }
    }
    return 0;
}

/* Writes the node classification split arrays; st->nc_split, num_labelled, num_classes. */
static int write_nc(const char *dir, const int64_t *labels, int64_t N, const import_csv_params *p, import_csv_stats *st,
                    cgnn_err *err) {
    int64_t L = 0, max_label = -1;
    for (int64_t v = 0; v < N; v++) {
        L += labels[v] >= 0;
        if (labels[v] > max_label) max_label = labels[v];
    }
    if (L == 0) return err_set(err, CGNN_ERR_INPUT, "%s: no node has a label (all are negative)", p->labels);
    int64_t *ids = malloc((size_t)L * sizeof *ids), *lab = malloc((size_t)L * sizeof *lab);
    if (!ids || !lab) {
        free(ids);
        free(lab);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory for %lld labelled nodes", (long long)L);
    }
    for (int64_t v = 0, i = 0; v < N; v++)
        if (labels[v] >= 0) ids[i++] = v;
    shuffle(ids, L, p->seed, IMPORT_STREAM_NC);
    for (int64_t i = 0; i < L; i++) lab[i] = labels[ids[i]];
    split_sizes(L, p->val_frac, p->test_frac, st->nc_split);
    static const char *const names[3] = {"train", "valid", "test"};
    int rc = 0;
    for (int s = 0; s < 3 && rc == 0; s++) {
        const int64_t start = s == 0 ? 0 : s == 1 ? st->nc_split[0] : st->nc_split[0] + st->nc_split[1];
        char path[4200], file[64];
        snprintf(file, sizeof file, "nc-%s-seeds.npy", names[s]);
        rc = join(path, sizeof path, dir, file, err);
        if (rc == 0) rc = npy_write(path, NPY_DTYPE_INT64, 1, &st->nc_split[s], ids + start, err);
        snprintf(file, sizeof file, "nc-%s-labels.npy", names[s]);
        if (rc == 0) rc = join(path, sizeof path, dir, file, err);
        if (rc == 0) rc = npy_write(path, NPY_DTYPE_INT64, 1, &st->nc_split[s], lab + start, err);
    }
    free(ids);
    free(lab);
    st->num_labelled = L;
    st->num_classes = max_label + 1;
    return rc;
}

/* The link prediction split: held-out pairs leave *pairs (both directions when undirected);
 * writes lp-{train,valid,test}-seeds.npy (M, 2). *E is updated. */
static int write_lp(const char *dir, edge_pair *pairs, int64_t *E, const import_csv_params *p, import_csv_stats *st,
                    cgnn_err *err) {
    /* candidates: indexes of pairs (undirected: the src < dst copy of each {u, v}) */
    int64_t M = 0;
    int64_t *cand = malloc((size_t)(*E ? *E : 1) * sizeof *cand);
    unsigned char *held = calloc((size_t)(*E ? *E : 1), 1);
    int64_t *seeds = malloc((size_t)(*E ? *E : 1) * 2 * sizeof *seeds);
    if (!cand || !held || !seeds) {
        free(cand);
        free(held);
        free(seeds);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory for the link prediction split");
    }
    for (int64_t e = 0; e < *E; e++)
        if (pairs[e].src != pairs[e].dst && (!p->undirected || pairs[e].src < pairs[e].dst)) cand[M++] = e;
    shuffle(cand, M, p->seed, IMPORT_STREAM_LP);
    split_sizes(M, p->val_frac, p->test_frac, st->lp_split);
    /* cand[0, train) train, then validation, then test; mark the held-out pairs and their reverses */
    for (int64_t i = st->lp_split[0]; i < M; i++) {
        const edge_pair *q = &pairs[cand[i]];
        held[cand[i]] = 1;
        if (p->undirected) {
            const edge_pair rev = {q->src, q->dst};
            const edge_pair *r = bsearch(&rev, pairs, (size_t)*E, sizeof *pairs, cmp_pair);
            if (r) held[r - pairs] = 1;
        }
    }
    static const char *const names[3] = {"train", "valid", "test"};
    int rc = 0;
    for (int s = 0; s < 3 && rc == 0; s++) {
        const int64_t start = s == 0 ? 0 : s == 1 ? st->lp_split[0] : st->lp_split[0] + st->lp_split[1];
        for (int64_t i = 0; i < st->lp_split[s]; i++) {
            seeds[2 * i] = pairs[cand[start + i]].src;
            seeds[2 * i + 1] = pairs[cand[start + i]].dst;
        }
        char path[4200], file[64];
        snprintf(file, sizeof file, "lp-%s-seeds.npy", names[s]);
        const int64_t shape[2] = {st->lp_split[s], 2};
        rc = join(path, sizeof path, dir, file, err);
        if (rc == 0) rc = npy_write(path, NPY_DTYPE_INT64, 2, shape, seeds, err);
    }
    int64_t k = 0;
    for (int64_t e = 0; e < *E; e++)
        if (!held[e]) pairs[k++] = pairs[e];
    *E = k;
    free(cand);
    free(held);
    free(seeds);
    return rc;
}

static void yaml_split(FILE *f, const char *set, const char *prefix, const char *split, int with_labels) {
    fprintf(f, "    %s:\n      - data:\n", set);
    fprintf(f, "          - {name: seeds, format: numpy, path: %s-%s-seeds.npy}\n", prefix, split);
    if (with_labels) fprintf(f, "          - {name: labels, format: numpy, path: %s-%s-labels.npy}\n", prefix, split);
}

static int write_metadata(const char *dir, const import_csv_params *p, const import_csv_stats *st, int have_feat,
                          cgnn_err *err) {
    char path[4200];
    if (join(path, sizeof path, dir, "metadata.yaml", err) != 0) return -1;
    if (outguard_permit(path, err) != 0) return -1; /* (the staging tree cli_out_dir_write declared) */
    FILE *f = fopen(path, "w");
    if (!f) return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot create: %s", path, strerror(errno));
    fprintf(f, "# written by cgnn import csv (%s%s%s, seed %llu, validation %g, test %g)\n",
            p->node_features ? "features, " : "", p->labels ? "labels, " : "",
            p->undirected ? "undirected" : "directed", (unsigned long long)p->seed, p->val_frac, p->test_frac);
    fprintf(f, "dataset_name: \"%s\"\n", p->name);
    fprintf(f, "graph:\n  nodes:\n    - num: %lld\n  edges:\n    - {format: numpy, path: edges.npy}\n",
            (long long)st->num_nodes);
    if (have_feat) fprintf(f, "feature_data:\n  - {domain: node, name: feat, format: numpy, in_memory: true, path: node-feat.npy}\n");
    if (p->labels || p->link_prediction) fprintf(f, "tasks:\n");
    if (p->labels) {
        fprintf(f, "  - name: node_classification\n    num_classes: %lld\n", (long long)st->num_classes);
        yaml_split(f, "train_set", "nc", "train", 1);
        yaml_split(f, "validation_set", "nc", "valid", 1);
        yaml_split(f, "test_set", "nc", "test", 1);
    }
    if (p->link_prediction) {
        fprintf(f, "  - name: link_prediction\n");
        yaml_split(f, "train_set", "lp", "train", 0);
        yaml_split(f, "validation_set", "lp", "valid", 0);
        yaml_split(f, "test_set", "lp", "test", 0);
    }
    const int bad = ferror(f);
    if (fclose(f) != 0 || bad) return err_set(err, CGNN_ERR_RUNTIME, "%s: write failed: %s", path, strerror(errno));
    return 0;
}

int import_csv(const char *dir, const import_csv_params *p, import_csv_stats *st, cgnn_err *err) {
    memset(st, 0, sizeof *st);
    if (!p->edges) return err_set(err, CGNN_ERR_INPUT, "import csv: no edge file");
    if (!(p->val_frac >= 0 && p->test_frac >= 0 && p->val_frac + p->test_frac < 1))
        return err_set(err, CGNN_ERR_INPUT, "--val_frac %g, --test_frac %g: each in [0, 1), their sum below 1 (the "
                       "rest trains)", p->val_frac, p->test_frac);
    import_inputs in;
    memset(&in, 0, sizeof in);
    in.max_id = -1;
    csv_table lab_csv = {0};
    npy_array lab_npy;
    int lab_is_npy = 0, rc = -1;
    edge_pair *pairs = NULL;
    if (csv_read(p->edges, CSV_INT64, 2, &in.edges, err) != 0) goto out;
    const int64_t E_in = in.edges.rows;
    const int64_t *ev = in.edges.data;
    for (int64_t e = 0; e < E_in; e++) {
        for (int c = 0; c < 2; c++) {
            if (ev[2 * e + c] < 0) {
                err_set(err, CGNN_ERR_INPUT, "%s: edge %lld: %s id %lld is negative", p->edges, (long long)e + 1,
                        c ? "dst" : "src", (long long)ev[2 * e + c]);
                goto out;
            }
            if (ev[2 * e + c] > in.max_id) in.max_id = ev[2 * e + c];
        }
    }
    if (p->node_features && read_features(&in, p->node_features, err) != 0) goto out;
    if (p->labels && read_labels(&in, p->labels, &lab_csv, &lab_npy, &lab_is_npy, err) != 0) goto out;

    /* N: the flag, else the feature rows, else a one-column label file's rows, else max id + 1 */
    int64_t N = p->num_nodes;
    const char *n_from = "--num_nodes";
    if (N <= 0 && in.feat_rows) N = in.feat_rows, n_from = p->node_features;
    if (N <= 0 && in.label_rows) N = in.label_rows, n_from = p->labels;
    if (N <= 0) N = in.max_id + 1, n_from = "the largest node id + 1";
    if (in.feat_rows && in.feat_rows != N) {
        err_set(err, CGNN_ERR_INPUT, "%s: %lld rows of features, but the graph has %lld nodes (%s)", p->node_features,
                (long long)in.feat_rows, (long long)N, n_from);
        goto out;
    }
    if (in.label_rows && in.label_rows != N) {
        err_set(err, CGNN_ERR_INPUT, "%s: %lld labels (one per node), but the graph has %lld nodes (%s)", p->labels,
                (long long)in.label_rows, (long long)N, n_from);
        goto out;
    }
    for (int64_t e = 0; e < E_in; e++)
        for (int c = 0; c < 2; c++)
            if (ev[2 * e + c] >= N) {
                err_set(err, CGNN_ERR_INPUT, "%s: edge %lld: %s id %lld is not below the node count %lld (%s)", p->edges,
                        (long long)e + 1, c ? "dst" : "src", (long long)ev[2 * e + c], (long long)N, n_from);
                goto out;
            }
    if (p->labels) {
        in.labels = malloc((size_t)N * sizeof *in.labels);
        if (!in.labels) {
            err_set(err, CGNN_ERR_RUNTIME, "out of memory for %lld labels", (long long)N);
            goto out;
        }
        for (int64_t v = 0; v < N; v++) in.labels[v] = -1;
        if (lab_is_npy) {
            for (int64_t v = 0; v < N; v++) in.labels[v] = npy_get_int(&lab_npy, v);
        } else if (lab_csv.cols == 1) {
            memcpy(in.labels, lab_csv.data, (size_t)N * sizeof *in.labels);
        } else {
            const int64_t *lv = lab_csv.data;
            for (int64_t r = 0; r < lab_csv.rows; r++) {
                if (lv[2 * r] >= N) {
                    err_set(err, CGNN_ERR_INPUT, "%s: row %lld: node id %lld is not below the node count %lld (%s)",
                            p->labels, (long long)r + 1, (long long)lv[2 * r], (long long)N, n_from);
                    goto out;
                }
                in.labels[lv[2 * r]] = lv[2 * r + 1];
            }
        }
        for (int64_t v = 0; v < N; v++)
            if (in.labels[v] >= ((int64_t)1 << 24)) {
                err_set(err, CGNN_ERR_INPUT, "%s: node %lld: label %lld (classes are 0 .. 2^24 - 1)", p->labels,
                        (long long)v, (long long)in.labels[v]);
                goto out;
            }
    }

    /* the edges: sorted copies for the reverse share, then the written list */
    const int64_t cap = p->undirected ? 2 * E_in : E_in;
    pairs = malloc((size_t)(cap ? cap : 1) * sizeof *pairs);
    if (!pairs) {
        err_set(err, CGNN_ERR_RUNTIME, "out of memory for %lld edges", (long long)cap);
        goto out;
    }
    for (int64_t e = 0; e < E_in; e++) pairs[e] = (edge_pair){ev[2 * e + 1], ev[2 * e]};
    qsort(pairs, (size_t)E_in, sizeof *pairs, cmp_pair);
    int64_t with_rev = 0;
    for (int64_t e = 0; e < E_in; e++) {
        const edge_pair rev = {ev[2 * e], ev[2 * e + 1]};
        with_rev += bsearch(&rev, pairs, (size_t)E_in, sizeof *pairs, cmp_pair) != NULL;
    }
    st->reverse_fraction = E_in ? (double)with_rev / (double)E_in : 0;
    int64_t E = E_in;
    if (p->undirected) {
        for (int64_t e = 0; e < E_in; e++) pairs[E_in + e] = (edge_pair){ev[2 * e], ev[2 * e + 1]};
        qsort(pairs, (size_t)(2 * E_in), sizeof *pairs, cmp_pair);
        E = 0;
        for (int64_t e = 0; e < 2 * E_in; e++)
            if (E == 0 || cmp_pair(&pairs[E - 1], &pairs[e]) != 0) pairs[E++] = pairs[e];
    } else {
        for (int64_t e = 0; e < E_in; e++) pairs[e] = (edge_pair){ev[2 * e + 1], ev[2 * e]}; /* the file's order */
    }
    st->num_nodes = N;
    st->input_edges = E_in;
    st->feat_dim = in.feat_dim;
    if (p->labels && write_nc(dir, in.labels, N, p, st, err) != 0) goto out;
    if (p->link_prediction) {
        if (write_lp(dir, pairs, &E, p, st, err) != 0) goto out;
    }
    st->num_edges = E;

    char path[4200];
    int64_t *ea = malloc((size_t)(E ? E : 1) * 2 * sizeof *ea);
    if (!ea) {
        err_set(err, CGNN_ERR_RUNTIME, "out of memory for %lld edges", (long long)E);
        goto out;
    }
    for (int64_t e = 0; e < E; e++) ea[e] = pairs[e].src, ea[E + e] = pairs[e].dst;
    const int64_t eshape[2] = {2, E};
    int wrc = join(path, sizeof path, dir, "edges.npy", err);
    if (wrc == 0) wrc = npy_write(path, NPY_DTYPE_INT64, 2, eshape, ea, err);
    free(ea);
    if (wrc != 0) goto out;
    if (p->node_features) {
        if (join(path, sizeof path, dir, "node-feat.npy", err) != 0) goto out;
        const int64_t fshape[2] = {in.feat_rows, in.feat_dim};
        if (in.have_feat_npy ? npy_write(path, in.feat_npy.dtype, 2, fshape, in.feat_npy.data, err) != 0
                             : npy_write(path, NPY_DTYPE_FLOAT32, 2, fshape, in.feat_csv.data, err) != 0)
            goto out;
    }
    if (write_metadata(dir, p, st, p->node_features != NULL, err) != 0) goto out;
    rc = 0;
out:
    free(pairs);
    csv_free(&lab_csv);
    if (lab_is_npy) npy_close(&lab_npy);
    inputs_free(&in);
    return rc;
}
