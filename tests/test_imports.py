"""The package's floors, read from the source: nothing imports upward, no package cycle, no torch in chem, algebra
or trust.

Every ``import``/``from ... import`` of every module is read with :mod:`ast` -- absolute and relative, at module
level and inside functions (a lazy import is still a dependency) -- except those under ``if TYPE_CHECKING:``,
which never run. Floors, lowest first (docs/architecture.md "Package floors")::

    ground (errors, io, config, checkpoint, progress, lazy_imports, device, kinds) -> chem -> algebra -> data -> trust
      -> models -> training / evaluation -> inference -> api / benchmark -> cli

A module may import its own floor's package and any lower floor. ``training`` and ``evaluation`` share a floor:
training may use evaluation's metrics to validate; evaluation never imports training. The ground floor's
top-level modules may import one another. The package root (``gnn_chemalgebra/__init__.py``) is the public
facade: it re-exports ``__version__`` (from ``version``) and forwards ``load_predictor`` lazily to ``api``; no
module imports the root.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

import gnn_chemalgebra

pytestmark = pytest.mark.unit

ROOT = "gnn_chemalgebra"
PACKAGE_DIR = Path(gnn_chemalgebra.__file__).resolve().parent

FLOORS: dict[str, int] = {
    **dict.fromkeys(
        ("errors", "io", "config", "checkpoint", "progress", "lazy_imports", "version", "device", "kinds"), 0
    ),
    "chem": 1,
    "algebra": 2,
    "data": 3,
    "trust": 4,
    "models": 5,
    "training": 6,
    "evaluation": 6,
    "inference": 7,
    "api": 8,
    "benchmark": 8,
    "cli": 9,
    "data_command": 9,
}
# Same-floor edges that are allowed (importer, imported); every other same-floor pair must not touch.
SAME_FLOOR_ALLOWED = {("training", "evaluation"), ("cli", "data_command")}
TORCH_FREE = ("chem", "algebra", "trust")
TORCH_MODULES = ("torch", "torch_geometric")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except the bodies of ``if TYPE_CHECKING:``."""
    out: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    base = PACKAGE_DIR / rel
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def resolve_imports(source: str, package: str, where: str = "<source>") -> list[tuple[str, int]]:
    """``(absolute module name, line)`` of everything ``source`` imports; ``package`` anchors relative imports
    (``from pkg import sub`` resolves to ``pkg.sub`` when that is a module of this package)."""
    out: list[tuple[str, int]] = []
    for node in _import_nodes(ast.parse(source, filename=where)):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
            continue
        if node.level:
            parts = package.split(".")
            base_parts = parts[: len(parts) - node.level + 1]
            assert base_parts, f"{where}:{node.lineno}: relative import beyond the package"
            base = ".".join(base_parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            out.append((sub if base.startswith(ROOT) and _is_module(sub) else base, node.lineno))
    return out


def imported_modules(path: Path) -> list[tuple[str, int]]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return resolve_imports(path.read_text(encoding="utf-8"), package, str(path))


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE_DIR.rglob("*.py") if "__pycache__" not in p.parts)


def _unit(module: str) -> str | None:
    """The floor unit of a package module: its subpackage or top-level module; ``None`` for the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def package_edges() -> dict[tuple[str, str], list[str]]:
    """Unit-level edges (importer, imported) with the ``file:line`` of each import, root facade excluded."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in _modules():
        src = _unit(_module_name(path))
        if src is None:
            continue
        for target, line in imported_modules(path):
            if not target.startswith(ROOT):
                continue
            dst = _unit(target)
            if dst is not None and dst != src:
                edges[(src, dst)].append(f"{path.relative_to(PACKAGE_DIR.parent)}:{line}")
    return edges


def test_every_unit_has_a_floor() -> None:
    units = {_unit(_module_name(p)) for p in _modules()} - {None}
    assert units <= set(FLOORS), f"add to FLOORS (and docs/architecture.md): {sorted(units - set(FLOORS))}"


def test_the_parser_resolves_relative_lazy_and_absolute_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import torch.nn\n"
        "from .. import __version__, chem\n"
        "from ..algebra.extent import S_IN\n"
        "from .featurize import Featurizer\n"
        "from gnn_chemalgebra.models import gnn\n"
        "if TYPE_CHECKING:\n"
        "    from ..cli import app\n"
        "def f():\n"
        "    from ..inference import predictor\n"
    )
    got = [t for t, _ in resolve_imports(source, "gnn_chemalgebra.data")]
    assert got == [
        "typing",
        "torch.nn",
        "gnn_chemalgebra",  # __version__ is an attribute of the root
        "gnn_chemalgebra.chem",
        "gnn_chemalgebra.algebra.extent",
        "gnn_chemalgebra.data.featurize",
        "gnn_chemalgebra.models.gnn",
        "gnn_chemalgebra.inference.predictor",  # inside a function; the TYPE_CHECKING import is skipped
    ]


def _upward(src: str, dst: str) -> bool:
    if FLOORS[dst] == FLOORS[src]:
        return FLOORS[src] > 0 and (src, dst) not in SAME_FLOOR_ALLOWED
    return FLOORS[dst] > FLOORS[src]


