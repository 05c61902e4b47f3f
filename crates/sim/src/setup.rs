//! Which named set-up a configuration runs in, and one line describing it (the set-ups
//! themselves, each a paper's drive, CMR-only baseline and way requests reach the drive, are in
//! `config`). The papers' time figures are only comparable with ours when the set-up is the
//! paper's, so every experiment runs in its paper's set-up unless told otherwise, and every
//! report names the set-up it ran in ([`describe`]).

use crate::config::{SetUp, SETUPS};
use crate::SimConfig;
use shingled_device::DriveConfig;

/// The set-up `cfg` runs in, if it is a named one.
pub fn setup_of(cfg: &SimConfig) -> Option<&'static SetUp> {
    SETUPS.iter().find(|s| s.matches(cfg))
}

/// A configuration named after the set-up it differs least from.
#[derive(Clone, Debug)]
pub struct Nearest {
    /// The set-up.
    pub setup: &'static SetUp,
    /// What `cfg` changes of it, one entry a field ("drive write cache enabled = true (sac:
    /// false)"); empty when `cfg` runs in exactly this set-up.
    pub changes: Vec<String>,
}

impl Nearest {
    /// "sac" or "sac [changed: drive write cache enabled = true (sac: false)]".
    pub fn name(&self) -> String {
        if self.changes.is_empty() {
            self.setup.name.to_string()
        } else {
            format!("{} [changed: {}]", self.setup.name, self.changes.join("; "))
        }
    }
}

/// More changed fields than this and a configuration is "custom", not a changed set-up.
const MAX_CHANGES: usize = 3;

/// The set-up `cfg` differs least from, with what it changes, when that is at most a few fields
/// of the same drive models (a set-up with a flag or two changed); `None` for a custom drive.
pub fn nearest(cfg: &SimConfig) -> Option<Nearest> {
    SETUPS
        .iter()
        .filter_map(|s| Some(Nearest { setup: s, changes: changes(s, cfg)? }))
        .filter(|n| n.changes.len() <= MAX_CHANGES)
        .min_by_key(|n| n.changes.len())
}

/// What `cfg` changes of `s` (`None` when a drive is another model); the CMR-only run of a
/// comparison, whose drive is the CMR drive, changes nothing by that.
fn changes(s: &SetUp, cfg: &SimConfig) -> Option<Vec<String>> {
    let cmr = s.cmr_config();
    let mut out = Vec::new();
    if !(cfg.cache.is_none() && cfg.drive == cmr) {
        out.extend(drive_changes("drive", s.name, &s.drive_config(), &cfg.drive)?);
    }
    out.extend(drive_changes("CMR-only drive", s.name, &cmr, &cfg.compare.cmr_drive)?);
    if cfg.io_unit != s.io_unit {
        out.push(format!("I/O unit = {} ({}: {})", cfg.io_unit.name(), s.name, s.io_unit.name()));
    }
    Some(out)
}

/// The fields in which drive `got` differs from the set-up's `want`, named by their
/// configuration keys; `None` when the models differ.
fn drive_changes(what: &str, setup: &str, want: &DriveConfig, got: &DriveConfig) -> Option<Vec<String>> {
    if want == got {
        return Some(Vec::new());
    }
    let (w, g) = (flat(want), flat(got));
    if w.get("model") != g.get("model") {
        return None;
    }
    let keys: std::collections::BTreeSet<&String> = w.keys().chain(g.keys()).collect();
    let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "unset".into());
    Some(
        keys.into_iter()
            .filter(|k| w.get(*k) != g.get(*k))
            .map(|k| {
                let name = k.trim_start_matches("mechanism.").replace(['.', '_'], " ");
                format!("{what} {name} = {} ({setup}: {})", show(g.get(k)), show(w.get(k)))
            })
            .collect(),
    )
}

/// A drive configuration's fields as `dotted.key -> value`.
fn flat(d: &DriveConfig) -> std::collections::BTreeMap<String, String> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut std::collections::BTreeMap<String, String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    walk(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, v, out);
                }
            }
            serde_json::Value::String(s) => {
                out.insert(prefix.to_string(), s.clone());
            }
            v => {
                out.insert(prefix.to_string(), v.to_string());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk("", &serde_json::to_value(d).unwrap_or_default(), &mut out);
    out
}

