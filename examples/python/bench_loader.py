"""Throughput of cgnn.NeighborLoader feeding a PyTorch model (docs/PYTHON.md, "Throughput").

    PYTHONPATH=build/python python3 examples/python/bench_loader.py DATASET [--batches 40] [--pyg]

Measures, in one run: batches/s of the loader alone (the batches built and turned into PyG-style
tensors, nothing else), then seconds per batch of a plain-PyTorch 3-layer GraphSAGE training
step (over the batch's blocks, as DGL's models) on the same batches, with the loader feeding it, and the share of that step spent waiting
for the loader. Fanouts 15, 10, 5 and batch 1024 by default (the products-scale graph's setting).

--pyg: PyG's NeighborLoader on the same graph in the same run (torch_geometric and pyg_lib
importable: they are not Debian packages; docs/PYTHON.md says how they were built), with the same
seeds, fanouts, batch size and workers: batches/s of each loader alone.
"""
import argparse
import os
import time

import torch
import torch.nn.functional as F

import cgnn


class SAGE(torch.nn.Module):
    """GraphSAGE over the batch's message-flow blocks (DGL's way: layer l computes only block l's
    destination rows), plain PyTorch."""

    def __init__(self, dims):
        super().__init__()
        self.l = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.r = torch.nn.ModuleList(torch.nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, blocks):
        for k, blk in enumerate(blocks):
            src, dst = blk.edge_index()
            deg = (blk.indptr[1:] - blk.indptr[:-1]).clamp(min=1).to(x.dtype)[:, None]
            mean = torch.zeros(blk.num_dst, x.shape[1]).index_add_(0, dst, x[src]) / deg
            x = self.l[k](mean) + self.r[k](x[:blk.num_dst])
            if k + 1 < len(blocks):
                x = x.relu()
        return x


def pyg_loader(path, fan, batch_size, workers):
    """PyG's NeighborLoader over the dataset's own arrays (features in memory, edges, the
    training seeds and labels), as a PyG user would load them."""
    import numpy as np
    import yaml
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    with open(os.path.join(path, "metadata.yaml")) as f:
        meta = yaml.safe_load(f)
    feat = next(f for f in meta["feature_data"] if f["domain"] == "node")
    x = torch.from_numpy(np.load(os.path.join(path, feat["path"]))).float()
    e = np.load(os.path.join(path, meta["graph"]["edges"][0]["path"]))
    train = next(t for t in meta["tasks"] if "num_classes" in t)["train_set"][0]["data"]
    arr = {d["name"]: np.load(os.path.join(path, d["path"])) for d in train}
    seeds = torch.from_numpy(arr["seeds"]).long()
    y = torch.zeros(x.shape[0], dtype=torch.long)
    y[seeds] = torch.from_numpy(arr["labels"]).long()
    data = Data(x=x, edge_index=torch.from_numpy(e).long(), y=y)
    return NeighborLoader(data, num_neighbors=fan, batch_size=batch_size, input_nodes=seeds, shuffle=True,
                          num_workers=workers)


def timed(loader, n):
    t0, nodes, edges = time.perf_counter(), 0, 0
    for i, b in enumerate(loader):  # (an iterator goes on where it is)
        nodes, edges = nodes + b.num_nodes, edges + b.edge_index.shape[1]
        if i + 1 == n:
            break
    return n / (time.perf_counter() - t0), nodes / n, edges / n


def compare_pyg(a, ds, fan, n):
    """Each loader measured alone (the one before it deleted, its worker processes gone), the
    same seeds, fanouts, batch size and shuffling; PyG with a.workers worker processes and with
    none (its two ways), cgnn with a.workers sampler threads."""
    import gc
    import torch_geometric
    print(f"side by side, {n} batches each, shuffled training seeds (PyG {torch_geometric.__version__} with "
          f"pyg-lib; cgnn with {a.workers} sampler threads):")
    rates = {}
    for name, workers in ((f"PyG, num_workers={a.workers}", a.workers), ("PyG, num_workers=0", 0)):
        loader = pyg_loader(a.dataset, fan, a.batch_size, workers)
        it = iter(loader)
        next(it), next(it)  # (start-up: worker processes)
        rates[name], nodes, edges = timed(it, n)
        del it, loader
        gc.collect()
        print(f"  {name:20s} {rates[name]:6.2f} batches/s ({nodes:.0f} nodes, {edges:.0f} edges per batch)")
    cl = cgnn.NeighborLoader(ds, num_neighbors=fan, batch_size=a.batch_size, num_workers=a.workers, shuffle=True)
    it = iter(cl)
    next(it), next(it)
    rate, nodes, edges = timed(it, n)
    print(f"  {'cgnn':20s} {rate:6.2f} batches/s ({nodes:.0f} nodes, {edges:.0f} edges per batch)")
    print(f"  cgnn / PyG's best: {rate / max(rates.values()):.1f}x the batches per second")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--batch_size", type=int, default=1024)
    p.add_argument("--fanouts", default="15,10,5")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--pyg", action="store_true", help="PyG's NeighborLoader beside it (see the top)")
    a = p.parse_args()
    fan = [int(f) for f in a.fanouts.split(",")]
    ds = cgnn.OnDiskDataset(a.dataset)
    loader = cgnn.NeighborLoader(ds, num_neighbors=fan, batch_size=a.batch_size, num_workers=a.workers)
    n = min(a.batches, len(loader))
    t0, nodes, edges = time.perf_counter(), 0, 0
    for i, b in enumerate(loader):
        nodes, edges = nodes + b.num_nodes, edges + b.edge_index.shape[1]
        if i + 1 == n:
            break
    dt = time.perf_counter() - t0
    print(f"loader alone: {n / dt:.2f} batches/s ({n} batches of {a.batch_size} seeds, fanouts {fan}, "
          f"{a.workers} sampler threads; {nodes / n:.0f} nodes, {edges / n:.0f} edges per batch)")
    del b
    model = SAGE([ds.feature_dim(), a.hidden, a.hidden, ds.num_classes()])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader.set_epoch(1)
    wait = step = 0.0
    t = time.perf_counter()
    for i, b in enumerate(loader):
        t1 = time.perf_counter()
        wait += t1 - t
        opt.zero_grad()
        F.cross_entropy(model(b.x, b.blocks)[:b.batch_size], b.y).backward()
        opt.step()
        t = time.perf_counter()
        step += t - t1
        if i + 1 == n:
            break
    print(f"with a PyTorch GraphSAGE ({ds.feature_dim()}-{a.hidden}-{a.hidden}-{ds.num_classes()}): "
          f"{(wait + step) / n:.3f} s per batch, of which waiting for the loader {wait / n:.3f} s "
          f"({100 * wait / (wait + step):.1f}%); the PyTorch step {step / n:.3f} s")
    if a.pyg:
        del b, loader
        compare_pyg(a, ds, fan, n)


if __name__ == "__main__":
    main()
