"""One reaction template applied to molecules: its one outcome, the atom-mapped reaction, the balanced reaction.

:func:`apply_template` runs a template's reaction SMARTS on a substrate and its partners and keeps the result only
when every match gives the same products (one unambiguous site) and every product sanitises. The atom-mapped
reaction is built from the properties RDKit's ``RunReactants`` leaves on each product atom (``react_idx``,
``react_atom_idx``): every reactant atom gets a map number, every product atom the number of the atom it came
from, so a template whose product atoms all come from reactant atoms gives a fully mapped reaction.

:func:`balance_reaction` closes the written reaction (the template's reactants, the variant's co-reactants, the
main product, the template's and the variant's by-products) with the project's exact algebra
(:func:`~gnn_chemalgebra.algebra.complete.complete`): the smallest positive integer coefficients, or ``None``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rdkit import Chem
from rdkit.Chem import AllChem

from ...chem.composition import element_view, smiles_composition
from ..complete import smallest_signed_balancing
from .template_parts import BASES, Template, Variant, canonical

NO_MATCH = "no_match"  # the substrate (or a partner) has no site the template reads
AMBIGUOUS = "ambiguous"  # two matches give different products: more than one site
UNSANITIZABLE = "unsanitizable"  # the product RDKit cannot sanitise (a valence the template breaks)
UNMAPPED = "unmapped_atom"  # a product atom without a reactant atom (a template bug; counted)
FORBIDDEN = "forbidden_group"  # a group the template's conditions would also touch
HYDROGEN_HALIDES = {"Cl": "[Cl-]", "Br": "[Br-]", "I": "[I-]", "F": "[F-]"}
SKELETON_ATOMS = 8  # a side product with this many of the substrate's atoms carries its skeleton
MAX_OUTCOMES = 200  # RunReactants results read per application (symmetric matches repeat one outcome)


@dataclass(frozen=True)
class Applied:
    """The one outcome of a template: the main product, the by-products its SMARTS writes (canonical SMILES), the
    reactants as given (canonical) and the atom-mapped reaction ``reactants>>products``."""

    reactants: tuple[str, ...]
    main: str
    side_products: tuple[str, ...]
    mapped: str
    substrate_sides: tuple[str, ...] = ()  # side products that carry the substrate's skeleton (screened too)


@lru_cache(maxsize=256)
def reaction(smarts: str) -> AllChem.ChemicalReaction:
    rxn = AllChem.ReactionFromSmarts(smarts)
    rxn.Initialize()
    return rxn


@lru_cache(maxsize=512)
def pattern(smarts: str) -> Chem.Mol:
    mol = Chem.MolFromSmarts(smarts)
    if mol is None:
        raise ValueError(f"bad SMARTS {smarts!r}")
    return mol


def forbidden(template: Template, mol: Chem.Mol) -> bool:
    """Whether the substrate holds a group the template's conditions would also change."""
    return any(mol.HasSubstructMatch(pattern(s)) for s in template.forbid)


def _reset_hydrogens(prod: Chem.Mol) -> None:
    """Atoms the template touched get their hydrogens from their new valence (a hydroxide's O that becomes a
    carboxylate's O- loses its H; a bracket atom otherwise keeps the count it was written with)."""
    for atom in prod.GetAtoms():
        if atom.HasProp("old_mapno") and not atom.GetIsAromatic():
            atom.SetNoImplicit(False)
            atom.SetNumExplicitHs(0)


def _outcome(prods: Sequence[Chem.Mol]) -> tuple[tuple[str, ...], list[Chem.Mol]] | None:
    names, mols = [], []
    for p in prods:
        p = Chem.Mol(p)
        _reset_hydrogens(p)
        try:
            Chem.SanitizeMol(p)
        except (ValueError, RuntimeError):
            return None
        names.append(Chem.MolToSmiles(p))
        mols.append(p)
    return tuple(names), mols


