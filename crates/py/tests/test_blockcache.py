"""The block cache from Python: data round trips, persistence across reopen, the cleaner and
detach, typed errors, the read-only inspection and loss report, and the data-path replay
agreeing with the simulator."""

import doctest
import random

import pytest

import shingled
import shingled.blockcache
from shingled.blockcache import replay_frame, stats_frame

from conftest import GOLDEN

BLOCK = 4096
DISK = 8 << 20


def backing_file(path, size=DISK):
    with open(path, "wb") as f:
        f.truncate(size)
    return path


@pytest.fixture
def paths(tmp_path):
    return tmp_path / "cache.img", backing_file(tmp_path / "disk.img")


@pytest.fixture
def cache(paths):
    c = shingled.BlockCache.create(*paths, size=1 << 20)
    yield c
    c.close()


def test_module_doctest_passes():
    res = doctest.testmod(shingled.blockcache)
    assert res.attempted > 0 and res.failed == 0


def test_properties(cache):
    assert cache.size == DISK
    assert (cache.mode, cache.policy) == ("read-write", "lru")
    assert 0 < cache.capacity < (1 << 20) // BLOCK
    assert not cache.closed and "lru" in repr(cache)


def test_unaligned_round_trips_match_an_oracle(cache):
    oracle = bytearray(DISK)
    rng = random.Random(3)
    for i in range(200):
        off = rng.randrange(0, DISK - 20000)
        data = rng.randbytes(rng.randrange(1, 20000))
        cache.write(off, data)
        oracle[off:off + len(data)] = data
        if i % 40 == 0:
            cache.flush()
    for _ in range(50):
        off = rng.randrange(0, DISK - 9000)
        assert cache.read(off, 9000) == bytes(oracle[off:off + 9000])
    s = cache.stats()
    assert s["dirty_evictions"] > 0  # more blocks written than the cache holds
    assert s["cached_blocks"] <= cache.capacity


def test_stats_count_blocks(cache):
    cache.write(0, b"a" * 3 * BLOCK)
    s = cache.stats()
    assert {"read_hits", "read_misses", "write_hits", "write_misses", "dirty_evictions", "clean_evictions",
            "cleaner_writebacks", "commits", "cached_blocks", "dirty_blocks"} <= set(s)
    assert (s["write_misses"], s["write_hits"], s["cache_blocks_written"]) == (3, 0, 3)
    assert (s["cached_blocks"], s["dirty_blocks"], s["commits"]) == (3, 3, 0)
    cache.write(BLOCK, b"b" * BLOCK)
    assert cache.read(0, 3 * BLOCK) == b"a" * BLOCK + b"b" * BLOCK + b"a" * BLOCK
    s = cache.stats()
    assert (s["write_hits"], s["read_hits"]) == (1, 3)
    cache.flush()
    assert cache.stats()["commits"] == 1
    assert cache.dirty_blocks() == [0, 1, 2]
    df = stats_frame([s, cache])
    assert len(df) == 2 and df["write_misses"].tolist() == [3, 3]


def test_close_reopen_keeps_the_data(paths):
    cache_path, disk = paths
    with shingled.BlockCache.create(cache_path, disk, size=1 << 20, policy="arc") as c:
        c.write(10_000, b"persistent bytes")
        c.write(5 * BLOCK, b"z" * BLOCK)
    assert open(disk, "rb").read()[10_000:10_016] == bytes(16)  # still only in the cache
    # the superblock names the backing file; naming it again works too
    for backing in (None, disk):
        with shingled.BlockCache.open(cache_path, backing) as c:
            assert c.policy == "arc"
            assert c.read(10_000, 16) == b"persistent bytes"
            assert c.read(5 * BLOCK, BLOCK) == b"z" * BLOCK
            assert c.dirty_blocks() == [2, 5]


