"""ddp_parts.py PARTS WHOLE — run by tests/test_python_dist.sh under `mpirun -np 2`: cgnn's
loaders over a 2-part partition of Cora (worker mode) feed a plain-PyTorch GraphSAGE trained with
DistributedDataParallel (gloo). Checks, on every rank:
  - with global seeds, every batch of the partition's loader equals (n_id in original ids, x, y,
    edge_index, input_id) the whole graph's loader's with this rank and world size;
  - with local seeds, each rank's seeds are its part's training nodes, and the ranks' seeds
    together are the train split, once each;
  - DDP trains on the partition's batches: the replicas end identical and the test accuracy,
    evaluated on the partition and summed over the ranks, is >= 0.70 after 20 epochs.
Exits non-zero on the first failure (the message names the rank).
"""
import os
import sys

import torch
import torch.distributed as tdist
import torch.nn.functional as F

import cgnn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from train_cora import SAGE  # noqa: E402  (PyG's GraphSAGE in plain PyTorch)

RANK, WORLD = 0, 1  # (set by main, or by a script that imports these checks)


def fail(msg):
    print(f"FAIL (rank {RANK}): {msg}", flush=True)
    sys.exit(1)


def same_batches(parts, whole):
    opts = dict(num_neighbors=[10, 5], batch_size=16, shuffle=True, seed=7, num_workers=2, drop_uneven=True,
                normalize_features=True)
    lp = cgnn.NeighborLoader(parts, **opts)
    lw = cgnn.NeighborLoader(whole, rank=RANK, world_size=WORLD, **opts)
    if len(lp) != len(lw) or len(lp) == 0:
        fail(f"{len(lp)} batches on the partition, {len(lw)} on the whole graph")
    n = 0
    for epoch in range(2):
        lp.set_epoch(epoch), lw.set_epoch(epoch)
        for bp, bw in zip(lp, lw):
            for f in ("n_id", "x", "y", "edge_index", "input_id"):
                if not torch.equal(getattr(bp, f), getattr(bw, f)):
                    fail(f"epoch {epoch} batch {n}: {f} differs from the whole graph's loader")
            n += 1
    return n


def local_seeds(parts, whole):
    lp = cgnn.NeighborLoader(parts, num_neighbors=[5, 5], batch_size=32, num_workers=1)
    mine = torch.cat([b.n_id[:b.batch_size].clone() for b in lp])  # (clone: a view would hold the batch)
    every = [None] * WORLD
    tdist.all_gather_object(every, mine.tolist())
    seen = sorted(x for r in every for x in r)
    lw = cgnn.NeighborLoader(whole, num_neighbors=[5, 5], batch_size=4096, num_workers=0)
    train = sorted(int(x) for b in lw for x in b.n_id[:b.batch_size])
    if seen != train:
        fail(f"local seeds: the ranks took {len(seen)} seeds ({len(set(seen))} distinct), the train split has "
             f"{len(train)}")
    return len(mine)


def train(parts):
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(SAGE(parts.feature_dim(), 64, parts.num_classes(), dropout=0.5))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    loader = cgnn.NeighborLoader(parts, num_neighbors=[10, 10], batch_size=35, shuffle=True, seed=0,
                                 normalize_features=True, drop_uneven=True)
    for epoch in range(20):
        model.train()
        loader.set_epoch(epoch)
        for batch in loader:
            opt.zero_grad()
            F.cross_entropy(model(batch.x, batch.edge_index)[:batch.batch_size], batch.y).backward()
            opt.step()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    every = [torch.zeros_like(flat) for _ in range(WORLD)]
    tdist.all_gather(every, flat)
    if not all(torch.equal(every[0], e) for e in every):
        fail("the DDP replicas differ after training")
    model.eval()
    counts = torch.zeros(2)
    with torch.no_grad():
        for b in cgnn.NeighborLoader(parts, num_neighbors=[10, 10], batch_size=256, split="test",
                                     normalize_features=True):
            out = model.module(b.x, b.edge_index)[:b.batch_size]
            counts += torch.tensor([float((out.argmax(1) == b.y).sum()), float(b.batch_size)])
    tdist.all_reduce(counts)
    return float(counts[0] / counts[1]), int(counts[1])


def main(PARTS, WHOLE):
    parts = cgnn.OnDiskDataset(PARTS, seed_assignment="global")
    whole = cgnn.OnDiskDataset(WHOLE)
    if not parts.is_partition or whole.is_partition:
        fail(f"is_partition: {parts.is_partition} for {PARTS}, {whole.is_partition} for {WHOLE}")
    if parts.num_nodes() != whole.num_nodes():
        fail(f"the partition describes {parts.num_nodes()} nodes, the whole graph {whole.num_nodes()}")
    n = same_batches(parts, whole)
    local = cgnn.OnDiskDataset(PARTS)  # (collective: the same order on every rank)
    m = local_seeds(local, whole)
    acc, tested = train(parts)
    if RANK == 0:
        print(f"rank 0 of {WORLD}: {n} batches equal the whole graph's (global seeds); {m} local seeds on "
              f"rank 0; DDP: test accuracy {acc:.4f} over {tested} nodes", flush=True)
    if acc < 0.70:
        fail(f"DDP test accuracy {acc:.4f} < 0.70")


if __name__ == "__main__":
    RANK, WORLD = cgnn.init_distributed()
    if WORLD != 2:
        print(f"FAIL: run under mpirun -np 2 (world {WORLD})")
        sys.exit(1)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['CGNN_TEST_PORT']}", rank=RANK,
                             world_size=WORLD)
    main(sys.argv[1], sys.argv[2])
    tdist.destroy_process_group()
    print(f"rank {RANK}: ok", flush=True)
