"""Swappable building blocks, chosen by name from the YAML config (chemprop-v2 style registries).

* ``CONVS``: message passing inside molecules (``gine``, ``gatv2``);
* ``BAG_MIXERS``: attention across all atoms of a bag (``transformer``, ``none``);
* ``SET_ENCODERS``: over the pooled molecule embeddings of a bag (``transformer``, ``deepsets``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch_geometric.nn import GATv2Conv, GINEConv
from torch_geometric.utils import to_dense_batch


def mlp(d_in: int, d_hidden: int, d_out: int, dropout: float = 0.0) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_hidden, d_out))


class ConvStack(nn.Module):
    """Residual message-passing layers with LayerNorm."""

    def __init__(self, kind: str, hidden: int, layers: int, edge_dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.convs = nn.ModuleList()
        for _ in range(layers):
            if kind == "gine":
                conv = GINEConv(mlp(hidden, hidden, hidden), edge_dim=edge_dim, train_eps=True)
            elif kind == "gatv2":
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
        from torch_geometric.utils import scatter

        mean = scatter(h, group, dim=0, dim_size=n_groups, reduce="mean")
        return self.norm(h + self.phi(torch.cat([h, mean[group]], dim=-1)))


class Identity(nn.Module):
    def __init__(self, *args: object) -> None:
        super().__init__()

    def forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        return h


BAG_MIXERS: dict[str, Callable[..., nn.Module]] = {"transformer": DenseSetAttention, "none": Identity}
SET_ENCODERS: dict[str, Callable[..., nn.Module]] = {"transformer": DenseSetAttention, "deepsets": DeepSets}
