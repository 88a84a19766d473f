"""The Python package against the C API and the native trainer (run by tests/test_python.sh).

usage: test_cgnn.py CGNN_BINARY   (PYTHONPATH: the build's python/ folder; cwd: the repository)
Each check prints ok / FAIL; the exit status is the number of failures (0: all passed).
"""
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import cgnn

CGNN = sys.argv[1]
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    fails += 0 if cond else 1


ds = cgnn.OnDiskDataset("data/cora")
check(ds.num_nodes() == 2708 and ds.feature_dim() == 1433 and ds.num_classes() == 7, "OnDiskDataset describes cora")
check(ds.tasks[0]["split_sizes"] == (140, 500, 1000), "the splits' sizes")

# no copy: the tensors are views of cgnn's buffers
loader = cgnn.NeighborLoader(ds, num_neighbors=[5, 3], batch_size=50, seed=3)
it = iter(loader)
b = next(it)
xa = b._b.array(cgnn._C.FIELD_FEATURES, 0).info
na = b._b.array(cgnn._C.FIELD_NODES, 0).info
check(b.x.data_ptr() == xa["address"] and b.n_id.data_ptr() == na["address"], "x and n_id share cgnn's memory")
check(tuple(b.x.shape) == (b.num_nodes, 1433) and b.y.shape[0] == b.batch_size == 50, "shapes")

# edge_index: PyG's layout; each node's in-edges once, from the hop that reached it, in local ids
L = 2
hops = [b._b.num_nodes(0, h) for h in range(L + 1)]
ok = b.edge_index.shape[1] == sum(b.num_sampled_edges) and len(b.num_sampled_nodes) == L + 1
e0 = 0
for h in range(L):
    ei = b.edge_index[:, e0:e0 + b.num_sampled_edges[h]]
    lo = 0 if h == 0 else hops[h - 1]
    ok = ok and bool(((ei[1] >= lo) & (ei[1] < hops[h])).all()) and bool((ei[0] < hops[h + 1]).all())
    blk = b.blocks[L - 1 - h]
    ref = blk.edge_index()
    ref = ref[:, (ref[1] >= lo) & (ref[1] < hops[h])]
    ok = ok and torch.equal(ref, ei)
    e0 += b.num_sampled_edges[h]
check(ok, "edge_index is the blocks' edges of each hop's new nodes (num_sampled_nodes / _edges consistent)")
del b, it
gc.collect()

# node_feature: which of a dataset's node features the loader gathers as x (GraphBolt's homograph
# tutorial: feat_0 float64 .npy, feat_1 float32 torch.save); a name it lacks raises, naming them
gb = "tests/fixtures/graphbolt/homograph"
want = {"feat_0": torch.from_numpy(np.load(f"{gb}/node-feat-0.npy")).float(), "feat_1": torch.load(f"{gb}/node-feat-1.pt")}
for name, ref in (("feat_0", want["feat_0"]), ("feat_1", want["feat_1"]), (None, want["feat_0"])):
    b = next(iter(cgnn.NeighborLoader(cgnn.OnDiskDataset(gb, node_feature=name), num_neighbors=[3], batch_size=8,
                                      task=0)))
    check(torch.equal(b.x, ref[b.n_id]), f"node_feature={name!r}: x is that feature's rows")
    del b
try:
    cgnn.OnDiskDataset(gb, node_feature="feat_9")
    check(False, "node_feature='feat_9' raises")
except cgnn.DataError as e:
    check("cgnn_dataset_options.node_feature: 'feat_9' is not a node feature" in str(e) and "feat_0, feat_1" in str(e),
          f"node_feature='feat_9' raises naming the features ({e})")
gc.collect()


def epoch_tensors(workers, epoch=0):
    ld = cgnn.NeighborLoader(ds, num_neighbors=[4, 4], batch_size=100, split="validation", shuffle=True,
                             num_workers=workers, seed=11)
    ld.set_epoch(epoch)
    return [(b.n_id.clone(), b.x.clone(), b.edge_index.clone(), b.y.clone()) for b in ld]


a, c = epoch_tensors(0), epoch_tensors(3)
check(len(a) == 5 and all(all(torch.equal(u, v) for u, v in zip(p, q)) for p, q in zip(a, c)),
      "0 and 3 sampler threads give the same batches, bitwise")
