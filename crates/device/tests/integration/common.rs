//! Builders shared by the tests.

use shingled_core::{BandConfig, ByteSize, SizeSpec, BLOCK_SIZE};
use shingled_device::{BuildContext, DmSmr, DmSmrConfig, PbFlavour, PbFree};

/// A DM-SMR drive of `capacity_blocks` blocks with a PB of `pb_blocks` slots and `bands`, on
/// the default (ST5000AS0011-like) mechanism.
pub fn smr(
    capacity_blocks: u64,
    pb_blocks: u64,
    bands: BandConfig,
    flavour: PbFlavour,
    free: PbFree,
) -> DmSmr {
    let cfg = DmSmrConfig {
        capacity: ByteSize(capacity_blocks * BLOCK_SIZE),
        pb_size: SizeSpec::Absolute(ByteSize(pb_blocks * BLOCK_SIZE)),
        pb_flavour: flavour,
        pb_free: free,
        bands,
        ..DmSmrConfig::default()
    };
    cfg.build(&BuildContext::default()).expect("test drive builds")
}

/// Fixed bands of `blocks` blocks.
pub fn fixed(blocks: u64) -> BandConfig {
    BandConfig::Fixed { size: ByteSize(blocks * BLOCK_SIZE) }
}

/// All four flavour × free combinations.
pub const ALL_MODES: [(PbFlavour, PbFree); 4] = [
    (PbFlavour::AppendOnly, PbFree::Immediate),
    (PbFlavour::AppendOnly, PbFree::AtHead),
    (PbFlavour::InPlace, PbFree::AtHead),
    (PbFlavour::InPlace, PbFree::Immediate),
];
