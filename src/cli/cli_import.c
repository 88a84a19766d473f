/* cli_import.c — `cgnn import FORMAT`: a user's data as it is into a GraphBolt on-disk dataset.
 *
 *   cgnn import csv --edges E.csv [--node_features F.csv|.npy] [--labels L.csv|.npy] --out DIR
 *       (graph/import_csv.h)
 *   cgnn import gigl --task_config_uri CONFIG --out DIR
 *       GiGL's preprocessed output (the preprocessed_metadata.yaml that the config's
 *       sharedConfig.preprocessedMetadataUri names, and its TFRecords; train/gigl_import.h).
 *       `cgnn train` does the same by itself into cgnn's cache folder; this writes it where the
 *       user says, to keep, inspect or partition.
 *
 * The dataset is written into a staging directory beside DIR and renamed into place at the end
 * (cli_out_dir_write), as `cgnn generate` does: a failed or interrupted import leaves nothing, an
 * existing non-empty DIR is replaced only with --force, and the inputs are never written.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/import_csv.h"
#include "io/outguard.h"
#include "train/config.h"
#include "train/gigl_import.h"
#include "util/log.h"
#include "util/timer.h"

static cli_flag IMPORT_CSV_FLAGS[] = {
    {"edges", "FILE", "edge list: \"src,dst\" per line, node ids from 0 (a header line is skipped; required)", NULL},
    {"node_features", "FILE", "node features: one row of numbers per node (.csv), or an (N, F) .npy", NULL},
    {"labels", "FILE", "node classes: one per line (row i = node i) or \"node,label\" (.csv), or an (N,) .npy; "
                       "negative = unlabelled. Writes a node_classification task", NULL},
    {"undirected", NULL, "add every edge's reverse (and drop duplicates): for edge lists written one way", NULL},
    {"link_prediction", NULL, "write a link_prediction task: validation / test edges held out of the graph", NULL},
    {"num_nodes", "N", "node count (default: the feature rows, else the label rows, else the largest id + 1)", NULL},
    {"val_frac", "F", "validation share of the labelled nodes and of the edges (default 0.2)", NULL},
    {"test_frac", "F", "test share (default 0.2)", NULL},
    {"seed", "S", "seed of the splits (default 0)", NULL},
    {"name", "NAME", "dataset_name (default: imported)", NULL},
    {"out", "DIR", "the dataset's directory (required)", NULL},
    {"force", NULL, "replace DIR if it exists and is not empty", NULL},
};

static const cli_command IMPORT_CSV_CMD = {
    .name = "import csv",
    .usage = "cgnn import csv --edges FILE [--node_features FILE] [--labels FILE] [--undirected] --out DIR",
    .summary = "Writes a GraphBolt on-disk dataset from CSV files (or .npy arrays): the edges, node features\n"
               "and labels, with train / validation / test splits. docs/BRING_YOUR_OWN_DATA.md walks\n"
               "through it.",
    .flags = IMPORT_CSV_FLAGS,
    .num_flags = (int)(sizeof IMPORT_CSV_FLAGS / sizeof IMPORT_CSV_FLAGS[0]),
};

static int import_csv_params_from_flags(import_csv_params *p, cgnn_err *err) {
    import_csv_default_params(p);
    p->edges = cli_flag_str(&IMPORT_CSV_CMD, "edges");
    p->node_features = cli_flag_str(&IMPORT_CSV_CMD, "node_features");
    p->labels = cli_flag_str(&IMPORT_CSV_CMD, "labels");
    if (!p->edges || !*p->edges) return err_set(err, CGNN_ERR_INPUT, "import csv: --edges FILE is required");
    int64_t v = 0;
    if (cli_flag_int(&IMPORT_CSV_CMD, "num_nodes", 1, (int64_t)1 << 40, &v, err) != 0) return -1;
    p->num_nodes = v;
    v = 0;
    if (cli_flag_int(&IMPORT_CSV_CMD, "seed", 0, INT64_MAX, &v, err) != 0) return -1;
    p->seed = (uint64_t)v;
    if (cli_flag_bool(&IMPORT_CSV_CMD, "undirected", &p->undirected, err) != 0) return -1;
    if (cli_flag_bool(&IMPORT_CSV_CMD, "link_prediction", &p->link_prediction, err) != 0) return -1;
    if (cli_flag_double(&IMPORT_CSV_CMD, "val_frac", &p->val_frac, err) != 0) return -1;
    if (cli_flag_double(&IMPORT_CSV_CMD, "test_frac", &p->test_frac, err) != 0) return -1;
    const char *name = cli_flag_str(&IMPORT_CSV_CMD, "name");
    if (name) {
        if (!*name || strpbrk(name, "\"\\\n\r:#"))
            return err_set(err, CGNN_ERR_INPUT, "--name '%s': a non-empty name without quotes, backslashes, ':' or '#'",
                           name);
        p->name = name;
    }
    if (!p->labels && !p->link_prediction)
        log_warn("import csv: neither --labels nor --link_prediction: the dataset has no task to train (cgnn info "
                 "reads it)");
    return 0;
}

typedef struct import_csv_job {
    const import_csv_params *p;
    import_csv_stats st;
} import_csv_job;

static int import_csv_write(const char *staging, void *ctx, cgnn_err *err) {
    import_csv_job *j = ctx;
    return import_csv(staging, j->p, &j->st, err);
}

static void import_csv_inputs(outguard *g, void *ctx) {
    const import_csv_params *p = ((import_csv_job *)ctx)->p;
    outguard_add_input(g, p->edges, "--edges");
    if (p->node_features) outguard_add_input(g, p->node_features, "--node_features");
    if (p->labels) outguard_add_input(g, p->labels, "--labels");
}

static int import_csv_cmd(int argc, char **argv) {
    cgnn_err err;
    err_clear(&err);
    const char *pos[1];
    int npos = 0, want_help = 0;
    if (cli_parse(&IMPORT_CSV_CMD, argc, argv, pos, 0, &npos, &want_help, &err) != 0) return cli_fail(&err);
    if (want_help) {
        cli_print_help(&IMPORT_CSV_CMD);
        return 0;
    }
    import_csv_params p;
    if (import_csv_params_from_flags(&p, &err) != 0) return cli_fail(&err);
    const char *out = cli_flag_str(&IMPORT_CSV_CMD, "out");
    if (!out || !*out) {
        err_set(&err, CGNN_ERR_INPUT, "import csv: --out DIR is required (see cgnn import csv --help)");
        return cli_fail(&err);
    }
    int force = 0;
    if (cli_flag_bool(&IMPORT_CSV_CMD, "force", &force, &err) != 0) return cli_fail(&err);
    const double t0 = timer_now();
    import_csv_job job = {&p, {0}};
    char outdir[4096];
    if (cli_out_dir_write(out, "cgnn import csv", force, import_csv_inputs, import_csv_write, &job, outdir, &err) != 0)
        return cli_fail(&err);
    const import_csv_stats st = job.st;
    log_info("import csv: wrote %s in %.2f s: %lld nodes, %lld edges (%lld in %s%s), %s", outdir, timer_now() - t0,
             (long long)st.num_nodes, (long long)st.num_edges, (long long)st.input_edges, p.edges,
             p.undirected ? ", with their reverses" : "",
             st.feat_dim ? "features" : "no features (train with trainerArgs.node_embedding_dim)");
    if (st.feat_dim) log_info("import csv: node feature 'feat': %lld values per node", (long long)st.feat_dim);
    if (p.labels)
        log_info("import csv: node_classification: %lld classes, %lld labelled nodes: %lld train / %lld validation / "
                 "%lld test",
                 (long long)st.num_classes, (long long)st.num_labelled, (long long)st.nc_split[0],
                 (long long)st.nc_split[1], (long long)st.nc_split[2]);
    if (p.link_prediction)
        log_info("import csv: link_prediction: %lld train / %lld validation / %lld test pairs (held out of the graph)",
                 (long long)st.lp_split[0], (long long)st.lp_split[1], (long long)st.lp_split[2]);
    if (!p.undirected && st.input_edges > 0 && st.reverse_fraction < 0.05)
        log_warn("%s: %.1f%% of the edges have their reverse edge: messages only follow edge direction (src -> dst). "
                 "For an undirected graph listed one way (a citation list), import with --undirected",
                 p.edges, 100.0 * st.reverse_fraction);
    printf("dataset: %s (train it: sharedConfig.preprocessedMetadataUri: %s)\n", outdir, outdir);
    return 0;
}

/* ---- cgnn import gigl ------------------------------------------------------------------ */

