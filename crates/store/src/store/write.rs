//! The write path: appends split into data records, encoded and written in runs into the
//! zone placement picks, indexed once written.

use super::{push_record, RecordIndex, Store, ZoneState, WRITE_BATCH};
use crate::format::{self, data_fits, record_len, PreparedRecords, BLOCK};
use crate::{ChunkId, Durability, Result, StoreError};
use shingled_zoned::{ZonedDevice, SECTOR_SIZE};

impl<D: ZonedDevice> Store<D> {
    /// An append of `len` bytes that `write` carries out: the checks, GC around it, durability
    /// and checkpoints.
    pub(super) fn append_with(
        &mut self,
        id: ChunkId,
        len: u64,
        write: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        self.check_writable()?;
        let c = self.chunks.get(&id).ok_or(StoreError::NoSuchChunk(id))?;
        if c.sealed {
            return Err(StoreError::Sealed(id));
        }
        let limit = self.chunk_limit(c.stream);
        let would_be = c.len + len;
        if would_be > limit {
            return Err(StoreError::ChunkTooLarge { chunk: id, would_be, limit });
        }
        self.gc_background(len, true)?;
        let r = write(self);
        self.guard(r)?;
        self.stats.appends += 1;
        self.since_ckpt += len;
        if self.cfg.durability == Durability::EveryAppend {
            let r = self.flush();
            self.guard(r)?;
        }
        self.after_op()?;
        self.gc_background(len, false)
    }

    pub(super) fn cfg_checkpoint_bytes(&self) -> u64 {
        match self.cfg.checkpoint_every_bytes {
            // A checkpoint per 16 zones' worth of appends bounds the recovery scan.
            0 => 16 * self.info.zone_capacity_sectors * SECTOR_SIZE,
            n => n,
        }
    }

    /// After a foreground operation: start a periodic checkpoint when due, and write the next
    /// piece of the one in progress.
    pub(super) fn after_op(&mut self) -> Result<()> {
        if self.inc_ckpt.is_none() && self.since_ckpt >= self.cfg_checkpoint_bytes() {
            let r = self.start_inc_checkpoint();
            self.guard(r)?;
        }
        let r = self.inc_checkpoint_step();
        self.guard(r)
    }

    pub(super) fn append_inner(&mut self, id: ChunkId, data: &[u8]) -> Result<()> {
        let off = self.chunks[&id].len;
        let mut written = Vec::new();
        let mut done = 0usize;
        let r = self.write_run(id, off, data, false, &mut written, &mut done);
        self.index_written(id, written, done);
        r
    }

    /// Indexes the records an append wrote, `done` user bytes, even on failure (e.g. out of
    /// space after some records): it is what recovery would find, so memory and disk agree.
    pub(super) fn index_written(&mut self, id: ChunkId, written: Vec<(u32, RecordIndex)>, done: usize) {
        let c = self.chunks.get_mut(&id).expect("checked by the caller");
        for (d, ri) in written {
            push_record(c, d, ri);
        }
        c.len += done as u64;
    }

    /// [`Store::write_run`] for the records of `p` (user bytes of chunk `id` from chunk offset
    /// `off`): each run of records that the zone takes as `p` cut them gets its headers and
    /// one device write straight from `p`'s buffer; where the zone's end cuts them otherwise,
    /// the rest is copied out and written by `write_run`.
    pub(super) fn write_prepared(
        &mut self,
        id: ChunkId,
        off: u64,
        p: &mut PreparedRecords,
        out: &mut Vec<(u32, RecordIndex)>,
        done: &mut usize,
    ) -> Result<()> {
        let recs: Vec<(usize, usize)> = p.records().collect();
        let total = p.chunk().2;
        let (mut r, mut buf_at) = (0usize, 0usize);
        while r < recs.len() {
            let d = self.zone_for(id)?;
            let z = self.zone_no(d);
            let cap = self.cap_bytes(z);
            let start = self.zones[d].written;
            // The records the zone takes as they were cut.
            let (mut j, mut at, mut user, mut end) = (r, start, *done, buf_at);
            while j < recs.len() {
                let (n, len) = recs[j];
                if data_fits(cap - at).min(total - user).min(self.cfg.max_record) != n {
                    break;
                }
                (j, at, user, end) = (j + 1, at + len as u64, user + n, end + len);
            }
            if j == r {
                if data_fits(cap - start) == 0 {
                    self.finish_zone(d)?;
                    continue;
                }
                // The zone's end cuts the next record shorter: the rest as `append` cuts it.
                let rest = p.user_bytes(*done);
                let mut more = 0;
                let res = self.write_run(id, off + *done as u64, &rest, false, out, &mut more);
                *done += more;
                return res;
            }
            let (pool, mut link) = (self.zones[d].pool, self.zones[d].last_hcrc);
            let (mut b, mut u) = (buf_at, *done);
            for (i, &(n, len)) in recs.iter().enumerate().take(j).skip(r) {
                let seq = self.next_seq();
                link = p.seal_record(i, b, u, seq, pool, link);
                (b, u) = (b + len, u + n);
            }
            self.dev.write(self.info.zone_start(z) + start / SECTOR_SIZE, p.encoded(buf_at, end)).map_err(
                StoreError::dev(format!(
                    "writing chunk {id} offset {} in zone {z} at byte {start}",
                    off + *done as u64
                )),
            )?;
            self.stats.device_bytes_written += (end - buf_at) as u64;
            let zs = &mut self.zones[d];
            let (mut rat, mut u) = (start, *done);
            for &(n, len) in &recs[r..j] {
                zs.live += n as u64;
                zs.stored += n as u64;
                out.push((
                    d as u32,
                    RecordIndex { chunk_off: (off + u as u64) as u32, block: (rat / BLOCK) as u32 },
                ));
                (rat, u) = (rat + len as u64, u + n);
            }
            zs.written = at;
            zs.last_hcrc = link;
            zs.state = ZoneState::Activated;
            (*done, r, buf_at) = (user, j, end);
            if cap - self.zones[d].written < BLOCK {
                self.finish_zone(d)?;
            }
        }
        Ok(())
    }

