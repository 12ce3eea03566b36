"""Throughput harness: start-up, prediction, training and builder rates with peak memory, for the working tree and
a baseline git revision side by side. Measured with it, medians of 3 on an idle machine
(``results/throughput-speed-work.json``): against revision 6689ff0, ``gnnca predict`` started in 1.46 s instead of 4.16
s, predicted 1,527 formula reactions/s after start-up instead of 442 and 101 SMILES reactions/s (edit beam 5)
instead of 17.8, byte-identical; GNN training ran at 835 reactions/s instead of 452 (batch 64, one thread; 1,001
with batch 128), edit-model training at 196 instead of 88, and the builder's speed-up over a plain loop rose from
2.07x to 3.51x. The bundles with molecule identity rows (hidden 128, 3.3-3.5 M parameters) start in 0.98 s and
predict 1,317 formula and 169 SMILES reactions/s, against 2,614 and 178 for the hidden-64 bundles in the same run
(``results/throughput-identity-bundles.json``).

    OMP_NUM_THREADS=1 python experiments/throughput.py --built built/full --baseline REV [--rev HEAD] \
        [--repeats 3] [--only startup,formula,workers,smiles,gnn,gnn_fast,edit,builder]

Every figure comes from a child process (``gnnca predict``, ``gnnca train``, the edit trainer, the tree's
``experiments/bench_build.py``) started with the tree's own code on ``PYTHONPATH``, so a baseline revision checked
out with ``git worktree`` is measured by exactly the same commands as the working tree, interleaved repeat by
repeat, on the same (noisy, shared) machine. Peak memory is the child's ``ru_maxrss`` from ``os.wait4`` (the
largest process of the child's tree). The load average is recorded beside each measurement, because the
machine is shared.

Definitions:

- start-up: wall time of ``gnnca predict`` on one formula line, end to end (interpreter, imports, checkpoint
  load, one prediction, exit);
- prediction rxn/s after start-up: ``(n - 1) / (wall(n lines) - wall(1 line))`` with the same model and options;
- training rxn/s: the trainer's own counter over its optimisation steps (``history[*].train.reactions_per_s``,
  weighted by reactions), with featurisation reported apart (lines/s of the up-front featurisation);
- builder: ``bench_build.py`` of each tree (``experiments/``, or ``scripts/`` in older revisions): plain
  single-process loop vs the builder, same records.

The module only runs subprocesses; it imports neither torch nor the package, so the same driver measures any
revision.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHECKPOINTS = "gnn_chemalgebra/checkpoints"


@dataclass
class Measured:
    """One child process: wall seconds, CPU seconds (user + system, its whole process tree), peak resident
    memory (MiB, largest process), exit code, stderr tail, and the 1-minute load average at its start."""

    wall_s: float
    cpu_s: float
    peak_mib: float
    rc: int
    err: str
    load: float


@dataclass
class Tree:
    """A source tree to measure: the working tree, or a ``git worktree`` of a revision."""

    label: str
    root: Path
    rev: str
    env: dict[str, str] = field(default_factory=dict)
    profile_to: Path | None = None  # run children under cProfile, writing their stats here
    _predict_help: str | None = None

    def python(self) -> list[str]:
        if self.profile_to is not None:
            return [sys.executable, "-m", "cProfile", "-o", str(self.profile_to)]
        return [sys.executable]

    def gnnca(self) -> list[str]:
        return [*self.python(), "-m", "gnn_chemalgebra.cli"]

    def has_predict_option(self, option: str) -> bool:
        """Whether this tree's ``gnnca predict`` takes ``option`` (asked through its own ``--help``)."""
        if self._predict_help is None:
            cmd = [sys.executable, "-m", "gnn_chemalgebra.cli", "predict", "--help"]
            env = {**self.env, "COLUMNS": "200"}
            r = subprocess.run(cmd, cwd=self.root, env=env, capture_output=True, text=True)
            self._predict_help = r.stdout
        return option in self._predict_help.split()


