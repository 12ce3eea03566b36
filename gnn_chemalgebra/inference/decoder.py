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
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

import torch

from ..algebra.complete import Completion, complete, leftover_of_cover, why_unbalanced
from ..algebra.extent import S_IN, S_OUT
from ..algebra.roles import ROLE_NU, role_class
from ..chem.bag import Term
from ..chem.composition import CHARGE_KEY, closed_shell_possible
from ..chem.formula import write_formula
from ..chem.leftover import formula_chain_admissible, leftover_from_composition
from ..chem.molecule import composition
from ..chem.reaction import REACTANT_SIDE, REAGENT_SIDE, ReactionSides, given_sides
from ..config import DecodeConfig
from ..data.dataset import BagExample, ExtraVocab, atom_count, vocab_compositions
from ..data.featurize import CHARGE_INDEX, ELEMENT_VOCAB, Featurizer, element_index
from ..errors import ChemAlgebraError, InputError
from ..models.gnn import CHARGE_SHIFT
from .byproduct_convention import BENCHMARK, CHEMIST, chemist_result, given_convention, real_closure, split_species
from .decode import Decoded, completed_line, decode_bag

EXTENT_RULES: tuple[str, ...] = ("auto", "bayes", "limiting")
_NEG_INF = float("-inf")
BENCHMARK_COEFS = frozenset(S_IN) | frozenset(S_OUT)
VOCAB_TRIED = 16  # vocabulary by-products, most likely first, tried to complete a line with given products


def extent_rule_for(terms: Sequence[Term], extent: str) -> str:
    """The extent rule of one line: ``bayes`` / ``limiting`` as asked; ``auto`` reads a line whose coefficients
    all lie in the benchmark's sets (1..10) as a benchmark line (``bayes``, the rule its targets follow) and any
    other line, e.g. amounts like ``{20}A.{35}B``, as a chemist's amounts (``limiting``)."""
    if extent not in EXTENT_RULES:
        raise InputError(f"--extent must be one of {', '.join(EXTENT_RULES)}, got {extent!r}")
    if extent != "auto":
        return extent
    return "bayes" if all(t.coef in BENCHMARK_COEFS for t in terms) else "limiting"


def kbest_assignments(logp: torch.Tensor, k: int) -> list[tuple[float, tuple[int, ...]]]:
    """The k most likely joint assignments of independent per-row categorical choices (beam over rows)."""
    return kbest_rows(logp.tolist(), k)


def kbest_rows(rows: Sequence[Sequence[float]], k: int) -> list[tuple[float, tuple[int, ...]]]:
    """:func:`kbest_assignments` of log-probabilities given as lists (rows of per-class values)."""
    beams: list[tuple[float, tuple[int, ...]]] = [(0.0, ())]
    first = itemgetter(0)
    for row in rows:
        # heapq.nlargest(k, candidates, key) is sorted(..., reverse=True)[:k], stable: ties keep candidate order
        # (beam entry, then class); the assignment tuples are built for the k survivors only
        cand = [(s + lp, i, j) for i, (s, _) in enumerate(beams) for j, lp in enumerate(row)]
        cand.sort(key=first, reverse=True)
        beams = [(sc, beams[i][1] + (j,)) for sc, i, j in cand[:k]]
    return beams


@dataclass(slots=True)
class LineOutputs:
    """One example's network outputs as plain numbers, what the search and the report read: role probabilities
    and their logs per molecule (``log(max(p, 1e-12))``, as torch computes them), by-product probabilities in
    vocabulary order, the leftover head's candidates (``has_left``: the head exists), the bag embedding (the
    learned extent scorer) and the naive head's choices. :meth:`Decoder.line_outputs` builds it from one
    example's tensors, :meth:`Decoder.batch_line_outputs` for a whole batch at once (same numbers)."""

    role_p: list[list[float]]
    logp: list[list[float]]
    extra_p: list[float]
    left: list[tuple[str | None, float]]
    has_left: bool
    bag: Any = None
    coef: list[int] | None = None
    newcoef: int | None = None
    vocab_extras: list[str] | None = None  # the by-products with p > 0.5, vocabulary order (None: read extra_p)
    left_lp: Any = None  # the leftover head's log-probabilities [slots, count classes] (scores any composition)
    left_elem: list[int] | None = None  # the element column of each slot


