"""Shared fixtures: the workspace, the third-party corpus, and the `skelport` command line, whose
`--json` reports and outputs the package is checked against.

The corpus is found at `$SKELPORT_CORPUS` or `../shared/corpus` beside the workspace; the command
line at `$SKELPORT_CLI`, else `target/release/skelport`, else `target/debug/skelport`. Tests that
need either are skipped without them, and fail when `CI` is set (as the Rust tests do).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "testdata" / "demo"
IN_CI = bool(os.environ.get("CI"))


def _missing(what: str) -> None:
    if IN_CI:
        pytest.fail(f"{what} is missing and CI is set", pytrace=False)
    pytest.skip(f"{what} is missing")


@pytest.fixture(scope="session")
def corpus() -> Path:
    c = Path(os.environ.get("SKELPORT_CORPUS", ROOT.parent / "shared" / "corpus"))
    if not (c / "mpfb").is_dir():
        _missing(f"the corpus ({c})")
    return c


def _cli_path() -> "Path | None":
    env = os.environ.get("SKELPORT_CLI")
    candidates = [Path(env)] if env else [ROOT / "target" / "release" / "skelport", ROOT / "target" / "debug" / "skelport"]
    return next((c for c in candidates if c.is_file()), None)


class Cli:
    """The `skelport` binary, run from the workspace root."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: "str | os.PathLike[str]", check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([str(self.path), *map(str, args)], cwd=ROOT, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"skelport {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
        return p

    def json(self, *args: "str | os.PathLike[str]") -> dict:
        """The `--json` report (diff and validate exit 1 for a difference or a problem)."""
        p = self.run(*args, "--json", check=False)
        if p.returncode not in (0, 1) or not p.stdout:
            raise AssertionError(f"skelport {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
        return json.loads(p.stdout)


@pytest.fixture(scope="session")
def cli() -> Cli:
    p = _cli_path()
    if p is None:
        _missing("the skelport command line (cargo build --release -p skelport-cli, or $SKELPORT_CLI)")
    return Cli(p)


@pytest.fixture(scope="session")
def mpfb(corpus: Path) -> dict:
    """The MakeHuman main path: the game-engine rig, its weights and the base mesh."""
    rigs = corpus / "mpfb" / "rigs" / "standard"
    return {
        "rig": rigs / "rig.game_engine.json",
        "weights": rigs / "weights.game_engine.json",
        "mesh": corpus / "mpfb" / "3dobjs" / "base.obj",
    }
