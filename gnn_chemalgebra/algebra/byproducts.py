"""Real by-products: close a reaction whose reactants and known products are given with the molecules a chemist
writes for what leaves (water, hydrogen halides, CO2, N2, alcohols, salts, ...), by exact integer algebra.

The benchmark writes what a reaction gives off as an artificial chain of atoms (``[O]``, ``[C]O[O]``); a chemist
writes water, carbon dioxide or sodium bromide. :func:`close_with_byproducts` tries the smallest sets of real
molecules from :data:`CATALOGUE` (common ones first) plus the salts the input's ions or metals can form, and keeps
the first set whose smallest positive integer coefficients balance every element and the charge exactly
(:func:`~.complete.complete`, sympy). When none does it says what is left over.

Salts follow the input: ions written as ions (``[Na+]`` and ``[OH-]``, or ``[Na+].[OH-]``) give the salt as its
ions in one species (``[Br-].[Na+]``) and, for a cation written as its own molecule, the lone counter-ion
(``[Br-]``); a metal written covalently or as the element (``O[Na]``, ``[Zn]``) gives the covalent salt
(``[Na]Br``, ``Cl[Zn]Cl``). Formulas are written as RDKit writes them (``H2O``, ``ClH``, ``BrNa``); a cation
written as an ion (``Na+``) stays one beside the lone anion (``Br-``).
Boronic acids leave boric acid: a Suzuki coupling closes with a base (``B(OH)3`` and the bromide salt) or with
water (``B(OH)3`` and ``HBr``), not on its own.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import lcm

from rdkit import Chem

from ..chem.composition import CHARGE_KEY
from ..chem.formula import write_formula
from ..chem.molecule import Repr, smiles_to_formula
from ..chem.smiles import canonical_smiles, shared_mol
from ..errors import ChemAlgebraError, InputError
from .balance import species_composition
from .complete import complete, leftover_of_cover, why_unbalanced

Comp = Mapping[str, int]
MAX_ADDED = 3  # the most by-products a closure may add
SEARCH_LIMIT = 4_000  # by-product sets tried per call (bounds the time of a line that does not close)

# Real by-products, commonest first (the order breaks ties between sets of the same size): what condensations,
# substitutions, eliminations, protecting-group removals, couplings, reductions and oxidations give off.
CATALOGUE: tuple[tuple[str, str], ...] = (
    ("water", "O"),
    ("hydrogen chloride", "Cl"),
    ("hydrogen bromide", "Br"),
    ("carbon dioxide", "O=C=O"),
    ("methanol", "CO"),
    ("ethanol", "CCO"),
    ("hydrogen", "[H][H]"),
    ("nitrogen", "N#N"),
    ("ammonia", "N"),
    ("hydrogen iodide", "I"),
    ("hydrogen fluoride", "F"),
    ("isobutene", "C=C(C)C"),
    ("tert-butanol", "CC(C)(C)O"),
    ("acetic acid", "CC(=O)O"),
    ("sulfur dioxide", "O=S=O"),
    ("isopropanol", "CC(C)O"),
    ("succinimide", "O=C1CCC(=O)N1"),
    ("N-hydroxysuccinimide", "O=C1CCC(=O)N1O"),
    ("imidazole", "c1c[nH]cn1"),
    ("HOBt", "On1nnc2ccccc21"),
    ("dicyclohexylurea", "O=C(NC1CCCCC1)NC1CCCCC1"),
    ("EDC urea", "CCNC(=O)NCCCN(C)C"),
    ("diisopropylurea", "CC(C)NC(=O)NC(C)C"),
    ("boric acid", "OB(O)O"),
    ("trifluoroacetic acid", "O=C(O)C(F)(F)F"),
    ("tert-butyl chloride", "CC(C)(C)Cl"),
    ("toluene", "Cc1ccccc1"),
    ("phenol", "Oc1ccccc1"),
    ("benzyl alcohol", "OCc1ccccc1"),
    ("p-toluenesulfonic acid", "Cc1ccc(S(=O)(=O)O)cc1"),
    ("methanesulfonic acid", "CS(=O)(=O)O"),
    ("sulfuric acid", "O=S(=O)(O)O"),
    ("triphenylphosphine oxide", "O=P(c1ccccc1)(c1ccccc1)c1ccccc1"),
    ("carbon monoxide", "[C-]#[O+]"),
    ("acetone", "CC(C)=O"),
    ("hydrogen cyanide", "C#N"),
    ("hydrogen sulfide", "S"),
)  # oxygen is left out: a line that closes with O2 given off (a nitro group "reduced" to O2) is an oxidant's gap
# Anions a salt by-product may hold (with the SMILES of the neutral group bonded to a metal), commonest first.
SALT_ANIONS: tuple[tuple[str, str], ...] = (
    ("[Cl-]", "Cl"),
    ("[Br-]", "Br"),
    ("[I-]", "I"),
    ("[F-]", "F"),
    ("[OH-]", "O"),
    ("OC(=O)[O-]", "OC(=O)O"),
    ("CC(=O)[O-]", "CC(=O)O"),
)
# What a reaction without a written product (a combustion, a decomposition) may end as: small inorganic molecules.
INORGANIC = frozenset({"O", "Cl", "Br", "I", "F", "O=C=O", "[H][H]", "N#N", "N", "O=S=O", "[C-]#[O+]", "S", "C#N"})
METALS = frozenset(
    {"Li", "Na", "K", "Rb", "Cs", "Mg", "Ca", "Sr", "Ba", "Zn", "Cu", "Fe", "Co", "Ni", "Mn", "Ag", "Al", "Sn"}
)


@dataclass(frozen=True)
class ByproductClosure:
    """The result of :func:`close_with_byproducts`. ``ok``: a balancing was found; ``coefficients``: the positive
    integer coefficients of the reactants, then the products, then ``byproducts`` (in that order, smallest
    integers; 0 for a ``spectator``: an ion written as its own molecule that the reaction leaves as it is, such as
    the sodium of ``[Na+]`` and ``[OH-]`` beside a given carboxylate); ``leftover``: the formula of what the
    reactants leave beyond the products when not ``ok`` (``None`` when nothing can be said); ``reason``: why not
    (empty when ``ok``); ``unique``: the only balancing up to scale."""

    ok: bool
    reactants: tuple[str, ...]
    products: tuple[str, ...]
    byproducts: tuple[str, ...] = ()
    coefficients: tuple[int, ...] = ()
    leftover: str | None = None
    reason: str = ""
    unique: bool = True
    spectators: tuple[str, ...] = ()

    def equation(self) -> str:
        """``a A + b B -> c C + d D`` as ``gnnca balance`` writes it (``""`` when not ``ok``)."""
        if not self.ok:
            return ""
        from .balance import format_side

        n = len(self.reactants)
        right = [*self.products, *self.byproducts]
        return (
            format_side(list(self.reactants), list(self.coefficients[:n]))
            + " -> "
            + format_side(right, list(self.coefficients[n:]))
        )


def _comp(mol: str, repr: Repr) -> Counter:
    """Element counts plus net charge, as the balancer reads them."""
    return Counter({k: v for k, v in species_composition(mol, repr).items() if v})


@lru_cache(maxsize=4)
def catalogue(repr: Repr, inorganic: bool = False) -> tuple[str, ...]:
    """The catalogue's molecules written in ``repr`` (canonical SMILES, or RDKit's formulas), commonest first
    (``inorganic``: only the small inorganic ones)."""
    rows = [s for _, s in CATALOGUE if not inorganic or s in INORGANIC]
    if repr == "smiles":
        return tuple(canonical_smiles(s) for s in rows)
    return tuple(smiles_to_formula(s) for s in rows)


def _metal_forms(mol: str, repr: Repr) -> list[tuple[str, int, bool]]:
    """The metal cations a species offers: (element, charge of the cation, written as an ion). A metal written
    covalently or as the element counts as its usual cation (charge from its bonds or its common valence)."""
    comp = _comp(mol, repr)
    metals = [el for el in comp if el in METALS]
    if not metals:
        return []
    if repr == "formula":
        charge = comp.get(CHARGE_KEY, 0)
        return [(el, _valence(el, charge if len(metals) == 1 and charge > 0 else 0), charge > 0) for el in metals]
    forms = []
    for atom in shared_mol(mol).GetAtoms():
        el = atom.GetSymbol()
        if el in METALS:
            q = atom.GetFormalCharge()
            forms.append((el, q if q > 0 else _valence(el, 0), q > 0))
    return forms


_USUAL_CHARGE = {"Li": 1, "Na": 1, "K": 1, "Rb": 1, "Cs": 1, "Ag": 1, "Al": 3, "Fe": 2, "Sn": 2}


def _valence(el: str, charge: int) -> int:
    return charge if charge > 0 else _USUAL_CHARGE.get(el, 2)


def _anion_charge(smiles: str) -> int:
    return sum(a.GetFormalCharge() for a in shared_mol(smiles).GetAtoms())


def salt_candidates(reactants: Sequence[str], repr: Repr) -> list[str]:
    """The salts (and, for a cation written as its own molecule, the lone counter-anions) the reactants' metals
    can leave, written the way the input writes its metals (see the module docstring)."""
    out: dict[str, None] = {}
    lone_cation = False
    written = _written_ions(reactants, repr)
    for mol in reactants:
        try:
            forms = _metal_forms(mol, repr)
        except ChemAlgebraError:
            continue
        comp = _comp(mol, repr)
        lone_cation |= bool(forms) and len([k for k in comp if k != CHARGE_KEY]) == 1 and comp.get(CHARGE_KEY, 0) > 0
        for el, q, ionic in forms:
            for anion, group in SALT_ANIONS:
                if anion in written:
                    continue  # the reactants' own anion: writing it as a by-product only moves it across
                a = -_anion_charge(anion)
                n_cat, n_an = lcm(q, a) // q, lcm(q, a) // a
                if repr == "formula":
                    if ionic:
                        continue  # a cation written as an ion stays one: the lone counter-anion below leaves
                    total: Counter = Counter({el: n_cat})
                    for k, v in _comp(canonical_smiles(anion), "smiles").items():
                        total[k] += n_an * v
                    total[CHARGE_KEY] = 0
                    out[write_formula(total)] = None
                elif ionic:
                    cation = f"[{el}+{q if q > 1 else ''}]"
                    out[canonical_smiles(".".join([cation] * n_cat + [anion] * n_an))] = None
                elif n_cat == 1 and group:
                    out[canonical_smiles(f"[{el}]" + "".join(f"({group})" for _ in range(n_an)))] = None
    if lone_cation:
        for anion, _ in SALT_ANIONS:
            if anion in written:
                continue
            lone = canonical_smiles(anion)
            out[lone if repr == "smiles" else write_formula(_comp(lone, "smiles"))] = None
    return list(out)


HALIDE_ANIONS = ("[Cl-]", "[Br-]", "[I-]", "[F-]")


# the oxidation states a metal takes as a lone ion in water, for the ion a redox reaction leaves (iron(III) reduced by
# iodide leaves iron(II); dichromate with acid, chromium(III); permanganate, manganese(II))
AQUEOUS_IONS: dict[str, tuple[int, ...]] = {
    "Fe": (2, 3), "Cu": (1, 2), "Sn": (2, 4), "Co": (2, 3), "Mn": (2,), "Cr": (3,), "Ce": (3, 4), "Hg": (1, 2),
    "Tl": (1, 3), "V": (2, 3),
}  # fmt: skip


def ion_candidates(reactants: Sequence[str], repr: Repr) -> list[str]:
    """Ions a reaction written with ions gives off (SMILES only): the halide anion of a halogen the reactants hold
    (a cyanide or an alkoxide displacing a bromide leaves the bromide, its sodium written apart as a reagent), the
    protonated form of each basic reactant (pyridine, triethylamine or imidazole taking up the acid a
    substitution frees leaves as its ammonium ion beside the halide), and the lone ions of a metal the reactants
    hold in its other aqueous oxidation states (:data:`AQUEOUS_IONS`), which a redox reaction leaves."""
    if repr != "smiles":
        return []
    held = set().union(*(_elements(_comp(m, repr)) for m in reactants))
    out: dict[str, None] = {canonical_smiles(a): None for a in HALIDE_ANIONS if a[1:-2] in held}
    for mol in reactants:
        if (base := _protonated(mol)) is not None:
            out[base] = None
    written = {canonical_smiles(m) for m in reactants}
    for el in sorted(held & set(AQUEOUS_IONS)):
        for q in AQUEOUS_IONS[el]:
            ion = canonical_smiles(f"[{el}+{q}]")
            if ion not in written:
                out[ion] = None
    return list(out)


def _protonated(smiles: str) -> str | None:
    """The conjugate acid of a neutral amine or aromatic nitrogen base (the first such nitrogen in atom order), or
    ``None``: amide, sulfonamide, nitro, nitrile, aniline-like and pyrrole-like nitrogens take no proton here."""
    mol = shared_mol(smiles)
    if "." in smiles or any(a.GetFormalCharge() for a in mol.GetAtoms()):
        return None
    for atom in mol.GetAtoms():
        if atom.GetSymbol() != "N" or atom.GetTotalNumHs() and atom.GetIsAromatic():
            continue
        if atom.GetIsAromatic():
            if atom.GetDegree() != 2:
                continue
        else:
            if any(b.GetBondTypeAsDouble() != 1.0 for b in atom.GetBonds()):
                continue
            nbrs = atom.GetNeighbors()
            if any(n.GetIsAromatic() or n.GetSymbol() not in ("C", "H") for n in nbrs):
                continue
            if any(
                b.GetBondTypeAsDouble() == 2.0 and b.GetOtherAtom(n).GetSymbol() in ("O", "S", "N")
                for n in nbrs
                for b in n.GetBonds()
            ):
                continue  # an amide, a urea, an amidine: no basic lone pair
        rw = Chem.RWMol(mol)
        a = rw.GetAtomWithIdx(atom.GetIdx())
        a.SetFormalCharge(1)
        a.SetNumExplicitHs(a.GetTotalNumHs() + 1)
        a.SetNoImplicit(True)
        try:
            Chem.SanitizeMol(rw)
        except Exception:  # noqa: BLE001 - an odd valence: no conjugate acid offered
            return None
        return canonical_smiles(Chem.MolToSmiles(rw))
    return None


def _written_ions(reactants: Sequence[str], repr: Repr) -> set[str]:
    """The catalogue anions (SMILES as in :data:`SALT_ANIONS`) the reactants hold: as a fragment of a SMILES, or,
    for formulas, as a species of the anion's formula."""
    found: set[str] = set()
    for anion, _ in SALT_ANIONS:
        can = canonical_smiles(anion)
        if repr == "smiles":
            if any(can in canonical_smiles(m).split(".") for m in reactants):
                found.add(anion)
        elif any(_comp(m, "formula") == _comp(can, "smiles") for m in reactants):
            found.add(anion)
    return found


