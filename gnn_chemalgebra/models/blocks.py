"""Swappable building blocks, chosen by name from the YAML config (chemprop-v2 style registries).

* ``CONVS``: message passing inside molecules (``gine``, ``gatv2``);
* ``BAG_MIXERS``: attention across all atoms of a bag (``transformer``, ``none``);
* ``SET_ENCODERS``: over the pooled molecule embeddings of a bag (``transformer``, ``deepsets``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .dense import to_dense_batch


def cheap_dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """Dropout whose mask comes from 16 random bits per element, drawn as 64-bit integers from torch's generator.

    ``torch.nn.functional.dropout`` on the CPU draws a float Bernoulli mask (``bernoulli_``), about four times the
    cost of the integer draws here; it was a sixth of a GNN training step. An element is dropped when its 16-bit
    draw is below ``round(p * 65536)``, so the rate is ``p`` to 1/65,536 (0.1 -> 0.100006) and the kept elements
    are scaled by the inverse of that realised rate (the expectation is kept exactly). Off the CPU, or outside
    training, this is ``torch.nn.functional.dropout``."""
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or p >= 1.0:
        return torch.nn.functional.dropout(x, p, training)
    cut = round(p * 65536)
    if cut == 0:
        return x
    bits = torch.empty((x.numel() + 3) // 4, dtype=torch.int64).random_(-(2**63), None)
    bits = bits.view(torch.int16)[: x.numel()].view(x.shape)
    # In place on the int16 draws (0/1 in int16) and then to x's dtype: the same mask as ``(bits >= cut - 32768)
    # .to(x.dtype)``, without the bool tensor (the bool comparison and bool -> float kernels are ~4x slower).
    keep = bits.ge_(cut - 32768).to(x.dtype).mul_(65536 / (65536 - cut))
    return x * keep


class CheapDropout(nn.Dropout):
    """``nn.Dropout`` with the mask of :func:`cheap_dropout` (no parameters: checkpoints are unchanged)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cheap_dropout(x, self.p, self.training)


def mlp(d_in: int, d_hidden: int, d_out: int, dropout: float = 0.0, cheap: bool = False) -> nn.Sequential:
    """Linear, GELU, dropout, Linear; ``cheap``: the dropout is :class:`CheapDropout` (same eval-mode maths)."""
    drop = CheapDropout(dropout) if cheap else nn.Dropout(dropout)
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(), drop, nn.Linear(d_hidden, d_out))


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
        if dim == 0 and src.requires_grad and torch.is_grad_enabled():
            return _ScatterExtreme.apply(src, index, dim_size, f"a{reduce[-3:]}")
        return src.new_zeros(size).scatter_reduce_(dim, idx, src, reduce=f"a{reduce[-3:]}", include_self=False)
    raise ValueError(f"unknown reduce {reduce!r}")


