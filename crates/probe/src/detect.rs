//! The analysis half of the probes: pure functions over measured series, with no I/O, so they
//! can be tested on hand-made series.
//!
//! - [`find_knee`]: the IOPS drop of SAC §5.1 step 2 ("a sudden drop of IOPS will be observed
//!   ... The written data amount before the sudden IOPS drop is the PB capacity"), placed on the
//!   exact write in the series of per-write service times.
//! - [`rolling_median`]: the smoothed IOPS series of the evidence.
//! - [`split_threshold`] and [`low_runs`]: the runs of constantly low read latency of SAC §5.2
//!   step 4 ("for a band that is cleared in step 3 ... the read latency will be constantly
//!   low").

use serde::{Deserialize, Serialize};

/// Parameters of [`find_knee`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CliffParams {
    /// The knee must be a drop: the mean write rate from it on below `fraction` × the rate
    /// before it. Default 0.5 (SAC Table 3 shows drops of 12× to 350×); bounds (0, 1).
    pub fraction: f64,
    /// Writes needed before the knee. Default 16; at least 1.
    pub min_before: usize,
    /// Writes needed after the knee, as a fraction of the writes before it. On the complete
    /// series only splits with that many after them are looked at: a short last stretch holding
    /// one long stall would otherwise look like the largest drop of all. The PB probe stops
    /// writing once a knee is found, so a drive that stays slow after its cliff (SAC Table 3:
    /// 41 IOPS) is not written for hours. Default 0.05; bounds (0, 10].
    pub after_fraction: f64,
    /// Slow writes ([`Knee::slow_after`]) needed from the knee on, so that one hiccup is not a
    /// knee. Default 8; at least 1.
    pub min_after: usize,
    /// The plateau must be this many times longer than the mean spacing of the slow writes
    /// after the knee. Otherwise the "plateau" is only the wait for the next cleaning: a PB that
    /// could not be emptied before step 2 may have a few slots free (fewer than a band), then
    /// cleans its leftover data one band at a time, a slow write per band, and that start is not
    /// the PB filling up. Default 3: bands of up to 3× the mean size. A drive whose batches free
    /// more than a third of its PB passes only the rule for rare cleanings ([`find_knee`] on the
    /// complete series). At least 0.
    pub plateau_gaps: f64,
    /// A write is slow when it takes more than this many times the median write before the
    /// knee. Default 10: a PB append at ±30% timing jitter stays under 2×, one that crosses to
    /// the next track of the PB about 5× (a 1.2 ms head switch after 0.23 ms appends on a
    /// 7200 rpm disk); a band RMW reads and writes a band, at least a revolution each, 30× or
    /// more.
    pub slow_factor: f64,
}

impl Default for CliffParams {
    fn default() -> Self {
        CliffParams {
            fraction: 0.5,
            min_before: 16,
            after_fraction: 0.05,
            min_after: 8,
            slow_factor: 10.0,
            plateau_gaps: 3.0,
        }
    }
}

/// The drop found by [`find_knee`], as [`crate::PbReport`] records it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// Writes before the knee: the index of the first write of the slow segment.
    pub op: u64,
    /// Index of the IOPS window holding that write.
    pub window: usize,
    /// IOPS before the knee: writes over their total service time.
    pub plateau: f64,
    /// IOPS from the knee on.
    pub after: f64,
}

/// A change point found by [`find_knee`] in a series of per-write service times.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Index of the first write of the slow segment (= writes before it).
    pub op: usize,
    /// Mean service time before the knee, in the input's unit.
    pub mean_before: f64,
    /// Mean service time from the knee on.
    pub mean_after: f64,
    /// Slow writes from the knee on: slower than [`CliffParams::slow_factor`] × the median write
    /// before it (writes that waited for a cleaning).
    pub slow_after: usize,
    /// Accepted on the complete series only, by the rule for drives that clean rarely and much
    /// at a time (see [`find_knee`]).
    pub few_cleanings: bool,
}

