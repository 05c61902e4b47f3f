//! Translation-layer benchmark: SMaRT, the dm-zoned-style layer and a conventional
//! disk, all timed on the same mechanism (Cheetah 15K.5, `HddConfig::cheetah_15k5()`), at 30, 60
//! and 90% utilisation.
//!
//! ```text
//! cargo run --release -p shingled-stl --example stl_bench -- [--quick] [--json FILE]
//!     [--passes model,files] [--dir DIR] [--gib N] [--random N] [--dm-random N]
//!     [--file-gib N] [--file-random N] [--file-dm-random N] [--zone-mib N] [--conv N]
//!     [--seq-kib N] [--utils 0.3,0.6,0.9] [--layers smart,dmzoned,disk] [--seed N]
//! ```
//!
//! Defaults: model pass 4 GiB with 10000 random writes (1000 for dm-zoned, whose every random
//! write past its few buffer zones reclaims a whole zone), files pass 1 GiB with 500 (50);
//! `--quick`: 1 GiB, 1000 (100) and 50 (5). dm-zoned runs on 16 MiB zones with 4 conventional
//! ones (`--zone-mib`, `--conv`).
//!
//! Two passes, the same cells in each:
//!
//! - **model**: every layer over a timed medium held in memory (`--gib`, default 4 GiB). Its
//!   figures in **modelled time** are the decorator's clock: `shingled_stl::Timed` for SMaRT's
//!   track medium, `shingled_zoned::Timed` for the zoned device (SMRSTORE's 20/24/22 ms zone
//!   open/close/reset kept, zones placed one after another: `spread_zones: false`), and the
//!   example's own [`Disk`] for the conventional disk; all on the Cheetah mechanism with the
//!   medium at the start (outer edge) of the platter. Everything a layer does to serve a
//!   request — SMaRT's out-of-place updates, GC moves and their staging, dm-zoned's buffer
//!   writes, reclaim copies, metadata commits, zone opens and resets — goes through the
//!   decorator, so a request's latency is how far the clock moved while the layer served it.
//!   Queue depth 1, requests back to back, no idle time (so no background GC or idle reclaim).
//!   Its wall time is the layers' CPU cost with in-memory media.
//! - **files**: the same over file backings (`FileMedium`, `FileZoned`, a plain file for the
//!   disk; `O_DIRECT` where the filesystem allows) in `--dir` (default: the system temp dir),
//!   smaller (`--file-gib`, fewer random writes) to bound the run time. Its
//!   **wall time** includes the emulators' own crash-safety work (poison flags, table barriers,
//!   `fdatasync`); its modelled time is computed as in the model pass.
//!
//! Cells per layer and utilisation U, in order, on a freshly formatted device:
//!
//! 1. `fill`: sequential write of the addressed range in 1 MiB requests (`--seq-kib`);
//! 2. `overwrite`: the same again (every block already written);
//! 3. `rand4k`: uniformly random 4 KiB writes over the addressed range.
//!
//! A flush (checkpoint / metadata commit) ends each phase, outside the measured window.
//!
//! Addressed range: SMaRT is formatted with utilisation U (its capacity is U of each zone's
//! shingled tracks, less the footer block of each track) and its whole capacity is addressed;
//! the dm-zoned layer and the disk address the first U of their capacity.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde_json::{json, Value};
use shingled_core::{ByteSize, Nanos};
use shingled_device::{HddConfig, Mechanism};
use shingled_stl::file_medium::FileMedium;
use shingled_stl::{
    check_request, raz_tracks_needed, BlockDevice, DmZoned, DmZonedConfig, Geometry, MediumZone, MemMedium,
    SmartStl, SmartStlConfig, StlError, Timed, TrackMedium, BLOCK,
};
use shingled_zoned::{
    FileOptions, FileStorage, FileZoned, IoMode, MemZoned, Storage, TimingConfig, ZonedConfig, ZonedDevice,
};
use std::collections::BTreeMap;
use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

type Res<T> = std::result::Result<T, Box<dyn Error>>;

const MIB: u64 = 1 << 20;
const TB: f64 = 1e12;

/// One pass: where the media live, how big, how many random writes.
#[derive(Clone, Debug)]
struct Pass {
    name: &'static str,
    /// `None`: in memory.
    dir: Option<PathBuf>,
    gib: u64,
    random: u64,
    dm_random: u64,
}

