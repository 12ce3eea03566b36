"""Reactions a course teaches, written by explicit rules instead of the model: general chemistry (neutralisation,
carbonates with acids, combustion, metals with acids and water, precipitation, displacement, thermal
decompositions, combinations of elements, redox by a table of half-reactions) and organic classes whose outcome
the molecules on the line decide (:mod:`.organic`).

:func:`apply_rules` reads a line (its molecules and amounts, SMILES or formulas) and returns the line the one rule
that fires writes, balanced by the project's exact algebra, or ``None``: no rule fires, or two rules disagree.
Torch-free; ``docs/rules.md`` lists the rules and when each fires.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...chem.bag import Term
from ...chem.molecule import Repr, canonical
from ...errors import ChemAlgebraError
from .general import propose
from .line import RuleLine, rule_line
from .organic import propose_organic
from .species import Item, read_items
from .template_rule import MEASURED, template_proposals

# How much a rule's line is trusted: the share of lines it writes right that a rule of its kind can claim. Rules
# whose products follow from the molecules alone (stoichiometry): 0.95; rules that read a table (solubility,
# activity series) or a functional group of an organic molecule, where a condition the line does not state can
# change the outcome: 0.9.
CONFIDENCE: dict[str, float] = {
    "neutralisation": 0.95,
    "carbonate_acid": 0.95,
    "combustion": 0.95,
    "metal_acid": 0.95,
    "metal_water": 0.95,
    "precipitation": 0.9,
    "displacement": 0.9,
    "carbonate_decomposition": 0.9,
    "combination": 0.9,
    "thermal_decomposition": 0.9,
    "redox": 0.9,
}
ORGANIC_CONFIDENCE = 0.9
TEMPLATE_CONFIDENCE = 0.9  # a textbook-class template covering the whole line, unless measured (:mod:`.template_rule`)

__all__ = ["CONFIDENCE", "RuleLine", "apply_rules"]


def apply_rules(
    terms: Sequence[Term], repr: Repr, given: Sequence[str] = (), reagents: Sequence[str] | None = None
) -> RuleLine | None:
    """The line a rule writes for ``terms`` (the molecules of a user's line with their amounts), or ``None`` when
    no rule fires or two rules write different lines. A reaction SMILES (``reagents`` given, maybe empty) states no
    amounts: its reaction is written at the smallest integer coefficients, none of its ``reagents`` may be
    consumed, and the line must make its ``given`` products."""
    merged: dict[str, int] = {}
    for t in terms:
        merged[t.mol] = merged.get(t.mol, 0) + t.coef
    try:
        items = read_items(list(merged.items()), repr)
    except ChemAlgebraError:
        return None
    proposals = [(name, used, made, CONFIDENCE[name], False) for name, used, made in propose(items)]
    if repr == "smiles":
        proposals += [(name, used, made, ORGANIC_CONFIDENCE, True) for name, used, made in propose_organic(items)]
    stated = reagents is None
    held = {canonical(m, repr) for m in reagents or ()}
    lines = _lines(items, proposals, repr, stated, held)
    if not lines and repr == "smiles":  # the templates speak where no rule written for its class does
        tried = [
            (name, used, made, MEASURED.get(name, TEMPLATE_CONFIDENCE), True)
            for name, used, made in template_proposals(items)
        ]
        lines = _lines(items, tried, repr, stated, held)
    if len({canonical_line(r, repr) for r in lines}) != 1:
        return None
    line = lines[0]
    if given:
        made_keys = {canonical(m, repr) for m in line.products}
        if any(canonical(m, repr) not in made_keys for m in given):
            return None
    return line


def _lines(
    items: Sequence[Item], proposals: Sequence[tuple], repr: Repr, stated: bool, held: set[str]
) -> list[RuleLine]:
    """The balanced line of every proposal that consumes none of the reaction's stated reagents (``held``)."""
    lines: list[RuleLine] = []
    for name, used, made, confidence, template in proposals:
        if any(canonical(it.written, repr) in held for it in used):
            continue
        try:
            got = rule_line(items, name, used, made, repr, confidence, stated, template)
        except ChemAlgebraError:
            got = None
        if got is not None:
            lines.append(got)
    return lines


def canonical_line(line: RuleLine, repr: Repr) -> frozenset[tuple[str, int]]:
    """A rule's line as a set of (canonical molecule, amount): two rules that write the same line agree."""
    return frozenset((canonical(t.mol, repr), t.coef) for t in line.terms)
