"""Training-time rewrites of a line that keep its chemistry: bags without their reagents, salts and ions.

USPTO records carry the reagents, solvents and catalysts their patent used, and the model learns to lean on them:
a bag written without its base or solvent loses the chemistry. These rewrites make a training line say the same
reaction another way, each with a probability, seeded by the caller's ``random.Random``:

* :func:`drop_unconsumed`: each molecule the reaction does not consume (``nu`` 0: a reagent, solvent or catalyst
  by the line's roles) leaves both sides;
* :func:`swap_salts`: a cation and an anion that the reaction does not consume, written as separate ions in equal
  charge amounts (``[Na+]`` and ``[OH-]``), become their neutral salt (``O[Na]``), and a salt written as one
  molecule with a metal bonded to O, N, S or a halogen becomes its ions (RDKit's ``MetalDisconnector``). Formulas:
  ions become salts (``Na+`` and ``HO-`` -> ``HNaO``); a salt formula has no structure to split, so it stays.

Only unconsumed molecules change, so ``nu`` and the extent stay as they are; every rewrite is checked with
``target = source + xi * nu`` (:func:`consistent`). The benchmark's lines hold no reaction SMILES (reactants
``>`` reagents ``>`` products), so there is no arrow to move reagents across in this training path.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache, reduce
from math import gcd

from rdkit import Chem
from rdkit.Chem.MolStandardize import rdMolStandardize

from ..algebra.roles import REAGENT
from ..chem.bag import Term, bag_totals
from ..chem.composition import CHARGE_KEY
from ..chem.formula import write_formula
from ..chem.molecule import composition

# metals whose salts patents and users write either way (ions or one molecule)
SALT_METALS = frozenset({"Li", "Na", "K", "Rb", "Cs", "Mg", "Ca", "Sr", "Ba"})
ANION_ATOMS = frozenset({"O", "N", "S", "F", "Cl", "Br", "I"})  # the atoms a salt's metal bonds to


@dataclass(frozen=True)
class Line:
    """One training line: its terms with their roles, the base reaction ``nu`` and the extent ``xi``."""

    src: tuple[Term, ...]
    src_roles: tuple[str, ...]
    tgt: tuple[Term, ...]
    tgt_roles: tuple[str, ...]
    nu: Mapping[str, int]
    xi: int


def consistent(line: Line) -> bool:
    """``totals(target) == totals(source) + xi * nu`` for every molecule string."""
    s, t = bag_totals(list(line.src)), bag_totals(list(line.tgt))
    return all(t.get(m, 0) == s.get(m, 0) + line.xi * line.nu.get(m, 0) for m in {*s, *t, *line.nu})


def unconsumed(line: Line) -> list[str]:
    """Molecules written only as reagents and not in ``nu``, in source order."""
    roles: dict[str, set[str]] = {}
    for t, r in zip((*line.src, *line.tgt), (*line.src_roles, *line.tgt_roles), strict=True):
        roles.setdefault(t.mol, set()).add(r)
    return [m for m in dict.fromkeys(t.mol for t in line.src) if roles[m] == {REAGENT} and not line.nu.get(m)]


def _without(line: Line, gone: set[str]) -> Line:
    src = [(t, r) for t, r in zip(line.src, line.src_roles, strict=True) if t.mol not in gone]
    tgt = [(t, r) for t, r in zip(line.tgt, line.tgt_roles, strict=True) if t.mol not in gone]
    return replace(
        line,
        src=tuple(t for t, _ in src),
        src_roles=tuple(r for _, r in src),
        tgt=tuple(t for t, _ in tgt),
        tgt_roles=tuple(r for _, r in tgt),
    )


def drop_unconsumed(line: Line, p: float, rng: random.Random) -> Line:
    """Each unconsumed molecule leaves both sides with probability ``p``."""
    gone = {m for m in unconsumed(line) if rng.random() < p}
    return _without(line, gone) if gone else line


# --------------------------------------------------------------------------- salts and ions
def _charge(mol: str, repr: str) -> int:
    return int(composition(mol, repr).get(CHARGE_KEY, 0))


def _is_metal_cation(mol: str, repr: str) -> bool:
    comp = composition(mol, repr)
    elements = [k for k in comp if k != CHARGE_KEY]
    return comp.get(CHARGE_KEY, 0) > 0 and len(elements) == 1 and elements[0] in SALT_METALS and comp[elements[0]] == 1


@lru_cache(maxsize=4096)
def join_smiles(cation: str, anion: str, n_cation: int, n_anion: int) -> str | None:
    """The neutral salt of ``n_cation`` cations and ``n_anion`` anions, each metal bonded to a charged O, N, S or
    halogen atom of the anions; ``None`` when the charges do not pair up or RDKit rejects the result."""
    mols = [Chem.MolFromSmiles(cation)] * n_cation + [Chem.MolFromSmiles(anion)] * n_anion
    if any(m is None for m in mols):
        return None
    rw = Chem.RWMol(reduce(Chem.CombineMols, mols))
    metals = [a for a in rw.GetAtoms() if a.GetFormalCharge() > 0 and a.GetSymbol() in SALT_METALS]
    sites = [a for a in rw.GetAtoms() if a.GetFormalCharge() < 0 and a.GetSymbol() in ANION_ATOMS]
    for metal in metals:
        while metal.GetFormalCharge() > 0:
            site = next((s for s in sites if s.GetFormalCharge() < 0), None)
            if site is None or rw.GetBondBetweenAtoms(metal.GetIdx(), site.GetIdx()) is not None:
                return None
            rw.AddBond(metal.GetIdx(), site.GetIdx(), Chem.BondType.SINGLE)
            metal.SetFormalCharge(metal.GetFormalCharge() - 1)
            site.SetFormalCharge(site.GetFormalCharge() + 1)
    if any(a.GetFormalCharge() for a in rw.GetAtoms()):
        return None
    try:
        Chem.SanitizeMol(rw)
        return Chem.MolToSmiles(rw)
    except Exception:  # noqa: BLE001 - RDKit rejects this salt: the ions stay
        return None


def _join(cation: str, anion: str, n_cation: int, n_anion: int, repr: str) -> str | None:
    if repr == "smiles":
        return join_smiles(cation, anion, n_cation, n_anion)
    comp: Counter = Counter()
    for mol, n in ((cation, n_cation), (anion, n_anion)):
        for k, v in composition(mol, repr).items():
            comp[k] += v * n
    if comp.pop(CHARGE_KEY, 0):
        return None
    return write_formula(comp)


@lru_cache(maxsize=4096)
def split_salt(smiles: str) -> tuple[tuple[str, int], ...] | None:
    """A salt written as one molecule (a metal of :data:`SALT_METALS` bonded to O, N, S or a halogen) as its
    ions with their counts (``O=C(O[K])O[K]`` -> ``(("O=C([O-])[O-]", 1), ("[K+]", 2))``); else ``None``."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None or not any(
        {b.GetBeginAtom().GetSymbol(), b.GetEndAtom().GetSymbol()} & SALT_METALS
        and {b.GetBeginAtom().GetSymbol(), b.GetEndAtom().GetSymbol()} & ANION_ATOMS
        for b in mol.GetBonds()
    ):
        return None
    parts = Chem.MolToSmiles(rdMolStandardize.MetalDisconnector().Disconnect(mol)).split(".")
    if len(parts) < 2:
        return None
    counts: dict[str, int] = {}
    for p in parts:
        counts[p] = counts.get(p, 0) + 1
    return tuple(sorted(counts.items()))


