"""Defer ``torch._dynamo`` until something uses it, so that importing torch_geometric stays cheap.

``import torch_geometric`` (any submodule: the package ``__init__`` runs first) executes
``torch_geometric.isinstance``, whose ``import torch._dynamo`` is the largest single cost of ``gnnca``'s start-up
(about a second of ~3 s on an idle core, sympy included), although nothing on our paths compiles: PyG only
reads ``torch._dynamo.OptimizedModule`` inside ``is_torch_instance`` and uses ``torch.compiler`` otherwise.

:func:`install` puts a finder first on ``sys.meta_path`` that answers ``import torch._dynamo`` with a stand-in
module. The first attribute read from the stand-in (``torch._dynamo.anything``, ``from torch._dynamo import x``,
an import of a submodule) imports the real package, which then replaces the stand-in everywhere
(``sys.modules`` and ``torch._dynamo``), so code that does use dynamo (``torch.compile``) behaves as before, after
paying the import it would have paid anyway. ``GNNCA_EAGER_IMPORTS=1`` turns this off.

Ground floor: imports neither torch nor anything of the package.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import threading
import types
from collections.abc import Sequence

DEFERRED = "torch._dynamo"
_lock = threading.RLock()


class _StandIn(types.ModuleType):
    """Module object registered as ``torch._dynamo`` until the first real use."""

    def __getattr__(self, attr: str) -> object:
        # The import system probes dunders (__loader__, __path__, ...) while registering the stand-in; those
        # must not load anything. Once registered, __path__ is read only to import a submodule: a real use.
        dunder = attr.startswith("__") and attr.endswith("__")
        if dunder and (attr != "__path__" or not self.__dict__.get("_gnnca_registered")):
            raise AttributeError(attr)
        return getattr(load_real(), attr)


def load_real() -> types.ModuleType:
    """Import the real ``torch._dynamo`` (once) and put it where the stand-in was."""
    with _lock:
        mod = sys.modules.get(DEFERRED)
        if mod is not None and not isinstance(mod, _StandIn):
            return mod
        _Finder.active = False
        sys.modules.pop(DEFERRED, None)
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(torch.__dict__.get("_dynamo"), _StandIn):
            del torch._dynamo  # torch's own lazy __getattr__ finds the real, partially imported one meanwhile
        return importlib.import_module(DEFERRED)  # also sets torch._dynamo to the real module


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``torch._dynamo`` with the stand-in; and, for a submodule whose import loaded the real package
    (through the stand-in's ``__path__``), hands back the module that import already created instead of letting
    a second copy be executed."""

    active = True

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == DEFERRED and _Finder.active:
            return importlib.machinery.ModuleSpec(fullname, self)
        if fullname.startswith(DEFERRED + ".") and fullname in sys.modules:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(sys.modules[fullname], "__path__"))
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == DEFERRED:
            return _StandIn(spec.name)
        return sys.modules[spec.name]

    def exec_module(self, module: types.ModuleType) -> None:
        if isinstance(module, _StandIn):
            module._gnnca_registered = True


def install() -> bool:
    """Register the stand-in finder unless dynamo is already imported or ``GNNCA_EAGER_IMPORTS`` is set;
    returns whether it is (now) registered."""
    if os.environ.get("GNNCA_EAGER_IMPORTS") or DEFERRED in sys.modules:
        return any(isinstance(f, _Finder) for f in sys.meta_path)
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    return True


def deferred() -> bool:
    """Whether ``torch._dynamo`` is currently the stand-in (not yet really imported)."""
    return isinstance(sys.modules.get(DEFERRED), _StandIn)
