//! `store info`.

use super::{open_front, placement_name, InfoArgs, OutputArg};
use anyhow::{Context, Result};
use shingled_core::ByteSize;
use shingled_zoned::{ZonedDevice, SECTOR_SIZE};

pub(super) fn info(a: InfoArgs) -> Result<()> {
    let paths = a.devices.all()?;
    let (front, supers) = open_front(&a.devices, true)?;
    let stats = front.stats();
    let mut drives = Vec::new();
    for (d, (p, s)) in paths.iter().zip(&supers).enumerate() {
        let st = front.drive(d).expect("in range");
        let i = st.device().info();
        let ds = &stats.drives[d].store;
        let mem = st.memory();
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
        let states = ["free", "opened", "activated", "full", "garbage"];
        let by_state: serde_json::Map<String, serde_json::Value> =
            states.iter().zip(ds.zones_by_state).map(|(k, v)| (k.to_string(), v.into())).collect();
        drives.push(serde_json::json!({
            "device": p,
            "geometry": {
                "zones": i.nr_zones, "conventional": i.nr_conv, "zone_bytes": i.zone_bytes(),
                "zone_capacity_bytes": i.zone_capacity_sectors * SECTOR_SIZE,
                "max_open": i.max_open, "max_active": i.max_active,
            },
            "superzone": {
                "format_version": s.version, "format_time": s.time,
                "metazones": s.config.nr_metazones,
                "pools": { "gc": s.config.pool_gc, "data": s.config.pool_data, "metadata": s.config.pool_metadata },
                "placement": placement_name(s.config.placement),
                "metadata_chunk_limit": s.config.metadata_chunk_limit,
                "max_record": s.config.max_record,
            },
            "datazones": ds.datazones,
            "gc_reserve_zones": ds.gc_reserve_zones,
            "usable_bytes": ds.usable_bytes,
            "chunk_limit": st.chunk_limit(shingled_store::StreamType::DATA),
            "zones_by_state": by_state,
            "chunks": ds.chunks, "sealed_chunks": ds.sealed_chunks, "records": ds.records,
            "live_bytes": ds.live_bytes,
            "written_datazone_bytes": written,
            "not_live_bytes": written.saturating_sub(ds.live_bytes),
            "memory": mem,
            "recovery": st.recovery_report(),
        }));
    }
    let t = &stats.total;
    let total = serde_json::json!({
        "drives": paths.len(), "datazones": t.store.datazones, "free_zones": t.free_zones,
        "chunks": t.store.chunks, "sealed_chunks": t.store.sealed_chunks, "records": t.store.records,
        "live_bytes": t.store.live_bytes,
    });
    if a.output == OutputArg::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "drives": drives, "total": total }))?
        );
        return Ok(());
    }
    for v in &drives {
        let g = &v["geometry"];
        let s = &v["superzone"];
        let z = &v["zones_by_state"];
        println!("{}", v["device"].as_str().unwrap_or_default());
        println!(
            "  device      {} zones of {} ({} conventional), zone capacity {}",
            g["zones"],
            ByteSize(g["zone_bytes"].as_u64().unwrap_or(0)),
            g["conventional"],
            ByteSize(g["zone_capacity_bytes"].as_u64().unwrap_or(0))
        );
        println!(
            "  superzone   format v{}, {} metazones, pools gc/data/metadata {}/{}/{}, placement {}, \
             metadata chunk limit {}, max record {}",
            s["format_version"],
            s["metazones"],
            s["pools"]["gc"],
            s["pools"]["data"],
            s["pools"]["metadata"],
            s["placement"].as_str().unwrap_or_default(),
            ByteSize(s["metadata_chunk_limit"].as_u64().unwrap_or(0)),
            ByteSize(s["max_record"].as_u64().unwrap_or(0))
        );
        println!(
            "  datazones   {} (free {}, opened {}, activated {}, full {}, garbage {})",
            v["datazones"], z["free"], z["opened"], z["activated"], z["full"], z["garbage"]
        );
        println!(
            "  capacity    usable {} user bytes ({} datazone(s) kept for GC), chunk limit {} bytes",
            v["usable_bytes"], v["gc_reserve_zones"], v["chunk_limit"]
        );
        println!("  chunks      {} ({} sealed), {} records", v["chunks"], v["sealed_chunks"], v["records"]);
        println!(
            "  bytes       live {}, written in datazones {}, not live (garbage, headers, padding) {}",
            v["live_bytes"], v["written_datazone_bytes"], v["not_live_bytes"]
        );
        println!(
            "  memory      {} B per chunk, {} B per record index, {} B in total",
            v["memory"]["per_chunk"], v["memory"]["per_record"], v["memory"]["total"]
        );
        let r = &v["recovery"];
        if !r.is_null() {
            println!(
                "  recovery    {:.1} ms: checkpoint {} ({} B), {} journal records, {} zones scanned, \
                 {} records found, {} damaged",
                r["total_s"].as_f64().unwrap_or(0.0) * 1e3,
                r["checkpoint_generation"],
                r["checkpoint_bytes"],
                r["journal_records"],
                r["zones_scanned"],
                r["records_scanned"],
                r["damaged_records"]
            );
        }
    }
    if paths.len() > 1 {
        println!(
            "total: {} drives, {} datazones ({} free), {} chunks ({} sealed), {} records, {} live bytes",
            total["drives"],
            total["datazones"],
            total["free_zones"],
            total["chunks"],
            total["sealed_chunks"],
            total["records"],
            total["live_bytes"]
        );
    }
    Ok(())
}
