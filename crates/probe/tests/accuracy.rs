//! Accuracy of the probes on drives with hidden parameters (DESIGN.md §6), per class of drive.
//!
//! Each draw ([`HiddenDrive::draw`] with the default [`HiddenSpec`]) takes SAC's ST8000AS0002
//! profile (`st8000as0002`: calibrated timing, PB entry limit, idle cleaning, batch cleaning)
//! and hides:
//!
//! - a PB of 0.5–30 GB (log-uniform), with or without the profile's entry limit (184,320
//!   entries: with 4 KiB writes the probe must then find entries × 4 KiB, as SAC Table 3 did);
//! - bands of one fixed size drawn in 15–40 MB, each drawn uniformly in 15–40 MB, or falling
//!   linearly over the LBAs from 34–40 MB to 15–21 MB (⅓ each);
//! - the PB's mechanisms, each drawn on its own: append-only or in-place (½), dead slots freed
//!   at once or when the log's head passes (½), idle cleaning (½), cleaning from a high
//!   watermark of 80% (¼), batch cleaning down to a low watermark of 0.95–0.995 (times the high
//!   watermark, if there is one) (½), merged
//!   blocks at 0.41 ms each or at the PB's bandwidth (½), the PB on the platters or in flash (¼);
//! - ±10–30% multiplicative timing noise ([`shingled_probe::Noisy`]).
//!
//! Every size (capacity 5 TB, PB, bands, entries) is scaled by 1/100, times are not. The PB
//! probe runs with its default upper bound `C`, 1/32 of the capacity (1.49 GiB, 5.2 × the
//! largest PB); the band probe with three targets (1/6, 1/2 and 5/6 of the capacity) and
//! 32 KiB reads in place of 1 MiB (1/100 would be 10 KiB; 32 KiB keeps a chance run of three low
//! reads in an uncleaned band, where 45% of the blocks are in the PB, below one in a million).
//!
//! A draw's PB passes when it is within ±5% of [`HiddenDrive::expected_pb`]; its bands pass when
//! the bands found at the three targets are within ±10% of the truth: for a fixed layout the
//! median size found against the size, otherwise the mean size of the bands found against the
//! mean true size of those same bands. The layout fitted from the three targets
//! ([`shingled_probe::fit_band_layout`]) is reported too. Every draw is printed, then a table of
//! the figures per class (each setting of each mechanism) and every failure again.
//!
//! The targets, 95% of draws within ±5% (PB) and ±10% (bands), are asserted over all draws and
//! for every class with at least [`MIN_CLASS_DRAWS`] draws, leaving out the draws of one known
//! limit ([`LIMIT_CLASS`]), whose own bound is asserted instead: the PB at most one cleaning
//! batch low.
//!
//! `cargo test -p shingled-probe --test accuracy` runs 48 draws (debug: 75 s on two cores
//! shared with other builds; the classes of probability ½ get about 24 draws and are held to the targets). The
//! larger variant, 400 draws:
//! `cargo test --release -p shingled-probe --test accuracy -- --ignored --nocapture`
//! (`make check-long`).

use shingled_core::{BandConfig, BLOCK_SIZE};
use shingled_probe::{
    detect_bands, detect_pb, fit_band_layout, BandProbeConfig, HiddenBands, HiddenDrive, HiddenSpec,
    PbProbeConfig, ProbeTarget,
};
use std::collections::BTreeMap;

/// Share of draws that must pass, overall and per class.
const TARGET: f64 = 0.95;

/// A class is held to [`TARGET`] only with at least this many draws.
const MIN_CLASS_DRAWS: usize = 20;

struct Outcome {
    classes: Vec<(&'static str, &'static str)>,
    /// The draw is in the known limit: the share of the PB a cleaning batch frees.
    limit: Option<f64>,
    /// The PB's relative error, if the PB probe succeeded.
    pb_err: Option<f64>,
    pb_ok: bool,
    band_ok: bool,
    layout_ok: bool,
    line: String,
}

fn rel(a: f64, b: f64) -> f64 {
    a / b - 1.0
}

