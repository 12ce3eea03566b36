"""``gnnca bench conformal``: fit conformal prediction sets on validation lines (split conformal).

For each checkpoint: predict the first ``limit`` lines of each validation file (``src-valid.txt``; Type-1
variants read as Type 1, Type-2 as Type 2, the benchmark's ``bayes`` extent rule, a beam of ``k``, as
``gnnca predict --extent bayes --top-k k --json`` writes them), give each line its ``top_k`` alternatives with
the calibrated probabilities of the sidecar beside the checkpoint, mark which alternative is the right line (exact
match with ``tgt-valid.txt``), and keep the quantiles of the nonconformity scores per line kind, per k (1..k) and
per coverage (:mod:`gnn_chemalgebra.inference.conformal`). Test lines are never read. The sidecar is written
atomically to ``--out`` (JSON, no pickle); the prediction records can be kept in ``--records`` for a refit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import atomic_write_json, read_lines, sha256_file
from .calibration import exact_labels, predict_set
from .line_sets import chemist_sets, line_sets


def parse_variants(spec: str) -> list[tuple[str, int | None]]:
    """``T1_x1:2000,T2_x1:1000`` -> ``[("T1_x1", 2000), ("T2_x1", 1000)]`` (no ``:N``: every line)."""
    out: list[tuple[str, int | None]] = []
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        name, _, n = item.partition(":")
        if n and (not n.isdigit() or int(n) < 1):
            raise InputError(f"--valid: {item!r}: the line count after ':' must be a positive whole number")
        out.append((name, int(n) if n else None))
    if not out:
        raise InputError("--valid names no variant")
    return out


def labelled_rows(
    records: Sequence[dict[str, Any]], targets: Sequence[str], repr: str
) -> list[tuple[list[float], list[bool]]]:
    """Per record: the probabilities of its ``top_k`` rows and whether each row is the right line."""
    out = []
    for rec, tgt in zip(records, targets, strict=True):
        rows = rec.get("top_k") or []
        right = exact_labels([r["prediction"] for r in rows], [tgt] * len(rows), repr)
        out.append(([float(r["probability"]) for r in rows], right))
    return out


def fit_model(
    checkpoint: Path,
    built: Path,
    variants: Sequence[tuple[str, int | None]],
    *,
    k: int,
    coverages: Sequence[float],
    score: str,
    cache: Path | None,
    log: Callable,
    shifted: Path | None = None,
    chemist: tuple[Path, int | None] | None = None,
) -> Any:
    """The :class:`~gnn_chemalgebra.inference.conformal.ModelFit` of one checkpoint; with ``shifted`` (a folder of
    ``experiments/shift_split.py``) also the quantiles of Type-2 lines beyond the training lines' largest
    coefficient, from its ``valid_out`` files (the same variants, the same limits). ``chemist``: a ``gnnca data
    chemist`` folder and a line limit: its validation lines (Type 1, real by-products) join the fit."""
    from ..inference.conformal import ModelFit, fit_kind
    from ..inference.predictor import Predictor, PredictorOptions
    from ..inference.trust_stage import trust_for
    from ..trust.annotate import annotate_records
    from ..trust.calibrators import calibration_code
    from ..trust.coefficients import applies
    from ..trust.fit import training_max_coefficient, training_meta
    from ..trust.sidecar import sidecar_paths

    if not checkpoint.is_file():
        raise InputError("no such checkpoint", path=str(checkpoint))
    predictor = Predictor.from_checkpoint(checkpoint, options=PredictorOptions(extent="bayes", second_opinion=True))
    repr = predictor.repr
    trust = trust_for(predictor)
    trust_json = sidecar_paths(checkpoint)[0]
    if trust is None:
        log(f"{checkpoint.name}: no calibration sidecar for it: the sets read the raw confidences")
    name = checkpoint.name.removesuffix(".pt")
    rows: dict[int, list[tuple[list[float], list[bool]]]] = defaultdict(list)
    files: dict[int, list[dict[str, Any]]] = defaultdict(list)
    prefix = "S_" if repr == "smiles" else "F_"
    beyond_rows: dict[int, list[tuple[list[float], list[bool]]]] = defaultdict(list)
    beyond_files: dict[int, list[dict[str, Any]]] = defaultdict(list)
    max_coef = None if shifted is None else training_max_coefficient(training_meta(built, repr))
    todo = []
    for variant, limit in variants:
        if variant[:2] in ("F_", "S_") and variant[:2] != prefix:
            continue  # a variant of the other representation: the other checkpoint's
        todo += [(ls, False, limit) for ls in line_sets(built, repr, [variant], "valid")]
        if shifted is not None:
            todo += [(ls, True, limit) for ls in line_sets(shifted, repr, [variant], "valid_out", missing_ok=True)]
    if chemist is not None:
        todo += [(ls, False, chemist[1]) for ls in chemist_sets(chemist[0], repr, "valid")]
    for ls, beyond, limit in todo:
        recs = predict_set(predictor, ls, k, limit, cache, name, log)
        annotate_records(recs, trust, repr, top_k=k, domain=False)
        labelled = labelled_rows(recs, read_lines(ls.tgt)[: len(recs)], repr)
        for rec, row in zip(recs, labelled, strict=True):
            far = beyond and max_coef is not None and applies(rec, max_coef)
            if beyond and not far:
                continue  # a shifted line the rule does not read (a fallback): in neither fit
            (beyond_rows if far else rows)[calibration_code(rec)].append(row)
        em = sum(r[1][0] for r in labelled if r[1]) / max(len(labelled), 1)
        (beyond_files if beyond else files)[ls.line_type].append(
            {"src": str(ls.src), "lines": len(recs), "EM": round(em, 4)}
        )
        log(f"{ls.name}: {len(recs)} validation lines, EM {100 * em:.2f}")
    if not rows:
        raise InputError(f"--valid names no variant in {checkpoint.name}'s representation ({repr})")
    kinds = {kind: fit_kind(r, range(1, k + 1), coverages, score, files[kind]) for kind, r in sorted(rows.items())}
    beyond_kinds = {
        kind: fit_kind(r, range(1, k + 1), coverages, score, beyond_files[kind]) for kind, r in beyond_rows.items()
    }
    return ModelFit(
        checkpoint.name,
        sha256_file(checkpoint),
        None if trust is None else sha256_file(trust_json),
        repr,
        kinds,
        beyond_kinds,
        max_coef if beyond_kinds else None,
    )


def run_conformal(
    checkpoints: Sequence[Path],
    built: Path,
    *,
    valid: str = "T1_x1,T2_x1",
    k: int = 5,
    coverages: Sequence[float] | None = None,
    score: str = "lac",
    records: Path | None = None,
    out: Path = Path("results/conformal/conformal.json"),
    command: str = "",
    log: Callable = print,
    shifted: Path | None = None,
    chemist: tuple[Path, int | None] | None = None,
) -> dict[str, Any]:
    """Fit every checkpoint, write the sidecar to ``out``; returns it (with ``path``). ``shifted``: a folder of
    shifted validation files whose ``valid_out`` lines fit the quantiles of lines beyond the training
    coefficients; ``chemist``: a chemist's-sets folder and line limit whose validation lines join the fit
    (:func:`fit_model`)."""
    import torch

    from ..inference.conformal import COVERAGES, SCORES, ConformalTable

    if score not in SCORES:
        raise InputError(f"--score must be one of {', '.join(SCORES)}, got {score!r}")
    if k < 1:
        raise InputError(f"--top-k must be at least 1, got {k}")
    coverages = tuple(coverages or COVERAGES)
    for c in coverages:
        if not 0.0 < c < 1.0:
            raise InputError(f"--coverages: each must lie strictly between 0 and 1, got {c}")
    if out.is_dir():
        raise InputError("--out is a folder; name the sidecar file", path=str(out))
    if shifted is not None and not shifted.is_dir():
        raise InputError("no such folder of shifted validation files", path=str(shifted))
    torch.set_num_threads(1)
    variants = parse_variants(valid)
    models = [
        fit_model(
            Path(c),
            built,
            variants,
            k=k,
            coverages=coverages,
            score=score,
            cache=records,
            log=log,
            shifted=shifted,
            chemist=chemist,
        )
        for c in checkpoints
    ]
    fitted = {"command": command, "built": str(built), "valid": valid, "top_k": k, "coverages": list(coverages)}
    if shifted is not None:
        fitted["shifted"] = str(shifted)
    if chemist is not None:
        fitted["chemist"] = {"folder": str(chemist[0]), "limit": chemist[1]}
    table = ConformalTable(score, models, fitted)
    d = table.to_json()
    atomic_write_json(out, d)
    for m in models:
        for kind, kf in sorted(m.kinds.items()):
            q = kf.quantiles[k].get(0.9, "-")
            log(f"{m.checkpoint} Type {kind}: {kf.lines} lines, outside top-{k}: {kf.outside[k]}, q(0.9) = {q}")
        for kind, kf in sorted(m.beyond.items()):
            q = kf.quantiles[k].get(0.9, "-")
            log(f"{m.checkpoint} Type {kind} beyond coefficient {m.max_coef}: {kf.lines} lines, outside top-{k}: "
                f"{kf.outside[k]}, q(0.9) = {q}")  # fmt: skip
    return {**d, "path": str(out)}
