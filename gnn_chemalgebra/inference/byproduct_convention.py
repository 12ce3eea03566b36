"""Which molecules a written line gives off: the benchmark's convention or a chemist's.

The benchmark writes what leaves a reaction as an artificial chain of atoms (``[O]``, ``[C]O[O]``, ``[O][O]``) or a
filler such as ``[H][H]``; its files and its numbers follow that convention. A chemist writes water, a hydrogen
halide, a salt, CO2, N2, an alcohol. ``benchmark`` writes the decoder's line as it is; ``chemist`` keeps its
reactants, main product and extent rule and closes it with real by-products instead
(:func:`~..algebra.byproducts.close_with_byproducts`), or keeps the benchmark's line, saying why, where no real
molecules close it. ``auto`` is ``benchmark`` for a benchmark source file (``src-*.txt``) and for the benchmark's
extent rule (``--extent bayes``), ``chemist`` for anything else (stdin, the Python API, a user's own file).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..algebra.byproducts import ByproductClosure, close_with_byproducts
from ..algebra.leftover_molecules import close_with_leftover
from ..algebra.roles import role_class
from ..chem.bag import Term
from ..chem.molecule import Repr
from ..errors import ChemAlgebraError, InputError
from .decode import Decoded, decode_bag

if TYPE_CHECKING:
    from ..data.dataset import BagExample

CONVENTIONS: tuple[str, ...] = ("auto", "benchmark", "chemist")
BENCHMARK, CHEMIST = "benchmark", "chemist"
KEPT_NOTE = "no real by-products close this line: the benchmark's by-products are written"


def check_convention(name: str) -> str:
    """``name`` if it is a convention, else one clear error."""
    if name not in CONVENTIONS:
        raise InputError(f"--byproducts must be one of {', '.join(CONVENTIONS)}, got {name!r}")
    return name


def resolve_byproducts(option: str, input_path: str | None, extent: str = "auto") -> str:
    """The convention for one input: ``benchmark`` or ``chemist`` as asked; ``auto`` is ``benchmark`` for a
    benchmark source file (``src-*.txt``) or the benchmark's extent rule (``bayes``), else ``chemist``."""
    check_convention(option)
    if option != "auto":
        return option
    if extent == "bayes":
        return BENCHMARK
    if input_path is not None and re.fullmatch(r"src-.*\.txt", Path(input_path).name):
        return BENCHMARK
    return CHEMIST


def real_closure(reactants: Sequence[str], products: Sequence[str], repr: Repr) -> tuple[str, ...] | None:
    """The real by-products that close ``reactants -> products`` with every reactant consumed (``()``: the
    products balance alone), or ``None`` when none do: the catalogue's (:func:`close_with_byproducts`), else, for
    SMILES with products, the reactants' own leftover as one molecule (:func:`close_with_leftover`)."""
    try:
        got = close_with_byproducts(reactants, products, repr=repr)
        if got.ok and not got.spectators:
            return got.byproducts
        if repr != "smiles" or not products:
            return None
        piece = close_with_leftover(reactants, products)  # a piece of a reactant, or a spent reagent
    except ChemAlgebraError:
        return None
    return None if piece is None else piece.species[len(dict.fromkeys(reactants)) + len(dict.fromkeys(products)) :]