/// The class of the known limit (docs/probe.md, "Accuracy"): a PB that step 1 cannot empty (no
/// idle cleaning) on a drive that cleans in batches of more than 5% of it. Step 2 then starts
/// by cleaning the leftover a batch at a time, and the first batch that reaches the step's own
/// writes comes at a batch boundary counted from the first write, not where the PB filled: the
/// PB is found up to one batch low. (Batches that large are drawn only with an entry limit and
/// a high watermark: the entries have no high watermark, so one batch frees 20–24% of them.)
const LIMIT_CLASS: (&str, &str) = ("known limit", "no idle cleaning, batches > 5% of the PB");

/// The share of the PB one cleaning batch frees, for a draw in [`LIMIT_CLASS`].
fn known_limit(d: &HiddenDrive) -> Option<f64> {
    let batch = d.cleaning_batch(4096)?;
    (d.config.idle_window_ms.is_none() && batch > 0.05).then_some(batch)
}

fn layout_kind(b: &BandConfig) -> &'static str {
    match b {
        BandConfig::Fixed { .. } => "fixed",
        BandConfig::UniformRandom { .. } => "uniform-random",
        BandConfig::LbaDependent { .. } => "lba-dependent",
    }
}

fn run_draw(spec: &HiddenSpec, seed: u64) -> Outcome {
    let drive = HiddenDrive::draw(spec, seed).expect("draw");
    let mut classes = drive.classes();
    let limit = known_limit(&drive);
    if limit.is_some() {
        classes.push(LIMIT_CLASS);
    }
    let fail = |pb_err: Option<f64>, what: String| Outcome {
        classes: classes.clone(),
        limit,
        pb_err,
        pb_ok: pb_err.is_some_and(|e| e.abs() <= 0.05),
        band_ok: false,
        layout_ok: false,
        line: format!("FAIL {} | {what}", drive.describe()),
    };
    let mut target = drive.target().expect("build");
    // C: the probe's default, 1/32 of the capacity (1.49 GiB, 5.2 × the largest PB).
    let pb_cfg = PbProbeConfig { seed, ..PbProbeConfig::default() };
    let pb = match detect_pb(&mut target, &pb_cfg, &mut |_| {}) {
        Ok(r) => r,
        Err(e) => return fail(None, format!("PB probe: {e}")),
    };
    let expected = drive.expected_pb(pb_cfg.block_size);
    let pb_err = rel(pb.pb_bytes as f64, expected as f64);
    let pb_ok = pb_err.abs() <= 0.05;
    let pb_line = format!("PB {} expected {} ({:+.1}%)", pb.pb_bytes, expected, pb_err * 100.0);

    let cap = target.capacity();
    let band_cfg = BandProbeConfig {
        pb_bytes: pb.pb_bytes,
        read_size: 32 << 10,
        targets: vec![cap / 6, cap / 2, cap / 6 * 5],
        seed,
        ..BandProbeConfig::default()
    };
    let bands = match detect_bands(&mut target, &band_cfg, &mut |_| {}) {
        Ok(r) => r,
        Err(e) => return fail(Some(pb_err), format!("{pb_line} | band probe: {e}")),
    };
    let map = target.drive().band_map().expect("dm-smr has bands");
    // Each accepted detection against the true band holding its middle.
    let (mut det, mut truth) = (Vec::new(), Vec::new());
    let mut worst_size = 0.0f64;
    for b in bands.samples.iter().flat_map(|s| s.bands.iter().filter(|b| b.accepted)) {
        let (_, len) = map.band_range(map.band_of((b.start + b.size / 2) / BLOCK_SIZE));
        let len = (len * BLOCK_SIZE) as f64;
        det.push(b.size as f64);
        truth.push(len);
        worst_size = worst_size.max(rel(b.size as f64, len).abs());
    }
    if det.is_empty() {
        return fail(Some(pb_err), format!("{pb_line} | no band accepted"));
    }
    // Fixed bands: the median size found against the size. Variable bands: the sizes found in
    // total against the true sizes of those bands (a median of sizes drawn from 15-40 MB picks
    // one band and inherits its edge errors).
    let (found, true_size) = match drive.bands {
        HiddenBands::Fixed(s) => {
            det.sort_by(f64::total_cmp);
            (det[det.len() / 2], s as f64)
        }
        _ => (det.iter().sum::<f64>() / det.len() as f64, truth.iter().sum::<f64>() / truth.len() as f64),
    };
    let band_err = rel(found, true_size);
    let band_ok = band_err.abs() <= 0.10;
    let fitted = fit_band_layout(&bands, cap);
    let hidden_kind = classes.iter().find(|c| c.0 == "bands").expect("bands class").1;
    let fitted_kind = fitted.as_ref().map_or("none", layout_kind);
    let layout_ok = fitted_kind == hidden_kind;
    let line = format!(
        "{} {} | {pb_line} | band {found:.0} true {true_size:.0} ({:+.1}%), {} bands at 3 targets, worst \
         {:.1}% off | layout {fitted_kind}{}",
        if pb_ok && band_ok { "ok  " } else { "FAIL" },
        drive.describe(),
        band_err * 100.0,
        det.len(),
        worst_size * 100.0,
        if layout_ok { "" } else { " (WRONG)" },
    );
    Outcome { classes, limit, pb_err: Some(pb_err), pb_ok, band_ok, layout_ok, line }
}

