//! The shingled media: the poison rules on every implementation, the file medium's reopen,
//! power cuts at every storage operation, damaged files, and modelled time.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use shingled_device::HddConfig;
use shingled_stl::file_medium::{FileMedium, HEADER_SLOT, TABLE_BLOCK};
use shingled_stl::{Geometry, MediumZone, MemMedium, StlError, Timed, TrackMedium, POISON};
use shingled_zoned::{SimStorage, Storage, Survivors};

/// Two zones: five 8 KiB tracks, four 4 KiB tracks; a write covers three tracks; the first
/// track of the medium is unshingled.
fn geo() -> Geometry {
    Geometry {
        zones: vec![MediumZone { tracks: 5, track_bytes: 8192 }, MediumZone { tracks: 4, track_bytes: 4096 }],
        head_width: 3,
        unshingled_tracks: 1,
    }
}

fn poisoned(m: &impl TrackMedium) -> Vec<u64> {
    (0..m.geometry().tracks()).filter(|&t| m.is_poisoned(t)).collect()
}

fn read_track<M: TrackMedium>(m: &mut M, t: u64) -> Result<Vec<u8>, StlError> {
    let mut buf = vec![0u8; m.geometry().track_bytes(t) as usize];
    m.read(t, 0, &mut buf).map(|()| buf)
}

fn by_of(r: Result<Vec<u8>, StlError>) -> Option<u64> {
    match r {
        Err(StlError::Poisoned { by, .. }) => Some(by),
        _ => None,
    }
}

/// The poison rules, the same for every medium.
fn poison_rules<M: TrackMedium>(m: &mut M) {
    assert_eq!(m.geometry(), &geo());
    assert_eq!(poisoned(m), Vec::<u64>::new());
    assert_eq!(read_track(m, 3).unwrap(), vec![0u8; 8192], "never written: zeros");
    // The unshingled first track destroys nothing.
    m.write(0, 0, &[1u8; 8192]).unwrap();
    assert_eq!(poisoned(m), Vec::<u64>::new());
    // Track 1 destroys 2 and 3.
    m.write(1, 0, &[2u8; 8192]).unwrap();
    assert_eq!(poisoned(m), vec![2, 3]);
    assert_eq!(by_of(read_track(m, 2)), Some(1));
    assert_eq!(by_of(read_track(m, 3)), Some(1));
    let mut small = [0u8; 512];
    assert!(matches!(m.read(3, 4096, &mut small), Err(StlError::Poisoned { track: 3, by: 1, .. })));
    // A partial write leaves track 2 poisoned and destroys 3 and 4 (4 ends zone 0).
    m.write(2, 0, &[3u8; 4096]).unwrap();
    assert_eq!(poisoned(m), vec![2, 3, 4]);
    assert_eq!(by_of(read_track(m, 3)), Some(2));
    assert_eq!(by_of(read_track(m, 2)), Some(1));
    // A whole write heals it.
    m.write(2, 0, &[4u8; 8192]).unwrap();
    assert_eq!(poisoned(m), vec![3, 4]);
    assert_eq!(read_track(m, 2).unwrap(), vec![4u8; 8192]);
    // The last track of a zone destroys nothing across the guard region.
    m.write(4, 0, &[5u8; 8192]).unwrap();
    assert_eq!(poisoned(m), vec![3]);
    m.write(5, 0, &[6u8; 4096]).unwrap();
    assert_eq!(poisoned(m), vec![3, 6, 7], "only the first track of the medium is unshingled");
    m.write(6, 0, &[7u8; 4096]).unwrap();
    assert_eq!(poisoned(m), vec![3, 7, 8]);
    m.write(7, 0, &[8u8; 4096]).unwrap();
    assert_eq!(poisoned(m), vec![3, 8]);
    assert_eq!(by_of(read_track(m, 8)), Some(7));
    // Partial writes of readable tracks patch them.
    m.write(0, 4096, &[9u8; 4096]).unwrap();
    let t0 = read_track(m, 0).unwrap();
    assert!(t0[..4096].iter().all(|&b| b == 1) && t0[4096..].iter().all(|&b| b == 9));
    m.read(0, 4000, &mut small).unwrap();
    assert!(small[..96].iter().all(|&b| b == 1) && small[96..].iter().all(|&b| b == 9));
    // Requests outside the medium or a track.
    assert!(matches!(m.write(9, 0, &[0u8; 4096]), Err(StlError::Range { .. })));
    assert!(matches!(m.write(5, 4096, &[0u8; 4096]), Err(StlError::Range { .. })));
    assert!(matches!(m.read(0, 8000, &mut small), Err(StlError::Range { .. })));
    assert_eq!(poisoned(m), vec![3, 8], "a refused request changes nothing");
    m.flush().unwrap();
    assert_eq!(read_track(m, 1).unwrap(), vec![2u8; 8192]);
    assert_eq!(read_track(m, 5).unwrap(), vec![6u8; 4096]);
}

