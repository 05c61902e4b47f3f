//! `read`: random-read throughput by I/O size (SMRSTORE Fig. 16).

use super::error::*;
use super::helpers::*;
use super::io::*;
use super::*;

/// Random reads of `s.io_size` at 4 KiB-aligned random offsets of random chunks.
fn engine_reads<D: ZonedDevice>(
    store: &mut Store<D>,
    ids: &[ChunkId],
    chunk_len: u64,
    s: &IoSpec,
    rng: &mut Rng,
    clock: impl Fn(&Store<D>) -> f64,
) -> BResult<f64> {
    let t0 = clock(store);
    let slots = (chunk_len - s.io_size as u64) / BLOCK + 1;
    for _ in 0..s.ops {
        let id = ids[rng.below(ids.len() as u64) as usize];
        let off = rng.below(slots) * BLOCK;
        let d = store.read(id, off, s.io_size as u64).map_err(se("reading"))?;
        debug_assert_eq!(d.len(), s.io_size);
    }
    Ok(clock(store) - t0)
}

/// Random reads of the raw device inside the first `zones` sequential zones' written bytes.
fn raw_reads<D: ZonedDevice>(
    dev: &mut D,
    written: u64,
    s: &IoSpec,
    rng: &mut Rng,
    clock: impl Fn(&D) -> f64,
) -> BResult<f64> {
    let info = dev.info();
    let zb = info.zone_cap(info.nr_conv) * SECTOR_SIZE;
    let mut buf = vec![0u8; s.io_size];
    let slots = (written - s.io_size as u64) / BLOCK + 1;
    let t0 = clock(dev);
    for _ in 0..s.ops {
        let off = rng.below(slots) * BLOCK;
        let (z, o) = (info.nr_conv + off / zb, off % zb);
        let o = o.min(zb - s.io_size as u64) / BLOCK * BLOCK;
        dev.read(info.zone_start(z) + o / SECTOR_SIZE, &mut buf).map_err(de("raw read"))?;
    }
    Ok(clock(dev) - t0)
}

fn read_preload<D: ZonedDevice>(
    store: &mut Store<D>,
    n: usize,
    chunk_len: u64,
    seed: u64,
) -> BResult<Vec<ChunkId>> {
    let spec =
        IoSpec { io_size: MIB as usize, ops: n as u64 * chunk_len / MIB, streams: n, chunk_len, batch: 64 };
    let mut next = 1000u128;
    engine_writes(store, &spec, seed, &mut next, |_| 0.0)?;
    let mut ids: Vec<ChunkId> = store.list().into_iter().map(|c| c.id).collect();
    ids.sort();
    Ok(ids)
}

