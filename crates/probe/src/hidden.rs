//! Drives with hidden parameters drawn at random, to check that the probes recover them
//! (a model with hidden parameters must get them back: Skylight's probes (Aghayev & Desnoyers,
//! FAST '15) run against our emulator, a closed-loop check of its observable behaviour).
//!
//! A draw takes a calibrated DM-SMR profile and replaces its PB size and band layout with
//! random values from the ranges the papers report (PB 0.5–30 GB: SAC Table 3's 720 MB and
//! 30.3 GB, Skylight's 20–25 GB; bands 15–40 MB: SAC §5.2, Skylight's 17–36 MB), then scales
//! every size down by [`HiddenSpec::scale`] so a probe runs in test time: capacity, PB, bands
//! and the PB entry limit all shrink by the same factor, keeping their ratios. Times do not
//! scale: the mechanics stay the profile's. Service times are scattered by [`Noisy`].
//!
//! Each of the model's PB mechanisms is drawn too ([`HiddenSpec`]'s probabilities): the
//! flavour (append-only or in place), when dead slots are reused (at once or when the log's
//! head passes), an entry limit, idle cleaning, cleaning from a high watermark, batch cleaning
//! down to a low watermark, the merge cost (per block or at the PB's bandwidth), and the PB's
//! medium (disk or flash), with the band layout (fixed, uniform-random or LBA-dependent).
//!
//! Backwards compatibility: a spec read from JSON or TOML that lacks a field added later means
//! what it meant before that field existed (the base profile's setting, or off), while
//! [`HiddenSpec::default`] draws every mechanism.

use crate::error::Result;
use crate::noisy::{NoiseConfig, Noisy};
use crate::target::ModelTarget;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use shingled_core::{BandConfig, ByteSize, SizeSpec};
use shingled_device::profiles::{SKYLIGHT_HIGH_WATERMARK, ST8000AS0002_CLEAN_LOW_WATERMARK};
use shingled_device::{BuildContext, DmSmrConfig, DriveConfig, PbFlavour, PbFree, PbMedium};

/// The distribution hidden drives are drawn from. Sizes are unscaled bytes. Probabilities are
/// clamped to `[0, 1]`; an `Option` left out (`None`) keeps the base profile's setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HiddenSpec {
    /// Factor applied to every size. Default 1/100.
    pub scale: f64,
    /// Profile the drive is based on (mechanics, and every mechanism not drawn). Default
    /// `st8000as0002` (the drive SAC §5 probed).
    pub base_profile: String,
    /// Host capacity before scaling. Default 5 TB.
    pub capacity: u64,
    /// Smallest PB before scaling; drawn log-uniformly up to `pb_max`. Default 0.5 GB.
    pub pb_min: u64,
    /// Largest PB before scaling. Default 30 GB.
    pub pb_max: u64,
    /// Smallest band before scaling. Default 15 MB.
    pub band_min: u64,
    /// Largest band before scaling. Default 40 MB.
    pub band_max: u64,
    /// Probability of an LBA-dependent layout (bands falling linearly from an outer size in the
    /// top quarter of `[band_min, band_max]` to an inner size in its bottom quarter, as Skylight
    /// and SAC found). Default 1/3; left out: 0.
    #[serde(default)]
    pub lba_dependent_probability: f64,
    /// Otherwise, probability of one fixed band size for the whole drive (drawn uniformly in
    /// `[band_min, band_max]`); else each band's size is drawn uniformly. Default 0.5.
    pub fixed_probability: f64,
    /// Smallest jitter of the timing noise; drawn uniformly up to `jitter_max`. Default 0.1.
    pub jitter_min: f64,
    /// Largest jitter. Default 0.3.
    pub jitter_max: f64,
    /// Probability that the drive keeps the base profile's PB entry limit (scaled); otherwise it
    /// has none and only the PB's bytes count. Default 0.5.
    pub entry_limit_probability: f64,
    /// Probability that the drive keeps the base profile's idle cleaning; otherwise its PB is
    /// only ever cleaned when full, and step 1 of the PB probe cannot empty it. Default 0.5.
    pub idle_cleaning_probability: f64,
    /// Probability of batch cleaning: once cleaning is forced, the drive cleans down to a low
    /// watermark drawn in `low_watermark_min ..= low_watermark_max` (of the high watermark, if
    /// there is one). Default 0.5; left out: 0 (such drives were not drawn before).
    #[serde(default)]
    pub batch_cleaning_probability: f64,
    /// Smallest low watermark. Default 0.95 (a stall frees 5% of the PB).
    #[serde(default = "default_low_min")]
    pub low_watermark_min: f64,
    /// Largest low watermark. Default 0.995 (0.5%; the `st8000as0002` profile's is 0.985).
    #[serde(default = "default_low_max")]
    pub low_watermark_max: f64,
    /// Probability of cleaning from a high watermark of 80% (SMaRT's Skylight drive) instead of
    /// when full. Default 0.25.
    #[serde(default)]
    pub high_watermark_probability: Option<f64>,
    /// Probability of an in-place PB (PORE's emulator: a rewrite of a buffered block updates it
    /// where it is) instead of an append-only one. Default 0.5.
    #[serde(default)]
    pub in_place_probability: Option<f64>,
    /// Probability that dead PB slots are reused at once (`immediate`) instead of when the log's
    /// head passes them (`at-head`). Default 0.5.
    #[serde(default)]
    pub immediate_free_probability: Option<f64>,
    /// Probability that merged PB blocks cost only the PB's read bandwidth instead of the
    /// profile's per-block merge cost. Default 0.5.
    #[serde(default)]
    pub bandwidth_merge_probability: Option<f64>,
    /// Probability of a flash PB (PORE Eq. 1's first case) instead of one on the platters.
    /// Default 0.25.
    #[serde(default)]
    pub flash_probability: Option<f64>,
}

