"""What a predicted line is, as types: :class:`Prediction`, made by the report (:mod:`.report`) or a sequence
model, completed by the stream (the line's place), the trust stage (:mod:`.trust_stage`: calibrated confidence,
in-domain fields, alternatives) and the conformal sets (:mod:`.predict_sets`), read by the writers and the API.

JSON is written only at the edge, by :meth:`Prediction.to_json`: the ``gnnca predict --json`` object, key for key
and in the order every earlier release wrote it. The trust package (torch-free, a floor below) is fitted on
stored records and reads that same object; :meth:`TrustFields.of_record` and :meth:`SetFields.of_record` read its
answers back into the types.

:class:`LinePredictor` is what every model that predicts lines offers (the GNN, a GNN ensemble, a GNN with its
Type-1 model, the Transformer): examples in, one :class:`Prediction` each out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import torch

    from ..data.dataset import BagExample

GNN, SEQUENCE = "gnn", "sequence"  # the two record layouts: the GNN's decoder, a sequence model's beam

JsonObject = dict[str, Any]  # a JSON object as written (the edge)


@dataclass(slots=True)
class MoleculeRole:
    """One input molecule in the written hypothesis: its role and ``nu`` there, the role head's probability of
    that role, and the head's own most likely role with its probability."""

    mol: str
    role: str
    nu: int
    confidence: float
    best_role: str
    best_confidence: float

    def to_json(self) -> JsonObject:
        return {
            "mol": self.mol,
            "role": self.role,
            "nu": self.nu,
            "confidence": self.confidence,
            "best_role": self.best_role,
            "best_confidence": self.best_confidence,
        }


@dataclass(slots=True)
class BeamEntry:
    """One hypothesis of the beam: its line, its score (``None``: the no-reaction entry without one) and main
    product."""

    prediction: str
    logp: float | None
    main_product: str | None


@dataclass(slots=True)
class Alternative:
    """One of the ``top_k`` distinct balanced lines, with its probability and main product."""

    prediction: str
    probability: float
    main_product: str | None

    def to_json(self) -> JsonObject:
        return {"prediction": self.prediction, "probability": self.probability, "main_product": self.main_product}


@dataclass(slots=True)
class SecondOpinion:
    """With a Type-1 model: the line the main model writes for a Type-1 line, and whether it is the one written."""

    model: str | None
    prediction: str
    agrees: bool

    def to_json(self) -> JsonObject:
        return {"model": self.model, "prediction": self.prediction, "agrees": self.agrees}


@dataclass(slots=True)
class FormulaCheck:
    """A chemist's SMILES line read a second time in formulas (``decode.formula_check``): the formula model's line
    and whether the line written has its formulas at the same coefficients."""

    prediction: str
    agrees: bool

    def to_json(self) -> JsonObject:
        return {"prediction": self.prediction, "agrees": self.agrees}


@dataclass(slots=True)
class DomainFields:
    """Whether the reaction resembles the training reactions (``None``: no index), the nearest similarity, why."""

    in_domain: bool | None
    nearest_training_similarity: float | None
    domain_notes: list[str]


@dataclass(slots=True)
class TrustFields:
    """What the trust stage adds: the raw confidence (the calibrated one replaces ``Prediction.confidence``),
    whether it is calibrated (``calibration_note``: why not, when a calibration exists), the in-domain fields
    (``None``: not asked), a probability per beam entry and the ``top_k`` alternatives."""

    raw_confidence: float
    calibrated: bool
    calibration_note: str | None
    domain: DomainFields | None
    beam_probabilities: list[float | None]
    top_k: list[Alternative]

    @classmethod
    def of_record(cls, r: Mapping[str, Any]) -> TrustFields:
        """The trust fields of a record the trust package annotated."""
        domain = None
        if "in_domain" in r:
            domain = DomainFields(r["in_domain"], r["nearest_training_similarity"], r["domain_notes"])
        return cls(
            raw_confidence=r["raw_confidence"],
            calibrated=r["calibrated"],
            calibration_note=r.get("calibration_note"),
            domain=domain,
            beam_probabilities=[e.get("probability") for e in r.get("beam") or []],
            top_k=[Alternative(t["prediction"], t["probability"], t["main_product"]) for t in r["top_k"]],
        )


