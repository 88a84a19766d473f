/* sample_weights.c — edge weights for weighted sampling; see sample_weights.h. */
#include "sample/sample_weights.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Value i of w (dtype dt) as a double (float16 decoded by hand). */
static double weight_at(const void *w, npy_dtype dt, int64_t i) {
    switch (dt) {
    case NPY_DTYPE_FLOAT32: return ((const float *)w)[i];
    case NPY_DTYPE_FLOAT64: return ((const double *)w)[i];
    case NPY_DTYPE_FLOAT16: {
        const uint16_t h = ((const uint16_t *)w)[i];
        const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        const double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
        return (h & 0x8000u) ? -v : v;
    }
    case NPY_DTYPE_UINT8: return ((const uint8_t *)w)[i];
    case NPY_DTYPE_INT8: return ((const int8_t *)w)[i];
    case NPY_DTYPE_INT32: return ((const int32_t *)w)[i];
    case NPY_DTYPE_INT64: return (double)((const int64_t *)w)[i];
    default: return NAN;
    }
}

int sample_weights_to_csc(const csc_graph *g, const void *w, npy_dtype w_dtype, const void *dst, npy_dtype id_dtype,
                          int64_t num_edges, const char *path, float *out, cgnn_err *err) {
    if (num_edges != g->num_edges)
        return err_set(err, CGNN_ERR_INPUT, "%s: %lld sampling weights for an index of %lld edges", path,
                       (long long)num_edges, (long long)g->num_edges);
    const int64_t N = g->num_nodes;
    int64_t *cursor = malloc((size_t)(N + 1) * sizeof(int64_t));
    if (!cursor) return err_set(err, CGNN_ERR_RUNTIME, "out of memory reordering the sampling weights");
    memcpy(cursor, g->indptr, (size_t)(N + 1) * sizeof(int64_t));
    int rc = 0;
    for (int64_t e = 0; e < num_edges; e++) {
        const double v = weight_at(w, w_dtype, e);
        const float f = (float)v;
        const char *why = isnan(v)          ? "is NaN"
                          : v < 0           ? "is negative"
                          : isinf(v)        ? "is infinite"
                          : isinf(f)        ? "does not fit in float32"
                          : v > 0 && f == 0 ? "is positive but 0 in float32"
                                            : NULL;
        if (why) {
            rc = err_set(err, CGNN_ERR_INPUT,
                         "%s: row %lld: sampling weight %g %s; weights must be finite and >= 0 (0: never drawn)", path,
                         (long long)e, v, why);
            break;
        }
        const int64_t d = id_dtype == NPY_DTYPE_INT32 ? ((const int32_t *)dst)[e] : ((const int64_t *)dst)[e];
        const int64_t row = d - g->first_node; /* a part's index: rows from its first node */
        if (row < 0 || row >= N || cursor[row] >= g->indptr[row + 1]) {
            rc = err_set(err, CGNN_ERR_INPUT, "%s: row %lld: edge destination %lld does not match the graph's index",
                         path, (long long)e, (long long)d);
            break;
        }
        out[cursor[row]++] = f;
    }
    free(cursor);
    return rc;
}

int sample_weights_load(const dataset *ds, int etype, const csc_graph *g, const char *name, float **out,
                        int64_t *zero_nodes, cgnn_err *err) {
    *out = NULL;
    const ds_edge_type *et = &ds->edge_types[etype];
    const ds_feature *f = dataset_find_feature(ds, DS_DOMAIN_EDGE, etype, name);
    if (!f)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: no edge feature '%s'%s%s%s (feature_data entries with domain: edge) to take the sampling "
                       "weights from",
                       ds->dir, name, ds->typed ? " of edge type '" : "", ds->typed ? et->name : "",
                       ds->typed ? "'" : "");
    if (f->dim != 1)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: edge feature '%s' has %lld columns; sampling weights need one value per edge, shape (E,) "
                       "or (E, 1)",
                       f->array.path, name, (long long)f->dim);
    float *w = malloc((size_t)(g->num_edges ? g->num_edges : 1) * sizeof(float));
    if (!w) return err_set(err, CGNN_ERR_RUNTIME, "out of memory for the sampling weights");
    if (sample_weights_to_csc(g, f->array.data, f->array.dtype, et->edges.dst, et->edges.id_dtype, f->rows,
                              f->array.path, w, err) != 0) {
        free(w);
        return -1;
    }
    if (zero_nodes) {
        int64_t z = 0;
        for (int64_t v = 0; v < g->num_nodes; v++) {
            int any = 0;
            for (int64_t j = g->indptr[v]; j < g->indptr[v + 1] && !any; j++) any = w[j] > 0.0f;
            z += !any && g->indptr[v + 1] > g->indptr[v];
        }
        *zero_nodes = z;
    }
    *out = w;
    return 0;
}