/// Draws and passes of a class: all of them, and those outside [`LIMIT_CLASS`] (held to the
/// targets).
#[derive(Default)]
struct Tally {
    draws: usize,
    pb: usize,
    band: usize,
    both: usize,
    layout: usize,
    held: usize,
    held_pb: usize,
    held_band: usize,
}

fn pct(n: usize, of: usize) -> String {
    format!("{n} ({:.1}%)", 100.0 * n as f64 / of.max(1) as f64)
}

impl Tally {
    fn add(&mut self, o: &Outcome) {
        self.draws += 1;
        self.pb += usize::from(o.pb_ok);
        self.band += usize::from(o.band_ok);
        self.both += usize::from(o.pb_ok && o.band_ok);
        self.layout += usize::from(o.layout_ok);
        if o.limit.is_none() {
            self.held += 1;
            self.held_pb += usize::from(o.pb_ok);
            self.held_band += usize::from(o.band_ok);
        }
    }

    /// The PB and band targets, over the draws held to them, if there are enough of them.
    fn short_of_target(&self) -> Option<String> {
        let need = (TARGET * self.held as f64).ceil() as usize;
        (self.held >= MIN_CLASS_DRAWS && (self.held_pb < need || self.held_band < need)).then(|| {
            format!("PB {} and band {} of {} draws, {need} needed", self.held_pb, self.held_band, self.held)
        })
    }
}

