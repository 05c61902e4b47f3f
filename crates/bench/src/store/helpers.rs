//! Small helpers every store bench shares: the seeded generator, payloads, number formats,
//! CPU time, and the devices the benches run on.

use super::error::*;
use super::*;

/// The workspace's SplitMix64: small, seeded, good enough for workload choices.
#[derive(Clone, Debug)]
pub(super) struct Rng(shingled_core::SplitMix64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(shingled_core::SplitMix64::new(seed ^ shingled_core::SplitMix64::GAMMA))
    }
    pub(super) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    pub(super) fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub(super) fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed);
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&r.next().to_le_bytes());
    }
    v.truncate(len);
    v
}

pub(super) fn size_label(b: u64) -> String {
    if b >= MIB && b.is_multiple_of(MIB) {
        format!("{}MiB", b / MIB)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}KiB", b / 1024)
    } else {
        format!("{b}B")
    }
}

pub(super) fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

pub(super) fn f(v: f64, d: usize) -> String {
    format!("{v:.d$}")
}

pub(super) fn modelled<D: ZonedDevice>(t: &Timed<D>) -> f64 {
    t.now().as_secs_f64()
}

/// CPU time of the calling thread in seconds (`/proc/thread-self/schedstat`: nanoseconds on
/// CPU, user and system), falling back to the process's `utime + stime` from
/// `/proc/self/stat` at 100 ticks per second. `None` where neither exists.
pub fn thread_cpu_seconds() -> Option<f64> {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = s.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()) {
            return Some(ns as f64 / 1e9);
        }
    }
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let v: Vec<&str> = rest.split_whitespace().collect();
    let ticks = v.get(11)?.parse::<u64>().ok()? + v.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

pub(super) fn shingled_zoned_bytes(b: u64) -> shingled_core::ByteSize {
    shingled_core::ByteSize(b)
}

/// The geometry the wall-clock and modelled I/O benches share: 256 MiB zones (SMRSTORE's
/// drive), `zones` of them, 1 conventional, ZBC, max_open 128.
pub(super) fn hm_smr_geometry(zones: u64) -> ZonedConfig {
    ZonedConfig::hm_smr(zones)
}

pub(super) fn file_device(dir: &Path, name: &str, cfg: &ZonedConfig) -> BResult<FileZoned> {
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    FileZoned::create(&path, cfg, FileOptions::default()).map_err(de(format!("creating {}", path.display())))
}

pub(super) fn timed_device(cfg: &ZonedConfig) -> BResult<Timed<MemZoned>> {
    let mem = MemZoned::new(cfg).map_err(de("building the in-memory device"))?;
    Timed::new(mem, TimingConfig::default()).map_err(de("timing the in-memory device"))
}
