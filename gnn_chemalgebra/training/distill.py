"""Knowledge distillation for the bag GNN: a teacher's soft labels, computed once, and the loss term that reads them.

The teacher (one bag GNN, or several read as one :class:`~..models.bag_ensemble.BagEnsemble`: role and leftover
log-probabilities averaged) reads each reaction of a training split once, on its line with the fewest molecules
(the Type-1 line of a mixed split), and :func:`save_teacher` stores per reaction (the
``rxn`` of the meta files) its molecules with their role log-probabilities and its leftover slots (one per
element of the bag, plus H and the charge) with their count-class log-probabilities, in one ``.npz`` with a JSON
manifest beside it (counts, the teacher checkpoints' and the training files' sha256).

:class:`DistillTargets` aligns those labels with a student's training lines: every line of a reaction (the
Type-1 line and its Type-2 twin in a mixed split, scripts/mix_type_lines.py) takes the teacher's role
distribution for each molecule the two lines share; the leftover distribution only where the line holds the same
molecules as the teacher's (a product already present changes which new product is the by-product). The KD term
is the KL divergence from the teacher's distribution to the student's at temperature ``T``, times ``T**2``, per
head, averaged over the rows that have a teacher row; ``train.distill_weight`` scales their sum.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..checkpoint import load_checkpoint
from ..data.dataset import BagExample, ExtraVocab, collate_examples, vocab_compositions
from ..data.featurize import Featurizer
from ..errors import InputError
from ..io import atomic_write_bytes, atomic_write_json, sha256_file
from ..models.bag_ensemble import BagEnsemble
from ..models.gnn import BagGNNConfig, build_model

TEACHER_FORMAT = 1
_FLOOR = -1e4  # log-probability of a count class the teacher does not have


@dataclass
class TeacherLabels:
    """Soft labels per reaction ``r``: molecules ``mols[mol_ptr[r]:mol_ptr[r+1]]`` with ``role_lp`` rows, leftover
    slots ``slot_elem[slot_ptr[r]:slot_ptr[r+1]]`` (composition columns, ascending) with ``left_lp`` rows."""

    rxn: np.ndarray  # [R] int64
    mols: list[str]
    mol_ptr: np.ndarray  # [R+1] int64
    role_lp: np.ndarray  # [sum M, roles] float32
    slot_elem: np.ndarray  # [sum S] int64
    slot_ptr: np.ndarray  # [R+1] int64
    left_lp: np.ndarray  # [sum S, count classes] float32
    repr: str

    def __len__(self) -> int:
        return int(self.rxn.size)


def teacher_lines(examples: Sequence[BagExample]) -> list[int]:
    """Per reaction (``rxn``), the line with the fewest molecules, the first of those: the Type-1 line of a mixed
    split (its Type-2 twin holds the same molecules plus any product already present)."""
    chosen: dict[int, int] = {}
    for i, ex in enumerate(examples):
        if ex.rxn is None:
            raise InputError(f"training line {i + 1} has no reaction id ('rxn' in its meta line): cannot pair lines")
        j = chosen.get(int(ex.rxn))
        if j is None or len(ex.mols) < len(examples[j].mols):
            chosen[int(ex.rxn)] = i
    return sorted(chosen.values())


def load_members(paths: Sequence[str]) -> tuple[torch.nn.Module, Featurizer]:
    """The teacher network (several checkpoints of one representation: their averaged heads) and its featurizer."""
    members, feat = [], None
    for p in paths:
        ck = load_checkpoint(p, require=("model", "featurizer", "meta"), kind="GNN (bag model)")
        f = Featurizer(ck["featurizer"]["repr"])
        if feat is not None and f.repr != feat.repr:
            raise InputError(f"a teacher needs one representation: {paths[0]} reads {feat.repr}, this {f.repr}", path=p)
        feat = feat or f
        vocab = ExtraVocab(ck["featurizer"]["vocab"][1:])
        model = build_model(BagGNNConfig.from_meta(ck["meta"], p), vocab_compositions(vocab, f))
        model.load_state_dict(ck["model"])
        members.append(model.eval())
    if feat is None:
        raise InputError("no teacher checkpoint given")
    net = members[0] if len(members) == 1 else BagEnsemble(members, same_vocab=False).eval()
    return net, feat


@torch.no_grad()
def compute_teacher(
    paths: Sequence[str],
    examples: Sequence[BagExample],
    batch_size: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> TeacherLabels:
    """The teacher's role and leftover log-probabilities for each reaction of ``examples`` (:func:`teacher_lines`)."""
    net, feat = load_members(paths)
    idx = teacher_lines(examples)
    rxn, mols, mol_ptr, role, elem, slot_ptr, left = [], [], [0], [], [], [0], []
    for start in range(0, len(idx), batch_size):
        chunk = [examples[i] for i in idx[start : start + batch_size]]
        batch = collate_examples(chunk, feat)
        out = net(batch)
        role_lp = F.log_softmax(out["role_logits"].float(), -1)
        if "left_logits" not in out:
            raise InputError("the teacher has no leftover head (model.leftover: elements)", path=paths[0])
        left_lp = F.log_softmax(out["left_logits"].float(), -1)
        role.append(role_lp.numpy())
        left.append(left_lp.numpy())
        elem.append(out["left_elem"].numpy())
        per_bag = torch.bincount(out["left_bag"], minlength=len(chunk)).tolist()
        for ex, n_slots in zip(chunk, per_bag, strict=True):
            rxn.append(int(ex.rxn))  # type: ignore[arg-type]
            mols.extend(ex.mols)
            mol_ptr.append(mol_ptr[-1] + len(ex.mols))
            slot_ptr.append(slot_ptr[-1] + n_slots)
        if progress is not None:
            progress(min(start + batch_size, len(idx)), len(idx))
    n_roles = len(feat.settings()["role_nu"])
    return TeacherLabels(
        rxn=np.asarray(rxn, dtype=np.int64),
        mols=mols,
        mol_ptr=np.asarray(mol_ptr, dtype=np.int64),
        role_lp=np.concatenate(role).astype(np.float32) if role else np.zeros((0, n_roles), np.float32),
        slot_elem=np.concatenate(elem).astype(np.int64) if elem else np.zeros(0, np.int64),
        slot_ptr=np.asarray(slot_ptr, dtype=np.int64),
        left_lp=np.concatenate(left).astype(np.float32) if left else np.zeros((0, 1), np.float32),
        repr=feat.repr,
    )


