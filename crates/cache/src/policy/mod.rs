//! The replacement-policy interface and the policies, one file each.

pub mod arc;
pub mod fifo;
mod interface;
pub mod lru;
pub mod lru_band;
pub mod most;
pub mod most_cdc;
pub mod pore;
pub mod s3fifo;
pub mod sac;

pub use interface::{Policy, PolicyContext, PolicyError, SmrCosts};
