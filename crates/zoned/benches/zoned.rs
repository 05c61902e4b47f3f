//! Zoned-device benchmarks (`cargo bench -p shingled-zoned --bench zoned`; results in
//! `docs/benchmarks.md`):
//!
//! 1. sequential append throughput of the file backing against the raw file written
//!    sequentially with the same I/O size and the same `fdatasync` points, with `O_DIRECT` when
//!    the filesystem supports it and buffered + `fdatasync` otherwise (both are measured and
//!    labelled);
//! 2. zone report rate (memory and file backings) and the file backing's open (table load) time;
//! 3. modelled sequential append throughput through [`Timed`] on the virtual clock.
//!
//! `--quick` shrinks every size for a smoke run; `ZONED_BENCH_PART=append|report|timed` runs one
//! part. `ZONED_BENCH_DIR` picks the directory of the
//! scratch files (default: the system temporary directory).

use shingled_core::ByteSize;
use shingled_zoned::{
    FileOptions, FileZoned, IoMode, MemZoned, ReportOption, Timed, TimingConfig, ZoneOp, ZonedConfig,
    ZonedDevice,
};
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Aligned buffer of `len` bytes filled with a pattern.
fn aligned(len: usize) -> (Vec<u8>, usize) {
    let mut v = vec![0u8; len + 4096];
    let a = v.as_ptr().align_offset(4096);
    for (i, b) in v[a..a + len].iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    (v, a)
}