fn default_low_min() -> f64 {
    0.95
}

fn default_low_max() -> f64 {
    0.995
}

impl Default for HiddenSpec {
    fn default() -> Self {
        HiddenSpec {
            scale: 0.01,
            base_profile: "st8000as0002".into(),
            capacity: 5_000_000_000_000,
            pb_min: 500_000_000,
            pb_max: 30_000_000_000,
            band_min: 15_000_000,
            band_max: 40_000_000,
            lba_dependent_probability: 1.0 / 3.0,
            fixed_probability: 0.5,
            jitter_min: 0.1,
            jitter_max: 0.3,
            entry_limit_probability: 0.5,
            idle_cleaning_probability: 0.5,
            batch_cleaning_probability: 0.5,
            low_watermark_min: default_low_min(),
            low_watermark_max: default_low_max(),
            high_watermark_probability: Some(0.25),
            in_place_probability: Some(0.5),
            immediate_free_probability: Some(0.5),
            bandwidth_merge_probability: Some(0.5),
            flash_probability: Some(0.25),
        }
    }
}

/// The hidden band layout of a draw (scaled bytes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum HiddenBands {
    /// Every band this size.
    Fixed(u64),
    /// Each band's size uniform in `[min, max]`.
    Uniform(u64, u64),
    /// Falling linearly from the first (LBA 0) to the second (the last LBA).
    LbaDependent(u64, u64),
}

/// One drawn drive: its configuration (the hidden truth) and its noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HiddenDrive {
    /// The seed it was drawn with.
    pub seed: u64,
    /// The scaled configuration.
    pub config: DmSmrConfig,
    /// The timing noise.
    pub noise: NoiseConfig,
    /// PB size in bytes (scaled).
    pub pb_bytes: u64,
    /// Band layout (scaled).
    pub bands: HiddenBands,
}

fn scaled(x: u64, s: f64) -> u64 {
    (((x as f64 * s) / 4096.0).round() as u64).max(1) * 4096
}

/// `true` with probability `p` (clamped to [0, 1]); draws nothing when `p` is 0, so that a
/// mechanism left out of a spec does not move the draws of the others.
fn chance(rng: &mut impl Rng, p: f64) -> bool {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    p > 0.0 && rng.random_bool(p)
}

/// `yes` with probability `p`, else `no`; `base` when `p` is `None` (the base profile's
/// setting).
fn pick<T>(rng: &mut impl Rng, p: Option<f64>, yes: T, no: T, base: T) -> T {
    match p {
        Some(p) if chance(rng, p) => yes,
        Some(_) => no,
        None => base,
    }
}

impl HiddenDrive {
    /// The band probe's read size on a drawn drive: SAC reads 1 MiB, the drawn bands are
    /// scaled down like everything else.
    pub const READ_SIZE: u64 = 32 << 10;

