/* cli_embed.c — `cgnn embed --task_config_uri=task.yaml [--resource_config_uri=r.yaml] [--out F.npy]
 * [--batch N] [--activations_dir DIR]`: the final-layer output of every node of the dataset by
 * layer-wise full-neighbourhood inference with the trained model (GiGL's Inferencer; nn/infer.h).
 * Under mpirun every rank computes a slice of the nodes; rank 0 writes the .npy. On a partitioned
 * graph (preprocessedMetadataUri names a `cgnn partition` output) rank r computes part r % P's
 * nodes (nn/infer.h: infer_run_part) and rank 0 gathers them in original id order. On a typed
 * dataset (HeteroSAGE / RGCN models) --out names a directory that gets one <node type>.npy per
 * node type (--node_types chooses them; nn/infer_typed.h). */
#include <cblas.h>
#undef I
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/cli.h"
#include "graph/partbook.h"
#include "dist/dist.h"
#include "graph/csc.h"
#include "io/dataset.h"
#include "io/npy.h"
#include "io/outguard.h"
#include "io/safetensors.h"
#include "nn/infer.h"
#include "nn/infer_typed.h"
#include "nn/lightgcn.h"
#include "nn/ops.h"
#include "graph/typed_graph.h"
#include "dist/dist_rpc.h"
#include "sample/batch_rpc.h"
#include "sample/part_rpc.h"
#include "train/graph_store.h"
#include "train/config.h"
#include "train/gigl_import.h"
#include "train/outputs.h"
#include "train/progress.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/timer.h"

static cli_flag EMBED_FLAGS[] = {
    {"task_config_uri", "URI", "GiGL task config YAML (path or file://) — required", NULL},
    {"resource_config_uri", "URI", "GiGL resource config YAML (optional; compute threads)", NULL},
    {"out", "PATH", "output .npy, (num_nodes, out_channels) float32 (default: embeddings.npy beside "
                    "trainedModelUri); a typed dataset: a directory of <node type>.npy files (default: embeddings/ "
                    "beside trainedModelUri)", NULL},
    {"node_types", "LIST", "typed datasets: the node types to write, comma-separated (default: all)", NULL},
    {"batch", "N", "destination nodes per block (default 8192): memory ~ N x (1 + mean in-degree) x hidden", NULL},
    {"activations_dir", "DIR", "keep each layer's activations in memory-mapped files DIR/layer_<l>.f32 (deleted at "
                               "the end) instead of memory; under mpirun DIR must be shared by all ranks", NULL},
    {"quiet", NULL, "no progress output (errors only)", NULL},
};
static const cli_command EMBED_CMD = {
    "embed",
    "cgnn embed --task_config_uri=task.yaml [--resource_config_uri=r.yaml] [--out F.npy] [--batch N] "
    "[--activations_dir DIR] [--node_types a,b]",
    "Computes the embedding (final-layer output) of every node with the model at trainedModelUri,\n"
    "layer by layer over the whole graph: each node's layer-l output from ALL its in-neighbours'\n"
    "layer-(l-1) outputs (exact, no sampling; PyG BasicGNN.inference). ReLU between layers, L2\n"
    "normalisation of the last as should_l2_normalize_embedding_layer_output says. Writes an\n"
    "(N, D) float32 .npy. Under mpirun the ranks split the nodes; the file is the same bits.\n"
    "On a typed dataset: one (N_t, D) file <node type>.npy per node type in the --out directory.",
    EMBED_FLAGS, sizeof EMBED_FLAGS / sizeof EMBED_FLAGS[0]};

typedef struct embed_job {
    dataset ds;
    csc_graph g;
    const dataset *dsp;  /* ds, or the part's (pb.ds) */
    /* a partitioned graph: this rank's part, served to the others (sample/part_rpc) */
    int parted;
    partbook pb;
    sampler_part spart;
    dist_rpc *rpc;       /* created collectively before the setup */
    part_rpc pr;
    int have_pr;
    st_file ckpt;
    model m;
    infer_input in;
    char out[4200];
    int have_ds, have_g, have_ckpt, have_m;
    /* a typed dataset: its per-edge-type indexes, each type's input, the files written */
    int typed;
    typed_graph tg;
    infer_typed_input tin;
    int write_type[MINIBATCH_MAX_NODE_TYPES];           /* 1: <out>/<type>.npy is written */
    char type_out[MINIBATCH_MAX_NODE_TYPES][4200 + DATASET_NAME_MAX + 8];
    outguard guard;      /* rank 0: inputs, and the lock on the output */
} embed_job;

static void job_free(embed_job *j) {
    outguard_free(&j->guard);
    if (j->have_pr) part_rpc_free(&j->pr);
    dist_rpc_free(j->rpc);
    partbook_close(&j->pb);
    if (j->have_m) model_free(&j->m);
    typed_graph_free(&j->tg);
    if (j->have_ckpt) safetensors_free(&j->ckpt);
    if (j->have_g) csc_free(&j->g);
    if (j->have_ds) dataset_close(&j->ds);
}

/* Opens the data and the checkpoint and checks them against each other. */
static int job_setup_typed(embed_job *j, const task_config *tc, const char *res_file, const char *out_flag,
                           const char *types_flag, const char *act_dir, const dist_ctx *d, cgnn_err *err);

/* The model's input as its checkpoint records it (outputs_save_model_input): the checkpoint's
 * node feature and normalisation win over the config's (a warning on rank 0 when they differ);
 * a checkpoint without them (older, or GiGL's) leaves the config's. */
static const char *embed_node_feature(const task_config *tc, const st_file *ckpt, const char *ck, int root) {
    const char *m = safetensors_meta(ckpt, "node_feature");
    if (!m || !*m) return tc->args.node_feature;
    if (root && tc->args.node_feature[0] && strcmp(m, tc->args.node_feature) != 0)
        log_warn("%s was trained on node feature '%s'; trainerArgs.node_feature says '%s': the checkpoint's is used", ck,
                 m, tc->args.node_feature);
    return m;
}

