"""Learning curves: validation EM and token accuracy against optimiser steps, read from each run's
``metrics.jsonl``, Transformer runs beside the GNN's, so a reader sees where each one saturates.

Both models log ``step`` = optimiser steps of ``train.batch_size`` reactions; the GNN logs ``val/EM`` (whole
decoded lines), the Transformer ``val/val_em`` (greedy, on its first ``train.val_em_lines`` validation lines)
and ``val/val_token_acc`` (teacher-forced, all validation lines). A resumed run may log a step twice (what a
killed run wrote after its last checkpoint is trained again); the last value of a step wins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io import atomic_write_text

EM_KEYS = ("val/val_em", "val/EM")  # Transformer, GNN
TOKEN_ACC_KEY = "val/val_token_acc"


@dataclass
class Curve:
    """One run's validation history (steps ascending)."""

    label: str
    run_dir: Path
    panel: str = ""  # the figure panel (one per cell) in a grid; "" = the single two-panel figure
    steps: list[int] = field(default_factory=list)
    em: list[float | None] = field(default_factory=list)
    token_acc: list[float | None] = field(default_factory=list)

    @property
    def is_transformer(self) -> bool:
        return any(v is not None for v in self.token_acc)

    def best(self) -> tuple[int, float] | None:
        """(step, EM) of the first best validation EM (ties: token accuracy), as early stopping reads it."""
        rows = [(e, t or 0.0, -s) for s, e, t in zip(self.steps, self.em, self.token_acc, strict=True) if e is not None]
        if not rows:
            return None
        e, _, s = max(rows)
        return -s, e


def read_curve(run_dir: Path, label: str = "", panel: str = "") -> Curve:
    """The validation rows of ``<run_dir>/metrics.jsonl``, or of a rows file saved by :func:`save_rows` (a
    missing or empty file is an error naming it)."""
    path = Path(run_dir) if Path(run_dir).suffix == ".jsonl" else Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        raise InputError("no metrics.jsonl in the run folder (has it validated yet?)", path=str(run_dir))
    by_step: dict[int, dict[str, float]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines):
                continue  # a line cut by a kill at the very end
            raise InputError("not a JSON line", path=f"{path}:{n}") from None
        if any(k.startswith("val/") for k in rec):
            by_step.setdefault(int(rec["step"]), {}).update({k: float(v) for k, v in rec.items() if k != "step"})
    curve = Curve(label or Path(run_dir).name, Path(run_dir), panel)
    for step in sorted(by_step):
        vals = by_step[step]
        curve.steps.append(step)
        curve.em.append(next((vals[k] for k in EM_KEYS if k in vals), None))
        curve.token_acc.append(vals.get(TOKEN_ACC_KEY))
    if not curve.steps:
        raise InputError("no validation rows in metrics.jsonl yet", path=str(path))
    return curve


def parse_run_spec(spec: str) -> tuple[str, Path]:
    """``LABEL=DIR`` or ``DIR`` (label = folder name)."""
    label, sep, rest = spec.partition("=")
    return (label, Path(rest)) if sep else ("", Path(spec))


def parse_panel_spec(spec: str) -> tuple[str, str, Path]:
    """``PANEL|LABEL=DIR`` (a grid, one panel per cell) or a plain :func:`parse_run_spec` spec (panel "")."""
    head, sep, rest = spec.partition("=")
    panel, bar, label = head.partition("|")
    if sep and bar:
        return panel.strip(), label.strip(), Path(rest)
    return ("", *parse_run_spec(spec))