@dataclass(slots=True)
class SetMember:
    """One line of a conformal prediction set."""

    prediction: str
    probability: float


@dataclass(slots=True)
class SetFields:
    """The conformal prediction set of a line (``members`` ``None``: none can be stated, ``note`` says why)."""

    members: list[SetMember] | None
    note: str | None = None

    @classmethod
    def of_record(cls, r: Mapping[str, Any]) -> SetFields:
        got = r.get("prediction_set")
        members = None if got is None else [SetMember(m["prediction"], m["probability"]) for m in got]
        return cls(members, r.get("conformal_note"))


@dataclass(slots=True)
class Prediction:
    """One predicted line (see the module doc). The decoder's fields first (``layout`` :data:`GNN`), or a
    sequence model's few (:data:`SEQUENCE`: no roles, no extent); the stream's (``line`` and the line as read,
    ``None`` outside a stream); then what the later stages add."""

    prediction: str
    fallback: bool
    confidence: float | None
    molecules: list[MoleculeRole]
    main_product: str | None
    extent: int | None
    extent_rule: str | None
    beam: list[BeamEntry]
    layout: str = GNN
    by_products: dict[str, float | None] = field(default_factory=dict)
    leftover: str | None = None
    best_by_products: dict[str, float] = field(default_factory=dict)
    best_leftover: str | None = None
    new_products: list[str] = field(default_factory=list)
    nu: dict[str, int] = field(default_factory=dict)
    extent_candidates: list[int] = field(default_factory=list)
    extent_candidates_range: bool = False  # the candidates are the first and the last of a range
    extent_posterior: list[float] = field(default_factory=list)
    balanced: bool = False
    not_covered: list[str] = field(default_factory=list)
    given_roles: bool = False
    given_products: list[str] = field(default_factory=list)
    given_reagents: list[str] = field(default_factory=list)  # a reaction line's molecules between the arrows
    equation: str | None = None
    byproduct_convention: str = "benchmark"
    byproduct_note: str | None = None
    completed_source: str | None = None  # the amounts a completed reaction line is balanced from
    model: str | None = None  # the checkpoint file that wrote the line (a sequence model: its kind)
    second_opinion: SecondOpinion | None = None
    formula_check: FormulaCheck | None = None
    # the stream's
    line: int | None = None
    as_read: str | None = None  # the line as read (``source`` is the record's)
    coef_set: str | None = None
    line_type: int | None = None
    # the later stages'
    trust: TrustFields | None = None
    sets: SetFields | None = None
    # the rules stage's (a user's line only, :mod:`.rules_stage`): who wrote the line, and the model's own
    written_by: str | None = None
    model_prediction: str | None = None
    model_confidence: float | None = None
    # a line given back in its place (the Python API): withheld below its min_confidence, refused, or blank
    abstained: bool = False
    error: str | None = None
    blank: bool = False

    @classmethod
    def of_line(cls, line: str, confidence: float | None = None) -> Prediction:
        """A line with nothing else known (a stand-in model's)."""
        return cls(line, False, confidence, [], None, None, None, [])

    @classmethod
    def passed_over(cls, line: int, source: str) -> Prediction:
        """A blank or ``#`` line: nothing to predict, kept in its place (as ``gnnca predict`` writes an empty line)."""
        return cls("", False, 0.0, [], None, 0, "", [], line=line, as_read=source, blank=True)

    @classmethod
    def refused(cls, line: int, source: str, error: str) -> Prediction:
        """A refused line kept in its place (``skip_invalid``): no prediction, the located reason in ``error``."""
        return cls("", False, 0.0, [], None, 0, "", [], line=line, as_read=source, error=error)

    def placed(self, line: int, source: str, coef_set: str, line_type: int) -> Prediction:
        """The prediction of input line ``line`` (as read: ``source``, its coefficient set and line type)."""
        self.line, self.as_read, self.coef_set, self.line_type = line, source, coef_set, line_type
        return self

    def withhold(self) -> None:
        """Abstain on the line (a confidence below the ``min_confidence`` asked, or out of domain): ``prediction``
        empty and ``abstained`` true, the rest kept."""
        self.prediction, self.abstained = "", True

    @property
    def by_rule(self) -> bool:
        """Whether an explicit rule wrote the line (the rules stage, :attr:`written_by`)."""
        return self.written_by is not None and self.written_by.startswith("rule:")

    @property
    def min_confidence_value(self) -> float:
        """The confidence ``--min-confidence`` compares (0 when there is none)."""
        return float(self.confidence or 0.0)

    # ----------------------------------------------------------------- JSON, at the edge
    def to_json(self) -> JsonObject:
        """The ``gnnca predict --json`` object of this line."""
        if self.blank:
            return {"line": self.line, "prediction": "", "blank": True}
        if self.error is not None:
            return {"line": self.line, "prediction": "", "error": self.error}
        out: JsonObject = {}
        if self.line is not None:
            src = self.completed_source if self.completed_source is not None else self.as_read
            out.update(line=self.line, source=src, coef_set=self.coef_set, line_type=self.line_type)
        out.update(self._decoded_json())
        if self.layout == GNN and self.model is not None:
            out["model"] = self.model
        if self.second_opinion is not None:
            out["second_opinion"] = self.second_opinion.to_json()
        if self.formula_check is not None:
            out["formula_check"] = self.formula_check.to_json()
        if self.trust is not None:
            self._trust_json(out, self.trust)
        if self.sets is not None:
            members = self.sets.members
            out["prediction_set"] = None if members is None else [
                {"prediction": m.prediction, "probability": m.probability} for m in members
            ]  # fmt: skip
            out["set_size"] = None if members is None else len(members)
            if self.sets.note is not None:
                out["conformal_note"] = self.sets.note
        if self.written_by is not None:
            out["written_by"] = self.written_by
        if self.model_prediction is not None:
            out.update(model_prediction=self.model_prediction, model_confidence=self.model_confidence)
        if self.abstained:
            out["abstained"] = True
        return out

    def _beam_json(self) -> list[JsonObject]:
        probs = self.trust.beam_probabilities if self.trust is not None else None
        rows = []
        for i, e in enumerate(self.beam):
            row: JsonObject = {"prediction": e.prediction, "logp": e.logp, "main_product": e.main_product}
            if probs is not None:
                row["probability"] = probs[i]
            rows.append(row)
        return rows

    def _decoded_json(self) -> JsonObject:
        molecules = [m.to_json() for m in self.molecules]
        if self.layout == SEQUENCE:
            return {
                "prediction": self.prediction,
                "fallback": self.fallback,
                "confidence": self.confidence,
                "model": self.model,
                "molecules": molecules,
                "main_product": self.main_product,
                "extent": self.extent,
                "extent_rule": self.extent_rule,
                "beam": self._beam_json(),
            }
        out: JsonObject = {
            "prediction": self.prediction,
            "fallback": self.fallback,
            "confidence": self.confidence,
            "molecules": molecules,
            "by_products": self.by_products,
            "leftover": self.leftover,
            "best_by_products": self.best_by_products,
            "best_leftover": self.best_leftover,
            "new_products": self.new_products,
            "nu": self.nu,
            "main_product": self.main_product,
            "extent": self.extent,
            "extent_rule": self.extent_rule,
            "extent_candidates": self.extent_candidates,
        }
        if self.extent_candidates_range:
            out["extent_candidates_range"] = True
        out.update(
            extent_posterior=self.extent_posterior,
            balanced=self.balanced,
            not_covered=self.not_covered,
            given_roles=self.given_roles,
            given_products=self.given_products,
            **({"given_reagents": self.given_reagents} if self.given_roles else {}),
            equation=self.equation,
            byproduct_convention=self.byproduct_convention,
        )
        if self.byproduct_note:
            out["byproduct_note"] = self.byproduct_note
        if self.completed_source is not None:
            out["source"] = self.completed_source  # in a stream's record the key is already first: kept there
        out["beam"] = self._beam_json()
        return out

    @staticmethod
    def _trust_json(out: JsonObject, t: TrustFields) -> None:
        out["raw_confidence"] = t.raw_confidence
        out["calibrated"] = t.calibrated
        if t.calibration_note is not None:
            out["calibration_note"] = t.calibration_note
        if t.domain is not None:
            out["in_domain"] = t.domain.in_domain
            out["nearest_training_similarity"] = t.domain.nearest_training_similarity
            out["domain_notes"] = t.domain.domain_notes
        out["top_k"] = [a.to_json() for a in t.top_k]

    # ----------------------------------------------------------------- what later stages read
    def with_trust(self, annotated: Mapping[str, Any]) -> None:
        """Take the trust package's answers from the record it annotated (:meth:`to_json`'s object)."""
        self.confidence = annotated["confidence"]
        self.trust = TrustFields.of_record(annotated)

    @property
    def in_domain(self) -> bool | None:
        return None if self.trust is None or self.trust.domain is None else self.trust.domain.in_domain

    @property
    def domain_notes(self) -> list[str]:
        return [] if self.trust is None or self.trust.domain is None else self.trust.domain.domain_notes

    # ----------------------------------------------------------------- the Python API's names
    @property
    def source(self) -> str:
        """The source line as the record states it: the amounts a completed reaction line is balanced from, else
        the line as read."""
        return self.completed_source if self.completed_source is not None else self.as_read or ""

    @property
    def roles(self) -> tuple[MoleculeRole, ...]:
        """Each input molecule's role in the written line (``molecules``)."""
        return tuple(self.molecules)

    @property
    def calibrated(self) -> bool:
        return self.trust is not None and self.trust.calibrated

    @property
    def calibration_note(self) -> str | None:
        return None if self.trust is None else self.trust.calibration_note

    @property
    def nearest_training_similarity(self) -> float | None:
        return (
            None if self.trust is None or self.trust.domain is None else self.trust.domain.nearest_training_similarity
        )

    @property
    def top_k(self) -> tuple[tuple[str, float], ...]:
        """The best distinct balanced lines as (line, probability), most probable first (with their main products:
        ``trust.top_k``)."""
        return () if self.trust is None else tuple((a.prediction, a.probability) for a in self.trust.top_k)

    @property
    def record(self) -> JsonObject:
        """The ``gnnca predict --json`` object of the line (:meth:`to_json`)."""
        return self.to_json()


class LinePredictor(Protocol):
    """A model that predicts lines: the GNN (:class:`~.predictor.Predictor`, also an ensemble ``a.pt,b.pt`` and
    a GNN routing its Type-1 lines to a second one) and the Transformer
    (:class:`~.transformer.TransformerPredictor`). ``source``: how it was loaded (``None``: built in memory, no
    sidecars); ``type1``: the model that reads its Type-1 lines, if another."""

    repr: str
    vtype: int
    naive: bool

    @property
    def device(self) -> torch.device: ...

    @property
    def source(self) -> LoadSpec | None: ...

    @property
    def type1(self) -> LinePredictor | None: ...

    def predict(self, examples: Sequence[BagExample], batch_size: int = 64, beam: int = 1) -> list[Prediction]: ...

    def spec(self) -> LoadSpec: ...


class LoadSpec(Protocol):
    """How a predictor is loaded again (a ``--workers`` process): picklable, unlike a loaded model."""

    @property
    def checkpoint(self) -> str: ...

    @property
    def edit_checkpoint(self) -> str | None: ...

    def load(self) -> LinePredictor: ...
