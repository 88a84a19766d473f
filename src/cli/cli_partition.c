/* cli_partition.c — `cgnn partition`: cut a dataset into parts (graph/partition.h).
 *
 * Order of work, so that a bad job changes nothing: flags → open and validate the whole dataset
 * → output checks (OUT is not the dataset directory and holds none of its files; absent or empty
 * unless --force; locked against a second partition run writing the same OUT) → compute → write
 * everything into a staging directory "OUT.tmp.<pid>" (registered with util/cleanup: removed on
 * failure or on a signal) → rename it into place (an existing OUT is replaced only then) → read
 * the result back through the partition book and print it. Inputs are never modified.
 */
#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "graph/partbook.h"
#include "graph/partition.h"
#include "io/dataset.h"
#include "io/outguard.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/timer.h"

static cli_flag PARTITION_FLAGS[] = {
    {"dataset", "DIR", "the dataset to partition (GraphBolt on-disk format; required; never modified)", NULL},
    {"num_parts", "P", "number of parts, 1 to the number of nodes (required)", NULL},
    {"method", "NAME", "metis (k-way, balancing nodes, edges and each split's seeds) or random (required)", NULL},
    {"out", "OUT", "output directory (required; must not exist or be empty, unless --force)", NULL},
    {"seed", "S", "random seed, 0 to 2147483647 (default 0): the same seed gives the same bytes", NULL},
    {"threads", "T", "threads (0 = all cores, the default; never changes the output)", NULL},
    {"force", NULL, "replace OUT if it exists and is not empty (only once the new partition is complete)", NULL},
};

static const cli_command PARTITION_CMD = {
    .name = "partition",
    .usage = "cgnn partition --dataset DIR --num_parts P --method metis|random --out OUT [--seed S] [--threads T] "
             "[--force]",
    .summary = "Cuts a dataset into P parts and writes DGL's partition layout: OUT/<name>.json (node_map, edge_map,\n"
               "partition id, statistics), the id maps OUT/orig_ids.npy and OUT/new_ids.npy, one dataset per part\n"
               "(OUT/part<p>/: the in-edges, features and seeds of its nodes, in new ids) and the whole splits\n"
               "(OUT/global/). Node ids are renumbered so that every part owns a contiguous range (typed datasets:\n"
               "one range per node type, per-type ids and id maps per type, one edge file per edge type).",
    .flags = PARTITION_FLAGS,
    .num_flags = (int)(sizeof PARTITION_FLAGS / sizeof PARTITION_FLAGS[0]),
};

/* OUT must not be the dataset's directory nor hold any file of the dataset (--force would remove
 * it): compared through realpath, so symlinks and ../ are seen through. */
static int check_out_vs_inputs(const char *out, const dataset *ds, const outguard *g, cgnn_err *err) {
    char ro[PATH_MAX], ri[PATH_MAX];
    if (!realpath(out, ro)) return 0; /* does not exist yet: holds nothing */
    const size_t n = strlen(ro);
    if (realpath(ds->dir, ri) && strcmp(ri, ro) == 0)
        return err_set(err, CGNN_ERR_INPUT, "--out %s: is the dataset's directory (%s); refusing to write there", out,
                       ds->dir);
    for (int i = 0; i < g->num_inputs; i++) {
        if (!realpath(g->inputs[i], ri)) continue;
        if (strcmp(ri, ro) == 0 || (strncmp(ri, ro, n) == 0 && (ri[n] == '/' || (n == 1 && ro[0] == '/'))))
            return err_set(err, CGNN_ERR_INPUT, "--out %s: holds %s (%s); refusing to write there", out,
                           g->input_roles[i], g->inputs[i]);
    }
    return 0;
}

static int64_t peak_rss_bytes(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (int64_t)ru.ru_maxrss * 1024;
}

