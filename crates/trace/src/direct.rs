//! Statistics of a trace file read directly rather than through [`crate::open()`]'s reader: a
//! `bin` file is decoded straight out of the file, and a large file (`bin`, or uncompressed text
//! in a format whose lines are read independently) is cut into pieces that threads take one at
//! a time, each thread tallying the pieces it took; the tallies are merged at the end. Every
//! statistic is a sum, a minimum, a maximum or a set union, so neither the cut nor which thread
//! took which piece changes a figure; errors are those the sequential reader reports. Threads
//! take pieces as they go, so one slowed down (a core busy with something else) takes fewer.

use crate::binary::{record_at, tally_records, whole_records, RECORD_SIZE};
use crate::formats::alibaba::Alibaba;
use crate::formats::disksim::{Disksim, Mqsim};
use crate::formats::msr::Msr;
use crate::formats::vscsi::VscsiCsv;
use crate::formats::Format;
use crate::stats::Tally;
use crate::text::{LineFormat, LineSource, TextReader};
use crate::{OpenOptions, TraceError, TraceReader, TraceStats};
use shingled_core::BandConfig;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most threads a file is read by; each builds its own block sets, so this also bounds their
/// memory to this many times one set's.
const MAX_THREADS: usize = 4;
/// Records in one piece of a `bin` file (384 KiB: the buffer stays in the core's cache while
/// its records are tallied).
const BIN_PIECE: usize = if cfg!(test) { 7 } else { 16 * 1024 };
/// Fewest records worth a thread of their own (6 MiB).
const RECORDS_PER_THREAD: u64 = if cfg!(test) { 64 } else { 1 << 18 };
/// Bytes in one piece of a text file (before moving its ends to line starts).
const TEXT_PIECE: u64 = if cfg!(test) { 1024 } else { 8 << 20 };
/// Fewest pieces of text worth splitting (a smaller file is left to its reader).
const MIN_TEXT_PIECES: u64 = 4;
/// How far past a nominal piece end a line start is looked for (a line is at most 512 KiB).
const SPLIT_WINDOW: usize = 1 << 20;

/// The statistics of the trace file `path` opened with `opts`: exactly what
/// [`crate::trace_stats`] of [`crate::open()`]`(path, opts)` returns (errors included), computed
/// faster. A `bin` file is decoded straight out of the file; a large `bin` file or uncompressed
/// `msr`, `alibaba`, `vscsi-csv`, `disksim` or `mqsim` text (formats whose lines are read
/// independently) is read by several threads, one per available core (at most four).
///
/// `Ok(None)` when this does not apply: `path` is a `synth:` spec or not a regular file, is
/// compressed, is text of another format or smaller than 32 MiB, or is a `bin` file whose size
/// does not match its header. Read it with [`crate::open()`] and [`crate::trace_stats`] then.
pub fn trace_stats_file(
    path: &str,
    opts: &OpenOptions,
    bands: &BandConfig,
) -> Result<Option<TraceStats>, TraceError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    trace_stats_file_threads(path, opts, bands, cores.min(MAX_THREADS))
}

/// [`trace_stats_file`] with at most `max_threads` threads (1: all on the calling thread).
pub fn trace_stats_file_threads(
    path: &str,
    opts: &OpenOptions,
    bands: &BandConfig,
    max_threads: usize,
) -> Result<Option<TraceStats>, TraceError> {
    if path.starts_with("synth:") {
        return Ok(None);
    }
    let p = Path::new(path);
    // Checked before opening: opening a FIFO would block.
    if !std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let Ok(f) = File::open(p) else { return Ok(None) };
    let mut head = vec![0u8; crate::open::SNIFF_BYTES];
    let n = read_at_most(&f, &mut head, 0).unwrap_or(0);
    head.truncate(n);
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(None);
    }
    let format = match opts.format {
        Some(f) => f,
        None => match crate::open::detect_bytes(&head, opts) {
            Some(f) => f,
            None => return Ok(None),
        },
    };
    let max_threads = max_threads.max(1);
    match format {
        Format::Bin => bin_stats(&f, p, opts, bands, max_threads),
        Format::Msr => text_stats(&f, p, opts, bands, max_threads, || Msr),
        Format::Alibaba => text_stats(&f, p, opts, bands, max_threads, || Alibaba),
        Format::VscsiCsv => text_stats(&f, p, opts, bands, max_threads, || VscsiCsv),
        Format::Disksim => text_stats(&f, p, opts, bands, max_threads, || Disksim),
        Format::Mqsim => text_stats(&f, p, opts, bands, max_threads, || Mqsim),
        _ => Ok(None),
    }
}

