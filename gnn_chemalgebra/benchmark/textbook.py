"""``gnnca bench textbook``: the textbook reactions (``data/textbook``) through ``gnnca predict``'s path, scored per
part and input style.

Each row is predicted in three styles (a SMILES bag, a formula bag, a reaction SMILES naming the main products),
as ``gnnca predict --json`` reads a user's line: coefficients are amounts (``--extent limiting``) and every line is
a Type-1 line (``--line-type 1``: the products are new molecules, none is in the flask yet), so the written line
is the products with their by-products and every unconsumed reagent written back. A line is right when it equals
the expected line molecule for molecule and coefficient for coefficient after the project's canonicalisation
(``gnnca evaluate --mode strict``: SMILES canonical, formulas in Hill order, repeated molecules merged).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.textbook import DEFAULT_DIR, PARTS, STYLES, TextbookReaction, read_textbook
from ..errors import InputError
from ..inference.options import PredictOptions

STYLE_REPR = {"smiles": "smiles", "formula": "formula", "reaction": "smiles"}
COUNTS = ("lines", "right", "right_top3", "wrong_confident", "right_abstained", "fallbacks", "refused", "by_rule")


@dataclass
class TextbookOptions:
    """What ``gnnca bench textbook`` runs: the rows, the models, and how a line is read and judged."""

    part: str = "all"
    styles: Sequence[str] = STYLES
    data: Path = DEFAULT_DIR
    checkpoints: Sequence[Path] = ()
    threshold: float = 0.6
    limit: int = 0
    # how a line is read and predicted: gnnca predict's options (amounts, every product new, the 3 best lines)
    predict: PredictOptions = field(default_factory=lambda: textbook_predict())


def textbook_predict(**changes: Any) -> PredictOptions:
    """``gnnca predict``'s options as the textbook reads its lines (``--extent limiting --line-type 1 --top-k 3``,
    a refused line kept in its place), with ``changes``."""
    base = {"extent": "limiting", "line_type": "1", "top_k": 3}
    return PredictOptions(input="-", skip_invalid=True, **{**base, **changes})


def _check(opts: TextbookOptions) -> None:
    if opts.part not in (*PARTS, "all"):
        raise InputError(f"--part must be dev, held_out or all, got {opts.part!r}")
    bad = [s for s in opts.styles if s not in STYLES]
    if bad or not opts.styles:
        raise InputError(f"--styles takes {', '.join(STYLES)} (comma-separated), got {','.join(opts.styles)!r}")
    if not 0.0 <= opts.threshold <= 1.0:
        raise InputError(f"--threshold must lie in [0, 1], got {opts.threshold}")
    if opts.predict.top_k < 1 or opts.limit < 0:
        raise InputError("--top-k must be at least 1 and --limit at least 0")


def textbook_rows(opts: TextbookOptions) -> list[TextbookReaction]:
    """The rows scored: every row of the part(s), or the first ``limit`` of each part."""
    _check(opts)
    rows = read_textbook(opts.part, opts.data)
    if not opts.limit:
        return rows
    taken: Counter = Counter()
    out = []
    for r in rows:
        taken[r.part] += 1
        if taken[r.part] <= opts.limit:
            out.append(r)
    return out


class _Models:
    """The predictor stack of ``gnnca predict`` per representation: the bundled models, or the given checkpoints
    (each serves the representation it reads)."""

    def __init__(self, opts: TextbookOptions) -> None:
        from ..inference.pipeline import Models
        from ..inference.plan import resolve

        base = opts.predict
        plan = resolve(base, domain=True)  # --extent, --line-type and --set as gnnca predict checks them
        self.by_repr: dict[str, Models] = {}
        self.names: dict[str, str] = {}
        if not opts.checkpoints:
            self.bundled: Models | None = Models(plan, second_opinion=True)
            return
        self.bundled = None
        for path in opts.checkpoints:
            if not Path(path).is_file():
                raise InputError("checkpoint not found", path=str(path))
            pred = Models(resolve(_with(base, checkpoint=Path(path)), domain=True), second_opinion=True)
            fixed = pred.fixed()
            assert fixed is not None  # a checkpoint was named
            repr = fixed.repr
            if repr in self.by_repr:
                raise InputError(f"two checkpoints read {repr}: give one per representation", path=str(path))
            self.by_repr[repr], self.names[repr] = pred, str(path)

    def predict(self, lines: list[str], repr: str) -> tuple[list[dict[str, Any] | None], str]:
        """One record per line (``None`` where the line was refused, with its message in the record's place)."""
        from ..inference.plan import resolve
        from ..inference.predict_command import build_pipeline, collect
        from ..inference.run import default_checkpoint
        from ..inference.source import text_lines

        models = self.bundled if self.bundled is not None else self.by_repr.get(repr)
        if models is None:
            raise InputError(f"no checkpoint reads {repr}: give one with --checkpoint or leave it out")
        plan = resolve(_with(models.opts, repr=repr), domain=True)
        pipeline = build_pipeline(plan, models=models)
        stream = pipeline.stream("<textbook>")
        res = collect(pipeline, stream, text_lines(lines, plan.max_chars, "<textbook>"))
        out: list[dict[str, Any] | None] = [None] * len(lines)
        for rec in res.records:
            out[rec["line"] - 1] = rec
        for n, err in res.refused:
            out[n - 1] = {"line": n, "error": err}
        return out, self.names.get(repr) or str(default_checkpoint(repr, plan.byproducts))


def _file_fact(path: str | Path) -> dict[str, str]:
    """A file as a record names it: relative to the working folder where it lies below it, with its sha256."""
    from ..io import sha256_file

    p = Path(path).resolve()
    try:
        shown = str(p.relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = str(path)
    return {"path": shown, "sha256": sha256_file(p)} if p.is_file() else {"path": shown}


def _with(opts: Any, **changes: Any) -> Any:
    from dataclasses import replace

    return replace(opts, **changes)


def _right(prediction: str, expected: str, repr: str) -> bool:
    from ..evaluation.metrics import parse_prediction, parse_reference, score_pair

    if not prediction:
        return False
    pred = parse_prediction(prediction, repr, "strict").terms  # type: ignore[arg-type]
    return score_pair(pred, parse_reference(expected, repr, "strict"), "strict").em  # type: ignore[arg-type]


def score_record(row: TextbookReaction, style: str, rec: dict[str, Any] | None, threshold: float) -> dict[str, Any]:
    """One line's record: what was written, whether it is right (top-1, within the top k), and whether the trust
    fields flag it (confidence below ``threshold`` or out of domain)."""
    repr = STYLE_REPR[style]
    expected = row.expected(style)
    out: dict[str, Any] = {
        "id": row.id, "class": row.cls, "area": row.area, "part": row.part, "style": style,
        "source": row.source(style), "expected": expected,
    }  # fmt: skip
    if rec is None or "error" in rec:
        return out | {"prediction": "", "right": False, "right_top_k": False, "refused": True,
                      "error": (rec or {}).get("error", "no record")}  # fmt: skip
    top = [t["prediction"] for t in rec.get("top_k") or []] or [rec["prediction"]]
    confidence = float(rec.get("confidence") or 0.0)
    in_domain = rec.get("in_domain")
    right = _right(rec["prediction"], expected, repr)
    return out | {
        "prediction": rec["prediction"],
        "right": right,
        "right_top_k": right or any(_right(p, expected, repr) for p in top),
        "top_k": top,
        "confidence": confidence,
        "calibrated": bool(rec.get("calibrated")),
        "in_domain": in_domain,
        "flagged": confidence < threshold or in_domain is False,
        "fallback": bool(rec.get("fallback")),
        "refused": False,
        "written_by": rec.get("written_by", "model"),  # the model, or an explicit rule (docs/rules.md)
    }


def summarise(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """The counts of a group of line records (see :data:`COUNTS`)."""
    c = dict.fromkeys(COUNTS, 0)
    for r in records:
        c["lines"] += 1
        c["right"] += r["right"]
        c["right_top3"] += r["right_top_k"]
        c["refused"] += r["refused"]
        if r["refused"]:
            continue
        c["wrong_confident"] += not r["right"] and not r["flagged"]
        c["right_abstained"] += r["right"] and r["flagged"]
        c["fallbacks"] += r["fallback"]
        c["by_rule"] += r.get("written_by", "model").startswith("rule:")
    return c


def run_textbook(opts: TextbookOptions, log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Predict every row in every style; per part and style the counts, per class the right lines, and the
    per-line records."""
    rows = textbook_rows(opts)
    models = _Models(opts)
    records: list[dict[str, Any]] = []
    checkpoints: dict[str, str] = {}
    for style in opts.styles:
        log(f"textbook: {len(rows)} {style} lines")
        recs, checkpoints[style] = models.predict([r.source(style) for r in rows], STYLE_REPR[style])
        records += [score_record(r, style, rec, opts.threshold) for r, rec in zip(rows, recs, strict=True)]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    by_class: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in records:
        groups[(r["part"], r["style"])].append(r)
        by_class[r["class"]][r["style"]][0] += r["right"]
        by_class[r["class"]][r["style"]][1] += 1
    parts = [p for p in PARTS if any(r.part == p for r in rows)]
    table = [{"part": p, "style": s, **summarise(groups[(p, s)])} for p in parts for s in opts.styles]
    return {
        "settings": {
            "part": opts.part,
            "styles": list(opts.styles),
            "extent": opts.predict.extent,
            "line_type": opts.predict.line_type,
            "threshold": opts.threshold,
            "top_k": opts.predict.top_k,
            "limit": opts.limit,
            "settings": list(opts.predict.settings),
            "scoring": "exact match, gnnca evaluate --mode strict",
        },
        "checkpoints": {style: _file_fact(path) for style, path in checkpoints.items()},
        "data": {p: _file_fact(opts.data / f"{p}.tsv") for p in parts},
        "reactions": {p: sum(r.part == p for r in rows) for p in parts},
        "classes": len({r.cls for r in rows}),
        "table": table,
        "by_class": {c: {s: {"right": v[0], "lines": v[1]} for s, v in d.items()} for c, d in sorted(by_class.items())},
        "records": records,
    }


def _pct(n: int, d: int) -> str:
    return f"{n} ({100 * n / d:.1f}%)" if d else "0"


def textbook_table(res: dict[str, Any]) -> str:
    """The counts as a Markdown table, one row per part and style (percentages of the lines)."""
    k = res["settings"]["top_k"]
    t = res["settings"]["threshold"]
    head = (
        f"| part | style | lines | right | right in top {k} | wrong, confidence >= {t:g} and in domain "
        f"| right but flagged (confidence < {t:g} or out of domain) | fallbacks | refused | written by a rule |"
    )
    out = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in res["table"]:
        n = row["lines"]
        cells = [_pct(row.get(c, 0), n) for c in COUNTS[1:]]
        out.append(f"| {row['part']} | {row['style']} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(out)
