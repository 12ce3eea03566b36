"""What one run will do, resolved once from its options before a model is loaded or a line read.

:func:`resolve` checks every option of :class:`~.options.PredictOptions` and turns them into a :class:`RunPlan`:
the extent rule, the by-product convention and whether the rules stage runs, what the run computes
(:class:`~.options.Demands`), the conformal sidecar read once, the checkpoint named
(``$GNNCA_CHECKPOINT`` included), the size limits, the device and the progress bar of the writer. The stages are
handed the plan (:mod:`.pipeline`, :mod:`.output`) and reach for none of these again mid-run: ``gnnca predict``,
the Python API and the benchmark stages all start here.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..chem.limits import Limits
from ..config import DecodeConfig, decode_overrides
from ..device import select_device
from ..io import checkpoint_files, output_folder
from ..progress import Progress, for_file
from .byproduct_convention import resolve_byproducts
from .options import Demands, PredictOptions, check_options
from .predict_sets import check_trust_options
from .rules_stage import rules_apply
from .run import resolve_extent

if TYPE_CHECKING:
    import torch

    from .conformal import ConformalTable


@dataclass(frozen=True)
class RunPlan:
    """One run's options, checked and resolved (see the module doc).

    ``extent``: the extent rule (``auto`` resolved for the input); ``byproducts``: the by-product convention;
    ``rules``: a user's lines go through the rules stage; ``limiting_notice``: ``auto`` read the input's
    coefficients as amounts (said once, at the first line with unequal ones); ``conformal``: the ``--conformal``
    sidecar (``None``: the one beside each checkpoint, or no sets); ``checkpoint``: the checkpoint the user named
    (``None``: the bundled ones), ``named_by`` who named it in messages; ``max_chars``: the longest line read (no
    limit: a number no line reaches); ``progress``: the writer's bar, drawn when it starts writing."""

    opts: PredictOptions
    demands: Demands
    extent: str
    byproducts: str
    rules: bool
    limiting_notice: bool
    conformal: ConformalTable | None
    checkpoint: str | None
    named_by: str
    limits: Limits
    max_chars: int
    device: torch.device
    progress: Progress


def resolve(opts: PredictOptions, *, domain: bool | None = None) -> RunPlan:
    """Check ``opts`` and resolve all they imply (one :class:`~gnn_chemalgebra.errors.InputError` line for the
    first bad one); ``domain``: the in-domain fields whatever the output (the API, the benchmark)."""
    check_options(opts)
    conformal = check_trust_options(opts)
    path = None if opts.input == "-" else opts.input
    extent = resolve_extent(opts.extent, path)
    byproducts = resolve_byproducts(opts.byproducts, path, opts.extent)  # benchmark for src-*.txt or bayes
    demands = Demands.of(opts, domain)
    rules = rules_apply(byproducts, path)  # a user's lines: never a benchmark source file
    # what the options name in the floors below: files, limits, the device, the bar
    decode_overrides(DecodeConfig(), opts.settings)  # a bad --set item fails here, even for an input of no lines
    env = os.environ.get("GNNCA_CHECKPOINT") or None
    checkpoint = str(opts.checkpoint) if opts.checkpoint is not None else env
    named_by = "" if opts.checkpoint is not None or env is None else " (named by $GNNCA_CHECKPOINT)"
    if checkpoint is not None:
        checkpoint_files(checkpoint, named_by)
    if opts.edit_checkpoint is not None:
        checkpoint_files(opts.edit_checkpoint)
    if opts.draw is not None:
        output_folder(Path(opts.draw), "--draw", "images")
    limits = Limits.from_options(
        opts.max_atoms, opts.max_molecules, opts.max_chars, opts.max_total_atoms, opts.max_coef
    )
    return RunPlan(
        opts=opts,
        demands=demands,
        extent=extent,
        byproducts=byproducts,
        rules=rules,
        limiting_notice=opts.extent == "auto" and extent == "limiting",
        conformal=conformal,
        checkpoint=checkpoint,
        named_by=named_by,
        limits=limits,
        max_chars=limits.max_chars or sys.maxsize // 8,
        device=select_device(opts.device),  # an unknown or missing device fails here, before any load
        progress=for_file(opts.input, "predict", quiet=opts.quiet),
    )
