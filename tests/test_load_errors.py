"""Every load failure (checkpoint, config, data folder) is one line ``gnnca: error: PATH: reason``,
exit code 2, no traceback, through the real command line."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit

BUNDLED = Path(__file__).resolve().parents[1] / "gnn_chemalgebra" / "checkpoints"
runner = CliRunner()


def _one_error_line(result, path: Path | str, reason: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert re.match(re.escape(f"gnnca: error: {path}") + r"(:\d+)?: ", lines[0]), lines[0]  # the line when known
    assert reason in lines[0], lines[0]


def _foreign_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, expected reason) for every kind of file that is not a GNN checkpoint."""
    (tmp / "text.pt").write_text("hello, I am not a checkpoint\n")
    (tmp / "empty.pt").write_bytes(b"")
    torch.save({"weights": torch.randn(3)}, tmp / "random.pt")
    torch.save(torch.randn(4), tmp / "tensor.pt")
    with open(tmp / "pickled.pt", "wb") as fh:
        pickle.dump({"model": {1, 2}}, fh)
    (tmp / "truncated.pt").write_bytes((BUNDLED / "gnn_default.pt").read_bytes()[:2000])
    (tmp / "folder.pt").mkdir()
    return {
        "text": (tmp / "text.pt", "not a PyTorch checkpoint (a text file)"),
        "empty": (tmp / "empty.pt", "empty file"),
        "random": (tmp / "random.pt", "missing 'model'"),
        "tensor": (tmp / "tensor.pt", "holds a Tensor"),
        "pickled": (tmp / "pickled.pt", "safe load (weights_only) refuses"),
        "truncated": (tmp / "truncated.pt", "corrupt or truncated"),
        "folder": (tmp / "folder.pt", "is a folder"),
        "edit model as GNN": (BUNDLED / "edit_default.pt", "'edits' checkpoint, the bond-edit model"),
    }


@pytest.mark.parametrize(
    "kind", ["text", "empty", "random", "tensor", "pickled", "truncated", "folder", "edit model as GNN"]
)
def test_predict_with_a_foreign_checkpoint_is_one_line(tmp_path: Path, kind: str) -> None:
    path, reason = _foreign_files(tmp_path)[kind]
    src = tmp_path / "in.txt"
    src.write_text("{1}CCO.{1}CC(=O)O\n")
    result = runner.invoke(app, ["predict", str(src), "--checkpoint", str(path)])
    _one_error_line(result, path, reason)


def test_predict_with_a_foreign_edit_checkpoint_is_one_line(tmp_path: Path) -> None:
    path, reason = _foreign_files(tmp_path)["random"]
    src = tmp_path / "in.txt"
    src.write_text("{1}CCO.{1}CC(=O)O\n")
    args = ["predict", str(src), "--checkpoint", str(BUNDLED / "gnn_smiles_default.pt"), "--edit-checkpoint", str(path)]
    _one_error_line(runner.invoke(app, args), path, reason)


def test_load_checkpoint_round_trip_and_require(tmp_path: Path) -> None:
    save_checkpoint(tmp_path / "ok.pt", {"model": {"w": torch.zeros(2)}, "config": {"a": 1}})
    ck = load_checkpoint(tmp_path / "ok.pt", require=("model", "config"))
    assert ck["config"] == {"a": 1} and torch.equal(ck["model"]["w"], torch.zeros(2))
    with pytest.raises(InputError, match="not a special checkpoint: missing 'featurizer'"):
        load_checkpoint(tmp_path / "ok.pt", require=("featurizer",), kind="special")


def test_corrupt_json_entry_is_one_line(tmp_path: Path) -> None:
    torch.save({"model": {}, "config_json": "{not json"}, tmp_path / "bad.pt")
    with pytest.raises(InputError, match="entry 'config_json' is not JSON"):
        load_checkpoint(tmp_path / "bad.pt")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"model: [unclosed\n  x: :\n", "invalid YAML"),
        (b"\x80\x04\x95\x00\xff\xfe", "UTF-8"),
        (b"- 1\n- 2\n", "mapping"),
    ],
)
def test_train_with_an_unreadable_config_is_one_line(tmp_path: Path, content: bytes, reason: str) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_bytes(content)
    _one_error_line(runner.invoke(app, ["train", "--config", str(cfg)]), cfg, reason)


def test_train_with_a_missing_or_folder_config_is_one_line(tmp_path: Path) -> None:
    _one_error_line(runner.invoke(app, ["train", "--config", str(tmp_path / "no.yaml")]), tmp_path / "no.yaml", "")
    _one_error_line(runner.invoke(app, ["train", "--config", str(tmp_path)]), tmp_path, "folder")


