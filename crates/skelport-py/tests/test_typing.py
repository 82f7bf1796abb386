"""The type stubs say what the module is: mypy's stubtest compares every class, function,
argument and default in `_skelport.pyi` with the built module, and mypy --strict checks a typed
use of the API against the stubs."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import IN_CI

HERE = Path(__file__).resolve().parent


def mypy(*args: str) -> subprocess.CompletedProcess:
    try:
        import mypy  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("mypy is not installed (crates/skelport-py/requirements-test.txt)")
        pytest.skip("mypy is not installed")
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=HERE.parent)


def test_stubs_match_the_module():
    p = mypy("mypy.stubtest", "skelport._skelport")
    assert p.returncode == 0, p.stdout + p.stderr


def test_typed_use_checks(tmp_path):
    typed = tmp_path / "typed_use.py"
    typed.write_text(
        """
import numpy as np
import numpy.typing as npt
import skelport
from skelport.types import InspectReport

doc: skelport.Document = skelport.load("x.glb", weights=b"{}")
heads: npt.NDArray[np.float64] = doc.skeletons[0].heads
joints, weights = doc.skins[0].influences(max=4)
report: skelport.Report = skelport.convert(["a.json"], "out/", to="glb", embed=True)
codes: list[str] = [d.code for d in report.losses]
rep: InspectReport = doc.inspect()
bones = rep["skeletons"][0]["bones"]
try:
    skelport.load(b"")
except skelport.Error as e:
    where: "str | None" = e.place
"""
    )
    p = mypy("mypy", "--strict", "--no-incremental", str(typed))
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_extension_holds_no_test_machinery():
    """The fuzz targets' entry points (which make FIFOs and register an atexit hook) and the
    conversion matrix are behind the `fuzzing` and `testing` features, which the wheel is built
    without: none of their code is in the extension module. (Built with the features, as xtask
    is, the module would hold these strings: the fuzzing module's panic message, the matrix's
    source name, and the `mkfifo` the fuzz folder target imports.)"""
    import skelport._skelport as ext

    data = Path(ext.__file__).read_bytes()
    for marker in (b"unknown fuzz target", b"MPFB game_engine + weights + base.obj", b"mkfifo"):
        assert marker not in data, marker