struct Args {
    json: Option<PathBuf>,
    passes: Vec<Pass>,
    zone_mib: u64,
    conv: u64,
    utils: Vec<f64>,
    seed: u64,
    seq_kib: u64,
    layers: Vec<Kind>,
}

const USAGE: &str = "stl_bench [--quick] [--json FILE] [--passes model,files] [--dir DIR] [--gib N] \
    [--random N] [--dm-random N] [--file-gib N] [--file-random N] [--file-dm-random N] [--zone-mib N] \
    [--conv N] [--seq-kib N] [--utils 0.3,0.6,0.9] [--layers smart,dmzoned,disk] [--seed N]";

fn parse_args() -> Res<(Args, Option<tempfile::TempDir>)> {
    let mut quick = false;
    let mut opt: BTreeMap<String, String> = BTreeMap::new();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "--json" | "--passes" | "--dir" | "--gib" | "--random" | "--dm-random" | "--file-gib"
            | "--file-random" | "--file-dm-random" | "--zone-mib" | "--conv" | "--seq-kib" | "--utils"
            | "--layers" | "--seed" => {
                let v = it.next().ok_or_else(|| format!("{arg} needs a value"))?;
                opt.insert(arg[2..].to_string(), v);
            }
            _ => return Err(format!("unknown argument {arg}\n{USAGE}").into()),
        }
    }
    let num = |k: &str, full: u64, q: u64| -> Res<u64> {
        Ok(match opt.get(k) {
            Some(v) => v.parse()?,
            None if quick => q,
            None => full,
        })
    };
    let utils: Vec<f64> = match opt.get("utils") {
        Some(v) => v.split(',').map(|s| s.trim().parse::<f64>()).collect::<Result<_, _>>()?,
        None => vec![0.3, 0.6, 0.9],
    };
    if utils.iter().any(|u| !(0.05..=0.98).contains(u)) {
        return Err("every utilisation must be in 0.05..=0.98".into());
    }
    let which = opt.get("passes").map_or("model,files", |s| s.as_str()).to_string();
    let mut passes = Vec::new();
    let mut tmp = None;
    for w in which.split(',') {
        match w.trim() {
            "model" => passes.push(Pass {
                name: "model",
                dir: None,
                gib: num("gib", 4, 1)?,
                random: num("random", 10_000, 1000)?,
                dm_random: num("dm-random", 1000, 100)?,
            }),
            "files" => {
                let t = match opt.get("dir") {
                    Some(d) => tempfile::Builder::new().prefix("stl_bench").tempdir_in(d)?,
                    None => tempfile::Builder::new().prefix("stl_bench").tempdir()?,
                };
                passes.push(Pass {
                    name: "files",
                    dir: Some(t.path().to_path_buf()),
                    gib: num("file-gib", 1, 1)?,
                    random: num("file-random", 500, 50)?,
                    dm_random: num("file-dm-random", 50, 5)?,
                });
                tmp = Some(t);
            }
            other => return Err(format!("unknown pass {other:?}: model or files").into()),
        }
    }
    if passes.iter().any(|p| p.gib == 0) {
        return Err("media sizes must be positive".into());
    }
    let mut layers = Vec::new();
    for l in opt.get("layers").map_or("smart,dmzoned,disk", |s| s.as_str()).split(',') {
        layers.push(match l.trim() {
            "smart" => Kind::Smart,
            "dmzoned" => Kind::DmZoned,
            "disk" => Kind::Disk,
            other => return Err(format!("unknown layer {other:?}: smart, dmzoned or disk").into()),
        });
    }
    let a = Args {
        layers,
        json: opt.get("json").map(PathBuf::from),
        passes,
        zone_mib: num("zone-mib", 16, 16)?,
        conv: num("conv", 4, 4)?,
        utils,
        seed: num("seed", 16, 16)?,
        seq_kib: num("seq-kib", 1024, 1024)?,
    };
    if a.seq_kib == 0 || !a.seq_kib.is_multiple_of(4) || a.seq_kib > 1024 {
        return Err("--seq-kib must be a multiple of 4 up to 1024".into());
    }
    Ok((a, tmp))
}

// ---------------------------------------------------------------------------------------------
// The conventional disk: block addresses straight onto the mechanism.

enum Store {
    /// 1 MiB pages allocated on first write.
    Mem(Vec<Option<Box<[u8]>>>),
    File(FileStorage),
}

