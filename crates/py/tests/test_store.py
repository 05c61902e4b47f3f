"""shingled.ChunkStore: round trips (memory and device file), reopen and crash recovery, fsck,
corruption, and the typed exceptions of bad arguments."""

import json
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

import shingled
from shingled import ChunkStore, CorruptionError, NoSuchChunk, ReadOnlyError, StoreError, StoreFront

ID = bytes(23) + b"\x07"


def pattern(seed: int, n: int) -> bytes:
    return random.Random(seed).randbytes(n)


def test_round_trip_in_memory():
    with ChunkStore.in_memory(zones=16, zone_size=256 << 10) as st:
        cid = st.create(ID)
        assert cid == ID.hex()
        st.append(ID, b"hello, ")
        st.append(cid, bytearray(b"zones"))  # hex str and bytes name the same chunk
        assert st.read(ID) == b"hello, zones"
        assert st.read(cid, 7, 5) == b"zones"
        other = st.create(stream="metadata")
        st.append(other, pattern(1, 10_000))
        st.seal(other)
        assert st.read(other, 4096, 100) == pattern(1, 10_000)[4096:4196]
        rows = st.list()
        assert [r["id"] for r in rows] == sorted([cid, other])
        info = st.chunk(other)
        assert info == {"id": other, "stream": 1, "length": 10_000, "sealed": True, "records": 1, "groups": 1}
        assert other in st and len(st) == 2
        s = st.stats()
        assert (s["chunks"], s["sealed_chunks"], s["live_bytes"]) == (2, 1, 10_012)
        # 16 zones: superzone, 4 metazones (the default), 11 datazones
        assert s["datazones"] == 11 and sum(s["zones_by_state"].values()) == 11
        assert s["memory"]["per_record"] == 8
        df = st.list(as_frame=True)
        assert df.loc[other, "length"] == 10_000 and bool(df.loc[cid, "sealed"]) is False
        st.delete(cid)
        assert cid not in st
        assert st.fsck()["clean"]
    assert st.closed


def test_acknowledged_appends_survive_a_crash_and_reopen():
    st = ChunkStore.in_memory()
    st.create(ID)
    for i in range(5):
        st.append(ID, pattern(i, 3000))
    st.reopen()  # no sync, no close: recovery from the device
    assert st.read(ID) == b"".join(pattern(i, 3000) for i in range(5))
    assert st.stats()["recovered_records"] == 5
    # batched durability: appends are durable at sync
    st2 = ChunkStore.in_memory(durability="batched", checkpoint_every_bytes=64 << 10, ckpt_step_bytes=4096)
    assert (st2.config()["checkpoint_every_bytes"], st2.config()["ckpt_step_bytes"]) == (64 << 10, 4096)
    st2.create(ID)
    st2.append(ID, b"a" * 5000)
    st2.sync()
    st2.reopen()
    assert st2.read(ID) == b"a" * 5000


def test_device_file_round_trip_close_reopen_and_cli_sees_it(tmp_path, cli):
    dev = tmp_path / "dev.zbd"
    data = pattern(3, 3 << 20)
    with ChunkStore.create_file(dev, zones=12, zone_size=4 << 20, metazones=2) as st:
        cid = st.create()
        for off in range(0, len(data), 1 << 20):
            st.append(cid, data[off : off + (1 << 20)])
        st.seal(cid)
        small = st.create(ID, stream="gc")
        st.append(small, b"tiny")
    with ChunkStore.open(dev) as st:
        # the format-time settings come back from the superzone record
        assert (st.config()["nr_metazones"], st.config()["placement"]) == (2, "guided")
        assert st.read(cid) == data
        assert st.chunk(cid)["sealed"] and not st.chunk(small)["sealed"]
        assert st.stats()["datazones"] == 8
        assert st.fsck()["clean"]
    out = subprocess.run([cli, "store", "ls", str(dev), "-O", "json"], check=True, capture_output=True, text=True)
    rows = {r["id"]: r for r in json.loads(out.stdout)}
    assert rows[cid]["length"] == len(data) and rows[small]["stream"] == "gc"
    got = subprocess.run([cli, "store", "get", str(dev), cid], check=True, capture_output=True).stdout
    assert got == data
    # format wipes it; a CLI-formatted store opens with the CLI's pools and placement
    with ChunkStore.format(dev, metazones=2) as st:
        assert st.list() == []
    subprocess.run([cli, "store", "format", str(dev), "--force", "--pools", "1,2,1", "--placement", "one-zone"], check=True)
    with ChunkStore.open(dev) as st:
        c = st.config()
        assert (c["pool_gc"], c["pool_data"], c["pool_metadata"], c["placement"]) == (1, 2, 1, "one-zone")
    # overrides win
    with ChunkStore.open(dev, placement="guided", durability="batched") as st:
        assert (st.config()["placement"], st.config()["durability"]) == ("guided", "batched")


