"""The bond-edit decoder's entry (the top of three one-way modules: this -> :mod:`.edit_beam` ->
:mod:`.edit_repair`): loading a checkpoint (or an ensemble, ``a.pt,b.pt``) as an
:class:`EditPredictor`, the default checkpoint (``$GNNCA_EDIT_CHECKPOINT``, the bundled one, a local run),
reactions batched for one pass of the model, and the products of reactions through :mod:`.edit_beam`.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..chem.edits import EditLabelError
from ..data.edit_dataset import (
    EDIT_FEATURIZER_VERSION,
    GraphCache,
    _pair_attrs,
    reaction_graph,
)
from ..errors import ChemAlgebraError, InputError
from ..io import checkpoint_paths
from ..models.edit_model import EditEnsemble, EditModel, build_edit_model
from .edit_beam import EditBeam, EditCandidate

BUNDLED_CHECKPOINT = Path(__file__).resolve().parents[1] / "checkpoints" / "edit_default.pt"  # package data
DEFAULT_CHECKPOINT = Path("runs/edits_cpu/best.pt")  # a local training run (configs/edits_cpu.yaml)
CHECKPOINT_ENV = "GNNCA_EDIT_CHECKPOINT"


class EditPredictor:
    """A trained :class:`EditModel` with its featurisation; batches reactions through the model, then decodes."""

    def __init__(self, model: EditModel | EditEnsemble, device: str | torch.device = "cpu") -> None:
        self.model = model.to(device).eval()
        self.device = torch.device(device)
        self.cache = GraphCache()

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | torch.device = "cpu") -> EditPredictor:
        """One checkpoint, or several joined by commas (``a.pt,b.pt``): an ensemble whose heads' log-probabilities
        are averaged (:class:`~gnn_chemalgebra.models.edit_model.EditEnsemble`)."""
        models = [cls._load_model(p, device) for p in checkpoint_paths(path)]
        return cls(models[0] if len(models) == 1 else EditEnsemble(models), device)

    @classmethod
    def from_loaded(
        cls, ck: dict[str, Any], path: str, device: str | torch.device = "cpu", options: Any = None
    ) -> EditPredictor:
        """The registry's predictor factory for ``edits``: :meth:`from_checkpoint` of ``path`` (the first file's
        entries ``ck`` are read again, on ``device``); ``options`` (line-predictor options) do not apply."""
        return cls.from_checkpoint(path, device)

    @staticmethod
    def _load_model(path: str | Path, device: str | torch.device) -> EditModel:
        from ..checkpoint import load_checkpoint

        return load_network(load_checkpoint(path, map_location=device), path, device)

    def predict(
        self,
        reactions: Sequence[tuple[Sequence[str], Sequence[str]]],
        beam: int = 5,
        batch_size: int = 32,
        **decode_kw: Any,
    ) -> list[list[EditCandidate]]:
        """Ranked candidates per ``(reactants, reagents)``; an unparsable or empty reaction gets ``[]``."""
        return [list(b) for b in self.beams(reactions, beam, batch_size, **decode_kw)]

    @torch.no_grad()
    def beams(
        self,
        reactions: Sequence[tuple[Sequence[str], Sequence[str]]],
        beam: int = 5,
        batch_size: int = 32,
        **decode_kw: Any,
    ) -> list[EditBeam | tuple[()]]:
        """:meth:`predict` with the network run now (batched) and each reaction's search left to run lazily
        (:class:`EditBeam`); ``()`` for an unparsable or empty reaction."""
        results: list[EditBeam | tuple[()]] = [() for _ in reactions]
        for start in range(0, len(reactions), batch_size):
            items = []
            for k in range(start, min(start + batch_size, len(reactions))):
                reactants, reagents = list(reactions[k][0]), list(reactions[k][1])
                try:
                    graphs = [self.cache.get(s) for s in (*reactants, *reagents)]
                except (EditLabelError, ChemAlgebraError, ValueError, RuntimeError):
                    continue
                n_atoms = [int(g[0]["z"].numel()) for g in graphs[: len(reactants)]]
                if sum(n_atoms) < 1:
                    continue
                items.append((k, reactants, n_atoms, graphs))
            if not items:
                continue
            batch, views = _collate_reactions([(n_atoms, graphs) for _, _, n_atoms, graphs in items])
            out = self.model(batch.to(self.device))
            pairs = out["pair"].cpu().split([int(v.pair_cur.numel()) for v in views])
            atoms = {a: out[a].cpu().split(batch.nodes) for a in ("h", "q", "prod")}
            for m, ((k, reactants, n_atoms, _), view) in enumerate(zip(items, views, strict=True)):
                one = {"pair": pairs[m], **{a: atoms[a][m] for a in atoms}}
                results[k] = EditBeam(reactants, n_atoms, one, view, beam, **decode_kw)
        return results


def load_network(ck: dict[str, Any], path: str | Path, device: str | torch.device = "cpu") -> EditModel:
    """The edit model of loaded checkpoint entries, in eval mode (the registry's loader for ``edits``)."""
    meta = ck.get("meta", {})
    hp = meta.get("hparams")
    if hp is None or meta.get("kind") != "edits":
        raise InputError("not an edit-model checkpoint", path=str(path))
    if int(meta.get("featurizer_version", -1)) != EDIT_FEATURIZER_VERSION:
        raise InputError("edit checkpoint was written by another featuriser version", path=str(path))
    probe = reaction_graph(["CC"], [])
    if probe.x.size(1) != hp["x_dim"] or probe.edge_attr.size(1) != hp["edge_dim"]:
        raise InputError("atom features changed since this edit checkpoint was trained", path=str(path))
    model = build_edit_model(hp)
    model.load_state_dict(ck["model"])
    return model.to(device).eval()


@dataclass
class ReactionPairs:
    """What the beam reads of one reaction's graph (:class:`EditData` has the same fields): reactant atoms,
    candidate pairs ``(i, j)``, ``i < j``, in reactant atom numbering, and their current bond class."""

    n_react: int
    pair_index: torch.Tensor
    pair_cur: torch.Tensor


@dataclass
class ReactionBatch:
    """The fields of ``Batch.from_data_list([reaction_graph(...), ...])`` that :class:`EditModel` reads."""

    z: torch.Tensor
    x: torch.Tensor
    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    batch: torch.Tensor
    pair_index: torch.Tensor
    pair_cur: torch.Tensor
    pair_dist: torch.Tensor
    num_graphs: int
    nodes: list[int]  # atoms per reaction (reactants, then reagents)

    def to(self, device: torch.device) -> ReactionBatch:
        if device.type == "cpu":
            return self
        moved = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in vars(self).items()}
        return ReactionBatch(**moved)


