"""Typed configuration: every preset loads, unknown keys and wrong types are one clear line (exit 2 via the CLI),
the decode section defaults to the predictor's historical settings, defaults agree with the model modules."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gnn_chemalgebra.cli import app
from gnn_chemalgebra.config import (
    ALIASES,
    DecodeConfig,
    decode_settings,
    load_config,
    load_typed_config,
    parse_config,
    schema_keys,
)
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit
CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_preset_loads(path: Path) -> None:
    cfg = load_typed_config(path)
    raw = yaml.safe_load(path.read_text())
    assert cfg.model_name == raw["model"]["name"]
    assert cfg.run_dir == raw["run_dir"]
    # what the preset writes is what the typed config holds
    for section in ("data", "train", "decode"):
        for k, v in (raw.get(section) or {}).items():
            key = ALIASES.get(f"{section}.{k}", f"{section}.{k}").split(".")[1]
            assert getattr(getattr(cfg, section), key) == v, (section, k)


def test_typo_in_override_names_the_closest_key() -> None:
    with pytest.raises(InputError) as err:
        load_config("configs/gnn_cpu.yaml", ["train.max_stepz=150"])
    msg = str(err.value)
    assert msg.startswith("--set train.max_stepz=150: ") and "'train.max_stepz'" in msg
    assert "did you mean 'train.max_steps'?" in msg and "\n" not in msg


def test_wrong_type_names_key_and_expected_type() -> None:
    with pytest.raises(InputError, match=r"train\.lr must be a number, got 'abc'"):
        load_config("configs/gnn_cpu.yaml", ["train.lr=abc"])
    with pytest.raises(InputError, match=r"train\.epochs must be an integer, got 2\.5"):
        load_config("configs/gnn_cpu.yaml", ["train.epochs=2.5"])
    with pytest.raises(InputError, match=r"train\.amp must be true or false"):
        load_config("configs/gnn_cpu.yaml", ["train.amp=maybe"])
    with pytest.raises(InputError, match=r"model\.conv must be one of 'gine', 'gatv2', got 'gin'"):
        load_config("configs/gnn_cpu.yaml", ["model.conv=gin"])
    with pytest.raises(InputError, match=r"train\.batch_size must be >= 1"):
        load_config("configs/gnn_cpu.yaml", ["train.batch_size=0"])
    for betas in ("[0.9]", "[0.9, 1.0]", "[0.9, 0.99, 0.999]"):  # Adam needs two, each in [0, 1)
        with pytest.raises(InputError, match=r"train\.betas must be two numbers in \[0, 1\)"):
            load_config("configs/gnn_cpu.yaml", [f"train.betas={betas}"])
    assert load_config("configs/gnn_cpu.yaml", ["train.betas=[0.8, 0.99]"])["train"]["betas"] == [0.8, 0.99]


def test_unknown_key_in_yaml_is_reported_against_the_file(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("model:\n  name: gnn\n  hiden: 64\n")
    with pytest.raises(InputError) as err:
        load_config(p)
    assert str(err.value) == f"{p}: unknown config key 'model.hiden' of model.name 'gnn' (did you mean 'model.hidden'?)"
    p.write_text("trian:\n  lr: 0.1\n")
    with pytest.raises(InputError, match="did you mean 'train'"):
        load_config(p)
    # model keys belong to the model named: a Transformer key is unknown to the GNN
    with pytest.raises(InputError, match="model.d_model"):
        parse_config({"model": {"name": "gnn", "d_model": 64}})


def test_defaults_filled_per_model_and_numbers_from_yaml_strings() -> None:
    gnn = parse_config({})
    assert gnn.model_name == "gnn" and gnn.run_dir == "runs/gnn" and gnn.train.lr_schedule == "constant"
    tf = parse_config({"model": {"name": "transformer"}, "train": {"lr": "1e-3"}})  # PyYAML: 1e-3 is a string
    assert tf.train.lr == 1e-3 and tf.train.lr_schedule == "noam" and tf.train.optimizer == "adam"
    ed = parse_config({}, model_name="edits")
    assert ed.model_name == "edits" and ed.train.monitor == "exact_edits"
    old = parse_config({"model": {"name": "transformer"}, "data": {"limit_train": 5}, "train": {"schedule": "noam"}})
    assert old.data.limit == 5 and old.train.lr_schedule == "noam"  # older names still read


def test_decode_defaults_match_the_predictor_and_old_checkpoints() -> None:
    d = decode_settings(None)
    assert d == DecodeConfig()
    assert (d.balance_beam, d.edit_role_sets, d.edit_beam, d.evidence_floor) == (4, 2, 5, -20.0)
    assert d.role_evidence and d.valence_check
    # a checkpoint config from before the decode section, or with only the Transformer's keys
    assert decode_settings({"model": {"name": "gnn"}}) == DecodeConfig()
    assert decode_settings({"decode": {"beam": 3, "gone_key": 1}}).beam == 3
    saved = load_config("configs/gnn_tiny.yaml", ["decode.balance_beam=6"])
    assert decode_settings(saved).balance_beam == 6


def test_model_defaults_agree_with_the_model_modules() -> None:
    from gnn_chemalgebra.config import EditModelConfig, GNNModelConfig, TransformerModelConfig
    from gnn_chemalgebra.models import edit_model, gnn, transformer

    g = dataclasses.asdict(GNNModelConfig())
    assert {k: g[k] for k in gnn.DEFAULTS} == gnn.DEFAULTS
    e = dataclasses.asdict(EditModelConfig())
    assert {k: e[k] for k in edit_model.DEFAULT_HPARAMS} == edit_model.DEFAULT_HPARAMS
    import inspect

    sig = inspect.signature(transformer.Seq2SeqTransformer.__init__)
    t = dataclasses.asdict(TransformerModelConfig())
    assert {k: t[k] for k in transformer.MODEL_KEYS} == {k: sig.parameters[k].default for k in transformer.MODEL_KEYS}


def test_saved_config_round_trips() -> None:
    cfg = load_config("configs/transformer_tiny.yaml")
    assert parse_config(cfg).to_dict() == cfg


# --------------------------------------------------------------------------- through the command line
def _train(*args: str):
    return CliRunner().invoke(app, ["train", "--config", "configs/gnn_tiny.yaml", "--print-config", *args])


def test_set_typos_and_bad_types_are_one_line_errors() -> None:
    """A misspelt key names the likely one, a wrong type names the key and the type; a good --set is taken."""
    typo = _train("--set", "train.max_stepz=150")
    assert typo.exit_code == 2
    assert typo.output.strip().splitlines() == [
        "gnnca: error: --set train.max_stepz=150: unknown config key 'train.max_stepz' "
        "(did you mean 'train.max_steps'?)"
    ]
    bad = _train("--set", "train.lr=abc")
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert bad.output.strip() == "gnnca: error: --set train.lr=abc: train.lr must be a number, got 'abc'"
    for value in ("[1, 2]", "{a: 1}"):  # not a name at all: the same one line, no TypeError
        res = _train("--set", f"model.name={value}")
        assert res.exit_code == 2 and res.output.startswith("gnnca: error: --set model.name=")
        assert "must be one of" in res.output and "Traceback" not in res.output
    ok = _train("--set", "train.max_steps=150")
    assert ok.exit_code == 0, ok.output
    assert yaml.safe_load(ok.stdout)["train"]["max_steps"] == 150


KEYS = st.one_of(
    st.sampled_from(schema_keys("gnn") + schema_keys("transformer") + schema_keys("edits")),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.", min_size=1, max_size=20),
)
VALUES = st.one_of(
    st.integers(-5, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["true", "false", "null", "", "[1, 2]", "{a: 1}", "gine", "transformer", "edits", "[", "'x"]),
    st.text(max_size=12),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=3))
def test_fuzz_overrides_only_ever_give_one_line(pairs: list[tuple[str, str]]) -> None:
    args: list[str] = []
    for k, v in pairs:
        args += ["--set", f"{k}={v}"]
    res = _train(*args)
    assert res.exit_code in (0, 2), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    if res.exit_code == 2:
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gnnca: error: "), res.output
    else:
        load = parse_config(yaml.safe_load(res.stdout))  # what it printed is a valid config
        assert load.model_name in ("gnn", "naive", "edits", "transformer")


def test_unreadable_config_files_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("train:\n  lr: [1,\n  epochs: 3\n")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    cases = [
        (bad, "invalid YAML"),
        (binary, "not a UTF-8"),
        (tmp_path / "nope.yaml", "not found"),
        (tmp_path, "folder"),
    ]
    for path, reason in cases:
        res = CliRunner().invoke(app, ["train", "--config", str(path)])
        lines = res.output.strip().splitlines()
        assert res.exit_code == 2 and len(lines) == 1, res.output
        assert lines[0].startswith(f"gnnca: error: {path}") and reason in lines[0]
    res = CliRunner().invoke(app, ["train", "--config", str(bad)])  # located, without the parser's stream name
    assert f"{bad}:4: invalid YAML (column 1): while parsing a flow sequence opened at line 2" in res.output
    assert "<unicode string>" not in res.output
    control = tmp_path / "control.yaml"
    control.write_text("train:\n  lr: 1\n  x: \x07\n")
    res = CliRunner().invoke(app, ["train", "--config", str(control)])
    assert res.exit_code == 2 and f"{control}:3: invalid YAML: a control character" in res.output
