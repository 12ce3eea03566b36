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


def role_variance(
    role_probs: torch.Tensor, role_nu: torch.Tensor, mol_comp: torch.Tensor, mol_graph: torch.Tensor, n_graphs: int
) -> torch.Tensor:
    """Per bag ([B]): sum_m Var[nu_m] * ||comp_m||^2, the role head's share of E||residual||^2 - ||E residual||^2."""
    p, nu = role_probs.float(), role_nu.float()
    var = (p @ nu**2 - (p @ nu) ** 2).clamp(min=0.0)
    return scatter(var * (mol_comp.float() ** 2).sum(-1), mol_graph, dim=0, dim_size=n_graphs, reduce="sum")


def slot_variance(left_logits: torch.Tensor, left_bag: torch.Tensor, n_graphs: int) -> torch.Tensor:
    """Per bag ([B]): the summed variance of the leftover head's per-element count distributions."""
    p = left_logits.float().softmax(-1)
    k = torch.arange(p.size(-1), device=p.device, dtype=p.dtype)
    var = (p @ k**2 - (p @ k) ** 2).clamp(min=0.0)
    return scatter(var, left_bag, dim=0, dim_size=n_graphs, reduce="sum")


def vocab_variance(extra_probs: torch.Tensor, extra_comp: torch.Tensor) -> torch.Tensor:
    """Per bag ([B]): sum_v q_v (1 - q_v) ||comp_v||^2 for the by-product vocabulary head (``<unk>`` excluded)."""
    q = extra_probs.float().clone()
    q[:, 0] = 0.0
    return (q * (1 - q)) @ (extra_comp.float() ** 2).sum(-1)


def mass_balance_penalty(
    role_probs: torch.Tensor,
    role_nu: torch.Tensor,
    mol_comp: torch.Tensor,
    mol_graph: torch.Tensor,
    leftover_comp: torch.Tensor,
    main_comp: torch.Tensor,
    n_graphs: int,
    charge_index: int = 1,
    variance: torch.Tensor | None = None,
    weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean over bags of ``||E residual||^2 / atoms^2`` (the quadratic penalty of the equality constraint);
    ``weight`` ([B]): a weighted mean instead (0 leaves out a bag whose leftover is not labelled).

    ``variance`` ([B], from :func:`role_variance` + :func:`slot_variance` or :func:`vocab_variance`) turns it
    into ``E||residual||^2`` under the heads' independent distributions: zero only for a confident, consistent
    assignment, where the expectation alone is also met by a spread distribution with the right mean."""
    nu_comp = expected_nu_composition(role_probs, role_nu, mol_comp, mol_graph, n_graphs)
    r = balance_residual(nu_comp, leftover_comp, main_comp)
    scale = bag_size(mol_comp, mol_graph, n_graphs, charge_index)
    sq = (r**2).sum(-1)
    if variance is not None:
        sq = sq + variance
    if weight is None:
        return (sq / scale**2).mean()
    return (sq / scale**2 * weight).sum() / weight.sum().clamp(min=1.0)
