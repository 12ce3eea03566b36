"""Training harness of the sequence baseline: learns, checkpoints safely, resumes exactly, predicts."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint
from gnn_chemalgebra.config import apply_overrides, load_config
from gnn_chemalgebra.data.tokenize import UNK_ID
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.io import read_lines
from gnn_chemalgebra.training.run import train
from gnn_chemalgebra.training.seq2seq import (
    bag_key,
    exact_match,
    load_model,
    predict_lines,
    sorted_terms,
    tokenizer_name,
    write_predictions,
)

VARIANT = "ChemAlgebra_F_T1_x1"
TINY = Path(__file__).resolve().parents[2] / "configs" / "transformer_tiny.yaml"
# A copy-like task: the target repeats the source (coefficients and molecules) with the terms reversed.
SRC = [
    "{1}H2.{1}O2",
    "{2}CH4.{2}Cl2",
    "{3}NaCl.{3}H2O",
    "{4}CO2.{4}H2",
    "{5}Na+.{5}OH-",
    "{2}C2H6O.{2}O2",
    "{1}H4B-.{1}Li+",
    "{3}N2.{3}H2",
]
TGT = [".".join(reversed(s.split("."))) for s in SRC]


def _fixture(root: Path) -> Path:
    d = root / VARIANT
    d.mkdir(parents=True)
    for split in ("train", "valid"):
        (d / f"src-{split}.txt").write_text("\n".join(SRC) + "\n")
        (d / f"tgt-{split}.txt").write_text("\n".join(TGT) + "\n")
    return root


def _cfg(tmp_path: Path, *overrides: str) -> dict:
    root = _fixture(tmp_path / "built") if not (tmp_path / "built").exists() else tmp_path / "built"
    cfg = load_config(TINY, [f"data.dir={root}", f"data.variant={VARIANT}", f"run_dir={tmp_path / 'run'}"])
    return apply_overrides(cfg, overrides)


@pytest.mark.unit
def test_bag_key_is_order_free() -> None:
    assert exact_match("{1}H2.{2}O2", "{2}O2.{1}H2")
    assert not exact_match("{1}H2.{2}O2", "{2}O2.{2}H2")
    assert bag_key("{1}CC.O.{2}N") == ("{1}CC.O", "{2}N")  # a fragment dot stays inside its molecule


@pytest.mark.integration
def test_tiny_model_overfits_copy_task_and_predicts(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    cfg = _cfg(tmp_path, "train.max_steps=150", "train.eval_every=50", "train.batch_size=8")
    summary = train(cfg, resume=False)
    assert summary["step"] == 150 and summary["params"] > 0
    assert summary["last_eval"]["val_em"] == 100.0, summary["last_eval"]
    preds = predict_lines(summary["last"], SRC, beam=1, max_len=40)
    assert [p[0] for p in preds] == TGT  # exact strings, not just bags
    beam3 = predict_lines(load_model(summary["last"]), SRC, beam=3, max_len=40)
    assert all(len(h) == 3 and h[0] == t for h, t in zip(beam3, TGT, strict=True))
    # write_predictions: N consecutive lines per example, plus a top-1 file
    src_file = tmp_path / "built" / VARIANT / "src-valid.txt"
    info = write_predictions(summary["best"], src_file, tmp_path / "pred.txt", beam=3, max_len=40, progress=False)
    beam_lines = read_lines(info["beam_file"])
    assert len(beam_lines) == 3 * len(SRC) and beam_lines[0::3] == TGT
    assert read_lines(info["top1_file"]) == TGT
    assert (tmp_path / "run" / "tb").is_dir()


@pytest.mark.integration
@pytest.mark.parametrize("fast", [False, True])
def test_checkpoint_is_weights_only_and_resume_is_exact(tmp_path: Path, fast: bool) -> None:
    torch.set_num_threads(1)
    cfg = _cfg(tmp_path, "model.dropout=0.1", "train.max_steps=6", "train.eval_every=3", "train.batch_size=3",
               f"train.fast_train={str(fast).lower()}")  # fmt: skip
    first = train(cfg, resume=False)
    assert first["step"] == 6
    raw = torch.load(first["last"], weights_only=True)  # no pickled code needed
    assert "model" in raw and "optimizer" in raw
    ck = load_checkpoint(first["last"])
    assert ck["step"] == 6 and ck["meta"]["vocab"][:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert ck["optimizer"]["param_groups"][0].get("fused") is (True if fast else None)  # train.fast_train: fused Adam
    assert ck["config"]["model"]["name"] == "transformer" and "torch" in ck["versions"]

    resumed = train(apply_overrides(cfg, ["train.max_steps=12"]), resume=True)
    assert resumed["resumed"] and resumed["step"] == 12
    assert load_checkpoint(resumed["last"])["step"] == 12

    straight_cfg = apply_overrides(cfg, ["train.max_steps=12", f"run_dir={tmp_path / 'straight'}"])
    straight = train(straight_cfg, resume=False)
    a, b = load_checkpoint(resumed["last"])["model"], load_checkpoint(straight["last"])["model"]
    for k in a:  # dropout RNG, data order and optimizer state all carried over
        assert torch.equal(a[k], b[k]), k


@pytest.mark.unit
def test_missing_data_is_a_clear_error(tmp_path: Path) -> None:
    cfg = load_config(TINY, [f"data.dir={tmp_path}", f"run_dir={tmp_path / 'run'}"])
    with pytest.raises(InputError, match="src-train.txt"):
        train(cfg)


@pytest.mark.integration
def test_early_stopping_on_em_then_token_accuracy_in_steps(tmp_path: Path) -> None:
    """The comparison protocol: a step budget, EM (token accuracy while EM ties) as the monitor, patience in steps."""
    torch.set_num_threads(1)
    cfg = _cfg(tmp_path, "train.max_steps=60", "train.eval_every=5", "train.batch_size=4",
               "train.monitor=val_em,val_token_acc", "train.patience_steps=10", "train.lr_schedule=cosine",
               "train.warmup=0.1")  # fmt: skip
    s = train(cfg, resume=False)
    assert s["best_metric"] == "val_em,val_token_acc" and s["best_step"] is not None
    assert {"steps", "best_step", "train_lines", "batch_size", "tokenizer", "train_s"} <= set(s)
    best = s["best_eval"]
    for h in s["history"]:  # nothing validated after the best beat it on (EM, token accuracy)
        assert (h["val"]["val_em"], h["val"]["val_token_acc"]) <= (best["val_em"], best["val_token_acc"])
    if s["stop_reason"] == "early_stopping":
        assert s["steps"] - s["best_step"] >= 10
    else:
        assert s["steps"] == 60


@pytest.mark.unit
def test_tokenizer_name_and_sorted_targets() -> None:
    assert tokenizer_name({"tokenizer": "auto", "variant": "ChemAlgebra_S_T2_x5"}) == "smiles"
    assert tokenizer_name({"tokenizer": "auto", "variant": VARIANT}, "digit") == "formula_digit"
    assert tokenizer_name({"tokenizer": "formula_digit"}) == "formula_digit"  # the name says the level
    assert sorted_terms("{2}O2.{1}H2.{1}CC.O") == "{1}CC.O.{1}H2.{2}O2"
    assert exact_match(sorted_terms(TGT[0]), TGT[0])


@pytest.mark.integration
def test_digit_tokenizer_run_reads_any_coefficient_and_resume_keeps_it(tmp_path: Path) -> None:
    """model.tokenizer=digit: saved with the checkpoint, {10} encodes without <unk>; resuming with the paper
    tokenizer is refused (its vocabulary would not fit); sorted targets train."""
    torch.set_num_threads(1)
    cfg = _cfg(tmp_path, "model.tokenizer=digit", "data.sort_targets=true", "train.max_steps=4", "train.eval_every=2")
    s = train(cfg, resume=False)
    assert s["tokenizer"] == "formula_digit" and s["step"] == 4
    lm = load_model(s["last"])
    assert lm.tokenizer == "formula_digit" and lm.config["model"]["tokenizer"] == "digit"
    ids = lm.vocab.encode(lm.tokenize("{10}H2.{7}O2"))
    assert UNK_ID not in ids and lm.vocab.decode(ids)[:4] == ["{", "1", "0", "}"]
    with pytest.raises(InputError, match="tokenizer 'formula_digit'"):
        train(apply_overrides(cfg, ["model.tokenizer=paper", "train.max_steps=6"]), resume=True)
    paper = train(_cfg(tmp_path, f"run_dir={tmp_path / 'paper'}", "train.max_steps=2", "train.eval_every=2"))
    assert paper["tokenizer"] == "formula"
    lm = load_model(paper["last"])
    assert lm.vocab.encode(lm.tokenize("{10}H2"))[0] == UNK_ID  # the paper tokenizer, unchanged