/// Runs `draws` seeds on two threads; prints every draw and the per-class table; asserts the
/// targets overall and per class.
fn accuracy(draws: u64) {
    let spec = HiddenSpec::default();
    let outcomes: Vec<(u64, Outcome)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2u64)
            .map(|t| {
                let spec = &spec;
                s.spawn(move || {
                    (0..draws)
                        .filter(|i| i % 2 == t)
                        .map(|i| (i, run_draw(spec, 1000 + i)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<_> = handles.into_iter().flat_map(|h| h.join().expect("draw thread")).collect();
        all.sort_by_key(|(i, _)| *i);
        all
    });
    let mut all = Tally::default();
    let mut per: BTreeMap<(&str, &str), Tally> = BTreeMap::new();
    for (_, o) in &outcomes {
        println!("{}", o.line);
        all.add(o);
        for c in &o.classes {
            per.entry(*c).or_default().add(o);
        }
    }
    let mut table = String::from(
        "| class | draws | PB within ±5% | band size within ±10% | both | layout recognised | \
         held to the targets | PB within ±5% | band size within ±10% |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut short = Vec::new();
    for ((mech, setting), t) in per.iter().map(|(k, t)| (*k, t)).chain([(("all draws", ""), &all)]) {
        let name = if setting.is_empty() { mech.to_string() } else { format!("{mech}: {setting}") };
        table += &format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            t.draws,
            pct(t.pb, t.draws),
            pct(t.band, t.draws),
            pct(t.both, t.draws),
            pct(t.layout, t.draws),
            t.held,
            pct(t.held_pb, t.held),
            pct(t.held_band, t.held),
        );
        if let Some(why) = t.short_of_target() {
            short.push(format!("{name}: {why}"));
        }
    }
    println!("\n{table}");
    let failures: Vec<&str> =
        outcomes.iter().filter(|(_, o)| !(o.pb_ok && o.band_ok)).map(|(_, o)| o.line.as_str()).collect();
    for f in &failures {
        eprintln!("{f}");
    }
    // The known limit: the PB at most one batch low (and 1% for the rest of the error), never
    // high.
    let beyond_limit: Vec<&str> = outcomes
        .iter()
        .filter_map(|(_, o)| {
            let batch = o.limit?;
            let ok = o.pb_err.is_some_and(|e| e >= -(batch + 0.01) && e <= 0.05);
            (!ok).then_some(o.line.as_str())
        })
        .collect();
    assert!(beyond_limit.is_empty(), "PB beyond the known limit:\n{}", beyond_limit.join("\n"));
    let need = (TARGET * all.held as f64).ceil() as usize;
    assert!(
        all.held_pb >= need && all.held_band >= need,
        "PB {} and band {} of {} draws passed, {need} needed; failures:\n{}",
        all.held_pb,
        all.held_band,
        all.held,
        failures.join("\n")
    );
    assert!(short.is_empty(), "classes short of the target:\n{}\n{table}", short.join("\n"));
}

#[test]
fn probes_recover_hidden_pb_and_bands() {
    accuracy(48);
}

#[test]
#[ignore = "400 draws: run in release, see the module documentation"]
fn probes_recover_hidden_pb_and_bands_400_draws() {
    accuracy(400);
}

/// The band-size profile over the LBA range (SAC §5.2: "a series of measurements for different
/// target LBAs"): four targets on a drive whose bands shrink from 400 KB at LBA 0 to 150 KB
/// (SAC's 40 → 15 MB at 1/100), fitted back to an LBA-dependent layout within ±10% at both ends.
#[test]
fn band_profile_recovers_lba_dependent_bands() {
    use shingled_core::{ByteSize, SizeSpec};
    use shingled_device::{BuildContext, DriveConfig};
    use shingled_probe::{ModelTarget, NoiseConfig, Noisy};

    let mut cfg = DriveConfig::from_profile("st8000as0002").unwrap();
    cfg.set_capacity(ByteSize::gb(50));
    let c = cfg.dm_smr_mut().unwrap();
    c.pb_size = SizeSpec::Absolute(ByteSize::mb(300));
    c.pb_max_entries = Some(1843);
    c.bands = BandConfig::LbaDependent { outer: ByteSize(400_000), inner: ByteSize(150_000) };
    let drive = cfg.build(&BuildContext::whole_drive(ByteSize::gb(50))).unwrap();
    let noisy = Noisy::new(drive, NoiseConfig { jitter: 0.2, seed: 3, ..NoiseConfig::default() });
    let mut target = ModelTarget::new(Box::new(noisy), "lba-dependent");
    let cap = target.capacity();
    let probe = BandProbeConfig {
        pb_bytes: 1843 * 4096,
        targets: (0..4).map(|i| cap / 8 + i * cap / 4).collect(),
        read_size: 32 << 10,
        ..BandProbeConfig::default()
    };
    let report = detect_bands(&mut target, &probe, &mut |_| {}).unwrap();
    let Some(BandConfig::LbaDependent { outer, inner }) = fit_band_layout(&report, cap) else {
        panic!("not fitted as LBA-dependent: {:?}", fit_band_layout(&report, cap));
    };
    println!("fitted {outer} -> {inner} (true 400KB -> 150KB)");
    assert!(rel(outer.0 as f64, 400e3).abs() <= 0.10, "outer {outer}");
    assert!(rel(inner.0 as f64, 150e3).abs() <= 0.10, "inner {inner}");
}

/// A drive model for the three hard cases below: a profile on 50 GB with a 300 MB PB.
fn hard_case_drive(profile: &str, entries: Option<u64>, bands: BandConfig) -> shingled_probe::ModelTarget {
    use shingled_core::{ByteSize, SizeSpec};
    use shingled_device::{BuildContext, DriveConfig};
    use shingled_probe::{ModelTarget, NoiseConfig, Noisy};
    let mut cfg = DriveConfig::from_profile(profile).unwrap();
    cfg.set_capacity(ByteSize::gb(50));
    let c = cfg.dm_smr_mut().unwrap();
    c.pb_size = SizeSpec::Absolute(ByteSize(300_000_000 / 4096 * 4096));
    c.pb_max_entries = entries;
    c.bands = bands;
    let drive = cfg.build(&BuildContext::whole_drive(ByteSize::gb(50))).unwrap();
    let noisy = Noisy::new(drive, NoiseConfig { jitter: 0.2, seed: 15, ..NoiseConfig::default() });
    ModelTarget::new(Box::new(noisy), profile)
}

fn pb_at(target: &mut dyn ProbeTarget, upper: u64) -> shingled_probe::PbReport {
    let cfg = PbProbeConfig { upper_bound: Some(upper), ..PbProbeConfig::default() };
    detect_pb(target, &cfg, &mut |_| {}).unwrap()
}

/// Hard case 1: the `st8000as0002` profile's batch cleaning (down to 98.5%). With 40 MB
/// bands and a 300 MB PB, one stall frees nearly the whole PB, so `C` = 3 × the PB holds three
/// stalls; IOPS per window recover between them and there was "no IOPS drop". The PB is found
/// at the first stall: 300 MB less the few slots dead entries still held (at-head freeing with a
/// low watermark). With the entry limit (scaled to 1843) it is exact too.
#[test]
fn batch_cleaning_pb_is_the_first_stall() {
    let bands = || BandConfig::LbaDependent {
        outer: shingled_core::ByteSize::mb(40),
        inner: shingled_core::ByteSize::mb(15),
    };
    let pb = 300_000_000 / 4096 * 4096;
    for upper in [900 << 20, 3000 << 20] {
        let r = pb_at(&mut hard_case_drive("st8000as0002", None, bands()), upper);
        let err = rel(r.pb_bytes as f64, pb as f64);
        println!("no entry limit, C = {upper}: {} ({:+.2}%), {:?}", r.pb_bytes, err * 100.0, r.cliff);
        assert!(r.emptied && (-0.01..=0.0).contains(&err), "{err}");
        let r = pb_at(&mut hard_case_drive("st8000as0002", Some(1843), bands()), upper);
        assert_eq!(r.pb_bytes, 1843 * 4096, "entry limit, C = {upper}");
    }
}

/// Hard case 2: PORE's in-place emulator, which cannot be emptied (no idle cleaning). Step 1
/// writes another range than step 2: had step 2 rewritten blocks step 1 left in the PB, they
/// would be updated in place without a new slot, and the PB would come out 5–12% high.
#[test]
fn in_place_pb_that_cannot_be_emptied() {
    let pb = 300_000_000 / 4096 * 4096;
    for upper in [900 << 20, 1500 << 20] {
        let mut t = hard_case_drive(
            "pore-emulator",
            None,
            BandConfig::Fixed { size: shingled_core::ByteSize::mib(18) },
        );
        let r = pb_at(&mut t, upper);
        assert!(!r.emptied, "no idle cleaning");
        assert_eq!(r.pb_bytes, pb, "C = {upper}");
    }
}

/// Hard case 3: bands each drawn uniformly in 180–360 KB, probed at four targets. The
/// sizes were measured well, but the medians of four targets differ by chance, and the layout
/// was fitted as LBA-dependent; it is uniform-random, between about the sizes' 10th and 90th
/// percentiles.
#[test]
fn uniform_bands_are_fitted_as_uniform() {
    use shingled_core::ByteSize;
    let bands = BandConfig::UniformRandom { min: ByteSize(180_000), max: ByteSize(360_000), seed: 15 };
    let mut target = hard_case_drive("st8000as0002", Some(1843), bands);
    let cap = target.capacity();
    let probe = BandProbeConfig {
        pb_bytes: 1843 * 4096,
        targets: (0..4).map(|i| cap / 8 + i * cap / 4).collect(),
        read_size: 32 << 10,
        ..BandProbeConfig::default()
    };
    let report = detect_bands(&mut target, &probe, &mut |_| {}).unwrap();
    let fitted = fit_band_layout(&report, cap);
    println!("{} bands: {fitted:?}", report.accepted_bands().len());
    let Some(BandConfig::UniformRandom { min, max, .. }) = fitted else { panic!("{fitted:?}") };
    assert!(
        (150e3..=230e3).contains(&(min.0 as f64)) && (300e3..=380e3).contains(&(max.0 as f64)),
        "{min} {max}"
    );
}
