"""The streaming predict path: the bounded line reader, one outcome per input line in order, and the CLI's
refusals (one line, exit 2), with property tests over random input."""

from __future__ import annotations

import io
import json
import os
import select
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gnn_chemalgebra.errors import InputError
from gnn_chemalgebra.inference.options import PredictOptions
from gnn_chemalgebra.inference.pipeline import Models, Pipeline
from gnn_chemalgebra.inference.plan import resolve
from gnn_chemalgebra.inference.predict_sets import RunTrust
from gnn_chemalgebra.inference.prediction import Prediction
from gnn_chemalgebra.inference.source import LineSource
from gnn_chemalgebra.inference.stream import LineStream, StreamSpec
from gnn_chemalgebra.inference.trust_stage import TrustStage

BUNDLED = Path(__file__).resolve().parents[2] / "gnn_chemalgebra" / "checkpoints"


def _lines(data: bytes, max_chars: int = 1000) -> list:
    return list(LineSource(io.BytesIO(data), "in.txt", max_chars))


class EchoPredictor:
    """A stand-in network: writes each source back, so the stream's bookkeeping is what is tested."""

    source = type1 = None  # built in memory: no sidecars, no Type-1 model

    def __init__(self, repr: str = "smiles") -> None:
        self.repr, self.vtype, self.batches = repr, 1, []
        self.source = None  # built in memory: no checkpoint, no sidecars

    def predict(self, examples, batch_size=256, beam=1):  # noqa: ANN001, ANN201
        self.batches.append(len(examples))
        return [Prediction.of_line("|".join(t.mol for t in ex.terms)) for ex in examples]


# ----------------------------------------------------------------------------------------------------- reader
@pytest.mark.unit
def test_reader_numbers_lines_and_strips_bom_and_crlf() -> None:
    got = _lines(b"\xef\xbb\xbfCCO\r\n\nCC\n")
    assert [(r.number, r.text, r.error) for r in got] == [(1, "CCO", None), (2, "", None), (3, "CC", None)]


@pytest.mark.unit
def test_reader_refuses_an_overlong_line_without_losing_the_next() -> None:
    got = _lines(b"C" * 50_000 + b"\nCCO\n", max_chars=100)
    assert got[0].error is not None and "over the limit of 100" in got[0].error.reason and got[0].number == 1
    assert (got[1].number, got[1].text) == (2, "CCO")


@pytest.mark.unit
def test_reader_locates_a_line_that_is_not_utf8() -> None:
    got = _lines(b"CCO\n\xff\xfeC\nCC\n")
    assert got[1].error is not None and str(got[1].error).startswith("in.txt:2: not UTF-8")
    assert [r.text for r in (got[0], got[2])] == ["CCO", "CC"]


@pytest.mark.unit
def test_reader_refuses_a_binary_file_in_one_error() -> None:
    with pytest.raises(InputError, match="binary file"):
        _lines(b"CCO\n\x00\x01\x02garbage")


@pytest.mark.unit
@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.binary(max_size=3000), st.text(max_size=300).map(lambda t: t.encode("utf-8"))),  # junk; UTF-8 text
    st.integers(min_value=1, max_value=64),
)
@example(b"ab\r\nabc\n\xc3\xa9\n\xffz", 2)  # at the limit, one over, 2 bytes in 1 character, not UTF-8
@example("\u00e9\u00e9\n\u0421\u0421\u0421\n".encode(), 2)  # 2 characters in 4 bytes kept, 3 in 6 refused
def test_reader_never_fails_but_on_binary_input(data: bytes, max_chars: int) -> None:
    """Random bytes: numbered lines 1..n, each under the limit or refused with a reason; a NUL byte in the first
    chunk is the only whole-input error."""
    try:
        got = _lines(data, max_chars)
    except InputError as err:
        assert b"\x00" in data[:65536] and "binary" in err.reason
        return
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    raws = body.split(b"\n")[: body.count(b"\n") + (0 if body == b"" or body.endswith(b"\n") else 1)]
    assert [r.number for r in got] == list(range(1, len(raws) + 1))
    for i, (r, raw) in enumerate(zip(got, raws, strict=True)):  # read as UTF-8 (a CRLF's CR dropped) or refused
        if i == len(raws) - 1 and not body.endswith(b"\n") and len(raw) > 4 * max_chars + 4:
            assert r.error is not None and "over the limit" in r.error.reason and r.text == ""  # skipped unread
            continue
        raw = raw[:-1] if raw.endswith(b"\r") else raw
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            assert r.error is not None and "not UTF-8" in r.error.reason and r.text == ""
            continue
        if len(text) > max_chars:
            assert r.error is not None and "over the limit" in r.error.reason and r.text == ""
        else:
            assert r.error is None and r.text == text


