//! SSD cache metadata and replacement policies.
//!
//! A [`Cache`] is a [`BlockTable`] (which 4 KiB blocks are cached, clean or dirty, with access
//! counts and recency) plus a [`Policy`] that picks victims. Policies keep their orderings in
//! intrusive [`Links`] lists over dense slot numbers, so the per-block memory stays small and
//! every operation is O(1) or close to it.
//!
//! Policies live one per file in [`policy`]; [`PolicyConfig`] is the registry that names them
//! and builds them from configuration.
//!
//! ```
//! use shingled_cache::{Cache, PolicyConfig, PolicyContext};
//! let ctx = PolicyContext { capacity_blocks: 2, ..Default::default() };
//! let policy = "lru".parse::<PolicyConfig>().unwrap().build(&ctx).unwrap();
//! let mut cache = Cache::new(2, policy);
//! let mut evicted = Vec::new();
//! cache.insert(10, true, &mut evicted);
//! cache.insert(11, false, &mut evicted);
//! assert_eq!(cache.access(10, false), Some(true)); // hit; 10 was dirty
//! cache.insert(12, false, &mut evicted);           // full: evicts the LRU block, 11
//! assert_eq!(evicted[0].block, 11);
//! ```

pub mod buckets;
mod cache;
mod ghosts;
mod index;
mod list;
pub mod policy;
mod registry;
mod table;

/// A dense cache slot number in `0..capacity`.
pub type Slot = u32;

pub use cache::Cache;
pub use index::BlockIndex;
pub use list::{Links, List, NIL};
pub use policy::interface::{
    Foresight, IntoAny, Policy, PolicyBuilder, PolicyContext, PolicyError, SmrCosts,
};
pub use policy::pb_length::{PbLength, PbLengthError};
pub use registry::{PolicyConfig, ALIASES};
pub use table::{BlockMeta, BlockTable, LOOK_AHEAD_MIN_SLOTS};
