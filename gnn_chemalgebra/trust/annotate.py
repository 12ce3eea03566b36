"""A checkpoint's :class:`Trust` (calibration and in-domain index) and the trust fields it writes into records.

:meth:`Trust.annotate` writes into a record: ``confidence`` (calibrated), ``raw_confidence`` (the role head's
joint probability, what ``confidence`` was before), ``calibrated``, ``in_domain``,
``nearest_training_similarity``, ``domain_notes``, a ``probability`` per beam entry and ``top_k`` (the k best
distinct balanced lines, most probable first). A checkpoint without sidecars still gets a number:
:func:`annotate_uncalibrated` writes the raw confidence with ``"calibrated": false`` and ``"in_domain": null``.

``calibrated`` is true only for what the calibration was measured on: the decode settings it was fitted with
(``changed`` lists those that differ) and, on Type-2 lines, the extent rules it was fitted for: ``bayes``, and
``limiting`` when the sidecar has a model of that kind (fitted against the gold reaction at the limiting extent;
Type-1 lines are written alike by both rules). Otherwise the calibrator's number is still given, with
``"calibrated": false`` and ``calibration_note`` saying why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .binding import binding_fields, bound_sidecar
from .calibrators import LIMITING, Calibrator, calibration_kind, raw_confidence
from .candidates import beam_share, candidate_lines, cap_to_mass, same_products_key
from .domain import DomainIndex
from .extents import extent_alternatives
from .sidecar import load_fingerprints, write_sidecars


@dataclass
class Trust:
    """A checkpoint's calibration and in-domain index (either may be missing)."""

    repr: str
    calibrator: Calibrator | None = None
    domain: DomainIndex | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    changed: tuple[str, ...] = ()  # decode settings that differ from the fitted ones

    @classmethod
    def load_for(cls, checkpoint: str | Path) -> Trust | None:
        """The sidecars of ``checkpoint`` when they exist and were made for this very file (its sha256), else
        ``None`` (:func:`~.binding.bound_sidecar`)."""
        bound = bound_sidecar(checkpoint)
        return None if bound is None else cls.from_json(*bound)

    @classmethod
    def domain_for(cls, checkpoint: str | Path) -> DomainIndex | None:
        """The in-domain index beside ``checkpoint`` (made for this very file), whatever features its calibration
        reads: what a refit that keeps the index starts from."""
        bound = bound_sidecar(checkpoint, any_features=True)
        if bound is None or bound[0].get("domain") is None or bound[1] is None:
            return None
        return DomainIndex.from_json(bound[0]["domain"], load_fingerprints(bound[1]))

    @classmethod
    def from_json(cls, d: Mapping[str, Any], npz: Path | None = None) -> Trust:
        cal = None if d.get("calibrator") is None else Calibrator.from_json(d["calibrator"])
        dom = None
        if d.get("domain") is not None and npz is not None:
            dom = DomainIndex.from_json(d["domain"], load_fingerprints(npz))
        return cls(str(d["repr"]), cal, dom, dict(d.get("meta", {})))

    def save(self, checkpoint: str | Path) -> tuple[Path, Path | None]:
        """Write the sidecars beside ``checkpoint`` (atomically), bound to its sha256."""
        body = {
            "repr": self.repr,
            **binding_fields(checkpoint),
            "meta": self.meta,
            "calibrator": None if self.calibrator is None else self.calibrator.to_json(),
            "domain": None if self.domain is None else self.domain.to_json(),
        }
        return write_sidecars(checkpoint, body, None if self.domain is None else self.domain.fps)

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
            probs = [conf, *beam_share(cands, conf)]
        have = {same_products_key(line, self.repr) for _, line, _ in cands}
        extents = [(x, p) for x, p in extent_alternatives(r, conf) if same_products_key(x, self.repr) not in have]
        if extents:  # the other extents of the written roles come first; the beam's alternatives share what is left
            probs = [conf, *cap_to_mass(probs[1:], 1.0 - conf - sum(p for _, p in extents))]
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
        main = r.get("main_product")
        rows += [{"prediction": x, "probability": round(p, 4), "main_product": main} for x, p in extents]
        rows.sort(key=lambda x: -x["probability"])  # stable: the written line first on a tie
        r["top_k"] = rows[: max(k, 1)]


def annotate_uncalibrated(records: Sequence[dict[str, Any]], repr: str, top_k: int = 1) -> Sequence[dict[str, Any]]:
    """The trust fields for a checkpoint without sidecars: the raw confidence, ``calibrated: false``, no domain."""
    return Trust(repr).annotate_many(records, top_k)


def annotate_records(
    records: Sequence[dict[str, Any]], trust: Trust | None, repr: str, top_k: int = 1, domain: bool = True
) -> Sequence[dict[str, Any]]:
    """:meth:`Trust.annotate_many`, or :func:`annotate_uncalibrated` when ``trust`` is ``None``."""
    return (trust or Trust(repr)).annotate_many(records, top_k, domain)