def test_clean_then_detach_leaves_everything_on_the_backing_file(paths):
    cache_path, disk = paths
    c = shingled.BlockCache.create(cache_path, disk, size=1 << 20)
    c.write(0, b"p" * 2 * BLOCK)
    c.write(100 * BLOCK + 7, b"hello")
    assert c.clean() == 3
    s = c.stats()
    assert (s["dirty_blocks"], s["cleaner_writebacks"], s["cached_blocks"]) == (0, 3, 3)
    assert c.dirty_blocks() == []
    assert c.clean() == 0
    c.write(200 * BLOCK, b"late")
    c.detach()
    assert c.closed
    with pytest.raises(shingled.BlockCacheError, match="closed"):
        c.read(0, 1)
    c.close()  # closing a detached cache is a no-op
    raw = open(disk, "rb").read()
    assert raw[:2 * BLOCK] == b"p" * 2 * BLOCK
    assert raw[100 * BLOCK + 7:100 * BLOCK + 12] == b"hello"
    assert raw[200 * BLOCK:200 * BLOCK + 4] == b"late"
    assert shingled.cache_inspect(cache_path)["state"] == "detached"
    with pytest.raises(shingled.BlockCacheError, match="detached"):
        shingled.BlockCache.open(cache_path)
    lost = shingled.cache_lost_blocks(disk, cache_path)
    assert lost == {"known": True, "detached": True, "ranges": [], "blocks": 0}
    # a detached cache device can be formatted again without force
    shingled.BlockCache.create(cache_path, disk).close()


def test_discard(cache):
    cache.write(0, b"q" * 4 * BLOCK)
    cache.discard(BLOCK, 2 * BLOCK)
    assert cache.read(0, 4 * BLOCK) == b"q" * BLOCK + bytes(2 * BLOCK) + b"q" * BLOCK
    assert cache.stats()["discarded_blocks"] == 2
    with pytest.raises(ValueError, match="multiples of 4096"):
        cache.discard(1, BLOCK)


def test_errors_are_typed(paths, tmp_path):
    cache_path, disk = paths
    shingled.BlockCache.create(cache_path, disk, size=1 << 20).close()
    with pytest.raises(shingled.BlockCacheError, match="already holds an attached shingled block cache"):
        shingled.BlockCache.create(cache_path, disk, size=1 << 20)
    with shingled.BlockCache.create(cache_path, disk, force=True) as c:
        assert c.dirty_blocks() == []
    with pytest.raises(shingled.BlockCacheError, match="no-such-policy"):
        shingled.BlockCache.create(tmp_path / "p.img", disk, size=1 << 20, policy="no-such-policy")
    with pytest.raises(shingled.BlockCacheError, match="mode"):
        shingled.BlockCache.create(tmp_path / "m.img", disk, size=1 << 20, mode="sideways")
    # PORE without the drive's persistent-buffer size cannot build; with it, it can
    with pytest.raises(shingled.BlockCacheError, match="pore"):
        shingled.BlockCache.create(tmp_path / "pore.img", disk, size=1 << 20, policy="pore")
    for policy in ("pore", "sac"):
        with shingled.BlockCache.create(tmp_path / f"{policy}2.img", disk, size=1 << 20, policy=policy,
                                        pb_blocks=64, band_size=1 << 20) as c:
            assert c.policy == policy
    with pytest.raises(shingled.BlockCacheError, match="give its size"):
        shingled.BlockCache.create(tmp_path / "nosize.img", disk)
    with pytest.raises(shingled.BlockCacheError):
        shingled.BlockCache.open(disk)  # not a cache
    with shingled.BlockCache.open(cache_path) as c:
        with pytest.raises(shingled.BlockCacheError, match="past the size"):
            c.write(c.size - 1, b"ab")
    assert issubclass(shingled.BlockCacheError, shingled.ShingledError)


