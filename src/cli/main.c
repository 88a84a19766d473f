/* main.c — the `cgnn` entry point: dispatches to the subcommands in src/cli/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dist/dist.h"
#include "io/outguard.h"
#include "nn/blas.h"
#include "util/cleanup.h"
#include "util/err.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int writes; /* it writes files: every write needs its guard (io/outguard.h) */
} COMMANDS[] = {
    {"train", cli_cmd_train, "train a GNN from a GiGL task config (node classification, link prediction)", 1},
    {"info", cli_cmd_info, "describe a dataset: nodes, edges, degrees, features, tasks, splits", 0},
    {"generate", cli_cmd_generate, "write a synthetic graph dataset (GraphBolt on-disk format)", 1},
    {"import", cli_cmd_import, "a user's data into a dataset: `cgnn import csv` (edges, features, labels), `cgnn import gigl` (GiGL's TFRecords)", 1},
    {"partition", cli_cmd_partition, "cut a dataset into parts (METIS or random) in DGL's partition layout", 1},
    {"rank", cli_cmd_rank, "full-ranking link-prediction metrics (Recall@K, NDCG@K) of node embeddings", 1},
    {"embed", cli_cmd_embed, "embed every node with a trained model (layer-wise full-neighbourhood inference)", 1},
    {"bench", cli_cmd_bench, "benchmarks: `cgnn bench sample` (sampling + gathering), `cgnn bench train` (training step)", 0},
};

static void print_usage(FILE *out) {
    fprintf(out,
            "usage: cgnn COMMAND [options]\n"
            "       cgnn --version | --help | COMMAND --help\n\n"
            "cgnn trains graph neural networks (GiGL Trainer semantics, GraphBolt datasets).\n\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "\nexit status: 0 success, 1 runtime failure, 2 usage/config/data error\n");
}

/* Settings that libraries read once, when they are loaded; cgnn sets them and re-executes itself
 * (before anything else has started: same pid, same arguments; under mpirun before MPI_Init),
 * at most twice:
 *  - OpenMP threads that wait at a barrier spin by default. cgnn runs sampler threads beside the
 *    compute threads on the same cores, and spinning compute threads take their CPU: measured on
 *    2 cores, link prediction on Facebook ran 4x faster and the products-scale step ~10% faster
 *    with OMP_WAIT_POLICY=passive, which cgnn sets when the user has not chosen a policy;
 *  - OpenBLAS's kernel set, when its own detection falls back to narrower vectors than the CPU
 *    has (nn/blas.h); the re-executed process checks the chosen kernels against the float64
 *    reference and goes back to OpenBLAS's choice (a second re-execution) if they fail.
 * An exec that fails (no /proc) keeps the settings the process started with. */
static void exec_with_library_settings(char **argv) {
    int changed = 0;
    if (!getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        changed = 1;
    }
    if (blas_choose_for_exec()) changed = 1;
    if (changed) execv("/proc/self/exe", argv);
    if (blas_check_choice()) execv("/proc/self/exe", argv);
}

int main(int argc, char **argv) {
    exec_with_library_settings(argv);
    cleanup_start(); /* before any thread: SIGINT/SIGTERM/SIGHUP remove partial outputs */
    if (argc < 2) {
        print_usage(stderr);
        return CGNN_ERR_INPUT;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("cgnn %s (distributed: %s)\n", CGNN_VERSION, dist_backend());
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(cmd, COMMANDS[i].name) == 0) {
            if (COMMANDS[i].writes) outguard_require(); /* every write goes through the job's guard */
            return COMMANDS[i].run(argc - 2, argv + 2);
        }
    fprintf(stderr, "cgnn: error: unknown command '%s'\n\n", cmd);
    print_usage(stderr);
    return CGNN_ERR_INPUT;
}
