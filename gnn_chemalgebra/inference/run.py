"""``gnnca predict`` as a library function: read lines (one parser: :mod:`..chem.bagfile`), predict, report.

Input lines become :class:`~gnn_chemalgebra.data.dataset.BagExample` s; a line must be in the checkpoint's
representation (it is refused, never converted).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..algebra.extent import guess_coef_set
from ..chem.bag import Term, format_bag
from ..chem.bagfile import ReactionInput, ReactionLines, parse_reaction_input, read_reaction_lines
from ..config import DecodeConfig, apply_overrides, parse_config
from ..data.dataset import BagExample, example_from_terms
from ..errors import InputError
from ..progress import bar
from .report import count_fallbacks

_BUNDLED = Path(__file__).resolve().parents[1] / "checkpoints"  # package data
DEFAULT_CHECKPOINT = _BUNDLED / "gnn_default.pt"  # formula model
SMILES_CHECKPOINT = _BUNDLED / "gnn_smiles_default.pt"  # SMILES model (pairs with edit_default.pt)
COEF_SETS: tuple[str, ...] = ("auto", "in", "out")
LINE_TYPES: tuple[str, ...] = ("auto", "1", "2", "model")


def default_checkpoint(input_repr: str | None = None) -> Path:
    """``$GNNCA_CHECKPOINT``, else the bundled model for the input's representation (SMILES input with no
    bundled SMILES model goes to the formula model, which converts it to formulas)."""
    env = os.environ.get("GNNCA_CHECKPOINT")
    if env:
        return Path(env)
    if input_repr == "smiles" and SMILES_CHECKPOINT.exists():
        return SMILES_CHECKPOINT
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


def decode_overrides(settings: DecodeConfig, sets: Iterable[str]) -> DecodeConfig:
    """``settings`` with ``decode.key=value`` overrides applied and validated like a config file's (an unknown
    key names the closest valid one; a value of the wrong type is one line)."""
    sets = list(sets)
    if not sets:
        return settings
    for item in sets:
        if not item.split("=", 1)[0].strip().startswith("decode."):
            raise InputError(f"predict takes decode.* settings only (e.g. decode.balance_beam=8), got {item!r}")
    raw = apply_overrides({"decode": dataclasses.asdict(settings)}, sets)
    return parse_config(raw, source="--set").decode


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


@dataclass
class PredictResult:
    """Records (one per predicted line, with its 1-based ``line``), refused lines' messages, and the count of
    lines written without a balanced hypothesis (``fallback``)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    repr: str | None = None

    @property
    def fallbacks(self) -> int:
        return count_fallbacks(self.records)


def predict_inputs(
    read: ReactionLines,
    predictor: Any,
    *,
    source_name: str = "-",
    coef_set: str = "auto",
    beam: int = 1,
    batch_size: int = 256,
    skip_invalid: bool = True,
    progress: bool = False,
    workers: int = 1,
    line_type: str = "auto",
    top_k: int = 1,
) -> PredictResult:
    """Predict the lines :func:`~gnn_chemalgebra.chem.bagfile.read_reaction_lines` read. A line that the
    checkpoint cannot take (formulas for a SMILES model) is refused like an unreadable one (raised unless
    ``skip_invalid``). ``progress``: a bar on stderr (see :mod:`gnn_chemalgebra.progress`). ``workers > 1``:
    batches are predicted by that many processes (forked from this one on Linux; results in input order).
    Records carry the trust fields (:mod:`.trust`: calibrated ``confidence``, ``in_domain``, the ``top_k``
    distinct balanced lines; the beam is at least ``top_k`` wide)."""
    from .trust import annotate_records, trust_for

    with _frozen_heap():
        args = (source_name, coef_set, max(beam, top_k), batch_size, skip_invalid, progress, workers, line_type)
        res = _predict_inputs(read, predictor, *args)
        annotate_records(res.records, trust_for(predictor), predictor.repr, top_k)
        return res


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """The objects alive before a prediction (torch, RDKit, the model: ~200k) moved out of the garbage collector's
    reach while it runs (``gc.freeze``), so its full collections scan only what the prediction allocates; the
    same objects are handed back afterwards (``gc.unfreeze``). Nothing is computed differently."""
    if not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _predict_inputs(
    read: ReactionLines,
    predictor: Any,
    source_name: str,
    coef_set: str,
    beam: int,
    batch_size: int,
    skip_invalid: bool,
    progress: bool,
    workers: int,
    line_type: str,
) -> PredictResult:
    res = PredictResult(invalid=[str(e) for e in read.refused], repr=read.repr)
    examples: list[BagExample] = []
    numbers: list[int] = []
    for n, inp in read.inputs:
        try:
            vtype = line_vtype(inp.terms, line_type, predictor.vtype)
            examples.append(to_example(inp, predictor.repr, vtype, coef_set))
        except InputError as err:
            if not skip_invalid:
                raise err.located(source_name, n) from None
            res.invalid.append(str(err.located(source_name, n)))
            continue
        numbers.append(n)
    outs: list[dict[str, Any]] = []
    chunks = [examples[s : s + batch_size] for s in range(0, len(examples), batch_size)]
    with bar(len(examples), "predict", enabled=progress) as b:
        if workers > 1 and len(chunks) > 1:
            outs = _predict_in_workers(predictor, chunks, workers, beam, b)
        else:
            for chunk in chunks:
                outs += predictor.predict(chunk, batch_size=batch_size, beam=beam)
                b.update(len(chunk))
    for n, ex, o in zip(numbers, examples, outs, strict=True):
        res.records.append({"line": n, "source": format_bag(ex.terms), "coef_set": ex.cset, "line_type": ex.vtype, **o})
    return res