static cli_flag IMPORT_GIGL_FLAGS[] = {
    {"task_config_uri", "URI", "GiGL task config YAML (path or file://): its sharedConfig.preprocessedMetadataUri "
                               "names the preprocessed_metadata.yaml; its graphMetadata the types, its taskMetadata "
                               "the task, its trainerArgs num_val / num_test the split — required", NULL},
    {"out", "DIR", "output directory (created; required)", NULL},
    {"force", NULL, "replace DIR if it exists and is not empty (by default that is an error)", NULL},
};

static const cli_command IMPORT_GIGL_CMD = {
    .name = "import gigl",
    .usage = "cgnn import gigl --task_config_uri CONFIG --out DIR [--force]",
    .summary = "Converts GiGL's preprocessed output (preprocessed_metadata.yaml + TFRecords of tf.Examples) into\n"
               "a GraphBolt on-disk dataset (docs/DATASETS.md, \"GiGL's preprocessed output\").",
    .flags = IMPORT_GIGL_FLAGS,
    .num_flags = (int)(sizeof IMPORT_GIGL_FLAGS / sizeof IMPORT_GIGL_FLAGS[0]),
};

typedef struct import_gigl_job {
    gigl_src *s;
    gigl_stats st;
} import_gigl_job;

static int import_gigl_write(const char *staging, void *ctx, cgnn_err *err) {
    import_gigl_job *j = ctx;
    return gigl_src_convert(j->s, staging, &j->st, err);
}

