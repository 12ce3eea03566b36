"""ChemAlgebra metrics (benchmark doc §5): exact match, coefficient-aware Jaccard and F1, their
molecule-only variants, top-k exact match from beam files, and the validity/balance rates.

Two modes, because the published numbers come from a scorer with defects we want to keep measurable:

``paper`` -- reproduces the authors' scorer:
  * a predicted term whose SMILES RDKit rejects is silently dropped (neither right nor wrong);
  * a predicted term without ``{k}`` is dropped;
  * terms pair in order (each true term with the first unpaired predicted term of the same molecule), so
    duplicate terms make the score depend on order;
  * formulas match by plain string equality (``OH2`` is not ``H2O``); an invalid formula string is simply
    a term that matches nothing (a false positive), because the authors' scorer never parses formulas.
``strict`` -- fixes those defects:
  * an unparsable predicted molecule is a false positive with its coefficient;
  * a bare ``MOL`` term is read with coefficient 1 (the chemist's convention) and scored;
  * duplicates are merged per molecule (coefficients summed) on both sides before pairing, so the
    score is a function of the two multisets and does not depend on order;
  * formulas match after canonicalisation (parse, then write in Hill order: ``OH2`` == ``H2O``).

In both modes, broken coefficient syntax in a prediction (``{x}``, ``{0}``, ``{-1}``, an unclosed or
misplaced brace) is an :class:`InputError` located by file and line: it means the file is not a model's
output in the benchmark format, not that the model was wrong. Whitespace inside a prediction line is
removed first (OpenNMT writes space-separated tokens); an empty line predicts nothing; empty terms
(``..`` or a trailing ``.``) are dropped. Reference files (targets, sources) must be fully valid.

Secondary rates, in % of examples, judged on the top-1 prediction: ``VAL`` (the line is a well-formed
bag: non-empty, every term ``{k}MOL``, every molecule parses in its representation), and, given the
source lines, ``BAL`` (coefficient-weighted element counts and net charge equal the input's), ``DEF``
(some input element is short and none is in excess), ``EXC`` (some element in excess, none short),
``D+E`` (both) and ``CHG`` (same elements, different net charge). For a valid prediction exactly one of
BAL/DEF/EXC/D+E/CHG holds, so they sum to VAL; an invalid prediction counts in none of them.

Reading the lines (molecule keys, lenient predictions, strict references, balance classes) is :mod:`.lines`;
its public names are importable here too. This module scores pairs and files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chem.bag import Term
from ..chem.molecule import REPRS, Repr
from ..data.layout import TEST_SETTINGS, VARIANTS, variant_props, variant_short
from ..errors import InputError
from ..progress import track
from ..progress import wanted as progress_wanted
from .files import check_line_counts, read_eval_files, setting_files
from .lines import (
    UNPARSABLE,
    Mode,
    ParsedPrediction,
    bag_composition,
    balance_class,
    molecule_key,
    molecule_parses,
    parse_prediction,
    parse_reference,
    source_composition,
)

__all__ = [
    "DEFAULT_TOPK",
    "MODES",
    "RATES",
    "UNPARSABLE",
    "ExampleScore",
    "Mode",
    "PairCounts",
    "ParsedPrediction",
    "bag_composition",
    "balance_class",
    "evaluate_files",
    "evaluate_folder",
    "evaluate_lines",
    "molecule_key",
    "molecule_parses",
    "parse_prediction",
    "parse_reference",
    "score_lines",
    "score_pair",
    "source_composition",
    "topk_levels",
]

MODES: tuple[str, ...] = ("paper", "strict")
RATES: tuple[str, ...] = ("BAL", "DEF", "EXC", "D+E", "CHG")
DEFAULT_TOPK: tuple[int, ...] = (1, 3, 5, 10)


# --------------------------------------------------------------------------- scoring one pair
@dataclass(frozen=True, slots=True)
class PairCounts:
    """Counts of one (prediction, target) pair; coefficient-aware and molecule-only."""

    tp: int
    fp: int
    fn: int
    mol_tp: int
    mol_fp: int
    mol_fn: int

    @property
    def em(self) -> bool:
        return self.fp == 0 and self.fn == 0

    @property
    def jac(self) -> float:
        return _ratio(self.tp, self.tp + self.fp + self.fn)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def mol_jac(self) -> float:
        return _ratio(self.mol_tp, self.mol_tp + self.mol_fp + self.mol_fn)

    @property
    def mol_f1(self) -> float:
        return _ratio(2 * self.mol_tp, 2 * self.mol_tp + self.mol_fp + self.mol_fn)


def _ratio(num: int, den: int) -> float:
    # den == 0 only when both bags are empty, which a valid target excludes; two empty bags agree fully.
    return 1.0 if den == 0 else num / den


def _pair_in_order(pred: Sequence[tuple[str, int]], true: Sequence[tuple[str, int]]) -> tuple[int, int, int]:
    """The authors' pairing: each true term takes the first unpaired predicted term of its molecule."""
    free: dict[str, list[int]] = {}
    for j, (mol, _) in enumerate(pred):
        free.setdefault(mol, []).append(j)
    for idx in free.values():
        idx.reverse()  # pop() from the end yields the earliest free index
    used = [False] * len(pred)
    tp = fp = fn = 0
    for mol, kt in true:
        idx = free.get(mol)
        if idx:
            j = idx.pop()
            used[j] = True
            kp = pred[j][1]
            tp += min(kt, kp)
            fp += max(kp - kt, 0)
            fn += max(kt - kp, 0)
        else:
            fn += kt
    fp += sum(k for (_, k), u in zip(pred, used, strict=True) if not u)
    return tp, fp, fn