#[test]
fn poison_rules_in_memory() {
    poison_rules(&mut MemMedium::new(geo()).unwrap());
}

#[test]
fn poison_rules_on_simulated_storage() {
    poison_rules(&mut FileMedium::create(SimStorage::new(), geo()).unwrap());
}

#[test]
fn poison_rules_in_a_file_and_reopen_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("medium");
    let mut m = FileMedium::create_file(&path, geo()).unwrap();
    poison_rules(&mut m);
    m.write(3, 0, &[10u8; 8192]).unwrap(); // heals 3, destroys 4
    m.flush().unwrap();
    let stats = m.stats();
    assert_eq!((stats.flushes, stats.poisoned), (2, 12));
    // Locked while open.
    assert!(matches!(FileMedium::open_file(&path), Err(StlError::Io { .. })));
    drop(m);
    let mut m = FileMedium::open_file(&path).unwrap();
    assert!(m.metadata_damage().is_empty(), "{:?}", m.metadata_damage());
    assert_eq!(m.geometry(), &geo());
    assert_eq!(poisoned(&m), vec![4, 8]);
    assert_eq!(by_of(read_track(&mut m, 4)), Some(3));
    assert_eq!(read_track(&mut m, 3).unwrap(), vec![10u8; 8192]);
    assert_eq!(read_track(&mut m, 2).unwrap(), vec![4u8; 8192]);
    assert_eq!(read_track(&mut m, 7).unwrap(), vec![8u8; 4096]);
    // The destroyed track holds the poison pattern in the file too.
    let at = m.data_offset() + geo().track_offset(8);
    let mut raw = vec![0u8; 4096];
    m.storage_mut().read_at(at, &mut raw).unwrap();
    assert!(raw.chunks(16).all(|c| c == POISON), "track 8 in the file is not poison");
    // Still a working medium after the reopen.
    m.write(8, 0, &[11u8; 4096]).unwrap();
    m.flush().unwrap();
    drop(m);
    let mut m = FileMedium::open_file(&path).unwrap();
    assert_eq!(poisoned(&m), vec![4]);
    assert_eq!(read_track(&mut m, 8).unwrap(), vec![11u8; 4096]);
    // Creating over an existing file is refused and leaves it alone.
    drop(m);
    assert!(matches!(FileMedium::create_file(&path, geo()), Err(StlError::Io { .. })));
    assert!(FileMedium::open_file(&path).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Power cuts
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Op {
    Write { track: u64, off: u32, len: u32 },
    Flush,
}

fn w(track: u64, off: u32, len: u32) -> Op {
    Op::Write { track, off, len }
}

/// Whole and partial writes, heals, re-destruction of flushed tracks, flushes, and an
/// unflushed tail.
fn script() -> Vec<Op> {
    vec![
        w(0, 0, 8192), // unshingled
        w(1, 0, 8192), // destroys 2, 3
        Op::Flush,
        w(2, 0, 8192), // heals 2, destroys 3, 4
        w(3, 0, 4096), // partial: 3 stays destroyed; destroys 4
        w(5, 0, 4096), // destroys 6, 7
        w(6, 0, 4096), // heals 6, destroys 7, 8
        Op::Flush,
        w(3, 0, 8192),    // heals 3, destroys 4
        w(0, 4096, 4096), // partial, unshingled
        w(7, 0, 4096),    // heals 7, destroys 8
        Op::Flush,
        w(1, 4096, 4096), // destroys the flushed 2 and 3 again
        w(4, 0, 8192),    // heals 4 (end of zone)
        w(8, 0, 4096),    // heals 8
        Op::Flush,
        w(2, 0, 8192),   // heals 2, destroys 3, 4
        w(5, 512, 1024), // partial, destroys 6, 7
        w(6, 0, 4096),   // heals 6, destroys 7, 8
        w(7, 0, 4096),   // heals 7, destroys 8
        w(3, 0, 8192),   // heals 3, destroys 4
        w(6, 0, 4096),   // destroys 7 (healed, not yet synced) and 8 again
        Op::Flush,       // the heal of 7 must not reach the table
        w(0, 0, 8192),   // unshingled, unflushed
    ]
}

const SECTOR: usize = 512;

/// What write `op` puts in sector `s` of `track`: a tag, then a pattern of the three.
fn sector_of(op: usize, track: u64, s: usize) -> Vec<u8> {
    let mut b = vec![0u8; SECTOR];
    b[0..4].copy_from_slice(&(op as u32 + 1).to_le_bytes());
    b[4..8].copy_from_slice(&(track as u32).to_le_bytes());
    b[8..12].copy_from_slice(&(s as u32).to_le_bytes());
    for (i, x) in b[12..].iter_mut().enumerate() {
        *x = (op * 31 + track as usize * 7 + s * 3 + i) as u8;
    }
    b
}

fn data_of(op: usize, track: u64, off: u32, len: u32) -> Vec<u8> {
    let (s0, n) = (off as usize / SECTOR, len as usize / SECTOR);
    (s0..s0 + n).flat_map(|s| sector_of(op, track, s)).collect()
}

/// Runs `ops` from `start`; returns how many completed (the next one, if any, failed).
fn run<M: TrackMedium>(m: &mut M, ops: &[Op]) -> usize {
    for (i, op) in ops.iter().enumerate() {
        let r = match *op {
            Op::Write { track, off, len } => m.write(track, off, &data_of(i, track, off, len)),
            Op::Flush => m.flush(),
        };
        if r.is_err() {
            return i;
        }
    }
    ops.len()
}

fn covers(op: &Op, track: u64, s: usize) -> Option<()> {
    match *op {
        Op::Write { track: t, off, len }
            if t == track && (off as usize / SECTOR..(off + len) as usize / SECTOR).contains(&s) =>
        {
            Some(())
        }
        _ => None,
    }
}

fn destroys(g: &Geometry, op: &Op, v: u64) -> bool {
    matches!(*op, Op::Write { track, .. } if g.overlapped(track).contains(&v))
}

/// Checks a medium reopened after a power cut. `done` operations of `ops` were acknowledged;
/// `inflight` says whether `ops[done]` was cut short.
fn check_after_cut(m: &mut FileMedium<SimStorage>, ops: &[Op], done: usize, inflight: bool, ctx: &str) {
    let g = geo();
    let issued = done + inflight as usize;
    // Whether the in-flight write left any of its bytes in the image.
    let inflight_reached = inflight
        && match ops[done] {
            Op::Write { track, off, len } => {
                let mut raw = vec![0u8; len as usize];
                let at = m.data_offset() + g.track_offset(track) + off as u64;
                m.storage_mut().read_at(at, &mut raw).unwrap();
                let want = data_of(done, track, off, len);
                raw.chunks(SECTOR).zip(want.chunks(SECTOR)).any(|(a, b)| a == b)
            }
            Op::Flush => false,
        };
    // The state at the last acknowledged flush, from the in-memory medium.
    let last_flush = ops[..done].iter().rposition(|o| matches!(o, Op::Flush));
    let mut model = MemMedium::new(g.clone()).unwrap();
    let upto = last_flush.map_or(0, |f| f + 1);
    assert_eq!(run(&mut model, &ops[..upto]), upto);
    for v in 0..g.tracks() {
        let tb = g.track_bytes(v) as usize;
        let got = read_track(m, v);
        // (a) A readable track holds nothing a later (acknowledged, or in-flight and
        // reaching the medium) write destroyed: every sector comes from a write of it after
        // the last destruction, or is a never-written zero.
        let last_destroyer =
            (0..issued).filter(|&i| destroys(&g, &ops[i], v) && (i < done || inflight_reached)).max();
        match &got {
            Ok(buf) => {
                for (s, sec) in buf.chunks(SECTOR).enumerate() {
                    let ok = (last_destroyer.is_none() && sec.iter().all(|&b| b == 0))
                        || (0..issued).any(|i| {
                            last_destroyer.is_none_or(|d| i > d)
                                && covers(&ops[i], v, s).is_some()
                                && sec == sector_of(i, v, s).as_slice()
                        });
                    assert!(
                        ok,
                        "{ctx}: track {v} sector {s} reads as valid data no surviving write put there \
                         (last destroyer {last_destroyer:?}; starts {:02x?})",
                        &sec[..16]
                    );
                }
            }
            Err(StlError::Poisoned { .. }) => {}
            Err(e) => panic!("{ctx}: track {v}: {e}"),
        }
        // (b) A track readable at the last flush and not destroyed since (not even possibly,
        // by the in-flight write) reads back what it held then, or what later writes of it
        // put there.
        if model.is_poisoned(v) || (upto..issued).any(|i| destroys(&g, &ops[i], v)) {
            continue;
        }
        let then = read_track(&mut model, v).unwrap();
        let buf = got.unwrap_or_else(|e| panic!("{ctx}: track {v}, readable at the last flush, fails: {e}"));
        assert_eq!(buf.len(), tb);
        for (s, sec) in buf.chunks(SECTOR).enumerate() {
            let ok = sec == &then[s * SECTOR..(s + 1) * SECTOR]
                || (upto..issued)
                    .any(|i| covers(&ops[i], v, s).is_some() && sec == sector_of(i, v, s).as_slice());
            assert!(ok, "{ctx}: track {v} sector {s} lost the data acknowledged before the last flush");
        }
    }
}

fn survivors() -> Vec<Survivors> {
    let mut s = vec![Survivors::None, Survivors::All];
    s.extend((1..=6).map(|seed| Survivors::Random { seed }));
    s
}

#[test]
fn power_cut_at_every_storage_operation() {
    let ops = script();
    // The clean run: how many storage operations the script makes, and the final state.
    let mut clean = FileMedium::create(SimStorage::new(), geo()).unwrap();
    let base = clean.storage().ops();
    assert_eq!(run(&mut clean, &ops), ops.len());
    let total = clean.storage().ops() - base;
    let mut mem = MemMedium::new(geo()).unwrap();
    run(&mut mem, &ops);
    assert_eq!(poisoned(&clean), poisoned(&mem));
    for v in 0..geo().tracks() {
        assert_eq!(read_track(&mut clean, v).ok(), read_track(&mut mem, v).ok(), "track {v}");
    }
    let mut images = 0;
    for n in 0..=total {
        let mut m = FileMedium::create(SimStorage::new(), geo()).unwrap();
        m.storage_mut().fail_after(n);
        let done = run(&mut m, &ops);
        let inflight = done < ops.len();
        assert_eq!(inflight, n < total, "crash point {n}");
        for sv in survivors() {
            let ctx =
                format!("crash at storage op {n}/{total} (during op {done} {:?}), {sv:?}", ops.get(done));
            let mut again =
                FileMedium::open(m.storage().power_cut(sv)).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            check_after_cut(&mut again, &ops, done, inflight, &ctx);
            // A medium reopened after a cut works: heal everything, flush, reopen.
            for t in 0..geo().tracks() {
                let tb = geo().track_bytes(t) as usize;
                again.write(t, 0, &vec![t as u8; tb]).unwrap();
            }
            again.flush().unwrap();
            let mut third = FileMedium::open(again.storage().power_cut(Survivors::None)).unwrap();
            // Written in ascending order, every destroyed track was rewritten after.
            assert_eq!(poisoned(&third), Vec::<u64>::new(), "{ctx}");
            for t in 0..geo().tracks() {
                let tb = geo().track_bytes(t) as usize;
                assert_eq!(read_track(&mut third, t).unwrap(), vec![t as u8; tb], "{ctx}");
            }
            images += 1;
        }
    }
    eprintln!("{total} crash points (every storage operation of the script) and the uncut end: {images} images checked");
    assert!(total >= 40, "the script makes only {total} storage operations");
}

#[test]
fn power_cut_while_creating() {
    let probe = Shared::new(SimStorage::new());
    FileMedium::create(probe.clone(), geo()).unwrap();
    let total = probe.0.borrow().ops();
    let mut opened = 0;
    for n in 0..total {
        let mut st = SimStorage::new();
        st.fail_after(n);
        let shared = Shared::new(st);
        assert!(FileMedium::create(shared.clone(), geo()).is_err(), "crash point {n}");
        let image = shared.0.borrow().clone();
        for sv in survivors() {
            match FileMedium::open(image.power_cut(sv)) {
                Ok(mut m) => {
                    opened += 1;
                    assert!(poisoned(&m).is_empty(), "create crash point {n} {sv:?}");
                    for t in 0..geo().tracks() {
                        assert!(read_track(&mut m, t).unwrap().iter().all(|&b| b == 0));
                    }
                }
                Err(StlError::Corrupt { what, .. }) => {
                    assert!(what.contains("header") || what.contains("truncated"), "{what}")
                }
                Err(e) => panic!("create crash point {n} {sv:?}: {e}"),
            }
        }
    }
    eprintln!("{total} crash points while creating; {opened} images opened as an empty medium");
    assert!(opened > 0);
}

/// A [`Storage`] shared with the test, so the image survives a failed `create` that consumed
/// the storage.
#[derive(Clone)]
struct Shared(std::rc::Rc<std::cell::RefCell<SimStorage>>);

impl Shared {
    fn new(st: SimStorage) -> Shared {
        Shared(std::rc::Rc::new(std::cell::RefCell::new(st)))
    }
}

impl Storage for Shared {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.borrow_mut().read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.0.borrow_mut().write_at(offset, data)
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().sync()
    }
    fn size(&mut self) -> std::io::Result<u64> {
        self.0.borrow_mut().size()
    }
    fn set_len(&mut self, len: u64) -> std::io::Result<()> {
        self.0.borrow_mut().set_len(len)
    }
    fn name(&self) -> String {
        self.0.borrow().name()
    }
}

