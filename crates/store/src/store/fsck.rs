//! `Store::fsck`: reads every written block of the store and checks it, and the index, against
//! each other. Read-only: it never writes, resets or finishes a zone.

use super::{opt_id_string, record_spans, Store, ZoneScan, ZoneState};
use crate::format::{
    check_payload, check_slice, decode_data_prefix, decode_header, RecordType, BLOCK, DATA_SLICES_AT,
    FOOTER_LEN, HEADER_LEN, SLICE, SLICE_STRIDE,
};
use crate::{ChunkId, Result, StoreError};
use serde::ser::{Serialize, SerializeStruct, Serializer};
use shingled_zoned::{MetaDamage, ZoneCond, ZonedDevice, SECTOR_SIZE};
use std::collections::BTreeMap;

/// One thing [`Store::fsck`] found wrong. Serialized with the chunk id as hex (or null).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FsckProblem {
    /// Device zone number.
    pub zone: u64,
    /// Byte offset in the zone (of the record, or of the slice when a slice failed).
    pub offset: u64,
    /// The chunk concerned, when known.
    #[serde(serialize_with = "opt_id_string")]
    pub chunk: Option<ChunkId>,
    /// Chunk offset concerned (of the failing slice or record), when known.
    pub chunk_offset: Option<u64>,
    /// What is wrong.
    pub what: String,
}

/// The result of [`Store::fsck`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsckReport {
    /// Metazones and datazones whose written part was read.
    pub zones_checked: u64,
    /// Valid records read (every header, payload CRC and slice footer verified).
    pub records_checked: u64,
    /// Device bytes read.
    pub bytes_checked: u64,
    /// Chunks whose index was checked against the records on the device.
    pub chunks_checked: u64,
    /// Invalid records at the very end of a zone, holding nothing indexed: the remains of a
    /// write torn by a crash, never acknowledged (not a problem).
    pub torn_tails: u64,
    /// Everything wrong, in zone order then index order.
    pub problems: Vec<FsckProblem>,
    /// Bad copies of the device's own duplicated metadata (an emulated device file's header
    /// backup or zone-table copies) that it found when it opened and did not use. Those a
    /// crash can leave (`after_crash`) are warnings; the others are problems.
    pub device: Vec<MetaDamage>,
}

impl FsckReport {
    /// Whether no problem was found (device metadata warnings a crash can explain aside).
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.device.iter().all(|d| d.after_crash)
    }

    /// Problems, counting the device metadata damage a crash cannot explain.
    pub fn problem_count(&self) -> usize {
        self.problems.len() + self.device.iter().filter(|d| !d.after_crash).count()
    }
}

/// The report as `shingled store fsck --output json` and Python's `fsck()` give it: its fields,
/// `clean` ([`FsckReport::is_clean`]) first, and `device` as `device_metadata`.
impl Serialize for FsckReport {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("FsckReport", 8)?;
        m.serialize_field("clean", &self.is_clean())?;
        m.serialize_field("zones_checked", &self.zones_checked)?;
        m.serialize_field("records_checked", &self.records_checked)?;
        m.serialize_field("bytes_checked", &self.bytes_checked)?;
        m.serialize_field("chunks_checked", &self.chunks_checked)?;
        m.serialize_field("torn_tails", &self.torn_tails)?;
        m.serialize_field("problems", &self.problems)?;
        m.serialize_field("device_metadata", &self.device)?;
        m.end()
    }
}

/// A valid data record found on the device.
#[derive(Clone, Copy, Debug)]
struct Found {
    seq: u64,
    chunk: ChunkId,
    offset: u64,
    len: u64,
}

/// What a zone walk found at one block-aligned offset.
enum Spot {
    Data(Found),
    Other(RecordType),
    /// An invalid record (or a slice that fails), `len` bytes long as far as known.
    Bad {
        len: u64,
        chunk: Option<ChunkId>,
        problems: Vec<FsckProblem>,
        /// The record lies wholly below the exact write pointer of a zone that is not FULL:
        /// it was written completely, so a crash cannot explain it (a torn write leaves the
        /// write pointer inside the record it tore).
        complete: bool,
    },
}

