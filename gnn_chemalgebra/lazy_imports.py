"""Defer ``torch._dynamo`` and ``torch_geometric.datasets`` until something uses them, so that importing
torch_geometric stays cheap.

``import torch_geometric`` (any submodule: the package ``__init__`` runs first) executes
``torch_geometric.isinstance``, whose ``import torch._dynamo`` is the largest single cost of ``gnnca``'s start-up
(about a second of ~3 s on an idle core, sympy included), although nothing on our paths compiles: PyG only
reads ``torch._dynamo.OptimizedModule`` inside ``is_torch_instance`` and uses ``torch.compiler`` otherwise.
The package ``__init__`` also imports every dataset class (``torch_geometric.datasets``, with its LLM helpers
and ``requests``), the next largest cost, which we never use.

:func:`install` puts a finder first on ``sys.meta_path`` that answers ``import`` of a :data:`DEFERRED` package
with a stand-in module. The first attribute read from a stand-in (``torch._dynamo.anything``,
``from torch._dynamo import x``, an import of a submodule) imports the real package, which then replaces the
stand-in everywhere (``sys.modules`` and the parent's attribute), so code that does use it (``torch.compile``)
behaves as before, after paying the import it would have paid anyway. ``GNNCA_EAGER_IMPORTS=1`` turns this off.

``install(inference_only=True)``, for a process that only runs networks eagerly (the ``gnnca predict`` command,
see ``cli.main``), also defers :data:`INFERENCE_ONLY`: ``torch._meta_registrations``, which ``import torch`` runs
for its side effects (about a quarter of torch's import, with ``torch._decomp``/``_refs``/``_prims``): it
registers Python kernels for the Meta dispatch key and decompositions, which only tracing reads (FakeTensor,
``torch.compile``, ``torch.export``, tensors on the "meta" device); CPU and CUDA kernels are not touched, so the
network computes the same bytes. Nothing reads an attribute of that module, so loading any other deferred package
(``torch._dynamo``, the entry to compiling) loads it first, and :func:`load_real` loads it on request. And
``torch.export`` (a stand-in like the others, loaded on its first use), which ``import torch`` also runs eagerly.

:func:`pause_gc` / :func:`resume_gc` keep the garbage collector out of the same start-up (``gnnca predict``).

Ground floor: imports neither torch nor anything of the package.
"""

from __future__ import annotations

import gc
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import threading
import types
from collections.abc import Sequence

DEFERRED: tuple[str, ...] = ("torch._dynamo", "torch_geometric.datasets")
INFERENCE_ONLY: tuple[str, ...] = ("torch._meta_registrations", "torch.export")
_lock = threading.RLock()


class _StandIn(types.ModuleType):
    """Module object registered under a deferred name until the first real use."""

    def __getattr__(self, attr: str) -> object:
        # The import system probes dunders (__loader__, __path__, ...) while registering the stand-in; those
        # must not load anything. Once registered, __path__ is read only to import a submodule: a real use.
        dunder = attr.startswith("__") and attr.endswith("__")
        if dunder and (attr != "__path__" or not self.__dict__.get("_gnnca_registered")):
            raise AttributeError(attr)
        return getattr(load_real(self.__name__), attr)


def load_real(name: str) -> types.ModuleType:
    """Import the real package ``name`` (once) and put it where the stand-in was."""
    with _lock:
        if name not in _Finder.loaded:
            _Finder.loaded.add(name)
            for first in INFERENCE_ONLY:  # registrations that tracing (behind every other deferred package) needs
                if first not in _Finder.loaded and isinstance(sys.modules.get(first), _StandIn):
                    load_real(first)
        mod = sys.modules.get(name)  # (after those: one of them may have loaded this one)
        if mod is not None and not isinstance(mod, _StandIn):
            return mod
        sys.modules.pop(name, None)
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is not None and isinstance(parent.__dict__.get(child), _StandIn):
            delattr(parent, child)  # (torch's own lazy __getattr__ finds the real, partially imported one meanwhile)
        return importlib.import_module(name)  # also sets the parent's attribute to the real module


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``torch._dynamo`` with the stand-in; and, for a submodule whose import loaded the real package
    (through the stand-in's ``__path__``), hands back the module that import already created instead of letting
    a second copy be executed."""

    loaded: set[str] = set()  # deferred names whose real package was asked for
    names: tuple[str, ...] = DEFERRED  # what this process defers (+ INFERENCE_ONLY after install(True))

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in _Finder.names and fullname not in _Finder.loaded:
            return importlib.machinery.ModuleSpec(fullname, self)
        if fullname in sys.modules and fullname.startswith(tuple(d + "." for d in _Finder.names)):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(sys.modules[fullname], "__path__"))
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name in _Finder.names:
            return _StandIn(spec.name)
        return sys.modules[spec.name]

    def exec_module(self, module: types.ModuleType) -> None:
        if isinstance(module, _StandIn):
            module._gnnca_registered = True


def install(inference_only: bool = False) -> bool:
    """Register the stand-in finder unless ``GNNCA_EAGER_IMPORTS`` is set (a package already imported stays as
    it is); returns whether it is (now) registered. ``inference_only``: also defer :data:`INFERENCE_ONLY` (for
    the rest of the process: only for one that runs networks eagerly and nothing else)."""
    if os.environ.get("GNNCA_EAGER_IMPORTS"):
        return any(isinstance(f, _Finder) for f in sys.meta_path)
    if inference_only:
        _Finder.names = DEFERRED + INFERENCE_ONLY
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    return True


def deferred(name: str = DEFERRED[0]) -> bool:
    """Whether ``name`` is currently a stand-in (not yet really imported)."""
    return isinstance(sys.modules.get(name), _StandIn)


_gc_paused = False


def pause_gc() -> None:
    """Turn the cyclic garbage collector off while a start-up imports and loads: a ``gnnca predict`` process runs
    ~300 collections then (~9% of its CPU) that find ~1,000 unreachable objects among ~130,000 long-lived ones
    (torch, RDKit, the model). :func:`resume_gc` turns it back on; nothing computed depends on when it runs."""
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def resume_gc() -> None:
    """Undo :func:`pause_gc` (nothing when it did not pause the collector). What the start-up allocated is moved
    out of the collector's reach first (``gc.freeze``: it lives as long as the process), or the first collections
    after it would scan all of it."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()