    /// Writes `data` of chunk `id` from chunk offset `off` as data records, into the chunk's
    /// placement zone (or the GC zone), finishing zones as they fill. Pushes the new records
    /// to `out` and counts the user bytes written in `done` (both valid on failure too); the
    /// caller indexes them.
    ///
    /// Consecutive records that go to the same zone are encoded one after the other into one
    /// 4 KiB-aligned buffer (the store's, reused) and written with one device call of at most
    /// [`WRITE_BATCH`] bytes: the same bytes at the same places as one call per record, so a
    /// torn write still leaves a prefix of whole records, but fewer and larger writes, and an
    /// `O_DIRECT` device file takes the buffer without copying it again. A failed write
    /// indexes none of its records (recovery may still find a prefix of them, as for any
    /// append that returned an error).
    pub(super) fn write_run(
        &mut self,
        id: ChunkId,
        off: u64,
        data: &[u8],
        gc: bool,
        out: &mut Vec<(u32, RecordIndex)>,
        done: &mut usize,
    ) -> Result<()> {
        while *done < data.len() {
            let d = if gc { self.gc_zone()? } else { self.zone_for(id)? };
            let z = self.zone_no(d);
            let cap = self.cap_bytes(z);
            let start = self.zones[d].written;
            // The records of this batch: (zone byte offset, chunk offset, user bytes, bytes).
            let mut batch: Vec<(u64, u64, usize, usize)> = Vec::new();
            let (mut at, mut user, mut used) = (start, *done, 0usize);
            while user < data.len() {
                let n = data_fits(cap - at).min(data.len() - user).min(self.cfg.max_record);
                let len = record_len(format::data_payload_len(n)) as usize;
                if n == 0 || (used > 0 && used + len > WRITE_BATCH) {
                    break;
                }
                batch.push((at, off + user as u64, n, len));
                (at, user, used) = (at + len as u64, user + n, used + len);
            }
            if batch.is_empty() {
                self.finish_zone(d)?;
                continue;
            }
            // The pool key travels in the data prefix so recovery knows a new zone's stream;
            // the link chains the zone's records (docs/store-format.md, "Acknowledged tails").
            let (pool, mut link) = (self.zones[d].pool, self.zones[d].last_hcrc);
            let buf = self.wbuf.get(used);
            let mut pos = 0;
            for &(_, at_off, n, len) in &batch {
                let u = (at_off - off) as usize;
                let seq = self.seq;
                self.seq += 1;
                let r = &mut buf[pos..pos + len];
                format::encode_data_into(r, &id, at_off, &data[u..u + n], seq, pool, link);
                link = format::header_crc(r);
                pos += len;
            }
            let first_off = batch.first().map_or(off, |b| b.1);
            self.dev.write(self.info.zone_start(z) + start / SECTOR_SIZE, &buf[..used]).map_err(
                StoreError::dev(format!("writing chunk {id} offset {first_off} in zone {z} at byte {start}")),
            )?;
            self.stats.device_bytes_written += used as u64;
            let zs = &mut self.zones[d];
            zs.written = at;
            zs.last_hcrc = link;
            zs.state = ZoneState::Activated;
            for (rat, at_off, n, _) in batch {
                zs.live += n as u64;
                zs.stored += n as u64;
                out.push((d as u32, RecordIndex { chunk_off: at_off as u32, block: (rat / BLOCK) as u32 }));
            }
            *done = user;
            if cap - self.zones[d].written < BLOCK {
                self.finish_zone(d)?;
            }
        }
        Ok(())
    }
}