/// Runs `work(state, i)` for every piece `i` in `0..pieces` on `threads` threads (the calling
/// one among them), which take the pieces in order, one at a time, each into its own state
/// made by `init`; returns the states.
fn share_out<S: Send>(
    threads: usize,
    pieces: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) + Sync,
) -> Vec<S> {
    let next = AtomicUsize::new(0);
    let run = || {
        let mut state = init();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= pieces {
                return state;
            }
            work(&mut state, i);
        }
    };
    let threads = threads.clamp(1, pieces.max(1));
    if threads == 1 {
        return vec![run()];
    }
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads).map(|_| s.spawn(run)).collect();
        let mut all = vec![run()];
        all.extend(others.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))));
        all
    })
}

/// Reads from `at` until `buf` is full or the file ends; returns the bytes read.
fn read_at_most(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], at + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// One thread's share of a `bin` file: its tally and the records it filtered out, or the
/// first error it met.
struct BinPart {
    tally: Tally,
    filtered: u64,
    buf: Vec<u8>,
    error: Option<TraceError>,
}

/// [`trace_stats_file`] of a `bin` file, in pieces of [`BIN_PIECE`] records.
fn bin_stats(
    f: &File,
    path: &Path,
    opts: &OpenOptions,
    bands: &BandConfig,
    max_threads: usize,
) -> Result<Option<TraceStats>, TraceError> {
    let Some(records) = whole_records(f, path) else { return Ok(None) };
    bands.validate().map_err(|e| TraceError::Invalid(e.to_string()))?;
    let threads = (records / RECORDS_PER_THREAD).clamp(1, max_threads as u64) as usize;
    let pieces = records.div_ceil(BIN_PIECE as u64) as usize;
    let init = || BinPart { tally: Tally::default(), filtered: 0, buf: Vec::new(), error: None };
    let parts = share_out(threads, pieces, init, |part, i| {
        if part.error.is_some() {
            return;
        }
        let from = i as u64 * BIN_PIECE as u64;
        let n = (records - from).min(BIN_PIECE as u64) as usize;
        part.buf.resize(n * RECORD_SIZE, 0);
        match f.read_exact_at(&mut part.buf, record_at(from)) {
            Ok(()) => part.filtered += tally_records(&part.buf, &mut part.tally, opts.volume),
            Err(source) => part.error = Some(io(path, source)),
        }
    });
    let mut total = Tally::default();
    let mut filtered = 0;
    for part in parts {
        if let Some(e) = part.error {
            return Err(e);
        }
        total.merge(part.tally);
        filtered += part.filtered;
    }
    total.finish("bin", 0, filtered, bands).map(Some)
}

/// One thread's share of a text file: its tally, lines skipped and requests filtered, and the
/// first error it met with the piece it met it in.
struct TextPart {
    tally: Tally,
    skipped: u64,
    filtered: u64,
    error: Option<(usize, TraceError)>,
}

