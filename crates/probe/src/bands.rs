//! Band size detection (SAC §5.2, Fig. 12, after Skylight's band detection).
//!
//! For each target LBA:
//!
//! 1. Select a range `R` of 2 × PB around it (SAC §5.2 step 1); a little less, see the spacer.
//! 2. Write `R` randomly in 4 KiB units, a total equal to the PB size, to fill the PB (step 2).
//!    Three refinements of ours: only [`BandProbeConfig::fill_fraction`] (90%) of the PB is
//!    written, so that a PB estimate a few percent too large cannot clean our own blocks before
//!    step 3; the first [`BandProbeConfig::markers`] writes are spread evenly over `R`; and a
//!    spacer ([`BandProbeConfig::spacer_fraction`], 10% of the PB) is written next, sequentially
//!    and out of `R`, before the rest of `R`. Cleaning is FIFO (Skylight), so the markers' bands
//!    are the first of `R` to be cleaned in step 3, and since they lie far apart, no two cleaned
//!    bands touch and read as one run. What is cleaned past the last marker is the spacer: a
//!    write or two of step 3 on a drive that cleans one band per write, or the rest of a batch
//!    on a drive that cleans down to a low watermark at once (one batch would otherwise clean
//!    a hundred bands of `R`, many of them neighbours). `R` is 2 × (PB − spacer), so step 2
//!    still leaves 45% of its blocks in the PB.
//! 3. Write data elsewhere, out of `R`, to trigger RMWs (step 3). SAC writes "for a few
//!    seconds"; we write 4 KiB blocks at random in a region far from `R` and, after each write
//!    slow enough to be an RMW, check whether the next marker's band is clean (the marker's
//!    own block reads as streamed from the band, and a few blocks around it too), and stop when
//!    every marker's band is. Leftover PB data older than ours is cleaned first and does not
//!    stop us early. The regions of step 3 and of the spacer are new for each target (a block
//!    still in the PB from an earlier target could be updated in place, keeping its old place
//!    in the cleaning order).
//! 4. Read `R` sequentially in 1 MiB requests and record the latencies (step 4). "For a band that
//!    is cleared in step 3, all its data will not appear in PB and all located in the band region,
//!    so the read latency will be constantly low. Otherwise ... the read operations cause the
//!    disk head to swing back and forth between the PB and the band region." The low class is
//!    split off by [`crate::detect::split_threshold`]; runs of at least
//!    [`BandProbeConfig::min_run_reads`] low reads ([`crate::detect::low_runs`]) are cleaned
//!    bands.
//! 5. Our addition: SAC notes that "the first and the last low latency requests may be from the
//!    neighbor bands", so a run is only known to ± one read. Each run's two edges are re-read in
//!    4 KiB requests: inside a cleaned band every block streams; in its uncleaned neighbour the
//!    first block held in the PB costs a seek (or, from a flash PB, reads faster than the
//!    platters stream). The edge is placed there, less the expected number
//!    of neighbour blocks that happen not to be in the PB (`(1 − ρ)/ρ` at PB density `ρ`).
//!
//! The band size near the target is the median of the cleaned bands found; several targets give
//! a profile over the LBA range (bands shrink towards the inner tracks on the ST5000AS0011,
//! Skylight; SAC found 15–40 MB on the ST8000AS0011).

