"""README.md *Install*, *Python*: its `pip install` line names this
distribution (and an extra it declares), and its example runs, as written,
against the installed package (herald-py/test.sh installs the wheel)."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import re

from conftest import ROOT


def python_install_section() -> str:
    text = (ROOT / "README.md").read_text()
    install = text.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    return install.split("\n### Python\n", 1)[1].split("\n### ", 1)[0]


def test_readme_pip_install_names_this_distribution():
    section = python_install_section()
    names = re.findall(r"^pip install ([A-Za-z0-9_.-]+)$", section, re.M)
    assert names, "README's Python section has no `pip install NAME` line"
    for name in names:
        # The installed distribution answers to that name.
        assert importlib.metadata.distribution(name).metadata["Name"] == name
    extras = re.findall(r'pip install "([A-Za-z0-9_.-]+)\[(\w+)\]"', section)
    assert extras, "README's Python section shows no extra"
    for name, extra in extras:
        assert extra in importlib.metadata.metadata(name).get_all("Provides-Extra")


def test_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```\n", python_install_section(), re.S)
    assert len(blocks) == 1
    assert len(blocks[0].strip().splitlines()) <= 10
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md", "exec"), {})
    assert out.getvalue() == "Summary(valid=2, partial=0, invalid=0)\n"
