"""The generated references (docs/cli.md, docs/formats.md) match the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_generated_docs_are_current() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "hack/gen_docs.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_links_resolve() -> None:
    import re

    text = (REPO / "README.md").read_text()
    links = re.findall(r"\]\(((?:docs|recipes)/[^)#]*)\)", text)
    assert links, "the README links into docs/"
    assert [link for link in links if not (REPO / link).exists()] == []
