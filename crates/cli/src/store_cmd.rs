//! `shingled store`: the SMRSTORE chunk store on an emulated zoned device file.
//! (Skeleton: the store helper fills in format/info/put/get/fsck; `bench` lives in
//! `store_bench_cmd.rs`.)

use anyhow::Result;
use clap::Subcommand;

/// Chunk store commands.
#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// Benchmarks of the chunk store (SMRSTORE Figs. 14, 16, 19–21, Table 3).
    Bench(crate::store_bench_cmd::StoreBenchArgs),
}

pub fn run(cmd: StoreCommand) -> Result<()> {
    match cmd {
        StoreCommand::Bench(a) => crate::store_bench_cmd::run(a),
    }
}
