/* cli_bench.c — `cgnn bench sample ...`. */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cli.h"

static cli_flag SAMPLE_FLAGS[] = {
    {"dataset", "DIR", "dataset directory (required; e.g. from cgnn generate --preset products)", NULL},
    {"fanouts", "LIST", "fanouts per layer, seed side first (default 15,10,5)", NULL},
    {"batch", "N", "seeds per batch (default 1024)", NULL},
    {"threads", "N", "threads to scale to (default: all cores)", NULL},
    {"batches", "N", "batches per repeat (default 40)", NULL},
    {"reps", "N", "repeats; medians are reported (default 5)", NULL},
    {"replace", NULL, "sample with replacement", NULL},
    {"seed", "S", "random seed (default 0)", NULL},
};
static const cli_command SAMPLE_CMD = {
    "bench sample", "cgnn bench sample --dataset DIR [options]",
    "Measures neighbour sampling (edges/s per core, seeds/s, 1 -> N thread scaling), feature\n"
    "gathering (GB/s next to memcpy bandwidth measured in the same run) and the loader pipeline.",
    SAMPLE_FLAGS, sizeof SAMPLE_FLAGS / sizeof SAMPLE_FLAGS[0]};

static int bench_sample_main(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&SAMPLE_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&SAMPLE_CMD);
        return 0;
    }
    bench_sample_opts o;
    memset(&o, 0, sizeof o);
    o.dataset = cli_flag_str(&SAMPLE_CMD, "dataset");
    o.num_layers = 3;
    o.fanouts[0] = 15;
    o.fanouts[1] = 10;
    o.fanouts[2] = 5;
    o.batch_size = 1024;
    o.batches = 40;
    o.reps = 5;
    int64_t v;
    if (!o.dataset) {
        err_set(&err, CGNN_ERR_INPUT, "bench sample: --dataset DIR is required");
        return cli_fail(&err);
    }
    const char *fo = cli_flag_str(&SAMPLE_CMD, "fanouts");
    if (fo && cli_parse_int_list(fo, o.fanouts, 8, &o.num_layers) != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--fanouts: expected a list like 15,10,5, got '%s'", fo);
        return cli_fail(&err);
    }
    v = o.batch_size;
    if (cli_flag_int(&SAMPLE_CMD, "batch", &v, &err) != 0) return cli_fail(&err);
    o.batch_size = v;
    v = 0;
    if (cli_flag_int(&SAMPLE_CMD, "threads", &v, &err) != 0) return cli_fail(&err);
    o.threads = (int)v;
    v = o.batches;
    if (cli_flag_int(&SAMPLE_CMD, "batches", &v, &err) != 0) return cli_fail(&err);
    o.batches = (int)v;
    v = o.reps;
    if (cli_flag_int(&SAMPLE_CMD, "reps", &v, &err) != 0) return cli_fail(&err);
    o.reps = (int)v;
    v = 0;
    if (cli_flag_int(&SAMPLE_CMD, "seed", &v, &err) != 0) return cli_fail(&err);
    o.seed = (uint64_t)v;
    if (cli_flag_bool(&SAMPLE_CMD, "replace", &o.replace, &err) != 0) return cli_fail(&err);
    if (o.batch_size < 1 || o.batches < 1 || o.reps < 1 || o.threads < 0) {
        err_set(&err, CGNN_ERR_INPUT, "bench sample: --batch, --batches and --reps must be >= 1");
        return cli_fail(&err);
    }
    if (bench_sample_run(&o, stdout, &err) != 0) return cli_fail(&err);
    return 0;
}

int cli_cmd_bench(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "sample") == 0) return bench_sample_main(argc - 1, argv + 1);
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("usage: cgnn bench sample --dataset DIR [options]\n\nbenchmarks:\n"
               "  sample   neighbour sampling + feature gathering throughput\n");
        return 0;
    }
    fprintf(stderr, "cgnn: error: bench: expected a benchmark name: sample (see cgnn bench --help)\n");
    return CGNN_ERR_INPUT;
}
