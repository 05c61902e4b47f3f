//! Synthetic traces (filled in by the generator work).