def test_train_with_a_missing_data_folder_names_it(tmp_path: Path) -> None:
    cfg = Path(__file__).resolve().parents[1] / "configs" / "gnn_tiny.yaml"
    missing = tmp_path / "no_such_data"
    args = ["train", "--config", str(cfg), "--set", f"data.dir={missing}", "--set", f"run_dir={tmp_path / 'run'}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"gnnca: error: {missing}"), result.stderr
    assert f"folder {missing} does not exist" in lines[0] or "not found" in lines[0]


def test_evaluate_and_ceiling_with_a_missing_data_folder_are_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nothing"
    a_file = tmp_path / "file.txt"
    a_file.write_text("x\n")
    result = runner.invoke(app, ["evaluate", "--pred-dir", str(tmp_path), "--data-dir", str(missing)])
    _one_error_line(result, missing, "--data-dir folder not found")
    result = runner.invoke(app, ["evaluate", "--pred-dir", str(a_file), "--data-dir", str(tmp_path)])
    _one_error_line(result, a_file, "--pred-dir is a file, not a folder")
    _one_error_line(runner.invoke(app, ["ceiling", str(missing)]), missing, "data folder not found")


def test_missing_prediction_file_is_one_line(tmp_path: Path) -> None:
    tgt = tmp_path / "tgt.txt"
    tgt.write_text("{1}O\n")
    missing = tmp_path / "sub" / "pred.txt"
    result = runner.invoke(app, ["evaluate", "--pred", str(missing), "--tgt", str(tgt), "--repr", "smiles"])
    _one_error_line(result, missing, f"(folder {tmp_path / 'sub'} does not exist)")


def test_a_broken_checkpoint_with_stdin_input_is_one_line(tmp_path: Path) -> None:
    """`gnnca predict - --checkpoint broken.pt` must not print torch's four-line message."""
    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"PK\x03\x04 this zip archive was cut short")
    result = runner.invoke(app, ["predict", "-", "--checkpoint", str(broken)], input="{1}CCO.{1}CC(=O)O\n")
    _one_error_line(result, broken, "corrupt or truncated PyTorch checkpoint")


def test_a_foreign_edit_checkpoint_loaded_for_the_first_line_names_no_input_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled SMILES model loads when the first SMILES line is read; a bad --edit-checkpoint then is the
    checkpoint's error, not the input's: no ``:1`` after the checkpoint's name."""
    monkeypatch.delenv("GNNCA_CHECKPOINT", raising=False)
    path, reason = _foreign_files(tmp_path)["text"]
    src = tmp_path / "in.txt"
    src.write_text("{1}CC(=O)Cl.{1}NCc1ccccc1\n")
    _one_error_line(runner.invoke(app, ["predict", str(src), "--edit-checkpoint", str(path)]), path, reason)


def test_a_missing_checkpoint_named_by_the_environment_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GNNCA_CHECKPOINT", str(tmp_path / "nope.pt"))
    src = tmp_path / "in.txt"
    src.write_text("{1}CCO.{1}CC(=O)O\n")
    result = runner.invoke(app, ["predict", str(src)])
    _one_error_line(result, tmp_path / "nope.pt", "checkpoint not found (named by $GNNCA_CHECKPOINT)")


@pytest.mark.parametrize("item", ["foo", "train.lr=0.1", "decode.no_such_key=3"])
@pytest.mark.parametrize("content", ["{1}CCO.{1}CC(=O)O\n", ""])
def test_a_bad_set_item_is_blamed_on_set_before_any_line_is_read(tmp_path: Path, item: str, content: str) -> None:
    """Not on the input's line 1, and also when the input has no lines at all."""
    src = tmp_path / "in.txt"
    src.write_text(content)
    _one_error_line(runner.invoke(app, ["predict", str(src), "--set", item]), "--set", "decode")


def test_an_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    """``gnnca predict in.txt > /dev/full``: the write error is ``cannot write the output: REASON``."""
    import errno

    from gnn_chemalgebra.inference.predict_command import PredictOptions, run_predict

    class Full:
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def flush(self) -> None:
            pass

    src = tmp_path / "in.txt"
    src.write_text("{1}CCO.{1}CC(=O)O\n")
    with pytest.raises(InputError, match="cannot write the output: No space left on device"):
        run_predict(PredictOptions(input=str(src), quiet=True), echo=lambda _: None, out=Full())  # type: ignore[arg-type]