_WORKER: Any = None
_FORKED: tuple[Any, list[list[BagExample]]] | None = None  # (predictor, chunks) a forked worker inherits


def _load_worker(spec: Any) -> None:
    """Pool initializer (spawn): one predictor per worker process, one thread each (the processes are the
    parallelism)."""
    from .. import lazy_imports

    lazy_imports.install()  # a spawned worker starts bare: defer torch._dynamo as the parent did
    import torch

    global _WORKER
    torch.set_num_threads(1)
    _WORKER = spec.load()


def _predict_chunk(job: tuple[list[BagExample], int]) -> list[dict[str, Any]]:
    examples, beam = job
    return _WORKER.predict(examples, batch_size=len(examples), beam=beam)


def _init_forked() -> None:
    """Pool initializer (fork): the predictor and the chunks are the parent's, inherited; one thread each, as
    torch's own DataLoader workers do after a fork."""
    import torch

    torch.set_num_threads(1)


def _predict_forked_chunk(job: tuple[int, int]) -> list[dict[str, Any]]:
    i, beam = job
    predictor, chunks = _FORKED  # type: ignore[misc]
    return predictor.predict(chunks[i], batch_size=len(chunks[i]), beam=beam)


def _can_fork(predictor: Any) -> bool:
    """Fork the loaded predictor (no import, no model load per worker) on Linux with a CPU model; elsewhere
    (macOS, Windows, CUDA) the workers are spawned and load it again."""
    import multiprocessing
    import sys

    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and getattr(predictor, "device", None) is not None
        and str(predictor.device) == "cpu"
    )


def _predict_in_workers(
    predictor: Any, chunks: list[list[BagExample]], workers: int, beam: int, progress_bar: Any
) -> list[dict[str, Any]]:
    """``chunks`` predicted by a pool of ``workers`` processes, results in input order (``imap``); each chunk is
    predicted as one batch, exactly as in one process."""
    import multiprocessing

    global _FORKED
    outs: list[dict[str, Any]] = []
    n = min(workers, len(chunks))
    if _can_fork(predictor):
        _FORKED = (predictor, chunks)
        try:
            with multiprocessing.get_context("fork").Pool(n, initializer=_init_forked) as pool:
                for chunk, got in zip(
                    chunks, pool.imap(_predict_forked_chunk, [(i, beam) for i in range(len(chunks))]), strict=True
                ):
                    outs += got
                    progress_bar.update(len(chunk))
        finally:
            _FORKED = None
        return outs
    ctx = multiprocessing.get_context("spawn")  # spawn: no forked torch threads
    with ctx.Pool(n, initializer=_load_worker, initargs=(predictor.spec(),)) as pool:
        for chunk, got in zip(chunks, pool.imap(_predict_chunk, [(c, beam) for c in chunks]), strict=True):
            outs += got
            progress_bar.update(len(chunk))
    return outs


def predict_lines(
    lines: Sequence[str],
    predictor: Any,
    *,
    source_name: str = "-",
    repr: str | None = "auto",
    coef_set: str = "auto",
    skip_invalid: bool = False,
    beam: int = 1,
    batch_size: int = 256,
    line_type: str = "auto",
    top_k: int = 1,
) -> PredictResult:
    """Read and predict ``lines``: refused lines raise (located) unless ``skip_invalid``, then they are listed
    in ``invalid``. ``repr`` ``auto`` decides per line within one representation per input."""
    read = read_reaction_lines(lines, repr or "auto", path=source_name, skip_invalid=skip_invalid)
    return predict_inputs(
        read,
        predictor,
        source_name=source_name,
        coef_set=coef_set,
        beam=beam,
        batch_size=batch_size,
        skip_invalid=skip_invalid,
        line_type=line_type,
        top_k=top_k,
    )
