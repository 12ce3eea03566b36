"""Trust in one prediction: a calibrated ``confidence``, an ``in_domain`` flag, and top-k alternatives.

A prediction record (the ``gnnca predict --json`` object) carries the network's own numbers: the role head's
probability of each role written, the score of the hypothesis written (roles plus leftover or edit-model
log-probabilities, plus the coefficient evidence on Type-2 lines), the extent posterior. None of them is the
chance that the whole line is right. This module turns them into one:

* :func:`record_features` reads a few numbers off a record (:data:`FEATURES`);
* :class:`Calibrator` holds one logistic model per line type (Type 1 / Type 2), fitted on VALIDATION lines
  (:meth:`Calibrator.fit`, scikit-learn) and stored as plain numbers, and a second model for the
  alternatives: the chance that the i-th distinct balanced line of the beam is the right one; Type-1 lines that
  carry a second opinion (a formula pair's mixed model wrote them too) have a model of their own
  (:data:`SECOND_OPINION`) that also reads whether the two lines differ;
* :class:`DomainIndex` compares the reactant set the model consumed with the training reactions' reactant sets
  (Tanimoto of Morgan fingerprints for SMILES, of hashed composition features for formulas, nearest neighbour
  over a saved index), and flags elements and functional groups no training reactant had;
* :class:`Trust` holds both, is saved beside the checkpoint as ``<checkpoint>.trust.json`` (+ ``.trust.npz``,
  the fingerprints; never pickle) and :meth:`Trust.annotate` writes into a record: ``confidence`` (calibrated),
  ``raw_confidence`` (the role head's joint probability, what ``confidence`` was before), ``calibrated``,
  ``in_domain``, ``nearest_training_similarity``, ``domain_notes``, a ``probability`` per beam entry and
  ``top_k`` (the k best distinct balanced lines, most probable first).

A checkpoint without sidecars still gets a number: :func:`annotate_uncalibrated` writes the raw confidence with
``"calibrated": false`` and ``"in_domain": null`` (nothing to compare with).

``calibrated`` is true only for what the calibration was measured on: the decode settings it was fitted with
(:func:`decode_settings`; ``gnnca predict --set decode.x=...`` changes them) and, on Type-2 lines, the extent
rules it was fitted for: ``bayes``, and ``limiting`` when the sidecar has a model of that kind (:data:`LIMITING`,
fitted against the gold reaction at the limiting extent; Type-1 lines are written alike by both rules).
Otherwise the calibrator's number is still given, with ``"calibrated": false`` and ``calibration_note`` saying why.
"""

from __future__ import annotations

import dataclasses
import json
import math
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..chem.bag import parse_bag
from ..chem.composition import CHARGE_KEY
from ..chem.molecule import composition
from ..chem.smiles import tautomer_key
from ..errors import ChemAlgebraError, InputError
from ..io import (
    atomic_write_bytes,
    atomic_write_json,
    checkpoint_paths,
    file_stamp,
    relist_checksums,
    sha256_cached,
    sha256_file,
    verify_checksum,
)
from .outcomes import TrainingOutcomes

FORMAT = 1
FEATURES: tuple[str, ...] = (
    "score",  # -log of minus the written hypothesis' score (roles + leftover/edit [+ evidence])
    "roles",  # the same of the role head's joint log-probability of the roles written
    "rest",  # the same of score - roles (leftover head, edit model, coefficient evidence)
    "extent",  # the same of the extent posterior's largest value (Type 2)
    "weakest_role",  # the same of the least probable role written
    "fallback",  # no balanced hypothesis: the source written back
    "extent_choices",  # more than one extent candidate
    "molecules",  # molecules in the source
    "extent_p",  # the extent posterior's largest value itself (1 without a posterior)
    "extent_gap",  # its margin over the second largest
    "extent_n",  # extents in the posterior
)
ALT_FEATURES: tuple[str, ...] = ("score", "gap", "rank", "top")
# decode settings that change no line a GNN writes: the sequence model's, and the Type-1 model's file name (its
# sha256 is bound apart, ``meta.type1_sha256``)
NOT_DECODING = frozenset({"beam", "max_len", "batch_size", "length_penalty", "type1_model"})
# the calibration kind of a Type-2 line written with the limiting extent (a chemist's amounts): another line than the
# Bayes rule writes, right when its roles and by-products are (the gold reaction at the limiting extent)
LIMITING = 3
# the calibration kind of a Type-1 line that carries a second opinion (``second_opinion``: the mixed model wrote the
# line too); its model reads one more feature, whether the two lines differ. A sidecar without a model of this kind
# reads such lines with the Type-1 model, which measured the same written lines without that feature
SECOND_OPINION = 4
SECOND_OPINION_FEATURE = "second_opinion_differs"
_WINDOW = 0.6  # DomainIndex.nearest: bit-count window searched first
NO_SCORE = -30.0  # the score of a line without one (a fallback's no-reaction entry)
_EPS = 1e-4


def _neglog(v: float) -> float:
    """``log(-v + 1e-4)`` for a log-probability ``v`` <= 0 (near 0 spread out, where the right lines are)."""
    return math.log(max(-v, 0.0) + _EPS)


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _score(entry: Mapping[str, Any] | None) -> float:
    v = None if entry is None else entry.get("logp")
    return NO_SCORE if v is None else min(float(v), 0.0)


