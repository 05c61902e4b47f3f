//! The trace's future, for the offline policies (Belady's MIN, band-level MIN) and the offline
//! RMW bound: a pass over the whole trace before the replay.
//!
//! The pass reads the requests the replay will read (the same trace, limit and mode) and lists
//! every block access the cache will be asked about, in order, in a temporary file (8 bytes
//! each); feeding the writes to the [`RmwBound`] on the way. A second pass reads that list
//! backwards, a chunk at a time, keeping one entry per distinct block (its next access) and one
//! per band (its next write), and writes each access's [`Foresight`] (16 bytes) at its place in
//! a second temporary file, which the replay then reads forwards. Both files are unlinked at
//! creation. Memory: the two maps and a chunk, whatever the trace's length; disk: 24 bytes per
//! block access.

use crate::bound::{OfflineBound, RmwBound};
use crate::controller::{Foreknowledge, Mode};
use crate::error::SimError;
use rustc_hash::FxHashMap;
use shingled_cache::Foresight;
use shingled_core::{BandMap, BlockNo, Op};
use shingled_trace::TraceReader;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Accesses per chunk of the backward pass.
const CHUNK: usize = 1 << 16;
/// The write flag of a listed access.
const WRITE: u64 = 1 << 63;

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> SimError {
    move |source| SimError::Prepass { what, source }
}

/// What the pre-pass found: the future to replay with and the bound.
#[derive(Debug)]
pub struct Prepass {
    /// The foresight of every access, to give the replay ([`crate::Engine::with_future`]).
    pub future: FutureFile,
    /// The offline RMW bound, when the drive has bands and a PB.
    pub bound: Option<OfflineBound>,
}

/// The foresight of every access, read in order by the replay.
#[derive(Debug)]
pub struct FutureFile {
    reader: BufReader<File>,
    now: u64,
    len: u64,
    status: Arc<Status>,
}

/// What the replay did with the future, for [`FutureFile::status`]'s check afterwards.
#[derive(Debug, Default)]
pub struct Status {
    used: AtomicU64,
    len: u64,
    error: Mutex<Option<std::io::Error>>,
}

impl Status {
    /// An error if reading the future file failed, or if the replay asked for another number
    /// of accesses than the pre-pass listed (the trace changed between the two reads).
    pub fn check(&self) -> Result<(), SimError> {
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(SimError::Prepass { what: "reading the future file", source: e });
        }
        let used = self.used.load(Ordering::Relaxed);
        if used != self.len {
            return Err(SimError::Config {
                field: "trace",
                reason: format!(
                    "the offline pre-pass listed {} block accesses and the replay made {used}: the trace \
                     changed between the two reads",
                    self.len
                ),
            });
        }
        Ok(())
    }
}

impl FutureFile {
    /// What the replay did with it, to [`Status::check`] once the replay is over.
    pub fn status(&self) -> Arc<Status> {
        self.status.clone()
    }
}

impl Foreknowledge for FutureFile {
    fn next(&mut self, write: bool, block: BlockNo) -> Foresight {
        let mut f = Foresight {
            now: self.now,
            block,
            write,
            next_use: Foresight::NEVER,
            band_next_write: Foresight::NEVER,
        };
        if self.now < self.len {
            let mut rec = [0u8; 16];
            // A failed read leaves "never" here and fails the run afterwards (`Status::check`).
            match self.reader.read_exact(&mut rec) {
                Ok(()) => {
                    f.next_use = u64::from_le_bytes(rec[..8].try_into().expect("8 bytes"));
                    f.band_next_write = u64::from_le_bytes(rec[8..].try_into().expect("8 bytes"));
                }
                Err(e) => {
                    self.status.error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                }
            }
        }
        self.now += 1;
        self.status.used.store(self.now, Ordering::Relaxed);
        f
    }
}

