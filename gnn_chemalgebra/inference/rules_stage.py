"""The rules stage of prediction: after the model's line is decoded and its trust fields are set, a user's line
that an explicit rule covers (:mod:`~gnn_chemalgebra.algebra.rules`) is written by the rule instead.

Only lines read in the chemist's convention (stdin, the Python API, a user's own file; never a benchmark source
file ``src-*.txt`` nor ``--extent bayes``) go through it: no benchmark line changes. Every record of such a run
says who wrote its line: ``"written_by": "model"`` or ``"rule:<name>"``. A rule's line keeps the model's own line
as ``model_prediction`` and the model's alternatives after it in ``top_k`` (their probabilities scaled to what the
rule leaves); its confidence is the rule's (:data:`~gnn_chemalgebra.algebra.rules.CONFIDENCE`), not a calibrated
number, and it is in domain (the rule covers it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..algebra.rules import RuleLine, apply_rules
from ..chem.bag import parse_bag
from ..chem.molecule import Repr
from ..errors import ChemAlgebraError, InputError

BY_PRODUCTS = frozenset({"O", "[H][H]", "O=C=O", "N#N", "O=S=O", "H2O", "H2", "CO2", "N2", "O2S"})
RULE_NOTE = "written by a rule: the confidence is the rule's, not a calibrated probability"


def rules_apply(convention: str, input_path: str | None) -> bool:
    """Whether a run's lines go through the rules: lines read in the chemist's convention, never a benchmark
    source file (``src-*.txt``), whatever ``--byproducts`` asks."""
    from .byproduct_convention import CHEMIST, resolve_byproducts

    return convention == CHEMIST and resolve_byproducts("auto", input_path) == CHEMIST


def rule_for(record: dict[str, Any], repr: Repr) -> RuleLine | None:
    """The rule's line for one prediction record (``None``: no rule fires, or the record is no prediction)."""
    if "source" not in record or "prediction" not in record:
        return None
    try:
        terms = parse_bag(record["source"])
    except InputError:
        return None
    reagents = list(record.get("given_reagents") or ()) if record.get("given_roles") else None
    try:
        return apply_rules(terms, repr, record.get("given_products") or (), reagents)
    except ChemAlgebraError:
        return None


def _main_product(line: RuleLine, given: Sequence[str]) -> str | None:
    if given:
        return given[0]
    return next((m for m in line.products if m not in BY_PRODUCTS), line.products[0] if line.products else None)


def write_by_rule(record: dict[str, Any], line: RuleLine) -> None:
    """``record`` rewritten in place with the rule's line (see the module's text)."""
    model_line = record.get("prediction")
    nu = dict(line.nu)
    record["model_prediction"] = model_line
    record["model_confidence"] = record.get("confidence")
    record["written_by"] = f"rule:{line.rule}"
    record["prediction"] = line.line
    record["fallback"] = False
    record["confidence"] = line.confidence
    record["calibrated"] = False
    record["calibration_note"] = RULE_NOTE
    record["in_domain"] = True
    record["domain_notes"] = [f"covered by the rule {line.rule}"]
    record["main_product"] = _main_product(line, record.get("given_products") or ())
    record["nu"] = {m: v for m, v in nu.items() if v < 0}
    record["new_products"] = list(line.products)
    record["by_products"] = {}
    record["leftover"] = None
    record["extent"] = line.extent
    record["balanced"] = True
    record["not_covered"] = []
    record["equation"] = line.equation
    record["byproduct_convention"] = "chemist"
    record.pop("byproduct_note", None)
    for m in record.get("molecules") or ():
        used = nu.get(m.get("mol"), 0) < 0
        m.update(role="reactant" if used else "reagent", nu=nu.get(m.get("mol"), 0), confidence=line.confidence)
    rest = 1.0 - line.confidence
    others = [dict(t) for t in record.get("top_k") or () if t.get("prediction") != line.line]
    for t in others:
        if t.get("probability") is not None:
            t["probability"] = round(float(t["probability"]) * rest, 4)
    first = {"prediction": line.line, "probability": line.confidence, "main_product": record["main_product"]}
    record["top_k"] = [first, *others][: max(1, len(record.get("top_k") or ()))]
    if "prediction_set" in record:
        record["prediction_set"], record["set_size"] = [{"prediction": line.line, "probability": line.confidence}], 1
        record.pop("conformal_note", None)


def rule_records(records: list[dict[str, Any]], repr: Repr) -> None:
    """The rules stage of one batch: each record written by a rule where one fires, every record marked with who
    wrote its line (``written_by``)."""
    for record in records:
        line = rule_for(record, repr)
        if line is None:
            record["written_by"] = "model"
        else:
            write_by_rule(record, line)
