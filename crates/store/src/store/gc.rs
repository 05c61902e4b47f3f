//! Garbage collection: victim choice, incremental migration (`gc_step`), the background
//! path with its watermarks and bandwidth credit, the emergency path and the GC reserve.

use super::{
    push_record, record_spans, GcJob, GcStep, RecordIndex, Store, ZoneState, GC_HARD_MIN_FREE, GC_POOL,
    GC_RESERVE_ZONES,
};
use crate::{ChunkId, Result, StoreError};
use shingled_zoned::{ZonedDevice, SECTOR_SIZE};
use std::collections::VecDeque;

impl<D: ZonedDevice> Store<D> {
    /// The zone GC migrates into (opened only for GC, pool key [`GC_POOL`]).
    pub(super) fn gc_zone(&mut self) -> Result<usize> {
        if let Some(d) = self.gc_zone {
            if matches!(self.zones[d].state, ZoneState::Opened | ZoneState::Activated) {
                return Ok(d);
            }
        }
        let d = self.allocate_zone(GC_POOL)?;
        self.gc_zone = Some(d);
        Ok(d)
    }

    /// One round of greedy GC (SMRSTORE §4.5), unthrottled: finishes the victim in progress if
    /// any; else resets a garbage zone if there is one; else migrates the whole best victim
    /// (see [`Store::gc_step`]). Returns the zone reclaimed, or `None` when there is nothing
    /// to reclaim.
    pub fn gc(&mut self) -> Result<Option<u64>> {
        loop {
            let s = self.gc_step(u64::MAX)?;
            if s.reclaimed.is_some() || s.victim.is_none() {
                return Ok(s.reclaimed);
            }
        }
    }

    /// One round of GC like [`Store::gc`], but any full zone with dead data may be the victim
    /// (the one with the most dead bytes), not only one at least a quarter dead: what an explicit
    /// `store gc`, and a store running short of free zones, do. Returns the zone reclaimed.
    pub fn gc_any(&mut self) -> Result<Option<u64>> {
        self.gc_any_dead = true;
        let r = self.gc();
        self.gc_any_dead = false;
        r
    }

    /// Free or garbage datazones: what placement may still take (the GC reserve among them).
    pub fn spare_zones(&self) -> usize {
        self.zones.iter().filter(|z| matches!(z.state, ZoneState::Free | ZoneState::Garbage)).count()
    }

    /// Datazones kept for GC ([`GC_RESERVE_ZONES`], or none with GC off).
    pub fn gc_reserve_zones(&self) -> usize {
        if self.cfg.gc_free_zones == 0 {
            0
        } else {
            GC_RESERVE_ZONES.min(self.zones.len().saturating_sub(1))
        }
    }

    pub(super) fn out_of_space(&self) -> StoreError {
        let live: u64 = self.chunks.values().map(|c| c.len).sum();
        StoreError::NoSpace(format!(
            "no free datazone left outside the GC reserve and no dead data to reclaim: {live} live user bytes, \
             usable capacity {} bytes ({} datazones, {} kept for GC); delete chunks to make room",
            self.usable_bytes(),
            self.zones.len(),
            self.gc_reserve_zones()
        ))
    }

    /// One step of incremental greedy GC (SMRSTORE §4.5), migrating at most `budget` live user
    /// bytes (whole records; a single record larger than `budget` only when `budget` is at
    /// least [`StoreConfig::gc_step_bytes`]):
    ///
    /// 1. With no victim in progress, a garbage zone (full, no live data) is reset first
    ///    (journaled, then RESET) and the step ends. Otherwise the victim becomes the full zone
    ///    with the most dead user bytes (`stored − live`; ties: the lowest zone), if at least a
    ///    quarter of its user bytes are dead.
    /// 2. The victim's live records are copied, in chunk-id then chunk-offset order, into the
    ///    GC zone (each slice verified on the way) and the index is pointed at the copies.
    /// 3. When the victim holds nothing live any more, the store flushes and checkpoints, then
    ///    journals and performs the victim's reset.
    ///
    /// Crash safety: the victim is only reset after a checkpoint that indexes the copies;
    /// until then the previous checkpoint (pointing at the intact victim) is the recovery
    /// point and recovery ignores the copies, which do not continue their chunks. Foreground
    /// operations between steps are journaled or scanned as usual.
    pub fn gc_step(&mut self, budget: u64) -> Result<GcStep> {
        self.check_writable()?;
        let r = self.gc_step_inner(budget);
        self.guard(r)
    }

