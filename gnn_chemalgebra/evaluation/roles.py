"""How good the role head is, per role: precision / recall / F1, confusion matrix and calibration (scikit-learn).

The unit is a distinct input molecule of a line. Its gold class is its base-reaction ``nu`` clipped to
:data:`~gnn_chemalgebra.algebra.roles.ROLE_NU` (the head's label, :func:`~gnn_chemalgebra.algebra.roles.role_class`);
the head gives a probability per class. Two predictions are scored: the head's own most likely class, and
(optionally) the class of the hypothesis the decoder wrote, which the balance and the Type-2 evidence may overrule.
Per-role figures collapse the classes to reactant / reagent / product (``nu`` < 0, = 0, > 0).

Calibration: for the head's top class, the mean confidence and the share correct per confidence bin
(:func:`sklearn.calibration.calibration_curve`, uniform bins), the expected calibration error (bin-weighted gap),
the top-label Brier score and the multi-class log loss; and the one-vs-rest curve of each role's probability.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.calibration import calibration_curve
from sklearn.metrics import (
    accuracy_score,
    brier_score_loss,
    confusion_matrix,
    log_loss,
    precision_recall_fscore_support,
)

from ..algebra.roles import ROLE_NU, ROLES, role_class, role_name
from ..io import atomic_write_bytes

CLASS_NAMES: tuple[str, ...] = tuple(f"nu={n:+d}" if n else "nu=0" for n in ROLE_NU)
ROLE_OF_CLASS: tuple[int, ...] = tuple(ROLES.index(role_name(n)) for n in ROLE_NU)


def role_samples(
    examples: Sequence[Any],
    head_probs: Sequence[Any] | None = None,
    decoded_nu: Sequence[Mapping[str, int]] | None = None,
) -> dict[str, Any]:
    """Flatten labelled examples (``.mols``, ``.nu_in``) into per-molecule arrays for :func:`role_metrics`.

    ``head_probs[i]``: the head's ``[n_mols, len(ROLE_NU)]`` probabilities for example ``i`` (a tensor or array);
    ``decoded_nu[i]``: the written hypothesis' ``nu`` per molecule (a report's ``"nu"``; absent molecules are 0).
    """
    gold: list[int] = []
    probs: list[np.ndarray] = []
    decoded: list[int] = []
    for i, ex in enumerate(examples):
        if ex.nu_in is None:
            raise ValueError(f"example {i} has no gold roles (nu_in)")
        gold += [role_class(n) for n in ex.nu_in]
        if head_probs is not None:
            p = np.asarray(head_probs[i].tolist() if hasattr(head_probs[i], "tolist") else head_probs[i], dtype=float)
            if p.shape != (len(ex.mols), len(ROLE_NU)):
                raise ValueError(f"example {i}: probabilities of shape {p.shape}, want {(len(ex.mols), len(ROLE_NU))}")
            probs.append(p)
        if decoded_nu is not None:
            decoded += [role_class(int(decoded_nu[i].get(m, 0))) for m in ex.mols]
    return {
        "gold": np.asarray(gold, dtype=int),
        "prob": np.concatenate(probs) if probs else None,
        "decoded": np.asarray(decoded, dtype=int) if decoded_nu is not None else None,
    }


def _classification(gold: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
    """Accuracy, per-class and per-role precision / recall / F1 / support, and both confusion matrices."""
    out: dict[str, Any] = {"accuracy": float(accuracy_score(gold, pred))}
    for key, names, g, p in (
        ("per_class", CLASS_NAMES, gold, pred),
        ("per_role", ROLES, np.take(ROLE_OF_CLASS, gold), np.take(ROLE_OF_CLASS, pred)),
    ):
        labels = list(range(len(names)))
        prec, rec, f1, sup = precision_recall_fscore_support(g, p, labels=labels, zero_division=0)
        out[key] = {
            n: {"precision": float(prec[j]), "recall": float(rec[j]), "f1": float(f1[j]), "support": int(sup[j])}
            for j, n in enumerate(names)
        }
        present = [j for j in labels if sup[j] > 0]
        out[key.replace("per_", "macro_f1_")] = float(np.mean(f1[present])) if present else 0.0
        # rows: gold, columns: predicted
        out[key.replace("per_", "confusion_")] = confusion_matrix(g, p, labels=labels).tolist()
    return out


def _bin_counts(y_prob: np.ndarray, n_bins: int) -> np.ndarray:
    """Samples per uniform bin, binned exactly like :func:`calibration_curve` (empty bins dropped)."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    counts = np.bincount(np.searchsorted(edges[1:-1], y_prob), minlength=n_bins)
    return counts[counts > 0]


