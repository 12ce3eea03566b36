"""The bag GNN's settings as typed parts: encoder, bag mixer, set encoder and heads (plus the sizes the featurizer
and the by-product vocabulary fix), each a dataclass whose fields are the options.

A checkpoint stores :meth:`BagGNNConfig.to_dict` (plain data, JSON) as ``meta.model_config``;
:meth:`BagGNNConfig.from_meta` reads it back, or maps the flat ``meta.hparams`` dict that checkpoints written before
the typed parts hold (:meth:`BagGNNConfig.from_hparams`). Either way every key is checked: an unknown one is an
:class:`~gnn_chemalgebra.errors.InputError` naming it and the closest valid one, a value of the wrong type or out
of range one line naming the key (the rules of the YAML config, :mod:`gnn_chemalgebra.config`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from ..config import GNNModelConfig, _coerce, _mapping, _opt, _unknown
from ..data.featurize import N_COEF_CLASSES, N_EXTENT_FEATURES
from ..errors import InputError

MODEL_NAMES = ("gnn", "naive")


def _required(lo: int) -> Any:
    """A field without default (its value must be given), with the lower bound the checks apply."""
    return field(metadata={"lo": lo})


@dataclass
class EncoderConfig:
    """Atoms -> molecule embeddings: message passing inside each molecule, then what is added per molecule."""

    conv: str = _opt("gine", choices=("gine", "gatv2"))
    layers: int = _opt(3, lo=1)
    mol_comp_features: bool = True  # composition (log counts, elements shared with other molecules)
    # Scale-free multiplicity features (rank, ties, minimum). False: every learned decision is blind to the
    # coefficient PATTERN too, so the Type-1 and Type-2 lines of one reaction (and a user's own amounts) read alike
    # and the coefficients act only through the exact Type-2 evidence.
    mult_features: bool = True
    # Composition evidence that a molecule is made from others / makes another (models/product_evidence.py).
    product_features: bool = False
    # Molecule identity: a learned vector per composition seen in enough training lines (keys in the
    # ``ident_keys`` buffer), added to every node of the molecule; zero-initialised, so a model fine-tuned from one
    # without it starts as that model. Not a setting: the trainer counts it from ``model.identity_min_count``.
    identity_vocab: int = _opt(0, lo=0)
    identity_dropout: float = _opt(0.1, lo=0.0, hi=1.0)  # training: share of molecules read as unknown
    # Formula models with identity rows: Morgan count bits of the structure the SMILES training lines wrote for
    # each identity composition (data/structures.py), through a zero-initialised linear map. 0 = off.
    structure_bits: int = _opt(0, lo=0)


@dataclass
class BagMixerConfig:
    """Attention across all atoms of a bag (``models/blocks.py`` ``BAG_MIXERS``)."""

    kind: str = _opt("transformer", choices=("transformer", "none"))
    layers: int = _opt(1, lo=0)


@dataclass
class SetEncoderConfig:
    """Over the pooled molecule embeddings of a bag (``models/blocks.py`` ``SET_ENCODERS``)."""

    kind: str = _opt("transformer", choices=("transformer", "deepsets"))
    layers: int = _opt(2, lo=0)


@dataclass
class HeadsConfig:
    """What is read off the embeddings: roles and by-products always, plus these."""

    extent: str = _opt("bayes", choices=("bayes", "learned"))  # Type-2 extent: exact rule or learned scorer
    leftover: str = _opt("elements", choices=("elements", "vocab"))  # per-element count head, or vocabulary only
    left_classes: int = _opt(6, lo=1)  # leftover count classes per element (the charge shifted by CHARGE_SHIFT)


@dataclass
class SizesConfig:
    """Sizes the featurizer and the by-product vocabulary fix; read from them, never set in a config."""

    x_dim: int = _required(lo=1)
    edge_dim: int = _required(lo=1)
    n_elements: int = _required(lo=1)
    comp_dim: int = _required(lo=1)
    n_mult: int = _required(lo=1)
    n_raw: int = _required(lo=1)
    n_roles: int = _required(lo=1)
    n_extra: int = _required(lo=0)  # by-product vocabulary size
    n_coef_classes: int = _required(lo=1)
    n_extent_features: int = _required(lo=1)
    h_index: int = _opt(0, lo=0)  # composition columns of H and of the net charge
    charge_index: int = _opt(1, lo=0)


@dataclass
class BagGNNConfig:
    """The whole network: shared width, then one typed part per stage (``models/gnn.py`` builds it)."""

    sizes: SizesConfig
    name: str = _opt("gnn", choices=MODEL_NAMES)  # naive: adds heads that see raw coefficients (the ablation)
    hidden: int = _opt(128, lo=1)  # width of every part
    attention_heads: int = _opt(4, lo=1)  # of the attention parts (and gatv2)
    dropout: float = _opt(0.1, lo=0.0, hi=1.0)
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    bag_mixer: BagMixerConfig = field(default_factory=BagMixerConfig)
    set_encoder: SetEncoderConfig = field(default_factory=SetEncoderConfig)
    heads: HeadsConfig = field(default_factory=HeadsConfig)

    @property
    def naive(self) -> bool:
        return self.name == "naive"

    def to_dict(self) -> dict[str, Any]:
        """Plain nested data (what a checkpoint stores as ``meta.model_config``)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str | None = None) -> BagGNNConfig:
        """A :meth:`to_dict` mapping back, every key and value checked; absent options take their defaults."""
        return _typed(cls, data, "", source)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], featurizer: Mapping[str, Any], n_extra: int) -> BagGNNConfig:
        """From a run config's ``model`` section (flat keys, :class:`~gnn_chemalgebra.config.GNNModelConfig`), the
        featurizer's settings and the by-product vocabulary size. Keys of that section that are not the network's
        (vocabulary, identity counting, the paired edit model) are skipped; an unknown key is refused."""
        nested: dict[str, Any] = {}
        for key, value in settings.items():
            if key in TRAINER_KEYS:
                continue
            if key not in SETTING_KEYS:
                _unknown(f"model.{key}", [f"model.{k}" for k in (*SETTING_KEYS, *sorted(TRAINER_KEYS))], None)
            _put(nested, FLAT_KEYS[key], value)
        nested["sizes"] = {
            "x_dim": featurizer["x_dim"],
            "edge_dim": featurizer["edge_dim"],
            "n_elements": featurizer["n_elements"],
            "comp_dim": featurizer["comp_dim"],
            "n_mult": featurizer["n_mult_features"],
            "n_raw": featurizer["n_raw_coef"],
            "n_roles": len(featurizer["role_nu"]),
            "n_extra": n_extra,
            "n_coef_classes": N_COEF_CLASSES,
            "n_extent_features": N_EXTENT_FEATURES,
            "h_index": featurizer.get("h_index", 0),
            "charge_index": featurizer.get("charge_index", 1),
        }
        return cls.from_dict(nested)

    @classmethod
    def from_hparams(cls, hp: Mapping[str, Any], source: str | None = None) -> BagGNNConfig:
        """The flat ``hparams`` dict of checkpoints written before the typed parts. A key such a dict may lack
        takes the value the network read in its absence then (:data:`LEGACY_ABSENT`), so old checkpoints rebuild
        the very network they were trained as; any other missing key, or an unknown one, is refused."""
        hp = _mapping(hp, "meta.hparams", source)
        for key in hp:
            if key not in FLAT_KEYS:
                _unknown(f"meta.hparams.{key}", [f"meta.hparams.{k}" for k in FLAT_KEYS], source)
        nested: dict[str, Any] = {}
        for key, path in FLAT_KEYS.items():
            if key in hp:
                _put(nested, path, hp[key])
            elif key in LEGACY_ABSENT:
                _put(nested, path, LEGACY_ABSENT[key])
            else:
                raise InputError(f"checkpoint hyper-parameters (meta.hparams) lack {key!r}", path=source)
        return cls.from_dict(nested, source)

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], source: str | None = None) -> BagGNNConfig:
        """A checkpoint's ``meta``: its ``model_config``, or the flat ``hparams`` of an older checkpoint."""
        if "model_config" in meta:
            return cls.from_dict(meta["model_config"], source)
        if "hparams" in meta:
            return cls.from_hparams(meta["hparams"], source)
        raise InputError("not a bag-GNN checkpoint: its meta has neither model_config nor hparams", path=source)

    def to_hparams(self) -> dict[str, Any]:
        """The flat dict of the older checkpoint format (the inverse of :meth:`from_hparams`)."""
        plain = self.to_dict()
        return {key: (plain[part][name] if part else plain[name]) for key, (part, name) in FLAT_KEYS.items()}


