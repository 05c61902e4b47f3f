//! The registry of drive models. The named profiles are in [`crate::profiles`].
//!
//! [`DriveConfig`] is what a configuration file names under `[drive]`:
//!
//! ```toml
//! [drive]
//! model = "dm-smr"
//! pb_size = "1/256"
//! pb_flavour = "in-place"
//! bands = { kind = "fixed", size = "18MiB" }
//! [drive.mechanism]
//! rpm = 7200
//! ```
//!
//! Every field has a default, so a table names only what it changes. The SSD cache device is
//! configured separately ([`SsdConfig`](crate::SsdConfig)), since every run has one next to the disk.
//!
//! Adding a model = one file with its `XxxConfig` + one variant here (+ its profiles in
//! [`crate::profiles`]).

use crate::dm_smr::DmSmrConfig;
use crate::error::Result;
use crate::hdd::{Hdd, HddConfig};
use crate::smart::SmartConfig;
use crate::Drive;
// Defined at the crate root, beside `Drive`, so that the models can take it without
// depending on this registry; still reachable here.
pub use crate::BuildContext;
use serde::{Deserialize, Serialize};
use shingled_core::{BandConfig, ByteSize, SizeSpec};

/// A disk model and its parameters. Serialized with a `model` tag: `model = "cmr"`,
/// `model = "dm-smr"` or `model = "smart"`, followed by that model's fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum DriveConfig {
    /// Conventional drive: host LBAs straight onto the mechanism (the CMR-only baseline).
    Cmr(HddConfig),
    /// Drive-managed SMR: persistent buffer + bands (the SMR-only baseline, and the disk under
    /// every SSD cache experiment).
    DmSmr(DmSmrConfig),
    /// SMaRT: a track-level shingled translation layer (He & Du, FAST '17).
    Smart(SmartConfig),
}

impl Default for DriveConfig {
    fn default() -> Self {
        DriveConfig::DmSmr(DmSmrConfig::default())
    }
}

