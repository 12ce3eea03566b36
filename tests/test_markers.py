"""Every test carries ``pytest.mark.unit`` or ``pytest.mark.integration`` (module ``pytestmark``, or a decorator
on the test or its class), so ``-m unit`` / ``-m integration`` select the whole suite between them. Read with
:mod:`ast`, without importing the test modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

TESTS = Path(__file__).resolve().parent
KINDS = ("unit", "integration")


def _marks(node: ast.AST) -> set[str]:
    """The ``pytest.mark.<kind>`` names anywhere in an expression (``[pytest.mark.unit, ...]`` included)."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in KINDS}


def _module_marked(tree: ast.Module) -> bool:
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) and _marks(node.value):
            return True
    return False


def unmarked_tests(path: Path) -> list[str]:
    """Names of the tests in one module that no unit/integration mark reaches."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if _module_marked(tree):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            if not any(_marks(d) for d in node.decorator_list):
                out.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            if any(_marks(d) for d in node.decorator_list):
                continue
            out += [
                f"{node.name}.{f.name}"
                for f in node.body
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                and f.name.startswith("test")
                and not any(_marks(d) for d in f.decorator_list)
            ]
    return out


def test_every_test_is_unit_or_integration():
    files = sorted(TESTS.rglob("test_*.py"))
    assert len(files) > 50
    missing = {str(f.relative_to(TESTS)): names for f in files if (names := unmarked_tests(f))}
    assert not missing, f"tests without pytest.mark.unit / pytest.mark.integration: {missing}"


def test_an_unmarked_test_is_found(tmp_path):
    f = tmp_path / "test_x.py"
    f.write_text(
        "import pytest\n\n@pytest.mark.unit\ndef test_a():\n    pass\n\ndef test_b():\n    pass\n\n"
        "@pytest.mark.integration\nclass TestC:\n    def test_c(self):\n        pass\n",
        encoding="utf-8",
    )
    assert unmarked_tests(f) == ["test_b"]
    f.write_text("import pytest\n\npytestmark = [pytest.mark.integration]\n\ndef test_b():\n    pass\n")
    assert unmarked_tests(f) == []
