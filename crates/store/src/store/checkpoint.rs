//! Journal and checkpoints in the metazones: journal records, full and incremental
//! (piecewise) checkpoints, and the checkpoint table's encoding.

use super::{record_spans, Chunk, DZone, IncCkpt, IndexGroup, RecordIndex, Store, ZoneState, MAX_CHUNK_LEN};
use crate::format::{self, data_fits, encode_record, Reader, RecordType, BLOCK};
use crate::{Result, StoreError, StreamType};
use shingled_zoned::{ZoneOp, ZonedDevice, SECTOR_SIZE};
use std::collections::BTreeMap;

impl<D: ZonedDevice> Store<D> {
    /// Writes a journal record into the current metazone and flushes; returns its sequence
    /// number. A full metazone is first replaced by a checkpoint in the next one.
    pub(super) fn journal(&mut self, rtype: RecordType, payload: &[u8]) -> Result<u64> {
        let seq = self.meta_append(rtype, payload)?;
        self.stats.journal_records += 1;
        self.since_ckpt += format::record_len(payload.len());
        self.flush()?;
        Ok(seq)
    }

    /// Appends a record to the current metazone (not flushed); returns its sequence number.
    /// A full metazone is first replaced by a (blocking) checkpoint in the next one.
    pub(super) fn meta_append(&mut self, rtype: RecordType, payload: &[u8]) -> Result<u64> {
        let len = format::record_len(payload.len());
        if self.meta_wp + len > self.cap_bytes(self.meta_zone(self.meta)) {
            self.write_checkpoint()?;
            if rtype == RecordType::CkptBody || rtype == RecordType::CkptEnd {
                // The checkpoint just written supersedes the periodic one in progress.
                return Ok(0);
            }
        }
        let seq = self.next_seq();
        let rec = encode_record(rtype, seq, payload);
        let z = self.meta_zone(self.meta);
        self.dev.write(self.info.zone_start(z) + self.meta_wp / SECTOR_SIZE, &rec).map_err(
            StoreError::dev(format!("writing {rtype:?} in metazone {z} at byte {}", self.meta_wp)),
        )?;
        self.meta_wp += len;
        self.stats.device_bytes_written += len;
        Ok(seq)
    }

    /// Starts a periodic checkpoint in the current metazone: flushes, copies the tables (the
    /// snapshot) and writes CkptStart; the pieces follow after foreground operations. When
    /// the checkpoint and some room for the journal do not fit in the metazone, writes a
    /// blocking checkpoint into the next metazone instead.
    pub(super) fn start_inc_checkpoint(&mut self) -> Result<()> {
        self.flush()?;
        let body = self.encode_tables();
        let step = self.cfg.ckpt_step_bytes as usize;
        let pieces = body.len().div_ceil(step).max(1) as u64;
        let need = pieces * format::record_len(step) + 2 * BLOCK;
        let cap = self.cap_bytes(self.meta_zone(self.meta));
        if self.meta_wp + need + cap / 8 > cap {
            return self.write_checkpoint();
        }
        self.ckpt_sub += 1;
        let sub = self.ckpt_sub;
        self.meta_append(RecordType::CkptStart, &format::ckpt_start_payload(self.meta_gen, sub))?;
        self.inc_ckpt = Some(IncCkpt { sub, body, pos: 0, pieces: 0 });
        self.since_ckpt = 0;
        Ok(())
    }

    /// Writes the next piece (at most `ckpt_step_bytes`) of the periodic checkpoint in
    /// progress; after the last piece, flushes and writes CkptEnd.
    pub(super) fn inc_checkpoint_step(&mut self) -> Result<()> {
        let Some(inc) = self.inc_ckpt.as_mut() else { return Ok(()) };
        let end = (inc.pos + self.cfg.ckpt_step_bytes as usize).min(inc.body.len());
        let piece = inc.body[inc.pos..end].to_vec();
        inc.pos = end;
        inc.pieces += 1;
        let done = end == inc.body.len();
        self.meta_append(RecordType::CkptBody, &piece)?;
        if self.inc_ckpt.is_none() {
            return Ok(());
        }
        self.stats.checkpoint_pieces += 1;
        if done {
            let inc = self.inc_ckpt.take().expect("checked");
            self.flush()?;
            let p = format::ckpt_end_payload(self.meta_gen, inc.sub, inc.pieces, &inc.body);
            if self.meta_append(RecordType::CkptEnd, &p)? != 0 {
                self.flush()?;
                self.stats.checkpoints += 1;
                self.stats.incremental_checkpoints += 1;
            }
        }
        Ok(())
    }

