/* cli_info.c — `cgnn info DATASET`: what is in a dataset, checked. Also a partitioned graph
 * (`cgnn info OUT` or the partition JSON: parts, edge cut, balance, the run's time and memory)
 * and one part of it (its node range and local index). */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <omp.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "graph/csc.h"
#include "graph/partbook.h"
#include "io/cachedir.h"
#include "io/dataset.h"
#include "nn/blas.h"
#include "train/gigl_import.h"
#include "util/timer.h"

static cli_flag INFO_FLAGS[] = {
    {"threads", "N", "threads for building the graph index (default: all cores)", NULL},
    {"dataset", "DIR", "the dataset (or partition) to describe, as the positional DATASET_DIR", NULL},
};
static const cli_command INFO_CMD = {
    "info", "cgnn info [DATASET_DIR | --dataset DIR] [--threads N]",
    "Without a dataset: the machine (cores, vector widths, the BLAS kernels in use and who chose\n"
    "them, the measured float32 peak per vector width).\n"
    "Opens and validates a GraphBolt on-disk dataset and prints nodes, edges, in-degree\n"
    "statistics, features, tasks and split sizes. Builds (and caches) the graph index.\n"
    "Given the output of cgnn partition (its directory or its JSON), prints the partition:\n"
    "parts, edge cut, balance, time and peak memory of the run.",
    INFO_FLAGS, sizeof INFO_FLAGS / sizeof INFO_FLAGS[0]};

static double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

/* "INDENTgraph index cache: PATH" (where csc_open_cached keeps edge type et's index), or why
 * there is none. */
static void print_cache_file(const dataset *ds, int et, const char *indent) {
    char path[4200];
    cgnn_err cerr;
    if (csc_cache_file(path, sizeof path, ds, et, &cerr) == 0) printf("%sgraph index cache: %s\n", indent, path);
    else printf("%sgraph index cache: none (%s)\n", indent, cerr.msg);
}

void cli_print_partbook(const partbook *pb) {
    const partbook_stats *s = &pb->stats;
    printf("partition: %s, %d part%s (%s, seed %lld), id %s\n", pb->graph_name, pb->num_parts,
           pb->num_parts == 1 ? "" : "s", pb->part_method, (long long)pb->seed, pb->partition_id);
    printf("  %s\n", pb->json_path);
    printf("nodes: %lld, edges: %lld, max in-degree: %lld\n", (long long)pb->num_nodes, (long long)pb->num_edges,
           (long long)pb->max_in_degree);
    if (pb->typed) {
        printf("typed: %d node types, %d edge types; per-type new ids, part p owns one range of each type "
               "(node_map: DGL's homogeneous ids, (part, type) order)\n",
               pb->num_node_types, pb->num_edge_types);
        for (int t = 0; t < pb->num_node_types; t++) {
            const int64_t *tm = pb->type_map + (size_t)t * (size_t)(pb->num_parts + 1);
            printf("  %s: %lld nodes;", pb->ntype_names[t], (long long)pb->type_nodes[t]);
            for (int p = 0; p < pb->num_parts && p < 8; p++)
                printf(" part %d [%lld, %lld)", p, (long long)tm[p], (long long)tm[p + 1]);
            printf("%s\n", pb->num_parts > 8 ? " ..." : "");
        }
    }
    for (int p = 0; p < pb->num_parts; p++) {
        printf("  part %d: nodes [%lld, %lld) %lld, edges %lld", p, (long long)pb->node_map[p],
               (long long)pb->node_map[p + 1], (long long)(pb->node_map[p + 1] - pb->node_map[p]),
               (long long)(pb->edge_map[p + 1] - pb->edge_map[p]));
        for (int k = 0; s->present && k < s->num_seedsets; k++)
            printf(", %s/%s %lld", s->seeds[k].task, s->seeds[k].split, (long long)s->seeds[k].per_part[p]);
        printf("\n");
    }
    if (!s->present) return;
    printf("edge cut: %lld of %lld edges (%.2f%%)\n", (long long)s->edge_cut, (long long)pb->num_edges,
           100.0 * s->edge_cut_fraction);
    printf("balance (max/mean): nodes %.3f, edges %.3f", s->node_balance, s->edge_balance);
    for (int k = 0; k < s->num_seedsets; k++) printf(", %s/%s %.3f", s->seeds[k].task, s->seeds[k].split, s->seeds[k].balance);
    printf("\n");
    if (s->metis_sym_adjacency)
        printf("metis: %lld symmetrised adjacency entries, %lld constraints, objective (undirected cut) %lld\n",
               (long long)s->metis_sym_adjacency, (long long)s->metis_constraints, (long long)s->metis_objective);
    if (s->have_run)
        printf("run: %.2f s (assignment %.2f s, writing %.2f s), peak RSS %.1f MiB (%.1f with the dataset loaded, "
               "%.1f after the assignment), %d threads\n",
               s->run_seconds, s->run_seconds_assign, s->run_seconds_write, mib((double)s->run_peak_rss_bytes),
               mib((double)s->run_peak_rss_loaded), mib((double)s->run_peak_rss_assigned), s->run_threads);
}

