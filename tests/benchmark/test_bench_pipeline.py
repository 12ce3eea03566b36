"""``gnnca bench`` end to end on a toy variant: every stage with a tiny step budget, the records' fields,
resuming (a second run trains and predicts nothing), the table and plot, checking and exporting the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import write_toy_variant
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.integration
SPLITS = {"train": 32, "valid": 8, "test_in": 8, "test_out": 8, "train_cross": 32, "valid_cross": 8, "test_cross": 8}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """Built toy folder (F_T1_x1 and F_T2_x1), one full resumable run; returns paths and the first run's log."""
    root = tmp_path_factory.mktemp("bench")
    for v in ("ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x1"):
        write_toy_variant(root / "built", v, SPLITS)
    (root / "README.md").write_text("# x\n<!-- results-table -->\n<!-- /results-table -->\n")
    result = CliRunner().invoke(app, _args(root))
    assert result.exit_code == 0, result.output
    return root, result.output


def _args(root: Path, *extra: str) -> list[str]:
    return [
        "bench", "run", "--built", str(root / "built"), "--out", str(root / "results"),
        "--runs", str(root / "runs" / "bench"), "--tf-runs", str(root / "runs"), "--readme", str(root / "README.md"),
        "--config", "configs/gnn_tiny.yaml", "--steps", "6", "--naive-limit", "4",
        "--set", "train.tensorboard=false", "--tf-config", "configs/transformer_tiny.yaml", "--tf-steps", "4",
        "--tf-limit-test", "5", "--resume", *extra,
    ]  # fmt: skip


def _records(root: Path, name: str) -> list[dict]:
    return json.loads((root / "results" / f"{name}.json").read_text())


def test_every_stage_writes_its_records(bench):
    root, log = bench
    gnn = _records(root, "gnn")
    cells = {(r["model"], r["variant"], r["setting"]) for r in gnn}
    assert {("gnn", v, s) for v in ("F_T1_x1", "F_T2_x1") for s in ("test_in", "test_out", "test_cross")} <= cells
    assert {("gnn_naive", v, s) for v in ("F_T1_x1", "F_T2_x1") for s in ("test_in", "test_out")} <= cells
    for r in gnn:
        assert r["training_data"] == "local" and r["command"].startswith("gnnca bench run")
        assert r["n"] == (4 if r["model"] == "gnn_naive" else 8) and 0 <= r["EM"] <= 100
        assert 0 < r["train_steps"] <= 6 and {"EM_strict", "val_best", "n_params"} <= set(r)
    assert "the standard model serves" in log  # Type 1: the cross row reuses the standard model
    assert (root / "runs" / "bench" / "F_T2_x1" / "gnn_cross" / "DONE").exists()  # Type 2: a cross model
    tf = _records(root, "transformer")
    assert len(tf) == 6
    for r in tf:
        assert {"steps", "best_step", "train_lines", "batch_size", "tokenizer", "train_s", "command"} <= set(r)
        gnn_steps = max(g["train_steps"] for g in gnn if g["model"] == "gnn" and g["variant"] == r["variant"])
        assert r["steps"] >= max(4, gnn_steps) and r["n"] == 5 and r["tokenizer"] == "formula"
        assert r["train_lines"] == 32 and r["batch_size"] == 16  # the GNN's (gnn_tiny.yaml), not transformer_tiny's 8
    trivial = _records(root, "trivial")
    assert {r["model"] for r in trivial} == {"copy_source", "type1_shortcut"} and len(trivial) == 12
    ceilings = _records(root, "ceilings")
    t2 = next(c for c in ceilings if c["variant"] == "F_T2_x1" and c["setting"] == "test_in")
    assert t2["model"] == "bayes_ceiling" and list(t2["EM_first_n"]) == ["4"]  # the ablation scored 4 lines


def test_merge_outputs_table_plot_and_readme(bench):
    root, _ = bench
    merged = _records(root, "benchmark")
    assert {r["model"] for r in merged} >= {"gnn", "gnn_naive", "transformer", "copy_source", "paper_transformer"}
    table = (root / "results" / "benchmark_table.md").read_text()
    assert table.count("\n| F_T2_x1 |") == 3 and "| F_T1_x1 | test_in | 100.00 |" in table
    assert table.strip() in (root / "README.md").read_text()
    assert (root / "results" / "benchmark.png").read_bytes()[:4] == b"\x89PNG"
    assert "## Verdicts" in (root / "results" / "gnn_table.md").read_text()
    assert "| F_T2_x1 | test_in | 8 |" in (root / "results" / "gnn_errors.md").read_text()


