"""Knowledge distillation (training/distill.py, experiments/distill_teacher.py): which lines the teacher reads, how its
rows reach a mixed Type-1/Type-2 split, that the KD term changes the loss and pulls the student to the teacher,
that weight 0 is the old training path, and that a distillation run resumes exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from gnn_chemalgebra.checkpoint import load_checkpoint
from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.data.dataset import load_examples, write_toy_variant
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.training.distill import (
    DistillTargets,
    compute_teacher,
    load_teacher,
    soft_kl,
    teacher_lines,
)
from gnn_chemalgebra.training.run import train

pytestmark = pytest.mark.integration
MIXED = "ChemAlgebra_F_T2_x1"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, script) -> Path:
    """Toy F_T1_x1 and F_T2_x1 variants, mixed as scripts/mix_type_lines.py does for the bundled models."""
    raw = tmp_path_factory.mktemp("toy_pair")
    for v in ("ChemAlgebra_F_T1_x1", MIXED):
        write_toy_variant(raw, v, {"train": 30, "valid": 8})
    out = tmp_path_factory.mktemp("toy_mixed")
    (out / MIXED).mkdir()
    script("mix_type_lines").mix(raw, MIXED, out)
    return out


def cfg(data: Path, run: Path, *extra: str) -> dict:
    sets = [f"data.dir={data}", f"data.variant={MIXED}", f"run_dir={run}", "train.tensorboard=false", *extra]
    return load_config("configs/gnn_tiny.yaml", sets)


@pytest.fixture(scope="module")
def teacher(mixed, tmp_path_factory, script, experiment) -> Path:
    """A tiny trained teacher's labels over the mixed training lines, written by the script."""
    run = tmp_path_factory.mktemp("teacher_run")
    train(cfg(mixed, run, "train.epochs=3"))
    out = tmp_path_factory.mktemp("teacher") / "teacher.npz"
    ck = str(run / "last.pt")
    rc = experiment("distill_teacher").main(["--built", str(mixed), "--variant", MIXED, "--checkpoint", f"{ck},{ck}",
                                         "--out", str(out), "--batch-size", "7"])  # fmt: skip
    assert rc == 0
    return out


@pytest.mark.unit
def test_soft_kl_is_zero_at_the_teacher_and_grows_away_from_it() -> None:
    t = torch.log_softmax(torch.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]]), -1)
    assert float(soft_kl(t, t.clone(), 1.0)) == pytest.approx(0.0, abs=1e-6)
    assert float(soft_kl(t, t + 5.0, 2.0)) == pytest.approx(0.0, abs=1e-6)  # logits up to a shift per row
    far = torch.tensor([[-1.0, 0.0, 2.0], [3.0, 0.0, 0.0]])
    assert float(soft_kl(t, far, 1.0)) > 0.5
    # a teacher with fewer classes counts the missing ones as impossible
    assert float(soft_kl(t[:, :2], torch.tensor([[0.0, 0.0, -30.0]] * 2), 1.0)) > 0
    empty = torch.zeros(0, 3, requires_grad=True)
    assert float(soft_kl(t[:0], empty, 1.0).detach()) == 0.0


def test_teacher_reads_the_type1_line_of_each_reaction(mixed) -> None:
    ex = load_examples(mixed, MIXED, "train")
    idx = teacher_lines(ex)
    assert len(idx) == len({e.rxn for e in ex})
    assert all(i % 2 == 0 for i in idx)  # mixed lines: Type-1 line i, then its Type-2 twin
    for i in idx:
        assert all(len(ex[i].mols) <= len(e.mols) for e in ex if e.rxn == ex[i].rxn)


def test_labels_reach_type2_twins_on_shared_molecules_only(mixed, teacher) -> None:
    man = json.loads(Path(f"{teacher}.json").read_text())
    labels = load_teacher(teacher)
    assert man["reactions"] == len(labels) == len(set(labels.rxn.tolist()))
    assert man["molecules"] == len(labels.mols) == labels.role_lp.shape[0]
    assert len(man["teacher"]) == 2 and len(man["sha256"]) == 64 and man["data"]["lines"] == 60
    assert np.allclose(np.exp(labels.role_lp).sum(-1), 1.0, atol=1e-4)
    ex = load_examples(mixed, MIXED, "train")
    C = Featurizer("formula").settings()["comp_dim"]
    tg = DistillTargets(labels, ex, C)
    entry = {r: k for k, r in enumerate(labels.rxn.tolist())}
    mols_of = {r: labels.mols[labels.mol_ptr[k] : labels.mol_ptr[k + 1]] for r, k in entry.items()}
    present = [i for i, e in enumerate(ex) if set(e.mols) != set(mols_of[e.rxn])]
    assert present and all(i % 2 == 1 for i in present), "Type-2 lines with a product already present"
    assert tg.lines_roles == len(ex) and tg.lines_left == len(ex) - len(present)
    for i in present:
        e, a = entry[ex[i].rxn], tg.mol_off[i]
        for j, m in enumerate(ex[i].mols):
            assert bool(tg.role_mask[a + j]) == (m in mols_of[ex[i].rxn])  # a product present has no teacher row
            if m in mols_of[ex[i].rxn]:
                k = labels.mols.index(m, int(labels.mol_ptr[e]), int(labels.mol_ptr[e + 1]))
                assert torch.allclose(tg.role_lp[a + j], torch.from_numpy(labels.role_lp[k]))
        assert not ((tg.left_keys >= i * C) & (tg.left_keys < (i + 1) * C)).any()


