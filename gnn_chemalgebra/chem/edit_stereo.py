"""Stereo of edited graphs: tetrahedral and double-bond parities relative to global atom indices (the label
convention of :mod:`.edits`), set on an edited graph and perceived again before it is written."""

from __future__ import annotations

from collections.abc import Sequence

from rdkit import Chem

from .edit_labels import DIR_NONE, STEREO_E, STEREO_Z, EditLabels


def permutation_parity(seq: Sequence[int]) -> int:
    """+1 for an even permutation of ``sorted(seq)``, -1 for an odd one."""
    seq = list(seq)
    sign = 1
    for i in range(len(seq)):
        for j in range(i + 1, len(seq)):
            if seq[i] > seq[j]:
                sign = -sign
    return sign


def tetra_parity(atom: Chem.Atom, index_of: dict[int, int]) -> int:
    """Parity of ``atom``'s chiral tag relative to neighbours sorted by global index (0 if not chiral).

    RDKit's tag refers to the atom's bond order with an implicit H counted first; permuting the neighbour
    list oddly flips it, so the parity is tag * permutation sign.
    """
    tag = atom.GetChiralTag()
    if tag not in (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW):
        return 0
    base = 1 if tag == Chem.ChiralType.CHI_TETRAHEDRAL_CCW else -1
    nbrs = [index_of[b.GetOtherAtomIdx(atom.GetIdx())] for b in atom.GetBonds()]
    return base * permutation_parity(nbrs)


def set_tetra_parity(atom: Chem.Atom, parity: int, index_of: dict[int, int]) -> None:
    nbrs = [index_of[b.GetOtherAtomIdx(atom.GetIdx())] for b in atom.GetBonds()]
    p = parity * permutation_parity(nbrs)
    atom.SetChiralTag(Chem.ChiralType.CHI_TETRAHEDRAL_CCW if p > 0 else Chem.ChiralType.CHI_TETRAHEDRAL_CW)


def double_bond_parity(bond: Chem.Bond, index_of: dict[int, int]) -> int:
    """+1 if the lowest-global-index neighbours of the two ends are cis, -1 if trans, 0 if unspecified.

    RDKit's E/Z (and CIS/TRANS) refer to the bond's two stereo atoms; swapping one reference neighbour
    for the other flips the relation.
    """
    st = bond.GetStereo()
    if st in (Chem.BondStereo.STEREOZ, Chem.BondStereo.STEREOCIS):
        sign = 1
    elif st in (Chem.BondStereo.STEREOE, Chem.BondStereo.STEREOTRANS):
        sign = -1
    else:
        return 0
    ref = list(bond.GetStereoAtoms())
    if len(ref) != 2:
        return 0
    for end, r in ((bond.GetBeginAtom(), ref[0]), (bond.GetEndAtom(), ref[1])):
        other = bond.GetOtherAtomIdx(end.GetIdx())
        nbrs = [n.GetIdx() for n in end.GetNeighbors() if n.GetIdx() != other]
        if not nbrs:
            return 0
        if min(nbrs, key=lambda x: index_of[x]) != r:
            sign = -sign
    return sign


def apply_stereo(mol: Chem.RWMol, labels: EditLabels, touched: set[int], *, use_labels: bool) -> None:
    """Clear stereo that the edits made meaningless (atoms and double bonds at an edited pair), then set
    the labelled parities (0 clears)."""
    index_of = {i: i for i in range(mol.GetNumAtoms())}
    for g in touched:
        atom = mol.GetAtomWithIdx(g)
        atom.SetChiralTag(Chem.ChiralType.CHI_UNSPECIFIED)
        for b in atom.GetBonds():
            if b.GetBondType() == Chem.BondType.DOUBLE:
                b.SetStereo(Chem.BondStereo.STEREONONE)
    if not use_labels:
        return
    for g, p in labels.chiral.items():
        atom = mol.GetAtomWithIdx(g)
        if p == 0:
            atom.SetChiralTag(Chem.ChiralType.CHI_UNSPECIFIED)
        else:
            set_tetra_parity(atom, p, index_of)
    for (i, j), p in labels.bond_stereo.items():
        b = mol.GetBondBetweenAtoms(i, j)
        if b is None or b.GetBondType() != Chem.BondType.DOUBLE:
            continue
        b.SetStereo(Chem.BondStereo.STEREONONE)
        ends = []
        for x, other in ((b.GetBeginAtomIdx(), b.GetEndAtomIdx()), (b.GetEndAtomIdx(), b.GetBeginAtomIdx())):
            nbrs = [n.GetIdx() for n in mol.GetAtomWithIdx(x).GetNeighbors() if n.GetIdx() != other]
            if not nbrs:
                break
            ends.append(min(nbrs))
        if p != 0 and len(ends) == 2:
            b.SetStereoAtoms(ends[0], ends[1])
            b.SetStereo(Chem.BondStereo.STEREOCIS if p > 0 else Chem.BondStereo.STEREOTRANS)


def perceive_stereo(mol: Chem.Mol, pairs: Sequence[tuple[int, int]] | None = None) -> None:
    """Make RDKit write the edited double-bond stereo.

    The legacy perception (RDKit's default) reads double-bond stereo from the single-bond directions that
    the reactant SMILES left behind, which the edits invalidate: turn every E/Z into CIS/TRANS (valid for
    the stereo atoms, which are CIP-ranked), drop all directions, regenerate them, then perceive.

    ``pairs``: the bonds (atom pairs) that can carry E/Z or a direction, :attr:`ReactantGraph.stereo_pairs`
    for a graph edited by :func:`_edited_mol` (its new bonds have neither, it only sets CIS/TRANS/none, and
    sanitisation sets neither); the other bonds are left as they are, which the scan of every bond would
    do too. ``None``: every bond."""
    if pairs is None:  # by index: RDKit's Python bond iterator costs more than the work
        bonds = map(mol.GetBondWithIdx, range(mol.GetNumBonds()))
    else:
        bonds = (mol.GetBondBetweenAtoms(i, j) for i, j in pairs)
    for b in bonds:
        if b is None:  # removed by the edits
            continue
        st = b.GetStereo()
        if st == STEREO_E:
            b.SetStereo(Chem.BondStereo.STEREOTRANS)
        elif st == STEREO_Z:
            b.SetStereo(Chem.BondStereo.STEREOCIS)
        if b.GetBondDir() != DIR_NONE:
            b.SetBondDir(DIR_NONE)
    Chem.SetDoubleBondNeighborDirections(mol)
    Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