def _curve(y_true: np.ndarray, y_prob: np.ndarray, n_bins: int) -> dict[str, list[float]]:
    prob_true, prob_pred = calibration_curve(y_true, y_prob, n_bins=n_bins, strategy="uniform", pos_label=1)
    counts = _bin_counts(y_prob, n_bins)
    if len(counts) != len(prob_true):  # sklearn changed its binning: refuse rather than misreport
        raise RuntimeError("calibration bins do not line up with scikit-learn's")
    return {"prob_pred": prob_pred.tolist(), "prob_true": prob_true.tolist(), "count": counts.tolist()}


def calibration(gold: np.ndarray, prob: np.ndarray, n_bins: int = 10) -> dict[str, Any]:
    """Top-label reliability curve, ECE, top-label Brier score, log loss, and each role's one-vs-rest curve."""
    top = prob.argmax(1)
    conf = prob.max(1)
    correct = (top == gold).astype(int)
    curve = _curve(correct, conf, n_bins)
    n = len(gold)
    ece = sum(
        c / n * abs(t - p) for c, t, p in zip(curve["count"], curve["prob_true"], curve["prob_pred"], strict=True)
    )
    role_prob = np.zeros((n, len(ROLES)))
    for j, r in enumerate(ROLE_OF_CLASS):
        role_prob[:, r] += prob[:, j]
    gold_role = np.take(ROLE_OF_CLASS, gold)
    per_role = {
        name: _curve((gold_role == r).astype(int), np.clip(role_prob[:, r], 0.0, 1.0), n_bins)
        for r, name in enumerate(ROLES)
        if 0 < int((gold_role == r).sum()) < n  # a one-vs-rest curve needs both outcomes
    }
    return {
        "n_bins": n_bins,
        "strategy": "uniform",
        "top_label": curve,
        "ece": float(ece),
        "mean_confidence": float(conf.mean()),
        "brier_top_label": float(brier_score_loss(correct, conf, pos_label=1)),
        "log_loss": float(log_loss(gold, prob, labels=list(range(len(ROLE_NU))))),
        "per_role": per_role,
    }


def role_metrics(
    gold: Sequence[int] | np.ndarray,
    prob: np.ndarray | None = None,
    decoded: Sequence[int] | np.ndarray | None = None,
    n_bins: int = 10,
) -> dict[str, Any]:
    """Everything above for one set of molecules: ``head`` (argmax of ``prob``), ``decoded``, ``calibration``."""
    g = np.asarray(gold, dtype=int)
    if g.size == 0:
        raise ValueError("no molecules to score")
    out: dict[str, Any] = {"n_molecules": int(g.size), "classes": list(CLASS_NAMES), "roles": list(ROLES)}
    if prob is not None:
        p = np.asarray(prob, dtype=float)
        if p.shape != (g.size, len(ROLE_NU)):
            raise ValueError(f"probabilities of shape {p.shape}, want {(g.size, len(ROLE_NU))}")
        p = p / p.sum(1, keepdims=True)  # float32 softmax rows sum to 1 only within ~1e-7
        out["head"] = _classification(g, p.argmax(1))
        out["calibration"] = calibration(g, p, n_bins)
    if decoded is not None:
        d = np.asarray(decoded, dtype=int)
        if d.shape != g.shape:
            raise ValueError(f"{d.size} decoded classes for {g.size} molecules")
        out["decoded"] = _classification(g, d)
    return out


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f}"