/// A conventional (CMR) disk: block `b` is physical byte `b × 4096` of the mechanism, each
/// request one mechanism access on its clock (write cache off, as for the other layers).
struct Disk {
    mech: Mechanism,
    now: Nanos,
    capacity: u64,
    store: Store,
    writes: u64,
}

impl Disk {
    fn new(hdd: &HddConfig, bytes: u64, store: Store) -> Res<Disk> {
        let mech = hdd.mechanism()?;
        if bytes > mech.capacity() {
            return Err(format!("disk of {} exceeds the mechanism", ByteSize(bytes)).into());
        }
        Ok(Disk { mech, now: Nanos::ZERO, capacity: bytes / BLOCK as u64, store, writes: 0 })
    }

    fn pages(&mut self, off: u64, len: usize, mut f: impl FnMut(&mut [u8], std::ops::Range<usize>)) {
        let Store::Mem(pages) = &mut self.store else { return };
        let mut done = 0usize;
        while done < len {
            let pos = off + done as u64;
            let (p, within) = ((pos / MIB) as usize, (pos % MIB) as usize);
            let n = (MIB as usize - within).min(len - done);
            let page = pages[p].get_or_insert_with(|| vec![0u8; MIB as usize].into_boxed_slice());
            f(&mut page[within..within + n], done..done + n);
            done += n;
        }
    }
}

impl BlockDevice for Disk {
    fn capacity_blocks(&self) -> u64 {
        self.capacity
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> shingled_stl::Result<()> {
        check_request("disk", "read", lba, buf.len(), self.capacity)?;
        let off = lba * BLOCK as u64;
        self.now += self.mech.access(self.now, off, buf.len() as u64, false);
        if let Store::File(f) = &mut self.store {
            f.read_at(off, buf).map_err(|e| StlError::Io { what: "disk read".into(), source: e })?;
        } else {
            self.pages(off, buf.len(), |page, r| buf[r].copy_from_slice(page));
        }
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> shingled_stl::Result<()> {
        check_request("disk", "write", lba, data.len(), self.capacity)?;
        let off = lba * BLOCK as u64;
        self.now += self.mech.access(self.now, off, data.len() as u64, true);
        self.writes += 1;
        if let Store::File(f) = &mut self.store {
            f.write_at(off, data).map_err(|e| StlError::Io { what: "disk write".into(), source: e })?;
        } else {
            self.pages(off, data.len(), |page, r| page.copy_from_slice(&data[r]));
        }
        Ok(())
    }

    fn flush(&mut self) -> shingled_stl::Result<()> {
        self.now += self.mech.occupy(self.now, self.mech.command_overhead().0 as f64);
        if let Store::File(f) = &mut self.store {
            f.sync().map_err(|e| StlError::Io { what: "disk sync".into(), source: e })?;
        }
        Ok(())
    }

    fn discard(&mut self, _lba: u64, _blocks: u64) -> shingled_stl::Result<()> {
        Ok(())
    }

    fn name(&self) -> String {
        "disk".into()
    }
}

// ---------------------------------------------------------------------------------------------
// What the bench needs of a layer beyond BlockDevice.

trait Layer: BlockDevice {
    /// The modelled clock.
    fn clock(&self) -> Nanos;
    /// Cumulative counters (deltas are taken per phase).
    fn counters(&self) -> BTreeMap<&'static str, u64>;
    /// Bytes of the medium / device under the layer.
    fn raw_bytes(&self) -> u64;
    /// The layer's map memory now, bytes.
    fn map_bytes(&self) -> u64;
    /// The layer's own statistics, as JSON.
    fn stats_json(&self) -> Value;
}

impl<M: TrackMedium> Layer for SmartStl<Timed<M>> {
    fn clock(&self) -> Nanos {
        self.medium().elapsed()
    }
    fn counters(&self) -> BTreeMap<&'static str, u64> {
        let s = self.stats();
        BTreeMap::from([
            ("gc_ondemand", s.gc_ondemand),
            ("gc_background", s.gc_background),
            ("gc_tracks_moved", s.gc_tracks_moved),
            ("staged_moves", s.staged_moves),
            ("in_place", s.in_place_updates),
            ("out_of_place", s.out_of_place_updates),
            ("new_tracks", s.new_tracks),
            ("syncs", s.syncs),
            ("medium_bytes_written", self.medium().stats().bytes_written),
            ("medium_bytes_read", self.medium().stats().bytes_read),
            ("model_busy_ns", {
                // The simulator's SMaRT model prices its own decisions on its own Cheetah
                // mechanism: what the same placements and GC moves cost without this layer's
                // footers, staging and checkpoints.
                let t = shingled_device::Drive::stats(self.model()).time;
                (t.overhead + t.seek + t.rotation + t.transfer).0
            }),
        ])
    }
    fn raw_bytes(&self) -> u64 {
        self.stats().raw_bytes
    }
    fn map_bytes(&self) -> u64 {
        self.stats().map_bytes
    }
    fn stats_json(&self) -> Value {
        serde_json::to_value(self.stats()).unwrap_or(Value::Null)
    }
}

impl<D: ZonedDevice> Layer for DmZoned<shingled_zoned::Timed<D>> {
    fn clock(&self) -> Nanos {
        self.device().now()
    }
    fn counters(&self) -> BTreeMap<&'static str, u64> {
        let s = self.stats();
        let t = self.device().stats();
        BTreeMap::from([
            ("reclaims", s.reclaims),
            ("reclaim_appends", s.reclaim_appends),
            ("reclaim_blocks_copied", s.reclaim_blocks_copied),
            ("reclaim_zero_blocks", s.reclaim_zero_blocks),
            ("forced_reclaims", s.forced_reclaims),
            ("metadata_commits", s.metadata_commits),
            ("direct_blocks", s.direct_blocks),
            ("buffered_blocks", s.buffered_blocks),
            ("zone_resets", s.zone_resets),
            ("device_bytes_written", t.bytes_written),
            ("device_bytes_read", t.bytes_read),
            ("zone_opens", t.opens),
        ])
    }
    fn raw_bytes(&self) -> u64 {
        self.device().info().capacity_bytes()
    }
    fn map_bytes(&self) -> u64 {
        self.stats().map_memory_bytes
    }
    fn stats_json(&self) -> Value {
        json!({ "layer": self.stats(), "geometry": self.geometry(), "timing": self.device().stats() })
    }
}

