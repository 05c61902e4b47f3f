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

mod ahead;
mod direct;
mod error;
mod formats;
mod open;
mod records;
mod request;
mod text;

pub mod binary;
pub mod mix;
pub mod stats;
pub mod synth;

pub use ahead::{decode_ahead, DecodeAhead};
pub use binary::{convert, convert_with_stats, refuse_same_file, BinaryReader, BinaryWriter, ConvertSummary};
pub use direct::{trace_stats_file, trace_stats_file_threads};
pub use error::TraceError;
pub use formats::oracle::{write_oracle_general, OracleSummary};
pub use formats::{Format, UnknownFormat};
pub use mix::{mix, MixStream, MixSummary};
pub use open::{
    convert_file, convert_file_until, convert_file_with_stats, detect_format, has_timestamps, open,
    open_stream, OpenOptions, VolumeFilter,
};
pub use request::{Interruptible, Request, Rescaled, TraceReader};
pub use stats::{footprint, trace_stats, BlockSet, Footprint, TraceStats};
