"""The builder on real bundled reactions: determinism, manifest, sidecar identity, coefficient sets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gnn_chemalgebra.algebra.extent import S_IN, S_OUT
from gnn_chemalgebra.chem.bag import bag_totals, parse_bag
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.build import build_all, verify
from gnn_chemalgebra.data.layout import VARIANT_SPLITS, VARIANTS, split_files, variant_props
from gnn_chemalgebra.io import read_lines

pytestmark = pytest.mark.integration


def _meta(path: Path) -> list[dict]:
    return [json.loads(x) for x in read_lines(path)]


def test_manifest_counts_and_files(built_small: Path) -> None:
    m = json.loads((built_small / "manifest.json").read_text())
    assert m["protocol"] == "local"
    for split in ("valid", "test"):
        c = m["uspto_bal"][split]
        assert c["total"] == 300
        assert c["kept"] == c["balanced"] + c["rebalanced"]
        assert c["kept"] + sum(c["skipped"].values()) == c["total"]
        assert 0.3 < c["kept"] / c["total"] < 0.6  # the paper keeps 44%
    skipped = read_lines(built_small / "skipped.tsv")
    assert len(skipped) - 1 == sum(sum(m["uspto_bal"][s]["skipped"].values()) for s in ("valid", "test"))
    for v in VARIANTS:
        for split in VARIANT_SPLITS:
            for p in split_files(built_small, v, split):
                assert m["files"][p.relative_to(built_small).as_posix()]["lines"] == m["variants"][v][split]
    assert verify(built_small) == []


def test_every_line_is_source_plus_extent_times_nu(built_small: Path) -> None:
    for v in VARIANTS:
        props = variant_props(v)
        for split in VARIANT_SPLITS:
            src_p, tgt_p, meta_p = split_files(built_small, v, split)
            for s, t, meta in zip(read_lines(src_p), read_lines(tgt_p), _meta(meta_p), strict=True):
                src, tgt = bag_totals(parse_bag(s)), bag_totals(parse_bag(t))
                nu = dict(meta["nu"])
                for mol in set(src) | set(tgt) | set(nu):
                    assert tgt.get(mol, 0) == src.get(mol, 0) + meta["xi"] * nu.get(mol, 0)
                allowed = set(S_IN if meta["set"] == "in" else S_OUT)
                assert set(meta["k"].values()) <= allowed
                if props["type"] == 1:
                    assert {term.coef for term in parse_bag(s)} == {meta["xi"]}
                assert len(meta["src_roles"]) == len(parse_bag(s))


def test_settings_and_cross_split(built_small: Path) -> None:
    v = "ChemAlgebra_S_T1_x5"
    metas = {s: _meta(split_files(built_small, v, s)[2]) for s in VARIANT_SPLITS}
    assert {m["set"] for m in metas["test_out"]} == {"out"}
    assert {m["set"] for m in metas["test_in"]} == {"in"}
    # x5: five consecutive draws of one base reaction in the training sets only
    assert len(metas["train"]) == 5 * len(metas["test_cross"])
    assert [m["rxn"] for m in metas["train"][:5]] == [metas["train"][0]["rxn"]] * 5
    # cross: half the train reactions in, half out; test_cross swaps them
    train_set = {m["rxn"]: m["set"] for m in metas["train_cross"]}
    n_in = sum(1 for s in train_set.values() if s == "in")
    assert abs(n_in - len(train_set) / 2) <= 1
    for m in metas["test_cross"]:
        assert m["set"] != train_set[m["rxn"]]


def test_build_is_deterministic_and_verify_catches_changes(built_small: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_all(again, seed=0, workers=2, limit=300, log=lambda *_: None)
    a = json.loads((built_small / "manifest.json").read_text())["files"]
    b = json.loads((again / "manifest.json").read_text())["files"]
    assert a == b
    other = tmp_path / "seed1"
    build_all(other, seed=1, workers=1, limit=300, variants=["ChemAlgebra_F_T2_x1"], log=lambda *_: None)
    c = json.loads((other / "manifest.json").read_text())["files"]
    key = "ChemAlgebra_F_T2_x1/src-train.txt"
    assert c[key]["sha256"] != a[key]["sha256"]
    # tamper with a copy, verify reports it, the CLI exits 1
    copy = tmp_path / "copy"
    shutil.copytree(again, copy)
    p = copy / "ChemAlgebra_F_T1_x1" / "tgt-test_in.txt"
    p.write_text(p.read_text().replace("{1}", "{2}", 1))
    problems = verify(copy)
    assert len(problems) == 1 and "tgt-test_in.txt" in problems[0]
    res = CliRunner().invoke(app, ["data", "verify", str(copy)])
    assert res.exit_code == 1


def test_strict_mode_names_the_bad_line(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "uspto_mit_mapped").mkdir(parents=True)
    (src / "uspto_mit_tgt").mkdir()
    good = "[CH3:1][OH:2].[Na+:3]>>[CH3:1][OH:2] 1-2"
    (src / "uspto_mit_mapped" / "valid.txt").write_text(f"{good}\n[CH3:1]((>>C 1-2\n")
    (src / "uspto_mit_tgt" / "tgt-valid.txt").write_text("C O\nC\n")
    (src / "uspto_mit_mapped" / "test.txt").write_text(f"{good}\n")
    (src / "uspto_mit_tgt" / "tgt-test.txt").write_text("C O\n")
    res = CliRunner().invoke(app, ["data", "build", "--out", str(tmp_path / "o"), "--source", str(src), "--strict"])
    assert res.exit_code == 2
    assert "valid.txt:2:" in res.output and "unparsable_reactants" in res.output
    # without --strict the line is skipped and reported
    m = build_all(tmp_path / "o2", source=src, workers=1, log=lambda *_: None)
    assert m["uspto_bal"]["valid"]["skipped"] == {"unparsable_reactants": 1}


def test_paper_protocol_when_a_train_split_is_supplied(tmp_path: Path) -> None:
    import gzip

    from gnn_chemalgebra.data.build import bundled_data_dir

    src = tmp_path / "src"
    (src / "uspto_mit_mapped").mkdir(parents=True)
    (src / "uspto_mit_tgt").mkdir()
    bundled = bundled_data_dir()
    for split, take in (("train", (0, 120)), ("valid", (120, 160)), ("test", (160, 200))):
        with gzip.open(bundled / "uspto_mit_mapped" / "valid.txt.gz", "rt") as fh:
            mapped = fh.read().splitlines()[take[0] : take[1]]
        with gzip.open(bundled / "uspto_mit_tgt" / "tgt-valid.txt.gz", "rt") as fh:
            tgt = fh.read().splitlines()[take[0] : take[1]]
        (src / "uspto_mit_mapped" / f"{split}.txt").write_text("\n".join(mapped) + "\n")
        (src / "uspto_mit_tgt" / f"tgt-{split}.txt").write_text("\n".join(tgt) + "\n")
    m = build_all(tmp_path / "out", source=src, workers=1, variants=["ChemAlgebra_S_T1_x1"], log=lambda *_: None)
    assert m["protocol"] == "paper"
    assert set(m["uspto_bal"]) == {"train", "valid", "test"}
    assert m["bal_splits"]["train"] == {"from_mit": "train", "reactions": m["uspto_bal"]["train"]["kept"]}
    assert m["variants"]["ChemAlgebra_S_T1_x1"]["test_cross"] == m["uspto_bal"]["train"]["kept"]


def test_fast_composition_is_mol_composition_in_count_and_order() -> None:
    from rdkit import Chem

    from gnn_chemalgebra.chem.composition import mol_composition
    from gnn_chemalgebra.data.uspto import canonical_fragment, fast_composition

    tricky = ["[H][H]", "[2H]C([2H])([2H])O", "[NH4+]", "[H+]", "[H-]", "C[H]", "[O-][H]", "[CH3]", "[Fe+3]", "[Cl-]"]
    tricky += ["CC(=O)[O-].[Na+]", "O=[N+]([O-])c1ccccc1", "[BH4-]", "C[Si](C)(C)Cl", "c1ccncc1", "[Pd]"]
    for smi in tricky:
        mol = Chem.MolFromSmiles(canonical_fragment(smi))
        a, b = mol_composition(mol), fast_composition(mol)
        assert a == b and list(a) == list(b), smi
    assert canonical_fragment("[CH3:1][OH:2]") == "CO"
    assert canonical_fragment("C1CC") is None


def test_missing_folders_are_one_line_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["data", "verify", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "nope: folder not found" in res.output
    res = runner.invoke(app, ["data", "build", "--out", str(tmp_path / "o"), "--source", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "nope: source folder not found" in res.output
