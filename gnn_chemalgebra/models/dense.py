"""Padded per-group views of row-stacked tensors, without torch_geometric.

:func:`to_dense_batch` gives what ``torch_geometric.utils.to_dense_batch(x, group, batch_size=n)`` gives (values
copied, padding zeros, same shapes; ``tests/models/test_dense.py`` compares them), so the network imports no PyG
on its forward pass.
"""

from __future__ import annotations

import torch


def to_dense_batch(x: torch.Tensor, group: torch.Tensor, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` [N, ...] with ``group`` [N] (sorted, values < ``batch_size``) -> (``dense`` [B, L, ...], ``mask``
    [B, L]), L = the largest group; row i of group g sits at ``dense[g, i - first row of g]``, the rest is 0."""
    counts = torch.bincount(group, minlength=batch_size) if group.numel() else group.new_zeros(batch_size)
    width = int(counts.max()) if batch_size else 0
    starts = torch.cumsum(counts, 0) - counts  # first row of each group
    slot = group * width + (torch.arange(group.numel(), device=x.device) - starts[group])
    dense = x.new_zeros((batch_size * width, *x.shape[1:]))
    dense[slot] = x
    mask = torch.zeros(batch_size * width, dtype=torch.bool, device=x.device)
    mask[slot] = True
    return dense.view(batch_size, width, *x.shape[1:]), mask.view(batch_size, width)
