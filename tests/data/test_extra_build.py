"""``gnnca data build --extra`` on a small fixture: overlap removal, dedup, broken maps, byte-identity, determinism.

The fixture is a source folder with the first 120 bundled MIT valid/test reactions, a few real rows of each
extra set, and crafted rows: products equal to MIT valid/test products (one written without its stereo, one
atom-mapped), exact duplicates, a broken atom map and a malformed row.
"""

from __future__ import annotations

import csv
import gzip
import json
import lzma
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from rdkit import Chem
from typer.testing import CliRunner

from gnn_chemalgebra.chem.edits import check_record
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.build import build_all, bundled_data_dir, verify
from gnn_chemalgebra.data.extra import (
    REMOVED_DUP_EXTRA,
    REMOVED_DUP_LOCAL,
    REMOVED_OVERLAP,
    SOURCE_FULL,
    ExtraRaw,
    build_extra,
    dedup_key,
    finish,
    prepare,
)
from gnn_chemalgebra.data.layout import VARIANTS

pytestmark = pytest.mark.integration

N_MIT = 120
_MAPNUM = re.compile(r":(\d+)\]")


def _key(smiles: str) -> str:
    """Independent overlap key: RDKit canonical SMILES without maps and stereo."""
    mol = Chem.MolFromSmiles(smiles)
    for a in mol.GetAtoms():
        a.SetAtomMapNum(0)
    Chem.RemoveStereochemistry(mol)
    return Chem.MolToSmiles(mol, isomericSmiles=False)


def _unmap_leaving(fragment: str, product_maps: set[str]) -> str:
    """Drop the map numbers that do not reach the product, as USPTO-full writes leaving groups."""
    mol = Chem.MolFromSmiles(fragment)
    for a in mol.GetAtoms():
        if str(a.GetAtomMapNum()) not in product_maps:
            a.SetAtomMapNum(0)
    return Chem.MolToSmiles(mol)


def _as_full_row(mapped: str) -> tuple[str, str]:
    """A rexgen mapped reaction written the USPTO-full way: (product, reactants) with unmapped leaving atoms."""
    lhs, rhs = mapped.split(" ")[0].split(">>")
    pmaps = set(_MAPNUM.findall(rhs))
    reactants = [_unmap_leaving(f, pmaps) for f in lhs.split(".") if pmaps & set(_MAPNUM.findall(f))]
    return rhs, ".".join(reactants)


def _with_stereo(targets: list[str]) -> str:
    """The first single-molecule target with a possible stereo centre, written with that centre specified."""
    for t in targets:
        mol = Chem.MolFromSmiles(t)
        centres = Chem.FindMolChiralCenters(mol, includeUnassigned=True) if "." not in t else []
        if centres:
            mol.GetAtomWithIdx(centres[0][0]).SetChiralTag(Chem.ChiralType.CHI_TETRAHEDRAL_CW)
            out = Chem.MolToSmiles(mol)
            assert "@" in out
            return out
    raise AssertionError("no target with a stereo centre")  # pragma: no cover


