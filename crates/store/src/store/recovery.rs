//! Recovery (`Store::open`, docs/store-format.md "Recovery"): find the newest complete
//! checkpoint, load it, replay the journal, scan the datazones written since, index the records
//! found, rebuild the zone states and pools, and write a fresh checkpoint.

use super::{
    push_record, record_spans, Chunk, DZone, RecordIndex, RecoveryReport, Store, ZoneScan, ZoneState,
    GC_POOL, MAX_CHUNK_LEN, MAX_SEQ,
};
use crate::format::{
    self, check_payload, decode_data_prefix, decode_header, DataPrefix, Header, Reader, RecordType, BLOCK,
    DATA_SLICES_AT, HEADER_LEN, SLICE, SLICE_STRIDE,
};
use crate::{Result, StoreError, StreamType};
use shingled_zoned::{ZoneOp, ZonedDevice, SECTOR_SIZE};
use std::time::Instant;

pub(super) enum Tail {
    /// Nothing valid after the last good record: a clean end or a torn last write.
    Clean,
    /// A valid record follows an invalid one: damage, not a crash.
    Corrupt { offset: u64, what: String },
}

pub(super) struct Parsed {
    h: Header,
    /// A data record whose header is valid and whose payload fails its CRC although it lies
    /// wholly below the write pointer: written completely, then damaged (`parse_zone` with
    /// `salvage`). What failed.
    damaged: Option<String>,
    /// Byte offset in the zone.
    off: u64,
    /// The payload (for data records only the prefix).
    payload: Vec<u8>,
}

impl<D: ZonedDevice> Store<D> {
    /// Recovers the store's state from the device (docs/store-format.md "Recovery", steps
    /// 2–7; step 1, the superzone, is `open_with`'s), one function per step, timing each in
    /// `rep`.
    pub(super) fn recover(&mut self, rep: &mut RecoveryReport) -> Result<()> {
        let mut t = Instant::now();
        let lap = |t: &mut Instant| {
            let e = t.elapsed();
            *t = Instant::now();
            e
        };
        let Found { gen, m, recs, ck, newer, notes, fell_back: fallback } = self.find_checkpoint()?;
        rep.checkpoint_fallback = notes;
        let z = self.meta_zone(m);
        let start = self.load_checkpoint(gen, z, ck, rep)?;
        rep.checkpoint_load = lap(&mut t);
        let mut last_seq = self.replay_journal(z, &recs, start, recs[start].h.seq, fallback, rep)?;
        // Newer metazones whose first checkpoint is damaged: their journals follow.
        for n in &newer {
            last_seq = self.replay_journal(self.meta_zone(n.m), &n.recs, 0, last_seq, fallback, rep)?;
        }
        // The metazones recovery read from must survive until the recovery point is durable.
        let needed: Vec<u32> =
            std::iter::once(m).chain(newer.iter().filter(|n| n.journaled()).map(|n| n.m)).collect();
        let point = match newer.last() {
            Some(newest) if needed.len() > 1 => RecoveryPoint::After { gen: newest.gen, newest, needed },
            _ => RecoveryPoint::Next { gen, m },
        };
        rep.journal_replay = lap(&mut t);
        let found = self.scan_datazones(rep)?;
        rep.datazone_scan = lap(&mut t);
        self.index_records(found, last_seq);
        self.rebuild_pools()?;
        self.write_recovery_point(point)?;
        rep.index_build = lap(&mut t);
        Ok(())
    }

