//! The read path: the records holding a range of a chunk read from the device into a
//! reusable [`ChunkPiece`], whose slices are then verified and handed out without copying.
//!
//! Reading and verifying are apart so that a caller can verify and write out one piece in
//! another thread while the next is read (`store get` does); [`Store::read`] does both in turn.

use super::{locate, Store};
use crate::format::{
    align_up, check_slice, AlignedBuf, BLOCK, DATA_SLICES_AT, FOOTER_LEN, SLICE, SLICE_STRIDE,
};
use crate::{ChunkId, Result, StoreError};
use shingled_zoned::{ZonedDevice, SECTOR_SIZE};
use std::io::IoSlice;

/// Where one slice of a [`ChunkPiece`] lies and which of its user bytes were asked for.
#[derive(Clone, Copy, Debug)]
struct SliceAt {
    /// Offset of the slice (user bytes, then its footer) in the piece's buffer.
    at: usize,
    /// User bytes the slice holds.
    len: u32,
    /// The asked-for user bytes of the slice: `lo..hi` within it.
    lo: u32,
    hi: u32,
    /// Chunk offset of the slice's first user byte.
    chunk_off: u64,
    /// Datazone holding it, and the byte offset in that zone of the buffer's byte 0 of the
    /// device read it came with (for errors).
    zone: u64,
    zone_base: u64,
    /// Offset of that device read in the buffer.
    read_at: usize,
}

/// Part of a chunk as stored: the records' bytes read from the device and where each slice
/// lies, not yet verified. Reused across [`Store::read_raw`] calls, it keeps its buffer.
///
/// Nothing in it may be used before [`ChunkPiece::verify`] has passed.
#[derive(Debug, Default)]
pub struct ChunkPiece {
    chunk: ChunkId,
    /// 4 KiB-aligned, as the page cache's pages are: the kernel copies into it at full speed
    /// (a buffer at another offset within a cache line than its source halves it, or worse).
    buf: AlignedBuf,
    slices: Vec<SliceAt>,
    len: u64,
}

impl ChunkPiece {
    /// An empty piece.
    pub fn new() -> Self {
        Self::default()
    }

    /// User bytes the piece holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it holds no user bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Checks every slice against its footer (CRC32C, chunk id, chunk offset); the first
    /// that fails is [`StoreError::CorruptData`], as [`Store::read`] reports it.
    pub fn verify(&self) -> Result<()> {
        for s in &self.slices {
            let sl = s.len as usize;
            check_slice(&self.buf.window()[s.at..s.at + sl + FOOTER_LEN], &self.chunk, s.chunk_off).map_err(
                |what| StoreError::CorruptData {
                    chunk: self.chunk,
                    offset: s.chunk_off,
                    zone: s.zone,
                    zone_offset: s.zone_base + (s.at - s.read_at) as u64,
                    what,
                },
            )?;
        }
        Ok(())
    }

    /// The asked-for user bytes, slice by slice, in chunk order (call [`ChunkPiece::verify`]
    /// first).
    pub fn user_bytes(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let buf = self.buf.window();
        self.slices.iter().map(move |s| &buf[s.at + s.lo as usize..s.at + s.hi as usize])
    }

    /// [`ChunkPiece::user_bytes`] as `IoSlice`s for a vectored write, at most `max` of them
    /// from slice `from` on.
    pub fn io_slices(&self, from: usize, max: usize) -> Vec<IoSlice<'_>> {
        self.user_bytes().skip(from).take(max).map(IoSlice::new).collect()
    }

    /// Number of slices (of [`ChunkPiece::user_bytes`]).
    pub fn slices(&self) -> usize {
        self.slices.len()
    }
}

impl<D: ZonedDevice> Store<D> {
    /// Reads the records holding `len` bytes of chunk `id` from `offset` into `piece` (its
    /// buffer is reused): one device read per record touched, nothing verified yet (see
    /// [`ChunkPiece::verify`]). Errors: no such chunk, a range past its end, a device error.
    pub fn read_raw(&mut self, id: ChunkId, offset: u64, len: u64, piece: &mut ChunkPiece) -> Result<()> {
        let c = self.chunks.get(&id).ok_or(StoreError::NoSuchChunk(id))?;
        let end = offset.checked_add(len).filter(|&e| e <= c.len);
        let end = end.ok_or(StoreError::OutOfRange { chunk: id, offset, len, chunk_len: c.len })?;
        piece.chunk = id;
        piece.slices.clear();
        piece.len = 0;
        // The device reads, planned first so that the buffer is sized once.
        let mut reads: Vec<(u64, u64, u64, u64)> = Vec::new(); // chunk offset, zone, aligned start, end
        let mut used = 0usize;
        let mut pos = offset;
        while pos < end {
            let (zone, block, rs, re) = locate(c, pos);
            let z = self.data_first + zone as u64;
            let upto = end.min(re);
            let (i, j) = ((pos - rs) / SLICE as u64, (upto - 1 - rs) / SLICE as u64);
            let slice_len = |s: u64| (re - rs - s * SLICE as u64).min(SLICE as u64) as usize;
            let rec_at = block as u64 * BLOCK;
            let lo = rec_at + DATA_SLICES_AT as u64 + i * SLICE_STRIDE as u64;
            let hi =
                rec_at + DATA_SLICES_AT as u64 + j * SLICE_STRIDE as u64 + (slice_len(j) + FOOTER_LEN) as u64;
            let (alo, ahi) = (lo / BLOCK * BLOCK, align_up(hi));
            for s in i..=j {
                let sl = slice_len(s);
                let soff = rs + s * SLICE as u64;
                let at = used + (rec_at + DATA_SLICES_AT as u64 + s * SLICE_STRIDE as u64 - alo) as usize;
                let a = pos.max(soff) - soff;
                let b = upto.min(soff + sl as u64) - soff;
                piece.slices.push(SliceAt {
                    at,
                    len: sl as u32,
                    lo: a as u32,
                    hi: b as u32,
                    chunk_off: soff,
                    zone: z,
                    zone_base: alo,
                    read_at: used,
                });
            }
            reads.push((pos, z, alo, ahi));
            used += (ahi - alo) as usize;
            pos = upto;
        }
        let buf = piece.buf.get(used);
        let mut at = 0usize;
        for (pos, z, alo, ahi) in reads {
            let n = (ahi - alo) as usize;
            self.dev
                .read(self.info.zone_start(z) + alo / SECTOR_SIZE, &mut buf[at..at + n])
                .map_err(StoreError::dev(format!("reading chunk {id} at offset {pos} in zone {z}")))?;
            at += n;
        }
        piece.len = end - offset;
        Ok(())
    }
}
