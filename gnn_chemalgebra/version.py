"""The package version, in a module of its own so that code on any floor can record it in what it writes
(manifests, checkpoints) without importing the package root, which reaches up to the Python API."""

__version__ = "0.1.0"
