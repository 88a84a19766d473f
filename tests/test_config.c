/* test_config.c — the task and resource config readers: every example under examples/ parses
 * to the expected fields, defaults of a minimal config, and one temporary YAML per error class
 * (each must fail with CGNN_ERR_INPUT and a message naming the file and the key). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/dataset.h"
#include "test.h"
#include "train/config.h"

static char *g_dir; /* temporary directory for the YAML files written here */

/* Writes text to g_dir/name; returns the path (static buffer, valid until the next call). */
static const char *write_yaml(const char *name, const char *text) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    if (test_write_file(g_dir, name, text, strlen(text)) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    return path;
}

static const char *example(const char *name) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/examples/%s", test_source_dir(), name);
    return path;
}

/* The common head of every error test: valid taskMetadata and sharedConfig. */
#define NC_HEAD                                                                                \
    "taskMetadata:\n"                                                                          \
    "  nodeBasedTaskMetadata: {supervisionNodeTypes: [paper]}\n"                               \
    "sharedConfig:\n"                                                                          \
    "  preprocessedMetadataUri: data/cora\n"                                                   \
    "  trainedModelMetadata:\n"                                                                \
    "    trainedModelUri: out/m.safetensors\n"

/* Loads text as a task config and checks that it fails with CGNN_ERR_INPUT and a message
 * that names the file and contains each of up to three needles. Returns 0 if so. */
static int expect_task_error(const char *name, const char *text, const char *n1, const char *n2,
                             const char *n3, char *msg_out) {
    const char *path = write_yaml(name, text);
    task_config c;
    cgnn_err err = {0};
    int rc = config_load_task(&c, path, &err);
    snprintf(msg_out, 1024, "%s", err.msg);
    fprintf(stderr, "  %s -> %s\n", name, err.msg);
    if (rc != -1 || err.code != CGNN_ERR_INPUT) return -1;
    if (!strstr(err.msg, path)) return -2;
    if (n1 && !strstr(err.msg, n1)) return -3;
    if (n2 && !strstr(err.msg, n2)) return -4;
    if (n3 && !strstr(err.msg, n3)) return -5;
    return 0;
}

#define EXPECT_TASK_ERROR(name, text, n1, n2, n3)                                              \
    do {                                                                                       \
        char msg_[1024];                                                                       \
        int r_ = expect_task_error(name, text, n1, n2, n3, msg_);                              \
        if (r_ != 0) TEST_FAIL_("%s: unexpected result %d: '%s'", name, r_, msg_);             \
    } while (0)

/* ---- examples ------------------------------------------------------------------- */

TEST(example_cora_graphsage) {
    task_config c;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_task(&c, example("cora_graphsage.yaml"), &err), 0);
    ASSERT_EQ(c.task, TASK_NODE_CLASSIFICATION);
    ASSERT(!strcmp(c.dataset_path, "data/cora"));
    ASSERT(!strcmp(c.trained_model_uri, "out/cora_graphsage/model.safetensors"));
    ASSERT(!strcmp(c.eval_metrics_uri, "out/cora_graphsage/eval_metrics.json"));
    ASSERT(!strcmp(c.tensorboard_logs_uri, "out/cora_graphsage/tensorboard/"));
    ASSERT(!strcmp(c.supervision_node_type, "paper"));
    ASSERT_EQ(c.should_skip_training, 0);
    ASSERT_EQ(c.should_skip_model_evaluation, 0);
    ASSERT_EQ(c.profiler_enabled, 0);
    ASSERT(!strcmp(c.profiler_log_dir, "out/cora_graphsage/profile"));
    const trainer_args *a = &c.args;
    ASSERT_EQ(a->model, MODEL_GRAPHSAGE);
    ASSERT_EQ(a->num_layers, 2);
    ASSERT_EQ(a->hidden_dim, 128);
    ASSERT_EQ(a->out_channels, 0);
    ASSERT_EQ(a->num_fanouts, 2);
    ASSERT_EQ(a->fanouts[0], 10);
    ASSERT_EQ(a->fanouts[1], 10);
    ASSERT_NEAR(a->dropout, 0.8, 1e-12);
    ASSERT_EQ(a->l2_normalize_output, 0);
    ASSERT_EQ(a->l2_normalize_set, 0);
    ASSERT(!strcmp(a->feature_normalization, "row"));
    ASSERT_EQ(a->batch_size, 140);
    ASSERT_EQ(a->num_epochs, 200);
    ASSERT_EQ(a->num_max_train_batches, 0);
    ASSERT_EQ(a->val_every_num_batches, 0);
    ASSERT(!strcmp(a->early_stop_criterion, "loss"));
    ASSERT_EQ(a->early_stop_patience, 20);
    ASSERT_EQ(a->num_workers, 2);
    ASSERT_EQ(a->optim.kind, OPTIM_ADAM);
    ASSERT_NEAR(a->optim.lr, 0.01, 0);
    ASSERT_NEAR(a->optim.weight_decay, 5e-4, 0);
    ASSERT_EQ(a->sched.kind, SCHED_CONSTANT);
    ASSERT_NEAR(a->sched.factor, 1.0, 0);
    ASSERT_EQ(a->sched.total_iters, 0);
}

TEST(example_cora_gcn) {
    task_config c;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_task(&c, example("cora_gcn.yaml"), &err), 0);
    ASSERT_EQ(c.task, TASK_NODE_CLASSIFICATION);
    ASSERT(!strcmp(c.dataset_path, "data/cora/metadata.yaml"));
    char meta[4200]; /* the example's dataset is in the repository */
    snprintf(meta, sizeof meta, "%s/%s", test_source_dir(), c.dataset_path);
    ASSERT_EQ(access(meta, R_OK), 0);
    ASSERT(!strcmp(c.trained_model_uri, "out/cora_gcn/model.safetensors"));
    ASSERT_EQ(c.args.model, MODEL_GCN);
    ASSERT_EQ(c.args.hidden_dim, 16);
    ASSERT_EQ(c.args.num_fanouts, 2);
    ASSERT_EQ(c.args.fanouts[0], -1);
    ASSERT_EQ(c.args.fanouts[1], -1);
    ASSERT_EQ(c.args.optim.kind, OPTIM_ADAM);
    ASSERT_EQ(c.profiler_enabled, 0);
    ASSERT_EQ(c.profiler_log_dir[0], '\0');
}

/* GiGL's HGT by its class path; num_heads divides hidden_dim */
TEST(example_dblp_hgt) {
    task_config c;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_task(&c, example("dblp_hgt.yaml"), &err), 0);
    ASSERT_EQ(c.args.model, MODEL_HGT);
    ASSERT_EQ(c.args.num_heads, 2);
    ASSERT_EQ(c.args.hidden_dim, 64);
    ASSERT_EQ(c.args.num_layers, 2);
    ASSERT_EQ(c.args.fanouts[0], -1);
    ASSERT_NEAR(c.args.dropout, 0.5, 0);
    ASSERT_NEAR(c.args.optim.lr, 0.001, 0);
    ASSERT_NEAR(c.args.optim.weight_decay, 0.0, 0);
}

TEST(example_cora_gat) {
    task_config c;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_task(&c, example("cora_gat.yaml"), &err), 0);
    ASSERT_EQ(c.args.model, MODEL_GAT);
    ASSERT_EQ(c.args.num_heads, 8);
    ASSERT_EQ(c.args.hidden_dim, 64);
    ASSERT_EQ(c.args.hidden_dim % c.args.num_heads, 0);
    ASSERT_NEAR(c.args.optim.lr, 0.005, 0);
    ASSERT_NEAR(c.args.optim.weight_decay, 5e-4, 0);
    ASSERT_EQ(c.args.fanouts[0], -1);
}

TEST(example_facebook_graphsage) {
    task_config c;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_task(&c, example("facebook_graphsage.yaml"), &err), 0);
    ASSERT_EQ(c.task, TASK_NODE_CLASSIFICATION);
    ASSERT(!strcmp(c.dataset_path, "data/facebook"));
    ASSERT(!strcmp(c.supervision_node_type, "page"));
    ASSERT_EQ(c.args.hidden_dim, 256);
    ASSERT_EQ(c.args.fanouts[0], 15);
    ASSERT_EQ(c.args.fanouts[1], 10);
    ASSERT_EQ(c.args.batch_size, 512);
    ASSERT_EQ(c.args.num_epochs, 20);
    ASSERT_NEAR(c.args.optim.weight_decay, 0, 0);
    ASSERT_EQ(c.args.sched.kind, SCHED_STEP);
    ASSERT_EQ(c.args.sched.step_size, 250);
    ASSERT_NEAR(c.args.sched.gamma, 0.5, 0);
    ASSERT(!strcmp(c.args.early_stop_criterion, "acc"));
    ASSERT_EQ(c.args.early_stop_patience, 5);
}

TEST(example_resource) {
    resource_config r;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_resource(&r, example("resource.yaml"), &err), 0);
    ASSERT_EQ(r.num_workers, 2);
    ASSERT_EQ(r.num_replicas, 0);
    ASSERT_EQ(r.num_threads_per_replica, 0);
    ASSERT_EQ(config_load_resource(&r, NULL, &err), 0);
    ASSERT_EQ(r.num_workers, 0);
    ASSERT_EQ(config_load_resource(&r, "", &err), 0);
}

/* ---- defaults and accepted spellings ---------------------------------------------- */

