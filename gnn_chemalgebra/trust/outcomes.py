"""What the training reactions write: their by-products and the strained rings their products form, so a written
line can be compared with them (part of ``in_domain``, :class:`~gnn_chemalgebra.trust.domain.DomainIndex`).

The in-domain index compares the molecules a line consumes with the training reactions; this compares what the
line writes. Three checks, each measured on the bundled SMILES model's lines (``experiments/calibration.md``):

* a by-product fewer than :data:`MIN_BYPRODUCT` training reactions wrote: the benchmark's rebalancing writes a
  small, closed set of by-products (621 distinct SMILES over the 113,395 training reactions of the extra build:
  HCl, HBr, an oxygen atom ``[O]``, H2 ...), water in one reaction only; a written line with a by-product
  outside that set is almost never right;
* (SMILES) a three-membered ring (epoxide, aziridine, cyclopropane ...) that the main product has and the
  consumed molecules did not, of a kind fewer than :data:`RARE_SHARE` of the training reactions formed;
* a reduction with nothing in the bag to reduce: the line writes the oxygen atom the benchmark writes for an
  oxygen a reduction removed, and no source molecule is a reducing agent (:mod:`~gnn_chemalgebra.chem.reductants`).
  The training data holds such lines (records that left the reductant out), so the benchmark often counts them
  right; for a bag written in full the line assumes a reagent that is not there.

A training reaction's by-products are its products (``nu`` > 0 in ``meta-train.jsonl``) other than its main
product, the one with the most atoms (then the smallest string), as the training labels choose it; a written
line's are its ``new_products`` other than its ``main_product``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..chem.composition import CHARGE_KEY
from ..chem.molecule import composition
from ..chem.reductants import OXYGEN_ATOM, reductant_in, writes_reduction
from ..chem.rings import new_small_rings
from ..errors import ChemAlgebraError

MIN_BYPRODUCT = 5  # a by-product fewer training reactions wrote is out of domain (validation: all such lines wrong)
RARE_SHARE = 0.002  # a ring kind formed by fewer than this share of the training reactions is out of domain


def _atoms(mol: str, repr: str) -> int:
    try:
        return sum(n for el, n in composition(mol, repr).items() if el != CHARGE_KEY)  # type: ignore[arg-type]
    except ChemAlgebraError:
        return 0


def split_products(products: Iterable[str], repr: str) -> tuple[str | None, list[str]]:
    """The main product (most atoms, then the smallest string, as the training labels choose it) and the other
    products, distinct and sorted (the by-products)."""
    distinct = sorted(set(products))
    if not distinct:
        return None, []
    main = min(distinct, key=lambda m: (-_atoms(m, repr), m))
    return main, [m for m in distinct if m != main]


def written_byproducts(rec: Mapping[str, Any]) -> list[str]:
    """The by-products a record's written line adds: its new molecules other than the main product."""
    main = rec.get("main_product")
    return sorted({m for m in rec.get("new_products") or [] if m != main})


def consumed(rec: Mapping[str, Any]) -> list[str]:
    """The molecules a record's written line consumes."""
    return [m["mol"] for m in rec.get("molecules") or [] if int(m.get("nu", 0)) < 0]


def reduction_without_reductant(rec: Mapping[str, Any], repr: str) -> bool:
    """Whether a record's written line is a reduction (it writes the oxygen atom) with no reducing agent among
    its source molecules."""
    source = [m["mol"] for m in rec.get("molecules") or []]
    return writes_reduction(rec.get("new_products") or [], repr) and not reductant_in(source, repr)  # type: ignore[arg-type]


