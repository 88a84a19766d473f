"""cgnn.gigl: what a GiGL in-memory training script (GiGL's `trainerConfig.command`) takes from
GiGL's runtime, on cgnn's loaders, so the script runs under `cgnn train` with its imports changed
and little else (docs/PYTHON.md, "GiGL training scripts"; the port of GiGL's homogeneous
link-prediction example: examples/gigl/).

`cgnn train` launches the command on every rank as GiGL's launcher does (--job_name,
--task_config_uri, --resource_config_uri, trainerArgs as --key=value; RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT for torch.distributed's env://) when the task config says
featureFlags.cgnn_run_trainer_command: "True".

Stand-ins, each named as GiGL names it (GiGL fee4ba5):
  GbmlConfigPbWrapper      the task config's fields the example scripts read (PyYAML, not protobuf)
  build_dataset_from_task_config_uri
                           cgnn.OnDiskDataset of sharedConfig.preprocessedMetadataUri (a partition
                           under mpirun: the MPI job is joined first)
  DistABLPLoader           GiGL's anchor-based link-prediction batches (anchors first, y_positive,
                           y_negative) from cgnn.LinkNeighborLoader with anchor batching; the random
                           negatives are drawn into the same batch (random_negative_index), where
                           GiGL draws them with a second loader
  DistNeighborLoader       node batches of a split (cgnn.NeighborLoader)
  InfiniteIterator, parse_fanout, save_state_dict, load_state_dict_from_uri,
  write_eval_metrics_to_uri, get_internal_ip_from_master_node, get_free_ports_from_master_node,
  get_available_device, is_distributed_available_and_initialized, to_homogeneous, UriFactory,
  Logger
"""
import json
import logging
import os
import socket

import torch
import torch.distributed

from . import LinkNeighborLoader, NeighborLoader, OnDiskDataset, init_distributed

__all__ = ["GbmlConfigPbWrapper", "build_dataset_from_task_config_uri", "DistABLPLoader", "DistNeighborLoader",
           "InfiniteIterator", "parse_fanout", "save_state_dict", "load_state_dict_from_uri",
           "write_eval_metrics_to_uri", "get_internal_ip_from_master_node", "get_free_ports_from_master_node",
           "get_available_device", "is_distributed_available_and_initialized", "to_homogeneous", "UriFactory",
           "Logger"]


