"""Data-parallel training through torchrun + DistributedDataParallel (PyTorch's engine, not our own).

Under ``torchrun --nproc_per_node=N -m gnn_chemalgebra.cli train ...`` the environment carries RANK,
WORLD_SIZE and LOCAL_RANK; without them every helper here degrades to the single-process case, so the
trainer has one code path. NCCL on CUDA, gloo on CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.utils.data import Dataset
from torch.utils.data.distributed import DistributedSampler


@dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Only rank 0 writes logs and checkpoints."""
        return self.rank == 0


def env_info() -> DistInfo:
    return DistInfo(
        rank=int(os.environ.get("RANK", 0)),
        world_size=int(os.environ.get("WORLD_SIZE", 1)),
        local_rank=int(os.environ.get("LOCAL_RANK", 0)),
    )


def init(device: torch.device) -> DistInfo:
    """Join the process group that torchrun set up (no-op for a single process)."""
    info = env_info()
    if info.enabled and not dist.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            torch.cuda.set_device(info.local_rank)
        dist.init_process_group(backend=backend)
    return info


def shutdown() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def sampler(dataset: Dataset, info: DistInfo, seed: int) -> DistributedSampler:
    """Seeded shuffling shared by all ranks; rank r takes every world_size-th index of the permutation.

    Used with one replica too, so a single process sees exactly the global batches of an N-process run
    (global batch = per-rank batch x N).
    """
    return DistributedSampler(
        dataset, num_replicas=info.world_size, rank=info.rank, shuffle=True, seed=seed, drop_last=False
    )


def wrap(model: torch.nn.Module, info: DistInfo, device: torch.device) -> torch.nn.Module:
    if not info.enabled:
        return model
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids, find_unused_parameters=True)


def all_reduce_sums(values: dict[str, float], info: DistInfo) -> dict[str, float]:
    """Sum float statistics over ranks (for epoch losses and counts)."""
    if not info.enabled:
        return values
    keys = sorted(values)
    t = torch.tensor([values[k] for k in keys], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return {k: float(v) for k, v in zip(keys, t.tolist(), strict=True)}


def barrier(info: DistInfo) -> None:
    if info.enabled:
        dist.barrier()


def broadcast_flag(flag: bool, info: DistInfo) -> bool:
    """Rank 0's decision (early stopping, budget) for everyone."""
    if not info.enabled:
        return flag
    t = torch.tensor([1 if flag else 0], dtype=torch.int64)
    dist.broadcast(t, src=0)
    return bool(t.item())