check(not torch.equal(epoch_tensors(0, 1)[0][0], a[0][0]), "another epoch draws another order")

# the held-batch rule: tensors kept from `prefetch` batches hold their slots; the next is refused
ld = cgnn.NeighborLoader(ds, num_neighbors=[2], batch_size=100, split="test", num_workers=1, prefetch=2)
held = []
try:
    for b in ld:
        held.append(b.x)
    check(False, "keeping 3 batches' tensors with prefetch 2 is refused")
except ValueError as e:
    check("still held" in str(e), f"keeping 3 batches' tensors with prefetch 2 is refused: {e}")
del held, b
gc.collect()
check(sum(1 for _ in ld) == 10, "after the tensors are gone the loader runs again")

# bad arguments raise naming the argument
for kw, want in [(dict(batch_size=0), "batch_size"), (dict(split="dev"), "split"),
                 (dict(num_neighbors=[3, 0]), "fanouts[1]"), (dict(rank=3, world_size=2), "rank")]:
    args = dict(num_neighbors=[3]) | kw
    try:
        cgnn.NeighborLoader(ds, **args)
        check(False, f"{kw} raises")
    except ValueError as e:
        check(want in str(e), f"{kw} raises ValueError naming {want}: {e}")
try:
    cgnn.OnDiskDataset("/nonexistent/cgnn-ds")
    check(False, "a missing dataset raises")
except cgnn.DataError as e:
    check("/nonexistent/cgnn-ds" in str(e), f"a missing dataset raises DataError naming it: {e}")


# link prediction (GiGL's DistABLPLoader layout): each pair's rows are the split's pair; with
# exclude_seed_edges no sampled edge joins a pair's two nodes (without it, some do: the training
# pairs are edges of the graph)
import numpy as np  # noqa: E402

lp = cgnn.OnDiskDataset("data/facebook-lp")
pairs = np.load("data/facebook-lp/lp-train-seeds.npy")


def pair_edges(exclude):
    ld = cgnn.LinkNeighborLoader(lp, num_neighbors=[5, 5], batch_size=256, num_negatives=64,
                                 exclude_seed_edges=exclude, seed=5)
    same, joined, nb = True, 0, 0
    for b in ld:
        got = torch.stack([b.n_id[b.src_index], b.n_id[b.dst_pos_index]], 1).numpy()
        same = same and bool((got == pairs[b.input_id.numpy()]).all()) and b.dst_neg_index.numel() == 64
        n = b.num_nodes
        e = set((b.edge_index[0] * n + b.edge_index[1]).tolist())
        for a, p_ in zip(b.src_index.tolist(), b.dst_pos_index.tolist()):
            joined += (a * n + p_) in e or (p_ * n + a) in e
        nb += 1
        if nb == 8:
            break
    return same, joined


same, joined = pair_edges(True)
same0, joined0 = pair_edges(False)
check(same and same0, "LinkNeighborLoader: each pair's rows are the split's pair, 64 shared negatives")
check(joined == 0 and joined0 > 0, f"exclude_seed_edges: {joined} pair edges sampled (without it: {joined0})")
ab = cgnn.LinkNeighborLoader(lp, num_neighbors=[3], batch_size=32, anchor_batching=True, max_labels_per_anchor=2)
b = next(iter(ab))
anchors = b.n_id[b.src_index]
check(anchors.unique().numel() == 32 and int(torch.bincount(anchors).max()) <= 2,
      f"anchor batching: 32 anchors, at most 2 positives each ({b.src_index.numel()} pairs)")
del b, ab
try:
    cgnn.NeighborLoader(lp, num_neighbors=[3])
    check(False, "a node loader on a link prediction dataset raises")
except ValueError as e:
    check("node classification" in str(e), f"a node loader on a link prediction dataset raises: {e}")