// ---------------------------------------------------------------------------------------------
// Damaged files
// ---------------------------------------------------------------------------------------------

fn sample_image() -> SimStorage {
    let mut m = FileMedium::create(SimStorage::new(), geo()).unwrap();
    m.write(1, 0, &[1u8; 8192]).unwrap();
    m.write(6, 0, &[2u8; 4096]).unwrap();
    m.flush().unwrap();
    m.write(2, 0, &[3u8; 8192]).unwrap();
    m.flush().unwrap();
    m.storage().power_cut(Survivors::None)
}

/// Changes `bytes` distinct bytes of `lo..hi`.
fn corrupt(st: &mut SimStorage, rng: &mut Pcg64, lo: u64, hi: u64, bytes: usize) {
    let mut done = Vec::new();
    while done.len() < bytes {
        let at = rng.random_range(lo..hi);
        if done.contains(&at) {
            continue;
        }
        done.push(at);
        let mut b = [0u8];
        st.read_at(at, &mut b).unwrap();
        b[0] ^= rng.random_range(1..=255u8);
        st.write_at(at, &b).unwrap();
    }
}

#[test]
fn damaged_and_truncated_files_fail_with_a_typed_error_never_a_panic() {
    let image = sample_image();
    let data_offset = FileMedium::open(image.clone()).unwrap().data_offset();
    let slot = HEADER_SLOT as u64;
    let table = 2 * slot;
    let mut rng = Pcg64::seed_from_u64(0x5eed);
    let mut outcomes = [0usize; 4];
    for round in 0..600 {
        let mut st = image.clone();
        let kind = round % 6;
        let bytes = rng.random_range(1..=8);
        match kind {
            // The header alone: the backup opens it.
            0 => corrupt(&mut st, &mut rng, 0, slot, bytes),
            // Both header copies: a damaged medium.
            1 => {
                corrupt(&mut st, &mut rng, 0, 128, bytes);
                corrupt(&mut st, &mut rng, slot, slot + 128, bytes);
            }
            // The flag table, either copy.
            2 => corrupt(&mut st, &mut rng, table, table + 2 * TABLE_BLOCK as u64, bytes),
            // Anywhere in the metadata.
            3 => corrupt(&mut st, &mut rng, 0, data_offset, bytes * 64),
            // Truncated inside the metadata.
            4 => st.set_len(rng.random_range(0..table + TABLE_BLOCK as u64)).unwrap(),
            // Garbage headers.
            _ => {
                let junk: Vec<u8> = (0..2 * HEADER_SLOT).map(|_| rng.random()).collect();
                st.write_at(0, &junk).unwrap();
            }
        }
        let ctx = format!("round {round} kind {kind}");
        match FileMedium::open(st) {
            Ok(mut m) => {
                outcomes[0] += 1;
                assert!(kind == 0 || kind == 2 || kind == 3, "{ctx}: opened");
                if kind == 0 {
                    assert!(
                        m.metadata_damage().iter().any(|d| d.contains("opened from its backup")),
                        "{ctx}"
                    );
                }
                // Whatever opened must be usable and never panic.
                for t in 0..geo().tracks() {
                    let _ = read_track(&mut m, t);
                }
                m.write(4, 0, &[0u8; 8192]).unwrap();
                m.flush().unwrap();
            }
            Err(StlError::Corrupt { device, what }) => {
                outcomes[1] += 1;
                assert_eq!(device, "<simulated storage>");
                assert!(kind != 0, "{ctx}: the backup header should have opened it: {what}");
                match kind {
                    1 => {
                        assert!(
                            what.contains("header (byte 0)") && what.contains("backup header"),
                            "{ctx}: {what}"
                        );
                        outcomes[2] += 1;
                    }
                    2 => {
                        assert!(what.contains("flag table block 0"), "{ctx}: {what}");
                        outcomes[3] += 1;
                    }
                    _ => {}
                }
            }
            Err(e) => panic!("{ctx}: untyped failure {e}"),
        }
    }
    eprintln!(
        "opened {}, refused {} ({} bad headers, {} bad tables)",
        outcomes[0], outcomes[1], outcomes[2], outcomes[3]
    );
    assert!(outcomes[0] > 0 && outcomes[1] > 0);
}