def merged(made: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """``(molecule, coefficient)`` pairs with each molecule once, coefficients summed, first-seen order."""
    out: dict[str, int] = {}
    for m, k in made:
        out[m] = out.get(m, 0) + k
    return list(out.items())


def split_species(made: Sequence[tuple[str, int]], repr: str) -> list[tuple[str, int]]:
    """A salt written as its ions in one species (``[Br-].[Na+]``) is two molecules on a line: each ion with the
    species' coefficient (once per time it occurs), same molecules merged (:func:`merged`)."""
    return merged([(part, k) for m, k in made for part in (m.split(".") if repr == "smiles" else [m])])


def merge_new_terms(terms: Sequence[Term], source: Sequence[str]) -> list[Term]:
    """One term per molecule the source does not hold (``{2}O``, not ``{1}O.{1}O``, as a chemist writes it)."""
    held = set(source)
    out: list[Term] = []
    at: dict[str, int] = {}
    for t in terms:
        if t.mol in held:
            out.append(t)
        elif t.mol in at:
            out[at[t.mol]] = Term(out[at[t.mol]].coef + t.coef, t.mol)
        else:
            at[t.mol] = len(out)
            out.append(t)
    return out


def _lone_ions(ex: BagExample, comp: Callable[[str], Mapping[str, int]]) -> list[str]:
    """The bag's molecules that are one charged atom or small ion (``[Na+]``, ``[OH-]``): a salt's partners."""
    return [m for m in ex.mols if "." not in m and comp(m).get("charge", 0) and len(comp(m)) <= 3]


def _keeps_organic_ratios(
    d: Decoded, products: Sequence[str], comp: Callable[[str], Mapping[str, int]]
) -> Callable[[ByproductClosure], bool]:
    """A closure keeps the model's reaction when every molecule with carbon that it consumed or made keeps its
    amount relative to the first product; inorganic partners (H2, water, an acid, a base) may change theirs (a
    reduction the benchmark writes with an oxygen atom and no reductant takes its hydrogen here)."""
    amount = {m: -n for m, n in d.nu.items() if n < 0}
    for m, n in d.nu.items():
        if n > 0:
            amount[m] = n
    for m, k in d.new_products:
        amount[m] = amount.get(m, 0) + k
    ref = products[0]

    def accept(c: ByproductClosure) -> bool:
        n = len(c.reactants)
        got = dict(zip(c.reactants, c.coefficients[:n], strict=True))
        got.update(zip(c.products, c.coefficients[n : n + len(c.products)], strict=True))
        return all(got.get(m, 0) * amount[ref] == amount[m] * got[ref] for m in got if comp(m).get("C") and m in amount)

    return accept


def chemist_decoding(
    ex: BagExample, hyp: Any, repr: Repr, comp: Callable[[str], Mapping[str, int]], rule: str
) -> tuple[Decoded, tuple[str, ...]] | str:
    """A decoded bag line (a :class:`~.decoder.Hypothesis`) rewritten with real by-products: the same reactants
    consumed and the same products made (main product, products already present), what else it wrote replaced by
    the smallest set of real molecules that balances, the extent chosen again by the same rule, so the line still
    balances the amounts written. A reason (``str``) when no real set closes it or the amounts hold less than one
    such reaction."""
    d = hyp.decoded
    consumed = [m for m in ex.mols if d.nu.get(m, 0) < 0]
    if not consumed:  # nothing reacts: nothing is given off in either convention
        return d, ()
    extras = set(hyp.extras) - {d.main_product}
    made = [m for m in ex.mols if d.nu.get(m, 0) > 0] + [m for m, _ in d.new_products]
    products = [m for m in dict.fromkeys(made) if m not in extras]
    if not products:
        return "no product is written"
    accept = _keeps_organic_ratios(d, products, comp)
    got = first = close_with_byproducts(consumed, products, repr=repr, accept=accept)
    if not got.ok:  # a counter-ion the hypothesis left as a reagent may be the salt's partner
        ions = [m for m in _lone_ions(ex, comp) if m not in consumed and m not in products]
        if ions:
            got = close_with_byproducts([*consumed, *ions], products, repr=repr, accept=accept)
    if not got.ok:
        return first.reason
    n = len(got.reactants)
    nu = {m: -k for m, k in zip(got.reactants, got.coefficients[:n], strict=True) if k}
    made_k = split_species(list(zip((*got.products, *got.byproducts), got.coefficients[n:], strict=True)), repr)
    extras_list = [m for m, k in made_k for _ in range(k)]
    comps = {m: comp(m) for m in dict.fromkeys([*ex.mols, *extras_list])}
    new = decode_bag(ex.terms, nu, extras_list, comps, repr, ex.vtype, ex.cset, extent_rule=rule)
    if not new.balanced or new.main_product is not None or new.xi <= 0:
        return "the amounts written do not hold one reaction with the real by-products"
    new.terms = merge_new_terms(new.terms, ex.mols)
    new.new_products = merged(new.new_products)  # coefficients per unit extent
    new.main_product = d.main_product
    return new, got.byproducts


def chemist_result(
    ex: BagExample,
    res: Any,
    repr: Repr,
    comp: Callable[[str], Mapping[str, int]],
    keeps_roles: Callable[[BagExample, Decoded], bool],
    acceptable: Callable[[Decoded], bool] | None = None,
    searched: int = 1,
    keep: int | None = None,
    agrees: Callable[[Decoded], bool] | None = None,
) -> Any:
    """``res`` (a :class:`~.decoder.DecodeResult`) with each balanced beam entry rewritten in the chemist's
    convention (:func:`chemist_decoding`); the line written is the rewritten first entry, or the benchmark's line
    with ``convention_note`` saying why.

    With ``acceptable`` (the decoder's test of a line worth stopping at) and ``searched`` above 1, the beam is
    ranked again: an acceptable entry among the first ``searched`` that real molecules close comes before the
    others, each group in the decoder's order. A product graph whose remainder is an oxygen atom or a bare chain
    is no reaction a chemist writes, and the edit model's next graph (the imine beside the amine it wrote, the
    alkene beside the alkane) often is. Only the first ``searched`` entries move, so the line written does not
    depend on how many alternatives are asked for. ``keep`` entries stay. With ``agrees`` (a second reading of the
    same reaction, :attr:`~gnn_chemalgebra.config.DecodeConfig.formula_check`), an entry among those that real
    molecules close whose rewritten line it agrees with comes first of all."""
    if res.mode == "given":
        return res
    if res.fallback:  # the source written back: no by-product to write either way
        return dataclasses.replace(res, convention=CHEMIST)
    entries: list[tuple[Any, str | None]] = []  # (entry, why no real molecules close it; None: they do)
    for h in res.beam:
        got: tuple[Decoded, tuple[str, ...]] | str = "not balanced"
        if h.decoded.balanced and h.roles is not None:
            try:
                got = chemist_decoding(ex, h, repr, comp, res.extent_rule)
            except ChemAlgebraError as err:
                got = str(err)
        if isinstance(got, str) or not keeps_roles(ex, got[0]):
            entries.append((h, got if isinstance(got, str) else "a reagent would react"))
            continue
        d, names = got
        if Counter(d.terms) == Counter(h.decoded.terms):  # the same line: already real by-products, kept as written
            entries.append((h, None))
            continue
        rewritten = h._replace(decoded=d, roles=tuple(role_class(d.nu.get(m, 0)) for m in ex.mols), extras=names)
        entries.append((rewritten, None))
    if acceptable is not None and searched > 1:

        def rank(i: int) -> tuple[bool, bool, bool]:
            closed = i < searched and entries[i][1] is None
            agreed = closed and agrees is not None and agrees(entries[i][0].decoded)
            return not agreed, not acceptable(res.beam[i].decoded), not closed

        order = sorted(range(len(entries)), key=rank)
        entries = [entries[i] for i in order]
    entries = entries[: keep or len(entries)]
    beam = [h for h, _ in entries]
    why = entries[0][1]
    note = None if why is None else f"{KEPT_NOTE} ({why})"
    chosen = beam[0] if res.chosen is res.beam[0] else res.chosen
    convention = BENCHMARK if note else CHEMIST
    return dataclasses.replace(res, beam=beam, chosen=chosen, convention=convention, convention_note=note)


def given_convention(names: Sequence[str], real: Sequence[str] | None, asked: str) -> tuple[str, str | None]:
    """The convention of a line completed around its given products: ``chemist`` when it writes the real
    by-products (:func:`real_closure`), ``benchmark`` when it writes others (with the note when a chemist's line
    was asked), the asked one when it writes none."""
    if not names:
        return asked, None
    if real is not None and tuple(names) == tuple(real):
        return CHEMIST, None
    return BENCHMARK, (KEPT_NOTE if asked == CHEMIST else None)
