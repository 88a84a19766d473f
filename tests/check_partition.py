#!/usr/bin/env python3
"""check_partition.py SRC OUT [--max-node-balance X] — checks the output of `cgnn partition`
against its source dataset, independently of cgnn (numpy + PyYAML):

  - the JSON has DGL's fields (graph_name, num_parts, part_method, num_nodes, num_edges,
    halo_hops, node_map, edge_map, ntypes, etypes, part-<p>.part_dir) and cgnn's (partition_id,
    seed, max_in_degree, orig_ids, new_ids, global_splits, stats);
  - node_map ranges are contiguous and cover [0, N); orig_ids / new_ids are inverse bijections;
    original ids ascend within every part;
  - every edge appears exactly once across the parts: part p's edges.npy is exactly the source
    edges whose dst part p owns, in the original order, in new ids, in the source's dtype (so
    every edge maps back to an original edge, as a multiset and per dst in original order);
    edge_map matches; the edge cut and max_in_degree are right;
  - every part's node features are the source rows of its nodes (same dtype, same bytes);
  - every split is partitioned: part p holds the rows whose seed (a pair's anchor) it owns, in
    the original row order, seeds in new ids, labels and indexes kept; the parts' rows together
    are the whole split; global/ holds every row in the original order;
  - every part's metadata.yaml carries the run's partition id and its node range;
  - the stats agree with the files; node balance (max/mean) <= --max-node-balance.
Exits 0 and prints one line, or prints every failure and exits 1.
"""
import json
import os
import sys

import numpy as np
import yaml

failures = []