def _lone_ions(comps: Mapping[str, Comp]) -> list[str]:
    """Species that are one charged atom written as its own molecule (``[Na+]``, ``[Cl-]``, ``Na+``): the ions
    that may stay as they are (a borohydride or a hydroxide reacts)."""
    return [
        m
        for m, c in comps.items()
        if c.get(CHARGE_KEY, 0) and "." not in m and sum(v for k, v in c.items() if k != CHARGE_KEY) == 1
    ]


@lru_cache(maxsize=4096)
def _skeleton(smiles: str) -> Chem.Mol:
    """Heavy atoms and bonds only: every bond single, no aromaticity, no charge (a fragment's skeleton survives
    the bond changes that free it)."""
    mol = Chem.RWMol(shared_mol(smiles))
    for atom in mol.GetAtoms():
        atom.SetIsAromatic(False)
        atom.SetFormalCharge(0)
    for bond in mol.GetBonds():
        bond.SetBondType(Chem.BondType.SINGLE)
        bond.SetIsAromatic(False)
    out = mol.GetMol()
    out.UpdatePropertyCache(strict=False)
    Chem.FastFindRings(out)
    return out


def _held(mol: str, comp: Comp, reactants: Mapping[str, Comp], repr: Repr) -> bool:
    """Could a reactant give off this by-product as a fragment: its skeleton (SMILES) or its atoms (formulas)?"""
    if repr == "formula":
        return any(all(r.get(k, 0) >= v for k, v in comp.items() if k != CHARGE_KEY) for r in reactants.values())
    query = _skeleton(mol)
    return any(_skeleton(r).HasSubstructMatch(query) for r in reactants)