def test_corrupted_device_file_fsck_names_the_problem_and_read_raises(tmp_path):
    dev = tmp_path / "dev.zbd"
    data = pattern(9, 200_000)
    with ChunkStore.create_file(dev, zones=10, zone_size=1 << 20) as st:
        cid = st.create()
        st.append(cid, data)
    img = bytearray(dev.read_bytes())
    at = img.find(data[100_000:100_064])
    assert at > 0
    img[at + 10] ^= 0x01
    dev.write_bytes(bytes(img))
    with ChunkStore.open(dev) as st:
        rep = st.fsck()
        assert not rep["clean"]
        assert all(p["chunk"] == cid for p in rep["problems"])
        assert any(p["chunk_offset"] == 98_304 and p["zone"] > 0 for p in rep["problems"]), rep
        assert st.read(cid, 0, 4096) == data[:4096]  # undamaged slices still read
        with pytest.raises(CorruptionError, match=f"corrupt data of chunk {cid} at chunk offset 98304"):
            st.read(cid)
        assert issubclass(CorruptionError, StoreError) and issubclass(StoreError, shingled.ShingledError)



def test_read_only_open_writes_nothing_and_refuses_changes(tmp_path):
    import hashlib

    dev = tmp_path / "dev.zbd"
    data = pattern(5, 120_000)
    with ChunkStore.create_file(dev, zones=10, zone_size=1 << 20) as st:
        cid = st.create()
        st.append(cid, data)
    # An unclean end (no checkpoint after these appends): the open has to scan for them.
    st = ChunkStore.open(dev, durability="batched")
    st.append(cid, pattern(6, 30_000))
    st.sync()
    del st  # dropped without close: no checkpoint after the appends
    img = bytearray(dev.read_bytes())
    at = img.find(data[50_000:50_064])
    img[at + 7] ^= 0x10  # and a damaged slice
    dev.write_bytes(bytes(img))
    digest = hashlib.sha256(dev.read_bytes()).hexdigest()
    with ChunkStore.open(dev, read_only=True, scan_buffer_bytes=8192) as ro:
        assert ro.read_only and ro.config()["scan_buffer_bytes"] == 8192
        assert ro.chunk(cid)["length"] == 150_000
        rep = ro.fsck()
        assert not rep["clean"] and any(p["chunk_offset"] == 49_152 for p in rep["problems"]), rep
        assert ro.read(cid, 100_000, 50_000) == data[100_000:] + pattern(6, 30_000)
        for call in (
            lambda: ro.create(),
            lambda: ro.append(cid, b"x"),
            lambda: ro.seal(cid),
            lambda: ro.delete(cid),
            lambda: ro.sync(),
            lambda: ro.checkpoint(),
            lambda: ro.gc(),
        ):
            with pytest.raises(ReadOnlyError, match="read-only"):
                call()
        ro.reopen()
        assert ro.read_only and len(ro) == 1
    assert issubclass(ReadOnlyError, StoreError)
    assert hashlib.sha256(dev.read_bytes()).hexdigest() == digest
    # a read-write open does write (its closing checkpoint)
    ChunkStore.open(dev).close()
    assert hashlib.sha256(dev.read_bytes()).hexdigest() != digest

