//! Persistent-buffer capacity detection (SAC §5.1, Fig. 11, Table 3).
//!
//! 1. **Force the PB empty** (SAC §5.1 step 1). Write a range of `C` bytes in random order ("to
//!    squeeze out the old data in the PB, only leaving the data located in LBA 0 to C"), then
//!    sequentially ("SMR will let these sequential data directly write back to the band region
//!    and drop the old data in the PB"). `C` is an upper bound of the PB capacity
//!    ([`PbProbeConfig::upper_bound`]). Then, our addition, stay idle for
//!    [`PbProbeConfig::settle_s`]: Skylight observed drives cleaning their persistent cache
//!    when idle (Aghayev & Desnoyers, FAST '15), and a drive that does not bypass its PB for
//!    sequential writes is only emptied that way. Cleaning is FIFO, so the PB is empty once step 1's last
//!    write has left it: its block then reads as streamed from its band, not from the PB (the
//!    band probe's marker check). Until it does, idle again, up to
//!    [`PbProbeConfig::settle_rounds`] times: idle cleaning of the full-size `st8000as0002`
//!    profile's 30 GB PB of sequential data takes about an hour, and a PB emptied only partly
//!    looks like a smaller one.
//!
//!    Our change: SAC writes `[0, C)` here, the range step 2 writes again; we write `[C, 2C)`.
//!    On a drive that cannot be emptied, the last PB's worth of step 1 stays in the PB, and a
//!    step-2 write to one of those blocks may take no new PB slot (an in-place PB updates the
//!    copy where it is; a PB that frees superseded slots at once frees the old one). Each such
//!    write would push the drop later: a PB measured 5–12% high on PORE's in-place emulator.
//! 2. **Random writing** (SAC §5.1 step 2). Write `[0, C)` in a random order, in
//!    [`PbProbeConfig::block_size`] requests at I/O depth 1, and record each write's service
//!    time (and, as evidence, the IOPS per window). "The IOPS initially stays high ... when the
//!    PB is full and it begins to clean up the data, a sudden drop of IOPS will be observed ...
//!    The written data amount before the sudden IOPS drop is the PB capacity." The drop is
//!    placed on the exact write by [`crate::detect::find_knee`]: the split of the per-write
//!    times into a fast and a slow segment. On an emptied PB that is the first write that
//!    waited for a cleaning, whatever the drive does afterwards: a drive that cleans in batches
//!    (`pb_clean_low_watermark`) stalls once for hundreds of RMWs and then writes at PB speed
//!    into the freed slots, so its IOPS per window oscillate rather than staying low. Writing
//!    stops once the drop is confirmed ([`CliffParams::after_fraction`]), so a slow
//!    post-cliff drive is not written for hours.
//!
//! The value depends on the write size, as SAC Table 3 shows: a drive whose PB is full when its
//! *entries* run out reports `entries × block_size`, not its byte size. Run with the block size
//! of the workload the result is for. A drive that starts cleaning before its PB is full (a
//! high watermark) reports what it takes before cleaning.