class _Fields:
    """Attribute access over a mapping, the proto's field names in snake_case (missing: empty)."""

    def __init__(self, d, defaults=None):
        self._d = d if isinstance(d, dict) else {}
        self._defaults = defaults or {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        camel = name.split("_")[0] + "".join(w.title() for w in name.split("_")[1:])
        for key in (name, camel):
            if key in self._d:
                v = self._d[key]
                return _Fields(v) if isinstance(v, dict) else v
        return self._defaults.get(name, _Fields({}))

    def __iter__(self):
        return iter(self._d)

    def __getitem__(self, k):
        return self._d[k]

    def keys(self):
        return self._d.keys()

    def items(self):
        return self._d.items()

    def __bool__(self):
        return bool(self._d)


_datasets = {}  # preprocessedMetadataUri -> the OnDiskDataset built for it (feature sizes)
_configs = set()  # the task configs read in this process (inputs: never written)


def _path(uri):
    uri = str(uri)
    return uri[len("file://"):] if uri.startswith("file://") else uri


class GbmlConfigPbWrapper:
    """GiGL's GbmlConfigPbWrapper, the fields its example training scripts read, from the task
    config YAML: trainer_config.trainer_args (strings), shared_config.should_skip_training,
    gbml_config_pb.shared_config.trained_model_metadata.{trained_model_uri, eval_metrics_uri},
    graph_metadata_pb_wrapper.homogeneous_node_type / homogeneous_edge_type, and
    node_type_to_feature_dim_map / edge_type_to_feature_dim_map (from the dataset: cgnn's
    datasets have no edge features, so 0)."""

    def __init__(self, doc, uri):
        if not isinstance(doc, dict):
            raise ValueError(f"{uri}: a task config is a YAML mapping")
        self.uri = str(uri)
        self.gbml_config_pb = _Fields(doc)
        self.shared_config = self.gbml_config_pb.shared_config
        self.trainer_config = _Fields(doc.get("trainerConfig") or {},
                                      {"trainer_args": {}, "command": ""})
        args = self.trainer_config.trainer_args
        self.trainer_config._d["trainerArgs"] = {str(k): str(v) for k, v in dict(args or {}).items()}
        gm = doc.get("graphMetadata") or {}
        node_types = [str(t) for t in gm.get("nodeTypes") or []]
        edge_types = [(str(e.get("srcNodeType")), str(e.get("relation")), str(e.get("dstNodeType")))
                      for e in gm.get("edgeTypes") or [] if isinstance(e, dict)]
        self.graph_metadata_pb_wrapper = _Fields({
            "homogeneous_node_type": node_types[0] if len(node_types) == 1 else None,
            "homogeneous_edge_type": edge_types[0] if len(edge_types) == 1 else None,
            "node_types": node_types, "edge_types": edge_types})

    @classmethod
    def get_gbml_config_pb_wrapper_from_uri(cls, gbml_config_uri):
        import yaml  # Debian's python3-yaml (scripts/install-deps.sh)
        path = _path(gbml_config_uri)
        _configs.add(path)
        with open(path) as f:
            return cls(yaml.safe_load(f), path)

    def _dataset(self):
        return _open_dataset(_path(self.shared_config.preprocessed_metadata_uri or ""))

    @property
    def node_type_to_feature_dim_map(self):
        ds = self._dataset()
        names = self.graph_metadata_pb_wrapper.node_types or [t["name"] for t in ds.node_types]
        return {name: ds.feature_dim(i) for i, name in enumerate(names)}

    @property
    def edge_type_to_feature_dim_map(self):
        return {e: 0 for e in self.graph_metadata_pb_wrapper.edge_types}


def _open_dataset(uri):
    """The OnDiskDataset of uri, opened once per process (a partition's open is collective)."""
    if uri not in _datasets:
        _datasets[uri] = OnDiskDataset(uri)
    return _datasets[uri]


def build_dataset_from_task_config_uri(task_config_uri, is_inference=False, **_):
    """The task config's dataset (sharedConfig.preprocessedMetadataUri) as a cgnn.OnDiskDataset.
    A `cgnn partition` output (its .json) is opened as this MPI rank's part: the process joins the
    MPI job first (it must run under mpirun, one part per rank)."""
    cfg = GbmlConfigPbWrapper.get_gbml_config_pb_wrapper_from_uri(task_config_uri)
    uri = _path(cfg.shared_config.preprocessed_metadata_uri or "")
    if not uri:
        raise ValueError(f"{task_config_uri}: sharedConfig.preprocessedMetadataUri is not set")
    if uri.endswith(".json"):
        init_distributed()
    return _open_dataset(uri)


def _slice(dataset):
    """The (rank, world_size) a loader of dataset takes: torch.distributed's when initialised; a
    partition's loaders are the MPI rank's already (0, 1)."""
    if dataset.is_partition or not is_distributed_available_and_initialized():
        return 0, 1
    return torch.distributed.get_rank(), torch.distributed.get_world_size()


def _split(input_nodes):
    if input_nodes is None:
        return "train"
    if isinstance(input_nodes, str) and input_nodes in ("train", "val", "validation", "test"):
        return "validation" if input_nodes == "val" else input_nodes
    raise ValueError(f"input_nodes: {input_nodes!r}: cgnn's loaders take a split of the dataset's task "
                     "('train', 'val', 'test')")


class ABLPBatch:
    """A batch in GiGL's DistABLPLoader layout (homogeneous, use_label_edge_index_output=True):

    x, edge_index       the sampled subgraph (PyG's fields); node (n,) its global ids
    batch_size          the anchors, rows 0 .. batch_size - 1
    y_positive (2, P)   (anchor row, positive row) per positive label
    y_negative (2, H)   (anchor row, hard negative row) per listed negative (absent without them)
    random_negative_index (K,)  the rows of the batch's random negatives (GiGL: a second loader)
    batch               the cgnn.LinkBatch it views
    """

    def __init__(self, b):
        self.batch = b
        self.x, self.edge_index, self.node = b.x, b.edge_index, b.n_id
        src = b.src_index
        A = int(src.max()) + 1 if src.numel() else 0
        if src.numel() and torch.unique(src).numel() != A:  # cgnn puts a batch's distinct anchors first
            raise RuntimeError("cgnn.gigl: a batch's anchors are not its first rows")
        self.batch_size = A
        self.y_positive = torch.stack([src, b.dst_pos_index])
        self.random_negative_index = b.dst_neg_index
        if b.hard_neg_ptr is not None and b.hard_neg_index.numel():
            # one entry per group of listed negatives (the pairs of a group share its range)
            ptr, cnt = b.hard_neg_ptr.to(torch.int64), b.hard_neg_count.to(torch.int64)
            starts, inv = torch.unique(ptr, return_inverse=True)
            first = torch.full((starts.numel(),), src.numel(), dtype=torch.int64)
            first.scatter_reduce_(0, inv, torch.arange(src.numel()), reduce="amin")
            counts = cnt[first]
            anchors = torch.repeat_interleave(src[first], counts)
            offs = torch.repeat_interleave(starts - (torch.cumsum(counts, 0) - counts), counts)
            rows = b.hard_neg_index[offs + torch.arange(int(counts.sum()))]
            self.y_negative = torch.stack([anchors, rows])

    def __repr__(self):
        return (f"ABLPBatch(nodes={self.node.numel()}, batch_size={self.batch_size}, "
                f"positives={self.y_positive.shape[1]}, random_negatives={self.random_negative_index.numel()})")


class DistABLPLoader:
    """GiGL's DistABLPLoader over cgnn.LinkNeighborLoader: batch_size anchors of the split with
    all their positive labels (anchor batching), random_negative_batch_size random negatives drawn
    into the same subgraph, each rank its slice of the split (torch.distributed's rank and world
    when initialised). GiGL's process, channel and device arguments are accepted and unused
    (cgnn's sampler threads fill the batches in this process)."""

    def __init__(self, dataset, num_neighbors, input_nodes=None, batch_size=1, shuffle=False,
                 random_negative_batch_size=0, num_workers=2, seed=42, exclude_seed_edges=True,
                 drop_last=False, **_gigl_only):
        rank, world = _slice(dataset)
        self.loader = LinkNeighborLoader(dataset, num_neighbors, batch_size=batch_size, split=_split(input_nodes),
                                         num_negatives=random_negative_batch_size,
                                         exclude_seed_edges=exclude_seed_edges, anchor_batching=True,
                                         shuffle=shuffle, drop_last=drop_last, seed=seed,
                                         num_workers=max(1, int(num_workers)), rank=rank, world_size=world)

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for b in self.loader:
            yield ABLPBatch(b)

    def shutdown(self):
        self.loader = None


class DistNeighborLoader:
    """GiGL's DistNeighborLoader for node batches of a split (cgnn.NeighborLoader)."""

    def __init__(self, dataset, num_neighbors, input_nodes=None, batch_size=1, shuffle=False, num_workers=2,
                 seed=42, **_gigl_only):
        rank, world = _slice(dataset)
        self.loader = NeighborLoader(dataset, num_neighbors, batch_size=batch_size, split=_split(input_nodes),
                                     shuffle=shuffle, seed=seed, num_workers=max(1, int(num_workers)), rank=rank,
                                     world_size=world)

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for b in self.loader:
            b.node = b.n_id
            yield b

    def shutdown(self):
        self.loader = None


class InfiniteIterator:
    """GiGL's InfiniteIterator: the loader's epochs one after the other."""

    def __init__(self, iterable):
        self._iterable = iterable
        self._it = iter(iterable)

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._it)
        except StopIteration:
            self._it = iter(self._iterable)
            return next(self._it)


