"""``gnnca predict --draw``: predicted reactions drawn the way a chemist writes them.

Each prediction is drawn as a balanced equation: consumed molecules left of the arrow and formed ones right of it,
each preceded by its stoichiometric coefficient (``nu``, the smallest integers; 1 is not written), the molecules
whose amount does not change (solvents, catalysts, bases: the reagents) small above the arrow, and the benchmark's
artificial leftover chain in a dashed box labelled as such. A caption gives the line, the extent and the
confidence; a line without a balanced hypothesis (the source copied) is drawn with a crossed arrow and says so.

Structures come from RDKit (``MolDraw2DCairo`` at one fixed bond length, so sizes compare); formula predictions
are written as text with subscripts. One line makes one image; several make one grid, a row per line, in pages of
:data:`ROWS_PER_PAGE`; a folder as the target makes one image per line (``line_<n>.png``).
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, reduce
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont
from rdkit import Chem
from rdkit.Chem import Draw
from rdkit.Chem.Draw import rdMolDraw2D

from ..chem.bag import parse_bag
from ..chem.composition import CHARGE_KEY
from ..chem.formula import parse_formula, write_formula
from ..errors import InputError
from ..io import atomic_write_bytes

ROWS_PER_PAGE = 20
BOND_PX = 28  # bond length of the structures, pixels
REAGENT_SCALE = 0.7
_FONT_FILE = Path(Draw.__file__).resolve().parent / "FreeSans.ttf"  # ships with RDKit
_INK = (20, 20, 20)
_GREY = (110, 110, 110)
_LEFTOVER = (214, 110, 0)
_FALLBACK = (190, 30, 30)


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(str(_FONT_FILE), size)
    except OSError:
        return ImageFont.load_default(size=size)


@dataclass
class Equation:
    """One prediction as a chemist's equation: ``(coefficient, molecule)`` per side, reagents, and notes."""

    line: int | None
    reactants: list[tuple[int, str]] = field(default_factory=list)
    products: list[tuple[int, str]] = field(default_factory=list)
    reagents: list[str] = field(default_factory=list)
    leftovers: set[str] = field(default_factory=set)
    fallback: bool = False
    caption: str = ""


def _amounts(bag: str) -> Counter:
    out: Counter = Counter()
    for t in parse_bag(bag, default_coef=1):
        out[t.mol] += t.coef
    return out


def _leftovers(record: Mapping[str, Any], changed: Mapping[str, int]) -> set[str]:
    """The benchmark's artificial chain(s): formed molecules other than the main product (the decoder's new
    products are the main product plus the chain), or the record's ``leftover`` when it was formed."""
    formed = {m for m, d in changed.items() if d > 0}
    main = record.get("main_product")
    out = {m for m in record.get("new_products") or () if m != main and m in formed}
    if record.get("leftover") in formed:
        out.add(str(record["leftover"]))
    return out