use crate::detect::{find_knee, quantile, rolling_median, Cliff, CliffParams};
use crate::error::{invalid, ProbeError, Result};
use crate::perm::Permutation;
use crate::target::ProbeTarget;
use crate::Progress;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Parameters of [`detect_pb`]. Sizes are bytes, multiples of 4096.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PbProbeConfig {
    /// `C`, the upper bound of the PB capacity: step 1 writes `[C, 2C)`, step 2 `[0, C)`.
    /// Default (`None`): [`PbProbeConfig::default_upper_bound`] of the target's capacity. The
    /// larger `C` is compared with the PB, the sharper the cliff (after it, each band cleaning
    /// frees only the few PB blocks that fall into that band). At least 64 blocks of
    /// `block_size`.
    pub upper_bound: Option<u64>,
    /// Request size of step 2 (and of step 1's random pass). Default 4096 (SAC Table 3's first
    /// row).
    pub block_size: u64,
    /// Request size of step 1's sequential pass. Default (`None`): `block_size`. A drive that
    /// cannot be emptied (no idle cleaning, sequential writes not bypassing the PB) keeps the
    /// last of these writes in its PB; written in `block_size` requests they take PB entries as
    /// step 2's writes do, so the cliff still comes after a PB's worth of them. Larger requests
    /// (1 MiB) make step 1 much faster on a real drive that does empty its PB.
    pub sequential_request: Option<u64>,
    /// Run step 1 (force the PB empty). Default `true`; turn off only for a target known to be
    /// empty (a model just built).
    pub empty_first: bool,
    /// Idle time after step 1, seconds, repeated (`settle_rounds`) while step 1's last write is
    /// still in the PB. Default 600: the calibrated models start cleaning after 1.242 s idle;
    /// a 20 GB PB of 30 MB bands takes them about 5 minutes, the `st8000as0002` profile's
    /// 30 GB PB of sequential data about an hour. A model's idle time costs nothing, a real
    /// drive's is a wait.
    pub settle_s: f64,
    /// Most idle periods of `settle_s` after step 1, until step 1's last write has left the PB.
    /// Default 8; at least 1. On a drive that cannot be emptied every round is spent.
    pub settle_rounds: u32,
    /// Writes per IOPS window. Default (`None`): `C / block_size / 2000`, clamped to 32 ..= 65536.
    pub window_ops: Option<u64>,
    /// A window also closes after this much time, seconds (SAC Fig. 11 samples per second).
    /// Default 1.
    pub window_s: f64,
    /// How the cliff is recognised ([`crate::detect::find_knee`]). Step 2 stops as soon as it
    /// is, which needs `cliff.after_fraction` (5%) as many writes after the cliff as before it.
    pub cliff: CliffParams,
    /// Seed of the random orders.
    pub seed: u64,
}

impl Default for PbProbeConfig {
    fn default() -> Self {
        PbProbeConfig {
            upper_bound: None,
            block_size: 4096,
            sequential_request: None,
            empty_first: true,
            settle_s: 600.0,
            settle_rounds: 8,
            window_ops: None,
            window_s: 1.0,
            cliff: CliffParams::default(),
            seed: 0,
        }
    }
}

impl PbProbeConfig {
    /// The default `C` for a target of `capacity` bytes: 1/32 of it (156 GB of a 5 TB drive,
    /// 7.8× the ST5000AS0011's 20 GB PB), rounded down to whole MiB. SAC: "C may be equal to the
    /// capacity of the whole SMR disk if we cannot get an upper bound"; a thirty-second keeps
    /// step 1 to hours on a real drive.
    pub fn default_upper_bound(capacity: u64) -> u64 {
        (capacity / 32) & !((1 << 20) - 1)
    }

    /// The `C` used on a target of `capacity` bytes, rounded down to a multiple of
    /// `block_size`.
    pub fn resolved_upper_bound(&self, capacity: u64) -> u64 {
        let c = self.upper_bound.unwrap_or_else(|| Self::default_upper_bound(capacity));
        c / self.block_size.max(1) * self.block_size.max(1)
    }

