//! `macro`: mixed streams with deletions and GC, placement ablation (SMRSTORE Table 3, Figs. 19, 20).

use super::error::*;
use super::helpers::*;
use super::tap::*;
use super::*;

/// One stream of the macro workload (a row of SMRSTORE Table 3, scaled).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamSpec {
    /// Table 3's name.
    pub name: String,
    /// Stream type of its chunks.
    pub stream: u8,
    /// Smallest and largest append (uniform in 4 KiB steps).
    pub io: (u64, u64),
    /// Chunk size when the chunk-size rule is on (big chunks: what fits in one zone).
    pub chunk: u64,
    /// Chunk size when the rule is off (the paper's no-optimisation 64 MB of 256 MB zones).
    pub chunk_no_limit: u64,
    /// Share of the bytes written: Table 3's per-job rate times its numjobs (8 × 400, 8 × 20,
    /// 3 × 200, 1 × 80 MB/s = 4.04 GB/s, the macrobenchmark's stable 4 GB/s of §3.1; GC streams
    /// 83% of the bytes and metadata 2%, as §2.1 states for the capacity used).
    pub rate: f64,
    /// Chunks written concurrently.
    pub concurrent: usize,
}

/// One throughput window of a macro run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Window {
    /// Modelled seconds at the window's end.
    pub t: f64,
    /// User bytes written so far / datazone capacity.
    pub written: f64,
    /// User MB/s in the window (modelled).
    pub mb_s: f64,
    /// Device bytes GC wrote in the window.
    pub gc_bytes: u64,
    /// Whether deletions had started.
    pub deleting: bool,
}

/// One placement configuration's macro run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MacroRun {
    /// `guided (1+2+3)`, `one-zone`, `none`, `+1`, `+1+2`.
    pub name: String,
    /// User bytes appended.
    pub user_bytes: u64,
    /// Device bytes written (records, journal, checkpoints, GC copies).
    pub device_bytes: u64,
    /// Device bytes written by GC rounds (copies plus their checkpoints and journal).
    pub gc_bytes: u64,
    /// Zones migrated by GC.
    pub gc_migrations: u64,
    /// Zone resets.
    pub zone_resets: u64,
    /// Modelled seconds in GC.
    pub gc_seconds: f64,
    /// `device_bytes / user_bytes`.
    pub write_amplification: f64,
    /// `(device_bytes) / (device_bytes - gc_bytes)`: what GC adds on top of the foreground.
    pub gc_write_amplification: f64,
    /// Chunks deleted.
    pub deletions: u64,
    /// Mean user MB/s (modelled) before deletions start.
    pub mb_s_fill: f64,
    /// Mean user MB/s (modelled) after deletions start.
    pub mb_s_steady: f64,
    /// Appends refused for lack of space (the run stops at the first).
    pub out_of_space: bool,
    /// Throughput windows.
    pub windows: Vec<Window>,
    /// Valid-data fraction of each full datazone at the end, sorted (Fig. 20's CDF).
    pub zone_utilisation: Vec<f64>,
}

/// One zone a macro run's GC reclaimed, as it was when GC picked it (seen through [`Tap`]).
#[derive(Clone, Debug, PartialEq)]
struct Victim {
    /// Pool key of its records (store: 0 data, 1 metadata, 2 GC streams, 3 GC copies; 0 for
    /// everything without rule 1).
    pool: u8,
    /// Bit `i` set: stream `i` of [`macro_streams`] has records in it.
    streams: u8,
    /// Chunks with records in it, and how many of those are live.
    chunks: usize,
    live_chunks: usize,
    /// Chunks with records in it that also have bytes elsewhere.
    split_chunks: usize,
    /// Live user bytes in it at GC time.
    live_bytes: u64,
    /// User bytes written into it.
    stored_bytes: u64,
    /// Whether GC copied data out (false: it was garbage already and only reset).
    migrated: bool,
}