/// One line naming the set-up `cfg` runs in: its name when it is a named one, the nearest one
/// and what `cfg` changes of it when it changes a few fields ([`nearest`]), else "custom"; then
/// the drive as configured (model, mechanism, PB, bands, write cache) and the I/O unit.
pub fn describe(cfg: &SimConfig) -> String {
    let name = nearest(cfg).map_or_else(|| "custom".to_string(), |n| n.name());
    format!(
        "set-up {name}: {} | CMR-only: {} | I/O unit {}",
        drive_line(&cfg.drive),
        drive_line(&cfg.compare.cmr_drive),
        cfg.io_unit.name()
    )
}

/// A short description of a drive configuration.
pub fn drive_line(d: &DriveConfig) -> String {
    match d {
        DriveConfig::Cmr(h) => format!(
            "CMR {} rpm, write cache {}",
            h.rpm,
            if h.write_cache.enabled { h.write_cache.capacity.to_string() } else { "off".into() }
        ),
        DriveConfig::DmSmr(c) => format!(
            "DM-SMR {} rpm, PB {} {}/{} on {}, bands {}, write cache {}",
            c.mechanism.rpm,
            c.pb_size,
            c.pb_flavour,
            c.pb_free,
            c.pb_medium,
            band_line(&c.bands),
            if c.mechanism.write_cache.enabled {
                c.mechanism.write_cache.capacity.to_string()
            } else {
                "off".into()
            }
        ),
        DriveConfig::Smart(c) => format!(
            "SMaRT {} rpm, utilisation {:.0}%, head width {} tracks, R threshold {}, idle GC after {} ms",
            c.mechanism.rpm,
            c.utilisation * 100.0,
            c.head_width,
            c.fragmentation_threshold,
            c.idle_window_ms
        ),
    }
}

fn band_line(b: &shingled_core::BandConfig) -> String {
    use shingled_core::BandConfig::*;
    match b {
        Fixed { size } => format!("fixed {size}"),
        UniformRandom { min, max, .. } => format!("uniform {min}-{max}"),
        LbaDependent { outer, inner } => format!("{outer} -> {inner} over the LBAs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::setup;
    use crate::IoUnit;

    #[test]
    fn every_setup_applies_and_is_recognised() {
        for s in SETUPS {
            let mut cfg = SimConfig::default();
            s.apply(&mut cfg);
            assert_eq!(setup_of(&cfg).map(|x| x.name), Some(s.name));
            cfg.drive.validate().unwrap();
            cfg.compare.cmr_drive.validate().unwrap();
        }
        assert_eq!(setup_of(&SimConfig::default()).map(|s| s.name), Some("pore"));
        assert!(setup("nope").is_err());
    }

    #[test]
    fn a_changed_setup_is_named_with_its_changes() {
        let mut cfg = SimConfig::default();
        setup("sac").unwrap().apply(&mut cfg);
        cfg.drive.mechanism_mut().write_cache.enabled = true;
        let n = nearest(&cfg).unwrap();
        assert_eq!(n.setup.name, "sac");
        assert_eq!(n.changes, ["drive write cache enabled = true (sac: false)"]);
        assert!(describe(&cfg)
            .starts_with("set-up sac [changed: drive write cache enabled = true (sac: false)]: "));
        cfg.io_unit = IoUnit::Request;
        assert_eq!(nearest(&cfg).unwrap().changes.len(), 2);
        // Unchanged: the plain name.
        let mut cfg = SimConfig::default();
        setup("sac").unwrap().apply(&mut cfg);
        assert!(describe(&cfg).starts_with("set-up sac: "));
        // Another drive model is custom.
        cfg.drive = shingled_device::profile("pore-cmr").unwrap();
        cfg.cache = Some(Default::default());
        assert!(nearest(&cfg).is_none());
        assert!(describe(&cfg).starts_with("set-up custom: "));
    }
}
