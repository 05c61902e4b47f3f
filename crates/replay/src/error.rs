//! Why a replay could not run or stopped.

use std::path::PathBuf;

/// Why a replay could not run or stopped. Every variant names what and where: the target's
/// path, the request (1-based, in the trace's order), the option.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The trace could not be opened or read (as `shingled sim` reports it).
    #[error(transparent)]
    Trace(#[from] shingled_sim::SimError),
    /// The target cannot be used as asked (a directory, a FIFO, read-only, in use, too small,
    /// holding data without `force`, no O_DIRECT, …). Nothing was written.
    #[error("replay target {path}: {reason}")]
    Target {
        /// The target.
        path: PathBuf,
        /// What is wrong and what to do.
        reason: String,
    },
    /// An option that cannot work with the others or the target.
    #[error("replay option {option}: {reason}")]
    Option {
        /// The option (`queue_depth`, `verify`, …).
        option: &'static str,
        /// Why.
        reason: String,
    },
    /// A request to the target failed.
    #[error("replay target {path}: request {request} ({op} of {blocks} blocks at block {block}): {reason}")]
    Io {
        /// The target.
        path: PathBuf,
        /// 1-based request number in the trace.
        request: u64,
        /// `read` or `write`.
        op: &'static str,
        /// First 4 KiB block.
        block: u64,
        /// Blocks.
        blocks: u64,
        /// What failed.
        reason: String,
    },
    /// A read returned bytes other than the last ones this replay wrote there.
    #[error("replay target {path}: request {request}: block {block} read back {got}, expected {expected}")]
    Mismatch {
        /// The target.
        path: PathBuf,
        /// 1-based request number.
        request: u64,
        /// The block.
        block: u64,
        /// What the bytes say (`version N of block B`, `zeros`, `unrecognised bytes`).
        got: String,
        /// What they should say.
        expected: String,
    },
    /// Stopped from outside (Ctrl-C, a Python callback).
    #[error("replay cancelled after {0} requests")]
    Cancelled(u64),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, ReplayError>;
