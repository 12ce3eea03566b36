"""The vectorised SMILES atom graph equals the per-atom one-hot lists it replaced, and the shared caches
(``shared_smiles_graph``, ``chem.smiles.shared_mol``) give what a fresh parse gives.

``_reference_graph`` is the previous implementation of :func:`smiles_graph` (one ``onehot`` list per atom and
per bond, ``torch.tensor`` of the lists), kept here as the specification.
"""

from __future__ import annotations

import pytest
import torch
from rdkit import Chem

from gnn_chemalgebra.chem.smiles import mol_from_smiles, shared_mol
from gnn_chemalgebra.data.edit_dataset import GraphCache
from gnn_chemalgebra.data.featurize import (
    SMILES_EDGE_DIM,
    element_index,
    shared_smiles_graph,
    smiles_graph,
    smiles_graphs,
    warm_smiles_graphs,
)
from gnn_chemalgebra.data.mol_graphs import _BOND, _HYB
from gnn_chemalgebra.data.mol_graphs import onehot as _onehot
from gnn_chemalgebra.errors import ChemistryError

pytestmark = pytest.mark.unit

# charges, radicals, aromatic rings, triple/double bonds, hypervalent S/P, lone atoms and ions, isotopes,
# stereo, dative bonds, a charge beyond the one-hot range, high degree / many hydrogens
SMILES = [
    "C",
    "[H][H]",
    "[Na+]",
    "[Cl-]",
    "O=[N+]([O-])c1cc(F)c(F)cc1F",
    "N#Cc1ccsc1N",
    "C1CCOC1",
    "[CH3]",
    "[CH2]",
    "O=S(=O)(O)O",
    "F[P-](F)(F)(F)(F)F",
    "[13CH4]",
    "C/C=C/C(=O)O",
    "C[C@H](N)C(=O)O",
    "[NH3]->[Cu+2]",
    "[Fe+3]",
    "[O-2]",
    "C[N+](C)(C)C",
    "c1ccc2ccccc2c1",
    "CC(C)(C)[Si](C)(C)Cl",
    "[SiH4]",
    "B1c2ccccc2-c2ccccc21",
    "O",
]


def _reference_graph(smiles: str) -> dict[str, torch.Tensor]:
    mol = mol_from_smiles(smiles)
    z, xs = [], []
    for a in mol.GetAtoms():
        z.append(element_index(a.GetSymbol()))
        hyb = str(a.GetHybridization())
        xs.append(
            _onehot(a.GetDegree(), 6)
            + _onehot(a.GetFormalCharge(), 5, offset=2)
            + _onehot(a.GetTotalNumHs(), 5)
            + [float(a.GetIsAromatic()), float(a.IsInRing())]
            + _onehot(_HYB.index(hyb) if hyb in _HYB else len(_HYB), len(_HYB) + 1)
            + [float(a.GetNumRadicalElectrons() > 0)]
        )
    src, dst, ea = [], [], []
    for b in mol.GetBonds():
        i, j = b.GetBeginAtomIdx(), b.GetEndAtomIdx()
        bt = str(b.GetBondType())
        f = _onehot(_BOND.index(bt) if bt in _BOND else 0, len(_BOND)) + [
            float(b.GetIsConjugated()),
            float(b.IsInRing()),
        ]
        src += [i, j]
        dst += [j, i]
        ea += [f, f]
    return {
        "z": torch.tensor(z, dtype=torch.long),
        "x": torch.tensor(xs, dtype=torch.float),
        "edge_index": torch.tensor([src, dst], dtype=torch.long).view(2, -1),
        "edge_attr": torch.tensor(ea, dtype=torch.float).view(-1, SMILES_EDGE_DIM),
    }


def _assert_same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        assert a[k].shape == b[k].shape, k
        assert torch.equal(a[k], b[k]), k


@pytest.mark.parametrize("smiles", SMILES)
def test_smiles_graph_equals_reference(smiles: str) -> None:
    _assert_same(smiles_graph(smiles), _reference_graph(smiles))


def test_smiles_graphs_in_one_pass_equal_one_by_one() -> None:
    graphs = smiles_graphs(SMILES)
    assert len(graphs) == len(SMILES)
    for smiles, g in zip(SMILES, graphs, strict=True):
        _assert_same(g, _reference_graph(smiles))
        assert all(t.is_contiguous() and t.untyped_storage().nbytes() == t.nbytes for t in g.values())
    assert smiles_graphs([]) == []


def test_warm_smiles_graphs_fills_the_shared_cache_and_skips_refusals() -> None:
    fresh = ["CC(=O)OCC(Cl)Br", "c1ccncc1C#N"]
    warm_smiles_graphs([*fresh, "C foo", fresh[0]])
    for smiles in fresh:
        g = shared_smiles_graph(smiles)
        assert all(g[k] is shared_smiles_graph(smiles)[k] for k in g)
        _assert_same(g, _reference_graph(smiles))
    with pytest.raises(ChemistryError):
        shared_smiles_graph("C foo")


def test_shared_graph_is_computed_once_and_equal() -> None:
    a = shared_smiles_graph("CCO")
    b = shared_smiles_graph("CCO")
    assert a is not b  # a fresh dict each time...
    assert all(a[k] is b[k] for k in a)  # ...around the same tensors
    _assert_same(a, _reference_graph("CCO"))
    with pytest.raises(ChemistryError):
        shared_smiles_graph("C foo")


def test_shared_mol_same_parse_and_refusals_not_cached() -> None:
    m = shared_mol("c1ccccc1O")
    assert shared_mol("c1ccccc1O") is m
    assert Chem.MolToSmiles(m) == Chem.MolToSmiles(Chem.MolFromSmiles("c1ccccc1O"))
    for bad in ("C foo", "C1CC", ""):
        for _ in range(2):
            with pytest.raises(ChemistryError):
                shared_mol(bad)


def test_graph_cache_bond_classes_and_errors() -> None:
    cache = GraphCache()
    g, dist, cls = cache.get("C=CC#N")
    _assert_same(g, _reference_graph("C=CC#N"))
    n = 4
    want = torch.zeros(n * n, dtype=torch.long)  # NONE = 0
    for i, j, c in ((0, 1, 2), (1, 2, 1), (2, 3, 3)):
        want[i * n + j] = want[j * n + i] = c
    assert torch.equal(cls, want)
    assert dist.shape == (n, n) and float(dist[0, 3]) == 3.0
    # RDKit reads "C foo" (a name after the SMILES); the strict reader refuses it, as before
    with pytest.raises(ChemistryError):
        cache.get("C foo")
    from gnn_chemalgebra.chem.edits import EditLabelError

    with pytest.raises(EditLabelError):
        cache.get("C1CC")


def test_smiles_featurizer_caches_graphs_and_composition_rows_as_one_by_one() -> None:
    from gnn_chemalgebra.chem.molecule import composition
    from gnn_chemalgebra.data.featurize import Featurizer, comp_vector, comp_vectors

    comps = [composition(s, "smiles") for s in SMILES]
    for row, comp in zip(comp_vectors(comps), comps, strict=True):
        assert row.dtype == torch.float32 and torch.equal(row, comp_vector(comp))
    assert comp_vectors([]) == []
    batch, single = Featurizer("smiles"), Featurizer("smiles")
    batch.cache_molecules([*SMILES, SMILES[0]])
    for smiles in SMILES:
        g, row = batch.molecule(smiles)
        g1, row1 = single.molecule(smiles)
        _assert_same(g, g1)
        assert torch.equal(row, row1)
    with pytest.raises(ChemistryError):
        Featurizer("smiles").cache_molecules(["CCO", "C foo"])
