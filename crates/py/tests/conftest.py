import os
import subprocess
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "data" / "golden"
TINY = GOLDEN / "tiny.csv"
TINY_TOML = GOLDEN / "tiny.toml"
SYNTH = "synth:wdev,scale=0.01"


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `shingled` binary, built from this checkout (SHINGLED_BIN overrides)."""
    if os.environ.get("SHINGLED_BIN"):
        return Path(os.environ["SHINGLED_BIN"])
    subprocess.run(["cargo", "build", "-q", "-p", "shingled-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "debug" / "shingled"
