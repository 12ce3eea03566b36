"""The mass-balance equality: zero on consistent gold, gradients that point toward balance, batched, in the loss."""

from __future__ import annotations

import pytest
import torch

from gnn_chemalgebra.algebra.roles import ROLE_NU
from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.dataset import BagDataset, ExtraVocab, load_examples, vocab_compositions, write_toy_variant
from gnn_chemalgebra.data.featurize import CHARGE_INDEX, COMP_DIM, ELEMENT_INDEX, Featurizer
from gnn_chemalgebra.models.gnn import BagGNNConfig, build_model
from gnn_chemalgebra.models.losses import compute_losses, gold_main_composition, predicted_leftover
from gnn_chemalgebra.models.penalty import (
    expected_leftover_slots,
    mass_balance_penalty,
    role_variance,
    slot_variance,
)

pytestmark = pytest.mark.unit

NU = torch.tensor(ROLE_NU, dtype=torch.float)
CONSUMED, SPECTATOR = ROLE_NU.index(-1), ROLE_NU.index(0)


def comp(**counts: int) -> torch.Tensor:
    v = torch.zeros(COMP_DIM)
    for k, n in counts.items():
        v[ELEMENT_INDEX[k]] = n
    return v


# Fischer esterification: acetic acid + ethanol (consumed), sulfuric acid (spectator) -> ethyl acetate + water.
ACID, ETOH, H2SO4 = comp(C=2, H=4, O=2), comp(C=2, H=6, O=1), comp(H=2, O=4, S=1)
ESTER, WATER = comp(C=4, H=8, O=2), comp(H=2, O=1)
MOL_COMP = torch.stack([ACID, ETOH, H2SO4])
GOLD = torch.tensor([CONSUMED, CONSUMED, SPECTATOR])


def half_and_half(row: int) -> torch.Tensor:
    """Gold logits, except molecule ``row``: equally 'consumed' and 'spectator', nothing else."""
    logits = torch.nn.functional.one_hot(GOLD, len(ROLE_NU)).float() * 50.0
    logits[row] = -50.0
    logits[row, CONSUMED] = logits[row, SPECTATOR] = 0.0
    return logits.requires_grad_()


def penalty_of(logits: torch.Tensor, leftover: torch.Tensor = WATER) -> torch.Tensor:
    graph = torch.zeros(3, dtype=torch.long)
    return mass_balance_penalty(logits.softmax(-1), NU, MOL_COMP, graph, leftover[None], ESTER[None], 1)


def test_zero_for_the_consistent_gold_assignment() -> None:
    hard = torch.nn.functional.one_hot(GOLD, len(ROLE_NU)).float() * 50.0
    assert penalty_of(hard).item() == pytest.approx(0.0, abs=1e-12)


def test_missing_reactant_is_pushed_toward_consumed() -> None:
    """Ethanol half consumed, half spectator: the product side is not covered; raising 'consumed' helps."""
    logits = half_and_half(1)
    pen = penalty_of(logits)
    pen.backward()
    assert pen.item() > 0
    assert logits.grad[1, CONSUMED] < 0 < logits.grad[1, SPECTATOR]


def test_excess_consumption_is_pushed_back() -> None:
    """Sulfuric acid half consumed: reactants exceed the products (the old deficit-only penalty missed this)."""
    logits = half_and_half(2)
    pen = penalty_of(logits)
    pen.backward()
    assert pen.item() > 0
    assert logits.grad[2, CONSUMED] > 0 > logits.grad[2, SPECTATOR]


def test_leftover_head_gets_the_right_gradient() -> None:
    """Leftover slots (H and O of the bag): predicting two waters' worth of H pushes the H count down."""
    left_elem = torch.tensor([ELEMENT_INDEX["H"], ELEMENT_INDEX["O"], CHARGE_INDEX])
    left_bag = torch.zeros(3, dtype=torch.long)
    left_logits = torch.full((3, 6), -30.0)
    left_logits[0, 4] = left_logits[1, 1] = left_logits[2, 2] = 30.0  # H4 O1, charge class 2 = neutral
    left_logits.requires_grad_()
    left = expected_leftover_slots(left_logits, left_bag, left_elem, 1, COMP_DIM, CHARGE_INDEX, 2)
    assert torch.allclose(left[0], comp(H=4, O=1), atol=1e-6)
    hard = torch.nn.functional.one_hot(GOLD, len(ROLE_NU)).float()
    pen = mass_balance_penalty(hard, NU, MOL_COMP, torch.zeros(3, dtype=torch.long), left, ESTER[None], 1)
    pen.backward()
    assert pen.item() > 0
    probs_grad = left_logits.grad[0]
    assert probs_grad[2] < probs_grad[4]  # descending the gradient moves mass from H4 toward H2


def test_variance_form_rejects_a_spread_assignment_with_the_right_mean() -> None:
    """Ethanol as half 'consumed twice', half 'spectator': E[nu] = -1 balances, E||residual||^2 does not."""
    graph = torch.zeros(3, dtype=torch.long)
    gold = torch.nn.functional.one_hot(GOLD, len(ROLE_NU)).float()
    spread = gold.clone()
    spread[1] = 0.0
    spread[1, ROLE_NU.index(-2)] = spread[1, SPECTATOR] = 0.5
    args = (NU, MOL_COMP, graph, WATER[None], ESTER[None], 1)
    assert mass_balance_penalty(spread, *args).item() == pytest.approx(0.0, abs=1e-9)
    var = role_variance(spread, NU, MOL_COMP, graph, 1)
    assert var.item() == pytest.approx(1.0 * float((ETOH**2).sum()))  # Var[nu] = 1 times ||comp||^2
    assert mass_balance_penalty(spread, *args, variance=var).item() > 0
    assert role_variance(gold, NU, MOL_COMP, graph, 1).item() == 0.0
    sharp = torch.full((2, 6), -40.0)
    sharp[0, 2] = sharp[1, 1] = 40.0
    assert slot_variance(sharp, torch.zeros(2, dtype=torch.long), 1).item() == pytest.approx(0.0, abs=1e-9)
    assert slot_variance(torch.zeros(2, 6), torch.zeros(2, dtype=torch.long), 1).item() > 0


