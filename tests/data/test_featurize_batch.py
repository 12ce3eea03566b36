"""The predictor's batch featurisation equals the per-bag one: every tensor the network reads, bit for bit.

``Featurizer.formula_features`` (all new formulas in one pass) against ``formula_graph`` + ``comp_vector`` per
molecule, and ``dataset.collate_examples`` (one batch straight from the per-molecule cache) against
``collate_bags`` of ``to_data(..., labels=False)`` per example, on the golden input lines (formula and
SMILES, Type 1 and 2) and a toy variant.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.chem.bagfile import read_reaction_lines
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.data.bagbatch import collate_bags
from gnn_chemalgebra.data.dataset import (
    ExtraVocab,
    collate_examples,
    example_from_terms,
    load_examples,
    to_data,
    write_toy_variant,
)
from gnn_chemalgebra.data.featurize import Featurizer, comp_vector, formula_features, formula_graph

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).parents[1] / "inference" / "golden"


def _golden_examples(case: str) -> list:
    lines = (GOLDEN / f"{case}.in").read_text().splitlines()
    read = read_reaction_lines(lines, "auto", path=case)
    return [example_from_terms(inp.terms, vtype=2 if case.endswith("t2") else 1) for _, inp in read.inputs]


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def test_formula_features_equal_the_per_molecule_graphs() -> None:
    mols = sorted({m for case in ("formula_t1", "formula_t2") for ex in _golden_examples(case) for m in ex.mols})
    mols += ["H-", "Na+", "O4S-2", "C", "H2", "Cl-", "C6H5N2+", "Fe+3"]  # ions, one-element molecules
    assert len(mols) > 500
    for m, (g, comp) in zip(mols, formula_features(mols), strict=True):
        ref = formula_graph(m)
        assert set(g) == set(ref)
        for key in ref:
            assert _same(g[key], ref[key]), (m, key)
        assert _same(comp, comp_vector(composition(m, "formula"))), m


@pytest.mark.parametrize(
    ("case", "repr"), [("formula_t1", "formula"), ("formula_t2", "formula"), ("smiles_t1", "smiles")]
)
def test_collate_examples_equals_collated_bags(case: str, repr: str) -> None:
    examples = _golden_examples(case)
    for size in (1, 7, 64):
        feat_a, feat_b = Featurizer(repr), Featurizer(repr)  # cold caches each, as in a fresh process
        vocab = ExtraVocab([])
        for s in range(0, min(len(examples), 3 * size), size):
            chunk = examples[s : s + size]
            got = collate_examples(chunk, feat_a)
            ref = collate_bags([to_data(ex, feat_b, vocab, i, labels=False) for i, ex in enumerate(chunk)])
            assert got.num_graphs == ref.num_graphs and got.num_nodes == ref.num_nodes
            keys = set(ref.keys()) - {"num_nodes"}
            assert set(got.keys()) == keys
            for key in keys:
                assert _same(getattr(got, key), getattr(ref, key)), (case, size, key)


def test_collate_examples_on_a_toy_variant(tmp_path: Path) -> None:
    write_toy_variant(tmp_path, "ChemAlgebra_F_T2_x1")
    examples = load_examples(tmp_path, "ChemAlgebra_F_T2_x1", "train")
    feat = Featurizer("formula")
    got = collate_examples(examples, feat)
    ref = collate_bags([to_data(ex, feat, ExtraVocab([]), i, labels=False) for i, ex in enumerate(examples)])
    for key in set(ref.keys()) - {"num_nodes"}:
        assert _same(getattr(got, key), getattr(ref, key)), key
