//! `store info`.

use super::{open_front, placement_name, InfoArgs};
use crate::json::sorted;
use anyhow::{Context, Result};
use serde::Serialize;
use shingled_core::ByteSize;
use shingled_store::{MemoryUse, RecoveryReport};
use shingled_zoned::{ZonedDevice, SECTOR_SIZE};
use std::path::PathBuf;

// The report's JSON keys come out in alphabetical order (as they did when it was built with
// `serde_json::json!`), so every struct below declares its fields alphabetically by JSON name
// and the library types nested in it go through `sorted`.

/// `store info -O json`.
#[derive(Serialize)]
struct StoreInfo {
    drives: Vec<DriveInfo>,
    total: TotalInfo,
}

/// One drive.
#[derive(Serialize)]
struct DriveInfo {
    chunk_limit: u64,
    chunks: u64,
    datazones: u64,
    device: PathBuf,
    gc_reserve_zones: u64,
    geometry: Geometry,
    live_bytes: u64,
    #[serde(serialize_with = "sorted")]
    memory: MemoryUse,
    not_live_bytes: u64,
    records: u64,
    #[serde(serialize_with = "sorted")]
    recovery: Option<RecoveryReport>,
    sealed_chunks: u64,
    superzone: SuperzoneInfo,
    usable_bytes: u64,
    written_datazone_bytes: u64,
    zones_by_state: ZonesByState,
}

/// The device's geometry and limits, in bytes.
#[derive(Serialize)]
struct Geometry {
    conventional: u64,
    max_active: u32,
    max_open: u32,
    zone_bytes: u64,
    zone_capacity_bytes: u64,
    zones: u64,
}

/// What the superzone records.
#[derive(Serialize)]
struct SuperzoneInfo {
    format_time: u64,
    format_version: u32,
    max_record: usize,
    metadata_chunk_limit: u64,
    metazones: u32,
    placement: String,
    pools: Pools,
}

/// Open zones per pool.
#[derive(Serialize)]
struct Pools {
    data: u32,
    gc: u32,
    metadata: u32,
}

/// The datazone census.
#[derive(Serialize)]
struct ZonesByState {
    activated: u64,
    free: u64,
    full: u64,
    garbage: u64,
    opened: u64,
}

/// Sums over the drives.
#[derive(Serialize)]
struct TotalInfo {
    chunks: u64,
    datazones: u64,
    drives: usize,
    free_zones: u64,
    live_bytes: u64,
    records: u64,
    sealed_chunks: u64,
}