def record_features(rec: Mapping[str, Any], kind: int | None = None) -> list[float]:
    """The :data:`FEATURES` of a record's written line; for the :data:`SECOND_OPINION` kind one more, 1.0 when the
    second opinion wrote another line."""
    mols = rec.get("molecules") or []
    probs = [float(m.get("confidence") or 0.0) for m in mols]
    roles = sum(math.log(max(p, _EPS)) for p in probs)
    fallback = bool(rec.get("fallback"))
    beam = rec.get("beam") or []
    score = NO_SCORE if fallback or not beam else _score(beam[0])
    post = rec.get("extent_posterior") or []
    top = sorted(post, reverse=True)[:2] + [0.0, 0.0]
    return [
        _neglog(score),
        _neglog(roles),
        _neglog(min(score - roles, 0.0)),
        _neglog(math.log(max(max(post), _EPS)) if post else 0.0),
        _neglog(math.log(max(min(probs), _EPS)) if probs else 0.0),
        float(fallback),
        float(len(rec.get("extent_candidates") or []) > 1),
        float(len(mols)),
        float(top[0]) if post else 1.0,
        float(top[0] - top[1]) if post else 1.0,
        float(len(post)),
    ] + ([float(second_opinion_agrees(rec) is False)] if kind == SECOND_OPINION else [])


def second_opinion_agrees(rec: Mapping[str, Any]) -> bool | None:
    """Whether a record's second opinion wrote the same line (``None``: no usable second opinion, which the
    Type-1 model reads)."""
    so = rec.get("second_opinion")
    agrees = so.get("agrees") if isinstance(so, Mapping) else None
    return agrees if isinstance(agrees, bool) else None


def calibration_kind(rec: Mapping[str, Any]) -> int:
    """Which calibration model reads a record: its line type, or :data:`LIMITING` for a Type-2 line written with
    the limiting extent."""
    lt = int(rec.get("line_type") or 1)
    return LIMITING if lt == 2 and rec.get("extent_rule") == "limiting" else lt


def model_kind(rec: Mapping[str, Any]) -> int:
    """The calibration model fitted for a record: :func:`calibration_kind`, or :data:`SECOND_OPINION` for a Type-1
    line with a second opinion."""
    kind = calibration_kind(rec)
    return SECOND_OPINION if kind == 1 and second_opinion_agrees(rec) is not None else kind


def _fallback_kind(kind: int) -> int:
    """The model a kind without its own model reads: the Type-2 model for limiting lines, the Type-1 model for
    lines with a second opinion."""
    return {LIMITING: 2, SECOND_OPINION: 1}.get(kind, kind)


def raw_confidence(rec: Mapping[str, Any]) -> float:
    """The role head's joint probability of the roles written (0.0 for a fallback)."""
    c = rec.get("raw_confidence", rec.get("confidence"))
    return 0.0 if rec.get("fallback") or c is None else float(c)


# --------------------------------------------------------------------------- candidate lines
def _line_key(text: str) -> frozenset[tuple[str, int]] | None:
    """A line as a multiset of molecules (duplicates merged), or ``None`` when it does not parse."""
    try:
        terms = parse_bag(text)
    except ChemAlgebraError:
        return None
    merged: Counter = Counter()
    for t in terms:
        merged[t.mol] += t.coef
    return frozenset(merged.items())


def _line_composition(key: frozenset[tuple[str, int]], repr: str) -> Counter | None:
    total: Counter = Counter()
    try:
        for mol, k in key:
            for el, n in composition(mol, repr).items():  # type: ignore[arg-type]
                total[el] += k * n
    except ChemAlgebraError:
        return None
    return Counter({el: n for el, n in total.items() if n})


def _same_products_key(text: str, repr: str) -> frozenset[tuple[str, int]] | None:
    """:func:`_line_key` with each SMILES replaced by its tautomer key: tautomers and resonance forms of one
    product are one line (formulas are the same for them already)."""
    key = _line_key(text)
    if key is None or repr != "smiles":
        return key
    merged: Counter = Counter()
    for mol, k in key:
        merged[tautomer_key(mol)] += k
    return frozenset(merged.items())


def candidate_lines(rec: Mapping[str, Any], repr: str) -> list[tuple[int | None, str, float]]:
    """The distinct balanced lines of a record, in beam order: ``(beam index or None, line, score)``; the written
    line first (``None`` when it is not a beam entry: a fallback's copied source). Entries without a score
    (the no-reaction entry), unbalanced ones and repeats of an earlier line (tautomers and resonance forms of its
    products included) are left out."""
    written = str(rec.get("prediction", ""))
    beam = rec.get("beam") or []
    first = None if rec.get("fallback") or not beam or beam[0].get("prediction") != written else 0
    out: list[tuple[int | None, str, float]] = [(first, written, NO_SCORE if first is None else _score(beam[0]))]
    rest = [(i, e) for i, e in enumerate(beam) if i != first and e.get("logp") is not None]
    if not rest:
        return out
    src = _line_key(str(rec.get("source", "")))
    src_comp = _line_composition(src, repr) if src is not None else None
    seen = {k for k in [_same_products_key(written, repr)] if k is not None}
    for i, entry in rest:
        key = _line_key(str(entry.get("prediction", "")))
        if key is None:
            continue
        same = _same_products_key(str(entry.get("prediction", "")), repr)
        if same in seen:
            continue
        if src_comp is not None and _line_composition(key, repr) != src_comp:
            continue
        seen.add(same)
        out.append((i, str(entry["prediction"]), _score(entry)))
    return out