def _child_env(root: Path, threads: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GNNCA_")}
    env["PYTHONPATH"] = str(root)
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    env["PYTHONHASHSEED"] = "0"
    env["TQDM_DISABLE"] = "1"
    return env


def run_child(cmd: Sequence[str], tree: Tree, stdout_path: Path | None = None, timeout: float = 3600) -> Measured:
    """Run ``cmd`` in ``tree`` and measure it; stdout goes to ``stdout_path`` (or is dropped)."""
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as errf:
        t0 = time.perf_counter()
        p = subprocess.Popen(list(cmd), cwd=tree.root, env=tree.env, stdout=out, stderr=errf)
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except KeyboardInterrupt:
            p.kill()
            raise
        wall = time.perf_counter() - t0
        errf.seek(0)
        err = errf.read().decode("utf-8", "replace")[-3000:]
    if stdout_path:
        out.close()  # type: ignore[union-attr]
    p.returncode = os.waitstatus_to_exitcode(status)
    return Measured(wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, p.returncode, err, load)


def _check(m: Measured, what: str, tree: Tree) -> Measured:
    if m.rc != 0:
        raise RuntimeError(f"{tree.label}: {what} failed (exit {m.rc}):\n{m.err}")
    return m


def make_worktree(rev: str, dest: Path) -> Path:
    """A detached ``git worktree`` of ``rev`` at ``dest`` (the main checkout's index is not touched)."""
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "--force", str(dest), rev],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return dest


def remove_worktree(dest: Path) -> None:
    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(dest)], check=False)
    shutil.rmtree(dest, ignore_errors=True)


def prepare(tree: Tree) -> None:
    """Byte-compile the tree (a fresh worktree would otherwise pay it in its first timed run) and check that its
    children import the package from the tree itself, not from the installed copy."""
    subprocess.run([*tree.python(), "-m", "compileall", "-q", "gnn_chemalgebra"], cwd=tree.root, env=tree.env)
    r = subprocess.run(
        [*tree.python(), "-c", "import gnn_chemalgebra; print(gnn_chemalgebra.__file__)"],
        cwd=tree.root,
        env=tree.env,
        capture_output=True,
        text=True,
        check=True,
    )
    if not Path(r.stdout.strip()).resolve().is_relative_to(tree.root.resolve()):
        raise RuntimeError(f"{tree.label}: children import {r.stdout.strip()}, not the tree at {tree.root}")


def short_rev(root: Path, rev: str = "HEAD") -> str:
    r = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", rev], capture_output=True, text=True)
    return r.stdout.strip() or rev


def _median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


# --------------------------------------------------------------------------------------------- measurements
@dataclass
class Inputs:
    """Input files shared by every tree (written once, so both trees read the same bytes)."""

    tmp: Path
    built: Path
    formula_one: Path
    formula_n: Path
    smiles_one: Path
    smiles_n: Path
    n_formula: int
    n_smiles: int


def write_inputs(tmp: Path, built: Path, n_formula: int, n_smiles: int) -> Inputs:
    def lines(variant: str, n: int) -> list[str]:
        with open(built / variant / "src-test_in.txt", encoding="utf-8") as fh:
            out = [ln.rstrip("\n") for _, ln in zip(range(n), fh, strict=False)]
        if len(out) < n:
            raise ValueError(f"{variant} test_in has {len(out)} lines, fewer than {n}")
        return out

    f, s = lines("ChemAlgebra_F_T1_x1", n_formula), lines("ChemAlgebra_S_T1_x1", n_smiles)
    paths = {k: tmp / f"{k}.txt" for k in ("formula_one", "formula_n", "smiles_one", "smiles_n")}
    paths["formula_one"].write_text(f[0] + "\n", encoding="utf-8")
    paths["formula_n"].write_text("\n".join(f) + "\n", encoding="utf-8")
    paths["smiles_one"].write_text(s[0] + "\n", encoding="utf-8")
    paths["smiles_n"].write_text("\n".join(s) + "\n", encoding="utf-8")
    return Inputs(tmp, built, n_formula=n_formula, n_smiles=n_smiles, **paths)