class _ScatterExtreme(torch.autograd.Function):
    """Row-group max/min over dim 0 with a cheaper backward than ``scatter_reduce_``'s autograd formula.

    Forward: the very ``scatter_reduce_`` call of :func:`scatter` (same values). Backward: each group's gradient
    split evenly over the rows that attain its extreme (ties share it), exactly as torch's formula splits it;
    that formula also works out a gradient for the zero-filled ``self`` and goes through ``scatter``/``gather``
    with expanded indices (~3x the time on the GNN's poolings). Only where a gradient is wanted; no-grad calls
    (prediction, validation) take the plain path."""

    @staticmethod
    def forward(ctx: object, src: torch.Tensor, index: torch.Tensor, dim_size: int, reduce: str) -> torch.Tensor:
        idx = index.view((-1,) + (1,) * (src.dim() - 1)).expand_as(src)
        out = src.new_zeros((dim_size,) + src.shape[1:]).scatter_reduce_(0, idx, src, reduce=reduce, include_self=False)
        ctx.save_for_backward(src, index, out)
        return out

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> tuple[torch.Tensor, None, None, None]:
        src, index, out = ctx.saved_tensors
        hit = (src == out.index_select(0, index)).to(src.dtype)  # rows that attain their group's extreme
        # torch's formula also counts the zero-filled ``self`` as a tie where the extreme is 0 (its share of the
        # gradient is dropped); kept, so gradients are bit-identical to the plain path's
        ties = (out == 0).to(out.dtype).index_add_(0, index, hit)
        return hit.mul_((grad / ties).index_select(0, index)), None, None, None


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

    def __init__(self, kind: str, hidden: int, layers: int, edge_dim: int, heads: int, dropout: float,
                 fast_train: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.convs = nn.ModuleList()
        for _ in range(layers):
            if kind == "gine":
                conv = GINE(mlp(hidden, hidden, hidden, cheap=fast_train), edge_dim)
            elif kind == "gatv2":
                from torch_geometric.nn import GATv2Conv  # only this option needs PyG's layer zoo

                conv = GATv2Conv(hidden, hidden // heads, heads=heads, edge_dim=edge_dim, add_self_loops=False)
            else:
                raise ValueError(f"unknown conv {kind!r} (choose from {sorted(CONVS)})")
            self.convs.append(conv)
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.drop = CheapDropout(dropout) if fast_train else nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor) -> torch.Tensor:
        for conv, norm in zip(self.convs, self.norms, strict=False):
            h = norm(h + self.drop(torch.nn.functional.gelu(conv(h, edge_index, edge_attr))))
        return h


CONVS = {"gine", "gatv2"}


class DenseSetAttention(nn.Module):
    """Transformer encoder over variable-size groups (atoms of a bag, or molecules of a bag).

    ``fast_train``: in training mode, :meth:`packed_forward` with :func:`cheap_dropout` masks; eval mode is the
    same either way."""

    def __init__(self, hidden: int, layers: int, heads: int, dropout: float, fast_train: bool = False) -> None:
        super().__init__()
        self.layers = layers
        self.fast_train = fast_train
        if layers > 0:
            layer = nn.TransformerEncoderLayer(
                hidden, heads, dim_feedforward=2 * hidden, dropout=dropout, batch_first=True, norm_first=True
            )
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        if self.layers == 0:
            return h
        if self.training and self.fast_train:
            return self.packed_forward(h, group, n_groups)
        dense, mask = to_dense_batch(h, group, batch_size=n_groups)
        out = self.enc(dense, src_key_padding_mask=~mask)
        return out[mask]

    def packed_forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        """The encoder's maths on the real rows only (training path).

        ``nn.TransformerEncoder`` over the padded ``[groups, longest, hidden]`` tensor runs its projections,
        feed-forward, norms and dropout masks over every padding row too (about half the rows of a bag batch);
        here they run on the ``[rows, hidden]`` tensor and only the attention itself goes through the padded
        layout (padding keys masked, as ``src_key_padding_mask`` does). Same parameters and the same function of
        them for the real rows; dropout draws fewer numbers, so a training run's random stream differs. Eval
        mode (prediction, validation) keeps the padded path above and its exact numbers."""
        counts = torch.bincount(group, minlength=n_groups)
        longest = int(counts.max()) if counts.numel() else 0
        # row -> its slot in the flattened [groups * longest] layout (rows of a group are contiguous, in order)
        slot = group * longest + torch.arange(h.size(0), device=h.device) - (torch.cumsum(counts, 0) - counts)[group]
        pad = torch.ones(n_groups * longest, dtype=torch.bool, device=h.device)
        pad[slot] = False
        # additive key mask, one row per (head, group) attention matrix (head-major, as _packed_layer lays them
        # out); baddbmm broadcasts it over the query rows
        heads = self.enc.layers[0].self_attn.num_heads
        bias = torch.zeros(pad.shape, dtype=h.dtype, device=h.device).masked_fill_(pad, float("-inf"))
        bias = bias.view(1, n_groups, 1, longest).expand(heads, -1, -1, -1).reshape(heads * n_groups, 1, longest)
        for layer in self.enc.layers:
            h = _packed_layer(layer, h, slot, n_groups, longest, bias)
        return h if self.enc.norm is None else self.enc.norm(h)


def _packed_layer(layer: nn.TransformerEncoderLayer, x: torch.Tensor, slot: torch.Tensor, n_groups: int,
                  longest: int, bias: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """One ``nn.TransformerEncoderLayer`` (``norm_first``, ``batch_first``) on packed rows.

    The q/k/v projections of the real rows are written straight into a head-major padded layout
    ``[3 * heads, groups * longest, head_dim]``, so q, k and v are contiguous views (one batched matrix per head
    and group, no reshape copies), and the 1/sqrt(head_dim) scale is the ``alpha`` of ``baddbmm``."""
    sa = layer.self_attn
    hidden, heads = x.size(-1), sa.num_heads
    hd = hidden // heads
    y = layer.norm1(x) if layer.norm_first else x
    qkv = torch.nn.functional.linear(y, sa.in_proj_weight, sa.in_proj_bias)  # [rows, 3 * hidden]
    dense = qkv.new_zeros(3 * heads, n_groups * longest, hd)
    dense = dense.index_copy_(1, slot, qkv.view(-1, 3 * heads, hd).transpose(0, 1))
    q, k, v = dense.view(3, heads * n_groups, longest, hd).unbind(0)
    scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=hd**-0.5)  # [heads * groups, longest, longest]
    train = layer.training
    weights = cheap_dropout(scores.softmax(-1), sa.dropout, train)
    att = torch.bmm(weights, v).view(heads, n_groups * longest, hd).index_select(1, slot)  # [heads, rows, hd]
    att = att.transpose(0, 1).reshape(-1, hidden)
    x = x + cheap_dropout(
        torch.nn.functional.linear(att, sa.out_proj.weight, sa.out_proj.bias), layer.dropout1.p, train
    )
    if not layer.norm_first:
        x = layer.norm1(x)
    y = layer.norm2(x) if layer.norm_first else x
    y = cheap_dropout(layer.activation(layer.linear1(y)), layer.dropout.p, train)
    x = x + cheap_dropout(layer.linear2(y), layer.dropout2.p, train)
    return x if layer.norm_first else layer.norm2(x)


class DeepSets(nn.Module):
    """Each element plus an MLP of the group mean (permutation-equivariant)."""

    def __init__(self, hidden: int, layers: int, heads: int, dropout: float, fast_train: bool = False) -> None:
        super().__init__()
        self.phi = mlp(2 * hidden, hidden, hidden, dropout, cheap=fast_train)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        mean = scatter(h, group, dim=0, dim_size=n_groups, reduce="mean")
        return self.norm(h + self.phi(torch.cat([h, mean[group]], dim=-1)))


class Identity(nn.Module):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__()

    def forward(self, h: torch.Tensor, group: torch.Tensor, n_groups: int) -> torch.Tensor:
        return h


BAG_MIXERS: dict[str, Callable[..., nn.Module]] = {"transformer": DenseSetAttention, "none": Identity}
SET_ENCODERS: dict[str, Callable[..., nn.Module]] = {"transformer": DenseSetAttention, "deepsets": DeepSets}