/// The knee of a series of per-write service times: the write at which the drive starts paying
/// for cleaning its PB (SAC §5.1 step 2: "when the PB is full and it begins to clean up the
/// data, a sudden drop of IOPS will be observed").
///
/// The series is taken as two segments of independent service times with different means, and
/// the split is placed by maximum likelihood under an exponential model: `τ` maximises
/// `−τ ln m₁ − (n − τ) ln m₂`, with `m₁`, `m₂` the means of `x[..τ]` and `x[τ..]` (only splits
/// with `m₂ > m₁` count). The model is scale-free: what counts is how many times slower the
/// writes got, not by how many milliseconds. So
///
/// - on a drive whose PB was empty, every write before the PB fills is an append and the split
///   lands on the first write that paid for a cleaning, however that cleaning goes on afterwards:
///   one band per write, or a batch of hundreds of RMWs in one write followed by fast writes
///   into the freed slots (a drive with a low watermark, whose IOPS oscillates instead of staying
///   low);
/// - on a drive that still held data when step 2 began, the first segment is that leftover
///   being cleaned (one RMW per band of it), and the split lands where cleaning starts on the
///   step's own, scattered writes.
///
/// Splits are looked at with at least `min_before` writes before them (and, when `complete`,
/// `after_fraction` of that after them). The split is returned only when it has
/// `after_fraction` of its writes before it after it, is a drop, `m₂ ≥ m₁ / fraction`, and
///
/// - `min_after` slow writes from it on, the plateau at least `plateau_gaps` times their mean
///   spacing; or,
/// - when `complete` (no more writes will come: the caller wrote all it could), at least two
///   slow writes from it on, no stretch between them or after the last longer than the plateau
///   (5% allowed): after the plateau, the drive cleaned, and no cleaning freed more than the PB
///   can hold. That is a drive that cleans rarely and much at a time: the `st8000as0002`
///   profile with no entry limit frees nearly its whole PB (30 GB of 40 MB bands, a third of
///   each band's blocks in the PB) in one stall of an hour, so a range `C` of 3× the PB holds
///   only three cleanings. The stretch rule keeps out the start of a PB that was not empty
///   (a plateau of less than a band, then a cleaning per band).
///
/// `None` otherwise (the caller writes on and asks again), or for fewer than `min_before + 1`
/// samples. Values at or below zero count as the smallest positive `f64`.
pub fn find_knee<T: Copy + Into<f64>>(x: &[T], p: &CliffParams, complete: bool) -> Option<Knee> {
    let n = x.len();
    let min_before = p.min_before.max(1);
    if n <= min_before {
        return None;
    }
    let v = |i: usize| x[i].into().max(f64::MIN_POSITIVE);
    let total: f64 = (0..n).map(v).sum();
    let mut left: f64 = (0..min_before).map(v).sum();
    let mut best: Option<(f64, usize)> = None;
    // n − τ ≥ after_fraction × τ: required of the knee; on the complete series, of every split
    // looked at (there is no later data to let the best split move on).
    let enough_after = ((n as f64 / (1.0 + p.after_fraction.max(0.0))).floor() as usize).min(n - 1);
    let last = if complete { enough_after } else { n - 1 };
    for tau in min_before..=last {
        let (a, b) = (tau as f64, (n - tau) as f64);
        let (m1, m2) = (left / a, (total - left).max(f64::MIN_POSITIVE) / b);
        if m2 > m1 {
            let ll = -a * m1.ln() - b * m2.ln();
            if best.is_none_or(|(l, _)| ll > l) {
                best = Some((ll, tau));
            }
        }
        left += v(tau);
    }
    let (_, tau) = best?;
    let before: f64 = (0..tau).map(v).sum();
    let (m1, m2) = (before / tau as f64, (total - before) / (n - tau) as f64);
    let mut head: Vec<f64> = (0..tau).map(v).collect();
    let mid = head.len() / 2;
    let (_, med, _) = head.select_nth_unstable_by(mid, f64::total_cmp);
    let slow = p.slow_factor * *med;
    let slow_at: Vec<usize> = (tau..n).filter(|&i| v(i) > slow).collect();
    let slow_after = slow_at.len();
    let spacing = (n - tau) as f64 / slow_after.max(1) as f64;
    let drop = m2 * p.fraction >= m1 && tau <= enough_after;
    let many = slow_after >= p.min_after.max(1) && tau as f64 >= p.plateau_gaps * spacing;
    let longest = slow_at.windows(2).map(|w| w[1] - w[0]).chain(slow_at.last().map(|&l| n - l)).max();
    let few = complete && slow_after >= 2 && longest.is_some_and(|g| g as f64 <= 1.05 * tau as f64);
    (drop && (many || few)).then_some(Knee {
        op: tau,
        mean_before: m1,
        mean_after: m2,
        slow_after,
        few_cleanings: !many,
    })
}

/// Centred rolling median of `x` with an odd `width` (even widths are rounded up); the window
/// shrinks at both ends. A step between two levels stays exactly where it was.
pub fn rolling_median(x: &[f64], width: usize) -> Vec<f64> {
    let half = width / 2;
    let mut buf = Vec::with_capacity(2 * half + 1);
    (0..x.len())
        .map(|i| {
            let lo = i.saturating_sub(half);
            let hi = (i + half + 1).min(x.len());
            buf.clear();
            buf.extend_from_slice(&x[lo..hi]);
            median_in_place(&mut buf)
        })
        .collect()
}