def _may_close(comps: Sequence[Comp], n_consumed: int) -> bool:
    """A fast floating-point screen before the exact algebra: does the element matrix have exactly one balancing
    up to scale, with every consumed species on one side and every made one on the other? A closure must be the
    one reaction of its species (a set with several independent balancings is ambiguous and its exact search
    costs seconds); the exact check follows for the sets that pass."""
    import numpy as np

    keys = sorted({k for c in comps for k, v in c.items() if v})
    if not keys:
        return False
    mat = np.array([[float(c.get(k, 0)) for c in comps] for k in keys])
    _, sing, vt = np.linalg.svd(mat)
    rank = int((sing > max(mat.shape) * sing[0] * 1e-10).sum()) if len(sing) else 0
    if mat.shape[1] - rank != 1:
        return False
    v = vt[-1] / np.abs(vt[-1]).max()
    w = v * np.array([-1.0] * n_consumed + [1.0] * (len(comps) - n_consumed))
    return bool((w > 1e-9).all() or (w < -1e-9).all())


def _elements(comp: Comp) -> set[str]:
    return {k for k, v in comp.items() if v and k != CHARGE_KEY}


def close_with_byproducts(
    reactants: Sequence[str],
    products: Sequence[str],
    *,
    repr: Repr = "smiles",
    max_added: int = 2,
    accept: Callable[[ByproductClosure], bool] | None = None,
) -> ByproductClosure:
    """The smallest set of real by-products (at most ``max_added``; among sets of that size the one that consumes
    the fewest reactant molecules, then the commonest; with no product given the commonest) and the smallest
    positive integer coefficients that balance ``reactants -> products + by-products`` exactly (every element and
    the charge; every reactant consumed, every product made), or why no such set exists. ``products`` may be empty
    (a combustion closes with CO2 and water). ``accept``: a closure it refuses is passed over (a caller's own
    condition, such as amounts it must keep). Raises :class:`InputError` for an unreadable molecule.

    By-products with carbon are fragments of a reactant (unless no product is given: a combustion): one is tried
    only when a reactant holds its skeleton (SMILES: its heavy atoms and bonds, bond orders aside, so isobutene
    comes from a Boc group) or its atoms (formulas), and sets with fewer by-products of three or more carbons
    come first (a nitro group reduced to an amine gives water, never a succinimide made of the ring's carbons)."""
    if repr not in ("smiles", "formula"):
        raise InputError(f"unknown representation {repr!r} (expected smiles or formula)")
    if not reactants:
        raise InputError("a reaction needs at least one reactant")
    if not 0 <= max_added <= MAX_ADDED:
        raise InputError(f"max_added must be between 0 and {MAX_ADDED}, got {max_added}")
    reactants, products = tuple(reactants), tuple(products)
    r_comp = {m: _comp(m, repr) for m in dict.fromkeys(reactants)}
    p_comp = {m: _comp(m, repr) for m in dict.fromkeys(products)}
    if len(r_comp) != len(reactants) or len(p_comp) != len(products):
        raise InputError("a molecule is written twice on one side")
    supplied = set().union(*(_elements(c) for c in r_comp.values()))
    ions = [*salt_candidates(reactants, repr), *(ion_candidates(reactants, repr) if products else [])]
    pool = (*catalogue(repr, inorganic=not products), *ions)
    pool_comp = {m: _comp(m, repr) for m in dict.fromkeys(pool) if m not in r_comp and m not in p_comp}
    salts = set(ions)  # no skeleton check: a salt or an ion is made of the reactants' own ions and atoms
    usable = [
        m
        for m, c in pool_comp.items()
        if _elements(c) <= supplied and (m in salts or not c.get("C") or not products or _held(m, c, r_comp, repr))
    ]
    rank = {m: i for i, m in enumerate(usable)}
    bulky = {m for m in usable if pool_comp[m].get("C", 0) >= 3}
    kept = [()] + [(m,) for m in _lone_ions(r_comp)]  # spectator ions: none first, then one at a time
    sets = sorted(
        (names for size in range(max_added + 1) for names in itertools.combinations(usable, size)),
        key=lambda s: (len(bulky.intersection(s)), len(s), sum(rank[m] for m in s), s),
    )
    best: tuple[tuple[int, int, int, int], ByproductClosure] | None = None
    level: tuple[int, int] | None = None  # (bulky by-products, set size) of the first set that closes
    through = {m for m in r_comp if m in p_comp}  # written on both sides: passes through, once each
    made_now = {m: c for m, c in p_comp.items() if m not in through}
    tried = 0
    for names in sets:
        here = (len(bulky.intersection(names)), len(names))
        if level is not None and here != level:
            break  # the sets of the first closing level are all weighed: the smallest coefficients win
        for spectators in kept:
            consumed = {m: c for m, c in r_comp.items() if m not in spectators and m not in through}
            supplied_now = set().union(*(_elements(c) for c in consumed.values()))
            made = set().union(*(_elements(c) for c in made_now.values()), *(_elements(pool_comp[m]) for m in names))
            if not consumed or not supplied_now <= made or tried >= SEARCH_LIMIT:  # each consumed element must leave
                continue
            tried += 1
            comps = [*consumed.values(), *made_now.values(), *(pool_comp[m] for m in names)]
            if _neutralises(consumed, names) or not _may_close(comps, len(consumed)):
                continue
            done = complete(consumed, made_now, {m: pool_comp[m] for m in names})
            if done is None:
                continue
            n = len(consumed)
            made_coef = dict(zip(done.species[n:], (abs(v) for v in done.nu[n:]), strict=True))
            coef = dict(zip(done.species[:n], (abs(v) for v in done.nu[:n]), strict=True))
            coefs = tuple(1 if m in through else coef.get(m, 0) for m in reactants)
            coefs += tuple(1 if m in through else made_coef[m] for m in (*products, *names))
            got = ByproductClosure(True, reactants, products, names, coefs, unique=done.unique, spectators=spectators)
            if accept is not None and not accept(got):
                continue
            common = sum(rank[m] for m in names)
            # a reaction whose products are given: the fewest reactant molecules (methanol, not water, leaves a
            # transesterification); a combustion: the commonest by-products (water, not hydrogen)
            key = (len(spectators), sum(coefs[: len(reactants)]), common, sum(coefs))
            if not products:
                key = (len(spectators), common, 0, sum(coefs))
            if best is None or key < best[0]:
                best = (key, got)
            level = here
            break
    if best is not None:
        return best[1]
    return _why_not(r_comp, p_comp, reactants, products, max_added)