    pub(super) fn gc_step_inner(&mut self, budget: u64) -> Result<GcStep> {
        let mut step = GcStep::default();
        if self.gc_job.is_none() {
            if let Some(g) = self.zones.iter().position(|z| z.state == ZoneState::Garbage) {
                self.reset_zone(g)?;
                self.stats.gc_zones_reclaimed += 1;
                step.reclaimed = Some(self.zone_no(g));
                return Ok(step);
            }
            let Some(v) = self.gc_victim() else { return Ok(step) };
            let spans: VecDeque<(ChunkId, u64)> = self
                .chunks
                .iter()
                .flat_map(|(id, c)| record_spans(c).filter(|s| s.0 as usize == v).map(move |s| (*id, s.2)))
                .collect();
            self.gc_job = Some(GcJob { victim: v, spans });
        }
        let v = self.gc_job.as_ref().map(|j| j.victim).expect("set above");
        step.victim = Some(self.zone_no(v));
        while let Some(&(id, rs)) = self.gc_job.as_ref().and_then(|j| j.spans.front()) {
            // The span may be gone (chunk deleted) since the job was planned.
            let cur = self
                .chunks
                .get(&id)
                .and_then(|c| record_spans(c).find(|s| s.0 as usize == v && s.2 == rs).map(|s| s.3));
            let Some(re) = cur else {
                self.gc_job.as_mut().expect("running").spans.pop_front();
                continue;
            };
            let n = re - rs;
            let alone = step.migrated == 0 && budget >= self.cfg.gc_step_bytes;
            if step.migrated + n > budget && !alone {
                break;
            }
            self.gc_move_span(v, id, rs, re)?;
            self.gc_job.as_mut().expect("running").spans.pop_front();
            step.migrated += n;
            self.stats.gc_bytes_migrated += n;
        }
        let done = self.gc_job.as_ref().is_some_and(|j| j.spans.is_empty());
        if done {
            self.gc_job = None;
            self.zones[v].state = ZoneState::Garbage;
            self.write_checkpoint()?;
            self.reset_zone(v)?;
            self.stats.gc_migrations += 1;
            self.stats.gc_zones_reclaimed += 1;
            step.reclaimed = Some(self.zone_no(v));
        }
        if step.migrated > 0 {
            self.stats.gc_steps += 1;
        }
        Ok(step)
    }

    /// The greedy victim: the full zone with the most dead user bytes, if at least a quarter
    /// of what was written into it is dead.
    pub(super) fn gc_victim(&self) -> Option<usize> {
        (0..self.zones.len())
            .filter(|&d| {
                let z = &self.zones[d];
                z.state == ZoneState::Full
                    && if self.gc_any_dead { z.live < z.stored } else { z.live * 4 <= z.stored * 3 }
            })
            .max_by_key(|&d| (self.zones[d].stored.saturating_sub(self.zones[d].live), std::cmp::Reverse(d)))
    }

    /// Copies the record of chunk `id` at `[rs, re)` out of victim `v` into the GC zone and
    /// points the index at the copies.
    pub(super) fn gc_move_span(&mut self, v: usize, id: ChunkId, rs: u64, re: u64) -> Result<()> {
        let data = self.read(id, rs, re - rs)?;
        let (mut new, mut done) = (Vec::new(), 0);
        // On failure the copies made so far stay unindexed: the victim still holds them.
        self.write_run(id, rs, &data, true, &mut new, &mut done)?;
        let c = self.chunks.get_mut(&id).expect("checked by the caller");
        let mut flat: Vec<(u32, RecordIndex)> =
            c.groups.iter().flat_map(|g| g.records.iter().map(move |r| (g.zone, *r))).collect();
        let at =
            flat.iter().position(|x| x.0 as usize == v && x.1.chunk_off as u64 == rs).expect("span of c");
        flat.splice(at..at + 1, new);
        c.groups.clear();
        for (d, r) in flat {
            push_record(c, d, r);
        }
        self.zones[v].live -= re - rs;
        Ok(())
    }

