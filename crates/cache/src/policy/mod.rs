//! The replacement policies, one file each; their interface ([`crate::Policy`] and the types it
//! uses) is at the crate root.

pub mod arc;
pub mod band_min;
pub mod belady;
pub mod fifo;
pub(crate) mod interface;
pub mod lru;
pub mod lru_band;
pub mod most;
pub mod most_cdc;
pub(crate) mod pb_length;
pub mod pore;
pub mod s3fifo;
pub mod sac;
