"""Swappable building blocks, chosen by name from the YAML config (chemprop-v2 style registries).

* ``CONVS``: message passing inside molecules (``gine``, ``gatv2``);
* ``BAG_MIXERS``: attention across all atoms of a bag (``transformer``, ``none``);
* ``SET_ENCODERS``: over the pooled molecule embeddings of a bag (``transformer``, ``deepsets``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch_geometric.utils import to_dense_batch


def mlp(d_in: int, d_hidden: int, d_out: int, dropout: float = 0.0) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_hidden, d_out))


def scatter(src: torch.Tensor, index: torch.Tensor, dim: int = 0, dim_size: int | None = None, reduce: str = "sum"):
    """Sum, mean or max of the rows of ``src`` grouped by ``index`` (PyG's ``scatter`` semantics and the very
    same torch kernels, so results are bit-identical; without PyG's per-call dispatch and its ONNX probe)."""
    dim = src.dim() + dim if dim < 0 else dim
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() else 0
    size = src.size()[:dim] + (dim_size,) + src.size()[dim + 1 :]
    shape = (1,) * dim + (-1,) + (1,) * (src.dim() - dim - 1)
    idx = index.view(shape).expand_as(src)
    if reduce in ("sum", "add"):
        return src.new_zeros(size).scatter_add_(dim, idx, src)
    if reduce == "mean":
        count = src.new_zeros(dim_size).scatter_add_(0, index, src.new_ones(src.size(dim))).clamp(min=1)
        out = src.new_zeros(size).scatter_add_(dim, idx, src)
        return out / count.view(shape).expand_as(out)
    if reduce in ("max", "min", "amax", "amin"):
        return src.new_zeros(size).scatter_reduce_(dim, idx, src, reduce=f"a{reduce[-3:]}", include_self=False)
    raise ValueError(f"unknown reduce {reduce!r}")


class GINE(nn.Module):
    """GINE message passing (Hu et al. 2020): ``nn((1 + eps) * x_i + sum_j relu(x_j + lin(e_ji)))``.

    Same parameters (``nn``, ``eps``, ``lin``), initialisation order and arithmetic as
    ``torch_geometric.nn.GINEConv(nn, edge_dim=..., train_eps=True)``, so checkpoints load unchanged and
    outputs are bit-identical, without PyG's per-instance TorchScript template (rendered at start-up) and
    per-call argument inspection."""

    def __init__(self, net: nn.Sequential, edge_dim: int) -> None:
        super().__init__()
        self.nn = net
        self.eps = nn.Parameter(torch.empty(1))
        self.lin = nn.Linear(edge_dim, net[0].in_features)
        for layer in self.nn:  # PyG's reset(): the MLP is initialised again, then eps, then lin
            if hasattr(layer, "reset_parameters"):
                layer.reset_parameters()
        self.eps.data.fill_(0.0)
        self.lin.reset_parameters()

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor) -> torch.Tensor:
        msg = (x.index_select(0, edge_index[0]) + self.lin(edge_attr)).relu()
        out = scatter(msg, edge_index[1], 0, x.size(0), "sum")
        return self.nn(out + (1 + self.eps) * x)


class ConvStack(nn.Module):
    """Residual message-passing layers with LayerNorm."""

    def __init__(self, kind: str, hidden: int, layers: int, edge_dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.convs = nn.ModuleList()
        for _ in range(layers):
            if kind == "gine":
                conv = GINE(mlp(hidden, hidden, hidden), edge_dim)
            elif kind == "gatv2":
                from torch_geometric.nn import GATv2Conv  # only this option needs PyG's layer zoo

                conv = GATv2Conv(hidden, hidden // heads, heads=heads, edge_dim=edge_dim, add_self_loops=False)
            else:
                raise ValueError(f"unknown conv {kind!r} (choose from {sorted(CONVS)})")
            self.convs.append(conv)
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.drop = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor) -> torch.Tensor:
        for conv, norm in zip(self.convs, self.norms, strict=False):
            h = norm(h + self.drop(torch.nn.functional.gelu(conv(h, edge_index, edge_attr))))
        return h


CONVS = {"gine", "gatv2"}


class DenseSetAttention(nn.Module):
    """Transformer encoder over variable-size groups (atoms of a bag, or molecules of a bag)."""

    def __init__(self, hidden: int, layers: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.layers = layers
        if layers > 0:
            layer = nn.TransformerEncoderLayer(
                hidden, heads, dim_feedforward=2 * hidden, dropout=dropout, batch_first=True, norm_first=True
            )
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        if self.layers == 0:
            return h
        dense, mask = to_dense_batch(h, group, batch_size=n_groups)
        out = self.enc(dense, src_key_padding_mask=~mask)
        return out[mask]


class DeepSets(nn.Module):
    """Each element plus an MLP of the group mean (permutation-equivariant)."""

    def __init__(self, hidden: int, layers: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.phi = mlp(2 * hidden, hidden, hidden, dropout)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        mean = scatter(h, group, dim=0, dim_size=n_groups, reduce="mean")
        return self.norm(h + self.phi(torch.cat([h, mean[group]], dim=-1)))


class Identity(nn.Module):
    def __init__(self, *args: object) -> None:
        super().__init__()

    def forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        return h


BAG_MIXERS: dict[str, Callable[..., nn.Module]] = {"transformer": DenseSetAttention, "none": Identity}
SET_ENCODERS: dict[str, Callable[..., nn.Module]] = {"transformer": DenseSetAttention, "deepsets": DeepSets}