# an acid and the base it neutralises: a reaction cannot consume one and give off the other
_NEUTRALISING = (("[H+]", "[OH-]"), ("[OH-]", "[H+]"), ("H+", "HO-"), ("HO-", "H+"))


def _neutralises(consumed: Mapping[str, Comp], names: Sequence[str]) -> bool:
    """Whether a closure would consume an acid and give off the base it neutralises (7 OH- beside 7 H+ consumed
    is 7 water)."""
    return any(a in consumed and b in names for a, b in _NEUTRALISING)


def _why_not(
    r_comp: Mapping[str, Comp],
    p_comp: Mapping[str, Comp],
    reactants: tuple[str, ...],
    products: tuple[str, ...],
    k: int,
) -> ByproductClosure:
    """A failed closure: what one of each reactant leaves beyond one of each product (elements short shown as
    missing), and the balancer's own reason."""
    left: Counter = Counter()
    for c in r_comp.values():
        left.update(c)
    for c in p_comp.values():
        left.subtract(c)
    short = sorted(k2 for k2, v in left.items() if v < 0 and k2 != CHARGE_KEY)
    leftover: str | None = None
    cover = leftover_of_cover(r_comp, p_comp) if p_comp else None
    rest = cover[1] if cover is not None else Counter({k2: v for k2, v in left.items() if v > 0})
    if any(k2 != CHARGE_KEY for k2 in rest):
        try:
            leftover = write_formula(rest)
        except ChemAlgebraError:
            leftover = None
    if p_comp:
        reason = why_unbalanced(r_comp, p_comp, [f"up to {k} real by-products"])
    else:
        reason = f"cannot be balanced with up to {k} real by-products"
    if short:
        reason += f"; one of each product holds more {', '.join(short)} than one of each reactant (a reagent missing?)"
    return ByproductClosure(False, reactants, products, leftover=leftover, reason=reason)
