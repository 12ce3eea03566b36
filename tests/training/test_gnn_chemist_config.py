"""configs/gnn_chemist.yaml: the bundled SMILES model fine-tuned on benchmark lines plus lines of reactions closed
with real by-products (data.extra_dirs), with the training-time rewrites on; a few steps on tiny data through the
CLI, and the schema refusing out-of-range rewrite probabilities."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.extent import S_IN
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.config import load_config, load_typed_config
from gnn_chemalgebra.data.byproduct_close import close_sides
from gnn_chemalgebra.data.chemist_lines import chemist_line
from gnn_chemalgebra.data.dataset import write_toy_variant
from gnn_chemalgebra.data.dropped_lines import type2_line
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.integration

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "gnn_chemist.yaml"
VARIANT = "ChemAlgebra_S_T2_x1"
REACTIONS = (  # reactants, reagents, products: an amide coupling, a saponification, a Boc removal
    (["CC(=O)O", "NCc1ccccc1"], ["CCN(CC)CC", "ClCCl"], ["CC(=O)NCc1ccccc1"]),
    (["COC(=O)c1ccccc1", "O"], ["[Na+]", "[OH-]", "C1CCOC1"], ["O=C(O)c1ccccc1", "CO"]),
    (["CC(C)(C)OC(=O)NC1CCCC1"], ["O=C(O)C(F)(F)F", "ClCCl"], ["NC1CCCC1"]),
)


def _chemist_lines(out: Path) -> int:
    """Type-1 and Type-2 lines of the three reactions, in the layout gnnca data dropped writes."""
    rows = []
    for i, (reactants, reagents, products) in enumerate(REACTIONS * 4):
        rec = close_sides(reactants, reagents, products)
        assert rec.pop("ok"), rec
        rec |= {"id": i, "mit_split": None, "mit_index": None}
        rows.append(chemist_line(rec, 1 + i % 3, random.Random(i)))
        rows.append(type2_line(rec, S_IN, random.Random(i)))
    d = out / VARIANT
    d.mkdir(parents=True)
    for col, name in enumerate(("src-train.txt", "tgt-train.txt", "meta-train.jsonl")):
        cells = [json.dumps(r[col]) if col == 2 else r[col] for r in rows]
        (d / name).write_text("\n".join(cells) + "\n")
    return len(rows)


def test_the_config_trains_on_both_folders_with_the_rewrites(tmp_path: Path) -> None:
    toy = tmp_path / "toy"
    write_toy_variant(toy, VARIANT, {"train": 24, "valid": 4})
    n_chem = _chemist_lines(tmp_path / "dropped")
    run = tmp_path / "run"
    sets = [f"data.dir={toy}", f"data.extra_dirs={tmp_path / 'dropped'}", f"run_dir={run}", "data.val_limit=4",
            "train.max_steps=3", "train.batch_size=8", "train.eval_every=0", "train.tensorboard=false",
            "train.device=cpu", "train.num_threads=1"]  # fmt: skip
    res = CliRunner().invoke(app, ["train", "--config", str(CONFIG), *sum((["--set", s] for s in sets), [])])
    assert res.exit_code == 0, res.output
    summary = json.loads((run / "summary.json").read_text())
    assert summary["train_lines_by_folder"] == {str(toy): 24, str(tmp_path / "dropped"): n_chem}
    assert summary["n_train"] == 24 + n_chem
    assert summary["augment"] == {"drop_reagents": 0.3, "salts": 0.2, "rewritable_lines": 24 + n_chem}
    assert summary["steps"] == 3 and summary["stop_reason"] == "max_steps"
    teacher = CliRunner().invoke(
        app, ["train", "--config", str(CONFIG), *sum((["--set", s] for s in sets), []), "--set", f"run_dir={run}2",
              "--set", "train.distill_weight=0.5", "--set", "train.distill_labels=teacher.npz"],
    )  # fmt: skip
    assert teacher.exit_code == 2 and "leave data.extra_dirs empty" in teacher.output  # ids of two folders clash


def test_the_config_names_its_data_and_is_off_by_default_elsewhere() -> None:
    cfg = load_typed_config(CONFIG)
    assert cfg.data.extra_dirs == "built/dropped,built/templates400"
    assert cfg.train.init_from.endswith("gnn_smiles_default.pt")
    assert (cfg.data.augment_drop_reagents, cfg.data.augment_salts) == (0.3, 0.2)
    header = CONFIG.read_text().split("\nrun_dir:")[0]
    for command in (
        "gnnca data build --out built/extra --extra",
        "gnnca data dropped built/extra --out built/dropped",
        "gnnca data templates built/full --out built/templates400 --per-class 400",
    ):
        assert command in header
    plain = load_typed_config(CONFIG.parent / "gnn_mixed_smiles_identity.yaml")
    assert (plain.data.augment_drop_reagents, plain.data.augment_salts, plain.data.extra_dirs) == (0.0, 0.0, "")
    with pytest.raises(InputError, match=r"data\.augment_salts"):
        load_config(str(CONFIG), ["data.augment_salts=1.5"])
    with pytest.raises(InputError, match=r"did you mean 'data\.augment_salts'"):
        load_config(str(CONFIG), ["data.augment_salt=0.1"])
