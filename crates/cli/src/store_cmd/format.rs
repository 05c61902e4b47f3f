//! `store format`.

use super::{close, io_mode, open_dev, placement_name, read_super, with_paths, FormatArgs};
use anyhow::{anyhow, bail, Context, Result};
use shingled_core::ByteSize;
use shingled_store::{StoreConfig, StoreFront};
use shingled_zoned::{
    Dialect, FileOptions, FileZoned, ReadAboveWp, ZonedConfig, ZonedDevice, ZonedModel, SECTOR_SIZE,
};
use std::path::PathBuf;

fn parse_pools(s: &str) -> Result<(u32, u32, u32)> {
    let v: Vec<&str> = s.split(',').map(str::trim).collect();
    let bad = || anyhow!("--pools {s:?}: expected three zone counts GC,DATA,METADATA such as 40,10,5");
    if v.len() != 3 {
        return Err(bad());
    }
    let n = |x: &str| x.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(bad);
    Ok((n(v[0])?, n(v[1])?, n(v[2])?))
}

/// Where a zoned device that holds no store holds data: a sequential zone with a write pointer
/// past its start, or a non-zero byte in the first MiB of a conventional zone (where a
/// dm-zoned layer keeps its metadata). `None` for a device of empty zones and zeros.
fn holds_data(d: &mut FileZoned) -> Result<Option<String>> {
    let zones = d.report_zones(0, 0, shingled_zoned::ReportOption::All)?;
    if let Some(z) = zones.iter().find(|z| z.written() > 0) {
        return Ok(Some(format!("zone {} is written to sector {}", z.start / z.len.max(1), z.wp - z.start)));
    }
    let mut buf = vec![0u8; 1 << 20];
    for (i, z) in
        zones.iter().enumerate().filter(|(_, z)| z.zone_type == shingled_zoned::ZoneType::Conventional)
    {
        let n = ((z.len * SECTOR_SIZE) as usize).min(buf.len());
        d.read(z.start, &mut buf[..n])?;
        if let Some(at) = buf[..n].iter().position(|&b| b != 0) {
            return Ok(Some(format!("conventional zone {i} holds a non-zero byte at offset {at}")));
        }
    }
    Ok(None)
}

pub(super) fn format(a: FormatArgs) -> Result<()> {
    // With --create, a format that fails leaves no device file behind (a retry would otherwise
    // meet "File exists").
    let created: Vec<PathBuf> =
        if a.create { a.devices.all()?.into_iter().filter(|p| !p.exists()).collect() } else { Vec::new() };
    let r = format_inner(a);
    if r.is_err() {
        for p in &created {
            let _ = std::fs::remove_file(p);
        }
    }
    r
}

fn format_inner(a: FormatArgs) -> Result<()> {
    let (pool_gc, pool_data, pool_metadata) = parse_pools(&a.pools)?;
    let cfg = StoreConfig {
        nr_metazones: a.metazones,
        pool_gc,
        pool_data,
        pool_metadata,
        placement: a.placement.placement(),
        metadata_chunk_limit: a.metadata_chunk_limit.0,
        ..StoreConfig::default()
    };
    cfg.sanitize().context("store configuration")?;
    if a.metadata_chunk_limit.0 < 4096 {
        bail!(
            "--metadata-chunk-limit {}: a metadata chunk must hold at least 4 KiB (every metadata put would fail)",
            a.metadata_chunk_limit
        );
    }
    let paths = a.devices.all()?;
    let mut devs = Vec::new();
    for p in &paths {
        if a.create {
            let n = a.zones.ok_or_else(|| anyhow!("--create needs --zones N"))?;
            let zs = a.zone_size.0;
            let zcfg = ZonedConfig {
                capacity: ByteSize(n.checked_mul(zs).context("--zones × --zone-size overflows")?),
                zone_size: a.zone_size,
                zone_capacity: ByteSize(0),
                nr_conv: a.conventional,
                max_open: a.max_open,
                max_active: 0,
                dialect: Dialect::Zbc,
                model: ZonedModel::HostManaged,
                lba_size: 4096,
                read_above_wp: ReadAboveWp::Zeros,
            };
            zcfg.sanitize().with_context(|| format!("device geometry for {}", p.display()))?;
            let d = FileZoned::create(p, &zcfg, FileOptions { io_mode: io_mode(true) })
                .with_context(|| format!("creating device file {}", p.display()))?;
            devs.push(d);
        } else {
            let mut d = open_dev(p, true)?;
            if !a.force {
                if read_super(p, &mut d).is_ok() {
                    bail!(
                        "{} already holds a store; --force formats it anyway (its chunks are lost)",
                        p.display()
                    );
                }
                if let Some(what) = holds_data(&mut d)? {
                    bail!(
                        "{} holds data ({what}: a dm-zoned layer or another program's zones?); --force formats \
                         it anyway (that data is lost)",
                        p.display()
                    );
                }
            }
            devs.push(d);
        }
    }
    let mut stores = Vec::new();
    for (p, d) in paths.iter().zip(devs) {
        let st = shingled_store::Store::format(d, cfg.clone())
            .with_context(|| format!("formatting {}", p.display()))?;
        let i = st.device().info();
        println!(
            "{}: store formatted: {} datazones of {} ({} metazones), placement {}",
            p.display(),
            st.stats().datazones,
            ByteSize(i.zone_capacity_sectors * SECTOR_SIZE),
            cfg.nr_metazones,
            placement_name(cfg.placement)
        );
        stores.push(st);
    }
    let mut front = StoreFront::from_stores(stores).map_err(|e| with_paths(e, &paths))?;
    close(&mut front, &paths)
}
