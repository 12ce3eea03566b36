"""The ``gnnca`` command line. It only wires options to library functions and turns
the project's errors into one clear line on stderr with exit code 2."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from . import lazy_imports
from .benchmark.command import build_bench_app
from .data_command import build_data_app
from .errors import ChemAlgebraError, Stopped
from .inference.options import PredictOptions, cli_default
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


def predict_cmd(**options: Any) -> None:
    """Predict balanced target lines (benchmark format) for reactions with or without coefficients.

    Output is streamed in input order, one line per input line (empty for a blank, # or refused line), flushed
    as each batch is done. Lines that no hypothesis balances are written unchanged, marked "fallback": true in
    --json, counted on stderr. Exit 2 when a line is refused (or, with --skip-invalid, when no line is
    answered: each one refused or abstained on)."""
    from .inference.predict_command import run_predict

    opts = PredictOptions(**options)
    code = run_predict(opts, echo=lambda msg: typer.echo(msg, err=True), after_load=lazy_imports.resume_gc)
    if code:
        raise typer.Exit(code)


def _signature_of(options: type) -> tuple[inspect.Signature, dict[str, Any]]:
    """A command's signature from an options dataclass: one typer argument or option per field that has a help
    (its flags and help from the field's metadata), its type without ``None`` (typer reads a missing value as the
    default); and the annotations typer reads."""
    hints = typing.get_type_hints(options)
    params, annotations = [], {}
    for f in dataclasses.fields(options):
        if "help" not in f.metadata:
            continue
        if f.metadata.get("argument"):
            info = typer.Argument(..., help=f.metadata["help"])
        else:
            info = typer.Option(cli_default(f), *f.metadata["flags"], help=f.metadata["help"])
        kind = hints[f.name]
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        kind = args[0] if type(None) in typing.get_args(kind) and len(args) == 1 else kind
        annotations[f.name] = kind
        params.append(inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=info, annotation=kind))
    return inspect.Signature(params), annotations


def _register_predict() -> None:
    """``gnnca predict``: its options are :class:`~.inference.options.PredictOptions`' fields, declared there once."""
    predict_cmd.__signature__, predict_cmd.__annotations__ = _signature_of(PredictOptions)  # type: ignore[attr-defined]
    predict_cmd.__annotations__["return"] = None
    app.command("predict")(friendly_errors(predict_cmd))


_register_predict()


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
