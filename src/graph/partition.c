/* partition.c — node assignment (METIS or random), renumbering, statistics and the partition
 * id; see partition.h. The writer is partition_write.c.
 *
 * Dimension legend: N nodes, E edges, P parts, A symmetrised adjacency entries, C constraints.
 *
 * Symmetrisation (partition_symmetrize), deterministic for any thread count:
 *   1. count both endpoints of every non-loop edge (atomic adds: the counts are exact)   O(E)
 *   2. offsets = prefix sums (int64: the unmerged 2E entries may exceed 2^31)             O(N)
 *   3. scatter the other endpoint to a per-node slot (atomic positions: the order inside a
 *      node's list depends on the threads, but step 4 sorts it away)                      O(E)
 *   4. sort and deduplicate each list (parallel over nodes)                             O(A log d)
 *   5. compact the lists to the left in place, in node order                              O(A)
 * Peak: 8(N+1) offsets + 8N positions + 4 * 2E entries; then METIS's own copies.
 */
#include "graph/partition.h"

#include <metis.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "util/crc.h"
#include "util/log.h"
#include "util/rng.h"
#include "util/timer.h"

_Static_assert(sizeof(idx_t) == sizeof(int32_t), "cgnn expects Debian's libmetis with 32-bit idx_t");

static const char *const METHOD_NAMES[] = {"metis", "random"};
_Static_assert(sizeof METHOD_NAMES / sizeof METHOD_NAMES[0] == PARTITION_METHOD_COUNT, "method names");

const char *partition_method_name(partition_method m) { return METHOD_NAMES[m]; }

int partition_method_parse(const char *s, partition_method *out) {
    for (int m = 0; m < PARTITION_METHOD_COUNT; m++)
        if (strcmp(s, METHOD_NAMES[m]) == 0) {
            *out = (partition_method)m;
            return 0;
        }
    return -1;
}

