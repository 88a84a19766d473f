/* cli_bench.c — `cgnn bench sample ...`, `cgnn bench train ...`, `cgnn bench lightgcn ...` and
 * `cgnn bench cache ...`. */
#include <stdint.h>
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
    {"weights", "NAME", "also time weighted sampling, weights from edge feature NAME (per sampled edge against uniform)", NULL},
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
    if (cli_flag_int(&SAMPLE_CMD, "batch", 1, 1 << 24, &v, &err) != 0) return cli_fail(&err);
    o.batch_size = v;
    v = 0;
    if (cli_flag_int(&SAMPLE_CMD, "threads", 0, 4096, &v, &err) != 0) return cli_fail(&err);
    o.threads = (int)v;
    v = o.batches;
    if (cli_flag_int(&SAMPLE_CMD, "batches", 1, 1 << 20, &v, &err) != 0) return cli_fail(&err);
    o.batches = (int)v;
    v = o.reps;
    if (cli_flag_int(&SAMPLE_CMD, "reps", 1, 10000, &v, &err) != 0) return cli_fail(&err);
    o.reps = (int)v;
    v = 0;
    if (cli_flag_int(&SAMPLE_CMD, "seed", 0, INT64_MAX, &v, &err) != 0) return cli_fail(&err);
    o.seed = (uint64_t)v;
    if (cli_flag_bool(&SAMPLE_CMD, "replace", &o.replace, &err) != 0) return cli_fail(&err);
    o.weights = cli_flag_str(&SAMPLE_CMD, "weights");
    if (o.batch_size < 1 || o.batches < 1 || o.reps < 1 || o.threads < 0) {
        err_set(&err, CGNN_ERR_INPUT, "bench sample: --batch, --batches and --reps must be >= 1");
        return cli_fail(&err);
    }
    if (bench_sample_run(&o, stdout, &err) != 0) return cli_fail(&err);
    return 0;
}

static cli_flag LGC_FLAGS[] = {
    {"dataset", "DIR", "homogeneous dataset with a link-prediction train split (required)", NULL},
    {"dim", "D", "embedding dim (default 64)", NULL},
    {"layers", "L", "propagation layers (default 3)", NULL},
    {"batch", "N", "training pairs per step, as many random negatives (default 2048)", NULL},
    {"threads", "N", "compute threads (default: all cores)", NULL},
    {"reps", "N", "steps timed; medians are reported (default 5)", NULL},
    {"seed", "S", "random seed (default 0)", NULL},
};
static const cli_command LGC_CMD = {
    "bench lightgcn", "cgnn bench lightgcn --dataset DIR [options]",
    "Measures the ways to run a LightGCN training step's propagation: the whole table, the batch's\n"
    "receptive field only, the sampler's fanout -1 blocks; and the optimiser step on every row.",
    LGC_FLAGS, sizeof LGC_FLAGS / sizeof LGC_FLAGS[0]};

static int bench_lightgcn_main(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&LGC_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&LGC_CMD);
        return 0;
    }
    bench_lightgcn_opts o = {cli_flag_str(&LGC_CMD, "dataset"), 64, 3, 2048, 0, 5, 0};
    if (!o.dataset) {
        err_set(&err, CGNN_ERR_INPUT, "bench lightgcn: --dataset DIR is required");
        return cli_fail(&err);
    }
    int64_t v = o.dim;
    if (cli_flag_int(&LGC_CMD, "dim", 1, 1 << 16, &v, &err) != 0) return cli_fail(&err);
    o.dim = v;
    v = o.num_layers;
    if (cli_flag_int(&LGC_CMD, "layers", 0, 8, &v, &err) != 0) return cli_fail(&err);
    o.num_layers = (int)v;
    v = o.batch_size;
    if (cli_flag_int(&LGC_CMD, "batch", 1, 1 << 24, &v, &err) != 0) return cli_fail(&err);
    o.batch_size = v;
    v = 0;
    if (cli_flag_int(&LGC_CMD, "threads", 0, 4096, &v, &err) != 0) return cli_fail(&err);
    o.threads = (int)v;
    v = o.reps;
    if (cli_flag_int(&LGC_CMD, "reps", 1, 10000, &v, &err) != 0) return cli_fail(&err);
    o.reps = (int)v;
    v = 0;
    if (cli_flag_int(&LGC_CMD, "seed", 0, INT64_MAX, &v, &err) != 0) return cli_fail(&err);
    o.seed = (uint64_t)v;
    if (bench_lightgcn_run(&o, stdout, &err) != 0) return cli_fail(&err);
    return 0;
}

