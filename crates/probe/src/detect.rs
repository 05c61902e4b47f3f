//! The analysis half of the probes: pure functions over measured series, with no I/O, so they
//! can be tested on hand-made series.
//!
//! - [`find_cliff`]: the sustained IOPS drop of SAC §5.1 step 2 ("a sudden drop of IOPS will be
//!   observed ... The written data amount before the sudden IOPS drop is the PB capacity"), on a
//!   windowed IOPS series.
//! - [`refine_change_point`]: the exact operation at which the mean service time shifts, inside
//!   the window the cliff was found in.
//! - [`split_threshold`] and [`low_runs`]: the runs of constantly low read latency of SAC §5.2
//!   step 4 ("for a band that is cleared in step 3 ... the read latency will be constantly
//!   low").

use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Parameters of [`find_cliff`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CliffParams {
    /// A window is below the plateau when its smoothed IOPS is under `fraction` × the median of
    /// the smoothed windows before the candidate cliff. Default 0.5 (SAC Table 3 shows drops of
    /// 12× to 350×; the model's drops are 4× or more); bounds (0, 1).
    pub fraction: f64,
    /// Width of the centred rolling median that removes isolated slow or fast windows (one RMW
    /// landing in an otherwise fast window, a burst after a cleaning frees many slots). Odd;
    /// default 5; 1 disables smoothing.
    pub smooth: usize,
    /// Windows needed before a cliff, to know the plateau. Default 4; at least 1.
    pub min_before: usize,
    /// Windows needed after a cliff to call it sustained. Default 8; at least 1.
    pub min_after: usize,
}

impl Default for CliffParams {
    fn default() -> Self {
        CliffParams { fraction: 0.5, smooth: 5, min_before: 4, min_after: 8 }
    }
}

/// A sustained drop found by [`find_cliff`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// Index of the first window after the drop.
    pub window: usize,
    /// The plateau: median smoothed IOPS of the windows before the drop.
    pub plateau: f64,
    /// Median smoothed IOPS of the windows from the drop on.
    pub after: f64,
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

/// Median of a non-empty slice (the mean of the middle two for even lengths); reorders it.
pub(crate) fn median_in_place(v: &mut [f64]) -> f64 {
    assert!(!v.is_empty(), "median of an empty slice");
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

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

/// An `f64` ordered by `total_cmp`, for the heaps of [`prefix_medians`].
#[derive(Clone, Copy, PartialEq)]
struct Ord64(f64);
impl Eq for Ord64 {}
impl PartialOrd for Ord64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ord64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// `out[i]` = median of `x[..i]` for `i` in `1..=n` (`out[0]` = NaN), in O(n log n) with a
/// max-heap of the lower half and a min-heap of the upper half.
fn prefix_medians(x: &[f64]) -> Vec<f64> {
    let mut lo: BinaryHeap<Ord64> = BinaryHeap::new();
    let mut hi: BinaryHeap<Reverse<Ord64>> = BinaryHeap::new();
    let mut out = Vec::with_capacity(x.len() + 1);
    out.push(f64::NAN);
    for &v in x {
        if lo.peek().is_none_or(|m| v <= m.0) {
            lo.push(Ord64(v));
        } else {
            hi.push(Reverse(Ord64(v)));
        }
        // Keep |lo| == |hi| or |lo| == |hi| + 1.
        if lo.len() > hi.len() + 1 {
            let m = lo.pop().expect("non-empty");
            hi.push(Reverse(m));
        } else if hi.len() > lo.len() {
            let Reverse(m) = hi.pop().expect("non-empty");
            lo.push(m);
        }
        let a = lo.peek().expect("non-empty").0;
        out.push(if lo.len() > hi.len() { a } else { (a + hi.peek().expect("non-empty").0 .0) / 2.0 });
    }
    out
}

/// The last sustained IOPS drop of a windowed series (SAC §5.1 step 2, Fig. 11).
///
/// The series is first smoothed by a centred rolling median ([`CliffParams::smooth`]). A window
/// index `i` is a cliff when every smoothed window from `i` on is below
/// `fraction × median(smoothed[..i])`, and window `i − 1` is not. Among such indices the
/// largest is returned: the *last* drop after which the rate never recovers. Taking the last
/// one rather than the first keeps an earlier, smaller step (a drive that was not quite empty
/// cleaning leftovers, a write cache filling up) from being taken for the PB filling up, as
/// long as that step does not itself fall below the threshold of the later plateau.
///
/// `None` when no index has `min_before` windows before it and `min_after` windows from it on,
/// or when the rate never drops for good.
pub fn find_cliff(iops: &[f64], p: &CliffParams) -> Option<Cliff> {
    let n = iops.len();
    let (min_before, min_after) = (p.min_before.max(1), p.min_after.max(1));
    if n < min_before + min_after {
        return None;
    }
    let s = rolling_median(iops, p.smooth.max(1));
    let pm = prefix_medians(&s);
    let mut suffix_max = vec![f64::NEG_INFINITY; n + 1];
    for i in (0..n).rev() {
        suffix_max[i] = suffix_max[i + 1].max(s[i]);
    }
    (min_before..=n - min_after).rev().find_map(|i| {
        let thr = p.fraction * pm[i];
        (s[i - 1] >= thr && suffix_max[i] < thr).then(|| Cliff {
            window: i,
            plateau: pm[i],
            after: median(&s[i..]),
        })
    })
}

/// The index `τ` (1 ≤ τ < n) that best splits `x` into two segments of different means, by least
/// squares: `τ` maximises `τ (n − τ) (mean(x[..τ]) − mean(x[τ..]))²`. Used on per-operation
/// service times around a cliff to find the first write that paid for a full PB. `None` for
/// fewer than two samples.
pub fn refine_change_point(x: &[f64]) -> Option<usize> {
    let n = x.len();
    if n < 2 {
        return None;
    }
    let total: f64 = x.iter().sum();
    let mut left = 0.0;
    let mut best = (f64::NEG_INFINITY, 1);
    for (i, &v) in x.iter().enumerate().take(n - 1) {
        left += v;
        let t = (i + 1) as f64;
        let r = (n - i - 1) as f64;
        let d = left / t - (total - left) / r;
        let score = t * r * d * d;
        if score > best.0 {
            best = (score, i + 1);
        }
    }
    Some(best.1)
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

    fn noisy(levels: &[(usize, f64)], jitter: f64, seed: u64) -> Vec<f64> {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        levels
            .iter()
            .flat_map(|&(n, v)| std::iter::repeat_n(v, n))
            .map(|v| v * (1.0 + rng.random_range(-jitter..=jitter)))
            .collect()
    }

    #[test]
    fn rolling_median_keeps_steps_and_drops_spikes() {
        let x = [10.0, 10.0, 1.0, 10.0, 10.0, 10.0, 2.0, 2.0, 2.0, 9.0, 2.0, 2.0];
        let s = rolling_median(&x, 5);
        assert_eq!(&s[..6], &[10.0; 6]);
        assert_eq!(&s[6..], &[2.0; 6]);
        assert_eq!(rolling_median(&x, 1), x.to_vec());
    }

    #[test]
    fn prefix_medians_match_sorting() {
        let x = noisy(&[(40, 5.0), (30, 1.0)], 0.9, 3);
        let pm = prefix_medians(&x);
        for i in 1..=x.len() {
            assert_eq!(pm[i], median(&x[..i]), "{i}");
        }
    }

    /// SAC Table 3 (4 KB, QD1): 3156 IOPS for 54 s, then 41.
    #[test]
    fn cliff_of_sac_table_3_with_noise() {
        let x = noisy(&[(54, 3156.0), (30, 41.0)], 0.3, 1);
        let c = find_cliff(&x, &CliffParams::default()).unwrap();
        assert_eq!(c.window, 54);
        assert!((c.plateau - 3156.0).abs() < 300.0 && c.after < 60.0, "{c:?}");
    }

    /// A noisy SMR write rate after the cliff (bursts when a cleaning frees many slots) does not
    /// move the cliff; isolated slow windows before it do not either.
    #[test]
    fn cliff_survives_bursts_after_and_dips_before() {
        let mut x = noisy(&[(100, 3000.0), (60, 80.0)], 0.2, 2);
        for i in [20, 47, 48, 90] {
            x[i] = 150.0; // an RMW in an otherwise fast window
        }
        for i in [110, 131, 150] {
            x[i] = 2500.0; // a burst into freed slots
        }
        let c = find_cliff(&x, &CliffParams::default()).unwrap();
        assert_eq!(c.window, 100);
    }

    /// A mild earlier step (a PB full of leftover whole bands, each cleaned in one cheap RMW per
    /// band) followed by the real cliff: the last sustained drop is reported.
    #[test]
    fn the_last_drop_wins_over_a_mild_first_step() {
        let x = noisy(&[(30, 3000.0), (70, 2000.0), (20, 300.0)], 0.15, 4);
        assert_eq!(find_cliff(&x, &CliffParams::default()).unwrap().window, 100);
        // A first step to below half the first level is still not the answer when the rate later
        // drops below half of the median before that later drop.
        let x = noisy(&[(10, 3000.0), (90, 1000.0), (20, 100.0)], 0.15, 5);
        assert_eq!(find_cliff(&x, &CliffParams::default()).unwrap().window, 100);
    }

    #[test]
    fn no_cliff_without_a_sustained_drop() {
        let flat = noisy(&[(200, 3000.0)], 0.3, 6);
        assert_eq!(find_cliff(&flat, &CliffParams::default()), None);
        // Recovers at the end: not sustained.
        let x = noisy(&[(50, 3000.0), (20, 100.0), (10, 3000.0)], 0.1, 7);
        assert_eq!(find_cliff(&x, &CliffParams::default()), None);
        // Too few windows after the drop.
        let x = noisy(&[(50, 3000.0), (5, 100.0)], 0.1, 8);
        assert_eq!(find_cliff(&x, &CliffParams::default()), None);
        assert_eq!(find_cliff(&[], &CliffParams::default()), None);
    }

    #[test]
    fn change_point_of_per_op_times_with_spikes() {
        // 0.3 ms appends; after op 1000 every 4th write pays a 25 ms RMW; before it, one RMW per
        // 40 writes (leftover bands). ±30% jitter.
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
        let x: Vec<f64> = (0..1600)
            .map(|i| {
                let rmw = if i < 1000 { i % 40 == 39 } else { i % 4 == 3 };
                (0.3 + if rmw { 25.0 } else { 0.0 }) * (1.0 + rng.random_range(-0.3..=0.3))
            })
            .collect();
        let t = refine_change_point(&x).unwrap();
        assert!((990..=1010).contains(&t), "{t}");
        assert_eq!(refine_change_point(&[1.0]), None);
        assert_eq!(refine_change_point(&[1.0, 5.0]), Some(1));
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
