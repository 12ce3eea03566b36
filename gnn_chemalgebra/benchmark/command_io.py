"""What the ``gnnca bench`` commands share: comma-separated option values, the table on stdout (and JSON when
asked), and the invocation each record carries."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import typer

VARIANT_HELP = "Variant folder (short or long name, e.g. F_T1_x1)."


def split_list(value: str) -> tuple[str, ...]:
    """``"a,b,,c"`` -> ``("a", "b", "c")``: an empty option value names nothing."""
    return tuple(v for v in value.split(",") if v)


def emit(table: str, result: Any, json_out: Path | None) -> None:
    """The readable table on stdout; the measurements as JSON too when asked."""
    from ..io import atomic_write_json

    typer.echo(table)
    if json_out is not None:
        atomic_write_json(json_out, result)


def invocation(ctx: typer.Context) -> str:
    """The invocation as typed when it came from the ``gnnca`` script, else rebuilt from the options that differ
    from their defaults (tests, ``python -m``)."""
    if Path(sys.argv[0]).name == "gnnca":
        return "gnnca " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    parts = ["gnnca", *ctx.command_path.split()[1:]]
    for p in ctx.command.params:
        value = ctx.params.get(p.name or "")
        if p.name == "ctx" or value == p.default or (isinstance(value, (list, tuple)) and not value):
            continue
        if getattr(p, "is_flag", False):
            parts.append(p.opts[0] if value else p.secondary_opts[0])
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            parts += [p.opts[0], shlex.quote(str(v))]
    return " ".join(parts)


def log_line(message: str) -> None:
    """Progress for the person at the terminal: stderr, so that stdout stays the command's result."""
    typer.echo(message, err=True)