def fail(msg):
    failures.append(msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def load_dataset(d):
    meta = yaml.safe_load(open(os.path.join(d, "metadata.yaml")))

    def path(p):
        return p if os.path.isabs(p) else os.path.join(d, p)

    ds = {"meta": meta, "n": meta["graph"]["nodes"][0]["num"]}
    ds["edges"] = np.load(path(meta["graph"]["edges"][0]["path"]))
    ds["features"] = [(f["domain"], f["name"], np.load(path(f["path"]))) for f in meta.get("feature_data") or []]
    tasks = []
    for t in meta.get("tasks") or []:
        splits = {}
        for s in ("train_set", "validation_set", "test_set"):
            if s not in t:
                continue
            parts = {e["name"]: np.load(path(e["path"])) for e in t[s][0]["data"]}
            splits[s] = parts
        tasks.append((t["name"], t.get("num_classes"), splits))
    ds["tasks"] = tasks
    return ds


def main():
    src_dir, out = sys.argv[1], sys.argv[2]
    max_balance = float(sys.argv[sys.argv.index("--max-node-balance") + 1]) if "--max-node-balance" in sys.argv else None
    src = load_dataset(src_dir)
    jsons = [f for f in os.listdir(out) if f.endswith(".json")]
    if not check(len(jsons) == 1, f"{out}: expected one .json, got {jsons}"):
        return
    book = json.load(open(os.path.join(out, jsons[0])))
    for k in ("graph_name", "num_parts", "part_method", "num_nodes", "num_edges", "halo_hops", "node_map", "edge_map",
              "ntypes", "etypes", "partition_id", "seed", "max_in_degree", "orig_ids", "new_ids", "global_splits",
              "stats"):
        check(k in book, f"JSON lacks {k}")
    P, N = book["num_parts"], book["num_nodes"]
    src_e = src["edges"]
    E = src_e.shape[1]
    check(N == src["n"] and book["num_edges"] == E, "num_nodes / num_edges differ from the source")
    check(book["halo_hops"] == 0 and list(book["node_map"]) == ["_N"] and list(book["edge_map"]) == ["_N:_E:_N"],
          "halo_hops / node_map / edge_map keys")
    ranges = np.array(book["node_map"]["_N"], dtype=np.int64)
    eranges = np.array(book["edge_map"]["_N:_E:_N"], dtype=np.int64)
    check(ranges.shape == (P, 2) and ranges[0, 0] == 0 and ranges[-1, 1] == N and
          np.all(ranges[1:, 0] == ranges[:-1, 1]) and np.all(ranges[:, 1] >= ranges[:, 0]),
          f"node_map ranges are not contiguous over [0, {N}): {ranges.tolist()}")
    check(eranges.shape == (P, 2) and eranges[0, 0] == 0 and eranges[-1, 1] == E and
          np.all(eranges[1:, 0] == eranges[:-1, 1]), "edge_map ranges are not contiguous over [0, E)")

    # id maps: inverse bijections, original order within parts
    orig = np.load(os.path.join(out, book["orig_ids"]))
    new = np.load(os.path.join(out, book["new_ids"]))
    check(orig.dtype == np.int64 and new.dtype == np.int64 and orig.shape == (N,) and new.shape == (N,),
          "maps are not (N,) int64")
    check(np.array_equal(np.sort(orig), np.arange(N)), "orig_ids is not a permutation of [0, N)")
    check(np.array_equal(np.sort(new), np.arange(N)), "new_ids is not a permutation of [0, N)")
    check(np.array_equal(new[orig], np.arange(N)) and np.array_equal(orig[new], np.arange(N)),
          "orig_ids and new_ids are not inverse")
    sizes = ranges[:, 1] - ranges[:, 0]
    part_of_new = np.repeat(np.arange(P), sizes)
    assign = part_of_new[new]  # part of each original node
    for p in range(P):
        a, b = ranges[p]
        check(np.all(np.diff(orig[a:b]) > 0), f"part {p}: original ids do not ascend")

    # edges
    src_s, src_d = src_e[0].astype(np.int64), src_e[1].astype(np.int64)
    indeg = np.bincount(src_d, minlength=N)
    check(book["max_in_degree"] == (indeg.max() if N else 0), "max_in_degree")
    cut = int(np.count_nonzero(assign[src_s] != assign[src_d]))
    check(book["stats"]["edge_cut"] == cut, f"edge_cut {book['stats']['edge_cut']} != {cut}")
    total = 0
    back = []
    for p in range(P):
        pdir = os.path.join(out, book[f"part-{p}"]["part_dir"])
        part = load_dataset(pdir)
        pe = part["edges"]
        mask = assign[src_d] == p
        want = np.stack([new[src_s[mask]], new[src_d[mask]]])
        check(pe.dtype == src_e.dtype, f"part {p}: edge dtype {pe.dtype} != source {src_e.dtype}")
        check(np.array_equal(pe, want), f"part {p}: edges are not the source in-edges of its nodes in original order")
        check(pe.shape[1] == eranges[p, 1] - eranges[p, 0], f"part {p}: edge count != edge_map")
        total += pe.shape[1]
        back.append(orig[pe.astype(np.int64)])
        check(part["n"] == N, f"part {p}: graph.nodes[0].num != N")
        pm = part["meta"]["partition"]
        check(pm["id"] == book["partition_id"] and pm["part"] == p and pm["num_parts"] == P and
              pm["node_start"] == ranges[p, 0] and pm["node_end"] == ranges[p, 1], f"part {p}: partition key {pm}")
        # features
        a, b = ranges[p]
        check(len(part["features"]) == len(src["features"]), f"part {p}: feature count")
        for (dom, name, arr), (pdom, pname, parr) in zip(src["features"], part["features"]):
            check(dom == pdom and name == pname and parr.dtype == arr.dtype, f"part {p}: feature {name} header")
            if dom == "node":
                check(np.array_equal(parr, arr[orig[a:b]]), f"part {p}: feature {name} rows differ from the source")
            else:
                check(np.array_equal(parr, arr[mask]), f"part {p}: edge feature {name} rows differ")
        # splits
        for (tname, ncls, splits), (pt, pncls, psplits) in zip(src["tasks"], part["tasks"]):
            check(tname == pt and ncls == pncls, f"part {p}: task {tname}")
            for s, data in splits.items():
                seeds = data["seeds"].astype(np.int64)
                anchor = seeds if seeds.ndim == 1 else seeds[:, 0]
                rows = assign[anchor] == p
                pdata = psplits.get(s)
                if not check(pdata is not None, f"part {p}: {tname}/{s} missing"):
                    continue
                check(np.array_equal(pdata["seeds"], new[seeds[rows]]), f"part {p}: {tname}/{s} seeds")
                for k in ("labels", "indexes"):
                    check((k in data) == (k in pdata), f"part {p}: {tname}/{s} {k} presence")
                    if k in data:
                        check(np.array_equal(pdata[k].astype(np.int64), data[k].astype(np.int64)[rows]),
                              f"part {p}: {tname}/{s} {k}")
    check(total == E, f"the parts hold {total} edges, the source {E}")
    allback = np.concatenate(back, axis=1)
    key = lambda e: np.lexsort((e[1], e[0]))
    srt = np.stack([src_s, src_d])
    check(np.array_equal(allback[:, key(allback)], srt[:, key(srt)]), "the parts' edges are not the source multiset")

    # splits: the union over parts is the whole split; global is the whole split in order
    g = load_dataset(os.path.join(out, book["global_splits"]))
    check(g["meta"]["partition"]["part"] == "global" and g["meta"]["partition"]["id"] == book["partition_id"],
          "global: partition key")
    check(g["edges"].shape == (2, 0) and not g["features"], "global: no edges, no features")
    seeds_stats = book["stats"]["seeds"]
    k = 0
    for (tname, ncls, splits), (gt, gncls, gsplits) in zip(src["tasks"], g["tasks"]):
        for s, data in splits.items():
            seeds = data["seeds"].astype(np.int64)
            check(np.array_equal(gsplits[s]["seeds"], new[seeds]), f"global: {tname}/{s} seeds")
            for kk in ("labels", "indexes"):
                if kk in data:
                    check(np.array_equal(gsplits[s][kk].astype(np.int64), data[kk].astype(np.int64)),
                          f"global: {tname}/{s} {kk}")
            anchor = seeds if seeds.ndim == 1 else seeds[:, 0]
            per = np.bincount(assign[anchor], minlength=P)
            st = seeds_stats[k]
            check(st["task"] == tname and st["split"] == s and st["total"] == len(seeds) and st["per_part"] == per.tolist(),
                  f"stats seeds {st} != {per.tolist()}")
            check(per.sum() == len(seeds), f"{tname}/{s}: parts' rows do not add up")
            k += 1
    check(book["stats"]["part_nodes"] == sizes.tolist(), "stats part_nodes")
    balance = sizes.max() * P / N
    if max_balance is not None:
        check(balance <= max_balance, f"node balance {balance:.4f} > {max_balance}")
    if failures:
        for f in failures:
            print("check_partition: " + f)
        sys.exit(1)
    print(f"check_partition: {out}: ok ({P} parts, {book['part_method']}, edge cut {cut} of {E}, "
          f"node balance {balance:.4f})")


main()
