"""Which way of batching bags is faster: PyG's ``Batch.from_data_list`` (through its ``DataLoader``) or the project's
own collation (``data/bagbatch.py``: ``PackedBags`` for in-memory training, ``collate_bags`` for bags built on
access and for validation, ``Featurizer.bag_fields`` for prediction). Both paths run in one process, interleaved
repeat by repeat, on the same bags, and give the same tensors key for key (checked here before timing):
training = one epoch of forward, losses, backward and AdamW steps from the same seed (the BagGNN of
``configs/gnn_cpu.yaml``: hidden 128, batch 64); prediction = ``predict_lines`` of test_in lines with the given
checkpoint, whose network batch is built either way (the decoded lines are compared too); plus the collation alone
and the import of PyG's batching in a fresh interpreter. Medians of the repeats, one thread.

Measured (``results/batching_paths.json``: F_T1_x1, 2,000 training lines, 300 test_in lines, the bundled formula
model, 5 repeats, on two cores shared with other jobs, so absolute rates are low): training 291 reactions/s packed
and 285 with ``collate_bags`` against 279 through PyG's loader; prediction 336 lines/s against 286; the collation
alone 24,408 (packed) and 7,541 bags/s against 3,169 for training batches, 7,974 (``bag_fields``) against 1,048 for
prediction batches; importing ``torch_geometric.data`` adds 1.15 s to a process. So the package batches bags its
own way only (experiments/performance.md "Batching paths"); PyG is kept here, as the reference.

    nice -n 5 python experiments/batching_paths.py --built built/full --train-lines 2000 --predict-lines 300 \
        --repeats 5 --json results/batching_paths.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader as TorchLoader
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader as PygLoader

from gnn_chemalgebra.data.bagbatch import PackedBags, collate_bags
from gnn_chemalgebra.data.dataset import ExtraVocab, collate_examples, load_examples, to_data, vocab_compositions
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.data.layout import split_files
from gnn_chemalgebra.inference.predict_command import predict_lines
from gnn_chemalgebra.inference.predictor import Predictor
from gnn_chemalgebra.inference.runner import ModelRunner
from gnn_chemalgebra.io import read_lines
from gnn_chemalgebra.models.gnn import BagGNNConfig, build_model
from gnn_chemalgebra.models.losses import compute_losses

MODEL = {"hidden": 128, "layers": 3, "heads": 4, "dropout": 0.1, "bag_mixer": "transformer", "bag_layers": 1,
         "set_encoder": "transformer", "set_layers": 2}  # fmt: skip


class PygBag(Data):
    """One bag as a PyG ``Data``, batched by PyG: ``atom2mol`` shifted by the molecules before it,
    ``mol_graph``/``ext_graph`` by the bags (``edge_index`` by the atoms, PyG's own rule)."""

    def __inc__(self, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if key == "atom2mol":
            return int(self.num_mols)
        if key in ("mol_graph", "ext_graph"):
            return 1
        return super().__inc__(key, value, *args, **kwargs)


def as_pyg(bag: Any) -> PygBag:
    return PygBag(**{k: bag[k] for k in bag.keys()})


def same_batches(a: Any, b: Any) -> bool:
    keys = [k for k in a.keys() if isinstance(getattr(a, k), torch.Tensor)]
    return all(torch.equal(getattr(a, k), getattr(b, k)) for k in keys) and int(a.num_graphs) == int(b.num_graphs)


def train_epoch(loader: Any, bags_n: int, feat: Featurizer, vocab: ExtraVocab, seed: int) -> float:
    """Reactions/s of one epoch (forward, losses, backward, step) from ``seed``."""
    torch.manual_seed(seed)
    cfg = BagGNNConfig.from_settings(MODEL, feat.settings(), len(vocab))
    model = build_model(cfg, vocab_compositions(vocab, feat)).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    weights = {"mass_balance": 0.1, "mass_balance_variance": 0.0}
    t = time.perf_counter()
    for batch in loader():
        losses = compute_losses(model(batch), batch, model, weights)
        opt.zero_grad(set_to_none=True)
        losses["total"].backward()
        opt.step()
    return bags_n / (time.perf_counter() - t)


def collate_rate(loader: Any, n: int) -> float:
    t = time.perf_counter()
    for _ in loader():
        pass
    return n / (time.perf_counter() - t)


def import_seconds(module: str, repeats: int) -> float:
    """Median wall time of importing torch and ``module`` minus that of torch alone, in fresh interpreters with the
    deferred imports ``gnnca`` installs (``lazy_imports``)."""
    head = "from gnn_chemalgebra import lazy_imports; lazy_imports.install(); import torch"

    def wall(code: str) -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - t

    base = statistics.median(wall(head) for _ in range(repeats))
    return statistics.median(wall(f"{head}, {module}") for _ in range(repeats)) - base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--built", type=Path, default=Path("built/full"))
    ap.add_argument("--variant", default="ChemAlgebra_F_T1_x1")
    ap.add_argument("--train-split", default="train")
    ap.add_argument("--train-lines", type=int, default=2000)
    ap.add_argument("--predict-lines", type=int, default=300)
    ap.add_argument("--checkpoint", default="gnn_chemalgebra/checkpoints/gnn_default.pt")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(1)

    exs = load_examples(args.built, args.variant, args.train_split, args.train_lines)
    feat = Featurizer("smiles" if "_S_" in args.variant else "formula")
    vocab = ExtraVocab.build(exs, 1024)
    own = [to_data(ex, feat, vocab, i) for i, ex in enumerate(exs)]
    pyg = [as_pyg(b) for b in own]
    n, bs = len(own), args.batch_size

    def gen() -> torch.Generator:
        return torch.Generator().manual_seed(0)

    packed = PackedBags(own)  # built once per training run
    loaders = {
        "pyg_loader": lambda: PygLoader(pyg, batch_size=bs, shuffle=True, generator=gen()),
        "own_packed": lambda: TorchLoader(range(n), batch_size=bs, shuffle=True, generator=gen(),
                                          collate_fn=packed.batch),
        "own_collate": lambda: TorchLoader(own, batch_size=bs, shuffle=True, generator=gen(), collate_fn=collate_bags),
    }  # fmt: skip
    firsts = {k: next(iter(f())) for k, f in loaders.items()}
    assert same_batches(firsts["own_packed"], firsts["pyg_loader"])
    assert same_batches(firsts["own_collate"], firsts["pyg_loader"])

    src = read_lines(split_files(args.built, args.variant, "test_in")[0])[: args.predict_lines]
    predictor = Predictor.from_checkpoint(args.checkpoint)
    own_run = ModelRunner.run

    def pyg_run(self: ModelRunner, examples: Any) -> Any:  # the network batch through PyG
        return self._outputs(Batch.from_data_list([as_pyg(d) for d in self.featurize(examples)]))

    def bags_run(self: ModelRunner, examples: Any) -> Any:  # one object per bag, then collate_bags
        return self._outputs(collate_bags(self.featurize(examples)))

    def predict(run: Any) -> tuple[float, list[str]]:
        ModelRunner.run = run
        try:
            t = time.perf_counter()
            res = predict_lines(src, predictor)
            return len(src) / (time.perf_counter() - t), [r["prediction"] for r in res.records]
        finally:
            ModelRunner.run = own_run

    pred_exs = exs[: args.predict_lines]
    pred_collate = {  # the prediction batch: per-bag objects batched by PyG or by collate_bags, or bag_fields
        "pyg": lambda: Batch.from_data_list([as_pyg(to_data(ex, feat, vocab, i, labels=False))
                                             for i, ex in enumerate(pred_exs)]),
        "own_bags": lambda: collate_bags([to_data(ex, feat, vocab, i, labels=False) for i, ex in enumerate(pred_exs)]),
        "own_fields": lambda: collate_examples(pred_exs, feat),
    }  # fmt: skip
    assert same_batches(pred_collate["own_fields"](), pred_collate["pyg"]())
    assert same_batches(pred_collate["own_bags"](), pred_collate["pyg"]())
    # untimed warm-up (molecule caches, allocator); the decoded lines of the two paths must agree
    runners = (("pyg", pyg_run), ("own_bags", bags_run), ("own", own_run))
    lines = {k: predict(run)[1] for k, run in runners}
    assert lines["pyg"] == lines["own"] == lines["own_bags"], "the paths predicted different lines"

    runs: dict[str, list[float]] = {}
    for r in range(args.repeats):
        order = list(loaders) if r % 2 == 0 else list(loaders)[::-1]  # alternate, so no path always goes first
        for k in order:
            runs.setdefault(f"train_{k}", []).append(train_epoch(loaders[k], n, feat, vocab, seed=r))
            runs.setdefault(f"collate_train_{k}", []).append(collate_rate(loaders[k], n))
        for k, run in runners[:: 1 if r % 2 == 0 else -1]:
            runs.setdefault(f"predict_{k}", []).append(predict(run)[0])
        for k in pred_collate if r % 2 == 0 else list(pred_collate)[::-1]:
            t = time.perf_counter()
            pred_collate[k]()
            runs.setdefault(f"collate_predict_{k}", []).append(len(pred_exs) / (time.perf_counter() - t))
        print(f"repeat {r + 1}/{args.repeats}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in runs.items()), flush=True)
    out = {
        "variant": args.variant,
        "train_lines": n,
        "predict_lines": len(src),
        "batch_size": bs,
        "repeats": args.repeats,
        "checkpoint": args.checkpoint,
        "unit": "reactions/s",
        "median": {k: round(statistics.median(v), 1) for k, v in runs.items()},
        "import_torch_geometric_data_s": round(import_seconds("torch_geometric.data", args.repeats), 3),
        "runs": runs,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "runs"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
