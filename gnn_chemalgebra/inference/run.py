"""The pieces of ``gnnca predict`` around the predictor: the bundled checkpoints, the extent rule, ``--set``
overrides, a parsed line -> :class:`~gnn_chemalgebra.data.dataset.BagExample` (a line must be in the checkpoint's
representation: it is refused, never converted), and the ``--workers`` process pool. The stream that reads and
predicts lines is :mod:`.stream`, driven by :mod:`.predict_command`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..algebra.extent import guess_coef_set
from ..chem.bag import Term
from ..chem.bagfile import ReactionInput, parse_reaction_input
from ..data.dataset import BagExample, example_from_terms
from ..errors import InputError
from .prediction import LinePredictor, LoadSpec, Prediction
from .stop import stop_held, stop_raising, worker_signals

_BUNDLED = Path(__file__).resolve().parents[1] / "checkpoints"  # package data
DEFAULT_CHECKPOINT = _BUNDLED / "gnn_default.pt"  # formula model
SMILES_CHECKPOINT = _BUNDLED / "gnn_smiles_default.pt"  # SMILES model (pairs with edit_default.pt)
# the SMILES model of lines written in the chemist's convention: fine-tuned on the reactions the benchmark's rule
# drops and on textbook-class reactions, with its own bond-edit model (its decode.edit_model)
CHEMIST_SMILES_CHECKPOINT = _BUNDLED / "gnn_smiles_chemist.pt"
# the formula model of lines written in the chemist's convention: the Type-1 formula model fine-tuned on the same
# reactions, so it writes the product of an amide coupling, a hydrolysis or a Boc removal beside real by-products
CHEMIST_FORMULA_CHECKPOINT = _BUNDLED / "gnn_formula_chemist.pt"
COEF_SETS: tuple[str, ...] = ("auto", "in", "out")
LINE_TYPES: tuple[str, ...] = ("auto", "1", "2", "model")


def default_checkpoint(input_repr: str | None = None, convention: str = "benchmark") -> Path:
    """``$GNNCA_CHECKPOINT``, else the bundled model for the input's representation (SMILES input with no
    bundled SMILES model goes to the formula model, which converts it to formulas). Lines written in the
    chemist's ``convention`` (a user's reactions) get the chemist's model of their representation where it is
    bundled: the benchmark's models learned only the reactions its rule keeps, and benchmark files keep them."""
    env = os.environ.get("GNNCA_CHECKPOINT")
    if env:
        return Path(env)
    if input_repr == "smiles":
        if convention == "chemist" and CHEMIST_SMILES_CHECKPOINT.exists():
            return CHEMIST_SMILES_CHECKPOINT
        if SMILES_CHECKPOINT.exists():
            return SMILES_CHECKPOINT
    elif convention == "chemist" and CHEMIST_FORMULA_CHECKPOINT.exists():
        return CHEMIST_FORMULA_CHECKPOINT
    return DEFAULT_CHECKPOINT


def resolve_extent(extent: str, input_path: str | None) -> str:
    """The extent rule for one input: ``auto`` is the benchmark's ``bayes`` rule for a benchmark source file
    (``src-*.txt``, as ``gnnca data build`` writes them) and ``limiting`` for anything else (stdin, the Python
    API, a user's own file), where coefficients are amounts and the limiting reactant is consumed."""
    from .decoder import extent_rule_for

    extent_rule_for([], extent)  # an unknown rule is one line
    if extent != "auto":
        return extent
    if input_path is not None and re.fullmatch(r"src-.*\.txt", Path(input_path).name):
        return "bayes"
    return "limiting"


def line_vtype(terms: Sequence[Term], line_type: str, model_vtype: int) -> int:
    """How a line is decoded: Type 1 (extent read off, every product new) or Type 2 (extent posterior, products
    already present). ``auto``: equal coefficients are a Type-1 line (stoichiometric amounts, as in a Type-1
    benchmark file), unequal ones a Type-2 line, whatever the checkpoint was trained on; ``1``/``2`` force one
    type (a benchmark file of that type); ``model``: the type of the checkpoint's training variant."""
    if line_type not in LINE_TYPES:
        raise InputError(f"--line-type must be auto, 1, 2 or model, got {line_type!r}")
    if line_type == "model":
        return model_vtype
    if line_type in ("1", "2"):
        return int(line_type)
    return 1 if len({t.coef for t in terms}) <= 1 else 2


