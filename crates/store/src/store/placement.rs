//! Zone pools and placement: pool sizing per stream type, the zone a chunk appends to
//! (guided or one-zone placement), allocating, finishing and resetting datazones.

use super::{DZone, Store, ZoneState, GC_POOL};
use crate::format::{RecordType, BLOCK};
use crate::{ChunkId, Placement, Result, StoreError, StreamType};
use shingled_zoned::{ZoneOp, ZonedDevice, SECTOR_SIZE};

impl<D: ZonedDevice> Store<D> {
    pub(super) fn pool_key(&self, stream: StreamType) -> u8 {
        match self.cfg.placement {
            Placement::OneZone => 0,
            Placement::Guided { separate_streams: false, .. } => 0,
            Placement::Guided { separate_streams: true, .. } => match stream {
                StreamType::METADATA => 1,
                StreamType::GC => 2,
                _ => 0,
            },
        }
    }

    /// Pool targets from the configuration, scaled down to the device's open/active limit
    /// (less one zone for the metazone) and to half the datazones.
    pub(super) fn size_pools(&mut self) {
        let c = &self.cfg;
        let mut t: Vec<(u8, u64)> = match c.placement {
            Placement::OneZone => vec![(0, 1)],
            Placement::Guided { separate_streams, round_robin, .. } => {
                let v = if separate_streams {
                    vec![(0, c.pool_data as u64), (1, c.pool_metadata as u64), (2, c.pool_gc as u64)]
                } else {
                    vec![(0, (c.pool_data + c.pool_metadata + c.pool_gc) as u64)]
                };
                if round_robin {
                    v
                } else {
                    v.into_iter().map(|(k, _)| (k, 1)).collect()
                }
            }
        };
        let lim = [self.info.max_open, self.info.max_active].into_iter().filter(|&x| x > 0).min();
        let mut budget = (self.zones.len() as u64 / 2).max(1);
        if let Some(l) = lim {
            budget = budget.min((l as u64).saturating_sub(1).max(1));
        }
        let total: u64 = t.iter().map(|x| x.1).sum();
        if total > budget {
            for x in &mut t {
                x.1 = (x.1 * budget / total).max(1);
            }
        }
        for (k, n) in t {
            self.pools.entry(k).or_default().target = n as usize;
        }
    }

    /// Stops writing datazone `d`: FINISH on the device, state Full.
    /// Read-only (recovery only): the state changes, the device is not touched, and `written`
    /// stays at the write pointer (nothing is above it to read).
    pub(super) fn finish_zone(&mut self, d: usize) -> Result<()> {
        let z = self.zone_no(d);
        let wp = self.wp_bytes(z)?;
        let full = wp >= self.info.zone_cap(z) * SECTOR_SIZE;
        if !full && !self.read_only {
            self.dev
                .zone_mgmt(ZoneOp::Finish, self.info.zone_start(z), self.info.zone_len(z))
                .map_err(StoreError::dev(format!("finishing zone {z}")))?;
        }
        let cap = self.cap_bytes(z);
        let written = if self.read_only { (wp / BLOCK * BLOCK).min(cap) } else { cap };
        let zs = &mut self.zones[d];
        zs.state = if zs.live == 0 { ZoneState::Garbage } else { ZoneState::Full };
        zs.written = written;
        let key = zs.pool;
        if let Some(p) = self.pools.get_mut(&key) {
            p.zones.retain(|&x| x as usize != d);
        }
        for c in self.chunks.values_mut() {
            if c.cur_zone == Some(d as u32) {
                c.cur_zone = None;
            }
        }
        self.appenders[d] = 0;
        Ok(())
    }

    /// The datazone chunk `id` appends to next (placement, SMRSTORE §4.3).
    ///
    /// With rule 3 (round-robin), a chunk that needs a zone (new, or its zone filled) takes, in
    /// round-robin order over its pool: an empty zone no other unsealed chunk appends to (so a
    /// chunk of one zone's worth fills one zone by itself, SMRSTORE Fig. 13(b)); else a fresh
    /// zone while the pool is under its target; else the unowned pool zone with the least
    /// written (the room a short chunk left, shared by the same stream type, §5.4 rule 2); else
    /// the next pool zone in turn, shared with the chunks appending to it.
    pub(super) fn zone_for(&mut self, id: ChunkId) -> Result<usize> {
        let c = &self.chunks[&id];
        if let Some(d) = c.cur_zone {
            if matches!(self.zones[d as usize].state, ZoneState::Opened | ZoneState::Activated) {
                return Ok(d as usize);
            }
            self.set_cur_zone(id, None);
        }
        let key = self.pool_key(self.chunks[&id].stream);
        let (len, target) = {
            let p = self.pools.entry(key).or_default();
            (p.zones.len(), p.target.max(1))
        };
        let rr = matches!(self.cfg.placement, Placement::Guided { round_robin: true, .. });
        let d = if rr && len > 0 {
            let p = &self.pools[&key];
            let n = p.zones.len();
            let order: Vec<u32> = (0..n).map(|i| p.zones[(p.next + i) % n]).collect();
            let free: Vec<u32> = order.iter().copied().filter(|&d| !self.appended_to(d as usize)).collect();
            // A new zone while the pool is under target, unless only the GC reserve is left:
            // then the pool's own zones.
            let fresh = if free.iter().any(|&d| self.zones[d as usize].written == 0) || len >= target {
                None
            } else {
                match self.allocate_zone(key) {
                    Ok(d) => Some(d),
                    Err(StoreError::NoSpace(_)) => None,
                    Err(e) => return Err(e),
                }
            };
            if let Some(&d) = free.iter().find(|&&d| self.zones[d as usize].written == 0) {
                d
            } else if let Some(d) = fresh {
                self.pools.get_mut(&key).expect("created above").zones.push(d as u32);
                d as u32
            } else if let Some(&d) = free.iter().min_by_key(|&&d| self.zones[d as usize].written) {
                d
            } else {
                order[0]
            }
        } else {
            if len < target {
                match self.allocate_zone(key) {
                    Ok(d) => self.pools.get_mut(&key).expect("created above").zones.push(d as u32),
                    // Only the GC reserve is left: the pool's own zones, if it has any, else
                    // the room left in the GC zone.
                    Err(StoreError::NoSpace(_)) if len > 0 => {}
                    Err(StoreError::NoSpace(why)) => {
                        let d = self.gc_zone_with_room().ok_or(StoreError::NoSpace(why))?;
                        self.set_cur_zone(id, Some(d as u32));
                        return Ok(d);
                    }
                    Err(e) => return Err(e),
                }
            }
            let p = &self.pools[&key];
            p.zones[p.next % p.zones.len()]
        };
        let p = self.pools.get_mut(&key).expect("created above");
        p.next = p.next.wrapping_add(1);
        self.set_cur_zone(id, Some(d));
        Ok(d as usize)
    }