    /// Draws a drive from `spec` with `seed`.
    pub fn draw(spec: &HiddenSpec, seed: u64) -> Result<HiddenDrive> {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0x41dd_e4d5);
        // The mechanisms added later draw from their own stream, so that a spec without them
        // draws what it drew before.
        let mut mech = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0x3ec4_a215);
        let s = spec.scale;
        let base = match DriveConfig::from_profile(&spec.base_profile)? {
            DriveConfig::DmSmr(c) => c,
            other => {
                return Err(crate::error::invalid(
                    "base_profile",
                    &spec.base_profile,
                    format!("a {} profile has no PB to hide; name a dm-smr profile", other.model()),
                ))
            }
        };
        let (lo, hi) = ((spec.pb_min as f64).ln(), (spec.pb_max as f64).ln());
        let pb_bytes = scaled(rng.random_range(lo..=hi).exp() as u64, s);
        let (bmin, bmax) = (scaled(spec.band_min, s), scaled(spec.band_max, s));
        let mut bands = if rng.random_bool(spec.fixed_probability.clamp(0.0, 1.0)) {
            HiddenBands::Fixed(rng.random_range(bmin / 4096..=bmax / 4096) * 4096)
        } else {
            HiddenBands::Uniform(bmin, bmax)
        };
        if chance(&mut mech, spec.lba_dependent_probability) {
            let q = (bmax - bmin) / 4 / 4096;
            let outer = bmax - mech.random_range(0..=q) * 4096;
            let inner = bmin + mech.random_range(0..=q) * 4096;
            bands = HiddenBands::LbaDependent(outer, inner);
        }
        let band_seed: u64 = match bands {
            HiddenBands::Uniform(..) => rng.random(),
            _ => 0,
        };
        let band_cfg = match bands {
            HiddenBands::Fixed(size) => BandConfig::Fixed { size: ByteSize(size) },
            HiddenBands::Uniform(min, max) => {
                BandConfig::UniformRandom { min: ByteSize(min), max: ByteSize(max), seed: band_seed }
            }
            HiddenBands::LbaDependent(outer, inner) => {
                BandConfig::LbaDependent { outer: ByteSize(outer), inner: ByteSize(inner) }
            }
        };
        let jitter = rng.random_range(spec.jitter_min..=spec.jitter_max);
        let idle =
            base.idle_window_ms.filter(|_| rng.random_bool(spec.idle_cleaning_probability.clamp(0.0, 1.0)));
        let capacity = scaled(spec.capacity, s);
        let pb_max_entries = base
            .pb_max_entries
            .filter(|_| rng.random_bool(spec.entry_limit_probability.clamp(0.0, 1.0)))
            .map(|e| ((e as f64 * s).round() as u64).max(16));
        let noise = NoiseConfig { jitter, seed: rng.random(), ..NoiseConfig::default() };

        let pb_flavour = pick(
            &mut mech,
            spec.in_place_probability,
            PbFlavour::InPlace,
            PbFlavour::AppendOnly,
            base.pb_flavour,
        );
        let pb_free =
            pick(&mut mech, spec.immediate_free_probability, PbFree::Immediate, PbFree::AtHead, base.pb_free);
        let high = pick(
            &mut mech,
            spec.high_watermark_probability,
            Some(SKYLIGHT_HIGH_WATERMARK),
            None,
            base.pb_clean_high_watermark,
        );
        let merge = pick(
            &mut mech,
            spec.bandwidth_merge_probability,
            None,
            base.pb_merge_ms_per_block.or(Some(shingled_device::profiles::MERGE_MS_PER_BLOCK)),
            base.pb_merge_ms_per_block,
        );
        let medium = pick(&mut mech, spec.flash_probability, PbMedium::Flash, PbMedium::Disk, base.pb_medium);
        // Before batch cleaning was drawn, it was always off (whatever the base profile).
        let low = chance(&mut mech, spec.batch_cleaning_probability).then(|| {
            let (a, b) = (spec.low_watermark_min, spec.low_watermark_max);
            let w = if b > a { mech.random_range(a..=b) } else { a };
            let w = if w.is_finite() { w.clamp(0.0, 0.999) } else { ST8000AS0002_CLEAN_LOW_WATERMARK };
            high.map_or(w, |h| w * h)
        });
        let mut mechanism = base.mechanism.clone();
        if medium == PbMedium::Flash {
            // The volatile write cache sits in front of a PB on the platters only.
            mechanism.write_cache.enabled = false;
        }
        let mut d = DriveConfig::DmSmr(DmSmrConfig {
            capacity: ByteSize(capacity),
            pb_size: SizeSpec::Absolute(ByteSize(pb_bytes)),
            bands: band_cfg,
            idle_window_ms: idle,
            pb_clean_low_watermark: low,
            pb_clean_high_watermark: high,
            pb_max_entries,
            pb_flavour,
            pb_free,
            pb_merge_ms_per_block: merge,
            pb_medium: medium,
            mechanism,
            ..base
        });
        d.set_capacity(ByteSize(capacity));
        let DriveConfig::DmSmr(config) = d else { unreachable!("built as dm-smr") };
        Ok(HiddenDrive { seed, config, noise, pb_bytes, bands })
    }

    /// The PB capacity a probe writing `block_size` requests should find: the PB's bytes up to
    /// its high watermark (where cleaning starts), or, if the PB runs out of entries first,
    /// entries × `block_size` (SAC Table 3).
    pub fn expected_pb(&self, block_size: u64) -> u64 {
        let slots = self.pb_bytes / 4096;
        let high = self
            .config
            .pb_clean_high_watermark
            .map_or(slots, |w| ((w * slots as f64).ceil() as u64).clamp(1, slots));
        let by_entries = self.config.pb_max_entries.map_or(u64::MAX, |e| e.saturating_mul(block_size));
        (high * 4096).min(by_entries)
    }

    /// With batch cleaning (`pb_clean_low_watermark`), the share of [`HiddenDrive::expected_pb`]
    /// one forced cleaning frees: from full (entries) or the high watermark (slots) down to the
    /// low watermark. `None` for a drive that cleans only until the write fits.
    pub fn cleaning_batch(&self, block_size: u64) -> Option<f64> {
        let low = self.config.pb_clean_low_watermark?;
        let slots = self.pb_bytes / 4096;
        let high = self.config.pb_clean_high_watermark.unwrap_or(1.0);
        let by_entries = self.config.pb_max_entries.is_some_and(|e| {
            e.saturating_mul(block_size) < ((high * slots as f64).ceil() as u64).clamp(1, slots) * 4096
        });
        Some(if by_entries { 1.0 - low } else { (high - low) / high })
    }

    /// The classes of this draw, one per mechanism, as `(mechanism, setting)`: what the
    /// accuracy test reports its figures by.
    pub fn classes(&self) -> Vec<(&'static str, &'static str)> {
        let c = &self.config;
        let on = |b: bool| if b { "on" } else { "off" };
        vec![
            ("PB flavour", if c.pb_flavour == PbFlavour::InPlace { "in-place" } else { "append-only" }),
            ("dead slots freed", if c.pb_free == PbFree::Immediate { "immediate" } else { "at-head" }),
            ("entry limit", on(c.pb_max_entries.is_some())),
            ("idle cleaning", on(c.idle_window_ms.is_some())),
            ("high watermark", on(c.pb_clean_high_watermark.is_some())),
            ("batch cleaning", on(c.pb_clean_low_watermark.is_some())),
            ("merge cost", if c.pb_merge_ms_per_block.is_some() { "per block" } else { "bandwidth" }),
            ("PB medium", if c.pb_medium == PbMedium::Flash { "flash" } else { "disk" }),
            (
                "bands",
                match self.bands {
                    HiddenBands::Fixed(_) => "fixed",
                    HiddenBands::Uniform(..) => "uniform-random",
                    HiddenBands::LbaDependent(..) => "lba-dependent",
                },
            ),
        ]
    }

    /// Builds the drive, wrapped in its noise, as a probe target.
    pub fn target(&self) -> Result<ModelTarget> {
        let ctx = BuildContext::whole_drive(self.config.capacity);
        let drive = DriveConfig::DmSmr(self.config.clone()).build(&ctx)?;
        Ok(ModelTarget::new(
            Box::new(Noisy::new(drive, self.noise)),
            format!("hidden drive (seed {})", self.seed),
        ))
    }

    /// One line: the hidden values.
    pub fn describe(&self) -> String {
        let bands = match self.bands {
            HiddenBands::Fixed(s) => format!("fixed {}", ByteSize(s)),
            HiddenBands::Uniform(a, b) => format!("uniform {}–{}", ByteSize(a), ByteSize(b)),
            HiddenBands::LbaDependent(a, b) => format!("{} → {} over the LBAs", ByteSize(a), ByteSize(b)),
        };
        let c = &self.config;
        let entries = c.pb_max_entries.map(|e| format!(", {e} PB entries")).unwrap_or_default();
        let idle = if c.idle_window_ms.is_some() { "idle cleaning" } else { "no idle cleaning" };
        let high = c.pb_clean_high_watermark.map(|w| format!(", cleaning from {w}")).unwrap_or_default();
        let low = c.pb_clean_low_watermark.map(|w| format!(", batches down to {w:.3}")).unwrap_or_default();
        let merge = match c.pb_merge_ms_per_block {
            Some(ms) => format!("{ms} ms"),
            None => "bandwidth".into(),
        };
        format!(
            "seed {}: PB {} ({} blocks{entries}; {} {}, {} free, merge {merge}{high}{low}), bands {bands}, \
             {idle}, capacity {}, jitter ±{:.0}%",
            self.seed,
            ByteSize(self.pb_bytes),
            self.pb_bytes / 4096,
            c.pb_medium,
            c.pb_flavour,
            c.pb_free,
            c.capacity,
            self.noise.jitter * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec written before the mechanisms were drawn reads back as it was meant: the base
    /// profile's flavour, freeing, merge cost and medium, no high watermark, no batch cleaning,
    /// no LBA-dependent bands.
    #[test]
    fn an_old_spec_keeps_its_meaning() {
        let old: HiddenSpec = serde_json::from_str(r#"{"scale": 0.01, "fixed_probability": 0.5}"#).unwrap();
        assert_eq!(old.batch_cleaning_probability, 0.0);
        assert_eq!(old.lba_dependent_probability, 0.0);
        assert_eq!((old.in_place_probability, old.flash_probability), (None, None));
        let base = match DriveConfig::from_profile("st8000as0002").unwrap() {
            DriveConfig::DmSmr(c) => c,
            _ => unreachable!(),
        };
        for seed in 0..40 {
            let d = HiddenDrive::draw(&old, seed).unwrap();
            let c = &d.config;
            assert_eq!(
                (c.pb_flavour, c.pb_free, c.pb_medium),
                (base.pb_flavour, base.pb_free, base.pb_medium)
            );
            assert_eq!((c.pb_clean_low_watermark, c.pb_clean_high_watermark), (None, None));
            assert_eq!(c.pb_merge_ms_per_block, base.pb_merge_ms_per_block);
            assert!(!matches!(d.bands, HiddenBands::LbaDependent(..)));
            assert_eq!(d.cleaning_batch(4096), None);
        }
    }

    /// The default spec draws every mechanism both ways, and round-trips.
    #[test]
    fn the_default_spec_draws_every_mechanism() {
        let spec = HiddenSpec::default();
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<HiddenSpec>(&json).unwrap(), spec);
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let d = HiddenDrive::draw(&spec, seed).unwrap();
            seen.extend(d.classes());
            // The drawn configuration builds.
            if seed < 5 {
                d.target().unwrap();
            }
            if let (Some(low), Some(high)) =
                (d.config.pb_clean_low_watermark, d.config.pb_clean_high_watermark)
            {
                assert!(low < high);
            }
            assert!(d.expected_pb(4096) <= d.pb_bytes);
        }
        for (mech, settings) in [
            ("PB flavour", &["append-only", "in-place"][..]),
            ("dead slots freed", &["immediate", "at-head"]),
            ("entry limit", &["on", "off"]),
            ("idle cleaning", &["on", "off"]),
            ("high watermark", &["on", "off"]),
            ("batch cleaning", &["on", "off"]),
            ("merge cost", &["per block", "bandwidth"]),
            ("PB medium", &["disk", "flash"]),
            ("bands", &["fixed", "uniform-random", "lba-dependent"]),
        ] {
            for s in settings {
                assert!(seen.contains(&(mech, *s)), "{mech}: {s} never drawn");
            }
        }
    }
}
