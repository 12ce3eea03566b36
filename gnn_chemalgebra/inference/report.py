"""The report: a decoded example as the JSON record of ``gnnca predict --json`` and as its text line.

Honest by construction: the roles, by-products and leftover reported are those of the hypothesis written (each
molecule's own most likely role is kept under ``best_role``, the heads' own proposals under ``best_by_products`` /
``best_leftover``), and a line written without a balanced hypothesis says ``"fallback": true``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..algebra.extent import UNIFORM_MAX
from ..algebra.roles import ROLE_NU, role_name
from ..chem.bag import Term, format_bag
from ..chem.reaction import given_sides
from ..data.dataset import BagExample, ExtraVocab
from .decoder import DecodeResult, LineOutputs
from .prediction import BeamEntry, MoleculeRole, Prediction


def _naive_terms(ex: BagExample, lo: LineOutputs, new_products: list[tuple[str, int]]) -> list[Term]:
    """The naive ablation writes its own coefficient heads' choices (no algebra)."""
    coef, newcoef = lo.coef or [], int(lo.newcoef or 0)
    out = [Term(int(k), m) for m, k in zip(ex.mols, coef, strict=False) if k > 0]
    return out + [Term(newcoef, m) for m, _ in new_products if newcoef > 0]


def _argmax(row: list[float]) -> int:
    """The first index of the largest value (``torch.argmax`` of a row without NaN)."""
    best = 0
    for j in range(1, len(row)):
        v, b = row[j], row[best]
        if v > b or (v != v and b == b):  # NaN counts as the largest, as in torch
            best = j
    return best


def build_record(
    ex: BagExample, lo: LineOutputs, res: DecodeResult, vocab: ExtraVocab, naive: bool = False
) -> Prediction:
    """The prediction of one example: its line, per-molecule roles of the chosen hypothesis, extent, beam.

    ``balanced``: the line written balances (a fallback writes the source back, which balances trivially);
    ``not_covered``: empty unless ``fallback``, then why no hypothesis was written. A beam entry's ``logp`` is
    ``None`` for the no-reaction entry that has no network score, so the record is strict JSON."""
    chosen = res.chosen.decoded
    used, vocab_mode, given = res.chosen.extras, res.mode == "vocab", res.mode == "given"
    sides = given_sides(ex.terms)
    terms = _naive_terms(ex, lo, chosen.new_products) if naive else chosen.terms
    role_p = lo.role_p
    zero = ROLE_NU.index(0)
    classes = res.chosen.roles or (zero,) * len(ex.mols)  # the fallback writes every molecule unchanged
    molecules = []
    log_joint = 0.0
    for i, m in enumerate(ex.mols):
        row = role_p[i]
        p = row[int(classes[i])]
        log_joint += math.log(max(p, 1e-12))
        nu = int(chosen.nu.get(m, 0))
        best_j = _argmax(row)
        molecules.append(
            MoleculeRole(m, role_name(nu), nu, round(p, 4), role_name(ROLE_NU[best_j]), round(row[best_j], 4))
        )
    prediction = format_bag(terms)
    cands = chosen.candidates
    wide = len(cands) > UNIFORM_MAX  # coefficients in the millions: the first and the last candidate
    return Prediction(
        prediction=prediction,
        fallback=res.fallback,
        confidence=None if res.fallback else round(math.exp(log_joint), 4),
        molecules=molecules,
        # what the chosen hypothesis wrote besides the main product; the heads' own proposals under best_*
        by_products=_by_products(used, lo, vocab) if vocab_mode or given else {},
        leftover=None if vocab_mode or given or not used else used[0],
        best_by_products={e: round(lo.extra_p[vocab.index[e]], 4) for e in res.vocab_extras},
        best_leftover=res.leftover,
        new_products=[m for m, _ in chosen.new_products],
        nu=dict(chosen.nu),
        main_product=chosen.main_product,
        extent=chosen.xi,
        extent_rule=res.extent_rule,
        extent_candidates=[cands[0], cands[-1]] if wide else list(cands),
        extent_candidates_range=wide,
        extent_posterior=[round(p, 4) for p in chosen.posterior],
        balanced=chosen.balanced and not naive,
        not_covered=chosen.uncovered,
        # a reaction line's sides fix its roles; with given products the line is completed around them
        given_roles=sides is not None,
        given_products=list(sides.products) if sides is not None else [],
        given_reagents=list(sides.reagents) if sides is not None else [],
        equation=res.equation,
        byproduct_convention=res.convention,  # which by-product convention wrote the line (benchmark / chemist)
        byproduct_note=res.convention_note,
        # the amounts a completed line is balanced from (a reaction line names species, not amounts): with it,
        # prediction = source + extent * nu holds
        completed_source=format_bag(chosen.source) if chosen.source is not None else None,
        beam=[
            BeamEntry(
                prediction if h.decoded.terms is terms else format_bag(h.decoded.terms),
                round(h.score, 4) if math.isfinite(h.score) else None,
                h.decoded.main_product,
            )
            for h in res.beam
        ],
    )


def _by_products(used: Iterable[str], lo: LineOutputs, vocab: ExtraVocab) -> dict[str, float | None]:
    """The by-products written, each with the vocabulary head's probability (``None``: not in the vocabulary)."""
    return {e: round(lo.extra_p[vocab.index[e]], 4) if e in vocab.index else None for e in used}


def text_line(pred: Prediction) -> str:
    """The plain-text output of one prediction: the predicted target line in the benchmark format."""
    return pred.prediction


def fallback_reason(pred: Prediction) -> str:
    """Why a fallback's line was written unchanged, in one line (its first ``not_covered`` reason)."""
    why = [str(x) for x in pred.not_covered]
    head = why[0] if why else "no balanced hypothesis"
    return f"{head}; the source is written unchanged"


def count_fallbacks(preds: Iterable[Prediction]) -> int:
    """How many lines were written without a balanced hypothesis (the source copied, no reaction)."""
    return sum(1 for p in preds if p.fallback)
