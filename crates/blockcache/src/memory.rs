//! What serving a cache costs in memory, and the bound checked before a cache is formatted or
//! opened.
//!
//! An open [`CachedDevice`](crate::CachedDevice) holds, per physical slot: the data path's slot
//! word (8 bytes: the block and the flags of the slot's in-memory and durable records) and a
//! policy-slot → physical-slot entry (4 bytes per policy slot); the policy's block table (24
//! bytes of block meta, a free-list entry and a hash index of 8 bytes per bucket, 3 buckets per
//! slot up to 2^24 slots and 8/5 above: 24 or 12.8 bytes per slot); and
//! the policy's own structures (LRU: 8 bytes per slot for its list). The recycled free slots
//! take 4 bytes each (about the reserve, 1/64 of the slots, once the cache is full).
//! Formatting holds none of this per slot: the record area is written in chunks.

use crate::layout::Superblock;
use crate::CacheSetup;
use shingled_cache::{BlockTable, PolicyContext};
use shingled_core::{BandMap, ByteSize};
use shingled_stl::{invalid, Result, BLOCK};
use std::sync::Arc;

/// Slot word bytes per physical slot (see [`crate::device`]).
const WORD_BYTES: u64 = 8;
/// Policy slot → physical slot bytes per policy slot.
const MAP_BYTES: u64 = 4;
/// Free-slot stack bytes per reserve slot.
const READY_BYTES: u64 = 4;

/// The heap bytes the serving index of a cache takes, estimated without allocating it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServingCost {
    /// Physical slots.
    pub slots: u32,
    /// Bytes in all.
    pub bytes: u64,
    /// Of them, the policy's own structures (beyond its block table).
    pub policy_bytes: u64,
}

impl ServingCost {
    /// Bytes per physical slot.
    pub fn per_slot(&self) -> f64 {
        self.bytes as f64 / self.slots.max(1) as f64
    }
}

/// The serving cost of a cache of `slots` physical slots, `capacity` of them the policy's,
/// with `setup`'s policy over a backing device of `backing_blocks`. The policy is built at two
/// small capacities (with the real band layout) and its growth per slot extrapolated.
pub fn serving_cost(
    setup: &CacheSetup,
    backing_blocks: u64,
    slots: u32,
    capacity: u32,
) -> Result<ServingCost> {
    if setup.policy.needs_future() {
        return Err(invalid(
            "policy",
            setup.policy.name(),
            "an offline policy needs the trace's future, which a cache serving live requests does not \
             have; run it in `shingled sim` or `shingled compare`",
        ));
    }
    let bands = match &setup.bands {
        Some(cfg) => Some(Arc::new(
            BandMap::build(cfg, ByteSize(backing_blocks.saturating_mul(BLOCK as u64)))
                .map_err(|e| invalid("bands", format!("{cfg:?}"), e.to_string()))?,
        )),
        None => None,
    };
    let policy_at = |c: u32| -> Result<u64> {
        let ctx = PolicyContext {
            block_span: None,
            capacity_blocks: c,
            bands: bands.clone(),
            pb_blocks: setup.pb_blocks,
            seed: setup.seed,
            costs: setup.costs,
        };
        let p =
            setup.policy.build(&ctx).map_err(|e| invalid("policy", setup.policy.name(), e.to_string()))?;
        Ok(p.heap_bytes() as u64)
    };
    let (c1, c2) = (capacity.min(1 << 12), capacity.min(1 << 13));
    let (h1, h2) = (policy_at(c1)?, policy_at(c2)?);
    let policy_bytes = if c2 > c1 {
        let slope = h2.saturating_sub(h1) as f64 / (c2 - c1) as f64;
        h1 + (slope * (capacity - c1) as f64).ceil() as u64
    } else {
        h1
    };
    let bytes = WORD_BYTES * slots as u64
        + MAP_BYTES * capacity as u64
        + READY_BYTES * (slots - capacity.min(slots)) as u64
        + BlockTable::heap_bytes_for(capacity) as u64
        + policy_bytes;
    Ok(ServingCost { slots, bytes, policy_bytes })
}