def _mapped(reactants: Sequence[Chem.Mol], prods: Sequence[Chem.Mol]) -> str | None:
    """``reactants>>products`` with a map number on every atom; ``None`` when a product atom has no source."""
    offsets, total = [], 0
    for mol in reactants:
        offsets.append(total)
        total += mol.GetNumAtoms()
    lhs = []
    for k, mol in enumerate(reactants):
        m = Chem.Mol(mol)
        for a in m.GetAtoms():
            a.SetAtomMapNum(offsets[k] + a.GetIdx() + 1)
        lhs.append(Chem.MolToSmiles(m))
    rhs = []
    for p in prods:
        m = Chem.Mol(p)
        for a in m.GetAtoms():
            if not a.HasProp("react_atom_idx") or not a.HasProp("react_idx"):
                return None
            a.SetAtomMapNum(offsets[a.GetIntProp("react_idx")] + a.GetIntProp("react_atom_idx") + 1)
        rhs.append(Chem.MolToSmiles(m))
    return ".".join(lhs) + ">>" + ".".join(rhs)


def _alkene_hydrogens(main: Chem.Mol) -> int:
    """Hydrogens on the template's double-bond atoms (map numbers 1 and 2) of a main product."""
    return sum(
        a.GetTotalNumHs() for a in main.GetAtoms() if a.HasProp("old_mapno") and a.GetIntProp("old_mapno") in (1, 2)
    )


def _picked(
    outcomes: dict[tuple[str, ...], list[Chem.Mol]], pick: str | None
) -> tuple[tuple[str, ...], list[Chem.Mol]] | None:
    """The one outcome, or the one a rule picks among several: ``zaitsev`` the most substituted alkene (fewest
    hydrogens on its two carbons), ``hofmann`` the least; ``None`` when the rule ties."""
    if len(outcomes) == 1:
        return next(iter(outcomes.items()))
    if pick not in ("zaitsev", "hofmann"):
        return None
    sign = 1 if pick == "zaitsev" else -1
    scored = sorted((sign * _alkene_hydrogens(prods[0]), names) for names, prods in outcomes.items())
    if scored[0][0] == scored[1][0]:
        return None
    return scored[0][1], outcomes[scored[0][1]]


def apply_template(template: Template, smiles: Sequence[str]) -> Applied | str:
    """The outcome of ``template`` on ``smiles`` (the substrate, then one molecule per partner template, canonical
    SMILES), or the reason there is none (:data:`NO_MATCH`, :data:`AMBIGUOUS`, :data:`UNSANITIZABLE`,
    :data:`UNMAPPED`, :data:`FORBIDDEN`)."""
    cans = [canonical(s) for s in smiles]
    if any(c is None for c in cans):
        return UNSANITIZABLE
    smiles = [c for c in cans if c is not None]  # the record's molecules: canonical, as the mapped fragments
    mols = [Chem.MolFromSmiles(s) for s in smiles]
    if forbidden(template, mols[0]):
        return FORBIDDEN
    rxn = reaction(template.smarts)
    outcomes: dict[tuple[str, ...], list[Chem.Mol]] = {}
    for prods in rxn.RunReactants(tuple(mols), MAX_OUTCOMES):
        found = _outcome(prods)
        if found is None:
            return UNSANITIZABLE
        outcomes.setdefault(found[0], found[1])
        if len(outcomes) > 1 and template.pick is None:
            return AMBIGUOUS
    if not outcomes:
        return NO_MATCH
    chosen = _picked(outcomes, template.pick)
    if chosen is None:
        return AMBIGUOUS
    names, prods = chosen
    mapped = _mapped(mols, prods)
    if mapped is None:
        return UNMAPPED
    made = [canonical(n) for n in names]
    if any(c is None for c in made):
        return UNSANITIZABLE
    skeletal = tuple(
        c
        for c, p in zip(made[1:], prods[1:], strict=True)
        if c and sum(a.GetIntProp("react_idx") == 0 for a in p.GetAtoms()) >= SKELETON_ATOMS
    )
    return Applied(tuple(smiles), made[0], tuple(c for c in made[1:] if c), mapped, skeletal)  # type: ignore[arg-type]


