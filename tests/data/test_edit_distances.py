"""Distance classes of large molecules from a depth-limited search equal those read off RDKit's full matrix."""

from __future__ import annotations

import time

import pytest
import torch
from rdkit import Chem

from gnn_chemalgebra.data.edit_dataset import DIST_FAR, EXACT_DISTANCE_ATOMS, GraphCache, capped_distances

pytestmark = pytest.mark.unit

MOLECULES = [
    "C",
    "CC",
    "[Na+]",
    "c1ccccc1",
    "C1CC2CCC1C2",
    "CC12CCC3C(CCC4=CC(=O)CCC34C)C1CCC2=O",
    "C.CCO",  # two fragments: every cross distance is "further"
    "C" * 150,
    "C1" + "C" * 148 + "C1",  # a 150-ring: distances wrap around
    "c12c3c4c5c1c1c6c7c2c2c8c3c3c9c4c4c%10c5c5c1c1c6c6c%11c7c2c2c7c8c3c3c8c9c4c4c9c%10c5c5c1c1c6c6c%11c2c2c7c3c3c8"
    "c4c4c9c5c1c1c6c2c3c41",  # C60
    "CC(C)(C)" * 40,
]


def _bonds(mol: Chem.Mol) -> tuple[torch.Tensor, torch.Tensor]:
    b = torch.tensor([(x.GetBeginAtomIdx(), x.GetEndAtomIdx()) for x in mol.GetBonds()], dtype=torch.long)
    b = b.view(-1, 2)
    return b[:, 0], b[:, 1]


@pytest.mark.parametrize("smiles", MOLECULES)
def test_capped_distances_are_rdkit_s_up_to_the_last_class(smiles: str) -> None:
    mol = Chem.MolFromSmiles(smiles)
    full = torch.as_tensor(Chem.GetDistanceMatrix(mol), dtype=torch.float)
    got = capped_distances(mol.GetNumAtoms(), *_bonds(mol))
    assert got.dtype == torch.float and got.shape == full.shape
    assert torch.equal(got, full.clamp(max=float(DIST_FAR)))


def test_graph_cache_of_a_large_molecule_has_rdkit_s_classes() -> None:
    smiles = "C1" + "C" * 160 + "C1CC(=O)OCC"
    mol = Chem.MolFromSmiles(smiles)
    assert mol.GetNumAtoms() > EXACT_DISTANCE_ATOMS
    _, dist, _ = GraphCache().get(smiles)
    full = torch.as_tensor(Chem.GetDistanceMatrix(mol), dtype=torch.float)
    assert torch.equal(dist, full.clamp(max=float(DIST_FAR)))


def test_a_2000_atom_chain_is_quick() -> None:
    mol = Chem.MolFromSmiles("C" * 2000)
    start = time.process_time()
    dist = capped_distances(2000, *_bonds(mol))
    assert time.process_time() - start < 2.0  # RDKit's full matrix: about 20 s
    assert float(dist[0, 6]) == 6.0 and float(dist[0, 7]) == float(DIST_FAR) and float(dist[5, 5]) == 0.0
