//! Corruption detection (added in the next slice).
