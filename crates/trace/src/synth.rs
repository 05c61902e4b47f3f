//! Synthetic traces whose profiles mimic the MSR Cambridge volumes (work in progress).

use crate::{TraceError, TraceReader};

/// Opens a synthetic trace from the text after `synth:` (for example `wdev,scale=0.1,seed=7`).
pub fn open_spec(spec: &str) -> Result<Box<dyn TraceReader>, TraceError> {
    Err(TraceError::Synth { spec: spec.to_string(), reason: "synthetic generators are not built yet".into() })
}