impl<D: ZonedDevice> Store<D> {
    /// Checks the whole store without changing the device: reads every record in the written
    /// part of every metazone and datazone, verifies headers, payload CRCs and every slice's
    /// footer (chunk id, chunk offset, CRC), then checks the in-memory index against what was
    /// read: every indexed record exists, is valid and belongs to its chunk at that offset,
    /// the records of a chunk add up to its length, no valid record that continues a chunk is
    /// missing from the index, and no indexed record lies in a free or garbage zone.
    ///
    /// Invalid records at the very end of a zone that hold nothing indexed are counted as torn
    /// tails (a crash's leftovers), not problems; an invalid record followed by a valid one is
    /// a problem. Errors only when the device fails.
    pub fn fsck(&mut self) -> Result<FsckReport> {
        self.check_usable()?;
        let mut rep = FsckReport { device: self.dev.metadata_damage(), ..FsckReport::default() };
        self.fsck_superzone(&mut rep)?;
        // Metazones.
        for m in 0..self.cfg.nr_metazones {
            let z = self.meta_zone(m);
            let end = if m == self.meta { self.meta_wp } else { self.fsck_end(z)? };
            if end == 0 {
                continue;
            }
            rep.zones_checked += 1;
            let exact = self.exact_wp(z)?;
            let spots = self.fsck_walk(z, end, end, exact, &mut rep)?;
            self.fsck_tail_rule(z, &spots, &BTreeMap::new(), &mut rep);
            if m == self.meta {
                let types: Vec<Option<RecordType>> = spots
                    .iter()
                    .take(4)
                    .map(|(_, _, s)| match s {
                        Spot::Other(t) => Some(*t),
                        _ => None,
                    })
                    .collect();
                let want = [
                    RecordType::MetaHeader,
                    RecordType::CkptStart,
                    RecordType::CkptBody,
                    RecordType::CkptEnd,
                ];
                if types != want.map(Some) {
                    rep.problems.push(FsckProblem {
                        zone: z,
                        offset: 0,
                        chunk: None,
                        chunk_offset: None,
                        what: "current metazone does not start with a complete checkpoint".into(),
                    });
                }
            }
        }
        // Datazones: every record, keyed by (datazone, block).
        let mut on_disk: BTreeMap<(u32, u32), Found> = BTreeMap::new();
        let mut bad_at: BTreeMap<(u32, u32), String> = BTreeMap::new();
        for d in 0..self.zones.len() {
            let z = self.zone_no(d);
            let end = self.fsck_end(z)?.max(self.zones[d].written).min(self.cap_bytes(z));
            // Read-only open: a zone whose journaled reset a crash interrupted holds old records
            // that `open` would have reset away; nothing of the store is there.
            let end = if self.unreset.contains(&d) { 0 } else { end };
            if end == 0 {
                continue;
            }
            rep.zones_checked += 1;
            let wp = self.fsck_wp(z)?.max(end);
            let exact = self.exact_wp(z)?;
            let spots = self.fsck_walk(z, end, wp, exact, &mut rep)?;
            let mut indexed = BTreeMap::new();
            for c in self.chunks.values() {
                for (zone, block, _, _) in record_spans(c) {
                    if zone as usize == d {
                        indexed.insert(block as u64 * BLOCK, ());
                    }
                }
            }
            self.fsck_tail_rule(z, &spots, &indexed, &mut rep);
            for (off, _, s) in spots {
                let key = (d as u32, (off / BLOCK) as u32);
                match s {
                    Spot::Data(f) => {
                        on_disk.insert(key, f);
                    }
                    Spot::Other(_) => {
                        rep.problems.push(FsckProblem {
                            zone: z,
                            offset: off,
                            chunk: None,
                            chunk_offset: None,
                            what: "a record other than data in a datazone".into(),
                        });
                    }
                    Spot::Bad { problems, .. } => {
                        let what = problems.first().map_or("block of zeros".to_string(), |p| p.what.clone());
                        bad_at.insert(key, what);
                    }
                }
            }
        }
        // The index against the device.
        let mut indexed_keys = BTreeMap::new();
        for (id, c) in &self.chunks {
            rep.chunks_checked += 1;
            let mut expect = 0u64;
            for (zone, block, rs, re) in record_spans(c) {
                let z = self.zone_no(zone as usize);
                let off = block as u64 * BLOCK;
                indexed_keys.insert((zone, block), ());
                let mut problem = |what: String| {
                    rep.problems.push(FsckProblem {
                        zone: z,
                        offset: off,
                        chunk: Some(*id),
                        chunk_offset: Some(rs),
                        what,
                    })
                };
                if rs != expect {
                    problem(format!("index has a gap or overlap: record at {rs}, expected {expect}"));
                }
                expect = re;
                if matches!(self.zones[zone as usize].state, ZoneState::Free | ZoneState::Garbage) {
                    problem(format!("indexed record in a {:?} zone", self.zones[zone as usize].state));
                }
                match on_disk.get(&(zone, block)) {
                    Some(f) if f.chunk == *id && f.offset == rs && f.len == re - rs => {}
                    Some(f) => problem(format!(
                        "indexed as {} bytes of {id} at {rs}, the device holds {} bytes of {} at {}",
                        re - rs,
                        f.len,
                        f.chunk,
                        f.offset
                    )),
                    None => match bad_at.get(&(zone, block)) {
                        Some(what) => problem(format!("indexed record is invalid: {what}")),
                        None => problem("indexed record not found on the device".into()),
                    },
                }
            }
            if expect != c.len {
                rep.problems.push(FsckProblem {
                    zone: 0,
                    offset: 0,
                    chunk: Some(*id),
                    chunk_offset: Some(expect),
                    what: format!("records add up to {expect} bytes, the chunk is {} long", c.len),
                });
            }
        }
        for (&(zone, block), f) in &on_disk {
            if indexed_keys.contains_key(&(zone, block)) {
                continue;
            }
            if let Some(c) = self.chunks.get(&f.chunk) {
                if f.seq > c.create_seq && f.offset == c.len && f.len > 0 {
                    rep.problems.push(FsckProblem {
                        zone: self.zone_no(zone as usize),
                        offset: block as u64 * BLOCK,
                        chunk: Some(f.chunk),
                        chunk_offset: Some(f.offset),
                        what: "valid record continuing its chunk is missing from the index".into(),
                    });
                }
            }
        }
        // Live bytes per zone.
        let mut live = vec![0u64; self.zones.len()];
        for c in self.chunks.values() {
            for (zone, _, rs, re) in record_spans(c) {
                live[zone as usize] += re - rs;
            }
        }
        for (d, l) in live.iter().enumerate() {
            if *l != self.zones[d].live {
                rep.problems.push(FsckProblem {
                    zone: self.zone_no(d),
                    offset: 0,
                    chunk: None,
                    chunk_offset: None,
                    what: format!("zone table says {} live bytes, the index {l}", self.zones[d].live),
                });
            }
        }
        rep.problems.sort_by_key(|p| (p.zone, p.offset));
        Ok(rep)
    }

