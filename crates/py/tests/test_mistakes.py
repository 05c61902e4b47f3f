"""Operator mistakes from Python: outputs that are devices or links, and arguments whose
errors must name the argument and value."""
import os
import stat

import pytest

import shingled
from conftest import SYNTH, TINY

TRACE = "synth:hm,scale=0.005"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("write", [
    lambda out: shingled.convert(TRACE, out),
    lambda out: shingled.mix([TRACE], out),
])
def test_a_full_device_is_an_error_naming_it(write):
    with pytest.raises(shingled.ShingledError) as e:
        write("/dev/full")
    assert "/dev/full" in str(e.value) and "No space left" in str(e.value)
    assert ".tmp" not in str(e.value)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize("write", [
    lambda out: shingled.convert(TRACE, out),
    lambda out: shingled.mix([TRACE], out),
])
def test_dev_null_stays_a_device(write):
    write("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not os.path.exists("/dev/null.stats.json")


@pytest.mark.parametrize("write", [
    lambda out: shingled.convert(TRACE, out),
    lambda out: shingled.mix([TRACE], out),
])
def test_a_symbolic_link_is_kept_and_its_target_written(tmp_path, write):
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "t.bin"
    target.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to("sub/t.bin")
    write(link)
    assert link.is_symlink()
    data = target.read_bytes()
    assert data.startswith(b"\x89SHGTRC\n") and len(data) > 100
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["t.bin"]


def test_curve_seed_and_jobs_errors_name_the_argument():
    with pytest.raises(shingled.ConfigError, match=r"seed -1"):
        shingled.curve(TINY, seed=-1)
    with pytest.raises(shingled.ConfigError, match=r"jobs 0"):
        shingled.curve(TINY, jobs=0)
    with pytest.raises(shingled.ConfigError, match=r"'lru' is given twice"):
        shingled.curve(TINY, policies=["lru", "lru"])


def test_experiment_takes_one_trace_as_a_str():
    with pytest.raises(shingled.ShingledError) as e:
        shingled.experiment("pore-overall", traces="/nonexistent/x.csv")
    # the path as one trace, not its characters ("/" "n" "o" …)
    assert "/nonexistent/x.csv" in str(e.value)


def test_config_that_names_no_file_says_so(tmp_path):
    with pytest.raises(shingled.ConfigError, match=r"x: no such configuration file"):
        shingled.simulate(SYNTH, config="x")
    with pytest.raises(shingled.ConfigError, match=r"is a directory"):
        shingled.Config.from_toml(str(tmp_path))
    # TOML text is still TOML text
    cfg = shingled.Config.from_toml("[cache]\nsize = \"20MiB\"\n")
    assert cfg.to_dict()["cache"]["size"] == "20MiB"


@pytest.mark.parametrize("call, words", [
    (lambda: shingled.compare(TRACE, schemes=-1), "compare schemes"),
    (lambda: shingled.curve(TRACE, cache_sizes=2**63), "curve cache_sizes"),
    (lambda: shingled.sweep(0, TRACE), "sweep grid"),
    (lambda: shingled.sweep({"policy": ["lru"]}, 5), "sweep traces"),
    (lambda: shingled.trace_stats(3), "trace path"),
    (lambda: shingled.trace_stats(TRACE, format=b"\x00"), "trace format"),
    (lambda: shingled.generate(0, "x.bin"), "generate profile"),
    (lambda: shingled.mix(1e300, "x.bin"), "mix inputs"),
    (lambda: shingled.simulate(TRACE, mode=object()), "mode must be a name"),
    (lambda: shingled.ChunkStore.in_memory().read("00" * 24, "abc"), "read offset"),
])
def test_wrong_types_name_the_argument(call, words):
    with pytest.raises(TypeError, match=words):
        call()


def test_mix_takes_one_input_as_a_str(tmp_path):
    out = tmp_path / "m.bin"
    summary = shingled.mix(TRACE, out)
    assert [s["input"] for s in summary["streams"]] == [TRACE]


def test_a_binary_file_given_as_config_is_refused_quickly(tmp_path):
    img = tmp_path / "disk.img"
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    with pytest.raises(shingled.ConfigError, match=r"disk.img: larger than 4 MiB"):
        shingled.Config.from_toml(str(img))
    small = tmp_path / "small.img"
    small.write_bytes(b"\0" * 4096)
    with pytest.raises(shingled.ConfigError, match=r"small.img: holds NUL bytes"):
        shingled.simulate(TRACE, config=str(small))
