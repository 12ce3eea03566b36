"""Small rings of a molecule, and the ones a reaction forms: three-membered rings (cyclopropane, epoxide, aziridine,
thiirane ...) are strained, and a product that has one its reactants did not have is a rare reaction outcome
(cyclopropanation, epoxidation, aziridination) that a model writing it is seldom right about.

A ring is named by its atoms' element symbols, sorted (``"CCO"``: an epoxide, ``"CCN"``: an aziridine,
``"CCC"``: a cyclopropane), from RDKit's smallest set of smallest rings. Unparsable SMILES have none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from ..errors import ChemAlgebraError
from .smiles import shared_mol


@lru_cache(maxsize=65536)
def small_rings(smiles: str, size: int = 3) -> tuple[str, ...]:
    """The rings of exactly ``size`` atoms of one molecule, each as its sorted element symbols (sorted; one entry
    per ring, so a bicyclic molecule with two epoxides gives ``("CCO", "CCO")``)."""
    try:
        mol = shared_mol(smiles)
    except ChemAlgebraError:
        return ()
    rings = mol.GetRingInfo().AtomRings()
    return tuple(
        sorted("".join(sorted(mol.GetAtomWithIdx(i).GetSymbol() for i in ring)) for ring in rings if len(ring) == size)
    )


def new_small_rings(product: str, consumed: Iterable[str], size: int = 3) -> list[str]:
    """The ``size``-membered rings of ``product`` beyond those the ``consumed`` molecules had together (a ring kind
    counted as often as the product has more of it than all consumed molecules), sorted."""
    have: Counter = Counter()
    for m in consumed:
        have.update(small_rings(m, size))
    return sorted((Counter(small_rings(product, size)) - have).elements())


__all__ = ["new_small_rings", "small_rings"]