impl Layer for Disk {
    fn clock(&self) -> Nanos {
        self.now
    }
    fn counters(&self) -> BTreeMap<&'static str, u64> {
        BTreeMap::from([("writes", self.writes)])
    }
    fn raw_bytes(&self) -> u64 {
        self.capacity * BLOCK as u64
    }
    fn map_bytes(&self) -> u64 {
        0
    }
    fn stats_json(&self) -> Value {
        json!({ "writes": self.writes })
    }
}

// ---------------------------------------------------------------------------------------------
// Building the layers.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Smart,
    DmZoned,
    Disk,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Smart => "SMaRT",
            Kind::DmZoned => "dm-zoned",
            Kind::Disk => "disk",
        }
    }
}

/// Tracks per recording zone of the SMaRT medium (1 GiB of 1 MiB tracks).
const TRACKS_PER_ZONE: u64 = 1024;

fn smart_geometry(raw: u64, cfg: &SmartStlConfig) -> Geometry {
    let shingled = raw / MIB;
    let raz = raz_tracks_needed(shingled, MIB as u32, cfg);
    let mut zones = Vec::new();
    let mut left = shingled;
    while left > 0 {
        let n = left.min(TRACKS_PER_ZONE);
        zones.push(MediumZone { tracks: n as u32, track_bytes: MIB as u32 });
        left -= n;
    }
    zones[0].tracks += raz as u32;
    Geometry { zones, head_width: 2, unshingled_tracks: raz as u32 }
}

fn zoned_config(gib: u64, a: &Args) -> ZonedConfig {
    let zone = a.zone_mib * MIB;
    let nr_zones = (gib << 30) / zone;
    ZonedConfig {
        capacity: ByteSize(nr_zones * zone),
        zone_size: ByteSize(zone),
        // Default 4: one metadata zone and three buffers (1.6% of a 4 GiB device of 16 MiB
        // zones; HM-SMR drives have about 1% conventional zones, `ZonedConfig::hm_smr`, but 1%
        // of a few GiB would leave dm-zoned one buffer zone or none).
        nr_conv: a.conv,
        ..ZonedConfig::hm_smr(nr_zones)
    }
}

