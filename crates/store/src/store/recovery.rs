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
        let (gen, m, recs, ck) = self.find_checkpoint()?;
        let z = self.meta_zone(m);
        let start = self.load_checkpoint(gen, z, ck, rep)?;
        rep.checkpoint_load = lap(&mut t);
        let last_seq = self.replay_journal(gen, m, &recs, start, rep)?;
        rep.journal_replay = lap(&mut t);
        let found = self.scan_datazones(rep)?;
        rep.datazone_scan = lap(&mut t);
        self.index_records(found, last_seq);
        self.rebuild_pools()?;
        self.write_recovery_point(m)?;
        rep.index_build = lap(&mut t);
        Ok(())
    }

    /// Steps 2–3: the newest metazone with a complete checkpoint, found through the metazone
    /// headers (generation, metazone, its records, the checkpoints in them). A torn newer
    /// checkpoint falls back to the previous metazone; damage is an error.
    fn find_checkpoint(&mut self) -> Result<(u64, u32, Vec<Parsed>, Checkpoints)> {
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
        let mut chosen = None;
        for &(gen, m) in &cands {
            let z = self.meta_zone(m);
            let w = self.wp_bytes(z)?;
            let (recs, _, tail) = self.parse_zone(z, 0, w, false)?;
            let ck = find_checkpoints(&recs, gen);
            if let Tail::Corrupt { offset, what } = tail {
                let structure = if ck.first_complete { "journal" } else { "checkpoint" };
                return Err(StoreError::CorruptMeta { structure, zone: z, offset, what });
            }
            if ck.first_complete {
                chosen = Some((gen, m, recs, ck));
                break;
            }
            // A checkpoint torn by a crash: the previous metazone is still the recovery point.
        }
        chosen.ok_or_else(|| StoreError::CorruptMeta {
            structure: "checkpoint",
            zone: self.meta_zone(0),
            offset: 0,
            what: "no complete checkpoint in any metazone".into(),
        })
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
        let (start, body, body_off) = ck.last.expect("the first checkpoint is complete");
        self.decode_tables(&body, z, body_off)?;
        rep.checkpoint_bytes = body.len() as u64;
        rep.checkpoint_generation = gen;
        Ok(start)
    }

    /// Step 4, second half: replays every journal record after the loaded checkpoint's start
    /// (also those written while its pieces were, which its snapshot does not hold), and makes
    /// metazone `m` the current one. Returns the highest sequence number seen.
    fn replay_journal(
        &mut self,
        gen: u64,
        m: u32,
        recs: &[Parsed],
        start: usize,
        rep: &mut RecoveryReport,
    ) -> Result<u64> {
        let z = self.meta_zone(m);
        let mut last_seq = recs[start].h.seq;
        for r in &recs[start + 1..] {
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
                    self.zones[d] = DZone::free(r.h.seq);
                }
                t => return Err(bad(format!("{t:?} record in the journal"))),
            }
        }
        self.meta = m;
        self.meta_gen = gen;
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
    /// one may end in a torn record). Read-only: the loaded metazone `m` stays the current
    /// one, written up to its write pointer.
    fn write_recovery_point(&mut self, m: u32) -> Result<()> {
        if self.read_only {
            self.meta_wp = self.wp_bytes(self.meta_zone(m))? / BLOCK * BLOCK;
        } else {
            self.write_checkpoint()?;
        }
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
    /// byte offset of its first piece.
    last: Option<(usize, Vec<u8>, u64)>,
}

/// Finds the complete checkpoints of metazone generation `gen` in `recs`: a CkptStart, then
/// CkptBody pieces (journal records may come between them), then a CkptEnd naming the same
/// checkpoint whose piece count, body length and body CRC match the pieces.
pub(super) fn find_checkpoints(recs: &[Parsed], gen: u64) -> Checkpoints {
    let mut out = Checkpoints { first_complete: false, last: None };
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
                    if out.first_complete {
                        out.last = Some((start, body, recs[pieces[0]].off));
                    }
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