    /// Bytes below zone `z`'s write pointer (its capacity when the device reports none).
    fn fsck_end(&self, z: u64) -> Result<u64> {
        let r = self.dev.report_zone(z).map_err(StoreError::dev(format!("reporting zone {z}")))?;
        Ok((r.written() * SECTOR_SIZE).min(self.cap_bytes(z)) / BLOCK * BLOCK)
    }

    /// Zone `z`'s write pointer in bytes, not rounded to blocks (at most its capacity).
    fn fsck_wp(&self, z: u64) -> Result<u64> {
        let r = self.dev.report_zone(z).map_err(StoreError::dev(format!("reporting zone {z}")))?;
        Ok((r.written() * SECTOR_SIZE).min(self.cap_bytes(z)))
    }

    /// Zone `z`'s write pointer in bytes when the device still knows where the last write
    /// ended: not for a FULL zone (finished, or filled to capacity), whose write pointer says
    /// nothing about where its data ends.
    fn exact_wp(&self, z: u64) -> Result<Option<u64>> {
        let r = self.dev.report_zone(z).map_err(StoreError::dev(format!("reporting zone {z}")))?;
        Ok((r.cond != ZoneCond::Full).then(|| r.written() * SECTOR_SIZE))
    }

    /// Reads zone `z` in `[0, end)` record by record: (offset, bytes, what is there). After an
    /// invalid header, resynchronizes at the next block holding a valid header; an all-zero
    /// block ends the walk when everything after it is zero too. A data record whose header
    /// and payload end at or below `wp` (the exact write pointer, `>= end`) while its padding
    /// runs past `end` is read up to `wp` and checked like the others (recovery indexes such a
    /// record, see `parse_zone`).
    fn fsck_walk(
        &mut self,
        z: u64,
        end: u64,
        wp: u64,
        exact_wp: Option<u64>,
        rep: &mut FsckReport,
    ) -> Result<Vec<(u64, u64, Spot)>> {
        let below_wp = |off: u64, len: u64| exact_wp.is_some_and(|w| off + len <= w);
        let zs = self.info.zone_start(z);
        let mut out = Vec::new();
        let mut off = 0;
        let mut scan = ZoneScan::new(z, zs, end, self.cfg.scan_buffer_bytes);
        let mut in_bad = false;
        // Header CRC the next data record must link to (None after an unreadable header).
        let mut link = Some(0u32);
        while off < end {
            let hb = scan.get(&mut self.dev, off, BLOCK as usize, "checking")?;
            rep.bytes_checked += BLOCK;
            let h = match decode_header(hb) {
                Ok(h) if off + h.record_len() <= end => h,
                Ok(h)
                    if h.rtype == RecordType::Data
                        && off + (HEADER_LEN as u64) + h.payload_len as u64 <= wp =>
                {
                    h
                }
                Ok(h) => {
                    link = None;
                    let what = format!("record of {} bytes runs past the written end {end}", h.record_len());
                    out.push((off, BLOCK, bad(z, off, what, false)));
                    in_bad = true;
                    off += BLOCK;
                    continue;
                }
                Err(e) => {
                    link = None;
                    if hb.iter().all(|&b| b == 0) {
                        let spot =
                            Spot::Bad { len: BLOCK, chunk: None, problems: Vec::new(), complete: false };
                        out.push((off, BLOCK, spot));
                    } else if !in_bad {
                        let what = format!("invalid record header: {e}");
                        out.push((off, BLOCK, bad(z, off, what, below_wp(off, BLOCK))));
                    }
                    in_bad = true;
                    off += BLOCK;
                    continue;
                }
            };
            in_bad = false;
            if h.rtype == RecordType::Data {
                if link.is_some_and(|l| l != h.link) {
                    rep.problems.push(FsckProblem {
                        zone: z,
                        offset: off,
                        chunk: None,
                        chunk_offset: None,
                        what: format!(
                            "data record does not link to the zone's previous record ({:#010x})",
                            h.link
                        ),
                    });
                }
                link = Some(h.hcrc);
            }
            let len = h.record_len();
            let rec = scan.get(&mut self.dev, off, len.min(wp.max(end) - off) as usize, "checking")?;
            rep.bytes_checked += len - BLOCK;
            let payload = &rec[HEADER_LEN..HEADER_LEN + h.payload_len as usize];
            let crc = check_payload(&h, payload);
            if h.rtype != RecordType::Data {
                match crc {
                    Ok(()) => {
                        rep.records_checked += 1;
                        out.push((off, len, Spot::Other(h.rtype)));
                    }
                    Err(e) => {
                        let what = format!("{:?} record: {e}", h.rtype);
                        out.push((off, len, bad(z, off, what, below_wp(off, len))))
                    }
                }
                off += len;
                continue;
            }
            let pre = match decode_data_prefix(payload, payload.len()) {
                Ok(p) => p,
                Err(e) => {
                    out.push((off, len, bad(z, off, e, below_wp(off, len))));
                    off += len;
                    continue;
                }
            };
            // Each slice on its own, so a problem names the chunk offset that fails.
            let mut problems = Vec::new();
            let n = pre.len as usize;
            for i in 0..n.div_ceil(SLICE) {
                let sl = (n - i * SLICE).min(SLICE);
                let at = DATA_SLICES_AT + i * SLICE_STRIDE;
                let soff = pre.offset + (i * SLICE) as u64;
                if let Err(e) = check_slice(&rec[at..at + sl + FOOTER_LEN], &pre.chunk, soff) {
                    problems.push(FsckProblem {
                        zone: z,
                        offset: off + at as u64,
                        chunk: Some(pre.chunk),
                        chunk_offset: Some(soff),
                        what: format!("slice: {e}"),
                    });
                }
            }
            if let Err(e) = crc {
                if problems.is_empty() {
                    problems.push(FsckProblem {
                        zone: z,
                        offset: off,
                        chunk: Some(pre.chunk),
                        chunk_offset: Some(pre.offset),
                        what: format!("data record: {e}"),
                    });
                }
            }
            if problems.is_empty() {
                rep.records_checked += 1;
                out.push((
                    off,
                    len,
                    Spot::Data(Found { seq: h.seq, chunk: pre.chunk, offset: pre.offset, len: n as u64 }),
                ));
            } else {
                let complete = below_wp(off, len);
                out.push((off, len, Spot::Bad { len, chunk: Some(pre.chunk), problems, complete }));
            }
            off += len;
        }
        Ok(out)
    }

