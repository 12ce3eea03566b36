"""Edit-model training on a build with extra reactions: sources chosen by data.edit_sources and counted
(nothing skipped silently), the example cache written once and loaded after, and cached and uncached runs train
to identical weights."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint
from gnn_chemalgebra.config import typed
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.training.edits import parse_sources, split_examples, training_data_label
from gnn_chemalgebra.training.run import train

pytestmark = pytest.mark.integration

RECORDS = [json.loads(line) for line in (Path(__file__).parents[1] / "edit_records.jsonl").read_text().splitlines()]


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A build folder: 3 local records, 3 USPTO-full ones (mapped), 1 USPTO-500-MT one (no map)."""
    full = [{**r, "source": {"set": "uspto_full", "split": "val", "line": k}} for k, r in enumerate(RECORDS[3:6])]
    mt = [{**RECORDS[6], "mapped": None, "source": {"set": "uspto_500_mt", "split": "val", "line": 0}}]
    d = tmp_path / "built" / "uspto_bal"
    d.mkdir(parents=True)
    (d / "reactions-train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*RECORDS[:3], *full, *mt]))
    (d / "reactions-valid.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS[:2]))
    return tmp_path / "built"


def _cfg(built: Path, run: Path, **data: object) -> dict:
    return {
        "run_dir": str(run),
        "data": {"dir": str(built), **data},
        "model": {"name": "edits", "hidden": 16, "layers": 1, "attn_layers": 1, "heads": 2, "dropout": 0.0},
        "train": {"epochs": 1, "max_steps": 2, "batch_size": 2, "seed": 0, "device": "cpu", "progress": False},
    }


def test_sources_counted_and_cache_reused(built: Path, tmp_path: Path) -> None:
    d = typed(_cfg(built, tmp_path / "r", edit_sources="local,uspto_full"), model_name="edits").data
    exs, rep = split_examples(d, "train", 0, parse_sources(d.edit_sources), tmp_path / "cache")
    assert len(exs) == 6 and rep["used"] == 6 and rep["cache"].startswith("written")
    assert rep["excluded"] == {"uspto_500_mt": 1}
    assert {s: (r["read"], r["used"]) for s, r in rep["by_source"].items()} == {"local": (3, 3), "uspto_full": (3, 3)}
    again, rep2 = split_examples(d, "train", 0, parse_sources(d.edit_sources), tmp_path / "cache")
    assert rep2["cache"].startswith("loaded") and rep2["by_source"] == rep["by_source"]
    assert len(again) == len(exs) and all(torch.equal(a.pair_y, b.pair_y) for a, b in zip(again, exs, strict=True))
    # every source, no filter: the unmapped record is read and skipped with its cause, not dropped silently
    everything, rep3 = split_examples(d, "train", 0)
    assert len(everything) == 6 and rep3["skipped"] == {"no_atom_map": 1} and not rep3["excluded"]
    assert rep3["by_source"]["uspto_500_mt"] == {"read": 1, "used": 0, "skipped": {"no_atom_map": 1}}


def test_cached_and_uncached_runs_train_identically(built: Path, tmp_path: Path) -> None:
    plain = train(_cfg(built, tmp_path / "plain"))
    cached = train(_cfg(built, tmp_path / "cached", edit_sources="local,uspto_full", cache_examples=True))
    assert list((tmp_path / "cached" / "cache").glob("edit-examples-train-*.pt"))
    assert plain["n_train"] == cached["n_train"] == 6
    assert cached["training_data"] == plain["training_data"] == "local+extra"
    assert cached["sources"]["train"]["excluded"] == {"uspto_500_mt": 1}
    assert plain["sources"]["train"]["by_source"]["uspto_500_mt"]["skipped"] == {"no_atom_map": 1}
    a = load_checkpoint(tmp_path / "plain" / "last.pt")["model"]
    b = load_checkpoint(tmp_path / "cached" / "last.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    resumed = train(_cfg(built, tmp_path / "cached", edit_sources="local,uspto_full", cache_examples=True),
                          resume=True)  # fmt: skip
    assert resumed["n_train"] == 6


def test_sources_spec() -> None:
    assert parse_sources("") == ()
    assert parse_sources(" local, uspto_full,local") == ("local", "uspto_full")
    with pytest.raises(InputError, match="unknown source"):
        parse_sources("local,pubchem")
    assert training_data_label({"local": {"used": 3}, "uspto_full": {"used": 0}}) == "local"
    assert training_data_label({"local": {"used": 3}, "uspto_full": {"used": 2}}) == "local+extra"


def test_extra_dirs_add_their_mapped_reactions(built: Path, tmp_path: Path) -> None:
    """A ``data.extra_dirs`` folder (``gnnca data dropped`` layout) adds its mapped reactions after data.dir's;
    its unmapped ones are counted, and a folder without reactions is one clear error."""
    only_local = _cfg(built, tmp_path / "local", edit_sources="local")
    extra = tmp_path / "dropped"
    extra.mkdir()
    rows = [{**r, "source": {"set": "uspto_full", "split": "train", "line": k}} for k, r in enumerate(RECORDS[3:5])]
    rows.append({**RECORDS[5], "mapped": None, "source": {"set": "uspto_500_mt", "split": "train", "line": 9}})
    (extra / "reactions-train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = train(only_local)
    both = train({**_cfg(built, tmp_path / "both", edit_sources="local,uspto_full,uspto_500_mt",
                         extra_dirs=str(extra))})  # fmt: skip
    assert base["n_train"] == 3 and base["training_data"] == "local"
    assert both["n_train"] == 6 + 2
    assert both["sources"][f"train:{extra}"]["by_source"]["uspto_500_mt"]["skipped"] == {"no_atom_map": 1}
    assert both["training_data"] == "local+extra"
    with pytest.raises(InputError, match="no reactions-train.jsonl"):
        train(_cfg(built, tmp_path / "bad", extra_dirs=str(tmp_path / "nothing")))
