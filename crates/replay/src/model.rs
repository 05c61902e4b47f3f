//! The same requests on a drive model (`--model-drive PROFILE`): measured time beside the time
//! `shingled sim` would give them on that drive, with no cache in front, so a user with a real
//! drive sees where the model and the drive part.

use crate::error::{ReplayError, Result};
use crate::stats::{OpStats, Recorder};
use serde::{Deserialize, Serialize};
use shingled_core::{ByteSize, Nanos, Op, BLOCK_SIZE};
use shingled_device::{BuildContext, Drive, DriveConfig, DriveStats};
use shingled_sim::TraceSpec;

/// What the drive model gave the replayed requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelReport {
    /// The drive profile.
    pub drive: String,
    /// Modelled time from the first measured request's issue to the last one's completion,
    /// seconds (closed loop: the sum of service times).
    pub total_time_s: f64,
    /// The measured wall time over the modelled total time.
    pub measured_over_modelled: f64,
    /// Every measured request on the model.
    pub all: OpStats,
    /// Reads.
    pub reads: OpStats,
    /// Writes.
    pub writes: OpStats,
    /// The model's counters (RMWs, PB blocks, band bytes, time by cause).
    pub drive_stats: DriveStats,
}

/// A drive model fed the replay's requests in order.
pub(crate) struct Model {
    name: String,
    drive: Box<dyn Drive>,
    /// When the model's drive is free (open loop) / the modelled clock (closed loop).
    busy: Nanos,
    first: Option<Nanos>,
    last: Nanos,
    rec: Recorder,
}

impl Model {
    /// The model of profile `name`, sized for the trace `spec` as `shingled sim` sizes it (its PB
    /// resolved against the trace's written range).
    pub(crate) fn new(name: &str, spec: &TraceSpec) -> Result<Model> {
        let bad = |reason: String| ReplayError::Option { option: "model_drive", reason };
        let cfg = DriveConfig::from_profile(name).map_err(|e| bad(e.to_string()))?;
        let stats = shingled_sim::measure(spec, &cfg.bands_or_default())?;
        let ctx = BuildContext {
            written_range: ByteSize(stats.written_band_bytes.max(BLOCK_SIZE)),
            accessed_range: ByteSize(stats.accessed_band_bytes.max(stats.written_band_bytes).max(BLOCK_SIZE)),
        };
        let drive = cfg.build(&ctx).map_err(|e| bad(format!("{name}: {e}")))?;
        Ok(Model {
            name: name.into(),
            drive,
            busy: Nanos::ZERO,
            first: None,
            last: Nanos::ZERO,
            rec: Recorder::default(),
        })
    }

    /// One request, arriving at `arrival` (open loop; closed loop: when the previous ended).
    pub(crate) fn issue(&mut self, op: Op, first: u64, blocks: u64, arrival: Nanos, open: bool, warm: bool) {
        if blocks == 0 {
            return;
        }
        let start = if open { self.busy.max(arrival) } else { self.busy };
        let n = blocks.min(u32::MAX as u64) as u32;
        let took = match op {
            Op::Read => self.drive.read(start, first, n),
            Op::Write => self.drive.write(start, first, n),
        };
        self.busy = start + took;
        if !warm {
            let from = if open { arrival } else { start };
            self.first.get_or_insert(from);
            self.last = self.busy;
            self.rec.record(op, blocks, self.busy - from);
        }
    }

    pub(crate) fn report(self, wall_s: f64, cdf: bool) -> ModelReport {
        let total = self.first.map_or(0.0, |f| (self.last - f).as_secs_f64());
        let [all, reads, writes] = self.rec.stats(cdf);
        ModelReport {
            drive: self.name,
            total_time_s: total,
            measured_over_modelled: if total > 0.0 { wall_s / total } else { 0.0 },
            all,
            reads,
            writes,
            drive_stats: self.drive.stats(),
        }
    }
}
