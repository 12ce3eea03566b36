"""The baseline's tokenizers must be lossless: a dropped character would silently corrupt targets."""

from __future__ import annotations

import pytest

from gnn_chemalgebra.data.tokenize import (
    EOS_ID,
    SPECIALS,
    UNK,
    UNK_ID,
    Vocab,
    detokenize,
    get_tokenizer,
    reserved_tokens,
    tokenize_formula,
    tokenize_formula_digit,
    tokenize_smiles,
    tokenize_smiles_digit,
    tokenizer_for,
)
from gnn_chemalgebra.errors import InputError

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


# --------------------------------------------------------------------------- digit-level coefficients
IN_RANGE = ["{1}CH4.{2}H2O.{1}Ni", "{3}C7H4ClNO4.{5}Na+.{4}H4B-", "{2}C10H16.{1}O2"]  # coefficients 1..5


@pytest.mark.parametrize("line", SMILES_LINES)
def test_smiles_digit_round_trip(line: str) -> None:
    assert detokenize(tokenize_smiles_digit(line)) == line


@pytest.mark.parametrize("line", FORMULA_LINES)
def test_formula_digit_round_trip(line: str) -> None:
    assert detokenize(tokenize_formula_digit(line)) == line


def test_digit_tokens_split_only_coefficients() -> None:
    assert tokenize_formula_digit("{10}C12H4.{1}Na+") == ["{", "1", "0", "}", "C", "12", "H", "4", ".", "{", "1", "}",
                                                           "Na", "+"]  # fmt: skip
    assert tokenize_smiles_digit("{12}CC1.{3}[Na+]") == ["{", "1", "2", "}", "C", "C", "1", ".", "{", "3", "}", "[Na+]"]


def test_digit_vocab_writes_out_of_range_coefficients_without_unk() -> None:
    tok = get_tokenizer("formula_digit")
    vocab = Vocab.build((tok(x) for x in IN_RANGE), reserved=reserved_tokens("formula_digit"))
    for k in range(1, 11):
        line = f"{{{k}}}H2O.{{{k}}}Ni"
        ids = vocab.encode(tok(line))
        assert UNK_ID not in ids, line
        assert detokenize(vocab.decode(ids)) == line


def test_paper_vocab_keeps_unseen_coefficients_unknown() -> None:
    """Golden behaviour of the paper tokenizer (and every old checkpoint): {6} was never trained, so it is <unk>."""
    vocab = Vocab.build(tokenize_formula(x) for x in IN_RANGE)
    assert vocab.itos == Vocab.build((tokenize_formula(x) for x in IN_RANGE), reserved=reserved_tokens("formula")).itos
    assert vocab.decode(vocab.encode(tokenize_formula("{6}H2O"))) == [UNK, "H", "2", "O"]
    assert "{6}" not in vocab.stoi and "{2}" in vocab.stoi


def test_tokenizer_names() -> None:
    assert tokenizer_for("formula") == "formula"
    assert tokenizer_for("smiles", "digit") == "smiles_digit"
    assert tokenizer_for("formula_digit", "digit") == "formula_digit"
    with pytest.raises(InputError, match="coefficient level"):
        tokenizer_for("formula", "bytes")
    with pytest.raises(InputError, match="unknown tokenizer"):
        get_tokenizer("selfies")
