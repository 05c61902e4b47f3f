"""`shingled.replay`: real I/O against a file and an in-process block cache, with the checks
and the typed errors of the CLI."""
import pytest

import shingled


def _trace(path, reqs):
    """An MSR CSV trace of (op, byte offset, bytes), a millisecond apart."""
    base = 128_166_372_000_000_000
    path.write_text("".join(f"{base + i * 10_000},t,0,{op},{off},{n},100\n" for i, (op, off, n) in enumerate(reqs)))
    return str(path)


REQS = [("Write", 0, 8192), ("Read", 0, 8192), ("Write", 40960, 4096), ("Read", 40960, 4096), ("Read", 81920, 4096)]


def test_replay_on_a_file_checks_reads_and_times_a_model(tmp_path):
    t = _trace(tmp_path / "t.csv", REQS)
    img = tmp_path / "disk.img"
    img.write_bytes(bytes(8 << 20))
    r = shingled.replay(t, img, direct=False, verify=True, model_drive="pore-prototype")
    assert (r["requests"], r["reads"]["requests"], r["writes"]["requests"]) == (5, 3, 2)
    # Two of the three reads read blocks this replay wrote; the third is issued, not checked.
    assert r["verified_reads"] == 2 and r["target_kind"] == "file"
    assert r["model"]["drive"] == "pore-prototype" and r["model"]["all"]["requests"] == 5
    df = shingled.replay_frame(r)
    assert list(df.index) == [(s, o) for s in ("measured", "model pore-prototype") for o in ("all", "reads", "writes")]
    assert df.loc[("measured", "writes"), "bytes"] == 3 * 4096


def test_replay_refuses_a_target_holding_data_and_leaves_it_untouched(tmp_path):
    t = _trace(tmp_path / "t.csv", REQS)
    img = tmp_path / "data.img"
    data = bytearray(1 << 20)
    data[10:15] = b"hello"
    img.write_bytes(bytes(data))
    with pytest.raises(shingled.ReplayTargetError, match="--force"):
        shingled.replay(t, img, direct=False)
    assert img.read_bytes() == bytes(data)
    with pytest.raises(shingled.ReplayTargetError, match="is a directory"):
        shingled.replay(t, tmp_path, direct=False)
    with pytest.raises(shingled.TraceError):
        shingled.replay(str(tmp_path / "missing.csv"), img, direct=False)


def test_replay_through_an_in_process_block_cache(tmp_path):
    t = _trace(tmp_path / "t.csv", REQS)
    backing = tmp_path / "backing.img"
    backing.write_bytes(bytes(16 << 20))
    cache = tmp_path / "cache.img"
    shingled.BlockCache.create(cache, backing, size=4 << 20, policy="lru").close()
    r = shingled.replay(t, cache, verify=True)
    assert r["target_kind"] == "block cache (in process)" and r["verified_reads"] == 2
    with pytest.raises(shingled.ReplayTargetError, match="one request at a time"):
        shingled.replay(t, cache, queue_depth=2)
