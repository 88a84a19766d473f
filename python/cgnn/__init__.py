"""cgnn: cgnn's sampler and loader for your own PyTorch model (docs/PYTHON.md).

    import cgnn
    ds = cgnn.OnDiskDataset("data/cora")
    loader = cgnn.NeighborLoader(ds, num_neighbors=[10, 5], batch_size=64, shuffle=True)
    for batch in loader:          # PyG's fields: x, y, edge_index, n_id, batch_size, ...
        out = model(batch.x, batch.edge_index)[:batch.batch_size]

The tensors of a batch share cgnn's memory (no copy): `x`, `n_id`, `y` are views of the loader's
buffers, which stay valid while any of them is alive (the batch's slot is released when the last
one goes). A loader has `prefetch` slots: keeping the tensors of that many batches and asking for
the next raises ValueError naming the batch still held, never overwrites it.

Node batches (NeighborLoader) and link-prediction batches in GiGL's DistABLPLoader layout
(LinkNeighborLoader); a typed graph's as PyG HeteroData (HeteroBatch, HeteroLinkBatch).

Distributed (graphlearn-for-pytorch's worker mode): under `mpirun -np R python3 train.py`,
`OnDiskDataset` on a `cgnn partition` output opens part rank % P on each rank and its loaders
reach the other parts through their ranks; `init_distributed()` gives the rank and world for
torch.distributed (DDP). Opening and closing a partition are collective: open the same
partitions in the same order on every rank; the job is left at exit (or `shutdown()`).
"""
import atexit
import ctypes
import gc
import json
import os
import struct
import sys

import torch


def _import_c():
    # OpenMPI loads its components with dlopen and expects libmpi's symbols global; a Python
    # extension is loaded RTLD_LOCAL, so the library goes in first, global (as mpi4py does).
    flags = sys.getdlopenflags()
    sys.setdlopenflags(flags | os.RTLD_GLOBAL)
    try:
        from . import _C as c
    finally:
        sys.setdlopenflags(flags)
    return c


_C = _import_c()

__all__ = ["OnDiskDataset", "NeighborLoader", "LinkNeighborLoader", "Batch", "HeteroBatch", "LinkBatch",
           "HeteroLinkBatch", "DataError",
           "load_state_dict", "checkpoint_metadata", "init_distributed", "run_graph_store", "shutdown"]

DataError = _C.DataError
SPLITS = {"train": 0, "validation": 1, "valid": 1, "test": 2}
_DTYPES = {"int32": torch.int32, "int64": torch.int64, "float32": torch.float32}


SEED_ASSIGNMENTS = {"local": 0, "global": 1}


def init_distributed():
    """Joins the MPI job this process was launched in (cgnn_dist_init; a world of one without
    mpirun) and returns (rank, world_size), e.g. for torch.distributed.init_process_group."""
    return _C.dist_init()


def run_graph_store(path, num_storage_ranks, fn, task=None, seed_assignment="local", threads=0, rpc_timeout_s=60.0):
    """Server-client mode (GiGL's graph-store mode) under `mpirun -np S+T`: collective, every rank
    calls it alike. The last num_storage_ranks ranks (world ranks T .. T+S-1) hold the partition at
    `path` (a `cgnn partition` output) and build every batch; on each of the first T ranks, fn runs
    with an OnDiskDataset whose loaders ask the storage ranks for their batches (dataset.rank and
    dataset.world_size: this rank among the T compute ranks, e.g. for torch.distributed). Returns
    fn's result on a compute rank, None on a storage rank, once every compute rank's fn returned.
    The dataset, its loaders and their batches live during fn only: keep none past it (the process
    aborts with a message if a loader is still alive). An exception in fn is raised again here after
    the job has ended cleanly."""
    if seed_assignment not in SEED_ASSIGNMENTS:
        raise ValueError(f"seed_assignment: {seed_assignment!r} (one of 'local', 'global')")
    result = []

    def call(cds):
        ds = OnDiskDataset.__new__(OnDiskDataset)
        ds.path = str(path)
        ds._args = None
        ds._describe(cds, task)
        result.append(fn(ds))

    _C.graph_store_run(str(path), int(num_storage_ranks), call, int(threads), -1 if task is None else int(task),
                       SEED_ASSIGNMENTS[seed_assignment], float(rpc_timeout_s))
    return result[0] if result else None


