"""The options of ``gnnca predict``, declared once: :class:`PredictOptions` is the command's signature (``cli.py``
builds its flags and help from the fields here), the Python API's settings and the benchmark's; and
:class:`Demands`, what a run computes for what its options ask.

A field's flag and help are its metadata (:func:`option`); a field without one is not on the command line.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any

from ..chem import limits
from ..errors import InputError

REPRS = ("auto", "smiles", "formula")
DEFAULT_SET_K = 5  # --top-k when --coverage is given without it: the k the bundled sets are fitted for
ALTERNATIVES_BEAM = 5  # the beam the alternatives' calibration is fitted on (gnnca bench calibration --fit-beam)


def search_beam(beam: int, top_k: int) -> int:
    """The role beam of a run: ``--beam``; with ``--top-k K`` above 1 at least K and at least
    :data:`ALTERNATIVES_BEAM`, so that every K up to it lists the first rows of one beam: an alternative keeps
    its place and probability whatever K (a beam widened to K alone finds other lines for other K)."""
    return max(beam, top_k, ALTERNATIVES_BEAM) if top_k > 1 else beam


def option(default: Any, *flags: str, help: str) -> Any:
    """A field that is a ``gnnca predict`` option: its default, its flags (none: ``--<name>``) and its help."""
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"flags": flags, "help": help})
    return field(default=default, metadata={"flags": flags, "help": help})


def argument(help: str) -> Any:
    """The command's one positional argument (required)."""
    return field(metadata={"argument": True, "help": help})


def cli_default(f: Any) -> Any:
    """A field's default as the command line shows it (a list field's: an empty list)."""
    return f.default if f.default is not MISSING else f.default_factory()