/// The macro workload at `zone` bytes per zone: Table 3 with every size multiplied by
/// `zone / 256 MiB` (at least 4 KiB). Table 3's `rate` is per fio job: the four processes
/// together must make §3.1's "stable 4GB/s", which only `numjobs × rate` does (3200 + 160 +
/// 600 + 80 = 4040 MB/s; the bare rates sum to 700 MB/s), and only that split matches §2.1
/// (OSS GC chunks > 80% of the capacity used, metadata ~2%).
pub fn macro_streams(zone: u64) -> Vec<StreamSpec> {
    let k = |b: u64| (b * zone / (256 * MIB)).max(BLOCK) / BLOCK * BLOCK;
    // Big chunks under rule 2: the most 1 MiB-scaled appends whose records fit in one zone.
    let io_big = k(MIB).max(64 << 10);
    let per_zone = zone / format::record_len(format::data_payload_len(io_big as usize));
    let fit = per_zone * io_big;
    let spec = |name: &str, st: StreamType, io: (u64, u64), chunk: u64, nl: u64, rate: f64, c: usize| {
        StreamSpec { name: name.into(), stream: st.0, io, chunk, chunk_no_limit: nl, rate, concurrent: c }
    };
    vec![
        spec("OSS GC Wr 1", StreamType::GC, (io_big, io_big), fit, k(64 * MIB), 8.0 * 400.0, 2),
        spec("OSS GC Wr 2", StreamType::GC, (io_big, io_big), k(64 * MIB), k(64 * MIB), 8.0 * 20.0, 1),
        spec("OSS Data Wr", StreamType::DATA, (io_big, io_big), fit, k(64 * MIB), 3.0 * 200.0, 2),
        spec(
            "OSS Meta Wr",
            StreamType::METADATA,
            (k(4 << 10), k(128 << 10)),
            k(4 * MIB),
            k(4 * MIB),
            80.0,
            8,
        ),
    ]
}

/// Placement configurations of the macro bench: Fig. 19's ablation and one-zone.
pub fn macro_placements() -> Vec<(&'static str, Placement)> {
    let g = |a, b, c| Placement::Guided { separate_streams: a, chunk_limit: b, round_robin: c };
    vec![
        ("guided (1+2+3)", g(true, true, true)),
        ("one-zone", Placement::OneZone),
        ("none", g(false, false, false)),
        ("+1", g(true, false, false)),
        ("+1+2", g(true, true, false)),
    ]
}

struct Live {
    id: ChunkId,
    len: u64,
    /// Device bytes of its records.
    footprint: u64,
    sealed: bool,
}