static cli_flag TRAIN_FLAGS[] = {
    {"dataset", "DIR", "dataset with a node-classification task (default /tmp/products, from "
                       "`cgnn generate --preset products --out /tmp/products`)", NULL},
    {"model", "NAME", "GraphSAGE, GCN or GAT (default GraphSAGE); a typed dataset: HeteroSAGE, RGCN or HGT "
                      "(default HeteroSAGE)", NULL},
    {"fanouts", "LIST", "fanouts per layer, seed side first (default 15,10,5)", NULL},
    {"layers", "N", "layers (default: one per fanout; must match --fanouts)", NULL},
    {"batch", "N", "seeds per batch (default 1024)", NULL},
    {"hidden", "N", "hidden channels (default 256)", NULL},
    {"heads", "N", "GAT and HGT attention heads (default 2)", NULL},
    {"dropout", "P", "dropout between layers (default 0.5)", NULL},
    {"threads", "N", "compute threads, OpenMP + OpenBLAS (default: all cores)", NULL},
    {"workers", "N", "sampler threads of the pipelined run (default 2)", NULL},
    {"gather_threads", "N", "threads per batch's feature gather (default 1, as cgnn train)", NULL},
    {"steps", "N", "timed steps per run; medians are reported (default 20)", NULL},
    {"warmup", "N", "untimed steps before them (default 3)", NULL},
    {"seed", "S", "random seed (default 0)", NULL},
};
static const cli_command TRAIN_CMD = {
    "bench train", "cgnn bench train [--dataset DIR] [options]",
    "Measures training steps end to end (seeds/s, sampled edges/s, time per stage), GEMM GFLOP/s\n"
    "next to an sgemm peak at the same shapes, feature gathering next to memcpy bandwidth, the\n"
    "step as a fraction of its roofline bound, sampling overlap and peak memory; all measured in\n"
    "the same run. Prints a table, then one JSON line.",
    TRAIN_FLAGS, sizeof TRAIN_FLAGS / sizeof TRAIN_FLAGS[0]};

static int bench_train_main(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&TRAIN_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&TRAIN_CMD);
        return 0;
    }
    bench_train_opts o;
    memset(&o, 0, sizeof o);
    o.dataset = cli_flag_str(&TRAIN_CMD, "dataset");
    if (!o.dataset) o.dataset = "/tmp/products";
    o.model = MODEL_GRAPHSAGE;
    o.num_layers = 3;
    o.fanouts[0] = 15;
    o.fanouts[1] = 10;
    o.fanouts[2] = 5;
    o.batch_size = 1024;
    o.hidden = 256;
    o.heads = 2;
    o.dropout = 0.5;
    o.workers = 2;
    o.gather_threads = 1;
    o.steps = 20;
    o.warmup = 3;
    const char *name = cli_flag_str(&TRAIN_CMD, "model");
    o.model_is_default = name == NULL;
    if (name && model_kind_parse(name, &o.model) != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--model: expected GraphSAGE, GCN or GAT (typed datasets: HeteroSAGE, RGCN or HGT), got "
                "'%s'", name);
        return cli_fail(&err);
    }
    const char *fo = cli_flag_str(&TRAIN_CMD, "fanouts");
    if (fo && cli_parse_int_list(fo, o.fanouts, MINIBATCH_MAX_LAYERS, &o.num_layers) != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--fanouts: expected a list like 15,10,5 (at most %d), got '%s'",
                MINIBATCH_MAX_LAYERS, fo);
        return cli_fail(&err);
    }
    int64_t v = o.num_layers;
    if (cli_flag_int(&TRAIN_CMD, "layers", 1, MINIBATCH_MAX_LAYERS, &v, &err) != 0) return cli_fail(&err);
    if (v != o.num_layers) {
        err_set(&err, CGNN_ERR_INPUT, "--layers: %lld layers need %lld fanouts, --fanouts gives %d", (long long)v,
                (long long)v, o.num_layers);
        return cli_fail(&err);
    }
    struct {
        const char *flag;
        int64_t *dst64;
        int *dst;
        int64_t min;
    } ints[] = {{"batch", &o.batch_size, NULL, 1}, {"hidden", &o.hidden, NULL, 1}, {"heads", NULL, &o.heads, 1},
                {"threads", NULL, &o.threads, 0},  {"workers", NULL, &o.workers, 0}, {"steps", NULL, &o.steps, 1},
                {"warmup", NULL, &o.warmup, 0}, {"gather_threads", NULL, &o.gather_threads, 1}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        v = ints[i].dst64 ? *ints[i].dst64 : *ints[i].dst;
        if (cli_flag_int(&TRAIN_CMD, ints[i].flag, ints[i].min, 1 << 30, &v, &err) != 0) return cli_fail(&err);
        if (v < ints[i].min || v > (1 << 30)) {
            err_set(&err, CGNN_ERR_INPUT, "--%s: %lld is out of range [%lld, %d]", ints[i].flag, (long long)v,
                    (long long)ints[i].min, 1 << 30);
            return cli_fail(&err);
        }
        if (ints[i].dst64) *ints[i].dst64 = v;
        else *ints[i].dst = (int)v;
    }
    v = 0;
    if (cli_flag_int(&TRAIN_CMD, "seed", 0, INT64_MAX, &v, &err) != 0) return cli_fail(&err);
    o.seed = (uint64_t)v;
    if (cli_flag_double(&TRAIN_CMD, "dropout", &o.dropout, &err) != 0) return cli_fail(&err);
    if (!(o.dropout >= 0.0 && o.dropout < 1.0)) {
        err_set(&err, CGNN_ERR_INPUT, "--dropout: %g is out of range [0, 1)", o.dropout);
        return cli_fail(&err);
    }
    if (bench_train_run(&o, stdout, &err) != 0) return cli_fail(&err);
    return 0;
}