def predict_cmd(tree: Tree, inp: Path, checkpoint: str, extra: Sequence[str] = ()) -> list[str]:
    return [*tree.gnnca(), "predict", str(inp), "--checkpoint", f"{CHECKPOINTS}/{checkpoint}", *extra]


def _train_rate(summary: dict[str, Any]) -> float:
    """Reactions/s of the optimisation steps, weighted over the epochs of ``summary['history']``."""
    hist = [h for h in summary.get("history", []) if isinstance(h.get("train"), dict)]
    rates = [h["train"]["reactions_per_s"] for h in hist if "reactions_per_s" in h["train"]]
    if rates:
        return float(statistics.fmean(rates))
    if "train_reactions_per_s" in summary:
        return float(summary["train_reactions_per_s"])
    raise KeyError("summary has no reactions_per_s")


def _train_overrides(built: Path, run_dir: Path, lines: int, steps: int, val_limit: int) -> list[str]:
    """``--set`` pairs shared by both trainers: ``lines`` training records, ``steps`` optimisation steps, one
    epoch, one CPU thread, no TensorBoard or progress bar."""
    sets = [
        f"data.dir={built}",
        f"run_dir={run_dir}",
        f"data.limit={lines}",
        f"data.val_limit={val_limit}",
        "train.epochs=1",
        f"train.max_steps={steps}",
        "train.max_minutes=0",
        "train.num_threads=1",
        "train.device=cpu",
        "train.tensorboard=false",
        "train.progress=false",
    ]
    return [a for s in sets for a in ("--set", s)]


def gnn_train_cmd(
    tree: Tree, built: Path, run_dir: Path, lines: int, steps: int, config: str = "configs/gnn_cpu.yaml"
) -> list[str]:
    over = ["--set", "data.variant=ChemAlgebra_F_T1_x1", *_train_overrides(built, run_dir, lines, steps, 100)]
    return [*tree.gnnca(), "train", "--config", config, *over]


FAST_GNN_CONFIG = "configs/gnn_fast.yaml"  # batch 128: half the steps of the batch-64 row see the same reactions
FAST_GNN_SETS = ["--set", "train.batch_size=128", "--set", "train.lr=0.0014"]  # the same on gnn_cpu.yaml
BENCH_BUILD = ("experiments/bench_build.py", "scripts/bench_build.py")  # where a tree keeps it, newest first


def edit_train_cmd(tree: Tree, built: Path, run_dir: Path, lines: int, steps: int) -> list[str]:
    over = _train_overrides(built, run_dir, lines, steps, 50)
    edits = tree.root / "gnn_chemalgebra" / "training" / "edits.py"  # before the one engine: its own main()
    if edits.exists() and "\ndef main(" in edits.read_text(encoding="utf-8"):
        return [*tree.python(), "-m", "gnn_chemalgebra.training.edits", "--config", "configs/edits_cpu.yaml", *over]
    return [*tree.gnnca(), "train", "--config", "configs/edits_cpu.yaml", *over]


def measure_startup(tree: Tree, inp: Inputs) -> dict[str, Any]:
    m = _check(run_child(predict_cmd(tree, inp.formula_one, "gnn_default.pt"), tree), "start-up", tree)
    return {"wall_s": m.wall_s, "cpu_s": m.cpu_s, "peak_mib": m.peak_mib, "load": m.load}


def _measure_predict(
    tree: Tree, one: Path, many: Path, n: int, checkpoint: str, extra: Sequence[str], out: Path
) -> dict[str, Any]:
    m1 = _check(run_child(predict_cmd(tree, one, checkpoint, extra), tree), "predict (1 line)", tree)
    mn = _check(run_child(predict_cmd(tree, many, checkpoint, extra), tree, stdout_path=out), "predict", tree)
    return {
        "n": n,
        "one_line_s": m1.wall_s,
        "wall_s": mn.wall_s,
        "one_line_cpu_s": m1.cpu_s,
        "cpu_s": mn.cpu_s,
        "rxn_s": (n - 1) / max(mn.wall_s - m1.wall_s, 1e-3),
        "rxn_s_cpu": (n - 1) / max(mn.cpu_s - m1.cpu_s, 1e-3),
        "peak_mib": mn.peak_mib,
        "load": mn.load,
        "output": str(out),
    }


