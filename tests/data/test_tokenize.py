"""The baseline's tokenizers must be lossless: a dropped character would silently corrupt targets."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.data.tokenize import (
    EOS_ID,
    SPECIALS,
    UNK,
    Vocab,
    detokenize,
    tokenize_formula,
    tokenize_smiles,
)

pytestmark = pytest.mark.unit

SMILES_LINES = [
    "{4}[H][H].{1}O=C=O.{1}[Ni]",
    "{1}C.{2}O.{1}[Ni]",
    "{3}CC(=O)Cl.{3}Nc1ccc(Br)cc1.{3}CCN(CC)CC.{3}ClCCl",
    "{10}O=[N+]([O-])c1ccc2c(c1)OCO2.{10}[Na+].{10}[OH-]",
    "{2}C[C@H](N)C(=O)O.{2}F/C=C/F.{2}C1CC%10CC1.{2}[2H]C#N",
    "{7}CC1(C)OB(c2ccc3c(c2)CCN3)OC1(C)C.{7}[Cl][H]",
]
FORMULA_LINES = [
    "{4}H2.{1}CO2.{1}Ni",
    "{1}CH4.{2}H2O.{1}Ni",
    "{3}C7H4ClNO4.{3}Na+.{3}H4B-.{3}CHO3-",
    "{9}O4S-2.{9}Fe+3.{9}C12H22O11.{9}Co.{9}CO",
]


@pytest.mark.parametrize("line", SMILES_LINES)
def test_smiles_round_trip(line: str) -> None:
    assert detokenize(tokenize_smiles(line)) == line


@pytest.mark.parametrize("line", FORMULA_LINES)
def test_formula_round_trip(line: str) -> None:
    assert detokenize(tokenize_formula(line)) == line


def test_smiles_tokens() -> None:
    assert tokenize_smiles("{12}CC(=O)Cl.{1}[Na+]") == [
        "{12}",
        "C",
        "C",
        "(",
        "=",
        "O",
        ")",
        "Cl",
        ".",
        "{1}",
        "[Na+]",
    ]
    assert tokenize_smiles("{1}Brc1%12") == ["{1}", "Br", "c", "1", "%12"]


def test_formula_tokens() -> None:
    assert tokenize_formula("{3}C12H4ClO4S-2.{1}Na+") == [
        "{3}", "C", "12", "H", "4", "Cl", "O", "4", "S", "-2", ".", "{1}", "Na", "+",
    ]  # fmt: skip


def test_odd_character_is_kept_and_becomes_unk() -> None:
    line = "{1}C C"  # a space is not in either grammar
    toks = tokenize_smiles(line)
    assert detokenize(toks) == line
    vocab = Vocab.build([tokenize_smiles("{1}CC")])
    assert vocab.decode(vocab.encode(toks)) == ["{1}", "C", UNK, "C"]


def test_vocab_specials_and_decode_stops_at_eos() -> None:
    vocab = Vocab.build([tokenize_formula(x) for x in FORMULA_LINES])
    assert tuple(vocab.itos[:4]) == SPECIALS
    ids = vocab.encode(tokenize_formula("{1}H2O"), bos=True, eos=True)
    assert detokenize(vocab.decode(ids + [vocab.stoi["C"], EOS_ID])) == "{1}H2O"
    assert Vocab(list(vocab.itos)).stoi == vocab.stoi  # rebuilt from the plain list in a checkpoint
