"""The whole benchmark table in one command: every model on every variant and test setting, one evaluator.

Usage::

    python scripts/run_benchmark.py --built built/full [--stages trivial,gnn,transformer,merge]
        [--tf-minutes 3] [--tf-limit-test 1000]

Stages (each resumable: a stage whose result file exists is skipped unless --force names it):
  trivial      copy-the-source and the Type-1 shortcut, scored on every variant/setting -> results/trivial.json
  gnn          scripts/run_gnn_benchmark.py (GNN + naive ablation, standard and cross models) -> results/gnn.json
  transformer  scripts/transformer_run.py per variant (standard model: test_in, test_out; cross model:
               test_cross) -> results/transformer.json
  merge        results/benchmark.json (all records, ceilings and the paper's numbers), results/benchmark_table.md
               and results/benchmark.png

The Type-1 shortcut is "a perfect chemist who assumes Type 1": the gold target molecules, each written with the
most common coefficient of the input. It is exact on Type 1 and shows what copying coefficients costs on Type 2.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

from gnn_chemalgebra.chem.bag import Term, format_bag, parse_bag
from gnn_chemalgebra.data.layout import TEST_SETTINGS, VARIANTS, split_files, variant_props, variant_short
from gnn_chemalgebra.evaluation.metrics import evaluate_lines
from gnn_chemalgebra.io import atomic_write_json, read_lines

RESULTS = Path("results")
KEYS = ("EM", "JAC", "F1", "mol_JAC", "mol_F1", "n")

# Benchmark page section 6: the authors' Transformer, molecule-only JAC / F1 (coefficients ignored).
PAPER = {
    "F_T1_x1": ((63.03, 72.43), (67.39, 75.71), (23.96, 35.79)),
    "F_T1_x5": ((62.09, 71.69), (60.64, 70.59), (26.03, 38.11)),
    "F_T2_x1": ((48.89, 61.48), (35.10, 48.44), (26.35, 39.27)),
    "F_T2_x5": ((50.33, 62.80), (36.29, 49.54), (27.25, 40.26)),
    "S_T1_x1": ((44.43, 57.49), (45.74, 58.54), (24.44, 36.52)),
    "S_T1_x5": ((41.85, 54.99), (42.00, 55.17), (24.50, 36.28)),
    "S_T2_x1": ((27.63, 40.57), (24.64, 36.97), (18.03, 28.45)),
    "S_T2_x5": ((28.47, 41.54), (24.56, 36.98), (14.59, 23.50)),
}
PAPER_SETTINGS = ("test_in", "test_cross", "test_out")


# The GNN protocol of the README table (the edit model first: python -m gnn_chemalgebra.training.edits
# --config configs/edits_cpu.yaml --set train.max_minutes=22): the GNN on every variant, then the naive
# coefficient head with the same budget on the formula variants (scored on the first 3,000 lines).
GNN_ARGS = [
    "--models", "gnn", "--steps", "4000", "--steps-smiles", "2500", "--t1-cross-from-std",
    "--limit-test-smiles", "2000", "--edit-checkpoint", "runs/edits_cpu/best.pt", "--val-limit-smiles", "500",
    "--set", "train.lr_schedule=cosine",
]  # fmt: skip
NAIVE_ARGS = [
    "--models", "gnn_naive", "--variants", "F_T1_x1,F_T2_x1", "--steps", "4000",
    "--naive-limit", "3000", "--set", "train.lr_schedule=cosine",
]  # fmt: skip


def _command() -> str:
    return "python " + " ".join(shlex.quote(a) for a in sys.argv)


def type1_shortcut(src: str, tgt: str) -> str:
    """Gold target molecules, each with the input's most common coefficient."""
    k = Counter(t.coef for t in parse_bag(src)).most_common(1)[0][0]
    return format_bag(Term(k, t.mol) for t in parse_bag(tgt))


def stage_trivial(built: Path, command: str) -> list[dict]:
    records = []
    for variant in VARIANTS:
        repr_ = str(variant_props(variant)["repr"])
        for setting in TEST_SETTINGS:
            src_p, tgt_p, _ = split_files(built, variant, setting)
            src, tgt = read_lines(src_p), read_lines(tgt_p)
            shortcut = [type1_shortcut(s, t) for s, t in zip(src, tgt, strict=True)]
            preds = {"copy_source": src, "type1_shortcut": shortcut}
            for model, pred in preds.items():
                s = evaluate_lines(pred, tgt, repr_, "paper")
                rec = {"model": model, "variant": variant_short(variant), "setting": setting}
                rec.update({k: s[k] for k in KEYS})
                rec["command"] = command
                records.append(rec)
                print(f"{model:15s} {variant_short(variant)} {setting:10s} EM {s['EM']:.2f}", file=sys.stderr)
    return records


