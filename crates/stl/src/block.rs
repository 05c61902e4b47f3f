//! The block-device interface every translation layer serves, a byte-addressed front end that
//! read-modify-writes partial blocks, and a flat in-memory device (the oracle of the tests).

use crate::error::{Result, StlError};

/// Logical block size of every translation layer: 4 KiB, as dm-zoned exposes.
pub const BLOCK: usize = 4096;

/// A block device of 4 KiB logical blocks.
///
/// Contract: `read` and `write` take whole blocks (`buf.len()` a multiple of [`BLOCK`]) inside
/// the capacity; blocks never written (or discarded) read as zeros. After [`flush`] returns,
/// every write acknowledged before it survives a power cut; a write torn by a power cut loses
/// at most the blocks it was writing (they read old or new data, block by block).
///
/// [`flush`]: BlockDevice::flush
pub trait BlockDevice {
    /// Capacity in blocks.
    fn capacity_blocks(&self) -> u64;
    /// Reads `buf.len() / BLOCK` blocks from `lba`.
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()>;
    /// Writes `data.len() / BLOCK` blocks at `lba`.
    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()>;
    /// The durability barrier.
    fn flush(&mut self) -> Result<()>;
    /// Forgets `blocks` blocks from `lba`: they read as zeros afterwards (durably after the
    /// next flush).
    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()>;
    /// A name for messages (the file or device under it).
    fn name(&self) -> String;
    /// Ends a batch: requests issued since the last `unplug` may be merged with each other by
    /// the device's queue (contiguous, same direction), none with a later one (Linux's
    /// `blk_finish_plug`). Says nothing about durability. Real devices need not do anything;
    /// a modelled device uses it to see the same commands a replay engine would issue.
    fn unplug(&mut self) -> Result<()> {
        Ok(())
    }
    /// Whether the device merges contiguous requests itself until [`unplug`](Self::unplug) (a
    /// modelled device): a caller then issues each request as it comes instead of gathering
    /// runs, so that the device sees every request at the moment it is made.
    fn merges_requests(&self) -> bool {
        false
    }
}

impl<B: BlockDevice + ?Sized> BlockDevice for Box<B> {
    fn capacity_blocks(&self) -> u64 {
        (**self).capacity_blocks()
    }
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        (**self).read(lba, buf)
    }
    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        (**self).write(lba, data)
    }
    fn flush(&mut self) -> Result<()> {
        (**self).flush()
    }
    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        (**self).discard(lba, blocks)
    }
    fn name(&self) -> String {
        (**self).name()
    }
    fn unplug(&mut self) -> Result<()> {
        (**self).unplug()
    }
    fn merges_requests(&self) -> bool {
        (**self).merges_requests()
    }
}

/// Checks a block request: `len` bytes (a multiple of [`BLOCK`]) at block `lba` inside
/// `capacity` blocks. Returns the number of blocks.
pub fn check_request(name: &str, op: &str, lba: u64, len: usize, capacity: u64) -> Result<u64> {
    if !len.is_multiple_of(BLOCK) {
        return Err(StlError::Range {
            what: format!("{name}: {op} at block {lba}"),
            detail: format!("length {len} bytes is not a multiple of the {BLOCK}-byte block"),
        });
    }
    let n = (len / BLOCK) as u64;
    if lba.checked_add(n).is_none_or(|end| end > capacity) {
        return Err(StlError::Range {
            what: format!("{name}: {op} at block {lba}"),
            detail: format!("{n} blocks reach past the capacity of {capacity} blocks"),
        });
    }
    Ok(n)
}

/// Byte-addressed access to a block device: unaligned reads and writes go through whole
/// blocks, a partial block being read, patched and written back (the front end's
/// read-modify-write).
pub struct ByteDevice<B> {
    inner: B,
}

impl<B: BlockDevice> ByteDevice<B> {
    /// Wraps `inner`.
    pub fn new(inner: B) -> ByteDevice<B> {
        ByteDevice { inner }
    }

    /// The device under it.
    pub fn inner(&mut self) -> &mut B {
        &mut self.inner
    }

    /// Unwraps.
    pub fn into_inner(self) -> B {
        self.inner
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.inner.capacity_blocks() * BLOCK as u64
    }

    fn check(&self, op: &str, offset: u64, len: usize) -> Result<()> {
        if offset.checked_add(len as u64).is_none_or(|end| end > self.size()) {
            return Err(StlError::Range {
                what: format!("{}: {op} at byte {offset}", self.inner.name()),
                detail: format!("{len} bytes reach past the size of {} bytes", self.size()),
            });
        }
        Ok(())
    }