def _merge(terms: Sequence[Term]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in terms:
        out[t.mol] = out.get(t.mol, 0) + t.coef
    return out


def score_pair(pred_terms: Sequence[Term], true_terms: Sequence[Term], mode: Mode = "paper") -> PairCounts:
    """Score predicted against true terms whose ``mol`` fields are already matching keys.

    Use :func:`parse_prediction` / :func:`parse_reference` to get such terms from lines; callers that hold
    canonical molecules already (e.g. a model's decoded output) can pass :class:`Term` objects directly.
    """
    if mode == "paper":
        pred = [(t.mol, t.coef) for t in pred_terms]
        true = [(t.mol, t.coef) for t in true_terms]
        tp, fp, fn = _pair_in_order(pred, true)
        mtp, mfp, mfn = _pair_in_order([(m, 1) for m, _ in pred], [(m, 1) for m, _ in true])
        return PairCounts(tp, fp, fn, mtp, mfp, mfn)
    if mode != "strict":
        raise InputError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    p, t = _merge(pred_terms), _merge(true_terms)
    tp = sum(min(k, p.get(m, 0)) for m, k in t.items())
    fp = sum(max(k - t.get(m, 0), 0) for m, k in p.items())
    fn = sum(max(k - p.get(m, 0), 0) for m, k in t.items())
    mtp = sum(1 for m in t if m in p)
    return PairCounts(tp, fp, fn, mtp, len(p) - mtp, len(t) - mtp)


# --------------------------------------------------------------------------- whole files
@dataclass(slots=True)
class ExampleScore:
    """Scores of one example: top-1 counts, the rank of the first exact beam line, validity, balance."""

    counts: PairCounts
    valid: bool
    first_exact: int | None  # 1-based rank of the first exact-match beam line, None if none
    balance: str | None = None  # set when source lines were given and the prediction is valid


def _check_choice(value: str, choices: Sequence[str], what: str) -> None:
    if value not in choices:
        raise InputError(f"unknown {what} {value!r}; expected one of {', '.join(choices)}")


def score_lines(
    pred_lines: Sequence[str],
    tgt_lines: Sequence[str],
    repr: Repr,
    mode: Mode = "paper",
    *,
    src_lines: Sequence[str] | None = None,
    beam: int = 1,
    pred_path: str | None = None,
    tgt_path: str | None = None,
    src_path: str | None = None,
) -> Iterator[ExampleScore]:
    """Per-example scores (for callers that need more than averages, e.g. scores beside a ceiling).

    Options and line counts are checked at once; lines are parsed lazily, so a malformed line raises
    when the iteration reaches it.
    """
    _check_choice(repr, REPRS, "representation")
    _check_choice(mode, MODES, "mode")
    check_line_counts(
        len(pred_lines),
        len(tgt_lines),
        beam=beam,
        pred_path=pred_path,
        tgt_path=tgt_path,
        n_src=None if src_lines is None else len(src_lines),
        src_path=src_path,
    )
    return _score_lines(pred_lines, tgt_lines, repr, mode, src_lines, beam, pred_path, tgt_path, src_path)


def _score_lines(
    pred_lines: Sequence[str],
    tgt_lines: Sequence[str],
    repr: Repr,
    mode: Mode,
    src_lines: Sequence[str] | None,
    beam: int,
    pred_path: str | None,
    tgt_path: str | None,
    src_path: str | None,
) -> Iterator[ExampleScore]:
    for i, tgt_line in enumerate(tgt_lines):
        true = parse_reference(tgt_line, repr, mode, path=tgt_path, line_no=i + 1)
        top: ParsedPrediction | None = None
        counts: PairCounts | None = None
        first_exact: int | None = None
        for j in range(beam):
            n = i * beam + j
            parsed = parse_prediction(pred_lines[n], repr, mode, path=pred_path, line_no=n + 1)
            c = score_pair(parsed.terms, true, mode)
            if j == 0:
                top, counts = parsed, c
            if first_exact is None and c.em:
                first_exact = j + 1
        assert top is not None and counts is not None
        balance = None
        if src_lines is not None:
            src = source_composition(src_lines[i], repr, path=src_path, line_no=i + 1)
            balance = balance_class(bag_composition(top.raw, repr), src) if top.valid else None
        yield ExampleScore(counts, top.valid, first_exact, balance)


def topk_levels(beam: int, topk: Sequence[int] | None = None) -> list[int]:
    """The k of the top-k exact-match columns: the usual 1/3/5/10 up to the beam width, and the width."""
    ks = set(DEFAULT_TOPK if topk is None else topk) | {beam}
    return sorted(k for k in ks if 1 <= k <= beam)


def evaluate_lines(
    pred_lines: Sequence[str],
    tgt_lines: Sequence[str],
    repr: Repr,
    mode: Mode = "paper",
    *,
    src_lines: Sequence[str] | None = None,
    beam: int = 1,
    topk: Sequence[int] | None = None,
    pred_path: str | None = None,
    tgt_path: str | None = None,
    src_path: str | None = None,
    progress: bool = False,
) -> dict[str, object]:
    """Average every metric over the examples, in % (see the module doc for the two modes).

    ``progress``: a bar on stderr when there are more than 1,000 examples and stderr is a terminal.

    Returns ``{"n", "mode", "repr", "beam", "EM", "JAC", "F1", "mol_JAC", "mol_F1", "VAL",
    ["BAL", "DEF", "EXC", "D+E", "CHG" when src_lines is given], "topk": {"1": EM, "k": ...}}``.
    """
    n = 0
    em = jac = f1 = mjac = mf1 = 0.0
    val = 0
    rates: Counter = Counter()
    levels = topk_levels(beam, topk)
    hits: Counter = Counter()
    examples = score_lines(
        pred_lines,
        tgt_lines,
        repr,
        mode,
        src_lines=src_lines,
        beam=beam,
        pred_path=pred_path,
        tgt_path=tgt_path,
        src_path=src_path,
    )
    desc = f"evaluate {Path(tgt_path).name}" if tgt_path else "evaluate"
    show = progress_wanted(len(tgt_lines), quiet=not progress)
    for ex in track(examples, len(tgt_lines), desc, enabled=show):
        n += 1
        c = ex.counts
        em += c.em
        jac += c.jac
        f1 += c.f1
        mjac += c.mol_jac
        mf1 += c.mol_f1
        val += ex.valid
        if ex.balance is not None:
            rates[ex.balance] += 1
        for k in levels:
            if ex.first_exact is not None and ex.first_exact <= k:
                hits[k] += 1

    def pct(x: float) -> float:
        return 100.0 * x / n

    out: dict[str, object] = {
        "n": n,
        "mode": mode,
        "repr": repr,
        "beam": beam,
        "EM": pct(em),
        "JAC": pct(jac),
        "F1": pct(f1),
        "mol_JAC": pct(mjac),
        "mol_F1": pct(mf1),
        "VAL": pct(val),
    }
    if src_lines is not None:
        for r in RATES:
            out[r] = pct(rates[r])
    out["topk"] = {str(k): pct(hits[k]) for k in levels}
    return out


# --------------------------------------------------------------------------- files and folders
def evaluate_files(
    pred: str | Path,
    tgt: str | Path,
    repr: Repr,
    mode: Mode = "paper",
    *,
    src: str | Path | None = None,
    beam: int = 1,
    topk: Sequence[int] | None = None,
    progress: bool = False,
) -> dict[str, object]:
    """:func:`evaluate_lines` on files; every error names the file and line."""
    _check_choice(repr, REPRS, "representation")
    _check_choice(mode, MODES, "mode")
    pred_lines, tgt_lines, src_lines = read_eval_files(pred, tgt, src, beam=beam)
    return evaluate_lines(
        pred_lines,
        tgt_lines,
        repr,
        mode,
        src_lines=src_lines,
        beam=beam,
        topk=topk,
        pred_path=str(pred),
        tgt_path=str(tgt),
        src_path=None if src is None else str(src),
        progress=progress,
    )


def evaluate_folder(
    pred_dir: str | Path,
    data_dir: str | Path,
    *,
    repr: Repr | None = None,
    mode: Mode = "paper",
    beam: int = 1,
    topk: Sequence[int] | None = None,
    settings: Sequence[str] = TEST_SETTINGS,
    progress: bool = False,
) -> list[dict[str, object]]:
    """Score ``pred_dir/pred-<setting>.txt`` against ``data_dir/tgt-<setting>.txt`` for each test setting.

    The representation comes from the variant folder's name (``ChemAlgebra_F_*`` = formula, ``_S_`` =
    SMILES) unless given; ``src-<setting>.txt`` is used for the balance rates when present.
    """
    if repr is None:
        name = Path(data_dir).resolve().name
        if "ChemAlgebra_" + variant_short(name) not in VARIANTS:
            raise InputError(
                "cannot infer the representation from the folder name (expected ChemAlgebra_{F|S}_T*_x*); give --repr",
                path=str(data_dir),
            )
        repr = variant_props(name)["repr"]  # type: ignore[assignment]
    _check_choice(str(repr), REPRS, "representation")
    records: list[dict[str, object]] = []
    for setting, pred, tgt, src in setting_files(pred_dir, data_dir, settings):
        result = evaluate_files(pred, tgt, repr, mode, src=src, beam=beam, topk=topk, progress=progress)
        records.append({"setting": setting, **result})
    return records
