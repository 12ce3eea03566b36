"""``gnnca bench edits``: the bond-edit model trained (tiny) when its checkpoint is missing, then scored on
USPTO-BAL-format records: top-k main products, validity, balance, the gold-edit ceiling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app

pytestmark = pytest.mark.integration
RECORDS = (Path(__file__).parents[1] / "edit_records.jsonl").read_text().splitlines()


def test_edit_benchmark_trains_then_scores(tmp_path):
    bal = tmp_path / "data" / "uspto_bal"
    bal.mkdir(parents=True)
    for split in ("train", "valid", "test"):  # seven real records: the pipeline is under test, not generalisation
        (bal / f"reactions-{split}.jsonl").write_text("\n".join(RECORDS) + "\n")
    out = tmp_path / "edits.json"
    args = ["bench", "edits", "--config", "configs/edits_tiny.yaml", "--set", f"data.dir={tmp_path / 'data'}"]
    args += ["--set", f"run_dir={tmp_path / 'run'}", "--set", "train.epochs=1", "--limit", "6", "--beam", "3"]
    res = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    m = report["metrics"]
    assert m["n"] == 6 and 0 <= m["top1"] <= m["top5"] <= 1
    assert m["gold_edit_ceiling"] == 1.0 and m["reactions_per_s"] > 0
    assert (tmp_path / "run" / "best.pt").exists() and report["subset"] == "first 6 records"
    assert report["training_data"] == "local" and report["training"]["sources"]["train"]["by_source"]["local"] == {
        "read": 7, "used": 7, "skipped": {}
    }  # fmt: skip


def test_edit_label_report(tmp_path):
    bal = tmp_path / "data" / "uspto_bal"
    bal.mkdir(parents=True)
    (bal / "reactions-test.jsonl").write_text("\n".join(RECORDS) + "\n")
    res = CliRunner().invoke(app, ["bench", "edit-labels", "--data", str(tmp_path / "data"), "--split", "test"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output.split("JSON ", 1)[1])
    assert report["reactions"] == len(RECORDS) and report["reproduced"] + sum(report["failure_causes"].values()) == len(
        RECORDS
    )
    assert f"## Gold edit labels: test (all) ({len(RECORDS)} base reactions" in res.output
    res = CliRunner().invoke(app, ["bench", "edit-labels", "--data", str(tmp_path / "data"), "--split", "valid"])
    assert res.exit_code == 2 and "no USPTO-BAL reactions file" in res.output


def test_training_data_of_a_checkpoint_without_summary(tmp_path):
    from gnn_chemalgebra.benchmark.edits import _training_data_of_checkpoint
    from gnn_chemalgebra.checkpoint import save_checkpoint

    (tmp_path / "manifest.json").write_text(json.dumps({"variants": {}}))
    ck = tmp_path / "e.pt"
    save_checkpoint(ck, {"model": {}, "config": {"data": {"dir": str(tmp_path)}}})
    assert _training_data_of_checkpoint(ck) == "local"  # a build without extra reactions
    extra = {"sources": {"uspto_full": {"kept": 3}, "uspto_500_mt": {"kept": 2}}}
    (tmp_path / "manifest.json").write_text(json.dumps({"variants": {}, "extra": extra}))
    assert _training_data_of_checkpoint(ck) == "local+extra"  # every source: the mapped USPTO-full ones train
    for sources, label in (
        ("local,uspto_full", "local+extra"),
        ("local,uspto_500_mt", "local"),
        ("uspto_full", "extra"),
    ):
        save_checkpoint(ck, {"model": {}, "config": {"data": {"dir": str(tmp_path), "edit_sources": sources}}})
        assert _training_data_of_checkpoint(ck) == label, sources
    save_checkpoint(ck, {"model": {}, "config": {"data": {"dir": str(tmp_path / "gone")}}})
    assert _training_data_of_checkpoint(ck) is None
