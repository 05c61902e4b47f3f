//! The read-only consistency check of a [`DmZoned`] (an fsck, as `dmzadm --check`).

use super::meta::{self, NONE, SPB};
use super::{DmZoned, Kind};
use crate::block::BLOCK;
use crate::error::Result;
use serde::Serialize;
use shingled_zoned::{ReportOption, ZoneCond, ZonedDevice};

/// What [`DmZoned::check`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Every inconsistency, one line each, naming the chunk, zone and block.
    pub problems: Vec<String>,
    /// Chunks mapped.
    pub chunks_mapped: u64,
    /// Valid blocks in all zones.
    pub valid_blocks: u64,
    /// Generation of the newest metadata set on the device.
    pub generation: u64,
}

impl CheckReport {
    /// No problem found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

impl<D: ZonedDevice> DmZoned<D> {
    /// Checks, without changing anything, that the mapping, bitmaps, write pointers, free
    /// lists and the metadata on the device agree:
    ///
    /// - every mapped zone has the right type and belongs to one chunk only; a block is valid
    ///   in at most one zone of its chunk; no mapped zone is empty, no unmapped zone has valid
    ///   blocks; valid counts match the bitmaps;
    /// - every valid block of a sequential zone is below the zone's write pointer, as the device
    ///   reports it, and the tracked write pointers are the device's;
    /// - every usable zone is exactly one of mapped, free, waiting for a commit, or unusable
    ///   (read-only/offline); free zones are not referenced by the last commit, waiting ones are;
    ///   the reclaim reserve is there;
    /// - both metadata sets verify (or, after a failed commit, the newest does) and carry the
    ///   current generation; the zones the committed mapping references are exactly those marked
    ///   so (none of them is free); committed valid blocks are below the write pointers; with no
    ///   change since the last commit, the sets equal the in-memory state block for block.
    pub fn check(&mut self) -> Result<CheckReport> {
        let mut p = Vec::new();
        let nz = self.lay.nr_zones as usize;
        let bpz = self.lay.bpz;
        let mut seen = vec![NONE; nz];
        let mut rep = CheckReport { generation: self.generation, ..Default::default() };
        for (c, &(d, b)) in self.map.iter().enumerate() {
            if (d, b) != (NONE, NONE) {
                rep.chunks_mapped += 1;
            }
            for (z, want, role) in [(d, Kind::Seq, "data"), (b, Kind::Random, "buffer")] {
                if z == NONE {
                    continue;
                }
                if z as usize >= nz || self.kind(z) != want {
                    p.push(format!("chunk {c}: {role} zone {z} is not a {want} zone"));
                    continue;
                }
                if seen[z as usize] != NONE {
                    p.push(format!("zone {z} is mapped twice (chunks {} and {c})", seen[z as usize]));
                }
                seen[z as usize] = c as u32;
                if self.owner[z as usize] != c as u32 {
                    p.push(format!(
                        "zone {z}: owner table says chunk {}, the mapping chunk {c}",
                        self.owner[z as usize]
                    ));
                }
                if self.valid[z as usize] == 0 {
                    p.push(format!("chunk {c}: {role} zone {z} holds no valid block"));
                }
            }
            if d != NONE && b != NONE && (d as usize) < nz && (b as usize) < nz {
                if let (Some(x), Some(y)) = (&self.bits[d as usize], &self.bits[b as usize]) {
                    if let Some((w, both)) =
                        x.iter().zip(y.iter()).map(|(x, y)| x & y).enumerate().find(|(_, m)| *m != 0)
                    {
                        let k = w as u64 * 64 + both.trailing_zeros() as u64;
                        p.push(format!("chunk {c} block {k}: valid in data zone {d} and in buffer zone {b}"));
                    }
                }
            }
        }
        for (z, &mapped_by) in seen.iter().enumerate() {
            if self.owner[z] != NONE && mapped_by == NONE {
                p.push(format!("zone {z}: owner table says chunk {}, which does not map it", self.owner[z]));
            }
            let ones = self.bits[z].as_ref().map_or(0, |b| b.iter().map(|w| w.count_ones()).sum::<u32>());
            if ones != self.valid[z] {
                p.push(format!("zone {z}: {} valid blocks counted, the bitmap has {ones}", self.valid[z]));
            }
            if let Some(last) = self.last_valid(z as u32) {
                if last >= bpz {
                    p.push(format!("zone {z}: bit {last} set beyond the {bpz} blocks of a zone"));
                }
            }
            rep.valid_blocks += ones as u64;
            if mapped_by == NONE && ones > 0 {
                p.push(format!("zone {z} is not mapped but has {ones} valid blocks"));
            }
        }
        let zones = self.dev.report_zones(0, 0, ReportOption::All)?;
        let mut owned_seq = 0u64;
        for z in 0..nz as u32 {
            let (zi, kind) = (z as usize, self.kind(z));
            if !matches!(kind, Kind::Random | Kind::Seq) {
                if self.free_rnd.contains(&z)
                    || self.free_seq.contains(&z)
                    || self.pending_rnd.contains(&z)
                    || self.pending_seq.contains(&z)
                {
                    p.push(format!("{kind} zone {z} is on a free or pending list"));
                }
                continue;
            }
            let zone = &zones[zi];
            if kind == Kind::Seq {
                let written = zone.written().min(zone.capacity);
                let dev_wp = if written % SPB == 0 { written / SPB } else { bpz };
                if dev_wp != self.wp[zi] as u64
                    && !matches!(zone.cond, ZoneCond::ReadOnly | ZoneCond::Offline)
                {
                    p.push(format!(
                        "zone {z}: write pointer at block {} in memory, {dev_wp} on the device",
                        self.wp[zi]
                    ));
                }
                if let Some(last) = self.last_valid(z) {
                    if last >= dev_wp {
                        p.push(format!("zone {z}: block {last} is valid but the device write pointer is at block {dev_wp}"));
                    }
                }
                if self.owner[zi] != NONE {
                    owned_seq += 1;
                    if matches!(zone.cond, ZoneCond::ReadOnly | ZoneCond::Offline) {
                        p.push(format!("data zone {z} is {}", zone.cond));
                    }
                }
            }
            let (free, pending) = if kind == Kind::Random {
                (self.free_rnd.contains(&z), self.pending_rnd.contains(&z))
            } else {
                (self.free_seq.contains(&z), self.pending_seq.contains(&z))
            };
            let wrong_list = if kind == Kind::Random {
                self.free_seq.contains(&z) || self.pending_seq.contains(&z)
            } else {
                self.free_rnd.contains(&z) || self.pending_rnd.contains(&z)
            };
            if wrong_list {
                p.push(format!("{kind} zone {z} is on the other kind's list"));
            }
            let places = [self.owner[zi] != NONE, free, pending, self.bad[zi]].iter().filter(|x| **x).count();
            if places != 1 {
                p.push(format!(
                    "zone {z}: mapped {}, free {free}, waiting for a commit {pending}, unusable {} (exactly one expected)",
                    self.owner[zi] != NONE,
                    self.bad[zi]
                ));
            }
            if free && self.committed[zi] {
                p.push(format!("zone {z} is free but the last commit references it"));
            }
            if pending && !self.committed[zi] {
                p.push(format!("zone {z} waits for a commit the last commit does not need"));
            }
        }
        if owned_seq > self.geo.nr_chunks {
            p.push(format!("{owned_seq} sequential zones mapped for {} chunks", self.geo.nr_chunks));
        }
        let spare = (self.free_seq.len() + self.pending_seq.len()) as u64;
        let bad_seq = self.seq_range().filter(|&z| self.bad[z as usize]).count() as u64;
        if spare + bad_seq < self.geo.reserved_seq {
            p.push(format!(
                "only {spare} unmapped sequential zones, the reserve is {}",
                self.geo.reserved_seq
            ));
        }
        self.check_disk(&mut p, &zones)?;
        rep.problems = p;
        Ok(rep)
    }