int cli_cmd_partition(int argc, char **argv) {
    cgnn_err err;
    err_clear(&err);
    const char *pos[1];
    int npos = 0, want_help = 0;
    if (cli_parse(&PARTITION_CMD, argc, argv, pos, 0, &npos, &want_help, &err) != 0) return cli_fail(&err);
    if (want_help) {
        cli_print_help(&PARTITION_CMD);
        return 0;
    }
    const double t0 = timer_now();
    const char *dsdir = cli_flag_str(&PARTITION_CMD, "dataset"), *out = cli_flag_str(&PARTITION_CMD, "out");
    const char *method = cli_flag_str(&PARTITION_CMD, "method");
    const char *missing = !dsdir || !*dsdir ? "--dataset DIR"
                          : !cli_flag_str(&PARTITION_CMD, "num_parts") ? "--num_parts P"
                          : !method || !*method ? "--method metis|random"
                          : !out || !*out ? "--out OUT"
                                          : NULL;
    if (missing) {
        err_set(&err, CGNN_ERR_INPUT, "partition: %s is required (see cgnn partition --help)", missing);
        return cli_fail(&err);
    }
    partition_params p = {0};
    int64_t parts = 0, seed = 0, threads = 0;
    int force = 0;
    if (cli_flag_int(&PARTITION_CMD, "num_parts", 1, PARTITION_MAX_PARTS, &parts, &err) != 0 ||
        cli_flag_int(&PARTITION_CMD, "seed", 0, PARTITION_MAX_SEED, &seed, &err) != 0 ||
        cli_flag_int(&PARTITION_CMD, "threads", 0, 4096, &threads, &err) != 0 ||
        cli_flag_bool(&PARTITION_CMD, "force", &force, &err) != 0)
        return cli_fail(&err);
    if (partition_method_parse(method, &p.method) != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--method: unknown method '%s' (expected metis or random)", method);
        return cli_fail(&err);
    }
    p.num_parts = (int)parts;
    p.seed = seed;
    p.num_threads = (int)threads;
    char outdir[4096];
    size_t olen = strlen(out);
    while (olen > 1 && out[olen - 1] == '/') olen--;
    if (olen >= sizeof outdir - 64) {
        err_set(&err, CGNN_ERR_INPUT, "--out: path too long");
        return cli_fail(&err);
    }
    snprintf(outdir, sizeof outdir, "%.*s", (int)olen, out);

    dataset ds;
    if (dataset_open(&ds, dsdir, &err) != 0) return cli_fail(&err);
    outguard guard;
    outguard_init(&guard);
    partition_result r;
    memset(&r, 0, sizeof r);
    partbook pb;
    memset(&pb, 0, sizeof pb);
    int rc = 0, exists = 0, staging_h = -1;
    char staging[4200] = "";
    if (ds.partition.present) {
        rc = err_set(&err, CGNN_ERR_INPUT,
                     "--dataset %s: is already a part of a partitioned graph (%s); partition the original dataset",
                     dsdir, ds.partition.graph);
        goto done;
    }
    int64_t total_edges = 0;
    for (int k = 0; k < ds.num_edge_types; k++) total_edges += ds.edge_types[k].edges.num_edges;
    if (p.num_parts > dataset_total_nodes(&ds)) {
        rc = err_set(&err, CGNN_ERR_INPUT, "--num_parts: %d parts for %lld nodes (a part needs at least one node)",
                     p.num_parts, (long long)dataset_total_nodes(&ds));
        goto done;
    }
    outguard_add_dataset(&guard, &ds);
    if ((rc = check_out_vs_inputs(outdir, &ds, &guard, &err)) != 0) goto done;
    if ((rc = outguard_check_tree(&guard, outdir, "--out", &err)) != 0) goto done;
    if ((rc = cli_out_dir_check("--out", outdir, force, &exists, &err)) != 0) goto done;
    outguard_activate(&guard);
    if ((rc = outguard_lock(&guard, outdir, "--out", "cgnn partition", &err)) != 0) goto done;
    outguard_remove_stale_tmp(&guard, outdir); /* a staging directory of a killed run */

    log_info("partition: %s (%lld nodes, %lld edges%s) into %d parts with %s, seed %lld", dsdir,
             (long long)dataset_total_nodes(&ds), (long long)total_edges,
             ds.typed ? ", typed: every node and edge type together" : "", p.num_parts,
             partition_method_name(p.method), (long long)p.seed);
    const int64_t rss_loaded = peak_rss_bytes();
    if ((rc = partition_compute(&r, &ds, &p, &err)) != 0) goto done;
    const int64_t rss_assigned = peak_rss_bytes();
    log_info("partition: assignment in %.2f s; peak RSS %.1f MiB (%.1f MiB with the dataset loaded)", r.seconds_assign,
             (double)rss_assigned / 1048576.0, (double)rss_loaded / 1048576.0);
    const double t_write = timer_now();
    snprintf(staging, sizeof staging, "%s.tmp.%ld", outdir, (long)getpid());
    staging_h = cleanup_add(staging, 1);
    if ((rc = partition_write(staging, &ds, &r, p.num_threads, &err)) != 0) goto done;
    const double t_end = timer_now();
    partition_run_info run = {dsdir,           p.num_threads > 0 ? p.num_threads : 0,
                              t_end - t0,      r.seconds_assign,
                              t_end - t_write, peak_rss_bytes(),
                              rss_loaded,      rss_assigned};
    if (run.threads == 0) run.threads = omp_get_max_threads();
    if ((rc = partition_write_run(staging, &run, &err)) != 0) goto done;
    if ((rc = cli_out_dir_replace(outdir, staging, exists, &err)) != 0) goto done;
    cleanup_forget(staging_h);
    staging_h = -1;
    staging[0] = '\0';
    /* read back what was written: the summary comes from the files themselves */
    if ((rc = partbook_read_json(&pb, outdir, &err)) != 0) goto done;
    cli_print_partbook(&pb);

done:
    if (staging[0]) cleanup_remove_tree(staging);
    cleanup_forget(staging_h);
    partbook_close(&pb);
    partition_free(&r);
    outguard_free(&guard);
    dataset_close(&ds);
    return rc ? cli_fail(&err) : 0;
}