/// [`trace_stats_file`] of text in the format `F` made by `make`, cut into pieces of about
/// [`TEXT_PIECE`] bytes that begin at line starts.
fn text_stats<F: LineFormat + 'static>(
    f: &File,
    path: &Path,
    opts: &OpenOptions,
    bands: &BandConfig,
    max_threads: usize,
    make: impl Fn() -> F + Sync,
) -> Result<Option<TraceStats>, TraceError> {
    let Ok(size) = f.metadata().map(|m| m.len()) else { return Ok(None) };
    if max_threads < 2 || size < MIN_TEXT_PIECES * TEXT_PIECE {
        return Ok(None);
    }
    // Piece i starts at the first line start at or past i × TEXT_PIECE (some may be empty).
    let mut starts = vec![0u64];
    let mut window = vec![0u8; SPLIT_WINDOW];
    for i in 1..size.div_ceil(TEXT_PIECE) {
        let at = i * TEXT_PIECE - 1;
        let n = read_at_most(f, &mut window, at).map_err(|source| io(path, source))?;
        let Some(k) = memchr::memchr(b'\n', &window[..n]) else {
            // A line longer than the window: left to the reader, which refuses it.
            return Ok(None);
        };
        starts.push((at + k as u64 + 1).max(*starts.last().unwrap_or(&0)));
    }
    bands.validate().map_err(|e| TraceError::Invalid(e.to_string()))?;
    let ends: Vec<u64> = starts.iter().skip(1).copied().chain([size]).collect();
    // Pieces past one that failed need not be read: the first error in file order is reported.
    let failed = AtomicUsize::new(usize::MAX);
    let init = || TextPart { tally: Tally::default(), skipped: 0, filtered: 0, error: None };
    let parts = share_out(max_threads, starts.len(), init, |part, i| {
        let (from, to) = (starts[i], ends[i]);
        if from >= to || i > failed.load(Ordering::Relaxed) {
            return;
        }
        let result = (|| {
            let mut file = File::open(path).map_err(|source| io(path, source))?;
            file.seek(SeekFrom::Start(from)).map_err(|source| io(path, source))?;
            let mut src = LineSource::new(Vec::new(), Box::new(file.take(to - from)), path.to_path_buf());
            if i > 0 {
                // Numbered from 2, so no line of a later piece is taken for line 1 (a header);
                // errors are renumbered below.
                src.line = 1;
            }
            let mut reader = TextReader::new(src, make(), opts.volume, opts.skip_bad_lines);
            while let Some(r) = reader.next_request()? {
                part.tally.add(r.time_ns, r.offset, r.op.is_write(), r.len, r.volume);
            }
            part.skipped += reader.skipped();
            part.filtered += reader.filtered();
            Ok(())
        })();
        if let Err(e) = result {
            failed.fetch_min(i, Ordering::Relaxed);
            if part.error.as_ref().is_none_or(|&(j, _)| i < j) {
                part.error = Some((i, e));
            }
        }
    });
    let mut total = Tally::default();
    let (mut skipped, mut filtered) = (0, 0);
    let mut first_error: Option<(usize, TraceError)> = None;
    for part in parts {
        if let Some((i, e)) = part.error {
            if first_error.as_ref().is_none_or(|&(j, _)| i < j) {
                first_error = Some((i, e));
            }
        }
        total.merge(part.tally);
        skipped += part.skipped;
        filtered += part.filtered;
    }
    match first_error {
        // The sequential reader stops at the first error in file order: every piece before
        // this one was read whole without one.
        Some((i, TraceError::Parse { path: p, line, field, value, reason })) if i > 0 => {
            let line = lines_before(f, path, starts[i])? + line - 1;
            Err(TraceError::Parse { path: p, line, field, value, reason })
        }
        Some((_, e)) => Err(e),
        None => total.finish(F::NAME, skipped, filtered, bands).map(Some),
    }
}

