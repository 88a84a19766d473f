/* cli_info.c — `cgnn info DATASET`: what is in a dataset, checked. */
#include <stdio.h>

#include "cli/cli.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "util/timer.h"

static cli_flag INFO_FLAGS[] = {
    {"threads", "N", "threads for building the graph index (default: all cores)", NULL},
};
static const cli_command INFO_CMD = {
    "info", "cgnn info DATASET_DIR [--threads N]",
    "Opens and validates a GraphBolt on-disk dataset and prints nodes, edges, in-degree\n"
    "statistics, features, tasks and split sizes. Builds (and caches) the graph index.",
    INFO_FLAGS, 1};

static double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

int cli_cmd_info(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&INFO_CMD, argc, argv, pos, 1, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&INFO_CMD);
        return 0;
    }
    if (npos != 1) {
        err_set(&err, CGNN_ERR_INPUT, "info: expected one DATASET_DIR (see cgnn info --help)");
        return cli_fail(&err);
    }
    int64_t threads = 0;
    if (cli_flag_int(&INFO_CMD, "threads", &threads, &err) != 0) return cli_fail(&err);
    dataset ds;
    if (dataset_open(&ds, pos[0], &err) != 0) return cli_fail(&err);
    printf("dataset: %s (%s)\n", ds.name[0] ? ds.name : "(unnamed)", ds.dir);
    for (int t = 0; t < ds.num_node_types; t++)
        printf("nodes: %lld%s%s\n", (long long)ds.node_types[t].num_nodes,
               ds.num_node_types > 1 ? "  type " : "", ds.num_node_types > 1 ? ds.node_types[t].name : "");
    for (int et = 0; et < ds.num_edge_types; et++) {
        const ds_edge_type *e = &ds.edge_types[et];
        double t0 = timer_now();
        csc_graph g;
        if (csc_open_cached(&g, &ds, et, (int)threads, &err) != 0) {
            dataset_close(&ds);
            return cli_fail(&err);
        }
        double dt = timer_now() - t0;
        csc_degree_stats st;
        csc_degree_summary(&g, &st);
        printf("edges: %lld (%s, %s ids)\n", (long long)e->edges.num_edges, e->path,
               npy_dtype_name(e->edges.id_dtype));
        printf("in-degree: min %lld, median %lld, mean %.2f, p99 %lld, max %lld; %lld nodes without in-edges\n",
               (long long)st.min, (long long)st.median, st.mean, (long long)st.p99, (long long)st.max,
               (long long)st.num_isolated);
        printf("graph index: %s in %.2f s (%d-bit ids, %.1f MiB)\n", g.from_cache ? "loaded from cache" : "built",
               dt, g.index_bytes * 8,
               mib((double)(g.num_nodes + 1) * 8 + (double)g.num_edges * g.index_bytes));
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