def parse_fanout(fanout):
    """'[10, 10]' -> [10, 10] (GiGL's parse_fanout, homogeneous form)."""
    v = json.loads(fanout) if isinstance(fanout, str) else fanout
    if not isinstance(v, list) or not all(isinstance(x, int) for x in v):
        raise ValueError(f"num_neighbors: {fanout!r}: expected a list of integers such as '[10, 10]'")
    return v


class UriFactory:
    @staticmethod
    def create_uri(uri):
        return _path(uri)


def _write_guarded(uri, write):
    """Writes an output through write(temporary path), then renames it into place: never half a
    file, and never over an input of the job, refused with ValueError naming both before
    anything is touched (as cgnn train's output guard): the task and resource configs (the
    ones read here and GiGL's GIGL_*_CONFIG_URI), and every file of a dataset opened here."""
    path = _path(uri)
    real = os.path.realpath(path)
    configs = set(_configs) | {_path(os.environ[v]) for v in ("GIGL_TASK_CONFIG_URI", "GIGL_RESOURCE_CONFIG_URI")
                               if os.environ.get(v)}
    for c in configs:
        if os.path.realpath(c) == real:
            raise ValueError(f"{path}: this output is the config {c}, an input of the job: name another file")
    for uri_ in _datasets:
        d = os.path.realpath(uri_ if os.path.isdir(uri_) else os.path.dirname(os.path.abspath(uri_)))
        if real == d or real.startswith(d + os.sep):
            raise ValueError(f"{path}: this output is inside the dataset {uri_} (an input of the job): name a "
                             "file outside it")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_state_dict(model, save_to_path_uri):
    """torch.save(model.state_dict()) to a path (its folder created), as GiGL's save_state_dict;
    guarded (_write_guarded)."""
    state = model.state_dict()
    _write_guarded(save_to_path_uri, lambda p: torch.save(state, p))