def stage_transformer(built: Path, minutes: float, limit_test: int, config: str, variants: list[str]) -> None:
    """Standard model for test_in/test_out, cross model (train_cross/valid_cross) for test_cross."""
    part_dir = RESULTS / "transformer_parts"
    part_dir.mkdir(parents=True, exist_ok=True)
    for variant in variants:
        short = variant_short(variant)
        for task in ("standard", "cross"):
            out = part_dir / f"{short}_{task}.json"
            if out.exists():
                continue
            cmd = [
                sys.executable, "scripts/transformer_run.py", "--built", str(built), "--variant", variant,
                "--config", config, "--minutes", str(minutes), "--beam", "1", "--out", str(out),
                "--run-dir", f"runs/transformer_{short}_{task}", "--resume",
                "--set", "train.num_threads=1", "--set", "train.progress=false",
            ]  # fmt: skip
            if limit_test:
                cmd += ["--limit-test", str(limit_test)]
            if task == "cross":
                cmd += ["--set", "data.train_split=train_cross", "--set", "data.valid_split=valid_cross"]
            subprocess.run(cmd, check=True)


def collect_transformer() -> list[dict]:
    """Records of every finished part: test_in/test_out from the standard model, test_cross from the cross one."""
    records: list[dict] = []
    for part_path in sorted((RESULTS / "transformer_parts").glob("*.json")):
        task = part_path.stem.rsplit("_", 1)[1]
        part = json.loads(part_path.read_text())
        keep = ("test_cross",) if task == "cross" else ("test_in", "test_out")
        for rec in part["records"]:
            if rec["setting"] in keep:
                rec["task"] = task
                rec["train"] = part.get("train")
                records.append(rec)
    return records


def _index(records: list[dict]) -> dict[tuple[str, str, str], dict]:
    return {(r["model"], r["variant"], r["setting"]): r for r in records}


def _ceiling_for(idx: dict, v: str, s: str, n: int | None) -> float | None:
    """The oracle / Bayes ceiling of the lines a model was scored on (a first-n prefix has its own ceiling)."""
    c = idx.get(("oracle", v, s)) or idx.get(("bayes_ceiling", v, s))
    if not c:
        return None
    if n is not None and n != c.get("n"):
        return (c.get("EM_first_n") or {}).get(str(n))
    return c["EM"]