    /// Steps 2–3: the newest metazone with a complete checkpoint, found through the metazone
    /// headers (generation, metazone, its records, the checkpoints in them). A torn newer
    /// checkpoint falls back to the previous metazone. So does a newer checkpoint with a record
    /// that does not verify, when the bytes that do not verify can only have held checkpoint
    /// records ([`explain_gaps`]): the newer metazones' journals are then replayed after the
    /// older checkpoint's, and the fallback is noted. Any other damage is an error.
    fn find_checkpoint(&mut self) -> Result<Found> {
        let mut cands = Vec::new();
        for m in 0..self.cfg.nr_metazones {
            let z = self.meta_zone(m);
            let w = self.wp_bytes(z)?;
            if w == 0 {
                continue;
            }
            let mut b = vec![0u8; BLOCK as usize];
            self.dev
                .read(self.info.zone_start(z), &mut b)
                .map_err(StoreError::dev(format!("reading metazone {z}")))?;
            match decode_header(&b) {
                Ok(h) if h.rtype == RecordType::MetaHeader && h.payload_len == 12 => {
                    let p = &b[HEADER_LEN..HEADER_LEN + 12];
                    if check_payload(&h, p).is_ok() && format::u32_at(p, 8) == m {
                        cands.push((format::u64_at(p, 0), m));
                        continue;
                    }
                }
                _ => {}
            }
            // Not a valid header: a reset-then-crash leaves an empty zone; anything valid
            // after it means damage.
            let (_, _, tail) = self.parse_zone(z, 0, w, false)?;
            if let Tail::Corrupt { offset, what } = tail {
                return Err(StoreError::CorruptMeta { structure: "metazone header", zone: z, offset, what });
            }
        }
        cands.sort_unstable_by(|a, b| b.cmp(a));
        // Newer metazones without a usable first checkpoint (newest first).
        let mut newer: Vec<Newer> = Vec::new();
        let mut notes = Vec::new();
        for &(gen, m) in &cands {
            let z = self.meta_zone(m);
            let w = self.wp_bytes(z)?;
            let (recs, gaps) = self.parse_meta(z, w)?;
            let ck = find_checkpoints(&recs, gen);
            if let Err((offset, what)) = explain_gaps(&recs, &gaps, gen, w) {
                let structure = if ck.first_complete { "journal" } else { "checkpoint" };
                return Err(StoreError::CorruptMeta { structure, zone: z, offset, what });
            }
            for &(a, b, ref what) in &gaps {
                notes.push(format!(
                    "metazone {z} (generation {gen}): bytes {a}..{b} do not verify ({what}); they held only \
                     checkpoint records"
                ));
            }
            if ck.last.is_some() {
                // A newer checkpoint torn by a crash is no news; one stepped over damage is:
                // damage in a newer metazone, or after the loaded checkpoint's start.
                let (sub, si) = ck.last_number.unwrap_or((0, 0));
                let fell_back = newer.iter().any(|n| self_damaged(&notes, self.meta_zone(n.m)))
                    || gaps.iter().any(|g| g.0 > recs[si].off);
                if fell_back {
                    notes.push(format!(
                        "recovered from checkpoint {sub} of metazone {z} (generation {gen}), an older checkpoint \
                         than the newest, then replayed the journal written since"
                    ));
                }
                // The journal is one chain only if no generation is missing in between.
                let mut g = gen;
                for n in newer.iter().rev() {
                    let (ng, nm) = (&n.gen, &n.m);
                    if n.journaled() && *ng != g + 1 {
                        return Err(StoreError::CorruptMeta {
                            structure: "checkpoint",
                            zone: self.meta_zone(*nm),
                            offset: 0,
                            what: format!(
                                "the first checkpoint of generation {ng} is damaged and the newest complete one \
                                 before it is generation {gen}: the journal of generation {} is missing",
                                g + 1
                            ),
                        });
                    }
                    g = *ng;
                }
                newer.reverse();
                return Ok(Found { gen, m, recs, ck, newer, notes, fell_back });
            }
            // A checkpoint torn by a crash, or damaged where only checkpoint records were: the
            // previous metazone is the recovery point, this one's journal (if any) follows it.
            let end = recs.iter().map(end_of).chain(gaps.iter().map(|g| g.1)).max().unwrap_or(0);
            newer.push(Newer { gen, m, recs, clean_end: end == w });
        }
        let (zone, offset) = match newer.first() {
            Some(n) => (self.meta_zone(n.m), 0),
            None => (self.meta_zone(0), 0),
        };
        Err(StoreError::CorruptMeta {
            structure: "checkpoint",
            zone,
            offset,
            what: if notes.is_empty() {
                "no complete checkpoint in any metazone".into()
            } else {
                format!("no complete checkpoint in any metazone ({})", notes.join("; "))
            },
        })
    }

    /// Parses metazone `z` up to its write pointer `w`, stepping over what does not verify:
    /// the valid records, and the byte ranges between them that are not valid records, each
    /// with why. A torn last write (a record running past `w`) is the end, not a range.
    fn parse_meta(&mut self, z: u64, w: u64) -> Result<(Vec<Parsed>, Vec<Gap>)> {
        let mut recs = Vec::new();
        let mut gaps = Vec::new();
        let mut from = 0;
        loop {
            let (mut part, _, tail) = self.parse_zone(z, from, w, false)?;
            recs.append(&mut part);
            let Tail::Corrupt { offset, what } = tail else { return Ok((recs, gaps)) };
            let next = self.next_valid_record(z, offset, w)?;
            gaps.push((offset, next, what));
            if next >= w {
                return Ok((recs, gaps));
            }
            from = next;
        }
    }

