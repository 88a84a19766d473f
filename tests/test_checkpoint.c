/* test_checkpoint.c — a cgnn checkpoint is a PyG state_dict: PyTorch loads it with the PyG key
 * names (strict) and reproduces cgnn's logits on the same sampled blocks of Cora, for every
 * model kind. Runs tests/check_checkpoint.py with Debian's python3-torch; where that is not
 * installed the case says SKIP (CI installs it, see scripts/install-deps.sh --test). The sanitized
 * pass (CGNN_TEST_SANITIZED=1) runs the C that samples, runs the model and writes the files, and
 * leaves the PyTorch side (no C of cgnn's) to the plain pass. */
#include <sys/stat.h>

#include "graph/csc.h"
#include "io/dataset.h"
#include "nn/model.h"
#include "sample/loader.h"
#include "test.h"
#include "train/outputs.h"

static int sanitized_pass(void) {
    const char *s = getenv("CGNN_TEST_SANITIZED");
    return s && strcmp(s, "1") == 0;
}

static int have_torch(void) {
    if (sanitized_pass()) return 1; /* (not needed: check_kind leaves PyTorch out) */
    return system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") == 0;
}

static int save_i64(const char *dir, const char *name, const int64_t *v, int64_t n) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int64_t shape[1] = {n};
    return npy_write(p, NPY_DTYPE_INT64, 1, shape, v, NULL);
}

static void check_kind(model_kind kind, int l2) {
    char ds_path[4096];
    snprintf(ds_path, sizeof ds_path, "%s/data/cora", test_source_dir());
    dataset ds;
    cgnn_err err;
    if (dataset_open(&ds, ds_path, &err) != 0) TEST_FAIL_("%s", err.msg);
    csc_graph g;
    ASSERT_EQ(csc_build(&g, ds.node_types[0].num_nodes, &ds.edge_types[0].edges, 2, &err), 0);
    const ds_feature *feat = &ds.features[0];
    const ds_split *test = &ds.tasks[0].splits[DS_SPLIT_TEST];
    loader_config lc;
    memset(&lc, 0, sizeof lc);
    lc.sampler.num_layers = 2;
    lc.sampler.fanouts[0] = 5;
    lc.sampler.fanouts[1] = 3;
    lc.batch_size = 32;
    lc.world_size = 1;
    lc.feature = feat;
    lc.normalize_rows = 1;
    loader l;
    ASSERT_EQ(loader_init(&l, &g, test->seeds, test->labels, test->num_items, &lc, &err), 0);
    loader_start_epoch(&l, 0, 1);
    minibatch *mb = loader_next(&l);
    ASSERT(mb != NULL);
    model_config mc = {kind, 2, feat->dim, 16, 7, 4, 0.5f, l2, NULL, 0, {0}};
    minibatch_capacity cap;
    sampler_capacity(&g, &lc.sampler, lc.batch_size, feat->dim, &cap);
    model m;
    ASSERT_EQ(model_init(&m, &mc, &cap, 42, &err), 0);
    const float *logits = model_forward(&m, mb, 0, 0);

    char *dir = test_tmpdir(), p[4200];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    ASSERT_EQ(outputs_save_model(p, TASK_NODE_CLASSIFICATION, &m, m.params, &err), 0);
    for (int b = 0; b < 2; b++) {
        const sampler_block *blk = &mb->blocks[b];
        char name[64];
        snprintf(name, sizeof name, "block%d_indptr.npy", b);
        ASSERT_EQ(save_i64(dir, name, blk->indptr, blk->num_dst + 1), 0);
        int64_t *idx = malloc((size_t)(blk->num_edges + 1) * sizeof(int64_t));
        for (int64_t e = 0; e < blk->num_edges; e++) idx[e] = blk->indices[e];
        snprintf(name, sizeof name, "block%d_indices.npy", b);
        ASSERT_EQ(save_i64(dir, name, idx, blk->num_edges), 0);
        free(idx);
        snprintf(name, sizeof name, "block%d_num_src.npy", b);
        ASSERT_EQ(save_i64(dir, name, &blk->num_src, 1), 0);
    }
    int64_t fshape[2] = {mb->num_input_nodes, feat->dim}, lshape[2] = {mb->num_seeds, 7};
    snprintf(p, sizeof p, "%s/features.npy", dir);
    ASSERT_EQ(npy_write(p, NPY_DTYPE_FLOAT32, 2, fshape, mb->features, &err), 0);
    snprintf(p, sizeof p, "%s/logits.npy", dir);
    ASSERT_EQ(npy_write(p, NPY_DTYPE_FLOAT32, 2, lshape, logits, &err), 0);
    const char *kname = kind == MODEL_GRAPHSAGE ? "sage" : kind == MODEL_GCN ? "gcn" : "gat";
    char cfgtxt[256];
    snprintf(cfgtxt, sizeof cfgtxt, "%s 2 %lld 16 7 4 %d\n", kname, (long long)feat->dim, l2);
    ASSERT_EQ(test_write_file(dir, "config.txt", cfgtxt, strlen(cfgtxt)), 0);
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/check_checkpoint.py %s", test_source_dir(), dir);
    if (!sanitized_pass()) {
        int rc = system(cmd);
        ASSERT_EQ(rc, 0);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    free(dir);
    loader_release(&l, mb);
    loader_free(&l);
    model_free(&m);
    csc_free(&g);
    dataset_close(&ds);
}

TEST(graphsage_checkpoint_in_pytorch) {
    if (!have_torch()) SKIP("python3-torch not installed: run scripts/install-deps.sh --test");
    check_kind(MODEL_GRAPHSAGE, 0);
}
TEST(graphsage_l2_checkpoint_in_pytorch) {
    if (!have_torch()) SKIP("python3-torch not installed: run scripts/install-deps.sh --test");
    check_kind(MODEL_GRAPHSAGE, 1);
}
TEST(gcn_checkpoint_in_pytorch) {
    if (!have_torch()) SKIP("python3-torch not installed: run scripts/install-deps.sh --test");
    check_kind(MODEL_GCN, 0);
}
TEST(gat_checkpoint_in_pytorch) {
    if (!have_torch()) SKIP("python3-torch not installed: run scripts/install-deps.sh --test");
    check_kind(MODEL_GAT, 0);
}

int main(void) {
    RUN(graphsage_checkpoint_in_pytorch);
    RUN(graphsage_l2_checkpoint_in_pytorch);
    RUN(gcn_checkpoint_in_pytorch);
    RUN(gat_checkpoint_in_pytorch);
    return test_summary();
}
