"""The hook the bag GNN's SMILES decoding calls for product graphs that no input molecule contains.

The role head decides which input molecules are consumed (``reactant_smiles``) and which are context
(``reagent_smiles``); the edit model proposes the main products, and the benchmark's artificial leftover chain
follows exactly from the composition difference (:func:`~gnn_chemalgebra.chem.leftover.leftover_from_composition`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..chem.leftover import leftover_composition, leftover_from_composition
from ..errors import ChemistryError
from .edit_decode import EditCandidate, EditPredictor, load_predictor


def new_products_for_bag(
    reactant_smiles: Sequence[str],
    reagent_smiles: Sequence[str],
    beam: int = 5,
    *,
    checkpoint: str | Path | EditPredictor | None = None,
    drop_input_copies: bool = True,
) -> list[tuple[list[str], float]]:
    """Ranked candidate sets of NEW product molecules with their scores (sum of edit log-probabilities).

    Each set is the predicted main products (canonical SMILES) plus, when the reactants hold atoms beyond
    them, the leftover chain (computed with *all* predicted main products, last in the list). Main products
    that are copies of an input molecule are dropped when ``drop_input_copies`` (the role head already
    accounts for them as products already present). Sets that become identical after that are merged (the
    best score is kept). Every set balances the reactants exactly: the decoder only returns products whose
    atoms the reactants hold and whose difference a valid leftover chain carries (``conserve``). ``[]`` when
    the edit model finds no valid product (e.g. unparsable input).
    """
    return new_products_for_bags(
        [(reactant_smiles, reagent_smiles)], beam, checkpoint=checkpoint, drop_input_copies=drop_input_copies
    )[0]


def new_products_for_bags(
    bags: Sequence[tuple[Sequence[str], Sequence[str]]],
    beam: int = 5,
    *,
    checkpoint: str | Path | EditPredictor | None = None,
    drop_input_copies: bool = True,
    batch_size: int = 32,
    cache: dict[tuple, list[tuple[list[str], float]]] | None = None,
) -> list[list[tuple[list[str], float]]]:
    """:func:`new_products_for_bag` for many ``(reactants, reagents)`` at once (the model runs batched).

    With ``cache`` (a dict the caller keeps), bags already decoded with the same beam are not decoded again:
    the test settings of one variant, and the variants of one representation, share their base reactions."""
    pred = load_predictor(checkpoint)
    keys = [(tuple(r), tuple(g), beam, drop_input_copies) for r, g in bags]
    store = cache if cache is not None else {}
    todo = list(dict.fromkeys(k for k in keys if k not in store))
    if todo:
        cands = pred.predict([(list(k[0]), list(k[1])) for k in todo], beam=beam, batch_size=batch_size)
        for k, cs in zip(todo, cands, strict=True):
            store[k] = _with_leftover(list(k[0]), list(k[1]), cs, beam, drop_input_copies)
    return [store[k] for k in keys]


def _with_leftover(
    reactants: list[str], reagents: list[str], cands: Sequence[EditCandidate], beam: int, drop_input_copies: bool
) -> list[tuple[list[str], float]]:
    inputs = set(reactants) | set(reagents)
    out: list[tuple[list[str], float]] = []
    seen: set[tuple[str, ...]] = set()
    for cand in cands:
        try:
            left = leftover_from_composition(reactants, cand.products)
            if left is None and leftover_composition(reactants, cand.products):
                continue  # no chain RDKit accepts for the difference: the line could not be balanced
        except ChemistryError:
            continue
        new = [p for p in cand.products if not (drop_input_copies and p in inputs)]
        if left is not None:
            new.append(left)
        key = tuple(new)
        if key in seen:
            continue
        seen.add(key)
        out.append((new, cand.score))
        if len(out) >= beam:
            break
    return out