/* A typed dataset: per node type its count and features (or "featureless"), per edge type its
 * edges and the in-degree over its dst type, then the tasks with their type. */
static int print_typed(const dataset *ds, int threads, cgnn_err *err) {
    printf("node types: %d (per-type ids; homogenised id = offset + per-type id)\n", ds->num_node_types);
    for (int t = 0; t < ds->num_node_types; t++) {
        const ds_node_type *nt = &ds->node_types[t];
        printf("  %s: %lld nodes (offset %lld)", nt->name, (long long)nt->num_nodes,
               (long long)dataset_node_type_offset(ds, t));
        if (ds->partition.present) /* a part owns one range of each type */
            printf(", owns [%lld, %lld) (%lld)", (long long)nt->own_start, (long long)nt->own_end,
                   (long long)(nt->own_end - nt->own_start));
        int any = 0;
        for (int i = 0; i < ds->num_features; i++) {
            const ds_feature *f = &ds->features[i];
            if (f->domain != DS_DOMAIN_NODE || f->type != t) continue;
            printf("%s %s (%s, dim %lld)", any ? "," : ", features:", f->name, npy_dtype_name(f->array.dtype),
                   (long long)f->dim);
            any = 1;
        }
        printf("%s\n", any ? "" : ", featureless");
    }
    printf("edge types: %d\n", ds->num_edge_types);
    for (int et = 0; et < ds->num_edge_types; et++) {
        const ds_edge_type *e = &ds->edge_types[et];
        double t0 = timer_now();
        csc_graph g;
        const ds_node_type *dt_type = &ds->node_types[e->dst_type];
        /* a part: the index of its own dst nodes (never cached) */
        if (ds->partition.present ? csc_build_range(&g, dt_type->own_start, dt_type->own_end - dt_type->own_start,
                                                    ds->node_types[e->src_type].num_nodes, &e->edges, threads, err) != 0
                                  : csc_open_cached(&g, ds, et, threads, err) != 0)
            return -1;
        double dt = timer_now() - t0;
        csc_degree_stats st;
        csc_degree_summary(&g, &st);
        printf("  %s: %lld edges (%s, %s ids)\n", e->name, (long long)e->edges.num_edges, e->path,
               npy_dtype_name(e->edges.id_dtype));
        printf("    in-degree over %s%s: min %lld, median %lld, mean %.2f, p99 %lld, max %lld; %lld nodes without "
               "in-edges\n",
               ds->node_types[e->dst_type].name, ds->partition.present ? " (the part's nodes)" : "", (long long)st.min, (long long)st.median, st.mean, (long long)st.p99,
               (long long)st.max, (long long)st.num_isolated);
        printf("    graph index: %s in %.2f s (%d-bit ids, %.1f MiB)\n", g.from_cache ? "loaded from cache" : "built",
               dt, g.index_bytes * 8, mib((double)(g.num_nodes + 1) * 8 + (double)g.num_edges * g.index_bytes));
        if (!ds->partition.present) print_cache_file(ds, et, "    ");
        csc_free(&g);
        for (int i = 0; i < ds->num_features; i++) {
            const ds_feature *f = &ds->features[i];
            if (f->domain == DS_DOMAIN_EDGE && f->type == et)
                printf("    edge feature %s (%s, dim %lld): read and validated, ignored by training\n", f->name,
                       npy_dtype_name(f->array.dtype), (long long)f->dim);
        }
    }
    printf("features:\n");
    if (ds->num_features == 0) printf("  (none)\n");
    for (int i = 0; i < ds->num_features; i++) {
        const ds_feature *f = &ds->features[i];
        const int edge = f->domain == DS_DOMAIN_EDGE;
        printf("  %s %s/%s: (%lld, %lld) %s, %s, %.1f MiB (%s)\n", edge ? "edge" : "node",
               edge ? ds->edge_types[f->type].name : ds->node_types[f->type].name, f->name, (long long)f->rows,
               (long long)f->dim, npy_dtype_name(f->array.dtype), f->in_memory ? "in memory" : "memory-mapped",
               mib((double)f->rows * (double)f->dim * (double)npy_dtype_size(f->array.dtype)), f->array.path);
    }
    printf("tasks:\n");
    if (ds->num_tasks == 0) printf("  (none)\n");
    for (int i = 0; i < ds->num_tasks; i++) {
        const ds_task *t = &ds->tasks[i];
        const int lp = t->kind == DS_TASK_LINK_PREDICTION;
        printf("  %s: %s, %s type %s", t->name, ds_task_kind_name(t->kind), lp ? "edge" : "node",
               lp ? ds->edge_types[t->type].name : ds->node_types[t->type].name);
        if (t->num_classes) printf(", %lld classes", (long long)t->num_classes);
        printf("\n   ");
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            if (!t->splits[s].present) continue;
            printf(" %s: %lld%s", ds_split_name((ds_split_id)s), (long long)t->splits[s].num_items,
                   t->splits[s].seed_width == 2 ? " pairs" : "");
        }
        printf("\n");
    }
    return 0;
}

