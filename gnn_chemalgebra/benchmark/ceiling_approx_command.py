"""The options of ``gnnca bench ceiling-approx``; the work is in :mod:`.ceilings`."""

from __future__ import annotations

from pathlib import Path

import typer


def ceiling_approx(
    built: Path = typer.Option(Path("built/full"), "--built", help="Built data folder (uspto_bal/reactions-test)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the one draw per reaction."),
) -> None:
    """The benchmark page's Type-2 ceiling estimate (shared strings ignored) beside which ours is exact."""
    import json
    import random

    from ..errors import InputError
    from .ceilings import approx_ceiling_without_shared_strings

    path = built / "uspto_bal" / "reactions-test.jsonl"
    if not path.exists():
        raise InputError("no USPTO-BAL test reactions (gnnca data build --out ...)", path=str(path))
    recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(seed)
    for name, coef_set in (("in", (1, 2, 3, 4, 5)), ("out", (6, 7, 8, 9, 10))):
        for rule in ("all", "RP"):
            typer.echo(f"{name} {rule} {round(approx_ceiling_without_shared_strings(recs, coef_set, rule, rng), 2)}")