def test_bad_arguments_raise_typed_exceptions(tmp_path, cli):
    st = ChunkStore.in_memory()
    with pytest.raises(ValueError, match="expected 24 bytes, got 3"):
        st.create(b"abc")
    with pytest.raises(ValueError, match="48 hex digits"):
        st.read("xyz")
    with pytest.raises(TypeError, match="chunk id must be bytes"):
        st.seal(42)
    with pytest.raises(ValueError, match="stream 'video'"):
        st.create(ID, stream="video")
    with pytest.raises(NoSuchChunk, match=f"no chunk {ID.hex()}"):
        st.append(ID, b"x")
    st.create(ID)
    with pytest.raises(StoreError, match="already exists"):
        st.create(ID.hex())
    with pytest.raises(StoreError, match="beyond its length"):
        st.read(ID, 0, 1)
    with pytest.raises(ValueError, match="must not be negative"):
        st.read(ID, -1)
    with pytest.raises(TypeError, match="bytes-like"):
        st.append(ID, "text")
    st.seal(ID)
    with pytest.raises(StoreError, match="is sealed"):
        st.append(ID, b"x")
    with pytest.raises(shingled.ConfigError, match='unknown store configuration field "colour"'):
        ChunkStore.in_memory(colour="red")
    with pytest.raises(shingled.ConfigError, match="placement"):
        ChunkStore.in_memory(placement="random")
    with pytest.raises(shingled.ConfigError, match="nr_metazones 1 < 2"):
        ChunkStore.in_memory(metazones=1)
    with pytest.raises(ValueError, match="pools"):
        ChunkStore.in_memory(pools=(1, 2))
    with pytest.raises(StoreError, match="missing.zbd"):
        ChunkStore.open(tmp_path / "missing.zbd")
    blank = tmp_path / "blank.zbd"
    subprocess.run([cli, "zone", "create", str(blank), "--zones", "8", "--zone-size", "1MiB"], check=True)
    with pytest.raises(StoreError, match="not a shingled store") as e:
        ChunkStore.open(blank)
    assert not isinstance(e.value, CorruptionError)
    with pytest.raises(StoreError, match="blank.zbd"):
        ChunkStore.create_file(blank, zones=8, zone_size=1 << 20)  # exists
    st.close()
    with pytest.raises(StoreError, match="closed"):
        st.stats()
    st.close()  # idempotent


@settings(max_examples=40, deadline=None)
@given(
    st_ops=hst.lists(
        hst.one_of(
            hst.tuples(hst.just("create"), hst.integers(0, 5), hst.sampled_from(["data", "metadata", "gc"])),
            hst.tuples(hst.just("append"), hst.integers(0, 5), hst.binary(min_size=1, max_size=9000)),
            hst.tuples(hst.just("seal"), hst.integers(0, 5)),
            hst.tuples(hst.just("delete"), hst.integers(0, 5)),
            hst.tuples(hst.just("read"), hst.integers(0, 5), hst.integers(0, 20_000), hst.integers(0, 20_000)),
            hst.tuples(hst.just("reopen"),),
            hst.tuples(hst.just("gc"),),
        ),
        max_size=40,
    )
)
def test_store_matches_a_dict_model_with_crash_reopens(st_ops):
    store = ChunkStore.in_memory(zones=16, zone_size=256 << 10, metazones=2, pools=(1, 2, 1))
    model = {}  # hex id -> [bytearray, sealed]
    ids = [bytes(23) + bytes([k]) for k in range(6)]
    for op in st_ops:
        kind = op[0]
        if kind == "create":
            cid = ids[op[1]]
            if cid.hex() in model:
                with pytest.raises(StoreError, match="already exists"):
                    store.create(cid, op[2])
            else:
                store.create(cid, op[2])
                model[cid.hex()] = [bytearray(), False]
        elif kind == "append":
            cid = ids[op[1]].hex()
            if cid not in model:
                with pytest.raises(NoSuchChunk):
                    store.append(cid, op[2])
            elif model[cid][1]:
                with pytest.raises(StoreError, match="sealed"):
                    store.append(cid, op[2])
            else:
                store.append(cid, op[2])
                model[cid][0] += op[2]
        elif kind == "seal":
            cid = ids[op[1]].hex()
            if cid in model:
                store.seal(cid)
                model[cid][1] = True
            else:
                with pytest.raises(NoSuchChunk):
                    store.seal(cid)
        elif kind == "delete":
            cid = ids[op[1]].hex()
            if cid in model:
                store.delete(cid)
                del model[cid]
            else:
                with pytest.raises(NoSuchChunk):
                    store.delete(cid)
        elif kind == "read":
            cid = ids[op[1]].hex()
            if cid in model:
                data = bytes(model[cid][0])
                off = op[2] % (len(data) + 1)
                n = min(op[3], len(data) - off)
                assert store.read(cid, off, n) == data[off : off + n]
            else:
                with pytest.raises(NoSuchChunk):
                    store.read(cid)
        elif kind == "reopen":
            store.reopen()
        else:
            store.gc()
        rows = store.list()
        assert [(r["id"], r["length"], r["sealed"]) for r in rows] == [
            (k, len(v[0]), v[1]) for k, v in sorted(model.items())
        ]
    assert store.fsck()["clean"]


