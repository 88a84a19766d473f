#!/usr/bin/python3
"""check_checkpoint.py DIR — loads a cgnn checkpoint in PyTorch and checks its logits.

DIR (written by tests/test_checkpoint.c) holds model.safetensors, the batch's blocks
(block{l}_indptr.npy, block{l}_indices.npy, block{l}_num_src.npy), features.npy, logits.npy
(cgnn's output) and config.txt ("kind layers in hidden out heads l2").

The checkpoint is parsed exactly as safetensors.torch.load_file would (8-byte header length,
JSON header, raw little-endian data), loaded with load_state_dict(strict=True) into the
reference model of scripts/fixtures/make_nn_fixtures.py — a torch module with PyG's
state_dict key names — and run on the same blocks. Exit 0 when the logits match.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "fixtures"))
import make_nn_fixtures as ref  # noqa: E402


def load_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", (name, info["dtype"])
        b, e = info["data_offsets"]
        arr = np.frombuffer(data[b:e], dtype="<f4").reshape(info["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out, header.get("__metadata__", {})


def main():
    d = sys.argv[1]
    kind, layers, in_dim, hidden, out_dim, heads, l2 = open(os.path.join(d, "config.txt")).read().split()
    layers, in_dim, hidden, out_dim, heads, l2 = int(layers), int(in_dim), int(hidden), int(out_dim), int(heads), int(l2)
    state, meta = load_safetensors(os.path.join(d, "model.safetensors"))
    net = ref.Net(kind, layers, l2=bool(l2), in_dim=in_dim, hidden=hidden, out_dim=out_dim, heads=heads)
    net.load_state_dict(state, strict=True)  # every PyG key present, no extra ones, same shapes
    if list(state.keys()) != list(net.state_dict().keys()):
        print("key order differs from PyG's state_dict:", list(state.keys()), list(net.state_dict().keys()))
        return 1
    blocks = []
    for l in range(layers):
        indptr = np.load(os.path.join(d, "block%d_indptr.npy" % l))
        indices = np.load(os.path.join(d, "block%d_indices.npy" % l))
        num_src = int(np.load(os.path.join(d, "block%d_num_src.npy" % l)))
        blocks.append(ref.Block(indptr, indices, num_src))
    x = torch.from_numpy(np.load(os.path.join(d, "features.npy")))
    want = np.load(os.path.join(d, "logits.npy"))
    net = net.double()
    with torch.no_grad():
        got = net(x.double(), blocks).numpy()
    err = np.abs(got - want).max() / max(1e-6, np.abs(want).max())
    print("%s: %d tensors, metadata %s; logits %s max rel error %.2e" % (kind, len(state), meta.get("cgnn_model"), want.shape, err))
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