/* `cgnn info` without a dataset: what the GEMMs run on (nn/blas.h) and the CPU's peaks
 * (bench/bench_peak.c), on `threads` threads (0: all cores). */
static int print_machine(int threads) {
    if (threads <= 0) threads = omp_get_num_procs();
    char line[400];
    printf("cores: %d (OpenMP), float32 vector width: %d-bit\n", omp_get_num_procs(), blas_cpu_width());
    printf("BLAS: %s\n", blas_describe(line, sizeof line));
    for (int w = 128; w <= 512; w *= 2) {
        if (!bench_cpu_has_width(w)) continue;
        const double one = bench_fma_peak(w, 1, 3), all = threads > 1 ? bench_fma_peak(w, threads, 3) : one;
        printf("float32 peak, %d-bit %s: %.1f GFLOP/s on 1 thread", w, w == 128 ? "multiply + add" : "FMA", one);
        if (threads > 1) printf(", %.1f on %d", all, threads);
        printf("\n");
    }
    if (blas_leaves_width_unused()) printf("note: the BLAS kernels are narrower than the CPU's vectors (above)\n");
    char cache[4096];
    const char *from = NULL;
    cgnn_err cerr;
    if (cachedir_root(cache, sizeof cache, &from, &cerr) == 0) printf("cache folder: %s (from $%s)\n", cache, from);
    else printf("cache folder: none (%s)\n", cerr.msg);
    return 0;
}

