"""Size-bucketed batches for the edit-model trainer: a permutation per pass, seeded, similar sizes."""

from __future__ import annotations

import random

import pytest
import torch

from gnn_chemalgebra.data.edit_dataset import SizeBucketBatchSampler

pytestmark = pytest.mark.unit


def _sizes(n: int = 1000, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(3, 130) for _ in range(n)]


def _gen(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


@pytest.mark.parametrize("n", [1, 31, 32, 33, 1000, 1601])
def test_every_index_once_per_pass(n: int) -> None:
    s = SizeBucketBatchSampler(_sizes(n), 32, _gen(0), pool=10)
    batches = list(s)
    assert len(batches) == len(s) == -(-n // 32)
    assert sorted(k for b in batches for k in b) == list(range(n))
    assert all(1 <= len(b) <= 32 for b in batches)
    assert sum(len(b) < 32 for b in batches) <= 1  # only the last pool's tail is short


def test_seeded_and_replayable() -> None:
    sizes = _sizes()
    g = _gen(5)
    state = g.get_state()
    s = SizeBucketBatchSampler(sizes, 32, g)
    first, second = list(s), list(s)
    assert first != second  # a new order every pass
    g.set_state(state)  # what the trainer does to resume inside an epoch
    assert list(s) == first
    assert list(SizeBucketBatchSampler(sizes, 32, _gen(5))) == first
    assert list(SizeBucketBatchSampler(sizes, 32, _gen(6))) != first


def test_batches_hold_similar_sizes() -> None:
    sizes = _sizes(3200)
    bucketed = list(SizeBucketBatchSampler(sizes, 32, _gen(0), pool=50))
    perm = torch.randperm(len(sizes), generator=_gen(0)).tolist()
    plain = [perm[k : k + 32] for k in range(0, len(perm), 32)]

    def padded(batches: list[list[int]]) -> int:  # atoms the padded Transformer runs over
        return sum(len(b) * max(sizes[k] for k in b) for b in batches)

    assert padded(bucketed) < 0.6 * padded(plain)
    for b in bucketed:  # one pool: each batch a contiguous run of the sorted sizes
        assert max(sizes[k] for k in b) - min(sizes[k] for k in b) <= 10