_TRIU: dict[int, torch.Tensor] = {}
_TRIU_CACHED = 256  # sizes kept (0.5 MB at 256, 45 MB if every size up to it is met); larger ones are not


def _triu(n: int) -> torch.Tensor:
    """``torch.triu_indices(n, n, offset=1)``, shared per ``n`` up to :data:`_TRIU_CACHED` (read only)."""
    hit = _TRIU.get(n)
    if hit is None:
        hit = torch.triu_indices(n, n, offset=1)
        if n <= _TRIU_CACHED:
            _TRIU[n] = hit
    return hit


def _collate_reactions(
    reactions: Sequence[tuple[Sequence[int], Sequence[tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]]]],
) -> tuple[ReactionBatch, list[ReactionPairs]]:
    """The model's batch of several reactions, each given by its reactant atom counts and the
    :meth:`GraphCache.get` entries of its reactants then reagents, built at once over the whole batch: every
    field equal to collating :func:`reaction_graph` of each (every reactant pair; the same integer offsets and
    table look-ups, :func:`_pair_attrs` over all reactions' pairs together), plus each reaction's pairs."""
    zs, xs, eis, eas = [], [], [], []
    mol_atoms, mol_edges, mol_reagent = [], [], []
    dists, classes, sizes, mol_of, local = [], [], [], [], []
    nodes, n_react, node_start, react_start = [], [], [], []
    n_nodes = n_reacting = 0
    for atoms, graphs in reactions:
        node_start.append(n_nodes)
        react_start.append(n_reacting)
        for k, (g, dist, cls) in enumerate(graphs):
            n = int(g["z"].numel())
            zs.append(g["z"])
            xs.append(g["x"])
            eis.append(g["edge_index"])
            eas.append(g["edge_attr"])
            mol_atoms.append(n)
            mol_edges.append(int(g["edge_index"].size(1)))
            reagent = k >= len(atoms)
            mol_reagent.append(float(reagent))
            if not reagent:
                mol_of += [len(sizes)] * n
                local += range(n)
                dists.append(dist)
                classes.append(cls)
                sizes.append(n)
            n_nodes += n
        nodes.append(n_nodes - node_start[-1])
        n_react.append(sum(atoms))
        n_reacting += n_react[-1]
    atoms_t = torch.tensor(mol_atoms, dtype=torch.long)
    first = torch.cumsum(atoms_t, 0) - atoms_t  # first atom of each molecule in the batch
    flags = torch.repeat_interleave(torch.tensor(mol_reagent), atoms_t)
    tri = [_triu(n) for n in n_react]
    n_pairs = torch.tensor([int(t.size(1)) for t in tri], dtype=torch.long)
    pair_local = torch.cat(tri, dim=1)
    react_pairs = pair_local + torch.repeat_interleave(torch.tensor(react_start, dtype=torch.long), n_pairs)
    cur, dcls = _pair_attrs(react_pairs[0], react_pairs[1], mol_of, local, dists, classes, sizes)
    batch = ReactionBatch(
        z=torch.cat(zs),
        x=torch.cat([torch.cat(xs), flags.unsqueeze(1)], dim=1),
        edge_index=torch.cat(eis, dim=1) + torch.repeat_interleave(first, torch.tensor(mol_edges, dtype=torch.long)),
        edge_attr=torch.cat(eas),
        batch=torch.repeat_interleave(torch.arange(len(reactions)), torch.tensor(nodes, dtype=torch.long)),
        pair_index=pair_local + torch.repeat_interleave(torch.tensor(node_start, dtype=torch.long), n_pairs),
        pair_cur=cur,
        pair_dist=dcls,
        num_graphs=len(reactions),
        nodes=nodes,
    )
    counts = n_pairs.tolist()
    views = [ReactionPairs(n, t, c) for n, t, c in zip(n_react, tri, cur.split(counts), strict=True)]
    return batch, views