def save_rows(curve: Curve, folder: Path) -> Path:
    """The run's validation rows as a small JSON-lines file (``<folder>/<slug>.jsonl``), so the figure can be
    redrawn from the repository after the run folder (checkpoints, gigabytes) is gone."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{curve.panel} {curve.label}").strip("_").lower()
    em_key = EM_KEYS[0] if curve.is_transformer else EM_KEYS[1]
    rows = []
    for step, em, tok in zip(curve.steps, curve.em, curve.token_acc, strict=True):
        row: dict[str, float] = {"step": step}
        if em is not None:
            row[em_key] = em
        if tok is not None:
            row[TOKEN_ACC_KEY] = tok
        rows.append(row)
    path = Path(folder) / f"{slug}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in rows))
    return path


def plot_curves(curves: Sequence[Curve], path: Path, title: str = "") -> Path:
    """Validation EM of every run over optimiser steps (log axis: the GNN's hundreds beside the Transformer's
    thousands), each run's best EM marked; beside it the Transformer runs' token accuracy when there are any. A
    figure of GNN runs alone is one panel, its EM axis starting below the lowest point (their curves differ by a
    few points, which a 0-100 axis flattens)."""
    if not curves:
        raise InputError("no runs to plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_tokens = any(c.is_transformer for c in curves)
    if with_tokens:
        fig, (ax_em, ax_tok) = plt.subplots(1, 2, figsize=(13, 4.8), sharex=True)
    else:
        fig, ax_em = plt.subplots(1, 1, figsize=(7.5, 4.8))
        ax_tok = None
    lowest = 100.0
    for i, c in enumerate(curves):
        color = f"C{i}"
        style = "-" if c.is_transformer else "--"
        pts = [(s, e) for s, e in zip(c.steps, c.em, strict=True) if e is not None]
        if pts:
            ax_em.plot(
                *zip(*pts, strict=True), style, marker=".", color=color, label=f"{c.label} (to step {c.steps[-1]:,})"
            )
            lowest = min(lowest, *(e for _, e in pts))
        if (b := c.best()) is not None:
            ax_em.plot([b[0]], [b[1]], "o", ms=9, mfc="none", color=color)
        tok = [(s, t) for s, t in zip(c.steps, c.token_acc, strict=True) if t is not None]
        if tok and ax_tok is not None:
            ax_tok.plot(*zip(*tok, strict=True), style, marker=".", color=color, label=c.label)
    ax_em.set_ylabel("validation exact match (%)")
    _log_steps_axis(ax_em)
    ax_em.set_ylim(0 if with_tokens else max(0.0, 10 * (int(lowest) // 10) - 10), 100)
    ax_em.legend(fontsize=8, loc="best")
    if ax_tok is not None:
        ax_tok.set_ylabel("validation token accuracy (%, teacher-forced)")
        ax_tok.set_title("Transformer runs only (the GNN writes no tokens)", fontsize=9)
        _log_steps_axis(ax_tok)
        ax_tok.set_ylim(0, 100)
        ax_tok.legend(fontsize=8, loc="lower right")
    fig.suptitle(title or "Validation curves (circles: best EM; dashed: GNN)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _log_steps_axis(ax) -> None:  # type: ignore[no-untyped-def]
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("optimiser steps")
    ax.grid(alpha=0.3, which="both")


def plot_curve_grid(curves: Sequence[Curve], path: Path, title: str = "", ncols: int = 3) -> Path:
    """One panel per cell (``Curve.panel``, first-seen order): validation EM of each run (solid: Transformer,
    dashed: GNN, circle: best EM) and, dotted in the same colour, a Transformer's token accuracy."""
    if not curves:
        raise InputError("no runs to plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(c.panel for c in curves))
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.9 * nrows), squeeze=False)
    colors: dict[str, str] = {}  # one colour per label across panels
    for ax, panel in zip(axes.flat, panels, strict=False):
        for c in (c for c in curves if c.panel == panel):
            color = colors.setdefault(c.label, f"C{len(colors)}")
            pts = [(s, e) for s, e in zip(c.steps, c.em, strict=True) if e is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), "-" if c.is_transformer else "--", marker=".", ms=3, color=color,
                        label=f"{c.label} EM (to {c.steps[-1]:,})")  # fmt: skip
            if (b := c.best()) is not None:
                ax.plot([b[0]], [b[1]], "o", ms=8, mfc="none", color=color)
            tok = [(s, t) for s, t in zip(c.steps, c.token_acc, strict=True) if t is not None]
            if tok:
                ax.plot(*zip(*tok, strict=True), ":", lw=1, color=color, label=f"{c.label} token acc.")
        _log_steps_axis(ax)
        ax.set_ylim(0, 100)
        ax.set_ylabel("validation (%)")
        ax.set_title(panel, fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(
        title
        or "Validation curves per cell (solid: Transformer EM, dashed: GNN EM, dotted: token accuracy, "
        "circles: best EM)",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def curves_summary(curves: Sequence[Curve]) -> list[dict[str, object]]:
    """Per run: last step, best EM and its step, last token accuracy (what experiments/comparison.md quotes)."""
    out = []
    for c in curves:
        b = c.best()
        tok = [t for t in c.token_acc if t is not None]
        out.append({"label": c.label, "run_dir": str(c.run_dir), "last_step": c.steps[-1],
                    "best_step": b[0] if b else None, "best_em": b[1] if b else None,
                    "last_token_acc": tok[-1] if tok else None})  # fmt: skip
    return out
