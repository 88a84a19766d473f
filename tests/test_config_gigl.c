/* test_config_gigl.c — GiGL's names in the task and resource configs (config_args.c, "GiGL's
 * trainerArgs names"; docs/CONFIG.md): each GiGL name sets the cgnn setting it means, as GiGL
 * writes it (strings: "16", "0.0005", "True"); a GiGL name and a cgnn name of one setting with
 * different values are an error naming both; GiGL settings cgnn keeps are stored and checked as
 * GiGL checks them; names without effect are accepted with a note naming them; capabilities cgnn
 * lacks are errors naming them; typos still get "did you mean"; profilerConfig in either spelling
 * with GiGL's arguments and defaults; featureFlags.should_run_glt_backend and
 * shouldSkipModelEvaluation; graph-store mode refused; every accepted name documented. */
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "train/config.h"

static char *g_dir;

#define LP_HEAD                                                                                \
    "taskMetadata:\n"                                                                          \
    "  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"                                        \
    "sharedConfig:\n"                                                                          \
    "  preprocessedMetadataUri: data/facebook-lp\n"                                            \
    "  trainedModelMetadata: {trainedModelUri: out/m.safetensors}\n"
#define NC_HEAD                                                                                \
    "taskMetadata:\n"                                                                          \
    "  nodeBasedTaskMetadata: {}\n"                                                            \
    "sharedConfig:\n"                                                                          \
    "  preprocessedMetadataUri: data/cora\n"                                                   \
    "  trainedModelMetadata: {trainedModelUri: out/m.safetensors}\n"

/* Loads text (written to g_dir/name) into *c; returns config_load_task's result, message in err. */
static int load(task_config *c, const char *name, const char *text, cgnn_err *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    if (test_write_file(g_dir, name, text, strlen(text)) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    memset(err, 0, sizeof *err);
    int rc = config_load_task(c, path, err);
    if (rc != 0) fprintf(stderr, "  %s -> %s\n", name, err->msg);
    return rc;
}

/* 1 if some note of c contains needle. */
static int has_note(const task_config *c, const char *needle) {
    for (int i = 0; i < c->notes.n; i++)
        if (strstr(c->notes.line[i], needle)) return 1;
    return 0;
}

/* Expects text to fail with an input error naming the file and containing n1 and n2 (NULL: any). */
#define EXPECT_ERR(name, text, n1, n2)                                                         \
    do {                                                                                       \
        task_config *c_ = calloc(1, sizeof *c_);                                               \
        cgnn_err e_;                                                                           \
        ASSERT_EQ(load(c_, name, text, &e_), -1);                                              \
        ASSERT_EQ(e_.code, CGNN_ERR_INPUT);                                                    \
        ASSERT_STR_CONTAINS(e_.msg, name);                                                     \
        if (n1) ASSERT_STR_CONTAINS(e_.msg, (const char *)n1);                                 \
        if (n2) ASSERT_STR_CONTAINS(e_.msg, (const char *)n2);                                 \
        free(c_);                                                                              \
    } while (0)

/* The example scripts' names, as GiGL writes them (quoted strings), in a link prediction config. */
TEST(example_script_names_lp) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "lp_names.yaml",
                   LP_HEAD "trainerConfig:\n  trainerArgs:\n"
                           "    log_every_n_batch: \"50\"\n    num_neighbors: \"[10, 10]\"\n"
                           "    main_batch_size: \"16\"\n    random_batch_size: \"24\"\n"
                           "    hid_dim: \"32\"\n    out_dim: \"8\"\n    learning_rate: \"0.0005\"\n"
                           "    weight_decay: \"0.0005\"\n    num_max_train_batches: \"1000\"\n"
                           "    num_val_batches: \"100\"\n    val_every_n_batch: \"50\"\n"
                           "    sampling_workers_per_process: \"4\"\n    local_world_size: \"2\"\n"
                           "    process_start_gap_seconds: \"0\"\n    sampling_worker_shared_channel_size: \"4GB\"\n"
                           "    should_enable_find_unused_parameters: \"True\"\n",
                   &err),
              0);
    const trainer_args *a = &c->args;
    ASSERT_EQ(a->log_every_n_batch, 50);
    ASSERT_EQ(a->num_fanouts, 2);
    ASSERT_EQ(a->batch_size, 16);
    ASSERT_EQ(a->random_negative_sample_batch_size, 24); /* GiGL's random loader serves every split */
    ASSERT_EQ(a->random_negative_sample_batch_size_for_evaluation, 24);
    ASSERT_EQ(a->hidden_dim, 32);
    ASSERT_EQ(a->out_channels, 8);
    ASSERT_NEAR(a->optim.lr, 0.0005, 1e-12);
    ASSERT_NEAR(a->optim.weight_decay, 0.0005, 1e-12);
    ASSERT_EQ(a->num_max_train_batches, 1000);
    ASSERT_EQ(a->num_val_batches, 100);
    ASSERT_EQ(a->val_every_num_batches, 50);
    ASSERT_EQ(a->num_workers, 4);
    ASSERT(has_note(c, "GiGL's names read as cgnn's: hid_dim = hidden_dim, out_dim = out_channels, main_batch_size = "
                       "main_sample_batch_size, random_batch_size = random_negative_sample_batch_size and "
                       "random_negative_sample_batch_size_for_evaluation, learning_rate = optim_lr"));
    ASSERT(has_note(c, "trainerArgs.local_world_size: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.process_start_gap_seconds: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.sampling_worker_shared_channel_size: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.should_enable_find_unused_parameters: accepted, no effect"));
    /* weight_decay is the decay of Adam here; the scripts' AdamW is named */
    ASSERT(has_note(c, "trainerArgs.weight_decay: the weight decay of Adam"));
    ASSERT(!has_note(c, "log_every_n_batch")); /* it has an effect: no note */
    /* with optim_class_path AdamW (the scripts' optimiser) there is nothing to say */
    ASSERT_EQ(load(c, "lp_adamw.yaml",
                   LP_HEAD "trainerConfig:\n  trainerArgs: {weight_decay: '0.0005', optim_class_path: torch.optim.AdamW}\n",
                   &err),
              0);
    ASSERT_NEAR(c->args.optim.weight_decay, 0.0005, 1e-12);
    ASSERT(!has_note(c, "weight decay of"));
    /* num_classes means nothing to link prediction: a note, out_channels untouched */
    ASSERT_EQ(load(c, "lp_classes.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {num_classes: '7'}\n", &err), 0);
    ASSERT_EQ(c->args.out_channels, 0);
    ASSERT(has_note(c, "trainerArgs.num_classes: accepted, no effect"));
    free(c);
}