def shutdown():
    """Leaves the MPI job (cgnn_dist_finalize), once every partition is closed; registered to
    run at exit. With a partition still open (a loader or batch kept in a global), it warns and
    leaves MPI running: close partitions in the same order on every rank first."""
    gc.collect()
    if _C.open_partitions():
        print(f"cgnn.shutdown: {_C.open_partitions()} partition(s) still open: the MPI job is not left "
              "(delete the loaders, batches and datasets first)", file=sys.stderr)
        return
    _C.dist_finalize()


atexit.register(shutdown)


class OnDiskDataset:
    """A dataset in DGL GraphBolt's on-disk format (a directory or its metadata.yaml), or one part
    of a `cgnn partition` output under mpirun (collective: every rank opens it).

    task: a partition's task (its loaders take that one; default the first); seed_assignment:
    "local" (each rank the seeds its part owns) or "global" (every rank slices the whole split: the
    batches of the whole graph's loader with rank / world_size of the job). node_feature: the node
    feature the loaders gather as `x` (a feature_data name; None: "feat", else the first), as
    trainerArgs.node_feature chooses it for `cgnn train`."""

    def __init__(self, path, threads=0, task=None, seed_assignment="local", rpc_timeout_s=60.0, node_feature=None):
        self.path = str(path)
        self._args = (self.path, threads, task, seed_assignment, rpc_timeout_s, node_feature)
        if seed_assignment not in SEED_ASSIGNMENTS:
            raise ValueError(f"seed_assignment: {seed_assignment!r} (one of 'local', 'global')")
        if node_feature is not None and not isinstance(node_feature, str):
            raise TypeError(f"node_feature: expected a feature name (str) or None, got {type(node_feature).__name__}")
        self._describe(_C.Dataset(self.path, threads, -1 if task is None else task, SEED_ASSIGNMENTS[seed_assignment],
                                  float(rpc_timeout_s), node_feature), task)

    def _describe(self, cds, task):
        self._ds = cds
        self.is_partition = self._ds.is_partition()
        self.partition_task = (task or 0) if self.is_partition else None  # its loaders' task
        d = self._ds.describe()
        self.node_types = d["node_types"]
        self.edge_types = d["edge_types"]
        self.tasks = d["tasks"]
        self.rank, self.world_size = self._ds.compute_rank(), self._ds.compute_size()  # the loaders' slice

    @property
    def is_typed(self):
        return len(self.node_types) > 1 or len(self.edge_types) > 1

    def __reduce__(self):
        # pickled (torch.multiprocessing.spawn's arguments, a DataLoader worker): the other
        # process opens the same files (memory-mapped: no copy); a partition is the MPI rank's own
        if self.is_partition:
            raise TypeError(f"OnDiskDataset({self.path!r}) is a partition, opened collectively by the MPI "
                            "ranks: open it in the process that uses it")
        return (OnDiskDataset, self._args)

    def num_nodes(self, node_type=0):
        return self.node_types[node_type]["num_nodes"]

    def feature_dim(self, node_type=0):
        return self.node_types[node_type]["feature_dim"]

    def num_classes(self, task=0):
        return self.tasks[task]["num_classes"]

    def __repr__(self):
        return (f"OnDiskDataset({self.path!r}, node_types={[t['name'] for t in self.node_types]}, "
                f"tasks={[t['name'] for t in self.tasks]})")


def _tensor(arr):
    """A torch tensor over a _C.Array's memory (no copy); it keeps the batch alive."""
    info = arr.info
    n, m = info["shape"]
    if n == 0:
        return torch.empty((0, m) if info["ndim"] == 2 else (0,), dtype=_DTYPES[info["dtype"]])
    t = torch.frombuffer(arr, dtype=_DTYPES[info["dtype"]])
    return t.view(n, m) if info["ndim"] == 2 else t


