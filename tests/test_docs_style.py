"""The user documentation reads as a manual, not a lab notebook: no commit hashes, clock times, dates or internal
goals ("target 87.5, met") in the README or docs/, the README's tables at most 8 columns and docs/'s at most 12,
lines short enough to read, and an index in experiments/ that names every file of experiments/ and scripts/. The
add-model-kind guide's example trains as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_COLUMNS = 8
DOCS_MAX_COLUMNS = 12
MAX_LINE_CHARS = 300
# Lowercase hex of 7 to 40 characters with at least one digit and one letter: how git abbreviates a commit (an
# aromatic ring written alone, such as c1ccccc1, reads the same: examples use substituted rings).
COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
CLOCK = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b")
DATE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")
# A goal with its number ("target 87.5", "floor >= 1,000", "goal: 80"), its verdict ("target: none", "... met"), or
# a table column of goals ("| floor |").
GOAL = re.compile(
    r"\b(?:targets?|goals?|floors?)\b\s*(?::|=|of|<=|>=|≤|≥)?\s*[<>≤≥]?=?\s*\d"
    r"|\btargets?\b[^.|\n]{0,40}?\b(?:met|missed|none)\b"
    r"|\|\s*(?:targets?|goals?|floors?)\s*\|",
    re.I,
)
FORBIDDEN = {"commit hash": COMMIT, "clock time": CLOCK, "date": DATE, "internal goal": GOAL}


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def _table_widths(text: str) -> list[int]:
    return [len(line.strip().strip("|").split("|")) for line in text.splitlines() if line.lstrip().startswith("|")]


def _hits(text: str) -> list[str]:
    return [f"{what}: {m.group(0)!r}" for what, rx in FORBIDDEN.items() for m in rx.finditer(text)]


def test_no_commit_hashes_clock_times_dates_or_goals_in_the_readme_and_docs() -> None:
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {hit}"
        for p in _pages()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for hit in _hits(line)
    ]
    assert hits == []


def test_tables_are_narrow_and_lines_readable() -> None:
    readme = _table_widths(README.read_text(encoding="utf-8"))
    assert readme and max(readme) <= README_MAX_COLUMNS
    for page in _pages()[1:]:
        widths = _table_widths(page.read_text(encoding="utf-8"))
        assert not widths or max(widths) <= DOCS_MAX_COLUMNS, page.name
    long = [
        f"{p.relative_to(ROOT)}:{i} ({len(line)} characters)"
        for p in _pages()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > MAX_LINE_CHARS
    ]
    assert long == []


def test_the_experiments_index_names_every_file_of_experiments_and_scripts() -> None:
    index = (ROOT / "experiments" / "README.md").read_text(encoding="utf-8")
    files = [p for d in ("experiments", "scripts") for p in sorted((ROOT / d).iterdir()) if p.is_file()]
    missing = [f"{p.parent.name}/{p.name}" for p in files if p.name != "README.md" and p.name not in index]
    assert missing == [], "add a line to experiments/README.md for each"


def test_the_checks_catch_what_they_are_for() -> None:
    caught = [
        "measured at 4e3027f",
        "results/throughput-abc1234.json",
        "rerun at 08:30",
        "(2026-12-04, 61 files)",
        "87.70 (target 87.5, met)",
        "3 do not (target: none)",
        "| measurement | floor | measured |",
        "a floor of 1,000 lines per second",
    ]
    assert all(_hits(s) for s in caught), [s for s in caught if not _hits(s)]
    passed = [
        "target = source + ξ·ν",
        "the target is the bag after the reaction",
        "`tgt-test_in.txt`, the target file",
        "C10H18O5 and C191H350O14",
        "coefficients 1..10, seed 0, 17,822 lines",
        "Package floors",
        "a sha256 of 64 characters: " + "ab12" * 16,
        "decaf",
    ]
    assert not [s for s in passed if _hits(s)]
    assert _table_widths("| a | b |\n|---|---|\n| 1 | 2 |") == [2, 2, 2]


def test_the_add_model_kind_example_trains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (ROOT / "docs" / "add-model-kind.md").read_text(encoding="utf-8")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "add-model-kind.md", "exec"), {})  # noqa: S102 - the guide's own example
    documented = next(ln.split("# ", 1)[1] for ln in block.splitlines() if ln.startswith("print("))
    assert capsys.readouterr().out.split() == [documented]
    assert (tmp_path / "runs" / "linear" / "best.pt").exists()
