//! The PB-capacity and band probes (`shingled probe all`) on a drive model.

use crate::config::to_json;
use crate::errors::probe_err;
use pyo3::prelude::*;
use shingled_device::{BuildContext, DriveConfig};
use shingled_probe::{
    detect_bands, detect_pb, BandProbeConfig, Found, HiddenDrive, HiddenSpec, ModelTarget, PbProbeConfig,
    ProbeError, ProbeTarget,
};

/// `shingled probe all --drive NAME` or `--hidden SEED` (the hidden drive 0 when neither is
/// given) with the CLI's defaults, `seed` ordering the probes' writes; returns its
/// `--output json`. The GIL is released for the run, which has no cancel point.
#[pyfunction]
#[pyo3(signature = (drive=None, hidden=None, seed=0))]
pub(crate) fn probe(
    py: Python<'_>,
    drive: Option<String>,
    hidden: Option<u64>,
    seed: u64,
) -> PyResult<String> {
    py.detach(|| probe_all(drive.as_deref(), hidden, seed)).map(|f| to_json(&f)).map_err(probe_err)
}

fn probe_all(drive: Option<&str>, hidden: Option<u64>, seed: u64) -> Result<Found, ProbeError> {
    let (mut target, base, hidden): (Box<dyn ProbeTarget>, _, _) = match (drive, hidden) {
        (Some(name), None) => {
            let cfg = DriveConfig::from_profile(name)?;
            let DriveConfig::DmSmr(base) = &cfg else {
                return Err(ProbeError::InvalidParameter {
                    field: "drive",
                    value: name.into(),
                    reason: format!(
                        "a {} drive has no persistent buffer to probe; name a dm-smr profile",
                        cfg.model()
                    ),
                });
            };
            let model = cfg.build(&BuildContext::whole_drive(base.capacity))?;
            (Box::new(ModelTarget::new(model, name)), base.clone(), None)
        }
        (None, drawn) => {
            let h = HiddenDrive::draw(&HiddenSpec::default(), drawn.unwrap_or(0))?;
            (Box::new(h.target()?), h.config.clone(), Some(h))
        }
        (Some(name), Some(h)) => {
            return Err(ProbeError::InvalidParameter {
                field: "hidden",
                value: h.to_string(),
                reason: format!("given with drive {name:?}: probe a profile or a drawn drive, not both"),
            })
        }
    };
    let pb = detect_pb(target.as_mut(), &PbProbeConfig { seed, ..PbProbeConfig::default() }, &mut |_| {})?;
    let bands = BandProbeConfig {
        pb_bytes: pb.pb_bytes,
        // `--target-count 1`: the middle of the drive.
        targets: vec![target.capacity() / 2],
        read_size: if hidden.is_some() {
            HiddenDrive::READ_SIZE
        } else {
            BandProbeConfig::default().read_size
        },
        seed,
        ..BandProbeConfig::default()
    };
    let bands = detect_bands(target.as_mut(), &bands, &mut |_| {})?;
    Ok(Found::new(target.as_ref(), &base, Some(pb), Some(bands), hidden))
}
