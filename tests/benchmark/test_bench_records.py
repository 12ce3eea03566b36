"""The results format: keys, merging, validation, resume markers, prefix ceilings, and the tables made from
today's records (they must reproduce the committed tables byte for byte)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gnn_chemalgebra.benchmark.ceilings import ceiling_for
from gnn_chemalgebra.benchmark.errors import keep_missing_rows, records_error_table, replace_rows_from_records
from gnn_chemalgebra.benchmark.merge import merged_records, paper_records, with_normalised_em
from gnn_chemalgebra.benchmark.records import (
    LOCAL,
    load_records,
    merge_records,
    read_marker,
    record_key,
    update_records,
    write_marker,
)
from gnn_chemalgebra.benchmark.tables import (
    TRANSFORMER_README_MARKERS,
    benchmark_table,
    gnn_table,
    transformer_table,
    update_readme,
)
from gnn_chemalgebra.errors import InputError

pytestmark = pytest.mark.unit
RESULTS = Path(__file__).resolve().parents[2] / "results"


def _rec(model: str, setting: str = "test_in", **kw) -> dict:
    return {"model": model, "variant": "F_T1_x1", "setting": setting, "EM": 1.0, "n": 10, **kw}


def test_merge_replaces_in_place_and_keeps_other_training_data():
    old = [_rec("gnn"), _rec("gnn", "test_out"), _rec("copy_source")]
    new = [_rec("gnn", EM=2.0), _rec("gnn", training_data="local+extra", EM=3.0), _rec("transformer")]
    merged = merge_records(old, new)
    assert [r["model"] for r in merged] == ["gnn", "gnn", "copy_source", "gnn", "transformer"]
    assert merged[0]["EM"] == 2.0 and merged[3]["EM"] == 3.0
    assert record_key(_rec("gnn")) == record_key(_rec("gnn", training_data="local"))


def test_update_is_atomic_and_cumulative(tmp_path):
    path = tmp_path / "r" / "gnn.json"
    update_records(path, [_rec("gnn")])
    update_records(path, [_rec("gnn", "test_out")])
    assert [r["setting"] for r in load_records(path)] == ["test_in", "test_out"]
    assert not list(path.parent.glob("*.tmp*"))


def test_concurrent_updates_keep_every_record(tmp_path):
    """Two bench runs (one per core) that finish together must not drop each other's records."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "transformer.json"

    def add(i: int) -> None:
        for j in range(6):
            update_records(path, [_rec(f"m{i}", f"s{j}")])

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(add, range(6)))
    assert len(load_records(path)) == 36