/* the YAML, the config and every TFRecord */
static void import_gigl_inputs(outguard *g, void *ctx) { gigl_src_add_inputs(((import_gigl_job *)ctx)->s, g); }

static int import_gigl_cmd(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos = 0, help = 0;
    if (cli_parse(&IMPORT_GIGL_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&IMPORT_GIGL_CMD);
        return 0;
    }
    const char *task_uri = cli_flag_str(&IMPORT_GIGL_CMD, "task_config_uri"), *out = cli_flag_str(&IMPORT_GIGL_CMD, "out");
    if (!task_uri || !out || !out[0]) {
        err_set(&err, CGNN_ERR_INPUT, "import gigl: --%s is required (see cgnn import gigl --help)",
                !task_uri ? "task_config_uri" : "out");
        return cli_fail(&err);
    }
    int force = 0;
    if (cli_flag_bool(&IMPORT_GIGL_CMD, "force", &force, &err) != 0) return cli_fail(&err);
    task_config *tc = cgnn_calloc(1, sizeof *tc);
    if (config_load_task_data(tc, task_uri, &err) != 0) {
        free(tc);
        return cli_fail(&err);
    }
    char yaml[4096];
    if (!gigl_is_preprocessed_metadata(tc->dataset_path, yaml, sizeof yaml)) {
        err_set(&err, CGNN_ERR_INPUT,
                "%s: sharedConfig.preprocessedMetadataUri '%s' is not GiGL's preprocessed metadata (a YAML with "
                "condensedNodeTypeToPreprocessedMetadata)",
                tc->file, tc->dataset_path);
        free(tc);
        return cli_fail(&err);
    }
    import_gigl_job job = {NULL, {0}};
    const double t0 = timer_now();
    char outdir[4096];
    const int rc = gigl_src_open(&job.s, tc, yaml, &err) != 0 ||
                   cli_out_dir_write(out, "cgnn import gigl", force, import_gigl_inputs, import_gigl_write, &job,
                                     outdir, &err) != 0;
    gigl_src_free(job.s);
    free(tc);
    if (rc) return cli_fail(&err);
    const gigl_stats *st = &job.st;
    log_info("import gigl: wrote %s (%s): %lld nodes in %d node type%s, %lld edges in %d edge type%s, %lld records "
             "from %d TFRecord files, split %lld / %lld / %lld, in %.2f s",
             outdir, st->typed ? "typed" : "untyped", (long long)st->num_nodes, st->num_node_types,
             st->num_node_types == 1 ? "" : "s", (long long)st->num_edges, st->num_edge_types,
             st->num_edge_types == 1 ? "" : "s", (long long)st->num_records, st->num_files, (long long)st->split_items[0],
             (long long)st->split_items[1], (long long)st->split_items[2], timer_now() - t0);
    return 0;
}

/* argv: what follows `cgnn import` (the format first). */
int cli_cmd_import(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "csv") == 0) return import_csv_cmd(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "gigl") == 0) return import_gigl_cmd(argc - 1, argv + 1);
    cgnn_err err;
    err_clear(&err);
    if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
        printf("usage: %s\n       %s\n\n%s\n\n%s\n", IMPORT_CSV_CMD.usage, IMPORT_GIGL_CMD.usage, IMPORT_CSV_CMD.summary,
               IMPORT_GIGL_CMD.summary);
        return 0;
    }
    err_set(&err, CGNN_ERR_INPUT, "import: expected a format: csv or gigl (cgnn import csv --help, cgnn import gigl "
                                  "--help), got %s",
            argc >= 1 ? argv[0] : "nothing");
    return cli_fail(&err);
}