class Block:
    """One message-flow block (DGL's MFG): CSR by destination over local ids."""

    def __init__(self, indptr, indices, num_src):
        self.indptr, self.indices = indptr, indices
        self.num_dst, self.num_src = indptr.numel() - 1, num_src

    def edge_index(self):
        """(2, E) int64 [src; dst] of this block."""
        deg = self.indptr[1:] - self.indptr[:-1]
        dst = torch.repeat_interleave(torch.arange(self.num_dst, dtype=torch.int64), deg)
        return torch.stack([self.indices.to(torch.int64), dst])


class Batch:
    """A node batch with PyG's fields.

    n_id (N,) the nodes, seeds first; x (N, F) their features (shared with cgnn); y (batch_size,)
    the seeds' labels; batch_size; edge_index (2, E) [src; dst] in local ids, each node's sampled
    in-edges once, hop by hop (PyG's NeighborLoader layout, so trim_to_layer works);
    num_sampled_nodes, num_sampled_edges per hop; blocks: the per-layer MFG blocks (block 0
    consumes the input rows) for models that want them; input_id the split rows of the seeds.
    """

    def __init__(self, b):
        self._b = b
        info = b.info()
        self.num_layers = L = info["num_layers"]
        self.n_id = _tensor(b.array(_C.FIELD_NODES, 0))
        try:
            self.x = _tensor(b.array(_C.FIELD_FEATURES, 0))
        except ValueError:
            self.x = None  # no node features (a model gives the nodes learnable rows)
        self.input_id = _tensor(b.array(_C.FIELD_ITEMS, 0))
        try:
            self.y = _tensor(b.array(_C.FIELD_LABELS, 0))
        except ValueError:
            self.y = None
        self.batch_size = info["num_seeds"]
        hops = [b.num_nodes(0, h) for h in range(L + 1)]
        self.num_sampled_nodes = [hops[0]] + [hops[h] - hops[h - 1] for h in range(1, L + 1)]
        self.blocks = []
        for layer in range(L):
            indptr = _tensor(b.array(_C.FIELD_BLOCK_INDPTR, layer))
            indices = _tensor(b.array(_C.FIELD_BLOCK_INDICES, layer))
            self.blocks.append(Block(indptr, indices, b.num_nodes(0, L - layer)))
        # hop h: the in-edges of the nodes first reached at hop h, from the block that samples
        # them (L - 1 - h); the blocks list their destinations first, so the rows are a range
        parts, self.num_sampled_edges = [], []
        for h in range(L):
            blk = self.blocks[L - 1 - h]
            lo, hi = (0 if h == 0 else hops[h - 1]), hops[h]
            e0, e1 = int(blk.indptr[lo]), int(blk.indptr[hi])
            deg = blk.indptr[lo + 1:hi + 1] - blk.indptr[lo:hi]
            dst = torch.repeat_interleave(torch.arange(lo, hi, dtype=torch.int64), deg)
            parts.append(torch.stack([blk.indices[e0:e1].to(torch.int64), dst]))
            self.num_sampled_edges.append(e1 - e0)
        self.edge_index = torch.cat(parts, dim=1) if parts else torch.empty((2, 0), dtype=torch.int64)

    @property
    def num_nodes(self):
        return self.n_id.numel()

    def __repr__(self):
        x = tuple(self.x.shape) if self.x is not None else None
        return (f"Batch(n_id={self.num_nodes}, x={x}, edge_index={tuple(self.edge_index.shape)}, "
                f"batch_size={self.batch_size})")


