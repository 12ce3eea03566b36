"""``--draw`` as a chemist draws: coefficients before molecules, reagents above the arrow, the
benchmark's leftover chain marked, one image per line or a grid."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.draw import ROWS_PER_PAGE, draw_reactions, equation_of

pytestmark = pytest.mark.unit

WATER = {
    "line": 7,
    "source": "{2}[H][H].{1}O=O.{3}[Pt]",
    "prediction": "{3}[Pt].{2}O",
    "extent": 1,
    "confidence": 0.9,
    "new_products": ["O"],
    "main_product": "O",
}
ACYLATION = {
    "line": 1,
    "source": "{2}CC(=O)Cl.{3}NCc1ccccc1.{1}CCN(CC)CC.{5}ClCCl",
    "prediction": "{1}CC(=O)Cl.{2}NCc1ccccc1.{1}CCN(CC)CC.{5}ClCCl.{1}Cl.{1}CC(=O)NCc1ccccc1",
    "extent": 1,
    "extent_rule": "bayes",
    "confidence": 0.99,
    "leftover": "Cl",
    "new_products": ["CC(=O)NCc1ccccc1", "Cl"],
    "main_product": "CC(=O)NCc1ccccc1",
}
LEFTOVER_ORANGE = (214, 110, 0)
FALLBACK_RED = (190, 30, 30)


def _has_color(path: Path, rgb: tuple[int, int, int]) -> bool:
    img = Image.open(path).convert("RGB")
    return any(c == rgb for _, c in img.getcolors(maxcolors=1 << 20) or [])


def test_equation_reads_coefficients_reagents_and_leftover() -> None:
    eq = equation_of(WATER)
    assert eq.reactants == [(2, "[H][H]"), (1, "O=O")]  # 2 H2 + O2 -> 2 H2O, Pt above the arrow
    assert eq.products == [(2, "O")] and eq.reagents == ["[Pt]"] and not eq.leftovers and not eq.fallback
    eq = equation_of(ACYLATION)
    assert eq.reactants == [(1, "CC(=O)Cl"), (1, "NCc1ccccc1")]
    assert eq.products == [(1, "CC(=O)NCc1ccccc1"), (1, "Cl")]  # main product first, the chain last
    assert eq.reagents == ["CCN(CC)CC", "ClCCl"] and eq.leftovers == {"Cl"}
    assert "line 1" in eq.caption and "\u03be = 1 (bayes)" in eq.caption


def test_equation_divides_the_change_by_the_extent() -> None:
    eq = equation_of({"line": 2, "source": "{4}[H][H].{3}O=O", "prediction": "{1}O=O.{4}O"})
    assert eq.reactants == [(2, "[H][H]"), (1, "O=O")] and eq.products == [(2, "O")]


def test_fallback_line_is_said_and_drawn_with_a_crossed_arrow(tmp_path: Path) -> None:
    rec = {"line": 3, "source": "{1}CCO.{1}CC(=O)O", "prediction": "{1}CCO.{1}CC(=O)O", "fallback": True}
    eq = equation_of(rec)
    assert eq.fallback and "fallback" in eq.caption
    (out,) = draw_reactions([rec], tmp_path / "fb.png", "smiles")
    assert _has_color(out, FALLBACK_RED)
    (out,) = draw_reactions([WATER], tmp_path / "ok.png", "smiles")
    assert not _has_color(out, FALLBACK_RED)


def test_leftover_chain_is_framed(tmp_path: Path) -> None:
    (with_chain,) = draw_reactions([ACYLATION], tmp_path / "a.png", "smiles")
    (without,) = draw_reactions([WATER], tmp_path / "w.png", "smiles")
    assert _has_color(with_chain, LEFTOVER_ORANGE) and not _has_color(without, LEFTOVER_ORANGE)


def test_one_image_a_grid_pages_or_one_per_line(tmp_path: Path) -> None:
    (single,) = draw_reactions([WATER], tmp_path / "one.png", "smiles")
    (grid,) = draw_reactions([WATER, ACYLATION], tmp_path / "grid.png", "smiles")
    assert Image.open(grid).height > Image.open(single).height
    many = [dict(WATER, line=i) for i in range(1, ROWS_PER_PAGE + 3)]
    pages = draw_reactions(many, tmp_path / "many.png", "smiles")
    assert [p.name for p in pages] == ["many_1.png", "many_2.png"]
    folder = tmp_path / "each"
    folder.mkdir()
    each = draw_reactions([WATER, ACYLATION], folder, "smiles")
    assert sorted(p.name for p in each) == ["line_1.png", "line_7.png"]


def test_formula_predictions_are_drawn_as_text(tmp_path: Path) -> None:
    rec = {"line": 1, "source": "{2}H2.{1}O2", "prediction": "{2}H2O", "new_products": ["H2O"], "main_product": "H2O"}
    (out,) = draw_reactions([rec], tmp_path / "f.png", "formula")
    assert Image.open(out).width > 100


def test_nothing_to_draw_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nothing to draw"):
        draw_reactions([], tmp_path / "x.png", "smiles")


@pytest.mark.integration
def test_predict_draw_through_the_cli(tmp_path: Path) -> None:
    from gnn_chemalgebra.cli import app

    src = tmp_path / "in.txt"
    src.write_text("{2}C7H8.{3}O2\n{1}C6H12O6\n")
    result = CliRunner().invoke(app, ["predict", str(src), "--draw", str(tmp_path / "pred.png")])
    assert result.exit_code == 0, result.output
    assert Image.open(tmp_path / "pred.png").height > 100
