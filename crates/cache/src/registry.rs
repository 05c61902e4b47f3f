//! The policy registry: one serde-tagged enum naming every policy and its configuration.
//!
//! Adding a policy = one file under `policy/` with its `XxxConfig: PolicyBuilder` + one line in
//! the `policies!` list below. The CLI's list, config files, Python and the golden tests all
//! read this enum, so nothing else needs editing.

use crate::policy::lru::LruConfig;
use crate::policy::lru_band::LruBandConfig;
use crate::policy::most::MostConfig;
use crate::{Policy, PolicyBuilder, PolicyContext, PolicyError};
use serde::{Deserialize, Serialize};

macro_rules! policies {
    ($( $(#[doc = $doc:literal])* $variant:ident($cfg:ty) = $name:literal ),* $(,)?) => {
        /// Every policy, tagged by `policy = "<name>"` in configuration files.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "policy")]
        #[non_exhaustive]
        pub enum PolicyConfig {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant($cfg), )*
        }

        impl PolicyConfig {
            /// The names of all policies, in registry order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// `(name, one-line description)` of every policy, in registry order (the
            /// description is the variant's doc comment).
            pub const DESCRIPTIONS: &'static [(&'static str, &'static str)] =
                &[$(($name, concat!($($doc),*))),*];

            /// This policy's name.
            pub fn name(&self) -> &'static str {
                match self { $(Self::$variant(_) => $name,)* }
            }

            /// The default configuration of the policy called `name`.
            pub fn default_for(name: &str) -> Option<Self> {
                match name { $($name => Some(Self::$variant(<$cfg>::default())),)* _ => None }
            }

            /// Validates and builds the policy.
            pub fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError> {
                match self { $(Self::$variant(c) => c.build(ctx),)* }
            }

            /// Whether the policy weighs drive costs ([`PolicyBuilder::needs_costs`]).
            pub fn needs_costs(&self) -> bool {
                match self { $(Self::$variant(c) => c.needs_costs(),)* }
            }

            /// Whether the policy is offline ([`PolicyBuilder::needs_future`]).
            pub fn needs_future(&self) -> bool {
                match self { $(Self::$variant(c) => c.needs_future(),)* }
            }
        }
    };
}

policies! {
    /// Least Recently Used.
    Lru(LruConfig) = "lru",
    /// LRU evicting the LRU block's whole (true) band.
    LruBand(LruBandConfig) = "lru-band",
    /// Evict the band with the most cached dirty blocks.
    Most(MostConfig) = "most",
    /// First In, First Out.
    Fifo(crate::policy::fifo::FifoConfig) = "fifo",
    /// ARC, Adaptive Replacement Cache (Megiddo & Modha, FAST'03).
    Arc(crate::policy::arc::ArcConfig) = "arc",
    /// S3-FIFO: small, main and ghost FIFO queues (Yang et al., SOSP'23).
    S3Fifo(crate::policy::s3fifo::S3FifoConfig) = "s3-fifo",
    /// PORE: Partially Open Region for Eviction (LRU base; CF, PF or BL; zones=bands: our extension).
    Pore(crate::policy::pore::PoreConfig) = "pore",
    /// SAC: cycle-driven write-back to ARS-chosen target bands, CDC clean/dirty balance (ASPLOS'20).
    Sac(crate::policy::sac::SacConfig) = "sac",
    /// MOST+CDC: MOST for dirty blocks, LRU for clean ones, SAC's CDC between them (SAC §6.3).
    MostCdc(crate::policy::most_cdc::MostCdcConfig) = "most-cdc",
    /// Belady's MIN (offline bound on hits): evict the block next used farthest in the future.
    Belady(crate::policy::belady::BeladyConfig) = "belady",
    /// Band-level MIN (offline oracle for RMWs, not optimal): clean blocks first, then a band's dirty blocks.
    BandMin(crate::policy::band_min::BandMinConfig) = "band-min",
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig::Lru(LruConfig::default())
    }
}

/// Short names that stand for a policy with some fields set, e.g. `pore-cf`.
pub const ALIASES: &[(&str, &str)] = &[
    ("pore-cf", "pore:scheme=cf"),
    ("pore-pf", "pore:scheme=pf"),
    ("pore-bl", "pore:scheme=bl"),
    ("sac-pd", "sac:tbs=pd"),
    ("sac-ad", "sac:tbs=ad"),
];

