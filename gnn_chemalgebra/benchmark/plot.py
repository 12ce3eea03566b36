"""The benchmark picture: EM per variant and test setting for each model, with the ceiling dashed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..data.layout import TEST_SETTINGS, VARIANTS, variant_short
from .ceilings import ceiling_record
from .records import Record, index

COLORS = {"gnn": "#1b9e77", "gnn_naive": "#d95f02", "transformer": "#7570b3", "copy_source": "#999999",
          "type1_shortcut": "#e6ab02"}  # fmt: skip
PLOTTED = ("gnn", "gnn_naive", "transformer", "copy_source")


def plot_benchmark(records: Sequence[Record], path: Path, models: Sequence[str] = PLOTTED) -> Path:
    """Eight panels (one per variant), a bar per model with records and setting; writes a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    idx = index(records)
    models = [m for m in models if any(k[0] == m for k in idx)]
    fig, axes = plt.subplots(2, 4, figsize=(16, 7.5), sharey=True)
    width = 0.8 / max(1, len(models))
    for ax, variant in zip(axes.flat, VARIANTS, strict=True):
        v = variant_short(variant)
        for i, m in enumerate(models):
            ys = [(idx.get((m, v, s)) or {}).get("EM") or 0.0 for s in TEST_SETTINGS]
            xs = [j + (i - (len(models) - 1) / 2) * width for j in range(len(TEST_SETTINGS))]
            ax.bar(xs, ys, width=width, color=COLORS.get(m), label=m)
        for j, s in enumerate(TEST_SETTINGS):
            c = ceiling_record(idx, v, s)
            if c:
                ax.hlines(c["EM"], j - 0.45, j + 0.45, colors="black", linestyles="dashed",
                          label="ceiling" if j == 0 else None)  # fmt: skip
        ax.set_title(v)
        ax.set_xticks(range(len(TEST_SETTINGS)), [s.replace("test_", "") for s in TEST_SETTINGS])
        ax.set_ylim(0, 105)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("exact match (%)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1), frameon=False)
    fig.suptitle("ChemAlgebra, local protocol: EM per test setting (dashed: oracle / exact Bayes ceiling)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