/// Fig. 16: random reads of each I/O size over chunks written beforehand.
pub fn read_bench(opts: &StoreBenchOptions) -> BResult<StoreBenchReport> {
    let dir = opts.tempdir().map_err(ioe("creating the bench directory"))?;
    let n = opts.streams.max(1);
    let chunk_len = (opts.n(64.0 * MIB as f64, 2 * MIB) / MIB).max(2) * MIB;
    let total = n as u64 * chunk_len;
    let geo = hm_smr_geometry(zones_for(total * 2));
    let batched = StoreConfig { durability: Durability::Batched, ..io_store_config(Durability::Batched) };
    // Preload once per system.
    let dev = file_device(dir.path(), "engine.zdev", &geo)?;
    let direct = dev.is_direct();
    let mut fst = Store::format(dev, batched.clone()).map_err(se("formatting"))?;
    let fids = read_preload(&mut fst, n, chunk_len, opts.seed)?;
    let mut raw = file_device(dir.path(), "raw.zdev", &geo)?;
    let pre = IoSpec { io_size: MIB as usize, ops: total / MIB, streams: 1, chunk_len: total, batch: 64 };
    raw_writes(&mut raw, &pre, opts.seed, |_| 0.0)?;
    let fdir = dir.path().join("files");
    std::fs::create_dir_all(&fdir).map_err(ioe("creating the files directory"))?;
    let pre_f = IoSpec { io_size: MIB as usize, ops: total / MIB, streams: n, chunk_len, batch: 64 };
    file_writes(&fdir, &pre_f, opts.seed, direct)?;
    let files: Vec<File> = (1..=n as u64)
        .map(|i| File::open(fdir.join(format!("chunk-{i}"))).map_err(ioe("opening a chunk file")))
        .collect::<BResult<_>>()?;
    let mut tst = Store::format(timed_device(&geo)?, batched).map_err(se("formatting"))?;
    let tids = read_preload(&mut tst, n, chunk_len, opts.seed)?;
    let mut traw = timed_device(&geo)?;
    raw_writes(&mut traw, &pre, opts.seed, modelled)?;

    let mut rows = Vec::new();
    for (k, &io) in IO_SIZES.iter().enumerate() {
        let ops = (opts.n(256.0 * MIB as f64, 1) / io as u64).min(opts.n(16384.0, 16)).max(16);
        let spec = IoSpec { io_size: io, ops, streams: n, chunk_len, batch: 1 };
        let seed = opts.seed.wrapping_add(100 + k as u64);
        let t0 = Instant::now();
        let secs = engine_reads(&mut fst, &fids, chunk_len, &spec, &mut Rng::new(seed), |_| {
            t0.elapsed().as_secs_f64()
        })?;
        rows.push(row("engine", "file", "wall", "-", &spec, 0, secs));
        let t0 = Instant::now();
        let secs = raw_reads(&mut raw, total, &spec, &mut Rng::new(seed), |_| t0.elapsed().as_secs_f64())?;
        rows.push(row("raw-zoned", "file", "wall", "-", &spec, spec.ops * io as u64, secs));
        let mut rng = Rng::new(seed);
        let mut buf = vec![0u8; io];
        let slots = (chunk_len - io as u64) / BLOCK + 1;
        let t0 = Instant::now();
        for _ in 0..ops {
            let fl = &files[rng.below(n as u64) as usize];
            fl.read_exact_at(&mut buf, rng.below(slots) * BLOCK).map_err(ioe("reading a chunk file"))?;
        }
        rows.push(row("cs-files", "fs", "wall", "-", &spec, ops * io as u64, t0.elapsed().as_secs_f64()));
        let r0 = tst.device().stats().bytes_read;
        let secs =
            engine_reads(&mut tst, &tids, chunk_len, &spec, &mut Rng::new(seed), |s| modelled(s.device()))?;
        let db = tst.device().stats().bytes_read - r0;
        rows.push(row("engine", "timed-mem", "modelled", "-", &spec, db, secs));
        let secs = raw_reads(&mut traw, total, &spec, &mut Rng::new(seed), modelled)?;
        rows.push(row("raw-zoned", "timed-mem", "modelled", "-", &spec, ops * io as u64, secs));
        // Wall-clock engine device bytes: the same reads cost the same bytes as on the timed
        // device (identical layout and offsets), so copy them.
        let n_rows = rows.len();
        rows[n_rows - 5].device_bytes = db;
    }
    set_ratios(&mut rows);
    let notes = vec![
        format!(
            "{n} OSS-data chunks of {} each written first (1 MiB appends, batched); reads at 4 KiB-aligned random offsets of random chunks, one at a time (queue depth 1)",
            size_label(chunk_len)
        ),
        format!("per I/O size: min(256 MiB, 16384 reads) x scale {}, at least 16 reads", opts.scale),
        format!(
            "wall = elapsed time on this machine (device file and chunk files both written with O_DIRECT: {direct}, so neither starts in the page cache; both are then read with buffered reads, so repeated reads of the same blocks hit the page cache alike); modelled = Timed over MemZoned (20 TB HM-SMR mechanics)"
        ),
        "raw-zoned = reads of the same sizes at random aligned offsets of the written zones; engine device MB = bytes read from the device (whole slices with footers, 4 KiB aligned)".into(),
    ];
    drop(fst);
    drop(raw);
    Ok(StoreBenchReport {
        bench: "read".into(),
        title: "store bench read (SMRSTORE Fig. 16: high-concurrency random read)".into(),
        notes,
        table: io_table(&rows),
        extra: Vec::new(),
        plots: io_plots(&rows, "read"),
        result: BenchResult::Io(rows),
    })
}

// ----- macro (Table 3, Figs. 19, 20) ----------------------------------------------------
