"""The ``gnnca`` command line. It only wires options to library functions and turns
the project's errors into one clear line on stderr with exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from . import lazy_imports
from .benchmark.command import build_bench_app
from .chem import limits
from .data_command import build_data_app
from .errors import ChemAlgebraError, Stopped
from .inference.stop import exit_on_signals

# torch._dynamo (pulled in by torch_geometric) loads only if something uses it; a `gnnca predict` process (the
# console script calls app, `python -m` calls main: both import this first) only runs networks eagerly, so torch's
# tracing kernels and torch.export wait too (lazy_imports.INFERENCE_ONLY), and so does the garbage collector until
# the model is loaded
lazy_imports.install(inference_only=sys.argv[1:2] == ["predict"])
if sys.argv[1:2] == ["predict"]:
    lazy_imports.pause_gc()
    exit_on_signals()  # Ctrl-C while starting: one line, exit 130, not a traceback from an import

app = typer.Typer(
    help="gnn-chemalgebra: the ChemAlgebra benchmark, a GNN with exact algebra, and its evaluator.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def friendly_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Report project errors as ``gnnca: error: file:line: reason`` and exit 2 (no traceback); a training run
    stopped by a signal (training saves ``last.pt`` first) says so in one line and exits ``128 + signal``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Stopped as err:
            typer.echo(f"gnnca: {err}", err=True)
            raise typer.Exit(err.exit_code) from None
        except ChemAlgebraError as err:
            typer.echo(f"gnnca: error: {err}", err=True)
            raise typer.Exit(2) from None
        except MemoryError:
            typer.echo(
                "gnnca: error: out of memory: the input is too large for this machine (keep the default size "
                "limits of gnnca predict, or lower them)",
                err=True,
            )
            raise typer.Exit(2) from None
        except OSError as err:
            if err.filename is None:  # not about a file the user named (e.g. a closed pipe)
                raise
            typer.echo(f"gnnca: error: {_os_reason(err)}", err=True)
            raise typer.Exit(2) from None

    return wrapper


def _os_reason(err: OSError) -> str:
    """``PATH: reason``; a missing file under a missing folder names the first folder that does not exist."""
    reason = err.strerror or type(err).__name__
    if isinstance(err, FileNotFoundError):
        path = missing = Path(str(err.filename))
        while missing.parent != missing and not missing.parent.exists():
            missing = missing.parent
        if missing != path:
            reason += f" (folder {missing} does not exist)"
    return f"{err.filename}: {reason}"


app.add_typer(build_data_app(friendly_errors), name="data")
app.add_typer(build_bench_app(friendly_errors), name="bench")


# --------------------------------------------------------------------------- evaluate
@app.command("evaluate")
@friendly_errors
def evaluate(
    pred: Annotated[Path | None, typer.Option("--pred", help="Prediction file (--beam N lines per example).")] = None,
    tgt: Annotated[Path | None, typer.Option("--tgt", help="Target (reference) file.")] = None,
    src: Annotated[Path | None, typer.Option("--src", help="Source file: enables BAL/DEF/EXC/D+E.")] = None,
    repr: Annotated[str | None, typer.Option("--repr", help="smiles or formula (folder mode: inferred).")] = None,
    beam: Annotated[int, typer.Option("--beam", help="Consecutive prediction lines per example.")] = 1,
    mode: Annotated[str, typer.Option("--mode", help="paper (authors' scorer) or strict (defects fixed).")] = "paper",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document instead of a table.")] = False,
    pred_dir: Annotated[Path | None, typer.Option("--pred-dir", help="Folder with pred-test_*.txt.")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Variant folder with tgt-/src-*.txt.")] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar (shown on a terminal for files over 1,000 lines).")
    ] = False,
) -> None:
    """Score predictions with the ChemAlgebra metrics (EM, JAC, F1, molecule-only, validity, top-k)."""
    from .errors import InputError
    from .evaluation.metrics import evaluate_files, evaluate_folder
    from .evaluation.report import format_table, to_json
    from .io import existing_folder

    file_mode = pred is not None or tgt is not None
    folder_mode = pred_dir is not None or data_dir is not None
    if file_mode == folder_mode:
        raise InputError("give either --pred and --tgt, or --pred-dir and --data-dir")
    result: dict[str, object] | list[dict[str, object]]
    if file_mode:
        if pred is None or tgt is None or repr is None:
            raise InputError("file mode needs --pred, --tgt and --repr")
        result = evaluate_files(pred, tgt, repr, mode, src=src, beam=beam, progress=not quiet)  # type: ignore[arg-type]
    else:
        if pred_dir is None or data_dir is None:
            raise InputError("folder mode needs both --pred-dir and --data-dir")
        if src is not None:
            raise InputError("--src is for file mode; folder mode reads src-<setting>.txt itself")
        existing_folder(pred_dir, "--pred-dir")
        existing_folder(data_dir, "--data-dir")
        result = evaluate_folder(pred_dir, data_dir, repr=repr, mode=mode, beam=beam, progress=not quiet)  # type: ignore[arg-type]
    typer.echo(to_json(result) if as_json else format_table(result))


# --------------------------------------------------------------------------- algebra (balance, ceiling)
@app.command("balance")
@friendly_errors
def balance_cmd(
    equation: Annotated[
        str, typer.Argument(help='e.g. "Cu + HNO3 -> Cu(NO3)2 + NO + H2O" or "Fe3+ + Sn2+ -> Fe2+ + Sn4+"')
    ],
    repr: Annotated[str, typer.Option("--repr", help="formula or smiles.")] = "formula",
) -> None:
    """Balance an equation exactly (smallest positive integers); leading coefficients are ignored.

    Species are separated by " + " and the sides by one arrow (->, =>, >>, =, →).

    Formulas in textbook notation: groups Ca3(PO4)2, K4[Fe(CN)6]; hydrates CuSO4*5H2O, CuSO4·5H2O, CuSO4.5H2O.

    Charges Fe+3, Fe3+, SO4^2-, SO4{2-}, SO4-2, NH4+; e- is an electron.

    Digits before a final sign are the charge only after one element or one bracketed group (Fe3+, [Fe(CN)6]4-).

    State symbols (s), (l), (g), (aq) after a species are kept and ignored: H2O(l), Cu2+(aq).
    """
    from .algebra.balance import balance, parse_equation
    from .errors import BalanceError, InputError

    if repr not in ("formula", "smiles"):
        raise InputError(f"--repr must be formula or smiles, got {repr!r}")
    eq = parse_equation(equation, repr)  # type: ignore[arg-type]
    if any(g is not None for g in eq.given):
        typer.echo("note: the coefficients written in the equation were ignored", err=True)
    try:
        result = balance(eq.reactants, eq.products, repr)  # type: ignore[arg-type]
    except BalanceError as err:
        typer.echo(f"gnnca: {err}", err=True)
        raise typer.Exit(1) from None
    if result.unique:
        typer.echo(result.format())
    else:
        n = len(result.basis)
        typer.echo(f"underdetermined: {n} independent reactions (every integer combination balances)")
        typer.echo(result.format())


@app.command("ceiling")
@friendly_errors
def ceiling_cmd(
    folder: Annotated[Path, typer.Argument(help="A folder written by 'gnnca data build'.")],
    variant: Annotated[str | None, typer.Option("--variant", help="One variant, e.g. F_T2_x1 (default: all).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the records as a JSON list.")] = False,
) -> None:
    """Exact oracle (Type 1) and Bayes ceiling (Type 2) EM per test setting, plus a nu/xi recovery check."""
    import json
    from dataclasses import asdict

    from .evaluation.ceiling import ceilings, format_ceilings, format_recovery, recovery
    from .io import existing_folder

    records = ceilings(existing_folder(folder, "data"), variant)
    checks = recovery(folder, variant)
    bad = sum(r.identity_fail + r.apply_roles_fail for r in checks)
    if as_json:
        typer.echo(json.dumps([asdict(r) for r in records], indent=1))
        typer.echo(
            f"recovery: {sum(r.n for r in checks)} lines, {bad} identity/apply failures, "
            f"{sum(r.decompose_mismatch for r in checks)} decompose mismatches "
            f"({sum(r.unexplained for r in checks)} unexplained by empty/non-primitive nu)",
            err=True,
        )
    else:
        typer.echo(format_ceilings(records))
        typer.echo("\nnu/xi recovery (decompose and apply_extent against meta):")
        typer.echo(format_recovery(checks))


# --------------------------------------------------------------------------- train / predict (GNN)
@app.command("train")
@friendly_errors
def train_cmd(
    config: Path = typer.Option(..., "--config", help="YAML preset, e.g. configs/gnn_cpu.yaml."),
    set_: list[str] = typer.Option(
        [], "--set", help="Override a config key: --set train.lr=0.001 (repeatable; unknown keys are refused)."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue from <run_dir>/last.pt."),
    print_config: bool = typer.Option(
        False, "--print-config", help="Print the full config (defaults filled in) as YAML and exit without training."
    ),
) -> None:
    """Train the model named by model.name (gnn, naive, edits, transformer); checkpoints go to run_dir."""
    import json

    from .config import load_typed_config

    cfg = load_typed_config(config, set_)
    if print_config:
        import yaml

        typer.echo(yaml.safe_dump(cfg.to_dict(), sort_keys=False), nl=False)
        return
    from .inference.validation import predictor_validator
    from .training.run import train

    summary = train(cfg, resume=resume, validator=predictor_validator)
    if isinstance(summary, dict):
        typer.echo(json.dumps({k: v for k, v in summary.items() if k != "history"}, indent=1, default=str))


@app.command("predict")
@friendly_errors
def predict_cmd(
    input: str = typer.Argument(..., help="File with one reaction per line, or '-' for stdin (read as it arrives)."),
    checkpoint: Path = typer.Option(
        None,
        "--checkpoint",
        help="GNN checkpoint (default: $GNNCA_CHECKPOINT, else the bundled model for the input: "
        "gnn_smiles_default.pt for SMILES, gnn_default.pt for formulas). A checkpoint fixes the input's "
        "representation: lines in the other one are refused, never converted. Several of one representation "
        "joined by commas (a.pt,b.pt) are read as one ensemble: role and leftover log-probabilities averaged; the "
        "first gives the vocabulary and decode settings. A trained Transformer checkpoint (gnnca train with "
        "model.name transformer, the sequence baseline) is detected and predicts the same way: the beam's best "
        "line, confidence from its sequence log-probability, never a fallback.",
    ),
    edit_checkpoint: Path = typer.Option(
        None,
        "--edit-checkpoint",
        help="Bond-edit model for new SMILES product graphs (default: the one the GNN was trained with, "
        "$GNNCA_EDIT_CHECKPOINT, or the bundled edit_default.pt). Several joined by commas (a.pt,b.pt) are "
        "read as one ensemble: their heads' log-probabilities averaged.",
    ),
    repr: str = typer.Option(
        "auto",
        "--repr",
        help="smiles | formula | auto. auto: the checkpoint's representation, or without --checkpoint the first "
        "line that reads only one way decides (lines that read both ways, like CO, wait for it and are SMILES "
        "if none comes); a later line that reads only the other way is refused (mixed input).",
    ),
    extent: str = typer.Option(
        "auto",
        "--extent",
        help="Extent of reaction: bayes (the benchmark's rule: Type 1 read off, Type 2 its posterior), limiting "
        "(your coefficients are amounts: the limiting reactant is consumed), or auto (bayes for a benchmark "
        "source file src-*.txt as gnnca data build writes it, limiting for stdin and any other file).",
    ),
    byproducts: str = typer.Option(
        "auto",
        "--byproducts",
        help="What a written line gives off: chemist (real molecules: water, HCl, a salt written as the input "
        "writes its ions, CO2, N2, an alcohol; a line no real molecules close keeps the benchmark's, counted), "
        "benchmark (the benchmark's leftover chains such as [O] or [C]O[O]), or auto (benchmark for a benchmark "
        "source file src-*.txt or --extent bayes, chemist otherwise). --json says which wrote each line.",
    ),
    set_: list[str] = typer.Option(
        [],
        "--set",
        help="Override a decode setting saved with the checkpoint: --set decode.balance_beam=8 (repeatable).",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON object per input line, with its 'line' number: the chosen hypothesis' roles (each "
        "molecule's own best under best_role), extent and its rule, confidences, fallback; a refused line has "
        "'error', a blank or # line 'blank': true.",
    ),
    draw: Path = typer.Option(
        None,
        "--draw",
        help="Draw the predictions as equations (coefficients, reagents above the arrow, the leftover chain "
        "framed) to this PNG: one line one image, several a grid (pages of 20); a folder: line_<n>.png each. "
        "Its parent folder must exist.",
    ),
    skip_invalid: bool = typer.Option(
        False,
        "--skip-invalid",
        help="Refused lines (unreadable, over a limit, wrong representation) give an empty output line, their "
        "reasons on stderr, counted; without it the first one stops the run (exit 2) after the lines before it.",
    ),
    beam: int = typer.Option(
        1, "--beam", help="Top-k hypotheses (roles x product graphs) in --json under 'beam'; line = the best."
    ),
    coef_set: str = typer.Option("auto", "--coef-set", help="Type 2 prior: in | out | auto (from the input)."),
    line_type: str = typer.Option(
        "auto",
        "--line-type",
        help="How each line is read: auto (equal coefficients = Type 1: extent read off; unequal = Type 2: "
        "products may already be present, extent from its posterior), 1 or 2 (every line; e.g. 2 for a Type-2 "
        "benchmark file, whose lines can have equal coefficients too), model (the checkpoint's training type).",
    ),
    max_chars: int = typer.Option(
        None,
        "--max-chars",
        help=f"Longest line read, in characters (default {limits.DEFAULT_MAX_CHARS:,}; 0: no limit); a longer one is "
        "refused unread.",
    ),
    max_atoms: int = typer.Option(
        None,
        "--max-atoms",
        help=f"Most heavy atoms in one molecule (default {limits.DEFAULT_MAX_ATOMS:,}; 0: no limit).",
    ),
    max_molecules: int = typer.Option(
        None,
        "--max-molecules",
        help=f"Most molecules in one line (default {limits.DEFAULT_MAX_MOLECULES:,}; 0: no limit).",
    ),
    max_total_atoms: int = typer.Option(
        None,
        "--max-total-atoms",
        help=f"Most heavy atoms in one line, all molecules together (default {limits.DEFAULT_MAX_TOTAL_ATOMS:,}; 0: no "
        "limit). The defaults are about twice the training data's largest lines; a line over a limit is refused "
        "with the limit named.",
    ),
    max_coef: int = typer.Option(
        None,
        "--max-coef",
        help=f"Largest coefficient of a term (default {limits.DEFAULT_MAX_COEF:,}; 0: no limit; the benchmark's are "
        "1..10).",
    ),
    device: str = typer.Option("cpu", "--device", help="cpu | cuda | cuda:N | auto."),
    batch_size: int = typer.Option(256, "--batch-size", help="Lines per network batch."),
    workers: int = typer.Option(
        1, "--workers", help="Processes decoding batches in parallel (each loads the model; large files)."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar (shown for more than 1,000 lines on a tty)."),
    top_k: int = typer.Option(
        None,
        "--top-k",
        help="The K best distinct balanced lines with their calibrated probabilities, most probable first, in "
        "--json under 'top_k' (for K > 1 the beam is widened to max(K, 5): every K up to 5 lists the same first rows; "
        "with --columns also as text columns). Default 1, or 5 "
        "with --coverage.",
    ),
    min_confidence: float = typer.Option(
        None,
        "--min-confidence",
        help="Abstain below this calibrated confidence (0-1), and on lines out of domain (in_domain false): an "
        "empty output line, the reason on stderr, counted; line numbers stay aligned with the input.",
    ),
    keep_out_of_domain: bool = typer.Option(
        False, "--keep-out-of-domain", help="With --min-confidence: keep lines out of domain."
    ),
    columns: bool = typer.Option(
        False, "--columns", help="Text output as tab-separated columns: each top-k line, then its probability."
    ),
    coverage: float = typer.Option(
        None,
        help="Conformal sets: per line the fewest top-k lines holding the right one with this probability (0.9) on "
        "lines like the validation lines fitted. --json adds prediction_set and set_size; a text line is the set "
        "size, then each line and its probability, tab separated (0: no line probable enough; NA: no set, why on "
        "stderr).",
    ),
    conformal: Path = typer.Option(None, help="Sidecar of --coverage (default: <checkpoint>.conformal.json)."),
) -> None:
    """Predict balanced target lines (benchmark format) for reactions with or without coefficients.

    Output is streamed in input order, one line per input line (empty for a blank, # or refused line), flushed
    as each batch is done. Lines that no hypothesis balances are written unchanged, marked "fallback": true in
    --json, counted on stderr. Exit 2 when a line is refused (or, with --skip-invalid, when no line is
    answered: each one refused or abstained on)."""
    from .inference.predict_command import PredictOptions, run_predict
    from .inference.predict_sets import DEFAULT_SET_K

    opts = PredictOptions(
        input=input,
        checkpoint=checkpoint,
        edit_checkpoint=edit_checkpoint,
        repr=repr,
        extent=extent,
        byproducts=byproducts,
        settings=list(set_),
        as_json=as_json,
        draw=draw,
        skip_invalid=skip_invalid,
        beam=beam,
        coef_set=coef_set,
        line_type=line_type,
        max_chars=max_chars,
        max_atoms=max_atoms,
        max_molecules=max_molecules,
        max_total_atoms=max_total_atoms,
        max_coef=max_coef,
        device=device,
        batch_size=batch_size,
        workers=workers,
        quiet=quiet,
        top_k=top_k if top_k is not None else (DEFAULT_SET_K if coverage is not None else 1),
        min_confidence=min_confidence,
        columns=columns,
        keep_out_of_domain=keep_out_of_domain,
        coverage=coverage,
        conformal=conformal,
    )
    code = run_predict(opts, echo=lambda msg: typer.echo(msg, err=True), after_load=lazy_imports.resume_gc)
    if code:
        raise typer.Exit(code)


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