static int embed_normalize_rows(const task_config *tc, const st_file *ckpt, const char *ck, int root) {
    const char *m = safetensors_meta(ckpt, "feature_normalization");
    if (!m || (strcmp(m, "row") != 0 && strcmp(m, "none") != 0))
        return strcmp(tc->args.feature_normalization, "row") == 0;
    if (root && strcmp(m, tc->args.feature_normalization) != 0)
        log_warn("%s was trained with feature_normalization %s; trainerArgs says %s: the checkpoint's is used", ck, m,
                 tc->args.feature_normalization);
    return strcmp(m, "row") == 0;
}

static int job_setup(embed_job *j, const task_config *tc, const char *res_file, const char *out_flag,
                     const char *types_flag, const char *act_dir, const dist_ctx *d, cgnn_err *err) {
    const int root = d->rank == 0;
    const char *ck = tc->trained_model_uri;
    if (!ck[0] || access(ck, F_OK) != 0)
        return err_set(err, CGNN_ERR_INPUT,
                       "%s: sharedConfig.trainedModelMetadata.trainedModelUri: '%s' does not exist (train the model "
                       "first: cgnn train)", tc->file, ck);
    if (j->parted) { /* part rank % P: its dataset, local index and the id maps */
        char what[CONFIG_PATH_MAX + 64];
        snprintf(what, sizeof what, "%s: sharedConfig.preprocessedMetadataUri", tc->file);
        if (partbook_open_for_rank(&j->pb, tc->dataset_path, d->rank, d->size, 0, what, err) != 0) return -1;
        if (j->pb.typed)
            return err_set(err, CGNN_ERR_INPUT,
                           "%s: sharedConfig.preprocessedMetadataUri: %s is a typed partition; cgnn embed does not "
                           "run on typed parts yet: point it at the whole typed dataset (a model trained on the "
                           "parts is bitwise the replicated run's, so its embeddings are the same)",
                           tc->file, tc->dataset_path);
        const int P = j->pb.num_parts;
        j->dsp = &j->pb.ds;
        j->spart = (sampler_part){P, j->pb.part, j->pb.node_map, j->pb.orig_of_local, j->pb.num_nodes,
                                  j->pb.num_edges, j->pb.max_in_degree, NULL, NULL, NULL};
    } else {
        if (dataset_open(&j->ds, tc->dataset_path, err) != 0) return -1;
        j->have_ds = 1;
        j->dsp = &j->ds;
        if (j->ds.num_edge_types < 1) return err_set(err, CGNN_ERR_INPUT, "%s: the dataset has no edges", j->ds.dir);
        j->typed = dataset_is_typed(&j->ds);
        if (j->typed) {
            if (typed_graph_open(&j->tg, &j->ds, 0, err) != 0) return -1;
        } else {
            if (csc_open_cached(&j->g, &j->ds, 0, 0, err) != 0) return -1;
            j->have_g = 1;
        }
    }
    if (config_check_types(tc, j->dsp, err) != 0) return -1;
    if (j->typed) return job_setup_typed(j, tc, res_file, out_flag, types_flag, act_dir, d, err);
    if (types_flag)
        return err_set(err, CGNN_ERR_INPUT, "--node_types: the dataset %s has no node types (it is not typed)",
                       j->dsp->dir);
    if (outputs_read_checkpoint(&j->ckpt, ck, err) != 0) /* .safetensors, or a .pt in GiGL's layout */
        return err_prefix(err, "%s: sharedConfig.trainedModelMetadata.trainedModelUri: ", tc->file);
    j->have_ckpt = 1;
    const char *feat_name = embed_node_feature(tc, &j->ckpt, ck, root);
    const ds_feature *feat = dataset_node_feature(j->dsp, 0, feat_name);
    if (!feat && feat_name && *feat_name && j->dsp->num_features > 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: node feature '%s' (the model's input) is not in the dataset %s", ck,
                       feat_name, j->dsp->dir);
    int emb = -1;
    if (infer_model_from_checkpoint(&j->m, &j->ckpt, tc->args.l2_normalize_output, &emb, err) != 0) return -1;
    j->have_m = 1;
    if (j->m.cfg.kind != tc->args.model && root)
        log_warn("%s is a %s; trainerArgs.gnn_model_class_path says %s: the checkpoint defines the model", ck,
                 model_kind_name(j->m.cfg.kind), model_kind_name(tc->args.model));
    if (j->m.cfg.kind == MODEL_LIGHTGCN && (j->parted || emb < 0))
        return err_set(err, CGNN_ERR_INPUT, "%s: %s", ck,
                       emb < 0 ? "a LightGCN checkpoint without its 'embedding.weight' table"
                               : "LightGCN propagates over the whole graph: embed it on the whole dataset, not on "
                                 "a partitioned graph");
    j->in.feat = j->m.cfg.num_layers > 0 ? feat : NULL; /* 0 layers: the embeddings alone (MF) */
    j->in.normalize_rows = embed_normalize_rows(tc, &j->ckpt, ck, root);
    if (emb >= 0) {
        j->in.emb = j->ckpt.data[emb];
        j->in.emb_rows = j->ckpt.shapes[emb][0];
        j->in.emb_dim = j->ckpt.shapes[emb][1];
    }
    if (!j->parted && infer_check_input(&j->m, &j->g, &j->in, err) != 0)
        return err_prefix(err, "%s (dataset %s): ", ck, j->ds.dir);
    if (j->parted) { /* this part's services (features, and the activations of each layer) */
        if (part_rpc_init(&j->pr, j->rpc, d->rank, d->size, &j->pb.local, &j->spart, feat, err) != 0) return -1;
        j->have_pr = 1;
        dist_rpc_set_timeout(j->rpc, tc->args.rpc_timeout_s);
        if (dist_rpc_start(j->rpc, err) != 0) return -1;
    }
    if (out_flag) {
        snprintf(j->out, sizeof j->out, "%s", out_flag);
    } else {
        const char *slash = strrchr(ck, '/');
        snprintf(j->out, sizeof j->out, "%.*sembeddings.npy", slash ? (int)(slash - ck + 1) : 0, ck);
    }
    { /* every rank, against its own inputs (its part): never over an input or another output;
       * rank 0 locks the outputs once every rank passed (embed_guard_commit) */
        outguard_add_input(&j->guard, tc->file, "the task config");
        outguard_add_input(&j->guard, res_file, "the resource config");
        outguard_add_dataset(&j->guard, j->dsp);
        if (j->parted) outguard_add_input(&j->guard, j->pb.json_path, "the partition JSON");
        outguard_add_input(&j->guard, ck, "the checkpoint (trainedModelUri)");
        static const char *const own[] = {"layer_*.f32", NULL};
        const char *const also[] = {j->out, NULL};
        if (outguard_check_file(&j->guard, j->out, "embed --out", err) != 0 ||
            outguard_check_dir(&j->guard, act_dir, own, also, "embed --activations_dir", err) != 0)
            return -1;
        outguard_activate(&j->guard);
    }
    if (root && outputs_make_parent(j->out, 0, err) != 0) return -1;
    if (root && act_dir && *act_dir && outputs_make_parent(act_dir, 1, err) != 0) return -1;
    return 0;
}

/* LightGCN (every rank alike; rank 0 writes): the table propagated over the whole graph,
 * Σ_l alpha_l x^(l) (nn/lightgcn.h), L2-normalised when the model normalises. */
static int embed_lightgcn(embed_job *j, int root, cgnn_err *err) {
    const double t0 = timer_now();
    const int64_t N = j->g.num_nodes, D = j->in.emb_dim;
    lightgcn_adj adj;
    if (lightgcn_adj_build(&adj, &j->g, err) != 0) return -1;
    float *out = cgnn_malloc((size_t)(N * D + 1) * sizeof(float));
    lightgcn_forward(&adj, j->in.emb, D, j->m.cfg.prop_layers, j->m.cfg.alpha, out);
    lightgcn_adj_free(&adj);
    if (j->m.cfg.l2_normalize_output) ops_l2norm_forward(out, out, N, D);
    const int64_t shape[2] = {N, D};
    const int bad = root && npy_write(j->out, NPY_DTYPE_FLOAT32, 2, shape, out, err) != 0;
    free(out);
    if (bad) return -1;
    if (root)
        printf("embeddings: %lld x %lld float32 -> %s (LightGCN, %d layers, %lld edges; %.2f s)\n", (long long)N,
               (long long)D, j->out, j->m.cfg.prop_layers, (long long)j->g.num_edges, timer_now() - t0);
    return 0;
}

/* 1 if a node type's name can name a file <name>.npy in a directory (and a pattern for it). */
static int type_name_is_file_name(const char *name) {
    return name[0] && strcmp(name, ".") && strcmp(name, "..") && !strpbrk(name, "/*?[\\");
}

/* job_setup on a typed dataset: the typed model from the checkpoint, the node types to write
 * (--node_types, default all), the output directory and its files, guarded and locked (rank 0),
 * the files of a previous run removed. */
static int job_setup_typed(embed_job *j, const task_config *tc, const char *res_file, const char *out_flag,
                           const char *types_flag, const char *act_dir, const dist_ctx *d, cgnn_err *err) {
    const int root = d->rank == 0;
    const dataset *ds = j->dsp;
    const int T = ds->num_node_types;
    const char *ck = tc->trained_model_uri;
    if (safetensors_read(&j->ckpt, ck, err) != 0)
        return err_prefix(err, "%s: sharedConfig.trainedModelMetadata.trainedModelUri: ", tc->file);
    j->have_ckpt = 1;
    if (infer_typed_model_from_checkpoint(&j->m, &j->tin, &j->ckpt, ds, tc->args.l2_normalize_output, err) != 0)
        return -1;
    j->have_m = 1;
    if (j->m.cfg.kind != tc->args.model && tc->args.model_given && root) /* none named: HGT is the typed default */
        log_warn("%s is a %s; trainerArgs.gnn_model_class_path says %s: the checkpoint defines the model", ck,
                 model_kind_name(j->m.cfg.kind), model_kind_name(tc->args.model));
    j->tin.normalize_rows = embed_normalize_rows(tc, &j->ckpt, ck, root);
    if (!types_flag) {
        for (int t = 0; t < T; t++) j->write_type[t] = 1;
    } else { /* a comma-separated list of the dataset's node types */
        const char *p = types_flag;
        int any = 0;
        for (;;) {
            const char *c = strchr(p, ',');
            const size_t n = c ? (size_t)(c - p) : strlen(p);
            int t = -1;
            for (int k = 0; k < T && t < 0; k++)
                if (strlen(ds->node_types[k].name) == n && !strncmp(ds->node_types[k].name, p, n)) t = k;
            if (t < 0) {
                char names[1024];
                size_t len = 0;
                names[0] = '\0';
                for (int k = 0; k < T && len < sizeof names; k++)
                    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "", ds->node_types[k].name);
                return err_set(err, CGNN_ERR_INPUT, "--node_types: '%.*s' is not a node type of the dataset %s (%s)",
                               (int)n, p, ds->dir, names);
            }
            j->write_type[t] = 1;
            any = 1;
            if (!c) break;
            p = c + 1;
        }
        if (!any) return err_set(err, CGNN_ERR_INPUT, "--node_types: no node type given");
    }
    for (int t = 0; t < T; t++)
        if (j->write_type[t] && !type_name_is_file_name(ds->node_types[t].name))
            return err_set(err, CGNN_ERR_INPUT,
                           "node type '%s' of the dataset %s cannot name a file <type>.npy in --out (it holds '/', a "
                           "glob character or is . or ..); leave it out with --node_types",
                           ds->node_types[t].name, ds->dir);
    if (out_flag) {
        snprintf(j->out, sizeof j->out, "%s", out_flag);
        const size_t n = strlen(j->out);
        if (n >= 4 && !strcmp(j->out + n - 4, ".npy"))
            return err_set(err, CGNN_ERR_INPUT,
                           "--out %s: the dataset %s is typed: cgnn embed writes one file per node type, so --out "
                           "names a directory (of <node type>.npy files), not an .npy",
                           j->out, ds->dir);
    } else {
        const char *slash = strrchr(ck, '/');
        snprintf(j->out, sizeof j->out, "%.*sembeddings", slash ? (int)(slash - ck + 1) : 0, ck);
    }
    const char *own[MINIBATCH_MAX_NODE_TYPES + 2]; /* every type's file (a previous run's too), layer files */
    char pattern[MINIBATCH_MAX_NODE_TYPES][DATASET_NAME_MAX + 8];
    const char *also[MINIBATCH_MAX_NODE_TYPES + 1];
    int n_own = 0, n_also = 0;
    for (int t = 0; t < T; t++) {
        snprintf(j->type_out[t], sizeof j->type_out[t], "%s/%s.npy", j->out, ds->node_types[t].name);
        if (!type_name_is_file_name(ds->node_types[t].name)) continue;
        snprintf(pattern[t], sizeof pattern[t], "%s.npy", ds->node_types[t].name);
        own[n_own++] = pattern[t];
        if (j->write_type[t]) also[n_also++] = j->type_out[t];
    }
    own[n_own++] = "layer_*.f32";
    own[n_own] = NULL;
    also[n_also] = NULL;
    { /* every rank: never over an input, another output, or another job's output */
        outguard_add_input(&j->guard, tc->file, "the task config");
        outguard_add_input(&j->guard, res_file, "the resource config");
        outguard_add_dataset(&j->guard, ds);
        outguard_add_input(&j->guard, ck, "the checkpoint (trainedModelUri)");
        static const char *const act_own[] = {"layer_*.f32", NULL};
        if (outguard_check_dir(&j->guard, j->out, own, NULL, "embed --out", err) != 0 ||
            outguard_check_dir(&j->guard, act_dir, act_own, also, "embed --activations_dir", err) != 0)
            return -1;
        for (int t = 0; t < T; t++)
            if (j->write_type[t] && outguard_check_file(&j->guard, j->type_out[t], "embed --out", err) != 0) return -1;
        outguard_activate(&j->guard);
    }
    if (root) { /* typed graphs embed whole (every rank holds the same inputs): rank 0 goes on */
        if (outguard_lock(&j->guard, j->out, "embed --out", "cgnn embed", err) != 0 ||
            (act_dir && *act_dir && strcmp(act_dir, j->out) != 0 &&
             outguard_lock(&j->guard, act_dir, "embed --activations_dir", "cgnn embed", err) != 0))
            return -1;
        /* a previous run's files (any type): the directory never mixes two runs */
        for (int t = 0; t < T; t++) {
            if (!type_name_is_file_name(ds->node_types[t].name)) continue;
            outguard_remove_stale_tmp(&j->guard, j->type_out[t]);
            if (outputs_remove(j->type_out[t], err) != 0) return -1;
        }
        if (outputs_make_parent(j->out, 1, err) != 0) return -1;
        if (act_dir && *act_dir && outputs_make_parent(act_dir, 1, err) != 0) return -1;
    }
    return 0;
}