def test_inspect(paths):
    cache_path, disk = paths
    with shingled.BlockCache.create(cache_path, disk, size=1 << 20, mode="write-cache", policy="fifo",
                                    reserve=10) as c:
        c.write(0, b"d" * 4 * BLOCK)
        c.flush()
        c.clean()
        c.write(0, b"e" * BLOCK)  # after clean: copy on write, not committed
        with pytest.raises(shingled.BlockCacheError, match="is in use"):
            shingled.cache_inspect(cache_path)  # open here: locked
        ins = c.inspect()
        assert ins["state"] == "attached"
        assert ins["setup"]["mode"] == "write-cache" and ins["setup"]["policy"]["policy"] == "fifo"
        assert ins["setup"]["backing_path"] == str(disk.resolve())
        assert ins["backing_blocks"] == DISK // BLOCK
        assert ins["capacity"] == ins["slots"] - 10 == c.capacity
        assert (ins["cached_blocks"], ins["dirty_blocks"]) == (4, 0)
        c.flush()
        ins = c.inspect()
        assert (ins["cached_blocks"], ins["dirty_blocks"]) == (4, 1)
    assert shingled.cache_inspect(cache_path) == ins


def test_lost_blocks_lists_the_dirty_ranges(paths):
    cache_path, disk = paths
    with shingled.BlockCache.create(cache_path, disk, size=1 << 20) as c:
        c.write(0, b"x" * 3 * BLOCK)
        c.write(10 * BLOCK + 100, b"y")
        c.write(11 * BLOCK, b"y" * BLOCK)
        c.write(40 * BLOCK, b"w" * BLOCK)
        with pytest.raises(shingled.BlockCacheError, match="is in use"):
            shingled.cache_lost_blocks(disk, cache_path)  # both devices are locked while open
    lost = shingled.cache_lost_blocks(disk, cache_path)  # closing committed the dirty blocks
    assert lost == {"known": True, "detached": False, "ranges": [[0, 3], [10, 12], [40, 41]], "blocks": 6}
    unknown = shingled.cache_lost_blocks(disk)
    assert unknown["known"] is False and unknown["blocks"] is None
    with shingled.BlockCache.open(cache_path) as c:
        c.clean()
    assert shingled.cache_lost_blocks(disk, cache_path)["ranges"] == []
    with pytest.raises(shingled.BlockCacheError, match="blocks"):
        shingled.cache_lost_blocks(backing_file(disk.parent / "other.img", DISK * 2), cache_path)


def small_config():
    return shingled.Config.from_toml(GOLDEN / "tiny.toml").replace(**{"trace.path": str(GOLDEN / "small.csv")})


def test_replay_agrees_with_the_simulator():
    r = shingled.cache_replay(small_config(), metadata_on_clock=False)
    assert r["differences"] == []
    sim, run = r["sim"]["total"], r["replay"]["run"]["total"]
    for k in ("requests", "read_hits", "write_hits", "dirty_evictions", "clean_evictions",
              "drive_blocks_written", "total_time_s"):
        assert sim[k] == run[k], k
    assert sim["drive"]["rmws"] == run["drive"]["rmws"] > 0
    dp = r["replay"]["data_path"]
    fc = dp["final_check"]
    assert fc["read_through_cache"] == fc["read_from_backing"] == fc["written_blocks"] > 0
    assert dp["verified_blocks"] > 0 and dp["stats"]["write_misses"] > 0


def test_replay_options_and_overrides():
    r = shingled.cache_replay(trace="synth:hm,scale=0.002", cache="2%", policy="lru", flush_every=50,
                              final_check=False, compare=False)
    assert r["sim"] is None and r["differences"] == []
    dp = r["replay"]["data_path"]
    assert dp["final_check"] is None and dp["flushes"] > 0 and dp["stats"]["commits"] > 0
    assert r["replay"]["run"]["policy"] == "lru"
    # counts agree with metadata on the clock too (only modelled times may move)
    r = shingled.cache_replay(small_config(), flush_every=20)
    assert all(d["time"] for d in r["differences"])
    with pytest.raises(shingled.TraceError):
        shingled.cache_replay(small_config(), trace=str(GOLDEN / "missing.csv"))
    with pytest.raises(shingled.BlockCacheError, match="closed loop"):
        shingled.cache_replay(small_config(), replay="open")


