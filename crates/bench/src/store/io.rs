//! The write and read benches' shared measurements (Figs. 14, 16): one cell over the store,
//! the raw zoned device or a file per chunk, and their table and plots.

use super::error::*;
use super::helpers::*;
use super::*;

/// One measured cell of `write` or `read`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoRow {
    /// `engine`, `raw-zoned` or `cs-files` (file per chunk on the local file system).
    pub system: String,
    /// Device under the system (`file` = FileZoned device file, `timed-mem` = MemZoned in
    /// Timed, `fs` = local file system).
    pub device: String,
    /// `wall` or `modelled`.
    pub clock: String,
    /// `every-append` (flush per I/O) or `batched` (flush every `batch` I/Os and at the end);
    /// reads: `-`.
    pub durability: String,
    /// I/O size in bytes.
    pub io_size: u64,
    /// I/Os.
    pub ops: u64,
    /// User bytes written or read.
    pub bytes: u64,
    /// Bytes the system wrote or read on its device (engine: records with headers, footers
    /// and padding; files: the user bytes).
    pub device_bytes: u64,
    /// Seconds (wall or modelled).
    pub seconds: f64,
    /// User MB/s (10^6 bytes).
    pub mb_s: f64,
    /// I/Os per second.
    pub ops_s: f64,
    /// `mb_s` over the raw device's with the same I/O size, clock, device and durability.
    pub vs_raw: Option<f64>,
}

pub(super) struct IoSpec {
    pub(super) io_size: usize,
    pub(super) ops: u64,
    pub(super) streams: usize,
    pub(super) chunk_len: u64,
    /// Sync every `batch` I/Os (1 = every append).
    pub(super) batch: u64,
}

pub(super) fn row(
    system: &str,
    device: &str,
    clock: &str,
    dur: &str,
    s: &IoSpec,
    dev_bytes: u64,
    secs: f64,
) -> IoRow {
    let bytes = s.ops * s.io_size as u64;
    let secs = secs.max(1e-9);
    IoRow {
        system: system.into(),
        device: device.into(),
        clock: clock.into(),
        durability: dur.into(),
        io_size: s.io_size as u64,
        ops: s.ops,
        bytes,
        device_bytes: dev_bytes,
        seconds: secs,
        mb_s: mb(bytes) / secs,
        ops_s: s.ops as f64 / secs,
        vs_raw: None,
    }
}

/// Appends `s.ops` I/Os of `s.io_size` bytes round-robin over `s.streams` OSS-data chunks
/// (a chunk is sealed at `chunk_len` and replaced). Returns (device bytes, seconds by `clock`).
pub(super) fn engine_writes<D: ZonedDevice>(
    store: &mut Store<D>,
    s: &IoSpec,
    seed: u64,
    next_id: &mut u128,
    clock: impl Fn(&Store<D>) -> f64,
) -> BResult<(u64, f64)> {
    let data = payload(s.io_size, seed);
    let mut chunks: Vec<(ChunkId, u64)> = Vec::new();
    let dev0 = store.stats().device_bytes_written;
    let t0 = clock(store);
    for i in 0..s.ops {
        let k = (i % s.streams as u64) as usize;
        if k >= chunks.len() || chunks[k].1 + s.io_size as u64 > s.chunk_len {
            if k < chunks.len() {
                store.seal(chunks[k].0).map_err(se("sealing a chunk"))?;
            }
            *next_id += 1;
            let id = ChunkId::from_u128(*next_id);
            store.create(id, StreamType::DATA).map_err(se("creating a chunk"))?;
            if k < chunks.len() {
                chunks[k] = (id, 0);
            } else {
                chunks.push((id, 0));
            }
        }
        store.append(chunks[k].0, &data).map_err(se(format!("appending {} bytes", s.io_size)))?;
        chunks[k].1 += s.io_size as u64;
        if s.batch > 1 && (i + 1) % s.batch == 0 {
            store.sync().map_err(se("syncing"))?;
        }
    }
    store.sync().map_err(se("syncing"))?;
    Ok((store.stats().device_bytes_written - dev0, clock(store) - t0))
}

/// Sequential writes of `s.io_size` straight to the device, one zone after another from the
/// first sequential zone (the raw device's best case), flushing as the engine does.
pub(super) fn raw_writes<D: ZonedDevice>(
    dev: &mut D,
    s: &IoSpec,
    seed: u64,
    clock: impl Fn(&D) -> f64,
) -> BResult<(u64, f64)> {
    let info = dev.info();
    let data = payload(s.io_size, seed);
    let mut zone = info.nr_conv;
    let mut wp = 0u64;
    let t0 = clock(dev);
    for i in 0..s.ops {
        let cap = info.zone_cap(zone) * SECTOR_SIZE;
        if wp + s.io_size as u64 > cap {
            dev.zone_mgmt(ZoneOp::Finish, info.zone_start(zone), info.zone_len(zone))
                .map_err(de("finishing a zone"))?;
            zone += 1;
            wp = 0;
        }
        dev.write(info.zone_start(zone) + wp / SECTOR_SIZE, &data).map_err(de("raw write"))?;
        wp += s.io_size as u64;
        if (i + 1) % s.batch == 0 {
            dev.flush().map_err(de("raw flush"))?;
        }
    }
    dev.flush().map_err(de("raw flush"))?;
    Ok((s.ops * s.io_size as u64, clock(dev) - t0))
}

