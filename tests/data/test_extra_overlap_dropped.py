"""``gnnca data build --extra`` removes every extra training reaction whose product is the product of a USPTO-MIT valid
or test reaction, including those the leftover rule drops (they form the chemist's-convention sets and are never
trained on), not only those USPTO-BAL keeps."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from gnn_chemalgebra.data.build import build_all, bundled_data_dir
from gnn_chemalgebra.data.chemist import rule_dropped
from gnn_chemalgebra.data.extra import REMOVED_OVERLAP

pytestmark = pytest.mark.integration

N_MIT = 40
QUIET = {"log": lambda *_: None}


def _mit_source(out: Path) -> dict[str, list[str]]:
    """The first ``N_MIT`` bundled MIT valid/test reactions in ``out``; returns the product targets per split."""
    bundled = bundled_data_dir()
    targets = {}
    for folder, stem in (("uspto_mit_mapped", "{}.txt"), ("uspto_mit_tgt", "tgt-{}.txt")):
        (out / folder).mkdir(parents=True)
        for split in ("valid", "test"):
            with gzip.open(bundled / folder / (stem.format(split) + ".gz"), "rt") as fh:
                lines = [next(fh) for _ in range(N_MIT)]
            (out / folder / stem.format(split)).write_text("".join(lines))
            if folder == "uspto_mit_tgt":
                targets[split] = [line.strip().replace(" ", "") for line in lines]
    return targets


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def test_extra_reactions_sharing_a_product_with_a_dropped_mit_reaction_are_removed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    targets = _mit_source(src)
    local = tmp_path / "local"
    build_all(local, source=src, workers=1, **QUIET)
    dropped = rule_dropped(local)
    kept_products = {
        p
        for split in ("train", "valid", "test")
        for line in (local / "uspto_bal" / f"reactions-{split}.jsonl").read_text().splitlines()
        for p in json.loads(line)["products"]
    }
    # a dropped valid and a dropped test reaction whose product no kept reaction has
    valid_i = next(i for i in dropped["valid"] if targets["valid"][i] not in kept_products)
    test_i = next(i for i in dropped["test"] if targets["test"][i] not in kept_products)
    mt_rows = [
        ["CC(=O)O.OCC>>" + targets["valid"][valid_i], "", "train"],  # the product of a dropped MIT valid reaction
        ["CC(=O)Cl.OCC>>CCOC(C)=O", "", "train"],  # control: no MIT product
    ]
    _write_csv(src / "uspto_500_mt" / "uspto_500.csv", ["rxn", "reagent", "split"], mt_rows)
    full_rows = [[targets["test"][test_i], "CC(=O)O.OCC"]]  # USPTO-full writes product, reactants
    _write_csv(src / "uspto_full_gln_valtest" / "uspto_valT.csv", ["input", "target"], full_rows)
    _write_csv(src / "uspto_full_gln_valtest" / "uspto_testT.csv", ["input", "target"], [])

    extra = tmp_path / "extra"
    build_all(extra, source=src, workers=1, extra=True, **QUIET)
    rows = [r.split("\t") for r in (extra / "extra_skipped.tsv").read_text().splitlines()[1:]]
    removed = {(r[0], r[2]) for r in rows if r[3] == REMOVED_OVERLAP}
    assert removed == {("uspto_500_mt", "2"), ("uspto_full", "2")}  # CSV line 2: the first row after the header
    m = json.loads((extra / "manifest.json").read_text())["extra"]
    assert m["mit_valid_test_lines"] == 2 * N_MIT  # every line, kept or dropped
    assert m["sources"]["uspto_500_mt"]["removed_overlap"] == 1 and m["sources"]["uspto_full"]["removed_overlap"] == 1
    train = [json.loads(x) for x in (extra / "uspto_bal" / "reactions-train.jsonl").read_text().splitlines()]
    extra_products = {p for r in train if "source" in r for p in r["products"]}
    assert "CCOC(C)=O" in extra_products  # the control reaction is kept: the filter is not removing everything
    assert not extra_products & {targets["valid"][valid_i], targets["test"][test_i]}
