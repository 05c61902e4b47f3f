//! Block I/O traces: one [`Request`] type, streaming readers for the formats people have, a
//! compact binary format of our own, statistics (the PORE paper's Table I), the "long/mix"
//! composer and synthetic generators that mimic the MSR Cambridge volumes.
//!
//! Readers stream: memory use does not grow with the trace. Every reader yields whole requests
//! (byte offset and length); splitting into 4 KiB blocks is [`shingled_core::blocks_of`]'s job.
//!
//! ```no_run
//! use shingled_trace::{open, OpenOptions};
//! let mut reader = open("wdev_0.csv.gz", &OpenOptions::default())?;
//! while let Some(req) = reader.next_request()? {
//!     println!("{} {} bytes at {}", req.op, req.len, req.offset);
//! }
//! # Ok::<(), shingled_trace::TraceError>(())
//! ```

mod error;
mod request;

pub mod synth;

pub use error::TraceError;
pub use request::{Request, TraceReader};