# Flat key of the older format and of a run config's model section -> (part, field); "" = the top level.
FLAT_KEYS: dict[str, tuple[str, str]] = {
    "name": ("", "name"),
    "hidden": ("", "hidden"),
    "heads": ("", "attention_heads"),
    "dropout": ("", "dropout"),
    "conv": ("encoder", "conv"),
    "layers": ("encoder", "layers"),
    "mol_comp_features": ("encoder", "mol_comp_features"),
    "mult_features": ("encoder", "mult_features"),
    "product_features": ("encoder", "product_features"),
    "identity_vocab": ("encoder", "identity_vocab"),
    "identity_dropout": ("encoder", "identity_dropout"),
    "structure_bits": ("encoder", "structure_bits"),
    "bag_mixer": ("bag_mixer", "kind"),
    "bag_layers": ("bag_mixer", "layers"),
    "set_encoder": ("set_encoder", "kind"),
    "set_layers": ("set_encoder", "layers"),
    "extent": ("heads", "extent"),
    "leftover": ("heads", "leftover"),
    "left_classes": ("heads", "left_classes"),
    **{f.name: ("sizes", f.name) for f in dataclasses.fields(SizesConfig)},
}
# What the network read when an older flat dict lacked the key (its ``hp.get`` fallbacks).
LEGACY_ABSENT: dict[str, Any] = {
    "extent": "bayes",
    "leftover": "vocab",
    "left_classes": 6,
    "mol_comp_features": False,
    "mult_features": True,
    "product_features": False,
    "identity_vocab": 0,
    "identity_dropout": 0.0,
    "structure_bits": 0,
    "h_index": 0,
    "charge_index": 1,
}
# Flat keys a run config's model section sets (sizes come from the featurizer, identity_vocab from the trainer).
SETTING_KEYS: tuple[str, ...] = tuple(k for k, (p, _) in FLAT_KEYS.items() if p != "sizes" and k != "identity_vocab")
# Keys of that section that configure the trainer, not the network.
TRAINER_KEYS: frozenset[str] = frozenset(f.name for f in dataclasses.fields(GNNModelConfig)) - set(FLAT_KEYS)


