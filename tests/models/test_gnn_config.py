"""The bag GNN's typed config: every checkpoint's flat hyper-parameters map to it (and back) without changing the
network, it is saved as plain data and read back, and an unknown key, a wrong value or a missing size is one line
naming the key (with the closest valid one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gnn_chemalgebra.checkpoint import load_checkpoint, save_checkpoint
from gnn_chemalgebra.chem.bag import parse_bag
from gnn_chemalgebra.cli import app
from gnn_chemalgebra.data.dataset import ExtraVocab, collate_examples, example_from_terms, vocab_compositions
from gnn_chemalgebra.data.featurize import Featurizer
from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.models.gnn import DEFAULTS, BagGNNConfig, build_model
from gnn_chemalgebra.models.gnn_config import FLAT_KEYS, LEGACY_ABSENT, SETTING_KEYS

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SAVED = sorted((REPO / "gnn_chemalgebra" / "checkpoints").glob("gnn*.pt")) + sorted(REPO.glob("results/*/gnn*.pt"))
LINES = ["{2}C2H4O2.{2}C2H6O.{1}H2O4S", "{1}C7H5ClO.{1}C2H6O.{1}C6H15N"]


def _tiny(**settings) -> tuple[BagGNNConfig, Featurizer, ExtraVocab]:
    feat = Featurizer("formula")
    vocab = ExtraVocab(["H2O", "HCl"])
    base = {"hidden": 16, "layers": 1, "heads": 2, "bag_layers": 1, "set_layers": 1}
    return BagGNNConfig.from_settings({**base, **settings}, feat.settings(), len(vocab)), feat, vocab


def _outputs(model: torch.nn.Module, feat: Featurizer) -> dict[str, torch.Tensor]:
    exs = [example_from_terms(parse_bag(line)) for line in LINES]
    with torch.no_grad():
        return model.eval()(collate_examples(exs, feat))


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.name)
def test_every_saved_flat_dict_maps_to_the_typed_config_and_back(path: Path) -> None:
    meta = load_checkpoint(path)["meta"]
    if "hparams" not in meta:  # exported since the typed config: its dict, and the flat dict made from it, read back
        cfg = BagGNNConfig.from_meta(meta)
        assert BagGNNConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
        assert BagGNNConfig.from_hparams(cfg.to_hparams(), str(path)) == cfg
        return
    hp = meta["hparams"]
    cfg = BagGNNConfig.from_hparams(hp, str(path))
    assert cfg.to_hparams() == {**{k: LEGACY_ABSENT[k] for k in FLAT_KEYS if k not in hp}, **hp}
    assert BagGNNConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    assert BagGNNConfig.from_meta({"model_config": cfg.to_dict()}) == BagGNNConfig.from_meta({"hparams": hp}) == cfg
    assert (cfg.hidden, cfg.attention_heads, cfg.bag_mixer.kind) == (hp["hidden"], hp["heads"], hp["bag_mixer"])


def test_a_flat_dict_without_the_later_keys_builds_the_network_those_checkpoints_had() -> None:
    cfg, _, _ = _tiny()
    old = {k: v for k, v in cfg.to_hparams().items() if k not in LEGACY_ABSENT}
    legacy = BagGNNConfig.from_hparams(old)
    assert legacy.heads.leftover == "vocab" and not legacy.encoder.mol_comp_features
    assert legacy.encoder.identity_dropout == 0.0 and legacy.sizes.h_index == 0
    model = build_model(legacy)
    assert model.comp_proj is None and "left_logits" not in _outputs(model, Featurizer("formula"))


def test_saved_config_rebuilds_the_same_network(tmp_path: Path) -> None:
    cfg, feat, vocab = _tiny(product_features=True, extent="learned")
    torch.manual_seed(0)
    model = build_model(cfg, vocab_compositions(vocab, feat))
    save_checkpoint(tmp_path / "m.pt", {"model": model.state_dict(), "meta": {"model_config": cfg.to_dict()}})
    ck = load_checkpoint(tmp_path / "m.pt")
    again = build_model(BagGNNConfig.from_meta(ck["meta"]), vocab_compositions(vocab, feat))
    again.load_state_dict(ck["model"])
    assert again.config == cfg and again.config.heads.extent == "learned"
    a, b = _outputs(model, feat), _outputs(again, feat)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_settings_defaults_agree_with_the_parts() -> None:
    cfg, _, _ = _tiny()
    assert set(DEFAULTS) == set(SETTING_KEYS)
    assert (cfg.encoder.conv, cfg.set_encoder.kind, cfg.heads.leftover) == (DEFAULTS["conv"], "transformer", "elements")
    assert cfg.encoder.identity_vocab == 0  # counted by the trainer, never a setting
    # the run config's own keys (vocabulary, identity counting, paired edit model) are not the network's: skipped
    skipped, _, _ = _tiny(vocab_size=64, identity_min_count=2, edit_checkpoint=None)
    assert skipped == cfg


_D, _H = BagGNNConfig.from_dict, BagGNNConfig.from_hparams


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda c: _D({**c, "encoder": {"layer": 2}}), "'encoder.layer' (did you mean 'encoder.layers'?)"),
        (lambda c: _D({**c, "hiden": 8}), "'hiden' (did you mean 'hidden'?)"),
        (lambda c: _D({**c, "bag_mixer": {"kind": "transformr"}}), "(did you mean 'transformer'?)"),
        (lambda c: _D({**c, "hidden": "wide"}), "hidden must be an integer"),
        (lambda c: _D({**c, "dropout": 1.5}), "dropout must be <= 1.0"),
        (lambda c: _D({k: v for k, v in c.items() if k != "sizes"}), "lacks sizes"),
        (lambda c: _D({**c, "heads": 4}), "heads must be a section"),
        (lambda c: _H({**_flat(c), "hiden": 8}), "'meta.hparams.hiden' (did you mean 'meta.hparams.hidden'?)"),
        (lambda c: _H({k: v for k, v in _flat(c).items() if k != "x_dim"}), "lack 'x_dim'"),
        (lambda c: BagGNNConfig.from_meta({"vtype": 1}), "neither model_config nor hparams"),
    ],
)
def test_bad_keys_and_values_are_one_line_naming_the_key(build, message: str) -> None:
    cfg, _, _ = _tiny()
    with pytest.raises(InputError) as err:
        build(cfg.to_dict())
    assert message in str(err.value) and "\n" not in str(err.value)


def test_unknown_setting_names_the_closest_model_key() -> None:
    with pytest.raises(InputError, match=r"'model.set_layer' \(did you mean 'model.set_layers'\?\)"):
        _tiny(set_layer=2)


def _flat(nested: dict) -> dict:
    return BagGNNConfig.from_dict(nested).to_hparams()


def test_predict_refuses_a_checkpoint_with_an_unknown_key_in_one_line(tmp_path: Path) -> None:
    cfg, feat, vocab = _tiny()
    model = build_model(cfg, vocab_compositions(vocab, feat))
    bad = {**cfg.to_dict(), "encoder": {**cfg.to_dict()["encoder"], "conv_kind": "gine"}}
    featurizer = {**feat.settings(), "vocab": vocab.items}
    state = {"model": model.state_dict(), "featurizer": featurizer, "meta": {"model_config": bad, "vtype": 1}}
    save_checkpoint(tmp_path / "bad.pt", state)
    (tmp_path / "in.txt").write_text(LINES[0] + "\n")
    res = CliRunner().invoke(app, ["predict", str(tmp_path / "in.txt"), "--checkpoint", str(tmp_path / "bad.pt")])
    assert res.exit_code == 2, res.output
    assert "unknown config key 'encoder.conv_kind'" in res.output and "Traceback" not in res.output
