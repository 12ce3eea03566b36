"""Trust fields of a prediction record: the calibrated confidence, the in-domain index, the top-k alternatives, and
their storage beside a checkpoint (plain JSON and npz, bound to the checkpoint's bytes)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gnn_chemalgebra.trust.annotate import Trust, annotate_uncalibrated
from gnn_chemalgebra.trust.calibrators import TYPE1, TYPE2, Calibrator
from gnn_chemalgebra.trust.candidates import candidate_lines
from gnn_chemalgebra.trust.domain import DomainIndex
from gnn_chemalgebra.trust.features import FEATURES, record_features
from gnn_chemalgebra.trust.fit import fit_calibrator
from gnn_chemalgebra.trust.linear import LinearModel
from gnn_chemalgebra.trust.sidecar import sidecar_paths

pytestmark = pytest.mark.unit


def record(score: float, role_p: float, *, line_type: int = 1, beam: list | None = None, **kw) -> dict:
    """A formula record of ``A + B -> AB`` with the given hypothesis score and role probabilities."""
    rec = {
        "line": 1,
        "source": "{1}CH4O.{1}C2H4O2",
        "prediction": "{1}H2O.{1}C3H6O2",
        "line_type": line_type,
        "fallback": False,
        "confidence": round(role_p * role_p, 4),
        "molecules": [
            {"mol": "C2H4O2", "nu": -1, "confidence": role_p},
            {"mol": "CH4O", "nu": -1, "confidence": role_p},
        ],
        "extent_candidates": [1],
        "extent_posterior": [],
        "main_product": "C3H6O2",
        "beam": beam if beam is not None else [{"prediction": "{1}H2O.{1}C3H6O2", "logp": score}],
    }
    rec.update(kw)
    return rec


def synthetic(n: int, seed: int = 0) -> tuple[list[dict], list[bool]]:
    """Records whose chance of being right falls with -score (as the network's do), with sampled outcomes."""
    rng = np.random.default_rng(seed)
    recs, ys = [], []
    for i in range(n):
        score = -float(rng.exponential(0.5))
        recs.append(record(score, float(rng.uniform(0.6, 1.0)), line_type=1 + i % 2))
        ys.append(bool(rng.uniform() < math.exp(score)))
    return recs, ys


def test_features_read_the_written_hypothesis() -> None:
    f = record_features(record(-0.5, 0.9))
    assert len(f) == len(FEATURES)
    assert f[FEATURES.index("score")] == pytest.approx(math.log(0.5 + 1e-4))
    assert f[FEATURES.index("roles")] == pytest.approx(math.log(-2 * math.log(0.9) + 1e-4))
    t2 = record_features(record(-0.5, 0.9, line_type=2, extent_posterior=[0.3, 0.6, 0.1], extent_candidates=[1, 2, 3]))
    assert [t2[FEATURES.index(k)] for k in ("extent_p", "extent_gap", "extent_n", "extent_choices")] == pytest.approx(
        [0.6, 0.3, 3.0, 1.0]
    )
    assert t2[FEATURES.index("extent")] == pytest.approx(math.log(-math.log(0.6) + 1e-4))
    fb = record_features(record(-0.5, 0.9, fallback=True))
    assert fb[FEATURES.index("fallback")] == 1.0
    assert fb[FEATURES.index("score")] == pytest.approx(math.log(30 + 1e-4))


def test_linear_model_round_trip_and_refusal_of_one_outcome() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    m = LinearModel.fit(X, y)
    again = LinearModel.from_json(json.loads(json.dumps(m.to_json())))
    assert np.allclose(m.predict(X), again.predict(X))
    assert m.coef[0] > 1.0  # the informative column
    with pytest.raises(Exception, match="all right"):
        LinearModel.fit(X, np.ones(400, dtype=int))


def test_calibrator_is_calibrated_on_held_out_lines_and_per_line_type() -> None:
    recs, ys = synthetic(4000, seed=0)
    cal = fit_calibrator(recs, ys, fitted_on={"files": ["valid"]})
    assert set(cal.top) == {TYPE1, TYPE2}
    assert cal.fitted_on["line_types"]["1"]["lines"] == 2000
    test, yt = synthetic(4000, seed=1)
    p, own = cal.confidence(test)
    assert own.all()
    from gnn_chemalgebra.evaluation.calibration import expected_calibration_error

    raw = [r["confidence"] for r in test]
    assert expected_calibration_error(p, yt) < 0.03 < expected_calibration_error(raw, yt)
    back = Calibrator.from_json(json.loads(json.dumps(cal.to_json())))
    assert np.allclose(back.confidence(test)[0], p)


def test_a_line_type_without_its_model_says_uncalibrated() -> None:
    recs, ys = synthetic(600, seed=2)
    only1 = [r for r in recs if r["line_type"] == 1]
    cal = fit_calibrator(only1, [y for r, y in zip(recs, ys, strict=True) if r["line_type"] == 1])
    _, own = cal.confidence([record(-0.1, 0.9, line_type=2)])
    assert not own[0]


def test_limiting_type2_lines_have_a_model_of_their_own_or_read_the_type2_one_marked() -> None:
    """Type-2 lines written with the limiting extent are their own calibration kind: fitted with them, they read
    their model and are calibrated; a calibration fitted without them scores them with the Type-2 model, and the
    extent-rule check says they are not calibrated."""
    from gnn_chemalgebra.trust.calibrators import LIMITING, calibration_kind

    recs, ys = synthetic(600, seed=4)
    lim = [dict(r, line_type=2, extent_rule="limiting") for r in recs[:200]]
    assert [calibration_kind(r) for r in (lim[0], recs[0], recs[1])] == [LIMITING, TYPE1, TYPE2]
    with_lim = fit_calibrator(recs + lim, ys + ys[:200])
    without = fit_calibrator(recs, ys)
    assert LIMITING in with_lim.top and LIMITING not in without.top
    probe = record(-0.2, 0.95, line_type=2, extent_rule="limiting")
    assert with_lim.confidence([probe])[1][0] and without.confidence([probe])[1][0]
    assert without.confidence([probe])[0][0] == pytest.approx(without.top[TYPE2].predict([record_features(probe)])[0])
    for cal, note in ((with_lim, False), (without, True)):
        (out,) = Trust("formula", cal, None, {"extent": "bayes"}).annotate_many([dict(probe)], top_k=1, domain=False)
        assert out["calibrated"] is not note and ("calibration_note" in out) is note


def test_candidate_lines_are_distinct_balanced_and_start_with_the_written_line() -> None:
    beam = [
        {"prediction": "{1}H2O.{1}C3H6O2", "logp": -0.1},
        {"prediction": "{1}C3H6O2.{1}H2O", "logp": -0.5},  # the same line in another order
        {"prediction": "{1}H2.{1}C3H6O3", "logp": -1.0},  # balanced alternative
        {"prediction": "{1}C3H6O2", "logp": -1.5},  # unbalanced: water missing
        {"prediction": "{1}CH4O.{1}C2H4O2", "logp": None},  # the no-reaction entry
        {"prediction": "{1}O.{1}C3H8O2", "logp": -2.0},
    ]
    rec = record(-0.1, 0.95, beam=beam)
    cands = candidate_lines(rec, "formula")
    assert [c[0] for c in cands] == [0, 2, 5]
    recs, ys = synthetic(2000, seed=3)
    trust = Trust("formula", fit_calibrator(recs, ys))
    trust.annotate(rec, top_k=5)
    probs = [t["probability"] for t in rec["top_k"]]
    assert [t["prediction"] for t in rec["top_k"]][0] == rec["prediction"]
    assert probs == sorted(probs, reverse=True) and sum(probs) <= 1.0 + 1e-6
    assert len({t["prediction"] for t in rec["top_k"]}) == 3
    assert [e["probability"] is None for e in rec["beam"]] == [False, True, False, True, True, False]
    rec2 = record(-0.1, 0.95, beam=beam)
    trust.annotate(rec2, top_k=2)
    assert len(rec2["top_k"]) == 2


def test_uncalibrated_records_still_get_a_number() -> None:
    rec = record(-0.2, 0.9, fallback=True, confidence=None)
    (out,) = annotate_uncalibrated([rec], "formula")
    assert out["confidence"] == 0.0 and out["calibrated"] is False
    assert out["in_domain"] is None and out["top_k"][0]["prediction"] == rec["prediction"]


# --------------------------------------------------------------------------- the in-domain index
TRAIN_SMILES = [
    ["CC(=O)Cl", "NCc1ccccc1"],
    ["CC(=O)O", "OCC"],
    ["O=C(Cl)c1ccccc1", "CNC"],
    ["CCBr", "Oc1ccccc1"],
]


def smiles_record(mols: list[str], consumed: list[str]) -> dict:
    return {"molecules": [{"mol": m, "nu": -1 if m in consumed else 0, "confidence": 1.0} for m in mols]}


@pytest.fixture(scope="module")
def smiles_index() -> DomainIndex:
    mols = [m for s in TRAIN_SMILES for m in s] + ["ClCCl", "CCN(CC)CC"]
    idx = DomainIndex.build(TRAIN_SMILES, mols, "smiles")
    idx.threshold = 0.3
    return idx


def test_a_training_reactant_set_is_in_domain(smiles_index: DomainIndex) -> None:
    sim, ok, notes = smiles_index.check(smiles_record(["CC(=O)Cl", "NCc1ccccc1", "ClCCl"], ["CC(=O)Cl", "NCc1ccccc1"]))
    assert sim == pytest.approx(1.0) and ok and notes == []


def test_an_element_no_training_reaction_had_is_out_of_domain(smiles_index: DomainIndex) -> None:
    sim, ok, notes = smiles_index.check(smiles_record(["CC[Se]CC", "CI"], ["CC[Se]CC", "CI"]))
    assert not ok
    assert any("Se" in n and "element" in n for n in notes) and any("I" in n.split(": ")[-1] for n in notes)


def test_a_functional_group_no_training_reactant_had_is_out_of_domain(smiles_index: DomainIndex) -> None:
    _, ok, notes = smiles_index.check(smiles_record(["OB(O)c1ccccc1", "Brc1ccccc1"], ["OB(O)c1ccccc1", "Brc1ccccc1"]))
    assert not ok and any("boronic acid" in n for n in notes)


def test_groups_never_together_in_training_are_out_of_domain(smiles_index: DomainIndex) -> None:
    # acyl halides and alcohols were each training reactants, never in one reaction
    _, ok, notes = smiles_index.check(smiles_record(["CC(=O)Cl", "OCC"], ["CC(=O)Cl", "OCC"]))
    assert not ok and any("never together" in n and "acyl halide" in n for n in notes)


def test_nearest_is_exact_against_brute_force() -> None:
    rng = np.random.default_rng(0)
    bits = rng.uniform(size=(3000, 256)) < rng.uniform(0.02, 0.3, size=(3000, 1))
    fps = np.packbits(bits, axis=1).view(np.uint64)
    idx = DomainIndex("formula", 256, fps, frozenset())
    for q in range(40):
        qb = rng.uniform(size=256) < rng.uniform(0.02, 0.3)
        inter = (bits & qb).sum(1)
        union = bits.sum(1) + qb.sum() - inter
        want = float(np.max(np.where(union > 0, inter / np.maximum(union, 1), 0)))
        assert idx.nearest(np.packbits(qb).view(np.uint64)) == pytest.approx(want), q


# --------------------------------------------------------------------------- storage beside a checkpoint
def test_sidecars_round_trip_and_belong_to_their_checkpoint(tmp_path: Path, smiles_index: DomainIndex) -> None:
    ckpt = tmp_path / "model.pt"
    ckpt.write_bytes(b"weights v1")
    recs, ys = synthetic(800, seed=4)
    trust = Trust("smiles", fit_calibrator(recs, ys, fitted_on={"files": ["src-valid.txt"]}), smiles_index)
    js, npz = trust.save(ckpt)
    assert (js, npz) == sidecar_paths(ckpt)
    assert json.loads(js.read_text())["calibrator"]["fitted_on"]["files"] == ["src-valid.txt"]
    with np.load(npz, allow_pickle=False) as z:
        assert z["fingerprints"].dtype == np.uint64
    loaded = Trust.load_for(ckpt)
    assert loaded is not None and loaded.domain is not None
    assert np.allclose(loaded.calibrator.confidence(recs)[0], trust.calibrator.confidence(recs)[0])
    assert loaded.domain.check(smiles_record(["CC(=O)O", "OCC"], ["CC(=O)O", "OCC"]))[0] == pytest.approx(1.0)
    assert Trust.load_for(f"{ckpt},{ckpt}") is None  # an ensemble has no calibration of its own
    other = tmp_path / "other.pt"
    other.write_bytes(b"weights v2")
    for p in sidecar_paths(ckpt):
        p.rename(other.with_name(other.name + p.name.removeprefix(ckpt.name)))
    assert Trust.load_for(other) is None  # sidecars written for other bytes are not used


def test_what_a_line_writes_is_checked_against_the_training_reactions(tmp_path: Path) -> None:
    from gnn_chemalgebra.trust.outcomes import TrainingOutcomes

    mols = [m for s in TRAIN_SMILES for m in s]
    idx = DomainIndex.build(TRAIN_SMILES, mols, "smiles")
    # the training reactions write HCl only: an oxygen atom (open shell) or water is outside them
    amide = [("CC(=O)Cl", -1), ("NCc1ccccc1", -1), ("CC(=O)NCc1ccccc1", 1), ("Cl", 1)]
    idx.outcomes = TrainingOutcomes.from_reactions([amide] * 5, "smiles")
    line = smiles_record(["CC(=O)Cl", "NCc1ccccc1"], ["CC(=O)Cl", "NCc1ccccc1"])
    line.update(new_products=["CC(=O)NCc1ccccc1", "[O]"], main_product="CC(=O)NCc1ccccc1")
    sim, ok, notes = idx.check(line)
    assert sim == pytest.approx(1.0) and not ok
    assert notes == [
        "by-product(s) fewer than 5 training reactions wrote: [O] (0)",
        "a reduction (writes the oxygen atom [O]) with no reducing agent in the bag",
    ]
    assert idx.check({**line, "new_products": ["CC(=O)NCc1ccccc1", "Cl"]})[1]
    # stored in the sidecar and read back; a sidecar written before the table existed checks nothing of it
    ckpt = tmp_path / "model.pt"
    ckpt.write_bytes(b"weights")
    Trust("smiles", None, idx).save(ckpt)
    loaded = Trust.load_for(ckpt)
    assert loaded is not None and loaded.domain is not None and loaded.domain.outcomes == idx.outcomes
    assert loaded.domain.check(line)[2] == notes
    js = sidecar_paths(ckpt)[0]
    d = json.loads(js.read_text())
    del d["domain"]["outcomes"]
    js.write_text(json.dumps(d))
    old = Trust.load_for(ckpt)
    assert old is not None and old.domain is not None and old.domain.outcomes is None
    assert old.domain.check(line)[1]


@pytest.mark.unit
def test_a_line_type_with_one_outcome_reads_the_other_types_model() -> None:
    """Validation lines of one type all right: that type gets no model of its own (nothing to tell apart) and its
    lines are scored by the other type's, marked uncalibrated; all lines of every type alike is still refused."""
    import numpy as np

    from gnn_chemalgebra.errors import InputError

    rng = np.random.default_rng(1)

    def rec(lt: int) -> dict:
        p = float(rng.uniform(0.3, 1.0))
        return {"line_type": lt, "molecules": [{"confidence": p}], "beam": [{"logp": float(rng.normal(-2, 1))}]}

    records = [rec(1) for _ in range(10)] + [rec(2) for _ in range(30)]
    labels = [True] * 10 + [bool(i % 3) for i in range(30)]
    cal = fit_calibrator(records, labels)
    assert set(cal.top) == {TYPE2} and cal.fitted_on["line_types"]["1"]["fitted"] is False
    conf, own = cal.confidence(records[:12])
    assert len(conf) == 12 and not own[:10].any() and own[10:].all() and len(FEATURES) > 0
    with pytest.raises(InputError, match="all right"):
        fit_calibrator(records[:10], labels[:10])
    with pytest.raises(InputError, match="per line type"):  # Type 1 all right, Type 2 all wrong: nothing to fit
        fit_calibrator(records, [True] * 10 + [False] * 30)


def test_a_second_opinion_has_a_model_of_its_own_that_reads_the_disagreement() -> None:
    """Type-1 records carrying a second opinion fit the Type-1 model (without the feature) and their own, which
    reads whether the other model wrote another line; a calibration fitted without them reads such records with the
    Type-1 model and still calls them calibrated (the written line is the one it measured)."""
    from gnn_chemalgebra.trust.calibrators import SECOND_OPINION, model_kind

    rng = np.random.default_rng(5)
    recs, ys = [], []
    for _ in range(1500):
        agrees = bool(rng.uniform() < 0.8)
        r = record(-float(rng.exponential(0.3)), 0.9, second_opinion={"prediction": "x", "agrees": agrees})
        recs.append(r)
        ys.append(bool(rng.uniform() < (0.9 if agrees else 0.3)))
    assert model_kind(recs[0]) == SECOND_OPINION and model_kind(record(-0.1, 0.9)) == TYPE1
    assert len(record_features(recs[0], second_opinion=True)) == len(FEATURES) + 1
    cal = fit_calibrator(recs, ys)
    assert set(cal.top) == {TYPE1, SECOND_OPINION}
    probe = record(-0.2, 0.9)
    agree = dict(probe, second_opinion={"prediction": "x", "agrees": True})
    differ = dict(probe, second_opinion={"prediction": "y", "agrees": False})
    p, own = cal.confidence([agree, differ, probe])
    assert own.all() and p[1] < 0.5 < p[0]
    assert p[2] == pytest.approx(cal.top[TYPE1].predict([record_features(probe)])[0])
    assert Calibrator.from_json(json.loads(json.dumps(cal.to_json()))).confidence([differ])[0][0] == pytest.approx(p[1])
    plain = fit_calibrator([dict(r, second_opinion=None) for r in recs], ys)
    q, own = plain.confidence([differ])
    assert SECOND_OPINION not in plain.top and own[0] and q[0] == pytest.approx(plain.confidence([probe])[0][0])


def test_a_line_read_again_in_formulas_has_a_model_of_its_own() -> None:
    """Chemist's SMILES records carrying the formula model's reading fit their own model, which reads whether the
    line written has its formulas; a calibration fitted without such records reads them with the Type-1 model."""
    from gnn_chemalgebra.trust.calibrators import FORMULA_CHECKED, model_kind

    rng = np.random.default_rng(7)
    recs, ys = [], []
    for _ in range(1500):
        agrees = bool(rng.uniform() < 0.6)
        recs.append(record(-float(rng.exponential(0.3)), 0.9, formula_check={"prediction": "x", "agrees": agrees}))
        ys.append(bool(rng.uniform() < (0.8 if agrees else 0.2)))
    assert model_kind(recs[0]) == FORMULA_CHECKED and model_kind(record(-0.1, 0.9, formula_check={})) == TYPE1
    row = record_features(recs[0], formula_check=True)
    assert len(row) == len(FEATURES) + 1 and row[:-1] == record_features(recs[0])
    cal = fit_calibrator(recs, ys)
    assert FORMULA_CHECKED in cal.top and cal.to_json()["formula_check_feature"] == "formula_check_differs"
    probe = record(-0.2, 0.9)
    agree = dict(probe, formula_check={"prediction": "x", "agrees": True})
    differ = dict(probe, formula_check={"prediction": "y", "agrees": False})
    p, own = cal.confidence([agree, differ])
    assert own.all() and p[1] < 0.5 < p[0]
    again = Calibrator.from_json(json.loads(json.dumps(cal.to_json())))
    assert again.confidence([differ])[0][0] == pytest.approx(p[1])
    plain = fit_calibrator([dict(r, formula_check=None) for r in recs], ys)
    q, own = plain.confidence([differ])
    assert FORMULA_CHECKED not in plain.top and own[0] and q[0] == pytest.approx(plain.confidence([probe])[0][0])


@pytest.mark.parametrize("value", [True, "yes", {}, [], {"agrees": "false"}, {"prediction": "x"}])
def test_a_malformed_second_opinion_reads_the_type1_model(value: object) -> None:
    from gnn_chemalgebra.trust.calibrators import model_kind

    rec = record(-0.2, 0.9, second_opinion=value)
    assert model_kind(rec) == TYPE1
    recs, ys = synthetic(400, seed=6)
    cal = fit_calibrator(recs, ys)
    (out,) = Trust("formula", cal, None, {"extent": "bayes"}).annotate_many([rec], domain=False)
    assert out["confidence"] == pytest.approx(cal.confidence([record(-0.2, 0.9)])[0][0], abs=1e-4)


# --------------------------------------------------------------------------- consistent alternatives
def test_alternatives_never_outrank_the_written_line_nor_change_with_k() -> None:
    """An alternative's probability is at most the written line's (``prediction`` stays ``top_k[0]``) and depends
    only on the alternatives ranked before it: more of them (a wider --top-k) leaves the first ones as they were."""
    from gnn_chemalgebra.trust.candidates import beam_share, in_rank_order

    assert in_rank_order([0.55, 0.2, 0.1], 0.3) == pytest.approx([0.3, 0.2, 0.1])  # capped at the written 0.3
    assert in_rank_order([0.5, 0.5, 0.5], 0.6) == pytest.approx([0.4, 0.0, 0.0])  # never past 1 - 0.6
    recs, ys = synthetic(2000, seed=3)
    cal = fit_calibrator(recs, ys)
    scores = [-0.1, -0.3, -0.4, -0.9, -1.2, -2.0]
    cands = [(i, f"line{i}", s) for i, s in enumerate(scores)]
    for conf in (0.05, 0.3, 0.8):
        for share in (cal.alternatives, beam_share):  # the alternatives model, or without one the beam's scores
            few, many = share(cands[:3], conf), share(cands, conf)
            assert many[:2] == pytest.approx(few)
            assert all(p <= conf + 1e-12 for p in many) and sum(many) <= 1 - conf + 1e-9


def test_tautomers_of_one_product_are_one_alternative() -> None:
    from gnn_chemalgebra.chem.smiles import tautomer_key

    assert tautomer_key("Cc1nn[nH]n1") == tautomer_key("Cc1nnn[nH]1")  # 2H- and 1H-5-methyltetrazole
    assert tautomer_key("CN(=O)=O") == tautomer_key("C[N+](=O)[O-]")  # two writings of a nitro group
    assert tautomer_key("CC(=O)O") != tautomer_key("CC(=O)OC")
    assert tautomer_key("not a smiles") == "not a smiles"
    beam = [
        {"prediction": "{1}Cc1nn[nH]n1.{1}O", "logp": -0.2},
        {"prediction": "{1}Cc1nnn[nH]1.{1}O", "logp": -0.4},  # the other tautomer: the same product
        {"prediction": "{1}OCc1nn[nH]n1.{1}[H][H]", "logp": -1.0},  # other products of the same atoms
    ]
    rec = {"source": "{1}Cc1nnn[nH]1.{1}O", "prediction": beam[0]["prediction"], "fallback": False, "beam": beam}
    assert [c[0] for c in candidate_lines(rec, "smiles")] == [0, 2]
    assert [c[0] for c in candidate_lines(rec, "formula")] == [0, 1, 2]  # strings, not SMILES: kept apart


def test_a_line_where_nothing_happens_is_not_lifted_above_its_evidence() -> None:
    recs, ys = synthetic(2000, seed=3)
    trust = Trust("formula", fit_calibrator(recs, ys))
    lifted = trust.annotate(record(-0.01, 0.2))  # a reaction: the calibration may raise a low raw number
    assert lifted["confidence"] > lifted["raw_confidence"]
    still = record(-0.01, 0.2, extent=0, prediction="{1}CH4O.{1}C2H4O2")  # extent 0: the source unchanged
    trust.annotate(still)
    assert still["confidence"] == pytest.approx(still["raw_confidence"], abs=1e-4)
    copied = record(-0.01, 0.2, extent=0, fallback=True, prediction="{1}CH4O.{1}C2H4O2")  # no balanced hypothesis
    assert trust.annotate(copied)["confidence"] == 0.0
