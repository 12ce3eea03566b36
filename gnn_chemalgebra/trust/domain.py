"""The in-domain index: how near a line's reactant set is to the training reactions' reactant sets.

Tanimoto of Morgan fingerprints for SMILES, of hashed composition features for formulas, nearest neighbour over a
saved index; elements and functional groups no training reactant had are flagged, and (with
:class:`~.outcomes.TrainingOutcomes`) what the line writes is compared with what the training reactions wrote.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ..chem.composition import CHARGE_KEY
from ..chem.molecule import composition
from ..errors import ChemAlgebraError
from .coefficients import CoefficientRule
from .outcomes import TrainingOutcomes

_WINDOW = 0.6  # DomainIndex.nearest: bit-count window searched first


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
    reactions wrote and forms no three-membered ring rare among them (:mod:`~gnn_chemalgebra.trust.outcomes`)."""

    repr: str
    nbits: int
    fps: np.ndarray
    elements: frozenset[str]
    groups: frozenset[int] = frozenset()
    pairs: frozenset[tuple[int, int]] = frozenset()
    threshold: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    outcomes: TrainingOutcomes | None = None  # what the training reactions write (by-products, new small rings)
    coefficients: CoefficientRule | None = None  # Type-2 lines beyond the training coefficients, extent unsettled

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
        coef_note = None if self.coefficients is None else self.coefficients.note(rec)
        if coef_note is not None:
            notes.append(coef_note)
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
            **({} if self.coefficients is None else {"coefficients": self.coefficients.to_json()}),
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
            None if d.get("coefficients") is None else CoefficientRule.from_json(d["coefficients"]),
        )
