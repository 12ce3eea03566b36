"""The feature registry: a feature's name and its position in the vector come from one mapping, so a sidecar's
stored names always describe the numbers its models read."""

from __future__ import annotations

import math

import pytest

from gnn_chemalgebra.trust.features import (
    ALT_FEATURES,
    FEATURES,
    RECORD_FEATURES,
    FeatureRegistry,
    alternative_features,
    record_features,
)

pytestmark = pytest.mark.unit


def _record(**kw: object) -> dict:
    rec = {
        "prediction": "{1}H2O.{1}C3H6O2",
        "fallback": False,
        "molecules": [
            {"mol": "C2H4O2", "nu": -1, "confidence": 0.9},
            {"mol": "CH4O", "nu": -1, "confidence": 0.5},
            {"mol": "H2O", "nu": 1, "confidence": 0.8},
        ],
        "extent_candidates": [1, 2],
        "extent_posterior": [0.2, 0.7, 0.1],
        "beam": [{"prediction": "{1}H2O.{1}C3H6O2", "logp": -0.25}],
    }
    rec.update(kw)
    return rec


def test_each_named_feature_sits_at_its_name() -> None:
    """Read by name, each number is what its name says (a name and a position that drifted apart would not be)."""
    named = dict(zip(FEATURES, record_features(_record()), strict=True))
    assert named["molecules"] == 3.0
    assert named["extent_n"] == 3.0
    assert named["extent_p"] == pytest.approx(0.7)
    assert named["extent_gap"] == pytest.approx(0.5)
    assert named["extent_choices"] == 1.0
    assert named["fallback"] == 0.0
    assert named["score"] == pytest.approx(math.log(0.25 + 1e-4))
    assert named["roles"] == pytest.approx(math.log(-math.log(0.9 * 0.5 * 0.8) + 1e-4))
    assert named["weakest_role"] == pytest.approx(math.log(-math.log(0.5) + 1e-4))
    fallback = dict(zip(FEATURES, record_features(_record(fallback=True, extent_posterior=[])), strict=True))
    assert fallback["fallback"] == 1.0 and fallback["extent_p"] == 1.0 and fallback["extent_n"] == 0.0
    alt = dict(zip(ALT_FEATURES, alternative_features(-0.1, -1.1, 2, 0.5), strict=True))
    assert alt["rank"] == pytest.approx(math.log(3.0)) and alt["top"] == pytest.approx(0.0)
    assert alt["gap"] == pytest.approx(math.log(1.0 + 1e-3))


def test_the_vector_follows_the_registry_names() -> None:
    assert FEATURES == RECORD_FEATURES.names and len(record_features(_record())) == len(FEATURES)
    reg: FeatureRegistry[int] = FeatureRegistry()
    reg.register("double")(lambda x: 2 * x)
    reg.register("square")(lambda x: x * x)
    assert reg.names == ("double", "square") and reg.vector(3) == [6.0, 9.0]
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("double")(lambda x: x)
    assert reg.names == ("double", "square")


def test_a_second_opinion_adds_one_feature_at_the_end() -> None:
    differs = _record(second_opinion={"agrees": False})
    row = record_features(differs, second_opinion=True)
    assert row[: len(FEATURES)] == record_features(differs) and row[-1] == 1.0
    assert record_features(_record(second_opinion={"agrees": True}), second_opinion=True)[-1] == 0.0