typedef struct embed_progress {
    progress p;
} embed_progress;

static void on_chunk(void *ctx, int layer, int num_layers, int64_t done, int64_t total) {
    embed_progress *e = ctx;
    if (done == 0) {
        progress_epoch(&e->p, layer, num_layers, total);
        return;
    }
    progress_step(&e->p, "layer", "chunks");
    if (done == total) progress_end_phase(&e->p, "layer", "chunks");
}

/* infer_part.publish: the rows ACT serves from now on */
static void publish_rows(void *ctx, const float *rows, int64_t n, int64_t dim) { part_rpc_set_rows(ctx, rows, n, dim); }

/* The rest of cli_cmd_embed on a typed dataset (after job_setup): every rank checks that the
 * others embed the same graph with the same model, computes its slices (nn/infer_typed.h), and
 * rank 0 writes <out>/<type>.npy for each chosen type. Collective; 0, or the exit code with *err. */
static int embed_typed(embed_job *j, const task_config *tc, int64_t chunk, const char *act_dir, int quiet,
                       int threads, const dist_ctx *d, cgnn_err *err) {
    (void)tc;
    const int root = d->rank == 0;
    const typed_graph *g = &j->tg;
    const dataset *ds = j->dsp;
    const int T = g->num_node_types, K = g->num_edge_types;
    int64_t edges = 0;
    uint64_t eid = 0;
    for (int e = 0; e < K; e++) {
        edges += g->csc[e]->num_edges;
        eid = eid * 1000003u + g->csc[e]->edges_crc;
    }
    { /* every rank embeds the same graph with the same model, in the same chunks */
        const char *names[] = {"the dataset's node count", "the dataset's edges (CRC-32 of the ids)",
                               "the model's layers", "the model's hidden channels", "the model's output channels",
                               "--batch"};
        const int64_t vals[] = {g->offset[T], (int64_t)(eid >> 1), j->m.cfg.num_layers, j->m.cfg.hidden_dim,
                                j->m.cfg.out_dim, chunk};
        if (dist_check_agreement(d, names, vals, (int)(sizeof vals / sizeof vals[0]), err) != 0)
            return err->code ? err->code : CGNN_ERR_RUNTIME;
    }
    int featureless = 0, written = 0;
    for (int t = 0; t < T; t++) featureless += j->tin.feat[t] == NULL, written += j->write_type[t];
    log_info("%s, %d layers (hidden %lld -> %lld channels%s) on %s: %d node types, %d edge types, %lld nodes, %lld "
             "edges; %d featureless type%s (learnable tables); writing %d type%s to %s/; blocks of %lld nodes; %d "
             "process%s x %d threads; activations %s%s",
             model_kind_name(j->m.cfg.kind), j->m.cfg.num_layers, (long long)j->m.cfg.hidden_dim,
             (long long)j->m.cfg.out_dim, j->m.cfg.l2_normalize_output ? ", L2-normalised" : "",
             ds->name[0] ? ds->name : ds->dir, T, K, (long long)g->offset[T], (long long)edges, featureless,
             featureless == 1 ? "" : "s", written, written == 1 ? "" : "s", j->out, (long long)chunk, d->size,
             d->size == 1 ? "" : "es", threads, act_dir && *act_dir ? "in " : "in memory", act_dir && *act_dir ? act_dir : "");
    embed_progress prog;
    progress_init(&prog.p, root && !quiet);
    infer_options opt = {chunk, act_dir, d, root && !quiet ? on_chunk : NULL, &prog};
    infer_result res;
    if (infer_typed_run(&res, &j->m, g, &j->tin, &opt, err) != 0) return err->code ? err->code : CGNN_ERR_RUNTIME;
    char times[256] = "";
    for (int l = 0, off = 0; l < j->m.cfg.num_layers && off < (int)sizeof times - 32; l++)
        off += snprintf(times + off, sizeof times - (size_t)off, "%s%.2f s", l ? ", " : "", res.layer_seconds[l]);
    log_info("layers took %s (rank 0, the input projection with layer 0); %lld blocks, %lld edges aggregated", times,
             (long long)res.chunks, (long long)res.edges);
    int bad = 0;
    for (int t = 0; t < T && root && !bad; t++) {
        if (!j->write_type[t]) continue;
        const int64_t shape[2] = {g->num_nodes[t], res.dim};
        bad = npy_write(j->type_out[t], NPY_DTYPE_FLOAT32, 2, shape, res.embeddings + g->offset[t] * res.dim, err) != 0;
    }
    double slowest = res.seconds;
    if (d->size > 1) { /* the job took as long as its slowest rank */
        int64_t ms = (int64_t)(res.seconds * 1e3);
        dist_allreduce_max_i64(d, &ms, 1);
        slowest = (double)ms * 1e-3;
    }
    const int64_t dim = res.dim;
    infer_result_free(&res);
    if (dist_phase_failed(d, bad, err)) return err->code ? err->code : CGNN_ERR_RUNTIME;
    if (root) {
        for (int t = 0; t < T; t++)
            if (j->write_type[t])
                printf("embeddings of %s: %lld x %lld float32 -> %s\n", ds->node_types[t].name,
                       (long long)g->num_nodes[t], (long long)dim, j->type_out[t]);
        printf("embedded %lld nodes of %d node types in %.2f s (%.0f nodes/s)\n", (long long)g->offset[T], T, slowest,
               slowest > 0 ? (double)g->offset[T] / slowest : 0.0);
    }
    return 0;
}

