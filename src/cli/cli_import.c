/* cli_import.c — `cgnn import gigl`: GiGL's preprocessed output (the preprocessed_metadata.yaml
 * that a task config's sharedConfig.preprocessedMetadataUri names, and its TFRecords) written
 * once as a GraphBolt on-disk dataset (train/gigl_import.h). `cgnn train` does the same by itself
 * into cgnn's cache folder; this command writes it where the user says, to keep, inspect, or
 * partition. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/outguard.h"
#include "train/config.h"
#include "train/gigl_import.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/timer.h"

static cli_flag IMPORT_FLAGS[] = {
    {"task_config_uri", "URI", "GiGL task config YAML (path or file://): its sharedConfig.preprocessedMetadataUri "
                               "names the preprocessed_metadata.yaml; its graphMetadata the types, its taskMetadata "
                               "the task, its trainerArgs num_val / num_test the split — required", NULL},
    {"out", "DIR", "output directory (created; required)", NULL},
    {"force", NULL, "replace DIR if it exists and is not empty (by default that is an error)", NULL},
};

static const cli_command IMPORT_CMD = {
    .name = "import",
    .usage = "cgnn import gigl --task_config_uri CONFIG --out DIR [--force]",
    .summary = "Converts GiGL's preprocessed output (preprocessed_metadata.yaml + TFRecords of tf.Examples) into\n"
               "a GraphBolt on-disk dataset (docs/DATASETS.md, \"GiGL's preprocessed output\").",
    .flags = IMPORT_FLAGS,
    .num_flags = (int)(sizeof IMPORT_FLAGS / sizeof IMPORT_FLAGS[0]),
};

int cli_cmd_import(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[2];
    int npos = 0, help = 0;
    if (cli_parse(&IMPORT_CMD, argc, argv, pos, 2, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&IMPORT_CMD);
        return 0;
    }
    if (npos != 1 || strcmp(pos[0], "gigl") != 0) {
        err_set(&err, CGNN_ERR_INPUT, "import: expected the source format 'gigl' (cgnn import gigl --task_config_uri "
                                      "CONFIG --out DIR), got %s%s%s",
                npos ? "'" : "", npos ? pos[0] : "nothing", npos ? "'" : "");
        return cli_fail(&err);
    }
    const char *task_uri = cli_flag_str(&IMPORT_CMD, "task_config_uri"), *out = cli_flag_str(&IMPORT_CMD, "out");
    if (!task_uri || !out || !out[0]) {
        err_set(&err, CGNN_ERR_INPUT, "import gigl: --%s is required (see cgnn import --help)",
                !task_uri ? "task_config_uri" : "out");
        return cli_fail(&err);
    }
    int force = 0;
    if (cli_flag_bool(&IMPORT_CMD, "force", &force, &err) != 0) return cli_fail(&err);
    task_config *tc = cgnn_calloc(1, sizeof *tc);
    if (config_load_task(tc, task_uri, &err) != 0) {
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
    char outdir[4096];
    size_t olen = strlen(out);
    while (olen > 1 && out[olen - 1] == '/') olen--;
    if (olen >= sizeof outdir - 32) {
        err_set(&err, CGNN_ERR_INPUT, "--out: path too long");
        free(tc);
        return cli_fail(&err);
    }
    snprintf(outdir, sizeof outdir, "%.*s", (int)olen, out);
    gigl_src *s = NULL;
    int exists = 0;
    if (gigl_src_open(&s, tc, yaml, &err) != 0 || cli_out_dir_check("--out", outdir, force, &exists, &err) != 0) {
        gigl_src_free(s);
        free(tc);
        return cli_fail(&err);
    }
    outguard guard; /* the YAML, the config and every TFRecord are inputs; the tree the one output */
    outguard_init(&guard);
    gigl_src_add_inputs(s, &guard);
    if (outguard_check_tree(&guard, outdir, "--out", &err) != 0 ||
        outguard_lock(&guard, outdir, "--out", "cgnn import gigl", &err) != 0) {
        outguard_free(&guard);
        gigl_src_free(s);
        free(tc);
        return cli_fail(&err);
    }
    outguard_activate(&guard);
    outguard_remove_stale_tmp(&guard, outdir);
    const double t0 = timer_now();
    char staging[4200];
    snprintf(staging, sizeof staging, "%s.tmp.%ld", outdir, (long)getpid());
    cleanup_remove_tree(staging);
    const int h = cleanup_add(staging, 1);
    gigl_stats st;
    int rc = gigl_src_convert(s, staging, &st, &err) != 0 || cli_out_dir_replace(outdir, staging, exists, &err) != 0;
    cleanup_remove_tree(staging);
    cleanup_forget(h);
    outguard_free(&guard);
    gigl_src_free(s);
    free(tc);
    if (rc) return cli_fail(&err);
    log_info("import gigl: wrote %s (%s): %lld nodes in %d node type%s, %lld edges in %d edge type%s, %lld records "
             "from %d TFRecord files, split %lld / %lld / %lld, in %.2f s",
             outdir, st.typed ? "typed" : "untyped", (long long)st.num_nodes, st.num_node_types,
             st.num_node_types == 1 ? "" : "s", (long long)st.num_edges, st.num_edge_types,
             st.num_edge_types == 1 ? "" : "s", (long long)st.num_records, st.num_files, (long long)st.split_items[0],
             (long long)st.split_items[1], (long long)st.split_items[2], timer_now() - t0);
    return 0;
}
