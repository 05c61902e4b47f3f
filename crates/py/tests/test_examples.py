"""The scripts in examples/ run as their docstrings say and write what they print."""

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def run(tmp_path, name, *args):
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_pore_overall_names_the_caches_faster_than_cmr_only(tmp_path):
    out = run(tmp_path, "pore_overall.py", "0.1")
    lines = [l for l in out.splitlines() if "caches faster than CMR-only" in l]
    assert [l.split(":")[1] for l in lines] == ["wdev,scale=0.1", "mds,scale=0.1"], out
    assert (tmp_path / "pore_overall.png").stat().st_size > 0


def test_sac_table5_writes_its_files(tmp_path):
    run(tmp_path, "sac_table5.py")
    for f in ("sac_table5.png", "sac_sweep.png", "sac_sweep.csv"):
        assert (tmp_path / f).stat().st_size > 0, f
