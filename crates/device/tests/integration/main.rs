//! Integration tests of the drive models, compiled as one binary.

mod calibration;
mod common;
mod hand_checked;
mod reference;
mod skylight;
mod smart;
mod time_model;
mod timing;