static inline int64_t edge_id(const void *ids, npy_dtype dt, int64_t i) {
    return dt == NPY_DTYPE_INT32 ? (int64_t)((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
}

#define IDX_LIMIT ((int64_t)2147483647)

/* ---- symmetrised graph -------------------------------------------------------------------- */

void partition_symgraph_free(partition_symgraph *g) {
    if (!g) return;
    free(g->xadj);
    free(g->adjncy);
    memset(g, 0, sizeof *g);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts a[0..n) ascending and removes duplicates; returns the new length. */
static int64_t sort_unique(int32_t *a, int64_t n) {
    if (n <= 1) return n;
    if (n <= 24) { /* insertion sort: most lists are short */
        for (int64_t i = 1; i < n; i++) {
            int32_t x = a[i];
            int64_t j = i - 1;
            while (j >= 0 && a[j] > x) a[j + 1] = a[j], j--;
            a[j + 1] = x;
        }
    } else {
        qsort(a, (size_t)n, sizeof *a, cmp_i32);
    }
    int64_t k = 1;
    for (int64_t i = 1; i < n; i++)
        if (a[i] != a[k - 1]) a[k++] = a[i];
    return k;
}

int partition_symmetrize(partition_symgraph *g, int64_t n, const ds_edges *edges, int nthreads, cgnn_err *err) {
    memset(g, 0, sizeof *g);
    if (n > IDX_LIMIT)
        return err_set(err, CGNN_ERR_INPUT,
                       "the graph has %lld nodes; METIS (32-bit idx_t) takes at most %lld: use --method random",
                       (long long)n, (long long)IDX_LIMIT);
    const int T = nthreads > 0 ? nthreads : omp_get_max_threads();
    const int64_t E = edges->num_edges;
    const npy_dtype dt = edges->id_dtype;
    int64_t *off = calloc((size_t)n + 1, sizeof *off), *pos = NULL;
    int32_t *adj = NULL;
    if (!off) goto oom;
    /* 1. degrees (both directions, loops dropped) */
#pragma omp parallel for num_threads(T) schedule(static)
    for (int64_t e = 0; e < E; e++) {
        const int64_t s = edge_id(edges->src, dt, e), d = edge_id(edges->dst, dt, e);
        if (s == d) continue;
#pragma omp atomic
        off[s + 1]++;
#pragma omp atomic
        off[d + 1]++;
    }
    /* 2. offsets */
    for (int64_t v = 0; v < n; v++) off[v + 1] += off[v];
    const int64_t total = off[n];
    pos = malloc(((size_t)n + 1) * sizeof *pos);
    adj = malloc((size_t)(total ? total : 1) * sizeof *adj);
    if (!pos || !adj) goto oom;
    memcpy(pos, off, (size_t)n * sizeof *pos);
    /* 3. scatter */
#pragma omp parallel for num_threads(T) schedule(static)
    for (int64_t e = 0; e < E; e++) {
        const int64_t s = edge_id(edges->src, dt, e), d = edge_id(edges->dst, dt, e);
        if (s == d) continue;
        int64_t ps, pd;
#pragma omp atomic capture
        ps = pos[s]++;
#pragma omp atomic capture
        pd = pos[d]++;
        adj[ps] = (int32_t)d;
        adj[pd] = (int32_t)s;
    }
    /* 4. sort + unique per node: pos[v] := the node's merged degree */
#pragma omp parallel for num_threads(T) schedule(dynamic, 1024)
    for (int64_t v = 0; v < n; v++) pos[v] = sort_unique(adj + off[v], off[v + 1] - off[v]);
    /* 5. compact in node order (each list moves left or stays) */
    int64_t at = 0;
    for (int64_t v = 0; v < n; v++) {
        const int64_t len = pos[v];
        if (at != off[v]) memmove(adj + at, adj + off[v], (size_t)len * sizeof *adj);
        off[v] = at;
        at += len;
    }
    off[n] = at;
    free(pos);
    pos = NULL;
    if (at > IDX_LIMIT) {
        free(off);
        free(adj);
        return err_set(err, CGNN_ERR_INPUT,
                       "the symmetrised graph has %lld adjacency entries; METIS (32-bit idx_t) takes at most %lld: "
                       "use --method random",
                       (long long)at, (long long)IDX_LIMIT);
    }
    g->num_nodes = n;
    g->nnz = at;
    g->xadj = malloc(((size_t)n + 1) * sizeof *g->xadj);
    if (!g->xadj) goto oom;
    for (int64_t v = 0; v <= n; v++) g->xadj[v] = (int32_t)off[v];
    free(off);
    off = NULL;
    int32_t *shrunk = realloc(adj, (size_t)(at ? at : 1) * sizeof *adj);
    g->adjncy = shrunk ? shrunk : adj;
    return 0;
oom:
    free(off);
    free(pos);
    free(adj);
    partition_symgraph_free(g);
    return err_set(err, CGNN_ERR_RUNTIME,
                   "out of memory symmetrising the graph for METIS (%lld nodes, %lld edges; see docs/DISTRIBUTED.md, "
                   "\"cgnn partition\", for the memory bound, or use --method random)",
                   (long long)n, (long long)E);
}

/* ---- random ---------------------------------------------------------------------------------- */

#define RANDOM_STREAM 0x7061727469ULL /* "parti": the permutation's stream, apart from training's */

void partition_random_assign(int32_t *assign, int64_t n, int num_parts, uint64_t seed) {
    int64_t *perm = cgnn_malloc((size_t)(n ? n : 1) * sizeof *perm);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    rng r;
    rng_init(&r, rng_key(seed, RANDOM_STREAM));
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        const int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1);
        const int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int p = 0; p < num_parts; p++) {
        const int64_t lo = n * p / num_parts, hi = n * (p + 1) / num_parts;
        for (int64_t i = lo; i < hi; i++) assign[perm[i]] = p;
    }
    free(perm);
}

/* ---- renumbering ----------------------------------------------------------------------------- */

/* The typed renumbering (see partition.h): within each type t (homogenised ids off[t] ..
 * off[t+1]), new per-type ids sorted by (part, original id); type_map[t * (P+1) + p] the first
 * per-type new id of part p; node_map the parts' starts in DGL's homogeneous new ids ((part,
 * type, id) order). new_of_orig / orig_of_new in the homogenised layout. T = 1 is the untyped
 * renumbering. */
static void renumber_typed(const int32_t *assign, int T, const int64_t *off, int num_parts, int64_t *node_map,
                           int64_t *type_map, int64_t *new_of_orig, int64_t *orig_of_new) {
    const int P = num_parts;
    memset(node_map, 0, ((size_t)P + 1) * sizeof *node_map);
    int64_t *next = cgnn_malloc(((size_t)P + 1) * sizeof *next);
    for (int t = 0; t < T; t++) {
        int64_t *tm = type_map + (size_t)t * (size_t)(P + 1);
        memset(tm, 0, ((size_t)P + 1) * sizeof *tm);
        for (int64_t v = off[t]; v < off[t + 1]; v++) tm[assign[v] + 1]++;
        for (int p = 0; p < P; p++) node_map[p + 1] += tm[p + 1];
        for (int p = 0; p < P; p++) tm[p + 1] += tm[p];
        memcpy(next, tm, ((size_t)P + 1) * sizeof *next);
        for (int64_t v = off[t]; v < off[t + 1]; v++) { /* ascending: new ids keep the original order per part */
            const int64_t w = next[assign[v]]++;
            new_of_orig[v] = w;
            orig_of_new[off[t] + w] = v - off[t];
        }
    }
    for (int p = 0; p < P; p++) node_map[p + 1] += node_map[p];
    free(next);
}

void partition_renumber(const int32_t *assign, int64_t n, int num_parts, int64_t *node_map, int64_t *new_of_orig,
                        int64_t *orig_of_new) {
    const int64_t off[2] = {0, n};
    int64_t *type_map = cgnn_malloc(((size_t)num_parts + 1) * sizeof *type_map);
    renumber_typed(assign, 1, off, num_parts, node_map, type_map, new_of_orig, orig_of_new);
    free(type_map);
}

/* ---- METIS ----------------------------------------------------------------------------------- */

/* The node type of the seeds (a pair's anchor: its edge type's src type) of task t. */
static int anchor_type(const dataset *ds, const ds_task *tk) {
    return ds->typed && tk->kind == DS_TASK_LINK_PREDICTION ? ds->edge_types[tk->type].src_type : tk->type;
}

/* Vertex weights (N, C) and the constraints' meaning; the caller frees *vwgt. Constraints with a
 * zero total (an empty split, a graph without edges) are left out: METIS divides by totals. A
 * typed graph balances each node type's count (one 0/1 constraint per type, DistDGL's
 * balance_ntypes) instead of the single node count. */
static int metis_weights(const dataset *ds, const int64_t *off, const int64_t *in_degree, int64_t n, int64_t E,
                         idx_t **vwgt_out, int *ncon_out, cgnn_err *err) {
    const int T = ds->num_node_types;
    int ncon = T + (E > 0);
    for (int t = 0; t < ds->num_tasks; t++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) ncon += ds->tasks[t].splits[s].present && ds->tasks[t].splits[s].num_items > 0;
    if (E > IDX_LIMIT)
        return err_set(err, CGNN_ERR_INPUT,
                       "the graph has %lld edges: the edge-balance constraint's total does not fit METIS's 32-bit "
                       "idx_t; use --method random",
                       (long long)E);
    idx_t *w = calloc((size_t)n * (size_t)ncon, sizeof *w);
    if (!w) return err_set(err, CGNN_ERR_RUNTIME, "out of memory for METIS's vertex weights");
    for (int t = 0; t < T; t++)
        for (int64_t v = off[t]; v < off[t + 1]; v++) w[v * ncon + t] = 1;
    for (int64_t v = 0; v < n && E > 0; v++) w[v * ncon + T] = (idx_t)in_degree[v];
    int c = T + (E > 0);
    for (int t = 0; t < ds->num_tasks; t++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &ds->tasks[t].splits[s];
            if (!sp->present || sp->num_items == 0) continue;
            if (sp->num_items > IDX_LIMIT) {
                free(w);
                return err_set(err, CGNN_ERR_INPUT,
                               "%s: %lld seeds: the constraint's total does not fit METIS's 32-bit idx_t; use "
                               "--method random",
                               sp->seeds_path, (long long)sp->num_items);
            }
            const int64_t o = off[anchor_type(ds, &ds->tasks[t])];
            for (int64_t i = 0; i < sp->num_items; i++) w[(o + sp->seeds[i * sp->seed_width]) * ncon + c]++;
            c++;
        }
    *vwgt_out = w;
    *ncon_out = ncon;
    return 0;
}

/* Every edge type's edges as one homogenised edge list (int32 ids: METIS needs n < 2^31, checked
 * by the caller); the caller frees *buf. */
static int homogenise_edges(ds_edges *out, int32_t **buf, const dataset *ds, const int64_t *off, int64_t E,
                            cgnn_err *err) {
    int32_t *ids = malloc((size_t)(2 * E + 1) * sizeof *ids);
    if (!ids) return err_set(err, CGNN_ERR_RUNTIME, "out of memory homogenising %lld edges for METIS", (long long)E);
    int64_t at = 0;
    for (int k = 0; k < ds->num_edge_types; k++) {
        const ds_edge_type *et = &ds->edge_types[k];
        const ds_edges *e = &et->edges;
        for (int64_t i = 0; i < e->num_edges; i++, at++) {
            ids[at] = (int32_t)(off[et->src_type] + edge_id(e->src, e->id_dtype, i));
            ids[E + at] = (int32_t)(off[et->dst_type] + edge_id(e->dst, e->id_dtype, i));
        }
    }
    *out = (ds_edges){NPY_DTYPE_INT32, E, ids, ids + E};
    *buf = ids;
    return 0;
}

static int metis_assign(int32_t *assign, const dataset *ds, const int64_t *off, const int64_t *in_degree,
                        const partition_params *p, partition_result *r, cgnn_err *err) {
    const int64_t n = r->num_nodes, E = r->num_edges;
    partition_symgraph g;
    ds_edges hom;
    int32_t *hom_buf = NULL;
    const ds_edges *edges = &ds->edge_types[0].edges;
    if (ds->num_edge_types > 1 || ds->typed) {
        if (n > IDX_LIMIT)
            return err_set(err, CGNN_ERR_INPUT,
                           "the graph has %lld nodes; METIS (32-bit idx_t) takes at most %lld: use --method random",
                           (long long)n, (long long)IDX_LIMIT);
        if (homogenise_edges(&hom, &hom_buf, ds, off, E, err) != 0) return -1;
        edges = &hom;
    }
    int rc = partition_symmetrize(&g, n, edges, p->num_threads, err);
    free(hom_buf);
    if (rc != 0) return -1;
    idx_t *vwgt = NULL;
    int ncon = 0;
    if (metis_weights(ds, off, in_degree, n, E, &vwgt, &ncon, err) != 0) {
        partition_symgraph_free(&g);
        return -1;
    }
    r->sym_adjacency = g.nnz;
    r->metis_constraints = ncon;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = (idx_t)p->seed;
    options[METIS_OPTION_NCUTS] = 1;
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
    idx_t nv = (idx_t)n, nc = (idx_t)ncon, np = (idx_t)p->num_parts, objval = 0;
    log_info("partition: METIS k-way, %lld nodes, %lld symmetrised adjacency entries, %d constraints, %d parts",
             (long long)n, (long long)g.nnz, ncon, p->num_parts);
    rc = METIS_PartGraphKway(&nv, &nc, g.xadj, g.adjncy, vwgt, NULL, NULL, &np, NULL, NULL, options, &objval, assign);
    free(vwgt);
    partition_symgraph_free(&g);
    if (rc != METIS_OK)
        return err_set(err, rc == METIS_ERROR_INPUT ? CGNN_ERR_INPUT : CGNN_ERR_RUNTIME,
                       "METIS_PartGraphKway failed (%s)",
                       rc == METIS_ERROR_INPUT    ? "METIS_ERROR_INPUT: METIS refused the graph or options"
                       : rc == METIS_ERROR_MEMORY ? "METIS_ERROR_MEMORY: out of memory; use --method random"
                                                  : "METIS_ERROR");
    r->metis_objective = objval;
    for (int64_t v = 0; v < n; v++) CGNN_CHECK(assign[v] >= 0 && assign[v] < p->num_parts);
    return 0;
}

/* ---- the whole computation ------------------------------------------------------------------- */

void partition_free(partition_result *r) {
    if (!r) return;
    free(r->assign);
    free(r->node_map);
    free(r->edge_map);
    free(r->new_of_orig);
    free(r->orig_of_new);
    free(r->type_offset);
    free(r->type_map);
    free(r->etype_map);
    free(r->etype_max_in_degree);
    for (int i = 0; i < r->num_seedsets; i++) free(r->seedsets[i].per_part);
    free(r->seedsets);
    memset(r, 0, sizeof *r);
}

/* The partition id: a 64-bit mix of CRC-32s of the assignment, of the source edges (src, dst of
 * every edge type) and of every split's seeds, and of (P, method, seed, N, E) (and, typed, of
 * the node and edge type counts). Deterministic for a seed; two partitionings that differ in
 * anything that changes the parts get different ids. */
static void make_id(partition_result *r, const dataset *ds) {
    uint64_t h = rng_key((uint64_t)r->num_parts, (uint64_t)r->method);
    h = rng_key(h, (uint64_t)r->seed);
    h = rng_key(h, (uint64_t)r->num_nodes);
    h = rng_key(h, (uint64_t)r->num_edges);
    if (r->typed) {
        h = rng_key(h, (uint64_t)r->num_node_types * 1000003u + (uint64_t)r->num_edge_types);
        for (int t = 0; t < r->num_node_types; t++) h = rng_key(h, (uint64_t)ds->node_types[t].num_nodes);
    }
    h = rng_key(h, crc_parallel(0, r->assign, (size_t)r->num_nodes * sizeof *r->assign));
    for (int k = 0; k < ds->num_edge_types; k++) {
        const ds_edges *e = &ds->edge_types[k].edges;
        const size_t idb = npy_dtype_size(e->id_dtype) * (size_t)e->num_edges;
        h = rng_key(h, crc_parallel(0, e->src, idb));
        h = rng_key(h, crc_parallel(0, e->dst, idb));
    }
    for (int t = 0; t < ds->num_tasks; t++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &ds->tasks[t].splits[s];
            if (!sp->present) continue;
            h = rng_key(h, crc_parallel(0, sp->seeds, (size_t)(sp->num_items * sp->seed_width) * sizeof(int64_t)));
        }
    snprintf(r->id, sizeof r->id, "%016llx", (unsigned long long)h);
}

int partition_compute(partition_result *r, const dataset *ds, const partition_params *p, cgnn_err *err) {
    memset(r, 0, sizeof *r);
    CGNN_CHECK(ds->num_node_types >= 1 && ds->num_edge_types >= 1 && !ds->partition.present);
    CGNN_CHECK(ds->typed || (ds->num_node_types == 1 && ds->num_edge_types == 1));
    const int NT = ds->num_node_types, K = ds->num_edge_types;
    const int64_t n = dataset_total_nodes(ds);
    int64_t E = 0;
    for (int k = 0; k < K; k++) E += ds->edge_types[k].edges.num_edges;
    const int P = p->num_parts;
    if (P < 1 || P > PARTITION_MAX_PARTS || P > n)
        return err_set(err, CGNN_ERR_INPUT, "--num_parts: %d parts for %lld nodes (expected 1 to %lld)", P,
                       (long long)n, (long long)(n < PARTITION_MAX_PARTS ? n : PARTITION_MAX_PARTS));
    if (p->seed < 0 || p->seed > PARTITION_MAX_SEED)
        return err_set(err, CGNN_ERR_INPUT, "--seed: expected 0 to %d, got %lld", PARTITION_MAX_SEED,
                       (long long)p->seed);
    const int T = p->num_threads > 0 ? p->num_threads : omp_get_max_threads();
    r->num_parts = P;
    r->method = p->method;
    r->seed = p->seed;
    r->num_nodes = n;
    r->num_edges = E;
    r->typed = ds->typed;
    r->num_node_types = NT;
    r->num_edge_types = K;
    r->assign = malloc((size_t)n * sizeof *r->assign);
    r->new_of_orig = malloc((size_t)n * sizeof *r->new_of_orig);
    r->orig_of_new = malloc((size_t)n * sizeof *r->orig_of_new);
    int64_t *in_degree = calloc((size_t)n, sizeof *in_degree);
    if (!r->assign || !r->new_of_orig || !r->orig_of_new || !in_degree) {
        free(in_degree);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory for the node maps (%lld nodes)", (long long)n);
    }
    r->node_map = cgnn_calloc((size_t)P + 1, sizeof *r->node_map);
    r->edge_map = cgnn_calloc((size_t)P + 1, sizeof *r->edge_map);
    r->type_offset = cgnn_calloc((size_t)NT + 1, sizeof *r->type_offset);
    r->type_map = cgnn_calloc((size_t)NT * ((size_t)P + 1), sizeof *r->type_map);
    r->etype_map = cgnn_calloc((size_t)K * ((size_t)P + 1), sizeof *r->etype_map);
    r->etype_max_in_degree = cgnn_calloc((size_t)K, sizeof *r->etype_max_in_degree);
    const int64_t *off = r->type_offset;
    for (int t = 0; t < NT; t++) r->type_offset[t + 1] = r->type_offset[t] + ds->node_types[t].num_nodes;

    /* in-degrees over every edge type (the edge-balance weight), and each edge type's largest
     * (samplers size their buffers with it) */
    for (int k = 0; k < K; k++) {
        const ds_edge_type *et = &ds->edge_types[k];
        const ds_edges *edges = &et->edges;
        const int64_t o = off[et->dst_type], nd = ds->node_types[et->dst_type].num_nodes;
        int64_t *deg = calloc((size_t)nd, sizeof *deg);
        if (!deg) {
            free(in_degree);
            return err_set(err, CGNN_ERR_RUNTIME, "out of memory counting in-degrees (%lld nodes)", (long long)nd);
        }
#pragma omp parallel for num_threads(T) schedule(static)
        for (int64_t e = 0; e < edges->num_edges; e++) {
            const int64_t d = edge_id(edges->dst, edges->id_dtype, e);
#pragma omp atomic
            deg[d]++;
        }
        int64_t maxdeg = 0;
        for (int64_t v = 0; v < nd; v++) {
            if (deg[v] > maxdeg) maxdeg = deg[v];
            in_degree[o + v] += deg[v];
        }
        free(deg);
        r->etype_max_in_degree[k] = maxdeg;
        if (maxdeg > r->max_in_degree) r->max_in_degree = maxdeg;
    }

    /* assignment */
    const double t0 = timer_now();
    int rc = 0;
    if (P == 1)
        memset(r->assign, 0, (size_t)n * sizeof *r->assign);
    else if (p->method == PARTITION_RANDOM)
        partition_random_assign(r->assign, n, P, (uint64_t)p->seed);
    else
        rc = metis_assign(r->assign, ds, off, in_degree, p, r, err);
    r->seconds_assign = timer_now() - t0;
    free(in_degree);
    if (rc != 0) return -1;

    renumber_typed(r->assign, NT, off, P, r->node_map, r->type_map, r->new_of_orig, r->orig_of_new);

    /* edges per part (the in-edges of its nodes, per edge type) and the edge cut */
    const int32_t *as = r->assign;
    int64_t cut = 0;
    for (int k = 0; k < K; k++) {
        const ds_edge_type *et = &ds->edge_types[k];
        const ds_edges *edges = &et->edges;
        const int64_t os = off[et->src_type], od = off[et->dst_type];
        int64_t *em = r->etype_map + (size_t)k * (size_t)(P + 1), c = 0;
        for (int64_t e = 0; e < edges->num_edges; e++) em[as[od + edge_id(edges->dst, edges->id_dtype, e)] + 1]++;
#pragma omp parallel for num_threads(T) schedule(static) reduction(+ : c)
        for (int64_t e = 0; e < edges->num_edges; e++)
            c += as[os + edge_id(edges->src, edges->id_dtype, e)] != as[od + edge_id(edges->dst, edges->id_dtype, e)];
        cut += c;
        for (int q = 0; q < P; q++) r->edge_map[q + 1] += em[q + 1];
        for (int q = 0; q < P; q++) em[q + 1] += em[q];
        CGNN_CHECK(em[P] == edges->num_edges);
    }
    for (int q = 0; q < P; q++) r->edge_map[q + 1] += r->edge_map[q];
    CGNN_CHECK(r->edge_map[P] == E);
    r->edge_cut = cut;

    /* seeds per part, per split (a seed, or a pair's anchor, of its own node type) */
    for (int t = 0; t < ds->num_tasks; t++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) r->num_seedsets += ds->tasks[t].splits[s].present;
    r->seedsets = cgnn_calloc((size_t)(r->num_seedsets ? r->num_seedsets : 1), sizeof *r->seedsets);
    int k = 0;
    for (int t = 0; t < ds->num_tasks; t++)
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            const ds_split *sp = &ds->tasks[t].splits[s];
            if (!sp->present) continue;
            partition_seedset *ss = &r->seedsets[k++];
            ss->task = t;
            ss->split = s;
            ss->total = sp->num_items;
            ss->per_part = cgnn_calloc((size_t)P, sizeof *ss->per_part);
            const int64_t o = off[anchor_type(ds, &ds->tasks[t])];
            for (int64_t i = 0; i < sp->num_items; i++) ss->per_part[as[o + sp->seeds[i * sp->seed_width]]]++;
        }
    make_id(r, ds);
    for (int q = 0; q < P; q++)
        if (r->node_map[q + 1] == r->node_map[q])
            log_warn("partition: part %d is empty (METIS left it without nodes); a rank loading it has nothing to "
                     "train on",
                     q);
    return 0;
}

int partition_anchor_type(const dataset *ds, int task) { return anchor_type(ds, &ds->tasks[task]); }
