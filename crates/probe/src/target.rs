//! What a probe drives: a [`ProbeTarget`], either a drive model on a virtual clock
//! ([`ModelTarget`]) or a real device ([`crate::DeviceTarget`]).

use crate::error::{ProbeError, Result};
use shingled_core::{Nanos, BLOCK_SIZE};
use shingled_device::Drive;
use std::time::Duration;

/// A block target the probes issue I/O to, one request at a time (I/O depth 1, as in SAC
/// Table 3's first row).
///
/// Requests are in bytes; offset and length must be multiples of [`ProbeTarget::alignment`] and
/// lie within [`ProbeTarget::capacity`], otherwise the call fails with
/// [`ProbeError::BadRequest`] and does nothing.
pub trait ProbeTarget {
    /// Capacity in bytes. Constant for the target's life.
    fn capacity(&self) -> u64;

    /// Alignment of offsets and lengths in bytes (4096 for every target here: the models' block
    /// and the O_DIRECT buffer alignment).
    fn alignment(&self) -> u64 {
        BLOCK_SIZE
    }

    /// Writes `len` bytes at byte `offset` and returns once the target reports them written:
    /// the request's service time (wall clock for a device, modelled time for a model).
    fn write(&mut self, offset: u64, len: u64) -> Result<Duration>;

    /// Reads `len` bytes at byte `offset`; returns the service time.
    fn read(&mut self, offset: u64, len: u64) -> Result<Duration>;

    /// Issues nothing for `d`: a device sleeps, a model's clock moves on. Drives that clean their
    /// persistent buffer when idle (Skylight, Aghayev & Desnoyers, FAST '15) get the chance to.
    fn idle(&mut self, d: Duration) -> Result<()>;

    /// Time since the target was opened: wall clock for a device, the virtual clock for a model.
    fn elapsed(&self) -> Duration;

    /// One line saying what the target is, for reports.
    fn describe(&self) -> String;
}

/// Checks a request against a target's alignment and capacity.
pub(crate) fn check_request(offset: u64, len: u64, capacity: u64, align: u64) -> Result<()> {
    let bad = |reason| Err(ProbeError::BadRequest { offset, len, reason, capacity });
    if len == 0 {
        return bad("empty request");
    }
    if !offset.is_multiple_of(align) || !len.is_multiple_of(align) {
        return bad("offset and length must be multiples of 4096");
    }
    if offset.checked_add(len).is_none_or(|end| end > capacity) {
        return bad("reaches beyond the end of the target");
    }
    Ok(())
}

/// A drive model as a probe target. Each request is issued at the completion of the previous one
/// (closed loop, I/O depth 1) on the model's virtual clock, so the time a request returns is the
/// model's service time for it, cleaning it waited for included; [`ProbeTarget::idle`] moves the
/// clock without I/O.
pub struct ModelTarget {
    drive: Box<dyn Drive>,
    now: Nanos,
    capacity: u64,
    label: String,
}

impl ModelTarget {
    /// Wraps a built model; `label` names it in reports (a profile name, "hidden drive #3").
    pub fn new(drive: Box<dyn Drive>, label: impl Into<String>) -> ModelTarget {
        let capacity = drive.capacity_blocks().saturating_mul(BLOCK_SIZE);
        ModelTarget { drive, now: Nanos::ZERO, capacity, label: label.into() }
    }

    /// The model (for its counters and, in tests, its true band map).
    pub fn drive(&self) -> &dyn Drive {
        self.drive.as_ref()
    }

    /// The virtual clock.
    pub fn now(&self) -> Nanos {
        self.now
    }

    fn io(&mut self, offset: u64, len: u64, write: bool) -> Result<Duration> {
        check_request(offset, len, self.capacity, BLOCK_SIZE)?;
        let mut block = offset / BLOCK_SIZE;
        let mut left = len / BLOCK_SIZE;
        let start = self.now;
        while left > 0 {
            let n = left.min(u32::MAX as u64) as u32;
            let t = if write {
                self.drive.write(self.now, block, n)
            } else {
                self.drive.read(self.now, block, n)
            };
            self.now += t;
            block += n as u64;
            left -= n as u64;
        }
        Ok(Duration::from_nanos((self.now - start).0))
    }
}

impl ProbeTarget for ModelTarget {
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn write(&mut self, offset: u64, len: u64) -> Result<Duration> {
        self.io(offset, len, true)
    }

    fn read(&mut self, offset: u64, len: u64) -> Result<Duration> {
        self.io(offset, len, false)
    }

    fn idle(&mut self, d: Duration) -> Result<()> {
        let until = self.now + Nanos(d.as_nanos().min(u64::MAX as u128) as u64);
        self.drive.idle(self.now, until);
        self.now = until;
        Ok(())
    }

    fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.now.0)
    }

    fn describe(&self) -> String {
        format!("{} model {} ({} bytes)", self.drive.kind(), self.label, self.capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shingled_core::ByteSize;
    use shingled_device::{BuildContext, DriveConfig};

    #[test]
    fn model_target_runs_a_closed_loop_on_the_virtual_clock() {
        let mut cfg = DriveConfig::from_profile("sac-emulator").unwrap();
        cfg.set_capacity(ByteSize::gb(1));
        let d = cfg.build(&BuildContext::whole_drive(ByteSize::gb(1))).unwrap();
        let mut t = ModelTarget::new(d, "sac-emulator");
        assert_eq!(t.capacity(), 1_000_000_000 / 4096 * 4096);
        let a = t.write(0, 8192).unwrap();
        let b = t.read(4096, 4096).unwrap();
        assert_eq!(t.elapsed(), a + b);
        t.idle(Duration::from_secs(2)).unwrap();
        assert_eq!(t.elapsed(), a + b + Duration::from_secs(2));
        assert_eq!(t.drive().stats().pb_writes, 2);
        assert!(t.describe().contains("sac-emulator"));
        let e = t.write(100, 4096).unwrap_err().to_string();
        assert!(e.contains("multiples of 4096"), "{e}");
        let e = t.read(t.capacity(), 4096).unwrap_err().to_string();
        assert!(e.contains("beyond the end"), "{e}");
        assert!(t.write(0, 0).is_err());
    }
}