    /// Checks the parameters against a target of `capacity` bytes.
    pub fn validate(&self, capacity: u64) -> Result<()> {
        let c = self.resolved_upper_bound(capacity);
        for (field, v) in [("block_size", self.block_size), ("sequential_request", self.sequential_len())] {
            if v == 0 || !v.is_multiple_of(4096) {
                return Err(invalid(field, v, "expected a non-zero multiple of 4096 bytes"));
            }
        }
        if c / self.block_size < 64 {
            return Err(invalid(
                "upper_bound",
                c,
                format!("expected at least 64 blocks of block_size ({})", self.block_size),
            ));
        }
        let needed = if self.empty_first { 2 * c } else { c };
        if needed > capacity {
            return Err(ProbeError::TooSmall {
                what: "PB detection (the range [0, C), and [C, 2C) to empty the PB)",
                needed,
                capacity,
                hint: "; lower --upper-bound".into(),
            });
        }
        if !(self.settle_s.is_finite() && self.settle_s >= 0.0) {
            return Err(invalid("settle_s", self.settle_s, "expected seconds >= 0"));
        }
        if self.settle_rounds == 0 {
            return Err(invalid("settle_rounds", 0, "expected at least one idle period"));
        }
        if !(self.window_s.is_finite() && self.window_s > 0.0) {
            return Err(invalid("window_s", self.window_s, "expected seconds > 0"));
        }
        if self.window_ops == Some(0) {
            return Err(invalid("window_ops", 0, "expected at least one write per window"));
        }
        if !(self.cliff.fraction > 0.0 && self.cliff.fraction < 1.0) {
            return Err(invalid("cliff.fraction", self.cliff.fraction, "expected 0 < fraction < 1"));
        }
        if !(self.cliff.slow_factor > 1.0 && self.cliff.slow_factor.is_finite()) {
            return Err(invalid("cliff.slow_factor", self.cliff.slow_factor, "expected > 1"));
        }
        if !(self.cliff.plateau_gaps >= 0.0 && self.cliff.plateau_gaps.is_finite()) {
            return Err(invalid("cliff.plateau_gaps", self.cliff.plateau_gaps, "expected >= 0"));
        }
        if !(self.cliff.after_fraction > 0.0 && self.cliff.after_fraction <= 10.0) {
            return Err(invalid("cliff.after_fraction", self.cliff.after_fraction, "expected (0, 10]"));
        }
        Ok(())
    }

    fn sequential_len(&self) -> u64 {
        self.sequential_request.unwrap_or(self.block_size)
    }

    fn resolved_window_ops(&self, ops: u64) -> u64 {
        self.window_ops.unwrap_or_else(|| (ops / 2000).clamp(32, 65536))
    }
}

/// Width of the rolling median of [`IopsWindow::smoothed`].
const SMOOTH: usize = 5;

/// One window of step 2's IOPS series.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IopsWindow {
    /// Writes of step 2 before this window.
    pub first_op: u64,
    /// Writes in this window.
    pub ops: u64,
    /// Start of the window, seconds since step 2 began.
    pub start_s: f64,
    /// Length of the window, seconds.
    pub duration_s: f64,
    /// `ops / duration_s`.
    pub iops: f64,
    /// Centred rolling median of 5 windows (evidence only: the cliff is found on the per-write
    /// times).
    pub smoothed: f64,
}

/// What [`detect_pb`] found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PbReport {
    /// The target, as it describes itself.
    pub target: String,
    /// `C`, bytes.
    pub upper_bound: u64,
    /// Request size of step 2, bytes.
    pub block_size: u64,
    /// The detected PB capacity: bytes written in step 2 before the cliff.
    pub pb_bytes: u64,
    /// Writes of step 2 before the cliff (`pb_bytes / block_size`).
    pub cliff_op: u64,
    /// The cliff: its write, the window holding it, the IOPS before and after it.
    pub cliff: Cliff,
    /// Step 2's IOPS series.
    pub windows: Vec<IopsWindow>,
    /// Step 1's last write had left the PB before step 2 (the PB was emptied). `false` also
    /// when step 1 was skipped.
    pub emptied: bool,
    /// Idle periods of `settle_s` spent after step 1.
    pub settle_rounds: u32,
    /// Duration of step 1 (both passes and the settle time), seconds.
    pub step1_s: f64,
    /// Duration of step 2, seconds.
    pub step2_s: f64,
}

impl PbReport {
    /// The IOPS series as CSV: `window,first_op,bytes_before,start_s,duration_s,iops,smoothed,after_cliff`.
    pub fn iops_csv(&self) -> String {
        let mut s =
            String::from("window,first_op,bytes_before,start_s,duration_s,iops,smoothed,after_cliff\n");
        for (i, w) in self.windows.iter().enumerate() {
            s.push_str(&format!(
                "{i},{},{},{:.6},{:.6},{:.3},{:.3},{}\n",
                w.first_op,
                w.first_op * self.block_size,
                w.start_s,
                w.duration_s,
                w.iops,
                w.smoothed,
                u8::from(i >= self.cliff.window)
            ));
        }
        s
    }
}

