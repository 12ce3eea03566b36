"""Train, predict and score the bag GNN (and its naive coefficient ablation) on every variant of a built folder.

For each variant: the GNN and the naive head are trained on ``train``/``valid`` (the standard model, scored on
``test_in`` and ``test_out``) and on ``train_cross``/``valid_cross`` (the cross model, scored on ``test_cross``).
Each run has a wall-clock budget (``train.max_minutes``). Everything is resumable: a finished run (its
``DONE`` marker) is loaded, an interrupted one continues from ``last.pt``, and predictions already written
(``pred-<setting>.txt``) are re-scored, not recomputed.

Writes ``results/gnn.json`` (records: model, variant, setting, EM, JAC, F1, mol_JAC, mol_F1, n, command, plus
EM_strict and the run's facts; ceilings as ``oracle`` / ``bayes_ceiling`` records), ``results/gnn_table.md``
(EM beside the ceiling; normalised EM = EM / ceiling for Type 2) and ``results/gnn_errors.md`` (why the
formula variants miss: roles, extent, by-product/leftover, main product).

Examples::

    python scripts/run_gnn_benchmark.py --built built/full                      # everything, resumable
    python scripts/run_gnn_benchmark.py --built built/full --variants F_T1_x1 --minutes-x1 2
    python scripts/run_gnn_benchmark.py --built built/full --aggregate-only     # rebuild the tables
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from gnn_chemalgebra.config import load_config
from gnn_chemalgebra.data.dataset import load_examples
from gnn_chemalgebra.data.layout import VARIANTS, variant_props, variant_short
from gnn_chemalgebra.evaluation.ceiling import ceiling_setting
from gnn_chemalgebra.evaluation.metrics import evaluate_lines
from gnn_chemalgebra.inference.predictor import Predictor
from gnn_chemalgebra.io import atomic_write_json, atomic_write_lines, read_lines
from gnn_chemalgebra.training.gnn import train_gnn

TASKS = {"std": ("train", "valid", ("test_in", "test_out")), "cross": ("train_cross", "valid_cross", ("test_cross",))}
MODELS = {"gnn": "gnn", "gnn_naive": "naive"}
METRICS = ("EM", "JAC", "F1", "mol_JAC", "mol_F1")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run_config(args: argparse.Namespace, variant: str, model: str, task: str, run_dir: Path) -> dict[str, Any]:
    train_split, val_split, _ = TASKS[task]
    x = int(variant_props(variant)["x"])
    minutes = args.minutes_x5 if x == 5 else args.minutes_x1
    if model == "gnn_naive":
        minutes = args.naive_minutes
    extra: list[str] = []
    smiles = variant_props(variant)["repr"] == "smiles"
    steps = (args.steps_smiles or args.steps) if smiles else args.steps
    if steps:  # a fixed optimiser-step budget: equal compute per run, whatever else shares the CPU
        minutes, extra = 0, [f"train.max_steps={steps}"]
    if smiles and args.edit_checkpoint:  # validate whole SMILES lines, product graphs included
        extra += [f"model.edit_checkpoint={args.edit_checkpoint}"]
    if smiles and args.val_limit_smiles:
        extra += [f"data.val_limit={args.val_limit_smiles}"]
    if task == "cross" and not steps:
        minutes *= args.cross_factor
        std_done = run_dir.parent / f"{model}_std" / "DONE"
        if args.cross_steps_like_std and std_done.exists():
            # the same number of optimiser steps as the standard model, not the same (contended) wall clock
            steps = int(json.loads(std_done.read_text())["steps"])
            minutes, extra = 0, [f"train.max_steps={steps}"]
    return load_config(
        args.config,
        [
            f"data.dir={args.built}",
            f"data.variant={variant}",
            f"data.train_split={train_split}",
            f"data.val_split={val_split}",
            f"run_dir={run_dir}",
            f"model.name={MODELS[model]}",
            f"train.max_minutes={minutes}",
            f"train.num_threads={args.threads}",
            *extra,
            *args.set,
        ],
    )


def ensure_trained(args: argparse.Namespace, variant: str, model: str, task: str) -> Path:
    run_dir = Path(args.runs) / variant_short(variant) / f"{model}_{task}"
    done = run_dir / "DONE"
    if done.exists() and (run_dir / "best.pt").exists():
        return run_dir
    if task == "cross" and args.t1_cross_from_std and int(variant_props(variant)["type"]) == 1:
        return share_std_model(args, variant, model, run_dir)
    cfg = run_config(args, variant, model, task, run_dir)
    resume = (run_dir / "last.pt").exists()
    log(
        f"train {variant_short(variant)} {model} {task} ({'resume' if resume else 'fresh'}, "
        f"{cfg['train']['max_minutes']} min, {cfg['train'].get('max_steps') or 'no'} step cap)"
    )
    t0 = time.perf_counter()
    summary = train_gnn(cfg, resume=resume)
    summary["wall_s"] = time.perf_counter() - t0
    atomic_write_json(done, {k: v for k, v in summary.items() if k != "history"})
    log(f"  best val {summary.get('best', {})}")
    return run_dir


def share_std_model(args: argparse.Namespace, variant: str, model: str, run_dir: Path) -> Path:
    """Type 1: ``train_cross``/``valid_cross`` hold the same reactions in the same order as ``train``/``valid``
    and every term of a line carries one k, so the coefficient-blind network's inputs and labels are identical
    (``tests/data/test_dataset_cross.py``) and training on them gives the standard model, bit for bit. The
    cross run folder gets a copy of the standard model instead of a second identical training run."""
    import shutil

    std = ensure_trained(args, variant, model, "std")
    run_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(std / "best.pt", run_dir / "best.pt")
    info = json.loads((std / "DONE").read_text())
    info["shared_with"] = str(std)
    atomic_write_json(run_dir / "DONE", info)
    log(f"{variant_short(variant)} {model} cross: Type 1, the standard model serves ({std})")
    return run_dir


def _record_errors(exs: list, recs: list[dict[str, Any]], em_flags: list[bool]) -> dict[str, Any]:
    """First cause of each exact-match failure: roles, leftover/by-product, main product, extent, other."""
    first: Counter = Counter()
    any_wrong: Counter = Counter()
    for ex, r, ok in zip(exs, recs, em_flags, strict=True):
        gold = dict(zip(ex.mols, ex.nu_in or [], strict=True))
        pred = {m: int(r.get("nu", {}).get(m, 0)) for m in ex.mols}
        roles_ok = pred == gold
        left_ok = sorted(set(r["new_products"]) - {r["main_product"]}) == sorted(ex.extras)
        main_ok = r["main_product"] == ex.main
        ranked = list(dict.fromkeys(b.get("main_product") for b in r.get("beam", [])))
        for k in (1, 5):
            any_wrong[f"main_top{k}_missed"] += ex.main is not None and ex.main not in ranked[:k]
        any_wrong["has_new_main"] += ex.main is not None
        ext_ok = r["extent"] == ex.xi
        for k, v in (("roles", roles_ok), ("leftover", left_ok), ("main", main_ok), ("extent", ext_ok)):
            any_wrong[k] += not v
        if not ok:
            cause = (
                "roles"
                if not roles_ok
                else "leftover"
                if not left_ok
                else "main"
                if not main_ok
                else "extent"
                if not ext_ok
                else "other"
            )
            first[cause] += 1
    return {"n": len(exs), "n_fail": sum(not f for f in em_flags), "first_cause": dict(first), "wrong": dict(any_wrong)}


def predict_and_score(
    args: argparse.Namespace, variant: str, model: str, task: str, run_dir: Path, command: str
) -> list[dict[str, Any]]:
    props = variant_props(variant)
    repr_ = str(props["repr"])
    out = []
    pred = None
    for setting in TASKS[task][2]:
        p_file = run_dir / f"pred-{setting}.txt"
        e_file = run_dir / f"errors-{setting}.json"
        limit = args.limit_test or (args.naive_limit if model == "gnn_naive" else 0)
        if repr_ == "smiles" and args.limit_test_smiles:
            limit = min(limit or args.limit_test_smiles, args.limit_test_smiles)
        exs = load_examples(args.built, variant, setting, limit or None)
        tgts = [ex.tgt or "" for ex in exs]
        t_pred = None
        if not p_file.exists() or len(read_lines(p_file)) != len(exs):
            if pred is None:
                pred = Predictor.from_checkpoint(str(run_dir / "best.pt"))
            t0 = time.perf_counter()
            recs = pred.predict(exs, batch_size=256, beam=args.beam_smiles if repr_ == "smiles" else 1)
            t_pred = time.perf_counter() - t0
            lines = [r["prediction"] for r in recs]
            atomic_write_lines(p_file, lines)
            if model == "gnn":
                flags = [evaluate_lines([ln], [t], repr_)["EM"] == 100.0 for ln, t in zip(lines, tgts, strict=True)]
                err = _record_errors(exs, recs, flags)
                err["balanced"] = sum(bool(r["balanced"]) for r in recs)
                atomic_write_json(e_file, err)
            atomic_write_json(run_dir / f"speed-{setting}.json", {"n": len(exs), "predict_s": t_pred})
        lines = read_lines(p_file)
        res = evaluate_lines(lines, tgts, repr_, "paper")
        strict = evaluate_lines(lines, tgts, repr_, "strict")
        done = json.loads((run_dir / "DONE").read_text())
        rec = {
            "model": model,
            "variant": variant_short(variant),
            "setting": setting,
            **{k: round(float(res[k]), 2) for k in METRICS},
            "n": int(res["n"]),
            "EM_strict": round(float(strict["EM"]), 2),
            "command": command,
            "train_task": task,
            "train_steps": done.get("steps"),
            "train_s": round(float(done.get("train_s", 0.0)), 1),
            "val_best": done.get("best", {}),
            "n_params": done.get("n_params"),
        }
        if e_file.exists():  # main-product accuracy over the lines with a new main product (SMILES: beam 5)
            w = json.loads(e_file.read_text())["wrong"]
            if w.get("has_new_main"):
                for k in (1, 5) if repr_ == "smiles" else (1,):
                    rec[f"main_top{k}"] = round(100.0 * (1 - w[f"main_top{k}_missed"] / w["has_new_main"]), 2)
        out.append(rec)
        log(f"  {variant_short(variant)} {model} {setting}: EM {rec['EM']} (strict {rec['EM_strict']}) n={rec['n']}")
    return out


def subset_ceiling(args: argparse.Namespace, variant: str, setting: str, n: int) -> float:
    """Expected oracle/Bayes EM over the first ``n`` lines (for runs scored on a prefix of a test set)."""
    from gnn_chemalgebra.errors import BalanceError
    from gnn_chemalgebra.evaluation.ceiling import oracle_line, read_split

    lines = read_split(Path(args.built), variant, setting)[:n]
    tot = 0.0
    for line in lines:
        try:
            tot += float(oracle_line(line, int(variant_props(variant)["type"]))[1])
        except BalanceError:
            pass
    return round(100.0 * tot / max(len(lines), 1), 4)


def ceiling_records(args: argparse.Namespace, variant: str) -> list[dict[str, Any]]:
    cache = Path(args.runs) / variant_short(variant) / "ceilings.json"
    if cache.exists():
        recs = json.loads(cache.read_text())
    else:
        recs = []
        for setting in ("test_in", "test_cross", "test_out"):
            r = asdict(ceiling_setting(Path(args.built), variant, setting))
            r["command"] = "gnn_chemalgebra.evaluation.ceiling.ceiling_setting (no recovery check)"
            recs.append(r)
    for n in {args.limit_test, args.naive_limit} - {0}:
        for r in recs:
            if n < r["n"]:
                r.setdefault("EM_first_n", {})
                if str(n) not in r["EM_first_n"]:
                    r["EM_first_n"][str(n)] = subset_ceiling(args, variant, r["setting"], n)
    atomic_write_json(cache, recs)
    return recs


def ceiling_for(c: dict[str, Any] | None, n: int | None) -> float | None:
    """The ceiling matching a scored record's line count (full set, or the prefix it was scored on)."""
    if c is None:
        return None
    if n is not None and n != c["n"] and str(n) in c.get("EM_first_n", {}):
        return float(c["EM_first_n"][str(n)])
    return float(c["EM"])


