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

from ..data.edit_dataset import H_ZERO, IGNORE, N_BOND_CLASSES, N_DIST, N_H_CLASSES, N_Q_CLASSES, NONE, Q_ZERO
from ..data.featurize import COMP_DIM
from .blocks import ConvStack, DenseSetAttention, cheap_dropout, mlp, scatter

# Pairs whose pair-head rows are computed together at inference (:meth:`EditModel._pair_logits`): about 32 MB of
# temporaries with hidden 128, which the allocator reuses from chunk to chunk (larger chunks are fresh pages each
# time: 32,768 pairs cost six times the system time on a 2,000-atom chain, for the same user time).
PAIR_CHUNK = 8_192

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
        fast_train: bool = False,
    ) -> None:
        super().__init__()
        # fast_train (training mode only; no parameters, so checkpoints and eval-mode maths are unchanged): the
        # Transformer on packed rows with attention in size blocks (:meth:`_mix_packed`) and the 16-bit dropout
        # masks of blocks.cheap_dropout everywhere. The same function; the random stream of dropout differs.
        self.fast_train = fast_train
        self.z_emb = nn.Embedding(n_elements, hidden)
        self.x_in = nn.Linear(x_dim, hidden)
        self.convs = ConvStack("gine", hidden, layers, edge_dim, heads, dropout, fast_train=fast_train)
        self.mix = DenseSetAttention(hidden, attn_layers, heads, dropout)
        self.cur_emb = nn.Embedding(N_BOND_CLASSES, hidden)
        self.dist_emb = nn.Embedding(N_DIST, hidden)
        self.pair_head = mlp(3 * hidden, hidden, N_BOND_CLASSES, dropout, cheap=fast_train)
        self.h_head = mlp(2 * hidden, hidden, N_H_CLASSES, dropout, cheap=fast_train)
        self.q_head = mlp(2 * hidden, hidden, N_Q_CLASSES, dropout, cheap=fast_train)
        self.p_head = mlp(2 * hidden, hidden, 1, dropout, cheap=fast_train)

    def forward(self, data: Any, pair_sel: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """Logits of every candidate pair (``pair_sel``: of those candidate positions only) and every atom."""
        batch = data.batch if getattr(data, "batch", None) is not None else data.z.new_zeros(data.z.size(0))
        n_graphs = int(data.num_graphs) if hasattr(data, "num_graphs") else 1
        h = self.z_emb(data.z) + self.x_in(data.x)
        h = self.convs(h, data.edge_index, data.edge_attr)
        if self.training and self.fast_train and self.mix.layers > 0:
            g = self._mix_packed(h, batch, n_graphs)
        else:
            g = self.mix(h, batch, n_graphs)
        ha = torch.cat([h, g], dim=-1)  # local and reaction-wide views of each atom
        i, j = data.pair_index
        cur, dist = data.pair_cur, data.pair_dist
        if pair_sel is not None:
            i, j, cur, dist = i[pair_sel], j[pair_sel], cur[pair_sel], dist[pair_sel]
        if self.training:
            pair = self._pair_logits_factored(g, i, j, cur, dist)
        else:  # inference and validation: the arithmetic the bundled checkpoints were scored with
            pair = self._pair_logits(g, i, j, cur, dist)
        return {
            "pair": pair,
            "h": self.h_head(ha),
            "q": self.q_head(ha),
            "prod": self.p_head(ha).squeeze(-1),
        }

    def _pair_logits(
        self,
        g: torch.Tensor,
        i: torch.Tensor,
        j: torch.Tensor,
        cur: torch.Tensor,
        dist: torch.Tensor,
        chunk: int | None = None,
    ) -> torch.Tensor:
        """``pair_head(_pair_input(...))`` (eval) over at most ``chunk`` pairs at a time (default
        :data:`PAIR_CHUNK`), written into one output tensor.

        Pairs grow with the square of the reactant atoms and each holds a ``3 * hidden`` input row and a
        ``hidden`` activation row (about 4 KB in float32 with hidden 128): all 2 million pairs of a 2,000-atom
        molecule at once are 8 GB, one chunk of 8,192 pairs 32 MB. Every layer of the head works row by row;
        the chunks are of equal size (within one pair), so none is a sliver of a few rows, which a matrix
        library may multiply by another kernel with other rounding: on CPU the chunked logits are those of the
        single call, bit for bit (tested). A batch within one chunk takes the single call."""
        chunk = PAIR_CHUNK if chunk is None else chunk
        if chunk < 1:
            raise ValueError(f"pair chunk must be positive, got {chunk}")
        table = self._pair_table()
        n = i.numel()
        if n <= chunk:
            return self.pair_head(self._pair_input(g, i, j, cur, dist, table))
        parts = -(-n // chunk)
        size = -(-n // parts)
        out = g.new_empty(n, self.pair_head[-1].out_features)
        for s in range(0, n, size):
            e = min(s + size, n)
            out[s:e] = self.pair_head(self._pair_input(g, i[s:e], j[s:e], cur[s:e], dist[s:e], table))
        return out

    def _pair_table(self) -> torch.Tensor:
        """Every (current class, distance class) embedding sum, row ``cur * N_DIST + dist``."""
        return (self.cur_emb.weight.unsqueeze(1) + self.dist_emb.weight.unsqueeze(0)).flatten(0, 1)

    def _pair_input(
        self,
        g: torch.Tensor,
        i: torch.Tensor,
        j: torch.Tensor,
        cur: torch.Tensor,
        dist: torch.Tensor,
        table: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The pair head's input ``torch.cat([g[i] + g[j], g[i] * g[j], cur_emb(cur) + dist_emb(dist)], -1)``
        (eval) with each atom row gathered once and the embedding sums read from the table of every (current
        class, distance) sum (:meth:`_pair_table`, computed here unless given): the same element-wise sums and
        products, so the same bits, for less work."""
        gi, gj = g.index_select(0, i), g.index_select(0, j)
        table = self._pair_table() if table is None else table
        return torch.cat([gi + gj, gi * gj, table.index_select(0, cur * self.dist_emb.num_embeddings + dist)], -1)

    def _pair_logits_factored(
        self, g: torch.Tensor, i: torch.Tensor, j: torch.Tensor, cur: torch.Tensor, dist: torch.Tensor
    ) -> torch.Tensor:
        """The pair head with its first linear layer split over the three blocks of its input (training).

        ``W [g_i + g_j, g_i * g_j, e_cur + e_dist] + b = (W_s g)_i + (W_s g)_j + W_p (g_i * g_j)
        + (W_e E_cur)[cur] + (W_e E_dist + b)[dist]``: the sum and embedding blocks are multiplied once per
        atom or table row instead of once per pair, so the per-pair matrix product is a third as wide. The
        same function; only the rounding differs, so eval mode keeps the concatenated form."""
        lin = self.pair_head[0]
        w_sum, w_prod, w_emb = lin.weight.split(g.size(1), dim=1)
        per_atom = g @ w_sum.t()
        t_cur = self.cur_emb.weight @ w_emb.t()
        t_dist = torch.addmm(lin.bias, self.dist_emb.weight, w_emb.t())
        # one row per (current class, distance class): a single gather per pair for both embeddings
        t_pair = (t_cur.unsqueeze(1) + t_dist.unsqueeze(0)).flatten(0, 1)
        base = per_atom.index_select(0, i) + per_atom.index_select(0, j)
        base = base + t_pair.index_select(0, cur * t_dist.size(0) + dist)
        pre = torch.addmm(base, g.index_select(0, i) * g.index_select(0, j), w_prod.t())
        for layer in self.pair_head[1:]:
            pre = layer(pre)
        return pre

    def _mix_packed(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        """``self.mix`` (pre-norm Transformer encoder over the atoms of each reaction) on packed rows (training).

        The padded path runs every linear layer, norm and dropout mask over ``[reactions, largest, hidden]``
        (a plain shuffled batch is about 60% padding) and attends over ``largest^2`` per reaction (90%
        padding). Here the rows are reordered by reaction size once; projections, feed-forward, norms and
        dropout run on the real rows only, and attention runs per block of reactions of similar size
        (:func:`_size_blocks`), each padded to its own largest (padding keys masked). Same parameters, same
        function of them for every real row (tests: outputs and gradients against the padded path)."""
        order, back, size_blocks = _size_blocks(group, n_groups, h.dtype)
        x = h.index_select(0, order)
        for layer in self.mix.enc.layers:
            train = layer.training
            att = _block_attention(layer.self_attn, layer.norm1(x), size_blocks, train)
            x = x + cheap_dropout(att, layer.dropout1.p, train)
            y = cheap_dropout(layer.activation(layer.linear1(layer.norm2(x))), layer.dropout.p, train)
            x = x + cheap_dropout(layer.linear2(y), layer.dropout2.p, train)
        x = x.index_select(0, back)
        return x if self.mix.enc.norm is None else self.mix.enc.norm(x)


# A reaction joins the attention block of the largest reaction not yet placed while its size is at least this
# share of that largest one: the padded attention of a block is then at most about twice its real entries.
BLOCK_SIZE_RATIO = 0.7


def _size_blocks(
    group: torch.Tensor, n_groups: int, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, list[tuple[int, int, int, int, torch.Tensor | None, torch.Tensor | None]]]:
    """Rows reordered by reaction size (largest first, stable), the inverse order, and the attention blocks.

    Each block is ``(first row, rows, reactions, longest, slot, bias)``: its rows are contiguous in the new
    order; ``slot`` places them in a ``[reactions * longest]`` layout and ``bias`` (``[reactions, 1, 1,
    longest]``, -inf on padding keys) masks the padding; both are None when the block has no padding."""
    counts = torch.bincount(group, minlength=n_groups)
    by_size = torch.argsort(counts, descending=True, stable=True)
    sizes = counts.index_select(0, by_size)
    rank = torch.repeat_interleave(torch.arange(n_groups, device=group.device), sizes)  # new row -> block rank
    first = torch.cumsum(sizes, 0) - sizes  # first new row of each ranked reaction
    within = torch.arange(rank.numel(), device=group.device) - first.index_select(0, rank)
    old_first = (torch.cumsum(counts, 0) - counts).index_select(0, by_size)
    order = old_first.index_select(0, rank) + within
    back = torch.empty_like(order)
    back[order] = torch.arange(order.numel(), device=group.device)
    size_list = sizes.tolist()
    size_blocks = []
    a, row = 0, 0
    while a < n_groups and size_list[a] > 0:
        longest, b = size_list[a], a
        while b < n_groups and size_list[b] > 0 and size_list[b] >= BLOCK_SIZE_RATIO * longest:
            b += 1
        n_rows = sum(size_list[a:b])
        slot = bias = None
        if n_rows < (b - a) * longest:
            slot = (rank[row : row + n_rows] - a) * longest + within[row : row + n_rows]
            bias = torch.full(((b - a) * longest,), float("-inf"), dtype=dtype, device=group.device)
            bias = bias.index_fill_(0, slot, 0.0).view(b - a, 1, 1, longest)
        size_blocks.append((row, n_rows, b - a, longest, slot, bias))
        a, row = b, row + n_rows
    return order, back, size_blocks


def _block_attention(
    sa: nn.MultiheadAttention,
    y: torch.Tensor,
    size_blocks: list[tuple[int, int, int, int, torch.Tensor | None, torch.Tensor | None]],
    train: bool,
) -> torch.Tensor:
    """``sa`` (batch-first self-attention, no masks but the padding) over rows grouped as :func:`_size_blocks`."""
    hidden, heads = y.size(-1), sa.num_heads
    d = hidden // heads
    qkv = F.linear(y, sa.in_proj_weight, sa.in_proj_bias)
    outs = []
    for row, n_rows, n, longest, slot, bias in size_blocks:
        part = qkv.narrow(0, row, n_rows)
        if slot is not None:
            part = part.new_zeros(n * longest, 3 * hidden).index_copy(0, slot, part)
        q, k, v = part.view(n, longest, 3, heads, d).permute(2, 0, 3, 1, 4).unbind(0)
        q = (q * d**-0.5).reshape(n * heads, longest, d)
        kt = k.reshape(n * heads, longest, d).transpose(1, 2)
        if bias is None:
            scores = torch.bmm(q, kt)
        else:
            scores = torch.baddbmm(bias.expand(-1, heads, longest, -1).reshape(n * heads, longest, longest), q, kt)
        weights = cheap_dropout(scores.softmax(-1), sa.dropout, train)
        att = torch.bmm(weights, v.reshape(n * heads, longest, d))
        att = att.view(n, heads, longest, d).transpose(1, 2).reshape(n * longest, hidden)
        outs.append(att if slot is None else att.index_select(0, slot))
    att = torch.cat(outs) if len(outs) > 1 else outs[0]
    return F.linear(att, sa.out_proj.weight, sa.out_proj.bias)


def build_edit_model(hp: dict[str, Any], fast_train: bool = False) -> EditModel:
    """The model of ``hp``; ``fast_train``: its training-mode fast path (not a hyper-parameter: eval is the same)."""
    return EditModel(**hp, fast_train=fast_train)


class EditEnsemble(nn.Module):
    """Several trained edit models read as one: the class heads (bond order, H residual, charge) average their
    log-probabilities (a renormalised geometric mean, which the decoder's log-softmax restores), the product
    head its logits. Members are independent runs or fine-tuned descendants of the same architecture's inputs;
    inference only."""

    def __init__(self, members: list[nn.Module]) -> None:
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one model")
        self.members = nn.ModuleList(members)

    def forward(self, batch: Any) -> dict[str, torch.Tensor]:
        outs = [m(batch) for m in self.members]
        avg = {k: torch.stack([F.log_softmax(o[k].float(), -1) for o in outs]).mean(0) for k in ("pair", "h", "q")}
        avg["prod"] = torch.stack([o["prod"].float() for o in outs]).mean(0)
        return avg


def _weighted_ce(
    logits: torch.Tensor, y: torch.Tensor, unchanged: torch.Tensor, w0: float, scale: torch.Tensor | None = None
) -> torch.Tensor:
    """Sum of cross-entropies with the "no change" targets weighted ``w0`` (rows with y == IGNORE skipped),
    each row further multiplied by ``scale`` when given."""
    keep = y != IGNORE
    if not bool(keep.any()):
        return logits.sum() * 0.0
    ce = F.cross_entropy(logits[keep], y[keep], reduction="none")
    w = torch.where(unchanged[keep], torch.full_like(ce, w0), torch.ones_like(ce))
    if scale is not None:
        w = w * scale[keep]
    return (ce * w).sum()


def sample_pairs(data: Any, keep: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Candidate positions scored in one training step, and the loss weight of each (unbiased subsampling).

    Every pair that is bonded in the reactants or changes is kept; the others (non-bonded pairs that stay
    non-bonded: most pairs, almost all of them easy) are kept with probability ``keep`` (the global torch RNG,
    seeded and checkpointed by the trainer) and weighted ``1 / keep``, so the expected pair loss is the loss
    over every pair. Inference still scores every pair."""
    cur = data.pair_cur
    easy = (cur == NONE) & (data.pair_y == NONE)
    if keep >= 1.0:
        return torch.arange(cur.numel(), device=cur.device), torch.ones(cur.numel(), device=cur.device)
    sel = (~easy | (torch.rand(cur.numel(), device=cur.device) < keep)).nonzero().squeeze(1)
    weight = torch.where(easy[sel], 1.0 / keep, 1.0)
    return sel, weight


def edit_losses(
    out: dict[str, torch.Tensor],
    data: Any,
    weights: dict[str, float] | None = None,
    pair_sel: torch.Tensor | None = None,
    pair_weight: torch.Tensor | None = None,
) -> dict[str, Any]:
    """Per-reaction sums of the edit losses (averaged over the batch's reactions).

    "No change" (a pair keeping its class, an atom keeping its valence residual/charge) is weighted
    ``nochange`` (default 0.2): almost every pair and atom is unchanged, and the reaction centre is the signal.
    ``pair_sel`` / ``pair_weight``: ``out["pair"]`` holds only those candidate positions, their rows weighted
    so (from :func:`sample_pairs`).
    """
    weights = weights or {}
    w0 = float(weights.get("nochange", 0.2))
    n = max(int(getattr(data, "num_graphs", 1)), 1)
    pair_y, pair_cur = data.pair_y, data.pair_cur
    if pair_sel is not None:
        pair_y, pair_cur = pair_y[pair_sel], pair_cur[pair_sel]
    pair = _weighted_ce(out["pair"], pair_y, pair_y == pair_cur, w0, pair_weight) / n
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
