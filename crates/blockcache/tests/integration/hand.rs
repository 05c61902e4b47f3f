//! Small cases worked out by hand: LRU, capacity 2, three physical slots (one in reserve).

use crate::common::*;
use shingled_blockcache::{CachedDevice, Mode};
use shingled_stl::{BlockDevice, MemBlock};

const A: u64 = 10;
const B: u64 = 11;
const C: u64 = 12;

fn write(d: &mut CachedDevice<MemBlock, MemBlock>, b: u64, id: u64) {
    d.write(b, &pattern(id, b)).unwrap();
}

fn backing_id(d: &mut CachedDevice<MemBlock, MemBlock>, b: u64) -> u64 {
    let (_, backing) = d.devices_mut();
    read_id(backing, b, "backing")
}

/// Write-back with LRU: hits, evictions in LRU order, write-backs with the victim's bytes,
/// victim slots reused only when nothing durable names them, forced commits.
#[test]
fn lru_write_back_by_hand() {
    let mut d = mem_cache(&options(Mode::ReadWrite, "lru", 2, 3), 64);
    // Free slots are used lowest first.
    // 1. write A=1: miss, A dirty in slot 0.      LRU order (oldest first): A
    write(&mut d, A, 1);
    // 2. write B=2: miss, B dirty in slot 1.      A B
    write(&mut d, B, 2);
    assert_eq!((d.slot_of(A), d.slot_of(B)), (Some(0), Some(1)));
    // 3. read A: hit.                             B A
    assert_eq!(read_id(&mut d, A, "3"), 1);
    // 4. write C=3: miss; full: B (LRU, dirty) is evicted: its bytes are read from slot 1 and
    //    written to the backing device. Nothing durable names slot 1 yet (no commit so far), so
    //    C takes it at once.                      A C
    write(&mut d, C, 3);
    assert_eq!(backing_id(&mut d, B), 2);
    assert_eq!((d.slot_of(B), d.slot_of(C)), (None, Some(1)));
    let s = d.stats();
    assert_eq!((s.read_hits, s.write_misses, s.dirty_evictions, s.commits), (1, 3, 1, 0));
    // 5. flush: one commit: backing flush (B's write-back), cache flush (slot data), record
    //    block 0 (A in 0, C in 1, both dirty), cache flush.
    d.flush().unwrap();
    let s = d.stats();
    assert_eq!((s.commits, s.metadata_blocks_written, s.backing_flushes, s.cache_flushes), (1, 1, 1, 2));
    // 6. write B=4: miss; A (LRU) evicted, written back. Slot 0's durable record names A, so it
    //    is pending; B takes the reserve slot 2.   C B
    write(&mut d, B, 4);
    assert_eq!(backing_id(&mut d, A), 1);
    assert_eq!((d.slot_of(A), d.slot_of(B)), (None, Some(2)));
    // 7. write A=5: miss; C (LRU) evicted, written back; its slot 1 is pending too and no slot
    //    is ready: a forced commit writes the free records of slots 0 and 1 (after flushing the
    //    backing device holding A's and C's write-backs); A takes slot 1 — C's old slot, whose
    //    bytes were read (and written back) before.  B A
    write(&mut d, A, 5);
    assert_eq!(backing_id(&mut d, C), 3);
    assert_eq!(d.slot_of(A), Some(1));
    let s = d.stats();
    assert_eq!((s.forced_commits, s.commits, s.dirty_evictions), (1, 2, 3));
    // 8. read C: miss, 3 from the backing device, inserted clean; B (LRU) evicted, written back;
    //    C takes slot 0.                          A C
    assert_eq!(read_id(&mut d, C, "8"), 3);
    assert_eq!(backing_id(&mut d, B), 4);
    assert_eq!(d.slot_of(C), Some(0));
    // 9. read B: miss, 4 from the backing device; A (LRU) evicted, written back. A entered
    //    slot 1 after step 7's commit, so nothing durable names slot 1: it is ready at once and
    //    B takes it. Slot 2 (durable record: B dirty) stays pending.   C B
    assert_eq!(read_id(&mut d, B, "9"), 4);
    assert_eq!(backing_id(&mut d, A), 5);
    assert_eq!((d.slot_of(B), d.slot_of(C)), (Some(1), Some(0)));
    let s = d.stats();
    assert_eq!((s.read_hits, s.read_misses, s.write_hits, s.write_misses), (1, 2, 0, 5), "hits and misses");
    assert_eq!((s.clean_evictions, s.dirty_evictions, s.forced_commits, s.commits), (0, 5, 1, 2));
    assert_eq!((s.cached_blocks, s.dirty_blocks), (2, 0));
    // flush: records C clean in 0, B clean in 1, slot 2 free (after the backing flush that
    // makes the write-backs of A and B durable).
    d.flush().unwrap();
    assert_eq!(d.stats().commits, 3);
    // 10. write C=6: hit. The commit recorded C clean in slot 0, so the new bytes go to a fresh
    //     slot (2) and slot 0 waits, pending, for a commit.   B C
    write(&mut d, C, 6);
    assert_eq!(d.slot_of(C), Some(2));
    assert_eq!(read_id(&mut d, C, "10"), 6);
    assert_eq!(backing_id(&mut d, C), 3, "not written back yet");
    // 11. write C=7: hit; slot 2's durable record is free, so in place.
    write(&mut d, C, 7);
    assert_eq!(d.slot_of(C), Some(2));
    let s = d.stats();
    assert_eq!((s.write_hits, s.read_hits, s.dirty_blocks), (2, 2, 1));
    assert_eq!(d.dirty_blocks(), vec![C]);
    // Close and reopen: C dirty, B clean, recovered from the records.
    let (cache, backing) = d.close().unwrap();
    let mut d = CachedDevice::open(cache, backing).unwrap();
    assert_eq!(d.dirty_blocks(), vec![C]);
    assert_eq!((d.slot_of(B), d.slot_of(C)), (Some(1), Some(2)));
    assert_eq!(read_id(&mut d, C, "reopened"), 7);
    assert_eq!(read_id(&mut d, A, "reopened"), 5);
    assert_eq!(read_id(&mut d, B, "reopened"), 4);
}

