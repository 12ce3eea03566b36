"""A chemist's SMILES line read a second time, in formulas (``decode.formula_check``): among the hypotheses the
SMILES decoder searches, the first whose formulas the formula model writes is written; without agreement the
decoder's order stands, and a named formula model that is missing or reads SMILES is one clear line."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from gnn_chemalgebra.chem.bag import Term, parse_bag
from gnn_chemalgebra.chem.bagfile import parse_reaction_input
from gnn_chemalgebra.chem.molecule import composition
from gnn_chemalgebra.data.dataset import example_from_terms
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.byproduct_convention import chemist_result
from gnn_chemalgebra.inference.decode import decode_bag
from gnn_chemalgebra.inference.decoder import DecodeResult, Hypothesis
from gnn_chemalgebra.inference.formula_check import agreement, formula_bag, formula_example
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"
ACETONIDE_LINE = "{1}CCCCc1ccc(O)c(O)c1.{1}Cc1ccc(S(=O)(=O)O)cc1.{1}CC(C)=O.{1}O.{1}c1ccccc1"


def _beam(line: str, outcomes: list[tuple[float, str, list[str]]]) -> tuple:
    ex = example_from_terms(parse_bag(line), vtype=1)
    nu = {m: -1 for m in ex.mols}
    beam = []
    for score, main, rest in outcomes:
        comps = {m: composition(m, "smiles") for m in [*ex.mols, main, *rest]}
        d = decode_bag(ex.terms, nu, [main, *rest], comps, "smiles", 1, "in", extent_rule="limiting")
        assert d.balanced
        d.main_product = main
        beam.append(Hypothesis(score, d, (0, 0), tuple(rest)))
    return ex, DecodeResult(beam, beam[0], False, "limiting", mode="edit")


@pytest.mark.unit
def test_the_agreeing_hypothesis_is_written_first_among_those_searched() -> None:
    """Benzoic acid and methylamine: the decoder ranks the amide and water first, the tetrahedral adduct (nothing
    leaves) second; a formula model that writes C8H11NO2 moves the adduct first. Searching one entry, or a
    formula model that agrees with neither, moves nothing."""
    ex, res = _beam(
        "{1}O=C(O)c1ccccc1.{1}CN",
        [(-0.1, "CNC(=O)c1ccccc1", ["O"]), (-1.0, "CNC(O)(O)c1ccccc1", [])],
    )

    def first(searched: int, formula_line: str) -> str | None:
        agrees = agreement(parse_bag(formula_line))
        comp = lambda m: composition(m, "smiles")  # noqa: E731
        got = chemist_result(ex, res, "smiles", comp, lambda e, d: True, lambda d: True, searched, 2, agrees)
        return got.beam[0].decoded.main_product

    assert first(2, "{1}C8H11NO2") == "CNC(O)(O)c1ccccc1"
    assert first(1, "{1}C8H11NO2") == "CNC(=O)c1ccccc1"
    assert first(2, "{1}C9H11NO") == "CNC(=O)c1ccccc1"
    assert first(2, "{1}C8H9NO.{1}H2O") == "CNC(=O)c1ccccc1"


@pytest.mark.unit
def test_a_line_in_formulas_keeps_its_coefficients_and_merges_isomers() -> None:
    fx = formula_example(example_from_terms(parse_bag("{2}CCO.{2}COC.{1}[Na+].{1}[OH-]"), vtype=1))
    assert fx is not None
    assert formula_bag(fx.terms, "formula") == Counter({"C2H6O": 4, "Na+": 1, "HO-": 1})
    assert formula_bag([Term(2, "CCO"), Term(1, "O")], "smiles") == Counter({"C2H6O": 2, "H2O": 1})


def _predictor(check: str) -> Predictor:
    opts = PredictorOptions(extent="bayes", byproducts="chemist", overrides=(f"decode.formula_check={check}",))
    return Predictor.from_checkpoint(BUNDLED / "gnn_smiles_chemist.pt", options=opts)


@pytest.mark.integration
def test_the_bundled_pair_reads_an_acetonide_formation_with_the_formula_model() -> None:
    """A catechol and acetone with tosic acid in benzene (a chemist's validation line): the SMILES decoder alone
    writes another product, the formula model the acetonide's formula and water, and with its reading the
    acetonide and water are written."""
    ex = example_from_terms(parse_reaction_input(ACETONIDE_LINE).terms, vtype=1)
    (alone,) = _predictor("").predict([ex])
    (checked,) = _predictor("gnn_formula_chemist.pt").predict([ex])
    acetonide = "CCCCc1ccc2c(c1)OC(C)(C)O2"
    assert acetonide not in alone.prediction
    want = f"{{1}}Cc1ccc(S(=O)(=O)O)cc1.{{1}}O.{{1}}O.{{1}}c1ccccc1.{{1}}{acetonide}"  # water given and made
    assert Counter(parse_bag(checked.prediction)) == Counter(parse_bag(want))
    assert alone.formula_check is None
    assert checked.formula_check is not None and checked.formula_check.agrees
    assert checked.to_json()["formula_check"] == {"prediction": checked.formula_check.prediction, "agrees": True}


@pytest.mark.unit
def test_a_missing_or_smiles_formula_model_is_one_clear_line(tmp_path: Path) -> None:
    shutil.copy(BUNDLED / "gnn_smiles_chemist.pt", tmp_path / "gnn_smiles_chemist.pt")
    shutil.copy(BUNDLED / "edit_chemist.pt", tmp_path / "edit_chemist.pt")
    shutil.copy(BUNDLED / "gnn_smiles_default.pt", tmp_path / "smiles.pt")
    for name, says in (("absent.pt", "formula model"), ("smiles.pt", "reading formulas")):
        opts = PredictorOptions(byproducts="chemist", overrides=(f"decode.formula_check={name}",))
        with pytest.raises(InputError, match=says):
            Predictor.from_checkpoint(tmp_path / "gnn_smiles_chemist.pt", options=opts)
