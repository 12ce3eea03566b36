"""scripts/data_scaling.py: the two fits recover known curves, extrapolate consistently, and read records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit


def test_fits_recover_their_curves_and_targets(script) -> None:
    mod = script("data_scaling")
    n = np.array([1e4, 2e4, 4e4, 8e4])
    a, b = mod.fit_log_linear(n, 50 + 2.0 * np.log2(n))
    assert (a, b) == pytest.approx((50.0, 2.0))
    c, alpha = mod.fit_power_error(n, 100 - 300 * n**-0.25)
    assert (c, alpha) == pytest.approx((300.0, 0.25))
    need = mod.needed(100 - 300 * 16e4**-0.25, 0.0, 1.0, c, alpha)
    assert need["power_law"] == pytest.approx(16e4)
    assert mod.needed(90, 80.0, 0.0, 1.0, 0.0) == {"log_linear": None, "power_law": None}


def test_cli_reads_records_and_averages_seeds(tmp_path, script) -> None:
    path = script("data_scaling").__file__

    def records(em: float) -> Path:
        p = tmp_path / f"r{em}.json"
        rec = [{"variant": "F_T1_x1", "setting": "test_in", "EM": em, "val_best": {"EM": em + 1}},
               {"variant": "F_T1_x1", "setting": "test_out", "EM": 0.0}]  # fmt: skip
        p.write_text(json.dumps(rec))
        return p

    out = tmp_path / "scaling.json"
    points = [x for n, em in ((1000, 80.0), (1000, 82.0), (2000, 83.0)) for x in ("--point", f"{n}={records(em)}")]
    cmd = [sys.executable, path, *points, "--target", "90", "--json", str(out), "--png", str(tmp_path / "s.png")]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    saved = json.loads(out.read_text())
    assert [p["EM_mean"] for p in saved["points"]] == [81.0, 83.0]
    assert saved["log_linear"]["per_doubling"] == pytest.approx(2.0)
    assert saved["needed"]["90"]["log_linear"] == round(2 ** (7 / 2) * 2000)
    assert "| 1,000 | 80.00, 82.00 | 81.00 |" in res.stdout and (tmp_path / "s.png").stat().st_size > 0


def test_one_size_is_refused(tmp_path, script) -> None:
    p = tmp_path / "r.json"
    p.write_text(json.dumps([{"variant": "F_T1_x1", "setting": "test_in", "EM": 80.0}]))
    res = subprocess.run(
        [sys.executable, script("data_scaling").__file__, "--point", f"10={p}"], capture_output=True, text=True
    )
    assert res.returncode == 2 and "two or more" in res.stderr
