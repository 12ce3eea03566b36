"""Differentiable mass-balance penalty (vectorised; no Python loop over atoms or molecules).

Soft remainder per bag: R = - sum_m E[nu_m] * comp_m - sum_v q_v * comp_v, where E[nu_m] is the role head's
expected base-reaction coefficient of input molecule m and q_v the probability of by-product v (its composition
from the vocabulary; ``<unk>`` counts as empty). R is what the main product must be made of, so it may not be
negative in any element: penalty = mean over bags of (sum_e relu(-R_e) / atoms in the bag)^2. The net-charge
column is excluded (charges may be negative). A balanced hard assignment gives exactly zero.
"""

from __future__ import annotations

import torch
from torch_geometric.utils import scatter


def soft_remainder(
    role_probs: torch.Tensor,
    role_nu: torch.Tensor,
    mol_comp: torch.Tensor,
    mol_graph: torch.Tensor,
    extra_probs: torch.Tensor,
    extra_comp: torch.Tensor,
    n_graphs: int,
) -> torch.Tensor:
    e_nu = role_probs @ role_nu  # [M]
    r = scatter(-e_nu[:, None] * mol_comp, mol_graph, dim=0, dim_size=n_graphs, reduce="sum")
    q = extra_probs.clone()
    q[:, 0] = 0.0  # <unk>: composition unknown
    return r - q @ extra_comp


def mass_balance_penalty(
    role_probs: torch.Tensor,
    role_nu: torch.Tensor,
    mol_comp: torch.Tensor,
    mol_graph: torch.Tensor,
    extra_probs: torch.Tensor,
    extra_comp: torch.Tensor,
    n_graphs: int,
    charge_index: int = 1,
) -> torch.Tensor:
    r = soft_remainder(role_probs, role_nu, mol_comp, mol_graph, extra_probs, extra_comp, n_graphs)
    keep = torch.ones(r.size(1), dtype=torch.bool, device=r.device)
    keep[charge_index] = False
    deficit = torch.relu(-r[:, keep]).sum(-1)
    scale = scatter(mol_comp[:, keep].sum(-1), mol_graph, dim=0, dim_size=n_graphs, reduce="sum").clamp(min=1.0)
    return ((deficit / scale) ** 2).mean()
