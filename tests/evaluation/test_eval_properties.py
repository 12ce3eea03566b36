"""Property tests: the evaluator against independent re-implementations written differently."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gnn_chemalgebra.chem.bag import Term
from gnn_chemalgebra.evaluation.metrics import evaluate_lines, score_pair

pytestmark = pytest.mark.unit

KEYS = ["A", "B", "C", "D"]
# SMILES alphabet with different spellings of the same molecules, and one that RDKit rejects.
SPELLINGS = {
    "O": ["O", "[H]O[H]", "[OH2]"],
    "CCO": ["CCO", "OCC", "C(O)C"],
    "Cl": ["Cl", "[H]Cl"],
    "N": ["N"],
}
BAD = "C1CC"

terms = st.lists(st.tuples(st.sampled_from(KEYS), st.integers(1, 12)), max_size=6)


def ref_strict(pred: list[tuple[str, int]], true: list[tuple[str, int]]) -> tuple[int, ...]:
    """Multiset view: merge with Counter, then intersection and differences."""
    p: Counter = Counter()
    t: Counter = Counter()
    for m, k in pred:
        p[m] += k
    for m, k in true:
        t[m] += k
    both = p & t
    ps, ts = set(p), set(t)
    return (
        sum(both.values()),
        sum((p - t).values()),
        sum((t - p).values()),
        len(ps & ts),
        len(ps - ts),
        len(ts - ps),
    )


def ref_paper(pred: list[tuple[str, int]], true: list[tuple[str, int]], unit: bool) -> tuple[int, int, int]:
    """Literal loop over a shrinking list of unpaired predictions (the authors' pairing)."""
    remaining = [(m, 1 if unit else k) for m, k in pred]
    tp = fp = fn = 0
    for m, k in true:
        k = 1 if unit else k
        for idx in range(len(remaining)):
            if remaining[idx][0] == m:
                kp = remaining.pop(idx)[1]
                tp += min(k, kp)
                if kp > k:
                    fp += kp - k
                else:
                    fn += k - kp
                break
        else:
            fn += k
    fp += sum(k for _, k in remaining)
    return tp, fp, fn


def _terms(pairs: list[tuple[str, int]]) -> list[Term]:
    return [Term(k, m) for m, k in pairs]


@settings(max_examples=300, deadline=None)
@given(pred=terms, true=terms)
def test_strict_matches_counter_reference(pred, true) -> None:
    c = score_pair(_terms(pred), _terms(true), "strict")
    assert (c.tp, c.fp, c.fn, c.mol_tp, c.mol_fp, c.mol_fn) == ref_strict(pred, true)


@settings(max_examples=300, deadline=None)
@given(pred=terms, true=terms)
def test_paper_matches_literal_loop(pred, true) -> None:
    c = score_pair(_terms(pred), _terms(true), "paper")
    assert (c.tp, c.fp, c.fn) == ref_paper(pred, true, unit=False)
    assert (c.mol_tp, c.mol_fp, c.mol_fn) == ref_paper(pred, true, unit=True)


@settings(max_examples=200, deadline=None)
@given(pred=terms, true=terms, data=st.data())
def test_strict_is_order_independent_and_paper_em_implies_strict_em(pred, true, data) -> None:
    c = score_pair(_terms(pred), _terms(true), "strict")
    shuffled_p = data.draw(st.permutations(pred))
    shuffled_t = data.draw(st.permutations(true))
    assert score_pair(_terms(shuffled_p), _terms(shuffled_t), "strict") == c
    paper = score_pair(_terms(pred), _terms(true), "paper")
    if paper.em:
        assert c.em
    # Both modes count the same total mass on each side.
    assert paper.tp + paper.fp == c.tp + c.fp == sum(k for _, k in pred)
    assert paper.tp + paper.fn == c.tp + c.fn == sum(k for _, k in true)
    assert 0.0 <= c.jac <= c.f1 <= 1.0


smiles_terms = st.lists(
    st.tuples(st.sampled_from([*SPELLINGS, BAD]), st.integers(1, 10), st.integers(0, 2)), max_size=5
)
true_smiles = st.lists(st.tuples(st.sampled_from(list(SPELLINGS)), st.integers(1, 10)), min_size=1, max_size=4)


def _spell(mol: str, variant: int) -> str:
    if mol == BAD:
        return BAD
    options = SPELLINGS[mol]
    return options[variant % len(options)]


@settings(max_examples=60, deadline=None)
@given(examples=st.lists(st.tuples(smiles_terms, true_smiles), min_size=1, max_size=5))
def test_evaluate_lines_end_to_end(examples) -> None:
    """Lines in varied SMILES spellings score like the references on canonical names."""
    pred_lines, tgt_lines = [], []
    exp = {"strict": [0.0, 0.0, 0.0], "paper": [0.0, 0.0, 0.0]}
    for pred, true in examples:
        pred_lines.append(".".join(f"{{{k}}}{_spell(m, v)}" for m, k, v in pred))
        tgt_lines.append(".".join(f"{{{k}}}{_spell(m, i)}" for i, (m, k) in enumerate(true)))
        strict_pred = [(m, k) for m, k, _ in pred]  # BAD is its own molecule: never matches
        paper_pred = [(m, k) for m, k, _ in pred if m != BAD]  # dropped
        tp, fp, fn = ref_strict(strict_pred, true)[:3]
        exp["strict"][0] += fp == fn == 0
        exp["strict"][1] += tp / (tp + fp + fn)
        exp["strict"][2] += 2 * tp / (2 * tp + fp + fn)
        tp, fp, fn = ref_paper(paper_pred, true, unit=False)
        exp["paper"][0] += fp == fn == 0
        exp["paper"][1] += tp / (tp + fp + fn)
        exp["paper"][2] += 2 * tp / (2 * tp + fp + fn)
    n = len(examples)
    for mode, (em, jac, f1) in exp.items():
        r = evaluate_lines(pred_lines, tgt_lines, "smiles", mode)  # type: ignore[arg-type]
        assert r["EM"] == pytest.approx(100 * em / n)
        assert r["JAC"] == pytest.approx(100 * jac / n)
        assert r["F1"] == pytest.approx(100 * f1 / n)