def save_teacher(path: str | Path, labels: TeacherLabels, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write ``path`` (.npz, atomic) and ``<path>.json``: ``manifest`` plus the format, counts and the npz sha256."""
    path = Path(path)
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        rxn=labels.rxn,
        mols=np.asarray(labels.mols, dtype=np.str_),
        mol_ptr=labels.mol_ptr,
        role_lp=labels.role_lp,
        slot_elem=labels.slot_elem,
        slot_ptr=labels.slot_ptr,
        left_lp=labels.left_lp,
        repr=np.asarray(labels.repr),
        format=np.asarray(TEACHER_FORMAT),
    )
    atomic_write_bytes(path, buf.getvalue())
    full = {
        **manifest,
        "format": TEACHER_FORMAT,
        "repr": labels.repr,
        "file": path.name,
        "sha256": sha256_file(path),
        "bytes": path.stat().st_size,
        "reactions": len(labels),
        "molecules": len(labels.mols),
        "slots": int(labels.slot_elem.size),
        "role_classes": int(labels.role_lp.shape[1]),
        "count_classes": int(labels.left_lp.shape[1]),
    }
    atomic_write_json(manifest_path(path), full)
    return full


def manifest_path(path: str | Path) -> Path:
    return Path(f"{path}.json")


def load_teacher(path: str | Path) -> TeacherLabels:
    """Labels written by :func:`save_teacher`; a missing, foreign or altered file (sha256 against the manifest
    beside it, when there is one) is one :class:`InputError` line."""
    path = Path(path)
    if not path.is_file():
        raise InputError("teacher labels not found (experiments/distill_teacher.py writes them)", path=str(path))
    man = manifest_path(path)
    if man.is_file():
        want = json.loads(man.read_text()).get("sha256")
        if want and want != sha256_file(path):
            raise InputError(f"teacher labels differ from their manifest ({man.name}: sha256)", path=str(path))
    try:
        with np.load(path, allow_pickle=False) as z:
            if int(z["format"]) != TEACHER_FORMAT:
                raise InputError(
                    f"teacher labels of format {int(z['format'])}, expected {TEACHER_FORMAT}", path=str(path)
                )
            return TeacherLabels(
                rxn=z["rxn"], mols=z["mols"].tolist(), mol_ptr=z["mol_ptr"], role_lp=z["role_lp"],
                slot_elem=z["slot_elem"], slot_ptr=z["slot_ptr"], left_lp=z["left_lp"], repr=str(z["repr"]),
            )  # fmt: skip
    except (OSError, ValueError, KeyError) as err:
        raise InputError(f"not a teacher-label file ({type(err).__name__}: {err})", path=str(path)) from None


def soft_kl(teacher_lp: torch.Tensor, student_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Mean over rows of ``T**2 * KL(softmax(teacher / T) || softmax(student / T))``; 0 (with a gradient path)
    for no rows."""
    if student_logits.size(0) == 0:
        return student_logits.float().sum() * 0.0
    k = student_logits.size(-1)
    if teacher_lp.size(-1) < k:
        teacher_lp = F.pad(teacher_lp, (0, k - teacher_lp.size(-1)), value=_FLOOR)
    t = float(temperature)
    pt = F.log_softmax(teacher_lp.float()[:, :k] / t, -1)
    ps = F.log_softmax(student_logits.float() / t, -1)
    return (pt.exp() * (pt - ps)).sum(-1).mean() * (t * t)


class DistillTargets:
    """Teacher rows aligned with a student's training lines (the dataset index ``batch.idx`` selects them)."""

    def __init__(self, labels: TeacherLabels, examples: Sequence[BagExample], comp_dim: int) -> None:
        self.comp_dim = int(comp_dim)
        entry = {int(r): i for i, r in enumerate(labels.rxn.tolist())}
        n_roles = labels.role_lp.shape[1]
        mol_off = [0]
        role_rows: list[int] = []  # teacher row per student molecule, -1: none
        left_keys: list[np.ndarray] = []
        left_rows: list[np.ndarray] = []
        self.lines_roles = self.lines_left = 0
        for i, ex in enumerate(examples):
            e = entry.get(int(ex.rxn)) if ex.rxn is not None else None
            rows = [-1] * len(ex.mols)
            if e is not None:
                a, b = int(labels.mol_ptr[e]), int(labels.mol_ptr[e + 1])
                pos = {m: a + j for j, m in enumerate(labels.mols[a:b])}
                rows = [pos.get(m, -1) for m in ex.mols]
                self.lines_roles += any(r >= 0 for r in rows)
                if sorted(ex.mols) == sorted(labels.mols[a:b]):
                    s, t = int(labels.slot_ptr[e]), int(labels.slot_ptr[e + 1])
                    left_keys.append(i * self.comp_dim + labels.slot_elem[s:t])
                    left_rows.append(np.arange(s, t))
                    self.lines_left += 1
            role_rows.extend(rows)
            mol_off.append(mol_off[-1] + len(ex.mols))
        rr = torch.tensor(role_rows, dtype=torch.long)
        self.mol_off = torch.tensor(mol_off, dtype=torch.long)
        self.role_mask = rr >= 0
        role_lp = torch.from_numpy(np.ascontiguousarray(labels.role_lp))
        self.role_lp = role_lp[rr.clamp(min=0)] if rr.numel() else torch.zeros(0, n_roles)
        keys = np.concatenate(left_keys) if left_keys else np.zeros(0, np.int64)
        order = np.argsort(keys, kind="stable")
        self.left_keys = torch.from_numpy(keys[order].astype(np.int64))
        rows_all = np.concatenate(left_rows) if left_rows else np.zeros(0, np.int64)
        self.left_lp = torch.from_numpy(np.ascontiguousarray(labels.left_lp))[torch.from_numpy(rows_all[order])]
        self.n_lines = len(examples)

    def to(self, device: torch.device | str) -> DistillTargets:
        for name in ("mol_off", "role_mask", "role_lp", "left_keys", "left_lp"):
            setattr(self, name, getattr(self, name).to(device))
        return self

    def losses(self, out: dict[str, torch.Tensor], batch: Any, temperature: float) -> dict[str, torch.Tensor]:
        """``kd_role`` and ``kd_left`` for one training batch (``batch.idx``: each bag's line in the dataset)."""
        idx = batch.idx.view(-1)
        B = idx.numel()
        mol_graph = batch.mol_graph
        per_bag = torch.bincount(mol_graph, minlength=B)
        first = torch.cumsum(per_bag, 0) - per_bag
        pos = torch.arange(mol_graph.numel(), device=mol_graph.device) - first[mol_graph]
        rows = self.mol_off[idx][mol_graph] + pos
        mask = self.role_mask[rows]
        kd = {"kd_role": soft_kl(self.role_lp[rows][mask], out["role_logits"][mask], temperature)}
        if "left_logits" in out:
            keys = idx[out["left_bag"]] * self.comp_dim + out["left_elem"]
            if self.left_keys.numel():
                at = torch.searchsorted(self.left_keys, keys).clamp(max=self.left_keys.numel() - 1)
                hit = self.left_keys[at] == keys
            else:
                at = hit = torch.zeros_like(keys, dtype=torch.bool)
            kd["kd_left"] = soft_kl(self.left_lp[at[hit]], out["left_logits"][hit], temperature)
        return kd


def distill_summary(targets: DistillTargets | None) -> dict[str, Any]:
    if targets is None:
        return {}
    return {"distill_lines": targets.n_lines, "distill_lines_roles": targets.lines_roles,
            "distill_lines_leftover": targets.lines_left}  # fmt: skip
