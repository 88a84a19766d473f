"""Data-parallel training on a partitioned graph (graphlearn-for-pytorch's worker mode): each MPI
rank holds one part of a `cgnn partition` output, cgnn's loader builds its batches (reaching the
other parts through their ranks), and a plain-PyTorch GraphSAGE trains under
DistributedDataParallel (gloo). docs/PYTHON.md, "Distributed".

    cgnn partition --dataset data/cora --num_parts 2 --method metis --out p2
    PYTHONPATH=build/python mpirun -np 2 /usr/bin/python3 examples/python/train_cora_ddp.py p2 --epochs 20
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F

import cgnn
from train_cora import SAGE


def main():
    p = argparse.ArgumentParser()
    p.add_argument("partition", help="a `cgnn partition` output (one part per rank, or fewer)")
    p.add_argument("--epochs", type=int, default=20)
    args = p.parse_args()
    rank, world = cgnn.init_distributed()  # the MPI job mpirun started (a world of one without it)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    parts = cgnn.OnDiskDataset(args.partition)  # part rank % P (collective)
    loader = cgnn.NeighborLoader(parts, num_neighbors=[10, 10], batch_size=35, shuffle=True,
                                 normalize_features=True, drop_uneven=True)  # equal batch counts per rank
    model = torch.nn.parallel.DistributedDataParallel(SAGE(parts.feature_dim(), 64, parts.num_classes(), dropout=0.5))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        loader.set_epoch(epoch)
        for batch in loader:  # n_id in original ids; x, y: the whole graph's rows
            opt.zero_grad()
            F.cross_entropy(model(batch.x, batch.edge_index)[:batch.batch_size], batch.y).backward()
            opt.step()
    model.eval()
    counts = torch.zeros(2)  # (correct, tested) on this rank's test seeds, summed over the ranks
    with torch.no_grad():
        for b in cgnn.NeighborLoader(parts, num_neighbors=[10, 10], batch_size=256, split="test",
                                     normalize_features=True):
            out = model.module(b.x, b.edge_index)[:b.batch_size]
            counts += torch.tensor([float((out.argmax(1) == b.y).sum()), float(b.batch_size)])
    dist.all_reduce(counts)
    if rank == 0:
        print(f"{world} ranks, {args.epochs} epochs: test accuracy {counts[0] / counts[1]:.3f} "
              f"over {int(counts[1])} nodes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