def run_variant(args: argparse.Namespace, variant: str, command: str) -> None:
    short = variant_short(variant)
    rec_file = Path(args.runs) / short / "records.json"
    models = [m for m in ("gnn", "gnn_naive") if m in args.models.split(",")]
    # records of the models not run this time stay (a naive-only run keeps the GNN's rows, and vice versa)
    old = json.loads(rec_file.read_text()) if rec_file.exists() else []
    kept = [r for r in old if r["model"] in MODELS and r["model"] not in models]
    recs = ceiling_records(args, variant) + kept
    for model in models:
        for task in args.tasks.split(","):
            if model == "gnn_naive" and task == "cross" and not args.naive_cross:
                continue
            run_dir = ensure_trained(args, variant, model, task)
            recs += predict_and_score(args, variant, model, task, run_dir, command)
            atomic_write_json(rec_file, recs)


# --------------------------------------------------------------------------- aggregation
def aggregate(args: argparse.Namespace) -> None:
    records: list[dict[str, Any]] = []
    for v in VARIANTS:
        f = Path(args.runs) / variant_short(v) / "records.json"
        if f.exists():
            records += json.loads(f.read_text())
    # Ceilings of the prefixes that some rows were scored on (computed once, cached in the record).
    for c in records:
        if c["model"] not in ("oracle", "bayes_ceiling"):
            continue
        ns = {r["n"] for r in records if r["variant"] == c["variant"] and r["setting"] == c["setting"]}
        for n in sorted(x for x in ns if x < c["n"]):
            c.setdefault("EM_first_n", {})
            if str(n) not in c["EM_first_n"]:
                c["EM_first_n"][str(n)] = subset_ceiling(args, "ChemAlgebra_" + c["variant"], c["setting"], n)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "gnn.json", records)
    (out / "gnn_table.md").write_text(table(records))
    (out / "gnn_errors.md").write_text(error_table(args))
    log(f"wrote {out / 'gnn.json'} ({len(records)} records), gnn_table.md, gnn_errors.md")
    print((out / "gnn_table.md").read_text())
    print((out / "gnn_errors.md").read_text())