def test_teacher_labels_match_the_network_and_refuse_bad_files(mixed, teacher, tmp_path) -> None:
    labels = load_teacher(teacher)
    run = Path(json.loads(Path(f"{teacher}.json").read_text())["teacher"][0]["checkpoint"])
    again = compute_teacher([str(run)], load_examples(mixed, MIXED, "train"), batch_size=64)
    assert np.allclose(again.role_lp, labels.role_lp, atol=1e-5)  # two copies of one model = the model
    assert np.allclose(again.left_lp, labels.left_lp, atol=1e-5)
    bad = tmp_path / "t.npz"
    bad.write_bytes(teacher.read_bytes())
    Path(f"{bad}.json").write_text(json.dumps({"sha256": "0" * 64}))
    with pytest.raises(InputError, match="differ from their manifest"):
        load_teacher(bad)
    (tmp_path / "x.npz").write_text("not numpy")
    with pytest.raises(InputError, match="not a teacher-label file"):
        load_teacher(tmp_path / "x.npz")
    with pytest.raises(InputError, match="needs train.distill_labels"):
        train(cfg(mixed, tmp_path / "r", "train.max_steps=1", "train.distill_weight=1"))


def _losses(mixed: Path, run: Path, *extra: str) -> list[dict]:
    return [r["train"] for r in train(cfg(mixed, run, "train.epochs=2", "train.eval_every=2", *extra))["history"]]


def test_kd_term_changes_the_loss_and_zero_weight_is_the_old_path(mixed, teacher, tmp_path) -> None:
    base = _losses(mixed, tmp_path / "base")
    zero = _losses(mixed, tmp_path / "zero", f"train.distill_labels={teacher}", "train.distill_weight=0")
    assert [r["total"] for r in zero] == [r["total"] for r in base]
    a, b = (load_checkpoint(tmp_path / r / "last.pt")["model"] for r in ("base", "zero"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    kd = _losses(mixed, tmp_path / "kd", f"train.distill_labels={teacher}", "train.distill_weight=2",
                 "train.distill_temperature=2")  # fmt: skip
    assert "kd_role" in kd[0] and "kd_left" in kd[0] and "kd_role" not in base[0]
    first = kd[0]
    gold = sum(v for k, v in first.items() if k in ("role", "extra", "leftover", "extent")) + 0.1 * first["penalty"]
    assert first["total"] == pytest.approx(gold + 2 * (first["kd_role"] + first["kd_left"]), rel=1e-4)
    summary = json.loads((tmp_path / "kd" / "summary.json").read_text())
    assert summary["distill_lines"] == 60 and 0 < summary["distill_lines_leftover"] < 60


def test_kd_pulls_the_student_towards_the_teacher(mixed, teacher, tmp_path) -> None:
    common = ("train.epochs=4", "train.eval_every=4", "model.hidden=16")
    runs = {}
    for name, w in (("plain", "0"), ("kd", "20")):
        train(cfg(mixed, tmp_path / name, *common, f"train.distill_labels={teacher}",
                      f"train.distill_weight={w}"))  # fmt: skip
        runs[name] = tmp_path / name / "last.pt"
    labels = load_teacher(teacher)
    ex = load_examples(mixed, MIXED, "train")
    far = {}
    for name, ck in runs.items():
        got = compute_teacher([str(ck)], ex)
        far[name] = float(soft_kl(torch.from_numpy(labels.role_lp), torch.from_numpy(got.role_lp), 1.0))
    assert far["kd"] < far["plain"]


def test_a_distillation_run_resumes_exactly(mixed, teacher, tmp_path) -> None:
    kd = (f"train.distill_labels={teacher}", "train.distill_weight=1")
    train(cfg(mixed, tmp_path / "once", "train.epochs=2", *kd))
    train(cfg(mixed, tmp_path / "twice", "train.epochs=1", *kd))
    train(cfg(mixed, tmp_path / "twice", "train.epochs=2", *kd), resume=True)
    a, b = (load_checkpoint(tmp_path / r / "last.pt")["model"] for r in ("once", "twice"))
    assert all(torch.allclose(a[k].float(), b[k].float(), atol=1e-6) for k in a)