class _Store:
    """batch[node type] or batch[edge type]: PyG HeteroData's per-type view (attributes)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return "{" + ", ".join(f"{k}={tuple(v.shape) if torch.is_tensor(v) else v}" for k, v in self.__dict__.items()) + "}"


class HeteroBatch:
    """A typed graph's node batch in PyG HeteroData's layout (cgnn's memory, no copy):

    x_dict[t] (n_t, F_t) the features of node type t's nodes (types without features: absent),
    n_id_dict[t] (n_t,) their per-type ids, seeds first; edge_index_dict[(s, r, d)] (2, E) the
    sampled edges of each edge type as [src rows into n_id_dict[s]; dst rows into n_id_dict[d]];
    num_sampled_nodes_dict[t], num_sampled_edges_dict[(s, r, d)] per hop (PyG's trim_to_layer);
    y, batch_size, input_id: the seed type's labels, seed count and split rows; blocks[l][k]: layer
    l's block of edge type k (DGL's heterogeneous blocks). batch[t].x, batch[(s, r, d)].edge_index
    as in PyG; to_pyg() builds a torch_geometric HeteroData where PyG is installed.
    """

    def __init__(self, b, dataset, seed_type):
        info = b.info()
        L = info["num_layers"]
        self.node_types = [t["name"] for t in dataset.node_types]
        self.edge_types = [tuple(e["name"].split(":")) for e in dataset.edge_types]
        self.seed_type = self.node_types[seed_type]
        self.n_id_dict, self.x_dict, self.num_sampled_nodes_dict, hops = {}, {}, {}, {}
        for k, t in enumerate(self.node_types):
            self.n_id_dict[t] = _tensor(b.array(_C.FIELD_NODES, k))
            if dataset.node_types[k]["feature_dim"] > 0:
                self.x_dict[t] = _tensor(b.array(_C.FIELD_FEATURES, k))
            hops[t] = [b.num_nodes(k, h) for h in range(L + 1)]
            self.num_sampled_nodes_dict[t] = [hops[t][0]] + [hops[t][h] - hops[t][h - 1] for h in range(1, L + 1)]
        K = len(self.edge_types)
        self.blocks = [[Block(_tensor(b.array(_C.FIELD_BLOCK_INDPTR, layer * K + k)),
                              _tensor(b.array(_C.FIELD_BLOCK_INDICES, layer * K + k)),
                              hops[self.edge_types[k][0]][L - layer]) for k in range(K)] for layer in range(L)]
        # hop h's edges of type (s, r, d): the in-edges of the type-d nodes first reached at hop h,
        # from the block that samples them (L - 1 - h): its destination rows are a range
        self.edge_index_dict, self.num_sampled_edges_dict = {}, {}
        for k, et in enumerate(self.edge_types):
            parts, counts = [], []
            for h in range(L):
                blk = self.blocks[L - 1 - h][k]
                lo, hi = (0 if h == 0 else hops[et[2]][h - 1]), hops[et[2]][h]
                e0, e1 = int(blk.indptr[lo]), int(blk.indptr[hi])
                deg = blk.indptr[lo + 1:hi + 1] - blk.indptr[lo:hi]
                dst = torch.repeat_interleave(torch.arange(lo, hi, dtype=torch.int64), deg)
                parts.append(torch.stack([blk.indices[e0:e1].to(torch.int64), dst]))
                counts.append(e1 - e0)
            self.edge_index_dict[et] = torch.cat(parts, dim=1) if parts else torch.empty((2, 0), dtype=torch.int64)
            self.num_sampled_edges_dict[et] = counts
        self.input_id = _tensor(b.array(_C.FIELD_ITEMS, 0))
        try:
            self.y = _tensor(b.array(_C.FIELD_LABELS, 0))
        except ValueError:
            self.y = None
        self.batch_size = hops[self.seed_type][0]
        self._b = b

    def __getitem__(self, key):
        if isinstance(key, tuple):
            return _Store(edge_index=self.edge_index_dict[key], num_sampled_edges=self.num_sampled_edges_dict[key])
        st = _Store(n_id=self.n_id_dict[key], num_sampled_nodes=self.num_sampled_nodes_dict[key])
        if key in self.x_dict:
            st.x = self.x_dict[key]
        if key == self.seed_type:
            st.y, st.batch_size, st.input_id = self.y, self.batch_size, self.input_id
        return st

    def to_pyg(self):
        """A torch_geometric.data.HeteroData over the same tensors (needs PyG installed)."""
        from torch_geometric.data import HeteroData
        data = HeteroData()
        for t in self.node_types:
            for k, v in self[t].__dict__.items():
                data[t][k] = v
        for et in self.edge_types:
            data[et].edge_index = self.edge_index_dict[et]
        return data

    def __repr__(self):
        return (f"HeteroBatch(seed_type={self.seed_type!r}, batch_size={self.batch_size}, "
                f"n_id={ {t: n.numel() for t, n in self.n_id_dict.items()} }, "
                f"edges={ {':'.join(e): v.shape[1] for e, v in self.edge_index_dict.items()} })")


class HeteroLinkBatch(HeteroBatch):
    """A typed graph's link-prediction batch: HeteroBatch's fields over the sampled neighbourhoods
    of the pairs of edge type (s, r, d) = edge_type, plus each pair's rows, PyG's triplet names:
    src_index (P,) the anchors' rows in n_id_dict[s]; dst_pos_index (P,) the positives' rows in
    n_id_dict[d]; dst_neg_index (K,) the batch's random negatives (nodes of type d), rows in
    n_id_dict[d]; hard_neg_index / hard_neg_ptr / hard_neg_count as LinkBatch's (labelled pairs);
    input_id (P,) the split rows of the pairs. The seeds (anchors, positives, negatives) are the
    first batch_size_dict[t] nodes of each type."""

    def __init__(self, b, dataset, edge_type):
        s_, r_, d_ = dataset.edge_types[edge_type]["name"].split(":")
        super().__init__(b, dataset, [t["name"] for t in dataset.node_types].index(s_))
        self.edge_type = (s_, r_, d_)
        info = b.info()
        P, H, K = info["num_items"], info["num_listed"], info["num_negatives"]
        rows = _tensor(b.array(_C.FIELD_ITEM_ROWS, 0)).to(torch.int64)
        # (the rows of type d come after those of type s, when the two differ)
        off = self.num_sampled_nodes_dict[s_][0] if s_ != d_ else 0
        self.src_index = rows[:P]
        self.dst_pos_index = rows[P:2 * P] - off
        self.hard_neg_index = rows[2 * P:2 * P + H] - off
        self.dst_neg_index = rows[2 * P + H:2 * P + H + K] - off
        if H:
            self.hard_neg_ptr = _tensor(b.array(_C.FIELD_LISTED_OFFSET, 0))
            self.hard_neg_count = _tensor(b.array(_C.FIELD_LISTED_COUNT, 0))
        else:
            self.hard_neg_ptr = self.hard_neg_count = None
        self.batch_size_dict = {t: v[0] for t, v in self.num_sampled_nodes_dict.items()}
        self.y = None


class LinkBatch(Batch):
    """A link-prediction batch: Batch's fields (batch_size: the distinct seed nodes: anchors,
    positives and negatives), plus each pair's rows among them, PyG's triplet names:

    src_index (P,) the anchors' local rows; dst_pos_index (P,) the positives'; dst_neg_index (K,)
    the random negatives shared by the batch's pairs (GiGL's random negatives); hard_neg_index
    (H,) the dataset's listed negatives of the batch's groups, pair i's being
    hard_neg_index[hard_neg_ptr[i]:hard_neg_ptr[i] + hard_neg_count[i]] (labelled pairs);
    input_id (P,) the split rows of the pairs.
    """

    def __init__(self, b):
        super().__init__(b)
        info = b.info()
        P, H, K = info["num_items"], info["num_listed"], info["num_negatives"]
        rows = _tensor(b.array(_C.FIELD_ITEM_ROWS, 0)).to(torch.int64)
        self.src_index, self.dst_pos_index = rows[:P], rows[P:2 * P]
        self.hard_neg_index, self.dst_neg_index = rows[2 * P:2 * P + H], rows[2 * P + H:2 * P + H + K]
        if H:
            self.hard_neg_ptr = _tensor(b.array(_C.FIELD_LISTED_OFFSET, 0))
            self.hard_neg_count = _tensor(b.array(_C.FIELD_LISTED_COUNT, 0))
        else:
            self.hard_neg_ptr = self.hard_neg_count = None
        self.y = None


def _fanouts(dataset, num_neighbors):
    """num_neighbors as PyG takes it: a list (every edge type), or on a typed graph a dict
    {(src, rel, dst) or "src:rel:dst": list} (edge types not named: the list under None, else
    all neighbours); the C loader's fanouts and edge_type_fanouts."""
    if not isinstance(num_neighbors, dict):
        return dict(fanouts=list(num_neighbors))
    if not dataset.is_typed:
        raise ValueError("num_neighbors: a dict (per edge type) is for a typed graph; give a list")
    names = [e["name"] for e in dataset.edge_types]
    per = {}
    for key, fan in num_neighbors.items():
        name = None if key is None else ":".join(key) if isinstance(key, tuple) else str(key)
        if name is not None and name not in names:
            raise ValueError(f"num_neighbors: {key!r} is not an edge type of {dataset.path} (its edge types: {names})")
        per[name] = list(fan)
    hops = {len(v) for v in per.values()}
    if len(hops) != 1:
        raise ValueError(f"num_neighbors: every edge type needs the same number of hops, got {sorted(hops)}")
    L = hops.pop()
    default = per.get(None, [-1] * L)
    return dict(fanouts=default, edge_type_fanouts=[[per.get(n, default)[h] for n in names] for h in range(L)])


