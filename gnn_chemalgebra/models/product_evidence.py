"""Which molecules of a bag look made from others: coefficient-free composition evidence for the role head.

A Type-2 source usually shows products as excess terms. A product is what the reactants make, so its composition
is (nearly) the sum of one or two other molecules' minus a small leftover (water, HCl, a protecting group); those
molecules are then the reactants. Per molecule ``m`` of a bag, with ``S`` ranging over single molecules and pairs
of molecules other than ``m`` whose element counts (explicit H included, charge excluded) cover ``m``'s:

* ``made``: the smallest leftover ``atoms(sum_S - m) / atoms(m)``, over every covering ``S`` (the product side);
* ``maker``: the smallest such ratio over the explanations ``m`` takes part in (the reactant side).

Only within-molecule counts enter, never coefficients, so a Type-1 and a Type-2 line of one reaction give the same
evidence for the molecules they share. Features: whether an explanation within ``max_rel`` exists, and the ratio
(clamped to ``max_rel``, scaled to 0..1), for each side.
"""

from __future__ import annotations

import torch

from .dense import to_dense_batch

N_PRODUCT_FEATURES = 4


@torch.no_grad()
def product_evidence(
    mol_comp: torch.Tensor, mol_graph: torch.Tensor, n_graphs: int, charge_index: int, max_rel: float = 1.0
) -> torch.Tensor:
    """[M, 4] features: made (exists, ratio), maker (exists, ratio); see the module docstring."""
    comp = mol_comp.float()
    keep = comp.abs().sum(0) > 0
    keep[charge_index] = False
    comp = comp[:, keep].clamp(min=0)
    dense, mask = to_dense_batch(comp, mol_graph, batch_size=n_graphs)  # [B, N, C]
    B, N, C = dense.shape
    dev = dense.device
    atoms = dense.sum(-1).clamp(min=1.0)  # [B, N]
    ar = torch.arange(N, device=dev)
    eye = (ar[:, None] == ar[None, :])[None, :, :, None]
    sums = torch.where(eye, dense[:, :, None, :], dense[:, :, None, :] + dense[:, None, :, :])  # singles on diag
    upper = (ar[:, None] <= ar[None, :])[None]
    subset_ok = upper & mask[:, :, None] & mask[:, None, :]  # [B, N, N]
    inf = torch.tensor(float("inf"), device=dev)
    made = torch.full((B, N), float("inf"), device=dev)
    maker = torch.full((B, N), float("inf"), device=dev)
    for m in range(N):
        diff = sums - dense[:, m, None, None, :]  # [B, N, N, C]
        ok = subset_ok & (diff >= 0).all(-1) & (ar != m)[None, :, None] & (ar != m)[None, None, :]
        ok &= mask[:, m, None, None]
        rel = torch.where(ok, diff.sum(-1) / atoms[:, m, None, None], inf)  # [B, N, N]
        made[:, m] = rel.flatten(1).min(1).values
        maker = torch.minimum(maker, torch.minimum(rel.min(2).values, rel.min(1).values))
    feats = []
    for r in (made, maker):
        feats += [(r <= max_rel).float(), r.clamp(max=max_rel) / max_rel]
    return torch.stack(feats, -1)[mask]
