//! The superzone record: layout of the device and the stored configuration.

use super::FORMAT_VERSION;
use crate::format::{self, check_payload, decode_header, Reader, RecordType, BLOCK, HEADER_LEN};
use crate::{Placement, Result, StoreConfig, StoreError};
use shingled_zoned::{DeviceInfo, ZonedDevice, SECTOR_SIZE};

/// Configuration stored in the superzone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The superzone record's payload (docs/store-format.md), field by field.
pub(crate) struct SuperInfo {
    pub(crate) version: u32,
    pub(crate) time: u64,
    pub(crate) nr_metazones: u32,
    pub(crate) zone_sectors: u64,
    pub(crate) nr_zones: u64,
    /// GC, data, metadata.
    pub(crate) pools: [u32; 3],
    pub(crate) placement: Placement,
    pub(crate) metadata_chunk_limit: u64,
    pub(crate) max_record: u32,
}

pub(super) fn placement_code(p: Placement) -> u8 {
    match p {
        Placement::OneZone => 0x80,
        Placement::Guided { separate_streams, chunk_limit, round_robin } => {
            separate_streams as u8 | (chunk_limit as u8) << 1 | (round_robin as u8) << 2
        }
    }
}

/// (superzone, first datazone) for a device, checking it can host a store.
pub(super) fn layout(info: &DeviceInfo, nr_meta: u32) -> Result<(u64, u64)> {
    if !BLOCK.is_multiple_of(info.lba_size as u64) {
        return Err(StoreError::Config(format!("logical block size {} does not divide 4096", info.lba_size)));
    }
    if info.zone_capacity_sectors * SECTOR_SIZE < 8 * BLOCK {
        return Err(StoreError::Config("zones must hold at least 32 KiB".into()));
    }
    let super_zone = info.nr_conv;
    let data_first = super_zone + 1 + nr_meta as u64;
    if data_first + 2 > info.nr_zones {
        return Err(StoreError::Config(format!(
            "{} sequential zones cannot hold a superzone, {nr_meta} metazones and two datazones",
            info.nr_seq()
        )));
    }
    Ok((super_zone, data_first))
}

pub(super) fn placement_from_code(c: u8) -> Placement {
    match c {
        0x80 => Placement::OneZone,
        c => Placement::Guided {
            separate_streams: c & 1 != 0,
            chunk_limit: c & 2 != 0,
            round_robin: c & 4 != 0,
        },
    }
}

/// Reads, CRC-checks and decodes the superzone record of zone `z`, whatever its format version
/// (`read_format` reports the version; [`read_super`] refuses others). The superzone holds two
/// copies of the record (stores formatted before the second copy have one); the first valid
/// copy is used. When none is: "not formatted" if neither copy even has the record magic,
/// else a damaged superzone ([`StoreError::CorruptMeta`]) naming both copies' faults.
pub(crate) fn read_super_record<D: ZonedDevice>(dev: &mut D, info: &DeviceInfo, z: u64) -> Result<SuperInfo> {
    let mut b = vec![0u8; 2 * BLOCK as usize];
    dev.read(info.zone_start(z), &mut b).map_err(StoreError::dev("reading the superzone"))?;
    let mut faults = Vec::new();
    for (k, copy) in b.chunks(BLOCK as usize).enumerate() {
        match super_copy(copy, z) {
            Ok(s) => return Ok(s),
            Err(e) => faults.push((k, e)),
        }
    }
    let magic = b.chunks(BLOCK as usize).any(|c| c[..4] == format::MAGIC.to_le_bytes());
    let why = faults.iter().map(|(k, e)| format!("copy {k}: {e}")).collect::<Vec<_>>().join("; ");
    if !magic {
        return Err(StoreError::NotFormatted(format!("superzone (zone {z}): no superzone record ({why})")));
    }
    Err(StoreError::CorruptMeta {
        structure: "superzone",
        zone: z,
        offset: 0,
        what: format!("both copies of the superzone record are damaged ({why}); the store's data may be intact: do not format it again"),
    })
}