def test_gc_reclaims_a_zone_and_counts_the_bytes_it_moved():
    # one data zone at a time, no automatic GC: A and B share the first datazone, C fills it
    st = ChunkStore.in_memory(metazones=2, pools=(1, 1, 1), gc_free_zones=0)
    for k, n in [(1, 10_000), (2, 200_000), (3, 100_000)]:
        st.create(bytes(23) + bytes([k]))
        st.append(bytes(23) + bytes([k]), pattern(k, n))
    st.delete(bytes(23) + b"\x02")
    st.delete(bytes(23) + b"\x03")
    assert st.stats()["zones_by_state"]["full"] == 1
    assert st.gc() == 3  # device zone 3: the first datazone
    s = st.stats()
    assert (s["gc_bytes_migrated"], s["gc_zones_reclaimed"], s["zones_by_state"]["full"]) == (10_000, 1, 0)
    assert st.read(bytes(23) + b"\x01") == pattern(1, 10_000)
    assert st.gc() is None


def test_threads_share_one_store():
    st = ChunkStore.in_memory(zones=32, durability="batched")
    ids = [st.create(bytes(23) + bytes([k])) for k in range(8)]

    def work(k: int) -> None:
        for j in range(20):
            st.append(ids[k], pattern(k * 100 + j, 500))

    with ThreadPoolExecutor(4) as ex:
        list(ex.map(work, range(8)))
    st.sync()
    st.reopen()
    for k in range(8):
        assert st.read(ids[k]) == b"".join(pattern(k * 100 + j, 500) for j in range(20))


def test_store_front_three_drives_in_memory():
    # StoreConfig::small(): the configuration of the Rust test with the hand-checked table
    with StoreFront.in_memory(drives=3, metazones=2, pools=(1, 2, 1)) as f:
        ids = []
        for k in range(1, 11):  # each chunk gets its bytes before the next is placed
            ids.append(f.create(bytes(23) + bytes([k])))
            f.append(ids[-1], pattern(k, k * 1000))
        # placement worked out by hand in crates/store/src/front/tests.rs (three_drives_ten_chunks_…)
        assert [f.drive_of(c) for c in ids] == [2, 1, 0, 2, 1, 0, 2, 1, 0, 2]
        s = f.stats()
        assert [d["live_bytes"] for d in s["drives"]] == [18_000, 15_000, 22_000]
        assert s["total"]["chunks"] == 10 and s["total"]["free_zones"] == 3 * 11
        f.reopen()
        assert [r["drive"] for r in f.list()] == [2, 1, 0, 2, 1, 0, 2, 1, 0, 2]
        assert f.read(ids[4]) == pattern(5, 5000)
        assert all(r["clean"] for r in f.fsck())
        f.delete(ids[0])
        with pytest.raises(NoSuchChunk, match="no chunk"):
            f.read(ids[0])
        f.seal(ids[1])
        with pytest.raises(StoreError, match=r"drive 1: chunk .* is sealed"):
            f.append(ids[1], b"x")
        assert f.list(as_frame=True).loc[ids[1], "drive"] == 1


def test_store_front_opens_cli_formatted_drives_in_any_order(tmp_path, cli):
    devs = [str(tmp_path / f"d{i}.zbd") for i in range(3)]
    subprocess.run(
        [cli, "store", "format", devs[0], "-d", devs[1], "-d", devs[2], "--create", "--zones", "8", "--zone-size", "1MiB"],
        check=True,
        capture_output=True,
    )
    with StoreFront.open(devs) as f:
        ids = [f.create() for _ in range(6)]
        for k, cid in enumerate(ids):
            f.append(cid, pattern(k, 20_000))
        where = {cid: f.drive_of(cid) for cid in ids}
    with StoreFront.open(devs[::-1]) as f:  # reversed: drive i is now 2 - i
        assert {cid: f.drive_of(cid) for cid in ids} == {c: 2 - d for c, d in where.items()}
        assert [f.read(cid) for cid in ids] == [pattern(k, 20_000) for k in range(6)]
    with pytest.raises(ValueError, match="given twice"):
        StoreFront.open([devs[0], devs[1], str(tmp_path / "." / "d0.zbd")])
    out = subprocess.run(
        [cli, "store", "ls", devs[0], "-d", devs[1], "-d", devs[2], "-O", "json"], check=True, capture_output=True, text=True
    ).stdout
    assert sorted(r["id"] for r in json.loads(out)) == sorted(ids)


def test_a_forked_child_cannot_use_the_parents_store(tmp_path):
    """Appends from a forked child used to vanish silently (fsck clean); now the child gets a
    StoreError and the parent's store is untouched."""
    import os

    st = shingled.ChunkStore.create_file(tmp_path / "d.zbd", zones=12, zone_size=1 << 20)
    cid = st.create()
    st.append(cid, b"parent")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            st.append(cid, b"child")
            os.write(w, b"appended")
        except shingled.StoreError as e:
            os.write(w, b"refused" if "forked child" in str(e) else b"other")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(r, 100) == b"refused"
    assert st.read(cid) == b"parent"
    st.close()