/* ---- server-client mode (a graph-store resource config): storage ranks build the blocks ---- */

typedef struct gs_embed {
    const task_config *tc;
    const char *res_file, *out_flag, *act_dir;
    int64_t chunk;
    int quiet, threads;
    /* the compute ranks' state */
    partbook pb;
    st_file ckpt;
    model m;
    infer_input in;
    int have_pb, have_ckpt, have_m, have_bc;
    char out[4200];
    outguard guard;
    batch_client bc;
    minibatch mb;                /* the last block (batch_client_build_grow sizes it) */
    sampler_config sc;           /* one layer, every in-edge */
    int64_t feat_dim;            /* F of the blocks' rows (0: none) */
    int num_storage, parts_per_storage;
} gs_embed;

/* infer_remote.block: the one-hop block of ids[0..n) from the storage rank owning ids[0]. */
static int gs_block(void *ctx, const int64_t *ids, int64_t n, int with_rows, const minibatch **mb, cgnn_err *err) {
    gs_embed *g = ctx;
    int s = 0; /* storage rank s holds new ids [node_map[s k], node_map[(s + 1) k]) */
    while (s + 1 < g->num_storage && ids[0] >= g->pb.node_map[(s + 1) * g->parts_per_storage]) s++;
    const loader_remote_batch rq = {s, 0, &g->sc, g->in.normalize_rows, with_rows ? g->feat_dim : 0, ids, n, NULL, 0, NULL, 0};
    if (batch_client_build_grow(&g->bc, &rq, &g->mb, g->feat_dim, err) != 0) return -1;
    *mb = &g->mb;
    return 0;
}