# a plain-PyTorch GraphSAGE (PyG's SAGEConv, mean) trained on cgnn's batches, as the native trainer
# trains examples/cora_graphsage.yaml: 2 layers, hidden 128, fanouts 10/10, dropout 0.8, Adam 0.01,
# weight decay 5e-4, row-normalised features, one batch of the 140 seeds per epoch, early stopping
# on the validation loss with the best weights restored, tested on sampled batches. Both sides
# validate every 5 steps with patience 4 (the example: every step, patience 20): the validation
# batches (500 nodes, 1433 features, two hops) were most of the suite's time for this test.
class SAGE(torch.nn.Module):
    def __init__(self, i, h, o):
        super().__init__()
        self.l = torch.nn.ModuleList([torch.nn.Linear(i, h), torch.nn.Linear(h, o)])
        self.r = torch.nn.ModuleList([torch.nn.Linear(i, h, bias=False), torch.nn.Linear(h, o, bias=False)])

    def forward(self, x, ei):
        for k in range(2):
            agg = torch.zeros(x.shape[0], x.shape[1]).index_add_(0, ei[1], x[ei[0]])
            deg = torch.zeros(x.shape[0]).index_add_(0, ei[1], torch.ones(ei.shape[1])).clamp(min=1)
            x = self.l[k](agg / deg[:, None]) + self.r[k](x)
            if k == 0:
                x = torch.nn.functional.dropout(torch.relu(x), 0.8, self.training)
        return x


VAL_EVERY, PATIENCE = 5, 4


def evaluate(model, loader):
    model.eval()
    loss = correct = n = 0
    with torch.no_grad():
        for b in loader:
            out = model(b.x, b.edge_index)[:b.batch_size]
            loss += torch.nn.functional.cross_entropy(out, b.y, reduction="sum").item()
            correct += (out.argmax(1) == b.y).sum().item()
            n += b.batch_size
    return loss / n, correct / n


def python_run(seed):
    torch.manual_seed(seed)
    model = SAGE(1433, 128, 7)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    train = cgnn.NeighborLoader(ds, num_neighbors=[10, 10], batch_size=140, seed=seed, normalize_features=True)
    # (the evaluation loaders once: each allocates its batches' buffers at the worst case)
    val, test = (cgnn.NeighborLoader(ds, num_neighbors=[10, 10], batch_size=512, split=s, seed=seed,
                                     normalize_features=True) for s in ("validation", "test"))
    best, best_state, bad, step = float("inf"), None, 0, 0
    for _ in range(200):
        model.train()
        for b in train:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(b.x, b.edge_index)[:b.batch_size], b.y).backward()
            opt.step()
        step += 1
        if step % VAL_EVERY:
            continue
        val.set_epoch(0)  # (the native trainer evaluates the same batches every time)
        vloss, _ = evaluate(model, val)
        if vloss < best:
            best, bad, best_state = vloss, 0, {k: v.clone() for k, v in model.state_dict().items()}
        else:
            bad += 1
            if bad >= PATIENCE:
                break
    model.load_state_dict(best_state)
    return evaluate(model, test)[1]


def native_run(seed, tmp):
    cfg = open("examples/cora_graphsage.yaml").read().replace('seed: "0"', f'seed: "{seed}"')
    cfg = cfg.replace('val_every_num_batches: "0"', f'val_every_num_batches: "{VAL_EVERY}"')
    cfg = cfg.replace('early_stop_patience: "20"', f'early_stop_patience: "{PATIENCE}"')
    assert f'val_every_num_batches: "{VAL_EVERY}"' in cfg and f'early_stop_patience: "{PATIENCE}"' in cfg
    cfg = cfg.replace("out/cora_graphsage/", f"{tmp}/s{seed}/")
    path = f"{tmp}/s{seed}.yaml"
    open(path, "w").write(cfg)
    res = f"{tmp}/resource.yaml"  # one compute thread, as the PyTorch side (the suite's CPU time)
    open(res, "w").write("trainer_resource_config:\n  local_trainer_config:\n    num_workers: 1\n")
    subprocess.run([CGNN, "train", "--quiet", f"--task_config_uri={path}", f"--resource_config_uri={res}"],
                   check=True)
    metrics = json.load(open(f"{tmp}/s{seed}/eval_metrics.json"))["metrics"]
    return next(float(m["numberValue"]) for m in metrics if m["name"] == "acc")


# typed graphs: HeteroData batches (dblp-mini: 4 node types, 6 edge types, venue featureless),
# checked against the dataset's own arrays: every sampled edge is an edge of its type, the fanout
# per edge type and hop holds, seeds / labels / features are the split's and the feature rows
import numpy as np  # noqa: E402

