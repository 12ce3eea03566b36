"""Calibration quality on real benchmark lines, not only on synthetic probabilities: the bundled formula and SMILES
models' calibrated confidence, on 200 held-out test lines of each of the formula Type-1 and Type-2 cells and the
SMILES Type-1 cell, has a small ECE, a mean near its exact match and ranks right lines above wrong ones; its raw
confidence, on the same lines, does not.

``real_slice/`` holds every 89th line of the benchmark's ``test_in`` files (never used to fit the calibration,
which is fitted on validation lines), remade from a full build with::

    gnnca data build --out built/full
    for v in F_T1_x1 F_T2_x1 S_T1_x1; do for k in src tgt; do
      awk 'NR % 89 == 0' built/full/ChemAlgebra_$v/$k-test_in.txt > tests/evaluation/real_slice/$v.$k
    done; done

Measured when written (bundled models, ``--extent bayes``): F_T1 EM 0.900, mean confidence 0.884, ECE 0.051, AUROC
0.898 (raw: mean 0.983, ECE 0.088, AUROC 0.810); F_T2 EM 0.800, mean 0.805, ECE 0.046, AUROC 0.895 (raw: mean 0.942,
ECE 0.175, AUROC 0.575; its one fallback line, wrong, is not lifted above its raw 0); S_T1 (the SMILES model with
its edit model) EM 0.855, mean 0.830, ECE 0.037, AUROC 0.926 (raw: mean 0.937, ECE 0.092, AUROC 0.821). The bounds
leave room for the sampling noise of 200 lines (bootstrap sd on the formula cells: ECE 0.013-0.016, AUROC
0.024-0.042) while the raw confidence fails them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gnn_chemalgebra.benchmark.calibration import exact_labels
from gnn_chemalgebra.evaluation.calibration import auroc, expected_calibration_error
from gnn_chemalgebra.inference import run
from gnn_chemalgebra.inference.predict_command import predict_lines
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions

pytestmark = pytest.mark.integration

SLICE = Path(__file__).parent / "real_slice"
MAX_ECE, MAX_GAP, MIN_AUROC = 0.08, 0.04, 0.83


@pytest.fixture(scope="module")
def predictors() -> dict[str, Predictor]:
    """The bundled model of each representation, loaded once when a cell first needs it."""
    return {}


def _bundled(predictors: dict[str, Predictor], repr: str) -> Predictor:
    if repr not in predictors:
        ckpt = run.SMILES_CHECKPOINT if repr == "smiles" else run.DEFAULT_CHECKPOINT
        predictors[repr] = Predictor.from_checkpoint(ckpt, options=PredictorOptions(extent="bayes"))
    return predictors[repr]


def _quality(p: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    return expected_calibration_error(p, y), abs(float(p.mean() - y.mean())), auroc(p, y)


@pytest.mark.parametrize("cell", ["F_T1_x1", "F_T2_x1", "S_T1_x1"])
def test_calibrated_confidence_holds_on_real_held_out_lines(predictors: dict[str, Predictor], cell: str) -> None:
    repr = "smiles" if cell.startswith("S_") else "formula"
    predictor = _bundled(predictors, repr)
    src = (SLICE / f"{cell}.src").read_text().splitlines()
    tgt = (SLICE / f"{cell}.tgt").read_text().splitlines()
    assert len(src) == len(tgt) == 200
    res = predict_lines(src, predictor, line_type="2" if "_T2_" in cell else "1")
    recs = res.records
    assert len(recs) == 200 and all(r["calibrated"] for r in recs)  # the sidecar's calibration was applied
    y = np.array(exact_labels([r["prediction"] for r in recs], tgt, repr))
    assert 0.6 < y.mean() < 0.98  # both classes present: ECE and AUROC mean something
    ece, gap, rank = _quality(np.array([r["confidence"] for r in recs]), y)
    assert ece <= MAX_ECE and gap <= MAX_GAP and rank >= MIN_AUROC, (cell, ece, gap, rank)
    raw_ece, raw_gap, raw_rank = _quality(np.array([r["raw_confidence"] for r in recs]), y)
    assert raw_ece > MAX_ECE or raw_gap > MAX_GAP or raw_rank < MIN_AUROC, "the bounds would pass a raw confidence"
    assert raw_ece > ece
