"""The package under test is the wheel, as users install it (herald-py/test.sh
sets HERALD_PY_WHEEL to the wheel it built and installed into a fresh venv,
with no compiler on PATH): imported from site-packages, not from the source
tree; one abi3 extension for every CPython from 3.10 on; the LangChain extra
installed from the wheel with it."""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re
import shutil
import sysconfig

import pytest

import herald
from conftest import ROOT

WHEEL = os.environ.get("HERALD_PY_WHEEL")

pytestmark = pytest.mark.skipif(
    not WHEEL and os.environ.get("HERALD_TEST_ALL") != "1",
    reason="not run against an installed wheel (HERALD_PY_WHEEL unset): herald-py/test.sh sets it",
)


def test_wheel_is_what_is_imported():
    assert WHEEL, "HERALD_TEST_ALL=1 needs HERALD_PY_WHEEL (run herald-py/test.sh)"
    site = {pathlib.Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    package = pathlib.Path(herald.__file__).resolve().parent
    assert package.parent in site, f"herald imported from {package}, not site-packages {site}"
    assert ROOT / "herald-py" not in package.parents
    native = pathlib.Path(herald._native.__file__).name
    assert native.endswith(".abi3.so"), native
    # The installed distribution is that wheel, tagged cp310-abi3.
    dist = importlib.metadata.distribution("herald-rs")
    tags = [line.split(": ", 1)[1] for line in dist.read_text("WHEEL").splitlines() if line.startswith("Tag: ")]
    assert tags and all(t.startswith("cp310-abi3-") for t in tags), tags
    assert pathlib.Path(WHEEL).name.startswith(f"herald_rs-{dist.version}-cp310-abi3-")
    # Type stubs ship with it.
    assert (package / "_native.pyi").is_file() and (package / "py.typed").is_file()


def test_no_compiler_on_path():
    assert WHEEL, "HERALD_TEST_ALL=1 needs HERALD_PY_WHEEL (run herald-py/test.sh)"
    for tool in ("cc", "gcc", "c++", "clang", "rustc", "cargo", "maturin"):
        assert shutil.which(tool) is None, f"{tool} is on PATH: the wheel test must run without it"


def test_langchain_extra_installed_from_the_wheel():
    assert WHEEL, "HERALD_TEST_ALL=1 needs HERALD_PY_WHEEL (run herald-py/test.sh)"
    requires = importlib.metadata.requires("herald-rs") or []
    wanted = [r for r in requires if re.search(r"extra\s*==\s*['\"]langchain['\"]", r)]
    assert wanted, requires
    for req in wanted:
        name = re.match(r"[A-Za-z0-9_.-]+", req).group(0)
        importlib.metadata.distribution(name)
    import herald.langchain  # noqa: F401 - the extra's module imports