    /// The pieces of `len` bytes at byte `offset`: `(block, offset within it, bytes, start in
    /// the caller's buffer)`. A piece that starts a block and is at least a block long covers
    /// every whole block it can (one request); any other piece is part of one block.
    fn pieces(offset: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize, usize)> {
        let mut done = 0usize;
        std::iter::from_fn(move || {
            (done < len).then(|| {
                let pos = offset + done as u64;
                let (lba, within) = (pos / BLOCK as u64, (pos % BLOCK as u64) as usize);
                let left = len - done;
                let n = if within == 0 && left >= BLOCK {
                    left / BLOCK * BLOCK
                } else {
                    (BLOCK - within).min(left)
                };
                let at = done;
                done += n;
                (lba, within, n, at)
            })
        })
    }

    /// Reads `buf.len()` bytes at byte `offset`.
    pub fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.check("read", offset, buf.len())?;
        let mut block = vec![0u8; BLOCK];
        for (lba, within, n, at) in Self::pieces(offset, buf.len()) {
            if within == 0 && n.is_multiple_of(BLOCK) {
                self.inner.read(lba, &mut buf[at..at + n])?;
            } else {
                self.inner.read(lba, &mut block)?;
                buf[at..at + n].copy_from_slice(&block[within..within + n]);
            }
        }
        Ok(())
    }

    /// Writes `data` at byte `offset`.
    pub fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.check("write", offset, data.len())?;
        let mut block = vec![0u8; BLOCK];
        for (lba, within, n, at) in Self::pieces(offset, data.len()) {
            if within == 0 && n.is_multiple_of(BLOCK) {
                self.inner.write(lba, &data[at..at + n])?;
            } else {
                self.inner.read(lba, &mut block)?;
                block[within..within + n].copy_from_slice(&data[at..at + n]);
                self.inner.write(lba, &block)?;
            }
        }
        Ok(())
    }

    /// The durability barrier.
    pub fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
}

/// A flat in-memory block device: what every translation layer must behave like (the oracle
/// of the model-based tests).
#[derive(Clone, Debug, Default)]
pub struct MemBlock {
    blocks: std::collections::HashMap<u64, Box<[u8]>>,
    capacity: u64,
}

impl MemBlock {
    /// A device of `capacity` blocks, all zeros.
    pub fn new(capacity: u64) -> MemBlock {
        MemBlock { blocks: Default::default(), capacity }
    }
}

impl BlockDevice for MemBlock {
    fn capacity_blocks(&self) -> u64 {
        self.capacity
    }

    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<()> {
        let n = check_request("mem", "read", lba, buf.len(), self.capacity)?;
        for i in 0..n {
            let dst = &mut buf[i as usize * BLOCK..(i as usize + 1) * BLOCK];
            match self.blocks.get(&(lba + i)) {
                Some(b) => dst.copy_from_slice(b),
                None => dst.fill(0),
            }
        }
        Ok(())
    }

    fn write(&mut self, lba: u64, data: &[u8]) -> Result<()> {
        let n = check_request("mem", "write", lba, data.len(), self.capacity)?;
        for i in 0..n {
            let src = &data[i as usize * BLOCK..(i as usize + 1) * BLOCK];
            self.blocks.insert(lba + i, src.into());
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn discard(&mut self, lba: u64, blocks: u64) -> Result<()> {
        check_request("mem", "discard", lba, 0, self.capacity)?;
        if lba.checked_add(blocks).is_none_or(|e| e > self.capacity) {
            return Err(StlError::Range {
                what: format!("mem: discard at block {lba}"),
                detail: format!("{blocks} blocks reach past the capacity of {} blocks", self.capacity),
            });
        }
        for b in lba..lba + blocks {
            self.blocks.remove(&b);
        }
        Ok(())
    }

    fn name(&self) -> String {
        "mem".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unaligned_writes_patch_whole_blocks() {
        let mut d = ByteDevice::new(MemBlock::new(4));
        d.write_at(4090, b"0123456789").unwrap();
        let mut buf = vec![0u8; 14];
        d.read_at(4088, &mut buf).unwrap();
        assert_eq!(&buf, b"\0\x000123456789\0\0");
        let mut whole = vec![0u8; 2 * BLOCK];
        d.inner().read(0, &mut whole).unwrap();
        assert_eq!(&whole[4090..4100], b"0123456789");
        assert!(d.write_at(4 * 4096 - 1, b"ab").is_err());
        assert!(d.inner().read(3, &mut [0u8; 100]).is_err());
    }
}