use crate::detect::{low_runs, median, split_threshold, Run};
use crate::error::{invalid, ProbeError, Result};
use crate::pb::{ms, scan, streaming_baseline, FAST, STREAMED};
use crate::perm::Permutation;
use crate::target::ProbeTarget;
use crate::Progress;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Parameters of [`detect_bands`]. Sizes in bytes, multiples of 4096.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BandProbeConfig {
    /// The PB capacity for the probe's write size: [`crate::PbReport::pb_bytes`], or a known
    /// value. Required (0 is refused).
    pub pb_bytes: u64,
    /// Byte offsets to probe around. Default (empty): the middle of the target.
    pub targets: Vec<u64>,
    /// Write size of steps 2 and 3. Default 4096 (SAC §5.2).
    pub write_size: u64,
    /// Fraction of the PB written in step 2. Default 0.9; bounds (0, 1].
    pub fill_fraction: f64,
    /// Evenly spread first writes of step 2 = bands cleaned in step 3. Default 8; at least 1.
    pub markers: usize,
    /// Share of the PB written in step 2, right after the markers, as a spacer: sequential
    /// writes out of `R`. Cleaning is FIFO, so the spacer's bands are the next to be cleaned
    /// after the markers': step 3 may go on cleaning for a write or two after the last marker's
    /// band (one band per write), and a drive that cleans in batches (down to a low watermark)
    /// cleans the oldest PB data up to the batch's size at once. The spacer takes that part, so
    /// no band of `R` but the markers' is cleaned. Default 0.1 (batches of up to a tenth of the
    /// PB); bounds [0, fill_fraction).
    pub spacer_fraction: f64,
    /// A step-3 write slower than this many times a streaming 4 KiB read (or the median step-2
    /// write, if lower) may be an RMW: the markers are checked. Default 10.
    pub spike_factor: f64,
    /// Most data written elsewhere in step 3, as a fraction of the PB. Default 1.
    pub max_elsewhere_fraction: f64,
    /// Idle time before step 2, seconds: lets a drive with idle cleaning empty its PB (see
    /// [`crate::PbProbeConfig::settle_s`]). Default 600.
    pub settle_s: f64,
    /// Read size of step 4. Default 1 MiB (SAC §5.2).
    pub read_size: u64,
    /// Shortest run of low-latency reads taken for a cleaned band. Default 3.
    pub min_run_reads: usize,
    /// Re-read each run's edges in 4 KiB requests. Default `true`.
    pub refine: bool,
    /// Seed of the random orders.
    pub seed: u64,
}

impl Default for BandProbeConfig {
    fn default() -> Self {
        BandProbeConfig {
            pb_bytes: 0,
            targets: Vec::new(),
            write_size: 4096,
            fill_fraction: 0.9,
            markers: 8,
            spacer_fraction: 0.1,
            spike_factor: 10.0,
            max_elsewhere_fraction: 1.0,
            settle_s: 600.0,
            read_size: 1 << 20,
            min_run_reads: 3,
            refine: true,
            seed: 0,
        }
    }
}

impl BandProbeConfig {
    /// Checks the parameters against a target of `capacity` bytes.
    pub fn validate(&self, capacity: u64) -> Result<()> {
        for (field, v) in [("write_size", self.write_size), ("read_size", self.read_size)] {
            if v == 0 || !v.is_multiple_of(4096) {
                return Err(invalid(field, v, "expected a non-zero multiple of 4096 bytes"));
            }
        }
        if self.pb_bytes < 16 * self.write_size {
            return Err(invalid(
                "pb_bytes",
                self.pb_bytes,
                "the PB size is needed (at least 16 writes); detect it first or give it",
            ));
        }
        if !(self.fill_fraction > 0.0 && self.fill_fraction <= 1.0) {
            return Err(invalid("fill_fraction", self.fill_fraction, "expected (0, 1]"));
        }
        if !(self.spacer_fraction >= 0.0 && self.spacer_fraction < self.fill_fraction) {
            return Err(invalid(
                "spacer_fraction",
                self.spacer_fraction,
                "expected 0 <= spacer_fraction < fill_fraction",
            ));
        }
        if self.markers == 0 {
            return Err(invalid("markers", 0, "at least one band must be cleaned"));
        }
        if !(self.spike_factor > 1.0 && self.spike_factor.is_finite()) {
            return Err(invalid("spike_factor", self.spike_factor, "expected > 1"));
        }
        if !(self.max_elsewhere_fraction > 0.0 && self.max_elsewhere_fraction.is_finite()) {
            return Err(invalid("max_elsewhere_fraction", self.max_elsewhere_fraction, "expected > 0"));
        }
        if !(self.settle_s.is_finite() && self.settle_s >= 0.0) {
            return Err(invalid("settle_s", self.settle_s, "expected seconds >= 0"));
        }
        if self.min_run_reads == 0 {
            return Err(invalid("min_run_reads", 0, "expected at least 1"));
        }
        let needed = self.range_bytes() + self.elsewhere_bytes() + self.spacer_bytes();
        if needed > capacity {
            return Err(ProbeError::TooSmall {
                what: "band detection (2 × PB around the target, plus a PB elsewhere and the spacer)",
                needed,
                capacity,
                hint: String::new(),
            });
        }
        if let Some(&t) = self.targets.iter().find(|&&t| t >= capacity) {
            return Err(invalid("targets", t, format!("beyond the target's capacity of {capacity} bytes")));
        }
        Ok(())
    }

