"""``gnnca data``: build, extend and verify the ChemAlgebra datasets, one module per sub-command, registered here
in the order of the help page. Options only; the work is in :mod:`gnn_chemalgebra.data`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from .build import data_build
from .chemist import data_chemist
from .dropped import data_dropped
from .formula_extra import data_formula_extra
from .templates import data_templates
from .verify import data_verify

# (name, command): each command's docstring is its help
COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("build", data_build),
    ("formula-extra", data_formula_extra),
    ("chemist", data_chemist),
    ("verify", data_verify),
    ("dropped", data_dropped),
    ("templates", data_templates),
)


def build_data_app(wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> typer.Typer:
    """The ``gnnca data`` sub-commands; ``wrap`` turns the project's errors into one line."""
    data_app = typer.Typer(help="Build and verify the ChemAlgebra datasets.", no_args_is_help=True)
    for name, command in COMMANDS:
        data_app.command(name)(wrap(command))
    return data_app
