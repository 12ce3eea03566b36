"""``gnnca bench``: the benchmark's sub-commands (run the stages, export a bundled model, check predictions, the
edit model on its own), each in a ``*_command.py`` module of its own, registered here in the order of the help
page. Options only; the work is in the modules beside them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from .calibration_command import add_calibration_command
from .ceiling_approx_command import ceiling_approx
from .check_command import check
from .command_io import invocation, split_list
from .compact import add_compact_command
from .conformal_command import add_conformal_command
from .curves_command import curves
from .decode_ablation_command import decode_ablation_cmd
from .edit_labels_command import edit_labels
from .edits_command import edits
from .export_command import export
from .gpu_command import gpu
from .memory_command import memory
from .roles_command import roles_cmd
from .run_command import RUN_HELP, run
from .speed_command import speed
from .textbook_command import register_textbook

# (name, command, help): help None is the command's docstring
COMMANDS: tuple[tuple[str, Callable[..., None], str | None], ...] = (
    ("run", run, RUN_HELP),
    ("export", export, None),
    ("check", check, None),
    ("edits", edits, None),
    ("speed", speed, None),
    ("gpu", gpu, None),
    ("memory", memory, None),
    ("ceiling-approx", ceiling_approx, None),
    ("edit-labels", edit_labels, None),
    ("decode-ablation", decode_ablation_cmd, None),
    ("curves", curves, None),
    ("roles", roles_cmd, None),
)


def build_bench_app(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> typer.Typer:
    """The sub-app; ``wrap`` turns the project's errors into the CLI's one-line messages."""
    bench = typer.Typer(help="The benchmark: stages, records, tables, plot, bundled models.", no_args_is_help=True)
    for name, command, help_text in COMMANDS:
        bench.command(name, help=help_text)(wrap(command))
    register_textbook(bench, wrap, invocation)
    add_calibration_command(bench, wrap, invocation, split_list)
    add_compact_command(bench, wrap)
    add_conformal_command(bench, wrap, invocation)
    return bench
