"""The edit model's example cache: packed examples equal the featurised ones field for field, survive a
weights_only save/load, batch like the list, and the cache key follows every input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch_geometric.loader import DataLoader

from gnn_chemalgebra.data.edit_cache import PackedEditExamples, example_cache_key, load_examples, save_examples
from gnn_chemalgebra.data.edit_dataset import build_examples, record_source
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit

RECORDS_PATH = Path(__file__).parents[1] / "edit_records.jsonl"
RECORDS = [json.loads(line) for line in RECORDS_PATH.read_text().splitlines()]


def _same(a, b) -> None:
    assert sorted(a.keys()) == sorted(b.keys())
    assert a.num_nodes == b.num_nodes
    for k in a.keys():
        va, vb = a[k], b[k]
        if isinstance(va, torch.Tensor):
            assert va.dtype == vb.dtype and torch.equal(va, vb), k
        else:
            assert type(va) is type(vb) and va == vb, k


@pytest.fixture(scope="module")
def examples() -> list:
    exs, kept, skipped = build_examples(RECORDS)
    assert exs and not skipped and len(kept) == len(RECORDS)
    return exs


def test_packed_examples_equal_uncached(examples: list) -> None:
    packed = PackedEditExamples.pack(examples)
    assert len(packed) == len(examples)
    for i, ex in enumerate(examples):
        _same(packed[i], ex)
    _same(packed[-1], examples[-1])
    with pytest.raises(IndexError):
        packed[len(examples)]


def test_save_load_round_trip_weights_only(examples: list, tmp_path: Path) -> None:
    path = tmp_path / "c.pt"
    report = {"used": len(examples), "by_source": {"local": {"read": 7, "used": 7, "skipped": {}}}}
    save_examples(path, PackedEditExamples.pack(examples), report, "k1")
    assert isinstance(torch.load(path, weights_only=True), dict)  # no pickled objects in the file
    packed, rep = load_examples(path, "k1")
    assert rep == report
    for i, ex in enumerate(examples):
        _same(packed[i], ex)
    a = next(iter(DataLoader(examples, batch_size=len(examples))))
    b = next(iter(DataLoader(packed, batch_size=len(examples))))
    for k in a.keys():
        va, vb = a[k], b[k]
        assert torch.equal(va, vb) if isinstance(va, torch.Tensor) else va == vb, k
    with pytest.raises(InputError, match="key mismatch"):
        load_examples(path, "other")


def test_cache_key_follows_inputs(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text(RECORDS_PATH.read_text())
    base = example_cache_key(f, split="train", limit=0, sources=[], max_pairs=6000)
    assert base == example_cache_key(f, split="train", limit=0, sources=[], max_pairs=6000)
    assert base != example_cache_key(f, split="train", limit=3, sources=[], max_pairs=6000)
    assert base != example_cache_key(f, split="train", limit=0, sources=["local"], max_pairs=6000)
    f.write_text(RECORDS_PATH.read_text().splitlines()[0] + "\n")
    assert base != example_cache_key(f, split="train", limit=0, sources=[], max_pairs=6000)


def test_record_source_and_counts() -> None:
    full = {**RECORDS[0], "source": {"set": "uspto_full", "split": "val", "line": 3}}
    mt = {**RECORDS[1], "source": {"set": "uspto_500_mt", "split": "val", "line": 2}, "mapped": None}
    assert [record_source(r) for r in (RECORDS[0], full, mt)] == ["local", "uspto_full", "uspto_500_mt"]
    by_source: dict = {}
    exs, kept, skipped = build_examples([RECORDS[0], full, mt], by_source=by_source)
    assert len(exs) == 2 and kept == [0, 1] and skipped == {"no_atom_map": 1}
    assert by_source == {
        "local": {"read": 1, "used": 1, "skipped": {}},
        "uspto_full": {"read": 1, "used": 1, "skipped": {}},
        "uspto_500_mt": {"read": 1, "used": 0, "skipped": {"no_atom_map": 1}},
    }
