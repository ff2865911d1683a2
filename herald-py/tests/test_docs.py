"""docs/python.md shows only code that runs: its ```python blocks are
executed in order, in one namespace, in a fresh directory, and its
```sh verify commands are run with the CLI."""

from __future__ import annotations

import contextlib
import io
import os
import re

from conftest import ROOT, run_cli


def test_python_md_examples_run(tmp_path, herald_bin, monkeypatch):
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```\n", text, re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, "docs/python.md", "exec"), namespace)
    assert "['unknown_signer']" in out.getvalue()
    assert "valid []" in out.getvalue()
    # The shell commands of "Verifying a run afterwards".
    assert run_cli(herald_bin, "verify", "run.herald", "--keyring", "keys/").returncode == 0
    assert os.stat("keys/agent.key").st_mode & 0o777 == 0o600
