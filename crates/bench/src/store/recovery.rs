//! `recovery`: `Store::open` time vs data written and chunk count (SMRSTORE Fig. 21).

use super::error::*;
use super::helpers::*;
use super::io::*;
use super::*;

/// One recovery measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecoveryRow {
    /// User bytes written before the restart.
    pub data_bytes: u64,
    /// Chunks.
    pub chunks: u64,
    /// Size of each chunk.
    pub chunk_bytes: u64,
    /// Records indexed.
    pub records: u64,
    /// `checkpointed` (Store::checkpoint just before the stop: recovery loads it) or `crash`
    /// (no checkpoint after the writes: recovery also scans the zones written since the last
    /// automatic one).
    pub mode: String,
    /// Wall seconds of `Store::open` on the device file.
    pub wall_seconds: f64,
    /// Modelled seconds of the same open (Timed over the file: what an HM-SMR drive would
    /// take for the same I/O).
    pub modelled_seconds: f64,
    /// Bytes `Store::open` read from the device.
    pub bytes_read: u64,
    /// Read commands.
    pub reads: u64,
    /// Records recovery found after the checkpoint.
    pub recovered_records: u64,
    /// `Store::recovery_report()`: superzone read, wall seconds.
    pub superzone_seconds: f64,
    /// Finding and loading the checkpoint, wall seconds.
    pub checkpoint_load_seconds: f64,
    /// Journal replay, wall seconds.
    pub journal_replay_seconds: f64,
    /// Datazone scan, wall seconds.
    pub datazone_scan_seconds: f64,
    /// Index build and the closing checkpoint, wall seconds.
    pub index_build_seconds: f64,
    /// Checkpoint body bytes loaded.
    pub checkpoint_bytes: u64,
    /// Journal records replayed.
    pub journal_records: u64,
    /// Datazones scanned.
    pub zones_scanned: u64,
    /// Device bytes the scan covered.
    pub bytes_scanned: u64,
}