/// The CS-Ext4 stand-in: each chunk a file in `dir`, appended with `write_all`; durability by
/// `sync_data` of the file after each append, or of every file written since the last sync
/// every `batch` appends.
pub(super) fn file_writes(dir: &Path, s: &IoSpec, seed: u64, direct: bool) -> BResult<(u64, f64)> {
    // O_DIRECT wants 4 KiB-aligned memory: take an aligned window of a larger buffer.
    let mut buf = vec![0u8; s.io_size + 4096];
    let at = buf.as_ptr().align_offset(4096).min(4096);
    buf[at..at + s.io_size].copy_from_slice(&payload(s.io_size, seed));
    let data = &buf[at..at + s.io_size];
    let mut files: Vec<(File, u64, bool)> = Vec::new();
    let mut n = 0u64;
    let t0 = Instant::now();
    let open = |n: u64| {
        let p = dir.join(format!("chunk-{n}"));
        let mut o = OpenOptions::new();
        o.create(true).append(true);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&p).map_err(ioe(format!("creating {}", p.display())))
    };
    for i in 0..s.ops {
        let k = (i % s.streams as u64) as usize;
        if k >= files.len() || files[k].1 + s.io_size as u64 > s.chunk_len {
            n += 1;
            let fl = open(n)?;
            if k < files.len() {
                if files[k].2 {
                    files[k].0.sync_data().map_err(ioe("sync_data"))?;
                }
                files[k] = (fl, 0, false);
            } else {
                files.push((fl, 0, false));
            }
        }
        let fe = &mut files[k];
        fe.0.write_all(data).map_err(ioe("appending to a chunk file"))?;
        fe.1 += s.io_size as u64;
        fe.2 = true;
        if s.batch == 1 {
            fe.0.sync_data().map_err(ioe("sync_data"))?;
            fe.2 = false;
        } else if (i + 1) % s.batch == 0 {
            for fe in files.iter_mut().filter(|x| x.2) {
                fe.0.sync_data().map_err(ioe("sync_data"))?;
                fe.2 = false;
            }
        }
    }
    for fe in files.iter_mut().filter(|x| x.2) {
        fe.0.sync_data().map_err(ioe("sync_data"))?;
    }
    Ok((s.ops * s.io_size as u64, t0.elapsed().as_secs_f64()))
}

pub(super) fn io_store_config(durability: Durability) -> StoreConfig {
    StoreConfig { durability, gc_free_zones: 0, ..StoreConfig::default() }
}

/// Zones for a device holding `bytes` of writes with room for the store's metadata.
/// At least 256 zones (64 GiB, sparse) whatever the cell size, so that the store's pools
/// keep their configured sizes (40/10/5 open zones fit) and every cell sees the same placement.
pub(super) fn zones_for(bytes: u64) -> u64 {
    (bytes.div_ceil(256 * MIB) * 2 + 16).max(256)
}

pub(super) fn set_ratios(rows: &mut [IoRow]) {
    let raw: Vec<IoRow> = rows.iter().filter(|r| r.system == "raw-zoned").cloned().collect();
    for r in rows.iter_mut() {
        if let Some(b) = raw.iter().find(|b| {
            b.io_size == r.io_size
                && b.clock == r.clock
                && b.durability == r.durability
                && b.device == r.device
        }) {
            r.vs_raw = Some(r.mb_s / b.mb_s.max(1e-12));
        }
    }
    // The file-per-chunk baseline has no zoned device: compare it with the wall-clock raw
    // device file under the same durability.
    for r in rows.iter_mut().filter(|r| r.system == "cs-files") {
        if let Some(b) = raw.iter().find(|b| {
            b.io_size == r.io_size && b.clock == "wall" && b.durability == r.durability && b.device == "file"
        }) {
            r.vs_raw = Some(r.mb_s / b.mb_s.max(1e-12));
        }
    }
}

pub(super) fn io_table(rows: &[IoRow]) -> Table {
    let mut t = Table::new(&[
        "system",
        "device",
        "clock",
        "durability",
        "io size",
        "ops",
        "MB",
        "device MB",
        "seconds",
        "MB/s",
        "ops/s",
        "vs raw",
    ]);
    for r in rows {
        t.rows.push(vec![
            r.system.clone(),
            r.device.clone(),
            r.clock.clone(),
            r.durability.clone(),
            size_label(r.io_size),
            r.ops.to_string(),
            f(mb(r.bytes), 1),
            f(mb(r.device_bytes), 1),
            f(r.seconds, 3),
            f(r.mb_s, 1),
            f(r.ops_s, 0),
            r.vs_raw.map(|v| f(v, 2)).unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

pub(super) fn io_plots(rows: &[IoRow], what: &str) -> Vec<Plot> {
    let cats: Vec<String> = IO_SIZES.iter().map(|&s| size_label(s as u64)).collect();
    let mut plots = Vec::new();
    for clock in ["wall", "modelled"] {
        let mut curves: Vec<Curve> = Vec::new();
        for r in rows.iter().filter(|r| r.clock == clock) {
            let name = if r.durability == "-" {
                format!("{} ({})", r.system, r.device)
            } else {
                format!("{} ({}, {})", r.system, r.device, r.durability)
            };
            let i = IO_SIZES.iter().position(|&s| s as u64 == r.io_size).unwrap_or(0) as f64;
            match curves.iter_mut().find(|c| c.name == name) {
                Some(c) => c.points.push((i, r.mb_s)),
                None => curves.push(Curve { name, points: vec![(i, r.mb_s)] }),
            }
        }
        if !curves.is_empty() {
            plots.push(Plot {
                key: format!("{what}-{clock}"),
                title: format!(
                    "{what} throughput ({})",
                    if clock == "wall" { "wall-clock, this machine" } else { "modelled HM-SMR drive" }
                ),
                x_label: "I/O size".into(),
                y_label: "MB/s".into(),
                categories: cats.clone(),
                curves,
            });
        }
    }
    plots
}
