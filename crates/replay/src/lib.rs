//! Real I/O, as the papers measured: a block trace's requests issued against a file, a block
//! device, a `shingled` block cache or a translation layer (in process: the code `cache serve`
//! and `stl serve` run, without FUSE in the measurement), with wall-clock latencies — closed
//! loop (the papers' total I/O time) or open loop at the trace's timestamps × a time scale, at a
//! queue depth — and beside them, optionally, the same requests' time on a drive model.
//!
//! Every request is issued as the whole 4 KiB blocks it touches (as the simulator and the
//! papers count them), O_DIRECT on files and devices by default. A first pass over the trace
//! checks it against the target before anything is written: a request past the target's end is
//! refused (or folded with `fold`), and a target holding data the replay did not write is
//! refused unless `force`.

mod clock;
mod error;
mod model;
mod run;
mod stats;
mod target;

pub use clock::{Clock, RealClock};
pub use error::{ReplayError, Result};
pub use model::ModelReport;
pub use run::{replay, replay_target, Loop, ReplayOptions, ReplayReport};
pub use stats::OpStats;
pub use target::{holds_data, open_target, AlignedBuf, DeviceTarget, RawTarget, Target};