static void gs_embed_free(gs_embed *g) {
    outguard_free(&g->guard);
    if (g->have_bc) batch_client_free(&g->bc);
    minibatch_free(&g->mb);
    if (g->have_m) model_free(&g->m);
    if (g->have_ckpt) safetensors_free(&g->ckpt);
    if (g->have_pb) partbook_close(&g->pb);
}

/* The compute ranks' setup: the partition JSON and id maps, the model, the output (rank 0). */
static int gs_embed_setup(gs_embed *g, const graph_store_client *gc, const dist_ctx *group, cgnn_err *err) {
    const task_config *tc = g->tc;
    const char *ck = tc->trained_model_uri;
    if (!ck[0] || access(ck, F_OK) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: sharedConfig.trainedModelMetadata.trainedModelUri: '%s' does not "
                       "exist (train the model first: cgnn train)", tc->file, ck);
    if (partbook_open_client(&g->pb, tc->dataset_path, g->threads, err) != 0)
        return err_prefix(err, "%s: sharedConfig.preprocessedMetadataUri: ", tc->file);
    g->have_pb = 1;
    if (g->pb.typed)
        return err_set(err, CGNN_ERR_INPUT, "%s: sharedConfig.preprocessedMetadataUri: %s is a typed partition; cgnn "
                       "embed does not run on typed parts yet", tc->file, tc->dataset_path);
    if (outputs_read_checkpoint(&g->ckpt, ck, err) != 0)
        return err_prefix(err, "%s: sharedConfig.trainedModelMetadata.trainedModelUri: ", tc->file);
    g->have_ckpt = 1;
    int emb = -1;
    if (infer_model_from_checkpoint(&g->m, &g->ckpt, tc->args.l2_normalize_output, &emb, err) != 0) return -1;
    g->have_m = 1;
    g->in.normalize_rows = embed_normalize_rows(tc, &g->ckpt, ck, 1);
    if (emb >= 0) {
        g->in.emb = g->ckpt.data[emb];
        g->in.emb_rows = g->ckpt.shapes[emb][0];
        g->in.emb_dim = g->ckpt.shapes[emb][1];
    }
    g->feat_dim = g->m.cfg.num_layers > 0 && gc->has_feat ? gc->feat_dim : 0; /* 0 layers: the embeddings alone */
    g->sc.num_layers = 1;
    g->sc.fanouts[0] = -1;
    g->num_storage = gc->num_storage;
    g->parts_per_storage = gc->parts_per_storage;
    int peers[BATCH_CLIENT_MAX_PEERS], index[BATCH_CLIENT_MAX_PEERS];
    if (gc->num_storage > BATCH_CLIENT_MAX_PEERS)
        return err_set(err, CGNN_ERR_INPUT, "server-client cgnn embed: %d storage ranks (at most %d)", gc->num_storage,
                       BATCH_CLIENT_MAX_PEERS);
    for (int s = 0; s < gc->num_storage; s++) peers[s] = gc->first_storage + s, index[s] = s;
    if (batch_client_init(&g->bc, gc->rpc, peers, index, gc->num_storage, g->pb.num_nodes, g->pb.num_edges,
                          g->pb.max_in_degree, gc->has_feat ? gc->feat_dtype : -1, err) != 0)
        return -1;
    g->have_bc = 1;
    if (g->out_flag) {
        snprintf(g->out, sizeof g->out, "%s", g->out_flag);
    } else {
        const char *slash = strrchr(ck, '/');
        snprintf(g->out, sizeof g->out, "%.*sembeddings.npy", slash ? (int)(slash - ck + 1) : 0, ck);
    }
    if (group->rank == 0) { /* never over an input, another output, or another job's output */
        outguard_add_input(&g->guard, tc->file, "the task config");
        outguard_add_input(&g->guard, g->res_file, "the resource config");
        outguard_add_input(&g->guard, g->pb.json_path, "the partition JSON");
        outguard_add_input(&g->guard, ck, "the checkpoint (trainedModelUri)");
        if (outguard_check_file(&g->guard, g->out, "embed --out", err) != 0 ||
            outguard_lock(&g->guard, g->out, "embed --out", "cgnn embed", err) != 0)
            return -1;
        outguard_activate(&g->guard);
        outguard_remove_stale_tmp(&g->guard, g->out);
        if (outputs_make_parent(g->out, 0, err) != 0) return -1;
    }
    return 0;
}