/* The node classification example's names, and the v1 templates' batch_size / out_dim. */
TEST(example_script_names_nc) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "nc_names.yaml",
                   NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_classes: \"7\"\n    train_batch_size: \"16\"\n"
                           "    hid_dim: \"64\"\n    val_every_n_batch: \"50\"\n    num_max_train_batches: \"200\"\n",
                   &err),
              0);
    ASSERT_EQ(c->args.out_channels, 7);
    ASSERT_EQ(c->args.batch_size, 16);
    ASSERT_EQ(c->args.hidden_dim, 64);
    ASSERT_EQ(c->args.num_max_train_batches, 200);
    ASSERT_EQ(load(c, "nc_v1.yaml", NC_HEAD "trainerConfig:\n  trainerArgs: {batch_size: '16', out_dim: '7', num_epochs: '1'}\n",
                   &err),
              0);
    ASSERT_EQ(c->args.batch_size, 16);
    ASSERT_EQ(c->args.out_channels, 7);
    /* the link prediction names are refused for node classification, as cgnn's own are */
    EXPECT_ERR("nc_rand.yaml", NC_HEAD "trainerConfig:\n  trainerArgs: {random_batch_size: '16'}\n", "random_batch_size",
               "applies to link prediction");
    free(c);
}

/* A GiGL name and a cgnn name (or two GiGL names) of one setting: the same value is fine
 * (compared as numbers: "0.0005" = "5e-4"), another value an error naming both. */
