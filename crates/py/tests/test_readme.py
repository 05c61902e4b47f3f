"""README's Python section works as written: its install line, run verbatim in a fresh virtual
environment, is enough for its snippet (run with the synthetic traces shrunk to scale=0.02, as
the CLI's README test does). Nothing from the test environment leaks in, so a dependency README
forgets to install fails here."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"


def python_section() -> str:
    text = README.read_text()
    start = text.index("\n## Python\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def snippet() -> str:
    blocks = re.findall(r"```python\n(.*?)```", python_section(), flags=re.S)
    assert blocks, "README.md's Python section has no python block"
    return blocks[0]


def install_lines() -> list:
    blocks = re.findall(r"```sh\n(.*?)```", python_section(), flags=re.S)
    lines = [l.split("#")[0].strip() for b in blocks for l in b.splitlines()]
    lines = [l for l in lines if l.startswith("pip install")]
    assert lines, "README.md's Python section has no `pip install` line"
    return lines


def shrink(code: str) -> str:
    def small(m):
        parts = [p for p in m.group(1).split(",") if not p.startswith("scale=")]
        return 'synth:' + ",".join(parts + ["scale=0.02"])

    return re.sub(r"synth:([A-Za-z0-9_]+(?:,[a-z]+=[^,\"']+)*)", small, code)


def test_shrink_only_changes_scales():
    assert shrink('x("synth:wdev,scale=0.05")') == 'x("synth:wdev,scale=0.02")'
    assert shrink('["synth:wdev", "synth:hm,scale=0.2"]') == '["synth:wdev,scale=0.02", "synth:hm,scale=0.02"]'


def test_install_line_is_found():
    (line,) = install_lines()
    assert line.startswith("pip install") and "./crates/py" in line, line


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(sys.prefix))
    return env


def run(cmd, cwd, env):
    # Bounded, so a stuck download fails the test instead of hanging it.
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"{cmd!r} exited {done.returncode}\nstdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
    return done


def test_readme_install_then_snippet_in_a_fresh_venv(tmp_path):
    venv = tmp_path / "venv"
    env = clean_env()
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", str(venv)], tmp_path, env)
    py = venv / "bin" / "python"
    for line in install_lines():
        args = shlex.split(line)
        run([str(py), "-m", *args], ROOT, env)
    work = tmp_path / "work"
    work.mkdir()
    script = work / "readme_snippet.py"
    script.write_text(shrink(snippet()))
    run([str(py), str(script)], work, env)
    for f in ("compare.png", "time.png", "sweep.parquet", "rmws.png"):
        assert (work / f).stat().st_size > 0, f
