#!/usr/bin/python3
"""check_torch_checkpoint.py — cgnn's .pt checkpoints against GiGL's model classes, in PyTorch.

Test-time only (tests/test_torch_checkpoint.sh; Debian's python3-torch 1.13, numpy; no PyG, no
GiGL): GiGL's classes are re-implemented below in plain torch with GiGL's attribute names, so
that their state_dict() keys are GiGL's:

  LinkPredictionGNN(encoder, decoder)           gigl/nn/models.py: `_encoder`, `_decoder`
  LinkPredictionDecoder()                       gigl/src/common/models/layers/decoder.py (inner
                                                product: no parameters)
  HomogeneousNodeClassificationGNN(enc, head)   examples/node_classification/models.py:
                                                `_encoder`, `_head` = nn.Linear(hid_dim, classes)
  GraphSAGE(in, hid, out, num_layers)           gigl/src/common/models/pyg/homogeneous.py
                                                (BasicHomogeneousGNN): `conv_layers` of PyG
                                                SAGEConv (lin_l with bias, lin_r without), ReLU
                                                between layers, none after the last, optional
                                                F.normalize(p=2, dim=-1) of the output
  PyG GCN / GAT (BasicGNN)                      `convs` of GCNConv / GATConv (heads concatenated,
                                                averaged in the last layer)
The convolutions are scripts/fixtures/make_nn_fixtures.py's (PyG's semantics and key names),
run here on the whole graph at once (every node a destination with all its in-neighbours).

  check  torch.load the checkpoint cgnn wrote (also with weights_only=True), load_state_dict
         (strict=True) into the GiGL model built from the config's numbers, assert the key order
         is the model's own, run it on the full graph and compare with `cgnn embed`'s output.
  make   build a GiGL model with torch's random init (a random Linear head for node
         classification), torch.save(model.state_dict()) — the file a GiGL job writes — and save
         its full-graph output (and its test accuracy) for cgnn to reproduce.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "fixtures"))
import make_nn_fixtures as ref  # noqa: E402


class GraphSAGE(nn.Module):
    """gigl.src.common.models.pyg.homogeneous.GraphSAGE with its defaults (no batchnorm, jk,
    linear layer, feature embedding or interaction layers: none of them have parameters)."""

    def __init__(self, in_dim, hid_dim, out_dim, num_layers, l2):
        super().__init__()
        self.dropout = nn.Dropout(p=0.0)
        self.conv_layers = nn.ModuleList(
            [ref.SAGEConv(in_dim if i == 0 else hid_dim, hid_dim if i < num_layers - 1 else out_dim)
             for i in range(num_layers)])
        self.should_l2_normalize_embedding_layer_output = l2

    def forward(self, x, block):
        for i, conv in enumerate(self.conv_layers):
            x = conv(x, block)
            if i == len(self.conv_layers) - 1:
                break
            x = self.dropout(F.relu(x))
        return F.normalize(x, p=2, dim=-1) if self.should_l2_normalize_embedding_layer_output else x


class BasicGNN(nn.Module):
    """PyG's GCN / GAT (torch_geometric.nn.models.basic_gnn): `convs`."""

    def __init__(self, kind, in_dim, hid_dim, out_dim, num_layers, heads, l2):
        super().__init__()
        self.net = ref.Net(kind, num_layers, l2=l2, in_dim=in_dim, hidden=hid_dim, out_dim=out_dim, heads=heads)
        self.convs = self.net.convs  # the same modules: state_dict keys convs.<l>.*
        del self.net  # keep `convs` the only child, as in PyG

    def forward(self, x, block):
        for l, conv in enumerate(self.convs):
            x = conv(x, block)  # full graph: every node is a destination (GCN degrees: the graph's)
            if l < len(self.convs) - 1:
                x = F.relu(x)
        return x


class LinkPredictionDecoder(nn.Module):
    def forward(self, query_embeddings, candidate_embeddings):
        return torch.mm(query_embeddings, candidate_embeddings.T)


