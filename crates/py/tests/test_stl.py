"""The translation layers from Python: data round trips against a bytearray oracle, recovery
after reopening, typed errors, the read-only inspection."""

import os
import random

import pytest

import shingled
from shingled.stl import inspect


@pytest.mark.parametrize("layer", ["smart", "dm-zoned", "dm-smr"])
def test_random_writes_match_an_oracle_and_survive_reopen(tmp_path, layer):
    path = tmp_path / f"{layer}.img"
    if layer == "smart":
        dev = shingled.TranslationLayer.format_smart(path, size=48 << 20, track_size=128 << 10, zones=2)
    elif layer == "dm-smr":
        dev = shingled.TranslationLayer.format_dm_smr(path, size=32 << 20, drive="sac-emulator", pb_size=1 << 20)
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
    with pytest.raises(shingled.TranslationLayerError, match="not a shingled medium"):
        shingled.TranslationLayer.open(junk)
    with pytest.raises(shingled.TranslationLayerError, match="track_size"):
        shingled.TranslationLayer.format_smart(tmp_path / "bad.img", size=1 << 20, track_size=1000)
    dev = shingled.TranslationLayer.format_smart(tmp_path / "s.img", size=16 << 20, track_size=64 << 10, zones=1)
    with pytest.raises(shingled.TranslationLayerError, match="past the size"):
        dev.write(dev.capacity - 1, b"ab")
    with pytest.raises(ValueError, match="multiples of 4096"):
        dev.discard(1, 4096)
    assert isinstance(shingled.TranslationLayerError("x"), shingled.ShingledError)


def _dm_zoned(path, size=64 << 20):
    return shingled.TranslationLayer.format_dm_zoned(path, size=size, zone_size=4 << 20, conventional=4)


def _smart(path):
    return shingled.TranslationLayer.format_smart(path, size=16 << 20, track_size=64 << 10, zones=2)


@pytest.mark.parametrize("make", [_smart, _dm_zoned])
def test_ranges_are_checked_before_allocating(tmp_path, make):
    # These aborted the interpreter (a failed allocation) or raised PanicException.
    with make(tmp_path / "l.img") as dev:
        cap = dev.capacity
        for offset, length in [(0, 2**40), (0, 2**63), (2**63, 1), (2**64 - 1, 1), (cap, 1)]:
            with pytest.raises(shingled.TranslationLayerError, match=rf"read\(offset={offset}, length={length}\).*past the size"):
                dev.read(offset, length)
        with pytest.raises(shingled.TranslationLayerError, match="discard.*past the size"):
            dev.discard(0, 2**63)
        with pytest.raises(shingled.TranslationLayerError, match="discard.*past the size"):
            dev.discard(2**64 - 4096, 4096)
        with pytest.raises(OverflowError):
            dev.read(0, -1)
        assert dev.read(cap - 10, 10) == bytes(10)


def test_a_read_longer_than_one_gib_is_refused_on_a_large_device(tmp_path):
    # The file is sparse: 2 GiB of capacity costs almost nothing on disk.
    with _dm_zoned(tmp_path / "big.img", size=2 << 30) as dev:
        assert dev.capacity > (1 << 30) + 1
        with pytest.raises(shingled.TranslationLayerError, match="more than one read returns"):
            dev.read(0, (1 << 30) + 1)


@pytest.mark.parametrize("make", [_smart, _dm_zoned])
def test_idle_saturates_instead_of_overflowing(tmp_path, make):
    # dm-zoned's idle(1.8e19) twice raised PanicException: overflow when adding durations.
    with make(tmp_path / "l.img") as dev:
        dev.write(0, b"x" * 8192)
        dev.idle(1.8e19)
        dev.idle(1.8e19)
        assert dev.read(0, 8192) == b"x" * 8192
        for bad in [float("inf"), float("nan"), -1.0]:
            with pytest.raises(ValueError, match="idle"):
                dev.idle(bad)


def test_a_fifo_is_refused_not_hung_on(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(shingled.TranslationLayerError, match="is a FIFO"):
        shingled.TranslationLayer.open(fifo)
    with pytest.raises(shingled.TranslationLayerError, match="is a FIFO"):
        inspect(fifo)
    with pytest.raises(shingled.TranslationLayerError, match="is a directory"):
        shingled.TranslationLayer.open(tmp_path)


@pytest.mark.parametrize("make", [_smart, _dm_zoned])
def test_a_damaged_header_is_reported_by_inspect_and_check(tmp_path, make):
    path = tmp_path / "l.img"
    with make(path) as dev:
        dev.write(0, b"y" * 4096)
    assert inspect(path)[1] == []
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"\xff\xff\xff\xff")
    kind, problems, _ = inspect(path)
    assert len(problems) == 1 and "the header (byte 0) is damaged" in problems[0], problems
    # The backup header still opens it; the open layer's check names the damage too.
    with shingled.TranslationLayer.open(path) as dev:
        assert dev.read(0, 4096) == b"y" * 4096
        assert any("the header (byte 0) is damaged" in p for p in dev.check())


def test_the_emulated_dm_smr_drive_counts_in_the_models_terms(tmp_path):
    dev = shingled.TranslationLayer.format_dm_smr(tmp_path / "smr.img", size=16 << 20, pb_size="1/64")
    cap = dev.capacity
    for i in range(2000):
        dev.write((i * 7919 * 4096) % cap, bytes([i % 251]) * 4096)
    s = dev.stats()
    assert s["layer"] == "dm-smr"
    c = s["stats"]["counts"]
    assert c["pb_writes"] == 2000 and c["rmws"] > 0
    assert c["band_bytes_written"] == c["band_bytes_read"] > 0
    assert dev.check() == []
    with pytest.raises(shingled.TranslationLayerError, match="pb_flavour"):
        shingled.TranslationLayer.format_dm_smr(tmp_path / "pore.img", size=16 << 20, drive="pore-emulator")
    with pytest.raises(shingled.TranslationLayerError, match="pb_size"):
        shingled.TranslationLayer.format_dm_smr(tmp_path / "bad.img", size=16 << 20, pb_size="lots")


def test_the_emulated_dm_smr_drive_counts_what_sim_counts_for_the_same_requests(tmp_path):
    # A DiskSim trace of multi-block reads and writes (512-byte sectors; flags 1 = read).
    rng = random.Random(11)
    reqs = [(rng.random() < 0.3, rng.randrange(0, 15000), rng.randrange(1, 9)) for _ in range(600)]
    trace = tmp_path / "t.disksim"
    trace.write_text("".join(f"{i}.0 0 {b * 8} {n * 8} {int(read)}\n" for i, (read, b, n) in enumerate(reqs)))
    sim = shingled.simulate(str(trace), drive="sac-emulator", cache=False, drive__pb_size="1MiB",
                            trace__format="disksim").report["total"]["drive"]
    dev = shingled.TranslationLayer.format_dm_smr(tmp_path / "smr.img", size=72 << 20, drive="sac-emulator",
                                                  pb_size=1 << 20)
    for i, (read, b, n) in enumerate(reqs):
        if read:
            dev.read(b * 4096, n * 4096)
        else:
            dev.write(b * 4096, bytes([i % 256]) * (n * 4096))
    got = dev.stats()["stats"]["counts"]
    keys = ["pb_writes", "pb_reads", "rmws", "band_bytes_read", "band_bytes_written", "pb_blocks_cleaned"]
    assert sim["rmws"] > 3
    assert {k: got[k] for k in keys} == {k: sim[k] for k in keys}
