"""WLDN/rexgen-style bond-edit model: atom encoder, pairwise bond-order head, per-atom H/charge/product heads.

Encoder: GINE message passing inside molecules, then a Transformer over every atom of the reaction (reactants
and reagents), so that cross-molecule reactivity is visible to each atom. Heads:

* pair head over candidate pairs ``(i, j)``: symmetric features ``[h_i + h_j, h_i * h_j]`` plus embeddings
  of the current bond class and the topological distance -> 5 product bond classes;
* per atom: valence residual of the hydrogen change, formal-charge change, "ends up in a main product".

No file I/O here; losses and the cheap exact-edit metric live next to the model because the trainer and the
tests share them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from ..data.edit_dataset import H_ZERO, IGNORE, N_BOND_CLASSES, N_DIST, N_H_CLASSES, N_Q_CLASSES, Q_ZERO
from ..data.featurize import COMP_DIM
from .blocks import ConvStack, DenseSetAttention, mlp, scatter

DEFAULT_HPARAMS: dict[str, Any] = {
    "hidden": 128,
    "layers": 3,
    "attn_layers": 2,
    "heads": 4,
    "dropout": 0.1,
}


def edit_hparams(mcfg: dict[str, Any], x_dim: int, edge_dim: int) -> dict[str, Any]:
    """Model hyper-parameters from a config's ``model`` section plus the featurisation's dimensions."""
    hp = {k: type(v)(mcfg.get(k, v)) for k, v in DEFAULT_HPARAMS.items()}
    hp.update({"x_dim": int(x_dim), "edge_dim": int(edge_dim), "n_elements": COMP_DIM})
    return hp


class EditModel(nn.Module):
    def __init__(
        self,
        x_dim: int,
        edge_dim: int,
        n_elements: int = COMP_DIM,
        hidden: int = 128,
        layers: int = 3,
        attn_layers: int = 2,
        heads: int = 4,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.z_emb = nn.Embedding(n_elements, hidden)
        self.x_in = nn.Linear(x_dim, hidden)
        self.convs = ConvStack("gine", hidden, layers, edge_dim, heads, dropout)
        self.mix = DenseSetAttention(hidden, attn_layers, heads, dropout)
        self.cur_emb = nn.Embedding(N_BOND_CLASSES, hidden)
        self.dist_emb = nn.Embedding(N_DIST, hidden)
        self.pair_head = mlp(3 * hidden, hidden, N_BOND_CLASSES, dropout)
        self.h_head = mlp(2 * hidden, hidden, N_H_CLASSES, dropout)
        self.q_head = mlp(2 * hidden, hidden, N_Q_CLASSES, dropout)
        self.p_head = mlp(2 * hidden, hidden, 1, dropout)

    def forward(self, data: Any) -> dict[str, torch.Tensor]:
        batch = data.batch if getattr(data, "batch", None) is not None else data.z.new_zeros(data.z.size(0))
        n_graphs = int(data.num_graphs) if hasattr(data, "num_graphs") else 1
        h = self.z_emb(data.z) + self.x_in(data.x)
        h = self.convs(h, data.edge_index, data.edge_attr)
        g = self.mix(h, batch, n_graphs)
        ha = torch.cat([h, g], dim=-1)  # local and reaction-wide views of each atom
        i, j = data.pair_index
        pair = torch.cat([g[i] + g[j], g[i] * g[j], self.cur_emb(data.pair_cur) + self.dist_emb(data.pair_dist)], -1)
        return {
            "pair": self.pair_head(pair),
            "h": self.h_head(ha),
            "q": self.q_head(ha),
            "prod": self.p_head(ha).squeeze(-1),
        }


def build_edit_model(hp: dict[str, Any]) -> EditModel:
    return EditModel(**hp)


def _weighted_ce(logits: torch.Tensor, y: torch.Tensor, unchanged: torch.Tensor, w0: float) -> torch.Tensor:
    """Sum of cross-entropies with the "no change" targets weighted ``w0`` (rows with y == IGNORE skipped)."""
    keep = y != IGNORE
    if not bool(keep.any()):
        return logits.sum() * 0.0
    ce = F.cross_entropy(logits[keep], y[keep], reduction="none")
    w = torch.where(unchanged[keep], torch.full_like(ce, w0), torch.ones_like(ce))
    return (ce * w).sum()


def edit_losses(out: dict[str, torch.Tensor], data: Any, weights: dict[str, float] | None = None) -> dict[str, Any]:
    """Per-reaction sums of the edit losses (averaged over the batch's reactions).

    "No change" (a pair keeping its class, an atom keeping its valence residual/charge) is weighted
    ``nochange`` (default 0.2): almost every pair and atom is unchanged, and the reaction centre is the signal.
    """
    weights = weights or {}
    w0 = float(weights.get("nochange", 0.2))
    n = max(int(getattr(data, "num_graphs", 1)), 1)
    pair = _weighted_ce(out["pair"], data.pair_y, data.pair_y == data.pair_cur, w0) / n
    h = _weighted_ce(out["h"], data.h_y, data.h_y == H_ZERO, w0) / n
    q = _weighted_ce(out["q"], data.q_y, data.q_y == Q_ZERO, w0) / n
    keep = data.prod_y != IGNORE
    prod = F.binary_cross_entropy_with_logits(out["prod"][keep], data.prod_y[keep].float(), reduction="sum") / n
    total = pair + h + q + float(weights.get("prod", 0.5)) * prod
    return {"total": total, "pair": pair, "h": h, "q": q, "prod": prod}


@torch.no_grad()
def exact_edit_hits(out: dict[str, torch.Tensor], data: Any) -> torch.Tensor:
    """Per reaction, whether every argmax prediction (pairs, H residuals, charges, product atoms) is the gold."""
    n_graphs = int(getattr(data, "num_graphs", 1))
    batch = data.batch if getattr(data, "batch", None) is not None else data.z.new_zeros(data.z.size(0))
    pair_graph = batch[data.pair_index[0]]
    wrong = scatter((out["pair"].argmax(-1) != data.pair_y).long(), pair_graph, dim=0, dim_size=n_graphs)
    keep = data.h_y != IGNORE
    atom_wrong = (
        (out["h"].argmax(-1) != data.h_y)
        | (out["q"].argmax(-1) != data.q_y)
        | ((out["prod"] > 0).long() != data.prod_y)
    ) & keep
    wrong = wrong + scatter(atom_wrong.long(), batch, dim=0, dim_size=n_graphs)
    return wrong == 0
