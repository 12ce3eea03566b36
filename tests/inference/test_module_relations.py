"""The prediction modules import one way: each module only from the ones below it, lazy imports included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

INFERENCE = Path(__file__).parents[2] / "gnn_chemalgebra" / "inference"

# module -> the inference modules it must never import (at the top or inside a function)
NEVER = {
    "decode": {"decoder", "predictor", "runner", "report", "run", "predict_command", "stream"},
    "decoder": {"predictor", "runner", "report", "run", "predict_command", "stream"},
    "runner": {"predictor", "decoder", "report", "run", "predict_command", "stream"},
    "report": {"predictor", "runner", "run", "predict_command", "stream"},
    "predictor": {"predict_command", "stream"},
    "edit_repair": {"edit_beam", "edit_decode", "smiles_products", "decoder", "decode"},
    "edit_beam": {"edit_decode", "smiles_products", "decoder", "decode"},
    "edit_decode": {"smiles_products", "decoder", "decode", "predictor"},
    "transformer": {"predictor", "runner", "decoder", "predict_command", "stream"},
    # the decoder's parts: its values, the leftover head, the completion of given products
    "hypotheses": {"decoder", "leftover_head", "given_products", "predictor", "runner", "report", "stream"},
    "leftover_head": {"decoder", "given_products", "predictor", "runner", "report", "stream"},
    "given_products": {"decoder", "leftover_head", "predictor", "runner", "report", "stream"},
    # the typed values and the stages: nothing below calls up
    "prediction": {"decoder", "predictor", "runner", "report", "stream", "pipeline", "predict_command", "api"},
    "stream": {"predictor", "runner", "decoder", "pipeline", "predict_command", "trust_stage", "output"},
    "trust_stage": {"pipeline", "predict_command", "output", "stream"},
    "pipeline": {"predict_command", "output"},
}


def _sibling_imports(module: str) -> set[str]:
    tree = ast.parse((INFERENCE / f"{module}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("module", sorted(NEVER))
def test_module_imports_only_downward(module: str) -> None:
    assert not _sibling_imports(module) & NEVER[module]


def test_the_relations_are_the_documented_ones() -> None:
    assert "decode" in _sibling_imports("decoder")  # the decoder ranks hypotheses, decode.py balances each
    assert {"edit_beam"} <= _sibling_imports("edit_decode") and "edit_repair" in _sibling_imports("edit_beam")
    assert {"runner", "decoder", "report"} <= _sibling_imports("predictor")