/// This machine's physical memory in bytes (`MemTotal` of /proc/meminfo), if known.
pub fn physical_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses `cost` when it exceeds `memory` (bytes), saying what it would cost.
pub fn check_cost(cost: &ServingCost, policy: &str, memory: Option<u64>) -> Result<()> {
    let Some(mem) = memory else { return Ok(()) };
    if cost.bytes <= mem {
        return Ok(());
    }
    let size = cost.slots as u64 * BLOCK as u64;
    Err(invalid(
        "cache size",
        format!("{} ({} slots of 4 KiB)", human(size), cost.slots),
        format!(
            "a {} cache needs {} of memory to serve ({:.1} B per 4 KiB slot with policy {policy}); this \
             machine has {}: make the cache smaller",
            human(size),
            human(cost.bytes),
            cost.per_slot(),
            human(mem)
        ),
    ))
}

/// Refuses a cache the superblock `sb` describes when serving it would not fit this machine's
/// physical memory.
pub(crate) fn check_serving(sb: &Superblock) -> Result<()> {
    let cost = serving_cost(&sb.setup, sb.backing_blocks, sb.layout.slots, sb.capacity)?;
    check_cost(&cost, sb.setup.policy.name(), physical_memory())
}

/// Bytes with one decimal in binary units.
fn human(b: u64) -> String {
    let mut v = b as f64;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] {
        if v < 1024.0 || unit == "PiB" {
            return if unit == "B" { format!("{b} B") } else { format!("{v:.1} {unit}") };
        }
        v /= 1024.0;
    }
    unreachable!()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_costs_what_the_parts_add_up_to() {
        // 1 TiB of 4 KiB slots, the default reserve.
        let slots = (1u64 << 28) as u32;
        let capacity = slots - slots / 64;
        let c = serving_cost(&CacheSetup::default(), 1 << 32, slots, capacity).unwrap();
        let table = BlockTable::heap_bytes_for(capacity) as u64;
        assert_eq!(c.policy_bytes, 8 * capacity as u64, "LRU: two u32 links per slot");
        assert_eq!(
            c.bytes,
            8 * slots as u64 + 4 * capacity as u64 + 4 * (slots / 64) as u64 + table + c.policy_bytes
        );
        assert!(c.per_slot() < 64.0, "{} B per slot: a 1 TiB cache must fit 16 GiB", c.per_slot());
    }

    #[test]
    fn smr_aware_policies_cost_at_least_lru() {
        // 1 TiB of slots over a 4 TiB drive of 32 MiB bands, PB 1 GiB.
        let slots = (1u64 << 28) as u32;
        let capacity = slots - slots / 64;
        let lru = serving_cost(&CacheSetup::default(), 1 << 30, slots, capacity).unwrap();
        for name in ["sac", "pore", "most", "lru"] {
            let mut setup = CacheSetup::new(crate::Mode::ReadWrite, name).unwrap();
            setup.bands = Some(shingled_core::BandConfig::Fixed { size: ByteSize(32 << 20) });
            setup.pb_blocks = Some(1 << 18);
            let c = serving_cost(&setup, 1 << 30, slots, capacity).unwrap();
            println!("{name}: {:.1} B per slot, {} bytes", c.per_slot(), c.bytes);
            assert!(c.bytes >= lru.bytes, "{name}");
        }
    }

    #[test]
    fn the_bound_names_the_cost() {
        let c = ServingCost { slots: 1 << 30, bytes: 60 << 30, policy_bytes: 0 };
        let e = check_cost(&c, "lru", Some(16 << 30)).unwrap_err().to_string();
        assert!(e.contains("4.0 TiB cache needs 60.0 GiB of memory"), "{e}");
        assert!(e.contains("this machine has 16.0 GiB"), "{e}");
        check_cost(&c, "lru", Some(64 << 30)).unwrap();
        check_cost(&c, "lru", None).unwrap();
    }
}