impl DriveConfig {
    /// Short model name, as in the `model` tag.
    pub fn model(&self) -> &'static str {
        match self {
            DriveConfig::Cmr(_) => "cmr",
            DriveConfig::DmSmr(_) => "dm-smr",
            DriveConfig::Smart(_) => "smart",
        }
    }

    /// Checks every field that can be checked without a build context; errors name the field.
    pub fn validate(&self) -> Result<()> {
        match self {
            DriveConfig::Cmr(c) => c.validate(),
            DriveConfig::DmSmr(c) => c.validate(),
            DriveConfig::Smart(c) => c.validate(),
        }
    }

    /// Validates, resolves relative sizes against `ctx` and builds the model.
    pub fn build(&self, ctx: &BuildContext) -> Result<Box<dyn Drive>> {
        Ok(match self {
            DriveConfig::Cmr(c) => Box::new(Hdd::new(c)?),
            DriveConfig::DmSmr(c) => Box::new(c.build(ctx)?),
            DriveConfig::Smart(c) => Box::new(c.build()?),
        })
    }

    /// The CMR-only baseline's drive: the `pore-cmr` profile (PORE's 7200 rpm CMR, calibrated to its Fig. 3, drive write cache on).
    pub fn default_cmr() -> DriveConfig {
        DriveConfig::Cmr(HddConfig::pore_cmr())
    }

    /// Baseline name stem: `cmr`, `smr` or `smart` (as in the papers' "CMR-only" / "SMR-only").
    pub fn short_name(&self) -> &'static str {
        match self {
            DriveConfig::Cmr(_) => "cmr",
            DriveConfig::DmSmr(_) => "smr",
            DriveConfig::Smart(_) => "smart",
        }
    }

    /// Host-visible capacity: requests must end at or below it. For SMaRT it depends on the
    /// layout and the utilisation ([`SmartConfig::host_capacity`]); `None` if that layout is
    /// invalid (building then reports why).
    pub fn capacity(&self) -> Option<ByteSize> {
        Some(match self {
            DriveConfig::Cmr(c) => c.capacity,
            DriveConfig::DmSmr(c) => c.capacity,
            DriveConfig::Smart(c) => return c.host_capacity().ok(),
        })
    }

    /// Sets the host-visible capacity. For a DM-SMR drive the mechanism grows too when the
    /// persistent buffer and the bands would no longer fit on it (same rates and seek times: a
    /// larger drive of the same family); it never shrinks. For SMaRT it sets `shingled_size` to
    /// `capacity / utilisation` (the host capacity is then that, less up to one track per zone
    /// of rounding); with derived zones the mechanism grows (by 5% more, for the zones' rounding)
    /// when it would not hold the RAZ and that space, while a zone table that is too short makes
    /// the build fail naming `zones`.
    pub fn set_capacity(&mut self, capacity: ByteSize) {
        match self {
            DriveConfig::Cmr(c) => c.capacity = capacity,
            DriveConfig::DmSmr(c) => {
                c.capacity = capacity;
                // The largest PB this config can resolve to: a fraction refers to the written
                // range, which cannot exceed the capacity.
                let pb_max = match c.pb_size {
                    SizeSpec::Absolute(b) => b.0,
                    SizeSpec::Fraction(f) => (capacity.0 as f64 * f.min(1.0)).ceil() as u64,
                };
                let need = capacity.0.saturating_add(pb_max);
                if c.mechanism.capacity.0 < need {
                    c.mechanism.capacity = ByteSize(need);
                }
            }
            DriveConfig::Smart(c) => {
                let u = if c.utilisation.is_finite() && c.utilisation > 0.0 { c.utilisation } else { 1.0 };
                let phys = (capacity.0 as f64 / u).ceil() as u64;
                c.shingled_size = Some(ByteSize(phys));
                let need = c.raz.0.saturating_add(phys);
                if c.zones.is_empty() && c.mechanism.capacity.0 < need {
                    c.mechanism.capacity = ByteSize((need as f64 * 1.05).ceil() as u64);
                }
            }
        }
    }

    /// The DM-SMR parameters, if this is a DM-SMR drive.
    pub fn dm_smr(&self) -> Option<&DmSmrConfig> {
        match self {
            DriveConfig::DmSmr(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => None,
        }
    }

    /// The DM-SMR parameters, if this is a DM-SMR drive (for command-line overrides).
    pub fn dm_smr_mut(&mut self) -> Option<&mut DmSmrConfig> {
        match self {
            DriveConfig::DmSmr(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => None,
        }
    }

    /// The SMaRT parameters, if this is a SMaRT drive.
    pub fn smart(&self) -> Option<&SmartConfig> {
        match self {
            DriveConfig::Smart(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::DmSmr(_) => None,
        }
    }

    /// The SMaRT parameters, if this is a SMaRT drive (for command-line overrides, such as the
    /// utilisation of an experiment).
    pub fn smart_mut(&mut self) -> Option<&mut SmartConfig> {
        match self {
            DriveConfig::Smart(c) => Some(c),
            DriveConfig::Cmr(_) | DriveConfig::DmSmr(_) => None,
        }
    }

    /// The disk mechanics underneath (for command-line overrides such as `--write-cache`).
    pub fn mechanism_mut(&mut self) -> &mut HddConfig {
        match self {
            DriveConfig::Cmr(c) => c,
            DriveConfig::DmSmr(c) => &mut c.mechanism,
            DriveConfig::Smart(c) => &mut c.mechanism,
        }
    }

    /// The band layout used to measure a trace's written range: the drive's own for DM-SMR, the
    /// default (PORE's uniform 17–36 MB) for drives without bands.
    pub fn bands_or_default(&self) -> BandConfig {
        match self {
            DriveConfig::DmSmr(c) => c.bands.clone(),
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => BandConfig::default(),
        }
    }

    /// PB capacity in blocks for a trace with this written range, as [`DriveConfig::build`]
    /// would resolve it; `None` for drives without a PB or if it cannot be resolved.
    pub fn pb_blocks(&self, written_range: ByteSize) -> Option<u64> {
        match self {
            DriveConfig::DmSmr(c) => {
                let ctx = BuildContext { written_range, accessed_range: written_range };
                c.resolve_pb(&ctx).ok().map(|b| b.blocks())
            }
            DriveConfig::Cmr(_) | DriveConfig::Smart(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dm_smr::{PbFlavour, PbFree};
    use crate::profiles::{cheetah_15k5_zones, profile, profile_names};
    use crate::ssd::SsdConfig;

    #[test]
    fn serde_uses_the_model_tag_and_rejects_unknown_fields() {
        for name in profile_names() {
            let cfg = profile(name).unwrap();
            let j = serde_json::to_string(&cfg).unwrap();
            assert!(j.contains(&format!("\"model\":\"{}\"", cfg.model())), "{j}");
            assert_eq!(serde_json::from_str::<DriveConfig>(&j).unwrap(), cfg, "{name}");
        }
        let partial =
            r#"{"model":"dm-smr","pb_size":"1/128","pb_flavour":"in-place","mechanism":{"rpm":7200}}"#;
        let cfg: DriveConfig = serde_json::from_str(partial).unwrap();
        let DriveConfig::DmSmr(c) = &cfg else { panic!() };
        assert_eq!(c.pb_size, SizeSpec::Fraction(1.0 / 128.0));
        assert_eq!(c.pb_flavour, PbFlavour::InPlace);
        assert_eq!(c.pb_free, PbFree::Immediate);
        assert_eq!(c.mechanism.rpm, 7200);
        assert_eq!(c.mechanism.surfaces, HddConfig::default().surfaces);
        let bad = r#"{"model":"cmr","rpms":7200}"#;
        let e = serde_json::from_str::<DriveConfig>(bad).unwrap_err().to_string();
        assert!(e.contains("rpms"), "{e}");
        let bad = r#"{"model":"dm-smr","mechanism":{"seek":1}}"#;
        assert!(serde_json::from_str::<DriveConfig>(bad).is_err());
        let ssd: SsdConfig = serde_json::from_str(r#"{"read_latency_us": 50}"#).unwrap();
        assert_eq!(ssd.read_latency_us, 50.0);
        assert_eq!(ssd.write_latency_us, SsdConfig::default().write_latency_us);
    }

    #[test]
    fn helpers_for_the_command_line() {
        let mut cfg = profile("pore-emulator").unwrap();
        assert_eq!(cfg.short_name(), "smr");
        assert_eq!(cfg.pb_blocks(ByteSize::gb(256)), Some(1_000_000_000 / 4096));
        cfg.set_capacity(ByteSize::gb(900));
        assert_eq!(cfg.capacity(), Some(ByteSize::gb(900)));
        let ctx = BuildContext::whole_drive(ByteSize::gb(900));
        cfg.build(&ctx).expect("the mechanism grew to hold PB + bands");
        cfg.dm_smr_mut().unwrap().pb_flavour = "append-only".parse().unwrap();
        assert_eq!(cfg.dm_smr_mut().unwrap().pb_flavour, PbFlavour::AppendOnly);
        let mut cmr = DriveConfig::default_cmr();
        assert!(cmr.dm_smr_mut().is_none() && cmr.pb_blocks(ByteSize::gb(1)).is_none());
        assert_eq!(cmr.short_name(), "cmr");
        assert_eq!(cmr.bands_or_default(), BandConfig::default());
        assert!(cmr.smart().is_none());
        cmr.mechanism_mut().write_cache.enabled = false;
        assert!(!cmr.mechanism_mut().write_cache.enabled);
    }

    #[test]
    fn smart_profile_has_the_papers_layout() {
        let mut cfg = profile("smart-cheetah").unwrap();
        assert_eq!((cfg.model(), cfg.short_name()), ("smart", "smart"));
        let c = cfg.smart().unwrap().clone();
        // The host sees U × the tracks of each zone of the 142 GB I-region.
        let cap = cfg.capacity().unwrap().0 as f64;
        assert!((cap / 142e9 - 0.6).abs() < 0.001, "{cap}");
        cfg.smart_mut().unwrap().utilisation = 0.3;
        let cap3 = cfg.capacity().unwrap().0 as f64;
        assert!((cap3 / 142e9 - 0.3).abs() < 0.001, "{cap3}");
        assert_eq!(c.zones.len(), 14);
        let sectors: u64 = c.zones.iter().map(|z| z.tracks as u64 * z.sectors_per_track as u64).sum();
        assert_eq!(sectors, 287_194_400, "the zone table's sector count");
        // set_capacity: about the capacity asked for (rounding: < one track per zone).
        let mut d = profile("smart-cheetah").unwrap();
        d.set_capacity(ByteSize::gb(30));
        let got = d.capacity().unwrap().0;
        assert!(got <= 30_000_000_000 && got > 30_000_000_000 - 14 * 614_400, "{got}");
        let mut g = DriveConfig::Smart(SmartConfig::default());
        g.set_capacity(ByteSize::gb(500));
        let got = g.capacity().unwrap().0;
        assert!(got <= 500_000_000_000 && got > 499_000_000_000, "derived zones grow: {got}");
        // Validation names the field.
        let bad = DriveConfig::Smart(SmartConfig { utilisation: 1.0, ..SmartConfig::default() });
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("`utilisation`") && e.contains('1'), "{e}");
        let bad = DriveConfig::Smart(SmartConfig { head_width: 1, ..SmartConfig::default() });
        assert!(bad.validate().unwrap_err().to_string().contains("`head_width`"));
        let mut bad = SmartConfig { zones: cheetah_15k5_zones(), ..SmartConfig::default() };
        bad.zones[3].sectors_per_track = 4;
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("`zones[3].sectors_per_track`") && e.contains('4'), "{e}");
        // The whole table (with spares) does not fit the 146.8 GB mechanism.
        let whole = SmartConfig { zones: cheetah_15k5_zones(), ..SmartConfig::default() };
        assert!(whole.validate().unwrap_err().to_string().contains("`zones`"));
        let cached = SmartConfig {
            mechanism: HddConfig {
                write_cache: crate::WriteCacheConfig { enabled: true, ..Default::default() },
                ..HddConfig::cheetah_15k5()
            },
            ..SmartConfig::default()
        };
        assert!(cached.validate().unwrap_err().to_string().contains("mechanism.write_cache.enabled"));
        let bad = r#"{"model":"smart","utilisatoin":0.3}"#;
        assert!(serde_json::from_str::<DriveConfig>(bad).unwrap_err().to_string().contains("utilisatoin"));
        let ok: DriveConfig = serde_json::from_str(
            r#"{"model":"smart","utilisation":0.3,"zones":[{"tracks":100,"sectors_per_track":64}]}"#,
        )
        .unwrap();
        assert_eq!(ok.capacity(), Some(ByteSize(30 * 8 * 4096)));
    }
}