TEST(conflicts) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "same_ok.yaml",
                   LP_HEAD "trainerConfig:\n  trainerArgs: {hidden_dim: '64', hid_dim: '64', optim_lr: '5e-4', "
                           "learning_rate: '0.0005', main_batch_size: '8', train_batch_size: '8'}\n",
                   &err),
              0);
    ASSERT_EQ(c->args.hidden_dim, 64);
    ASSERT_EQ(c->args.batch_size, 8);
    EXPECT_ERR("conflict1.yaml", LP_HEAD "trainerConfig:\n  trainerArgs:\n    hidden_dim: '128'\n    hid_dim: '64'\n",
               "hid_dim (line 9): is '64', but hidden_dim (line 8) is '128'", "both set hidden_dim");
    EXPECT_ERR("conflict2.yaml", LP_HEAD "trainerConfig:\n  trainerArgs:\n    hid_dim: '64'\n    hidden_dim: '128'\n",
               "hidden_dim (line 9): is '128', but hid_dim (line 8) is '64'", NULL);
    EXPECT_ERR("conflict3.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {main_batch_size: '16', train_batch_size: '32'}\n",
               "train_batch_size", "main_batch_size");
    EXPECT_ERR("conflict4.yaml",
               LP_HEAD "trainerConfig:\n  trainerArgs: {random_batch_size: '16', "
                       "random_negative_sample_batch_size_for_evaluation: '1000'}\n",
               "random_negative_sample_batch_size_for_evaluation", "random_batch_size");
    EXPECT_ERR("conflict5.yaml", NC_HEAD "trainerConfig:\n  trainerArgs: {num_classes: '7', out_dim: '8'}\n", "out_dim",
               "num_classes");
    EXPECT_ERR("conflict6.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {learning_rate: '0.001', optim_lr: '0.01'}\n",
               "optim_lr", "learning_rate");
    /* a value that is not a number under either name */
    EXPECT_ERR("conflict7.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {hid_dim: '64', hidden_dim: '6x'}\n",
               "hidden_dim", "expected an integer");
    /* strictly parsed under a GiGL name too */
    EXPECT_ERR("badint.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {hid_dim: '16.0'}\n", "hid_dim", "'16.0'");
    EXPECT_ERR("badnum.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {learning_rate: 'fast'}\n", "learning_rate", NULL);
    free(c);
}

/* GiGL settings cgnn keeps: stored, and checked as GiGL checks them. */
TEST(kept) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "kept_default.yaml", LP_HEAD, &err), 0);
    ASSERT_EQ(c->args.val_num_workers, -1);
    ASSERT_EQ(c->args.test_num_workers, -1);
    ASSERT_EQ(c->args.log_every_n_batch, 0);
    ASSERT_EQ(c->args.split_fractions_given, 0);
    ASSERT_EQ(c->notes.n, 0);
    ASSERT_EQ(load(c, "kept.yaml",
                   LP_HEAD "trainerConfig:\n  trainerArgs: {val_main_num_workers: '4', test_main_num_workers: '0', "
                           "num_val: '0.3', num_test: '0.3', sample_edge_direction: in, log_every_n_batch: '7'}\n",
                   &err),
              0);
    ASSERT_EQ(c->args.val_num_workers, 4);
    ASSERT_EQ(c->args.test_num_workers, 0);
    ASSERT_EQ(c->args.log_every_n_batch, 7);
    ASSERT_NEAR(c->args.num_val, 0.3, 1e-12);
    ASSERT_NEAR(c->args.num_test, 0.3, 1e-12);
    ASSERT(has_note(c, "num_val / num_test (GiGL's validation / test fractions"));
    ASSERT(has_note(c, "kept (0.3 / 0.3)"));
    ASSERT_EQ(load(c, "kept_val.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {num_val: '0.2'}\n", &err), 0);
    ASSERT_NEAR(c->args.num_test, 0.1, 1e-12); /* GiGL's default */
    EXPECT_ERR("val0.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {num_val: '0'}\n", "num_val", "(0, 1)");
    EXPECT_ERR("test1.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {num_test: '1.0'}\n", "num_test", "[0, 1)");
    EXPECT_ERR("sum1.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {num_val: '0.6', num_test: '0.4'}\n", "num_val",
               "sum < 1");
    EXPECT_ERR("out.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {sample_edge_direction: out}\n",
               "sample_edge_direction", "in-neighbours");
    EXPECT_ERR("dir.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {sample_edge_direction: both}\n",
               "sample_edge_direction", "expected in or out");
    EXPECT_ERR("log0.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {log_every_n_batch: '0'}\n", "log_every_n_batch",
               ">= 1");
    EXPECT_ERR("vw.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {val_main_num_workers: '-1'}\n", "val_main_num_workers",
               "[0, 1024]");
    free(c);
}

