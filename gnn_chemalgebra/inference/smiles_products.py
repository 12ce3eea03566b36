"""The hook the bag GNN's SMILES decoding calls for product graphs that no input molecule contains.

The role head decides which input molecules are consumed (``reactant_smiles``) and which are context
(``reagent_smiles``); the edit model proposes the main products, and the benchmark's artificial leftover chain
follows exactly from the composition difference (:func:`~gnn_chemalgebra.chem.leftover.leftover_from_composition`).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..chem.leftover import leftover_composition, leftover_from_composition
from ..errors import ChemistryError
from .edit_beam import EditBeam, EditCandidate
from .edit_decode import EditPredictor, load_predictor


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
    cache: dict[tuple, ProductSets] | None = None,
) -> list[list[tuple[list[str], float]]]:
    """:func:`new_products_for_bag` for many ``(reactants, reagents)`` at once (the model runs batched).

    With ``cache`` (a dict the caller keeps), bags already decoded with the same beam are not decoded again:
    the test settings of one variant, and the variants of one representation, share their base reactions."""
    sets = product_sets_for_bags(
        bags, beam, checkpoint=checkpoint, drop_input_copies=drop_input_copies, batch_size=batch_size, cache=cache
    )
    return [list(ps) for ps in sets]


def product_sets_for_bags(
    bags: Sequence[tuple[Sequence[str], Sequence[str]]],
    beam: int = 5,
    *,
    checkpoint: str | Path | EditPredictor | None = None,
    drop_input_copies: bool = True,
    batch_size: int = 32,
    cache: dict[tuple, ProductSets] | None = None,
) -> list[ProductSets]:
    """:func:`new_products_for_bags` with the edit model run now (batched) and each bag's sets found lazily
    (:class:`ProductSets`): a caller that needs only the best sets stops early and skips the rest's RDKit work."""
    pred = load_predictor(checkpoint)
    keys = [(tuple(r), tuple(g), beam, drop_input_copies) for r, g in bags]
    store = cache if cache is not None else {}
    todo = list(dict.fromkeys(k for k in keys if k not in store))
    if todo:
        beams = pred.beams([(list(k[0]), list(k[1])) for k in todo], beam=beam, batch_size=batch_size)
        for k, b in zip(todo, beams, strict=True):
            store[k] = ProductSets(list(k[0]), list(k[1]), b, beam, drop_input_copies)
    return [store[k] for k in keys]


LIVE_SEARCHES = 256  # searches kept whole; older unfinished ones are parked (see EditBeam.park)
_live: OrderedDict[int, EditBeam] = OrderedDict()


def _touch(beam: EditBeam) -> None:
    """Mark a search as in use; park the least recently used ones beyond :data:`LIVE_SEARCHES` (a cache of many
    bags then holds a few KB per unfinished search, not its whole state)."""
    _live[id(beam)] = beam
    _live.move_to_end(id(beam))
    while len(_live) > LIVE_SEARCHES:
        _live.popitem(last=False)[1].park()


class ProductSets:
    """The ranked new-product sets of one bag (:func:`new_products_for_bag`'s list), found on demand: iterating
    yields ``(products, score)`` in the list's order; :meth:`bound` caps the score of every set not yet yielded."""

    def __init__(
        self,
        reactants: list[str],
        reagents: list[str],
        cands: Iterable[EditCandidate],
        beam: int,
        drop_input_copies: bool,
    ) -> None:
        self._source = cands
        self._cands = iter(cands)
        self._inputs = set(reactants) | set(reagents)
        self._reactants = reactants
        self._beam, self._drop = beam, drop_input_copies
        self._sets: list[tuple[list[str], float]] = []
        self._seen: set[tuple[str, ...]] = set()
        self._done = False
        self._taken = 0

    def __iter__(self) -> Iterator[tuple[list[str], float]]:
        k = 0
        while k < len(self._sets) or self._next():
            yield self._sets[k]
            k += 1

    def bound(self, after: int = 0) -> float:
        """Upper bound on the score of every set from position ``after`` on (``-inf`` when there is none left).

        ``after`` is how many sets the caller has iterated: the sets are shared through the decoder's cache, so
        sets another pass already found still lie ahead of this caller and count (without it a second pass over
        the same bag would stop earlier than a fresh one and could write another line)."""
        found = max((score for _, score in self._sets[after:]), default=-math.inf)
        if self._done or len(self._sets) >= self._beam:
            return found
        if not isinstance(self._source, EditBeam):
            return math.inf  # a plain candidate list: no bound known
        _touch(self._source)
        ahead = self._source.results[self._taken :]  # found by the search, not yet taken here
        return max([found, self._source.bound(), *(c.score for c in ahead)])

    def _next(self) -> bool:
        if isinstance(self._source, EditBeam) and not self._done:
            _touch(self._source)
        while not self._done and len(self._sets) < self._beam:
            cand = next(self._cands, None)
            if cand is None:
                break
            self._taken += 1
            item = _with_leftover(self._reactants, self._inputs, cand, self._drop)
            if item is None or tuple(item[0]) in self._seen:
                continue
            self._seen.add(tuple(item[0]))
            self._sets.append(item)
            return True
        self._done = True
        return False


def _with_leftover(
    reactants: list[str], inputs: set[str], cand: EditCandidate, drop_input_copies: bool
) -> tuple[list[str], float] | None:
    """One candidate as a new-product set with its leftover chain; ``None`` when the line could not be balanced."""
    try:
        left = leftover_from_composition(reactants, cand.products)
        if left is None and leftover_composition(reactants, cand.products):
            return None  # no chain RDKit accepts for the difference: the line could not be balanced
    except ChemistryError:
        return None
    new = [p for p in cand.products if not (drop_input_copies and p in inputs)]
    if left is not None:
        new.append(left)
    return new, cand.score
