"""Throughput of cgnn.NeighborLoader feeding a PyTorch model (docs/PYTHON.md, "Throughput").

    PYTHONPATH=build/python python3 examples/python/bench_loader.py DATASET [--batches 40]

Measures, in one run: batches/s of the loader alone (the batches built and turned into PyG-style
tensors, nothing else), then seconds per batch of a plain-PyTorch 3-layer GraphSAGE training
step (over the batch's blocks, as DGL's models) on the same batches, with the loader feeding it, and the share of that step spent waiting
for the loader. Fanouts 15, 10, 5 and batch 1024 by default (the products-scale graph's setting).
"""
import argparse
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dataset")
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--batch_size", type=int, default=1024)
    p.add_argument("--fanouts", default="15,10,5")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=256)
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


if __name__ == "__main__":
    main()