def stage_merge(records: list[dict]) -> None:
    for short, rows in PAPER.items():
        for setting, (jac, f1) in zip(PAPER_SETTINGS, rows, strict=True):
            records.append(
                {"model": "paper_transformer", "variant": short, "setting": setting, "mol_JAC": jac,
                 "mol_F1": f1, "source": "Valenti et al., appendix Table 10 (molecule-only)"}
            )  # fmt: skip
    idx = _index(records)  # later files win: the GNN's ceiling records also carry prefix ceilings
    atomic_write_json(RESULTS / "benchmark.json", list(idx.values()))
    models = ["gnn", "gnn_naive", "transformer", "copy_source", "type1_shortcut"]

    def em(model: str, v: str, s: str) -> str:
        r = idx.get((model, v, s))
        return f"{r['EM']:.2f}" if r and r.get("EM") is not None else "–"

    def n_of(model: str, v: str, s: str) -> str:
        r = idx.get((model, v, s))
        return f"{r['n']:,}" if r and r.get("n") else "–"

    def mol(model: str, v: str, s: str) -> str:
        r = idx.get((model, v, s))
        return f"{r['mol_JAC']:.1f} / {r['mol_F1']:.1f}" if r and r.get("mol_JAC") is not None else "–"

    def main_k(v: str, s: str) -> str:
        r = idx.get(("gnn", v, s)) or {}
        return " / ".join(f"{r[k]:.1f}" for k in ("main_top1", "main_top5") if r.get(k) is not None) or "–"

    head = (
        "| variant | setting | ceiling EM | GNN EM | GNN norm. | GNN n | GNN main top-1 / top-5 | naive EM "
        "| Transformer EM | Transformer n | copy EM | T1-shortcut EM | GNN mol JAC/F1 | Transformer mol JAC/F1 "
        "| paper Transformer mol JAC/F1 |"
    )
    lines = [head, "|" + "---|" * 15]
    for variant in VARIANTS:
        v = variant_short(variant)
        for s in TEST_SETTINGS:
            full = _ceiling_for(idx, v, s, None)
            g = idx.get(("gnn", v, s))
            c_g = _ceiling_for(idx, v, s, g["n"]) if g else None
            norm = f"{g['EM'] / c_g:.3f}" if g and c_g else "–"
            lines.append(
                f"| {v} | {s} | {f'{full:.2f}' if full is not None else '–'} | {em('gnn', v, s)} | {norm} "
                f"| {n_of('gnn', v, s)} | {main_k(v, s)} | {em('gnn_naive', v, s)} | {em('transformer', v, s)} "
                f"| {n_of('transformer', v, s)} | {em('copy_source', v, s)} | {em('type1_shortcut', v, s)} "
                f"| {mol('gnn', v, s)} | {mol('transformer', v, s)} | {mol('paper_transformer', v, s)} |"
            )
    (RESULTS / "benchmark_table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    plotted = [m for m in models if m != "type1_shortcut" and any(k[0] == m for k in idx)]
    plot(idx, RESULTS / "benchmark.png", plotted)


def plot(idx: dict, path: Path, models: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(16, 7.5), sharey=True)
    colors = {"gnn": "#1b9e77", "gnn_naive": "#d95f02", "transformer": "#7570b3", "copy_source": "#999999",
              "type1_shortcut": "#e6ab02"}  # fmt: skip
    width = 0.8 / max(1, len(models))
    for ax, variant in zip(axes.flat, VARIANTS, strict=True):
        v = variant_short(variant)
        for i, m in enumerate(models):
            ys = [(idx.get((m, v, s)) or {}).get("EM") or 0.0 for s in TEST_SETTINGS]
            xs = [j + (i - (len(models) - 1) / 2) * width for j in range(len(TEST_SETTINGS))]
            ax.bar(xs, ys, width=width, color=colors.get(m), label=m)
        for j, s in enumerate(TEST_SETTINGS):
            c = idx.get(("oracle", v, s)) or idx.get(("bayes_ceiling", v, s))
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
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle("ChemAlgebra, local protocol: EM per test setting (dashed: oracle / exact Bayes ceiling)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    fig.savefig(path, dpi=110)
    print(f"wrote {path}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--stages", default="trivial,gnn,transformer,merge")
    ap.add_argument("--force", default="", help="comma-separated stages to recompute")
    ap.add_argument("--tf-minutes", type=float, default=3.0)
    ap.add_argument("--tf-limit-test", type=int, default=1000)
    ap.add_argument("--tf-config", default="configs/transformer_cpu.yaml")
    ap.add_argument("--variants", default="", help="comma-separated short names (default: all eight)")
    args = ap.parse_args()
    built = Path(args.built)
    variants = [f"ChemAlgebra_{v}" for v in args.variants.split(",")] if args.variants else list(VARIANTS)
    stages = args.stages.split(",")
    force = set(args.force.split(",")) if args.force else set()
    RESULTS.mkdir(exist_ok=True)
    command = _command()
    if "trivial" in stages and ("trivial" in force or not (RESULTS / "trivial.json").exists()):
        atomic_write_json(RESULTS / "trivial.json", stage_trivial(built, command))
    if "gnn" in stages and ("gnn" in force or not (RESULTS / "gnn.json").exists()):
        for extra in (GNN_ARGS, NAIVE_ARGS):
            subprocess.run([sys.executable, "scripts/run_gnn_benchmark.py", "--built", str(built), *extra], check=True)
    if "transformer" in stages:
        stage_transformer(built, args.tf_minutes, args.tf_limit_test, args.tf_config, variants)
        atomic_write_json(RESULTS / "transformer.json", collect_transformer())
    if "merge" in stages:
        records: list[dict] = []
        for name in ("ceilings", "trivial", "gnn"):
            p = RESULTS / f"{name}.json"
            if p.exists():
                data = json.loads(p.read_text())
                records.extend(data if isinstance(data, list) else data.get("records", []))
        tf = collect_transformer()  # every finished part, also while other variants are still training
        atomic_write_json(RESULTS / "transformer.json", tf)
        records.extend(tf)
        stage_merge(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
