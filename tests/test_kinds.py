"""The model-kind registry: every kind goes config -> task -> checkpoint -> network -> predictor through its one
entry, a checkpoint names its kind, and an unknown kind is one line that lists the known ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint
from gnn_chemalgebra.config import parse_config
from gnn_chemalgebra.data.dataset import write_toy_variant
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.kinds import KINDS, kind, kind_name_of_checkpoint, kind_of_checkpoint, load_reference

VARIANT = "ChemAlgebra_F_T1_x1"
RECORDS = [json.loads(line) for line in (Path(__file__).parent / "edit_records.jsonl").read_text().splitlines()]
TRAIN = {"epochs": 0, "max_steps": 2, "device": "cpu", "amp": False, "num_threads": 1, "tensorboard": False,
         "progress": False, "patience": 0, "eval_every": 1}  # fmt: skip


def _bag_setup(name: str) -> Callable[[Path], tuple[dict[str, Any], tuple]]:
    def setup(tmp: Path) -> tuple[dict[str, Any], tuple]:
        write_toy_variant(tmp / "built", VARIANT, {"train": 16, "valid": 8})
        model = {"name": name, "hidden": 16, "layers": 1, "heads": 1, "bag_layers": 1, "set_layers": 1,
                 "vocab_size": 16}  # fmt: skip
        data = {"dir": str(tmp / "built"), "variant": VARIANT}
        return {"run_dir": str(tmp / "run"), "data": data, "model": model, "train": {**TRAIN, "monitor": "loss"}}, ()

    return setup


def _edits_setup(tmp: Path) -> tuple[dict[str, Any], tuple]:
    from gnn_chemalgebra.data.edit_dataset import record_example

    exs = [record_example(r) for r in RECORDS[:4]]
    model = {"name": "edits", "hidden": 16, "layers": 1, "attn_layers": 1, "heads": 1}
    cfg = {"run_dir": str(tmp / "run"), "model": model, "train": {**TRAIN, "batch_size": 2}}
    return cfg, ({"train": exs, "valid": exs},)


def _transformer_setup(tmp: Path) -> tuple[dict[str, Any], tuple]:
    write_toy_variant(tmp / "built", VARIANT, {"train": 16, "valid": 8})
    model = {"name": "transformer", "d_model": 16, "nhead": 2, "enc_layers": 1, "dec_layers": 1, "d_ff": 16}
    data = {"dir": str(tmp / "built"), "variant": VARIANT}
    train = {**TRAIN, "batch_size": 8, "val_em_lines": 2, "monitor": "val_loss"}
    return {"run_dir": str(tmp / "run"), "data": data, "model": model, "train": train, "decode": {"max_len": 40}}, ()


SETUPS = {"gnn": _bag_setup("gnn"), "naive": _bag_setup("naive"), "edits": _edits_setup,
          "transformer": _transformer_setup}  # fmt: skip


@pytest.mark.unit
def test_every_registered_kind_has_a_round_trip_setup() -> None:
    assert set(SETUPS) == set(KINDS)


@pytest.mark.integration
@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_round_trips(name: str, tmp_path: Path) -> None:
    """config -> task -> checkpoint -> network -> predictor, each step through the kind's registry entry."""
    from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
    from gnn_chemalgebra.inference.run import example_from_line
    from gnn_chemalgebra.training.engine import Trainer

    torch.manual_seed(0)
    k = kind(name)
    raw, task_args = SETUPS[name](tmp_path)
    cfg = parse_config(raw)
    assert type(cfg.model) is k.config and cfg.model_name == name
    task = k.load_task()(*task_args)
    summary = Trainer(task, cfg).run()
    assert summary["steps"] == 2
    path = Path(summary["last"])
    ck = load_checkpoint(path)
    assert ck["meta"]["model"] == name and kind_of_checkpoint(ck) is k

    net = k.load_network()(ck, path, "cpu")
    assert isinstance(net, torch.nn.Module) and not net.training
    saved = ck["model"]
    assert all(torch.equal(v.cpu(), saved[key]) for key, v in net.state_dict().items() if key in saved)

    pred = k.load_predictor()(ck, str(path), "cpu", PredictorOptions())
    if not k.reads_lines:  # the bond-edit model: product graphs of one reaction
        r = RECORDS[0]
        (cands,) = pred.predict([(r["reactants"], r["reagents"])], beam=2)
        assert all(isinstance(c.products, list) for c in cands)
        with pytest.raises(InputError, match="predicts no lines"):
            Predictor.from_checkpoint(path)
        return
    src = (tmp_path / "built" / VARIANT / "src-valid.txt").read_text().splitlines()[0]
    ex = example_from_line(src, "formula", 1)
    (rec,) = [p.to_json() for p in pred.predict([ex])]
    assert isinstance(rec["prediction"], str) and "fallback" in rec
    again = Predictor.from_checkpoint(path)  # the one constructor picks the same factory
    assert type(again) is type(pred) and again.predict([ex])[0].prediction == rec["prediction"]


@pytest.mark.unit
def test_an_unknown_kind_is_one_line_listing_the_known_ones() -> None:
    with pytest.raises(InputError) as err:
        kind("linear")
    msg = str(err.value)
    assert "\n" not in msg and "'linear'" in msg and all(n in msg for n in KINDS)


@pytest.mark.unit
def test_an_unknown_kind_in_a_checkpoint_is_one_line(tmp_path: Path) -> None:
    from gnn_chemalgebra.inference.predictor import Predictor

    path = tmp_path / "x.pt"
    save_checkpoint(path, {"model": {}, "meta": {"model": "linear"}})
    with pytest.raises(InputError) as err:
        Predictor.from_checkpoint(path)
    assert str(path) in str(err.value) and "known kinds are gnn, naive" in str(err.value)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("entries", "name"),
    [
        ({"meta": {"model": "transformer"}}, "transformer"),
        ({"meta": {"model": "naive"}, "config": {"model": {"name": "gnn"}}}, "naive"),  # meta.model first
        ({"meta": {"kind": "edits"}}, "edits"),  # edit checkpoints written before meta.model
        ({"meta": {}, "config": {"model": {"name": "naive"}}}, "naive"),
        ({}, "gnn"),  # the oldest bag-GNN checkpoints name no kind
    ],
)
def test_a_checkpoint_names_its_kind(entries: dict[str, Any], name: str) -> None:
    assert kind_name_of_checkpoint(entries) == name


@pytest.mark.unit
def test_the_bundled_checkpoints_are_known_kinds() -> None:
    folder = Path(__file__).resolve().parents[1] / "gnn_chemalgebra" / "checkpoints"
    found = {p.name: kind_of_checkpoint(load_checkpoint(p)).name for p in sorted(folder.glob("*.pt"))}
    assert found["edit_default.pt"] == "edits" and found["gnn_default.pt"] == "gnn", found


@pytest.mark.unit
@pytest.mark.parametrize("k", list(KINDS.values()), ids=list(KINDS))
def test_every_reference_resolves(k: Any) -> None:
    for ref in (k.task, k.loader, k.predictor):
        assert callable(load_reference(ref)), ref