td = cgnn.OnDiskDataset("data/dblp-mini")
check(td.is_typed and [t["name"] for t in td.node_types] == ["author", "paper", "term", "venue"],
      "a typed dataset describes its node types")
FAN = {("paper", "written_by", "author"): [5, 3], None: [4, 2]}


def typed_epoch(workers):
    """The epoch's batches, each as a copy of its tensors (the batches themselves go back)."""
    ld = cgnn.NeighborLoader(td, num_neighbors=FAN, batch_size=32, shuffle=True, num_workers=workers, seed=3)
    return [{k: {t: v.clone() for t, v in getattr(b, k).items()} for k in ("n_id_dict", "x_dict", "edge_index_dict")} |
            {"input_id": b.input_id.clone(), "y": b.y.clone()} for b in ld]


edges = {}
for e in td.edge_types:
    s_, r_, d_ = e["name"].split(":")
    arr = np.load(f"data/dblp-mini/edges-{s_}-{r_}-{d_}.npy")
    edges[(s_, r_, d_)] = set(zip(arr[0].tolist(), arr[1].tolist()))
feats = {t: torch.from_numpy(np.load(f"data/dblp-mini/feat-{t}.npy")).float() for t in ("author", "paper", "term")}
tr_seeds = np.load("data/dblp-mini/nc-train-author-seeds.npy")
tr_labels = np.load("data/dblp-mini/nc-train-author-labels.npy")
tb = typed_epoch(2)
good = {"edges": True, "fanout": True, "seeds": True, "x": True, "counts": True}
for b in cgnn.NeighborLoader(td, num_neighbors=FAN, batch_size=32, shuffle=True, num_workers=2, seed=3):
    rows = b.input_id.numpy()
    good["seeds"] &= (b.n_id_dict["author"][:b.batch_size].numpy() == tr_seeds[rows]).all() and \
        (b.y.numpy() == tr_labels[rows]).all() and b["author"].batch_size == b.batch_size
    for t, n in b.n_id_dict.items():
        good["counts"] &= sum(b.num_sampled_nodes_dict[t]) == n.numel()
        if t in feats:
            good["x"] &= torch.equal(b.x_dict[t], feats[t][n])
    good["x"] &= "venue" not in b.x_dict
    for et, ei in b.edge_index_dict.items():
        src = b.n_id_dict[et[0]][ei[0]].tolist()
        dst = b.n_id_dict[et[2]][ei[1]].tolist()
        good["edges"] &= all(p in edges[et] for p in zip(src, dst))
        fan = FAN.get(et, FAN[None])
        start = 0
        for h, cnt in enumerate(b.num_sampled_edges_dict[et]):
            deg = torch.bincount(ei[1][start:start + cnt]) if cnt else torch.zeros(1)
            good["fanout"] &= int(deg.max()) <= fan[h]
            start += cnt
for k, v in good.items():
    check(bool(v), f"HeteroBatch ({len(tb)} batches): {k} are the dataset's")
tb0 = typed_epoch(0)
check(len(tb0) == len(tb) > 0 and all(
    all(torch.equal(p[k][t], q[k][t]) for k in ("n_id_dict", "x_dict", "edge_index_dict") for t in p[k]) and
    torch.equal(p["y"], q["y"]) and torch.equal(p["input_id"], q["input_id"])
    for p, q in zip(tb, tb0)), f"typed batches ({len(tb)}): 0 and 2 sampler threads give the same tensors")
del tb, tb0
try:
    cgnn.NeighborLoader(td, num_neighbors={("paper", "cites", "paper"): [3]})
    check(False, "an unknown edge type in num_neighbors raises")
except ValueError as e:
    check("paper" in str(e) and "cites" in str(e), f"an unknown edge type in num_neighbors raises: {e}")