    fn elsewhere_bytes(&self) -> u64 {
        self.pb_bytes.div_ceil(self.write_size) * self.write_size
    }

    fn spacer_bytes(&self) -> u64 {
        (self.spacer_fraction * self.pb_bytes as f64) as u64 / self.write_size * self.write_size
    }

    /// `R`: twice the part of the PB left for it, so that step 2 fills `fill_fraction / 2` of
    /// it (45%) whatever the spacer.
    fn range_bytes(&self) -> u64 {
        let align = self.write_size.max(self.read_size);
        let left = self.pb_bytes as f64 * (1.0 - self.spacer_fraction / self.fill_fraction);
        (2.0 * left) as u64 / align * align
    }
}

/// A cleaned band found by [`detect_bands`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DetectedBand {
    /// The run of low-latency reads, as read indices into [`BandSample::reads`].
    pub run: Run,
    /// Estimated first byte of the band.
    pub start: u64,
    /// Estimated size in bytes.
    pub size: u64,
    /// Both edges were placed by the 4 KiB re-read (else from the run alone: ± half a read).
    pub refined: bool,
    /// Taken into the estimate (not a fragment shorter than half the median, nor a run that
    /// looks like several bands, longer than 1.7 × the median).
    pub accepted: bool,
}

/// One read of step 4.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimedRead {
    /// Byte offset.
    pub offset: u64,
    /// Service time, ms.
    pub latency_ms: f64,
}

/// Band detection around one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BandSample {
    /// The target byte offset.
    pub target: u64,
    /// First byte of the 2 × PB range `R`.
    pub range_start: u64,
    /// Length of `R`.
    pub range_len: u64,
    /// Step-3 writes elsewhere.
    pub elsewhere_writes: u64,
    /// Step-3 writes slow enough to be RMWs.
    pub spikes: u64,
    /// Markers whose band was found clean before step 4.
    pub markers_cleaned: usize,
    /// Step 4's reads in order.
    pub reads: Vec<TimedRead>,
    /// Latency threshold between low and high reads, ms.
    pub threshold_ms: f64,
    /// Ratio of the high to the low class's geometric mean latency.
    pub separation: f64,
    /// The cleaned bands, in LBA order.
    pub bands: Vec<DetectedBand>,
    /// Median size of the accepted bands, bytes.
    pub band_size: u64,
}

/// The band-size profile over the targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BandReport {
    /// The target, as it describes itself.
    pub target: String,
    /// The PB size used.
    pub pb_bytes: u64,
    /// Read size of step 4.
    pub read_size: u64,
    /// One sample per target LBA, in the order probed.
    pub samples: Vec<BandSample>,
}

impl BandReport {
    /// Every read of step 4 as CSV: `target,read,offset,latency_ms,low,band` (`band` is the index
    /// of the detected band the read belongs to, or empty).
    pub fn reads_csv(&self) -> String {
        let mut s = String::from("target,read,offset,latency_ms,low,band\n");
        for smp in &self.samples {
            for (i, r) in smp.reads.iter().enumerate() {
                let band = smp.bands.iter().position(|b| b.run.start <= i && i < b.run.end());
                s.push_str(&format!(
                    "{},{i},{},{:.6},{},{}\n",
                    smp.target,
                    r.offset,
                    r.latency_ms,
                    u8::from(r.latency_ms < smp.threshold_ms),
                    band.map(|b| b.to_string()).unwrap_or_default()
                ));
            }
        }
        s
    }