/* Accepted without effect, with a note; GiGL's booleans as strtobool reads them. */
TEST(no_effect_and_unread) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "unread.yaml",
                   LP_HEAD "trainerConfig:\n  trainerArgs: {margin: '0.3', should_l2_normalize_output: 'True', "
                           "train_main_sample_num_workers: '4', test_random_sample_num_workers: '1', "
                           "train_random_negative_num_workers: '2', should_use_range_partitioning: 'no', "
                           "should_load_tensors_in_parallel: '1'}\n",
                   &err),
              0);
    ASSERT(has_note(c, "trainerArgs.margin: accepted, no effect: no GiGL trainer reads it"));
    ASSERT(has_note(c, "trainerArgs.should_l2_normalize_output: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.train_main_sample_num_workers: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.test_random_sample_num_workers: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.train_random_negative_num_workers: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.should_use_range_partitioning: accepted, no effect"));
    ASSERT(has_note(c, "trainerArgs.should_load_tensors_in_parallel: accepted, no effect"));
    ASSERT_EQ(c->args.l2_normalize_output, 1); /* untouched by should_l2_normalize_output */
    ASSERT_EQ(c->args.l2_normalize_set, 0);
    EXPECT_ERR("strtobool.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {should_enable_find_unused_parameters: 'maybe'}\n",
               "should_enable_find_unused_parameters", "strtobool");
    EXPECT_ERR("margin.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {margin: wide}\n", "margin", "finite number");
    EXPECT_ERR("empty.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {margin: ''}\n", "margin", "empty value");
    EXPECT_ERR("list.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {hid_dim: [1, 2]}\n", "hid_dim", "string value");
    int b = -1;
    const char *yes[] = {"y", "YES", "t", "True", "on", "1"}, *no[] = {"n", "No", "f", "FALSE", "off", "0"};
    for (int i = 0; i < 6; i++) {
        ASSERT(config_gigl_bool(yes[i], &b) == 0 && b == 1);
        ASSERT(config_gigl_bool(no[i], &b) == 0 && b == 0);
    }
    ASSERT_EQ(config_gigl_bool("", &b), -1);
    ASSERT_EQ(config_gigl_bool("true ", &b), -1);
    ASSERT_EQ(config_gigl_bool("2", &b), -1);
    free(c);
}

/* GiGL's self-supervised split (graph/edge_split.h): kept for link prediction, checked as GiGL
 * does (plus p > 0), a note on node classification (GiGL reads it for link prediction only). */
TEST(ssl_positive_label_percentage) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "ssl.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {ssl_positive_label_percentage: '0.05', "
                   "num_val: '0.3', num_test: '0.2', ssl_keep_eval_edges: 'true'}\n", &err), 0);
    ASSERT_NEAR(c->args.ssl_positive_label_percentage, 0.05, 1e-15);
    ASSERT_NEAR(c->args.num_val, 0.3, 1e-15);
    ASSERT_NEAR(c->args.num_test, 0.2, 1e-15);
    ASSERT_EQ(c->args.ssl_keep_eval_edges, 1);
    ASSERT(has_note(c, "of the anchors of the self-supervised labels go to validation / test"));
    ASSERT_EQ(load(c, "ssl_nc.yaml", NC_HEAD "trainerConfig:\n  trainerArgs: {ssl_positive_label_percentage: '0.05'}\n",
                   &err), 0);
    ASSERT_EQ(c->args.ssl_positive_label_percentage, 0);
    ASSERT(has_note(c, "ssl_positive_label_percentage: accepted, no effect"));
    ASSERT_EQ(load(c, "keep_only.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {ssl_keep_eval_edges: 'true'}\n", &err), 0);
    ASSERT(has_note(c, "ssl_keep_eval_edges: no effect without ssl_positive_label_percentage"));
    free(c);
    EXPECT_ERR("ssl0.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {ssl_positive_label_percentage: '0'}\n",
               "ssl_positive_label_percentage", "(0, 1]");
    EXPECT_ERR("ssl2.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {ssl_positive_label_percentage: '1.01'}\n",
               "ssl_positive_label_percentage", "(0, 1]");
    EXPECT_ERR("sslx.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {ssl_positive_label_percentage: 'half'}\n",
               "ssl_positive_label_percentage", NULL);
    EXPECT_ERR("sslk.yaml", NC_HEAD "trainerConfig:\n  trainerArgs: {ssl_keep_eval_edges: 'true'}\n",
               "ssl_keep_eval_edges", "link prediction");
}

/* max_labels_per_anchor_node: GiGL's anchor batching with that cap (implied), refused against
 * lp_batching: pairs; lp_batching is pairs by default and checked. */
