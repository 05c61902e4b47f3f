"""The README's Python snippet runs as written (with its synthetic traces shrunk to scale=0.02,
as the CLI's README test does), so it cannot rot."""

import os
import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def snippet() -> str:
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README.md has no python block"
    return blocks[0]


def shrink(code: str) -> str:
    def small(m):
        parts = [p for p in m.group(1).split(",") if not p.startswith("scale=")]
        return 'synth:' + ",".join(parts + ["scale=0.02"])

    return re.sub(r"synth:([A-Za-z0-9_]+(?:,[a-z]+=[^,\"']+)*)", small, code)


def test_shrink_only_changes_scales():
    assert shrink('x("synth:wdev,scale=0.05")') == 'x("synth:wdev,scale=0.02")'
    assert shrink('["synth:wdev", "synth:hm,scale=0.2"]') == '["synth:wdev,scale=0.02", "synth:hm,scale=0.02"]'


def test_readme_python_snippet_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = shrink(snippet())
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    for f in ("compare.png", "time.png", "sweep.parquet", "rmws.png"):
        assert (tmp_path / f).stat().st_size > 0, f
