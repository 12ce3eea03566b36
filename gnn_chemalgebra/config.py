"""Typed run configuration: the YAML schema as dataclasses, with every default here or in :mod:`.kinds`.

A config has the sections ``data``, ``model``, ``train`` and ``decode`` plus ``run_dir``. The ``model`` section
depends on ``model.name``, a kind of the registry :mod:`gnn_chemalgebra.kinds` (which holds each kind's section
dataclass and the ``train`` defaults that differ per kind). An unknown key (in the YAML file or a ``--set a.b=c``
override) is an :class:`~gnn_chemalgebra.errors.InputError` naming the key and the closest valid one; a value
of the wrong type is one line naming the key and the expected type. Checkpoints store :meth:`Config.to_dict`
(plain data, ``weights_only``-loadable); :func:`decode_settings` reads the decode section back from it.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from .errors import InputError
from .kinds import KINDS, EditModelConfig, GNNModelConfig, TransformerModelConfig, kind
from .kinds import opt as _opt

__all__ = ["Config", "DataConfig", "DecodeConfig", "EditModelConfig", "GNNModelConfig", "TrainConfig",
           "TransformerModelConfig", "apply_overrides", "decode_overrides", "decode_settings", "load_config",
           "load_typed_config", "parse_config", "schema_keys", "typed"]  # fmt: skip


@dataclass
class DataConfig:
    dir: str | None = None  # built dataset root (``gnnca data build --out``)
    variant: str | None = None  # e.g. ChemAlgebra_F_T1_x1 (not used by the edit model)
    train_split: str = "train"
    val_split: str = "valid"
    limit: int = _opt(0, lo=0)  # first N training lines; 0 = all
    val_limit: int = _opt(0, lo=0)  # first N validation lines; 0 = all
    lazy: bool = False  # GNN: featurise bags on access (memory grows with examples, not graphs)
    extra_dirs: str = ""  # training data of these folders too (comma list, e.g. gnnca data dropped --out), after
    # data.dir's: the GNN reads their lines (the same variant and train split), the edit model their mapped
    # reactions-train.jsonl; "" = none
    augment_drop_reagents: float = _opt(0.0, lo=0.0, hi=1.0)  # GNN training: chance that each molecule the line
    # does not consume (reagent, solvent, catalyst) leaves it (data/bag_transforms.py); 0 = off
    augment_salts: float = _opt(0.0, lo=0.0, hi=1.0)  # GNN training: chance that each unconsumed ion pair is written
    # as its salt and each salt as its ions; 0 = off
    max_pairs: int = _opt(6000, lo=1)  # edit model: candidate pairs per reaction above which pairs are sampled
    edit_sources: str = ""  # edit model: training records of these sources only (comma list of local, uspto_full,
    # uspto_500_mt, templates; records without an atom map are skipped and counted either way); "" = every record
    cache_examples: bool = False  # edit model: featurised examples cached once under <run_dir>/cache (hash-keyed)
    tokenizer: str = "auto"  # transformer: auto (from the variant), formula, smiles, or a digit-level one
    sort_targets: bool = False  # transformer: train on targets with their terms sorted (EM ignores order)
    max_src_tokens: int = _opt(1000, lo=1)  # transformer: longer pairs are dropped (never truncated)
    max_tgt_tokens: int = _opt(200, lo=1)

    def extra_folders(self) -> list[str]:
        """The ``extra_dirs`` folders, in order."""
        return [x.strip() for x in self.extra_dirs.split(",") if x.strip()]


LR_SCHEDULES = ("constant", "cosine", "noam", "cosine_epochs")


@dataclass
class TrainConfig:
    seed: int = 0
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    amp: bool = True  # bf16 autocast on CUDA (CPU stays fp32)
    num_threads: int = _opt(0, lo=0)  # 0 = torch's default
    tensorboard: bool = True
    progress: bool = True
    # budget: whichever comes first
    epochs: int = _opt(10, lo=0)  # 0 = no epoch limit (then set max_steps or max_minutes)
    max_steps: int = _opt(0, lo=0)  # optimiser steps in total; 0 = none
    max_minutes: float = _opt(0.0, lo=0.0)  # wall clock of this invocation; 0 = none
    batch_size: int = _opt(32, lo=1)  # reactions per optimiser step
    batch_tokens: int = _opt(0, lo=0)  # transformer: cap on padded tokens per batch; 0 = none
    sampler: str = _opt("", choices=("", "distributed"))  # distributed: the DDP sampler with one process too
    init_from: str = ""  # fine-tune: this checkpoint's weights and by-product vocabulary, fresh optimiser
    overwrite: bool = False  # a fresh run into a run_dir that holds one replaces it (else refused; --resume continues)
    # optimiser and schedule
    optimizer: str = _opt("adamw", choices=("adam", "adamw"))
    lr: float = _opt(1e-3, lo=0.0)
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])
    weight_decay: float = _opt(0.0, lo=0.0)
    lr_schedule: str = _opt("constant", choices=LR_SCHEDULES)
    warmup: float = _opt(0.02, lo=0.0, hi=1.0)  # cosine/noam warm-up as a share of the step budget
    warmup_steps: int = _opt(0, lo=0)  # an explicit warm-up length (wins over the share; constant uses only this)
    grad_clip: float = _opt(1.0, lo=0.0)  # 0 = off
    # losses
    mass_balance_weight: float = _opt(0.0, lo=0.0)  # GNN
    mass_balance_variance: bool = False  # GNN: penalise E[residual^2] (adds the heads' variances), not E[residual]^2
    # GNN knowledge distillation (training/distill.py): a teacher's soft role and leftover labels
    # (experiments/distill_teacher.py), a KL term of this weight at this temperature; weight 0 = off
    distill_labels: str = ""
    distill_weight: float = _opt(0.0, lo=0.0)
    distill_temperature: float = _opt(1.0, lo=0.01)
    nochange_weight: float = _opt(0.2, lo=0.0)  # edit model
    prod_weight: float = _opt(0.5, lo=0.0)  # edit model
    pair_keep: float = _opt(1.0, lo=0.01, hi=1.0)  # edit model: share of non-bonded, unchanged pairs scored per step
    size_buckets: bool = False  # edit model: batches of reactions of similar atom counts (less padding)
    fast_train: bool = False  # edit model: packed Transformer rows, 16-bit dropout masks, fused AdamW (same maths);
    # transformer: its training forward with 16-bit dropout masks, fused Adam (eval and decoding unchanged)
    label_smoothing: float = _opt(0.1, lo=0.0, hi=1.0)  # transformer
    # validation and early stopping
    eval_every: int = _opt(0, lo=0)  # optimiser steps between validations; 0 = at the end of every epoch
    monitor: str = ""  # metric(s) to early-stop on, e.g. EM or val_em,val_token_acc (lexicographic); "" = model's
    patience: int = _opt(5, lo=0)  # validations without improvement; 0 = off
    patience_steps: int = _opt(0, lo=0)  # optimiser steps since the best validation; 0 = use ``patience``
    target: float = 0.0  # stop once the monitored metric reaches this (smoke tests); 0 = off
    val_em_lines: int = _opt(200, lo=0)  # transformer: greedy EM on the first N validation lines


@dataclass
class DecodeConfig:
    """Prediction settings, saved with every checkpoint (a checkpoint without them gets these defaults)."""

    # transformer decoding
    beam: int = _opt(10, lo=1)
    max_len: int = _opt(200, lo=1)
    batch_size: int = _opt(32, lo=1)
    length_penalty: float = 0.0
    # GNN predictor
    balance_beam: int = _opt(4, lo=1)  # role hypotheses decoded before the best balanced one is chosen
    edit_beam: int = _opt(5, lo=1)  # product graphs per reactant set from the bond-edit model
    edit_role_sets: int = _opt(2, lo=1)  # Type 2: reactant sets decoded by the edit model before the evidence decides
    edit_role_sets_t1: int = _opt(1, lo=1)  # Type 1: reactant sets decoded, ranked by role + edit log-probability
    evidence_floor: float = -20.0  # lower bound of a hypothesis' log evidence
    role_evidence: bool = True  # Type 2: weigh role hypotheses by the likelihood of the written coefficients
    valence_check: bool = True  # formula: a neutral main-product remainder must admit a closed-shell molecule
    # formula: a leftover must be one the benchmark could write (some order of its element groups is a chain
    # RDKit accepts; chem.leftover.formula_chain_admissible), as every gold leftover is; matters most for models
    # trained on `gnnca data formula-extra` lines, whose leftovers include the others (NH3, CH3OH)
    admissible_leftover: bool = True
    # a second checkpoint for Type-1 lines (equal coefficients), relative to this checkpoint's folder; "" = this
    # model reads every line. A model trained on Type-1 lines alone reads them better than a mixed one
    type1_model: str = ""
    # SMILES: the bond-edit checkpoint (relative to this checkpoint's folder) that writes this model's product
    # graphs, for a model trained with its own edit model; "" = the paired or the default one
    edit_model: str = ""
    # a chemist's line (--byproducts chemist): hypotheses searched for one that real by-products close (water,
    # an alcohol, a salt) before one they do not; 1 = the decoder's first line, as the benchmark reads it
    real_byproduct_beam: int = _opt(1, lo=1)
    # a chemist's formula line: what leaves is a set of real molecules (water, CO2 and isobutene), which the
    # per-element leftover head cannot count; this many sets of at most two of the by-product head's likeliest
    # molecules are tried instead, likeliest first; 0 = the leftover head's candidates, as the benchmark reads it
    real_byproduct_sets: int = _opt(0, lo=0)
    # ... and the log-weight added to the set of none among them (the head's independent guesses otherwise rank it
    # first wherever it is unsure of every by-product)
    real_byproduct_none: float = _opt(0.0, hi=0.0)
    # a chemist's SMILES line: a formula checkpoint (relative to this checkpoint's folder) that reads the same line
    # written in formulas; among the hypotheses searched above, the first whose line has the formulas it writes is
    # written. Two readings of one reaction agree more often when they are right; "" = no second reading
    formula_check: str = ""


@dataclass
class Config:
    run_dir: str = ""  # "" = runs/<model.name>
    data: DataConfig = field(default_factory=DataConfig)
    model: Any = field(default_factory=GNNModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (what checkpoints store and ``cfg[...]`` readers expect)."""
        return dataclasses.asdict(self)

    @property
    def model_name(self) -> str:
        return str(self.model.name)


