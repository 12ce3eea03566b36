"""The predictor's batched path equals the per-example reference path, number for number and record for record.

``Predictor.predict`` featurises a whole batch at once (``dataset.collate_examples``), converts the network's
outputs batch-wide (``Decoder.batch_line_outputs``: role logs, leftover candidates, by-product probabilities) and
decodes each line from plain numbers. The reference is the per-example path: ``ModelRunner.forward`` over
``BagData`` per line, then ``Decoder.line_outputs`` of each example's tensors (``leftover_candidates`` per line).
"""

from __future__ import annotations

import heapq
import json
import random
from pathlib import Path

import pytest
import torch

from gnn_chemalgebra.chem.bagfile import read_reaction_lines
from gnn_chemalgebra.data.dataset import ExtraVocab, load_examples, write_toy_variant
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.inference.decoder import kbest_rows
from gnn_chemalgebra.inference.predictor import Predictor, PredictorOptions
from gnn_chemalgebra.inference.run import DEFAULT_CHECKPOINT, to_example

GOLDEN = Path(__file__).parent / "golden"
TINY_LEFT = {"hidden": 16, "layers": 1, "heads": 2, "dropout": 0.0, "leftover": "elements", "left_classes": 6}


def _reference_records(pred: Predictor, examples: list, batch_size: int, beam: int = 1) -> list[dict]:
    out = []
    for s in range(0, len(examples), batch_size):
        chunk = examples[s : s + batch_size]
        for ex, r in zip(chunk, pred.runner.forward(pred.runner.featurize(chunk)), strict=True):
            out.append(pred.decode_one(ex, r, beam))  # tensors -> line_outputs per example
    return out


def _check_line_outputs(pred: Predictor, examples: list) -> None:
    batch = pred.decoder.batch_line_outputs(pred.runner.run(examples))
    per_line = [pred.decoder.line_outputs(r) for r in pred.runner.forward(pred.runner.featurize(examples))]
    for a, b in zip(batch, per_line, strict=True):
        assert (a.role_p, a.logp, a.extra_p, a.left, a.has_left) == (b.role_p, b.logp, b.extra_p, b.left, b.has_left)
        assert torch.equal(a.bag, b.bag) and (a.coef, a.newcoef) == (b.coef, b.newcoef)
        items = pred.vocab.items
        assert a.vocab_extras == [items[j] for j in range(1, len(items)) if b.extra_p[j] > 0.5]


def _dumps(records: list) -> list[str]:
    return [json.dumps(r.to_json()) for r in records]


@pytest.mark.unit
def test_kbest_rows_equal_the_heap_beam_with_ties() -> None:
    rng = random.Random(0)

    def reference(rows, k):
        beams = [(0.0, ())]
        for row in rows:
            cand = [(s + lp, a + (j,)) for s, a in beams for j, lp in enumerate(row)]
            beams = heapq.nlargest(k, cand, key=lambda t: t[0])
        return beams

    for _ in range(300):
        rows = [
            [rng.choice([-0.5, -1.0, -2.0, rng.uniform(-5, 0)]) for _ in range(5)] for _ in range(rng.randint(1, 7))
        ]
        k = rng.randint(1, 6)
        assert kbest_rows(rows, k) == reference(rows, k)


@pytest.mark.unit
@pytest.mark.parametrize("leftover", ["elements", "vocab"])
def test_batched_path_equals_the_per_example_path_untrained(tmp_path: Path, leftover: str) -> None:
    write_toy_variant(tmp_path, "ChemAlgebra_F_T2_x1", {"train": 60})
    examples = load_examples(tmp_path, "ChemAlgebra_F_T2_x1", "train")
    vocab = ExtraVocab.build(examples)
    torch.manual_seed(0)
    pred = Predictor.build({**TINY_LEFT, "leftover": leftover}, Featurizer("formula"), vocab, 2)
    _check_line_outputs(pred, examples)
    for batch_size, beam in ((7, 1), (64, 3)):
        got = pred.predict(examples, batch_size=batch_size, beam=beam)
        assert _dumps(got) == _dumps(_reference_records(pred, examples, batch_size, beam))


@pytest.mark.integration
@pytest.mark.parametrize("case", ["formula_t1", "formula_t2"])
def test_batched_path_equals_the_per_example_path_bundled(case: str) -> None:
    # one model's batched decoding against its per-example decoding (the Type-1 hand-off off: the reference path
    # decodes with this model alone)
    off = ("decode.type1_model=",)
    pred = Predictor.from_checkpoint(DEFAULT_CHECKPOINT, options=PredictorOptions(extent="bayes", overrides=off))
    read = read_reaction_lines((GOLDEN / f"{case}.in").read_text().splitlines(), "auto", path=case)
    examples = [to_example(inp, pred.repr, pred.vtype) for _, inp in read.inputs]
    _check_line_outputs(pred, examples[:64])
    got = pred.predict(examples, batch_size=256, beam=2)
    assert _dumps(got) == _dumps(_reference_records(pred, examples, 256, beam=2))


@pytest.mark.unit
def test_a_written_main_product_parses_back_to_the_remainder() -> None:
    """The decoder takes a formula main product's composition from the remainder it was written from, instead
    of parsing the string again: the two agree for every composition a remainder can be (element symbols as
    parsed, positive counts, any net charge)."""
    from collections import Counter

    from gnn_chemalgebra.chem.formula import _ISOTOPE_ALIASES, ELEMENTS, write_formula
    from gnn_chemalgebra.chem.molecule import composition

    rng = random.Random(1)
    symbols = sorted(ELEMENTS - set(_ISOTOPE_ALIASES))  # parsed compositions name H, never D or T
    for _ in range(3000):
        comp = Counter({e: rng.choice([1, 1, 2, 3, 9, 10, 11, 99, 100, 12345]) for e in rng.sample(symbols, 4)})
        comp["C"] = rng.randint(1, 40)
        charge = rng.choice([0, 0, 1, -1, 2, -2, 3, -4, 10])
        if charge:
            comp["charge"] = charge
        assert composition(write_formula(comp), "formula") == comp
