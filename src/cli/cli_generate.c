/* cli_generate.c — `cgnn generate`: write a synthetic graph dataset (see graph/generate.h).
 *
 * A preset (small, the default, or products) gives every parameter; flags override it.
 * The dataset is written into a staging directory next to DIR ("DIR.tmp.<pid>", removed on
 * failure or on a signal) and renamed into place at the end, so a failed or interrupted run
 * never leaves a half-made dataset. An existing non-empty DIR (another dataset, say) is never
 * overwritten unless --force is given; with --force it is replaced only once the new one is
 * complete.
 */
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/generate.h"
#include "util/log.h"
#include "util/timer.h"

static cli_flag GENERATE_FLAGS[] = {
    {"out", "DIR", "output directory (created if missing; required)", NULL},
    {"preset", "NAME", "small (10k nodes, default) or products (2.4M nodes, ~62M edges)", NULL},
    {"nodes", "N", "number of nodes", NULL},
    {"avg_degree", "D", "average in-degree (the graph holds about N*D directed edges)", NULL},
    {"classes", "C", "number of node classes", NULL},
    {"feat_dim", "F", "node feature dimension", NULL},
    {"homophily", "H", "fraction of edges drawn within a class, in [0, 1]", NULL},
    {"seed", "S", "random seed (the output depends only on the parameters)", NULL},
    {"degree_exponent", "X", "power-law exponent of the degree distribution (> 2; default 2.5)", NULL},
    {"signal", "S", "class signal strength in the features (default 1.0)", NULL},
    {"train_frac", "F", "fraction of nodes in the train split", NULL},
    {"val_frac", "F", "fraction of nodes in the validation split (test = the rest)", NULL},
    {"link_prediction", NULL, "also write a link_prediction task (held-out edge pairs)", NULL},
    {"lp_val_frac", "F", "fraction of edges held out for link-prediction validation", NULL},
    {"lp_test_frac", "F", "fraction of edges held out for link-prediction test", NULL},
    {"typed", NULL, "typed graph of the same size: user / item / tag (50% / 40% / 10% of the nodes), 5 edge "
                    "types, same edge count and degree law as without --typed; NC on item, LP on user:clicks:item", NULL},
    {"threads", "T", "OpenMP threads (0 = all cores; never changes the output)", NULL},
    {"name", "NAME", "dataset_name written to metadata.yaml", NULL},
    {"force", NULL, "replace DIR if it exists and is not empty (by default that is an error)", NULL},
};

static const cli_command GENERATE_CMD = {
    .name = "generate",
    .usage = "cgnn generate --out DIR [--preset small|products] [--typed] [options]",
    .summary = "Writes a synthetic graph (power-law degrees, class homophily, features with class\n"
               "signal, train/validation/test splits) in the GraphBolt on-disk format.",
    .flags = GENERATE_FLAGS,
    .num_flags = (int)(sizeof GENERATE_FLAGS / sizeof GENERATE_FLAGS[0]),
};

/* Reads an int flag into *out, checking [lo, hi]. */
static int flag_int_range(const char *name, int64_t lo, int64_t hi, int64_t *out, cgnn_err *err) {
    int64_t v = *out;
    if (cli_flag_int(&GENERATE_CMD, name, lo, hi, &v, err) != 0) return -1;
    if (v < lo || v > hi)
        return err_set(err, CGNN_ERR_INPUT, "--%s: expected an integer in [%lld, %lld], got %lld", name,
                       (long long)lo, (long long)hi, (long long)v);
    *out = v;
    return 0;
}

