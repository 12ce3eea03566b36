"""The textbook-class templates (:mod:`.templates`) as rules: a line a template covers completely is written by it.

The templates write training reactions (``gnnca data templates``); here they read a user's line. A template
fires when the line holds its substrate, one molecule per partner template, and exactly what one of its variants
names (reagents written back, co-reactants, a base), with at most its solvents beside them: nothing on the line is
left unexplained. Its one outcome (a substrate with two sites gives none, unless the template picks among them)
is closed by the same algebra as the training reactions (:func:`~.template_apply.balance_reaction`), and
:func:`~gnn_chemalgebra.algebra.rules.apply_rules` writes it at the line's amounts. Two templates that write
different lines cancel each other: the model writes the line.

The classes a hand-written organic rule covers (:mod:`.organic`: acyl substitution, carbodiimide coupling, Fischer
esterification, saponification, acid chlorides, Boc, halogen addition, epoxidation, hydrogenation) are that rule's
alone: it knows when not to fire (a tertiary alcohol, a diene, two Boc groups), which their templates do not.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from functools import lru_cache

from rdkit import Chem

from .general import Proposal
from .species import Item
from .template_apply import Applied, apply_template, balance_reaction, reaction
from .template_parts import Template, Variant, canonical
from .templates import TEMPLATES

# the templates of the classes a hand-written rule covers, never used as rules
HAND_WRITTEN = frozenset(
    {
        "acyl_chloride_aminolysis", "acyl_chloride_alcoholysis", "anhydride_acylation", "sulfonamide_formation",
        "sulfonate_formation", "carbodiimide_coupling", "fischer_esterification", "saponification",
        "acid_chloride_formation", "boc_protection", "boc_removal", "halogen_addition", "epoxidation",
        "alkene_hydrogenation", "alkyne_hydrogenation",
    }
)  # fmt: skip
# amides hydrolyse only under forcing conditions a line rarely states, beside other groups the template does not
# see: the chemist's validation set has it wrong on all 6 lines it fires on (experiments/template_rule_precision.py)
UNRELIABLE = frozenset({"amide_hydrolysis"})
RULE_TEMPLATES: tuple[Template, ...] = tuple(t for t in TEMPLATES if t.name not in HAND_WRITTEN | UNRELIABLE)
# the share of its lines a template writes right on the chemist's validation set, where it writes at least 5
# (rounded down to 0.05, at most 0.95; experiments/template_rule_precision.py); the others take the organic rules'
MEASURED: dict[str, float] = {
    "tbu_ester_cleavage": 0.95,  # 105 of 108
    "alcohol_to_chloride": 0.95,  # 28 of 28
    "wittig": 0.85,  # 6 of 7
    "ester_aminolysis": 0.65,  # 51 of 77: a second electrophile (an enol ether, an aldehyde) it does not see
    "imine_formation": 0.6,  # 7 of 11
}


@lru_cache(maxsize=1)
def _reactant_patterns() -> dict[str, tuple[Chem.Mol, ...]]:
    """Each template's reactant templates, to skip molecules that cannot fill a slot before RDKit runs it."""
    out = {}
    for t in TEMPLATES:
        rxn = reaction(t.smarts)
        out[t.name] = tuple(rxn.GetReactantTemplate(i) for i in range(rxn.GetNumReactantTemplates()))
    return out


def _named_by(v: Variant) -> set[str]:
    return {*v.reagents, *v.co, *([v.base] if v.base else [])}


def _fillings(t: Template, mols: dict[str, Chem.Mol], free: Sequence[str]) -> Iterator[tuple[str, ...]]:
    """Orders of the line's free molecules (substrate first, then one per partner) whose molecules match their
    slots."""
    slots = _reactant_patterns()[t.name]
    options = [[s for s in free if mols[s].HasSubstructMatch(p)] for p in slots]
    for combo in itertools.product(*options):
        if len(set(combo)) == len(combo):
            yield combo


def template_proposals(items: Sequence[Item]) -> list[Proposal]:
    """Every template's proposal that covers the line: ``(template name, consumed items, products)``."""
    by_smiles = {it.smiles: it for it in items if it.smiles}
    if len(by_smiles) != len(items):
        return []
    keys = {canonical(s) or s: s for s in by_smiles}  # the templates' canonical form -> the line's own
    mols = {k: Chem.MolFromSmiles(k) for k in keys}
    if any(m is None for m in mols.values()):
        return []
    out: list[Proposal] = []
    for t in RULE_TEMPLATES:
        for v in t.variants:
            named = _named_by(v)
            if not named <= set(keys):
                continue
            free = [k for k in keys if k not in named and k not in t.solvents]
            if len(free) != 1 + len(t.partners):  # the substrate and its partners, nothing unexplained
                continue
            for combo in _fillings(t, mols, free):
                got = apply_template(t, combo)
                if not isinstance(got, Applied):
                    continue
                written = balance_reaction(got, v)
                if written is None or any(r not in keys for r in written.reactants):
                    continue
                consumed = [by_smiles[keys[r]] for r in written.reactants]
                out.append((t.name, consumed, [written.product, *written.byproducts]))
    return out