/* graph_store_serve's compute job: every compute rank computes its slice of every layer from the
 * storage ranks' blocks (nn/infer.h: infer_run_remote); rank 0 writes the rows in original id order. */
static int gs_embed_compute(void *ctx, const graph_store_client *gc, const dist_ctx *group, cgnn_err *err) {
    gs_embed *g = ctx;
    const int root = group->rank == 0;
    int rc = -1;
    if (dist_phase_failed(group, gs_embed_setup(g, gc, group, err) != 0, err)) goto out;
    log_info("server-client embed: %s, %d layers (%lld -> %lld channels%s), %lld nodes, %lld edges; input: %lld "
             "feature + %lld embedding channels; blocks of %lld nodes from %d storage rank%s; %d compute rank%s x "
             "%d threads",
             model_kind_name(g->m.cfg.kind), g->m.cfg.num_layers, (long long)g->m.cfg.in_dim,
             (long long)g->m.cfg.out_dim, g->m.cfg.l2_normalize_output ? ", L2-normalised" : "",
             (long long)g->pb.num_nodes, (long long)g->pb.num_edges, (long long)g->feat_dim, (long long)g->in.emb_dim,
             (long long)g->chunk, gc->num_storage, gc->num_storage == 1 ? "" : "s", group->size,
             group->size == 1 ? "" : "s", g->threads);
    embed_progress prog;
    progress_init(&prog.p, root && !g->quiet);
    const infer_options opt = {g->chunk, g->act_dir, group, root && !g->quiet ? on_chunk : NULL, &prog};
    const infer_remote ir = {g->pb.num_nodes, g->pb.orig_of_new, g->feat_dim, gs_block, g};
    infer_result res;
    if (infer_run_remote(&res, &g->m, &g->in, &ir, &opt, err) != 0) goto out;
    int bad = 0;
    if (root) { /* new-id order -> original id order */
        const int64_t N = res.num_nodes, D = res.dim;
        float *full = cgnn_malloc((size_t)(N * D + 1) * sizeof(float));
        for (int64_t v = 0; v < N; v++)
            memcpy(full + g->pb.orig_of_new[v] * D, res.embeddings + v * D, (size_t)D * sizeof(float));
        const int64_t shape[2] = {N, D};
        bad = npy_write(g->out, NPY_DTYPE_FLOAT32, 2, shape, full, err) != 0;
        free(full);
        if (!bad)
            printf("embeddings: %lld x %lld float32 -> %s (%.2f s, %.0f nodes/s; %lld blocks, %lld edges on rank 0)\n",
                   (long long)N, (long long)D, g->out, res.seconds, res.seconds > 0 ? (double)N / res.seconds : 0.0,
                   (long long)res.chunks, (long long)res.edges);
    }
    infer_result_free(&res);
    rc = dist_phase_failed(group, bad, err) ? -1 : 0;
out:
    gs_embed_free(g);
    return rc;
}

/* graph_store_serve's declare: the output as gs_embed_setup names it, for the storage ranks'
 * guards (their parts against it). */
static int gs_embed_declare(void *ctx, outguard *guard, cgnn_err *err) {
    const gs_embed *g = ctx;
    const char *ck = g->tc->trained_model_uri;
    char out[sizeof g->out];
    if (g->out_flag) {
        snprintf(out, sizeof out, "%s", g->out_flag);
    } else {
        const char *slash = strrchr(ck, '/');
        snprintf(out, sizeof out, "%.*sembeddings.npy", slash ? (int)(slash - ck + 1) : 0, ck);
    }
    static const char *const own[] = {"layer_*.f32", NULL};
    const char *const also[] = {out, NULL};
    if (outguard_check_file(guard, out, "embed --out", err) != 0) return -1;
    return outguard_check_dir(guard, g->act_dir, own, also, "embed --activations_dir", err);
}