/* Fills *p from the preset and the flags. Returns 0, or -1 with *err. */
static int params_from_flags(generate_params *p, cgnn_err *err) {
    const char *preset = cli_flag_str(&GENERATE_CMD, "preset");
    if (!preset || strcmp(preset, "small") == 0)
        generate_default_params(p);
    else if (strcmp(preset, "products") == 0)
        generate_products_params(p);
    else
        return err_set(err, CGNN_ERR_INPUT, "--preset: unknown preset '%s' (expected small or products)",
                       preset);

    int64_t nodes = p->num_nodes, classes = p->num_classes, feat_dim = p->feat_dim;
    int64_t seed = (int64_t)p->seed, threads = p->num_threads;
    if (flag_int_range("nodes", 2, (int64_t)1 << 40, &nodes, err) != 0) return -1;
    if (flag_int_range("classes", 1, INT_MAX, &classes, err) != 0) return -1;
    if (flag_int_range("feat_dim", 1, INT_MAX, &feat_dim, err) != 0) return -1;
    if (flag_int_range("seed", 0, INT64_MAX, &seed, err) != 0) return -1;
    if (flag_int_range("threads", 0, 4096, &threads, err) != 0) return -1;
    p->num_nodes = nodes;
    p->num_classes = (int)classes;
    p->feat_dim = (int)feat_dim;
    p->seed = (uint64_t)seed;
    p->num_threads = (int)threads;
    if (cli_flag_double(&GENERATE_CMD, "avg_degree", &p->avg_degree, err) != 0) return -1;
    if (cli_flag_double(&GENERATE_CMD, "homophily", &p->homophily, err) != 0) return -1;
    if (cli_flag_double(&GENERATE_CMD, "degree_exponent", &p->degree_exponent, err) != 0) return -1;
    if (cli_flag_double(&GENERATE_CMD, "signal", &p->signal, err) != 0) return -1;
    if (cli_flag_double(&GENERATE_CMD, "train_frac", &p->train_frac, err) != 0) return -1;
    if (cli_flag_double(&GENERATE_CMD, "val_frac", &p->val_frac, err) != 0) return -1;
    if (cli_flag_bool(&GENERATE_CMD, "link_prediction", &p->link_prediction, err) != 0) return -1;
    if (cli_flag_bool(&GENERATE_CMD, "typed", &p->typed, err) != 0) return -1;
    if (cli_flag_double(&GENERATE_CMD, "lp_val_frac", &p->lp_val_frac, err) != 0) return -1;
    if (cli_flag_double(&GENERATE_CMD, "lp_test_frac", &p->lp_test_frac, err) != 0) return -1;
    const char *name = cli_flag_str(&GENERATE_CMD, "name");
    if (name) p->name = name;
    return 0;
}

typedef struct generate_job {
    const generate_params *p;
    generate_stats st;
} generate_job;

static int generate_write(const char *staging, void *ctx, cgnn_err *err) {
    generate_job *j = ctx;
    return generate_dataset_stats(staging, j->p, &j->st, err);
}

int cli_cmd_generate(int argc, char **argv) {
    cgnn_err err;
    err_clear(&err);
    const char *pos[1];
    int npos = 0, want_help = 0;
    if (cli_parse(&GENERATE_CMD, argc, argv, pos, 0, &npos, &want_help, &err) != 0) return cli_fail(&err);
    if (want_help) {
        cli_print_help(&GENERATE_CMD);
        return 0;
    }
    const char *out = cli_flag_str(&GENERATE_CMD, "out");
    if (!out || !*out) {
        err_set(&err, CGNN_ERR_INPUT, "generate: --out DIR is required (see cgnn generate --help)");
        return cli_fail(&err);
    }
    generate_params p;
    if (params_from_flags(&p, &err) != 0) return cli_fail(&err);

    int force = 0;
    if (cli_flag_bool(&GENERATE_CMD, "force", &force, &err) != 0) return cli_fail(&err);
    double t0 = timer_now();
    generate_job job = {&p, {0}};
    char outdir[4096];
    if (cli_out_dir_write(out, "cgnn generate", force, NULL, generate_write, &job, outdir, &err) != 0)
        return cli_fail(&err);
    const generate_stats gs = job.st;
    out = outdir;
    double secs = timer_now() - t0;
    if (p.typed)
        log_info("generate: wrote %s: %lld nodes (user %lld, item %lld, tag %lld), %lld edges in 5 edge types, "
                 "%d features, %d classes%s in %.2f s",
                 out, (long long)p.num_nodes, (long long)gs.type_nodes[0], (long long)gs.type_nodes[1],
                 (long long)gs.type_nodes[2], (long long)gs.num_edges, p.feat_dim, p.num_classes,
                 p.link_prediction ? ", link prediction" : "", secs);
    else
        log_info("generate: wrote %s: %lld nodes, %lld edges, %d features, %d classes%s in %.2f s", out,
                 (long long)p.num_nodes, (long long)gs.num_edges, p.feat_dim, p.num_classes,
                 p.link_prediction ? ", link prediction" : "", secs);
    return 0;
}