    /// Where the next valid record of zone `z` after the bad one at byte `at` starts (`w`, the
    /// write pointer, when none does): the record's own end when its header verifies (only its
    /// payload does not), else the first block from which a whole valid record is read.
    fn next_valid_record(&mut self, z: u64, at: u64, w: u64) -> Result<u64> {
        if let Some(h) = self.header_at(z, at)? {
            if at + h.record_len() <= w {
                return Ok(at + h.record_len());
            }
        }
        let mut off = at + BLOCK;
        while off < w {
            if let Some(h) = self.header_at(z, off)? {
                let len = h.record_len();
                if off + len <= w {
                    let mut rec = vec![0u8; len as usize];
                    self.dev
                        .read(self.info.zone_start(z) + off / SECTOR_SIZE, &mut rec)
                        .map_err(StoreError::dev(format!("reading zone {z} at byte {off}")))?;
                    if check_payload(&h, &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize]).is_ok() {
                        return Ok(off);
                    }
                }
            }
            off += BLOCK;
        }
        Ok(w)
    }

    /// The record header at byte `off` of zone `z`, if it verifies.
    fn header_at(&mut self, z: u64, off: u64) -> Result<Option<Header>> {
        let mut b = vec![0u8; BLOCK as usize];
        self.dev
            .read(self.info.zone_start(z) + off / SECTOR_SIZE, &mut b)
            .map_err(StoreError::dev(format!("reading zone {z} at byte {off}")))?;
        Ok(decode_header(&b).ok())
    }

    /// Step 4, first half: loads the tables of the metazone's last complete checkpoint; returns
    /// the index of its CkptStart among the metazone's records.
    fn load_checkpoint(
        &mut self,
        gen: u64,
        z: u64,
        ck: Checkpoints,
        rep: &mut RecoveryReport,
    ) -> Result<usize> {
        let (start, body, body_off) =
            ck.last.expect("find_checkpoint chose a metazone with a complete checkpoint");
        self.decode_tables(&body, z, body_off)?;
        rep.checkpoint_bytes = body.len() as u64;
        rep.checkpoint_generation = gen;
        Ok(start)
    }

    /// Step 4, second half: replays every journal record of metazone `z` after record `start`
    /// (the loaded checkpoint's start: also those written while its pieces were, which its
    /// snapshot does not hold; or the header of a newer metazone whose checkpoint is damaged),
    /// their sequence numbers rising above `last_seq`. Returns the highest sequence number
    /// seen. With `fallback` (an older checkpoint than the newest is loaded), the reset of a
    /// zone the index still points into is an error: the moved records' index was in the
    /// damaged checkpoint.
    fn replay_journal(
        &mut self,
        z: u64,
        recs: &[Parsed],
        start: usize,
        mut last_seq: u64,
        fallback: bool,
        rep: &mut RecoveryReport,
    ) -> Result<u64> {
        for r in recs.get(start + 1..).unwrap_or_default() {
            if matches!(r.h.rtype, RecordType::CkptStart | RecordType::CkptBody | RecordType::CkptEnd) {
                continue;
            }
            rep.journal_records += 1;
            let bad =
                |what: String| StoreError::CorruptMeta { structure: "journal", zone: z, offset: r.off, what };
            if r.h.seq <= last_seq {
                return Err(bad(format!("sequence {} after {last_seq}", r.h.seq)));
            }
            last_seq = r.h.seq;
            let mut rd = Reader::new(&r.payload);
            match r.h.rtype {
                RecordType::JCreate => {
                    let id = rd.id().map_err(bad)?;
                    let stream = StreamType(rd.u8().map_err(bad)?);
                    self.chunks.insert(
                        id,
                        Chunk {
                            stream,
                            sealed: false,
                            create_seq: r.h.seq,
                            len: 0,
                            groups: Vec::new(),
                            cur_zone: None,
                        },
                    );
                }
                RecordType::JSeal => {
                    let id = rd.id().map_err(bad)?;
                    if let Some(c) = self.chunks.get_mut(&id) {
                        c.sealed = true;
                    }
                }
                RecordType::JDelete => {
                    let id = rd.id().map_err(bad)?;
                    self.chunks.remove(&id);
                }
                RecordType::JZoneReset => {
                    let zz = rd.u64().map_err(bad)?;
                    let d = zz.checked_sub(self.data_first).filter(|&d| d < self.zones.len() as u64);
                    let d = d.ok_or_else(|| bad(format!("reset of zone {zz}, not a datazone")))? as usize;
                    if fallback {
                        if let Some((id, _)) = self
                            .chunks
                            .iter()
                            .find(|(_, c)| record_spans(c).any(|(zone, _, _, _)| zone as usize == d))
                        {
                            return Err(bad(format!(
                                "zone {zz} was reset after the checkpoint recovery fell back to, yet chunk {id} \
                                 still has records there: the index of the records GC moved out of it was in \
                                 the damaged checkpoint"
                            )));
                        }
                    }
                    self.zones[d] = DZone::free(r.h.seq);
                }
                t => return Err(bad(format!("{t:?} record in the journal"))),
            }
        }
        if let Some(r) = recs.iter().find(|r| r.h.seq > MAX_SEQ) {
            let what = format!("sequence number {} beyond the bound {MAX_SEQ}", r.h.seq);
            return Err(StoreError::CorruptMeta { structure: "journal", zone: z, offset: r.off, what });
        }
        Ok(recs.iter().map(|r| r.h.seq).max().unwrap_or(0).max(last_seq))
    }

    /// Step 5: scans every datazone written since the checkpoint, collecting the valid data
    /// records (sequence, datazone, block, prefix); finishes zones ending in a torn record.
    fn scan_datazones(&mut self, rep: &mut RecoveryReport) -> Result<Vec<(u64, u32, u32, DataPrefix)>> {
        let mut found: Vec<(u64, u32, u32, DataPrefix)> = Vec::new();
        for d in 0..self.zones.len() {
            let zs = self.zones[d];
            if matches!(zs.state, ZoneState::Full | ZoneState::Garbage) {
                continue;
            }
            let z = self.zone_no(d);
            let w = self.wp_bytes(z)?;
            if w < zs.written {
                return Err(StoreError::CorruptMeta {
                    structure: "zone table",
                    zone: z,
                    offset: w,
                    what: format!(
                        "device write pointer at byte {w}, the checkpoint says {} were written",
                        zs.written
                    ),
                });
            }
            if w == zs.written {
                continue;
            }
            let (recs, end, tail) = self.parse_zone(z, zs.written, w, true)?;
            rep.zones_scanned += 1;
            rep.records_scanned += recs.len() as u64;
            rep.bytes_scanned += w - zs.written;
            if recs.first().is_some_and(|r| r.h.seq <= zs.min_seq) && zs.written == 0 {
                // Old contents of a zone whose reset was journaled but not carried out.
                if self.read_only {
                    self.unreset.insert(d);
                } else {
                    self.dev
                        .zone_mgmt(ZoneOp::Reset, self.info.zone_start(z), self.info.zone_len(z))
                        .map_err(StoreError::dev(format!("resetting zone {z}")))?;
                }
                continue;
            }
            if let Tail::Corrupt { offset, what } = tail {
                return Err(StoreError::CorruptMeta { structure: "data record", zone: z, offset, what });
            }
            let mut pool = None;
            let mut last = zs.min_seq;
            let mut link = if zs.written == 0 { 0 } else { zs.last_hcrc };
            for r in &recs {
                let bad = |what: String| StoreError::CorruptMeta {
                    structure: "data record",
                    zone: z,
                    offset: r.off,
                    what,
                };
                if r.h.seq > MAX_SEQ {
                    return Err(bad(format!("sequence number {} beyond the bound {MAX_SEQ}", r.h.seq)));
                }
                if r.h.rtype != RecordType::Data || r.h.seq <= last {
                    return Err(bad(format!(
                        "{:?} record with sequence {} after {last}",
                        r.h.rtype, r.h.seq
                    )));
                }
                last = r.h.seq;
                if r.h.link != link {
                    return Err(bad(format!(
                        "record links to header CRC {:#010x}, the zone's previous record has {link:#010x}",
                        r.h.link
                    )));
                }
                link = r.h.hcrc;
                if r.damaged.is_some() {
                    rep.damaged_records += 1;
                }
                let pre = decode_data_prefix(&r.payload, r.h.payload_len as usize).map_err(bad)?;
                pool.get_or_insert(pre.pool);
                self.zones[d].stored += pre.len as u64;
                found.push((r.h.seq, d as u32, (r.off / BLOCK) as u32, pre));
            }
            let zs = &mut self.zones[d];
            if let Some(p) = pool {
                if zs.state == ZoneState::Free {
                    zs.pool = p;
                }
            }
            zs.written = end;
            zs.last_hcrc = link;
            if end > 0 && zs.state == ZoneState::Free {
                zs.state = ZoneState::Activated;
            }
            if end != w {
                // A torn last record (or a whole one whose padding runs past the write
                // pointer): nothing more goes into this zone.
                self.finish_zone(d)?;
            } else if end > 0 {
                self.zones[d].state = ZoneState::Activated;
            }
        }
        Ok(found)
    }

    /// Step 6: indexes the records found, in sequence order, that continue their chunk
    /// exactly; counts the others as ignored. Sets the next sequence number.
    fn index_records(&mut self, mut found: Vec<(u64, u32, u32, DataPrefix)>, mut last_seq: u64) {
        found.sort_unstable_by_key(|f| f.0);
        for (seq, d, block, pre) in found {
            let ok = self.chunks.get_mut(&pre.chunk).filter(|c| {
                seq > c.create_seq && pre.offset == c.len && c.len + pre.len as u64 <= MAX_CHUNK_LEN
            });
            match ok {
                Some(c) => {
                    push_record(c, d, RecordIndex { chunk_off: pre.offset as u32, block });
                    c.len += pre.len as u64;
                    self.stats.recovered_records += 1;
                }
                None => self.stats.ignored_records += 1,
            }
            last_seq = last_seq.max(seq);
        }
        self.seq = last_seq + 1;
    }

    /// Step 7, first half: derived state — live bytes per zone, full and garbage zones, the
    /// pools and the GC zone from the opened/activated zones.
    fn rebuild_pools(&mut self) -> Result<()> {
        for z in &mut self.zones {
            z.live = 0;
        }
        for c in self.chunks.values() {
            for (zone, _, rs, re) in record_spans(c) {
                self.zones[zone as usize].live += re - rs;
            }
        }
        for d in 0..self.zones.len() {
            let z = self.zone_no(d);
            let zs = &mut self.zones[d];
            if zs.written >= self.info.zone_cap(z) * SECTOR_SIZE / BLOCK * BLOCK
                && zs.state == ZoneState::Activated
            {
                zs.state = ZoneState::Full;
            }
            if zs.state == ZoneState::Full && zs.live == 0 {
                zs.state = ZoneState::Garbage;
            }
            if zs.state == ZoneState::Garbage && zs.live > 0 {
                zs.state = ZoneState::Full;
            }
        }
        for p in self.pools.values_mut() {
            p.zones.clear();
        }
        for d in 0..self.zones.len() {
            let zs = self.zones[d];
            if matches!(zs.state, ZoneState::Opened | ZoneState::Activated) {
                if zs.pool == GC_POOL {
                    if self.gc_zone.is_none() {
                        self.gc_zone = Some(d);
                    } else {
                        // Only one GC zone is written at a time; close the others.
                        self.finish_zone(d)?;
                    }
                } else {
                    self.pools.entry(zs.pool).or_default().zones.push(d as u32);
                }
            }
        }
        Ok(())
    }

    /// Step 7, second half: a fresh recovery point, a checkpoint in the next metazone (the old
    /// one may end in a torn record). Read-only: the loaded metazone stays the current one,
    /// written up to its write pointer.
    ///
    /// After a fallback past a damaged checkpoint whose metazone holds journal records, the
    /// checkpoint goes into a metazone recovery did not read from, so that a crash before it
    /// is durable leaves every metazone the same recovery needs. When every metazone is needed
    /// (two metazones), it is appended to the newest one instead, after its journal.
    fn write_recovery_point(&mut self, point: RecoveryPoint<'_>) -> Result<()> {
        let (gen, m) = match &point {
            RecoveryPoint::Next { gen, m } => (*gen, *m),
            RecoveryPoint::After { gen, newest, .. } => (*gen, newest.m),
        };
        self.meta = m;
        self.meta_gen = gen;
        if self.read_only {
            self.meta_wp = self.wp_bytes(self.meta_zone(m))? / BLOCK * BLOCK;
            return Ok(());
        }
        let RecoveryPoint::After { newest, needed, .. } = point else { return self.write_checkpoint() };
        let nr = self.cfg.nr_metazones;
        if let Some(t) = (1..=nr).map(|i| (m + i) % nr).find(|t| !needed.contains(t)) {
            // write_checkpoint writes into the metazone after the current one.
            self.meta = (t + nr - 1) % nr;
            return self.write_checkpoint();
        }
        let z = self.meta_zone(m);
        let w = self.wp_bytes(z)?;
        let body = self.encode_tables();
        let need = format::record_len(12) + format::record_len(body.len()) + format::record_len(28);
        if !newest.clean_end || !w.is_multiple_of(BLOCK) || w + need > self.cap_bytes(z) {
            return Err(StoreError::CorruptMeta {
                structure: "checkpoint",
                zone: z,
                offset: w,
                what: format!(
                    "recovered by falling back past a damaged checkpoint, but no metazone can take the new \
                     checkpoint without destroying one recovery read from ({} metazones; metazone {z} {})",
                    nr,
                    if newest.clean_end { "is full" } else { "ends in a torn record" }
                ),
            });
        }
        self.meta_wp = w;
        self.ckpt_sub = newest
            .recs
            .iter()
            .filter_map(|r| ckpt_id(r).filter(|id| id.0 == gen).map(|id| id.1))
            .max()
            .unwrap_or(0)
            + 1;
        let sub = self.ckpt_sub;
        self.meta_append(RecordType::CkptStart, &format::ckpt_start_payload(gen, sub))?;
        self.meta_append(RecordType::CkptBody, &body)?;
        self.flush()?;
        self.meta_append(RecordType::CkptEnd, &format::ckpt_end_payload(gen, sub, 1, &body))?;
        self.flush()?;
        self.since_ckpt = 0;
        self.stats.checkpoints += 1;
        Ok(())
    }

    /// Parses the records of zone `z` in `[from, to)` bytes, `to` being the device's write
    /// pointer. Stops at the first record that is not valid and classifies it
    /// (`docs/store-format.md`, "Acknowledged tails"):
    ///
    /// - a record whose header is valid but which runs past the write pointer is a write torn
    ///   by a crash (never acknowledged): the end of the zone's data ([`Tail::Clean`]) — unless a
    ///   valid record follows (probed), which is damage;
    /// - an all-zero block in a zone the device reports FULL is the end of the data of a
    ///   FINISHed zone ([`Tail::Clean`], probed likewise);
    /// - anything else lies wholly below the write pointer, so it was written completely and
    ///   damaged afterwards: [`Tail::Corrupt`] — except, with `salvage`, a data record whose
    ///   header is valid and whose prefix agrees with one of its slice footers: it is returned
    ///   with `damaged` set (indexed by recovery; reads of its bad slices fail) and parsing
    ///   goes on.
    pub(super) fn parse_zone(
        &mut self,
        z: u64,
        from: u64,
        to: u64,
        salvage: bool,
    ) -> Result<(Vec<Parsed>, u64, Tail)> {
        let zs = self.info.zone_start(z);
        let full = self.dev.report_zone(z).map_err(StoreError::dev(format!("reporting zone {z}")))?.cond
            == shingled_zoned::ZoneCond::Full;
        let mut out = Vec::new();
        let mut off = from;
        // One sequential pass up to the write pointer in windows of `scan_buffer_bytes`.
        let mut scan = ZoneScan::new(z, zs, to, self.cfg.scan_buffer_bytes);
        let (stop, probe_from, what) = loop {
            if off >= to {
                return Ok((out, off, Tail::Clean));
            }
            let hb = scan.get(&mut self.dev, off, BLOCK as usize, "reading")?;
            let h = match decode_header(hb) {
                Ok(h) => h,
                Err(_) if full && hb.iter().all(|&b| b == 0) => {
                    break (off, off + BLOCK, "zeros after the data of a finished zone".to_string())
                }
                Err(e) => {
                    let what = format!("invalid record header below the write pointer ({to}): {e}");
                    return Ok((out, off, Tail::Corrupt { offset: off, what }));
                }
            };
            let len = h.record_len();
            // A data record whose header and payload are below the write pointer and only its
            // zero padding is not (a crash kept all of it but the padding's sectors) is whole:
            // collected if its payload checks, and it ends the zone (the caller FINISHes it,
            // after which the padding reads as zeros and `fsck` sees a complete record).
            let body = off + (HEADER_LEN as u64) + h.payload_len as u64;
            let short = off + len > to && salvage && h.rtype == RecordType::Data && body <= to;
            let torn = || format!("record of {len} bytes runs past the write pointer at {to}");
            if off + len > to && !short {
                break (off, off + len, torn());
            }
            let rec = scan.get(&mut self.dev, off, if short { to - off } else { len } as usize, "reading")?;
            let payload = &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
            if short && check_payload(&h, payload).is_err() {
                break (off, off + len, torn());
            }
            let mut damaged = None;
            if let Err(e) = check_payload(&h, payload) {
                let what = format!("{:?} record below the write pointer ({to}): {e}", h.rtype);
                if !(salvage && h.rtype == RecordType::Data && prefix_confirmed(rec, &h)) {
                    return Ok((out, off, Tail::Corrupt { offset: off, what }));
                }
                damaged = Some(what);
            }
            let keep = if h.rtype == RecordType::Data {
                payload.len().min(format::DATA_PREFIX)
            } else {
                payload.len()
            };
            out.push(Parsed { h, damaged, off, payload: payload[..keep].to_vec() });
            off += len;
        };
        let mut at = probe_from;
        while at < to {
            let hb = scan.get(&mut self.dev, at, BLOCK as usize, "reading")?;
            if let Ok(h) = decode_header(hb) {
                let len = h.record_len();
                if at + len <= to {
                    let rec = scan.get(&mut self.dev, at, len as usize, "reading")?;
                    if check_payload(&h, &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize]).is_ok() {
                        return Ok((
                            out,
                            stop,
                            Tail::Corrupt {
                                offset: stop,
                                what: format!("{what}, yet a valid record follows at byte {at}"),
                            },
                        ));
                    }
                }
            }
            at += BLOCK;
        }
        Ok((out, stop, Tail::Clean))
    }
}