int cli_cmd_info(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&INFO_CMD, argc, argv, pos, 1, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&INFO_CMD);
        return 0;
    }
    int64_t threads = 0;
    if (cli_flag_int(&INFO_CMD, "threads", 0, 4096, &threads, &err) != 0) return cli_fail(&err);
    const char *flag_ds = cli_flag_str(&INFO_CMD, "dataset");
    if (flag_ds && npos == 1) {
        err_set(&err, CGNN_ERR_INPUT, "info: a dataset given twice ('%s' and --dataset %s): give one", pos[0], flag_ds);
        return cli_fail(&err);
    }
    if (flag_ds) pos[npos++] = flag_ds;
    if (npos == 0) return print_machine((int)threads);
    if (partbook_is_partition(pos[0])) {
        partbook pb;
        if (partbook_read_json(&pb, pos[0], &err) != 0) return cli_fail(&err);
        cli_print_partbook(&pb);
        const int rc = partbook_verify(&pb, (int)threads, &err);
        if (rc == 0)
            printf("checked: the %d part%s, the global splits and the id maps agree with the JSON\n", pb.num_parts,
                   pb.num_parts == 1 ? "" : "s");
        partbook_close(&pb);
        return rc ? cli_fail(&err) : 0;
    }
    char gigl_yaml[4096];
    if (gigl_is_preprocessed_metadata(pos[0], gigl_yaml, sizeof gigl_yaml)) {
        err_set(&err, CGNN_ERR_INPUT,
                "%s: GiGL's preprocessed output (preprocessed_metadata.yaml), not a GraphBolt dataset: cgnn train "
                "converts it by itself from a task config naming it; `cgnn import gigl --task_config_uri CONFIG --out "
                "DIR` writes the dataset to look at",
                gigl_yaml);
        return cli_fail(&err);
    }
    dataset ds;
    if (dataset_open(&ds, pos[0], &err) != 0) return cli_fail(&err);
    printf("dataset: %s (%s)\n", ds.name[0] ? ds.name : "(unnamed)", ds.dir);
    const ds_partition *pt = &ds.partition;
    if (pt->present && pt->part == DS_PARTITION_GLOBAL)
        printf("partition: the global splits of %d parts (id %s; %s)\n", pt->num_parts, pt->id, pt->graph);
    else if (pt->present && ds.typed)
        printf("partition: part %d of %d (id %s; %s), owns one range of new per-type ids per node type\n", pt->part,
               pt->num_parts, pt->id, pt->graph);
    else if (pt->present)
        printf("partition: part %d of %d (id %s; %s), owns nodes [%lld, %lld) (%lld): new ids\n", pt->part,
               pt->num_parts, pt->id, pt->graph, (long long)pt->node_start, (long long)pt->node_end,
               (long long)(pt->node_end - pt->node_start));
    if (dataset_is_typed(&ds)) {
        const int rc = print_typed(&ds, (int)threads, &err);
        dataset_close(&ds);
        return rc ? cli_fail(&err) : 0;
    }
    for (int t = 0; t < ds.num_node_types; t++)
        printf("nodes: %lld%s%s\n", (long long)ds.node_types[t].num_nodes,
               ds.num_node_types > 1 ? "  type " : "", ds.num_node_types > 1 ? ds.node_types[t].name : "");
    for (int et = 0; et < ds.num_edge_types; et++) {
        const ds_edge_type *e = &ds.edge_types[et];
        double t0 = timer_now();
        csc_graph g;
        /* a part: the index of its own nodes (never cached) */
        if (pt->present ? csc_build_range(&g, pt->node_start, pt->node_end - pt->node_start,
                                          ds.node_types[0].num_nodes, &e->edges, (int)threads, &err) != 0
                        : csc_open_cached(&g, &ds, et, (int)threads, &err) != 0) {
            dataset_close(&ds);
            return cli_fail(&err);
        }
        double dt = timer_now() - t0;
        csc_degree_stats st;
        csc_degree_summary(&g, &st);
        printf("edges: %lld (%s, %s ids)\n", (long long)e->edges.num_edges, e->path,
               npy_dtype_name(e->edges.id_dtype));
        if (!pt->present) {
            const double rev = csc_reverse_fraction(&g, 20000);
            if (rev >= 0) printf("reverse edges: %.1f%% of the edges (sampled) have theirs\n", 100.0 * rev);
            fflush(stdout);
            csc_warn_one_way(&g, ds.dir);
        }
        printf("in-degree%s: min %lld, median %lld, mean %.2f, p99 %lld, max %lld; %lld nodes without in-edges\n",
               pt->present ? " (the part's nodes)" : "", (long long)st.min, (long long)st.median, st.mean, (long long)st.p99, (long long)st.max,
               (long long)st.num_isolated);
        printf("graph index: %s in %.2f s (%d-bit ids, %.1f MiB)\n", g.from_cache ? "loaded from cache" : "built",
               dt, g.index_bytes * 8,
               mib((double)(g.num_nodes + 1) * 8 + (double)g.num_edges * g.index_bytes));
        if (!pt->present) print_cache_file(&ds, 0, "");
        csc_free(&g);
    }
    printf("features:\n");
    if (ds.num_features == 0) printf("  (none)\n");
    for (int i = 0; i < ds.num_features; i++) {
        const ds_feature *f = &ds.features[i];
        printf("  %s/%s: (%lld, %lld) %s, %s, %.1f MiB (%s)\n", f->domain == DS_DOMAIN_NODE ? "node" : "edge",
               f->name, (long long)f->rows, (long long)f->dim, npy_dtype_name(f->array.dtype),
               f->in_memory ? "in memory" : "memory-mapped",
               mib((double)f->rows * (double)f->dim * (double)npy_dtype_size(f->array.dtype)), f->array.path);
    }
    printf("tasks:\n");
    if (ds.num_tasks == 0) printf("  (none)\n");
    for (int i = 0; i < ds.num_tasks; i++) {
        const ds_task *t = &ds.tasks[i];
        printf("  %s: %s", t->name, ds_task_kind_name(t->kind));
        if (t->num_classes) printf(", %lld classes", (long long)t->num_classes);
        printf("\n   ");
        for (int s = 0; s < DS_SPLIT_COUNT; s++) {
            if (!t->splits[s].present) continue;
            printf(" %s: %lld%s", ds_split_name((ds_split_id)s), (long long)t->splits[s].num_items,
                   t->splits[s].seed_width == 2 ? " pairs" : "");
        }
        printf("\n");
    }
    dataset_close(&ds);
    return 0;
}
