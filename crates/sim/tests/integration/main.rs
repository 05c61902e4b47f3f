//! Integration tests of the simulator, compiled as one binary.

mod bounds;
mod breakdown;
mod claims;
mod curve;
mod golden;
mod hand_checked;
mod open_loop;
mod pore_bands;
mod properties;
mod regimes;
mod series;
mod smart;
mod stats_file;

use shingled_cache::{Cache, PolicyConfig, PolicyContext};
use shingled_core::{BandConfig, ByteSize, Op, SizeSpec};
use shingled_device::{BuildContext, DmSmrConfig, Drive, DriveConfig, PbFlavour, PbFree, SsdConfig};
use shingled_sim::{Engine, Mode};
use shingled_trace::Request;
use std::sync::Arc;

/// A DM-SMR drive with a PB of `pb` blocks and fixed bands of `band` blocks.
pub fn tiny_smr(pb: u64, band: u64, flavour: PbFlavour, free: PbFree) -> Box<dyn Drive> {
    let cfg = DriveConfig::DmSmr(DmSmrConfig {
        capacity: ByteSize::gib(1),
        pb_size: SizeSpec::Absolute(ByteSize(pb * 4096)),
        pb_flavour: flavour,
        pb_free: free,
        bands: BandConfig::Fixed { size: ByteSize(band * 4096) },
        ..DmSmrConfig::default()
    });
    cfg.build(&BuildContext::whole_drive(ByteSize::gib(1))).unwrap()
}

/// An engine with a cache of `capacity` blocks under `policy` above `drive`.
pub fn engine(mode: Mode, policy: &str, capacity: u32, drive: Box<dyn Drive>) -> Engine {
    let ctx = PolicyContext {
        block_span: None,
        capacity_blocks: capacity,
        bands: drive.band_map().cloned().map(Arc::new),
        // PORE's period and SAC's cycle default to the PB size; any small value exercises them.
        pb_blocks: Some(8),
        seed: 0,
        costs: Default::default(),
    };
    let p = PolicyConfig::default_for(policy).unwrap().build(&ctx).unwrap();
    Engine::new(mode, Some(Cache::new(capacity, p)), SsdConfig::default().build().unwrap(), drive)
}

/// One-block requests.
pub fn reqs(ops: &[(char, u64)]) -> Vec<Request> {
    ops.iter()
        .enumerate()
        .map(|(i, &(op, b))| Request {
            time_ns: i as u64,
            volume: 0,
            op: if op == 'w' { Op::Write } else { Op::Read },
            offset: b * 4096,
            len: 4096,
        })
        .collect()
}