pub(crate) use shingled_core::numeric::median_in_place;

/// Median of a non-empty slice.
pub(crate) fn median(v: &[f64]) -> f64 {
    median_in_place(&mut v.to_vec())
}

/// `q`-quantile (0 ≤ q ≤ 1, nearest rank) of a non-empty slice.
pub(crate) fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((s.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize]
}

/// A latency threshold separating two populations (low: reads of cleaned bands streaming off the
/// platter; high: reads that seek to the PB), by Otsu's method on the logarithms: the split
/// that maximises the between-class variance. Returns the threshold (in the input's unit) and
/// the ratio of the two classes' geometric means. `None` if there are fewer than two distinct
/// positive values.
pub fn split_threshold(latencies: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = latencies.iter().copied().filter(|x| *x > 0.0).map(f64::ln).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n < 2 || v[0] == v[n - 1] {
        return None;
    }
    let total: f64 = v.iter().sum();
    let mut left = 0.0;
    let mut best: Option<(f64, usize)> = None;
    for i in 0..n - 1 {
        left += v[i];
        if v[i] == v[i + 1] {
            continue;
        }
        let (a, b) = ((i + 1) as f64, (n - i - 1) as f64);
        let d = left / a - (total - left) / b;
        let score = a * b * d * d;
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, i));
        }
    }
    let (_, i) = best?;
    let lo_mean = v[..=i].iter().sum::<f64>() / (i + 1) as f64;
    let hi_mean = v[i + 1..].iter().sum::<f64>() / (n - i - 1) as f64;
    Some((((v[i] + v[i + 1]) / 2.0).exp(), (hi_mean - lo_mean).exp()))
}

/// A run of consecutive samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// Index of the first sample.
    pub start: usize,
    /// Number of samples.
    pub len: usize,
}

impl Run {
    /// One past the last sample.
    pub fn end(&self) -> usize {
        self.start + self.len
    }
}

