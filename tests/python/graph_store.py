"""graph_store.py PARTS WHOLE — run by tests/test_python_dist.sh under `mpirun -np 4`: server-client
mode from Python (cgnn.run_graph_store, GiGL's graph-store mode): world ranks 2-3 hold the 2-part
Cora and build every batch, world ranks 0-1 compute. Checks:
  - on a compute rank, the dataset's rank / world_size are its place among the 2 compute ranks;
    a storage rank gets None back once the compute ranks are done;
  - with global seeds, every batch of 2 epochs equals (n_id in original ids, x, y, edge_index,
    input_id) the whole graph's loader's with that rank and world size 2: the replicated run's;
  - DDP (gloo, among the compute ranks) trains a plain-PyTorch GraphSAGE on the storage ranks'
    batches: replicas identical, test accuracy >= 0.70 after 20 epochs (ddp_parts.train);
  - an exception in the function on compute rank 1 is raised again there, as it was raised, and
    every other rank gets a RuntimeError: the job ends cleanly, nobody hangs.
Exits non-zero on the first failure (the message names the rank).
"""
import os
import sys

import torch.distributed as tdist

import cgnn
import ddp_parts

PARTS, WHOLE = sys.argv[1], sys.argv[2]


def fail(msg):
    print(f"FAIL (world rank {WORLD_RANK}): {msg}", flush=True)
    sys.exit(1)


def compute(parts):
    if (parts.rank, parts.world_size) != (WORLD_RANK, 2) or not parts.is_partition:
        fail(f"dataset.rank / world_size {parts.rank} / {parts.world_size} on world rank {WORLD_RANK} "
             f"(is_partition {parts.is_partition})")
    ddp_parts.RANK, ddp_parts.WORLD = parts.rank, parts.world_size
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['CGNN_TEST_PORT']}", rank=parts.rank,
                             world_size=parts.world_size)
    n = ddp_parts.same_batches(parts, cgnn.OnDiskDataset(WHOLE))
    acc, tested = ddp_parts.train(parts)
    tdist.destroy_process_group()
    return n, acc, tested


def raises(parts):
    if parts.rank == 1:
        raise KeyError("from the compute function")
    return "done"


def main():
    res = cgnn.run_graph_store(PARTS, 2, compute, seed_assignment="global")
    if WORLD_RANK >= 2:
        if res is not None:
            fail(f"a storage rank got {res!r} back")
    else:
        n, acc, tested = res
        if WORLD_RANK == 0:
            print(f"server-client, 2 storage + 2 compute ranks: {n} batches equal the whole graph's on rank 0; "
                  f"DDP test accuracy {acc:.4f} over {tested} nodes", flush=True)
        if acc < 0.70:
            fail(f"DDP test accuracy {acc:.4f} < 0.70")
    try:
        got = cgnn.run_graph_store(PARTS, 2, raises)
    except KeyError as e:
        got = ("KeyError", str(e))
    except RuntimeError as e:
        got = ("RuntimeError", str(e))
    want = "KeyError" if WORLD_RANK == 1 else "RuntimeError"
    if not isinstance(got, tuple) or got[0] != want:
        fail(f"a compute function that raised on compute rank 1: got {got!r} here, want {want}")


if __name__ == "__main__":
    WORLD_RANK, WORLD = cgnn.init_distributed()
    if WORLD != 4:
        print(f"FAIL: run under mpirun -np 4 (world {WORLD})")
        sys.exit(1)
    main()
    print(f"world rank {WORLD_RANK}: ok", flush=True)
