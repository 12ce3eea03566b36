"""torch._dynamo and torch_geometric.datasets deferred behind torch_geometric's import, loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

CHILD = r"""
import sys
from gnn_chemalgebra import lazy_imports as li
assert li.install()
import torch
import torch_geometric.data, torch_geometric.nn, torch_geometric.utils
print("deferred", li.deferred(), "sympy" in sys.modules, li.deferred("torch_geometric.datasets"))
if sys.argv[1] == "datasets":
    import torch_geometric
    print("same", torch_geometric.datasets.QM9.__name__ == "QM9", not li.deferred("torch_geometric.datasets"))
    print("after", li.deferred(), type(sys.modules["torch_geometric.datasets"]).__name__)
    sys.exit()
if sys.argv[1] == "submodule":
    from torch._dynamo.eval_frame import OptimizedModule
    import torch._dynamo.eval_frame as ef
    print("same", ef is sys.modules["torch._dynamo.eval_frame"], OptimizedModule is torch._dynamo.OptimizedModule)
else:
    print("same", torch._dynamo.is_compiling() is False, torch._dynamo is sys.modules["torch._dynamo"])
print("after", li.deferred(), type(sys.modules["torch._dynamo"]).__name__)
"""


@pytest.mark.parametrize("first_use", ["attribute", "submodule", "datasets"])
def test_dynamo_waits_for_its_first_use(first_use: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, first_use], capture_output=True, text=True, timeout=600, check=True
    ).stdout.splitlines()
    assert out[0] == "deferred True False True"  # torch_geometric imported, dynamo (and sympy) and datasets not
    assert out[1] == "same True True"
    assert out[2] == ("after True module" if first_use == "datasets" else "after False module")  # real package in


def test_eager_imports_env_turns_it_off() -> None:
    code = "import os, sys; from gnn_chemalgebra import lazy_imports as li; print(li.install())"
    env = {"GNNCA_EAGER_IMPORTS": "1", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


INFERENCE_CHILD = r"""
import sys
from gnn_chemalgebra import lazy_imports as li
assert li.install(inference_only=True)
import torch
print("deferred", li.deferred("torch._meta_registrations"), li.deferred("torch.export"), "torch._decomp" in sys.modules)
if sys.argv[1] == "dynamo":
    torch._dynamo.is_compiling()  # the way into compiling loads the meta kernels first
elif sys.argv[1] == "export":
    assert torch.export.ExportedProgram.__name__ == "ExportedProgram"  # first use of the stand-in: the real one
else:
    li.load_real("torch._meta_registrations")
print("after", li.deferred("torch._meta_registrations"), li.deferred("torch.export"), "torch._decomp" in sys.modules)
t = torch.empty(3, 4, device="meta")
print("meta", tuple(torch.nn.functional.gelu(t).shape), tuple(torch.nn.functional.layer_norm(t, (4,)).shape))
"""


@pytest.mark.parametrize("first_use", ["dynamo", "export", "explicit"])
def test_inference_only_defers_meta_kernels_until_tracing(first_use: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", INFERENCE_CHILD, first_use], capture_output=True, text=True, timeout=600, check=True
    ).stdout.splitlines()
    assert out == ["deferred True True False", "after False False True", "meta (3, 4) (3, 4)"]


def test_without_inference_only_meta_kernels_load_with_torch() -> None:
    code = "import sys; from gnn_chemalgebra import lazy_imports as li; li.install(); import torch; "
    code += "print(li.deferred('torch._meta_registrations'), 'torch._decomp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    assert out.stdout.strip() == "False True"


def test_pause_and_resume_gc() -> None:
    import gc

    from gnn_chemalgebra import lazy_imports as li

    assert gc.isenabled()
    try:
        li.pause_gc()
        assert not gc.isenabled()
        kept = [[n] for n in range(1000)]  # allocated while paused: frozen on resume, not scanned again
        li.resume_gc()
        assert gc.isenabled() and gc.get_freeze_count() >= len(kept)
        gc.disable()  # switched off by someone else: resume_gc leaves it so
        li.resume_gc()
        li.pause_gc()
        li.resume_gc()
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