def _kept_full_rows(mapped_lines: list[str], n: int) -> list[tuple[str, str]]:
    """The first ``n`` reactions that the extra pipeline keeps, written the USPTO-full way."""
    out = []
    for line in mapped_lines:
        product, reactants = _as_full_row(line)
        raw = ExtraRaw(SOURCE_FULL, "val", 2, reactants, "", product)
        prep = prepare(raw)
        if "reason" not in prep and finish((raw, prep))["ok"]:
            out.append((product, reactants))
        if len(out) == n:
            return out
    raise AssertionError("no usable reaction")  # pragma: no cover


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> dict:
    bundled = bundled_data_dir()
    src = tmp_path_factory.mktemp("extra_src")
    for d in ("uspto_mit_mapped", "uspto_mit_tgt", "uspto_500_mt", "uspto_full_gln_valtest"):
        (src / d).mkdir()
    mit = {}
    for split in ("valid", "test"):
        with gzip.open(bundled / "uspto_mit_mapped" / f"{split}.txt.gz", "rt") as fh:
            mapped = [next(fh).rstrip("\n") for _ in range(N_MIT)]
        with gzip.open(bundled / "uspto_mit_tgt" / f"tgt-{split}.txt.gz", "rt") as fh:
            tgt = [next(fh).rstrip("\n") for _ in range(N_MIT)]
        (src / "uspto_mit_mapped" / f"{split}.txt").write_text("\n".join(mapped) + "\n")
        (src / "uspto_mit_tgt" / f"tgt-{split}.txt").write_text("\n".join(tgt) + "\n")
        mit[split] = (mapped, [t.replace(" ", "") for t in tgt])
    with gzip.open(bundled / "uspto_500_mt" / "uspto_500.csv.gz", "rt") as fh:
        mt_rows = list(csv.reader(fh))[1:41]
    full_rows = {}
    for stem in ("uspto_valT", "uspto_testT"):
        with lzma.open(bundled / "uspto_full_gln_valtest" / f"{stem}.csv.xz", "rt") as fh:
            full_rows[stem] = list(csv.reader(fh))[1:31]
    # Crafted rows. Overlaps: an MIT valid product (MIT has no stereo) given a stereo centre; an MIT test reaction.
    overlap_mt = ["CC(C)(C)OC(=O)OC(=O)OC(C)(C)C>>" + _with_stereo(mit["valid"][1]), "", "train"]
    overlap_full = list(_as_full_row(mit["test"][0][7]))
    with gzip.open(bundled / "uspto_mit_mapped" / "valid.txt.gz", "rt") as fh:
        later = [line.rstrip("\n") for k, line in enumerate(fh) if 5000 <= k < 5060]
    (good_product, good_reactants), (other_product, other_reactants) = _kept_full_rows(later, 2)
    # Broken map: one product atom's map number removed on the reactant side (a product atom without partner).
    lost = _MAPNUM.findall(other_product)[0]
    broken = [other_product, re.sub(rf":{lost}\]", "]", other_reactants)]
    mt_rows += [overlap_mt, list(mt_rows[0]), ["CCO", "", "train"]]  # an overlap, a duplicate, a malformed row
    full_rows["uspto_valT"] += [overlap_full, [good_product, good_reactants], broken]
    full_rows["uspto_testT"] += [[good_product, good_reactants]]  # a duplicate across the two files
    with gzip.open(src / "uspto_500_mt" / "uspto_500.csv.gz", "wt", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["rxn", "reagent", "split"])
        w.writerows(mt_rows)
    for stem, rows in full_rows.items():
        _write_csv(src / "uspto_full_gln_valtest" / f"{stem}.csv", ["input", "target"], rows)
    mit_keys = {_key(f) for split in mit.values() for t in split[1] for f in t.split(".")}
    mit_keys |= {_key(f) for split in mit.values() for m in split[0] for f in m.split(" ")[0].split(">>")[1].split(".")}
    return {"dir": src, "mit_keys": mit_keys, "lines": {"overlap_mt": len(mt_rows) - 1, "broken": 34}}


