//! Integration tests of `shingled-zoned`, compiled as one binary.

mod conformance;
mod fault;
mod model;