@pytest.mark.parametrize(
    "text, reason",
    [("{", "not JSON"), ('{"records": 3}', "expected a list"), ('[{"model": "gnn"}]', "'variant'"), ("[1]", "object")],
)
def test_bad_results_file_is_one_located_error(tmp_path, text, reason):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError, match=reason) as err:
        load_records(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_marker_round_trip_drops_history(tmp_path):
    assert read_marker(tmp_path / "run") is None
    write_marker(tmp_path / "run", {"steps": 5, "history": [1, 2]})
    assert read_marker(tmp_path / "run") == {"steps": 5}


def test_ceiling_for_prefix_or_none():
    c = {"model": "bayes_ceiling", "EM": 87.0, "n": 100, "EM_first_n": {"20": 80.0}}
    assert ceiling_for(c, 100) == 87.0 and ceiling_for(c, None) == 87.0
    assert ceiling_for(c, 20) == 80.0
    assert ceiling_for(c, 30) is None and ceiling_for(None, 20) is None


def test_paper_numbers_cover_every_cell():
    cells = {(r["variant"], r["setting"]) for r in paper_records()}
    assert len(cells) == 24 and all(r["mol_JAC"] < r["mol_F1"] for r in paper_records())


def test_tables_reproduce_the_committed_ones():
    """The tables are a function of the records: regenerating them from results/*.json changes nothing."""
    records = merged_records(RESULTS)
    assert json.loads((RESULTS / "benchmark.json").read_text()) == records
    assert benchmark_table(records) == (RESULTS / "benchmark_table.md").read_text()
    gnn = [r for r in records if r["model"] in ("oracle", "bayes_ceiling", "gnn", "gnn_naive")]
    assert gnn_table(gnn) == (RESULTS / "gnn_table.md").read_text()
    # the target of `bench run --stages merge --readme`
    readme = (RESULTS.parent / "experiments" / "comparison.md").read_text()
    block = readme.split("<!-- results-table -->\n", 1)[1].split("<!-- /results-table -->", 1)[0]
    assert block == benchmark_table(records)  # the full results table carries it
    if errors := records_error_table(records):  # GNN records that carry their error breakdown
        assert errors == (RESULTS / "gnn_errors_records.md").read_text()
    if tf := transformer_table(records):  # runs of the step protocol, once any exists
        assert tf == (RESULTS / "transformer_table.md").read_text()
        start, end = TRANSFORMER_README_MARKERS
        assert readme.split(start + "\n", 1)[1].split(end, 1)[0] == tf


def test_normalised_em_divides_by_the_ceiling_of_the_lines_scored():
    """EM_norm uses the full set's ceiling, or the prefix's for a row scored on fewer lines, for any training data."""
    ceiling = {"model": "bayes_ceiling", "variant": "F_T2_x1", "setting": "test_in", "EM": 80.0, "n": 100,
               "EM_first_n": {"10": 50.0}}  # fmt: skip
    full = {**_rec("gnn", variant="F_T2_x1", EM=40.0, n=100)}
    prefix = {**_rec("gnn", variant="F_T2_x1", EM=25.0, n=10), "training_data": "local+extra"}
    unknown = _rec("gnn", variant="F_T2_x1", EM=25.0, n=20)  # no ceiling of its 20 lines
    out = with_normalised_em([ceiling, full, prefix, unknown, _rec("copy_source", "test_out")])
    assert "EM_norm" not in out[0] and out[1]["EM_norm"] == 0.5 and out[2]["EM_norm"] == 0.5
    assert out[3]["EM_norm"] is None and out[4]["EM_norm"] is None
    assert "EM_norm" not in full  # the input records are left as they were


def test_error_table_from_records_needs_no_run_folder():
    """A GNN record's ``errors`` becomes a row (in % of its lines), grouped by training data; others give none."""
    errors = {"n": 200, "n_fail": 50, "first_cause": {"roles": 20, "extent": 30},
              "wrong": {"roles": 24, "extent": 40, "has_new_main": 100, "main_top1_missed": 10}}  # fmt: skip
    recs = [
        _rec("gnn", variant="F_T2_x1", errors=errors, training_data="local+extra"),
        _rec("gnn", variant="F_T1_x1", errors=errors),
        _rec("gnn", variant="F_T1_x5"),  # no breakdown: no row
        _rec("transformer", errors=errors),
    ]
    table = records_error_table(recs)
    rows = [line for line in table.splitlines() if line.startswith("| F_")]
    assert rows == [
        "| F_T1_x1 | test_in | 200 | 25.0% | 10.0% | 0.0% | 0.0% | 15.0% | 0.0% | 12.0% | 0.0% | 0.0% | 20.0% "
        "| 90.0% | local |",
        "| F_T2_x1 | test_in | 200 | 25.0% | 10.0% | 0.0% | 0.0% | 15.0% | 0.0% | 12.0% | 0.0% | 0.0% | 20.0% "
        "| 90.0% | local+extra |",
    ]
    assert records_error_table(recs[2:]) == ""
    smiles = {**errors, "wrong": {**errors["wrong"], "main_top5_missed": 4}}
    both = records_error_table([_rec("gnn", variant="S_T1_x1", errors=smiles)])
    assert "| 20.0% | 90.0% / 96.0% | local |" in both  # SMILES: top-1 / top-5 where a beam-5 breakdown has it
    assert "| 20.0% | 90.0% | local |" in records_error_table([_rec("gnn", variant="S_T1_x1", errors=errors)])


def test_error_table_merge_keeps_rows_of_absent_run_folders():
    """Re-merging with one variant's run folders replaces its rows and keeps the committed rows of the others."""
    head = "# t\n\n| variant | setting | n |\n|---|---|---|\n"
    old = head + "| F_T1_x1 | test_in | 1 |\n| F_T2_x1 | test_in | 2 |\n\nnote\n"
    new = head + "| F_T1_x1 | test_in | 9 |\n\nnote\n"
    merged = keep_missing_rows(old, new)
    assert merged == head + "| F_T1_x1 | test_in | 9 |\n| F_T2_x1 | test_in | 2 |\n\nnote\n"
    assert keep_missing_rows(new, new) == new


def test_extra_training_data_adds_columns_without_touching_local_rows():
    """A record of another training data adds its own columns; the local-protocol cells stay as they were."""
    records = [r for r in merged_records(RESULTS) if (r.get("training_data") or LOCAL) == LOCAL]
    base = benchmark_table(records).splitlines()
    extra = _rec("gnn", training_data="local+extra", EM=91.5, n=17822)
    grown = benchmark_table([*records, extra]).splitlines()
    assert grown[0].endswith("gnn (local+extra) EM | gnn (local+extra) norm. | gnn (local+extra) n |")
    assert grown[2].startswith(base[2]) and grown[2].endswith(" 91.50 | 0.915 | 17,822 |")


def test_digit_transformer_sits_beside_the_transformer():
    """A transformer_digit record adds its two columns right after the Transformer's, not at the end."""
    records = [r for r in merged_records(RESULTS) if r["model"] != "transformer_digit"]
    base = benchmark_table(records).splitlines()
    digit = _rec("transformer_digit", EM=42.5, n=1234)
    grown = benchmark_table([*records, digit]).splitlines()
    assert "| Transformer n | Transformer digit EM | Transformer digit n | copy EM |" in grown[0]
    assert grown[1].count("---|") == base[1].count("---|") + 2
    cells, old = grown[2].split(" | "), base[2].split(" | ")
    i = base[0].split(" | ").index("Transformer n")
    assert cells[i + 1 : i + 3] == ["42.50", "1,234"]
    assert cells[: i + 1] == old[: i + 1] and cells[i + 3 :] == old[i + 1 :]
    assert all(" – | – |" in row for row in grown[3:])  # other rows: dashes in the digit columns
    assert "transformer_digit (local)" not in grown[0]


def test_readme_table_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results-table -->\nold\n<!-- /results-table -->\nend\n")
    assert update_readme(readme, "| a |\n")
    assert readme.read_text() == "intro\n<!-- results-table -->\n| a |\n<!-- /results-table -->\nend\n"
    assert not update_readme(readme, "| a |\n")


def test_approximate_ceiling_bounds():
    import random

    from gnn_chemalgebra.benchmark.ceilings import approx_ceiling_without_shared_strings as approx

    rxn = {"reactants": ["CCO", "O=C=O"], "reagents": ["[Na+]"], "products": ["CC(=O)O"]}
    assert approx([rxn], (1,), "all", random.Random(0)) == 100.0  # one coefficient: nothing to guess
    rng = random.Random(0)
    values = [approx([rxn] * 50, (1, 2, 3, 4, 5), rule, rng) for rule in ("all", "RP")]
    assert all(20.0 <= v < 100.0 for v in values)


def test_a_corrupt_marker_is_one_error_line(tmp_path):
    from gnn_chemalgebra.benchmark.records import read_marker, write_marker

    assert read_marker(tmp_path) is None
    write_marker(tmp_path, {"steps": 3, "history": [1, 2]})
    assert read_marker(tmp_path) == {"steps": 3}
    (tmp_path / "DONE").write_text("{not json")
    with pytest.raises(InputError, match="corrupt run marker"):
        read_marker(tmp_path)


def test_transformer_runs_table_rows_budget_and_cost():
    """One row group per run of the step protocol: its steps beside the GNN's on the cell, where it stopped, the
    CPU it cost, its EM beside the GNN's; runs without ``steps`` (the old wall-clock ones) and other training data
    stay out; the last line adds up the cost."""
    facts = {"steps": 5000, "best_step": 4500, "train_lines": 11874, "batch_size": 64, "train_s": 1800.0,
             "train": {"stop_reason": "max_steps"}, "task": "standard", "decode_seconds": 36.0}  # fmt: skip
    recs = [
        _rec("gnn", EM=80.0, train_steps=4000),
        _rec("gnn", "test_out", EM=80.0, train_steps=4000),
        _rec("transformer", EM=55.0, n=17822, mol_JAC=61.46, **facts),
        _rec("transformer", "test_out", EM=0.0, n=17822, **facts),
        _rec("transformer_digit", EM=50.0, n=17822, **{**facts, "train_s": 3600.0}),
        _rec("transformer", "test_cross", EM=9.0, training_data="local+extra", **facts),
        _rec("transformer", variant="F_T2_x1"),  # no steps: an old wall-clock record
    ]
    lines = transformer_table(recs).splitlines()
    assert lines[2] == (
        "| F_T1_x1 | paper | train | 5,000 (4,000) | 4,500 | max_steps | 11,874 | 64 | 0.50 | test_in | 55.00 | 61.5 | "
        "17,822 | 80.00 | 36 |"
    )
    assert lines[3] == "| | | | | | | | | | test_out | 0.00 | – | 17,822 | 80.00 | 36 |"
    assert (
        lines[4].startswith("| F_T1_x1 | digit | train | 5,000 (4,000) |") and "| 1.00 | test_in | 50.00 |" in lines[4]
    )
    assert len(lines) == 7 and lines[-1] == "2 runs: 1.5 hours of training, 0.0 of decoding (wall, one thread each)."
    assert transformer_table([_rec("gnn"), _rec("transformer")]) == ""


def test_transformer_table_has_its_own_readme_markers(tmp_path):
    readme = tmp_path / "README.md"
    start, end = TRANSFORMER_README_MARKERS
    readme.write_text(f"<!-- results-table -->\nA\n<!-- /results-table -->\n{start}\nold\n{end}\n")
    assert update_readme(readme, "| t |\n", TRANSFORMER_README_MARKERS)
    assert readme.read_text() == f"<!-- results-table -->\nA\n<!-- /results-table -->\n{start}\n| t |\n{end}\n"


def test_error_table_rows_replaced_from_rerun_records_in_place():
    """A local GNN record with ``errors`` rewrites its (variant, setting) row where it stands, a new cell is appended
    before the note, and records of other training data or without a breakdown leave the table alone."""
    errors = {"n": 200, "n_fail": 50, "first_cause": {"roles": 20, "extent": 30},
              "wrong": {"roles": 24, "extent": 40, "has_new_main": 100, "main_top1_missed": 10}}  # fmt: skip
    head = "# t\n\n| variant | setting | n |\n|---|---|---|\n"
    old = head + "| F_T2_x1 | test_in | 1 |\n| F_T2_x1 | test_out | 2 |\n\nnote\n"
    recs = [
        _rec("gnn", variant="F_T2_x1", errors=errors),
        _rec("gnn", "test_cross", variant="F_T2_x1", errors=errors),
        _rec("gnn", "test_out", variant="F_T2_x1", errors=errors, training_data="local+extra"),
        _rec("gnn", "test_out", variant="F_T2_x1"),
    ]
    out = replace_rows_from_records(old, recs).splitlines()
    assert out[4].startswith("| F_T2_x1 | test_in | 200 | 25.0% | 10.0% |")
    assert out[5] == "| F_T2_x1 | test_out | 2 |"
    assert out[6].startswith("| F_T2_x1 | test_cross | 200 |") and out[7:] == ["", "note"]
    assert replace_rows_from_records(old, recs[2:]) == old
