"""Does the mass-balance penalty help, and why are roles worse on Type-2 lines? Short CPU runs (configs/gnn_cpu.yaml,
600 steps, one seed) found the penalty moves neither EM (F_T1_x1 test_in 72.04 / 72.21 / 72.21 at weight 0 / 0.1 / 10;
F_T2_x1 63.47 / 63.72) nor role accuracy beyond noise, and the share of first hypotheses that balance falls slightly
as the weight grows (91.8 / 91.1 / 90.4); the variance form does no better (71.19). The Type-2 role gap (lines with
every role right: 73.75 against 83.25 on Type 1) closes with product features instead of multiplicity features
(85.15, EM 64.40 -> 66.35). This collects those records (``scripts/eval_roles_balance.py`` JSON lines and each run's
``summary.json``) into ``results/penalty_ablation.json`` and ``results/role_gap.json`` with the commands that made
them, and prints the two tables.

    python experiments/penalty_role_report.py --evals results/G_eval.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gnn_chemalgebra.io import atomic_write_text

TRAIN = (
    "gnnca train --config configs/gnn_cpu.yaml --set train.lr_schedule=cosine --set train.seed=0 "
    "--set train.max_steps=600 --set run_dir={run_dir} {sets}"
)
EVAL = "python scripts/eval_roles_balance.py --built built/full --checkpoint {checkpoint} --variant {variant}{limit}"


def run_record(checkpoint: str) -> dict:
    run_dir = Path(checkpoint).parent
    s = json.loads((run_dir / "summary.json").read_text())
    return {
        "run_dir": str(run_dir),
        "steps": s["steps"],
        "best_step": s["best_step"],
        "val_EM_best": round(float(s["best"].get("EM", float("nan"))), 2),
        "train_s": round(float(s["train_s"]), 1),
        "train_lines": s.get("train_lines"),
    }


def sets_of(run_dir: str) -> str:
    """The --set flags of each run of this report (kept next to the figures)."""
    table = {
        "runs/G_pen/F_T1_x1_w0.0": "--set data.dir=built/full --set data.variant=ChemAlgebra_F_T1_x1 "
        "--set train.mass_balance_weight=0.0",
        "runs/G_pen/F_T1_x1_w0.1": "--set data.dir=built/full --set data.variant=ChemAlgebra_F_T1_x1 "
        "--set train.mass_balance_weight=0.1",
        "runs/G_pen/F_T1_x1_w10": "--set data.dir=built/full --set data.variant=ChemAlgebra_F_T1_x1 "
        "--set train.mass_balance_weight=10",
        "runs/G_pen/F_T2_x1_w0.0": "--set data.dir=built/full --set data.variant=ChemAlgebra_F_T2_x1 "
        "--set train.mass_balance_weight=0.0",
        "runs/G_pen/F_T1_x1_w10_var": "--set data.dir=built/full --set data.variant=ChemAlgebra_F_T1_x1 "
        "--set train.mass_balance_weight=10 --set train.mass_balance_variance=true",
        "runs/G_roles/F_T2_x1_base": "--set data.dir=built/full --set data.variant=ChemAlgebra_F_T2_x1",
        "runs/G_roles/F_T2_x1_mixed": "--set data.dir=built/G_mixed --set data.variant=ChemAlgebra_F_T2_x1 "
        "--set model.mult_features=false --set model.product_features=true "
        "(built/G_mixed: python scripts/mix_type_lines.py --built built/full --variant ChemAlgebra_F_T2_x1 "
        "--out built/G_mixed)",
        "runs/G_roles/F_T2_x1_features": "--set data.dir=built/full --set data.variant=ChemAlgebra_F_T2_x1 "
        "--set model.mult_features=false --set model.product_features=true",
        "runs/G_roles/F_T2_x1_mixed_default": "--set data.dir=built/G_mixed --set data.variant=ChemAlgebra_F_T2_x1",
    }
    return table.get(run_dir, "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evals", type=Path, default=Path("results/G_eval.jsonl"))
    ap.add_argument("--out-dir", type=Path, default=Path("results"))
    args = ap.parse_args()
    recs = [json.loads(line) for line in args.evals.read_text().splitlines() if line.strip()]
    for r in recs:
        run = run_record(r["checkpoint"])
        r["train"] = run
        r["train_command"] = TRAIN.format(run_dir=run["run_dir"], sets=sets_of(run["run_dir"]))
        limit = f" --limit {r['n']}" if r["n"] not in (17822, 11874) else ""
        r["eval_command"] = EVAL.format(checkpoint=r["checkpoint"], variant=r["variant"], limit=limit)
    ablation = [r for r in recs if r["n"] == 17822 and r["label"].startswith("penalty weight")]
    roles = [r for r in recs if r["n"] != 17822]
    atomic_write_text(args.out_dir / "penalty_ablation.json", json.dumps(ablation, indent=1) + "\n")
    atomic_write_text(args.out_dir / "role_gap.json", json.dumps(roles, indent=1) + "\n")
    head = ["variant", "train.mass_balance_weight", "EM", "first hypothesis balances", "role line acc", "val EM (best)"]
    print("| " + " | ".join([*head, "train s"]) + " |")
    print("|---" * (len(head) + 1) + "|")
    for r in ablation:
        row = [r["variant"].replace("ChemAlgebra_", ""), r["label"][len("penalty weight ") :], r["EM"]]
        row += [r["first_hypothesis_balanced"], r["role_line_acc"], r["train"]["val_EM_best"], r["train"]["train_s"]]
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    print("| model | lines | n | roles all right (head) | (decoded) | consumed | spectator | product present | EM |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in roles:
        by = r["role_acc_by_gold_role"]
        label = r["label"] + (" (decode.role_evidence=false)" if r.get("role_evidence") is False else "")
        acc = {k: by.get(k, {}).get("acc", "-") for k in ("consumed", "spectator", "product present")}
        print(f"| {label} | {r['variant'].replace('ChemAlgebra_', '')} {r['split']} | {r['n']} | "
              f"{r['role_line_acc']} | {r['role_line_acc_decoded']} | {acc['consumed']} | {acc['spectator']} | "
              f"{acc['product present']} | {r['EM']} |")  # fmt: skip


if __name__ == "__main__":
    main()