fn timing() -> TimingConfig {
    TimingConfig { hdd: HddConfig::cheetah_15k5(), spread_zones: false, ..TimingConfig::default() }
}

/// A freshly formatted layer and the blocks the cell addresses.
fn build(kind: Kind, u: f64, pass: &Pass, a: &Args) -> Res<(Box<dyn Layer>, u64)> {
    let hdd = HddConfig::cheetah_15k5();
    let raw = pass.gib << 30;
    let file = |name: &str| pass.dir.as_ref().map(|d| d.join(format!("{name}-{}.img", (u * 100.0).round())));
    Ok(match kind {
        Kind::Smart => {
            let cfg = SmartStlConfig { utilisation: u, ..SmartStlConfig::default() };
            let g = smart_geometry(raw, &cfg);
            let l: Box<dyn Layer> = match file("smart") {
                None => Box::new(SmartStl::format(
                    Timed::new(MemMedium::new(g)?, &hdd)?,
                    &cfg,
                    |m: &Timed<MemMedium>| m.inner().stats(),
                )?),
                Some(p) => Box::new(SmartStl::format(
                    Timed::new(FileMedium::create_file(&p, g)?, &hdd)?,
                    &cfg,
                    |m: &Timed<FileMedium>| m.inner().stats(),
                )?),
            };
            let addressed = l.capacity_blocks();
            (l, addressed)
        }
        Kind::DmZoned => {
            let zc = zoned_config(pass.gib, a);
            let l: Box<dyn Layer> = match file("dmzoned") {
                None => Box::new(DmZoned::format(
                    shingled_zoned::Timed::new(MemZoned::new(&zc)?, timing())?,
                    &DmZonedConfig::default(),
                )?),
                Some(p) => Box::new(DmZoned::format(
                    shingled_zoned::Timed::new(
                        FileZoned::create(&p, &zc, FileOptions::default())?,
                        timing(),
                    )?,
                    &DmZonedConfig::default(),
                )?),
            };
            let addressed = addressed_share(l.capacity_blocks(), u);
            (l, addressed)
        }
        Kind::Disk => {
            let store = match file("disk") {
                None => Store::Mem(vec![None; (raw / MIB) as usize]),
                Some(p) => Store::File(FileStorage::create(&p, IoMode::Auto)?),
            };
            let l = Disk::new(&hdd, raw, store)?;
            let addressed = addressed_share(l.capacity_blocks(), u);
            (Box::new(l), addressed)
        }
    })
}

/// The first `u` of `capacity` blocks, in whole MiB.
fn addressed_share(capacity: u64, u: f64) -> u64 {
    let per_mib = MIB / BLOCK as u64;
    ((capacity as f64 * u) as u64 / per_mib * per_mib).max(per_mib)
}

// ---------------------------------------------------------------------------------------------
// Running a phase.

struct Phase {
    name: &'static str,
    requests: u64,
    bytes: u64,
    modelled: Nanos,
    wall_s: f64,
    lat: Vec<u64>,
    counters: BTreeMap<&'static str, u64>,
}

impl Phase {
    fn pct(&self, p: f64) -> f64 {
        if self.lat.is_empty() {
            return 0.0;
        }
        let i = ((self.lat.len() as f64 * p).ceil() as usize).clamp(1, self.lat.len()) - 1;
        self.lat[i] as f64 / 1e6
    }
    fn max_ms(&self) -> f64 {
        self.lat.last().map_or(0.0, |&x| x as f64 / 1e6)
    }
    fn random(&self) -> bool {
        self.name == "rand4k"
    }
    /// Modelled MB/s (sequential) or IOPS (random).
    fn modelled_rate(&self) -> f64 {
        let s = self.modelled.as_secs_f64().max(1e-12);
        if self.random() {
            self.requests as f64 / s
        } else {
            self.bytes as f64 / 1e6 / s
        }
    }
    fn wall_rate(&self) -> f64 {
        let s = self.wall_s.max(1e-12);
        if self.random() {
            self.requests as f64 / s
        } else {
            self.bytes as f64 / 1e6 / s
        }
    }
}

fn delta(
    before: &BTreeMap<&'static str, u64>,
    after: &BTreeMap<&'static str, u64>,
) -> BTreeMap<&'static str, u64> {
    after.iter().map(|(k, v)| (*k, v - before.get(k).copied().unwrap_or(0))).collect()
}

