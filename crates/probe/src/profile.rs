//! From detections to a drive profile the simulator loads (`shingled sim --drive-file`).

use crate::bands::BandReport;
use crate::detect::{median, quantile};
use shingled_core::{BandConfig, ByteSize, SizeSpec};
use shingled_device::{DmSmrConfig, DriveConfig};

/// A trend of band size over the LBAs is taken for real when its slope is at least this many
/// standard errors from zero (Student's t of the least-squares slope over every band found).
/// With bands of random sizes and no trend, |t| ≥ 4 comes by chance about once in 2000 fits of
/// 24 bands.
const TREND_T: f64 = 4.0;

/// The band layout the samples of `report` suggest, over a drive of `capacity` bytes; `None`
/// without a single accepted band.
///
/// - Bands found around two or more targets spread over at least a quarter of the drive whose
///   sizes follow a line over the LBAs: the least-squares slope of size against position, over
///   every band found, is significant (|t| ≥ 4: the trend stands out from the spread of the
///   sizes around it) and changes the size by more than 15% from LBA 0 to the end:
///   [`BandConfig::LbaDependent`] with the line's values at both ends (Skylight's ST5000AS0011:
///   36 MB outer, 17 MB inner). Bands of random sizes give different medians at different
///   targets too, but their spread around any line is as large as the line's change.
/// - Otherwise, bands whose 10th and 90th percentiles differ by more than 25%:
///   [`BandConfig::UniformRandom`] between them (PORE's 17–36 MB).
/// - Otherwise [`BandConfig::Fixed`] at the median (SAC's choice: "the SMR band size is
///   considered as a constant value").
pub fn fit_band_layout(report: &BandReport, capacity: u64) -> Option<BandConfig> {
    let bands = report.accepted_bands();
    let all: Vec<f64> = bands.iter().map(|&(_, s)| s as f64).collect();
    if all.is_empty() {
        return None;
    }
    let round = |x: f64| ByteSize(((x.max(4096.0) / 4096.0).round() as u64) * 4096);
    if trend_testable(report, capacity) {
        let pts: Vec<(f64, f64)> =
            bands.iter().map(|&(st, sz)| (st as f64 + sz as f64 / 2.0, sz as f64)).collect();
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let slope = sxy / sxx;
        let outer = my - slope * mx;
        let inner = outer + slope * capacity as f64;
        let rss: f64 = pts.iter().map(|p| (p.1 - outer - slope * p.0).powi(2)).sum();
        let se = (rss / (n - 2.0).max(1.0) / sxx).sqrt();
        let significant = slope.abs() >= TREND_T * se;
        if significant && (outer - inner).abs() > 0.15 * my {
            return Some(BandConfig::LbaDependent { outer: round(outer), inner: round(inner) });
        }
    }
    let (p10, p90) = (quantile(&all, 0.1), quantile(&all, 0.9));
    if p90 > 1.25 * p10 {
        return Some(BandConfig::UniformRandom { min: round(p10), max: round(p90), seed: 0 });
    }
    Some(BandConfig::Fixed { size: round(median(&all)) })
}

/// The regions of `report` with bands found: their targets (bytes).
fn regions(report: &BandReport) -> Vec<u64> {
    report.samples.iter().filter(|s| s.bands.iter().any(|b| b.accepted)).map(|s| s.target).collect()
}

/// Whether [`fit_band_layout`] can test `report` for a band size that changes over the LBAs:
/// bands found around two or more targets spread over at least a quarter of the drive, three
/// bands or more.
fn trend_testable(report: &BandReport, capacity: u64) -> bool {
    let targets = regions(report);
    let (lo, hi) = targets.iter().fold((u64::MAX, 0), |(a, b), &t| (a.min(t), b.max(t)));
    targets.len() >= 2 && hi - lo >= capacity / 4 && report.accepted_bands().len() >= 3
}