/// One copy of the superzone record.
pub(super) fn super_copy(b: &[u8], z: u64) -> Result<SuperInfo> {
    let h = decode_header(b).map_err(|e| StoreError::NotFormatted(format!("superzone (zone {z}): {e}")))?;
    if h.rtype != RecordType::Super || h.payload_len as usize > b.len() - HEADER_LEN {
        return Err(StoreError::NotFormatted(format!("zone {z} does not start with a superzone record")));
    }
    let p = &b[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
    check_payload(&h, p).map_err(|what| StoreError::CorruptMeta {
        structure: "superzone",
        zone: z,
        offset: 0,
        what,
    })?;
    let bad = |what: String| StoreError::CorruptMeta { structure: "superzone", zone: z, offset: 0, what };
    let mut r = Reader::new(p);
    Ok(SuperInfo {
        version: r.u32().map_err(bad)?,
        time: r.u64().map_err(bad)?,
        nr_metazones: r.u32().map_err(bad)?,
        zone_sectors: r.u64().map_err(bad)?,
        nr_zones: r.u64().map_err(bad)?,
        pools: [r.u32().map_err(bad)?, r.u32().map_err(bad)?, r.u32().map_err(bad)?],
        placement: placement_from_code(r.u8().map_err(bad)?),
        metadata_chunk_limit: r.u64().map_err(bad)?,
        max_record: r.u32().map_err(bad)?,
    })
}

/// [`read_super_record`] for `open`: this build's format version, a sane metazone count.
pub(super) fn read_super<D: ZonedDevice>(dev: &mut D, info: &DeviceInfo, z: u64) -> Result<SuperInfo> {
    let sup = read_super_record(dev, info, z)?;
    let version = sup.version;
    if version != FORMAT_VERSION {
        return Err(StoreError::NotFormatted(format!(
            "zone {z} holds a store of format version {version}; this build reads only version \
             {FORMAT_VERSION} (version 1 data records carry no zone chain: copy the chunks out with \
             the build that wrote them, or format again)"
        )));
    }
    if !(2..=1024).contains(&sup.nr_metazones) {
        return Err(StoreError::CorruptMeta {
            structure: "superzone",
            zone: z,
            offset: 0,
            what: format!("{} metazones", sup.nr_metazones),
        });
    }
    Ok(sup)
}

/// What [`Store::format`](crate::Store::format) wrote into a device's superzone record (docs/store-format.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredFormat {
    /// Format version.
    pub version: u32,
    /// Format time, seconds since the Unix epoch.
    pub time: u64,
    /// The configuration given to `format`: metazones, pools, placement, metadata chunk limit
    /// and record size as stored; the run-time-only fields (durability, GC settings) at their
    /// defaults.
    pub config: StoreConfig,
}

/// Reads the superzone record of a formatted device without opening the store, so a tool
/// can reopen a store with the pools and placement it was formatted with ([`Store::open`](crate::Store::open)
/// takes them from the caller). A device without a valid superzone header is
/// [`StoreError::NotFormatted`]; a payload failing its CRC is [`StoreError::CorruptMeta`].
pub fn read_format<D: ZonedDevice>(dev: &mut D) -> Result<StoredFormat> {
    let info = dev.info();
    if info.nr_zones <= info.nr_conv {
        return Err(StoreError::NotFormatted("the device has no sequential zones".into()));
    }
    let sup = read_super_record(dev, &info, info.nr_conv)?;
    let config = StoreConfig {
        nr_metazones: sup.nr_metazones,
        pool_gc: sup.pools[0],
        pool_data: sup.pools[1],
        pool_metadata: sup.pools[2],
        placement: sup.placement,
        metadata_chunk_limit: sup.metadata_chunk_limit,
        max_record: sup.max_record as usize,
        ..StoreConfig::default()
    };
    Ok(StoredFormat { version: sup.version, time: sup.time, config })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use shingled_zoned::{Dialect, MemZoned, ZonedConfig};

    fn mem() -> MemZoned {
        MemZoned::new(&ZonedConfig::small(16, 256, Dialect::Zbc)).unwrap()
    }

    #[test]
    fn read_format_returns_what_format_stored() {
        let cfg = StoreConfig {
            nr_metazones: 3,
            pool_gc: 1,
            pool_data: 3,
            pool_metadata: 2,
            placement: crate::Placement::Guided {
                separate_streams: false,
                chunk_limit: true,
                round_robin: false,
            },
            metadata_chunk_limit: 1 << 20,
            max_record: 8192,
            durability: crate::Durability::Batched,
            ..StoreConfig::default()
        };
        let st = Store::format(mem(), cfg.clone()).unwrap();
        let mut dev = st.into_device();
        let f = read_format(&mut dev).unwrap();
        assert_eq!(f.version, crate::store::FORMAT_VERSION);
        assert!(f.time > 1_600_000_000);
        assert_eq!(f.config, StoreConfig { durability: crate::Durability::EveryAppend, ..cfg });
        assert!(matches!(read_format(&mut mem()), Err(StoreError::NotFormatted(_))));
    }
}