TEST(anchor_batching) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "maxl.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {max_labels_per_anchor_node: '4'}\n", &err), 0);
    ASSERT_EQ(c->args.lp_anchor_batching, 1);
    ASSERT_EQ(c->args.max_labels_per_anchor_node, 4);
    ASSERT_EQ(load(c, "maxl2.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {lp_batching: anchors}\n", &err), 0);
    ASSERT_EQ(c->args.lp_anchor_batching, 1);
    ASSERT_EQ(c->args.max_labels_per_anchor_node, 0);
    ASSERT_EQ(load(c, "pairs.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {hid_dim: '16'}\n", &err), 0);
    ASSERT_EQ(c->args.lp_anchor_batching, 0);
    free(c);
    EXPECT_ERR("maxl3.yaml",
               LP_HEAD "trainerConfig:\n  trainerArgs: {lp_batching: pairs, max_labels_per_anchor_node: '4'}\n",
               "max_labels_per_anchor_node", "lp_batching: pairs");
    EXPECT_ERR("maxl4.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {max_labels_per_anchor_node: '0'}\n",
               "max_labels_per_anchor_node", "");
    EXPECT_ERR("lpb.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {lp_batching: anchor}\n", "lp_batching",
               "expected pairs");
}

/* GiGL's graph-store resource config is server-client mode now (test_config: graph_store_*). */
TEST(graph_store_accepted) {
    const char *res = "trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n"
                      "    graph_store_pool: {num_replicas: 2}\n    compute_pool: {num_replicas: 2}\n";
    ASSERT_EQ(test_write_file(g_dir, "gs_res.yaml", res, strlen(res)), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/gs_res.yaml", g_dir);
    resource_config r;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_resource(&r, path, &err), 0);
    ASSERT_EQ(r.graph_store, 1);
}

/* Typos still get "did you mean", over cgnn's names and GiGL's. */
TEST(typos) {
    EXPECT_ERR("typo1.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {hiden_dim: '8'}\n", "hiden_dim",
               "did you mean 'hidden_dim'?");
    EXPECT_ERR("typo2.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {learning_rat: '0.1'}\n", "learning_rat",
               "did you mean 'learning_rate'?");
    EXPECT_ERR("typo3.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {log_every_n_batches: '5'}\n",
               "log_every_n_batches", "did you mean 'log_every_n_batch'?");
    EXPECT_ERR("typo4.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {val_main_num_worker: '1'}\n",
               "val_main_num_worker", "did you mean 'val_main_num_workers'?");
    EXPECT_ERR("typo5.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {zzz: '1'}\n", "zzz", "unknown trainer argument");
}

/* GiGL's v1 scheduler arguments factor / total_iters: ConstantLR with GiGL's defaults. */
TEST(scheduler) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "factor.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {factor: '0.5'}\n", &err), 0);
    ASSERT_EQ(c->args.sched.kind, SCHED_CONSTANT);
    ASSERT_NEAR(c->args.sched.factor, 0.5, 1e-12);
    ASSERT_EQ(c->args.sched.total_iters, 10);
    ASSERT_EQ(load(c, "iters.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {total_iters: '3'}\n", &err), 0);
    ASSERT_NEAR(c->args.sched.factor, 1.0, 1e-12);
    ASSERT_EQ(c->args.sched.total_iters, 3);
    ASSERT_EQ(load(c, "named.yaml",
                   LP_HEAD "trainerConfig:\n  trainerArgs: {lr_scheduler_name: torch.optim.lr_scheduler.ConstantLR, "
                           "factor: '0.25'}\n",
                   &err),
              0);
    ASSERT_NEAR(c->args.sched.factor, 0.25, 1e-12);
    ASSERT_EQ(c->args.sched.total_iters, 10);
    /* cgnn's names keep torch's defaults and still need the scheduler named */
    ASSERT_EQ(load(c, "torch.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {lr_scheduler_name: ConstantLR, lr_scheduler_factor: '0.25'}\n",
                   &err),
              0);
    ASSERT_EQ(c->args.sched.total_iters, 5);
    EXPECT_ERR("unnamed.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {lr_scheduler_factor: '0.5'}\n",
               "lr_scheduler_factor", "lr_scheduler_name is not set");
    EXPECT_ERR("steplr.yaml",
               LP_HEAD "trainerConfig:\n  trainerArgs: {lr_scheduler_name: StepLR, lr_scheduler_step_size: '2', factor: '0.5'}\n",
               "factor", "does not apply to StepLR");
    EXPECT_ERR("both.yaml", LP_HEAD "trainerConfig:\n  trainerArgs: {factor: '0.5', lr_scheduler_factor: '0.25'}\n", "factor",
               "lr_scheduler_factor");
    free(c);
}

