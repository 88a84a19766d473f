/* main.c — the `cgnn` entry point: dispatches to the subcommands in src/cli/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dist/dist.h"
#include "io/outguard.h"
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

/* OpenMP threads that wait at a barrier spin by default. cgnn runs sampler threads beside the
 * compute threads on the same cores, and spinning compute threads take their CPU: measured on
 * 2 cores, link prediction on Facebook ran 4x faster and the products-scale step ~10% faster
 * with OMP_WAIT_POLICY=passive. libgomp reads the variable once, when it is loaded, so when
 * the user has not chosen a policy cgnn sets it and re-executes itself (before anything else
 * has started: same pid, same arguments; under mpirun before MPI_Init). */
static void default_passive_openmp(char **argv) {
    if (getenv("OMP_WAIT_POLICY")) return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
    /* exec failed (no /proc): keep running with libgomp's default policy */
}

int main(int argc, char **argv) {
    default_passive_openmp(argv);
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