@dataclass
class PredictOptions:
    """The options of ``gnnca predict`` (each field's help is its ``--help`` line)."""

    input: str = argument(help="File with one reaction per line, or '-' for stdin (read as it arrives).")
    checkpoint: Path | None = option(
        None,
        "--checkpoint",
        help="GNN checkpoint (default: $GNNCA_CHECKPOINT, else the bundled model for the input: "
        "gnn_smiles_default.pt for SMILES, gnn_default.pt for formulas). A checkpoint fixes the input's "
        "representation: lines in the other one are refused, never converted. Several of one representation "
        "joined by commas (a.pt,b.pt) are read as one ensemble: role and leftover log-probabilities averaged; the "
        "first gives the vocabulary and decode settings. A trained Transformer checkpoint (gnnca train with "
        "model.name transformer, the sequence baseline) is detected and predicts the same way: the beam's best "
        "line, confidence from its sequence log-probability, never a fallback.",
    )
    edit_checkpoint: Path | None = option(
        None,
        "--edit-checkpoint",
        help="Bond-edit model for new SMILES product graphs (default: the one the GNN names, decode.edit_model, "
        "or the one it was trained with, $GNNCA_EDIT_CHECKPOINT, or the bundled edit_default.pt). Several joined "
        "by commas (a.pt,b.pt) are read as one ensemble: their heads' log-probabilities averaged.",
    )
    repr: str = option(
        "auto",
        "--repr",
        help="smiles | formula | auto. auto: the checkpoint's representation, or without --checkpoint the first "
        "line that reads only one way decides (lines that read both ways, like CO, wait for it and are SMILES "
        "if none comes); a later line that reads only the other way is refused (mixed input).",
    )
    extent: str = option(
        "auto",
        "--extent",
        help="Extent of reaction: bayes (the benchmark's rule: Type 1 read off, Type 2 its posterior), limiting "
        "(your coefficients are amounts: the limiting reactant is consumed), or auto (bayes for a benchmark "
        "source file src-*.txt as gnnca data build writes it, limiting for stdin and any other file).",
    )
    byproducts: str = option(
        "auto",
        "--byproducts",
        help="What a written line gives off: chemist (real molecules: water, HCl, a salt written as the input "
        "writes its ions, CO2, N2, an alcohol; a line no real molecules close keeps the benchmark's, counted), "
        "benchmark (the benchmark's leftover chains such as [O] or [C]O[O]), or auto (benchmark for a benchmark "
        "source file src-*.txt or --extent bayes, chemist otherwise). --json says which wrote each line. Without "
        "--checkpoint it also picks the SMILES models: chemist lines go to gnn_smiles_chemist.pt, trained on the "
        "reactions the benchmark's rule drops too; benchmark lines to gnn_smiles_default.pt.",
    )
    settings: list[str] = option(
        [],
        "--set",
        help="Override a decode setting saved with the checkpoint: --set decode.balance_beam=8 (repeatable).",
    )
    as_json: bool = option(
        False,
        "--json",
        help="One JSON object per input line, with its 'line' number: the chosen hypothesis' roles (each "
        "molecule's own best under best_role), extent and its rule, confidences, fallback; a refused line has "
        "'error', a blank or # line 'blank': true.",
    )
    draw: Path | None = option(
        None,
        "--draw",
        help="Draw the predictions as equations (coefficients, reagents above the arrow, the leftover chain "
        "framed) to this PNG: one line one image, several a grid (pages of 20); a folder: line_<n>.png each. "
        "Its parent folder must exist.",
    )
    skip_invalid: bool = option(
        False,
        "--skip-invalid",
        help="Refused lines (unreadable, over a limit, wrong representation) give an empty output line, their "
        "reasons on stderr, counted; without it the first one stops the run (exit 2) after the lines before it.",
    )
    beam: int = option(
        1, "--beam", help="Top-k hypotheses (roles x product graphs) in --json under 'beam'; line = the best."
    )
    coef_set: str = option("auto", "--coef-set", help="Type 2 prior: in | out | auto (from the input).")
    line_type: str = option(
        "auto",
        "--line-type",
        help="How each line is read: auto (equal coefficients = Type 1: extent read off; unequal = Type 2: "
        "products may already be present, extent from its posterior), 1 or 2 (every line; e.g. 2 for a Type-2 "
        "benchmark file, whose lines can have equal coefficients too), model (the checkpoint's training type).",
    )
    max_chars: int | None = option(
        None,
        "--max-chars",
        help=f"Longest line read, in characters (default {limits.DEFAULT_MAX_CHARS:,}; 0: no limit); a longer one is "
        "refused unread.",
    )
    max_atoms: int | None = option(
        None,
        "--max-atoms",
        help=f"Most heavy atoms in one molecule (default {limits.DEFAULT_MAX_ATOMS:,}; 0: no limit).",
    )
    max_molecules: int | None = option(
        None,
        "--max-molecules",
        help=f"Most molecules in one line (default {limits.DEFAULT_MAX_MOLECULES:,}; 0: no limit).",
    )
    max_total_atoms: int | None = option(
        None,
        "--max-total-atoms",
        help=f"Most heavy atoms in one line, all molecules together (default {limits.DEFAULT_MAX_TOTAL_ATOMS:,}; 0: no "
        "limit). The defaults are about twice the training data's largest lines; a line over a limit is refused "
        "with the limit named.",
    )
    max_coef: int | None = option(
        None,
        "--max-coef",
        help=f"Largest coefficient of a term (default {limits.DEFAULT_MAX_COEF:,}; 0: no limit; the benchmark's are "
        "1..10).",
    )
    device: str = option("cpu", "--device", help="cpu | cuda | cuda:N | auto.")
    batch_size: int = option(256, "--batch-size", help="Lines per network batch.")
    workers: int = option(
        1, "--workers", help="Processes decoding batches in parallel (each loads the model; large files)."
    )
    quiet: bool = option(False, "--quiet", help="No progress bar (shown for more than 1,000 lines on a tty).")
    top_k: int | None = option(
        None,
        "--top-k",
        help="The K best distinct balanced lines with their calibrated probabilities, most probable first, in "
        "--json under 'top_k' (for K > 1 the beam is widened to max(K, 5): every K up to 5 lists the same first rows; "
        "with --columns also as text columns). Default 1, or 5 "
        "with --coverage.",
    )
    min_confidence: float | None = option(
        None,
        "--min-confidence",
        help="Abstain below this calibrated confidence (0-1), and on lines out of domain (in_domain false): an "
        "empty output line, the reason on stderr, counted; line numbers stay aligned with the input.",
    )
    keep_out_of_domain: bool = option(
        False, "--keep-out-of-domain", help="With --min-confidence: keep lines out of domain."
    )
    columns: bool = option(
        False, "--columns", help="Text output as tab-separated columns: each top-k line, then its probability."
    )
    coverage: float | None = option(
        None,
        help="Conformal sets: per line the fewest top-k lines holding the right one with this probability (0.9) on "
        "lines like the validation lines fitted. --json adds prediction_set and set_size; a text line is the set "
        "size, then each line and its probability, tab separated (0: no line probable enough; NA: no set, why on "
        "stderr).",
    )
    conformal: Path | None = option(None, help="Sidecar of --coverage (default: <checkpoint>.conformal.json).")

    def __post_init__(self) -> None:
        if self.top_k is None:  # the alternatives a set is drawn from, else the best line alone
            self.top_k = DEFAULT_SET_K if self.coverage is not None else 1


