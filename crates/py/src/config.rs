//! Configurations across the boundary: the JSON (de)serialisation every module uses, the
//! configuration functions (`Config` in Python), policies, drive profiles and set-ups.

use crate::errors::{sim_err, ConfigError, DeviceError, PolicyError};
use pyo3::prelude::*;
use shingled_cache::PolicyConfig;
use shingled_device::{DmSmrConfig, HddConfig};
use shingled_sim::SimConfig;

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("reports and configurations serialize")
}

pub(crate) fn parse_config(json: &str) -> PyResult<SimConfig> {
    from_json(json, "configuration")
}

/// Parses JSON that the Python layer built from the user's values: an error names the field
/// by its path (`cache.policy.zone_size`), not by a position in JSON the user never saw.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> PyResult<T> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(json)).map_err(|e| {
        let msg = e.inner().to_string();
        // serde_json ends its messages with " at line L column C".
        let msg = match msg.rfind(" at line ") {
            Some(i) if msg[i + 9..].split(" column ").all(|n| n.bytes().all(|b| b.is_ascii_digit())) => {
                &msg[..i]
            }
            _ => &msg[..],
        };
        let path = e.path().to_string();
        // A drive is a tagged enum, which serde buffers: the path stops at the drive. Parse
        // the drive's table again as its model's struct to find the field inside it.
        let (path, msg) = drive_field(json, &path).unwrap_or((path, msg.to_string()));
        match path.as_str() {
            "." | "" => ConfigError::new_err(format!("{what}: {msg}")),
            path => ConfigError::new_err(format!("{what} field {path}: {msg}")),
        }
    })
}

/// For an error at `path` that names a drive table (`drive`, `compare.cmr_drive`, or the
/// whole document): the path and message of the failing field inside it.
fn drive_field(json: &str, path: &str) -> Option<(String, String)> {
    let mut v: serde_json::Value = serde_json::from_str(json).ok()?;
    if path != "." {
        for key in path.split('.') {
            v = v.get_mut(key)?.take();
        }
    }
    let obj = v.as_object_mut()?;
    let model = obj.remove("model")?;
    let body = serde_json::Value::Object(std::mem::take(obj));
    let inner = match model.as_str()? {
        "cmr" => serde_path_to_error::deserialize::<_, HddConfig>(body).err()?,
        "dm-smr" => serde_path_to_error::deserialize::<_, DmSmrConfig>(body).err()?,
        "smart" => serde_path_to_error::deserialize::<_, shingled_device::SmartConfig>(body).err()?,
        _ => return None,
    };
    let at = inner.path().to_string();
    let full = if path == "." { at } else { format!("{path}.{at}") };
    Some((full, inner.inner().to_string()))
}

/// The default configuration (what `shingled config` prints), as JSON.
#[pyfunction]
pub(crate) fn config_default() -> String {
    to_json(&SimConfig::default())
}

/// Parses CLI TOML configuration text; returns it as JSON.
#[pyfunction]
pub(crate) fn config_from_toml(text: &str) -> PyResult<String> {
    SimConfig::from_toml(text).map(|c| to_json(&c)).map_err(|e| ConfigError::new_err(e.message))
}

/// Validates a JSON configuration and returns it normalised (defaults filled in).
#[pyfunction]
pub(crate) fn config_normalize(json: &str) -> PyResult<String> {
    parse_config(json).map(|c| to_json(&c))
}

/// A JSON configuration as the CLI's TOML.
#[pyfunction]
pub(crate) fn config_to_toml(json: &str) -> PyResult<String> {
    parse_config(json).map(|c| c.to_toml())
}

/// The label reports would use for this configuration.
#[pyfunction]
pub(crate) fn config_label(json: &str) -> PyResult<String> {
    parse_config(json).map(|c| c.display_label())
}

/// The configuration of a scheme (`smr-only`, `cmr-only` or a policy) derived from a base.
#[pyfunction]
pub(crate) fn scheme_config(json: &str, scheme: &str) -> PyResult<String> {
    let base = parse_config(json)?;
    shingled_sim::scheme_config(&base, scheme).map(|c| to_json(&c)).map_err(sim_err)
}

/// Policy names known to the registry.
#[pyfunction]
pub(crate) fn policies() -> Vec<&'static str> {
    PolicyConfig::NAMES.to_vec()
}

/// A policy given as `name` or `name:field=value,…`, as its JSON table.
#[pyfunction]
pub(crate) fn parse_policy(spec: &str) -> PyResult<String> {
    spec.parse::<PolicyConfig>().map(|p| to_json(&p)).map_err(|e| PolicyError::new_err(e.to_string()))
}

/// Drive profile names.
#[pyfunction]
pub(crate) fn drive_profiles() -> Vec<&'static str> {
    shingled_device::profile_names().to_vec()
}

/// The drive configuration of a named profile, as JSON.
#[pyfunction]
pub(crate) fn drive_profile(name: &str) -> PyResult<String> {
    shingled_device::profile(name).map(|d| to_json(&d)).ok_or_else(|| {
        DeviceError::new_err(format!(
            "unknown drive profile {name:?}; known: {}",
            shingled_device::profile_names().join(", ")
        ))
    })
}

/// The configuration JSON `config` with set-up `name` applied (drive, CMR-only drive, I/O unit).
#[pyfunction]
pub(crate) fn apply_setup(config: &str, name: &str) -> PyResult<String> {
    let mut cfg = parse_config(config)?;
    shingled_sim::setup(name).map_err(sim_err)?.apply(&mut cfg);
    Ok(to_json(&cfg))
}

/// `(name, summary)` of every set-up.
#[pyfunction]
pub(crate) fn setups_list() -> Vec<(&'static str, &'static str)> {
    shingled_sim::SETUPS.iter().map(|s| (s.name, s.summary)).collect()
}
