"""PyG's own training step on the products-scale graph, for the side-by-side with `cgnn bench train`
(README, "Speed"; docs/PERFORMANCE.md, "BLAS kernels and the CPU's peak").

    PYTHONPATH=/path/to/pyg/site /usr/bin/python3 examples/python/bench_pyg_train.py DATASET \
        [--steps 20] [--warmup 3] [--threads 2] [--workers 2]

The setting of `cgnn bench train`'s defaults: GraphSAGE (PyG's `GraphSAGE`, mean aggregation),
3 layers, hidden 256, fanouts 15, 10, 5, batch 1024, Adam lr 0.01, dropout 0.5; PyG's
NeighborLoader (pyg-lib's sampler) with `workers` processes on the dataset's node-classification
training seeds; the model called with the batch's per-hop counts (PyG's trim_to_layer: each layer
computes only the rows the next needs; --no-trim: every layer on the whole subgraph, PyG's
default call); torch on `threads` threads. Prints the median step time (the loader's wait
included, as `cgnn bench train`'s pipelined step) and the BLAS library and kernel set torch's
GEMMs ran on (OpenBLAS's core name, read from the loaded library).
torch_geometric and pyg_lib are not Debian packages: docs/PYTHON.md says how they were built.
"""
import argparse
import ctypes
import os
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F
import yaml


def openblas_core():
    """The kernel set of the OpenBLAS this process loaded (torch's), or what torch says."""
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "openblas" in line.split()[-1]})
    for lib in libs:
        try:
            h = ctypes.CDLL(lib)
            h.openblas_get_corename.restype = ctypes.c_char_p
            h.openblas_get_config.restype = ctypes.c_char_p
            return f"{h.openblas_get_config().decode().split(' DYNAMIC')[0]}, {h.openblas_get_corename().decode()} kernels ({lib})"
        except (OSError, AttributeError):
            continue
    return "not OpenBLAS: " + " ".join(x for x in torch.__config__.show().split() if "BLAS" in x)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--no-trim", action="store_true", help="every layer on the whole sampled subgraph (PyG's default)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    from torch_geometric.nn import GraphSAGE

    with open(os.path.join(a.dataset, "metadata.yaml")) as f:
        meta = yaml.safe_load(f)
    feat = next(f for f in meta["feature_data"] if f["domain"] == "node")
    x = torch.from_numpy(np.load(os.path.join(a.dataset, feat["path"]))).float()
    e = np.load(os.path.join(a.dataset, meta["graph"]["edges"][0]["path"]))
    task = next(t for t in meta["tasks"] if "num_classes" in t)
    train = {d["name"]: np.load(os.path.join(a.dataset, d["path"])) for d in task["train_set"][0]["data"]}
    seeds = torch.from_numpy(train["seeds"]).long()
    y = torch.zeros(x.shape[0], dtype=torch.long)
    y[seeds] = torch.from_numpy(train["labels"]).long()
    data = Data(x=x, edge_index=torch.from_numpy(np.ascontiguousarray(e)).long(), y=y)
    loader = NeighborLoader(data, num_neighbors=[15, 10, 5], batch_size=1024, input_nodes=seeds, shuffle=True,
                            num_workers=a.workers, persistent_workers=a.workers > 0)
    model = GraphSAGE(x.shape[1], 256, num_layers=3, out_channels=int(task["num_classes"]), dropout=0.5)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    times, it = [], iter(loader)
    t_prev = time.perf_counter()
    for s in range(a.warmup + a.steps):
        batch = next(it)
        if a.no_trim:
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
        else:  # PyG's trim_to_layer: layer l computes only the rows later layers need
            out = model(batch.x, batch.edge_index, num_sampled_nodes_per_hop=batch.num_sampled_nodes,
                        num_sampled_edges_per_hop=batch.num_sampled_edges)[: batch.batch_size]
        loss = F.cross_entropy(out, batch.y[: batch.batch_size])
        opt.zero_grad()
        loss.backward()
        opt.step()
        t = time.perf_counter()
        if s >= a.warmup:
            times.append(t - t_prev)
        t_prev = t
    step = statistics.median(times)
    print(f"BLAS: {openblas_core()}")
    print(f"PyG {__import__('torch_geometric').__version__} (torch {torch.__version__}), GraphSAGE 3x256, fanouts "
          f"15,10,5, batch 1024, {'every layer on the whole subgraph' if a.no_trim else 'trim_to_layer'}, "
          f"{a.threads} torch threads, {a.workers} loader workers: step {step * 1e3:.1f} ms "
          f"(median of {a.steps}), {1024 / step:.0f} seeds/s; last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