/// The checkpoints found in a metazone's records.
pub(super) struct Checkpoints {
    /// The metazone's first checkpoint (records 1.., written in one go) is complete.
    first_complete: bool,
    /// The last complete checkpoint: index of its CkptStart in the records, its body, and the
    /// byte offset of its first piece. Recovery can start from the metazone when there is one.
    last: Option<(usize, Vec<u8>, u64)>,
    /// The number of the last complete checkpoint, and the index of its CkptStart.
    last_number: Option<(u32, usize)>,
}

/// Finds the complete checkpoints of metazone generation `gen` in `recs`: a CkptStart, then
/// CkptBody pieces (journal records may come between them), then a CkptEnd naming the same
/// checkpoint whose piece count, body length and body CRC match the pieces.
pub(super) fn find_checkpoints(recs: &[Parsed], gen: u64) -> Checkpoints {
    let mut out = Checkpoints { first_complete: false, last: None, last_number: None };
    let mut cur: Option<(u32, usize, Vec<usize>)> = None;
    if recs.first().map(|r| r.h.rtype) != Some(RecordType::MetaHeader) {
        return out;
    }
    for (i, r) in recs.iter().enumerate().skip(1) {
        match r.h.rtype {
            RecordType::CkptStart => {
                cur = (r.payload.len() == 12 && format::u64_at(&r.payload, 0) == gen)
                    .then(|| (format::u32_at(&r.payload, 8), i, Vec::new()));
            }
            RecordType::CkptBody => {
                if let Some(c) = cur.as_mut() {
                    c.2.push(i);
                }
            }
            RecordType::CkptEnd => {
                let Some((sub, start, pieces)) = cur.take() else { continue };
                let body: Vec<u8> = pieces.iter().flat_map(|&k| recs[k].payload.iter().copied()).collect();
                let want = format::ckpt_end_payload(gen, sub, pieces.len() as u32, &body);
                if r.payload == want && !pieces.is_empty() {
                    if start == 1 && sub == 0 {
                        out.first_complete = true;
                    }
                    // A later checkpoint is usable even when the first does not verify: only
                    // damage (never a crash, which leaves nothing after a torn first
                    // checkpoint) makes the first incomplete with records after it.
                    out.last = Some((start, body, recs[pieces[0]].off));
                    out.last_number = Some((sub, start));
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether the prefix of data record `rec` (valid header `h`, payload failing its CRC) can be
/// trusted: it decodes, agrees with the header's payload length, and names the same chunk and
/// chunk offset as the footer of one of its slices (whatever that slice's CRC), so a flipped
/// prefix is not taken for another chunk's data.
pub(super) fn prefix_confirmed(rec: &[u8], h: &Header) -> bool {
    let payload = &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
    let Ok(pre) = decode_data_prefix(payload, payload.len()) else { return false };
    let n = pre.len as usize;
    (0..n.div_ceil(SLICE)).any(|i| {
        let sl = (n - i * SLICE).min(SLICE);
        let f = DATA_SLICES_AT + i * SLICE_STRIDE + sl;
        rec[f..f + 24] == pre.chunk.0
            && format::u32_at(rec, f + 24) == (pre.offset + (i * SLICE) as u64) as u32
    })
}

/// What [`Store::find_checkpoint`] chose: the metazone (generation `gen`, number `m`, its
/// records) holding the checkpoint to load, the newer metazones whose journals follow
/// (ascending), and what recovery had to step over (empty when the newest checkpoint is used).
struct Found {
    gen: u64,
    m: u32,
    recs: Vec<Parsed>,
    ck: Checkpoints,
    newer: Vec<Newer>,
    notes: Vec<String>,
    /// An older checkpoint than the newest is loaded because of damage.
    fell_back: bool,
}

/// Whether `notes` name damage stepped over in metazone `z`.
fn self_damaged(notes: &[String], z: u64) -> bool {
    notes.iter().any(|n| n.starts_with(&format!("metazone {z} ")))
}

/// Bytes `.0 .. .1` of a metazone that are not valid records, and why (the first failure).
type Gap = (u64, u64, String);

/// Where recovery's closing checkpoint goes.
enum RecoveryPoint<'a> {
    /// Into the metazone after `m` (generation `gen`, the one loaded), as always.
    Next { gen: u64, m: u32 },
    /// After a fallback whose newer metazones hold journal records: `gen` is the newest
    /// generation, `needed` the metazones recovery read from.
    After { gen: u64, newest: &'a Newer, needed: Vec<u32> },
}

/// A metazone newer than the one recovery loads its checkpoint from: its first checkpoint
/// torn by a crash, or damaged where only checkpoint records were.
struct Newer {
    gen: u64,
    m: u32,
    recs: Vec<Parsed>,
    /// Its valid records (and the ranges stepped over) reach its write pointer: no torn tail.
    clean_end: bool,
}

impl Newer {
    /// Whether it holds journal records (a torn first checkpoint leaves none).
    fn journaled(&self) -> bool {
        self.recs.iter().skip(1).any(|r| !is_ckpt(r.h.rtype))
    }
}

fn is_ckpt(t: RecordType) -> bool {
    matches!(t, RecordType::CkptStart | RecordType::CkptBody | RecordType::CkptEnd)
}

/// `(generation, number)` of a CkptStart or CkptEnd record.
fn ckpt_id(r: &Parsed) -> Option<(u64, u32)> {
    (matches!(r.h.rtype, RecordType::CkptStart | RecordType::CkptEnd) && r.payload.len() >= 12)
        .then(|| (format::u64_at(&r.payload, 0), format::u32_at(&r.payload, 8)))
}

fn end_of(r: &Parsed) -> u64 {
    r.off + r.h.record_len()
}

/// Checks that every byte range of a metazone (generation `gen`, write pointer `w`) that does
/// not verify can only have held checkpoint records, never a journal record, so that stepping
/// over it loses nothing the journal said: recovery then loads an older complete checkpoint
/// and replays the journal from there. Each rule pins the range down by the records around
/// it:
///
/// - inside the metazone's first checkpoint (written in one go right after the header, no
///   journal record among its records): the bytes from the header to the end of that
///   checkpoint add up to its start, body and end records exactly;
/// - inside a periodic checkpoint whose start and end verify: exactly one body piece is
///   missing, and the ranges inside add up to that piece's record;
/// - a lost start: one block, after which come body pieces with no start before them since
///   the previous checkpoint's end (which verifies), and no other range in between;
/// - a lost end: one block right after the last piece of a periodic checkpoint (a piece shorter
///   than its other pieces, which are of one size), with no piece of it after.
///
/// Returns the first range that is none of these (its start and why it does not verify).
fn explain_gaps(recs: &[Parsed], gaps: &[Gap], gen: u64, w: u64) -> std::result::Result<(), (u64, String)> {
    for &(a, b, ref what) in gaps {
        let ok = in_first_checkpoint(recs, gen, w, a, b)
            || in_periodic_checkpoint(recs, gaps, gen, a, b)
            || lost_ckpt_start(recs, gaps, gen, a, b)
            || lost_ckpt_end(recs, gen, a, b);
        if !ok {
            return Err((a, what.clone()));
        }
    }
    Ok(())
}

fn in_first_checkpoint(recs: &[Parsed], gen: u64, w: u64, a: u64, b: u64) -> bool {
    if recs.first().is_none_or(|r| r.h.rtype != RecordType::MetaHeader || r.off != 0) || a < BLOCK {
        return false;
    }
    let end_rec = recs.iter().find(|r| r.h.rtype == RecordType::CkptEnd && ckpt_id(r) == Some((gen, 0)));
    let span_end = match end_rec {
        Some(r) => end_of(r),
        None => recs
            .iter()
            .skip(1)
            .find(|r| !(r.h.rtype == RecordType::CkptBody || ckpt_id(r) == Some((gen, 0))))
            .map_or(w, |r| r.off),
    };
    if b > span_end {
        return false;
    }
    let inside: Vec<&Parsed> = recs.iter().filter(|r| r.off >= BLOCK && r.off < span_end).collect();
    if inside.iter().any(|r| !(r.h.rtype == RecordType::CkptBody || ckpt_id(r) == Some((gen, 0))))
        || inside.iter().filter(|r| r.h.rtype == RecordType::CkptBody).count() > 1
    {
        return false;
    }
    let body = match (end_rec, inside.iter().find(|r| r.h.rtype == RecordType::CkptBody)) {
        (Some(e), _) if e.payload.len() >= 24 => format::u64_at(&e.payload, 16),
        (_, Some(p)) => p.h.payload_len as u64,
        _ => return false,
    };
    let Ok(body) = usize::try_from(body) else { return false };
    span_end - BLOCK == format::record_len(12) + format::record_len(body) + format::record_len(28)
}

fn in_periodic_checkpoint(recs: &[Parsed], gaps: &[Gap], gen: u64, a: u64, b: u64) -> bool {
    let Some(si) = recs.iter().rposition(|r| r.h.rtype == RecordType::CkptStart && r.off < a) else {
        return false;
    };
    let Some(id) = ckpt_id(&recs[si]).filter(|id| id.0 == gen) else { return false };
    let Some(ei) = recs[si + 1..].iter().position(|r| r.h.rtype == RecordType::CkptEnd).map(|i| si + 1 + i)
    else {
        return false;
    };
    let end = &recs[ei];
    if ckpt_id(end) != Some(id) || end_of(end) < b || end.payload.len() < 24 {
        return false;
    }
    let span = (recs[si].off, end_of(end));
    let pieces: Vec<&Parsed> =
        recs[si + 1..ei].iter().filter(|r| r.h.rtype == RecordType::CkptBody).collect();
    let (want_pieces, want_bytes) =
        (format::u32_at(&end.payload, 12) as usize, format::u64_at(&end.payload, 16));
    let have: u64 = pieces.iter().map(|p| p.h.payload_len as u64).sum();
    let lost: u64 = gaps.iter().filter(|g| g.0 >= span.0 && g.1 <= span.1).map(|g| g.1 - g.0).sum();
    let Ok(missing) = usize::try_from(want_bytes.saturating_sub(have)) else { return false };
    want_pieces == pieces.len() + 1 && want_bytes >= have && lost == format::record_len(missing)
}

fn lost_ckpt_start(recs: &[Parsed], gaps: &[Gap], gen: u64, a: u64, b: u64) -> bool {
    if b - a != format::record_len(12) {
        return false;
    }
    // The boundary before: the previous checkpoint's end, which verifies.
    let Some(prev) = recs
        .iter()
        .rev()
        .find(|r| r.off < a && matches!(r.h.rtype, RecordType::CkptStart | RecordType::CkptEnd))
    else {
        return false;
    };
    if prev.h.rtype != RecordType::CkptEnd || ckpt_id(prev).is_none_or(|id| id.0 != gen) {
        return false;
    }
    // After: body pieces before any start or end, so their start is missing; this range is
    // the only one between the previous end and the first of them.
    let Some(first) = recs.iter().find(|r| r.off >= b && is_ckpt(r.h.rtype)) else { return false };
    first.h.rtype == RecordType::CkptBody
        && gaps.iter().filter(|g| g.0 >= end_of(prev) && g.1 <= first.off).count() == 1
}

fn lost_ckpt_end(recs: &[Parsed], gen: u64, a: u64, b: u64) -> bool {
    if b - a != format::record_len(28) {
        return false;
    }
    let Some(last) = recs.iter().rev().find(|r| r.off < a) else { return false };
    if last.h.rtype != RecordType::CkptBody || end_of(last) != a {
        return false;
    }
    let Some(si) = recs
        .iter()
        .rposition(|r| r.off < a && matches!(r.h.rtype, RecordType::CkptStart | RecordType::CkptEnd))
    else {
        return false;
    };
    if recs[si].h.rtype != RecordType::CkptStart || ckpt_id(&recs[si]).is_none_or(|id| id.0 != gen) {
        return false;
    }
    let pieces: Vec<u32> = recs[si + 1..]
        .iter()
        .filter(|r| r.off < a && r.h.rtype == RecordType::CkptBody)
        .map(|r| r.h.payload_len)
        .collect();
    let (last_len, others) = pieces.split_last().expect("the piece before the range");
    let after = recs.iter().find(|r| r.off >= b && is_ckpt(r.h.rtype));
    !others.is_empty()
        && others.iter().all(|&l| l == others[0])
        && *last_len < others[0]
        && after.is_none_or(|r| r.h.rtype != RecordType::CkptBody)
}