/// Read-only mode: writes go around the cache; a cached copy is invalidated, and one recorded
/// clean is retired (its free record made durable) before the backing write.
#[test]
fn read_only_write_around_retires_the_clean_copy() {
    let mut backing = MemBlock::new(64);
    backing.write(A, &pattern(1, A)).unwrap();
    let opts = options(Mode::ReadOnly, "lru", 2, 3);
    let mut d = CachedDevice::format(MemBlock::new(cache_blocks_for(3)), backing, &opts).unwrap();
    // read A: miss, cached clean in slot 0.
    assert_eq!(read_id(&mut d, A, "1"), 1);
    assert_eq!(d.slot_of(A), Some(0));
    // flush: the record (A clean, slot 0) becomes durable.
    d.flush().unwrap();
    // write A=2: A invalidated; slot 0's durable record says A clean and the backing device is
    // about to change: the free record is written and flushed first (one retirement).
    write(&mut d, A, 2);
    assert_eq!(d.slot_of(A), None);
    assert_eq!(backing_id(&mut d, A), 2);
    let s = d.stats();
    assert_eq!((s.retirements, s.write_misses, s.write_hits, s.read_misses), (1, 1, 0, 1));
    // write B=3: not cached, straight to the backing device; nothing to retire.
    write(&mut d, B, 3);
    assert_eq!(d.stats().retirements, 1);
    // read A: miss, cached again — in slot 0, ready again since its retirement.
    assert_eq!(read_id(&mut d, A, "2"), 2);
    assert_eq!(d.slot_of(A), Some(0));
    assert_eq!(d.stats().dirty_blocks, 0);
}