/// The sizes the bound is computed for, and the warm-up's end in requests the replay
/// processes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sizes {
    /// The cache's blocks.
    pub cache_blocks: u64,
    /// The PB's blocks (no bound without).
    pub pb_blocks: Option<u64>,
    /// The warm-up ends after this many processed requests (an after-warm-up bound too).
    pub warm_at: Option<u64>,
}

/// The pre-pass over the requests of `reader` (up to `limit`), as a replay in `mode` on a drive
/// with `bands` will see them: the future to replay with, and the offline RMW bound for the
/// cache and PB of `sizes`.
pub fn prepass_reader(
    mut reader: Box<dyn TraceReader>,
    limit: Option<u64>,
    mode: Mode,
    bands: Option<&BandMap>,
    sizes: Sizes,
) -> Result<Prepass, SimError> {
    let Sizes { cache_blocks, pb_blocks, warm_at } = sizes;
    let accesses = tempfile::tempfile().map_err(io("creating the list of accesses"))?;
    let mut out = BufWriter::with_capacity(1 << 20, &accesses);
    // In read-only mode writes go around the cache: nothing the cache holds is written back.
    let mut bound = match (bands, pb_blocks) {
        (Some(_), Some(pb)) => Some(RmwBound::new(if mode == Mode::ReadOnly { 0 } else { cache_blocks }, pb)),
        _ => None,
    };
    let limit = limit.unwrap_or(u64::MAX);
    let (mut read, mut requests, mut n, mut warmed) = (0u64, 0u64, 0u64, false);
    let mut batch = Vec::with_capacity(4096);
    'trace: loop {
        batch.clear();
        let want = 4096u64.min(limit - read) as usize;
        if want == 0 || reader.next_batch(&mut batch, want)? == 0 {
            break;
        }
        for req in &batch {
            read += 1;
            let write = req.op == Op::Write;
            let skipped = !write && mode == Mode::WriteOnly;
            if !skipped {
                requests += 1;
            }
            for b in if skipped { 0..0 } else { req.blocks() } {
                out.write_all(&(b | if write { WRITE } else { 0 }).to_le_bytes())
                    .map_err(io("listing accesses"))?;
                n += 1;
                if let (true, Some(bound), Some(bands)) = (write, bound.as_mut(), bands) {
                    bound.write(b, bands.band_of(b));
                }
            }
            // As the replay judges it: after each request read, skipped or not.
            if !warmed && warm_at.is_some_and(|w| requests >= w) {
                warmed = true;
                if let Some(bound) = bound.as_mut() {
                    bound.warm_up_ends();
                }
            }
            if read >= limit {
                break 'trace;
            }
        }
    }
    out.flush().map_err(io("listing accesses"))?;
    drop(out);
    let future = backward(&accesses, n, mode, bands)?;
    Ok(Prepass { future, bound: bound.map(RmwBound::finish) })
}