    /// Writes a checkpoint of the chunk and zone tables into the next metazone (after
    /// resetting it): metazone header, checkpoint start, body, end; flushes; then finishes the
    /// previous metazone. Until the flush, the previous metazone's checkpoint and journal are
    /// the recovery point. The store checkpoints by itself (at open, when the metazone fills,
    /// after every 16 zones' worth of appends, after each GC migration); calling this bounds
    /// the next recovery's scan.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.check_writable()?;
        let r = self.write_checkpoint();
        self.guard(r)
    }

    pub(super) fn write_checkpoint(&mut self) -> Result<()> {
        self.flush()?;
        let next = (self.meta + 1) % self.cfg.nr_metazones;
        let gen = self.meta_gen + 1;
        let z = self.meta_zone(next);
        let zs = self.info.zone_start(z);
        self.dev
            .zone_mgmt(ZoneOp::Reset, zs, self.info.zone_len(z))
            .map_err(StoreError::dev(format!("resetting metazone {z} for checkpoint {gen}")))?;
        let mut buf = Vec::new();
        let mut h = gen.to_le_bytes().to_vec();
        h.extend_from_slice(&next.to_le_bytes());
        let s1 = self.next_seq();
        buf.extend(encode_record(RecordType::MetaHeader, s1, &h));
        let s2 = self.next_seq();
        buf.extend(encode_record(RecordType::CkptStart, s2, &format::ckpt_start_payload(gen, 0)));
        let body = self.encode_tables();
        let s3 = self.next_seq();
        buf.extend(encode_record(RecordType::CkptBody, s3, &body));
        let s4 = self.next_seq();
        buf.extend(encode_record(RecordType::CkptEnd, s4, &format::ckpt_end_payload(gen, 0, 1, &body)));
        if buf.len() as u64 > self.cap_bytes(z) / 2 {
            return Err(StoreError::NoSpace(format!(
                "checkpoint of {} bytes does not fit half of metazone {z}",
                buf.len()
            )));
        }
        self.dev
            .write(zs, &buf)
            .map_err(StoreError::dev(format!("writing checkpoint {gen} in metazone {z}")))?;
        self.flush()?;
        let old = self.meta_zone(self.meta);
        if old != z && self.meta_gen > 0 {
            let w = self.wp_bytes(old)?;
            if w > 0 && w < self.info.zone_cap(old) * SECTOR_SIZE {
                self.dev
                    .zone_mgmt(ZoneOp::Finish, self.info.zone_start(old), self.info.zone_len(old))
                    .map_err(StoreError::dev(format!("finishing metazone {old}")))?;
            }
        }
        self.meta = next;
        self.meta_gen = gen;
        self.meta_wp = buf.len() as u64;
        self.since_ckpt = 0;
        self.inc_ckpt = None;
        self.ckpt_sub = 0;
        self.stats.device_bytes_written += buf.len() as u64;
        self.stats.checkpoints += 1;
        Ok(())
    }

    /// The checkpoint body: chunk table then zone table (`docs/store-format.md`).
    pub(super) fn encode_tables(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&(self.chunks.len() as u64).to_le_bytes());
        for (id, c) in &self.chunks {
            b.extend_from_slice(&id.0);
            b.push(c.stream.0);
            b.push(c.sealed as u8);
            b.extend_from_slice(&c.create_seq.to_le_bytes());
            b.extend_from_slice(&c.len.to_le_bytes());
            b.extend_from_slice(&(c.groups.len() as u32).to_le_bytes());
            for g in &c.groups {
                b.extend_from_slice(&g.zone.to_le_bytes());
                b.extend_from_slice(&(g.records.len() as u32).to_le_bytes());
                for r in &g.records {
                    b.extend_from_slice(&r.chunk_off.to_le_bytes());
                    b.extend_from_slice(&r.block.to_le_bytes());
                }
            }
        }
        b.extend_from_slice(&(self.zones.len() as u64).to_le_bytes());
        for z in &self.zones {
            b.push(z.state.code());
            b.push(z.pool);
            b.extend_from_slice(&z.written.to_le_bytes());
            b.extend_from_slice(&z.stored.to_le_bytes());
            b.extend_from_slice(&z.min_seq.to_le_bytes());
            b.extend_from_slice(&z.last_hcrc.to_le_bytes());
        }
        b
    }

    pub(super) fn decode_tables(&mut self, body: &[u8], zone: u64, off: u64) -> Result<()> {
        let bad = |what: String| StoreError::CorruptMeta { structure: "checkpoint", zone, offset: off, what };
        let mut r = Reader::new(body);
        let n = r.u64().map_err(bad)?;
        let mut chunks = BTreeMap::new();
        for _ in 0..n {
            let id = r.id().map_err(bad)?;
            let stream = StreamType(r.u8().map_err(bad)?);
            let sealed = r.u8().map_err(bad)? != 0;
            let create_seq = r.u64().map_err(bad)?;
            let len = r.u64().map_err(bad)?;
            let ng = r.u32().map_err(bad)?;
            let mut groups = Vec::new();
            let mut prev: Option<u32> = None;
            for _ in 0..ng {
                let gz = r.u32().map_err(bad)?;
                if gz as usize >= self.zones.len() {
                    return Err(bad(format!(
                        "chunk {id}: index group in datazone {gz} of {}",
                        self.zones.len()
                    )));
                }
                let nr = r.u32().map_err(bad)?;
                let mut records = Vec::new();
                for _ in 0..nr {
                    let chunk_off = r.u32().map_err(bad)?;
                    let block = r.u32().map_err(bad)?;
                    if prev.is_some_and(|p| chunk_off <= p) || chunk_off as u64 >= len {
                        return Err(bad(format!(
                            "chunk {id}: record index at chunk offset {chunk_off} out of order"
                        )));
                    }
                    prev = Some(chunk_off);
                    records.push(RecordIndex { chunk_off, block });
                }
                if records.is_empty() {
                    return Err(bad(format!("chunk {id}: empty index group")));
                }
                groups.push(IndexGroup { zone: gz, records });
            }
            if (len > 0) != prev.is_some()
                || prev.is_some_and(|p| p != 0 && groups[0].records[0].chunk_off != 0)
            {
                return Err(bad(format!("chunk {id}: length {len} disagrees with its index")));
            }
            chunks.insert(id, Chunk { stream, sealed, create_seq, len, groups, cur_zone: None });
        }
        let nz = r.u64().map_err(bad)?;
        if nz != self.zones.len() as u64 {
            return Err(bad(format!("zone table of {nz} datazones, the layout has {}", self.zones.len())));
        }
        for d in 0..self.zones.len() {
            let st = r.u8().map_err(bad)?;
            let state = ZoneState::from_code(st).ok_or_else(|| bad(format!("datazone {d}: state {st}")))?;
            let pool = r.u8().map_err(bad)?;
            let written = r.u64().map_err(bad)?;
            let stored = r.u64().map_err(bad)?;
            let min_seq = r.u64().map_err(bad)?;
            if written % BLOCK != 0 || written > self.cap_bytes(self.zone_no(d)) {
                return Err(bad(format!("datazone {d}: written {written}")));
            }
            let last_hcrc = r.u32().map_err(bad)?;
            self.zones[d] = DZone { state, pool, written, live: 0, stored, min_seq, last_hcrc };
        }
        if !r.done() {
            return Err(bad("trailing bytes after the zone table".into()));
        }
        // Every record must lie in the written part of its zone and hold no more than a zone
        // can (so no read sizes a buffer from a forged length).
        for (id, c) in &chunks {
            if c.len > MAX_CHUNK_LEN {
                return Err(bad(format!("chunk {id}: length {} beyond the limit {MAX_CHUNK_LEN}", c.len)));
            }
            for (zone, block, rs, re) in record_spans(c) {
                let written = self.zones[zone as usize].written;
                let room = written.saturating_sub(block as u64 * BLOCK);
                if room < BLOCK || re - rs > data_fits(room) as u64 {
                    return Err(bad(format!(
                        "chunk {id}: record of {} bytes at block {block} of datazone {zone} beyond its \
                         {written} written bytes",
                        re - rs
                    )));
                }
            }
        }
        self.chunks = chunks;
        Ok(())
    }
}