/* cgnn embed with a graph-store resource config: S storage ranks + T compute ranks in one job
 * (train/graph_store.h). Collective over d; returns the exit status (rank 0 printed the error). */
static int embed_graph_store(task_config *tc, const resource_config *rc, const dist_ctx *d, gs_embed *g) {
    cgnn_err err = {0};
    graph_store_layout lay;
    if (graph_store_layout_of(rc, d->size, d->rank, &lay, &err) != 0) { /* the same on every rank */
        if (d->rank == 0) cli_fail(&err);
        return err.code ? err.code : CGNN_ERR_INPUT;
    }
    /* the storage ranks' feature cache is pre-sampled for training batches: not for embedding */
    tc->args.cache_policy = CACHE_POLICY_NONE;
    dist_ctx group;
    dist_split(d, lay.storage, &group);
    dist_rpc *rpc = NULL;
    int status;
    if (dist_phase_failed(d, dist_rpc_create(&rpc, d, &err) != 0, &err))
        status = err.code ? err.code : CGNN_ERR_RUNTIME;
    else
        status = graph_store_serve(tc, rc, d, &group, rpc, &lay, gs_embed_compute, gs_embed_declare, g, &err);
    if (status != 0 && d->rank == 0) cli_fail(&err);
    dist_rpc_free(rpc);
    dist_split_free(&group);
    return status;
}

/* Rank 0, once every rank's guard passed: locks the outputs and removes temporary files of
 * killed runs (never an input). */
static int embed_guard_commit(embed_job *j, const char *act_dir, cgnn_err *err) {
    if (outguard_lock(&j->guard, j->out, "embed --out", "cgnn embed", err) != 0 ||
        (act_dir && *act_dir && outguard_lock(&j->guard, act_dir, "embed --activations_dir", "cgnn embed", err) != 0))
        return -1;
    outguard_remove_stale_tmp(&j->guard, j->out);
    return 0;
}

