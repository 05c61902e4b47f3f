//! `shingled store bench`: (skeleton, filled in by the bench work).

use anyhow::{bail, Result};
use clap::Args;

/// Store benchmark arguments.
#[derive(Args, Debug)]
pub struct StoreBenchArgs {}

pub fn run(_args: StoreBenchArgs) -> Result<()> {
    bail!("shingled store bench: not built yet")
}
