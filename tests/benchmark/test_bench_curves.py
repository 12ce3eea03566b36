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
