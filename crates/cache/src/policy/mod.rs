//! The replacement-policy interface and the policies, one file each.

mod interface;
pub mod lru;
pub mod lru_band;
pub mod most;

pub use interface::{Policy, PolicyContext, PolicyError, SmrCosts};