/// Write-cache mode: reads that miss pass through without being cached; write-only mode: reads
/// are served but the policy never sees them.
#[test]
fn write_cache_and_write_only_reads() {
    let mut d = mem_cache(&options(Mode::WriteCache, "lru", 2, 3), 64);
    write(&mut d, A, 1);
    assert_eq!(read_id(&mut d, B, "miss"), 0);
    assert_eq!(d.slot_of(B), None, "a read miss is not cached");
    assert_eq!(read_id(&mut d, A, "hit"), 1);
    let s = d.stats();
    assert_eq!((s.read_hits, s.read_misses, s.write_misses, s.cached_blocks), (1, 1, 1, 1));

    let mut d = mem_cache(&options(Mode::WriteOnly, "lru", 2, 3), 64);
    write(&mut d, A, 1);
    write(&mut d, B, 2);
    // Reading A would make B the LRU block; write-only mode hides reads from the policy, so A
    // stays the LRU block and is the one evicted by C.
    assert_eq!(read_id(&mut d, A, "unaccounted"), 1);
    write(&mut d, C, 3);
    assert_eq!((d.slot_of(A), d.slot_of(B).is_some()), (None, true));
    assert_eq!(read_id(&mut d, A, "from backing"), 1);
    let s = d.stats();
    assert_eq!((s.read_hits, s.read_misses, s.unaccounted_reads, s.dirty_evictions), (0, 0, 2, 1));
}

/// Sequential bypass: once a stream has moved the cutoff, its uncached blocks go straight to the
/// backing device; cached blocks still go through the cache.
#[test]
fn sequential_bypass() {
    let mut opts = options(Mode::ReadWrite, "lru", 4, 6);
    opts.setup.sequential_cutoff = Some(4 * 4096);
    let mut d = mem_cache(&opts, 64);
    // 0..2 (8 KiB): below the cutoff, cached.
    d.write(0, &data_of(0, &[1, 2])).unwrap();
    assert_eq!(d.stats().cached_blocks, 2);
    // 2..5 continues the stream: 20 KiB >= 16 KiB, bypassed.
    d.write(2, &data_of(2, &[3, 4, 5])).unwrap();
    let s = d.stats();
    assert_eq!((s.cached_blocks, s.bypassed_requests, s.bypassed_blocks), (2, 1, 3));
    assert_eq!(backing_id(&mut d, 3), 4);
    // A 6-block write at 1 is a new stream of 24 KiB: bypassed, but block 1 is cached and is
    // written in the cache (a write hit), the others (2..7) go around.
    d.write(1, &data_of(1, &[6, 7, 8, 9, 10, 11])).unwrap();
    let s = d.stats();
    assert_eq!((s.bypassed_requests, s.bypassed_blocks, s.write_hits), (2, 8, 1));
    assert_eq!(backing_id(&mut d, 1), 0, "block 1 is dirty in the cache");
    let mut buf = vec![0u8; 7 * 4096];
    d.read(0, &mut buf).unwrap();
    let ids: Vec<u64> = (0..7).map(|i| decode(&buf[i * 4096..(i + 1) * 4096], i as u64, "bypass")).collect();
    assert_eq!(ids, vec![1, 6, 7, 8, 9, 10, 11]);
    // Off: no bypass.
    d.set_sequential_cutoff(None);
    d.write(20, &data_of(20, &[12, 13, 14, 15, 16])).unwrap();
    assert_eq!(d.stats().bypassed_requests, 3, "the read above was bypassed too");
    assert!(d.slot_of(24).is_some());
}