fn run_phase(
    l: &mut dyn Layer,
    name: &'static str,
    mut next: impl FnMut() -> Option<(u64, usize)>,
    buf: &[u8],
) -> Res<Phase> {
    let c0 = l.counters();
    let t0 = l.clock();
    let w0 = Instant::now();
    let mut lat = Vec::new();
    let mut bytes = 0u64;
    while let Some((lba, len)) = next() {
        let before = l.clock();
        l.write(lba, &buf[..len])?;
        lat.push((l.clock() - before).0);
        bytes += len as u64;
    }
    let wall_s = w0.elapsed().as_secs_f64();
    let modelled = l.clock() - t0;
    l.flush()?;
    lat.sort_unstable();
    Ok(Phase {
        name,
        requests: lat.len() as u64,
        bytes,
        modelled,
        wall_s,
        lat,
        counters: delta(&c0, &l.counters()),
    })
}

fn sequential(addressed: u64, kib: u64) -> impl FnMut() -> Option<(u64, usize)> {
    let step = (kib / 4).max(1);
    let mut lba = 0u64;
    move || {
        (lba < addressed).then(|| {
            let n = step.min(addressed - lba);
            let r = (lba, n as usize * BLOCK);
            lba += n;
            r
        })
    }
}

/// The simulator's model alone: MB/s or IOPS at its own busy time for the phase.
fn model_rate(p: &Phase) -> Option<f64> {
    let ns = *p.counters.get("model_busy_ns")?;
    let s = ns as f64 / 1e9;
    Some(if p.random() { p.requests as f64 / s } else { p.bytes as f64 / 1e6 / s })
}

fn stats_line(kind: Kind, p: &Phase) -> String {
    let (host_bytes, c) = (p.bytes, &p.counters);
    let g = |k: &str| c.get(k).copied().unwrap_or(0);
    let wa = |k: &str| g(k) as f64 / host_bytes.max(1) as f64;
    match kind {
        Kind::Smart => {
            let upd = g("in_place") + g("out_of_place");
            let share = if upd == 0 {
                "–".to_string()
            } else {
                format!("{:.0}%", 100.0 * g("in_place") as f64 / upd as f64)
            };
            format!(
                "GC {} ({} tracks moved, {} staged), in place {share} of {upd} updates, {} new tracks; \
                 medium writes {:.2}× host; model alone {:.1} {}",
                g("gc_ondemand"),
                g("gc_tracks_moved"),
                g("staged_moves"),
                g("new_tracks"),
                wa("medium_bytes_written"),
                model_rate(p).unwrap_or(0.0),
                if p.random() { "IOPS" } else { "MB/s" },
            )
        }
        Kind::DmZoned => format!(
            "reclaims {} ({} forced, {} appends), {} blocks copied, {} buffered / {} direct blocks; \
             device writes {:.2}× host",
            g("reclaims"),
            g("forced_reclaims"),
            g("reclaim_appends"),
            g("reclaim_blocks_copied"),
            g("buffered_blocks"),
            g("direct_blocks"),
            wa("device_bytes_written"),
        ),
        Kind::Disk => String::new(),
    }
}