class LinkPredictionGNN(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self._encoder = encoder
        self._decoder = decoder

    def forward(self, x, block):
        return self._encoder(x, block)

    def decode(self, q, c):
        return self._decoder(query_embeddings=q, candidate_embeddings=c)


class HomogeneousNodeClassificationGNN(nn.Module):
    def __init__(self, encoder, head):
        super().__init__()
        self._encoder = encoder
        self._head = head

    def forward(self, x, block):
        return self._head(self._encoder(x, block))


def build(a, in_dim):
    enc_out = a.hidden if a.task == "nc" else a.out_dim  # GiGL's NC example: encoder out_dim = hid_dim
    l2 = bool(a.l2)
    if a.kind == "sage":
        enc = GraphSAGE(in_dim, a.hidden, enc_out, a.layers, l2)
    else:
        enc = BasicGNN(a.kind, in_dim, a.hidden, enc_out, a.layers, a.heads, l2)
        if l2:
            raise SystemExit("l2 with gcn/gat is not used by this test")
    if a.task == "nc":
        model = HomogeneousNodeClassificationGNN(enc, nn.Linear(a.hidden, a.out_dim))
    else:
        model = LinkPredictionGNN(enc, LinkPredictionDecoder())
    if a.emb_dim:
        model.embedding = nn.Embedding(a.num_nodes, a.emb_dim)  # a learnable node table beside the model
    return model


def graph(a):
    x = np.load(a.features).astype(np.float64) if a.features else np.zeros((a.num_nodes, 0))
    if a.row_normalize:
        s = np.abs(x).sum(1, keepdims=True)
        x = np.where(s > 0, x / np.where(s > 0, s, 1), x)
    src, dst = np.load(a.edges).astype(np.int64)
    order = np.argsort(dst, kind="stable")  # CSC: in-edges per destination, in edge order
    indptr = np.concatenate([[0], np.cumsum(np.bincount(dst, minlength=a.num_nodes))])
    block = ref.Block(indptr, src[order].astype(np.int32), a.num_nodes)  # all nodes: dst and src
    return torch.from_numpy(x), block


def forward(model, x, block, a):
    with torch.no_grad():
        model = model.double()
        if a.emb_dim:
            x = torch.cat([x, model.embedding.weight], dim=1)
        return model(x, block).numpy()


def check(a):
    sd = torch.load(a.model, map_location="cpu")
    sd_safe = torch.load(a.model, map_location="cpu", weights_only=True)
    assert list(sd.keys()) == list(sd_safe.keys()), "weights_only load differs"
    assert all(torch.equal(sd[k], sd_safe[k]) for k in sd), "weights_only load differs"
    meta = getattr(sd, "_metadata", {}).get("cgnn", {})
    assert meta.get("task") == {"nc": "node_classification", "lp": "link_prediction"}[a.task], meta
    x, block = graph(a)
    model = build(a, x.shape[1] + a.emb_dim)
    model.load_state_dict(sd, strict=True)  # every key of GiGL's class present, no other, same shapes
    want_keys = list(model.state_dict().keys())
    if list(sd.keys()) != want_keys:
        print("key order differs from the model's state_dict:", list(sd.keys()), want_keys)
        return 1
    got = forward(model, x, block, a)
    cg = np.load(a.embeddings).astype(np.float64)
    assert cg.shape == got.shape, (cg.shape, got.shape)
    err = np.abs(cg - got).max() / (1.0 + np.abs(got).max())
    agree = float((cg.argmax(1) == got.argmax(1)).mean())
    print("%s %s: %d tensors (%s), GiGL model output %s vs cgnn embed: max difference %.2e, argmax agreement %.4f"
          % (a.kind, a.task, len(sd), ", ".join(list(sd.keys())[:2] + ["..."]), got.shape, err, agree))
    if a.task == "lp":  # the decoder scores pairs as cgnn's retrieval does (inner product)
        q, c = torch.from_numpy(cg[:5]), torch.from_numpy(cg[5:12])
        assert torch.allclose(model.decode(q, c), q @ c.T)
    return 0 if err < 1e-5 and agree > 0.999 else 1


def make(a):
    torch.manual_seed(a.seed)
    x, block = graph(a)
    model = build(a, x.shape[1] + a.emb_dim)
    with torch.no_grad():  # torch's default init leaves biases small; make every tensor matter
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    torch.save(model.state_dict(), a.model)
    out = forward(model, x, block, a)
    np.save(a.embeddings, out.astype(np.float32))
    if a.test_seeds:
        seeds, labels = np.load(a.test_seeds), np.load(a.test_labels)
        acc = float((out[seeds].argmax(1) == labels).mean())
        print("%.6f" % acc)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["check", "make"])
    p.add_argument("--model", required=True)
    p.add_argument("--embeddings", required=True, help="check: cgnn embed's .npy; make: the model's output")
    p.add_argument("--edges", required=True)
    p.add_argument("--features", default="")
    p.add_argument("--num_nodes", type=int, default=0)
    p.add_argument("--row_normalize", action="store_true")
    p.add_argument("--kind", choices=["sage", "gcn", "gat"], required=True)
    p.add_argument("--task", choices=["nc", "lp"], required=True)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--out_dim", type=int, required=True)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--l2", type=int, default=0)
    p.add_argument("--emb_dim", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--test_seeds", default="")
    p.add_argument("--test_labels", default="")
    a = p.parse_args()
    if not a.num_nodes:
        a.num_nodes = len(np.load(a.features, mmap_mode="r"))
    return check(a) if a.mode == "check" else make(a)


if __name__ == "__main__":
    sys.exit(main())