/// Raw file: `total` bytes in `io` writes, `fdatasync` every `sync_every` bytes and at the end.
fn raw(path: &Path, direct: bool, io: usize, total: u64, sync_every: u64) -> f64 {
    let _ = std::fs::remove_file(path);
    let mut o = OpenOptions::new();
    o.read(true).write(true).create_new(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    let f = o.open(path).unwrap();
    let (buf, a) = aligned(io);
    let data = &buf[a..a + io];
    let t = Instant::now();
    let mut off = 0u64;
    while off < total {
        f.write_all_at(data, off).unwrap();
        off += io as u64;
        if off.is_multiple_of(sync_every) {
            f.sync_data().unwrap();
        }
    }
    f.sync_data().unwrap();
    let s = t.elapsed().as_secs_f64();
    drop(f);
    std::fs::remove_file(path).unwrap();
    total as f64 / s / 1e6
}

/// File backing: the same writes as zone appends, a flush at the same points.
fn zoned(path: &Path, mode: IoMode, io: usize, total: u64, sync_every: u64, zone: ByteSize) -> (f64, bool) {
    let _ = std::fs::remove_file(path);
    let cfg = ZonedConfig {
        capacity: ByteSize(total.next_multiple_of(zone.0)),
        zone_size: zone,
        nr_conv: 0,
        max_open: 0,
        ..ZonedConfig::hm_smr(1)
    };
    let mut d = FileZoned::create(path, &cfg, FileOptions { io_mode: mode }).unwrap();
    let direct = d.is_direct();
    let (buf, a) = aligned(io);
    let data = &buf[a..a + io];
    let t = Instant::now();
    let mut off = 0u64;
    while off < total {
        d.write(off / 512, data).unwrap();
        off += io as u64;
        if off.is_multiple_of(sync_every) {
            d.flush().unwrap();
        }
    }
    d.flush().unwrap();
    let s = t.elapsed().as_secs_f64();
    drop(d);
    std::fs::remove_file(path).unwrap();
    (total as f64 / s / 1e6, direct)
}

/// `sync(1)` and a short pause, so that one run's deferred work does not land in the next.
fn settle() {
    let _ = std::process::Command::new("sync").status();
    std::thread::sleep(std::time::Duration::from_millis(300));
}

fn direct_supported(dir: &Path) -> bool {
    let p = dir.join("zoned-bench-odirect-probe");
    let _ = std::fs::remove_file(&p);
    let ok = OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_DIRECT).open(&p).is_ok_and(
        |f| {
            let (buf, a) = aligned(4096);
            f.write_all_at(&buf[a..a + 4096], 0).is_ok()
        },
    );
    let _ = std::fs::remove_file(&p);
    ok
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let part = std::env::var("ZONED_BENCH_PART").unwrap_or_default();
    let want = |p: &str| part.is_empty() || part == p;
    let dir: PathBuf =
        std::env::var_os("ZONED_BENCH_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let reps = if quick { 1 } else { 5 };
    let total: u64 = if quick { 64 << 20 } else { 1 << 30 };
    let sync_every: u64 = if quick { 16 << 20 } else { 256 << 20 };
    let zone = ByteSize::mib(if quick { 16 } else { 256 });
    let direct = direct_supported(&dir);
    if want("append") {
        println!("# sequential append: file backing vs raw file ({} per run, fdatasync every {}, zones of {zone}, median of {reps})",
        ByteSize(total), ByteSize(sync_every));
        println!(
            "O_DIRECT on {}: {}",
            dir.display(),
            if direct { "supported" } else { "NOT supported (buffered only)" }
        );
        println!("{:<10} {:>8} {:>12} {:>14} {:>7}", "mode", "io", "raw MB/s", "zoned MB/s", "ratio");
        let mut modes = vec![("buffered", false, IoMode::Buffered)];
        if direct {
            modes.insert(0, ("O_DIRECT", true, IoMode::Direct));
        }
        for (name, d, mode) in modes {
            for io in [64usize << 10, 256 << 10, 1 << 20] {
                let (mut r, mut z) = (Vec::new(), Vec::new());
                for rep in 0..reps {
                    // Alternate which goes first, and let the filesystem finish freeing the previous
                    // run's file before timing the next one.
                    for raw_now in [rep % 2 == 0, rep % 2 != 0] {
                        settle();
                        if raw_now {
                            r.push(raw(&dir.join("zoned-bench-raw"), d, io, total, sync_every));
                        } else {
                            let (mbs, was_direct) =
                                zoned(&dir.join("zoned-bench-dev"), mode, io, total, sync_every, zone);
                            assert_eq!(was_direct, d, "the file backing did not use the requested mode");
                            z.push(mbs);
                        }
                    }
                }
                let (r, z) = (median(r), median(z));
                println!(
                    "{name:<10} {:>8} {r:>12.0} {z:>14.0} {:>6.1}%",
                    ByteSize(io as u64).to_string(),
                    100.0 * z / r
                );
            }
        }
    }
    if want("report") {
        println!();
        println!("# zone report rate (all zones, median of {reps})");
        println!("{:<34} {:>8} {:>14} {:>12}", "device", "zones", "zones/s", "open ms");
        let mem_zones = if quick { 4096 } else { 74508 };
        let mut mem = MemZoned::new(&ZonedConfig::hm_smr(mem_zones)).unwrap();
        let conv = mem.info().nr_conv;
        for z in (conv..mem_zones).step_by(3) {
            let s = mem.info().zone_start(z);
            mem.write(s, &[0u8; 4096]).unwrap();
            mem.zone_mgmt(ZoneOp::Close, s, mem.info().zone_sectors).unwrap();
        }
        let rate = |d: &dyn ZonedDevice| {
            median(
                (0..reps)
                    .map(|_| {
                        let t = Instant::now();
                        let n = d.report_zones(0, 0, ReportOption::All).unwrap().len();
                        n as f64 / t.elapsed().as_secs_f64()
                    })
                    .collect(),
            )
        };
        println!(
            "{:<34} {mem_zones:>8} {:>14.3e} {:>12}",
            "memory, hm-smr (20 TB geometry)",
            rate(&mem),
            "-"
        );
        let file_zones = if quick { 1024 } else { 74508 };
        let p = dir.join("zoned-bench-report");
        let _ = std::fs::remove_file(&p);
        {
            let mut f =
                FileZoned::create(&p, &ZonedConfig::hm_smr(file_zones), FileOptions::default()).unwrap();
            // ext4 refuses writes past 16 TiB (EFBIG): touch only the zones below that.
            for z in (f.info().nr_conv..file_zones.min(65536)).step_by(3) {
                let s = f.info().zone_start(z);
                f.write(s, &[0u8; 4096]).unwrap();
            }
            f.flush().unwrap();
        }
        let opens: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let f = FileZoned::open(&p, FileOptions::default()).unwrap();
                let ms = t.elapsed().as_secs_f64() * 1e3;
                drop(f);
                ms
            })
            .collect();
        let f = FileZoned::open(&p, FileOptions::default()).unwrap();
        println!(
            "{:<34} {file_zones:>8} {:>14.3e} {:>12.2}",
            "file, hm-smr (20 TB geometry)",
            rate(&f),
            median(opens)
        );
        drop(f);
        std::fs::remove_file(&p).unwrap();
    }
    if want("timed") {
        println!();
        println!("# modelled sequential append through Timed (hm_smr_20tb mechanics, 1 MiB writes)");
        let cfg = ZonedConfig { nr_conv: 0, ..ZonedConfig::hm_smr(if quick { 8 } else { 64 }) };
        let mut t = Timed::new(MemZoned::new(&cfg).unwrap(), TimingConfig::default()).unwrap();
        let buf = vec![0u8; 1 << 20];
        let zones_used = 4u64;
        for z in 0..zones_used {
            let start = t.info().zone_start(z);
            for k in 0..256u64 {
                t.write(start + k * 2048, &buf).unwrap();
            }
        }
        let s = t.stats();
        println!(
            "{} zones x 256 MiB: {:.1} s modelled, {:.1} MB/s (opens {}, write time {})",
            zones_used,
            t.now().as_secs_f64(),
            s.bytes_written as f64 / t.now().as_secs_f64() / 1e6,
            s.opens,
            s.write_time
        );
    }
}
