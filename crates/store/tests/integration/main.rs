//! Integration tests of `shingled-store`, compiled as one binary.

mod arbitrary;
mod basic;
mod common;
mod corruption;
mod crash;
mod fallback;
mod fsck;
mod gc;
mod model;
mod prepared;
mod readonly;
mod recovery_harness;
mod reserve;
mod scan;