def alternative_features(top_score: float, score: float, rank: int, top_conf: float) -> list[float]:
    """The :data:`ALT_FEATURES` of the ``rank``-th distinct balanced line (rank 1 = the first after the written)."""
    return [_neglog(score), math.log(max(top_score - score, 0.0) + 1e-3), math.log(rank + 1.0), _logit(top_conf)]


# --------------------------------------------------------------------------- the logistic models
@dataclass
class LinearModel:
    """A standardised logistic regression as plain numbers: ``sigmoid(((x - mean) / scale) . coef + intercept)``,
    each feature first clipped to the range it had in the fitting lines (``lo``, ``hi``: no extrapolation)."""

    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    lo: list[float] | None = None
    hi: list[float] | None = None

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self.lo is not None and self.hi is not None:
            X = np.clip(X, np.asarray(self.lo), np.asarray(self.hi))
        z = ((X - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50.0, 50.0)))

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, C: float = 1.0) -> LinearModel:
        """Fit on rows ``X`` and 0/1 outcomes ``y`` (scikit-learn's L2 logistic regression, ``C`` its inverse
        strength). Needs both outcomes among the rows."""
        from sklearn.linear_model import LogisticRegression

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=int)
        if len(set(y.tolist())) < 2:
            raise InputError(
                f"cannot fit a calibration on {len(y)} lines that are all {'right' if y.any() else 'wrong'}"
            )
        mean = X.mean(0)
        scale = X.std(0)
        scale[scale == 0] = 1.0
        lr = LogisticRegression(C=C, max_iter=5000).fit((X - mean) / scale, y)
        return cls(
            mean.tolist(),
            scale.tolist(),
            lr.coef_[0].tolist(),
            float(lr.intercept_[0]),
            X.min(0).tolist(),
            X.max(0).tolist(),
        )

    def to_json(self) -> dict[str, Any]:
        d = {"mean": self.mean, "scale": self.scale, "coef": self.coef, "intercept": self.intercept}
        return {**d, "lo": self.lo, "hi": self.hi}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LinearModel:
        lo, hi = d.get("lo"), d.get("hi")
        return cls(
            list(d["mean"]), list(d["scale"]), list(d["coef"]), float(d["intercept"]),
            None if lo is None else list(lo), None if hi is None else list(hi),
        )  # fmt: skip