# ----------------------------------------------------------------------------------------------------- stream
def stages(pred: object, **spec: object) -> tuple[Pipeline, LineStream]:
    """The predict path over a stand-in model: a stream of ``spec`` (:class:`StreamSpec`) and its pipeline."""
    plan = resolve(PredictOptions(input="-"))  # plain text: no trust stage
    trust = TrustStage(plan.demands, RunTrust(plan.opts))
    pipeline = Pipeline(plan, Models.of_loaded(pred, plan), trust)  # type: ignore[arg-type]
    return pipeline, LineStream(StreamSpec(source_name="in.txt", **spec))  # type: ignore[arg-type]


def _run(lines: list[str], **kw) -> tuple[list, EchoPredictor, LineStream]:
    pred = EchoPredictor(kw.pop("model_repr", "smiles"))
    pipeline, stream = stages(pred, **kw)
    raw = LineSource(io.BytesIO("\n".join(lines).encode() + b"\n"), "in.txt", 10_000)
    out = [o for group in pipeline.outcomes(stream, raw) for o in group]
    return out, pred, stream


@pytest.mark.unit
def test_every_line_gives_one_outcome_in_order() -> None:
    out, _, stream = _run(["CCO.CC(=O)O", "", "# note", "C1CC", "CCN"], skip_invalid=True, batch_size=2)
    assert [o.line for o in out] == [1, 2, 3, 4, 5]
    assert [o.text() for o in out] == ["CCO|CC(=O)O", "", "", "", "CCN"]
    assert out[1].blank and out[2].blank and out[3].error.startswith("in.txt:4: neither SMILES")
    assert stream.counts.predicted == 2 and stream.counts.blank == 2 and stream.counts.refused_total == 1
    assert out[3].json() == {"line": 4, "prediction": "", "error": out[3].error}


@pytest.mark.unit
def test_a_refused_line_stops_the_run_after_the_lines_before_it() -> None:
    pipeline, stream = stages(EchoPredictor())
    raw = LineSource(io.BytesIO(b"CCO\nCC\nC1CC\nCCN\n"), "in.txt", 1000)
    given_out = []
    with pytest.raises(InputError, match="in.txt:3: neither SMILES"):
        for group in pipeline.outcomes(stream, raw):
            given_out += group
    assert [o.text() for o in given_out] == ["CCO", "CC"]


@pytest.mark.unit
def test_the_checkpoint_fixes_the_representation() -> None:
    out, _, _ = _run(
        ["CCO.CC(=O)O", "{1}CH4.{2}O2"],
        model_repr="formula",
        fixed_repr="formula",
        fixed_by="the checkpoint",
        skip_invalid=True,
    )
    assert "reads only as SMILES, but the checkpoint reads formulas" in out[0].error
    assert out[1].text() == "CH4|O2"


@pytest.mark.unit
def test_ambiguous_leading_lines_wait_for_the_deciding_line() -> None:
    out, pred, _ = _run(["CO", "{1}CH4.{2}O2"], model_repr="formula", skip_invalid=True)
    assert [o.text() for o in out] == ["CO", "CH4|O2"] and pred.batches == [2]


_TERMS = st.sampled_from(["CCO", "CC(=O)O", "O", "[Na+]", "c1ccccc1", "CH4", "O2", "C1CC", "xx", "{0}C", "{3}N", "Q"])
_LINE = st.one_of(
    st.lists(_TERMS, min_size=1, max_size=5).map(".".join),
    st.sampled_from(["", "   ", "# c", "CC>>", ">", "CC>O>CC>C", "{99999999999999999999}CCO"]),
    st.text(max_size=20).filter(lambda s: not set(s) & {"\n", "\r", "\x00"}),  # NUL: a binary file
)


@pytest.mark.unit
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINE, max_size=12), st.integers(min_value=1, max_value=4))
def test_random_lines_stay_aligned_and_never_raise_with_skip_invalid(lines: list[str], batch: int) -> None:
    out, _, stream = _run(lines, skip_invalid=True, batch_size=batch)
    n = len("\n".join(lines).encode().split(b"\n"))  # the lines the reader sees
    assert [o.line for o in out] == list(range(1, n + 1))
    assert all((o.prediction is not None) + (o.error is not None) + o.blank == 1 for o in out)
    assert stream.counts.predicted + stream.counts.blank + stream.counts.refused_total == n


# ----------------------------------------------------------------------------------------------------- the CLI
def _cli(args: list[str], stdin: str | bytes = "") -> object:
    from gnn_chemalgebra.cli import app

    return CliRunner().invoke(app, ["predict", *args], input=stdin)


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "stdin", "says"),
    [
        (["-", "--device", "foo"], "CCO\n", "unknown device 'foo'"),
        (["-", "--beam", "0"], "CCO\n", "--beam must be at least 1"),
        (["-", "--checkpoint", "missing.pt"], "CCO\n", "missing.pt: checkpoint not found"),
        (["-", "--draw", "no/such/folder/x.png"], "CCO\n", "folder for --draw does not exist"),
        (["-"], "C" * 150 + "(\n", "(151 characters)"),  # a long term is cut in the message
        (["-"], "C" * 2000 + "\n", "over the limit of 400 (raise it with --max-atoms)"),
        (["-"], ".".join("C" * n + "O" for n in range(1, 201)) + "\n", "(raise it with --max-chars)"),
        (["-", "--max-chars", "0"], ".".join("C" * n + "O" for n in range(1, 201)) + "\n", "--max-molecules"),
        (["-", "--max-atoms", "-1"], "CCO\n", "--max-atoms must be a whole number >= 0"),
        (["-"], "{74258694575331}CCO\n", "over the limit of 1,000 (raise it with --max-coef)"),
    ],
)
def test_bad_options_and_inputs_are_one_line_exit_2(args: list[str], stdin: str, says: str) -> None:
    res = _cli(args, stdin)
    assert res.exit_code == 2, res.output
    assert says in res.stderr and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output