def measure_formula(tree: Tree, inp: Inputs, workers: int = 0) -> dict[str, Any] | None:
    extra: list[str] = []
    if workers:
        if not tree.has_predict_option("--workers"):
            return None
        extra = ["--workers", str(workers)]
    out = inp.tmp / f"{tree.label}-formula-w{workers}.txt"
    return _measure_predict(tree, inp.formula_one, inp.formula_n, inp.n_formula, "gnn_default.pt", extra, out)


def measure_smiles(tree: Tree, inp: Inputs) -> dict[str, Any]:
    out = inp.tmp / f"{tree.label}-smiles.txt"
    return _measure_predict(tree, inp.smiles_one, inp.smiles_n, inp.n_smiles, "gnn_smiles_default.pt", (), out)


def _measure_train(tree: Tree, cmd_of: Callable[..., list[str]], inp: Inputs, lines: int, steps: int, what: str):
    run_dir = Path(tempfile.mkdtemp(prefix=f"{tree.label}-{what}-", dir=inp.tmp))
    m = _check(run_child(cmd_of(tree, inp.built, run_dir, lines, steps), tree), what, tree)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    n_train = int(summary.get("n_train", lines))
    feat_s = float(summary.get("featurize_s", summary.get("build_s", float("nan"))))  # build_s: the one engine
    return {
        "rxn_s": _train_rate(summary),
        "featurize_s": feat_s,
        "featurize_rxn_s": n_train / feat_s if feat_s and feat_s == feat_s else float("nan"),
        "n_train": n_train,
        "steps": summary.get("steps"),
        "wall_s": m.wall_s,
        "peak_mib": m.peak_mib,
        "load": m.load,
    }


def measure_gnn_train(tree: Tree, inp: Inputs, lines: int, steps: int) -> dict[str, Any]:
    return _measure_train(tree, gnn_train_cmd, inp, lines, steps, "gnn-train")


