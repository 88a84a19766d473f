/* test_train_state.c — the training-state file (train/train_state.h) and durable writes
 * (io/durable.h): scalars round-trip bit for bit (NaN, -0.0, large integers), tensors round-trip,
 * all-zero blocks of a lazy tensor are skipped on read, a different fingerprint / tensor set is
 * refused naming the field, a file that is not a state is refused, a write killed half way
 * (the test hook, in a child process) leaves the previous state intact and a temporary file that
 * cleanup_stale_tmp (util/cleanup.h) removes — and nothing else. */
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/durable.h"
#include "io/safetensors.h"
#include "test.h"
#include "train/train_state.h"
#include "util/cleanup.h"

static void set_fp(train_state_fingerprint *fp, int hidden) {
    memset(fp, 0, sizeof *fp);
    snprintf(fp->key[0], sizeof fp->key[0], "dataset.name");
    snprintf(fp->value[0], sizeof fp->value[0], "cora");
    snprintf(fp->key[1], sizeof fp->key[1], "hidden_dim");
    snprintf(fp->value[1], sizeof fp->value[1], "%d", hidden);
    fp->n = 2;
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

TEST(round_trip_and_refusals) {
    char *dir = test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors.state", dir);
    train_state_fingerprint fp;
    set_fp(&fp, 128);
    train_state_scalars s;
    memset(&s, 0, sizeof s);
    s.step = 123456789012LL, s.epoch = 7, s.next_batch = 3, s.loss_n = 2;
    s.loss_sum = 0.1 + 0.2, s.last_vloss = NAN, s.last_vmetric = -0.0, s.best_score = 1e-300;
    s.have_best = 1, s.bad_checks = 2, s.jsonl_bytes = 4097, s.tb_bytes = 999, s.tb_records = 12;
    snprintf(s.tb_file, sizeof s.tb_file, "events.out.tfevents.1.host.2.cgnn");
    for (int i = 0; i < TRAIN_STATE_STAGES; i++) s.stage_seconds[i] = 1.0 / (i + 3);
    s.train_seconds = 12.5;
    enum { P = 1000, R = 40000, D = 4 };
    float *params = malloc(P * sizeof(float)), *lazy = calloc((size_t)R * D, sizeof(float));
    for (int i = 0; i < P; i++) params[i] = (float)i * 0.5f - 3.0f;
    lazy[5] = 1.5f;                    /* first block */
    lazy[(size_t)R * D - 1] = -2.0f;   /* last block */
    train_state_tensor t[2] = {{"params", params, 1, P, 0}, {"embedding.m", lazy, R, D, 1}};
    cgnn_err err = {0};
    ASSERT_EQ(train_state_save(path, &fp, &s, t, 2, -1, &err), 0);
    ASSERT_EQ(count_entries(dir), 1); /* no temporary file left */

    /* read back into fresh buffers: the same bits; the lazy tensor's zero blocks untouched */
    float *p2 = calloc(P, sizeof(float)), *l2 = calloc((size_t)R * D, sizeof(float));
    l2[100000] = 7.0f; /* a block that is all zero in the file: skipped, so this survives */
    train_state_tensor t2[2] = {{"params", p2, 1, P, 0}, {"embedding.m", l2, R, D, 1}};
    train_state_reader r;
    train_state_scalars g;
    if (train_state_open(&r, path, &fp, &g, &err) != 0) TEST_FAIL_("%s", err.msg);
    ASSERT_EQ(train_state_read(&r, t2, 2, &err), 0);
    train_state_close(&r);
    ASSERT_EQ(g.step, s.step);
    ASSERT_EQ(g.epoch, 7);
    ASSERT_EQ(g.next_batch, 3);
    ASSERT_EQ(g.jsonl_bytes, 4097);
    ASSERT(same_bits(g.loss_sum, s.loss_sum) && same_bits(g.last_vloss, s.last_vloss));
    ASSERT(same_bits(g.last_vmetric, -0.0) && same_bits(g.best_score, 1e-300));
    for (int i = 0; i < TRAIN_STATE_STAGES; i++) ASSERT(same_bits(g.stage_seconds[i], s.stage_seconds[i]));
    ASSERT(!strcmp(g.tb_file, s.tb_file));
    ASSERT(memcmp(p2, params, P * sizeof(float)) == 0);
    ASSERT(l2[5] == 1.5f && l2[(size_t)R * D - 1] == -2.0f && l2[100000] == 7.0f);

    /* another job: the differing field is named, with both values and the way out */
    train_state_fingerprint other;
    set_fp(&other, 64);
    ASSERT_EQ(train_state_open(&r, path, &other, &g, &err), -1);
    train_state_close(&r);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, path);
    ASSERT_STR_CONTAINS(err.msg, "hidden_dim is 128 in the state, 64 in this job");
    ASSERT_STR_CONTAINS(err.msg, "Delete the file");
    /* a field this job does not have */
    other = fp;
    other.n = 1;
    ASSERT_EQ(train_state_open(&r, path, &other, &g, &err), -1);
    train_state_close(&r);
    ASSERT_STR_CONTAINS(err.msg, "hidden_dim = 128");
    /* other tensors */
    ASSERT_EQ(train_state_open(&r, path, &fp, &g, &err), 0);
    train_state_tensor t3[2] = {{"params", p2, 1, P - 1, 0}, {"embedding.m", l2, R, D, 1}};
    ASSERT_EQ(train_state_read(&r, t3, 2, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "tensor 'params' has shape [1, 1000], this job needs [1, 999]");
    ASSERT_EQ(train_state_read(&r, t2, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "holds 2 tensors");
    train_state_close(&r);
    /* a safetensors file that is not a training state */
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/model.safetensors", dir);
    st_tensor st = {"w", 1, {2, 1, 1, 1}, params};
    ASSERT_EQ(safetensors_write(mpath, &st, 1, NULL, 0, &err), 0);
    ASSERT_EQ(train_state_open(&r, mpath, &fp, &g, &err), -1);
    train_state_close(&r);
    ASSERT_STR_CONTAINS(err.msg, "not a cgnn training state");

    /* a write killed half way (the test hook, in a child): the old state stays, a temporary
     * file is left, and cleanup_stale_tmp removes it (and nothing that merely looks alike) */
    struct stat before, after;
    ASSERT_EQ(stat(path, &before), 0);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        s.step = 1;
        train_state_save(path, &fp, &s, t, 2, 3000, &err);
        _exit(0); /* not reached: the hook exits with status 3 */
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    ASSERT_EQ(stat(path, &after), 0);
    ASSERT_EQ(after.st_ino, before.st_ino);
    char tmp[4200], keep[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)pid);
    struct stat ts;
    ASSERT_EQ(stat(tmp, &ts), 0);
    ASSERT_EQ(ts.st_size, 3000);
    snprintf(keep, sizeof keep, "%s.tmp.backup", path);
    ASSERT_EQ(test_write_file(dir, "model.safetensors.state.tmp.backup", "x", 1), 0);
    ASSERT_EQ(count_entries(dir), 4);
    ASSERT_EQ(cleanup_stale_tmp(path, NULL, NULL), 1);
    ASSERT_EQ(count_entries(dir), 3); /* the state, the model, "...tmp.backup" */
    ASSERT(access(tmp, F_OK) != 0 && access(keep, F_OK) == 0);
    ASSERT_EQ(train_state_open(&r, path, &fp, &g, &err), 0);
    train_state_close(&r);
    ASSERT_EQ(g.step, s.step);

    unlink(keep);
    unlink(mpath);
    unlink(path);
    rmdir(dir);
    free(dir);
    free(params);
    free(lazy);
    free(p2);
    free(l2);
}

/* The value of fp's field key, or NULL. */
static const char *fp_value(const train_state_fingerprint *fp, const char *key) {
    for (int i = 0; i < fp->n; i++)
        if (strcmp(fp->key[i], key) == 0) return fp->value[i];
    return NULL;
}

/* A typed graph's fingerprint: short lists are spelled out, long ones (30 types with long names)
 * are a count and a hash that still changes with any one entry; fanouts per edge type; the
 * featureless types' optimiser only when there are tables. */
TEST(typed_fingerprint) {
    task_config *cfg = calloc(1, sizeof *cfg);
    cfg->args.optim.lr = 0.01;
    snprintf(cfg->args.embedding_optim, sizeof cfg->args.embedding_optim, "SparseAdam");
    cfg->args.num_bases = 2;
    enum { T = 30 };
    ds_node_type nt[T];
    ds_edge_type *et = calloc(2, sizeof *et);
    memset(nt, 0, sizeof nt);
    for (int t = 0; t < T; t++) {
        snprintf(nt[t].name, sizeof nt[t].name, "node_type_with_a_long_name_%02d", t);
        nt[t].num_nodes = 100 + t;
    }
    snprintf(et[0].name, sizeof et[0].name, "node_type_with_a_long_name_00:r:node_type_with_a_long_name_01");
    et[0].edges.num_edges = 5;
    snprintf(et[1].name, sizeof et[1].name, "node_type_with_a_long_name_01:s:node_type_with_a_long_name_00");
    et[1].edges.num_edges = 7;
    dataset ds;
    memset(&ds, 0, sizeof ds);
    ds.typed = 1;
    ds.node_types = nt;
    ds.edge_types = et;
    ds.num_edge_types = 2;
    const ds_feature *feat[T] = {0};
    ds_feature f;
    memset(&f, 0, sizeof f);
    snprintf(f.name, sizeof f.name, "feat");
    f.rows = 100, f.dim = 16, f.array.dtype = NPY_DTYPE_FLOAT32;
    feat[0] = &f;
    int64_t fan[MINIBATCH_MAX_LAYERS][MINIBATCH_MAX_EDGE_TYPES] = {{10, 5}, {3, 0}};
    train_state_fingerprint a, b;
    /* short: 2 node types, spelled out */
    ds.num_node_types = 2;
    memset(&a, 0, sizeof a);
    train_state_fingerprint_add_typed(&a, cfg, &ds, feat, (const int64_t(*)[MINIBATCH_MAX_EDGE_TYPES])fan, 2, 1);
    ASSERT_STR_CONTAINS(fp_value(&a, "typed.node_types"),
                        "2 node types: node_type_with_a_long_name_00 100, node_type_with_a_long_name_01 101");
    ASSERT_STR_CONTAINS(fp_value(&a, "typed.inputs"), "feat (100, 16) float32, learnable");
    ASSERT_STR_CONTAINS(fp_value(&a, "typed.num_neighbors"), "2 edge types' fanouts: [10, 3], [5, 0]");
    ASSERT_STR_CONTAINS(fp_value(&a, "num_bases"), "2");
    ASSERT_STR_CONTAINS(fp_value(&a, "typed.embedding_optim_class_path"), "SparseAdam");
    /* no tables: no table optimiser */
    memset(&b, 0, sizeof b);
    train_state_fingerprint_add_typed(&b, cfg, &ds, feat, (const int64_t(*)[MINIBATCH_MAX_EDGE_TYPES])fan, 2, 0);
    ASSERT(fp_value(&b, "typed.embedding_optim_class_path") == NULL);
    /* long: 30 node types do not fit a value: a count and a hash, which one count changes */
    ds.num_node_types = T;
    memset(&a, 0, sizeof a);
    train_state_fingerprint_add_typed(&a, cfg, &ds, feat, (const int64_t(*)[MINIBATCH_MAX_EDGE_TYPES])fan, 2, 1);
    ASSERT_STR_CONTAINS(fp_value(&a, "typed.node_types"), "30 node types, hash ");
    ASSERT(strlen(fp_value(&a, "typed.node_types")) < sizeof a.value[0] - 1);
    nt[T - 1].num_nodes++;
    memset(&b, 0, sizeof b);
    train_state_fingerprint_add_typed(&b, cfg, &ds, feat, (const int64_t(*)[MINIBATCH_MAX_EDGE_TYPES])fan, 2, 1);
    ASSERT(strcmp(fp_value(&a, "typed.node_types"), fp_value(&b, "typed.node_types")) != 0);
    ASSERT(strcmp(fp_value(&a, "typed.edge_types"), fp_value(&b, "typed.edge_types")) == 0);
    /* one fanout of one edge type */
    fan[1][1] = 2;
    memset(&b, 0, sizeof b);
    train_state_fingerprint_add_typed(&b, cfg, &ds, feat, (const int64_t(*)[MINIBATCH_MAX_EDGE_TYPES])fan, 2, 1);
    ASSERT_STR_CONTAINS(fp_value(&b, "typed.num_neighbors"), "[5, 2]");
    free(et);
    free(cfg);
}

int main(void) {
    RUN(round_trip_and_refusals);
    RUN(typed_fingerprint);
    return test_summary();
}
