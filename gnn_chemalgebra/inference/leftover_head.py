"""The leftover and by-product heads read as candidates: the vocabulary's leftovers scored under the per-element
count head (one example, or a batch at once with the same numbers), the head's own arg-max composition, and the
network outputs of an example as plain numbers (:class:`~.hypotheses.LineOutputs`). A part of
:class:`~.decoder.Decoder` (a mixin: it reads the decoder's vocabulary, featuriser and settings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ..chem.composition import CHARGE_KEY
from ..chem.formula import write_formula
from ..chem.leftover import formula_chain_admissible
from ..config import DecodeConfig
from ..data.dataset import ExtraVocab, vocab_compositions
from ..data.featurize import CHARGE_INDEX, ELEMENT_VOCAB, Featurizer, element_index
from ..errors import ChemAlgebraError
from ..models.gnn import CHARGE_SHIFT
from .hypotheses import _NEG_INF, ExampleOutputs, LineOutputs


class LeftoverHead:
    """Leftover candidates and network outputs as numbers (see the module doc)."""

    feat: Featurizer
    vocab: ExtraVocab
    repr: str
    settings: DecodeConfig
    comp_lookup: dict[tuple, str]
    _left_tab: tuple[list[str | None], torch.Tensor] | None
    _left_index: dict[int, tuple[torch.Tensor, torch.Tensor]]
    _left_names: dict[tuple, str | None]

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

    def leftover_candidates(self, r: ExampleOutputs, k: int = 4) -> list[tuple[str | None, float]]:
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
    def line_outputs(self, r: ExampleOutputs) -> LineOutputs:
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