/// Number of line ends in the first `end` bytes of `f`.
#[cold]
fn lines_before(f: &File, path: &Path, end: u64) -> Result<u64, TraceError> {
    let mut buf = vec![0u8; 1 << 20];
    let (mut at, mut lines) = (0u64, 0u64);
    while at < end {
        let want = (end - at).min(buf.len() as u64) as usize;
        let n = read_at_most(f, &mut buf[..want], at).map_err(|source| io(path, source))?;
        if n == 0 {
            break;
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        at += n as u64;
    }
    Ok(lines)
}

fn io(path: &Path, source: std::io::Error) -> TraceError {
    TraceError::Io { path: path.to_path_buf(), source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{open, trace_stats, BinaryWriter, Request};
    use rand::{Rng, SeedableRng};
    use shingled_core::{ByteSize, Op};

    /// Requests with the shapes that matter: several volumes, unaligned and empty requests,
    /// ranges crossing 64-block words and 512-block chunks, a few far beyond 8 TiB.
    fn requests(n: usize, seed: u64) -> Vec<Request> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let offset = match rng.random_range(0..10) {
                    0 => rng.random_range(0..1u64 << 50),
                    1..=3 => rng.random_range(0..4u64 << 20),
                    _ => rng.random_range(0..64u64 << 30) & !511,
                };
                Request {
                    time_ns: rng.random_range(0..1u64 << 40),
                    volume: if i % 97 < 3 { rng.random_range(0..4) } else { 1 },
                    op: if rng.random_bool(0.6) { Op::Write } else { Op::Read },
                    offset,
                    len: match rng.random_range(0..8) {
                        0 => 0,
                        1 => rng.random_range(1..1 << 22),
                        _ => rng.random_range(1..64) * 512,
                    },
                }
            })
            .collect()
    }

    fn msr_line(r: &Request) -> String {
        format!("{},h,{},{},{},{},7\n", r.time_ns / 100, r.volume, r.op, r.offset, r.len)
    }

    /// `trace_stats_file_threads` with 1 to 4 threads against the reader, for several options;
    /// it must read the file itself from `direct_from` threads on.
    fn check_all_ways(path: &Path, direct_from: usize) {
        let p = path.to_str().unwrap();
        for opts in [
            OpenOptions::default(),
            OpenOptions { volume: Some(1), ..OpenOptions::default() },
            OpenOptions { volume: Some(3), skip_bad_lines: true, ..OpenOptions::default() },
        ] {
            for bands in [BandConfig::default(), BandConfig::Fixed { size: ByteSize::mb(64) }] {
                let want = open(p, &opts)
                    .map_err(|e| e.to_string())
                    .and_then(|mut r| trace_stats(&mut *r, &bands).map_err(|e| e.to_string()));
                for threads in 1..=4 {
                    match trace_stats_file_threads(p, &opts, &bands, threads) {
                        Ok(Some(got)) => assert_eq!(Ok(got), want, "{threads} threads, {opts:?}"),
                        Ok(None) => {
                            assert!(threads < direct_from, "not read directly with {threads} threads")
                        }
                        Err(e) => assert_eq!(Err(e.to_string()), want, "{threads} threads, {opts:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn bin_files_give_the_readers_statistics() {
        let dir = tempfile::tempdir().unwrap();
        let reqs = requests(3000, 1);
        let path = dir.path().join("t.bin");
        let mut w = BinaryWriter::create(&path).unwrap();
        for r in &reqs {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        check_all_ways(&path, 1);
        // A file whose size disagrees with its header is left to the reader (and its error).
        let bytes = std::fs::read(&path).unwrap();
        for bad in [&bytes[..bytes.len() - 24], &bytes[..bytes.len() - 5], &[&bytes[..], &[0; 24]].concat()] {
            std::fs::write(&path, bad).unwrap();
            let p = path.to_str().unwrap();
            assert!(trace_stats_file(p, &OpenOptions::default(), &BandConfig::default()).unwrap().is_none());
        }
        // An unknown count (an unfinished writer) is read to the end.
        let mut unknown = bytes.clone();
        unknown[16..24].fill(0);
        std::fs::write(&path, &unknown).unwrap();
        check_all_ways(&path, 1);
    }

    #[test]
    fn text_files_give_the_readers_statistics_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let reqs = requests(2000, 2);
        let lines: Vec<String> = reqs.iter().map(msr_line).collect();
        let path = dir.path().join("t.csv");
        let header = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n";
        std::fs::write(&path, format!("{header}{}", lines.concat())).unwrap();
        check_all_ways(&path, 2);
        // CRLF, blank lines, no final newline.
        let crlf = lines.concat().replace('\n', "\r\n").replacen("\r\n", "\r\n\n  \n", 700);
        std::fs::write(&path, crlf.trim_end()).unwrap();
        check_all_ways(&path, 2);
        // Bad lines early and late (the first is the error; both are skipped with
        // skip_bad_lines), and a header-like line that is not line 1.
        for bad in [vec![1500], vec![300, 1700], vec![1999]] {
            let mut l = lines.clone();
            for &i in &bad {
                l[i] = if i % 2 == 0 { "1,h,0,Write,xyz,4096,1\n".into() } else { header.into() };
            }
            std::fs::write(&path, l.concat()).unwrap();
            check_all_ways(&path, 2);
        }
        // Too small to split, compressed, or another format: left to the reader.
        let none = |p: &Path| {
            let p = p.to_str().unwrap();
            trace_stats_file(p, &OpenOptions::default(), &BandConfig::default()).unwrap().is_none()
        };
        std::fs::write(&path, lines[..10].concat()).unwrap();
        assert!(none(&path));
        let gz = dir.path().join("t.csv.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, lines.concat().as_bytes()).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        assert!(none(&gz));
        let sac = dir.path().join("t.sac");
        std::fs::write(&sac, "W 1\nR 2\n".repeat(2000)).unwrap();
        assert!(none(&sac));
        assert!(none(Path::new("synth:wdev")));
        assert!(none(dir.path()));
    }
}
