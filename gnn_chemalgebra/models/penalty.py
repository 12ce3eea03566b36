"""Differentiable mass balance as the linear constraint the decoder obeys (vectorised; no Python loops).

The decoder writes ``nu`` from the role head and the new products from the leftover head; the main product is
what remains. Mass balance of the base reaction is one linear equality per bag and composition column
(elements with explicit hydrogens, and the net charge):

    sum_m E[nu_m] * comp_m  +  E[leftover composition]  +  comp(main product)  =  0

``E[nu_m]`` is the role head's expected coefficient (negative = consumed, positive = product already present),
the leftover composition is the leftover head's expectation (per-element count classes, or the by-product
vocabulary head's probabilities times the vocabulary compositions), and the main product's composition is the
product side (the gold label in training). The penalty is the squared residual scaled by the bag's size, so a
consistent hard assignment gives exactly zero and every departure -- too little consumed, too much, a wrong
leftover -- costs, with gradients into both heads.
"""

from __future__ import annotations

import torch

from .blocks import scatter


def expected_nu_composition(
    role_probs: torch.Tensor, role_nu: torch.Tensor, mol_comp: torch.Tensor, mol_graph: torch.Tensor, n_graphs: int
) -> torch.Tensor:
    """``sum_m E[nu_m] * comp_m`` per bag ([B, C]): consumed molecules count negative, present products positive."""
    e_nu = role_probs.float() @ role_nu.float()  # [M]
    return scatter(e_nu[:, None] * mol_comp.float(), mol_graph, dim=0, dim_size=n_graphs, reduce="sum")


def expected_leftover_slots(
    left_logits: torch.Tensor,
    left_bag: torch.Tensor,
    left_elem: torch.Tensor,
    n_graphs: int,
    comp_dim: int,
    charge_index: int,
    charge_shift: int,
) -> torch.Tensor:
    """Expected leftover composition ([B, C]) from the per-(bag, element) count-class head (class = count; the
    charge column's class is shifted by ``charge_shift``)."""
    p = left_logits.float().softmax(-1)
    counts = p @ torch.arange(p.size(-1), device=p.device, dtype=p.dtype)  # [S]
    counts = counts - charge_shift * (left_elem == charge_index).to(counts.dtype)
    out = torch.zeros(n_graphs * comp_dim, device=p.device, dtype=p.dtype)
    out = out.index_add(0, left_bag * comp_dim + left_elem, counts)
    return out.view(n_graphs, comp_dim)


def expected_vocab_leftover(extra_probs: torch.Tensor, extra_comp: torch.Tensor) -> torch.Tensor:
    """Expected by-product composition ([B, C]) under the vocabulary head; ``<unk>`` (index 0) counts as empty."""
    q = extra_probs.float().clone()
    q[:, 0] = 0.0
    return q @ extra_comp.float()


def balance_residual(nu_comp: torch.Tensor, leftover_comp: torch.Tensor, main_comp: torch.Tensor) -> torch.Tensor:
    """Left-hand side of the balance equality per bag and column; zero when the reaction balances."""
    return nu_comp + leftover_comp + main_comp.float()


def bag_size(mol_comp: torch.Tensor, mol_graph: torch.Tensor, n_graphs: int, charge_index: int) -> torch.Tensor:
    """Atoms (explicit H included) over the bag's distinct molecules: the scale that makes bags comparable."""
    keep = torch.ones(mol_comp.size(1), dtype=torch.bool, device=mol_comp.device)
    keep[charge_index] = False
    atoms = mol_comp.float()[:, keep].abs().sum(-1)
    return scatter(atoms, mol_graph, dim=0, dim_size=n_graphs, reduce="sum").clamp(min=1.0)


def mass_balance_penalty(
    role_probs: torch.Tensor,
    role_nu: torch.Tensor,
    mol_comp: torch.Tensor,
    mol_graph: torch.Tensor,
    leftover_comp: torch.Tensor,
    main_comp: torch.Tensor,
    n_graphs: int,
    charge_index: int = 1,
) -> torch.Tensor:
    """Mean over bags of ``||residual||^2 / atoms^2`` (the quadratic penalty of the equality constraint)."""
    nu_comp = expected_nu_composition(role_probs, role_nu, mol_comp, mol_graph, n_graphs)
    r = balance_residual(nu_comp, leftover_comp, main_comp)
    scale = bag_size(mol_comp, mol_graph, n_graphs, charge_index)
    return ((r**2).sum(-1) / scale**2).mean()