class Hypothesis(NamedTuple):
    """One decoded hypothesis: its score (network log-probabilities, plus the Type-2 evidence when weighed), the
    exact decoding, the role-head class per input molecule (``None``: the no-reaction fallback), and the
    by-products it wrote besides the main product (the leftover option, vocabulary by-products, or the edit
    model's other new products)."""

    score: float
    decoded: Decoded
    roles: tuple[int, ...] | None = None
    extras: tuple[str, ...] = ()


@dataclass
class DecodeResult:
    """The beam (best first), the hypothesis written (``chosen``; the source copied when ``fallback``), the extent
    rule used, how by-products were proposed (``mode``: ``leftover`` head, ``vocab`` head or ``edit`` model), and
    what the heads proposed on their own (confident vocabulary by-products, the top leftover)."""

    beam: list[Hypothesis]
    chosen: Hypothesis
    fallback: bool
    extent_rule: str
    mode: str = "vocab"
    vocab_extras: list[str] = field(default_factory=list)
    leftover: str | None = None
    equation: str | None = None  # a line with given products: the balanced reaction written
    convention: str = BENCHMARK  # the by-product convention that wrote the line (benchmark / chemist)
    convention_note: str | None = None  # a chemist's line was asked and could not be written: why


class Decoder:
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

    # ----------------------------------------------------------------- by-products and leftovers
    def _left_table(self) -> tuple[list[str | None], torch.Tensor]:
        """Leftover candidates from the vocabulary as count classes per composition column ([V, C])."""
        if self._left_tab is None:
            comp = vocab_compositions(self.vocab, self.feat).round().long()
            comp[:, CHARGE_INDEX] += CHARGE_SHIFT
            names: list[str | None] = [None, *self.vocab.items[1:]]  # <unk> row = no leftover
            self._left_tab = (names, comp)
        return self._left_tab

    def _left_gather(self, K: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(vocabulary rows whose counts fit the head's K classes, their count class per column [C, V])."""
        if K not in self._left_index:  # the same for every line: computed once
            names, comp = self._left_table()
            ok = (comp < K).all(1) & (comp >= 0).all(1)
            if self.repr == "formula" and self.settings.admissible_leftover:
                ok &= torch.tensor([n is None or formula_chain_admissible(n) for n in names], dtype=torch.bool)
            self._left_index[K] = (ok, comp.clamp(0, K - 1).T.contiguous())
        return self._left_index[K]

    def leftover_candidates(self, r: dict[str, Any], k: int = 4) -> list[tuple[str | None, float]]:
        """The k most likely leftovers under the per-element count head: every vocabulary leftover scored
        jointly (sum of its per-element log-probabilities) plus the head's own arg-max composition."""
        if "left_lp" not in r:
            return []
        lp, elems = r["left_lp"], r["left_elem"]
        K = lp.size(1)
        C = self.feat.settings()["comp_dim"]
        table = torch.full((C, K), float("-inf"))
        table[:, 0] = 0.0  # an element absent from the bag cannot be in the leftover
        table[elems] = lp
        names, comp = self._left_table()
        ok, index = self._left_gather(K)
        scores = table.gather(1, index).T.sum(1) if comp.numel() else torch.zeros(0)
        scores = torch.where(ok, scores, torch.full_like(scores, float("-inf")))
        top = torch.argsort(scores, descending=True)[:k]
        s_best = float(lp.max(-1).values.sum())
        return self._left_finish(top.tolist(), scores[top].tolist(), elems.tolist(), lp.argmax(-1).tolist(), s_best, k)

    def leftover_candidates_batch(self, out: Any, k: int = 4) -> list[list[tuple[str | None, float]]]:
        """:meth:`leftover_candidates` of every example of a :class:`~.runner.BatchOutputs` (same numbers). Each
        example's vocabulary scores are summed exactly as there (one ``[C, V]`` table per example: torch's sum
        over the element columns is blocked, so the same layout keeps the same rounding); the tables, the
        ranking and the conversions are batch-wide."""
        lp, elems, ptr = out.left_lp, out.left_elem, out.left_ptr
        B, K = len(out), lp.size(1)
        names, comp = self._left_table()
        C = self.feat.settings()["comp_dim"]
        ok, index = self._left_gather(K)
        tables = torch.full((B, C, K), float("-inf"))
        tables[:, :, 0] = 0.0  # an element absent from the bag cannot be in the leftover
        counts = torch.tensor([ptr[i + 1] - ptr[i] for i in range(B)], dtype=torch.long)
        tables[torch.repeat_interleave(torch.arange(B), counts), elems] = lp
        if comp.numel():
            scores = torch.stack([t.gather(1, index).T.sum(1) for t in tables])
        else:
            scores = torch.zeros(B, 0)
        scores = torch.where(ok, scores, torch.full_like(scores, float("-inf")))
        top = torch.argsort(scores, dim=1, descending=True)[:, :k]
        top_scores = scores.gather(1, top).tolist()
        best, best_lp = lp.argmax(-1).tolist(), lp.max(-1).values
        elem_l = elems.tolist()
        res = []
        for i, t in enumerate(top.tolist()):
            a, b = ptr[i], ptr[i + 1]
            s_best = float(best_lp[a:b].sum())  # the per-example sum, on the same values in the same order
            res.append(self._left_finish(t, top_scores[i], elem_l[a:b], best[a:b], s_best, k))
        return res

    def _left_finish(
        self, top: list[int], top_scores: list[float], elems: list[int], best: list[int], s_best: float, k: int
    ) -> list[tuple[str | None, float]]:
        """Candidates from the best-scored vocabulary entries and the head's arg-max composition."""
        names, _ = self._left_table()
        cands: dict[str | None, float] = {}
        for j, sc in zip(top, top_scores, strict=True):
            if sc > _NEG_INF:
                cands.setdefault(names[j], sc)
        comp_d: dict[str, int] = {}
        for e, c in zip(elems, best, strict=True):
            v = c - (CHARGE_SHIFT if e == CHARGE_INDEX else 0)
            if v:
                comp_d[ELEMENT_VOCAB[e]] = v
        name: str | None = None
        if any(key != CHARGE_KEY for key in comp_d):
            if self.repr == "formula":
                key = tuple(comp_d.items())  # the head's arg-max compositions repeat: written once each
                if key not in self._left_names:  # None: no formula, or one the benchmark cannot write
                    try:
                        name = write_formula(comp_d)
                    except ChemAlgebraError:
                        name = None
                    if name is not None and self.settings.admissible_leftover and not formula_chain_admissible(name):
                        name = None
                    self._left_names[key] = name
                name = self._left_names[key]  # comp_d is not empty: None is not read as "no leftover" either
            else:
                name = self.comp_lookup.get(tuple(sorted(comp_d.items())))
        if name is not None or not comp_d:
            cands.setdefault(name, s_best)
        return sorted(cands.items(), key=lambda kv: -kv[1])[:k]

    # ----------------------------------------------------------------- network outputs as numbers
    def line_outputs(self, r: dict[str, Any]) -> LineOutputs:
        """One example's tensors (:meth:`~.runner.ModelRunner.forward`) as :class:`LineOutputs`."""
        role_p = r["role_p"]
        return LineOutputs(
            role_p.tolist(),
            torch.log(role_p.clamp(min=1e-12)).tolist(),
            r["extra_p"][: len(self.vocab)].tolist(),
            self.leftover_candidates(r),
            "left_lp" in r,
            r.get("bag"),
            r.get("coef"),
            r.get("newcoef"),
            left_lp=r.get("left_lp"),
            left_elem=r["left_elem"].tolist() if "left_lp" in r else None,
        )

    def batch_line_outputs(self, out: Any) -> list[LineOutputs]:
        """:meth:`line_outputs` of every example of a :class:`~.runner.BatchOutputs`, converted batch-wide."""
        role_p = out.role_p.tolist()
        logp = torch.log(out.role_p.clamp(min=1e-12)).tolist()
        extra = out.extra_p[:, : len(self.vocab)].tolist()
        lefts = self.leftover_candidates_batch(out) if out.has_left else [[] for _ in range(len(out))]
        confident: list[list[str]] = [[] for _ in range(len(out))]  # p > 0.5 (the float32 values compared)
        items = self.vocab.items
        for i, j in (out.extra_p[:, 1 : len(self.vocab)] > 0.5).nonzero().tolist():  # row-major: vocabulary order
            confident[i].append(items[j + 1])
        ptr = out.mol_ptr
        left_elem = out.left_elem.tolist() if out.has_left else None
        res = []
        for i in range(len(out)):
            a, b = ptr[i], ptr[i + 1]
            coef = newcoef = None
            if out.naive:
                coef, newcoef = out.coef[a:b], int(out.newcoef[i])
            lo = LineOutputs(role_p[a:b], logp[a:b], extra[i], lefts[i], out.has_left, out.bag_row(i), coef, newcoef)
            lo.vocab_extras = confident[i]
            if left_elem is not None:
                s, e = out.left_ptr[i], out.left_ptr[i + 1]
                lo.left_lp, lo.left_elem = out.left_lp[s:e], left_elem[s:e]
            res.append(lo)
        return res

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
        self, ex: BagExample, r: dict[str, Any] | LineOutputs, beam: int = 1, scorer: Any = None
    ) -> DecodeResult:
        """Hypotheses for one example from its network outputs: one example's tensors (see
        :class:`~.runner.ModelRunner`) or their :class:`LineOutputs`."""
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
        res = self._decode_bag_line(ex, lo, beam, scorer, rule, vocab_extras, left)
        if self.byproducts == CHEMIST:
            return chemist_result(ex, res, self.repr, self._comp, self.keeps_roles)
        return res

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
        logp = self.role_logp(ex, lo.logp)
        hyps = [h for h in kbest_rows(logp, max(beam, self.settings.balance_beam)) if h[0] > _NEG_INF]
        scorer = scorer if (ex.vtype == 2 and rule == "bayes") else None
        if self.edit is not None:
            ranked = self._decode_with_edits(ex, hyps, beam, scorer, rule, logp)
        else:
            ranked = self._decode_roles(ex, lo, hyps, beam, scorer, rule, left_cands, vocab_extras)
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
    ) -> list[Hypothesis]:
        """Joint search: role hypotheses x leftover options, most likely first; balanced decodings first."""
        if left_cands:  # structured head: (log-prob, leftover list) options
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

    def warm_edit_cache(self, examples: Sequence[BagExample], outs: Sequence[dict[str, Any] | LineOutputs]) -> None:
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

    # ----------------------------------------------------------------- roles a reaction line gives
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

    @staticmethod
    def leftover_score(lo: LineOutputs, comp: Mapping[str, int]) -> float:
        """The leftover head's log-probability of a leftover composition (``-inf``: an element outside the bag's,
        or a count beyond the head's classes)."""
        counts: dict[int, int] = {}
        for key, v in comp.items():
            if v:
                counts[element_index(key)] = counts.get(element_index(key), 0) + v
        elems = lo.left_elem or []
        if any(e not in elems for e in counts):
            return _NEG_INF
        rows = lo.left_lp.tolist()
        total = 0.0
        for e, row in zip(elems, rows, strict=True):
            c = counts.get(e, 0) + (CHARGE_SHIFT if e == CHARGE_INDEX else 0)
            if not 0 <= c < len(row):
                return _NEG_INF
            total += row[c]
        return total