@dataclass
class Calibrator:
    """One :class:`LinearModel` per line type for the written line, one for the alternatives, and what they were
    fitted on (files, lines, exact-match rate)."""

    top: dict[int, LinearModel]
    alt: LinearModel | None = None
    fitted_on: dict[str, Any] = field(default_factory=dict)

    def confidence(self, records: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
        """(calibrated probability, whether a model of the line's type was there) per record; a line type
        without its own model uses the other one's (and says ``calibrated: false``). A limiting Type-2 line
        without a model of its kind (a sidecar fitted before there was one) reads the Type-2 model; the extent
        rule check (:meth:`Trust.annotate_many`) then says it is not calibrated."""
        out = np.zeros(len(records))
        own = np.zeros(len(records), dtype=bool)
        by_kind: dict[int, list[int]] = {}
        for i, r in enumerate(records):
            by_kind.setdefault(model_kind(r), []).append(i)
        for kind, idx in by_kind.items():
            lt = kind if kind in self.top else _fallback_kind(kind)
            model = self.top.get(lt) or next(iter(self.top.values()))
            out[idx] = model.predict(np.array([record_features(records[i], lt) for i in idx]))
            own[idx] = lt in self.top
        return out, own

    def alternatives(self, cands: Sequence[tuple[int | None, str, float]], top_conf: float) -> list[float]:
        """Probabilities of the candidate lines after the written one; their sum never exceeds 1 - top_conf."""
        if len(cands) < 2:
            return []
        if self.alt is None:
            return _beam_share(cands, top_conf)
        X = np.array([alternative_features(cands[0][2], s, j, top_conf) for j, (_, _, s) in enumerate(cands[1:], 1)])
        return _in_rank_order(self.alt.predict(X).tolist(), top_conf)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "top": {str(k): m.to_json() for k, m in sorted(self.top.items())},
            "alt_features": list(ALT_FEATURES),
            **({"second_opinion_feature": SECOND_OPINION_FEATURE} if SECOND_OPINION in self.top else {}),
            "alt": None if self.alt is None else self.alt.to_json(),
            "fitted_on": self.fitted_on,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Calibrator:
        if list(d.get("features", [])) != list(FEATURES) or list(d.get("alt_features", [])) != list(ALT_FEATURES):
            raise InputError("calibration sidecar was written for other features; fit it again")
        top = {int(k): LinearModel.from_json(v) for k, v in d["top"].items()}
        alt = None if d.get("alt") is None else LinearModel.from_json(d["alt"])
        return cls(top, alt, dict(d.get("fitted_on", {})))

    @classmethod
    def fit(
        cls,
        records: Sequence[Mapping[str, Any]],
        labels: Sequence[bool],
        beam_labels: Sequence[Sequence[bool]] | None = None,
        repr: str = "formula",
        C: float = 1.0,
        fitted_on: Mapping[str, Any] | None = None,
    ) -> Calibrator:
        """Fit on validation records and their exact-match outcomes (never on test lines). ``beam_labels``: per
        record, the outcome of each beam entry (for the alternatives' model; records need a beam > 1). A line type
        whose lines are all right (or all wrong) gets no model of its own: it reads the other type's, marked
        ``calibrated: false``. Type-1 records with a second opinion fit the Type-1 model (without it) and the
        :data:`SECOND_OPINION` model (with it)."""
        y = np.asarray(labels, dtype=int)
        if len(records) != len(y):
            raise InputError(f"{len(records)} records but {len(y)} labels")
        top: dict[int, LinearModel] = {}
        info: dict[str, Any] = dict(fitted_on or {})
        per_type: dict[str, Any] = {}
        kinds = {calibration_kind(r) for r in records} | {model_kind(r) for r in records}
        for lt in sorted(kinds):
            idx = [i for i, r in enumerate(records) if lt in (calibration_kind(r), model_kind(r))]
            per_type[str(lt)] = {"lines": len(idx), "EM": float(y[idx].mean())}
            if len(set(y[idx].tolist())) < 2:  # nothing to tell apart: this type reads the other type's model
                per_type[str(lt)]["fitted"] = False
                continue
            X = np.array([record_features(records[i], lt) for i in idx])
            top[lt] = LinearModel.fit(X, y[idx], C)
        if not top:  # no line type has both outcomes: nothing to calibrate
            kinds = "all right" if y.all() else "all wrong" if not y.any() else "all right or all wrong per line type"
            raise InputError(f"cannot fit a calibration on {len(y)} lines that are {kinds}")
        info["line_types"] = per_type
        cal = cls(top, None, info)
        if beam_labels is not None:
            conf, _ = cal.confidence(records)
            rows, outs = [], []
            for rec, c, bl in zip(records, conf, beam_labels, strict=True):
                cands = candidate_lines(rec, repr)
                for j, (bi, _, s) in enumerate(cands[1:], 1):
                    rows.append(alternative_features(cands[0][2], s, j, float(c)))
                    outs.append(bool(bl[bi]) if bi is not None and bi < len(bl) else False)
            if len(set(outs)) == 2:
                cal.alt = LinearModel.fit(np.array(rows), np.array(outs, dtype=int), C)
                info["alternatives"] = {"lines": len(rows), "right": int(sum(outs))}
        return cal


# --------------------------------------------------------------------------- the in-domain index
def _pack(bits: np.ndarray) -> np.ndarray:
    return np.packbits(bits.astype(bool)).view(np.uint64)


@lru_cache(maxsize=65536)
def _mol_bits(mol: str, repr: str, nbits: int) -> bytes:
    """One molecule's fingerprint, packed: Morgan radius 2 for SMILES; for formulas hashed features of its
    composition (the formula itself, each element, element counts in coarse and exact bins, element pairs)."""
    bits = np.zeros(nbits, dtype=bool)
    if repr == "smiles":
        from ..chem.smiles import shared_mol

        try:
            m = shared_mol(mol)
        except ChemAlgebraError:
            return _pack(bits).tobytes()
        bits[list(_morgan(nbits).GetFingerprint(m).GetOnBits())] = True
    else:
        try:
            comp = composition(mol, "formula")
        except ChemAlgebraError:
            return _pack(bits).tobytes()
        els = sorted(e for e in comp if e != CHARGE_KEY)
        feats = [f"F:{mol}"]
        for e in els:
            n = int(comp[e])
            feats += [f"E:{e}", f"B:{e}{min(n, 3) // 2}", f"N:{e}{n}"]
        feats += [f"P:{a}{b}" for i, a in enumerate(els) for b in els[i + 1 :]]
        if comp.get(CHARGE_KEY):
            feats.append(f"Q:{int(comp[CHARGE_KEY])}")
        for f in feats:
            bits[zlib.crc32(f.encode()) % nbits] = True
    return _pack(bits).tobytes()


@lru_cache(maxsize=4)
def _morgan(nbits: int) -> Any:
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=nbits)


