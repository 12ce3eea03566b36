"""experiments/shift_split.py: scaffolds and main products read right, and the split it writes on a small build
holds exactly the test_in reactions whose main product's scaffold no training product (local or extra) has,
line-aligned across the four x1 variants."""

from __future__ import annotations

import csv
import gzip
import io
import json
import lzma
from pathlib import Path

import pytest


@pytest.mark.unit
def test_scaffolds_and_main_products(experiment) -> None:  # noqa: ANN001
    mod = experiment("shift_split")
    assert mod.scaffold("OCCc1ccccc1") == "c1ccccc1"
    assert mod.scaffold("[CH3:1][OH:2]") == ""  # acyclic, atom maps dropped
    assert mod.scaffold("not a smiles") is None
    assert mod.main_product([["CC(=O)Cl", -1], ["Cl", 1], ["CC(=O)Nc1ccccc1", 1]]) == "CC(=O)Nc1ccccc1"


def _write_extra(data: Path, products: list[str]) -> None:
    (data / "uspto_500_mt").mkdir(parents=True)
    (data / "uspto_full_gln_valtest").mkdir(parents=True)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["rxn", "reagent", "split"])
    for p in products:
        w.writerow([f"CC>>{p}", "", "train"])
    with gzip.open(data / "uspto_500_mt" / "uspto_500.csv.gz", "wt", encoding="utf-8") as fh:
        fh.write(buf.getvalue())
    for name in ("uspto_valT.csv.xz", "uspto_testT.csv.xz"):
        with lzma.open(data / "uspto_full_gln_valtest" / name, "wt", encoding="utf-8") as fh:
            fh.write("input,target\n")


@pytest.mark.integration
def test_the_split_holds_the_novel_scaffolds(experiment, built_small: Path, tmp_path: Path) -> None:  # noqa: ANN001
    mod = experiment("shift_split")
    metas = [json.loads(x) for x in (built_small / "ChemAlgebra_S_T2_x1" / "meta-test_in.jsonl").open()]
    first = mod.main_product(metas[0]["nu"])
    _write_extra(tmp_path / "data", [first])  # the first test reaction's product: its scaffold is seen in training
    out = tmp_path / "shift"
    assert mod.main(["--built", str(built_small), "--data", str(tmp_path / "data"), "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    train = set()
    for line in (built_small / "ChemAlgebra_S_T2_x1" / "meta-train.jsonl").open():
        train |= {mod.scaffold(m) for m, v in json.loads(line)["nu"] if v > 0}
    train.add(mod.scaffold(first))
    want = [m["rxn"] for m in metas if (s := mod.scaffold(mod.main_product(m["nu"]) or "")) and s not in train]
    assert manifest["test_scaffold"]["kept"] == len(want) > 0 and metas[0]["rxn"] not in want
    for v in mod.VARIANTS:
        d = out / f"ChemAlgebra_{v}"
        kept = [json.loads(x)["rxn"] for x in (d / "meta-test_scaffold.jsonl").open()]
        assert kept == want
        src = (d / "src-test_scaffold.txt").read_text().splitlines()
        tgt = (d / "tgt-test_scaffold.txt").read_text().splitlines()
        assert len(src) == len(tgt) == len(want)
        assert manifest["files"][f"ChemAlgebra_{v}/src-test_scaffold.txt"]["lines"] == len(want)
