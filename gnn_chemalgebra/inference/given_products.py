"""Reaction lines the decoder completes: the roles a line's sides allow (a reagent between the arrows is never
consumed nor made, a reactant never made) and a line with its products given, completed with the by-products that
balance it exactly (the real ones first). A part of :class:`~.decoder.Decoder` (a mixin: it reads the decoder's
vocabulary, compositions and scores)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from ..algebra.complete import Completion, complete, leftover_of_cover, why_unbalanced
from ..algebra.roles import ROLE_NU, role_class
from ..chem.composition import CHARGE_KEY
from ..chem.formula import write_formula
from ..chem.leftover import leftover_from_composition
from ..chem.reaction import REACTANT_SIDE, REAGENT_SIDE, ReactionSides, given_sides
from ..data.dataset import BagExample, ExtraVocab
from ..errors import ChemAlgebraError
from .byproduct_convention import given_convention, real_closure, split_species
from .decode import Decoded, completed_line
from .hypotheses import _NEG_INF, DecodeResult, Hypothesis, LineOutputs

VOCAB_TRIED = 16  # vocabulary by-products, most likely first, tried to complete a line with given products


class GivenProducts:
    """Roles a reaction line gives, and lines with given products completed (see the module doc)."""

    vocab: ExtraVocab
    repr: str
    byproducts: str
    comp_lookup: dict[tuple, str]

    @staticmethod
    def _allowed(role: str | None, nu: int) -> bool:
        """May a molecule written on this side of a reaction line take this ``nu``? A reagent (between the arrows)
        is never consumed nor made (0), a reactant never made (<= 0); a bag's molecules may take any."""
        if role == REAGENT_SIDE:
            return nu == 0
        if role == REACTANT_SIDE:
            return nu <= 0
        return True

    def role_logp(self, ex: BagExample, logp: Sequence[Sequence[float]]) -> Sequence[Sequence[float]]:
        """The role head's log-probabilities with every role the line's sides forbid at ``-inf`` (a bag: as is)."""
        sides = given_sides(ex.terms)
        if sides is None:
            return logp
        return [
            [v if self._allowed(sides.role(m), nu) else _NEG_INF for v, nu in zip(row, ROLE_NU, strict=True)]
            for m, row in zip(ex.mols, logp, strict=True)
        ]

    def keeps_roles(self, ex: BagExample, d: Decoded) -> bool:
        """Does a decoding keep the roles the line's sides give (no reagent changed, no reactant made)?"""
        sides = given_sides(ex.terms)
        return sides is None or all(self._allowed(sides.role(m), d.nu.get(m, 0)) for m in ex.mols)

    # ----------------------------------------------------------------- given products
    def _decode_given(
        self,
        ex: BagExample,
        lo: LineOutputs,
        sides: ReactionSides,
        beam: int,
        rule: str,
        vocab_extras: list[str],
        left: str | None,
    ) -> DecodeResult:
        """A reaction line with its products given: every reactant consumed, every reagent kept, every product made,
        and the by-products that balance it exactly (:func:`~..algebra.complete.complete`, smallest integer
        coefficients) chosen among the sets :meth:`byproduct_options` proposes: none when the given products
        balance alone, else ranked by the model's score of each (:meth:`byproduct_score`); the line is written
        read once (:func:`.decode.completed_line`). When no
        set balances, the source is written back (a fallback) with the reason: the elements that do not balance.
        What the reactants leave, written as real molecules (:func:`~.byproduct_convention.real_closure`: water for
        an amide from an acid and an amine), is tried first and, when it balances, written before the model's own
        by-products; a salt written as its ions in one species is written as its ions."""
        reactants = {m: self._comp(m) for m in ex.mols if sides.role(m) == REACTANT_SIDE}
        products = {m: self._comp(m) for m in sides.products}
        real = real_closure(list(reactants), list(products), self.repr)
        options = self.byproduct_options(ex, lo, vocab_extras, reactants, products, real)
        found: list[tuple[float, int, tuple[str, ...], Completion]] = []
        for names in options:
            done = complete(reactants, products, {m: self._comp(m) for m in names})
            if done is not None:
                found.append((self.byproduct_score(lo, done, names, vocab_extras), sum(map(abs, done.nu)), names, done))
        # the given products alone first (nothing is left for a by-product), then the real by-products, then by the
        # model's score; stable
        found.sort(key=lambda f: (f[2] != (), f[2] != real, -f[0], f[1]))
        hyps: list[Hypothesis] = []
        main = self.main_of(list(products))
        for score, _, names, done in found[: max(beam, 1)]:
            made = split_species([(m, done.coefficient(m)) for m in (*products, *names)], self.repr)
            d = completed_line(ex.terms, {m: done.coefficient(m) for m in reactants}, made, main)
            roles = tuple(role_class(d.nu.get(m, 0)) for m in ex.mols)
            hyps.append(Hypothesis(self.written_role_score(ex, d, lo.logp) + score, d, roles, names))
        if not hyps:
            why = why_unbalanced(reactants, products, list(dict.fromkeys(m for names in options for m in names)))
            fallback = Hypothesis(_NEG_INF, self.no_reaction(ex, why))
            return DecodeResult([fallback], fallback, True, rule, "given", vocab_extras, left, None, self.byproducts)
        convention, note = given_convention(found[0][2], real, self.byproducts)
        equation = found[0][3].equation()
        return DecodeResult(hyps, hyps[0], False, rule, "given", vocab_extras, left, equation, convention, note)

    def byproduct_options(
        self,
        ex: BagExample,
        lo: LineOutputs,
        vocab_extras: Sequence[str],
        reactants: Mapping[str, Mapping[str, int]],
        products: Mapping[str, Mapping[str, int]],
        real: tuple[str, ...] | None = None,
    ) -> list[tuple[str, ...]]:
        """By-product sets to complete a line with given products: none; the real by-products that close it
        (``real``, :func:`~.byproduct_convention.real_closure`); then the model's own: the leftover
        head's candidates; the confident vocabulary by-products, alone and together; the vocabulary's next most
        likely ones (:data:`VOCAB_TRIED` in all); and what the smallest covering of the products leaves over
        (:meth:`cover_leftover`). Only molecules made of the reactants' elements, and not written on the line."""
        supplied = {k for c in reactants.values() for k, v in c.items() if v and k != CHARGE_KEY}
        taken = set(ex.mols) | set(products)
        opts: dict[tuple[str, ...], None] = {(): None}
        if real:
            opts[real] = None
        for name, _ in lo.left:
            opts[(name,) if name else ()] = None
        for e in vocab_extras:
            opts[(e,)] = None
        if len(vocab_extras) > 1:
            opts[tuple(vocab_extras)] = None
        p = lo.extra_p
        for j in sorted(range(1, len(self.vocab)), key=lambda j: -p[j])[:VOCAB_TRIED]:
            opts[(self.vocab.items[j],)] = None
        rest = self.cover_leftover(reactants, products)
        if rest is not None:
            opts[(rest,)] = None

        def fits(m: str) -> bool:
            if m in taken:
                return False
            try:
                return {k for k, v in self._comp(m).items() if v and k != CHARGE_KEY} <= supplied
            except ChemAlgebraError:
                return False

        return [o for o in opts if all(fits(m) for m in o)]

    def cover_leftover(
        self, reactants: Mapping[str, Mapping[str, int]], products: Mapping[str, Mapping[str, int]]
    ) -> str | None:
        """The by-product the line leaves when read once: what the smallest reactant amounts that hold the products
        leave over (:func:`~..algebra.complete.leftover_of_cover`), written as the vocabulary molecule of that
        composition (per molecule: ``2 HCl``, not ``H2Cl2``), else as a formula (formula models) or the benchmark's
        leftover chain (SMILES). ``None`` when nothing is left or it cannot be written."""
        cover = leftover_of_cover(reactants, products)
        if cover is None or not any(k != CHARGE_KEY for k in cover[1]):
            return None
        mult, rest = cover
        g = math.gcd(*rest.values())
        unit = {k: v // g for k, v in rest.items()}
        name = self.comp_lookup.get(tuple(sorted(unit.items())))
        if name is not None:
            return name
        try:
            if self.repr == "formula":
                return write_formula(unit)
            return leftover_from_composition(
                [m for m, k in zip(reactants, mult, strict=True) for _ in range(k)], list(products)
            )
        except ChemAlgebraError:
            return None

    def byproduct_score(
        self, lo: LineOutputs, done: Completion, names: Sequence[str], vocab_extras: Sequence[str]
    ) -> float:
        """The model's log-score of a completion's by-products: with a leftover head, its log-probability of their
        total composition (count per element); else the vocabulary head's, each by-product written at its
        probability and each confident one left out at one minus it."""
        if lo.left_lp is not None and lo.left_elem is not None:
            total: Counter = Counter()
            for m in names:
                k = done.coefficient(m)
                for key, v in self._comp(m).items():
                    total[key] += k * v
            return self.leftover_score(lo, total)
        p, index = lo.extra_p, self.vocab.index
        score = sum(math.log(max(p[index[m]], 1e-12)) if m in index else math.log(1e-12) for m in names)
        return score + sum(math.log(max(1.0 - p[index[m]], 1e-12)) for m in vocab_extras if m not in names)
