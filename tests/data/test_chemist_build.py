"""``gnnca data build --chemist`` and ``gnnca data chemist`` on a small source: the benchmark's files are byte-identical
with and without the chemist's-convention sets, and those sets are complete, counted, verified and deterministic."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.extent import type1_extent
from gnn_chemalgebra.chem.bag import bag_totals, parse_bag
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.build import bundled_data_dir, verify
from gnn_chemalgebra.data.chemist import rule_dropped

pytestmark = pytest.mark.integration

N_MIT = 40


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first ``N_MIT`` reactions of each bundled MIT valid/test split."""
    bundled = bundled_data_dir()
    src = tmp_path_factory.mktemp("chemist_src")
    for folder, stem in (("uspto_mit_mapped", "{}.txt"), ("uspto_mit_tgt", "tgt-{}.txt")):
        (src / folder).mkdir()
        for split in ("valid", "test"):
            with gzip.open(bundled / folder / (stem.format(split) + ".gz"), "rt") as fh:
                lines = [next(fh) for _ in range(N_MIT)]
            (src / folder / stem.format(split)).write_text("".join(lines))
    return src


@pytest.fixture(scope="module")
def builds(source: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("chemist_builds")
    runner = CliRunner()
    common = ["data", "build", "--source", str(source), "--workers", "1"]
    res = runner.invoke(app, [*common, "--out", str(out / "plain")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, [*common, "--out", str(out / "with"), "--chemist", str(out / "chemist")])
    assert res.exit_code == 0, res.output
    return {"plain": out / "plain", "with": out / "with", "chemist": out / "chemist", "root": out}


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def test_benchmark_files_are_byte_identical_with_and_without_the_chemist_sets(builds: dict[str, Path]) -> None:
    plain, with_ = _manifest(builds["plain"]), _manifest(builds["with"])
    assert plain["files"] == with_["files"] and plain["uspto_bal"] == with_["uspto_bal"]
    assert verify(builds["with"]) == []
    assert not any("chemist" in rel for rel in with_["files"])


def test_chemist_manifest_counts_every_dropped_reaction(builds: dict[str, Path]) -> None:
    chem, m = builds["chemist"], _manifest(builds["chemist"])
    assert verify(chem) == []
    assert m["from"]["manifest_sha256"] and m["line_type"] == 1
    dropped = rule_dropped(builds["with"])
    unbalanced = [row.split("\t") for row in (chem / "unbalanced.tsv").read_text().splitlines()[1:]]
    for split, c in m["counts"].items():
        assert c["dropped_by_rule"] == len(dropped[split]) > 0
        assert c["balanced"] > 0 and c["balanced"] + sum(c["not_balanced"].values()) == c["dropped_by_rule"]
        assert sum(1 for r in unbalanced if r[0] == split) == sum(c["not_balanced"].values())
        recs = [json.loads(x) for x in (chem / f"reactions-{split}.jsonl").read_text().splitlines()]
        seen = {r["mit_index"] for r in recs} | {int(r[1]) for r in unbalanced if r[0] == split}
        assert seen == set(dropped[split]) and len(recs) == c["balanced"]
        assert sum(c["byproducts"].values()) == sum(len(r["byproducts"]) for r in recs)
        for repr in ("smiles", "formula"):
            assert m["files"][f"{repr}/src-{split}.txt"]["lines"] == c["balanced"]


def test_chemist_lines_are_type1_and_balanced(builds: dict[str, Path]) -> None:
    chem = builds["chemist"]
    for split in ("valid", "test"):
        recs = [json.loads(x) for x in (chem / f"reactions-{split}.jsonl").read_text().splitlines()]
        xis = {}
        for repr in ("smiles", "formula"):
            rows = zip(
                (chem / repr / f"src-{split}.txt").read_text().splitlines(),
                (chem / repr / f"tgt-{split}.txt").read_text().splitlines(),
                (chem / repr / f"meta-{split}.jsonl").read_text().splitlines(),
                strict=True,
            )
            for i, (src, tgt, meta_line) in enumerate(rows):
                meta = json.loads(meta_line)
                s, t, nu, k = parse_bag(src), parse_bag(tgt), dict(meta["nu"]), meta["xi"]
                assert type1_extent(s) == k and 1 <= k <= 5
                tot_s, tot_t = bag_totals(s), bag_totals(t)
                assert all(tot_t.get(m, 0) == tot_s.get(m, 0) + k * nu.get(m, 0) for m in {*tot_s, *tot_t, *nu})
                assert meta["rxn"] == i and meta["mit_index"] == recs[i]["mit_index"]
                assert xis.setdefault(i, k) == k  # the SMILES and formula line i: same reaction, same extent
                if repr == "smiles":
                    assert [m for m, _ in meta["byproducts"]] == recs[i]["byproducts"]


def test_chemist_command_is_deterministic_and_refuses_bad_folders(builds: dict[str, Path]) -> None:
    runner = CliRunner()
    again = builds["root"] / "again"
    res = runner.invoke(app, ["data", "chemist", str(builds["with"]), "--out", str(again), "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert _manifest(again)["files"] == _manifest(builds["chemist"])["files"]
    inside = runner.invoke(app, ["data", "chemist", str(builds["with"]), "--out", str(builds["with"] / "chem")])
    assert inside.exit_code == 2 and "outside the benchmark folder" in inside.output
    assert "Traceback" not in inside.output and not (builds["with"] / "chem").exists()
    missing = runner.invoke(app, ["data", "chemist", str(builds["root"] / "nope"), "--out", str(again)])
    assert missing.exit_code == 2 and "built folder not found" in missing.output
    assert verify(builds["with"]) == []
