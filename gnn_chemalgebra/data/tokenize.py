"""Tokenizers and vocabulary of the sequence baseline (benchmark doc §6).

SMILES lines use the Molecular Transformer regex with ``{k}`` as one token; formula lines use element symbols,
charges, digit runs, ``.`` and ``{k}``. Both regexes end with a catch-all single character so tokenization is
total and ``"".join(tokenize(line)) == line`` always holds (an odd character becomes ``<unk>`` at encoding
time instead of being silently dropped, which would corrupt the round trip).

Two coefficient levels: ``paper`` keeps a whole ``{k}`` as one token, as the paper does, so a
coefficient never seen in training (``{6}``..``{10}`` for models trained on 1..5) is ``<unk>``; ``digit`` writes
it as ``{``, its digits and ``}`` (tokenizer names ``formula_digit`` / ``smiles_digit``), and its vocabulary
always holds the braces and all ten digits, so any coefficient can be read and written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..errors import InputError

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS: tuple[str, ...] = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3

SMILES_REGEX = re.compile(
    r"(\{[0-9]+\}|\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>|\*|\$"
    r"|\%[0-9]{2}|[0-9]|.)"
)
# A charge is one token with its magnitude (``-2``) so it is never confused with an atom count.
FORMULA_REGEX = re.compile(r"(\{[0-9]+\}|[A-Z][a-z]?|[+-][0-9]*|[0-9]+|\.|.)")


def tokenize_smiles(line: str) -> list[str]:
    """Tokens of a benchmark SMILES line, e.g. ``{2}CC(=O)Cl`` -> ``{2} C C ( = O ) Cl``."""
    return SMILES_REGEX.findall(line)


def tokenize_formula(line: str) -> list[str]:
    """Tokens of a benchmark formula line, e.g. ``{3}O4S-2`` -> ``{3} O 4 S -2``."""
    return FORMULA_REGEX.findall(line)


def split_coefficients(tokens: Iterable[str]) -> list[str]:
    """Each ``{k}`` token as ``{``, the digits of k, ``}``; every other token unchanged (lossless)."""
    out: list[str] = []
    for t in tokens:
        if len(t) > 2 and t[0] == "{" and t[-1] == "}" and t[1:-1].isdigit():
            out.extend(["{", *t[1:-1], "}"])
        else:
            out.append(t)
    return out


def tokenize_smiles_digit(line: str) -> list[str]:
    """``{12}CC`` -> ``{ 1 2 } C C``: the SMILES tokens with coefficients spelt digit by digit."""
    return split_coefficients(tokenize_smiles(line))


def tokenize_formula_digit(line: str) -> list[str]:
    """``{10}H2O`` -> ``{ 1 0 } H 2 O``: the formula tokens with coefficients spelt digit by digit."""
    return split_coefficients(tokenize_formula(line))


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "smiles": tokenize_smiles,
    "formula": tokenize_formula,
    "smiles_digit": tokenize_smiles_digit,
    "formula_digit": tokenize_formula_digit,
}
COEFFICIENT_LEVELS = ("paper", "digit")
DIGIT_TOKENS: tuple[str, ...] = ("{", "}", *"0123456789")


def tokenizer_for(repr_: str, level: str = "paper") -> str:
    """Tokenizer name of a representation (``formula``/``smiles``) at a coefficient level (``paper``/``digit``)."""
    if level not in COEFFICIENT_LEVELS:
        raise InputError(f"unknown coefficient level {level!r}; expected one of {list(COEFFICIENT_LEVELS)}")
    base = repr_.removesuffix("_digit")
    if base not in ("formula", "smiles"):
        raise InputError(f"unknown tokenizer {repr_!r}; expected formula or smiles")
    return base if level == "paper" else f"{base}_digit"


def reserved_tokens(name: str) -> tuple[str, ...]:
    """Tokens a vocabulary for tokenizer ``name`` holds even when training never shows them."""
    return DIGIT_TOKENS if name.endswith("_digit") else ()


def get_tokenizer(name: str) -> Callable[[str], list[str]]:
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise InputError(f"unknown tokenizer {name!r}; expected one of {sorted(TOKENIZERS)}") from None


def detokenize(tokens: Iterable[str]) -> str:
    """Inverse of both tokenizers: the benchmark format has no spaces, so joining is exact."""
    return "".join(tokens)


@dataclass
class Vocab:
    """Token <-> id map; stored in checkpoints as a plain list of strings (weights_only-safe)."""

    itos: list[str]

    def __post_init__(self) -> None:
        if tuple(self.itos[: len(SPECIALS)]) != SPECIALS:
            raise InputError(f"vocabulary must start with {SPECIALS}")
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]], min_freq: int = 1, reserved: Sequence[str] = ()) -> Vocab:
        """Most frequent first, ties alphabetical, so a rebuild on the same files gives the same ids; then the
        ``reserved`` tokens the data did not show (e.g. digits of out-of-range coefficients), in their order."""
        counts: Counter[str] = Counter()
        for toks in token_lists:
            counts.update(toks)
        kept = sorted(
            (t for t, c in counts.items() if c >= min_freq and t not in SPECIALS),
            key=lambda t: (-counts[t], t),
        )
        seen = set(kept)
        kept += [t for t in dict.fromkeys(reserved) if t not in seen and t not in SPECIALS]
        return cls(list(SPECIALS) + kept)

    def encode(self, tokens: Sequence[str], bos: bool = False, eos: bool = False) -> list[int]:
        ids = [self.stoi.get(t, UNK_ID) for t in tokens]
        return ([BOS_ID] if bos else []) + ids + ([EOS_ID] if eos else [])

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens up to (not including) the first ``</s>``; ``<s>`` and ``<pad>`` are dropped."""
        out: list[str] = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i in (PAD_ID, BOS_ID):
                continue
            out.append(self.itos[i] if 0 <= i < len(self.itos) else UNK)
        return out
