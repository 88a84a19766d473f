/* cli_train.c — `cgnn train --job_name=NAME --task_config_uri=task.yaml [--resource_config_uri=r.yaml]`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "dist/dist.h"
#include "graph/partbook.h"
#include "nn/blas.h"
#include "dist/dist_rpc.h"
#include "train/config.h"
#include "train/gigl_import.h"
#include "train/graph_store.h"
#include "train/trainer.h"
#include "util/log.h"

static cli_flag TRAIN_FLAGS[] = {
    {"job_name", "NAME", "name of the job (GiGL flag; used in logs)", NULL},
    {"task_config_uri", "URI", "GiGL task config YAML (path or file://) — required", NULL},
    {"resource_config_uri", "URI", "GiGL resource config YAML (optional)", NULL},
    {"quiet", NULL, "no progress output (errors only)", NULL},
};
static const cli_command TRAIN_CMD = {
    "train", "cgnn train --job_name=NAME --task_config_uri=task.yaml [--resource_config_uri=resource.yaml]",
    "Trains a GNN as GiGL's Trainer does: samples mini-batches from the dataset, trains, validates,\n"
    "early-stops, restores the best weights, tests, and writes the model (safetensors), the eval\n"
    "metrics (GiGL JSON) and metrics.jsonl. See docs/CONFIG.md for every config key.",
    TRAIN_FLAGS, sizeof TRAIN_FLAGS / sizeof TRAIN_FLAGS[0]};

/* Rank 0: the results on stdout. */
static void print_result(const task_config *tc, const trainer_result *res) {
    const char *main_metric = tc->task == TASK_LINK_PREDICTION ? "mrr" : "acc";
    if (res->has_val)
        printf("best validation: loss %.4f %s %.4f\n", res->best_val_loss, main_metric, res->best_val_acc);
    if (res->has_test) {
        printf("test:");
        for (int i = 0; i < res->num_test_metrics; i++) printf(" %s %.4f", res->test_metric_names[i], res->test_metrics[i]);
        printf("\n");
    }
    if (!tc->should_skip_training)
        printf("trained %lld step%s in %.2f s%s; model: %s\n", (long long)res->steps, res->steps == 1 ? "" : "s",
               res->train_seconds, res->stopped_early ? " (early stopped)" : "", tc->trained_model_uri);
}

/* Prints err on rank 0 (which holds every failed rank's message) and returns the exit status. */
static int train_fail(const dist_ctx *d, const cgnn_err *err) {
    int code = err->code ? err->code : CGNN_ERR_RUNTIME;
    if (d->rank == 0) cli_fail(err);
    return code;
}

