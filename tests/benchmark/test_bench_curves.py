"""Learning curves from metrics.jsonl: Transformer and GNN rows read, a resumed run's repeated step counted
once (last value wins), a line cut by a kill ignored, the PNG written, and a missing run one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.benchmark.curves import read_curve
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit


def _run(root: Path, name: str, rows: list[dict], tail: str = "") -> Path:
    d = root / name
    d.mkdir(parents=True)
    text = "".join(json.dumps(r) + "\n" for r in rows) + tail
    (d / "metrics.jsonl").write_text(text)
    return d


def _tf_rows() -> list[dict]:
    return [
        {"step": 500, "train/total": 2.0, "train/lr": 1e-3},
        {"step": 500, "val/val_loss": 1.5, "val/val_token_acc": 70.0, "val/val_em": 0.0},
        {"step": 1000, "val/val_loss": 1.2, "val/val_token_acc": 74.0, "val/val_em": 0.0},
        {"step": 1000, "val/val_loss": 1.1, "val/val_token_acc": 75.0, "val/val_em": 0.0},  # after a resume
        {"step": 1500, "val/val_loss": 1.0, "val/val_token_acc": 77.0, "val/val_em": 1.5},
        {"step": 2000, "val/val_loss": 0.9, "val/val_token_acc": 78.0, "val/val_em": 1.5},
    ]


def test_read_curve_dedupes_steps_and_finds_the_best(tmp_path: Path) -> None:
    c = read_curve(_run(tmp_path, "tf", _tf_rows(), tail='{"step": 25'), "tf")
    assert c.steps == [500, 1000, 1500, 2000] and c.is_transformer
    assert c.token_acc[1] == 75.0  # the resumed value
    assert c.best() == (2000, 1.5)  # EM ties at 1,500 and 2,000: token accuracy decides (77 < 78), as the monitor
    g = read_curve(_run(tmp_path, "gnn", [{"step": 186, "val/EM": 63.7, "val/loss": 0.4}]))
    assert g.label == "gnn" and not g.is_transformer and g.best() == (186, 63.7)


def test_broken_or_missing_metrics_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no metrics.jsonl"):
        read_curve(tmp_path / "nothing")
    with pytest.raises(InputError, match=r"metrics.jsonl:1"):
        read_curve(_run(tmp_path, "bad", [], tail="{oops\n{}\n"))
    with pytest.raises(InputError, match="no validation rows"):
        read_curve(_run(tmp_path, "train_only", [{"step": 1, "train/total": 1.0}]))


def test_cli_writes_the_png(tmp_path: Path) -> None:
    tf = _run(tmp_path, "tf", _tf_rows())
    gnn = _run(tmp_path, "gnn", [{"step": 186, "val/EM": 63.7}, {"step": 372, "val/EM": 67.7}])
    out = tmp_path / "curves.png"
    res = CliRunner().invoke(app, ["bench", "curves", "--run", f"Transformer={tf}", "--run", f"GNN={gnn}",
                                   "--out", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [(r["label"], r["best_step"], r["last_step"]) for r in rows] == [
        ("Transformer", 2000, 2000),
        ("GNN", 372, 372),
    ]
    res = CliRunner().invoke(app, ["bench", "curves", "--run", str(tmp_path / "missing"), "--out", str(out)])
    assert res.exit_code == 2 and "gnnca: error:" in res.output and "Traceback" not in res.output


def test_grid_of_cells_and_saved_rows_redraw_the_same_curves(tmp_path: Path) -> None:
    """PANEL|LABEL=DIR gives one panel per cell; --save-rows keeps each run's validation rows, which read back
    (file instead of folder) as the same curve, so a figure can be redrawn after the run folders are gone."""
    tf = _run(tmp_path, "tf", _tf_rows())
    gnn = _run(tmp_path, "gnn", [{"step": 100, "val/EM": 40.0}, {"step": 200, "val/EM": 55.5}])
    out, rows = tmp_path / "grid.png", tmp_path / "rows"
    args = ["bench", "curves", "--out", str(out), "--save-rows", str(rows)]
    args += ["--run", f"F_T1_x1 std|Transformer={tf}", "--run", f"F_T1_x1 std|GNN={gnn}"]
    args += ["--run", f"F_T2_x1 std|Transformer={tf}"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 10_000
    lines = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    assert [r["panel"] for r in lines] == ["F_T1_x1 std", "F_T1_x1 std", "F_T2_x1 std"]
    assert lines[1]["best_step"] == 200 and lines[1]["best_em"] == 55.5
    saved = [Path(r["rows_file"]) for r in lines]
    assert saved[0].name == "f_t1_x1_std_transformer.jsonl" and len(set(saved)) == 3
    for path, src in zip(saved, (tf, gnn, tf), strict=True):
        again, orig = read_curve(path), read_curve(src)
        assert (again.steps, again.em, again.token_acc) == (orig.steps, orig.em, orig.token_acc)
        assert again.is_transformer == orig.is_transformer


def test_panel_spec_parsing() -> None:
    from gnn_chemalgebra.benchmark.curves import parse_panel_spec

    assert parse_panel_spec("F_T1_x1|GNN=runs/a") == ("F_T1_x1", "GNN", Path("runs/a"))
    assert parse_panel_spec("GNN=runs/a") == ("", "GNN", Path("runs/a"))
    assert parse_panel_spec("runs/a") == ("", "", Path("runs/a"))


def test_gnn_runs_alone_get_one_panel_zoomed_to_their_range(tmp_path: Path) -> None:
    """No token accuracy to show: no empty second panel."""
    import matplotlib.image as mpimg

    from gnn_chemalgebra.benchmark.curves import plot_curves

    gnn = read_curve(_run(tmp_path, "gnn", [{"step": 186, "val/EM": 78.4}, {"step": 372, "val/EM": 84.4}]), "GNN")
    tf = read_curve(_run(tmp_path, "tf", _tf_rows()), "Transformer")
    alone = mpimg.imread(plot_curves([gnn], tmp_path / "alone.png"))
    both = mpimg.imread(plot_curves([gnn, tf], tmp_path / "both.png"))
    assert alone.shape[0] == both.shape[0] and alone.shape[1] < 0.7 * both.shape[1]