SECTIONS: dict[str, type] = {"data": DataConfig, "train": TrainConfig, "decode": DecodeConfig}
# Older key names, still read (the scripts and saved configs of earlier runs use them).
ALIASES: dict[str, str] = {
    "data.limit_train": "data.limit",
    "data.limit_valid": "data.val_limit",
    "data.valid_split": "data.val_split",
    "train.schedule": "train.lr_schedule",
    "train.early_stop_metric": "train.monitor",
}
_TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


# --------------------------------------------------------------------------- loading
def load_config(path: str | Path, overrides: Iterable[str] = ()) -> dict[str, Any]:
    """Read a YAML preset, apply ``--set`` overrides, validate, fill defaults; a plain dict (see :class:`Config`)."""
    return load_typed_config(path, overrides).to_dict()


def load_typed_config(path: str | Path, overrides: Iterable[str] = ()) -> Config:
    import yaml  # here and in apply_overrides only: `gnnca predict` without --set reads no YAML

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise InputError("config file not found", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("config path is a folder, not a YAML file", path=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("config is not a UTF-8 text file", path=str(path)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None)
        if isinstance(err, yaml.reader.ReaderError):  # a character YAML does not allow: locate it by position
            text = path.read_text(encoding="utf-8")
            line = text.count("\n", 0, err.position) + 1
            code = err.character if isinstance(err.character, int) else ord(err.character)
            why = f"invalid YAML: a control character (code point {code:#x}) is not allowed"
            raise InputError(why, path=str(path), line=line) from None
        if mark is None or not problem:
            raise InputError(f"invalid YAML: {' '.join(str(err).split())}", path=str(path)) from None
        context, opened = getattr(err, "context", None), getattr(err, "context_mark", None)
        if context and opened is not None and opened.line != mark.line:
            context = f"{context} opened at line {opened.line + 1}"
        why = f"{context}: {problem}" if context else problem
        why = f"invalid YAML (column {mark.column + 1}): {why}"
        raise InputError(why, path=str(path), line=mark.line + 1) from None
    if not isinstance(raw, dict):
        raise InputError("config must be a mapping at top level", path=str(path))
    cfg = parse_config(raw, source=str(path))  # errors in the file itself are reported against the file
    for item in overrides:
        raw = apply_overrides(raw, [item])
        cfg = parse_config(raw, source=_set_source(item))
    return cfg


def _set_source(item: str) -> str:
    """How an override is named in a message: as typed, or quoted when it holds line breaks or controls."""
    return f"--set {item}" if item.isprintable() else f"--set {item!r}"


def apply_overrides(cfg: Mapping[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Return a copy of ``cfg`` with each ``a.b.c=value`` applied (value parsed as a YAML scalar)."""
    out = copy.deepcopy(dict(cfg))
    for item in overrides:
        if "=" not in item:
            raise InputError(f"override {item!r} must look like key.sub=value", path="--set")  # repr: one line
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(p.strip() for p in parts):
            raise InputError(f"override {item!r} has an empty key part", path="--set")
        import yaml

        node = out
        for p in parts[:-1]:
            nxt = node.get(p)
            if nxt is None:
                nxt = node[p] = {}
            if not isinstance(nxt, dict):
                where = ".".join(parts[: parts.index(p) + 1])
                raise InputError(f"{where!r} is not a section", path=_set_source(item))
            node = nxt
        try:
            node[parts[-1]] = yaml.safe_load(raw) if raw != "" else ""
        except yaml.YAMLError:
            node[parts[-1]] = raw  # not YAML: keep the text; the schema decides whether a string is allowed
    return out


# --------------------------------------------------------------------------- validation
def parse_config(raw: Mapping[str, Any], source: str | None = None, *, model_name: str | None = None) -> Config:
    """Validate a nested mapping against the schema and return a :class:`Config` with defaults filled.

    ``model_name`` fills ``model.name`` when the mapping has none (the edit trainer called directly).
    """
    raw = _dealias(raw, source)
    unknown = [k for k in raw if k not in ("run_dir", "model", *SECTIONS)]
    if unknown:
        _unknown(unknown[0], ["run_dir", "model", *SECTIONS], source)
    run_dir = raw.get("run_dir", "")
    run_dir = "" if run_dir is None else _coerce("run_dir", run_dir, str, (), None, None, source)
    mraw = _mapping(raw.get("model"), "model", source)
    name = mraw.get("name", model_name or "gnn")
    if not isinstance(name, str) or name not in KINDS:  # a list or mapping is a wrong choice too
        _bad_choice("model.name", name, tuple(KINDS), source)
    model = _build(KINDS[name].config, {**mraw, "name": name}, "model", source, {})
    train = _build(TrainConfig, _mapping(raw.get("train"), "train", source), "train", source,
                   dict(KINDS[name].train_defaults))  # fmt: skip
    data = _build(DataConfig, _mapping(raw.get("data"), "data", source), "data", source, {})
    decode = _build(DecodeConfig, _mapping(raw.get("decode"), "decode", source), "decode", source, {})
    return Config(run_dir=run_dir or f"runs/{name}", data=data, model=model, train=train, decode=decode)


def typed(cfg: Config | Mapping[str, Any], *, model_name: str | None = None) -> Config:
    """A :class:`Config` from either a Config or a plain dict (library callers and tests pass dicts)."""
    return cfg if isinstance(cfg, Config) else parse_config(cfg, model_name=model_name)


def decode_settings(saved: Mapping[str, Any] | None) -> DecodeConfig:
    """The decode section of a checkpoint's saved config; defaults for what it lacks (older checkpoints).

    Lenient on purpose: keys that a later version dropped are ignored, not refused.
    """
    sec = (saved or {}).get("decode") or {}
    known = {f.name for f in dataclasses.fields(DecodeConfig)}
    return _build(DecodeConfig, {k: v for k, v in dict(sec).items() if k in known}, "decode", "checkpoint", {})


def decode_overrides(settings: DecodeConfig, sets: Iterable[str]) -> DecodeConfig:
    """``settings`` with ``decode.key=value`` overrides applied and validated like a config file's (an unknown
    key names the closest valid one; a value of the wrong type is one line)."""
    sets = list(sets)
    if not sets:
        return settings
    for item in sets:
        if not item.split("=", 1)[0].strip().startswith("decode."):
            raise InputError(
                f"predict takes decode.* settings only (e.g. decode.balance_beam=8), got {item!r}", path="--set"
            )
    raw = apply_overrides({"decode": dataclasses.asdict(settings)}, sets)
    return parse_config(raw, source="--set").decode


def schema_keys(model_name: str = "gnn") -> list[str]:
    """Every valid dotted key for a model (for messages, docs and tests)."""
    keys = ["run_dir"]
    for sec, cls in (("data", DataConfig), ("model", kind(model_name).config), ("train", TrainConfig),
                     ("decode", DecodeConfig)):  # fmt: skip
        keys += [f"{sec}.{f.name}" for f in dataclasses.fields(cls)]
    return keys


def _dealias(raw: Mapping[str, Any], source: str | None) -> dict[str, Any]:
    out = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in raw.items()}
    for old, new in ALIASES.items():
        sec, key = old.split(".")
        node = out.get(sec)
        if isinstance(node, dict) and key in node:
            nkey = new.split(".")[1]
            if nkey in node and node[nkey] != node[key]:
                raise InputError(f"both {old} and {new} are set (the former is the old name of the latter)",
                                 path=source)  # fmt: skip
            node[nkey] = node.pop(key)
    return out


def _mapping(value: Any, name: str, source: str | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{name} must be a section (a mapping of keys), got {value!r}", path=source)
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise InputError(f"{name}: keys must be names, got {bad[0]!r}", path=source)
    return dict(value)


def _build(cls: type, values: dict[str, Any], section: str, source: str | None, defaults: dict[str, Any]) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for k in values:
        if k not in fields:
            of = f" of model.name {values['name']!r}" if section == "model" else ""
            _unknown(f"{section}.{k}", [f"{section}.{n}" for n in fields], source, of)
    hints = get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name in values:
            meta = f.metadata or {}
            kwargs[name] = _coerce(f"{section}.{name}", values[name], hints[name], meta.get("choices", ()),
                                   meta.get("lo"), meta.get("hi"), source)  # fmt: skip
        elif name in defaults:
            kwargs[name] = copy.deepcopy(defaults[name])
    return cls(**kwargs)


def _coerce(key: str, value: Any, hint: Any, choices: tuple, lo: float | None, hi: float | None, source: str | None):
    optional = hint == (str | None)
    base = str if optional else hint
    if value is None and optional:
        return None
    if base == list[float]:
        if not isinstance(value, list) or not value or not all(_is_number(v) for v in value):
            _wrong_type(key, value, "a list of numbers, e.g. [0.9, 0.999]", source)
        if key == "train.betas" and (len(value) != 2 or not all(0 <= v < 1 for v in value)):
            _wrong_type(key, value, "two numbers in [0, 1) (Adam's betas), e.g. [0.9, 0.999]", source)
        return [float(v) for v in value]
    if base is bool:
        if not isinstance(value, bool):
            _wrong_type(key, value, _TYPE_NAMES[bool], source)
        return value
    if base is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                _wrong_type(key, value, _TYPE_NAMES[int], source)
    elif base is float:
        if isinstance(value, str):  # PyYAML reads 1e-3 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                _wrong_type(key, value, _TYPE_NAMES[float], source)
        if not _is_number(value) or not math.isfinite(float(value)):
            _wrong_type(key, value, f"{_TYPE_NAMES[float]} (finite)", source)
        value = float(value)
    elif base is str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            _wrong_type(key, value, _TYPE_NAMES[str], source)
        value = str(value)
        if choices and value not in choices:
            _bad_choice(key, value, choices, source)
        return value
    if lo is not None and value < lo:
        raise InputError(f"{key} must be >= {lo}, got {value!r}", path=source)
    if hi is not None and value > hi:
        raise InputError(f"{key} must be <= {hi}, got {value!r}", path=source)
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _wrong_type(key: str, value: Any, expected: str, source: str | None) -> None:
    raise InputError(f"{key} must be {expected}, got {_short(value)}", path=source)


def _bad_choice(key: str, value: Any, choices: tuple, source: str | None) -> None:
    shown = ", ".join(repr(c) for c in choices if c)
    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise InputError(f"{key} must be one of {shown}, got {_short(value)}{hint}", path=source)


def _unknown(key: str, valid: list[str], source: str | None, of: str = "") -> None:
    close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.5)
    hint = (
        f" (did you mean {close[0]!r}?)"
        if close
        else f" (valid: {', '.join(valid[:12])}{', ...' if len(valid) > 12 else ''})"
    )
    raise InputError(f"unknown config key {_short(key)}{of}{hint}", path=source)