def _loader_options(dataset, kind, split, task, num_neighbors, **kw):
    if not isinstance(dataset, OnDiskDataset):
        raise TypeError(f"dataset: an OnDiskDataset is expected, got {type(dataset).__name__}")
    if split not in SPLITS:
        raise ValueError(f"split: {split!r} (one of 'train', 'validation', 'test')")
    if task is None and dataset.is_partition:
        task = dataset.partition_task
    if task is None:  # the dataset's first task of the kind
        task = next((i for i, t in enumerate(dataset.tasks) if t["kind"] == kind), -1)
    if not isinstance(task, int) or task < 0 or task >= len(dataset.tasks) or dataset.tasks[task]["kind"] != kind:
        raise ValueError(f"task: {task!r} is not a {kind.replace('_', ' ')} task of {dataset.path} "
                         f"(its tasks: {[(t['name'], t['kind']) for t in dataset.tasks]})")
    return dict(task=task, split=SPLITS[split], **_fanouts(dataset, num_neighbors), **kw)


class _Loader:
    def __init__(self, dataset, opts, batch_type):
        self.dataset, self.epoch, self._batch = dataset, 0, batch_type
        self._l = _C.Loader(dataset._ds, **opts)
        if dataset.is_typed:  # node batches of the task's node type, or pairs of its edge type
            typ = dataset.tasks[opts["task"]]["type"]
            if batch_type is LinkBatch:
                self._batch = lambda b: HeteroLinkBatch(b, dataset, typ)
            else:
                self._batch = lambda b: HeteroBatch(b, dataset, typ)

    def __len__(self):
        return self._l.num_batches()

    def set_epoch(self, epoch):
        """The next iteration runs this epoch (as DistributedSampler.set_epoch)."""
        self.epoch = int(epoch)

    def __iter__(self):
        self._l.start_epoch(self.epoch)
        self.epoch += 1
        while True:
            b = self._l.next()
            if b is None:
                return
            yield self._batch(b)