@pytest.fixture(scope="module")
def builds(source: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("extra_builds")
    quiet = {"log": lambda *_: None}
    build_all(out / "local", source=source["dir"], workers=1, **quiet)
    build_all(out / "extra", source=source["dir"], workers=1, extra=True, **quiet)
    return {"local": out / "local", "extra": out / "extra"}


def _records(folder: Path, split: str = "train") -> list[dict]:
    return [json.loads(x) for x in (folder / "uspto_bal" / f"reactions-{split}.jsonl").read_text().splitlines()]


def _skipped(folder: Path) -> list[list[str]]:
    return [row.split("\t") for row in (folder / "extra_skipped.tsv").read_text().splitlines()[1:]]


def test_no_extra_product_equals_a_mit_valid_or_test_product(source: dict, builds: dict[str, Path]) -> None:
    extra = [r for r in _records(builds["extra"]) if "source" in r]
    assert extra, "the fixture keeps some extra reactions"
    for rec in extra:
        gold = rec["products"][:-1] if rec["leftover_product"] is not None else rec["products"]
        assert not {_key(p) for p in gold} & source["mit_keys"], rec["source"]
    removed = [row for row in _skipped(builds["extra"]) if row[3] == REMOVED_OVERLAP]
    m = json.loads((builds["extra"] / "manifest.json").read_text())["extra"]
    assert len(removed) == sum(c["removed_overlap"] for c in m["sources"].values())
    # both crafted overlaps: the stereo-free MIT valid target and the atom-mapped MIT test reaction
    assert ["uspto_500_mt", "train", str(source["lines"]["overlap_mt"])] in [r[:3] for r in removed]
    assert any(r[0] == "uspto_full" and r[2] == "32" for r in removed)


def test_valid_and_test_files_are_byte_identical_to_the_local_build(builds: dict[str, Path]) -> None:
    local = json.loads((builds["local"] / "manifest.json").read_text())
    extra = json.loads((builds["extra"] / "manifest.json").read_text())
    train_files = {"uspto_bal/reactions-train.jsonl", "uspto_bal/src-train.txt", "uspto_bal/tgt-train.txt"}
    for v in VARIANTS:
        train_files |= {
            f"{v}/{k}-{s}.{'jsonl' if k == 'meta' else 'txt'}"
            for k in ("src", "tgt", "meta")
            for s in ("train", "train_cross")
        }
    for rel, info in local["files"].items():
        if rel in train_files:
            assert extra["files"][rel]["lines"] > info["lines"], rel
        else:
            assert extra["files"][rel]["sha256"] == info["sha256"], rel  # valid*, test_* (test_cross too)
    assert set(extra["files"]) - set(local["files"]) == {"extra_skipped.tsv"}
    # the local training lines are an unchanged prefix; the extra reactions come after them
    for rel in ("ChemAlgebra_S_T2_x5/src-train_cross.txt", "uspto_bal/reactions-train.jsonl"):
        a = (builds["local"] / rel).read_bytes()
        assert (builds["extra"] / rel).read_bytes().startswith(a)
    n_local = extra["extra"]["train_reactions"]["local"]
    assert extra["variants"]["ChemAlgebra_F_T1_x1"]["test_cross"] == n_local
    assert extra["variants"]["ChemAlgebra_F_T1_x5"]["train"] == 5 * len(_records(builds["extra"]))


def test_counts_duplicates_and_broken_maps(source: dict, builds: dict[str, Path]) -> None:
    m = json.loads((builds["extra"] / "manifest.json").read_text())["extra"]
    for s, c in m["sources"].items():
        accounted = sum(c["dropped"].values()) + c["removed_overlap"] + sum(c["duplicates"].values()) + c["kept"]
        assert accounted == c["read"], s
    mt, full = m["sources"]["uspto_500_mt"], m["sources"]["uspto_full"]
    assert mt["read"] == 43 and full["read"] == 64
    assert mt["duplicates"][REMOVED_DUP_EXTRA] == 1 and full["duplicates"][REMOVED_DUP_EXTRA] == 1
    assert mt["dropped"]["malformed_line"] == 1
    assert full["dropped"]["map_product_atom_without_reactant_atom"] >= 1
    rows = {(r[0], r[1], r[2]): r[3] for r in _skipped(builds["extra"])}
    assert rows[("uspto_full", "val", str(source["lines"]["broken"]))] == "map_product_atom_without_reactant_atom"
    assert rows[("uspto_full", "test", "32")] == REMOVED_DUP_EXTRA
    assert m["train_reactions"]["extra"] == mt["kept"] + full["kept"]
    # every kept USPTO-full record: its edit labels reproduce its product
    kept_full = [r for r in _records(builds["extra"]) if r.get("source", {}).get("set") == "uspto_full"]
    assert kept_full and all(check_record(r)[0] == "" for r in kept_full)
    assert all(r["edits"] is not None and r["mapped"].count(">>") == 1 for r in kept_full)


def test_duplicates_of_local_training_reactions_are_counted(source: dict) -> None:
    with gzip.open(source["dir"] / "uspto_500_mt" / "uspto_500.csv.gz", "rt") as fh:
        first = list(csv.reader(fh))[1]
    reactants, product = first[0].split(">>")
    canon = [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in (*reactants.split("."), product)]
    local = {dedup_key(canon[:-1], canon[-1:])}
    _, counts, skipped = build_extra(source["dir"], set(), local, workers=1, limit=3)
    assert counts["uspto_500_mt"]["duplicates"][REMOVED_DUP_LOCAL] == 1
    assert skipped[0].split("\t")[3] == REMOVED_DUP_LOCAL


def test_extra_build_is_deterministic_and_verified(source: dict, builds: dict[str, Path], tmp_path: Path) -> None:
    assert verify(builds["extra"]) == []
    # another process with another string-hash seed gives the same bytes
    code = (
        "import sys; from gnn_chemalgebra.data.build import build_all; "
        "build_all(sys.argv[1], source=sys.argv[2], workers=2, extra=True, log=lambda *_: None)"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "again"), str(source["dir"])], check=True, env=env)
    a = json.loads((builds["extra"] / "manifest.json").read_text())
    b = json.loads((tmp_path / "again" / "manifest.json").read_text())
    assert a["files"] == b["files"] and a["extra"] == b["extra"]
    # verify re-checks the per-source accounting
    b["extra"]["sources"]["uspto_full"]["kept"] += 1
    (tmp_path / "again" / "manifest.json").write_text(json.dumps(b))
    assert any("uspto_full" in p for p in verify(tmp_path / "again"))


