"""Your own PyTorch model on cgnn's batches: a plain-PyTorch GraphSAGE (no PyG needed) trained on
Cora with cgnn.NeighborLoader, as `cgnn train examples/cora_graphsage.yaml` trains its built-in one
(docs/PYTHON.md). Test accuracy about 0.81 with 200 epochs.

    PYTHONPATH=build/python python3 examples/python/train_cora.py [--epochs 200] [--seed 0]
"""
import argparse

import torch
import torch.nn.functional as F

import cgnn


class SAGE(torch.nn.Module):
    """PyG's GraphSAGE (SAGEConv, mean aggregation) in plain PyTorch, over PyG's edge_index."""

    def __init__(self, in_dim, hidden, out_dim, dropout=0.8):
        super().__init__()
        self.lin_l = torch.nn.ModuleList([torch.nn.Linear(in_dim, hidden), torch.nn.Linear(hidden, out_dim)])
        self.lin_r = torch.nn.ModuleList([torch.nn.Linear(in_dim, hidden, bias=False),
                                          torch.nn.Linear(hidden, out_dim, bias=False)])
        self.dropout = dropout

    def forward(self, x, edge_index):
        src, dst = edge_index
        for k in range(2):
            deg = torch.zeros(x.shape[0]).index_add_(0, dst, torch.ones(dst.numel())).clamp(min=1)
            mean = torch.zeros_like(x).index_add_(0, dst, x[src]) / deg[:, None]
            x = self.lin_l[k](mean) + self.lin_r[k](x)
            if k == 0:
                x = F.dropout(x.relu(), self.dropout, self.training)
        return x


def accuracy(model, dataset, split):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in cgnn.NeighborLoader(dataset, num_neighbors=[10, 10], batch_size=512, split=split,
                                         normalize_features=True):
            out = model(batch.x, batch.edge_index)[:batch.batch_size]
            correct += int((out.argmax(1) == batch.y).sum())
            total += batch.batch_size
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="data/cora")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    dataset = cgnn.OnDiskDataset(args.dataset)
    loader = cgnn.NeighborLoader(dataset, num_neighbors=[10, 10], batch_size=140, shuffle=True,
                                 normalize_features=True, seed=args.seed)
    model = SAGE(dataset.feature_dim(), 128, dataset.num_classes())
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        for batch in loader:  # x, y, edge_index, n_id, batch_size: PyG's fields, cgnn's memory
            opt.zero_grad()
            loss = F.cross_entropy(model(batch.x, batch.edge_index)[:batch.batch_size], batch.y)
            loss.backward()
            opt.step()
    print(f"epochs {args.epochs}: loss {loss.item():.4f}, validation accuracy {accuracy(model, dataset, 'validation'):.3f}, "
          f"test accuracy {accuracy(model, dataset, 'test'):.3f}")


if __name__ == "__main__":
    main()
