"""What a perfect chemist can score: the exact oracle and the Type-2 Bayes ceiling of a built variant.

The oracle knows the gold chemistry (source roles and ``nu`` from ``meta-<split>.jsonl``) and uses
the algebra for the extent: Type 1 reads ``k`` off the input; Type 2 takes the posterior mode
(:mod:`..algebra.extent`). ``EM`` is in percent, like the benchmark's metrics:

* Type 1 (``model = "oracle"``): the oracle's exact match; ``EM_realised`` is the same number.
* Type 2 (``model = "bayes_ceiling"``): ``EM`` is the exact expected ceiling, the mean over lines of the
  largest posterior mass; ``EM_realised`` is the Bayes oracle's exact match on the lines actually drawn.

Exact match compares bags as multisets of ``(coef, canonical molecule)`` terms.

The recovery check verifies, for every line of every split, that ``decompose(src, tgt)`` returns the
meta's ``nu`` and ``xi`` and that ``apply_extent`` rewrites the source into the target. Expected
mismatches: formula lines whose ``nu`` is empty (isomers share a formula, so target == source) and a
meta ``nu`` with gcd > 1 (decompose returns the primitive one); everything else counts as ``unexplained``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from ..algebra.decompose import apply_extent, check_identity, decompose, nu_gcd
from ..algebra.extent import S_IN, S_OUT, BaseRoles, bayes_em, bayes_extent, type1_extent, type2_posterior
from ..chem.bag import Term, parse_bag
from ..chem.molecule import Repr, canonical
from ..data.layout import TEST_SETTINGS, VARIANT_SPLITS, VARIANTS, split_files, variant_props
from ..errors import BalanceError, ChemAlgebraError, InputError

COEF_SETS = {"in": S_IN, "out": S_OUT}


@dataclass
class CeilingRecord:
    model: str
    variant: str
    setting: str
    EM: float
    EM_realised: float
    n: int
    n_errors: int = 0


@dataclass
class RecoveryRecord:
    """Counts of lines where the algebra disagrees with the generator's sidecar."""

    variant: str
    split: str
    n: int = 0
    identity_fail: int = 0  # totals(tgt) != totals(src) + xi * nu with the meta's nu, xi
    decompose_mismatch: int = 0  # decompose(src, tgt) != (meta nu, meta xi)
    nonprimitive_nu: int = 0  # meta nu has gcd > 1 (decompose then returns nu/g, xi*g): explains mismatches
    empty_nu: int = 0  # meta nu empty (formula isomerisation): nothing to decompose
    apply_roles_fail: int = 0  # apply_extent(src, nu, xi, src_roles) != tgt as multisets
    apply_heuristic_fail: int = 0  # the same without roles
    examples: list[int] = field(default_factory=list)
    unexplained: int = 0  # decompose mismatches not due to an empty or non-primitive meta nu


@dataclass(frozen=True)
class Line:
    src: list[Term]
    tgt: list[Term]
    meta: dict


def read_split(root: Path, variant: str, split: str) -> list[Line]:
    """Source, target and meta lines of one split, aligned; errors name the file."""
    src_p, tgt_p, meta_p = split_files(root, variant, split)
    srcs = src_p.read_text().splitlines()
    tgts = tgt_p.read_text().splitlines()
    metas = meta_p.read_text().splitlines()
    if not (len(srcs) == len(tgts) == len(metas)):
        raise InputError(
            f"line counts differ: {src_p.name} {len(srcs):,}, {tgt_p.name} {len(tgts):,}, {meta_p.name} {len(metas):,}",
            path=str(src_p.parent),
        )
    out = []
    for i, (s, t, m) in enumerate(zip(srcs, tgts, metas, strict=True), start=1):
        try:
            meta = json.loads(m)
        except json.JSONDecodeError as err:
            raise InputError(f"bad JSON: {err.msg}", path=str(meta_p), line=i) from None
        out.append(Line(parse_bag(s, path=str(src_p), line=i), parse_bag(t, path=str(tgt_p), line=i), meta))
    return out


@lru_cache(maxsize=400_000)
def _canon(mol: str, repr: Repr) -> str:
    try:
        return canonical(mol, repr)
    except ChemAlgebraError:
        return mol


def canonical_multiset(terms: Iterable[Term], repr: Repr) -> Counter:
    return Counter((t.coef, _canon(t.mol, repr)) for t in terms)


def exact_match(pred: Sequence[Term], true: Sequence[Term], repr: Repr) -> bool:
    return canonical_multiset(pred, repr) == canonical_multiset(true, repr)


def meta_nu(meta: dict) -> dict[str, int]:
    return {str(m): int(n) for m, n in meta["nu"]}


def oracle_line(line: Line, type_: int) -> tuple[list[Term], Fraction]:
    """The oracle's predicted target and its exact probability of being right."""
    nu = meta_nu(line.meta)
    roles = line.meta["src_roles"]
    if type_ == 1:
        return apply_extent(line.src, nu, type1_extent(line.src), roles), Fraction(1)
    base = BaseRoles.from_meta(line.src, roles, nu)
    post = type2_posterior(line.src, base, COEF_SETS[line.meta["set"]])
    pred = apply_extent(line.src, nu, bayes_extent(post), roles)
    # With an empty nu every extent gives the same target, so the oracle is always right.
    return pred, (Fraction(1) if not nu else bayes_em(post))


