"""Copy results/benchmark_table.md into the README between its results-table markers."""

from __future__ import annotations

import re
from pathlib import Path

readme = Path("README.md")
table = Path("results/benchmark_table.md").read_text().strip()
text = readme.read_text()
new = re.sub(
    r"<!-- results-table -->.*?<!-- /results-table -->",
    lambda _: f"<!-- results-table -->\n{table}\n<!-- /results-table -->",
    text,
    flags=re.DOTALL,
)
readme.write_text(new)
