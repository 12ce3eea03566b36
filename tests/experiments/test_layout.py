"""The lab stays outside the package: the package never imports experiments/ or scripts/, scripts/ stays a set of
thin entry points (at most 600 lines in all), every study under experiments/ opens with a header paragraph, and
neither folder names work-tracking items or fixed machine folders."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gnn_chemalgebra"
LAB = ("experiments", "scripts")
SCRIPTS_MAX_LINES = 600
# "issue 14", "session 23", "sessions 9 to 11", "issue-14", and folders of one development machine
TRACKING = re.compile(r"\b(issues?|sessions?)[ -]?\d|\bthis session\b|/work/|(?<![\w.])/tmp/|\.\./shared", re.I)


def _lab_files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).iterdir() if p.suffix in (".py", ".sh"))


def test_the_package_imports_nothing_from_the_lab() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in LAB]
    assert offenders == []


def test_scripts_stay_thin_entry_points() -> None:
    total = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in _lab_files("scripts"))
    assert 0 < total <= SCRIPTS_MAX_LINES, f"scripts/ holds {total} lines; studies and curation go to experiments/"


def test_every_experiment_opens_with_a_header_paragraph() -> None:
    files = _lab_files("experiments")
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":
            doc = ast.get_docstring(ast.parse(text)) or ""
        else:  # the comment block after the shebang
            doc = " ".join(line[1:] for line in text.splitlines()[1:] if line.startswith("#"))
        first = doc.split("\n\n")[0]
        assert len(first.split()) >= 25, f"{path.name}: no header paragraph saying what it measured or does"


@pytest.mark.parametrize("folder", LAB)
def test_no_work_tracking_words_or_machine_folders(folder: str) -> None:
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()[:80]}"
        for p in _lab_files(folder)
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if TRACKING.search(line)
    ]
    assert hits == []


def test_the_pattern_catches_what_it_is_for() -> None:
    caught = ["see issue 14.2", "(session 23)", "the cells of sessions 9 to 11", "the issue-14 lines", "/work/runs/x",
              "--out /tmp/bundled_eval", "../shared/docs", "as this session measured"]  # fmt: skip
    passed = ["runs/gnn_local", "tmp_path / 'x'", 'scope="session"', "tempfile.mkdtemp()", "OUT/tmp/x"]
    assert all(TRACKING.search(s) for s in caught)
    assert not any(TRACKING.search(s) for s in passed)
