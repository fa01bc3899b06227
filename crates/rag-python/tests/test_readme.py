"""The Python example of the README runs as written, from the repository's root."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def test_the_readme_example_prints_a_context_within_its_budget():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Python") :]
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "ContextPacker" in example and len([l for l in example.splitlines() if l.strip()]) <= 11
    probe = example + "\nimport rag_chunker\nprint('\\x00', packed.tokens_used, packed.tokens_budget)\n"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, check=True, capture_output=True, text=True).stdout
    context, _, tail = out.rpartition("\x00")
    used, budget = map(int, tail.split())
    assert budget == 2000 and 0 < used <= 2000
    assert "Architecture >" in context, "breadcrumbs name the section of each excerpt"