/// The backward pass: each access's next use and its band's next write.
fn backward(accesses: &File, n: u64, mode: Mode, bands: Option<&BandMap>) -> Result<FutureFile, SimError> {
    let file = tempfile::tempfile().map_err(io("creating the future file"))?;
    // Block → (position of its next access, that access writes).
    let mut next: FxHashMap<BlockNo, u64> = FxHashMap::default();
    let mut band_next: FxHashMap<u32, u64> = FxHashMap::default();
    let mut raw = vec![0u8; CHUNK * 8];
    let mut rec = vec![0u8; CHUNK * 16];
    let mut end = n;
    while end > 0 {
        let start = end.saturating_sub(CHUNK as u64);
        let len = (end - start) as usize;
        accesses.read_exact_at(&mut raw[..len * 8], start * 8).map_err(io("reading the list of accesses"))?;
        for i in (0..len).rev() {
            let v = u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            let (block, write) = (v & !WRITE, v & WRITE != 0);
            let t = start + i as u64;
            let next_use = match next.insert(block, t | if write { WRITE } else { 0 }) {
                None => Foresight::NEVER,
                // A write in read-only mode drops the cached copy: of no use to keep until then.
                Some(x) if x & WRITE != 0 && mode == Mode::ReadOnly => Foresight::NEVER,
                Some(x) => x & !WRITE,
            };
            let band_next_write = match bands {
                Some(bands) => {
                    let band = bands.band_of(block);
                    let at = band_next.get(&band).copied().unwrap_or(Foresight::NEVER);
                    if write {
                        band_next.insert(band, t);
                    }
                    at
                }
                None => Foresight::NEVER,
            };
            rec[i * 16..i * 16 + 8].copy_from_slice(&next_use.to_le_bytes());
            rec[i * 16 + 8..i * 16 + 16].copy_from_slice(&band_next_write.to_le_bytes());
        }
        file.write_all_at(&rec[..len * 16], start * 16).map_err(io("writing the future file"))?;
        end = start;
    }
    let mut file = file;
    std::io::Seek::rewind(&mut file).map_err(io("reading the future file"))?;
    let status = Arc::new(Status { len: n, ..Status::default() });
    Ok(FutureFile { reader: BufReader::with_capacity(1 << 20, file), now: 0, len: n, status })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shingled_trace::Request;

    fn reader(ops: &[(bool, u64)]) -> Box<dyn TraceReader> {
        let reqs: Vec<Request> = ops
            .iter()
            .enumerate()
            .map(|(i, &(w, b))| Request {
                time_ns: i as u64,
                volume: 0,
                op: if w { Op::Write } else { Op::Read },
                offset: b * 4096,
                len: 4096,
            })
            .collect();
        Box::new(crate::sample::InMemory::new(Arc::new(reqs), "test"))
    }

    #[test]
    fn next_uses_worked_out_by_hand() {
        // Accesses 0:r5 1:w7 2:r5 3:w5 4:r7. Read-write: 5 next at 2 then 3 then never; 7 at 4.
        let ops = [(false, 5), (true, 7), (false, 5), (true, 5), (false, 7)];
        let mut p = prepass_reader(reader(&ops), None, Mode::ReadWrite, None, Sizes::default()).unwrap();
        let got: Vec<u64> = ops.iter().map(|&(w, b)| p.future.next(w, b).next_use).collect();
        assert_eq!(got, [2, 4, 3, Foresight::NEVER, Foresight::NEVER]);
        p.future.status().check().unwrap();
        // Read-only: a write drops the copy, so 5 read at 2 is next "used" never (written at 3).
        let mut p = prepass_reader(reader(&ops), None, Mode::ReadOnly, None, Sizes::default()).unwrap();
        let got: Vec<u64> = ops.iter().map(|&(w, b)| p.future.next(w, b).next_use).collect();
        assert_eq!(got, [2, 4, Foresight::NEVER, Foresight::NEVER, Foresight::NEVER]);
        // Write-only: reads are not accesses; 7 (position 0) and 5 (position 1).
        let mut p = prepass_reader(reader(&ops), None, Mode::WriteOnly, None, Sizes::default()).unwrap();
        assert_eq!(p.future.next(true, 7).next_use, Foresight::NEVER);
        assert_eq!(p.future.next(true, 5).next_use, Foresight::NEVER);
        p.future.status().check().unwrap();
    }

    #[test]
    fn a_replay_of_other_accesses_than_listed_fails_the_run() {
        let ops = [(true, 1), (true, 2), (true, 1)];
        let mut p = prepass_reader(reader(&ops), None, Mode::ReadWrite, None, Sizes::default()).unwrap();
        p.future.next(true, 1);
        let e = p.future.status().check().unwrap_err().to_string();
        assert!(e.contains("listed 3 block accesses") && e.contains("made 1"), "{e}");
        for _ in 0..3 {
            p.future.next(true, 1);
        }
        assert!(p.future.status().check().is_err(), "one access too many");
    }
}