    /// The GC zone, if it is open with room for a record: where foreground appends go when
    /// every other zone is full and only the GC reserve is free (the reserve is then what GC
    /// takes when its zone fills).
    pub(super) fn gc_zone_with_room(&self) -> Option<usize> {
        let d = self.gc_zone?;
        let z = &self.zones[d];
        (matches!(z.state, ZoneState::Opened | ZoneState::Activated)
            && self.cap_bytes(self.zone_no(d)) - z.written >= BLOCK)
            .then_some(d)
    }

    /// Points chunk `id` (unsealed) at zone `to`, keeping `appenders` in step.
    pub(super) fn set_cur_zone(&mut self, id: ChunkId, to: Option<u32>) {
        let c = self.chunks.get_mut(&id).expect("checked by the caller");
        if let Some(old) = std::mem::replace(&mut c.cur_zone, to) {
            self.appenders[old as usize] -= 1;
        }
        if let Some(d) = to {
            self.appenders[d as usize] += 1;
        }
    }

    /// Whether an unsealed chunk appends to datazone `d`.
    pub(super) fn appended_to(&self, d: usize) -> bool {
        debug_assert_eq!(
            self.appenders[d] as usize,
            self.chunks.values().filter(|c| !c.sealed && c.cur_zone == Some(d as u32)).count(),
            "appender count of datazone {d}"
        );
        self.appenders[d] > 0
    }

    /// Takes a free datazone for pool `key`, resetting a garbage zone when none is free.
    /// Foreground pools never take the last [`Store::gc_reserve_zones`] spare zones; GC may.
    pub(super) fn allocate_zone(&mut self, key: u8) -> Result<usize> {
        if key != GC_POOL && self.spare_zones() <= self.gc_reserve_zones() {
            return Err(self.out_of_space());
        }
        let d = match self.zones.iter().position(|z| z.state == ZoneState::Free) {
            Some(d) => d,
            None => {
                let g = self.zones.iter().position(|z| z.state == ZoneState::Garbage);
                let g = g.ok_or_else(|| StoreError::NoSpace("no free or garbage datazone left".into()))?;
                self.reset_zone(g)?;
                g
            }
        };
        let z = self.zone_no(d);
        if self.wp_bytes(z)? != 0 {
            // Left over from a reset that was journaled but not carried out before a crash.
            self.dev
                .zone_mgmt(ZoneOp::Reset, self.info.zone_start(z), self.info.zone_len(z))
                .map_err(StoreError::dev(format!("resetting zone {z}")))?;
        }
        let zs = &mut self.zones[d];
        zs.state = ZoneState::Opened;
        zs.pool = key;
        zs.written = 0;
        zs.live = 0;
        zs.stored = 0;
        zs.last_hcrc = 0;
        Ok(d)
    }

    /// Journals, then carries out, the reset of garbage datazone `d`.
    pub(super) fn reset_zone(&mut self, d: usize) -> Result<()> {
        if self.gc_job.as_ref().is_some_and(|j| j.victim == d) {
            // A GC victim emptied by deletes before its job ended: the last checkpoint may
            // still point at records it holds that were migrated since.
            self.gc_job = None;
            self.write_checkpoint()?;
            self.stats.gc_migrations += 1;
        }
        let z = self.zone_no(d);
        let seq = self.journal(RecordType::JZoneReset, &z.to_le_bytes())?;
        self.dev
            .zone_mgmt(ZoneOp::Reset, self.info.zone_start(z), self.info.zone_len(z))
            .map_err(StoreError::dev(format!("resetting zone {z}")))?;
        self.zones[d] = DZone::free(seq);
        self.stats.zone_resets += 1;
        Ok(())
    }
}
