/* gigl_ckpt.h — cgnn's model as the state_dict of GiGL's model classes, in PyTorch's own .pt
 * format (io/torch_save.h): a trainedModelUri ending in ".pt" (or ".pth") is a file that
 * `model.load_state_dict(torch.load(path))` accepts, strictly, for the model GiGL's example
 * scripts build.
 *
 * The layout (keys; cgnn's own PyG keys are in nn/model.h):
 *   link prediction: gigl.nn.models.LinkPredictionGNN(encoder, decoder=LinkPredictionDecoder())
 *     `_encoder.<encoder key>`; the inner-product decoder has no parameters, so no `_decoder.*`
 *   node classification (homogeneous): the HomogeneousNodeClassificationGNN of GiGL's
 *     examples/node_classification/models.py: `_encoder.<encoder key>` + `_head.weight` [C, W],
 *     `_head.bias` [C], the encoder's last layer W = hidden_dim wide. cgnn's last layer maps to
 *     C = out_channels (num_classes) directly, so it is written zero-padded from C to W output
 *     rows and the head is [I_C | 0] with a zero bias: GiGL's model computes exactly cgnn's
 *     logits (no activation sits between the encoder's last layer and the head). Needs C <= W.
 *   the encoder key: GraphSAGE as GiGL's own gigl.src.common.models.pyg.homogeneous.GraphSAGE
 *     (what both examples use): `conv_layers.<l>.lin_l.weight`, ...; GCN and GAT as PyG's GCN /
 *     GAT (BasicGNN; GiGL's GAT class differs: heads=1 in its last layer): `convs.<l>.*`; typed
 *     models keep their keys (`lin_dict.<t>.*`, `convs.<l>.*`) under `_encoder.`, both tasks
 *     (GiGL has no heterogeneous node classification model to mirror).
 *   learnable node embedding tables keep their keys (`embedding.weight`,
 *     `embedding_dict.<t>.weight`): a torch.nn.Embedding beside the GiGL model.
 *   metadata: the safetensors __metadata__ pairs plus "task", in `_metadata["cgnn"]`.
 *
 * Reading maps back: `_encoder.` stripped, `conv_layers.` read as `convs.`, the head folded into
 * the last layer: the exact inverse (the top C rows) when it is [I_C | 0] with a zero bias, as
 * cgnn writes it; any other head (a GiGL-trained checkpoint) is multiplied into a GraphSAGE's or
 * GCN's last layer, which is linear after the aggregation (a GAT's attention is not, so a GAT
 * with another head is refused). A file without cgnn's metadata (torch.save of a GiGL model) gets
 * the architecture read off its keys and shapes.
 */
#ifndef CGNN_GIGL_CKPT_H
#define CGNN_GIGL_CKPT_H

#include <stdint.h>

#include "io/safetensors.h"
#include "io/torch_save.h"
#include "nn/model.h"
#include "train/config.h"
#include "util/err.h"

/* 1 when path names a PyTorch checkpoint (".pt" or ".pth"), else 0 (safetensors). */
int gigl_ckpt_is_torch(const char *path);

/* Checks, before training, that a model of cfg can be written to path in GiGL's layout for
 * task (node classification: out_dim <= hidden_dim). Nothing to check for other paths. Returns
 * 0, or -1 with *err (CGNN_ERR_INPUT, starting with `field`). */
int gigl_ckpt_check(const char *path, task_kind task, const model_config *cfg, const char *field, cgnn_err *err);

/* Writes m's parameters (params, laid out as m->tensors) in GiGL's layout for task, then the
 * extra tensors unchanged (node embedding tables), with the metadata pairs meta[2k], meta[2k+1]
 * plus "task". Returns 0, or -1 with *err (CGNN_ERR_RUNTIME naming the path; CGNN_ERR_INPUT
 * when the layout cannot hold the model). */
int gigl_ckpt_save(const char *path, task_kind task, const model *m, const float *params, const ts_tensor *extra,
                   int n_extra, const char *const *meta, int n_meta, cgnn_err *err);

/* Loads a checkpoint of GiGL's layout for task into m->params (m built from the config),
 * checking every key and shape; node embedding tables in the file are allowed and skipped.
 * Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the file and key). */
int gigl_ckpt_load_model(const char *path, task_kind task, model *m, cgnn_err *err);

/* Reads the table `key` ([rows, dim]) straight into dst. Returns 0, or -1 with *err. */
int gigl_ckpt_load_table(const char *path, const char *key, float *dst, int64_t rows, int64_t dim, cgnn_err *err);

/* Reads a whole .pt checkpoint into *f as safetensors_read would read the same model's
 * .safetensors file: cgnn's keys, every tensor in memory, the metadata (cgnn's, or for a file
 * without it the architecture's: cgnn_model, num_layers, in/hidden/out_channels, heads). The
 * caller owns *f (safetensors_free). Returns 0, or -1 with *err (CGNN_ERR_INPUT). */
int gigl_ckpt_read(st_file *f, const char *path, cgnn_err *err);

/* The GiGL key of cgnn's key `key` of a model of `kind` (into out, cap bytes). */
void gigl_ckpt_key(char *out, size_t cap, model_kind kind, const char *key);

#endif