int cli_cmd_embed(int argc, char **argv) {
    cgnn_err err = {0};
    const char *pos[1];
    int npos, help;
    if (cli_parse(&EMBED_CMD, argc, argv, pos, 0, &npos, &help, &err) != 0) return cli_fail(&err);
    if (help) {
        cli_print_help(&EMBED_CMD);
        return 0;
    }
    const char *task_uri = cli_flag_str(&EMBED_CMD, "task_config_uri");
    if (!task_uri) {
        err_set(&err, CGNN_ERR_INPUT, "embed: --task_config_uri is required (see cgnn embed --help)");
        return cli_fail(&err);
    }
    int quiet = 0;
    int64_t chunk = INFER_DEFAULT_CHUNK;
    if (cli_flag_bool(&EMBED_CMD, "quiet", &quiet, &err) != 0 || cli_flag_int(&EMBED_CMD, "batch", 1, 1 << 30, &chunk, &err) != 0)
        return cli_fail(&err);
    if (chunk < 1) {
        err_set(&err, CGNN_ERR_INPUT, "--batch: %lld must be >= 1", (long long)chunk);
        return cli_fail(&err);
    }
    const char *act_dir = cli_flag_str(&EMBED_CMD, "activations_dir");
    task_config *tc = cgnn_calloc(1, sizeof *tc);
    resource_config rc;
    embed_job *j = cgnn_calloc(1, sizeof *j);
    int status = 0;
    int bad = config_load_task(tc, task_uri, &err) != 0 ||
              config_load_resource(&rc, cli_flag_str(&EMBED_CMD, "resource_config_uri"), &err) != 0;
    /* a partitioned graph's ranks serve each other from a service thread: MPI_THREAD_MULTIPLE */
    j->parted = !bad && (partbook_is_partition(tc->dataset_path) || rc.graph_store);
    dist_ctx d;
    cgnn_err ierr = {0};
    if (dist_init_threads(&d, NULL, NULL, j->parted, &ierr) != 0 && !bad) {
        bad = 1;
        err = ierr;
        err_prefix(&err, "%s: a partitioned graph: ", tc->dataset_path);
    }
    const int root = d.rank == 0;
    if (quiet || !root) log_level = 0;
    /* GiGL's preprocessed output: the dataset cgnn train converted it into (the same cache entry) */
    if (!bad && gigl_import_resolve(tc, &err) != 0) bad = 1;
    if (!bad && !rc.graph_store && rc.num_replicas > 0 && rc.num_replicas != d.size)
        bad = err_set(&err, CGNN_ERR_INPUT, "resource config: mpi_trainer_config.num_replicas is %d but the job runs %d "
                      "process%s", rc.num_replicas, d.size, d.size == 1 ? "" : "es") != 0;
    if (dist_phase_failed(&d, bad, &err)) goto fail;
    /* compute threads as `cgnn train` chooses them: never oversubscribed by default */
    int threads = rc.num_threads_per_replica > 0 ? rc.num_threads_per_replica
                  : (d.size == 1 && rc.num_workers > 0) ? rc.num_workers
                                                        : omp_get_num_procs() / (d.local_size > 0 ? d.local_size : 1);
    if (threads < 1) threads = 1;
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    if (rc.graph_store) { /* server-client mode: storage ranks serve, compute ranks run the layers */
        gs_embed g = {.tc = tc, .res_file = rc.file, .out_flag = cli_flag_str(&EMBED_CMD, "out"),
                      .act_dir = act_dir, .chunk = chunk, .quiet = quiet, .threads = threads};
        outguard_init(&g.guard);
        status = embed_graph_store(tc, &rc, &d, &g);
        outguard_free(&g.guard); /* a storage rank's (a compute rank's was freed with the rest) */
        free(j);
        free(tc);
        dist_finalize(&d);
        return status;
    }

    /* rank 0 first: it builds and caches the graph index, then the others load it (parts: all at
     * once, after the rpc layer is created, collectively) */
    if (j->parted && dist_phase_failed(&d, dist_rpc_create(&j->rpc, &d, &err) != 0, &err)) goto fail;
    if (!root && !j->parted) dist_barrier(&d);
    outguard_init(&j->guard);
    bad = job_setup(j, tc, rc.file, cli_flag_str(&EMBED_CMD, "out"), cli_flag_str(&EMBED_CMD, "node_types"), act_dir,
                    &d, &err) != 0;
    if (root && !j->parted) dist_barrier(&d);
    if (dist_phase_failed(&d, bad, &err)) goto fail;
    if (!j->typed && dist_phase_failed(&d, root && embed_guard_commit(j, act_dir, &err) != 0, &err)) goto fail;
    if (j->typed) {
        status = embed_typed(j, tc, chunk, act_dir, quiet, threads, &d, &err);
        if (status != 0) goto fail;
        goto done;
    }
    const int64_t whole_n = j->parted ? j->pb.num_nodes : j->g.num_nodes;
    const int64_t whole_e = j->parted ? j->pb.num_edges : j->g.num_edges;
    { /* every rank embeds the same graph with the same model, in the same chunks */
        const char *names[] = {"the dataset's node count", "the dataset's edges (CRC-32 of the ids)",
                               "the model's layers", "the model's input channels", "the model's hidden channels",
                               "the model's output channels", "--batch"};
        const int64_t vals[] = {whole_n,
                                j->parted ? (int64_t)crc32(0L, (const unsigned char *)j->pb.partition_id,
                                                           (uInt)strlen(j->pb.partition_id))
                                          : (int64_t)j->g.edges_crc,
                                j->m.cfg.num_layers, j->m.cfg.in_dim,
                                j->m.cfg.hidden_dim, j->m.cfg.out_dim, chunk};
        if (dist_check_agreement(&d, names, vals, (int)(sizeof vals / sizeof vals[0]), &err) != 0) goto fail;
    }
    if (j->m.cfg.kind == MODEL_LIGHTGCN) {
        bad = embed_lightgcn(j, root, &err) != 0;
        if (dist_phase_failed(&d, bad, &err)) goto fail;
        goto done;
    }
    int64_t in_dims[MINIBATCH_MAX_LAYERS + 1], out_dims[MINIBATCH_MAX_LAYERS + 1];
    in_dims[0] = out_dims[0] = j->m.cfg.in_dim; /* 0 layers: the input rows are the embeddings */
    for (int l = 0; l < j->m.cfg.num_layers; l++) model_layer_dims(&j->m, l, &in_dims[l], &out_dims[l]);
    log_info("%s, %d layers (%lld -> %lld -> %lld channels%s) on %s: %lld nodes, %lld edges; input: %lld feature + "
             "%lld embedding channels; blocks of %lld nodes; %d process%s x %d threads; activations %s%s",
             model_kind_name(j->m.cfg.kind), j->m.cfg.num_layers, (long long)in_dims[0],
             (long long)j->m.cfg.hidden_dim, (long long)out_dims[j->m.cfg.num_layers > 0 ? j->m.cfg.num_layers - 1 : 0],
             j->m.cfg.l2_normalize_output ? ", L2-normalised" : "", j->dsp->name[0] ? j->dsp->name : j->dsp->dir,
             (long long)whole_n, (long long)whole_e, (long long)(j->in.feat ? j->in.feat->dim : 0),
             (long long)j->in.emb_dim, (long long)chunk, d.size, d.size == 1 ? "" : "es", threads,
             act_dir && *act_dir ? "in " : "in memory", act_dir && *act_dir ? act_dir : "");

    embed_progress prog;
    progress_init(&prog.p, root && !quiet);
    infer_options opt = {chunk, act_dir, &d, root && !quiet ? on_chunk : NULL, &prog};
    infer_result res;
    if (j->parted) {
        const infer_part ip = {&j->pb.local, &j->spart, j->pb.first, j->pb.n_local, j->pb.orig_of_new,
                               &j->pr.feat_part, &j->pr.act_part, publish_rows, &j->pr, d.rank < j->pb.num_parts};
        if (infer_run_part(&res, &j->m, &j->in, &ip, &opt, &err) != 0) goto fail;
    } else if (infer_run(&res, &j->m, &j->g, &j->in, &opt, &err) != 0) {
        goto fail;
    }
    char times[256] = "";
    for (int l = 0, off = 0; l < (j->m.cfg.num_layers > 0 ? j->m.cfg.num_layers : 1) && off < (int)sizeof times - 32; l++)
        off += snprintf(times + off, sizeof times - (size_t)off, "%s%.2f s", l ? ", " : "", res.layer_seconds[l]);
    log_info("layers took %s (rank 0); %lld blocks, %lld edges aggregated", times, (long long)res.chunks,
             (long long)res.edges);
    const int64_t shape[2] = {whole_n, res.dim};
    float *full = j->parted ? part_gather_to_root(&d, j->pb.num_parts, res.embeddings, res.num_nodes, res.dim,
                                                  j->pb.orig_of_new, whole_n)
                            : NULL; /* parts: every part's rows, original id order, on rank 0 */
    bad = root && npy_write(j->out, NPY_DTYPE_FLOAT32, 2, shape, full ? full : res.embeddings, &err) != 0;
    free(full);
    if (j->parted && dist_rpc_stop(j->rpc, &err) != 0) dist_fail_job(&d, &err); /* collective: nobody asks any more */
    double slowest = res.seconds;
    if (d.size > 1) { /* the job took as long as its slowest rank */
        int64_t ms = (int64_t)(res.seconds * 1e3);
        dist_allreduce_max_i64(&d, &ms, 1);
        slowest = (double)ms * 1e-3;
    }
    infer_result_free(&res);
    if (dist_phase_failed(&d, bad, &err)) goto fail;
    if (root)
        printf("embeddings: %lld x %lld float32 -> %s (%.2f s, %.0f nodes/s)\n", (long long)shape[0],
               (long long)shape[1], j->out, slowest, slowest > 0 ? (double)shape[0] / slowest : 0.0);
    goto done;
fail:
    status = err.code ? err.code : CGNN_ERR_RUNTIME;
    if (root) cli_fail(&err);
done:
    job_free(j);
    free(j);
    free(tc);
    dist_finalize(&d);
    return status;
}
