"""Training bags rewritten on access: the line-level rewrites of :mod:`.bag_transforms` as a dataset.

Off unless ``data.augment_drop_reagents`` or ``data.augment_salts`` is above 0 (every existing config and number is
unchanged). Each access draws from ``random.Random(f"{seed}/{epoch}/{index}")``: a run reproduces, and each
epoch sees other rewrites of the same line. Validation bags are never rewritten.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..chem.bag import format_bag, parse_bag
from .bag_transforms import Line, consistent, drop_unconsumed, swap_salts
from .bagdata import BagData
from .dataset import BagDataset, BagExample, ExtraVocab, attach_labels, example_from_terms, to_data
from .featurize import Featurizer


@dataclass(frozen=True)
class AugmentSettings:
    """The probabilities of the rewrites (config ``data.augment_drop_reagents`` and ``data.augment_salts``)."""

    drop_reagents: float = 0.0  # each unconsumed molecule (reagent, solvent, catalyst) leaves the line
    salts: float = 0.0  # each unconsumed ion pair becomes its salt, each salt its ions

    @property
    def active(self) -> bool:
        return self.drop_reagents > 0 or self.salts > 0


def rewritable(ex: BagExample) -> bool:
    """Whether a line carries what the rewrites need: its target and a role for every term."""
    return ex.tgt is not None and ex.nu is not None and ex.src_roles is not None and ex.tgt_roles is not None


def augment_example(ex: BagExample, settings: AugmentSettings, repr: str, rng: random.Random) -> BagExample:
    """``ex`` rewritten (a new example with the same ``nu`` and extent), or ``ex`` itself when nothing changed
    or it cannot be rewritten (:func:`rewritable`)."""
    if not rewritable(ex):
        return ex
    line = Line(tuple(ex.terms), ex.src_roles, tuple(parse_bag(ex.tgt)), ex.tgt_roles, ex.nu, int(ex.xi))
    new = drop_unconsumed(line, settings.drop_reagents, rng) if settings.drop_reagents else line
    new = swap_salts(new, settings.salts, rng, repr) if settings.salts else new
    if new is line:
        return ex
    if not consistent(new):  # a rewrite touches only unconsumed molecules: this is a bug, never data
        raise AssertionError(f"rewritten line breaks target = source + xi * nu: {format_bag(new.src)}")
    meta = {"nu": list(ex.nu.items()), "xi": ex.xi, "set": ex.cset, "rxn": ex.rxn, "roles_only": ex.roles_only}
    out = attach_labels(example_from_terms(list(new.src), ex.vtype, ex.cset), meta, repr)
    out.tgt, out.src_roles, out.tgt_roles = format_bag(new.tgt), new.src_roles, new.tgt_roles
    return out


class AugmentedBagDataset(BagDataset):
    """Training bags built on access from their rewritten lines (see the module docstring)."""

    def __init__(
        self,
        examples: Sequence[BagExample],
        feat: Featurizer,
        vocab: ExtraVocab,
        settings: AugmentSettings,
        repr: str,
        seed: int,
    ) -> None:
        super().__init__(examples, feat, vocab, lazy=True)
        self.settings, self.repr, self.seed, self.epoch = settings, repr, seed, 0
        self.rewritable = sum(1 for ex in self.examples if rewritable(ex))

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __getitem__(self, i: int) -> BagData:
        rng = random.Random(f"{self.seed}/{self.epoch}/{i}")
        return to_data(augment_example(self.examples[i], self.settings, self.repr, rng), self.feat, self.vocab, i)
