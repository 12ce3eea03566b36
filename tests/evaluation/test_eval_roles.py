"""Role-head metrics: scikit-learn's per-role scores, confusion matrices and calibration on hand-made cases."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gnn_chemalgebra.algebra.roles import ROLE_NU, role_class
from gnn_chemalgebra.evaluation.roles import (
    CLASS_NAMES,
    plot_role_calibration,
    role_metrics,
    role_metrics_markdown,
    role_samples,
)

pytestmark = pytest.mark.unit

C = len(ROLE_NU)


def _onehot(classes, p_top: float = 1.0) -> np.ndarray:
    """Rows with ``p_top`` on the given class and the rest spread evenly."""
    out = np.full((len(classes), C), (1.0 - p_top) / (C - 1))
    out[np.arange(len(classes)), classes] = p_top
    return out


def test_per_role_scores_and_confusion_on_a_hand_counted_case() -> None:
    # gold nu: -2, -1, 0, 0, +1; head: -1, -1, 0, +1, +1
    gold = [role_class(n) for n in (-2, -1, 0, 0, 1)]
    pred = [role_class(n) for n in (-1, -1, 0, 1, 1)]
    m = role_metrics(gold, _onehot(pred, 0.9), decoded=gold)
    head = m["head"]
    assert head["accuracy"] == pytest.approx(3 / 5)
    assert head["per_role"]["reactant"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2}
    assert head["per_role"]["reagent"]["precision"] == 1.0 and head["per_role"]["reagent"]["recall"] == 0.5
    assert head["per_role"]["product"]["precision"] == 0.5 and head["per_role"]["product"]["recall"] == 1.0
    assert head["per_class"]["nu=-2"]["recall"] == 0.0 and head["per_class"]["nu=+2"]["support"] == 0
    assert head["confusion_role"] == [[2, 0, 0], [0, 1, 1], [0, 0, 1]]  # rows gold, columns predicted
    assert np.trace(np.asarray(head["confusion_class"])) == 3 and np.sum(head["confusion_class"]) == 5
    assert m["decoded"]["accuracy"] == 1.0 and m["decoded"]["macro_f1_role"] == 1.0
    assert m["classes"] == list(CLASS_NAMES) and CLASS_NAMES[ROLE_NU.index(0)] == "nu=0"


def test_calibration_sees_overconfidence_and_honesty() -> None:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, C, size=2000)
    right = rng.random(2000) < 0.5
    pred = np.where(right, gold, (gold + 1) % C)
    over = role_metrics(gold, _onehot(pred, 0.95))["calibration"]
    assert over["ece"] == pytest.approx(0.95 - right.mean(), abs=1e-9)  # one bin: confidence 0.95, accuracy ~0.5
    assert over["top_label"]["count"] == [2000]
    honest = role_metrics(gold, _onehot(pred, 0.5))["calibration"]  # confidence 0.5, accuracy ~0.5
    assert honest["ece"] < 0.03 < over["ece"]
    assert honest["brier_top_label"] < over["brier_top_label"] and honest["log_loss"] < over["log_loss"]
    assert set(over["per_role"]) == {"reactant", "reagent", "product"}
    perfect = role_metrics(gold, _onehot(gold, 1.0))["calibration"]
    assert perfect["ece"] == pytest.approx(0.0) and perfect["top_label"]["prob_true"] == [1.0]


def test_samples_from_examples_probabilities_and_reports() -> None:
    exs = [
        SimpleNamespace(mols=["A", "B", "C"], nu_in=[-1, 0, -3]),
        SimpleNamespace(mols=["D"], nu_in=[2]),
    ]
    probs = [_onehot([1, 2, 0]), _onehot([4])]
    s = role_samples(exs, probs, decoded_nu=[{"A": -1, "C": -2}, {"D": 1}])
    assert s["gold"].tolist() == [1, 2, 0, 4]  # nu -3 clipped to -2
    assert s["prob"].shape == (4, C) and s["decoded"].tolist() == [1, 2, 0, 3]
    with pytest.raises(ValueError, match="shape"):
        role_samples(exs, [_onehot([1, 2]), _onehot([4])])
    with pytest.raises(ValueError, match="gold roles"):
        role_samples([SimpleNamespace(mols=["A"], nu_in=None)])
    with pytest.raises(ValueError, match="decoded"):
        role_metrics([0, 1], decoded=[0])


def test_markdown_and_png(tmp_path: Path) -> None:
    gold = [role_class(n) for n in (-1, -1, 0, 0, 1, 1, 0, -1)]
    pred = [role_class(n) for n in (-1, 0, 0, 0, 1, 1, 0, -1)]
    p = _onehot(pred, 0.8)
    p[0] = _onehot([pred[0]], 0.55)[0]
    reports = {"F_T1_x5 test_in": role_metrics(gold, p, decoded=gold)}
    md = role_metrics_markdown(reports, "Role head", note="toy")
    assert "## F_T1_x5 test_in" in md and "| reagent |" in md and "ECE" in md
    assert "| nu=-1 | 0 | 2 | 1 | 0 | 0 |" in md  # one reactant taken for a reagent
    png = plot_role_calibration(reports, tmp_path / "cal.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    with pytest.raises(ValueError):
        plot_role_calibration({"x": role_metrics(gold, decoded=gold)}, tmp_path / "none.png")
