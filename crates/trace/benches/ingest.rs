//! Trace ingest speed: parse a ~200 MB MSR CSV (plain and gzip) and the same requests as `bin`,
//! best of 3, one core; then compute their statistics (`trace_stats` through the reader, and
//! `trace_stats_file` on one thread and on every core, up to four). Prints a table; run with
//! `cargo bench -p shingled-trace --bench ingest`. `SHINGLED_BENCH_MB` changes the CSV size.
//! Files are in the page cache when timed, so this measures parsing, not the disk.

use shingled_core::BandConfig;
use shingled_trace::{
    convert, open, trace_stats, trace_stats_file_threads, BinaryReader, Format, OpenOptions, TraceReader,
};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Writes an MSR-like CSV of about `target` bytes with plausible field widths (18-digit
/// FILETIME, 9–11 digit offsets, sizes from 512 B to 64 KiB); returns its request count.
fn generate_msr(path: &Path, target: u64) -> u64 {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        // xorshift64*: cheap, deterministic, no dependency on the generator under test.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let (mut bytes, mut n, mut ts) = (0u64, 0u64, 128_166_372_003_061_629u64);
    let hosts = ["wdev", "hm", "prxy", "src1", "web"];
    while bytes < target {
        let r = next();
        ts += r % 50_000;
        let op = if r >> 20 & 3 == 0 { "Read" } else { "Write" };
        let size = 512u64 << (r >> 24 & 7);
        let offset = (next() % (1 << 35)) & !511;
        let line = format!(
            "{ts},{},{},{op},{offset},{size},{}\n",
            hosts[(r >> 30) as usize % 5],
            r >> 40 & 3,
            r >> 44 & 0xffff
        );
        w.write_all(line.as_bytes()).unwrap();
        bytes += line.len() as u64;
        n += 1;
    }
    w.flush().unwrap();
    n
}

/// Reads every request, returning a checksum so the work cannot be optimised away.
fn drain(r: &mut dyn TraceReader) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(q) = r.next_request().unwrap() {
        n += 1;
        sum = sum.wrapping_add(q.offset ^ q.len as u64 ^ q.time_ns);
    }
    (n, sum)
}

fn best_of_3(mut f: impl FnMut() -> (u64, u64)) -> (Duration, u64) {
    let mut best = Duration::MAX;
    let mut n = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let (count, sum) = f();
        best = best.min(t.elapsed());
        n = count;
        std::hint::black_box(sum);
    }
    (best, n)
}

fn row(name: &str, file_bytes: u64, csv_bytes: u64, (t, n): (Duration, u64)) {
    let s = t.as_secs_f64();
    println!(
        "{name:<28} {:>10.1} {:>10.3} {:>12.0} {:>14.0} {:>10.1}",
        file_bytes as f64 / 1e6,
        s,
        file_bytes as f64 / 1e6 / s,
        csv_bytes as f64 / 1e6 / s,
        n as f64 / 1e6 / s
    );
}

fn main() {
    let mb: u64 = std::env::var("SHINGLED_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bench.csv");
    let n = generate_msr(&csv, mb * 1_000_000);
    let csv_bytes = std::fs::metadata(&csv).unwrap().len();

    let gz = dir.path().join("bench.csv.gz");
    {
        let mut enc =
            flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
        std::io::copy(&mut std::fs::File::open(&csv).unwrap(), &mut enc).unwrap();
        enc.finish().unwrap();
    }
    let bin = dir.path().join("bench.bin");
    let mut r = open(csv.to_str().unwrap(), &OpenOptions::default()).unwrap();
    assert_eq!(convert(&mut *r, &bin).unwrap().requests, n);

    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    println!("{n} requests; CSV {:.1} MB; best of 3 on one core", csv_bytes as f64 / 1e6);
    println!(
        "{:<28} {:>10} {:>10} {:>12} {:>14} {:>10}",
        "input", "file MB", "seconds", "file MB/s", "CSV-equiv MB/s", "M req/s"
    );
    let msr = OpenOptions { format: Some(Format::Msr), ..OpenOptions::default() };
    row(
        "msr csv (format given)",
        csv_bytes,
        csv_bytes,
        best_of_3(|| drain(&mut *open(csv.to_str().unwrap(), &msr).unwrap())),
    );
    row(
        "msr csv (detected)",
        csv_bytes,
        csv_bytes,
        best_of_3(|| drain(&mut *open(csv.to_str().unwrap(), &OpenOptions::default()).unwrap())),
    );
    row(
        "msr csv.gz",
        size(&gz),
        csv_bytes,
        best_of_3(|| drain(&mut *open(gz.to_str().unwrap(), &msr).unwrap())),
    );
    row(
        "bin (dyn TraceReader)",
        size(&bin),
        csv_bytes,
        best_of_3(|| drain(&mut *open(bin.to_str().unwrap(), &OpenOptions::default()).unwrap())),
    );
    row(
        "bin (BinaryReader batches)",
        size(&bin),
        csv_bytes,
        best_of_3(|| {
            let mut r = BinaryReader::open(&bin).unwrap();
            let mut buf = Vec::with_capacity(65536);
            let (mut n, mut sum) = (0u64, 0u64);
            loop {
                buf.clear();
                if r.next_batch(&mut buf, 65536).unwrap() == 0 {
                    break;
                }
                n += buf.len() as u64;
                sum = buf.iter().fold(sum, |s, q| s.wrapping_add(q.offset ^ q.len as u64 ^ q.time_ns));
            }
            (n, sum)
        }),
    );

    // Statistics: (requests, distinct accessed bytes) as the checksum.
    let bands = BandConfig::default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    let by_reader = |p: &Path, opts: &OpenOptions| {
        let s = trace_stats(&mut *open(p.to_str().unwrap(), opts).unwrap(), &bands).unwrap();
        (s.requests, s.accessed_distinct_bytes)
    };
    let direct = |p: &Path, opts: &OpenOptions, threads: usize| {
        let s = trace_stats_file_threads(p.to_str().unwrap(), opts, &bands, threads).unwrap();
        let s = s.expect("read directly");
        (s.requests, s.accessed_distinct_bytes)
    };
    for (name, p, opts) in [("csv", &csv, &msr), ("bin", &bin, &OpenOptions::default())] {
        row(&format!("stats {name}: trace_stats"), size(p), csv_bytes, best_of_3(|| by_reader(p, opts)));
        if name == "bin" {
            row(
                &format!("stats {name}: file, 1 thread"),
                size(p),
                csv_bytes,
                best_of_3(|| direct(p, opts, 1)),
            );
        }
        let label = format!("stats {name}: file, {cores} thr.");
        row(&label, size(p), csv_bytes, best_of_3(|| direct(p, opts, cores)));
    }
}