def test_create_returns_the_id_that_list_gives():
    # A str id may carry spaces or capitals: create() returns the canonical form.
    with ChunkStore.in_memory(zones=16, zone_size=256 << 10) as st:
        padded = "  " + ("AB" * 24) + "\n"
        cid = st.create(padded)
        assert cid == "ab" * 24
        assert cid in [c["id"] for c in st.list()]


def test_zoned_device_errors_raise_zoned_error(tmp_path):
    """A device file that cannot be used (missing, not a zoned device, corrupt, already there)
    raises ZonedError: a StoreError, as these errors were before they had a class of their
    own, and pickled by name as every shingled error."""
    import pickle

    ZonedError = shingled.ZonedError
    assert issubclass(ZonedError, StoreError) and issubclass(ZonedError, shingled.ShingledError)
    assert shingled._core.ZonedError is ZonedError and "ZonedError" in shingled.__all__
    e = pickle.loads(pickle.dumps(ZonedError("x")))
    assert type(e) is ZonedError and str(e) == "x" and ZonedError.__module__ == "shingled"

    with pytest.raises(ZonedError, match="missing.zbd"):
        ChunkStore.open(tmp_path / "missing.zbd")
    with pytest.raises(ZonedError, match="missing.zbd"):
        StoreFront.open([tmp_path / "missing.zbd"])
    junk = tmp_path / "junk.zbd"
    junk.write_bytes(b"not a zoned device\n" * 1000)
    for call in (lambda: ChunkStore.open(junk), lambda: ChunkStore.format(junk), lambda: StoreFront.open([junk])):
        with pytest.raises(ZonedError, match="junk.zbd is not a zoned device file"):
            call()
    with pytest.raises(ZonedError, match="junk.zbd: File exists"):
        ChunkStore.create_file(junk, zones=8, zone_size=1 << 20)
    dev = tmp_path / "cut.zbd"
    ChunkStore.create_file(dev, zones=8, zone_size=1 << 20).close()
    with open(dev, "r+b") as f:
        f.truncate(4096)
    for call in (lambda: ChunkStore.open(dev), lambda: StoreFront.open([dev], read_only=True)):
        with pytest.raises(ZonedError, match="cut.zbd: corrupt zoned device file") as e:
            call()
        assert not isinstance(e.value, CorruptionError)  # the device's header, not the store's data


def test_core_class_names_match_the_python_ones():
    # `_core.StoreFront` was `_core.ChunkFront`; both classes extend `_core._ChunkApi` as the
    # Python classes extend `shingled.store._ChunkApi`.
    core = shingled._core
    assert core.StoreFront.__name__ == "StoreFront" and not hasattr(core, "ChunkFront")
    assert core.StoreFront.__base__ is core._ChunkApi and core.ChunkStore.__base__ is core._ChunkApi
    with StoreFront.in_memory() as f, ChunkStore.in_memory() as st:
        assert type(f._inner) is core.StoreFront and type(st._inner) is core.ChunkStore
        assert isinstance(f.create(ID), str) and f.drive_of(ID) in (0, 1, 2) and f.gc() == [None, None, None]
        assert st.create(ID) == ID.hex() and st.gc() is None and not hasattr(st._inner, "drive_of")
    with pytest.raises(StoreError, match="the store front is closed"):
        f.stats()
    with pytest.raises(StoreError, match="the chunk store is closed"):
        st.stats()


def test_offsets_lengths_and_counts_are_checked_before_allocating(tmp_path):
    # A zone count the device tables cannot hold aborted the interpreter (a failed allocation).
    with ChunkStore.in_memory() as st:
        st.create(ID)
        st.append(ID, b"hello")
        for offset, length in [(0, 2**63), (2**63, 1), (2**64 - 1, 1), (3, 2**40)]:
            with pytest.raises(StoreError, match="beyond its length"):
                st.read(ID, offset, length)
    with pytest.raises(ValueError, match=r"zones = 1099511627776: at most"):
        ChunkStore.in_memory(zones=2**40, zone_size=4 << 20)
    with pytest.raises(ValueError, match="overflows"):
        ChunkStore.in_memory(zones=16, zone_size=2**62)
    with pytest.raises(ValueError, match=r"zones = 1099511627776: at most"):
        ChunkStore.create_file(tmp_path / "big.zbd", zones=2**40, zone_size=4 << 20)
    assert not (tmp_path / "big.zbd").exists()
    with pytest.raises(ValueError, match=r"drives = 1099511627776: at most"):
        StoreFront.in_memory(drives=2**40)