/// The cleaner and detach: dirty blocks written back, the backing device alone complete, the
/// detached cache refused.
#[test]
fn clean_and_detach() {
    let mut d = mem_cache(&options(Mode::ReadWrite, "lru", 3, 4), 64);
    write(&mut d, A, 1);
    write(&mut d, B, 2);
    assert_eq!(read_id(&mut d, 40, "clean miss"), 0);
    assert_eq!(d.clean().unwrap(), 2);
    let s = d.stats();
    assert_eq!((s.dirty_blocks, s.cached_blocks, s.cleaner_writebacks), (0, 3, 2));
    assert_eq!((backing_id(&mut d, A), backing_id(&mut d, B)), (1, 2));
    // Still cached, clean; LRU order kept (40 was read last): C evicts A.
    write(&mut d, C, 3);
    assert_eq!((d.slot_of(A), d.slot_of(B).is_some(), d.stats().clean_evictions), (None, true, 1));
    let (mut backing, cache) = d.detach().unwrap();
    for (b, id) in [(A, 1), (B, 2), (C, 3)] {
        assert_eq!(read_id(&mut backing, b, "detached"), id);
    }
    let e = CachedDevice::open(cache, backing).err().expect("a detached cache is refused");
    assert!(e.to_string().contains("detached"), "{e}");
}

/// Discard: cached blocks are zeroed through the cache, the rest discarded on the backing device.
#[test]
fn discard_reads_zeros() {
    let mut d = mem_cache(&options(Mode::ReadWrite, "lru", 3, 4), 64);
    d.write(0, &data_of(0, &[1, 2, 3, 4, 5, 6])).unwrap();
    d.flush().unwrap();
    d.discard(1, 4).unwrap();
    let ids: Vec<u64> = (0..6).map(|b| read_id(&mut d, b, "discard")).collect();
    assert_eq!(ids, vec![1, 0, 0, 0, 0, 6]);
    assert_eq!(d.stats().discarded_blocks, 4);
}

/// Bad requests, a failing device, a wrong backing device, an unformatted cache device.
#[test]
fn errors_name_the_problem() {
    let mut d = mem_cache(&options(Mode::ReadWrite, "lru", 2, 3), 8);
    assert!(d.write(7, &vec![0u8; 2 * 4096]).is_err(), "past the end");
    assert!(d.read(0, &mut [0u8; 100]).is_err(), "not whole blocks");
    assert!(d.discard(6, 3).is_err());
    d.write(0, &pattern(1, 0)).unwrap();
    let (cache, _) = d.close().unwrap();
    let e = CachedDevice::open(cache, MemBlock::new(9)).err().unwrap();
    assert!(e.to_string().contains("9 blocks"), "{e}");
    let e = CachedDevice::open(MemBlock::new(10), MemBlock::new(8)).err().unwrap();
    assert!(e.to_string().contains("format"), "{e}");
    let mut opts = options(Mode::ReadWrite, "lru", 3, 3);
    assert!(CachedDevice::format(MemBlock::new(5), MemBlock::new(8), &opts).is_err(), "no reserve slot");
    opts.setup.policy = "lru-band".parse().unwrap();
    opts.setup.bands = None;
    opts.capacity = Some(2);
    let e = CachedDevice::format(MemBlock::new(5), MemBlock::new(8), &opts).err().unwrap();
    assert!(e.to_string().contains("lru-band"), "a policy that cannot build: {e}");

    // A device that dies: the request fails, and so does every later one until the cache is
    // opened again.
    let opts = options(Mode::ReadWrite, "lru", 2, 3);
    let (c, b, world) = CutDev::pair(Default::default(), [cache_blocks_for(3), 8]);
    let mut d = CachedDevice::format(c, b, &opts).unwrap();
    d.write(0, &pattern(1, 0)).unwrap();
    d.flush().unwrap();
    let ops = world.borrow().ops;
    world.borrow_mut().fail_after = Some(ops);
    assert!(d.write(1, &pattern(2, 1)).is_err());
    world.borrow_mut().fail_after = None;
    let e = d.read(0, &mut vec![0u8; 4096]).err().unwrap();
    assert!(e.to_string().contains("open it again"), "{e}");
    let (c, b) = d.into_devices();
    let mut d = CachedDevice::open(c, b).unwrap();
    assert_eq!(read_id(&mut d, 0, "reopened"), 1);
}
