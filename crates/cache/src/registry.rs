//! The policy registry: one serde-tagged enum naming every policy and its configuration.
//!
//! Adding a policy = one file under `policy/` with its `XxxConfig: PolicyBuilder` + one line in
//! the `policies!` list below. The CLI's list, config files, Python and the golden tests all
//! read this enum, so nothing else needs editing.

use crate::policy::lru::LruConfig;
use crate::{Policy, PolicyContext, PolicyError};
use serde::{Deserialize, Serialize};

/// Builds a policy from its configuration.
pub trait PolicyBuilder {
    /// Validates the configuration against the context and builds the policy.
    fn build(&self, ctx: &PolicyContext) -> Result<Box<dyn Policy>, PolicyError>;
}

macro_rules! policies {
    ($( $(#[$doc:meta])* $variant:ident($cfg:ty) = $name:literal ),* $(,)?) => {
        /// Every policy, tagged by `policy = "<name>"` in configuration files.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "policy")]
        #[non_exhaustive]
        pub enum PolicyConfig {
            $( $(#[$doc])* #[serde(rename = $name)] $variant($cfg), )*
        }

        impl PolicyConfig {
            /// The names of all policies, in registry order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

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
        }
    };
}

policies! {
    /// Least Recently Used.
    Lru(LruConfig) = "lru",
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig::Lru(LruConfig::default())
    }
}

impl std::str::FromStr for PolicyConfig {
    type Err = String;
    /// A policy name with its default configuration.
    fn from_str(s: &str) -> Result<Self, String> {
        PolicyConfig::default_for(s.trim()).ok_or_else(|| {
            format!("unknown policy {s:?}; known policies: {}", PolicyConfig::NAMES.join(", "))
        })
    }
}