static cli_flag CACHE_FLAGS[] = {
    {"dataset", "DIR", "homogeneous dataset with node features (required)", NULL},
    {"fanouts", "LIST", "fanouts per layer, seed side first (default 15,10,5)", NULL},
    {"batch", "N", "seeds per batch (default 1024)", NULL},
    {"batches", "N", "batches replayed through each cache (default 20)", NULL},
    {"sizes", "LIST", "cache sizes in percent of the feature rows (default 5,10,20)", NULL},
    {"seed", "S", "random seed (default 0)", NULL},
};
static const cli_command CACHE_CMD = {
    "bench cache", "cgnn bench cache --dataset DIR [options]",
    "Compares the feature cache's policies (none, static hotness, sieve, s3fifo, lru, clock) on the\n"
    "same sampled batches: hit rate, rows read from the source and gather seeds/s per cache size.",
    CACHE_FLAGS, sizeof CACHE_FLAGS / sizeof CACHE_FLAGS[0]};

static int bench_cache_main(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&CACHE_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&CACHE_CMD);
        return 0;
    }
    bench_cache_opts o;
    memset(&o, 0, sizeof o);
    o.dataset = cli_flag_str(&CACHE_CMD, "dataset");
    o.num_layers = 3;
    o.fanouts[0] = 15, o.fanouts[1] = 10, o.fanouts[2] = 5;
    o.batch_size = 1024;
    o.batches = 20;
    if (!o.dataset) {
        err_set(&err, CGNN_ERR_INPUT, "bench cache: --dataset DIR is required");
        return cli_fail(&err);
    }
    const char *fo = cli_flag_str(&CACHE_CMD, "fanouts");
    if (fo && cli_parse_int_list(fo, o.fanouts, 8, &o.num_layers) != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--fanouts: expected a list like 15,10,5, got '%s'", fo);
        return cli_fail(&err);
    }
    int64_t pct[8] = {5, 10, 20};
    o.num_sizes = 3;
    const char *sz = cli_flag_str(&CACHE_CMD, "sizes");
    if (sz && cli_parse_int_list(sz, pct, 8, &o.num_sizes) != 0) {
        err_set(&err, CGNN_ERR_INPUT, "--sizes: expected percentages like 5,10,20, got '%s'", sz);
        return cli_fail(&err);
    }
    for (int i = 0; i < o.num_sizes; i++) {
        if (pct[i] < 1 || pct[i] > 100) {
            err_set(&err, CGNN_ERR_INPUT, "--sizes: %lld is not a percentage in [1, 100]", (long long)pct[i]);
            return cli_fail(&err);
        }
        o.sizes[i] = (double)pct[i] / 100.0;
    }
    int64_t v = o.batch_size;
    if (cli_flag_int(&CACHE_CMD, "batch", 1, 1 << 24, &v, &err) != 0) return cli_fail(&err);
    o.batch_size = v;
    v = o.batches;
    if (cli_flag_int(&CACHE_CMD, "batches", 1, 1 << 20, &v, &err) != 0) return cli_fail(&err);
    o.batches = (int)v;
    v = 0;
    if (cli_flag_int(&CACHE_CMD, "seed", 0, INT64_MAX, &v, &err) != 0) return cli_fail(&err);
    o.seed = (uint64_t)v;
    if (bench_cache_run(&o, stdout, &err) != 0) return cli_fail(&err);
    return 0;
}

int cli_cmd_bench(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "sample") == 0) return bench_sample_main(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "train") == 0) return bench_train_main(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "lightgcn") == 0) return bench_lightgcn_main(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "cache") == 0) return bench_cache_main(argc - 1, argv + 1);
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("usage: cgnn bench sample --dataset DIR [options]\n"
               "       cgnn bench train [--dataset DIR] [options]\n"
               "       cgnn bench lightgcn --dataset DIR [options]\n"
               "       cgnn bench cache --dataset DIR [options]\n\nbenchmarks:\n"
               "  sample   neighbour sampling + feature gathering throughput\n"
               "  train    training steps against sgemm peak, copy bandwidth and their roofline\n"
               "  lightgcn LightGCN's propagation: whole table, receptive field, fanout -1 blocks\n"
               "  cache    the feature cache's policies side by side: hit rate, source rows, seeds/s\n");
        return 0;
    }
    fprintf(stderr, "cgnn: error: bench: expected a benchmark name: sample, train, lightgcn or cache (see cgnn bench --help)\n");
    return CGNN_ERR_INPUT;
}