/// Whether the block at byte `last`, the last one step 1 wrote, has left the PB: read from
/// four blocks before it to four after it (never written by step 1, so in their band), every
/// read after the first streams. Step 1's sequential data stream from the PB too, but while
/// `last` is in the PB, the read after it seeks from the PB to the band (or, from a flash PB,
/// the reads up to it are faster than the platters). A track switch inside the window also
/// says no; that costs only another idle period.
fn left_the_pb(target: &mut dyn ProbeTarget, last: u64, baseline: f64) -> Result<bool> {
    let to = (last + 5 * 4096).min(target.capacity());
    let lat = scan(target, last.saturating_sub(4 * 4096), to)?;
    Ok(lat[1..].iter().all(|&l| l < STREAMED * baseline && l > FAST * baseline))
}

/// Runs SAC §5.1 on `target` (see the module documentation). `progress` is called now and then
/// with the step and the bytes done.
///
/// Errors: bad parameters, a target smaller than `2 C`, an I/O error, or
/// [`ProbeError::NoCliff`] when step 2 writes all of `[0, C)` without a drop.
pub fn detect_pb(
    target: &mut dyn ProbeTarget,
    cfg: &PbProbeConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<PbReport> {
    let capacity = target.capacity();
    cfg.validate(capacity)?;
    let c = cfg.resolved_upper_bound(capacity);
    let bs = cfg.block_size;
    let ops = c / bs;
    let t0 = target.elapsed();

    let (mut emptied, mut rounds) = (false, 0);
    if cfg.empty_first {
        // Step 1.1: random order over [C, 2C).
        let perm = Permutation::new(ops, cfg.seed ^ 0x5ac1);
        for i in 0..ops {
            target.write(c + perm.get(i) * bs, bs)?;
            if i % 4096 == 0 {
                progress(Progress { step: "pb: step 1, random fill", done: i * bs, total: c });
            }
        }
        // Step 1.2: sequentially.
        let mut at = 0;
        while at < c {
            let len = cfg.sequential_len().min(c - at);
            target.write(c + at, len)?;
            at += len;
            if (at / len).is_multiple_of(4096) {
                progress(Progress { step: "pb: step 1, sequential fill", done: at, total: c });
            }
        }
        // Settle until the last write of step 1 has left the PB.
        let last = 2 * c - 4096;
        let baseline = streaming_baseline(target, c, 2 * c)?;
        while rounds < cfg.settle_rounds && !emptied {
            target.idle(Duration::from_secs_f64(cfg.settle_s))?;
            rounds += 1;
            emptied = left_the_pb(target, last, baseline)?;
        }
    }
    let t1 = target.elapsed();

    // Step 2: [0, C) in random order, one write at a time, timed.
    let perm = Permutation::new(ops, cfg.seed ^ 0x5ac2);
    let w_ops = cfg.resolved_window_ops(ops);
    let w_ns = (cfg.window_s * 1e9) as u128;
    let mut per_op: Vec<f32> = Vec::new(); // µs
    let mut windows: Vec<IopsWindow> = Vec::new();
    let (mut in_window, mut window_ns, mut elapsed_ns) = (0u64, 0u128, 0u128);
    let mut next_check = 1;
    let mut found = None;
    for i in 0..ops {
        let t = target.write(perm.get(i) * bs, bs)?;
        per_op.push((t.as_nanos() as f64 / 1e3) as f32);
        in_window += 1;
        window_ns += t.as_nanos();
        if in_window < w_ops && window_ns < w_ns && i + 1 < ops {
            continue;
        }
        let d = (window_ns.max(1) as f64) / 1e9;
        windows.push(IopsWindow {
            first_op: i + 1 - in_window,
            ops: in_window,
            start_s: elapsed_ns as f64 / 1e9,
            duration_s: d,
            iops: in_window as f64 / d,
            smoothed: 0.0,
        });
        elapsed_ns += window_ns;
        (in_window, window_ns) = (0, 0);
        progress(Progress { step: "pb: step 2, random writes", done: (i + 1) * bs, total: c });
        if windows.len() >= next_check {
            next_check = windows.len() + (windows.len() / 16).max(1);
            if let Some(k) = find_knee(&per_op, &cfg.cliff, false) {
                found = Some(k);
                break;
            }
        }
    }
    let t2 = target.elapsed();
    let knee = match found {
        Some(k) => k,
        // The loop ends without confirmation only when [0, C) is written: a last look.
        None => find_knee(&per_op, &cfg.cliff, true).ok_or_else(|| ProbeError::NoCliff {
            ops: per_op.len() as u64,
            written: per_op.len() as u64 * bs,
            upper_bound: c,
            detail: String::new(),
        })?,
    };
    let cliff_op = knee.op as u64;
    let cliff = Cliff {
        op: cliff_op,
        window: windows.iter().rposition(|w| w.first_op <= cliff_op).unwrap_or(0),
        plateau: 1e6 / knee.mean_before,
        after: 1e6 / knee.mean_after,
    };
    let smoothed = rolling_median(&windows.iter().map(|w| w.iops).collect::<Vec<_>>(), SMOOTH);
    for (w, s) in windows.iter_mut().zip(smoothed) {
        w.smoothed = s;
    }
    Ok(PbReport {
        target: target.describe(),
        upper_bound: c,
        block_size: bs,
        pb_bytes: cliff_op * bs,
        cliff_op,
        cliff,
        windows,
        emptied,
        settle_rounds: rounds,
        step1_s: (t1 - t0).as_secs_f64(),
        step2_s: (t2 - t1).as_secs_f64(),
    })
}

/// Latency of a 4 KiB read that streams after the previous one: the 10th percentile of 63 such
/// reads from `at`. Read before step 2 writes `R`, where few blocks are in the PB.
pub(crate) fn streaming_baseline(tgt: &mut dyn ProbeTarget, at: u64, end: u64) -> Result<f64> {
    let to = (at + 64 * 4096).min(end);
    let lat = scan(tgt, at, to)?;
    Ok(quantile(&lat[1.min(lat.len() - 1)..], 0.1))
}

/// A read streamed (no seek, no rotational wait) if it took less than this many times the
/// streaming baseline. Streaming reads scatter by the timing noise (±30% in the tests: at most
/// 1.9× the fastest); a seek adds at least a track-to-track seek or a rotational wait.
///
/// Two effects keep a single slow or fast read from deciding anything:
///
/// - a read that crosses a track boundary exceeds the threshold (a head or cylinder switch,
///   about a millisecond) although it streamed: an isolated slow read;
/// - two PB blocks written close together in time lie on the same cylinder, so reading one right
///   after the other may cost only a short rotational wait: a PB block that reads fast.
///
/// So a PB block on the platters shows as slow reads close together: the seek to the PB, then,
/// at most one read later, the seek back to the band.
pub(crate) const STREAMED: f64 = 2.5;

/// A read took less than this many times the streaming baseline: it did not come off the
/// platters. A PB in flash (PORE Eq. 1's first case) serves its blocks in about a tenth of a
/// millisecond, while the head waits; no streaming read is that fast (±30% noise: at least 0.7×
/// the mean, 0.9× the baseline).
pub(crate) const FAST: f64 = 0.6;

/// 4 KiB reads over `[from, to)`; returns the latencies in ms.
pub(crate) fn scan(tgt: &mut dyn ProbeTarget, from: u64, to: u64) -> Result<Vec<f64>> {
    let mut v = Vec::with_capacity(((to - from) / 4096) as usize);
    let mut at = from;
    while at < to {
        v.push(ms(tgt.read(at, 4096)?));
        at += 4096;
    }
    Ok(v)
}

/// A duration in milliseconds.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
