//! Per-drive statistics of a [`super::StoreFront`] and their sums, in Python's
//! `StoreFront.stats()` shape.

use crate::StoreStats;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// One drive's counters: the store's own statistics plus what the front counted since open.
/// Serialized as Python's `StoreFront.stats()` entries: the front's counters and a subset of
/// the store's, in one object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrontDriveStats {
    /// User bytes appended through the front since open (what the drive accepted).
    pub bytes_appended: u64,
    /// User bytes read through the front since open.
    pub bytes_read: u64,
    /// Free datazones now.
    pub free_zones: u64,
    /// The drive's [`Store::stats`](crate::Store::stats) (chunks, live bytes, device bytes
    /// written, zone census, GC bytes migrated and zones reclaimed, …).
    #[serde(flatten, serialize_with = "front_store_fields")]
    pub store: StoreStats,
}

/// The store counters a [`FrontDriveStats`] shows.
fn front_store_fields<S: Serializer>(s: &StoreStats, ser: S) -> std::result::Result<S::Ok, S::Error> {
    let mut m = ser.serialize_map(None)?;
    m.serialize_entry("chunks", &s.chunks)?;
    m.serialize_entry("sealed_chunks", &s.sealed_chunks)?;
    m.serialize_entry("live_bytes", &s.live_bytes)?;
    m.serialize_entry("records", &s.records)?;
    m.serialize_entry("datazones", &s.datazones)?;
    m.serialize_entry("device_bytes_written", &s.device_bytes_written)?;
    m.serialize_entry("flushes", &s.flushes)?;
    m.serialize_entry("gc_bytes_migrated", &s.gc_bytes_migrated)?;
    m.serialize_entry("gc_zones_reclaimed", &s.gc_zones_reclaimed)?;
    m.end()
}

impl FrontDriveStats {
    pub(super) fn add(&mut self, o: &FrontDriveStats) {
        self.bytes_appended += o.bytes_appended;
        self.bytes_read += o.bytes_read;
        self.free_zones += o.free_zones;
        let (s, t) = (&mut self.store, &o.store);
        s.chunks += t.chunks;
        s.sealed_chunks += t.sealed_chunks;
        s.live_bytes += t.live_bytes;
        s.records += t.records;
        s.datazones += t.datazones;
        for (a, b) in s.zones_by_state.iter_mut().zip(t.zones_by_state) {
            *a += b;
        }
        s.appends += t.appends;
        s.device_bytes_written += t.device_bytes_written;
        s.flushes += t.flushes;
        s.checkpoints += t.checkpoints;
        s.journal_records += t.journal_records;
        s.zone_resets += t.zone_resets;
        s.recovered_records += t.recovered_records;
        s.ignored_records += t.ignored_records;
        s.gc_migrations += t.gc_migrations;
        s.gc_bytes_migrated += t.gc_bytes_migrated;
        s.gc_zones_reclaimed += t.gc_zones_reclaimed;
        s.gc_steps += t.gc_steps;
        s.gc_throttled_steps += t.gc_throttled_steps;
        s.gc_emergency_rounds += t.gc_emergency_rounds;
    }
}

/// Per-drive statistics and their sums.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrontStats {
    /// One entry per drive, in drive order.
    pub drives: Vec<FrontDriveStats>,
    /// Field-wise sums over the drives.
    pub total: FrontDriveStats,
}
