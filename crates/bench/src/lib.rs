//! Benchmarks of the shingled toolkit, kept out of the libraries they measure:
//!
//! - [`device`]: the papers' drive micro-benchmarks on the calibrated drive models
//!   (`shingled drive bench`), with [`DriveBenchOptions`] and [`DriveBenchReport`];
//! - [`store`]: the chunk store's benchmarks on zoned devices, files and the modelled clock
//!   (`shingled store bench`, the Python `store_bench`), with [`StoreBenchOptions`] and
//!   [`StoreBenchReport`].

pub mod device;
pub mod store;

pub use device::{DriveBenchOptions, DriveBenchReport, Series};
pub use store::{StoreBenchOptions, StoreBenchReport};