def test_missing_extra_source_is_one_error_line(tmp_path: Path, source: dict) -> None:
    src = tmp_path / "src"
    for d in ("uspto_mit_mapped", "uspto_mit_tgt"):
        (src / d).mkdir(parents=True)
        for f in (source["dir"] / d).iterdir():
            (src / d / f.name).write_bytes(f.read_bytes())
    res = CliRunner().invoke(app, ["data", "build", "--out", str(tmp_path / "o"), "--source", str(src), "--extra"])
    assert res.exit_code == 2
    assert "uspto_500_mt/uspto_500.csv" in res.output and "Traceback" not in res.output


def test_audit_finds_no_overlap_and_catches_a_planted_one(
    source: dict, builds: dict[str, Path], tmp_path: Path, experiment: Callable[[str], ModuleType]
) -> None:
    """experiments/extra_audit.py, the build's independent check, on this fixture's builds."""
    audit = experiment("extra_audit")
    audit_overlap, compare_to_local = audit.audit_overlap, audit.compare_to_local
    report = audit_overlap(builds["extra"], source["dir"])
    assert report["problems"] == [] and report["extra_records"] > 0
    assert report["sidecar"]["smiles_lines_checked"] > 0
    same = compare_to_local(builds["extra"], builds["local"])
    assert same["problems"] == [] and same["train_prefix_identical"] == 8 * 6 + 2
    # plant an MIT valid product into an extra record of a copy: the audit names it
    copy = tmp_path / "copy"
    (copy / "uspto_bal").mkdir(parents=True)
    recs = _records(builds["extra"])
    victim = next(r for r in recs if "source" in r)
    mit_product = _records(builds["local"], "valid")[0]["products"][0]
    victim["products"] = [mit_product, *victim["products"][1:]]
    victim["leftover_product"] = None
    lines = "\n".join(json.dumps(r) for r in recs) + "\n"
    (copy / "uspto_bal" / "reactions-train.jsonl").write_text(lines)
    planted = audit_overlap(copy, source["dir"])["problems"]
    assert len(planted) == 1 and f"id {victim['id']}" in planted[0]


def test_edit_examples_skip_extra_records_without_atom_maps(builds: dict[str, Path]) -> None:
    from gnn_chemalgebra.data.edit_dataset import build_examples

    recs = _records(builds["extra"])
    n_mt = sum(1 for r in recs if r.get("source", {}).get("set") == "uspto_500_mt")
    examples, _, skipped = build_examples(recs)
    assert n_mt and skipped.get("no_atom_map") == n_mt
    assert len(examples) + sum(skipped.values()) == len(recs)


