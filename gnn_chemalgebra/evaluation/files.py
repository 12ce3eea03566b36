"""Reading the evaluator's input files: exact line semantics and errors that name the file.

Line i of a prediction file answers line i of the target file (or lines ``i*N .. i*N+N-1`` for a
beam file of width N, the OpenNMT ``-n_best`` convention). An empty prediction line is a legitimate
answer (it predicts nothing), so lines are kept exactly: only the final newline is not a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError

PRED_FILE = "pred-{setting}.txt"


def read_lines(path: str | Path) -> list[str]:
    """Lines of a UTF-8 text file without their terminators (``\\n`` or ``\\r\\n``).

    A leading byte-order mark is dropped (as ``gnnca predict`` drops it); a trailing newline does not start an
    extra line; a blank line in the middle (or a last blank line before the final newline) is kept, because in a
    prediction file it is an answer.
    """
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text (byte {err.start})", path=str(p)) from None
    text = text.removeprefix("\ufeff")  # a byte-order mark, as some editors write, is not part of line 1
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def check_line_counts(
    n_pred: int,
    n_tgt: int,
    *,
    beam: int = 1,
    pred_path: str | None = None,
    tgt_path: str | None = None,
    n_src: int | None = None,
    src_path: str | None = None,
) -> None:
    """Refuse files that do not line up: misaligned lines would all be scored against the wrong target."""
    pred_name = pred_path or "predictions"
    tgt_name = tgt_path or "targets"
    if beam < 1:
        raise InputError(f"--beam must be at least 1, got {beam}")
    if n_tgt == 0:
        raise InputError("no examples: the target file is empty", path=tgt_path)
    if n_pred != beam * n_tgt:
        per = f" ({beam} per example, --beam {beam})" if beam > 1 else ""
        raise InputError(
            f"line count mismatch: {pred_name} has {n_pred} lines but {tgt_name} has {n_tgt}"
            f"{per}; expected {beam * n_tgt} prediction lines"
        )
    if n_src is not None and n_src != n_tgt:
        raise InputError(f"line count mismatch: {src_path or 'sources'} has {n_src} lines but {tgt_name} has {n_tgt}")


def read_eval_files(
    pred: str | Path,
    tgt: str | Path,
    src: str | Path | None = None,
    *,
    beam: int = 1,
) -> tuple[list[str], list[str], list[str] | None]:
    """Read and align prediction, target and optional source files (checked line counts)."""
    pred_lines = read_lines(pred)
    tgt_lines = read_lines(tgt)
    src_lines = read_lines(src) if src is not None else None
    check_line_counts(
        len(pred_lines),
        len(tgt_lines),
        beam=beam,
        pred_path=str(pred),
        tgt_path=str(tgt),
        n_src=None if src_lines is None else len(src_lines),
        src_path=None if src is None else str(src),
    )
    return pred_lines, tgt_lines, src_lines


def setting_files(
    pred_dir: str | Path, data_dir: str | Path, settings: Sequence[str]
) -> list[tuple[str, Path, Path, Path | None]]:
    """``(setting, pred, tgt, src or None)`` for each setting whose prediction file exists.

    Missing prediction files are skipped (a run may score only some settings); a missing target for a
    present prediction is an error, and so is finding no prediction file at all.
    """
    pd, dd = Path(pred_dir), Path(data_dir)
    if not pd.is_dir():
        raise InputError("not a folder", path=str(pd))
    if not dd.is_dir():
        raise InputError("not a folder", path=str(dd))
    out: list[tuple[str, Path, Path, Path | None]] = []
    for setting in settings:
        pred = pd / PRED_FILE.format(setting=setting)
        if not pred.is_file():
            continue
        tgt = dd / f"tgt-{setting}.txt"
        if not tgt.is_file():
            raise InputError(f"target file for {pred.name} is missing", path=str(tgt))
        src = dd / f"src-{setting}.txt"
        out.append((setting, pred, tgt, src if src.is_file() else None))
    if not out:
        names = ", ".join(PRED_FILE.format(setting=s) for s in settings)
        raise InputError(f"no prediction file found (looked for {names})", path=str(pd))
    return out