def set_fingerprint(mols: Iterable[str], repr: str, nbits: int) -> np.ndarray:
    """The OR of the molecules' fingerprints, as ``nbits / 64`` unsigned 64-bit words."""
    fp = np.zeros(nbits // 64, dtype=np.uint64)
    for m in mols:
        fp |= np.frombuffer(_mol_bits(m, repr, nbits), dtype=np.uint64)
    return fp


@lru_cache(maxsize=65536)
def mol_elements(mol: str, repr: str) -> frozenset[str]:
    """The elements of one molecule (none when it does not parse)."""
    try:
        return frozenset(e for e in composition(mol, repr) if e != CHARGE_KEY)  # type: ignore[arg-type]
    except ChemAlgebraError:
        return frozenset()


def reactant_set(rec: Mapping[str, Any]) -> list[str]:
    """The molecules a record's written line consumes (all source molecules when it consumes none)."""
    mols = rec.get("molecules") or []
    used = [m["mol"] for m in mols if int(m.get("nu", 0)) < 0]
    return used or [m["mol"] for m in mols]


def _groups_of(mols: Iterable[str]) -> set[int]:
    from ..chem.groups import functional_groups

    out: set[int] = set()
    for m in mols:
        out |= functional_groups(m)
    return out


@dataclass
class DomainIndex:
    """Training reactant sets as fingerprints (sorted by bit count), the elements of the training reactions, and
    for SMILES the functional groups and group pairs found together among training reactants.

    ``in_domain`` of a line: every source element was in a training reaction, every functional group of the
    consumed molecules (SMILES) was among a training reaction's reactants, each pair of them was together in
    one, and the nearest training reactant set has a Tanimoto similarity of at least ``threshold`` (chosen on
    validation lines); and, with ``outcomes``, the written line adds no by-product that fewer than five training
    reactions wrote and forms no three-membered ring rare among them (:mod:`~gnn_chemalgebra.inference.outcomes`)."""

    repr: str
    nbits: int
    fps: np.ndarray
    elements: frozenset[str]
    groups: frozenset[int] = frozenset()
    pairs: frozenset[tuple[int, int]] = frozenset()
    threshold: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    outcomes: TrainingOutcomes | None = None  # what the training reactions write (by-products, new small rings)

    def __post_init__(self) -> None:
        fps = np.ascontiguousarray(self.fps, dtype=np.uint64).reshape(-1, self.nbits // 64)
        counts = np.bitwise_count(fps).sum(1).astype(np.int32) if len(fps) else np.zeros(0, np.int32)
        order = np.argsort(counts, kind="stable")
        self.fps, self.counts = fps[order], counts[order]
        self._cols = np.ascontiguousarray(self.fps.T)  # one row per word: the scan adds word by word
        self._cache: dict[bytes, float] = {}

    # ----------------------------------------------------------------- building
    @classmethod
    def build(
        cls,
        reactant_sets: Iterable[Sequence[str]],
        all_molecules: Iterable[str],
        repr: str,
        nbits: int | None = None,
        max_sets: int = 32768,
        seed: int = 0,
        info: Mapping[str, Any] | None = None,
    ) -> DomainIndex:
        """An index of training reactant sets (distinct fingerprints; a seeded random ``max_sets`` of them when
        there are more) and of the elements of ``all_molecules`` (every molecule of the training reactions)."""
        nbits = nbits or (1024 if repr == "smiles" else 256)
        fps: dict[bytes, None] = {}
        groups: set[int] = set()
        pairs: set[tuple[int, int]] = set()
        n_sets = 0
        for mols in reactant_sets:
            n_sets += 1
            fps.setdefault(set_fingerprint(mols, repr, nbits).tobytes(), None)
            if repr == "smiles":
                g = sorted(_groups_of(mols))
                groups.update(g)
                pairs.update((a, b) for i, a in enumerate(g) for b in g[i + 1 :])
        elements: set[str] = set()
        for m in set(all_molecules):
            elements |= mol_elements(m, repr)
        arr = np.frombuffer(b"".join(fps), dtype=np.uint64).reshape(-1, nbits // 64)
        distinct = len(arr)
        if len(arr) > max_sets:
            keep = np.sort(np.random.default_rng(seed).choice(len(arr), size=max_sets, replace=False))
            arr = arr[keep]
        meta = dict(info or {})
        meta.update({"reactant_sets": n_sets, "distinct_fingerprints": distinct, "kept": len(arr), "seed": seed})
        return cls(repr, nbits, arr, frozenset(elements), frozenset(groups), frozenset(pairs), 0.0, meta)

    # ----------------------------------------------------------------- querying
    def nearest(self, fp: np.ndarray) -> float:
        """Tanimoto similarity of ``fp`` to the nearest indexed reactant set. Exact: the sets whose bit counts
        allow a similarity of at least 0.6 are compared first, the others only when none of those reaches it."""
        key = fp.tobytes()
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        a = int(np.bitwise_count(fp).sum())
        if a == 0 or len(self.fps) == 0:
            return 0.0
        lo = int(np.searchsorted(self.counts, math.ceil(a * _WINDOW), "left"))
        hi = int(np.searchsorted(self.counts, math.floor(a / _WINDOW), "right"))
        best = self._best(fp, a, slice(lo, hi))
        if best < _WINDOW:
            best = max(best, self._best(fp, a, slice(0, lo)), self._best(fp, a, slice(hi, len(self.counts))))
        if len(self._cache) < 200_000:
            self._cache[key] = best
        return best

    def _best(self, fp: np.ndarray, a: int, rows: slice) -> float:
        cols = self._cols[:, rows]
        if cols.shape[1] == 0:
            return 0.0
        inter = np.bitwise_count(cols[0] & fp[0]).astype(np.int32)
        for w in range(1, len(fp)):
            inter += np.bitwise_count(cols[w] & fp[w])
        return float((inter / (self.counts[rows] + a - inter)).max())

    def check(self, rec: Mapping[str, Any]) -> tuple[float, bool, list[str]]:
        """(nearest similarity, in domain, reasons it is not) for one record."""
        notes: list[str] = []
        mols = [m["mol"] for m in rec.get("molecules") or []]
        els: set[str] = set()
        for m in mols:
            els |= mol_elements(m, self.repr)
        unseen = sorted(els - self.elements)
        if unseen:
            notes.append("element(s) in no training reaction: " + ", ".join(unseen))
        used = reactant_set(rec)
        if self.repr == "smiles" and self.groups:
            from ..chem.groups import group_names

            g = sorted(_groups_of(used))
            new = [x for x in g if x not in self.groups]
            if new:
                notes.append("functional group(s) no training reactant had: " + ", ".join(group_names(new)))
            new_pairs = [(a, b) for i, a in enumerate(g) for b in g[i + 1 :] if (a, b) not in self.pairs]
            new_pairs = [(a, b) for a, b in new_pairs if a in self.groups and b in self.groups]
            if new_pairs:
                names = [" + ".join(group_names([a, b])) for a, b in new_pairs[:3]]
                notes.append("functional groups never together in training reactants: " + "; ".join(names))
        sim = self.nearest(set_fingerprint(used, self.repr, self.nbits))
        if sim < self.threshold:
            notes.append(f"nearest training reactant set has Tanimoto {sim:.3f} < {self.threshold:.3f}")
        if self.outcomes is not None:
            notes += self.outcomes.notes(rec)
        return sim, not notes, notes

    # ----------------------------------------------------------------- storage
    def to_json(self) -> dict[str, Any]:
        return {
            "repr": self.repr,
            "nbits": self.nbits,
            "elements": sorted(self.elements),
            "groups": sorted(self.groups),
            "pairs": sorted([list(p) for p in self.pairs]),
            "threshold": self.threshold,
            "info": self.info,
            **({} if self.outcomes is None else {"outcomes": self.outcomes.to_json()}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any], fps: np.ndarray) -> DomainIndex:
        return cls(
            d["repr"],
            int(d["nbits"]),
            fps,
            frozenset(d["elements"]),
            frozenset(int(g) for g in d.get("groups", [])),
            frozenset((int(a), int(b)) for a, b in d.get("pairs", [])),
            float(d.get("threshold", 0.0)),
            dict(d.get("info", {})),
            None if d.get("outcomes") is None else TrainingOutcomes.from_json(d["outcomes"]),
        )


# --------------------------------------------------------------------------- the whole: load, annotate, save
def sidecar_paths(checkpoint: str | Path) -> tuple[Path, Path]:
    """``<checkpoint>.trust.json`` and ``<checkpoint>.trust.npz``."""
    p = Path(checkpoint)
    return p.with_name(p.name + ".trust.json"), p.with_name(p.name + ".trust.npz")


@dataclass
class Trust:
    """A checkpoint's calibration and in-domain index (either may be missing)."""

    repr: str
    calibrator: Calibrator | None = None
    domain: DomainIndex | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    changed: tuple[str, ...] = ()  # decode settings that differ from the fitted ones (:func:`trust_for`)

    @classmethod
    def load_for(cls, checkpoint: str | Path) -> Trust | None:
        """The sidecars of ``checkpoint`` when they exist and were made for this very file (its sha256), else
        ``None``. An ensemble (``a.pt,b.pt``) has none: each calibration belongs to one model."""
        parts = checkpoint_paths(str(checkpoint))
        if len(parts) != 1:
            return None
        js, npz = sidecar_paths(parts[0])
        if not js.is_file() or not Path(parts[0]).is_file():
            return None
        for shipped in (js, npz):  # a bundled sidecar is listed in checksums.json: refused when its bytes changed
            if shipped.is_file():
                verify_checksum(shipped)
        try:
            d = json.loads(js.read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable calibration sidecar: {exc}", path=str(js)) from None
        if d.get("format") != FORMAT:
            raise InputError(f"calibration sidecar format {d.get('format')!r}, expected {FORMAT}", path=str(js))
        cal = d.get("calibrator") or {}
        if cal and (cal.get("features") != list(FEATURES) or cal.get("alt_features") != list(ALT_FEATURES)):
            return None  # written for other features: uncalibrated until fitted again
        want = d.get("checkpoint_sha256")
        if want and want != sha256_cached(parts[0]):
            return None  # written for another version of this file
        return cls.from_json(d, npz if npz.is_file() else None)

    @classmethod
    def from_json(cls, d: Mapping[str, Any], npz: Path | None = None) -> Trust:
        cal = None if d.get("calibrator") is None else Calibrator.from_json(d["calibrator"])
        dom = None
        if d.get("domain") is not None and npz is not None:
            with np.load(npz, allow_pickle=False) as z:
                dom = DomainIndex.from_json(d["domain"], z["fingerprints"])
        return cls(str(d["repr"]), cal, dom, dict(d.get("meta", {})))

    def save(self, checkpoint: str | Path) -> tuple[Path, Path | None]:
        """Write the sidecars beside ``checkpoint`` (atomically), bound to its sha256."""
        import io

        js, npz = sidecar_paths(checkpoint)
        d = {
            "format": FORMAT,
            "repr": self.repr,
            "checkpoint": Path(checkpoint).name,
            "checkpoint_sha256": sha256_file(checkpoint),
            "meta": self.meta,
            "calibrator": None if self.calibrator is None else self.calibrator.to_json(),
            "domain": None if self.domain is None else self.domain.to_json(),
        }
        written: Path | None = None
        if self.domain is not None:
            buf = io.BytesIO()
            np.savez_compressed(buf, fingerprints=self.domain.fps)
            atomic_write_bytes(npz, buf.getvalue())
            written = npz
        atomic_write_json(js, d)
        relist_checksums(js, *([] if written is None else [written]))  # a shipped folder keeps a true list
        return js, written

    # ----------------------------------------------------------------- annotating records
    def annotate(self, record: dict[str, Any], example: Any = None, top_k: int = 1) -> dict[str, Any]:
        """Write the trust fields into one record (see the module doc) and return it. ``example`` is accepted
        for callers that hold it; everything needed is in the record."""
        return self.annotate_many([record], top_k)[0]

    def annotate_many(
        self, records: Sequence[dict[str, Any]], top_k: int = 1, domain: bool = True
    ) -> Sequence[dict[str, Any]]:
        """:meth:`annotate` for many records (one model evaluation per line type). ``domain=False`` leaves the
        in-domain fields out (the index search is most of the cost; plain text output does not show them)."""
        for r in records:
            r["raw_confidence"] = raw_confidence(r)
        if self.calibrator is not None:
            conf, own = self.calibrator.confidence(records)
        else:
            conf = np.array([r["raw_confidence"] for r in records])
            own = np.zeros(len(records), dtype=bool)
        fitted_rule = self.meta.get("extent")
        for r, c, o in zip(records, conf, own, strict=True):
            if r.get("extent") == 0 or r.get("fallback"):  # nothing happens: never above its own evidence
                c = min(float(c), r["raw_confidence"])  # (a fallback's, no balanced hypothesis, is 0)
            r["confidence"] = round(float(c), 4)
            r["calibrated"] = bool(o)
            note = self._not_measured(r, fitted_rule) if o else None
            if note is not None:
                r["calibrated"], r["calibration_note"] = False, note
            if not domain:
                pass
            elif self.domain is not None:
                sim, ok, notes = self.domain.check(r)
                r["in_domain"], r["nearest_training_similarity"], r["domain_notes"] = ok, round(sim, 4), notes
            else:
                r["in_domain"], r["nearest_training_similarity"], r["domain_notes"] = None, None, []
            self._alternatives(r, float(c), top_k)
        return records

    def _not_measured(self, r: Mapping[str, Any], fitted_rule: str | None) -> str | None:
        """Why a line's confidence is outside what the calibration was measured on (``None``: it is not)."""
        if self.changed:
            return "decode settings differ from the calibration's: " + ", ".join(self.changed)
        fitted_too = self.calibrator is not None and LIMITING in self.calibrator.top  # its own model, own yardstick
        if fitted_rule and fitted_rule != "limiting" and calibration_kind(r) == LIMITING and not fitted_too:
            return f"calibrated for the extent rule {fitted_rule!r}; this Type-2 line was written with 'limiting'"
        return None

    def _alternatives(self, r: dict[str, Any], conf: float, k: int) -> None:
        cands = candidate_lines(r, self.repr)
        if self.calibrator is not None:
            probs = [conf, *self.calibrator.alternatives(cands, conf)]
        else:
            probs = [conf, *_beam_share(cands, conf)]
        by_index = {bi: p for (bi, _, _), p in zip(cands, probs, strict=True) if bi is not None}
        for i, e in enumerate(r.get("beam") or []):
            p = by_index.get(i)
            e["probability"] = None if p is None else round(p, 4)
        mains = {i: e.get("main_product") for i, e in enumerate(r.get("beam") or [])}
        rows = [
            {
                "prediction": line,
                "probability": round(p, 4),
                "main_product": r.get("main_product") if j == 0 else mains.get(bi),
            }
            for j, ((bi, line, _), p) in enumerate(zip(cands, probs, strict=True))
        ]
        rows.sort(key=lambda x: -x["probability"])  # stable: the written line first on a tie
        r["top_k"] = rows[: max(k, 1)]


def _beam_share(cands: Sequence[tuple[int | None, str, float]], conf: float) -> list[float]:
    """Without an alternatives model: each alternative in beam order takes the share ``w / (1 + w)`` of the mass
    still left, ``w = exp(score - top score)`` (so a lone alternative never takes all of ``1 - conf``)."""
    if len(cands) < 2:
        return []
    w = np.exp(np.array([s for _, _, s in cands[1:]]) - cands[0][2])
    left, out = max(1.0 - conf, 0.0), []
    for share in (w / (1.0 + w)).tolist():
        out.append(left * share)
        left -= out[-1]
    return _in_rank_order(out, conf)


def _in_rank_order(p: Sequence[float], top_conf: float) -> list[float]:
    """Alternatives' probabilities (in beam order) made consistent: each at most the written line's (the written
    line stays ``top_k[0]``) and at most the mass the ones before it left of ``1 - top_conf``. Each depends only on
    the alternatives ranked before it, so a wider ``--top-k`` adds lines without changing the ones shown."""
    left, out = max(1.0 - top_conf, 0.0), []
    for q in p:
        out.append(max(min(float(q), top_conf, left), 0.0))
        left -= out[-1]
    return out


def annotate_uncalibrated(records: Sequence[dict[str, Any]], repr: str, top_k: int = 1) -> Sequence[dict[str, Any]]:
    """The trust fields for a checkpoint without sidecars: the raw confidence, ``calibrated: false``, no domain."""
    return Trust(repr).annotate_many(records, top_k)


def annotate_records(
    records: Sequence[dict[str, Any]], trust: Trust | None, repr: str, top_k: int = 1, domain: bool = True
) -> Sequence[dict[str, Any]]:
    """:meth:`Trust.annotate_many`, or :func:`annotate_uncalibrated` when ``trust`` is ``None``."""
    return (trust or Trust(repr)).annotate_many(records, top_k, domain)


_FOR_PREDICTOR: dict[tuple, Trust | None] = {}


def edit_model_path(predictor: Any) -> Path | None:
    """The bond-edit checkpoint a SMILES predictor decodes with: the one it was given, else the default
    (``$GNNCA_EDIT_CHECKPOINT`` or the bundled one); ``None`` for a formula predictor."""
    if getattr(predictor, "repr", None) != "smiles":
        return None
    src = getattr(predictor, "source", None)
    if src is not None and src.edit_checkpoint is not None:
        return Path(checkpoint_paths(str(src.edit_checkpoint))[0])
    from .edit_decode import default_checkpoint

    return default_checkpoint()


def edit_model_sha256(predictor: Any) -> str | None:
    """sha256 of :func:`edit_model_path` (``None`` when there is none): a SMILES calibration is only valid with
    the edit model whose product graphs it was fitted on."""
    path = edit_model_path(predictor)
    return None if path is None or not path.is_file() else sha256_cached(path)


def type1_model_path(predictor: Any) -> Path | None:
    """The checkpoint of a predictor's Type-1 model (``decode.type1_model``); ``None`` when it reads every line."""
    src = getattr(getattr(predictor, "type1", None), "source", None)
    return None if src is None else Path(checkpoint_paths(str(src.checkpoint))[0])


def type1_model_sha256(predictor: Any) -> str | None:
    """sha256 of :func:`type1_model_path`: the Type-1 calibration belongs to the model that wrote those lines."""
    path = type1_model_path(predictor)
    return None if path is None else sha256_cached(path)


def decode_settings(settings: Any) -> dict[str, Any]:
    """The decode settings that shape the lines a GNN writes (a ``DecodeConfig`` less :data:`NOT_DECODING`)."""
    return {k: v for k, v in dataclasses.asdict(settings).items() if k not in NOT_DECODING}


def fitted_settings(predictor: Any) -> dict[str, Any]:
    """What a calibration records of the decode settings it is fitted with (``meta.decode``, and
    ``meta.type1_decode`` for a Type-1 model)."""
    out = {"decode": decode_settings(predictor.settings)}
    t1 = getattr(predictor, "type1", None)
    if t1 is not None:
        out["type1_decode"] = decode_settings(t1.settings)
    return out


def changed_settings(predictor: Any, meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The decode settings of ``predictor`` (and of its Type-1 model) that differ from those the calibration was
    fitted with: ``meta.decode`` / ``meta.type1_decode``, or, for a calibration that did not record them, the
    settings saved in the checkpoints (what ``gnnca bench calibration`` fits with unless told otherwise)."""
    out: list[str] = []
    pairs = [("decode", predictor)]
    if getattr(predictor, "type1", None) is not None:
        pairs.append(("type1_decode", predictor.type1))
    for key, pred in pairs:
        want = meta.get(key)
        if want is None:
            saved = getattr(pred, "saved_settings", None)
            if saved is None:
                continue
            want = decode_settings(saved)
        now = decode_settings(pred.settings)
        prefix = "decode." if key == "decode" else "decode (Type-1 model)."
        out += [f"{prefix}{k}" for k in sorted(now) if k in want and now[k] != want[k]]
    return tuple(out)


def trust_for(predictor: Any) -> Trust | None:
    """The sidecars of the checkpoint a predictor was loaded from (``None``: built in memory, an ensemble, no
    sidecars, or a SMILES model decoding with another edit model than the one the calibration was fitted with)."""
    src = getattr(predictor, "source", None)
    if src is None:
        return None
    parts = checkpoint_paths(str(src.checkpoint))
    edit = edit_model_path(predictor)
    extra = [p for p in (edit, type1_model_path(predictor)) if p is not None]
    stamps = [file_stamp(p) for p in [*parts, *sidecar_paths(parts[0]), *extra]]
    key = tuple(stamps)
    if key not in _FOR_PREDICTOR:
        trust = Trust.load_for(src.checkpoint)
        want = None if trust is None else trust.meta.get("edit_sha256")
        if want is not None and want != edit_model_sha256(predictor):
            trust = None
        if trust is not None and trust.meta.get("type1_sha256") != type1_model_sha256(predictor):
            trust = None  # fitted with another Type-1 model, or with none (or this predictor routes none)
        _FOR_PREDICTOR[key] = trust
    trust = _FOR_PREDICTOR[key]
    if trust is None:
        return None
    changed = changed_settings(predictor, trust.meta)  # settings can change after loading: checked every time
    return dataclasses.replace(trust, changed=changed) if changed else trust
