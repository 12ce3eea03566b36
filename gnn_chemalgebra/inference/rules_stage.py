"""The rules stage of prediction: after the model's line is decoded and its trust fields are set, a user's line
that an explicit rule covers (:mod:`~gnn_chemalgebra.algebra.rules`) is written by the rule instead.

Only lines read in the chemist's convention (stdin, the Python API, a user's own file; never a benchmark source
file ``src-*.txt`` nor ``--extent bayes``) go through it: no benchmark line changes. Every prediction of such a run
says who wrote its line: ``"written_by": "model"`` or ``"rule:<name>"``. A rule's line keeps the model's own line
as ``model_prediction`` (and its confidence) and the model's alternatives after it in ``top_k`` (their
probabilities scaled to what the rule leaves); its confidence is the rule's
(:data:`~gnn_chemalgebra.algebra.rules.CONFIDENCE`), not a calibrated number, and it is in domain (the rule covers
it). The conformal sets come after this stage and give a rule's line none: they are fitted on the model's lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..algebra.roles import role_name
from ..algebra.rules import RuleLine, apply_rules
from ..chem.bag import parse_bag
from ..chem.molecule import Repr
from ..errors import ChemAlgebraError, InputError
from .prediction import Alternative, DomainFields, Prediction, TrustFields

BY_PRODUCTS = frozenset({"O", "[H][H]", "O=C=O", "N#N", "O=S=O", "H2O", "H2", "CO2", "N2", "O2S"})
RULE_NOTE = "written by a rule: the confidence is the rule's, not a calibrated probability"


def rules_apply(convention: str, input_path: str | None) -> bool:
    """Whether a run's lines go through the rules: lines read in the chemist's convention, never a benchmark
    source file (``src-*.txt``), whatever ``--byproducts`` asks."""
    from .byproduct_convention import CHEMIST, resolve_byproducts

    return convention == CHEMIST and resolve_byproducts("auto", input_path) == CHEMIST


def rule_for(pred: Prediction, repr: Repr) -> RuleLine | None:
    """The rule's line for one prediction (``None``: no rule fires). A reaction line states no amounts and keeps
    its reagents (``given_reagents``); its line must make its given products."""
    if pred.as_read is None:
        return None
    try:
        terms = parse_bag(pred.as_read)
    except InputError:
        return None
    reagents = list(pred.given_reagents) if pred.given_roles else None
    try:
        return apply_rules(terms, repr, pred.given_products, reagents)
    except ChemAlgebraError:
        return None


def _main_product(line: RuleLine, given: Sequence[str]) -> str | None:
    if given:
        return given[0]
    return next((m for m in line.products if m not in BY_PRODUCTS), line.products[0] if line.products else None)


def _trust(pred: Prediction, line: RuleLine, main: str | None) -> TrustFields:
    """The rule's trust fields: its confidence, not calibrated, in domain; the model's alternatives after its
    line, their probabilities scaled to what the rule leaves."""
    old = pred.trust
    rest = 1.0 - line.confidence
    others = [
        Alternative(a.prediction, round(a.probability * rest, 4), a.main_product)
        for a in (old.top_k if old is not None else [])
        if a.prediction != line.line
    ]
    first = Alternative(line.line, line.confidence, main)
    similarity = old.domain.nearest_training_similarity if old is not None and old.domain is not None else None
    return TrustFields(
        raw_confidence=old.raw_confidence if old is not None else 0.0,
        calibrated=False,
        calibration_note=RULE_NOTE,
        domain=DomainFields(True, similarity, [f"covered by the rule {line.rule}"]),
        beam_probabilities=old.beam_probabilities if old is not None else [None] * len(pred.beam),
        top_k=[first, *others][: max(1, len(old.top_k) if old is not None else 1)],
    )


def write_by_rule(pred: Prediction, line: RuleLine) -> None:
    """``pred`` rewritten in place with the rule's line (see the module's text)."""
    nu = dict(line.nu)
    main = _main_product(line, pred.given_products)
    pred.model_prediction, pred.model_confidence = pred.prediction, pred.confidence
    pred.written_by = f"rule:{line.rule}"
    pred.prediction, pred.fallback, pred.confidence = line.line, False, line.confidence
    pred.main_product, pred.extent, pred.equation = main, line.extent, line.equation
    pred.nu = {m: v for m, v in nu.items() if v < 0}
    pred.new_products, pred.by_products, pred.leftover = list(line.products), {}, None
    pred.balanced, pred.not_covered, pred.completed_source = True, [], None
    pred.byproduct_convention, pred.byproduct_note = "chemist", None
    for m in pred.molecules:
        m.nu = nu.get(m.mol, 0)
        m.role, m.confidence = role_name(m.nu), line.confidence
    pred.trust = _trust(pred, line, main)


def rule_predictions(preds: Sequence[Prediction], repr: Repr) -> None:
    """The rules stage of one batch: each prediction written by a rule where one fires, every one marked with who
    wrote its line (``written_by``)."""
    for pred in preds:
        line = rule_for(pred, repr)
        if line is None:
            pred.written_by = "model"
        else:
            write_by_rule(pred, line)
