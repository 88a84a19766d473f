/* cli_train.c — `cgnn train --job_name=NAME --task_config_uri=task.yaml [--resource_config_uri=r.yaml]`. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "train/config.h"
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
    if (quiet) log_level = 0;
    task_config *tc = cgnn_calloc(1, sizeof *tc);
    resource_config rc;
    if (config_load_task(tc, task_uri, &err) != 0 ||
        config_load_resource(&rc, cli_flag_str(&TRAIN_CMD, "resource_config_uri"), &err) != 0) {
        free(tc);
        return cli_fail(&err);
    }
    const char *job = cli_flag_str(&TRAIN_CMD, "job_name");
    trainer_options opt = {job ? job : "cgnn", !quiet};
    trainer_result res;
    if (job) log_info("job %s", job);
    if (trainer_run(tc, &rc, &opt, &res, &err) != 0) {
        free(tc);
        return cli_fail(&err);
    }
    if (res.has_val)
        printf("best validation: loss %.4f acc %.4f\n", res.best_val_loss, res.best_val_acc);
    if (res.has_test) printf("test: loss %.4f acc %.4f\n", res.test_loss, res.test_acc);
    if (!tc->should_skip_training)
        printf("trained %lld steps in %.2f s%s; model: %s\n", (long long)res.steps, res.train_seconds,
               res.stopped_early ? " (early stopped)" : "", tc->trained_model_uri);
    free(tc);
    return 0;
}