/* profilerConfig in the proto's two spellings, GiGL's arguments and defaults. */
TEST(profiler) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    ASSERT_EQ(load(c, "prof_snake.yaml",
                   LP_HEAD "profilerConfig:\n  should_enable_profiler: true\n  profiler_log_dir: /tmp/p\n"
                           "  profiler_args:\n    wait: '0'\n    with_stack: 'True'\n    repeat: '3'\n",
                   &err),
              0);
    ASSERT_EQ(c->profiler_enabled, 1);
    ASSERT(!strcmp(c->profiler_log_dir, "/tmp/p"));
    ASSERT_EQ(c->profiler_wait, 0);
    ASSERT_EQ(c->profiler_warmup, 2); /* GiGL's defaults for the rest */
    ASSERT_EQ(c->profiler_active, 2);
    ASSERT_EQ(c->profiler_repeat, 3);
    ASSERT(has_note(c, "profilerConfig.profiler_args.with_stack: accepted, no effect"));
    ASSERT_EQ(load(c, "prof_camel.yaml",
                   LP_HEAD "profilerConfig:\n  shouldEnableProfiler: true\n  profilerLogDir: /tmp/q\n"
                           "  profilerArgs: {record_shapes: 'false', profile_memory: 'True', repeat: '0'}\n",
                   &err),
              0);
    ASSERT_EQ(c->profiler_wait, 5);
    ASSERT_EQ(c->profiler_repeat, 0);
    ASSERT(has_note(c, "profilerConfig.profilerArgs.record_shapes: accepted, no effect"));
    ASSERT(has_note(c, "profilerConfig.profilerArgs.profile_memory: accepted, no effect"));
    EXPECT_ERR("prof_both.yaml", LP_HEAD "profilerConfig:\n  shouldEnableProfiler: true\n  should_enable_profiler: true\n",
               "should_enable_profiler and shouldEnableProfiler", NULL);
    EXPECT_ERR("prof_nodir.yaml", LP_HEAD "profilerConfig:\n  should_enable_profiler: true\n",
               "should_enable_profiler is true but profiler_log_dir is not set", NULL);
    EXPECT_ERR("prof_bool.yaml", LP_HEAD "profilerConfig:\n  profiler_args: {with_stack: 'sometimes'}\n", "with_stack",
               "strtobool");
    EXPECT_ERR("prof_rep.yaml", LP_HEAD "profilerConfig:\n  profiler_args: {repeat: '-1'}\n", "repeat", "must be in [0, ");
    EXPECT_ERR("prof_typo.yaml", LP_HEAD "profilerConfig:\n  profiler_args: {reapeat: '1'}\n", "reapeat",
               "did you mean 'repeat'");
    free(c);
}

/* shouldSkipModelEvaluation as GiGL's trainer of the config's mode does it. */
TEST(skip_model_evaluation) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
#define SKIP_HEAD                                                                              \
    "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"                                             \
    "sharedConfig:\n  preprocessedMetadataUri: data/cora\n"                                    \
    "  trainedModelMetadata: {trainedModelUri: out/m.safetensors}\n"
    /* legacy (no flag, or False): the test is skipped, with a note */
    ASSERT_EQ(load(c, "skip_legacy.yaml", SKIP_HEAD "  shouldSkipModelEvaluation: true\n", &err), 0);
    ASSERT_EQ(c->gigl_in_memory, 0);
    ASSERT_EQ(c->skip_test, 1);
    ASSERT(has_note(c, "the test split is not evaluated"));
    ASSERT_EQ(load(c, "skip_legacy2.yaml",
                   SKIP_HEAD "  shouldSkipModelEvaluation: true\nfeatureFlags: {should_run_glt_backend: \"False\"}\n", &err),
              0);
    ASSERT_EQ(c->skip_test, 1);
    /* in-memory: GiGL's training scripts test all the same */
    ASSERT_EQ(load(c, "skip_glt.yaml",
                   SKIP_HEAD "  shouldSkipModelEvaluation: true\nfeatureFlags: {should_run_glt_backend: 'True'}\n", &err),
              0);
    ASSERT_EQ(c->gigl_in_memory, 1);
    ASSERT_EQ(c->should_skip_model_evaluation, 1);
    ASSERT_EQ(c->skip_test, 0);
    ASSERT(has_note(c, "GiGL's in-memory training scripts test the model"));
    /* both skip flags: nothing runs (trainer_run); the test is not run either */
    ASSERT_EQ(load(c, "skip_both.yaml",
                   SKIP_HEAD "  shouldSkipModelEvaluation: true\n  shouldSkipTraining: true\n"
                             "featureFlags: {should_run_glt_backend: 'True'}\n",
                   &err),
              0);
    ASSERT_EQ(c->skip_test, 1);
    /* neither: tested, no note */
    ASSERT_EQ(load(c, "skip_none.yaml", SKIP_HEAD "featureFlags: {should_run_glt_backend: 'True', other: x}\n", &err), 0);
    ASSERT_EQ(c->skip_test, 0);
    ASSERT_EQ(c->notes.n, 0);
    EXPECT_ERR("flag_bad.yaml", SKIP_HEAD "featureFlags: {should_run_glt_backend: 'sure'}\n", "should_run_glt_backend",
               "strtobool");
    free(c);
}

