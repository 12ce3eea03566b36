"""``gnnca predict`` as a library function: read lines, validate, predict, format (text or JSON), draw."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rdkit import Chem

from ..algebra.extent import guess_coef_set
from ..chem.bag import Term, parse_bag
from ..chem.molecule import canonical, detect_repr, smiles_to_formula
from ..chem.smiles import strip_atom_maps
from ..data.dataset import BagExample, example_from_terms
from ..errors import ChemistryError, InputError

_ARROW = re.compile(r"(?<!-)>")  # '->' is a dative bond, not a reaction arrow
_BUNDLED = Path(__file__).resolve().parents[1] / "checkpoints"  # package data
DEFAULT_CHECKPOINT = _BUNDLED / "gnn_default.pt"  # formula model
SMILES_CHECKPOINT = _BUNDLED / "gnn_smiles_default.pt"  # SMILES model (pairs with edit_default.pt)


def default_checkpoint(input_repr: str | None = None) -> Path:
    """``$GNNCA_CHECKPOINT``, else the bundled model for the input's representation (SMILES input with no
    bundled SMILES model goes to the formula model, which converts it to formulas)."""
    env = os.environ.get("GNNCA_CHECKPOINT")
    if env:
        return Path(env)
    if input_repr == "smiles" and SMILES_CHECKPOINT.exists():
        return SMILES_CHECKPOINT
    return DEFAULT_CHECKPOINT


def input_repr(lines: Iterable[str], repr: str | None = None) -> str | None:
    """``repr`` if given, else the representation of the first readable reaction line (``None``: none)."""
    if repr is not None:
        return repr
    for text in lines:
        body = text.strip()
        if not body or body.startswith("#"):
            continue
        if _ARROW.search(body):
            return "smiles"
        try:
            return detect_repr([t.mol for t in parse_bag(body, default_coef=1)])
        except InputError:
            continue
    return None


def _canon_smiles(s: str) -> str:
    mol = Chem.MolFromSmiles(s)
    if mol is None:
        raise ChemistryError("RDKit cannot parse or sanitise this SMILES", term=s)
    return Chem.MolToSmiles(strip_atom_maps(mol))


def parse_input_line(
    text: str,
    model_repr: str,
    vtype: int,
    *,
    repr: str | None = None,
    coef_set: str = "auto",
    path: str | None = None,
    line: int | None = None,
) -> BagExample:
    """One input reaction: ``{k}MOL.{k}MOL``, bare ``MOL.MOL`` (k = 1) or reaction SMILES ``reactants>reagents>``."""
    try:
        body = text.strip()
        if _ARROW.search(body):
            parts = _ARROW.split(body)
            if len(parts) != 3:
                raise InputError("reaction SMILES must look like 'reactants>reagents>' (two '>')")
            body = ".".join(p for p in parts[:2] if p)
            if not body:
                raise InputError("reaction SMILES without reactants")
            if repr == "formula":
                raise InputError("reaction SMILES given with --repr formula")
        terms = parse_bag(body, default_coef=1)
        in_repr = repr or detect_repr([t.mol for t in terms])
        if in_repr == "formula" and model_repr == "smiles":
            raise InputError("this checkpoint reads SMILES; formulas cannot be turned into graphs")
        out: list[Term] = []
        for t in terms:
            if in_repr == "smiles":
                m = _canon_smiles(t.mol)
                m = smiles_to_formula(m) if model_repr == "formula" else m
            else:
                m = canonical(t.mol, "formula")
            out.append(Term(t.coef, m))
    except InputError as err:
        raise err.located(path, line) from None
    cs = guess_coef_set(out) if coef_set == "auto" else coef_set
    return example_from_terms(out, vtype=vtype, cset=cs)


@dataclass
class PredictResult:
    records: list[dict[str, Any]] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)


def predict_lines(
    lines: Iterable[str],
    predictor: Any,
    *,
    source_name: str = "-",
    repr: str | None = None,
    coef_set: str = "auto",
    skip_invalid: bool = False,
    beam: int = 1,
    batch_size: int = 64,
) -> PredictResult:
    res = PredictResult()
    examples: list[BagExample] = []
    numbers: list[int] = []
    for i, text in enumerate(lines, start=1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        try:
            ex = parse_input_line(
                text, predictor.repr, predictor.vtype, repr=repr, coef_set=coef_set, path=source_name, line=i
            )
        except InputError as err:
            if not skip_invalid:
                raise
            res.invalid.append(str(err))
            continue
        examples.append(ex)
        numbers.append(i)
    outs = predictor.predict(examples, batch_size=batch_size, beam=beam)
    from ..chem.bag import format_bag

    for n, ex, o in zip(numbers, examples, outs, strict=False):
        res.records.append({"line": n, "source": format_bag(ex.terms), "coef_set": ex.cset, **o})
    return res


def draw_reactions(records: list[dict[str, Any]], path: Path, repr: str) -> list[Path]:
    """One PNG per reaction (``out.png``, or ``out_<line>.png`` when there are several)."""
    if repr != "smiles":
        raise InputError("--draw needs a SMILES checkpoint (formulas have no structure to draw)")
    from rdkit.Chem import AllChem, Draw

    written = []
    for r in records:
        lhs = ".".join(t.split("}", 1)[1] for t in r["source"].split("."))
        rhs = ".".join(t.split("}", 1)[1] for t in r["prediction"].split(".") if "}" in t)
        rxn = AllChem.ReactionFromSmarts(f"{lhs}>>{rhs}", useSmiles=True)
        img = Draw.ReactionToImage(rxn, subImgSize=(250, 200))
        out = path if len(records) == 1 else path.with_name(f"{path.stem}_{r['line']}{path.suffix}")
        out.parent.mkdir(parents=True, exist_ok=True)
        img.save(str(out))
        written.append(out)
    return written