def setting_defaults() -> dict[str, Any]:
    """The default of every :data:`SETTING_KEYS` entry, flat (what the YAML schema's defaults must agree with)."""
    parts = {"encoder": EncoderConfig(), "bag_mixer": BagMixerConfig(), "set_encoder": SetEncoderConfig(),
             "heads": HeadsConfig()}  # fmt: skip
    top = {f.name: f.default for f in dataclasses.fields(BagGNNConfig) if f.name not in parts and f.name != "sizes"}
    out = {}
    for key in SETTING_KEYS:
        part, name = FLAT_KEYS[key]
        out[key] = getattr(parts[part], name) if part else top[name]
    return out


def _put(nested: dict[str, Any], path: tuple[str, str], value: Any) -> None:
    part, name = path
    (nested.setdefault(part, {}) if part else nested)[name] = value


def _typed(cls: type, values: Any, prefix: str, source: str | None) -> Any:
    """``cls`` from a mapping: unknown keys refused with the closest valid one, values coerced and range-checked
    (:func:`gnn_chemalgebra.config._coerce`), nested dataclasses recursively; a field without default must be there."""
    values = _mapping(values, prefix.rstrip(".") or "model config", source)
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in values:
        if key not in fields:
            _unknown(prefix + key, [prefix + n for n in fields], source)
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in values:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise InputError(f"model config lacks {prefix + name}", path=source)
            continue
        if dataclasses.is_dataclass(hints[name]):
            kwargs[name] = _typed(hints[name], values[name], f"{prefix}{name}.", source)
        else:
            meta = f.metadata or {}
            kwargs[name] = _coerce(prefix + name, values[name], hints[name], meta.get("choices", ()), meta.get("lo"),
                                   meta.get("hi"), source)  # fmt: skip
    return cls(**kwargs)
