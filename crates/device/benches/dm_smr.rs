//! Throughput of the DM-SMR model in block operations per second (release build):
//! `cargo bench -p shingled-device --bench dm_smr`. Prints a table; results with the machine
//! and command go to `docs/drive-models.md`.

fn main() {}