impl PolicyConfig {
    /// Every name [`FromStr`](std::str::FromStr) accepts without parameters: the policies and
    /// the aliases.
    pub fn all_names() -> Vec<&'static str> {
        PolicyConfig::NAMES.iter().copied().chain(ALIASES.iter().map(|(a, _)| *a)).collect()
    }
}

/// Turns a parameter value into JSON: integers, floats and booleans as such, anything else a string.
fn param_value(v: &str) -> serde_json::Value {
    if let Ok(i) = v.parse::<i64>() {
        return i.into();
    }
    if let Ok(f) = v.parse::<f64>() {
        if f.is_finite() {
            return f.into();
        }
    }
    match v {
        "true" => true.into(),
        "false" => false.into(),
        _ => v.into(),
    }
}

impl std::str::FromStr for PolicyConfig {
    type Err = PolicyError;
    /// `name` (default configuration), an alias such as `pore-cf`, or
    /// `name:field=value,field=value` setting fields of the policy's configuration
    /// (e.g. `pore:scheme=pf,zone_size=10MiB`).
    fn from_str(s: &str) -> Result<Self, PolicyError> {
        let s = s.trim();
        let expanded = ALIASES.iter().find(|(a, _)| *a == s).map(|(_, e)| *e).unwrap_or(s);
        let (name, params) = match expanded.split_once(':') {
            Some((n, p)) => (n.trim(), p),
            None => (expanded, ""),
        };
        if PolicyConfig::default_for(name).is_none() {
            return Err(PolicyError::Spec(format!(
                "unknown policy {s:?}; known policies: {}",
                PolicyConfig::all_names().join(", ")
            )));
        }
        let mut map = serde_json::Map::new();
        map.insert("policy".into(), name.into());
        for kv in params.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                PolicyError::Spec(format!("policy {s:?}: parameter {kv:?} is not field=value"))
            })?;
            map.insert(k.trim().to_string(), param_value(v.trim()));
        }
        serde_json::from_value(serde_json::Value::Object(map))
            .map_err(|e| PolicyError::Spec(format!("policy {s:?}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_params_and_errors() {
        assert_eq!("lru".parse::<PolicyConfig>().unwrap(), PolicyConfig::default());
        let p: PolicyConfig = "lru:batch=64".parse().unwrap();
        assert_eq!(p, PolicyConfig::Lru(LruConfig { batch: 64 }));
        let e = "lru:bogus=1".parse::<PolicyConfig>().unwrap_err().to_string();
        assert!(e.contains("bogus"), "{e}");
        let e = "lru:batch".parse::<PolicyConfig>().unwrap_err().to_string();
        assert!(e.contains("field=value"), "{e}");
        let e = "nope".parse::<PolicyConfig>().unwrap_err().to_string();
        assert!(e.contains("lru"), "{e}");
        let e = "lru:batch".parse::<PolicyConfig>().unwrap_err();
        assert!(matches!(e, PolicyError::Spec(_)), "{e:?}");
        assert_eq!(e.to_string(), r#"policy "lru:batch": parameter "batch" is not field=value"#);
    }

    /// Every registered name parses to its policy (by name, by config-file tag and by
    /// `name:field=value`), has a description, and every alias stands for a registered policy.
    #[test]
    fn every_registered_name_round_trips() {
        assert_eq!(PolicyConfig::NAMES.len(), PolicyConfig::DESCRIPTIONS.len());
        for (i, (&name, &(described, doc))) in
            PolicyConfig::NAMES.iter().zip(PolicyConfig::DESCRIPTIONS).enumerate()
        {
            assert!(!PolicyConfig::NAMES[..i].contains(&name), "{name} twice");
            assert_eq!(described, name);
            assert!(!doc.trim().is_empty(), "{name}: a doc line");
            let p: PolicyConfig = name.parse().unwrap();
            assert_eq!((p.name(), &p), (name, &PolicyConfig::default_for(name).unwrap()));
            let tagged: PolicyConfig = serde_json::from_str(&format!(r#"{{"policy":"{name}"}}"#)).unwrap();
            assert_eq!(tagged, p);
            assert_eq!(serde_json::from_str::<PolicyConfig>(&serde_json::to_string(&p).unwrap()).unwrap(), p);
            assert_eq!(format!("{name}:").parse::<PolicyConfig>().unwrap(), p);
        }
        for (alias, expands) in ALIASES {
            assert!(!PolicyConfig::NAMES.contains(alias), "{alias} hides a policy");
            let p: PolicyConfig = alias.parse().unwrap();
            assert_eq!(p, expands.parse::<PolicyConfig>().unwrap());
            assert!(PolicyConfig::NAMES.contains(&p.name()));
        }
    }
}