def role_metrics_markdown(reports: Mapping[str, Mapping[str, Any]], title: str, note: str = "") -> str:
    """One section per named report (e.g. a variant and split): per-role table, confusion matrix, calibration."""
    lines = [f"# {title}", ""]
    if note:
        lines += [note, ""]
    for name, m in reports.items():
        where = f"{m['lines']} lines ({m.get('fallback_lines', 0)} written as fallback), " if "lines" in m else ""
        lines += [f"## {name}", "", f"{where}{m['n_molecules']} molecules (distinct input molecules of the lines).", ""]
        sources = [k for k in ("head", "decoded") if k in m]
        header = "| role | " + " | ".join(f"{k} P | {k} R | {k} F1" for k in sources) + " | support |"
        lines += [header, "|---|" + "---|---|---|" * len(sources) + "---|"]
        for role in m["roles"]:
            cells = []
            for k in sources:
                r = m[k]["per_role"][role]
                cells += [_pct(r["precision"]), _pct(r["recall"]), _pct(r["f1"])]
            lines.append(f"| {role} | " + " | ".join(cells) + f" | {m[sources[0]]['per_role'][role]['support']} |")
        acc = ", ".join(
            f"{k}: accuracy {_pct(m[k]['accuracy'])}%, macro-F1 over roles {_pct(m[k]['macro_f1_role'])}%, "
            f"over nu classes {_pct(m[k]['macro_f1_class'])}%"
            for k in sources
        )
        lines += ["", acc + ".", ""]
        for k in sources:
            lines += [f"Confusion matrix ({k}; rows gold, columns predicted):", ""]
            lines += ["| gold \\ pred | " + " | ".join(m["classes"]) + " |", "|---|" + "---|" * len(m["classes"])]
            for cname, row in zip(m["classes"], m[k]["confusion_class"], strict=True):
                lines.append(f"| {cname} | " + " | ".join(str(v) for v in row) + " |")
            lines.append("")
        if "calibration" in m:
            c = m["calibration"]
            lines += [
                f"Calibration of the head's top-class confidence ({c['n_bins']} uniform bins): "
                f"ECE {c['ece']:.4f}, mean confidence {_pct(c['mean_confidence'])}%, top-label Brier "
                f"{c['brier_top_label']:.4f}, log loss {c['log_loss']:.4f}.",
                "",
                "| mean confidence | accuracy | molecules |",
                "|---|---|---|",
            ]
            t = c["top_label"]
            for pp, pt, n in zip(t["prob_pred"], t["prob_true"], t["count"], strict=True):
                lines.append(f"| {pp:.3f} | {pt:.3f} | {n} |")
            lines.append("")
    return "\n".join(lines)


def plot_role_calibration(reports: Mapping[str, Mapping[str, Any]], path: str | Path) -> Path:
    """Reliability diagrams, one row per report: the top-class confidence (left) and each role (right)."""
    from matplotlib.figure import Figure

    rows = [(n, m["calibration"]) for n, m in reports.items() if "calibration" in m]
    if not rows:
        raise ValueError("no report has calibration data")
    fig = Figure(figsize=(10, 4.2 * len(rows)), layout="constrained")
    axes = fig.subplots(len(rows), 2, squeeze=False)
    for (name, c), (ax_top, ax_role) in zip(rows, axes, strict=True):
        t = c["top_label"]
        for ax in (ax_top, ax_role):
            ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfectly calibrated")
            ax.set_xlim(-0.02, 1.04)
            ax.set_ylim(-0.02, 1.04)
            ax.set_xlabel("predicted probability")
            ax.set_ylabel("observed frequency")
            ax.grid(alpha=0.3)
        sizes = 20 + 180 * np.sqrt(np.asarray(t["count"]) / max(t["count"]))
        ax_top.plot(t["prob_pred"], t["prob_true"], color="C0", lw=1.5)
        ax_top.scatter(t["prob_pred"], t["prob_true"], s=sizes, color="C0", zorder=3, label="top class (area ~ n)")
        ax_top.set_title(f"{name}: top-class confidence, ECE {c['ece']:.3f}")
        ax_top.legend(loc="upper left", fontsize=8)
        for k, (role, curve) in enumerate(c["per_role"].items()):
            ax_role.plot(curve["prob_pred"], curve["prob_true"], marker="o", color=f"C{k + 1}", label=role)
        ax_role.set_title(f"{name}: P(role) one-vs-rest")
        ax_role.legend(loc="upper left", fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    out = Path(path)
    atomic_write_bytes(out, buf.getvalue())
    return out