@dataclass(frozen=True)
class Demands:
    """What a run computes, decided here from its options and nowhere else.

    ``beam``: hypotheses decoded per line (:func:`search_beam`: ``--beam``, wider with ``--top-k``: the
    alternatives come from it);
    ``confidence``: the output shows or uses a confidence (--json, the Python API, --min-confidence, --columns,
    --top-k), so a formula pair's Type-1 lines get their second opinion and a missing calibration is noted;
    ``trust``: the trust stage runs (a confidence shown or used, or conformal sets); ``domain``: the in-domain
    fields are computed (--json, the API, an out-of-domain abstention: the index search is most of the trust
    stage's cost); ``top_k``: alternatives kept; ``sets``: conformal sets (``--coverage``); ``abstain_ood``:
    --min-confidence abstains on lines out of domain; ``draw``: the written lines are kept for drawing."""

    beam: int
    confidence: bool
    trust: bool
    domain: bool
    top_k: int
    sets: bool
    abstain_ood: bool
    draw: bool

    @classmethod
    def of(cls, opts: PredictOptions, domain: bool | None = None) -> Demands:
        """The demands of ``opts``; ``domain``: the in-domain fields asked whatever the output (the API)."""
        abstain_ood = opts.min_confidence is not None and not opts.keep_out_of_domain
        domain = (opts.as_json or abstain_ood) if domain is None else domain
        top_k = int(opts.top_k or 1)
        confidence = domain or opts.min_confidence is not None or opts.columns or top_k > 1
        return cls(
            beam=search_beam(opts.beam, top_k),
            confidence=confidence,
            trust=confidence or opts.coverage is not None,
            domain=domain,
            top_k=top_k,
            sets=opts.coverage is not None,
            abstain_ood=abstain_ood,
            draw=opts.draw is not None,
        )


def check_options(opts: PredictOptions) -> None:
    """The options' choices and counts, and the input file, checked before any work: one :class:`InputError`
    line each. What the options name below this floor (the ``--set`` items, the checkpoints, the ``--draw``
    folder, the size limits, the device) is checked as it is resolved (:func:`~.plan.resolve`)."""
    from .byproduct_convention import check_convention
    from .run import COEF_SETS, line_vtype

    if opts.coef_set not in COEF_SETS:
        raise InputError(f"--coef-set must be in, out or auto, got {opts.coef_set!r}")
    if opts.repr not in REPRS:
        raise InputError(f"--repr must be smiles, formula or auto, got {opts.repr!r}")
    line_vtype([], opts.line_type, 1)
    check_convention(opts.byproducts)
    for name in ("beam", "batch_size", "workers"):
        if getattr(opts, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(opts, name)}")
    if opts.top_k < 1:
        raise InputError(f"--top-k must be at least 1, got {opts.top_k}")
    if opts.min_confidence is not None and not 0.0 <= opts.min_confidence <= 1.0:
        raise InputError(f"--min-confidence must lie in [0, 1], got {opts.min_confidence}")
    if opts.input != "-":
        path = Path(opts.input)
        if not path.exists():
            raise InputError("input file not found", path=opts.input)
        if path.is_dir():
            raise InputError("is a folder, not an input file", path=opts.input)
