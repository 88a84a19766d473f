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
Typed datasets (DistDGL's heterogeneous layout): node_map / edge_map hold one range list per
node / edge type (DGL's homogeneous new ids, contiguous in (part, type) order), ntypes / etypes
name the types, the id maps are per node type (per-type ids, inverse bijections, original ids
ascending within each part's range of the type), part p's edge file of edge type k is exactly
the source edges of k whose dst part p owns, in the original order, in per-type new ids; per-type
node features are the source rows; split seeds are mapped per column type (a pair: its edge
type's src and dst types; the anchor decides the part); etype_max_in_degree and the stats agree.
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


def load_typed(d):
    meta = yaml.safe_load(open(os.path.join(d, "metadata.yaml")))

    def path(p):
        return p if os.path.isabs(p) else os.path.join(d, p)

    ds = {"meta": meta, "ntypes": [(n["type"], n["num"]) for n in meta["graph"]["nodes"]]}
    ds["edges"] = [(e["type"], np.load(path(e["path"]))) for e in meta["graph"]["edges"]]
    ds["features"] = [(f["domain"], f["type"], f["name"], np.load(path(f["path"]))) for f in meta.get("feature_data") or []]
    tasks = []
    for t in meta.get("tasks") or []:
        splits = {}
        for s in ("train_set", "validation_set", "test_set"):
            if s in t:
                splits[s] = (t[s][0]["type"], {e["name"]: np.load(path(e["path"])) for e in t[s][0]["data"]})
        tasks.append((t["name"], t.get("num_classes"), splits))
    ds["tasks"] = tasks
    return ds


def check_typed(src_dir, out, book, max_balance):
    src = load_typed(src_dir)
    P = book["num_parts"]
    names = [n for n, _ in src["ntypes"]]
    counts = dict(src["ntypes"])
    enames = [n for n, _ in src["edges"]]
    check(book["ntypes"] == {n: i for i, n in enumerate(names)}, f"ntypes {book['ntypes']}")
    check(book["etypes"] == {n: i for i, n in enumerate(enames)}, f"etypes {book['etypes']}")
    N, E = sum(counts.values()), sum(e.shape[1] for _, e in src["edges"])
    check(book["num_nodes"] == N and book["num_edges"] == E, "num_nodes / num_edges")
    # DGL's ranges: contiguous in (part, type) order over [0, N) / [0, E)
    for field, keys, total in (("node_map", names, N), ("edge_map", enames, E)):
        check(sorted(book[field]) == sorted(keys), f"{field} keys")
        at = 0
        for p in range(P):
            for k in keys:
                s0, e0 = book[field][k][p]
                check(s0 == at and e0 >= s0, f"{field}[{k}][{p}] = {[s0, e0]} does not continue at {at}")
                at = e0
        check(at == total, f"{field} ends at {at}, not {total}")
    size = {n: np.array([book["node_map"][n][p][1] - book["node_map"][n][p][0] for p in range(P)]) for n in names}
    start = {n: np.concatenate([[0], np.cumsum(size[n])]) for n in names}
    orig, new, assign = {}, {}, {}
    for n in names:
        check(start[n][-1] == counts[n], f"node type {n}: ranges cover {start[n][-1]} of {counts[n]}")
        o = np.load(os.path.join(out, book["orig_ids"][n]))
        w = np.load(os.path.join(out, book["new_ids"][n]))
        c = counts[n]
        check(o.dtype == np.int64 and w.dtype == np.int64 and o.shape == (c,) and w.shape == (c,), f"{n}: maps shape")
        check(np.array_equal(w[o], np.arange(c)) and np.array_equal(o[w], np.arange(c)), f"{n}: maps not inverse")
        for p in range(P):
            a, b = start[n][p], start[n][p + 1]
            check(np.all(np.diff(o[a:b]) > 0), f"{n}: original ids do not ascend in part {p}")
        orig[n], new[n] = o, w
        assign[n] = np.repeat(np.arange(P), size[n])[w]  # part of each original node of type n
    cut = 0
    maxdeg = {}
    esrc = {}
    for en, e in src["edges"]:
        s_t, _, d_t = en.split(":")
        es, ed = e[0].astype(np.int64), e[1].astype(np.int64)
        cut += int(np.count_nonzero(assign[s_t][es] != assign[d_t][ed]))
        maxdeg[en] = int(np.bincount(ed, minlength=counts[d_t]).max()) if len(ed) else 0
        esrc[en] = (s_t, d_t, es, ed, e.dtype)
    check(book["stats"]["edge_cut"] == cut, f"edge_cut {book['stats']['edge_cut']} != {cut}")
    check(book["etype_max_in_degree"] == maxdeg and book["max_in_degree"] == max(maxdeg.values()), "in-degree bounds")
    total = 0
    for p in range(P):
        part = load_typed(os.path.join(out, book[f"part-{p}"]["part_dir"]))
        pm = part["meta"]["partition"]
        check(pm["id"] == book["partition_id"] and pm["part"] == p and pm["num_parts"] == P, f"part {p}: {pm}")
        check([(r["type"], r["start"], r["end"]) for r in pm["node_ranges"]] ==
              [(n, int(start[n][p]), int(start[n][p + 1])) for n in names], f"part {p}: node_ranges")
        check(part["ntypes"] == src["ntypes"], f"part {p}: graph.nodes")
        for (en, pe) in part["edges"]:
            s_t, d_t, es, ed, dt = esrc[en]
            mask = assign[d_t][ed] == p
            want = np.stack([new[s_t][es[mask]], new[d_t][ed[mask]]])
            check(pe.dtype == dt and np.array_equal(pe, want), f"part {p}: {en} edges are not the source in-edges")
            lo, hi = book["edge_map"][en][p]
            check(pe.shape[1] == hi - lo, f"part {p}: {en} edge count != edge_map")
            total += pe.shape[1]
        check([e for e, _ in part["edges"]] == enames, f"part {p}: edge types")
        check(len(part["features"]) == len(src["features"]), f"part {p}: feature count")
        for (dom, ty, name, arr), (pdom, pty, pname, parr) in zip(src["features"], part["features"]):
            check((dom, ty, name) == (pdom, pty, pname) and parr.dtype == arr.dtype, f"part {p}: feature {ty}/{name}")
            if dom == "node":
                a, b = start[ty][p], start[ty][p + 1]
                check(np.array_equal(parr, arr[orig[ty][a:b]]), f"part {p}: feature {ty}/{name} rows differ")
        for (tname, ncls, splits), (pt, pncls, psplits) in zip(src["tasks"], part["tasks"]):
            check(tname == pt and ncls == pncls, f"part {p}: task {tname}")
            for s, (ty, data) in splits.items():
                seeds = data["seeds"].astype(np.int64)
                cols = ty.split(":")[0::2] if seeds.ndim == 2 else [ty]
                rows = assign[cols[0]][seeds if seeds.ndim == 1 else seeds[:, 0]] == p
                want = new[ty][seeds[rows]] if seeds.ndim == 1 else np.stack(
                    [new[cols[0]][seeds[rows, 0]], new[cols[1]][seeds[rows, 1]]], axis=1)
                pty, pdata = psplits[s]
                check(pty == ty and np.array_equal(pdata["seeds"], want), f"part {p}: {tname}/{s} seeds")
                for k in ("labels", "indexes"):
                    if k in data:
                        check(np.array_equal(pdata[k].astype(np.int64), data[k].astype(np.int64)[rows]),
                              f"part {p}: {tname}/{s} {k}")
    check(total == E, f"the parts hold {total} edges, the source {E}")
    g = load_typed(os.path.join(out, book["global_splits"]))
    check(g["meta"]["partition"]["part"] == "global" and all(e.shape[1] == 0 for _, e in g["edges"]) and not g["features"],
          "global: partition key, no edges, no features")
    k = 0
    for (tname, ncls, splits), (gt, gncls, gsplits) in zip(src["tasks"], g["tasks"]):
        for s, (ty, data) in splits.items():
            seeds = data["seeds"].astype(np.int64)
            cols = ty.split(":")[0::2] if seeds.ndim == 2 else [ty]
            want = new[ty][seeds] if seeds.ndim == 1 else np.stack([new[cols[0]][seeds[:, 0]], new[cols[1]][seeds[:, 1]]], 1)
            check(np.array_equal(gsplits[s][1]["seeds"], want), f"global: {tname}/{s} seeds")
            per = np.bincount(assign[cols[0]][seeds if seeds.ndim == 1 else seeds[:, 0]], minlength=P)
            st = book["stats"]["seeds"][k]
            check(st["task"] == tname and st["split"] == s and st["per_part"] == per.tolist(), f"stats seeds {st}")
            k += 1
    part_nodes = [int(sum(size[n][p] for n in names)) for p in range(P)]
    check(book["stats"]["part_nodes"] == part_nodes, "stats part_nodes")
    balance = max(part_nodes) * P / N
    if max_balance is not None:
        for n in names:  # DistDGL's balance_ntypes: every node type is balanced
            b = size[n].max() * P / counts[n]
            check(b <= max_balance or size[n].max() - size[n].min() <= 1, f"node type {n}: balance {b:.4f} > {max_balance}")
    return P, cut, E, balance


def main():
    src_dir, out = sys.argv[1], sys.argv[2]
    max_balance = float(sys.argv[sys.argv.index("--max-node-balance") + 1]) if "--max-node-balance" in sys.argv else None
    src = load_dataset(src_dir)
    jsons = [f for f in os.listdir(out) if f.endswith(".json")]
    if not check(len(jsons) == 1, f"{out}: expected one .json, got {jsons}"):
        return
    book = json.load(open(os.path.join(out, jsons[0])))
    if book.get("ntypes", {"_N": 0}) != {"_N": 0}:
        P, cut, E, balance = check_typed(src_dir, out, book, max_balance)
        if failures:
            for f in failures:
                print("check_partition: " + f)
            sys.exit(1)
        print(f"check_partition: {out}: ok (typed, {P} parts, {book['part_method']}, edge cut {cut} of {E}, "
              f"node balance {balance:.4f})")
        return
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