fn mib(b: f64) -> String {
    if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else if b >= MIB as f64 {
        format!("{:.1} MiB", b / MIB as f64)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// Runs every cell of a pass; prints its table; returns (cells, per-layer summaries) as JSON.
fn run_pass(pass: &Pass, a: &Args, buf: &[u8], started: Instant) -> Res<(Vec<Value>, Vec<Value>)> {
    let mut cells = Vec::new();
    let mut summary = Vec::new();
    println!();
    println!(
        "### pass `{}`: {} GiB media {}, random 4 KiB writes: {} (dm-zoned {})",
        pass.name,
        pass.gib,
        pass.dir.as_ref().map_or("in memory".to_string(), |d| format!("in files under {}", d.display())),
        pass.random,
        pass.dm_random
    );
    println!();
    println!("| layer | U | phase | requests | modelled rate | p50 ms | p99 ms | max ms | wall rate | layer stats |");
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---|");
    for &kind in &a.layers {
        for &u in &a.utils {
            let (mut l, addressed) = build(kind, u, pass, a)?;
            let cap = l.capacity_blocks();
            let mut phases = Vec::new();
            phases.push(run_phase(l.as_mut(), "fill", sequential(addressed, a.seq_kib), buf)?);
            let map_after_fill = l.map_bytes();
            phases.push(run_phase(l.as_mut(), "overwrite", sequential(addressed, a.seq_kib), buf)?);
            let n = if kind == Kind::DmZoned { pass.dm_random } else { pass.random };
            let mut rng = Pcg64::seed_from_u64(a.seed ^ (u * 1000.0) as u64);
            let mut left = n;
            let rand = move || {
                (left > 0).then(|| {
                    left -= 1;
                    (rng.random_range(0..addressed), BLOCK)
                })
            };
            phases.push(run_phase(l.as_mut(), "rand4k", rand, buf)?);
            let raw = l.raw_bytes();
            let cap_bytes = cap * BLOCK as u64;
            for p in &phases {
                let unit = if p.random() { "IOPS" } else { "MB/s" };
                println!(
                    "| {} | {:.0}% | {} | {} | {:.1} {unit} | {:.2} | {:.2} | {:.1} | {:.1} {unit} | {} |",
                    kind.name(),
                    u * 100.0,
                    p.name,
                    p.requests,
                    p.modelled_rate(),
                    p.pct(0.5),
                    p.pct(0.99),
                    p.max_ms(),
                    p.wall_rate(),
                    stats_line(kind, p),
                );
                cells.push(json!({
                    "pass": pass.name, "layer": kind.name(), "utilisation": u, "phase": p.name,
                    "requests": p.requests, "bytes": p.bytes,
                    "modelled_s": p.modelled.as_secs_f64(),
                    "modelled_rate": p.modelled_rate(), "unit": unit,
                    "p50_ms": p.pct(0.5), "p99_ms": p.pct(0.99), "max_ms": p.max_ms(),
                    "wall_s": p.wall_s, "wall_rate": p.wall_rate(),
                    "counters": p.counters, "model_alone_rate": model_rate(p),
                }));
            }
            summary.push(json!({
                "pass": pass.name, "layer": kind.name(), "utilisation": u,
                "raw_bytes": raw, "capacity_bytes": cap_bytes, "addressed_bytes": addressed * BLOCK as u64,
                "capacity_share": cap_bytes as f64 / raw as f64,
                "map_bytes_after_fill": map_after_fill, "map_bytes_end": l.map_bytes(),
                "map_bytes_per_tb_capacity_after_fill": map_after_fill as f64 * TB / cap_bytes as f64,
                "map_bytes_per_tb_raw_after_fill": map_after_fill as f64 * TB / raw as f64,
                "stats": l.stats_json(),
            }));
            eprintln!(
                "  {} {} U={u}: done at {:.1} s wall",
                pass.name,
                kind.name(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    println!();
    println!(
        "| layer | U | raw | capacity | share of raw | map after fill | per TB of capacity | per TB of raw |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for s in &summary {
        let f = |k: &str| s[k].as_f64().unwrap_or(0.0);
        if s["layer"] == "disk" {
            continue;
        }
        println!(
            "| {} | {:.0}% | {} | {} | {:.1}% | {} | {:.2} MB | {:.2} MB |",
            s["layer"].as_str().unwrap_or(""),
            f("utilisation") * 100.0,
            mib(f("raw_bytes")),
            mib(f("capacity_bytes")),
            f("capacity_share") * 100.0,
            mib(f("map_bytes_after_fill")),
            f("map_bytes_per_tb_capacity_after_fill") / 1e6,
            f("map_bytes_per_tb_raw_after_fill") / 1e6,
        );
    }
    Ok((cells, summary))
}

// ---------------------------------------------------------------------------------------------
// Full-scale figures: map memory and capacity share of layouts the bench does not run.

/// dm-zoned on a 1 TB device of 256 MiB zones with 1% conventional zones (`ZonedConfig::hm_smr`),
/// formatted and empty: `(map memory, capacity, raw, blocks per zone)`. Map memory then is the
/// mapping table, zone tables and metadata CRCs: no validity bitmap is loaded yet.
fn dmzoned_tb() -> Res<(u64, u64, u64, u64)> {
    let nr_zones = 1_000_000_000_000u64 / (256 * MIB);
    let zc = ZonedConfig::hm_smr(nr_zones);
    let d = DmZoned::format(MemZoned::new(&zc)?, &DmZonedConfig::default())?;
    let g = d.geometry();
    Ok((
        d.stats().map_memory_bytes,
        g.capacity_bytes(),
        d.device().info().capacity_bytes(),
        g.blocks_per_zone,
    ))
}

/// SMaRT's capacity share of raw at utilisation `u` on a medium of `gib` GiB (format only).
fn smart_share(gib: u64, u: f64) -> Res<(f64, u64, u64)> {
    let cfg = SmartStlConfig { utilisation: u, ..SmartStlConfig::default() };
    let g = smart_geometry(gib << 30, &cfg);
    let s = SmartStl::format(MemMedium::new(g)?, &cfg, MemMedium::stats)?.stats();
    Ok((s.capacity_share, s.map_bytes, s.capacity_bytes))
}

fn main() -> Res<()> {
    let (a, _tmp) = parse_args()?;
    let hdd = HddConfig::cheetah_15k5();
    let started = Instant::now();
    let buf: Vec<u8> = (0..MIB as usize).map(|i| (i * 7 + 1) as u8).collect();
    println!(
        "stl_bench: Cheetah 15K.5 mechanism ({} MB/s outer media rate, {} rpm); SMaRT on 1 MiB tracks, head \
         width 2, zones of {TRACKS_PER_ZONE} tracks; dm-zoned on {} MiB zones, {} conventional; sequential \
         requests of {} KiB",
        hdd.outer_rate_mb_s, hdd.rpm, a.zone_mib, a.conv, a.seq_kib
    );
    let mut cells = Vec::new();
    let mut layers = Vec::new();
    for pass in &a.passes {
        let (c, s) = run_pass(pass, &a, &buf, started)?;
        cells.extend(c);
        layers.extend(s);
    }

    println!();
    println!("### full-scale map memory and capacity share");
    println!();
    let gib = a.passes.first().map_or(1, |p| p.gib);
    let mut shares = Vec::new();
    for u in [0.3, 0.6, 0.9, 0.95, 0.98] {
        let (share, map, cap) = smart_share(gib, u)?;
        println!(
            "SMaRT U={u}: {:.1}% of raw given to the user; map {} for {} of capacity ({:.2} MB per TB of \
             capacity)",
            share * 100.0,
            mib(map as f64),
            mib(cap as f64),
            map as f64 * TB / cap as f64 / 1e6
        );
        shares.push(
            json!({ "utilisation": u, "capacity_share": share, "map_bytes": map, "capacity_bytes": cap }),
        );
    }
    let (dm_map, dm_cap, dm_raw, dm_bpz) = dmzoned_tb()?;
    let full_bitmaps = dm_raw / BLOCK as u64 / 8;
    println!(
        "dm-zoned, 1 TB of 256 MiB zones, 1% conventional (ZonedConfig::hm_smr), formatted, nothing mapped: {:.1}% of \
         raw given to the user; map memory {} ({:.2} MB per TB of capacity, {:.2} MB per 10 TB); the validity \
         bitmaps of every zone ({dm_bpz} blocks per zone, 1 bit each) would add {} per TB",
        dm_cap as f64 / dm_raw as f64 * 100.0,
        mib(dm_map as f64),
        dm_map as f64 * TB / dm_cap as f64 / 1e6,
        dm_map as f64 * 10.0 * TB / dm_cap as f64 / 1e6,
        mib(full_bitmaps as f64 * TB / dm_raw as f64),
    );
    let total = started.elapsed().as_secs_f64();
    eprintln!("stl_bench: {total:.1} s wall");
    if let Some(path) = &a.json {
        let doc = json!({
            "command": std::env::args().collect::<Vec<_>>().join(" "),
            "mechanism": "HddConfig::cheetah_15k5",
            "passes": a.passes.iter().map(|p| json!({
                "name": p.name, "backing": if p.dir.is_some() { "files" } else { "memory" },
                "media_gib": p.gib, "random_requests": p.random, "dmzoned_random_requests": p.dm_random,
            })).collect::<Vec<_>>(),
            "dmzoned_zone_mib": a.zone_mib, "dmzoned_nr_conv": a.conv, "seq_kib": a.seq_kib, "seed": a.seed,
            "cells": cells, "layers": layers,
            "smart_capacity_shares": shares,
            "dmzoned_1tb": { "map_memory_bytes": dm_map, "capacity_bytes": dm_cap, "raw_bytes": dm_raw,
                              "full_bitmap_bytes": full_bitmaps },
            "wall_s": total,
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc)?)?;
    }
    Ok(())
}