def test_second_run_resumes_without_work(bench):
    root, _ = bench
    before = {p: p.stat().st_mtime_ns for p in (root / "runs").rglob("*") if p.suffix in (".pt", ".txt")}
    gnn = _records(root, "gnn")
    result = CliRunner().invoke(app, _args(root))
    assert result.exit_code == 0, result.output
    assert "train " not in result.output and "EM" not in result.output.split("wrote")[0]
    assert before == {p: p.stat().st_mtime_ns for p in (root / "runs").rglob("*") if p.suffix in (".pt", ".txt")}
    assert _records(root, "gnn") == gnn


def test_check_and_export(bench, tmp_path):
    root, _ = bench
    res = CliRunner().invoke(
        app, ["bench", "check", "--runs", str(root / "runs" / "bench"), "--built", str(root / "built")]
    )
    assert res.exit_code == 0, res.output
    assert "48 of 48 lines balance in 6 prediction files; " in res.output and "of them are fallbacks" in res.output
    dst, card = tmp_path / "gnn.pt", tmp_path / "CARD.md"
    args = ["bench", "export", "--variant", "F_T1_x1", "--to", str(dst), "--card", str(card)]
    args += ["--runs", str(root / "runs" / "bench"), "--results", str(root / "results" / "gnn.json")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    from gnn_chemalgebra.checkpoint import load_checkpoint

    ck = load_checkpoint(dst)
    assert "optimizer" not in ck and {r["setting"] for r in ck["meta"]["test_metrics"]} == {
        "test_in",
        "test_out",
        "test_cross",
    }
    assert "| test_in |" in card.read_text() and "gnnca bench run" in card.read_text()


def test_export_any_run_folder(bench, tmp_path):
    root, _ = bench
    dst = tmp_path / "plain.pt"
    run = root / "runs" / "bench" / "F_T1_x1" / "gnn_std"
    res = CliRunner().invoke(app, ["bench", "export", "--run", str(run), "--to", str(dst)])
    assert res.exit_code == 0, res.output
    from gnn_chemalgebra.checkpoint import load_checkpoint

    ck = load_checkpoint(dst)
    assert "optimizer" not in ck and ck["meta"]["test_metrics"] == [] and ck["meta"]["source_run"].endswith("best.pt")
    res = CliRunner().invoke(app, ["bench", "export", "--to", str(dst)])
    assert res.exit_code == 2 and "give --variant (a bench run) or --run" in res.output
    # into a shipped folder (one with checksums.json): the list is stale until bench compact rewrites it
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "checksums.json").write_text('{"files": {"plain.pt": {"sha256": "0"}}}')
    res = CliRunner().invoke(app, ["bench", "export", "--run", str(run), "--to", str(shipped / "plain.pt")])
    assert res.exit_code == 0 and "run gnnca bench compact" in res.stderr, res.output
    with pytest.raises(InputError, match="checksum mismatch"):
        load_checkpoint(shipped / "plain.pt")
    assert CliRunner().invoke(app, ["bench", "compact", str(shipped)]).exit_code == 0
    assert load_checkpoint(shipped / "plain.pt")["compact"]["dtype"] == "float16"


@pytest.mark.parametrize(
    "extra, message",
    [(["--stages", "gnn,typo"], "unknown stage 'typo'"), (["--variants", "F_T9_x1"], "unknown variant 'F_T9_x1'")],
)
def test_bad_options_are_one_line(bench, extra, message):
    root, _ = bench
    res = CliRunner().invoke(app, _args(root, *extra))
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