def to_example(inp: ReactionInput, model_repr: str, vtype: int, coef_set: str = "auto") -> BagExample:
    """A parsed line in the checkpoint's representation, with its Type-2 coefficient set (``auto``: guessed)."""
    if coef_set not in COEF_SETS:
        raise InputError(f"--coef-set must be in, out or auto, got {coef_set!r}")
    if inp.repr != model_repr:
        names = {"smiles": "SMILES", "formula": "formulas"}
        raise InputError(f"this checkpoint reads {names[model_repr]}; the line is {names[inp.repr]} (not converted)")
    terms = inp.terms
    cs = guess_coef_set(terms) if coef_set == "auto" else coef_set
    return example_from_terms(terms, vtype=vtype, cset=cs)


def example_from_line(
    text: str,
    model_repr: str,
    vtype: int,
    *,
    repr: str = "auto",
    coef_set: str = "auto",
    path: str | None = None,
    line: int | None = None,
) -> BagExample:
    """One input line -> example (:func:`~gnn_chemalgebra.chem.bagfile.parse_reaction_input`, then
    :func:`to_example`); errors are located at ``path:line``."""
    inp = parse_reaction_input(text, repr, path=path, lineno=line)
    try:
        return to_example(inp, model_repr, vtype, coef_set)
    except InputError as err:
        raise err.located(path, line) from None


_WORKER: LinePredictor | None = None
_FORKED: tuple[LinePredictor, list[list[BagExample]]] | None = None  # (predictor, chunks) a forked worker inherits


def _load_worker(spec: LoadSpec) -> None:
    """Pool initializer (spawn): one predictor per worker process, one thread each (the processes are the
    parallelism)."""
    from .. import lazy_imports

    worker_signals()
    lazy_imports.install()  # a spawned worker starts bare: defer torch._dynamo as the parent did
    import torch

    global _WORKER
    torch.set_num_threads(1)
    _WORKER = spec.load()


def _predict_chunk(job: tuple[list[BagExample], int]) -> list[Prediction]:
    examples, beam = job
    assert _WORKER is not None, "the pool initializer loads the predictor first"
    return _WORKER.predict(examples, batch_size=len(examples), beam=beam)


def _init_forked() -> None:
    """Pool initializer (fork): the predictor and the chunks are the parent's, inherited; one thread each, as
    torch's own DataLoader workers do after a fork."""
    import torch

    worker_signals()

    torch.set_num_threads(1)


def _predict_forked_chunk(job: tuple[int, int]) -> list[Prediction]:
    i, beam = job
    predictor, chunks = _FORKED  # type: ignore[misc]
    return predictor.predict(chunks[i], batch_size=len(chunks[i]), beam=beam)


def _can_fork(predictor: LinePredictor) -> bool:
    """Fork the loaded predictor (no import, no model load per worker) on Linux with a CPU model; elsewhere
    (macOS, Windows, CUDA) the workers are spawned and load it again."""
    import multiprocessing
    import sys

    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and str(predictor.device) == "cpu"
    )


@contextmanager
def _pool(ctx: Any, n: int, initializer: Any, initargs: tuple = ()) -> Iterator[Any]:
    """A process pool made and ended where a stop signal cannot cut it (a fork cut half-way leaves a worker
    behind, or swallows the stop); a stop while it runs raises, and the pool is ended (:mod:`.stop`)."""
    pool = None
    with stop_raising():
        try:
            with stop_held():
                pool = ctx.Pool(n, initializer=initializer, initargs=initargs)
            yield pool
        finally:
            if pool is not None:
                with stop_held():
                    pool.terminate()


def _predict_in_workers(
    predictor: LinePredictor, chunks: list[list[BagExample]], workers: int, beam: int, progress_bar: Any
) -> list[Prediction]:
    """``chunks`` predicted by a pool of ``workers`` processes, results in input order (``imap``); each chunk is
    predicted as one batch, exactly as in one process."""
    import multiprocessing

    global _FORKED
    outs: list[Prediction] = []
    n = min(workers, len(chunks))
    if _can_fork(predictor):
        _FORKED = (predictor, chunks)
        try:
            with _pool(multiprocessing.get_context("fork"), n, _init_forked) as pool:
                for chunk, got in zip(
                    chunks, pool.imap(_predict_forked_chunk, [(i, beam) for i in range(len(chunks))]), strict=True
                ):
                    outs += got
                    progress_bar.update(len(chunk))
        finally:
            _FORKED = None
        return outs
    ctx = multiprocessing.get_context("spawn")  # spawn: no forked torch threads
    with _pool(ctx, n, _load_worker, (predictor.spec(),)) as pool:
        for chunk, got in zip(chunks, pool.imap(_predict_chunk, [(c, beam) for c in chunks]), strict=True):
            outs += got
            progress_bar.update(len(chunk))
    return outs
