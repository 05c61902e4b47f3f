//! Helpers for the CLI's JSON reports (one `#[derive(Serialize)]` type per report).

use serde::{Serialize, Serializer};

/// Serializes a field with every object's keys in alphabetical order, at every depth. The
/// reports were first built with `serde_json::json!`, whose maps (no `preserve_order`) sort
/// their keys; a library type nested in a report declares its fields in another order, and
/// this keeps the output byte for byte what it was.
pub fn sorted<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(v).map_err(serde::ser::Error::custom)?.serialize(s)
}