int cli_cmd_train(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&TRAIN_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&TRAIN_CMD);
        return 0;
    }
    const char *task_uri = cli_flag_str(&TRAIN_CMD, "task_config_uri");
    if (!task_uri) {
        err_set(&err, CGNN_ERR_INPUT, "train: --task_config_uri is required (see cgnn train --help)");
        return cli_fail(&err);
    }
    int quiet = 0;
    if (cli_flag_bool(&TRAIN_CMD, "quiet", &quiet, &err) != 0) return cli_fail(&err);
    task_config *tc = cgnn_calloc(1, sizeof *tc);
    resource_config rc;
    int bad = config_load_task(tc, task_uri, &err) != 0 ||
              config_load_resource(&rc, cli_flag_str(&TRAIN_CMD, "resource_config_uri"), &err) != 0;
    if (!bad && tc->run_command) { /* the user's training command on this rank, in cgnn's place */
        cli_launch_command(tc, cli_flag_str(&TRAIN_CMD, "job_name"), task_uri,
                           cli_flag_str(&TRAIN_CMD, "resource_config_uri"), &err);
        free(tc);
        return cli_fail(&err);
    }
    /* under mpirun: the world; otherwise a world of one. A partitioned graph's ranks answer each
     * other's requests from a service thread: MPI_THREAD_MULTIPLE */
    dist_ctx d;
    /* server-client mode (the resource config's vertex_ai_graph_store_trainer_config): storage and
     * compute ranks in one job, remote calls between all of them */
    const int graph_store = !bad && rc.graph_store;
    const int parted = !bad && (partbook_is_partition(tc->dataset_path) || graph_store);
    cgnn_err ierr = {0};
    if (dist_init_threads(&d, NULL, NULL, parted, &ierr) != 0 && !bad) {
        bad = 1;
        err = ierr;
        err_prefix(&err, "%s: training on a partitioned graph: ", tc->dataset_path);
    }
    if (quiet || d.rank != 0) log_level = 0; /* rank 0 speaks for the job */
    /* GiGL's preprocessed output: converted once into cgnn's cache, trained from there (under
     * mpirun every rank resolves it: the first rename wins, the others use that entry; a failure
     * is combined below like any other) */
    if (!bad && gigl_import_resolve(tc, &err) != 0) bad = 1;
    char report[sizeof err.msg];
    int code = 0;
    if (dist_check_errors(&d, bad, err.code, err.msg, report, sizeof report, &code) > 0) {
        if (d.size > 1) err_set(&err, code ? code : CGNN_ERR_INPUT, "%s", report);
        int status = train_fail(&d, &err);
        free(tc);
        dist_finalize(&d);
        return status;
    }
    const char *job = cli_flag_str(&TRAIN_CMD, "job_name");
    trainer_options opt = {.job_name = job ? job : "cgnn", .progress = !quiet, .dist = &d};
    trainer_result res;
    memset(&res, 0, sizeof res);
    if (job) log_info("job %s", job);
    char blas_line[400];
    if (blas_leaves_width_unused()) log_warn("BLAS: %s", blas_describe(blas_line, sizeof blas_line));
    else log_info("BLAS: %s", blas_describe(blas_line, sizeof blas_line));
    for (int i = 0; i < tc->notes.n; i++) log_info("%s: %s", tc->file, tc->notes.line[i]); /* config.h */
    if (rc.cloud_ignored[0])
        log_info("%s: trainer_resource_config.%s ignored: GiGL's cloud trainer; cgnn trains here, on this machine's "
                 "cores (mpirun for more processes)", rc.file, rc.cloud_ignored);
    int status = 0;
    if (!graph_store && !bad && tc->has_storage_config)
        log_info("%s: trainerConfig.graphStoreStorageConfig ignored: the resource config has no "
                 "vertex_ai_graph_store_trainer_config, so every rank trains (worker mode on a partitioned graph)",
                 tc->file);
    if (graph_store) { /* roles, one group per pool, the rpc layer on the whole world */
        graph_store_layout lay;
        const int lbad = graph_store_layout_of(&rc, d.size, d.rank, &lay, &err) != 0; /* the same on every rank */
        dist_ctx group;
        dist_rpc *rpc = NULL;
        if (lbad) {
            status = train_fail(&d, &err);
        } else {
            dist_split(&d, lay.storage, &group);
            if (dist_phase_failed(&d, dist_rpc_create(&rpc, &d, &err) != 0, &err))
                status = err.code ? err.code : CGNN_ERR_RUNTIME;
            else status = graph_store_run(tc, &rc, &d, &group, rpc, &lay, &opt, &res, &err);
            if (status != 0 && d.rank == 0) cli_fail(&err);
            dist_rpc_free(rpc);
            dist_split_free(&group);
        }
        if (status == 0 && d.rank == 0) print_result(tc, &res);
        free(tc);
        dist_finalize(&d);
        return status;
    }
    if (trainer_run(tc, &rc, &opt, &res, &err) != 0) {
        status = train_fail(&d, &err);
    } else if (d.rank == 0) {
        print_result(tc, &res);
    }
    free(tc);
    dist_finalize(&d);
    return status;
}