def equation_of(record: Mapping[str, Any]) -> Equation:
    """Read ``source`` and ``prediction`` of a predict record: what changed is the reaction, ``nu`` its smallest
    integer multiple (``delta / gcd``); what did not change is a reagent."""
    src, pred = _amounts(str(record["source"])), _amounts(str(record["prediction"]))
    delta = {m: pred.get(m, 0) - src.get(m, 0) for m in list(src) + [m for m in pred if m not in src]}
    changed = {m: d for m, d in delta.items() if d}
    g = reduce(math.gcd, (abs(d) for d in changed.values()), 0) or 1
    eq = Equation(
        line=record.get("line"),
        reactants=[(-d // g, m) for m, d in changed.items() if d < 0],
        products=[(d // g, m) for m, d in changed.items() if d > 0],
        reagents=[m for m, d in delta.items() if d == 0 and src.get(m, 0) > 0],
        leftovers=_leftovers(record, changed),
        fallback=bool(record.get("fallback")) or not changed,
    )
    parts = [f"line {eq.line}" if eq.line is not None else ""]
    if record.get("fallback"):
        parts.append("no balanced hypothesis: the source is copied (fallback)")
    elif eq.fallback:
        parts.append("no reaction predicted: every molecule is unchanged")
    else:
        if record.get("extent") is not None:
            rule = f" ({record['extent_rule']})" if record.get("extent_rule") else ""
            parts.append(f"extent \u03be = {record['extent']}{rule}")
        if record.get("confidence") is not None:
            parts.append(f"confidence {float(record['confidence']):.2f}")
    eq.caption = "   ".join(p for p in parts if p)
    main = record.get("main_product")
    eq.products.sort(key=lambda km: (km[1] in eq.leftovers, km[1] != main))  # main product first, chain last
    return eq


# --------------------------------------------------------------------------- pieces
def _text(text: str, size: int, color: tuple[int, int, int] = _INK) -> Image.Image:
    font = _font(size)
    left, top, right, bottom = font.getbbox(text)
    img = Image.new("RGB", (max(right - left, 1) + 4, max(bottom, size) + 6), "white")
    ImageDraw.Draw(img).text((2 - left, 2), text, font=font, fill=color)
    return img


def _formula_image(formula: str, size: int) -> Image.Image:
    """A formula as text, counts as subscripts and the charge as a superscript (``O4S-2`` -> O₄S²⁻)."""
    try:
        comp = parse_formula(formula, notation="extended")
        charge = int(comp.pop(CHARGE_KEY, 0))
        body = write_formula(comp)
    except InputError:  # drawn as written
        body, charge = formula, 0
    big, small = _font(size), _font(int(size * 0.65))
    runs: list[tuple[str, bool]] = []  # (text, subscript)
    for ch in body:
        sub = ch.isdigit()
        if runs and runs[-1][1] == sub:
            runs[-1] = (runs[-1][0] + ch, sub)
        else:
            runs.append((ch, sub))
    sup = "" if not charge else (f"{abs(charge)}" if abs(charge) > 1 else "") + ("+" if charge > 0 else "\u2212")
    width = sum(int((small if s else big).getlength(t)) for t, s in runs) + int(small.getlength(sup)) + 6
    img = Image.new("RGB", (max(width, 1), int(size * 1.6)), "white")
    draw = ImageDraw.Draw(img)
    x = 3
    for t, s in runs:
        font = small if s else big
        draw.text((x, int(size * 0.55) if s else 2), t, font=font, fill=_INK)
        x += int(font.getlength(t))
    if sup:
        draw.text((x, 0), sup, font=small, fill=_INK)
    return img


def _structure_image(smiles: str, scale: float = 1.0) -> Image.Image:
    """RDKit drawing at a fixed bond length (flexible canvas), so every molecule has the same scale."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return _text(smiles, int(18 * scale))
    drawer = rdMolDraw2D.MolDraw2DCairo(-1, -1)
    opts = drawer.drawOptions()
    opts.fixedBondLength = BOND_PX * scale
    opts.fixedFontSize = max(int(16 * scale), 12)
    opts.padding = 0.12
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
    drawer.FinishDrawing()
    img = Image.open(io.BytesIO(drawer.GetDrawingText())).convert("RGB")
    return img


def _molecule(mol: str, repr: str, scale: float = 1.0) -> Image.Image:
    return _structure_image(mol, scale) if repr == "smiles" else _formula_image(mol, int(24 * scale))


def _dashed_box(img: Image.Image, label: str) -> Image.Image:
    """The leftover chain: a dashed orange frame and a label under it (it is not a real molecule)."""
    lines = [_text(t, 12, _LEFTOVER) for t in label.split("\n")]
    cap = Image.new("RGB", (max(t.width for t in lines), sum(t.height for t in lines)), "white")
    y = 0
    for t in lines:
        cap.paste(t, ((cap.width - t.width) // 2, y))
        y += t.height
    w, h = max(img.width, cap.width) + 12, img.height + cap.height + 12
    out = Image.new("RGB", (w, h), "white")
    out.paste(img, ((w - img.width) // 2, 6))
    out.paste(cap, ((w - cap.width) // 2, img.height + 8))
    draw = ImageDraw.Draw(out)
    dash = 6
    for x in range(1, w - 1, 2 * dash):
        draw.line([(x, 1), (min(x + dash, w - 2), 1)], fill=_LEFTOVER, width=2)
        draw.line([(x, h - 2), (min(x + dash, w - 2), h - 2)], fill=_LEFTOVER, width=2)
    for y in range(1, h - 1, 2 * dash):
        draw.line([(1, y), (1, min(y + dash, h - 2))], fill=_LEFTOVER, width=2)
        draw.line([(w - 2, y), (w - 2, min(y + dash, h - 2))], fill=_LEFTOVER, width=2)
    return out


def _hstack(items: Sequence[Image.Image], gap: int = 8) -> Image.Image:
    if not items:
        return Image.new("RGB", (1, 1), "white")
    w = sum(i.width for i in items) + gap * (len(items) - 1)
    h = max(i.height for i in items)
    out = Image.new("RGB", (w, h), "white")
    x = 0
    for i in items:
        out.paste(i, (x, (h - i.height) // 2))
        x += i.width + gap
    return out


def _side(terms: Sequence[tuple[int, str]], repr: str, leftovers: set[str]) -> Image.Image:
    items: list[Image.Image] = []
    for n, (k, mol) in enumerate(terms):
        if n:
            items.append(_text("+", 26))
        term: list[Image.Image] = [_text(str(k), 26)] if k != 1 else []
        img = _molecule(mol, repr)
        term.append(_dashed_box(img, "leftover chain\n(benchmark's artificial molecule)") if mol in leftovers else img)
        items.append(_hstack(term, gap=2))
    return _hstack(items, gap=10)


def _arrow(reagents: Sequence[str], repr: str, crossed: bool) -> Image.Image:
    """An arrow with the reagents drawn small above it (and below, when there are many)."""
    pics = [_molecule(m, repr, REAGENT_SCALE) for m in reagents]
    half = len(pics) if len(pics) <= 3 else (len(pics) + 1) // 2
    above = _hstack(_with_commas(pics[:half]), gap=4) if pics else None
    below = _hstack(_with_commas(pics[half:]), gap=4) if pics[half:] else None
    width = max([90] + [p.width + 20 for p in (above, below) if p is not None])
    ha, hb = (above.height if above else 0), (below.height if below else 0)
    pad = max(ha, hb)  # keep the arrow in the vertical middle
    out = Image.new("RGB", (width, 2 * pad + 20), "white")
    y = pad + 10
    draw = ImageDraw.Draw(out)
    color = _FALLBACK if crossed else _INK
    draw.line([(4, y), (width - 10, y)], fill=color, width=3)
    draw.polygon([(width - 2, y), (width - 16, y - 7), (width - 16, y + 7)], fill=color)
    if crossed:
        cx = width // 2
        draw.line([(cx - 9, y - 9), (cx + 9, y + 9)], fill=color, width=3)
        draw.line([(cx - 9, y + 9), (cx + 9, y - 9)], fill=color, width=3)
    if above is not None:
        out.paste(above, ((width - above.width) // 2, pad - ha + 4))
    if below is not None:
        out.paste(below, ((width - below.width) // 2, y + 6))
    return out


def _with_commas(pics: Sequence[Image.Image]) -> list[Image.Image]:
    out: list[Image.Image] = []
    for n, p in enumerate(pics):
        if n:
            out.append(_text(",", 16, _GREY))
        out.append(p)
    return out


def draw_equation(eq: Equation, repr: str) -> Image.Image:
    """One row: caption above, then ``a A + b B --reagents--> c C + d D``."""
    if eq.fallback:
        left, right = [(1, m) for m in eq.reagents], []
        reagents: list[str] = []
    else:
        left, right, reagents = eq.reactants, eq.products, eq.reagents
    body = _hstack(
        [_side(left, repr, eq.leftovers), _arrow(reagents, repr, eq.fallback), _side(right, repr, eq.leftovers)],
        gap=14,
    )
    cap = _text(eq.caption, 15, _FALLBACK if eq.fallback else _GREY)
    out = Image.new("RGB", (max(body.width, cap.width) + 24, body.height + cap.height + 24), "white")
    out.paste(cap, (12, 8))
    out.paste(body, (12, cap.height + 14))
    return out


def _grid(rows: Sequence[Image.Image]) -> Image.Image:
    width = max(r.width for r in rows)
    height = sum(r.height for r in rows) + (len(rows) - 1) * 3
    out = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(out)
    y = 0
    for n, r in enumerate(rows):
        if n:
            draw.line([(0, y - 2), (width, y - 2)], fill=(215, 215, 215), width=1)
        out.paste(r, (0, y))
        y += r.height + 3
    return out


def draw_reactions(records: Sequence[Mapping[str, Any]], path: str | Path, repr: str) -> list[Path]:
    """Draw predict records; returns the files written.

    One record: ``path``. Several: one grid (a row per line) at ``path``, or ``<stem>_<page>.png`` pages of
    :data:`ROWS_PER_PAGE` rows. ``path`` an existing folder (or ending in ``/``): ``line_<n>.png`` per line.
    """
    if repr not in ("smiles", "formula"):
        raise InputError(f"cannot draw representation {repr!r}")
    if not records:
        raise InputError("nothing to draw: no prediction", path=str(path))
    target = Path(path)
    per_line = target.is_dir() or str(path).endswith(("/", "\\"))
    rows = [(r.get("line"), draw_equation(equation_of(r), repr)) for r in records]
    written: list[Path] = []
    if per_line:
        target.mkdir(parents=True, exist_ok=True)
        for n, (line, img) in enumerate(rows, start=1):
            written.append(_save(img, target / f"line_{line if line is not None else n}.png"))
        return written
    pages = [rows[i : i + ROWS_PER_PAGE] for i in range(0, len(rows), ROWS_PER_PAGE)]
    for n, page in enumerate(pages, start=1):
        out = target if len(pages) == 1 else target.with_name(f"{target.stem}_{n}{target.suffix or '.png'}")
        written.append(_save(_grid([img for _, img in page]), out))
    return written


def _save(img: Image.Image, path: Path) -> Path:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    atomic_write_bytes(path, buf.getvalue())
    return path