/* Every name cgnn accepts in trainerArgs is in docs/CONFIG.md; no GiGL name is a cgnn key. */
TEST(documented) {
    char path[4200];
    snprintf(path, sizeof path, "%s/docs/CONFIG.md", test_source_dir());
    size_t len = 0;
    unsigned char *doc = test_slurp(path, &len);
    ASSERT(doc != NULL);
    int n = 0;
    for (const char *const *k = CONFIG_GIGL_ARG_KEYS; *k; k++, n++) {
        char quoted[128];
        snprintf(quoted, sizeof quoted, "`%s`", *k);
        if (!strstr((const char *)doc, quoted)) TEST_FAIL_("docs/CONFIG.md does not list GiGL's %s", *k);
        for (const char *const *m = CONFIG_TRAINER_ARG_KEYS; *m; m++)
            if (!strcmp(*k, *m)) TEST_FAIL_("%s is both a GiGL name and a cgnn key", *k);
    }
    ASSERT(n >= 40);
    /* every listed GiGL name is one the parser knows (a value of 1 may be refused, never unknown) */
    task_config *c = calloc(1, sizeof *c);
    for (const char *const *k = CONFIG_GIGL_ARG_KEYS; *k; k++) {
        char text[1024];
        cgnn_err err;
        snprintf(text, sizeof text, LP_HEAD "trainerConfig:\n  trainerArgs: {%s: '1'}\n", *k);
        if (load(c, "known.yaml", text, &err) != 0 && strstr(err.msg, "unknown trainer argument"))
            TEST_FAIL_("%s is listed but not known: %s", *k, err.msg);
    }
    free(c);
    for (const char *const *k = CONFIG_TRAINER_ARG_KEYS; *k; k++) {
        char quoted[128];
        snprintf(quoted, sizeof quoted, "`%s`", *k);
        if (!strstr((const char *)doc, quoted)) TEST_FAIL_("docs/CONFIG.md does not list %s", *k);
    }
    free(doc);
}

/* GiGL's defaults: what a config leaves out comes from the training script (command) or v1 task
 * spec (trainerClsPath) it names; given arguments, under either name, are never overridden. */
#define GD_LP "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n" \
              "sharedConfig: {preprocessedMetadataUri: d, trainedModelMetadata: {trainedModelUri: m.st}}\n"
#define GD_NC "taskMetadata:\n  nodeBasedTaskMetadata: {supervisionNodeTypes: [paper]}\n" \
              "sharedConfig: {preprocessedMetadataUri: d, trainedModelMetadata: {trainedModelUri: m.st}}\n"
