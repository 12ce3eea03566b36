"""Measure the CPU rates behind ``gnnca bench run --dry-run``'s estimate of a plan's cost and write them, each with
how it was measured and from which records, to gnn_chemalgebra/benchmark/rates.json.

Training seconds per optimiser step come from the benchmark records of the results table (median of train_s /
train_steps over the local-data cells, one thread each); prediction rates from the same records (Transformer), a
GNN bench run folder's predict-<setting>.json files (formula GNN), and the SMILES throughput measurement; ceiling
and shortcut scoring are timed here on one variant of each type.

    python experiments/bench_rates.py --results results --runs runs/bench --built built/full
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from gnn_chemalgebra.benchmark.ceilings import ceiling_records
from gnn_chemalgebra.benchmark.trivial import trivial_records
from gnn_chemalgebra.data.layout import split_files
from gnn_chemalgebra.io import atomic_write_json, read_lines

OUT = Path(__file__).resolve().parents[1] / "gnn_chemalgebra" / "benchmark" / "rates.json"
SETTINGS = ("test_in", "test_out", "test_cross")


def _rate(values: list[float], how: str, digits: int = 4) -> dict:
    if not values:
        raise SystemExit(f"bench_rates: error: no measurement for: {how}")
    return {"value": round(statistics.median(values), digits), "n": len(values), "from": how}


def train_rates(results: Path) -> dict:
    gnn = json.loads((results / "gnn.json").read_text())
    runs: dict[str, dict] = {"gnn_formula": {}, "gnn_smiles": {}, "gnn_naive": {}}
    for r in gnn:
        if r.get("training_data", "local") != "local" or not r.get("train_steps") or not r.get("train_s"):
            continue
        kind = "gnn_naive" if r["model"] == "gnn_naive" else f"gnn_{'smiles' if r['variant'][0] == 'S' else 'formula'}"
        if r["model"] in ("gnn", "gnn_naive"):  # one value per run: the settings of a run share it
            runs[kind][(r["variant"], r.get("train_task"))] = r["train_s"] / r["train_steps"]
    out = {k: _rate(list(v.values()), f"median train_s / train_steps of the local {k} runs in results/gnn.json")
           for k, v in runs.items()}  # fmt: skip
    tf = [r for r in json.loads((results / "transformer.json").read_text()) if r.get("training_data") == "local"]
    for kind, first in (("formula", "F"), ("smiles", "S")):
        per_run = {(r["variant"], r["task"], r["model"]): r["train_s"] / r["steps"] for r in tf
                   if r["variant"][0] == first and (r.get("steps") or 0) >= 1000}  # fmt: skip
        how = (
            f"median train_s / steps of the local {kind} Transformer runs (>= 1,000 steps) in results/transformer.json"
        )
        out[f"transformer_{kind}"] = _rate(list(per_run.values()), how)
        speeds = [r["predict_reactions_per_s"] for r in tf if r["variant"][0] == first and r.get("n", 0) >= 2000]
        how = f"median predict_reactions_per_s of the local {kind} Transformer records (>= 2,000 lines), same file"
        out[f"_predict_transformer_{kind}"] = _rate(speeds, how, 1)
    edits = json.loads((results / "edits.json").read_text())["training"]
    out["edits"] = _rate(
        [edits["train_s"] / edits["steps"]], "results/edits.json: train_s / steps of configs/edits_cpu.yaml"
    )
    out["_edit_steps"] = {"value": edits["steps"], "from": "results/edits.json: the steps configs/edits_cpu.yaml took"}
    return out


def gnn_predict_rate(runs: Path) -> dict:
    infos = [json.loads(p.read_text()) for p in sorted(runs.glob("F_*/gnn_*/predict-*.json"))]
    rates = [i["n"] / i["predict_s"] for i in infos if i.get("predict_s")]
    return _rate(rates, "median n / predict_s of the formula GNN predict-<setting>.json files of a bench run", 1)


def smiles_predict_rate(results: Path) -> dict:
    t = json.loads((results / "throughput-smiles.json").read_text())
    (rev,) = [k for k in t["median"] if k.startswith("rev")]
    how = "results/throughput-smiles.json: the bundled SMILES model, 100 lines, reactions per CPU second"
    return _rate([t["median"][rev]["smiles"]["rxn_s_cpu"]], how, 1)


def scoring_rates(built: Path) -> dict:
    out = {}
    for stage, fn in (
        ("ceilings", lambda v: ceiling_records(built, v)),
        ("trivial", lambda v: trivial_records(built, [v], "bench_rates", lambda _: None)),
    ):
        rates = []
        for v in ("ChemAlgebra_F_T1_x1", "ChemAlgebra_F_T2_x1"):
            lines = sum(len(read_lines(split_files(built, v, s)[0])) for s in SETTINGS)
            t0 = time.process_time()
            fn(v)
            rates.append(lines / (time.process_time() - t0))
        out[stage] = _rate(rates, f"test lines per CPU second of the {stage} stage on F_T1_x1 and F_T2_x1", 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument("--runs", type=Path, required=True, help="a bench run's --runs folder (formula predict files)")
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    train = train_rates(args.results)
    predict = {
        "gnn_formula": gnn_predict_rate(args.runs),
        "gnn_smiles": smiles_predict_rate(args.results),
        "transformer_formula": train.pop("_predict_transformer_formula"),
        "transformer_smiles": train.pop("_predict_transformer_smiles"),
    }
    predict["gnn_naive"] = {**predict["gnn_formula"], "from": "as gnn_formula (the same predictor)"}
    rates = {
        "about": "wall-clock rates of one-thread runs on a shared 2-core machine (the benchmark's own runs), so an "
        "idle core is faster: a rough guide, not a promise",
        "command": "python experiments/bench_rates.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "train_s_per_step": {k: v for k, v in train.items() if not k.startswith("_")},
        "edit_model_steps": train["_edit_steps"],
        "predict_lines_per_s": predict,
        "score_lines_per_s": scoring_rates(args.built),
    }
    atomic_write_json(args.out, rates)
    print(json.dumps(rates, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