def ion_pairs(line: Line, repr: str) -> list[tuple[str, str, int, int]]:
    """Unconsumed (cation, anion, cations per salt, anions per salt) written once on each side in amounts that
    pair up exactly, each ion in at most one pair."""
    once = [m for m in unconsumed(line) if sum(t.mol == m for t in line.src) == 1]
    src = bag_totals(list(line.src))
    cations = [m for m in once if _is_metal_cation(m, repr)]
    anions = [m for m in once if _charge(m, repr) < 0]
    used: set[str] = set()
    out = []
    for c in cations:
        for a in anions:
            if a in used:
                continue
            qc, qa = _charge(c, repr), -_charge(a, repr)
            g = gcd(qc, qa)
            n_c, n_a = qa // g, qc // g
            if src[c] % n_c == 0 and src[a] % n_a == 0 and src[c] // n_c == src[a] // n_a:
                out.append((c, a, n_c, n_a))
                used.add(a)
                break
    return out


def _replace_terms(line: Line, old: Mapping[str, list[tuple[str, int]]]) -> Line:
    """Each term of a molecule in ``old`` becomes the listed molecules with its coefficient times their counts
    (the first replacing term takes the old term's place; a pair's second ion is in ``old`` with ``[]``)."""

    def side(terms: tuple[Term, ...], roles: tuple[str, ...]) -> tuple[tuple[Term, ...], tuple[str, ...]]:
        out: list[tuple[Term, str]] = []
        for t, r in zip(terms, roles, strict=True):
            if t.mol not in old:
                out.append((t, r))
                continue
            out += [(Term(t.coef * n, m), r) for m, n in old[t.mol]]
        return tuple(t for t, _ in out), tuple(r for _, r in out)

    src, src_roles = side(line.src, line.src_roles)
    tgt, tgt_roles = side(line.tgt, line.tgt_roles)
    return replace(line, src=src, src_roles=src_roles, tgt=tgt, tgt_roles=tgt_roles)


def swap_salts(line: Line, p: float, rng: random.Random, repr: str) -> Line:
    """Each unconsumed ion pair becomes its salt, and (SMILES) each unconsumed salt its ions, with probability
    ``p`` each (see the module docstring)."""
    old: dict[str, list[tuple[str, int]]] = {}
    for c, a, n_c, n_a in ion_pairs(line, repr):
        if rng.random() >= p or min(n_c, n_a) != 1:
            continue  # both above 1 (Ca3(PO4)2): neither ion's coefficient is the number of salts
        salt = _join(c, a, n_c, n_a, repr)
        if salt is None:
            continue
        keep, gone = (c, a) if n_c == 1 else (a, c)  # the term whose coefficient is the number of salts
        old[keep], old[gone] = [(salt, 1)], []
    if repr == "smiles":
        for m in unconsumed(line):
            ions = split_salt(m) if m not in old else None
            if ions and rng.random() < p:
                old[m] = list(ions)
    return _replace_terms(line, old) if old else line
