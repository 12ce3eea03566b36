"""No package module over 500 lines and no function over 100, except those on lists that may only shrink.

A module that long does several jobs; split it by job (as ``chem/edits.py`` and ``training/engine.py`` were) and
take it off :data:`OVER_LIMIT`. A module that grows past the limit fails here, and so does a listed module that
is back under it (remove it from the list, so that it cannot grow again unnoticed).

A function that long does several steps; extract them as named functions. A typer command's signature (one
option a line or more, with its help) is not counted, only its body: a command is a function whose every
parameter but a ``typer.Context`` is a ``typer.Option`` or ``typer.Argument`` (as default or ``Annotated``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gnn_chemalgebra

pytestmark = pytest.mark.unit

LIMIT = 500
PACKAGE_DIR = Path(gnn_chemalgebra.__file__).resolve().parent
# Today's modules over the limit, relative to the package; shorten this list, never lengthen it.
OVER_LIMIT: frozenset[str] = frozenset()


FUNCTION_LIMIT = 100
# Today's functions over FUNCTION_LIMIT, as "module path::qualified name"; shorten this list, never lengthen it.
FUNCTIONS_OVER_LIMIT: frozenset[str] = frozenset()


def _line_counts() -> dict[str, int]:
    return {
        path.relative_to(PACKAGE_DIR).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE_DIR.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def test_no_module_outside_the_list_is_over_the_limit() -> None:
    long = {name: n for name, n in _line_counts().items() if n > LIMIT and name not in OVER_LIMIT}
    assert not long, f"modules over {LIMIT} lines (split them by job): {long}"


def test_the_list_holds_only_modules_still_over_the_limit() -> None:
    counts = _line_counts()
    stale = sorted(name for name in OVER_LIMIT if counts.get(name, 0) <= LIMIT)
    assert not stale, f"no longer over {LIMIT} lines or gone: take {stale} off OVER_LIMIT"


def _is_typer_parameter(node: ast.expr | None) -> bool:
    """``typer.Option(...)`` / ``typer.Argument(...)``, or ``Annotated[T, typer.Option(...)]``."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        return any(_is_typer_parameter(e) for e in node.slice.elts[1:])
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "typer"
        and node.func.attr in ("Option", "Argument")
    )


def is_typer_command(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every parameter but a ``typer.Context`` is a typer option or argument (and there is at least one)."""
    args = fn.args
    if args.vararg or args.kwarg:
        return False
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    defaults = [None] * (len(args.posonlyargs) + len(args.args) - len(args.defaults)) + [*args.defaults]
    defaults += args.kw_defaults
    options = 0
    for param, default in zip(params, defaults, strict=True):
        if param.annotation is not None and ast.unparse(param.annotation) == "typer.Context":
            continue
        if not (_is_typer_parameter(default) or _is_typer_parameter(param.annotation)):
            return False
        options += 1
    return options > 0


def counted_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function from its ``def`` (decorators not counted); of a typer command, from its body."""
    first = fn.body[0].lineno if is_typer_command(fn) else fn.lineno
    return (fn.end_lineno or fn.lineno) - first + 1


def long_functions(source: str, module: str = "<source>") -> dict[str, int]:
    """``"module::qualified.name"`` -> counted lines, of every function (nested ones too) over the limit."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}."
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and counted_lines(child) > FUNCTION_LIMIT:
                out[f"{module}::{name[:-1]}"] = counted_lines(child)
            visit(child, name)

    visit(ast.parse(source), "")
    return out


def _package_long_functions() -> dict[str, int]:
    out: dict[str, int] = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if "__pycache__" not in path.parts:
            out |= long_functions(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE_DIR).as_posix())
    return out


def test_no_function_outside_the_list_is_over_the_limit() -> None:
    long = {name: n for name, n in _package_long_functions().items() if name not in FUNCTIONS_OVER_LIMIT}
    assert not long, f"functions over {FUNCTION_LIMIT} lines (extract named steps): {long}"


def test_the_function_list_holds_only_functions_still_over_the_limit() -> None:
    stale = sorted(FUNCTIONS_OVER_LIMIT - _package_long_functions().keys())
    assert not stale, f"no longer over {FUNCTION_LIMIT} lines or gone: take {stale} off FUNCTIONS_OVER_LIMIT"


def _function(name: str, params: list[str], body_lines: int, decorator: str = "") -> str:
    signature = "".join(f"    {p},\n" for p in params)
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    return f"{decorator}def {name}(\n{signature}) -> None:\n{body}"


def test_a_command_signature_is_not_counted_but_its_body_and_any_other_function_are() -> None:
    options = [f'a{i}: int = typer.Option({i}, "--a{i}", help="...")' for i in range(60)]
    annotated = [f'b{i}: Annotated[int, typer.Argument(help="...")] = {i}' for i in range(60)]
    ctx = ["ctx: typer.Context"]
    source = "\n".join(
        [
            _function("command", ctx + options, 60),  # 122 lines, a body of 60: not counted as long
            _function("annotated_command", annotated, 60, '@app.command("x")\n'),
            _function("long_command", options, 101),  # the body alone is over the limit
            _function("plain", [f"a{i}: int = {i}" for i in range(60)], 60),  # not a command: all counted
            _function("half_command", options + ["plain: int = 0"], 60),  # one plain parameter: not a command
            _function("at_the_limit", ["a: int = 0"], FUNCTION_LIMIT - 3),  # def, one parameter, ")", body
            _function("one_over", ["a: int = 0"], FUNCTION_LIMIT - 2),
        ]
    )
    assert long_functions(source, "m.py") == {
        "m.py::long_command": 101,
        "m.py::plain": 122,
        "m.py::half_command": 123,
        "m.py::one_over": FUNCTION_LIMIT + 1,
    }


def test_nested_functions_and_methods_are_named_by_their_place() -> None:
    inner = "\n".join("    " + line for line in _function("inner", ["a: int = 0"], 120).splitlines())
    source = f"def outer() -> None:\n{inner}\n\nclass K:\n" + "\n".join(
        "    " + line for line in _function("method", ["self"], 120).splitlines()
    )
    assert long_functions(source, "m.py") == {"m.py::outer": 124, "m.py::outer.inner": 123, "m.py::K.method": 123}