class LinkNeighborLoader(_Loader):
    """Link-prediction batches over a task's pairs, GiGL's DistABLPLoader layout (LinkBatch).

    Each batch: batch_size pairs (anchor_batching: batch_size anchors with all their positives,
    or the first max_labels_per_anchor), num_negatives random negative nodes shared by the
    batch, the dataset's listed negatives of labelled pairs, and their sampled neighbourhoods;
    exclude_seed_edges keeps the batch's own pair edges out of them. A typed graph's batches are
    HeteroLinkBatch (pairs of the task's edge type).
    """

    def __init__(self, dataset, num_neighbors, batch_size=1024, split="train", task=None, num_negatives=0,
                 exclude_seed_edges=False, anchor_batching=False, max_labels_per_anchor=0, shuffle=None,
                 drop_last=False, seed=42, num_workers=2, prefetch=0, replace=False, rank=0, world_size=1,
                 normalize_features=False, drop_uneven=False):
        opts = _loader_options(dataset, "link_prediction", split, task, num_neighbors, batch_size=batch_size,
                               num_negatives=num_negatives, exclude_seed_edges=int(exclude_seed_edges),
                               anchor_batching=int(anchor_batching), max_labels_per_anchor=max_labels_per_anchor,
                               drop_last=int(drop_last), seed=seed, num_workers=num_workers, prefetch=prefetch,
                               replace=int(replace), rank=rank, world_size=world_size,
                               normalize_features=int(normalize_features), drop_uneven=int(drop_uneven))
        if shuffle is not None:
            opts["shuffle"] = int(shuffle)
        super().__init__(dataset, opts, LinkBatch)