def default_checkpoint() -> Path:
    """``$GNNCA_EDIT_CHECKPOINT``, else the bundled model, else the local training run."""
    env = os.environ.get(CHECKPOINT_ENV)
    if env:
        return Path(env)
    return BUNDLED_CHECKPOINT if BUNDLED_CHECKPOINT.exists() else DEFAULT_CHECKPOINT


@functools.lru_cache(maxsize=4)
def _cached_predictor(path: str) -> EditPredictor:
    return EditPredictor.from_checkpoint(path)


def load_predictor(checkpoint: str | Path | EditPredictor | None = None) -> EditPredictor:
    """The predictor of ``checkpoint`` (a path, an already loaded predictor, or the default), loaded once."""
    if isinstance(checkpoint, EditPredictor):
        return checkpoint
    return _cached_predictor(str(Path(checkpoint) if checkpoint is not None else default_checkpoint()))


def predict_products(
    reactants: list[str],
    reagents: list[str],
    beam: int = 5,
    checkpoint: str | Path | EditPredictor | None = None,
) -> list[list[str]]:
    """Ranked main-product sets (canonical SMILES, sorted within a set) of one reaction, best first.

    Main products only: the artificial leftover chain is exact given them
    (:func:`~gnn_chemalgebra.chem.leftover.leftover_from_composition`). Default checkpoint: ``$GNNCA_EDIT_CHECKPOINT``
    or ``runs/edits_cpu/best.pt``.
    """
    pred = load_predictor(checkpoint)
    return [c.products for c in pred.predict([(reactants, reagents)], beam=beam)[0]]


def candidate_logprob_gap(cands: Sequence[EditCandidate]) -> float:
    """Score margin between the best two candidates (``inf`` with fewer than two): a confidence signal."""
    if len(cands) < 2:
        return math.inf
    return cands[0].score - cands[1].score
