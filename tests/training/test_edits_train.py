"""The bond-edit model overfits four real reactions so that the beam's top-1 reproduces their products;
weights_only checkpoints round-trip; resume after an epoch is bit-exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint
from gnn_chemalgebra.chem.edits import gold_products
from gnn_chemalgebra.data.edit_dataset import record_example
from gnn_chemalgebra.inference.edit_decode import EditPredictor, predict_products
from gnn_chemalgebra.inference.smiles_products import new_products_for_bag
from gnn_chemalgebra.training.edits import EditTask
from gnn_chemalgebra.training.run import train

pytestmark = pytest.mark.integration

RECORDS = [json.loads(line) for line in (Path(__file__).parents[1] / "edit_records.jsonl").read_text().splitlines()]
FOUR = [r for r in RECORDS if r["id"] in (9, 22, 38, 55)]


def _base_cfg(run_dir: Path, **train: object) -> dict:
    return {
        "run_dir": str(run_dir),
        "model": {"hidden": 32, "layers": 2, "attn_layers": 1, "heads": 2, "dropout": 0.0},
        "train": {"epochs": 60, "batch_size": 4, "lr": 0.005, "seed": 0, "patience": 100, "device": "cpu", **train},
    }


@pytest.fixture(scope="module")
def overfit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run = tmp_path_factory.mktemp("edits_overfit")
    exs = [record_example(r) for r in FOUR]
    summary = train(_base_cfg(run, target=1.0), task=EditTask({"train": exs, "valid": exs}))
    return run, summary


def test_overfit_four_reactions_top1(overfit: tuple[Path, dict]) -> None:
    run, summary = overfit
    assert summary["best"]["exact_edits"] == 1.0
    pred = EditPredictor.from_checkpoint(run / "best.pt")
    cands = pred.predict([(r["reactants"], r["reagents"]) for r in FOUR], beam=3)
    for r, c in zip(FOUR, cands, strict=True):
        assert c and c[0].products == sorted(gold_products(r)), r["id"]
    r = FOUR[0]
    assert predict_products(r["reactants"][::-1], r["reagents"], beam=2, checkpoint=pred)[0] == sorted(gold_products(r))
    new, score = new_products_for_bag(r["reactants"], r["reagents"], beam=2, checkpoint=pred)[0]
    assert new == [*sorted(gold_products(r)), r["leftover_product"]] and score <= 0.0


def test_an_ensemble_of_checkpoints_averages_the_heads(overfit: tuple[Path, dict], tmp_path: Path) -> None:
    """``a.pt,b.pt`` loads both models; two copies of one model decode exactly as it does, and a second member
    whose heads are scrambled changes the scores (the members really are averaged)."""
    from gnn_chemalgebra.models.edit_model import EditEnsemble

    run, _ = overfit
    one = EditPredictor.from_checkpoint(run / "best.pt")
    two = EditPredictor.from_checkpoint(f"{run / 'best.pt'},{run / 'best.pt'}")
    assert isinstance(two.model, EditEnsemble) and len(two.model.members) == 2
    bags = [(r["reactants"], r["reagents"]) for r in FOUR]
    for a, b in zip(one.predict(bags, beam=3), two.predict(bags, beam=3), strict=True):
        assert [c.products for c in a] == [c.products for c in b]
        assert [c.score for c in a] == pytest.approx([c.score for c in b], abs=1e-4)
    ck = load_checkpoint(run / "best.pt")
    torch.manual_seed(0)
    ck["model"] = {k: torch.randn_like(v) if "head" in k else v for k, v in ck["model"].items()}
    save_checkpoint(tmp_path / "noisy.pt", ck)
    mixed = EditPredictor.from_checkpoint(f"{run / 'best.pt'},{tmp_path / 'noisy.pt'}")
    first = [c[0].score for c in one.predict(bags, beam=1)]
    assert [c[0].score if c else None for c in mixed.predict(bags, beam=1)] != pytest.approx(first, abs=1e-4)


def test_checkpoint_weights_only_round_trip(overfit: tuple[Path, dict]) -> None:
    run, _ = overfit
    raw = torch.load(run / "best.pt", weights_only=True)  # no pickled code in the file
    assert "model" in raw
    ck = load_checkpoint(run / "best.pt")
    assert ck["meta"]["kind"] == "edits"
    model = EditPredictor.from_checkpoint(run / "best.pt").model
    for k, v in model.state_dict().items():
        assert torch.equal(v, ck["model"][k])


@pytest.mark.parametrize("fast", [False, True])
def test_resume_is_bit_exact(tmp_path: Path, fast: bool) -> None:
    """``fast``: train.fast_train with dropout 0.1, so its dropout masks and the fused AdamW resume exactly too."""
    exs = [record_example(r) for r in FOUR[:2]]
    data = {"train": exs, "valid": exs}

    def _cfg(run_dir: Path, **train: object) -> dict:
        cfg = _base_cfg(run_dir, **train, **({"fast_train": True} if fast else {}))
        cfg["model"]["dropout"] = 0.1 if fast else 0.0
        return cfg

    full = train(_cfg(tmp_path / "full", epochs=4), task=EditTask(data))
    # the same run stopped after two epochs (budget), marked unfinished as a killed run would be, then resumed
    part = train(_cfg(tmp_path / "part", epochs=4, max_steps=2), task=EditTask(data))
    assert part["out_of_budget"] and [h["epoch"] for h in part["history"]] == [0, 1]
    ck = load_checkpoint(tmp_path / "part" / "last.pt")
    ck["meta"]["finished"] = False
    save_checkpoint(tmp_path / "part" / "last.pt", ck)
    rest = train(_cfg(tmp_path / "part", epochs=4), resume=True, task=EditTask(data))
    assert [h["epoch"] for h in rest["history"]] == [2, 3] and rest["steps"] == full["steps"]
    a = load_checkpoint(tmp_path / "full" / "last.pt")["model"]
    b = load_checkpoint(tmp_path / "part" / "last.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    done = train(_cfg(tmp_path / "part", epochs=4), resume=True, task=EditTask(data))
    assert done["history"] == []  # a finished run trains no further


def _gold_assign(ex, reactants: list[str]) -> tuple[int, ...]:
    from collections import Counter

    from gnn_chemalgebra.algebra.roles import ROLE_NU

    n = Counter(reactants)
    return tuple(ROLE_NU.index(-n[m]) for m in ex.mols)


@pytest.mark.parametrize("seed", range(8))
def test_bag_gnn_decodes_smiles_lines_with_the_edit_model(overfit: tuple[Path, dict], seed: int) -> None:
    """With gold roles, the GNN predictor + edit model + algebra reproduce the Type-1 target line exactly; with
    its own (untrained) role head every line it marks balanced really balances, and ``not_covered`` is empty
    exactly when the line is not a fallback (a fallback writes the source back, which balances trivially, and
    says why; seed 6 gives one whose role beam consumes nothing)."""
    from gnn_chemalgebra.algebra.roles import ROLE_NU
    from gnn_chemalgebra.chem.bag import Term, format_bag
    from gnn_chemalgebra.chem.molecule import bag_composition
    from gnn_chemalgebra.data.dataset import ExtraVocab, example_from_terms
    from gnn_chemalgebra.data.featurize import Featurizer
    from gnn_chemalgebra.evaluation.metrics import evaluate_lines
    from gnn_chemalgebra.inference.predictor import Predictor

    run, _ = overfit
    torch.manual_seed(seed)  # the untrained GNN's weights: the same whatever ran before in this process
    pred = Predictor.build({"hidden": 16, "layers": 1, "set_layers": 1}, Featurizer("smiles"), ExtraVocab([]), 1)
    pred.edit = EditPredictor.from_checkpoint(run / "best.pt")
    exs, tgts = [], []
    for k, r in zip((3, 7), FOUR[:2], strict=True):  # 7: a coefficient the edit model never saw
        ex = example_from_terms([Term(k, m) for m in [*r["reactants"], *r["reagents"]]], vtype=1)
        decs = pred.decoder._decode_with_edits(ex, [(0.0, _gold_assign(ex, r["reactants"]))], 1, None)
        tgt = format_bag(Term(k, m) for m in [*gold_products(r), r["leftover_product"], *r["reagents"]] if m)
        assert decs[0][1].balanced and evaluate_lines([format_bag(decs[0][1].terms)], [tgt], "smiles")["EM"] == 100
        assert decs[0][1].main_product in gold_products(r)
        exs.append(ex)
        tgts.append(tgt)
    zero = ROLE_NU.index(0)  # every molecule a reagent: nothing for the edit model to react
    (h,) = pred.decoder._decode_with_edits(exs[0], [(0.0, (zero,) * len(exs[0].mols))], 1, None)
    assert h.roles is None and h.decoded.uncovered == ["no role hypothesis in the beam consumes a molecule"]
    for ex, rec in zip(exs, [p.to_json() for p in pred.predict(exs, beam=2)], strict=True):
        assert rec["beam"] and len(rec["beam"]) <= 2
        src = format_bag(ex.terms)
        if rec["balanced"]:
            assert bag_composition(rec["prediction"], "smiles") == bag_composition(src, "smiles")
        assert bool(rec["not_covered"]) == rec["fallback"], rec
        if rec["fallback"]:
            assert rec["prediction"] == src and rec["confidence"] is None
        json.dumps(rec, allow_nan=False)  # strict JSON, as `gnnca predict --json` writes it
    assert pred.decoder.edit_cache  # the batched pass filled the cache, decode_one reused it
