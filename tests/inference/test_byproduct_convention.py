"""The by-product convention of written lines: the benchmark's leftover chains or a chemist's real molecules, which
one a line gets, and the given-products completion writing the exact leftover as a real molecule first."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.chem.bag import Term, parse_bag
from gnn_chemalgebra.chem.bagfile import parse_reaction_input
from gnn_chemalgebra.chem.molecule import bag_composition, composition
from gnn_chemalgebra.data.dataset import ExtraVocab, example_from_terms
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.byproduct_convention import (
    chemist_decoding,
    chemist_result,
    merge_new_terms,
    resolve_byproducts,
    split_species,
)
from gnn_chemalgebra.inference.decode import decode_bag
from gnn_chemalgebra.inference.decoder import DecodeResult, Hypothesis
from gnn_chemalgebra.inference.predictor import Predictor

TINY = {"hidden": 16, "layers": 1, "heads": 2, "dropout": 0.0}


@pytest.mark.unit
@pytest.mark.parametrize(
    ("option", "path", "extent", "expected"),
    [
        ("auto", "built/full/ChemAlgebra_S_T1_x1/src-test_in.txt", "auto", "benchmark"),
        ("auto", None, "auto", "chemist"),  # stdin
        ("auto", "my_reactions.txt", "limiting", "chemist"),
        ("auto", None, "bayes", "benchmark"),  # the benchmark's extent rule: its evaluation
        ("chemist", "src-test_in.txt", "bayes", "chemist"),  # asked for: as asked
        ("benchmark", None, "auto", "benchmark"),
    ],
)
def test_the_convention_follows_the_input(option: str, path: str | None, extent: str, expected: str) -> None:
    assert resolve_byproducts(option, path, extent) == expected


@pytest.mark.unit
def test_an_unknown_convention_is_one_clear_error() -> None:
    with pytest.raises(InputError, match="--byproducts must be one of auto, benchmark, chemist"):
        resolve_byproducts("chemists", None)


@pytest.mark.unit
def test_salts_as_ions_and_repeated_molecules_are_written_once_each() -> None:
    assert split_species([("[Br-].[Na+]", 2), ("O", 1), ("[Na+]", 1)], "smiles") == [
        ("[Br-]", 2),
        ("[Na+]", 3),
        ("O", 1),
    ]
    assert split_species([("CuSO4.5H2O", 1)], "formula") == [("CuSO4.5H2O", 1)]  # a formula's dot is a hydrate
    terms = [Term(1, "CCOC(C)=O"), Term(1, "O"), Term(1, "O"), Term(2, "CCO")]
    assert merge_new_terms(terms, ["CCO"]) == [Term(1, "CCOC(C)=O"), Term(2, "O"), Term(2, "CCO")]


def _example(line: str):  # noqa: ANN202 - a BagExample
    return example_from_terms(parse_bag(line, default_coef=1), vtype=1)


@pytest.mark.unit
def test_a_benchmark_line_is_rewritten_with_water() -> None:
    """Fischer esterification as the benchmark writes it (the ester, an oxygen atom and a hydrogen filler) becomes
    the ester and water, at the limiting extent of the amounts written."""
    ex = _example("{2}CC(=O)O.{3}CCO")
    comps = {m: composition(m, "smiles") for m in ["CC(=O)O", "CCO", "CCOC(C)=O", "[O]", "[H][H]"]}
    nu = {"CC(=O)O": -1, "CCO": -1}
    d = decode_bag(ex.terms, nu, ["CCOC(C)=O", "[O]", "[H][H]"], comps, "smiles", 1, "in", extent_rule="limiting")
    assert d.balanced and d.xi == 2
    d.main_product = "CCOC(C)=O"
    got = chemist_decoding(ex, Hypothesis(0.0, d, (0, 0), ("[O]", "[H][H]")), "smiles", _comp, "limiting")
    assert not isinstance(got, str)
    new, names = got
    assert names == ("O",) and new.xi == 2 and new.main_product == "CCOC(C)=O"
    assert ".".join(str(t) for t in new.terms) == "{1}CCO.{2}CCOC(C)=O.{2}O"
    assert bag_composition(".".join(str(t) for t in new.terms), "smiles") == bag_composition(
        "{2}CC(=O)O.{3}CCO", "smiles"
    )


@pytest.mark.unit
def test_a_line_no_real_molecules_close_says_why() -> None:
    ex = _example("{1}CC(C)=O.{1}[BH4-].{1}[Na+]")
    comps = {m: composition(m, "smiles") for m in [*ex.mols, "CCC", "O", "[B-]"]}
    d = decode_bag(ex.terms, {"CC(C)=O": -1, "[BH4-]": -1}, ["CCC", "O", "[B-]"], comps, "smiles", 1, "in")
    d.main_product = "CCC"
    got = chemist_decoding(ex, Hypothesis(0.0, d, (0, 0, 1), ("O", "[B-]")), "smiles", _comp, "bayes")
    assert isinstance(got, str) and "B, H, O do not balance" in got


def _imine_beam() -> tuple:
    """Benzaldehyde + methylamine as an edit model may rank it: the amine and an oxygen atom first (no real
    molecule is one oxygen atom), the imine and water second."""
    ex = _example("{1}O=Cc1ccccc1.{1}CN")
    nu = {"O=Cc1ccccc1": -1, "CN": -1}
    beam = []
    for score, main, rest in [(-0.1, "CNCc1ccccc1", "[O]"), (-1.0, "CN=Cc1ccccc1", "O")]:
        comps = {m: composition(m, "smiles") for m in [*ex.mols, main, rest]}
        d = decode_bag(ex.terms, nu, [main, rest], comps, "smiles", 1, "in", extent_rule="limiting")
        assert d.balanced
        d.main_product = main
        beam.append(Hypothesis(score, d, (0, 0), (rest,)))
    return ex, DecodeResult(beam, beam[0], False, "limiting", mode="edit")


def _line(h: Hypothesis) -> str:
    return ".".join(str(t) for t in h.decoded.terms)


@pytest.mark.unit
@pytest.mark.parametrize(("searched", "written"), [(1, "{1}CNCc1ccccc1.{1}[O]"), (2, "{1}CN=Cc1ccccc1.{1}O")])
def test_a_line_real_molecules_close_is_written_before_one_they_do_not(searched: int, written: str) -> None:
    """Searching the first two entries writes the imine and water; the first alone keeps the amine, with the
    note that says why. Either way the beam keeps the entries asked for, and the written line is its first."""
    ex, res = _imine_beam()
    got = chemist_result(ex, res, "smiles", _comp, lambda e, d: True, lambda d: True, searched, keep=2)
    assert _line(got.beam[0]) == _line(got.chosen) == written and len(got.beam) == 2
    assert (got.convention, got.convention_note is None) == (
        ("chemist", True) if searched == 2 else ("benchmark", False)
    )
    one = chemist_result(ex, res, "smiles", _comp, lambda e, d: True, lambda d: True, searched, keep=1)
    assert [_line(h) for h in one.beam] == [written]


@pytest.mark.unit
def test_an_unacceptable_line_stays_behind_even_when_real_molecules_close_it() -> None:
    ex, res = _imine_beam()
    got = chemist_result(ex, res, "smiles", _comp, lambda e, d: True, lambda d: d.main_product != "CN=Cc1ccccc1", 2)
    assert _line(got.beam[0]) == "{1}CNCc1ccccc1.{1}[O]"


def _comp(m: str):  # noqa: ANN202 - a Counter
    return composition(m, "smiles")


def _record(pred: Predictor, line: str) -> dict:
    inp = parse_reaction_input(line)
    (rec,) = pred.predict([example_from_terms(inp.terms, vtype=1)])
    return rec.to_json()


@pytest.mark.unit
@pytest.mark.parametrize("convention", ["benchmark", "chemist"])
def test_given_products_leaving_water_write_water(convention: str) -> None:
    """Untrained SMILES model without water in its vocabulary: the leftover H2O is no benchmark chain, and the
    completion writes it as water before anything the model proposes, in either convention."""
    pred = Predictor.build(TINY, Featurizer("smiles"), ExtraVocab(["Cl", "[H][H]", "[O]"]), 1)
    pred.byproducts = convention
    rec = _record(pred, "CC(=O)O.NCc1ccccc1>>CC(=O)NCc1ccccc1")
    assert rec["prediction"] == "{1}CC(=O)NCc1ccccc1.{1}O" and not rec["fallback"]
    assert rec["equation"] == "CC(=O)O + NCc1ccccc1 -> CC(=O)NCc1ccccc1 + O"
    assert rec["byproduct_convention"] == "chemist" and "byproduct_note" not in rec
    rec = _record(pred, "CCCCCBr.[Na+].[N-]=[N+]=[N-]>>CCCCCN=[N+]=[N-]")  # the salt, written as its ions
    assert rec["prediction"] == "{1}CCCCCN=[N+]=[N-].{1}[Br-].{1}[Na+]"


@pytest.mark.unit
def test_a_predictor_writes_one_convention() -> None:
    pred = Predictor.build(TINY, Featurizer("smiles"), ExtraVocab(["Cl"]), 1)
    assert pred.byproducts == "benchmark"  # the default of a predictor: evaluation and benchmark stages
    with pytest.raises(InputError):
        pred.byproducts = "auto"


def _predict(args: list[str], stdin: str):  # noqa: ANN202 - click's Result
    from gnn_chemalgebra.cli import app

    return CliRunner().invoke(app, ["predict", "-", *args], input=stdin)


@pytest.mark.integration
def test_cli_given_products_write_the_real_leftover(monkeypatch: pytest.MonkeyPatch) -> None:
    """``echo 'CC(=O)O.NCc1ccccc1>>CC(=O)NCc1ccccc1' | gnnca predict -`` writes the amide and water, no fallback;
    ``CCO>>C=C`` ethylene and water; formula lines too."""
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    res = _predict([], "CC(=O)O.NCc1ccccc1>>CC(=O)NCc1ccccc1\nCCO>>C=C\n")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["{1}CC(=O)NCc1ccccc1.{1}O", "{1}C=C.{1}O"]
    assert "fallback" not in res.stderr
    res = _predict(["--json"], "C2H4O2.C7H9N>>C9H11NO\nC2H6O>>C2H4\n")
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in res.stdout.splitlines()]
    assert [r["prediction"] for r in recs] == ["{1}C9H11NO.{1}H2O", "{1}C2H4.{1}H2O"]
    assert all(r["byproduct_convention"] == "chemist" and not r["fallback"] for r in recs)


AZIDE = "{3}[H][H].{3}CO.{3}[N-]=[N+]=NCCOc1ccc(C(=C(c2ccc(F)cc2)C(F)(F)F)c2ccccc2)cc1\n"  # a benchmark test line
AMINE = "NCCOc1ccc(C(=C(c2ccc(F)cc2)C(F)(F)F)c2ccccc2)cc1"


@pytest.mark.integration
def test_cli_bags_use_real_by_products_and_benchmark_lines_keep_theirs(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """An azide reduced by hydrogen: the benchmark writes the nitrogen given off as its leftover chain ``[N+][N-]``,
    a chemist as N2. The user's line (stdin) gets N2; with ``--byproducts benchmark``, or as a line of a benchmark
    source file, the benchmark's chain; ``--json`` says which convention wrote each line."""
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    bench = _predict(["--byproducts", "benchmark", "--json"], AZIDE)
    chem = _predict(["--json"], AZIDE)
    assert bench.exit_code == 0 and chem.exit_code == 0, bench.output + chem.output
    b, c = json.loads(bench.stdout), json.loads(chem.stdout)
    assert b["prediction"] == f"{{3}}CO.{{3}}{AMINE}.{{3}}[N+][N-]" and b["byproduct_convention"] == "benchmark"
    assert c["prediction"] == f"{{3}}CO.{{3}}{AMINE}.{{3}}N#N" and c["byproduct_convention"] == "chemist"
    assert c["main_product"] == b["main_product"] == AMINE and c["extent"] == b["extent"] == 3
    assert bag_composition(c["prediction"], "smiles") == bag_composition(AZIDE.strip(), "smiles")
    src = tmp_path / "src-test_in.txt"
    src.write_text(AZIDE)
    from gnn_chemalgebra.cli import app

    res = CliRunner().invoke(app, ["predict", str(src)])
    assert res.exit_code == 0 and res.stdout.strip() == b["prediction"]


@pytest.mark.integration
def test_the_api_writes_a_chemists_line_unless_asked_for_the_benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    from gnn_chemalgebra import load_predictor

    (chem,) = load_predictor().predict(AZIDE)
    (bench,) = load_predictor(extent="bayes").predict(AZIDE)
    assert chem.prediction.endswith(".{3}N#N") and chem.record["byproduct_convention"] == "chemist"
    assert bench.prediction.endswith(".{3}[N+][N-]") and bench.record["byproduct_convention"] == "benchmark"
    with pytest.raises(InputError, match="--byproducts must be one of"):
        load_predictor(byproducts="real")
