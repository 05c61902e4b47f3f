//! `cpu`: CPU seconds per GB written, engine vs raw device (SMRSTORE §6.5).

use super::error::*;
use super::helpers::*;
use super::io::*;
use super::*;

/// CPU cost of writing through the engine or straight to the device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuRow {
    /// `engine` or `raw-zoned`.
    pub system: String,
    /// `mem` (MemZoned: no I/O, the CPU the code itself needs) or `file` (FileZoned: system
    /// calls and page cache included).
    pub device: String,
    /// Append size.
    pub io_size: u64,
    /// User bytes written.
    pub bytes: u64,
    /// CPU seconds of the thread.
    pub cpu_seconds: f64,
    /// Wall seconds.
    pub wall_seconds: f64,
    /// CPU seconds per GB (10^9 bytes) written.
    pub cpu_s_per_gb: f64,
}

/// CPU seconds per GB written: engine vs raw device, in memory and on a device file.
pub fn cpu_bench(opts: &StoreBenchOptions) -> BResult<StoreBenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let mut rows = Vec::new();
    let streams = opts.streams.max(1);
    for io in [64usize << 10, 1 << 20] {
        for device in ["mem", "file"] {
            let total = opts.n(if device == "mem" { 512.0 } else { 256.0 } * MIB as f64, 4 * MIB);
            let spec =
                IoSpec { io_size: io, ops: total / io as u64, streams, chunk_len: 64 * MIB, batch: 64 };
            let geo = hm_smr_geometry(zones_for(total * 2));
            for system in ["engine", "raw-zoned"] {
                let cfg = io_store_config(Durability::Batched);
                let c0 = thread_cpu_seconds();
                let t0 = Instant::now();
                let mut next = 0u128;
                match (system, device) {
                    ("engine", "mem") => {
                        let mut st = Store::format(MemZoned::new(&geo).map_err(de("device"))?, cfg)
                            .map_err(se("formatting"))?;
                        engine_writes(&mut st, &spec, opts.seed, &mut next, |_| 0.0)?;
                    }
                    ("engine", _) => {
                        let mut st = Store::format(file_device(dir.path(), "cpu.zdev", &geo)?, cfg)
                            .map_err(se("formatting"))?;
                        engine_writes(&mut st, &spec, opts.seed, &mut next, |_| 0.0)?;
                    }
                    (_, "mem") => {
                        let mut d = MemZoned::new(&geo).map_err(de("device"))?;
                        raw_writes(&mut d, &spec, opts.seed, |_| 0.0)?;
                    }
                    _ => {
                        let mut d = file_device(dir.path(), "cpu.zdev", &geo)?;
                        raw_writes(&mut d, &spec, opts.seed, |_| 0.0)?;
                    }
                }
                let wall = t0.elapsed().as_secs_f64();
                let cpu = match (c0, thread_cpu_seconds()) {
                    (Some(a), Some(b)) => b - a,
                    _ => f64::NAN,
                };
                let _ = std::fs::remove_file(dir.path().join("cpu.zdev"));
                let bytes = spec.ops * io as u64;
                rows.push(CpuRow {
                    system: system.into(),
                    device: device.into(),
                    io_size: io as u64,
                    bytes,
                    cpu_seconds: cpu,
                    wall_seconds: wall,
                    cpu_s_per_gb: cpu / (bytes as f64 / 1e9),
                });
            }
        }
    }
    let mut t =
        Table::new(&["system", "device", "io size", "MB", "CPU s", "wall s", "CPU s/GB", "engine/raw"]);
    for r in &rows {
        let raw =
            rows.iter().find(|b| b.system == "raw-zoned" && b.device == r.device && b.io_size == r.io_size);
        t.rows.push(vec![
            r.system.clone(),
            r.device.clone(),
            size_label(r.io_size),
            f(mb(r.bytes), 0),
            f(r.cpu_seconds, 3),
            f(r.wall_seconds, 3),
            f(r.cpu_s_per_gb, 3),
            raw.map(|b| f(r.cpu_s_per_gb / b.cpu_s_per_gb.max(1e-12), 2)).unwrap_or_default(),
        ]);
    }
    let notes = vec![
        format!("{streams} OSS-data chunks interleaved in one thread (engine, batched durability: sync every 64 appends) vs sequential zone writes (raw, flush every 64); the write buffers are prepared before timing"),
        "CPU = this thread's time on CPU, user + system (/proc/thread-self/schedstat); mem = MemZoned (memcpy into the emulator, no I/O), file = FileZoned device file (system calls, page cache or O_DIRECT)".into(),
        "the engine's CPU covers record encoding (CRC32C per 4 KiB slice and per record), the index, the zone state machine and the emulator's copy; paper §6.5 reports cores for a 60-drive server, not CPU per GB".into(),
    ];
    Ok(StoreBenchReport {
        bench: "cpu".into(),
        title: "store bench cpu (SMRSTORE §6.5: CPU per GB written)".into(),
        notes,
        table: t,
        extra: Vec::new(),
        plots: Vec::new(),
        result: BenchResult::Cpu(rows),
    })
}
