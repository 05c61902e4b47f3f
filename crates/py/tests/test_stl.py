"""The translation layers from Python: data round trips against a bytearray oracle, recovery
after reopening, typed errors, the read-only inspection."""

import os
import random

import pytest

import shingled
from shingled.stl import inspect


@pytest.mark.parametrize("layer", ["smart", "dm-zoned"])
def test_random_writes_match_an_oracle_and_survive_reopen(tmp_path, layer):
    path = tmp_path / f"{layer}.img"
    if layer == "smart":
        dev = shingled.TranslationLayer.format_smart(path, size=48 << 20, track_size=128 << 10, zones=2)
    else:
        dev = shingled.TranslationLayer.format_dm_zoned(path, size=64 << 20, zone_size=4 << 20, conventional=4)
    cap = dev.capacity
    assert dev.layer == layer and cap > 0
    oracle = bytearray(cap)
    rng = random.Random(5)
    for i in range(300):
        off = rng.randrange(0, cap - 20000)
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20000)))
        dev.write(off, data)
        oracle[off:off + len(data)] = data
        if i % 50 == 0:
            dev.flush()
    for _ in range(50):
        off = rng.randrange(0, cap - 9000)
        assert dev.read(off, 9000) == bytes(oracle[off:off + 9000])
    dev.discard(0, 8192)
    oracle[0:8192] = bytes(8192)
    assert dev.check() == []
    stats = dev.stats()
    assert stats["layer"] == layer and stats["capacity_bytes"] == cap
    dev.close()
    with pytest.raises(shingled.TranslationLayerError, match="closed"):
        dev.read(0, 1)
    kind, problems, _ = inspect(path)
    assert (kind, problems) == (layer, [])
    with shingled.TranslationLayer.open(path) as again:
        for off in range(0, cap - 65536, cap // 16):
            assert again.read(off, 65536) == bytes(oracle[off:off + 65536])


def test_errors_are_typed(tmp_path):
    junk = tmp_path / "junk.img"
    junk.write_bytes(b"not a device" * 100)
    with pytest.raises(shingled.TranslationLayerError, match="neither a shingled medium"):
        shingled.TranslationLayer.open(junk)
    with pytest.raises(shingled.TranslationLayerError, match="track_size"):
        shingled.TranslationLayer.format_smart(tmp_path / "bad.img", size=1 << 20, track_size=1000)
    dev = shingled.TranslationLayer.format_smart(tmp_path / "s.img", size=16 << 20, track_size=64 << 10, zones=1)
    with pytest.raises(shingled.TranslationLayerError, match="past the size"):
        dev.write(dev.capacity - 1, b"ab")
    with pytest.raises(ValueError, match="multiples of 4096"):
        dev.discard(1, 4096)
    assert isinstance(shingled.TranslationLayerError("x"), shingled.ShingledError)