@dataclass
class TrainingOutcomes:
    """Per training reaction: which by-products it writes, and (SMILES) which three-membered rings its main
    product forms; counts of reactions."""

    repr: str
    reactions: int = 0
    byproducts: dict[str, int] = field(default_factory=dict)
    rings: dict[str, int] = field(default_factory=dict)
    rare_share: float = RARE_SHARE
    min_byproduct: int = MIN_BYPRODUCT
    unreduced: int | None = None  # training reactions writing a reduction with no reductant in the bag

    @classmethod
    def from_reactions(
        cls, reactions: Iterable[Sequence[tuple[str, int]]], repr: str, bags: Iterable[Sequence[str]] | None = None
    ) -> TrainingOutcomes:
        """From each reaction's ``nu`` (molecule, net coefficient) pairs and, when given, its whole bag (every
        source molecule, spectators included: counts the reductions written without a reductant)."""
        n = 0
        byp: Counter = Counter()
        rings: Counter = Counter()
        unreduced = 0
        bag_iter = iter(bags) if bags is not None else None
        for nu in reactions:
            n += 1
            products = [m for m, v in nu if v > 0]
            main, others = split_products(products, repr)
            byp.update(others)
            if repr == "smiles" and main is not None:
                rings.update(set(new_small_rings(main, [m for m, v in nu if v < 0])))
            if bag_iter is not None:
                bag = next(bag_iter)
                unreduced += writes_reduction(products, repr) and not reductant_in(bag, repr)  # type: ignore[arg-type]
        return cls(repr, n, dict(sorted(byp.items())), dict(sorted(rings.items())),
                   unreduced=None if bags is None else unreduced)  # fmt: skip

    @classmethod
    def from_meta(cls, meta_files: Sequence[Path], repr: str) -> TrainingOutcomes:
        """From ``meta-train.jsonl`` files (their ``nu`` fields)."""

        records = []
        for f in meta_files:
            with open(f, encoding="utf-8") as fh:
                records += [json.loads(line) for line in fh]
        nus = ([(m, int(v)) for m, v in r["nu"]] for r in records)
        return cls.from_reactions(nus, repr, [list(r.get("k") or {}) for r in records])

    def notes(self, rec: Mapping[str, Any]) -> list[str]:
        """Why a record's written line is outside what the training reactions write (empty: it is not, or there
        were no training reactions to compare with)."""
        if not self.reactions:
            return []
        out = []
        few = [f"{m} ({k})" for m in written_byproducts(rec) if (k := self.byproducts.get(m, 0)) < self.min_byproduct]
        if few:
            out.append(f"by-product(s) fewer than {self.min_byproduct} training reactions wrote: " + ", ".join(few))
        main = rec.get("main_product")
        if self.repr == "smiles" and main:
            rare = []
            for kind in sorted(set(new_small_rings(str(main), consumed(rec)))):
                k = self.rings.get(kind, 0)
                if k < self.rare_share * self.reactions:
                    rare.append(f"{kind} ({k:,} of {self.reactions:,} training reactions)")
            if rare:
                out.append("forms a three-membered ring the consumed molecules did not have, rare in training: "
                           + ", ".join(rare))  # fmt: skip
        if reduction_without_reductant(rec, self.repr):
            seen = (
                ""
                if self.unreduced is None
                else f"; training records without one write it ({self.unreduced:,} of {self.reactions:,})"
            )
            out.append(
                f"a reduction (writes the oxygen atom {OXYGEN_ATOM[self.repr]}) with no reducing agent in the bag{seen}"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"repr": self.repr, "reactions": self.reactions, "byproducts": self.byproducts}
        d = {**d, "rings": self.rings, "rare_share": self.rare_share, "min_byproduct": self.min_byproduct}
        return d if self.unreduced is None else {**d, "unreduced": self.unreduced}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TrainingOutcomes:
        return cls(
            str(d["repr"]),
            int(d.get("reactions", 0)),
            {str(k): int(v) for k, v in (d.get("byproducts") or {}).items()},
            {str(k): int(v) for k, v in (d.get("rings") or {}).items()},
            float(d.get("rare_share", RARE_SHARE)),
            int(d.get("min_byproduct", MIN_BYPRODUCT)),
            None if d.get("unreduced") is None else int(d["unreduced"]),
        )


__all__ = [
    "MIN_BYPRODUCT",
    "RARE_SHARE",
    "TrainingOutcomes",
    "consumed",
    "reduction_without_reductant",
    "split_products",
    "written_byproducts",
]