# typed link prediction (lastfm-mini, user:listens:artist, every type featureless): each pair's rows
# are the split's pair, the negatives are artists among the batch's seeds, and exclude_seed_edges
# keeps every edge between a pair's two nodes (either direction) out of the sampled ones
lf = cgnn.OnDiskDataset("data/lastfm-mini")
lpairs = np.load("data/lastfm-mini/lp-train-seeds.npy")
good = {"pairs": True, "negatives": True, "excluded": True}
nb = 0
for b in cgnn.LinkNeighborLoader(lf, num_neighbors=[4, 2], batch_size=64, num_negatives=32, exclude_seed_edges=True,
                                 shuffle=True, seed=5):
    rows = b.input_id.numpy()
    a = b.n_id_dict["user"][b.src_index].numpy()
    p = b.n_id_dict["artist"][b.dst_pos_index].numpy()
    good["pairs"] &= bool((a == lpairs[rows, 0]).all() and (p == lpairs[rows, 1]).all()) and b.edge_type == (
        "user", "listens", "artist")
    good["negatives"] &= b.dst_neg_index.numel() == 32 and 0 <= int(b.dst_neg_index.min()) and \
        int(b.dst_neg_index.max()) < b.batch_size_dict["artist"]
    pair_set = set(zip(a.tolist(), p.tolist()))
    for (s_, r_, d_), ei in b.edge_index_dict.items():
        src, dst = b.n_id_dict[s_][ei[0]].tolist(), b.n_id_dict[d_][ei[1]].tolist()
        if (s_, d_) == ("user", "artist"):
            good["excluded"] &= not any(e in pair_set for e in zip(src, dst))
        elif (s_, d_) == ("artist", "user"):
            good["excluded"] &= not any(e in pair_set for e in zip(dst, src))
    nb += 1
    if nb == 10:
        break
for k, v in good.items():
    check(bool(v) and nb == 10, f"HeteroLinkBatch ({nb} batches): {k}")

# Ctrl-C in a loop: SIGINT while the loader's threads sample ends the script with KeyboardInterrupt
# (the loop stops at the next batch; the loader's threads are stopped as it is freed), promptly, with
# no hang and no crash
LOOP = """import sys, cgnn
ds = cgnn.OnDiskDataset("data/cora")
ld = cgnn.NeighborLoader(ds, num_neighbors=[-1, -1], batch_size=8, num_workers=2)
b = None
try:
    print("looping", flush=True)  # (inside the try: the parent signals once it reads this)
    while True:
        for b in ld:
            pass
except KeyboardInterrupt:
    print("interrupted", flush=True)
    del b, ld
    print("threads stopped", flush=True)
    raise
"""
child = subprocess.Popen([sys.executable, "-c", LOOP], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
started = child.stdout.readline().strip() == "looping"
time.sleep(0.5)
child.send_signal(signal.SIGINT)
t0 = time.time()
try:
    out, err = child.communicate(timeout=20)
except subprocess.TimeoutExpired:
    child.kill()
    out, err = child.communicate()
took = time.time() - t0
# (an uncaught KeyboardInterrupt ends CPython by SIGINT itself: exit status -2)
check(started and child.returncode == -signal.SIGINT and "interrupted\nthreads stopped" in out and "KeyboardInterrupt" in err
      and took < 10, f"Ctrl-C in a loop raises KeyboardInterrupt and stops the threads (exit {child.returncode} "
      f"after {took:.1f} s: {out.strip()!r} {err.strip()[-200:]!r})")

torch.set_num_threads(1)
with tempfile.TemporaryDirectory() as tmp:
    native = [native_run(s, tmp) for s in range(3)]
    py = [python_run(s) for s in range(3)]
    # the model's weights load back: cgnn.load_state_dict reads the native checkpoint
    sd = cgnn.load_state_dict(f"{tmp}/s0/model.safetensors")
    check(sd["convs.0.lin_l.weight"].shape == (128, 1433) and sd["convs.1.lin_r.weight"].shape == (7, 128),
          f"load_state_dict reads the native checkpoint ({len(sd)} tensors)")
    meta = cgnn.checkpoint_metadata(f"{tmp}/s0/model.safetensors")
    check(meta.get("cgnn_model") == "GraphSAGE" and meta.get("node_feature") == "feat" and
          meta.get("feature_normalization") in ("row", "none") and meta.get("in_channels") == "1433",
          f"checkpoint_metadata: the model and its input ({meta})")
mn, mp = sum(native) / 3, sum(py) / 3
print(f"Cora test accuracy, seeds 0-2: native {native} mean {mn:.4f}; PyTorch on cgnn.NeighborLoader {py} "
      f"mean {mp:.4f}")
check(abs(mn - mp) <= 0.01, f"the PyTorch model on cgnn's loader is within 1 point of the native trainer "
      f"({mp:.4f} vs {mn:.4f})")
sys.exit(min(fails, 100))