/// Maximal runs of at least `min_len` consecutive samples below `threshold`.
pub fn low_runs(latencies: &[f64], threshold: f64, min_len: usize) -> Vec<Run> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &l) in latencies.iter().chain(std::iter::once(&f64::INFINITY)).enumerate() {
        match (l < threshold, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s >= min_len.max(1) {
                    out.push(Run { start: s, len: i - s });
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn rolling_median_keeps_steps_and_drops_spikes() {
        let x = [10.0, 10.0, 1.0, 10.0, 10.0, 10.0, 2.0, 2.0, 2.0, 9.0, 2.0, 2.0];
        let s = rolling_median(&x, 5);
        assert_eq!(&s[..6], &[10.0; 6]);
        assert_eq!(&s[6..], &[2.0; 6]);
        assert_eq!(rolling_median(&x, 1), x.to_vec());
    }

    /// Per-write times: 0.317 ms appends (SAC Table 3: 3156 IOPS), ±30% jitter, then from
    /// `knee` on what `after(i)` adds (ms).
    fn writes(n: usize, knee: usize, seed: u64, after: impl Fn(usize) -> f64) -> Vec<f64> {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let extra = if i >= knee { after(i - knee) } else { 0.0 };
                (0.317 + extra) * (1.0 + rng.random_range(-0.3..=0.3))
            })
            .collect()
    }

    /// SAC Table 3 (4 KB, QD1): 3156 IOPS, then 41: every write pays an RMW.
    #[test]
    fn knee_of_sac_table_3_is_the_first_slow_write() {
        let x = writes(6000, 5000, 1, |_| 24.0);
        let k = find_knee(&x, &CliffParams::default(), false).unwrap();
        assert_eq!(k.op, 5000);
        assert!(k.mean_after / k.mean_before > 50.0, "{k:?}");
        // An RMW every fourth write: still the first one.
        let x = writes(6000, 5000, 2, |i| if i % 4 == 0 { 25.0 } else { 0.0 });
        assert_eq!(find_knee(&x, &CliffParams::default(), false).unwrap().op, 5000);
    }

    /// A drive that cleans in batches down to a low watermark: the write that finds the PB full
    /// waits for hundreds of RMWs (29 s), then 1099 writes go at PB speed into the freed slots,
    /// and the stalls shrink as the head of the log reaches holes. IOPS per window oscillates
    /// and even recovers; the knee is still the first stall.
    #[test]
    fn knee_of_batch_cleaning_is_the_first_stall() {
        let stall = |i: usize| {
            if i.is_multiple_of(1100) {
                29_000.0 / (1.0 + (i / 1100) as f64).powi(2)
            } else {
                0.0
            }
        };
        let x = writes(90_000, 73_218, 3, stall);
        assert_eq!(find_knee(&x, &CliffParams::default(), false).unwrap().op, 73_218);
        // Too few stalls after it yet (each stall and the seek back after it are the slow writes).
        let x = writes(73_218 + 5 * 1100, 73_218, 3, stall);
        assert_eq!(find_knee(&x, &CliffParams::default(), false), None);
    }

    /// A PB that was not empty: first its leftover sequential data is cleaned, one RMW per band
    /// of 61 blocks; then the step's own scattered blocks, an RMW every third write.
    #[test]
    fn knee_after_leftover_cleaning() {
        let x: Vec<f64> = writes(20_000, 12_000, 4, |i| if i % 3 == 0 { 45.0 } else { 0.0 })
            .into_iter()
            .enumerate()
            .map(|(i, t)| if i < 12_000 && i % 61 == 30 { t + 45.0 } else { t })
            .collect();
        let k = find_knee(&x, &CliffParams::default(), false).unwrap();
        assert!((11_970..=12_000).contains(&k.op), "{k:?}");
    }

    /// A drive that frees nearly its whole PB in each stall (the `st8000as0002` profile at full
    /// size: 7.39 M writes, an hour's stall, 7.32 M writes, ...): three stalls in all of `C`.
    /// The knee is taken on the complete series only.
    #[test]
    fn knee_of_rare_huge_cleanings_on_the_complete_series() {
        let stall = |i: usize| if i.is_multiple_of(6900) { 1.2e6 } else { 0.0 };
        let x = writes(21_000, 7000, 11, stall);
        assert_eq!(find_knee(&x, &CliffParams::default(), false), None);
        let k = find_knee(&x, &CliffParams::default(), true).unwrap();
        assert_eq!(k.op, 7000);
        assert!(k.few_cleanings, "{k:?}");
        // Not the start of a PB that was not empty: 2586 writes into free slots, then a band of
        // leftover cleaned every 4608 writes. Each cleaning freed more than the "plateau".
        let x: Vec<f64> = writes(30_000, 30_000, 12, |_| 0.0)
            .into_iter()
            .enumerate()
            .map(|(i, t)| if i >= 2586 && (i - 2586) % 4608 == 0 { t + 2190.0 } else { t })
            .collect();
        assert_eq!(find_knee(&x, &CliffParams::default(), true), None);
    }

    #[test]
    fn no_knee_without_a_drop() {
        let p = CliffParams::default();
        assert_eq!(find_knee(&writes(5000, 5000, 5, |_| 0.0), &p, true), None);
        // One hiccup is not a knee.
        let mut x = writes(5000, 5000, 6, |_| 0.0);
        x[3000] = 1000.0;
        assert_eq!(find_knee(&x, &p, true), None);
        // A slow-down less than 2×.
        assert_eq!(find_knee(&writes(5000, 2500, 7, |_| 0.2), &p, true), None);
        // Slow, then fast.
        let x: Vec<f64> = writes(5000, 5000, 8, |_| 0.0)
            .iter()
            .enumerate()
            .map(|(i, t)| if i < 2500 { t * 10.0 } else { *t })
            .collect();
        assert_eq!(find_knee(&x, &p, false), None);
        // Too few writes before it.
        assert_eq!(find_knee(&writes(5000, 4, 9, |_| 24.0), &p, true), None);
        assert_eq!(find_knee::<f64>(&[], &p, true), None);
        let x32: Vec<f32> = writes(600, 500, 10, |_| 24.0).iter().map(|&t| t as f32).collect();
        assert_eq!(find_knee(&x32, &p, false).unwrap().op, 500);
    }

    #[test]
    fn runs_of_low_latency_between_seeks() {
        // 1 MiB reads: 6 ms streaming a cleaned band, 40–2000 ms when PB blocks are mixed in.
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(10);
        let mut x = Vec::new();
        let mut truth = Vec::new();
        for (n, low) in [(30, false), (17, true), (50, false), (35, true), (3, false), (2, true), (20, false)]
        {
            if low && n >= 3 {
                truth.push(Run { start: x.len(), len: n });
            }
            for _ in 0..n {
                x.push(if low { 6.0 * rng.random_range(0.7..1.3) } else { rng.random_range(40.0..2000.0) });
            }
        }
        let (thr, ratio) = split_threshold(&x).unwrap();
        assert!(thr > 7.8 && thr < 40.0 && ratio > 5.0, "{thr} {ratio}");
        assert_eq!(low_runs(&x, thr, 3), truth, "the 2-read run is too short to count");
        assert_eq!(split_threshold(&[5.0, 5.0]), None);
        assert_eq!(low_runs(&[1.0, 1.0], 2.0, 1), vec![Run { start: 0, len: 2 }]);
    }
}