    fn check_disk(&mut self, p: &mut Vec<String>, zones: &[shingled_zoned::Zone]) -> Result<()> {
        let (lay, info) = (self.lay, self.info);
        let sets =
            [meta::read_set(&mut self.dev, &lay, &info, 0)?, meta::read_set(&mut self.dev, &lay, &info, 1)?];
        let mut newest: Option<&meta::SetImage> = None;
        for (i, s) in sets.iter().enumerate() {
            match s {
                Ok(img) => {
                    if newest.is_none_or(|n| img.sup.generation > n.sup.generation) {
                        newest = Some(img);
                    }
                    if self.synced && img.sup.generation != self.generation {
                        p.push(format!(
                            "metadata set {i} has generation {}, the last commit was {}",
                            img.sup.generation, self.generation
                        ));
                    }
                }
                Err(bad) if self.synced => p.push(format!("metadata set {i} does not verify: {}", bad.why)),
                Err(_) => {}
            }
        }
        if let [Ok(x), Ok(y)] = &sets {
            if x.sup.generation == y.sup.generation && x.payload != y.payload {
                p.push(format!(
                    "metadata sets 0 and 1 both carry generation {} but hold different tables",
                    x.sup.generation
                ));
            }
        }
        let Some(img) = newest else {
            p.push("no metadata set verifies".into());
            return Ok(());
        };
        if img.sup.generation != self.generation {
            p.push(format!(
                "newest metadata generation {} on the device, {} in memory",
                img.sup.generation, self.generation
            ));
            return Ok(());
        }
        let bpz = self.lay.bpz;
        let (map, bitmaps) = img.payload.split_at(self.lay.map_blocks as usize * BLOCK);
        let mut referenced = vec![false; self.lay.nr_zones as usize];
        for c in 0..self.geo.nr_chunks as usize {
            for at in [c * 8, c * 8 + 4] {
                let z = meta::u32_at(map, at);
                if z != NONE && (z as u64) < self.lay.nr_zones {
                    referenced[z as usize] = true;
                }
            }
        }
        for (z, &r) in referenced.iter().enumerate() {
            if r != self.committed[z] {
                p.push(format!(
                    "zone {z}: referenced by the committed mapping {r}, marked {}",
                    self.committed[z]
                ));
            }
            if r && (self.free_rnd.contains(&(z as u32)) || self.free_seq.contains(&(z as u32))) {
                p.push(format!("zone {z} is free but the committed mapping references it"));
            }
            if r && self.kind(z as u32) == Kind::Seq {
                let zone = &zones[z];
                let wp = zone.written().min(zone.capacity) / SPB;
                if let Some(k) = (wp..bpz).find(|&k| meta::bit(bitmaps, z as u64 * bpz + k)) {
                    p.push(format!(
                        "zone {z}: committed valid block {k} above the write pointer (block {wp})"
                    ));
                }
            }
        }
        if self.dirty_count == 0 {
            for i in 0..self.lay.payload_blocks() {
                let want = self.encode_payload(i);
                let got = &img.payload[i as usize * BLOCK..(i as usize + 1) * BLOCK];
                if want != got {
                    p.push(format!(
                        "metadata payload block {i} on the device differs from memory with no change pending"
                    ));
                }
            }
        }
        Ok(())
    }
}