@pytest.mark.integration
def test_cuda_missing_is_said_in_one_line() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    res = _cli(["-", "--device", "cuda"], "CCO\n")
    assert res.exit_code == 2 and "CUDA is not available" in res.stderr


@pytest.mark.integration
def test_binary_file_and_folder_are_one_line_exit_2(tmp_path: Path) -> None:
    binary = tmp_path / "x.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    for target, says in ((binary, "binary file"), (tmp_path, "is a folder")):
        res = _cli([str(target)])
        assert res.exit_code == 2 and says in res.stderr and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.integration
def test_blank_line_gives_an_empty_output_line_and_all_refused_exits_2(tmp_path: Path) -> None:
    src = tmp_path / "in.smi"
    src.write_text("CC(=O)Cl.NCc1ccccc1\n\nCCO.CC(=O)O\n")
    res = _cli([str(src), "--json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3] and rows[1] == {"line": 2, "prediction": "", "blank": True}
    res = _cli(["-", "--skip-invalid"], "C1CC\nxx\n")
    assert res.exit_code == 2 and res.stdout == "\n\n" and "no line could be predicted" in res.stderr


@pytest.mark.integration
def test_a_formula_checkpoint_refuses_smiles_instead_of_converting() -> None:
    res = _cli(["-", "--checkpoint", str(BUNDLED / "gnn_default.pt")], "CCO.CC(=O)O\n")
    assert res.exit_code == 2 and "the checkpoint reads formulas" in res.stderr


@pytest.mark.integration
def test_the_first_answer_leaves_before_the_second_line_is_sent() -> None:
    """Over a real pipe: line 1 is answered while the writer still holds line 2 back."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gnn_chemalgebra.cli", "predict", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(b"CC(=O)Cl.NCc1ccccc1\n")
        proc.stdin.flush()
        readable, _, _ = select.select([proc.stdout], [], [], 120)
        assert readable, "no answer to the first line while the second was held back"
        first = proc.stdout.readline().decode()
        assert "CC(=O)NCc1ccccc1" in first
        proc.stdin.write(b"CCO.CC(=O)O\n")
        proc.stdin.close()
        rest = proc.stdout.read().decode().splitlines()
        assert len(rest) == 1 and proc.wait(60) == 0
    finally:
        proc.kill()


@pytest.mark.unit
def test_written_files_follow_the_umask(tmp_path: Path) -> None:
    from gnn_chemalgebra.io import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "a.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644


@pytest.mark.unit
def test_long_terms_are_cut_in_messages() -> None:
    msg = str(InputError("bad", path="f", line=3, term="C" * 10_000_000))
    assert len(msg) < 200 and "10,000,000 characters" in msg


_BIG = st.one_of(
    st.sampled_from([1, 5, 40, 401, 2500]).map(lambda n: "C" * n),  # chains under and over --max-atoms
    st.integers(min_value=1, max_value=10**30).map(lambda k: f"{{{k}}}CCO"),  # huge coefficients
    st.lists(st.sampled_from(["CCO", "O", "CC(=O)Cl", "NCc1ccccc1", "[Na+]", "Cl"]), min_size=1, max_size=6).map(
        ".".join
    ),  # bags the model answers
    st.just(".".join(["CCO"] * 60)),  # over --max-molecules
    st.binary(max_size=30).map(lambda b: b.decode("latin-1")),  # junk
)


@pytest.mark.integration
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_BIG, min_size=1, max_size=4))
def test_the_cli_answers_every_random_line_in_place(lines: list[str]) -> None:
    """Random big molecules, huge coefficients, long bags and junk through the real bundled models: exit 0 or 2,
    never a traceback, and with --skip-invalid one JSON line per input line, in order."""
    text = "\n".join(line.replace("\n", " ").replace("\r", " ").replace("\x00", " ") for line in lines) + "\n"
    res = _cli(["-", "--skip-invalid", "--json"], text.encode("utf-8"))
    assert res.exit_code in (0, 2), res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    rows = [json.loads(x) for x in res.stdout.splitlines()]
    n = text.encode("utf-8").count(b"\n")
    assert [r["line"] for r in rows] == list(range(1, n + 1))
