"""The textbook-class templates (:mod:`.templates`) as rules: a line a template covers completely is written by it.

The templates write training reactions (``gnnca data templates``); here they read a user's line. A template
fires when the line holds its substrate, one molecule per partner template, and the co-reactants and base of one of
its variants, with at most that variant's reagents (a catalyst or counter-ion, which a chemist often leaves out) and
the template's solvents beside them: nothing on the line is left unexplained. Its one outcome (a substrate with two
sites gives none, unless the template picks among them) is closed by the same algebra as the training reactions
(:func:`~.template_apply.balance_reaction`), and :func:`~gnn_chemalgebra.algebra.rules.apply_rules` writes it at the
line's amounts. Two templates that write different lines cancel each other: the model writes the line. The classes
a chemist writes E (the Heck reaction, the Claisen-Schmidt condensation, a stabilised ylide's Wittig reaction) get
their new alkene trans (:data:`E_SELECTIVE`).

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
from .template_apply import Applied, apply_template, balance_reaction, pattern, reaction
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
# the share of its lines a template writes right on the chemist's validation set (stereo aside), where it writes at
# least 5 (rounded down to 0.05, at most 0.95; experiments/template_rule_precision.py); the others take the default
MEASURED: dict[str, float] = {
    "tbu_ester_cleavage": 0.95,  # 107 of 110
    "alcohol_to_chloride": 0.95,  # 28 of 28
    "knoevenagel": 0.95,  # 6 of 6
    "wittig": 0.85,  # 6 of 7
    "ester_aminolysis": 0.65,  # 51 of 77: a second electrophile (an enol ether, an aldehyde) it does not see
    "claisen_schmidt": 0.65,  # 6 of 9
    "imine_formation": 0.6,  # 7 of 11
}


# classes whose new C=C a chemist writes E (trans): the Heck reaction, the Claisen-Schmidt condensation, the Wittig
# reaction of a stabilised ylide (a carbonyl on the ylide carbon; an unstabilised one gives mostly Z)
E_SELECTIVE: dict[str, str | None] = {"heck_reaction": None, "claisen_schmidt": None, "wittig": "O=[#6][CX3]=P"}


def trans_alkenes(smiles: str) -> str:
    """``smiles`` with each open-chain C=C that has one carbon substituent on each end and no stereo written
    made trans (E)."""
    mol = Chem.MolFromSmiles(smiles)
    changed = False
    for b in mol.GetBonds() if mol is not None else ():
        if b.GetBondType() != Chem.BondType.DOUBLE or b.IsInRing() or b.GetStereo() != Chem.BondStereo.STEREONONE:
            continue
        ends = []
        for a, other in ((b.GetBeginAtom(), b.GetEndAtom()), (b.GetEndAtom(), b.GetBeginAtom())):
            heavy = [n for n in a.GetNeighbors() if n.GetIdx() != other.GetIdx()]
            if a.GetAtomicNum() == 6 and len(heavy) == 1 and a.GetTotalNumHs() == 1:
                ends.append(heavy[0].GetIdx())
        if len(ends) == 2:
            b.SetStereoAtoms(*ends)
            b.SetStereo(Chem.BondStereo.STEREOTRANS)
            changed = True
    return Chem.MolToSmiles(mol) if changed else smiles


def _writes_trans(t: Template, partners: Sequence[str]) -> bool:
    if t.name not in E_SELECTIVE:
        return False
    need = E_SELECTIVE[t.name]
    return need is None or any(Chem.MolFromSmiles(p).HasSubstructMatch(pattern(need)) for p in partners)


@lru_cache(maxsize=1)
def _reactant_patterns() -> dict[str, tuple[Chem.Mol, ...]]:
    """Each template's reactant templates, to skip molecules that cannot fill a slot before RDKit runs it."""
    out = {}
    for t in TEMPLATES:
        rxn = reaction(t.smarts)
        out[t.name] = tuple(rxn.GetReactantTemplate(i) for i in range(rxn.GetNumReactantTemplates()))
    return out


def _needed_by(v: Variant) -> set[str]:
    """What a line must hold for the variant: its co-reactants and base (they give or take atoms); a catalyst or
    counter-ion written back may be left out, as a chemist often leaves it out."""
    return {*v.co, *([v.base] if v.base else [])}


def _named_by(v: Variant) -> set[str]:
    """What the variant explains on a line: the above and its reagents."""
    return _needed_by(v) | set(v.reagents)


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
            if not _needed_by(v) <= set(keys):
                continue
            free = [k for k in keys if k not in _named_by(v) and k not in t.solvents]
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
                main = trans_alkenes(written.product) if _writes_trans(t, combo[1:]) else written.product
                out.append((t.name, consumed, [main, *written.byproducts]))
    return out