#[test]
fn a_damaged_file_names_itself_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m");
    drop(FileMedium::create_file(&path, geo()).unwrap());
    // Both header copies with a bad version: the message names the file, the field and its byte.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8] = 7;
    bytes[HEADER_SLOT + 8] = 7;
    std::fs::write(&path, &bytes).unwrap();
    let e = FileMedium::open_file(&path).unwrap_err().to_string();
    assert!(e.contains(&path.display().to_string()) && e.contains("format version 7 at byte 8"), "{e}");
    // An empty file is not a medium.
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let e = FileMedium::open_file(&empty).unwrap_err().to_string();
    assert!(e.contains("not a shingled medium file"), "{e}");
    // A truncated one.
    bytes[8] = 1;
    bytes[HEADER_SLOT + 8] = 1;
    std::fs::write(&path, &bytes[..2 * HEADER_SLOT + 100]).unwrap();
    let e = FileMedium::open_file(&path).unwrap_err().to_string();
    assert!(e.contains("truncated"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Modelled time
// ---------------------------------------------------------------------------------------------

#[test]
fn a_sequential_sweep_takes_less_modelled_time_than_random_order() {
    let g = Geometry {
        zones: vec![MediumZone { tracks: 64, track_bytes: 256 * 1024 }],
        head_width: 2,
        unshingled_tracks: 0,
    };
    let data = vec![5u8; 256 * 1024];
    let sweep = |order: &[u64]| {
        let mut m = Timed::new(MemMedium::new(g.clone()).unwrap(), &HddConfig::cmr_7200_500g()).unwrap();
        for &t in order {
            m.write(t, 0, &data).unwrap();
        }
        let s = m.stats();
        assert_eq!((s.writes, s.bytes_written), (64, 64 * 256 * 1024));
        m.elapsed()
    };
    let sequential: Vec<u64> = (0..64).collect();
    let mut random = sequential.clone();
    random.shuffle(&mut Pcg64::seed_from_u64(3));
    let (seq, rnd) = (sweep(&sequential), sweep(&random));
    eprintln!("sequential {seq}, random {rnd}");
    assert!(seq < rnd, "sequential {seq} vs random {rnd}");
    // Every sequential continuation streams: about overhead + transfer per track.
    assert!(rnd.as_millis_f64() > 1.5 * seq.as_millis_f64(), "sequential {seq} vs random {rnd}");
    // The same on a file medium, reads this time.
    let mut f =
        Timed::new(FileMedium::create(SimStorage::new(), g.clone()).unwrap(), &HddConfig::cmr_7200_500g())
            .unwrap();
    for t in 0..64 {
        f.write(t, 0, &data).unwrap();
    }
    let t0 = f.elapsed();
    let mut buf = vec![0u8; 256 * 1024];
    f.read(63, 0, &mut buf).unwrap();
    assert_eq!(buf, data);
    assert!(f.last() > Default::default() && f.elapsed() > t0);
    assert!(matches!(f.read(64, 0, &mut buf), Err(StlError::Range { .. })));
    assert_eq!(f.inner().stats().writes, 64);
}