TEST(minimal_defaults) {
    const char *path = write_yaml("minimal.yaml", NC_HEAD);
    task_config c;
    cgnn_err err = {0};
    if (config_load_task(&c, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.task, TASK_NODE_CLASSIFICATION);
    ASSERT(!strcmp(c.file, path));
    ASSERT_EQ(c.eval_metrics_uri[0], '\0');
    ASSERT_EQ(c.tensorboard_logs_uri[0], '\0');
    const trainer_args *a = &c.args;
    ASSERT_EQ(a->model, MODEL_GRAPHSAGE);
    ASSERT_EQ(a->num_layers, 2);
    ASSERT_EQ(a->hidden_dim, 256);
    ASSERT_EQ(a->out_channels, 0);
    ASSERT_EQ(a->num_fanouts, 2);
    ASSERT_EQ(a->fanouts[0], 10);
    ASSERT_EQ(a->fanouts[1], 10);
    ASSERT_EQ(a->fanouts[2], 0);
    ASSERT_NEAR(a->dropout, 0.5, 0);
    ASSERT_EQ(a->num_heads, 2);
    ASSERT_EQ(a->l2_normalize_output, 0);
    ASSERT_EQ(a->l2_normalize_set, 0);
    ASSERT(!strcmp(a->feature_normalization, "none"));
    ASSERT_EQ(a->batch_size, 512);
    ASSERT_EQ(a->num_epochs, 1);
    ASSERT_EQ(a->num_max_train_batches, 0);
    ASSERT_EQ(a->val_every_num_batches, 0);
    ASSERT_EQ(a->num_val_batches, 0);
    ASSERT_EQ(a->num_test_batches, 0);
    ASSERT(!strcmp(a->early_stop_criterion, "loss"));
    ASSERT_EQ(a->early_stop_patience, 0);
    ASSERT_EQ(a->checkpoint_every_n_batches, 0);
    ASSERT_EQ(a->num_workers, 2);
    ASSERT_EQ(a->seed, 0);
    ASSERT_EQ(a->replace, 0);
    ASSERT_EQ(a->optim.kind, OPTIM_ADAM);
    ASSERT_NEAR(a->optim.lr, 0.01, 0);
    ASSERT_NEAR(a->optim.weight_decay, 0, 0);
    ASSERT_NEAR(a->optim.beta1, 0.9, 0);
    ASSERT_NEAR(a->clip_grad_norm, 0, 0);
    ASSERT_EQ(a->sched.kind, SCHED_CONSTANT);
    ASSERT_NEAR(a->sched.factor, 1.0, 0);
    ASSERT_EQ(a->sched.total_iters, 0);
    ASSERT_NEAR(a->softmax_temp, 0.07, 0);
    ASSERT_EQ(a->should_remove_accidental_hits, 1);
    ASSERT_EQ(a->random_negative_sample_batch_size, 512);
    ASSERT_EQ(c.should_skip_training, 0);
    ASSERT_EQ(c.profiler_enabled, 0);

    trainer_args d;
    config_default_trainer_args(&d, TASK_NODE_CLASSIFICATION);
    ASSERT_EQ(memcmp(&d, a, sizeof d), 0);
}

TEST(link_prediction_and_spellings) {
    const char *path = write_yaml(
        "lp.yaml",
        "graphMetadata:\n"
        "  nodeTypes: [user]\n"
        "  edgeTypes: [{srcNodeType: user, relation: friend, dstNodeType: user}]\n"
        "taskMetadata:\n"
        "  nodeAnchorBasedLinkPredictionTaskMetadata:\n"
        "    supervisionEdgeTypes: [{srcNodeType: user, relation: friend, dstNodeType: user}]\n"
        "sharedConfig:\n"
        "  preprocessedMetadataUri: file:///data/facebook-lp/metadata.yaml\n"
        "  trainedModelMetadata:\n"
        "    trainedModelUri: file://out/lp/model.safetensors\n"
        "    evalMetricsUri: \"\"\n"
        "  shouldSkipTraining: \"TRUE\"\n"
        "  shouldSkipModelEvaluation: False\n"
        "  shouldSkipInference: true\n"
        "trainerConfig:\n"
        "  trainerClsPath: gigl.src.common.modeling_task_specs.NodeAnchorBasedLinkPredictionModelingTaskSpec\n"
        "  trainerArgs:\n"
        "    gnn_model_class_path: gigl.src.common.models.pyg.homogeneous.GraphSAGE\n"
        "    num_layers: 3\n"
        "    num_neighbors: [5, -1, 2]\n"
        "    out_channels: '64'\n"
        "    num_max_train_batches: '1000'\n"
        "    optim_class_path: torch.optim.SGD\n"
        "    optim_lr: 1e-3\n"
        "    optim_momentum: '0.9'\n"
        "    lr_scheduler_name: torch.optim.lr_scheduler.ConstantLR\n"
        "    lr_scheduler_total_iters: '7'\n"
        "    early_stop_criterion: mrr\n"
        "    random_negative_sample_batch_size: '256'\n"
        "    random_negative_sample_batch_size_for_evaluation: '1000'\n"
        "    softmax_temp: '0.1'\n"
        "    should_remove_accidental_hits: 'False'\n"
        "    task_path: gigl.src.common.models.layers.task.Retrieval\n"
        "    sample_with_replacement: 'true'\n"
        "    seed: '42'\n"
        "profilerConfig:\n"
        "  shouldEnableProfiler: 'true'\n"
        "  profilerLogDir: file:///tmp/prof\n"
        "  profilerArgs: {wait: '1'}\n"
        "featureFlags: {x: y}\n"
        "inferencerConfig: {inferencerArgs: {a: b}}\n"
        "datasetConfig: {}\n"
        "metricsConfig: {}\n");
    task_config c;
    cgnn_err err = {0};
    if (config_load_task(&c, path, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.task, TASK_LINK_PREDICTION);
    ASSERT(!strcmp(c.dataset_path, "/data/facebook-lp/metadata.yaml"));
    ASSERT(!strcmp(c.trained_model_uri, "out/lp/model.safetensors"));
    ASSERT_EQ(c.eval_metrics_uri[0], '\0');
    ASSERT_EQ(c.should_skip_training, 1);
    ASSERT_EQ(c.should_skip_model_evaluation, 0);
    ASSERT(!strcmp(c.supervision_edge_type.src_node_type, "user"));
    ASSERT(!strcmp(c.supervision_edge_type.relation, "friend"));
    ASSERT(!strcmp(c.supervision_edge_type.dst_node_type, "user"));
    ASSERT_EQ(c.profiler_enabled, 1);
    ASSERT(!strcmp(c.profiler_log_dir, "/tmp/prof"));
    const trainer_args *a = &c.args;
    ASSERT_EQ(a->model, MODEL_GRAPHSAGE);
    ASSERT_EQ(a->num_layers, 3);
    ASSERT_EQ(a->num_fanouts, 3);
    ASSERT_EQ(a->fanouts[0], 5);
    ASSERT_EQ(a->fanouts[1], -1);
    ASSERT_EQ(a->fanouts[2], 2);
    ASSERT_EQ(a->out_channels, 64);
    ASSERT_EQ(a->l2_normalize_output, 1); /* LP default */
    ASSERT_EQ(a->l2_normalize_set, 0);
    ASSERT_EQ(a->num_max_train_batches, 1000);
    ASSERT_EQ(a->num_epochs, CONFIG_UNLIMITED_EPOCHS);
    ASSERT_EQ(a->optim.kind, OPTIM_SGD);
    ASSERT_NEAR(a->optim.lr, 1e-3, 0);
    ASSERT_NEAR(a->optim.momentum, 0.9, 0);
    ASSERT_EQ(a->sched.kind, SCHED_CONSTANT);
    ASSERT_NEAR(a->sched.factor, 1.0 / 3.0, 1e-12); /* torch default when named */
    ASSERT_EQ(a->sched.total_iters, 7);
    ASSERT(!strcmp(a->early_stop_criterion, "mrr"));
    ASSERT_EQ(a->random_negative_sample_batch_size, 256);
    ASSERT_EQ(a->random_negative_sample_batch_size_for_evaluation, 1000);
    ASSERT_NEAR(a->softmax_temp, 0.1, 0);
    ASSERT_EQ(a->should_remove_accidental_hits, 0);
    ASSERT_EQ(a->replace, 1);
    ASSERT_EQ(a->seed, 42);
}

TEST(epochs_and_batches) {
    task_config c;
    cgnn_err err = {0};
    /* both given: both bound the run */
    const char *p = write_yaml("both.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n"
                                            "    num_epochs: '3'\n    num_max_train_batches: '10'\n");
    if (config_load_task(&c, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.num_epochs, 3);
    ASSERT_EQ(c.args.num_max_train_batches, 10);
    /* num_max_train_batches 0 alone: no batch bound, so the epoch default stays */
    p = write_yaml("zero.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_max_train_batches: '0'\n");
    if (config_load_task(&c, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.num_epochs, 1);
    /* the training-state checkpoint interval */
    p = write_yaml("ckpt.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    checkpoint_every_n_batches: '25'\n");
    if (config_load_task(&c, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.checkpoint_every_n_batches, 25);
    /* accuracy is stored as acc; LinearLR, CosineAnnealingLR, AdamW defaults */
    p = write_yaml("misc.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n"
                                        "    early_stop_criterion: accuracy\n"
                                        "    optim_class_path: AdamW\n"
                                        "    lr_scheduler_name: CosineAnnealingLR\n"
                                        "    lr_scheduler_t_max: '100'\n"
                                        "    should_l2_normalize_embedding_layer_output: 'True'\n"
                                        "    num_layers: '1'\n    num_neighbors: '-1'\n");
    if (config_load_task(&c, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT(!strcmp(c.args.early_stop_criterion, "acc"));
    ASSERT_EQ(c.args.optim.kind, OPTIM_ADAMW);
    ASSERT_NEAR(c.args.optim.weight_decay, 0.01, 0); /* torch's AdamW default */
    ASSERT_EQ(c.args.sched.kind, SCHED_COSINE);
    ASSERT_EQ(c.args.sched.t_max, 100);
    ASSERT_NEAR(c.args.sched.eta_min, 0, 0);
    ASSERT_EQ(c.args.l2_normalize_output, 1);
    ASSERT_EQ(c.args.l2_normalize_set, 1);
    ASSERT_EQ(c.args.num_fanouts, 1);
    ASSERT_EQ(c.args.fanouts[0], -1);
    ASSERT_EQ(c.args.fanouts[1], 0);
}

TEST(trainer_arg_keys) {
    int n = 0;
    for (const char *const *k = CONFIG_TRAINER_ARG_KEYS; *k; k++) n++;
    ASSERT_EQ(n, 64);
    ASSERT(!strcmp(CONFIG_TRAINER_ARG_KEYS[0], "gnn_model_class_path"));
    int has_drop = 0, has_feature = 0;
    for (const char *const *k = CONFIG_TRAINER_ARG_KEYS; *k; k++) {
        has_drop |= !strcmp(*k, "drop_uneven_inputs");
        has_feature |= !strcmp(*k, "node_feature");
    }
    ASSERT(has_drop);
    ASSERT(has_feature);
    /* node_feature: a name; ':' or '/' in it is refused naming the key */
    task_config c;
    cgnn_err err = {0};
    ASSERT_EQ(config_load_task(&c, write_yaml("nf.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    node_feature: x2\n"), &err), 0);
    ASSERT(!strcmp(c.args.node_feature, "x2"));
    ASSERT(config_load_task(&c, write_yaml("nf2.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    node_feature: a/b\n"), &err) != 0);
    ASSERT(strstr(err.msg, "trainerArgs.node_feature") != NULL);
}

TEST(seed_assignment_args) {
    task_config c;
    cgnn_err err = {0};
    const char *head = "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                       "sharedConfig: {preprocessedMetadataUri: d, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                       "trainerConfig:\n  trainerArgs:\n";
    char y[1024];
    snprintf(y, sizeof y, "%s", head);
    if (config_load_task(&c, write_yaml("sa0.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.seed_assignment, SEED_ASSIGN_AUTO);
    ASSERT_NEAR(c.args.rpc_timeout_s, 60, 0);
    snprintf(y, sizeof y, "%s    seed_assignment: global\n    rpc_timeout_s: \"2.5\"\n", head);
    if (config_load_task(&c, write_yaml("sa1.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.seed_assignment, SEED_ASSIGN_GLOBAL);
    ASSERT_NEAR(c.args.rpc_timeout_s, 2.5, 0);
    snprintf(y, sizeof y, "%s    seed_partition_uri: file:///tmp/parts\n", head);
    if (config_load_task(&c, write_yaml("sa2.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.seed_assignment, SEED_ASSIGN_LOCAL);
    ASSERT(!strcmp(c.args.seed_partition, "/tmp/parts"));
    snprintf(y, sizeof y, "%s    seed_assignment: everywhere\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("sa3.yaml", y), &err), -1);
    ASSERT(strstr(err.msg, "seed_assignment") && strstr(err.msg, "expected local"));
    snprintf(y, sizeof y, "%s    seed_assignment: global\n    seed_partition_uri: p\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("sa4.yaml", y), &err), -1);
    ASSERT(strstr(err.msg, "contradicts seed_assignment: global"));
    snprintf(y, sizeof y, "%s    rpc_timeout_s: \"0\"\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("sa5.yaml", y), &err), -1);
    ASSERT(strstr(err.msg, "rpc_timeout_s"));
}

TEST(embedding_and_lp_args) {
    task_config c;
    const char *p;
    cgnn_err err = {0};
    p = write_yaml("lp.yaml", "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"
                          "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                          "trainerConfig:\n  trainerArgs:\n    node_embedding_dim: \"16\"\n"
                          "    embedding_optim_class_path: torch.optim.Adagrad\n    embedding_lr: \"0.1\"\n"
                          "    exclude_seed_edges: \"True\"\n");
    if (config_load_task(&c, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.node_embedding_dim, 16);
    ASSERT(!strcmp(c.args.embedding_optim, "Adagrad"));
    ASSERT_NEAR(c.args.embedding_lr, 0.1, 1e-12);
    ASSERT_EQ(c.args.exclude_seed_edges, 1);
    p = write_yaml("lp.yaml", "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"
                          "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                          "trainerConfig:\n  trainerArgs:\n    embedding_optim_class_path: Adam\n");
    ASSERT_EQ(config_load_task(&c, p, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT(strstr(err.msg, "embedding_optim_class_path") && strstr(err.msg, "SparseAdam"));
    /* exclude_seed_edges is a link-prediction argument */
    p = write_yaml("lp.yaml", "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                          "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                          "trainerConfig:\n  trainerArgs:\n    exclude_seed_edges: \"true\"\n");
    ASSERT_EQ(config_load_task(&c, p, &err), -1);
    ASSERT(strstr(err.msg, "exclude_seed_edges"));
    /* early stopping on ROC-AUC / average precision (link prediction only) */
    const char *crit[2][2] = {{"AUC", "auc"}, {"ap", "ap"}};
    for (int k = 0; k < 2; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"
                 "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                 "trainerConfig:\n  trainerArgs:\n    early_stop_criterion: %s\n", crit[k][0]);
        p = write_yaml("lp.yaml", text);
        if (config_load_task(&c, p, &err) != 0) TEST_FAIL_("%s", err.msg);
        ASSERT(!strcmp(c.args.early_stop_criterion, crit[k][1]));
    }
    p = write_yaml("lp.yaml", "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"
                          "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                          "trainerConfig:\n  trainerArgs:\n    early_stop_criterion: acc\n");
    ASSERT_EQ(config_load_task(&c, p, &err), -1);
    ASSERT(strstr(err.msg, "loss, mrr, auc, ap, recall_at_K or ndcg_at_K"));
}

#define LP_HEAD                                                                                \
    "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"                       \
    "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n" \
    "trainerConfig:\n  trainerArgs:\n"

/* task_path: one task (GiGL), several with weights and arguments (a YAML mapping, or the same
 * written as a string), and what is refused. */
TEST(lp_task_path) {
    task_config c;
    cgnn_err err = {0};
    /* default: Retrieval of weight 1 with softmax_temp and should_remove_accidental_hits */
    if (config_load_task(&c, write_yaml("t.yaml", LP_HEAD "    softmax_temp: '0.2'\n"
                                                          "    should_remove_accidental_hits: 'false'\n"), &err) != 0)
        TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.num_lp_tasks, 1);
    ASSERT_EQ(c.args.lp_tasks[0].kind, LP_TASK_RETRIEVAL);
    ASSERT(c.args.lp_tasks[0].weight == 1.0 && c.args.lp_tasks[0].temperature == 0.2);
    ASSERT_EQ(c.args.lp_tasks[0].remove_accidental_hits, 0);
    /* one task by name or GiGL path */
    if (config_load_task(&c, write_yaml("t.yaml", LP_HEAD "    task_path: gigl.src.common.models.layers.task.Margin\n"),
                         &err) != 0)
        TEST_FAIL_("%s", err.msg);
    ASSERT(c.args.num_lp_tasks == 1 && c.args.lp_tasks[0].kind == LP_TASK_MARGIN && c.args.lp_tasks[0].margin == 0.5);
    /* a YAML mapping: weights and each task's own arguments, in config order */
    if (config_load_task(&c, write_yaml("t.yaml", LP_HEAD "    softmax_temp: '0.1'\n    task_path:\n"
                                                          "      Retrieval: 1.0\n"
                                                          "      BPR: {weight: 0.5, num_negatives: 4}\n"
                                                          "      DirectAU: {gamma: '0.5', alpha: 2, temperature: 3}\n"
                                                          "      Softmax: {softmax_temperature: 0.2}\n"
                                                          "      Margin: {margin: -0.25, weight: 2}\n"), &err) != 0)
        TEST_FAIL_("%s", err.msg);
    const lp_task *t = c.args.lp_tasks;
    ASSERT_EQ(c.args.num_lp_tasks, 5);
    ASSERT(t[0].kind == LP_TASK_RETRIEVAL && t[0].weight == 1.0 && t[0].temperature == 0.1);
    ASSERT(t[1].kind == LP_TASK_BPR && t[1].weight == 0.5 && t[1].num_negatives == 4);
    ASSERT(t[2].kind == LP_TASK_DIRECTAU && t[2].weight == 1.0 && t[2].gamma == 0.5 && t[2].alpha == 2.0 &&
           t[2].temperature == 3.0);
    ASSERT(t[3].kind == LP_TASK_SOFTMAX && t[3].softmax_temperature == 0.2);
    ASSERT(t[4].kind == LP_TASK_MARGIN && t[4].weight == 2.0 && t[4].margin == -0.25);
    /* the same as a string (GiGL's trainerArgs are strings): YAML flow form; a task without a
     * value has weight 1; Retrieval's own argument names */
    if (config_load_task(&c, write_yaml("t.yaml", LP_HEAD "    task_path: \"{gigl.src.common.models.layers.task."
                                                          "Retrieval: {temperature: 0.3, remove_accidental_hits: "
                                                          "false}, BPR}\"\n"), &err) != 0)
        TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.num_lp_tasks, 2);
    ASSERT(t[0].kind == LP_TASK_RETRIEVAL && t[0].temperature == 0.3 && t[0].remove_accidental_hits == 0);
    ASSERT(t[1].kind == LP_TASK_BPR && t[1].weight == 1.0 && t[1].num_negatives == 1);
    /* errors name the argument, the task and the problem */
    EXPECT_TASK_ERROR("tp1.yaml", LP_HEAD "    task_path: GRACE\n", "task_path", "unsupported task 'GRACE'", NULL);
    EXPECT_TASK_ERROR("tp2.yaml", LP_HEAD "    task_path: {BPR: {num_negative: 2}}\n", "task_path.BPR",
                      "did you mean 'num_negatives'", NULL);
    EXPECT_TASK_ERROR("tp3.yaml", LP_HEAD "    task_path: {Softmax: 1, gigl.src.common.models.layers.task.Softmax: 2}\n",
                      "task_path", "listed twice", NULL);
    EXPECT_TASK_ERROR("tp4.yaml", LP_HEAD "    task_path: {Retrieval: 0}\n", "task_path.Retrieval", "> 0", NULL);
    EXPECT_TASK_ERROR("tp5.yaml", LP_HEAD "    task_path: \"{BPR: [}\"\n", "trainerConfig.trainerArgs.task_path",
                      NULL, NULL);
    EXPECT_TASK_ERROR("tp6.yaml", LP_HEAD "    task_path: \"{Margin: {margin: x}}\"\n",
                      "trainerConfig.trainerArgs.task_path (line", "Margin.margin", "expected a number");
    EXPECT_TASK_ERROR("tp7.yaml", LP_HEAD "    random_negative_sample_batch_size: '3'\n    task_path: {BPR: "
                                          "{num_negatives: 4}}\n", "task_path", "num_negatives 4", "random negatives");
    EXPECT_TASK_ERROR("tp8.yaml", LP_HEAD "    softmax_temp: '0.1'\n    task_path: {Retrieval: {temperature: 0.2}}\n",
                      "task_path.Retrieval.temperature", "softmax_temp", NULL);
    EXPECT_TASK_ERROR("tp9.yaml", LP_HEAD "    task_path: {DirectAU: {alpha: 0}}\n", "DirectAU.alpha", "> 0", NULL);
    EXPECT_TASK_ERROR("tp10.yaml", LP_HEAD "    task_path: {}\n", "task_path", "no task", NULL);
    EXPECT_TASK_ERROR("tp11.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    task_path: BPR\n", "task_path",
                      "link prediction", NULL);
    EXPECT_TASK_ERROR("tp12.yaml", LP_HEAD "    task_path: [BPR]\n", "task_path", "a list", NULL);
}

/* num_layers 0 (the learnable embeddings alone) and the embedding table's arguments. */
TEST(mf_and_embedding_args) {
    task_config c;
    cgnn_err err = {0};
    if (config_load_task(&c, write_yaml("m.yaml", LP_HEAD "    num_layers: '0'\n    node_embedding_dim: '32'\n"), &err) != 0)
        TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.num_layers, 0);
    ASSERT_EQ(c.args.num_fanouts, 0);
    ASSERT_EQ(c.args.fanouts[0], 0);
    ASSERT_EQ(c.args.l2_normalize_output, 0); /* raw dot products unless asked */
    ASSERT(c.args.node_embedding_init_std == 1.0 && c.args.node_embedding_reg == 0.0 &&
           c.args.embedding_weight_decay == 0.0); /* defaults: torch.nn.Embedding's N(0, 1), no regularisation */
    if (config_load_task(&c, write_yaml("m.yaml", LP_HEAD "    num_layers: '0'\n    node_embedding_dim: '32'\n"
                                                          "    out_channels: '32'\n"
                                                          "    should_l2_normalize_embedding_layer_output: 'true'\n"
                                                          "    node_embedding_init_std: '0.1'\n"
                                                          "    node_embedding_reg: '1e-4'\n"
                                                          "    embedding_optim_class_path: SGD\n"
                                                          "    embedding_weight_decay: '0.01'\n"), &err) != 0)
        TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.l2_normalize_output, 1);
    ASSERT(c.args.node_embedding_init_std == 0.1 && c.args.node_embedding_reg == 1e-4 &&
           c.args.embedding_weight_decay == 0.01);
    EXPECT_TASK_ERROR("m1.yaml", LP_HEAD "    num_layers: '0'\n", "num_layers", "node_embedding_dim", NULL);
    EXPECT_TASK_ERROR("m2.yaml", LP_HEAD "    num_layers: '0'\n    node_embedding_dim: '8'\n    num_neighbors: '[5]'\n",
                      "num_neighbors", "num_layers is 0", NULL);
    EXPECT_TASK_ERROR("m3.yaml", LP_HEAD "    num_layers: '0'\n    node_embedding_dim: '8'\n    out_channels: '4'\n",
                      "out_channels", "node_embedding_dim (8)", NULL);
    EXPECT_TASK_ERROR("m4.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_layers: '0'\n    node_embedding_dim: '8'\n",
                      "num_layers", "link prediction", NULL);
    EXPECT_TASK_ERROR("m5.yaml", LP_HEAD "    node_embedding_init_std: '0.1'\n", "node_embedding_init_std",
                      "set node_embedding_dim", NULL);
    EXPECT_TASK_ERROR("m6.yaml", LP_HEAD "    node_embedding_dim: '8'\n    node_embedding_init_std: '0'\n",
                      "node_embedding_init_std", "> 0", NULL);
    EXPECT_TASK_ERROR("m7.yaml", LP_HEAD "    node_embedding_dim: '8'\n    embedding_weight_decay: '-1'\n",
                      "embedding_weight_decay", ">= 0", NULL);
    EXPECT_TASK_ERROR("m8.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    node_embedding_dim: '8'\n"
                                         "    node_embedding_reg: '0.1'\n", "node_embedding_reg", "link prediction", NULL);
}

TEST(profiler_args) {
    task_config c;
    cgnn_err err = {0};
    const char *head = "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                       "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m}}\n";
    char text[1024];
    snprintf(text, sizeof text, "%sprofilerConfig:\n  shouldEnableProfiler: true\n  profilerLogDir: /tmp/p\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("prof_default.yaml", text), &err), 0);
    ASSERT_EQ(c.profiler_wait, 5); /* GiGL's TorchProfiler defaults (profiler_wrapper.py) */
    ASSERT_EQ(c.profiler_warmup, 2);
    ASSERT_EQ(c.profiler_active, 2);
    ASSERT_EQ(c.profiler_repeat, 1);
    snprintf(text, sizeof text,
             "%sprofilerConfig:\n  shouldEnableProfiler: true\n  profilerLogDir: /tmp/p\n"
             "  profilerArgs: {wait: \"0\", warmup: \"2\", active: \"5\"}\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("prof_args.yaml", text), &err), 0);
    ASSERT_EQ(c.profiler_wait, 0);
    ASSERT_EQ(c.profiler_warmup, 2);
    ASSERT_EQ(c.profiler_active, 5);
    snprintf(text, sizeof text, "%sprofilerConfig:\n  profilerArgs: {activ: \"5\"}\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("prof_typo.yaml", text), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "did you mean 'active'");
    snprintf(text, sizeof text, "%sprofilerConfig:\n  profilerArgs: {active: \"0\"}\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("prof_zero.yaml", text), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "profilerArgs.active");
}

TEST(resolve_uri) {
    char out[64];
    cgnn_err err = {0};
    ASSERT_EQ(config_resolve_uri(out, sizeof out, "file:///a/b", "x", &err), 0);
    ASSERT(!strcmp(out, "/a/b"));
    ASSERT_EQ(config_resolve_uri(out, sizeof out, "rel/path.yaml", "x", &err), 0);
    ASSERT(!strcmp(out, "rel/path.yaml"));
    ASSERT_EQ(config_resolve_uri(out, sizeof out, "s3://bucket/k", "WHAT", &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "WHAT: unsupported URI scheme 's3://'");
    ASSERT_EQ(config_resolve_uri(out, 8, "file://0123456789", "x", &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "too long");
    ASSERT_EQ(config_resolve_uri(out, sizeof out, "file://", "x", &err), -1);
    ASSERT_EQ(config_load_task(&(task_config){0}, "gs://b/task.yaml", &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "gs://b/task.yaml");
    ASSERT_EQ(config_load_task(&(task_config){0}, "/nonexistent/cgnn/task.yaml", &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "/nonexistent/cgnn/task.yaml");
}

/* ---- one YAML per error ---------------------------------------------------------- */

TEST(err_malformed_yaml) {
    EXPECT_TASK_ERROR("malformed.yaml", NC_HEAD "trainerConfig:\n  trainerArgs: {hidden_dim: '8'\n", NULL,
                      NULL, NULL);
}

TEST(err_unknown_top_level) {
    EXPECT_TASK_ERROR("top.yaml", NC_HEAD "trainerConfg:\n  trainerArgs: {}\n", "trainerConfg",
                      "did you mean 'trainerConfig'?", NULL);
}

TEST(err_unknown_trainer_arg) {
    char msg[1024];
    const char *text = NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_layers: '2'\n    hiden_dim: '64'\n";
    ASSERT_EQ(expect_task_error("typo.yaml", text, NULL, NULL, NULL, msg), 0);
    char want[4096 + 128];
    snprintf(want, sizeof want,
             "%s/typo.yaml: trainerConfig.trainerArgs.hiden_dim (line 10): unknown trainer argument; "
             "did you mean 'hidden_dim'?",
             g_dir);
    if (strcmp(msg, want) != 0) TEST_FAIL_("got '%s'\nwant '%s'", msg, want);
}

TEST(err_bad_integer) {
    EXPECT_TASK_ERROR("int.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    hidden_dim: '2x'\n",
                      "trainerConfig.trainerArgs.hidden_dim", "'2x'", "line 9");
}

TEST(err_bad_bool) {
    EXPECT_TASK_ERROR("bool.yaml", NC_HEAD "  shouldSkipTraining: 'yes'\n", "sharedConfig.shouldSkipTraining",
                      "'yes'", NULL);
    EXPECT_TASK_ERROR("bool2.yaml",
                      NC_HEAD "trainerConfig:\n  trainerArgs:\n    sample_with_replacement: '1'\n",
                      "sample_with_replacement", "true or false", NULL);
}

TEST(err_dropout_range) {
    EXPECT_TASK_ERROR("dropout.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    dropout: '1.0'\n",
                      "trainerConfig.trainerArgs.dropout", "[0, 1)", NULL);
    EXPECT_TASK_ERROR("dropout2.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    dropout: .nan\n",
                      "dropout", "finite", NULL);
}

TEST(err_fanouts_length) {
    EXPECT_TASK_ERROR("fanlen.yaml",
                      NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_neighbors: '[15, 10, 5]'\n"
                              "    num_layers: '2'\n",
                      "trainerConfig.trainerArgs.num_neighbors", "num_layers is 2", "3 fanouts");
    EXPECT_TASK_ERROR("fanlen2.yaml",
                      NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_neighbors: [1,1,1,1,1,1,1,1,1,1]\n",
                      "num_neighbors", "num_layers", "10 fanouts");
}

TEST(err_fanout_zero) {
    EXPECT_TASK_ERROR("fan0.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_neighbors: '[10, 0]'\n",
                      "trainerConfig.trainerArgs.num_neighbors", "entry 1 is 0", NULL);
    EXPECT_TASK_ERROR("fan1.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_neighbors: '[10, x]'\n",
                      "num_neighbors", "entry 1", NULL);
    EXPECT_TASK_ERROR("fan2.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_neighbors: '[10, 10'\n",
                      "num_neighbors", "brackets", NULL);
    EXPECT_TASK_ERROR("fan3.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_neighbors: '[10,,10]'\n",
                      "num_neighbors", "empty", NULL);
}

TEST(err_missing_dataset) {
    EXPECT_TASK_ERROR("nodata.yaml",
                      "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                      "sharedConfig:\n  trainedModelMetadata: {trainedModelUri: m.safetensors}\n",
                      "sharedConfig", "preprocessedMetadataUri", NULL);
    EXPECT_TASK_ERROR("nomodel.yaml",
                      "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                      "sharedConfig:\n  preprocessedMetadataUri: d\n  trainedModelMetadata: {}\n",
                      "trainedModelMetadata", "trainedModelUri", NULL);
}

TEST(err_gs_uri) {
    EXPECT_TASK_ERROR("gs.yaml",
                      "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                      "sharedConfig:\n  preprocessedMetadataUri: d\n"
                      "  trainedModelMetadata: {trainedModelUri: 'gs://bucket/model.pt'}\n",
                      "sharedConfig.trainedModelMetadata.trainedModelUri",
                      "unsupported URI scheme 'gs://' (cgnn reads and writes local files; use a path or file://)",
                      NULL);
}

TEST(err_task_metadata) {
    EXPECT_TASK_ERROR("both.yaml",
                      "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                      "  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"
                      "sharedConfig:\n  preprocessedMetadataUri: d\n"
                      "  trainedModelMetadata: {trainedModelUri: m}\n",
                      "taskMetadata", "nodeBasedTaskMetadata", "nodeAnchorBasedLinkPredictionTaskMetadata");
    EXPECT_TASK_ERROR("neither.yaml",
                      "taskMetadata: {}\n"
                      "sharedConfig:\n  preprocessedMetadataUri: d\n"
                      "  trainedModelMetadata: {trainedModelUri: m}\n",
                      "taskMetadata", "nodeBasedTaskMetadata", "nodeAnchorBasedLinkPredictionTaskMetadata");
    EXPECT_TASK_ERROR("absent.yaml",
                      "sharedConfig:\n  preprocessedMetadataUri: d\n"
                      "  trainedModelMetadata: {trainedModelUri: m}\n",
                      "taskMetadata", NULL, NULL);
}

TEST(err_step_lr_without_step_size) {
    EXPECT_TASK_ERROR("steplr.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    lr_scheduler_name: StepLR\n",
                      "trainerConfig.trainerArgs.lr_scheduler_name", "lr_scheduler_step_size", NULL);
    EXPECT_TASK_ERROR("cos.yaml",
                      NC_HEAD "trainerConfig:\n  trainerArgs:\n    lr_scheduler_name: CosineAnnealingLR\n",
                      "lr_scheduler_name", "lr_scheduler_t_max", NULL);
    EXPECT_TASK_ERROR("wrongarg.yaml",
                      NC_HEAD "trainerConfig:\n  trainerArgs:\n    lr_scheduler_name: StepLR\n"
                              "    lr_scheduler_step_size: '5'\n    lr_scheduler_t_max: '5'\n",
                      "trainerConfig.trainerArgs.lr_scheduler_t_max", "StepLR", NULL);
    EXPECT_TASK_ERROR("noname.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    lr_scheduler_gamma: '0.5'\n",
                      "trainerConfig.trainerArgs.lr_scheduler_gamma", "lr_scheduler_name", NULL);
}

TEST(err_other_values) {
    EXPECT_TASK_ERROR("layers.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    num_layers: '9'\n",
                      "num_layers", "[0, 8]", NULL);
    EXPECT_TASK_ERROR("lr.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    optim_lr: '0'\n", "optim_lr",
                      "> 0", NULL);
    EXPECT_TASK_ERROR("model.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    gnn_model_class_path: MLP\n",
                      "gnn_model_class_path", "'MLP'", NULL);
    EXPECT_TASK_ERROR("optim.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    optim_class_path: Adagrad\n",
                      "optim_class_path", "'Adagrad'", NULL);
    EXPECT_TASK_ERROR("mom.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    optim_momentum: '0.9'\n",
                      "optim_momentum", "SGD", NULL);
    EXPECT_TASK_ERROR("crit.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    early_stop_criterion: mrr\n",
                      "early_stop_criterion", "'mrr'", NULL);
    EXPECT_TASK_ERROR("crit.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    early_stop_criterion: auc\n",
                      "early_stop_criterion", "'auc'", NULL);
    EXPECT_TASK_ERROR("lponly.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    softmax_temp: '0.1'\n",
                      "softmax_temp", "link prediction", NULL);
    EXPECT_TASK_ERROR("gat.yaml",
                      NC_HEAD "trainerConfig:\n  trainerArgs:\n    gnn_model_class_path: GAT\n"
                              "    hidden_dim: '10'\n    num_heads: '3'\n",
                      "num_heads", "divisible", NULL);
    EXPECT_TASK_ERROR("hgt.yaml",
                      NC_HEAD "trainerConfig:\n  trainerArgs:\n    gnn_model_class_path: HGT\n"
                              "    hidden_dim: '64'\n    num_heads: '3'\n",
                      "num_heads", "HGT needs hidden_dim (64) divisible by num_heads (3)", NULL);
    /* hid_dim is GiGL's example scripts' name for hidden_dim (test_config_gigl); both at once must agree */
    EXPECT_TASK_ERROR("empty.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    hidden_dim:\n",
                      "hidden_dim", "empty", NULL);
    EXPECT_TASK_ERROR("map.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    hidden_dim: {a: 1}\n",
                      "hidden_dim", "mapping", NULL);
    EXPECT_TASK_ERROR("norm.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    feature_normalization: col\n",
                      "feature_normalization", "'col'", NULL);
    EXPECT_TASK_ERROR("prof.yaml", NC_HEAD "profilerConfig: {shouldEnableProfiler: true}\n",
                      "profilerConfig", "profilerLogDir", NULL);
    EXPECT_TASK_ERROR("shared.yaml", NC_HEAD "  shouldSkipTrainng: false\n", "shouldSkipTrainng",
                      "did you mean 'shouldSkipTraining'?", NULL);
    EXPECT_TASK_ERROR("ckpt.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    checkpoint_every_n_batches: '-1'\n",
                      "checkpoint_every_n_batches", ">= 0", NULL);
    EXPECT_TASK_ERROR("ckpt2.yaml", NC_HEAD "trainerConfig:\n  trainerArgs:\n    checkpoint_every_n_batches: '1.5'\n",
                      "checkpoint_every_n_batches", "integer", NULL);
    EXPECT_TASK_ERROR("notmap.yaml", "- a\n- b\n", "expected a mapping", NULL, NULL);
    EXPECT_TASK_ERROR("emptydoc.yaml", "", "empty document", NULL, NULL);
}

/* ---- per-edge-type fanouts ---------------------------------------------------------- */

#define TARGS NC_HEAD "trainerConfig:\n  trainerArgs:\n"
#define NUM_NEIGHBORS_KEY "trainerConfig.trainerArgs.num_neighbors"

/* Loads text as a task config into *c; fails the test (from the caller) when it does not load. */
#define LOAD_TASK(c, name, text)                                                               \
    do {                                                                                       \
        cgnn_err e_ = {0};                                                                     \
        if (config_load_task((c), write_yaml((name), (text)), &e_) != 0) TEST_FAIL_("%s", e_.msg); \
    } while (0)

static int etype_is(const config_etype_fanout *f, const char *src, const char *rel, const char *dst) {
    return !strcmp(f->etype.src_node_type, src) && !strcmp(f->etype.relation, rel) &&
           !strcmp(f->etype.dst_node_type, dst);
}

TEST(fanout_forms) {
    static task_config c; /* ~100 KB */
    /* plain, without brackets: one list for every edge type */
    LOAD_TASK(&c, "fan_plain.yaml", TARGS "    num_neighbors: '15, 10'\n");
    ASSERT_EQ(c.args.num_etype_fanouts, 0);
    ASSERT_EQ(c.args.num_fanouts, 2);
    ASSERT_EQ(c.args.fanouts[0], 15);
    ASSERT_EQ(c.args.fanouts[1], 10);

    /* GiGL's DBLP example, folded with >- (newlines become spaces / stay) */
    LOAD_TASK(&c, "fan_gigl.yaml",
              TARGS "    num_neighbors: >-\n"
                    "      {\n"
                    "        (\"term\", \"to\", \"paper\"): [10, 10],\n"
                    "        (\"paper\", \"to\", \"author\"): [15, 15],\n"
                    "        (\"author\", \"to\", \"paper\"): [20, 20]\n"
                    "      }\n");
    ASSERT_EQ(c.args.num_etype_fanouts, 3);
    ASSERT_EQ(c.args.num_fanouts, 0);
    ASSERT_EQ(c.args.fanouts[0], 0); /* never a made-up plain list */
    ASSERT(etype_is(&c.args.etype_fanouts[0], "term", "to", "paper"));
    ASSERT(etype_is(&c.args.etype_fanouts[1], "paper", "to", "author"));
    ASSERT(etype_is(&c.args.etype_fanouts[2], "author", "to", "paper"));
    ASSERT_EQ(c.args.etype_fanouts[0].fanouts[0], 10);
    ASSERT_EQ(c.args.etype_fanouts[1].fanouts[1], 15);
    ASSERT_EQ(c.args.etype_fanouts[2].fanouts[0], 20);
    ASSERT_EQ(c.args.etype_fanouts[2].fanouts[2], 0);

    /* single quotes, no whitespace, Python's trailing commas, 0 and -1 per hop */
    LOAD_TASK(&c, "fan_single.yaml",
              TARGS "    num_layers: '3'\n"
                    "    num_neighbors: \"{('user','to','item'):[0,-1,5],('item', 'rev_to', 'user',):[7,0,1,],}\"\n");
    ASSERT_EQ(c.args.num_etype_fanouts, 2);
    ASSERT(etype_is(&c.args.etype_fanouts[0], "user", "to", "item"));
    ASSERT(etype_is(&c.args.etype_fanouts[1], "item", "rev_to", "user"));
    ASSERT_EQ(c.args.etype_fanouts[0].fanouts[0], 0);
    ASSERT_EQ(c.args.etype_fanouts[0].fanouts[1], -1);
    ASSERT_EQ(c.args.etype_fanouts[0].fanouts[2], 5);
    ASSERT_EQ(c.args.etype_fanouts[1].fanouts[0], 7);
    ASSERT_EQ(c.args.etype_fanouts[1].fanouts[1], 0);
    ASSERT_EQ(c.args.etype_fanouts[1].fanouts[2], 1);

    /* a YAML mapping: "src:rel:dst" or PyG's "src__rel__dst" keys, lists or list strings */
    LOAD_TASK(&c, "fan_map.yaml",
              TARGS "    num_neighbors:\n"
                    "      paper:cites:paper: [15, 10]\n"
                    "      author__writes__paper: '[5, 0]'\n"
                    "      \"paper:written_by:author\": 3, -1\n");
    ASSERT_EQ(c.args.num_etype_fanouts, 3);
    ASSERT_EQ(c.args.num_fanouts, 0);
    ASSERT(etype_is(&c.args.etype_fanouts[0], "paper", "cites", "paper"));
    ASSERT(etype_is(&c.args.etype_fanouts[1], "author", "writes", "paper"));
    ASSERT(etype_is(&c.args.etype_fanouts[2], "paper", "written_by", "author"));
    ASSERT_EQ(c.args.etype_fanouts[0].fanouts[0], 15);
    ASSERT_EQ(c.args.etype_fanouts[0].fanouts[1], 10);
    ASSERT_EQ(c.args.etype_fanouts[1].fanouts[0], 5);
    ASSERT_EQ(c.args.etype_fanouts[1].fanouts[1], 0);
    ASSERT_EQ(c.args.etype_fanouts[2].fanouts[0], 3);
    ASSERT_EQ(c.args.etype_fanouts[2].fanouts[1], -1);

    /* the largest accepted map: CONFIG_MAX_ETYPE_FANOUTS edge types */
    static char text[16384];
    size_t len = (size_t)snprintf(text, sizeof text, TARGS "    num_neighbors: '{");
    for (int i = 0; i < CONFIG_MAX_ETYPE_FANOUTS; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s(\"n\", \"r%d\", \"n\"): [%d, 1]", i ? ", " : "", i, i);
    snprintf(text + len, sizeof text - len, "}'\n");
    LOAD_TASK(&c, "fan_max.yaml", text);
    ASSERT_EQ(c.args.num_etype_fanouts, CONFIG_MAX_ETYPE_FANOUTS);
    ASSERT(etype_is(&c.args.etype_fanouts[CONFIG_MAX_ETYPE_FANOUTS - 1], "n", "r63", "n"));
    ASSERT_EQ(c.args.etype_fanouts[CONFIG_MAX_ETYPE_FANOUTS - 1].fanouts[0], 63);
}

TEST(err_etype_fanouts) {
#define FAN_ERR(name, value, n2, n3) \
    EXPECT_TASK_ERROR(name, TARGS "    num_neighbors: " value "\n", NUM_NEIGHBORS_KEY, n2, n3)
    FAN_ERR("fe_paren.yaml", "'{(\"a\", \"r\", \"b\": [1, 1]}'", "expected ')' closing edge type 0", NULL);
    FAN_ERR("fe_colon.yaml", "'{(\"a\", \"r\", \"b\") [1, 1]}'", "expected ':' after edge type 0", NULL);
    FAN_ERR("fe_brace.yaml", "'{(\"a\", \"r\", \"b\"): [1, 1]'", "expected ',' or '}'", "end of the text");
    FAN_ERR("fe_bracket.yaml", "'{(\"a\", \"r\", \"b\"): [1, 1}'", "expected ',' or ']' after entry 1", NULL);
    FAN_ERR("fe_len.yaml", "'{(\"a\", \"r\", \"b\"): [1, 1], (\"b\", \"s\", \"a\"): [1]}'",
            "edge type (\"b\", \"s\", \"a\"): 1 fanout given but num_layers is 2", NULL);
    FAN_ERR("fe_int.yaml", "'{(\"a\", \"r\", \"b\"): [1, x]}'", "(\"a\", \"r\", \"b\"): entry 1: expected an integer",
            NULL);
    FAN_ERR("fe_float.yaml", "'{(\"a\", \"r\", \"b\"): [1, 1.5]}'", "entry 1: expected an integer", NULL);
    FAN_ERR("fe_str.yaml", "'{(\"a\", \"r\", \"b\"): [\"10\", 1]}'", "entry 0: expected an integer", NULL);
    FAN_ERR("fe_neg.yaml", "'{(\"a\", \"r\", \"b\"): [1, -2]}'", "entry 1 is -2", "0 (not sampled at that hop)");
    FAN_ERR("fe_dup.yaml", "'{(\"a\", \"r\", \"b\"): [1, 1], (\"c\", \"r\", \"b\"): [1, 1], (\"a\", \"r\", \"b\"): [2, 2]}'",
            "edge type (\"a\", \"r\", \"b\"): given twice (entries 0 and 2)", NULL);
    FAN_ERR("fe_two.yaml", "'{(\"a\", \"r\"): [1, 1]}'", "edge type 0 has 2 names; it needs 3", NULL);
    FAN_ERR("fe_four.yaml", "'{(\"a\", \"r\", \"b\", \"c\"): [1, 1]}'", "expected ')' closing edge type 0", NULL);
    FAN_ERR("fe_unquoted.yaml", "'{(a, \"r\", \"b\"): [1, 1]}'", "expected a quoted type name in edge type 0", NULL);
    FAN_ERR("fe_unterm.yaml", "'{(\"a, \"r\", \"b\"): [1, 1]}'", "expected ',' between the names of edge type 0", NULL);
    FAN_ERR("fe_tuple.yaml", "'{(\"a\", \"r\", \"b\"): (1, 1)}'", "tuple", NULL);
    FAN_ERR("fe_strkey.yaml", "'{\"a-r-b\": [1, 1]}'", "expected '(' opening edge type 0", NULL);
    FAN_ERR("fe_empty.yaml", "'{}'", "no edge types", NULL);
    FAN_ERR("fe_emptyname.yaml", "'{(\"\", \"r\", \"b\"): [1, 1]}'", "edge type 0: empty type name", NULL);
    FAN_ERR("fe_colonname.yaml", "'{(\"a:x\", \"r\", \"b\"): [1, 1]}'", "contains ':'", NULL);
    FAN_ERR("fe_trailing.yaml", "'{(\"a\", \"r\", \"b\"): [1, 1]} x'", "unexpected text after the closing '}'", NULL);
    /* the YAML mapping form */
    EXPECT_TASK_ERROR("fe_mkey.yaml", TARGS "    num_neighbors:\n      paper_to_author: [1, 1]\n",
                      NUM_NEIGHBORS_KEY ".paper_to_author", "not an edge type", NULL);
    EXPECT_TASK_ERROR("fe_mkey2.yaml", TARGS "    num_neighbors:\n      a:b:c:d: [1, 1]\n", NUM_NEIGHBORS_KEY,
                      "'a:b:c:d' is not an edge type", NULL);
    EXPECT_TASK_ERROR("fe_mdup.yaml",
                      TARGS "    num_neighbors:\n      a:r:b: [1, 1]\n      a__r__b: [2, 2]\n",
                      NUM_NEIGHBORS_KEY ".a__r__b", "given twice (entries 0 and 1 (line", NULL);
    EXPECT_TASK_ERROR("fe_mlen.yaml", TARGS "    num_neighbors:\n      a:r:b: [1, 1, 1]\n",
                      NUM_NEIGHBORS_KEY ".a:r:b", "3 fanouts given but num_layers is 2 (the default)", NULL);
    EXPECT_TASK_ERROR("fe_mint.yaml", TARGS "    num_neighbors:\n      a:r:b: '[1, y]'\n",
                      NUM_NEIGHBORS_KEY ".a:r:b", "entry 1: expected an integer", NULL);
    EXPECT_TASK_ERROR("fe_mmap.yaml", TARGS "    num_neighbors:\n      a:r:b: {x: 1}\n",
                      NUM_NEIGHBORS_KEY ".a:r:b", "expected a list of fanouts", NULL);
    EXPECT_TASK_ERROR("fe_mempty.yaml", TARGS "    num_neighbors: {}\n", NUM_NEIGHBORS_KEY, "no edge types", NULL);
    /* the plain form still refuses 0 (one list for every edge type: nothing would be sampled) */
    FAN_ERR("fe_plain0.yaml", "'[10, 0]'", "entry 1 is 0", NULL);
    /* more than CONFIG_MAX_ETYPE_FANOUTS edge types */
    static char text[16384];
    size_t len = (size_t)snprintf(text, sizeof text, TARGS "    num_neighbors: '{");
    for (int i = 0; i <= CONFIG_MAX_ETYPE_FANOUTS; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s(\"n\", \"r%d\", \"n\"): [1, 1]", i ? ", " : "", i);
    snprintf(text + len, sizeof text - len, "}'\n");
    EXPECT_TASK_ERROR("fe_many.yaml", text, NUM_NEIGHBORS_KEY, "more than 64 edge types (entry 64)", NULL);
#undef FAN_ERR
}

/* ---- types against a dataset --------------------------------------------------------- */

/* A typed dataset filled by hand: 3 node types, 4 edge types, an NC task on paper and an LP
 * task on author:writes:paper; and an untyped one. */
static ds_node_type g_ntypes[3] = {{"author", 10, 0, 10}, {"paper", 20, 0, 20}, {"term", 5, 0, 5}};
static ds_edge_type g_etypes[4];
static ds_task g_tasks[2];
static dataset g_typed, g_untyped;
static ds_node_type g_untyped_n = {"_default", 100, 0, 100};
static ds_edge_type g_untyped_e;
static ds_task g_untyped_task;

static void make_datasets(void) {
    const char *names[4] = {"author:writes:paper", "paper:cites:paper", "paper:has_term:term", "term:term_of:paper"};
    const int src[4] = {0, 1, 1, 2}, dst[4] = {1, 1, 2, 1};
    for (int e = 0; e < 4; e++) {
        memset(&g_etypes[e], 0, sizeof g_etypes[e]);
        snprintf(g_etypes[e].name, sizeof g_etypes[e].name, "%s", names[e]);
        g_etypes[e].src_type = src[e];
        g_etypes[e].dst_type = dst[e];
    }
    memset(g_tasks, 0, sizeof g_tasks);
    snprintf(g_tasks[0].name, sizeof g_tasks[0].name, "link_prediction");
    g_tasks[0].kind = DS_TASK_LINK_PREDICTION;
    g_tasks[0].type = 0; /* author:writes:paper */
    snprintf(g_tasks[1].name, sizeof g_tasks[1].name, "node_classification");
    g_tasks[1].kind = DS_TASK_NODE_CLASSIFICATION;
    g_tasks[1].type = 1; /* paper */
    memset(&g_typed, 0, sizeof g_typed);
    snprintf(g_typed.dir, sizeof g_typed.dir, "/data/typed");
    g_typed.num_node_types = 3;
    g_typed.node_types = g_ntypes;
    g_typed.num_edge_types = 4;
    g_typed.edge_types = g_etypes;
    g_typed.num_tasks = 2;
    g_typed.tasks = g_tasks;

    memset(&g_untyped_e, 0, sizeof g_untyped_e);
    snprintf(g_untyped_e.name, sizeof g_untyped_e.name, "_default");
    memset(&g_untyped_task, 0, sizeof g_untyped_task);
    snprintf(g_untyped_task.name, sizeof g_untyped_task.name, "node_classification");
    g_untyped_task.kind = DS_TASK_NODE_CLASSIFICATION;
    memset(&g_untyped, 0, sizeof g_untyped);
    snprintf(g_untyped.dir, sizeof g_untyped.dir, "/data/untyped");
    g_untyped.num_node_types = 1;
    g_untyped.node_types = &g_untyped_n;
    g_untyped.num_edge_types = 1;
    g_untyped.edge_types = &g_untyped_e;
    g_untyped.num_tasks = 1;
    g_untyped.tasks = &g_untyped_task;
}

/* config_check_types must fail with CGNN_ERR_INPUT naming the config file and each needle. */
#define EXPECT_TYPES_ERROR(c, ds, n1, n2, n3)                                                   \
    do {                                                                                       \
        cgnn_err e_ = {0};                                                                     \
        ASSERT_EQ(config_check_types((c), (ds), &e_), -1);                                     \
        fprintf(stderr, "  -> %s\n", e_.msg);                                                  \
        ASSERT_EQ(e_.code, CGNN_ERR_INPUT);                                                    \
        ASSERT_STR_CONTAINS(e_.msg, (c)->file);                                                \
        ASSERT_STR_CONTAINS(e_.msg, (ds)->dir);                                                \
        if (n1) ASSERT_STR_CONTAINS(e_.msg, (const char *)n1);                                 \
        if (n2) ASSERT_STR_CONTAINS(e_.msg, (const char *)n2);                                 \
        if (n3) ASSERT_STR_CONTAINS(e_.msg, (const char *)n3);                                 \
    } while (0)

#define EXPECT_TYPES_OK(c, ds)                                                                 \
    do {                                                                                       \
        cgnn_err e_ = {0};                                                                     \
        if (config_check_types((c), (ds), &e_) != 0) TEST_FAIL_("%s", e_.msg);                 \
    } while (0)

TEST(resolve_fanouts) {
    make_datasets();
    static task_config c;
    int64_t out[4 * CONFIG_MAX_LAYERS];
    cgnn_err err = {0};
    /* plain: every edge type gets the list */
    LOAD_TASK(&c, "rf_plain.yaml", TARGS "    num_neighbors: '[15, 10]'\n");
    for (int k = 0; k < 8; k++) out[k] = -7;
    ASSERT_EQ(config_resolve_fanouts(&c, &g_typed, out, &err), 0);
    for (int e = 0; e < 4; e++) {
        ASSERT_EQ(out[e * 2 + 0], 15);
        ASSERT_EQ(out[e * 2 + 1], 10);
    }
    out[2] = -7;
    ASSERT_EQ(config_resolve_fanouts(&c, &g_untyped, out, &err), 0);
    ASSERT_EQ(out[0], 15);
    ASSERT_EQ(out[1], 10);
    ASSERT_EQ(out[2], -7); /* one edge type: nothing written past it */

    /* per type, listed in another order than the dataset's; left-out edge types get 0 */
    LOAD_TASK(&c, "rf_etype.yaml",
              TARGS "    num_layers: '3'\n"
                    "    num_neighbors: '{(\"term\", \"term_of\", \"paper\"): [4, 0, -1], "
                    "(\"author\", \"writes\", \"paper\"): [7, 6, 5]}'\n");
    for (int k = 0; k < 12; k++) out[k] = -7;
    ASSERT_EQ(config_resolve_fanouts(&c, &g_typed, out, &err), 0);
    const int64_t want[12] = {7, 6, 5, 0, 0, 0, 0, 0, 0, 4, 0, -1};
    for (int k = 0; k < 12; k++)
        if (out[k] != want[k]) TEST_FAIL_("out[%d] = %lld, want %lld", k, (long long)out[k], (long long)want[k]);
    EXPECT_TYPES_OK(&c, &g_typed);

    /* an edge type the dataset lacks: names the config file and key, and the dataset's types */
    LOAD_TASK(&c, "rf_unknown.yaml",
              TARGS "    num_neighbors:\n      author:writes:paper: [1, 1]\n      paper:cites:author: [2, 2]\n");
    ASSERT_EQ(config_resolve_fanouts(&c, &g_typed, out, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    fprintf(stderr, "  -> %s\n", err.msg);
    ASSERT_STR_CONTAINS(err.msg, c.file);
    ASSERT_STR_CONTAINS(err.msg, NUM_NEIGHBORS_KEY ": edge type paper:cites:author is not an edge type of the dataset "
                                 "/data/typed (it has 4: author:writes:paper, paper:cites:paper, paper:has_term:term, "
                                 "term:term_of:paper)");
    EXPECT_TYPES_ERROR(&c, &g_typed, "paper:cites:author", NUM_NEIGHBORS_KEY, "term:term_of:paper");

    /* per type on an untyped dataset */
    LOAD_TASK(&c, "rf_untyped.yaml", TARGS "    num_neighbors:\n      paper:cites:paper: [1, 1]\n");
    err = (cgnn_err){0};
    ASSERT_EQ(config_resolve_fanouts(&c, &g_untyped, out, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, c.file);
    ASSERT_STR_CONTAINS(err.msg, "/data/untyped is untyped");
    ASSERT_STR_CONTAINS(err.msg, "paper:cites:paper");
    EXPECT_TYPES_ERROR(&c, &g_untyped, NUM_NEIGHBORS_KEY, "untyped", NULL);
}

#define GM_TYPED                                                                               \
    "graphMetadata:\n"                                                                         \
    "  nodeTypes: [term, author, paper, paper]\n"                                              \
    "  edgeTypes:\n"                                                                           \
    "  - {srcNodeType: paper, relation: has_term, dstNodeType: term}\n"                        \
    "  - {srcNodeType: author, relation: writes, dstNodeType: paper}\n"                        \
    "  - {srcNodeType: term, relation: term_of, dstNodeType: paper}\n"                         \
    "  - {srcNodeType: paper, relation: cites, dstNodeType: paper}\n"
#define SHARED "sharedConfig:\n  preprocessedMetadataUri: d\n  trainedModelMetadata: {trainedModelUri: m}\n"
#define NC_ON(t) "taskMetadata:\n  nodeBasedTaskMetadata: {supervisionNodeTypes: [" t "]}\n" SHARED
#define LP_ON(s, r, d)                                                                         \
    "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata:\n"                            \
    "    supervisionEdgeTypes: [{srcNodeType: " s ", relation: " r ", dstNodeType: " d "}]\n" SHARED

TEST(check_types_typed) {
    make_datasets();
    static task_config c;
    /* graphMetadata equal as sets (order and repeats free), NC on the task's node type */
    LOAD_TASK(&c, "ct_ok.yaml", GM_TYPED NC_ON("paper"));
    ASSERT_EQ(c.num_node_types, 3); /* paper once */
    ASSERT(!strcmp(c.node_types[0], "term"));
    ASSERT(!strcmp(c.node_types[2], "paper"));
    ASSERT_EQ(c.num_edge_types, 4);
    ASSERT(!strcmp(c.edge_types[3].relation, "cites"));
    ASSERT(config_find_task(&c, &g_typed) == &g_tasks[1]);
    EXPECT_TYPES_OK(&c, &g_typed);
    /* no graphMetadata and no supervision types: nothing to disagree with */
    LOAD_TASK(&c, "ct_bare.yaml", "taskMetadata:\n  nodeBasedTaskMetadata: {}\n" SHARED);
    EXPECT_TYPES_OK(&c, &g_typed);
    /* a node type missing from the config, one the dataset lacks */
    LOAD_TASK(&c, "ct_missing.yaml", "graphMetadata:\n  nodeTypes: [author, paper]\n" NC_ON("paper"));
    EXPECT_TYPES_ERROR(&c, &g_typed, "graphMetadata.nodeTypes is [author, paper]",
                       "has node types [author, paper, term]", "not in the config: term");
    LOAD_TASK(&c, "ct_extra.yaml", "graphMetadata:\n  nodeTypes: [author, paper, term, venue]\n" NC_ON("paper"));
    EXPECT_TYPES_ERROR(&c, &g_typed, "graphMetadata.nodeTypes", "not in the dataset: venue", NULL);
    /* edge types: one renamed */
    LOAD_TASK(&c, "ct_edges.yaml",
              "graphMetadata:\n  edgeTypes:\n"
              "  - {srcNodeType: paper, relation: has_term, dstNodeType: term}\n"
              "  - {srcNodeType: author, relation: writes, dstNodeType: paper}\n"
              "  - {srcNodeType: term, relation: term_of, dstNodeType: paper}\n"
              "  - {srcNodeType: paper, relation: cite, dstNodeType: paper}\n" NC_ON("paper"));
    EXPECT_TYPES_ERROR(&c, &g_typed, "graphMetadata.edgeTypes is [paper:has_term:term, author:writes:paper",
                       "not in the dataset: paper:cite:paper", "not in the config: paper:cites:paper");
    /* NC: a node type the dataset lacks; a dataset node type that is not the task's */
    LOAD_TASK(&c, "ct_nc_unknown.yaml", NC_ON("venue"));
    EXPECT_TYPES_ERROR(&c, &g_typed, "supervisionNodeTypes: 'venue' is not a node type",
                       "(it has [author, paper, term])", NULL);
    LOAD_TASK(&c, "ct_nc_other.yaml", GM_TYPED NC_ON("author"));
    EXPECT_TYPES_ERROR(&c, &g_typed, "supervisionNodeTypes: 'author'",
                       "task 'node_classification' classifies nodes of type 'paper'", NULL);
    /* an explicit task */
    cgnn_err err = {0};
    ds_task t = g_tasks[1];
    t.type = 0;
    ASSERT_EQ(config_check_types_for_task(&c, &g_typed, &t, &err), 0);
    ASSERT_EQ(config_check_types_for_task(&c, &g_typed, NULL, &err), 0);
    /* several supervision types */
    LOAD_TASK(&c, "ct_nc_two.yaml", "taskMetadata:\n  nodeBasedTaskMetadata: {supervisionNodeTypes: [paper, author]}\n"
                                    SHARED);
    EXPECT_TYPES_ERROR(&c, &g_typed, "supervisionNodeTypes declares 2 types", NULL, NULL);

    /* LP: the task's edge type; another dataset edge type; one the dataset lacks */
    LOAD_TASK(&c, "ct_lp_ok.yaml", GM_TYPED LP_ON("author", "writes", "paper"));
    ASSERT(config_find_task(&c, &g_typed) == &g_tasks[0]);
    EXPECT_TYPES_OK(&c, &g_typed);
    LOAD_TASK(&c, "ct_lp_other.yaml", GM_TYPED LP_ON("paper", "cites", "paper"));
    EXPECT_TYPES_ERROR(&c, &g_typed, "supervisionEdgeTypes: paper:cites:paper",
                       "task 'link_prediction' predicts edges of type author:writes:paper", NULL);
    LOAD_TASK(&c, "ct_lp_unknown.yaml", LP_ON("author", "cites", "paper"));
    EXPECT_TYPES_ERROR(&c, &g_typed, "author:cites:paper is not an edge type",
                       "[author:writes:paper, paper:cites:paper, paper:has_term:term, term:term_of:paper]", NULL);
}

TEST(check_types_untyped) {
    make_datasets();
    static task_config c;
    /* one node type and one edge type: labels only, whatever the names */
    LOAD_TASK(&c, "cu_ok.yaml",
              "graphMetadata:\n  nodeTypes: [user]\n"
              "  edgeTypes: [{srcNodeType: user, relation: friend, dstNodeType: user}]\n" NC_ON("user"));
    EXPECT_TYPES_OK(&c, &g_untyped);
    LOAD_TASK(&c, "cu_lp.yaml", LP_ON("a", "b", "c"));
    EXPECT_TYPES_OK(&c, &g_untyped);
    /* several node types / edge types / supervision types: refused, both sides named */
    LOAD_TASK(&c, "cu_typed.yaml", GM_TYPED NC_ON("paper"));
    EXPECT_TYPES_ERROR(&c, &g_untyped, "graphMetadata declares 3 node types (term, author, paper) and 4 edge types",
                       "paper:has_term:term", "has 1 node type (_default)");
    LOAD_TASK(&c, "cu_sup.yaml", "taskMetadata:\n  nodeBasedTaskMetadata: {supervisionNodeTypes: [a, b]}\n" SHARED);
    EXPECT_TYPES_ERROR(&c, &g_untyped, ": taskMetadata.nodeBasedTaskMetadata.supervisionNodeTypes declares 2 types, but",
                       "has 1 node type (_default)", NULL);
}

TEST(graph_metadata_condensed) {
    static task_config c;
    /* GiGL's DBLP mock config (gigl/src/mocking/configs/dblp_node_anchor_based_link_prediction_
     * template_gbml_config.yaml): condensed maps keyed by quoted ids */
    LOAD_TASK(&c, "gm_dblp.yaml",
              "graphMetadata:\n"
              "  condensedEdgeTypeMap:\n"
              "    '0':\n      dstNodeType: paper\n      relation: to\n      srcNodeType: author\n"
              "    '1':\n      dstNodeType: author\n      relation: to\n      srcNodeType: paper\n"
              "    '2':\n      dstNodeType: paper\n      relation: to\n      srcNodeType: term\n"
              "  condensedNodeTypeMap:\n    '0': author\n    '1': paper\n    '2': term\n"
              "  edgeTypes:\n"
              "  - dstNodeType: paper\n    relation: to\n    srcNodeType: author\n"
              "  - dstNodeType: author\n    relation: to\n    srcNodeType: paper\n"
              "  - dstNodeType: paper\n    relation: to\n    srcNodeType: term\n"
              "  nodeTypes:\n  - author\n  - paper\n  - term\n"
              "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata:\n    supervisionEdgeTypes:\n"
              "    - dstNodeType: author\n      relation: to\n      srcNodeType: paper\n" SHARED);
    ASSERT_EQ(c.task, TASK_LINK_PREDICTION);
    ASSERT_EQ(c.num_node_types, 3);
    ASSERT_EQ(c.num_edge_types, 3);
    ASSERT(!strcmp(c.edge_types[1].src_node_type, "paper"));
    ASSERT(!strcmp(c.edge_types[1].dst_node_type, "author"));
    ASSERT(!strcmp(c.supervision_edge_type.dst_node_type, "author"));
    char name[400];
    ASSERT(!strcmp(config_edge_type_name(&c.edge_types[2], name, sizeof name), "term:to:paper"));

#define GM_HEAD "graphMetadata:\n  nodeTypes: [a, b]\n  edgeTypes: [{srcNodeType: a, relation: r, dstNodeType: b}]\n"
    EXPECT_TASK_ERROR("gm_unknown.yaml", GM_HEAD "  condensedNodeTypeMap: {0: a, 1: c}\n" NC_ON("a"),
                      "graphMetadata.condensedNodeTypeMap", "'c' is not in graphMetadata.nodeTypes", NULL);
    EXPECT_TASK_ERROR("gm_dup.yaml", GM_HEAD "  condensedNodeTypeMap: {0: a, 1: a}\n" NC_ON("a"),
                      "graphMetadata.condensedNodeTypeMap", "two condensed ids (0 and 1)", NULL);
    EXPECT_TASK_ERROR("gm_key.yaml", GM_HEAD "  condensedNodeTypeMap: {x: a, 1: b}\n" NC_ON("a"),
                      "graphMetadata.condensedNodeTypeMap", "key 'x' is not a condensed type id", NULL);
    EXPECT_TASK_ERROR("gm_partial.yaml", GM_HEAD "  condensedNodeTypeMap: {0: a}\n" NC_ON("a"),
                      "graphMetadata.condensedNodeTypeMap", "maps 1 node type but graphMetadata.nodeTypes declares 2",
                      NULL);
    EXPECT_TASK_ERROR("gm_edge.yaml",
                      GM_HEAD "  condensedEdgeTypeMap: {0: {srcNodeType: b, relation: r, dstNodeType: a}}\n" NC_ON("a"),
                      "graphMetadata.condensedEdgeTypeMap", "edge type b:r:a is not in graphMetadata.edgeTypes", NULL);
    EXPECT_TASK_ERROR("gm_edgekey.yaml",
                      GM_HEAD "  condensedEdgeTypeMap: {0: {srcNodeType: a, relation: r, dstNodeType: b, x: 1}}\n"
                      NC_ON("a"),
                      "condensedEdgeTypeMap", "x", NULL);
#undef GM_HEAD
    /* more than CONFIG_MAX_TYPES node types */
    static char text[8192];
    size_t len = (size_t)snprintf(text, sizeof text, "graphMetadata:\n  nodeTypes: [");
    for (int i = 0; i <= CONFIG_MAX_TYPES; i++) len += (size_t)snprintf(text + len, sizeof text - len, "%st%d", i ? ", " : "", i);
    snprintf(text + len, sizeof text - len, "]\n" NC_ON("t0"));
    EXPECT_TASK_ERROR("gm_many.yaml", text, "graphMetadata.nodeTypes", "more than 64 node types", NULL);
}

/* ---- resource config errors ------------------------------------------------------- */

static int expect_resource_error(const char *name, const char *text, const char *n1, char *msg_out) {
    const char *path = write_yaml(name, text);
    resource_config r;
    cgnn_err err = {0};
    int rc = config_load_resource(&r, path, &err);
    snprintf(msg_out, 1024, "%s", err.msg);
    fprintf(stderr, "  %s -> %s\n", name, err.msg);
    if (rc != -1 || err.code != CGNN_ERR_INPUT) return -1;
    if (!strstr(err.msg, path)) return -2;
    if (n1 && !strstr(err.msg, n1)) return -3;
    return 0;
}

TEST(resource_config) {
    const char *p = write_yaml("res.yaml",
                               "shared_resource_config:\n  common_compute_config: {project: p}\n"
                               "preprocessor_config: {}\n"
                               "inferencer_resource_config: {local_inferencer_config: {num_workers: 1}}\n"
                               "trainer_resource_config:\n"
                               "  mpi_trainer_config: {num_replicas: 4, num_threads_per_replica: '3'}\n");
    resource_config r;
    cgnn_err err = {0};
    if (config_load_resource(&r, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(r.num_workers, 0);
    ASSERT_EQ(r.num_replicas, 4);
    ASSERT_EQ(r.num_threads_per_replica, 3);
    p = write_yaml("res_empty.yaml", "");
    ASSERT_EQ(config_load_resource(&r, p, &err), 0);

    char msg[1024];
    int rc = expect_resource_error("res_typo.yaml",
                                   "trainer_resource_config:\n  local_trainer_confg: {num_workers: 2}\n",
                                   "did you mean 'local_trainer_config'?", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    rc = expect_resource_error("res_typo2.yaml",
                               "trainer_resource_config:\n  local_trainer_config: {num_worker: 2}\n",
                               "did you mean 'num_workers'?", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    rc = expect_resource_error("res_bad.yaml",
                               "trainer_resource_config:\n  mpi_trainer_config: {num_replicas: 0}\n",
                               "mpi_trainer_config.num_replicas", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    rc = expect_resource_error("res_int.yaml",
                               "trainer_resource_config:\n  local_trainer_config: {num_workers: 2x}\n",
                               "local_trainer_config.num_workers", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    rc = expect_resource_error("res_top.yaml", "trainer_resource_confg: {}\n",
                               "did you mean 'trainer_resource_config'?", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    ASSERT_EQ(config_load_resource(&r, "s3://b/res.yaml", &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "unsupported URI scheme 's3://'");
}

/* ---- server-client mode and the feature cache ---------------------------------------- */

TEST(graph_store_resource) {
    /* GiGL's two graph-store resource configs, unchanged (tests/fixtures/gigl/) */
    const char *files[2] = {"example_resource_config.yaml", "e2e_glt_gs_resource_config.yaml"};
    for (int k = 0; k < 2; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/tests/fixtures/gigl/%s", test_source_dir(), files[k]);
        resource_config r;
        cgnn_err err = {0};
        if (config_load_resource(&r, path, &err) != 0) TEST_FAIL_("%s", err.msg);
        ASSERT_EQ(r.graph_store, 1);
        ASSERT_EQ(r.storage_replicas, 2);
        ASSERT_EQ(r.compute_replicas, 2);
        ASSERT_EQ(r.compute_local_world_size, 0);
        ASSERT_STR_CONTAINS(r.ignored, "graph_store_pool.machine_type n2-highmem-32");
        ASSERT_STR_CONTAINS(r.ignored, "compute_pool.gpu_type NVIDIA_TESLA_T4");
        ASSERT_STR_CONTAINS(r.ignored, "compute_pool.gpu_limit 2");
    }
    const char *p = write_yaml("gs.yaml", "trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n"
                                          "    graph_store_pool: {num_replicas: 3}\n"
                                          "    compute_pool: {num_replicas: 2, timeout: 60}\n"
                                          "    compute_cluster_local_world_size: 4\n");
    resource_config r;
    cgnn_err err = {0};
    if (config_load_resource(&r, p, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(r.storage_replicas, 3);
    ASSERT_EQ(r.compute_replicas, 2);
    ASSERT_EQ(r.compute_local_world_size, 4);
    ASSERT_STR_CONTAINS(r.ignored, "compute_pool.timeout 60");
    char msg[1024];
    int rc = expect_resource_error("gs_norep.yaml",
                                   "trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n"
                                   "    graph_store_pool: {machine_type: x}\n    compute_pool: {num_replicas: 1}\n",
                                   "graph_store_pool (line 3): num_replicas is missing", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    rc = expect_resource_error("gs_nocompute.yaml",
                               "trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n"
                               "    graph_store_pool: {num_replicas: 1}\n",
                               "compute_pool is missing", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    rc = expect_resource_error("gs_typo.yaml",
                               "trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n"
                               "    graph_store_pool: {num_replica: 1}\n    compute_pool: {num_replicas: 1}\n",
                               "did you mean 'num_replicas'?", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
    rc = expect_resource_error("gs_zero.yaml",
                               "trainer_resource_config:\n  vertex_ai_graph_store_trainer_config:\n"
                               "    graph_store_pool: {num_replicas: 0}\n    compute_pool: {num_replicas: 1}\n",
                               "graph_store_pool.num_replicas", msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
}

TEST(graph_store_storage_config) {
    /* GiGL's graph-store task configs carry the storage job's command: read and ignored */
    const char *y = "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                    "sharedConfig: {preprocessedMetadataUri: d, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                    "trainerConfig:\n  command: python -m examples.link_prediction.graph_store.homogeneous_training\n"
                    "  trainerArgs: {num_neighbors: '[10, 10]'}\n"
                    "  graphStoreStorageConfig:\n    command: python -m examples.link_prediction.graph_store.storage_main\n"
                    "    storageArgs: {sample_edge_direction: in, num_server_sessions: '1'}\n";
    task_config c;
    cgnn_err err = {0};
    if (config_load_task(&c, write_yaml("gss.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.has_storage_config, 1);
    const char *y2 = "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                     "sharedConfig: {preprocessedMetadataUri: d, trainedModelMetadata: {trainedModelUri: m.st}}\n";
    if (config_load_task(&c, write_yaml("gss0.yaml", y2), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.has_storage_config, 0);
    char msg[1024];
    const int rc = expect_task_error("gss1.yaml",
                                     "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                                     "sharedConfig: {preprocessedMetadataUri: d, trainedModelMetadata: "
                                     "{trainedModelUri: m.st}}\n"
                                     "trainerConfig:\n  graphStoreStorageConfig: {comand: x}\n",
                                     "did you mean 'command'?", NULL, NULL, msg);
    if (rc) TEST_FAIL_("%d: %s", rc, msg);
}

TEST(cache_and_prefetch_args) {
    task_config c;
    cgnn_err err = {0};
    const char *head = "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                       "sharedConfig: {preprocessedMetadataUri: d, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                       "trainerConfig:\n  trainerArgs:\n";
    char y[1024];
    snprintf(y, sizeof y, "%s", head);
    if (config_load_task(&c, write_yaml("ca0.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.prefetch_size, 4);
    ASSERT_EQ(c.args.cache_policy, CACHE_POLICY_NONE);
    ASSERT_EQ(c.args.cache_presample_batches, 20);
    snprintf(y, sizeof y, "%s    cache_ratio: \"0.2\"\n    prefetch_size: \"2\"\n", head);
    if (config_load_task(&c, write_yaml("ca1.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.cache_policy, CACHE_POLICY_HOTNESS); /* a size alone: GLT's hotness cache */
    ASSERT_NEAR(c.args.cache_ratio, 0.2, 0);
    ASSERT_EQ(c.args.prefetch_size, 2);
    const char *budgets[4] = {"1048576", "1MB", "1 MiB", "1m"};
    for (int i = 0; i < 4; i++) {
        snprintf(y, sizeof y, "%s    cache_policy: halo\n    cache_memory_budget: \"%s\"\n", head, budgets[i]);
        if (config_load_task(&c, write_yaml("ca2.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
        ASSERT_EQ(c.args.cache_policy, CACHE_POLICY_HALO);
        ASSERT_EQ(c.args.cache_memory_budget, 1 << 20);
    }
    snprintf(y, sizeof y, "%s    cache_policy: degree\n    cache_memory_budget: 2G\n    cache_presample_batches: 5\n",
             head);
    if (config_load_task(&c, write_yaml("ca3.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.cache_memory_budget, (int64_t)2 << 30);
    ASSERT_EQ(c.args.cache_presample_batches, 5);
    snprintf(y, sizeof y, "%s    cache_policy: degree\n", head); /* a policy without a size */
    ASSERT_EQ(config_load_task(&c, write_yaml("ca4.yaml", y), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "needs a size");
    /* the adaptive policies (GraphBolt's) */
    const char *adaptive[4] = {"sieve", "s3fifo", "lru", "clock"};
    const int adaptive_v[4] = {CACHE_POLICY_SIEVE, CACHE_POLICY_S3FIFO, CACHE_POLICY_LRU, CACHE_POLICY_CLOCK};
    for (int i = 0; i < 4; i++) {
        snprintf(y, sizeof y, "%s    cache_policy: %s\n    cache_ratio: \"0.1\"\n", head, adaptive[i]);
        if (config_load_task(&c, write_yaml("ca5.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
        ASSERT_EQ(c.args.cache_policy, adaptive_v[i]);
    }
    snprintf(y, sizeof y, "%s    cache_policy: sieve\n", head); /* an adaptive cache needs a size too */
    ASSERT_EQ(config_load_task(&c, write_yaml("ca5b.yaml", y), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "needs a size");
    snprintf(y, sizeof y, "%s    cache_policy: arc\n    cache_ratio: \"0.1\"\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("ca5c.yaml", y), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "expected none, hotness");
    ASSERT_STR_CONTAINS(err.msg, "sieve, s3fifo, lru or clock");
    snprintf(y, sizeof y, "%s    cache_ratio: \"1.5\"\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("ca6.yaml", y), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "cache_ratio");
    snprintf(y, sizeof y, "%s    cache_memory_budget: 12XB\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("ca7.yaml", y), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "expected a byte count");
    snprintf(y, sizeof y, "%s    prefetch_size: \"0\"\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("ca8.yaml", y), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "prefetch_size");
    snprintf(y, sizeof y, "%s    cache_polcy: halo\n", head);
    ASSERT_EQ(config_load_task(&c, write_yaml("ca9.yaml", y), &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "did you mean 'cache_policy'");
}

/* lp_candidate_range, val_at_end and the full-ranking criteria recall_at_K / ndcg_at_K */
TEST(lp_candidates_and_ranking_criteria) {
    task_config c;
    cgnn_err err = {0};
    const char *head = "taskMetadata:\n  nodeAnchorBasedLinkPredictionTaskMetadata: {}\n"
                       "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                       "trainerConfig:\n  trainerArgs:\n";
    char y[1024];
    snprintf(y, sizeof y, "%s    lp_candidate_range: \"31668:69716\"\n    early_stop_criterion: Recall_at_20\n"
             "    val_at_end: \"true\"\n", head);
    if (config_load_task(&c, write_yaml("lpc.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.lp_candidate_lo, 31668);
    ASSERT_EQ(c.args.lp_candidate_hi, 69716);
    ASSERT(!strcmp(c.args.early_stop_criterion, "recall_at_20"));
    ASSERT_EQ(c.args.val_rank_k, 20);
    ASSERT_EQ(c.args.val_rank_ndcg, 0);
    ASSERT_EQ(c.args.val_at_end, 1);
    snprintf(y, sizeof y, "%s    early_stop_criterion: ndcg_at_5\n", head);
    if (config_load_task(&c, write_yaml("lpc.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT(!strcmp(c.args.early_stop_criterion, "ndcg_at_5"));
    ASSERT(c.args.val_rank_k == 5 && c.args.val_rank_ndcg == 1);
    ASSERT(c.args.lp_candidate_hi == 0 && c.args.val_at_end == 0); /* defaults */
    snprintf(y, sizeof y, "%s    early_stop_criterion: mrr\n", head);
    if (config_load_task(&c, write_yaml("lpc.yaml", y), &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(c.args.val_rank_k, 0);
    const char *bad_range[] = {"\"10:5\"", "\"5:5\"", "\"-1:5\"", "abc", "\"1:2:3\"", "\"0x10:20\"", "\"10\""};
    for (size_t i = 0; i < sizeof bad_range / sizeof bad_range[0]; i++) {
        snprintf(y, sizeof y, "%s    lp_candidate_range: %s\n", head, bad_range[i]);
        ASSERT_EQ(config_load_task(&c, write_yaml("lpc.yaml", y), &err), -1);
        ASSERT_EQ(err.code, CGNN_ERR_INPUT);
        ASSERT(strstr(err.msg, "lpc.yaml") && strstr(err.msg, "lp_candidate_range") && strstr(err.msg, "LO:HI"));
    }
    const char *bad_crit[] = {"recall_at_0", "recall_at_", "ndcg_at_2x", "recall@20", "recall_at_-3", "recall_at_99999999"};
    for (size_t i = 0; i < sizeof bad_crit / sizeof bad_crit[0]; i++) {
        snprintf(y, sizeof y, "%s    early_stop_criterion: %s\n", head, bad_crit[i]);
        ASSERT_EQ(config_load_task(&c, write_yaml("lpc.yaml", y), &err), -1);
        ASSERT(strstr(err.msg, "early_stop_criterion") && strstr(err.msg, "recall_at_K"));
    }
    /* node classification: the range and the ranking criteria are link prediction's */
    const char *nc = "taskMetadata:\n  nodeBasedTaskMetadata: {}\n"
                     "sharedConfig: {preprocessedMetadataUri: d/metadata.yaml, trainedModelMetadata: {trainedModelUri: m.st}}\n"
                     "trainerConfig:\n  trainerArgs:\n";
    snprintf(y, sizeof y, "%s    lp_candidate_range: \"0:5\"\n", nc);
    ASSERT_EQ(config_load_task(&c, write_yaml("lpc.yaml", y), &err), -1);
    ASSERT(strstr(err.msg, "lp_candidate_range") && strstr(err.msg, "link prediction"));
    snprintf(y, sizeof y, "%s    early_stop_criterion: recall_at_20\n", nc);
    ASSERT_EQ(config_load_task(&c, write_yaml("lpc.yaml", y), &err), -1);
    ASSERT(strstr(err.msg, "early_stop_criterion"));
}

int main(void) {
    g_dir = test_tmpdir();
    RUN(example_cora_graphsage);
    RUN(example_cora_gcn);
    RUN(example_cora_gat);
    RUN(example_dblp_hgt);
    RUN(example_facebook_graphsage);
    RUN(example_resource);
    RUN(minimal_defaults);
    RUN(link_prediction_and_spellings);
    RUN(epochs_and_batches);
    RUN(trainer_arg_keys);
    RUN(embedding_and_lp_args);
    RUN(lp_candidates_and_ranking_criteria);
    RUN(seed_assignment_args);
    RUN(lp_task_path);
    RUN(mf_and_embedding_args);
    RUN(profiler_args);
    RUN(resolve_uri);
    RUN(err_malformed_yaml);
    RUN(err_unknown_top_level);
    RUN(err_unknown_trainer_arg);
    RUN(err_bad_integer);
    RUN(err_bad_bool);
    RUN(err_dropout_range);
    RUN(err_fanouts_length);
    RUN(err_fanout_zero);
    RUN(err_missing_dataset);
    RUN(err_gs_uri);
    RUN(err_task_metadata);
    RUN(err_step_lr_without_step_size);
    RUN(err_other_values);
    RUN(fanout_forms);
    RUN(err_etype_fanouts);
    RUN(resolve_fanouts);
    RUN(check_types_typed);
    RUN(check_types_untyped);
    RUN(graph_metadata_condensed);
    RUN(resource_config);
    RUN(graph_store_resource);
    RUN(cache_and_prefetch_args);
    RUN(graph_store_storage_config);
    /* Clean up the temporary files (names are ours; the directory only holds them). */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", g_dir);
    free(g_dir);
    return test_summary();
}
