"""GiGL's example link-prediction model in plain PyTorch: examples/link_prediction/models.py's
init_example_gigl_homogeneous_model with the classes it builds on (GiGL fee4ba5, MIT licence,
Copyright 2025 Snap Inc.), because GiGL and PyG are not Debian packages:

  GraphSAGE              gigl.src.common.models.pyg.homogeneous.GraphSAGE with its defaults:
                         PyG SAGEConv layers (mean aggregation; lin_l with bias on the neighbours'
                         mean, lin_r without on the node), ReLU between layers, the output
                         L2-normalised (should_l2_normalize_embedding_layer_output)
  LinkPredictionDecoder  the inner-product decoder
  LinkPredictionGNN      gigl.nn.LinkPredictionGNN (_encoder / _decoder, to_ddp, unwrap_from_ddp)
  RetrievalLoss          gigl.nn.RetrievalLoss, as written there

The state_dict keys are GiGL's (_encoder.conv_layers.L.lin_l.weight, ...), so a checkpoint of
this model loads into GiGL's with PyG installed, and the other way round.
"""
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel


class SAGEConv(nn.Module):
    """PyG's SAGEConv (aggr='mean', root_weight=True, normalize=False): out_i = lin_l(mean_j x_j) +
    lin_r(x_i) over the edges j -> i of edge_index (2, E) = [sources; targets]."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_l = nn.Linear(in_channels, out_channels, bias=True)
        self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        deg = torch.zeros(x.shape[0], dtype=x.dtype).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        return self.lin_l(agg / deg.clamp(min=1).unsqueeze(1)) + self.lin_r(x)


class GraphSAGE(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, edge_dim=None, num_layers=2, conv_kwargs=None,
                 should_l2_normalize_embedding_layer_output=False):
        super().__init__()
        if edge_dim:
            raise ValueError("GraphSAGE: edge features are not supported by this stand-in (GiGL's SAGEConv "
                             "ignores them too)")
        dims = [in_dim] + [hid_dim] * (num_layers - 1) + [out_dim]
        self.conv_layers = nn.ModuleList(SAGEConv(dims[i], dims[i + 1]) for i in range(num_layers))
        self.should_l2_normalize_embedding_layer_output = should_l2_normalize_embedding_layer_output

    def forward(self, data, device=None):
        x, edge_index = data.x, data.edge_index
        for i, conv in enumerate(self.conv_layers):
            x = conv(x, edge_index)
            if i < len(self.conv_layers) - 1:
                x = F.relu(x)
        if self.should_l2_normalize_embedding_layer_output:
            x = F.normalize(x, p=2, dim=-1)
        return x


class LinkPredictionDecoder(nn.Module):
    def forward(self, query_embeddings, candidate_embeddings):
        return torch.mm(query_embeddings, candidate_embeddings.t())


class LinkPredictionGNN(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self._encoder = encoder
        self._decoder = decoder

    def forward(self, data, device=None, output_node_types=None):
        return self._encoder(data=data, device=device)

    def decode(self, query_embeddings, candidate_embeddings):
        return self._decoder(query_embeddings=query_embeddings, candidate_embeddings=candidate_embeddings)

    @property
    def encoder(self):
        return self._encoder

    @property
    def decoder(self):
        return self._decoder

    def to_ddp(self, device, find_unused_encoder_parameters=False):
        device = device or torch.device("cpu")
        self._encoder = DistributedDataParallel(self._encoder.to(device),
                                                device_ids=[device] if device.type != "cpu" else None,
                                                find_unused_parameters=find_unused_encoder_parameters)
        if any(p.requires_grad for p in self._decoder.parameters()):
            self._decoder = DistributedDataParallel(self._decoder.to(device),
                                                    device_ids=[device] if device.type != "cpu" else None)
        else:
            self._decoder = self._decoder.to(device)
        return self

    def unwrap_from_ddp(self):
        enc = self._encoder.module if isinstance(self._encoder, DistributedDataParallel) else self._encoder
        dec = self._decoder.module if isinstance(self._decoder, DistributedDataParallel) else self._decoder
        return LinkPredictionGNN(encoder=enc, decoder=dec)


class RetrievalLoss(nn.Module):
    """gigl.nn.RetrievalLoss: cross-entropy of each query's scores against [its positive | the other
    candidates], with the scores of the query's duplicates (the same query id in another row, or
    the same candidate id as its positive: accidental hits) masked out."""

    def __init__(self, loss: Optional[nn.Module] = None, temperature: Optional[float] = None,
                 remove_accidental_hits: bool = False):
        super().__init__()
        self._loss = loss if loss is not None else nn.CrossEntropyLoss(reduction="sum")
        self._temperature = temperature
        if self._temperature is not None and self._temperature < 1e-12:
            raise ValueError(f"The temperature is expected to be greater than 1e-12, however you provided "
                             f"{self._temperature}")
        self._remove_accidental_hits = remove_accidental_hits

    def _calculate_batch_retrieval_loss(self, scores, candidate_sampling_probability=None, query_ids=None,
                                        candidate_ids=None, device=torch.device("cpu")):
        num_queries, num_candidates = scores.shape[0], scores.shape[1]
        torch._assert(num_queries <= num_candidates,
                      "Number of queries should be less than or equal to number of candidates in a batch")
        labels = torch.eye(num_queries, num_candidates).to(device=device)
        duplicates = torch.zeros_like(labels).to(device=device)
        if self._temperature is not None:
            scores = scores / self._temperature
        if candidate_sampling_probability is not None:
            scores = scores - torch.log(torch.clamp(candidate_sampling_probability, min=1e-10)).type(scores.dtype)
        if query_ids is not None:
            duplicates = torch.maximum(duplicates, self._mask_by_query_ids(query_ids, num_queries, num_candidates,
                                                                           labels.dtype, device))
        if self._remove_accidental_hits:
            if candidate_ids is None:
                raise ValueError("When accidental hit removal is enabled, candidate ids must be supplied.")
            duplicates = torch.maximum(duplicates, self._mask_by_candidate_ids(candidate_ids, num_queries,
                                                                               labels.dtype, device))
        if query_ids is not None or self._remove_accidental_hits:
            scores = scores + (duplicates - labels) * torch.finfo(scores.dtype).min
        return self._loss(scores, target=labels)

    def _mask_by_query_ids(self, query_ids, num_queries, num_candidates, dtype, device=torch.device("cpu")):
        query_ids = torch.unsqueeze(query_ids, 1)
        duplicates = torch.eq(query_ids, query_ids.T).type(dtype)
        if num_queries < num_candidates:
            padding_zeros = torch.zeros((num_queries, num_candidates - num_queries), dtype=dtype).to(device=device)
            return torch.cat((duplicates, padding_zeros), dim=1)
        return duplicates

    def _mask_by_candidate_ids(self, candidate_ids, num_queries, dtype, device=torch.device("cpu")):
        positive_indices = torch.arange(num_queries).to(device=device)
        positive_candidate_ids = torch.gather(candidate_ids, 0, positive_indices).unsqueeze(1)
        all_candidate_ids = torch.unsqueeze(candidate_ids, 1)
        return torch.eq(positive_candidate_ids, all_candidate_ids.T).type(dtype)

    def forward(self, repeated_candidate_scores, candidate_ids, repeated_query_ids, device,
                candidate_sampling_probability=None):
        return self._calculate_batch_retrieval_loss(scores=repeated_candidate_scores,
                                                    candidate_sampling_probability=candidate_sampling_probability,
                                                    query_ids=repeated_query_ids, candidate_ids=candidate_ids,
                                                    device=device)


def init_example_gigl_homogeneous_model(node_feature_dim, edge_feature_dim, hid_dim=16, out_dim=16, num_layers=2,
                                        device=None, state_dict=None, wrap_with_ddp=False,
                                        find_unused_encoder_parameters=False):
    """examples/link_prediction/models.py's, but for the classes above and one order: a given
    state_dict is loaded before the DDP wrap (the saved keys are the unwrapped model's)."""
    encoder_model = GraphSAGE(in_dim=node_feature_dim, hid_dim=hid_dim, out_dim=out_dim,
                              edge_dim=edge_feature_dim if edge_feature_dim > 0 else None, num_layers=num_layers,
                              conv_kwargs={}, should_l2_normalize_embedding_layer_output=True)
    decoder_model = LinkPredictionDecoder()
    model = LinkPredictionGNN(encoder=encoder_model, decoder=decoder_model)
    if state_dict is not None:  # (before the DDP wrap: the saved keys are the unwrapped model's)
        model.load_state_dict(state_dict)
    if wrap_with_ddp:
        model = model.to_ddp(device=device, find_unused_encoder_parameters=find_unused_encoder_parameters)
    if device is None:
        device = torch.device("cpu")
    model.to(device)
    return model
