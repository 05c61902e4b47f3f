//! Tests of the cached block device: hand-checked cases, a model-based test against a flat
//! in-memory oracle, power cuts at every device operation, loss of the cache device, and the
//! equality of its decisions with the simulator's.

mod common;
mod crash;
mod equality;
mod hand;
mod loss;
mod model;
mod replay;
