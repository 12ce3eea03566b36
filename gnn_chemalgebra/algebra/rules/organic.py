"""Organic rules (filled in below)."""

from __future__ import annotations

from collections.abc import Sequence

from .general import Proposal
from .species import Item


def propose_organic(items: Sequence[Item]) -> list[Proposal]:
    return []