    /// The detected bands as CSV: `target,band,start,size,first_read,reads,refined,accepted`.
    pub fn bands_csv(&self) -> String {
        let mut s = String::from("target,band,start,size,first_read,reads,refined,accepted\n");
        for smp in &self.samples {
            for (i, b) in smp.bands.iter().enumerate() {
                s.push_str(&format!(
                    "{},{i},{},{},{},{},{},{}\n",
                    smp.target, b.start, b.size, b.run.start, b.run.len, b.refined, b.accepted
                ));
            }
        }
        s
    }

    /// Every accepted band over all targets, as `(start, size)`, in LBA order.
    pub fn accepted_bands(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self
            .samples
            .iter()
            .flat_map(|s| s.bands.iter().filter(|b| b.accepted).map(|b| (b.start, b.size)))
            .collect();
        v.sort_unstable();
        v
    }
}

/// Runs SAC §5.2 around each target (see the module documentation).
///
/// Errors: bad parameters, a target too small, an I/O error, or [`ProbeError::NoBands`] when
/// a target's reads show no cleaned band.
pub fn detect_bands(
    target: &mut dyn ProbeTarget,
    cfg: &BandProbeConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<BandReport> {
    let capacity = target.capacity();
    cfg.validate(capacity)?;
    let targets = if cfg.targets.is_empty() { vec![capacity / 2] } else { cfg.targets.clone() };
    let mut samples = Vec::with_capacity(targets.len());
    for (i, &t) in targets.iter().enumerate() {
        let seed = cfg.seed.wrapping_add(i as u64 * 0x9e37_79b9);
        samples.push(probe_one(target, cfg, t, i as u64, seed, progress)?);
    }
    Ok(BandReport { target: target.describe(), pb_bytes: cfg.pb_bytes, read_size: cfg.read_size, samples })
}

fn probe_one(
    tgt: &mut dyn ProbeTarget,
    cfg: &BandProbeConfig,
    lba: u64,
    index: u64,
    seed: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<BandSample> {
    let capacity = tgt.capacity();
    let ws = cfg.write_size;
    let align = ws.max(cfg.read_size);
    // Step 1: R = 2 × PB around the target (less the spacer's share), moved inside the target
    // if it sticks out.
    let range_len = cfg.range_bytes();
    let range_start = (lba.saturating_sub(range_len / 2).min(capacity - range_len)) / align * align;
    let range_end = range_start + range_len;
    // Step 3's region and the spacer's, next to each other at the far end of the drive from R.
    // Writes there must be appended to the PB: a block still in the PB from earlier writes may be
    // updated where it is (an in-place PB), keeping its old place in the cleaning order. So each
    // target of a run takes its own pair of regions, and on the low side they start above the
    // PB probe's range `[0, 2C)` (default `C`).
    let e_len = cfg.elsewhere_bytes();
    let sp_len = cfg.spacer_bytes();
    let pair = e_len + sp_len;
    let no_room = || ProbeError::TooSmall {
        what: "band detection (a region out of R for step 3 and the spacer, per target)",
        needed: range_len + (index + 1) * pair,
        capacity,
        hint: format!("; too many targets for the room left around byte {lba}"),
    };
    let (e_start, sp_start) = if range_start + range_len / 2 < capacity / 2 {
        let end = capacity.checked_sub(index * pair).map(|e| e / ws * ws).filter(|&e| e >= pair);
        let end = end.ok_or_else(no_room)?;
        (end - e_len, end - pair)
    } else {
        let base = (2 * crate::PbProbeConfig::default_upper_bound(capacity) + index * pair) / ws * ws;
        if base + pair > capacity {
            return Err(no_room());
        }
        (base, base + e_len)
    };
    let overlaps = |a: u64, l: u64| a < range_end && range_start < a + l;
    if overlaps(e_start, e_len) || overlaps(sp_start, sp_len) {
        return Err(ProbeError::TooSmall {
            what: "band detection (a region out of the 2 × PB range for step 3)",
            needed: range_len + e_len + sp_len,
            capacity,
            hint: format!("; the range around byte {lba} leaves no room elsewhere"),
        });
    }
    tgt.idle(Duration::from_secs_f64(cfg.settle_s))?;
    let baseline = streaming_baseline(tgt, range_start, range_end)?;

    // Step 2: fill the PB with random 4 KiB writes of R: markers, the spacer (out of R), then
    // the rest.
    let slots = range_len / ws;
    let sp_writes = sp_len / ws;
    let writes =
        ((cfg.fill_fraction * cfg.pb_bytes as f64) as u64 / ws).saturating_sub(sp_writes).clamp(1, slots);
    let k = cfg.markers.min(writes as usize) as u64;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let stratum = slots / k;
    let markers: Vec<u64> =
        (0..k).map(|j| j * stratum + stratum / 4 + rng.random_range(0..(stratum / 2).max(1))).collect();
    let mut step2_ms = Vec::with_capacity(writes as usize);
    for &m in markers.iter().take(writes as usize) {
        step2_ms.push(ms(tgt.write(range_start + m * ws, ws)?));
    }
    for j in 0..sp_writes {
        tgt.write(sp_start + j * ws, ws)?;
    }
    let perm = Permutation::new(slots, seed ^ 0xba4d);
    let mut i = 0;
    while (step2_ms.len() as u64) < writes {
        let s = perm.get(i);
        i += 1;
        if markers.contains(&s) {
            continue;
        }
        step2_ms.push(ms(tgt.write(range_start + s * ws, ws)?));
        if step2_ms.len() % 4096 == 0 {
            progress(Progress {
                step: "bands: step 2, fill the PB",
                done: step2_ms.len() as u64 * ws,
                total: writes * ws,
            });
        }
    }
    // A PB append streams like a sequential read; step 2's median alone would be an RMW when
    // step 2 had to clean older PB contents for every write.
    let spike_ms = cfg.spike_factor * baseline.min(median(&step2_ms));

    // Step 3: write elsewhere until every marker's band has been cleaned.
    let e_perm = Permutation::new(e_len / ws, seed ^ 0xe15e);
    let budget = ((cfg.max_elsewhere_fraction * cfg.pb_bytes as f64) as u64 / ws).max(1);
    let (mut n3, mut spikes, mut cleaned) = (0u64, 0u64, 0usize);
    let marker_at = |j: usize| range_start + markers[j] * ws;
    let range = (range_start, range_end);
    // The write after a check seeks back to where the PB is appended: slow, but not an RMW.
    let mut just_checked = false;
    while n3 < budget && cleaned < markers.len() {
        let t = tgt.write(e_start + e_perm.get(n3 % e_perm.len()) * ws, ws)?;
        n3 += 1;
        if std::mem::take(&mut just_checked) {
            continue;
        }
        if ms(t) > spike_ms {
            spikes += 1;
            just_checked = true;
            // FIFO: the newest marker's band clean means all of them are.
            if band_is_clean(tgt, marker_at(markers.len() - 1), range, baseline)? {
                cleaned = markers.len();
            }
            while cleaned + 1 < markers.len() && band_is_clean(tgt, marker_at(cleaned), range, baseline)? {
                cleaned += 1;
            }
        }
        if n3 % 1024 == 0 {
            progress(Progress { step: "bands: step 3, clean some bands", done: n3 * ws, total: budget * ws });
        }
    }

    // Step 4: read R sequentially.
    let r = cfg.read_size;
    let n_reads = range_len / r;
    let mut reads = Vec::with_capacity(n_reads as usize);
    for j in 0..n_reads {
        let off = range_start + j * r;
        reads.push(TimedRead { offset: off, latency_ms: ms(tgt.read(off, r)?) });
        if j % 256 == 0 {
            progress(Progress { step: "bands: step 4, sequential read", done: j * r, total: range_len });
        }
    }
    let lat: Vec<f64> = reads.iter().map(|x| x.latency_ms).collect();
    let no_bands = |reason: String| ProbeError::NoBands { target: lba, reason };
    let (threshold, separation) =
        split_threshold(&lat).ok_or_else(|| no_bands("every read took the same time".into()))?;
    if separation < 2.0 {
        return Err(no_bands(format!(
            "the reads do not split into a low and a high class (high/low = {separation:.2}); \
             no band was cleaned, or the drive reads its PB as fast as its bands"
        )));
    }
    // Runs touching either end of R may be cut off: not whole bands.
    let runs: Vec<Run> = low_runs(&lat, threshold, cfg.min_run_reads)
        .into_iter()
        .filter(|run| run.start > 0 && run.end() < lat.len())
        .collect();
    if runs.is_empty() {
        return Err(no_bands(format!(
            "no run of {} or more low-latency reads (threshold {threshold:.3} ms) inside the range",
            cfg.min_run_reads
        )));
    }

    // Step 5: edges to the block; ρ = PB blocks per block of R, for the overshoot correction.
    let rho = (writes as f64 / slots as f64).clamp(1e-3, 1.0);
    let overshoot = (1.0 - rho) / rho;
    let mut bands = Vec::with_capacity(runs.len());
    for run in runs {
        let coarse_start = range_start + run.start as u64 * r;
        let coarse_end = range_start + run.end() as u64 * r;
        let (mut start, mut end) = (coarse_start as f64 - r as f64 / 2.0, coarse_end as f64 + r as f64 / 2.0);
        let mut refined = false;
        if cfg.refine {
            let s = refine_start(tgt, coarse_start, r)?;
            let e = refine_end(tgt, coarse_end, r)?;
            if let (Some(s), Some(e)) = (s, e) {
                start = s as f64 + overshoot * 4096.0;
                end = e as f64 - overshoot * 4096.0;
                refined = true;
            }
        }
        let start = (start.max(0.0) / 4096.0).round() as u64 * 4096;
        let end = (end.max(0.0) / 4096.0).round() as u64 * 4096;
        bands.push(DetectedBand { run, start, size: end.saturating_sub(start), refined, accepted: true });
    }
    let mid = median(&bands.iter().map(|b| b.size as f64).collect::<Vec<_>>());
    for b in &mut bands {
        b.accepted = (b.size as f64) >= 0.5 * mid && (b.size as f64) <= 1.7 * mid;
    }
    let accepted: Vec<f64> = bands.iter().filter(|b| b.accepted).map(|b| b.size as f64).collect();
    let band_size = if accepted.is_empty() { mid } else { median(&accepted) }.round() as u64;
    Ok(BandSample {
        target: lba,
        range_start,
        range_len,
        elsewhere_writes: n3,
        spikes,
        markers_cleaned: cleaned,
        reads,
        threshold_ms: threshold,
        separation,
        bands,
        band_size,
    })
}

/// Blocks per window of [`band_is_clean`].
const CHECK_WINDOW: u64 = 12;

/// Whether the band holding the block at `at` (a marker) is clean (none of its blocks in the
/// PB). Scans windows of [`CHECK_WINDOW`] blocks: ending at `at`, centred on it, starting one
/// block before it, starting at it. The band is clean if, in one window, the marker's read
/// streamed, at most one read is slow (a track switch) and none is fast. If the marker is still
/// in the PB, reading it seeks to the PB on the platters, or comes fast from a flash PB; a
/// window's first read always seeks, so in the last window the read after the marker stands in
/// (the seek back). A band of at least 22 blocks holds one of the windows whole if it is clean.
/// If it is not, besides the marker, at the PB density the probe leaves (45%), a window reads
/// several more PB blocks of the band, or of a neighbour.
fn band_is_clean(tgt: &mut dyn ProbeTarget, at: u64, range: (u64, u64), baseline: f64) -> Result<bool> {
    let w = CHECK_WINDOW * 4096;
    let slow = |l: f64| l >= STREAMED * baseline;
    let fast = |l: f64| l <= FAST * baseline;
    for from in [at.saturating_sub(w - 4096), at.saturating_sub(w / 2), at.saturating_sub(4096), at] {
        if from < range.0 || from + w > range.1 {
            continue;
        }
        let lat = scan(tgt, from, from + w)?;
        let m = (((at - from) / 4096) as usize).max(1);
        let marker_streamed = !slow(lat[m]) && !fast(lat[m]);
        let slow_reads = lat[1..].iter().filter(|&&l| slow(l)).count();
        let any_fast = lat[1..].iter().any(|&l| fast(l));
        if marker_streamed && slow_reads <= 1 && !any_fast {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Blocks read inside the cleaned band at each edge scan, as the streaming baseline.
const INSIDE: u64 = 8;

/// How each read of an edge scan looks against the streaming reads inside the band.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    Streamed,
    /// Slower: a seek (to a PB on the platters, or back from it), or a track switch.
    Slow,
    /// Faster: a block from a flash PB.
    Fast,
}

fn classify(lat: &[f64], inside: &[f64]) -> Vec<Read> {
    let m = median(inside);
    lat.iter()
        .map(|&l| {
            if l > STREAMED * m {
                Read::Slow
            } else if l < FAST * m {
                Read::Fast
            } else {
                Read::Streamed
            }
        })
        .collect()
}

/// Whether read `i` of an edge scan is evidence of a PB block: fast (a flash PB block), or slow
/// with another slow read at most two reads away on the side given (an isolated slow read is a
/// track switch).
fn pb_evidence(r: &[Read], i: usize, look_back: bool) -> bool {
    let slow = |j: usize| r.get(j).copied() == Some(Read::Slow);
    r[i] == Read::Fast
        || slow(i)
            && if look_back {
                (i >= 1 && slow(i - 1)) || (i >= 2 && slow(i - 2))
            } else {
                // Past the end of the scan counts as slow: the scan stopped at the evidence.
                i + 1 >= r.len() || slow(i + 1) || slow(i + 2)
            }
}

/// First byte of the band whose low-latency run starts at `coarse_start`: scans from one read
/// before it into the band. The last PB evidence is the neighbour's last PB block (a fast read)
/// or the read after it (the seek back); the band starts after the block, or at the read.
fn refine_start(tgt: &mut dyn ProbeTarget, coarse_start: u64, r: u64) -> Result<Option<u64>> {
    let from = coarse_start.saturating_sub(r + 4096);
    let to = coarse_start + INSIDE * 4096;
    let lat = scan(tgt, from, to)?;
    let reads = classify(&lat, &lat[lat.len() - INSIDE as usize..]);
    // Index 0 seeks whatever it reads: slow, and evidence for index 1 or 2 only with another.
    let last = (1..lat.len()).rev().find(|&i| pb_evidence(&reads, i, true));
    Ok(last.map(|i| from + (i as u64 + u64::from(reads[i] == Read::Fast)) * 4096))
}

/// One past the last byte of the band whose low-latency run ends at `coarse_end`: scans from
/// inside the band over the next read. The first PB evidence is the neighbour's first PB block.
fn refine_end(tgt: &mut dyn ProbeTarget, coarse_end: u64, r: u64) -> Result<Option<u64>> {
    let from = coarse_end.saturating_sub(INSIDE * 4096);
    let to = coarse_end + r + 4096;
    let cap = tgt.capacity();
    let lat = scan(tgt, from, to.min(cap))?;
    let reads = classify(&lat, &lat[1..INSIDE as usize]);
    let first = (INSIDE as usize..lat.len()).find(|&i| pb_evidence(&reads, i, false));
    Ok(first.map(|i| from + i as u64 * 4096))
}