def test_no_module_imports_a_higher_floor() -> None:
    edges = package_edges()
    bad = [
        f"{src} (floor {FLOORS[src]}) imports {dst} (floor {FLOORS[dst]}) at {', '.join(where)}"
        for (src, dst), where in sorted(edges.items())
        if _upward(src, dst)
    ]
    assert not bad, "\n".join(bad)


def test_the_package_graph_has_no_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in package_edges():
        graph[src].add(dst)
    found = _find_cycle(graph)
    assert found is None, "package cycle: " + " -> ".join(found or [])


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of a directed graph as ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt, [*stack, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_no_module_cycle_either() -> None:
    """Module by module (lazy imports included, the root facade aside), nothing imports itself round a loop."""
    modules = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        if name == ROOT:
            continue
        graph[name] |= {t for t, _ in imported_modules(path) if t in modules and t not in (name, ROOT)}
    found = _find_cycle(graph)
    assert found is None, "module cycle: " + " -> ".join(found or [])


def test_the_root_is_only_a_facade() -> None:
    """No module imports the package root (``__version__`` comes from ``version.py``), so the root's one reach up,
    to ``api``, is no arrow back down the floors and closes no circle."""
    for path in _modules():
        if path.name == "__init__.py" and path.parent == PACKAGE_DIR:
            continue
        targets = {t for t, _ in imported_modules(path)}
        assert ROOT not in targets, f"{path.relative_to(PACKAGE_DIR.parent)} imports the package root"
    targets = {t for t, _ in imported_modules(PACKAGE_DIR / "__init__.py") if t.startswith(ROOT)}
    assert targets <= {f"{ROOT}.api", f"{ROOT}.version"}


@pytest.mark.parametrize("unit", TORCH_FREE)
def test_chem_and_algebra_never_import_torch(unit: str) -> None:
    bad = [
        f"{path.relative_to(PACKAGE_DIR.parent)}:{line} imports {target}"
        for path in sorted((PACKAGE_DIR / unit).rglob("*.py"))
        for target, line in imported_modules(path)
        if target.split(".")[0] in TORCH_MODULES
    ]
    assert not bad, "\n".join(bad)


def _architecture_block(readme: str) -> list[str]:
    section = readme.split("\n## Package floors\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()[1:]


def test_the_architecture_page_draws_these_floors() -> None:
    """docs/architecture.md "Package floors" draws the floors top down, one row per floor: every unit of FLOORS is
    named in the left column, a higher floor on an earlier row; units of one floor share a row (the ground floor's
    list may wrap)."""
    readme = (PACKAGE_DIR.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = _architecture_block(readme)
    column = len(block[0]) - len(block[0].split("  ", 1)[1].lstrip())  # where the descriptions start
    rows = [line[:column] for line in block]
    row_of = {}
    for unit in FLOORS:
        found = [i for i, left in enumerate(rows) if re.search(rf"(?<![\w/]){unit}(/|\.py\b|\b)", left)]
        assert found, f"docs/architecture.md does not name {unit!r}"
        row_of[unit] = found[0]
    for a in FLOORS:
        for b in FLOORS:
            if FLOORS[a] > FLOORS[b]:
                assert row_of[a] < row_of[b], f"the page draws {a} (floor {FLOORS[a]}) below {b} (floor {FLOORS[b]})"
            elif FLOORS[a] == FLOORS[b] and FLOORS[a] > 0:
                assert row_of[a] == row_of[b], f"the page draws {a} and {b} (both floor {FLOORS[a]}) apart"


# The model-kind registry (kinds.py) names each kind's task, loader and predictor as "module:attr" references,
# imported when resolved: a reference is an import of the module that resolves it, so it is held to the floors.
REFERENCE_RESOLVERS = {"task": "load_task", "loader": "load_network", "predictor": "load_predictor"}
REFERENCE_FLOORS = {"task": FLOORS["training"], "loader": FLOORS["inference"], "predictor": FLOORS["inference"]}


def test_the_kind_references_sit_on_their_floors() -> None:
    """Tasks live on the training floor, loaders at or below inference, predictors on the inference floor."""
    from gnn_chemalgebra.kinds import KINDS

    for k in KINDS.values():
        for fld, highest in REFERENCE_FLOORS.items():
            module = getattr(k, fld).split(":")[0]
            assert _is_module(module), f"{k.name}.{fld}: no module {module}"
            floor = FLOORS[_unit(module)]
            assert floor <= highest, f"{k.name}.{fld} = {module} (floor {floor}) is above floor {highest}"
            if fld != "loader":
                assert floor == highest, f"{k.name}.{fld} = {module} is not on floor {highest}"


def test_kind_references_are_resolved_only_from_their_floor_or_above() -> None:
    """``kind.load_task()`` is called from the training floor or above, ``load_network`` / ``load_predictor``
    from the inference floor or above: resolving a reference never imports upward."""
    need = {REFERENCE_RESOLVERS[f]: floor for f, floor in REFERENCE_FLOORS.items()}
    bad = []
    for path in _modules():
        unit = _unit(_module_name(path))
        if unit is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in need and FLOORS[unit] < need[node.attr]:
                bad.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{node.lineno} calls {node.attr} from {unit}")
    assert not bad, "\n".join(bad)