def test_formula_extra_adds_the_rows_the_leftover_rule_drops(builds: dict[str, Path], tmp_path: Path) -> None:
    """``gnnca data formula-extra``: the extra rows dropped for their leftover chain become formula training lines
    (counted, screened again), appended after the built training lines; every other file is the built one."""
    from gnn_chemalgebra.chem.bag import parse_bag
    from gnn_chemalgebra.chem.leftover import formula_chain_admissible
    from gnn_chemalgebra.data.dataset import load_examples

    rejected = [row for row in _skipped(builds["extra"]) if row[3] == "leftover_rejected_by_rdkit"]
    assert rejected, "the fixture has rows the leftover rule drops"
    out = tmp_path / "fo"
    res = CliRunner().invoke(app, ["data", "formula-extra", str(builds["extra"]), "--out", str(out), "--workers", "1"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    c = manifest["formula_extra"]
    assert c["rows_listed"] == c["rows_read"] == len(rejected)
    assert c["kept"] > 0 and c["rows_read"] == sum(v for k, v in c.items() if k not in ("rows_listed", "rows_read"))
    assert sorted(manifest["variants"]) == ["ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x1"]
    assert verify(out) == []
    v = "ChemAlgebra_F_T1_x1"
    for split in ("train", "train_cross"):
        old = (builds["extra"] / v / f"src-{split}.txt").read_text().splitlines()
        new = (out / v / f"src-{split}.txt").read_text().splitlines()
        assert new[: len(old)] == old and len(new) == len(old) + c["kept"] == manifest["variants"][v][split]
    for name in ("src-valid.txt", "tgt-test_in.txt", "meta-test_cross.jsonl"):
        assert (out / v / name).read_bytes() == (builds["extra"] / v / name).read_bytes()
    # the added targets hold leftovers the benchmark could not write (that is why the rows were dropped)
    n_old = len((builds["extra"] / v / "tgt-train.txt").read_text().splitlines())
    added = (out / v / "tgt-train.txt").read_text().splitlines()[n_old:]
    srcs = (out / v / "src-train.txt").read_text().splitlines()[n_old:]
    mols = {t.mol for line in (*added, *srcs) for t in parse_bag(line)}
    assert any(not formula_chain_admissible(m) for m in mols)
    metas = [json.loads(x) for x in (out / v / "meta-train.jsonl").read_text().splitlines()]
    assert not any("roles_only" in m for m in metas[:n_old]) and all(m["roles_only"] for m in metas[n_old:])
    exs = load_examples(out, v, "train")
    assert [ex.roles_only for ex in exs] == [False] * n_old + [True] * c["kept"]
    with_left = tmp_path / "with_left"
    res = CliRunner().invoke(
        app, ["data", "formula-extra", str(builds["extra"]), "--out", str(with_left), "--leftover-labels"]
    )
    assert res.exit_code == 0 and "roles_only" not in (with_left / v / "meta-train.jsonl").read_text()
    built_again = CliRunner().invoke(app, ["data", "formula-extra", str(builds["extra"]), "--out", str(tmp_path / "b")])
    assert (
        built_again.exit_code == 0
        and (tmp_path / "b" / v / "tgt-train.txt").read_bytes() == (out / v / "tgt-train.txt").read_bytes()
    )  # deterministic
    missing = CliRunner().invoke(app, ["data", "formula-extra", str(tmp_path / "nope"), "--out", str(tmp_path / "c")])
    assert missing.exit_code == 2 and "built folder not found" in missing.output and "Traceback" not in missing.output


def test_dropped_closes_the_rows_the_leftover_rule_drops(source: dict, builds: dict[str, Path], tmp_path: Path) -> None:
    """``gnnca data dropped``: every row the rule dropped is counted (screened out, closed or not closed by reason);
    the closed ones are balanced with real by-products, never share a product with a MIT valid/test reaction,
    and become Type-1 and Type-2 lines whose targets are source + xi * nu; maps only where USPTO-full has them."""
    from gnn_chemalgebra.chem.bag import bag_totals, parse_bag
    from gnn_chemalgebra.chem.molecule import composition
    from gnn_chemalgebra.data.dataset import load_examples

    rejected = [row for row in _skipped(builds["extra"]) if row[3] == "leftover_rejected_by_rdkit"]
    out = tmp_path / "dropped"
    res = CliRunner().invoke(app, ["data", "dropped", str(builds["extra"]), "--out", str(out), "--workers", "1"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"] == json.loads((builds["extra"] / "manifest.json").read_text())["source"]  # as named
    c = manifest["counts"]
    assert c["rows_listed"] == c["rows_read"] == len(rejected)
    assert c["rows_read"] == sum(c["screened_out"].values()) + c["closed"] + sum(c["not_closed"].values())
    assert c["closed"] > 0 and c["not_closed"] and c["mapped"] + c["unmapped"] == c["closed"]
    assert verify(out) == []  # every file's line count and sha256
    recs = [json.loads(x) for x in (out / "reactions-train.jsonl").read_text().splitlines()]
    assert len(recs) == c["closed"] and sum(c["byproducts"].values()) == sum(len(r["byproducts"]) for r in recs)
    for rec in recs:
        assert not {_key(p) for p in rec["products"]} & source["mit_keys"]
        assert (rec["mapped"] is not None) == (rec["source"]["set"] == SOURCE_FULL)
        total: dict[str, int] = {}
        for m in rec["reactants"]:
            for k, v in composition(m, "smiles").items():
                total[k] = total.get(k, 0) - v * rec["coefficients"][m]
        for m in (*rec["products"], *rec["byproducts"]):
            for k, v in composition(m, "smiles").items():
                total[k] = total.get(k, 0) + v * rec["coefficients"][m]
        assert not any(total.values()), rec
    unbalanced = (out / "unbalanced.tsv").read_text().splitlines()[1:]
    assert len(unbalanced) == sum(c["not_closed"].values())
    for repr in ("S", "F"):
        t1, t2 = f"ChemAlgebra_{repr}_T1_x1", f"ChemAlgebra_{repr}_T2_x1"
        assert c["lines"][t1] == c["closed"] and c["lines"][t2] == 2 * c["closed"] - c["type2_not_written"][t2]
        for v in (t1, t2):
            rows = zip(*((out / v / f"{k}-train.{e}").read_text().splitlines() for k, e in
                         (("src", "txt"), ("tgt", "txt"), ("meta", "jsonl"))), strict=True)  # fmt: skip
            for src, tgt, meta_line in rows:
                meta = json.loads(meta_line)
                s, t, nu = bag_totals(parse_bag(src)), bag_totals(parse_bag(tgt)), dict(meta["nu"])
                assert all(t.get(m, 0) == s.get(m, 0) + meta["xi"] * nu.get(m, 0) for m in {*s, *t, *nu})
                assert meta["convention"] == "chemist" and meta["mapped"] == (meta["source"]["set"] == SOURCE_FULL)
        assert len(load_examples(out, t2, "train")) == c["lines"][t2]
    again = CliRunner().invoke(app, ["data", "dropped", str(builds["extra"]), "--out", str(tmp_path / "b")])
    assert again.exit_code == 0
    for rel in ("reactions-train.jsonl", "ChemAlgebra_F_T2_x1/src-train.txt", "ChemAlgebra_S_T2_x1/meta-train.jsonl"):
        assert (tmp_path / "b" / rel).read_bytes() == (out / rel).read_bytes()  # deterministic
    few = CliRunner().invoke(
        app, ["data", "dropped", str(builds["extra"]), "--out", str(tmp_path / "few"), "--limit", "3"]
    )
    assert (
        few.exit_code == 0 and json.loads((tmp_path / "few" / "manifest.json").read_text())["counts"]["rows_read"] == 3
    )
    inside = CliRunner().invoke(app, ["data", "dropped", str(builds["extra"]), "--out", str(builds["extra"] / "d")])
    assert inside.exit_code == 2 and "outside the build folder" in inside.output and "Traceback" not in inside.output
    local = CliRunner().invoke(app, ["data", "dropped", str(builds["local"]), "--out", str(tmp_path / "c")])
    assert local.exit_code == 2 and "built without --extra" in local.output
