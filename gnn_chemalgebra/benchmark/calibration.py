"""``gnnca bench calibration``: fit a checkpoint's confidence on validation lines, then measure it on test lines.

Fit (``--fit``, the default): predict each validation file of the model's representation (``src-valid.txt``;
Type-1 variants read as Type 1, Type-2 variants as Type 2, the benchmark's ``bayes`` extent rule, a beam for the
alternatives' model), label each line and each beam entry by exact match with ``tgt-valid.txt``; then
:mod:`gnn_chemalgebra.trust.fit` fits the calibration and builds the in-domain index from the training reactions
(``meta-train.jsonl``: the consumed molecules of each reaction) with its similarity threshold at a low quantile
of the validation lines' similarities, and both are written beside the checkpoint (``<checkpoint>.trust.json`` /
``.trust.npz``). Test lines are never used for fitting.

Score: predict each test file, annotate the records with the sidecars, and compare the raw confidence (the role
head's joint probability) with the calibrated one: ECE (10 bins), AUROC, exact match of the 50 / 80 / 100% most
confident lines. Writes a JSON record (with the command, the files and their line counts) and one PNG per model:
the reliability diagram and the coverage-accuracy curve of each test set.

Prediction records can be kept in ``--records`` (JSON lines per model, file, beam and limit) so a second run
(another limit, a refit) predicts nothing twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data.layout import variant_short
from ..errors import InputError
from ..evaluation.calibration import calibration_summary, coverage_curve, reliability_bins
from ..evaluation.metrics import parse_prediction, parse_reference, score_pair
from ..io import atomic_write_json, atomic_write_lines, read_lines, sha256_file
from .line_sets import LineSet, chemist_sets, fit_sets, line_sets

if TYPE_CHECKING:
    from ..inference.predictor import Predictor

COVERAGES = (0.5, 0.8, 1.0)


# --------------------------------------------------------------------------- predicting and labelling
def predict_set(
    predictor: Predictor, ls: LineSet, beam: int, limit: int | None, cache: Path | None, tag: str, log: Callable
) -> list[dict[str, Any]]:
    """The ``--json`` records of the first ``limit`` lines of ``ls`` (all when ``None``), from the cache when a
    complete file is there."""
    from ..inference.predict_command import predict_lines

    lines = read_lines(ls.src)[: limit or None]
    path = None
    if cache is not None:
        # records made with a second opinion are other records (a cache from before must not stand in for them)
        so = "-so" if predictor.second_opinion and predictor.type1 is not None else ""
        name = f"{tag}-{variant_short(ls.variant)}-{ls.split}-lt{ls.line_type}-b{beam}-n{len(lines)}{so}.jsonl"
        path = cache / name
        if path.is_file():
            recs = [json.loads(x) for x in read_lines(path)]
            if len(recs) == len(lines):
                log(f"{ls.name}: {len(recs)} records from {path}")
                return recs
    t0 = time.perf_counter()
    before = predictor.byproducts
    predictor.byproducts = ls.convention  # the convention the targets are written in
    try:
        res = predict_lines(lines, predictor, source_name=str(ls.src), line_type=str(ls.line_type), beam=beam)
    finally:
        predictor.byproducts = before
    if len(res.records) != len(lines):
        raise InputError(f"{len(lines) - len(res.records)} line(s) could not be predicted", path=str(ls.src))
    log(f"{ls.name}: predicted {len(lines)} lines (beam {beam}) in {time.perf_counter() - t0:.0f} s")
    if path is not None:
        atomic_write_lines(path, (json.dumps(r) for r in res.records))
    return res.records


def exact_labels(predictions: Sequence[str], targets: Sequence[str], repr: str) -> list[bool]:
    """Exact match of each prediction line with its target (the benchmark's paper-mode scorer)."""
    return [
        score_pair(parse_prediction(p, repr).terms, parse_reference(t, repr)).em  # type: ignore[arg-type]
        for p, t in zip(predictions, targets, strict=True)
    ]


def limiting_targets(
    sources: Sequence[str], meta_file: Path, repr: str, *, own_extent: bool = False
) -> list[list[Any]]:
    """Each line's gold reaction (``nu`` of ``meta-<split>.jsonl``) written at the limiting extent of the line's
    amounts, as the decoder writes a line (per-term roles, then ``source + xi * nu``): what a Type-2 line predicted
    with ``--extent limiting`` should say. A gold reaction that consumes nothing keeps its own extent;
    ``own_extent``: every line at its own (the benchmark's target again: a check of the rebuild)."""
    from ..algebra.extent import group_terms, limiting_extent, term_roles
    from ..chem.bag import bag_totals
    from ..errors import ChemAlgebraError
    from ..inference.decode import apply_extent

    metas = [json.loads(x) for x in read_lines(meta_file)]
    if len(metas) < len(sources):
        raise InputError(f"{len(metas)} meta lines for {len(sources)} source lines", path=str(meta_file))
    out = []
    for src, meta in zip(sources, metas, strict=False):
        terms = parse_prediction(src, repr).terms  # type: ignore[arg-type]
        mols = {t.mol for t in terms}
        full = {m: int(v) for m, v in meta["nu"]}
        present = {m: v for m, v in full.items() if m in mols}
        new = [(m, v) for m, v in full.items() if m not in mols and v > 0]
        try:
            xi = int(meta["xi"]) if own_extent else limiting_extent(bag_totals(terms), full)
        except ChemAlgebraError:
            xi = int(meta["xi"])
        out.append(apply_extent(terms, present, new, xi, term_roles(terms, full, 2, group_terms(terms))))
    return out


def predict_limiting(
    predictor: Predictor, ls: LineSet, cache: Path | None, tag: str, log: Callable, limit: int | None = None
) -> tuple[list[dict[str, Any]], list[bool]]:
    """A Type-2 validation file predicted with ``--extent limiting`` (beam 1) and each line's exact match with
    :func:`limiting_targets`."""
    before = predictor.decoder.extent
    predictor.decoder.extent = "limiting"
    # the SMILES decoder's edit-search cache holds what the earlier passes found; a pass from it writes what a fresh
    # one does (tests/inference/test_edit_decode_fast.py), so clearing it only frees the memory
    predictor.decoder.edit_cache.clear()
    try:
        recs = predict_set(predictor, ls, 1, limit, cache, f"{tag}-limiting", log)
    finally:
        predictor.decoder.extent = before
        predictor.decoder.edit_cache.clear()
    gold = limiting_targets(read_lines(ls.src)[: len(recs)], ls.src.parent / f"meta-{ls.split}.jsonl", predictor.repr)
    labels = [
        score_pair(parse_prediction(r["prediction"], predictor.repr).terms, g).em  # type: ignore[arg-type]
        for r, g in zip(recs, gold, strict=True)
    ]
    return recs, labels


def beam_labels(records: Sequence[dict[str, Any]], targets: Sequence[str], repr: str) -> list[list[bool]]:
    """Exact match of every beam entry of every record."""
    out = []
    for r, t in zip(records, targets, strict=True):
        ref = parse_reference(t, repr)  # type: ignore[arg-type]
        out.append([score_pair(parse_prediction(e["prediction"], repr).terms, ref).em for e in r.get("beam") or []])  # type: ignore[arg-type]
    return out


# --------------------------------------------------------------------------- fitting
def fit_trust(
    predictor: Predictor,
    checkpoint: Path,
    valid: Sequence[LineSet],
    train_meta: Sequence[Path],
    *,
    beam: int = 5,
    quantile: float = 0.02,
    max_sets: int = 32768,
    cache: Path | None = None,
    tag: str = "model",
    log: Callable = print,
    index: Any = None,
    coefficient_meta: Sequence[Path] = (),
    limit: int | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Fit the calibration on ``valid`` and the domain index on ``train_meta``; returns the
    :class:`~gnn_chemalgebra.trust.annotate.Trust` and a description of what it was fitted on. ``index``: an
    in-domain index to keep as it is (the one already beside the checkpoint) instead of building one.

    ``valid`` may hold shifted validation files (another split than ``valid``, e.g. ``valid_out``): they join
    the calibration's lines (never the domain threshold's or the limiting pass'), and with ``coefficient_meta``
    (the training lines' ``meta-train.jsonl``) they fit the in-domain flag's coefficient rule. ``limit``: the first
    lines of each file only (``None``: all)."""
    from ..trust.annotate import Trust
    from ..trust.fit import fit_calibrator, fit_coefficient_rule, fit_domain_index

    repr = predictor.repr
    records: list[dict[str, Any]] = []
    labels: list[bool] = []
    blabels: list[list[bool]] = []
    files = []
    written: list[dict[str, Any]] = []  # the valid lines as the benchmark's rule writes them: the domain threshold's
    shifted_recs: list[tuple[dict[str, Any], bool]] = []  # the shifted ones, labelled: the coefficient rule's
    for ls in valid:
        recs = predict_set(predictor, ls, beam, limit, cache, tag, log)
        tgts = read_lines(ls.tgt)[: len(recs)]
        lab = exact_labels([r["prediction"] for r in recs], tgts, repr)
        records += recs
        labels += lab
        blabels += beam_labels(recs, tgts, repr)
        (written.extend(recs) if ls.split == "valid" else shifted_recs.extend(zip(recs, lab, strict=True)))
        files.append({"src": str(ls.src), "tgt": str(ls.tgt), "lines": len(recs), "line_type": ls.line_type})
    for ls in [x for x in valid if x.line_type == 2 and x.split == "valid"]:  # the same lines as a chemist's amounts
        recs, lab = predict_limiting(predictor, ls, cache, tag, log, limit)
        records += recs
        labels += lab
        blabels += [[y] for y in lab]
        gold = str(ls.src.parent / f"meta-{ls.split}.jsonl")
        files.append({"src": str(ls.src), "gold": gold, "lines": len(recs), "line_type": 2, "extent": "limiting"})
    fitted_on = {"files": files, "lines": len(records), "beam": beam, "EM": float(np.mean(labels))}
    cal = fit_calibrator(records, labels, blabels, repr=repr, fitted_on=fitted_on)
    if index is None:
        index = fit_domain_index(train_meta, written, repr, quantile, max_sets, log)
    else:
        log(f"domain index kept: threshold {index.threshold:.3f}")
    if coefficient_meta:
        index.coefficients = fit_coefficient_rule(coefficient_meta, shifted_recs, written, log=log)
    meta = _trust_meta(predictor)
    return Trust(repr, cal, index, meta), {"calibration": fitted_on, "domain": index.info, **meta}


def _trust_meta(predictor: Predictor) -> dict[str, Any]:
    """What a calibration was fitted under: the extent rule, the decode settings, the edit and Type-1 models."""
    from ..inference.trust_stage import (
        edit_model_path,
        edit_model_sha256,
        fitted_settings,
        type1_model_path,
        type1_model_sha256,
    )

    meta: dict[str, Any] = {"extent": "bayes", **fitted_settings(predictor)}
    if predictor.repr == "smiles":
        edit = edit_model_path(predictor)
        meta.update(edit_checkpoint=None if edit is None else edit.name, edit_sha256=edit_model_sha256(predictor))
    type1 = type1_model_path(predictor)
    if type1 is not None:  # the Type-1 lines' calibration belongs to the model that wrote them
        meta.update(type1_checkpoint=type1.name, type1_sha256=type1_model_sha256(predictor))
    return meta


# --------------------------------------------------------------------------- scoring
def _score_line(s: dict[str, Any]) -> str:
    """One scored test set in a line: EM, then ECE, AUROC and EM@80 raw -> calibrated."""
    raw, cal = s["raw"], s["calibrated"]
    return (
        f"{s['set']} ({s['lines']} lines): EM {100 * cal['EM']:.2f}; ECE {100 * raw['ECE']:.1f}% -> "
        f"{100 * cal['ECE']:.1f}%, AUROC {raw['AUROC'] or 0:.3f} -> {cal['AUROC'] or 0:.3f}, EM@80 "
        f"{100 * raw['EM@80']:.2f} -> {100 * cal['EM@80']:.2f}"
    )


def score_set(trust: Any, records: list[dict[str, Any]], ls: LineSet, repr: str) -> dict[str, Any]:
    """Raw and calibrated confidence of one test set's records against its targets."""
    from ..trust.calibrators import raw_confidence

    tgts = read_lines(ls.tgt)[: len(records)]
    y = exact_labels([r["prediction"] for r in records], tgts, repr)
    raw = [raw_confidence(r) for r in records]
    trust.annotate_many(records)
    cal = [float(r["confidence"]) for r in records]
    dom = [r.get("in_domain") for r in records]
    out = {
        "set": ls.name,
        "src": str(ls.src),
        "lines": len(records),
        "line_type": ls.line_type,
        "raw": calibration_summary(raw, y, coverages=COVERAGES),
        "calibrated": calibration_summary(cal, y, coverages=COVERAGES),
        "curve": {
            "raw": coverage_curve(raw, y, 50),
            "calibrated": coverage_curve(cal, y, 50),
        },
    }
    if any(d is not None for d in dom):
        ins = np.array([bool(d) for d in dom])
        ya = np.array(y, dtype=float)
        out["in_domain"] = {
            "share": float(ins.mean()),
            "EM_in": float(ya[ins].mean()) if ins.any() else None,
            "EM_out": float(ya[~ins].mean()) if (~ins).any() else None,
        }
    return out


def plot_sets(scores: Sequence[dict[str, Any]], title: str, path: Path) -> Path:
    """Reliability diagram (calibrated and raw, 10 bins) and coverage-accuracy curve per test set, one row each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(scores)
    fig, axes = plt.subplots(n, 2, figsize=(10, 4.2 * n), squeeze=False)
    for row, s in zip(axes, scores, strict=True):
        ax = row[0]
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--", label="perfect")
        for kind, color in (("raw", "#d95f02"), ("calibrated", "#1b9e77")):
            bins = s[kind]["bins"]
            xs = [b["confidence"] for b in bins]
            ys = [b["accuracy"] for b in bins]
            sizes = [max(8.0, 300.0 * b["n"] / s["lines"]) for b in bins]
            ax.plot(xs, ys, color=color, lw=1.2)
            ax.scatter(xs, ys, s=sizes, color=color, label=f"{kind}: ECE {100 * s[kind]['ECE']:.1f}%", zorder=3)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("stated confidence (bin mean)")
        ax.set_ylabel("exact match in bin")
        ax.set_title(f"{s['set']} ({s['lines']:,} lines): reliability")
        ax.legend(loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
        ax = row[1]
        for kind, color in (("raw", "#d95f02"), ("calibrated", "#1b9e77")):
            c = s["curve"][kind]
            auc = s[kind]["AUROC"]
            label = f"{kind}: AUROC {auc:.3f}" if auc is not None else kind
            ax.plot([p["coverage"] for p in c], [100 * p["accuracy"] for p in c], color=color, label=label)
        ax.axvline(0.8, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("coverage (most confident share of lines kept)")
        ax.set_ylabel("exact match of the lines kept (%)")
        ax.set_title(f"{s['set']}: coverage-accuracy")
        ax.legend(loc="lower left", fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _bins_table(scores: Sequence[dict[str, Any]]) -> str:
    head = "| set | lines | EM | ECE raw -> cal | AUROC raw -> cal | EM@50 | EM@80 | EM@100 |"
    rows = [head, "|---|---|---|---|---|---|---|---|"]
    for s in scores:
        r, c = s["raw"], s["calibrated"]
        auc = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        rows.append(
            f"| {s['set']} | {s['lines']:,} | {100 * c['EM']:.2f} | {100 * r['ECE']:.1f}% -> {100 * c['ECE']:.1f}% | "
            f"{auc(r['AUROC'])} -> {auc(c['AUROC'])} | {100 * c['EM@50']:.2f} | {100 * c['EM@80']:.2f} | "
            f"{100 * c['EM@100']:.2f} |"
        )
    return "\n".join(rows)


def run_calibration(
    checkpoints: Sequence[Path],
    built: Path,
    *,
    train: Sequence[Path] | None = None,
    valid_variants: Sequence[str] = ("T1_x1", "T2_x1"),
    test_variants: Sequence[str] = ("T1_x1", "T2_x1"),
    split: str = "test_in",
    limit: int | None = None,
    fit: bool = True,
    keep_index: bool = False,
    fit_beam: int = 5,
    beam: int = 1,
    quantile: float = 0.02,
    max_sets: int = 32768,
    records: Path | None = None,
    out: Path = Path("results/calibration"),
    tag: str = "",
    command: str = "",
    log: Callable = print,
    shifted: Path | None = None,
    shifted_splits: Sequence[str] = ("valid_out", "valid_scaffold"),
    chemist: Path | None = None,
    fit_limit: int | None = None,
) -> dict[str, Any]:
    """Fit (or load) each checkpoint's sidecars, score the test sets, write ``calibration[_TAG].json`` and one PNG
    per checkpoint; returns the record. ``keep_index``: refit the calibration only, keeping the in-domain index
    already beside the checkpoint (no training reactions read). Type-1 lines of a formula pair are predicted with
    a second opinion (the mixed model's line), as ``gnnca predict --json`` writes them. ``shifted``: a folder of
    shifted validation files (``experiments/shift_split.py``): its ``shifted_splits`` of the valid variants are
    fitted on too, and fit the in-domain flag's coefficient rule. ``chemist``: a ``gnnca data chemist`` folder whose
    validation lines (the chemist's convention, Type 1) are fitted on too and whose test lines are scored too.
    ``fit_limit``: fit on the first lines of each validation file only."""
    import torch

    from ..inference.predictor import Predictor, PredictorOptions
    from ..trust.annotate import Trust
    from ..trust.fit import training_meta
    from ..trust.sidecar import sidecar_paths

    if keep_index and not fit:
        raise InputError("--keep-index refits the calibration: it cannot go with --no-fit")
    torch.set_num_threads(1)
    result: dict[str, Any] = {"command": command, "built": str(built), "split": split, "limit": limit, "models": []}
    for ckpt in checkpoints:
        ckpt = Path(ckpt)
        if not ckpt.is_file():
            raise InputError("no such checkpoint", path=str(ckpt))
        predictor = Predictor.from_checkpoint(ckpt, options=PredictorOptions(extent="bayes", second_opinion=True))
        repr = predictor.repr
        name = ckpt.name.removesuffix(".pt")
        model: dict[str, Any] = {"checkpoint": str(ckpt), "checkpoint_sha256": sha256_file(ckpt), "repr": repr}
        if fit:
            valid = fit_sets(built, repr, valid_variants, shifted, shifted_splits)
            valid += chemist_sets(chemist, repr, "valid")
            kept = Trust.domain_for(ckpt) if keep_index else None
            if keep_index and kept is None:
                raise InputError("no in-domain index beside the checkpoint to keep (none, or sidecars written for "
                                 "another checkpoint): fit without --keep-index",
                                 path=str(ckpt))  # fmt: skip
            trust, info = fit_trust(
                predictor,
                ckpt,
                valid,
                [] if keep_index else [m for t in train or [built] for m in training_meta(t, repr)],
                beam=fit_beam,
                quantile=quantile,
                max_sets=max_sets,
                cache=records,
                tag=name,
                log=log,
                index=kept,
                coefficient_meta=training_meta((train or [built])[0], repr) if shifted is not None else (),
                limit=fit_limit,
            )
            js, npz = trust.save(ckpt)
            model["sidecars"] = {str(p): p.stat().st_size for p in (js, npz) if p is not None}
            model["fitted_on"] = info
            log(f"wrote {js}" + (f" and {npz}" if npz else ""))
        trust = Trust.load_for(ckpt)
        if trust is None:
            raise InputError(f"no calibration beside the checkpoint ({sidecar_paths(ckpt)[0].name}): run with --fit")
        model.setdefault("fitted_on", {"calibration": trust.calibrator.fitted_on if trust.calibrator else None})
        scores = []
        for ls in line_sets(built, repr, test_variants, split) + chemist_sets(chemist, repr, "test"):
            recs = predict_set(predictor, ls, beam, limit, records, name, log)
            scores.append(score_set(trust, recs, ls, repr))
            log(_score_line(scores[-1]))
        suffix = f"_{tag}" if tag else ""
        png = plot_sets(scores, f"{ckpt.name}: confidence on {split}" + (f", first {limit:,} lines" if limit else ""),
                        out / f"calibration_{name}{suffix}.png")  # fmt: skip
        model["plot"] = str(png)
        model["sets"] = scores
        model["table"] = _bins_table(scores)
        result["models"].append(model)
    path = out / f"calibration{('_' + tag) if tag else ''}.json"
    atomic_write_json(path, result)
    result["path"] = str(path)
    return result


__all__ = [
    "LineSet",
    "beam_labels",
    "chemist_sets",
    "exact_labels",
    "fit_sets",
    "fit_trust",
    "line_sets",
    "plot_sets",
    "reliability_bins",
    "run_calibration",
    "score_set",
]