def test_missing_built_folder(tmp_path):
    res = CliRunner().invoke(app, ["bench", "run", "--built", str(tmp_path / "nope"), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "built data folder not found" in res.output


def test_decode_ablation_on_a_bench_model(bench, tmp_path):
    root, _ = bench
    ck = root / "runs" / "bench" / "F_T2_x1" / "gnn_std" / "best.pt"
    args = ["bench", "decode-ablation", "--checkpoint", str(ck), "--built", str(root / "built")]
    res = CliRunner().invoke(app, [*args, "--variant", "ChemAlgebra_F_T2_x1", "--settings", "test_in,valid"])
    assert res.exit_code == 0, res.output
    assert "| setting | n | EM off | EM +valence | EM +evidence | EM both | both - off |" in res.output
    assert "| test_in | 8 |" in res.output and "| valid | 8 |" in res.output


def test_a_larger_step_budget_continues_the_transformer_only(bench):
    root, _ = bench
    gnn = _records(root, "gnn")
    res = CliRunner().invoke(
        app, _args(root, "--stages", "gnn,transformer", "--variants", "F_T1_x1", "--tf-steps", "12")
    )
    assert res.exit_code == 0, res.output
    assert "train transformer F_T1_x1 std to 12 steps (resume)" in res.output and "train F_T1_x1 gnn" not in res.output
    tf = [r for r in _records(root, "transformer") if r["variant"] == "F_T1_x1"]
    assert len(tf) == 3 and all(r["steps"] == 12 or r["train"]["stop_reason"] == "early_stopping" for r in tf)
    assert _records(root, "gnn") == gnn


def test_other_training_data_sits_beside_the_local_rows(bench):
    root, _ = bench
    local = [r for r in _records(root, "gnn") if r.get("training_data") == "local"]
    extra = ["--stages", "gnn,merge", "--variants", "F_T1_x1", "--tasks", "std", "--training-data", "local+extra"]
    res = CliRunner().invoke(app, _args(root, *extra))
    assert res.exit_code == 0, res.output
    gnn = _records(root, "gnn")
    assert [r for r in gnn if r.get("training_data") == "local"] == local
    assert {r["setting"] for r in gnn if r.get("training_data") == "local+extra"} == {"test_in", "test_out"}
    assert (root / "runs" / "bench" / "F_T1_x1" / "gnn_std_local_extra" / "DONE").exists()
    assert "gnn (local+extra) EM | gnn (local+extra) norm. | gnn (local+extra) n |" in res.output
    assert "| F_T1_x1 (local_extra) | test_in | 8 |" in (root / "results" / "gnn_errors.md").read_text()


def test_merge_without_results(tmp_path):
    res = CliRunner().invoke(app, ["bench", "run", "--stages", "merge", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "no results to merge" in res.output and "Traceback" not in res.output


def test_a_larger_gnn_budget_continues_the_run_and_refreshes_the_shared_cross_model(bench, tmp_path):
    """A finished Type-1 run given a larger --steps trains on; its test_in/test_out AND test_cross rows (the cross
    folder holds a copy of the standard model) are scored again with the new model, not the stale copy."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(bench[0], root)
    std = root / "runs" / "bench" / "F_T1_x1" / "gnn_std"
    cross = root / "runs" / "bench" / "F_T1_x1" / "gnn_cross"
    assert json.loads((std / "DONE").read_text())["stop_reason"] == "max_steps"
    # a stale copy (as after an earlier resume): another model's bytes in the cross folder
    shutil.copyfile(root / "runs" / "bench" / "F_T2_x1" / "gnn_std" / "best.pt", cross / "best.pt")
    res = CliRunner().invoke(app, [*_args(root, "--stages", "gnn", "--variants", "F_T1_x1"), "--steps", "10"])
    assert res.exit_code == 0, res.output
    assert (
        "train F_T1_x1 gnn std (resume)" in res.output and "prediction files of the earlier model removed" in res.output
    )
    assert (cross / "best.pt").read_bytes() == (std / "best.pt").read_bytes()  # refreshed
    rows = [
        r
        for r in _records(root, "gnn")
        if (r["model"], r["variant"], r["training_data"]) == ("gnn", "F_T1_x1", "local")
    ]
    assert sorted(r["setting"] for r in rows) == ["test_cross", "test_in", "test_out"]
    assert {r["train_steps"] for r in rows} == {10} and {r["stop_reason"] for r in rows} == {"max_steps"}
    again = CliRunner().invoke(app, [*_args(root, "--stages", "gnn", "--variants", "F_T1_x1"), "--steps", "10"])
    assert again.exit_code == 0 and "train " not in again.output  # now up to date: nothing to do


@pytest.mark.parametrize(("stage", "says"), [("gnn", "train F_T1_x1 gnn std (fresh)"), ("transformer", "(fresh)")])
def test_no_resume_trains_again_into_the_used_run_folder(bench, tmp_path, stage, says):
    """--no-resume redoes a stage from scratch: the trainer's refusal to reuse a run folder is lifted for it."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(bench[0], root)
    res = CliRunner().invoke(app, [*_args(root, "--stages", stage, "--variants", "F_T1_x1", "--tasks", "std"),
                                   "--no-resume"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert says in res.output
    if stage == "gnn":
        metrics = root / "runs" / "bench" / "F_T1_x1" / "gnn_std" / "metrics.jsonl"
        steps = [json.loads(x)["step"] for x in metrics.read_text().splitlines()]
        assert steps == sorted(steps)  # one run's curve