/// What a fitted fixed or uniform layout cannot say, when the bands of `report` came from too
/// small a part of the drive to test a change over the LBAs (one region, or regions within a
/// quarter of the capacity): the layout holds within the regions probed, and an LBA-dependent
/// drive (Skylight's ST5000AS0011) would look the same there. `None` when the fit could test
/// it, or found no band.
pub fn layout_scope(report: &BandReport, capacity: u64) -> Option<String> {
    let targets = regions(report);
    if targets.is_empty() || trend_testable(report, capacity) {
        return None;
    }
    let where_ = if targets.len() == 1 {
        format!("one region probed (around byte {})", targets[0])
    } else {
        format!("{} regions probed within a quarter of the capacity", targets.len())
    };
    Some(format!(
        "within the {where_}: cannot tell fixed from LBA-dependent bands; probe regions spread over \
         the disk (--target-count 3, or --targets 10%,50%,90%) to tell"
    ))
}

/// A DM-SMR configuration with what was detected: `base` (the probed profile, or the default
/// DM-SMR drive for a real device: mechanics, PB flavour, ...) with its capacity set to
/// `capacity`, its PB to `pb_bytes` and its bands to `bands`, each when given.
///
/// A PB detected with small writes is the capacity *for that write size* (SAC Table 3): it may be
/// an entry limit rather than the byte size. The profile states it as a byte size with no entry
/// limit, which is what a workload of that write size sees.
pub fn detected_drive_config(
    base: &DmSmrConfig,
    capacity: u64,
    pb_bytes: Option<u64>,
    bands: Option<BandConfig>,
) -> DriveConfig {
    let mut d = DriveConfig::DmSmr(base.clone());
    d.set_capacity(ByteSize(capacity));
    let c = d.dm_smr_mut().expect("built as dm-smr");
    if let Some(pb) = pb_bytes {
        c.pb_size = SizeSpec::Absolute(ByteSize(pb.max(4096)));
        c.pb_max_entries = None;
    }
    if let Some(b) = bands {
        c.bands = b;
    }
    // The PB may have grown beyond the mechanism's room.
    d.set_capacity(ByteSize(capacity));
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::{BandSample, DetectedBand};
    use crate::detect::Run;

    fn sample(target: u64, sizes: &[u64]) -> BandSample {
        let bands = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| DetectedBand {
                run: Run { start: i * 100, len: 10 },
                start: target + i as u64 * 10_000_000,
                size: s,
                refined: true,
                accepted: true,
            })
            .collect();
        let mut v = sizes.to_vec();
        v.sort_unstable();
        BandSample {
            target,
            range_start: target,
            range_len: 0,
            elsewhere_writes: 0,
            spikes: 0,
            markers_cleaned: 0,
            reads: vec![],
            threshold_ms: 1.0,
            separation: 10.0,
            bands,
            band_size: v[v.len() / 2],
        }
    }

    fn report(samples: Vec<BandSample>) -> BandReport {
        BandReport { target: "t".into(), pb_bytes: 1, read_size: 1 << 20, samples }
    }

    #[test]
    fn layouts_fixed_uniform_and_lba_dependent() {
        let fixed = report(vec![sample(1 << 30, &[20_480_000, 20_484_096, 20_475_904])]);
        assert_eq!(fit_band_layout(&fixed, 1 << 40), Some(BandConfig::Fixed { size: ByteSize(20_480_000) }));
        let spread =
            report(vec![sample(1 << 30, &[15_000_000, 22_000_000, 30_000_000, 39_000_000, 26_000_000])]);
        assert!(matches!(fit_band_layout(&spread, 1 << 40), Some(BandConfig::UniformRandom { .. })));
        let cap = 5_000_000_000_000u64;
        let lba = report(vec![
            sample(cap / 10, &[34_000_000]),
            sample(cap / 2, &[26_500_000]),
            sample(cap * 9 / 10, &[19_000_000]),
        ]);
        let Some(BandConfig::LbaDependent { outer, inner }) = fit_band_layout(&lba, cap) else { panic!() };
        assert!((outer.0 as f64 - 35.875e6).abs() < 0.1e6 && (inner.0 as f64 - 17.125e6).abs() < 0.1e6);
        assert_eq!(fit_band_layout(&report(vec![]), cap), None);
    }

    /// A layout fitted to one region, or to regions close together, says it cannot tell a
    /// fixed layout from an LBA-dependent one; regions spread over the drive can.
    #[test]
    fn a_layout_from_one_region_says_what_it_cannot_tell() {
        let cap = 5_000_000_000_000u64;
        let one = report(vec![sample(cap / 2, &[26_500_000, 26_400_000, 26_600_000])]);
        assert!(matches!(fit_band_layout(&one, cap), Some(BandConfig::Fixed { .. })));
        let s = layout_scope(&one, cap).unwrap();
        assert!(s.contains("one region probed") && s.contains("cannot tell fixed from LBA-dependent"), "{s}");
        let close = report(vec![
            sample(cap / 2, &[26_500_000]),
            sample(cap / 2 + cap / 10, &[26_400_000, 26_000_000]),
        ]);
        assert!(layout_scope(&close, cap).unwrap().contains("2 regions probed within a quarter"));
        let spread = report(vec![
            sample(cap / 10, &[26_500_000]),
            sample(cap / 2, &[26_400_000]),
            sample(cap * 9 / 10, &[26_600_000]),
        ]);
        assert!(matches!(fit_band_layout(&spread, cap), Some(BandConfig::Fixed { .. })));
        assert_eq!(layout_scope(&spread, cap), None);
        assert_eq!(layout_scope(&report(vec![]), cap), None);
    }

    /// The case of uneven bands: each drawn uniformly in 180–360 KB, eight found at each of three
    /// targets. Their medians differ from target to target, and a line through them changes by
    /// more than 15%; the sizes' spread around it says it is no trend.
    #[test]
    fn uniform_bands_at_several_targets_are_not_a_trend() {
        use rand::{Rng, SeedableRng};
        let cap = 50_000_000_000u64;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(15);
        let mut lba_calls = 0;
        for _ in 0..200 {
            let samples: Vec<BandSample> = [cap / 6, cap / 2, cap / 6 * 5]
                .iter()
                .map(|&t| sample(t, &(0..8).map(|_| rng.random_range(180_000..=360_000)).collect::<Vec<_>>()))
                .collect();
            match fit_band_layout(&report(samples), cap) {
                Some(BandConfig::UniformRandom { .. }) => {}
                Some(BandConfig::LbaDependent { .. }) => lba_calls += 1,
                other => panic!("{other:?}"),
            }
        }
        assert!(lba_calls <= 2, "{lba_calls} of 200 fitted as LBA-dependent");
        // The same spread around a real trend (400 KB → 150 KB, ±10%) is one.
        let samples: Vec<BandSample> = [cap / 6, cap / 2, cap / 6 * 5]
            .iter()
            .map(|&t| {
                let mid = 400e3 - 250e3 * t as f64 / cap as f64;
                sample(t, &(0..8).map(|_| (mid * rng.random_range(0.9..1.1)) as u64).collect::<Vec<_>>())
            })
            .collect();
        assert!(matches!(fit_band_layout(&report(samples), cap), Some(BandConfig::LbaDependent { .. })));
    }

    #[test]
    fn the_detected_profile_builds_and_round_trips() {
        let base = DmSmrConfig::default();
        let d = detected_drive_config(
            &base,
            2_000_000_000,
            Some(8 << 20),
            Some(BandConfig::Fixed { size: ByteSize::mib(20) }),
        );
        let ctx = shingled_device::BuildContext::whole_drive(ByteSize(2_000_000_000));
        d.build(&ctx).unwrap();
        let DriveConfig::DmSmr(c) = &d else { panic!() };
        assert_eq!(c.pb_size, SizeSpec::Absolute(ByteSize::mib(8)));
        assert_eq!(c.capacity, ByteSize(2_000_000_000));
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<DriveConfig>(&json).unwrap(), d);
    }
}