    /// Background GC around an append of `len` bytes (`before`: ahead of it). Before: the
    /// emergency path (at most one free datazone: unthrottled rounds until more are free or
    /// nothing can be reclaimed) and the low watermark. After: earn credit, and run one step
    /// when it covers the step (else count a throttled step); stop at the high watermark.
    pub(super) fn gc_background(&mut self, len: u64, before: bool) -> Result<()> {
        if self.cfg.gc_free_zones == 0 {
            return Ok(());
        }
        if before {
            // Emergency: before the append starts (GC never runs in the middle of one), make
            // sure the zones it may open exist outside the GC reserve, reclaiming any dead data.
            let cap = self.info.zone_capacity_sectors * SECTOR_SIZE;
            let need = len.div_ceil(cap.max(1)) as usize + 1;
            while self.free_zones() <= GC_HARD_MIN_FREE
                || self.spare_zones() <= self.gc_reserve_zones() + need
            {
                match self.gc_any() {
                    Ok(Some(_)) => self.stats.gc_emergency_rounds += 1,
                    Ok(None) | Err(StoreError::NoSpace(_)) => break,
                    Err(e) => return Err(e),
                }
            }
            if self.free_zones() < self.cfg.gc_free_zones as usize {
                self.gc_active = true;
            }
            return Ok(());
        }
        if !self.gc_active {
            return Ok(());
        }
        let step = self.cfg.gc_step_bytes.max(1);
        self.gc_credit =
            (self.gc_credit + len.saturating_mul(self.cfg.gc_max_bandwidth as u64) / 100).min(step);
        let garbage = self.zones.iter().any(|z| z.state == ZoneState::Garbage);
        if self.gc_job.is_some() || !garbage {
            // Plan the victim (free) so the credit can be compared with its next step.
            if self.gc_job.is_none() {
                if let Some(v) = self.gc_victim() {
                    let spans = self
                        .chunks
                        .iter()
                        .flat_map(|(id, c)| {
                            record_spans(c).filter(|s| s.0 as usize == v).map(move |s| (*id, s.2))
                        })
                        .collect();
                    self.gc_job = Some(GcJob { victim: v, spans });
                }
            }
        }
        let need = match &self.gc_job {
            // Resets cost no bandwidth.
            None => 0,
            Some(j) => {
                let v = j.victim;
                let next = j.spans.iter().find_map(|(id, rs)| {
                    self.chunks.get(id).and_then(|c| {
                        record_spans(c).find(|s| s.0 as usize == v && s.2 == *rs).map(|s| s.3 - s.2)
                    })
                });
                next.unwrap_or(0).min(step)
            }
        };
        if self.gc_job.is_none() && !garbage {
            self.gc_active =
                self.free_zones() < self.cfg.gc_stop_free_zones.max(self.cfg.gc_free_zones) as usize;
            return Ok(());
        }
        if self.gc_credit < need {
            self.stats.gc_throttled_steps += 1;
            return Ok(());
        }
        let budget = if need >= step { step } else { self.gc_credit };
        let r = match self.gc_step(budget) {
            Err(StoreError::NoSpace(_)) => return Ok(()),
            r => r?,
        };
        self.gc_credit = self.gc_credit.saturating_sub(r.migrated);
        if self.gc_job.is_none()
            && self.free_zones() >= self.cfg.gc_stop_free_zones.max(self.cfg.gc_free_zones) as usize
        {
            self.gc_active = false;
        }
        Ok(())
    }
}