def test_replay_frame():
    pytest.importorskip("pandas")
    r = shingled.cache_replay(small_config(), metadata_on_clock=False)
    df = replay_frame(r)
    assert list(df.index) == ["sim", "data path"]
    assert {"read_hits", "write_hits", "dirty_evictions", "clean_evictions", "drive_blocks_written", "rmws",
            "write_amplification", "total_time_s"} <= set(df.columns)
    assert (df.loc["sim"] == df.loc["data path"]).all()
    assert df.attrs["differences"] == []
    r = shingled.cache_replay(small_config(), compare=False)
    assert list(replay_frame(r).index) == ["data path"]


def test_a_second_handle_on_a_cache_or_its_backing_device_is_refused(paths, tmp_path):
    """Both devices are locked while a cache is open, within one process too: a second open,
    a detach or a forced format through another handle cannot corrupt the open cache."""
    cache_path, disk = paths
    with shingled.BlockCache.create(cache_path, disk, size=1 << 20) as c:
        c.write(0, b"a" * BLOCK)
        c.flush()
        with pytest.raises(shingled.BlockCacheError, match="is in use"):
            shingled.BlockCache.open(cache_path)
        with pytest.raises(shingled.BlockCacheError, match="is in use"):
            shingled.BlockCache.create(cache_path, disk, force=True)
        with pytest.raises(shingled.BlockCacheError, match="is in use"):
            shingled.BlockCache.create(tmp_path / "other-cache.img", disk, size=1 << 20)
        with pytest.raises(shingled.BlockCacheError, match="is in use"):
            shingled.cache_inspect(cache_path)
        c.write(BLOCK, b"b" * BLOCK)
    with shingled.BlockCache.open(cache_path) as c:
        assert c.read(0, 2 * BLOCK) == b"a" * BLOCK + b"b" * BLOCK


def test_the_backing_device_is_known_by_identity_not_size(paths, tmp_path):
    cache_path, disk = paths
    with shingled.BlockCache.create(cache_path, disk, size=1 << 20) as c:
        c.write(0, b"d" * BLOCK)
    other = backing_file(tmp_path / "other.img")
    with pytest.raises(shingled.BlockCacheError, match="not the device this cache was created over"):
        shingled.BlockCache.open(cache_path, other)
    with shingled.BlockCache.open(cache_path, other, backing_moved=True) as c:
        assert c.read(0, BLOCK) == b"d" * BLOCK
    assert shingled.cache_inspect(cache_path)["setup"]["backing_path"] == str(other.resolve())


def test_create_refuses_data_it_did_not_make(paths, tmp_path):
    cache_path, disk = paths
    fs = tmp_path / "fs.img"
    img = bytearray(1 << 20)
    img[1080:1082] = b"\x53\xef"
    fs.write_bytes(bytes(img))
    with pytest.raises(shingled.BlockCacheError, match="ext2/3/4 file system"):
        shingled.BlockCache.create(fs, disk)
    assert fs.read_bytes() == bytes(img)
    with pytest.raises(shingled.BlockCacheError, match="itself"):
        shingled.BlockCache.create(disk, disk, force=True)
    shingled.BlockCache.create(fs, disk, force=True).close()


def test_ranges_are_checked_before_allocating(cache):
    # read(0, 2**40) aborted the interpreter; read(0, 2**63) raised PanicException.
    size = cache.size
    for offset, length in [(0, 2**40), (0, 2**63), (2**63, 1), (size, 1)]:
        with pytest.raises(shingled.BlockCacheError, match=rf"read\(offset={offset}, length={length}\).*past the size"):
            cache.read(offset, length)
    with pytest.raises(shingled.BlockCacheError, match="discard.*past the size"):
        cache.discard(0, 2**63)
    assert cache.read(size - 10, 10) == bytes(10)


def test_a_read_longer_than_one_gib_is_refused(tmp_path):
    backing = backing_file(tmp_path / "big.img", size=2 << 30)
    with shingled.BlockCache.create(tmp_path / "c.img", backing, size=1 << 20) as c:
        with pytest.raises(shingled.BlockCacheError, match="more than one read returns"):
            c.read(0, (1 << 30) + 1)