def table(records: list[dict[str, Any]]) -> str:
    by = {(r["model"], r["variant"], r["setting"]): r for r in records}
    variants = [variant_short(v) for v in VARIANTS if any(r["variant"] == variant_short(v) for r in records)]
    lines = [
        "# Bag GNN on the local protocol (paper-mode EM; `results/gnn.json`)",
        "",
        "Ceiling = exact oracle (Type 1) or exact Bayes ceiling (Type 2) of the lines scored (the whole test set, "
        "or the same first-n prefix when a row was scored on fewer lines; `n` = the GNN's lines, the naive head "
        "may be scored on a shorter prefix, see `results/gnn.json`). norm = EM / ceiling.",
        "Invariance: Type 1 needs EM(out), EM(cross) >= EM(in) - 1; Type 2 needs norm(out), norm(cross) >= "
        "norm(in) - 0.01. `naive` = the same network with a head reading raw coefficients.",
        "",
        "| variant | setting | ceiling | GNN EM | GNN norm | GNN JAC | GNN F1 | mol JAC | mol F1 | naive EM | "
        "naive norm | n |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for v in variants:
        ceil_model = "oracle" if "_T1_" in v else "bayes_ceiling"
        norms = {}
        for s in ("test_in", "test_cross", "test_out"):
            c = by.get((ceil_model, v, s))
            g = by.get(("gnn", v, s))
            nv = by.get(("gnn_naive", v, s))
            if c is None and g is None:
                continue
            ce = ceiling_for(c, g["n"] if g else None) or float("nan")
            ce_nv = ceiling_for(c, nv["n"] if nv else None) or float("nan")
            gn = g["EM"] / ce if g and ce else float("nan")
            nn_ = nv["EM"] / ce_nv if nv and ce_nv else float("nan")
            if g is not None:
                norms[s] = (g["EM"], gn)

            def f(x: Any, nd: int = 2) -> str:
                return "-" if x is None or x != x else f"{x:.{nd}f}"

            lines.append(
                f"| {v} | {s} | {f(ce)} | {f(g['EM'] if g else None)} | {f(gn, 3)} | "
                f"{f(g['JAC'] if g else None)} | {f(g['F1'] if g else None)} | {f(g['mol_JAC'] if g else None)} | "
                f"{f(g['mol_F1'] if g else None)} | {f(nv['EM'] if nv else None)} | {f(nn_, 3)} | "
                f"{g['n'] if g else (c['n'] if c else '-')} |"
            )
        if "test_in" in norms:
            t1 = "_T1_" in v
            ok = []
            for s in ("test_cross", "test_out"):
                if s in norms:
                    a, b = norms[s], norms["test_in"]
                    ok.append(a[0] >= b[0] - 1 if t1 else a[1] >= b[1] - 0.01)
            g_in = by.get(("gnn", v, "test_in"))
            c_in = ceiling_for(by.get((ceil_model, v, "test_in")), g_in["n"] if g_in else None)
            gap = (c_in - norms["test_in"][0]) if c_in is not None else None
            within = "within" if gap is not None and gap <= 5 else "not within"
            verdicts.append(
                f"- {v}: OOD invariance {'holds' if ok and all(ok) else 'FAILS' if ok else 'n/a'}; "
                f"test_in gap to ceiling {gap:.2f} EM points ({within} 5)"
                if gap is not None
                else f"- {v}: n/a"
            )
    return "\n".join(lines + ["", "## Verdicts", "", *verdicts, ""])


def error_table(args: argparse.Namespace) -> str:
    lines = [
        "# Why the GNN misses (every variant; `errors-<setting>.json` in each run folder)",
        "",
        "First cause of each exact-match failure, checked in this order: roles (nu of an input molecule), "
        "leftover/by-product (the non-main new products), main product (the exact remainder), extent. "
        "`other` = every part right but the line still differs (paper-mode pairing of duplicate terms, or a "
        "Type-2 reagent/product term layout). 'wrong' columns count each part independently, over all lines.",
        "",
        "| variant | setting | n | EM fails | roles | leftover | main | extent | other | roles wrong | "
        "leftover wrong | main wrong | extent wrong | main top-1 / top-5 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for v in VARIANTS:
        short = variant_short(v)
        for task, (_, _, settings) in TASKS.items():
            for s in settings:
                f = Path(args.runs) / short / f"gnn_{task}" / f"errors-{s}.json"
                if not f.exists():
                    continue
                e = json.loads(f.read_text())
                fc, w = e["first_cause"], e["wrong"]
                n_all = max(e["n"], 1)

                def pct(k: str, d: dict[str, int], n_all: int = n_all) -> str:
                    return f"{100.0 * d.get(k, 0) / n_all:.1f}%"

                lines.append(
                    f"| {short} | {s} | {e['n']} | {pct('x', {'x': e['n_fail']})} | {pct('roles', fc)} | "
                    f"{pct('leftover', fc)} | {pct('main', fc)} | {pct('extent', fc)} | {pct('other', fc)} | "
                    f"{pct('roles', w)} | {pct('leftover', w)} | {pct('main', w)} | {pct('extent', w)} | "
                    f"{main_topk(w, short.startswith('S_'))} |"
                )
    lines += [
        "",
        "SMILES rows: the new main product comes from the bond-edit decoder over the reactants the role head picked "
        "(beam 5); 'main top-1 / top-5' = share of lines with a new main product whose gold main product is the "
        "best / among the five best hypotheses' main products (formula rows: the exact remainder, top-1 only).",
        "",
    ]
    return "\n".join(lines)


def main_topk(w: dict[str, int], beam5: bool) -> str:
    """Main-product accuracy over the lines that have a new main product (top-5 only where the beam was 5)."""
    n = w.get("has_new_main", 0)
    if not n or "main_top1_missed" not in w:
        return "-"
    return " / ".join(f"{100.0 * (1 - w[f'main_top{k}_missed'] / n):.1f}%" for k in ((1, 5) if beam5 else (1,)))


def export_default(args: argparse.Namespace) -> None:
    """Slim copy (weights, config, featuriser, versions, metrics; no optimiser) of one run's best checkpoint."""
    from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint

    src = Path(args.runs) / args.export_variant / "gnn_std" / "best.pt"
    ck = load_checkpoint(src)
    meta = {k: v for k, v in ck["meta"].items() if k != "rng"}
    meta["source_run"] = str(src)
    rec_file = Path(args.runs) / args.export_variant / "records.json"
    if rec_file.exists():
        meta["test_metrics"] = [
            {k: r[k] for k in ("setting", *METRICS, "n")}
            for r in json.loads(rec_file.read_text())
            if r["model"] == "gnn"
        ]
    dst = Path(args.export_default)
    dst.parent.mkdir(parents=True, exist_ok=True)
    keep = ("model", "epoch", "config", "featurizer", "versions")
    save_checkpoint(dst, {**{k: ck[k] for k in keep}, "meta": meta})
    log(f"exported {src} -> {dst} ({dst.stat().st_size / 1e6:.2f} MB)")
    if args.export_edit:  # the bond-edit model the SMILES GNN decodes with, without its optimiser state
        e_src = Path(ck["config"]["model"]["edit_checkpoint"])
        eck = load_checkpoint(e_src)
        e_dst = Path(args.export_edit)
        emeta = {**{k: v for k, v in eck["meta"].items() if k != "rng"}, "source_run": str(e_src)}
        save_checkpoint(
            e_dst, {**{k: eck[k] for k in ("model", "epoch", "config", "versions") if k in eck}, "meta": emeta}
        )
        log(f"exported {e_src} -> {e_dst} ({e_dst.stat().st_size / 1e6:.2f} MB)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full")
    ap.add_argument("--config", default="configs/gnn_bench.yaml")
    ap.add_argument("--runs", default="runs/bench")
    ap.add_argument("--out", default="results")
    ap.add_argument("--variants", default="", help="comma-separated short names (default: all eight)")
    ap.add_argument("--minutes-x1", type=float, default=4.0)
    ap.add_argument("--minutes-x5", type=float, default=6.0)
    ap.add_argument("--naive-minutes", type=float, default=1.5)
    ap.add_argument("--cross-factor", type=float, default=0.75, help="budget multiplier of the cross runs")
    ap.add_argument("--naive-cross", action="store_true", help="also train/score the naive head's cross model")
    ap.add_argument(
        "--cross-steps-like-std",
        action="store_true",
        help="train a cross model for as many optimiser steps as its standard model (equal compute, not equal "
        "wall clock on a shared CPU)",
    )
    ap.add_argument(
        "--naive-limit",
        type=int,
        default=0,
        help="score the naive ablation on the first N lines of each test set only (0 = all)",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0, help="optimiser steps per run instead of a wall-clock budget")
    ap.add_argument("--models", default="gnn,gnn_naive", help="comma-separated: gnn, gnn_naive")
    ap.add_argument("--tasks", default="std,cross", help="comma-separated: std (train/valid), cross (train_cross)")
    ap.add_argument(
        "--t1-cross-from-std",
        action="store_true",
        help="Type 1: score test_cross with the standard model (train_cross is the same input for it)",
    )
    ap.add_argument("--limit-test-smiles", type=int, default=0, help="score SMILES variants on the first N lines")
    ap.add_argument("--steps-smiles", type=int, default=0, help="SMILES variants: steps per run (default --steps)")
    ap.add_argument("--edit-checkpoint", default="", help="SMILES variants: the bond-edit model to pair with")
    ap.add_argument("--val-limit-smiles", type=int, default=0, help="SMILES variants: validation lines")
    ap.add_argument("--beam-smiles", type=int, default=5, help="SMILES: hypotheses kept (top-k main products)")
    ap.add_argument("--limit-test", type=int, default=0, help="score only the first N lines (smoke runs)")
    ap.add_argument("--set", action="append", default=[], help="extra config override key=value")
    ap.add_argument("--aggregate-only", action="store_true")
    ap.add_argument("--export-default", default="", help="write a slim copy of a standard GNN run here")
    ap.add_argument("--export-variant", default="F_T1_x1")
    ap.add_argument("--export-edit", default="", help="with a SMILES --export-variant: also its edit model here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    command = "python scripts/run_gnn_benchmark.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    if not args.aggregate_only:
        wanted = [v for v in VARIANTS if not args.variants or variant_short(v) in args.variants.split(",")]
        for v in wanted:
            run_variant(args, v, command)
    aggregate(args)
    if args.export_default:
        export_default(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