def test_batched_is_the_mean_of_single_bags() -> None:
    logits = torch.randn(3, len(ROLE_NU), generator=torch.Generator().manual_seed(0))
    one = penalty_of(logits)
    other = penalty_of(torch.nn.functional.one_hot(GOLD, len(ROLE_NU)).float() * 50.0)
    both = mass_balance_penalty(
        torch.cat([logits, torch.nn.functional.one_hot(GOLD, len(ROLE_NU)).float() * 50.0]).softmax(-1),
        NU,
        torch.cat([MOL_COMP, MOL_COMP]),
        torch.tensor([0, 0, 0, 1, 1, 1]),
        torch.stack([WATER, WATER]),
        torch.stack([ESTER, ESTER]),
        2,
    )
    assert both.item() == pytest.approx((one.item() + other.item()) / 2, rel=1e-6)


@pytest.mark.parametrize("leftover", ["elements", "vocab"])
def test_loss_logs_penalty_and_weight_only_scales_it(tmp_path, leftover) -> None:
    write_toy_variant(tmp_path, "ChemAlgebra_F_T2_x1", {"train": 12})
    exs = load_examples(tmp_path, "ChemAlgebra_F_T2_x1", "train")
    feat = Featurizer("formula")
    vocab = ExtraVocab.build(exs)
    batch = collate_bags(BagDataset(exs, feat, vocab).data)
    torch.manual_seed(0)
    hp = BagGNNConfig.from_settings({"hidden": 32, "layers": 1, "leftover": leftover}, feat.settings(), len(vocab))
    model = build_model(hp, vocab_compositions(vocab, feat)).eval()
    out = model(batch)
    off = compute_losses(out, batch, model, {"mass_balance": 0.0})
    on = compute_losses(out, batch, model, {"mass_balance": 0.5})
    assert off["penalty"].item() > 0
    assert on["total"].item() == pytest.approx(off["total"].item() + 0.5 * off["penalty"].item(), rel=1e-5)
    var = compute_losses(out, batch, model, {"mass_balance": 0.5, "mass_balance_variance": 1.0})
    assert var["penalty"].item() > off["penalty"].item()
    on["total"].backward()
    assert model.role_head[0].weight.grad.abs().sum() > 0
    assert predicted_leftover(out, batch, model, batch.num_graphs).shape == (batch.num_graphs, COMP_DIM)
    assert gold_main_composition(batch, model.role_nu, CHARGE_INDEX, batch.num_graphs).min() >= 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_penalty_on_cuda_matches_cpu() -> None:
    logits = torch.randn(3, len(ROLE_NU), generator=torch.Generator().manual_seed(1))
    graph = torch.zeros(3, dtype=torch.long)
    args = (NU, MOL_COMP, graph, WATER[None], ESTER[None], 1)
    cpu = mass_balance_penalty(logits.softmax(-1), *args)
    gpu = mass_balance_penalty(logits.cuda().softmax(-1), *(a.cuda() if torch.is_tensor(a) else a for a in args))
    assert gpu.item() == pytest.approx(cpu.item(), rel=1e-5)


def test_roles_only_lines_teach_roles_and_nothing_else(tmp_path) -> None:
    """A roles-only line (gnnca data formula-extra) adds to the role loss; the by-product, leftover and penalty
    terms are those of the other lines alone."""
    write_toy_variant(tmp_path, "ChemAlgebra_F_T1_x1", {"train": 12})
    exs = load_examples(tmp_path, "ChemAlgebra_F_T1_x1", "train")
    for ex in exs[::2]:
        ex.roles_only = True
    feat = Featurizer("formula")
    vocab = ExtraVocab.build(exs)
    assert set(vocab.items[1:]) == {e for ex in exs[1::2] for e in ex.extras}  # from the labelled lines only
    data = BagDataset(exs, feat, vocab).data
    assert [float(d.w_left) for d in data[:2]] == [0.0, 1.0]
    torch.manual_seed(0)
    hp = BagGNNConfig.from_settings({"hidden": 32, "layers": 1}, feat.settings(), len(vocab))
    model = build_model(hp, vocab_compositions(vocab, feat)).eval()
    weights = {"mass_balance": 0.5}
    mixed = collate_bags(data)
    labelled = collate_bags(data[1::2])
    both = compute_losses(model(mixed), mixed, model, weights)
    only = compute_losses(model(labelled), labelled, model, weights)
    for key in ("extra", "leftover", "penalty"):
        assert both[key].item() == pytest.approx(only[key].item(), rel=1e-5), key
    assert both["role"].item() != pytest.approx(only["role"].item(), rel=1e-3)
    for d in data[::2]:  # whatever a roles-only line's by-product and leftover labels say, they are not read
        d.y_left = torch.full_like(d.y_left, 3)
        d.y_extra = torch.ones_like(d.y_extra)
    changed = collate_bags(data)
    again = compute_losses(model(changed), changed, model, weights)
    assert all(again[k].item() == pytest.approx(both[k].item(), rel=1e-6) for k in ("extra", "leftover", "penalty"))