pub(super) fn info(a: InfoArgs) -> Result<()> {
    a.output.start()?;
    let paths = a.devices.all()?;
    let (front, supers) = open_front(&a.devices, true)?;
    let stats = front.stats();
    let mut drives = Vec::new();
    for (d, (p, s)) in paths.iter().zip(&supers).enumerate() {
        let st = front.drive(d).expect("in range");
        let i = st.device().info();
        let ds = &stats.drives[d].store;
        let written: u64 = st
            .zone_states()
            .iter()
            .map(|&(z, _)| {
                st.device().report_zone(z).map(|zz| zz.wp.saturating_sub(zz.start).min(zz.capacity))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .with_context(|| format!("reporting zones of {}", p.display()))?
            .iter()
            .sum::<u64>()
            * SECTOR_SIZE;
        // The census order is ZoneState's.
        let [free, opened, activated, full, garbage] = ds.zones_by_state;
        drives.push(DriveInfo {
            chunk_limit: st.chunk_limit(shingled_store::StreamType::DATA),
            chunks: ds.chunks,
            datazones: ds.datazones,
            device: p.clone(),
            gc_reserve_zones: ds.gc_reserve_zones,
            geometry: Geometry {
                conventional: i.nr_conv,
                max_active: i.max_active,
                max_open: i.max_open,
                zone_bytes: i.zone_bytes(),
                zone_capacity_bytes: i.zone_capacity_sectors * SECTOR_SIZE,
                zones: i.nr_zones,
            },
            live_bytes: ds.live_bytes,
            memory: st.memory(),
            not_live_bytes: written.saturating_sub(ds.live_bytes),
            records: ds.records,
            recovery: st.recovery_report(),
            sealed_chunks: ds.sealed_chunks,
            superzone: SuperzoneInfo {
                format_time: s.time,
                format_version: s.version,
                max_record: s.config.max_record,
                metadata_chunk_limit: s.config.metadata_chunk_limit,
                metazones: s.config.nr_metazones,
                placement: placement_name(s.config.placement),
                pools: Pools {
                    data: s.config.pool_data,
                    gc: s.config.pool_gc,
                    metadata: s.config.pool_metadata,
                },
            },
            usable_bytes: ds.usable_bytes,
            written_datazone_bytes: written,
            zones_by_state: ZonesByState { activated, free, full, garbage, opened },
        });
    }
    let t = &stats.total;
    let total = TotalInfo {
        chunks: t.store.chunks,
        datazones: t.store.datazones,
        drives: paths.len(),
        free_zones: t.free_zones,
        live_bytes: t.store.live_bytes,
        records: t.store.records,
        sealed_chunks: t.store.sealed_chunks,
    };
    let report = StoreInfo { drives, total };
    if !a.output.is_table() {
        a.output.print_value(&report)?;
        return Ok(());
    }
    for v in &report.drives {
        let (g, s, z) = (&v.geometry, &v.superzone, &v.zones_by_state);
        println!("{}", v.device.display());
        println!(
            "  device      {} zones of {} ({} conventional), zone capacity {}",
            g.zones,
            ByteSize(g.zone_bytes),
            g.conventional,
            ByteSize(g.zone_capacity_bytes)
        );
        println!(
            "  superzone   format v{}, {} metazones, pools gc/data/metadata {}/{}/{}, placement {}, \
             metadata chunk limit {}, max record {}",
            s.format_version,
            s.metazones,
            s.pools.gc,
            s.pools.data,
            s.pools.metadata,
            s.placement,
            ByteSize(s.metadata_chunk_limit),
            ByteSize(s.max_record as u64)
        );
        println!(
            "  datazones   {} (free {}, opened {}, activated {}, full {}, garbage {})",
            v.datazones, z.free, z.opened, z.activated, z.full, z.garbage
        );
        println!(
            "  capacity    usable {} user bytes ({} datazone(s) kept for GC), chunk limit {} bytes",
            v.usable_bytes, v.gc_reserve_zones, v.chunk_limit
        );
        println!("  chunks      {} ({} sealed), {} records", v.chunks, v.sealed_chunks, v.records);
        println!(
            "  bytes       live {}, written in datazones {}, not live (garbage, headers, padding) {}",
            v.live_bytes, v.written_datazone_bytes, v.not_live_bytes
        );
        println!(
            "  memory      {} B per chunk, {} B per record index, {} B in total",
            v.memory.per_chunk, v.memory.per_record, v.memory.total
        );
        if let Some(r) = &v.recovery {
            println!(
                "  recovery    {:.1} ms: checkpoint {} ({} B), {} journal records, {} zones scanned, \
                 {} records found, {} damaged",
                r.total.as_secs_f64() * 1e3,
                r.checkpoint_generation,
                r.checkpoint_bytes,
                r.journal_records,
                r.zones_scanned,
                r.records_scanned,
                r.damaged_records
            );
            for note in &r.checkpoint_fallback {
                println!("  recovery    {note}");
            }
        }
    }
    let t = &report.total;
    if paths.len() > 1 {
        println!(
            "total: {} drives, {} datazones ({} free), {} chunks ({} sealed), {} records, {} live bytes",
            t.drives, t.datazones, t.free_zones, t.chunks, t.sealed_chunks, t.records, t.live_bytes
        );
    }
    Ok(())
}
