"""Training losses: role CE + by-product BCE + leftover CE + learned-extent CE + naive coefficient CE + penalty."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from .blocks import scatter
from .penalty import (
    expected_leftover_slots,
    expected_vocab_leftover,
    mass_balance_penalty,
    role_variance,
    slot_variance,
    vocab_variance,
)

LEFT_CHARGE_SHIFT = 2  # leftover charge class = charge + 2 (models.gnn.CHARGE_SHIFT, data.dataset's labels)


def grouped_log_softmax(scores: torch.Tensor, group: torch.Tensor, n: int) -> torch.Tensor:
    mx = scatter(scores.detach(), group, dim=0, dim_size=n, reduce="max")
    ex = torch.exp(scores - mx[group])
    lse = torch.log(scatter(ex, group, dim=0, dim_size=n, reduce="sum").clamp(min=1e-30)) + mx
    return scores - lse[group]


def compute_losses(out: dict[str, torch.Tensor], batch: Any, model: Any, weights: dict[str, float]) -> dict:
    B = int(batch.num_graphs)
    role_logits = out["role_logits"].float()
    extra_logits = out["extra_logits"].float()
    # per-bag weight of the by-product/leftover labels: 0 on a roles-only line (gnnca data formula-extra), whose
    # leftover lies outside what the benchmark writes; the role loss reads every line
    w = getattr(batch, "w_left", None)
    w = w.float() if w is not None and bool((w != 1).any()) else None
    losses = {"role": F.cross_entropy(role_logits, batch.y_role)}
    if w is None:
        losses["extra"] = F.binary_cross_entropy_with_logits(extra_logits, batch.y_extra)
    else:
        bce = F.binary_cross_entropy_with_logits(extra_logits, batch.y_extra, reduction="none").mean(-1)
        losses["extra"] = (bce * w).sum() / w.sum().clamp(min=1.0)
    if "left_logits" in out and getattr(batch, "y_left", None) is not None:
        n_cls = out["left_logits"].size(-1)
        y = batch.y_left[out["left_bag"], out["left_elem"]].clamp(max=n_cls - 1)
        if w is None:
            losses["leftover"] = F.cross_entropy(out["left_logits"].float(), y)
        else:
            ws = w[out["left_bag"]]
            ce = F.cross_entropy(out["left_logits"].float(), y, reduction="none")
            losses["leftover"] = (ce * ws).sum() / ws.sum().clamp(min=1.0)
    if "ext_scores" in out:
        logp = grouped_log_softmax(out["ext_scores"].float(), batch.ext_graph, B)
        has = scatter(batch.ext_y, batch.ext_graph, dim=0, dim_size=B, reduce="sum")
        losses["extent"] = -(logp * batch.ext_y).sum() / has.sum().clamp(min=1.0)
    if "coef_logits" in out:
        losses["coef"] = F.cross_entropy(out["coef_logits"].float(), batch.y_coef)
        if (batch.y_newcoef >= 0).any():
            losses["newcoef"] = F.cross_entropy(out["newcoef_logits"].float(), batch.y_newcoef, ignore_index=-100)
    left_comp = predicted_leftover(out, batch, model, B)
    role_probs = role_logits.softmax(-1)
    variance = None
    if weights.get("mass_balance_variance"):
        variance = role_variance(role_probs, model.role_nu, batch.mol_comp, batch.mol_graph, B)
        if "left_logits" in out:
            variance = variance + slot_variance(out["left_logits"], out["left_bag"], B)
        else:
            variance = variance + vocab_variance(extra_logits.sigmoid(), model.extra_comp)
    losses["penalty"] = mass_balance_penalty(
        role_probs,
        model.role_nu,
        batch.mol_comp,
        batch.mol_graph,
        left_comp,
        gold_main_composition(batch, model.role_nu, model.charge_index, B),
        B,
        charge_index=model.charge_index,
        variance=variance,
        weight=w,
    )
    total = sum(v for k, v in losses.items() if k != "penalty") + weights.get("mass_balance", 0.0) * losses["penalty"]
    losses["total"] = total
    return losses


def predicted_leftover(out: dict[str, torch.Tensor], batch: Any, model: Any, n_graphs: int) -> torch.Tensor:
    """Expected composition of the non-main new products under the head the decoder reads: the per-element
    leftover head when the model has one, else the by-product vocabulary head."""
    if "left_logits" in out:
        C = batch.mol_comp.size(1)
        return expected_leftover_slots(
            out["left_logits"], out["left_bag"], out["left_elem"], n_graphs, C, model.charge_index, LEFT_CHARGE_SHIFT
        )
    return expected_vocab_leftover(out["extra_logits"].sigmoid(), model.extra_comp)


def gold_main_composition(batch: Any, role_nu: torch.Tensor, charge_index: int, n_graphs: int) -> torch.Tensor:
    """The product side of the constraint: the gold main product's composition ([B, C]).

    The labels fix it exactly -- the main product is the remainder of the gold base reaction (consumed inputs
    minus present products minus the gold leftover ``y_left``) -- so no extra label is needed."""
    comp = batch.mol_comp.float()
    nu_gold = role_nu.float()[batch.y_role]
    consumed = -scatter(nu_gold[:, None] * comp, batch.mol_graph, dim=0, dim_size=n_graphs, reduce="sum")
    left = batch.y_left.float().view(n_graphs, -1).clone()
    left[:, charge_index] -= LEFT_CHARGE_SHIFT
    return consumed - left
