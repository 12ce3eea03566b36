"""Every preset in configs/ trains as written: its header names the data command(s) that make the folder it reads
(``# Data:`` lines; the first a ``gnnca data build`` the CLI accepts, each later step reading the folder the one
before wrote), every ``train.init_from`` is a bundled checkpoint or the ``--to`` of another preset's ``# Export:``
line, and each preset trains for two optimiser steps on a tiny build (data.dir, limits and budgets overridden;
start models and teacher labels made by the presets and commands their headers name)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer

from gnn_chemalgebra.config import load_typed_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))
BUNDLED = ROOT / "gnn_chemalgebra" / "checkpoints"


def header(path: Path, key: str) -> list[list[str]]:
    """The commands of the header lines ``# <key>: ...`` (a trailing backslash continues on the next comment
    line), each split into words."""
    lines = [ln[1:].strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("#")]
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith(f"{key}:"):
            text = lines[i][len(key) + 1 :].strip()
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i]
            out.append(shlex.split(text))
        i += 1
    return out


def option(words: list[str], name: str) -> str:
    assert name in words, f"{' '.join(words)}: no {name}"
    return words[words.index(name) + 1]


def exports() -> dict[str, Path]:
    """``--to`` of every preset's ``# Export:`` line -> the preset whose run it exports."""
    made: dict[str, Path] = {}
    for path in CONFIGS:
        for words in header(path, "Export"):
            run_dir = load_typed_config(path).run_dir
            assert option(words, "--run") == run_dir, f"{path.name}: Export reads another run than run_dir"
            made[option(words, "--to")] = path
    return made


@pytest.mark.unit
@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_each_config_reads_the_folder_its_header_data_command_makes(path: Path) -> None:
    from gnn_chemalgebra.cli import app

    steps = header(path, "Data")
    assert steps, f"{path.name}: no '# Data:' line naming the command that makes data.dir"
    first = steps[0]
    assert first[:3] == ["gnnca", "data", "build"], f"{path.name}: the first data step is not gnnca data build"
    build = typer.main.get_command(app).commands["data"].commands["build"]  # type: ignore[attr-defined]
    try:
        build.make_context("build", first[3:])
    except Exception as err:  # typer's (vendored click) usage errors
        pytest.fail(f"{path.name}: gnnca data build refuses {' '.join(first[3:])!r}: {err}")
    outs = {option(first, "--out")}
    for step in steps[1:]:
        if step[:3] == ["gnnca", "data", "build"]:  # a second build (the templates read the benchmark's)
            build.make_context("build", step[3:])
        elif step[:3] in (["gnnca", "data", "dropped"], ["gnnca", "data", "templates"]):  # ... BUILT --out DIR
            assert step[3] in outs, f"{path.name}: gnnca data {step[2]} reads no earlier --out"
        else:
            assert step[:2] == ["python", "scripts/mix_type_lines.py"], f"{path.name}: unknown data step {step[:2]}"
            assert (ROOT / step[1]).is_file()
            assert option(step, "--built") in outs, f"{path.name}: a data step reads no earlier --out"
        outs.add(option(step, "--out"))
    cfg = load_typed_config(path)
    # data.dir is the build or a folder mixed from it; the dropped and template folders only add to it
    extras_made = {
        option(s, "--out") for s in steps if s[:3] in (["gnnca", "data", "dropped"], ["gnnca", "data", "templates"])
    }
    assert cfg.data.dir in outs - extras_made, f"{path.name}: data.dir {cfg.data.dir!r} is made by no build or mix step"
    for extra in filter(None, str(getattr(cfg.data, "extra_dirs", "") or "").split(",")):
        assert extra.strip() in outs, f"{path.name}: data.extra_dirs {extra!r} is made by no data step"
    assert header(path, "Train"), f"{path.name}: no '# Train:' line"


@pytest.mark.unit
@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_each_start_model_is_bundled_or_exported_by_another_config(path: Path) -> None:
    cfg = load_typed_config(path)
    if cfg.train.init_from:
        made = exports()
        assert cfg.train.init_from in made or (ROOT / cfg.train.init_from).parent == BUNDLED, cfg.train.init_from
        assert made.get(cfg.train.init_from) != path
    if cfg.train.distill_labels:
        (teacher,) = header(path, "Teacher")
        assert option(teacher, "--out") == cfg.train.distill_labels
    if getattr(cfg.model, "edit_checkpoint", None):
        assert (ROOT / cfg.model.edit_checkpoint).is_file()


def _order(paths: list[Path]) -> list[Path]:
    """Presets whose start model another preset exports come after that preset."""
    made, done, out = exports(), set(), []
    while len(out) < len(paths):
        for p in paths:
            start = load_typed_config(p).train.init_from
            if p not in done and (start not in made or made[start] in done):
                done.add(p)
                out.append(p)
    return out


def _smoke_overrides(cfg: Any, built: Path, run_dir: Path) -> list[str]:
    sets = [
        f"data.dir={built}", f"run_dir={run_dir}", "data.limit=32", "data.val_limit=8", "train.max_steps=2",
        "train.max_minutes=0", "train.num_threads=1", "train.tensorboard=false", "train.progress=false",
    ]  # fmt: skip
    if getattr(cfg.data, "extra_dirs", None):  # further training folders: the tiny build stands in for them too
        # (the edit model reads an extra folder's reactions-train.jsonl: the build keeps its under uspto_bal/)
        sets.append(f"data.extra_dirs={built / 'uspto_bal' if cfg.model.name == 'edits' else built}")
    if cfg.model.name == "transformer":
        sets += ["train.batch_size=8", "train.batch_tokens=0", "train.val_em_lines=2", "decode.max_len=16"]
        sets += ["train.eval_every=2"]
    else:
        sets += ["train.batch_size=8"]
    return sets


@pytest.mark.integration
def test_every_config_trains_two_steps_on_a_tiny_build(
    built_small: Path, tmp_path: Path, experiment: Callable[[str], ModuleType]
) -> None:
    from gnn_chemalgebra.inference.validation import predictor_validator
    from gnn_chemalgebra.training.run import train

    made, run_of = exports(), {}
    for path in _order(CONFIGS):
        cfg = load_typed_config(path)
        run_dir = tmp_path / path.stem
        sets = _smoke_overrides(cfg, built_small, run_dir)
        if cfg.train.init_from in made:
            sets.append(f"train.init_from={run_of[made[cfg.train.init_from]] / 'best.pt'}")
        if cfg.train.distill_labels:  # the header's teacher command on the tiny build, its first (bundled) teacher
            (teacher,) = header(path, "Teacher")
            labels = tmp_path / f"{path.stem}_teacher.npz"
            first = option(teacher, "--checkpoint").split(",")[0]
            argv = ["--built", str(built_small), "--variant", option(teacher, "--variant"), "--checkpoint", first]
            assert experiment("distill_teacher").main([*argv, "--out", str(labels), "--limit", "32"]) == 0
            sets.append(f"train.distill_labels={labels}")
        summary = train(load_typed_config(path, sets), resume=False, validator=predictor_validator)
        assert (run_dir / "best.pt").is_file() or (run_dir / "last.pt").is_file(), path.name
        assert isinstance(summary, dict), path.name
        run_of[path] = run_dir
    assert set(run_of) == set(CONFIGS)