def measure_gnn_fast_train(tree: Tree, inp: Inputs, lines: int, steps: int) -> dict[str, Any] | None:
    """The batch-128 preset on the same reactions (a tree without configs/gnn_fast.yaml: gnn_cpu.yaml at batch 128
    and lr 0.0014, which that preset was)."""
    if (tree.root / FAST_GNN_CONFIG).exists():
        cmd = functools.partial(gnn_train_cmd, config=FAST_GNN_CONFIG)
    else:

        def cmd(*args: Any) -> list[str]:
            return [*gnn_train_cmd(*args), *FAST_GNN_SETS]

    return _measure_train(tree, cmd, inp, lines, max(1, steps // 2), "gnn-fast-train")


def measure_edit_train(tree: Tree, inp: Inputs, lines: int, steps: int) -> dict[str, Any]:
    return _measure_train(tree, edit_train_cmd, inp, lines, steps, "edit-train")


def measure_builder(tree: Tree, inp: Inputs, n: int, repeats: int, workers: int) -> dict[str, Any]:
    out = inp.tmp / f"{tree.label}-build.json"
    script = next((p for p in BENCH_BUILD if (tree.root / p).exists()), BENCH_BUILD[0])
    cmd = [*tree.python(), script, "--n", str(n), "--repeats", str(repeats)]
    cmd += ["--workers", str(workers)]
    m = _check(run_child(cmd, tree, stdout_path=out), "builder", tree)
    rec: dict[str, Any] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
    return {
        "plain_rxn_s": rec.get("plain_loop_rxn_per_s"),
        "builder_rxn_s": rec.get("builder_rxn_per_s"),
        "speedup": rec.get("speedup"),
        "workers": rec.get("workers", workers),
        "peak_mib": m.peak_mib,
        "load": m.load,
    }


# --------------------------------------------------------------------------------------------- report
ROWS: tuple[tuple[str, str, str, str], ...] = (
    # key, label, figure field, unit
    ("startup", "start-up: `gnnca predict` on one line, end to end (wall)", "wall_s", "s"),
    ("startup", "start-up (CPU time)", "cpu_s", "s"),
    ("formula", "formula prediction after start-up, 1 process (wall)", "rxn_s", "rxn/s"),
    ("formula", "formula prediction after start-up, 1 process (CPU time)", "rxn_s_cpu", "rxn/s"),
    ("formula_workers", "formula prediction after start-up, --workers 2 (wall)", "rxn_s", "rxn/s"),
    ("smiles", "SMILES prediction (edit beam 5) after start-up (wall)", "rxn_s", "rxn/s"),
    ("smiles", "SMILES prediction (edit beam 5) after start-up (CPU time)", "rxn_s_cpu", "rxn/s"),
    ("gnn_train", "GNN training, F_T1_x1, 1 thread (steps)", "rxn_s", "rxn/s"),
    (
        "gnn_train",
        "GNN training set-up before the first step (featurisation; the one engine: build)",
        "featurize_rxn_s",
        "rxn/s",
    ),
    ("gnn_fast", "GNN training, F_T1_x1, 1 thread, configs/gnn_fast.yaml (batch 128; steps)", "rxn_s", "rxn/s"),
    ("edit_train", "edit-model training, 1 thread (steps)", "rxn_s", "rxn/s"),
    ("edit_train", "edit-model training set-up before the first step (same)", "featurize_rxn_s", "rxn/s"),
    ("builder", "builder vs plain loop (speed-up)", "speedup", "x"),
)
TARGET_OF = {
    ("startup", "wall_s"): "<= 2.0 s",
    ("startup", "cpu_s"): "<= 2.0 s",
    ("formula", "rxn_s"): ">= 1,000",
    ("formula", "rxn_s_cpu"): ">= 1,000",
    ("smiles", "rxn_s"): ">= 100",
    ("smiles", "rxn_s_cpu"): ">= 100",
    ("gnn_train", "rxn_s"): ">= 1,500",
    ("gnn_fast", "rxn_s"): ">= 1,500",
    ("edit_train", "rxn_s"): ">= 500",
    ("builder", "speedup"): ">= 3x",
}


def summarise(runs: dict[str, dict[str, list[dict[str, Any] | None]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Median of every numeric field over the repeats, per tree and measurement."""
    med: dict[str, dict[str, dict[str, Any]]] = {}
    for label, by_key in runs.items():
        med[label] = {}
        for key, reps in by_key.items():
            reps_ok = [r for r in reps if r]
            if not reps_ok:
                continue
            fields = {k for r in reps_ok for k, v in r.items() if isinstance(v, int | float) and v is not None}
            med[label][key] = {f: _median([r[f] for r in reps_ok if isinstance(r.get(f), int | float)]) for f in fields}
            med[label][key]["repeats"] = len(reps_ok)
            m = med[label][key]
            if "one_line_s" in m:  # rates from the medians: one slow start-up does not make a rate
                m["rxn_s"] = (m["n"] - 1) / max(m["wall_s"] - m["one_line_s"], 1e-3)
                m["rxn_s_cpu"] = (m["n"] - 1) / max(m["cpu_s"] - m["one_line_cpu_s"], 1e-3)
    return med


def _fmt(v: Any, unit: str) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if unit == "s":
        return f"{v:.2f} s"
    if unit == "x":
        return f"{v:.2f}x"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def format_table(med: dict[str, dict[str, dict[str, Any]]], labels: Sequence[str]) -> str:
    head = "| measurement | target | " + " | ".join(labels) + " | ratio | peak RSS (MiB) " + " / ".join(labels) + " |"
    lines = [head, "|" + "---|" * (len(labels) + 4)]
    for key, name, f, unit in ROWS:
        vals = [med.get(lb, {}).get(key, {}).get(f) for lb in labels]
        if all(v is None for v in vals):
            continue
        ratio = "-"
        if len(vals) == 2 and all(isinstance(v, float | int) and v for v in vals):
            a, b = vals  # type: ignore[misc]
            r = (a / b) if unit == "s" else (b / a)  # > 1 means the second tree is faster
            ratio = f"{r:.2f}x"
        mems = " / ".join(_fmt(med.get(lb, {}).get(key, {}).get("peak_mib"), "MiB") for lb in labels)
        cells = " | ".join(_fmt(v, unit) for v in vals)
        lines.append(f"| {name} | {TARGET_OF.get((key, f), '')} | {cells} | {ratio} | {mems} |")
    return "\n".join(lines)


def identical_outputs(
    runs: dict[str, dict[str, list[dict[str, Any] | None]]], labels: Sequence[str]
) -> dict[str, bool]:
    """Whether every tree's predictions are byte-identical to the first tree's (first repeat)."""
    same: dict[str, bool] = {}
    for key in ("formula", "formula_workers", "smiles"):
        outs = [runs.get(lb, {}).get(key, [None])[0] for lb in labels]
        ref = runs.get(labels[0], {}).get("formula" if key == "formula_workers" else key, [None])[0]
        files = [o["output"] for o in outs if o] + ([ref["output"]] if ref and key == "formula_workers" else [])
        if len(files) >= 2:
            data = [Path(p).read_bytes() for p in files]
            same[key] = all(d == data[0] for d in data)
    return same


def write_profiles(tree: Tree, plan: Sequence[tuple[str, Callable[[Tree], Any]]], out_dir: Path, top: int) -> None:
    """Run each measurement once under cProfile (the last child of a measurement is the one kept: the many-line
    prediction, the training run) and write the top ``top`` functions by cumulative and by own time."""
    import io
    import pstats

    out_dir.mkdir(parents=True, exist_ok=True)
    for key, fn in plan:
        prof = out_dir / f"{key}.pstats"
        tree.profile_to = prof
        try:
            fn(tree)
        finally:
            tree.profile_to = None
        buf = io.StringIO()
        st = pstats.Stats(str(prof), stream=buf).strip_dirs()
        st.sort_stats("cumulative").print_stats(top)
        st.sort_stats("tottime").print_stats(top)
        (out_dir / f"{key}.txt").write_text(buf.getvalue(), encoding="utf-8")
        print(f"profile of {key}: {out_dir / f'{key}.txt'}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", default="built/full", help="A folder written by 'gnnca data build'.")
    ap.add_argument("--baseline", default="", help="Also measure this git revision (a temporary worktree).")
    ap.add_argument("--rev", default="", help="Measure this revision instead of the working tree.")
    ap.add_argument(
        "--only", default="", help="Comma list of: startup,formula,workers,smiles,gnn,gnn_fast,edit,builder."
    )
    ap.add_argument("--repeats", type=int, default=3, help="Interleaved repeats per measurement (medians).")
    ap.add_argument("--formula-lines", type=int, default=2000)
    ap.add_argument("--smiles-lines", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2, help="--workers for the parallel predict row.")
    ap.add_argument("--train-lines", type=int, default=3000, help="GNN training lines (featurised up front).")
    ap.add_argument("--train-steps", type=int, default=60, help="GNN optimisation steps (batch 64).")
    ap.add_argument("--edit-lines", type=int, default=800, help="Edit-model training reactions.")
    ap.add_argument("--edit-steps", type=int, default=25, help="Edit-model optimisation steps (batch 32).")
    ap.add_argument("--build-n", type=int, default=2000, help="Reactions for the builder comparison.")
    ap.add_argument("--json", default="results/throughput.json", help="Write the report here ('' = do not).")
    ap.add_argument("--profile", default="", help="Instead of timing, profile each measurement once into DIR.")
    ap.add_argument("--profile-top", type=int, default=30, help="Functions listed per profile.")
    args = ap.parse_args(argv)

    only = {s.strip() for s in args.only.split(",") if s.strip()}
    want = lambda k: not only or k in only  # noqa: E731
    built = Path(args.built).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="bench_throughput-"))
    trees: list[Tree] = []
    try:
        if args.baseline:
            root = make_worktree(args.baseline, tmp / "baseline")
            trees.append(Tree(f"baseline {short_rev(REPO, args.baseline)}", root, args.baseline))
        if args.rev:
            root = make_worktree(args.rev, tmp / "rev")
            trees.append(Tree(f"rev {short_rev(REPO, args.rev)}", root, args.rev))
        else:
            trees.append(Tree(f"working tree ({short_rev(REPO)}+)", REPO, "WORKTREE"))
        for t in trees:
            t.env = _child_env(t.root, 1)
            prepare(t)
        inp = write_inputs(tmp, built, args.formula_lines, args.smiles_lines)
        plan: list[tuple[str, Callable[[Tree], dict[str, Any] | None]]] = []
        if want("startup"):
            plan.append(("startup", lambda t: measure_startup(t, inp)))
        if want("formula"):
            plan.append(("formula", lambda t: measure_formula(t, inp)))
        if want("workers") and args.workers > 1:
            plan.append(("formula_workers", lambda t: measure_formula(t, inp, args.workers)))
        if want("smiles"):
            plan.append(("smiles", lambda t: measure_smiles(t, inp)))
        if want("gnn"):
            plan.append(("gnn_train", lambda t: measure_gnn_train(t, inp, args.train_lines, args.train_steps)))
        if want("gnn_fast"):
            plan.append(("gnn_fast", lambda t: measure_gnn_fast_train(t, inp, args.train_lines, args.train_steps)))
        if want("edit"):
            plan.append(("edit_train", lambda t: measure_edit_train(t, inp, args.edit_lines, args.edit_steps)))
        if want("builder"):
            plan.append(("builder", lambda t: measure_builder(t, inp, args.build_n, 3, args.workers)))
        if args.profile:
            write_profiles(trees[-1], plan, Path(args.profile), args.profile_top)
            return 0
        runs: dict[str, dict[str, list[dict[str, Any] | None]]] = {t.label: {} for t in trees}
        started = time.time()
        failures: list[str] = []
        for key, fn in plan:
            reps = 1 if key == "builder" else args.repeats  # bench_build repeats (3) inside itself
            for r in range(reps):  # interleaved: every tree sees the same machine load
                for t in trees:
                    try:
                        res = fn(t)
                    except (RuntimeError, OSError, ValueError, KeyError) as err:  # report it, measure the rest
                        print(f"{key} {t.label}: {err}", file=sys.stderr)
                        failures.append(f"{key} {t.label}: {str(err)[-400:]}")
                        res = None
                    runs[t.label].setdefault(key, []).append(res)
                    short = {k: round(v, 2) for k, v in (res or {}).items() if isinstance(v, float)}
                    print(f"[{time.time() - started:6.0f} s] {key} {r + 1}/{reps} {t.label}: {short}", file=sys.stderr)
        labels = [t.label for t in trees]
        med = summarise(runs)
        same = identical_outputs(runs, labels)
        table = format_table(med, labels)
        load = os.getloadavg()
        print(table)
        print(f"\nidentical predictions across trees: {same or 'n/a'}; load average now {load[0]:.2f}, "
              f"{load[1]:.2f}, {load[2]:.2f} on {os.cpu_count()} cores; medians of {args.repeats} repeats")  # fmt: skip
        report = {
            "command": "python experiments/throughput.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": {"cores": os.cpu_count(), "python": platform.python_version(), "loadavg_end": list(load)},
            "trees": {t.label: {"rev": t.rev, "head": short_rev(t.root)} for t in trees},
            "settings": {k: v for k, v in vars(args).items() if k != "json"},
            "targets": {f"{k}.{f}": v for (k, f), v in TARGET_OF.items()},
            "median": med,
            "runs": runs,
            "identical_predictions": same,
            "failures": failures,
            "table": table,
        }
        if args.json:
            path = Path(args.json)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp_json = path.with_suffix(".json.tmp")
            tmp_json.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
            tmp_json.replace(path)
        return 0 if all(same.values()) else 1
    finally:
        for t in trees:
            if t.rev != "WORKTREE":
                remove_worktree(t.root)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
