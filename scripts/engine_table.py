"""Write the docs' engine table (docs/decision-requests.md, between its markers) from
auditor/pcd/engines/engines.toml.

Run `python scripts/engine_table.py` after editing the data file; tests/decisions/
test_engine_table.py fails while the page's table differs from the generated one.
"""

from __future__ import annotations

import sys
from pathlib import Path

from auditor.pcd.engines.table import TABLE_BEGIN, TABLE_END, markdown_table

README = Path(__file__).resolve().parent.parent / "docs" / "decision-requests.md"


def updated(text: str) -> str:
    start, end = text.index(TABLE_BEGIN), text.index(TABLE_END) + len(TABLE_END)
    return text[:start] + markdown_table() + text[end:]


def main() -> int:
    text = README.read_text(encoding="utf-8")
    new = updated(text)
    if new != text:
        README.write_text(new, encoding="utf-8")
        print(f"{README.name}: engine table rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