def captured(byproducts: Sequence[str], base: str | None) -> tuple[list[str], list[str]]:
    """The by-products with every hydrogen halide taken up by ``base`` (its conjugate acid and the halide ion),
    and the base molecules consumed (one per hydrogen halide); without a base, unchanged."""
    if base is None:
        return list(byproducts), []
    out, used = [], []
    for b in byproducts:
        if b in HYDROGEN_HALIDES:
            out += [BASES[base], HYDROGEN_HALIDES[b]]
            used.append(base)
        else:
            out.append(b)
    return out, used


@dataclass(frozen=True)
class Written:
    """A reaction as written: reactants (consumed), reagents (written back), the main product, by-products, every
    consumed or made species' stoichiometric coefficient, and whether that balancing is the only one."""

    reactants: tuple[str, ...]
    reagents: tuple[str, ...]
    product: str
    byproducts: tuple[str, ...]
    coefficients: dict[str, int]
    unique: bool


def _elements(smiles: str) -> Counter:
    return element_view(smiles_composition(smiles))


def balance_reaction(applied: Applied, variant: Variant, solvent: str | None = None) -> Written | None:
    """The reaction closed by the algebra, or ``None`` when it does not balance.

    The template's own step (its reactants to its products, every heavy atom mapped) is one unit: what it leaves
    unbalanced (hydrogens, charge) is closed by the variant's co-reactants and by-products, with the smallest
    positive integer multipliers (:func:`~gnn_chemalgebra.algebra.complete.smallest_signed_balancing`); the whole
    reaction is then checked atom by atom and charge."""
    side, used = captured(applied.side_products, variant.base)
    hx = [b for b in applied.side_products if b not in side]
    co = list(dict.fromkeys([*variant.co, *used]))
    extra = list(dict.fromkeys([b for b in side if b not in applied.side_products] + list(variant.byproducts)))
    unit: Counter = Counter()
    for m in applied.reactants:
        unit.update(_elements(m))
    for m in (applied.main, *[b for b in applied.side_products if b not in hx]):
        unit.subtract(_elements(m))
    unit = Counter({k: v for k, v in unit.items() if v})
    if co or extra:
        found = _multipliers(tuple(sorted(unit.items())), tuple(co), tuple(extra))
        if found is None:
            return None
        nu, unique = found
    elif unit:
        return None
    else:
        nu, unique = [1], True
    n = abs(nu[0])
    left: Counter = Counter()
    right: Counter = Counter()
    for m in applied.reactants:
        left[m] += n
    for m, c in zip(co, nu[1 : 1 + len(co)], strict=True):
        left[m] += abs(c)
    right[applied.main] += n
    for m in applied.side_products:
        if m not in hx:
            right[m] += n
    for m, c in zip(extra, nu[1 + len(co) :], strict=True):
        right[m] += abs(c)
    if set(left) & set(right) or not _closes(left, right):
        return None
    taken = {*left, *right}
    reagents = [r for r in variant.reagents if r not in taken]
    if solvent is not None and solvent not in taken and solvent not in reagents:
        reagents.append(solvent)
    byproducts = tuple(m for m in right if m != applied.main)
    return Written(tuple(left), tuple(reagents), applied.main, byproducts, {**left, **right}, unique)


@lru_cache(maxsize=4096)
def _multipliers(
    unit: tuple[tuple[str, int], ...], co: tuple[str, ...], extra: tuple[str, ...]
) -> tuple[list[int], bool] | None:
    """The smallest multipliers of the template's unit, the co-reactants and the by-products (cached: a template's
    unit is the same for most substrates)."""
    comps = [Counter(dict(unit)), *(_elements(m) for m in co), *(_elements(m) for m in extra)]
    return smallest_signed_balancing(comps, [-1] * (1 + len(co)) + [1] * len(extra))


def _closes(left: Counter, right: Counter) -> bool:
    """Whether both sides hold the same atoms and charge."""
    total: Counter = Counter()
    for m, c in left.items():
        for k, v in _elements(m).items():
            total[k] += c * v
    for m, c in right.items():
        for k, v in _elements(m).items():
            total[k] -= c * v
    return not any(total.values())
