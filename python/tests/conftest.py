"""Shared fixtures of the gpu16 Python tests: the repository's paths and the built `gpu16`
binary (for the tests that compare with the CLI; they skip when it is not built)."""

import os
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# The scoreboard example is imported by its test as a module.
sys.path.insert(0, str(ROOT / "python" / "examples"))


def cli_binary():
    """The `gpu16` binary: $GPU16_BIN, else the workspace's release build, else PATH."""
    candidates = [os.environ.get("GPU16_BIN"), ROOT / "target" / "release" / "gpu16"]
    for c in candidates:
        if c and pathlib.Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    return shutil.which("gpu16")


@pytest.fixture
def gpu16_bin():
    """The CLI binary, or skip the test when there is none."""
    path = cli_binary()
    if path is None:
        pytest.skip("no gpu16 binary (cargo build --release, or set GPU16_BIN)")
    return path