/// Fig. 21: `Store::open` after writing a data set, by data size and by chunk count, with and
/// without a checkpoint right before the stop.
pub fn recovery_bench(opts: &StoreBenchOptions) -> BResult<StoreBenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let base = opts.n(256.0 * MIB as f64, 4 * MIB) / MIB * MIB;
    // (data, chunk size): data grows at a fixed 16 MiB chunk, then chunks shrink at fixed data.
    let mut cases: Vec<(u64, u64)> = vec![(base / 4, 16 * MIB), (base, 16 * MIB), (base * 4, 16 * MIB)];
    cases.extend([(base, MIB), (base, 64 << 10)]);
    let mut rows = Vec::new();
    let mut direct = None;
    for (i, &(data, chunk)) in cases.iter().enumerate() {
        let chunk = chunk.min(data);
        for mode in ["checkpointed", "crash"] {
            let geo = hm_smr_geometry(zones_for(data * 2));
            let path = dir.path().join(format!("rec-{i}-{mode}.zdev"));
            let dev = file_device(
                dir.path(),
                path.file_name().and_then(|n| n.to_str()).unwrap_or("rec.zdev"),
                &geo,
            )?;
            direct = Some(dev.is_direct());
            let cfg =
                StoreConfig { durability: Durability::Batched, gc_free_zones: 0, ..StoreConfig::default() };
            let mut st = Store::format(dev, cfg.clone()).map_err(se("formatting"))?;
            let io = (64 << 10).min(chunk as usize);
            let spec =
                IoSpec { io_size: io, ops: data / io as u64, streams: 8, chunk_len: chunk, batch: 256 };
            let mut next = 0u128;
            engine_writes(&mut st, &spec, opts.seed, &mut next, |_| 0.0)?;
            if mode == "checkpointed" {
                st.checkpoint().map_err(se("checkpointing"))?;
            }
            let (chunks, records) = (st.stats().chunks, st.stats().records);
            drop(st.into_device());
            let dev =
                FileZoned::open(&path, FileOptions::default()).map_err(de("reopening the device file"))?;
            let dev = Timed::new(dev, TimingConfig::default()).map_err(de("timing the device file"))?;
            let t0 = Instant::now();
            let st = Store::open(dev, cfg).map_err(se("recovering"))?;
            let wall = t0.elapsed().as_secs_f64();
            let ts = st.device().stats();
            let rr = st.recovery_report().unwrap_or_default();
            rows.push(RecoveryRow {
                data_bytes: spec.ops * io as u64,
                chunks,
                chunk_bytes: chunk,
                records,
                mode: mode.into(),
                wall_seconds: wall,
                modelled_seconds: modelled(st.device()),
                bytes_read: ts.bytes_read,
                reads: ts.reads,
                recovered_records: st.stats().recovered_records,
                superzone_seconds: rr.superzone_read.as_secs_f64(),
                checkpoint_load_seconds: rr.checkpoint_load.as_secs_f64(),
                journal_replay_seconds: rr.journal_replay.as_secs_f64(),
                datazone_scan_seconds: rr.datazone_scan.as_secs_f64(),
                index_build_seconds: rr.index_build.as_secs_f64(),
                checkpoint_bytes: rr.checkpoint_bytes,
                journal_records: rr.journal_records,
                zones_scanned: rr.zones_scanned,
                bytes_scanned: rr.bytes_scanned,
            });
            assert_eq!(st.stats().chunks, chunks, "recovery lost chunks");
            drop(st);
            let _ = std::fs::remove_file(&path);
        }
    }
    let mut t = Table::new(&[
        "data",
        "chunks",
        "records",
        "mode",
        "open wall s",
        "super",
        "ckpt load",
        "journal",
        "scan",
        "index",
        "ckpt MB",
        "zones scanned",
        "MB scanned",
        "modelled s",
        "MB read",
        "reads",
    ]);
    for r in &rows {
        t.rows.push(vec![
            size_label(r.data_bytes),
            r.chunks.to_string(),
            r.records.to_string(),
            r.mode.clone(),
            f(r.wall_seconds, 4),
            f(r.superzone_seconds, 4),
            f(r.checkpoint_load_seconds, 4),
            f(r.journal_replay_seconds, 4),
            f(r.datazone_scan_seconds, 4),
            f(r.index_build_seconds, 4),
            f(mb(r.checkpoint_bytes), 3),
            r.zones_scanned.to_string(),
            f(mb(r.bytes_scanned), 1),
            f(r.modelled_seconds, 3),
            f(mb(r.bytes_read), 2),
            r.reads.to_string(),
        ]);
    }
    let curve = |mode: &str| Curve {
        name: format!("{mode} (wall)"),
        points: rows
            .iter()
            .filter(|r| r.mode == mode && r.chunk_bytes == 16 * MIB)
            .map(|r| (mb(r.data_bytes), r.wall_seconds))
            .collect(),
    };
    let plots = vec![Plot {
        key: "recovery".into(),
        title: "recovery: Store::open wall time vs data written (16 MiB chunks)".into(),
        x_label: "data written (MB)".into(),
        y_label: "seconds".into(),
        categories: Vec::new(),
        curves: vec![curve("checkpointed"), curve("crash")],
    }];
    let notes = vec![
        format!("device file (FileZoned, HM-SMR geometry: 256 MiB zones; O_DIRECT: {}), data appended in 64 KiB appends over 8 concurrent OSS-data chunks, batched durability, synced before the stop; then Store::open on the reopened file", direct.map(|d| d.to_string()).unwrap_or_default()),
        "wall = Store::open elapsed on this machine (page cache warm: the file was just written); modelled = the same open's I/O on Timed (HM-SMR mechanics); MB read and reads counted by Timed".into(),
        "breakdown (wall seconds) from Store::recovery_report(): superzone read, checkpoint find + load, journal replay, datazone scan, index build + the closing checkpoint; open wall s is timed around Store::open by the bench".into(),
    ];
    Ok(StoreBenchReport {
        bench: "recovery".into(),
        title: "store bench recovery (SMRSTORE Fig. 21)".into(),
        notes,
        table: t,
        extra: Vec::new(),
        plots,
        result: BenchResult::Recovery(rows),
    })
}

// ----- memory and CPU (§6.5) ------------------------------------------------------------
