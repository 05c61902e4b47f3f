//! What one run of the probes found on a target, with what it says about the drive: the
//! report `shingled probe --output json` prints and Python's `shingled.probe` returns.

use crate::{
    detected_drive_config, fit_band_layout, layout_scope, BandReport, HiddenDrive, PbReport, ProbeTarget,
};
use serde::Serialize;
use shingled_core::BandConfig;
use shingled_device::{DmSmrConfig, DriveConfig};

/// The probes' reports on one target, the band layout fitted to the bands found and the drive
/// profile both give.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    /// The target, as [`ProbeTarget::describe`] names it.
    pub target: String,
    /// The PB probe's report, if it ran.
    pub pb: Option<PbReport>,
    /// The band probe's report, if it ran.
    pub bands: Option<BandReport>,
    /// The layout [`fit_band_layout`] fits to the bands found.
    pub layout: Option<BandConfig>,
    /// Where `layout` holds when the bands came from too small a part of the drive to tell a
    /// fixed layout from an LBA-dependent one ([`layout_scope`]); `None` when they could tell.
    pub layout_scope: Option<String>,
    /// [`detected_drive_config`]: `base` with what was detected in place of its own values.
    pub drive: DriveConfig,
    /// The truth, for a [`HiddenDrive`].
    pub hidden: Option<HiddenDrive>,
}

impl Found {
    /// Fits the layout and builds the drive profile from the reports on `target`, starting from
    /// `base` (the probed model's configuration, or the defaults for a real device).
    pub fn new(
        target: &dyn ProbeTarget,
        base: &DmSmrConfig,
        pb: Option<PbReport>,
        bands: Option<BandReport>,
        hidden: Option<HiddenDrive>,
    ) -> Found {
        let capacity = target.capacity();
        let layout = bands.as_ref().and_then(|b| fit_band_layout(b, capacity));
        let layout_scope = bands.as_ref().and_then(|b| layout_scope(b, capacity));
        let drive = detected_drive_config(base, capacity, pb.as_ref().map(|r| r.pb_bytes), layout.clone());
        Found { target: target.describe(), pb, bands, layout, layout_scope, drive, hidden }
    }
}
