//! The [`Io`] of the data path: the controller's per-block decisions executed with the
//! request's bytes.

use super::slots::Core;
use super::{internal, Buf};
use shingled_core::BlockNo;
use shingled_sim::controller::Io;
use shingled_stl::{BlockDevice, Result, StlError};

/// The [`Io`] of the data path: executes one block's decisions with its bytes.
pub(super) struct DataIo<'a, C, B> {
    pub(super) core: &'a mut Core<C, B>,
    pub(super) buf: Buf<'a>,
    pub(super) block: BlockNo,
    /// The dirty victim just read into `vbuf`.
    pub(super) victim: Option<BlockNo>,
    pub(super) vbuf: &'a mut Vec<u8>,
    pub(super) err: Option<StlError>,
    pub(super) hit: bool,
}

impl<C: BlockDevice, B: BlockDevice> DataIo<'_, C, B> {
    /// Runs `f` unless an earlier call failed (then the rest of the block is skipped).
    fn run(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) {
        if self.err.is_none() {
            if let Err(e) = f(self) {
                self.err = Some(e);
            }
        }
    }
}

impl<C: BlockDevice, B: BlockDevice> Io for DataIo<'_, C, B> {
    fn ssd_read(&mut self, b: BlockNo) {
        self.run(|io| {
            if b == io.block {
                let p = io
                    .core
                    .current_slot(b)
                    .ok_or_else(|| internal(format!("read hit on uncached block {b}")))?;
                match &mut io.buf {
                    Buf::Read(buf) => io.core.read_slot(p, buf),
                    Buf::Write(_) => Err(internal(format!("cache read of block {b} being written"))),
                }
            } else {
                // a dirty victim, about to be written back: the policy removed it, its slot is
                // released but untouched until a commit or an allocation
                io.core.process_removed();
                let p = io
                    .core
                    .recent
                    .iter()
                    .rev()
                    .find(|(x, _)| *x == b)
                    .map(|&(_, p)| p)
                    .ok_or_else(|| internal(format!("victim {b} has no slot")))?;
                io.core.read_slot(p, io.vbuf)?;
                io.victim = Some(b);
                Ok(())
            }
        })
    }

    fn ssd_write(&mut self, b: BlockNo) {
        self.run(|io| {
            io.core.process_removed();
            if b != io.block {
                return Err(internal(format!("cache write of block {b} during a request for {}", io.block)));
            }
            let (data, dirty): (&[u8], bool) = match &io.buf {
                Buf::Read(buf) => (buf, false),
                Buf::Write(d) => (d, true),
            };
            io.core.store(b, data, dirty)
        })
    }

    fn drive_read(&mut self, b: BlockNo) {
        self.run(|io| match &mut io.buf {
            Buf::Read(buf) if b == io.block => io.core.backing_read(b, buf),
            _ => Err(internal(format!("backing read of block {b} outside its read request"))),
        })
    }

    fn drive_write(&mut self, b: BlockNo) {
        self.run(|io| {
            if io.victim == Some(b) {
                io.victim = None;
                return io.core.queue_backing_write(b, io.vbuf);
            }
            io.core.process_removed();
            match &io.buf {
                Buf::Write(d) if b == io.block => io.core.queue_backing_write(b, d),
                _ => Err(internal(format!("backing write of block {b} with no data"))),
            }
        })
    }

    fn barrier(&mut self) {
        self.run(|io| io.core.unplug())
    }

    fn read_hit(&mut self) {
        self.hit = true;
    }

    fn write_hit(&mut self) {
        self.hit = true;
    }

    fn evicted(&mut self, dirty: bool) {
        if dirty {
            self.core.stats.dirty_evictions += 1;
        } else {
            self.core.stats.clean_evictions += 1;
        }
    }
}