/// Valid-data fraction of each full datazone: scans the zone's records and counts the user
/// bytes of records whose chunk still exists (no crash happened, so every record of a
/// live chunk is its only copy: GC resets the zone it copied from).
fn zone_utilisation<D: ZonedDevice>(store: &mut Store<D>) -> BResult<Vec<f64>> {
    let live: BTreeSet<ChunkId> = store.list().into_iter().map(|c| c.id).collect();
    let info: DeviceInfo = store.device().info();
    let full: Vec<u64> =
        store.zone_states().into_iter().filter(|z| z.1 == ZoneState::Full).map(|z| z.0).collect();
    let mut out = Vec::new();
    for z in full {
        let cap = info.zone_cap(z) * SECTOR_SIZE;
        let mut buf = vec![0u8; cap as usize];
        store.device_mut().read(info.zone_start(z), &mut buf).map_err(de(format!("scanning zone {z}")))?;
        let (mut off, mut valid) = (0usize, 0u64);
        while off + BLOCK as usize <= buf.len() {
            let Ok(h) = format::decode_header(&buf[off..off + HEADER_LEN]) else { break };
            let len = h.record_len() as usize;
            if h.rtype == RecordType::Data && off + HEADER_LEN + DATA_PREFIX <= buf.len() {
                let p = &buf[off + HEADER_LEN..off + HEADER_LEN + DATA_PREFIX];
                if let Ok(d) = format::decode_data_prefix(p, h.payload_len as usize) {
                    if live.contains(&d.chunk) {
                        valid += d.len as u64;
                    }
                }
            }
            if len == 0 {
                break;
            }
            off += len;
        }
        out.push(valid as f64 / cap as f64);
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

/// Runs the macro workload once with `placement`.
fn macro_run(
    name: &str,
    placement: Placement,
    opts: &StoreBenchOptions,
    geo: &ZonedConfig,
    util: f64,
    turnover: f64,
) -> BResult<(MacroRun, Vec<Victim>)> {
    let mut cfg = StoreConfig {
        placement,
        nr_metazones: 4,
        pool_gc: 3,
        pool_data: 2,
        pool_metadata: 1,
        gc_free_zones: 0,
        ..StoreConfig::default()
    };
    let zone = geo.zone_size.0;
    cfg.metadata_chunk_limit = (64 * MIB * zone / (256 * MIB)).max(BLOCK);
    let mem = MemZoned::new(geo).map_err(de("building the in-memory device"))?;
    let dev =
        Timed::new(Tap::new(mem), TimingConfig::default()).map_err(de("timing the in-memory device"))?;
    let mut store = Store::format(dev, cfg).map_err(se("formatting"))?;
    let datazones = store.stats().datazones;
    let cap = datazones * zone;
    let target = (util * cap as f64) as u64;
    let total = target + (turnover * cap as f64) as u64;
    let window = (cap / 20).max(MIB);
    let streams = macro_streams(zone);
    // One-zone writes Table 3's chunk sizes (those of rule 2); only the ablation's runs
    // without rule 2 get the no-optimisation size.
    let limit = matches!(placement, Placement::Guided { chunk_limit: true, .. } | Placement::OneZone);
    let wsum: f64 = streams.iter().map(|s| s.rate).sum();
    let mut rng = Rng::new(opts.seed);
    let data = payload(128 * MIB as usize / 16, opts.seed);
    let mut open: Vec<Vec<Option<(ChunkId, u64)>>> =
        streams.iter().map(|s| vec![None; s.concurrent]).collect();
    let mut chunks: Vec<Live> = Vec::new();
    let (mut next_id, mut live, mut user) = (0u128, 0u64, 0u64);
    let (mut gc_bytes, mut gc_secs, mut deletions) = (0u64, 0.0f64, 0u64);
    let (mut w_start_t, mut w_start_b, mut w_gc) = (0.0f64, 0u64, 0u64);
    let mut windows = Vec::new();
    let mut deleting = false;
    let mut out_of_space = false;
    // Every chunk ever created: stream index, bytes appended, live.
    let mut registry: HashMap<ChunkId, (usize, u64, bool)> = HashMap::new();
    let mut victims = Vec::new();
    while user < total {
        // Stream by its share of bytes.
        let mut x = rng.f64() * wsum;
        let si = streams.iter().position(|s| {
            x -= s.rate;
            x < 0.0
        });
        let si = si.unwrap_or(streams.len() - 1);
        let s = &streams[si];
        let slot = rng.below(s.concurrent as u64) as usize;
        let steps = (s.io.1 - s.io.0) / BLOCK + 1;
        let io = s.io.0 + rng.below(steps) * BLOCK;
        let chunk_len = if limit { s.chunk } else { s.chunk_no_limit };
        if open[si][slot].is_none() {
            next_id += 1;
            let id = ChunkId::from_u128(next_id);
            store.create(id, StreamType(s.stream)).map_err(se("creating a chunk"))?;
            chunks.push(Live { id, len: 0, footprint: 0, sealed: false });
            registry.insert(id, (si, 0, true));
            open[si][slot] = Some((id, chunks.len() as u64 - 1));
        }
        let (id, _) = open[si][slot].expect("set above");
        // GC as the store's automatic round would (watermark 2 free zones), counted apart.
        while store.free_zones() < 2 {
            let (b0, t0) = (store.stats().device_bytes_written, modelled(store.device()));
            let m0 = store.stats().gc_migrations;
            store.device().inner().take_resets();
            match store.gc() {
                Ok(Some(z)) => {
                    let resets = store.device().inner().take_resets();
                    if let Some((_, recs)) = resets.iter().rev().find(|r| r.0 == z) {
                        let migrated = store.stats().gc_migrations > m0;
                        victims.push(victim(recs, &registry, migrated));
                    }
                    gc_bytes += store.stats().device_bytes_written - b0;
                    w_gc += store.stats().device_bytes_written - b0;
                    gc_secs += modelled(store.device()) - t0;
                }
                Ok(None) | Err(shingled_store::StoreError::NoSpace(_)) => break,
                Err(e) => return Err(se("garbage collection")(e)),
            }
        }
        let k = chunks.iter().rposition(|c| c.id == id).expect("open chunk is listed");
        let n = io.min(chunk_len - chunks[k].len) as usize;
        match store.append(id, &data[..n]) {
            Ok(()) => {}
            Err(shingled_store::StoreError::NoSpace(_)) => {
                out_of_space = true;
                break;
            }
            Err(e) => return Err(se("appending")(e)),
        }
        let rec = format::record_len(format::data_payload_len(n));
        chunks[k].len += n as u64;
        chunks[k].footprint += rec;
        registry.get_mut(&id).expect("registered at create").1 += n as u64;
        live += rec;
        user += n as u64;
        if chunks[k].len >= chunk_len {
            store.seal(id).map_err(se("sealing"))?;
            chunks[k].sealed = true;
            open[si][slot] = None;
        }
        if live >= target {
            deleting = true;
        }
        // Random deletions of sealed chunks keep utilisation at the target.
        while deleting && live > target {
            let sealed = chunks.iter().filter(|c| c.sealed).count() as u64;
            if sealed == 0 {
                break;
            }
            let mut pick = rng.below(sealed);
            let k = chunks
                .iter()
                .position(|c| {
                    if !c.sealed {
                        return false;
                    }
                    if pick == 0 {
                        return true;
                    }
                    pick -= 1;
                    false
                })
                .expect("counted");
            let c = chunks.swap_remove(k);
            store.delete(c.id).map_err(se("deleting"))?;
            registry.get_mut(&c.id).expect("registered at create").2 = false;
            live -= c.footprint;
            deletions += 1;
        }
        if user - w_start_b >= window {
            let t = modelled(store.device());
            windows.push(Window {
                t,
                written: user as f64 / cap as f64,
                mb_s: mb(user - w_start_b) / (t - w_start_t).max(1e-12),
                gc_bytes: w_gc,
                deleting,
            });
            (w_start_t, w_start_b, w_gc) = (t, user, 0);
        }
    }
    let st = store.stats();
    let mean = |del: bool| {
        let w: Vec<&Window> = windows.iter().filter(|w| w.deleting == del).collect();
        if w.is_empty() {
            0.0
        } else {
            w.iter().map(|w| w.mb_s).sum::<f64>() / w.len() as f64
        }
    };
    let (mb_s_fill, mb_s_steady) = (mean(false), mean(true));
    let zone_utilisation = zone_utilisation(&mut store)?;
    let run = MacroRun {
        name: name.into(),
        user_bytes: user,
        device_bytes: st.device_bytes_written,
        gc_bytes,
        gc_migrations: st.gc_migrations,
        zone_resets: st.zone_resets,
        gc_seconds: gc_secs,
        write_amplification: st.device_bytes_written as f64 / user.max(1) as f64,
        gc_write_amplification: st.device_bytes_written as f64
            / (st.device_bytes_written - gc_bytes).max(1) as f64,
        deletions,
        mb_s_fill,
        mb_s_steady,
        out_of_space,
        windows,
        zone_utilisation,
    };
    Ok((run, victims))
}

/// What a reclaimed zone held when GC picked it: `recs` as [`Tap`] logged them at its reset,
/// liveness from the bench's own registry (no deletions happen inside a GC round).
fn victim(recs: &[TapRec], registry: &HashMap<ChunkId, (usize, u64, bool)>, migrated: bool) -> Victim {
    let mut per: BTreeMap<ChunkId, u64> = BTreeMap::new();
    let mut v = Victim {
        pool: recs.first().map_or(0, |r| r.pool),
        streams: 0,
        chunks: 0,
        live_chunks: 0,
        split_chunks: 0,
        live_bytes: 0,
        stored_bytes: 0,
        migrated,
    };
    for r in recs {
        *per.entry(r.chunk).or_default() += r.len as u64;
        v.stored_bytes += r.len as u64;
    }
    for (id, b) in &per {
        let Some(&(si, len, live)) = registry.get(id) else { continue };
        v.streams |= 1 << si;
        v.chunks += 1;
        if live {
            v.live_chunks += 1;
            v.live_bytes += b;
        }
        if *b < len {
            v.split_chunks += 1;
        }
    }
    v
}

/// The kind of a GC victim, for the breakdown table.
fn victim_kind(v: &Victim, streams: &[StreamSpec]) -> String {
    if !v.migrated {
        return "garbage (reset only)".into();
    }
    if v.pool == 3 {
        return "GC destination zone (copies)".into();
    }
    let names: Vec<&str> = streams
        .iter()
        .enumerate()
        .filter(|(i, _)| v.streams & (1 << i) != 0)
        .map(|(_, s)| s.name.trim_start_matches("OSS "))
        .collect();
    names.join(" + ")
}

/// Table 3 / Figs. 19–20: the multi-stream workload on a timed in-memory HM-SMR device,
/// filled to 80% and then kept there by random deletions while writes go on, once per
/// placement configuration.
pub fn macro_bench(opts: &StoreBenchOptions) -> BResult<StoreBenchReport> {
    macro_bench_with(opts, &macro_placements())
}

/// [`macro_bench`] over chosen placements.
pub fn macro_bench_with(
    opts: &StoreBenchOptions,
    placements: &[(&str, Placement)],
) -> BResult<StoreBenchReport> {
    // 16 MiB zones (SMRSTORE's 256 MiB / 16) and 96 zones (1.5 GiB) at scale 1; below it
    // the zones shrink (a power of two, at least 2 MiB) so that every size in Table 3 shrinks
    // with them, and the count stays at 48 or more (the pools and GC need free zones).
    let zone = (16.0 * MIB as f64 * opts.scale.clamp(1.0 / 8.0, 1.0)) as u64;
    let zone = 1u64 << (63 - zone.leading_zeros());
    let nr = opts.n(96.0, 48);
    let geo = ZonedConfig {
        capacity: shingled_zoned_bytes(nr * zone),
        zone_size: shingled_zoned_bytes(zone),
        ..hm_smr_geometry(nr)
    };
    // Twice the capacity of writes after the fill at scale >= 1/4, less below (tests).
    let (util, turnover) = (0.8, (8.0 * opts.scale).clamp(0.5, 2.0));
    let mut runs = Vec::new();
    let mut vt = Table::new(&[
        "placement",
        "victim zones hold",
        "zones",
        "chunks/zone",
        "live chunks/zone",
        "zones with a split chunk",
        "live at GC",
        "MB copied",
    ]);
    let zone_cap = {
        let info = MemZoned::new(&geo).map_err(de("building the in-memory device"))?.info();
        info.zone_cap(info.nr_conv) * SECTOR_SIZE
    };
    for (name, p) in placements {
        let (run, victims) = macro_run(name, *p, opts, &geo, util, turnover)?;
        let streams = macro_streams(zone);
        let mut kinds: BTreeMap<String, Vec<&Victim>> = BTreeMap::new();
        for v in &victims {
            kinds.entry(victim_kind(v, &streams)).or_default().push(v);
        }
        let mut rows: Vec<(String, Vec<&Victim>)> = kinds.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1.len()));
        for (kind, vs) in rows {
            let n = vs.len() as f64;
            let mean = |g: &dyn Fn(&Victim) -> f64| vs.iter().map(|v| g(v)).sum::<f64>() / n;
            vt.rows.push(vec![
                name.to_string(),
                kind,
                vs.len().to_string(),
                f(mean(&|v| v.chunks as f64), 1),
                f(mean(&|v| v.live_chunks as f64), 1),
                vs.iter().filter(|v| v.split_chunks > 0).count().to_string(),
                f(mean(&|v| v.live_bytes as f64 / zone_cap as f64) * 100.0, 0) + "%",
                f(mb(vs.iter().filter(|v| v.migrated).map(|v| v.live_bytes).sum()), 0),
            ]);
        }
        runs.push(run);
    }
    let mut t = Table::new(&[
        "placement",
        "user MB",
        "device MB",
        "WA",
        "GC MB",
        "GC WA",
        "GC zones",
        "resets",
        "GC s",
        "deleted",
        "MB/s fill",
        "MB/s steady",
        "steady/fill",
        "zones<50%",
        "median util",
    ]);
    for r in &runs {
        let low = r.zone_utilisation.iter().filter(|&&u| u < 0.5).count();
        let med = r.zone_utilisation.get(r.zone_utilisation.len() / 2).copied().unwrap_or(0.0);
        t.rows.push(vec![
            r.name.clone() + if r.out_of_space { " (out of space)" } else { "" },
            f(mb(r.user_bytes), 0),
            f(mb(r.device_bytes), 0),
            f(r.write_amplification, 2),
            f(mb(r.gc_bytes), 0),
            f(r.gc_write_amplification, 2),
            r.gc_migrations.to_string(),
            r.zone_resets.to_string(),
            f(r.gc_seconds, 1),
            r.deletions.to_string(),
            f(r.mb_s_fill, 1),
            f(r.mb_s_steady, 1),
            f(r.mb_s_steady / r.mb_s_fill.max(1e-12), 2),
            format!("{low}/{}", r.zone_utilisation.len()),
            f(med * 100.0, 0) + "%",
        ]);
    }
    let mut st = Table::new(&[
        "stream (Table 3)",
        "type",
        "append",
        "chunk (rule 2 on)",
        "chunk (off)",
        "share",
        "concurrent",
    ]);
    let streams = macro_streams(zone);
    let wsum: f64 = streams.iter().map(|s| s.rate).sum();
    for s in &streams {
        st.rows.push(vec![
            s.name.clone(),
            s.stream.to_string(),
            if s.io.0 == s.io.1 {
                size_label(s.io.0)
            } else {
                format!("{}..{}", size_label(s.io.0), size_label(s.io.1))
            },
            size_label(s.chunk),
            size_label(s.chunk_no_limit),
            f(s.rate / wsum * 100.0, 0) + "%",
            s.concurrent.to_string(),
        ]);
    }
    // Figs. 17 and 18 compare SMRSTORE with the one-zone layout, Figs. 19 and 20 the
    // ablation: one plot each, at most four curves (the palette's distinct colours).
    let one_zone = |r: &&MacroRun| r.name == "one-zone" || r.name.starts_with("guided");
    let ablation = |r: &&MacroRun| r.name != "one-zone";
    let throughput = |key: &str, title: &str, pick: &dyn Fn(&&MacroRun) -> bool| Plot {
        key: key.into(),
        title: title.into(),
        x_label: "modelled time (s)".into(),
        y_label: "MB/s".into(),
        categories: Vec::new(),
        curves: runs
            .iter()
            .filter(pick)
            .map(|r| Curve {
                name: r.name.clone(),
                points: r.windows.iter().map(|w| (w.t, w.mb_s)).collect(),
            })
            .collect(),
    };
    let cdf = |key: &str, title: &str, pick: &dyn Fn(&&MacroRun) -> bool| Plot {
        key: key.into(),
        title: title.into(),
        x_label: "zone utilisation (%)".into(),
        y_label: "fraction of full zones".into(),
        categories: Vec::new(),
        curves: runs
            .iter()
            .filter(pick)
            .map(|r| Curve { name: r.name.clone(), points: cdf_points(&r.zone_utilisation) })
            .collect(),
    };
    let plots = vec![
        throughput(
            "macro-throughput",
            "macro: user throughput per window, guided vs one-zone (modelled)",
            &one_zone,
        ),
        throughput(
            "macro-ablation",
            "macro: user throughput per window, placement rules (Fig. 19, modelled)",
            &ablation,
        ),
        cdf(
            "macro-zone-cdf",
            "macro: valid data in full zones at the end, guided vs one-zone (CDF)",
            &one_zone,
        ),
        cdf(
            "macro-ablation-cdf",
            "macro: valid data in full zones at the end, placement rules (Fig. 20)",
            &ablation,
        ),
    ];
    let notes = vec![
        format!("device: MemZoned in Timed (20 TB HM-SMR mechanics), {nr} zones of {} (SMRSTORE's 256 MiB / {}), 1 conventional; all times modelled, deterministic for seed {}", size_label(zone), 256 * MIB / zone, opts.seed),
        format!("workload: Table 3's four streams with every size x zone/256 MiB (table below), stream chosen per append by its share of Table 3's numjobs x rate (4.04 GB/s in all), chunk slot uniformly among its concurrent chunks; fill to {:.0}% of datazone capacity (device bytes of the live chunks' data records), then keep it there by deleting uniformly random sealed chunks while writing {turnover}x the capacity more", util * 100.0),
        "store: pools 3 (GC) / 2 (data) / 1 (metadata) open zones, one per concurrent big chunk as in the paper (pools of 40/10/5 for its 25/25/300 files spread over 8/3 jobs), 4 metazones, EveryAppend durability; metadata chunk limit 64 MiB scaled; the bench runs Store::gc whenever fewer than 2 zones are free (the automatic watermark) so GC's device bytes and time are counted apart".into(),
        "rule 2 (chunk_limit) on, and one-zone: big chunks sealed at what fits in one zone (Table 3's 256 MB chunk in a 256 MB zone); off: the paper's no-optimisation 64 MB (scaled); rule 3 off: a pool's chunks share its first zone (the paper's no-optimisation spreads them randomly over 55 open zones)".into(),
        "WA = device bytes / user bytes (record headers, footers, padding, journal, checkpoints, GC); GC WA = device bytes / device bytes outside GC; zone utilisation = user bytes of live chunks' records / zone capacity, over full zones at the end".into(),
    ];
    Ok(StoreBenchReport {
        bench: "macro".into(),
        title: "store bench macro (SMRSTORE Table 3, Figs. 17/19/20: mixed streams at 80% with deletions)"
            .into(),
        notes,
        table: t,
        extra: vec![("streams".into(), st), ("gc victims".into(), vt)],
        plots,
        result: BenchResult::Macro(runs),
    })
}

/// `(x = utilisation %, y = fraction of zones at or below)` for sorted `u`.
pub fn cdf_points(u: &[f64]) -> Vec<(f64, f64)> {
    let n = u.len() as f64;
    u.iter().enumerate().map(|(i, &v)| (v * 100.0, (i + 1) as f64 / n)).collect()
}

// ----- recovery (Fig. 21) ---------------------------------------------------------------