def ceiling_setting(root: Path, variant: str, setting: str) -> CeilingRecord:
    """Oracle / Bayes-ceiling record of one test setting."""
    props = variant_props(variant)
    repr_: Repr = props["repr"]  # type: ignore[assignment]
    type_ = int(props["type"])  # type: ignore[arg-type]
    lines = read_split(root, variant, setting)
    expected = Fraction(0)
    hits = errors = 0
    for line in lines:
        try:
            pred, p = oracle_line(line, type_)
        except BalanceError:
            errors += 1
            continue
        expected += p
        hits += exact_match(pred, line.tgt, repr_)
    n = len(lines)
    em_real = 100.0 * hits / n if n else 0.0
    em = float(100 * expected / n) if n else 0.0
    model = "oracle" if type_ == 1 else "bayes_ceiling"
    return CeilingRecord(
        model, variant.removeprefix("ChemAlgebra_"), setting, round(em, 4), round(em_real, 4), n, errors
    )


def recovery_split(root: Path, variant: str, split: str, max_examples: int = 5) -> RecoveryRecord:
    """Decompose every line and compare with the meta; also re-apply the extent both ways."""
    repr_: Repr = variant_props(variant)["repr"]  # type: ignore[assignment]
    rec = RecoveryRecord(variant.removeprefix("ChemAlgebra_"), split)
    for i, line in enumerate(read_split(root, variant, split), start=1):
        rec.n += 1
        nu, xi = meta_nu(line.meta), int(line.meta["xi"])
        bad = False
        if not check_identity(line.src, line.tgt, nu, xi):
            rec.identity_fail += 1
            bad = True
        if not nu:
            rec.empty_nu += 1
        elif nu_gcd(nu) > 1:
            rec.nonprimitive_nu += 1
        try:
            d = decompose(line.src, line.tgt)
            mismatch = d.nu != nu or d.xi != xi
        except BalanceError:
            mismatch = True
        if mismatch:
            rec.decompose_mismatch += 1
            if nu and nu_gcd(nu) == 1:
                rec.unexplained += 1
                bad = True
        for roles, attr in ((line.meta["src_roles"], "apply_roles_fail"), (None, "apply_heuristic_fail")):
            try:
                ok = exact_match(apply_extent(line.src, nu, xi, roles), line.tgt, repr_)
            except BalanceError:
                ok = False
            if not ok:
                setattr(rec, attr, getattr(rec, attr) + 1)
                bad = bad or roles is not None
        if bad and len(rec.examples) < max_examples:
            rec.examples.append(i)
    return rec


def find_variants(root: Path, only: str | None = None) -> list[str]:
    """Variant folders present under ``root`` (``only`` may be short, ``F_T2_x1``, or long)."""
    names = [v for v in VARIANTS if (Path(root) / v).is_dir()]
    if only is not None:
        want = only if only.startswith("ChemAlgebra_") else f"ChemAlgebra_{only}"
        if want not in VARIANTS:
            raise InputError(f"unknown variant {only!r}; expected one of {', '.join(VARIANTS)}")
        if want not in names:
            raise InputError(f"variant folder {want} not found", path=str(root))
        names = [want]
    if not names:
        raise InputError("no ChemAlgebra_* variant folders here (build them with `gnnca data build`)", path=str(root))
    return names


def ceilings(root: Path, variant: str | None = None) -> list[CeilingRecord]:
    out = []
    for v in find_variants(root, variant):
        for setting in TEST_SETTINGS:
            if split_files(root, v, setting)[0].exists():
                out.append(ceiling_setting(root, v, setting))
    return out


def recovery(root: Path, variant: str | None = None) -> list[RecoveryRecord]:
    out = []
    for v in find_variants(root, variant):
        for split in VARIANT_SPLITS:
            if split_files(root, v, split)[0].exists():
                out.append(recovery_split(root, v, split))
    return out


def format_ceilings(records: Sequence[CeilingRecord]) -> str:
    head = f"{'variant':<10} {'setting':<11} {'model':<14} {'EM':>8} {'EM_real':>8} {'n':>7} {'errors':>6}"
    rows = [head, "-" * len(head)]
    for r in records:
        rows.append(
            f"{r.variant:<10} {r.setting:<11} {r.model:<14} {r.EM:>8.2f} {r.EM_realised:>8.2f} {r.n:>7} {r.n_errors:>6}"
        )
    return "\n".join(rows)


def format_recovery(records: Sequence[RecoveryRecord]) -> str:
    cols = (
        "n",
        "identity_fail",
        "decompose_mismatch",
        "nonprimitive_nu",
        "empty_nu",
        "apply_roles_fail",
        "apply_heuristic_fail",
        "unexplained",
    )
    head = f"{'variant':<10} {'split':<12} " + " ".join(f"{c:>{max(len(c), 6)}}" for c in cols)
    rows = [head, "-" * len(head)]
    for r in records:
        d = asdict(r)
        rows.append(f"{r.variant:<10} {r.split:<12} " + " ".join(f"{d[c]:>{max(len(c), 6)}}" for c in cols))
    return "\n".join(rows)
