//! A log-linear latency histogram that can be subtracted (for after-warm-up windows).

use serde::{Deserialize, Serialize};
use shingled_core::Nanos;

const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

/// Counts of values (nanoseconds) in buckets whose width is 1/16 of their magnitude, so any
/// percentile is known to within 6.25%. Fixed size (8 KiB), O(1) recording.
#[derive(Clone, PartialEq, Eq)]
pub struct Histogram {
    counts: Box<[u64]>,
    total: u64,
    sum: u128,
    max: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram").field("count", &self.total).field("max", &self.max).finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS].into_boxed_slice(), total: 0, sum: 0, max: 0 }
    }
}

#[inline]
fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let sub = ((v >> (e - SUB_BITS)) as usize) & (SUB - 1);
    ((e - SUB_BITS + 1) as usize) * SUB + sub
}

/// Smallest value that falls in bucket `i`.
fn bucket_low(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let e = (i / SUB) as u32 + SUB_BITS - 1;
    let sub = (i % SUB) as u64;
    (1u64 << e) | (sub << (e - SUB_BITS))
}

/// Largest value that falls in bucket `i`.
fn bucket_high(i: usize) -> u64 {
    if i + 1 >= BUCKETS {
        u64::MAX
    } else {
        bucket_low(i + 1) - 1
    }
}

/// Percentiles and moments of a [`Histogram`], for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of values.
    pub count: u64,
    /// Mean in milliseconds.
    pub mean_ms: f64,
    /// Median (upper edge of its bucket) in milliseconds.
    pub p50_ms: f64,
    /// 90th percentile in milliseconds.
    pub p90_ms: f64,
    /// 99th percentile in milliseconds.
    pub p99_ms: f64,
    /// 99.9th percentile in milliseconds.
    pub p999_ms: f64,
    /// Largest value in milliseconds (exact while no subtraction happened).
    pub max_ms: f64,
}

impl Histogram {
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: Nanos) {
        self.counts[bucket(v.0)] += 1;
        self.total += 1;
        self.sum += v.0 as u128;
        self.max = self.max.max(v.0);
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The value at quantile `q` in [0, 1]: the upper edge of the bucket holding it (never above
    /// the maximum seen). `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<Nanos> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Nanos(bucket_high(i).min(self.max)));
            }
        }
        Some(Nanos(self.max))
    }

    /// `self - earlier` bucket by bucket (the values recorded since `earlier` was cloned). The
    /// maximum stays the overall maximum.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let counts: Vec<u64> = self.counts.iter().zip(earlier.counts.iter()).map(|(a, b)| a - b).collect();
        let max = counts.iter().rposition(|&c| c > 0).map(|i| bucket_high(i).min(self.max)).unwrap_or(0);
        Histogram {
            counts: counts.into_boxed_slice(),
            total: self.total - earlier.total,
            sum: self.sum - earlier.sum,
            max,
        }
    }

    /// Adds `other`'s values (histograms recorded apart, e.g. by several threads).
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// Summary for reports.
    pub fn summary(&self) -> LatencySummary {
        let ms = |q: f64| self.quantile(q).map(|n| n.as_millis_f64()).unwrap_or(0.0);
        LatencySummary {
            count: self.total,
            mean_ms: if self.total == 0 { 0.0 } else { self.sum as f64 / self.total as f64 / 1e6 },
            p50_ms: ms(0.5),
            p90_ms: ms(0.9),
            p99_ms: ms(0.99),
            p999_ms: ms(0.999),
            max_ms: self.max as f64 / 1e6,
        }
    }

    /// The CDF as `(ms, fraction)` points: for each non-empty bucket, its upper edge (the
    /// maximum for the last) and the fraction of values at or below it.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let mut seen = 0u64;
        self.buckets()
            .into_iter()
            .map(|(_, high, c)| {
                seen += c;
                (high.min(self.max) as f64 / 1e6, seen as f64 / self.total as f64)
            })
            .collect()
    }

    /// Non-empty buckets as `(low_ns, high_ns, count)`, for machine-readable output and plots.
    pub fn buckets(&self) -> Vec<(u64, u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (bucket_low(i), bucket_high(i), c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_tile_the_range() {
        for i in 0..BUCKETS - 1 {
            assert_eq!(bucket(bucket_low(i)), i);
            assert_eq!(bucket(bucket_high(i)), i);
            assert_eq!(bucket_high(i) + 1, bucket_low(i + 1));
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_of_known_values() {
        let mut h = Histogram::default();
        for v in 1..=100u64 {
            h.record(Nanos(v * 1_000_000));
        }
        let p50 = h.quantile(0.5).unwrap().0 as f64;
        assert!((50e6..=50e6 * 1.0625).contains(&p50), "{p50}");
        assert_eq!(h.quantile(1.0).unwrap().0, 100_000_000);
        assert!((h.summary().mean_ms - 50.5).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn quantile_within_bucket_error(values in proptest::collection::vec(1u64..1u64 << 40, 1..300), q in 0.0f64..1.0) {
            let mut h = Histogram::default();
            for &v in &values { h.record(Nanos(v)); }
            let mut sorted = values.clone();
            sorted.sort();
            let rank = ((q * values.len() as f64).ceil() as usize).max(1);
            let exact = sorted[rank - 1];
            let got = h.quantile(q).unwrap().0;
            prop_assert!(got >= exact && got as f64 <= exact as f64 * (1.0 + 1.0 / 16.0) + 1.0, "exact {} got {}", exact, got);
        }

        #[test]
        fn since_is_the_difference(a in proptest::collection::vec(0u64..1u64 << 30, 0..100), b in proptest::collection::vec(0u64..1u64 << 30, 0..100)) {
            let mut h = Histogram::default();
            for &v in &a { h.record(Nanos(v)); }
            let snap = h.clone();
            let mut only_b = Histogram::default();
            for &v in &b { h.record(Nanos(v)); only_b.record(Nanos(v)); }
            let d = h.since(&snap);
            prop_assert_eq!(d.count(), only_b.count());
            prop_assert_eq!(d.buckets(), only_b.buckets());
        }
    }
}
