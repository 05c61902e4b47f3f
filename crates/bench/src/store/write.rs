//! `write`: append throughput by I/O size (SMRSTORE Fig. 14).

use super::error::*;
use super::helpers::*;
use super::io::*;
use super::*;
use shingled_core::numeric::median_in_place;

/// The write bench's sizes at `scale`: ops per I/O size and the chunk length.
fn write_ops(opts: &StoreBenchOptions, io: usize) -> u64 {
    // 1 GiB per cell, at most 8192 I/Os (fsync-bound small writes), at least 8.
    let by_bytes = opts.n(1024.0 * MIB as f64, 1) / io as u64;
    by_bytes.min(opts.n(8192.0, 8)).max(8)
}

/// Fig. 14: appends of each I/O size over `streams` concurrent chunks.
pub fn write_bench(opts: &StoreBenchOptions) -> BResult<StoreBenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let streams = opts.streams.max(1);
    let batch = 64u64;
    let chunk_len = 64 * MIB;
    let mut rows = Vec::new();
    let mut direct = None;
    let mut next_id = 0u128;
    let rounds = opts.rounds.max(1);
    for (k, &io) in IO_SIZES.iter().enumerate() {
        let ops = write_ops(opts, io);
        let zones = zones_for(ops * io as u64 * 2);
        let geo = hm_smr_geometry(zones);
        let seed = opts.seed.wrapping_add(k as u64);
        for (dur, b) in [("every-append", 1u64), ("batched", batch)] {
            let spec = IoSpec { io_size: io, ops, streams, chunk_len, batch: b };
            let durability = if b == 1 { Durability::EveryAppend } else { Durability::Batched };
            // The wall-clock cells, `rounds` times, interleaved; each reports its median time.
            let mut walls: [(u64, Vec<f64>); 3] = Default::default();
            for _ in 0..rounds {
                // (a) engine on a device file.
                let dev = file_device(dir.path(), "engine.zdev", &geo)?;
                direct = Some(dev.is_direct());
                let mut st = Store::format(dev, io_store_config(durability)).map_err(se("formatting"))?;
                let t0 = Instant::now();
                let (db, secs) =
                    engine_writes(&mut st, &spec, seed, &mut next_id, |_| t0.elapsed().as_secs_f64())?;
                walls[0].0 = db;
                walls[0].1.push(secs);
                drop(st);
                let _ = std::fs::remove_file(dir.path().join("engine.zdev"));
                // (b) raw device file.
                let mut dev = file_device(dir.path(), "raw.zdev", &geo)?;
                let t0 = Instant::now();
                let (db, secs) = raw_writes(&mut dev, &spec, seed, |_| t0.elapsed().as_secs_f64())?;
                walls[1].0 = db;
                walls[1].1.push(secs);
                drop(dev);
                let _ = std::fs::remove_file(dir.path().join("raw.zdev"));
                // (c) file per chunk.
                let fdir = dir.path().join("files");
                std::fs::create_dir_all(&fdir).map_err(ioe("creating the files directory"))?;
                let (db, secs) = file_writes(&fdir, &spec, seed, false)?;
                walls[2].0 = db;
                walls[2].1.push(secs);
                let _ = std::fs::remove_dir_all(&fdir);
            }
            for ((system, device), (db, secs)) in
                [("engine", "file"), ("raw-zoned", "file"), ("cs-files", "fs")].into_iter().zip(&mut walls)
            {
                rows.push(row(system, device, "wall", dur, &spec, *db, median_in_place(secs)));
            }
            // (a') and (b') in modelled time.
            let mut st =
                Store::format(timed_device(&geo)?, io_store_config(durability)).map_err(se("formatting"))?;
            let (db, secs) = engine_writes(&mut st, &spec, seed, &mut next_id, |s| modelled(s.device()))?;
            rows.push(row("engine", "timed-mem", "modelled", dur, &spec, db, secs));
            let mut dev = timed_device(&geo)?;
            let (db, secs) = raw_writes(&mut dev, &spec, seed, modelled)?;
            rows.push(row("raw-zoned", "timed-mem", "modelled", dur, &spec, db, secs));
        }
    }
    set_ratios(&mut rows);
    let notes = vec![
        format!(
            "{streams} chunks appended concurrently, interleaved round-robin in one thread; OSS-data chunks sealed at {}; store pools 40/10/5, guided placement",
            size_label(chunk_len)
        ),
        format!(
            "per I/O size: min(1 GiB, 8192 I/Os) x scale {}, at least 8 I/Os; devices: HM-SMR geometry (256 MiB zones, ZBC, at least 256 zones so the pools keep 40/10/5 open zones and each of the chunks gets a zone of its own), fresh per cell",
            opts.scale
        ),
        format!(
            "durability: every-append = the engine's EveryAppend (device flush per append), raw flush per write, files write_all + sync_data per append; batched = flush/sync every {batch} I/Os and at the end (engine Batched + Store::sync)"
        ),
        format!(
            "wall = elapsed time on this machine: device file in {} (O_DIRECT: {}), files on the same file system; modelled = Timed over MemZoned (20 TB HM-SMR mechanics, zones spread over the platter, open 20 ms / close 24 ms / reset 22 ms)",
            opts.dir.as_deref().map(|p| p.display().to_string()).unwrap_or_else(|| "the system temp dir".into()),
            direct.map(|d| if d { "yes" } else { "no (buffered)" }).unwrap_or("-")
        ),
        "raw-zoned = sequential writes of the same size into one zone after another (the device's best case); vs raw = MB/s over raw-zoned's on the same device, clock and durability (cs-files: over the raw device file's)".into(),
        if rounds == 1 {
            "wall-clock cells: one run each (--rounds N repeats them and reports the median)".into()
        } else {
            format!("wall-clock cells: median time of {rounds} rounds, the engine, raw device and files interleaved in each round")
        },
    ];
    Ok(StoreBenchReport {
        bench: "write".into(),
        title: "store bench write (SMRSTORE Fig. 14: high-concurrency write)".into(),
        notes,
        table: io_table(&rows),
        extra: Vec::new(),
        plots: io_plots(&rows, "write"),
        result: BenchResult::Io(rows),
    })
}
