"""torch._dynamo deferred behind torch_geometric's import, and loaded for real on first use (one module object)."""

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
print("deferred", li.deferred(), "sympy" in sys.modules)
if sys.argv[1] == "submodule":
    from torch._dynamo.eval_frame import OptimizedModule
    import torch._dynamo.eval_frame as ef
    print("same", ef is sys.modules["torch._dynamo.eval_frame"], OptimizedModule is torch._dynamo.OptimizedModule)
else:
    print("same", torch._dynamo.is_compiling() is False, torch._dynamo is sys.modules["torch._dynamo"])
print("after", li.deferred(), type(sys.modules["torch._dynamo"]).__name__)
"""


@pytest.mark.parametrize("first_use", ["attribute", "submodule"])
def test_dynamo_waits_for_its_first_use(first_use: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, first_use], capture_output=True, text=True, timeout=600, check=True
    ).stdout.splitlines()
    assert out[0] == "deferred True False"  # torch_geometric imported, dynamo (and sympy) not
    assert out[1] == "same True True"
    assert out[2] == "after False module"  # the real package replaced the stand-in


def test_eager_imports_env_turns_it_off() -> None:
    code = "import os, sys; from gnn_chemalgebra import lazy_imports as li; print(li.install())"
    env = {"GNNCA_EAGER_IMPORTS": "1", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"
