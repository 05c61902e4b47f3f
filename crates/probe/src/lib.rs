//! Detect the hidden parameters of a drive-managed SMR drive — the persistent-buffer (PB)
//! capacity and the band layout — by timing I/O, as SAC §5 does (after Skylight), on a drive
//! model or on a real device.
//!
//! # The procedures
//!
//! - [`detect_pb`] (SAC §5.1): empty the PB (random, then sequential writes over `[C, 2C)`),
//!   then write `[0, C)` randomly at I/O depth 1 and find the write at which the drive starts
//!   paying for cleaning (the IOPS cliff); the bytes written before it are the PB capacity for
//!   that write size.
//! - [`detect_bands`] (SAC §5.2): fill the PB with random writes over 2 × PB around a target LBA,
//!   write elsewhere to make the drive clean a few of those bands, read the range sequentially:
//!   cleaned bands read with constantly low latency, and the lengths of those runs are band
//!   sizes. Several targets give a profile over the LBA range.
//! - [`fit_band_layout`] and [`detected_drive_config`] turn the results into a
//!   [`shingled_device::DriveConfig`] the simulator loads; [`Found`] holds a run's reports with
//!   both (the JSON `shingled probe` prints).
//!
//! The analysis is pure functions over series, tested on hand-made ones ([`find_knee`],
//! [`split_threshold`], [`low_runs`], [`rolling_median`]); the procedures drive any
//! [`ProbeTarget`]:
//!
//! - [`ModelTarget`]: a [`shingled_device::Drive`] model on its virtual clock, optionally behind
//!   [`Noisy`] timing jitter;
//! - [`DeviceTarget`]: a block device or file with O_DIRECT and wall-clock timing. Destructive,
//!   so it must be confirmed and refuses devices in use.
//!
//! [`HiddenDrive`] draws drives whose parameters the probe must recover (`tests/accuracy.rs`).
//!
//! ```
//! use shingled_core::{BandConfig, ByteSize, SizeSpec};
//! use shingled_device::{BuildContext, DmSmrConfig, DriveConfig};
//! use shingled_probe::{detect_pb, ModelTarget, PbProbeConfig};
//!
//! // A small drive: 2 MiB PB, 256 KiB bands.
//! let cfg = DriveConfig::DmSmr(DmSmrConfig {
//!     capacity: ByteSize::mib(512),
//!     pb_size: SizeSpec::Absolute(ByteSize::mib(2)),
//!     bands: BandConfig::Fixed { size: ByteSize::kib(256) },
//!     ..DmSmrConfig::default()
//! });
//! let drive = cfg.build(&BuildContext::whole_drive(ByteSize::mib(512))).unwrap();
//! let mut target = ModelTarget::new(drive, "example");
//! let probe = PbProbeConfig { upper_bound: Some(64 << 20), ..PbProbeConfig::default() };
//! let report = detect_pb(&mut target, &probe, &mut |_| {}).unwrap();
//! let err = report.pb_bytes as f64 / (2 << 20) as f64 - 1.0;
//! assert!(err.abs() < 0.05, "{} bytes", report.pb_bytes);
//! ```

mod bands;
mod detect;
mod device;
mod error;
mod found;
mod hidden;
mod noisy;
mod pb;
pub mod perm;
mod profile;
mod target;

pub use bands::{detect_bands, BandProbeConfig, BandReport, BandSample, DetectedBand, TimedRead};
pub use detect::{find_knee, low_runs, rolling_median, split_threshold, Cliff, CliffParams, Knee, Run};
pub use device::{DeviceOptions, DeviceTarget};
pub use error::{ProbeError, Result};
pub use found::Found;
pub use hidden::{HiddenBands, HiddenDrive, HiddenSpec};
pub use noisy::{NoiseConfig, Noisy};
pub use pb::{detect_pb, IopsWindow, PbProbeConfig, PbReport};
pub use profile::{detected_drive_config, fit_band_layout, layout_scope};
pub use target::{ModelTarget, ProbeTarget};

/// Where a probe is: called now and then so a caller can draw a progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The step, e.g. `pb: step 2, random writes`.
    pub step: &'static str,
    /// Bytes done in this step.
    pub done: u64,
    /// Bytes this step does at most.
    pub total: u64,
}