class NeighborLoader(_Loader):
    """PyG's NeighborLoader over a cgnn dataset's task split, built by cgnn's sampler threads.

    num_neighbors: neighbours per hop, seed side first (-1: all); on a typed graph also a dict per
    edge type, {(src, rel, dst): [...], None: default} as PyG's. Every epoch (each `iter`) draws a
    new order and new neighbours keyed by (seed, epoch): the same batches for any num_workers.
    rank / world_size: this process's slice of each epoch (data parallel). A typed graph's batches
    are HeteroBatch (PyG HeteroData's fields), of the task's node type.
    """

    def __init__(self, dataset, num_neighbors, batch_size=1024, split="train", task=None, shuffle=None,
                 drop_last=False, seed=42, num_workers=2, prefetch=0, replace=False, rank=0, world_size=1,
                 normalize_features=False, drop_uneven=False):
        opts = _loader_options(dataset, "node_classification", split, task, num_neighbors, batch_size=batch_size,
                               drop_last=int(drop_last), seed=seed, num_workers=num_workers, prefetch=prefetch,
                               replace=int(replace), rank=rank, world_size=world_size,
                               normalize_features=int(normalize_features), drop_uneven=int(drop_uneven))
        if shuffle is not None:
            opts["shuffle"] = int(shuffle)
        super().__init__(dataset, opts, Batch)


def _safetensors(path):
    """(header dict, file bytes, data offset) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise DataError(f"{path}: not a safetensors file (shorter than its header length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise DataError(f"{path}: header length {n} is past the end of the file")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise DataError(f"{path}: the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise DataError(f"{path}: the header is not a JSON object")
    return header, data, n


def checkpoint_metadata(path):
    """A cgnn checkpoint's metadata as a dict of strings: the model (cgnn_model, num_layers,
    in_channels, hidden_channels, out_channels, heads) and its input (node_feature,
    feature_normalization: feed the model the same feature, "row" = each row divided by its L1
    norm). A .pt file: its state_dict's _metadata["cgnn"] when cgnn wrote it, else {}."""
    path = str(path)
    if path.endswith((".pt", ".pth")):
        sd = torch.load(path, map_location="cpu")
        meta = getattr(sd, "_metadata", None) or {}
        return dict(meta.get("cgnn", {})) if isinstance(meta, dict) else {}
    meta = _safetensors(path)[0].get("__metadata__", {})
    return dict(meta) if isinstance(meta, dict) else {}


def load_state_dict(path):
    """A cgnn checkpoint as a dict of torch tensors: safetensors (parsed here: no package needed)
    or a .pt / .pth file (torch.load). checkpoint_metadata(path) says what input it takes."""
    path = str(path)
    if path.endswith((".pt", ".pth")):
        return torch.load(path, map_location="cpu")
    header, data, n = _safetensors(path)
    dtypes = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "I32": torch.int32,
              "F16": torch.float16, "BF16": torch.bfloat16, "U8": torch.uint8}
    body = bytearray(data[8 + n:])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] not in dtypes:
            raise DataError(f"{path}: tensor {name!r}: dtype {t['dtype']} is not supported")
        b, e = t["data_offsets"]
        if not 0 <= b <= e <= len(body):
            raise DataError(f"{path}: tensor {name!r}: data_offsets {b}:{e} outside the data")
        dt = dtypes[t["dtype"]]
        count = (e - b) // torch.empty(0, dtype=dt).element_size()
        numel = 1
        for d in t["shape"]:
            numel *= d
        if numel != count:
            raise DataError(f"{path}: tensor {name!r}: shape {t['shape']} does not match its {e - b} bytes")
        x = torch.frombuffer(body, dtype=dt, count=count, offset=b) if count else torch.empty(0, dtype=dt)
        out[name] = x.reshape(t["shape"]).clone()
    return out
