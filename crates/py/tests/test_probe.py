"""The drive probes from Python: what `shingled probe all` finds, as a dict, and typed errors."""

import json
import math
import subprocess

import pytest

import shingled


def expected_pb(hidden, block_size=4096):
    """The PB a probe writing `block_size` requests should find on a drawn drive: its bytes up
    to the cleaning high watermark, or its entries × the request size if they run out first
    (HiddenDrive::expected_pb)."""
    slots = hidden["pb_bytes"] // 4096
    high = hidden["config"].get("pb_clean_high_watermark")
    if high is not None:
        slots = min(max(math.ceil(high * slots), 1), slots)
    entries = hidden["config"].get("pb_max_entries")
    return min(slots * 4096, entries * block_size if entries is not None else math.inf)


def band_at_middle(bands):
    """The hidden band size around the middle of the drive, where the band probe looks."""
    (kind, sizes), = bands.items()
    if kind == "Fixed":
        return sizes, sizes
    if kind == "Uniform":
        return sizes[0], sizes[1]
    middle = (sizes[0] + sizes[1]) / 2  # LbaDependent: linear from LBA 0 to the last LBA
    return middle, middle


@pytest.mark.parametrize("seed", [1, 5])
def test_probe_finds_the_hidden_pb_and_band_sizes(seed):
    found = shingled.probe(hidden=seed)
    assert set(found) == {"target", "pb", "bands", "layout", "layout_scope", "drive", "hidden"}
    assert f"hidden drive (seed {seed})" in found["target"]
    want = expected_pb(found["hidden"])
    assert abs(found["pb"]["pb_bytes"] / want - 1) <= 0.05, (found["pb"]["pb_bytes"], want)
    (sample,) = found["bands"]["samples"]
    low, high = band_at_middle(found["hidden"]["bands"])
    assert low * 0.9 <= sample["band_size"] <= high * 1.1, (sample["band_size"], low, high)
    assert found["drive"]["model"] == "dm-smr"
    # One region probed: the layout says it cannot tell fixed from LBA-dependent bands.
    assert "cannot tell fixed from LBA-dependent" in found["layout_scope"]


def test_probe_is_the_cli_probe_all(cli):
    out = subprocess.run([cli, "probe", "all", "--hidden", "1", "--output", "json"],
                         capture_output=True, check=True).stdout
    assert shingled.probe(hidden=1) == json.loads(out)


@pytest.mark.parametrize("kwargs, says", [
    ({"drive": "nope"}, "unknown drive profile"),
    ({"drive": "cmr-7200-500g"}, "no persistent buffer"),
    ({"drive": "sac-emulator", "hidden": 3}, "not both"),
])
def test_bad_input_raises_probe_error(kwargs, says):
    with pytest.raises(shingled.ProbeError, match=says) as e:
        shingled.probe(**kwargs)
    assert isinstance(e.value, shingled.ShingledError)