def load_state_dict_from_uri(load_from_uri, device=None):
    return torch.load(_path(load_from_uri), map_location=device or "cpu")


def write_eval_metrics_to_uri(eval_metrics, eval_metrics_uri):
    """GiGL's eval metrics JSON (KFP metrics: name, numberValue, format RAW), as cgnn train writes
    it; eval_metrics: {name: value}; guarded (_write_guarded)."""
    metrics = [{"name": k, "numberValue": f"{float(v):.6g}", "format": "RAW"} for k, v in eval_metrics.items()]

    def write(p):
        with open(p, "w") as f:
            json.dump({"metrics": metrics}, f)
            f.write("\n")
    _write_guarded(eval_metrics_uri, write)


def is_distributed_available_and_initialized():
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def get_internal_ip_from_master_node():
    return os.environ.get("MASTER_ADDR", "127.0.0.1")


def get_free_ports_from_master_node(num_ports=1):
    """Ports free on rank 0's host, the same on every rank (a broadcast over the process group)."""
    ports = torch.zeros(num_ports, dtype=torch.int64)
    if torch.distributed.get_rank() == 0:
        socks = []
        for i in range(num_ports):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("", 0))
            socks.append(s)
            ports[i] = s.getsockname()[1]
        for s in socks:
            s.close()
    torch.distributed.broadcast(ports, src=0)
    return [int(p) for p in ports]


def get_available_device(local_process_rank=0):
    if torch.cuda.is_available():
        return torch.device(f"cuda:{local_process_rank % torch.cuda.device_count()}")
    return torch.device("cpu")


def to_homogeneous(x):
    return x


def Logger():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    return logging.getLogger("gigl")
