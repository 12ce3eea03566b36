"""The decoder: network outputs -> ranked, exactly balanced hypotheses (the search; the exact part is decode.py).

What is covered: roles of every input molecule (reactant / reagent / product already present), by-products and
leftover chains from the training vocabulary, the main product's FORMULA as the exact composition remainder,
the extent (``bayes``: Type 1 read off, Type 2 the exact Bayes rule or the learned scorer; ``limiting``: the
limiting reactant is consumed), output = source + xi * nu.
SMILES mode with a bond-edit model attached (``edit``): the role head decides which molecules are consumed, the
edit decoder proposes the new product GRAPHS over their atoms (plus the exact leftover chain), and the algebra
does the rest; every hypothesis is scored by the role head's probability of the roles it writes, and on Type-2
lines the head's own reading (products already in the source, a vocabulary by-product as remainder) competes
too. Without an edit model the main product is emitted only when its composition matches a vocabulary molecule;
otherwise the line is written without it and reported under ``not_covered``.
When no hypothesis balances, the chosen line is the source copied (no reaction) and the result is a *fallback*.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ..algebra.roles import ROLE_NU, role_class
from ..chem.composition import closed_shell_possible
from ..chem.molecule import composition
from ..chem.reaction import given_sides
from ..config import DecodeConfig
from ..data.dataset import BagExample, ExtraVocab, atom_count
from ..data.featurize import Featurizer
from .byproduct_convention import BENCHMARK, CHEMIST, chemist_result
from .decode import Decoded, decode_bag
from .given_products import VOCAB_TRIED, GivenProducts
from .hypotheses import (
    _NEG_INF,
    BENCHMARK_COEFS,
    EXTENT_RULES,
    DecodeResult,
    ExampleOutputs,
    Hypothesis,
    LineOutputs,
    extent_rule_for,
    kbest_assignments,
    kbest_rows,
)
from .leftover_head import LeftoverHead

__all__ = [
    "BENCHMARK_COEFS", "EXTENT_RULES", "VOCAB_TRIED", "DecodeResult", "Decoder", "Hypothesis", "LineOutputs",
    "extent_rule_for", "kbest_assignments", "kbest_rows",
]  # fmt: skip


class Decoder(LeftoverHead, GivenProducts):
    """Role beam x by-product / leftover options (or edit-model product graphs) -> exact decodings, ranked."""

    def __init__(
        self,
        feat: Featurizer,
        vocab: ExtraVocab,
        settings: DecodeConfig | None = None,
        edit: Any = None,
        extent: str = "auto",
        byproducts: str = BENCHMARK,
    ) -> None:
        self.feat = feat
        self.vocab = vocab
        self.repr = feat.repr
        self.settings = dataclasses.replace(settings) if settings is not None else DecodeConfig()
        self.edit = edit if feat.repr == "smiles" else None  # an EditPredictor: product graphs for SMILES
        self.edit_cache: dict[tuple, Any] = {}  # bag -> smiles_products.ProductSets (found lazily)
        extent_rule_for([], extent)  # validate early
        self.extent = extent
        self.byproducts = byproducts  # the by-product convention of the written lines (byproduct_convention.py)
        self._comp_cache: dict[str, Any] = {}
        self._left_tab: tuple[list[str | None], torch.Tensor] | None = None
        self._left_index: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # per K: (valid rows, gather index)
        self._left_names: dict[tuple, str | None] = {}  # arg-max leftover composition -> its formula
        self.comp_lookup: dict[tuple, str] = {}
        for s in vocab.items[1:]:
            self.comp_lookup.setdefault(tuple(sorted(self._comp(s).items())), s)

    def _comp(self, m: str) -> Any:
        c = self._comp_cache.get(m)
        if c is None:
            c = self._comp_cache[m] = composition(m, self.repr)
        return c

    # ----------------------------------------------------------------- plausibility
    def acceptable(self, d: Decoded) -> bool:
        """A decoding worth stopping at: something is consumed, and it balances -- or, in SMILES mode, its only
        gap is the main product's graph (no edit model loaded), which no other hypothesis would fill either."""
        if not any(v < 0 for v in d.nu.values()):
            return False
        if d.balanced:
            return self.plausible_main(d)
        return self.repr == "smiles" and all(u.startswith("main product graph") for u in d.uncovered)

    def plausible_main(self, d: Decoded) -> bool:
        """USPTO main products are organic and the largest new product (99.95% / 99.98% of the local training
        reactions): a hypothesis whose remainder has no carbon, or is smaller than its leftover, ranks later.
        Unless the main product is already in the source (a Type-2 line, role "product present"): then the
        remainder is a by-product (HBr, H2O, ...) and any composition the algebra leaves is acceptable."""
        if d.main_product is None:
            return True
        main = self._comp(d.main_product)
        size = atom_count(main)
        if any(
            n > 0 and m != d.main_product and "C" in (c := self._comp(m)) and atom_count(c) >= size
            for m, n in d.nu.items()
        ):
            return True
        if "C" not in main:
            return False
        if self.settings.valence_check and self.repr == "formula" and closed_shell_possible(main) is False:
            return False
        for m, _ in d.new_products:
            if m != d.main_product and atom_count(self._comp(m)) > size:
                return False
        return True

    def weigh_evidence(self, ex: BagExample, rule: str = "bayes") -> bool:
        """Type 2 under the benchmark's rule: weigh role hypotheses by the likelihood of the written coefficients
        (a chemist's amounts follow no generator, so ``limiting`` lines are not weighed)."""
        return self.settings.role_evidence and ex.vtype == 2 and rule == "bayes"

    def evidence(self, d: Decoded) -> float:
        """The generator's log-likelihood of the source under a hypothesis, floored so that a confident network
        can still overrule a hypothesis the coefficients contradict (the rebuilt term layout may be off)."""
        return max(d.log_evidence, self.settings.evidence_floor)

    # ----------------------------------------------------------------- search
    def decode(
        self,
        ex: BagExample,
        r: ExampleOutputs | LineOutputs,
        beam: int = 1,
        scorer: Any = None,
        agrees: Callable[[Decoded], bool] | None = None,
    ) -> DecodeResult:
        """Hypotheses for one example from its network outputs: one example's tensors (see
        :class:`~.runner.ModelRunner`) or their :class:`LineOutputs`. ``agrees``: a second reading's test of a
        chemist's line (:func:`~.byproduct_convention.chemist_result`)."""
        lo = r if isinstance(r, LineOutputs) else self.line_outputs(r)
        rule = extent_rule_for(ex.terms, self.extent)
        vocab_extras = lo.vocab_extras
        if vocab_extras is None:
            extra_p, items = lo.extra_p, self.vocab.items
            vocab_extras = [items[j] for j in range(1, len(self.vocab)) if extra_p[j] > 0.5]
        left_cands = lo.left
        left = left_cands[0][0] if left_cands else None
        sides = given_sides(ex.terms)
        if sides is not None and sides.products:
            return self._decode_given(ex, lo, sides, beam, rule, vocab_extras, left)
        if self.byproducts != CHEMIST:
            return self._decode_bag_line(ex, lo, beam, scorer, rule, vocab_extras, left)
        searched = self.settings.real_byproduct_beam
        res = self._decode_bag_line(ex, lo, max(beam, searched), scorer, rule, vocab_extras, left)
        return chemist_result(
            ex, res, self.repr, self._comp, self.keeps_roles, self.acceptable, searched, max(beam, 1), agrees
        )

    def _decode_bag_line(
        self,
        ex: BagExample,
        lo: LineOutputs,
        beam: int,
        scorer: Any,
        rule: str,
        vocab_extras: list[str],
        left: str | None,
    ) -> DecodeResult:
        """A bag or a reaction line without given products: roles x by-products (or product graphs), ranked."""
        left_cands = lo.left
        real_sets = None  # a chemist's formula line: what leaves is a set of real molecules, not one chain
        if self.byproducts == CHEMIST and self.settings.real_byproduct_sets > 0 and self.repr == "formula":
            real_sets = [(s, list(m)) for m, s in self.byproduct_sets(lo.extra_p, self.settings.real_byproduct_sets)]
        logp = self.role_logp(ex, lo.logp)
        hyps = [h for h in kbest_rows(logp, max(beam, self.settings.balance_beam)) if h[0] > _NEG_INF]
        scorer = scorer if (ex.vtype == 2 and rule == "bayes") else None
        if self.edit is not None:
            ranked = self._decode_with_edits(ex, hyps, beam, scorer, rule, logp)
        else:
            ranked = self._decode_roles(ex, lo, hyps, beam, scorer, rule, left_cands, vocab_extras, real_sets)
        best = ranked[0]
        fallback = not best.decoded.balanced or best.roles is None
        chosen = best
        if not best.decoded.balanced:  # every written line balances: without a balanced hypothesis, no reaction
            why = "no balanced hypothesis (" + "; ".join(best.decoded.uncovered) + ")"
            chosen = Hypothesis(best.score, self.no_reaction(ex, why), None)
        mode = "edit" if self.edit is not None else "leftover" if left_cands else "vocab"
        return DecodeResult(ranked, chosen, fallback, rule, mode, vocab_extras, left)

    def _decode_roles(
        self,
        ex: BagExample,
        lo: LineOutputs,
        hyps: list[tuple[float, tuple[int, ...]]],
        beam: int,
        scorer: Any,
        rule: str,
        left_cands: list[tuple[str | None, float]],
        vocab_extras: list[str],
        real_sets: list[tuple[float, list[str]]] | None = None,
    ) -> list[Hypothesis]:
        """Joint search: role hypotheses x leftover options, most likely first; balanced decodings first.
        ``real_sets`` (:meth:`byproduct_sets`) are the options instead, and a hypothesis whose main product would
        carry a charge is not one (an ion subtracted leaves a charged remainder, not a product)."""
        if real_sets is not None:
            options = real_sets
        elif left_cands:  # structured head: (log-prob, leftover list) options
            options = [(s_, [m] if m else []) for m, s_ in left_cands]
        else:  # vocabulary head: its confident by-products, then dropping the least confident ones
            ranked = sorted(vocab_extras, key=lambda e: -lo.extra_p[self.vocab.index[e]])
            options = [(0.0, ranked[:keep]) for keep in range(len(ranked), -1, -1)]
        extras = [e for _, o in options for e in o]
        comps = {m: self._comp(m) for m in [*ex.mols, *extras]}
        combos = sorted(((rs + ls, assign, o) for rs, assign in hyps for ls, o in options), key=lambda t: -t[0])
        decs: list[Hypothesis] = []
        ok: list[bool] = []  # acceptable(), once per hypothesis
        n_bal = 0
        weigh = self.weigh_evidence(ex, rule)
        for score, assign, ex_try in combos:
            nu = {m: ROLE_NU[j] for m, j in zip(ex.mols, assign, strict=False)}
            d = decode_bag(
                ex.terms,
                nu,
                ex_try,
                comps,
                self.repr,
                ex.vtype,
                ex.cset,
                comp_lookup=self.comp_lookup,
                extent_scorer=scorer,
                extent_rule=rule,
            )
            if not self.keeps_roles(ex, d):
                continue
            if real_sets is not None and d.main_comp is not None and d.main_comp.get("charge", 0):
                continue
            if d.main_comp is not None:  # the written main's composition is the remainder: no need to parse it
                self._comp_cache.setdefault(d.main_product, d.main_comp)  # type: ignore[arg-type]
            decs.append(Hypothesis(score + self.evidence(d) if weigh else score, d, tuple(assign), tuple(ex_try)))
            ok.append(self.acceptable(d))
            n_bal += ok[-1]
            if n_bal >= max(beam, 1) and not weigh:
                break
        if not decs:  # every hypothesis changed a molecule whose role the line fixed
            decs.append(Hypothesis(_NEG_INF, self.no_reaction(ex, "no hypothesis keeps the roles the line gives")))
            ok.append(False)
        # Top-1 = the most likely hypothesis whose decoding is balanced (exact algebra), if any.
        # (a decoding that consumes nothing -- no reaction at all -- ranks after every reacting one)
        order = sorted(
            range(len(decs)),
            key=lambda i: (not ok[i], not decs[i][1].balanced, -decs[i][0] if weigh else i),
        )
        return [decs[i] for i in order][: max(beam, 1)]

    def byproduct_sets(self, extra_p: Sequence[float], n: int, top: int = 6) -> list[tuple[tuple[str, ...], float]]:
        """The ``n`` likeliest sets of at most two by-products (one of them possibly twice) among the by-product
        head's ``top`` likeliest molecules, each scored as independent guesses: log p of those in the set, log(1 - p)
        of the others. The empty set is one of them (an addition gives off nothing), its score moved by
        ``decode.real_byproduct_none``: a head unsure of every by-product would otherwise rank it first, and a
        chemist's reaction rarely gives off nothing (under 1% of the chemist's validation reactions)."""
        ranked = sorted(range(1, len(self.vocab)), key=lambda j: -extra_p[j])[:top]
        yes = {j: math.log(max(extra_p[j], 1e-9)) for j in ranked}
        no = {j: math.log(max(1.0 - extra_p[j], 1e-9)) for j in ranked}
        base = sum(no.values())
        sets: list[tuple[int, ...]] = [(), *((j,) for j in ranked)]
        sets += [(a, b) for i, a in enumerate(ranked) for b in ranked[i:]]
        none = self.settings.real_byproduct_none  # a chemist's reaction rarely gives off nothing
        scored = [(base + (sum(yes[j] - no[j] for j in dict.fromkeys(s)) if s else none), s) for s in sets]
        scored.sort(key=lambda t: -t[0])
        return [(tuple(self.vocab.items[j] for j in s), score) for score, s in scored[:n]]

    # ----------------------------------------------------------------- SMILES product graphs
    @staticmethod
    def consumed(ex: BagExample, assign: Sequence[int]) -> tuple[dict[str, int], list[str], list[str]]:
        """Role hypothesis -> (nu of the consumed molecules only, reactants with multiplicity, reagents)."""
        nu = {m: min(ROLE_NU[j], 0) for m, j in zip(ex.mols, assign, strict=True)}
        reactants = [m for m in ex.mols for _ in range(-nu[m])]
        return nu, reactants, [m for m in ex.mols if nu[m] == 0]

    def edit_products(self, bags: Sequence[tuple[list[str], list[str]]]) -> list[list[tuple[list[str], float]]]:
        """Ranked new-product sets (input copies kept: the algebra counts them as products already present)."""
        from .smiles_products import new_products_for_bags

        return new_products_for_bags(
            bags, self.settings.edit_beam, checkpoint=self.edit, drop_input_copies=False, cache=self.edit_cache
        )

    def edit_product_sets(self, bags: Sequence[tuple[list[str], list[str]]]) -> list[Any]:
        """:meth:`edit_products` as lazy :class:`~.smiles_products.ProductSets` (iterated in the same order, with a
        bound on the scores of the sets not yet found), sharing the same cache."""
        from .smiles_products import product_sets_for_bags

        return product_sets_for_bags(
            bags, self.settings.edit_beam, checkpoint=self.edit, drop_input_copies=False, cache=self.edit_cache
        )

    def _decode_with_edits(
        self,
        ex: BagExample,
        hyps: list[tuple[float, tuple[int, ...]]],
        beam: int,
        scorer: Any,
        rule: str = "bayes",
        logp: Sequence[Sequence[float]] | None = None,
    ) -> list[Hypothesis]:
        """Role hypotheses (most likely first) x the edit decoder's product sets; the score adds both
        log-probabilities. Stops at the first hypothesis that yields a balanced, plausible decoding.

        With the role head's ``logp``, the role part of the score is that of the roles the decoding *writes*
        (:meth:`written_role_score`), not of the assignment that chose the reactants: a product set that does not
        make a molecule the head calls "product already present" pays for it (Type 2), and one that makes a
        molecule the head calls a reagent too. The assignment's score stays a bound (it is the best one of its
        reactant set), so the early stop is unchanged."""
        decs: list[Hypothesis] = []
        weigh = self.weigh_evidence(ex, rule)
        seen: set[tuple[str, ...]] = set()
        for rs, assign in hyps:
            nu, reactants, reagents = self.consumed(ex, assign)
            if not reactants or tuple(reactants) in seen:
                continue
            if not weigh and beam <= 1 and any(h.score >= rs and self.acceptable(h.decoded) for h in decs):
                break  # Type 1: rs bounds every later set's score (edit log-probabilities are <= 0)
            seen.add(tuple(reactants))
            if logp is not None and (present := self.present_products(ex, assign, nu, scorer, rule)) is not None:
                role_s = self.written_role_score(ex, present, logp)
                decs.append(Hypothesis(role_s + (self.evidence(present) if weigh else 0.0), present, tuple(assign)))
            sets = self.edit_product_sets([(reactants, reagents)])[0]
            best_ok = float("-inf")  # best acceptable score of this reactant set (unweighed top-1 only)
            for taken, (prods, es) in enumerate(sets, 1):
                comps = {m: self._comp(m) for m in [*ex.mols, *prods]}
                d = decode_bag(
                    ex.terms, nu, prods, comps, self.repr, ex.vtype, ex.cset, extent_scorer=scorer, extent_rule=rule
                )
                if not self.keeps_roles(ex, d):
                    continue
                d.main_product = self.main_of([m for m in prods if m not in ex.mols])
                others = tuple(m for m in prods if m not in ex.mols and m != d.main_product)
                role_s = rs if logp is None else self.written_role_score(ex, d, logp)
                decs.append(Hypothesis(role_s + es + (self.evidence(d) if weigh else 0.0), d, tuple(assign), others))
                if beam <= 1 and not weigh and self.acceptable(d):
                    # no later set scores above rs + bound, and an equal one ranks after: the top-1 is settled
                    best_ok = max(best_ok, decs[-1].score)
                    if best_ok >= rs + sets.bound(taken):
                        break
            # Type 1: the first ``edit_role_sets_t1`` reactant sets with an acceptable decoding (1: further beam
            # entries come from its other product sets); Type 2: ``edit_role_sets`` sets, weighed by the evidence.
            if any(self.acceptable(h.decoded) for h in decs) and len(seen) >= self.edit_role_sets(weigh):
                break
        if not decs:  # the written line is then the source copied (a fallback), saying which part found nothing
            nothing = "no role hypothesis in the beam consumes a molecule"
            why = "no product graph from the edit model" if seen else nothing
            decs.append(Hypothesis(float("-inf"), self.no_reaction(ex, why)))
        order = sorted(range(len(decs)), key=lambda i: (not self.acceptable(decs[i][1]), -decs[i][0]))
        return [decs[i] for i in order][: max(beam, 1)]

    def present_products(
        self, ex: BagExample, assign: Sequence[int], nu: dict[str, int], scorer: Any, rule: str
    ) -> Decoded | None:
        """Type 2: the products the role head says are already in the source, with the exact remainder as a
        vocabulary by-product (HBr, H2O, ...) or nothing -- no new graph needed, so the edit model cannot miss it.
        ``None`` when the head names no such product or that line is not acceptable (then the edit sets decide).
        It enters the ranking with no edit-model cost: a balanced line that makes exactly the products the head
        named is the head's own reading."""
        present = [m for m, j in zip(ex.mols, assign, strict=True) if ROLE_NU[j] > 0]
        if not present:
            return None
        comps = {m: self._comp(m) for m in ex.mols}
        d = decode_bag(
            ex.terms, nu, present, comps, self.repr, ex.vtype, ex.cset,
            comp_lookup=self.comp_lookup, extent_scorer=scorer, extent_rule=rule,
        )  # fmt: skip
        return d if d.xi > 0 and d.balanced and self.acceptable(d) and self.keeps_roles(ex, d) else None

    @staticmethod
    def written_role_score(ex: BagExample, d: Decoded, logp: Sequence[Sequence[float]]) -> float:
        """The role head's log-probability of the roles a decoding writes (each input molecule's ``nu``)."""
        return sum(row[role_class(d.nu.get(m, 0))] for m, row in zip(ex.mols, logp, strict=True))

    def no_reaction(self, ex: BagExample, why: str) -> Decoded:
        """The source copied unchanged (nothing consumed): balanced, and reported under ``not_covered``."""
        d = decode_bag(ex.terms, {}, [], {m: self._comp(m) for m in ex.mols}, self.repr, ex.vtype, ex.cset)
        d.uncovered = [why]
        return d

    def edit_role_sets(self, weigh: bool) -> int:
        """Reactant sets the edit model decodes before the ranking decides: Type 2 weighs them by the evidence,
        Type 1 by role + edit log-probability (1: the first set with an acceptable line wins)."""
        return self.settings.edit_role_sets if weigh else self.settings.edit_role_sets_t1

    def main_of(self, new: Sequence[str]) -> str | None:
        """The main product among new molecules: most atoms, then the smallest string (as the labels)."""
        return min(new, key=lambda m: (-atom_count(self._comp(m)), m), default=None)

    def warm_edit_cache(self, examples: Sequence[BagExample], outs: Sequence[ExampleOutputs | LineOutputs]) -> None:
        """One batched edit-model pass over the reactant sets :meth:`_decode_with_edits` will ask for first."""
        if self.edit is None:
            return
        bags = []
        for ex, r in zip(examples, outs, strict=True):
            sides = given_sides(ex.terms)
            if sides is not None and sides.products:
                continue  # completed by the algebra: no product graph needed
            weigh = self.weigh_evidence(ex, extent_rule_for(ex.terms, self.extent))
            want = self.edit_role_sets(weigh)
            sets: list[tuple[list[str], list[str]]] = []
            logp = r.logp if isinstance(r, LineOutputs) else torch.log(r["role_p"].clamp(min=1e-12)).tolist()
            for score, assign in kbest_rows(self.role_logp(ex, logp), self.settings.balance_beam):
                if score == _NEG_INF:
                    break
                _, reactants, reagents = self.consumed(ex, assign)
                if reactants and all(reactants != s_[0] for s_ in sets):
                    sets.append((reactants, reagents))
                if len(sets) >= want:
                    break
            bags += sets
        if bags:
            self.edit_product_sets(bags)  # the network now, batched; each set's search when decode asks