    /// Both copies of the superzone record: open uses the first valid one, so a damaged copy
    /// would go unnoticed; it is a problem. A second block of zeros is a store formatted before
    /// the second copy existed, not a problem.
    fn fsck_superzone(&mut self, rep: &mut FsckReport) -> Result<()> {
        let z = self.super_zone;
        let mut b = vec![0u8; 2 * BLOCK as usize];
        self.dev.read(self.info.zone_start(z), &mut b).map_err(StoreError::dev("reading the superzone"))?;
        for (k, copy) in b.chunks(BLOCK as usize).enumerate() {
            if k == 1 && copy.iter().all(|&x| x == 0) {
                continue;
            }
            if let Err(e) = super::super_copy(copy, z) {
                rep.problems.push(FsckProblem {
                    zone: z,
                    offset: k as u64 * BLOCK,
                    chunk: None,
                    chunk_offset: None,
                    what: format!("superzone record copy {k} is damaged ({e}); the other copy is in use"),
                });
            }
        }
        Ok(())
    }

    /// Reports the bad spots of a walk that are damage: any followed by a valid record, any
    /// holding an indexed record, and any written completely below the write pointer of a
    /// zone that is not FULL (a torn write leaves the write pointer inside the record it
    /// tore). The others are a torn tail (or the zeros after the data).
    fn fsck_tail_rule(
        &self,
        z: u64,
        spots: &[(u64, u64, Spot)],
        indexed: &BTreeMap<u64, ()>,
        rep: &mut FsckReport,
    ) {
        let last_valid = spots.iter().rposition(|s| !matches!(s.2, Spot::Bad { .. }));
        let mut torn = false;
        for (i, (off, _, s)) in spots.iter().enumerate() {
            let Spot::Bad { len, problems, chunk, complete } = s else { continue };
            let before_valid = last_valid.is_some_and(|l| i < l);
            let holds_indexed = indexed.range(*off..off + len).next().is_some();
            if *complete && !(before_valid || holds_indexed) {
                rep.problems.extend(problems.iter().map(|p| FsckProblem {
                    what: format!(
                        "{} (the record lies wholly below the write pointer: written completely, then \
                         damaged; not a torn write)",
                        p.what
                    ),
                    ..p.clone()
                }));
            } else if (before_valid || holds_indexed) && problems.is_empty() {
                rep.problems.push(FsckProblem {
                    zone: z,
                    offset: *off,
                    chunk: None,
                    chunk_offset: None,
                    what: "block of zeros before a valid record".into(),
                });
            } else if before_valid || holds_indexed {
                rep.problems.extend(problems.iter().cloned());
            } else if !problems.is_empty() || chunk.is_some() {
                torn = true;
            }
        }
        if torn {
            rep.torn_tails += 1;
        }
    }
}

fn bad(z: u64, off: u64, what: String, complete: bool) -> Spot {
    Spot::Bad {
        len: BLOCK,
        chunk: None,
        problems: vec![FsckProblem { zone: z, offset: off, chunk: None, chunk_offset: None, what }],
        complete,
    }
}