TEST(gigl_script_defaults) {
    task_config *c = calloc(1, sizeof *c);
    cgnn_err err;
    /* the homogeneous LP script with no trainerArgs: all of its defaults */
    ASSERT_EQ(load(c, "gd1.yaml", GD_LP "trainerConfig:\n  command: python -m examples.link_prediction.homogeneous_training\n", &err), 0);
    ASSERT_EQ(c->args.hidden_dim, 16);
    ASSERT_EQ(c->args.out_channels, 16);
    ASSERT_EQ(c->args.batch_size, 16);
    ASSERT_EQ(c->args.random_negative_sample_batch_size, 16);
    ASSERT_EQ(c->args.random_negative_sample_batch_size_for_evaluation, 16);
    ASSERT_NEAR(c->args.optim.lr, 0.0005, 0);
    ASSERT_NEAR(c->args.optim.weight_decay, 0.0005, 0);
    ASSERT_EQ(c->args.num_max_train_batches, 1000);
    ASSERT_EQ(c->args.num_val_batches, 100);
    ASSERT_EQ(c->args.val_every_num_batches, 50);
    ASSERT_EQ(c->args.log_every_n_batch, 25);
    ASSERT_EQ(c->args.num_fanouts, 2);
    ASSERT_EQ(c->args.fanouts[0], 10);
    ASSERT(has_note(c, "GiGL's defaults of examples/link_prediction/homogeneous_training.py for what trainerArgs "
                       "leaves out: hid_dim=16, out_dim=16, main_batch_size=16"));
    ASSERT(!has_note(c, "GiGL's names read as cgnn's")); /* defaults are not names the config gave */
    /* given arguments win, under GiGL's name, cgnn's name or another GiGL name for the same one */
    ASSERT_EQ(load(c, "gd2.yaml", GD_LP "trainerConfig:\n  trainerArgs:\n    hidden_dim: '64'\n"
                                  "    main_sample_batch_size: '128'\n    learning_rate: '0.01'\n    num_layers: '3'\n"
                                  "  command: python -m examples.link_prediction.homogeneous_training --flag\n", &err), 0);
    ASSERT_EQ(c->args.hidden_dim, 64);
    ASSERT_EQ(c->args.batch_size, 128);
    ASSERT_NEAR(c->args.optim.lr, 0.01, 0);
    ASSERT_EQ(c->args.num_layers, 3);
    ASSERT_EQ(c->args.num_fanouts, 3); /* num_layers given: the script's two-hop fanout is moot */
    ASSERT_EQ(c->args.random_negative_sample_batch_size, 16);
    ASSERT(has_note(c, "leaves out: out_dim=16, random_batch_size=16, weight_decay=0.0005"));
    /* the graph-store heterogeneous script: batch size 4 and HGT; a path to the file works too */
    ASSERT_EQ(load(c, "gd3.yaml", GD_LP "trainerConfig:\n  command: python examples/link_prediction/graph_store/heterogeneous_training.py\n", &err), 0);
    ASSERT_EQ(c->args.batch_size, 4);
    ASSERT_EQ(c->args.model, MODEL_HGT);
    /* an LP script named by a node classification config: the LP-only defaults are not taken */
    ASSERT_EQ(load(c, "gd4.yaml", GD_NC "trainerConfig:\n  command: python -m examples.link_prediction.homogeneous_training\n", &err), 0);
    ASSERT_EQ(c->args.hidden_dim, 16);
    ASSERT(!has_note(c, "random_batch_size"));
    /* the v1 LP task spec (trainerClsPath): its constructor's defaults */
    ASSERT_EQ(load(c, "gd5.yaml", GD_LP "trainerConfig:\n  trainerClsPath: gigl.src.common.modeling_task_specs."
                                  "node_anchor_based_link_prediction_modeling_task_spec.NodeAnchorBasedLinkPredictionModelingTaskSpec\n", &err), 0);
    ASSERT_EQ(c->args.batch_size, 2048);
    ASSERT_EQ(c->args.early_stop_patience, 3);
    ASSERT_NEAR(c->args.optim.lr, 0.005, 0);
    ASSERT_EQ(c->args.val_every_num_batches, 20);
    /* a command cgnn does not know: cgnn's own defaults, no note */
    ASSERT_EQ(load(c, "gd6.yaml", GD_LP "trainerConfig:\n  command: python -m my_team.train\n", &err), 0);
    ASSERT_EQ(c->args.hidden_dim, 256);
    ASSERT_EQ(c->args.batch_size, 512);
    ASSERT(!has_note(c, "GiGL's defaults"));
    free(c);
}

int main(void) {
    g_dir = test_tmpdir();
    RUN(example_script_names_lp);
    RUN(gigl_script_defaults);
    RUN(example_script_names_nc);
    RUN(conflicts);
    RUN(kept);
    RUN(no_effect_and_unread);
    RUN(ssl_positive_label_percentage);
    RUN(anchor_batching);
    RUN(graph_store_accepted);
    RUN(typos);
    RUN(scheduler);
    RUN(profiler);
    RUN(skip_model_evaluation);
    RUN(documented);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", g_dir);
    free(g_dir);
    return test_summary();
}
